#!/usr/bin/env bash
# Reading long run logs (issue 24): for each frame count, one log generated on the fake display
# at virtual time (`cadence run --backend fake --frames N --quiet --log`), then
# `cadence report LOG --output LOG.png` (and with --replay, `cadence replay LOG`) by an old
# and a new binary under /usr/bin/time -v: wall seconds, CPU seconds (user + system), MB/s of
# log per CPU second (reading + analysis + the PNG drawn; on a shared machine the wall time
# also counts waiting for a core), and peak RSS. Both printed summaries must be equal and both
# replays print the same (exit 1 otherwise); both pictures must be byte-identical for logs of
# up to 10,000 frames (ReportChart.perFrameLimit at the default 1200-pixel width): a longer log
# gets the long-run picture (issue 24, item 5), which differs from the old per-frame one by
# design, so it is not compared. Prints a Markdown table.
#
#   tools/bench/log-reading.sh --old /tmp/cadence-main --new .build/release/cadence
#   tools/bench/log-reading.sh --frames "100000 1000000 10000000" --skip-old-above 1000000
#   tools/bench/log-reading.sh --dir /tmp/logs        keep (and reuse) the logs there
#   tools/bench/log-reading.sh --replay                 replay too
#
# --new defaults to this tree's release build, --old to /tmp/cadence-main (copy main's release
# binary there first: `cp .build/release/cadence /tmp/cadence-main` in main's checkout). The
# logs are written by the new binary (the format is the same). A log already in --dir with the
# right frame count is reused.
set -euo pipefail
cd "$(dirname "$0")/../.."
frames="100000 1000000"
old=/tmp/cadence-main
new=""
dir=""
skip_old_above=0
# Pictures of logs up to this many frames are compared (the long-run picture starts above it).
per_frame_limit=10000
replay=0
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=$2; shift 2 ;;
        --old) old=$2; shift 2 ;;
        --new) new=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --skip-old-above) skip_old_above=$2; shift 2 ;;
        --replay) replay=1; shift ;;
        *) echo "log-reading.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$new" ]; then
    swift build -c release --product cadence 2>&1 | tail -n 1
    new="$(swift build -c release --show-bin-path)/cadence"
fi
[ -x "$old" ] || { echo "log-reading.sh: no old binary at $old" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "log-reading.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
if [ -z "$dir" ]; then
    dir=$(mktemp -d /tmp/cadence-logbench.XXXXXX)
    trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"

# measure NAME BIN COMMAND LOG: prints "wall cpu rss_mb" and leaves $dir/NAME.png, $dir/NAME.out.
measure() {
    local name=$1 bin=$2 command=$3 log=$4 args=()
    [ "$command" = report ] && args=(--output "$dir/$name.png")
    /usr/bin/time -v "$bin" "$command" "$log" "${args[@]}" >"$dir/$name.out" 2>"$dir/$name.time" || {
        echo "log-reading.sh: $name failed:" >&2; cat "$dir/$name.time" >&2; exit 1; }
    python3 tools/bench/parse-time.py "$dir/$name.time"
}

commands=(report)
[ "$replay" = 1 ] && commands+=(replay)

echo "| frames | log bytes | bytes/frame | command | binary | wall s | CPU s | MB/s per CPU s | peak RSS MB |"
echo "| ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |"
status=0
for n in $frames; do
    log="$dir/run-$n.jsonl"
    if ! [ -f "$log.done" ]; then
        "$new" run --backend fake --frames "$n" --quiet --log "$log" >/dev/null
        touch "$log.done"
    fi
    bytes=$(stat -L -c %s "$log")
    for command in "${commands[@]}"; do
        for which in old new; do
            bin=$old; [ "$which" = new ] && bin=$new
            if [ "$which" = old ] && [ "$skip_old_above" -gt 0 ] && [ "$n" -gt "$skip_old_above" ]; then
                echo "| $n | $bytes | $((bytes / n)) | $command | old | (not run) | | | |"
                continue
            fi
            read -r wall cpu rss < <(measure "$command-$which-$n" "$bin" "$command" "$log")
            mbs=$(python3 -c "print(f'{$bytes / 1e6 / max($cpu, 0.01):.0f}')")
            echo "| $n | $bytes | $((bytes / n)) | $command | $which | $wall | $cpu | $mbs | $rss |"
        done
        [ -f "$dir/$command-old-$n.out" ] && [ -f "$dir/$command-new-$n.out" ] || continue
        if [ "$command" = report ]; then
            if [ "$n" -le "$per_frame_limit" ] && ! cmp -s "$dir/report-old-$n.png" "$dir/report-new-$n.png"; then
                echo "pictures of $n frames differ" >&2; status=1
            fi
            # The "wrote FILE (N bytes)" line names each binary's own file; the summary line must match.
            if [ "$(tail -n 1 "$dir/report-old-$n.out")" != "$(tail -n 1 "$dir/report-new-$n.out")" ]; then
                echo "report summaries of $n frames differ" >&2; status=1
            fi
        elif ! cmp -s "$dir/replay-old-$n.out" "$dir/replay-new-$n.out"; then
            echo "replays of $n frames print differently" >&2; status=1
        fi
    done
done
exit $status
