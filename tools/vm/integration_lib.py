"""What integration_check.py and integration_edges.py share (stdlib only): the drivers' DRM
names, the measure contract's keys, the trap markers, PASS/FAIL counting and reading a
guest case's <case>.out/.err/.rc/.time."""

import json
import os

DRM_NAMES = {"vkms": "vkms", "bochs": "bochs-drm", "virtio": "virtio_gpu"}
VKMS_1024x768_HZ = 65000e3 / (1344 * 806)  # 60.00384 Hz: vkms' preferred mode
MEASURE_KEYS = ["driver", "connector", "mode", "nominalRefreshHz", "measuredRefreshHz",
                "vblank", "flips", "missedVblanks", "intervalMs"]
INTERVAL_KEYS = ["mean", "stddev", "min", "p50", "p99", "max"]
TRAP_MARKERS = ["Fatal error", "Stack dump", "Backtrace", "Current stack trace",
                "Illegal instruction", "Trace/breakpoint trap", "Segmentation fault",
                "Aborted", "Swift runtime failure"]

class Counts:
    passed = 0
    failed = 0


def result(name, ok, detail="", info=False):
    """Records one check; detail explains a failure (and is shown on a pass if info)."""
    if ok:
        Counts.passed += 1
        print("PASS %s%s" % (name, (": " + detail) if detail and info else ""))
    else:
        Counts.failed += 1
        print("FAIL %s: %s" % (name, detail))
    return ok


class Case:
    def __init__(self, root, name):
        self.name = name
        self.present = os.path.exists(os.path.join(root, name + ".rc"))

        def read(ext):
            try:
                with open(os.path.join(root, name + ext), "rb") as f:
                    return f.read().decode(errors="replace")
            except OSError:
                return ""
        self.out = read(".out")
        self.err = read(".err")
        try:
            self.rc = int(read(".rc").strip())
        except ValueError:
            self.rc = None
        t = read(".time").split()
        self.seconds = float(t[1]) - float(t[0]) if len(t) == 2 else None

    def brief(self):
        err = self.err.strip().splitlines()
        return "rc=%s stderr=%r" % (self.rc, err[-3:] if err else "")


def parse_json(label, case):
    try:
        return json.loads(case.out)
    except ValueError as e:
        result(label, False, "stdout is not one JSON document (%s): %r" % (e, case.out[:300]))
        return None


def walk(node):
    """Yields every dict inside a JSON value."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def numbers_named(node, words):
    """Numeric values anywhere below node whose key contains one of words (lowercase)."""
    found = []
    for d in walk(node):
        for k, v in d.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and any(w in k.lower() for w in words):
                found.append(v)
    return found
