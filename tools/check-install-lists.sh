#!/usr/bin/env bash
# Checks that what the project needs is installed by its own files, not by an earlier session's
# hands: every pkg-config module a Package.swift links (root, Examples, Benchmarks, tools/fuzz)
# has an apt provider that tools/apt-packages.txt lists (tools/cadence-run.sh installs the root
# manifest's from Package.swift itself) and that the library guide names; every program the
# test scripts call is on PATH and comes from a package that tools/apt-packages.txt lists (or an
# Essential one). The package of a program is asked of dpkg, so a program installed by hand whose
# package the list leaves out fails here even on a machine where everything happens to work.
# Run by tools/test.sh after its apt install. Exits 1 with one line per problem.
set -euo pipefail
cd "$(dirname "$0")/.."
list=" $(tr '\n' ' ' <tools/apt-packages.txt) "
guide=Sources/CadenceCore/CadenceCore.docc/GettingStarted.md
problems=0
fail() { echo "install lists: $*"; problems=$((problems + 1)); }
listed() { [[ "$list" == *" $1 "* ]]; }
# What installing the list installs besides: the direct dependencies of each listed package
# (pkg-config is a transitional package for pkgconf, whose pkgconf-bin has the program).
deps=" $(dpkg-query -W -f='${Depends} ${Pre-Depends}\n' $(cat tools/apt-packages.txt) 2>/dev/null \
    | tr ',|' '\n\n' | sed -e 's/([^)]*)//g' -e 's/:any//' | awk '{print $1}' | sort -u | tr '\n' ' ' || true) "
installed_by_list() { listed "$1" || [[ "$deps" == *" $1 "* ]]; }

manifests=(Package.swift)
for m in Examples/Package.swift Benchmarks/Package.swift tools/fuzz/Package.swift; do [ -f "$m" ] && manifests+=("$m"); done
libs=0
for m in "${manifests[@]}"; do
    while read -r pc pkgs; do
        [ -n "$pc" ] || continue
        libs=$((libs + 1))
        [ -n "$pkgs" ] || { fail "$m: system library '$pc' has no providers: [.apt([...])]"; continue; }
        for p in $pkgs; do
            listed "$p" || fail "$m: '$pc' is provided by $p, which tools/apt-packages.txt does not list"
            [ "$m" != Package.swift ] || grep -qE "^$pc $p\$" tools/cadence-run.sh || fail "tools/cadence-run.sh does not list '$pc $p' (set-up command 1 installs what Package.swift links)"
            [ "$m" != Package.swift ] || grep -q -- "$p" "$guide" || fail "$guide does not name $p (a consumer of the library needs it)"
            dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || fail "$p (for '$pc' in $m) is not installed"
        done
        pkg-config --exists "$pc" 2>/dev/null || fail "pkg-config cannot find '$pc' ($m)"
    done < <(tools/system-libraries.sh "$m")
done

# The programs the scripts call: every `command -v NAME` in tools/, and these, which the VM and
# check scripts run by name or put into the guest.
programs="chromium drm_info modetest promtool edid-decode seatd setfacl systemd-analyze qemu-system-x86_64 busybox gcc-12 make patch xz depmod pkg-config"
scanned=$(grep -rhoE 'command -v "?[A-Za-z0-9_.+-]+' tools --include='*.sh' --exclude=check-install-lists.sh | awk '{print $3}' | tr -d '"' | grep -vE '^(cc|gcc|\$.*)$' || true)
checked=0
for prog in $(printf '%s\n' $programs $scanned | sort -u); do
    checked=$((checked + 1))
    path=$(command -v "$prog" || true)
    if [ -z "$path" ]; then
        fail "program '$prog' is not installed: add its Debian package to tools/apt-packages.txt"
        continue
    fi
    pkgs=$( { dpkg -S "$path" 2>/dev/null; dpkg -S "$(readlink -f "$path")" 2>/dev/null; dpkg -S "${path#/usr}" 2>/dev/null; } \
        | sed 's/: .*//' | tr ', ' '\n\n' | sed 's/:.*//' | sort -u | grep -v '^$' || true)
    if [ -z "$pkgs" ]; then
        fail "program '$prog' ($path) belongs to no Debian package: the scripts must install it themselves"
        continue
    fi
    ok=0
    for p in $pkgs; do
        if installed_by_list "$p" || [ "$(dpkg-query -W -f='${Essential}' "$p" 2>/dev/null)" = yes ]; then ok=1; fi
    done
    [ "$ok" = 1 ] || fail "program '$prog' comes from $(echo $pkgs), which tools/apt-packages.txt does not list (nor a package it lists depends on)"
done
if [ "$problems" != 0 ]; then
    echo "install lists: $problems problem(s)"
    exit 1
fi
echo "install lists: $libs system libraries and $checked programs, each installed by the project's own lists"
