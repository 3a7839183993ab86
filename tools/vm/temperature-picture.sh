#!/usr/bin/env bash
# Makes the report picture with a temperature strip (docs/report-temperature.png/.svg) from a
# real `cadence run` on vkms in the VM: the frames and their kernel timestamps are real, but
# the temperature is NOT: neither the VM nor the dev machine has a thermal zone, so the run
# reads its context from a fake tree (`--system-root`) whose one thermal zone (type
# x86_pkg_temp) a shell loop rewrites once a second: 45.0 °C rising 0.5 °C a second for 24 s,
# then falling 1 °C a second. Kernel and CPU model in the header come from the VM's real /proc
# (the tree links to it); the VM has no cpufreq, so no frequency is recorded.
#
# Usage: tools/vm/temperature-picture.sh [--bin PATH/TO/cadence] [--keep DIR] [--out PREFIX]
#   --bin   cadence binary (default: `swift build --product cadence`, debug)
#   --keep  keep the run's files (log, console) in DIR
#   --out   write PREFIX.png and PREFIX.svg (default: docs/report-temperature)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/common.sh"
prefix="$repo/docs/report-temperature"
while (($#)); do
    case "$1" in
        --out) prefix="$2"; shift 2 ;;
        *) vm_common_option "$@"; shift "$vm_used" ;;
    esac
done

vm_prologue temperature debug
vm_out "vkms"

cat >"$work/guestt.sh" <<'EOF'
# The fake tree: the real /proc and /sys/devices, a fake thermal zone.
mkdir -p /tmp/ctx/sys/class/thermal/thermal_zone0
ln -s /proc /tmp/ctx/proc
ln -s /sys/devices /tmp/ctx/sys/devices
echo x86_pkg_temp >/tmp/ctx/sys/class/thermal/thermal_zone0/type
echo 45000 >/tmp/ctx/sys/class/thermal/thermal_zone0/temp
: >/tmp/heating
(i=0; while [ -e /tmp/heating ]; do
    if [ $i -le 24 ]; then t=$((45000 + 500 * i)); else t=$((57000 - 1000 * (i - 24))); fi
    echo $t >/tmp/ctx/sys/class/thermal/thermal_zone0/temp
    sleep 1; i=$((i + 1))
done) &
cadence run --backend kms --rate 10:10:10 --duration 30 --inject-late 100:1,250:3 --log /out/temp.jsonl \
    --system-root /tmp/ctx --quiet >/out/temp.out 2>/out/temp.err
echo $? >/out/temp.rc
rm /tmp/heating
wait
exit 0
EOF

echo "== vkms: booting the VM"
"$here/run.sh" --driver vkms --timeout 600 --bin "$bin" --file "$work/guestt.sh:/guestt.sh" \
    --out-dir "$out" --console "$out/console.log" -v -- sh /guestt.sh || { echo "temperature-picture.sh: VM failed" >&2; exit 1; }
cat "$out/temp.out" "$out/temp.err"
[ "$(cat "$out/temp.rc")" = 0 ] || { echo "temperature-picture.sh: the run failed" >&2; exit 1; }
"$bin" report "$out/temp.jsonl" --output "$prefix.png"
"$bin" report "$out/temp.jsonl" --output "$prefix.svg"
echo "context records: $(grep -c '"record":"context"' "$out/temp.jsonl")"
[ -z "$keep" ] && rm -rf "$work"
exit 0
