#!/bin/bash
# shellcheck disable=SC2154  # PID_<name> are set with eval by login_bg/lib2
# Who owns a session: the module option delegate=yes|no (default no).
#
# Without delegate=yes a session stays root's but for its leaves'
# cgroup.procs (v2: and the session's): on cgroup v1 the user can make no
# group at all (the bound on the kernel memory a user can make the host
# spend on groups), on cgroup v2 the user can neither move the process that
# opened the login (root) out of the session nor freeze or kill it.
# "autogroup enter" moves the shell into one of root's leaves. delegate=yes hands the session
# over as documented on cgroup v2 (cgroup.max.descendants bounds it); on v1
# it is refused with one log line (the session stays root's). Every attack
# runs as the unprivileged user on real cgroupfs: v1 cpu through real libpam,
# v2 on /sys/fs/cgroup/unified through lib/cgroup/session.c (the module refuses a
# hierarchy without cpu; the guest lane runs the same attacks through PAM).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu

test_root agdel
V2ROOT="agdel2-$$"
AG_CGROOTS="$CG $UNIFIED/$V2ROOT"
start_syslog || true
new_user a
write_conf "* weight 100"
pam_other
pam_service agdef "root=$ROOT conf=$CONF debug"
pam_service agno "root=$ROOT conf=$CONF delegate=no"
pam_service agyes "root=$ROOT conf=$CONF delegate=yes"
pam_service agbad "root=$ROOT conf=$CONF delegate=maybe"
# the user's login shell as a session leader: enter, then where it is
cat >"$U/enter.sh" <<EOS
setsid -w sh -c '"$HELPER" --root $ROOT enter --pid \$\$ >"\$1.out" 2>&1; echo \$? >"\$1.rc"; grep :cpu: /proc/\$\$/cgroup | cut -d: -f3 >"\$1.cg"
"$HELPER" --root $ROOT enter --verbose --pid \$\$ >"\$1.verbose" 2>&1
"$HELPER" --root $ROOT run -- true >"\$1.run" 2>&1; echo "rc=\$?" >>"\$1.run"' sh "\$1"
EOS
chmod 755 "$U/enter.sh"
# login_bg NAME SERVICE: a login of UA that stays open until $T/NAME.go exists, its
# shell running enter.sh and then a process that stays (as a login's shell does)
login_bg() {
        "$AGDRV" --pam "$T" "$2" "$UA" open env cgroup run-user "$U/enter.sh $U/$1" \
                spawn-user "echo \$\$ >$U/$1.pid; exec sleep 600" wait-file "$T/$1.go" close >"$T/$1.out" 2>&1 &
        track_pid $!
        eval "PID_$1=$!"
        wait_for "$T/$1.out" '^cgroup=' && wait_for "$U/$1.pid" '^[0-9]+$'
        track_pid "$(cat "$U/$1.pid")"
}
# end NAME: the login's shell exits, then the login closes
end() {
        kill "$(cat "$U/$1.pid")"
        touch "$T/$1.go"; wait "$(eval echo "\$PID_$1")"
}

for svcname in agdef agno agbad; do
        echo "# v1, $svcname ($(sed -n 's/.*conf=[^ ]* *//p' "$T/$svcname")): the session stays root's"
        login_bg "$svcname" "$svcname"
        S=$(val AUTOGROUP_SESSION "$svcname")
        check "the session opened" grep -q '^open=PAM_SUCCESS' "$T/$svcname.out"
        check_eq "the caller sits in login/ (the login is grouped)" "$S/login" "$(val cgroup "$svcname")"
        check_eq "session directory, cgroup.procs, tasks and login/ are root's" "root root root root" \
                "$(owner "$CPU$S") $(owner "$CPU$S/cgroup.procs") $(owner "$CPU$S/tasks") $(owner "$CPU$S/login")"
        check_not "the user cannot make a group in the session" as_user "$UA" "mkdir $CPU$S/x"
        check_not "the user cannot make a group in login/" as_user "$UA" "mkdir $CPU$S/login/x"
        check_not "the user cannot chmod the session" as_user "$UA" "chmod 777 $CPU$S"
        check_eq "enter in the login's shell: exit 0, silent, into root's leaf-1" "0::$S/leaf-1" \
                "$(cat "$U/$svcname.rc"):$(cat "$U/$svcname.out"):$(cat "$U/$svcname.cg")"
        check "enter --verbose: already in its leaf" grep -q "already in its leaf" "$U/$svcname.verbose"
        check_eq "autogroup run runs the command in one of root's leaves" "rc=0" \
                "$(tr '\n' ' ' <"$U/$svcname.run" | sed 's/ $//')"
        check_eq "the login's processes are in login/" "$S/login" \
                "$(grep :cpu: "/proc/$(cat "$U/$svcname.pid")/cgroup" | cut -d: -f3)"
        end "$svcname"
        check "close removed the session" test ! -e "$CPU$S"
done
log_has "delegate=maybe: one log line, the session is not delegated" "invalid delegate 'maybe', using 'no'"
check_not "v1: no 'not delegated' line (it is about cgroup v2)" grep -q "not delegated" "$SYSLOG"

echo "# v1, delegate=yes: refused (a user's sub-groups could hold off caps), the session stays root's"
login_bg agyes agyes
S=$(val AUTOGROUP_SESSION agyes)
check "the session opened" grep -q '^open=PAM_SUCCESS' "$T/agyes.out"
check_eq "the caller sits in login/ (the login is grouped)" "$S/login" "$(val cgroup agyes)"
check_eq "session directory, cgroup.procs, tasks and login/ are root's" "root root root root" \
        "$(owner "$CPU$S") $(owner "$CPU$S/cgroup.procs") $(owner "$CPU$S/tasks") $(owner "$CPU$S/login")"
check_not "the user cannot make a group in the session" as_user "$UA" "mkdir $CPU$S/x"
check_not "the user cannot make a group in login/" as_user "$UA" "mkdir $CPU$S/login/x"
check_eq "enter in the login's shell: exit 0, silent, into root's leaf-1 (as without the option)" "0::$S/leaf-1" \
        "$(cat "$U/agyes.rc"):$(cat "$U/agyes.out"):$(cat "$U/agyes.cg")"
log_has "one log line says delegate=yes is refused on v1" "delegate=yes refused on cgroup v1 .*$S of $UA stays root's"
check_eq "  exactly one for this login" 1 "$(grep -c "delegate=yes refused on cgroup v1" "$SYSLOG")"
end agyes
check "close removed the session" test ! -e "$CPU$S"

if [ -f "$UNIFIED/cgroup.procs" ] && [ "$(stat -f -c %T "$UNIFIED")" = cgroup2fs ]; then
        # lib2 NAME ACTIONS...: a login of UA on the cgroup2 mount, open until $T/NAME.go
        lib2() {
                local n="$1"; shift
                "$AGDRV" --lib "$UNIFIED" "$V2ROOT" "$UA" "$@" open env cgroup wait-file "$T/$n.go" close \
                        >"$T/$n.out" 2>&1 &
                track_pid $!
                eval "PID_$n=$!"
                wait_for "$T/$n.out" '^cgroup='
        }
        echo "# v2 (cgroup2 at $UNIFIED), default: the user cannot move, freeze or kill the caller"
        lib2 v2def
        S=$(val AUTOGROUP_SESSION v2def); P=$PID_v2def; C="$UNIFIED$S"
        check_eq "the caller sits in login/" "$S/login" "$(val cgroup v2def)"
        check_eq "session directory, cgroup.threads, cgroup.subtree_control are root's, its cgroup.procs the user's (the leaves' common ancestor)" \
                "root $UA root root" \
                "$(owner "$C") $(owner "$C/cgroup.procs") $(owner "$C/cgroup.threads") $(owner "$C/cgroup.subtree_control")"
        # the attack: a leaf of the user's own, the caller into it, freeze it, kill it
        check_not "the user cannot make a leaf in the session" as_user "$UA" "mkdir $C/x"
        # v2 checks the common ancestor, not the process's owner: the caller
        # can be moved inside the session (on this mount, without cpu, even
        # into the session group itself), never out of it
        check_not "the user cannot move the caller out of the session" \
                as_user "$UA" "echo $P > $C/x/cgroup.procs || echo $P > ${C%/*}/cgroup.procs || echo $P > $UNIFIED/cgroup.procs"
        check_not "the user cannot freeze the caller" \
                as_user "$UA" "echo 1 > $C/x/cgroup.freeze || echo 1 > $C/login/cgroup.freeze || echo 1 > $C/cgroup.freeze"
        check_not "the user cannot kill the caller" \
                as_user "$UA" "echo 1 > $C/x/cgroup.kill || echo 1 > $C/login/cgroup.kill || echo 1 > $C/cgroup.kill"
        check_not "the user cannot move the caller's threads" as_user "$UA" "echo $P > $C/login/cgroup.threads"
        check "the caller is alive" kill -0 "$P"
        check_eq "and in login/, not frozen" "$S/login frozen 0" \
                "$(grep '^0::' "/proc/$P/cgroup" 2>/dev/null | cut -d: -f3) $(grep frozen "$C/login/cgroup.events" 2>/dev/null)"
        check "the user can move the caller into one of their leaves" as_user "$UA" "echo $P > $C/leaf-1/cgroup.procs"
        check_not "and still cannot freeze or kill it there" \
                as_user "$UA" "echo 1 > $C/leaf-1/cgroup.freeze || echo 1 > $C/leaf-1/cgroup.kill"
        check "the caller is alive" kill -0 "$P"
        touch "$T/v2def.go"; wait "$P"
        check "close succeeded and removed the session" sh -c "grep -q '^close=0' '$T/v2def.out' && test ! -e '$C'"

        echo "# v2, delegate=yes: the user's subtree, bounded by cgroup.max.descendants"
        lib2 v2yes delegate=yes
        S=$(val AUTOGROUP_SESSION v2yes); C="$UNIFIED$S"
        check_eq "session directory and cgroup.procs are the user's" "$UA $UA" "$(owner "$C") $(owner "$C/cgroup.procs")"
        check_eq "cgroup.max.descendants and cgroup.max.depth are root's, 128 and 8" "root root 128 8" \
                "$(owner "$C/cgroup.max.descendants") $(owner "$C/cgroup.max.depth") $(cat "$C/cgroup.max.descendants") $(cat "$C/cgroup.max.depth")"
        as_user "$UA" "i=0; while [ \$i -lt 200 ]; do mkdir $C/g\$i 2>/dev/null || break; i=\$((i + 1)); done; echo \$i" >"$T/v2many"
        check_eq "the user makes 127 groups besides login/, not one more" 127 "$(cat "$T/v2many")"
        check_not "the user cannot raise cgroup.max.descendants" as_user "$UA" "echo 100000 > $C/cgroup.max.descendants"
        as_user "$UA" "rmdir $C/g*"
        touch "$T/v2yes.go"; wait "$PID_v2yes"
        check "close removed the session" test ! -e "$C"
else
        skip "v2 checks (no cgroup2 mount at $UNIFIED)"
fi
finish
