# Shell functions the guest-side scripts share (busybox sh, root), sourced as /guest_lib.sh:
# uptime, the guest's vblank-timer overrun count, and what the panel shows (debugfs).
up() { cut -d' ' -f1 /proc/uptime; }
overruns() { dmesg | grep -c 'vblank timer overrun'; }
mount -t debugfs none /sys/kernel/debug 2>/dev/null
state=/sys/kernel/debug/dri/0/state
# The primary plane's framebuffer and who allocated it, and the CRTC's enable/active/mode: what
# the panel shows. (fbcon's framebuffer says "allocated by = [fbcon]".)
crtc_state() {
    awk '/^plane\[/ { p = ($0 ~ /plane-0/) } p && /fb=|allocated by/ { print }
         /^crtc\[/ { c = 1 } c && /enable=|active=|mode:/ { print } /^connector/ { c = 0 }' "$state" | grep -v self_refresh
}
# Waits (at most 30 s) until cadence's own framebuffer is on the plane, then 1 s more.
wait_running() {
    i=0
    while ! grep -q 'allocated by = cadence' "$state" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 1
}
