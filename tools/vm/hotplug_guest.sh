# Guest side of tools/vm/hotplug.sh (busybox sh, root, vkms). Writes NAME.rc/.out/.err/.t and
# logs to /out. vkms on Linux 6.1 sends no uevent when a connector's status is forced through
# sysfs (status_store only re-probes; vkms has no connector polling to send the delayed
# hotplug event), so every status write is followed by a `change` written to the card's uevent
# file, which the kernel sends as ACTION=change for card0.
. /guest_lib.sh
st=/sys/class/drm/card0-Virtual-1/status
ev=/sys/class/drm/card0/uevent
plug() { echo "$1" >$st; echo change >$ev; }
ls /run/udev/control >/out/udevd.txt 2>&1 || true

# list --watch: the initial status, connected→disconnected, disconnected→connected.
cadence list --watch --json >/out/watch.out 2>/out/watch.err &
pid=$!
i=0; while [ ! -s /out/watch.out ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
plug off; sleep 1
plug on; sleep 1
kill -INT $pid; wait $pid; echo $? >/out/watch.rc

# run on Virtual-1, the connector forced off mid-run: ends within 1 s, exit 1, disconnected.
cadence run --backend kms --scene solid --duration 30 --log /out/unplug.jsonl --json --quiet >/out/unplug.out 2>/out/unplug.err &
pid=$!
wait_running
t0=$(up); echo off >$st; t1=$(up); echo change >$ev; t2=$(up)
wait $pid; echo $? >/out/unplug.rc; t3=$(up)
echo "$t0 $t1 $t2 $t3" >/out/unplug.t
crtc_state >/out/unplug_after.txt
plug detect
cat $st >/out/status_after.txt

# a change uevent with the connector still connected: the run goes on to its end.
cadence run --backend kms --scene solid --duration 4 --log /out/still.jsonl --json --quiet >/out/still.out 2>/out/still.err &
pid=$!
wait_running
echo change >$ev
wait $pid; echo $? >/out/still.rc

# validate: the unplug is a failed criterion (exit 1, one FAIL line).
cadence validate --backend kms --scene solid --duration 30 --max-dropped 1000000 --max-drop-events 1000000 \
    --max-drop-event 1000000 --max-jitter 1000000 >/out/validate.out 2>/out/validate.err &
pid=$!
wait_running
plug off
wait $pid; echo $? >/out/validate.rc
plug detect
