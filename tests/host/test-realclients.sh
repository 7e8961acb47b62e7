#!/bin/bash
# The real login programs of Debian 12 with the module in their stacks, on the
# host's cgroup v1 cpu hierarchy: su, su -l, runuser -l, sudo -i, sudo, a
# private cron daemon running a job, login -f on a pty, pamtester (also the
# "other" service, which libpam reads twice), tmux and screen panes; and the
# administrator's verbs (status, gc, explain, check) finding root= and conf=
# in the PAM files without being told.
#
# Everything runs in a private mount namespace (the script re-executes itself
# under unshare -m) in which /etc/pam.d, /etc/sudoers, /etc/crontab,
# /etc/cron.d, the cron spool, /run and the login records (wtmp, btmp,
# lastlog) are copies or empty stand-ins bind-mounted over the host's: the
# host's files never change (checked at the end). The module line, with
# root=agtest-<PID>, conf= and debug (the default otherwise: root's leaves
# for the tmux and screen panes), goes into the copies of common-session,
# common-session-noninteractive and runuser (which includes neither).
#
# Each client is checked for where its process ran (/proc/PID/cgroup), for
# what a login nested in a session does (one of the same user stays in its
# caller's group; one of another user gets a session of its own), and for its
# groups being gone after it.
AG_PRIVATE_MOUNTS=1   # lib.sh re-executes this script under unshare -m
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_cmds "util-linux, login, sudo, cron, pamtester, tmux, screen, python3" su runuser sudo cron pamtester login tmux screen python3 setsid

test_root agtest
USR="${TAG}r"
CRON_PID=""
HOSTFILES=(/etc/sudoers /etc/crontab /etc/cron.d)       # checked unchanged at the end, with /etc/pam.d
pamd_sums "${HOSTFILES[@]}" >"$T/host.before"

start_syslog || true            # before /run is replaced: its lock stays held

add_home_user "$USR"
IU=$(id -u "$USR")
write_conf "*  weight 100" "$USR weight 300" "root weight 150"
LINE="session optional $AG_MODULE root=$ROOT conf=$CONF debug"

echo "# 0. private copies of what the clients read, in this mount namespace"
cp -a /etc/pam.d "$T/pamd"
for f in common-session common-session-noninteractive runuser; do echo "$LINE" >>"$T/pamd/$f"; done
cp -p /etc/sudoers "$T/sudoers"
printf '%s ALL=(ALL:ALL) NOPASSWD: ALL\n' "$USR" >>"$T/sudoers"
chmod 440 "$T/sudoers"
mounted=yes
mount --bind "$T/pamd" /etc/pam.d || mounted=no
mount --bind "$T/sudoers" /etc/sudoers || mounted=no
private_cron "$USR" "sh $U/probe.sh cron >>$U/cron.out 2>&1" || mounted=no
private_run || mounted=no
mkdir -p -m 1777 /run/screen
[ "$mounted" = yes ] || skip_all "cannot bind-mount the private copies in this namespace"
check "the copies are in place (/etc/pam.d/common-session has the line)" grep -qF "$LINE" /etc/pam.d/common-session

cat >"$U/probe.sh" <<'EOF'
#!/bin/sh
# probe TAG: where this process runs, as TAG.KEY=VALUE lines
echo "$1.cgroup=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/self/cgroup)"
echo "$1.uid=$(id -u)"
echo "$1.session=${AUTOGROUP_SESSION:-}"
EOF
chmod 755 "$U/probe.sh"
P="sh $U/probe.sh"
# in_session TAG FILE UID: TAG ran in <root>/user-UID/<session>/login; prints the session
in_session() {
        local cg; cg=$(val "$1.cgroup" "$2")
        case "$cg" in "/$ROOT/user-$3/"?*/login) echo "${cg%/login}"; return 0 ;; esac
        return 1
}
# own_session DESC TAG FILE UID: TAG got a session of its own for UID, gone after the client
own_session() {
        local s
        if s=$(in_session "$2" "$3" "$4"); then
                ok "$1: ran in a session of its own ($s/login)"
                check "$1: that session is gone after it" gone "$CPU$s"
        else
                not_ok "$1: ran in a session of its own below /$ROOT/user-$4 (got '$(val "$2.cgroup" "$3")')"
        fi
}
# stays DESC OUTER INNER FILE: the nested INNER ran where OUTER (its caller) was
stays() {
        local o i; o=$(val "$2.cgroup" "$4"); i=$(val "$3.cgroup" "$4")
        if [ -n "$o" ] && [ "$o" = "$i" ]; then ok "$1: stays in its caller's group ($o)"
        else not_ok "$1: stays in its caller's group (caller '$o', nested '$i')"; fi
}

echo "# 1. su, su -l, runuser -l from outside any session: a session each"
su "$USR" -c "$P su" >"$T/su.out" 2>&1
check_eq "su: the shell runs as the user" "$IU" "$(val su.uid "$T/su.out")"
own_session "su" su "$T/su.out" "$IU"
su -l "$USR" -c "$P sul" >"$T/sul.out" 2>&1
own_session "su -l" sul "$T/sul.out" "$IU"
runuser -l "$USR" -c "$P rul" >"$T/rul.out" 2>&1
own_session "runuser -l" rul "$T/rul.out" "$IU"
runuser -u "$USR" -- sh "$U/probe.sh" ru >"$T/ru.out" 2>&1
own_session "runuser (its own file holds the line)" ru "$T/ru.out" "$IU"

echo "# 2. nested in a session of the same user: su, su -l, runuser -l (root in root's session)"
su -l root -c "$P outer; su root -c '$P su2'; su -l root -c '$P sul2'; runuser -l root -c '$P rul2'" >"$T/nest0.out" 2>&1
s0=$(in_session outer "$T/nest0.out" 0) && ok "root's su -l: a session of root ($s0)" ||
        not_ok "root's su -l: a session of root (got '$(val outer.cgroup "$T/nest0.out")')"
stays "su from inside root's session" outer su2 "$T/nest0.out"
stays "su -l from inside root's session" outer sul2 "$T/nest0.out"
stays "runuser -l from inside root's session" outer rul2 "$T/nest0.out"
[ -n "$s0" ] && check "root's session is gone after the outer su -l" gone "$CPU$s0"
log_has "the nested logins step aside with one debug line" "login of root from inside $CPU/$ROOT/user-0/.*stays in its caller's group"

echo "# 3. sudo -i and sudo from inside the user's session"
su -l "$USR" -c "$P outer; sudo -n -u $USR -i $P sudoi_self; sudo -n -u $USR $P sudo_self; sudo -n -i $P sudoi_root; sudo -n $P sudo_root" \
        >"$T/sudo.out" 2>&1
su1=$(in_session outer "$T/sudo.out" "$IU") && ok "the user's su -l session ($su1)" ||
        not_ok "the user's su -l session (got '$(val outer.cgroup "$T/sudo.out")')"
check_eq "sudo -i: the shell runs as root" 0 "$(val sudoi_root.uid "$T/sudo.out")"
stays "sudo -u SELF -i (sudo-i includes common-session)" outer sudoi_self "$T/sudo.out"
stays "sudo -u SELF (common-session-noninteractive)" outer sudo_self "$T/sudo.out"
own_session "sudo -i to root from the user's session" sudoi_root "$T/sudo.out" 0
own_session "sudo to root from the user's session" sudo_root "$T/sudo.out" 0
[ -n "$su1" ] && check "the user's session is gone after su -l" gone "$CPU$su1"
log_has "another user's login from inside a session says why it gets its own" \
        "login of root from inside $CPU/$ROOT/user-$IU/.*a session of its own"

echo "# 4. a private cron daemon runs the job in a session of its own"
cron -f -L 0 >"$T/cron.log" 2>&1 &
CRON_PID=$!; daemon_pid "$CRON_PID"
# cron starts jobs at the minute: wait at most 75 s for the job's lines
for _ in $(seq 750); do grep -q '^cron.session=' "$U/cron.out" 2>/dev/null && break; sleep 0.1; done
if grep -q '^cron.cgroup=' "$U/cron.out" 2>/dev/null; then
        check_eq "cron: the job runs as the user" "$IU" "$(val cron.uid "$U/cron.out")"
        own_session "cron job" cron "$U/cron.out" "$IU"
else
        not_ok "cron: the job ran within 75 s ($(head -c 300 "$T/cron.log" 2>/dev/null | tr '\n' ' '))"
fi
stop_daemon "$CRON_PID"

echo "# 5. login -f on a pseudo-terminal"
cat >"$T/ptydrv.py" <<'EOF'
import os, pty, select, sys, time
user, cmd = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv("/bin/login", ["login", "-f", user])
buf = b""
def until(pat, secs):
    global buf
    end = time.time() + secs
    while pat not in buf:
        left = end - time.time()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return False
        try:
            d = os.read(fd, 4096)
        except OSError:
            return False
        if not d:
            return False
        buf += d
    return True
until(b"$ ", 30)
os.write(fd, (cmd + "; echo DONE-$((40+2))\n").encode())
until(b"DONE-42", 30)
os.write(fd, b"exit\n")
until(b"\0never", 5)
os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace"))
EOF
timeout 90 python3 "$T/ptydrv.py" "$USR" "$P login >$U/login.out" >"$T/login.pty" 2>&1
check_eq "login -f: the shell runs as the user" "$IU" "$(val login.uid "$U/login.out")"
own_session "login -f" login "$U/login.out" "$IU"

echo "# 6. pamtester: a service with the line, and 'other' (libpam reads it twice)"
pamtester runuser "$USR" open_session close_session >"$T/pt.out" 2>&1
check "pamtester runuser USER open_session close_session" grep -q 'successfully opened' "$T/pt.out"
log_has "pamtester: the session was made" "pam_autogroup\\(runuser:session\\): session of $USR in $CPU/$ROOT/user-$IU/"
check_not "pamtester: nothing of the user left after close" test -e "$CG/user-$IU"
pamtester other "$USR" open_session close_session >"$T/pto.out" 2>&1
check "pamtester other USER open_session close_session" grep -q 'successfully opened' "$T/pto.out"
log_has "pamtester other: the second instance steps aside" "pam_autogroup\\(other:session\\): pam_autogroup is in this stack more than once: an earlier line opened this session, this one steps aside"
check_not "pamtester other: nothing of the user left after close (no second session)" test -e "$CG/user-$IU"

echo "# 7. tmux and screen panes get root's leaves, one each; the administrator's verbs find the root"
mkdir -m 700 "$U/screen" && chown "$USR" "$U/screen"
pane="$HELPER enter --pid \$\$; $P"
# screen starts once tmux's pane has entered: one after the other, they take
# leaf-1 and leaf-2; and su's login waits for screen's pane too. su -l runs
# on a terminal (script(1)'s pty), as a user at a terminal would: a login
# without one gets no leaves (the item leaves-notty). At its close the session
# lives on (the tmux and screen servers) and keeps its free leaves.
cat >"$U/mux.sh" <<EOS
$P outer; tmux -S $U/tmux.sock new-session -d -s t '$pane tmux >$U/tmux.out; exec sleep 300'
i=0; until grep -q '^tmux.session=' $U/tmux.out 2>/dev/null || [ \$i -ge 600 ]; do sleep 0.05; i=\$((i + 1)); done
SCREENDIR=$U/screen screen -dmS s sh -c '$pane screen >$U/screen.out; exec sleep 300'
i=0; until grep -q '^screen.session=' $U/screen.out 2>/dev/null || [ \$i -ge 600 ]; do sleep 0.05; i=\$((i + 1)); done
EOS
chmod 644 "$U/mux.sh"
script -qec "su -l $USR -c 'sh $U/mux.sh'" /dev/null </dev/null 2>&1 | tr -d '\r' >"$T/mux.out"
sm=$(in_session outer "$T/mux.out" "$IU") || not_ok "tmux/screen: the user's su -l session (got '$(val outer.cgroup "$T/mux.out")')"
wait_for "$U/tmux.out" '^tmux.session=' && wait_for "$U/screen.out" '^screen.session='
i=0
for m in tmux screen; do
        i=$((i + 1))
        check_eq "$m: the pane runs in a leaf of its own" "$sm/leaf-$i" "$(val "$m.cgroup" "$U/$m.out")"
done
check "su's close kept the lingering session's free leaves for later panes (leaf-3 .. leaf-6)" \
        sh -c "cd '$CPU$sm' && test -d leaf-3 -a -d leaf-4 -a -d leaf-5 -a -d leaf-6"
"$HELPER" status >"$T/status.out" 2>&1
check "status without --root names root=$ROOT and where it came from" \
        grep -q "^root=$ROOT from /etc/pam.d/common-session:[0-9]" "$T/status.out"
check "status without --root shows the lingering session" grep -q "${sm##*/}" "$T/status.out"
check_not "status does not claim that nothing exists" grep -q "does not exist" "$T/status.out"
"$HELPER" explain "$USR" >"$T/explain.out" 2>&1
check "explain without --conf reads conf= of the module's line" grep -q "^config $CONF " "$T/explain.out"
check "explain: the weight comes from that file" grep -Eq "^weight +300 " "$T/explain.out"
"$HELPER" check >"$T/check.out" 2>&1; rc=$?
check_eq "check without FILE checks conf= of the module's line, exit 0" 0 "$rc"
check "check names the file:line of conf=" grep -q "^conf=$CONF from /etc/pam.d/" "$T/check.out"
# several module lines with different roots and confs (--pam-dir: a directory of test files)
mkdir "$T/pamd2" "$T/pamd3"
printf 'session optional pam_autogroup.so root=%s debug\n' "$ROOT" >"$T/pamd2/sshd"
printf '@include common\n' >"$T/pamd2/login"
printf 'session optional pam_autogroup.so root=%s-x conf=%s/none.conf\n' "$ROOT" "$T" >"$T/pamd2/common"
printf 'session optional pam_autogroup.so root=%s-x\n' "$ROOT" >"$T/pamd3/sshd"
"$HELPER" --pam-dir "$T/pamd2" status >"$T/status2.out" 2>&1
check "status, two lines: root=$ROOT with its file:line" grep -q "^root=$ROOT from $T/pamd2/sshd:1 (services: sshd)" "$T/status2.out"
check "status, two lines: root=$ROOT-x reached through @include" \
        grep -q "^root=$ROOT-x from $T/pamd2/common:1 (services: common, login)" "$T/status2.out"
check "status, two lines: the session below the first root" grep -q "${sm##*/}" "$T/status2.out"
check "status, two lines: the second root said to be empty, by name" \
        grep -q "^No groups below this root: $CPU/$ROOT-x does not exist" "$T/status2.out"
check_eq "status --json, two lines: one JSON object for each root" 2 \
        "$("$HELPER" --pam-dir "$T/pamd2" status --json 2>/dev/null | python3 -c 'import json,sys; print(sum(1 for l in sys.stdin if json.loads(l)["root"]))')"
"$HELPER" --pam-dir "$T/pamd3" status >"$T/status3.out" 2>&1
check "status, a line whose root is empty: names the root that holds groups" \
        grep -q "^Groups of pam_autogroup exist below $CPU/$ROOT: autogroup --root $ROOT status" "$T/status3.out"
# the pam.d reader under valgrind: a file whose last line has no newline, reached through
# @include, is read to its end and no further
if command -v valgrind >/dev/null; then
        mkdir "$T/pamd4"
        printf 'session required pam_unix.so\n@include common' >"$T/pamd4/login"
        printf 'session optional pam_autogroup.so root=%s conf=%s/none.conf' "$ROOT" "$T" >"$T/pamd4/common"
        valgrind -q --error-exitcode=99 "$HELPER" --pam-dir "$T/pamd4" check >"$T/check4.out" 2>"$T/vg4.out"
        check_not "check under valgrind: no read past the text of the pam.d files" grep -q "^==[0-9]*==" "$T/vg4.out"
        check "check under valgrind: the line without a newline is found" grep -q "^conf=$T/none.conf from $T/pamd4/common:1" "$T/check4.out"
else
        skip "valgrind is not installed"
fi
"$HELPER" --pam-dir "$T/pamd2" check >"$T/check2.out" 2>&1
check "check, two lines: the line without conf= gets the default, and says so" \
        grep -q "^conf=[^ ]*: the default (the line at $T/pamd2/sshd:1 (services: sshd) sets no conf=)" "$T/check2.out"
check "check, two lines: the second conf too" grep -q "^conf=$T/none.conf from $T/pamd2/common:1" "$T/check2.out"
tmux -S "$U/tmux.sock" kill-server 2>/dev/null
SCREENDIR="$U/screen" setpriv --reuid="$USR" --regid="$(id -g "$USR")" --init-groups screen -S s -X quit 2>/dev/null
for _ in $(seq 100); do [ -z "$(find "$CPU$sm" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break; sleep 0.1; done
"$HELPER" gc >"$T/gc.out" 2>&1
# close's watcher may remove the session before gc does: gc must find the
# module's root= itself, and whoever removed the session, it is gone
check "gc without --root works below root=$ROOT from the module's line" grep -q "^root=$ROOT from " "$T/gc.out"
check "gc without --root: the lingering session is removed (by gc, or by close's watcher first)" \
        sh -c "grep -q '^removed $sm\$' '$T/gc.out' || test ! -e '$CPU$sm'"
check_not "the tmux/screen session is gone" test -e "$CPU$sm"

echo "# 8. nothing left; the host's files as they were"
check_eq "no group of the user left below /$ROOT" "" "$(find "$CG" -mindepth 1 -type d 2>/dev/null | tr '\n' ' ')"
umount /etc/pam.d /etc/sudoers /etc/crontab /etc/cron.d 2>/dev/null
check "the host's /etc/pam.d, sudoers, crontab, cron.d unchanged (sha256)" diff "$T/host.before" <(pamd_sums "${HOSTFILES[@]}")
finish
