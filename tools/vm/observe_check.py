#!/usr/bin/env python3
"""Host-side checks of tools/vm/observe.sh (exit 0 = pass, 1 = fail; prints why).

  observe_check.py app APP.jsonl OBSERVE.jsonl [N]   the same flips (sequences); observe's drops per
                                                   flip equal the app's own log's and the repeats
                                                   the kernel's sequences in that log show (see app());
                                                   with N, only the app's first N frames
  observe_check.py start APP.jsonl N                the app's frame 1 dropped at least N refreshes
  observe_check.py modetest OBSERVE.json MEASURE.json   0 drops, refresh within 0.01%
  observe_check.py metrics FILE.prom OBSERVE.json  metric values equal the summary
  observe_check.py names OBSERVE.json COMMAND [PID]  the client with the most flips is COMMAND
                                                   (and PID), named from debugfs, DRM master
"""
import json
import re
import sys


def lines(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def find(obj, key):
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            r = find(v, key)
            if r is not None:
                return r
    if isinstance(obj, list):
        for v in obj:
            r = find(v, key)
            if r is not None:
                return r
    return None


def app(app_log, obs_log, first_frames=None):
    frames = [r for r in lines(app_log) if "frame" in r and "record" not in r]
    if first_frames is not None:
        # Only the app's first FIRST_FRAMES frames: the start, where observe learns the cadence.
        frames = [r for r in frames if r["frame"] < int(first_frames)]
    shown = {r["sequence"]: r["droppedRefreshes"] for r in frames if r["outcome"] in ("on-time", "late")}
    flips = [r for r in lines(obs_log) if r.get("kind") == "observed" and r.get("client") == "cadence"]
    seen = {r["sequence"]: r["droppedRefreshes"] for r in flips}
    if not shown or not flips:
        print(f"app: {len(shown)} shown frames, observe: {len(flips)} cadence flips")
        return 1
    # Only the frames inside observe's window (the app may run on after it under load).
    last = max(r["sequence"] for r in flips)
    shown = {q: d for q, d in shown.items() if q <= last}
    lo, hi = min(shown), max(shown)
    inside = {s: d for s, d in seen.items() if lo <= s <= hi}
    missing = sorted(set(shown) - set(seen))
    extra = sorted(set(inside) - set(shown))
    # The app's first frame in observe's window is the one thing observe cannot judge: it has no
    # earlier flip of the app to measure an interval from, while the app judges it against its
    # own schedule. Its flip must still be seen (missing/extra above); its drops are not compared.
    first = lo
    # The kernel's truth for each flip of the 60-on-60 app: the refreshes between it and the app's
    # previous flip, less one, were repeats. Observe must equal that exactly.
    seqs = sorted(shown)
    truth = {b: b - a - 1 for a, b in zip(seqs, seqs[1:])}
    wrong = sorted(s for s in truth if s in seen and seen[s] != truth[s])
    # And the app's own accounting must agree frame by frame (it once aimed a frame a refresh
    # past the previous flip + 1 under load without charging the repeat: observe found it).
    differ = sorted(s for s in shown if s in seen and s != first and seen[s] != shown[s])
    app_drops = sorted((s, d) for s, d in shown.items() if d > 0 and s != first)
    obs_drops = sorted((s, d) for s, d in inside.items() if d > 0 and s != first)
    print(f"app: {len(shown)} shown frames, seq {lo}..{hi}, drops {app_drops} "
          f"(refreshes {sum(d for _, d in app_drops)}, events {len(app_drops)}; "
          f"first frame {first} not judged: app {shown[first]}, observe {seen.get(first)})")
    print(f"observe: {len(inside)} flips in that range, drops {obs_drops} "
          f"(refreshes {sum(d for _, d in obs_drops)}, events {len(obs_drops)})")
    if missing or extra or wrong or differ:
        print(f"missing {missing[:10]} extra {extra[:10]} "
              f"wrong {[(s, truth[s], seen[s]) for s in wrong[:10]]} (sequence, kernel, observe) "
              f"differ {[(s, shown[s], seen[s]) for s in differ[:10]]} (sequence, app, observe)")
        return 1
    print(f"observe equals the kernel's sequences on all {len(truth)} intervals and the app's log on all {len(shown)} frames")
    return 0


def start(app_log, n):
    frames = [r for r in lines(app_log) if r.get("frame") == 1 and "record" not in r]
    d = frames[0]["droppedRefreshes"] if frames else None
    print(f"app frame 1: dropped {d} refreshes (at least {n} injected)")
    return 0 if d is not None and d >= int(n) else 1


def modetest(obs_json, measure_json):
    obs = json.load(open(obs_json))
    m = find(json.load(open(measure_json)), "measuredRefreshHz")
    clients = [c for c in obs["clients"] if c["client"] == "modetest"]
    if not clients or m is None:
        print(f"no modetest client ({[c['client'] for c in obs['clients']]}) or no measured refresh ({m})")
        return 1
    c = clients[0]
    s = c["summary"]
    crtc = [x for x in obs["crtcs"] if x["crtc"] == c["crtc"]][0]
    rel = abs(crtc["refreshHz"] - m) / m
    print(f"modetest: {s['presented']} flips, dropped {s['droppedRefreshes']}, events {s['dropEvents']}; "
          f"refresh {crtc['refreshHz']:.6f} Hz vs measure {m:.6f} Hz ({rel * 100:.5f}%)")
    return 0 if s["presented"] > 100 and s["droppedRefreshes"] == 0 and s["dropEvents"] == 0 and rel <= 1e-4 else 1


def metrics(prom, obs_json):
    obs = json.load(open(obs_json))
    values = {}
    for line in open(prom):
        m = re.match(r'^([a-z_]+)\{([^}]*)\} (\S+)$', line.strip())
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            values.setdefault(m.group(1), []).append((labels, float(m.group(3))))

    def value(name, client, **extra):
        for labels, v in values.get(name, []):
            if labels.get("client") == client and all(labels.get(k) == x for k, x in extra.items()):
                return v
        return None
    bad = 0
    for c in obs["clients"]:
        s, who = c["summary"], c["client"]
        want = {
            "cadence_flips_observed_total": s["frames"],
            "cadence_frames_presented_total": s["presented"],
            "cadence_dropped_refreshes_total": s["droppedRefreshes"],
            "cadence_frame_interval_refreshes_count": sum(s["intervalRefreshes"].values()),
        }
        for name, w in want.items():
            got = value(name, who)
            if got is None and w == 0:
                continue
            ok = got is not None and got == w
            bad += not ok
            print(f"{'ok  ' if ok else 'BAD '}{name}{{client={who}}} = {got}, summary {w}")
        got = value("cadence_refresh_hz", who)
        ok = got is not None and abs(got - s["refreshHz"]) <= 1e-5 * s["refreshHz"]
        bad += not ok
        print(f"{'ok  ' if ok else 'BAD '}cadence_refresh_hz{{client={who}}} = {got}, summary {s['refreshHz']}")
    return 1 if bad or not obs["clients"] else 0


def names(obs_json, command, pid=None):
    obs = json.load(open(obs_json))
    clients = [c for c in obs["clients"] if c["file"] != "0"]
    if not clients:
        print(f"no client flipped ({[c['client'] for c in obs['clients']]})")
        return 1
    c = max(clients, key=lambda c: c["summary"]["presented"])
    print(f"most flips: {c['client']} pid {c.get('pid')} nameSource {c.get('nameSource')} master {c.get('master')} "
          f"({c['summary']['presented']} flips); want {command} pid {pid or 'any'}")
    ok = c["client"] == command and c.get("nameSource") == "debugfs" and c.get("master") is True
    if pid is not None:
        ok = ok and str(c.get("pid")) == str(pid)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit({"app": app, "start": start, "modetest": modetest, "metrics": metrics, "names": names}[sys.argv[1]](*sys.argv[2:]))
