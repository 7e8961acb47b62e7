#!/bin/bash
# How sessions END with a real sshd (Debian's, on 127.0.0.1, host cgroup v1):
#   1. killed clients (ssh -tt ... 'sleep 300', the client killed with -9),
#      20 times: every group of the session (session, login/, the cpuacct
#      mirror, user-<uid>/) is gone within 5 s of its last process exiting;
#   2. 15 pairs of concurrent logins that end together: nothing left;
#   3. ssh -tt with the session hook (one of root's leaves), client killed: the leaf
#      and everything above it gone too;
#   4. a nohup process keeps its session while it lives, and the session goes
#      after it exits without another login (the watcher close starts);
#   5. a session whose process outlives the watcher: removed by "autogroup gc"
#      (what the timer runs), with its log line and audit record;
#   6. the module twice in the stack (@include of a file with the line, and
#      the line again; pamtester with the "other" service, read twice by
#      libpam): one session, closed cleanly, one "steps aside" debug line;
#   7. removals by the sweep at open are logged and audited like at close;
#      acctlog=debug|off turns the close's accounting line down.
# sshd runs under its own name (its PAM service is that name) in a private
# mount namespace whose /etc/pam.d is a bind-mounted copy: the host's files
# never change. The 5 s are the bound the behaviour must meet, polled for,
# not a speed measurement.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_cmds "openssh-server, openssh-client, util-linux, iproute2, strace, perl" "$SSHD_BIN" ssh ssh-keygen unshare ss strace perl
test_root agtest
ACCT=/sys/fs/cgroup/cpuacct
SVC="sshd-ag$$"
USR="${TAG}e"
USR2="${TAG}f"
pamd_sums >"$T/pamd.before"

start_syslog || true

add_home_user "$USR"; add_home_user "$USR2"
IU=$(id -u "$USR")
IU2=$(id -u "$USR2")
write_conf "*  weight 100"
OPTS="root=$ROOT conf=$CONF debug"
MOD="session optional $AG_MODULE $OPTS"

# the PAM configuration sshd and pamtester see: a copy of /etc/pam.d
mkdir -m 755 "$T/pamd"
cp -a /etc/pam.d/. "$T/pamd/"
stack_once() {
        printf '%s\n' "auth     required pam_unix.so" "account  required pam_unix.so" \
                "session  required pam_permit.so" "$MOD" >"$T/pamd/$SVC"
}
stack_twice() { # the line in an included file and again in the service's own
        echo "$MOD" >"$T/pamd/common-ag$$"
        printf '%s\n' "auth     required pam_unix.so" "account  required pam_unix.so" \
                "session  required pam_permit.so" "@include common-ag$$" "$MOD" >"$T/pamd/$SVC"
}
stack_once

# the session hook, calling a copy of the helper the users can run
mkdir -m 755 "$T/bin"
install -m 755 "$HELPER" "$T/bin/autogroup"
sed -e "s|@bindir@|$T/bin|g" -e "s|@pkgdatadir@|$T|g" "$abs_top_srcdir/conf/autogroup-hook.sh.in" >"$T/hook.sh"
chmod 644 "$T/hook.sh"

sshd_port 7919
sshd_keys || true
for u in "$USR" "$USR2"; do
        h=$(getent passwd "$u" | cut -d: -f6)
        install -d -m 700 -o "$u" -g "$(id -g "$u")" "$h/.ssh"
        install -m 600 -o "$u" -g "$(id -g "$u")" "$T/id.pub" "$h/.ssh/authorized_keys"
done
sshd_write_config "$USR $USR2" "MaxStartups 100"
sshd_run "$SVC" "$T/pamd"; daemon_pid "$SSHD_PID"
wait_for "$T/sshd.log" 'Server listening on 127.0.0.1'
check "sshd (as $SVC, private /etc/pam.d) listens on 127.0.0.1:$PORT" grep -q "Server listening on 127.0.0.1 port $PORT" "$T/sshd.log"

SSH=(ssh "${SSH_OPTS[@]}" -o ConnectTimeout=20 -p "$PORT")
# user_procs USER: the user's live processes (the test's throw-away user);
# a zombie has exited already (and leaves its cgroup as it exits)
user_procs() { ps -u "$1" -o stat=,pid= 2>/dev/null | awk '$1 !~ /^Z/ { print $2 }'; }
# groups_of UID: every group of that user below the test root, cpu and cpuacct
groups_of() { find "$CG/user-$1" "$ACCT/$ROOT/user-$1" -type d 2>/dev/null; }
# ends_clean USER UID: after the user's last process exited (waited for, at
# most 30 s), every group of the user is gone within 5 s
ends_clean() {
        local _
        for _ in $(seq 300); do [ -z "$(user_procs "$1")" ] && break; sleep 0.1; done
        [ -z "$(user_procs "$1")" ] || { echo "# processes of $1 still there: $(user_procs "$1" | tr '\n' ' ')"; return 1; }
        for _ in $(seq 50); do [ -z "$(groups_of "$2")" ] && return 0; sleep 0.1; done
        echo "# left behind: $(groups_of "$2" | tr '\n' ' ')"
        return 1
}
# clear_user UID: remove what a failed round left, so the next round starts clean
clear_user() { rm_cgroup_tree "$CG/user-$1"; rm_cgroup_tree "$ACCT/$ROOT/user-$1"; }
# live_sleeps USER: the user's "sleep" processes that have not exited. (An
# exited process whose parent went first may stay a zombie for long: the
# container's init here reaps late.)
live_sleeps() { ps -u "$1" -o stat=,pid=,comm= 2>/dev/null | awk '$1 !~ /^Z/ && $3 == "sleep" { print $2 }'; }
# wait_sleep USER N: until the user runs N live "sleep" processes (at most 30 s)
wait_sleep() {
        local _
        for _ in $(seq 300); do [ "$(live_sleeps "$1" | wc -l)" -ge "$2" ] && return 0; sleep 0.1; done
        return 1
}

echo "# 5 (started first). a lingering session of $USR2 that outlives the watcher"
"${SSH[@]}" "$USR2@127.0.0.1" 'nohup sleep 3000 >/dev/null 2>&1 </dev/null & echo pid=$!' >"$T/long.out" 2>"$T/long.err" </dev/null
LONG_PID=$(sed -n 's/^pid=//p' "$T/long.out")
LONG_T0=$(date +%s)
track_pid "$LONG_PID"
check "$USR2's nohup process runs" test -n "$LONG_PID" -a -e "/proc/${LONG_PID:-0}"

echo "# 1. 20 killed clients: ssh -tt 'sleep 300', then kill -9 of the client"
# Every other round the command is a shell that, on the hangup, takes a
# moment before it exits (as an interactive shell writing its history does):
# sshd's close comes while the session's last process is still exiting.
SLOW_EXIT="trap 'sleep 0.3; exit 0' HUP; sleep 300 & wait"
good=0
for i in $(seq 20); do
        if [ $((i % 2)) = 0 ]; then cmd=$SLOW_EXIT; else cmd='sleep 300'; fi
        "${SSH[@]}" -tt "$USR@127.0.0.1" "$cmd" </dev/null >"$T/k$i.out" 2>&1 &
        cp=$!
        if ! wait_sleep "$USR" 1; then echo "# round $i: no login"; kill -9 "$cp" 2>/dev/null; wait "$cp" 2>/dev/null; continue; fi
        [ "$i" = 1 ] && check "the killed client's sleep runs in its session's login/ leaf" \
                grep -q "^/$ROOT/user-$IU/[^/]*/login\$" <(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/$(live_sleeps "$USR" | head -n1)/cgroup")
        kill -9 "$cp"; wait "$cp" 2>/dev/null
        if ends_clean "$USR" "$IU"; then good=$((good + 1)); else echo "# round $i left groups"; clear_user "$IU"; fi
done
check_eq "killed clients: every group gone within 5 s of the last process, rounds" 20 "$good"

echo "# 2. 15 pairs of concurrent logins ending together"
# Every other pair leaves a background job that finishes 0.3 s after the
# logout (no terminal: nothing hangs it up).
TAIL='sleep 1; (sleep 0.3 </dev/null >/dev/null 2>&1 &)'
good=0
for i in $(seq 15); do
        if [ $((i % 2)) = 0 ]; then cmd=$TAIL; tt=-T; else cmd='sleep 1'; tt=-tt; fi
        "${SSH[@]}" "$tt" "$USR@127.0.0.1" "$cmd" </dev/null >/dev/null 2>&1 &
        a=$!
        "${SSH[@]}" "$tt" "$USR@127.0.0.1" "$cmd" </dev/null >/dev/null 2>&1 &
        b=$!
        wait "$a" "$b"
        if ends_clean "$USR" "$IU"; then good=$((good + 1)); else echo "# pair $i left groups"; clear_user "$IU"; fi
done
check_eq "concurrent pairs: nothing left, pairs" 15 "$good"

echo "# 3. ssh -tt with the session hook: one of root's leaves, client killed"
# The login shell runs its hangup trap once its foreground job (a sleep 1)
# ends, and takes a moment more: it exits up to 1.3 s after the hangup.
"${SSH[@]}" -tt "$USR@127.0.0.1" "exec sh -ic '. $T/hook.sh; trap \"sleep 0.3; exit 0\" HUP; while :; do sleep 1; done'" \
        </dev/null >"$T/hook.out" 2>&1 &
cp=$!
wait_sleep "$USR" 1
HCG=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/$(live_sleeps "$USR" | head -n1)/cgroup" 2>/dev/null)
check "the hook moved the shell into leaf-1 of its session ($HCG)" grep -q "^/$ROOT/user-$IU/[^/]*/leaf-1\$" <<<"$HCG"
check "the session has a cpuacct mirror" test -d "$ACCT${HCG%/*}"
kill -9 "$cp"; wait "$cp" 2>/dev/null
check "hook session: leaf, session, mirror and user group gone within 5 s" ends_clean "$USR" "$IU"
clear_user "$IU"

echo "# 4. nohup: the session stays while the process lives, goes after it without another login"
"${SSH[@]}" "$USR@127.0.0.1" 'nohup sleep 300 >/dev/null 2>&1 </dev/null & echo pid=$!' >"$T/nohup.out" 2>&1 </dev/null
NP=$(sed -n 's/^pid=//p' "$T/nohup.out")
track_pid "$NP"
sleep 2
NCG=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/${NP:-0}/cgroup" 2>/dev/null)
check "the nohup process lives on after the logout" test -n "$NP" -a -e "/proc/${NP:-0}"
check "its session stays while it lives ($NCG)" test -n "$NCG" -a -d "$CPU$NCG"
kill "$NP"
check "after it exits, every group is gone within 5 s, without another login" ends_clean "$USR" "$IU"
clear_user "$IU"

echo "# 6. the module twice in one stack"
stack_twice
"${SSH[@]}" "$USR@127.0.0.1" "echo S=\$AUTOGROUP_SESSION; ls $CG/user-$IU; sleep 1" >"$T/twice.out" 2>&1 </dev/null
TS=$(sed -n 's/^S=//p' "$T/twice.out")
check "twice: the login got a session" test -n "$TS"
check_eq "twice: one session in the user group while logged in" 1 "$(grep -c '^[ps][0-9]' "$T/twice.out")"
check "twice: everything gone after the logout" ends_clean "$USR" "$IU"
clear_user "$IU"
log_has "twice: the second instance stepped aside at open (debug line)" "pam_autogroup\\($SVC:session\\).*more than once: an earlier line opened this session, this one steps aside"
log_has "twice: and at close (debug line)" "pam_autogroup\\($SVC:session\\).*more than once: an earlier line closed this session, this one steps aside"
stack_once
if command -v pamtester >/dev/null; then
        echo "$MOD" >"$T/pamd/other"
        unshare -m --propagation private sh -c \
                "mount --bind '$T/pamd' /etc/pam.d && exec pamtester -v other '$USR' open_session close_session" >"$T/pamtester.out" 2>&1
        check "pamtester other: open and close succeed" grep -q "session has successfully been closed" "$T/pamtester.out"
        check_eq "pamtester other: nothing left" "" "$(groups_of "$IU")"
        clear_user "$IU"
else
        skip "pamtester not installed"
fi

echo "# 7. removals by the sweep at open: log line and audit record"
pam_other
pam_service agsweep "$OPTS"
"$AGDRV" --pam "$T" agsweep "$USR" open env >"$T/left.out" 2>&1    # exits without close: an empty session stays
LS=$(sed -n 's/^AUTOGROUP_SESSION=//p' "$T/left.out")
check "a session left without close is there ($LS)" test -n "$LS" -a -d "$CPU$LS"
strace -f -s 512 -e trace=sendto -o "$T/sweep.trace" "$AGDRV" --pam "$T" agsweep "$USR" open close >"$T/sweep.out" 2>&1
perl -pe 's/\\x([0-9a-f]{2})/chr(hex($1))/ge' "$T/sweep.trace" >"$T/sweep.txt"
check "the next open swept it" test ! -e "$CPU$LS"
check "sweep at open: audit record op=autogroup-remove for it" grep -q "op=autogroup-remove acct=.* cgroup=$LS " "$T/sweep.txt"
log_has "sweep at open: debug line 'removed $LS'" "pam_autogroup\\(agsweep:session\\): removed $LS\$"
clear_user "$IU"
pam_service agoff "$OPTS acctlog=off"
pam_service agdbg "$OPTS acctlog=debug"
"$AGDRV" --pam "$T" agoff "$USR" open close >/dev/null 2>&1
"$AGDRV" --pam "$T" agdbg "$USR" open close >/dev/null 2>&1
"$AGDRV" --pam "$T" agsweep "$USR" open close >/dev/null 2>&1
log_has "acctlog=info (default): the close line at info" "^<86>.*pam_autogroup\\(agsweep:session\\): session /$ROOT/[^ ]* closed: "
log_has "acctlog=debug: the close line at debug priority" "^<87>.*pam_autogroup\\(agdbg:session\\): session /$ROOT/[^ ]* closed: "
if have_syslog; then
        check_not "acctlog=off: no close line" grep -q "pam_autogroup(agoff:session): session /$ROOT/[^ ]* closed: " "$SYSLOG"
fi

echo "# 5 (end). the long-lingering session of $USR2: stays past the watcher, then gc removes it"
LCG=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/${LONG_PID:-0}/cgroup" 2>/dev/null)
LCG=${LCG%/login}
check "it is still in its session ($LCG)" test -n "$LCG" -a -d "$CPU$LCG"
# the watcher gives up 60 s after the close
while [ $(( $(date +%s) - LONG_T0 )) -lt 65 ]; do sleep 1; done
kill "$LONG_PID"
for _ in $(seq 100); do [ -z "$(user_procs "$USR2")" ] && break; sleep 0.1; done
sleep 2
check "with its process gone and the watcher over, the session waits for gc" test -d "$CPU$LCG"
strace -f -s 512 -e trace=sendto -o "$T/gc.trace" "$HELPER" --root "$ROOT" gc >"$T/gc.out" 2>&1
perl -pe 's/\\x([0-9a-f]{2})/chr(hex($1))/ge' "$T/gc.trace" >"$T/gc.txt"
check "autogroup gc removed the session" test ! -e "$CPU$LCG"
check_eq "and every other group of $USR2" "" "$(groups_of "$IU2")"
check "gc printed it" grep -q "^removed $LCG\$" "$T/gc.out"
check "gc: audit record op=autogroup-remove for it" grep -q "op=autogroup-remove acct=\"$USR2\" uid=$IU2 cgroup=$LCG " "$T/gc.txt"
log_has "gc: syslog line 'removed $LCG'" "autogroup\\[[0-9]+\\]: removed $LCG\$"

# the files this test wrote in its copy (the rest of /etc/pam.d may be
# changed meanwhile by a package test on this shared machine)
check "the host's /etc/pam.d has no file of this test" test ! -e "/etc/pam.d/$SVC" -a ! -e "/etc/pam.d/common-ag$$"
check "the host's /etc/pam.d/other is unchanged" diff <(grep ' /etc/pam.d/other$' "$T/pamd.before") <(pamd_sums | grep ' /etc/pam.d/other$')
[ "$AG_FAIL" -gt 0 ] && have_syslog && grep -E "steps aside|autogroup\[" "$SYSLOG" | head -5 | sed "s/^/# syslog: /"
finish
