#!/bin/bash
# Build (or reuse) the guest: a Debian kernel taken from the linux-image .deb
# (downloaded with apt-get download, cached in $VMCACHE/debs) and a ~1.5 MB
# busybox initramfs whose /init (guest-init.sh) mounts the host root over 9p.
# Idempotent and safe to run concurrently (flock): does nothing when the
# artefacts match the kernel package and guest-init.sh.
#
# Output: $VM_LANE/{vmlinuz,vmlinux,initrd.img,KVER,INIT_SUM}
# Installs nothing; needs root for apt-get update when the package lists are missing.
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"
trap 'log "ERROR: vm-build.sh failed at line $LINENO"' ERR

missing=$(vm_missing_tools)
[ -z "$missing" ] || die "missing: $missing"
mkdir -p "$VM_LANE" "$VMCACHE/debs"
exec 9>"$VMCACHE/.lane.lock"
flock 9

INIT_SUM=$(cat "$VM_TOOLS_DIR/guest-init.sh" | sha256sum | cut -d' ' -f1)
PKG=$(kernel_pkg)
if [ -z "$PKG" ]; then
    timeout 300 apt-get update >/dev/null 2>&1 || true
    PKG=$(kernel_pkg)
fi
up_to_date() { # $1 = KVER or "" (any cached kernel)
    [ -f "$VM_LANE/initrd.img" ] && [ -f "$VM_LANE/vmlinuz" ] \
        && [ "$(cat "$VM_LANE/INIT_SUM" 2>/dev/null)" = "$INIT_SUM" ] \
        && { [ -z "$1" ] || [ "$(cat "$VM_LANE/KVER" 2>/dev/null)" = "$1" ]; }
}
if [ -n "$PKG" ] && up_to_date "${PKG#linux-image-}"; then
    log "guest up to date (${PKG#linux-image-})"; exit 0
fi

DEB=""
[ -n "$PKG" ] && DEB=$(ls "$VMCACHE"/debs/"$PKG"_*.deb 2>/dev/null | tail -n1 || true)
if [ -z "$DEB" ] && [ -n "$PKG" ]; then
    log "downloading $PKG"
    (cd "$VMCACHE/debs" && timeout 600 apt-get download "$PKG" 2>&1 \
        | grep -v '^W: Download is performed unsandboxed' || true)
    DEB=$(ls "$VMCACHE"/debs/"$PKG"_*.deb 2>/dev/null | tail -n1 || true)
fi
if [ -z "$DEB" ]; then
    # offline: fall back to the newest kernel .deb already in the cache
    DEB=$(ls -t "$VMCACHE"/debs/linux-image-[0-9]*_*.deb 2>/dev/null | head -n1 || true)
    [ -n "$DEB" ] || die "no kernel: cannot resolve or download ${PKG:-$KERNEL_META}"
    PKG=$(basename "$DEB"); PKG=${PKG%%_*}
    if up_to_date "${PKG#linux-image-}"; then log "offline, using cached ${PKG#linux-image-}"; exit 0; fi
fi
KVER=${PKG#linux-image-}

# Modules needed to reach the 9p host root, in insmod order.
MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
      9pnet 9pnet_virtio netfs fscache 9p overlay"

TMP=$(mktemp -d "$VMCACHE/build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log "extracting the kernel and modules from $(basename "$DEB")"
dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$TMP" \
    --wildcards "./boot/vmlinuz-*" "./lib/modules/$KVER/kernel/drivers/virtio/*" \
    "./lib/modules/$KVER/kernel/net/9p/*" "./lib/modules/$KVER/kernel/fs/9p/*" \
    "./lib/modules/$KVER/kernel/fs/netfs/*" "./lib/modules/$KVER/kernel/fs/fscache/*" \
    "./lib/modules/$KVER/kernel/fs/overlayfs/*"

R=$TMP/root
mkdir -p "$R"/{bin,dev,proc,sys,modules}
cp /bin/busybox "$R/bin/busybox"
cp "$VM_TOOLS_DIR/guest-init.sh" "$R/init"; chmod 755 "$R/init"
: > "$R/modules.order"
for m in $MODS; do
    f=$(find "$TMP/lib/modules/$KVER/kernel" -name "$m.ko" | head -n1)
    [ -n "$f" ] || die "module $m not found in $DEB"
    cp "$f" "$R/modules/"; echo "$m" >> "$R/modules.order"
done
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$TMP/initrd.img"
cp "$TMP"/boot/vmlinuz-* "$TMP/vmlinuz"
# Also unpack the ELF vmlinux (Debian kernels are XZ bzImages with
# CONFIG_PVH=y): qemu boots an ELF vmlinux through the PVH entry point,
# skipping the XZ decompressor, which is slow under TCG.
off=$(grep -abo $'\xfd7zXZ\x00' "$TMP/vmlinuz" | head -n1 | cut -d: -f1)
rm -f "$VM_LANE/vmlinux"
if [ -n "$off" ]; then
    tail -c +$((off + 1)) "$TMP/vmlinuz" | xz -dc > "$TMP/vmlinux" 2>/dev/null || true
    if head -c 4 "$TMP/vmlinux" | grep -q ELF; then mv "$TMP/vmlinux" "$VM_LANE/vmlinux"
    else log "no ELF vmlinux, will boot the bzImage"; fi
fi
mv "$TMP/vmlinuz" "$VM_LANE/vmlinuz"
mv "$TMP/initrd.img" "$VM_LANE/initrd.img"
echo "$KVER" > "$VM_LANE/KVER"
echo "$INIT_SUM" > "$VM_LANE/INIT_SUM"
log "built $VM_LANE (kernel $KVER, initrd $(du -h "$VM_LANE/initrd.img" | cut -f1))"
