#!/bin/bash
# Boot the systemd guest (vm-build.sh) once, run one command as root from
# vm-test.service once the system is up, and return its exit status.
# The guest root is the debootstrapped Debian 12 (systemd 252, logind, sshd on
# loopback), pristine at every boot; host directories are visible only when
# shared (--ro/--rw, same path in the guest). The serial console goes to stdout.
#
# usage: vm-run.sh [-t TIMEOUT_S] [-m MEM_MB] [-c CPUS] [--ro DIR]... [--rw DIR]... [--keep]
#                  [--] COMMAND [ARGS...]
#   -t 600 -m 1024 -c 2 by default; --keep keeps the run directory
# Exit status: the command's; 124 = timeout, 125 = the guest never reported a status.
# env: see tests/vmlib/common.sh (VM_ACCEL, VMCACHE, VM_KERNEL_ARGS, ...)
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"
vm_run "$@"
