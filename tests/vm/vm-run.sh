#!/bin/bash
# Run one command as root inside a throw-away guest and return its exit
# status. The serial console (boot lines and the command's output) goes to
# stdout.
#
# The guest sees the HOST's root filesystem (read-only 9p + tmpfs overlay, so
# its writes are discarded at power-off), with fresh tmpfs /tmp, /var/tmp and
# /run; /sys/fs/cgroup is a pure cgroup2 mount whose root has every
# controller (cpu included) in cgroup.subtree_control; no systemd. The
# command runs as a child of PID 1 in the root cgroup, in the same working
# directory as on the host.
#
# usage: vm-run.sh [-t TIMEOUT_S] [-m MEM_MB] [-c CPUS] [--ro DIR]... [--rw DIR]...
#                  [--keep] [--] COMMAND [ARGS...]
#   --rw DIR   share DIR read-write at the same path (results, logs)
#   --ro DIR   share DIR read-only at the same path (needed for host
#              directories below /tmp, /var/tmp or /run, which the guest
#              otherwise hides under its own tmpfs)
#   --keep     keep the run directory ($VMCACHE/runs/run.*) for inspection
# Exit status: the command's; 124 = timeout, 125 = the guest never reported
# a status (did not boot, or crashed).
# env: VM_ACCEL=auto|kvm|tcg, VMCACHE, VM_KERNEL_ARGS (extra kernel command
#      line), VM_BOOT_BZIMAGE=1 (boot vmlinuz instead of the PVH vmlinux)
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"

TIMEOUT=300 MEM=1024 CPUS=2 KEEP=0 SH=()
while [ $# -gt 0 ]; do
    case $1 in
        -t) TIMEOUT=$2; shift 2;;
        -m) MEM=$2; shift 2;;
        -c) CPUS=$2; shift 2;;
        --rw) SH+=("$(realpath "$2"):rw"); shift 2;;
        --ro) SH+=("$(realpath "$2"):ro"); shift 2;;
        --keep) KEEP=1; shift;;
        --) shift; break;;
        -*) die "unknown option $1";;
        *) break;;
    esac
done
[ $# -gt 0 ] || die "usage: $0 [-t S] [-m MB] [-c N] [--ro DIR]... [--rw DIR]... -- COMMAND [ARGS...]"
[ -f "$VM_LANE/initrd.img" ] || die "no guest in $VM_LANE: run vm-build.sh first"

mkdir -p "$VMCACHE/runs"
# a shared lock: vm-build.sh does not replace the kernel under a running guest
exec 9>"$VMCACHE/.lane.lock"
flock -s 9
RUN=$(mktemp -d "$VMCACHE/runs/run.XXXXXX")
chmod 755 "$RUN"
cleanup() { if [ "$KEEP" = 1 ]; then log "run dir kept: $RUN"; else rm -rf "$RUN"; fi; }
trap cleanup EXIT

cp "$VM_TOOLS_DIR/guest-stage2.sh" "$RUN/stage2.sh"
{
    printf 'cd %q || exit 126\n' "$PWD"
    printf 'exec'; printf ' %q' "$@"; printf '\n'
} > "$RUN/cmd.sh"
# multidevs=remap: the shared trees span several host filesystems.
VIRTFS=(-virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap"
        -virtfs "local,path=$RUN,mount_tag=vmout,security_model=passthrough,multidevs=remap")
SHARES="" i=0
for s in ${SH[@]+"${SH[@]}"}; do
    d=${s%:*} mode=${s##*:} ro=""
    [ "$mode" = ro ] && ro=",readonly=on"
    VIRTFS+=(-virtfs "local,path=$d,mount_tag=sh$i,security_model=passthrough,multidevs=remap$ro")
    SHARES+="sh$i:$d:$mode "; i=$((i+1))
done
cat > "$RUN/vm.conf" <<CONF
VM_OUT=$RUN
VM_SHARES="$SHARES"
VM_CWD=$(printf %q "$PWD")
CONF

ACCEL=$(vm_accel_args)
KERNEL=$VM_LANE/vmlinuz
[ -f "$VM_LANE/vmlinux" ] && [ "${VM_BOOT_BZIMAGE:-0}" != 1 ] && KERNEL=$VM_LANE/vmlinux
T0=$(date +%s%N)
set +e
# shellcheck disable=SC2086
timeout --foreground -k 5 "$TIMEOUT" qemu-system-x86_64 $ACCEL \
    -M pc -m "$MEM" -smp "$CPUS" -nodefaults -no-user-config -display none \
    -serial stdio -monitor none -no-reboot \
    -kernel "$KERNEL" -initrd "$VM_LANE/initrd.img" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 ${VM_KERNEL_ARGS:-}" \
    "${VIRTFS[@]}" < /dev/null
QRC=$?
set -e
T1=$(date +%s%N)
log "qemu exited rc=$QRC after $(( (T1 - T0) / 1000000 )) ms ($ACCEL)"
[ $QRC = 124 ] && { log "TIMEOUT after ${TIMEOUT}s"; exit 124; }
[ -f "$RUN/rc" ] || { log "guest did not report an exit status"; exit 125; }
exit "$(cat "$RUN/rc")"
