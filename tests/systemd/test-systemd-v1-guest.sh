#!/bin/bash
# make check entry of the systemd guest on cgroup v1: the same Debian 12 guest
# as tests/systemd/test-systemd-guest.sh (systemd 252 as PID 1, logind),
# booted twice, so that the cpu controller is a v1 hierarchy and mode=auto
# picks the cgroupfs mode: on the hybrid hierarchy
# (systemd.unified_cgroup_hierarchy=0 alone: systemd tracks its units on a
# cgroup2 mount beside the v1 ones) and on the legacy one (with
# systemd.legacy_systemd_cgroup_controller=1 too: v1 only, as RHEL/Rocky/Alma
# 8 boot); runs guest-test-v1.sh in each: where pam_systemd sits in such a
# stack, the package's profile, real ssh logins, daemon-reload, a CPU
# property set while a user is logged in, README's behaviour table (v1).
#
# Output and exit status: see tests/vmlib/lane.sh.
# env: VMCACHE, AG_VM_TIMEOUT (seconds a boot, default 1800), AG_SKIP_VM=1 (skip),
#      VM_ACCEL, MIRROR (see vm-build.sh and tests/vmlib/common.sh)
set -u
. "$(dirname "$0")/../vmlib/lane.sh"
lane_init "systemd v1 guest lane" "$(cd "$(dirname "$0")" && pwd)"
[ "${AG_SKIP_VM:-0}" = 1 ] && lane_skip "AG_SKIP_VM=1"
[ -f "$build/pam_autogroup/.libs/pam_autogroup.so" ] || lane_fail "the module is not built"
lane_boots "systemd.unified_cgroup_hierarchy=0" \
           "systemd.unified_cgroup_hierarchy=0 systemd.legacy_systemd_cgroup_controller=1"
lane_start
lane_share "$src" "$build"
lane_run "${AG_VM_TIMEOUT:-1800}" "$src/tests/systemd/guest-test-v1.sh" AG_BOOT="$LANE_BOOT"
lane_report
