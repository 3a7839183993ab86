# Guest side of tools/vm/outputs.sh (busybox sh, root, vkms2: vkms with two outputs). Writes
# NAME.rc/.out/.err, per-output logs NAME.Virtual-N.jsonl and NAME.attempts (one line per
# attempt: rc, what was compared, the guest's vblank-timer overruns during it) to /out.
. /guest_lib.sh

# got NAME: validate's verdicts, P or F per criterion line in order (Virtual-1's criteria, then
# Virtual-2's: "PPFP"); for a run, each output's render-late drops (the injected ones) after its
# first two frames as FRAME:REFRESHES from its log (keys are sorted: cause before
# droppedRefreshes before frame), e.g. "V1=;V2=100:1,250:3". Scheduler-late drops (the host
# holding the vCPU: under TCG a few per run even with no vblank-timer overrun) are not the
# injection's; outputs_check.py prints them and checks that none falls on Virtual-1 while
# Virtual-2's late frames are drawn.
got() {
    case $1 in
        validate_*) grep -oE '^(PASS|FAIL) Virtual-[12] [a-z-]+' "/out/$1.out" | cut -c1 | tr -d '\n' ;;
        *) for n in 1 2; do
               printf 'V%s=%s' $n "$(grep '"cause":"render-late"' "/out/$1.Virtual-$n.jsonl" 2>/dev/null \
                   | sed -n 's/.*"droppedRefreshes":\([1-9][0-9]*\),.*"frame":\([0-9]*\),.*/\2:\1/p' \
                   | awk -F: '$1 >= 2' | tr '\n' ',' | sed 's/,$//')"
               [ $n = 1 ] && printf ';'
           done ;;
    esac
}

# The card: both connectors connected, and each CRTC ticking at its mode's rate (vblank-smoke
# sets the preferred mode on the CRTC the connector's encoder can drive, waits for vblanks and
# flips; independent of cadence).
cat /sys/class/drm/card0-Virtual-1/status /sys/class/drm/card0-Virtual-2/status >/out/status.txt 2>&1
rec list cadence list --json
rec smoke_1 vblank-smoke --connector Virtual-1 --seconds 2 --expect vblank
rec smoke_2 vblank-smoke --connector Virtual-2 --seconds 2 --expect vblank

# Natural runs (drops are reported with the overruns, not judged): every connected output, then
# the two named.
cat "$state" >/out/state_before.txt
rec all cadence run --backend kms --connector all --scene solid --duration 5 --log /out/all.jsonl --json --quiet
cat "$state" >/out/state_after.txt
# Different modes: Virtual-1 at its preferred 1024x768@60, Virtual-2 at --mode Virtual-2=…@144,
# each CRTC at its own rate from its own timer.
rec mixed cadence run --backend kms --connector all --mode Virtual-2=1024x768@144 --scene solid --duration 5 --log /out/mixed.jsonl --json --quiet
rec pair cadence run --backend kms --connector Virtual-1 --connector Virtual-2 --scene solid --duration 5 \
    --log /out/pair.jsonl --quiet
# measure both outputs at once (each flipped at every vblank of its own CRTC).
rec measure cadence measure --connector all --duration 2 --json

# Scripted late frames on Virtual-2 only (frame 100 one refresh late, frame 250 three): exactly
# 4 dropped refreshes in 2 events there, none on Virtual-1 (after the first two frames).
try late 'V1=;V2=100:1,250:3' cadence run --backend kms --connector all --scene solid --latency 1 \
    --inject-late Virtual-2=100:1,250:3 --frames 400 --log /out/late.jsonl --json --quiet

# validate over both outputs: under the thresholds (exit 0), and with a 3-refresh drop injected
# on Virtual-2 against --max-drop-event 2 (exit 1, only Virtual-2's criterion fails).
rec validate_pass cadence validate --backend kms --connector all --scene solid --duration 5 --refresh-tolerance 0.5 --quiet
try validate_fail PPFP cadence validate --backend kms --connector Virtual-1 --connector Virtual-2 --scene solid \
    --latency 1 --inject-late Virtual-2=100:3 --frames 300 --max-drop-event 2 --refresh-tolerance 0.5 --quiet
# Hotplug with two outputs: Virtual-2 forced off mid-run (then the card's change uevent, as in
# hotplug_guest.sh: vkms sends none itself) ends Virtual-2 with `disconnected` while Virtual-1
# runs to its end; the run exits 1. Virtual-2 is put back afterwards.
cadence run --backend kms --connector all --scene solid --duration 6 --log /out/unplug.jsonl --json --quiet \
    >/out/unplug.out 2>/out/unplug.err &
pid=$!
wait_running
echo $(up) >/out/unplug.t
echo off >/sys/class/drm/card0-Virtual-2/status; echo change >/sys/class/drm/card0/uevent
wait $pid; echo $? >/out/unplug.rc
echo detect >/sys/class/drm/card0-Virtual-2/status; echo change >/sys/class/drm/card0/uevent
cat /sys/class/drm/card0-Virtual-2/status >/out/unplug_status_after.txt

overruns >/out/overruns.txt
exit 0
