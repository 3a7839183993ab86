# Guest side of tools/vm/seat.sh (busybox sh, root). Writes NAME.rc/.out/.err/.jsonl, the seatd
# log and the debugfs CRTC state snapshots to /out.
. /guest_lib.sh
crtc_state >/out/crtc_idle.txt
cat /sys/class/tty/tty0/active >/out/vt_before.txt

# No seat daemon yet: --session seat refuses (one line, exit 2); auto falls back to direct.
cadence run --session seat --backend kms --scene solid --duration 1 --quiet >/out/noseat.out 2>/out/noseat.err
echo $? >/out/noseat.rc
cadence run --session auto --backend kms --scene solid --duration 1 --quiet --json >/out/auto_direct.out 2>/out/auto_direct.err
echo $? >/out/auto_direct.rc

seatd -l info >/out/seatd.log 2>&1 &
seatd_pid=$!
i=0; while [ ! -S /run/seatd.sock ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

# Through seatd, as a user in the seatd socket's group would (root here).
cadence run --session auto --backend kms --scene solid --duration 1 --quiet --json >/out/auto_seat.out 2>/out/auto_seat.err
echo $? >/out/auto_seat.rc
cadence list --session seat --json >/out/list_seat.out 2>/out/list_seat.err
echo $? >/out/list_seat.rc
cadence measure --session seat --duration 2 --json >/out/measure_seat.out 2>/out/measure_seat.err
echo $? >/out/measure_seat.rc
cadence validate --session seat --backend kms --scene solid --duration 2 --max-dropped 100000 >/out/validate_seat.out 2>/out/validate_seat.err
echo $? >/out/validate_seat.rc

# A VT switch mid-run: chvt 2 (the seat disables the session), 2 s later chvt 1 (enabled).
before=$(overruns)
cadence run --session seat --backend kms --scene solid --duration 8 --log /out/vt.jsonl --json >/out/vt.out 2>/out/vt.err &
pid=$!
wait_running
crtc_state >/out/vt_during.txt
sleep 1
t0=$(up); chvt 2; sleep 0.5; crtc_state >/out/vt_away.txt; cat /sys/class/tty/tty0/active >/out/vt_away_active.txt
sleep 1.5; chvt 1; t1=$(up)
sleep 1
crtc_state >/out/vt_back.txt
wait $pid
echo $? >/out/vt.rc
echo "$t0 $t1" >/out/vt.t
echo $(( $(overruns) - before )) >/out/vt.overruns
sleep 0.3
crtc_state >/out/vt_after.txt
cat /sys/class/tty/tty0/active >/out/vt_after_active.txt

# measure with a VT switch mid-measurement: paused while away (no flips, the disable
# acknowledged), the mode set again when back, the measurement runs as long again as the gap;
# the vblanks of the gap are a session gap, not missed vblanks.
cadence measure --session seat --duration 5 --json >/out/measure_vt.out 2>/out/measure_vt.err &
pid=$!
wait_running
sleep 1
t0=$(up); chvt 2; sleep 0.5; cat /sys/class/tty/tty0/active >/out/measure_vt_away_active.txt
sleep 1.5; chvt 1; t1=$(up)
wait $pid
echo $? >/out/measure_vt.rc
echo "$t0 $t1" >/out/measure_vt.t
sleep 0.3
crtc_state >/out/measure_vt_after.txt

# The run ends while its VT is away: it ends on time (exit 0) with the open gap in its summary,
# gives the device back to the seat, and once VT 1 is back the console shows again.
cadence run --session seat --backend kms --scene solid --duration 4 --log /out/away_end.jsonl --json --quiet >/out/away_end.out 2>/out/away_end.err &
pid=$!
wait_running
chvt 2
wait $pid
echo $? >/out/away_end.rc
crtc_state >/out/away_end_away.txt
chvt 1
sleep 0.5
crtc_state >/out/away_end_back.txt
cat /sys/class/tty/tty0/active >/out/away_end_active.txt

# SIGINT while the VT is away: the run stops at once (exit 0, endReason stopped, end line).
cadence run --session seat --backend kms --scene solid --duration 60 --log /out/away_int.jsonl --json --quiet >/out/away_int.out 2>/out/away_int.err &
pid=$!
wait_running
chvt 2
sleep 1
t0=$(up); kill -INT $pid; wait $pid; echo $? >/out/away_int.rc; t1=$(up)
echo "$t0 $t1" >/out/away_int.t
chvt 1
sleep 0.5
crtc_state >/out/away_int_back.txt
kill $seatd_pid; wait $seatd_pid 2>/dev/null

# A normal user (nobody) who may not open the card (chmod 600) but may use the seat (seatd's
# socket owned by nobody, as a 'seat' group would grant): direct access is refused, the seat works.
rm -f /run/seatd.sock
seatd -u nobody -l info >/out/seatd_user.log 2>&1 &
seatd_pid=$!
i=0; while [ ! -S /run/seatd.sock ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
mode=$(stat -c %a /dev/dri/card0)
chmod 600 /dev/dri/card0
su -s /bin/sh nobody -c '/bin/cadence run --session direct --backend kms --scene solid --duration 1 --quiet --json' >/out/user_direct.out 2>/out/user_direct.err
echo $? >/out/user_direct.rc
su -s /bin/sh nobody -c '/bin/cadence run --session seat --backend kms --scene solid --duration 1 --quiet --json' >/out/user_seat.out 2>/out/user_seat.err
echo $? >/out/user_seat.rc
# Least privilege (docs/privileges.md): no access to the card refuses even `list`; read access
# alone (mode 0604, or an ACL granting r as logind's uaccess does) lets `list` and `edid
# --connector` work (they open O_RDONLY) while `run` and `measure` (O_RDWR, DRM master, mmap)
# are refused in one line; `observe` needs tracefs (root).
as_nobody() { name=$1; shift; su -s /bin/sh nobody -c "$*" >/out/$name.out 2>/out/$name.err; echo $? >/out/$name.rc; }
as_nobody priv_list_600 /bin/cadence list
chmod 604 /dev/dri/card0
as_nobody priv_list_604 /bin/cadence list --json
as_nobody priv_edid_604 /bin/cadence edid --connector Virtual-1
as_nobody priv_run_604 /bin/cadence run --backend kms --scene solid --duration 1 --quiet
as_nobody priv_measure_604 /bin/cadence measure --duration 1
as_nobody priv_observe /bin/cadence observe --duration 1
chmod 600 /dev/dri/card0
if setfacl -m u:nobody:r /dev/dri/card0 2>/out/priv_acl.err; then
    as_nobody priv_list_acl /bin/cadence list --json
    as_nobody priv_run_acl /bin/cadence run --backend kms --scene solid --duration 1 --quiet
    setfacl -b /dev/dri/card0
fi
chmod "$mode" /dev/dri/card0
kill $seatd_pid; wait $seatd_pid 2>/dev/null
sleep 0.3
crtc_state >/out/user_after.txt
