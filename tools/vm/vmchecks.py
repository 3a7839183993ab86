"""What the host-side VM check scripts share: PASS/FAIL lines with a prefix, counts, and
reading a guest's NAME.out/.err/.rc files from the output directory."""
import os
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

    def finish(self):
        """Prints the counts and exits 1 on any failure."""
        print(f"{self.prefix}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
