#!/usr/bin/env python3
"""replay_start_only.py RECORDED.jsonl REPLAYED.jsonl: exit 0 when the replayed frames differ
from the recorded ones only in the first two frames (target, sequence, drops, cause) and every
later frame is identical in those fields; exit 1 otherwise. Used by validate.sh to tell the
known start-reconstruction limitation of `cadence replay` from a real replay difference."""
import json
import sys

FIELDS = ("sequence", "droppedRefreshes", "lateRefreshes", "outcome", "cause")


def frames(path):
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "frame" in r and "outcome" in r and "record" not in r:
                out[r["frame"]] = r
    return out


a, b = frames(sys.argv[1]), frames(sys.argv[2])
if not a or set(a) != set(b):
    sys.exit(1)
first = sorted(a)[:2]
differ = [k for k in sorted(a) if any(a[k].get(f) != b[k].get(f) for f in FIELDS)
          or a[k]["intent"].get("targetSequence") != b[k]["intent"].get("targetSequence")]
print(f"frames differing: {differ[:10]}")
sys.exit(0 if differ and all(k in first for k in differ) else 1)
