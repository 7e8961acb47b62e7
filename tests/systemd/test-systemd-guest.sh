#!/bin/bash
# make check entry of the systemd guest lane: builds (or reuses) the Debian 12
# systemd guest (vm-build.sh: ~3 min cold with debootstrap, ~1 s warm), boots
# it once under QEMU (TCG) and runs guest-test.sh there with the source and
# build trees shared read-only.
#
# Output and exit status: see tests/vmlib/lane.sh (the guest test's lines and
# its "N passed, N failed, N skipped" line; 77 with the reason when qemu,
# debootstrap or the mirror cannot be had, the guest does not boot, or the
# module was built --without-systemd).
# env: VMCACHE, AG_VM_TIMEOUT (seconds, default 3600: a hang is caught sooner by the
#      lane's no-output stall check; a loaded 2-core host needs more than 900 s), AG_SKIP_VM=1 (skip),
#      VM_ACCEL, MIRROR (see vm-build.sh and tests/vmlib/common.sh)
set -u
. "$(dirname "$0")/../vmlib/lane.sh"
lane_init "systemd guest lane" "$(cd "$(dirname "$0")" && pwd)"
[ "${AG_SKIP_VM:-0}" = 1 ] && lane_skip "AG_SKIP_VM=1"
grep -q '^#define HAVE_SYSTEMD 1' "$build/config.h" 2>/dev/null \
        || lane_skip "built without the systemd mode (configure --without-systemd)"
[ -f "$build/pam_autogroup/.libs/pam_autogroup.so" ] || lane_fail "the module is not built"
lane_start
lane_share "$src" "$build"
lane_run "${AG_VM_TIMEOUT:-3600}" "$src/tests/systemd/guest-test.sh"
lane_report
