#!/bin/bash
# Runs INSIDE the guest lane (tests/vm/test-guest.sh): cgroup v2 with cpu.
#
# README's behaviour table, column v2 (cgroupfs mode on cgroup v2): the host
# lane tests/host/test-behaviour.sh with BEHAVIOUR_COLUMN=v2. The guest's
# root is the host's own, so it has the same sshd, tmux and cron; that script
# skips (77) with the reason when one is missing or /sys/fs/cgroup is not
# cgroup2 with cpu.
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
AG_LIB_FUNCS_ONLY=1 . "$src/tests/lib.sh"
require_guest
BEHAVIOUR_COLUMN=v2 exec bash "$src/tests/host/test-behaviour.sh" "$@"
