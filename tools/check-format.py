#!/usr/bin/env python3
"""swift-format lint that fails on new violations only.

    tools/check-format.py            lint, compare with tools/format-baseline.txt (exit 1: new ones)
    tools/check-format.py --update   write the baseline from the current tree

.swift-format is swift-format's default configuration changed where the code's own style differs:
4 spaces, 120 columns, no indentation inside #if, no trailing comma required in multi-line
collections, function output kept together, and three rules off that the code breaks on purpose
(DoNotUseSemicolons: `self.a = a; self.b = b` on one line; OneVariableDeclarationPerLine:
`let frames, presented: Counter`; GroupNumericLiterals: hex grouped by bytes, `0xFF_FFFF`).
What it cannot express (arguments aligned under an opening parenthesis, one-line bodies such as
`if count <= 0 { return }`, aligned end-of-line comments) stays as counted violations.
The code was written before the project had this configuration, so it is not reformatted; instead
tools/format-baseline.txt holds each Swift file's violation count as it was. A file whose count
grows, or a file not in the baseline with any violation, fails the check with its lint lines. A
file whose count went down only gets a note: run --update to lower the baseline with it (and
commit the baseline with the change). `swift format` is the toolchain's (swift-format ships with
Swift 6); one lint of every file with --parallel takes seconds.
"""
import collections
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tools" / "format-baseline.txt"
DIRS = ["Sources", "shaders-cpu", "Tests", "Examples", "Benchmarks", "tools"]
HEADER = """\
# swift-format violations per file when .swift-format was introduced (tools/check-format.py).
# A file may only go down; new files start at 0. Regenerate: tools/check-format.py --update
"""


def swift_files():
    files = []
    for d in DIRS:
        for p in sorted((ROOT / d).rglob("*.swift")):
            rel = p.relative_to(ROOT)
            if any(part.startswith(".") for part in rel.parts):  # .build*, .swiftpm
                continue
            files.append(str(rel))
    return files


def lint(files):
    """Violation lines per file, and the errors (a file swift-format could not parse)."""
    proc = subprocess.run(
        ["swift", "format", "lint", "--parallel", "--configuration", ".swift-format", *files],
        cwd=ROOT, capture_output=True, text=True)
    per_file = collections.defaultdict(list)
    errors = []
    for line in (proc.stdout + proc.stderr).splitlines():
        m = re.match(r"(.+?):\d+:\d+: (warning|error|note): ", line)
        if not m:
            if line.strip():
                errors.append(line)
            continue
        path = m.group(1)
        if path.startswith(str(ROOT) + "/"):
            path = path[len(str(ROOT)) + 1:]
        if m.group(2) == "note":  # the fix a warning suggests, on the line after it
            continue
        if m.group(2) == "error":
            errors.append(line)
        else:
            per_file[path].append(line)
    return per_file, errors


def read_baseline():
    counts = {}
    for line in BASELINE.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        n, path = line.split(None, 1)
        counts[path] = int(n)
    return counts


def main():
    update = sys.argv[1:] == ["--update"]
    if sys.argv[1:] and not update:
        print(__doc__)
        return 2
    files = swift_files()
    per_file, errors = lint(files)
    if errors:
        print("\n".join(errors[:40]))
        print("swift-format: could not lint (lines above)")
        return 1
    counts = {f: len(per_file.get(f, [])) for f in files}
    total = sum(counts.values())
    if update:
        body = "".join(f"{n} {f}\n" for f, n in sorted(counts.items()) if n > 0)
        BASELINE.write_text(HEADER + body)
        print(f"swift-format: baseline written: {total} violations in "
              f"{sum(1 for n in counts.values() if n)} of {len(files)} files")
        return 0
    baseline = read_baseline()
    worse = [(f, baseline.get(f, 0), n) for f, n in sorted(counts.items()) if n > baseline.get(f, 0)]
    better = [(f, baseline[f], counts.get(f, 0)) for f in sorted(baseline) if counts.get(f, 0) < baseline[f]]
    for f, was, now in worse:
        print(f"{f}: {now} swift-format violations, baseline {was}" + ("" if f in baseline else " (a new file)"))
        for line in per_file[f][:60]:
            print("  " + line)
    if better:
        print(f"swift-format: {len(better)} file(s) below the baseline (tools/check-format.py --update lowers it): "
              + ", ".join(f"{f} {was}→{now}" for f, was, now in better[:5]) + (" …" if len(better) > 5 else ""))
    if worse:
        print(f"swift-format: {len(worse)} file(s) with new violations: fix the lines listed (the rules are "
              ".swift-format's), or lower the count elsewhere in the same file")
        return 1
    print(f"swift-format: {len(files)} files, {total} violations, none new (baseline {sum(baseline.values())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
