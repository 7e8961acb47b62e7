#!/bin/bash
# shellcheck disable=SC2154  # PID_<name> are set with eval by bg/login/spin
# End to end with real login programs on the host (cgroup v1 cpu): Debian's
# sshd, started by the test on a loopback port under a name of its own (so its
# PAM service is /etc/pam.d/sshd-ag<PID> and /etc/pam.d/sshd stays untouched),
# and su -l / runuser -l in a private mount namespace whose /etc/pam.d is a
# temp dir (the host's /etc/pam.d is never modified). The module is in each
# session stack with root=agtest-<PID>; logins are key-authenticated as a
# throw-away user with a home directory.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_cmds "openssh-server, openssh-client, util-linux, iproute2" "$SSHD_BIN" ssh ssh-keygen su runuser unshare ss

test_root agtest
SVC="sshd-ag$$"
PAMFILE="/etc/pam.d/$SVC"
USR="${TAG}s"
pamd_sums >"$T/pamd.before"

trap 'rm -f "$PAMFILE"; ag_cleanup' EXIT
start_syslog || true

add_home_user "$USR"
IU=$(id -u "$USR")
HOMEDIR=$(getent passwd "$USR" | cut -d: -f6)

write_conf "*  weight 100" "$USR weight 200"
MOD="session optional $AG_MODULE root=$ROOT conf=$CONF debug"

# probe NAME: run by each login as the user; reports where it landed, then
# waits (at most 60 s) until $U/NAME.go exists
cat >"$U/probe.sh" <<EOF
#!/bin/sh
echo "cgroup=\$(awk -F: '\$2 ~ /(^|,)cpu(,|\$)/ {print \$3}' /proc/self/cgroup)"
echo "AUTOGROUP_SESSION=\${AUTOGROUP_SESSION:-}"
echo "uid=\$(id -u)"
echo "ppid=\$PPID"
echo ready
i=0; while [ ! -e "$U/\$1.go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
EOF
chmod 755 "$U/probe.sh"
# (gone PATH, lib.sh, waits 15 s at most: the client closes the session asynchronously)

echo "# 1. sshd under its own service name, the module in its session stack"
sshd_port 0
sshd_keys || true
install -d -m 700 -o "$USR" -g "$(id -g "$USR")" "$HOMEDIR/.ssh"
install -m 600 -o "$USR" -g "$(id -g "$USR")" "$T/id.pub" "$HOMEDIR/.ssh/authorized_keys"
sshd_write_config "$USR"
{
        echo "# pam_autogroup test service of tests/host/test-clients.sh (pid $$); removed at its exit"
        echo "auth     required pam_unix.so"
        echo "account  required pam_unix.so"
        echo "session  required pam_permit.so"
        echo "$MOD"
} >"$PAMFILE"
sshd_run "$SVC"; daemon_pid "$SSHD_PID"
wait_for "$T/sshd.log" 'Server listening on 127.0.0.1'
check "sshd (as $SVC) listens on 127.0.0.1:$PORT" grep -q "Server listening on 127.0.0.1 port $PORT" "$T/sshd.log"

SSH=(ssh "${SSH_OPTS[@]}" -o ConnectTimeout=20 -p "$PORT")
login() { # login NAME: an ssh login that runs the probe until $U/NAME.go
        "${SSH[@]}" "$USR@127.0.0.1" "sh $U/probe.sh $1" >"$T/$1.out" 2>"$T/$1.err" </dev/null &
        track_pid $!
        eval "PID_$1=$!"
        wait_for "$T/$1.out" '^ready$' || { echo "# ssh $1: $(tr '\n' ' ' <"$T/$1.err")"; tail -n 5 "$T/sshd.log" | sed 's/^/# sshd: /'; }
}
login ssh1
S1=$(val AUTOGROUP_SESSION ssh1)
check_eq "ssh login ran as the user" "$IU" "$(val uid ssh1)"
check "the login got AUTOGROUP_SESSION from the PAM environment" test -n "$S1"
check_eq "its session is <root>/user-<uid>/<session>" "/$ROOT/user-$IU" "$(dirname "$S1")"
check_eq "the user's shell is in the session's login/ leaf" "$S1/login" "$(val cgroup ssh1)"
check "the session is a real group on cgroupfs" test -d "$CPU$S1/login"
privs=""
for p in $(cat "$CPU$S1/login/cgroup.procs" 2>/dev/null); do privs="$privs $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | sed 's/ *$//');"; done
echo "# login/ holds:$privs"
check "sshd's [priv] process is in login/ (it called pam_open_session)" grep -q "$SVC: $USR \[priv\]" <<<"$privs"
check_eq "the policy of the test config applies (weight 200 -> cpu.shares 2048)" 2048 "$(cat "$CPU/$ROOT/user-$IU/cpu.shares" 2>/dev/null)"
log_has "the login went through PAM service $SVC" "pam_autogroup\\($SVC:session\\)"

login ssh2
S2=$(val AUTOGROUP_SESSION ssh2)
check "a second concurrent login gets another session" test -n "$S2" -a "$S2" != "$S1"
check_eq "of the same user group" "/$ROOT/user-$IU" "$(dirname "$S2")"
check_eq "its shell is in its own login/ leaf" "$S2/login" "$(val cgroup ssh2)"
check "both sessions exist side by side" test -d "$CPU$S1/login" -a -d "$CPU$S2/login"

echo "# 2. logout removes the groups"
touch "$U/ssh1.go"; wait "$PID_ssh1" 2>/dev/null
check "after the first logout its session is gone" gone "$CPU$S1"
check "the user group stays while the second login lives" test -d "$CPU/$ROOT/user-$IU"
touch "$U/ssh2.go"; wait "$PID_ssh2" 2>/dev/null
check "after the second logout its session is gone" gone "$CPU$S2"
check "and the user group" gone "$CPU/$ROOT/user-$IU"
check "/etc/pam.d/sshd untouched" diff <(grep ' /etc/pam.d/sshd$' "$T/pamd.before") <(pamd_sums | grep ' /etc/pam.d/sshd$')
stop_daemon "$SSHD_PID"
rm -f "$PAMFILE"

echo "# 3. su -l and runuser -l through test services in a private mount namespace"
mkdir -m 755 "$T/pamd"
pam_other "$T/pamd"
for s in su-l runuser-l; do
        {
                echo "auth     sufficient pam_rootok.so"
                echo "auth     required   pam_deny.so"
                echo "account  required   pam_permit.so"
                echo "password required   pam_deny.so"
                echo "session  required   pam_permit.so"
                echo "$MOD"
        } >"$T/pamd/$s"
done
touch "$U/su.go" "$U/runuser.go"
for c in su runuser; do
        within "$c -l $USR -c 'sh $U/probe.sh $c'" >"$T/$c.out" 2>&1
        S=$(val AUTOGROUP_SESSION "$c")
        check_eq "$c -l: the shell runs as the user" "$IU" "$(val uid "$c")"
        check_eq "$c -l: session below the user group" "/$ROOT/user-$IU" "$(dirname "$S")"
        check_eq "$c -l: the shell is in the session's login/ leaf" "$S/login" "$(val cgroup "$c")"
        check "$c -l: the session is gone after $c returns" gone "$CPU$S"
done
check "the user group is gone" test ! -e "$CPU/$ROOT/user-$IU"
log_has "su went through the test service su-l" "pam_autogroup\\(su-l:session\\)"
log_has "runuser went through the test service runuser-l" "pam_autogroup\\(runuser-l:session\\)"

echo "# 4. the host's /etc/pam.d is as it was"
check "/etc/pam.d unchanged (sha256 of every file)" diff "$T/pamd.before" <(pamd_sums)

finish
