#!/bin/bash
# Leaks and memory errors of pam_autogroup.so under valgrind, through real
# libpam inside ONE process (tests/host/loopdrv):
#   - 250 pam_start/open/close/pam_end rounds (1,000 under LeakSanitizer):
#     one handle per login, as
#     sshd, login and su use PAM; libpam dlopen()s and dlclose()s the module
#     every round;
#   - 50 open/close pairs on one handle, as a long-lived process may do
#     (not more: pam_modutil_getpwnam() and pam_modutil_user_in_group_*()
#     keep each answer as PAM data until pam_end(), so a handle reused for
#     thousands of sessions gets slower with each one; that is Linux-PAM's
#     design, shared by pam_limits and the others, and no client we know
#     reuses a handle that way);
#   - the same, shorter, for a "sessions no" user and for a login where no
#     group can be made (error paths).
# Each run must end with zero definitely-lost bytes, no invalid read or write
# (valgrind's error exit code), no file descriptor left open by the module,
# every PAM call successful and no cgroup left behind.
#
# AG_VALGRIND_PAIRS and AG_VALGRIND_RESTARTS change the main run's counts.
#
# With a module built with AddressSanitizer (the .ci/sanitize lane) valgrind
# cannot run; the same runs then go through LeakSanitizer instead (loopdrv is
# instrumented too): zero leaks and no ASan/UBSan report.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
require_v1_cpu
LOOPDRV="$abs_top_builddir/tests/host/loopdrv"
[ -x "$LOOPDRV" ] || skip_all "$LOOPDRV not built"
LSAN=false
if nm -D "$AG_MODULE" 2>/dev/null | grep -q __asan_; then
        LSAN=true
        nm "$LOOPDRV" 2>/dev/null | grep -q __asan_ ||
                skip_all "$AG_MODULE has ASan but $LOOPDRV does not"
        echo "# the module is built with AddressSanitizer: LeakSanitizer instead of valgrind"
else
        command -v valgrind >/dev/null || skip_all "valgrind not installed"
fi
PAIRS=${AG_VALGRIND_PAIRS:-50}
# 250 logins under valgrind (a leak of a login shows as lost bytes after one
# as after a thousand; each dlopen under valgrind costs a third of a second of
# CPU), the 1,000 under LeakSanitizer (.ci/sanitize), which costs little
if $LSAN; then RESTARTS=${AG_VALGRIND_RESTARTS:-1000}; else RESTARTS=${AG_VALGRIND_RESTARTS:-250}; fi

test_root agtest
hl_syslog_start || { not_ok "syslog capture started"; finish; }

add_group "${TAG}g"
new_user a "${TAG}g"; new_user n
pam_other

# A config that exercises the parser, errors included, and NSS group lookups.
CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
*               weight   100
1000:           max      400%
@${TAG}g        weight   50
@nosuchgroup$$  weight   70
$UA             max      150%
$UA             idle     yes
$UN             sessions no
$UA             frobnicate 3
garbage
$UA weight 0
CONF
chmod 644 "$CONF"
mkdir -m 755 "$T/autogroup.d"
echo "@${TAG}g weight 60" >"$T/autogroup.d/10-a.conf"; chmod 644 "$T/autogroup.d/10-a.conf"
pam_service agvg "root=$ROOT conf=$CONF debug"
pam_service agvgfail "root=cpu.shares conf=$CONF debug bogus"

# vg NAME ARGS...: loopdrv under valgrind (or LeakSanitizer) in the syslog namespace
vg() {
        local name="$1"; shift
        if $LSAN; then
                ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:log_path=$T/$name.lsan" \
                UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$T/$name.lsan" \
                nsrun 'exec timeout -k 10 1800 "$@"' "$LOOPDRV" "$@" >"$T/$name.out" 2>&1
                return
        fi
        nsrun 'log=$1; shift; exec timeout -k 10 1800 valgrind --leak-check=full --show-leak-kinds=definite,indirect \
                --errors-for-leak-kinds=definite --error-exitcode=99 --track-fds=yes \
                --log-file="$log" "$@"' "$T/$name.vg" "$LOOPDRV" "$@" >"$T/$name.out" 2>&1
}
# vg_checks NAME DESCRIPTION EXPECTED-SUMMARY-LINE
vg_checks() {
        local n="$1" d="$2" rc="$3"
        check_not "$d: finished in bounded time" test "$rc" -eq 124 -o "$rc" -eq 137
        if $LSAN; then
                check_eq "$d: loopdrv exits 0 under LeakSanitizer" 0 "$rc"
                check "$d: every PAM call succeeded" grep -q "failed=0\$" "$T/$n.out"
                check_eq "$d: no leak, no ASan/UBSan report" "" "$(cat "$T/$n".lsan* 2>/dev/null | head -n 20)"
                check_eq "$d: no cgroup left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
                return
        fi
        check_eq "$d: valgrind and loopdrv exit 0" 0 "$rc"
        if [ ! -s "$T/$n.vg" ]; then not_ok "$d: valgrind log written"; cat "$T/$n.out"; return; fi
        check "$d: every PAM call succeeded" grep -q "failed=0\$" "$T/$n.out"
        check "$d: no memory errors (invalid reads/writes, uninitialised values)" \
                grep -q "ERROR SUMMARY: 0 errors" "$T/$n.vg"
        # either "no leaks are possible" or "definitely lost: 0 bytes"
        if grep -q "All heap blocks were freed" "$T/$n.vg"; then
                ok "$d: zero definitely-lost bytes (all heap blocks freed)"
        else
                check "$d: zero definitely-lost bytes" grep -q "definitely lost: 0 bytes" "$T/$n.vg"
        fi
        check_not "$d: no invalid read" grep -q "Invalid read" "$T/$n.vg"
        # Open descriptors at exit: those inherited, and the syslog socket glibc keeps.
        local fds
        fds=$(awk '/Open (file descriptor|AF_UNIX socket|AF_INET|AF_NETLINK)/ { what = $0; getline;
                        if ($0 !~ /inherited from parent/ && what !~ /socket [0-9]+: \/dev\/log|-> \/dev\/log|<unknown>/) print what }' "$T/$n.vg")
        check_eq "$d: no descriptor left open by the module" "" "$fds"
        check_eq "$d: no cgroup left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
}

echo "# 1. $PAIRS open/close pairs on one handle, then $RESTARTS logins with a handle each (dlopen/dlclose)"
vg main --pairs "$PAIRS" --restarts "$RESTARTS" "$T" agvg "$UA"
vg_checks main "$PAIRS pairs + $RESTARTS logins" $?
check_eq "all cycles ran" "pairs=$PAIRS restarts=$RESTARTS failed=0" "$(tail -n1 "$T/main.out")"
hlog_has "the module ran with the test config (policy logged)" "pam_autogroup\\(agvg:session\\): policy for $UA: weight 60, max 150%, sessions yes, idle yes"
hlog_has "config errors were logged" "pam_autogroup\\(agvg:session\\): .*autogroup.conf:8: unknown item 'frobnicate'"

echo "# 2. sessions no: the user-group path"
vg nosess --pairs 20 --restarts 100 "$T" agvg "$UN"
vg_checks nosess "sessions no" $?
hlog_has "sessions no was used" "pam_autogroup\\(agvg:session\\): policy for $UN: .*sessions no"

echo "# 3. error paths: no group can be made (root=cpu.shares), unknown option"
vg fail --pairs 20 --restarts 100 "$T" agvgfail "$UA"
vg_checks fail "error paths" $?
hlog_has "the open failed as intended" "pam_autogroup\\(agvgfail:session\\): cannot create the root group"

check "host cpu hierarchy untouched" test -f "$CPU/cpu.shares" -a ! -d "$CPU/cpu.shares"
finish
