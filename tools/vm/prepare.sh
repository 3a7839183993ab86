#!/usr/bin/env bash
# Prepares (idempotently) everything tools/vm/run.sh needs to boot Debian's real kernel
# in qemu (TCG) with a DRM driver: installs the apt packages, extracts the uncompressed
# vmlinux (booted through its PVH entry), builds vkms out of tree from linux-source-6.1
# against the matching linux-headers, collects the driver modules with all their
# dependencies, and copies busybox-static. vkms2.ko is vkms with two outputs
# (tools/vm/vkms-two-outputs.patch, then tools/vm/vkms-writeback-clone.patch: Virtual-1 and
# Writeback-1 may share CRTC 0), built the same way from a second copy; it has its own stamp,
# so a cache prepared before it existed only gains the vkms2 files. libdrm-tests gives modetest, which observe.sh copies
# into the guest with --bin (its ldd closure comes with it).
#
# Cache: $CADENCE_VM_DIR (default: <repo>/.vm). Layout:
#   <cache>/<abi>/vmlinux             kernel with PVH entry
#   <cache>/<abi>/modules/*.ko        flat module set (uncompressed)
#   <cache>/<abi>/load-<set>.txt      module load order for a set (vkms bochs virtio 9p)
#   <cache>/<abi>/ready               stamp: package versions this cache was built from
#   <cache>/<abi>/vkms2.ready         stamp of vkms2.ko (+ the patches' sha256), load-vkms2.txt
#   <cache>/busybox                   static busybox
#   <cache>/current                   the abi run.sh uses
# Usage: tools/vm/prepare.sh [--force]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${CADENCE_VM_DIR:-$repo/.vm}"
force=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "prepare.sh: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

say() { echo "vm-prepare: $*"; }
die() { echo "vm-prepare: error: $*" >&2; exit 1; }

# --- apt packages (only call apt-get when something is missing) -------------------------
packages=(linux-image-amd64 linux-headers-amd64 linux-source-6.1 qemu-system-x86
          busybox-static libgl1-mesa-dri libdrm-dev libgbm-dev gcc-12 make xz-utils
          binutils kmod python3 libdrm-tests patch)
missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
        missing+=("$p")
    fi
done
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    sudo=()
    if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    if ! "${sudo[@]}" apt-get install -y -q "${missing[@]}" >/dev/null; then
        "${sudo[@]}" apt-get update -q >/dev/null
        "${sudo[@]}" apt-get install -y -q "${missing[@]}" >/dev/null
    fi
fi

# --- versions: the image the meta-package points at, and matching headers/source ------
depends="$(dpkg-query -W -f='${Depends}' linux-image-amd64)"
abi="$(sed -n 's/^linux-image-\([^ ,]*\) (= .*/\1/p' <<<"${depends%%,*}")"
[ -n "$abi" ] || die "cannot find the kernel ABI in linux-image-amd64 Depends: $depends"
kver="$(dpkg-query -W -f='${Version}' "linux-image-$abi")"
srcver="$(dpkg-query -W -f='${Version}' linux-source-6.1)"
hdrver="$(dpkg-query -W -f='${Version}' "linux-headers-$abi" 2>/dev/null || true)"
[ "$hdrver" = "$kver" ] || die "linux-headers-$abi is '$hdrver', linux-image-$abi is $kver"
if [ "$srcver" != "$kver" ]; then
    echo "vm-prepare: warning: linux-source-6.1 is $srcver but linux-image-$abi is $kver" >&2
fi
moddir="/lib/modules/$abi"
build="$moddir/build"
[ -d "$build" ] || build="/usr/src/linux-headers-$abi"
[ -f "$moddir/modules.dep" ] || die "$moddir/modules.dep missing"

out="$cache/$abi"
stamp="kernel=$kver source=$srcver vm-prepare=2"
src="/usr/src/linux-source-6.1.tar.xz"
cc=gcc-12
command -v "$cc" >/dev/null || cc=gcc

# --- vkms2: vkms with two outputs (tools/vm/vkms-two-outputs.patch) and a writeback -----
# connector that can clone Virtual-1 (tools/vm/vkms-writeback-clone.patch) ---------------
# Built from its own copy of the source under names no other step uses (vkms2-src/,
# vkms2-build.log, modules/vkms2.ko, load-vkms2.txt, vkms2.ready), the module renamed to vkms2
# in the Makefile; vkms.ko and every other file of the cache are left as they are. Rebuilt when
# the kernel, the source or a patch changes. The patches apply in this order.
patch_files=("$here/vkms-two-outputs.patch" "$here/vkms-writeback-clone.patch")
vkms2_stamp="$stamp patch=$(cat "${patch_files[@]}" | sha256sum | cut -d' ' -f1)"
prepare_vkms2() {
    if [ "$force" = 0 ] && [ -f "$out/vkms2.ready" ] && [ "$(cat "$out/vkms2.ready")" = "$vkms2_stamp" ] \
       && [ -f "$out/modules/vkms2.ko" ] && [ -f "$out/load-vkms2.txt" ]; then
        return 0
    fi
    [ -r "$src" ] || die "cannot read $src"
    [ -f "$out/load-vkms.txt" ] || die "$out/load-vkms.txt missing"
    local d="$out/vkms2-src"
    rm -rf "$d" "$out/vkms2.ready"
    mkdir -p "$d"
    tar -xJf "$src" -C "$d" --strip-components=5 linux-source-6.1/drivers/gpu/drm/vkms
    local patch_file
    for patch_file in "${patch_files[@]}"; do
        patch -d "$d" -p5 -s <"$patch_file" || die "$patch_file does not apply to linux-source-6.1 $srcver"
    done
    sed -i -e 's/^vkms-y :=/vkms2-y :=/' -e 's/^obj-\$(CONFIG_DRM_VKMS) += vkms\.o$/obj-m += vkms2.o/' "$d/Makefile"
    grep -q '^obj-m += vkms2.o$' "$d/Makefile" || die "cannot rename the module in $d/Makefile"
    if ! make -s -C "$build" M="$d" CC="$cc" modules >"$out/vkms2-build.log" 2>&1; then
        tail -n 30 "$out/vkms2-build.log" >&2
        die "vkms2 build failed (log: $out/vkms2-build.log)"
    fi
    [ "$(modinfo -F depends "$d/vkms2.ko")" = "$(modinfo -F depends "$out/modules/vkms.ko")" ] \
        || die "vkms2.ko depends on other modules than vkms.ko"
    cp "$d/vkms2.ko" "$out/modules/vkms2.ko.tmp" && mv "$out/modules/vkms2.ko.tmp" "$out/modules/vkms2.ko"
    sed 's/^vkms\.ko$/vkms2.ko/' "$out/load-vkms.txt" >"$out/load-vkms2.txt.tmp"
    mv "$out/load-vkms2.txt.tmp" "$out/load-vkms2.txt"
    echo "$vkms2_stamp" >"$out/vkms2.ready"
    say "vkms2.ko (vkms with two outputs and a cloneable writeback) built with $cc"
}

if [ "$force" = 0 ] && [ -f "$out/ready" ] && [ "$(cat "$out/ready")" = "$stamp" ] \
   && [ -x "$cache/busybox" ]; then
    prepare_vkms2
    echo "$abi" >"$cache/current.tmp" && mv "$cache/current.tmp" "$cache/current"
    say "ready: kernel $abi ($kver), cache $out"
    exit 0
fi
say "preparing kernel $abi ($kver) in $out"
rm -rf "$out"
mkdir -p "$out/modules"

# --- vmlinux: decompress the bzImage's XZ payload, check ELF + Xen PVH note -------------
vmlinuz="/boot/vmlinuz-$abi"
[ -r "$vmlinuz" ] || die "cannot read $vmlinuz"
found=0
# Offsets of the XZ stream magic FD 37 7A 58 5A 00 (as in the kernel's extract-vmlinux).
for off in $(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | cut -d: -f1); do
    tail -c +$((off + 1)) "$vmlinuz" | xz -dc >"$out/vmlinux.tmp" 2>/dev/null || true
    if [ "$(head -c 4 "$out/vmlinux.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
        found=1
        break
    fi
done
[ "$found" = 1 ] || die "no XZ-compressed ELF found in $vmlinuz"
# XEN_ELFNOTE_PHYS32_ENTRY (type 0x12) is the PVH entry point qemu boots through.
if ! readelf -n "$out/vmlinux.tmp" | grep -qE '^ +Xen .*(\(0x00000012\)|PHYS32_ENTRY)'; then
    die "vmlinux from $vmlinuz has no Xen PVH entry note"
fi
mv "$out/vmlinux.tmp" "$out/vmlinux"
say "vmlinux: $(du -h "$out/vmlinux" | cut -f1) (PVH entry present)"

# --- vkms: extract its directory from linux-source-6.1 and build it out of tree ---------
[ -r "$src" ] || die "cannot read $src"
rm -rf "$out/vkms-src"
mkdir -p "$out/vkms-src"
tar -xJf "$src" -C "$out/vkms-src" --strip-components=5 linux-source-6.1/drivers/gpu/drm/vkms
if ! make -s -C "$build" M="$out/vkms-src" CC="$cc" CONFIG_DRM_VKMS=m modules \
        >"$out/vkms-build.log" 2>&1; then
    tail -n 30 "$out/vkms-build.log" >&2
    die "vkms build failed (log: $out/vkms-build.log)"
fi
cp "$out/vkms-src/vkms.ko" "$out/modules/vkms.ko"
say "vkms.ko built against $build with $cc"

# --- module sets with dependencies in load order ----------------------------------------
declare -A dep_of=() path_of=() seen=()
norm() { local n="${1##*/}"; n="${n%.xz}"; n="${n%.zst}"; n="${n%.gz}"; n="${n%.ko}"; echo "${n//-/_}"; }
while IFS= read -r line; do
    m="${line%%:*}"
    name="$(norm "$m")"
    path_of[$name]="$m"
    rest="${line#*:}"
    deps=""
    for d in $rest; do deps+=" $(norm "$d")"; done
    dep_of[$name]="$deps"
done <"$moddir/modules.dep"
path_of[vkms]="vkms.ko"
deps=""
for d in $(modinfo -F depends "$out/modules/vkms.ko" | tr ',' ' '); do deps+=" $(norm "$d")"; done
dep_of[vkms]="$deps"

order=()
visit() {
    local name="$1" d
    [ -n "${seen[$name]:-}" ] && return 0
    seen[$name]=1
    [ -n "${path_of[$name]:-}" ] || { grep -qE "/${name//_/[-_]}\.ko" "$moddir/modules.builtin" && return 0; die "module $name not found"; }
    for d in ${dep_of[$name]}; do visit "$d"; done
    order+=("$name")
}
copy_module() {
    local name="$1" p="${path_of[$1]}"
    [ "$name" = vkms ] && return 0
    [ -f "$out/modules/$name.ko" ] && return 0
    case "$p" in
        *.xz) xz -dc "$moddir/$p" >"$out/modules/$name.ko" ;;
        *.zst) zstd -qdc "$moddir/$p" >"$out/modules/$name.ko" ;;
        *.gz) gzip -dc "$moddir/$p" >"$out/modules/$name.ko" ;;
        *) cp "$moddir/$p" "$out/modules/$name.ko" ;;
    esac
}
make_set() {
    local set="$1"; shift
    seen=(); order=()
    local m
    for m in "$@"; do visit "$(norm "$m")"; done
    : >"$out/load-$set.txt"
    for m in "${order[@]}"; do copy_module "$m"; echo "$m.ko" >>"$out/load-$set.txt"; done
    say "modules for $set: ${order[*]}"
}
make_set vkms drm drm_kms_helper drm_shmem_helper vkms
make_set bochs drm drm_kms_helper bochs
make_set virtio drm drm_kms_helper drm_shmem_helper virtio_pci virtio-gpu
make_set 9p virtio_pci 9pnet_virtio 9p
prepare_vkms2

# --- busybox ----------------------------------------------------------------------------
bb=/bin/busybox
[ -x "$bb" ] || die "$bb missing (install busybox-static)"
if readelf -lW "$bb" | grep -q 'program interpreter'; then
    die "busybox at $bb is not statically linked (install busybox-static)"
fi
cp -L "$bb" "$cache/busybox.tmp" && mv "$cache/busybox.tmp" "$cache/busybox"

echo "$stamp" >"$out/ready"
echo "$abi" >"$cache/current.tmp" && mv "$cache/current.tmp" "$cache/current"
say "ready: kernel $abi ($kver), cache $out"
