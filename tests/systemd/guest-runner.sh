#!/bin/bash
# Installed in the systemd guest's rootfs as /usr/local/sbin/vm-test-runner and
# run by vm-test.service once the system is up: runs the command written by
# vm-run.sh, saves its exit status, powers the guest off. (From the QEMU recipe.)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
VM_OUT=$(cat /etc/vm-out)
. "$VM_OUT/vm.conf"
echo "=== VM-READY uptime=$(cut -d' ' -f1 /proc/uptime)s kernel=$(uname -r)" \
     "system=$(systemctl is-system-running) cgroup=$(cat /proc/self/cgroup)"
cd "${VM_CWD:-/}" 2>/dev/null || cd /
bash "$VM_OUT/cmd.sh" < /dev/null 2>&1 | tee "$VM_OUT/output.log"
rc=${PIPESTATUS[0]}
echo "$rc" > "$VM_OUT/rc"
echo "=== VM-DONE rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)s"
sync
systemctl --no-block poweroff
