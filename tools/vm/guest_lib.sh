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

# rec NAME CMD...: runs CMD once (at most 120 s), records NAME.rc/.out/.err and NAME.attempts
# (rc and the guest's vblank-timer overruns during it) in /out.
rec() {
    name=$1; shift
    before=$(overruns); start=$(up)
    timeout 120 "$@" </dev/null >"/out/$name.out" 2>"/out/$name.err"
    rc=$?
    echo $rc >"/out/$name.rc"
    echo "attempt 1 rc=$rc timerOverruns=$(( $(overruns) - before )) ($start..$(up) s)" >"/out/$name.attempts"
}

# try NAME WANT CMD...: like rec, but retried (TRIES attempts at most, three unless set) while `got NAME` (the
# calling script's function: the attempt's outcome in one word) is not WANT: on a loaded host
# the qemu vCPU can be held past a vblank, which drops refreshes a scripted case does not
# expect. Every attempt is recorded in NAME.attempts; the last one is checked, and the logs of
# an attempt retried are kept as NAME-attemptN.OUTPUT.jsonl.
try() {
    name=$1; want=$2; shift 2
    attempt=1
    : >"/out/$name.attempts"
    while :; do
        rm -f /out/$name.*.jsonl
        before=$(overruns); start=$(up)
        timeout 120 "$@" </dev/null >"/out/$name.out" 2>"/out/$name.err"
        rc=$?
        echo $rc >"/out/$name.rc"
        g=$(got "$name")
        echo "attempt $attempt rc=$rc got=$g timerOverruns=$(( $(overruns) - before )) ($start..$(up) s)" >>"/out/$name.attempts"
        echo "case $name attempt $attempt: rc $rc got $g" >/dev/console
        [ "$g" = "$want" ] || [ "$attempt" -ge "${TRIES:-3}" ] && break
        for f in /out/$name.*.jsonl; do [ -e "$f" ] && mv "$f" "/out/$name-attempt$attempt.${f#/out/$name.}"; done
        attempt=$((attempt + 1))
    done
}
