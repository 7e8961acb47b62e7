#!/bin/bash
# Build (or reuse) the systemd guest in $SD_LANE (default
# /var/tmp/autogroup-vm/systemd):
#   vmlinux, vmlinuz   Debian 12 kernel from the linux-image .deb (apt-get download,
#                      cached in $VMCACHE/debs)
#   initrd.img         busybox + virtio/9p/overlay modules, /init = guest-init.sh
#   rootfs/            debootstrap'ed Debian 12 (minbase + systemd, dbus, logind,
#                      libpam-systemd, openssh-server, procps), root's ssh key,
#                      vm-test.service running guest-runner.sh
# Idempotent (stamps) and serialised with flock. Cold: ~60 s debootstrap.
# Exit 77 when the host packages cannot be installed or the mirror is unreachable.
# env: MIRROR (http://deb.debian.org/debian), VMCACHE, SD_LANE
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"

missing=$(sd_missing_pkgs)
if [ -n "$missing" ]; then
    log "installing: $missing"
    # shellcheck disable=SC2086
    if ! DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
        timeout 300 apt-get update -qq >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 \
            || { log "cannot install $missing"; exit 77; }
    fi
fi
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || { log "no static /bin/busybox"; exit 77; }

mkdir -p "$SD_LANE" "$VMCACHE/debs"
exec 9>"$SD_LANE/.lock"
flock 9

# ---- kernel + initramfs
INIT_SUM=$(sha256sum < "$SD_TOOLS_DIR/guest-init.sh" | cut -d' ' -f1)
PKG=$(kernel_pkg)
if [ -z "$PKG" ]; then timeout 300 apt-get update -qq >/dev/null 2>&1 || true; PKG=$(kernel_pkg); fi
if [ -n "$PKG" ] && [ -f "$SD_LANE/initrd.img" ] && [ "$(cat "$SD_LANE/KVER" 2>/dev/null)" = "${PKG#linux-image-}" ] \
        && [ "$(cat "$SD_LANE/INIT_SUM" 2>/dev/null)" = "$INIT_SUM" ]; then
    log "kernel + initramfs up to date (${PKG#linux-image-})"
else
    DEB=""
    [ -n "$PKG" ] && DEB=$(ls "$VMCACHE"/debs/"$PKG"_*.deb 2>/dev/null | tail -n1 || true)
    if [ -z "$DEB" ] && [ -n "$PKG" ]; then
        log "downloading $PKG"
        (cd "$VMCACHE/debs" && timeout 600 apt-get download "$PKG" >/dev/null 2>&1 || true)
        DEB=$(ls "$VMCACHE"/debs/"$PKG"_*.deb 2>/dev/null | tail -n1 || true)
    fi
    [ -n "$DEB" ] || DEB=$(ls -t "$VMCACHE"/debs/linux-image-[0-9]*_*.deb 2>/dev/null | head -n1 || true)
    [ -n "$DEB" ] || { log "no kernel package (offline?)"; exit 77; }
    PKG=$(basename "$DEB"); PKG=${PKG%%_*}; KVER=${PKG#linux-image-}
    MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
          9pnet 9pnet_virtio netfs fscache 9p overlay"
    TMP=$(mktemp -d "$SD_LANE/build.XXXXXX")
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
    cp "$SD_TOOLS_DIR/guest-init.sh" "$R/init"; chmod 755 "$R/init"
    : > "$R/modules.order"
    for m in $MODS; do
        f=$(find "$TMP/lib/modules/$KVER/kernel" -name "$m.ko" | head -n1)
        [ -n "$f" ] || die "module $m not found in $DEB"
        cp "$f" "$R/modules/"; echo "$m" >> "$R/modules.order"
    done
    (cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$TMP/initrd.img"
    cp "$TMP"/boot/vmlinuz-* "$TMP/vmlinuz"
    # the ELF vmlinux boots through PVH, skipping the XZ decompressor (slow under TCG)
    off=$(grep -abo $'\xfd7zXZ\x00' "$TMP/vmlinuz" | head -n1 | cut -d: -f1)
    rm -f "$SD_LANE/vmlinux"
    if [ -n "$off" ]; then
        tail -c +$((off + 1)) "$TMP/vmlinuz" | xz -dc > "$TMP/vmlinux" 2>/dev/null || true
        head -c 4 "$TMP/vmlinux" | grep -q ELF && mv "$TMP/vmlinux" "$SD_LANE/vmlinux"
    fi
    mv "$TMP/vmlinuz" "$SD_LANE/vmlinuz"
    mv "$TMP/initrd.img" "$SD_LANE/initrd.img"
    echo "$KVER" > "$SD_LANE/KVER"
    echo "$INIT_SUM" > "$SD_LANE/INIT_SUM"
    rm -rf "$TMP"; trap - EXIT
    log "built the kernel + initramfs ($KVER)"
fi

# ---- rootfs
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PKGS=systemd,systemd-sysv,dbus,libpam-systemd,openssh-server,openssh-client,iproute2,procps,util-linux,libpam-modules,passwd
ROOTFS=$SD_LANE/rootfs
STAMP=$SD_LANE/rootfs.done
SUM=$(cat "$0" "$SD_TOOLS_DIR/guest-runner.sh" | sha256sum | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$SUM" ] && [ -d "$ROOTFS" ]; then
    log "rootfs up to date ($ROOTFS)"; exit 0
fi
mkdir -p "$VMCACHE/debootstrap-cache"
rm -rf "$ROOTFS.tmp" "$STAMP"
T0=$(date +%s)
log "debootstrap bookworm (minbase + $PKGS)"
if ! nice -n 19 timeout 1800 debootstrap --variant=minbase --include="$PKGS" \
        --cache-dir="$VMCACHE/debootstrap-cache" bookworm "$ROOTFS.tmp" "$MIRROR" \
        > "$SD_LANE/debootstrap.log" 2>&1; then
    tail -n 5 "$SD_LANE/debootstrap.log" >&2
    rm -rf "$ROOTFS.tmp"
    log "debootstrap failed (mirror $MIRROR unreachable?)"; exit 77
fi
log "debootstrap took $(( $(date +%s) - T0 ))s"
R=$ROOTFS.tmp
echo vmguest > "$R/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tvmguest\n::1\tlocalhost ip6-localhost\n' > "$R/etc/hosts"
: > "$R/etc/fstab"
echo 'root:root' | chroot "$R" chpasswd
# root's client key; the test copies the public half to its throw-away users
mkdir -p "$R/root/.ssh"
ssh-keygen -q -t ed25519 -N '' -C vmguest-root -f "$R/root/.ssh/id_ed25519"
chmod 700 "$R/root/.ssh"
printf 'Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n' > "$R/root/.ssh/config"
printf 'UseDNS no\n' > "$R/etc/ssh/sshd_config.d/vmtest.conf"
chroot "$R" systemctl mask serial-getty@ttyS0.service getty@tty1.service \
    systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
    e2scrub_all.timer fstrim.timer man-db.timer \
    proc-sys-fs-binfmt_misc.automount >/dev/null 2>&1 || true
install -m 755 "$SD_TOOLS_DIR/guest-runner.sh" "$R/usr/local/sbin/vm-test-runner"
cat > "$R/etc/systemd/system/vm-test.service" <<'UNIT'
[Unit]
Description=pam_autogroup systemd-guest test command
After=multi-user.target ssh.service systemd-logind.service systemd-user-sessions.service
Wants=ssh.service
ConditionPathExists=/etc/vm-out

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/vm-test-runner
StandardInput=null
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no

[Install]
WantedBy=multi-user.target
UNIT
chroot "$R" systemctl enable vm-test.service >/dev/null 2>&1
rm -f "$R"/var/cache/apt/archives/*.deb
rm -rf "$ROOTFS"
mv "$R" "$ROOTFS"
echo "$SUM" > "$STAMP"
log "built $ROOTFS ($(du -sh "$ROOTFS" | cut -f1)) in $(( $(date +%s) - T0 ))s"
