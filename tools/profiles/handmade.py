#!/usr/bin/env python3
"""Writes the hand-made fake DRM profiles (profiles/amdgpu-vrr.json, profiles/two-crtc.json).

They follow the `drm_info -j` schema of the captured ones (profiles/vkms.json) with the fields
Cadence's fake DRM device reads; the EDID of amdgpu-vrr is built here: an EDID 1.4 DisplayPort
monitor "Cadence VRR" (continuous frequency, range limits 48-144 Hz, preferred 1920x1080@144).
Run from the repository top: python3 tools/profiles/handmade.py
"""
import json


def dtd(clock10k, ha, hb, hfp, hsw, va, vb, vfp, vsw, wmm, hmm):
    return bytes([
        clock10k & 0xff, clock10k >> 8, ha & 0xff, hb & 0xff, ((ha >> 8) << 4) | (hb >> 8),
        va & 0xff, vb & 0xff, ((va >> 8) << 4) | (vb >> 8), hfp & 0xff, hsw & 0xff,
        ((vfp & 0xf) << 4) | (vsw & 0xf),
        ((hfp >> 8) << 6) | ((hsw >> 8) << 4) | ((vfp >> 4) << 2) | (vsw >> 4),
        wmm & 0xff, hmm & 0xff, ((wmm >> 8) << 4) | (hmm >> 8), 0, 0, 0x1E])


def vrr_edid():
    e = bytearray(b"\x00\xff\xff\xff\xff\xff\xff\x00")
    m = "CDN"
    packed = ((ord(m[0]) - 64) << 10) | ((ord(m[1]) - 64) << 5) | (ord(m[2]) - 64)
    e += bytes([packed >> 8, packed & 0xff, 0x44, 0x01]) + (12345678).to_bytes(4, "little")
    e += bytes([12, 2025 - 1990, 1, 4, 0xA5, 60, 34, 120, 0x07])
    e += bytes([0xEE, 0x91, 0xA3, 0x54, 0x4C, 0x99, 0x26, 0x0F, 0x50, 0x54])  # chromaticity
    e += bytes(3) + bytes([1, 1] * 8)
    e += dtd(33277, 1920, 160, 48, 32, 1080, 31, 3, 5, 600, 340)   # 1920x1080 @ 143.9998 Hz
    e += dtd(14850, 1920, 280, 88, 44, 1080, 45, 4, 5, 600, 340)   # 1920x1080 @ 60 Hz
    e += bytes([0, 0, 0, 0xFD, 0, 48, 144, 30, 160, 34, 0x01, 0x0A]) + b" " * 6  # range limits
    e += bytes([0, 0, 0, 0xFC, 0]) + b"Cadence VRR\n "                         # monitor name
    e += bytes([0])
    e += bytes([(-sum(e)) & 0xff])
    assert len(e) == 128 and sum(e) % 256 == 0
    return e.hex()


def mode(clock, ha, hss, hse, ht, va, vss, vse, vt, preferred=False, flags=5):
    hz = clock * 1000 / (ht * vt)
    return {"clock": clock, "hdisplay": ha, "hsync_start": hss, "hsync_end": hse, "htotal": ht, "hskew": 0,
            "vdisplay": va, "vsync_start": vss, "vsync_end": vse, "vtotal": vt, "vscan": 0,
            "vrefresh": round(hz), "flags": flags, "type": 0x48 if preferred else 0x40, "name": f"{ha}x{va}"}


def rng(v, immutable=True, lo=0, hi=1):
    return {"flags": 2 | (4 if immutable else 0), "type": 2, "atomic": False, "immutable": immutable,
            "raw_value": v, "spec": {"min": lo, "max": hi}, "value": v, "data": None}


def plane(pid, crtcs, kind, crtc_id=0):
    return {"id": pid, "possible_crtcs": crtcs, "crtc_id": crtc_id, "fb_id": 0, "crtc_x": 0, "crtc_y": 0, "x": 0, "y": 0,
            "gamma_size": 0, "fb": None, "formats": [875713112, 875713089],
            "properties": {"type": {"flags": 12, "type": 8, "atomic": False, "immutable": True, "raw_value": kind,
                                    "spec": [{"name": "Overlay", "value": 0}, {"name": "Primary", "value": 1},
                                             {"name": "Cursor", "value": 2}], "value": kind, "data": None}}}


def crtc(cid, m, fb):
    return {"id": cid, "fb_id": fb, "x": 0, "y": 0, "mode": m, "gamma_size": 256,
            "properties": {"ACTIVE": rng(1, False), "VRR_ENABLED": rng(0, False)}}


def driver(name, desc, major, minor, patch, date, async_flip):
    return {"name": name, "desc": desc, "version": {"major": major, "minor": minor, "patch": patch, "date": date},
            "client_caps": {"UNIVERSAL_PLANES": True, "ATOMIC": True},
            "caps": {"DUMB_BUFFER": 1, "VBLANK_HIGH_CRTC": 1, "DUMB_PREFER_SHADOW": 0, "PRIME": 3,
                     "TIMESTAMP_MONOTONIC": 1, "ASYNC_PAGE_FLIP": async_flip, "ADDFB2_MODIFIERS": 1,
                     "CRTC_IN_VBLANK_EVENT": 1}}


def connector(cid, ctype, enc, w, h, modes, props):
    return {"id": cid, "type": ctype, "status": 1, "phy_width": w, "phy_height": h, "subpixel": 1,
            "encoder_id": enc, "encoders": [enc], "modes": modes, "properties": props}


def write(name, obj):
    with open(f"profiles/{name}.json", "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


vrr_modes = [mode(332770, 1920, 1968, 2000, 2080, 1080, 1083, 1088, 1111, preferred=True),
             mode(277310, 1920, 1968, 2000, 2080, 1080, 1083, 1088, 1111),
             mode(148500, 1920, 2008, 2052, 2200, 1080, 1084, 1089, 1125)]
write("amdgpu-vrr", {
    "cadence": {"description": "hand-made amdgpu-style DisplayPort VRR monitor: DP-1 with vrr_capable=1, "
                               "CRTC VRR_ENABLED, EDID \"Cadence VRR\" with a 48-144 Hz range, 1920x1080@144 preferred",
                "source": "tools/profiles/handmade.py", "vblank": True,
                "edid": {"DP-1": vrr_edid()}},
    "/dev/dri/card0": {
        "driver": driver("amdgpu", "AMD GPU", 3, 49, 0, "20150101", 1),
        "connectors": [connector(90, 10, 91, 600, 340, vrr_modes,
                                 {"vrr_capable": rng(1), "non-desktop": rng(0),
                                  "EDID": {"flags": 20, "type": 16, "atomic": False, "immutable": True,
                                           "raw_value": 0, "spec": None, "value": None, "data": None}})],
        "encoders": [{"id": 91, "type": 2, "crtc_id": 80, "possible_crtcs": 3, "possible_clones": 0}],
        "crtcs": [crtc(80, vrr_modes[2], 99), crtc(81, None, 0)],
        "planes": [plane(60, 1, 1, 80), plane(61, 2, 1), plane(62, 1, 2), plane(63, 2, 2)],
    }})

edp = mode(148500, 1920, 2008, 2052, 2200, 1080, 1084, 1089, 1125, preferred=True)
dp = [mode(586345, 2560, 2608, 2640, 2720, 1440, 1443, 1448, 1497, preferred=True),
      mode(241500, 2560, 2608, 2640, 2720, 1440, 1443, 1448, 1481)]
write("two-crtc", {
    "cadence": {"description": "hand-made two-CRTC laptop with a dock: eDP-1 1920x1080@60 on CRTC 70, "
                               "DP-1 2560x1440@144 on CRTC 71", "source": "tools/profiles/handmade.py", "vblank": True},
    "/dev/dri/card0": {
        "driver": driver("i915", "Intel Graphics", 1, 6, 0, "20201103", 1),
        "connectors": [connector(50, 14, 52, 344, 194, [edp], {"non-desktop": rng(0)}),
                       connector(51, 10, 53, 597, 336, dp, {"non-desktop": rng(0)})],
        "encoders": [{"id": 52, "type": 2, "crtc_id": 70, "possible_crtcs": 3, "possible_clones": 0},
                     {"id": 53, "type": 2, "crtc_id": 71, "possible_crtcs": 3, "possible_clones": 0}],
        "crtcs": [crtc(70, edp, 90), crtc(71, dp[0], 91)],
        "planes": [plane(40, 1, 1, 70), plane(41, 2, 1, 71), plane(42, 1, 2), plane(43, 2, 2)],
    }})
