#!/bin/bash
# Host tests of the unprivileged helper "autogroup" and the session hook: real
# libpam sessions opened through pam_autogroup.so (tests/host/agdrv), real
# cgroup v1 cpu hierarchy, real tmux, and a throw-away user acting inside.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_helper
test_root agtest
test_outside                    # OUT must survive
AG="$HELPER --root $ROOT"

add_group "${TAG}g"
new_user a "${TAG}g"; new_user b

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
pam_other
# the default line: no delegate=, root makes login/ and leaf-1 .. leaf-6
pam_service agtest "root=$ROOT conf=$CONF"
LAYOUT="leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login"
# groups_of SESSION: the names of the groups right below SESSION, sorted
groups_of() { find "$CPU$1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//'; }
# in_login SESSION USER CMD: CMD as USER, started from SESSION's login/ (root
# moves the shell there, as the login's own processes are; the user cannot)
in_login() { ( echo "$BASHPID" >"$CPU$1/login/cgroup.procs" && as_user "$2" "$3" ); }
# bg (lib.sh): a process of the user's in login/ holds the session open
# (agdrv's wait-file would close it after 120 s, less than this test may
# take on a busy machine)
BG_SVC=agtest; BG_HOLD=user
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

echo "# 1. two setsid shells of one login get two distinct root-made leaves"
# t2 starts once t1 has entered: two helpers that look at the same moment may
# share the first free leaf (coarser, allowed); one after the other they must not
bg a1 "$UA" spawn-user "setsid sh $T/tab.sh t1 & i=0; until [ -s $U/t1.pid ] || [ \$i -ge 600 ]; do sleep 0.05; i=\$((i + 1)); done; setsid sh $T/tab.sh t2 & setsid sh $T/idle.sh ia & setsid sh $T/idle.sh rt &"
S1=$(val AUTOGROUP_SESSION a1)
check "session of user A opened" grep -q '^open=PAM_SUCCESS' "$T/a1.out"
wait_for "$U/t1.pid" '^[0-9]+$'; wait_for "$U/t2.pid" '^[0-9]+$'
wait_for "$U/ia.pid" '^[0-9]+$'; wait_for "$U/rt.pid" '^[0-9]+$'
P1=$(cat "$U/t1.pid"); P2=$(cat "$U/t2.pid"); PIA=$(cat "$U/ia.pid"); PRT=$(cat "$U/rt.pid")
track_pid "$P1" "$P2" "$PIA" "$PRT"
check_eq "the session has login/ and the default 6 leaves, nothing else" "$LAYOUT" "$(groups_of "$S1")"
check_eq "the session directory is root's" root "$(stat -c %U "$CPU$S1")"
check_eq "login/ is root's, its cgroup.procs too" "root root root" \
        "$(stat -c %U "$CPU$S1/login" "$CPU$S1/login/cgroup.procs" "$CPU$S1/login/tasks" | tr '\n' ' ' | sed 's/ $//')"
check_eq "the user owns only the leaves' cgroup.procs in the session" \
        "$(for i in $(seq 6); do echo "leaf-$i/cgroup.procs"; done | sort | tr '\n' ' ')" \
        "$([ -n "$S1" ] && cd "$CPU$S1" && find . ! -user root -printf '%P\n' | sort | tr '\n' ' ')"
check_eq "first shell in the first leaf" "$S1/leaf-1" "$(cat "$U/t1.cg1")"
check_eq "second shell in the next free leaf" "$S1/leaf-2" "$(cat "$U/t2.cg1")"
check "the two leaves are distinct" test "$(cat "$U/t1.cg1")" != "$(cat "$U/t2.cg1")"
check_eq "enter exits 0" "0 0" "$(cat "$U/t1.rc1") $(cat "$U/t2.rc1")"
check_eq "enter prints nothing" "" "$(cat "$U/t1.out1" "$U/t2.out1")"
check_eq "leaf directory owned by root" root "$(stat -c %U "$CPU$S1/leaf-1")"
check_eq "  its cgroup.procs by the user, its tasks and cpu.shares by root" "$UA root root" \
        "$(stat -c %U "$CPU$S1/leaf-1/cgroup.procs" "$CPU$S1/leaf-1/tasks" "$CPU$S1/leaf-1/cpu.shares" | tr '\n' ' ' | sed 's/ $//')"
check_eq "leaf's cpu.shares default" 1024 "$(cat "$CPU$S1/leaf-1/cpu.shares")"
check_eq "second enter: exit 0" "0" "$(cat "$U/t1.rc2")"
check "second enter: already in its leaf" grep -q "already in its leaf" "$U/t1.out2"
check_eq "second enter: same cgroup" "$(cat "$U/t1.cg1")" "$(cat "$U/t1.cg2")"
before=$(groups_of "$S1"); before_cg="$(cgof "$P1") $(cgof "$P2")"
as_user "$UA" "$AG enter --pid $P1 && $AG enter --pid $P2" >"$T/again.out" 2>&1
check_eq "enter again: nothing printed" "" "$(cat "$T/again.out")"
check_eq "enter again: no group made or removed" "$before" "$(groups_of "$S1")"
check_eq "enter again: nobody moved" "$before_cg" "$(cgof "$P1") $(cgof "$P2")"
check_eq "a shell that did not enter stays in login/" "$S1/login" "$(cgof "$PIA")"

echo "# 2. the user makes no group; an emptied leaf is reused; all taken: left where it is"
check_not "user cannot mkdir in own session" as_user "$UA" "mkdir $CPU$S1/mine"
check_not "user cannot mkdir in a leaf" as_user "$UA" "mkdir $CPU$S1/leaf-1/mine"
check_not "user cannot mkdir in a free leaf" as_user "$UA" "mkdir $CPU$S1/leaf-6/mine"
check_not "user cannot mkdir in login/" as_user "$UA" "mkdir $CPU$S1/login/mine"
kill "$P2"; for _ in $(seq 200); do [ -d "/proc/$P2" ] || break; sleep 0.05; done
# tab_in NAME: a new terminal's shell as user A, started from S1's login/, waited for
tab_in() { in_login "$S1" "$UA" "setsid sh $T/tab.sh $1 &"; wait_for "$U/$1.pid" '^[0-9]+$'; track_pid "$(cat "$U/$1.pid")"; }
tab_in t3; P3=$(cat "$U/t3.pid")
check_eq "the leaf of an ended shell is reused by the next" "$S1/leaf-2" "$(cgof "$P3")"
check_eq "  no group made or removed" "$LAYOUT" "$(groups_of "$S1")"
check "busy leaf kept" grep -qx "$P1" "$CPU$S1/leaf-1/cgroup.procs"
# a shell the user put by hand into leaf-1, beside another terminal: not "its" leaf
in_login "$S1" "$UA" "setsid sh -c 'echo \$\$ > $CPU$S1/leaf-1/cgroup.procs; exec sh $T/tab.sh t4' &"
wait_for "$U/t4.pid" '^[0-9]+$'; P4=$(cat "$U/t4.pid"); track_pid "$P4"
check_eq "a shell in a leaf shared with another session moves on to a free leaf" "$S1/leaf-3" "$(cat "$U/t4.cg1")"
check_eq "  silently, exit 0; and it stays there" "0::$S1/leaf-3" "$(cat "$U/t4.rc1")::$(cgof "$P4")"
for f in f1 f2 f3; do tab_in $f; done
check_eq "three more shells take leaf-4 .. leaf-6" "$S1/leaf-4 $S1/leaf-5 $S1/leaf-6" \
        "$(cgof "$(cat "$U/f1.pid")") $(cgof "$(cat "$U/f2.pid")") $(cgof "$(cat "$U/f3.pid")")"
tab_in f4; F4=$(cat "$U/f4.pid")
check_eq "every leaf taken: the next shell stays in login/, enter exits 0, silent" "$S1/login:0:" \
        "$(cat "$U/f4.cg1"):$(cat "$U/f4.rc1"):$(cat "$U/f4.out1")"
check_eq "  --verbose says so, exit 0" "0:$F4: every leaf of the session holds processes, left where it is" \
        "$(cat "$U/f4.rc2"):$(cat "$U/f4.out2")"
check_eq "  no group made" "$LAYOUT" "$(groups_of "$S1")"
kill "$(cat "$U/f2.pid")"; for _ in $(seq 200); do [ -d "/proc/$(cat "$U/f2.pid")" ] || break; sleep 0.05; done
out=$(as_user "$UA" "$AG enter --pid $F4" 2>&1); rc=$?
check_eq "once a leaf is empty again, enter takes it" "0::$S1/leaf-5" "$rc:$out:$(cgof "$F4")"
for f in t4 f1 f3 f4; do kill "$(cat "$U/$f.pid")" 2>/dev/null; done
for f in t4 f1 f3 f4; do p=$(cat "$U/$f.pid"); for _ in $(seq 200); do [ -d "/proc/$p" ] || break; sleep 0.05; done; done

echo "# 2b. 20 shells entering at once (4 free leaves)"
in_login "$S1" "$UA" "for i in \$(seq 20); do setsid sh $T/tab.sh c\$i & done"
good=0; inleaf=0; inlogin=0
for i in $(seq 20); do
        wait_for "$U/c$i.pid" '^[0-9]+$' || continue
        p=$(cat "$U/c$i.pid"); track_pid "$p"
        [ "$(cat "$U/c$i.rc1")" = 0 ] && [ ! -s "$U/c$i.out1" ] && [ "$(cat "$U/c$i.rc2")" = 0 ] && good=$((good + 1))
        case $(cgof "$p") in "$S1/login") inlogin=$((inlogin + 1)) ;; "$S1"/leaf-[1-6]) inleaf=$((inleaf + 1)) ;; esac
done
check_eq "all 20 concurrent shells: enter exits 0, silently" 20 "$good"
check_eq "  each is in a leaf of the session or still in login/" 20 "$((inleaf + inlogin))"
# Two helpers that looked at once share a leaf, and each may then leave it
# for a free one at its second enter: the end state of a race is not fixed.
# One more enter of each, one after the other, settles it: every free leaf
# gets a shell, a shell sharing a leaf moves on while one is free.
as_user "$UA" "for i in \$(seq 20); do $AG enter --pid \$(cat $U/c\$i.pid); done" >"$T/settle.out" 2>&1; rc=$?
check_eq "  one more enter of each: exit 0, silent" "0:" "$rc:$(cat "$T/settle.out")"
busy=0; for i in $(seq 6); do [ -n "$(cat "$CPU$S1/leaf-$i/cgroup.procs")" ] && busy=$((busy + 1)); done
check_eq "  then every leaf holds processes (20 shells, 4 free leaves)" 6 "$busy"
check_eq "  no group made or removed" "$LAYOUT" "$(groups_of "$S1")"
for i in $(seq 20); do kill "$(cat "$U/c$i.pid" 2>/dev/null)" 2>/dev/null; done
for i in $(seq 20); do p=$(cat "$U/c$i.pid" 2>/dev/null); for _ in $(seq 200); do [ -d "/proc/$p" ] || break; sleep 0.05; done; done

# 10,000 enter and 500 run calls; a tenth of that on the tree .ci/sanitize
# builds with AddressSanitizer (every call there starts an instrumented
# process, about ten times as slow)
ROUNDS=1000; RUNS=500
if ldd "$HELPER" 2>/dev/null | grep -q libasan; then ROUNDS=100; RUNS=50; fi
echo "# 2c. a flood: $((ROUNDS * 10)) enter and $RUNS run calls in a loop stay within the bound"
# In a login of its own that run-user holds open for as long as the flood
# takes (wait-file would close it after 120 s): eight session leaders for
# six leaves, then, as the user, 500 runs (each takes leaf-1 and leaves it
# empty), then 1,000 rounds of enter on the eight leaders, on the loop's own
# shell (no leader) and on pid 1 (root's); what it leaves is recorded before
# the leaders go and the login closes.
cat >"$T/flood.sh" <<EOF
for i in 1 2 3 4 5 6 7 8; do setsid sh $T/idle.sh l\$i & done
for i in 1 2 3 4 5 6 7 8; do n=0; until [ -s $U/l\$i.pid ] || [ \$n -ge 600 ]; do sleep 0.05; n=\$((n + 1)); done; done
leaders=\$(cat $U/l1.pid $U/l2.pid $U/l3.pid $U/l4.pid $U/l5.pid $U/l6.pid $U/l7.pid $U/l8.pid)
s=\$(grep :cpu: /proc/self/cgroup | cut -d: -f3); s=\${s%/login}
t0=\$(date +%s%N)
for r in \$(seq $RUNS); do $AG run -- true; done >$U/flood-run.out 2>&1; echo \$? >$U/flood-run.rc
for r in \$(seq $ROUNDS); do for p in \$leaders \$\$ 1; do $AG enter --pid \$p; done; done >$U/flood.out 2>&1; echo \$? >$U/flood.rc
t1=\$(date +%s%N)
for r in \$(seq 1000); do /bin/true; done
t2=\$(date +%s%N)
echo "\$(( (t1 - t0) / 1000000 )) \$(( (t2 - t1) / 1000000 ))" >$U/flood.ms
echo \$s >$U/flood.session
find $CPU\$s -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ \$//' >$U/flood.groups
find $CPU\$s -type d | wc -l >$U/flood.ndirs
for p in \$leaders; do grep :cpu: /proc/\$p/cgroup | cut -d: -f3; done >$U/flood.cgs
for i in 1 2 3 4 5 6; do wc -l <$CPU\$s/leaf-\$i/cgroup.procs; done | tr '\n' ' ' | sed 's/ \$//' >$U/flood.nprocs
kill \$leaders; wait
EOF
chmod 644 "$T/flood.sh"
drv agtest "$UA" open env run-user "sh $T/flood.sh" close >"$T/fl.out" 2>&1
read -r ms_flood ms_true <"$U/flood.ms"
echo "# $((ROUNDS * 10)) enter and $RUNS run calls took $ms_flood ms; 1,000 /bin/true in the same shell $ms_true ms (no assertion on time)"
SF=$(cat "$U/flood.session")
check_eq "flood: in a session of its own" "$(val AUTOGROUP_SESSION fl)" "$SF"
check_eq "flood: enter and run exit 0 and print nothing" "0:0::" \
        "$(cat "$U/flood.rc"):$(cat "$U/flood-run.rc"):$(cat "$U/flood.out"):$(cat "$U/flood-run.out")"
check_eq "flood: the session still has login/ and 6 leaves, nothing else" "$LAYOUT" "$(cat "$U/flood.groups")"
check_eq "flood: 8 groups in all (the session, login/, 6 leaves)" 8 "$(cat "$U/flood.ndirs")"
check_eq "flood: six leaders got the six leaves, two stayed in login/" \
        "$(printf '%s\n' "$SF"/leaf-{1..6} "$SF/login" "$SF/login" | sort | tr '\n' ' ')" "$(sort "$U/flood.cgs" | tr '\n' ' ')"
check_eq "flood: each leaf holds one process" "1 1 1 1 1 1" "$(cat "$U/flood.nprocs")"
check_eq "flood: the login closed" PAM_SUCCESS "$(val close fl)"
check "  and nothing of the session is left behind" test ! -e "$CPU$SF"

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
        in_login "$S1" "$UA" "export AUTOGROUP_SESSION=$S1; $3" >"$T/hook.out" 2>&1
        if grep -qE -- "$2" "$U/hook.cg" 2>/dev/null; then ok "$1"; else not_ok "$1 (cgroup: $(cat "$U/hook.cg" 2>/dev/null))"; fi
        rm -f "$U/hook.cg"
}
REC="grep :cpu: /proc/\\\$\\\$/cgroup | cut -d: -f3 > $U/hook.cg"
hook_cg "bash.bashrc hook: interactive session leader gets its leaf" "^$S1/leaf-[1-6]\$" \
        "setsid bash --rcfile $HOOK_RC -ic \"$REC\""
hook_cg "profile.d hook under dash (ENV): interactive session leader gets its leaf" "^$S1/leaf-[1-6]\$" \
        "ENV=$HOOK_SH setsid dash -ic \"$REC\""
hook_cg "profile.d hook read by bash" "^$S1/leaf-[1-6]\$" \
        "setsid bash --noprofile --rcfile $HOOK_SH -ic \"$REC\""
hook_cg "hook: a non-interactive shell stays in login/" "^$S1/login\$" \
        "setsid bash -c \". $HOOK_RC; $REC\""
hook_cg "hook: an interactive shell that does not lead its session stays" "^$S1/login\$" \
        "bash --rcfile $HOOK_RC -ic \"$REC\""
hook_cg "hook: AUTOGROUP_HOOK=0 opts out" "^$S1/login\$" \
        "AUTOGROUP_HOOK=0 setsid bash --rcfile $HOOK_RC -ic \"$REC\""
in_login "$S1" "$UA" "export AUTOGROUP_SESSION=$S1; cd $U && setsid bash --rcfile $HOOK_RC -ic true" >"$T/hook.err1" 2>&1
as_user "$UA" "cd $U && setsid bash --rcfile /dev/null -ic true" >"$T/hook.err2" 2>&1
check "hook adds no output to a shell start" cmp -s "$T/hook.err1" "$T/hook.err2"
in_login "$S1" "$UA" "export AUTOGROUP_SESSION=$S1; cd $U && ENV=$HOOK_SH setsid dash -ic true" >"$T/hook.err3" 2>&1
as_user "$UA" "cd $U && ENV=/dev/null setsid dash -ic true" >"$T/hook.err4" 2>&1
check "hook under dash: no output" cmp -s "$T/hook.err3" "$T/hook.err4"
if command -v zsh >/dev/null; then
        hook_cg "zshrc hook under zsh" "^$S1/leaf-[1-6]\$" "setsid zsh -f -ic \". $HOOK_RC; $REC\""
else
        skip "zsh not installed"
fi

echo "# 5. a real tmux server with two windows: one leaf per pane"
if command -v tmux >/dev/null; then
        TM="tmux -S $U/tmux.sock -f /dev/null"
        # what a login shell gets from PAM: AUTOGROUP_SESSION (agdrv does not pass the PAM environment on)
        bg tm "$UA" spawn-user "cd $U && s=\$(grep :cpu: /proc/self/cgroup | cut -d: -f3) && export HOME=$U AUTOGROUP_SESSION=\${s%/login} && $TM new-session -d -x 80 -y 24 'exec bash --rcfile $HOOK_RC -i' && i=0 && until grep -q ':cpu:.*/leaf-' /proc/\$($TM list-panes -F '#{pane_pid}')/cgroup || [ \$i -ge 600 ]; do sleep 0.05; i=\$((i + 1)); done && $TM new-window 'exec bash --rcfile $HOOK_RC -i' && touch $U/tmux.up"
        ST=$(val AUTOGROUP_SESSION tm)
        for _ in $(seq 600); do [ -e "$U/tmux.up" ] && break; sleep 0.05; done
        PANES=$(as_user "$UA" "$TM list-panes -a -F '#{window_index} #{pane_pid}'" 2>/dev/null | sort -n | cut -d' ' -f2 | tr '\n' ' ')
        set -- $PANES
        check_eq "tmux runs two panes" 2 "$#"
        # the second window opens once the first pane has its leaf (see above):
        # the panes get leaf-1 and leaf-2, in that order
        i=0
        for p in $PANES; do
                i=$((i + 1))
                wait_cg "$p" "/leaf-$i\$"
                check_eq "pane shell $p in a leaf of its own (leaf-$i)" "$ST/leaf-$i" "$(cgof "$p")"
        done
        check_eq "  the session's groups: login/ and the 6 leaves, nothing made" "$LAYOUT" "$(groups_of "$ST")"
        SRV=$(as_user "$UA" "$TM display-message -p '#{pid}'" 2>/dev/null)
        check_eq "the tmux server stays in login/" "$ST/login" "$(cgof "$SRV")"
        as_user "$UA" "$AG status" >"$T/status.txt" 2>&1
        for i in 1 2; do check "status lists the leaf of pane $i" grep -q "leaf-$i " "$T/status.txt"; done
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
        check_eq "status --json: login/ plus the session's leaves" "$LAYOUT" "$leaves"
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
# it there, silently, although leaves are free. Its pid in LP.
enter_refused() {
        local what=$1 out rc before
        shift
        setsid "$@" & LP=$!; track_pid "$LP"
        for _ in $(seq 100); do [ "$(ps -o sid= -p "$LP" | tr -d ' ')" = "$LP" ] && break; sleep 0.05; done
        echo "$LP" >"$CPU$S1/login/cgroup.procs"
        before=$(cat "$CPU$S1"/leaf-*/cgroup.procs | sort | tr '\n' ' ')
        out=$(as_user "$UA" "$AG enter --pid $LP" 2>&1); rc=$?
        check_eq "enter --pid of $what: exit 0, silent" "0:" "$rc:$out"
        check_eq "  and it stays in login/" "$S1/login" "$(cgof "$LP")"
        check_eq "  and no leaf took it" "$before" "$(cat "$CPU$S1"/leaf-*/cgroup.procs | sort | tr '\n' ' ')"
}
check_eq "leaves are free for what follows (leaf-3 empty)" "" "$(cat "$CPU$S1/leaf-3/cgroup.procs")"
enter_refused "a root process in the user's session" sleep 600; RP=$LP
# What a set-user-ID program the user started is: real uid the user's,
# effective, saved and file system uids root's. enter (either mode) moves a
# process only when all four are the caller's; cgroup v1 itself would let
# the user move it (the writer's euid matches its real uid).
enter_refused "the user's process running as root (set-user-ID)" setpriv --ruid="$UA" sleep 600; SP=$LP
check_not "user cannot move a root process into own leaf" as_user "$UA" "echo $RP > $CPU$S1/leaf-3/cgroup.procs"
check_not "user cannot move a root process between own leaves" as_user "$UA" "echo $RP > $CPU$S1/leaf-1/cgroup.procs"
check_eq "  the root process stays in login/" "$S1/login" "$(cgof "$RP")"
# what the user may do, so that the refusals below are not empty
check "user can move own process between own leaves" \
        as_user "$UA" "echo $P1 > $CPU$S1/leaf-3/cgroup.procs && grep -q ':cpu:$S1/leaf-3\$' /proc/$P1/cgroup && echo $P1 > $CPU$S1/leaf-1/cgroup.procs"
check_eq "  (and back)" "$S1/leaf-1" "$(cgof "$P1")"
check_not "user cannot move own process into login/" as_user "$UA" "echo $P1 > $CPU$S1/login/cgroup.procs"
check_not "user cannot move own process into login/ (tasks)" as_user "$UA" "echo $P1 > $CPU$S1/login/tasks"
check_not "user cannot move own process into the session group itself" as_user "$UA" "echo $P1 > $CPU$S1/cgroup.procs"
check_not "user cannot move own process into a leaf through its tasks" as_user "$UA" "echo $PIA > $CPU$S1/leaf-3/tasks"
check_eq "  the user's processes are where they were" "$S1/leaf-1 $S1/login" "$(cgof "$P1") $(cgof "$PIA")"
check_not "user cannot move own process into another user's session" as_user "$UA" "echo $PIA > $CPU$SB/login/cgroup.procs"
check_not "user cannot move own process into another user's session group" as_user "$UA" "echo $PIA > $CPU$SB/cgroup.procs"
check_not "user cannot move own process into another user's leaf" as_user "$UA" "echo $PIA > $CPU$SB/leaf-1/cgroup.procs"
check_not "  nor through its tasks" as_user "$UA" "echo $PIA > $CPU$SB/leaf-1/tasks"
check_not "user cannot move another user's process into own session" as_user "$UA" "echo $PIB > $CPU$S1/login/cgroup.procs"
check_not "user cannot move another user's process into own leaf (own cgroup.procs)" as_user "$UA" "echo $PIB > $CPU$S1/leaf-3/cgroup.procs"
check_eq "  the other user's process stays in its own session" "$SB/login" "$(cgof "$PIB")"
check_not "user cannot make a group in another user's session" as_user "$UA" "mkdir $CPU$SB/x"
check_not "user cannot make a group in another user's leaf" as_user "$UA" "mkdir $CPU$SB/leaf-1/x"
check_not "user cannot remove a free leaf of own session" as_user "$UA" "rmdir $CPU$S1/leaf-6"
check_not "user cannot rename a leaf" as_user "$UA" "mv $CPU$S1/leaf-6 $CPU$S1/leaf-7"
check_not "user cannot rename own session" as_user "$UA" "mv $CPU$S1 $CPU$S1.x"
check_not "user cannot make a symlink in own session" as_user "$UA" "ln -s / $CPU$S1/evil"
check_not "user cannot move a process into <root>" as_user "$UA" "echo $PIA > $CG/cgroup.procs"
check_not "user cannot move a process into own user group" as_user "$UA" "echo $PIA > $CPU/$ROOT/user-$IA/cgroup.procs"
check_not "user cannot move a process to the root cgroup" as_user "$UA" "echo $PIA > $CPU/cgroup.procs"
check_not "user cannot move a process to the root cgroup (tasks)" as_user "$UA" "echo $PIA > $CPU/tasks"
check_eq "  after all that, the user's process is where it was" "$S1/login" "$(cgof "$PIA")"
check_eq "  and the session's groups are unchanged" "$LAYOUT" "$(groups_of "$S1")"
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
check_not "user cannot raise the weight of the leaf a shell sits in" as_user "$UA" "echo 262144 > $CPU$S1/leaf-1/cpu.shares"
check_not "user cannot chmod a leaf's cpu.shares" as_user "$UA" "chmod 666 $CPU$S1/leaf-1/cpu.shares"
check_not "user cannot chown a leaf's cpu.shares" as_user "$UA" "chown $UA $CPU$S1/leaf-1/cpu.shares"
# every cpu.* and tasks file of every group of the session, login/ and the leaves
# included: which of them can the user open for writing? (opened, nothing written)
as_user "$UA" "for f in $CPU$S1/cpu.* $CPU$S1/tasks $CPU$S1/*/cpu.* $CPU$S1/*/tasks $CPU$S1/*/notify_on_release $CPU$S1/*/cgroup.clone_children; do (: > \$f) 2>/dev/null && echo \$f; done" >"$T/writable.out" 2>&1
check_eq "user can write no cpu.*, tasks or other control file of the session and its leaves" "" "$(cat "$T/writable.out")"
check "  (that covered login/ and all 6 leaves)" test "$(ls "$CPU$S1"/*/cpu.shares | wc -l)" = 7
check_eq "every leaf keeps the default weight, the session too" "1024 1024 1024 1024 1024 1024 1024 1024" \
        "$(cat "$CPU$S1/cpu.shares" "$CPU$S1"/*/cpu.shares | tr '\n' ' ' | sed 's/ $//')"
check_eq "  and the user group its own (user rule weight 400)" 4096 "$(cat "$CPU/$ROOT/user-$IA/cpu.shares")"

echo "# 9. real-time tasks (CONFIG_RT_GROUP_SCHED): left where they are"
if [ -f "$CPU/cpu.rt_runtime_us" ]; then
        check_not "a group without RT budget refuses SCHED_FIFO" chrt -f -p 10 "$PRT"
        # give the path to login/ a small RT budget; the leaves root made at open get none
        for d in "$CG" "$CPU/$ROOT/user-$IA" "$CPU$S1" "$CPU$S1/login"; do echo 10000 >"$d/cpu.rt_runtime_us"; done
        check_eq "the free leaf the shell would go to has no RT budget" 0 "$(cat "$CPU$S1/leaf-3/cpu.rt_runtime_us")"
        if chrt -f -p 10 "$PRT"; then
                before=$(cat "$CPU$S1"/leaf-*/cgroup.procs | sort | tr '\n' ' ')
                out=$(as_user "$UA" "$AG enter --pid $PRT" 2>&1); rc=$?
                check_eq "enter of a SCHED_FIFO shell: exit 0, silent" "0:" "$rc:$out"
                check_eq "  it stays in login/" "$S1/login" "$(cgof "$PRT")"
                check_eq "  no leaf took it, no group made" "$before|$LAYOUT" \
                        "$(cat "$CPU$S1"/leaf-*/cgroup.procs | sort | tr '\n' ' ')|$(groups_of "$S1")"
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

echo "# 10. crafted directories in a live session vs. gc and close (made by root)"
mkdir -p "$OUT/user-$IA/login" "$OUT/user-0" "$OUT/autogroup"
# the user can make none of this (their session is root's); root makes it, as
# an admin's tool or an older layout (a delegated session's sid-*) might
check_not "the user cannot craft a tree in own session" as_user "$UA" "mkdir -p $CPU$S1/deep/d"
check_not "  nor in a leaf" as_user "$UA" "mkdir -p $CPU$S1/leaf-1/deep/d"
(cd "$CPU$S1" && mkdir -p user-0/login "user-$IB/$(basename "$SB")/login" login/login ... ..x ' ' "$(printf 'x\033[31my')" \
        sid-12345/sid-1 leaf-07 leaf-65 class-video && mkdir -p deep/d/d/d/d/d/d/d/d/d/d/d/d) >"$T/craft.out" 2>&1
check "root crafted a tree in the user's session" test -d "$CPU$S1/deep/d/d/d/d/d/d/d/d/d/d/d/d"
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
check "  with all its leaves, the empty ones too (reused later)" \
        sh -c "cd '$CPU$S1' && test -d leaf-1 -a -d leaf-2 -a -d leaf-3 -a -d leaf-4 -a -d leaf-5 -a -d leaf-6"
check "unrelated cgroups outside <root> survive gc" test -d "$OUT/user-$IA/login" -a -d "$OUT/user-0" -a -d "$OUT/autogroup"
# close as root with a hostile tree inside (processes still there: the session stays)
kill "$P1" "$P3" "$PIA" "$RP" "$SP" 2>/dev/null
for p in $P1 $P3 $PIA $RP $SP; do for _ in $(seq 100); do [ -d "/proc/$p" ] || break; sleep 0.05; done; done
touch "$T/a1.go"; wait "$PID_a1" 2>/dev/null
check "close with a deep crafted tree: session kept (bounded), not followed" test -d "$CPU$S1/deep"
check "close: user B's session survives" test -d "$CPU$SB/login"
check "close: unrelated cgroups outside <root> survive" test -d "$OUT/user-$IA/login" -a -d "$OUT/user-0" -a -d "$OUT/autogroup"
check "close: nothing named like the crafted dirs appeared at the hierarchy root" test ! -e "$CPU/user-0" -a ! -e "$CPU/login"
check_eq "close removed the session's empty leaves (no process left in them or in login/)" "" \
        "$(cd "$CPU$S1" && ls -d leaf-[1-6] 2>/dev/null | tr '\n' ' ')"
for f in "$CPU$S1"/*/cgroup.procs; do [ -n "$(cat "$f")" ] && echo "# still in $f: $(cat "$f" | tr '\n' ' ')"; done
(cd "$CPU$S1" && find deep -depth -type d -exec rmdir {} +) >/dev/null 2>&1
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
check_eq "check on a good file: its one warning (the rule line 8 overrides) and the summary" \
        "warning: $CONF:7: overridden by $CONF:8 (the same domain and item: the later line wins)
$CONF: OK, 7 rules, 1 warning" "$(cat "$T/check-ok.out")"
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
# check, asked about a file by name, takes a missing one for a typo: an error
check "check of a missing config: does not exist" grep -qx "$T/missing.conf: does not exist" \
        <("$HELPER" check "$T/missing.conf")
check_not "  and exit 0" "$HELPER" check "$T/missing.conf"
check "explain of a missing config: weight from the default" grep -qE "^weight +100 +default" "$T/explain-missing.out"

echo "# 13. the helper finds root= by itself: AUTOGROUP_SESSION, verified against the real cgroup"
# $HELPER without --root; the module's root= is agtest-<pid>, not the default
bg h1 "$UA" spawn-user "setsid sh $T/idle.sh ih &"
SH=$(val AUTOGROUP_SESSION h1)
wait_for "$U/ih.pid" '^[0-9]+$'; PIH=$(cat "$U/ih.pid"); track_pid "$PIH"
# hint_shell NAME HINT: as user A inside session h1, a setsid shell with
# AUTOGROUP_SESSION=HINT runs enter and status without --root
hint_shell() {
        in_login "$SH" "$UA" "export AUTOGROUP_SESSION='$2'; setsid sh -c '
                $HELPER enter --pid \$\$ >$U/$1.enter 2>&1; echo \$? >$U/$1.rc
                grep :cpu: /proc/\$\$/cgroup | cut -d: -f3 >$U/$1.cg
                $HELPER status >$U/$1.status 2>&1
                echo \$\$ >$U/$1.pid; exec sleep 600' &"
        wait_for "$U/$1.pid" '^[0-9]+$'; track_pid "$(cat "$U/$1.pid")"
}
hint_shell good "$SH"
PG=$(cat "$U/good.pid")
check_eq "enter without --root: the shell gets a leaf below root=$ROOT" "$SH/leaf-1" "$(cat "$U/good.cg")"
check_eq "  exit 0, silent" "0:" "$(cat "$U/good.rc"):$(cat "$U/good.enter")"
check "status without --root shows the session of root=$ROOT" grep -q "$(basename "$SH")" "$U/good.status"
check "  and its leaf" grep -q "leaf-1 " "$U/good.status"
hint_shell nohint ""
check_eq "without AUTOGROUP_SESSION: the default root, nothing moves" "$SH/login" "$(cat "$U/nohint.cg")"
check_not "  status shows nothing of root=$ROOT" grep -q "$(basename "$SH")" "$U/nohint.status"
# a stale or hand-typed hint naming the session the shell is not in
hint_shell other "$SB"
check_eq "hint naming user B's session: nothing moves" "$SH/login" "$(cat "$U/other.cg")"
check_eq "  exit 0, silent" "0:" "$(cat "$U/other.rc"):$(cat "$U/other.enter")"
check_not "  status does not list user B" grep -q "user-$IB" "$U/other.status"
check_eq "  user B's session untouched: its groups, and nothing in its leaves" "$LAYOUT:" \
        "$(groups_of "$SB"):$(cat "$CPU$SB"/leaf-*/cgroup.procs)"
# a tree outside <root> made to look like the module's, owned as the module
# would own it: root's, with a free leaf-1 whose cgroup.procs is the user's
mkdir -p "$OUT/user-$IA/fake/login" "$OUT/user-$IA/fake/leaf-1"; chown "$UA" "$OUT/user-$IA/fake/leaf-1/cgroup.procs"
hint_shell fake "/agout-$$/user-$IA/fake"
check_eq "hint naming a look-alike tree the shell is not in: nothing moves" "$SH/login" "$(cat "$U/fake.cg")"
check_eq "  its free leaf stays empty, nothing made there" ":leaf-1 login" \
        "$(cat "$OUT/user-$IA/fake/leaf-1/cgroup.procs"):$(groups_of "/agout-$$/user-$IA/fake")"
check_not "  status does not show that tree" grep -q "fake" "$U/fake.status"
for bad in "/$ROOT/user-$IA/../.." "/$ROOT/user-$IA/" "$ROOT/user-$IA" "/../user-$IA/x" "/$ROOT/user-0$IA/x" \
           "/$ROOT/user-$IA/$(basename "$SH")/login/x/y" "//$ROOT/user-$IA"; do
        hint_shell malformed "$bad"
        check_eq "malformed hint '$bad': nothing moves, exit 0" "$SH/login:0" "$(cat "$U/malformed.cg"):$(cat "$U/malformed.rc")"
        kill "$(cat "$U/malformed.pid")" 2>/dev/null; rm -f "$U"/malformed.*
done
# the hint only names a root; the session is still the one the kernel says
hint_shell user "/$ROOT/user-$IA"
check_eq "hint of the user group (sessions no) while in a session: a leaf of the real session" \
        "$SH/leaf-2" "$(cat "$U/user.cg")"
out=$(AUTOGROUP_SESSION="$SH" "$HELPER" status 2>&1)
check_not "root with user A's AUTOGROUP_SESSION: another uid's hint is not used" grep -q "$(basename "$SH")" <<<"$out"
check "--root still wins over the hint" sh -c "AUTOGROUP_SESSION='$SH' '$HELPER' --root agout-$$ status | grep -q 'agout-$$'"
# run and set read the hint too: from h1's login/, as user A, no --root
# in_h1 HINT CMD: as user A, from h1's login/, AUTOGROUP_SESSION=HINT
in_h1() { in_login "$SH" "$UA" "export AUTOGROUP_SESSION='$1'; $2"; }
# pol PID: the scheduling policy chrt reports
pol() { chrt -p "$1" 2>/dev/null | sed -n 's/.*policy: //p'; }
RUNCMD="sh -c 'echo \$PPID > $U/hr.ppid; c=\$(grep :cpu: /proc/self/cgroup | cut -d: -f3); echo \$c > $U/hr.cg; cat $CPU\$c/cpu.shares'"
out=$(in_h1 "$SH" "$HELPER run -- $RUNCMD" 2>&1); rc=$?
check_eq "run without --root: CMD in the first free leaf of the session of root=$ROOT" "$SH/leaf-3" "$(cat "$U/hr.cg" 2>/dev/null)"
check_eq "  exit 0, root's default weight (cpu.shares 1024)" "0:1024" "$rc:$out"
check_eq "  root's leaf stays for the next command, empty" "root:" "$(stat -c %U "$CPU$SH/leaf-3"):$(cat "$CPU$SH/leaf-3/cgroup.procs")"
rm -f "$U"/hr.*
out=$(in_h1 "$SH" "$HELPER run --weight 300 -- $RUNCMD" 2>&1); rc=$?
check_eq "run --weight in a session of root's leaves: refused, exit 1, says why" "1:yes" \
        "$rc:$(grep -q "weight and idle flag of your session's leaves are root's" <<<"$out" && echo yes)"
check_not "  CMD did not run" test -e "$U/hr.cg"
out=$(in_h1 "$SH" "$HELPER run --idle -- $RUNCMD" 2>&1); rc=$?
check_eq "run --idle: refused the same way" "1:no" "$rc:$(test -e "$U/hr.cg" && echo yes || echo no)"
out=$(in_h1 "$SH" "$HELPER set --weight 50 leaf-1" 2>&1); rc=$?
check_eq "set --weight without --root on a leaf name: refused, cpu.shares stays 1024" "1:1024" "$rc:$(cat "$CPU$SH/leaf-1/cpu.shares")"
out=$(in_h1 "$SH" "$HELPER set --weight 200 $PG" 2>&1); rc=$?
check_eq "set --weight without --root on a PID: refused, its leaf's cpu.shares stays 1024" "1:1024" "$rc:$(cat "$CPU$SH/leaf-1/cpu.shares")"
out=$(in_h1 "$SH" "$HELPER set --latency batch leaf-1" 2>&1); rc=$?
check_eq "set --latency without --root on a leaf name: exit 0, its process SCHED_BATCH" "0::SCHED_BATCH" "$rc:$out:$(pol "$PG")"
out=$(in_h1 "$SH" "$HELPER set --latency normal $PG" 2>&1); rc=$?
check_eq "set --latency without --root on a PID: exit 0, SCHED_OTHER again" "0::SCHED_OTHER" "$rc:$out:$(pol "$PG")"
rm -f "$U"/hr.*
out=$(in_h1 "" "$HELPER run -- $RUNCMD" 2>&1); rc=$?
check_eq "run without --root and without the hint: the default root, refused" "1:yes" \
        "$rc:$(grep -q 'not inside one of your pam_autogroup sessions' <<<"$out" && echo yes)"
check_not "  CMD did not run" test -e "$U/hr.cg"
# a forged hint: user B's session, which the caller is not in
for forged in "$SB" "/agfake-$$/user-$IA/$(basename "$SH")"; do
        out=$(in_h1 "$forged" "$HELPER run -- $RUNCMD" 2>&1); rc=$?
        check_eq "run with a forged hint '$forged': refused" "1:yes" \
                "$rc:$(grep -q 'not inside one of your pam_autogroup sessions' <<<"$out" && echo yes)"
        check_not "  CMD did not run" test -e "$U/hr.cg"
        out=$(in_h1 "$forged" "$HELPER set --latency batch $PG" 2>&1); rc=$?
        check_eq "set with a forged hint '$forged': refused, the process keeps SCHED_OTHER" "1:SCHED_OTHER" "$rc:$(pol "$PG")"
        out=$(in_h1 "$forged" "$HELPER set --latency batch login" 2>&1); rc=$?
        check_eq "  set on B's login/ by name: refused, B's process unchanged" "1:SCHED_OTHER" "$rc:$(pol "$PIB")"
done
check_eq "  no group below root=$ROOT but login/ and the leaves of each session" "" \
        "$(find "$CG" -mindepth 3 -type d ! -name login ! -name 'leaf-[1-6]' 2>/dev/null)"
for f in good nohint other fake user; do kill "$(cat "$U/$f.pid")" 2>/dev/null; done
kill "$PIH" 2>/dev/null
touch "$T/h1.go"; wait "$PID_h1" 2>/dev/null
check "session h1 removed at close" test ! -e "$CPU$SH"

echo "# 14. the command line: the verb table, its help and its errors"
out=$("$HELPER" --help 2>&1); rc=$?
verbs=$(sed -n '/^Verbs/,/^$/p' <<<"$out" | grep -oE '^  [a-z-]+' | tr -d ' ' | tr '\n' ' ')
check_eq "--help lists every verb, exit 0" "0:enter status metrics check explain gc run set container-init " "$rc:$verbs"
for v in $verbs; do
        out=$("$HELPER" "$v" --help 2>&1); rc=$?
        opts=$(sed -n '/^Options:/,/^$/p' <<<"$out" | grep -oE -- '^  (-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' |
               tr '\n' ' ')
        syn=$(head -n1 <<<"$out" | sed 's/^Usage: autogroup \[--root NAME\] //' | grep -oE -- '\[--[a-z-]+' | tr -d '[' |
              tr '\n' ' ')
        check_eq "$v --help: exit 0, its options as its synopsis names them" "0:$syn" "$rc:$opts"
done
syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$abs_top_srcdir/man/autogroup.1" | sed 's/\\-/-/g')
check_eq "autogroup(1)'s SYNOPSIS names every verb of the table" "" \
        "$(for v in $verbs; do grep -qE "^\.B (autogroup )?$v\$" <<<"$syn" || echo "$v"; done)"
check_eq "run -h: run's help, not a command" "Usage: autogroup [--root NAME] run" \
        "$("$HELPER" run -h 2>&1 | head -n1 | cut -d' ' -f1-5)"
for bad in "bogus" "status --frob" "status extra" "enter --pid" "enter --pid 0" "explain" "check a b" \
           "set 1" "set --idle maybe 1" "run" "run --weight 0 -- true" "--root .. status" "--root" ""; do
        out=$("$HELPER" $bad 2>&1 >/dev/null); rc=$?
        check_eq "'autogroup $bad': a usage error (exit 2) with a message" "2:yes" "$rc:$([ -n "$out" ] && echo yes)"
done
check_eq "options after the verb, its operands anywhere: explain USER --conf FILE" \
        "$("$HELPER" explain --conf "$CONF" "$UA" 2>&1)" "$("$HELPER" explain "$UA" --conf="$CONF" 2>&1)"

echo "# 15. cleanup"
kill "$PIB" 2>/dev/null; for _ in $(seq 100); do [ -d "/proc/$PIB" ] || break; sleep 0.05; done
touch "$T/b1.go"; wait "$PID_b1" 2>/dev/null
$AG gc >/dev/null 2>&1
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

finish
