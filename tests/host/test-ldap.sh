#!/bin/bash
# The directory lane: @group rules resolved from a real LDAP directory.
#
# A throw-away slapd on 127.0.0.1 (free port, scratch database) and a private
# nslcd (libnss-ldapd's daemon), with the module, the driver and the helper
# run in a private mount namespace whose /etc/nsswitch.conf says
# "passwd: files ldap" / "group: files ldap" (tests/host/ldap-lib.sh). The
# users and groups below exist only in the directory; the host never sees
# them. Then the directory goes down (slapd hung, then killed, while nslcd
# runs): logins of a local and of a directory user must finish in bounded
# time, with one log line, and the stack goes on. The times are printed (the
# doc/config.md states the bound); they are not asserted. Every command of the
# outage runs under a liveness guard instead (timeout $GUARD s, far above any
# bound): a hung look-up fails its check rather than stalling make check.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/ldap-lib.sh"
require_root
require_v1_cpu
why=$(ldap_missing)
[ -z "$why" ] || skip_all "$why"
trap 'ldap_cleanup; ag_cleanup' EXIT

ldap_lane
start_syslog || true

# Directory-only users and groups: uids/gids far above any local range, unique per run
B=$((3000000 + ($$ % 100000) * 10))
DM="${TAG}dm"; DN="${TAG}dn"; DI="${TAG}di"          # member, non-member, idle-group member
GP="${TAG}pg"; GL="${TAG}lg"; GI="${TAG}li"           # primary, "login" group, idle group
IDM=$((B + 1)); IDN=$((B + 2)); IDI=$((B + 3))
GIDP=$((B + 5)); GIDL=$((B + 6)); GIDI=$((B + 7))
# a local user who is a member of a directory group
add_user "${TAG}lu"
LU="${TAG}lu"; ILU=$(id -u "$LU")

echo "# 0. a throw-away directory and a private nslcd"
if ! ldap_start_slapd; then not_ok "slapd started"; finish; fi
ok "slapd started on $LD_URI"
group() { # group NAME GID MEMBER...
        printf 'dn: cn=%s,ou=groups,%s\nobjectClass: posixGroup\ncn: %s\ngidNumber: %s\n' "$1" "$LD_BASE" "$1" "$2"
        shift 2
        for m in "$@"; do printf 'memberUid: %s\n' "$m"; done
        echo
}
{
        ldap_tree
        ldap_person "$DM" "$IDM" "$GIDP"; ldap_person "$DN" "$IDN" "$GIDP"; ldap_person "$DI" "$IDI" "$GIDP"
        group "$GP" "$GIDP"
        group "$GL" "$GIDL" "$DM" "$LU"
        group "$GI" "$GIDI" "$DI"
} | ldap_add
check "directory populated" test "$(ldapsearch -x -LLL -H "$LD_URI" -b "$LD_BASE" dn 2>/dev/null | grep -c '^dn:')" = 9
# Short timeouts so that a dead directory costs seconds, not minutes; the
# The figures of doc/config.md come from these settings.
# (AG_LDAP_NSLCD_DEFAULTS=1 measures with nslcd's defaults instead: minutes.)
NSLCD_OPTS=("bind_timelimit 2" "timelimit 2" "reconnect_sleeptime 1" "reconnect_retrytime 3")
[ -z "${AG_LDAP_NSLCD_DEFAULTS:-}" ] || NSLCD_OPTS=("# nslcd defaults")
mkdir -p "$LD"
ldap_private_syslog || true
if ! ldap_start_ns "${NSLCD_OPTS[@]}"; then not_ok "nslcd started in a private mount namespace"; finish; fi
ok "nslcd started in a private mount namespace"
check_eq "inside: a directory user resolves" "$DM:*:$IDM:$GIDP" "$(inns getent passwd "$DM" | cut -d: -f1-4)"
check_eq "inside: a directory group resolves" "$GL:*:$GIDL:$DM,$LU" "$(inns getent group "$GL" | sed "s/:$LU,$DM\$/:$DM,$LU/")"
check "inside: the local user is in the directory group" sh -c "nsenter -t $LD_HOLDER_PID -m -- id -nG $LU | grep -qw $GL"
check_not "outside: the host does not know the directory user" getent passwd "$DM"
check_not "outside: the host does not know the directory group" getent group "$GL"
check_eq "outside: host nsswitch.conf unchanged" "$NSS_BEFORE" "$(sha256sum /etc/nsswitch.conf)"

CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
*               weight   100
@$GL            weight   300
@$GL            max      50%
@$GI            sessions no
@$GI            idle     yes
@$GI            weight   20
# groups that exist nowhere: every login asks about them first (they are the
# later lines), so a dead directory is asked several times per login
@${TAG}x1       weight   7
@${TAG}x2       weight   8
@${TAG}x3       weight   9
CONF
chmod 644 "$CONF"
pam_other
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s\nsession required pam_permit.so\n' \
        "$AG_MODULE" "$ROOT" "$CONF" >"$T/agldap"
SVC=agldap; DRV_WRAP=(inns)     # drv and bg (lib.sh): agdrv in the namespace of nslcd
# guarded COMMAND...: the command in the namespace under the liveness guard;
# 124 (or 137 after -k) when the guard had to stop it
GUARD=300
guarded() { timeout -k 10 "$GUARD" nsenter -t "$LD_HOLDER_PID" -m -- "$@"; }
# finished DESCRIPTION RC: the command returned by itself, the guard did not stop it
finished() { check "$1 (rc $2; 124/137: stopped after ${GUARD} s)" test "$2" != 124 -a "$2" != 137; }
# login NAME USER: open, read the user group's cpu.* files as root while open, close
login() {
        local n="$1" u="$2"
        drv "$u" open env cgroup run-user "true" close >"$T/$n.out" 2>&1 &
        wait $!
}
# a session of USER kept open until $T/NAME.go exists; prints nothing
cg() { cat "$CPU/$ROOT/user-$1/$2" 2>/dev/null; }

echo "# 1. an @group rule from the directory applies to a member, not to a non-member"
bg m "$DM"
bg n "$DN"
bg l "$LU"
check "member: session opened" grep -q '^open=PAM_SUCCESS' "$T/m.out"
check "member: caller in its login/ leaf" grep -q "^cgroup=/$ROOT/user-$IDM/[^/]*/login\$" "$T/m.out"
check_eq "member: @$GL weight 300 -> cpu.shares 3072" 3072 "$(cg "$IDM" cpu.shares)"
check_eq "member: @$GL max 50% -> cfs_quota_us 50000" 50000 "$(cg "$IDM" cpu.cfs_quota_us)"
check_eq "member: user group owned by root" root "$(stat -c %U "$CPU/$ROOT/user-$IDM")"
S_M=$(val AUTOGROUP_SESSION m)
check_eq "member: the session root's, its leaves' cgroup.procs the directory uid's" "0 $IDM" \
        "$(stat -c %u "$CPU$S_M" 2>/dev/null) $(stat -c %u "$CPU$S_M/leaf-1/cgroup.procs" 2>/dev/null)"
check "non-member: session opened" grep -q '^open=PAM_SUCCESS' "$T/n.out"
check_eq "non-member: * weight 100 -> cpu.shares 1024" 1024 "$(cg "$IDN" cpu.shares)"
check_eq "non-member: no cap" -1 "$(cg "$IDN" cpu.cfs_quota_us)"
check_eq "local user in a directory group: cpu.shares 3072" 3072 "$(cg "$ILU" cpu.shares)"
check_eq "local user in a directory group: cfs_quota_us 50000" 50000 "$(cg "$ILU" cpu.cfs_quota_us)"

echo "# 2. explain agrees (the helper run in the same namespace)"
inns "$HELPER" explain --conf "$CONF" "$DM" >"$T/ex-m.out" 2>&1
check "explain member: weight from @$GL" grep -qE "^weight +300 +from $CONF:2 \(rule text: @$GL +weight +300\)" "$T/ex-m.out"
check "explain member: max from @$GL" grep -qE "^max +50% +from $CONF:3 " "$T/ex-m.out"
check "explain member: the directory groups listed" grep -qE "groups: .*\b$GL\b" "$T/ex-m.out"
check "explain member: the values the module wrote" grep -qx "cgroup v1: cpu.shares=$(cg "$IDM" cpu.shares) cpu.cfs_quota_us=$(cg "$IDM" cpu.cfs_quota_us) cpu.cfs_period_us=100000 cpu.idle=0" "$T/ex-m.out"
inns "$HELPER" explain --conf "$CONF" "$DN" >"$T/ex-n.out" 2>&1
check "explain non-member: weight from *" grep -qE "^weight +100 +from $CONF:1 " "$T/ex-n.out"
check "explain non-member: the values the module wrote" grep -qx "cgroup v1: cpu.shares=$(cg "$IDN" cpu.shares) cpu.cfs_quota_us=$(cg "$IDN" cpu.cfs_quota_us) cpu.cfs_period_us=100000 cpu.idle=0" "$T/ex-n.out"
check_not "explain outside the namespace: the user is unknown" "$HELPER" explain --conf "$CONF" "$DM"

echo "# 3. sessions, idle and weight from a directory group"
bg i "$DI"
check "idle-group member: session opened" grep -q '^open=PAM_SUCCESS' "$T/i.out"
check_eq "sessions no -> caller in user-<uid>" "/$ROOT/user-$IDI" "$(val cgroup i)"
check_eq "idle yes -> cpu.idle 1" 1 "$(cg "$IDI" cpu.idle)"
# (with cpu.idle 1 the kernel itself reports the idle weight, 3 shares)
check_eq "idle group: cpu.shares is the kernel's idle weight" 3 "$(cg "$IDI" cpu.shares)"
inns "$HELPER" explain --conf "$CONF" "$DI" >"$T/ex-i.out" 2>&1
check "explain: weight 20 from @$GI" grep -qE "^weight +20 +from $CONF:6 " "$T/ex-i.out"
check "explain: sessions from @$GI" grep -qE "^sessions +no +from $CONF:4 " "$T/ex-i.out"
check "explain: idle from @$GI" grep -qE "^idle +yes +from $CONF:5 " "$T/ex-i.out"

echo "# 4. cleanup at close"
touch "$T/m.go" "$T/n.go" "$T/l.go" "$T/i.go"
wait "$PID_m" "$PID_n" "$PID_l" "$PID_i" 2>/dev/null
for n in m n l i; do
        check "$n: close returned PAM_SUCCESS" grep -q '^close=PAM_SUCCESS' "$T/$n.out"
done
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

# ---- the directory goes down, nslcd stays up
# down_login NAME USER: one timed login under the liveness guard (its exit
# status in RC); prints the time and counts the module's log lines and the
# group and user look-ups nslcd was asked for
down_login() {
        local n="$1" u="$2" t0 t1 l0 o0
        l0=$(wc -l <"$SYSLOG")
        o0=$(stat -c %s "$LD/nslcd.log")
        t0=$(date +%s%N)
        guarded "$AGDRV" --pam "$T" agldap "$u" open cgroup close >"$T/$n.out" 2>&1
        RC=$?
        t1=$(date +%s%N)
        sleep 0.2
        ELAPSED=$(( (t1 - t0) / 1000000 ))
        # the module's lines for this login, but for the close line that every
        # grouped session gets (CPU accounting: not a complaint)
        LINES=$(tail -n +"$((l0 + 1))" "$SYSLOG" | grep 'pam_autogroup(agldap:' |
                grep -cvE ': session /[^ ]+ (closed|lingering|removed): user=[^ ]+ scope=(session|user) cpu_usec=')
        tail -n +"$((l0 + 1))" "$SYSLOG" | grep 'pam_autogroup' | sed 's/^/#   log: /'
        # one request = one id in brackets; group-by-name requests are tagged
        # <group="NAME">, user-by-name ones <passwd="NAME">
        tail -c +"$((o0 + 1))" "$LD/nslcd.log" >"$T/$n.nslcd"
        GROUPQ=$(grep -ao '^nslcd: \[[0-9a-f]*\] <group="' "$T/$n.nslcd" | sort -u | wc -l)
        USERQ=$(grep -ao "^nslcd: \[[0-9a-f]*\] <passwd=\"$u\">" "$T/$n.nslcd" | sort -u | wc -l)
        echo "# $n: login of $u took $ELAPSED ms (rc $RC), $LINES module log line(s)," \
                "$GROUPQ group and $USERQ user look-up(s) sent to nslcd"
}
# outage hung|down: the directory stops answering (SIGSTOP: connections
# accepted, nothing answered) or goes away (slapd killed: refused)
outage() { if [ "$1" = hung ]; then kill -STOP "$LD_SLAPD_PID"; else ldap_stop_slapd; fi; }
# recover hung|down: the directory back, and nslcd using it again
recover() {
        if [ "$1" = hung ]; then kill -CONT "$LD_SLAPD_PID"; else ldap_start_slapd; fi
        for _ in $(seq 200); do guarded getent group "$GL" >/dev/null 2>&1 && return 0; sleep 0.1; done
        return 1
}
# down_checks hung|down: a login of a local and of a directory user, each
# in a fresh outage (the first look-up after the directory goes is the slow one)
down_checks() {
        local w="$1"
        outage "$w"
        down_login "$w-local" "$LU"
        FIG="$FIG $w/local=${ELAPSED}ms"
        finished "$w, local user: the login finished" "$RC"
        check "$w, local user: the stack goes on (PAM_SUCCESS)" grep -q '^open=PAM_SUCCESS' "$T/$w-local.out"
        check "$w, local user: still grouped" grep -q "^cgroup=/$ROOT/user-$ILU/" "$T/$w-local.out"
        if ldap_have_log; then
                check_eq "$w, local user: one log line" 1 "$LINES"
        else
                skip "$w, local user: one log line (no syslog capture)"
        fi
        # exactly one: none would mean the look-up never reached nslcd (or
        # its log no longer reads as this counts it)
        check_eq "$w, local user: nslcd asked about one group, not one per rule" 1 "$GROUPQ"
        # (a second, untimed login: run-user's initgroups() would ask the directory too)
        guarded "$AGDRV" --pam "$T" agldap "$LU" open run-user "cat $CPU/$ROOT/user-$ILU/cpu.shares >$U/$w.shares" \
                close >/dev/null 2>&1
        finished "$w, local user: the second login finished" "$?"
        check_eq "$w, local user: the directory group's rule cannot apply (cpu.shares 1024)" 1024 "$(cat "$U/$w.shares" 2>/dev/null)"
        # explain decides as the module: the failed look-up is an outage
        # (getgrnam_r's ENOENT included), not "no such group", and it stops there
        guarded "$HELPER" explain --conf "$CONF" "$LU" >"$T/ex-$w.out" 2>&1
        finished "$w, explain finished" "$?"
        check "$w, explain: names the failed group look-up, as the module logs it" \
                grep -qE "^cannot look up group ${TAG}x3 \(.*\): @group rules not applied" "$T/ex-$w.out"
        check "$w, explain: weight from * (the directory group's rule not applied)" \
                grep -qE "^weight +100 +from $CONF:1 " "$T/ex-$w.out"
        check "$w: directory back" recover "$w"
        outage "$w"
        down_login "$w-dir" "$DM"
        FIG="$FIG $w/directory=${ELAPSED}ms"
        finished "$w, directory user: the login finished" "$RC"
        check "$w, directory user: the stack goes on (PAM_SUCCESS)" grep -q '^open=PAM_SUCCESS' "$T/$w-dir.out"
        check "$w, directory user: not grouped" test ! -e "$CPU/$ROOT/user-$IDM"
        if ldap_have_log; then
                check_eq "$w, directory user: one log line" 1 "$LINES"
        else
                skip "$w, directory user: one log line (no syslog capture)"
        fi
        # the driver's own look-up (as sshd and su do one) and the module's at
        # open; the close of a login that open could not group does not ask again
        check_eq "$w, directory user: asked about twice (driver, module's open), not again at close" 2 "$USERQ"
        check "$w, nslcd still runs" kill -0 "$LD_NSLCD_PID"
        check "$w: directory back" recover "$w"
}
# nslcd again, now logging each request (to count the group look-ups)
ldap_stop_nslcd
NSLCD_DEBUG=1 ldap_start_nslcd || not_ok "nslcd restarted with request logging"
FIG=""

echo "# 5. directory hung (slapd stopped with SIGSTOP: connections open, no answers)"
down_checks hung

echo "# 6. directory down (slapd killed, connection refused)"
down_checks down
echo "# directory-down login times (nslcd: ${NSLCD_OPTS[*]}):$FIG"

echo "# 7. the host is as it was"
ldap_cleanup
check_eq "host nsswitch.conf unchanged" "$NSS_BEFORE" "$(sha256sum /etc/nsswitch.conf)"
check_eq "no process this test started is left (by PID), none in its namespace" "" "$(ldap_leftovers | sort -u | xargs)"
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

finish
