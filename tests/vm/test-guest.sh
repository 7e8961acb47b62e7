#!/bin/bash
# The guest lane (an automake test, run as root by make check): builds or
# reuses the small QEMU guest (vm-build.sh: a Debian kernel from the archive
# and a busybox initramfs, cached in $VMCACHE, default /var/tmp/autogroup-vm),
# boots it under TCG with a pure cgroup2 hierarchy with the cpu controller
# enabled at the root and the host root shared read-only (so the module,
# agdrv and tests/lib.sh built here run unchanged), and runs the guest test
# scripts of GUEST_TESTS inside as root, one after another in the same boot
# (tests/guest/run-all.sh adds up their counts). AG_GUEST_TEST (a path
# relative to the source tree) runs that one script instead: the runners of
# guest tests that need a boot of their own set it (tests/vm/test-guest-platforms.sh).
#
# Output and exit status: see tests/vmlib/lane.sh (the guest tests' lines and
# one "N passed, N failed, N skipped" line; 77 with the reason when the guest
# cannot be had). Missing build products are a failure.
# env: VMCACHE, AG_VM_TIMEOUT (seconds, default 1800; VM_TIMEOUT also), VM_ACCEL (see tests/vmlib/common.sh)
set -u
. "$(dirname "$0")/../vmlib/lane.sh"
lane_init "guest lane" "$(cd "$(dirname "$0")" && pwd)"
module=${AG_MODULE:-$build/pam_autogroup/.libs/pam_autogroup.so}

# The guest tests, one line each.
GUEST_TESTS=("$src/tests/guest/test-v2.sh")
GUEST_TESTS+=("$src/tests/guest/test-latency.sh")      # latency classes
GUEST_TESTS+=("$src/tests/guest/test-pools.sh")        # pools
GUEST_TESTS+=("$src/tests/guest/test-acct.sh")         # CPU accounting
GUEST_TESTS+=("$src/tests/guest/test-delegate.sh")     # who owns a session: delegate=yes|no
GUEST_TESTS+=("$src/tests/guest/test-leaves.sh")       # root's leaves with the default line
GUEST_TESTS+=("$src/tests/guest/test-demo.sh")         # tools/demo, the cgroupfs mode on v2
GUEST_TESTS+=("$src/tests/guest/test-behaviour.sh")    # README's behaviour table, column v2
[ -z "${AG_GUEST_TEST:-}" ] || GUEST_TESTS=("$src/$AG_GUEST_TEST")

# The products of the build are not optional: their absence is a failure.
for f in "$module" "$build/tests/host/agdrv" "$build/tests/host/logcap" "$build/tests/host/schedattr" \
        "$src/tests/lib.sh" "$src/tests/guest/run-all.sh" "${GUEST_TESTS[@]}"; do
        [ -e "$f" ] || lane_fail "missing $f"
done
# The guest's root is this machine's, live: tests/host/test-package.sh (which
# installs the package into it) waits while this guest runs.
exec {system_lock}>/run/lock/pam-autogroup-test-system.lock
flock -s -w 3600 "$system_lock" || lane_skip "tests/host/test-package.sh held /run/lock/pam-autogroup-test-system.lock for an hour"
lane_start
# The guest hides the host's /tmp and /var/tmp under its own tmpfs: trees from
# there are shared explicitly (distcheck builds below /tmp).
lane_share "$src" "$build" "$(dirname "$module")"
lane_run "${AG_VM_TIMEOUT:-${VM_TIMEOUT:-1800}}" "$src/tests/guest/run-all.sh" AG_MODULE="$module" -- "${GUEST_TESTS[@]}"
lane_report
