#!/bin/bash
# README's behaviour table ("What each process gets, by default", parsed by
# tests/behaviour.sh) checked against real clients, in the cgroupfs mode:
# column v1 on this host's cgroup v1 cpu hierarchy; column v2 when
# tests/guest/test-behaviour.sh runs this script inside the v2 guest
# (BEHAVIOUR_COLUMN=v2, /sys/fs/cgroup with cpu).
#
# The default install, in a private mount namespace (the script re-executes
# itself under unshare -m): /etc/pam.d is a copy whose common-session alone
# has the module's line (as the Debian profile puts it: interactive stacks
# only, so common-session-noninteractive and cron's stack do not), with the
# shipped conf/autogroup.conf (no rule) and root=agbeh-<PID>; /etc/profile.d
# holds the session hook (conf/autogroup-hook.sh.in); /etc/crontab, the cron
# spool, /run and the login records are private too. The host's files never
# change (checked at the end).
#
# The clients: Debian's sshd with its own stack on a loopback port (a login
# running a command, which leaves a nohup job; an interactive login on a
# terminal, in which `autogroup run` runs a command and a real tmux opens
# seven windows; root's login), and a private cron daemon running a job.
# Each process's cpu cgroup (/proc/PID/cgroup, read from outside) is checked
# against the table's cell for the column: the test fails when a cell and
# the behaviour disagree.
AG_PRIVATE_MOUNTS=1   # lib.sh re-executes this script under unshare -m
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/behaviour.sh"
require_root
COL=${BEHAVIOUR_COLUMN:-v1}
echo "# README's behaviour table, column $COL"
behaviour_lint
case "$COL" in
v1)
        require_v1_cpu
        BASE=$CPU
        cgof() { awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/$1/cgroup" 2>/dev/null; } ;;
v2)
        BASE=/sys/fs/cgroup
        { [ "$(stat -f -c %T "$BASE" 2>/dev/null)" = cgroup2fs ] && grep -qw cpu "$BASE/cgroup.controllers"; } ||
                skip_all "$BASE is not a cgroup2 mount with the cpu controller"
        cgof() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; } ;;
*)
        skip_all "BEHAVIOUR_COLUMN=$COL: this lane checks v1 or v2" ;;
esac
require_cmds "openssh-server, openssh-client, tmux, cron, iproute2" "$SSHD_BIN" ssh ssh-keygen tmux cron ss

ROOT="agbeh-$$"
CG="$BASE/$ROOT"
AG_CGROOTS="$CG"   # lib.sh cleans it up
USR="${TAG}b"
CRON_PID=""; NOHUP_PID=""
HOSTFILES=(/etc/profile.d /etc/crontab /etc/cron.d)     # checked unchanged at the end, with /etc/pam.d
pamd_sums "${HOSTFILES[@]}" >"$T/host.before"

start_syslog || true            # before /run is replaced: its lock stays held

add_home_user "$USR"
IU=$(id -u "$USR")
CONF="$T/autogroup.conf"
install -m 644 "$abs_top_srcdir/conf/autogroup.conf" "$CONF"
LINE="session optional $AG_MODULE root=$ROOT conf=$CONF"

echo "# 0. the default install in this mount namespace: common-session has the line, the hook in /etc/profile.d"
cp -a /etc/pam.d "$T/pamd"
echo "$LINE" >>"$T/pamd/common-session"
cp -a /etc/profile.d "$T/profiled"
sed "s|@bindir@|$(dirname "$HELPER")|g" "$abs_top_srcdir/conf/autogroup-hook.sh.in" >"$T/profiled/autogroup-hook.sh"
chmod 644 "$T/profiled/autogroup-hook.sh"
cat >"$U/cron.sh" <<EOF
#!/bin/sh
echo "\$\$" >$U/cron.pid.tmp && mv $U/cron.pid.tmp $U/cron.pid
exec sleep 300
EOF
chmod 755 "$U/cron.sh"
mounted=yes
mount --bind "$T/pamd" /etc/pam.d || mounted=no
mount --bind "$T/profiled" /etc/profile.d || mounted=no
private_cron "$USR" "sh $U/cron.sh" || mounted=no
private_run || mounted=no
mkdir -p -m 755 /run/sshd
[ "$mounted" = yes ] || skip_all "cannot bind-mount the private copies in this namespace"
check "common-session has the line" grep -qxF "$LINE" /etc/pam.d/common-session
check_not "common-session-noninteractive (cron's) has not (the Debian profile: interactive only)" \
        grep -q pam_autogroup /etc/pam.d/common-session-noninteractive
check "sshd's stack includes common-session" grep -q '^@include common-session$' /etc/pam.d/sshd

# cron runs its job at the next minute: started first, checked in section 5
cron -f -L 0 >"$T/cron.log" 2>&1 &
CRON_PID=$!; daemon_pid "$CRON_PID"

# sshd on a free loopback port, keys for the user and root in $T/keys
sshd_port 7919
mkdir -m 755 "$T/keys"
sshd_keys || true
install -m 644 "$T/id.pub" "$T/keys/$USR"
install -m 644 "$T/id.pub" "$T/keys/root"
sshd_write_config "$USR root" "AuthorizedKeysFile $T/keys/%u" "StrictModes no" \
        "PermitRootLogin prohibit-password" "UseDNS no"
sshd_run sshd; daemon_pid "$SSHD_PID"          # the system's name: its service is Debian's sshd stack
wait_for "$T/sshd.log" 'Server listening on 127.0.0.1'
check "sshd (service sshd, Debian's stack) listens on 127.0.0.1:$PORT" grep -q "Server listening on 127.0.0.1 port $PORT" "$T/sshd.log"
SSH=(timeout -k 5 600 ssh "${SSH_OPTS[@]}" -o ConnectTimeout=120 -p "$PORT")
sshd_tail() { tail -n 5 "$T/sshd.log" | sed 's/^/# sshd: /'; }
# session_of CGROUP: the <session> part of /<root>/user-<uid>/<session>/...
session_of() { echo "$1" | cut -d/ -f4; }
B=(root="$ROOT" uid="$IU")

echo "# 1. a login (ssh running a command) that leaves a nohup job"
"${SSH[@]}" "$USR@127.0.0.1" "nohup sleep 600 >/dev/null 2>&1 & echo \$! >$U/nohup.pid; cat /proc/self/cgroup >$U/login.self" \
        >"$T/login.out" 2>&1 </dev/null
rc=$?
check_eq "ssh USER CMD: exit 0" 0 "$rc"
[ "$rc" = 0 ] || { sed 's/^/# ssh: /' "$T/login.out"; sshd_tail; }
# the command's cgroup, seen from inside (it is gone)
if [ "$COL" = v1 ]; then LCG=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "$U/login.self" 2>/dev/null)
else LCG=$(sed -n 's/^0:://p' "$U/login.self" 2>/dev/null); fi
behaviour_check "a login" "$COL" "$LCG" "${B[@]}"
S1=$(session_of "$LCG")
NOHUP_PID=$(cat "$U/nohup.pid" 2>/dev/null); track_pid "$NOHUP_PID"
check "the nohup job runs on after logout" kill -0 "$NOHUP_PID"
behaviour_check "a nohup job after logout" "$COL" "$(cgof "$NOHUP_PID")" "${B[@]}" session="$S1" group=login
check "its session stays while the job runs" test -d "$CG/user-$IU/$S1"
kill "$NOHUP_PID"
check "the session goes once the job ended (the close's watcher, or autogroup gc)" \
        sh -c "for i in \$(seq 100); do [ -e '$CG/user-$IU/$S1' ] || exit 0; sleep 0.1; done; '$HELPER' --root $ROOT gc >/dev/null 2>&1; test ! -e '$CG/user-$IU/$S1'"

echo "# 2. an interactive login on a terminal: its shell, autogroup run, a tmux with seven windows"
mkfifo "$T/in"
"${SSH[@]}" -tt "$USR@127.0.0.1" <"$T/in" >"$T/tty.out" 2>&1 &
SSH_TT=$!; track_pid "$SSH_TT"
exec {IN}>"$T/in"
# type LINE: a line typed into the login's terminal
# (in a subshell: a login that ended early takes its SIGPIPE, not the test)
type_line() { ( printf '%s\n' "$1" >&"$IN" ) 2>/dev/null; }
type_line "echo \$\$ >$U/sh.tmp && mv $U/sh.tmp $U/sh.pid"
if wait_for "$U/sh.pid" '^[0-9]+$'; then
        SH=$(cat "$U/sh.pid")
        SHCG=$(cgof "$SH")
        echo "# the login's shell (interactive, on a terminal, the hook ran): $SHCG"
        # the table's login row: "the shell of a login on a terminal then moves into a leaf, as a terminal"
        behaviour_check "a terminal tab or tmux pane" "$COL" "$SHCG" "${B[@]}"
        S2=$(session_of "$SHCG")
        type_line "'$HELPER' run -- sh -c 'cat /proc/self/cgroup >$U/run.tmp; mv $U/run.tmp $U/run.cg'"
        wait_for "$U/run.cg" .
        if [ "$COL" = v1 ]; then RCG=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "$U/run.cg" 2>/dev/null)
        else RCG=$(sed -n 's/^0:://p' "$U/run.cg" 2>/dev/null); fi
        behaviour_check "autogroup run CMD" "$COL" "$RCG" "${B[@]}" session="$S2"
        check "run's command got a leaf other than the shell's" test -n "$RCG" -a "$RCG" != "$SHCG"
        # tmux: the server is started by the login's shell; seven windows, one
        # after the other, each a login shell that reads the hook
        TM="tmux -S $U/tmux.sock"
        type_line "$TM new-session -d -s b -n w1; $TM display -p '#{pid}' >$U/tmux.tmp; mv $U/tmux.tmp $U/tmux.pid"
        if wait_for "$U/tmux.pid" '^[0-9]+$'; then
                TSRV=$(cat "$U/tmux.pid"); track_pid "$TSRV"
                for w in 1 2 3 4 5 6 7; do
                        [ "$w" = 1 ] || as_user "$USR" "$TM new-window -d -t b: -n w$w"
                        as_user "$USR" "$TM send-keys -t b:w$w 'echo \$\$ >$U/pane.tmp && mv $U/pane.tmp $U/pane.$w' Enter"
                        wait_for "$U/pane.$w" '^[0-9]+$' || echo "# window $w did not answer"
                done
                SRVCG=$(cgof "$TSRV")
                echo "# the tmux server: $SRVCG"
                # the login's shell holds one leaf: windows 1..5 take the other five,
                # window 6 is the seventh terminal, and window 7 one more
                for w in 1 2 3 4 5; do
                        behaviour_check "a terminal tab or tmux pane" "$COL" "$(cgof "$(cat "$U/pane.$w" 2>/dev/null)")" "${B[@]}" session="$S2"
                done
                check_eq "the five panes and the shell in six distinct leaves" 6 \
                        "$(for p in "$SH" $(cat "$U"/pane.[1-5] 2>/dev/null); do cgof "$p"; done | sort -u | grep -c '/leaf-[0-9]*$')"
                for w in 6 7; do
                        behaviour_check "the seventh terminal" "$COL" "$(cgof "$(cat "$U/pane.$w" 2>/dev/null)")" parent="$SRVCG"
                done
                as_user "$USR" "$TM kill-server"
        else
                not_ok "tmux started in the login's shell"
        fi
else
        not_ok "the interactive login's shell answered"
        sed 's/^/# tty: /' "$T/tty.out"; sshd_tail
fi
type_line "exit"
exec {IN}>&-
wait "$SSH_TT" 2>/dev/null
[ -n "${S2:-}" ] && check "the interactive login's session is gone after logout" gone "$CG/user-$IU/$S2" 300

echo "# 3. root's login (ssh)"
"${SSH[@]}" "root@127.0.0.1" "cat /proc/self/cgroup" >"$T/root.out" 2>&1 </dev/null
check_eq "ssh root CMD: exit 0" 0 "$?"
if [ "$COL" = v1 ]; then RTCG=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "$T/root.out")
else RTCG=$(sed -n 's/^0:://p' "$T/root.out"); fi
behaviour_check "root's login" "$COL" "$RTCG" root="$ROOT"
[ -n "$RTCG" ] && check "root's session is gone after it" gone "$CG/user-0/$(session_of "$RTCG")" 300

echo "# 4. a cron job (the daemon started in section 0)"
# cron starts jobs at the minute: at most 75 s more
for _ in $(seq 750); do [ -s "$U/cron.pid" ] && break; sleep 0.1; done
if [ -s "$U/cron.pid" ]; then
        CJ=$(cat "$U/cron.pid"); track_pid "$CJ"
        check_eq "the job runs as the user" "$IU" "$(stat -c %u "/proc/$CJ")"
        behaviour_check "a cron job" "$COL" "$(cgof "$CJ")" parent="$(cgof "$CRON_PID")"
        kill "$CJ" 2>/dev/null
else
        not_ok "cron ran the job within 75 s ($(head -c 300 "$T/cron.log" 2>/dev/null | tr '\n' ' '))"
fi
stop_daemon "$CRON_PID"

echo "# 5. nothing left; the host's files as they were"
stop_daemon "$SSHD_PID"
check_eq "no group of the user or root left below /$ROOT" "" \
        "$(find "$CG" -mindepth 1 -maxdepth 2 -type d 2>/dev/null | tr '\n' ' ')"
umount /etc/pam.d /etc/profile.d /etc/crontab /etc/cron.d 2>/dev/null
check "the host's /etc/pam.d, profile.d, crontab, cron.d unchanged (sha256)" diff "$T/host.before" <(pamd_sums "${HOSTFILES[@]}")
finish
