#!/usr/bin/env bash
# CI integration tests on a real kernel: runs `cadence list` and `cadence measure` inside
# the VM (tools/vm/run.sh) on vkms, bochs and virtio-gpu, plus bad-input and device-error
# cases (no permission, another DRM master: exit 2 with the reason, never the fake display),
# and on a VM with no DRM driver at all (`none`: run falls back to the fake display and says
# so, validate exits 2), a long run on vkms whose log rotates (each file through report), and
# checks the results (tools/vm/integration_check.py); on vkms also `cadence run
# --metrics-port/--metrics-textfile` (tools/vm/metrics_check.py). One VM boot
# per driver: a guest script runs every case and writes <case>.out/.err/.rc/.time into a
# shared directory. vkms boots alone; bochs, virtio-gpu and none (no vblank) boot at once.
#
# Usage: tools/vm/integration.sh [--bin PATH/TO/cadence] [--example PATH/TO/moving-bar]
#                                [--driver vkms|bochs|virtio|none]... [--keep DIR]
#   --bin     use this cadence binary (default: `swift build --product cadence`, debug)
#   --example use this build of Examples' moving-bar (default: built from Examples/, debug); it
#             runs on vkms (KMS) and in the VM without a card (the fake display)
#   --driver  only these drivers (default: all four)
#   --keep    keep the per-case outputs in DIR (default: a temp dir, removed on success)
# On every driver `drm_info -j` (the host's drm-info, copied in) is captured and read back with
# `cadence list --backend fake-drm:<capture>`: the same connectors and modes as `cadence list`.
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
example=""
drivers=()
while (($#)); do
    case "$1" in
        --example) example="$2"; shift 2 ;;
        --driver) drivers+=("$2"); shift 2 ;;
        *) vm_common_option "$@"; shift "$vm_used" ;;
    esac
done
((${#drivers[@]})) || drivers=(vkms bochs virtio none)

vm_prologue integration debug
# Examples' moving-bar: a program built against Cadence's public API only (Examples/).
if [ -z "$example" ]; then
    echo "== building Examples' moving-bar (debug)"
    (cd "$repo" && swift build --package-path Examples --product moving-bar 2>&1 | tail -n 1)
    example="$(cd "$repo" && swift build --package-path Examples --show-bin-path)/moving-bar"
fi
[ -x "$example" ] || { echo "integration.sh: no moving-bar binary at $example" >&2; exit 2; }
# The guest gets the binaries without their DWARF (symbols stay): a debug cadence with
# hummingbird (the MetricsHTTP trait) is ~75 MB (55 MB without DWARF), and the initramfs
# (~360 MB with Mesa for GBM) must unpack in the guest's memory: 2 GiB (run.sh --mem).
mkdir -p "$work/bin"
objcopy --strip-debug "$bin" "$work/bin/cadence"
objcopy --strip-debug "$example" "$work/bin/moving-bar"
bin="$work/bin/cadence"; example="$work/bin/moving-bar"

# Harness self-check, independent of cadence: vkms vblanks tick, bochs/virtio have none.
vm_smoke

# Guest-side runner: `run NAME TIMEOUT CMD...` records NAME.out/.err/.rc/.time in /out.
cat >"$work/guest.sh" <<'EOF'
run() {
    name=$1; limit=$2; shift 2
    start=$(cut -d' ' -f1 /proc/uptime)
    timeout "$limit" "$@" </dev/null >"/out/$name.out" 2>"/out/$name.err"
    echo $? >"/out/$name.rc"
    end=$(cut -d' ' -f1 /proc/uptime)
    echo "$start $end" >"/out/$name.time"
    echo "case $name: rc $(cat "/out/$name.rc") ($start..$end s)" >/dev/console
}
# `measure_hw NAME TIMEOUT CMD...`: a hardware-vblank measurement. On a loaded host the
# qemu vCPU thread can be delayed past a vblank (when vkms' own timer is late the kernel
# logs "vblank timer overrun"), which shows up as missed vblanks that are the host's, not
# cadence's. A run with missed vblanks is retried up to twice; every attempt (rc, missed,
# timer overruns) is recorded in NAME.attempts and printed by the check, and the last one
# is checked, so a systematic drop still fails.
measure_hw() {
    name=$1; shift
    attempt=1
    while :; do
        before=$(dmesg | grep -c 'vblank timer overrun')
        run "$name" "$@"
        after=$(dmesg | grep -c 'vblank timer overrun')
        rc=$(cat "/out/$name.rc")
        missed=$(grep -o '"missedVblanks" *: *[0-9]*' "/out/$name.out" | grep -o '[0-9]*$')
        echo "attempt $attempt rc=$rc missedVblanks=${missed:-?} timerOverruns=$((after - before))" \
            >>"/out/$name.attempts"
        if [ "$rc" = 0 ] && [ "$missed" = 0 ] || [ "$attempt" -ge 3 ] || [ "$rc" != 0 ]; then
            break
        fi
        attempt=$((attempt + 1))
    done
}
# `held NAME TIMEOUT CMD...`: runs CMD while vblank-smoke holds DRM master with a mode set.
held() {
    name=$1; limit=$2; shift 2
    : >/tmp/hold.out
    vblank-smoke --hold 20 >/tmp/hold.out &
    holder=$!
    n=0
    until grep -q driver= /tmp/hold.out 2>/dev/null; do
        n=$((n+1)); [ $n -gt 100 ] && { echo "holder did not start" >"/out/$name.err"; echo 99 >"/out/$name.rc"; kill $holder; return; }
        sleep 0.1
    done
    run "$name" "$limit" "$@"
    kill $holder; wait $holder 2>/dev/null
}
driver=$1
if [ "$driver" = none ]; then
    # No DRM driver loaded, no display device: the machine has no card at all.
    run nocard_run 120 cadence run --duration 1 --quiet --json
    run nocard_validate 120 cadence validate --duration 1 --max-dropped 0 --junit /out/nocard.xml
    run nocard_validate_fake 120 cadence validate --backend fake --duration 1 --max-dropped 0 --junit /out/nocard_fake.xml
    run nocard_run_kms 60 cadence run --backend kms --duration 1
    run nocard_list 60 cadence list
    run nocard_measure 60 cadence measure --duration 1
    run nocard_example 60 moving-bar
    exit 0
fi
expect=none
[ "$driver" = vkms ] && expect=vblank
run smoke 60 vblank-smoke --seconds 2 --expect $expect
run list 120 cadence list
run list_json 120 cadence list --json
# The fake DRM backend reads this very device's drm_info -j capture as a profile.
drm_info -j >/out/drm_info.json 2>/out/drm_info.err
run profile_list 60 cadence list --backend fake-drm:/out/drm_info.json --json
# Panel identity: the connector's EDID through the DRM property and through sysfs (vkms has
# none; bochs and virtio-gpu carry QEMU's), and validate's --expect-* criteria.
run edid_connector 60 cadence edid --connector Virtual-1 --json
run edid_sysfs 60 cadence edid /sys/class/drm/card0-Virtual-1/edid --json
cat /sys/class/drm/card0-Virtual-1/edid >/out/edid.bin 2>/dev/null
if [ "$driver" = vkms ]; then
    run expect_noedid 120 cadence validate --duration 1 --scene solid --quiet --expect-monitor "QEMU Monitor" --expect-mode 1024x768@60
else
    run expect_ok 120 cadence validate --duration 1 --scene solid --quiet --expect-monitor "QEMU Monitor" --expect-mode 1280x800@74.99
    run expect_wrong 120 cadence validate --duration 1 --scene solid --quiet --expect-monitor "DELL U2720Q" --expect-mode 1280x800@74.99
fi
if [ "$driver" = vkms ]; then
    measure_hw measure 120 cadence measure --duration 10 --json
else
    run measure 120 cadence measure --duration 10 --json
fi
if [ "$driver" = vkms ]; then
    measure_hw measure_144 120 cadence measure --mode 1024x768@144 --duration 10 --json
    measure_hw measure_gbm 120 cadence measure --allocator gbm --duration 3 --json
    measure_hw measure_legacy 120 cadence measure --api legacy --duration 3 --json
    # Examples' moving-bar on the real display: 5 s at 60 Hz. Vblank timer overruns during
    # the run (the host delayed the VM) are recorded so that the check can excuse drops.
    before=$(dmesg | grep -c 'vblank timer overrun')
    run example 120 moving-bar
    echo $(( $(dmesg | grep -c 'vblank timer overrun') - before )) >/out/example.overruns
    # Prometheus metrics of a run (tools/vm/metrics_check.py): /metrics scraped from inside the
    # guest mid-run (polled until frames are counted), the textfile written at the end.
    ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
    cadence run --backend kms --scene solid --duration 6 --inject-late 60:1,150:3 --quiet --json \
        --metrics-port 9464 --metrics-textfile /out/run_metrics.prom >/out/run_metrics.out 2>/out/run_metrics.err &
    mp=$!
    i=0
    while [ $i -lt 60 ]; do
        i=$((i + 1))
        sleep 0.25
        wget -q -O /out/run_scrape.txt http://127.0.0.1:9464/metrics 2>/dev/null || continue
        grep -q '^cadence_frames_presented_total{.*} [1-9]' /out/run_scrape.txt && break
    done
    wait $mp; echo $? >/out/run_metrics.rc
    # VRR: vkms has no vrr_capable property, so the real KMS path reading it refuses --vrr on
    # and runs --vrr auto at the fixed refresh, saying why.
    run vrr_on 60 cadence run --vrr on --duration 1 --scene solid
    run vrr_auto 60 cadence run --vrr auto --rate 0:144:90 --duration 2 --scene solid --quiet --json
    run bad_list_devnull 60 cadence list --device /dev/null
    run bad_measure_devnull 60 cadence measure --device /dev/null --duration 1
    run bad_list_nonexistent 60 cadence list --device /nonexistent
    run bad_measure_nonexistent 60 cadence measure --device /nonexistent --duration 1
    run bad_connector 60 cadence measure --connector NOPE --duration 1
    run bad_mode 60 cadence measure --mode 1x1@7 --duration 1
    chmod 600 /dev/dri/card0
    run bad_no_permission 60 su -s /bin/sh nobody -c '/bin/cadence measure --duration 1'
    # run and validate (default --backend auto) as uid nobody: exit 2 with the reason, never
    # the fake display.
    run bad_run_no_permission 60 su -s /bin/sh nobody -c '/bin/cadence run --duration 1'
    run bad_validate_no_permission 60 su -s /bin/sh nobody -c '/bin/cadence validate --duration 1 --max-dropped 0'
    # Another client holds DRM master with a mode set.
    held bad_other_master 60 cadence measure --duration 1
    held bad_run_other_master 60 cadence run --duration 1
    held bad_validate_other_master 60 cadence validate --duration 1 --max-dropped 0
    # Long runs: --duration 0 until SIGTERM, the log rotating at 64K with 3 earlier files kept;
    # then report (and replay, information only) on every file on its own.
    cadence run --duration 0 --scene solid --quiet --json --log /out/rot.jsonl --log-max-size 64K --log-keep 3 \
        </dev/null >/out/rot_run.out 2>/out/rot_run.err &
    rotpid=$!
    n=0
    until [ -f /out/rot.jsonl.3 ] && grep -q '"segment":5' /out/rot.jsonl 2>/dev/null || [ $n -ge 600 ]; do n=$((n+1)); sleep 0.1; done
    kill -TERM $rotpid; wait $rotpid; echo $? >/out/rot_run.rc
    for f in rot.jsonl rot.jsonl.1 rot.jsonl.2 rot.jsonl.3 rot.jsonl.4; do
        [ -f /out/$f ] || continue
        run "report_$f" 120 cadence report /out/$f --output /tmp/$f.svg
        run "replay_$f" 300 cadence replay /out/$f
    done
fi
if [ "$driver" = virtio ]; then
    run bad_disconnected 60 cadence measure --connector Virtual-2 --duration 1
fi
exit 0
EOF

# boot DRIVER: one VM running guest.sh for DRIVER into $work/DRIVER (emptied by vm_out first);
# run.sh's status goes to $work/DRIVER/vm.rc for the check.
boot() {
    local driver=$1 rc=0 extra=()
    # virtio with two outputs: Virtual-2 exists but is disconnected.
    [ "$driver" = virtio ] && extra=(--outputs 2)
    # vkms also measures with GBM buffers: Mesa's kms_swrast closure in the guest.
    [ "$driver" = vkms ] && extra=(--gbm)
    "$here/run.sh" --driver "$driver" ${extra[@]+"${extra[@]}"} --timeout 900 --mem 2048 --bin "$bin" --bin "$smoke" --bin "$example" --bin "$(command -v drm_info)" \
        --file "$work/guest.sh:/guest.sh" --out-dir "$work/$driver" --console "$work/$driver/console.log" \
        -v -- sh /guest.sh "$driver" || rc=$?
    echo "$rc" >"$work/$driver/vm.rc"
}
# vkms boots alone: its measurements are timed against the host's clock (a busy host delays the
# qemu vCPU past vblanks). bochs, virtio-gpu and the VM without a card have no vblank and nothing
# there is judged by time (measure only counts flips, validate --expect-* reads the EDID), so
# those VMs boot at once, each qemu on its own vCPU thread: ~40-50 s instead of ~100 s one
# after the other (CI: 35 + 37 + 27 s). Each one's output is printed after all have ended.
status=0
together=()
for driver in "${drivers[@]}"; do
    vm_out "$driver"
    [ "$driver" = vkms ] || { together+=("$driver"); continue; }
    echo "== $driver: booting the VM"
    boot "$driver"
done
if ((${#together[@]})); then
    echo "== ${together[*]}: booting the VMs at once"
    pids=()
    for driver in "${together[@]}"; do
        boot "$driver" >"$work/$driver.vm.log" 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || true; done
    for driver in "${together[@]}"; do
        echo "== $driver: the VM's output"
        cat "$work/$driver.vm.log"
    done
fi

CADENCE_BIN="$bin" python3 "$here/integration_check.py" "$work" "${drivers[@]}" || status=$?
if [[ " ${drivers[*]} " == *" vkms "* ]]; then
    python3 "$here/metrics_check.py" "$work/vkms" || status=1
fi
echo "integration wall time: $(( $(date +%s) - t0 )) s"
if [ "$status" = 0 ] && [ -z "$keep" ]; then
    rm -rf "$work"
elif [ "$status" != 0 ]; then
    echo "outputs kept in $work"
fi
exit "$status"
