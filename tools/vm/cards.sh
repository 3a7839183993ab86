#!/usr/bin/env bash
# Outputs on two cards in one run (issue 9, item 4): one VM with vkms and virtio-gpu loaded
# (`run.sh --driver vkms+virtio`), guest side tools/vm/cards_guest.sh (finds each card by its
# driver, never by its number), checks cards_check.py:
#   - the cards: two, one vkms and one virtio-gpu (debugfs and `list --json` agree), each with
#     its connector connected; vblank-smoke on each node: vkms' CRTC ticks at the mode's
#     refresh, virtio-gpu has no vblank (EOPNOTSUPP, flip events with sequence 0);
#   - `run --connector all --duration 5 --json --log`: exit 0, two outputs named cardN-NAME on
#     two cards, a log per output whose header names its card (`"card":"/dev/dri/cardN"`),
#     driver and connector; on vkms kernel sequences that skip only the refreshes counted as
#     dropped and the refresh measured from the flip timestamps equal to the mode's; on
#     virtio-gpu frames presented, no hardware vblank stated (the log header's
#     `hasHardwareVBlank: false`: run's summary has no such field, the header is the statement),
#     no drop without the flip interval to show it; a pacing thread per card (the process'
#     threads sampled mid-run: two woken by flips); fbcon back on both cards afterwards;
#   - `run --connector <virtio>` alone (one qualified name, not the first card): a one-output
#     summary and log on virtio-gpu's CRTC, one pacing thread;
#   - `run --connector <virtio> --connector <vkms> --mode <virtio>=1024x768` (text): the output
#     lines named cardN-NAME in that order, the mode on virtio-gpu only;
#   - `--inject-late <vkms output>=100:1,250:3 --frames 400`, both outputs at 640x480@59.94:
#     exactly those drops on vkms, nothing render-late on virtio-gpu and no virtio-gpu drop while
#     vkms' late frames are drawn;
#   - `--connector card9-Virtual-1`: exit 2, the one stderr line
#     `cadence run: no such device: /dev/dri/card9`.
# Drops of a loaded host (scheduler-late, with or without vblank-timer overruns) are printed,
# not judged; the scripted case is retried (five attempts at most) when its injected drops
# differ or a virtio-gpu drop falls while vkms' late frames are drawn (the guest has one vCPU:
# the host can hold virtio-gpu's thread; vkms' injected lateness sleeps, see KMSDisplay.spin).
#
# Usage: tools/vm/cards.sh [--bin PATH/TO/cadence] [--keep DIR]
#   --bin     cadence binary (default: `swift build -c release --product cadence`)
#   --keep    keep outputs in DIR (default: a temp dir, removed on success)
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
while (($#)); do vm_common_option "$@"; shift "$vm_used"; done

vm_prologue cards release
vm_out "vkms+virtio"
vm_smoke
vm_guest_check cards vkms+virtio 300 --bin "$smoke"
