#!/bin/bash
# Runs INSIDE the guest lane (tests/vm/test-guest.sh): cgroup v2 with cpu.
#
# Root's leaves with the default PAM line (no options): the session's
# leaf-1..N and class leaves, whose cgroup.procs (and the session's, the
# common ancestor) are the user's and nothing else is. Every attack runs as
# the unprivileged user (tests/leaves-attack.sh); a real tmux's panes land in
# leaves of their own; enter and run calls in a loop stay within the bound; a leaf
# the kernel refuses leaves the login grouped with one log line.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_guest_v2

test_root agleaf "$CG2"
start_syslog || true
new_user a; new_user b
write_conf "* weight 100" "$UB interactive 2"
pam_other
pam_service agdef "root=$ROOT conf=$CONF"
cgof() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
cp "$abs_top_srcdir/tests/leaves-attack.sh" "$U/attack.sh"; chmod 755 "$U/attack.sh"

echo "# 1. layout and attacks as the user (cgroup v2 with cpu)"
SVC=agdef hold b "$UB"; PB=$HOLD_PID
SB=$(val AUTOGROUP_SESSION b)
timeout -k 5 120 "$AGDRV" --pam "$T" agdef "$UA" open env cgroup run-user "$U/attack.sh $U/a.att $PB" \
        cgroup close >"$T/a.out" 2>&1
sed 's/^/#   /' "$U/a.att"
S=$(val AUTOGROUP_SESSION "$T/a.out")
check_eq "six leaves by default" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 " "$(val leaves "$U/a.att")"
check_eq "the user owns the session's and the leaf's cgroup.procs and nothing else" \
        "root $UA root root root $UA root " "$(val owners "$U/a.att")"
for k in mkdir_session mkdir_leaf mkdir_login weight_leaf weight_session weight_user cap_user idle_leaf; do
        check_eq "the user cannot do it ($k)" refused "$(val $k "$U/a.att")"
done
check_eq "own process: login/ to leaf-1 to leaf-2" "done $S/leaf-1 done" \
        "$(val own_into_leaf1 "$U/a.att") $(val own_at "$U/a.att") $(val own_into_leaf2 "$U/a.att")"
for k in own_into_login own_into_session own_into_user own_into_root own_into_top; do
        check_eq "the user cannot move their process out of the leaves ($k)" refused "$(val $k "$U/a.att")"
done
check "the attack found the root caller in login/" test -n "$(val caller "$U/a.att")"
check_eq "the root caller can be moved between the session's leaves only" "done $S/leaf-1 refused refused" \
        "$(val caller_into_leaf1 "$U/a.att") $(val caller_moved_to "$U/a.att") $(val caller_into_user "$U/a.att") $(val caller_into_top "$U/a.att")"
for k in freeze_leaf-1 kill_leaf-1 freeze_login kill_login "freeze_${S##*/}" "kill_${S##*/}" signal_caller; do
        check_eq "which grants nothing: no freeze, kill or signal ($k)" refused "$(val "$k" "$U/a.att")"
done
check_eq "the root caller runs on" S "$(val caller_state "$U/a.att")"
check_eq "the user cannot move another user's process into their leaf" "refused $SB/login" \
        "$(val foreign_into_leaf "$U/a.att") $(val foreign_at "$U/a.att")"
check "close moved the caller out (wherever the user put it) and removed the session" test ! -e "$CG2$S"
touch "$T/b.go"

echo "# 2. class leaves at interactive 2: root's weights; run --latency audio"
"$AGDRV" --pam "$T" agdef "$UB" open run-user "S=$CG2\$(sed -n 's/^0:://p' /proc/self/cgroup); S=\${S%/login}; cat \$S/class-interactive/cpu.weight \$S/class-audio/cpu.weight >$U/cls.w; \"$HELPER\" --root $ROOT run --latency audio -- sh -c 'sed -n s/^0:://p /proc/self/cgroup' >>$U/cls.w; echo 1 >\$S/class-audio/cpu.weight 2>/dev/null || echo refused >>$U/cls.w" \
        close >/dev/null 2>&1
check_eq "class-interactive 400, class-audio 1000, written by root" "400 1000" "$(sed -n 1,2p "$U/cls.w" | tr '\n' ' ' | sed 's/ $//')"
check "run --latency audio lands in class-audio" grep -q '/class-audio$' "$U/cls.w"
check_eq "the user cannot change the class leaf's weight" refused "$(tail -n1 "$U/cls.w")"

echo "# 3. a real tmux: each pane in a leaf of its own"
if command -v tmux >/dev/null; then
        cat >"$U/pane.sh" <<EOS
"$HELPER" --root $ROOT enter --pid \$\$
sed -n 's/^0:://p' /proc/\$\$/cgroup >$U/pane.\$1
exec sleep 60
EOS
        timeout -k 5 120 "$AGDRV" --pam "$T" agdef "$UA" open env run-user \
                "tmux -S $U/tmux.sock new-session -d 'exec sh $U/pane.sh 1'; tmux -S $U/tmux.sock split-window -d 'exec sh $U/pane.sh 2'; tmux -S $U/tmux.sock new-window -d 'exec sh $U/pane.sh 3'; i=0; while [ ! -s $U/pane.3 ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done; ls $CG2\$(sed -n 's/^0:://p' /proc/self/cgroup | sed 's,/login\$,,') >$U/tmux.ls; tmux -S $U/tmux.sock kill-server" \
                close >"$T/tmux.out" 2>&1
        ST=$(val AUTOGROUP_SESSION "$T/tmux.out")
        check_eq "three tmux panes in three distinct leaves of the login's session" 3 \
                "$(cat "$U/pane.1" "$U/pane.2" "$U/pane.3" 2>/dev/null | grep -E "^$ST/leaf-[0-9]+\$" | sort -u | wc -l)"
        check_eq "still login/ and six leaves" 7 "$(grep -cE '^(leaf-|login)' "$U/tmux.ls")"
else
        skip "no tmux"
fi

echo "# 4. enter and run calls in a loop: never more groups than root made"
# 10,000 calls run on the host (tests/host/test-helper.sh); under TCG on a busy
# host a call can cost a second, so the guest makes 200 (the lane stops a
# guest that prints nothing for 300 s)
cat >"$U/loop.sh" <<EOS
S=$CG2\$(sed -n 's/^0:://p' /proc/self/cgroup); S=\${S%/login}
for i in \$(seq 20); do setsid -w sh -c '"$HELPER" --root $ROOT enter --pid \$\$; "$HELPER" --root $ROOT enter --pid \$\$; "$HELPER" --root $ROOT enter --pid \$\$; "$HELPER" --root $ROOT enter --pid \$\$; "$HELPER" --root $ROOT enter --pid \$\$'; done
for i in \$(seq 100); do "$HELPER" --root $ROOT run -- true || echo fail; done | sort | uniq -c >$U/loop.fail
find \$S -mindepth 1 -type d | wc -l >$U/loop.n
EOS
timeout -k 5 600 "$AGDRV" --pam "$T" agdef "$UA" open env run-user "sh $U/loop.sh" close >"$T/loop.out" 2>&1
check_eq "100 enter and 100 run calls: login/ and six leaves remain" 7 "$(cat "$U/loop.n" 2>/dev/null)"
check_eq "every run succeeded" "" "$(cat "$U/loop.fail" 2>/dev/null)"
check "and close removed the session" test ! -e "$CG2$(val AUTOGROUP_SESSION "$T/loop.out")"

echo "# 5. a leaf the kernel refuses: the login is grouped, one log line"
mkdir -p "$CG/user-$IA"
echo "+cpu" >"$CG/cgroup.subtree_control"
echo 3 >"$CG/user-$IA/cgroup.max.descendants"
"$AGDRV" --pam "$T" agdef "$UA" open env cgroup run-user "ls $CG2\$(sed -n 's/^0:://p' /proc/self/cgroup | sed 's,/login\$,,') >$U/lim.ls" \
        close >"$T/lim.out" 2>&1
S=$(val AUTOGROUP_SESSION "$T/lim.out")
check "the login opened" grep -q '^open=PAM_SUCCESS' "$T/lim.out"
check_eq "its caller sat in login/" "$S/login" "$(val cgroup "$T/lim.out")"
check_eq "with the one leaf the kernel allowed" "leaf-1 login" "$(grep -E '^(leaf-|login)' "$U/lim.ls" | tr '\n' ' ' | sed 's/ $//')"
log_has "one log line names the refused leaves" "cannot make the leaves of $CG2$S: .*; the session is grouped, with 1 leaves"
finish
