#!/usr/bin/env bash
# Seat sessions on a real kernel (issue 10, item 1): one vkms VM (tools/vm/run.sh) with the
# host's seatd copied in; the guest side is tools/vm/seat_guest.sh, the checks seat_check.py.
#   - no seat daemon: `run --session seat` is one stderr line and exit 2; `run --session auto`
#     falls back to direct access with one notice line and runs (exit 0);
#   - seatd started: `run --session auto` says it uses seat0 through seatd; `list`, `measure` and
#     `validate` with `--session seat` work;
#   - `run --session seat` with `chvt 2`, then `chvt 1` 2 s later: the run goes on and exits 0;
#     seatd logs the disable acknowledged; the log has a session paused and a resumed record, the
#     summary one session gap of about 2 s; no frame is shown inside the gap, no drop is counted
#     across it (the first frame after the resume drops at most what its own render costs);
#     flips resume on the same CRTC with kernel sequences that kept counting through the gap
#     (sequence delta = timestamp delta / refresh, ±1); cadence's framebuffer is back on the
#     plane after the resume, fbcon's after the exit (debugfs), and VT 1 is active again;
#   - a run whose duration ends while its VT is away: exit 0, the open gap in its summary, fbcon
#     back on VT 1 afterwards; SIGINT while the VT is away: exit 0 within 1 s, endReason stopped,
#     the end line written, fbcon back; seatd never asserts;
#   - uid nobody on a `chmod 600` card with seatd's socket owned by nobody (as a seat group
#     grants): `--session direct` is refused (exit 2, one line), `--session seat` runs (exit 0).
#   - least privilege (docs/privileges.md), as nobody: `list` refused on a 0600 card; on a 0604
#     card (and on 0600 with a `setfacl -m u:nobody:r` ACL) `list` and `edid --connector` work
#     (read-only open) while `run` and `measure` are refused in one line; `observe` refused
#     (tracefs).
#
# Usage: tools/vm/seat.sh [--bin PATH/TO/cadence] [--keep DIR]
#   --bin     cadence binary (default: `swift build -c release --product cadence`)
#   --keep    keep outputs in DIR (default: a temp dir, removed on success)
# Prints PASS/FAIL per check and `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
while (($#)); do vm_common_option "$@"; shift "$vm_used"; done

vm_prologue seat release
seatd_bin=$(command -v seatd || true)
[ -n "$seatd_bin" ] || seatd_bin=/usr/sbin/seatd
[ -x "$seatd_bin" ] || { echo "seat.sh: seatd is not installed (apt-get install seatd)" >&2; exit 2; }

vm_out "vkms"
# setfacl (package acl) for the read-ACL case; without it that case fails with the reason.
acl=(); setfacl_bin=$(command -v setfacl || true); [ -n "$setfacl_bin" ] && acl=(--bin "$setfacl_bin")
echo "== vkms: booting the VM"
vm_guest_check seat vkms 300 --bin "$seatd_bin" "${acl[@]}"
