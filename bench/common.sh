# Shared helpers of the benchmark scripts (sourced; bash). Not a test library:
# benchmarks print tables, not pass/fail counts, and are never run by make check.
#
# Everything a benchmark makes is named after its PID and removed by the EXIT
# trap, even on failure or ^C: throw-away users (agb<PID><letter>), the cgroup
# root agbench-<PID> below the cpu hierarchy, the temp dir, and the processes
# it started (tracked by PID, and the throw-away users' own processes).
set -u

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
: "${abs_top_builddir:=$(cd "$BENCH_DIR/.." && pwd)}"
: "${abs_top_srcdir:=$abs_top_builddir}"
# tests/lib.sh's functions (pam_other, the private sshd ...) and paths (AG_MODULE,
# AGDRV, HELPER, CPU); add_user and track_pid are the benchmarks' own, below
AG_LIB_FUNCS_ONLY=1 . "$abs_top_srcdir/tests/lib.sh"
# agdrv's session processes check for their stop file once a second at most:
# frequent wake-ups in a session disturb the kernel's group load balancing
export AGDRV_WAIT_MAX_MS=1000
BIN="$abs_top_builddir/bench"
NCPU=$(nproc)
TAG="agb$$"
ROOT="agbench-$$"
CG="$CPU/$ROOT"
CGH="$CPU/$ROOT-hand"   # bench/fairness: hand-made groups of the same shape, for comparison

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (it opens real PAM sessions and makes cgroups)"
# CGV: the cgroup version the benchmark runs on. v1 (the cpu hierarchy at
# $CPU) for every script; a script that can also run on a pure cgroup2 mount
# with the cpu controller at the root (the v2 guest, bench/load-guest) sets
# BENCH_CGV2=1 before sourcing this file: CPU is then /sys/fs/cgroup.
CGV=1
if [ ! -f "$CPU/cpu.shares" ] && [ "${BENCH_CGV2:-0}" = 1 ] &&
        [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] &&
        grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
        CGV=2 CPU=/sys/fs/cgroup CG="/sys/fs/cgroup/$ROOT" CGH="/sys/fs/cgroup/$ROOT-hand"
fi
[ -f "$CPU/cpu.shares" ] || [ "$CGV" = 2 ] || die "no cgroup v1 cpu hierarchy at $CPU$(
        [ "${BENCH_CGV2:-0}" = 1 ] && echo ", nor a cgroup2 mount with cpu at /sys/fs/cgroup")"
# cpu_cg PID: the cpu cgroup of PID (v1: the cpu hierarchy's line, v2: the "0::" line)
cpu_cg() {
        if [ "$CGV" = 2 ]; then sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null
        else awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3 }' "/proc/$1/cgroup" 2>/dev/null; fi
}
for b in "$AGDRV" "$AG_MODULE" "$BIN/cpushare" "$BIN/sleeper" "$BIN/loginbench" "$BIN/execloop"; do
        [ -e "$b" ] || die "$b is missing: run 'make bench' first"
done

T=$(mktemp -d "/tmp/agbench.$$.XXXXXX")
chmod 755 "$T"
U="$T/u"; mkdir -m 1777 "$U"   # where the throw-away users write
B_USERS=""
B_PIDS=""

# The baselines need the benchmark in the root cpu cgroup: kernel autogroup
# applies only there. Move this shell (only this one) if it sits elsewhere.
if [ "$(cpu_cg $$)" != / ]; then
        echo "# note: moving this benchmark ($$) to the root cpu cgroup for the baselines"
        echo $$ >"$CPU/cgroup.procs" || die "cannot move to the root cpu cgroup"
fi

# add_user NAME: a throw-away user without a home, removed at exit
B_FILES=""      # files outside $T a benchmark made (bench/login: /etc/cgrules.conf when absent)
add_user() { useradd -M -N -s /bin/sh "$1" >/dev/null || die "useradd $1"; B_USERS="$B_USERS $1"; }
track_pid() { B_PIDS="$B_PIDS $*"; }

# kill_pidfile FILE: kill the processes whose pids a spinner wrote to FILE
kill_pidfile() {
        local p
        [ -f "$1" ] || return 0
        for p in $(cat "$1"); do kill -KILL "$p" 2>/dev/null; done
}

# wait_lines FILE N: wait (at most 20 s) until FILE has N lines
wait_lines() {
        local i
        for i in $(seq 400); do
                [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
                sleep 0.05
        done
        return 1
}

# service files: "permit" (pam_permit only) and "module" (pam_permit + the module)
write_services() { # write_services MODULE-OPTIONS...
        pam_other
        printf 'session required pam_permit.so\n' >"$T/permit"
        printf 'session required pam_permit.so\nsession optional %s %s\n' "$AG_MODULE" "$*" >"$T/module"
}

# sshd_start SVC "USER..." [SSHD_CONFIG_LINE...]: a copy of the system's sshd
# (tests/lib.sh), started under the name SVC (sshd names its PAM service
# after argv[0]) on 127.0.0.1, in a private mount namespace whose /etc/pam.d
# is $T/pamd, a copy of the host's (the host's files stay untouched; the
# caller writes $T/pamd/SVC), for the throw-away USERs (each with its home
# below $T, e.g. $T/home, made here) and a key pair made for them. Sets PORT,
# SSHD_PID (the listening sshd itself) and SSHOPT, the client's options but
# the port; bench_cleanup stops it.
sshd_start() {
        local svc=$1 users=$2 u g h
        shift 2
        mkdir -m 755 "$T/pamd"
        cp -a /etc/pam.d/. "$T/pamd/"
        sshd_port 4111
        sshd_keys || die "ssh-keygen"
        for u in $users; do
                g=$(id -g "$u")
                h=$(getent passwd "$u" | cut -d: -f6)
                case $h in "$T"/*) ;; *) die "the home of $u is not below $T: $h" ;; esac
                install -d -m 755 -o "$u" -g "$g" "$h"
                install -d -m 700 -o "$u" -g "$g" "$h/.ssh"
                install -m 600 -o "$u" -g "$g" "$T/id.pub" "$h/.ssh/authorized_keys"
        done
        sshd_write_config "$users" "StrictModes no" "LogLevel ERROR" "$@"
        sshd_run "$svc" "$T/pamd"
        for _ in $(seq 200); do ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q . && break; sleep 0.05; done
        ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q . || die "sshd did not start: $(cat "$T/sshd.log")"
        [ "$(readlink "/proc/$SSHD_PID/exe")" = "$(readlink -f "$SSHD_BIN")" ] ||
                die "pid $SSHD_PID is not the listening sshd ($(readlink "/proc/$SSHD_PID/exe"))"
        ss -Hltnp "sport = :$PORT" 2>/dev/null | grep -q "pid=$SSHD_PID," ||
                die "pid $SSHD_PID does not listen on $PORT: $(ss -Hltnp "sport = :$PORT")"
        SSHOPT=("${SSH_OPTS[@]}" -o ConnectTimeout=30)
}

bench_cleanup() {
        local p u f c
        trap - EXIT INT TERM
        [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null && wait "$SSHD_PID" 2>/dev/null
        for p in $B_PIDS; do kill -KILL "$p" 2>/dev/null; done
        for f in "$U"/*.pids; do [ -f "$f" ] && kill_pidfile "$f"; done
        for u in $B_USERS; do pkill -KILL -u "$u" 2>/dev/null; done
        for p in $B_PIDS; do wait "$p" 2>/dev/null; done
        sleep 0.1
        # the module's cpuacct mirror of the tree, on v1 with cpuacct mounted on its own
        local acct=""
        [ -d "/sys/fs/cgroup/cpuacct/$ROOT" ] && [ "$CG" != "/sys/fs/cgroup/cpuacct/$ROOT" ] && acct="/sys/fs/cgroup/cpuacct/$ROOT"
        for c in "$CG" "$CGH" $acct; do
                [ -d "$c" ] || continue
                # only processes of this benchmark can be in its trees
                for p in $(find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
                sleep 0.1
                find "$c" -depth -type d -delete 2>/dev/null
                [ -d "$c" ] && echo "# warning: $c could not be removed entirely" >&2
        done
        for u in $B_USERS; do userdel "$u" >/dev/null 2>&1; done
        [ -n "${TRI:-}" ] && rmdir "$TRI" 2>/dev/null
        for f in $B_FILES; do rm -f "$f"; done
        rm -rf "$T"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# pct NUM DEN: NUM/DEN as a percentage with one decimal
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", 100 * a / b; else printf "n/a" }'; }
# ratio NUM DEN: NUM/DEN with two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'; }

machine() {
        echo "# machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $NCPU CPUs, $(uname -sr)," \
                "autogroup $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo n/a)," \
                "load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# Who held the CPU while a sleeper waited (bench/latency -k, bench/terminals).
# tracefs is mounted in the benchmark's own mount namespace (the script
# re-runs itself under unshare -m first), the events go to a tracefs instance
# of its own, removed at exit. Of the sleeper's wakeups later than 1 ms, how
# many found one of the benchmark's own spinners on the CPU when the sleeper
# finally ran (sched_switch's prev_pid) and how many another process (other
# users' load on a shared machine, kernel threads). TRI is empty without tracefs.
TRI=""
trace_setup() {
        [ -d /sys/kernel/tracing/instances ] || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
        mkdir "/sys/kernel/tracing/instances/agbench-$$" 2>/dev/null && TRI="/sys/kernel/tracing/instances/agbench-$$"
        return 0
}
trace_start() {
        [ -n "$TRI" ] || return 0
        echo 0 >"$TRI/tracing_on"; : >"$TRI/trace"
        echo 'comm == "sleeper"' >"$TRI/events/sched/sched_waking/filter"
        echo 'next_comm == "sleeper"' >"$TRI/events/sched/sched_switch/filter"
        echo 1 >"$TRI/events/sched/sched_waking/enable"; echo 1 >"$TRI/events/sched/sched_switch/enable"
        echo 1 >"$TRI/tracing_on"
}
trace_stop() { # trace_stop PIDFILE: "late_own=N late_other=N", own = a pid of PIDFILE
        [ -n "$TRI" ] || return 0
        echo 0 >"$TRI/tracing_on"
        awk -v pids=" $(tr '\n' ' ' <"$1")" '
                /sched_waking:/ { t = $0; sub(/:? *sched_waking:.*/, "", t); n = split(t, f, " "); w = f[n] + 0; next }
                /sched_switch:/ && w > 0 { t = $0; sub(/:? *sched_switch:.*/, "", t); n = split(t, f, " ")
                        if ((f[n] - w) * 1e6 > 1000) { match($0, /prev_pid=[0-9]+/)
                                if (index(pids, " " substr($0, RSTART + 9, RLENGTH - 9) " ")) m++; else o++ }
                        w = 0 }
                END { printf "late_own=%d late_other=%d\n", m, o }' "$TRI/trace"
}
