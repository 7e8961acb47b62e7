#!/bin/bash
# Boot the systemd guest (vm-build.sh) once, run one command as root from
# vm-test.service once the system is up, and return its exit status.
# The guest root is the debootstrapped Debian 12 (systemd 252, logind, sshd on
# loopback), pristine at every boot; host directories are visible only when
# shared (--ro/--rw, same path in the guest). The serial console goes to stdout.
#
# usage: vm-run.sh [-t TIMEOUT_S] [-m MEM_MB] [-c CPUS] [--ro DIR]... [--rw DIR]... [--keep]
#                  [--] COMMAND [ARGS...]
# Exit status: the command's; 124 = timeout, 125 = the guest never reported a status.
# (Adapted from the project's QEMU recipe, full flavour, cgroup v2 only.)
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"

TIMEOUT=600 MEM=1024 CPUS=2 KEEP=0 SH=()
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
[ -f "$SD_LANE/initrd.img" ] && [ -f "$SD_LANE/rootfs.done" ] || die "no guest in $SD_LANE: run vm-build.sh first"

mkdir -p "$VMCACHE/runs"
exec 9>"$SD_LANE/.lock"
flock -s 9                      # vm-build.sh does not rebuild under a running guest
RUN=$(mktemp -d "$VMCACHE/runs/sd.XXXXXX")
chmod 755 "$RUN"
cleanup() { if [ "$KEEP" = 1 ]; then log "run dir kept: $RUN"; else rm -rf "$RUN"; fi; }
trap cleanup EXIT

{
    printf 'cd %q || exit 126\n' "$PWD"
    printf 'exec'; printf ' %q' "$@"; printf '\n'
} > "$RUN/cmd.sh"
VIRTFS=(-virtfs "local,path=$SD_LANE/rootfs,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap"
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
VM_INIT=/sbin/init
VM_CWD=$(printf %q "$PWD")
CONF

ACCEL=$(vm_accel_args)
KERNEL=$SD_LANE/vmlinuz
[ -f "$SD_LANE/vmlinux" ] && KERNEL=$SD_LANE/vmlinux
T0=$(date +%s%N)
set +e
# shellcheck disable=SC2086
timeout --foreground -k 5 "$TIMEOUT" nice -n 19 qemu-system-x86_64 $ACCEL \
    -M pc -m "$MEM" -smp "$CPUS" -nodefaults -no-user-config -display none \
    -serial stdio -monitor none -no-reboot \
    -kernel "$KERNEL" -initrd "$SD_LANE/initrd.img" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 ${VM_KERNEL_ARGS:-}" \
    "${VIRTFS[@]}" < /dev/null
QRC=$?
set -e
log "qemu exited rc=$QRC after $(( ($(date +%s%N) - T0) / 1000000 )) ms ($ACCEL)"
[ $QRC = 124 ] && { log "TIMEOUT after ${TIMEOUT}s"; exit 124; }
[ -f "$RUN/rc" ] || { log "guest did not report an exit status"; exit 125; }
exit "$(cat "$RUN/rc")"
