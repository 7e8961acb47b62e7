#!/bin/bash
# Host tests of pam_autogroup.so through real libpam (pam_start_confdir) on the
# machine's real cgroup v1 cpu hierarchy, with a test root of its own.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu

test_root agtest
start_syslog || true

add_group "${TAG}g"
new_user a "${TAG}g"; new_user b; new_user c

CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
# test policy
*               weight   100
@${TAG}g        weight   50
$UB             weight   400
$UB             max      150%
$UC             sessions no
CONF
chmod 644 "$CONF"
pam_other
pam_service agtest "root=$ROOT conf=$CONF debug"
CONTROL=required pam_service agstrict "root=$ROOT conf=$CONF strict"
BG_SVC=agtest                   # bg (lib.sh)

echo "# 1. two concurrent sessions of one user, one user group"
bg a1 "$UA"
bg a2 "$UA"
S1=$(val AUTOGROUP_SESSION a1); S2=$(val AUTOGROUP_SESSION a2)
check "first session opened" grep -q '^open=PAM_SUCCESS' "$T/a1.out"
check "second session opened" grep -q '^open=PAM_SUCCESS' "$T/a2.out"
check "sessions are distinct" test -n "$S1" -a "$S1" != "$S2"
check_eq "both sessions under one user group" "$(dirname "$S1")" "$(dirname "$S2")"
check_eq "user group is <root>/user-<uid>" "/$ROOT/user-$IA" "$(dirname "$S1")"
check_eq "the caller moved into login/" "$S1/login" "$(val cgroup a1)"
check "session directory exists on cgroupfs" test -d "$CPU$S1/login"

echo "# 2. the default line (no delegate=): what the user owns and what stays root's"
check_eq "the session has login/ and root's leaves leaf-1 .. leaf-6 (leaves 6, the default)" \
        "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login" \
        "$(find "$CPU$S1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "session dir owned by root" root "$(owner "$CPU$S1")"
check_eq "session cgroup.procs and tasks stay root's (v1: no common-ancestor rule)" "root root" \
        "$(owner "$CPU$S1/cgroup.procs") $(owner "$CPU$S1/tasks")"
check_eq "session cpu.shares stays root's" root "$(owner "$CPU$S1/cpu.shares")"
check_eq "session cpu.cfs_quota_us stays root's" root "$(owner "$CPU$S1/cpu.cfs_quota_us")"
check_eq "login/ is root's, its cgroup.procs and tasks too" "root root root" \
        "$(owner "$CPU$S1/login") $(owner "$CPU$S1/login/cgroup.procs") $(owner "$CPU$S1/login/tasks")"
check_eq "a leaf's directory, tasks, cpu.shares and cpu.cfs_quota_us are root's" "root root root root" \
        "$(owner "$CPU$S1/leaf-1") $(owner "$CPU$S1/leaf-1/tasks") $(owner "$CPU$S1/leaf-1/cpu.shares") $(owner "$CPU$S1/leaf-1/cpu.cfs_quota_us")"
check_eq "a leaf's cgroup.procs is the user's" "$UA" "$(owner "$CPU$S1/leaf-1/cgroup.procs")"
check_eq "the user owns nothing else in the session" \
        "leaf-1/cgroup.procs leaf-2/cgroup.procs leaf-3/cgroup.procs leaf-4/cgroup.procs leaf-5/cgroup.procs leaf-6/cgroup.procs" \
        "$([ -n "$S1" ] && cd "$CPU$S1" && find . ! -user root -printf '%P\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "user group owned by root" root "$(owner "$CPU/$ROOT/user-$IA")"
check_eq "user group cgroup.procs owned by root" root "$(owner "$CPU/$ROOT/user-$IA/cgroup.procs")"
check_eq "root group owned by root" root "$(owner "$CG")"

echo "# 3. security rules 1 and 2, attacked as the user"
check_not "user cannot write own session cpu.shares" as_user "$UA" "echo 262144 > $CPU$S1/cpu.shares"
check_not "user cannot write own user group cpu.shares" as_user "$UA" "echo 262144 > $CPU/$ROOT/user-$IA/cpu.shares"
check_not "user cannot lift own user group cap" as_user "$UA" "echo -1 > $CPU/$ROOT/user-$IA/cpu.cfs_quota_us"
check_not "user cannot write own cpu.idle" as_user "$UA" "echo 0 > $CPU/$ROOT/user-$IA/cpu.idle"
check_not "user cannot chmod own session cpu.shares" as_user "$UA" "chmod 666 $CPU$S1/cpu.shares"
check_not "user cannot move into the user group itself" as_user "$UA" "echo \$\$ > $CPU/$ROOT/user-$IA/cgroup.procs"
check_not "user cannot move into <root>" as_user "$UA" "echo \$\$ > $CG/cgroup.procs"
check_not "user cannot move to the root cgroup" as_user "$UA" "echo \$\$ > $CPU/cgroup.procs"
check_not "user cannot rename own session" as_user "$UA" "mv $CPU$S1 $CPU$S1.x"
check_not "user cannot create a symlink in the session" as_user "$UA" "ln -s / $CPU$S1/evil"
bg b1 "$UB"
SB=$(val AUTOGROUP_SESSION b1)
check_not "user cannot move into another user's session" as_user "$UA" "echo \$\$ > $CPU$SB/login/cgroup.procs"
check_not "user cannot make groups in another user's session" as_user "$UA" "mkdir $CPU$SB/x"
check_not "user cannot make a group in own session" as_user "$UA" "mkdir $CPU$S1/tab1"
check_not "user cannot make a group in own leaf" as_user "$UA" "mkdir $CPU$S1/leaf-1/tab1"
check "user can move own process between own leaves" \
        as_user "$UA" "echo \$\$ > $CPU$S1/leaf-1/cgroup.procs && echo \$\$ > $CPU$S1/leaf-2/cgroup.procs && grep -q '^[0-9]*:cpu:$S1/leaf-2\$' /proc/self/cgroup"
check_not "user cannot move into own login/" as_user "$UA" "echo \$\$ > $CPU$S1/leaf-1/cgroup.procs && echo \$\$ > $CPU$S1/login/cgroup.procs"
check_not "user cannot move into own session group" as_user "$UA" "echo \$\$ > $CPU$S1/leaf-1/cgroup.procs && echo \$\$ > $CPU$S1/cgroup.procs"
check_not "user cannot move through a leaf's tasks" as_user "$UA" "echo \$\$ > $CPU$S1/leaf-1/tasks"
check_not "user cannot write a leaf's cpu.shares" as_user "$UA" "echo 262144 > $CPU$S1/leaf-1/cpu.shares"
check_not "user cannot move into another user's leaf" as_user "$UA" "echo \$\$ > $CPU$SB/leaf-1/cgroup.procs"

echo "# 4. policy: weights (v1 shares = weight*1024/100) and cap"
check_eq "@group weight 50 -> cpu.shares 512" 512 "$(cat "$CPU/$ROOT/user-$IA/cpu.shares")"
check_eq "user weight 400 -> cpu.shares 4096" 4096 "$(cat "$CPU/$ROOT/user-$IB/cpu.shares")"
check_eq "max 150% -> cfs_quota_us 150000" 150000 "$(cat "$CPU/$ROOT/user-$IB/cpu.cfs_quota_us")"
check_eq "cfs_period_us 100000" 100000 "$(cat "$CPU/$ROOT/user-$IB/cpu.cfs_period_us")"
check_eq "no cap -> cfs_quota_us -1" -1 "$(cat "$CPU/$ROOT/user-$IA/cpu.cfs_quota_us")"
check "two users have distinct user groups" test "user-$IA" != "user-$IB" -a -d "$CPU/$ROOT/user-$IB"

echo "# 5. a child forked as the user after open lands in login/"
drv agtest "$UA" open run-user "grep ':cpu:' /proc/self/cgroup > $U/child.cg" env close >"$T/c.out" 2>&1
SC=$(val AUTOGROUP_SESSION c)
check_eq "setuid child in login/" "1:cpu:$SC/login" "$(cat "$U/child.cg" 2>/dev/null)"
check "that session is gone after close" test ! -e "$CPU$SC"

echo "# 6. close removes everything; user group stays while another session lives"
touch "$T/a1.go"; wait "$PID_a1" 2>/dev/null
check "closed session removed" test ! -e "$CPU$S1"
check "user group stays while a session lives" test -d "$CPU/$ROOT/user-$IA"
check_eq "caller moved back out at close" "/" "$(sed -n 's/^cgroup=//p' "$T/a1.out" | tail -n1)"
touch "$T/a2.go" "$T/b1.go"; wait "$PID_a2" "$PID_b1" 2>/dev/null
check "last close removed the session" test ! -e "$CPU$S2"
check "last close removed the user group" test ! -e "$CPU/$ROOT/user-$IA"
check "user B's groups removed" test ! -e "$CPU/$ROOT/user-$IB"
check "close returned PAM_SUCCESS" grep -q '^close=PAM_SUCCESS' "$T/a2.out"

echo "# 7. a lingering process keeps its session until the next open/close"
drv agtest "$UA" open env spawn-user "sleep 300 & echo \$! > $U/linger.pid; wait" close >"$T/l.out" 2>&1
wait_for "$U/linger.pid" '^[0-9]+$'
LP=$(cat "$U/linger.pid"); track_pid "$LP"
SL=$(val AUTOGROUP_SESSION l)
check "session with a lingering process stays" test -d "$CPU$SL/login"
log_has "leftover session is logged" "still holds processes"
kill_ended "$LP"
drv agtest "$UA" open close >/dev/null 2>&1
check "next open/close of the user removed the emptied session" test ! -e "$CPU$SL"
check "and the user group" test ! -e "$CPU/$ROOT/user-$IA"

echo "# 8. sessions no: straight into a per-user group"
drv agtest "$UC" open env cgroup close >"$T/nc.out" 2>&1
check_eq "sessions no -> caller in user-<uid>" "/$ROOT/user-$IC" "$(val cgroup nc)"
check_eq "AUTOGROUP_SESSION is the user group" "/$ROOT/user-$IC" "$(val AUTOGROUP_SESSION nc)"
check "sessions no -> removed at close" test ! -e "$CPU/$ROOT/user-$IC"

echo "# 9. 50 concurrent logins of one user leave nothing behind"
PAR=""
for i in $(seq 50); do drv agtest "$UA" open cgroup close >"$T/par$i.out" 2>&1 & PAR="$PAR $!"; done
wait $PAR
n_ok=$(grep -l '^open=PAM_SUCCESS' "$T"/par*.out | wc -l)
n_in=$(grep -l "^cgroup=/$ROOT/user-$IA/.*/login" "$T"/par*.out | wc -l)
check_eq "all 50 opens succeeded" 50 "$n_ok"
check_eq "all 50 callers were in their login/ leaf" 50 "$n_in"
check_eq "no group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

echo "# 10. a broken config still lets the session open"
BAD="$T/bad.conf"
printf '%s\n' "$UA weight 300" "$UA frobnicate 3" "garbage" "$UA weight 999999" "* max 12" "$UA idle maybe" >"$BAD"
pam_service agbad "root=$ROOT conf=$BAD"
"$AGDRV" --pam "$T" agbad "$UA" open cgroup close >"$T/bad.out" 2>&1
check "session opened despite bad lines" grep -q '^open=PAM_SUCCESS' "$T/bad.out"
check "and was grouped" grep -q "^cgroup=/$ROOT/user-$IA/" "$T/bad.out"
log_has "bad item logged with file:line" "$BAD:2: .*line skipped"
log_has "bad value logged with file:line" "$BAD:4: "
log_has "bad cap logged with file:line" "$BAD:5: "
mkdir -p "$T/wd"; printf '%s\n' "$UA weight 300" >"$T/wd/ww.conf"; chmod 666 "$T/wd/ww.conf"
pam_service agww "root=$ROOT conf=$T/wd/ww.conf"
"$AGDRV" --pam "$T" agww "$UA" open cgroup close >"$T/ww.out" 2>&1
check "world-writable config: session still opens" grep -q '^open=PAM_SUCCESS' "$T/ww.out"
log_has "world-writable config refused with a log line" "ww.conf: .*world-writable"
drv agtest "$UA" open run-user "cat $CPU/$ROOT/user-$IA/cpu.shares > $U/shares" close >/dev/null 2>&1
check_eq "refused file's rule not applied (group weight 50 applies)" 512 "$(cat "$U/shares")"

echo "# 11. options"
pam_service agopt "root=$ROOT conf=$CONF bogus=1 root=../etc"
"$AGDRV" --pam "$T" agopt "$UA" open cgroup close >"$T/opt.out" 2>&1
check "unknown option does not fail the session" grep -q '^open=PAM_SUCCESS' "$T/opt.out"
log_has "unknown option logged" "unknown option: bogus=1"
log_has "invalid root= refused" "invalid root name '../etc'"
check "invalid root= fell back to the default, not a path" test ! -e /etc/user-$IA
rm_cgroup_tree "$CPU/autogroup/user-$IA"

echo "# 12. faults: no cpu controller, no cgroupfs (in a private mount namespace)"
nocpu() { unshare -m --propagation private sh -c "umount -l $CPU && $*"; }
nocpu "'$AGDRV' --pam '$T' agtest '$UA' open close" >"$T/nocpu.out" 2>&1
check "no cpu controller: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/nocpu.out"
log_has "no cpu controller logged" "no cpu controller available"
nocpu "'$AGDRV' --pam '$T' agstrict '$UA' open" >"$T/nocpus.out" 2>&1
check "no cpu controller + strict: PAM_SESSION_ERR" grep -q '^open=PAM_SESSION_ERR' "$T/nocpus.out"
unshare -m --propagation private sh -c "mount -t tmpfs none /sys/fs/cgroup && '$AGDRV' --pam '$T' agtest '$UA' open close" >"$T/nofs.out" 2>&1
check "no cgroupfs: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/nofs.out"
log_has "no cgroupfs logged" "no cgroup filesystem is mounted"
check "host cpu hierarchy untouched" test -f "$CPU/cpu.shares"

echo "# 13. real-time caller (CONFIG_RT_GROUP_SCHED): stays where it is"
if [ -f "$CPU/cpu.rt_runtime_us" ]; then
        chrt -f 10 "$AGDRV" --pam "$T" agtest "$UA" open cgroup close >"$T/rt.out" 2>&1
        check "SCHED_FIFO caller: session still opens" grep -q '^open=PAM_SUCCESS' "$T/rt.out"
        check_eq "SCHED_FIFO caller stays in its cgroup" "/" "$(val cgroup rt)"
        log_has "real-time task logged" "real-time task"
        check "nothing left behind by the refused move" test ! -e "$CPU/$ROOT/user-$IA"
else
        skip "no cpu.rt_runtime_us: kernel without RT group scheduling"
fi

echo "# 14. audit records (seen on the netlink socket: this kernel has audit disabled, no auditd)"
if command -v strace >/dev/null; then
        strace -f -s 512 -e trace=sendto -o "$T/audit.trace" "$AGDRV" --pam "$T" agtest "$UA" open env close >"$T/au.out" 2>&1
        SA=$(val AUTOGROUP_SESSION au)
        # strace shows the netlink payload as \xNN escapes: decode them
        perl -pe 's/\\x([0-9a-f]{2})/chr(hex($1))/ge' "$T/audit.trace" >"$T/audit.txt"
        mv "$T/audit.txt" "$T/audit.trace"
        check "session-create record names user, uid and cgroup" grep -q "op=autogroup-session-create acct=\"$UA\" uid=$IA cgroup=$SA " "$T/audit.trace"
        check "remove record for the session" grep -q "op=autogroup-remove acct=.* cgroup=$SA " "$T/audit.trace"
        check "remove record for the user group" grep -q "op=autogroup-remove acct=.* cgroup=/$ROOT/user-$IA " "$T/audit.trace"
        pam_service agnoaudit "root=$ROOT conf=$CONF noaudit"
        strace -f -s 512 -e trace=sendto -o "$T/noaudit.trace" "$AGDRV" --pam "$T" agnoaudit "$UA" open close >/dev/null 2>&1
        check_not "noaudit: no record" grep -q "op=autogroup" "$T/noaudit.trace"
else
        skip "strace not installed"
fi

echo "# 15. root, as in limits.conf: \"*\" and @group rules do not apply; a rule naming root does"
CONFR="$T/root.conf"
printf '*  max  50%%\n@root  weight  10\n%s  weight  300\n' "$UA" >"$CONFR"
chmod 644 "$CONFR"
pam_service agroot "root=$ROOT conf=$CONFR"
drvbg() { # drvbg NAME SERVICE USER: a session held open until $T/NAME.go exists
        "$AGDRV" --pam "$T" "$2" "$3" open env cgroup wait-file "$T/$1.go" close >"$T/$1.out" 2>&1 &
        track_pid $!
        wait_for "$T/$1.out" '^cgroup='
}
wait_gone() { local i; for i in $(seq 600); do [ -d "$1" ] || return 0; sleep 0.05; done; return 1; }
drvbg r0 agroot root
drvbg r1 agroot "$UA"
check "root's login opened" grep -q '^open=PAM_SUCCESS' "$T/r0.out"
check_eq "root's login sits in user-0" "/$ROOT/user-0" "$(dirname "$(val AUTOGROUP_SESSION r0)")"
check_eq "\"* max 50%\" does not cap root (cfs_quota_us -1)" -1 "$(cat "$CG/user-0/cpu.cfs_quota_us")"
check_eq "\"@root weight 10\" does not apply to root (shares 1024)" 1024 "$(cat "$CG/user-0/cpu.shares")"
check_eq "\"* max 50%\" caps everybody else" 50000 "$(cat "$CG/user-$IA/cpu.cfs_quota_us")"
check_eq "  and their own rule applies" 3072 "$(cat "$CG/user-$IA/cpu.shares")"
touch "$T/r0.go" "$T/r1.go"; wait_gone "$CG/user-0"
printf 'root  max  400%%\n' >>"$CONFR"
drvbg r2 agroot root
check_eq "a rule naming root applies (max 400%)" 400000 "$(cat "$CG/user-0/cpu.cfs_quota_us")"
touch "$T/r2.go"; wait_gone "$CG/user-0"
"$HELPER" explain --conf "$CONFR" root >"$T/explain-root.out" 2>&1
check "autogroup explain root says 2 lines do not apply to it" \
        grep -q 'uid 0: "\*" and "@group" rules do not apply (as in limits.conf), 2 such lines skipped' "$T/explain-root.out"
check "  and shows max 400% from the rule naming root" grep -qE "^max +400% +from $CONFR:4" "$T/explain-root.out"

finish
