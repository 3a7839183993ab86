#!/usr/bin/env python3
"""Run Cadence's rasterizer workloads with Blend2D, Skia and cairo and print the ratios.

The workloads are those of `cadence bench` (see shaders-cpu/Workloads.swift), generated
from the same xorshift32 stream seeded 0x12345678, values taken in the same order:
  fill      clear the frame to an opaque colour
  rects     1000 rects: x=r()%W, y=r()%H, w=20+r()%181, h=20+r()%181, colour r()&0xFFFFFF at 50% alpha
  circles   500 AA circles: cx=r()%W, cy=r()%H, radius=10+r()%51, colour at 50% alpha
  gradient  full-frame opaque linear gradient (0,0) red -> (W,H) blue
  blit      opaque WxH image at (frame*7 % W, 0) with wrap-around (two clipped blits)
Python calls each library once per shape; the per-call cost is measured separately by
drawing the same number of shapes entirely off-canvas ("call overhead") and reported so the
library's own time can be read as (time - overhead).

Usage: python3 tools/bench/peers.py [--cadence PATH] [--sizes 1920x1080,3840x2160]
                                    [--frames N] [--libs blend2d,skia,cairo]
Needs: pip install blend2d-python skia-python pycairo numpy (pycairo needs libcairo2-dev).
Peers run on one thread: none of these Python bindings exposes a multi-threaded context,
so the all-cores column is Cadence's alone.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

WORKLOADS = ["fill", "rects", "circles", "gradient", "blit"]


def xorshift32():
    x = 0x12345678
    while True:
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        yield x


def shapes(workload, w, h):
    r = xorshift32()
    nxt = lambda: next(r)
    out = []
    if workload == "rects":
        for _ in range(1000):
            x = nxt() % w; y = nxt() % h
            rw = 20 + nxt() % 181; rh = 20 + nxt() % 181
            out.append((x, y, rw, rh, nxt() & 0xFFFFFF))
    elif workload == "circles":
        for _ in range(500):
            cx = nxt() % w; cy = nxt() % h
            rad = 10 + nxt() % 51
            out.append((cx, cy, rad, nxt() & 0xFFFFFF))
    return out


def rgbf(c):
    return ((c >> 16) & 255) / 255.0, ((c >> 8) & 255) / 255.0, (c & 255) / 255.0


def timeit(fn, frames, warmup=3):
    for i in range(warmup):
        fn(i)
    ts = []
    for i in range(frames):
        t0 = time.perf_counter()
        fn(warmup + i)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3, min(ts) * 1e3


# ---------------------------------------------------------------- Blend2D
def blend2d_runner(workload, w, h, offscreen=False):
    import blend2d as b
    img = b.BLImage(w, h, b.BLFormat.XRGB32)
    ctx = b.BLContext(img)
    ctx.comp_op = b.BLCompOp.SRC_COPY
    ctx.set_fill_style((0.0, 0.0, 0.0, 1.0))
    ctx.fill_all()
    ctx.flush()
    off = -100000 if offscreen else 0
    if workload == "fill":
        def run(i):
            ctx.comp_op = b.BLCompOp.SRC_COPY
            ctx.set_fill_style((0.2, 0.4, 0.6, 1.0))
            ctx.fill_all()
            ctx.flush()
        return run
    if workload == "rects":
        items = [(b.BLRect(x + off, y, rw, rh), rgbf(c) + (0.5,)) for (x, y, rw, rh, c) in shapes("rects", w, h)]
        def run(i):
            ctx.comp_op = b.BLCompOp.SRC_OVER
            for rect, col in items:
                ctx.set_fill_style(col)
                ctx.fill_rect(rect)
            ctx.flush()
        return run
    if workload == "circles":
        items = [(cx + off, cy, rad, rgbf(c) + (0.5,)) for (cx, cy, rad, c) in shapes("circles", w, h)]
        def run(i):
            ctx.comp_op = b.BLCompOp.SRC_OVER
            for cx, cy, rad, col in items:
                ctx.set_fill_style(col)
                ctx.fill_circle(cx, cy, rad)
            ctx.flush()
        return run
    if workload == "gradient":
        g = b.create_linear_gradient(0, 0, w, h)
        g.add_stop(0.0, (1.0, 0.0, 0.0, 1.0))
        g.add_stop(1.0, (0.0, 0.0, 1.0, 1.0))
        def run(i):
            ctx.comp_op = b.BLCompOp.SRC_COPY
            ctx.set_fill_style(g)
            ctx.fill_all()
            ctx.flush()
        return run
    if workload == "blit":
        src = b.BLImage(w, h, b.BLFormat.XRGB32)
        sctx = b.BLContext(src)
        sg = b.create_linear_gradient(0, 0, w, 0)
        sg.add_stop(0.0, (0.0, 0.0, 0.0, 1.0)); sg.add_stop(1.0, (1.0, 1.0, 1.0, 1.0))
        sctx.set_fill_style(sg); sctx.fill_all(); sctx.flush()
        def run(i):
            x = (i * 7) % w
            ctx.comp_op = b.BLCompOp.SRC_COPY
            ctx.blit_image(b.BLPoint(x, 0), src)
            ctx.blit_image(b.BLPoint(x - w, 0), src)
            ctx.flush()
        return run


# ---------------------------------------------------------------- Skia
def skia_runner(workload, w, h, offscreen=False):
    import skia
    surface = skia.Surface(w, h)
    canvas = surface.getCanvas()
    canvas.clear(0xFF000000)
    off = -100000 if offscreen else 0
    if workload == "fill":
        def run(i):
            canvas.clear(0xFF336699)
            surface.flushAndSubmit() if hasattr(surface, "flushAndSubmit") else None
        return run
    if workload == "rects":
        items = [(skia.Rect.MakeXYWH(x + off, y, rw, rh), skia.Paint(Color=(0x80 << 24) | c, AntiAlias=False))
                 for (x, y, rw, rh, c) in shapes("rects", w, h)]
        def run(i):
            for rect, paint in items:
                canvas.drawRect(rect, paint)
        return run
    if workload == "circles":
        items = [(cx + off, cy, rad, skia.Paint(Color=(0x80 << 24) | c, AntiAlias=True))
                 for (cx, cy, rad, c) in shapes("circles", w, h)]
        def run(i):
            for cx, cy, rad, paint in items:
                canvas.drawCircle(cx, cy, rad, paint)
        return run
    if workload == "gradient":
        shader = skia.GradientShader.MakeLinear(points=[skia.Point(0, 0), skia.Point(w, h)], colors=[0xFFFF0000, 0xFF0000FF])
        paint = skia.Paint(Shader=shader, BlendMode=skia.BlendMode.kSrc)
        def run(i):
            canvas.drawPaint(paint)
        return run
    if workload == "blit":
        src_surface = skia.Surface(w, h)
        sp = skia.Paint(Shader=skia.GradientShader.MakeLinear(points=[skia.Point(0, 0), skia.Point(w, 0)], colors=[0xFF000000, 0xFFFFFFFF]))
        src_surface.getCanvas().drawPaint(sp)
        image = src_surface.makeImageSnapshot()
        paint = skia.Paint(BlendMode=skia.BlendMode.kSrc)
        def run(i):
            x = (i * 7) % w
            canvas.drawImage(image, x, 0, skia.SamplingOptions(), paint)
            canvas.drawImage(image, x - w, 0, skia.SamplingOptions(), paint)
        return run


# ---------------------------------------------------------------- cairo
def cairo_runner(workload, w, h, offscreen=False):
    import cairo
    surface = cairo.ImageSurface(cairo.FORMAT_RGB24, w, h)
    ctx = cairo.Context(surface)
    ctx.set_source_rgb(0, 0, 0); ctx.paint()
    off = -100000 if offscreen else 0
    if workload == "fill":
        def run(i):
            ctx.set_operator(cairo.OPERATOR_SOURCE)
            ctx.set_source_rgb(0.2, 0.4, 0.6)
            ctx.paint()
            surface.flush()
        return run
    if workload == "rects":
        items = [(x + off, y, rw, rh, rgbf(c)) for (x, y, rw, rh, c) in shapes("rects", w, h)]
        def run(i):
            ctx.set_operator(cairo.OPERATOR_OVER)
            for x, y, rw, rh, (r_, g_, b_) in items:
                ctx.set_source_rgba(r_, g_, b_, 0.5)
                ctx.rectangle(x, y, rw, rh)
                ctx.fill()
            surface.flush()
        return run
    if workload == "circles":
        items = [(cx + off, cy, rad, rgbf(c)) for (cx, cy, rad, c) in shapes("circles", w, h)]
        def run(i):
            ctx.set_operator(cairo.OPERATOR_OVER)
            for cx, cy, rad, (r_, g_, b_) in items:
                ctx.set_source_rgba(r_, g_, b_, 0.5)
                ctx.arc(cx, cy, rad, 0, 2 * math.pi)
                ctx.fill()
            surface.flush()
        return run
    if workload == "gradient":
        g = cairo.LinearGradient(0, 0, w, h)
        g.add_color_stop_rgb(0, 1, 0, 0); g.add_color_stop_rgb(1, 0, 0, 1)
        def run(i):
            ctx.set_operator(cairo.OPERATOR_SOURCE)
            ctx.set_source(g)
            ctx.paint()
            surface.flush()
        return run
    if workload == "blit":
        src = cairo.ImageSurface(cairo.FORMAT_RGB24, w, h)
        sc = cairo.Context(src)
        sg = cairo.LinearGradient(0, 0, w, 0); sg.add_color_stop_rgb(0, 0, 0, 0); sg.add_color_stop_rgb(1, 1, 1, 1)
        sc.set_source(sg); sc.paint(); src.flush()
        def run(i):
            x = (i * 7) % w
            ctx.set_operator(cairo.OPERATOR_SOURCE)
            for ox in (x, x - w):
                ctx.set_source_surface(src, ox, 0)
                ctx.rectangle(max(ox, 0), 0, min(ox + w, w) - max(ox, 0), h)
                ctx.fill()
            surface.flush()
        return run


RUNNERS = {"blend2d": blend2d_runner, "skia": skia_runner, "cairo": cairo_runner}


def cadence_bench(exe, workload, w, h, frames, threads):
    out = subprocess.run([exe, "bench", "--workload", workload, "--size", f"{w}x{h}", "--frames", str(frames),
                          "--threads", str(threads), "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cadence", default=".build-release/release/cadence")
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved rounds; each figure is the best of its per-round medians (robust to background load)")
    ap.add_argument("--libs", default="blend2d,skia,cairo")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    args = ap.parse_args()
    if not os.access(args.cadence, os.X_OK):
        sys.exit(f"peers.py: {args.cadence} not found: swift build -c release --scratch-path .build-release")
    libs = []
    for lib in args.libs.split(","):
        try:
            RUNNERS[lib]("fill", 8, 8)
            libs.append(lib)
        except ImportError as e:
            print(f"# {lib}: not installed ({e}); skipped", file=sys.stderr)
    cores = os.cpu_count() or 1
    print(f"# ms/frame: best of {args.rounds} interleaved rounds of {args.frames}-frame medians")
    print(f"# ratio = peer ms / cadence 1-thread ms (>1: cadence faster); 'ovh' = the peer's Python call overhead")
    print(f"# cadence {cores}t = all cores; the peers' Python bindings expose no multi-threaded rendering")
    for size in args.sizes.split(","):
        w, h = (int(v) for v in size.split("x"))
        print(f"\n== {w}x{h}")
        header = f"{'workload':10} {'cadence 1t':>11} {'cadence ' + str(cores) + 't':>11}"
        for lib in libs:
            header += f" {lib:>9} {'ovh':>6} {'ratio':>6}"
        print(header)
        for wl in args.workloads.split(","):
            best = {}
            def keep(key, ms):
                best[key] = min(best.get(key, float("inf")), ms)
            for _ in range(args.rounds):
                keep("c1", cadence_bench(args.cadence, wl, w, h, args.frames, 1)["msPerFrame"]["median"])
                keep("cn", cadence_bench(args.cadence, wl, w, h, args.frames, cores)["msPerFrame"]["median"])
                for lib in libs:
                    keep(lib, timeit(RUNNERS[lib](wl, w, h), args.frames)[0])
                    if wl in ("rects", "circles"):
                        keep(lib + "-ovh", timeit(RUNNERS[lib](wl, w, h, offscreen=True), args.frames)[0])
            c1 = best["c1"]
            line = f"{wl:10} {c1:11.3f} {best['cn']:11.3f}"
            for lib in libs:
                line += f" {best[lib]:9.3f} {best.get(lib + '-ovh', 0.0):6.2f} {best[lib] / c1:6.2f}"
            print(line, flush=True)
        lim = {}
        for _ in range(args.rounds):
            for wl in ("fill", "memset", "memcpy"):
                ms = cadence_bench(args.cadence, wl, w, h, args.frames, 1)["msPerFrame"]["median"]
                lim[wl] = min(lim.get(wl, float("inf")), ms)
        print(f"cadence fill {lim['fill']:.3f} ms = {100 * lim['memset'] / lim['fill']:.0f}% of memset bandwidth "
              f"(memset {lim['memset']:.3f} ms); memcpy {lim['memcpy']:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
