# tests/vmlib/common.sh: the host side of both QEMU guest lanes (tests/vm,
# tests/systemd). Source it (a flavour's vm-common.sh does); do not run it.
# Adapted from the project's QEMU recipe: a Debian kernel from the archive,
# a busybox initramfs whose /init (guest-init.sh) mounts a root file system
# shared read-only over 9p under a tmpfs overlay (every boot starts pristine),
# the run directory and the --ro/--rw shares at their host paths.
#
# What a flavour sets before calling vm_run (what differs between the lanes):
#   VM_FLAVOUR          its name, for messages
#   VM_ROOTFS           the host directory that becomes the guest's / (/ = the host's own root)
#   VM_INIT             PID 1 after switch_root, a path in that root (systemd's /sbin/init);
#                       empty: the run directory's stage2.sh, copied from VM_STAGE2
#   VM_STAGE2           the flavour's stage 2 (with VM_INIT empty)
#   VM_TIMEOUT_DEFAULT  vm-run.sh's -t default, seconds
#   VM_ROOTFS_LOCK, VM_ROOTFS_STAMP  (a built root fs) its lock, held shared while a guest
#                       runs, and the file whose presence says it is built
#
# Cache ($VMCACHE, default /var/tmp/autogroup-vm, shared by everyone):
#   debs/                 kernel .debs (apt-get download)
#   debootstrap-cache/    .debs for debootstrapped roots
#   runs/                 run and results directories (removed after each run)
#   vmlib/boot-<hash>/    vmlinux, vmlinuz, initrd.img, KVER, INIT_SUM: the kernel and
#                         initramfs both flavours boot (hash: of guest-init.sh and the module list)
#   vmlib/<flavour>/      a flavour's own artefacts (the systemd root fs)
# Builds take an exclusive flock on the artefact's .lock, guests a shared one.
#
# env: VMCACHE, VM_ACCEL=auto|kvm|tcg, VM_TCG_THREAD=multi|single (TCG: one
#      host thread per vCPU, or all vCPUs on one), VM_CPU_KVM (host), KERNEL_META
#      (linux-image-amd64), VM_KERNEL_ARGS, VM_BOOT_BZIMAGE=1, VM_NICE (19)
# shellcheck shell=bash

VMCACHE=${VMCACHE:-/var/tmp/autogroup-vm}
VMLIB_DIR=${VMLIB_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
VM_IMAGES=${VM_IMAGES:-$VMCACHE/vmlib}
# Modules needed to reach the 9p root, in insmod order.
VM_MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
            9pnet 9pnet_virtio netfs fscache 9p overlay"
vm_boot_sum() { { cat "$VMLIB_DIR/guest-init.sh"; echo $VM_MODULES; } | sha256sum | cut -d' ' -f1; }
# keyed by what builds the initramfs: trees of different versions on one
# machine each keep their own (no rebuilding one in turn under the other's guests)
VM_BOOT=$VM_IMAGES/boot-$(vm_boot_sum | cut -c1-16)
# Debian kernel flavour used for the guest (the metapackage is resolved to a
# concrete linux-image-X.Y.Z-N-amd64 at build time).
KERNEL_META=${KERNEL_META:-linux-image-amd64}
VM_CPU_KVM=${VM_CPU_KVM:-host}
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# The guest cannot be had here (tools, network, space): exit 77, which the
# lanes report as a skip with this reason.
vm_unavailable() { log "unavailable: $*"; exit 77; }

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
    echo "-accel tcg,thread=${VM_TCG_THREAD:-multi} -cpu max"
}

# Print the commands the guests need that are missing (empty: all there).
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

# Install the Debian packages that are missing (apt-get update once if needed);
# exit 77 when they cannot be had.
vm_ensure_pkgs() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    # installing packages changes the machine: only when asked (doc/testing.md)
    [ "${AG_TEST_SYSTEM:-0}" = 1 ] ||
        vm_unavailable "missing on the host: ${missing[*]} (install them, or set AG_TEST_SYSTEM=1 to let the lane install them)"
    log "installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends \
        -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null 2>&1 && return 0
    timeout 300 apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends \
        -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null 2>&1 || vm_unavailable "cannot install ${missing[*]}"
}

# Print the concrete kernel package name, e.g. linux-image-6.1.0-57-amd64.
vm_kernel_pkg() {
    { apt-cache depends "$KERNEL_META" 2>/dev/null || true; } \
        | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}

# Print the cached .deb of kernel package $1, downloading it when missing;
# empty when it cannot be had.
vm_kernel_deb() {
    local deb
    deb=$(ls "$VMCACHE"/debs/"$1"_*.deb 2>/dev/null | tail -n1 || true)
    if [ -z "$deb" ]; then
        log "downloading $1"
        (cd "$VMCACHE/debs" && flock 7 && timeout 600 apt-get download "$1" 2>&1 \
            | grep -v '^W: Download is performed unsandboxed' >&2) 7>"$VMCACHE/debs/.lock" || true
        deb=$(ls "$VMCACHE"/debs/"$1"_*.deb 2>/dev/null | tail -n1 || true)
    fi
    echo "$deb"
}

# True when $VM_BOOT holds a kernel + initramfs for the current guest-init.sh
# and module list, of kernel version $1 ("" = any).
vm_boot_current() {
    [ -f "$VM_BOOT/initrd.img" ] && [ -f "$VM_BOOT/vmlinuz" ] \
        && [ "$(cat "$VM_BOOT/INIT_SUM" 2>/dev/null)" = "$(vm_boot_sum)" ] \
        && { [ -z "$1" ] || [ "$(cat "$VM_BOOT/KVER" 2>/dev/null)" = "$1" ]; }
}

# Build (or reuse) the kernel + initramfs in $VM_BOOT: the kernel from the
# linux-image .deb, a ~1.5 MB busybox initramfs with the 9p/overlay modules
# and guest-init.sh as /init. Idempotent; checks under a shared lock, so a
# warm build does not wait for running guests.
vm_build_boot() {
    local missing pkg deb kver tmp r m f off
    missing=$(vm_missing_tools)
    [ -z "$missing" ] || vm_unavailable "missing on the host: $missing(packages qemu-system-x86 busybox-static cpio xz-utils)"
    mkdir -p "$VM_BOOT" "$VMCACHE/debs" || vm_unavailable "cannot create $VM_BOOT"
    exec 8>"$VM_BOOT/.lock"
    flock -s 8
    pkg=$(vm_kernel_pkg)
    if [ -z "$pkg" ] && [ "${AG_TEST_SYSTEM:-0}" = 1 ]; then
        # (the package lists are the machine's: refreshed only when asked)
        timeout 300 apt-get update -qq >/dev/null 2>&1 || true
        pkg=$(vm_kernel_pkg)
    fi
    if [ -n "$pkg" ] && vm_boot_current "${pkg#linux-image-}"; then
        log "kernel + initramfs up to date (${pkg#linux-image-})"; exec 8>&-; return 0
    fi
    flock -u 8; flock 8
    deb=""
    [ -n "$pkg" ] && deb=$(vm_kernel_deb "$pkg")
    if [ -z "$deb" ]; then
        # offline: fall back to the newest kernel .deb already in the cache
        deb=$(ls -t "$VMCACHE"/debs/linux-image-[0-9]*_*.deb 2>/dev/null | head -n1 || true)
        [ -n "$deb" ] || vm_unavailable "no kernel: cannot resolve or download ${pkg:-$KERNEL_META}"
        pkg=$(basename "$deb"); pkg=${pkg%%_*}
    fi
    kver=${pkg#linux-image-}
    if vm_boot_current "$kver"; then
        log "kernel + initramfs up to date ($kver)"; exec 8>&-; return 0
    fi

    tmp=$(mktemp -d "$VM_IMAGES/build.XXXXXX") || vm_unavailable "cannot create a build directory (no space?)"
    log "extracting the kernel and modules from $(basename "$deb")"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" \
        --wildcards "./boot/vmlinuz-*" "./lib/modules/$kver/kernel/drivers/virtio/*" \
        "./lib/modules/$kver/kernel/net/9p/*" "./lib/modules/$kver/kernel/fs/9p/*" \
        "./lib/modules/$kver/kernel/fs/netfs/*" "./lib/modules/$kver/kernel/fs/fscache/*" \
        "./lib/modules/$kver/kernel/fs/overlayfs/*" || { rm -rf "$tmp"; die "cannot unpack $deb"; }
    r=$tmp/root
    mkdir -p "$r"/{bin,dev,proc,sys,modules}
    cp /bin/busybox "$r/bin/busybox"
    cp "$VMLIB_DIR/guest-init.sh" "$r/init"; chmod 755 "$r/init"
    : > "$r/modules.order"
    for m in $VM_MODULES; do
        f=$(find "$tmp/lib/modules/$kver/kernel" -name "$m.ko" | head -n1)
        [ -n "$f" ] || { rm -rf "$tmp"; die "module $m not found in $deb"; }
        cp "$f" "$r/modules/"; echo "$m" >> "$r/modules.order"
    done
    (cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$tmp/initrd.img"
    cp "$tmp"/boot/vmlinuz-* "$tmp/vmlinuz"
    # Also unpack the ELF vmlinux (Debian kernels are XZ bzImages with
    # CONFIG_PVH=y): qemu boots an ELF vmlinux through the PVH entry point,
    # skipping the XZ decompressor, which is slow under TCG.
    off=$(grep -abo $'\xfd7zXZ\x00' "$tmp/vmlinuz" | head -n1 | cut -d: -f1 || true)
    rm -f "$VM_BOOT/vmlinux"
    if [ -n "$off" ]; then
        tail -c +$((off + 1)) "$tmp/vmlinuz" | xz -dc > "$tmp/vmlinux" 2>/dev/null || true
        if head -c 4 "$tmp/vmlinux" | grep -q ELF; then mv "$tmp/vmlinux" "$VM_BOOT/vmlinux"
        else log "no ELF vmlinux, will boot the bzImage"; fi
    fi
    mv "$tmp/vmlinuz" "$VM_BOOT/vmlinuz"
    mv "$tmp/initrd.img" "$VM_BOOT/initrd.img"
    echo "$kver" > "$VM_BOOT/KVER"
    vm_boot_sum > "$VM_BOOT/INIT_SUM"
    rm -rf "$tmp"
    log "built $VM_BOOT (kernel $kver, initrd $(du -h "$VM_BOOT/initrd.img" | cut -f1))"
    exec 8>&-
}

vm_usage() {
    echo "usage: $0 [-t TIMEOUT_S] [-m MEM_MB] [-c CPUS] [--ro DIR]... [--rw DIR]... [--keep] [--] COMMAND [ARGS...]" >&2
    exit 1
}

# vm_run [OPTIONS] [--] COMMAND [ARGS...]: boot the flavour's guest, run the
# command as root in it (in the same working directory, from the guest's
# PID 1 or its runner) and exit with its status. The serial console goes to
# stdout.
#   -t S (VM_TIMEOUT_DEFAULT)  -m MB (1024)  -c CPUS (2)
#   --rw DIR / --ro DIR   share DIR read-write / read-only at the same path
#   --keep                keep the run directory ($VMCACHE/runs/run.*)
# Exit status: the command's; 124 = timeout, 125 = the guest never reported
# a status (did not boot, or crashed).
# A soft lockup in the guest (a CPU stuck in the kernel for 60 s) panics it,
# and panic=-1 with -no-reboot ends qemu at once (status 125): a hung guest
# ends in a minute rather than at the timeout.
vm_run() {
    local timeout=$VM_TIMEOUT_DEFAULT mem=1024 cpus=2 keep=0 sh=() virtfs=() shares="" i=0
    local s d mode ro accel kernel t0 qrc
    while [ $# -gt 0 ]; do
        case $1 in
            -t) timeout=$2; shift 2;;
            -m) mem=$2; shift 2;;
            -c) cpus=$2; shift 2;;
            --rw) sh+=("$(realpath "$2"):rw"); shift 2;;
            --ro) sh+=("$(realpath "$2"):ro"); shift 2;;
            --keep) keep=1; shift;;
            --) shift; break;;
            -*) log "unknown option $1"; vm_usage;;
            *) break;;
        esac
    done
    [ $# -gt 0 ] || vm_usage
    [ -f "$VM_BOOT/initrd.img" ] && { [ -z "${VM_ROOTFS_STAMP:-}" ] || [ -f "$VM_ROOTFS_STAMP" ]; } \
        || die "no $VM_FLAVOUR guest in $VM_IMAGES: run $(dirname "$0")/vm-build.sh first"

    mkdir -p "$VMCACHE/runs"
    # shared locks: vm-build.sh does not replace the artefacts under a running guest
    exec 8>"$VM_BOOT/.lock"; flock -s 8
    if [ -n "${VM_ROOTFS_LOCK:-}" ]; then exec 9>"$VM_ROOTFS_LOCK"; flock -s 9; fi
    VM_RUN_DIR=$(mktemp -d "$VMCACHE/runs/run.XXXXXX")
    chmod 755 "$VM_RUN_DIR"
    VM_KEEP=$keep
    trap 'if [ "$VM_KEEP" = 1 ]; then log "run dir kept: $VM_RUN_DIR"; else rm -rf "$VM_RUN_DIR"; fi' EXIT

    cp "$VMLIB_DIR/guest-run.sh" "$VM_RUN_DIR/guest-run.sh"
    [ -n "$VM_INIT" ] || cp "$VM_STAGE2" "$VM_RUN_DIR/stage2.sh"
    {
        printf 'cd %q || exit 126\n' "$PWD"
        printf 'exec'; printf ' %q' "$@"; printf '\n'
    } > "$VM_RUN_DIR/cmd.sh"
    # multidevs=remap: the shared trees span several host filesystems.
    virtfs=(-virtfs "local,path=$VM_ROOTFS,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap"
            -virtfs "local,path=$VM_RUN_DIR,mount_tag=vmout,security_model=passthrough,multidevs=remap")
    for s in ${sh[@]+"${sh[@]}"}; do
        d=${s%:*} mode=${s##*:} ro=""
        [ "$mode" = ro ] && ro=",readonly=on"
        virtfs+=(-virtfs "local,path=$d,mount_tag=sh$i,security_model=passthrough,multidevs=remap$ro")
        shares+="sh$i:$d:$mode "; i=$((i+1))
    done
    cat > "$VM_RUN_DIR/vm.conf" <<CONF
VM_OUT=$VM_RUN_DIR
VM_SHARES="$shares"
VM_INIT=$VM_INIT
VM_CWD=$(printf %q "$PWD")
CONF

    accel=$(vm_accel_args)
    kernel=$VM_BOOT/vmlinuz
    [ -f "$VM_BOOT/vmlinux" ] && [ "${VM_BOOT_BZIMAGE:-0}" != 1 ] && kernel=$VM_BOOT/vmlinux
    t0=$(date +%s%N)
    set +e
    # shellcheck disable=SC2086
    timeout --foreground -k 5 "$timeout" nice -n "${VM_NICE:-19}" qemu-system-x86_64 $accel \
        -M pc -m "$mem" -smp "$cpus" -nodefaults -no-user-config -display none \
        -serial stdio -monitor none -no-reboot \
        -kernel "$kernel" -initrd "$VM_BOOT/initrd.img" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 softlockup_panic=1 watchdog_thresh=30 ${VM_KERNEL_ARGS:-}" \
        "${virtfs[@]}" < /dev/null
    qrc=$?
    set -e
    log "qemu exited rc=$qrc after $(( ($(date +%s%N) - t0) / 1000000 )) ms ($accel)"
    [ $qrc = 124 ] && { log "TIMEOUT after ${timeout}s"; exit 124; }
    [ -f "$VM_RUN_DIR/rc" ] || { log "guest did not report an exit status"; exit 125; }
    exit "$(cat "$VM_RUN_DIR/rc")"
}
