#!/bin/bash
# The platforms guest lane (an automake test, run as root by make check): the
# same minimal pure-cgroup2 guest as tests/vm/test-guest.sh, booted once more
# for tests/guest/test-platforms.sh, which changes the guest's cgroup setup
# (a container's cgroup namespace, then cpu moved from cgroup v2 to a v1
# cpu,cpuacct hierarchy) and so needs a boot of its own. Output and exit
# status as tests/vm/test-guest.sh.
AG_GUEST_TEST=tests/guest/test-platforms.sh exec bash "$(dirname "$0")/test-guest.sh" "$@"
