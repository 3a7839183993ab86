#!/usr/bin/env python3
"""Host-side checks of tools/vm/hotplug.sh's guest outputs. Usage: hotplug_check.py OUTDIR"""
import json, os, sys

from vmchecks import Checks

out = sys.argv[1]
checks = Checks(out, "hotplug")
check, text, rc = checks.check, checks.text, checks.rc


def jsonl(name):
    rows, bad = [], 0
    for line in text(name).splitlines():
        try: rows.append(json.loads(line))
        except ValueError: bad += 1
    return rows, bad


print(f"-- udevd in the guest: {'yes' if 'No such file' not in text('udevd.txt') else 'no (kernel netlink source)'}")

# list --watch
rows, bad = jsonl("watch.out")
print("-- watch: " + " | ".join(f"{r.get('connector')} {r.get('old')}->{r.get('new')} {r.get('mode')}" for r in rows))
check("watch: exit 0 on SIGINT, nothing on stderr", rc("watch") == 0 and text("watch.err") == "", f"rc {rc('watch')}, stderr {text('watch.err')!r}")
check("watch: every line is JSON", bad == 0 and len(rows) >= 1, f"{bad} bad of {len(rows) + bad}")
check("watch: the initial line (Virtual-1 connected, old null)",
      bool(rows) and rows[0].get("connector") == "Virtual-1" and rows[0].get("old") is None and rows[0].get("new") == "connected")
changes = [(r.get("connector"), r.get("old"), r.get("new"), r.get("mode")) for r in rows[1:]]
check("watch: Virtual-1 connected→disconnected, then disconnected→connected with its mode",
      changes == [("Virtual-1", "connected", "disconnected", None), ("Virtual-1", "disconnected", "connected", "1024x768@60.0038")],
      str(changes))
check("watch: lines carry time and monotonicNs", all("time" in r and r.get("monotonicNs", 0) > 0 for r in rows))

# run unplugged
t = [float(x) for x in text("unplug.t").split()]
log, bad = jsonl("unplug.jsonl")
end = [r for r in log if r.get("record") == "end"]
frames = [r for r in log if "frame" in r and "record" not in r]
reason = end[0]["summary"].get("endReason", "") if end else ""
err = [l for l in text("unplug.err").splitlines() if l]
if len(t) == 4:
    print(f"-- unplug: status write {t[1] - t[0]:.3f} s, uevent write {t[2] - t[1]:.3f} s, "
          f"run ended {t[3] - t[1]:.3f} s after the status write ({t[3] - t[2]:.3f} s after the uevent); rc {rc('unplug')}")
check("unplug: exit 1", rc("unplug") == 1, f"rc {rc('unplug')}")
check("unplug: ended within 1 s of `echo off > status`", len(t) == 4 and t[3] - t[1] <= 1.0, str(t))
check("unplug: the log's end line says disconnected: connector Virtual-1 disconnected",
      reason == "disconnected: connector Virtual-1 disconnected" and bad == 0, reason)
try:
    summary = json.loads(text("unplug.out"))
except ValueError:
    summary = {}
check("unplug: summary endReason disconnected", summary.get("endReason", "").startswith("disconnected"), summary.get("endReason"))
failed_frames = [f for f in frames if f.get("outcome") == "failed"]
check("unplug: frames not shown are failed with cause disconnected (none device-lost)",
      all(f.get("cause") == "disconnected" for f in failed_frames) and "device-lost" not in summary.get("causes", {}),
      f"{len(failed_frames)} failed: {[f.get('cause') for f in failed_frames]}")
check("unplug: one stderr line naming the unplug", len(err) == 1 and "unplugged" in err[0], " / ".join(err))
check("unplug: the run showed frames before the unplug", summary.get("presented", 0) > 0, f"{summary.get('presented')} presented")
check("unplug: the console (fbcon's framebuffer) back on the plane after the run", "allocated by = [fbcon]" in text("unplug_after.txt"))
check("unplug: status back to connected after `detect`", text("status_after.txt").strip() == "connected")

# a change uevent without a status change
try:
    still = json.loads(text("still.out"))
except ValueError:
    still = {}
check("change uevent, still connected: the run completes (exit 0)",
      rc("still") == 0 and still.get("endReason") == "completed" and still.get("failed", 1) == 0,
      f"rc {rc('still')}, {still.get('endReason')}")

# validate
verr = [l for l in text("validate.err").splitlines() if l]
check("validate: exit 1 with FAIL output: the output was unplugged mid-run",
      rc("validate") == 1 and any(l.startswith("FAIL output: the output was unplugged mid-run (disconnected") for l in verr),
      f"rc {rc('validate')}: " + " / ".join(verr))

checks.finish()
