#!/bin/busybox sh
# shellcheck shell=dash
# Stage 1 init of both guests (/init of the initramfs vm_build_boot builds):
# - loads the virtio/9p/overlay modules
# - mounts the flavour's root (9p tag "hostroot", read-only: the host's own
#   root for tests/vm, the debootstrapped Debian for tests/systemd) as the
#   lower layer of an overlay with a tmpfs upper layer, so the guest sees a
#   writable copy and every write (useradd, /etc/pam.d, ...) vanishes at
#   power-off; the host's root gets a copy of /etc taken at boot (the host's
#   own changes while the guest runs do not reach it)
# - mounts fresh tmpfs /tmp and /var/tmp, the run directory (9p tag "vmout",
#   read-write) at the same path as on the host, and the shares listed in
#   vm.conf; writes the run directory's path to /etc/vm-out
# - switch_root's into $VM_INIT (systemd), or without one into the host's
#   bash running the run directory's stage2.sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do
    insmod "/modules/$m.ko" || echo "stage1: insmod $m failed"
done

fail() { echo "stage1: FATAL: $*"; echo o > /proc/sysrq-trigger; sleep 5; }

mkdir -p /vmout /lower /ovl /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vmout /vmout || fail "mount vmout"
[ -f /vmout/vm.conf ] || fail "no vm.conf"
. /vmout/vm.conf     # VM_OUT, VM_SHARES ("tag:path:ro|rw ..."), VM_INIT

mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose hostroot /lower \
    || fail "mount hostroot"
mount -t tmpfs -o mode=0755,size=${VM_OVL_SIZE:-50%} tmpfs /ovl
mkdir -p /ovl/upper /ovl/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/ovl/upper,workdir=/ovl/work /newroot \
    || fail "mount overlay"

# The host's root (the minimal flavour) changes while the guest runs (host
# tests add and remove users in /etc), and an overlay's lower layer must not
# change under it (the guest's useradd then fails on /etc/group.lock): the
# guest gets a copy of /etc of its own, taken at boot.
if [ -z "${VM_INIT:-}" ]; then
    mkdir -p /ovl/etc
    cp -a /newroot/etc/. /ovl/etc/ || fail "copy /etc"
    mount --bind /ovl/etc /newroot/etc || fail "bind /etc"
fi

# fresh /tmp and /var/tmp before the shares, so shares below them stay visible
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
mount -t tmpfs -o mode=1777 tmpfs /newroot/var/tmp
mkdir -p "/newroot$VM_OUT"
mount --move /vmout "/newroot$VM_OUT"
for s in $VM_SHARES; do
    tag=${s%%:*}; mode=${s##*:}; path=${s#*:}; path=${path%:*}
    mkdir -p "/newroot$path"
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,$mode "$tag" "/newroot$path" \
        || echo "stage1: mount $tag at $path failed"
done
echo "$VM_OUT" > /newroot/etc/vm-out
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
if [ -n "${VM_INIT:-}" ]; then
    exec switch_root /newroot $VM_INIT
fi
exec switch_root /newroot /bin/bash "$VM_OUT/stage2.sh"
