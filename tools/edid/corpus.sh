#!/usr/bin/env bash
# Fetches the EDID corpus listed in tools/edid/MANIFEST from Debian source packages
# (`apt-get source --download-only`), checks every tarball and file against its SHA-256 and
# copies the EDIDs to DIR/<package>/<name>. Nothing fetched is committed. Cached: a second run
# with the same MANIFEST does nothing.
#   tools/edid/corpus.sh [DIR]     DIR default: $CADENCE_EDID_CORPUS or .cache/edid-corpus
# Needs deb-src entries for the system's Debian suites; when there are none it adds them, made
# from the existing `deb` entries (/etc/apt/sources.list.d/cadence-deb-src.*), and runs apt-get update.
set -euo pipefail
cd "$(dirname "$0")/../.."
manifest=tools/edid/MANIFEST
dir=${1:-${CADENCE_EDID_CORPUS:-.cache/edid-corpus}}
sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo

if [ -f "$dir/.manifest" ] && cmp -s "$dir/.manifest" "$manifest"; then
    echo "edid corpus: $(grep -c '^edid ' "$manifest") files cached in $dir"
    exit 0
fi

has_src() {
    grep -Eqs '^(deb-src |Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources
}
if ! has_src; then
    echo "edid corpus: adding deb-src entries next to the deb ones"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        grep -q '^Types: deb$' "$f" || continue
        sed 's/^Types: deb$/Types: deb-src/' "$f" | $sudo_ tee "/etc/apt/sources.list.d/cadence-deb-src-$(basename "$f")" >/dev/null
    done
    if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | $sudo_ tee /etc/apt/sources.list.d/cadence-deb-src.list >/dev/null
    fi
    has_src || { echo "edid corpus: no Debian deb entries to derive deb-src entries from" >&2; exit 1; }
    $sudo_ apt-get update -q >/dev/null
fi

work=$(mktemp -d /tmp/cadence-edid-corpus.XXXXXX)
trap 'rm -rf "$work"' EXIT
while read -r kind pkg version tarball sha; do
    [ "$kind" = source ] || continue
    if ! (cd "$work" && apt-get source --download-only -q "$pkg=$version" >/dev/null 2>"$work/$pkg.err"); then
        # The .debian.tar may be missing from a partial mirror; only the upstream tarball is needed.
        [ -f "$work/$tarball" ] || { echo "edid corpus: apt-get source $pkg=$version failed:" >&2; cat "$work/$pkg.err" >&2; exit 1; }
    fi
    echo "$sha  $work/$tarball" | sha256sum -c --quiet - || { echo "edid corpus: $tarball: SHA-256 mismatch" >&2; exit 1; }
    mkdir -p "$work/$pkg"
    tar -xf "$work/$tarball" -C "$work/$pkg"
done < "$manifest"

rm -rf "$dir"
mkdir -p "$dir"
n=0
while read -r kind sha pkg path; do
    [ "$kind" = edid ] || continue
    src="$work/$pkg/$path"
    [ -f "$src" ] || { echo "edid corpus: $pkg has no $path" >&2; exit 1; }
    echo "$sha  $src" | sha256sum -c --quiet - || { echo "edid corpus: $pkg $path: SHA-256 mismatch" >&2; exit 1; }
    mkdir -p "$dir/$pkg"
    cp "$src" "$dir/$pkg/$(basename "$path")"
    n=$((n + 1))
done < "$manifest"
cp "$manifest" "$dir/.manifest"
echo "edid corpus: $n files in $dir"
