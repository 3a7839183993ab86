#!/usr/bin/env python3
"""Prints "wall cpu rss_mb" from a file of `/usr/bin/time -v` output (the bench scripts' timing)."""
import re
import sys

t = open(sys.argv[1]).read()


def field(k):
    return re.search(re.escape(k) + r": (.*)", t).group(1).strip()


parts = [float(p) for p in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
wall = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
rss = int(field("Maximum resident set size (kbytes)")) / 1024
print(f"{wall:.2f} {cpu:.2f} {rss:.0f}")
