#!/bin/bash
# The SSSD lane: @group rules resolved through SSSD's LDAP provider.
#
# The same throw-away slapd as the nslcd lane (tests/host/ldap-lib.sh), with
# its groups as the rfc2307bis schema has them (groupOfNames, members by DN,
# a group inside a group), and a private sssd (id_provider ldap,
# case_sensitive false, memory cache off, entries expired after 1 s) in a
# private mount namespace: its own sssd.conf, /var/lib/sss and /var/log/sssd
# bind-mounted there, and an nsswitch.conf that says "files sss". The module,
# the driver and the helper run in that namespace; the host's NSS, sssd.conf
# and caches are never used or changed.
#
# Checks: a member gets the group's rule and a non-member does not; a user in
# a group nested in the rule's group gets it; names typed in another case
# match the account's canonical name and groups; then the directory hangs
# (slapd stopped) and goes down (killed): SSSD answers from its cache, the
# rules still apply, and every login finishes (the times are printed, not
# asserted; each command runs under a liveness guard of $GUARD s).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/ldap-lib.sh"
require_root
require_v1_cpu
sssd_missing() {
        ldap_missing_server
        [ -x /usr/sbin/sssd ] || { echo "sssd not installed (package sssd-common)"; return; }
        ls /usr/lib/*/sssd/libsss_ldap.so >/dev/null 2>&1 || { echo "no LDAP provider (package sssd-ldap)"; return; }
        ls /lib/*/libnss_sss.so.2 /usr/lib/*/libnss_sss.so.2 >/dev/null 2>&1 ||
                { echo "libnss_sss.so.2 not installed (package libnss-sss)"; return; }
        # the fixed paths sssd and libnss_sss use, bound over in the namespace
        for d in /etc/sssd /var/lib/sss /var/log/sssd; do
                [ -d "$d" ] || { echo "no $d to bind over (package sssd-common)"; return; }
        done
}
why=$(sssd_missing | head -n1)
[ -z "$why" ] || skip_all "$why"
SSSD_PID=""
sssd_stop() {
        [ -n "$SSSD_PID" ] || return 0
        kill -TERM "$SSSD_PID" 2>/dev/null
        wait "$SSSD_PID" 2>/dev/null
        SSSD_PID=""
}
trap 'sssd_stop; ldap_cleanup; ag_cleanup' EXIT

ldap_lane
host_sssd() { find /etc/sssd /var/lib/sss /var/log/sssd -printf '%p %s %m\n' 2>/dev/null | sort | sha256sum; }
SSSD_BEFORE=$(host_sssd)
start_syslog || true

# Directory-only users and groups, unique per run: member, non-member, the
# member of a nested group, a user whose rule names them, a member of a
# group whose rule is typed in another case (stored in mixed case: SSSD,
# case-insensitive, gives them in lower case)
B=$((3000000 + ($$ % 100000) * 10))
DM="${TAG}dm"; DN="${TAG}dn"; DS="${TAG}ds"; DK="${TAG}Dk"; DG="${TAG}Dg"
IDM=$((B + 1)); IDN=$((B + 2)); IDS=$((B + 3)); IDK=$((B + 4)); IDG=$((B + 5))
GP="${TAG}pg"; GL="${TAG}lg"; GC="${TAG}cg"; GN="${TAG}ng"; GK="${TAG}Kg"
GIDP=$((B + 6)); GIDL=$((B + 7)); GIDC=$((B + 8)); GIDN=$((B + 9)); GIDK=$((B + 10))
dk=${DK,,}; dg=${DG,,}

echo "# 0. a throw-away directory and a private sssd"
mkdir -p "$LD"
if ! ldap_start_slapd; then not_ok "slapd started"; finish; fi
ok "slapd started on $LD_URI"
# group NAME GID MEMBER-DN...: rfc2307bis (groupOfNames; gidNumber through extensibleObject)
group() {
        printf 'dn: cn=%s,ou=groups,%s\nobjectClass: groupOfNames\nobjectClass: extensibleObject\n' "$1" "$LD_BASE"
        printf 'cn: %s\ngidNumber: %s\n' "$1" "$2"
        shift 2
        for m in "$@"; do printf 'member: %s\n' "$m"; done
        echo
}
user_dn() { echo "uid=$1,ou=people,$LD_BASE"; }
{
        ldap_tree
        for u in "$DM:$IDM" "$DN:$IDN" "$DS:$IDS" "$DK:$IDK" "$DG:$IDG"; do ldap_person "${u%%:*}" "${u#*:}" "$GIDP"; done
        group "$GP" "$GIDP" "$(user_dn "$DN")"
        group "$GL" "$GIDL" "$(user_dn "$DM")"
        group "$GC" "$GIDC" "$(user_dn "$DS")"
        group "$GN" "$GIDN" "cn=$GC,ou=groups,$LD_BASE"
        group "$GK" "$GIDK" "$(user_dn "$DG")"
} | ldap_add
check_eq "directory populated" 13 "$(ldapsearch -x -LLL -H "$LD_URI" -b "$LD_BASE" dn 2>/dev/null | grep -c '^dn:')"

mkdir -p "$LD/sssd-etc" "$LD/sssd-log" "$LD/sss"/{db,mc,pipes/private,pubconf,gpo_cache,secrets,deskprofile,keytabs}
chmod 700 "$LD/sss/db" "$LD/sss/secrets"; chmod 750 "$LD/sss/pipes/private" "$LD/sssd-log"
# Short timeouts, so that a hung directory costs seconds; entries expire
# after 1 s and the memory cache is off, so that every look-up during the
# outage goes to sssd, which finds the directory gone and answers from its cache.
cat >"$LD/sssd-etc/sssd.conf" <<CONF
# private to the pam_autogroup SSSD lane (bind-mounted in its namespace)
[sssd]
services = nss
domains = ag

[nss]
memcache_timeout = 0

[domain/ag]
id_provider = ldap
auth_provider = none
ldap_uri = $LD_URI
ldap_search_base = $LD_BASE
ldap_schema = rfc2307bis
ldap_group_object_class = groupOfNames
ldap_group_member = member
ldap_group_nesting_level = 2
ldap_id_use_start_tls = false
case_sensitive = false
entry_cache_timeout = 1
ldap_network_timeout = 2
ldap_opt_timeout = 2
ldap_search_timeout = 2
cache_credentials = false
CONF
chmod 600 "$LD/sssd-etc/sssd.conf"
ldap_private_syslog || true
if ! ldap_ns sss "" "$LD/sssd-etc:/etc/sssd" "$LD/sss:/var/lib/sss" "$LD/sssd-log:/var/log/sssd"; then
        not_ok "private mount namespace"; finish
fi
# -i: in the foreground (nsenter execs it, so $! is sssd's monitor, which
# stops its sssd_be and sssd_nss when it gets SIGTERM)
nsenter -t "$LD_HOLDER_PID" -m -- /usr/sbin/sssd -i --logger=stderr -d 2 >"$LD/sssd.log" 2>&1 &
SSSD_PID=$!
ld_track "$SSSD_PID"
for _ in $(seq 200); do
        inns getent passwd "$DM" >/dev/null 2>&1 && break
        kill -0 "$SSSD_PID" 2>/dev/null || break
        sleep 0.1
done
if ! inns getent passwd "$DM" >/dev/null 2>&1; then
        sed 's/^/#   sssd: /' "$LD/sssd.log" | tail -n 30
        not_ok "sssd started in a private mount namespace"; finish
fi
ok "sssd started in a private mount namespace"
check_eq "inside: a directory user resolves through sss" "$DM:*:$IDM:$GIDP" "$(inns getent passwd "$DM" | cut -d: -f1-4)"
check_eq "inside: a directory group resolves through sss" "$GL:*:$GIDL:$DM" "$(inns getent group "$GL")"
check "inside: the nested group's member is in the outer group" sh -c "nsenter -t $LD_HOLDER_PID -m -- id -nG $DS | grep -qw $GN"
check_eq "inside: a name typed in upper case gives the canonical (lower-case) one" "$dk:$IDK" \
        "$(inns getent passwd "${DK^^}" | cut -d: -f1,3)"
check_not "outside: the host does not know the directory user" getent passwd "$DM"
check_eq "outside: host nsswitch.conf unchanged" "$NSS_BEFORE" "$(sha256sum /etc/nsswitch.conf)"

CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
*               weight   100
@$GL            weight   300
@$GL            max      50%
@$GN            weight   250
$dk             weight   500
@${GK^^}        weight   600
CONF
chmod 644 "$CONF"
pam_other
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s\nsession required pam_permit.so\n' \
        "$AG_MODULE" "$ROOT" "$CONF" >"$T/agsssd"
GUARD=300
# login NAME USER UID: one login (typed as USER) under the liveness guard,
# timed; while it is open its user group's cpu.shares and cfs_quota_us are
# read into $U/NAME.v. RC: its exit status, ELAPSED: ms.
login() {
        local n="$1" u="$2" id="$3" t0 t1
        t0=$(date +%s%N)
        timeout -k 10 "$GUARD" nsenter -t "$LD_HOLDER_PID" -m -- "$AGDRV" --pam "$T" agsssd "$u" open cgroup \
                run-user "cat $CG/user-$id/cpu.shares $CG/user-$id/cpu.cfs_quota_us >$U/$n.v" close >"$T/$n.out" 2>&1
        RC=$?
        t1=$(date +%s%N)
        ELAPSED=$(( (t1 - t0) / 1000000 ))
}
shares() { sed -n 1p "$U/$1.v" 2>/dev/null; }
quota() { sed -n 2p "$U/$1.v" 2>/dev/null; }
# grouped NAME UID: the login opened, grouped under user-UID, and closed
grouped() {
        check "$1: opened and closed (PAM_SUCCESS)" sh -c "grep -q '^open=PAM_SUCCESS' $T/$1.out && grep -q '^close=PAM_SUCCESS' $T/$1.out"
        check "$1: grouped under user-$2" grep -q "^cgroup=/$ROOT/user-$2/[^/]*/login\$" "$T/$1.out"
}

echo "# 1. membership: an @group rule from the directory applies to a member, not to a non-member"
login member "$DM" "$IDM"; grouped member "$IDM"
check_eq "member: @$GL weight 300 -> cpu.shares 3072" 3072 "$(shares member)"
check_eq "member: @$GL max 50% -> cfs_quota_us 50000" 50000 "$(quota member)"
login nonmember "$DN" "$IDN"; grouped nonmember "$IDN"
check_eq "non-member: * weight 100 -> cpu.shares 1024" 1024 "$(shares nonmember)"
check_eq "non-member: no cap" -1 "$(quota nonmember)"

echo "# 2. a nested group: $DS is in $GC, which is a member of $GN"
login nested "$DS" "$IDS"; grouped nested "$IDS"
check_eq "nested: @$GN weight 250 -> cpu.shares 2560" 2560 "$(shares nested)"
inns "$HELPER" explain --conf "$CONF" "$DS" >"$T/ex-nested.out" 2>&1
check "explain: weight from @$GN" grep -qE "^weight +250 +from $CONF:4 " "$T/ex-nested.out"

echo "# 3. names in another case: the account's canonical name and groups"
login upper "${DK^^}" "$IDK"; grouped upper "$IDK"
check_eq "typed ${DK^^}: the rule naming $dk applies (cpu.shares 5120)" 5120 "$(shares upper)"
login mixed "$DG" "$IDG"; grouped mixed "$IDG"
check_eq "typed $DG, member of $GK: the rule @${GK^^} applies (cpu.shares 6144)" 6144 "$(shares mixed)"
inns "$HELPER" explain --conf "$CONF" "${DK^^}" >"$T/ex-upper.out" 2>&1
check "explain ${DK^^}: weight from the rule naming $dk" grep -qE "^weight +500 +from $CONF:5 " "$T/ex-upper.out"
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

# ---- the directory goes away; sssd runs on with what it cached
# down_checks hung|down
FIG=""
down_checks() {
        local w="$1"
        if [ "$w" = hung ]; then kill -STOP "$LD_SLAPD_PID"; else ldap_stop_slapd; fi
        sleep 1.5     # every cached entry expired: sssd must ask the directory first
        login "$w-member" "$DM" "$IDM"
        FIG="$FIG $w/member=${ELAPSED}ms"
        check "$w, member: the login finished (rc $RC; 124/137: stopped after ${GUARD} s)" test "$RC" != 124 -a "$RC" != 137
        grouped "$w-member" "$IDM"
        check_eq "$w, member: the rule still applies from the cache (cpu.shares 3072)" 3072 "$(shares "$w-member")"
        login "$w-nested" "$DS" "$IDS"
        FIG="$FIG $w/nested=${ELAPSED}ms"
        check "$w, nested: the login finished (rc $RC)" test "$RC" != 124 -a "$RC" != 137
        check_eq "$w, nested: the rule of the outer group still applies (cpu.shares 2560)" 2560 "$(shares "$w-nested")"
        login "$w-upper" "${DK^^}" "$IDK"
        check_eq "$w, typed ${DK^^}: still the canonical name's rule (cpu.shares 5120)" 5120 "$(shares "$w-upper")"
        check "$w: sssd still runs" kill -0 "$SSSD_PID"
}
echo "# 4. directory hung (slapd stopped with SIGSTOP: connections open, no answers)"
down_checks hung
OFFLINE=$(grep -m1 -iE "offline" "$LD/sssd.log")
echo "# sssd: ${OFFLINE:-(no line says offline)}"
check "hung: sssd says it went offline" test -n "$OFFLINE"
echo "# 5. directory down (slapd killed, connection refused)"
down_checks down
echo "# directory-down login times (sssd: ldap_network_timeout 2, ldap_opt_timeout 2, ldap_search_timeout 2):$FIG"

echo "# 6. the host is as it was"
sssd_stop
ldap_cleanup
check_eq "host nsswitch.conf unchanged" "$NSS_BEFORE" "$(sha256sum /etc/nsswitch.conf)"
check_eq "host /etc/sssd, /var/lib/sss, /var/log/sssd unchanged" "$SSSD_BEFORE" "$(host_sssd)"
check_eq "no process this test started is left (by PID), none in its namespace" "" "$(ldap_leftovers | sort -u | xargs)"
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"

finish
