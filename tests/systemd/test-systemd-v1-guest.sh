#!/bin/bash
# make check entry of the systemd guest on cgroup v1: the same Debian 12 guest
# as tests/systemd/test-systemd-guest.sh (systemd 252 as PID 1, logind),
# booted with systemd.unified_cgroup_hierarchy=0, so that the cpu controller
# is a v1 hierarchy and mode=auto picks the cgroupfs mode; runs
# guest-test-v1.sh there: where pam_systemd may sit in such a stack.
#
# Output and exit status: see tests/vmlib/lane.sh.
# env: VMCACHE, AG_VM_TIMEOUT (seconds, default 1800), AG_SKIP_VM=1 (skip),
#      VM_ACCEL, MIRROR (see vm-build.sh and tests/vmlib/common.sh)
set -u
. "$(dirname "$0")/../vmlib/lane.sh"
lane_init "systemd v1 guest lane" "$(cd "$(dirname "$0")" && pwd)"
[ "${AG_SKIP_VM:-0}" = 1 ] && lane_skip "AG_SKIP_VM=1"
[ -f "$build/pam_autogroup/.libs/pam_autogroup.so" ] || lane_fail "the module is not built"
export VM_KERNEL_ARGS="${VM_KERNEL_ARGS:-} systemd.unified_cgroup_hierarchy=0"
lane_start
lane_share "$src" "$build"
lane_run "${AG_VM_TIMEOUT:-1800}" "$src/tests/systemd/guest-test-v1.sh"
lane_report
