# The minimal guest flavour (tests/vm), on tests/vmlib/common.sh. Source it.
# What is its own: the guest's root is the HOST's root file system (read-only
# 9p + tmpfs overlay), so everything built here runs unchanged; no systemd:
# PID 1 is guest-stage2.sh (pure cgroup2 with every controller enabled at the
# root), which runs the command in the root cgroup.
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/../vmlib/common.sh"

VM_FLAVOUR=minimal
VM_ROOTFS=/
VM_INIT=
VM_STAGE2=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/guest-stage2.sh
VM_TIMEOUT_DEFAULT=300
