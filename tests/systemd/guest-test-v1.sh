#!/bin/bash
# Runs INSIDE the systemd guest booted on cgroup v1
# (tests/systemd/test-systemd-v1-guest.sh): systemd 252 as PID 1 and logind
# with the legacy hierarchy, so the module's mode=auto is the cgroupfs mode.
# Where pam_systemd must sit in such a stack, through real libpam, pam_systemd
# and logind (agdrv with a service directory of its own): when logind starts
# the session scope, systemd moves the login in every v1 hierarchy it manages,
# the cpu one included (to its root when no unit uses cpu, else to the
# closest cgroup systemd made for cpu). So pam_autogroup before pam_systemd
# (the order the systemd mode needs on cgroup v2) loses its group, and after
# it the login keeps both its logind scope and its group; with and without a
# unit that asks for cpu (CPUWeight= on user.slice).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
: "${abs_top_builddir:=$abs_top_srcdir}"
if [ ! -e /etc/vm-out ] || [ "$(cat /proc/1/comm)" != systemd ]; then
        echo "# runs inside the systemd guest only (tests/systemd/test-systemd-v1-guest.sh)"
        echo "0 passed, 0 failed, 1 skipped"; exit 77
fi
echo "# $(systemctl --version | head -n1), kernel $(uname -r), system $(systemctl is-system-running)"
if [ ! -f "$CPU/cpu.shares" ]; then
        echo "# no cgroup v1 cpu hierarchy at $CPU (was systemd.unified_cgroup_hierarchy=0 honoured?)"
        echo "0 passed, 0 failed, 1 skipped"; exit 77
fi
ok "systemd on cgroup v1: cpu hierarchy at $CPU"
for i in $(seq 300); do systemctl is-active -q systemd-logind && break; sleep 0.2; done
check "logind active" systemctl is-active -q systemd-logind

ROOT="agtest-$$"
CG="$CPU/$ROOT"
AG_CGROOTS="$CG"
add_user "${TAG}a"
UA="${TAG}a"; IA=$(id -u "$UA")
CONF="$T/autogroup.conf"
printf '%s  weight  300\n' "$UA" >"$CONF"; chmod 644 "$CONF"
printf '%s required pam_deny.so\n' auth account password session >"$T/other"
printf 'session optional %s root=%s conf=%s\nsession optional pam_systemd.so\n' "$AG_MODULE" "$ROOT" "$CONF" >"$T/agbefore"
printf 'session optional pam_systemd.so\nsession optional %s root=%s conf=%s\n' "$AG_MODULE" "$ROOT" "$CONF" >"$T/agafter"
# login NAME SERVICE: a login of UA through SERVICE; its child's /proc/self/cgroup in $U/NAME.cg
login() {
        "$AGDRV" --pam "$T" "$2" "$UA" open env run-user "cat /proc/self/cgroup >$U/$1.cg" close >"$T/$1.out" 2>&1
}
cpu_of() { sed -n 's/^[0-9]*:[a-z,]*\bcpu\b[a-z,]*://p' "$U/$1.cg"; }
sd_of() { sed -n 's/^[0-9]*:name=systemd://p' "$U/$1.cg"; }
S_RE="^/user.slice/user-$IA.slice/session-[^/]*.scope$"
G_RE="^/$ROOT/user-$IA/[^/]*/login$"

echo "# 1. no unit uses the cpu controller (the default)"
for o in before after; do
        login "$o" "ag$o"
        check "$o: the login opened and closed" grep -q '^close=PAM_SUCCESS' "$T/$o.out"
        check "$o: logind made a session scope (name=systemd: $(sd_of "$o"))" grep -qE "$S_RE" <(sd_of "$o")
done
check_not "before pam_systemd: the scope's start moved the login out of its group ($(cpu_of before))" \
        grep -qE "$G_RE" <(cpu_of before)
check "after pam_systemd: the login keeps its group ($(cpu_of after))" grep -qE "$G_RE" <(cpu_of after)

echo "# 2. a unit asks for cpu: the same"
systemctl set-property --runtime user.slice CPUWeight=100
check "user.slice has CPUWeight=100" test "$(systemctl show user.slice -p CPUWeight --value)" = 100
login before2 agbefore
check_not "before pam_systemd: the scope's start moved the login out of its group ($(cpu_of before2))" \
        grep -qE "$G_RE" <(cpu_of before2)
login after2 agafter
check "after pam_systemd: the login keeps its group ($(cpu_of after2))" grep -qE "$G_RE" <(cpu_of after2)
check "  and its logind session scope" grep -qE "$S_RE" <(sd_of after2)
finish
