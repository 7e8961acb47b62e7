#!/bin/bash
# tools/demo on this host, as an administrator runs it after tools/quickstart:
# the cgroupfs mode on cgroup v1 cpu (or v2 without systemd), the systemd
# mode on a systemd + cgroup v2 host (tests/demo-check.sh). The shares are
# only compared with the baseline of the same run (the machine is shared);
# the guest lanes check B's part against the ideal.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/demo-check.sh"
require_root
[ -x "$abs_top_builddir/tests/host/agdrv" ] || { skip "tests/host/agdrv is not built"; finish; }
mode=cgroupfs
[ -d /run/systemd/system ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null && mode=systemd
AG_DEMO_SECONDS=2 demo_check "$mode" no
finish
