#!/bin/sh
# Checks tools/systemd/cadence-observe.service with `systemd-analyze verify`: any message about
# the unit (a warning, an unknown setting, a bad value) fails. verify needs ExecStart's binary
# to exist, so a copy of the unit is verified with ExecStart pointed at a built `cadence`.
# Usage: tools/systemd/verify.sh [CADENCE_BINARY]   (default: .build/debug/cadence)
# Also prints `systemd-analyze security`'s exposure level for the unit (information only).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
unit="$here/cadence-observe.service"
bin=${1:-$here/../../.build/debug/cadence}
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (apt install systemd)" >&2; exit 1; }
[ -x "$bin" ] || { echo "no cadence binary at $bin (swift build first)" >&2; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
grep -q '^ExecStart=/usr/local/bin/cadence observe --duration 0 ' "$unit" || { echo "$unit: ExecStart is not /usr/local/bin/cadence observe --duration 0 …" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=/usr/local/bin/cadence |ExecStart=$bin |" "$unit" >"$tmp/cadence-observe.service"
status=0
out=$(systemd-analyze verify --man=no "$tmp/cadence-observe.service" 2>&1) || status=$?
if [ "$status" -ne 0 ] || [ -n "$out" ]; then
    echo "systemd-analyze verify cadence-observe.service failed (status $status):" >&2
    printf '%s\n' "$out" >&2
    exit 1
fi
echo "systemd-analyze verify: cadence-observe.service ok"
systemd-analyze security --offline=true "$tmp/cadence-observe.service" 2>/dev/null | grep 'Overall exposure' || true
