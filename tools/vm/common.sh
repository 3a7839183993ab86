# Sourced by the VM test scripts (integration.sh, pacing.sh, validate.sh): the shared prologue.
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
