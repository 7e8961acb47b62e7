#!/bin/bash
# Runs INSIDE the guest lane (tests/vm/test-guest.sh): cgroup v2 with cpu.
#
# README's behaviour table, column v2 (cgroupfs mode on cgroup v2): the host
# lane tests/host/test-behaviour.sh with BEHAVIOUR_COLUMN=v2. The guest's
# root is the host's own, so it has the same sshd, tmux and cron; that script
# skips (77) with the reason when one is missing or /sys/fs/cgroup is not
# cgroup2 with cpu.
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ ! -e /etc/vm-out ] && [ "${AG_IN_GUEST:-0}" != 1 ]; then
        echo "# runs inside the guest lane only (tests/vm/test-guest.sh); AG_IN_GUEST=1 overrides"
        echo "0 passed, 0 failed, 1 skipped"; exit 77
fi
BEHAVIOUR_COLUMN=v2 exec bash "$src/tests/host/test-behaviour.sh" "$@"
