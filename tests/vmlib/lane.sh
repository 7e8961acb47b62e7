# tests/vmlib/lane.sh: the make-check side of a guest lane (tests/vm/test-guest.sh,
# tests/systemd/test-systemd-guest.sh). Source it from the lane's entry script,
# which then calls, in this order:
#   lane_init NAME FLAVOUR_DIR   sets src, build (abs_top_srcdir/abs_top_builddir),
#                                sources the flavour's vm-common.sh; skips unless root
#   lane_skip / lane_fail WHY    for its own preconditions
#   lane_boots KARGS...          (optional) several boots, one per set of kernel arguments
#   lane_start                   results directory, build or reuse the guest
#   lane_share DIR...            the host trees the guest must see
#   lane_run TIMEOUT TEST [VAR=VALUE]... [-- ARG...]   boots the guest, runs TEST as root there
#   lane_report                  prints and exits
# What the lane prints: the guest's console "VM-READY" line, the guest test's
# own lines, the timings, and last the test's "N passed, N failed, N skipped".
# When the guest cannot be had (missing tools, no kernel download, no space,
# the build fails, the guest does not boot) it says why and reports itself
# skipped (exit 77); it never reports a pass it did not run. Exit status:
# 0 when the test passed, 77 when it skipped, 1 otherwise.
# shellcheck shell=bash

lane_skip() {
    echo "# $LANE_NAME skipped: $*"
    echo "0 passed, 0 failed, 1 skipped"
    exit 77
}
lane_fail() {
    echo "not ok - $LANE_NAME: $*"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
}
lane_now_ms() { echo $(($(date +%s%N) / 1000000)); }
lane_secs() { printf '%d.%01d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

lane_init() {
    LANE_NAME=$1 LANE_DIR=$2
    LANE_SCRIPT=$(realpath "$0")
    src=${abs_top_srcdir:-$(cd "$LANE_DIR/../.." && pwd)}
    build=${abs_top_builddir:-$src}
    export VMCACHE=${VMCACHE:-/var/tmp/autogroup-vm}
    # shellcheck source=/dev/null
    . "$LANE_DIR/vm-common.sh"
    LANE_SHARES=()
    [ "$(id -u)" = 0 ] || lane_skip "needs root (qemu's 9p passthrough, users in the guest)"
}

# A results directory (shared read-write with the guest, removed at exit),
# then the flavour's vm-build.sh.
lane_start() {
    mkdir -p "$VMCACHE/runs" 2>/dev/null || lane_skip "cannot create $VMCACHE"
    R=$(mktemp -d "$VMCACHE/runs/res.XXXXXX") || lane_skip "cannot create a results directory in $VMCACHE (no space?)"
    chmod 755 "$R"
    trap 'rm -rf "$R"' EXIT
    LANE_T0=$(lane_now_ms)
    nice -n 19 bash "$LANE_DIR/vm-build.sh" >"$R/build.log" 2>&1
    local rc=$?
    LANE_T1=$(lane_now_ms)
    sed 's/^/# build: /' "$R/build.log" | tail -n 15
    [ "$rc" = 0 ] || lane_skip "cannot build the guest (vm-build.sh status $rc: $(tail -n1 "$R/build.log"))"
    echo "# guest: kernel $(cat "$VM_BOOT/KVER" 2>/dev/null), build/reuse $(lane_secs $((LANE_T1 - LANE_T0))) s"
}

# Share DIRs read-only where the guest would not see them otherwise: every
# one when the guest's root is its own (systemd), those below /tmp or
# /var/tmp (hidden under the guest's tmpfs) when it is the host's.
lane_share() {
    local d
    for d in "$@"; do
        d=$(realpath "$d")
        case $d in
        /run|/run/*) lane_skip "cannot share $d into the guest (below /run)";;
        /tmp|/tmp/*|/var/tmp|/var/tmp/*) ;;
        *) [ "$VM_ROOTFS" = / ] && continue;;
        esac
        case " ${LANE_SHARES[*]:-} " in *" $d "*) ;; *) LANE_SHARES+=(--ro "$d");; esac
    done
}

# lane_run TIMEOUT TEST [VAR=VALUE]... [-- ARG...]: the guest's command is
# TEST ARG... with abs_top_srcdir, abs_top_builddir and the VARs, run from the
# results directory, its output and status kept there, so a guest that dies
# midway still leaves what it printed.
#
# A guest that stops making progress is not waited for until TIMEOUT: the
# guest kernel panics on a soft lockup (softlockup_panic, 60 s: see vm_run),
# and a guest whose console and test output have not grown for
# LANE_STALL seconds (default 600) is stopped. Under TCG such a hang is the
# emulator's (CI once saw both vCPUs of a guest spin in the kernel for 600 s
# in an unrelated bash and agdrv, first seconds of the first test): the guest
# is then booted once more, under single-threaded TCG where TCG is used (no
# multi-threaded TCG races; slower), and the report says so with the first
# boot's console lines. A guest test that fails, or a second hang, is never retried.
lane_run() {
    LANE_TIMEOUT=$1; local test=$2; shift 2
    local vars=() attempt hang
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    # what vm-run.sh runs in the guest, the same for both boots
    LANE_GUEST_CMD=(env abs_top_srcdir="$src" abs_top_builddir="$build" ${vars[@]+"${vars[@]}"}
        bash -c 't=$1 r=$2; shift 2; bash "$t" "$@" >"$r/guest.log" 2>&1; echo $? >"$r/rc"' _ "$test" "$R" "$@")
    LANE_RETRIED=""
    for attempt in 1 2; do
        rm -f "$R/rc" "$R/guest.log"
        lane_boot
        LANE_T2=$(lane_now_ms)
        [ -f "$R/rc" ] && return 0
        hang=$(lane_hang_reason)
        [ -n "$hang" ] && [ "$attempt" = 1 ] || return 0
        LANE_RETRIED="the first boot hung after $(lane_secs $((LANE_T2 - LANE_T1))) s ($hang)"
        # the second boot under single-threaded TCG (all vCPUs on one host
        # thread): slower, but none of multi-threaded TCG's races
        export VM_TCG_THREAD=single
        mv "$R/console.log" "$R/console.1.log"
        [ -f "$R/guest.log" ] && mv "$R/guest.log" "$R/guest.1.log"
    done
}

# One boot of LANE_GUEST_CMD: vm-run.sh in the background, watched for
# progress every 5 s. LANE_VRC is its status (124 on TIMEOUT, 125 when the
# guest stopped without a status).
lane_boot() {
    local pid sid size last_size=-1 last_change now
    # a session of its own, so that a stalled boot is stopped as a whole
    (cd "$R" && exec setsid bash "$LANE_DIR/vm-run.sh" -t "$LANE_TIMEOUT" ${LANE_SHARES[@]+"${LANE_SHARES[@]}"} --rw "$R" -- \
        "${LANE_GUEST_CMD[@]}") >"$R/console.log" 2>&1 &
    pid=$!
    LANE_STALLED=0 LANE_SEEN=0 LANE_BEAT=$(lane_now_ms) LANE_UP=""
    lane_note "booting the guest (timeout ${LANE_TIMEOUT} s)"
    last_change=$(lane_now_ms)
    while kill -0 "$pid" 2>/dev/null; do
        sleep 5
        lane_progress
        size=$(cat "$R/console.log" "$R/guest.log" 2>/dev/null | wc -c)
        now=$(lane_now_ms)
        if [ "$size" != "$last_size" ]; then
            last_size=$size last_change=$now
        elif [ $((now - last_change)) -ge $((${LANE_STALL:-600} * 1000)) ]; then
            LANE_STALLED=1
            sid=$(ps -o sid= -p "$pid" | tr -d ' ')
            [ -n "$sid" ] && [ "$sid" != "$(ps -o sid= -p $$ | tr -d ' ')" ] && pkill -TERM -s "$sid"
            break
        fi
    done
    wait "$pid"
    LANE_VRC=$?
    lane_progress
    lane_note "guest stopped (status $LANE_VRC) after $(lane_secs $(($(lane_now_ms) - LANE_T1))) s"
}

# Progress while a guest runs (a guest lane takes minutes): one line per
# section of the guest test ("# 7b. ..." headers, "# guest test NAME" of
# run-all.sh, the "#   ran:/skipped:" lines of host-lanes.sh), every "not ok",
# and a heartbeat every LANE_BEAT_S seconds (120) without one. The lines go
# to stdout (the lane's .log under make check grows as the guest runs) and,
# when AG_PROGRESS names a file, are appended there too (.ci/run shows that
# file on its console).
LANE_SECTION_RE="^# ([0-9]+[a-z]*'?\\. |guest test )|^#   (ran|skipped|not run): |^not ok"
lane_note() {
    local line
    line="# [$(date +%H:%M:%S)] $LANE_NAME: $*"
    echo "$line"
    [ -z "${AG_PROGRESS:-}" ] || echo "$line" >>"$AG_PROGRESS" 2>/dev/null || true
}
lane_progress() {
    local n now ok l
    if [ -z "${LANE_UP:-}" ] && grep -aq '^=== VM-READY' "$R/console.log" 2>/dev/null; then
        LANE_UP=1; lane_note "guest up after $(lane_secs $(($(lane_now_ms) - LANE_T1))) s"
    fi
    now=$(lane_now_ms)
    n=0
    [ -f "$R/guest.log" ] && n=$(wc -l <"$R/guest.log")
    if [ "$n" -gt "${LANE_SEEN:-0}" ]; then
        while IFS= read -r l; do
            lane_note "${l#\# }"; LANE_BEAT=$now
        done < <(sed -n "$((LANE_SEEN + 1)),${n}p" "$R/guest.log" | grep -aE "$LANE_SECTION_RE")
        LANE_SEEN=$n
    fi
    if [ $((now - LANE_BEAT)) -ge $((${LANE_BEAT_S:-120} * 1000)) ]; then
        ok=$(grep -ac '^ok ' "$R/guest.log" 2>/dev/null)
        lane_note "running, $(lane_secs $((now - LANE_T1))) s, ${ok:-0} ok so far"
        LANE_BEAT=$now
    fi
}

# Why the last boot looks hung rather than failed (empty: it did not): the
# guest kernel's own report on the console, or no progress for LANE_STALL s.
lane_hang_reason() {
    local line
    line=$(grep -m1 -aoE 'soft lockup - CPU#[0-9]+ stuck for [0-9]+s! \[[^]]*\]|rcu: INFO: rcu_[a-z]+ (self-detected stall|detected stalls)[^\r]*|Kernel panic - not syncing: [^\r]*' \
                "$R/console.log" 2>/dev/null)
    if [ -n "$line" ]; then echo "guest kernel: $line"
    elif [ "${LANE_STALLED:-0}" = 1 ]; then echo "no output for ${LANE_STALL:-600} s"
    fi
}

# lane_boots KARGS...: a lane of several boots, one per KARGS (kernel
# arguments added to VM_KERNEL_ARGS for that boot). Call it right after
# lane_init: each boot runs this entry script once more (the same arguments)
# with LANE_BOOT_KARGS set to its KARGS and LANE_BOOT to its number (1, 2,
# ...), which the script passes on to its guest test as it likes (lane_run
# VAR=VALUE); their lines come as they come, each boot's counts are added
# up, and the lane exits like a single boot would: 1 when a boot failed,
# else 0, or 77 when every boot skipped. Inside such a boot it returns at
# once, with LANE_BOOT_KARGS added to VM_KERNEL_ARGS.
#   lane_init ...
#   lane_boots "systemd.unified_cgroup_hierarchy=0" \
#              "systemd.unified_cgroup_hierarchy=0 systemd.legacy_systemd_cgroup_controller=1"
#   lane_start; lane_share ...; lane_run T TEST AG_BOOT="$LANE_BOOT"; lane_report
lane_boots() {
    local k n=0 out pid rc line p=0 f=0 sk=0 status=0 all_skipped=1
    if [ -n "${LANE_BOOT:-}" ]; then
        export VM_KERNEL_ARGS="${VM_KERNEL_ARGS:-} $LANE_BOOT_KARGS"
        return 0
    fi
    out=$(mktemp /tmp/lane-boot.XXXXXX)
    for k in "$@"; do
        n=$((n + 1))
        echo "# $LANE_NAME, boot $n: $k"
        # its lines as they come (to a file, not a pipe: see tests/guest/run-all.sh)
        LANE_BOOT=$n LANE_BOOT_KARGS=$k bash "$LANE_SCRIPT" >"$out" 2>&1 &
        pid=$!
        tail -n +1 -s 1 -f --pid="$pid" "$out" | grep --line-buffered -Ev '^[0-9]+ passed, [0-9]+ failed'
        wait "$pid"
        rc=$?
        line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n1)
        if [ -z "$line" ]; then
            echo "not ok - $LANE_NAME, boot $n ($k): no counts (status $rc)"
            f=$((f + 1)); status=1; all_skipped=0; continue
        fi
        # shellcheck disable=SC2086
        set -- $line
        p=$((p + $1)); f=$((f + $3)); [ "$#" -ge 6 ] && sk=$((sk + $5))
        [ "$rc" = 77 ] && [ "$3" = 0 ] && continue
        all_skipped=0
        [ "$rc" = 0 ] && [ "$3" = 0 ] || status=1
    done
    rm -f "$out"
    echo "$p passed, $f failed, $sk skipped"
    [ "$status" = 0 ] && [ "$all_skipped" = 1 ] && exit 77
    exit "$status"
}

lane_report() {
    local ready summary='^[0-9]+ passed, [0-9]+ failed' why p f rc line
    ready=$(grep -m1 '^=== VM-READY' "$R/console.log")
    if [ -z "$ready" ]; then
        sed 's/^/# console: /' "$R/console.log" | tail -n 20
        lane_skip "the guest did not boot (vm-run.sh status $LANE_VRC)"
    fi
    echo "# ${ready#=== }"
    if [ -n "${LANE_RETRIED:-}" ]; then
        echo "# guest: $LANE_RETRIED; booted once more (single-threaded TCG). The first boot's console:"
        grep -av '^\(ok\|not ok\|#\)' "$R/console.1.log" | tail -n 40 | sed 's/^/# console 1: /'
    fi
    # everything the guest test printed except a closing summary line
    [ -f "$R/guest.log" ] && sed -E "\$ { /$summary/d }" "$R/guest.log"
    echo "# guest: boot + test $(lane_secs $((LANE_T2 - LANE_T1))) s, lane total $(lane_secs $((LANE_T2 - LANE_T0))) s"
    if [ ! -f "$R/rc" ]; then
        sed 's/^/# console: /' "$R/console.log" | grep -v '^# console: \(ok\|not ok\|#\)' | tail -n 20
        why="the guest test did not finish (vm-run.sh status $LANE_VRC$([ "$LANE_VRC" = 124 ] && echo ": timeout after ${LANE_TIMEOUT} s")$(h=$(lane_hang_reason); [ -n "$h" ] && echo ", hung: $h"))"
        echo "not ok - $LANE_NAME: $why"
        p=$(grep -c '^ok - ' "$R/guest.log" 2>/dev/null); f=$(grep -c '^not ok - ' "$R/guest.log" 2>/dev/null)
        echo "${p:-0} passed, $((${f:-0} + 1)) failed, 0 skipped"
        exit 1
    fi
    rc=$(cat "$R/rc")
    line=$(grep -E "$summary" "$R/guest.log" | tail -n1)
    [ -n "$line" ] || lane_fail "the guest test printed no summary (status $rc)"
    echo "$line"
    # shellcheck disable=SC2086
    set -- $line
    if [ "$rc" = 0 ] && [ "$3" = 0 ]; then exit 0; fi
    if [ "$rc" = 77 ] && [ "$3" = 0 ]; then exit 77; fi
    exit 1
}
