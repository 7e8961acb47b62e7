#!/bin/bash
# Host tests of pools on the real cgroup v1 cpu hierarchy, through
# real libpam (tests/host/agdrv): <root>/pool-<name>/user-<uid>/<session>/login.
# Two pools with weights 300:100, two users in pool alpha and one in pool
# beta, one user in no pool: layout, cpu.shares of pool and user groups,
# ownership and modes, attacks as the unprivileged user, the helper (enter,
# status, explain, check, gc), a pool change between logins with a session
# lingering in the old pool, and cleanup.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
require_v1_cpu

test_root agtest
AG="$HELPER --root $ROOT"
# syslog: a capture of our own in a private mount namespace (hardening-lib.sh)
hl_syslog_start || { not_ok "syslog capture started"; finish; }

add_group "${TAG}g"
new_user a "${TAG}g"
new_user b "${TAG}g"
new_user c
new_user x
new_user n "${TAG}g"
PA="$CG/pool-alpha"; PB="$CG/pool-beta"

# conf: alpha = @g (users a, b, n), beta = c, x in no pool
conf() { # conf FILE POOL-OF-A
        conf_file "$1" "# pools test policy" "* weight 100" "@${TAG}g pool alpha" "$UC pool beta" "$UA pool $2" \
                "$UB weight 200" "$UN sessions no" "pool:alpha weight 300" "pool:beta weight 100" "pool:beta max 150%"
}
conf "$T/c1.conf" alpha
conf "$T/c2.conf" beta
conf "$T/c3.conf" none
pam_other
for i in 1 2 3; do
        pam_service agp$i "root=$ROOT conf=$T/c$i.conf debug"
done
DRV_WRAP=(nsrun 'exec "$@"')    # drv (lib.sh): agdrv in the syslog namespace
BG_SVC=agp1                     # bg's sessions: pool member service agp1
mode() { stat -c %a "$1" 2>/dev/null; }

echo "# 1. layout: <root>/pool-<name>/user-<uid>/<session>/login"
bg a1 "$UA" spawn-user "setsid sh -c 'echo \$\$ > $U/a1.sh; exec sleep 300' &"
bg b1 "$UB"
bg c1 "$UC"
bg x1 "$UX"
wait_for "$U/a1.sh" '^[0-9]+$'; SHA=$(cat "$U/a1.sh"); track_pid "$SHA"
SA=$(val AUTOGROUP_SESSION a1); SB=$(val AUTOGROUP_SESSION b1); SC=$(val AUTOGROUP_SESSION c1); SX=$(val AUTOGROUP_SESSION x1)
check_eq "all four sessions opened" "" "$(grep -L '^open=PAM_SUCCESS' "$T/a1.out" "$T/b1.out" "$T/c1.out" "$T/x1.out")"
check_eq "user a in pool alpha (by name)" "/$ROOT/pool-alpha/user-$IA" "$(dirname "$SA")"
check_eq "user b in pool alpha (by @group)" "/$ROOT/pool-alpha/user-$IB" "$(dirname "$SB")"
check_eq "user c in pool beta (by name)" "/$ROOT/pool-beta/user-$IC" "$(dirname "$SC")"
check_eq "user x in no pool stays at <root>/user-<uid>" "/$ROOT/user-$IX" "$(dirname "$SX")"
check_eq "the caller moved into login/" "$SA/login" "$(val cgroup a1)"
check_eq "the user's child is in login/ too" "$SA/login" "$(sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$SHA/cgroup")"
check_eq "<root> holds two pools and one user group" "pool-alpha pool-beta user-$IX" "$(cd "$CG" && ls -d pool-* user-* | tr '\n' ' ' | sed 's/ $//')"
hlog_has "debug line with the pool's limits" "pool alpha: weight 300, max -1 \\(none\\), idle no"

echo "# 2. cpu.shares of pool and user groups (weights 300:100), caps"
check_eq "pool alpha cpu.shares 3072" 3072 "$(cat "$PA/cpu.shares")"
check_eq "pool beta cpu.shares 1024" 1024 "$(cat "$PB/cpu.shares")"
check_eq "pool alpha no cap" -1 "$(cat "$PA/cpu.cfs_quota_us")"
check_eq "pool beta max 150% -> cfs_quota_us 150000" 150000 "$(cat "$PB/cpu.cfs_quota_us")"
check_eq "pool beta cfs_period_us 100000" 100000 "$(cat "$PB/cpu.cfs_period_us")"
check_eq "user a in alpha: cpu.shares 1024" 1024 "$(cat "$PA/user-$IA/cpu.shares")"
check_eq "user b in alpha: weight 200 -> cpu.shares 2048" 2048 "$(cat "$PA/user-$IB/cpu.shares")"
check_eq "user c in beta: cpu.shares 1024 (the pool's cap is not the user's)" "1024 -1" \
        "$(cat "$PB/user-$IC/cpu.shares") $(cat "$PB/user-$IC/cpu.cfs_quota_us")"
check_eq "user x outside pools: cpu.shares 1024" 1024 "$(cat "$CG/user-$IX/cpu.shares")"

echo "# 3. ownership and modes"
for p in "$PA" "$PB"; do
        n=$(basename "$p")
        check_eq "$n owned by root" root "$(owner "$p")"
        check_eq "$n mode 755" 755 "$(mode "$p")"
        for f in cgroup.procs tasks cpu.shares cpu.cfs_quota_us cpu.cfs_period_us cpu.idle; do
                [ -e "$p/$f" ] || continue
                check_eq "$n/$f owned by root" root "$(owner "$p/$f")"
        done
done
check_eq "user group in a pool owned by root" root "$(owner "$PA/user-$IA")"
check_eq "user group cgroup.procs owned by root" root "$(owner "$PA/user-$IA/cgroup.procs")"
check_eq "session in a pool owned by root" root "$(owner "$CPU$SA")"
check_eq "session cgroup.procs owned by root" root "$(owner "$CPU$SA/cgroup.procs")"
check_eq "session cpu.shares stays root's" root "$(owner "$CPU$SA/cpu.shares")"
check_eq "root's leaves in the session: the directory root's, cgroup.procs the user's" "root $UA" \
        "$(owner "$CPU$SA/leaf-1") $(owner "$CPU$SA/leaf-1/cgroup.procs")"

echo "# 4. attacks as the unprivileged user"
check_not "user cannot write the pool's cpu.shares" as_user "$UA" "echo 262144 > $PA/cpu.shares"
check_not "user cannot lift the pool's cap" as_user "$UC" "echo -1 > $PB/cpu.cfs_quota_us"
check_not "user cannot change the pool's period" as_user "$UC" "echo 1000000 > $PB/cpu.cfs_period_us"
check_not "user cannot write the pool's cpu.idle" as_user "$UA" "echo 1 > $PA/cpu.idle"
check_not "user cannot chmod the pool's cpu.shares" as_user "$UA" "chmod 666 $PA/cpu.shares"
check_not "user cannot write the other pool's cpu.shares" as_user "$UA" "echo 262144 > $PB/cpu.shares"
check_not "user cannot write the own user group's cpu.shares" as_user "$UA" "echo 262144 > $PA/user-$IA/cpu.shares"
check_not "user cannot move a process into the pool" as_user "$UA" "echo $SHA > $PA/cgroup.procs"
check_not "user cannot move a process into the pool (tasks)" as_user "$UA" "echo $SHA > $PA/tasks"
check_not "user cannot move a process into the own user group" as_user "$UA" "echo $SHA > $PA/user-$IA/cgroup.procs"
check_not "user cannot move into another user's session in the pool" as_user "$UA" "echo $SHA > $CPU$SB/login/cgroup.procs"
check_not "user cannot move into a session of the other pool" as_user "$UA" "echo $SHA > $CPU$SC/login/cgroup.procs"
check_not "user cannot move into <root>" as_user "$UA" "echo $SHA > $CG/cgroup.procs"
check_not "user cannot make groups in the pool" as_user "$UA" "mkdir $PA/user-$IA-x"
check_not "user cannot make a pool" as_user "$UA" "mkdir $CG/pool-mine"
check_not "user cannot rename the pool" as_user "$UA" "mv $PA $CG/pool-x"
check_not "user cannot rename the own user group into the other pool" as_user "$UA" "mv $PA/user-$IA $PB/user-$IA"
check_not "user cannot remove the pool" as_user "$UA" "rmdir $PA"
check_eq "after the attacks: the pools' shares unchanged" "3072 1024 150000" \
        "$(cat "$PA/cpu.shares") $(cat "$PB/cpu.shares") $(cat "$PB/cpu.cfs_quota_us")"
check_eq "and the shell still in login/" "$SA/login" "$(sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$SHA/cgroup")"
check_not "user cannot make a group in the own session in a pool" as_user "$UA" "mkdir $CPU$SA/tab1"
check "user can move the own process into one of root's leaves" as_user "$UA" "echo $SHA > $CPU$SA/leaf-6/cgroup.procs"
check_not "but not back into login/ (root's)" as_user "$UA" "echo $SHA > $CPU$SA/login/cgroup.procs"
echo "$SHA" >"$CPU$SA/login/cgroup.procs"      # root puts it back for what follows

if [ -x "$HELPER" ]; then
echo "# 5. the helper: enter, status, explain, check"
as_user "$UA" "$AG enter --pid $SHA" >"$T/enter.out" 2>&1; rc=$?
check_eq "enter in a pool session: exit 0, silent" "0 " "$rc $(cat "$T/enter.out")"
check_eq "enter moved the setsid shell into a leaf under the pool" "$SA/leaf-1" \
        "$(sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$SHA/cgroup")"
as_user "$UA" "$AG enter --pid $SHA --verbose" >"$T/enter2.out" 2>&1
check "enter again: already in its leaf" grep -q "already in its leaf" "$T/enter2.out"
# a look-alike tree the user cannot make: pool dirs are root's, checked by enter
$AG status >"$T/status.txt" 2>&1; rc=$?
check_eq "status as root: exit 0" 0 "$rc"
check "status shows pool-alpha" grep -qE '(├─|\|-|└─|`-)pool-alpha ' "$T/status.txt"
check "status shows pool-beta with its cap" grep -qE 'pool-beta +100 +1024 +150%' "$T/status.txt"
check "status shows pool-alpha's weight 300" grep -qE 'pool-alpha +300 +3072 ' "$T/status.txt"
check "status shows the user group below the pool" grep -qE "^(│|\\|) +(├─|\\|-|└─|\`-)user-$IA " "$T/status.txt"
$AG status --json >"$T/status.json" 2>&1
check "status --json is valid JSON" python3 -m json.tool "$T/status.json"
kinds=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
def walk(n, out):
    out.append(n["name"] + ":" + n["kind"])
    for c in n["children"]: walk(c, out)
out = []; walk(t, out); print(" ".join(out))
' "$T/status.json" 2>/dev/null)
check "status --json: pool-alpha is kind pool" sh -c "echo '$kinds' | grep -qw 'pool-alpha:pool'"
check "status --json: user group below a pool is kind user" sh -c "echo '$kinds' | grep -qw 'user-$IA:user'"
check "status --json: session below a pool is kind session" sh -c "echo '$kinds' | grep -qw '$(basename "$SA"):session'"
check "status --json: login below a pool is kind leaf" sh -c "echo '$kinds' | grep -qw 'login:leaf'"
as_user "$UA" "$AG status" >"$T/status-a.txt" 2>&1
# AUTOGROUP_SESSION below a pool: the helper finds root= without --root
( echo "$BASHPID" >"$CPU$SA/login/cgroup.procs" && as_user "$UA" "export AUTOGROUP_SESSION='$SA'; setsid sh -c '
        $HELPER enter --pid \$\$ >$U/ph.enter 2>&1; echo \$? >$U/ph.rc
        grep :cpu: /proc/\$\$/cgroup | cut -d: -f3 >$U/ph.cg
        $HELPER status >$U/ph.status 2>&1
        echo \$\$ >$U/ph.pid; exec sleep 600' &" )
wait_for "$U/ph.pid" '^[0-9]+$'; PPH=$(cat "$U/ph.pid"); track_pid "$PPH"
check_eq "hint below a pool: enter without --root gives the shell a leaf" "$SA/leaf-2" "$(cat "$U/ph.cg")"
check_eq "  exit 0, silent" "0:" "$(cat "$U/ph.rc"):$(cat "$U/ph.enter")"
check "  status without --root shows pool-alpha" grep -q 'pool-alpha' "$U/ph.status"
kill -KILL "$PPH" 2>/dev/null   # gone before the session closes, as a closed tab would be
for _ in $(seq 50); do [ -d "/proc/$PPH" ] || break; sleep 0.02; done
check "status as the user: own pool shown" grep -q "pool-alpha" "$T/status-a.txt"
check_not "status as the user: the other pool is not shown" grep -q "pool-beta" "$T/status-a.txt"
"$HELPER" explain --conf "$T/c1.conf" "$UA" >"$T/explain.out" 2>&1; rc=$?
check_eq "explain: exit 0" 0 "$rc"
check "explain: the pool and the line that set it" grep -qE "^pool +alpha +from $T/c1.conf:5 \\(rule text: $UA pool alpha\\)" "$T/explain.out"
check "explain: the pool's weight and its line" grep -qE "^  weight +300 +from $T/c1.conf:8 \\(rule text: pool:alpha weight 300\\)" "$T/explain.out"
check "explain: the pool's max from the default" grep -qE "^  max +none +default" "$T/explain.out"
check "explain: the place" grep -qx "place: <root>/pool-alpha/user-$IA (in systemd mode the pool is not applied)" "$T/explain.out"
check "explain: the pool group's values" grep -qx "pool-alpha cgroup v1: cpu.shares=3072 cpu.cfs_quota_us=-1 cpu.cfs_period_us=100000 cpu.idle=0" "$T/explain.out"
"$HELPER" explain --conf "$T/c1.conf" "$UC" >"$T/explain-c.out" 2>&1
check "explain: pool beta's max and its line" grep -qE "^  max +150% +from $T/c1.conf:10 " "$T/explain-c.out"
"$HELPER" explain --conf "$T/c3.conf" "$UA" >"$T/explain-n.out" 2>&1
check "explain: 'pool none' beats the group's pool" grep -qE "^pool +none +from $T/c3.conf:5 " "$T/explain-n.out"
check "explain: no pool, no pool section" sh -c "! grep -q '^pool none:' '$T/explain-n.out' && grep -qx 'place: <root>/user-$IA (no pool)' '$T/explain-n.out'"
"$HELPER" check "$T/c1.conf" >"$T/check.out" 2>&1
check "check: a pool config is clean" grep -q "OK, 9 rules" "$T/check.out"
BADC="$T/bad.conf"
printf '%s\n' "$UA pool Alpha" "pool:alpha sessions no" "pool:-x weight 3" "pool:alpha weight 300" >"$BADC"
chmod 644 "$BADC"
"$HELPER" check "$BADC" >"$T/check-bad.out" 2>&1; rc=$?
check_eq "check: malformed pool lines make it fail" 1 "$rc"
check "check: bad pool name with file:line" grep -q "^$BADC:1: invalid pool (expected a pool name or none)" "$T/check-bad.out"
check "check: a pool domain with sessions, file:line" grep -q "^$BADC:2: a pool:NAME domain takes only weight, max or idle" "$T/check-bad.out"
check "check: bad pool domain name, file:line" grep -q "^$BADC:3: invalid pool name" "$T/check-bad.out"
else
        skip "helper not built: enter, status, explain, check"
fi

echo "# 6. a bad pool line is logged with file:line; the login still works"
BADM="$T/badm.conf"
printf '%s\n' "$UX pool Bad-Name" "pool:x sessions no" "$UX weight 300" >"$BADM"; chmod 644 "$BADM"
pam_service agbad "root=$ROOT conf=$BADM"
drv agbad "$UX" open cgroup run-user "cat $CG/user-$IX/cpu.shares > $U/badm.shares" close >"$T/badm.out" 2>&1
check "session opened" grep -q '^open=PAM_SUCCESS' "$T/badm.out"
check "grouped in no pool" grep -q "^cgroup=/$ROOT/user-$IX/" "$T/badm.out"
check_eq "the valid line applies" 3072 "$(cat "$U/badm.shares" 2>/dev/null)"
hlog_has "bad pool name logged with file:line" "$BADM:1: invalid pool \\(expected a pool name or none\\), line skipped"
hlog_has "pool domain with sessions logged with file:line" "$BADM:2: a pool:NAME domain takes only weight, max or idle, line skipped"

echo "# 7. sessions no in a pool: the user group itself in the pool"
drv agp1 "$UN" open env cgroup close >"$T/n.out" 2>&1
check_eq "caller in <root>/pool-alpha/user-<uid>" "/$ROOT/pool-alpha/user-$IN" "$(val cgroup n)"
check_eq "AUTOGROUP_SESSION is that group" "/$ROOT/pool-alpha/user-$IN" "$(val AUTOGROUP_SESSION n)"
check "removed at close" test ! -e "$PA/user-$IN"

echo "# 8. close: a pool stays while a user lives in it, goes with the last"
touch "$T/b1.go"; wait "$PID_b1" 2>/dev/null
check "b's session and user group removed" test ! -e "$PA/user-$IB"
check "pool alpha stays (a's session lives)" test -d "$PA"
touch "$T/c1.go"; wait "$PID_c1" 2>/dev/null
check "the last close in pool beta removed the pool" test ! -e "$PB"
touch "$T/x1.go"; wait "$PID_x1" 2>/dev/null
check "the close of the user in no pool removed its user group" test ! -e "$CG/user-$IX"
hlog_has "removal of the pool reported" "removed /$ROOT/pool-beta\$"

echo "# 9. pool change between logins, a session lingering in the old pool"
kill "$SHA" 2>/dev/null
bg a2 "$UA" spawn-user "sleep 300 & echo \$! > $U/linger.pid; wait"
wait_for "$U/linger.pid" '^[0-9]+$'; LP=$(cat "$U/linger.pid"); track_pid "$LP"
SL=$(val AUTOGROUP_SESSION a2)
touch "$T/a1.go" "$T/a2.go"; wait "$PID_a1" "$PID_a2" 2>/dev/null
check "the lingering session stays in pool alpha" test -d "$CPU$SL/login"
# cpuacct on its own (this host): the session's mirror lingers with it (lib/cgroup/acct.c)
ACCT=/sys/fs/cgroup/cpuacct
HAVE_MIRROR=0
if [ -f "$ACCT/cpuacct.usage" ] && [ ! -e "$ACCT/cpu.shares" ] && [ ! -e "$CPU/cpuacct.usage" ]; then HAVE_MIRROR=1; fi
if [ "$HAVE_MIRROR" = 1 ]; then
        check "its cpuacct mirror lingers too, holding the process" grep -qx "$LP" "$ACCT$SL/cgroup.procs"
fi
drv agp2 "$UA" open env cgroup run-user "cat $PB/cpu.shares > $U/beta.shares" close >"$T/move.out" 2>&1
check "the next login in the new pool opened" grep -q '^open=PAM_SUCCESS' "$T/move.out"
check "it went to pool beta" grep -q "^cgroup=/$ROOT/pool-beta/user-$IA/.*/login\$" "$T/move.out"
check_eq "pool beta made again with its weight" 1024 "$(cat "$U/beta.shares" 2>/dev/null)"
check_eq "root moved the old session's process into the new pool (the user's shared group)" \
        "/$ROOT/pool-beta/user-$IA/shared" "$(sed -n 's/^[0-9]*:cpu://p' "/proc/$LP/cgroup")"
check "the old session is gone" test ! -e "$CPU$SL"
check "and the old pool (empty now)" test ! -e "$PA"
check "pool beta stays at that close (it holds the process)" test -d "$PB/user-$IA/shared"
kill "$LP"; for _ in $(seq 100); do [ -e "/proc/$LP" ] || break; sleep 0.05; done
drv agp2 "$UA" open cgroup close >"$T/move2.out" 2>&1
check "the next login swept the emptied shared group" test ! -e "$PB/user-$IA/shared"
check "nothing of a is left in any pool" test -z "$(find "$CG" -name "user-$IA")"
if [ "$HAVE_MIRROR" = 1 ]; then
        # checked here: the cleanup at exit removes every mirror of the test root
        check "the next login swept the old session's cpuacct mirror" test ! -e "$ACCT$SL"
        check "and the old pool's mirror" test ! -e "$ACCT/$ROOT/pool-alpha"
        check "nothing of a is left in the cpuacct hierarchy" test -z "$(find "$ACCT/$ROOT" -name "user-$IA")"
else
        skip "cpuacct not mounted on its own: no mirror to sweep"
fi
drv agp2 "$UA" open cgroup wait-file "$T/m3.go" close cgroup >"$T/move3.out" 2>&1 & M3=$!; track_pid "$M3"
wait_for "$T/move3.out" '^cgroup='
drv agp3 "$UA" open cgroup close >"$T/move4.out" 2>&1
check "with 'pool none' the user is back at <root>/user-<uid>" grep -q "^cgroup=/$ROOT/user-$IA/.*/login\$" "$T/move4.out"
check "the live session in pool beta is closed: its processes are under the user's policy now" \
        test -z "$(cat "$PB"/user-"$IA"/*/login/cgroup.procs 2>/dev/null)"
touch "$T/m3.go"; wait "$M3" 2>/dev/null
check_eq "its own close moved its caller back where it came from" "/" "$(sed -n 's/^cgroup=//p' "$T/move3.out" | tail -n1)"
check "its own close removed the pool" test ! -e "$PB"

if [ -x "$HELPER" ]; then
echo "# 10. gc visits pools"
mkdir -p "$CG/pool-gamma/user-$IC/s999" "$CG/pool-gamma/user-$IX" "$CG/pool-Bad/user-$IC/s1"
bg g1 "$UB"
SG=$(val AUTOGROUP_SESSION g1)
$AG gc >"$T/gc.out" 2>&1; rc=$?
check_eq "gc: exit 0" 0 "$rc"
check "gc removed the empty session in a pool no config names" grep -qx "removed /$ROOT/pool-gamma/user-$IC/s999" "$T/gc.out"
check "gc removed the empty user groups there" grep -qx "removed /$ROOT/pool-gamma/user-$IX" "$T/gc.out"
check "gc removed the empty pool" grep -qx "removed /$ROOT/pool-gamma" "$T/gc.out"
check "gc leaves a live session in a pool alone" test -d "$CPU$SG/login"
check "gc leaves its pool alone" test -d "$PA"
check "gc ignores a directory not named like a pool" test -d "$CG/pool-Bad/user-$IC/s1"
rmdir "$CG/pool-Bad/user-$IC/s1" "$CG/pool-Bad/user-$IC" "$CG/pool-Bad"
touch "$T/g1.go"; wait "$PID_g1" 2>/dev/null
fi

echo "# 11. concurrent logins into two pools leave nothing behind"
PAR=""
for i in $(seq 10); do
        for u in "$UA" "$UB" "$UC"; do drv agp1 "$u" open cgroup close >"$T/par-$u-$i.out" 2>&1 & PAR="$PAR $!"; done
done
wait $PAR
check_eq "all 30 opens succeeded" 30 "$(grep -l '^open=PAM_SUCCESS' "$T"/par-*.out | wc -l)"
check_eq "all 30 callers were in a login/ leaf below a pool" 30 "$(grep -l "^cgroup=/$ROOT/pool-\(alpha\|beta\)/user-[0-9]*/.*/login\$" "$T"/par-*.out | wc -l)"
check_eq "no pool or user group left behind" "" "$(ls "$CG" | grep -E '^(pool|user)-')"
check "host cpu hierarchy untouched" test -f "$CPU/cpu.shares"
finish
