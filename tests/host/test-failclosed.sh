#!/bin/bash
# Caps that hold however a user arranges their logins, on this host's cgroup
# v1 cpu hierarchy through real libpam (agdrv): whatever keeps a login from a
# session of its own (names taken, sessions-max, a mkdir the kernel refuses)
# it lands below its user's group, which carries the cap, with one log line;
# the close of a su-style caller cannot be held by the user (SIGSTOP of every
# new process); the cgroup v2 rules of the shared group on the host's cgroup2
# mount (no cpu controller there).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu

test_root agfc
AG_CGROOTS="$CG $UNIFIED/$ROOT"
start_syslog || true
new_user a
write_conf "* weight 100" "$UA max 20%"
pam_other
pam_service agfc "root=$ROOT conf=$CONF"

# lingering N TAG [env...]: N lingering logins of A from one agdrv process (one
# PAM handle, so one pid: the session names p<pid>[-N]), each leaving a
# sleeper of A's in its group; prints the driver's output to $T/TAG.out
lingering() {
        local n="$1" tag="$2" args=() i
        shift 2
        for i in $(seq "$n"); do
                args+=(open env spawn-user "echo \$\$ >>$U/$tag.pids; exec sleep 300" close)
        done
        env "$@" "$AGDRV" --pam "$T" agfc "$UA" "${args[@]}" >"$T/$tag.out" 2>&1
        for i in $(seq 100); do [ "$(wc -l <"$U/$tag.pids" 2>/dev/null)" -ge "$n" ] && break; sleep 0.05; done
        for i in $(cat "$U/$tag.pids"); do track_pid "$i"; done
}
# watchers TAG: how many watchers (forked by the module's close) with AG_TEST_WATCH=TAG run
watchers() {
        local d n=0
        for d in /proc/[0-9]*; do
                [ "$(cat "$d/comm" 2>/dev/null)" = pam_autogroup ] || continue
                tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -qx "AG_TEST_WATCH=$1" && n=$((n + 1))
        done
        echo "$n"
}
ends_lingering() {
        local p
        for p in $(cat "$U/$1.pids"); do kill "$p" 2>/dev/null; done
        for p in $(cat "$U/$1.pids"); do for _ in $(seq 100); do [ -e "/proc/$p" ] || break; sleep 0.05; done; done
}
# below_user TAG: how many of TAG's sleepers are below A's user group
below_user() {
        local p n=0
        for p in $(cat "$U/$1.pids"); do case "$(cgof "$p")" in "/$ROOT/user-$IA/"*) n=$((n + 1));; esac; done
        echo "$n"
}

echo "# 1. 40 lingering logins from one process without an audit session id: each its own session"
if [ "$(cat /proc/self/sessionid)" = 4294967295 ]; then
        lingering 40 forty AG_TEST_WATCH="forty$$"
        check_eq "40 opens, 40 PAM_SUCCESS" 40 "$(grep -c '^open=PAM_SUCCESS' "$T/forty.out")"
        check_eq "40 sessions with 40 different names" 40 "$(vals AUTOGROUP_SESSION "$T/forty.out" | sort -u | grep -c "^/$ROOT/user-$IA/p[0-9]")"
        check_eq "every sleeper below the user group (its cap)" 40 "$(below_user forty)"
        check_eq "the cap on the user group" 20000 "$(cat "$CG/user-$IA/cpu.cfs_quota_us")"
        check_not "no login ungrouped" grep -q "session not grouped" "$SYSLOG"
        check_eq "40 lingering closes, one watcher of the user" 1 "$(watchers "forty$$")"
        ends_lingering forty
else
        skip "this shell has an audit session id: the p<pid> names are not used"
fi

echo "# 2. sessions-max: logins beyond it share the user's group 'shared', under the cap"
printf '%s\n' "* weight 100" "$UA max 20%" "$UA sessions-max 3" >"$CONF"
"$AGDRV" --pam "$T" agfc "$UA" open close >/dev/null 2>&1     # the sweep of what section 1 left
lingering 5 five
check_eq "five opens, five PAM_SUCCESS" 5 "$(grep -c '^open=PAM_SUCCESS' "$T/five.out")"
check_eq "three sessions of their own, then the shared group twice" "3 2" \
        "$(vals AUTOGROUP_SESSION "$T/five.out" | grep -vc "/shared\$") $(vals AUTOGROUP_SESSION "$T/five.out" | grep -c "^/$ROOT/user-$IA/shared\$")"
check_eq "every sleeper below the user group (its cap)" 5 "$(below_user five)"
check_eq "the user group holds three sessions and 'shared'" 4 "$(find "$CG/user-$IA" -mindepth 1 -maxdepth 1 -type d | wc -l)"
check_eq "the shared group is root's throughout (no file of it is the user's)" 0 \
        "$(find "$CG/user-$IA/shared" -user "$UA" | wc -l)"
log_has "one line says why the login shares" \
        "$UA has sessions-max sessions already: this login shares $CPU/$ROOT/user-$IA/shared, under the user's policy"
check_not "the user cannot move a process into the shared group" \
        as_user "$UA" "sleep 0 & echo \$! >$CG/user-$IA/shared/cgroup.procs"
ends_lingering five
"$AGDRV" --pam "$T" agfc "$UA" open close >/dev/null 2>&1
check "once empty, the shared group goes with the sessions" test ! -e "$CG/user-$IA/shared"

printf '%s\n' "* sessions-max 0" "* sessions-max 1025" "* sessions-max x" "* sessions-max 1024" >"$T/sm.conf"
chmod 644 "$T/sm.conf"
"$abs_top_builddir/helper/autogroup" check "$T/sm.conf" >"$T/sm.out" 2>&1
check_eq "autogroup check: 0, 1025 and x refused, 1024 taken" 3 "$(grep -c 'invalid sessions-max (expected 1..1024)' "$T/sm.out")"

echo "# 3. a session the kernel refuses (a mkdir refused): the login lands in 'shared', one log line"
if nomkdir_preload; then
        printf '%s\n' "* weight 100" "$UA max 20%" >"$CONF"
        touch "$T/refuse"
        lingering 1 refused LD_PRELOAD="$PRELOAD" AG_TEST_NOMKDIR="login:$T/refuse"
        check "open: PAM_SUCCESS" grep -q '^open=PAM_SUCCESS' "$T/refused.out"
        check_eq "the login is in the user's shared group" "/$ROOT/user-$IA/shared" "$(vals AUTOGROUP_SESSION "$T/refused.out")"
        check_eq "its process is there, under the cap" "/$ROOT/user-$IA/shared" "$(cgof "$(cat "$U/refused.pids")")"
        log_has "one line says why" \
                "cannot create the login leaf for $UA: No space left on device; the login shares $CPU/$ROOT/user-$IA/shared, under the user's policy"
        ends_lingering refused

        echo "# 3b. (v1) the shared group refused too: the login lands in the user group itself"
        printf '%s\n' "* weight 100" "$UA max 20%" "$UA sessions-max 1" >"$CONF"
        lingering 2 usergroup LD_PRELOAD="$PRELOAD" AG_TEST_NOMKDIR="shared:$T/refuse"
        check_eq "two opens, two PAM_SUCCESS" 2 "$(grep -c '^open=PAM_SUCCESS' "$T/usergroup.out")"
        check_eq "the second login is in the user group itself" "/$ROOT/user-$IA" \
                "$(vals AUTOGROUP_SESSION "$T/usergroup.out" | tail -n1)"
        check_eq "its process too, under the cap" 1 \
                "$(for p in $(cat "$U/usergroup.pids"); do cgof "$p"; done | grep -cx "/$ROOT/user-$IA")"
        ends_lingering usergroup
else
        skip "tests/host/nomkdir.so is not built"
fi
printf '%s\n' "* weight 100" "$UA max 20%" >"$CONF"

echo "# 4. a su-style close the user tries to hold: SIGSTOP of every new process of the close"
# The caller is like su: real uid the user's, effective uid root. The
# user stops every process that appears while the close runs; the close
# (which forks the watcher of its lingering session) must not wait on them.
cat >"$U/stopper.pl" <<'EOS'
# stops every process it may signal whose pid is above its own, until $ARGV[0] exists
my %seen;
until (-e $ARGV[0]) {
        opendir(my $d, "/proc") or die;
        for my $p (grep { /^\d+$/ && $_ > $$ } readdir $d) { kill('STOP', $p) and $seen{$p} = 1 unless $seen{$p}; }
        closedir $d;
}
open(my $f, ">", $ARGV[1]); print $f join("\n", sort keys %seen), "\n";
EOS
chmod 644 "$U/stopper.pl"
env AG_TEST_WATCH="fc$$" setpriv --ruid="$IA" -- timeout -k 5 100 "$AGDRV" --pam "$T" agfc "$UA" open env \
        spawn-user "echo \$\$ >$U/su.pid; exec sleep 300" wait-file "$U/su.pid" wait-file "$U/go" close >"$T/su.out" 2>&1 &
DP=$!; track_pid "$DP"
for _ in $(seq 200); do [ -s "$U/su.pid" ] && break; sleep 0.05; done
track_pid "$(cat "$U/su.pid")"
setpriv --reuid="$IA" --regid="$(id -g "$UA")" --init-groups perl "$U/stopper.pl" "$U/stop.done" "$U/stopped" &
SP=$!; track_pid "$SP"
sleep 0.3
touch "$U/go"
wait_for "$T/su.out" '^close=' || true
check "the su-style close returns while the user stops every new process" grep -q '^close=PAM_SUCCESS' "$T/su.out"
touch "$U/stop.done"; wait "$SP" 2>/dev/null
for p in $(cat "$U/stopped" 2>/dev/null); do kill -CONT "$p" 2>/dev/null; done
wait "$DP" 2>/dev/null
W=$(for d in /proc/[0-9]*; do [ "$(cat "$d/comm" 2>/dev/null)" = pam_autogroup ] || continue
        tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -qx "AG_TEST_WATCH=fc$$" && echo "${d#/proc/}"; done | head -n1)
if [ -n "$W" ]; then
        check_eq "its watcher sits in the hierarchy's root (not in the caller's group)" / "$(cgof "$W")"
        check "the watcher is not stopped" grep -qE '^State:[[:space:]]+[RSD]' "/proc/$W/status"
else
        not_ok "the watcher of the su-style close found"
fi

echo "# 4b. gc --apply: a cap added to the config applies to a live user group without a new login"
printf '%s\n' "* weight 100" >"$CONF"
lingering 1 apply
check_eq "no cap on the user group at first" -1 "$(cat "$CG/user-$IA/cpu.cfs_quota_us")"
printf '%s\n' "* weight 100" "$UA max 30%" "$UA weight 200" >"$CONF"
"$abs_top_builddir/helper/autogroup" --root "$ROOT" --pam-dir "$T" gc >"$T/gc.out" 2>&1
check_eq "gc without --apply leaves it" -1 "$(cat "$CG/user-$IA/cpu.cfs_quota_us")"
"$abs_top_builddir/helper/autogroup" --root "$ROOT" --pam-dir "$T" gc --apply >"$T/apply.out" 2>&1
check_eq "gc --apply writes the cap and the weight" "30000 2048" \
        "$(cat "$CG/user-$IA/cpu.cfs_quota_us") $(cat "$CG/user-$IA/cpu.shares")"
check "gc --apply says how many groups" grep -q "^applied the configuration to 1 group below $ROOT" "$T/apply.out"
check_eq "the live session's process is under it" 1 "$(below_user apply)"
ends_lingering apply
printf '%s\n' "* weight 100" "$UA max 20%" >"$CONF"

echo "# 5. cgroup v2 (the host's cgroup2 mount, no cpu): the shared group is root's and holds the login"
if [ -d "$UNIFIED" ] && [ "$(stat -f -c %T "$UNIFIED")" = cgroup2fs ]; then
        "$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" open env spawn-user "echo \$\$ >$U/v2.pid; exec sleep 300" close \
                >"$T/v2a.out" 2>&1
        for _ in $(seq 100); do [ -s "$U/v2.pid" ] && break; sleep 0.05; done
        track_pid "$(cat "$U/v2.pid")"
        check "(v2) a first login has a session of its own" grep -q "^AUTOGROUP_SESSION=/$ROOT/user-$IA/p" "$T/v2a.out"
        if nomkdir_preload; then
                env LD_PRELOAD="$PRELOAD" AG_TEST_NOMKDIR="login:$T/refuse" "$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" \
                        open env spawn-user "echo \$\$ >$U/v2b.pid; exec sleep 300" close >"$T/v2b.out" 2>&1
                for _ in $(seq 100); do [ -s "$U/v2b.pid" ] && break; sleep 0.05; done
                track_pid "$(cat "$U/v2b.pid")"
                check_eq "(v2) a refused session: the login in the shared group" "/$ROOT/user-$IA/shared" \
                        "$(vals AUTOGROUP_SESSION "$T/v2b.out")"
                check_eq "(v2) its process there" "/$ROOT/user-$IA/shared" \
                        "$(sed -n 's/^0:://p' "/proc/$(cat "$U/v2b.pid")/cgroup")"
                check_eq "(v2) the shared group is root's throughout" 0 \
                        "$(find "$UNIFIED/$ROOT/user-$IA/shared" -user "$UA" | wc -l)"
                check_not "(v2) the user cannot move their process from their session into it" \
                        as_user "$UA" "echo $(cat "$U/v2.pid") >$UNIFIED/$ROOT/user-$IA/shared/cgroup.procs"
        else
                skip "tests/host/nomkdir.so is not built"
        fi
else
        skip "no cgroup2 mount at $UNIFIED"
fi

finish
