#!/usr/bin/env bash
# Several outputs on a real kernel (issue 9, item 4): one VM with vkms2 (vkms patched by
# vkms-two-outputs.patch: Virtual-1 and Virtual-2 connected, each on its own CRTC with its own
# vblank timer), guest side tools/vm/outputs_guest.sh, checks outputs_check.py:
#   - the card: both connectors connected; vblank-smoke (independent of cadence) sees each CRTC
#     tick at its mode's refresh and flip;
#   - `run --connector all` and `run --connector Virtual-1 --connector Virtual-2` (5 s each):
#     exit 0, a summary per output (JSON and text) and the total, each output's log with its
#     connector, every frame on its own CRTC (the two differ), kernel sequences that only skip
#     the refreshes counted as dropped on the frame after them, the summary's drops equal to the
#     log's, each with a cause, the refresh measured from the flip timestamps equal to the
#     mode's; drops are printed next to the guest's vblank-timer overruns, not judged;
#   - `run --connector all --inject-late Virtual-2=100:1,250:3 --frames 400`: Virtual-2 drops
#     exactly 4 refreshes in 2 events (frames 100 and 250, render-late), Virtual-1 none;
#   - `validate` over both outputs: exit 0 under the thresholds; with a 3-refresh drop injected
#     on Virtual-2 and --max-drop-event 2: exit 1, only Virtual-2's criterion fails.
# Scripted cases are retried (three attempts at most) when a loaded host drops refreshes they do
# not expect; every attempt is printed with its vblank-timer overruns and the last is checked.
#
# Usage: tools/vm/outputs.sh [--bin PATH/TO/cadence] [--keep DIR]
#   --bin     cadence binary (default: `swift build -c release --product cadence`)
#   --keep    keep outputs in DIR (default: a temp dir, removed on success)
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
while (($#)); do vm_common_option "$@"; shift "$vm_used"; done

vm_prologue outputs release
vm_out "vkms2"
vm_smoke
vm_guest_check outputs vkms2 600 --bin "$smoke"
