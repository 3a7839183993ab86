#!/usr/bin/env python3
"""Host-side check of `cadence run --metrics-port 9464 --metrics-textfile` on vkms
(tools/vm/integration.sh): the run exited 0; a /metrics scrape taken inside the guest mid-run
and the final textfile pass `promtool check metrics` (when promtool is installed); the scrape
counted frames, no more than the run's; the textfile's counters equal the run's JSON summary
(frames, presented, dropped refreshes, drop events; by cause when the summary's causes, which
count frames, add up to the drop events).

Usage: metrics_check.py OUT_DIR   (the vkms case directory). Prints PASS/FAIL lines and
`N passed, N failed`; exit 1 on any failure."""
import json
import os
import shutil
import subprocess
import sys

CAUSES = ["render-late", "copy-late", "scheduler-late", "flip-late", "busy", "device-lost"]


def samples(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def main():
    out = sys.argv[1]
    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} metrics: {name}{': ' + detail if detail and not ok else ''}")

    def read(name):
        path = os.path.join(out, name)
        return open(path).read() if os.path.exists(path) else ""

    rc = read("run_metrics.rc").strip()
    check("run exit 0", rc == "0", f"rc {rc}, stderr {read('run_metrics.err')[-300:]!r}")
    try:
        summary = json.loads(read("run_metrics.out"))
    except ValueError:
        check("run summary is JSON", False, read("run_metrics.out")[-300:])
        return finish(results)
    scrape, textfile = read("run_scrape.txt"), read("run_metrics.prom")
    promtool = shutil.which("promtool")
    for name, text in (("scrape", scrape), ("textfile", textfile)):
        if not text:
            check(f"{name} written", False, "empty or missing")
            continue
        if promtool:
            p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
            check(f"promtool check metrics ({name})", p.returncode == 0, p.stdout + p.stderr)
    labels = 'connector="Virtual-1",crtc="0"'
    s, m = samples(scrape), samples(textfile)
    key = lambda n: f"cadence_{n}{{{labels}}}"
    mid = s.get(key("frames_presented_total"), 0)
    check("mid-run scrape counted frames, no more than the run", 0 < mid <= summary["presented"],
          f"scrape {mid}, summary {summary['presented']}")
    for metric, field in (("frames_total", "frames"), ("frames_presented_total", "presented"),
                          ("dropped_refreshes_total", "droppedRefreshes")):
        check(f"textfile {metric} = summary {field}", m.get(key(metric)) == summary[field],
              f"{m.get(key(metric))} vs {summary[field]}")
    events = {c: m.get(f'cadence_drop_events_total{{{labels},cause="{c}"}}') for c in CAUSES}
    check("textfile has every cause", all(v is not None for v in events.values()), str(events))
    total = sum(v or 0 for v in events.values())
    check("textfile drop events = summary dropEvents", total == summary["dropEvents"], f"{total} vs {summary['dropEvents']}")
    # The summary's causes count frames (a late frame after no stale refresh has one too): they
    # are the drop events by cause when they add up to the drop events.
    if sum(summary["causes"].values()) == summary["dropEvents"]:
        by_cause = {c: int(v) for c, v in events.items() if v}
        check("textfile drop events by cause = summary causes", by_cause == summary["causes"], f"{by_cause} vs {summary['causes']}")
    print(f"metrics: summary frames {summary['frames']} presented {summary['presented']} dropped {summary['droppedRefreshes']} "
          f"in {summary['dropEvents']} events {summary['causes']}; mid-run scrape presented {int(mid)}")
    return finish(results)


def finish(results):
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
