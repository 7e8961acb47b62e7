#!/bin/bash
# Runs INSIDE the v2 guest (tests/vm/test-guest.sh): tools/demo on pure
# cgroup v2 without systemd, the cgroupfs mode, B's part of A+B within 5
# points of 50% and nothing left behind (tests/demo-check.sh).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/demo-check.sh"
require_root
require_guest_v2
demo_check cgroupfs yes
finish
