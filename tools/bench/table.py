#!/usr/bin/env python3
"""One side-by-side table in one run: Cadence per kernel path, other cadence builds, Blend2D,
Skia, cairo, and memset/memcpy on the same buffer, one thread, for each size.

Every round runs every column once per workload (interleaved, so background load hits all
columns alike); a cell is the median over rounds of each round's median ms/frame. All rounds
are printed too. Workloads and peers are those of peers.py.

Usage: python3 tools/bench/table.py [--cadence .build-release/release/cadence]
           [--builds main=/tmp/cadence-main/.build/release/cadence] [--paths auto,baseline,avx2]
           [--sizes 1920x1080,3840x2160] [--frames 30] [--rounds 3] [--libs blend2d,skia,cairo]
           [--markdown OUT.md]
"auto" is the default build as users run it (CADENCE_ISA unset); the others force a path.
Ratios: best peer ms / Cadence auto ms (>1: Cadence faster); blit also against memcpy.
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("peers", os.path.join(here, "peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)


def cadence_ms(exe, isa, workload, w, h, frames):
    env = dict(os.environ)
    env.pop("CADENCE_ISA", None)
    if isa != "auto":
        env["CADENCE_ISA"] = isa
    out = subprocess.run([exe, "bench", "--workload", workload, "--size", f"{w}x{h}", "--frames", str(frames),
                          "--threads", "1", "--json"], check=True, capture_output=True, text=True, env=env).stdout
    rec = json.loads(out.strip().splitlines()[-1])
    return rec["msPerFrame"]["median"], rec["msPerFrame"]["min"], rec.get("isa", "-")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cadence", default=".build-release/release/cadence")
    ap.add_argument("--paths", default="auto,baseline,avx2", help="kernel paths of --cadence to run")
    ap.add_argument("--builds", default="", help="LABEL=PATH,... other cadence builds (their automatic path)")
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--libs", default="blend2d,skia,cairo")
    ap.add_argument("--workloads", default=",".join(peers.WORKLOADS))
    ap.add_argument("--markdown", help="also write the tables and rounds to this file")
    args = ap.parse_args()
    if not os.access(args.cadence, os.X_OK):
        sys.exit(f"table.py: {args.cadence} not found: swift build -c release --scratch-path .build-release")
    cols = [(f"cadence {p}", args.cadence, p) for p in args.paths.split(",") if p]
    for item in filter(None, args.builds.split(",")):
        label, sep, path = item.partition("=")
        if not sep or not os.access(path, os.X_OK):
            sys.exit(f"table.py: '{item}' is not LABEL=PATH of an executable cadence")
        cols.append((label, path, "auto"))
    libs = []
    for lib in filter(None, args.libs.split(",")):
        try:
            peers.RUNNERS[lib]("fill", 8, 8)
            libs.append(lib)
        except ImportError as e:
            print(f"# {lib}: not installed ({e}); skipped", file=sys.stderr)
    md = []

    def emit(line=""):
        print(line, flush=True)
        md.append(line)

    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    emit(f"ms/frame, one thread; cell = median of {args.rounds} interleaved rounds, each a {args.frames}-frame median. "
         f"Load average at start: {' '.join(load)}.")
    labels = [c[0] for c in cols]

    def table(kind, data, w, h, isas, workloads):
        med = {k: statistics.median(v) for k, v in data.items()}
        emit(f"\n#### {w}x{h}, {kind} (cell: median over rounds)\n")
        emit("| workload | " + " | ".join(f"{l} ({isas.get(l, '-')})" for l in labels) + " | " + " | ".join(libs)
             + " | best peer | auto vs best peer |")
        emit("| --- |" + " ---: |" * (len(labels) + len(libs) + 2))
        auto = labels[0]
        for wl in workloads:
            cells = [f"{med[(wl, l)]:.3f}" for l in labels] + [f"{med[(wl, l)]:.3f}" if (wl, l) in med else "" for l in libs]
            peer = [(med[(wl, l)], l) for l in libs if (wl, l) in med]
            if peer:
                best_ms, best_lib = min(peer)
                ratio = f"{best_ms / med[(wl, auto)]:.2f}×"
                cells += [f"{best_lib} {best_ms:.3f}", f"**{ratio}**" if best_ms < med[(wl, auto)] else ratio]
            else:
                cells += ["", ""]
            emit(f"| {wl} | " + " | ".join(cells) + " |")
        if ("blit", auto) in med and ("memcpy", auto) in med:
            emit(f"\nblit / memcpy ({auto}): {med[('blit', auto)] / med[('memcpy', auto)]:.3f}")
        if ("fill", auto) in med:
            emit(f"fill / memset ({auto}): {med[('fill', auto)] / med[('memset', auto)]:.3f}")
        if ("rects", "blend2d") in med:
            emit(f"rects: Blend2D / {auto} = {med[('rects', 'blend2d')] / med[('rects', auto)]:.2f}×")
    for size in args.sizes.split(","):
        w, h = (int(v) for v in size.split("x"))
        rounds = {}  # (workload, column) -> [per-round median ms]
        mins = {}  # (workload, column) -> [per-round fastest frame ms]
        isas = {}
        workloads = args.workloads.split(",") + ["memset", "memcpy"]
        for wl in workloads:
            for _ in range(args.rounds):
                for label, exe, isa in cols:
                    ms, fastest, ran = cadence_ms(exe, isa, wl, w, h, args.frames)
                    rounds.setdefault((wl, label), []).append(ms)
                    mins.setdefault((wl, label), []).append(fastest)
                    isas[label] = ran
                if wl in peers.WORKLOADS:
                    for lib in libs:
                        ms, fastest = peers.timeit(peers.RUNNERS[lib](wl, w, h), args.frames)
                        rounds.setdefault((wl, lib), []).append(ms)
                        mins.setdefault((wl, lib), []).append(fastest)
        for kind, data in (("median", rounds), ("fastest frame", mins)):
            table(kind, data, w, h, isas, workloads)
        emit(f"\nAll rounds ({w}x{h}, ms/frame in round order, per-round median / fastest frame):\n")
        for wl in workloads:
            parts = [f"{l}: " + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in zip(rounds[(wl, l)], mins[(wl, l)]))
                     for l in labels + libs if (wl, l) in rounds]
            emit(f"- {wl}: " + "; ".join(parts))

    try:
        load = open("/proc/loadavg").read().split()[:3]
        emit(f"\nLoad average at end: {' '.join(load)}.")
    except OSError:
        pass
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
