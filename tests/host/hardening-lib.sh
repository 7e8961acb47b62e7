# Helpers shared by the hardening tests (test-badinput.sh, test-faults.sh,
# test-load.sh, test-valgrind.sh). Sourced after tests/lib.sh.
#
# Syslog: the tests run concurrently with other host tests, which take
# /dev/log for themselves (tests/lib.sh start_syslog). So these tests never
# touch the host's /dev/log: they run every login in a private mount
# namespace whose /dev is a directory of symlinks to the real /dev entries
# (bound elsewhere in that namespace), with /dev/log a symlink to a capture
# socket of their own in $T. Nothing of that is visible outside the
# namespace and it vanishes with it.

HL_LOGSOCK="$T/log.sock"
HL_HOSTDEV="$T/hostdev"       # the real /dev, bound here inside each namespace
HL_DEV="$T/dev"               # made once: a symlink per /dev entry, and log

# hl_syslog_start: the capture socket (a logcap of our own, killed at exit)
# and the replacement /dev
hl_syslog_start() {
        hl_dev_make
        "$LOGCAP" "$HL_LOGSOCK" "$SYSLOG" >"$T/hl-logcap.out" 2>&1 &
        track_pid $!
        wait_for "$T/hl-logcap.out" ready
}

# hl_dev_make: the replacement /dev, its log a symlink to $HL_LOGSOCK
# (whatever listens there: our logcap, or a syslog daemon a test starts)
hl_dev_make() {
        local e
        mkdir -p "$HL_HOSTDEV" "$HL_DEV"
        for e in /dev/* /dev/.[!.]*; do
                [ -e "$e" ] || [ -L "$e" ] || continue
                [ "${e##*/}" = log ] || ln -s "$HL_HOSTDEV/${e##*/}" "$HL_DEV/${e##*/}"
        done
        ln -s "$HL_LOGSOCK" "$HL_DEV/log"
}

# nsrun SCRIPT [ARG...]: sh -c SCRIPT in a private mount namespace whose
# /dev/log is our capture socket. SCRIPT may change mounts (umount, remount
# read-only ...): none of it reaches the host. ARGs are $1... in SCRIPT.
nsrun() {
        local script="$1"; shift
        HL_HOSTDEV="$HL_HOSTDEV" HL_DEV="$HL_DEV" \
        unshare -m --propagation private sh -c '
                mount --rbind /dev "$HL_HOSTDEV" && mount --bind "$HL_DEV" /dev || exit 125
                script=$1; shift
                eval "$script"' hlns "$script" "$@"
}

# hlog_has DESCRIPTION PATTERN: the captured syslog has a line matching PATTERN
hlog_has() {
        local i
        for i in $(seq 100); do grep -qE -- "$2" "$SYSLOG" && break; sleep 0.02; done
        if grep -qE -- "$2" "$SYSLOG"; then ok "$1"; else not_ok "$1 (no log line matching '$2')"; fi
}
# hlog_hasnt DESCRIPTION PATTERN [EXCEPT]: no captured line matches PATTERN
# (lines that also match the extended regular expression EXCEPT do not count)
hlog_hasnt() {
        local bad
        sleep 0.1
        bad=$(grep -E -- "$2" "$SYSLOG" | { if [ -n "${3:-}" ]; then grep -vE -- "$3"; else cat; fi; } | head -n1)
        if [ -n "$bad" ]; then
                not_ok "$1 (unexpected log line: $bad)"
        else ok "$1"; fi
}
# The one info line of every grouped session at close (CPU accounting): not a
# complaint, so the "nothing logged" checks let it through.
HLOG_ACCT_LINE=': session /[^ ]+ (closed|lingering|removed): user=[^ ]+ scope=(session|user) cpu_usec='

# re_escape STRING: STRING as a literal in an extended regular expression
re_escape() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }

# hl_tree_count DIR: number of cgroups (directories) at and below DIR, 0 if none
hl_tree_count() {
        if [ -d "$1" ]; then find "$1" -type d | wc -l; else echo 0; fi
}
