#!/bin/bash
# The helper finds the caller's session without AUTOGROUP_SESSION, and
# "autogroup check" lists every module line; real su and runuser with the
# module in their stacks on the host's cgroup v1 cpu hierarchy, in a private
# mount namespace (the script re-executes itself under unshare -m) where
# /etc/pam.d is a copy bind-mounted over the host's (checked unchanged at
# the end). The module line has a root= that is not the default.
#   1. check: every module line (common-session, common-session-noninteractive,
#      runuser, and sshd's own line with other options), each with the
#      services that reach it and its options;
#   2. run, set and enter without AUTOGROUP_SESSION (env -u) in a runuser -l
#      login: the session found from the process's own cgroup and the roots
#      the module's lines name (on cgroup v1 a session is never delegated, so
#      they report that, not "not inside one of your sessions"); the same
#      checks as the hint: another user's session, a root no line names, the
#      root group are not the caller's session;
#   3. a nested login of the same user (su - and runuser -l from inside the
#      user's session: the module steps aside) sets AUTOGROUP_SESSION to the
#      caller's session.
AG_PRIVATE_MOUNTS=1   # lib.sh re-executes this script under unshare -m
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_cmds "util-linux" su runuser
require_helper

ROOT="agfind-$$"
OTHER="agfind2-$$"              # a root no module line names
CG="$CPU/$ROOT"
AG_CGROOTS="$CG $CPU/$OTHER"
pamd_sums >"$T/host.before"
trap 'umount /etc/pam.d 2>/dev/null; ag_cleanup' EXIT
start_syslog || true

new_user a; new_user b
write_conf "* weight 100"
LINE="session optional $AG_MODULE root=$ROOT conf=$CONF debug"
SSHLINE="session optional $AG_MODULE root=$ROOT conf=$T/ssh.conf acctlog=debug strict noaudit"

echo "# 0. a private copy of /etc/pam.d with the module's lines"
cp -a /etc/pam.d "$T/pamd"
for f in common-session common-session-noninteractive runuser; do echo "$LINE" >>"$T/pamd/$f"; done
[ -f "$T/pamd/sshd" ] || echo "@include common-session" >"$T/pamd/sshd"
echo "$SSHLINE" >>"$T/pamd/sshd"
mount --bind "$T/pamd" /etc/pam.d || skip_all "cannot bind-mount the copy of /etc/pam.d in this namespace"
check "the copy is in place" grep -qF "$SSHLINE" /etc/pam.d/sshd
lineno() { grep -nF "$1" "/etc/pam.d/$2" | tail -n1 | cut -d: -f1; }

echo "# 1. check lists every module line, the services that reach it and its options"
"$HELPER" check >"$T/check.out" 2>&1
cat "$T/check.out" | sed 's/^/#   /'
opts="root=$ROOT conf=$CONF mode=auto delegate=no acctlog=info debug"
cs=$(grep "^  /etc/pam.d/common-session:$(lineno "$LINE" common-session) " "$T/check.out")
check "common-session's line, with its options" test -n "$cs" -a "${cs##*): }" = "$opts"
check "  reached by su and sshd" sh -c "echo '$cs' | grep -q '(services: .*\bsu\b' && echo '$cs' | grep -q '(services: .*\bsshd\b'"
ni=$(grep "^  /etc/pam.d/common-session-noninteractive:$(lineno "$LINE" common-session-noninteractive) " "$T/check.out")
check "common-session-noninteractive's line, with its options" test -n "$ni" -a "${ni##*): }" = "$opts"
ru=$(grep "^  /etc/pam.d/runuser:$(lineno "$LINE" runuser) " "$T/check.out")
check "runuser's line, reached by runuser and runuser-l" \
        sh -c "echo '$ru' | grep -q '(services: runuser, runuser-l)'"
ss=$(grep "^  /etc/pam.d/sshd:$(lineno "$SSHLINE" sshd) " "$T/check.out")
check_eq "sshd's own line, with its other options" \
        "(services: sshd): root=$ROOT conf=$T/ssh.conf mode=auto delegate=no acctlog=debug noaudit strict" \
        "$(echo "$ss" | sed 's/^ *[^ ]* //')"
check_eq "as many lines listed as the files hold" "$(grep -lF "$AG_MODULE" /etc/pam.d/* | xargs grep -cF "$AG_MODULE" | awk -F: '{n += $2} END {print n}')" \
        "$(grep -c "^  /etc/pam.d/" "$T/check.out")"

echo "# 2. run, set and enter without AUTOGROUP_SESSION, root=$ROOT"
cat >"$U/probe.sh" <<EOS
#!/bin/sh
# where this login runs, and what the helper says without the hint
echo "cgroup=\$(awk -F: '\$2 ~ /(^|,)cpu(,|\$)/ {print \$3}' /proc/self/cgroup)"
echo "session=\${AUTOGROUP_SESSION:-}"
echo "run=\$(env -u AUTOGROUP_SESSION "$HELPER" run -- true 2>&1; echo rc=\$?)"
echo "set=\$(env -u AUTOGROUP_SESSION "$HELPER" set --weight 50 \$\$ 2>&1; echo rc=\$?)"
echo "enter=\$(setsid -w sh -c 'exec env -u AUTOGROUP_SESSION "$HELPER" enter --verbose --pid \$\$' 2>&1; echo rc=\$?)"
echo "hint-run=\$("$HELPER" run -- true 2>&1; echo rc=\$?)"
EOS
chmod 755 "$U/probe.sh"
runuser -l "$UA" -c "sh $U/probe.sh" >"$T/ru.out" 2>&1
sed 's/^/#   /' "$T/ru.out"
S=$(val cgroup "$T/ru.out"); S=${S%/login}
check "runuser -l: the login is grouped below root=$ROOT" sh -c "case '$S' in /$ROOT/user-$IA/?*) true;; *) false;; esac"
check_eq "  with AUTOGROUP_SESSION" "$S" "$(val session "$T/ru.out")"
# found: the same answer as with the hint (a leaf, or "not delegated" where
# sessions are not delegated); never "not inside one of your sessions"
hint=$(val hint-run "$T/ru.out")
check_eq "run without the hint answers as with it" "$hint" "$(val run "$T/ru.out")"
check_not "  not 'not inside one of your pam_autogroup sessions'" grep -q "^run=.*not inside" "$T/ru.out"
check_not "set without the hint: not 'not inside'" grep -q "^set=.*not inside" "$T/ru.out"
check_not "enter without the hint: not 'not inside a pam_autogroup session'" grep -q "^enter=.*not inside" "$T/ru.out"
check "enter without the hint: a session found (moved; not delegated; or, runuser -l without a terminal, no leaves)" \
        grep -Eq "^enter=.*(moved into its leaf|not delegated to this user|the session has no leaves)" "$T/ru.out"
# the same checks as for the hint, from a root shell that puts itself where it says
mkdir -p "$CPU/$OTHER/user-$IA/s1/login" "$CG/user-$IB/s2/login"
at() { (echo "$BASHPID" >"$CPU$1/cgroup.procs" && exec setpriv --reuid="$UA" --regid="$(id -g "$UA")" --init-groups \
        env -u AUTOGROUP_SESSION "$HELPER" run -- true) 2>&1; }
check "in another user's session (user-$IB): not the caller's" sh -c "echo '$(at "/$ROOT/user-$IB/s2/login")' | grep -q 'not inside'"
check "below a root no module line names ($OTHER): not the caller's" sh -c "echo '$(at "/$OTHER/user-$IA/s1/login")' | grep -q 'not inside'"
check "in the hierarchy's root group: not in a session" sh -c "echo '$(at "")' | grep -q 'not inside'"
rmdir "$CPU/$OTHER/user-$IA/s1/login" "$CPU/$OTHER/user-$IA/s1" "$CPU/$OTHER/user-$IA" "$CPU/$OTHER" \
        "$CG/user-$IB/s2/login" "$CG/user-$IB/s2" "$CG/user-$IB" 2>/dev/null

echo "# 3. a nested login of the same user sets AUTOGROUP_SESSION"
"$AGDRV" --pam /etc/pam.d su "$UA" open env cgroup touch "$T/o.open" wait-file "$T/o.go" close >"$T/o.out" 2>&1 &
PID_o=$!; track_pid $PID_o
wait_for "$T/o.out" '^cgroup='
SO=$(val cgroup "$T/o.out"); SO=${SO%/login}
check "the outer login is grouped below root=$ROOT" sh -c "case '$SO' in /$ROOT/user-$IA/?*) true;; *) false;; esac"
# a root shell in the outer session's login/ (as su's parent would be), then su - and runuser -l
(echo "$BASHPID" >"$CPU$SO/login/cgroup.procs" && exec su - "$UA" -c "sh $U/probe.sh") >"$T/su.out" 2>&1
(echo "$BASHPID" >"$CPU$SO/login/cgroup.procs" && exec runuser -l "$UA" -c "sh $U/probe.sh") >"$T/rl.out" 2>&1
sed 's/^/#   /' "$T/su.out"
for c in su rl; do
        name=$([ $c = su ] && echo "su -" || echo "runuser -l")
        check_eq "$name from inside the session: stays in its caller's group" "$SO/login" "$(val cgroup "$T/$c.out")"
        check_eq "  and AUTOGROUP_SESSION names the caller's session" "$SO" "$(val session "$T/$c.out")"
        check_not "  run there: not 'not inside'" grep -q "^hint-run=.*not inside" "$T/$c.out"
done
log_has "the debug line says the login stayed in its caller's group" "login of $UA from inside $CPU$SO/login: stays in its caller's group"
touch "$T/o.go"; wait "$PID_o"
check "the outer session is gone after its close" test ! -e "$CPU$SO"

umount /etc/pam.d
check "the host's /etc/pam.d unchanged (sha256)" diff "$T/host.before" <(pamd_sums)
finish
