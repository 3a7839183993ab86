#!/usr/bin/env python3
"""Checks what Examples' `moving-bar` printed (stdout + stderr of one run).

    check_example_output.py fake|kms OUTPUT_FILE [--rc N] [--overruns N] [--no-drops]
    check_example_output.py run-all OUTPUT_FILE DIR [--rc N]

fake: no DRM card, so the fallback line, then exactly the fake display's virtual-time numbers:
      300 frames at 60 Hz (5 s), drawables 60, 120, … 300 presented one second apart, no drops.
kms:  the real display (vkms at 60.0038 Hz): no fallback; on "kms" at the refresh's rate; every
      refresh of the 5 s either showed a new frame or is counted as a dropped refresh (frames +
      dropped refreshes = 294…303); every presented handler saw a kernel timestamp on the
      vblank grid (a whole number of refreshes apart, ±1 ms). A debug build drawing 1024x768
      under qemu TCG takes longer than a refresh per frame, so drops are reported, not failed,
      unless --no-drops is given (a release build on a quiet host; with vblank timer overruns
      in the guest during the run, the host delayed the VM and drops are reported even then).
Prints one PASS/FAIL line per check; exits 1 on any failure.
"""
import re
import sys

VKMS_HZ = 65000e3 / (1344 * 806)  # vkms' preferred 1024x768 mode: 60.00384 Hz


def run_all(argv):
    """`run-all` (Examples/Sources/RunAll): run in DIR, it printed OUTPUT_FILE. Both outputs of
    the fake two-CRTC card: 300 of 300 frames each (eDP-1 at 60 Hz, DP-1 at 144 Hz), the injected
    2 refreshes in 1 drop event each, and each output's log and CSV in DIR, complete (an end line;
    a header row and 300 rows)."""
    import json, os
    path, d = argv[2], argv[3]
    rc = int(argv[argv.index("--rc") + 1]) if "--rc" in argv else 0
    text = open(path, encoding="utf-8", errors="replace").read()
    failed = 0

    def check(label, ok, detail=""):
        nonlocal failed
        print("%s  example (run-all): %s%s" % ("PASS" if ok else "FAIL", label, "" if ok else "  [%s]" % detail))
        failed += 0 if ok else 1

    check("exit status 0", rc == 0, "rc %d: %s" % (rc, text[-400:]))
    want = ["eDP-1: 300 of 300 frames at 60.0 Hz, 2 dropped refreshes, 1 drop events, log run.eDP-1.jsonl",
            "DP-1: 300 of 300 frames at 144.0 Hz, 2 dropped refreshes, 1 drop events, log run.DP-1.jsonl"]
    check("one line per output, the known answers", text.splitlines() == want, text[-400:])
    for name in ("eDP-1", "DP-1"):
        try:
            lines = open(os.path.join(d, "run.%s.jsonl" % name)).read().splitlines()
            end = json.loads(lines[-1])
            frames = [l for l in lines if '"outcome"' in l and '"record"' not in l]
            ok = json.loads(lines[0]).get("connector") == name and end.get("record") == "end" and len(frames) == 300
            check("run.%s.jsonl: header for %s, 300 frame lines, an end line" % (name, name), ok, "%d lines" % len(lines))
            rows = open(os.path.join(d, "run.%s.csv" % name)).read().splitlines()
            check("run.%s.csv: a header row and 300 rows" % name, len(rows) == 301 and rows[0].startswith("Frame,"), "%d rows" % len(rows))
        except (OSError, ValueError, IndexError) as e:
            check("run.%s files" % name, False, str(e))
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "run-all":
        return run_all(argv)
    if len(argv) < 3 or argv[1] not in ("fake", "kms"):
        sys.exit(__doc__)
    mode, path = argv[1], argv[2]
    rc = int(argv[argv.index("--rc") + 1]) if "--rc" in argv else 0
    overruns = int(argv[argv.index("--overruns") + 1]) if "--overruns" in argv else 0
    text = open(path, encoding="utf-8", errors="replace").read()
    failed = 0

    def check(label, ok, detail=""):
        nonlocal failed
        print("%s  example (%s): %s%s" % ("PASS" if ok else "FAIL", mode, label, "" if ok else "  [%s]" % detail))
        failed += 0 if ok else 1

    check("exit status 0", rc == 0, "rc %d: %s" % (rc, text[-400:]))
    fallback = "using the fake display" in text
    check("fallback line" if mode == "fake" else "no fallback to the fake display", fallback == (mode == "fake"), text[:300])
    presented = [(int(d), float(t)) for d, t in re.findall(r"^drawable (\d+) presented at (\d+\.\d+) s$", text, re.M)]
    summary = re.search(r"^(\d+) frames at ([0-9.]+) Hz on (\w+), (\d+) dropped refreshes$", text, re.M)
    check("summary line", summary is not None, text[-300:])
    if not summary:
        return 1
    frames, hz, backend, dropped = int(summary[1]), float(summary[2]), summary[3], int(summary[4])
    ids = [d for d, _ in presented]
    times = [t for _, t in presented]
    steps = [b - a for a, b in zip(times, times[1:])]
    if mode == "fake":
        check("300 frames at 60 Hz on fake, 0 dropped", (frames, hz, backend, dropped) == (300, 60.0, "fake", 0), summary[0])
        check("drawables 60…300 presented", ids == [60, 120, 180, 240, 300], ids)
        check("one second apart (virtual time, exact)", all(abs(s - 1.0) < 1e-9 for s in steps) and times[0] > 0, times)
    else:
        check("on kms at the refresh's rate", backend == "kms" and abs(hz - VKMS_HZ) < 0.01, summary[0])
        check("5 s of refreshes: frames + dropped refreshes 294…303", 294 <= frames + dropped <= 303, summary[0])
        check("frames were presented", frames > 0, summary[0])
        check("presented handlers saw drawables 60, 120, … (as many as frames)",
              ids == list(range(60, frames + 1, 60)), "%s for %d frames" % (ids, frames))
        period = 1 / VKMS_HZ
        grid = all(s > 0 and abs(s / period - round(s / period)) * period < 0.001 for s in steps)
        check("presented times on the vblank grid (kernel timestamps)", times[:1] != [0.0] and grid, times)
        if "--no-drops" in argv and overruns == 0:
            check("no dropped refreshes", dropped == 0, summary[0])
        else:
            print("INFO  example (kms): %d frames, %d dropped refreshes, %d vblank timer overruns in the guest"
                  % (frames, dropped, overruns))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
