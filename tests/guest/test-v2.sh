#!/bin/bash
# shellcheck disable=SC2154  # PID_<name> are set with eval by bg/login/spin
# Runs INSIDE the guest that tests/vm/test-guest.sh boots: a pure cgroup2
# hierarchy at /sys/fs/cgroup with the cpu controller enabled at the root, the
# host's root filesystem (and so the host-built module, agdrv and lib.sh)
# read-only under a tmpfs overlay. Users made here vanish at power-off; the
# test removes them anyway.
#
# The module through real libpam (agdrv --pam, a service file in a temp dir,
# root=agtest-$$): per-user and per-session groups with cpu.weight and
# cpu.max from the policy, the login/ leaf, delegation to the user and its
# limits (attacked as the user), cleanup at close, lingering sessions, many
# concurrent logins, and a short CPU-share check (8 spinners against 1).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_guest_v2

test_root agtest "$CG2"
start_syslog || true
echo "# kernel $(uname -r), $(nproc) cpu(s), root cgroup.subtree_control: $(cat $CG2/cgroup.subtree_control)"
check "cpu enabled for the children of the root cgroup" grep -qw cpu "$CG2/cgroup.subtree_control"

new_user a; new_user b; new_user c

CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
# guest test policy
*               weight   100
$UB             weight   400
$UB             max      150%
CONF
chmod 644 "$CONF"
pam_other
pam_service agtest "root=$ROOT conf=$CONF debug delegate=yes"
SVC=agtest                      # drv and bg (lib.sh)
# section TITLE: a header with the guest's uptime, to see where the time goes
section() { echo "# $* (uptime $(cut -d' ' -f1 /proc/uptime) s)"; }
procs() { tr '\n' ' ' <"$1/cgroup.procs" | sed 's/ $//'; }

section "1. sessions on cgroup v2: user group, session group, login/ leaf"
bg a1 "$UA" spawn-user "sleep 300 & echo \$! > $U/a1.sleep; wait"
bg a2 "$UA"
bg b1 "$UB"
wait_for "$U/a1.sleep" '^[0-9]+$'
S1=$(val AUTOGROUP_SESSION a1); S2=$(val AUTOGROUP_SESSION a2); SB=$(val AUTOGROUP_SESSION b1)
SLEEPER=$(cat "$U/a1.sleep" 2>/dev/null); track_pid "$SLEEPER"
check_eq "all three sessions opened" "" "$(grep -L '^open=PAM_SUCCESS' "$T/a1.out" "$T/a2.out" "$T/b1.out")"
check "two sessions of one user are distinct" test -n "$S1" -a "$S1" != "$S2"
check_eq "both under one user group <root>/user-<uid>" "/$ROOT/user-$IA /$ROOT/user-$IA" "$(dirname "$S1") $(dirname "$S2")"
check_eq "the caller moved into login/" "$S1/login" "$(val cgroup a1)"
check_eq "/proc/PID/cgroup of the user's child is the v2 login/ leaf" "0::$S1/login" "$(cat "/proc/$SLEEPER/cgroup" 2>/dev/null)"
check_eq "the session itself holds no processes" "" "$(procs "$CG2$S1")"
check_eq "the user group holds no processes" "" "$(procs "$CG/user-$IA")"
check "login/ holds the caller and its child" grep -qx "$SLEEPER" "$CG2$S1/login/cgroup.procs"
check "cpu enabled in <root> cgroup.subtree_control" grep -qw cpu "$CG/cgroup.subtree_control"
check "cpu enabled in user-<uid> cgroup.subtree_control" grep -qw cpu "$CG/user-$IA/cgroup.subtree_control"
check "cpu enabled in the session's cgroup.subtree_control" grep -qw cpu "$CG2$S1/cgroup.subtree_control"
check "login/ has the cpu controller" test -f "$CG2$S1/login/cpu.weight"

section "2. policy: cpu.weight and cpu.max"
check_eq "weight 400 -> user group cpu.weight 400" 400 "$(cat "$CG/user-$IB/cpu.weight")"
check_eq "max 150% -> user group cpu.max" "150000 100000" "$(cat "$CG/user-$IB/cpu.max")"
check_eq "default -> user group cpu.weight 100" 100 "$(cat "$CG/user-$IA/cpu.weight")"
check_eq "default -> user group cpu.max unlimited" "max 100000" "$(cat "$CG/user-$IA/cpu.max")"
check_eq "session cpu.weight 100" 100 "$(cat "$CG2$SB/cpu.weight")"
check_eq "session cpu.max unlimited" "max 100000" "$(cat "$CG2$SB/cpu.max")"

section "3. delegation: what the user owns and what stays root's"
check_eq "session dir owned by the user" "$UA" "$(owner "$CG2$S1")"
for f in cgroup.procs cgroup.threads cgroup.subtree_control; do
        check_eq "session $f owned by the user" "$UA" "$(owner "$CG2$S1/$f")"
done
for f in cpu.weight cpu.max cgroup.max.descendants; do
        check_eq "session $f stays root's" root "$(owner "$CG2$S1/$f")"
done
check_eq "login/ owned by the user" "$UA" "$(owner "$CG2$S1/login")"
check_eq "user group owned by root" root "$(owner "$CG/user-$IA")"
check_eq "user group cgroup.procs owned by root" root "$(owner "$CG/user-$IA/cgroup.procs")"
check_eq "<root> owned by root" root "$(owner "$CG")"

section "4. as the user: leaves and moves inside the own session"
check "user can mkdir a leaf in the session" as_user "$UA" "mkdir $CG2$S1/tab1"
check "the leaf has the cpu controller" test -f "$CG2$S1/tab1/cpu.weight"
check "user can move an own process from login/ to the leaf" as_user "$UA" "echo $SLEEPER > $CG2$S1/tab1/cgroup.procs"
check_eq "the process is in the leaf" "0::$S1/tab1" "$(cat "/proc/$SLEEPER/cgroup")"
check "user can move it back to login/" as_user "$UA" "echo $SLEEPER > $CG2$S1/login/cgroup.procs"
check_eq "the process is back in login/" "0::$S1/login" "$(cat "/proc/$SLEEPER/cgroup")"
# a process of the session moving itself, the way the helper does
drv "$UA" open env run-user "S=\$(sed -n 's/^0:://p' /proc/self/cgroup); S=\${S%/login}; mkdir $CG2\$S/tab2 &&
        echo \$\$ > $CG2\$S/tab2/cgroup.procs && grep -q '^0::.*/tab2\$' /proc/self/cgroup &&
        echo \$\$ > $CG2\$S/login/cgroup.procs && grep -q '^0::.*/login\$' /proc/self/cgroup && touch $U/selfmove" \
        close >"$T/self.out" 2>&1
check "a session process moves itself login/ -> leaf -> login/" test -f "$U/selfmove"
check "that session (with its leaf) is gone after close" test ! -e "$CG2$(val AUTOGROUP_SESSION self)"

section "5. security rules 1 and 2 on v2, attacked as the user"
attack "user cannot write own session cpu.weight" "echo 10000 > $CG2$S1/cpu.weight"
attack "user cannot write own session cpu.max" "echo max > $CG2$S1/cpu.max"
attack "user cannot write own user group cpu.weight" "echo 10000 > $CG/user-$IA/cpu.weight"
attack "user cannot write own user group cpu.max" "echo max > $CG/user-$IA/cpu.max"
attack "user cannot chmod own session cpu.weight" "chmod 666 $CG2$S1/cpu.weight"
attack "user cannot raise own cgroup.max.descendants" "echo max > $CG2$S1/cgroup.max.descendants"
attack "user cannot move a session process into user-<uid>" "echo $SLEEPER > $CG/user-$IA/cgroup.procs"
attack "user cannot move a session process into <root>" "echo $SLEEPER > $CG/cgroup.procs"
attack "user cannot move a session process to the root cgroup" "echo $SLEEPER > $CG2/cgroup.procs"
attack "user cannot move a session process into another user's session" "echo $SLEEPER > $CG2$SB/login/cgroup.procs"
attack "user cannot move an outside process into the own session" "echo \$\$ > $CG2$S1/login/cgroup.procs"
attack "user cannot make groups in another user's session" "mkdir $CG2$SB/x"
attack "user cannot make groups in the user group" "mkdir $CG/user-$IA/x"
run_attacks "$UA"
attack "user B cannot lift own cap" "echo max > $CG/user-$IB/cpu.max"
attack "user B cannot raise own weight" "echo 10000 > $CG/user-$IB/cpu.weight"
run_attacks "$UB"
check_eq "after the attacks the process is still in login/" "0::$S1/login" "$(cat "/proc/$SLEEPER/cgroup")"
check_eq "and the weights are unchanged" "100 400" "$(cat "$CG/user-$IA/cpu.weight") $(cat "$CG/user-$IB/cpu.weight")"

section "6. cleanup at close"
kill "$SLEEPER" 2>/dev/null
touch "$T/a1.go"; wait "$PID_a1" 2>/dev/null
check "closed session removed (with its leaf)" test ! -e "$CG2$S1"
check "user group stays while another session lives" test -d "$CG/user-$IA"
check_eq "caller moved back out at close" "/" "$(sed -n 's/^cgroup=//p' "$T/a1.out" | tail -n1)"
touch "$T/a2.go" "$T/b1.go"; wait "$PID_a2" "$PID_b1" 2>/dev/null
check "last close removed the session" test ! -e "$CG2$S2"
check "last close removed the user group" test ! -e "$CG/user-$IA"
check "user B's groups removed" test ! -e "$CG/user-$IB"
check_eq "every close returned PAM_SUCCESS" "" "$(grep -L '^close=PAM_SUCCESS' "$T/a1.out" "$T/a2.out" "$T/b1.out")"

section "7. a lingering process keeps its session while it lives; the watcher close started removes it after"
drv "$UA" open env spawn-user "sleep 300 & echo \$! > $U/linger.pid; wait" close >"$T/l.out" 2>&1
wait_for "$U/linger.pid" '^[0-9]+$'
LP=$(cat "$U/linger.pid"); track_pid "$LP"
SL=$(val AUTOGROUP_SESSION l)
check "session with a lingering process stays" test -d "$CG2$SL/login"
check "the lingering process is still in it" grep -qx "$LP" "$CG2$SL/login/cgroup.procs"
log_has "leftover session is logged" "still holds processes"
kill "$LP"; for _ in $(seq 100); do [ -z "$(procs "$CG2$SL/login" 2>/dev/null)" ] && break; sleep 0.05; done
# within 5 s of the last process, without another login
for _ in $(seq 50); do [ -e "$CG2$SL" ] || break; sleep 0.1; done
check "the emptied session is removed without another open/close" test ! -e "$CG2$SL"
check "and the user group" test ! -e "$CG/user-$IA"
drv "$UA" open close >/dev/null 2>&1
check "a later open/close of the user leaves nothing" test ! -e "$CG/user-$IA"

section "8. 20 concurrent logins of one user leave nothing behind"
PAR=""
for i in $(seq 20); do drv "$UA" open cgroup close >"$T/par$i.out" 2>&1 & PAR="$PAR $!"; done
wait $PAR
n_ok=$(grep -l '^open=PAM_SUCCESS' "$T"/par*.out | wc -l)
n_in=$(grep -l "^cgroup=/$ROOT/user-$IA/.*/login\$" "$T"/par*.out | wc -l)
n_cl=$(grep -l '^close=PAM_SUCCESS' "$T"/par*.out | wc -l)
check_eq "all 20 opens succeeded" 20 "$n_ok"
check_eq "all 20 callers were in their login/ leaf" 20 "$n_in"
check_eq "all 20 closes succeeded" 20 "$n_cl"
check_eq "no group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

section "9. CPU share: user A's session runs 8 spinners, user C's session 1"
# All spinners are pinned to CPU 0: the share then depends on the group
# weights alone, not on how the load balancer spreads 9 tasks over the
# (emulated, unevenly scheduled) CPUs, and the other CPU stays free for the
# test's own commands. Ideal for C: half of CPU 0; flat: 1/9.
SPIN="taskset -c 0 sh -c 'while :; do :; done'"
# usage CGROUP: its usage_usec; ticks PIDFILE: utime+stime of the pids listed.
# Shell builtins only: every exec is slow under emulation while 9 spinners run.
usage() { local k v; while read -r k v; do [ "$k" = usage_usec ] && { echo "$v"; return; }; done <"$1/cpu.stat"; echo 0; }
ticks() {
        local s=0 p f
        while read -r p; do
                read -r -a f <"/proc/$p/stat" || continue
                s=$((s + f[13] + f[14]))
        done <"$1"
        echo "$s"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + b > 0) printf "%d", 100 * b / (a + b); else print -1 }'; }
SPIN_S=${AG_SPIN_S:-3}
spin() { # spin NAME USER COUNT: a session of USER running COUNT spinners
        "$AGDRV" --pam "$T" agtest "$2" open env cgroup \
                spawn-user "for i in \$(seq $3); do $SPIN & echo \$! >> $U/$1.pids; done; wait" \
                wait-file "$T/$1.go" close >"$T/$1.out" 2>&1 &
        track_pid $!
        eval "PID_$1=$!"
        wait_for "$T/$1.out" '^cgroup='
}
spin sa "$UA" 8
spin sc "$UC" 1
SA=$(val AUTOGROUP_SESSION sa); SC=$(val AUTOGROUP_SESSION sc)
for _ in $(seq 100); do [ "$(wc -l <"$U/sa.pids" 2>/dev/null)" = 8 ] && [ -s "$U/sc.pids" ] && break; sleep 0.05; done
sleep 0.5
a0=$(usage "$CG2$SA"); c0=$(usage "$CG2$SC")
sleep "$SPIN_S"
a1=$(usage "$CG2$SA"); c1=$(usage "$CG2$SC")
pkill -KILL -u "$UA"; pkill -KILL -u "$UC"
SHARE=$(pct $((a1 - a0)) $((c1 - c0)))
echo "# with the module: A used $(((a1 - a0) / 1000)) ms, C used $(((c1 - c0) / 1000)) ms in ${SPIN_S} s: C's share of CPU 0 $SHARE% (ideal 50%)"
check "the single spinner's share is within 35-65% (got $SHARE%)" test "$SHARE" -ge 35 -a "$SHARE" -le 65
touch "$T/sa.go" "$T/sc.go"; wait "$PID_sa" "$PID_sc" 2>/dev/null
check "both spinner sessions removed at close" test ! -e "$CG2$SA" -a ! -e "$CG2$SC"
# for contrast, without the module: the same spinners, both users in one group
rm -f "$U"/sa.pids "$U"/sc.pids
as_user "$UA" "for i in \$(seq 8); do $SPIN & echo \$! >> $U/sa.pids; done"
as_user "$UC" "$SPIN & echo \$! >> $U/sc.pids"
for p in $(cat "$U"/sa.pids "$U"/sc.pids); do track_pid "$p"; done
sleep 0.5
a0=$(ticks "$U/sa.pids"); c0=$(ticks "$U/sc.pids")
sleep "$SPIN_S"
a1=$(ticks "$U/sa.pids"); c1=$(ticks "$U/sc.pids")
pkill -KILL -u "$UA"; pkill -KILL -u "$UC"
echo "# without the module (one group, not asserted): C's share $(pct $((a1 - a0)) $((c1 - c0)))% (a flat 9-way split gives 11%)"

finish
