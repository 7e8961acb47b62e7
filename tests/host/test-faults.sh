#!/bin/bash
# Faults, through the real module and real libpam. Every fault is made in a
# private mount namespace (unshare -m --propagation private): nothing is ever
# unmounted or remounted on the host. For each fault:
#   - the login outcome: "optional" opens, "strict"+"required" fails when no
#     group can be made;
#   - the documented log line;
#   - no hang: every login is bounded with timeout (exit 124/137 is a failure);
#   - no leftover once the fault clears: one normal open/close of the user
#     afterwards leaves the test root empty.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
require_v1_cpu
LOOPDRV="$abs_top_builddir/tests/host/loopdrv"

test_root agtest
UCG="$UNIFIED/$ROOT"
AG_CGROOTS="$CG $UCG"
hl_syslog_start || { not_ok "syslog capture started"; finish; }
MOUNTS_BEFORE=$(grep ' - cgroup' /proc/self/mountinfo)

new_user a; new_user d
write_conf "* weight 100"
pam_other
pam_service agf "root=$ROOT conf=$CONF debug"
CONTROL=required pam_service agfs "root=$ROOT conf=$CONF strict"
PFX="pam_autogroup\\(agf:session\\): "
SPFX="pam_autogroup\\(agfs:session\\): "

# fault NAME SETUP-SCRIPT [AGDRV-ARGS...]: in a namespace, run SETUP-SCRIPT and
# then (bounded) agdrv --pam with the args; output in $T/NAME.out, status in $T/NAME.rc
fault() {
        local name="$1" setup="$2"; shift 2
        nsrun "$setup"' || exit 125
                exec timeout -k 5 60 "$@"' "$AGDRV" --pam "$T" "$@" >"$T/$name.out" 2>&1
        echo $? >"$T/$name.rc"
}
BOUND=60; DRV_WRAP=(nsrun 'exec "$@"')  # drv (lib.sh): bounded, in the syslog namespace
no_hang() { check_not "$1: bounded (no hang)" grep -qE '^(124|137)$' "$T/$2.rc"; }
# cleared USER DESCRIPTION: after the fault, a normal login works and leaves the tree empty
cleared() {
        drv agf "$1" open cgroup close >"$T/clear.out" 2>&1
        check "$2: after the fault clears a login is grouped again" grep -q "^cgroup=/$ROOT/user-" "$T/clear.out"
        check_eq "$2: no leftover after the fault clears" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
        [ -z "$(ls -d "$CG"/user-* 2>/dev/null)" ] || echo "#   left: $(cd "$CG" && find . -mindepth 1 -type d | tr '\n' ' ')"
}

# ---------------------------------------------------------------------------
echo "# 1. cgroupfs not mounted"
NOFS='mount -t tmpfs none /sys/fs/cgroup'
fault nofs "$NOFS" agf "$UA" open cgroup close
no_hang "no cgroupfs" nofs
check "no cgroupfs: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/nofs.out"
check "no cgroupfs: close succeeds" grep -q '^close=PAM_SUCCESS' "$T/nofs.out"
hlog_has "no cgroupfs: logged" "${PFX}no cgroup filesystem is mounted, session not grouped"
fault nofss "$NOFS" agfs "$UA" open close
no_hang "no cgroupfs, strict" nofss
check "no cgroupfs: strict+required fails" grep -q '^open=PAM_SESSION_ERR' "$T/nofss.out"
cleared "$UA" "no cgroupfs"

echo "# 2. cpu controller missing (only cgroup2 without cpu is left)"
NOCPU="umount -l '$CPU'"
fault nocpu "$NOCPU" agf "$UA" open cgroup close
no_hang "no cpu controller" nocpu
check "no cpu controller: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/nocpu.out"
hlog_has "no cpu controller: logged" "${PFX}no cpu controller available \\(cgroup2 at $UNIFIED lacks cpu\\), session not grouped"
fault nocpus "$NOCPU" agfs "$UA" open close
check "no cpu controller: strict+required fails" grep -q '^open=PAM_SESSION_ERR' "$T/nocpus.out"
# v1 hierarchies without cpu, and no cgroup2 at all
fault nocpu1 "umount -l '$CPU' && umount -l '$UNIFIED'" agf "$UA" open cgroup close
no_hang "no cpu hierarchy, no cgroup2" nocpu1
check "no cpu hierarchy, no cgroup2: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/nocpu1.out"
hlog_has "no cpu hierarchy, no cgroup2: logged" "${PFX}no cgroup filesystem .*session not grouped"
cleared "$UA" "no cpu controller"

echo "# 3. the hierarchy refuses new groups"
# 3a. read-only (a read-only bind mount of the cpu hierarchy), no root group yet
rmdir "$CG" 2>/dev/null
RO="mount --bind '$CPU' '$CPU' && mount -o remount,bind,ro '$CPU'"
fault ro1 "$RO" agf "$UA" open cgroup close
no_hang "read-only hierarchy" ro1
check "read-only hierarchy: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/ro1.out"
check_eq "read-only hierarchy: caller stays where it was" "/" "$(val cgroup "$T/ro1.out")"
hlog_has "read-only hierarchy: logged" "${PFX}cannot create the root group for $UA below $CPU/$ROOT: Read-only file system, session not grouped"
fault ro1s "$RO" agfs "$UA" open close
check "read-only hierarchy: strict+required fails" grep -q '^open=PAM_SESSION_ERR' "$T/ro1s.out"
check "read-only hierarchy: host mount still read-write" test -w "$CPU/cgroup.procs" -a -n "$(grep " $CPU rw" /proc/self/mountinfo)"
cleared "$UA" "read-only hierarchy"
# 3b. read-only with the root group already there
check "root group exists for 3b" test -d "$CG"
fault ro2 "$RO" agf "$UA" open cgroup close
no_hang "read-only, root group present" ro2
check "read-only, root group present: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/ro2.out"
hlog_has "read-only, root group present: logged" "${PFX}cannot create the user group for $UA below $CPU/$ROOT: Read-only file system"
cleared "$UA" "read-only, root group present"
# 3c. the hierarchy turns read-only during a session: close cannot clean up
nsrun "mount --bind '$CPU' '$CPU' || exit 125
        timeout -k 5 60 '$AGDRV' --pam '$T' agf '$UA' open cgroup wait-file '$T/ro3.go' close cgroup >'$T/ro3.out' 2>&1 &
        p=\$!
        i=0; until grep -q '^cgroup=' '$T/ro3.out' 2>/dev/null || [ \$i -ge 1200 ]; do sleep 0.05; i=\$((i+1)); done
        mount -o remount,bind,ro '$CPU'
        touch '$T/ro3.go'
        wait \$p; echo \$? >'$T/ro3.rc'"
no_hang "read-only during a session" ro3
S3=$(val cgroup "$T/ro3.out")
check "read-only during a session: the session was opened" test -n "$S3" -a "$S3" != /
check "read-only during a session: close returns" grep -q '^close=PAM_SUCCESS' "$T/ro3.out"
hlog_has "read-only during a session: logged" "${PFX}cannot clean up $CPU/$ROOT/user-$IA/[^ ]*: Read-only file system"
check "read-only during a session: the session stayed (nothing could be removed)" test -d "$CPU${S3%/login}"
cleared "$UA" "read-only during a session"
# 3d. permission denied: a caller without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH
# (e.g. a daemon with a capability bounding set) cannot mkdir in the 0555 hierarchy root
rmdir "$CG" 2>/dev/null
NODAC='caps=-dac_override,-dac_read_search
        set -- setpriv --inh-caps=$caps --bounding-set=$caps "$@"'
fault eacces1 "$NODAC" agf "$UA" open cgroup close
no_hang "permission denied" eacces1
check "permission denied: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/eacces1.out"
hlog_has "permission denied: logged" "${PFX}cannot create the root group for $UA below $CPU/$ROOT: Permission denied, session not grouped"
fault eacces1s "$NODAC" agfs "$UA" open close
check "permission denied: strict+required fails" grep -q '^open=PAM_SESSION_ERR' "$T/eacces1s.out"
check "permission denied: nothing created" test ! -e "$CG"
cleared "$UA" "permission denied"
# 3e. the same with the root group present: the move into the user's login/ is refused
fault eacces2 "$NODAC" agf "$UA" open cgroup close
no_hang "permission denied, root group present" eacces2
check "permission denied, root group present: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/eacces2.out"
hlog_has "permission denied, root group present: logged" "${PFX}cannot [a-z ]+ for $UA below $CPU/$ROOT: Permission denied, session not grouped"
cleared "$UA" "permission denied, root group present"
# 3f. cgroup v2: cgroup.max.descendants (on the cgroup2 mount, which lacks cpu:
# the library directly, as tests/host/test-v2-unified.sh does)
if [ -f "$UNIFIED/cgroup.max.descendants" ]; then
        mkdir -p "$UCG"
        echo 0 >"$UCG/cgroup.max.descendants"
        timeout -k 5 60 "$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" open cgroup close >"$T/v2a.out" 2>&1
        check_not "v2 max.descendants 0: bounded" test $? -ge 124
        check "v2 max.descendants 0: open fails" grep -q '^open=Resource temporarily unavailable' "$T/v2a.out"
        check "v2 max.descendants 0: the step is named" grep -q 'create the user group: Resource temporarily unavailable' "$T/v2a.out"
        echo 1 >"$UCG/cgroup.max.descendants"
        timeout -k 5 60 "$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" open cgroup close >"$T/v2b.out" 2>&1
        check "v2 max.descendants 1: open fails at the session" grep -q 'create the session group: Resource temporarily unavailable' "$T/v2b.out"
        check_eq "v2 max.descendants 1: caller stays where it was" "" "$(grep "^cgroup=/$ROOT" "$T/v2b.out")"
        echo max >"$UCG/cgroup.max.descendants"
        timeout -k 5 60 "$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" open cgroup close >"$T/v2c.out" 2>&1
        check "v2: after the limit is lifted the open works" grep -q "^cgroup=/$ROOT/user-$IA/.*/login" "$T/v2c.out"
        check_eq "v2: no leftover after the fault clears" "" "$(ls -d "$UCG"/user-* 2>/dev/null)"
        rmdir "$UCG"
else
        skip "no cgroup2 mount at $UNIFIED"
fi

echo "# 4. rmdir returns EBUSY: processes left in the session"
drv agf "$UA" open cgroup \
        spawn-user "sleep 300 & echo \$! > $U/busy1.pid; wait" close >"$T/busy1.out" 2>&1
echo $? >"$T/busy1.rc"
no_hang "lingering process" busy1
wait_for "$U/busy1.pid" '^[0-9]+$'; P1=$(cat "$U/busy1.pid"); track_pid "$P1"
SB=$(val cgroup "$T/busy1.out"); SB=${SB%/login}
check "lingering process: close succeeds" grep -q '^close=PAM_SUCCESS' "$T/busy1.out"
check "lingering process: the session stays" test -d "$CPU$SB/login"
hlog_has "lingering process: logged" "${PFX}$CPU$SB still holds processes, left for a later sweep"
# a process the user moved into one of root's leaves: the session lives on,
# with its free leaves
drv agf "$UA" open cgroup \
        spawn-user "s=\$(sed -n 's/^[0-9]*:cpu://p' /proc/self/cgroup); s=\${s%/login}; echo \$\$ > $CPU\$s/leaf-1/cgroup.procs && echo \$\$ > $U/busy2.pid && exec sleep 300" \
        wait-file "$U/busy2.pid" close >"$T/busy2.out" 2>&1
echo $? >"$T/busy2.rc"
no_hang "process in a leaf" busy2
wait_for "$U/busy2.pid" '^[0-9]+$'; P2=$(cat "$U/busy2.pid"); track_pid "$P2"
SB2=$(val cgroup "$T/busy2.out"); SB2=${SB2%/login}
check "process in a leaf: it is there" grep -q "^$P2\$" "$CPU$SB2/leaf-1/cgroup.procs"
check "process in a leaf: close succeeds" grep -q '^close=PAM_SUCCESS' "$T/busy2.out"
check "process in a leaf: the session stays" test -d "$CPU$SB2/leaf-1"
check_eq "process in a leaf: close keeps every leaf, the free ones for later terminals" \
        "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6" \
        "$(find "$CPU$SB2" -mindepth 1 -maxdepth 1 -type d -name 'leaf-*' -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
# another login of the user meanwhile leaves both alone
drv agf "$UA" open close >"$T/busy3.out" 2>&1
check "a login meanwhile keeps the busy sessions" test -d "$CPU$SB/login" -a -d "$CPU$SB2/leaf-1"
kill "$P1" "$P2"
for _ in $(seq 200); do [ -z "$(cat "$CPU$SB/login/cgroup.procs" "$CPU$SB2/leaf-1/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.05; done
cleared "$UA" "EBUSY"

echo "# 5. the user is deleted from NSS between open and close"
drv agf "$UD" open cgroup wait-file "$T/del.go" close cgroup \
        >"$T/del.out" 2>&1 &
DP=$!; track_pid "$DP"
wait_for "$T/del.out" '^cgroup='
SD=$(val cgroup "$T/del.out"); SD=${SD%/login}
check "deleted user: session opened" test -n "$SD" -a -d "$CPU$SD"
userdel "$UD"
check_not "deleted user: gone from NSS" getent passwd "$UD"
touch "$T/del.go"; wait "$DP"; echo $? >"$T/del.rc"
no_hang "deleted user" del
check "deleted user: close succeeds" grep -q '^close=PAM_SUCCESS' "$T/del.out"
check "deleted user: session removed (the uid was kept with the session)" test ! -e "$CPU$SD"
check "deleted user: user group removed" test ! -e "$CG/user-$ID"
# deleted while a process of theirs lingers in the session: only gc can clear it
new_user e
drv agf "$UE" open cgroup \
        spawn-user "sleep 300 & echo \$! > $U/del2.pid; wait" close >"$T/del2.out" 2>&1
echo $? >"$T/del2.rc"
no_hang "deleted user with a lingering process" del2
wait_for "$U/del2.pid" '^[0-9]+$'; P3=$(cat "$U/del2.pid"); track_pid "$P3"
check "deleted user with a lingering process: session left" test -d "$CG/user-$IE"
userdel -f "$UE" >/dev/null 2>&1
kill "$P3"
for _ in $(seq 200); do [ -z "$(find "$CG/user-$IE" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break; sleep 0.05; done
if [ -x "$HELPER" ]; then
        timeout -k 5 60 "$HELPER" --root "$ROOT" gc >"$T/gc.out" 2>&1
        check "deleted user: autogroup gc succeeds" test $? -eq 0
        check_eq "deleted user: gc removed the orphaned groups" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
        timeout -k 5 60 "$HELPER" --root "$ROOT" gc >"$T/gc2.out" 2>&1
        check_eq "deleted user: a second gc finds nothing" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
else
        skip "autogroup gc: helper not built ($HELPER)"
        rm_cgroup_tree "$CG/user-$IE"
fi

echo "# 6. a caller with a SCHED_FIFO thread (CONFIG_RT_GROUP_SCHED: new groups get no RT budget)"
if [ ! -f "$CPU/cpu.rt_runtime_us" ]; then
        skip "no cpu.rt_runtime_us: kernel without RT group scheduling"
elif [ ! -x "$LOOPDRV" ]; then
        skip "$LOOPDRV not built"
else
        nsrun 'exec timeout -k 5 60 "$@"' "$LOOPDRV" --rt-thread --cgroup --pairs 1 "$T" agf "$UA" >"$T/rt.out" 2>&1
        echo $? >"$T/rt.rc"
        no_hang "SCHED_FIFO thread" rt
        check "SCHED_FIFO thread: it ran" grep -q '^rt-thread=started' "$T/rt.out"
        check "SCHED_FIFO thread: optional session opens" grep -q 'failed=0$' "$T/rt.out"
        check_not "SCHED_FIFO thread: the process stays where it is" grep -q "^cgroup=/$ROOT" "$T/rt.out"
        hlog_has "SCHED_FIFO thread: logged" "${PFX}cannot move the process into the login leaf \\(a real-time task, which stays where it is\\) for $UA"
        check_eq "SCHED_FIFO thread: nothing left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
        nsrun 'exec timeout -k 5 60 "$@"' "$LOOPDRV" --rt-thread --pairs 1 "$T" agfs "$UA" >"$T/rts.out" 2>&1
        check "SCHED_FIFO thread: strict+required fails" grep -q 'open: Cannot make/remove an entry for the specified session' "$T/rts.out"
        cleared "$UA" "SCHED_FIFO thread"
fi

echo "# 7. a login refused by required+strict leaves nothing behind (su and login do not close it)"
# A SCHED_FIFO caller: the groups are made, the move into login/ is refused
# (no RT budget in a new group), the open fails; the driver then ends
# without pam_close_session, as su and login do after a failed open.
if [ ! -f "$CPU/cpu.rt_runtime_us" ] || [ "$(cat "$CPU/cpu.rt_runtime_us")" -le 0 ] ||
   ! grep -qx '[0-9]*:cpu:/' /proc/self/cgroup; then
        skip "no RT budget here (kernel without RT group scheduling, or not in the root cpu group)"
else
        ACCTR=/sys/fs/cgroup/cpuacct/$ROOT
        AG_CGROOTS="$AG_CGROOTS $ACCTR"
        printf '* weight 100\n%s pool agpool%s\n' "$UA" "$$" >"$T/agpool.conf"; chmod 644 "$T/agpool.conf"
        CONTROL=required pam_service agfsp "root=$ROOT conf=$T/agpool.conf strict"
        for svc in agfs agfsp; do
                nsrun 'exec chrt -f 10 timeout -k 5 60 "$@"' "$AGDRV" --pam "$T" "$svc" "$UA" open cgroup >"$T/ref-$svc.out" 2>&1
                echo $? >"$T/ref-$svc.rc"
                no_hang "refused login ($svc)" "ref-$svc"
                check "refused login ($svc): strict+required fails" grep -q '^open=PAM_SESSION_ERR' "$T/ref-$svc.out"
                check_not "refused login ($svc): the caller stays where it was" grep -q "^cgroup=/$ROOT" "$T/ref-$svc.out"
                check_eq "refused login ($svc): no user group left" "" "$(ls -d "$CG"/user-* "$CG"/pool-*/user-* 2>/dev/null)"
                check_eq "refused login ($svc): no pool left" "" "$(ls -d "$CG"/pool-* 2>/dev/null)"
                check_eq "refused login ($svc): no cpuacct mirror left" "" "$(ls -d "$ACCTR"/*/ 2>/dev/null)"
        done
        hlog_has "refused login: logged" "${SPFX}cannot move the process into the login leaf \\(a real-time task, which stays where it is\\) for $UA"
        cleared "$UA" "refused login"
fi

check_eq "host cgroup mounts unchanged" "$MOUNTS_BEFORE" "$(grep ' - cgroup' /proc/self/mountinfo)"
finish
