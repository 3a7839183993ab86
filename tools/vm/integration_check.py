#!/usr/bin/env python3
"""Checks the outputs of tools/vm/integration.sh (stdlib only).

usage: integration_check.py WORKDIR DRIVER...
WORKDIR/<driver>/ holds <case>.out/.err/.rc/.time written in the guest, and vm.rc.
Contract: `cadence measure --json` prints one object with driver, connector,
mode, nominalRefreshHz, measuredRefreshHz, vblank ("hardware"|"none"), flips,
missedVblanks, intervalMs {mean, stddev, min, p50, p99, max}.
The shared helpers are in integration_lib.py, the edge cases (bad input, device errors,
no card, Examples, rotation) in integration_edges.py.
"""

import json
import os
import subprocess
import sys

from integration_edges import check_bad, check_example, check_no_card, check_rotation, check_vrr_auto
from integration_lib import (DRM_NAMES, INTERVAL_KEYS, MEASURE_KEYS, TRAP_MARKERS, VKMS_1024x768_HZ, Case,
                             Counts, numbers_named, parse_json, result, walk)

def check_list(driver, root):
    c = Case(root, "list")
    if result("%s list runs" % driver, c.rc == 0, c.brief()):
        result("%s list shows Virtual-1" % driver, "Virtual-1" in c.out,
               "stdout has no Virtual-1: %r" % c.out[:300])
        if driver == "vkms":
            result("vkms list shows the exact refresh 60.0038", "60.0038" in c.out,
                   "no '60.0038' in stdout")
    j = Case(root, "list_json")
    if not result("%s list --json runs" % driver, j.rc == 0, j.brief()):
        return
    doc = parse_json("%s list --json is JSON" % driver, j)
    if doc is None:
        return
    result("%s list --json is JSON" % driver, True)
    connectors = [d for d in walk(doc) if "Virtual-1" in d.values()]
    if not result("%s list --json has connector Virtual-1" % driver, bool(connectors),
                  "no object with a value 'Virtual-1'"):
        return
    rates = numbers_named(connectors[0], ("refresh", "hz"))
    if not result("%s list --json Virtual-1 has modes with refresh" % driver, bool(rates),
                  "no numeric *refresh*/*hz* field below Virtual-1"):
        return
    if driver == "vkms":
        close = [r for r in rates if abs(r - VKMS_1024x768_HZ) < 0.0005]
        result("vkms list --json has 1024x768 at 60.0038 Hz (exact, not 60)", bool(close),
               "refresh values: %s" % sorted(set(rates))[:12])
    else:
        result("%s list --json refresh values are fractional (exact)" % driver,
               any(abs(r - round(r)) > 1e-6 for r in rates),
               "all integers: %s" % sorted(set(rates))[:12])


def check_profile(driver, root):
    """`cadence list --backend fake-drm:<drm_info -j of this device>` lists what `cadence list`
    lists on the real device: the same connector names, statuses and modes (exact refresh)."""
    p = Case(root, "profile_list")
    if not result("%s list --backend fake-drm:<guest drm_info -j> runs" % driver, p.rc == 0, p.brief()):
        return
    fake = parse_json("%s fake-drm list is JSON" % driver, p)
    real = parse_json("%s list --json is JSON" % driver, Case(root, "list_json"))
    if fake is None or real is None:
        return

    def shape(doc):
        dev = doc["devices"][0]
        return [(c["name"], c["status"], [(m["name"], m.get("refreshHz"), m.get("preferred")) for m in c["modes"]])
                for c in dev["connectors"]]
    got, want = shape(fake), shape(real)
    modes = sum(len(c[2]) for c in want)
    result("%s fake-drm profile lists the real connectors and modes (%d connectors, %d modes)"
           % (driver, len(want), modes), got == want and modes > 0,
           "fake-drm %s vs real %s" % (got[:2], want[:2]))
    result("%s fake-drm list says simulator" % driver, fake.get("backend") == "fake-drm", str(fake.get("backend")))


QEMU_EDID = {"name": "QEMU Monitor", "manufacturer": "RHT", "productCode": 4660}


def check_identity(driver, root):
    """Panel identity: list's identity fields, `cadence edid` on the connector and the sysfs
    file, the sysfs EDID against edid-decode (tools/edid/compare.py), validate --expect-*."""
    j = Case(root, "list_json")
    try:
        doc = json.loads(j.out)
    except ValueError:
        doc = None
    conns = [d for d in walk(doc) if d.get("name") == "Virtual-1" and "identity" in d] if doc else []
    ident = conns[0]["identity"] if conns else None
    lst = Case(root, "list")
    if driver == "vkms":
        result("vkms list --json identity: no EDID, no vrr_capable",
               ident is not None and ident.get("edid") is False and ident.get("problem") == "no EDID"
               and ident.get("vrrCapable") is None, repr(ident))
        result("vkms list says the connector has no EDID", "identity     no EDID" in lst.out, lst.out[:400])
        for name, what in (("edid_connector", "edid --connector Virtual-1 (no EDID)"),
                           ("edid_sysfs", "edid /sys/class/drm/card0-Virtual-1/edid (empty)")):
            check_bad(root, name, what)
        c = Case(root, "expect_noedid")
        errs = [l for l in c.err.splitlines() if l.strip()]
        result("vkms validate --expect-monitor fails: Virtual-1 has no EDID; --expect-mode 1024x768@60 passes",
               c.rc == 1 and errs == ['FAIL expect-monitor: Virtual-1 has no EDID (expected "QEMU Monitor")']
               and "PASS expect-mode: mode 1024x768@60.0038" in c.out, c.brief() + " " + c.out[-300:])
        return
    ok = ident is not None and all(ident.get(k) == v for k, v in QEMU_EDID.items())
    result("%s list --json identity is QEMU's monitor" % driver, ok, repr(ident)[:400])
    if ok:
        p = ident.get("preferredTiming") or {}
        result("%s list --json preferred 1280x800 @ 74.993850 Hz, 320x200 mm, range limits 50-125 Hz" % driver,
               (p.get("width"), p.get("height"), p.get("refreshHz")) == (1280, 800, 74.99385)
               and ident.get("sizeMM") == {"width": 320, "height": 200}
               and [(v["minHz"], v["maxHz"], v["source"]) for v in ident.get("vrrRanges", [])] == [(50, 125, "edid-range-limits")],
               repr(ident)[:600])
    result("%s list shows the monitor name" % driver, 'monitor      "QEMU Monitor"' in lst.out, lst.out[:400])
    docs = {}
    for name in ("edid_connector", "edid_sysfs"):
        c = Case(root, name)
        try:
            docs[name] = json.loads(c.out) if c.rc == 0 else None
        except ValueError:
            docs[name] = None
        d = docs[name] or {}
        result("%s %s decodes QEMU's EDID" % (driver, name),
               all(d.get(k) == v for k, v in QEMU_EDID.items()) and not d.get("warnings"), c.brief())
    a, b = docs.get("edid_connector"), docs.get("edid_sysfs")
    if a and b:
        a, b = dict(a), dict(b)
        a.pop("source"), b.pop("source")
        result("%s EDID property and sysfs file decode the same" % driver, a == b)
    binary = os.environ.get("CADENCE_BIN")
    edid_bin = os.path.join(root, "edid.bin")
    if binary and os.path.exists(edid_bin):
        cmp = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "edid", "compare.py"),
                              "--cadence", binary, "--corpus", root, edid_bin], capture_output=True, text=True)
        result("%s QEMU EDID: cadence edid = edid-decode field by field" % driver, cmp.returncode == 0,
               (cmp.stdout + cmp.stderr).strip()[-400:])
    c = Case(root, "expect_ok")
    result("%s validate --expect-monitor 'QEMU Monitor' --expect-mode 1280x800@74.99 passes" % driver,
           c.rc == 0 and "PASS expect-monitor" in c.out and "PASS expect-mode" in c.out, c.brief())
    c = Case(root, "expect_wrong")
    errs = [l for l in c.err.splitlines() if l.strip()]
    result("%s validate --expect-monitor 'DELL U2720Q' fails with one line" % driver,
           c.rc == 1 and errs == ['FAIL expect-monitor: monitor "QEMU Monitor" (expected "DELL U2720Q")'], c.brief())


def check_measure_keys(label, doc):
    missing = [k for k in MEASURE_KEYS if k not in doc]
    iv = doc.get("intervalMs")
    if isinstance(iv, dict):
        missing += ["intervalMs." + k for k in INTERVAL_KEYS if k not in iv]
    return result(label + " has the contract keys", not missing, "missing %s" % missing)


def check_measure_hw(driver, root, name, label, nominal_expect, duration=10, kernel_miss_tolerance=0.0):
    """`kernel_miss_tolerance`: the fraction of flips that may miss the vblank they were meant
    for, whatever the cause (measure's missedVblankCauses): under TCG on a loaded host the vCPU
    is delayed, so vkms' commit worker can run past a 6.9 ms refresh (notLatched) and, more
    rarely, measure's own thread wakes too late to submit in time (lateSubmit). Both are the
    host's, counted and printed; a flip submitted late is allowed once per 1,000 flips (at least
    once), and any miss beyond the tolerance fails (a systematic drop)."""
    c = Case(root, name)
    try:
        with open(os.path.join(root, name + ".attempts")) as f:
            attempts = [l.strip() for l in f if l.strip()]
    except OSError:
        attempts = []
    if len(attempts) > 1:  # retried because of missed vblanks: show every attempt
        print("  note: %s ran %d times (the last one is checked): %s"
              % (label, len(attempts), "; ".join(attempts)))
    if not result(label + " runs", c.rc == 0, c.brief()):
        return
    doc = parse_json(label + " is JSON", c)
    if not isinstance(doc, dict):
        if doc is not None:
            result(label + " is a JSON object", False, repr(doc)[:200])
        return
    if not check_measure_keys(label, doc):
        return
    result(label + " driver", doc["driver"] == DRM_NAMES[driver], repr(doc["driver"]))
    result(label + " connector", doc["connector"] == "Virtual-1", repr(doc["connector"]))
    result(label + " mode 1024x768", str(doc["mode"]).startswith("1024x768"),
           repr(doc["mode"]))
    result(label + " vblank hardware", doc["vblank"] == "hardware", repr(doc["vblank"]))
    nominal, measured = doc["nominalRefreshHz"], doc["measuredRefreshHz"]
    ok_n = isinstance(nominal, (int, float)) and abs(nominal - nominal_expect) / nominal_expect < 0.001
    result(label + " nominalRefreshHz ~ %.4f" % nominal_expect, ok_n, repr(nominal), info=True)
    if ok_n and isinstance(measured, (int, float)):
        err = abs(measured - nominal) / nominal
        result(label + " measuredRefreshHz within 0.05% of nominal", err <= 0.0005,
               "nominal %s measured %s (%.4f%%)" % (nominal, measured, err * 100), info=True)
    else:
        result(label + " measuredRefreshHz within 0.05% of nominal", False, repr(measured))
    flips = doc["flips"]
    if kernel_miss_tolerance > 0:
        causes = doc.get("missedVblankCauses") or {}
        late, unlatched = causes.get("lateSubmit"), causes.get("notLatched")
        n = flips if isinstance(flips, int) else 0
        allowed = int(kernel_miss_tolerance * n)
        allowed_late = max(1, n // 1000)
        ok = (isinstance(late, int) and isinstance(unlatched, int) and late <= allowed_late
              and late + unlatched == doc["missedVblanks"] and late + unlatched <= allowed)
        result(label + " missedVblanks: at most %.1f%% missed, at most 0.1%% (1 at least) submitted late"
               % (kernel_miss_tolerance * 100), ok,
               "missed %r (lateSubmit %r of %d allowed, notLatched %r; %d allowed in all)"
               % (doc["missedVblanks"], late, allowed_late, unlatched, allowed),
               info=True)
    else:
        result(label + " missedVblanks 0", doc["missedVblanks"] == 0, repr(doc["missedVblanks"]))
    want = 0.9 * duration * nominal_expect
    result(label + " flips every vblank (>= %d)" % want,
           isinstance(flips, int) and flips >= want, repr(flips), info=True)
    iv = doc["intervalMs"]
    period = 1000.0 / nominal_expect
    try:
        ok = (abs(iv["mean"] - period) / period < 0.005 and abs(iv["p50"] - period) / period < 0.01
              and 0 < iv["min"] <= iv["p50"] <= iv["p99"] <= iv["max"] and iv["stddev"] >= 0)
    except TypeError:
        ok = False
    result(label + " intervalMs consistent with %.4f ms" % period, ok, repr(iv), info=True)


def check_measure_none(driver, root):
    label = "%s measure" % driver
    c = Case(root, "measure")
    if not result(label + " exits 0", c.rc == 0, c.brief()):
        return
    doc = parse_json(label + " is JSON", c)
    if not isinstance(doc, dict):
        return
    if not check_measure_keys(label, doc):
        return
    result(label + " driver", doc["driver"] == DRM_NAMES[driver], repr(doc["driver"]))
    result(label + " connector", doc["connector"] == "Virtual-1", repr(doc["connector"]))
    result(label + " vblank none", doc["vblank"] == "none", repr(doc["vblank"]))
    result(label + " no invented drops (missedVblanks 0)", doc["missedVblanks"] == 0,
           repr(doc["missedVblanks"]))
    result(label + " flipped", isinstance(doc["flips"], int) and doc["flips"] > 0,
           repr(doc["flips"]))
    result(label + " notice on stderr", "vblank" in c.err.lower(),
           "stderr: %r" % c.err[:300])
    result(label + " no crash output", not any(m in c.err for m in TRAP_MARKERS),
           "stderr: %r" % c.err[:300])


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    work, drivers = argv[0], argv[1:]
    for driver in drivers:
        root = os.path.join(work, driver)
        try:
            with open(os.path.join(root, "vm.rc")) as f:
                vm_rc = int(f.read().strip())
        except (OSError, ValueError):
            vm_rc = None
        if not result("%s VM ran the guest script" % driver, vm_rc == 0,
                      "run.sh exit %s (see %s/console.log)" % (vm_rc, root)):
            continue
        if driver == "none":
            check_no_card(root)
            check_example(root, "nocard_example", "fake")
            continue
        smoke = Case(root, "smoke")
        result("%s harness smoke (%s)" % (driver, "vblank ticks" if driver == "vkms"
                                          else "no vblank: EOPNOTSUPP"),
               smoke.rc == 0, smoke.out.strip().replace("\n", " | ") + " " + smoke.brief(), info=True)
        check_list(driver, root)
        check_profile(driver, root)
        check_identity(driver, root)
        if driver == "vkms":
            check_measure_hw(driver, root, "measure", "vkms measure 60", VKMS_1024x768_HZ)
            check_measure_hw(driver, root, "measure_144", "vkms measure 1024x768@144", 144.0,
                             kernel_miss_tolerance=0.005)
            check_measure_hw(driver, root, "measure_gbm", "vkms measure --allocator gbm",
                             VKMS_1024x768_HZ, duration=3)
            check_measure_hw(driver, root, "measure_legacy", "vkms measure --api legacy",
                             VKMS_1024x768_HZ, duration=3)
            check_example(root, "example", "kms")
            check_bad(root, "vrr_on", "run --vrr on on vkms (no vrr_capable property)",
                      says=("--vrr on: VRR unavailable: Virtual-1 has no vrr_capable property",))
            check_vrr_auto(root)
            check_bad(root, "bad_list_devnull", "list --device /dev/null")
            check_bad(root, "bad_measure_devnull", "measure --device /dev/null")
            check_bad(root, "bad_list_nonexistent", "list --device /nonexistent")
            check_bad(root, "bad_measure_nonexistent", "measure --device /nonexistent")
            check_bad(root, "bad_connector", "measure --connector NOPE")
            check_bad(root, "bad_mode", "measure --mode 1x1@7")
            permission = ("permission denied opening /dev/dri/card0", "'video' group")
            master = ("held by another DRM master", "free text VT")
            check_bad(root, "bad_no_permission", "measure without permission (uid nobody)", says=permission)
            check_bad(root, "bad_run_no_permission", "run without permission (uid nobody)", says=permission)
            check_bad(root, "bad_validate_no_permission", "validate without permission (uid nobody)",
                      says=permission)
            check_bad(root, "bad_other_master", "measure while another DRM master holds it", says=master)
            check_bad(root, "bad_run_other_master", "run while another DRM master holds it", says=master)
            check_bad(root, "bad_validate_other_master", "validate while another DRM master holds it",
                      says=master)
            check_rotation(root)
        else:
            check_measure_none(driver, root)
        if driver == "virtio":
            check_bad(root, "bad_disconnected", "measure --connector Virtual-2 (disconnected)")
        times = []
        for name in sorted(os.listdir(root)):
            if name.endswith(".time"):
                c = Case(root, name[:-5])
                if c.seconds is not None:
                    times.append("%s %.1fs" % (c.name, c.seconds))
        print("  %s guest times: %s" % (driver, ", ".join(times)))
    print("%d passed, %d failed" % (Counts.passed, Counts.failed))
    return 1 if Counts.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
