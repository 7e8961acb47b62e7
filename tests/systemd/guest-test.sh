#!/bin/bash
# Runs INSIDE the systemd guest (tests/systemd/test-systemd-guest.sh boots it):
# Debian 12, systemd 252 as PID 1, logind, sshd on loopback, pure cgroup v2.
# The project tree is shared read-only at its host path; everything this
# script changes (/etc/pam.d/sshd, the module in /lib/.../security, users)
# lives in the guest's tmpfs overlay and vanishes at power-off.
#
# Real ssh logins of throw-away users with pam_autogroup (mode=auto) placed
# after pam_systemd in sshd's stack (the package's order):
#   - mode=auto picks the systemd mode: nothing under /sys/fs/cgroup/<root>
#   - loginctl lists both sessions, their processes sit in session-N.scope
#   - user-UID.slice carries the policy (CPUWeight, CPUQuotaPerSecUSec, idle)
#     and the session scope CPUWeight=100 set over D-Bus (runtime), gone
#     with the scope
#   - "autogroup enter" without AUTOGROUP_MODE does nothing, silently, exit 0
#   - terminals: two setsid shells of one login each get a scope of the user's
#     manager (autogroup-sid-<sid>.scope, cpu.weight 100) and share the CPU as
#     two groups; enter is idempotent, ignores non-leaders and other users'
#     processes; after logout no scope, process or slice is left
#   - the latency class applies in systemd mode (G: latency batch)
#   - autogroup run --latency CLASS: the command in a scope of the user's
#     manager (autogroup-run-<pid>.scope) with the class's CPUWeight= at
#     interactive 2 (R; 100 at level 0), its class set; set --latency PID: the class only;
#     a manager that cannot answer: the command runs where it is
#   - enter when the user manager cannot answer (stopped, its sockets gone;
#     a private socket or user bus whose listener accepts and never replies;
#     DBUS_SESSION_BUS_ADDRESS=unixexec:... with SIGALRM blocked, where the
#     program is never run): exit 0, nothing printed, the shell stays in its
#     session scope, and it returns (a 30 s liveness guard, no timing asserted)
#   - 8 spinners (user A, weight 200) against 1 (user B, weight 100): B gets
#     about a third of the CPU the two use (no grouping: 1/9)
#   - logout leaves no session, process, slice or autogroup cgroup behind
#   - a stack with pam_autogroup before pam_systemd works too: the session
#     weight handed to pam_systemd as PAM data
#   - a login that never reaches logind (no pam_systemd) leaves no runtime
#     property and no cgroup for its user's slice
#   - tools/demo: the systemd mode through real logind sessions, B's part of
#     A+B within 5 points of 50%, nothing left behind
#   - autogroup status (text, --json, as the user) lists the user slices,
#     session scopes and terminal scopes; explain names the slice properties
#   - the unit and host tests of make check run here, each passing or skipped
#     with its reason (tests/systemd/host-lanes.sh)
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/demo-check.sh"
. "$abs_top_srcdir/tests/systemd/host-lanes.sh"
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

echo "# 1. install: module after pam_systemd (common-session) in sshd's stack, the package's order"
install -m 644 "$MODULE" "$SECDIR/pam_autogroup.so"
UA="${TAG}a"; UB="${TAG}b"; UC="${TAG}c"; UD="${TAG}d"; UE="${TAG}e"; UF="${TAG}f"; UG="${TAG}g"; UR="${TAG}r"
for u in "$UA" "$UB" "$UC" "$UD" "$UE" "$UF" "$UG" "$UR"; do
        useradd -m -s /bin/bash "$u"; AG_USERS="$AG_USERS $u"
        install -d -m 700 -o "$u" -g "$u" "/home/$u/.ssh"
        install -m 600 -o "$u" -g "$u" /root/.ssh/id_ed25519.pub "/home/$u/.ssh/authorized_keys"
done
IA=$(id -u "$UA"); IB=$(id -u "$UB"); IC=$(id -u "$UC"); ID=$(id -u "$UD")
# a directory the test users may write to (their outputs), and the terminals' stop file
TT=$(mktemp -d /tmp/agtt.XXXXXX); chmod 1777 "$TT"; STOP2="$TT/stop"
cat >/etc/security/autogroup.conf <<CONF
*      weight  100
$UA    weight  200
$UB    max     150%
$UC    idle    yes
$UG    latency batch
$UR    interactive 2
CONF
chmod 644 /etc/security/autogroup.conf
cp /etc/pam.d/sshd "$T/sshd.orig"
sed -i 's|^@include common-session$|&\nsession optional pam_autogroup.so debug|' /etc/pam.d/sshd
check "pam_autogroup sits right after common-session (pam_systemd)" \
        grep -A1 -x '@include common-session' /etc/pam.d/sshd
SSH=(timeout 900 ssh -o BatchMode=yes -o ConnectTimeout=60)
STOP="$T/stop"

echo "# 2. two logins: A runs 8 spinners, B runs 1"
remote() { # remote N: prints the session's view, then spins N loops until $STOP exists
        cat <<EOS
echo "xdg=\${XDG_SESSION_ID:-}"; echo "ags=\${AUTOGROUP_SESSION:-}"; echo "agm=\${AUTOGROUP_MODE:-}"
echo "cg=\$(cut -d: -f3 /proc/self/cgroup)"
out=\$(env -u AUTOGROUP_MODE "$HELPER" enter 2>&1); echo "enter_rc=\$? enter_out=[\$out]"
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
check_eq "session-$XA.scope CPUWeight=100 (set over D-Bus after pam_systemd)" 100 "$(systemctl show "session-$XA.scope" -p CPUWeight --value)"
check_eq "session-$XA.scope cpu.weight 100" 100 "$(cat "$CG2/user.slice/user-$IA.slice/session-$XA.scope/cpu.weight" 2>/dev/null)"
check "properties are runtime ones (/run/systemd/system.control)" test -d "/run/systemd/system.control/user-$IA.slice.d"
check "nothing in /etc/systemd/system.control" test ! -e "/etc/systemd/system.control/user-$IA.slice.d"
jlog | sed 's/^/#   journal: /'
check "debug line names the slice and what was written (no max rule: CPUQuota left to systemd)" sh -c "journalctl -b -o cat | grep -q 'systemd mode: user-$IA.slice CPUWeight=200 (runtime), CPUQuota: no rule, left to systemd'"
check "no CPUQuota drop-in written for A (no max rule)" test ! -e "/run/systemd/system.control/user-$IA.slice.d/50-CPUQuota.conf"
check_eq "no pam_autogroup error in the journal" "" "$(jlog | grep -iE 'cannot|invalid|error|before' || true)"

echo "# 5. the helper outside a pam_autogroup login (no AUTOGROUP_MODE): nothing, silently, exit 0"
check_eq "the module exported AUTOGROUP_MODE=systemd to A's login" systemd "$(val agm a)"
check_eq "autogroup enter without AUTOGROUP_MODE in A's login shell: exit 0, no output" "enter_rc=0 enter_out=[]" "$(grep '^enter_rc=' "$T/a.out")"
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
# logout_pair STOPFILE X Y: the remote shells of logins X and Y ($T/x.out, $PX)
# see STOPFILE, stop what they run and log out; both ssh clients exit 0
logout_pair() {
        local x="$2" y="$3" px py rx ry
        touch "$1"
        check "$x's remote shell stopped what it ran and logged out" waitfor 120 grep -q '^stopped' "$T/${x,,}.out"
        check "$y's remote shell stopped what it ran and logged out" waitfor 120 grep -q '^stopped' "$T/${y,,}.out"
        eval "px=\$P$x py=\$P$y"
        wait "$px"; rx=$?; wait "$py"; ry=$?
        check_eq "both ssh clients exit 0" "0 0" "$rx $ry"
}
logout_pair "$STOP" A B
check "logind dropped A's and B's sessions" waitfor 120 sh -c "[ -z \"\$(loginctl list-sessions --no-legend | awk '\$3 == \"$UA\" || \$3 == \"$UB\"')\" ]"
check "no process of A or B left" waitfor 120 sh -c "! pgrep -u $UA && ! pgrep -u $UB"
check "user-$IA.slice stopped" waitfor 120 sh -c "[ \"\$(systemctl show user-$IA.slice -p ActiveState --value)\" = inactive ]"
check "user-$IB.slice stopped" waitfor 120 sh -c "[ \"\$(systemctl show user-$IB.slice -p ActiveState --value)\" = inactive ]"
check "no user-$IA.slice cgroup left" test ! -e "$CG2/user.slice/user-$IA.slice"
check "nothing under $CG2/autogroup" test ! -e "$CG2/autogroup"
check "the session scopes' runtime CPUWeight= went with them" waitfor 60 sh -c "! ls -d /run/systemd/system.control/session-$XA.scope.d/50-CPUWeight.conf /run/systemd/system.control/session-$XB.scope.d/50-CPUWeight.conf 2>/dev/null | grep -q ."
check "the close was seen" sh -c "journalctl -b -o cat | grep -q 'systemd mode: nothing to remove'"

echo "# 7b. terminals: a scope of the user's manager per setsid() shell (AUTOGROUP_MODE=systemd)"
# E: another user's login whose shell leads its session (the victim of the attacks)
# with a terminal (-tt): its login shell is the login's own, which enter leaves in the session scope
"${SSH[@]}" -tt "$UE@127.0.0.1" "\"$HELPER\" enter --verbose --pid \$\$ >$TT/e.enter 2>&1; echo \$? >>$TT/e.enter
tty >>$TT/e.enter; echo \$\$ >$TT/e.pid; while [ ! -e $STOP2 ]; do sleep 0.5; done; echo stopped" >"$T/e.out" 2>&1 & PE=$!
track_pid $PE
check "E logged in" waitfor 300 test -s "$TT/e.pid"
EPID=$(cat "$TT/e.pid"); ECG=$(cut -d: -f3 "/proc/$EPID/cgroup")
XE=$(sessions_of "$UE")
sed 's/^/#   E: /' "$TT/e.enter"
check_eq "enter on the login's own shell (ssh -tt): left in its session scope, exit 0" \
        "$EPID: the login's own shell, left in its session scope" "$(sed -n 1p "$TT/e.enter")"
check_eq "  it is in session-$XE.scope" "/user.slice/user-$(id -u "$UE").slice/session-$XE.scope" "$ECG"
# D: one ssh login starting two "terminals" (setsid shells): tab 1 runs 4 spinners and
# leaves a nohup'd sleep behind, tab 2 runs 1 spinner
tab() { # tab N SPINNERS: the body of one terminal's shell
        cat <<EOS
echo "pid=\$\$ sid=\$(ps -o sid= -p \$\$ | tr -d ' ')"
"$HELPER" enter --verbose; echo "rc=\$?"
echo "cg=\$(cut -d: -f3 /proc/self/cgroup)"
echo "again=[\$("$HELPER" enter --verbose --pid \$\$ 2>&1)] rc=\$?"
echo "cg2=\$(cut -d: -f3 /proc/self/cgroup)"
[ $1 = 1 ] && { nohup sleep 900 >/dev/null 2>&1 & linger=\$!; echo "linger=\$linger"; }
for i in \$(seq $2); do (while :; do :; done) & done
echo started
while [ ! -e $STOP2 ]; do sleep 0.5; done
kill \$(jobs -p | grep -vx "\${linger:-x}") 2>/dev/null; echo stopped
EOS
}
tab 1 4 >"$TT/tab1.sh"; tab 2 1 >"$TT/tab2.sh"
# the user's manager started first (logind starts it with the login): enter's
# bound of 1 s an attempt is for a manager that answers, which one still
# starting up under emulation on a loaded host may not be; 7g is that case
cat >"$TT/d.sh" <<EOS
timeout 300 systemctl --user is-system-running --wait >/dev/null 2>&1
echo "xdg=\$XDG_SESSION_ID agm=\$AUTOGROUP_MODE"; echo "login=\$\$"
setsid -f bash $TT/tab1.sh >$TT/tab1.out 2>&1 </dev/null
# one terminal at a time, as a person opens them: two calls at once may each
# wait for the other past enter's bound on a loaded emulated guest
i=0; while ! grep -q '^rc=' $TT/tab1.out 2>/dev/null && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
setsid -f bash $TT/tab2.sh >$TT/tab2.out 2>&1 </dev/null
sleep 300 & nl=\$!
echo "nonleader=\$nl [\$("$HELPER" enter --verbose --pid \$nl 2>&1)] cg=\$(cut -d: -f3 /proc/\$nl/cgroup)"
echo "other=[\$("$HELPER" enter --verbose --pid $EPID 2>&1)]"
echo "root=[\$("$HELPER" enter --verbose --pid 1 2>&1)]"
echo "unset=[\$(env -u AUTOGROUP_MODE "$HELPER" enter --verbose --pid \$\$ 2>&1)]"
echo "self=[\$("$HELPER" enter --verbose --pid \$\$ 2>&1)]"
while [ ! -e $STOP2 ]; do sleep 0.5; done; kill \$nl; echo stopped
EOS
chmod 644 "$TT"/*.sh
"${SSH[@]}" "$UD@127.0.0.1" "exec bash $TT/d.sh" >"$T/d.out" 2>&1 & PD=$!
track_pid $PD
check "D logged in" waitfor 300 grep -q '^other=' "$T/d.out"
check "tab 1 started" waitfor 120 grep -q '^started' "$TT/tab1.out"
check "tab 2 started" waitfor 120 grep -q '^started' "$TT/tab2.out"
for f in d.out; do sed 's/^/#   D: /' "$T/$f"; done
sed 's/^/#   tab 1: /' "$TT/tab1.out"; sed 's/^/#   tab 2: /' "$TT/tab2.out"
tv() { sed -n "s/^$1=//p" "$TT/tab$2.out" | head -n1; }
dv() { sed -n "s/^$1=//p" "$T/d.out" | head -n1; }
XD=$(dv xdg | cut -d' ' -f1)
S1=$(tv pid 1 | cut -d' ' -f1); S2=$(tv pid 2 | cut -d' ' -f1)
U1="$CG2/user.slice/user-$ID.slice/user@$ID.service/app.slice/autogroup-sid-$S1.scope"
U2="$CG2/user.slice/user-$ID.slice/user@$ID.service/app.slice/autogroup-sid-$S2.scope"
check_eq "D's login exported AUTOGROUP_MODE=systemd" "xdg=$XD agm=systemd" "$(sed -n 1p "$T/d.out")"
check_eq "tab 1 leads its own session" "pid=$S1 sid=$S1" "$(grep '^pid=' "$TT/tab1.out")"
check_eq "tab 1 enter: exit 0, says where" "$S1: moved into its terminal scope: autogroup-sid-$S1.scope" "$(sed -n 2p "$TT/tab1.out")"
check_eq "tab 1 in autogroup-sid-$S1.scope of user@$ID.service" "${U1#$CG2}" "$(tv cg 1)"
check_eq "tab 2 in autogroup-sid-$S2.scope of user@$ID.service" "${U2#$CG2}" "$(tv cg 2)"
check "two distinct scopes" test "$S1" != "$S2" -a -d "$U1" -a -d "$U2"
check_eq "enter again (tab 1): already there, nothing changed" \
        "[$S1: already in its terminal scope, nothing to do: autogroup-sid-$S1.scope] rc=0" "$(tv again 1)"
check_eq "tab 1 still in the same scope" "$(tv cg 1)" "$(tv cg2 1)"
check_eq "cpu.weight of tab 1's scope" 100 "$(cat "$U1/cpu.weight" 2>/dev/null)"
check_eq "cpu.weight of tab 2's scope" 100 "$(cat "$U2/cpu.weight" 2>/dev/null)"
# (plus, now and then, the shell's "sleep 0.5")
n1=$(wc -l < "$U1/cgroup.procs"); n2=$(wc -l < "$U2/cgroup.procs")
check "tab 1's scope holds its shell, 4 spinners and the nohup'd sleep ($n1)" test "$n1" -ge 6 -a "$n1" -le 7
check "tab 2's scope holds its shell and 1 spinner ($n2)" test "$n2" -ge 2 -a "$n2" -le 3
uprop() { runuser -u "$UD" -- env XDG_RUNTIME_DIR="/run/user/$ID" systemctl --user show "$1" -p "$2" --value; }
check_eq "the user manager: autogroup-sid-$S1.scope active" active "$(uprop "autogroup-sid-$S1.scope" ActiveState)"
check_eq "  with CPUWeight=100" 100 "$(uprop "autogroup-sid-$S1.scope" CPUWeight)"
check_eq "  in app.slice" app.slice "$(uprop "autogroup-sid-$S1.scope" Slice)"
check_eq "  CollectMode=inactive-or-failed" inactive-or-failed "$(uprop "autogroup-sid-$S1.scope" CollectMode)"
echo "#   $(uprop "autogroup-sid-$S1.scope" Description)"
check "cpu is enabled below user@$ID.service/app.slice" grep -qw cpu "$CG2/user.slice/user-$ID.slice/user@$ID.service/app.slice/cgroup.subtree_control"
# loginctl: the session keeps its leader (sshd) and login shell, the terminals are the user manager's
loginctl session-status "$XD" --no-pager 2>&1 | sed 's/^/#   session-status: /' | head -n 20
check "loginctl still lists D's session" sh -c "loginctl list-sessions --no-legend | awk '\$1 == \"$XD\"' | grep -q $UD"
check_not "loginctl session-status no longer lists tab 1's shell" sh -c "loginctl session-status $XD --no-pager | grep -q '[^0-9]$S1 '"
check "loginctl user-status lists it (user@$ID.service)" sh -c "loginctl user-status $UD --no-pager | grep -q '[^0-9]$S1 '"
echo "# 7c. what enter refuses"
NL=$(dv nonleader | cut -d' ' -f1)
check_eq "a process that does not lead its session: nothing, stays in the session scope" \
        "$NL [$NL: not a session leader, nothing to do] cg=/user.slice/user-$ID.slice/session-$XD.scope" "$(dv nonleader)"
check_eq "another user's session leader: nothing" "[$EPID: the process belongs to another user, nothing to do]" "$(dv other)"
check_eq "  and E's shell did not move" "$ECG" "$(cut -d: -f3 "/proc/$EPID/cgroup")"
check_eq "root's PID 1: nothing" "[1: the process belongs to another user, nothing to do]" "$(dv root)"
check_eq "without AUTOGROUP_MODE: nothing" "[$(dv login): not inside a pam_autogroup session of this user, nothing to do]" "$(dv unset)"
check_eq "the login's own shell (ssh without a terminal): nothing" "[$(dv login): the login's own shell, left in its session scope]" "$(dv self)"
check_eq "D's login shell stayed in its session scope" "/user.slice/user-$ID.slice/session-$XD.scope" "$(cut -d: -f3 "/proc/$(dv login)/cgroup")"
# the same move without the helper: D writes E's shell into its own delegated scope
out=$(as_user "$UD" "echo $EPID > '$U1/cgroup.procs'" 2>&1); rc=$?
echo "#   D: echo $EPID > $U1/cgroup.procs: rc $rc $out"
check "the kernel refuses D moving E's shell into D's scope" test "$rc" != 0
check_eq "E's shell is still in E's session scope" "$ECG" "$(cut -d: -f3 "/proc/$EPID/cgroup")"
echo "# 7d. two terminals share the CPU as two groups: tab 1 (4 spinners) against tab 2 (1)"
cu() { sed -n 's/^usage_usec //p' "$1/cpu.stat" 2>/dev/null || echo 0; }
u10=$(cu "$U1"); u20=$(cu "$U2"); sleep "${SHARE_S:-8}"; u11=$(cu "$U1"); u21=$(cu "$U2")
d1=$((u11 - u10)); d2=$((u21 - u20)); pct=$(( d2 * 1000 / (d1 + d2 + 1) ))
echo "#   used: tab 1 ${d1} us, tab 2 ${d2} us; tab 2's share $((pct / 10)).$((pct % 10))% (ideal 50%; one group: 20%)"
check "tab 2's share lands near the ideal 1/2 (35%..65%; without the scopes 20%)" test "$pct" -ge 350 -a "$pct" -le 650
echo "# 7d'. autogroup status and explain in the systemd mode"
st=$("$HELPER" status 2>&1); echo "$st" | sed 's/^/#   /'
check_not "status does not say 'No groups'" sh -c "echo \"\$1\" | grep -q 'No groups'" _ "$st"
check "status lists user-$ID.slice ($UD)" sh -c "echo \"\$1\" | grep -q 'user-$ID.slice ($UD)'" _ "$st"
check "status lists D's session-$XD.scope" sh -c "echo \"\$1\" | grep -q 'session-$XD.scope'" _ "$st"
check "status lists the terminals' scopes" sh -c "echo \"\$1\" | grep -q 'app.slice/autogroup-sid-$S1.scope' && echo \"\$1\" | grep -q 'app.slice/autogroup-sid-$S2.scope'" _ "$st"
check "status names the systemd mode" sh -c "echo \"\$1\" | grep -q '^systemd mode'" _ "$st"
js=$("$HELPER" status --json 2>&1)
check "status --json: mode systemd, a tree with the terminal scope" sh -c "echo \"\$1\" | grep -q '\"mode\":\"systemd\"' && echo \"\$1\" | grep -q '\"name\":\"app.slice/autogroup-sid-$S1.scope\",[^{]*\"kind\":\"terminal\"'" _ "$js"
check_not "status --json: the tree is not null" sh -c "echo \"\$1\" | grep -q '\"tree\":null'" _ "$js"
ust=$(as_user "$UD" "'$HELPER' status" 2>&1)
check "status as D: D's own slice" sh -c "echo \"\$1\" | grep -q 'user-$ID.slice'" _ "$ust"
check_not "status as D: not E's slice" sh -c "echo \"\$1\" | grep -q 'user-$(id -u "$UE").slice'" _ "$ust"
ex=$("$HELPER" explain "$UA" 2>&1); echo "$ex" | sed 's/^/#   explain: /'
check "explain shows user-$IA.slice's live CPUWeight=200 from systemd" sh -c "echo \"\$1\" | grep -q '^user-$IA.slice now (from systemd, [a-z]*): CPUWeight=200 CPUQuota=(none)'" _ "$ex"
check "explain: A's weight rule, written by the module" sh -c "echo \"\$1\" | grep -q '^  CPUWeight: rule .*:2 wants 200; written by pam_autogroup at login (runtime drop-in, in place)'" _ "$ex"
check "explain: no max rule for A, left to systemd" sh -c "echo \"\$1\" | grep -q '^  CPUQuota: no rule sets it; left to systemd'" _ "$ex"
check "explain names the session scope's CPUWeight=100" sh -c "echo \"\$1\" | grep -q '^session-N.scope CPUWeight=100'" _ "$ex"
check "explain (B, max 150%): CPUQuota=150%" sh -c "'$HELPER' explain '$UB' | grep -q '^  CPUQuota: rule .* wants 150%'"
check "explain (C, idle yes): CPUWeight=idle" sh -c "'$HELPER' explain '$UC' | grep -q '^  CPUWeight: rule .* wants idle'"
echo "# 7e. logout: nothing left"
logout_pair "$STOP2" D E
check "tab 2's scope is gone once its shell exited" waitfor 60 test ! -e "$U2"
LING=$(tv linger 1)
echo "#   right after logout: tab 1's scope $( [ -e "$U1" ] && echo "still holds $(cat "$U1/cgroup.procs" 2>/dev/null | tr '\n' ' ')" || echo gone), nohup'd sleep $LING $(kill -0 "$LING" 2>/dev/null && echo alive || echo gone), user@$ID.service $(systemctl show "user@$ID.service" -p ActiveState --value)"
# the job lives until the user's manager stops, UserStopDelaySec (10 s) after
# the user's last session: a loaded host can take longer than that to get here
# (the scope read first, the manager's state after: a manager still active
# then was active when the scope was read, whenever it stops afterwards)
procs1=$(cat "$U1/cgroup.procs" 2>/dev/null)
if [ "$(systemctl show "user@$ID.service" -p ActiveState --value)" = active ]; then
        check "tab 1's scope still holds the nohup'd job after logout" grep -qx "$LING" <<<"$procs1"
else
        skip "tab 1's scope still holds the nohup'd job after logout (user@$ID.service already stopped: the host took longer than UserStopDelaySec to get here)"
fi
check "logind dropped D's session" waitfor 120 sh -c "! loginctl list-sessions --no-legend | awk '\$3 == \"$UD\"' | grep -q ."
t0=$(date +%s)
check "user@$ID.service stops (the user has no session left)" waitfor 120 sh -c "[ \"\$(systemctl show user@$ID.service -p ActiveState --value)\" = inactive ]"
echo "#   user@$ID.service inactive $(( $(date +%s) - t0 )) s after the session was gone"
check "no process of D or E left (the nohup'd sleep in tab 1's scope included)" waitfor 120 sh -c "! pgrep -u $UD && ! pgrep -u $UE"
check "no autogroup-sid scope left anywhere" sh -c "[ -z \"\$(find $CG2 -name 'autogroup-sid-*' 2>/dev/null)\" ]"
check "user-$ID.slice stopped, its cgroup gone" waitfor 120 test ! -e "$CG2/user.slice/user-$ID.slice"

echo "# 7f. what a login leaves behind (KillUserProcesses=no): a job of the login shell keeps the session"
# F: an ssh login with a terminal; its login shell (left in the session scope) and a nested
# terminal (moved) each leave a nohup'd sleep behind
"${SSH[@]}" -tt "$UF@127.0.0.1" "echo \$XDG_SESSION_ID >$TT/f.xdg; \"$HELPER\" enter --verbose --pid \$\$ >$TT/f.enter 2>&1
nohup sleep 901 >/dev/null 2>&1 & echo \$! >$TT/f.login
setsid -f bash -c '\"$HELPER\" enter --verbose >>$TT/f.enter 2>&1; nohup sleep 902 >/dev/null 2>&1 & echo \$! >$TT/f.tab' </dev/null >/dev/null 2>&1
while [ ! -s $TT/f.tab ]; do sleep 0.2; done; sleep 1" >"$T/f.out" 2>&1
echo "#   F: exit $?"; sed 's/^/#   F: /' "$TT/f.enter"
IF=$(id -u "$UF"); FL=$(cat "$TT/f.login" 2>/dev/null); FT=$(cat "$TT/f.tab" 2>/dev/null)
XF=$(cat "$TT/f.xdg")
check_eq "F's login shell: left in its session scope" "the login's own shell, left in its session scope" "$(sed -n 1p "$TT/f.enter" | cut -d' ' -f2-)"
check "F's nested terminal: moved" sh -c "sed -n 2p '$TT/f.enter' | grep -q '^[0-9]*: moved into its terminal scope: autogroup-sid-[0-9]*.scope\$'"
check_eq "the login shell's job stayed in session-$XF.scope" "/user.slice/user-$IF.slice/session-$XF.scope" "$(cut -d: -f3 "/proc/$FL/cgroup" 2>/dev/null)"
check "the nested terminal's job is in its terminal scope" sh -c "cut -d: -f3 /proc/$FT/cgroup | grep -q '^/user.slice/user-$IF.slice/user@$IF.service/app.slice/autogroup-sid-[0-9]*.scope\$'"
sleep 15
echo "#   15 s after logout: session $XF $(loginctl show-session "$XF" -p State --value 2>&1), user@$IF.service $(systemctl show "user@$IF.service" -p ActiveState --value)"
check_eq "the session stays (closing) while its scope holds the login shell's job" closing "$(loginctl show-session "$XF" -p State --value 2>/dev/null)"
check "the login shell's job survives the logout" kill -0 "$FL"
check "so does the user manager, and the job in the terminal scope" sh -c "kill -0 $FT && systemctl is-active -q user@$IF.service"
echo "#   $(loginctl session-status "$XF" --no-pager 2>&1 | grep -E 'State|sleep' | tr -s ' \t' ' ' | tr '\n' ';')"
# the login shell's job ends: the session scope empties, the session and then the user manager go
kill "$FL"
check "the session is gone once its last process ended" waitfor 60 sh -c "! loginctl show-session $XF >/dev/null 2>&1"
check "the user manager stops, and the terminal scope's job with it" waitfor 120 sh -c "! pgrep -u $UF"
check "no autogroup-sid scope left anywhere" waitfor 60 sh -c "[ -z \"\$(find $CG2 -name 'autogroup-sid-*' 2>/dev/null)\" ]"
check "user-$IF.slice gone" waitfor 120 test ! -e "$CG2/user.slice/user-$IF.slice"

echo "# 7g. the user manager cannot answer: enter returns, exit 0, silent, the shell stays"
# G: an ssh login whose nested terminals (setsid shells) run enter once silently and
# once with --verbose (which says why nothing moved) under three conditions that root
# sets up in turn: (none) user@UID.service stopped and its sockets removed; (private)
# a listener on /run/user/UID/systemd/private that accepts and never replies; (bus)
# no private socket, such a listener on the user bus /run/user/UID/bus. "timeout 30"
# only turns a hang into a failure (libsystemd's own authentication timeout is 90 s).
IG=$(id -u "$UG"); RUNG=/run/user/$IG
cat >"$TT/g-tab.sh" <<EOS
cg0=\$(cut -d: -f3 /proc/self/cgroup)
out=\$(timeout 30 \${AG_PRE:-} "$HELPER" enter --pid \$\$ 2>&1); rc=\$?
cg1=\$(cut -d: -f3 /proc/self/cgroup)
vout=\$(timeout 30 \${AG_PRE:-} "$HELPER" enter --verbose --pid \$\$ 2>&1); vrc=\$?
cg2=\$(cut -d: -f3 /proc/self/cgroup)
rout=\$(timeout 30 \${AG_PRE:-} "$HELPER" run --verbose --latency interactive -- sh -c 'echo "\$(cut -d: -f3 /proc/self/cgroup) \$(chrt -p \$\$ | sed -n "s/.*policy: //p")"' 2>&1); rrc=\$?
echo "pid=\$\$ sid=\$(ps -o sid= -p \$\$ | tr -d ' ')"
echo "run=rc \$rrc [\$(echo "\$rout" | tr '\n' '|')]"
echo "silent=rc \$rc [\$out]"
echo "verbose=rc \$vrc [\$vout]"
echo "cg=\$cg0 \$cg1 \$cg2"
EOS
cat >"$TT/g.sh" <<EOS
echo "xdg=\$XDG_SESSION_ID agm=\$AUTOGROUP_MODE login=\$\$ bus=\${DBUS_SESSION_BUS_ADDRESS:-}"
echo "sched=\$(chrt -p \$\$ | sed -n 's/.*scheduling policy: //p')"
for v in none private bus exec; do
        while [ ! -e $TT/g.\$v.go ]; do sleep 0.2; done
        # (exec) a unixexec: user bus address naming a program that ignores
        # SIGTERM, and enter started with SIGALRM blocked
        [ \$v = exec ] && export DBUS_SESSION_BUS_ADDRESS=unixexec:path=/bin/sh,argv0=sh,argv1=$TT/g-exec.sh \
                AG_PRE="perl $TT/blockalrm.pl"
        setsid -w bash $TT/g-tab.sh >$TT/g.\$v.tmp 2>&1 </dev/null; mv $TT/g.\$v.tmp $TT/g.\$v.out
done
while [ ! -e $STOP2.g ]; do sleep 0.2; done; echo stopped
EOS
# listen.pl PATH READY: listens on PATH, accepts every connection, reads and answers nothing
cat >"$TT/listen.pl" <<'EOS'
use IO::Socket::UNIX;
my ($path, $ready) = @ARGV;
my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $path, Listen => 16) or die "listen $path: $!\n";
open(my $f, '>', $ready) or die "$ready: $!\n"; print $f "$$\n"; close $f;
my @held;
while (my $c = $s->accept) { push @held, $c; }
EOS
# blockalrm.pl CMD...: CMD with SIGALRM blocked (the mask survives exec)
cat >"$TT/blockalrm.pl" <<'EOS'
use POSIX;
sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGALRM)) or die "sigprocmask: $!\n";
exec @ARGV or die "exec: $!\n";
EOS
# the unixexec: program: leaves a mark and ignores SIGTERM
cat >"$TT/g-exec.sh" <<EOS
trap '' TERM
touch $TT/g.exec.ran
exec sleep 600
EOS
chmod 644 "$TT/g-tab.sh" "$TT/g.sh" "$TT/listen.pl" "$TT/blockalrm.pl" "$TT/g-exec.sh"
# listener_start NAME PATH: that listener, as G (G's own socket, as the manager's would be)
listener_start() {
        setpriv --reuid="$IG" --regid="$(id -g "$UG")" --init-groups perl "$TT/listen.pl" "$2" "$TT/$1.ready" \
                >"$TT/$1.err" 2>&1 &
        track_pid $!; eval "L_$1=$!"
        waitfor 30 test -s "$TT/$1.ready" || echo "#   listener $1: $(cat "$TT/$1.err")"
}
listener_stop() { local p; eval "p=\$L_$1"; kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; rm -f "$2"; }
"${SSH[@]}" "$UG@127.0.0.1" "exec bash $TT/g.sh" >"$T/g.out" 2>&1 & PG=$!
track_pid $PG
check "G logged in" waitfor 300 grep -q '^sched=' "$T/g.out"
sed 's/^/#   G: /' "$T/g.out"
XG=$(sed -n 's/^xdg=\([^ ]*\) .*/\1/p' "$T/g.out")
GSCOPE="/user.slice/user-$IG.slice/session-$XG.scope"
check "G's login exported AUTOGROUP_MODE=systemd" grep -q "^xdg=$XG agm=systemd " "$T/g.out"
check_eq "the latency class applies in systemd mode: G's login shell (latency batch) runs SCHED_BATCH" \
        SCHED_BATCH "$(sed -n 's/^sched=//p' "$T/g.out")"
systemctl stop "user@$IG.service"
check "user@$IG.service stopped (the session stays)" waitfor 60 sh -c "[ \"\$(systemctl show user@$IG.service -p ActiveState --value)\" = inactive ] && loginctl show-session $XG >/dev/null"
rm -f "$RUNG/systemd/private" "$RUNG/bus"
check "neither $RUNG/systemd/private nor $RUNG/bus exists" test ! -e "$RUNG/systemd/private" -a ! -e "$RUNG/bus"
# gv VARIANT KEY: a line of that variant's terminal
gv() { sed -n "s/^$2=//p" "$TT/g.$1.out" 2>/dev/null | head -n1; }
for v in none private bus exec; do
        case $v in
        private) setpriv --reuid="$IG" --regid="$(id -g "$UG")" --init-groups mkdir -p "$RUNG/systemd"
                 listener_start private "$RUNG/systemd/private";;
        bus)     listener_stop private "$RUNG/systemd/private"; listener_start bus "$RUNG/bus";;
        exec)    listener_stop bus "$RUNG/bus";;
        esac
        touch "$TT/g.$v.go"
        check "($v) the terminal's enter calls returned" waitfor 120 test -s "$TT/g.$v.out"
        sed "s/^/#   G ($v): /" "$TT/g.$v.out"
        GP=$(gv "$v" pid | cut -d' ' -f1)
        check_eq "($v) the terminal leads its session" "$GP $GP" "$(gv "$v" pid | sed 's/sid=//')"
        check_eq "($v) enter: exit 0, nothing printed" "rc 0 []" "$(gv "$v" silent)"
        check_eq "($v) the shell stayed in its session scope" "$GSCOPE $GSCOPE $GSCOPE" "$(gv "$v" cg)"
        # --verbose shows that the D-Bus path was taken, and how it ended
        case $v in
        none|exec) why='[^]]*';;
        *)    why='Connection timed out';;
        esac
        check "($v) enter --verbose: exit 0, the manager was asked and did not answer ($why)" \
                grep -qE "^verbose=rc 0 \[$GP: the user manager did not move it, left where it is: $why\]\$" "$TT/g.$v.out"
        # run --latency interactive: the command runs where it is, with its class, and says why
        check "($v) run --verbose --latency interactive: exit 0, the manager did not answer ($why), the command ran in the session scope, SCHED_OTHER (G's login is SCHED_BATCH)" \
                grep -qE "^run=rc 0 \[autogroup run: no scope of the user manager \($why\): the command runs where it is\|(autogroup run: note: [^|]*\|)?$GSCOPE SCHED_OTHER\|\]\$" "$TT/g.$v.out"
done
listener_stop bus "$RUNG/bus"
check "(exec) the unixexec: program never ran" test ! -e "$TT/g.exec.ran"
check "(exec) nothing it would have spawned is left" sh -c "! pgrep -u $UG -f '^sleep 600'"
check "no autogroup-sid or autogroup-run scope was made for G" sh -c "[ -z \"\$(find $CG2/user.slice/user-$IG.slice -name 'autogroup-*' 2>/dev/null)\" ]"
touch "$STOP2.g"
check "G's login ended" waitfor 120 grep -q '^stopped' "$T/g.out"
wait "$PG"; check_eq "G's ssh client exits 0" 0 "$?"
check "no process of G left" waitfor 120 sh -c "! pgrep -u $UG"
check "user-$IG.slice gone" waitfor 120 test ! -e "$CG2/user.slice/user-$IG.slice"

echo "# 7h. autogroup run and set in the systemd mode: a scope of the user's manager per command"
# R (interactive 2): an ssh login whose commands are started with "autogroup run"; each
# command reports where it runs, then waits for root's go, so that root looks at its
# scope while it is there (no timing)
IR=$(id -u "$UR")
SA="$abs_top_builddir/tests/host/schedattr"
# rcmd NAME: the body of a command that reports and waits
rcmd() { echo "cat /proc/self/cgroup; echo pid=\$\$; [ -x $SA ] && $SA \$\$; chrt -p \$\$; touch $TT/r.$1.up; while [ ! -e $TT/r.$1.go ]; do sleep 0.2; done; sleep 1"; }
cat >"$TT/r.sh" <<EOS
echo "agm=\$AUTOGROUP_MODE agi=\$AUTOGROUP_INTERACTIVE"
"$HELPER" run --verbose --latency audio -- sh -c '$(rcmd audio)' >$TT/r.audio 2>&1; echo "audio_rc=\$?"
"$HELPER" run --verbose --latency batch -- sh -c '$(rcmd batch)' >$TT/r.batch 2>&1; echo "batch_rc=\$?"
AUTOGROUP_INTERACTIVE=0 "$HELPER" run --verbose --latency audio -- sh -c '$(rcmd level0)' >$TT/r.level0 2>&1; echo "level0_rc=\$?"
"$HELPER" run --latency audio -- sh -c 'exit 7'; echo "exit_rc=\$?"
"$HELPER" run -- /nonexistent/cmd 2>/dev/null; echo "missing_rc=\$?"
sleep 300 & s=\$!
sout=\$("$HELPER" set --verbose --latency batch \$s 2>&1); src=\$?
echo "set=[\$(echo "\$sout" | tr '\n' '|')] rc=\$src policy=\$(chrt -p \$s | sed -n 's/.*policy: //p')"
echo "set_cg=\$(cut -d: -f3 /proc/\$s/cgroup) login_cg=\$(cut -d: -f3 /proc/self/cgroup)"
"$HELPER" set --weight 300 \$s 2>/dev/null; echo "setw_rc=\$?"
"$HELPER" set --latency batch 1 2>/dev/null; echo "set1_rc=\$?"
"$HELPER" set --latency batch leaf-1 2>/dev/null; echo "setleaf_rc=\$?"
kill \$s; echo finished
EOS
chmod 644 "$TT/r.sh"
"${SSH[@]}" "$UR@127.0.0.1" "exec bash $TT/r.sh" >"$T/r.out" 2>&1 & PR=$!
track_pid $PR
rprop() { runuser -u "$UR" -- env XDG_RUNTIME_DIR="/run/user/$IR" systemctl --user show "$1" -p "$2" --value; }
# rcase NAME CPUWEIGHT(property) CPU.WEIGHT(file) POLICY: one command's checks, then its go
rcase() {
        local cg pid unit
        check "($1) the command started" waitfor 300 test -e "$TT/r.$1.up"
        sed "s/^/#   R ($1): /" "$TT/r.$1"
        cg=$(sed -n 's/^0:://p' "$TT/r.$1"); pid=$(sed -n 's/^pid=//p' "$TT/r.$1"); unit=${cg##*/}
        check "($1) it runs in a scope of R's manager: user@$IR.service/app.slice/autogroup-run-<pid>.scope" \
                sh -c "echo '$cg' | grep -qE '^/user.slice/user-$IR.slice/user@$IR.service/app.slice/autogroup-run-[0-9]+[.]scope\$'"
        check_eq "($1) the scope is named after the command's own pid (run became the command)" \
                "autogroup-run-$pid.scope" "$unit"
        check "($1) --verbose named the scope" grep -qF "autogroup run: $cg (" "$TT/r.$1"
        check_eq "($1) the user manager: $unit active, in app.slice" "active app.slice" \
                "$(rprop "$unit" ActiveState) $(rprop "$unit" Slice)"
        check_eq "($1) CPUWeight=$2" "$2" "$(rprop "$unit" CPUWeight)"
        check_eq "($1) cpu.weight $3" "$3" "$(cat "$CG2$cg/cpu.weight" 2>/dev/null)"
        check_eq "($1) the command runs $4" "$4" "$(sed -n 's/.*scheduling policy: //p' "$TT/r.$1")"
        touch "$TT/r.$1.go"
}
check "R logged in" waitfor 300 grep -q '^agm=' "$T/r.out"
check_eq "R's login exported AUTOGROUP_MODE=systemd and AUTOGROUP_INTERACTIVE=2" "agm=systemd agi=2" "$(sed -n 1p "$T/r.out")"
rcase audio 1000 1000 SCHED_OTHER
# the class's slice: 0.1 ms where the kernel has custom slices (6.12+), else the note says so
check "(audio) the task's slice is the class's (0.1 ms), or the kernel has none and run said so" \
        sh -c "grep -q ' policy=0 nice=0 runtime=100000\$' '$TT/r.audio' || grep -q 'note: latency class audio: the kernel has no custom slices' '$TT/r.audio'"
rcase batch 100 100 SCHED_BATCH
# level 0: CPUWeight=100 (the default weight, set so that the scope is a group of its own)
rcase level0 100 100 SCHED_OTHER
check "R's commands and sets are done" waitfor 120 grep -q '^finished' "$T/r.out"
sed 's/^/#   R: /' "$T/r.out"
rv() { sed -n "s/^$1=//p" "$T/r.out" | head -n1; }
check_eq "run passes each command's exit status on" "0 0 0 7 127" "$(rv audio_rc) $(rv batch_rc) $(rv level0_rc) $(rv exit_rc) $(rv missing_rc)"
check "set --latency batch PID: exit 0, SCHED_BATCH, says it set the class only" \
        sh -c "grep -q '^set=\[.*autogroup set: latency class batch on process [0-9]* (systemd mode: the class only, the process stays in its scope)|\] rc=0 policy=SCHED_BATCH\$' '$T/r.out'"
check_eq "set moved nothing: the process stays in R's session scope" \
        "$(sed -n 's/^set_cg=.* login_cg=//p' "$T/r.out")" "$(sed -n 's/^set_cg=\([^ ]*\) .*/\1/p' "$T/r.out")"
check_eq "set --weight, set on PID 1, set on a leaf name: refused (1 1 2)" "1 1 2" "$(rv setw_rc) $(rv set1_rc) $(rv setleaf_rc)"
wait "$PR"; check_eq "R's ssh client exits 0" 0 "$?"
check "no process of R left" waitfor 120 sh -c "! pgrep -u $UR"
check "no autogroup-run scope left anywhere" waitfor 120 sh -c "[ -z \"\$(find $CG2 -name 'autogroup-run-*' 2>/dev/null)\" ]"
check "user-$IR.slice gone" waitfor 120 test ! -e "$CG2/user.slice/user-$IR.slice"

echo "# 8. pam_autogroup before pam_systemd: the slice gets its policy, the scope its weight through pam_systemd"
cp "$T/sshd.orig" /etc/pam.d/sshd
sed -i 's|^@include common-session$|session optional pam_autogroup.so debug\n&|' /etc/pam.d/sshd
out=$("${SSH[@]}" "$UC@127.0.0.1" 'cat /sys/fs/cgroup/user.slice/user-$(id -u).slice/cpu.idle; cut -d: -f3 /proc/self/cgroup; systemctl show "session-$XDG_SESSION_ID.scope" -p CPUWeight --value' 2>&1)
echo "$out" | sed 's/^/#   C: /'
check_eq "idle yes -> user-$IC.slice cpu.idle 1" 1 "$(echo "$out" | head -n1)"
check_eq "CPUWeight=idle" idle "$(slice_prop "$IC" CPUWeight)"
check "C's login still in its session scope" sh -c "echo '$out' | grep -q '^/user.slice/user-$IC.slice/session-[0-9]*.scope\$'"
check_eq "  its session scope CPUWeight=100 (from pam_systemd)" 100 "$(echo "$out" | sed -n 3p)"
check "  the debug line says it went through pam_systemd" sh -c "journalctl -b -o cat | grep -q 'user-$IC.slice .*session scope CPUWeight=100 through pam_systemd'"
cp "$T/sshd.orig" /etc/pam.d/sshd

echo "# 9. logins nested in a logind session (runuser -l from root's ssh shell) stay in it; the module steps aside"
install -m 600 /root/.ssh/id_ed25519.pub /root/.ssh/authorized_keys
sed -i 's|^@include common-session$|&\nsession optional pam_autogroup.so debug|' /etc/pam.d/sshd
cp /etc/pam.d/runuser "$T/runuser.orig"
echo "session optional pam_autogroup.so debug" >>/etc/pam.d/runuser
out=$("${SSH[@]}" root@127.0.0.1 "cut -d: -f3 /proc/self/cgroup; runuser -l root -c 'cut -d: -f3 /proc/self/cgroup';
        runuser -l $UA -c 'cut -d: -f3 /proc/self/cgroup'" 2>&1)
echo "$out" | sed 's/^/#   root: /'
outer=$(echo "$out" | sed -n 1p)
check "root's ssh login is in a logind session scope" sh -c "echo '$outer' | grep -q '^/user.slice/user-0.slice/session-[0-9]*.scope\$'"
check_eq "runuser -l root from inside it stays in that scope" "$outer" "$(echo "$out" | sed -n 2p)"
check_eq "runuser -l to another user from inside it stays in that scope (logind keeps it)" "$outer" "$(echo "$out" | sed -n 3p)"
jlog_has() { jlog | grep -qF -- "$1"; }
check "the module steps aside for the nested login of root, one debug line" \
        waitfor 30 jlog_has "login of root from inside $outer: stays in its caller"
check "the module steps aside for the nested login of $UA, one debug line" \
        waitfor 30 jlog_has "login of $UA from inside $outer: stays in its caller"
cp "$T/runuser.orig" /etc/pam.d/runuser
cp "$T/sshd.orig" /etc/pam.d/sshd
rm -f /root/.ssh/authorized_keys

echo "# 10. a login that never reaches logind (pam_autogroup mode=systemd without pam_systemd)"
UH="${TAG}h"; useradd -M -N -s /bin/sh "$UH"; AG_USERS="$AG_USERS $UH"; IH=$(id -u "$UH")
mkdir -p "$T/nolgd"
printf 'session required pam_permit.so\nsession optional %s mode=systemd debug\n' "$MODULE" >"$T/nolgd/nolgd"
out=$(systemd-run --quiet --scope -- "$abs_top_builddir/tests/host/agdrv" --pam "$T/nolgd" nolgd "$UH" open \
        run-user "test -d /run/systemd/system.control/user-$IH.slice.d && echo props=set" close 2>&1)
echo "$out" | sed 's/^/#   H: /'
check "open and close succeed" sh -c "echo '$out' | grep -q '^open=PAM_SUCCESS' && echo '$out' | grep -q '^close=PAM_SUCCESS'"
check "open set user-$IH.slice's runtime properties" sh -c "echo '$out' | grep -q '^props=set'"
check "close removed them (no /run/systemd/system.control/user-$IH.slice.d)" test ! -e "/run/systemd/system.control/user-$IH.slice.d"
check "no user-$IH.slice cgroup left" test ! -e "$CG2/user.slice/user-$IH.slice"
check "the close says so" sh -c "journalctl -b -o cat | grep -q 'slice.s runtime properties and empty cgroup removed'"

echo "# 10b. a look-alike session-x.scope that a user made in its user manager's tree is no logind session"
UI="${TAG}i"; useradd -M -N -s /bin/sh "$UI"; AG_USERS="$AG_USERS $UI"; II=$(id -u "$UI")
systemctl is-active -q "user@$IA.service" && uman=up || { uman=started; systemctl start "user@$IA.service"; }
FAKE="/user.slice/user-$IA.slice/user@$IA.service/app.slice/session-x.scope"
runuser -u "$UA" -- mkdir -p "$CG2$FAKE"
check "$UA made $FAKE, its own" sh -c "[ \"\$(stat -c %u '$CG2$FAKE')\" = $IA ]"
# the caller (root, as sudo/su/runuser would be) runs from inside it; the login is of another user
out=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --pam "$3" nolgd "$4" open run-user \
        "cut -d: -f3 /proc/self/cgroup; test -d /run/systemd/system.control/user-$5.slice.d && echo props=set" close' \
        sh "$CG2$FAKE" "$abs_top_builddir/tests/host/agdrv" "$T/nolgd" "$UI" "$II" 2>&1)
echo "$out" | sed 's/^/#   I: /'
check "the login ran from inside $FAKE" sh -c "echo '$out' | grep -qx '$FAKE'"
check "the module does not step aside: user-$II.slice's runtime properties set" sh -c "echo '$out' | grep -q '^props=set'"
check_not "no 'stays in its caller' line for $UI" jlog_has "login of $UI from inside $FAKE: stays in its caller"
check "the debug line says why: not a session scope of logind's" \
        waitfor 30 jlog_has "login of $UI from inside $FAKE: not a session scope of logind's"
runuser -u "$UA" -- rmdir "$CG2$FAKE"
[ "$uman" = started ] && systemctl stop "user@$IA.service"

echo "# 11. tools/demo: the systemd mode through real logind sessions"
demo_check systemd yes

echo "# 11b. systemd keeps what the administrator set: only what a rule sets is written, and taken back"
CTL=/run/systemd/system.control
UJ="${TAG}j"; UK="${TAG}k"
for u in "$UJ" "$UK"; do
        useradd -m -s /bin/bash "$u"; AG_USERS="$AG_USERS $u"
        install -d -m 700 -o "$u" -g "$u" "/home/$u/.ssh"
        install -m 600 -o "$u" -g "$u" /root/.ssh/id_ed25519.pub "/home/$u/.ssh/authorized_keys"
done
IJ=$(id -u "$UJ"); IK=$(id -u "$UK")
sed -i 's|^@include common-session$|&\nsession optional pam_autogroup.so debug|' /etc/pam.d/sshd
conf() { printf '%s\n' "$@" >/etc/security/autogroup.conf; }
conf "# shipped: no rule"
hold() { # hold USER NAME: an ssh login of USER until $TT/NAME.stop exists
        rm -f "$TT/$2.stop"
        "${SSH[@]}" "$1@127.0.0.1" "echo in; while [ ! -e $TT/$2.stop ]; do sleep 0.5; done; echo out" >"$T/$2.out" 2>&1 &
        track_pid $!; eval "P_$2=$!"
        waitfor 300 grep -q '^in' "$T/$2.out"
}
release() { for n in "$@"; do touch "$TT/$n.stop"; wait "$(eval echo "\$P_$n")"; done; }
# the user's slice stopped: without waiting UserStopDelaySec for the user manager
gone() {
        loginctl terminate-user "$(id -un "$1")" 2>/dev/null
        waitfor 120 sh -c "[ \"\$(systemctl show user-$1.slice -p ActiveState --value)\" = inactive ]"
}
T11B=$(date +%s)
cg() { cat "$CG2/user.slice/user-$1.slice/$2" 2>/dev/null; }

# runtime set-property with no rule: kept through two concurrent logins, nothing written
systemctl set-property --runtime "user-$IJ.slice" CPUQuota=30%
check "J logs in (login 1)" hold "$UJ" j1
check "J logs in again, concurrently (login 2)" hold "$UJ" j2
check_eq "runtime set-property CPUQuota=30% kept (cpu.max)" "30000 100000" "$(cg "$IJ" cpu.max)"
check_eq "CPUWeight untouched (cpu.weight 100)" 100 "$(cg "$IJ" cpu.weight)"
check "no 50-CPUWeight.conf written for J (no rule)" test ! -e "$CTL/user-$IJ.slice.d/50-CPUWeight.conf"
check_eq "50-CPUQuota.conf is still the administrator's" "CPUQuota=30%" "$(grep '^CPUQuota' "$CTL/user-$IJ.slice.d/50-CPUQuota.conf")"
check "no record of J's drop-ins as the module's" test ! -e "/run/autogroup/systemd/user-$IJ.slice"
release j1 j2; check "J logged out" gone "$IJ"
systemctl revert "user-$IJ.slice" >/dev/null 2>&1

# persistent set-property and a per-user drop-in, two concurrent logins; then rules that conflict
systemctl set-property "user-$IJ.slice" CPUQuota=40%
mkdir -p "/etc/systemd/system/user-$IJ.slice.d"
printf '[Slice]\nCPUWeight=300\n' >"/etc/systemd/system/user-$IJ.slice.d/50-admin.conf"
systemctl daemon-reload
check "J logs in (login 1)" hold "$UJ" j1
check "J logs in again, concurrently (login 2)" hold "$UJ" j2
check_eq "persistent CPUQuota=40% kept live after two logins" "40000 100000" "$(cg "$IJ" cpu.max)"
check_eq "user-$IJ.slice.d/50-admin.conf CPUWeight=300 kept live after two logins" 300 "$(cg "$IJ" cpu.weight)"
conf "$UJ weight 500" "$UJ max 90%"
check "J logs in a third time, now with rules for weight and max" hold "$UJ" j3
check_eq "systemd's settings win over the rules: cpu.max" "40000 100000" "$(cg "$IJ" cpu.max)"
check_eq "systemd's settings win over the rules: cpu.weight" 300 "$(cg "$IJ" cpu.weight)"
check_eq "no runtime drop-in of the module for J" "" "$(ls "$CTL/user-$IJ.slice.d" 2>/dev/null)"
ex=$("$HELPER" explain "$UJ" 2>&1); echo "$ex" | sed 's/^/#   explain J: /'
check "explain J: live values from systemd" sh -c "echo \"\$1\" | grep -q '^user-$IJ.slice now (from systemd, active): CPUWeight=300 CPUQuota=40%'" _ "$ex"
check "explain J: the weight conflict names 50-admin.conf" sh -c "echo \"\$1\" | grep -q '^  CPUWeight: rule .* wants 500; CONFLICT: systemd.s /etc/systemd/system/user-$IJ.slice.d/50-admin.conf sets CPUWeight=300'" _ "$ex"
check "explain J: the cap conflict names the persistent set-property" sh -c "echo \"\$1\" | grep -q '^  CPUQuota: rule .* wants 90%; CONFLICT: systemd.s /etc/systemd/system.control/user-$IJ.slice.d/50-CPUQuota.conf sets CPUQuota=40%'" _ "$ex"
ck=$("$HELPER" check 2>&1); echo "$ck" | grep -F "user-$IJ.slice" | sed 's/^/#   check: /'
check "check lists J's slice with the live values" sh -c "echo \"\$1\" | grep -q '^  user-$IJ.slice ($UJ): CPUWeight=300 CPUQuota=40%'" _ "$ck"
check "check names the cap conflict" sh -c "echo \"\$1\" | grep -q '^    CONFLICT CPUQuota: rule .*, but systemd.s /etc/systemd/system.control/user-$IJ.slice.d/50-CPUQuota.conf sets CPUQuota=40%, which wins'" _ "$ck"
release j1 j2 j3; check "J logged out" gone "$IJ"
systemctl revert "user-$IJ.slice" >/dev/null 2>&1; rm -rf "/etc/systemd/system/user-$IJ.slice.d"
systemctl daemon-reload

# a rule's drop-in outlives the logout; gc removes it once the slice is not running
conf "$UJ weight 250"
check "J logs in (weight rule)" hold "$UJ" j4
check_eq "cpu.weight 250" 250 "$(cg "$IJ" cpu.weight)"
release j4; check "J logged out" gone "$IJ"
check "the module's drop-in is still there after the logout" test -e "$CTL/user-$IJ.slice.d/50-CPUWeight.conf"
gco=$("$HELPER" gc 2>&1); echo "$gco" | sed 's/^/#   gc: /'
check "gc says it removed J's runtime properties" sh -c "echo \"\$1\" | grep -q 'removed the runtime properties pam_autogroup set on user-$IJ.slice (not running)'" _ "$gco"
check "gc removed J's drop-in directory and record" sh -c "[ ! -e '$CTL/user-$IJ.slice.d' ] && [ ! -e /run/autogroup/systemd/user-$IJ.slice ]"
conf "# no rule"

# a site-wide cap for every user (user-.slice.d/20-cap.conf)
mkdir -p /etc/systemd/system/user-.slice.d
printf '[Slice]\nCPUQuota=50%%\n' >/etc/systemd/system/user-.slice.d/20-cap.conf
systemctl daemon-reload
conf "$UK weight 300"
check "K logs in (weight rule only)" hold "$UK" k1
check_eq "the site-wide cap applies to K (cpu.max)" "50000 100000" "$(cg "$IK" cpu.max)"
check_eq "K's weight rule applies (cpu.weight 300)" 300 "$(cg "$IK" cpu.weight)"
check_eq "only 50-CPUWeight.conf written for K" 50-CPUWeight.conf "$(ls "$CTL/user-$IK.slice.d" 2>/dev/null)"
conf "$UK weight 300" "$UK max 200%"
check "K logs in again, a max rule now (login 2)" hold "$UK" k2
check_eq "the site-wide cap wins over K's max rule" "50000 100000" "$(cg "$IK" cpu.max)"
check "the debug line says the site-wide setting was kept" sh -c "journalctl -b -o cat | grep -q 'user-$IK.slice CPUWeight=300 (runtime), CPUQuota=50% from /etc/systemd/system/user-.slice.d/20-cap.conf kept'"
check "explain K names the conflict" sh -c "'$HELPER' explain '$UK' | grep -q '^  CPUQuota: rule .* wants 200%; CONFLICT: systemd.s /etc/systemd/system/user-.slice.d/20-cap.conf sets CPUQuota=50%'"
# the rule removed: the module's drop-in goes and the live value with it, at the next (concurrent) login
conf "# no rule"
check "K logs in a third time, no rule now (login 3)" hold "$UK" k3
check "the module's 50-CPUWeight.conf is gone" test ! -e "$CTL/user-$IK.slice.d/50-CPUWeight.conf"
check_eq "K's live weight is systemd's default again (cpu.weight 100)" 100 "$(cg "$IK" cpu.weight)"
check "no record left for K" test ! -e "/run/autogroup/systemd/user-$IK.slice"
# the module wrote the weight, then the administrator set it at runtime: theirs from then on
conf "$UK weight 300"
check "K logs in (login 4), weight rule back" hold "$UK" k4
check_eq "cpu.weight 300 again" 300 "$(cg "$IK" cpu.weight)"
systemctl set-property --runtime "user-$IK.slice" CPUWeight=700
check "K logs in (login 5)" hold "$UK" k5
check_eq "the administrator's runtime CPUWeight=700 is not overwritten" 700 "$(cg "$IK" cpu.weight)"
check_eq "its drop-in is the administrator's" "CPUWeight=700" "$(grep '^CPUWeight' "$CTL/user-$IK.slice.d/50-CPUWeight.conf")"
release k1 k2 k3 k4 k5; check "K logged out" gone "$IK"
systemctl revert "user-$IK.slice" >/dev/null 2>&1
rm -rf /etc/systemd/system/user-.slice.d; systemctl daemon-reload
check_eq "no runtime drop-ins left for J or K" "" "$(ls -d "$CTL/user-$IJ.slice.d" "$CTL/user-$IK.slice.d" 2>/dev/null)"
cp "$T/sshd.orig" /etc/pam.d/sshd
echo "#   11b took $(( $(date +%s) - T11B )) s"

echo "# 11c. README's behaviour table, column systemd: the default line (after pam_systemd), no rule"
sed -i 's|^@include common-session$|&\nsession optional pam_autogroup.so|' /etc/pam.d/sshd
conf "# shipped: no rule"
COLUMN=systemd
. "$abs_top_srcdir/tests/systemd/guest-behaviour.sh"
bg_all
cp "$T/sshd.orig" /etc/pam.d/sshd

echo "# 12. the other tests of make check on this systemd + cgroup v2 host: which run, which skip and why"
host_lanes
finish
