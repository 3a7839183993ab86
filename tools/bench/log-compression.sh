#!/usr/bin/env bash
# Compressed run logs (issue 24, item 3): for each frame count, one run on the fake display at
# virtual time logged plain (`--log run-N.jsonl`) and one logged compressed
# (`--log run-N.jsonl.zst`), each under /usr/bin/time -v. Prints two Markdown tables:
#   1. the plain log compressed by the command-line tools (gzip -1/-6, zstd -1/-3): size,
#      ratio, bytes/frame, CPU seconds to compress and to decompress (what chose zstd -1);
#   2. per log: bytes, bytes/frame, the run's CPU seconds (the cost of writing it), and
#      `cadence report LOG --output LOG.png`: wall s, CPU s, peak RSS; the two reports must print
#      the same summary line and draw byte-identical pictures (exit 1 otherwise).
#
#   tools/bench/log-compression.sh                           100000 frames, this tree's release build
#   tools/bench/log-compression.sh --frames "100000 1000000" --bin .build/release/cadence
#   tools/bench/log-compression.sh --dir /tmp/logs           keep the logs there
set -euo pipefail
cd "$(dirname "$0")/../.."
frames="100000"
bin=""
dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        *) echo "log-compression.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$bin" ]; then
    swift build -c release --product cadence 2>&1 | tail -n 1
    bin="$(swift build -c release --show-bin-path)/cadence"
fi
[ -x /usr/bin/time ] || { echo "log-compression.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
command -v zstd >/dev/null || { echo "log-compression.sh: needs zstd (apt-get install zstd)" >&2; exit 2; }
if [ -z "$dir" ]; then
    dir=$(mktemp -d /tmp/cadence-zlogbench.XXXXXX)
    trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"

# timed NAME COMMAND...: runs COMMAND under /usr/bin/time -v (stdout to $dir/NAME.out); prints
# "wall cpu rss_mb".
timed() {
    local name=$1
    shift
    /usr/bin/time -v "$@" >"$dir/$name.out" 2>"$dir/$name.time" || {
        echo "log-compression.sh: $name failed:" >&2; cat "$dir/$name.time" >&2; exit 1; }
    python3 tools/bench/parse-time.py "$dir/$name.time"
}

status=0
declare -A runcpu
for n in $frames; do
    for ext in jsonl jsonl.zst; do
        log="$dir/run-$n.$ext"
        read -r _ cpu _ < <(timed "run-$n-$ext" "$bin" run --backend fake --frames "$n" --quiet --log "$log")
        runcpu[$n-$ext]=$cpu
    done
done

echo "| frames | tool | bytes | ratio | bytes/frame | compress CPU s | decompress CPU s |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for n in $frames; do
    plain="$dir/run-$n.jsonl"
    pbytes=$(stat -c %s "$plain")
    for t in "gzip -1" "gzip -6" "zstd -1" "zstd -3"; do
        read -r tool level <<<"$t"
        read -r _ ccpu _ < <(timed "c-$n-$tool$level" "$tool" "$level" -c -f "$plain")
        cp "$dir/c-$n-$tool$level.out" "$dir/c.bin"
        read -r _ dcpu _ < <(timed "d-$n-$tool$level" "$tool" -d -c "$dir/c.bin")
        cbytes=$(stat -c %s "$dir/c.bin")
        python3 -c "print(f'| $n | $t | $cbytes | {$pbytes / $cbytes:.1f} | {$cbytes / $n:.1f} | $ccpu | $dcpu |')"
        rm -f "$dir/c.bin" "$dir/c-$n-$tool$level.out" "$dir/d-$n-$tool$level.out"
    done
done
echo
echo "| frames | log | bytes | bytes/frame | run CPU s | report wall s | report CPU s | report peak RSS MB |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for n in $frames; do
    for ext in jsonl jsonl.zst; do
        log="$dir/run-$n.$ext"
        bytes=$(stat -c %s "$log")
        read -r wall cpu rss < <(timed "report-$n-$ext" "$bin" report "$log" --output "$dir/report-$n-$ext.png")
        python3 -c "print(f'| $n | .$ext | $bytes | {$bytes / $n:.1f} | ${runcpu[$n-$ext]} | $wall | $cpu | $rss |')"
    done
    if ! cmp -s "$dir/report-$n-jsonl.png" "$dir/report-$n-jsonl.zst.png"; then echo "pictures of $n frames differ" >&2; status=1; fi
    if [ "$(tail -n 1 "$dir/report-$n-jsonl.out")" != "$(tail -n 1 "$dir/report-$n-jsonl.zst.out")" ]; then
        echo "report summaries of $n frames differ" >&2; status=1
    fi
done
exit $status
