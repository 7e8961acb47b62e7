#!/bin/bash
# "autogroup run" says, in one line on stderr and without --verbose, when it
# cannot give the command what it is for, and runs the command all the same:
#   1. the cgroupfs mode (real logins through libpam, real v1 cpu groups): a
#      login without leaves (leaves 0), and one whose every leaf holds a
#      process; a free leaf: nothing said;
#   2. the systemd mode (AUTOGROUP_MODE=systemd outside any cgroupfs session,
#      no user bus): no scope of the user manager.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_helper

ROOT="agtest-$$"
AG_CGROOTS="$CPU/$ROOT"
new_user u
USR="${TAG}u"; UID_=$(id -u "$USR")
CONF="$T/autogroup.conf"
pam_service agrun "root=$ROOT conf=$CONF"
pam_other
# login CMD: CMD as the user inside a login of its own (a terminal's: tty ssh)
login() { timeout -k 5 120 "$AGDRV" --pam "$T" agrun "$USR" open run-user "$1" close >"$T/login.out" 2>&1; }
RUN="\"$HELPER\" --root $ROOT run"
CG="sed -n 's/^[0-9]*:cpu://p' /proc/self/cgroup"

echo "# 1. the cgroupfs mode"
echo "* leaves 0" >"$CONF"; chmod 644 "$CONF"
login "$RUN -- sh -c \"$CG\" >$U/none.out 2>$U/none.err; echo \$? >$U/none.rc"
check_eq "leaves 0: the command ran, its status returned" 0 "$(cat "$U/none.rc" 2>/dev/null)"
check "leaves 0: it ran where the caller is (login/)" grep -q "^/$ROOT/user-$UID_/.*/login\$" "$U/none.out"
check_eq "leaves 0: one line on stderr, without --verbose" 1 "$(wc -l <"$U/none.err")"
check "leaves 0: it says why" grep -qE "^autogroup run: no leaves \(leaves 0\) in /$ROOT/user-$UID_/[^ ]+: the command runs where it is\$" "$U/none.err"

echo "* leaves 1" >"$CONF"
# the first command takes leaf-1 and stays; the second finds none free
login "$RUN -- sleep 120 2>$U/busy1.err & p=\$!
for i in \$(seq 600); do c=\$(pgrep -P \$p -x sleep) && grep -q '/leaf-1\$' /proc/\$c/cgroup && break; sleep 0.1; done
$RUN -- sh -c \"$CG\" >$U/busy.out 2>$U/busy.err; echo \$? >$U/busy.rc
pkill -P \$p -x sleep; wait \$p"
check_eq "every leaf busy: the command ran, its status returned" 0 "$(cat "$U/busy.rc" 2>/dev/null)"
check "every leaf busy: it ran where the caller is (login/)" grep -q "^/$ROOT/user-$UID_/.*/login\$" "$U/busy.out"
check_eq "every leaf busy: one line on stderr, without --verbose" 1 "$(wc -l <"$U/busy.err")"
check "every leaf busy: it says why" grep -qE "^autogroup run: every leaf holds processes in /$ROOT/user-$UID_/[^ ]+: the command runs where it is\$" "$U/busy.err"
check_eq "the command that got the leaf: nothing on stderr" 0 "$(wc -l <"$U/busy1.err")"

login "$RUN -- sh -c \"$CG\" >$U/free.out 2>$U/free.err; echo \$? >$U/free.rc"
check_eq "a free leaf: exit 0" 0 "$(cat "$U/free.rc" 2>/dev/null)"
check "a free leaf: the command ran in it" grep -q "^/$ROOT/user-$UID_/.*/leaf-1\$" "$U/free.out"
check_eq "a free leaf: nothing on stderr" 0 "$(wc -l <"$U/free.err")"
check_eq "no group left behind" "" "$(ls -d "$CPU/$ROOT"/user-* 2>/dev/null)"

echo "# 2. the systemd mode: no user manager to ask"
for v in "" --verbose; do
        as_user "$USR" "AUTOGROUP_MODE=systemd DBUS_SESSION_BUS_ADDRESS=unix:path=$T/no-bus XDG_RUNTIME_DIR=$T/no-run \
                timeout -k 5 120 '$HELPER' run $v -- sh -c 'echo ran; exit 7' >$U/sd.out 2>$U/sd.err; echo \$? >$U/sd.rc"
        check_eq "systemd mode ${v:-(no --verbose)}: the command ran, its status returned" "ran 7" \
                "$(cat "$U/sd.out" 2>/dev/null) $(cat "$U/sd.rc" 2>/dev/null)"
        check_eq "systemd mode ${v:-(no --verbose)}: one line on stderr" 1 "$(wc -l <"$U/sd.err")"
        check "systemd mode ${v:-(no --verbose)}: it says why" \
                grep -qE "^autogroup run: no scope of the user manager \(.+\): the command runs where it is\$" "$U/sd.err"
done

finish
