# Shared shell helpers for the host tests (sourced). TAP-like output; the
# closing line "N passed, N failed, N skipped" is what .ci/run adds up.
# Everything a test makes is named after its PID and removed by the EXIT trap.
set -u

AG_PASS=0
AG_FAIL=0
AG_SKIP=0
: "${abs_top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${abs_top_srcdir:=$abs_top_builddir}"
: "${AG_MODULE:=$abs_top_builddir/pam_autogroup/.libs/pam_autogroup.so}"
AGDRV="$abs_top_builddir/tests/host/agdrv"
LOGCAP="$abs_top_builddir/tests/host/logcap"
CPU=/sys/fs/cgroup/cpu
UNIFIED=/sys/fs/cgroup/unified
TAG="ag$$"
T=$(mktemp -d "/tmp/agtest.$$.XXXXXX")
chmod 755 "$T"
U="$T/u"; mkdir -m 1777 "$U"   # where the throw-away users may write
AG_USERS=""
AG_GROUPS=""
AG_PIDS=""
AG_CGROOTS=""
AG_LOGCAP_PID=""
SYSLOG="$T/syslog"
: >"$SYSLOG"

ok()      { AG_PASS=$((AG_PASS + 1)); echo "ok - $*"; }
not_ok()  { AG_FAIL=$((AG_FAIL + 1)); echo "not ok - $*"; }
skip()    { AG_SKIP=$((AG_SKIP + 1)); echo "ok - # SKIP $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds
check()   { local d="$1"; shift; if "$@" >/dev/null 2>&1; then ok "$d"; else not_ok "$d"; fi; }
# check_not DESCRIPTION COMMAND...: passes when the command fails
check_not() { local d="$1"; shift; if "$@" >/dev/null 2>&1; then not_ok "$d"; else ok "$d"; fi; }
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
        if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (expected '$2', got '$3')"; fi
}

require_root() {
        if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root"; exit 77; fi
}

# add_user NAME [GROUP...]: a throw-away user (no home), removed at exit
add_user() {
        local u="$1"; shift
        local groups
        groups=$(IFS=,; echo "$*")
        useradd -M -N -s /bin/sh ${groups:+-G "$groups"} "$u" >/dev/null
        AG_USERS="$AG_USERS $u"
}
add_group() { groupadd "$1" >/dev/null; AG_GROUPS="$AG_GROUPS $1"; }
# pid_start PID: the process's start time (field 22 of /proc/PID/stat), empty once it is gone
pid_start() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0; set -- ${s##*) }; echo "${20}"; }
# track_pid PID...: processes this test started, killed at exit. Each is kept
# with its start time, so that a PID the kernel has reused for someone
# else's process by then is left alone.
track_pid() {
        local p t
        for p in "$@"; do
                t=$(pid_start "$p")
                if [ -n "$t" ]; then AG_PIDS="$AG_PIDS $p:$t"; fi
        done
}

# require_guest_v2: for the scripts of tests/guest/ that run inside the guest
# lane (tests/vm/test-guest.sh): skip (77) anywhere else (AG_IN_GUEST=1
# overrides) and unless /sys/fs/cgroup is cgroup2 with the cpu controller.
# Sets CG2.
require_guest_v2() {
        CG2=/sys/fs/cgroup
        if [ ! -e /etc/vm-out ] && [ "${AG_IN_GUEST:-0}" != 1 ]; then
                echo "# runs inside the guest lane only (tests/vm/test-guest.sh); AG_IN_GUEST=1 overrides"
                echo "0 passed, 0 failed, 1 skipped"; exit 77
        fi
        if [ "$(stat -f -c %T "$CG2" 2>/dev/null)" != cgroup2fs ] || ! grep -qw cpu "$CG2/cgroup.controllers"; then
                echo "# $CG2 is not a cgroup2 mount with the cpu controller"
                echo "0 passed, 0 failed, 1 skipped"; exit 77
        fi
}

# as_user USER COMMAND: run a shell command as the unprivileged user
as_user() { local u="$1"; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- sh -c "$*"; }

# Start a syslog receiver on /dev/log when the machine has none.
# Tests that capture syslog take turns (make -j check runs them in parallel):
# a lock held until the test exits, waited for at most 10 minutes.
start_syslog() {
        exec {AG_SYSLOG_LOCK}>/run/lock/pam-autogroup-test-syslog.lock
        flock -w 600 "$AG_SYSLOG_LOCK" || return 1
        # a receiver of an earlier run that was killed leaves its socket behind:
        # nobody listens on it, so it is ours to remove (we hold the lock)
        if [ -S /dev/log ] && "$LOGCAP" --stale /dev/log; then rm -f /dev/log; fi
        [ -e /dev/log ] && return 1
        "$LOGCAP" /dev/log "$SYSLOG" >"$T/logcap.out" 2>&1 &
        AG_LOGCAP_PID=$!
        for _ in $(seq 100); do grep -q ready "$T/logcap.out" 2>/dev/null && return 0; sleep 0.05; done
        return 1
}
have_syslog() { [ -n "$AG_LOGCAP_PID" ]; }
# log_has DESCRIPTION PATTERN: the captured syslog has a line matching PATTERN
log_has() {
        if ! have_syslog; then skip "$1 (no syslog capture: /dev/log is taken)"; return; fi
        local i
        for i in $(seq 50); do grep -qE -- "$2" "$SYSLOG" && break; sleep 0.02; done
        if grep -qE -- "$2" "$SYSLOG"; then ok "$1"; else not_ok "$1 (no log line matching '$2')"; fi
}

# wait_for FILE PATTERN: wait (at most 30 s) until FILE has a line matching PATTERN
wait_for() {
        local i
        for i in $(seq 600); do grep -qE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
        return 1
}

# rm_cgroup_tree DIR: remove a test's cgroup tree bottom-up (only empty groups can go)
rm_cgroup_tree() {
        [ -d "$1" ] || return 0
        find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
}

ag_cleanup() {
        local p u g c
        # the module mirrors a v1 test root in a separate cpuacct hierarchy (lib/cgroup/acct.c)
        for c in $AG_CGROOTS; do
                case "$c" in "$CPU"/?*) [ -d "/sys/fs/cgroup/cpuacct/${c#"$CPU"/}" ] &&
                        AG_CGROOTS="$AG_CGROOTS /sys/fs/cgroup/cpuacct/${c#"$CPU"/}";; esac
        done
        for p in $AG_PIDS; do
                if [ "$(pid_start "${p%%:*}")" = "${p#*:}" ]; then kill -KILL "${p%%:*}" 2>/dev/null; fi
        done
        for p in $AG_PIDS; do wait "${p%%:*}" 2>/dev/null; done
        # processes still in a test tree were started by this test (its users only)
        for c in $AG_CGROOTS; do
                [ -d "$c" ] || continue
                for p in $(find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        done
        for u in $AG_USERS; do pkill -KILL -u "$u" 2>/dev/null; done
        sleep 0.1
        for c in $AG_CGROOTS; do rm_cgroup_tree "$c"; done
        for u in $AG_USERS; do userdel "$u" >/dev/null 2>&1; done
        for g in $AG_GROUPS; do groupdel "$g" >/dev/null 2>&1; done
        if [ -n "$AG_LOGCAP_PID" ]; then
                kill "$AG_LOGCAP_PID" 2>/dev/null; wait "$AG_LOGCAP_PID" 2>/dev/null
                [ -S /dev/log ] && rm -f /dev/log
        fi
        rm -rf "$T"
}

finish() {
        echo "$AG_PASS passed, $AG_FAIL failed, $AG_SKIP skipped"
        [ "$AG_FAIL" -eq 0 ] || exit 1
        [ "$AG_PASS" -gt 0 ] || exit 77
        exit 0
}

trap ag_cleanup EXIT
trap 'exit 130' INT TERM
