#!/bin/bash
# README's behaviour table ("What each process gets, by default", parsed by
# tests/behaviour.sh) checked INSIDE a systemd guest (tests/systemd) with real
# ssh logins on loopback: column systemd in the cgroup v2 guest, column v1
# (cgroupfs mode on cgroup v1) in the guest booted on the legacy hierarchy.
#
# Sourceable: the caller (guest-test*.sh, which has sourced tests/lib.sh,
# installed the module and put its line in sshd's stack the way the default
# install does) sets COLUMN and calls
#     bg_all                    every row below, in this order
# or single rows: bg_login, bg_nohup, bg_terminals (the terminal row and the
# seventh terminal, with setsid shells as a terminal's tabs), bg_tmux (the
# same with a real tmux), bg_run, bg_root, bg_cron. Each logs in a throw-away
# user (bg_setup makes it once: a home, root's key in authorized_keys) over
# ssh to 127.0.0.1 with root's key (/root/.ssh/id_ed25519), reads where the
# processes run (/proc/PID/cgroup: the cpu line on v1, the 0:: line on v2)
# and prints one TAP line per claim through tests/lib.sh (ok / not ok; a row
# the guest cannot check is a skip with its reason). Run directly:
#     guest-behaviour.sh [COLUMN]        (default: systemd)
# it sources tests/lib.sh, runs bg_all and prints the counts.
#
# Environment: COLUMN (systemd | v1), BEHAVIOUR_ROOT (root= of the module's
# line, default autogroup; used in the v1 column), HELPER (default the
# build's helper/autogroup), BG_KEY (the client key, default
# /root/.ssh/id_ed25519), BG_PORT (sshd's port, default 22). Terminals and
# panes are interactive shells that read the session hook
# (conf/autogroup-hook.sh.in, its @bindir@ the helper's directory) whether
# or not the guest has it in /etc/profile.d; a guest without tmux or cron
# skips those rows with the reason. Root's login needs
# /root/.ssh/authorized_keys: bg_setup adds root's own public key to it (the
# guest's overlay; gone at power-off).
if ! declare -F ok >/dev/null; then
        BG_STANDALONE=1
        . "${abs_top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/lib.sh"
fi
. "$abs_top_srcdir/tests/behaviour.sh"
: "${abs_top_builddir:=$abs_top_srcdir}"
: "${HELPER:=$abs_top_builddir/helper/autogroup}"
: "${BEHAVIOUR_ROOT:=autogroup}"
: "${BG_KEY:=/root/.ssh/id_ed25519}"
BG_SSH=(timeout 900 ssh -i "$BG_KEY" -p "${BG_PORT:-22}" -o BatchMode=yes -o ConnectTimeout=120 -o StrictHostKeyChecking=no
        -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR)
BG_USER=""; BG_UID=""; BG_DIR=""; BG_HOOK=""
# In a login of the systemd mode: wait until the user's manager has started
# (logind starts it with the login). A terminal's "autogroup enter" asks it
# for a scope with a bound of its own (1 s an attempt), which a manager still
# starting up under emulation on a loaded host can miss; that case, and a
# manager that never answers, is guest-test.sh's section 7g.
BG_MANAGER_UP='[ "${AUTOGROUP_MODE:-}" != systemd ] || timeout 300 systemctl --user is-system-running --wait >/dev/null 2>&1'

# bg_cg PID: the process's cgroup in the column's hierarchy
bg_cg() {
        if [ "${COLUMN:-systemd}" = v1 ]; then
                awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/$1/cgroup" 2>/dev/null
        else
                sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null
        fi
}
# bg_cgfile FILE: the same from a copy of /proc/PID/cgroup
bg_cgfile() {
        if [ "${COLUMN:-systemd}" = v1 ]; then
                awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "$1" 2>/dev/null
        else
                sed -n 's/^0:://p' "$1" 2>/dev/null
        fi
}
# bg_wait SECONDS COMMAND...: poll until the command succeeds
bg_wait() {
        local n=$(( $1 * 5 )); shift
        while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; n=$((n - 1)); done
        return 1
}
# bg_binds: the placeholders' values this login gives (KEY=VALUE words)
bg_binds() { # bg_binds UID [XDG_SESSION_ID]
        if [ "${COLUMN:-systemd}" = systemd ]; then echo "uid=$1${2:+ n=$2}"
        else echo "root=$BEHAVIOUR_ROOT uid=$1"; fi
}

bg_setup() {
        [ -n "$BG_USER" ] && return 0
        BG_USER="${TAG}beh"         # a name of its own: guest-test.sh has users a..r
        useradd -m -s /bin/bash "$BG_USER" && AG_USERS="$AG_USERS $BG_USER" || not_ok "behaviour: useradd $BG_USER"
        BG_UID=$(id -u "$BG_USER")
        install -d -m 700 -o "$BG_USER" -g "$(id -g "$BG_USER")" "/home/$BG_USER/.ssh"
        install -m 600 -o "$BG_USER" -g "$(id -g "$BG_USER")" "$BG_KEY.pub" "/home/$BG_USER/.ssh/authorized_keys"
        if ! grep -qxF "$(cat "$BG_KEY.pub")" /root/.ssh/authorized_keys 2>/dev/null; then
                cat "$BG_KEY.pub" >>/root/.ssh/authorized_keys
                chmod 600 /root/.ssh/authorized_keys
        fi
        BG_DIR=$(mktemp -d /tmp/agbeh.XXXXXX); chmod 1777 "$BG_DIR"
        BG_HOOK="$BG_DIR/autogroup-hook.sh"
        sed "s|@bindir@|$(dirname "$HELPER")|g" "$abs_top_srcdir/conf/autogroup-hook.sh.in" >"$BG_HOOK"
        chmod 644 "$BG_HOOK"
        echo "# behaviour table, column ${COLUMN:-systemd}: user $BG_USER ($BG_UID), root=$BEHAVIOUR_ROOT"
}

# a login (ssh running a command): its shell
bg_login() {
        bg_setup
        "${BG_SSH[@]}" "$BG_USER@127.0.0.1" "echo xdg=\${XDG_SESSION_ID:-}; cat /proc/self/cgroup >$BG_DIR/login.cg" \
                >"$BG_DIR/login.out" 2>&1 </dev/null
        check_eq "behaviour: ssh USER CMD exits 0" 0 "$?"
        # shellcheck disable=SC2046
        behaviour_check "a login" "${COLUMN:-systemd}" "$(bg_cgfile "$BG_DIR/login.cg")" \
                $(bg_binds "$BG_UID" "$(sed -n 's/^xdg=//p' "$BG_DIR/login.out")")
}

# a nohup job of the login's shell, after logout
bg_nohup() {
        local pid xdg cg
        bg_setup
        "${BG_SSH[@]}" "$BG_USER@127.0.0.1" "echo xdg=\${XDG_SESSION_ID:-}; nohup sleep 900 >/dev/null 2>&1 & echo nohup=\$!; cat /proc/self/cgroup >$BG_DIR/nohup.login" \
                >"$BG_DIR/nohup.out" 2>&1 </dev/null
        check_eq "behaviour: ssh USER 'nohup sleep &' exits 0" 0 "$?"
        pid=$(sed -n 's/^nohup=//p' "$BG_DIR/nohup.out"); xdg=$(sed -n 's/^xdg=//p' "$BG_DIR/nohup.out")
        if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
                not_ok "behaviour: the nohup job runs on after logout"
                return
        fi
        track_pid "$pid"
        # logged out: in the systemd mode logind's session is no longer active
        # (closing: its scope holds the job); in the cgroupfs mode the job's
        # group does not change at the close
        [ "${COLUMN:-systemd}" = systemd ] && ! bg_wait 120 sh -c "[ \"\$(loginctl show-session '$xdg' -p State --value 2>/dev/null)\" != active ]" &&
                echo "# session $xdg still active"
        cg=$(bg_cg "$pid")
        if [ "${COLUMN:-systemd}" = systemd ]; then
                # shellcheck disable=SC2046
                behaviour_check "a nohup job after logout" systemd "$cg" $(bg_binds "$BG_UID" "$xdg")
        else
                local lcg; lcg=$(bg_cgfile "$BG_DIR/nohup.login")
                # shellcheck disable=SC2046
                behaviour_check "a nohup job after logout" "$COLUMN" "$cg" $(bg_binds "$BG_UID") \
                        session="$(echo "$lcg" | cut -d/ -f4)" group=login
        fi
        kill "$pid" 2>/dev/null
}

# bg_seven NAME PARENT [KEY=VALUE...]: the terminal row for the processes in
# $BG_DIR/NAME.1 .. NAME.6 (each its own session leader; KEY=VALUE, more
# placeholders' values), the seventh terminal for NAME.7, started from PARENT
bg_seven() {
        local name="$1" parent="$2" i pid
        shift 2
        for i in 1 2 3 4 5 6; do
                pid=$(cat "$BG_DIR/$name.$i")
                # shellcheck disable=SC2046
                behaviour_check "a terminal tab or tmux pane" "${COLUMN:-systemd}" "$(bg_cg "$pid")" \
                        $(bg_binds "$BG_UID") sid="$pid" "$@"
        done
        pid=$(cat "$BG_DIR/$name.7")
        # shellcheck disable=SC2046
        behaviour_check "the seventh terminal" "${COLUMN:-systemd}" "$(bg_cg "$pid")" $(bg_binds "$BG_UID") \
                sid="$pid" parent="$parent"
}

# bg_seven_login NAME SET WHAT COMMAND: a terminal login (ssh -tt) running
# COMMAND, which starts seven shells that write $BG_DIR/NAME.1 .. NAME.7; its
# output in $BG_DIR/SET.out, its ssh in BG_SSH_PID. Status 1 (WHAT not ok, the
# login stopped through $BG_DIR/SET.stop) when the seventh has not started
bg_seven_login() {
        "${BG_SSH[@]}" -tt "$BG_USER@127.0.0.1" "$4" >"$BG_DIR/$2.out" 2>&1 </dev/null &
        BG_SSH_PID=$!
        track_pid "$BG_SSH_PID"
        bg_wait 300 test -s "$BG_DIR/$1.7" && return 0
        not_ok "behaviour: $3"
        sed "s/^/#   $2: /" "$BG_DIR/$2.out"
        touch "$BG_DIR/$2.stop"; wait "$BG_SSH_PID"
        return 1
}

# terminals: seven setsid interactive shells (a terminal's tab each) of one
# login that read the session hook; the login has six leaves (cgroupfs mode),
# so shells 1..6 are the terminal row and shell 7 the seventh terminal
bg_terminals() {
        local i sid cg parent
        bg_setup
        rm -f "$BG_DIR"/tab.* "$BG_DIR/tabs.stop"
        cat >"$BG_DIR/tabs.sh" <<EOS
$BG_MANAGER_UP
cat /proc/self/cgroup >$BG_DIR/tabs.parent
for i in 1 2 3 4 5 6 7; do
        setsid -f bash -i -c '. $BG_HOOK; echo \$\$ >$BG_DIR/tab.tmp\$0; mv $BG_DIR/tab.tmp\$0 $BG_DIR/tab.\$0; while [ ! -e $BG_DIR/tabs.stop ]; do sleep 0.5; done' \$i </dev/null >/dev/null 2>&1
        j=0; while [ ! -s $BG_DIR/tab.\$i ] && [ \$j -lt 600 ]; do sleep 0.1; j=\$((j + 1)); done
done
EOS
        chmod 644 "$BG_DIR/tabs.sh"
        bg_seven_login tab tabs "seven terminals of one login started" \
                "bash $BG_DIR/tabs.sh; while [ ! -e $BG_DIR/tabs.stop ]; do sleep 0.5; done" || return
        local ssh_pid=$BG_SSH_PID
        parent=$(bg_cgfile "$BG_DIR/tabs.parent")
        if [ "${COLUMN:-systemd}" = systemd ]; then bg_seven tab "$parent"
        else bg_seven tab "$parent" session="$(echo "$parent" | cut -d/ -f4)"; fi
        touch "$BG_DIR/tabs.stop"
        wait "$ssh_pid"
}

# a real tmux started by a login's command: seven windows, each an
# interactive shell that reads the session hook; windows 1..6 are the
# terminal row (the login has six leaves in the cgroupfs mode, its command's
# shell holds none), window 7 the seventh terminal, which stays with the
# tmux server (cgroupfs mode) or gets a scope (systemd mode)
bg_tmux() {
        local i pid cg srv
        bg_setup
        if ! command -v tmux >/dev/null 2>&1; then
                skip "behaviour: tmux panes (no tmux in this guest)"
                return
        fi
        rm -f "$BG_DIR"/pane.* "$BG_DIR/tmux.pid" "$BG_DIR/panes.stop"
        cat >"$BG_DIR/pane.sh" <<EOS
. $BG_HOOK
echo \$\$ >$BG_DIR/pane.tmp\$1; mv $BG_DIR/pane.tmp\$1 $BG_DIR/pane.\$1
exec sleep 900
EOS
        cat >"$BG_DIR/panes.sh" <<EOS
$BG_MANAGER_UP
tm() { tmux -S $BG_DIR/tmux.sock "\$@"; }
tm new-session -d -s b -n w1 "bash -i $BG_DIR/pane.sh 1"
tm display -p '#{pid}' >$BG_DIR/tmux.tmp; mv $BG_DIR/tmux.tmp $BG_DIR/tmux.pid
for i in 1 2 3 4 5 6 7; do
        [ \$i = 1 ] || tm new-window -d -t b: -n w\$i "bash -i $BG_DIR/pane.sh \$i"
        j=0; while [ ! -s $BG_DIR/pane.\$i ] && [ \$j -lt 600 ]; do sleep 0.1; j=\$((j + 1)); done
done
while [ ! -e $BG_DIR/panes.stop ]; do sleep 0.5; done
tm kill-server
EOS
        chmod 644 "$BG_DIR/pane.sh" "$BG_DIR/panes.sh"
        bg_seven_login pane panes "a tmux with seven windows started" "bash $BG_DIR/panes.sh" || return
        local ssh_pid=$BG_SSH_PID
        srv=$(bg_cg "$(cat "$BG_DIR/tmux.pid")")
        echo "#   the tmux server: $srv"
        bg_seven pane "$srv"
        touch "$BG_DIR/panes.stop"
        wait "$ssh_pid"
}

# autogroup run CMD from a login's command
bg_run() {
        bg_setup
        "${BG_SSH[@]}" -tt "$BG_USER@127.0.0.1" "$BG_MANAGER_UP; cat /proc/self/cgroup >$BG_DIR/run.login; \"$HELPER\" run -- sh -c 'echo pid=\$\$ >$BG_DIR/run.pid; cat /proc/self/cgroup >$BG_DIR/run.cg'" \
                >"$BG_DIR/run.out" 2>&1 </dev/null
        check_eq "behaviour: ssh USER 'autogroup run CMD' exits 0" 0 "$?"
        if [ "${COLUMN:-systemd}" = systemd ]; then
                # the command's scope is autogroup-run-<pid> of the helper, not of the command
                # shellcheck disable=SC2046
                behaviour_check "autogroup run CMD" systemd "$(bg_cgfile "$BG_DIR/run.cg")" $(bg_binds "$BG_UID")
        else
                # shellcheck disable=SC2046
                behaviour_check "autogroup run CMD" "$COLUMN" "$(bg_cgfile "$BG_DIR/run.cg")" $(bg_binds "$BG_UID") \
                        session="$(bg_cgfile "$BG_DIR/run.login" | cut -d/ -f4)"
        fi
}

# root's login (ssh)
bg_root() {
        bg_setup
        "${BG_SSH[@]}" root@127.0.0.1 "echo xdg=\${XDG_SESSION_ID:-}; cat /proc/self/cgroup >$BG_DIR/root.cg" \
                >"$BG_DIR/root.out" 2>&1 </dev/null
        check_eq "behaviour: ssh root CMD exits 0" 0 "$?"
        if [ "${COLUMN:-systemd}" = systemd ]; then
                behaviour_check "root's login" systemd "$(bg_cgfile "$BG_DIR/root.cg")" n="$(sed -n 's/^xdg=//p' "$BG_DIR/root.out")"
        else
                behaviour_check "root's login" "$COLUMN" "$(bg_cgfile "$BG_DIR/root.cg")" root="$BEHAVIOUR_ROOT"
        fi
}

# a cron job: the distribution's cron daemon, its own PAM stack
bg_cron() {
        local unit main pid
        bg_setup
        if ! command -v cron >/dev/null 2>&1; then
                skip "behaviour: a cron job (no cron in this guest: tests/systemd/vm-build.sh installs none)"
                return
        fi
        unit=cron.service
        systemctl start "$unit" >/dev/null 2>&1
        main=$(systemctl show "$unit" -p MainPID --value 2>/dev/null)
        if [ -z "$main" ] || [ "$main" = 0 ]; then
                not_ok "behaviour: $unit runs"
                return
        fi
        rm -f "$BG_DIR/cron.pid"
        printf '* * * * * %s echo $$ >%s/cron.tmp; mv %s/cron.tmp %s/cron.pid; exec sleep 300\n' \
                "$BG_USER" "$BG_DIR" "$BG_DIR" "$BG_DIR" >/etc/cron.d/agbehaviour
        chmod 644 /etc/cron.d/agbehaviour
        # cron starts jobs at the minute (and reads /etc/cron.d then)
        if bg_wait 130 test -s "$BG_DIR/cron.pid"; then
                pid=$(cat "$BG_DIR/cron.pid"); track_pid "$pid"
                behaviour_check "a cron job" "${COLUMN:-systemd}" "$(bg_cg "$pid")" parent="$(bg_cg "$main")"
                kill "$pid" 2>/dev/null
        else
                not_ok "behaviour: cron ran the job within 130 s"
        fi
        rm -f /etc/cron.d/agbehaviour
}

bg_all() {
        local row t0
        for row in bg_login bg_nohup bg_terminals bg_tmux bg_run bg_root bg_cron; do
                t0=$(date +%s)
                "$row"
                echo "#   ${row#bg_}: $(( $(date +%s) - t0 )) s"
        done
}

if [ -n "${BG_STANDALONE:-}" ]; then
        require_root
        COLUMN=${1:-${COLUMN:-systemd}}
        bg_all
        finish
fi
