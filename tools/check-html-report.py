#!/usr/bin/env python3
"""Check the HTML report's zoom in headless Chromium (issue 24): a report of a generated log
(`cadence run --backend fake --frames 3000 --inject-late 100:2,2000:3`), opened at
`#zoom=1900-2100` with `chromium --headless --dump-dom`, must show the zoom applied (the script
set data-zoom-ready="1", #visible-range reads 1900-2100, of the drop markers at frames 100 and
2000 only 2000 is visible, and frame ticks were redrawn inside the range); without a fragment
the whole run shows with both markers; and `chromium --headless --screenshot` of it is a PNG
(Pillow) that is not blank. Then the same for the long-run picture (a 12,000-frame log is over
the per-frame limit): the bins and worst-event labels outside the zoom are hidden.

Usage: python3 tools/check-html-report.py PATH/TO/cadence
Prints one line per check and one result line; exits 1 on any failure, 0 when Chromium is
missing (says so)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

exe = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/cadence"
browser = next((b for b in ["chromium", "chromium-browser", "google-chrome"] if shutil.which(b)), None)
if browser is None:
    print("check-html-report: no chromium (apt-get install chromium); skipped")
    sys.exit(0)
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name} {detail}")


def chromium(*args):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout


def attr(dom, name):
    m = re.search(r'<div id="chart"[^>]*?\s' + name + r'="([^"]*)"', dom)
    return m.group(1) if m else None


with tempfile.TemporaryDirectory() as tmp:
    log = os.path.join(tmp, "run.jsonl")
    subprocess.run([exe, "run", "--backend", "fake", "--frames", "3000", "--inject-late", "100:2,2000:3", "--quiet", "--log", log],
                   check=True, capture_output=True)
    html = os.path.join(tmp, "run.html")
    subprocess.run([exe, "report", log, "--output", html], check=True, capture_output=True)
    url = "file://" + html
    dom = chromium("--dump-dom", url + "#zoom=1900-2100")
    check("zoom script ran (data-zoom-ready=1)", attr(dom, "data-zoom-ready") == "1", repr(attr(dom, "data-zoom-ready")))
    m = re.search(r'<span id="visible-range">([^<]*)</span>', dom)
    check("#zoom=1900-2100: visible range 1900-2100", m is not None and m.group(1) == "1900-2100", m.group(1) if m else "no span")
    check("#zoom=1900-2100: only the marker at frame 2000 visible", attr(dom, "data-visible-markers") == "2000", repr(attr(dom, "data-visible-markers")))
    hidden = re.findall(r'<circle class="drop [^"]*" data-frame="(\d+)"[^>]*visibility="hidden"', dom)
    check("#zoom=1900-2100: the marker at frame 100 hidden", hidden == ["100"], repr(hidden))
    ticks = [int(t) for t in re.findall(r'<text x="[0-9.]+" y="[0-9.]+" text-anchor="middle" fill="[^"]*">(\d+)</text>', dom.split('class="zoom-ticks"', 1)[-1])]
    check("#zoom=1900-2100: frame ticks redrawn inside the range", len(ticks) >= 3 and all(1900 <= t <= 2100 for t in ticks), repr(ticks[:12]))
    whole = chromium("--dump-dom", url)
    check("no fragment: the whole run, both markers", attr(whole, "data-visible-range") == "0-2999" and attr(whole, "data-visible-markers") == "100 2000",
          f"{attr(whole, 'data-visible-range')!r} {attr(whole, 'data-visible-markers')!r}")
    png = os.path.join(tmp, "shot.png")
    chromium(f"--screenshot={png}", "--window-size=1280,900", url + "#zoom=1900-2100")
    try:
        from PIL import Image
        im = Image.open(png).convert("RGB")
        colors = im.getcolors(maxcolors=1 << 24) or []
        check("screenshot: a 1280x900 PNG that is not blank", im.size == (1280, 900) and len(colors) > 20, f"{im.size} {len(colors)} colours")
    except ImportError:
        check("screenshot written (Pillow not installed: not decoded)", os.path.getsize(png) > 10000)
    except FileNotFoundError:
        check("screenshot written", False, "no file")

    # The long-run picture: over the per-frame limit.
    log2 = os.path.join(tmp, "long.jsonl")
    subprocess.run([exe, "run", "--backend", "fake", "--frames", "12000", "--inject-late", "1000:2,6000:4,11000:3", "--quiet", "--log", log2],
                   check=True, capture_output=True)
    html2 = os.path.join(tmp, "long.html")
    subprocess.run([exe, "report", log2, "--output", html2], check=True, capture_output=True)
    dom = chromium("--dump-dom", "file://" + html2 + "#zoom=5000-7000")
    check("long run: zoom ready, range 5000-7000", attr(dom, "data-zoom-ready") == "1" and attr(dom, "data-visible-range") == "5000-7000",
          repr(attr(dom, "data-visible-range")))
    check("long run: only the worst event at frame 6000 visible", attr(dom, "data-visible-markers") == "6000", repr(attr(dom, "data-visible-markers")))
    bins = re.findall(r'<rect class="bin" data-frame="(\d+)" data-frames="(\d+)"[^>]*data-visible="(\d)"', dom)
    wrong = [b for b in bins if (b[2] == "1") != (int(b[0]) + int(b[1]) > 5000 and int(b[0]) <= 7000)]
    check("long run: bins visible exactly inside the range", len(bins) >= 3 and not wrong, f"{len(bins)} bins, wrong {wrong[:3]}")

print(f"check-html-report: {passed} passed, {failed} failed ({browser})")
sys.exit(1 if failed else 0)
