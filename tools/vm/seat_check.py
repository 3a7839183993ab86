#!/usr/bin/env python3
"""Host-side checks of tools/vm/seat.sh: seat_check.py OUTDIR."""
import json, os, sys

from vmchecks import Checks

out = sys.argv[1]
checks = Checks(out, "seat")
check, text, rc = checks.check, checks.text, checks.rc


def lines(name):
    return [l for l in text(name).splitlines() if l.strip()]


def summary(name):
    ls = lines(name + ".out")
    try:
        return json.loads(ls[-1]) if ls else {}
    except ValueError:
        return {}


def plane(name):
    """(fb id, allocated by) of the primary plane in a debugfs snapshot."""
    fb = who = None
    for l in lines(name):
        l = l.strip()
        if l.startswith("fb="):
            fb = l[3:]
        elif l.startswith("allocated by ="):
            who = l.split("=", 1)[1].strip()
    return fb, who


# No seat daemon.
err = lines("noseat.err")
check("--session seat without seatd: exit 2, one stderr line naming the seat",
      rc("noseat") == 2 and len(err) == 1 and "no seat answered" in err[0] and "seatd" in err[0], err)
check("--session seat without seatd: nothing on stdout", text("noseat.out") == "")
err = lines("auto_direct.err")
check("--session auto without seatd: exit 0, one notice line (direct access)",
      rc("auto_direct") == 0 and len(err) == 1 and "session: direct access" in err[0], err)
check("--session auto without seatd: ran on kms", summary("auto_direct").get("backend") == "kms")

# seatd running.
err = lines("auto_seat.err")
check("--session auto with seatd: exit 0, one notice line (seat0 through seatd)",
      rc("auto_seat") == 0 and len(err) == 1 and "seat0 through seatd" in err[0], err)
check("--session auto with seatd: ran on kms", summary("auto_seat").get("backend") == "kms")
try:
    devices = json.loads(text("list_seat.out")).get("devices", [])
except ValueError:
    devices = []
check("list --session seat: exit 0, card0 listed", rc("list_seat") == 0 and len(devices) == 1, text("list_seat.err").strip())

m = summary("measure_seat")
check("measure --session seat: exit 0, flips measured", rc("measure_seat") == 0 and (m.get("flips") or 0) > 60,
      f"rc {rc('measure_seat')}, flips {m.get('flips')}, {text('measure_seat.err').strip()}")
check("validate --session seat: PASS, exit 0", rc("validate_seat") == 0 and "PASS" in text("validate_seat.out") + text("validate_seat.err"),
      (text("validate_seat.out") + text("validate_seat.err")).strip().splitlines()[-2:])

# The VT switch.
check("chvt 2 made VT 2 active, the run's exit made VT 1 active again",
      text("vt_away_active.txt").strip() == "tty2" and text("vt_after_active.txt").strip() == "tty1")
check("run through the VT switch: exit 0", rc("vt") == 0, text("vt.err").strip().splitlines()[-3:])
seatd = text("seatd.log")
check("seatd disabled the client and got the acknowledgement", "Disabling client" in seatd and "Disabled client" in seatd)
header, frames, sessions, end = None, [], [], None
for l in lines("vt.jsonl"):
    try:
        d = json.loads(l)
    except ValueError:
        continue
    kind = d.get("record")
    if kind == "run":
        header = d
    elif kind == "session":
        sessions.append(d)
    elif kind == "end":
        end = d
    elif "frame" in d:
        frames.append(d)
s = summary("vt")
events = [x.get("event") for x in sessions]
check("the log has a session paused then a resumed record", events == ["paused", "resumed"], events)
t = [float(x) for x in text("vt.t").split()] or [0, 0]
gap = s.get("sessionGapSeconds") or 0
switch = t[1] - t[0] if len(t) == 2 else 0
check("the summary has one session gap as long as the VT was away (±0.5 s)",
      s.get("sessionGaps") == 1 and abs(gap - switch) <= 0.5, f"gap {gap:.3f} s, chvt 2→1 {switch:.3f} s")
check("the end line has the same gap", (end or {}).get("summary", {}).get("sessionGaps") == 1)
if len(sessions) == 2:
    p, r = sessions[0]["timeNs"], sessions[1]["timeNs"]
    shown = [f for f in frames if f.get("outcome") in ("onTime", "on-time", "late") and f.get("flipNs", 0) > 0]
    inside = [f["frame"] for f in shown if p < f["flipNs"] < r]
    check("no frame shown inside the gap", not inside, inside[:5])
    before = [f for f in shown if f["flipNs"] <= p]
    after = [f for f in shown if f["flipNs"] >= r]
    check("frames shown before and after the gap", len(before) > 10 and len(after) > 10, f"{len(before)} before, {len(after)} after")
    if before and after:
        a, b = before[-1], after[0]
        refresh = header["refreshIntervalNs"] if header else 16_666_667
        crtcs = {f.get("crtc") for f in after}
        check("flips resume on the same CRTC", crtcs == {header.get("crtc") if header else None}, crtcs)
        expected = (b["flipNs"] - a["flipNs"]) / refresh
        delta = b["sequence"] - a["sequence"]
        check("kernel sequences kept counting through the gap (Δseq = Δt / refresh ±1)",
              abs(delta - expected) <= 1, f"Δseq {delta}, Δt/refresh {expected:.2f}")
        gap_refreshes = (r - p) / refresh
        check("no drops counted across the gap (first frame after it < 1/4 of the gap's refreshes)",
              b.get("droppedRefreshes", 0) < gap_refreshes / 4, f"{b.get('droppedRefreshes')} vs gap {gap_refreshes:.0f}")
        check("no interval spans the gap", all(f.get("intervalNs", 0) < (r - p) for f in after))
    paused = [f["frame"] for f in frames if f.get("cause") == "session-paused"]
    check("frames not shown at the pause (≤ 2) are marked session-paused", len(paused) <= 2, paused)
err = text("vt.err")
check("stderr says the session paused and resumed", "session paused" in err and "session resumed" in err)
fb_during, who_during = plane("vt_during.txt")
fb_back, who_back = plane("vt_back.txt")
fb_idle, who_idle = plane("crtc_idle.txt")
fb_after, who_after = plane("vt_after.txt")
check("cadence's framebuffer is on the plane again after the resume", who_back == "cadence", f"{fb_back} by {who_back}")
check("fbcon's framebuffer is back after the exit (same mode)",
      who_after == "[fbcon]" and fb_after == fb_idle and
      [l for l in lines("vt_after.txt") if "mode:" in l] == [l for l in lines("crtc_idle.txt") if "mode:" in l],
      f"{fb_after} by {who_after} (idle: {fb_idle} by {who_idle})")
# measure through the VT switch.
VKMS_HZ = 65000e3 / (1344 * 806)
m = summary("measure_vt")
err = lines("measure_vt.err")
print(f"   measure through a VT switch: rc {rc('measure_vt')}, {m.get('flips')} flips, measured {m.get('measuredRefreshHz')} Hz, "
      f"missed vblanks {m.get('missedVblanks')}, session gaps {m.get('sessionGaps')}, checks passed {m.get('checksPassed')}; stderr {err}")
check("measure through a VT switch: exit 0, VT 2 active meanwhile, one 'session paused' and one 'session resumed' line",
      rc("measure_vt") == 0 and text("measure_vt_away_active.txt").strip() == "tty2"
      and sum(1 for l in err if l.startswith("session paused")) == 1 and sum(1 for l in err if l.startswith("session resumed after")) == 1,
      f"rc {rc('measure_vt')}, {text('measure_vt_away_active.txt').strip()}, {err}")
check("measure through a VT switch: one session gap, its vblanks not missed (≤ 3 missed), the refresh 60.0038 Hz (±0.05%), every check passed",
      m.get("sessionGaps") == 1 and (m.get("missedVblanks") if m.get("missedVblanks") is not None else 99) <= 3
      and abs((m.get("measuredRefreshHz") or 0) - VKMS_HZ) < VKMS_HZ * 0.0005 and m.get("checksPassed") is True,
      f"gaps {m.get('sessionGaps')}, missed {m.get('missedVblanks')}, {m.get('measuredRefreshHz')} Hz, checks {m.get('checksPassed')}")
check("measure through a VT switch: about 5 s of flips, the gap made up (≥ 270 flips), and fbcon back afterwards",
      (m.get("flips") or 0) >= 270 and plane("measure_vt_after.txt")[1] == "[fbcon]",
      f"{m.get('flips')} flips, plane {plane('measure_vt_after.txt')}")

# The run ends while its VT is away.
s = summary("away_end")
check("a run ending while its VT is away: exit 0, completed, the open gap in its summary",
      rc("away_end") == 0 and s.get("endReason") == "completed" and s.get("sessionGaps") == 1
      and (s.get("sessionGapSeconds") or 0) > 0.5, f"rc {rc('away_end')}, {s.get('endReason')}, gaps {s.get('sessionGaps')} {s.get('sessionGapSeconds')}")
check("... and the console shows on VT 1 afterwards (fbcon's framebuffer, same mode)",
      plane("away_end_back.txt")[1] == "[fbcon]" and text("away_end_active.txt").strip() == "tty1"
      and [l for l in lines("away_end_back.txt") if "mode:" in l] == [l for l in lines("crtc_idle.txt") if "mode:" in l],
      f"{plane('away_end_back.txt')}, {text('away_end_active.txt').strip()}")
s = summary("away_int")
t = [float(x) for x in text("away_int.t").split()] or [0, 0]
took = t[1] - t[0] if len(t) == 2 else -1
end_line = [l for l in lines("away_int.jsonl") if '"record":"end"' in l]
check("SIGINT while the VT is away: exit 0 within 1 s, endReason stopped, the end line written",
      rc("away_int") == 0 and s.get("endReason") == "stopped" and 0 <= took < 1 and len(end_line) == 1,
      f"rc {rc('away_int')}, {s.get('endReason')}, {took:.2f} s, end lines {len(end_line)}")
check("... and the console shows on VT 1 afterwards", plane("away_int_back.txt")[1] == "[fbcon]", plane("away_int_back.txt"))
check("seatd never asserted (clients leaving, paused or not)", "Assertion" not in text("seatd.log"),
      [l for l in lines("seatd.log") if "Assertion" in l])

# A normal user through the seat.
err = lines("user_direct.err")
check("as nobody on a chmod 600 card, --session direct: exit 2, one line (permission)",
      rc("user_direct") == 2 and len(err) == 1 and "ermission" in err[0], err)
err = lines("user_seat.err")
check("as nobody, --session seat through seatd: exit 0 on kms, stderr empty",
      rc("user_seat") == 0 and summary("user_seat").get("backend") == "kms" and not err, err)
check("fbcon's framebuffer is back after nobody's run", plane("user_after.txt")[1] == "[fbcon]", plane("user_after.txt"))

# Least privilege (docs/privileges.md).
def one_line(name, *words):
    err = lines(name + ".err")
    return rc(name) == 2 and len(err) == 1 and all(w in err[0] for w in words) and text(name + ".out") == "", err


def lists_virtual1(name):
    try:
        devices = json.loads(text(name + ".out")).get("devices", [])
    except ValueError:
        return False
    return rc(name) == 0 and any(c.get("name") == "Virtual-1" for d in devices for c in d.get("connectors", []))


check("as nobody, no access to the card (0600): `list` is refused in one line (permission)",
      *one_line("priv_list_600", "ermission"))
check("as nobody, read-only access (0604): `list --json` works (O_RDONLY) and shows Virtual-1",
      lists_virtual1("priv_list_604"), lines("priv_list_604.err"))
check("as nobody, 0604: `edid --connector Virtual-1` opens the card and reads the connector (vkms: no EDID, exit 2)",
      *one_line("priv_edid_604", "no EDID"))
check("as nobody, 0604: `run --backend kms` is refused in one line (permission)", *one_line("priv_run_604", "ermission"))
check("as nobody, 0604: `measure` is refused in one line (permission)", *one_line("priv_measure_604", "ermission"))
check("as nobody: `observe` is refused in one line (tracefs needs root)", *one_line("priv_observe"))
if os.path.exists(os.path.join(out, "priv_list_acl.rc")):
    check("as nobody, 0600 plus an ACL u:nobody:r (as logind's uaccess): `list --json` works",
          lists_virtual1("priv_list_acl"), lines("priv_list_acl.err"))
    check("as nobody, 0600 plus the read ACL: `run --backend kms` is refused in one line (permission)",
          *one_line("priv_run_acl", "ermission"))
else:
    check("setfacl works on /dev/dri/card0 in the guest", False, text("priv_acl.err"))

s = summary("vt")
print(f"overruns during the VT run: {text('vt.overruns').strip()}; its summary: dropped {s.get('droppedRefreshes')} "
      f"in {s.get('dropEvents')} events, causes {s.get('causes')}, gap {s.get('sessionGapSeconds')} s")
checks.finish()
