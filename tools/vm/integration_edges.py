"""The edge cases of tools/vm/integration.sh, checked from the host (stdlib only): bad input and
device errors (one stderr line, exit 2, no trap), VRR refused or unavailable on vkms, a machine
with no card, the Examples package, rotation. integration_check.py calls these."""

import json
import os
import subprocess
import sys

from integration_lib import TRAP_MARKERS, VKMS_1024x768_HZ, Case, result


def check_bad(root, name, what, says=()):
    """A refused case: exit 2 (usage, input or device error), exactly one stderr line that
    contains every string in `says`, nothing on stdout, no trap."""
    c = Case(root, name)
    label = "bad input: %s" % what
    if not c.present:
        result(label, False, "case did not run")
        return
    lines = [l for l in c.err.splitlines() if l.strip()]
    problems = []
    if c.rc != 2:
        problems.append("exit %s, want 2" % c.rc)
    if len(lines) != 1:
        problems.append("%d stderr lines, want 1" % len(lines))
    missing = [s for s in says if s not in c.err]
    if missing:
        problems.append("stderr lacks %r" % missing)
    if c.out.strip():
        problems.append("stdout not empty: %r" % c.out[:200])
    if any(m in c.err for m in TRAP_MARKERS):
        problems.append("crash output")
    result(label, not problems, "; ".join(problems) + " | stderr: %r" % c.err[:400],
           info=bool(says))


def check_vrr_auto(root):
    """`run --vrr auto --rate 0:144:90` on vkms (no vrr_capable): exit 0, one stderr line saying
    VRR is unavailable and why, the summary at vkms' fixed 60.0038 Hz with no VRR range."""
    c = Case(root, "vrr_auto")
    label = "vkms run --vrr auto: fixed refresh, VRR unavailable said once"
    if not c.present:
        result(label, False, "case did not run")
        return
    want = "VRR unavailable (Virtual-1 has no vrr_capable property): pacing at a divisor of the fixed 60.0038 Hz"
    lines = [l for l in c.err.splitlines() if l.strip()]
    problems = []
    if c.rc != 0:
        problems.append("exit %s, want 0" % c.rc)
    if sum(want in l for l in lines) != 1:
        problems.append("stderr lacks exactly one %r" % want)
    try:
        s = json.loads(c.out)
        if s.get("vrrRangeHz") is not None:
            problems.append("vrrRangeHz %r, want none" % s.get("vrrRangeHz"))
        if abs(s.get("effectiveRateHz", 0) - VKMS_1024x768_HZ) > 0.01:
            problems.append("effectiveRateHz %r, want %.4f" % (s.get("effectiveRateHz"), VKMS_1024x768_HZ))
    except ValueError as e:
        problems.append("stdout not JSON: %s" % e)
    result(label, not problems, "; ".join(problems) + " | stderr: %r" % c.err[:400])


def check_no_card(root):
    """The VM without any DRM driver: run falls back to the fake display in one line,
    validate refuses (exit 2) unless --backend fake, list/measure/run --backend kms exit 2."""
    r = Case(root, "nocard_run")
    notice = "using the fake display"
    ok = r.rc == 0 and [l for l in r.err.splitlines() if l.strip()] == [
        "cadence run: no DRM device (/dev/dri has no card* nodes): using the fake display at 60 Hz, a simulator"]
    result("no card: run falls back to the fake display with a one-line notice", ok, r.brief())
    try:
        doc = json.loads(r.out)
        result("no card: run's summary says backend fake", doc.get("backend") == "fake", repr(doc.get("backend")))
    except ValueError:
        result("no card: run's summary says backend fake", False, "stdout %r" % r.out[:200])
    check_bad(root, "nocard_validate", "no card: validate without --backend fake exits 2",
              says=("no DRM device: validate needs a real display; use --backend fake",))
    result("no card: validate writes no JUnit file", not os.path.exists(os.path.join(root, "nocard.xml")))
    f = Case(root, "nocard_validate_fake")
    result("no card: validate --backend fake passes and says fake display",
           f.rc == 0 and "validate: PASS (1 criteria) on the fake display" in f.out
           and "backend           fake display" in f.out and notice not in f.err, f.brief())
    try:
        with open(os.path.join(root, "nocard_fake.xml")) as x:
            xml = x.read()
    except OSError:
        xml = ""
    result("no card: validate --backend fake JUnit says fake display",
           'value="fake display (simulator)"' in xml, xml[:200])
    check_bad(root, "nocard_run_kms", "no card: run --backend kms", says=("no DRM device found",))
    check_bad(root, "nocard_list", "no card: list", says=("no DRM device found",))
    check_bad(root, "nocard_measure", "no card: measure", says=("no DRM device found",))


def check_example(root, name, mode):
    """Examples' moving-bar, run in the guest: checked by tools/check_example_output.py (the
    checker CI uses on the host's fake display), one result per line it prints."""
    c = Case(root, name)
    if not result("%s ran" % name, c.present, "no %s.rc" % name):
        return
    try:
        overruns = int(open(os.path.join(root, name + ".overruns")).read().strip())
    except (OSError, ValueError):
        overruns = 0
    path = os.path.join(root, name + ".combined")
    with open(path, "w") as f:
        f.write(c.out + c.err)
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "check_example_output.py")
    p = subprocess.run([sys.executable, checker, mode, path, "--rc", str(c.rc), "--overruns", str(overruns)],
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    for line in lines:
        if line.startswith(("PASS", "FAIL")):
            label, _, detail = line[6:].partition("  [")
            result(label.strip(), line.startswith("PASS"), detail.rstrip("]"))
        else:
            print("  " + line)
    result("%s checker ran" % name, bool(lines) and p.returncode in (0, 1), p.stderr[-300:])
    result("%s: no trap" % name, not any(m in c.out + c.err for m in TRAP_MARKERS), c.brief())


def check_rotation(root):
    """vkms: `run --duration 0 --log-max-size 64K --log-keep 3` stopped with SIGTERM: exit 0,
    rot.jsonl and rot.jsonl.1-.3 only, each under 64 KiB but for its last line, each one read
    by `report` on its own; replay of each file is printed (information: vkms under TCG)."""
    run = Case(root, "rot_run")
    result("vkms run --duration 0 with a rotating log: stopped by SIGTERM, exit 0", run.rc == 0
           and '"endReason":"stopped"' in run.out, run.brief())
    names = sorted(n for n in os.listdir(root) if n.startswith("rot.jsonl"))
    result("vkms rotating log: rot.jsonl and rot.jsonl.1-.3 (keep 3)",
           names == ["rot.jsonl", "rot.jsonl.1", "rot.jsonl.2", "rot.jsonl.3"], str(names))
    total = 0
    for age, name in enumerate(["rot.jsonl", "rot.jsonl.1", "rot.jsonl.2", "rot.jsonl.3"]):
        path = os.path.join(root, name)
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        lines = data.rstrip(b"\n").split(b"\n")
        frames = sum(1 for l in lines if "record" not in json.loads(l))
        total += frames
        result("vkms %s: under 64 KiB but for its last line" % name,
               len(data) - len(lines[-1]) - 1 <= 64 * 1024, "%d bytes" % len(data))
        rep = Case(root, "report_" + name)
        result("vkms report %s exits 0 and reads it as a segment" % name,
               rep.rc == 0 and "%d frames" % frames in rep.out and "of a rotated log" in rep.out,
               rep.out.strip()[-200:] + " " + rep.brief())
        rp = Case(root, "replay_" + name)
        verdict = [l for l in rp.out.splitlines() if l.startswith("summary")]
        result("vkms replay %s" % name, rp.rc in (0, 1), "rc=%s %s" % (rp.rc, verdict[0][18:160] if verdict else rp.brief()),
               info=True)
    print("  vkms rotating log: %d frames in the 4 files kept" % total)
