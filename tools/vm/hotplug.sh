#!/usr/bin/env bash
# Hotplug on a real kernel (issue 9, item 5): one vkms VM (tools/vm/run.sh), guest side
# tools/vm/hotplug_guest.sh, checks hotplug_check.py. The connector Virtual-1 is forced off and
# on through /sys/class/drm/card0-Virtual-1/status, each write followed by a `change` written to
# /sys/class/drm/card0/uevent (vkms on Linux 6.1 sends no uevent for a forced status); the guest
# runs no udevd, so cadence's libudev monitor reads the kernel's netlink source.
#   - `list --watch --json`: the initial status line, Virtual-1 connected→disconnected, then
#     disconnected→connected with its mode; exit 0 on SIGINT;
#   - `run` on Virtual-1 forced off mid-run: exit 1 within 1 s of the status write, endReason
#     "disconnected: connector Virtual-1 disconnected" in the summary and the log's end line,
#     frames not shown failed with cause disconnected, one stderr line;
#   - a change uevent with the connector still connected: the run completes (exit 0);
#   - `validate` with the connector forced off: exit 1, "FAIL output: the output was unplugged".
#
# Usage: tools/vm/hotplug.sh [--bin PATH/TO/cadence] [--keep DIR]
#   --bin     cadence binary (default: `swift build -c release --product cadence`)
#   --keep    keep outputs in DIR (default: a temp dir, removed on success)
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
while (($#)); do vm_common_option "$@"; shift "$vm_used"; done

vm_prologue hotplug release
vm_out "vkms"
vm_guest_check hotplug vkms 300
