#!/usr/bin/env bash
# Soak on the fake display in virtual time (issue 10, item 8a): one `cadence run` of N frames
# with --log, its RSS and CPU time sampled from /proc every K frames (the frame number is read
# from the log's last line as it grows). Prints one row per sample, then checks:
#   - every RSS sample after the first (the warm-up) is within 2 MiB of it,
#   - CPU per frame is flat: the mean of the last third of the windows is within 25% of the
#     first third's (virtual time: CPU time is the cost of pacing, drawing and logging frames;
#     single windows vary by ±20% on a shared machine),
#   - the log is readable by `cadence report` and `cadence replay` (replay must equal),
# and states the log's bytes per frame. Exit 0 when all hold, 1 otherwise.
#
#   tools/soak-fake.sh                         1,000,000 frames, a sample every 100,000
#   tools/soak-fake.sh --frames 100000 --every 10000
#   tools/soak-fake.sh --bin PATH              use this cadence (default: a release build)
#   tools/soak-fake.sh --no-replay             skip report/replay (replay holds the whole log in memory)
# Extra arguments after -- go to `cadence run` (e.g. -- --scene solid).
set -euo pipefail
cd "$(dirname "$0")/.."
frames=1000000
every=100000
bin=""
replay=1
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=$2; shift 2 ;;
        --every) every=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --no-replay) replay=0; shift ;;
        --) shift; extra=("$@"); break ;;
        *) echo "soak-fake.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$bin" ]; then
    swift build -c release --product cadence 2>&1 | tail -n 1
    bin="$(swift build -c release --show-bin-path)/cadence"
fi
work=$(mktemp -d /tmp/cadence-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT
log="$work/soak.jsonl"

# The run goes on for a tenth of a window past the last sample, so that no sample is taken
# while the process tears down.
"$bin" run --backend fake --frames "$(( frames + every / 10 ))" --quiet --json --log "$log" "${extra[@]}" >"$work/summary.json" 2>"$work/stderr" &
pid=$!
sampled=0
python3 - "$pid" "$log" "$frames" "$every" <<'EOF' || sampled=$?
import os, re, sys, time
pid, log, frames, every = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tick = os.sysconf("SC_CLK_TCK")
frame_re = re.compile(rb'"frame":(\d+)')

def last_frame():
    try:
        with open(log, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - 4096))
            tail = f.read()
    except OSError:
        return -1, 0
    lines = tail.split(b"\n")[:-1]  # the part after the last newline is not complete
    for line in reversed(lines):
        m = frame_re.search(line)
        if m:
            return int(m.group(1)), size
    return -1, size

def proc():
    with open(f"/proc/{pid}/status") as f:
        st = dict(l.split(":", 1) for l in f if ":" in l)
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / tick
    return int(st["VmRSS"].split()[0]), int(st["VmHWM"].split()[0]), cpu

samples = []
target = every
while target <= frames:
    try:
        rss, hwm, cpu = proc()
    except (OSError, IndexError, KeyError):
        break  # the run ended
    n, size = last_frame()
    if n + 1 >= target:
        samples.append((n + 1, rss, hwm, cpu, size))
        target += every
        continue
    time.sleep(0.01)

print(f"{'frames':>9} {'RSS MiB':>8} {'peak MiB':>8} {'Δ warm-up':>9} {'CPU s':>7} {'µs/frame':>8} {'log B/frame':>11}")
base = samples[0][1] if samples else 0
ok = True
rates = []
prev = None
for n, rss, hwm, cpu, size in samples:
    rate = ""
    if prev:
        r = (cpu - prev[3]) / (n - prev[0]) * 1e6
        rates.append(r)
        rate = f"{r:.1f}"
    d = (rss - base) / 1024
    if abs(d) > 2.0:
        ok = False
        rate += " !"
    print(f"{n:>9} {rss/1024:>8.2f} {hwm/1024:>8.2f} {d:>+9.2f} {cpu:>7.2f} {rate:>8} {size/n:>11.1f}")
    prev = (n, rss, hwm, cpu, size)
if len(rates) >= 3:
    k = len(rates) // 3
    first, last = sum(rates[:k]) / k, sum(rates[-k:]) / k
    print(f"CPU per frame: first third {first:.1f} µs, last third {last:.1f} µs ({(last / first - 1) * 100:+.1f}%)")
    if last > first * 1.25:
        ok = False
if len(samples) < 2:
    print("soak: fewer than two samples (the run ended early?)")
    ok = False
print("soak: RSS within 2 MiB of the warm-up sample and CPU per frame flat:", "yes" if ok else "NO")
sys.exit(0 if ok else 1)
EOF
rc=0
wait "$pid" || rc=$?
[ "$rc" = 0 ] || { echo "soak: cadence run exited $rc"; cat "$work/stderr"; exit 1; }
lines=$(wc -l <"$log")
bytes=$(stat -c %s "$log")
echo "log: $bytes bytes, $lines lines, $(( bytes / (lines - 2) )) bytes per frame line (header and end line included in the total)"
status=$sampled
if [ "$replay" = 1 ]; then
    if out=$( /usr/bin/time -f "%M KiB peak, %e s" "$bin" report "$log" --output "$work/soak.png" 2>&1 ); then
        echo "report: ok ($(echo "$out" | tail -n 2 | tr '\n' ' '))"
    else
        echo "report: FAILED: $out"; status=1
    fi
    if out=$( /usr/bin/time -f "%M KiB peak, %e s" "$bin" replay "$log" 2>&1 ); then
        echo "replay: equal ($(echo "$out" | tail -n 1))"
    else
        echo "replay: FAILED or differs: $(echo "$out" | tail -n 4 | tr '\n' ' ')"; status=1
    fi
fi
exit "$status"
