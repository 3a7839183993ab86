# Guest side of tools/vm/cards.sh (busybox sh, root, `run.sh --driver vkms+virtio`: two cards,
# vkms and virtio-gpu). Finds each card by its driver, never by its number, and writes to /out:
# cards.txt (one line per card: node, driver, connectors with their status), NAME.rc/.out/.err,
# per-output logs NAME.cardN-CONNECTOR.jsonl, NAME.attempts (rc, what was compared, the guest's
# vblank-timer overruns during it) and each card's debugfs state before and after the runs.
. /guest_lib.sh

# sampled NAME CMD...: like rec, and while CMD runs (busybox timeout execs it in its own pid)
# its threads at 2 s and 3 s in NAME.threads: "sample N comm COMM", then "TID VOLUNTARY_SWITCHES"
# per thread. A pacing thread waits in poll for each flip (60-75 wakes a second); idle helper
# threads hardly wake.
threads_of() {
    echo "sample $2 comm $(cat /proc/$1/comm 2>/dev/null)"
    for t in /proc/$1/task/*; do
        v=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$t/status" 2>/dev/null)
        [ -n "$v" ] && echo "${t##*/} $v"
    done
}
sampled() {
    name=$1; shift
    before=$(overruns); start=$(up)
    timeout 120 "$@" </dev/null >"/out/$name.out" 2>"/out/$name.err" &
    pid=$!
    sleep 2; threads_of $pid 1 >"/out/$name.threads"
    sleep 1; threads_of $pid 2 >>"/out/$name.threads"
    wait $pid
    rc=$?
    echo $rc >"/out/$name.rc"
    echo "attempt 1 rc=$rc timerOverruns=$(( $(overruns) - before )) ($start..$(up) s)" >"/out/$name.attempts"
}

# got NAME: each output's render-late drops (the injected ones) after its first two frames as
# FRAME:REFRESHES from its log (keys are sorted: cause before droppedRefreshes before frame),
# then the virtio-gpu drops while vkms' late frames 100 and 250 are drawn (`spill`, below):
# "vkms=100:1,250:3;virtio=;spill=0". Scheduler-late drops (the host holding the vCPU) are not
# the injection's; cards_check.py prints them.
render_late() {
    grep '"cause":"render-late"' "$1" 2>/dev/null | sed -n 's/.*"droppedRefreshes":\([1-9][0-9]*\),.*"frame":\([0-9]*\),.*/\2:\1/p' \
        | awk -F: '$1 >= 2' | tr '\n' ',' | sed 's/,$//'
}
# spill VKMS_LOG VIRTIO_LOG: how many virtio-gpu frames dropped a refresh with their flip inside
# a window of vkms' frames 100 and 250 (from the frame's wake to one virtio-gpu refresh after its
# flip), "-" without both frames: the same windows cards_check.py judges. A loaded host drops
# refreshes anywhere, also there; an attempt with such a drop is retried like one whose injected
# drops differ.
spill() {
    awk 'function f(l, k) { if (match(l, "\"" k "\":[0-9]+")) return substr(l, RSTART + length(k) + 3, RLENGTH - length(k) - 3) + 0; return -1 }
         FNR == 1 { file++ }
         file == 1 && /"frame":(100|250),/ && f($0, "wakeNs") >= 0 { n++; w[n] = f($0, "wakeNs"); e[n] = f($0, "flipNs") }
         file == 2 && FNR == 1 { per = f($0, "refreshIntervalNs") }
         file == 2 && f($0, "droppedRefreshes") > 0 { x = f($0, "flipNs"); for (i = 1; i <= n; i++) if (x >= w[i] && x <= e[i] + per) c++ }
         END { if (n == 2) print c + 0; else print "-" }' "$1" "$2" 2>/dev/null || echo -
}
got() {
    printf 'vkms=%s;virtio=%s;spill=%s' "$(render_late "/out/$1.$vkms_out.jsonl")" "$(render_late "/out/$1.$virtio_out.jsonl")" \
        "$(spill "/out/$1.$vkms_out.jsonl" "/out/$1.$virtio_out.jsonl")"
}

# The cards: the driver of each (the DRM driver name debugfs gives; vkms' platform device has no
# device/driver link in sysfs), its connectors and their status, its debugfs state.
vkms_card=""; virtio_card=""; vkms_out=""; virtio_out=""
: >/out/cards.txt
for c in /sys/class/drm/card*; do
    card=${c##*/}
    case $card in *-*) continue ;; esac
    minor=${card#card}
    drv=$(cut -d' ' -f1 "/sys/kernel/debug/dri/$minor/name")
    line="$card $drv"
    first=""
    for k in "$c/$card"-*; do
        conn=${k##*/$card-}
        status=$(cat "$k/status")
        line="$line $conn:$status"
        case $conn in Writeback-*) ;; *) [ "$status" = connected ] && [ -z "$first" ] && first="$card-$conn" ;; esac
    done
    echo "$line" >>/out/cards.txt
    case $drv in
        vkms) vkms_card=$card; vkms_out=$first ;;
        virtio_gpu) virtio_card=$card; virtio_out=$first ;;
    esac
done
echo "vkms $vkms_card $vkms_out" >/out/picked.txt
echo "virtio $virtio_card $virtio_out" >>/out/picked.txt
if [ -z "$vkms_out" ] || [ -z "$virtio_out" ]; then overruns >/out/overruns.txt; exit 0; fi
state_of() { cat "/sys/kernel/debug/dri/${1#card}/state"; }

rec list cadence list --json
# vblank-smoke (independent of cadence) on each card by its device node: vkms' CRTC ticks at the
# mode's refresh; virtio-gpu has no vblank (EOPNOTSUPP) and its flip events carry sequence 0.
rec smoke_vkms vblank-smoke --device "/dev/dri/$vkms_card" --seconds 1 --expect vblank
rec smoke_virtio vblank-smoke --device "/dev/dri/$virtio_card" --seconds 1 --expect none

# Every connected connector on every card, 5 s (drops are printed with the overruns, not judged);
# its threads sampled.
state_of "$vkms_card" >/out/state_before_vkms.txt; state_of "$virtio_card" >/out/state_before_virtio.txt
sampled all cadence run --backend kms --connector all --scene solid --duration 5 --log /out/all.jsonl --json --quiet
state_of "$vkms_card" >/out/state_all_vkms.txt; state_of "$virtio_card" >/out/state_all_virtio.txt
# One qualified name, virtio-gpu's (not the first card, which a bare run would use): a one-output
# run on that card (plain summary and log, one pacing thread).
sampled one cadence run --backend kms --connector "$virtio_out" --scene solid --duration 4 --log /out/one.jsonl --json --quiet

# The two named as cardN-NAME, in the other order, text summary; --mode names one output only
# (virtio-gpu at 1024x768, 60.0038 Hz, instead of its preferred 1280x800 at 74.9938 Hz).
rec pair cadence run --backend kms --connector "$virtio_out" --connector "$vkms_out" --mode "$virtio_out=1024x768" \
    --scene solid --duration 3 --log /out/pair.jsonl --quiet

# Scripted late frames on the vkms output only (frame 100 one refresh late, frame 250 three):
# exactly 4 dropped refreshes there in 2 events, nothing render-late on virtio-gpu. Both outputs
# at 640x480@59.94 (listed on both: a DMT mode vkms lists and an established timing of QEMU's
# EDID): a fifth of the preferred modes' bytes to copy a second, so the one vCPU has time left
# for both pacing threads on a loaded host (at the preferred modes a loaded CI host dropped a
# tenth of the refreshes on each card, some of them inside the windows judged). Five attempts.
TRIES=5 try late "vkms=100:1,250:3;virtio=;spill=0" cadence run --backend kms --connector all --scene solid --latency 1 \
    --mode "$vkms_out=640x480@59.94" --mode "$virtio_out=640x480@59.94" \
    --inject-late "$vkms_out=100:1,250:3" --frames 400 --log /out/late.jsonl --json --quiet

# measure every output of both cards at once (a thread per card): vkms' refresh from its flip
# timestamps; virtio-gpu has no vblank, which measure says and does not count as missed vblanks.
rec measure cadence measure --connector all --duration 2 --json

# A card that does not exist: one stderr line, exit 2.
rec bad_card cadence run --backend kms --connector card9-Virtual-1 --scene solid --duration 1 --quiet

state_of "$vkms_card" >/out/state_after_vkms.txt; state_of "$virtio_card" >/out/state_after_virtio.txt
overruns >/out/overruns.txt
exit 0
