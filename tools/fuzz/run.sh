#!/usr/bin/env bash
# Builds and runs one libFuzzer target (tools/fuzz/Targets/NAME) for SECONDS:
#   tools/fuzz/run.sh NAME SECONDS [libFuzzer options...]
#   tools/fuzz/run.sh --list               the targets
#   tools/fuzz/run.sh --build              build every target, run none
#   tools/fuzz/run.sh --no-build NAME SECONDS [...]   run a target --build has built (CI: the
#                                          build check per target is a SwiftPM run of its own,
#                                          manifest uncached, ~3 s, and the targets run two at
#                                          a time wait for each other's on the .build lock)
# Build: swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
# (in tools/fuzz/.build; lld, because gold fails on the ASan-instrumented Swift objects). The committed seeds (tools/fuzz/corpus/NAME) are read, never written:
# new inputs go to tools/fuzz/.build/corpus/NAME, crashes to tools/fuzz/.build/artifacts/.
# Limits: -timeout=1 (an input taking > 1 s is a failure), -rss_limit_mb=2048 (also the
# largest single malloc), and tools/fuzz/dict/NAME.dict when present.
# Prints libFuzzer's last status line and a summary; exit 0 when nothing was found.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
targets=$(ls Targets)
# The manifest lists Targets/ when it is evaluated, which SwiftPM's shared manifest cache cannot
# see: once in a local CI run a build found "no product named 'fuzz-profile'" although the target
# was there and built (most likely a cached evaluation from an earlier checkout at the same path).
# So the manifest is never taken from the cache.
swiftpm=(--manifest-cache none)
build() {
    # A target that does not compile fails the build (and CI), not only its own run.
    local out rc=0
    out=$(swift build -c release "${swiftpm[@]}" --disable-build-manifest-caching "$@" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld 2>&1) || rc=$?
    echo "$out" | grep -E "error|warning: unre|Compiling|Build complete" | grep -v "^\[" || true
    return "$rc"
}
case "${1:-}" in
    --list) echo "$targets"; exit 0 ;;
    --build) build; exit 0 ;;
    ""|-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2 ;;
esac
prebuilt=0
[ "$1" = --no-build ] && { prebuilt=1; shift; }
name=${1:?"run.sh [--no-build] NAME SECONDS"}; seconds=${2:?"run.sh [--no-build] NAME SECONDS"}; shift 2
echo "$targets" | grep -qx "$name" || { echo "run.sh: no fuzz target '$name' (have: $(echo $targets))" >&2; exit 2; }
[ "$prebuilt" = 1 ] || build --product "fuzz-$name"
bin="$(swift build -c release "${swiftpm[@]}" --show-bin-path -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)/fuzz-$name"
[ -x "$bin" ] || { echo "run.sh: build of fuzz-$name failed$([ "$prebuilt" = 0 ] || echo " (--no-build: run --build first)")" >&2; exit 2; }
work=".build/corpus/$name"; art=".build/artifacts"
mkdir -p "$work" "$art" "corpus/$name"
dict=(); [ -f "dict/$name.dict" ] && dict=("-dict=dict/$name.dict")
log=".build/fuzz-$name.log"
rc=0
# Swift's own crash backtracer trips ASan; libFuzzer prints the trap's stack itself.
SWIFT_BACKTRACE=enable=no "$bin" "$work" "corpus/$name" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 \
    -artifact_prefix="$art/$name-" -print_final_stats=1 "${dict[@]}" "$@" >"$log" 2>&1 || rc=$?
grep -E "^#[0-9]+.*(DONE|pulse|NEW|REDUCE)" "$log" | tail -n 1 || true
grep -E "ERROR|SUMMARY|Test unit written|ALARM|out-of-memory|Fatal error|deadly signal" "$log" | head -n 20 || true
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
last=$(grep -E "^#[0-9]+" "$log" | tail -n 1)
cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p'); ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
# A crash or timeout found on a CI runner is gone with the runner: the input is printed (up to
# 16 KB, base64) so that it can be rebuilt with `base64 -d` and replayed: `fuzz-NAME FILE`.
if [ "$rc" != 0 ]; then
    sed -n 's/.*Test unit written to //p' "$log" | while read -r unit; do
        [ -f "$unit" ] || continue
        size=$(stat -c %s "$unit")
        if [ "$size" -le 16384 ]; then echo "input $unit ($size bytes, base64): $(base64 -w 0 "$unit")"; else echo "input $unit: $size bytes, not printed"; fi
    done
fi
echo "fuzz-$name: ${seconds} s, ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, peak RSS ${rss:-?} MB, exit $rc (log $here/$log)"
exit "$rc"
