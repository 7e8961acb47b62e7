#!/bin/bash
# Root's leaves with the default PAM line (no options), on this host's cgroup
# v1 cpu hierarchy through real libpam (agdrv) and real su -l, and the cgroup
# v2 kernel rules on the host's cgroup2 mount (no cpu controller, through
# lib/cgroup/session.c as the module calls it). Every attack runs as the
# unprivileged user (tests/leaves-attack.sh). The v2 lane with cpu is
# tests/guest/test-leaves.sh.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
ATTACK="$abs_top_srcdir/tests/leaves-attack.sh"

test_root agleaf
AG_CGROOTS="$CG $UNIFIED/$ROOT $CPU/$ROOT.lane-*"   # a latency lane (interactive 2) beside the tree
start_syslog || true
new_user a; new_user b
write_conf "* weight 100"
pam_other
pam_service agdef "root=$ROOT conf=$CONF"
# nleaves FILE: the session's groups in a listing of it
nleaves() { grep -E '^(leaf-|login|class-)' "$1" | tr '\n' ' ' | sed 's/ $//'; }
cp "$ATTACK" "$U/attack.sh"; chmod 755 "$U/attack.sh"

echo "# 1. the layout root makes at open, and who owns what"
SVC=agdef hold b "$UB"; PB=$HOLD_PID
SB=$(val AUTOGROUP_SESSION b)
check_eq "user B's process sits in B's login/" "$SB/login" "$(cgof "$PB")"
"$AGDRV" --pam "$T" agdef "$UA" open env cgroup run-user "$U/attack.sh $U/a.att $PB" \
        run-user "ls $CPU\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup) >$U/a.ls" \
        close >"$T/a.out" 2>&1
sed 's/^/#   /' "$U/a.att"
S=$(val AUTOGROUP_SESSION "$T/a.out")
check "A's login opened" grep -q '^open=PAM_SUCCESS' "$T/a.out"
check_eq "the caller sits in login/" "$S/login" "$(val cgroup "$T/a.out")"
check_eq "six leaves by default, no class leaf at interactive 0" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 " \
        "$(val leaves "$U/a.att")"
check_eq "session, its cgroup.procs, login/ and its cgroup.procs, the leaf: root's; the leaf's cgroup.procs the user's; its cpu.shares root's" \
        "root root root root root $UA root " "$(val owners "$U/a.att")"
check_eq "the session holds login/ and the six leaves, nothing else of the user's" \
        "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login" "$(grep -E '^(leaf-|login|class-)' "$U/a.ls" | tr '\n' ' ' | sed 's/ $//')"

echo "# 2. attacks as the user (cgroup v1)"
for k in mkdir_session mkdir_leaf mkdir_login; do
        check_eq "the user cannot mkdir ($k)" refused "$(val $k "$U/a.att")"
done
for k in weight_leaf weight_session weight_user cap_user idle_leaf tasks_leaf; do
        check_eq "the user cannot write it ($k)" refused "$(val $k "$U/a.att")"
done
check_eq "the user moves their own process from login/ into leaf-1" "done $S/leaf-1" \
        "$(val own_into_leaf1 "$U/a.att") $(val own_at "$U/a.att")"
check_eq "and from leaf-1 into leaf-2" done "$(val own_into_leaf2 "$U/a.att")"
for k in own_into_login own_into_session own_into_user own_into_root own_into_top; do
        check_eq "the user cannot move their process out of the leaves ($k)" refused "$(val $k "$U/a.att")"
done
check_eq "their process ends in leaf-2" "$S/leaf-2" "$(val own_end "$U/a.att")"
check "the attack found the root caller in login/" test -n "$(val caller "$U/a.att")"
for k in caller_into_leaf1 caller_into_user caller_into_top signal_caller; do
        check_eq "the user cannot move or stop the root caller ($k)" refused "$(val $k "$U/a.att")"
done
check_eq "the root caller stayed in login/, running" "$S/login S" \
        "$(val caller_at "$U/a.att") $(val caller_state "$U/a.att")"
check_eq "the user cannot move another user's process into their leaf" refused "$(val foreign_into_leaf "$U/a.att")"
check_eq "and that process stays in its own session" "$SB/login" "$(cgof "$PB")"
check "close removed A's session with its leaves" test ! -e "$CPU$S"

echo "# 3. another user and A's leaves; what A's chmod gives (cgroup v1)"
SVC=agdef hold a2 "$UA"; PA=$HOLD_PID
S2=$(val AUTOGROUP_SESSION a2)
check_not "B cannot put its own process into A's leaf" as_user "$UB" "echo $PB >$CPU$S2/leaf-1/cgroup.procs"
check_not "B cannot move A's process into B's leaf" as_user "$UB" "echo $PA >$CPU$SB/leaf-1/cgroup.procs"
check_not "A cannot move B's process into A's leaf" as_user "$UA" "echo $PB >$CPU$S2/leaf-1/cgroup.procs"
check_eq "both stay where they were" "$SB/login $S2/login" "$(cgof "$PB") $(cgof "$PA")"
# v1: the owner of a file may chmod it. A leaf opened to others is A's consent:
# B's process then runs on A's share and cap (as with a shared account), it
# gains nothing over B's own, and A can do nothing to B's process by it.
as_user "$UA" "chmod 666 $CPU$S2/leaf-4/cgroup.procs"
check "after A's chmod 666 of its leaf, B can put B's process there (consenting users share A's share)" \
        as_user "$UB" "echo $PB >$CPU$S2/leaf-4/cgroup.procs"
check_not "A still cannot signal B's process" as_user "$UA" "kill -STOP $PB"
check_not "A still cannot change the leaf's weight" as_user "$UA" "echo 10000 >$CPU$S2/leaf-4/cpu.shares"
echo "$PB" >"$CPU$SB/login/cgroup.procs"
touch "$T/a2.go" "$T/b.go"

echo "# 4. enter, run and the bound: leaves are reused, never more than root made"
cat >"$U/many.sh" <<EOS
S=\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup)
echo "\$S" >$U/many.session
# waitn N: until N shells are through enter (each then execs "sleep 30"), at most 30 s
waitn() { n=0; while [ "\$(pgrep -u \$(id -u) -f '^sleep 30\$' | wc -l)" -lt \$1 ] && [ \$n -lt 300 ]; do sleep 0.1; n=\$((n + 1)); done; }
for i in \$(seq 6); do setsid sh -c '"$HELPER" --root $ROOT enter --pid \$\$; exec sleep 30' </dev/null >/dev/null 2>&1 & waitn \$i; done
for i in \$(seq 4); do setsid sh -c '"$HELPER" --root $ROOT enter --pid \$\$; exec sleep 30' </dev/null >/dev/null 2>&1 & done
waitn 10
ls $CPU\$S | grep -cE '^(leaf-|class-|login)' >$U/many.n1
for p in \$(cat $CPU\$S/leaf-*/cgroup.procs); do echo \$p; done | wc -l >$U/many.inleaves
for l in $CPU\$S/leaf-*; do [ "\$(wc -l <\$l/cgroup.procs)" = 1 ] && echo x; done | wc -l >$U/many.busy
"$HELPER" --root $ROOT run --verbose -- true 2>$U/many.run; echo \$? >>$U/many.run
pkill -u \$(id -u) -x sleep; sleep 0.5
for i in \$(seq 10); do setsid sh -c '"$HELPER" --root $ROOT enter --pid \$\$; exec sleep 30' </dev/null >/dev/null 2>&1 & done
waitn 10
ls $CPU\$S | grep -cE '^(leaf-|class-|login)' >$U/many.n3
for l in $CPU\$S/leaf-*; do [ -n "\$(cat \$l/cgroup.procs)" ] && echo x; done | wc -l >$U/many.busy3
pkill -u \$(id -u) -x sleep; sleep 0.5
"$HELPER" --root $ROOT run -- sh -c 'sed -n "s/^[0-9]*:cpu://p" /proc/self/cgroup' >$U/many.reuse
ls $CPU\$S | grep -cE '^(leaf-|class-|login)' >$U/many.n2
EOS
"$AGDRV" --pam "$T" agdef "$UA" open run-user "sh $U/many.sh" close >"$T/many.out" 2>&1
SM=$(cat "$U/many.session")
check_eq "10 setsid shells: login/ and 6 leaves, nothing more" 7 "$(cat "$U/many.n1")"
check_eq "six shells one after another: each leaf holds one" 6 "$(cat "$U/many.busy")"
check_eq "the four that found every leaf busy stay where they are" 6 "$(cat "$U/many.inleaves")"
check "run with every leaf busy says so and runs the command in place" \
        grep -q "every leaf holds processes in $SM: the command runs where it is" "$U/many.run"
check_eq "run exits with the command's status" 0 "$(tail -n1 "$U/many.run")"
check_eq "once the shells ended, run reuses leaf-1" "$SM/leaf-1" "$(cat "$U/many.reuse")"
check_eq "10 shells at once: every leaf taken, still login/ and 6 leaves" "6 7" "$(cat "$U/many.busy3") $(cat "$U/many.n3")"
check_eq "still login/ and 6 leaves" 7 "$(cat "$U/many.n2")"
check "close removed the session" test ! -e "$CPU$SM"

echo "# 5. the items leaves and interactive"
printf '%s\n' "* leaves 2" "$UB leaves 1" "$UB interactive 2" >"$CONF"
"$AGDRV" --pam "$T" agdef "$UA" open run-user "ls $CPU\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup) >$U/two.ls" close >/dev/null 2>&1
check_eq "leaves 2: two leaves" "leaf-1 leaf-2 login" "$(grep -E '^(leaf-|login|class-)' "$U/two.ls" | tr '\n' ' ' | sed 's/ $//')"
"$AGDRV" --pam "$T" agdef "$UB" open run-user "S=$CPU\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup); ls \$S >$U/cls.ls; cat \$S/class-interactive/cpu.shares \$S/class-audio/cpu.shares >$U/cls.w; stat -c %U \$S/class-audio \$S/class-audio/cgroup.procs \$S/class-audio/cpu.shares >>$U/cls.w; \"$HELPER\" --root $ROOT run --latency audio -- sh -c 'sed -n \"s/^[0-9]*:cpu://p\" /proc/self/cgroup' >>$U/cls.w; echo 100 >\$S/class-audio/cpu.shares 2>/dev/null || echo refused >>$U/cls.w" \
        close >/dev/null 2>&1
check_eq "leaves 1, interactive 2: one leaf and the two class leaves" "class-audio class-interactive leaf-1 login" \
        "$(grep -E '^(leaf-|login|class-)' "$U/cls.ls" | tr '\n' ' ' | sed 's/ $//')"
check_eq "class weights from the table, written by root (v1 shares 4096, 10240)" "4096 10240" \
        "$(sed -n 1,2p "$U/cls.w" | tr '\n' ' ' | sed 's/ $//')"
check_eq "class leaf root's, its cgroup.procs the user's, its cpu.shares root's" "root $UB root" \
        "$(sed -n 3,5p "$U/cls.w" | tr '\n' ' ' | sed 's/ $//')"
check "run --latency audio at interactive 2 (v1) puts the command in the user's lane beside the tree (test-lane.sh)" \
        grep -q "^/$ROOT.lane-$(id -u "$UB")\$" "$U/cls.w"
check_eq "the user cannot lower or raise the class leaf's weight" refused "$(tail -n1 "$U/cls.w")"
echo "* weight 100" >"$CONF"

echo "# 5a. leaves 0: no cgroup.procs of the user's in the session, class leaves included (cgroup v1)"
# interactive 1 would make class leaves; with leaves 0 there are none, so the
# user cannot pull a process of theirs from a group root capped elsewhere in
# the v1 cpu hierarchy (another tool's) into one (SECURITY.md rule 16)
printf '%s\n' "* weight 100" "$UA leaves 0" "$UA interactive 1" >"$CONF"
mkdir "$CG-capped"; AG_CGROOTS="$AG_CGROOTS $CG-capped"; echo 10000 >"$CG-capped/cpu.cfs_quota_us"
setpriv --reuid="$IA" --regid="$(id -g "$UA")" --clear-groups sleep 300 &
PC=$!; track_pid "$PC"; echo "$PC" >"$CG-capped/cgroup.procs"
cat >"$U/classpull.sh" <<'EOS'
s=$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login$/\1/p' /proc/self/cgroup)
ls "$1$s" >"$3.ls"
r=refused
for l in class-interactive class-audio leaf-1; do (echo "$2" >"$1$s/$l/cgroup.procs") 2>/dev/null && r="done:$l"; done
echo "$r" >"$3"
EOS
chmod 644 "$U/classpull.sh"
"$AGDRV" --pam "$T" agdef "$UA" tty=/dev/tty open run-user "sh $U/classpull.sh $CPU $PC $U/classpull.txt" close >/dev/null 2>&1
check_eq "leaves 0, interactive 1: login/ alone, no class leaf" login "$(nleaves "$U/classpull.txt.ls")"
check_eq "the user's pull of their process from the root-capped group into the session is refused" refused \
        "$(cat "$U/classpull.txt")"
check_eq "the process stays in the capped group" "/$ROOT-capped" "$(cgof "$PC")"
printf '%s\n' "* weight 100" "$UA leaves-notty 0" "$UA interactive 2" >"$CONF"
"$AGDRV" --pam "$T" agdef "$UA" tty= open run-user "sh $U/classpull.sh $CPU $PC $U/classpull2.txt" close >/dev/null 2>&1
check_eq "leaves-notty 0, interactive 2, no terminal: login/ alone" login "$(nleaves "$U/classpull2.txt.ls")"
check_eq "the same pull refused" refused "$(cat "$U/classpull2.txt")"
kill "$PC" 2>/dev/null; wait "$PC" 2>/dev/null
rmdir "$CG-capped" 2>/dev/null
echo "* weight 100" >"$CONF"

echo "# 5b. a login without a terminal (cron, su or sudo in a script, ftp): no leaves by default"
# the session's groups, as the login's own process finds them
lsess="ls $CPU\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup)"
for t in "" cron ftp ../dev/tty /dev/../dev/tty /etc/passwd /dev/pts; do
        "$AGDRV" --pam "$T" agdef "$UA" "tty=$t" open run-user "$lsess >$U/notty.ls" close >/dev/null 2>&1
        check_eq "PAM_TTY '${t:-unset}': login/ only" "login" "$(nleaves "$U/notty.ls")"
done
for t in /dev/tty tty ":0" ssh; do
        "$AGDRV" --pam "$T" agdef "$UA" "tty=$t" open run-user "$lsess >$U/tty.ls" close >/dev/null 2>&1
        check_eq "PAM_TTY '$t' (a terminal): login/ and six leaves" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login" \
                "$(nleaves "$U/tty.ls")"
done
printf '%s\n' "* leaves-notty 2" "$UB leaves 1" "$UB interactive 1" >"$CONF"
"$AGDRV" --pam "$T" agdef "$UA" tty= open run-user "$lsess >$U/notty.ls" close >/dev/null 2>&1
check_eq "leaves-notty 2: two leaves without a terminal" "leaf-1 leaf-2 login" "$(nleaves "$U/notty.ls")"
"$AGDRV" --pam "$T" agdef "$UB" tty= open run-user "$lsess >$U/notty-b.ls" close >/dev/null 2>&1
check_eq "interactive 1 without a terminal: the class leaves all the same" \
        "class-audio class-interactive leaf-1 leaf-2 login" "$(nleaves "$U/notty-b.ls")"
"$AGDRV" --pam "$T" agdef "$UB" tty=/dev/tty open run-user "$lsess >$U/tty-b.ls" close >/dev/null 2>&1
check_eq "leaves 1 with a terminal" "class-audio class-interactive leaf-1 login" "$(nleaves "$U/tty-b.ls")"
echo "* weight 100" >"$CONF"
"$AGDRV" --pam "$T" agdef "$UA" tty=cron open run-user "\"$HELPER\" --root $ROOT run --verbose -- sh -c 'sed -n \"s/^[0-9]*:cpu://p\" /proc/self/cgroup' >$U/cron.run 2>&1" \
        close >/dev/null 2>&1
check "run in a login without leaves says so and runs the command where it is" \
        sh -c "grep -q 'the command runs where it is' '$U/cron.run' && grep -q '/login\$' '$U/cron.run'"

# lingering_ends PID SESSION NAME: the lingering process PID ends; the
# next login of A (its sweep) or the close watcher removes SESSION whole
lingering_ends() {
        kill "$1" 2>/dev/null
        for i in $(seq 100); do [ -e "/proc/$1" ] || break; sleep 0.1; done
        "$AGDRV" --pam "$T" agdef "$UA" tty= open close >/dev/null 2>&1
        check "$3" sh -c "for i in \$(seq 300); do [ -e '$CPU$2' ] || exit 0; sleep 0.1; done; exit 1"
}

echo "# 5c. a session that outlives its login (a tmux server) keeps its free leaves"
# the "server": a terminal of its own, then, once the login has closed, a new "pane"
# lingering_sh NAME PLACE: $U/NAME.sh, a process that takes its group with
# the shell lines PLACE, writes its pid to $U/NAME.pid and, once $U/NAME.go
# exists, starts a new "pane" (setsid, autogroup enter) whose cgroup goes to
# $U/NAME.pane; then it sleeps
lingering_sh() {
        { printf '%s\n' "$2"; cat <<EOS
echo \$\$ >$U/$1.pid
while [ ! -e $U/$1.go ]; do sleep 0.1; done
setsid sh -c '"$HELPER" --root $ROOT enter --pid \$\$; sed -n "s/^[0-9]*:cpu://p" /proc/self/cgroup' </dev/null >$U/$1.pane 2>&1
echo done >$U/$1.done
exec sleep 300
EOS
        } >"$U/$1.sh"
}
# linger NAME COMMAND [ACTION...]: a login of A (agdef) whose process,
# COMMAND, writes its pid to $U/NAME.pid and outlives it; ACTIONs run before
# the close. Sets SL (the session) and PL (that process)
linger() {
        local n="$1" c="$2"; shift 2
        "$AGDRV" --pam "$T" agdef "$UA" open env spawn-user "$c" wait-file "$U/$n.pid" "$@" close >"$T/$n.out" 2>&1
        SL=$(val AUTOGROUP_SESSION "$n"); PL=$(cat "$U/$n.pid"); track_pid "$PL"
}
lingering_sh ling "\"$HELPER\" --root $ROOT enter --pid \$\$"
linger ling "exec setsid sh $U/ling.sh"
check_eq "the lingering process sits in leaf-1" "$SL/leaf-1" "$(cgof "$PL")"
check_eq "after close: the session keeps leaf-1 .. leaf-6 (login/ went)" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6" \
        "$(nleaves <(ls "$CPU$SL"))"
touch "$U/ling.go"; wait_for "$U/ling.done" done
check_eq "a new pane of it still finds a free leaf" "$SL/leaf-2" "$(cat "$U/ling.pane")"
lingering_ends "$PL" "$SL" "once empty, the session goes whole (the next login's sweep, or the close watcher)"

echo "# 5d. a session that outlives its login in leaf-3: the free leaves removed before it are made again"
cat >"$U/ling3.sh" <<EOS
d=\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup)
echo \$\$ >"$CPU\$d/leaf-3/cgroup.procs"
echo \$\$ >$U/ling3.pid
exec sleep 300
EOS
linger ling3 "exec setsid sh $U/ling3.sh"
check_eq "the lingering process sits in leaf-3" "$SL/leaf-3" "$(cgof "$PL")"
check_eq "after close: the session has leaf-1 .. leaf-6 again (login/ went)" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6" \
        "$(nleaves <(ls "$CPU$SL"))"
check_eq "leaf-1 and leaf-2 made again: root's, mode 755, their cgroup.procs the user's, cpu.shares root's" \
        "root 755 $UA root root 755 $UA root" \
        "$(for l in leaf-1 leaf-2; do stat -c '%U %a' "$CPU$SL/$l"; stat -c %U "$CPU$SL/$l/cgroup.procs" "$CPU$SL/$l/cpu.shares"; done | tr '\n' ' ' | sed 's/ $//')"
lingering_ends "$PL" "$SL" "once empty, it goes whole"

echo "# 5e. a login opened under umask 077 (pam_umask, login.defs UMASK): the user still reaches the leaves"
cat >"$U/umask.sh" <<EOS
d=\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup)
stat -c %a "$CPU\$d" "$CPU\$d/login" "$CPU\$d/leaf-1" "$CPU\$d/leaf-6" | tr '\n' ' ' >$U/umask.modes
sh -c 'echo \$\$ >"$CPU\$1/leaf-1/cgroup.procs" && sed -n "s/^[0-9]*:cpu://p" /proc/self/cgroup' sh "\$d" >$U/umask.cg 2>&1
EOS
(umask 077; "$AGDRV" --pam "$T" agdef "$UA" open env run-user "sh $U/umask.sh" close >"$T/umask.out" 2>&1)
SU=$(val AUTOGROUP_SESSION "$T/umask.out")
check_eq "the session, login/ and the leaves: mode 755" "755 755 755 755 " "$(cat "$U/umask.modes")"
check_eq "the user's process moves into leaf-1" "$SU/leaf-1" "$(cat "$U/umask.cg")"

echo "# 5f. a free leaf that close cannot make again: one log line, the session keeps the others"
# the kernel refuses leaf-1 once the login is closing (tests/host/nomkdir.so)
if nomkdir_preload; then
        lingering_sh ling4 "d=\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup)
echo \$\$ >\"$CPU\$d/leaf-3/cgroup.procs\""
        env LD_PRELOAD="$PRELOAD" AG_TEST_NOMKDIR="leaf-1:$T/ling4.closing" "$AGDRV" --pam "$T" agdef "$UA" open env \
                spawn-user "exec env -u LD_PRELOAD -u AG_TEST_NOMKDIR setsid sh $U/ling4.sh" wait-file "$U/ling4.pid" \
                touch "$T/ling4.closing" close >"$T/ling4.out" 2>&1
        SL=$(val AUTOGROUP_SESSION "$T/ling4.out"); PL=$(cat "$U/ling4.pid"); track_pid "$PL"
        check "the login closed (PAM_SUCCESS)" grep -q '^close=PAM_SUCCESS' "$T/ling4.out"
        check_eq "the lingering process sits in leaf-3" "$SL/leaf-3" "$(cgof "$PL")"
        check_eq "after close: leaf-2 .. leaf-6 (leaf-1 refused)" "leaf-2 leaf-3 leaf-4 leaf-5 leaf-6" \
                "$(nleaves <(ls "$CPU$SL"))"
        log_has "one line says a free leaf could not be made again" \
                "$SL still holds processes, left for a later sweep; a free leaf removed at close could not be made again \(No space left on device\)"
        touch "$U/ling4.go"; wait_for "$U/ling4.done" done
        check_eq "a new pane passes over the missing leaf-1 and takes leaf-2" "$SL/leaf-2" "$(cat "$U/ling4.pane")"
        lingering_ends "$PL" "$SL" "once empty, the session goes whole"
else
        skip "tests/host/nomkdir.so is not built"
fi

echo "# 5g. a session that outlives its login in login/ (a nohup job): every leaf stays free"
linger ling5 "echo \$\$ >$U/ling5.pid; exec sleep 300"
check_eq "the lingering process sits in login/" "$SL/login" "$(cgof "$PL")"
check_eq "after close: login/ and leaf-1 .. leaf-6" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login" \
        "$(nleaves <(ls "$CPU$SL"))"
lingering_ends "$PL" "$SL" "once empty, the session goes whole"

echo "# 5h. the user's pool changed while an old session lives on: the old place is closed at the next login (cgroup v1)"
# The lingering process holds the old session's leaf-2/cgroup.procs open (v1
# checks the opener's credentials at each write, so a chown back alone would
# not stop it), and writes its own pid through it once the next login is done.
cat >"$U/holder.pl" <<'EOS'
open(my $f, ">", $ARGV[0]) or die "open: $!";
open(my $p, ">", $ARGV[1]); print $p "$$\n"; close $p;
select(undef, undef, undef, 0.05) until -e $ARGV[2];
my $ok = syswrite($f, "$$\n");
open(my $r, ">", "$ARGV[3].tmp"); print $r (defined $ok ? "done" : "refused"), "\n"; close $r;
rename("$ARGV[3].tmp", $ARGV[3]);
sleep 300;
EOS
chmod 644 "$U/holder.pl"
linger ling6 "d=$CPU\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup); echo \$\$ >\$d/leaf-1/cgroup.procs; exec perl $U/holder.pl \$d/leaf-2/cgroup.procs $U/ling6.pid $U/ling6.go $U/ling6.res"
check_eq "the old session lives on, its process in leaf-1" "$SL/leaf-1" "$(cgof "$PL")"
printf '%s\n' "* weight 100" "$UA pool moved" "pool:moved max 50%" >"$CONF"
"$AGDRV" --pam "$T" agdef "$UA" open env \
        run-user "sh -c 'echo \$\$ >$CPU$SL/leaf-2/cgroup.procs && echo moved || echo refused' >$U/pull.txt 2>/dev/null" \
        close >"$T/pull.out" 2>&1
check "the next login lands in the pool" grep -q "^AUTOGROUP_SESSION=/$ROOT/pool-moved/user-$IA/" "$T/pull.out"
check_eq "the user's process from the new login cannot be moved into the old session's leaf" refused "$(cat "$U/pull.txt")"
check_eq "root moved the old session's process into the new place (its shared group, under the pool's cap)" \
        "/$ROOT/pool-moved/user-$IA/shared" "$(cgof "$PL")"
check "the old session is gone" test ! -e "$CPU$SL"
check "the old place's user group is gone" test ! -e "$CG/user-$IA"
touch "$U/ling6.go"; wait_for "$U/ling6.res" . || true
check_eq "the cgroup.procs fd the user opened earlier grants nothing" refused "$(cat "$U/ling6.res")"
check_eq "the process stays under the new place's cap" "/$ROOT/pool-moved/user-$IA/shared" "$(cgof "$PL")"
printf '%s\n' "* weight 100" "pool:moved max 50%" >"$CONF"
kill "$PL" 2>/dev/null
for i in $(seq 100); do [ -e "/proc/$PL" ] || break; sleep 0.1; done
"$AGDRV" --pam "$T" agdef "$UA" tty= open close >/dev/null 2>&1
check "once empty, the next login (back in no pool) removes the pool's groups" test ! -e "$CG/pool-moved"
echo "* weight 100" >"$CONF"

echo "# 5h2. a pool no config names any more, its session lingering: gc closes it (cgroup v1)"
printf '%s\n' "* weight 100" "$UA pool old" "pool:old max 50%" >"$CONF"
rm -f "$U/ling7.pid" "$U/ling7.go" "$U/ling7.res"
linger ling7 "d=$CPU\$(sed -n 's/^[0-9]*:cpu:\(.*\)\/login\$/\1/p' /proc/self/cgroup); echo \$\$ >\$d/leaf-1/cgroup.procs; exec perl $U/holder.pl \$d/leaf-2/cgroup.procs $U/ling7.pid $U/ling7.go $U/ling7.res"
check_eq "the session lingers in pool old, its process in leaf-1" "$SL/leaf-1" "$(cgof "$PL")"
echo "* weight 100" >"$CONF"
"$HELPER" --root "$ROOT" --pam-dir "$T" gc >"$T/gc7.out" 2>&1
check_eq "gc moved the process into the user's shared group of the same pool (its caps)" \
        "/$ROOT/pool-old/user-$IA/shared" "$(cgof "$PL")"
check "gc removed the old session" test ! -e "$CPU$SL"
check_eq "nothing in the pool is the user's" 0 "$(find "$CG/pool-old" -user "$UA" | wc -l)"
touch "$U/ling7.go"; wait_for "$U/ling7.res" . || true
check_eq "the cgroup.procs fd the user opened earlier grants nothing" refused "$(cat "$U/ling7.res")"
kill "$PL" 2>/dev/null
for i in $(seq 100); do [ -e "/proc/$PL" ] || break; sleep 0.1; done
"$HELPER" --root "$ROOT" --pam-dir "$T" gc >"$T/gc7b.out" 2>&1
check "once empty, gc removes the pool" test ! -e "$CG/pool-old"

echo "# 5i. the user's own process in a group root made outside the tree (another tool's cap): what v1 gives"
# cgroup v1 checks uids only (__cgroup1_procs_write), not where the process
# comes from: with a leaf's cgroup.procs the user can pull any process of
# theirs into it (SECURITY.md rule 16); cgroup v2 refuses it (section 7)
# pull.sh MOUNT LINE PID: as the user, from inside a session: the session's
# leaf-1 (from the line of /proc/self/cgroup matching LINE) takes this shell
# (a control), then PID; prints "self=<done|refused> pid=<done|refused>"
cat >"$U/pull.sh" <<'EOS'
s=$(sed -n "s/^$2//p" /proc/self/cgroup | sed 's|/login$||')
p="$1$s/leaf-1/cgroup.procs"
a=refused; b=refused
(echo $$ >"$p") 2>/dev/null && a=done
(echo "$3" >"$p") 2>/dev/null && b=done
echo "self=$a pid=$b"
EOS
chmod 644 "$U/pull.sh"
# outside_sleeper DIR: a process of A's that root puts in the group DIR (PO)
outside_sleeper() {
        setpriv --reuid="$IA" --regid="$(id -g "$UA")" --clear-groups sleep 300 &
        PO=$!; track_pid "$PO"
        echo "$PO" >"$1/cgroup.procs"
        # A's once setpriv is through (a loaded machine may not have run it yet)
        for _ in $(seq 200); do [ "$(awk '/^Uid:/ {print $2}' "/proc/$PO/status" 2>/dev/null)" = "$IA" ] && break; sleep 0.05; done
}
mkdir "$CG-out"; AG_CGROOTS="$AG_CGROOTS $CG-out"
outside_sleeper "$CG-out"
"$AGDRV" --pam "$T" agdef "$UA" open env run-user "sh $U/pull.sh $CPU '[0-9]*:cpu:' $PO >$U/out.txt" \
        close >"$T/out.out" 2>&1
check_eq "(v1) the kernel lets the user pull their own process from outside into a leaf" "self=done pid=done" \
        "$(cat "$U/out.txt")"
kill "$PO" 2>/dev/null; wait "$PO" 2>/dev/null
rmdir "$CG-out" 2>/dev/null

echo "# 6. a real client: su -l with the default line, the attack from the login shell"
if ldd "$AG_MODULE" 2>/dev/null | grep -q libasan; then
        # .ci/sanitize: su is not instrumented and cannot load this module
        skip "su -l cannot load a module built with AddressSanitizer"
elif command -v su >/dev/null && command -v unshare >/dev/null; then
        mkdir -m 755 "$T/pamd"
        cp "$T/other" "$T/pamd/other"
        printf '%s\n' "auth     sufficient pam_rootok.so" "auth     required   pam_deny.so" \
                "account  required   pam_permit.so" "password required   pam_deny.so" \
                "session  required   pam_permit.so" \
                "session  optional   $AG_MODULE root=$ROOT conf=$CONF" >"$T/pamd/su-l"
        timeout -k 5 120 unshare -m --propagation private \
                sh -c "mount --bind '$T/pamd' /etc/pam.d && script -qec \"su -l $UA -c 'sh $U/attack.sh $U/su.att'\" /dev/null" \
                >"$T/su.out" 2>&1
        sed 's/^/#   /' "$U/su.att"
        SS=$(val session "$U/su.att")
        check "(su -l) the login shell sat in a session of root's leaves" test -n "$SS"
        check_eq "(su -l) own process into leaf-1, not out of the leaves" "done refused refused refused" \
                "$(val own_into_leaf1 "$U/su.att") $(val own_into_login "$U/su.att") $(val own_into_user "$U/su.att") $(val own_into_top "$U/su.att")"
        check_eq "(su -l) su itself cannot be moved or stopped" "refused refused $SS/login S" \
                "$(val caller_into_leaf1 "$U/su.att") $(val signal_caller "$U/su.att") $(val caller_at "$U/su.att") $(val caller_state "$U/su.att")"
        check "(su -l) the session is gone after su returns" test ! -e "$CPU$SS"
else
        skip "su or unshare missing"
fi

echo "# 7. the cgroup v2 rules on the host's cgroup2 mount (no cpu controller)"
if [ -f "$UNIFIED/cgroup.procs" ] && [ "$(stat -f -c %T "$UNIFIED")" = cgroup2fs ]; then
        "$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" open env \
                run-user "ATTACK_V2_MOUNT=$UNIFIED sh $U/attack.sh $U/v2.att" close >"$T/v2.out" 2>&1
        sed 's/^/#   /' "$U/v2.att"
        S=$(val AUTOGROUP_SESSION "$T/v2.out")
        check_eq "(v2) six leaves" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 " "$(val leaves "$U/v2.att")"
        check_eq "(v2) the session's cgroup.procs (the common ancestor) and the leaf's are the user's, the rest root's" \
                "root $UA root root root $UA " "$(val owners "$U/v2.att" | sed 's/ [^ ]*$/ /')"
        for k in mkdir_session mkdir_leaf mkdir_login; do
                check_eq "(v2) the user cannot mkdir ($k)" refused "$(val $k "$U/v2.att")"
        done
        check_eq "(v2) own process: into leaf-1, then leaf-2" "done done" \
                "$(val own_into_leaf1 "$U/v2.att") $(val own_into_leaf2 "$U/v2.att")"
        for k in own_into_login own_into_user own_into_root own_into_top; do
                check_eq "(v2) the user cannot move their process out of the session ($k)" refused "$(val $k "$U/v2.att")"
        done
        # v2 checks the common ancestor's cgroup.procs, not the process's owner:
        # the root caller can be moved between the session's leaves, and nowhere else
        check_eq "(v2) the root caller can be moved into a leaf of the session only" "done $S/leaf-1 refused refused" \
                "$(val caller_into_leaf1 "$U/v2.att") $(val caller_moved_to "$U/v2.att") $(val caller_into_user "$U/v2.att") $(val caller_into_top "$U/v2.att")"
        for k in freeze_leaf-1 kill_leaf-1 freeze_login kill_login signal_caller; do
                check_eq "(v2) which grants nothing: the user cannot freeze, kill or stop it ($k)" refused "$(val "$k" "$U/v2.att")"
        done
        check_eq "(v2) the root caller runs on" S "$(val caller_state "$U/v2.att")"
        check "(v2) close moved the caller out and removed the session" test ! -e "$UNIFIED$S"
        # the user's own process in a group root made outside the session
        mkdir -p "$UNIFIED/$ROOT/outside"
        outside_sleeper "$UNIFIED/$ROOT/outside"
        "$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" open env run-user "sh $U/pull.sh $UNIFIED 0:: $PO >$U/out2.txt" \
                close >"$T/out2.out" 2>&1
        check_eq "(v2) the user cannot pull their own process from outside the session into a leaf" \
                "self=done pid=refused" "$(cat "$U/out2.txt")"
        check_eq "(v2) it stays where root put it" "/$ROOT/outside" "$(sed -n 's/^0:://p' "/proc/$PO/cgroup")"
        kill "$PO" 2>/dev/null; wait "$PO" 2>/dev/null
        rmdir "$UNIFIED/$ROOT/outside" 2>/dev/null
else
        skip "no cgroup2 mount at $UNIFIED"
fi
finish
