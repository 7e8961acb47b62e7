#!/bin/bash
# shellcheck disable=SC2154  # PID_<name> are set with eval by bg/spin
# Pools on cgroup v2, INSIDE the guest that tests/vm/test-guest.sh
# boots (same boot as tests/guest/test-v2.sh): pure cgroup2 with cpu at the
# root, the host's build read-only. Through real libpam (agdrv --pam):
# <root>/pool-<name>/user-<uid>/<session>/login with cpu.weight/cpu.max of
# the pool and user groups, cpu in the pool's cgroup.subtree_control,
# ownership, attacks as the user, a pool change between logins with a
# session lingering in the old pool, cleanup, and a short CPU-share check.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_guest_v2

test_root agpool "$CG2"
start_syslog || true
PA="$CG/pool-alpha"; PB="$CG/pool-beta"

add_group "${TAG}g"
new_user a "${TAG}g"; new_user b "${TAG}g"; new_user c
conf() { # conf FILE POOL-OF-A: alpha = @g (users a, b), beta = c
        conf_file "$1" "@${TAG}g pool alpha" "$UC pool beta" "$UA pool $2" "$UB weight 200" \
                "pool:alpha weight 300" "pool:beta weight 100" "pool:beta max 150%"
}
conf "$T/c1.conf" alpha
conf "$T/c2.conf" beta
pam_other
# section 6: equal user weights, the one-user pool the heavier one, so that
# pools and flat per-user groups give clearly different shares
cat >"$T/c3.conf" <<CONF
@${TAG}g        pool     alpha
$UC             pool     beta
pool:alpha      weight   100
pool:beta       weight   300
CONF
chmod 644 "$T/c3.conf"
for i in 1 2 3; do
        pam_service agp$i "root=$ROOT conf=$T/c$i.conf delegate=yes"
done
BG_SVC=agp1                     # bg's sessions (lib.sh): pool member service agp1
section() { echo "# $* (uptime $(cut -d' ' -f1 /proc/uptime) s)"; }

section "1. pools on cgroup v2: <root>/pool-<name>/user-<uid>/<session>/login"
bg a1 "$UA" spawn-user "sleep 300 & echo \$! > $U/a1.sleep; wait"
bg b1 "$UB"
bg c1 "$UC"
wait_for "$U/a1.sleep" '^[0-9]+$'; SLEEPER=$(cat "$U/a1.sleep"); track_pid "$SLEEPER"
SA=$(val AUTOGROUP_SESSION a1); SB=$(val AUTOGROUP_SESSION b1); SC=$(val AUTOGROUP_SESSION c1)
check_eq "all three sessions opened" "" "$(grep -L '^open=PAM_SUCCESS' "$T/a1.out" "$T/b1.out" "$T/c1.out")"
check_eq "a and b in pool alpha, c in pool beta" \
        "/$ROOT/pool-alpha/user-$IA /$ROOT/pool-alpha/user-$IB /$ROOT/pool-beta/user-$IC" \
        "$(dirname "$SA") $(dirname "$SB") $(dirname "$SC")"
check_eq "the user's child is in the v2 login/ leaf below the pool" "0::$SA/login" "$(cat "/proc/$SLEEPER/cgroup" 2>/dev/null)"
check "cpu enabled in <root> cgroup.subtree_control" grep -qw cpu "$CG/cgroup.subtree_control"
check "cpu enabled in pool-alpha cgroup.subtree_control" grep -qw cpu "$PA/cgroup.subtree_control"
check "cpu enabled in pool-beta cgroup.subtree_control" grep -qw cpu "$PB/cgroup.subtree_control"
check "cpu enabled in the user group in a pool" grep -qw cpu "$PA/user-$IA/cgroup.subtree_control"
check "login/ below a pool has the cpu controller" test -f "$CG2$SA/login/cpu.weight"
check_eq "the pools hold no processes" "" "$(cat "$PA/cgroup.procs" "$PB/cgroup.procs")"

section "2. cpu.weight and cpu.max of pool and user groups"
check_eq "pool alpha cpu.weight 300" 300 "$(cat "$PA/cpu.weight")"
check_eq "pool beta cpu.weight 100" 100 "$(cat "$PB/cpu.weight")"
check_eq "pool alpha cpu.max unlimited" "max 100000" "$(cat "$PA/cpu.max")"
check_eq "pool beta max 150% -> cpu.max" "150000 100000" "$(cat "$PB/cpu.max")"
check_eq "user a in alpha cpu.weight 100" 100 "$(cat "$PA/user-$IA/cpu.weight")"
check_eq "user b in alpha cpu.weight 200" 200 "$(cat "$PA/user-$IB/cpu.weight")"
check_eq "user c in beta: its own values, not the pool's" "100 max 100000" \
        "$(cat "$PB/user-$IC/cpu.weight") $(cat "$PB/user-$IC/cpu.max")"

section "3. ownership"
for p in "$PA" "$PB"; do
        n=$(basename "$p")
        check_eq "$n owned by root" root "$(owner "$p")"
        for f in cgroup.procs cgroup.threads cgroup.subtree_control cpu.weight cpu.max; do
                check_eq "$n/$f owned by root" root "$(owner "$p/$f")"
        done
done
check_eq "user group below a pool owned by root" root "$(owner "$PA/user-$IA")"
check_eq "session below a pool owned by the user" "$UA" "$(owner "$CG2$SA")"
check_eq "session cpu.weight stays root's" root "$(owner "$CG2$SA/cpu.weight")"

section "4. attacks as the user (one shell: execs are slow under emulation)"
attack "user cannot write the pool's cpu.weight" "echo 10000 > $PA/cpu.weight"
attack "user cannot lift the other pool's cap" "echo max > $PB/cpu.max"
attack "user cannot write the pool's cgroup.subtree_control" "echo -cpu > $PA/cgroup.subtree_control"
attack "user cannot write the own user group's cpu.weight" "echo 10000 > $PA/user-$IA/cpu.weight"
attack "user cannot chmod the pool's cpu.weight" "chmod 666 $PA/cpu.weight"
attack "user cannot move a session process into the pool" "echo $SLEEPER > $PA/cgroup.procs"
attack "user cannot move a session process into the own user group" "echo $SLEEPER > $PA/user-$IA/cgroup.procs"
attack "user cannot move a session process into another user's session in the pool" "echo $SLEEPER > $CG2$SB/login/cgroup.procs"
attack "user cannot move a session process into the other pool" "echo $SLEEPER > $CG2$SC/login/cgroup.procs"
attack "user cannot move a session process into <root>" "echo $SLEEPER > $CG/cgroup.procs"
attack "user cannot make groups in the pool" "mkdir $PA/x"
attack "user cannot make a pool" "mkdir $CG/pool-mine"
run_attacks "$UA"
attack "user c cannot lift the own pool's cap" "echo max > $PB/cpu.max"
attack "user c cannot raise the own pool's weight" "echo 10000 > $PB/cpu.weight"
run_attacks "$UC"
check_eq "after the attacks the pools' values are unchanged" "300 100 150000 100000" \
        "$(cat "$PA/cpu.weight") $(cat "$PB/cpu.weight") $(cat "$PB/cpu.max")"
check_eq "and the process still in login/" "0::$SA/login" "$(cat "/proc/$SLEEPER/cgroup")"

section "5. close; a pool change between logins with a session lingering in the old pool"
touch "$T/b1.go" "$T/c1.go"; wait "$PID_b1" "$PID_c1" 2>/dev/null
check "b's groups removed, pool alpha stays for a" test ! -e "$PA/user-$IB" -a -d "$PA"
check "the last close in pool beta removed the pool" test ! -e "$PB"
touch "$T/a1.go"; wait "$PID_a1" 2>/dev/null
check "a's session lingers in pool alpha (its sleep)" test -d "$CG2$SA/login"
drv agp2 "$UA" open cgroup close >"$T/move.out" 2>&1
check "the next login went to pool beta" grep -q "^cgroup=/$ROOT/pool-beta/user-$IA/.*/login\$" "$T/move.out"
check_eq "root moved the lingering process into pool beta (the user's shared group)" \
        "0::/$ROOT/pool-beta/user-$IA/shared" "$(cat "/proc/$SLEEPER/cgroup")"
check "and removed the old session" test ! -e "$CG2$SA"
kill "$SLEEPER"; for _ in $(seq 100); do [ -e "/proc/$SLEEPER" ] || break; sleep 0.05; done
drv agp2 "$UA" open cgroup close >"$T/move2.out" 2>&1
check "the next login swept the emptied session and the old pool" test ! -e "$PA"
check_eq "nothing left below <root>" "" "$(ls "$CG" | grep -E '^(pool|user)-')"

section "6. CPU share: pool alpha (a: 4 spinners, b: 4) against pool beta (c: 1), weights 100:300"
# Pinned to CPU 0 (see test-v2.sh); every user weight 100. Ideal for pool
# beta (user c): 300/(100+300) = 75% of CPU 0. Flat per-user groups (no pool
# level) would give c 1/3 = 33%, per-session groups 33% too, no grouping
# 1/9 = 11%: the band below holds the pooled share and none of the others.
SPIN="taskset -c 0 sh -c 'while :; do :; done'"
usage() { local k v; while read -r k v; do [ "$k" = usage_usec ] && { echo "$v"; return; }; done <"$1/cpu.stat"; echo 0; }
spin() { # spin NAME USER COUNT
        drv agp3 "$2" open env cgroup \
                spawn-user "for i in \$(seq $3); do $SPIN & echo \$! >> $U/$1.pids; done; wait" \
                wait-file "$T/$1.go" close >"$T/$1.out" 2>&1 &
        track_pid $!
        eval "PID_$1=$!"
        wait_for "$T/$1.out" '^cgroup='
}
spin sa "$UA" 4
spin sb "$UB" 4
spin sc "$UC" 1
for _ in $(seq 100); do [ "$(cat "$U/sa.pids" "$U/sb.pids" 2>/dev/null | wc -l)" = 8 ] && [ -s "$U/sc.pids" ] && break; sleep 0.05; done
SPIN_S=${AG_SPIN_S:-3}
sleep 0.5
a0=$(usage "$PA"); c0=$(usage "$PB")
sleep "$SPIN_S"
a1=$(usage "$PA"); c1=$(usage "$PB")
pkill -KILL -u "$UA"; pkill -KILL -u "$UB"; pkill -KILL -u "$UC"
da=$((a1 - a0)); dc=$((c1 - c0))
SHARE=$(awk -v a="$da" -v c="$dc" 'BEGIN { if (a + c > 0) printf "%d", 100 * c / (a + c); else print -1 }')
echo "# pool alpha used $((da / 1000)) ms, pool beta $((dc / 1000)) ms in ${SPIN_S} s: beta's share of CPU 0 $SHARE% (pooled ideal 75%; flat per-user 33%, no grouping 11%)"
check_eq "the spinners' groups have the section's weights (alpha 100, beta 300, users 100)" "100 300 100 100 100" \
        "$(cat "$PA/cpu.weight" "$PB/cpu.weight" "$PA/user-$IA/cpu.weight" "$PA/user-$IB/cpu.weight" "$PB/user-$IC/cpu.weight" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
check "pool beta's share is within 55-90%, around the pooled 75% and far from the flat 33% (got $SHARE%)" \
        test "$SHARE" -ge 55 -a "$SHARE" -le 90
touch "$T/sa.go" "$T/sb.go" "$T/sc.go"; wait "$PID_sa" "$PID_sb" "$PID_sc" 2>/dev/null
check_eq "every group removed after the spinners' sessions closed" "" "$(ls "$CG" | grep -E '^(pool|user)-')"
finish
