# Shared settings for the guest lane scripts in tests/vm/. Source it; do not run it.
# Adapted from the project's QEMU recipe (minimal flavour only): a Debian
# kernel from the archive, a busybox initramfs, the host root shared
# read-only with a tmpfs overlay, pure cgroup2 with every controller enabled.
# shellcheck shell=bash

VMCACHE=${VMCACHE:-/var/tmp/autogroup-vm}
VM_TOOLS_DIR=${VM_TOOLS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
# The lane's own build output (kernel + initramfs); the kernel .deb is cached
# in $VMCACHE/debs, shared with the recipe.
VM_LANE=${VM_LANE:-$VMCACHE/lane}

# Debian kernel flavour used for the guest (the metapackage is resolved to a
# concrete linux-image-X.Y.Z-N-amd64 at build time).
KERNEL_META=${KERNEL_META:-linux-image-amd64}
VM_CPU_KVM=${VM_CPU_KVM:-host}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Echo the accelerator flags. KVM only when it is real hardware virtualisation
# (kvm_intel / kvm_amd loaded): on the build machines /dev/kvm is "kvm_pvm",
# a nested software hypervisor on which a stock Debian kernel never boots.
# TCG boots the PVH vmlinux in about 2 s, so it is the fast path anyway.
# VM_ACCEL=tcg forces emulation, VM_ACCEL=kvm forces KVM.
vm_accel_args() {
    local want=${VM_ACCEL:-auto}
    if [ "$want" = kvm ] || { [ "$want" = auto ] && [ -w /dev/kvm ] \
            && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; }; then
        if timeout 20 qemu-system-x86_64 -enable-kvm -cpu "$VM_CPU_KVM" \
               -m 64 -nodefaults -display none -S -monitor stdio \
               >/dev/null 2>&1 <<<'quit'; then
            echo "-enable-kvm -cpu $VM_CPU_KVM"
            return 0
        fi
        [ "$want" = kvm ] && die "KVM requested but qemu -enable-kvm -cpu $VM_CPU_KVM failed"
        log "KVM not usable, falling back to TCG"
    fi
    echo "-accel tcg,thread=multi -cpu max"
}

# Print the concrete kernel package name, e.g. linux-image-6.1.0-57-amd64.
kernel_pkg() {
    { apt-cache depends "$KERNEL_META" 2>/dev/null || true; } \
        | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}

# Print the commands the lane needs that are missing (empty: all there).
vm_missing_tools() {
    local c
    for c in qemu-system-x86_64 cpio xz dpkg-deb apt-get apt-cache gzip flock timeout; do
        command -v "$c" >/dev/null 2>&1 || printf '%s ' "$c"
    done
    # the initramfs needs a static busybox (busybox-static)
    if [ ! -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
        printf 'static /bin/busybox '
    fi
}
