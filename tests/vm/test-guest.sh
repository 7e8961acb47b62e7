#!/bin/bash
# The guest lane (an automake test, run as root by make check): builds or
# reuses a small QEMU guest (tests/vm/vm-build.sh: a Debian kernel from the
# archive and a busybox initramfs, cached in $VMCACHE, default
# /var/tmp/autogroup-vm), boots it under TCG with a pure cgroup2 hierarchy
# with the cpu controller enabled at the root and the host root shared
# read-only (so the module, agdrv and tests/lib.sh built here run unchanged),
# and runs tests/guest/test-v2.sh and the other scripts listed at the vm-run.sh
# call inside as root, in the same boot (tests/guest/run-tests.sh adds up
# their counts; a new guest script is one more line there).
#
# Output: the guest test's own ok/not ok lines, ending with its
# "N passed, N failed, N skipped" line; exit status: the guest test's.
# When the guest cannot be had (no qemu or busybox-static, no kernel
# download, no space, it does not boot) the lane says why and reports itself
# skipped (exit 77). It never reports a pass it did not run.
# env: VMCACHE, VM_TIMEOUT (seconds, default 900), VM_ACCEL (see vm-common.sh)
set -u
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${abs_top_builddir:-$src}
module=${AG_MODULE:-$build/pam_autogroup/.libs/pam_autogroup.so}
VMDIR="$src/tests/vm"
export VMCACHE=${VMCACHE:-/var/tmp/autogroup-vm}

skip_lane() {
        echo "# guest lane skipped: $*"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
}
fail_lane() {
        echo "not ok - guest lane: $*"
        echo "0 passed, 1 failed, 0 skipped"
        exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%01d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

[ "$(id -u)" = 0 ] || skip_lane "needs root (qemu's 9p passthrough of the host root, users in the guest)"
# The products of the build are not optional: their absence is a failure.
for f in "$module" "$build/tests/host/agdrv" "$build/tests/host/logcap" "$src/tests/lib.sh" "$src/tests/guest/run-tests.sh" "$src/tests/guest/test-v2.sh"; do
        [ -e "$f" ] || fail_lane "missing $f"
done
missing=$(. "$VMDIR/vm-common.sh" && vm_missing_tools)
[ -z "$missing" ] || skip_lane "missing on the host: $missing(packages qemu-system-x86 busybox-static cpio xz-utils)"
mkdir -p "$VMCACHE/runs" 2>/dev/null || skip_lane "cannot create $VMCACHE"

R=$(mktemp -d "$VMCACHE/runs/res.XXXXXX") || skip_lane "cannot create a results directory in $VMCACHE (no space?)"
chmod 755 "$R"
trap 'rm -rf "$R"' EXIT

t0=$(now_ms)
if ! nice -n 19 bash "$VMDIR/vm-build.sh" >"$R/build.log" 2>&1; then
        sed 's/^/# build: /' "$R/build.log" | tail -n 15
        skip_lane "cannot build the guest ($(tail -n1 "$R/build.log"))"
fi
t1=$(now_ms)
echo "# guest: kernel $(cat "$VMCACHE/lane/KVER" 2>/dev/null), build/reuse $(secs $((t1 - t0))) s"

# The guest hides the host's /tmp, /var/tmp and /run under its own tmpfs:
# share the trees from there explicitly (distcheck builds below /tmp).
shares=()
for d in "$src" "$build" "$(dirname "$module")"; do
        d=$(realpath "$d")
        case "$d" in
        /run|/run/*) skip_lane "cannot share $d into the guest (below /run)";;
        /tmp|/tmp/*|/var/tmp|/var/tmp/*)
                case " ${shares[*]:-} " in *" $d "*) ;; *) shares+=(--ro "$d");; esac;;
        esac
done

# The guest's command: the test, with its output and status in the results
# directory (shared read-write), so a guest that dies midway still leaves
# what it printed.
timeout=${VM_TIMEOUT:-900}
nice -n 19 bash "$VMDIR/vm-run.sh" -t "$timeout" ${shares[@]+"${shares[@]}"} --rw "$R" -- \
        env abs_top_srcdir="$src" abs_top_builddir="$build" AG_MODULE="$module" \
        bash -c 'bash "$1" "${@:3}" >"$2/guest.log" 2>&1; echo $? >"$2/rc"' _ "$src/tests/guest/run-tests.sh" "$R" \
        "$src/tests/guest/test-v2.sh" \
        "$src/tests/guest/test-acct.sh" \
        >"$R/console.log" 2>&1
vrc=$?
t2=$(now_ms)
ready=$(grep -m1 '^=== VM-READY' "$R/console.log")
if [ -z "$ready" ]; then
        sed 's/^/# console: /' "$R/console.log" | tail -n 20
        skip_lane "the guest did not boot (vm-run.sh status $vrc)"
fi
echo "# ${ready#=== }"

summary='^[0-9]+ passed, [0-9]+ failed'
if [ -f "$R/guest.log" ]; then
        # everything the guest printed except a closing summary line
        sed -E "\$ { /$summary/d }" "$R/guest.log"
fi
echo "# guest: boot + test $(secs $((t2 - t1))) s, lane total $(secs $((t2 - t0))) s"
if [ ! -f "$R/rc" ]; then
        sed 's/^/# console: /' "$R/console.log" | grep -v '^# console: \(ok\|not ok\|#\)' | tail -n 20
        why="the guest test did not finish (vm-run.sh status $vrc$([ "$vrc" = 124 ] && echo ": timeout after ${timeout} s"))"
        echo "not ok - guest lane: $why"
        p=$(grep -c '^ok - ' "$R/guest.log" 2>/dev/null); f=$(grep -c '^not ok - ' "$R/guest.log" 2>/dev/null)
        echo "${p:-0} passed, $((${f:-0} + 1)) failed, 0 skipped"
        exit 1
fi
rc=$(cat "$R/rc")
line=$(grep -E "$summary" "$R/guest.log" | tail -n1)
[ -n "$line" ] || fail_lane "the guest test printed no summary (status $rc)"
echo "$line"
set -- $line
if [ "$rc" = 0 ] && [ "$3" = 0 ]; then exit 0; fi
if [ "$rc" = 77 ] && [ "$3" = 0 ]; then exit 77; fi
exit 1
