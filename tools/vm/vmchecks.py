"""What the host-side VM check scripts share: PASS/FAIL lines with a prefix, counts, and
reading a guest's NAME.out/.err/.rc/.attempts files and run logs from the output directory."""
import json
import os
import re
import sys


class Checks:
    def __init__(self, out, prefix):
        self.out, self.prefix = out, prefix
        self.passed = self.failed = 0

    def check(self, name, ok, detail=""):
        print(("PASS " if ok else "FAIL ") + f"{self.prefix}: {name}" + (f"  ({detail})" if detail != "" else ""))
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def text(self, name):
        try:
            return open(os.path.join(self.out, name), errors="replace").read()
        except OSError:
            return ""

    def rc(self, name):
        try:
            return int(self.text(name + ".rc"))
        except ValueError:
            return None

    def attempts(self, name):
        """Prints NAME's attempts (NAME.attempts: one line per attempt, with the guest's
        vblank-timer overruns during it); returns the last one's overrun count."""
        lines = [l for l in self.text(name + ".attempts").splitlines() if l.strip()]
        for l in lines:
            print(f"   {name}: {l}")
        m = re.search(r"timerOverruns=(\d+)", lines[-1]) if lines else None
        return int(m.group(1)) if m else 0

    def read_log(self, path):
        """Header, frame lines, end line and unparsable line count of the run log at PATH (in
        the output directory; None/[] when missing)."""
        header = end = None
        frames, bad = [], 0
        for line in self.text(path).splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                bad += 1
                continue
            kind = r.get("record")
            if kind == "run":
                header = r
            elif kind == "end":
                end = r
            elif kind is None:
                frames.append(r)
        return header, frames, end, bad

    def json_doc(self, name):
        """The JSON object on NAME.out's last line ({} when there is none)."""
        try:
            return json.loads(self.text(name + ".out").strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {}

    def finish(self):
        """Prints the counts and exits 1 on any failure."""
        print(f"{self.prefix}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)


def fbcon_planes(state):
    """The planes showing fbcon's framebuffer in a debugfs state dump."""
    planes, cur = [], None
    for line in state.splitlines():
        if line.startswith("plane["):
            cur = line.split()[0]
        elif "allocated by = [fbcon]" in line and cur:
            planes.append(cur)
    return planes
