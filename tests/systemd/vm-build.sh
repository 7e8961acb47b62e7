#!/bin/bash
# Build (or reuse) the systemd guest:
#   $VMCACHE/vmlib/boot-<hash>  the kernel + busybox initramfs both lanes boot
#                         (tests/vmlib/common.sh, vm_build_boot)
#   $SD_LANE/rootfs/      debootstrap'ed Debian 12 (minbase + systemd, dbus, logind,
#                         libpam-systemd, openssh-server, procps), root's ssh key,
#                         vm-test.service running guest-runner.sh
# Idempotent (the rootfs directory and its stamp are keyed by a hash of this
# script and guest-runner.sh: vm-common.sh)
# and serialised with flock; a warm check does not wait for running guests.
# Cold: ~1-3 min of debootstrap. Installs qemu-system-x86, busybox-static,
# cpio, xz-utils and debootstrap when missing.
# Exit status: 0 built or up to date, 77 the guest cannot be had here (packages
# cannot be installed, the mirror is unreachable), 1 an error.
# env: MIRROR (http://deb.debian.org/debian), VMCACHE, SD_LANE
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

vm_ensure_pkgs qemu-system-x86 busybox-static cpio xz-utils debootstrap
vm_build_boot

MIRROR=${MIRROR:-http://deb.debian.org/debian}
PKGS=systemd,systemd-sysv,dbus,libpam-systemd,openssh-server,openssh-client,iproute2,procps,util-linux,libpam-modules,passwd,tmux,cron
SUM=$SD_SUM
rootfs_current() { [ -d "$VM_ROOTFS" ] && [ "$(cat "$VM_ROOTFS_STAMP" 2>/dev/null)" = "$SUM" ]; }
mkdir -p "$SD_LANE" || vm_unavailable "cannot create $SD_LANE"
exec 9>"$VM_ROOTFS_LOCK"
flock -s 9
rootfs_current && { log "rootfs up to date ($VM_ROOTFS)"; exit 0; }
flock -u 9; flock 9
rootfs_current && { log "rootfs up to date ($VM_ROOTFS)"; exit 0; }

mkdir -p "$VMCACHE/debootstrap-cache"
rm -rf "$VM_ROOTFS.tmp" "$VM_ROOTFS_STAMP"
T0=$(date +%s)
log "debootstrap bookworm (minbase + $PKGS)"
if ! nice -n 19 timeout 1800 debootstrap --variant=minbase --include="$PKGS" \
        --cache-dir="$VMCACHE/debootstrap-cache" bookworm "$VM_ROOTFS.tmp" "$MIRROR" \
        > "$SD_LANE/debootstrap.log" 2>&1; then
    tail -n 5 "$SD_LANE/debootstrap.log" >&2
    rm -rf "$VM_ROOTFS.tmp"
    vm_unavailable "debootstrap failed (mirror $MIRROR unreachable?)"
fi
log "debootstrap took $(( $(date +%s) - T0 ))s"
R=$VM_ROOTFS.tmp
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
install -m 755 "$HERE/guest-runner.sh" "$R/usr/local/sbin/vm-test-runner"
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
rm -rf "$VM_ROOTFS"
mv "$R" "$VM_ROOTFS"
echo "$SUM" > "$VM_ROOTFS_STAMP"
# root file systems of other versions unused for a week go (when no guest holds them)
for d in "$VM_IMAGES"/systemd-*/; do
    d=${d%/}
    [ "$d" = "$SD_LANE" ] || [ -z "$(find "$d" -maxdepth 1 -name rootfs.done -mtime +7)" ] && continue
    (flock -n 7 && rm -rf "$d/rootfs" "$d/rootfs.done" && rm -rf "$d") 7>"$d/.lock" || true
done
log "built $VM_ROOTFS ($(du -sh "$VM_ROOTFS" | cut -f1)) in $(( $(date +%s) - T0 ))s"
