# Sourced by the VM test scripts (integration.sh, pacing.sh, validate.sh, observe.sh, faults.sh,
# soak.sh, temperature-picture.sh, seat.sh, hotplug.sh, outputs.sh, cards.sh) right after they
# set $here and $repo: the shared options and prologue.
#
# vm_common_option ARGS...: the options every script takes, for the `*)` branch of its own
# option loop: --bin PATH, --keep DIR, -h/--help (the script's header comment); sets $vm_used to
# the words taken; anything else is one line on stderr and exit 2.
bin=""
keep=""
vm_used=0
vm_common_option() {
    case "$1" in
        --bin) bin="${2:?--bin needs a path}"; vm_used=2 ;;
        --keep) keep="${2:?--keep needs a directory}"; vm_used=2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "$(basename "$0"): unknown argument: $1" >&2; exit 2 ;;
    esac
}

#
# vm_prologue NAME CONFIG: prepares the VM cache, sets $bin (builds cadence in CONFIG, debug or
# release, when --bin gave none) and $work (the --keep directory, or a new temporary one), and
# starts the wall clock $t0 (a script that times only its VM sets $t0 again later).
# Expects $here, $repo, $bin and $keep to be set by the caller.
vm_prologue() {
    local name=$1 config=$2
    t0=$(date +%s)
    "$here/prepare.sh"
    if [ -z "$bin" ]; then
        echo "== building cadence ($config)"
        (cd "$repo" && swift build -c "$config" --product cadence 2>&1 | tail -n 3)
        bin="$(cd "$repo" && swift build -c "$config" --show-bin-path)/cadence"
    fi
    [ -x "$bin" ] || { echo "$name.sh: no cadence binary at $bin" >&2; exit 2; }
    if [ -n "$keep" ]; then
        work="$keep"
        mkdir -p "$work"
    else
        work="$(mktemp -d "/tmp/cadence-$name.XXXXXX")"
    fi
}

# vm_out DIR: sets $out to $work/DIR, emptied (the guest's output directory for one boot).
vm_out() {
    out="$work/$1"
    rm -rf "$out"; mkdir -p "$out"
}

# vm_smoke: builds tools/vm/vblank-smoke.c (the harness's own check, independent of cadence:
# vblanks tick and flips complete, or the driver has none) into $work/vblank-smoke; sets $smoke.
vm_smoke() {
    smoke="$work/vblank-smoke"
    local cc
    cc="$(command -v gcc-12 || command -v gcc || command -v cc)"
    "$cc" -O2 $(pkg-config --cflags libdrm) "$here/vblank-smoke.c" -ldrm -lm -o "$smoke"
}

# vm_guest_check NAME DRIVER TIMEOUT [RUN.SH ARGS...]: boots DRIVER once with $bin, guest_lib.sh
# and NAME_guest.sh (run as the command, output directory $work/<driver dir> = $out, which the
# caller has set with vm_out), checks it with NAME_check.py, prints the wall time since $t0,
# removes $work on success (unless --keep) and exits with the status: the tail that seat.sh,
# hotplug.sh and outputs.sh share.
vm_guest_check() {
    local name=$1 driver=$2 timeout=$3 status=0; shift 3
    "$here/run.sh" --driver "$driver" --timeout "$timeout" --bin "$bin" "$@" --file "$here/${name}_guest.sh:/${name}_guest.sh" \
        --file "$here/guest_lib.sh:/guest_lib.sh" --out-dir "$out" --console "$out/console.log" -v -- sh "/${name}_guest.sh" \
        || { echo "$name.sh: VM failed (rc $?)" >&2; status=1; }
    [ "$status" = 0 ] && { python3 "$here/${name}_check.py" "$out" || status=1; }
    echo "$name wall time: $(( $(date +%s) - t0 )) s"
    if [ "$status" = 0 ] && [ -z "$keep" ]; then rm -rf "$work"; elif [ "$status" != 0 ]; then echo "outputs kept in $work"; fi
    exit "$status"
}

# Host-side checks of a guest's output directory $out: `check NAME COMMAND...` prints PASS or
# FAIL NAME as COMMAND succeeds and counts it in $pass/$fail; `rc NAME` prints NAME.rc;
# `lines FILE` counts FILE's lines (0 when it is missing).
pass=0; fail=0
check() {
    local name=$1; shift
    if "$@"; then echo "PASS $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
rc() { cat "$out/$1.rc"; }
lines() { grep -c '' "$1" || true; }
