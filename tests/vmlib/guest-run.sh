# shellcheck shell=bash
# Guest side of both lanes, copied into the run directory by vm_run and
# sourced, once the guest is up, by the flavour's PID 1 (tests/vm/guest-stage2.sh)
# or runner (tests/systemd/guest-runner.sh), which then power the guest off.

# vm_guest_run DETAILS...: run the command vm_run wrote ($VM_OUT/cmd.sh) with
# its output on the console and in $VM_OUT/output.log and its exit status in
# $VM_OUT/rc, between the "=== VM-READY ... DETAILS" and "=== VM-DONE rc=N"
# lines the lanes look for.
vm_guest_run() {
    local rc
    export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    VM_OUT=$(cat /etc/vm-out)
    . "$VM_OUT/vm.conf"
    # the console shows warnings too from now on (boot stays quiet): a soft
    # lockup's backtrace reaches console.log
    echo 5 > /proc/sys/kernel/printk 2>/dev/null
    echo "=== VM-READY uptime=$(cut -d' ' -f1 /proc/uptime)s kernel=$(uname -r) $*"
    cd "${VM_CWD:-/}" 2>/dev/null || cd /
    bash "$VM_OUT/cmd.sh" < /dev/null 2>&1 | tee "$VM_OUT/output.log"
    rc=${PIPESTATUS[0]}
    echo "$rc" > "$VM_OUT/rc"
    echo "=== VM-DONE rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)s"
    sync
}
