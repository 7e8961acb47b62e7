#!/bin/bash
# Runs INSIDE the systemd guest (tests/systemd/test-systemd-guest.sh boots it):
# Debian 12, systemd 252 as PID 1, logind, sshd on loopback, pure cgroup v2.
# The project tree is shared read-only at its host path; everything this
# script changes (/etc/pam.d/sshd, the module in /lib/.../security, users)
# lives in the guest's tmpfs overlay and vanishes at power-off.
#
# Real ssh logins of throw-away users with pam_autogroup (mode=auto) placed
# before pam_systemd in sshd's stack:
#   - mode=auto picks the systemd mode: nothing under /sys/fs/cgroup/<root>
#   - loginctl lists both sessions, their processes sit in session-N.scope
#   - user-UID.slice carries the policy (CPUWeight, CPUQuotaPerSecUSec, idle)
#     and the session scope CPUWeight=100 handed over to pam_systemd
#   - "autogroup enter" does nothing, silently, exit 0
#   - 8 spinners (user A, weight 200) against 1 (user B, weight 100): B gets
#     about a third of the CPU the two use (no grouping: 1/9)
#   - logout leaves no session, process, slice or autogroup cgroup behind
#   - a stack with pam_autogroup after pam_systemd gets the notice
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
: "${abs_top_builddir:=$abs_top_srcdir}"
HELPER="$abs_top_builddir/helper/autogroup"
MODULE="$abs_top_builddir/pam_autogroup/.libs/pam_autogroup.so"
CG2=/sys/fs/cgroup
if [ ! -e /etc/vm-out ] || [ "$(cat /proc/1/comm)" != systemd ]; then
        echo "# runs inside the systemd guest only (tests/systemd/test-systemd-guest.sh)"
        echo "0 passed, 0 failed, 1 skipped"; exit 77
fi
SECDIR=/lib/x86_64-linux-gnu/security
[ -d "$SECDIR" ] || SECDIR=/lib/security

jlog() { journalctl -b -o cat --no-pager 2>/dev/null | grep -F 'pam_autogroup('; }
waitfor() { # waitfor SECONDS COMMAND...: poll until the command succeeds
        local n=$(( $1 * 5 )); shift
        while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; n=$((n - 1)); done
        return 1
}
slice_prop() { systemctl show "user-$1.slice" -p "$2" --value; }
usage() { sed -n 's/^usage_usec //p' "$CG2/user.slice/user-$1.slice/cpu.stat" 2>/dev/null || echo 0; }
sessions_of() { loginctl list-sessions --no-legend 2>/dev/null | awk -v u="$1" '$3 == u {print $1}'; }

echo "# $(systemctl --version | head -n1), kernel $(uname -r), $(nproc) cpu(s), system $(systemctl is-system-running)"
check "cgroup v2 at $CG2" test "$(stat -f -c %T $CG2)" = cgroup2fs
check "sshd active" waitfor 60 systemctl is-active ssh

echo "# 1. install: module before pam_systemd (common-session) in sshd's stack"
install -m 644 "$MODULE" "$SECDIR/pam_autogroup.so"
UA="${TAG}a"; UB="${TAG}b"; UC="${TAG}c"
for u in "$UA" "$UB" "$UC"; do
        useradd -m -s /bin/bash "$u"; AG_USERS="$AG_USERS $u"
        install -d -m 700 -o "$u" -g "$u" "/home/$u/.ssh"
        install -m 600 -o "$u" -g "$u" /root/.ssh/id_ed25519.pub "/home/$u/.ssh/authorized_keys"
done
IA=$(id -u "$UA"); IB=$(id -u "$UB"); IC=$(id -u "$UC")
cat >/etc/security/autogroup.conf <<CONF
*      weight  100
$UA    weight  200
$UB    max     150%
$UC    idle    yes
CONF
chmod 644 /etc/security/autogroup.conf
cp /etc/pam.d/sshd "$T/sshd.orig"
sed -i 's|^@include common-session$|session optional pam_autogroup.so debug\n&|' /etc/pam.d/sshd
check "pam_autogroup sits right before common-session (pam_systemd)" \
        grep -B1 -x '@include common-session' /etc/pam.d/sshd
SSH=(timeout 900 ssh -o BatchMode=yes -o ConnectTimeout=60)
STOP="$T/stop"

echo "# 2. two logins: A runs 8 spinners, B runs 1"
remote() { # remote N: prints the session's view, then spins N loops until $STOP exists
        cat <<EOS
echo "xdg=\${XDG_SESSION_ID:-}"; echo "ags=\${AUTOGROUP_SESSION:-}"
echo "cg=\$(cut -d: -f3 /proc/self/cgroup)"
out=\$("$HELPER" enter 2>&1); echo "enter_rc=\$? enter_out=[\$out]"
echo "cg2=\$(cut -d: -f3 /proc/self/cgroup)"
for i in \$(seq $1); do (while :; do :; done) & done
echo started
while [ ! -e "$STOP" ]; do sleep 0.5; done
kill \$(jobs -p); wait; echo stopped
EOS
}
"${SSH[@]}" "$UA@127.0.0.1" "$(remote 8)" >"$T/a.out" 2>&1 & PA=$!
"${SSH[@]}" "$UB@127.0.0.1" "$(remote 1)" >"$T/b.out" 2>&1 & PB=$!
track_pid $PA $PB
check "A logged in" waitfor 300 grep -q '^started' "$T/a.out"
check "B logged in" waitfor 300 grep -q '^started' "$T/b.out"
sed 's/^/#   A: /' "$T/a.out"; sed 's/^/#   B: /' "$T/b.out"
val() { sed -n "s/^$1=//p" "$T/$2.out" | head -n1; }
XA=$(val xdg a); XB=$(val xdg b)

echo "# 3. logind keeps its sessions"
loginctl list-sessions --no-legend | sed 's/^/#   loginctl: /'
check "loginctl list-sessions works" loginctl list-sessions
check_eq "loginctl lists A's session (XDG_SESSION_ID $XA)" "$XA" "$(sessions_of "$UA")"
check_eq "loginctl lists B's session (XDG_SESSION_ID $XB)" "$XB" "$(sessions_of "$UB")"
check_eq "A's session scope" "session-$XA.scope" "$(loginctl show-session "$XA" -p Scope --value)"
check_eq "B's session scope" "session-$XB.scope" "$(loginctl show-session "$XB" -p Scope --value)"
check_eq "A's shell in user-$IA.slice/session-$XA.scope" "/user.slice/user-$IA.slice/session-$XA.scope" "$(val cg a)"
check_eq "B's shell in user-$IB.slice/session-$XB.scope" "/user.slice/user-$IB.slice/session-$XB.scope" "$(val cg b)"
n=0; bad=0
for p in $(pgrep -u "$UA"); do
        c=$(cut -d: -f3 "/proc/$p/cgroup" 2>/dev/null) || continue
        case $c in
        "/user.slice/user-$IA.slice/session-$XA.scope") n=$((n + 1));;
        "/user.slice/user-$IA.slice/user@$IA.service"/*) ;;
        *) bad=$((bad + 1)); echo "#   $p in $c";;
        esac
done
check "A's 8 spinners (and shell) in the session scope" test "$n" -ge 9
check_eq "no process of A outside logind's units" 0 "$bad"
check_eq "no AUTOGROUP_SESSION in systemd mode" "" "$(val ags a)"
check "nothing under $CG2/autogroup" test ! -e "$CG2/autogroup"
check_eq "loginctl: A's session active" active "$(loginctl show-session "$XA" -p State --value)"

echo "# 4. the policy in systemd's terms"
check_eq "user-$IA.slice CPUWeight=200" 200 "$(slice_prop "$IA" CPUWeight)"
check_eq "user-$IA.slice cpu.weight 200" 200 "$(cat "$CG2/user.slice/user-$IA.slice/cpu.weight")"
check_eq "user-$IB.slice CPUWeight=100" 100 "$(slice_prop "$IB" CPUWeight)"
check_eq "user-$IB.slice CPUQuotaPerSecUSec=1.5s" 1.500000s "$(slice_prop "$IB" CPUQuotaPerSecUSec)"
check_eq "user-$IB.slice cpu.max" "150000 100000" "$(cat "$CG2/user.slice/user-$IB.slice/cpu.max")"
check_eq "user-$IA.slice not capped" infinity "$(slice_prop "$IA" CPUQuotaPerSecUSec)"
check_eq "session-$XA.scope CPUWeight=100 (from pam_systemd)" 100 "$(systemctl show "session-$XA.scope" -p CPUWeight --value)"
check_eq "session-$XA.scope cpu.weight 100" 100 "$(cat "$CG2/user.slice/user-$IA.slice/session-$XA.scope/cpu.weight" 2>/dev/null)"
check "properties are runtime ones (/run/systemd/system.control)" test -d "/run/systemd/system.control/user-$IA.slice.d"
check "nothing in /etc/systemd/system.control" test ! -e "/etc/systemd/system.control/user-$IA.slice.d"
jlog | sed 's/^/#   journal: /'
check "debug line names the slice and values" sh -c "journalctl -b -o cat | grep -q 'systemd mode: user-$IA.slice CPUWeight=200 CPUQuotaPerSecUSec=infinity'"
check_eq "no pam_autogroup error in the journal" "" "$(jlog | grep -iE 'cannot|invalid|error|before' || true)"

echo "# 5. the helper on a logind host: nothing, silently, exit 0"
check_eq "autogroup enter in A's login shell: exit 0, no output" "enter_rc=0 enter_out=[]" "$(grep '^enter_rc=' "$T/a.out")"
check_eq "the shell stayed in its session scope" "$(val cg a)" "$(val cg2 a)"
check_eq "no group made in the session scope" "" "$(find "$CG2/user.slice/user-$IA.slice/session-$XA.scope" -mindepth 1 -type d 2>/dev/null)"

echo "# 6. CPU share: A (weight 200, 8 spinners) against B (weight 100, 1 spinner)"
sleep 2
a0=$(usage "$IA"); b0=$(usage "$IB")
sleep "${SHARE_S:-10}"
a1=$(usage "$IA"); b1=$(usage "$IB")
da=$((a1 - a0)); db=$((b1 - b0))
pct=$(( db * 1000 / (da + db + 1) ))
echo "#   used: A ${da} us, B ${db} us; B's share $((pct / 10)).$((pct % 10))% (ideal 33.3%; no grouping 11.1%)"
check "both users ran" test "$da" -gt 0 -a "$db" -gt 0
check "B's share lands near the ideal 1/3 (22%..45%; no grouping would give 11%)" test "$pct" -ge 220 -a "$pct" -le 450

echo "# 7. logout"
touch "$STOP"
check "A's remote shell stopped its spinners and logged out" waitfor 120 grep -q '^stopped' "$T/a.out"
check "B's remote shell stopped its spinner and logged out" waitfor 120 grep -q '^stopped' "$T/b.out"
wait "$PA"; ra=$?; wait "$PB"; rb=$?
check_eq "both ssh clients exit 0" "0 0" "$ra $rb"
check "logind dropped A's and B's sessions" waitfor 120 sh -c "[ -z \"\$(loginctl list-sessions --no-legend | awk '\$3 == \"$UA\" || \$3 == \"$UB\"')\" ]"
check "no process of A or B left" waitfor 120 sh -c "! pgrep -u $UA && ! pgrep -u $UB"
check "user-$IA.slice stopped" waitfor 120 sh -c "[ \"\$(systemctl show user-$IA.slice -p ActiveState --value)\" = inactive ]"
check "user-$IB.slice stopped" waitfor 120 sh -c "[ \"\$(systemctl show user-$IB.slice -p ActiveState --value)\" = inactive ]"
check "no user-$IA.slice cgroup left" test ! -e "$CG2/user.slice/user-$IA.slice"
check "nothing under $CG2/autogroup" test ! -e "$CG2/autogroup"
check "the close was seen" sh -c "journalctl -b -o cat | grep -q 'systemd mode: nothing to remove'"

echo "# 8. pam_autogroup after pam_systemd: the notice; the slice still gets its policy"
cp "$T/sshd.orig" /etc/pam.d/sshd
sed -i 's|^@include common-session$|&\nsession optional pam_autogroup.so|' /etc/pam.d/sshd
out=$("${SSH[@]}" "$UC@127.0.0.1" 'cat /sys/fs/cgroup/user.slice/user-$(id -u).slice/cpu.idle; cut -d: -f3 /proc/self/cgroup' 2>&1)
echo "$out" | sed 's/^/#   C: /'
check_eq "idle yes -> user-$IC.slice cpu.idle 1" 1 "$(echo "$out" | head -n1)"
check_eq "CPUWeight=idle" idle "$(slice_prop "$IC" CPUWeight)"
check "C's login still in its session scope" sh -c "echo '$out' | grep -q '^/user.slice/user-$IC.slice/session-[0-9]*.scope\$'"
check "the wrong order is pointed out" sh -c "journalctl -b -o cat | grep -q 'pam_systemd ran before pam_autogroup'"
cp "$T/sshd.orig" /etc/pam.d/sshd
finish
