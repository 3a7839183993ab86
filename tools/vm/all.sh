#!/usr/bin/env bash
# Every real-kernel check, in order: prepares the VM cache (tools/vm/prepare.sh), makes one
# release build, runs the integration tests on vkms, bochs, virtio-gpu and a VM without a card,
# then the pacing, validate, observe, fault, seat, hotplug, several-outputs, two-card and
# scanout checks, all with that build. Each step prints its wall time; the end names the steps
# that failed and repeats their failed checks, so the tail of a log says what failed.
#
# tools/test.sh runs this beside the sanitizer, fuzz and documentation steps: the guest runs
# on instruction time (vmrun.py: qemu -icount), so the host's load makes it take longer without
# changing what the guest's kernel decides or what the checks see.
#
# Usage: tools/vm/all.sh        Exits non-zero when any step failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
t_step=$SECONDS
took() { echo "-- step time: $1 $((SECONDS - t_step)) s (total $SECONDS s)"; t_step=$SECONDS; }

echo "== VM cache (tools/vm/prepare.sh)"
tools/vm/prepare.sh
took "VM cache"

echo "== VM release build (every VM check runs it)"
swift build -c release --product cadence 2>&1 | tail -n 3
release_bin="$(swift build -c release --show-bin-path)/cadence"
took "release build"

vm_rc=0
# Each step's output is kept in /tmp/cadence-vm-step-NAME.log.
vm_failed=""
vm_step() {
    local name=$1; shift
    local out="/tmp/cadence-vm-step-$name.log"
    echo "== VM $name"
    if ! "$@" 2>&1 | tee "$out"; then vm_failed="$vm_failed $name"; vm_rc=1; fi
    took "VM $name"
}
# Integration: the release build too. Its initramfs is 154 MB where a debug build's is 372 MB
# (18 s of the host's time to boot on instruction time), and its runs take less of the guest's.
vm_step integration tools/vm/integration.sh --bin "$release_bin"
vm_step pacing tools/vm/pacing.sh --bin "$release_bin"
vm_step validate tools/vm/validate.sh --bin "$release_bin"
vm_step observe tools/vm/observe.sh --bin "$release_bin"
vm_step faults tools/vm/faults.sh --bin "$release_bin"
vm_step seat tools/vm/seat.sh --bin "$release_bin"
vm_step hotplug tools/vm/hotplug.sh --bin "$release_bin"
vm_step outputs tools/vm/outputs.sh --bin "$release_bin"
vm_step cards tools/vm/cards.sh --bin "$release_bin"
vm_step scanout tools/vm/scanout.sh --bin "$release_bin"
if [ -n "$vm_failed" ]; then
    echo "== VM steps that failed:$vm_failed"
    for name in $vm_failed; do
        echo "-- $name: its failed checks (full output: /tmp/cadence-vm-step-$name.log)"
        grep -E "^FAIL |FAIL:| failed|VM failed" "/tmp/cadence-vm-step-$name.log" | tail -n 20 || true
    done
fi
exit "$vm_rc"
