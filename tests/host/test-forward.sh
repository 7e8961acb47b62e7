#!/bin/bash
# Accounting that travels: the module's end-of-session records (lib/cgroup/acct.h)
# through a real syslog forwarding, two rsyslog instances of this test's own
# on loopback (private configs, work directories and pid files; neither
# touches /dev/log or the host's rsyslog), configured with the blocks of
# doc/fleet.md ("Accounting that travels"), taken from the page itself
# (tests/doc-blocks.py), only the host, port and directory changed:
#   - a "login node": rsyslogd reading a socket that is /dev/log inside the
#     private mount namespaces the logins run in, forwarding with the
#     page's filter and omfwd action over TCP;
#   - a "collector": the page's imtcp input on 127.0.0.1, a file a day.
# 20 sessions through real libpam (tests/host/agdrv), of two users, one of
# them named (through a private /etc/passwd) with a space, '=', a quote and
# '%': the collector's file holds every record, intact (every pair one
# key=value word, the keys in order) and in the order the sessions closed,
# and the page's summary sums CPU per user from it.
# CPU after logout: a session of a third user leaves a nohup job that burns
# CPU once the login has closed; "autogroup gc" removes the session when the
# job is done. gc's record (program "autogroup") arrives through the page's
# filter, and the page's summary gives that user the CPU the session used up
# to its removal (its cpuacct mirror's figure), at least what the job used
# (/proc/PID/stat), which the session's "lingering" record lacks; the page's
# journalctl pattern picks the same records as the summary.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
require_v1_cpu
RSYSLOGD=$(command -v rsyslogd) || skip_all "rsyslog is not installed (bash .ci/apt-install rsyslog)"
require_cmds "python3, perl: the CPU burner" python3 perl
require_own_cpuacct             # the session's figures are compared with it

# ---- the blocks of doc/fleet.md
FLEET="$abs_top_srcdir/doc/fleet.md"
mkdir "$T/blocks"
python3 "$abs_top_srcdir/tests/doc-blocks.py" "$T/blocks" "$FLEET"
# fleet_block STRING: the body of the one block of doc/fleet.md that has STRING
fleet_block() {
        local f n=0 hit=
        for f in "$T"/blocks/*.body; do
                grep -qF -- "$1" "$f" && { n=$((n + 1)); hit=$f; }
        done
        [ "$n" = 1 ] || { echo "doc/fleet.md: $n blocks with '$1'" >&2; return 1; }
        cat "$hit"
}

ROOT="agtest-$$"
AG_CGROOTS="$CPU/$ROOT $ACCT/$ROOT"
new_user a; new_user b; new_user c
# UB's uid under a name a directory could hand out
ODD="x y=\"$$\"%"
ODD_ENC="x%20y%3D%22$$%22%25"
perl -pe 'BEGIN { ($u, $n) = splice(@ARGV, 0, 2) } s/^\Q$u\E:/$n:/' "$UB" "$ODD" /etc/passwd >"$T/passwd"
chmod 644 "$T/passwd"
CONF="$T/autogroup.conf"; printf '* weight 100\n' >"$CONF"; chmod 644 "$CONF"
pam_other
pam_service agfwd "root=$ROOT conf=$CONF noaudit"

# ---- the collector and the login node, from the page's blocks
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/rcv" "$T/snd"
DAILY="$T/rcv/autogroup"        # the page's /var/log/autogroup
fleet_block 'type="omfile"' >"$T/collector.block" &&
        fleet_block 'type="omfwd"' >"$T/node.block" &&
        fleet_block 'cpu[f["user"]]' >"$T/summary.block" || { not_ok "doc/fleet.md has the three blocks"; finish; }
check "the collector's block listens on port 514, writes below /var/log/autogroup" \
        grep -q 'input(type="imtcp" port="514" ' "$T/collector.block"
check "the login node's block forwards to port 514" grep -q 'target="logs.example.org" port="514"' "$T/node.block"
{
        printf 'global(workDirectory="%s")\n' "$T/rcv"
        sed -e "s|/var/log/autogroup/|$DAILY/|" \
            -e "s|input(type=\"imtcp\" port=\"514\" |input(type=\"imtcp\" address=\"127.0.0.1\" port=\"$PORT\" |" \
            "$T/collector.block"
} >"$T/rcv.conf"
{
        printf 'global(workDirectory="%s" localHostName="node%s")\n' "$T/snd" "$$"
        printf 'module(load="imuxsock" SysSock.Use="off")\n'
        printf 'input(type="imuxsock" Socket="%s" RateLimit.Interval="0" UseSpecialParser="off")\n' "$HL_LOGSOCK"
        sed "s|target=\"logs.example.org\" port=\"514\"|target=\"127.0.0.1\" port=\"$PORT\"|" "$T/node.block"
} >"$T/snd.conf"
# collected: every file of the collector, in date order (one a day)
COLLECTED="$T/collected.log"
collected() { cat "$DAILY"/*.log >"$COLLECTED" 2>/dev/null; }
"$RSYSLOGD" -n -f "$T/rcv.conf" -i "$T/rcv.pid" >"$T/rcv.out" 2>&1 &
RP=$!; track_pid "$RP"
for _ in $(seq 200); do ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q . && break; sleep 0.05; done
"$RSYSLOGD" -n -f "$T/snd.conf" -i "$T/snd.pid" >"$T/snd.out" 2>&1 &
SP=$!; track_pid "$SP"
for _ in $(seq 200); do [ -S "$HL_LOGSOCK" ] && break; sleep 0.05; done
check "the collector listens on 127.0.0.1:$PORT" ss -Hltn "sport = :$PORT"
check "the login node reads its socket" test -S "$HL_LOGSOCK"
hl_dev_make

echo "# 1. 20 sessions, two users, through real libpam"
# logins in a private mount namespace: /dev/log is the login node's socket, /etc/passwd ours
: >"$T/order"
for i in $(seq 20); do
        if [ $((i % 2)) = 1 ]; then u="$UA"; else u="$ODD"; fi
        nsrun 'mount --bind "$1" /etc/passwd && shift && exec timeout -k 5 60 "$@"' "$T/passwd" \
                "$AGDRV" --pam "$T" agfwd "$u" open env run-user "true" close >"$T/s$i.out" 2>&1
        sed -n 's/^AUTOGROUP_SESSION=//p' "$T/s$i.out" >>"$T/order"
done
check_eq "20 sessions opened and closed" 20 "$(cat "$T"/s*.out | grep -c '^close=PAM_SUCCESS')"
check_eq "20 session paths, all distinct" 20 "$(sort -u "$T/order" | wc -l)"

echo "# 2. the collector's file"
records() { collected; grep -E 'pam_autogroup\(agfwd:session\): session [^ ]+ (closed|lingering): ' "$COLLECTED" 2>/dev/null; }
for _ in $(seq 600); do [ "$(records | wc -l)" -ge 20 ] && break; sleep 0.05; done
records >"$T/records"
check_eq "one file of the day, named as the page says" "$(date +%Y-%m-%d).log" "$(ls "$DAILY" | tail -n1)"
check_eq "every record arrived" 20 "$(wc -l <"$T/records")"
check_eq "from the login node (its host name)" 20 "$(grep -c "^node$$ " "$T/records")"
check_eq "in the order the sessions closed" "$(cat "$T/order")" "$(sed 's/.* cgroup=\([^ ]*\) .*/\1/' "$T/records")"
# intact: after the colon, exactly the documented keys in order, each pair one word
KEYS="user scope cpu_usec user_usec system_usec wall_usec uid state cgroup pool by"
intact=$(sed 's/^.*: session [^ ]* [a-z]*: //' "$T/records" |
        awk -v keys="$KEYS" '{ n = split(keys, k, " "); if (NF != n) { bad++; next }
                for (i = 1; i <= n; i++) if (index($i, k[i] "=") != 1) { bad++; next } }
                END { print bad + 0 }')
check_eq "every record intact: the keys in order, one word each" 0 "$intact"
check_eq "the plain user's records" 10 "$(grep -c " user=$UA scope=session .* uid=$IA state=closed " "$T/records")"
check_eq "the odd name percent-encoded, no quote or space in the value" 10 \
        "$(grep -c " user=$ODD_ENC scope=session .* uid=$IB state=closed " "$T/records")"
check_not "no line cut or merged (every line a record or the daemons' own)" \
        grep -vE "^node$$ (agdrv: pam_autogroup\(agfwd:session\): session [^ ]+ (closed|lingering): .* by=close$|rsyslogd)" "$COLLECTED"

# summary: the page's summary block run on the collector's files ($T/summary, sorted by name)
summary() { sed "s|/var/log/autogroup/|$DAILY/|g" "$T/summary.block" | sh | sort >"$T/summary"; }

echo "# 3. the summary of doc/fleet.md: CPU seconds per user"
summary
sed 's/^/# /' "$T/summary"
check_eq "one line for each user" 2 "$(wc -l <"$T/summary")"
sum_of() { grep " user=$1 " "$T/records" | sed 's/.* cpu_usec=\([0-9]*\) .*/\1/' | awk '{ s += $1 } END { printf "%.3f", s / 1e6 }'; }
check_eq "the plain user's total" "$(sum_of "$UA")" "$(awk -v u="$UA" '$1 == u { print $2 }' "$T/summary")"
check_eq "the odd user's total" "$(sum_of "$ODD_ENC")" "$(awk -v u="$ODD_ENC" '$1 == u { print $2 }' "$T/summary")"

echo "# 4. CPU after logout: a nohup job burns once the login closed, gc removes the session"
# The job waits for the logout, burns 1 s of its own CPU time (a quantity of work, not a
# time limit), then stops itself so that its CPU time can be read, and ends when continued.
BURN='perl -e "while ((times)[0] < 1.0) { for (1 .. 100000) {} } kill q(STOP), \$\$"'
JOB="echo \$\$ > $U/job.pid; until [ -e $U/job.go ]; do sleep 0.05; done; exec nohup $BURN >/dev/null 2>&1"
export AGDRV T UC JOB
nsrun 'exec env AG_TEST_WATCH=fwd timeout -k 5 60 "$AGDRV" --pam "$T" agfwd "$UC" open env spawn-user "$JOB" close' \
        >"$T/job.out" 2>&1
SJ=$(sed -n 's/^AUTOGROUP_SESSION=//p' "$T/job.out")
check "the job's login closed" grep -q '^close=PAM_SUCCESS' "$T/job.out"
wait_for "$U/job.pid" '^[0-9]+$'; JP=$(cat "$U/job.pid"); track_pid "$JP"
check "the job outlived the logout, in the session" grep -qx "$JP" "$CPU$SJ/login/cgroup.procs"
# the close's watcher would remove the session once the job ends: this test's own process
# (the driver's), ended here so that gc removes it
W=
for _ in $(seq 200); do
        for d in /proc/[0-9]*; do
                [ "$(cat "$d/comm" 2>/dev/null)" = pam_autogroup ] || continue
                { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qx AG_TEST_WATCH=fwd && { W=${d#/proc/}; break; }
        done
        [ -n "$W" ] && break; sleep 0.05
done
check "the close's watcher found (ended by the test, gc does its work)" test -n "$W"
[ -n "$W" ] && kill -KILL "$W"
touch "$U/job.go"
for _ in $(seq 1200); do grep -qE '^State:[[:space:]]+T' "/proc/$JP/status" 2>/dev/null && break; sleep 0.05; done
check "the job burned its second and stopped" grep -qE '^State:[[:space:]]+T' "/proc/$JP/status"
# its CPU time, utime + stime (fields 14 and 15 of /proc/PID/stat, clock ticks)
st=$(cat "/proc/$JP/stat"); set -- ${st##*) }
JOB_USEC=$(( (${12} + ${13}) * 1000000 / $(getconf CLK_TCK) ))
kill -CONT "$JP"
for _ in $(seq 600); do [ -z "$(cat "$CPU$SJ/login/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.05; done
check "the job ended, the session is empty but still there" test -d "$CPU$SJ"
# what the session used, from its cpuacct mirror, now that nothing runs there
SESS_USEC=$(( $(cat "$ACCT$SJ/cpuacct.usage") / 1000 ))
echo "# the job: ${JOB_USEC} us (/proc/$JP/stat); the session: ${SESS_USEC} us (cpuacct)"
nsrun 'exec "$1" --root "$2" gc' "$abs_top_builddir/helper/autogroup" "$ROOT" >"$T/gc.out" 2>&1
check "gc removed the session" test ! -e "$CPU$SJ"
gcrec() { collected; grep -E "^node$$ autogroup\[[0-9]+\]: session $(re_escape "$SJ") removed: " "$COLLECTED"; }
for _ in $(seq 600); do gcrec >/dev/null && break; sleep 0.05; done
check "gc's record arrived through the page's filter (program autogroup)" gcrec
check_eq "gc's record: the session's CPU up to its removal (cpuacct)" "$SESS_USEC" \
        "$(gcrec | sed -n 's/.* cpu_usec=\([0-9]*\) .*by=gc$/\1/p')"
LING=$(grep -E "session $(re_escape "$SJ") lingering: " "$COLLECTED" | sed -n 's/.* cpu_usec=\([0-9]*\) .*/\1/p')
check "the lingering record (at logout) lacks the job's CPU: $LING < $JOB_USEC" test "${LING:-0}" -lt "$JOB_USEC"
summary
sed 's/^/# /' "$T/summary"
check_eq "the summary: one line more, for that user" 3 "$(wc -l <"$T/summary")"
SUM=$(awk -v u="$UC" '$1 == u { print $2 }' "$T/summary")
check_eq "the summary gives the user the session's CPU up to its removal" \
        "$(awk -v x="$SESS_USEC" 'BEGIN { printf "%.3f", x / 1e6 }')" "$SUM"
check "the summary includes the CPU the job used after the logout: $SUM s >= $JOB_USEC us" \
        awk -v s="$SUM" -v j="$JOB_USEC" 'BEGIN { exit !(s * 1e6 >= j) }'
check_eq "the first two users' totals unchanged" "$(sum_of "$UA") $(sum_of "$ODD_ENC")" \
        "$(awk -v u="$UA" '$1 == u { print $2 }' "$T/summary") $(awk -v u="$ODD_ENC" '$1 == u { print $2 }' "$T/summary")"

echo "# 5. the page's journalctl pattern picks what the summary adds"
PAT=$(perl -0ne "print \$1 if /--grep\s+'([^']+)'/" "$FLEET")
check "the page names a pattern: '$PAT'" test -n "$PAT"
check_eq "the records the pattern picks: the closed and removed ones (21)" 21 "$(grep -cE -- "$PAT" "$COLLECTED")"
check_not "and no lingering one" sh -c 'grep -E -- "$1" "$2" | grep -q " lingering: "' sh "$PAT" "$COLLECTED"
check "gc's among them" sh -c 'grep -E -- "$1" "$2" | grep -q " by=gc$"' sh "$PAT" "$COLLECTED"

kill "$SP" "$RP"; wait "$SP" "$RP" 2>/dev/null
finish
