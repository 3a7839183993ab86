#!/usr/bin/env python3
"""Compares `cadence edid --json FILE` with Debian's `edid-decode -s -p FILE` field by field on
every EDID of the corpus (tools/edid/corpus.sh), and prints one line per mismatch and the
closing line `edid-corpus: N passed, N failed`. Exit 0 when nothing differs.

    tools/edid/compare.py --cadence .build/debug/cadence [--corpus DIR] [-v] [FILE...]

Fields compared (edid-decode's text is parsed; normalizations are listed in NORMALIZATIONS):
  version, manufacturer, product code, serial number, serial string, monitor name,
  week/year or model year, digital/analog, interface and bits per colour, size (cm) or aspect
  ratio, established and DMT standard timings, every DTD (base block and CTA, with its exact
  refresh to 6 decimals), the preferred timing (edid-decode -p, block 0), range limits (min/max
  V Hz, H kHz, max dot clock, kind), CTA VICs (video data blocks, native flag) and HDMI VICs,
  HDMI Forum VRRmin/VRRmax, AMD FreeSync min/max, DisplayID version, product id, DTDs,
  adaptive-sync ranges, range limits, tiled topology.
"""
import argparse
import json
import os
import re
import subprocess
import sys

NORMALIZATIONS = """
1. Strings (name, serial string): edid-decode prints trailing spaces inside the quotes; Cadence
   drops them. Both sides are compared with trailing spaces removed.
2. Refresh rates: edid-decode prints %.6f; Cadence's JSON carries the same double rounded to 6
   decimals. Compared as 6-decimal strings.
3. Standard timings: edid-decode lists standard timings that are not DMT timings as GTF/CVT
   formula timings; Cadence lists only standard timings that name a DMT timing (a formula
   timing's refresh is not exact). Only edid-decode's `DMT 0x..` standard timings are compared.
4. Files edid-decode refuses (length not a multiple of 128): Cadence must decode the whole
   blocks and warn about the extra bytes; nothing else is compared.
5. DTDs edid-decode rejects (pixel clock < 10 MHz): both skip them; Cadence warns.
6. Interlaced timings: both give the field rate and the frame height ("1920x1080i").
7. Preferred timing: `edid-decode -p` prints block 0's preferred timing only when byte 0x18
   bit 1 says the first DTD is also native. Cadence reports the first DTD as preferred for
   every EDID 1.4 (EDID 1.4: the first DTD is always the preferred timing) and for EDID 1.3
   with that bit set. With the bit clear on 1.4, the preferred timing is compared with
   edid-decode's DTD 1 instead.
8. Monitor name: an EDID may split its name over several 0xFC descriptors (LG "Studioworks
   N" + "2200P"); Cadence joins them, and edid-decode's name lines are joined for the compare.
"""

TIMING = r"(\d+)x(\d+)(i?)\s+([\d.]+) Hz"


def parse_edid_decode(text):
    """The fields compare() checks, from edid-decode's output."""
    out = {"dtds": [], "established": [], "standard": [], "vics": [], "native_vics": [], "hdmi_vics": [],
           "hf_vrr": [], "amd": [], "did_dtds": [], "did_async": [], "did_range": None, "tiles": None,
           "did_product": None, "did_version": None, "name": None, "serial_string": None, "range": None,
           "preferred": None, "serial": None, "week": None, "year": None, "model_year": None,
           "size_cm": None, "aspect": None, "digital": None, "bpc": None, "interface": None}
    section = None
    block = -1
    lines = text.splitlines()
    in_pref0 = False
    block_title = ""
    vendor = None
    for i, line in enumerate(lines):
        s = line.strip()
        if line and not line.startswith(" "):
            # A top-level heading: a block, a -p/-n summary section, or a separator.
            in_pref0 = line.startswith("Preferred Video Timing if only Block 0")
            if line.startswith("Block "):
                block = int(line.split()[1].rstrip(","))
                block_title = line.split(", ", 1)[1]
                section = None
            elif not line.startswith("-----") and not line.startswith("Checksum"):
                block = -2
            continue
        if in_pref0 and out["preferred"] is None:
            m = re.match(r"DTD\s+\d+:\s+" + TIMING, s)
            if m:
                out["preferred"] = (int(m[1]), int(m[2]), m[3] == "i", m[4])
            continue
        if block < 0:
            continue
        if line.startswith("  ") and not line.startswith("   "):
            section = s.rstrip(":")
            vendor = None
        m = re.match(r"EDID Structure Version & Revision: (\d+)\.(\d+)", s)
        if m:
            out["version"] = f"{m[1]}.{m[2]}"
        if block == 0:
            if s.startswith("Manufacturer: "):
                out["manufacturer"] = s.split(": ", 1)[1]
            elif s.startswith("Model: "):
                out["product"] = int(s.split(": ")[1])
            elif s.startswith("Serial Number: ") and section.startswith("Vendor"):
                out["serial"] = int(s.split(": ")[1])
            elif s.startswith("Made in: week"):
                m = re.match(r"Made in: week (\d+) of (\d+)", s)
                out["week"], out["year"] = int(m[1]), int(m[2])
            elif s.startswith("Made in: "):
                out["year"] = int(s.split(": ")[1])
            elif s.startswith("Model year: "):
                out["model_year"] = int(s.split(": ")[1])
            elif s == "Digital display":
                out["digital"] = True
            elif s == "Analog display":
                out["digital"] = False
            elif s.startswith("Bits per primary color channel: "):
                out["bpc"] = int(s.split(": ")[1])
            elif s.endswith(" interface") or s == "Digital interface is not defined":
                out["interface"] = {"DVI interface": "DVI", "HDMI-a interface": "HDMI-a", "HDMI-b interface": "HDMI-b",
                                    "MDDI interface": "MDDI", "DisplayPort interface": "DisplayPort",
                                    "Digital interface is not defined": "undefined"}.get(s, s)
            elif s.startswith("Unknown interface: "):
                out["interface"] = "reserved(%d)" % int(s.split(": ")[1], 16)
            elif s.startswith("Maximum image size: "):
                m = re.match(r"Maximum image size: (\d+) cm x (\d+) cm", s)
                out["size_cm"] = (int(m[1]), int(m[2]))
            elif s.startswith("Aspect ratio: "):
                out["aspect"] = s.split(": ")[1].split()[0]
            elif s.startswith("Display Product Name: "):
                out["name"] = (out["name"] or "") + s.split(": ", 1)[1][1:-1].rstrip(" ")
            elif s.startswith("Display Product Serial Number: "):
                if out["serial_string"] is None:
                    out["serial_string"] = s.split(": ", 1)[1][1:-1].rstrip(" ")
            elif s.startswith("Monitor ranges ("):
                m = re.match(r"Monitor ranges \(([^)]*)\): (\d+)-(\d+) Hz V, (\d+)-(\d+) kHz H(?:, max dotclock (\d+) MHz)?", s)
                out["range"] = (m[1] if not m[1].startswith("Unknown") else "Unknown", int(m[2]), int(m[3]),
                                int(m[4]), int(m[5]), int(m[6]) if m[6] else None)
            if section and section.startswith("Established Timings"):
                m = re.search(TIMING, s)
                if m:
                    out["established"].append((int(m[1]), int(m[2]), m[3] == "i", m[4]))
            if section and section.startswith("Standard Timings") and s.startswith("DMT"):
                m = re.search(TIMING, s)
                out["standard"].append((int(m[1]), int(m[2]), m[3] == "i", m[4]))
        m = re.match(r"DTD\s+(\d+):\s+" + TIMING, s)
        if m:
            out["dtds"].append((int(m[1]), int(m[2]), int(m[3]), m[4] == "i", m[5]))
            continue
        m = re.match(r"DTD:\s+" + TIMING, s)
        if m:
            out["did_dtds"].append((int(m[1]), int(m[2]), m[3] == "i", m[4], "preferred" in s))
            continue
        if section == "Video Data Block":
            m = re.match(r"VIC\s+(\d+):\s+" + TIMING + "(.*)", s)
            if m:
                out["vics"].append((int(m[1]), m[5]))
                if "native" in m[6]:
                    out["native_vics"].append(int(m[1]))
        if section and section.startswith("Vendor-Specific Data Block (HDMI)"):
            m = re.match(r"HDMI VIC (\d+):\s+" + TIMING, s)
            if m:
                out["hdmi_vics"].append((int(m[1]), m[5]))
        if section and (section.startswith("Vendor-Specific Data Block (HDMI Forum)")
                        or section.startswith("HDMI Forum Sink Capability Data Block")):
            if s.startswith("VRRmin: "):
                out["hf_vrr"].append(("min", int(s.split()[1])))
            elif s.startswith("VRRmax: "):
                out["hf_vrr"].append(("max", int(s.split()[1])))
        if section and section.startswith("Vendor-Specific Data Block (AMD)"):
            if s.startswith("Minimum Refresh Rate: "):
                vendor = [int(s.split()[3]), None]
            elif s.startswith("Maximum Refresh Rate: ") and vendor is not None:
                vendor[1] = int(s.split()[3])
                out["amd"].append(tuple(vendor))
        if section == "Adaptive Sync Data Block":
            if s.startswith("Min Refresh Rate: "):
                vendor = [int(s.split()[3]), None]
            elif s.startswith("Max Refresh Rate: ") and vendor is not None:
                vendor[1] = int(s.split()[3])
                out["did_async"].append(tuple(vendor))
        if section == "Video Timing Range Data Block" and s.startswith("Vertical Refresh: "):
            m = re.match(r"Vertical Refresh: (\d+)-(\d+) Hz", s)
            out["did_range"] = (int(m[1]), int(m[2]))
        if section == "Dynamic Video Timing Range Limits Data Block":
            if s.startswith("Minimum Vertical Refresh Rate: "):
                out["did_range"] = (int(s.split()[4]), None)
            elif s.startswith("Maximum Vertical Refresh Rate: "):
                out["did_range"] = (out["did_range"][0], int(s.split()[4]))
        if section and section.startswith("Tiled Display Topology"):
            t = out["tiles"] or {}
            m = re.match(r"Num horizontal tiles: (\d+) Num vertical tiles: (\d+)", s)
            if m:
                t["horizontal"], t["vertical"] = int(m[1]), int(m[2])
            m = re.match(r"Tile location: (\d+), (\d+)", s)
            if m:
                t["column"], t["row"] = int(m[1]), int(m[2])
            m = re.match(r"Tile resolution: (\d+)x(\d+)", s)
            if m:
                t["width"], t["height"] = int(m[1]), int(m[2])
            if s.startswith("Tiled Display Manufacturer/Vendor ID: "):
                t["vendor"] = s.split(": ", 1)[1]
            if s.startswith("Tiled Display Product ID Code: "):
                t["productCode"] = int(s.split(": ")[1])
            if s.startswith("Tiled Display Serial Number: "):
                t["serialNumber"] = int(s.split(": ")[1])
            if s.startswith("Tiled display consists of"):
                t["singleEnclosure"] = "single" in s
            out["tiles"] = t
        if section and section.startswith("Product Identification Data Block"):
            p = out["did_product"] or {}
            if s.startswith("Product Code: "):
                p["productCode"] = int(s.split(": ")[1])
            elif s.startswith("Serial Number: "):
                p["serialNumber"] = int(s.split(": ")[1])
            elif s.startswith("Product ID: "):
                p["productName"] = s.split(": ", 1)[1]
            elif s.startswith("Year of Manufacture: ") or s.startswith("Model Year: "):
                m = re.match(r"(Year of Manufacture|Model Year): (\d+)(?:, Week (\d+))?", s)
                p["year"], p["modelYear"] = int(m[2]), m[1] == "Model Year"
                p["week"] = int(m[3]) if m[3] else None
            out["did_product"] = p
        if block_title.startswith("DisplayID") and line.startswith("  Version: ") and out["did_version"] is None:
            out["did_version"] = s.split(": ")[1]
    return out


def timing_key(t):
    return (t["width"], t["height"], t["interlaced"], "%.6f" % t["refreshHz"])


def compare(ed, c):
    """Mismatch descriptions (empty = equal)."""
    bad = []

    def eq(field, mine, theirs):
        if mine != theirs:
            bad.append(f"{field}: cadence {mine!r} != edid-decode {theirs!r}")

    eq("version", c["version"], ed.get("version"))
    eq("manufacturer", c["manufacturer"], ed.get("manufacturer"))
    eq("product code", c["productCode"], ed.get("product"))
    eq("serial number", c["serialNumber"], ed["serial"])
    eq("serial string", c["serialString"], ed["serial_string"])
    eq("name", c["name"], ed["name"])
    eq("week", c["week"], ed["week"])
    eq("year", c["year"], ed["year"])
    eq("model year", c["modelYear"], ed["model_year"])
    eq("digital", c["digital"], ed["digital"])
    if ed["version"] and ed["version"] >= "1.4" and c["digital"]:
        eq("bits per colour", c["bitsPerColor"], ed["bpc"])
        eq("interface", c["interface"], ed["interface"])
    size = c["sizeCM"] and (c["sizeCM"]["width"], c["sizeCM"]["height"])
    eq("size cm", size, ed["size_cm"])
    eq("aspect ratio", c["aspectRatio"] and "%.2f" % c["aspectRatio"], ed["aspect"])
    est = [timing_key(t) for t in c["timings"] if t["source"] == "established"]
    eq("established timings", est, ed["established"])
    std = [timing_key(t) for t in c["timings"] if t["source"] == "standard"]
    eq("standard (DMT) timings", std, ed["standard"])
    dtds = []
    for t in c["timings"]:
        m = re.match(r"DTD (\d+) \(block", t["source"])
        if m:
            dtds.append((int(m[1]),) + timing_key(t))
    eq("detailed timings", dtds, ed["dtds"])
    p = c["preferredTiming"]
    base_pref = p if p and p["source"] == "DTD 1 (block 0)" else None
    if c["preferredIsNative"] or ed["preferred"] is not None:
        # Normalization 7.
        eq("preferred timing", base_pref and timing_key(base_pref), ed["preferred"])
    elif c["version"] >= "1.4" and dtds and dtds[0][0] == 1 and dtds[0][1:] == (ed["dtds"][0][1:] if ed["dtds"] else None):
        eq("preferred timing (1.4, first DTD)", base_pref and timing_key(base_pref), dtds[0][1:])
    r = c["rangeLimits"]
    mine = r and (r["kind"], r["minVerticalHz"], r["maxVerticalHz"], r["minHorizontalKHz"], r["maxHorizontalKHz"], r["maxPixelClockMHz"])
    eq("range limits", mine, ed["range"])
    cta = c["cta"] or {}
    vic_rates = [(int(t["source"].split()[1]), "%.6f" % t["refreshHz"]) for t in c["timings"] if t["source"].startswith("VIC ")]
    eq("VICs", vic_rates, ed["vics"])
    eq("native VICs", cta.get("nativeVICs", []), ed["native_vics"])
    hv = [(int(t["source"].split()[2]), "%.6f" % t["refreshHz"]) for t in c["timings"] if t["source"].startswith("HDMI VIC ")]
    eq("HDMI VICs", hv, ed["hdmi_vics"])
    hf = cta.get("hdmiForum") or {}
    mine_hf = ([("min", hf["vrrMinHz"])] if hf.get("vrrMinHz") else []) + ([("max", hf["vrrMaxHz"])] if hf.get("vrrMaxHz") else [])
    eq("HDMI Forum VRR", mine_hf, ed["hf_vrr"][-len(mine_hf):] if mine_hf else ed["hf_vrr"])
    amd = cta.get("amdFreeSync")
    eq("AMD FreeSync range", [(amd["minHz"], amd["maxHz"])] if amd else [], ed["amd"][-1:])
    vrr = {v["source"]: (v["minHz"], v["maxHz"]) for v in c["vrrRanges"]}
    if ed["hf_vrr"] and len(ed["hf_vrr"]) == 2 and "hdmi-forum" not in vrr:
        bad.append("VRR ranges: hdmi-forum range missing")
    did = c["displayID"] or {}
    eq("DisplayID version", did.get("version"), ed["did_version"])
    ddt = [timing_key(t) + (t["preferred"],) for t in c["timings"] if t["source"].startswith("DisplayID type")]
    eq("DisplayID timings", ddt, ed["did_dtds"])
    eq("DisplayID adaptive sync", [(a["minHz"], a["maxHz"]) for a in did.get("adaptiveSync", [])], ed["did_async"])
    rl = did.get("rangeLimits")
    eq("DisplayID range limits", rl and (rl["minHz"], rl["maxHz"]), ed["did_range"])
    tiles = did.get("tiles")
    if tiles is not None or ed["tiles"] is not None:
        eq("tiled topology", tiles and {k: tiles[k] for k in (ed["tiles"] or tiles)}, ed["tiles"])
    prod = did.get("product")
    if prod is not None or ed["did_product"] is not None:
        theirs = ed["did_product"] or {}
        mine = prod and {k: prod[k] for k in theirs if k in prod}
        if prod and "productName" not in theirs and prod["productName"] == "":
            pass
        eq("DisplayID product", mine, theirs)
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cadence", required=True)
    ap.add_argument("--corpus", default=os.environ.get("CADENCE_EDID_CORPUS", ".cache/edid-corpus"))
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--stats", action="store_true", help="how many files carried each field")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files
    if not files:
        for root, _, names in os.walk(a.corpus):
            files += [os.path.join(root, n) for n in names if not n.startswith(".")]
    files.sort()
    passed = failed = 0
    stats = {}
    for f in files:
        ed = subprocess.run(["edid-decode", "-s", "-p", f], capture_output=True, text=True, errors="replace")
        cj = subprocess.run([a.cadence, "edid", "--json", f], capture_output=True, text=True)
        if cj.returncode != 0:
            problems = [f"cadence edid exit {cj.returncode}: {cj.stderr.strip()}"]
        else:
            c = json.loads(cj.stdout)
            if "is not a multiple of" in ed.stderr + ed.stdout and ed.stdout.count("Block 0") == 0:
                # Normalization 4.
                ok = any("is not a multiple of 128" in w for w in c["warnings"])
                problems = [] if ok else ["edid-decode refuses the length; cadence did not warn about it"]
            else:
                parsed = parse_edid_decode(ed.stdout)
                problems = compare(parsed, c)
                for k, v in parsed.items():
                    if v not in (None, [], {}):
                        stats[k] = stats.get(k, 0) + 1
        if problems:
            failed += 1
            for p in problems:
                print(f"MISMATCH {os.path.relpath(f, a.corpus)}: {p}")
        else:
            passed += 1
            if a.v:
                print(f"ok {os.path.relpath(f, a.corpus)}")
    if a.stats:
        print("files with each edid-decode field present (compared): " +
              ", ".join(f"{k} {v}" for k, v in sorted(stats.items())))
    print(f"edid-corpus: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
