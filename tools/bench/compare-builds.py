#!/usr/bin/env python3
"""Same-run comparison of several `cadence` builds with Blend2D, Skia and cairo, one thread.

The machine is shared and noisy, so builds are compared inside one run: each round runs
every build and every peer in turn, and each figure is the best of its per-round medians
(ms/frame). Workloads and peers are those of peers.py.

Usage: python3 tools/bench/compare-builds.py \\
         --builds sse2=.build-release/release/cadence,v3=.build-v3/release/cadence \\
         [--sizes 1920x1080,3840x2160] [--frames 30] [--rounds 3] [--libs blend2d,skia,cairo]
memset and memcpy rows are Cadence's own measurement of the same buffer in each build.
"""
import argparse
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("peers", os.path.join(here, "peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builds", required=True, help="LABEL=PATH,... of cadence executables")
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workloads", default=",".join(peers.WORKLOADS + ["memset", "memcpy"]))
    ap.add_argument("--libs", default="blend2d,skia,cairo", help="peers to run ('' for none)")
    args = ap.parse_args()
    builds = []
    for item in args.builds.split(","):
        label, sep, path = item.partition("=")
        if not sep or not os.access(path, os.X_OK):
            sys.exit(f"compare-builds.py: '{item}' is not LABEL=PATH of an executable cadence")
        builds.append((label, path))
    libs = []
    for lib in filter(None, args.libs.split(",")):
        try:
            peers.RUNNERS[lib]("fill", 8, 8)
            libs.append(lib)
        except ImportError as e:
            print(f"# {lib}: not installed ({e}); skipped", file=sys.stderr)
    for size in args.sizes.split(","):
        w, h = (int(v) for v in size.split("x"))
        print(f"\n== {w}x{h}: ms/frame, one thread, best of {args.rounds} interleaved rounds of {args.frames}-frame medians")
        print(f"{'workload':10}" + "".join(f" {label:>11}" for label, _ in builds) + "".join(f" {lib:>9}" for lib in libs))
        for wl in args.workloads.split(","):
            best = {}
            for _ in range(args.rounds):
                for label, path in builds:
                    ms = peers.cadence_bench(path, wl, w, h, args.frames, 1)["msPerFrame"]["median"]
                    best[label] = min(best.get(label, float("inf")), ms)
                if wl in peers.WORKLOADS:
                    for lib in libs:
                        best[lib] = min(best.get(lib, float("inf")), peers.timeit(peers.RUNNERS[lib](wl, w, h), args.frames)[0])
            line = f"{wl:10}" + "".join(f" {best[label]:11.3f}" for label, _ in builds)
            line += "".join(f" {best[lib]:9.3f}" if lib in best else f" {'-':>9}" for lib in libs)
            print(line, flush=True)


if __name__ == "__main__":
    main()
