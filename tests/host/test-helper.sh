#!/bin/bash
# Host tests of the unprivileged helper "autogroup" and the session hook: real
# libpam sessions opened through pam_autogroup.so (tests/host/agdrv), real
# cgroup v1 cpu hierarchy, real tmux, and a throw-away user acting inside.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
[ -f "$CPU/cpu.shares" ] || { echo "1..0 # SKIP no cgroup v1 cpu hierarchy at $CPU"; exit 77; }

HELPER="$abs_top_builddir/helper/autogroup"
[ -x "$HELPER" ] || { echo "1..0 # SKIP $HELPER not built"; exit 77; }
ROOT="agtest-$$"
CG="$CPU/$ROOT"
OUT="$CPU/agout-$$"             # an unrelated cgroup outside <root> that must survive
AG_CGROOTS="$CG $OUT"
AG="$HELPER --root $ROOT"

add_group "${TAG}g"
add_user "${TAG}a" "${TAG}g"
add_user "${TAG}b"
UA="${TAG}a"; UB="${TAG}b"
IA=$(id -u "$UA"); IB=$(id -u "$UB")

CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
# explain: one item from each class
*               weight   100
*               max      300%
*               idle     no
@${TAG}g        weight   50
@${TAG}g        max      200%
$UA             weight   300
$UA             weight   400
CONF
chmod 644 "$CONF"
printf '%s required pam_deny.so\n' auth account password session >"$T/other"
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s delegate=yes\n' "$AG_MODULE" "$ROOT" "$CONF" >"$T/agtest"
drv() { "$AGDRV" --pam "$T" "$@"; }
# bg NAME USER ACTIONS...: a session that stays open until $T/NAME.go exists
bg() {
        local n="$1" u="$2"; shift 2
        drv agtest "$u" open env cgroup "$@" wait-file "$T/$n.go" close cgroup >"$T/$n.out" 2>&1 &
        track_pid $!
        eval "PID_$n=$!"
        wait_for "$T/$n.out" '^cgroup='
}
val() { sed -n "s/^$1=//p" "$T/$2.out" | head -n1; }
cgof() { sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$1/cgroup" 2>/dev/null; }
# wait_cg PID PATTERN: wait (at most 30 s) until PID's cpu cgroup matches PATTERN
wait_cg() {
        local i
        for i in $(seq 600); do cgof "$1" | grep -qE -- "$2" && return 0; sleep 0.05; done
        return 1
}
# hooks as installed, but calling the helper of the build tree
HOOK_SH="$T/autogroup-hook.sh"; HOOK_RC="$T/autogroup.bashrc"
sed "s|@bindir@|$abs_top_builddir/helper|g; s|@pkgdatadir@|$T|g" "$abs_top_srcdir/conf/autogroup-hook.sh.in" >"$HOOK_SH"
sed "s|@bindir@|$abs_top_builddir/helper|g; s|@pkgdatadir@|$T|g" "$abs_top_srcdir/conf/autogroup.bashrc.in" >"$HOOK_RC"
chmod 644 "$HOOK_SH" "$HOOK_RC"

# A stand-in for a terminal tab's shell: run with setsid as the user, it calls
# enter twice, records what it saw, then waits.
cat >"$T/tab.sh" <<EOF
n=\$1
$AG enter --pid \$\$ >$U/\$n.out1 2>&1; echo \$? >$U/\$n.rc1
grep ':cpu:' /proc/\$\$/cgroup | cut -d: -f3 >$U/\$n.cg1
$AG enter --pid \$\$ --verbose >$U/\$n.out2 2>&1; echo \$? >$U/\$n.rc2
grep ':cpu:' /proc/\$\$/cgroup | cut -d: -f3 >$U/\$n.cg2
echo \$\$ >$U/\$n.pid
exec sleep 600
EOF
# A session leader that only waits (in login/), for the attacks.
cat >"$T/idle.sh" <<EOF
echo \$\$ >$U/\$1.pid
exec sleep 600
EOF
chmod 644 "$T/tab.sh" "$T/idle.sh"

echo "# 1. two setsid shells of one login get two distinct leaves"
bg a1 "$UA" spawn-user "setsid sh $T/tab.sh t1 & setsid sh $T/tab.sh t2 & setsid sh $T/idle.sh ia & setsid sh $T/idle.sh rt &"
S1=$(val AUTOGROUP_SESSION a1)
check "session of user A opened" grep -q '^open=PAM_SUCCESS' "$T/a1.out"
wait_for "$U/t1.pid" '^[0-9]+$'; wait_for "$U/t2.pid" '^[0-9]+$'
wait_for "$U/ia.pid" '^[0-9]+$'; wait_for "$U/rt.pid" '^[0-9]+$'
P1=$(cat "$U/t1.pid"); P2=$(cat "$U/t2.pid"); PIA=$(cat "$U/ia.pid"); PRT=$(cat "$U/rt.pid")
track_pid "$P1" "$P2" "$PIA" "$PRT"
check_eq "first shell in its own leaf" "$S1/sid-$P1" "$(cat "$U/t1.cg1")"
check_eq "second shell in its own leaf" "$S1/sid-$P2" "$(cat "$U/t2.cg1")"
check "the two leaves are distinct" test "$(cat "$U/t1.cg1")" != "$(cat "$U/t2.cg1")"
check_eq "enter exits 0" "0 0" "$(cat "$U/t1.rc1") $(cat "$U/t2.rc1")"
check_eq "enter prints nothing" "" "$(cat "$U/t1.out1" "$U/t2.out1")"
check_eq "leaf directory owned by the user" "$UA" "$(stat -c %U "$CPU$S1/sid-$P1")"
check_eq "leaf's cpu.shares default" 1024 "$(cat "$CPU$S1/sid-$P1/cpu.shares")"
check_eq "second enter: exit 0" "0" "$(cat "$U/t1.rc2")"
check "second enter: already in its leaf" grep -q "already in its leaf" "$U/t1.out2"
check_eq "second enter: same cgroup" "$(cat "$U/t1.cg1")" "$(cat "$U/t1.cg2")"
before=$(ls "$CPU$S1" | sort | tr '\n' ' '); before_cg="$(cgof "$P1") $(cgof "$P2")"
as_user "$UA" "$AG enter --pid $P1 && $AG enter --pid $P2" >"$T/again.out" 2>&1
check_eq "enter again: nothing printed" "" "$(cat "$T/again.out")"
check_eq "enter again: no group made or removed" "$before" "$(ls "$CPU$S1" | sort | tr '\n' ' ')"
check_eq "enter again: nobody moved" "$before_cg" "$(cgof "$P1") $(cgof "$P2")"
check_eq "a shell that did not enter stays in login/" "$S1/login" "$(cgof "$PIA")"

echo "# 2. empty sibling leaves are removed by the next enter"
as_user "$UA" "mkdir $CPU$S1/sid-999999 $CPU$S1/mine"
kill "$P2"; for _ in $(seq 200); do [ -d "/proc/$P2" ] || break; sleep 0.05; done
as_user "$UA" "echo \$\$ > $CPU$S1/login/cgroup.procs; setsid sh $T/tab.sh t3 &"
wait_for "$U/t3.pid" '^[0-9]+$'; P3=$(cat "$U/t3.pid"); track_pid "$P3"
check_eq "third shell in its own leaf" "$S1/sid-$P3" "$(cgof "$P3")"
check "empty leaf of an ended shell removed" test ! -e "$CPU$S1/sid-$P2"
check "empty stale sid-* leaf removed" test ! -e "$CPU$S1/sid-999999"
check "busy leaf kept" test -d "$CPU$S1/sid-$P1"
check "login/ kept" test -d "$CPU$S1/login"
check "a group the user named otherwise is left alone" test -d "$CPU$S1/mine"
rmdir "$CPU$S1/mine"

echo "# 2b. 20 shells entering at once (sweeps race with fresh leaves)"
as_user "$UA" "echo \$\$ > $CPU$S1/login/cgroup.procs; for i in \$(seq 20); do setsid sh $T/tab.sh c\$i & done"
good=0
for i in $(seq 20); do
        wait_for "$U/c$i.pid" '^[0-9]+$' || continue
        p=$(cat "$U/c$i.pid"); track_pid "$p"
        [ "$(cat "$U/c$i.cg1")" = "$S1/sid-$p" ] && [ "$(cat "$U/c$i.rc1")" = 0 ] && [ ! -s "$U/c$i.out1" ] && good=$((good + 1))
done
check_eq "all 20 concurrent shells in their own leaves, silently" 20 "$good"
for i in $(seq 20); do kill "$(cat "$U/c$i.pid" 2>/dev/null)" 2>/dev/null; done

echo "# 3. enter outside any pam_autogroup session: exit 0, silent"
out=$("$HELPER" enter 2>&1); rc=$?
check_eq "as root: exit 0" 0 "$rc"; check_eq "as root: no output" "" "$out"
out=$(setsid sh -c "'$HELPER' enter --pid \$\$" 2>&1); rc=$?
check_eq "as root, session leader: exit 0, no output" "0:" "$rc:$out"
out=$(as_user "$UA" "setsid sh -c '$AG enter --pid \$\$; echo rc=\$?; grep :cpu: /proc/\$\$/cgroup'" 2>&1)
check_eq "as the user, session leader outside: exit 0, silent, not moved" "rc=0 1:cpu:/" "$(echo $out)"
out=$(as_user "$UA" "$AG enter" 2>&1); rc=$?
check_eq "as the user, not a session leader: exit 0, no output" "0:" "$rc:$out"
out=$(as_user "$UA" "setsid sh -c 'AUTOGROUP_SESSION=$S1 $AG enter --pid \$\$; echo rc=\$?; grep :cpu: /proc/\$\$/cgroup'" 2>&1)
check_eq "AUTOGROUP_SESSION in the environment is not trusted" "rc=0 1:cpu:/" "$(echo $out)"
out=$(unshare -m --propagation private sh -c "mount -t tmpfs none /sys/fs/cgroup && setsid sh -c '$AG enter --pid \$\$'" 2>&1); rc=$?
check_eq "no cgroup filesystem at all: exit 0, no output" "0:" "$rc:$out"
out=$(unshare -m --propagation private sh -c "mount -t tmpfs none /sys/fs/cgroup && setsid sh -c '$AG enter --verbose --pid \$\$'" 2>&1); rc=$?
check_eq "  because there is no cgroup hierarchy (--verbose)" "0:no cgroup hierarchy: nothing to do" "$rc:$out"

echo "# 4. the session hook"
hook_cg() { # hook_cg DESCRIPTION EXPECTED-PATTERN SHELL-COMMAND: run as the user inside session a1
        as_user "$UA" "echo \$\$ > $CPU$S1/login/cgroup.procs; export AUTOGROUP_SESSION=$S1; $3" >"$T/hook.out" 2>&1
        if grep -qE -- "$2" "$U/hook.cg" 2>/dev/null; then ok "$1"; else not_ok "$1 (cgroup: $(cat "$U/hook.cg" 2>/dev/null))"; fi
        rm -f "$U/hook.cg"
}
REC="grep :cpu: /proc/\\\$\\\$/cgroup | cut -d: -f3 > $U/hook.cg"
hook_cg "bash.bashrc hook: interactive session leader gets its leaf" "^$S1/sid-[0-9]+\$" \
        "setsid bash --rcfile $HOOK_RC -ic \"$REC\""
hook_cg "profile.d hook under dash (ENV): interactive session leader gets its leaf" "^$S1/sid-[0-9]+\$" \
        "ENV=$HOOK_SH setsid dash -ic \"$REC\""
hook_cg "profile.d hook read by bash" "^$S1/sid-[0-9]+\$" \
        "setsid bash --noprofile --rcfile $HOOK_SH -ic \"$REC\""
hook_cg "hook: a non-interactive shell stays in login/" "^$S1/login\$" \
        "setsid bash -c \". $HOOK_RC; $REC\""
hook_cg "hook: an interactive shell that does not lead its session stays" "^$S1/login\$" \
        "bash --rcfile $HOOK_RC -ic \"$REC\""
hook_cg "hook: AUTOGROUP_HOOK=0 opts out" "^$S1/login\$" \
        "AUTOGROUP_HOOK=0 setsid bash --rcfile $HOOK_RC -ic \"$REC\""
as_user "$UA" "echo \$\$ > $CPU$S1/login/cgroup.procs; export AUTOGROUP_SESSION=$S1; cd $U && setsid bash --rcfile $HOOK_RC -ic true" >"$T/hook.err1" 2>&1
as_user "$UA" "cd $U && setsid bash --rcfile /dev/null -ic true" >"$T/hook.err2" 2>&1
check "hook adds no output to a shell start" cmp -s "$T/hook.err1" "$T/hook.err2"
as_user "$UA" "echo \$\$ > $CPU$S1/login/cgroup.procs; export AUTOGROUP_SESSION=$S1; cd $U && ENV=$HOOK_SH setsid dash -ic true" >"$T/hook.err3" 2>&1
as_user "$UA" "cd $U && ENV=/dev/null setsid dash -ic true" >"$T/hook.err4" 2>&1
check "hook under dash: no output" cmp -s "$T/hook.err3" "$T/hook.err4"
if command -v zsh >/dev/null; then
        hook_cg "zshrc hook under zsh" "^$S1/sid-[0-9]+\$" "setsid zsh -f -ic \". $HOOK_RC; $REC\""
else
        skip "zsh not installed"
fi

echo "# 5. a real tmux server with two windows: one leaf per pane"
if command -v tmux >/dev/null; then
        TM="tmux -S $U/tmux.sock -f /dev/null"
        # what a login shell gets from PAM: AUTOGROUP_SESSION (agdrv does not pass the PAM environment on)
        bg tm "$UA" spawn-user "cd $U && s=\$(grep :cpu: /proc/self/cgroup | cut -d: -f3) && export HOME=$U AUTOGROUP_SESSION=\${s%/login} && $TM new-session -d -x 80 -y 24 'exec bash --rcfile $HOOK_RC -i' && $TM new-window 'exec bash --rcfile $HOOK_RC -i' && touch $U/tmux.up"
        ST=$(val AUTOGROUP_SESSION tm)
        for _ in $(seq 600); do [ -e "$U/tmux.up" ] && break; sleep 0.05; done
        PANES=$(as_user "$UA" "$TM list-panes -a -F '#{pane_pid}'" 2>/dev/null | sort -n | tr '\n' ' ')
        set -- $PANES
        check_eq "tmux runs two panes" 2 "$#"
        for p in $PANES; do
                wait_cg "$p" "sid-$p\$"
                check_eq "pane shell $p in its own leaf" "$ST/sid-$p" "$(cgof "$p")"
        done
        SRV=$(as_user "$UA" "$TM display-message -p '#{pid}'" 2>/dev/null)
        check_eq "the tmux server stays in login/" "$ST/login" "$(cgof "$SRV")"
        as_user "$UA" "$AG status" >"$T/status.txt" 2>&1
        for p in $PANES; do check "status lists the leaf of pane $p" grep -q "sid-$p " "$T/status.txt"; done
        check "status shows the session" grep -q "$(basename "$ST")" "$T/status.txt"
        check "status is drawn as a tree" grep -qE '(└─|`-)' "$T/status.txt"
        check "status notes that it shows only the user's groups" grep -q "only the groups of user-$IA" "$T/status.txt"
        as_user "$UA" "$AG status --json" >"$T/status.json" 2>&1
        check "status --json is valid JSON" python3 -m json.tool "$T/status.json"
        leaves=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
for u in t["children"]:
    for s in u["children"]:
        if s["path"] == sys.argv[2]:
            print(" ".join(sorted(c["name"] for c in s["children"])))
' "$T/status.json" "$ST")
        set -- $PANES
        check_eq "status --json: login/ plus one leaf per pane" "login sid-$1 sid-$2" "$leaves"
        check_eq "status --json: leaf weight" 100 "$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tree"]; print(t["children"][0]["children"][0]["children"][0]["weight"])' "$T/status.json")"
        as_user "$UA" "$TM kill-server" >/dev/null 2>&1
        for p in $PANES $SRV; do for _ in $(seq 600); do [ -d "/proc/$p" ] || break; sleep 0.05; done; done
        check "tmux server and panes gone" test ! -d "/proc/$SRV"
        touch "$T/tm.go"; wait "$PID_tm" 2>/dev/null
        check "the tmux session is removed at close" test ! -e "$CPU$ST"
else
        skip "tmux not installed"
fi

echo "# 6. status: root sees every user, a user only their own"
bg b1 "$UB" spawn-user "setsid sh $T/idle.sh ib &"
SB=$(val AUTOGROUP_SESSION b1)
wait_for "$U/ib.pid" '^[0-9]+$'; PIB=$(cat "$U/ib.pid"); track_pid "$PIB"
$AG status >"$T/rstatus.txt" 2>&1
check "root's status lists user A" grep -q "user-$IA ($UA)" "$T/rstatus.txt"
check "root's status lists user B" grep -q "user-$IB ($UB)" "$T/rstatus.txt"
check "root's status shows the user group's weight and shares" grep -qE "user-$IA \($UA\) +400 +4096 " "$T/rstatus.txt"
as_user "$UA" "$AG status" >"$T/astatus.txt" 2>&1
check_not "user A's status does not list user B" grep -q "user-$IB" "$T/astatus.txt"
check_not "user A cannot ask for user B's groups" as_user "$UA" "$AG status --user $UB"
$AG status --user "$UB" --json >"$T/bstatus.json" 2>&1
check "root: status --user --json is valid JSON" python3 -m json.tool "$T/bstatus.json"
check_eq "root: status --user shows only that user" "user-$IB" \
        "$(python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(open(sys.argv[1]))["tree"]["children"]))' "$T/bstatus.json")"

echo "# 7. attacks as the user: moving processes"
out=$(as_user "$UA" "$AG enter --pid $PIB" 2>&1); rc=$?
check_eq "enter --pid of another user's process: exit 0, silent" "0:" "$rc:$out"
check_eq "  and that process stays in its own session" "$SB/login" "$(cgof "$PIB")"
# enter_refused WHAT CMD...: CMD, started as root as the leader of a session
# of its own in the user's login/, is WHAT; the user's "enter --pid" leaves
# it there, silently. Its pid in LP.
enter_refused() {
        local what=$1 out rc
        shift
        setsid "$@" & LP=$!; track_pid "$LP"
        for _ in $(seq 100); do [ "$(ps -o sid= -p "$LP" | tr -d ' ')" = "$LP" ] && break; sleep 0.05; done
        echo "$LP" >"$CPU$S1/login/cgroup.procs"
        out=$(as_user "$UA" "$AG enter --pid $LP" 2>&1); rc=$?
        check_eq "enter --pid of $what: exit 0, silent" "0:" "$rc:$out"
        check_eq "  and it stays in login/" "$S1/login" "$(cgof "$LP")"
        check "  and no leaf was made for it" test ! -e "$CPU$S1/sid-$LP"
}
enter_refused "a root process in the user's session" sleep 600; RP=$LP
# What a set-user-ID program the user started is: real uid the user's,
# effective, saved and file system uids root's. enter (either mode) moves a
# process only when all four are the caller's; cgroup v1 itself would let
# the user move it (the writer's euid matches its real uid).
enter_refused "the user's process running as root (set-user-ID)" setpriv --ruid="$UA" sleep 600; SP=$LP
check_not "user cannot move a root process between own leaves" as_user "$UA" "echo $RP > $CPU$S1/sid-$P1/cgroup.procs"
check_not "user cannot move own process into another user's session" as_user "$UA" "echo $PIA > $CPU$SB/login/cgroup.procs"
check_not "user cannot move another user's process into own session" as_user "$UA" "echo $PIB > $CPU$S1/login/cgroup.procs"
check_not "user cannot make a leaf in another user's session" as_user "$UA" "mkdir $CPU$SB/sid-1"
check_not "user cannot move a process into <root>" as_user "$UA" "echo $PIA > $CG/cgroup.procs"
check_not "user cannot move a process into own user group" as_user "$UA" "echo $PIA > $CPU/$ROOT/user-$IA/cgroup.procs"
check_not "user cannot move a process to the root cgroup" as_user "$UA" "echo $PIA > $CPU/cgroup.procs"
check_not "user cannot move a process to the root cgroup (tasks)" as_user "$UA" "echo $PIA > $CPU/tasks"
check_eq "  after all that, the user's process is where it was" "$S1/login" "$(cgof "$PIA")"
check_not "--root with a path is refused" as_user "$UA" "$HELPER --root $ROOT/user-$IB enter --pid $PIA"
check_not "--root .. is refused" as_user "$UA" "$HELPER --root .. enter --pid $PIA"
out=$(as_user "$UA" "$HELPER --root agout-$$ enter --pid $PIA" 2>&1); rc=$?
check_eq "--root naming another tree: nothing happens" "0::$S1/login" "$rc:$out:$(cgof "$PIA")"

echo "# 8. attacks as the user: weights"
check_not "user cannot raise the session's weight" as_user "$UA" "echo 262144 > $CPU$S1/cpu.shares"
check_not "user cannot raise the user group's weight" as_user "$UA" "echo 262144 > $CPU/$ROOT/user-$IA/cpu.shares"
check_not "user cannot chmod the session's cpu.shares" as_user "$UA" "chmod 666 $CPU$S1/cpu.shares"
check_not "user cannot lift the session's cap" as_user "$UA" "echo -1 > $CPU$S1/cpu.cfs_quota_us"
check_not "user cannot clear the idle flag" as_user "$UA" "echo 0 > $CPU$S1/cpu.idle"
as_user "$UA" "echo 262144 > $CPU$S1/sid-$P1/cpu.shares" 2>/dev/null
check_eq "a weight inside the session does not change the session's" 1024 "$(cat "$CPU$S1/cpu.shares")"
check_eq "  nor the user group's (user rule weight 400)" 4096 "$(cat "$CPU/$ROOT/user-$IA/cpu.shares")"

echo "# 9. real-time tasks (CONFIG_RT_GROUP_SCHED): left where they are"
if [ -f "$CPU/cpu.rt_runtime_us" ]; then
        check_not "a group without RT budget refuses SCHED_FIFO" chrt -f -p 10 "$PRT"
        # give the path to login/ a small RT budget; leaves the helper makes get none
        for d in "$CG" "$CPU/$ROOT/user-$IA" "$CPU$S1" "$CPU$S1/login"; do echo 10000 >"$d/cpu.rt_runtime_us"; done
        if chrt -f -p 10 "$PRT"; then
                out=$(as_user "$UA" "$AG enter --pid $PRT" 2>&1); rc=$?
                check_eq "enter of a SCHED_FIFO shell: exit 0, silent" "0:" "$rc:$out"
                check_eq "  it stays in login/" "$S1/login" "$(cgof "$PRT")"
                check "  no leaf left behind" test ! -e "$CPU$S1/sid-$PRT"
                as_user "$UA" "$AG enter --pid $PRT -v" >"$T/rt.out" 2>&1
                check "  --verbose says why" grep -q real-time "$T/rt.out"
                chrt -o -p 0 "$PRT"
        else
                not_ok "could not make a SCHED_FIFO task in login/ with an RT budget"
        fi
        kill "$PRT" 2>/dev/null
        for _ in $(seq 100); do [ -d "/proc/$PRT" ] || break; sleep 0.05; done
        for d in "$CPU$S1/login" "$CPU$S1" "$CPU/$ROOT/user-$IA" "$CG"; do echo 0 >"$d/cpu.rt_runtime_us"; done
else
        skip "no cpu.rt_runtime_us: kernel without RT group scheduling"
fi

echo "# 10. crafted directories in the delegated subtree vs. gc and close (as root)"
mkdir -p "$OUT/user-$IA/login" "$OUT/user-0" "$OUT/autogroup"
as_user "$UA" "cd $CPU$S1 && mkdir -p user-0/login 'user-$IB/$(basename "$SB")/login' login/login ... ..x ' ' \"\$(printf 'x\\033[31my')\" sid-12345/sid-1 && mkdir -p deep/d/d/d/d/d/d/d/d/d/d/d/d" \
        >"$T/craft.out" 2>&1

check "user crafted a tree in own session" test -d "$CPU$S1/deep/d/d/d/d/d/d/d/d/d/d/d/d"
$AG status >"$T/craft-status.txt" 2>&1
check_not "status escapes control characters in names" grep -q $'\033' "$T/craft-status.txt"
$AG status --json >"$T/craft-status.json" 2>&1
check "status --json stays valid with crafted names" python3 -m json.tool "$T/craft-status.json"
$AG gc >"$T/gc1.out" 2>&1; rc=$?
check_eq "gc as root: exit 0" 0 "$rc"
check "gc prints a count line" grep -qE '^[0-9]+ groups? removed$' "$T/gc1.out"
check_not "gc removed nothing outside <root>" grep -v "^removed /$ROOT/user-$IA/\|^[0-9]* groups\? removed" "$T/gc1.out"
check "user B's live session survives gc" test -d "$CPU$SB/login"
check_eq "  with its process" "$SB/login" "$(cgof "$PIB")"
check "user A's live session survives gc" test -d "$CPU$S1/login"
check "unrelated cgroups outside <root> survive gc" test -d "$OUT/user-$IA/login" -a -d "$OUT/user-0" -a -d "$OUT/autogroup"
# close as root with a hostile tree inside (processes still there: the session stays)
kill "$P1" "$P3" "$PIA" "$RP" "$SP" 2>/dev/null
for p in $P1 $P3 $PIA $RP $SP; do for _ in $(seq 100); do [ -d "/proc/$p" ] || break; sleep 0.05; done; done
touch "$T/a1.go"; wait "$PID_a1" 2>/dev/null
check "close with a deep crafted tree: session kept (bounded), not followed" test -d "$CPU$S1/deep"
check "close: user B's session survives" test -d "$CPU$SB/login"
check "close: unrelated cgroups outside <root> survive" test -d "$OUT/user-$IA/login" -a -d "$OUT/user-0" -a -d "$OUT/autogroup"
check "close: nothing named like the crafted dirs appeared at the hierarchy root" test ! -e "$CPU/user-0" -a ! -e "$CPU/login"
as_user "$UA" "cd $CPU$S1 && find deep -depth -type d -exec rmdir {} +" >/dev/null 2>&1
$AG gc >"$T/gc2.out" 2>&1
# close started a watcher for the session it left, so the watcher may remove
# the emptied session before gc runs: whoever removed it, it is gone and, when
# gc did, gc reported it
check "the emptied session is gone after gc (gc reports it when it removed it)" \
        sh -c "test ! -e '$CPU$S1' && { grep -qx 'removed $S1' '$T/gc2.out' || ! grep -q '^removed $S1/' '$T/gc2.out'; }"
check "the empty user group is gone after gc" test ! -e "$CPU/$ROOT/user-$IA"
check "  user B's session still there" test -d "$CPU$SB/login"
check "  the outside cgroups still there" test -d "$OUT/user-$IA/login"
mkdir "$CPU/$ROOT/user-$IB/pstale"
$AG gc >"$T/gc3.out" 2>&1
check "gc lists a removed stale session" grep -qx "removed /$ROOT/user-$IB/pstale" "$T/gc3.out"
check "gc counts it" grep -qx "1 group removed" "$T/gc3.out"
out=$(as_user "$UA" "$AG gc" 2>&1); rc=$?
check_eq "gc as a user: exit 1" 1 "$rc"
check "gc as a user: a clear refusal" sh -c "echo '$out' | grep -q 'only root'"

echo "# 11. check: every error with its line number"
BAD="$T/bad.conf"
cat >"$BAD" <<'CONF'
# line 1: comment
*       weight   100
alice   frobnicate 3
garbage
@       weight   5
bob     weight   0

*       max      12
carol   idle     maybe
10:5    sessions yes
dave    weight   50 extra
erin    weight   200
CONF
chmod 644 "$BAD"
mkdir -p "$T/bad.d"; printf '%s\n' "* idle no" "frank max lots" >"$T/bad.d/10-x.conf"; chmod 644 "$T/bad.d/10-x.conf"
"$HELPER" check "$BAD" >"$T/check.out" 2>&1; rc=$?
check_eq "check on a broken file: exit 1" 1 "$rc"
for l in 3 4 5 6 8 9 10 11; do check "check reports line $l" grep -q "^$BAD:$l: " "$T/check.out"; done
check_eq "check reports no good line" 8 "$(grep -c "^$BAD:[0-9]*: " "$T/check.out")"
check "check reports the drop-in's line 2" grep -q "^$T/bad.d/10-x.conf:2: " "$T/check.out"
"$HELPER" check "$CONF" >"$T/check-ok.out" 2>&1; rc=$?
check_eq "check on a good file: exit 0" 0 "$rc"
check_eq "check on a good file: one line" "$CONF: OK, 7 rules" "$(cat "$T/check-ok.out")"
printf '* weight 100\n' >"$T/ww.conf"; chmod 666 "$T/ww.conf"
"$HELPER" check "$T/ww.conf" >"$T/check-ww.out" 2>&1; rc=$?
check_eq "check refuses a world-writable file: exit 1" 1 "$rc"
check "  with a file-level message" grep -q "^$T/ww.conf: world-writable" "$T/check-ww.out"

echo "# 12. explain: the winning line for each item"
"$HELPER" explain --conf "$CONF" "$UA" >"$T/explain.out" 2>&1; rc=$?
check_eq "explain: exit 0" 0 "$rc"
check "weight from the user rule (the later of two)" grep -qE "^weight +400 +from $CONF:8 \(rule text: $UA weight 400\)" "$T/explain.out"
check "max from the group rule" grep -qE "^max +200% +from $CONF:6 \(rule text: @${TAG}g max 200%\)" "$T/explain.out"
check "idle from *" grep -qE "^idle +no +from $CONF:4 \(rule text: \* idle no\)" "$T/explain.out"
check "sessions from the default" grep -qE "^sessions +yes +default" "$T/explain.out"
check "resulting cgroup v1 values" grep -qx "cgroup v1: cpu.shares=4096 cpu.cfs_quota_us=200000 cpu.cfs_period_us=100000 cpu.idle=0" "$T/explain.out"
"$HELPER" explain --conf "$CONF" "$UB" >"$T/explain-b.out" 2>&1
check "a user matching only *: weight from *" grep -qE "^weight +100 +from $CONF:2 " "$T/explain-b.out"
check_not "explain of an unknown user fails" "$HELPER" explain --conf "$CONF" "nosuchuser-$$"
"$HELPER" explain --conf "$T/missing.conf" "$UA" >"$T/explain-missing.out" 2>&1; rc=$?
check_eq "explain of a missing config: exit 0" 0 "$rc"
check_eq "explain of a missing config: the header says what check says" \
        "config $T/missing.conf: does not exist, the built-in defaults apply" "$(head -n1 "$T/explain-missing.out")"
check "check of a missing config says the same" grep -qx "$T/missing.conf: does not exist, the built-in defaults apply" \
        <("$HELPER" check "$T/missing.conf")
check "explain of a missing config: weight from the default" grep -qE "^weight +100 +default" "$T/explain-missing.out"

echo "# 13. the helper finds root= by itself: AUTOGROUP_SESSION, verified against the real cgroup"
# $HELPER without --root; the module's root= is agtest-<pid>, not the default
bg h1 "$UA" spawn-user "setsid sh $T/idle.sh ih &"
SH=$(val AUTOGROUP_SESSION h1)
wait_for "$U/ih.pid" '^[0-9]+$'; PIH=$(cat "$U/ih.pid"); track_pid "$PIH"
# hint_shell NAME HINT: as user A inside session h1, a setsid shell with
# AUTOGROUP_SESSION=HINT runs enter and status without --root
hint_shell() {
        as_user "$UA" "echo \$\$ > $CPU$SH/login/cgroup.procs; export AUTOGROUP_SESSION='$2'; setsid sh -c '
                $HELPER enter --pid \$\$ >$U/$1.enter 2>&1; echo \$? >$U/$1.rc
                grep :cpu: /proc/\$\$/cgroup | cut -d: -f3 >$U/$1.cg
                $HELPER status >$U/$1.status 2>&1
                echo \$\$ >$U/$1.pid; exec sleep 600' &"
        wait_for "$U/$1.pid" '^[0-9]+$'; track_pid "$(cat "$U/$1.pid")"
}
hint_shell good "$SH"
PG=$(cat "$U/good.pid")
check_eq "enter without --root: the shell gets its leaf below root=$ROOT" "$SH/sid-$PG" "$(cat "$U/good.cg")"
check_eq "  exit 0, silent" "0:" "$(cat "$U/good.rc"):$(cat "$U/good.enter")"
check "status without --root shows the session of root=$ROOT" grep -q "$(basename "$SH")" "$U/good.status"
check "  and its leaf" grep -q "sid-$PG " "$U/good.status"
hint_shell nohint ""
check_eq "without AUTOGROUP_SESSION: the default root, nothing moves" "$SH/login" "$(cat "$U/nohint.cg")"
check_not "  status shows nothing of root=$ROOT" grep -q "$(basename "$SH")" "$U/nohint.status"
# a stale or hand-typed hint naming the session the shell is not in
hint_shell other "$SB"
check_eq "hint naming user B's session: nothing moves" "$SH/login" "$(cat "$U/other.cg")"
check_eq "  exit 0, silent" "0:" "$(cat "$U/other.rc"):$(cat "$U/other.enter")"
check_not "  status does not list user B" grep -q "user-$IB" "$U/other.status"
check "  user B's session untouched" test -z "$(find "$CPU$SB" -mindepth 1 -maxdepth 1 -name 'sid-*')"
# a tree outside <root> made to look like the module's, owned as the module would own it
mkdir -p "$OUT/user-$IA/fake/login"; chown "$UA" "$OUT/user-$IA/fake" "$OUT/user-$IA/fake/login" \
        "$OUT/user-$IA/fake/cgroup.procs" "$OUT/user-$IA/fake/login/cgroup.procs"
hint_shell fake "/agout-$$/user-$IA/fake"
check_eq "hint naming a look-alike tree the shell is not in: nothing moves" "$SH/login" "$(cat "$U/fake.cg")"
check "  no leaf made there" test -z "$(find "$OUT/user-$IA/fake" -mindepth 1 -maxdepth 1 -name 'sid-*')"
check_not "  status does not show that tree" grep -q "fake" "$U/fake.status"
for bad in "/$ROOT/user-$IA/../.." "/$ROOT/user-$IA/" "$ROOT/user-$IA" "/../user-$IA/x" "/$ROOT/user-0$IA/x" \
           "/$ROOT/user-$IA/$(basename "$SH")/login/x/y" "//$ROOT/user-$IA"; do
        hint_shell malformed "$bad"
        check_eq "malformed hint '$bad': nothing moves, exit 0" "$SH/login:0" "$(cat "$U/malformed.cg"):$(cat "$U/malformed.rc")"
        kill "$(cat "$U/malformed.pid")" 2>/dev/null; rm -f "$U"/malformed.*
done
# the hint only names a root; the session is still the one the kernel says
hint_shell user "/$ROOT/user-$IA"
check_eq "hint of the user group (sessions no) while in a session: the leaf of the real session" \
        "$SH/sid-$(cat "$U/user.pid")" "$(cat "$U/user.cg")"
out=$(AUTOGROUP_SESSION="$SH" "$HELPER" status 2>&1)
check_not "root with user A's AUTOGROUP_SESSION: another uid's hint is not used" grep -q "$(basename "$SH")" <<<"$out"
check "--root still wins over the hint" sh -c "AUTOGROUP_SESSION='$SH' '$HELPER' --root agout-$$ status | grep -q 'agout-$$'"
# run and set read the hint too: from h1's login/, as user A, no --root
# in_h1 HINT CMD: as user A, moved into h1's login/, AUTOGROUP_SESSION=HINT
in_h1() { as_user "$UA" "echo \$\$ > $CPU$SH/login/cgroup.procs; export AUTOGROUP_SESSION='$1'; $2"; }
RUNCMD="sh -c 'echo \$PPID > $U/hr.ppid; c=\$(grep :cpu: /proc/self/cgroup | cut -d: -f3); echo \$c > $U/hr.cg; cat $CPU\$c/cpu.shares'"
out=$(in_h1 "$SH" "$HELPER run --weight 300 -- $RUNCMD" 2>&1); rc=$?
HRP=$(cat "$U/hr.ppid" 2>/dev/null)
check_eq "run without --root: CMD in a leaf run-<pid> of the session of root=$ROOT" "$SH/run-$HRP" "$(cat "$U/hr.cg" 2>/dev/null)"
check_eq "  exit 0, the leaf's weight 300 (cpu.shares 3072)" "0:3072" "$rc:$out"
check "  the leaf is gone once CMD ended" test ! -e "$CPU$SH/run-$HRP"
out=$(in_h1 "$SH" "$HELPER set --weight 50 sid-$PG" 2>&1); rc=$?
check_eq "set without --root on a leaf name: exit 0, cpu.shares 512" "0::512" "$rc:$out:$(cat "$CPU$SH/sid-$PG/cpu.shares")"
out=$(in_h1 "$SH" "$HELPER set --weight 200 $PG" 2>&1); rc=$?
check_eq "set without --root on a PID: exit 0, its leaf's cpu.shares 2048" "0::2048" "$rc:$out:$(cat "$CPU$SH/sid-$PG/cpu.shares")"
rm -f "$U"/hr.*
out=$(in_h1 "" "$HELPER run -- $RUNCMD" 2>&1); rc=$?
check_eq "run without --root and without the hint: the default root, refused" "1:yes" \
        "$rc:$(grep -q 'not inside one of your pam_autogroup sessions' <<<"$out" && echo yes)"
check_not "  CMD did not run" test -e "$U/hr.cg"
# a forged hint: user B's session, which the caller is not in
for forged in "$SB" "/agfake-$$/user-$IA/$(basename "$SH")"; do
        out=$(in_h1 "$forged" "$HELPER run --weight 10000 -- $RUNCMD" 2>&1); rc=$?
        check_eq "run with a forged hint '$forged': refused" "1:yes" \
                "$rc:$(grep -q 'not inside one of your pam_autogroup sessions' <<<"$out" && echo yes)"
        check_not "  CMD did not run" test -e "$U/hr.cg"
        out=$(in_h1 "$forged" "$HELPER set --weight 10000 $PG" 2>&1); rc=$?
        check_eq "set with a forged hint '$forged': refused, the leaf keeps cpu.shares 2048" "1:2048" \
                "$rc:$(cat "$CPU$SH/sid-$PG/cpu.shares")"
        out=$(in_h1 "$forged" "$HELPER set --weight 10000 login" 2>&1); rc=$?
        check_eq "  set on B's login/ by name: refused, unchanged" "1:1024" "$rc:$(cat "$CPU$SB/login/cpu.shares")"
done
check_eq "  no run-* leaf anywhere below root=$ROOT" "" "$(find "$CG" -name 'run-*' 2>/dev/null)"
for f in good nohint other fake user; do kill "$(cat "$U/$f.pid")" 2>/dev/null; done
kill "$PIH" 2>/dev/null
touch "$T/h1.go"; wait "$PID_h1" 2>/dev/null
check "session h1 removed at close" test ! -e "$CPU$SH"

echo "# 14. cleanup"
kill "$PIB" 2>/dev/null; for _ in $(seq 100); do [ -d "/proc/$PIB" ] || break; sleep 0.05; done
touch "$T/b1.go"; wait "$PID_b1" 2>/dev/null
$AG gc >/dev/null 2>&1
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

finish
