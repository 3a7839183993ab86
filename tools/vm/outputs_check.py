#!/usr/bin/env python3
"""Host-side checks of tools/vm/outputs.sh's guest outputs (vkms2: two outputs).
Usage: outputs_check.py OUTDIR"""
import json
import re
import sys

from vmchecks import Checks, fbcon_planes

VKMS_HZ = 65000e3 / (1344 * 806)  # vkms' preferred 1024x768 mode: 60.00384 Hz
NAMES = ["Virtual-1", "Virtual-2"]
SHOWN = ("on-time", "late")

out = sys.argv[1]
checks = Checks(out, "outputs")
check, text, rc = checks.check, checks.text, checks.rc
attempts, json_doc = checks.attempts, checks.json_doc


def log(name, connector):
    """Header, frame lines, end line and bad line count of NAME.CONNECTOR.jsonl."""
    return checks.read_log(f"{name}.{connector}.jsonl")


def check_logs(name, summaries, overruns, refresh_hz=VKMS_HZ):
    """Each output's log: its connector, its own CRTC, kernel sequences whose every skipped
    refresh is a dropped refresh counted on the frame after it, drops equal to the summary's
    (`summaries`: connector → {crtc, droppedRefreshes, dropEvents}), the refresh measured from
    the flip timestamps (`refresh_hz`: one for both, or connector → Hz). Drops themselves are
    printed with the overruns, not judged."""
    crtcs = {}
    for c in NAMES:
        header, frames, end, bad = log(name, c)
        s = summaries.get(c, {})
        crtc = header.get("crtc") if header else None
        crtcs[c] = crtc
        check(f"{name}: {c}'s log has a header, an end line and frames, all naming {c}",
              header is not None and end is not None and bad == 0 and len(frames) > 10
              and header.get("connector") == c and all(f.get("connector") == c for f in frames),
              f"header {header is not None}, end {end is not None}, {len(frames)} frames, {bad} bad lines")
        check(f"{name}: {c}: every frame on its own CRTC ({crtc})",
              crtc is not None and crtc == s.get("crtc") and all(f["crtc"] == crtc for f in frames),
              f"header {crtc}, summary {s.get('crtc')}, frames {sorted({f['crtc'] for f in frames})}")
        shown = sorted((f for f in frames if f["outcome"] in SHOWN), key=lambda f: f["frame"])
        seqs = [f["sequence"] for f in shown]
        gaps = [(b["frame"], b["sequence"] - a["sequence"], b["intervalRefreshes"], b["droppedRefreshes"])
                for a, b in zip(shown, shown[1:])]
        increasing = all(g > 0 for _, g, _, _ in gaps)
        uncounted = [(f, g, d) for f, g, i, d in gaps if g != i or g - 1 != d]
        check(f"{name}: {c}: kernel sequences consecutive but for the dropped refreshes "
              "(gap = 1 + droppedRefreshes of the frame after it, = its intervalRefreshes)",
              len(shown) > 10 and increasing and not uncounted,
              f"{len(shown)} shown, sequences {seqs[:1]}..{seqs[-1:]}, (frame, gap, dropped) not matching: {uncounted[:6]}")
        dropped = sum(f["droppedRefreshes"] for f in shown)
        events = sum(1 for f in shown if f["droppedRefreshes"] > 0)
        no_cause = [f["frame"] for f in frames if (f["droppedRefreshes"] > 0 or f["outcome"] not in ("on-time",)) and not f.get("cause")]
        check(f"{name}: {c}: drops accounted on this output (summary = log, each with a cause)",
              dropped == s.get("droppedRefreshes") and events == s.get("dropEvents") and not no_cause,
              f"log {dropped} in {events} events, summary {s.get('droppedRefreshes')} in {s.get('dropEvents')}, without a cause {no_cause[:5]}")
        if len(shown) > 1 and shown[-1]["sequence"] > shown[0]["sequence"]:
            per = (shown[-1]["flipNs"] - shown[0]["flipNs"]) / (shown[-1]["sequence"] - shown[0]["sequence"])
            hz = 1e9 / per
        else:
            hz = 0.0
        want = refresh_hz[c] if isinstance(refresh_hz, dict) else refresh_hz
        check(f"{name}: {c}: its CRTC ticks at the mode's refresh (flip timestamps over sequences: {hz:.4f} Hz)",
              abs(hz - want) / want < 0.0005, f"{hz:.4f} vs {want:.4f}")
        causes = {}
        for f in frames:
            if f.get("cause"):
                causes[f["cause"]] = causes.get(f["cause"], 0) + 1
        print(f"   {name}: {c} on CRTC {crtc}: {len(frames)} frames, {len(shown)} shown, dropped {dropped} refreshes "
              f"in {events} events, causes {causes}, measured {hz:.4f} Hz (vblank timer overruns in the run: {overruns})")
    check(f"{name}: the two outputs on two different CRTCs", len(set(crtcs.values())) == 2 and None not in crtcs.values(), str(crtcs))


# --- the card --------------------------------------------------------------------------
print("-- the card (vkms2)")
check("card: Virtual-1 and Virtual-2 connected (sysfs)", text("status.txt").split() == ["connected", "connected"], " ".join(text("status.txt").split()))
doc = json_doc("list") if rc("list") == 0 else {}
conns = doc.get("devices", [{}])[0].get("connectors", []) if doc.get("devices") else []
listed = [(c.get("name"), c.get("status")) for c in conns]
check("card: `list --json` shows Virtual-1 and Virtual-2 connected",
      [x for x in listed if x[0] in NAMES] == [(n, "connected") for n in NAMES], str(listed))
pref = {c.get("name"): [m for m in c.get("modes", []) if m.get("preferred")] for c in conns}
check("card: each prefers 1024x768 at 60.0038 Hz",
      all(len(pref.get(n, [])) == 1 and abs(pref[n][0].get("refreshHz", 0) - VKMS_HZ) < 0.0005 for n in NAMES),
      str({n: [(m.get("name"), m.get("refreshHz")) for m in pref.get(n, [])] for n in NAMES}))
for i, n in enumerate(NAMES, 1):
    t = text(f"smoke_{i}.out")
    print("   " + t.strip().replace("\n", " | "))
    m = re.search(r"waitvblank=ok .*rateHz=([\d.]+)", t)
    f = re.search(r"flips=(\d+) .*missed=(\d+) rateHz=([\d.]+)", t)
    check(f"card: vblank-smoke on {n}: its CRTC's vblanks tick at the mode's refresh (±0.5%) and it flips",
          rc(f"smoke_{i}") == 0 and f"connector={n}" in t and "driver=vkms " in t and m is not None and f is not None and int(f.group(1)) > 10,
          f"rc {rc(f'smoke_{i}')}, stderr {text(f'smoke_{i}.err').strip()[:200]!r}")

# --- natural runs ------------------------------------------------------------------------
print("-- run --connector all --duration 5 (JSON)")
ov = attempts("all")
doc = json_doc("all")
outs = {o.get("connector"): o for o in doc.get("outputs", [])}
check("all: exit 0, one summary per output (Virtual-1, Virtual-2) and the total",
      rc("all") == 0 and [o.get("connector") for o in doc.get("outputs", [])] == NAMES and doc.get("total", {}).get("outputs") == 2,
      f"rc {rc('all')}, outputs {list(outs)}, stderr {text('all.err').strip()[:200]!r}")
check("all: both on kms at 60.0038 Hz, full rate",
      all(outs.get(n, {}).get("backend") == "kms" and abs(outs[n].get("refreshHz", 0) - VKMS_HZ) < 0.0005
          and abs(outs[n].get("effectiveRateHz", 0) - VKMS_HZ) < 0.0005 for n in NAMES),
      str({n: (outs.get(n, {}).get("backend"), outs.get(n, {}).get("refreshHz")) for n in NAMES}))
total = doc.get("total", {})
check("all: the total adds up the outputs",
      all(total.get(k) == sum(outs.get(n, {}).get(k, 0) for n in NAMES) for k in ("frames", "presented", "droppedRefreshes", "dropEvents")),
      str(total))
check_logs("all", outs, ov)


before, after = fbcon_planes(text("state_before.txt")), fbcon_planes(text("state_after.txt"))
check("all: fbcon's framebuffer back on the planes that showed it before the run", before and after == before, f"before {before}, after {after}")

print("-- run --connector all --mode Virtual-2=1024x768@144 --duration 5 (JSON; each output at its own mode)")
ov = attempts("mixed")
doc = json_doc("mixed")
outs = {o.get("connector"): o for o in doc.get("outputs", [])}
rates = [outs.get(n, {}).get("refreshHz", 0) for n in NAMES]
check("mixed: exit 0, Virtual-1 at its preferred 60.0038 Hz, Virtual-2 at 144 Hz",
      rc("mixed") == 0 and list(outs) == NAMES and abs(rates[0] - VKMS_HZ) < 0.001 and abs(rates[1] - 144) < 0.5,
      f"rc {rc('mixed')}, rates {rates}, stderr {text('mixed.err').strip()[:200]!r}")
check_logs("mixed", outs, ov, refresh_hz={"Virtual-1": VKMS_HZ, "Virtual-2": 144.0})

print("-- run --connector Virtual-1 --connector Virtual-2 --duration 5 (text)")
ov = attempts("pair")
lines = text("pair.out").splitlines()
heads = [re.match(r"output +(\S+) +CRTC (\d+) \(index (\d)\) +1024x768@60\.0038", l) for l in lines if l.startswith("output ")]
tot = [re.match(r"total +2 outputs +frames (\d+) +presented (\d+) +discarded (\d+) +dropped (\d+) refreshes in (\d+) events", l)
       for l in lines if l.startswith("total ")]
dropped_lines = [re.match(r"dropped +(\d+) refreshes in (\d+) events", l) for l in lines if l.startswith("dropped ")]
check("pair: exit 0, an output line per connector (CRTC, index, mode), a summary each and the total",
      rc("pair") == 0 and [h.group(1) if h else None for h in heads] == NAMES and len(tot) == 1 and tot[0] is not None
      and len(dropped_lines) == 2 and all(dropped_lines),
      f"rc {rc('pair')}: " + " / ".join(l for l in lines if l.startswith(("output", "total"))))
pair = {}
if len(heads) == 2 and all(heads) and len(dropped_lines) == 2 and all(dropped_lines):
    for h, d in zip(heads, dropped_lines):
        pair[h.group(1)] = {"crtc": int(h.group(2)), "droppedRefreshes": int(d.group(1)), "dropEvents": int(d.group(2))}
check("pair: CRTC indexes 0 and 1", [h.group(3) if h else None for h in heads] == ["0", "1"])
check_logs("pair", pair, ov)

print("-- measure --connector all --duration 2 (JSON)")
attempts("measure")
doc = json_doc("measure")
mo = {o.get("output"): o for o in doc.get("outputs", [])}
for n in NAMES:
    o = mo.get(n, {})
    print(f"   measure: {n}: device {o.get('device')}, measured {o.get('measuredRefreshHz')} Hz from {o.get('flips')} flips, "
          f"missed vblanks {o.get('missedVblanks')}, vblank {o.get('vblank')}, checks passed {o.get('checksPassed')}")
check("measure: exit 0, one object per output (Virtual-1, Virtual-2), hardware vblank, every check passed",
      rc("measure") == 0 and list(mo) == NAMES and all(mo[n].get("vblank") == "hardware" and mo[n].get("checksPassed") is True for n in NAMES),
      f"rc {rc('measure')}, outputs {list(mo)}, stderr {text('measure.err').strip()[:300]!r}")
check("measure: each output's refresh from its own flip timestamps is the mode's 60.0038 Hz (±0.05%), from at least 100 flips",
      all(abs((mo.get(n, {}).get("measuredRefreshHz") or 0) - VKMS_HZ) < VKMS_HZ * 0.0005 and (mo.get(n, {}).get("flips") or 0) >= 100 for n in NAMES),
      str({n: (mo.get(n, {}).get("measuredRefreshHz"), mo.get(n, {}).get("flips")) for n in NAMES}))

# --- scripted late frames on Virtual-2 -----------------------------------------------------
print("-- run --connector all --inject-late Virtual-2=100:1,250:3 --frames 400 --latency 1")
attempts("late")
doc = json_doc("late")
outs = {o.get("connector"): o for o in doc.get("outputs", [])}
v1, v2 = outs.get("Virtual-1", {}), outs.get("Virtual-2", {})
for n in NAMES:
    o = outs.get(n, {})
    print(f"   late: {n}: frames {o.get('frames')}, presented {o.get('presented')}, dropped {o.get('droppedRefreshes')} "
          f"in {o.get('dropEvents')} events, causes {o.get('causes')}")
check("late: exit 0, 400 frames on each output", rc("late") == 0 and v1.get("frames") == 400 and v2.get("frames") == 400,
      f"rc {rc('late')}, frames {v1.get('frames')}, {v2.get('frames')}")
h1, f1, _, _ = log("late", "Virtual-1")
h2, f2, _, _ = log("late", "Virtual-2")
check("late: only Virtual-2's log header carries the injection",
      h1 is not None and h2 is not None and h1.get("injectLate") == {} and h2.get("injectLate") == {"100": 1, "250": 3},
      f"{(h1 or {}).get('injectLate')}, {(h2 or {}).get('injectLate')}")
# The start: one output's first frames (0-1) often miss a refresh while the single pacing thread
# serves the other output's first frame (its first copy into a scanout buffer is slow under
# TCG). Printed, not judged, and left out of the exact expectations, which hold from frame 2 on.
START = 2
for n, fr in (("Virtual-1", f1), ("Virtual-2", f2)):
    sd = [(f["frame"], f["droppedRefreshes"], f.get("cause")) for f in fr if f["frame"] < START and f["droppedRefreshes"]]
    print(f"   late: {n}: drops in frames 0-1 (the start): {sd}")
start1 = [f for f in f1 if f["frame"] < START and f["droppedRefreshes"]]
start2 = [f for f in f2 if f["frame"] < START and f["droppedRefreshes"]]
# The start is the host's time (each output's first copy under TCG): printed above, not judged,
# and the summaries' render-late counts below allow exactly the start's own. On a quiet host it
# drops at most one refresh per output, scheduler-late; with two busy loops beside the VM on this
# 2-core host Virtual-2's start dropped 2 refreshes, and in another run Virtual-1's frame 0 was
# render-late (its first render held off the vCPU), which are the host's too.
start_rl1 = sum(1 for f in start1 if f.get("cause") == "render-late")
start_rl2 = sum(1 for f in start2 if f.get("cause") == "render-late")
after2 = {f["frame"]: (f["droppedRefreshes"], f.get("cause")) for f in f2 if f["frame"] >= START and f["droppedRefreshes"]}
after1 = {f["frame"]: (f["droppedRefreshes"], f.get("cause")) for f in f1 if f["frame"] >= START and f["droppedRefreshes"]}
# Exact: the injected drops (render-late) on Virtual-2, none on Virtual-1, and no Virtual-1 drop
# while Virtual-2's late frames were drawn (from the late frame's wake to one refresh after its
# flip). Other drops are the host holding the vCPU (scheduler-late, a few per run under TCG even
# without vblank-timer overruns): printed, each with its cause, not judged.
HOST = ("scheduler-late", "copy-late", "flip-late")
injected2 = {k: v for k, v in after2.items() if v[1] == "render-late"}
check("late: Virtual-2's render-late drops are exactly frame 100 (1 refresh) and frame 250 (3); its others the host's",
      injected2 == {100: (1, "render-late"), 250: (3, "render-late")} and all(v[1] in HOST for k, v in after2.items() if k not in injected2),
      str(after2))
by_frame2 = {f["frame"]: f for f in f2}
windows = [(by_frame2[k]["wakeNs"], by_frame2[k]["flipNs"] + 16_700_000) for k in (100, 250) if k in by_frame2]
spilled = {f["frame"]: (f["droppedRefreshes"], f.get("cause")) for f in f1 if f["frame"] >= START and f["droppedRefreshes"]
           and any(a <= f["flipNs"] <= b for a, b in windows)}
check("late: Virtual-1 drops nothing while Virtual-2's late frames are drawn, and nothing render-late",
      len(windows) == 2 and spilled == {} and all(v[1] in HOST for v in after1.values()),
      f"in the windows {spilled}; from frame 2 on {after1}")
print(f"   late: the host's drops from frame 2 on: Virtual-1 {after1}, Virtual-2 { {k: v for k, v in after2.items() if k not in injected2} }")
s2 = sum(f["droppedRefreshes"] for f in f2 if f["droppedRefreshes"])
e2 = sum(1 for f in f2 if f["droppedRefreshes"])
check(f"late: Virtual-2's summary: its log's drops, {2 + start_rl2} events render-late",
      v2.get("droppedRefreshes") == s2 and v2.get("dropEvents") == e2 and v2.get("causes", {}).get("render-late") == 2 + start_rl2,
      f"{v2.get('droppedRefreshes')} in {v2.get('dropEvents')} (log {s2} in {e2}), {v2.get('causes')}")
s1 = sum(f["droppedRefreshes"] for f in f1 if f["droppedRefreshes"])
e1 = sum(1 for f in f1 if f["droppedRefreshes"])
check(f"late: Virtual-1's summary: its log's drops, {start_rl1} events render-late (the start's)",
      v1.get("droppedRefreshes") == s1 and v1.get("dropEvents") == e1 and v1.get("causes", {}).get("render-late", 0) == start_rl1,
      f"{v1.get('droppedRefreshes')} in {v1.get('dropEvents')} (log {s1} in {e1}), {v1.get('causes')}")


# --- hotplug: Virtual-2 unplugged mid-run ----------------------------------------------------
print("-- run --connector all --duration 6, Virtual-2 forced off (+ change uevent) after the start")
doc = json_doc("unplug")
outs = {o.get("connector"): o for o in doc.get("outputs", [])}
v1, v2 = outs.get("Virtual-1", {}), outs.get("Virtual-2", {})
print(f"   unplug: Virtual-1 {v1.get('frames')} frames, end {v1.get('endReason')!r}; "
      f"Virtual-2 {v2.get('frames')} frames, end {v2.get('endReason')!r}; rc {rc('unplug')}")
check("unplug: exit 1 (an output was unplugged), a summary per output",
      rc("unplug") == 1 and list(outs) == NAMES, f"rc {rc('unplug')}, outputs {list(outs)}, stderr {text('unplug.err').strip()[:200]!r}")
check("unplug: Virtual-2 ends disconnected, Virtual-1 runs to its end (completed, ~6 s of frames)",
      str(v2.get("endReason", "")).startswith("disconnected") and v1.get("endReason") == "completed"
      and (v1.get("frames") or 0) > (v2.get("frames") or 0) and (v1.get("frames") or 0) >= 300,
      f"Virtual-1 {v1.get('endReason')!r} {v1.get('frames')} frames, Virtual-2 {v2.get('endReason')!r} {v2.get('frames')} frames")
h2, f2, e2, _ = log("unplug", "Virtual-2")
failed2 = [f.get("cause") for f in f2 if f.get("outcome") == "failed"]
check("unplug: Virtual-2's log ends with its end line; frames after the unplug fail with cause disconnected",
      e2 is not None and str(e2.get("summary", {}).get("endReason", "")).startswith("disconnected")
      and all(c == "disconnected" for c in failed2), f"end {e2 is not None}, failed causes {failed2[:5]}")
check("unplug: Virtual-2 connected again after `detect`", text("unplug_status_after.txt").strip() == "connected",
      text("unplug_status_after.txt").strip())

# --- validate ----------------------------------------------------------------------------
print("-- validate --connector all --duration 5 --refresh-tolerance 0.5")
attempts("validate_pass")
vo = text("validate_pass.out").splitlines()
for l in vo:
    if l.startswith(("output", "PASS", "FAIL", "validate:", "dropped")):
        print("   " + l)
check("validate: exit 0, PASS refresh-tolerance for each output, nothing on stderr",
      rc("validate_pass") == 0 and "PASS Virtual-1 refresh-tolerance" in "\n".join(vo) and "PASS Virtual-2 refresh-tolerance" in "\n".join(vo)
      and "validate: PASS (2 criteria)" in vo and text("validate_pass.err").strip() == "",
      f"rc {rc('validate_pass')}, stderr {text('validate_pass.err').strip()[:300]!r}")
check("validate: a summary per output", sum(1 for l in vo if re.match(r"output +Virtual-[12] +CRTC", l)) == 2)

print("-- validate --connector Virtual-1 --connector Virtual-2 --inject-late Virtual-2=100:3 --max-drop-event 2")
attempts("validate_fail")
vo = text("validate_fail.out").splitlines()
verdicts = [l.split(":")[0] for l in vo if l.startswith(("PASS ", "FAIL "))]
for l in vo:
    if l.startswith(("PASS", "FAIL", "validate:")):
        print("   " + l)
err = [l for l in text("validate_fail.err").splitlines() if l.strip()]
check("validate: exit 1 when Virtual-2 drops 3 refreshes at once against --max-drop-event 2",
      rc("validate_fail") == 1 and "validate: FAIL (1 of 4 criteria)" in vo, f"rc {rc('validate_fail')}")
check("validate: only Virtual-2's max-drop-event fails; Virtual-1 passes every criterion",
      verdicts == ["PASS Virtual-1 max-drop-event", "PASS Virtual-1 refresh-tolerance",
                   "FAIL Virtual-2 max-drop-event", "PASS Virtual-2 refresh-tolerance"], str(verdicts))
check("validate: one stderr line, the failed criterion", len(err) == 1 and err[0].startswith("FAIL Virtual-2 max-drop-event"), " / ".join(err))

print(f"-- vblank timer overruns in the guest over the whole boot: {text('overruns.txt').strip() or '?'}")
checks.finish()
