# The systemd guest flavour (tests/systemd), on tests/vmlib/common.sh. Source it.
# What is its own: the guest's root is a debootstrapped Debian 12 (systemd
# 252 as PID 1, dbus, logind, libpam-systemd, sshd) built by vm-build.sh in
# $SD_LANE (default $VMCACHE/vmlib/systemd-<hash of vm-build.sh and guest-runner.sh>), shared read-only under the tmpfs
# overlay (every boot starts pristine); host directories are visible only
# when shared. The command runs from vm-test.service (guest-runner.sh) once
# the system is up.
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/../vmlib/common.sh"

VM_FLAVOUR=systemd
# The root fs is keyed by what builds it (vm-build.sh, guest-runner.sh): trees
# of different versions (other worktrees, other branches on one machine) each
# keep their own instead of rebuilding the one they share in turn.
SD_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SD_SUM=$(cat "$SD_HERE/vm-build.sh" "$SD_HERE/guest-runner.sh" | sha256sum | cut -c1-16)
SD_LANE=${SD_LANE:-$VM_IMAGES/systemd-$SD_SUM}
VM_ROOTFS=$SD_LANE/rootfs
VM_ROOTFS_LOCK=$SD_LANE/.lock
VM_ROOTFS_STAMP=$SD_LANE/rootfs.done
VM_INIT=/sbin/init
VM_TIMEOUT_DEFAULT=600
