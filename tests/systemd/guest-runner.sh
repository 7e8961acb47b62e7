#!/bin/bash
# Installed in the systemd guest's rootfs as /usr/local/sbin/vm-test-runner and
# run by vm-test.service once the system is up: runs the command vm-run.sh
# wrote (vm_guest_run, from the run directory's copy of
# tests/vmlib/guest-run.sh), then powers the guest off.
. "$(cat /etc/vm-out)/guest-run.sh"
vm_guest_run "system=$(systemctl is-system-running) cgroup=$(cat /proc/self/cgroup)"
systemctl --no-block poweroff
