#!/bin/bash
# Accounting that travels: the module's end-of-session records (lib/cgroup/acct.h)
# through a real syslog forwarding, two rsyslog instances of this test's own
# on loopback (private configs, work directories and pid files; neither
# touches /dev/log or the host's rsyslog):
#   - a "login node": rsyslogd reading a socket that is /dev/log inside the
#     private mount namespaces the logins run in, forwarding everything with
#     omfwd over TCP;
#   - a "collector": rsyslogd with imtcp on 127.0.0.1, writing a file.
# 20 sessions through real libpam (tests/host/agdrv), of two users, one of
# them named (through a private /etc/passwd) with a space, '=', a quote and
# '%': the collector's file holds every record, intact (every pair one
# key=value word, the keys in order) and in the order the sessions closed,
# and the summary line of doc/fleet.md sums CPU per user from it.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
[ -f "$CPU/cpu.shares" ] || { echo "1..0 # SKIP no cgroup v1 cpu hierarchy at $CPU"; exit 77; }
RSYSLOGD=$(command -v rsyslogd) || { echo "1..0 # SKIP rsyslog is not installed (bash .ci/apt-install rsyslog)"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP needs python3"; exit 77; }

ROOT="agtest-$$"
AG_CGROOTS="$CPU/$ROOT"
add_user "${TAG}a"; add_user "${TAG}b"
UA="${TAG}a"; UB="${TAG}b"; IA=$(id -u "$UA"); IB=$(id -u "$UB")
# UB's uid under a name a directory could hand out
ODD="x y=\"$$\"%"
ODD_ENC="x%20y%3D%22$$%22%25"
perl -pe 'BEGIN { ($u, $n) = splice(@ARGV, 0, 2) } s/^\Q$u\E:/$n:/' "$UB" "$ODD" /etc/passwd >"$T/passwd"
chmod 644 "$T/passwd"
CONF="$T/autogroup.conf"; printf '* weight 100\n' >"$CONF"; chmod 644 "$CONF"
printf '%s required pam_deny.so\n' auth account password session >"$T/other"
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s noaudit\n' "$AG_MODULE" "$ROOT" "$CONF" >"$T/agfwd"

# ---- the collector and the login node
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/rcv" "$T/snd"
COLLECTED="$T/rcv/collected.log"
cat >"$T/rcv.conf" <<EOF
global(workDirectory="$T/rcv")
module(load="imtcp")
template(name="line" type="string" string="%HOSTNAME% %syslogtag%%msg%\n")
ruleset(name="remote") {
        action(type="omfile" file="$COLLECTED" template="line")
}
input(type="imtcp" address="127.0.0.1" port="$PORT" ruleset="remote")
EOF
cat >"$T/snd.conf" <<EOF
global(workDirectory="$T/snd" localHostName="node$$")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="$HL_LOGSOCK" RateLimit.Interval="0" UseSpecialParser="off")
action(type="omfwd" target="127.0.0.1" port="$PORT" protocol="tcp" template="RSYSLOG_ForwardFormat"
       queue.type="LinkedList" action.resumeRetryCount="-1")
EOF
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
records() { grep -E 'pam_autogroup\(agfwd:session\): session [^ ]+ (closed|lingering): ' "$COLLECTED" 2>/dev/null; }
for _ in $(seq 600); do [ "$(records | wc -l)" -ge 20 ] && break; sleep 0.05; done
records >"$T/records"
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

echo "# 3. the summary line of doc/fleet.md: CPU seconds per user"
# doc/fleet.md "Accounting that travels" shows this line
awk '/ (closed|lingering): user=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
     if (f["scope"] == "session" && f["cpu_usec"] != "?") cpu[f["user"]] += f["cpu_usec"] }
     END { for (u in cpu) printf "%-20s %10.3f s\n", u, cpu[u] / 1e6 }' "$COLLECTED" | sort >"$T/summary"
sed 's/^/# /' "$T/summary"
check_eq "one line for each user" 2 "$(wc -l <"$T/summary")"
sum_of() { grep " user=$1 " "$T/records" | sed 's/.* cpu_usec=\([0-9]*\) .*/\1/' | awk '{ s += $1 } END { printf "%.3f", s / 1e6 }'; }
check_eq "the plain user's total" "$(sum_of "$UA")" "$(awk -v u="$UA" '$1 == u { print $2 }' "$T/summary")"
check_eq "the odd user's total" "$(sum_of "$ODD_ENC")" "$(awk -v u="$ODD_ENC" '$1 == u { print $2 }' "$T/summary")"

kill "$SP" "$RP"; wait "$SP" "$RP" 2>/dev/null
finish
