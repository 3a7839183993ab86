#!/usr/bin/env bash
# Set-up command 1 of 2: installs the build dependencies if they are missing, builds
# Cadence (release) and runs the main job, `cadence run`. Extra arguments go to `cadence run`
# (for example: tools/cadence-run.sh --scene ufo --hud --duration 10).
# The build dependencies are read from Package.swift itself: every `.systemLibrary` with a
# `pkgConfig:` name and its `providers: [.apt([...])]` (libdrm, gbm, libseat, libudev, libzstd today), so
# a library added there is installed here without editing this script.
# On a machine with no DRM card it falls back to the fake display and says so in one line; a
# card it cannot open or master (permissions, a compositor) is an error with what to do.
set -euo pipefail
cd "$(dirname "$0")/.."
# The system libraries Package.swift links, by pkg-config name and Debian package. The list is
# written out here so that this script reads on its own; tools/system-libraries.sh derives the
# same pairs from Package.swift's `providers: [.apt([...])]`, and a library added there but not
# here is installed too (and tools/check-install-lists.sh fails until it is listed here).
libs="
libdrm libdrm-dev
gbm libgbm-dev
libseat libseat-dev
libudev libudev-dev
libzstd libzstd-dev
$(tools/system-libraries.sh Package.swift)"
missing=()
while read -r pc pkgs; do
    [ -n "$pc" ] || continue
    if ! command -v pkg-config >/dev/null || ! pkg-config --exists "$pc" 2>/dev/null; then
        read -r -a p <<<"$pkgs"
        for x in "${p[@]}"; do [[ " ${missing[*]} " == *" $x "* ]] || missing+=("$x"); done
    fi
done <<<"$libs"
if ((${#missing[@]})); then
    echo "cadence-run: installing ${missing[*]} pkg-config (the system libraries Package.swift links)" >&2
    export DEBIAN_FRONTEND=noninteractive
    sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
    $sudo_ apt-get update -q >/dev/null
    $sudo_ apt-get install -y -q "${missing[@]}" pkg-config >/dev/null
fi
swift build -c release --product cadence 2>&1 | grep -E "error|warning: unre|Compiling|Build complete" | tail -n 3 >&2
exec "$(swift build -c release --show-bin-path)/cadence" run "$@"
