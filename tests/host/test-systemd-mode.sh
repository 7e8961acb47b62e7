#!/bin/bash
# Host tests of the mode= option (lib/login/login-systemd.c, lib/systemd/systemd.c)
# on this machine, which does not run systemd: mode=auto must stay the plain
# cgroupfs mode, mode=cgroupfs must be exactly the old behaviour, mode=systemd
# must fail like any other "no group can be made" case (one log line,
# PAM_IGNORE, or PAM_SESSION_ERR with strict) and write nothing into cgroupfs.
# A private mount namespace with a tmpfs /run holding /run/systemd/system
# makes the host look booted with systemd (but with no D-Bus and a v1 cpu
# hierarchy). The systemd side itself is tested in the systemd guest
# (tests/systemd/).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu

test_root agtest
FAKE="$CPU/agtest-$$-user.slice"     # a logind-like layout for the helper check
AG_CGROOTS="$CG $FAKE"
start_syslog || true

new_user a
CONF="$T/autogroup.conf"
printf '*  weight  100\n%s  weight  300\n%s  max  150%%\n' "$UA" "$UA" >"$CONF"
chmod 644 "$CONF"
# probe NAME OPTIONS...: tells the module's PAM_IGNORE apart through the
# stack's result: PAM_IGNORE jumps over pam_deny (-> PAM_SUCCESS); anything
# else (PAM_SUCCESS included) runs into it (-> PAM_SESSION_ERR).
probe() {
        local n="$1"; shift
        printf 'session [ignore=1 default=ok] %s %s\nsession requisite pam_deny.so\nsession required pam_permit.so\n' \
                "$AG_MODULE" "$*" >"$T/$n"
}
pam_other
# in_fake_systemd CMD: run CMD where /run/systemd/system exists (private mount namespace)
in_fake_systemd() {
        unshare -m --propagation private sh -c "mount -t tmpfs -o mode=0755 agtest-run /run && mkdir -p /run/systemd/system && $*"
}
loglines() { grep -cE -- "$1" "$SYSLOG" 2>/dev/null || true; }

echo "# 0. this host"
if [ -e /run/systemd/system ]; then
        echo "# /run/systemd/system exists: this host runs systemd, sections 1-3 do not apply"
        HOST_SYSTEMD=1
else
        HOST_SYSTEMD=0
        ok "host does not run systemd (no /run/systemd/system)"
fi

if [ "$HOST_SYSTEMD" = 0 ]; then
echo "# 1. mode=auto (the default) and mode=cgroupfs: the plain cgroupfs mode"
pam_service agauto "root=$ROOT conf=$CONF debug"
pam_service agauto2 "root=$ROOT conf=$CONF mode=auto"
pam_service agcgfs "root=$ROOT conf=$CONF mode=cgroupfs"
for s in agauto agauto2 agcgfs; do
        drv "$s" "$UA" open env cgroup close >"$T/$s.out" 2>&1
        S=$(val AUTOGROUP_SESSION "$s")
        check "$s: open PAM_SUCCESS" grep -q '^open=PAM_SUCCESS' "$T/$s.out"
        check_eq "$s: caller in its login/ leaf below $ROOT" "/$ROOT/user-$IA/${S##*/}/login" "$(val cgroup "$s")"
        check "$s: close PAM_SUCCESS" grep -q '^close=PAM_SUCCESS' "$T/$s.out"
        check "$s: nothing left behind" test ! -e "$CG/user-$IA"
done
drv agcgfs "$UA" open run-user "cat $CG/user-$IA/cpu.shares > $U/shares" close >/dev/null 2>&1
check_eq "mode=cgroupfs applies the policy (weight 300 -> cpu.shares 3072)" 3072 "$(cat "$U/shares" 2>/dev/null)"
CONTROL=required pam_service agcgfs_strict "root=$ROOT conf=$CONF mode=cgroupfs strict"
drv agcgfs_strict "$UA" open close >"$T/cs.out" 2>&1
check "mode=cgroupfs strict: PAM_SUCCESS as before" grep -q '^open=PAM_SUCCESS' "$T/cs.out"
probe agprobe_cgfs "root=$ROOT conf=$CONF mode=cgroupfs"
drv agprobe_cgfs "$UA" open close >"$T/pc.out" 2>&1
check "probe: a module PAM_SUCCESS runs into pam_deny (the probe works)" grep -q '^open=PAM_SESSION_ERR' "$T/pc.out"
check_eq "no log line mentions systemd" 0 "$(loglines 'systemd')"

echo "# 2. mode=systemd without systemd: one log line, PAM_IGNORE, nothing written"
probe agsd "root=$ROOT conf=$CONF mode=systemd"
before=$(loglines 'does not run systemd')
drv agsd "$UA" open env cgroup close >"$T/sd.out" 2>&1
check "module returned PAM_IGNORE (stack PAM_SUCCESS through the probe)" grep -q '^open=PAM_SUCCESS' "$T/sd.out"
check_eq "caller not moved" "/" "$(val cgroup sd)"
check_eq "no AUTOGROUP_SESSION" "" "$(val AUTOGROUP_SESSION sd)"
check "no cgroup made" test ! -e "$CG/user-$IA"
log_has "the reason is logged" "mode=systemd, but this host does not run systemd .*session of $UA not grouped"
have_syslog && check_eq "exactly one log line for the open" 1 "$(( $(loglines 'does not run systemd') - before ))"
pam_service agsd_opt "root=$ROOT conf=$CONF mode=systemd"
drv agsd_opt "$UA" open close >"$T/sdo.out" 2>&1
check "optional mode=systemd: the login goes on" grep -q '^open=PAM_SUCCESS' "$T/sdo.out"
CONTROL=required pam_service agsd_strict "root=$ROOT conf=$CONF mode=systemd strict"
drv agsd_strict "$UA" open >"$T/sds.out" 2>&1
check "required + strict mode=systemd: PAM_SESSION_ERR" grep -q '^open=PAM_SESSION_ERR' "$T/sds.out"
check "still no cgroup made" test ! -e "$CG/user-$IA"

echo "# 3. an unknown mode is logged and falls back to auto (cgroupfs here)"
pam_service agbad "root=$ROOT conf=$CONF mode=launchd"
drv agbad "$UA" open cgroup close >"$T/bad.out" 2>&1
check "unknown mode: session opens" grep -q '^open=PAM_SUCCESS' "$T/bad.out"
check "unknown mode: grouped by cgroupfs (auto)" grep -q "^cgroup=/$ROOT/user-$IA/.*/login" "$T/bad.out"
log_has "unknown mode logged" "invalid mode 'launchd', using 'auto'"
pam_service agempty "root=$ROOT conf=$CONF mode="
drv agempty "$UA" open cgroup close >"$T/empty.out" 2>&1
log_has "empty mode logged" "invalid mode '', using 'auto'"
check "empty mode: grouped by cgroupfs" grep -q "^cgroup=/$ROOT/user-$IA/.*/login" "$T/empty.out"
fi

echo "# 4. booted with systemd (private /run), but cpu is cgroup v1 and there is no D-Bus"
in_fake_systemd "'$AGDRV' --pam '$T' agauto '$UA' open cgroup close" >"$T/fauto.out" 2>&1
check "auto on a v1 cpu hierarchy stays cgroupfs: grouped" grep -q "^cgroup=/$ROOT/user-$IA/.*/login" "$T/fauto.out"
check "and closed" grep -q '^close=PAM_SUCCESS' "$T/fauto.out"
probe agsd2 "root=$ROOT conf=$CONF mode=systemd"
before=$(loglines 'cannot set the properties of ')
in_fake_systemd "'$AGDRV' --pam '$T' agsd2 '$UA' open cgroup" >"$T/fsd.out" 2>&1
check "mode=systemd, no bus: module returned PAM_IGNORE" grep -q '^open=PAM_SUCCESS' "$T/fsd.out"
check_eq "caller not moved" "/" "$(val cgroup fsd)"
log_has "the D-Bus failure is logged with the values" "cannot set the properties of user-$IA.slice for $UA through systemd \\(CPUWeight=300 refused, CPUQuota=150% refused\\): "
have_syslog && check_eq "exactly one log line for the open" 1 "$(( $(loglines 'cannot set the properties of ') - before ))"
check "no cgroup made" test ! -e "$CG/user-$IA"
CONTROL=required pam_service agsd2_strict "root=$ROOT conf=$CONF mode=systemd strict"
in_fake_systemd "'$AGDRV' --pam '$T' agsd2_strict '$UA' open" >"$T/fsds.out" 2>&1
check "mode=systemd, no bus, strict: PAM_SESSION_ERR" grep -q '^open=PAM_SESSION_ERR' "$T/fsds.out"

echo "# 4b. pools: a pool rule in systemd mode gives one log line and a working login"
# A syslog capture of its own in a private mount namespace (tests/host/hardening-lib.sh),
# so that these checks run even while another test holds /dev/log.
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
PCONF="$T/pool.conf"
printf '%s  pool  physics\npool:physics  weight  300\n' "$UA" >"$PCONF"
chmod 644 "$PCONF"
probe agsdpool "root=$ROOT conf=$PCONF mode=systemd"
pam_service agcgpool "root=$ROOT conf=$PCONF mode=cgroupfs"
if hl_syslog_start; then
        poollines() { grep -c 'pam_autogroup(agsdpool:session): systemd mode: pool physics of ' "$SYSLOG"; }
        nsrun 'mount -t tmpfs -o mode=0755 agtest-run /run && mkdir -p /run/systemd/system && exec "$@"' \
                "$AGDRV" --pam "$T" agsdpool "$UA" open cgroup close >"$T/fpool.out" 2>&1
        check "pool in systemd mode: the login goes on (PAM_IGNORE)" grep -q '^open=PAM_SUCCESS' "$T/fpool.out"
        check "pool in systemd mode: close too" grep -q '^close=PAM_SUCCESS' "$T/fpool.out"
        hlog_has "the pool is reported as not applied, at info level" \
                "^<86>.*systemd mode: pool physics of $UA not applied \\(systemd cannot put user slices below a pool slice\\); the user's own policy applies"
        check_eq "exactly one log line about the pool" 1 "$(poollines)"
        check "no pool group made in cgroupfs" test ! -e "$CG/pool-physics"
        nsrun 'exec "$@"' "$AGDRV" --pam "$T" agcgpool "$UA" open cgroup close >"$T/cgpool.out" 2>&1
        check "the same rule in cgroupfs mode: the pool level" grep -q "^cgroup=/$ROOT/pool-physics/user-$IA/.*/login\$" "$T/cgpool.out"
        hlog_hasnt "and no systemd pool line for it" "agcgpool:session\\): systemd mode: pool"
else
        not_ok "syslog capture for the pool checks"
fi

echo "# 5. close in systemd mode touches no cgroupfs; cgroupfs mode sweeps"
mkdir -p "$CG/user-$IA/s999999"   # an empty leftover, as a crashed login leaves it
pam_service agsd3 "root=$ROOT conf=$CONF mode=systemd debug"
in_fake_systemd "'$AGDRV' --pam '$T' agsd3 '$UA' close" >"$T/fclose.out" 2>&1
check "systemd-mode close: PAM_IGNORE is not a failure" grep -q '^close=PAM_SUCCESS' "$T/fclose.out"
check "systemd-mode close left the cgroupfs tree alone" test -d "$CG/user-$IA/s999999"
log_has "a login without a logind session is pointed out" "this login had no logind session"
drv agcgfs "$UA" close >/dev/null 2>&1
check "cgroupfs-mode close swept the leftover" test ! -e "$CG/user-$IA"

echo "# 6. the helper under a logind-like layout (root-owned, undelegated session scope)"
SCOPE="$FAKE/user-$IA.slice/session-1.scope"
mkdir -p "$SCOPE"
cat >"$U/enter.sh" <<EOS
# with AUTOGROUP_MODE=systemd, as a systemd-mode login has it: cgroup v1 here, so no scope either
AUTOGROUP_MODE=systemd "$HELPER" enter >"$U/enter.out" 2>"$U/enter.err"; echo \$? >"$U/enter.rc"
grep ':cpu:' /proc/self/cgroup >"$U/enter.cg"
EOS
chmod 755 "$U/enter.sh"
sh -c "echo \$\$ >'$SCOPE/cgroup.procs' && exec setsid -w setpriv --reuid='$UA' --regid='$(id -g "$UA")' --init-groups sh '$U/enter.sh'"
check_eq "autogroup enter exits 0" 0 "$(cat "$U/enter.rc" 2>/dev/null)"
check_eq "and prints nothing" "" "$(cat "$U/enter.out" "$U/enter.err" 2>/dev/null)"
check "the shell stays in its session scope" grep -q "/agtest-$$-user.slice/user-$IA.slice/session-1.scope\$" "$U/enter.cg"
check_eq "nothing created in the scope" "" "$(find "$SCOPE" -mindepth 1 -type d)"
check "host cpu hierarchy untouched" test -f "$CPU/cpu.shares"
finish
