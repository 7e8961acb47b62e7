#!/bin/bash
# shellcheck disable=SC2154  # PID_<name> are set with eval by hold
# CPU accounting per session and per user, through the real
# module and real libpam on the host's cgroup v1, where cpuacct is a hierarchy
# of its own (/sys/fs/cgroup/cpuacct beside /sys/fs/cgroup/cpu):
#   - the close line (LOG_INFO) and the audit record with cpu_usec, user_usec,
#     system_usec and wall_usec, for a session that burns about 1 s of CPU
#     (a wide tolerance: this checks the figure, not a speed);
#   - the cpuacct mirror of the session: made at open, root's, holds the
#     login's processes wherever they move in the cpu hierarchy, removed at
#     close; a lingering session is reported as such and its mirror is swept
#     by the next close or by gc; the user cannot move into any mirror;
#   - "autogroup status" shows CPU time that grows while spinners run;
#   - CPU after logout: a lingering session's removal (by its watcher, a
#     later login's sweep or gc) writes one more line and record,
#     state=removed, with the CPU used up to then (a nohup burner of 2.5 s
#     left at logout shows >= 2.4 s); the watcher of a su-style caller (real
#     uid the user's) is all root's: the user cannot stop or kill it;
#   - "autogroup status" marks a session whose login closed as lingering
#     (text and JSON), not a live one;
#   - gc's count agrees with the lines it printed, the systemd mode's
#     drop-ins of slices not running counted apart (a private /run).
# Syslog is captured in private mount namespaces (tests/host/hardening-lib.sh).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
require_v1_cpu
require_own_cpuacct
require_cmds "perl: the CPU burner" perl

test_root agtest
AC="$ACCT/$ROOT"
OA="$ACCT/agorig-$$"            # a cpuacct group of the login's own, outside <root> (section 8b)
OC="$CPU/agorig-$$"             # and its cpu group
AG_CGROOTS="$CG $AC $OA $OC"
hl_syslog_start || { not_ok "syslog capture started"; finish; }

new_user a; new_user b; new_user c
CONF="$T/autogroup.conf"
printf '* weight 100\n%s sessions no\n' "$UC" >"$CONF"; chmod 644 "$CONF"
pam_other
pam_service agacct "root=$ROOT conf=$CONF"
pam_service agacctna "root=$ROOT conf=$CONF noaudit"
PFX='pam_autogroup\(agacct:session\): '
# drv USER ACTIONS... (lib.sh): a login through libpam in a namespace whose syslog is ours
SVC=agacct; BOUND=120; DRV_WRAP=(nsrun 'exec "$@"')
# field NAME LINE: the value of NAME=... in a close line
field() { printf '%s\n' "$2" | sed -n "s/.* $1=\([0-9?]*\).*/\1/p"; }
# closeline PATH STATE: the captured close line of that session
closeline() { grep -E -- "${PFX}session $(re_escape "$1") $2: " "$SYSLOG" | tail -n1; }
# about 1 s of user CPU, then exits (times() only every 100,000 rounds: it is a system call)
BURN1='perl -e "while ((times)[0] < 1.0) { for (1 .. 100000) {} }"'
SPIN='perl -e "1 while 1"'

echo "# 1. a session that burns about 1 s of CPU reports it at close"
drv "$UA" open env run-user "$BURN1" close >"$T/burn.out" 2>&1
S=$(val AUTOGROUP_SESSION burn)
check "session opened and closed" grep -q '^close=PAM_SUCCESS' "$T/burn.out"
hlog_has "close line logged" "${PFX}session $(re_escape "$S") closed: user=$UA scope=session cpu_usec=[0-9]+ user_usec=[0-9]+ system_usec=[0-9]+ wall_usec=[0-9]+ uid=$IA state=closed cgroup=$(re_escape "$S") pool=- by=close\$"
L=$(closeline "$S" closed)
CPUU=$(field cpu_usec "$L"); USERU=$(field user_usec "$L"); WALL=$(field wall_usec "$L")
echo "# close line: ${L#*: }"
check "cpu_usec about 1 s (0.5 s .. 3 s): $CPUU" between 500000 3000000 "$CPUU"
check "user_usec about 1 s (0.5 s .. 3 s, tick-sampled): $USERU" between 500000 3000000 "$USERU"
check "wall_usec at least the CPU time, less than the test's life: $WALL" between "$((CPUU * 9 / 10))" 120000000 "$WALL"
check "mirror removed at close" test ! -e "$ACCT$S"
check "user's mirror group removed at close" test ! -e "$AC/user-$IA"

echo "# 2. an idle session: little CPU, wall time of its length"
drv "$UA" open env run-user "sleep 1" close >"$T/idle.out" 2>&1
S=$(val AUTOGROUP_SESSION idle)
L=$(closeline "$S" closed)
check "idle session: cpu_usec below 0.5 s: $(field cpu_usec "$L")" between 0 500000 "$(field cpu_usec "$L")"
check "idle session: wall_usec about 1 s (1 .. 60 s): $(field wall_usec "$L")" between 1000000 60000000 "$(field wall_usec "$L")"

echo "# 3. the audit record of the session's end"
if command -v strace >/dev/null; then
        nsrun 'exec strace -f -s 768 -e trace=sendto -o "$1" "$2" --pam "$3" agacct "$4" open env run-user "$5" close' \
                "$T/audit.trace" "$AGDRV" "$T" "$UA" "$BURN1" >"$T/au.out" 2>&1
        perl -pe 's/\\x([0-9a-f]{2})/chr(hex($1))/ge' "$T/audit.trace" >"$T/audit.txt"
        SA=$(val AUTOGROUP_SESSION au)
        check "session-end record with state, cpu and wall fields" grep -aqE \
                "op=autogroup-session-end acct=\"$UA\" uid=$IA cgroup=$(re_escape "$SA") state=closed cpu_usec=[0-9]+ user_usec=[0-9]+ system_usec=[0-9]+ wall_usec=[0-9]+ " "$T/audit.txt"
        AU=$(grep -ao "op=autogroup-session-end .*" "$T/audit.txt" | tr -d '\0' | head -n1)
        check "audit cpu_usec about 1 s: $(field cpu_usec "$AU")" between 500000 3000000 "$(field cpu_usec "$AU")"
        nsrun 'exec strace -f -s 768 -e trace=sendto -o "$1" "$2" --pam "$3" agacctna "$4" open close' \
                "$T/na.trace" "$AGDRV" "$T" "$UA" >/dev/null 2>&1
        check_not "noaudit: no session-end record" grep -q "autogroup-session-end" "$T/na.trace"
else
        skip "strace not installed"
fi

echo "# 4. the cpuacct mirror of a live session"
BOUND='' hold a "$UA" cgroup
SA=$(val AUTOGROUP_SESSION a); PA=$HOLD_PID
check "mirror of the session exists: $ACCT$SA" test -d "$ACCT$SA"
check_eq "mirror owned by root" root "$(stat -c %U "$ACCT$SA")"
check_eq "mirror's cgroup.procs owned by root" root "$(stat -c %U "$ACCT$SA/cgroup.procs")"
check_eq "mirror's user group owned by root" root "$(stat -c %U "$AC/user-$IA")"
check_eq "mirror has no leaf (session level only)" "" "$(find "$ACCT$SA" -mindepth 1 -type d)"
check "the login's process is in the mirror" grep -qx "[0-9]*:cpuacct:$SA" "/proc/$PA/cgroup"
check "and in login/ of the cpu hierarchy" grep -qx "[0-9]*:cpu:$SA/login" "/proc/$PA/cgroup"
BOUND='' hold b "$UB"
SB=$(val AUTOGROUP_SESSION b)
check_not "user cannot move into own mirror" as_user "$UA" "echo \$\$ > $ACCT$SA/cgroup.procs"
check_not "user cannot move into another user's mirror" as_user "$UA" "echo \$\$ > $ACCT$SB/cgroup.procs"
check_not "user cannot move another user's process" as_user "$UA" "echo $(cat "$U/b.pid") > $ACCT$SA/cgroup.procs"
check_not "user cannot move into the mirror of <root>" as_user "$UA" "echo \$\$ > $AC/cgroup.procs"
check_not "user cannot make a group in own mirror" as_user "$UA" "mkdir $ACCT$SA/x"
check_not "user cannot reset own mirror's cpuacct.usage" as_user "$UA" "echo 0 > $ACCT$SA/cpuacct.usage"
check_not "user cannot remove another user's mirror" as_user "$UA" "rmdir $ACCT$SB"
check_not "user cannot leave the mirror to the cpuacct root" as_user "$UA" "echo $PA > $ACCT/cgroup.procs"
as_user "$UA" "echo $PA > $CPU$SA/leaf-1/cgroup.procs"
check "moved to one of root's leaves in the cpu hierarchy" grep -qx "[0-9]*:cpu:$SA/leaf-1" "/proc/$PA/cgroup"
check "still in the session's mirror" grep -qx "[0-9]*:cpuacct:$SA" "/proc/$PA/cgroup"

echo "# 5. status: CPU time of sessions and users grows while spinners run"
BOUND='' HOLD_CMD="$SPIN & echo \$! >@PID@; wait" hold s "$UA"
SS=$(val AUTOGROUP_SESSION s)
sleep 0.5
"$HELPER" --root "$ROOT" status --json >"$T/st1.json" 2>&1
sleep 1
"$HELPER" --root "$ROOT" status --json >"$T/st2.json" 2>&1
"$HELPER" --root "$ROOT" status >"$T/st2.txt" 2>&1
c1=$(scpu "$T/st1.json" "$SS"); c2=$(scpu "$T/st2.json" "$SS")
u1=$(scpu "$T/st1.json" "/$ROOT/user-$IA"); u2=$(scpu "$T/st2.json" "/$ROOT/user-$IA")
echo "# spinner session: $c1 then $c2 us; user group: $u1 then $u2 us"
check "status: session CPU time is a number: $c1" between 1 1000000000 "$c1"
check_grew "status: session CPU time grew while the spinner ran" "$c1" "$c2" 1000000000
check_grew "status: user group CPU time grew" "$u1" "$u2" 1000000000
check "status: cpuacct mount named in the JSON" grep -q "\"cpuacct_mount\":\"$ACCT\"" "$T/st2.json"
check "status table: the session row has a CPU time, not '-'" grep -qE "$(basename "$SS") +.* [0-9.]+(ms|s)\$" "$T/st2.txt"
check "status table: says where CPU time comes from" grep -q "cpuacct hierarchy at $ACCT" "$T/st2.txt"
as_user "$UA" "$HELPER --root $ROOT status --json" >"$T/sta.json" 2>&1
check "status as the user shows the CPU time too" between 1 1000000000 "$(scpu "$T/sta.json" "$SS")"
# lingering PATH FILE: the lingering field of the session node with that path in status --json
slinger() { P="$2" perl -ne 'print "$1\n" if /"path":"\Q$ENV{P}\E","kind":"session","lingering":(true|false|null)/' "$1"; }
check_eq "status: a live session is not lingering (JSON)" false "$(slinger "$T/st2.json" "$SS")"
check_not "status table: a live session is not marked lingering" grep -q "$(basename "$SS") (lingering)" "$T/st2.txt"
kill "$(cat "$U/s.pid")" 2>/dev/null
touch "$T/s.go"; wait "$PID_s" 2>/dev/null
L=$(closeline "$SS" closed)
check "spinner session: close line has at least the CPU status saw: $(field cpu_usec "$L")" between "$c2" 100000000000 "$(field cpu_usec "$L")"
check "spinner session's mirror removed" test ! -e "$ACCT$SS"

echo "# 6. a lingering session: reported as lingering, its mirror stays, then is swept"
kill "$PA" "$(cat "$U/b.pid")" 2>/dev/null
touch "$T/a.go" "$T/b.go"; wait "$PID_a" "$PID_b" 2>/dev/null
drv "$UA" open env spawn-user "$BURN1; echo \$\$ > $U/l.pid; exec sleep 300" close >"$T/l.out" 2>&1
SL=$(val AUTOGROUP_SESSION l)
wait_for "$U/l.pid" '^[0-9]+$'; LP=$(cat "$U/l.pid"); track_pid "$LP"
# the close ran while the burner was still burning or had just finished: the line has what it had used so far
hlog_has "lingering session: close line says lingering" "${PFX}session $(re_escape "$SL") lingering: user=$UA scope=session cpu_usec=[0-9]+ "
check "lingering session: cpu session stays" test -d "$CPU$SL"
check "lingering session: its mirror stays, with the process" grep -qx "$LP" "$ACCT$SL/cgroup.procs"
# status tells it from a live session: the login's own process (root's) has left login/
check "lingering session: its process still in login/" grep -qx "$LP" "$CPU$SL/login/cgroup.procs"
"$HELPER" --root "$ROOT" status --json >"$T/stl.json" 2>&1
"$HELPER" --root "$ROOT" status >"$T/stl.txt" 2>&1
check_eq "status: the closed session is lingering (JSON)" true "$(slinger "$T/stl.json" "$SL")"
check "status table: the closed session is marked lingering" grep -qE "$(basename "$SL") \(lingering\) " "$T/stl.txt"
as_user "$UA" "$HELPER --root $ROOT status --json" >"$T/stlu.json" 2>&1
check_eq "status as the user: lingering too" true "$(slinger "$T/stlu.json" "$SL")"
kill_ended "$LP"
drv "$UA" open close >/dev/null 2>&1
check "next close of the user swept the emptied mirror" test ! -e "$ACCT$SL"
check "and the user's mirror group" test ! -e "$AC/user-$IA"
# whoever removed it (the watcher, or the sweep of that next login), one line says so, with the burner's CPU
for _ in $(seq 100); do grep -qE -- "${PFX}session $(re_escape "$SL") removed: " "$SYSLOG" && break; sleep 0.05; done
check_eq "lingering session: exactly one removal line" 1 "$(grep -cE -- "${PFX}session $(re_escape "$SL") removed: user=$UA scope=session cpu_usec=[0-9]+ " "$SYSLOG")"
L=$(closeline "$SL" removed)
check "lingering session: the removal line has the burner's second: $(field cpu_usec "$L")" between 900000 100000000 "$(field cpu_usec "$L")"
BY=$(printf '%s\n' "$L" | sed -n 's/.* by=\([a-z]*\)$/\1/p')
check "lingering session: the removal line names its writer, the watcher or the sweep: $BY" \
        test "$BY" = watcher -o "$BY" = sweep

echo "# 7. gc removes emptied mirrors"
drv "$UA" open env spawn-user "echo \$\$ > $U/g.pid; exec sleep 300" close >"$T/g.out" 2>&1
SG=$(val AUTOGROUP_SESSION g)
wait_for "$U/g.pid" '^[0-9]+$'; GP=$(cat "$U/g.pid"); track_pid "$GP"
check "lingering session's mirror is there" test -d "$ACCT$SG"
kill_ended "$GP"
"$HELPER" --root "$ROOT" gc >"$T/gc.out" 2>&1
check "gc removed the session" test ! -e "$CPU$SG"
check "gc removed its mirror" test ! -e "$ACCT$SG"
check "gc removed the user's mirror group" test ! -e "$AC/user-$IA"

echo "# 8. sessions no: the user group is mirrored, the line says scope=user"
drv "$UC" open env cgroup run-user "grep cpuacct: /proc/self/cgroup > $U/c.cg" close >"$T/c.out" 2>&1
SC=$(val AUTOGROUP_SESSION c)
check_eq "sessions no: the session path is the user group" "/$ROOT/user-$IC" "$SC"
check "sessions no: the login was in the user group's mirror" grep -qx "[0-9]*:cpuacct:$SC" "$U/c.cg"
hlog_has "sessions no: close line with scope=user" "${PFX}session $(re_escape "$SC") closed: user=$UC scope=user cpu_usec=[0-9]+ "
check "sessions no: the mirror is removed at close" test ! -e "$ACCT$SC"

echo "# 8b. the login goes back to its own cpu and cpuacct groups at close"
# The driver starts in groups of its own (not the roots); open moves it into
# the session and its mirror, close must put it back in both (the mirror's
# way back is read with the session's, in one read of /proc/self/cgroup).
mkdir -p "$OA" "$OC"
sh -c 'echo $$ > "$1/cgroup.procs" && echo $$ > "$2/cgroup.procs" && shift 2 && exec "$@"' sh "$OA" "$OC" \
        timeout -k 5 120 "$AGDRV" --pam "$T" agacct "$UA" open env close touch "$T/o.closed" wait-file "$T/o.go" \
        >"$T/o.out" 2>&1 &
OP=$!; track_pid "$OP"
wait_for "$T/o.out" '^close='
for _ in $(seq 100); do [ -e "$T/o.closed" ] && break; sleep 0.05; done
SO=$(val AUTOGROUP_SESSION o)
check "own groups: session opened and closed" grep -q '^close=PAM_SUCCESS' "$T/o.out"
check "own groups: the session had a mirror below <root>: $SO" test -n "$SO"
check "own groups: back in its cpuacct group after close" grep -qx "[0-9]*:cpuacct:/agorig-$$" "/proc/$OP/cgroup"
check "own groups: back in its cpu group after close" grep -qx "[0-9]*:cpu:/agorig-$$" "/proc/$OP/cgroup"
check "own groups: the mirror is removed" test ! -e "$ACCT$SO"
touch "$T/o.go"; wait "$OP"

echo "# 9. CPU after logout: a nohup burner of 2.5 s left at logout, a su-style caller"
# The caller is like su: real uid the user's, effective uid root (setpriv
# --ruid). Its session lingers at close; the watcher it forks must be all
# root's (the user can neither stop nor kill it), and once the burner exits
# it removes the session and writes the line with the CPU used up to then.
BURN25='perl -e "while ((times)[0] < 2.5) { for (1 .. 100000) {} }"'
# watcher_of TAG: the pid of the watcher whose environment has AG_TEST_WATCH=TAG
watcher_of() {
        local d
        for d in /proc/[0-9]*; do
                [ "$(cat "$d/comm" 2>/dev/null)" = pam_autogroup ] || continue
                tr '\0' '\n' <"$d/environ" 2>/dev/null | grep -qx "AG_TEST_WATCH=$1" && { echo "${d#/proc/}"; return 0; }
        done
        return 1
}
# lingering TAG STRACE-OUT CMD [setpriv args...]: a login whose CMD outlives the close, the driver in
# the background ($LD), tagged for watcher_of; with STRACE-OUT not empty, under strace -f (the
# watcher's audit records) when strace is installed
lingering() {
        local tag="$1" tr="$2" cmd="$3"; shift 3
        local st=; [ -n "$tr" ] && command -v strace >/dev/null && st="strace -f -s 768 -e trace=sendto -o $tr"
        nsrun 'st=$1 tag=$2 cmd=$3; shift 3
                exec $st env AG_TEST_WATCH="$tag" setpriv "$@" -- timeout -k 5 120 "$AGDRV" --pam "$T" agacct "$UA" \
                        open env spawn-user "$cmd" close' "$st" "$tag" "$cmd" "$@" >"$T/$tag.out" 2>&1 &
        LD=$!; track_pid "$LD"
        wait_for "$T/$tag.out" '^close='
}
export AGDRV T UA
lingering w "" "nohup $BURN25 >/dev/null 2>&1; echo \$\$ > $U/w.pid; until [ -e $U/w.go ]; do sleep 0.05; done" --ruid="$UA"
SW=$(val AUTOGROUP_SESSION w)
check "su-style caller: close succeeds with the burner left running" grep -q '^close=PAM_SUCCESS' "$T/w.out"
hlog_has "su-style caller: close line says lingering" "${PFX}session $(re_escape "$SW") lingering: user=$UA scope=session "
W=; for _ in $(seq 200); do W=$(watcher_of w) && break; sleep 0.05; done
if [ -n "$W" ]; then
        track_pid "$W"
        check "watcher: real, effective, saved uid root" grep -qE '^Uid:[[:space:]]+0[[:space:]]+0[[:space:]]+0[[:space:]]+0$' "/proc/$W/status"
        check "watcher: real, effective, saved gid root" grep -qE '^Gid:[[:space:]]+0[[:space:]]+0[[:space:]]+0[[:space:]]+0$' "/proc/$W/status"
        check "watcher: no supplementary groups" grep -qE '^Groups:[[:space:]]*$' "/proc/$W/status"
        check_not "the user cannot stop the watcher (kill -STOP)" as_user "$UA" "kill -STOP $W"
        check_not "watcher: not stopped" grep -qE '^State:[[:space:]]+T' "/proc/$W/status"
        check_not "the user cannot kill the watcher (kill -9)" as_user "$UA" "kill -KILL $W"
        check_not "the user cannot read the watcher's memory" as_user "$UA" "head -c1 /proc/$W/environ"
        check "watcher: still there, running (not stopped, not a zombie)" grep -qE '^State:[[:space:]]+[RSD]' "/proc/$W/status"
else
        not_ok "watcher of the su-style caller's lingering session found"
fi
wait_for "$U/w.pid" '^[0-9]+$'; track_pid "$(cat "$U/w.pid")"
touch "$U/w.go"
# the watcher polls every 0.25 s at most; 60 s is its own bound
for _ in $(seq 1200); do grep -qE -- "${PFX}session $(re_escape "$SW") removed: " "$SYSLOG" && break; sleep 0.05; done
hlog_has "watcher: removal line (by=watcher)" "${PFX}session $(re_escape "$SW") removed: user=$UA scope=session cpu_usec=[0-9]+ user_usec=[0-9]+ system_usec=[0-9]+ wall_usec=[0-9]+ uid=$IA state=removed cgroup=$(re_escape "$SW") pool=- by=watcher\$"
LC=$(closeline "$SW" lingering); LR=$(closeline "$SW" removed)
echo "# at logout:  ${LC#*: }"
echo "# at removal: ${LR#*: }"
check "watcher: the removal line has the 2.5 s burner (>= 2.4 s): $(field cpu_usec "$LR")" between 2400000 100000000 "$(field cpu_usec "$LR")"
check "watcher: at least what the logout line had" between "$(field cpu_usec "$LC")" 100000000 "$(field cpu_usec "$LR")"
check "watcher: wall time up to the removal covers the CPU: $(field wall_usec "$LR")" between "$(field cpu_usec "$LR")" 300000000 "$(field wall_usec "$LR")"
check "watcher: the session is gone" test ! -e "$CPU$SW"
check "watcher: its mirror is gone" test ! -e "$ACCT$SW"
wait "$LD" 2>/dev/null

echo "# 9b. the watcher's audit record of the removal"
if command -v strace >/dev/null; then
        lingering wa "$T/wa.trace" "echo \$\$ > $U/wa.pid; until [ -e $U/wa.go ]; do sleep 0.05; done" --ruid="$UA"
        SWA=$(val AUTOGROUP_SESSION wa)
        wait_for "$U/wa.pid" '^[0-9]+$'; track_pid "$(cat "$U/wa.pid")"
        touch "$U/wa.go"
        wait "$LD" 2>/dev/null          # strace -f ends with the watcher
        perl -pe 's/\\x([0-9a-f]{2})/chr(hex($1))/ge' "$T/wa.trace" >"$T/wa.txt"
        check "watcher: session-end record with state=removed" grep -aqE \
                "op=autogroup-session-end acct=\"$UA\" uid=$IA cgroup=$(re_escape "$SWA") state=removed cpu_usec=[0-9]+ user_usec=[0-9]+ system_usec=[0-9]+ wall_usec=[0-9]+ " "$T/wa.txt"
else
        skip "strace not installed: the watcher's audit record"
fi

echo "# 10. CPU after logout: gc removes the session, with its line and record"
lingering g "" "$BURN1; echo \$\$ > $U/gc.pid; until [ -e $U/gc.go ]; do sleep 0.05; done" --ruid=0
SG2=$(val AUTOGROUP_SESSION g)
wait_for "$U/gc.pid" '^[0-9]+$'; track_pid "$(cat "$U/gc.pid")"
# the watcher is this test's own process: ended here, gc is left to do its work
W=; for _ in $(seq 200); do W=$(watcher_of g) && break; sleep 0.05; done
check "gc: the watcher was there (ended by the test)" test -n "$W"
[ -n "$W" ] && kill -KILL "$W"
touch "$U/gc.go"
for _ in $(seq 200); do [ -z "$(cat "$CPU$SG2/login/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.05; done
check "gc: the session is still there, empty" test -d "$CPU$SG2"
if command -v strace >/dev/null; then
        nsrun 'exec strace -f -s 768 -e trace=sendto -o "$1" "$2" --root "$3" gc' "$T/gc.trace" "$HELPER" "$ROOT" >"$T/gc10.out" 2>&1
else
        nsrun 'exec "$1" --root "$2" gc' "$HELPER" "$ROOT" >"$T/gc10.out" 2>&1
fi
check "gc: removed the session" test ! -e "$CPU$SG2"
check "gc: and its mirror" test ! -e "$ACCT$SG2"
hlog_has "gc: removal line (wall time unknown to gc; by=gc)" "autogroup\\[[0-9]+\\]: session $(re_escape "$SG2") removed: user=$UA scope=session cpu_usec=[0-9]+ user_usec=[0-9]+ system_usec=[0-9]+ wall_usec=\\? uid=$IA state=removed cgroup=$(re_escape "$SG2") pool=- by=gc\$"
LG=$(grep -E -- "autogroup\\[[0-9]+\\]: session $(re_escape "$SG2") removed: " "$SYSLOG" | tail -n1)
echo "# gc: ${LG#*: }"
check "gc: the line has the burner's second: $(field cpu_usec "$LG")" between 900000 100000000 "$(field cpu_usec "$LG")"
if [ -s "$T/gc.trace" ]; then
        perl -pe 's/\\x([0-9a-f]{2})/chr(hex($1))/ge' "$T/gc.trace" >"$T/gc.txt"
        check "gc: session-end record with state=removed" grep -aqE \
                "op=autogroup-session-end acct=\"$UA\" uid=$IA cgroup=$(re_escape "$SG2") state=removed cpu_usec=[0-9]+ user_usec=[0-9]+ system_usec=[0-9]+ wall_usec=\\? " "$T/gc.txt"
else
        skip "strace not installed: gc's audit record"
fi
wait "$LD" 2>/dev/null

echo "# 10b. gc's count: every line it printed, the systemd mode's drop-ins said apart"
sed 's/^/#   gc: /' "$T/gc10.out"
check_eq "gc: its count is that of the groups it listed" \
        "$(grep -c '^removed /' "$T/gc10.out")" "$(sed -n 's/^\([0-9]*\) groups\{0,1\} removed.*/\1/p' "$T/gc10.out" | tail -n1)"
# where the systemd mode applies (cgroup v2, systemd running), gc also takes back the module's
# runtime drop-in of a user slice that is not running. Here in a private mount namespace: /run a
# tmpfs of its own (systemd "booted", the drop-in and the module's record of it), the hierarchy
# the cgroup2 mount without cpu (no user.slice there: the slice is not running).
if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
        nsrun 'mount -t tmpfs tmpfs /run || exit 125
                d=/run/systemd/system.control/user-$2.slice.d
                mkdir -p /run/systemd/system /run/autogroup/systemd "$d"
                printf "[Slice]\nCPUWeight=300\n" >"$d/50-CPUWeight.conf"
                set -- "$@" $(stat -c "%i %.9Y" "$d/50-CPUWeight.conf" | tr . " ")
                echo "CPUWeight 50-CPUWeight.conf $4 $5 $6" >/run/autogroup/systemd/user-$2.slice
                "$1" --hierarchy /sys/fs/cgroup/unified --root "$3" gc
                echo "rc=$?"
                ls -A /run/systemd/system.control /run/autogroup/systemd | sed "s/^/left: /"' \
                "$HELPER" "$IA" "$ROOT" >"$T/gcsd.out" 2>&1
        sed 's/^/# /' "$T/gcsd.out"
        check "gc (systemd mode): exit 0" grep -qx 'rc=0' "$T/gcsd.out"
        check "gc (systemd mode): says it took back the drop-ins of the slice" \
                grep -qx "removed the runtime properties pam_autogroup set on user-$IA.slice (not running)" "$T/gcsd.out"
        check_not "gc (systemd mode): the drop-in is gone" grep -q '^left: .*user-' "$T/gcsd.out"
        check_eq "gc (systemd mode): the count says the slice apart from the groups" \
                "0 groups removed, and the runtime properties of 1 user slice not running" \
                "$(grep -E '^[0-9]+ groups? removed' "$T/gcsd.out")"
else
        skip "no cgroup2 mount at /sys/fs/cgroup/unified: gc's systemd-mode count"
fi

echo "# 11. nothing left behind"
check_eq "no cpu group left" "" "$(ls -d "$CG"/*/ 2>/dev/null)"
check_eq "no mirror left" "" "$(ls -d "$AC"/*/ 2>/dev/null)"
finish
