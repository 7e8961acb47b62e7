#!/bin/bash
# Load, through the real module and real libpam:
#   1. 200 concurrent logins across 20 users (10 each), opened in random
#      order and closed in random order, a quarter of them leaving a process
#      behind that exits later (killed in random order after all closes);
#      afterwards one more open/close per user leaves the test root empty
#      (and "autogroup gc", when the helper is built, finds nothing to remove);
#   2. a soak of login cycles in ONE process (tests/host/loopdrv), a handle
#      per login, with a constant count of cgroups all along and at the end
#      and a heap that does not grow.
# No timing thresholds: every login is bounded with timeout only to turn a
# hang into a failure.
#
# AG_LOAD_LOGINS (200), AG_LOAD_USERS (20) and AG_SOAK_CYCLES (10,000, about
# 15 s; doc/testing.md gives a long run) change the sizes.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
require_v1_cpu
LOOPDRV="$abs_top_builddir/tests/host/loopdrv"
LOGINS=${AG_LOAD_LOGINS:-200}
NUSERS=${AG_LOAD_USERS:-20}
SOAK=${AG_SOAK_CYCLES:-10000}

test_root agtest
hl_syslog_start || { not_ok "syslog capture started"; finish; }

CONF="$T/autogroup.conf"
USERS=()
: >"$CONF"
for k in $(seq "$NUSERS"); do
        add_user "${TAG}u$k"
        USERS+=("${TAG}u$k")
        echo "${TAG}u$k weight $((100 + k))" >>"$CONF"   # a weight of its own: no cross-talk
done
chmod 644 "$CONF"
pam_other
pam_service agl "root=$ROOT conf=$CONF"
shares_of() { echo $(((100 + $1) * 1024 / 100)); }
mkdir -p "$T/go"

echo "# 1. $LOGINS concurrent logins across $NUSERS users, random open and close order"
# All logins run in one namespace (one /dev/log capture); each is bounded.
# Login i belongs to user (i mod NUSERS)+1; every 4th leaves "sleep" behind.
seq "$LOGINS" | shuf >"$T/open.order"
seq "$LOGINS" | shuf >"$T/close.order"
: >"$T/lingering"
nsrun '
        T=$1; AGDRV=$2; U=$3; NUSERS=$4; shift 4
        while read -r i; do
                k=$(( (i % NUSERS) + 1 ))
                eval "u=\${$k}"
                if [ $((i % 4)) -eq 0 ]; then
                        set_linger="spawn-user"
                        cmd="echo \$\$ > $U/linger.$i.pid; exec sleep 600"
                else
                        set_linger="touch"; cmd="$T/nolinger.$i"
                fi
                timeout -k 5 300 "$AGDRV" --pam "$T" agl "$u" open cgroup "$set_linger" "$cmd" \
                        wait-file "$T/go/$i" close cgroup >"$T/login.$i.out" 2>&1 &
        done <"$T/open.order"
        wait' "$T" "$AGDRV" "$U" "$NUSERS" "${USERS[@]}" &
NSPID=$!; track_pid "$NSPID"

# wait until every login is in (at most 5 minutes: a hang is a failure, not a wait forever)
for _ in $(seq 3000); do
        [ "$(grep -l '^cgroup=' "$T"/login.*.out 2>/dev/null | wc -l)" -ge "$LOGINS" ] && break
        sleep 0.1
done
n_open=$(grep -l '^open=PAM_SUCCESS' "$T"/login.*.out 2>/dev/null | wc -l)
n_in=$(grep -l "^cgroup=/$ROOT/user-[0-9]*/[^/]*/login\$" "$T"/login.*.out 2>/dev/null | wc -l)
check_eq "all $LOGINS opens succeeded" "$LOGINS" "$n_open"
check_eq "all $LOGINS callers are in their own login/ leaf" "$LOGINS" "$n_in"
check_eq "all $LOGINS sessions are distinct" "$LOGINS" \
        "$(sed -n 's/^cgroup=//p' "$T"/login.*.out 2>/dev/null | sort -u | wc -l)"
check_eq "$NUSERS user groups" "$NUSERS" "$(ls -d "$CG"/user-* 2>/dev/null | wc -l)"
bad=""
for k in $(seq "$NUSERS"); do
        uid=$(id -u "${TAG}u$k")
        n=$(find "$CG/user-$uid" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l)
        [ "$n" -eq $((LOGINS / NUSERS)) ] || bad="$bad u$k:$n-sessions"
        [ "$(cat "$CG/user-$uid/cpu.shares" 2>/dev/null)" = "$(shares_of "$k")" ] || bad="$bad u$k:shares"
done
check_eq "each user group has its sessions and its own weight" "" "$bad"
n_linger=$((LOGINS / 4))
for _ in $(seq 600); do [ "$(ls "$U"/linger.*.pid 2>/dev/null | wc -l)" -ge "$n_linger" ] && break; sleep 0.05; done
check_eq "$n_linger lingering processes started" "$n_linger" "$(ls "$U"/linger.*.pid 2>/dev/null | wc -l)"
for f in "$U"/linger.*.pid; do track_pid "$(cat "$f")"; done

# close in random order (each touch releases one login; they run concurrently)
while read -r i; do touch "$T/go/$i"; done <"$T/close.order"
wait "$NSPID"
n_closed=$(grep -l '^close=PAM_SUCCESS' "$T"/login.*.out 2>/dev/null | wc -l)
check_eq "all $LOGINS closes succeeded" "$LOGINS" "$n_closed"
check_eq "no login hung" "" "$(grep -L '^close=' "$T"/login.*.out 2>/dev/null)"
check_eq "every closing process moved back out" "$LOGINS" \
        "$(for f in "$T"/login.*.out; do sed -n 's/^cgroup=//p' "$f" | tail -n1; done | grep -cv "^/$ROOT/")"
n_left=$(find "$CG" -mindepth 2 -maxdepth 2 -type d 2>/dev/null | wc -l)
check_eq "only the $n_linger sessions with a lingering process are left" "$n_linger" "$n_left"
hlog_has "the leftovers were logged" "still holds processes, left for a later sweep"
hlog_hasnt "no error was logged" "^<8[0-3]>.*pam_autogroup\\(agl:session\\)"

# the lingering processes exit, in random order
for f in $(ls "$U"/linger.*.pid | shuf); do kill "$(cat "$f")" 2>/dev/null; done
for _ in $(seq 600); do
        [ -z "$(find "$CG" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break
        sleep 0.05
done
check_eq "the lingering processes are gone" "" "$(find "$CG" -name cgroup.procs -exec cat {} + 2>/dev/null)"

# one more open/close per user sweeps what they left
AGAIN=""
for u in "${USERS[@]}"; do
        nsrun 'exec timeout -k 5 60 "$@"' "$AGDRV" --pam "$T" agl "$u" open close >"$T/again.$u.out" 2>&1 &
        AGAIN="$AGAIN $!"
done
wait $AGAIN
check_eq "one more login per user: all succeeded" "$NUSERS" "$(grep -l '^close=PAM_SUCCESS' "$T"/again.*.out | wc -l)"
check_eq "the tree under the test root is empty" "" "$(find "$CG" -mindepth 1 -type d 2>/dev/null)"
if [ -x "$HELPER" ]; then
        timeout -k 5 60 "$HELPER" --root "$ROOT" gc >"$T/gc.out" 2>&1
        check "autogroup gc succeeds" test $? -eq 0
        check_not "autogroup gc finds nothing to remove" grep -q '^removed' "$T/gc.out"
else
        skip "autogroup gc: helper not built ($HELPER)"
fi

echo "# 2. soak: $SOAK open/close cycles in one process"
if [ -x "$LOOPDRV" ]; then
        # Mostly one handle per login (pam_start, open, close, pam_end: libpam
        # dlopen()s and dlclose()s the module each time), as sshd and login do;
        # the first 100 cycles share one handle (see tests/host/test-valgrind.sh
        # for why not more).
        pairs=100; [ "$SOAK" -gt 200 ] || pairs=$((SOAK / 2)); restarts=$((SOAK - pairs))
        every=$((SOAK / 10)); [ "$every" -gt 0 ] || every=1
        # one lingering session of another user stays through the whole soak
        nsrun 'exec timeout -k 5 60 "$@"' "$AGDRV" --pam "$T" agl "${USERS[1]}" open \
                spawn-user "echo \$\$ > $U/soak.pid; exec sleep 3600" close >"$T/soakl.out" 2>&1
        wait_for "$U/soak.pid" '^[0-9]+$'; SP=$(cat "$U/soak.pid"); track_pid "$SP"
        before=$(hl_tree_count "$CG")
        nsrun 'exec timeout -k 5 3600 "$@"' "$LOOPDRV" --pairs "$pairs" --restarts "$restarts" \
                --watch "$CG" --every "$every" "$T" agl "${USERS[0]}" >"$T/soak.out" 2>&1
        rc=$?
        check_not "soak: bounded" test "$rc" -eq 124 -o "$rc" -eq 137
        check_eq "soak: every cycle succeeded" "pairs=$pairs restarts=$restarts failed=0" "$(tail -n1 "$T/soak.out")"
        counts=$(awk '/^watch=/ { print $2 }' "$T/soak.out" | sort -u)
        check_eq "soak: cgroup count constant at every watch point" "$before" "$counts"
        # The process's heap between the watch points of the logins with a
        # handle each (the second one on: the first includes libpam's and
        # NSS's one-time allocations): a module that keeps anything after
        # pam_end (a static cache, a leak) grows by its size every cycle.
        # 64 KiB is noise, whatever the cycle count.
        heaps=$(awk -F'[= ]' -v p="$pairs" '/^watch=/ && $2 > p { print $5 }' "$T/soak.out" | sed -n '2,$p')
        heap1=$(echo "$heaps" | head -n1); heap2=$(echo "$heaps" | tail -n1)
        check "soak: the heap does not grow with the cycles ($heap1 -> $heap2 bytes)" \
                test -n "$heap1" -a -n "$heap2" -a "$((heap2 - heap1))" -lt 65536
        check "soak: watched $((SOAK / every)) points or more" test "$(grep -c '^watch=' "$T/soak.out")" -ge $((SOAK / every))
        check_eq "soak: count at the end" "$before" "$(hl_tree_count "$CG")"
        check_eq "soak: the other user's lingering session was never touched" "$SP" \
                "$(find "$CG" -path '*/login/cgroup.procs' -exec cat {} + 2>/dev/null)"
        kill "$SP"
else
        skip "soak: $LOOPDRV not built"
fi

finish
