#!/usr/bin/env python3
"""Checks that nothing of the old, long README was lost when it moved to docs/ (issue 22).

    tools/check-docs-moved.py [--rev REV | --old FILE]

Reads the old README (default: README.md at REV 0b26671, the last commit with the 1,220-line
README; `--old FILE` reads a file instead) and cuts it into units: every paragraph, every list
item, every table row and every line of a fenced code block. Headings are not units: they are
navigation, and the pages in docs/ are titled for themselves. Each unit must occur in the new
README.md or in a docs/*.md page:
  - code lines verbatim (leading and trailing blanks aside);
  - paragraphs, list items and table rows after normalizing both sides the same way: runs of
    white space become one space, link targets go (`[text](target)` reads as `text`, so a link
    whose target changed with the move still matches) and so do double quotes (`see "Sessions"`
    became the link `see [Sessions](sessions.md)`).
The few sentences reworded on purpose (a "see above" that now points at another page) are listed
in REWORDED, old and new; the check applies them to the old text and says how many it used.
Units whose content was updated on purpose later (new figures, a new log version) are in UPDATED:
the old unit's start, which the page holding the new text must still contain.
Two sections were rewritten rather than moved, as the issue asks: the layout table (now every
target and folder) and "Using Cadence as a library" (now every library and its catalog). Their
old units are checked by what they name: every `code span` in them must occur in the new
README.md.
Prints the counts and every unit not found; exits 1 when one is missing.
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (old normalized text, new normalized text): references that pointed within the one README.
# Units whose content changed on purpose after the move (new numbers, a new log version): the
# old unit's start, and the page that holds the updated text (which must still start the same).
UPDATED = [
    ("- Soaks: `tools/soak-fake.sh` (fake display, virtual time)", "docs/testing.md"),  # issue 24's one-pass report
    ("Fake-display logs replay exactly (tested:", "docs/replay.md"),  # log version 2: late vblank receipts
    ("`--log` writes JSON lines. Line 1 is the header", "docs/log-format.md"),  # log version 2
    ("`cadence observe` measures the cadence of whatever program drives the display", "docs/observe.md"),
]

REWORDED = [
    ("as DRM master, see above", "as DRM master, see display-setup.md"),
    ("the run log (below)", "the run log (log-format.md)"),
    ("playing a profile (below)", "playing a profile (fake-drm.md)"),
    ("(see Prometheus metrics below)", "(see Prometheus metrics)"),
    ("on the node, as above (root", "on the node, as in display-setup.md (root"),
    ("(see VRR on KMS below)", "(see VRR on KMS)"),
]
# Sections of the old README rewritten in the new one (see above).
REWRITTEN = {"Layout", "Using Cadence as a library"}


def normalize(text):
    text = re.sub(r"\]\([^)\s]*\)", "]", text)  # [text](target) -> [text]
    text = text.replace("[", "").replace("]", "").replace('"', "")
    return re.sub(r"\s+", " ", text).strip()


def units(markdown):
    """(kind, text, section) for every paragraph, list item, table row and code line."""
    out = []
    para = []
    section = ""

    def flush():
        if para:
            kind = "list item" if para[0].startswith("- ") else "paragraph"
            out.append((kind, " ".join(para), section))
            para.clear()

    in_code = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code:
            if line.strip():
                out.append(("code line", line.strip(), section))
            continue
        if not line.strip():
            flush()
        elif line.startswith("#"):
            flush()
            section = line.lstrip("#").strip()
        elif line.lstrip().startswith("|"):
            flush()
            if not re.fullmatch(r"\s*\|[-|\s:]*\|\s*", line):
                out.append(("table row", line.strip(), section))
        elif re.match(r"\s*- ", line) and not (para and line.startswith("  ")):
            flush()
            para.append(line.strip())
        else:
            para.append(line.strip())
    flush()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rev", default="0b26671", help="git revision whose README.md is the old one")
    ap.add_argument("--old", help="read the old README from this file instead")
    args = ap.parse_args()
    if args.old:
        old = pathlib.Path(args.old).read_text()
        source = args.old
    else:
        old = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.rev}:README.md"],
                             check=True, capture_output=True, text=True).stdout
        source = f"README.md at {args.rev}"
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    raw = "\n".join(p.read_text() for p in pages)
    code_lines = {line.strip() for line in raw.split("\n")}
    readme = (ROOT / "README.md").read_text()
    corpus = normalize(raw)

    counts = {}
    missing = []
    reworded = 0
    updated = 0
    rewritten = 0
    for kind, text, section in units(old):
        counts[kind] = counts.get(kind, 0) + 1
        if section in REWRITTEN:
            rewritten += 1
            lost = [s for s in re.findall(r"`[^`]+`", text) if s not in readme]
            if lost:
                missing.append((kind, f"{text} (rewritten in README.md, which lacks {', '.join(lost)})"))
            continue
        if kind == "code line":
            if text not in code_lines:
                missing.append((kind, text))
            continue
        n = normalize(text)
        if n in corpus:
            continue
        for a, b in REWORDED:
            if a in n:
                n = n.replace(a, b)
        if n in corpus:
            reworded += 1
        elif any(text.startswith(a) and a in (ROOT / page).read_text() for a, page in UPDATED):
            updated += 1
        else:
            missing.append((kind, text))
    total = sum(counts.values())
    where = f"README.md and {len(pages) - 1} pages of docs/"
    print(f"{source}: {old.count(chr(10))} lines, {total} units "
          f"({', '.join(f'{v} {k}s' for k, v in sorted(counts.items()))})")
    print(f"found in {where}: {total - len(missing)} ({reworded} after a listed rewording, {updated} updated since (UPDATED), "
          f"{rewritten} of the rewritten layout and library sections by the names they give); "
          f"missing: {len(missing)}")
    for kind, text in missing:
        print(f"MISSING {kind}: {text[:200]}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
