#!/bin/bash
# "autogroup metrics" read by the real node_exporter (Debian's
# prometheus-node-exporter), started by this test on loopback with its
# textfile collector on a directory of ours and every other collector off;
# logins through real libpam (tests/host/agdrv) on the host's cgroup v1:
#   - a session that burns 1 s of CPU adds 0.9..1.1 s to its user's counter;
#   - a capped user's throttled counters grow, the cap and weight gauges;
#   - sessions, leaves and the pool series;
#   - a user whose name has quotes, backslashes, a control character and a
#     byte that is not UTF-8 (from a private /etc/passwd in a private mount
#     namespace, as a directory could hand out) leaves the file readable:
#     node_textfile_scrape_error stays 0;
#   - --output replaces the file atomically, leaves no temporary file, and
#     fails cleanly; a user sees only their own series;
#   - a session whose login closed keeps its 6 leaves (login/ removed): 6
#     leaves counted; an idle user's weight is 0 and the HELP says what 0
#     is; a user of weight 1 (10 shares on v1) shows 1.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
NE=$(command -v prometheus-node-exporter || command -v node_exporter) ||
        skip_all "prometheus-node-exporter is not installed (bash .ci/apt-install prometheus-node-exporter)"
for c in curl perl python3 unshare; do
        command -v "$c" >/dev/null || skip_all "needs $c"
done

test_root agtest
POOL="m$$"
TF="$T/textfile"; mkdir "$TF"
PROM="$TF/autogroup.prom"

new_user a
new_user b
new_user c
new_user m
new_user l
new_user i
new_user w
CONF="$T/autogroup.conf"
printf '* weight 100\n%s weight 300\n%s max 20%%\n%s pool %s\n%s idle yes\n%s weight 1\n' \
        "$UA" "$UB" "$UC" "$POOL" "$UI" "$UW" >"$CONF"; chmod 644 "$CONF"
pam_other
pam_service agm "root=$ROOT conf=$CONF"
SVC=agm; BOUND=120               # drv (lib.sh)
# 1 s of this process's CPU time, whatever the machine's load
BURN1='perl -MTime::HiRes=clock_gettime,CLOCK_PROCESS_CPUTIME_ID -e "1 while clock_gettime(CLOCK_PROCESS_CPUTIME_ID) < 1.0"'
SPIN='perl -e "1 while 1"'

# ---- node_exporter on loopback, a free port, only the textfile collector
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$NE" --web.listen-address="127.0.0.1:$PORT" --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$TF" >"$T/ne.log" 2>&1 &
NEPID=$!; track_pid "$NEPID"
URL="http://127.0.0.1:$PORT/metrics"
for _ in $(seq 200); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.05; done
# write, then scrape into $T/NAME.txt
scrape() { "$HELPER" --root "$ROOT" metrics --output "$PROM" && curl -sf "$URL" >"$T/$1.txt"; }
# mval FILE METRIC UID: the value of METRIC for the user with that uid
mval() { awk -v m="$2" -v u="uid=\"$3\"" 'index($0, m "{") == 1 && index($0, u) { print $NF; exit }' "$1"; }
# pval FILE METRIC POOL: the value of a pool's METRIC
pval() { awk -v m="$2" -v p="pool=\"$3\"" 'index($0, m "{") == 1 && index($0, p) { print $NF; exit }' "$1"; }
# fcmp A OP B: a comparison of two decimal numbers (awk), false when either is empty
fcmp() { [ -n "$1" ] && [ -n "$3" ] && awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"; }
check "node_exporter answers on 127.0.0.1:$PORT" curl -sf "$URL"

echo "# 1. a session's 1 s of CPU in its user's counter"
hold ha "$UA"
hold hc "$UC"
scrape s1
C1=$(mval "$T/s1.txt" autogroup_user_cpu_seconds_total "$IA")
check "the user's CPU counter is there: $C1" fcmp "$C1" '>=' 0
check_eq "no textfile error" "node_textfile_scrape_error 0" "$(grep '^node_textfile_scrape_error' "$T/s1.txt")"
drv "$UA" open run-user "$BURN1" close >"$T/burn.out" 2>&1
check "burner session opened and closed" grep -q '^close=PAM_SUCCESS' "$T/burn.out"
scrape s2
C2=$(mval "$T/s2.txt" autogroup_user_cpu_seconds_total "$IA")
D=$(awk -v a="$C1" -v b="$C2" 'BEGIN { printf "%.6f", b - a }')
echo "# counter $C1 -> $C2: +$D s"
check "1 s burner: the counter grew by 0.9..1.1 s (+$D)" fcmp "$D" '>=' 0.9
check "and not by more than 1.1 s (+$D)" fcmp "$D" '<=' 1.1
check_eq "weight gauge" 300 "$(mval "$T/s2.txt" autogroup_user_weight "$IA")"
check_eq "uncapped: cap gauge +Inf" "+Inf" "$(mval "$T/s2.txt" autogroup_user_cap_cpus "$IA")"
check_eq "idle gauge" 0 "$(mval "$T/s2.txt" autogroup_user_idle "$IA")"
check_eq "one live session" 1 "$(mval "$T/s2.txt" autogroup_user_sessions "$IA")"
NL=$(find "$CG/user-$IA" -mindepth 2 -maxdepth 2 -type d ! -name login | wc -l)
check "root's leaves in the session: $NL" test "$NL" -gt 0
check_eq "leaves as in the tree (login/ not counted)" "$NL" "$(mval "$T/s2.txt" autogroup_user_leaves "$IA")"
check "counters typed as counters" grep -qx '# TYPE autogroup_user_cpu_seconds_total counter' "$T/s2.txt"
check "user label from NSS" grep -q "^autogroup_user_cpu_seconds_total{pool=\"\",root=\"$ROOT\",uid=\"$IA\",user=\"$UA\"} " "$T/s2.txt"

echo "# 2. a pool and its member"
check "the pool member's series carries the pool" grep -q "^autogroup_user_cpu_seconds_total{pool=\"$POOL\",root=\"$ROOT\",uid=\"$IC\"," "$T/s2.txt"
check_eq "the pool counts one user" 1 "$(pval "$T/s2.txt" autogroup_pool_users "$POOL")"
check_eq "and its session" 1 "$(pval "$T/s2.txt" autogroup_pool_sessions "$POOL")"
check "the pool's CPU counter" fcmp "$(pval "$T/s2.txt" autogroup_pool_cpu_seconds_total "$POOL")" '>=' 0

echo "# 3. a capped user's throttled counters grow"
drv "$UB" open env spawn-user "$SPIN & echo \$! > $U/spin.pid; wait" wait-file "$T/b.go" close >"$T/b.out" 2>&1 &
track_pid $!
wait_for "$T/b.out" '^AUTOGROUP_SESSION=' && wait_for "$U/spin.pid" '^[0-9]+$' && track_pid "$(cat "$U/spin.pid")"
# thr: the kernel's nr_throttled of the user group
thr() { sed -n 's/^nr_throttled //p' "$CG/user-$IB/cpu.stat"; }
for _ in $(seq 600); do [ "$(thr)" -gt 0 ] 2>/dev/null && break; sleep 0.05; done
scrape t1
T1=$(mval "$T/t1.txt" autogroup_user_cpu_throttled_periods_total "$IB")
TS1=$(mval "$T/t1.txt" autogroup_user_cpu_throttled_seconds_total "$IB")
for _ in $(seq 600); do [ "$(thr)" -gt "${T1:-0}" ] 2>/dev/null && break; sleep 0.05; done
scrape t2
T2=$(mval "$T/t2.txt" autogroup_user_cpu_throttled_periods_total "$IB")
TS2=$(mval "$T/t2.txt" autogroup_user_cpu_throttled_seconds_total "$IB")
echo "# throttled periods $T1 -> $T2, seconds $TS1 -> $TS2"
check "throttled periods counted: $T1" fcmp "$T1" '>' 0
check "throttled periods grew: $T1 -> $T2" fcmp "$T2" '>' "$T1"
check "throttled seconds grew: $TS1 -> $TS2" fcmp "$TS2" '>' "$TS1"
check "enforcement periods counted" fcmp "$(mval "$T/t2.txt" autogroup_user_cpu_periods_total "$IB")" '>=' "$T2"
check_eq "cap gauge: 0.2 CPUs" 0.2 "$(mval "$T/t2.txt" autogroup_user_cap_cpus "$IB")"
check_eq "the uncapped user was never throttled" 0 "$(mval "$T/t2.txt" autogroup_user_cpu_throttled_periods_total "$IA")"
kill "$(cat "$U/spin.pid")" 2>/dev/null; touch "$T/b.go"

echo "# 4. a user name a directory could hand out"
hold hm "$UM"
# the same uid under a name with '"', '\', '}', ',', a control character and a byte that is not UTF-8
perl -pe 'BEGIN { $u = shift } s/^\Q$u\E:/q"u\\o\xff\x01te},x="1":/' "$UM" /etc/passwd >"$T/passwd"
chmod 644 "$T/passwd"
unshare -m sh -c 'mount --bind "$1" /etc/passwd && exec "$2" --root "$3" metrics --output "$4"' sh \
        "$T/passwd" "$HELPER" "$ROOT" "$PROM" >"$T/bad.err" 2>&1
check "metrics written with the odd name" grep -q "uid=\"$IM\"" "$PROM"
curl -sf "$URL" >"$T/bad.txt"
check_eq "node_exporter read the file: node_textfile_scrape_error 0" "node_textfile_scrape_error 0" \
        "$(grep '^node_textfile_scrape_error' "$T/bad.txt")"
check "the odd name escaped, read back as written" grep -qF "uid=\"$IM\",user=\"q\\\"u\\\\o\\\\xff\\\\x01te},x=\\\"1\\\"\"}" "$T/bad.txt"
check "every live user's series is there (a, c, m)" fcmp "$(grep -c '^autogroup_user_cpu_seconds_total{' "$T/bad.txt")" '>=' 3
check_not "no error in node_exporter's log" grep -qi 'level=error' "$T/ne.log"

echo "# 5. writing: atomic, nothing left behind, clean failures"
scrape w1
check_eq "mode 0644" 644 "$(stat -c %a "$PROM")"
check_eq "no temporary file left" "autogroup.prom" "$(ls -A "$TF")"
check_not "a directory that does not exist: an error" "$HELPER" --root "$ROOT" metrics --output "$T/nodir/x.prom"
check_eq "and nothing made" "" "$(ls -A "$T" | grep -F nodir)"
# many writes while node_exporter is scraped: it never sees a partial file
(for _ in $(seq 40); do "$HELPER" --root "$ROOT" metrics --output "$PROM"; done) &
WP=$!
errs=0
while kill -0 "$WP" 2>/dev/null; do
        curl -sf "$URL" >"$T/race.txt"
        grep -q '^node_textfile_scrape_error 0' "$T/race.txt" || errs=$((errs + 1))
        grep -q "^autogroup_user_cpu_seconds_total{.*uid=\"$IA\"" "$T/race.txt" || errs=$((errs + 1))
done
wait "$WP"
check_eq "scrapes during 40 rewrites: every one complete" 0 "$errs"
check_eq "still no temporary file" "autogroup.prom" "$(ls -A "$TF")"

echo "# 6. a user sees only their own series"
as_user "$UA" "$HELPER --root $ROOT metrics" >"$T/own.txt" 2>&1
check "the user's own series" grep -q "uid=\"$IA\"" "$T/own.txt"
check_not "no other user's" grep -q "uid=\"$IB\"" "$T/own.txt"
check_not "another user's asked for: refused" as_user "$UA" "$HELPER --root $ROOT metrics --user $UB"

echo "# 7. the cron.d line, uncommented, writes the file (the timer's service runs the same command)"
CRON="$abs_top_builddir/conf/autogroup-metrics"
check "the installed line is commented out" grep -q '^#\* \* \* \* \*' "$CRON"
check "the service runs the same command" grep -qx "ExecStart=[^ ]*/autogroup metrics --output /var/lib/prometheus/node-exporter/autogroup.prom" \
        "$abs_top_builddir/conf/autogroup-metrics.service"
rm -f "$PROM"
cmd=$(sed -n 's/^#\* \* \* \* \*\troot\t//p' "$CRON" | sed "s|/var/lib/prometheus/node-exporter|$TF|g; s|/[^ ]*/autogroup |$HELPER |g; s| metrics --output | metrics --root $ROOT --output |")
sh -c "$cmd"
curl -sf "$URL" >"$T/cron.txt"
check "the cron line's command wrote the file" grep -q "^autogroup_user_cpu_seconds_total{.*uid=\"$IA\"" "$T/cron.txt"

echo "# 8. a session whose login closed: its leaves, login/ gone"
# the login's process moves itself into leaf-1 and outlives the close: close
# removes the empty login/ and keeps the six leaves for what still runs
drv "$UL" open env spawn-user "echo \$\$ > $U/l.pid; until [ -e $U/l.in ]; do sleep 0.05; done; exec sleep 300" \
        wait-file "$T/l.go" close >"$T/l.out" 2>&1 &
track_pid $!; LD=$!
wait_for "$T/l.out" '^AUTOGROUP_SESSION=' && wait_for "$U/l.pid" '^[0-9]+$'
SL=$(sed -n 's/^AUTOGROUP_SESSION=//p' "$T/l.out"); LP=$(cat "$U/l.pid"); track_pid "$LP"
as_user "$UL" "echo $LP > $CPU$SL/leaf-1/cgroup.procs"
# a "sleep 0.05" of the shell's loop that started before the move is still in login/ until it exits
for i in $(seq 600); do [ -z "$(cat "$CPU$SL/login/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.05; done
touch "$U/l.in" "$T/l.go"; wait "$LD"
check "the login closed" grep -q '^close=PAM_SUCCESS' "$T/l.out"
check "its login/ is gone" test ! -e "$CPU$SL/login"
NL=$(find "$CPU$SL" -mindepth 1 -maxdepth 1 -type d | wc -l)
check_eq "six leaves kept (leaf-1 with the process, five free)" 6 "$NL"
scrape l1
check_eq "leaves: the six, none taken off for a login/ that is gone" 6 "$(mval "$T/l1.txt" autogroup_user_leaves "$IL")"
check_eq "and its one session" 1 "$(mval "$T/l1.txt" autogroup_user_sessions "$IL")"
"$HELPER" --root "$ROOT" status --user "$UL" >"$T/l1.status" 2>&1
check "status marks it lingering (login/ gone)" grep -qE "$(basename "$SL") \(lingering\) " "$T/l1.status"
"$HELPER" --root "$ROOT" status --user "$UA" >"$T/a.status" 2>&1
check_not "and not a live one" grep -q "(lingering)" "$T/a.status"
kill "$LP" 2>/dev/null

echo "# 9. the weight gauge: an idle user, a user of weight 1"
hold hi "$UI"
hold hw "$UW"
scrape i1
check_eq "idle user: cpu.idle 1 in the kernel" 1 "$(cat "$CG/user-$II/cpu.idle")"
check_eq "idle user: idle gauge 1" 1 "$(mval "$T/i1.txt" autogroup_user_idle "$II")"
check_eq "idle user: weight gauge 0" 0 "$(mval "$T/i1.txt" autogroup_user_weight "$II")"
check "the weight's HELP says what 0 is (an idle group)" grep -qE '^# HELP autogroup_user_weight .*0 for an idle group' "$T/i1.txt"
check_eq "weight 1: cpu.shares 10 in the kernel" 10 "$(cat "$CG/user-$IW/cpu.shares")"
check_eq "weight 1: weight gauge 1, not 0 (an idle group's)" 1 "$(mval "$T/i1.txt" autogroup_user_weight "$IW")"
check_eq "weight 1: not idle" 0 "$(mval "$T/i1.txt" autogroup_user_idle "$IW")"
kill "$(cat "$U/hi.pid")" "$(cat "$U/hw.pid")" 2>/dev/null; touch "$T/hi.go" "$T/hw.go"

touch "$T/ha.go" "$T/hc.go" "$T/hm.go"
kill "$(cat "$U/ha.pid")" "$(cat "$U/hc.pid")" "$(cat "$U/hm.pid")" 2>/dev/null
kill "$NEPID"; wait "$NEPID" 2>/dev/null
finish
