#!/bin/bash
# Runs INSIDE the guest that tests/vm/test-guest-platforms.sh boots (pure
# cgroup2 at /sys/fs/cgroup, cpu enabled at the root, the host root read-only
# under a tmpfs overlay): the platforms the host cannot show.
#
# 1. A cgroup v2 container without systemd: a real cgroup namespace
#    (unshare -C -m) with a private cgroup2 mount, whose root holds a running
#    process. The module fails gracefully (the one log line, PAM_IGNORE under
#    optional, PAM_SESSION_ERR under strict, the container untouched);
#    "autogroup container-init" moves the container's processes into init/
#    and enables cpu; then logins get groups with their weights; cleanup.
# 1b. cgroup v2 with cpu, no container: a login's nested terminal (a setsid
#    shell) runs "autogroup enter" and "status" without --root; they find
#    root= from the module's AUTOGROUP_SESSION (verified against the real
#    cgroup) and the terminal gets its sid-<pid> leaf; "idle yes" gives the
#    user's group cpu.idle 1.
# 1c. A clean container (nothing enabled by hand): container-init, then the
#    same terminal inside a login there gets its sid-<pid> leaf.
# 1d. A container whose runtime does not delegate cpu: the login goes on
#    (PAM_IGNORE; PAM_SESSION_ERR under strict) with one log line, enter does
#    nothing, container-init fails and creates nothing.
# 1e. No cgroup file system: the same for the login, enter does nothing.
# 2. cgroup v1 with cpu and cpuacct mounted together (the usual layout of
#    older distributions): cpu is taken out of cgroup v2 and bound to a v1
#    "cpu,cpuacct" hierarchy; the module finds it through mountinfo, writes
#    shares and quota, the helper's status shows CPU time from
#    cpuacct.usage; a nested terminal's enter (no --root) gets root's leaf-1
#    leaf there; a user at interactive 2 gets the latency lane beside the
#    tree, whose CPU time is its own there (in no session's): status, status
#    --json and metrics show it, and its removal at the user's last close
#    writes the accounting record of scope=lane; cleanup. It changes the
#    guest's cgroup setup, so it runs last.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_guest_v2 tests/vm/test-guest-platforms.sh
[ -x "$HELPER" ] || { echo "not ok - $HELPER not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

ROOT="agtest-$$"
CT="$CG2/agct-$$"               # the container's cgroup, as the host sees it
V1="/run/agv1-$$"               # mount point of the v1 cpu,cpuacct hierarchy
AG_CGROOTS="$CT $CG2/$ROOT"
start_syslog || true
section() { echo "# $* (uptime $(cut -d' ' -f1 /proc/uptime) s)"; }

new_user a; new_user b; new_user c; new_user d
CONF="$T/autogroup.conf"
printf '*  weight  100\n%s  weight  400\n%s  max  150%%\n%s  idle  yes\n' "$UB" "$UB" "$UC" >"$CONF"
chmod 644 "$CONF"
pam_other
pam_service agtest "root=$ROOT conf=$CONF debug delegate=yes"
CONTROL=required pam_service agstrict "root=$ROOT conf=$CONF strict delegate=yes"
# the module's own return code through the stack: PAM_IGNORE jumps over
# pam_deny (-> PAM_SUCCESS), anything else runs into it (-> PAM_SESSION_ERR)
printf 'session [ignore=1 default=ok] %s root=%s conf=%s\nsession requisite pam_deny.so\nsession required pam_permit.so\n' \
        "$AG_MODULE" "$ROOT" "$CONF" >"$T/agprobe"

section "1. a cgroup v2 container without systemd (cgroup namespace + private cgroup2 mount)"
mkdir "$CT"
# The container: its own cgroup namespace rooted at $CT and its own mount
# namespace with a fresh cgroup2 mount at /sys/fs/cgroup (what a container
# runtime gives it). Its "init" (the script's shell) and a running service
# (sleep) sit in the namespace root. It logs in before and after
# container-init; every step leaves its output in $T/ct.*.
cat >"$T/container.sh" <<CONTAINER
set -u
# (a cgroup2 mount right on top of the same superblock is refused: EBUSY)
mount -t tmpfs agct /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup || exit 3
w() { for _ in \$(seq 600); do grep -qE "\$2" "\$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
drv() { "$AGDRV" --pam "$T" "\$@"; }
echo "\$\$" >$T/ct.init
sleep 600 & echo \$! >$T/ct.svc
sed -n 's/^0:://p' /proc/self/cgroup >$T/ct.selfcg
cat /sys/fs/cgroup/cgroup.controllers >$T/ct.controllers
cat /sys/fs/cgroup/cgroup.subtree_control >$T/ct.subtree-before
cat /sys/fs/cgroup/cgroup.procs >$T/ct.procs-before
drv agtest $UA open env cgroup close >$T/ct.before 2>&1
drv agstrict $UA open close >$T/ct.strict 2>&1
drv agprobe $UA open close >$T/ct.probe 2>&1
cat /sys/fs/cgroup/cgroup.subtree_control >$T/ct.subtree-after
find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d >$T/ct.dirs-after
# what "+cpu" at a root that holds processes does: the kernel accepts it (cpu
# is a threaded controller), and every child becomes "domain invalid"
echo +cpu >/sys/fs/cgroup/cgroup.subtree_control; echo \$? >$T/ct.plus.rc
mkdir /sys/fs/cgroup/probe && cat /sys/fs/cgroup/probe/cgroup.type >$T/ct.childtype
echo \$\$ >/sys/fs/cgroup/probe/cgroup.procs 2>$T/ct.childmove; rmdir /sys/fs/cgroup/probe
"$HELPER" container-init >$T/ct.init1 2>&1; echo \$? >$T/ct.init1.rc
"$HELPER" container-init >$T/ct.init2 2>&1; echo \$? >$T/ct.init2.rc
sed -n 's/^0:://p' /proc/self/cgroup >$T/ct.selfcg-after
drv agtest $UA open env cgroup wait-file $T/ct.go close cgroup >$T/ct.a 2>&1 & A=\$!
drv agtest $UB open env cgroup wait-file $T/ct.go close cgroup >$T/ct.b 2>&1 & B=\$!
w $T/ct.a '^cgroup='; w $T/ct.b '^cgroup='
"$HELPER" --root $ROOT status >$T/ct.status 2>&1
touch $T/ct.open
wait \$A \$B
CONTAINER
sh -c "echo \$\$ >$CT/cgroup.procs && unshare -C -m --propagation private bash $T/container.sh; echo \$? >$T/ct.rc" \
        >"$T/ct.out" 2>&1 &
CTPID=$!; track_pid "$CTPID"
for _ in $(seq 2400); do [ -e "$T/ct.open" ] || [ -e "$T/ct.rc" ] && break; sleep 0.05; done
[ -e "$T/ct.open" ] || echo "# the container did not get to its logins: $(cat "$T/ct.out")"
SVC=$(cat "$T/ct.svc" 2>/dev/null); track_pid "$SVC"
INIT=$(cat "$T/ct.init" 2>/dev/null)
check_eq "the container sees its own cgroup as the root" "/" "$(cat "$T/ct.selfcg" 2>/dev/null)"
check "the container's root offers cpu" grep -qw cpu "$T/ct.controllers"
check_not "  but has not enabled it for its children" grep -qw cpu "$T/ct.subtree-before"
check "the container's root holds its running service" grep -qx "$SVC" "$T/ct.procs-before"
check_eq "login before container-init, module optional: the login opens" "PAM_SUCCESS" "$(val open "$T/ct.before")"
check_eq "  the module returned PAM_IGNORE (probe stack)" "PAM_SUCCESS" "$(val open "$T/ct.probe")"
check_eq "  required + strict: PAM_SESSION_ERR" "PAM_SESSION_ERR" "$(val open "$T/ct.strict")"
check_eq "  the caller stayed where it was" "/" "$(val cgroup "$T/ct.before")"
check_eq "  no AUTOGROUP_SESSION" "" "$(val AUTOGROUP_SESSION "$T/ct.before")"
log_has "  one log line tells the administrator what to do" \
        "holds processes and is not the system's root cgroup .*run 'autogroup container-init' as root"
if have_syslog; then
        check_eq "  exactly that one line for each of the three logins" 3 "$(grep -c "autogroup container-init" "$SYSLOG")"
        check_eq "  and no other line about those logins" 3 "$(grep -c "not grouped" "$SYSLOG")"
        grep "not grouped" "$SYSLOG" | grep -v "autogroup container-init" | sed 's/^/# other: /'
fi
check "  the service process is still running" test -d "/proc/$SVC"
check_eq "  nothing was created below the container root" "" "$(cat "$T/ct.dirs-after" 2>/dev/null)"
check_not "  nor cpu enabled there (which would make it a thread root)" grep -qw cpu "$T/ct.subtree-after"
check_eq "'+cpu' by hand at that root: accepted" 0 "$(cat "$T/ct.plus.rc" 2>/dev/null)"
check_eq "  but its children are invalid domains" "domain invalid" "$(cat "$T/ct.childtype" 2>/dev/null)"
check "  that cannot take a process" test -s "$T/ct.childmove"
check_eq "container-init (from that state): exit 0" 0 "$(cat "$T/ct.init1.rc" 2>/dev/null)"
check "  says what it did" grep -qE "^moved [0-9]+ process(es)? into /sys/fs/cgroup/init; cpu enabled below /sys/fs/cgroup\$" "$T/ct.init1"
check "  the service is in init/" grep -qx "$SVC" "$CT/init/cgroup.procs"
check "  and the container's init" grep -qx "$INIT" "$CT/init/cgroup.procs"
check_eq "  the container sees itself in /init" "/init" "$(cat "$T/ct.selfcg-after" 2>/dev/null)"
check_eq "  init/ is root's" root "$(owner "$CT/init")"
check "  cpu enabled in the container root's cgroup.subtree_control" grep -qw cpu "$CT/cgroup.subtree_control"
check_eq "container-init again: exit 0, nothing to do" "0 cpu already enabled below /sys/fs/cgroup: nothing to do" \
        "$(cat "$T/ct.init2.rc" 2>/dev/null) $(cat "$T/ct.init2" 2>/dev/null)"
check_eq "logins after container-init: PAM_SUCCESS" "PAM_SUCCESS PAM_SUCCESS" "$(val open "$T/ct.a") $(val open "$T/ct.b")"
SA=$(val AUTOGROUP_SESSION "$T/ct.a"); SB=$(val AUTOGROUP_SESSION "$T/ct.b")
check_eq "  the caller in its session's login/ (the container's view)" "$SA/login" "$(val cgroup "$T/ct.a")"
check_eq "  user B's group: cpu.weight 400" 400 "$(cat "$CT/$ROOT/user-$IB/cpu.weight" 2>/dev/null)"
check_eq "  user B's group: cpu.max 150%" "150000 100000" "$(cat "$CT/$ROOT/user-$IB/cpu.max" 2>/dev/null)"
check_eq "  user A's group: cpu.weight 100" 100 "$(cat "$CT/$ROOT/user-$IA/cpu.weight" 2>/dev/null)"
check_eq "  the session directory is the user's" "$UA" "$(owner "$CT$SA")"
check "  login/ has the cpu controller" test -f "$CT$SB/login/cpu.weight"
check "  status inside the container shows both users" grep -q "user-$IB" "$T/ct.status"
touch "$T/ct.go"; wait "$CTPID" 2>/dev/null
check_eq "logout: both closes PAM_SUCCESS" "PAM_SUCCESS PAM_SUCCESS" "$(val close "$T/ct.a") $(val close "$T/ct.b")"
check_eq "  the sessions and user groups are gone" "" "$(ls -d "$CT/$ROOT"/user-* 2>/dev/null)"
kill "$SVC" 2>/dev/null; for _ in $(seq 100); do [ -d "/proc/$SVC" ] || break; sleep 0.05; done
rm_cgroup_tree "$CT"
check "the container's cgroups are removed" test ! -e "$CT"

# A nested terminal's shell (setsid, so it leads its session) inside a login:
# enter without the hint, enter and enter again with the module's
# AUTOGROUP_SESSION, status with and without it; never --root.
# \$1: where its files go, \$2: the cpu hierarchy's mount as the terminal sees it
cat >"$T/tab.sh" <<TAB
cg() { # the cpu hierarchy's line (v1), else the cgroup2 one
        local l; l=\$(grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' /proc/self/cgroup | cut -d: -f3)
        [ -n "\$l" ] || l=\$(sed -n 's/^0:://p' /proc/self/cgroup); echo "\$l"
}
echo "pid=\$\$ sid=\$(ps -o sid= -p \$\$ | tr -d ' ')"
echo "hint=\${AUTOGROUP_SESSION:-}"
echo "nohint=[\$(env -u AUTOGROUP_SESSION "$HELPER" enter --verbose --pid \$\$ 2>&1)] rc=\$? cg=\$(cg)"
echo "enter=[\$("$HELPER" enter --verbose --pid \$\$ 2>&1)] rc=\$? cg=\$(cg)"
echo "again=[\$("$HELPER" enter --verbose --pid \$\$ 2>&1)] rc=\$? cg=\$(cg)"
echo "weight=\$(cat "\$2\$(cg)/cpu.weight" 2>/dev/null || cat "\$2\$(cg)/cpu.shares" 2>&1)"
"$HELPER" status >"\$1.status" 2>&1; echo "status_rc=\$?"
env -u AUTOGROUP_SESSION "$HELPER" status >"\$1.status-nohint" 2>&1
TAB
chmod 644 "$T/tab.sh"
# term_cmd NAME MOUNT: run-user's command for a login whose agdrv output is $T/NAME.out
# (a script file, so that nothing is expanded before the login exists): the
# terminal with that login's AUTOGROUP_SESSION, its lines in $U/NAME.tab
term_cmd() {
        cat >"$T/$1.term" <<TERM
export AUTOGROUP_SESSION="\$(sed -n 's/^AUTOGROUP_SESSION=//p' $T/$1.out)"
setsid -w bash $T/tab.sh $U/$1 $2 >$U/$1.tab 2>&1 </dev/null
TERM
        chmod 644 "$T/$1.term"
        echo "sh $T/$1.term"
}
# tab_checks NAME WHERE WEIGHT [LEAF]: the terminal of login NAME; WHERE is the
# cpu hierarchy's mount as this script sees it, WEIGHT a new leaf's cpu.weight
# (v2) or cpu.shares (v1), LEAF the leaf it gets: sid-<pid> in a delegated
# session (v2, delegate=yes), root's leaf-1 where delegate=yes is refused (v1)
tab_checks() {
        local n=$1 at=$2 w=$3 S P L
        S=$(val AUTOGROUP_SESSION "$T/$n.out"); P=$(val pid "$U/$n.tab" | cut -d' ' -f1)
        L=${4:-sid-$P}
        sed "s/^/# $n: /" "$U/$n.tab"
        check_eq "($n) login and logout: PAM_SUCCESS" "PAM_SUCCESS PAM_SUCCESS" "$(val open "$T/$n.out") $(val close "$T/$n.out")"
        check "($n) the module's AUTOGROUP_SESSION names root=$ROOT (not the default)" grep -q "^AUTOGROUP_SESSION=/$ROOT/user-$IA/[^/]*\$" "$T/$n.out"
        check_eq "($n) the terminal has it and leads its session" "$S $P sid=$P" "$(val hint "$U/$n.tab") $(val pid "$U/$n.tab")"
        check_eq "($n) enter without the hint: the default root, nothing, exit 0" \
                "[$P: not inside a pam_autogroup session of this user, nothing to do] rc=0 cg=$S/login" "$(val nohint "$U/$n.tab")"
        check_eq "($n) enter (no --root): moved into its $L leaf of the session of root=$ROOT" \
                "[$P: moved into its leaf: $S/$L] rc=0 cg=$S/$L" "$(val enter "$U/$n.tab")"
        check_eq "($n) enter again: already there" \
                "[$P: already in its leaf, nothing to do: $S/$L] rc=0 cg=$S/$L" "$(val again "$U/$n.tab")"
        check_eq "($n) the leaf is a cpu group of its own: weight $w" "$w" "$(val weight "$U/$n.tab")"
        check_eq "($n) status (no --root): exit 0" 0 "$(val status_rc "$U/$n.tab")"
        check "($n) status lists the session of root=$ROOT" grep -q "$(basename "$S")" "$U/$n.status"
        check "($n)   and the terminal's leaf" grep -q "$L" "$U/$n.status"
        check_not "($n) status without the hint: not that session" grep -q "$(basename "$S")" "$U/$n.status-nohint"
        check "($n) the leaf went with the session at logout" test ! -e "$at$S"
}

section "1b. cgroup v2 with cpu, no container: a nested terminal finds root= from AUTOGROUP_SESSION"
"$AGDRV" --pam "$T" agtest "$UA" open env cgroup run-user "$(term_cmd v2 "$CG2")" close cgroup >"$T/v2.out" 2>&1
tab_checks v2 "$CG2" 100
# idle yes: the user's group gets cpu.idle 1 (cpu.weight and cpu.max: tests/guest/test-v2.sh)
"$AGDRV" --pam "$T" agtest "$UC" open env run-user "cat $CG2/$ROOT/user-$IC/cpu.idle >$U/idle.c" close >"$T/idle.out" 2>&1
check_eq "idle yes: the user's group has cpu.idle 1 (v2)" "PAM_SUCCESS 1" "$(val open "$T/idle.out") $(cat "$U/idle.c" 2>/dev/null)"
check_eq "the user groups are gone" "" "$(ls -d "$CG2/$ROOT"/user-* 2>/dev/null)"
rm_cgroup_tree "$CG2/$ROOT"     # (section 2 needs a v2 tree without cpu users)

section "1c. a clean container: container-init (nothing enabled by hand), then a terminal's leaf"
CT2="$CG2/agct2-$$"
AG_CGROOTS="$AG_CGROOTS $CT2"
mkdir "$CT2"
cat >"$T/container2.sh" <<CONTAINER
set -u
mount -t tmpfs agct /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup || exit 3
sleep 600 & echo \$! >$T/c2.svc
cat /sys/fs/cgroup/cgroup.subtree_control >$T/c2.subtree-before
find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d >$T/c2.dirs-before
"$HELPER" container-init >$T/c2.init 2>&1; echo \$? >$T/c2.init.rc
sed -n 's/^0:://p' /proc/self/cgroup >$T/c2.selfcg
"$AGDRV" --pam "$T" agtest $UA open env cgroup run-user "$(term_cmd c2 /sys/fs/cgroup)" close cgroup >$T/c2.out 2>&1
CONTAINER
sh -c "echo \$\$ >$CT2/cgroup.procs && unshare -C -m --propagation private bash $T/container2.sh; echo \$? >$T/c2.rc" \
        >"$T/c2.sh.out" 2>&1 &
C2PID=$!; track_pid "$C2PID"
for _ in $(seq 2400); do [ -d "/proc/$C2PID" ] || break; sleep 0.05; done
wait "$C2PID" 2>/dev/null
[ -s "$T/c2.sh.out" ] && sed 's/^/# container: /' "$T/c2.sh.out"
check_eq "the container's script ran to its end" 0 "$(cat "$T/c2.rc" 2>/dev/null)"
SVC2=$(cat "$T/c2.svc" 2>/dev/null); track_pid "$SVC2"
check_eq "the clean container has not enabled cpu for its children" "" "$(tr -d ' \n' <"$T/c2.subtree-before" 2>/dev/null)"
check_eq "  and has no child cgroup" "" "$(cat "$T/c2.dirs-before" 2>/dev/null)"
check_eq "container-init: exit 0" 0 "$(cat "$T/c2.init.rc" 2>/dev/null)"
check "  moved the container's processes into init/ and enabled cpu" \
        grep -qE "^moved [0-9]+ process(es)? into /sys/fs/cgroup/init; cpu enabled below /sys/fs/cgroup\$" "$T/c2.init"
check "  the service is in init/" grep -qx "$SVC2" "$CT2/init/cgroup.procs"
check_eq "  the container sees itself in /init" "/init" "$(cat "$T/c2.selfcg" 2>/dev/null)"
check "  cpu enabled in the container root's cgroup.subtree_control" grep -qw cpu "$CT2/cgroup.subtree_control"
check_eq "the login in the container: the caller in its session's login/" \
        "$(val AUTOGROUP_SESSION "$T/c2.out")/login" "$(val cgroup "$T/c2.out")"
tab_checks c2 "$CT2" 100
check_eq "the user groups are gone" "" "$(ls -d "$CT2/$ROOT"/user-* 2>/dev/null)"
kill "$SVC2" 2>/dev/null; for _ in $(seq 100); do [ -d "/proc/$SVC2" ] || break; sleep 0.05; done
rm_cgroup_tree "$CT2"
check "the container's cgroups are removed" test ! -e "$CT2"

section "1d. a container whose runtime does not delegate cpu (cgroup v2 without cpu offered)"
# $NC gets cpu from the root but passes nothing on, so its child ct/, the
# container's root, does not offer cpu
NC="$CG2/agnc-$$"
AG_CGROOTS="$AG_CGROOTS $NC"
mkdir -p "$NC/ct"
: >"$SYSLOG"
cat >"$T/container3.sh" <<CONTAINER
set -u
mount -t tmpfs agct /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup || exit 3
cat /sys/fs/cgroup/cgroup.controllers >$T/c3.controllers
"$AGDRV" --pam "$T" agprobe $UA open cgroup close >$T/c3.probe 2>&1
"$AGDRV" --pam "$T" agstrict $UA open close >$T/c3.strict 2>&1
setpriv --reuid=$IA --regid=$(id -g "$UA") --init-groups setsid -w sh -c '"$HELPER" enter --verbose --pid \$\$; echo rc=\$?' >$T/c3.enter 2>&1
"$HELPER" container-init >$T/c3.init 2>&1; echo \$? >$T/c3.init.rc
find /sys/fs/cgroup -mindepth 1 -type d >$T/c3.dirs
CONTAINER
sh -c "echo \$\$ >$NC/ct/cgroup.procs && unshare -C -m --propagation private bash $T/container3.sh; echo \$? >$T/c3.rc" \
        >"$T/c3.sh.out" 2>&1
[ -s "$T/c3.sh.out" ] && sed 's/^/# container: /' "$T/c3.sh.out"
sed 's/^/# enter: /' "$T/c3.enter" 2>/dev/null; sed 's/^/# container-init: /' "$T/c3.init" 2>/dev/null
check_eq "the container's script ran to its end" 0 "$(cat "$T/c3.rc" 2>/dev/null)"
check_not "the container's root does not offer cpu" grep -qw cpu "$T/c3.controllers"
check_eq "login, module optional: PAM_IGNORE (through the probe stack)" "PAM_SUCCESS" "$(val open "$T/c3.probe")"
check_eq "  the caller stayed where it was" "/" "$(val cgroup "$T/c3.probe")"
check_eq "  required + strict: PAM_SESSION_ERR" "PAM_SESSION_ERR" "$(val open "$T/c3.strict")"
log_has "  logged: no cpu controller" "no cpu controller available \\(cgroup2 at /sys/fs/cgroup lacks cpu\\), session not grouped"
check "enter in a session-leading shell: nothing to do, exit 0" grep -qx "rc=0" "$T/c3.enter"
check "  (--verbose says why)" grep -q "nothing to do" "$T/c3.enter"
check_eq "container-init: exit 1, the runtime has to delegate cpu" "1 yes" \
        "$(cat "$T/c3.init.rc" 2>/dev/null) $(grep -q 'does not offer the cpu controller' "$T/c3.init" && echo yes)"
check_eq "nothing was created in the container" "" "$(cat "$T/c3.dirs" 2>/dev/null)"
rm_cgroup_tree "$NC"
check "the container's cgroups are removed" test ! -e "$NC"

section "1e. no cgroup file system (a mount namespace with an empty /sys/fs/cgroup)"
: >"$SYSLOG"
unshare -m --propagation private sh -c "mount -t tmpfs none /sys/fs/cgroup || exit 3
        '$AGDRV' --pam '$T' agprobe $UA open cgroup close >$T/nf.probe 2>&1
        '$AGDRV' --pam '$T' agstrict $UA open close >$T/nf.strict 2>&1
        setpriv --reuid=$IA --regid=$(id -g "$UA") --init-groups setsid -w sh -c '\"$HELPER\" enter --verbose --pid \$\$; echo rc=\$?' >$T/nf.enter 2>&1" \
        >"$T/nf.out" 2>&1
echo "# rc $?: $(cat "$T/nf.out")"
sed 's/^/# enter: /' "$T/nf.enter" 2>/dev/null
check_eq "login, module optional: PAM_IGNORE (through the probe stack)" "PAM_SUCCESS" "$(val open "$T/nf.probe")"
check_eq "  required + strict: PAM_SESSION_ERR" "PAM_SESSION_ERR" "$(val open "$T/nf.strict")"
log_has "  logged: no cgroup file system" "no cgroup filesystem is mounted, session not grouped"
check_eq "enter: nothing to do (no cgroup hierarchy), exit 0" "no cgroup hierarchy: nothing to do rc=0" "$(tr '\n' ' ' <"$T/nf.enter" | sed 's/ $//')"

section "2. cgroup v1 with cpu and cpuacct mounted together"
# cpu can be bound to a v1 hierarchy only when no v2 cgroup uses it: this
# guest has no other cgroups now, so turn it off at the v2 root.
left=$(find "$CG2" -mindepth 1 -type d | head -n 3 | tr '\n' ' ')
[ -z "$left" ] || echo "# v2 cgroups still present: $left"
echo -cpu >"$CG2/cgroup.subtree_control" 2>"$T/v1.err"
mkdir -p "$V1"
restore_v2() { umount "$V1" 2>/dev/null; rmdir "$V1" 2>/dev/null; echo +cpu >"$CG2/cgroup.subtree_control" 2>/dev/null; }
trap 'ag_cleanup; restore_v2' EXIT
for _ in $(seq 100); do
        mount -t cgroup -o cpu,cpuacct agv1 "$V1" 2>>"$T/v1.err" && break
        sleep 0.1       # the v2 cpu state of removed cgroups goes away asynchronously
done
if ! grep -qE " $V1 .* - cgroup agv1 .*cpu,cpuacct" /proc/self/mountinfo; then
        not_ok "mount a v1 cpu,cpuacct hierarchy ($(tail -n1 "$T/v1.err"))"
        finish
fi
AG_CGROOTS="$AG_CGROOTS $V1/$ROOT"
ok "cpu and cpuacct bound together to a v1 hierarchy at $V1"
check_not "cgroup v2 no longer offers cpu" grep -qw cpu "$CG2/cgroup.controllers"
: >"$SYSLOG"
"$AGDRV" --pam "$T" agtest "$UB" open env cgroup \
        run-user "i=0; while [ \$i -lt 300000 ]; do i=\$((i+1)); done; sleep 600 & echo \$! >$U/v1.sleep" \
        wait-file "$T/v1.go" close cgroup >"$T/v1.out" 2>&1 &
PV1=$!; track_pid "$PV1"
wait_for "$U/v1.sleep" '^[0-9]+$'; VS=$(cat "$U/v1.sleep" 2>/dev/null); track_pid "$VS"
S=$(val AUTOGROUP_SESSION "$T/v1.out")
check_eq "login: PAM_SUCCESS" "PAM_SUCCESS" "$(val open "$T/v1.out")"
log_has "the module found the v1 hierarchy in mountinfo" "using cgroup v1 hierarchy at $V1\$"
check_eq "the caller in login/ of the v1 tree" "$S/login" "$(val cgroup "$T/v1.out")"
check "/proc/PID/cgroup names the co-mounted controllers" grep -qx "[0-9]*:cpu,cpuacct:$S/login" "/proc/$VS/cgroup"
check_eq "user B's group: cpu.shares 4096 (weight 400)" 4096 "$(cat "$V1/$ROOT/user-$IB/cpu.shares" 2>/dev/null)"
check_eq "user B's group: cpu.cfs_quota_us 150000 (max 150%)" 150000 "$(cat "$V1/$ROOT/user-$IB/cpu.cfs_quota_us" 2>/dev/null)"
check_eq "  cpu.cfs_period_us 100000" 100000 "$(cat "$V1/$ROOT/user-$IB/cpu.cfs_period_us" 2>/dev/null)"
check_eq "the session: cpu.shares 1024" 1024 "$(cat "$V1$S/cpu.shares" 2>/dev/null)"
check_eq "the session, its cgroup.procs and tasks stay root's (delegate=yes is refused on v1)" "root root root" \
        "$(owner "$V1$S") $(owner "$V1$S/cgroup.procs") $(owner "$V1$S/tasks")"
check_eq "  its leaves are root's but their cgroup.procs, the user's" "root $UB root" \
        "$(owner "$V1$S/leaf-1") $(owner "$V1$S/leaf-1/cgroup.procs") $(owner "$V1$S/leaf-1/tasks")"
check_eq "  its cpu.shares and cpuacct.usage stay root's" "root root" "$(owner "$V1$S/cpu.shares") $(owner "$V1$S/cpuacct.usage")"
check "cpuacct counts the session's CPU time" test "$(cat "$V1$S/cpuacct.usage" 2>/dev/null || echo 0)" -gt 0
"$HELPER" --root "$ROOT" status --json >"$T/v1.json" 2>&1
"$HELPER" --root "$ROOT" status >"$T/v1.status" 2>&1
check_eq "status: v1 at $V1, CPU time from cpuacct.usage" "1 $V1 cpuacct.usage" \
        "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["version"], j["hierarchy"], j["cpu_source"])' "$T/v1.json" 2>&1)"
cpu=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
for u in t["children"]:
    for s in u["children"]:
        if s["path"] == sys.argv[2]:
            print(s["cpu_usec"])
' "$T/v1.json" "$S" 2>&1)
check "status: the session's CPU used is a number > 0 (got '$cpu')" test "$cpu" -gt 0
check "status (text): the session's row ends with a time, not '-'" grep -qE "$(basename "$S") .*[0-9](ms|s)\$" "$T/v1.status"
as_user "$UB" "echo 262144 > $V1$S/cpu.shares" 2>/dev/null
check_eq "the user cannot raise the session's shares" 1024 "$(cat "$V1$S/cpu.shares" 2>/dev/null)"
"$AGDRV" --pam "$T" agtest "$UA" open env cgroup run-user "$(term_cmd v1t "$V1")" close cgroup >"$T/v1t.out" 2>&1
tab_checks v1t "$V1" 1024 leaf-1
# the latency lane (D at interactive 2): a command of D's login in it uses CPU
# there, which cpuacct counts in the lane's own group, not in the session's
# (a short loop: the lane's 10% cap stretches it tenfold under TCG)
printf '%s  interactive  2\n' "$UD" >"$T/lane.conf"; chmod 644 "$T/lane.conf"
pam_service aglane "root=$ROOT conf=$T/lane.conf debug"
cat >"$T/v1lane.sh" <<LANE
export AUTOGROUP_SESSION="\$(sed -n 's/^AUTOGROUP_SESSION=//p' $T/v1lane.out)"
export AUTOGROUP_INTERACTIVE="\$(sed -n 's/^AUTOGROUP_INTERACTIVE=//p' $T/v1lane.out)"
$HELPER --root $ROOT run --latency audio -- sh -c 'grep cpu /proc/self/cgroup >$U/v1lane.where; i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done'
echo done >$U/v1lane.ready
LANE
chmod 644 "$T/v1lane.sh"
"$AGDRV" --pam "$T" aglane "$UD" open env cgroup run-user "sh $T/v1lane.sh" wait-file "$T/v1lane.go" close cgroup \
        >"$T/v1lane.out" 2>&1 &
PVL=$!; track_pid "$PVL"
wait_for "$U/v1lane.ready" '^done$'
LV1="$V1/$ROOT.lane-$ID"
AG_CGROOTS="$AG_CGROOTS $LV1"
check_eq "D (interactive 2): its lane beside the tree, cap 10%" "10000 100000" "$(cat "$LV1/cpu.cfs_quota_us" "$LV1/cpu.cfs_period_us" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
check "  run --latency audio ran in it" grep -qx "[0-9]*:cpu,cpuacct:/$ROOT.lane-$ID" "$U/v1lane.where"
lane_ns=$(cat "$LV1/cpuacct.usage" 2>/dev/null)
check "  the lane's own cpuacct.usage counts it (got '$lane_ns')" test "${lane_ns:-0}" -gt 0
"$HELPER" --root "$ROOT" status --json >"$T/v1lane.json" 2>&1
"$HELPER" --root "$ROOT" status >"$T/v1lane.status" 2>&1
"$HELPER" --root "$ROOT" metrics >"$T/v1lane.prom" 2>&1
lane=$(python3 -c '
import json, sys
for u in json.load(open(sys.argv[1]))["tree"]["children"]:
    if u.get("uid") == int(sys.argv[2]) and u["lane"]:
        l = u["lane"]; print(l["path"], l["cap_percent"], 1 if (l["cpu_usec"] or 0) > 0 else 0)
' "$T/v1lane.json" "$ID" 2>&1)
check_eq "status --json: D's lane, 10%, its CPU time > 0" "/$ROOT.lane-$ID 10 1" "$lane"
check "status: the lane's row ends with a time, not '-'" grep -qE "/$ROOT\.lane-$ID \(latency lane\) .* 10% .*[0-9](ms|s)\$" "$T/v1lane.status"
check "status: the line below says the lane's time is its own" grep -qx "A latency lane's time is its own, beside the tree: not in its user's group's." "$T/v1lane.status"
check "metrics: autogroup_lane_cpu_seconds_total of D's lane" \
        grep -qE "^autogroup_lane_cpu_seconds_total\{root=\"$ROOT\",uid=\"$ID\",user=\"$UD\"\} [0-9.]+\$" "$T/v1lane.prom"
touch "$T/v1lane.go"; wait "$PVL" 2>/dev/null
check_eq "D's last close: its lane goes" "" "$(ls -d "$LV1" 2>/dev/null)"
log_has "  with its accounting record, scope=lane, what it used" \
        "lane /$ROOT\.lane-$ID removed: user=$UD scope=lane cpu_usec=[1-9][0-9]* user_usec=[0-9?]+ system_usec=[0-9?]+ wall_usec=\? uid=$ID state=removed cgroup=/$ROOT\.lane-$ID pool=- by=sweep"
kill "$VS" 2>/dev/null; for _ in $(seq 100); do [ -d "/proc/$VS" ] || break; sleep 0.05; done
touch "$T/v1.go"; wait "$PV1" 2>/dev/null
check_eq "logout: PAM_SUCCESS" "PAM_SUCCESS" "$(val close "$T/v1.out")"
check "the session and the user group are removed" test ! -e "$V1$S" -a ! -e "$V1/$ROOT/user-$IB"
rmdir "$V1/$ROOT" 2>/dev/null
umount "$V1" && rmdir "$V1"
check "the v1 hierarchy is unmounted" test ! -e "$V1"
echo +cpu >"$CG2/cgroup.subtree_control" 2>/dev/null
finish
