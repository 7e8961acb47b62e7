#!/bin/bash
# Stage 2 init of the minimal guest: PID 1 inside the overlay of the host root
# (the host's bash). Mounts a pure cgroup v2 hierarchy at /sys/fs/cgroup with
# every available controller (cpu included) enabled for the children of the
# root, runs the command in the root cgroup (vm_guest_run, tests/vmlib/guest-run.sh)
# and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. "$(dirname "$0")/guest-run.sh"

mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts 2>/dev/null \
    || { mkdir -p /dev/pts && mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts; }
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/lock /run/user && chmod 1777 /run/lock
ln -sf /proc/self/fd /dev/fd 2>/dev/null
ln -sf /proc/self/fd/0 /dev/stdin; ln -sf /proc/self/fd/1 /dev/stdout; ln -sf /proc/self/fd/2 /dev/stderr

# cgroup v2 with systemd's mount options; every controller enabled for the
# root's children
mount -t cgroup2 -o rw,nosuid,nodev,noexec,nsdelegate cgroup2 /sys/fs/cgroup
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
    echo "+$c" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null \
        || echo "stage2: could not enable +$c"
done
hostname vmguest
ip link set lo up 2>/dev/null

vm_guest_run "nproc=$(nproc) cgroup2=[$(cat /sys/fs/cgroup/cgroup.subtree_control)]"
/bin/busybox poweroff -f 2>/dev/null
echo o > /proc/sysrq-trigger
sleep 10
