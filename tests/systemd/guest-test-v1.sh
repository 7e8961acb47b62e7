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
# unit that asks for cpu (CPUWeight= on user.slice). Close logs the moved
# login once per boot. Then the package's own profile (pam-auth-update puts
# the line after pam_systemd) and real ssh logins: the group survives a
# daemon-reload; a CPU property set on the user's slice while the user is
# logged in makes systemd move the login into the slice's own cpu cgroup
# (documented; close logs it), and a login after it keeps its group.
# Booted on the hybrid hierarchy and on the legacy one
# (test-systemd-v1-guest.sh boots twice; AG_BOOT is 1 or 2).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
: "${abs_top_builddir:=$abs_top_srcdir}"
if [ ! -e /etc/vm-out ] || [ "$(cat /proc/1/comm)" != systemd ]; then
        echo "# runs inside the systemd guest only (tests/systemd/test-systemd-v1-guest.sh)"
        echo "0 passed, 0 failed, 1 skipped"; exit 77
fi
echo "# $(systemctl --version | head -n1), kernel $(uname -r), system $(systemctl is-system-running), boot ${AG_BOOT:-?}: $(if [ -d /sys/fs/cgroup/unified ]; then echo hybrid; else echo legacy; fi) hierarchy"
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
systemctl revert user.slice >/dev/null 2>&1
check "close logged the login moved before pam_systemd, with the fix (once per boot)" \
        sh -c "journalctl -b -o cat | grep -q 'was moved out of .*put pam_autogroup after pam_systemd'"
check_eq "  once" 1 "$(journalctl -b -o cat | grep -c 'was moved out of .*logged once per boot')"

echo "# 3. the package's profile (pam-auth-update) and real ssh logins"
SECDIR=/lib/x86_64-linux-gnu/security
[ -d "$SECDIR" ] || SECDIR=/lib/security
install -m 644 "$AG_MODULE" "$SECDIR/pam_autogroup.so"
install -m 644 "$abs_top_srcdir/debian/pam-configs/autogroup" /usr/share/pam-configs/autogroup
printf '%s  weight  300\n' "$UA" >/etc/security/autogroup.conf; chmod 644 /etc/security/autogroup.conf
DEBIAN_FRONTEND=noninteractive pam-auth-update --package --enable autogroup >"$T/pau.out" 2>&1
check "pam-auth-update --package --enable autogroup" test $? = 0
grep -nE 'pam_systemd|pam_autogroup' /etc/pam.d/common-session | sed 's/^/#   common-session:/'
n_sd=$(grep -n pam_systemd /etc/pam.d/common-session | head -n1 | cut -d: -f1)
n_ag=$(grep -n pam_autogroup /etc/pam.d/common-session | head -n1 | cut -d: -f1)
check "common-session: the profile's line comes after pam_systemd's ($n_ag > $n_sd)" test "${n_ag:-0}" -gt "${n_sd:-999999}"
HELPER="$abs_top_builddir/helper/autogroup"
"$HELPER" check >"$T/check.out" 2>&1
check_not "autogroup check: no order warning for the package's stack" grep -q 'comes before pam_systemd' "$T/check.out"
cp /etc/pam.d/common-session "$T/common-session.pkg"
grep -v pam_autogroup "$T/common-session.pkg" | sed 's|^\(session[^#]*pam_systemd.so.*\)$|session optional pam_autogroup.so\n\1|' >/etc/pam.d/common-session
"$HELPER" check >"$T/check.out" 2>&1
sed -n '/pam_systemd/s/^/#   check: /p' "$T/check.out"
check "autogroup check names the line before pam_systemd on this host" \
        grep -qE 'warning: /etc/pam.d/common-session:[0-9]+: comes before pam_systemd.so at /etc/pam.d/common-session:[0-9]+' "$T/check.out"
cp "$T/common-session.pkg" /etc/pam.d/common-session
check "sshd active" sh -c 'for i in $(seq 300); do systemctl is-active -q ssh && exit 0; sleep 0.2; done; exit 1'
install -d -m 700 -o "$UA" -g "$UA" "/home/$UA/.ssh" 2>/dev/null || { mkdir -p "/home/$UA"; chown "$UA" "/home/$UA"; install -d -m 700 -o "$UA" "/home/$UA/.ssh"; }
install -m 600 -o "$UA" /root/.ssh/id_ed25519.pub "/home/$UA/.ssh/authorized_keys"
chown "$UA" "/home/$UA"
TT=$(mktemp -d /tmp/agtt.XXXXXX); chmod 1777 "$TT"
SSH=(timeout 900 ssh -o BatchMode=yes -o ConnectTimeout=60)
# hold NAME: an ssh login of UA, kept until $TT/NAME.stop; its shell's pid in $TT/NAME.pid
hold() {
        rm -f "$TT/$1.stop"
        "${SSH[@]}" "$UA@127.0.0.1" "echo \$\$ >$TT/$1.pid; echo in; while [ ! -e $TT/$1.stop ]; do sleep 0.5; done; echo out" \
                >"$T/$1.out" 2>&1 &
        track_pid $!; eval "P_$1=$!"
        for i in $(seq 600); do grep -q '^in' "$T/$1.out" 2>/dev/null && return 0; sleep 0.5; done
        return 1
}
release() { touch "$TT/$1.stop"; eval "wait \$P_$1"; }
cpu_pid() { sed -n 's/^[0-9]*:[a-z,]*\bcpu\b[a-z,]*://p' "/proc/$1/cgroup"; }
sd_pid() { sed -n 's/^[0-9]*:name=systemd://p' "/proc/$1/cgroup"; }
D_RE="^/autogroup/user-$IA/[^/]*/login$"
check "ssh login s1" hold s1
P1=$(cat "$TT/s1.pid")
check "s1: its shell is in its group ($(cpu_pid "$P1"))" grep -qE "$D_RE" <(cpu_pid "$P1")
check "s1: and in its logind session scope ($(sd_pid "$P1"))" grep -qE "$S_RE" <(sd_pid "$P1")
check "s1: user-$IA has weight 300 (cpu.shares 3072)" test "$(cat "$CPU"/autogroup/user-"$IA"/cpu.shares)" = 3072

echo "# 4. systemctl daemon-reload while the user is logged in"
systemctl daemon-reload
sleep 2
check "s1 stays in its group after daemon-reload ($(cpu_pid "$P1"))" grep -qE "$D_RE" <(cpu_pid "$P1")

echo "# 5. a CPU property set on the user's slice while the user is logged in"
rm -f /run/autogroup/moved-logged
systemctl set-property --runtime "user-$IA.slice" CPUQuota=50%
sleep 2
W1=$(cpu_pid "$P1")
echo "#   s1 after set-property user-$IA.slice CPUQuota=50%: cpu $W1"
check "systemd moved s1 into its own cpu cgroup of the user's slice (what the documents say)" \
        grep -qE "^/user.slice/user-$IA.slice(/|$)" <(echo "$W1")
check "s2, a login after the property: ssh" hold s2
P2=$(cat "$TT/s2.pid")
check "s2: its shell is in its group ($(cpu_pid "$P2"))" grep -qE "$D_RE" <(cpu_pid "$P2")
systemctl daemon-reload
sleep 2
check "s2 stays in its group after another daemon-reload ($(cpu_pid "$P2"))" grep -qE "$D_RE" <(cpu_pid "$P2")
release s1
release s2
check "close of s1 logged that it was moved, with the fix" \
        sh -c "for i in \$(seq 120); do journalctl -b -o cat | grep -q 'was moved out of [^ ]*/autogroup/user-$IA/.*set on a unit above the logins' && exit 0; sleep 0.5; done; exit 1"
journalctl -b -o cat | grep 'was moved out of' | tail -n1 | sed 's/^/#   journal: /'
systemctl revert "user-$IA.slice" >/dev/null 2>&1
check "nothing of UA's left under $CPU/autogroup" \
        sh -c "for i in \$(seq 120); do ! ls -d $CPU/autogroup/user-$IA/*/ >/dev/null 2>&1 && exit 0; sleep 0.5; done; exit 1"

echo "# 6. README's behaviour table, column v1: the package's line (after pam_systemd), no rule"
: >/etc/security/autogroup.conf
COLUMN=v1 BEHAVIOUR_ROOT=autogroup
. "$abs_top_srcdir/tests/systemd/guest-behaviour.sh"
bg_all
finish
