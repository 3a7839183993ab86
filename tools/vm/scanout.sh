#!/usr/bin/env bash
# Scanout truth checks of `cadence run --verify crc` on a real kernel (issue 23): vkms' CRTC CRC
# through debugfs (`dri/0/crtc-0/crc`, source auto), one boot of vkms and one of bochs:
#   - `--verify crc --frames 600 --inject-late 100:1,250:3` at 640x480: exit 0, 0 mismatches,
#     the refreshes the CRCs show repeated equal those between the flips' timestamps;
#   - the same with `--fault stale-buffer:300`: exactly 1 stale frame, frame 300, and the CRCs
#     show one repeated refresh more than the flips' timestamps (the stale frame, which the flip
#     accounting cannot see);
#   - both runs' logs carry their CRC lines (log version 3), and `report` of each log (the
#     host's cadence) judges them again to the run's own verdict;
#   - `measure --mode 640x480 --duration 5 --verify crc`: every measured flip verified (or
#     inexact), 0 mismatches;
#   - debugfs unmounted: one stderr line ("no debugfs") and exit 2;
#   - bochs (no CRC): `--verify crc: not supported by bochs-drm`, one line, exit 2;
#   - vkms2 (tools/vm/vkms-writeback-clone.patch: Writeback-1 may clone Virtual-1): `--verify
#     writeback --capture every:50 --frames 600` on Virtual-1: 12 of 12 captures decode to their
#     frame and equal Cadence's render; the 12 PNGs exist, and this script decodes each PNG
#     itself (zlib, the five filters) and reads the frame identity's barcode: frame 0, 50, …, 550;
#   - vkms2, `--verify crc,writeback --capture on-mismatch --frames 120`, with `--fault
#     stale-buffer:60` and without: judged against the run's own CRC verdict (on_mismatch below:
#     captures only of flagged frames, each decoding to the frame on screen and equal to its
#     render, every job accounted for, no stale frame but 60, a stale 60 captured or counted).
# The runs draw `--scene solid` (plain colours plus the frame identity) in a small mode: vkms
# composes every vblank in software while CRC is on, and TCG is slow. The summary's `scanout`
# figures (reads and their time) give the cost of reading the CRC per vblank.
#
# The guest's load drops refreshes beyond the injected ones (vkms composes every vblank in
# software while its CRC runs, and a loaded host delays the qemu vCPU): the checks compare the
# CRCs with the flips of the same run, whatever they dropped, so nothing is retried. The runs'
# logs stay in the kept outputs of a failed check (each frame's vblank, to read against the CRCs). A vblank
# whose CRC line is missing cannot be told either way, nor can one whose line vkms' worker wrote
# late (a catch-up, or a late line: composed after the next flip released its buffer and a later
# frame was drawn into it, docs/scanout.md): the repeat check then allows that many
# (`unjudgedVBlanks`).
#
# Usage: tools/vm/scanout.sh [--bin PATH/TO/cadence] [--keep DIR]
#   --bin   cadence binary (default: `swift build -c release --product cadence`)
#   --keep  keep outputs in DIR (default: a temp dir, removed on success)
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
while (($#)); do
    case "$1" in
        *) vm_common_option "$@"; shift "$vm_used" ;;
    esac
done

vm_prologue scanout release

cat >"$work/guests.sh" <<'GUEST'
mount -t debugfs none /sys/kernel/debug 2>/dev/null
# try NAME CMD...: run once, record NAME.out/.err/.rc and NAME.attempts (rc, drops, the guest's
# vblank-timer overruns, guest uptime).
try() {
    name=$1; shift
    before=$(dmesg | grep -c 'vblank timer overrun')
    start=$(cut -d' ' -f1 /proc/uptime)
    timeout 150 "$@" </dev/null >"/out/$name.out" 2>"/out/$name.err"
    rc=$?
    end=$(cut -d' ' -f1 /proc/uptime)
    after=$(dmesg | grep -c 'vblank timer overrun')
    echo $rc >"/out/$name.rc"
    dropped=$(grep -o '"droppedRefreshes":[0-9]*' "/out/$name.out" | grep -o '[0-9]*$')
    echo "rc=$rc droppedRefreshes=${dropped:-?} timerOverruns=$((after - before)) ($start..$end s)" >>"/out/$name.attempts"
}
if [ -d /sys/module/vkms2 ]; then
    mkdir -p /out/wb && cd /out/wb
    try writeback cadence run --backend kms --connector Virtual-1 --mode 640x480 --verify writeback \
        --capture every:50 --frames 600 --log /out/wb/run.jsonl --json --quiet
    mkdir -p /out/om && cd /out/om
    om="cadence run --backend kms --connector Virtual-1 --mode 640x480 --scene solid --verify crc,writeback --capture on-mismatch"
    try onmismatch-stale $om --fault stale-buffer:60 --frames 120 --log /out/om/stale.jsonl --json --quiet
    try onmismatch-clean $om --frames 120 --log /out/om/clean.jsonl --json --quiet
    cd /
elif [ "$(cat /sys/kernel/debug/dri/0/name 2>/dev/null | cut -d' ' -f1)" = vkms ]; then
    ls /sys/kernel/debug/dri/0/crtc-0/crc >/out/crcdir.txt 2>&1
    try clean cadence run --backend kms --mode 640x480 --scene solid --verify crc --frames 600 \
        --inject-late 100:1,250:3 --json --quiet --log /out/clean.jsonl
    try stale cadence run --backend kms --mode 640x480 --scene solid --verify crc --frames 600 \
        --inject-late 100:1,250:3 --fault stale-buffer:300 --json --quiet --log /out/stale.jsonl
    try measure cadence measure --mode 640x480 --duration 5 --verify crc --json
    umount /sys/kernel/debug
    cadence run --backend kms --mode 640x480 --scene solid --verify crc --frames 60 >/out/nodebugfs.out 2>/out/nodebugfs.err
    echo $? >/out/nodebugfs.rc
    mount -t debugfs none /sys/kernel/debug
else
    cadence run --backend kms --scene solid --verify crc --frames 60 >/out/bochs.out 2>/out/bochs.err
    echo $? >/out/bochs.rc
fi
exit 0
GUEST

for driver in vkms bochs vkms2; do
    vm_out "$driver"
    echo "== $driver: booting the VM"
    t1=$(date +%s)
    "$here/run.sh" --driver "$driver" --timeout 600 --bin "$bin" --file "$work/guests.sh:/guests.sh" \
        --out-dir "$out" --console "$out/console.log" -v -- sh /guests.sh || { echo "scanout.sh: VM failed (rc $?)" >&2; exit 1; }
    echo "== VM done in $(( $(date +%s) - t1 )) s"
done

status=0
python3 - "$work" "$bin" <<'PY' || status=$?
import json, subprocess, sys
work, cadence = sys.argv[1], sys.argv[2]
passed = failed = 0
def check(name, ok, detail=""):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + name + (f"  ({detail})" if detail else ""))
    if ok: passed += 1
    else: failed += 1
def read(path, default=""):
    try:
        return open(path).read()
    except OSError:
        return default
def summary(name, driver="vkms"):
    """The attempts, stderr, exit status and JSON summary of run NAME in DRIVER's VM (None when unreadable)."""
    out = f"{work}/{driver}/{name}"
    print(f"-- {name} ({driver}):")
    print(read(out + ".attempts", "   no attempts recorded").rstrip())
    err = read(out + ".err").strip()
    if err: print("   stderr: " + err.replace("\n", "\n           "))
    try:
        return int(read(out + ".rc")), json.loads(read(out + ".out").strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        check(f"{name}: summary", False, str(e)); return None
def load(name):
    r = summary(name)
    if r is None: return None
    rc, s = r
    v = s.get("scanout") or {}
    keys = ["backend", "refreshHz", "frames", "presented", "droppedRefreshes", "dropEvents", "causes"]
    print("   " + json.dumps({k: s.get(k) for k in keys}))
    print("   scanout " + json.dumps(v, sort_keys=True))
    if v.get("lines") and v.get("reads"):
        print(f"   CRC reading: {v['reads']} reads, {v['readMicroseconds']:.0f} µs in all: "
              f"{v['readMicroseconds'] / v['lines']:.1f} µs per vblank ({v['lines']} lines), "
              f"{v['readMicroseconds'] / v['reads']:.1f} µs per read")
    check(f"{name}: exit 0 on kms with a scanout summary", rc == 0 and s.get("backend") == "kms" and bool(v), f"rc {rc}")
    return s, v

def flip_repeats(s, name):
    """Refreshes repeated between the first and the last flip by the flips' own timestamps (each
    interval of k refreshes repeated k - 1): what the CRCs see over the same span. The run's
    dropped refreshes can be more: a first frame shown after its target was late before any
    flip (seen in CI: 253 dropped, 251 repeats between flips, the CRCs 252 with the stale one).
    From the log's frames (the summary buckets intervals of 32 refreshes and more as "32+")."""
    try:
        frames = [json.loads(l) for l in open(f"{work}/vkms/{name}.jsonl") if '"outcome"' in l]
        return sum(max(0, f.get("intervalRefreshes", 0) - 1) for f in frames if f.get("outcome") in ("on-time", "late"))
    except (OSError, ValueError):
        return sum((int(k) - 1) * n for k, n in s.get("intervalRefreshes", {}).items() if k.isdigit())

print("-- vkms crc directory: " + read(f"{work}/vkms/crcdir.txt").strip().replace("\n", " "))
r = load("clean")
if r:
    s, v = r
    check("clean: 0 mismatches", v.get("mismatches") == 0, f"stale {v.get('stale')} {v.get('staleFrames')}, "
          f"changes without flip {v.get('changesWithoutFlip')} {v.get('changeWithoutFlipVBlanks')}")
    rep, unj, flips = v.get("repeatedRefreshes", -1), v.get("unjudgedVBlanks", 0), flip_repeats(s, "clean")
    check("clean: the repeats the CRCs show equal the repeats between the flips' timestamps" + (f" (±{unj} vblanks without a line)" if unj else ""),
          abs(rep - flips) <= unj, f"CRC {rep}, flips {flips} (the run's dropped refreshes {s['droppedRefreshes']}), "
          f"unjudged vblanks {unj}, inexact frames {v.get('inexact')}")
    check("clean: every frame verified or inexact", v.get("verified", 0) + v.get("inexact", 0) == v.get("frames"),
          f"{v.get('verified')} verified, {v.get('inexact')} inexact of {v.get('frames')}")
r = load("stale")
if r:
    s, v = r
    check("stale-buffer:300: exactly 1 stale frame, frame 300", v.get("stale") == 1 and v.get("staleFrames") == [300],
          f"stale {v.get('stale')} {v.get('staleFrames')}")
    check("stale-buffer:300: no change without a flip", v.get("changesWithoutFlip") == 0, v.get("changeWithoutFlipVBlanks"))
    rep, unj, flips = v.get("repeatedRefreshes", -1), v.get("unjudgedVBlanks", 0), flip_repeats(s, "stale")
    check("stale-buffer:300: the CRCs show one repeat more than the flips' timestamps (the stale frame)" + (f" (±{unj})" if unj else ""),
          abs(rep - (flips + 1)) <= unj, f"CRC {rep}, flips {flips} (the run's dropped refreshes {s['droppedRefreshes']}), unjudged vblanks {unj}")
def log_judged_again(name, v):
    """The run's log carries its CRC lines (version 3) and `report` (the host's cadence) judges
    them again to the run's own verdict (the run's line less its read cost)."""
    path = f"{work}/vkms/{name}.jsonl"
    try:
        records = [json.loads(l) for l in open(path)]
    except (OSError, ValueError) as e:
        check(f"{name}: log readable", False, str(e)); return
    crcs = [r for r in records if r.get("record") == "crc"]
    check(f"{name}: the log is version 3 with one crc record per line the run read",
          records[0].get("version") == 3 and records[0].get("crcSource") == "auto" and len(crcs) == v.get("lines", -1) + v.get("repeatedLines", 0),
          f"version {records[0].get('version')}, {len(crcs)} crc records, run: {v.get('lines')} lines + {v.get('repeatedLines')} repeated")
    p = subprocess.run([cadence, "report", path, "--output", f"{work}/vkms/{name}.html"], capture_output=True, text=True)
    line = next((l for l in p.stdout.splitlines() if l.startswith("scanout: ")), "")
    want = f"crc auto: {v.get('verified')} of {v.get('frames')} frames verified  mismatches {v.get('mismatches')} (stale {v.get('stale')}"
    same = all(f"{k} {v.get(kk)}" in line for k, kk in [("changes without flip", "changesWithoutFlip"), ("repeated refreshes", "repeatedRefreshes"), ("lines", "lines")])
    check(f"{name}: report judges the log's CRCs to the run's verdict", p.returncode == 0 and line.startswith("scanout: " + want) and same,
          f"rc {p.returncode}: {line or p.stderr.strip()}")

for name in ("clean", "stale"):
    try:
        v = json.loads(read(f"{work}/vkms/{name}.out").strip().splitlines()[-1]).get("scanout") or {}
        log_judged_again(name, v)
    except (ValueError, IndexError) as e:
        check(f"{name}: log judged again", False, str(e))

rc, m = summary("measure") or (-1, {})
mv = m.get("scanout") or {}
print(f"   flips {m.get('flips')}, missed vblanks {m.get('missedVblanks')}, scanout " + json.dumps(mv, sort_keys=True))
check("measure --verify crc: exit 0, every measured flip verified or inexact, 0 mismatches",
      rc == 0 and mv.get("frames") == m.get("flips") and mv.get("mismatches") == 0
      and mv.get("verified", 0) + mv.get("inexact", 0) == m.get("flips"),
      f"rc {rc}, flips {m.get('flips')}, verified {mv.get('verified')}, inexact {mv.get('inexact')}, mismatches {mv.get('mismatches')}")

def png_pixels(path):
    """An 8-bit RGB PNG (what Cadence writes) decoded here, independently of Cadence: rows of (r, g, b)."""
    import struct, zlib
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 2), f"depth {depth} colour type {colour}"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * 3, [], bytearray(w * 3)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], (prev[i - 3] if i >= 3 else 0)
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, rows

def identity(w, h, rows):
    """The frame index in FrameIdentity's barcode (shaders-cpu/FrameIdentity.swift): cells of
    max(2, min(w, h) / 192) pixels, the row at (1, 1) cells: white, black, 32 index bits (MSB
    first), 8 check bits, black, white; white is 1."""
    c = max(2, min(w, h) // 192)
    def bit(i):
        x, y = (1 + i) * c + c // 2, c + c // 2
        r, g, b = rows[y][3 * x:3 * x + 3]
        return 1 if (r, g, b) == (255, 255, 255) else 0 if (r, g, b) == (0, 0, 0) else None
    cells = [bit(i) for i in range(44)]
    if None in cells or cells[:2] != [1, 0] or cells[42:] != [0, 1]: return None
    return int("".join(map(str, cells[2:34])), 2)

rc, s = summary("writeback", "vkms2") or (-1, {})
w = (s.get("scanout") or {}).get("writeback") or {}
print("   " + json.dumps({k: s.get(k) for k in ["frames", "presented", "droppedRefreshes", "dropEvents", "causes"]}))
print("   writeback " + json.dumps(w, sort_keys=True))
if w.get("captures"):
    print(f"   capture cost on the pacing thread: {w['readMicroseconds'] / w['captures']:.0f} µs per capture (render kept + buffer read)")
check("writeback: exit 0, 12 of 12 captures decoded and equal to the render, none skipped or timed out",
      rc == 0 and (w.get("captures"), w.get("decoded"), w.get("equal"), w.get("skipped"), w.get("timedOut")) == (12, 12, 12, 0, 0)
      and w.get("mismatchedFrames") == [], f"rc {rc}, {w}")
import os
pngs = sorted(f for f in (os.listdir(f"{work}/vkms2/wb") if os.path.isdir(f"{work}/vkms2/wb") else []) if f.endswith(".png"))
want = [f"run-capture-{i:06d}.png" for i in range(0, 600, 50)]
check("writeback: the 12 PNGs beside the log", pngs == want, f"{pngs}")
decoded = []
for f in want:
    try:
        decoded.append(identity(*png_pixels(f"{work}/vkms2/wb/{f}")))
    except (OSError, AssertionError, IndexError, ValueError) as e:
        decoded.append(f"{f}: {e}")
check("writeback: each PNG, decoded here, carries the frame it was taken for (0, 50, …, 550)",
      decoded == list(range(0, 600, 50)), f"{decoded}")
def on_mismatch(name, fault):
    """`--capture on-mismatch` judged against what the run's own CRC verdict (the full one, 600
    vblanks open) flagged, not a fixed expectation: under TCG vkms' CRC worker falls behind (its
    catch-up vblanks are not judged, a stale frame can go unseen) and fences come late (flips
    without a job). What must hold whatever the load: every flip is a job or counted without
    one, every job is read, recycled unread or timed out; a capture is read only for a frame the
    CRC flagged (never more captures than mismatches; each flagged change's vblank and stale
    frame among the verdict's); each capture decodes to the frame it shows (a change without a
    flip: its own frame; a stale frame: the one before) and equals its render; with
    `stale-buffer:FAULT` no frame but FAULT is stale, and a stale FAULT is captured showing
    FAULT - 1 or counted as flagged too late, never lost; without a fault nothing is stale."""
    rc, s = summary(name, "vkms2") or (-1, {})
    v = s.get("scanout") or {}
    w = v.get("writeback") or {}
    m = w.get("onMismatch") or {}
    print("   " + json.dumps({k: s.get(k) for k in ["frames", "presented", "droppedRefreshes", "dropEvents", "causes"]}))
    print("   crc " + json.dumps({k: v.get(k) for k in ["frames", "verified", "inexact", "mismatches", "stale", "staleFrames",
                                                    "changesWithoutFlip", "changeWithoutFlipVBlanks", "unjudgedVBlanks"]}))
    print("   writeback " + json.dumps(w, sort_keys=True))
    frames = s.get("frames", -1)
    check(f"{name}: exit 0 with an on-mismatch summary", rc == 0 and bool(m) and m.get("ring") == 6, f"rc {rc}")
    jobs, captures = m.get("jobs", -1), w.get("captures", -1)
    check(f"{name}: every flip carried a job or is counted without one, every job read, recycled unread or timed out",
          jobs + m.get("withoutJob", 0) == frames and captures + m.get("recycledUnread", 0) + w.get("timedOut", 0) == jobs,
          f"frames {frames}: jobs {jobs}, without a job {m.get('withoutJob')}; captures {captures}, "
          f"recycled unread {m.get('recycledUnread')}, timed out {w.get('timedOut')}")
    flagged = m.get("flagged", [])
    cwf = v.get("changeWithoutFlipVBlanks", [])
    complete = len(cwf) == v.get("changesWithoutFlip")
    check(f"{name}: captures only of frames the CRC flagged",
          0 <= captures <= v.get("mismatches", 0) and len(flagged) == min(captures, 10)
          and all(f["frame"] in v.get("staleFrames", []) if f["reason"] == "stale" else (not complete or f.get("vblank") in cwf)
                  for f in flagged),
          f"captures {captures}, mismatches {v.get('mismatches')} (stale {v.get('staleFrames')}, changes {cwf}), flagged {flagged}")
    check(f"{name}: each capture decodes to the frame on screen (its own; a stale one's: the one before) and equals its render",
          all(f.get("shows") == f["frame"] - (1 if f["reason"] == "stale" else 0) and f.get("equal") is True for f in flagged)
          and set(w.get("mismatchedFrames", [])) <= {f["frame"] for f in flagged if f["reason"] == "stale"},
          f"decoded {w.get('decoded')}, equal {w.get('equal')}, mismatched {w.get('mismatchedFrames')}")
    stale = v.get("staleFrames", [])
    if fault is None:
        check(f"{name}: no stale frame without a fault", v.get("stale") == 0, f"stale {stale}")
    else:
        seen = fault in stale
        got = [f for f in flagged if f["frame"] == fault]
        check(f"{name}: no frame but {fault} is stale; a stale {fault} is captured showing {fault - 1} or counted flagged too late",
              set(stale) <= {fault} and (not seen or bool(got) or w.get("skipped", 0) >= 1),
              f"stale {stale}: " + (f"captured {got}" if got else f"not captured, flagged too late {w.get('skipped')}" if seen
                                    else "the CRC did not see it (its vblank unjudged or inexact under load)"))

on_mismatch("onmismatch-stale", 60)
on_mismatch("onmismatch-clean", None)
for name, d, want in [("nodebugfs", "vkms", "no debugfs"), ("bochs", "bochs", "--verify crc: not supported by bochs-drm")]:
    rc, err, out = read(f"{work}/{d}/{name}.rc").strip(), read(f"{work}/{d}/{name}.err"), read(f"{work}/{d}/{name}.out")
    print(f"-- {name}: rc {rc}, stderr: {err.strip()}")
    lines = err.strip().splitlines()
    check(f"{name}: one stderr line saying '{want}', nothing on stdout, exit 2",
          rc == "2" and len(lines) == 1 and want in lines[0] and out == "", f"rc {rc}, {len(lines)} lines")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
echo "scanout wall time: $(( $(date +%s) - t0 )) s"
if [ "$status" = 0 ] && [ -z "$keep" ]; then rm -rf "$work"; elif [ "$status" != 0 ]; then echo "outputs kept in $work"; fi
exit "$status"
