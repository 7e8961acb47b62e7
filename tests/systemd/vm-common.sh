# Shared settings for the systemd guest scripts in tests/systemd/. Source it.
# Adapted from the project's QEMU recipe ("full" flavour): a Debian 12 kernel
# from the archive, a busybox initramfs, a debootstrapped Debian 12 root with
# systemd, logind, libpam-systemd and sshd, shared read-only over 9p under a
# tmpfs overlay (every boot starts pristine). TCG, as KVM does not work on
# the build machines (see tests/vm/vm-common.sh).
# shellcheck shell=bash

VMCACHE=${VMCACHE:-/var/tmp/autogroup-vm}
SD_TOOLS_DIR=${SD_TOOLS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
# this lane's artefacts: kernel, initramfs, rootfs; the kernel .deb is shared
# with the other lanes in $VMCACHE/debs
SD_LANE=${SD_LANE:-$VMCACHE/systemd}
KERNEL_META=${KERNEL_META:-linux-image-amd64}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# TCG unless real hardware KVM (kvm_intel/kvm_amd) is loaded; VM_ACCEL=tcg|kvm forces.
vm_accel_args() {
    local want=${VM_ACCEL:-auto}
    if [ "$want" = kvm ] || { [ "$want" = auto ] && [ -w /dev/kvm ] \
            && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; }; then
        echo "-enable-kvm -cpu host"; return 0
    fi
    echo "-accel tcg,thread=multi -cpu max"
}

kernel_pkg() {
    apt-cache depends "$KERNEL_META" 2>/dev/null \
        | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}

# Packages the lane needs on the host; prints the missing ones.
sd_missing_pkgs() {
    local p
    for p in qemu-system-x86 busybox-static cpio xz-utils debootstrap; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || printf '%s ' "$p"
    done
}
