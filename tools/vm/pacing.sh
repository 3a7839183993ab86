#!/usr/bin/env bash
# Pacing checks of `cadence run` on a real kernel (vkms in the VM, one boot):
#   - `--inject-late 100:1,250:3 --frames 400` at latency 1, 2 and 3: droppedRefreshes 4,
#     dropEvents 2, the only cause render-late (kernel flip timestamps decide it);
#   - `--rate 10:60:26`: effectiveRateHz 30, every interval 2 refreshes (summary histogram);
#   - `--content-rate 24`: the per-frame log's intervalRefreshes alternate 3,2,3,2…;
#   - `--scene bar --hud --duration 5`: runs, exits 0, its drops are printed.
# The pacing runs (first three) draw `--scene solid` so they measure the pacing core, not the
# TCG rasterizer; the last one is the real scene + HUD at 1024x768, and its drops are reported
# as measured (TCG is an emulated CPU: they are not a gate).
#
# A loaded host can stall the qemu vCPU past a vblank (the guest kernel logs "vblank timer
# overrun"); as in integration.sh a run whose drops differ from the expected count is retried up
# to twice, every attempt (rc, drops, timer overruns) is printed, and the last one is checked.
#
# Usage: tools/vm/pacing.sh [--bin PATH/TO/cadence] [--keep DIR]
#   --bin   cadence binary (default: `swift build -c release --product cadence`)
#   --keep  keep outputs in DIR (default: a temp dir, removed on success)
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
while (($#)); do
    case "$1" in
        *) vm_common_option "$@"; shift "$vm_used" ;;
    esac
done

vm_prologue pacing release
vm_out "vkms"

cat >"$work/guestp.sh" <<'GUEST'
# try NAME EXPECTED-DROPS TIMEOUT CMD...: run, record NAME.out/.err/.rc and one line per attempt
# in NAME.attempts; retry (at most twice) when the drops differ from EXPECTED-DROPS
# (- = never retry).
try() {
    name=$1; want=$2; limit=$3; shift 3
    attempt=1
    while :; do
        before=$(dmesg | grep -c 'vblank timer overrun')
        start=$(cut -d' ' -f1 /proc/uptime)
        timeout "$limit" "$@" </dev/null >"/out/$name.out" 2>"/out/$name.err"
        rc=$?
        end=$(cut -d' ' -f1 /proc/uptime)
        after=$(dmesg | grep -c 'vblank timer overrun')
        echo $rc >"/out/$name.rc"
        dropped=$(grep -o '"droppedRefreshes":[0-9]*' "/out/$name.out" | grep -o '[0-9]*$')
        [ -f "/out/$name.jsonl" ] && cp "/out/$name.jsonl" "/out/$name.attempt$attempt.jsonl"
        echo "attempt $attempt rc=$rc droppedRefreshes=${dropped:-?} timerOverruns=$((after - before)) ($start..$end s)" \
            >>"/out/$name.attempts"
        echo "case $name attempt $attempt: rc $rc dropped ${dropped:-?}" >/dev/console
        if [ "$want" = - ] || [ "$rc" != 0 ] || [ "$dropped" = "$want" ] || [ "$attempt" -ge 3 ]; then
            break
        fi
        attempt=$((attempt + 1))
    done
}
try late 4 120 cadence run --backend kms --scene solid --latency 1 --inject-late 100:1,250:3 --frames 400 --log /out/late.jsonl --json --quiet
try late2 4 120 cadence run --backend kms --scene solid --latency 2 --inject-late 100:1,250:3 --frames 400 --log /out/late2.jsonl --json --quiet
try late3 4 120 cadence run --backend kms --scene solid --latency 3 --inject-late 100:1,250:3 --frames 400 --log /out/late3.jsonl --json --quiet
try rate 0 120 cadence run --backend kms --scene solid --rate 10:60:26 --frames 150 --log /out/rate.jsonl --json --quiet
try content 0 120 cadence run --backend kms --scene solid --content-rate 24 --frames 120 --log /out/content.jsonl --json --quiet
try hud - 120 cadence run --backend kms --scene bar --hud --duration 5 --log /out/hud.jsonl --json --quiet
exit 0
GUEST

echo "== vkms: booting the VM"
t1=$(date +%s)
"$here/run.sh" --driver vkms --timeout 600 --bin "$bin" --file "$work/guestp.sh:/guestp.sh" \
    --out-dir "$out" --console "$out/console.log" -v -- sh /guestp.sh || { echo "pacing.sh: VM failed (rc $?)" >&2; exit 1; }
echo "== VM done in $(( $(date +%s) - t1 )) s"

status=0
python3 - "$out" <<'PY' || status=$?
import json, sys
out = sys.argv[1]
passed = failed = 0
def check(name, ok, detail=""):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + name + (f"  ({detail})" if detail else ""))
    if ok: passed += 1
    else: failed += 1
def load(name):
    print(f"-- {name}:")
    try:
        print(open(f"{out}/{name}.attempts").read().rstrip())
    except OSError:
        print("   no attempts recorded")
    import glob
    for f in sorted(glob.glob(f"{out}/{name}.attempt*.jsonl"))[:-1]:
        print(f"   earlier {f.rsplit('.', 2)[-2]}'s drops (retried):")
        drops(log_frames(f.rsplit('/', 1)[-1][:-6]))
    err = open(f"{out}/{name}.err").read().strip() if __import__("os").path.exists(f"{out}/{name}.err") else ""
    if err: print("   stderr: " + err.replace("\n", "\n           "))
    try:
        rc = int(open(f"{out}/{name}.rc").read())
        s = json.loads(open(f"{out}/{name}.out").read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError) as e:
        check(f"{name}: summary", False, str(e)); return None, None
    keys = ["backend", "refreshHz", "effectiveRateHz", "frames", "presented", "discarded",
            "droppedRefreshes", "dropEvents", "causes", "intervalRefreshes", "hitchTimeRatio"]
    print("   " + json.dumps({k: s.get(k) for k in keys}))
    im = s.get("intervalMs", {})
    print("   intervalMs " + "  ".join(f"{k} {im.get(k, 0):.3f}" for k in ["mean", "stddev", "p50", "p99", "max"]))
    check(f"{name}: exit 0 on kms", rc == 0 and s.get("backend") == "kms", f"rc {rc}, backend {s.get('backend')}")
    return rc, s

def log_frames(name):
    """The per-frame records of NAME.jsonl (header and end lines carry a "record" key)."""
    try:
        return [r for r in map(json.loads, filter(str.strip, open(f"{out}/{name}.jsonl"))) if "record" not in r]
    except OSError:
        return []
def drops(frames):
    for r in frames:
        if r["droppedRefreshes"] or r["outcome"] not in ("on-time",):
            print(f"   frame {r['frame']}: {r['outcome']}, late {r['lateRefreshes']}, dropped {r['droppedRefreshes']}, "
                  f"cause {r.get('cause')}, render {(r['renderEndNs'] - r['renderStartNs']) / 1e6:.2f} ms, "
                  f"scheduler delay {(r.get('schedulerDelayNs') or 0) / 1e6:.2f} ms")

# The same known answer at every latency (issue 21: latency 2-3 with a long render invented an
# unconfirmed frame and a flip-late drop).
for name, latency in (("late", 1), ("late2", 2), ("late3", 3)):
    rc, s = load(name)
    if s:
        drops(log_frames(name))
        at = f"latency {latency}"
        check(f"inject-late 100:1,250:3 at {at}: droppedRefreshes 4", s["droppedRefreshes"] == 4, s["droppedRefreshes"])
        check(f"inject-late at {at}: dropEvents 2", s["dropEvents"] == 2, s["dropEvents"])
        check(f"inject-late at {at}: causes only render-late", set(s["causes"]) == {"render-late"}, s["causes"])
        check(f"inject-late at {at}: nothing discarded or unconfirmed", s["discarded"] == 0 and s.get("unconfirmed", 0) == 0,
              f"discarded {s['discarded']}, unconfirmed {s.get('unconfirmed', 0)}")

rc, s = load("rate")
if s:
    # vkms' 1024x768 mode is 60.0038 Hz: the effective rate is exactly half the refresh.
    eff, ref = s["effectiveRateHz"], s["refreshHz"]
    check("rate 10:60:26: effectiveRateHz 30 (refresh/2)", abs(eff - ref / 2) < 1e-9 and round(eff) == 30, f"{eff} of {ref}")
    units = {k: v for k, v in s["intervalRefreshes"].items() if v}
    check("rate 10:60:26: every interval 2 refreshes", set(units) == {"2"} and units["2"] == s["presented"] - 1, units)
    check("rate 10:60:26: no drops", s["droppedRefreshes"] == 0, s["droppedRefreshes"])

rc, s = load("content")
if s:
    frames = log_frames("content")
    units = [r["intervalRefreshes"] for r in frames if r["outcome"] in ("on-time", "late")][1:]
    print("   intervalRefreshes: " + ",".join(map(str, units[:24])) + ("…" if len(units) > 24 else ""))
    # 24 on vkms' 60.0038 Hz is 3,2,3,2… except where the two clocks drift a content time just
    # past a vblank: "not before" then shows it a refresh later (3,3), never early. So check
    # the rule itself on every frame from its own kernel timestamps: shown at the first vblank
    # not before its content time (within the 83 µs cap of the timestamp uncertainty), each
    # interval 2 or 3 refreshes, and 3s and 2s alternating apart from such corrections.
    shown = [r for r in frames if r["outcome"] in ("on-time", "late")]
    per = 1e9 / s["refreshHz"]
    early = [r["frame"] for r in shown if r["flipNs"] < r["intent"]["requestedTimeNs"] - 84_000]
    needless = [r["frame"] for r in shown if r["flipNs"] - per >= r["intent"]["requestedTimeNs"] + 84_000]
    repeats = sum(1 for a, b in zip(units, units[1:]) if a == b)
    alt = (len(units) > 10 and all(u in (2, 3) for u in units) and not early and not needless
           and repeats <= max(2, len(units) // 20))
    check("content-rate 24: 3,2,3,2… in the per-frame log, each frame at the first vblank not before its time", alt,
          f"{len(units)} intervals, {repeats} drift corrections, early {early[:5]}, a refresh late {needless[:5]}")
    check("content-rate 24: no drops", s["droppedRefreshes"] == 0, s["droppedRefreshes"])

rc, s = load("hud")
if s:
    print(f"   bar+HUD at {s['refreshHz']:.3f} Hz: {s['presented']} presented of {s['frames']}, "
          f"dropped {s['droppedRefreshes']} refreshes in {s['dropEvents']} events, causes {s['causes']}, "
          f"hitch {s['hitchTimeRatio']:.1f} ms/s")
    hf = log_frames("hud")
    drops(hf)
    for r in hf:
        if r["intervalRefreshes"] > 1 and not r["droppedRefreshes"]:
            print(f"   frame {r['frame']}: shown {r['intervalRefreshes']} refreshes after the previous one, not counted as a drop "
                  f"(target sequence {r['intent'].get('targetSequence')}, sequence {r['sequence']}, "
                  f"scheduler delay {(r.get('schedulerDelayNs') or 0) / 1e6:.2f} ms)")
    rt = sorted((r["renderEndNs"] - r["renderStartNs"]) / 1e6 for r in hf)
    if rt:
        print(f"   render (scene + HUD, 1024x768, TCG): median {rt[len(rt) // 2]:.2f} ms, max {rt[-1]:.2f} ms")
    check("bar --hud --duration 5: reports its drops", isinstance(s.get("droppedRefreshes"), int) and s["frames"] > 0)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
echo "pacing wall time: $(( $(date +%s) - t0 )) s"
if [ "$status" = 0 ] && [ -z "$keep" ]; then rm -rf "$work"; elif [ "$status" != 0 ]; then echo "outputs kept in $work"; fi
exit "$status"
