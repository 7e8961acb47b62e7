#!/bin/bash
# Latency classes on the host (cgroup v1 cpu): the config item
# "latency" through real libpam (agdrv --pam, pam_autogroup.so), read back with
# sched_getattr (tests/host/schedattr) on the session's opener and the
# processes started inside it; the nice value kept; real-time tasks left
# alone; a kernel without custom slices or without cpu.idle
# (tests/host/noslice.so, LD_PRELOAD);
# "autogroup run" and "autogroup set" as the unprivileged user in the default
# layout (root's leaves: the user owns only their cgroup.procs), and attacks
# on them: leaving the session, changing any weight, other users' groups;
# the item "interactive": the class leaves root makes at levels 1 and 2 with
# the table's weights, where "autogroup run/set --latency" put a command, read
# back, no weight the user can change, and attacks with it (leave the
# session, go above the user's share, claim a level by hand).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
SA="$abs_top_builddir/tests/host/schedattr"
NOSLICE="$abs_top_builddir/tests/host/.libs/noslice.so"
for f in "$HELPER" "$SA" "$NOSLICE"; do [ -e "$f" ] || skip_all "$f not built"; done
# In the sanitizer build (.ci/sanitize) the ASan runtime must come first in
# the preload list, before the shim.
PRELOAD="$NOSLICE"
asan=$(ldd "$AGDRV" 2>/dev/null | awk '/libasan/ { print $3; exit }')
[ -n "$asan" ] && PRELOAD="$asan:$NOSLICE"
ROOT="agtest-$$"
CG="$CPU/$ROOT"
AG_CGROOTS="$CG"   # and A's latency lane beside it (interactive 2, section 4c), once A's uid is known
AG="$HELPER --root $ROOT"
start_syslog || true

add_group "${TAG}v"
add_user "${TAG}a"; add_user "${TAG}b"; add_user "${TAG}c" "${TAG}v"; add_user "${TAG}d"
UA="${TAG}a"; UB="${TAG}b"; UC="${TAG}c"; UD="${TAG}d"
IA=$(id -u "$UA")
AG_CGROOTS="$AG_CGROOTS $CPU/$ROOT.lane-$IA"
CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
*               latency  normal
@${TAG}v        latency  interactive
$UA             latency  audio
$UB             latency  0
CONF
chmod 644 "$CONF"
pam_other
# the default line (no delegate=): root makes each session's leaves
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s debug\n' "$AG_MODULE" "$ROOT" "$CONF" >"$T/agtest"
# bg NAME USER ACTIONS...: a session that stays open until $T/NAME.go exists
# (env: PRE, a command prefix for agdrv). Its own, not lib.sh's: PID_NAME must
# be agdrv itself (the opener whose scheduling the checks read)
bg() {
        local n="$1" u="$2"; shift 2
        ${PRE:-} "$AGDRV" --pam "$T" agtest "$u" open env cgroup "$@" wait-file "$T/$n.go" close >"$T/$n.out" 2>&1 &
        track_pid $!
        eval "PID_$n=$!"
        wait_for "$T/$n.out" '^cgroup='
}
cgof() { sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$1/cgroup" 2>/dev/null; }
# attr PID FIELD: policy, nice or runtime as sched_getattr reports them
attr() { "$SA" "$1" 2>/dev/null | sed -n "s/.* $2=\([0-9-]*\).*/\1/p"; }
# groups_of SESSION: the names of the groups right below SESSION, sorted
groups_of() { find "$CPU$1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//'; }
# a command that prints its leaf and the leaf's cpu.shares
LEAF_SHARES="sh -c 'p=\$(grep :cpu: /proc/self/cgroup | cut -d: -f3); echo \$p \$(cat $CPU\$p/cpu.shares)'"
# a child and a grandchild of the session, started as the user: "sh" that
# records its pid and starts "sleep"
CHILD='echo $$ >'"$U"'/$N.sh; sleep 600 & echo $! >'"$U"'/$N.sleep; wait'
pids_of() { wait_for "$U/$1.sleep" '^[0-9]+$'; P_SH=$(cat "$U/$1.sh"); P_SL=$(cat "$U/$1.sleep"); track_pid "$P_SH" "$P_SL"; }
sleep 600 & P_PLAIN=$!; track_pid "$P_PLAIN"
DEFAULT=$(attr "$P_PLAIN" runtime)      # the kernel's default slice on this machine
echo "# kernel $(uname -r), default slice ${DEFAULT} ns"

echo "# 1. check and explain know the item"
out=$("$HELPER" check "$CONF" 2>&1); rc=$?
check_eq "check: the config is valid" "0:$CONF: OK, 4 rules" "$rc:$(echo "$out" | tail -n1)"
printf '* latency 4\n* latency Audio\n* latency audio\n' >"$T/bad.conf"; chmod 644 "$T/bad.conf"
out=$("$HELPER" check "$T/bad.conf" 2>&1); rc=$?
check "check: an invalid class is an error naming file:line" grep -q "^$T/bad.conf:1: invalid latency" <<<"$out"
check "check: a class name is case-sensitive" grep -q "^$T/bad.conf:2: invalid latency" <<<"$out"
check_eq "check: exit non-zero, 2 errors" "1:$T/bad.conf: 2 errors" "$rc:$(echo "$out" | tail -n1)"
out=$("$HELPER" explain --conf "$CONF" "$UA" 2>&1)
check "explain: latency from the user line" grep -qE "^latency +audio +from $CONF:3 \(rule text: $UA latency audio\)" <<<"$out"
check "explain: the scheduler attributes" grep -q "^scheduler: latency class 3 (audio): SCHED_OTHER, slice 0.1 ms, nice kept" <<<"$out"
out=$("$HELPER" explain --conf "$CONF" "$UC" 2>&1)
check "explain: latency from the @group line" grep -qE "^latency +interactive +from $CONF:2 " <<<"$out"
out=$("$HELPER" explain --conf "$CONF" "$UB" 2>&1)
check "explain: class 0 is batch" grep -q "^scheduler: latency class 0 (batch): SCHED_BATCH, slice 100 ms" <<<"$out"

echo "# 2. the class at open: the opener and every process started in the session"
N=a PRE="nice -n 7" bg a "$UA" spawn-user "N=a; $CHILD"
S_A=$(val AUTOGROUP_SESSION a)
pids_of a
check "session of A opened and grouped" grep -q "^cgroup=/$ROOT/user-$IA/" "$T/a.out"
check_eq "opener (agdrv): SCHED_OTHER, slice 0.1 ms" "0 100000" "$(attr "$PID_a" policy) $(attr "$PID_a" runtime)"
check_eq "its child (sh as the user): slice 0.1 ms" 100000 "$(attr "$P_SH" runtime)"
check_eq "grandchild (sleep): slice 0.1 ms" 100000 "$(attr "$P_SL" runtime)"
check_eq "nice 7 kept on the opener, child and grandchild" "7 7 7" "$(attr "$PID_a" nice) $(attr "$P_SH" nice) $(attr "$P_SL" nice)"
log_has "debug line: class applied" "latency class audio \(SCHED_OTHER, slice 0.1 ms\) for $UA: applied"
N=b bg b "$UB" spawn-user "N=b; $CHILD"; pids_of b
check_eq "class 0: SCHED_BATCH with a 100 ms slice, inherited" "3 100000000 3 100000000" \
        "$(attr "$PID_b" policy) $(attr "$PID_b" runtime) $(attr "$P_SL" policy) $(attr "$P_SL" runtime)"
N=c bg c "$UC" spawn-user "N=c; $CHILD"; pids_of c
check_eq "class 2 from @group: slice 0.5 ms, inherited" "500000 500000" "$(attr "$PID_c" runtime) $(attr "$P_SL" runtime)"
N=d bg d "$UD" spawn-user "N=d; $CHILD"; pids_of d
check_eq "class 1 (normal): nothing changed, the kernel's default" "0 $DEFAULT $DEFAULT" \
        "$(attr "$PID_d" policy) $(attr "$PID_d" runtime) $(attr "$P_SL" runtime)"
PRE="chrt -f 5" bg rt "$UA"
check_eq "a SCHED_FIFO opener is left alone" 1 "$(attr "$PID_rt" policy)"
log_has "debug line: real-time task left alone" "latency class audio .* for $UA: a real-time, deadline or SCHED_IDLE task: left alone"
touch "$T/rt.go"

echo "# 3. a kernel without custom slices: one debug line, the rest of the policy applies"
PRE="env LD_PRELOAD=$PRELOAD AG_TEST_NOSLICE=ignore" bg ni "$UA"
check "slice ignored by the kernel: session still grouped" grep -q "^cgroup=/$ROOT/user-$IA/" "$T/ni.out"
check "slice ignored by the kernel: open succeeds" grep -q "^open=PAM_SUCCESS" "$T/ni.out"
check_eq "slice ignored by the kernel: the default slice stays" "$DEFAULT" "$(attr "$PID_ni" runtime)"
log_has "debug line: no custom slices" "latency class audio .* for $UA: the kernel has no custom slices"
PRE="env LD_PRELOAD=$PRELOAD AG_TEST_NOSLICE=einval" bg ne "$UB"
check "slice refused with EINVAL: open succeeds, grouped" grep -q "^cgroup=/$ROOT/user-" "$T/ne.out"
check_eq "slice refused with EINVAL: SCHED_BATCH still applied" "3 $DEFAULT" "$(attr "$PID_ne" policy) $(attr "$PID_ne" runtime)"
log_has "debug line: no custom slices (EINVAL)" "latency class batch .* for $UB: the kernel has no custom slices"
touch "$T/ni.go" "$T/ne.go"

echo "# 4. autogroup run and set, as the user inside the session (root's leaves, interactive 0)"
# inside A's session, from its login/ leaf (user A's shell; root moves it
# there, as the login's own processes are: the user cannot)
in_a() { ( echo "$BASHPID" >"$CPU$S_A/login/cgroup.procs" && as_user "$UA" "$*" ); }
check_eq "A's session: login/ and leaf-1 .. leaf-6, no class leaf at interactive 0" \
        "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login" "$(groups_of "$S_A")"
in_a "nice -n 4 $AG run --latency normal -- sh -c 'echo \$PPID > $U/r1.ppid; echo \$\$ > $U/r1.pid; exec sleep 600'" >"$T/r1.err" 2>&1 &
track_pid $!; PID_r1=$!
wait_for "$U/r1.pid" '^[0-9]+$'; R1=$(cat "$U/r1.pid"); RP=$(cat "$U/r1.ppid"); track_pid "$R1"
L1=leaf-1
check_eq "run: CMD in the first free leaf of the session" "$S_A/$L1" "$(cgof "$R1")"
check_eq "run: the run process itself stays where it was (login/)" "$S_A/login" "$(cgof "$RP")"
check_eq "run: the leaf is root's, its cpu.shares too" "root root" "$(stat -c %U "$CPU$S_A/$L1" "$CPU$S_A/$L1/cpu.shares" | tr '\n' ' ' | sed 's/ $//')"
check_eq "run: the leaf keeps root's default weight (cpu.shares 1024)" 1024 "$(cat "$CPU$S_A/$L1/cpu.shares")"
check_eq "run --latency normal: the kernel's default slice" "$DEFAULT" "$(attr "$R1" runtime)"
check_eq "run: nice 4 kept" 4 "$(attr "$R1" nice)"
in_a "$AG set --latency audio $R1" >"$T/set1.out" 2>&1
check_eq "set --latency on a PID: slice 0.1 ms" "0:100000" "$?:$(attr "$R1" runtime)"
check_eq "  no class leaf at interactive 0: it stays in its leaf" "$S_A/$L1" "$(cgof "$R1")"
out=$(in_a "$AG set --weight 50 $L1" 2>&1); rc=$?
check_eq "set --weight on a leaf name: refused (exit 1, says why), cpu.shares stays 1024" "1:yes:1024" \
        "$rc:$(grep -q "weight and idle flag of your session's leaves are root's" <<<"$out" && echo yes):$(cat "$CPU$S_A/$L1/cpu.shares")"
in_a "$AG set --idle yes $L1" >"$T/set2.out" 2>&1
check_eq "set --idle yes on a leaf name: refused, cpu.idle stays 0" "1:0" "$?:$(cat "$CPU$S_A/$L1/cpu.idle")"
in_a "$AG set --idle no --weight 200 $R1" >"$T/set3.out" 2>&1
check_eq "set --idle no --weight on a PID's leaf: refused, unchanged" "1:1024:0" "$?:$(cat "$CPU$S_A/$L1/cpu.shares"):$(cat "$CPU$S_A/$L1/cpu.idle")"
check_not "the user cannot write the leaf's cpu.shares" as_user "$UA" "echo 10240 > $CPU$S_A/$L1/cpu.shares"
check_not "the user cannot write the leaf's cpu.idle" as_user "$UA" "echo 1 > $CPU$S_A/$L1/cpu.idle"
in_a "$AG set --latency batch $L1" >/dev/null 2>&1
check_eq "set --latency on a leaf: every process in it" "3 100000000" "$(attr "$R1" policy) $(attr "$R1" runtime)"
kill "$R1"; wait "$PID_r1" 2>/dev/null
check_eq "run waits for CMD; root's leaf stays, empty, for the next command" "yes:" \
        "$(test -d "$CPU$S_A/$L1" && echo yes):$(cat "$CPU$S_A/$L1/cgroup.procs")"
out=$(in_a "nice -n 4 $AG run --latency 3 -- sh -c 'cat $CPU\$(grep :cpu: /proc/self/cgroup | cut -d: -f3)/cpu.idle; $SA \$\$; exit 7'" 2>&1); rc=$?
check_eq "run: exit status of CMD" 7 "$rc"
check "run: the leaf is not idle (cpu.idle is root's)" grep -qx 0 <<<"$out"
check "run --latency 3: the command's slice is 0.1 ms" grep -q "policy=0 nice=4 runtime=100000\$" <<<"$out"
out=$(in_a "$AG run --latency 3 --idle -- sh -c 'echo ran > $U/idle-ran'" 2>&1); rc=$?
check_eq "run --idle: refused (exit 1, says why), CMD not run" "1:yes:no" \
        "$rc:$(grep -q "weight and idle flag of your session's leaves are root's" <<<"$out" && echo yes):$(test -e "$U/idle-ran" && echo yes || echo no)"
out=$(in_a "$AG run -- /nonexistent/cmd" 2>&1); rc=$?
check_eq "run: a command that cannot start: 127 and a message" "127:yes" "$rc:$(grep -q 'cannot run /nonexistent/cmd' <<<"$out" && echo yes)"
check_eq "run: no group made, every leaf empty again" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login:" \
        "$(groups_of "$S_A"):$(cat "$CPU$S_A"/leaf-*/cgroup.procs)"
out=$(in_a "$AG run -- sh -c 'sleep 600 >/dev/null 2>&1 & echo \$! > $U/bgp'" 2>&1)
BGP=$(cat "$U/bgp"); track_pid "$BGP"
check_eq "run: a background process keeps its leaf" "$S_A/leaf-1" "$(cgof "$BGP")"
out=$(in_a "$AG run -- $LEAF_SHARES" 2>&1)
check_eq "run: the next command takes the next free leaf" "$S_A/leaf-2 1024" "$out"
kill "$BGP"; for _ in $(seq 100); do [ -d "/proc/$BGP" ] || break; sleep 0.05; done
out=$(in_a "$AG run -- $LEAF_SHARES" 2>&1)
check_eq "run: a leaf is reused once its processes are gone" "$S_A/leaf-1 1024" "$out"
check_eq "run: root's args after -- are the command's" "--root x" "$(in_a "$AG run -- echo --root x" 2>&1)"

echo "# 4b. a kernel without cpu.idle (the shim hides the file): one debug line, the rest of the policy applies"
add_user "${TAG}e"; UE="${TAG}e"; IE=$(id -u "$UE"); UG="$CG/user-$IE"
cat >"$T/idle.conf" <<CONF
$UE             idle     yes
$UE             weight   300
$UE             max      50%
CONF
chmod 644 "$T/idle.conf"
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s debug\n' "$AG_MODULE" "$ROOT" "$T/idle.conf" >"$T/agidle"
# bgi NAME [PREFIX...]: E's session through the agidle stack, open until $T/NAME.go exists
bgi() {
        local n="$1"; shift
        "$@" "$AGDRV" --pam "$T" agidle "$UE" open cgroup wait-file "$T/$n.go" close >"$T/$n.out" 2>&1 &
        track_pid $!
        eval "PID_$n=$!"
        wait_for "$T/$n.out" '^cgroup='
}
NOIDLE_LINE='the kernel has no cpu.idle \(Linux 5.15 or later needed\): idle yes not applied, the rest of the policy is'
bgi ic env
check_eq "with cpu.idle (this kernel): the user group is idle, capped at 50%" "1 50000" "$(cat "$UG/cpu.idle" "$UG/cpu.cfs_quota_us" | tr '\n' ' ' | sed 's/ $//')"
touch "$T/ic.go"; wait "$PID_ic" 2>/dev/null
check "its user group removed at close" test ! -e "$UG"
if have_syslog; then
        check_eq "with cpu.idle: no 'no cpu.idle' line" 0 "$(grep -cE -- "$NOIDLE_LINE" "$SYSLOG")"
else
        skip "with cpu.idle: no 'no cpu.idle' line (no syslog capture: /dev/log is taken)"
fi
bgi in env LD_PRELOAD="$PRELOAD" AG_TEST_NOIDLE=1
check "without cpu.idle: open succeeds" grep -q "^open=PAM_SUCCESS" "$T/in.out"
check "without cpu.idle: grouped in the user's session" grep -q "^cgroup=/$ROOT/user-$IE/.*/login\$" "$T/in.out"
check_eq "without cpu.idle: weight 300 and max 50% applied, cpu.idle not written" "3072 50000 0" \
        "$(cat "$UG/cpu.shares" "$UG/cpu.cfs_quota_us" "$UG/cpu.idle" | tr '\n' ' ' | sed 's/ $//')"
log_has "without cpu.idle: one debug line" "$NOIDLE_LINE"
touch "$T/in.go"; wait "$PID_in" 2>/dev/null
if have_syslog; then
        check_eq "without cpu.idle: exactly one such line for the login" 1 "$(grep -cE -- "$NOIDLE_LINE" "$SYSLOG")"
else
        skip "without cpu.idle: exactly one such line (no syslog capture: /dev/log is taken)"
fi
check "without cpu.idle: the user group removed at close" test ! -e "$UG"
# autogroup run --idle, as the user in A's session: the leaves' idle flag is
# root's, so run refuses --idle before it looks at the kernel (the note about
# a kernel without cpu.idle belongs to a session delegated to the user, v2 only)
out=$(in_a "env LD_PRELOAD='$PRELOAD' AG_TEST_NOIDLE=1 $AG run --idle -- env -u LD_PRELOAD -u AG_TEST_NOIDLE sh -c 'echo ran > $U/noidle-ran; exit 5'" 2>&1); rc=$?
check_eq "run --idle without cpu.idle: refused like with it (exit 1), CMD not run, no note" "1:no:no" \
        "$rc:$(test -e "$U/noidle-ran" && echo yes || echo no):$(grep -q 'no cpu.idle' <<<"$out" && echo yes || echo no)"
check_eq "run: no group made, the leaves' cpu.idle still 0" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login:0 0 0 0 0 0" \
        "$(groups_of "$S_A"):$(cat "$CPU$S_A"/leaf-*/cpu.idle | tr '\n' ' ' | sed 's/ $//')"

echo "# 4c. interactive 0|1|2: the leaf weight of autogroup run/set --latency, from one table"
cat >"$T/inter.conf" <<CONF
*               interactive  0
@${TAG}v        interactive  1
$UA             interactive  2
$UA             max          150%
CONF
chmod 644 "$T/inter.conf"
out=$("$HELPER" check "$T/inter.conf" 2>&1); rc=$?
check_eq "check: interactive lines are valid" "0:$T/inter.conf: OK, 4 rules" "$rc:$(echo "$out" | tail -n1)"
printf '* interactive 3\n* interactive yes\n* interactive 1\n' >"$T/bad-i.conf"; chmod 644 "$T/bad-i.conf"
out=$("$HELPER" check "$T/bad-i.conf" 2>&1); rc=$?
check "check: interactive 3 is an error naming file:line" grep -qx "$T/bad-i.conf:1: invalid interactive (expected 0, 1 or 2)" <<<"$out"
check_eq "check: exit non-zero, 2 errors" "1:$T/bad-i.conf: 2 errors" "$rc:$(echo "$out" | tail -n1)"
out=$("$HELPER" explain --conf "$T/inter.conf" "$UA" 2>&1)
check "explain: interactive from the user line" grep -qE "^interactive +2 +from $T/inter.conf:3 \(rule text: $UA interactive 2\)" <<<"$out"
check "explain: the level's leaf weights" grep -q "^interactive: level 2: the leaf of autogroup run --latency gets weight batch 100, normal 100, interactive 400, audio 1000" <<<"$out"
out=$("$HELPER" explain --conf "$T/inter.conf" "$UC" 2>&1)
check "explain: interactive from the @group line" grep -qE "^interactive +1 +from $T/inter.conf:2 " <<<"$out"
out=$("$HELPER" explain --conf "$T/inter.conf" "$UD" 2>&1)
check "explain: level 0 changes latency only" grep -q "^interactive: level 0: autogroup run --latency changes latency only" <<<"$out"
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s debug\n' "$AG_MODULE" "$ROOT" "$T/inter.conf" >"$T/aginter"
# bgk NAME USER: a session through the aginter stack, open until $T/NAME.go exists
bgk() {
        "$AGDRV" --pam "$T" aginter "$2" open env cgroup wait-file "$T/$1.go" close >"$T/$1.out" 2>&1 &
        track_pid $!
        eval "PID_$1=$!"
        wait_for "$T/$1.out" '^cgroup='
}
bgk k2 "$UA"; bgk k1 "$UC"; bgk k0 "$UD"
check_eq "the module exports the level: A 2, C (@group) 1, D 0" "2 1 0" "$(val AUTOGROUP_INTERACTIVE k2) $(val AUTOGROUP_INTERACTIVE k1) $(val AUTOGROUP_INTERACTIVE k0)"
# in_k NAME USER CMD: CMD as USER from the login/ leaf of session NAME (root
# moves the shell there), with the level the module exported
in_k() { ( echo "$BASHPID" >"$CPU$(val AUTOGROUP_SESSION "$1")/login/cgroup.procs" &&
           as_user "$2" "AUTOGROUP_INTERACTIVE=$(val AUTOGROUP_INTERACTIVE "$1") $3" ); }
# files_of NAME: the user group's and the session's weight, cap and idle files, and the weight of
# every group of the session (login/, leaf-1 .. leaf-6, the class leaves)
files_of() {
        local s; s=$CPU$(val AUTOGROUP_SESSION "$1")
        cat "$(dirname "$s")"/cpu.shares "$(dirname "$s")"/cpu.cfs_quota_us "$(dirname "$s")"/cpu.idle \
            "$s"/cpu.shares "$s"/cpu.cfs_quota_us "$s"/cpu.idle "$s"/*/cpu.shares "$s"/*/cpu.idle | tr '\n' ' '
}
declare -A F_K
for n in k0 k1 k2; do F_K[$n]=$(files_of $n); done
check_eq "A's user group at max 150% (the cap the leaf weights stay under)" 150000 \
        "$(cat "$(dirname "$CPU$(val AUTOGROUP_SESSION k2)")/cpu.cfs_quota_us")"
# the class leaves root made at open, with the table's weights, and who owns what
S_K2=$(val AUTOGROUP_SESSION k2); S_K1=$(val AUTOGROUP_SESSION k1); S_K0=$(val AUTOGROUP_SESSION k0)
LEAVES6="leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6"
check_eq "level 0: no class leaf" "$LEAVES6 login" "$(groups_of "$S_K0")"
check_eq "level 1: class-audio and class-interactive beside the leaves" "class-audio class-interactive $LEAVES6 login" "$(groups_of "$S_K1")"
check_eq "level 2: class-audio and class-interactive beside the leaves" "class-audio class-interactive $LEAVES6 login" "$(groups_of "$S_K2")"
check_eq "level 1: root wrote the table's weights: interactive 200, audio 400 (shares 2048 4096)" "2048 4096" \
        "$(cat "$CPU$S_K1/class-interactive/cpu.shares" "$CPU$S_K1/class-audio/cpu.shares" | tr '\n' ' ' | sed 's/ $//')"
check_eq "level 2: root wrote the table's weights: interactive 400, audio 1000 (shares 4096 10240)" "4096 10240" \
        "$(cat "$CPU$S_K2/class-interactive/cpu.shares" "$CPU$S_K2/class-audio/cpu.shares" | tr '\n' ' ' | sed 's/ $//')"
check_eq "level 2: a class leaf is root's but for its cgroup.procs" "root root root root $UA" \
        "$(stat -c %U "$CPU$S_K2/class-audio" "$CPU$S_K2/class-audio/cpu.shares" "$CPU$S_K2/class-audio/cpu.idle" "$CPU$S_K2/class-audio/tasks" "$CPU$S_K2/class-audio/cgroup.procs" | tr '\n' ' ' | sed 's/ $//')"
for n in k0 k1 k2; do
        s=$CPU$(val AUTOGROUP_SESSION $n)
        as_user "$UA" "for f in $s/*/cpu.* $s/*/tasks; do (: > \$f) 2>/dev/null && echo \$f; done" >"$T/w$n.out" 2>&1
        u=$UD; [ $n = k1 ] && u=$UC; [ $n = k2 ] && u=$UA
        as_user "$u" "for f in $s/*/cpu.* $s/*/tasks; do (: > \$f) 2>/dev/null && echo \$f; done" >>"$T/w$n.out" 2>&1
        check_eq "level ${n#k}: neither the session's user nor another can open any leaf's cpu.* or tasks for writing" "" "$(cat "$T/w$n.out")"
done
# the leaf and its weight, per level, for batch normal interactive audio
declare -A WANT=([k0]="leaf-1:1024 leaf-1:1024 leaf-1:1024 leaf-1:1024"
                 [k1]="leaf-1:1024 leaf-1:1024 class-interactive:2048 class-audio:4096"
                 [k2]="leaf-1:1024 leaf-1:1024 lane:1024 lane:1024")   # the latency lane beside the tree: test-lane.sh
for n in k0 k1 k2; do
        u=$UD; [ $n = k1 ] && u=$UC; [ $n = k2 ] && u=$UA
        S_K=$(val AUTOGROUP_SESSION $n); got=""
        for c in batch normal interactive audio; do
                out=$(in_k $n "$u" "$AG run --latency $c -- $LEAF_SHARES" 2>&1)
                case $out in "$S_K"/*" "*) l=${out% *}; got="$got ${l##*/}:${out##* }" ;;
                        "/$ROOT.lane-$(id -u "$u") "*) got="$got lane:${out##* }" ;; *) got="$got ?($out)" ;; esac
        done
        check_eq "level ${n#k}: run's leaf and its shares for batch normal interactive audio" "${WANT[$n]}" "${got# }"
done
out=$(in_k k2 "$UA" "$AG run --latency audio --weight 50 -- $LEAF_SHARES" 2>&1); rc=$?
check_eq "level 2: an explicit --weight is refused (exit 1), CMD not run" "1:no" "$rc:$(grep -q "^$S_K2/" <<<"$out" && echo yes || echo no)"
out=$(in_k k2 "$UA" "$AG run -- $LEAF_SHARES" 2>&1)
check_eq "level 2: run without --latency: a free leaf, the default weight" "$S_K2/leaf-1 1024" "$out"
out=$(in_k k2 "$UA" "$AG run --latency audio -- sh -c '$SA \$\$'" 2>&1)
check "level 2: the class still applies (slice 0.1 ms)" grep -q "policy=0 nice=0 runtime=100000\$" <<<"$out"
# set --latency on a leaf of the user's and on processes in a leaf and in login/
in_k k2 "$UA" "$AG run -- sh -c 'echo \$\$ > $U/k2.pid; exec sleep 600'" >/dev/null 2>&1 &
track_pid $!; wait_for "$U/k2.pid" '^[0-9]+$'; K2P=$(cat "$U/k2.pid"); track_pid "$K2P"; K2L=$(basename "$(cgof "$K2P")")
check_eq "level 2: a command run without --latency sits in leaf-1" leaf-1 "$K2L"
in_k k2 "$UA" "$AG set --latency audio $K2L" >/dev/null 2>&1; rc=$?
check_eq "level 2: set --latency audio on a leaf name: slice 0.1 ms, the leaf's weight stays root's 1024" "0 1024 100000" \
        "$rc $(cat "$CPU$S_K2/$K2L/cpu.shares") $(attr "$K2P" runtime)"
in_k k2 "$UA" "$AG set --latency audio $K2P" >/dev/null 2>&1; rc=$?
check_eq "level 2: set --latency audio on its PID: into A's latency lane (class-audio keeps shares 10240)" "0 /$ROOT.lane-$IA 10240" \
        "$rc $(cgof "$K2P") $(cat "$CPU$S_K2/class-audio/cpu.shares")"
in_k k2 "$UA" "$AG set --latency normal $K2P" >/dev/null 2>&1; rc=$?
check_eq "level 2: set --latency normal on its PID: the default slice, no weight changed" "0 $DEFAULT 1024 10240" \
        "$rc $(attr "$K2P" runtime) $(cat "$CPU$S_K2/leaf-1/cpu.shares") $(cat "$CPU$S_K2/class-audio/cpu.shares")"
case $(cgof "$K2P") in "$S_K2"/leaf-[1-6]|"$S_K2"/class-*) ok "  and it is still in a leaf of its session" ;;
        *) not_ok "  and it is still in a leaf of its session (in $(cgof "$K2P"))" ;; esac
( echo "$BASHPID" >"$CPU$S_K2/login/cgroup.procs" && exec setpriv --reuid="$UA" --regid="$(id -g "$UA")" --init-groups -- sh -c "echo \$\$ > $U/k2l.pid; exec sleep 600" ) & track_pid $!
wait_for "$U/k2l.pid" '^[0-9]+$'; K2LP=$(cat "$U/k2l.pid"); track_pid "$K2LP"
check_eq "level 2: a process of the user's in login/" "$S_K2/login" "$(cgof "$K2LP")"
out=$(in_k k2 "$UA" "$AG set --latency audio $K2LP" 2>&1); rc=$?
check_eq "level 2: set --latency audio on it: the class applies, it goes into A's latency lane (exit 0)" "0 100000 /$ROOT.lane-$IA" \
        "$rc $(attr "$K2LP" runtime) $(cgof "$K2LP")"
check_eq "level 2: login/'s weight unchanged" 1024 "$(cat "$CPU$S_K2/login/cpu.shares")"
out=$(in_k k2 "$UA" "$AG set --latency audio --weight 10000 $K2LP" 2>&1); rc=$?
check_eq "level 2: an explicit --weight is still refused" "1 10240" "$rc $(cat "$CPU$S_K2/class-audio/cpu.shares")"
out=$(in_k k2 "$UA" "$AG set --latency audio $PID_k2" 2>&1); rc=$?
check_eq "level 2: set on root's process of the session (the opener): refused, it stays in login/" "1 $S_K2/login" "$rc $(cgof "$PID_k2")"
echo "# attacks with the knob, as the user"
out=$(as_user "$UA" "AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- true" 2>&1); rc=$?
check_eq "outside any session (root cgroup), level 2 given by hand: refused" "1:yes" \
        "$rc:$(grep -q 'not inside one of your pam_autogroup sessions' <<<"$out" && echo yes)"
out=$(in_k k2 "$UA" "AUTOGROUP_SESSION=$(val AUTOGROUP_SESSION k1) $AG run --latency audio -- $LEAF_SHARES" 2>&1)
check_eq "a forged AUTOGROUP_SESSION (C's session): the command goes to A's own lane, not C's" "/$ROOT.lane-$IA 1024" "$out"
out=$(in_k k0 "$UD" "AUTOGROUP_INTERACTIVE=9 $AG run --latency audio -- $LEAF_SHARES" 2>&1)
check_eq "an out-of-range level by hand is level 0" "$S_K0/leaf-1 1024" "$out"
out=$(in_k k0 "$UD" "AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- $LEAF_SHARES" 2>&1)
check_eq "level 2 by hand at a level-0 login: root's level holds (a free leaf, weight 1024; no lane made)" "$S_K0/leaf-1 1024" "$(tail -n1 <<<"$out")"
in_k k2 "$UA" "$AG run --latency audio -- sh -c 'echo 262144 > $(dirname "$CPU$S_K2")/cpu.shares; echo -1 > $(dirname "$CPU$S_K2")/cpu.cfs_quota_us; echo 262144 > $CPU$S_K2/cpu.shares; echo 262144 > $CPU$S_K2/login/cpu.shares; echo 262144 > $CPU$S_K2/class-audio/cpu.shares; echo 2 > $CPU$S_K2/leaf-1/cpu.shares; echo 1 > $CPU$S_K2/leaf-1/cpu.idle; echo \$\$ > $CPU/cgroup.procs; echo \$\$ > $CPU/$ROOT/cgroup.procs; echo \$\$ > $CPU$S_K2/login/cgroup.procs; echo \$\$ > $CPU$S_K1/class-audio/cgroup.procs'" >/dev/null 2>&1
for n in k0 k1 k2; do
        check_eq "level ${n#k}: the user group's and session's weight, cap and idle, and every leaf's weight and idle flag unchanged" \
                "${F_K[$n]}" "$(files_of $n)"
done
check_eq "C's class-audio holds nothing of A's" "" "$(cat "$CPU$S_K1/class-audio/cgroup.procs")"
kill "$K2P" "$K2LP" 2>/dev/null
for n in k0 k1 k2; do touch "$T/$n.go"; eval "wait \$PID_$n" 2>/dev/null; done

echo "# 5. attacks: leave the session, raise anything above it, other users' groups"
SH_U=$(cat "$CPU/$ROOT/user-$IA/cpu.shares"); SH_S=$(cat "$CPU$S_A/cpu.shares"); SH_L=$(cat "$CPU$S_A/login/cpu.shares")
out=$(as_user "$UA" "$AG run --latency audio -- true" 2>&1); rc=$?
check_eq "run outside any session (root cgroup): refused" "1:yes" "$rc:$(grep -q 'not inside one of your pam_autogroup sessions' <<<"$out" && echo yes)"
out=$(as_user "$UA" "AUTOGROUP_SESSION=$S_A $AG run -- true" 2>&1); rc=$?
check_eq "run: a forged AUTOGROUP_SESSION is not trusted" 1 "$rc"
for w in 0 10001 -5 abc 1e3 ""; do
        in_a "$AG run --weight '$w' -- true" >/dev/null 2>&1; rc=$?
        check_eq "run --weight '$w' refused (usage)" 2 "$rc"
done
for t in .. . ../login /sys/fs/cgroup/cpu "leaf-1/../.." login/..; do
        in_a "$AG set --latency batch '$t'" >/dev/null 2>&1; rc=$?
        check "set on '$t' refused" test "$rc" != 0
done
out=$(in_a "$AG set --latency batch login" 2>&1); rc=$?
check_eq "set on login/ by name (not one of root's leaves for the user): refused, the opener keeps its class" "1:yes:0" \
        "$rc:$(grep -q "not one of root's leaves for you" <<<"$out" && echo yes):$(attr "$PID_a" policy)"
check_not "the user cannot move a process into the session group itself" as_user "$UA" "echo \$\$ > $CPU$S_A/cgroup.procs"
check_not "the user cannot move a process into login/" as_user "$UA" "echo \$\$ > $CPU$S_A/login/cgroup.procs"
out=$(in_a "$AG set --latency batch $PID_b" 2>&1); rc=$?
check_eq "set on another user's session process: refused" "1:yes" "$rc:$(grep -q 'not inside one of your' <<<"$out" && echo yes)"
in_a "$AG set --latency audio $P_PLAIN" >/dev/null 2>&1; rc=$?
check_eq "set --latency on root's process outside: refused, unchanged" "1:$DEFAULT" "$rc:$(attr "$P_PLAIN" runtime)"
S_B=$(val AUTOGROUP_SESSION b)
check_not "B cannot make a group in B's session" as_user "$UB" "mkdir $CPU$S_B/mine"
# a process of B's in B's leaf-1: set on the name leaf-1 by A is about A's own leaf-1
( echo "$BASHPID" >"$CPU$S_B/login/cgroup.procs" && exec setpriv --reuid="$UB" --regid="$(id -g "$UB")" --init-groups -- sh -c "echo \$\$ > $CPU$S_B/leaf-1/cgroup.procs; echo \$\$ > $U/bl.pid; exec sleep 600" ) & track_pid $!
wait_for "$U/bl.pid" '^[0-9]+$'; BLP=$(cat "$U/bl.pid"); track_pid "$BLP"
check_eq "B put its own process into B's leaf-1" "$S_B/leaf-1" "$(cgof "$BLP")"
BL_POL=$(attr "$BLP" policy)
in_a "$AG set --latency audio leaf-1" >/dev/null 2>&1
check_eq "set on a leaf name only looks in the caller's own session: B's process unchanged" "$BL_POL 1024" \
        "$(attr "$BLP" policy) $(cat "$CPU$S_B/leaf-1/cpu.shares")"
check_not "A cannot move own process into B's leaf" as_user "$UA" "echo \$\$ > $CPU$S_B/leaf-1/cgroup.procs"
check_not "A cannot move B's process into A's own leaf" as_user "$UA" "echo $BLP > $CPU$S_A/leaf-2/cgroup.procs"
check_not "the user cannot make a symlink in the session to follow" as_user "$UA" "ln -s $CPU$S_B $CPU$S_A/evil"
out=$(as_user "$UA" "mkdir -p $U/fake/$ROOT && $AG --hierarchy $U/fake run -- true" 2>&1); rc=$?
check_eq "run --hierarchy on a directory the user controls: refused" 1 "$rc"
in_a "$AG run --latency audio -- sh -c 'echo 262144 > $CPU$S_A/cpu.shares; echo 262144 > $CPU/$ROOT/user-$IA/cpu.shares; echo 262144 > $CPU$S_A/login/cpu.shares; for l in $CPU$S_A/leaf-*; do echo 262144 > \$l/cpu.shares; done; echo \$\$ > $CPU$S_B/login/cgroup.procs; echo \$\$ > $CPU$S_B/leaf-2/cgroup.procs; echo \$\$ > $CPU/cgroup.procs'" >/dev/null 2>&1
check_eq "from inside a run leaf: user group, session and login weights unchanged" "$SH_U $SH_S $SH_L" \
        "$(cat "$CPU/$ROOT/user-$IA/cpu.shares") $(cat "$CPU$S_A/cpu.shares") $(cat "$CPU$S_A/login/cpu.shares")"
check_eq "  and every leaf's weight" "1024 1024 1024 1024 1024 1024" "$(cat "$CPU$S_A"/leaf-*/cpu.shares | tr '\n' ' ' | sed 's/ $//')"
check_eq "no process of A moved into B's session" "" "$(cat "$CPU$S_B"/login/cgroup.procs "$CPU$S_B"/leaf-*/cgroup.procs | while read -r p; do [ "$(stat -c %U /proc/$p 2>/dev/null)" = "$UA" ] && echo "$p"; done)"
kill "$BLP" 2>/dev/null

echo "# 6. cleanup"
for n in a b c d; do touch "$T/$n.go"; done
for n in a b c d rt ni ne; do eval "wait \$PID_$n" 2>/dev/null; done
for u in "$UA" "$UB" "$UC" "$UD" "$UE"; do pkill -KILL -u "$u" 2>/dev/null; done
for _ in $(seq 300); do
        left=; for p in $(pgrep -u "$UA,$UB,$UC,$UD,$UE"); do exited "$p" || left=1; done
        [ -z "$left" ] && break; sleep 0.1
done
$AG gc >/dev/null 2>&1
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
finish
