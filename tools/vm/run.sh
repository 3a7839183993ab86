#!/usr/bin/env bash
# Runs a command inside Debian's real kernel (qemu TCG) with a DRM driver loaded:
#   tools/vm/run.sh --driver vkms|vkms2|bochs|virtio|vkms+virtio|none [--timeout S] [--bin HOSTPATH]... [--gbm]
#                   [--out-dir DIR] [--env NAME=VALUE]... [-v] -- COMMAND [ARGS...]
# The command's stdout/stderr are forwarded, and its exit status is returned.
# Harness exit codes: 2 bad arguments, 124 timeout, 125 VM failed, 126 not prepared.
# Run tools/vm/prepare.sh first. Full help: tools/vm/run.sh --help
exec python3 "$(dirname "$0")/vmrun.py" "$@"
