#!/bin/bash
# Runs INSIDE the guest lane (tests/vm/test-guest.sh): cgroup v2 with cpu.
#
# Without delegate=yes a session stays root's, so the user can neither move
# the process that opened the login (root: su's and runuser's watching parent,
# the driver here) out of login/, nor freeze or kill it; v2 checks only write
# access to the common ancestor's cgroup.procs, not who owns the process.
# The attacks run as the unprivileged user: through real libpam (agdrv), and
# from inside real su -l and runuser -l logins (a private mount namespace with
# a temp /etc/pam.d). delegate=yes hands the session over, bounded by
# cgroup.max.descendants.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_guest_v2

test_root agdel "$CG2"
start_syslog || true
new_user a
write_conf "* weight 100"
pam_other
pam_service agdef "root=$ROOT conf=$CONF"
pam_service agno "root=$ROOT conf=$CONF delegate=no"
pam_service agyes "root=$ROOT conf=$CONF delegate=yes"
pam_service agdbg "root=$ROOT conf=$CONF debug"

# attack.sh OUT: run by the user inside a login. Finds the root process in its
# login/ leaf (the PAM caller), then tries to make a leaf of its own, move the
# caller there (or anywhere in the session), freeze it and kill it.
cat >"$U/attack.sh" <<'EOS'
out="$1"
S=$(sed -n 's/^0:://p' /proc/self/cgroup); S=${S%/login}; C=/sys/fs/cgroup$S
R=""
for p in $(cat "$C/login/cgroup.procs"); do
        [ "$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)" = 0 ] && R=$p
done
{
echo "session=$S"
echo "caller=$R"
echo "owners=$(stat -c %U "$C" "$C/cgroup.procs" "$C/login" "$C/login/cgroup.procs" | tr '\n' ' ')"
mkdir "$C/x" 2>/dev/null && echo "mkdir=done" || echo "mkdir=refused"
{ echo "$R" >"$C/x/cgroup.procs" || echo "$R" >"$C/cgroup.procs"; } 2>/dev/null && echo "move=done" || echo "move=refused"
{ echo 1 >"$C/x/cgroup.freeze" || echo 1 >"$C/login/cgroup.freeze" || echo 1 >"$C/cgroup.freeze"; } 2>/dev/null &&
        echo "freeze=done" || echo "freeze=refused"
{ echo 1 >"$C/x/cgroup.kill" || echo 1 >"$C/login/cgroup.kill" || echo 1 >"$C/cgroup.kill"; } 2>/dev/null &&
        echo "kill=done" || echo "kill=refused"
echo "caller_cgroup=$(sed -n 's/^0:://p' "/proc/$R/cgroup" 2>/dev/null)"
echo "caller_state=$(awk '/^State:/ {print $2}' "/proc/$R/status" 2>/dev/null)"
} >"$out" 2>&1
EOS
chmod 755 "$U/attack.sh"
# expect NAME FILE: the attack as the user failed at every step
expect_refused() {
        local n="$1" f="$2" S
        S=$(val session "$f")
        check "($n) the attack found the root caller in login/" test -n "$(val caller "$f")"
        check_eq "($n) the session, login/ and login/'s cgroup.procs are root's; the session's cgroup.procs (the common ancestor of the leaves) the user's" \
                "root $UA root root " "$(val owners "$f")"
        check_eq "($n) the user cannot make a leaf in the session" refused "$(val mkdir "$f")"
        check_eq "($n) the user cannot move the caller" refused "$(val move "$f")"
        check_eq "($n) the user cannot freeze the caller" refused "$(val freeze "$f")"
        check_eq "($n) the user cannot kill the caller" refused "$(val kill "$f")"
        check_eq "($n) the caller stayed in login/, running" "$S/login S" \
                "$(val caller_cgroup "$f") $(val caller_state "$f")"
}

echo "# 1. real libpam, default options: the attack as the user"
timeout -k 5 120 "$AGDRV" --pam "$T" agdef "$UA" open env cgroup run-user "$U/attack.sh $U/def.att" \
        run-user "setsid -w sh -c '\"$HELPER\" --root $ROOT enter --pid \$\$ >$U/def.enter 2>&1; echo \$? >>$U/def.enter; sed -n s/^0:://p /proc/\$\$/cgroup >>$U/def.enter'" \
        cgroup close >"$T/def.out" 2>&1
sed 's/^/#   /' "$U/def.att"
S=$(val AUTOGROUP_SESSION "$T/def.out")
check_eq "the caller was in login/ and the close ran" "$S/login close=PAM_SUCCESS" \
        "$(val cgroup "$T/def.out") $(grep -o '^close=.*' "$T/def.out")"
check "the session is gone after close" test ! -e "$CG2$S"
expect_refused agdrv "$U/def.att"
check_eq "enter in the login's shell: exit 0, silent, into root's leaf-1" "0 $S/leaf-1" "$(tr '\n' ' ' <"$U/def.enter" | sed 's/ $//')"
# the default is the safe one: no line at every login of a busy server
check_not "no 'not delegated' line at a login with the default options" \
        grep -q "session $S of $UA not delegated" "$SYSLOG"

echo "# 2. delegate=no: the same; with debug, one debug line says why"
timeout -k 5 120 "$AGDRV" --pam "$T" agno "$UA" open env run-user "$U/attack.sh $U/no.att" close >"$T/no.out" 2>&1
expect_refused delegate=no "$U/no.att"
S=$(val AUTOGROUP_SESSION "$T/no.out")
check_not "no 'not delegated' line with delegate=no" grep -q "session $S of $UA not delegated" "$SYSLOG"
timeout -k 5 120 "$AGDRV" --pam "$T" agdbg "$UA" open env close >"$T/dbg.out" 2>&1
S=$(val AUTOGROUP_SESSION "$T/dbg.out")
log_has "debug: one line says the session is not delegated and why" \
        "session $S of $UA not delegated: on cgroup v2 the user could move, freeze or kill the process that opened it"

echo "# 3. real clients: su -l and runuser -l, the attack from the user's login shell"
if command -v su >/dev/null && command -v runuser >/dev/null && command -v unshare >/dev/null; then
        mkdir -m 755 "$T/pamd"
        cp "$T/other" "$T/pamd/other"
        for s in su-l runuser-l; do
                printf '%s\n' "auth     sufficient pam_rootok.so" "auth     required   pam_deny.so" \
                        "account  required   pam_permit.so" "password required   pam_deny.so" \
                        "session  required   pam_permit.so" \
                        "session  optional   $AG_MODULE root=$ROOT conf=$CONF" >"$T/pamd/$s"
        done
        for c in su runuser; do
                # COMMAND with $T/pamd as /etc/pam.d, in a mount namespace of its own, on a
                # terminal (script's pty): a login with one gets root's leaves
                timeout -k 5 120 unshare -m --propagation private \
                        sh -c "mount --bind '$T/pamd' /etc/pam.d && script -qec \"$c -l $UA -c 'sh $U/attack.sh $U/$c.att'\" /dev/null" \
                        >"$T/$c.out" 2>&1
                echo "# $c: exit $?"; sed 's/^/#   /' "$U/$c.att" 2>/dev/null
                expect_refused "$c -l" "$U/$c.att"
                check "($c -l) the session is gone after $c returns" test ! -e "$CG2$(val session "$U/$c.att")"
        done
else
        skip "su, runuser or unshare missing"
fi

echo "# 4. delegate=yes: the session is the user's, bounded by cgroup.max.descendants"
cat >"$U/many.sh" <<'EOS'
S=$(sed -n 's/^0:://p' /proc/self/cgroup); C=/sys/fs/cgroup${S%/login}
stat -c %U "$C" "$C/cgroup.procs" "$C/cgroup.max.descendants" >"$1.own"
i=0; while [ $i -lt 200 ]; do mkdir "$C/g$i" 2>/dev/null || break; i=$((i + 1)); done
echo $i >"$1.n"; rmdir "$C"/g*
EOS
timeout -k 5 120 "$AGDRV" --pam "$T" agyes "$UA" open env run-user "sh $U/many.sh $U/yes" close >"$T/yes.out" 2>&1
check_eq "session directory and cgroup.procs are the user's, cgroup.max.descendants root's" "$UA $UA root" \
        "$(tr '\n' ' ' <"$U/yes.own" | sed 's/ $//')"
check_eq "the user makes 127 groups besides login/, not one more" 127 "$(cat "$U/yes.n" 2>/dev/null)"
check "close removed the session" test ! -e "$CG2$(val AUTOGROUP_SESSION "$T/yes.out")"
finish
