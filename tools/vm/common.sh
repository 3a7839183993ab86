# Sourced by the VM test scripts (integration.sh, pacing.sh, validate.sh, observe.sh, faults.sh,
# soak.sh, temperature-picture.sh) right after they set $here and $repo: the shared options and
# prologue.
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
# release, when --bin gave none) and $work (the --keep directory, or a new temporary one).
# Expects $here, $repo, $bin and $keep to be set by the caller.
vm_prologue() {
    local name=$1 config=$2
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
