#!/usr/bin/env python3
"""Check that `cadence render` writes PNGs a standard decoder (Pillow) reads with the right
size and pixels. Usage: python3 tools/bench/check_png.py PATH/TO/cadence
Prints one line per check and 'N passed, N failed'; exits 1 on any failure."""
import os
import subprocess
import sys
import tempfile

try:
    from PIL import Image
except ImportError:
    print("check_png: Pillow is not installed (pip install pillow); skipped")
    sys.exit(0)

exe = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/cadence"
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name} {detail}")


def render(tmp, scene, frame, w, h, *extra):
    path = os.path.join(tmp, f"{scene}-{frame}-{w}x{h}.png")
    subprocess.run([exe, "render", "--scene", scene, "--frame", str(frame), "--size", f"{w}x{h}", "--output", path, *extra],
                   check=True, capture_output=True)
    im = Image.open(path)
    im.load()
    return im


with tempfile.TemporaryDirectory() as tmp:
    scenes = subprocess.run([exe, "scenes"], check=True, capture_output=True, text=True).stdout.split()
    names = [s for s in ["flash", "counter", "bar", "ufo", "scroll", "gradient", "stress"] if s in scenes]
    check("scenes lists all seven", len(names) == 7, str(scenes[:3]))
    for s in names:
        im = render(tmp, s, 42, 643, 361)
        check(f"{s}: 643x361 RGB", im.size == (643, 361) and im.mode == "RGB", f"{im.size} {im.mode}")
    # Pixels: flash is uniform black on even frames and white on odd ones.
    for frame, want in [(0, (0, 0, 0)), (1, (255, 255, 255))]:
        im = render(tmp, "flash", frame, 64, 36)
        check(f"flash frame {frame} is uniform {want}", {c for _, c in im.getcolors(maxcolors=1 << 24)} == {want})
    # The counter's barcode decodes back to the frame index (cell centres, MSB first).
    w, h, frame = 1280, 720, 987654
    im = render(tmp, "counter", frame, w, h)
    cells = 36
    cw = w // (cells + 2)
    x0 = (w - cw * cells) // 2
    y = h * 3 // 4 + h // 16
    bits = [im.getpixel((x0 + c * cw + cw // 2, y))[0] > 128 for c in range(cells)]
    value = 0
    for b in bits[2:-2]:
        value = value << 1 | int(b)
    check("counter barcode decodes to the frame", bits[0] and not bits[1] and value == frame, f"{value}")
    # The bar's left edge is at frame * 8 px at 1920 wide.
    im = render(tmp, "bar", 100, 1920, 1080)
    row = [im.getpixel((x, 540)) for x in range(1920)]
    first = next((x for x, p in enumerate(row) if p == (255, 255, 255)), -1)
    check("bar at frame 100 starts at x=800", first == 800, f"{first}")
    # Bad input: one line on stderr, exit status 2, no file.
    r = subprocess.run([exe, "render", "--scene", "nope", "--output", os.path.join(tmp, "x.png")], capture_output=True, text=True)
    check("unknown scene: exit 2 with one line", r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
          and not os.path.exists(os.path.join(tmp, "x.png")), f"{r.returncode} {r.stderr!r}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
