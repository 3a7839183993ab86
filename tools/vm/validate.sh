#!/usr/bin/env bash
# Run logs, stop signals and the validate gate on a real kernel (vkms in the VM, see
# tools/vm/run.sh), then the host side:
#   - `cadence run` stopped with SIGINT: exit 0, a complete log (end line), the summary, and the
#     CRTC restored (the CRTC lines of `cadence list` before and after are identical);
#   - `cadence run` killed with SIGKILL: every line of the log parses (no end line);
#   - `cadence run --inject-late 100:1,250:3 --log`: the accounting on real kernel timestamps;
#   - `cadence validate` on vkms: pass (exit 0) under the threshold with the default backend
#     (auto picks the card, not the fake display), fail (exit 1, one stderr line per failed
#     criterion) above it, --warmup/--window/--max-drop-event, device error (exit 2);
#   - on the host, headless: `cadence replay` of the vkms logs reproduces their summaries, and
#     `cadence report` draws them (PNG + SVG).
#
# The logged runs pace at --rate 10:10:10: under TCG a debug build needs ~13 ms to fill and
# ~2.5 ms to copy a 1024x768 frame and wakes ~4 ms after each vblank, so 60 Hz misses most
# frames and 30 Hz some (measured: 10 Hz 0 drops, 20 Hz 1, 30 Hz 19 in 6 s); at 10 Hz the
# injected lateness is the only thing that drops, so the gate can be checked exactly.
#
# Usage: tools/vm/validate.sh [--bin PATH/TO/cadence] [--keep DIR] [--pictures PREFIX]
#   --bin       cadence binary (default: `swift build --product cadence`, debug)
#   --keep      keep outputs in DIR (default: a temp dir, removed on success)
#   --pictures  also write PREFIX.png and PREFIX.svg (report of the inject-late vkms run)
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
pictures=""
while (($#)); do
    case "$1" in
        --pictures) pictures="$2"; shift 2 ;;
        *) vm_common_option "$@"; shift "$vm_used" ;;
    esac
done

vm_prologue validate debug
vm_out "vkms"

cat >"$work/guestv.sh" <<'EOF'
# rc NAME: record the exit status of the last command.
crtcs() { cadence list | grep ' CRTC [0-9]*:' ; }
crtcs >/out/crtc_before.txt 2>&1

# signal_run NAME SIGNAL [ARGS...]: a 60 s run sent SIGNAL after 4 s. A second descriptor on
# the card (opened once cadence holds DRM master) keeps the kernel's last-close handling (fbdev
# restores its console framebuffer when the last descriptor closes) from hiding what cadence
# itself restored or left behind; the CRTCs are listed before it closes.
signal_run() {
    name=$1; sig=$2; shift 2
    cadence run --backend kms --duration 60 --log "/out/$name.jsonl" "$@" >"/out/$name.out" 2>"/out/$name.err" &
    pid=$!
    sleep 3
    exec 3</dev/dri/card0
    sleep 1
    kill "-$sig" $pid
    wait $pid
    echo $? >"/out/$name.rc"
    crtcs >"/out/crtc_after_$name.txt" 2>&1
    exec 3<&-
}
signal_run int INT --csv /out/int.csv --summary /out/int_summary.json
# SIGKILL (nothing can restore the CRTC: the check shows what a killed run leaves).
signal_run kill KILL --quiet
crtcs >/out/crtc_after_close.txt 2>&1

# Injected lateness, logged for replay and report.
cadence run --backend kms --rate 10:10:10 --duration 30 --inject-late 100:1,250:3 --log /out/run.jsonl --csv /out/run.csv \
    --summary /out/run_summary.json --json >/out/run.out 2>/out/run.err
echo $? >/out/run.rc

# validate: the same lateness under and over the thresholds, and a device error. "Under" allows
# 2 refreshes over the 4 injected: the guest under TCG can hold a late frame's loop up past one
# more vblank (CI, stop 30: 5 dropped in 2 events where the run before gave 4), and this run
# checks validate's exit status, not the known answer (pacing.sh checks that, and vwin below).
cadence validate --rate 10:10:10 --duration 30 --inject-late 100:1,250:3 --max-dropped 6 --max-drop-events 2 \
    --refresh-tolerance 0.5 --min-rate 9.9 --junit /out/vpass.xml --log /out/vpass.jsonl >/out/vpass.out 2>/out/vpass.err
echo $? >/out/vpass.rc
# At 10 Hz, frame 100 (~10 s) drops 1 refresh and frame 250 (~25 s) drops 3. A 12 s warm-up
# leaves only frame 250's drop; 5 s windows from 12 s: 12-17, 17-22, 22-27 (frame 250), the
# rest only overall.
cadence validate --rate 10:10:10 --duration 30 --inject-late 100:1,250:3 --warmup 12 --window 5 --max-dropped 3 \
    --max-drop-event 3 --junit /out/vwin.xml >/out/vwin.out 2>/out/vwin.err
echo $? >/out/vwin.rc
cadence validate --backend kms --rate 10:10:10 --duration 30 --inject-late 100:1,250:3 --max-dropped 3 --max-drop-events 1 \
    --junit /out/vfail.xml --log /out/vfail.jsonl >/out/vfail.out 2>/out/vfail.err
echo $? >/out/vfail.rc
cadence validate --backend kms --device /nonexistent --duration 1 --max-dropped 0 >/out/vdev.out 2>/out/vdev.err
echo $? >/out/vdev.rc
dmesg | grep -c 'vblank timer overrun' >/out/overruns.txt
exit 0
EOF

echo "== vkms: booting the VM"
t0=$(date +%s)
"$here/run.sh" --driver vkms --timeout 600 --bin "$bin" --file "$work/guestv.sh:/guestv.sh" \
    --out-dir "$out" --console "$out/console.log" -v -- sh /guestv.sh || { echo "validate.sh: VM failed (rc $?)" >&2; exit 1; }
echo "== VM done in $(( $(date +%s) - t0 )) s; host-side checks"


echo "-- SIGINT run: rc $(rc int); stdout:"; cat "$out/int.out"; echo "-- stderr:"; cat "$out/int.err"
check "sigint: exit 0" test "$(rc int)" = 0
check "sigint: summary printed" grep -q '^end  *stopped' "$out/int.out"
check "sigint: log has its end line" sh -c "tail -n 1 '$out/int.jsonl' | grep -q '\"record\":\"end\"'"
check "sigint: log parses (report)" "$bin" report "$out/int.jsonl" --output "$out/int.svg"
check "sigint: CRTC restored" cmp -s "$out/crtc_before.txt" "$out/crtc_after_int.txt"
echo "   CRTC before: $(cat "$out/crtc_before.txt")"
echo "   CRTC after SIGINT (card still open elsewhere): $(cat "$out/crtc_after_int.txt")"
echo "   CRTC after SIGKILL (card still open elsewhere): $(cat "$out/crtc_after_kill.txt")"
echo "   CRTC after the last descriptor closed: $(cat "$out/crtc_after_close.txt")"
check "sigkill: the check can tell (a killed run leaves the CRTC changed)" sh -c "! cmp -s '$out/crtc_before.txt' '$out/crtc_after_kill.txt'"

echo "-- SIGKILL run: rc $(rc kill), $(lines "$out/kill.jsonl") lines"
check "sigkill: every line parses, no end line" sh -c "'$bin' report '$out/kill.jsonl' --output '$out/kill.png' | grep -q 'no end line'"

echo "-- inject-late run (rc $(rc run)):"; cat "$out/run.out"; cat "$out/run.err"
check "inject-late run: exit 0" test "$(rc run)" = 0

echo "-- validate pass (rc $(rc vpass)):"; tail -n 6 "$out/vpass.out"; cat "$out/vpass.err"
check "validate: pass under the thresholds (exit 0)" test "$(rc vpass)" = 0
check "validate: --backend auto judged the card (kms), not the fake display" grep -q '^backend  *kms ' "$out/vpass.out"
echo "-- validate --warmup 12 --window 5 (rc $(rc vwin)):"; grep -E '^(judged|PASS|FAIL|validate)' "$out/vwin.out" || true; cat "$out/vwin.err"
check "validate: warm-up and windows pass (exit 0)" test "$(rc vwin)" = 0
check "validate: the warm-up ignored frame 100's drop" grep -q '^PASS max-dropped: dropped refreshes 3 (limit 3)' "$out/vwin.out"
check "validate: the largest drop event is 3" grep -q '^PASS max-drop-event: largest drop event 3 refreshes (limit 3); worst 5 s window 22.0–27.0 s: largest drop event 3' "$out/vwin.out"
echo "-- validate fail (rc $(rc vfail)):"; tail -n 4 "$out/vfail.out"; echo "stderr:"; cat "$out/vfail.err"
check "validate: fail above the thresholds (exit 1)" test "$(rc vfail)" = 1
check "validate: one stderr line per failed criterion" test "$(grep -c '^FAIL' "$out/vfail.err")" = "$(grep -c '^FAIL' "$out/vfail.out")"
check "validate: junit written" grep -q '<testsuite name="cadence.validate"' "$out/vfail.xml"
echo "-- validate device error (rc $(rc vdev)): $(cat "$out/vdev.err")"
check "validate: device error exit 2, one line" sh -c "test $(rc vdev) = 2 && test $(lines "$out/vdev.err") = 1"

for log in run int vpass vfail; do
    echo "-- replay $log.jsonl on the host:"
    "$bin" replay "$out/$log.jsonl" --log-out "$out/$log.replayed.jsonl" && r=0 || r=$?
    if [ "$r" = 1 ] && python3 "$here/replay_start_only.py" "$out/$log.jsonl" "$out/$log.replayed.jsonl"; then
        # Known limitation (issue 13's closing note): where between two vblanks a run started is
        # not logged; when its first callback also woke late, the replay can aim the first
        # frames differently. Every later frame must still replay exactly (the script checks).
        echo "KNOWN replay $log: only the first frames differ (the run's start is not in the log)"
        r=0
    fi
    check "replay $log: summary reproduced exactly" test "$r" = 0
done
check "report: PNG" "$bin" report "$out/run.jsonl" --output "$out/run.png"
check "report: SVG" "$bin" report "$out/run.jsonl" --output "$out/run.svg"
if [ -n "$pictures" ]; then cp "$out/run.png" "$pictures.png"; cp "$out/run.svg" "$pictures.svg"; fi
echo "vblank timer overruns in the guest: $(cat "$out/overruns.txt")"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ -z "$keep" ] && rm -rf "$work"
[ "$fail" = 0 ]
