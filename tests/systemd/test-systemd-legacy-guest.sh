#!/bin/bash
# make check entry of the systemd guest on the legacy cgroup hierarchy: the
# same guest and payload as tests/systemd/test-systemd-v1-guest.sh (hybrid:
# systemd.unified_cgroup_hierarchy=0 alone keeps a cgroup2 mount for
# systemd's own tracking), booted with systemd.legacy_systemd_cgroup_controller=1
# too, so that systemd tracks its units in the v1 name=systemd hierarchy
# only (RHEL/Rocky/Alma 8 and their kin boot like this).
#
# Output and exit status: see tests/vmlib/lane.sh.
# env: VMCACHE, AG_VM_TIMEOUT (seconds, default 900), AG_SKIP_VM=1 (skip),
#      VM_ACCEL, MIRROR (see vm-build.sh and tests/vmlib/common.sh)
set -u
. "$(dirname "$0")/../vmlib/lane.sh"
lane_init "systemd legacy guest lane" "$(cd "$(dirname "$0")" && pwd)"
[ "${AG_SKIP_VM:-0}" = 1 ] && lane_skip "AG_SKIP_VM=1"
[ -f "$build/pam_autogroup/.libs/pam_autogroup.so" ] || lane_fail "the module is not built"
export VM_KERNEL_ARGS="${VM_KERNEL_ARGS:-} systemd.unified_cgroup_hierarchy=0 systemd.legacy_systemd_cgroup_controller=1"
lane_start
lane_share "$src" "$build"
lane_run "${AG_VM_TIMEOUT:-900}" "$src/tests/systemd/guest-test-v1.sh"
lane_report
