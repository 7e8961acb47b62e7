# Shared shell helpers for the host tests (sourced). TAP-like output; the
# closing line "N passed, N failed, N skipped" is what .ci/run adds up.
# Everything a test makes is named after its PID and removed by the EXIT trap.
set -u

# skip_all REASON: this script cannot run here: it says why in both forms the
# readers know ("1..0 # SKIP REASON" for .ci/sum-logs and host-lanes.sh, the
# counts line for .ci/run and tests/vmlib/lane.sh) and exits 77 (1 when a
# check has failed already)
skip_all() {
        echo "1..0 # SKIP $*"
        echo "${AG_PASS:-0} passed, ${AG_FAIL:-0} failed, $((${AG_SKIP:-0} + 1)) skipped"
        [ "${AG_FAIL:-0}" -eq 0 ] || exit 1
        exit 77
}
# AG_PRIVATE_MOUNTS=1 before sourcing: the script first re-executes itself
# in a private mount namespace (unshare -m), where it may bind-mount copies
# over the host's files (/etc/pam.d, /run ...) that the host never sees
if [ "${AG_PRIVATE_MOUNTS:-0}" = 1 ] && [ -z "${AG_PRIVATE_MOUNTS_IN:-}" ]; then
        [ "$(id -u)" = 0 ] || skip_all "needs root"
        command -v unshare >/dev/null 2>&1 || skip_all "unshare missing"
        AG_PRIVATE_MOUNTS_IN=1 exec unshare -m --propagation private -- bash "$0" "$@"
fi
unset AG_PRIVATE_MOUNTS AG_PRIVATE_MOUNTS_IN

# the build under test (a bench script sets abs_top_builddir first)
: "${abs_top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${abs_top_srcdir:=$abs_top_builddir}"
: "${AG_MODULE:=$abs_top_builddir/pam_autogroup/.libs/pam_autogroup.so}"
AGDRV="$abs_top_builddir/tests/host/agdrv"
HELPER="${AG_HELPER:-$abs_top_builddir/helper/autogroup}"
LOGCAP="$abs_top_builddir/tests/host/logcap"
CPU=/sys/fs/cgroup/cpu
UNIFIED=/sys/fs/cgroup/unified

# ag_init: a test's state: its counts, its name TAG, its temp dir T (U in it
# for the throw-away users), what the EXIT trap removes. Run when this file is
# sourced, unless AG_LIB_FUNCS_ONLY=1 (bench/common.sh: the functions only).
ag_init() {
        AG_PASS=0
        AG_FAIL=0
        AG_SKIP=0
        TAG="ag$$"
        T=$(mktemp -d "/tmp/agtest.$$.XXXXXX")
        chmod 755 "$T"
        U="$T/u"; mkdir -m 1777 "$U"   # where the throw-away users may write
        AG_USERS=""
        AG_HOME_USERS=""
        AG_DAEMONS=""
        AG_GROUPS=""
        AG_PIDS=""
        AG_CGROOTS=""
        AG_LOGCAP_PID=""
        SYSLOG="$T/syslog"
        : >"$SYSLOG"
        trap ag_cleanup EXIT
        trap 'exit 130' INT TERM
}

# ok / not_ok / skip DESCRIPTION: one passed, failed or skipped check
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

# require_root: skip unless run as root
require_root() { [ "$(id -u)" = 0 ] || skip_all "needs root"; }
# require_v1_cpu [FILE]: skip unless the cgroup v1 cpu hierarchy is at $CPU
# (FILE: the interface file it must have, cpu.shares unless given)
require_v1_cpu() { [ -f "$CPU/${1:-cpu.shares}" ] || skip_all "no cgroup v1 cpu hierarchy at $CPU"; }
# require_own_cpuacct: skip unless cpuacct is a v1 hierarchy of its own (not
# with cpu) at $ACCT, /sys/fs/cgroup/cpuacct
require_own_cpuacct() {
        ACCT=/sys/fs/cgroup/cpuacct
        if [ ! -f "$ACCT/cpuacct.usage" ] || [ -f "$ACCT/cpu.shares" ] || [ -f "$CPU/cpuacct.usage" ]; then
                skip_all "no cpuacct hierarchy of its own at $ACCT"
        fi
}
# require_helper: skip unless the helper $HELPER (AG_HELPER, else the build's) is built
require_helper() { [ -x "$HELPER" ] || skip_all "$HELPER not built"; }
# require_cmds "PACKAGES" COMMAND...: skip unless every COMMAND is installed
# (the reason names the missing one and the PACKAGES that bring them)
require_cmds() {
        local pkgs="$1" c; shift
        for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip_all "missing $c ($pkgs)"; done
}

# add_user NAME [GROUP...]: a throw-away user (no home), removed at exit
add_user() {
        local u="$1"; shift
        local groups
        groups=$(IFS=,; echo "$*")
        useradd -M -N -s /bin/sh ${groups:+-G "$groups"} "$u" >/dev/null
        AG_USERS="$AG_USERS $u"
}
# add_home_user NAME: a throw-away user with a home directory (logins through
# sshd, su -l), removed with its home at exit; the test fails at once without it
add_home_user() {
        useradd -m -s /bin/sh "$1" >/dev/null || { echo "not ok - useradd -m $1"; exit 1; }
        AG_HOME_USERS="$AG_HOME_USERS $1"
}
# add_group NAME: a throw-away group, removed at exit
add_group() { groupadd "$1" >/dev/null; AG_GROUPS="$AG_GROUPS $1"; }
# new_user X [GROUP...]: add_user ${TAG}X; sets UX to its name and IX to its
# uid (X upper-cased: new_user a sets UA and IA)
new_user() {
        local x="${1^^}" n="${TAG}$1"
        shift
        add_user "$n" "$@"
        printf -v "U$x" %s "$n"
        printf -v "I$x" %s "$(id -u "$n")"
}
# test_root NAME [HIERARCHY]: this test's <root>, NAME-<PID>: sets ROOT and CG,
# its group in HIERARCHY ($CPU unless given), which the EXIT trap removes
test_root() {
        ROOT="$1-$$"
        CG="${2:-$CPU}/$ROOT"
        AG_CGROOTS="$AG_CGROOTS $CG"
}
# test_outside: OUT, an unrelated group of the cpu hierarchy outside <root>
# (what must survive everything, or where a caller comes from), removed at exit
test_outside() {
        OUT="$CPU/agout-$$"
        AG_CGROOTS="$AG_CGROOTS $OUT"
}
# conf_file FILE LINE...: a policy file, one rule an argument, mode 644 (the
# module refuses a group- or world-writable one)
conf_file() { local f="$1"; shift; printf '%s\n' "$@" >"$f"; chmod 644 "$f"; }
# write_conf LINE...: the policy file CONF, $T/autogroup.conf
write_conf() { CONF="$T/autogroup.conf"; conf_file "$CONF" "$@"; }
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

# require_guest_v2 [LANE]: for the scripts of tests/guest/ that run inside a
# guest lane (LANE, tests/vm/test-guest.sh unless given): skip (77) anywhere
# else (AG_IN_GUEST=1 overrides) and unless /sys/fs/cgroup is cgroup2 with
# the cpu controller. Sets CG2.
require_guest_v2() {
        CG2=/sys/fs/cgroup
        require_guest "$@"
        if [ "$(stat -f -c %T "$CG2" 2>/dev/null)" != cgroup2fs ] || ! grep -qw cpu "$CG2/cgroup.controllers"; then
                skip_all "$CG2 is not a cgroup2 mount with the cpu controller"
        fi
}
# require_guest [LANE]: skip unless inside a guest lane (AG_IN_GUEST=1 overrides)
require_guest() {
        [ -e /etc/vm-out ] || [ "${AG_IN_GUEST:-0}" = 1 ] ||
                skip_all "runs inside the guest lane only (${1:-tests/vm/test-guest.sh}); AG_IN_GUEST=1 overrides"
}

# pam_other [DIR]: DIR/other ($T/other unless given), the service libpam falls
# back to, denying everything
pam_other() { printf '%s required pam_deny.so\n' auth account password session >"${1:-$T}/other"; }
# pam_service NAME OPTIONS...: the service file $T/NAME: pam_permit, then the
# module with OPTIONS, as "optional" (CONTROL=required for another control)
pam_service() {
        local n="$1"; shift
        printf 'session required pam_permit.so\nsession %s %s %s\n' "${CONTROL:-optional}" "$AG_MODULE" "$*" >"$T/$n"
}
# drv [SERVICE] USER ACTIONS...: tests/host/agdrv with the service files of $T.
# The script's settings: SVC, the service put first (scripts with one
# service); BOUND, seconds after which agdrv is killed (a hang becomes a
# failure); DRV_WRAP, an array: the command agdrv runs under (a namespace)
drv() {
        local bound=()
        [ -z "${BOUND:-}" ] || bound=(timeout -k 5 "$BOUND")
        "${DRV_WRAP[@]}" "${bound[@]}" "$AGDRV" --pam "$T" ${SVC:+"$SVC"} "$@"
}
# bg NAME USER ACTIONS...: a session (drv; BG_SVC, when set, is its service)
# that stays open until $T/NAME.go exists, its output in $T/NAME.out, agdrv's
# pid in PID_NAME; returns once the session is open. BG_HOLD=user: a process
# of the user's in login/ waits for NAME.go (agdrv's wait-file gives up after
# 120 s)
bg() {
        local n="$1" u="$2" hold; shift 2
        hold=(wait-file "$T/$n.go")
        [ "${BG_HOLD:-}" != user ] || hold=(run-user "until [ -e $T/$n.go ]; do sleep 0.1; done")
        SVC=${BG_SVC:-${SVC:-}} drv "$u" open env cgroup "$@" "${hold[@]}" close cgroup >"$T/$n.out" 2>&1 &
        track_pid $!
        eval "PID_$n=$!"
        wait_for "$T/$n.out" '^cgroup='
}
# hold NAME USER [ACTIONS...]: a session (drv) of USER with a process of the
# user's (HOLD_CMD, which writes its pid to @PID@; a sleep unless set) that
# outlives it; the session closes once $T/NAME.go exists. Output in
# $T/NAME.out, agdrv's pid in PID_NAME. Returns once that process runs;
# HOLD_PID is its pid
hold() {
        local n="$1" u="$2" c="${HOLD_CMD:-echo \$\$ >@PID@; exec sleep 300}"; shift 2
        drv "$u" open env "$@" spawn-user "${c//@PID@/$U/$n.pid}" wait-file "$T/$n.go" close >"$T/$n.out" 2>&1 &
        track_pid $!
        eval "PID_$n=$!"
        wait_for "$T/$n.out" '^AUTOGROUP_SESSION=' && wait_for "$U/$n.pid" '^[0-9]+$'
        HOLD_PID=$(cat "$U/$n.pid" 2>/dev/null)
        track_pid "$HOLD_PID"
}
# closed NAME: release bg's session NAME and wait for its close
closed() { touch "$T/$1.go"; eval "wait \$PID_$1"; }
# val KEY NAME|FILE: the first KEY=value of bg's $T/NAME.out (or of FILE, a path)
val() {
        local f="$T/$2.out"
        case "$2" in */*) f="$2" ;; esac
        sed -n "s/^$1=//p" "$f" 2>/dev/null | head -n1
}
# vals KEY FILE: every KEY=value of FILE, one a line
vals() { sed -n "s/^$1=//p" "$2"; }
# owner PATH: the user name owning PATH (empty when it is gone)
owner() { stat -c %U "$1" 2>/dev/null; }
# cgof PID: PID's cgroup in the v1 cpu hierarchy (empty once it is gone)
cgof() { sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$1/cgroup" 2>/dev/null; }
# gone PATH [TENTHS]: wait until PATH is gone (at most TENTHS/10 s, 15 s unless given)
gone() { local _; for _ in $(seq "${2:-150}"); do [ -e "$1" ] || return 0; sleep 0.1; done; return 1; }
# exited PID: the process has ended (gone, or a zombie waiting to be reaped:
# it runs nothing and is in no cgroup's cgroup.procs any more)
exited() {
        local s
        s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
        s=${s##*) }
        [ "${s%% *}" = Z ]
}
# kill_ended PID...: SIGTERM to each, then wait (at most 30 s) until each has
# exited: a loaded machine can take longer than any fixed sleep
kill_ended() {
        local p _
        kill "$@" 2>/dev/null
        for p in "$@"; do
                for _ in $(seq 300); do exited "$p" && break; sleep 0.1; done
        done
}
# pamd_sums [PATH...]: checksums of every file of /etc/pam.d (and PATHs), to
# show at the end that the host's files never changed
pamd_sums() { find /etc/pam.d "$@" -type f -print0 | sort -z | xargs -0 sha256sum; }

# daemon_pid PID: a daemon this test started (sshd, cron): stopped with
# SIGTERM and waited for first at exit (unless it is gone by then)
daemon_pid() { AG_DAEMONS="$AG_DAEMONS $1:$(pid_start "$1")"; }
# stop_daemon PID: stop it now (SIGTERM, then wait for it)
stop_daemon() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# within COMMAND: the shell COMMAND with $T/pamd as /etc/pam.d, in a mount
# namespace of its own (the host's /etc/pam.d is never touched)
within() { unshare -m --propagation private sh -c "mount --bind '$T/pamd' /etc/pam.d && $1"; }
# private_cron USER COMMAND: a crontab that runs COMMAND as USER every
# minute, an empty cron.d and cron spool, bind-mounted over the host's (in an
# AG_PRIVATE_MOUNTS script); non-zero when a mount failed
private_cron() {
        local rc=0
        mkdir -m 755 "$T/cron.d"
        mkdir -m 1730 "$T/spool"
        printf 'SHELL=/bin/sh\nPATH=/usr/bin:/bin\n* * * * * %s %s\n' "$1" "$2" >"$T/crontab"
        chmod 644 "$T/crontab"
        mount --bind "$T/crontab" /etc/crontab || rc=1
        mount --bind "$T/cron.d" /etc/cron.d || rc=1
        [ ! -d /var/spool/cron/crontabs ] || mount --bind "$T/spool" /var/spool/cron/crontabs || rc=1
        return "$rc"
}
# private_run: copies of the login records (wtmp, btmp, lastlog) bind-mounted
# over the host's, and an empty /run (tmpfs, with /run/lock) for the clients'
# own files (in an AG_PRIVATE_MOUNTS script); non-zero when a mount failed
private_run() {
        local f rc=0
        for f in /var/log/wtmp /var/log/btmp /var/log/lastlog; do
                [ -f "$f" ] || continue
                cp -p "$f" "$T/$(basename "$f")" && mount --bind "$T/$(basename "$f")" "$f" || rc=1
        done
        mount -t tmpfs -o mode=755 tmpfs /run || rc=1
        mkdir -p -m 1777 /run/lock
        return "$rc"
}

# attack DESCRIPTION COMMAND: queue an attack; run_attacks USER runs the queue
# in one shell as USER (one exec instead of one each: execs are slow under
# emulation) and expects every command to fail: one check each
attack() { printf '%s\t%s\n' "$1" "$2" >>"$T/attacks"; }
# run_attacks USER: run the queued attacks as USER, one check each
run_attacks() {
        as_user "$1" "while IFS='	' read -r d c; do if (eval \"\$c\") >/dev/null 2>&1; then echo \"BAD	\$d\"; else echo \"OK	\$d\"; fi; done <$T/attacks" >"$T/attacks.out" 2>&1
        while IFS='	' read -r d _; do
                if grep -qxF "OK	$d" "$T/attacks.out"; then ok "$d"; else not_ok "$d"; fi
        done <"$T/attacks"
        : >"$T/attacks"
}

# nomkdir_preload: sets PRELOAD for LD_PRELOAD of agdrv: tests/host/nomkdir.so
# (a mkdir the kernel refuses, AG_TEST_NOMKDIR=NAME:FILE), after ASan's
# runtime when agdrv has it; fails when nomkdir.so is not built
nomkdir_preload() {
        local asan
        PRELOAD="$abs_top_builddir/tests/host/.libs/nomkdir.so"
        [ -f "$PRELOAD" ] || return 1
        asan=$(ldd "$AGDRV" 2>/dev/null | awk '/libasan/ { print $3; exit }')
        [ -z "$asan" ] || PRELOAD="$asan:$PRELOAD"
}

# between LOW HIGH VALUE: VALUE is a number from LOW to HIGH
between() { [ -n "$3" ] && [ "$3" != "?" ] && [ "$3" -ge "$1" ] && [ "$3" -le "$2" ]; }
# check_grew DESCRIPTION BEFORE AFTER MAX: AFTER is a number above BEFORE, at most MAX
check_grew() { check "$1: $2 -> $3" between "$(($2 + 1))" "$4" "$3"; }
# scpu FILE PATH: the cpu_usec of group PATH in FILE, "autogroup status --json"
scpu() { P="$2" perl -ne 'print "$1\n" if /"path":"\Q$ENV{P}\E","kind":"[a-z]+"[^{}]*?"cpu_usec":(\d+|null)/' "$1"; }

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
# have_syslog: start_syslog captures this test's syslog
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

# ag_cleanup: the EXIT trap: stops, kills and removes what the test made
ag_cleanup() {
        local p u g c
        for p in $AG_DAEMONS; do
                if [ "$(pid_start "${p%%:*}")" = "${p#*:}" ]; then stop_daemon "${p%%:*}"; fi
        done
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
        for u in $AG_USERS $AG_HOME_USERS; do pkill -KILL -u "$u" 2>/dev/null; done
        sleep 0.1
        for c in $AG_CGROOTS; do rm_cgroup_tree "$c"; done
        for u in $AG_USERS; do userdel "$u" >/dev/null 2>&1; done
        for u in $AG_HOME_USERS; do userdel -r "$u" >/dev/null 2>&1; done
        for g in $AG_GROUPS; do groupdel "$g" >/dev/null 2>&1; done
        if [ -n "$AG_LOGCAP_PID" ]; then
                kill "$AG_LOGCAP_PID" 2>/dev/null; wait "$AG_LOGCAP_PID" 2>/dev/null
                [ -S /dev/log ] && rm -f /dev/log
        fi
        rm -rf "$T"
}

# finish: the closing counts line; exit 1 on a failure, 77 when nothing passed
finish() {
        echo "$AG_PASS passed, $AG_FAIL failed, $AG_SKIP skipped"
        [ "$AG_FAIL" -eq 0 ] || exit 1
        [ "$AG_PASS" -gt 0 ] || exit 77
        exit 0
}

# A private sshd on 127.0.0.1 (tests/host/test-clients.sh, test-sshd-end.sh,
# test-behaviour.sh; bench/common.sh): the one place its sshd_config is
# written. Everything goes to $T; stop it with daemon_pid or stop_daemon.
SSHD_BIN=/usr/sbin/sshd
SSHD_PID=""

# sshd_port SALT: sets PORT, a free loopback port from 20000 + (PID + SALT) mod 20000
sshd_port() {
        local _
        PORT=$((20000 + ($$ + $1) % 20000))
        for _ in $(seq 20); do
                ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q . || break
                PORT=$((PORT + 1))
        done
}

# sshd_keys: the host key $T/host_key and the client's key pair $T/id
# ($T/id.pub to authorize); sets SSH_OPTS, the client's options but the port
# and the connect timeout
sshd_keys() {
        SSH_OPTS=(-F /dev/null -i "$T/id" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no
                  -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR)
        ssh-keygen -q -t ed25519 -N '' -C "host-$TAG" -f "$T/host_key" </dev/null >/dev/null &&
                ssh-keygen -q -t ed25519 -N '' -C "client-$TAG" -f "$T/id" </dev/null >/dev/null
}

# sshd_write_config USERS [LINE...]: $T/sshd_config: PORT on 127.0.0.1, the
# host key, PAM, key logins only, for USERS alone (AllowUsers); then each
# LINE, which replaces the default of its keyword (AuthorizedKeysFile
# .ssh/authorized_keys, PermitRootLogin no, LogLevel VERBOSE)
sshd_write_config() {
        local users="$1" d
        shift
        {
                printf '%s\n' "ListenAddress 127.0.0.1" "Port $PORT" "HostKey $T/host_key" "PidFile $T/sshd.pid" \
                        "UsePAM yes" "PubkeyAuthentication yes" "PasswordAuthentication no" \
                        "KbdInteractiveAuthentication no" "AllowUsers $users" "X11Forwarding no" \
                        "PrintMotd no" "PrintLastLog no"
                for d in "AuthorizedKeysFile .ssh/authorized_keys" "PermitRootLogin no" "LogLevel VERBOSE"; do
                        [ $# -gt 0 ] && printf '%s\n' "$@" | grep -qi "^${d%% *} " || echo "$d"
                done
                [ $# -eq 0 ] || printf '%s\n' "$@"
        } >"$T/sshd_config"
}

# sshd_run NAME [PAMD]: start sshd on $T/sshd_config in the background, its
# log in $T/sshd.log; sets SSHD_PID. NAME other than "sshd" runs it as
# $T/NAME, a link to sshd (sshd re-executes itself by argv[0] and names its
# PAM service after argv[0]'s basename: a name of its own, a service of its
# own). With PAMD, in a private mount namespace where PAMD is /etc/pam.d
# (SSHD_PID is then sshd itself: unshare execs sh, sh execs sshd).
sshd_run() {
        local name="$1" pamd="${2:-}" bin="$SSHD_BIN"
        if [ "$name" != sshd ]; then
                ln -sf "$SSHD_BIN" "$T/$name"
                bin="$T/$name"
        fi
        mkdir -p /run/sshd      # privilege separation directory (Debian's tmpfiles.d makes it at boot)
        if [ -n "$pamd" ]; then
                unshare -m --propagation private sh -c \
                        "mount --bind '$pamd' /etc/pam.d && exec '$bin' -D -e -f '$T/sshd_config'" >"$T/sshd.log" 2>&1 &
        else
                "$bin" -D -e -f "$T/sshd_config" >"$T/sshd.log" 2>&1 &
        fi
        SSHD_PID=$!
}

[ "${AG_LIB_FUNCS_ONLY:-0}" = 1 ] || ag_init
