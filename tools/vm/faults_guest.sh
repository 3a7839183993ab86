# Guest side of tools/vm/faults.sh (busybox sh, root). Usage: sh /faults_guest.sh DRIVER
# Writes NAME.rc/.out/.err/.jsonl/.t and the debugfs CRTC state snapshots to /out.
driver=$1
. /guest_lib.sh
wait_card() {
    i=0
    while [ ! -e /dev/dri/card0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.5
}

crtc_state >/out/crtc_idle.txt

# Stop signals: the run ends cleanly (exit 0, end line) and the CRTC is restored. A second
# descriptor on the card is held during the run so that the kernel's last-close restore of
# fbcon cannot hide what cadence itself did.
for sig in INT TERM HUP; do
    n=sig_$sig
    cadence run --backend kms --scene solid --duration 60 --log /out/$n.jsonl --json --quiet >/out/$n.out 2>/out/$n.err &
    pid=$!
    wait_running
    exec 3</dev/dri/card0
    crtc_state >/out/${n}_during.txt
    kill -$sig $pid
    wait $pid
    echo $? >/out/$n.rc
    crtc_state >/out/${n}_after.txt
    exec 3<&-
done

# SIGKILL: nothing in cadence runs. With another descriptor open the CRTC stays as the kill left
# it; when the last descriptor closes the kernel restores fbcon (drm_lastclose → fbdev restore).
cadence run --backend kms --scene solid --duration 60 --log /out/kill.jsonl --quiet >/out/kill.out 2>/out/kill.err &
pid=$!
wait_running
exec 3</dev/dri/card0
kill -KILL $pid
wait $pid
echo $? >/out/kill.rc
crtc_state >/out/kill_held.txt
exec 3<&-
sleep 0.2
crtc_state >/out/kill_closed.txt
cadence run --backend kms --scene solid --duration 60 --quiet >/dev/null 2>&1 &
pid=$!
wait_running
kill -KILL $pid
wait $pid
sleep 0.2
crtc_state >/out/kill_alone.txt

if [ "$driver" = vkms ]; then
    # SIGSTOP for 2 s, then SIGCONT; the run goes on to its end. Retried (at most twice) when
    # the run dropped anything besides the stop, with the guest's timer overruns per attempt.
    attempt=1
    while :; do
        before=$(overruns)
        cadence run --backend kms --scene solid --duration 8 --log /out/stop.jsonl --json --quiet >/out/stop.out 2>/out/stop.err &
        pid=$!
        wait_running
        sleep 1
        t0=$(up); kill -STOP $pid; sleep 2; kill -CONT $pid; t1=$(up)
        wait $pid
        rc=$?
        echo $rc >/out/stop.rc
        events=$(grep -o '"dropEvents":[0-9]*' /out/stop.out | grep -o '[0-9]*$')
        echo "attempt $attempt rc=$rc dropEvents=${events:-?} stopped $t0..$t1 s timerOverruns=$(( $(overruns) - before ))" >>/out/stop.attempts
        cp /out/stop.jsonl /out/stop.attempt$attempt.jsonl
        if [ "$rc" != 0 ] || [ "$events" = 1 ] || [ $attempt -ge 3 ]; then break; fi
        attempt=$((attempt + 1))
    done

    # vkms has no bus to remove it from, and its module cannot be unloaded while the card is open.
    cadence run --backend kms --scene solid --duration 4 --json --quiet >/out/rmmod_run.out 2>/out/rmmod_run.err &
    pid=$!
    wait_running
    rmmod vkms >/out/rmmod.out 2>&1
    echo $? >/out/rmmod.rc
    wait $pid
    echo $? >/out/rmmod_run.rc

    # The log on a full filesystem (64 KiB tmpfs), removed mid-run, made read-only mid-run.
    mkdir -p /mnt/full
    mount -t tmpfs -o size=64k tmpfs /mnt/full
    cadence run --backend kms --scene solid --duration 6 --log /mnt/full/run.jsonl --json --quiet >/out/full.out 2>/out/full.err
    echo $? >/out/full.rc
    cp /mnt/full/run.jsonl /out/full.jsonl
    df -k /mnt/full | tail -n 1 >/out/full.df
    umount /mnt/full

    cadence run --backend kms --scene solid --duration 6 --log /tmp/removed.jsonl --json --quiet >/out/removed.out 2>/out/removed.err &
    pid=$!
    wait_running
    cp /tmp/removed.jsonl /out/removed_before.jsonl
    rm /tmp/removed.jsonl
    wait $pid
    echo $? >/out/removed.rc

    cadence run --backend kms --scene solid --duration 6 --log /out/ro.jsonl --json --quiet >/out/ro.out 2>/out/ro.err &
    pid=$!
    wait_running
    chmod 444 /out/ro.jsonl
    wait $pid
    echo $? >/out/ro.rc

    # stdout closed early: `cadence run --json | head -c1`, and a reader that is gone.
    { cadence run --backend kms --scene solid --duration 2 --json --log /out/head.jsonl 2>/out/head.err; echo $? >/out/head.rc; } | head -c1 >/out/head.out
    { cadence run --backend kms --scene solid --duration 2 --log /out/gone.jsonl 2>/out/gone.err; echo $? >/out/gone.rc; } | true
    overruns >/out/overruns.txt
    exit 0
fi

# bochs, virtio-gpu: the PCI device removed mid-run (`run`, `measure`, `validate`), rescanned
# back after each.
dev=$(readlink -f /sys/class/drm/card0/device)
echo "$dev" >/out/pci_device.txt
remove_case() { # remove_case NAME COMMAND...
    n=$1; shift
    "$@" >/out/$n.out 2>/out/$n.err &
    pid=$!
    wait_running
    t0=$(up)
    echo 1 >"$dev/remove"
    t1=$(up)
    wait $pid
    echo $? >/out/$n.rc
    t2=$(up)
    echo "$t0 $t1 $t2" >/out/$n.t
    echo 1 >/sys/bus/pci/rescan
    wait_card
}
remove_case rm_run cadence run --backend kms --scene solid --duration 60 --log /out/rm_run.jsonl --json --quiet
remove_case rm_measure cadence measure --duration 60 --json
remove_case rm_validate cadence validate --backend kms --scene solid --duration 60 --max-dropped 1000000 \
    --log /out/rm_validate.jsonl --junit /out/rm_validate.xml --quiet
ls /dev/dri >/out/after_rescan.txt
cadence list >/out/list_after.txt 2>&1
echo $? >/out/list_after.rc
exit 0
