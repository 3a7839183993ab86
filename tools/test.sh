#!/usr/bin/env bash
# Set-up command 2 of 2 (and what CI runs): installs every apt package the tests need,
# builds, runs the unit tests, checks `cadence render` PNGs with Pillow, the HTML report's zoom in
# headless Chromium (tools/check-html-report.py), compares `cadence edid`
# with edid-decode on the EDID corpus (tools/edid), checks that the CLI uses public API only,
# lints with swift-format (tools/check-format.py: only new violations fail),
# generates the DocC documentation of every library (no warnings allowed), builds and tests the
# Examples package and runs its executable on the fake display, then boots Debian's
# kernel in qemu (TCG) and runs the real-kernel integration tests on vkms, bochs and
# virtio-gpu (and a VM without any DRM card), then the pacing and validate checks
# (tools/vm/pacing.sh, tools/vm/validate.sh) and `cadence observe` (tools/vm/observe.sh) on vkms
# and the fault checks (tools/vm/faults.sh) on all three drivers, then seat sessions through seatd
# with a VT switch mid-run (tools/vm/seat.sh) and hotplug (tools/vm/hotplug.sh) on vkms and
# several outputs on vkms2 (tools/vm/outputs.sh) and on two cards, vkms and virtio-gpu in one
# guest (tools/vm/cards.sh), and the scanout truth from vkms' CRTC CRC (tools/vm/scanout.sh),
# with a release build (all of it tools/vm/all.sh, run beside the sanitizer, PNG, fuzz and
# documentation steps; its output is printed at the end). The unit
# tests also run under AddressSanitizer and ThreadSanitizer (own build directories, .build-asan
# and .build-tsan), and every libFuzzer target (tools/fuzz) runs 30 s. Each step prints its wall
# time. Only the plain unit-test build and the release build (the VM's /metrics check) build
# hummingbird (the package trait MetricsHTTP, on by default); the sanitizer builds use
# --disable-default-traits and the fuzz and Examples packages depend on Cadence without its traits.
# Exits non-zero on any failure.
#   tools/test.sh            everything
#   tools/test.sh --unit     unit tests only (no VM)
set -euo pipefail
cd "$(dirname "$0")/.."
unit_only=0
[ "${1:-}" = "--unit" ] && unit_only=1
t_step=$SECONDS
took() { echo "-- step time: $1 $((SECONDS - t_step)) s (total $SECONDS s)"; t_step=$SECONDS; }

export DEBIAN_FRONTEND=noninteractive
sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
echo "== apt packages"
$sudo_ apt-get update -q >/dev/null
# shellcheck disable=SC2046
$sudo_ apt-get install -y -q $(cat tools/apt-packages.txt) >/dev/null
# Every library Package.swift links and every program the scripts call comes from these lists.
tools/check-install-lists.sh

echo "== unit tests (swift test)"
log=$(mktemp /tmp/cadence-unit.XXXXXX)
if ! swift test >"$log" 2>&1; then
    grep -E "✘|error:|failed|Fatal" "$log" | head -n 60 || true
    tail -n 5 "$log"
    echo "unit tests FAILED (full log: $log)"
    exit 1
fi
grep -E "^(✔|✘|━) Test run with|Executed .* tests" "$log" || tail -n 3 "$log"
took "build + unit tests"

echo "== systemd unit: systemd-analyze verify tools/systemd/cadence-observe.service (any warning fails)"
debug_bin="$(swift build --show-bin-path)/cadence"
tools/systemd/verify.sh "$debug_bin"

echo "== raster and scene tests once per kernel path (CADENCE_ISA)"
# Every path this CPU has (the cadence binary lists them) is held to the same goldens; the
# tests fail if the path asked for is not the one that ran.
paths=$("$(swift build --show-bin-path)/cadence" bench --workload fill --size 8x8 --frames 1 --warmup 0 \
    | sed -n 's/^kernels: [a-z0-9]* (available: \(.*\))$/\1/p' | tr -d ',')
[ -n "$paths" ] || { echo "cadence bench listed no kernel paths"; exit 1; }
for isa in $paths; do
    if ! CADENCE_ISA=$isa swift test --skip-build --filter 'RasterTests|ScenesTests' >"$log" 2>&1; then
        grep -E "✘|error:|Fatal" "$log" | head -n 30 || true
        echo "raster tests FAILED on CADENCE_ISA=$isa (full log: $log)"
        exit 1
    fi
    echo "CADENCE_ISA=$isa: $(grep -E "^(✔|✘|━) Test run with" "$log" || tail -n 1 "$log")"
done
took "raster tests per kernel path"

# The real-kernel checks (tools/vm/all.sh: prepare, a release build, integration, the VM steps)
# run beside every step from here on (the sanitizer steps, PNG, HTML, EDID, fuzz, lint, DocC,
# Examples). The guest runs on instruction time (tools/vm/vmrun.py: qemu -icount), so the load
# of those steps makes it slower, not different. The unit tests' wall-time limits that only
# guard against a hang are four times longer under a sanitizer (Tests/CLITests/CLISupport.swift:
# a TSan-built `cadence run` of 600 frames with writeback captures once passed 120 s beside the
# VM part). Its output is kept in a file and printed after the last step here; leaving early
# stops it.
vm_pid=""
if [ "$unit_only" = 0 ]; then
    vm_log=$(mktemp /tmp/cadence-vm.XXXXXX)
    setsid tools/vm/all.sh </dev/null >"$vm_log" 2>&1 &
    vm_pid=$!
    trap '[ -z "$vm_pid" ] || kill -- -"$vm_pid" 2>/dev/null || true' EXIT
    echo "== VM checks started beside the steps below (tools/vm/all.sh; output: $vm_log, printed at the end)"
fi

echo "== unit tests under AddressSanitizer and ThreadSanitizer"
# Separate scratch paths: a sanitized build would otherwise replace the plain one. LeakSanitizer
# runs with tools/sanitizers/lsan.supp (leaks inside Foundation and XCTest, not Cadence's).
# --disable-default-traits: no MetricsHTTP, so hummingbird and swift-nio are not built (minutes
# each); the tests of the build without HTTP (`--metrics-port` refused in one line) run here.
export LSAN_OPTIONS="suppressions=$PWD/tools/sanitizers/lsan.supp:print_suppressions=0"
# The long single-threaded known-answer runs (10 minutes of virtual time per drift/jitter cell)
# and the random-configuration properties (the reference models' fixed-rate and VRR properties,
# on the fake display, KMS over the fake device and logs, KMS against the fake display under VRR, the session library's 150 logged
# runs; the scanout verifier's 3,000 streams)
# run in the plain step above; under the sanitizers they would add 10-20 minutes of the same
# pure arithmetic, so they are skipped there (the names are regexes: PacingPropertyTests also
# skips VRRPacingPropertyTests).
san_skip='ContentRateTiesTests|contentOnADriftingJitteryPanelDropsNothing|PacingPropertyTests|KMSPacingPropertyTests|LogPacingPropertyTests|ReferenceModelTests'
san_skip+='|KMSVRRPropertyTests|timedFramesFollowTheModelOnAVRRPanel|contentAndMinimumDurationFramesAgreeOnKMSAndTheFakeDisplay|judgingAsItGoesGivesTheBatchVerdicts|theLogOfEveryRunReportsAndReplaysAsTheRun'
# Also skipped there, for the same reason: an hour of 60 Hz vblanks through the scanout verifier
# (anHourAt60HzKeepsTheWindowBounded), and the CLI suites that spawn `cadence` for the numbers,
# JSON and files it prints after single-card runs on the fake display or the fake DRM device:
# ReportsTruthTests, CLIValidateTests, CLIReportReplayTests, FakeDRMBackendTests,
# ScanoutCLITests, ObserveCLITests (--from-trace) and the 3 x 8,000-frame compressed-log round
# trip (reportAndReplayReadACompressedLogAsThePlainOne). Measured under TSan they were ~40 % of
# the step's CPU (CompressedLogCLITests 115 s, ReportsTruthTests 88 s, ScanoutCLITests 33 s,
# CLIReportReplayTests 26 s, ObserveCLITests 25 s, CLIValidateTests 24 s, FakeDRMBackendTests
# 23 s, of ~890 s), almost all of it the debug build drawing and copying frames. Their only
# threads are the scene's bands (ScenesTests draw those with several threads in-process, under
# both sanitizers), and the library code under them runs in-process under the sanitizers in its
# own tests (KMSDisplayTests over the fake device, CompressedLogTests and the
# replay/report/validate suites, the scanout verifier's, DRMTraceTests). The CLI suites whose
# runs have threads of their own stay: several cards (SeveralCardsTests, a pacing thread per
# card), --metrics-textfile (MetricsCLITests, the feed's thread), writeback captures
# (WritebackCLITests, the capture queue), signals (SignalFaultTests, OutputFaultTests,
# CLIRunTests), and the other CLI suites.
san_skip+='|anHourAt60HzKeepsTheWindowBounded|ReportsTruthTests|CLIValidateTests|CLIReportReplayTests|FakeDRMBackendTests'
san_skip+='|ScanoutCLITests|ObserveCLITests|reportAndReplayReadACompressedLogAsThePlainOne'
for san in address thread; do
    if ! swift test --disable-default-traits --sanitize="$san" --scratch-path ".build-${san:0:1}san" --skip "$san_skip" >"$log" 2>&1; then
        grep -E "✘|error:|ERROR: (Address|Thread)Sanitizer|WARNING: ThreadSanitizer|SUMMARY|Fatal" "$log" | head -n 60 || true
        echo "unit tests under --sanitize=$san FAILED (full log: $log)"
        exit 1
    fi
    echo "--sanitize=$san: $(grep -E "^(✔|✘|━) Test run with" "$log" || tail -n 1 "$log")"
    took "unit tests --sanitize=$san"
done

echo "== PNG check with Pillow (cadence render)"
python3 -c "import PIL" 2>/dev/null || python3 -m pip install -q pillow >/dev/null
python3 tools/bench/check_png.py "$debug_bin"
took "PNG check"

echo "== HTML report zoom in headless Chromium (tools/check-html-report.py)"
# One line when it passes; every check's line when one fails.
if ! html_out=$(python3 tools/check-html-report.py "$debug_bin" 2>&1); then echo "$html_out"; exit 1; fi
echo "$html_out" | tail -n 1
took "HTML report check"

echo "== EDID corpus: cadence edid vs edid-decode, field by field (tools/edid)"
tools/edid/corpus.sh
python3 tools/edid/compare.py --cadence "$debug_bin"
took "EDID corpus"

echo "== fuzz: every libFuzzer target 30 s (tools/fuzz)"
tools/fuzz/run.sh --build
# Two at a time (time-bound runs; the CI runner has at least 2 cores): 4 rounds for eight.
# --no-build: the build above made every target; run.sh's own build check per target (a SwiftPM
# run with an uncached manifest, the pair waiting for each other on the .build lock) added ~6 s
# to each 30 s round (CI: rounds of 35.8 s), ~20 s in all.
fuzz_rc=0
set -- $(tools/fuzz/run.sh --list)
while (($#)); do
    pids=()
    for target in "$1" "${2:-}"; do
        [ -n "$target" ] || continue
        (tools/fuzz/run.sh --no-build "$target" 30 >"$log.fuzz-$target" 2>&1) & pids+=($!)
    done
    failed=()
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || { fuzz_rc=1; failed+=("$i"); }; done
    # A failed target prints all its lines (the error, the input in base64); a passing one its last.
    for target in "$1" "${2:-}"; do [ -n "$target" ] && tail -n 1 "$log.fuzz-$target"; done
    for i in "${failed[@]}"; do target=$([ "$i" = 0 ] && echo "$1" || echo "$2"); cat "$log.fuzz-$target"; done
    shift; if (($#)); then shift; fi
done
[ "$fuzz_rc" = 0 ] || { echo "a fuzz target found a crash or timeout (logs: $log.fuzz-*)"; exit 1; }
took "fuzz targets"

echo "== the CLI uses the libraries' public API only"
tools/check-cli-public-api.sh
echo "== layers: CadenceCore imports no Foundation; CadenceCore, KMSDisplay and DRM quote no CLI flags"
if grep -rn "^import Foundation" Sources/CadenceCore || grep -rnE -- '--[a-z]' Sources/CadenceCore Sources/KMSDisplay Sources/DRM; then
    echo "a library below the CLI knows the CLI (lines above)"
    exit 1
fi

echo "== swift-format: no new violations (.swift-format; per-file counts in tools/format-baseline.txt)"
python3 tools/check-format.py

echo "== DocC: every library product, no warnings"
# The targets of every library product in Package.swift.
doc_targets=$(swift package dump-package | python3 -c 'import json, sys
p = json.load(sys.stdin)
print(" ".join(sorted({t for pr in p["products"] if "library" in pr["type"] for t in pr["targets"]})))')
doc_args=()
for t in $doc_targets; do doc_args+=(--target "$t"); done
if ! swift package --disable-sandbox generate-documentation "${doc_args[@]}" >"$log" 2>&1; then
    grep -E -A4 "error|warning:" "$log" | head -n 60 || tail -n 20 "$log"
    echo "DocC generation FAILED (full log: $log)"
    exit 1
fi
# SwiftPM's "unhandled file" notes about a dependency's own checkout (swift-distributed-tracing's
# CMakeLists.txt, through hummingbird) are not about this package: every other warning counts.
doc_only="$log.ours"
awk '/^warning: .*which are unhandled; explicitly declare/ { held = $0; next }
     held != "" { if ($0 !~ /\/\.build\/checkouts\//) { print held; print }; held = ""; next }
     { print }' "$log" >"$doc_only"
doc_warnings=$(grep -c "warning:" "$doc_only" || true)
if [ "$doc_warnings" != 0 ]; then
    grep -A4 "warning:" "$doc_only" | head -n 80
    echo "DocC: $doc_warnings warnings (full log: $log)"
    exit 1
fi
echo "DocC: $doc_targets: 0 warnings"

echo "== Examples package: builds against this checkout by path, test passes, runs on the fake display"
if ! { swift build --package-path Examples --build-tests && swift test --package-path Examples --skip-build; } >"$log" 2>&1; then
    grep -E "✘|error:|failed|Fatal" "$log" | head -n 40 || tail -n 20 "$log"
    echo "Examples FAILED (full log: $log)"
    exit 1
fi
grep -E "^(✔|✘|━) Test run with" "$log" || tail -n 3 "$log"
example_rc=0
"$(swift build --package-path Examples --show-bin-path)/moving-bar" >"$log" 2>&1 || example_rc=$?
python3 tools/check_example_output.py fake "$log" --rc "$example_rc"
# The session example: what `cadence run --connector all --log --csv` does, in a scratch folder.
run_all_dir=$(mktemp -d)
example_rc=0
run_all_bin="$(swift build --package-path Examples --show-bin-path)/run-all"
(cd "$run_all_dir" && "$run_all_bin") >"$log" 2>&1 || example_rc=$?
python3 tools/check_example_output.py run-all "$log" "$run_all_dir" --rc "$example_rc"
rm -rf "$run_all_dir"

[ "$unit_only" = 1 ] && exit 0

echo "== VM checks (tools/vm/all.sh, running since the raster tests ended)"
vm_rc=0
wait "$vm_pid" || vm_rc=$?
vm_pid=""
cat "$vm_log"
took "waiting for the VM checks"
exit "$vm_rc"
