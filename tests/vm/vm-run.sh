#!/bin/bash
# Run one command as root inside a throw-away minimal guest and return its
# exit status. The serial console (boot lines and the command's output) goes
# to stdout.
#
# The guest sees the HOST's root filesystem (read-only 9p + tmpfs overlay, so
# its writes are discarded at power-off), with fresh tmpfs /tmp, /var/tmp and
# /run; /sys/fs/cgroup is a pure cgroup2 mount whose root has every
# controller (cpu included) in cgroup.subtree_control; no systemd. The
# command runs as a child of PID 1 in the root cgroup, in the same working
# directory as on the host.
#
# usage: vm-run.sh [-t TIMEOUT_S] [-m MEM_MB] [-c CPUS] [--ro DIR]... [--rw DIR]...
#                  [--keep] [--] COMMAND [ARGS...]
#   -t 300 -m 1024 -c 2 by default
#   --rw DIR   share DIR read-write at the same path (results, logs)
#   --ro DIR   share DIR read-only at the same path (needed for host
#              directories below /tmp or /var/tmp, which the guest
#              otherwise hides under its own tmpfs; /run cannot be shared)
#   --keep     keep the run directory ($VMCACHE/runs/run.*) for inspection
# Exit status: the command's; 124 = timeout, 125 = the guest never reported
# a status (did not boot, or crashed).
# env: see tests/vmlib/common.sh (VM_ACCEL, VMCACHE, VM_KERNEL_ARGS, ...)
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"
vm_run "$@"
