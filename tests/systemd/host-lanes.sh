# shellcheck shell=bash
# Sourced by tests/systemd/guest-test.sh (after tests/lib.sh), inside the
# systemd guest: the tests of "make check" that are not guest lanes, run on
# this systemd + cgroup v2 host as they would run on an administrator's
# Debian 12, each bounded (timeout 300). It prints which ran and which
# skipped, with the reason each gives, and checks that each either passes or
# skips with a reason (exit 77), never fails. tools/demo (tests/host/test-demo.sh)
# runs in its own section with its shares checked; the guest lanes need qemu
# on the host and are not run here.
host_lanes() {
        local t rc out name why ran="" skipped=""
        out=$(mktemp /tmp/host-lane.XXXXXX)
        for t in "$abs_top_builddir"/tests/unit/test-* "$abs_top_srcdir"/tests/test-tree.sh \
                 "$abs_top_srcdir"/tests/test-deps.sh "$abs_top_srcdir"/tests/host/test-*.sh; do
                case "$t" in *.o|*.c|*.log|*.trs|*/test-demo.sh) continue ;; esac
                [ -x "$t" ] || [ "${t%.sh}" != "$t" ] || continue
                name=${t#"$abs_top_srcdir"/}; name=${name#"$abs_top_builddir"/}
                # the unit tests are built on the host: the guest image may lack their libraries
                if [ "${t%.sh}" = "$t" ] && ldd "$t" 2>/dev/null | grep -q 'not found'; then
                        why=$(ldd "$t" 2>/dev/null | sed -n 's/^[[:space:]]*\([^ ]*\) => not found.*/\1/p' | tr '\n' ' ')
                        echo "#   not run: $name: ${why}missing in this guest image (it runs wherever it was built)"
                        skip "$name: ${why}missing in this guest image"
                        skipped="$skipped $name"
                        continue
                fi
                if [ "${t%.sh}" != "$t" ]; then timeout 300 bash "$t" >"$out" 2>&1; else timeout 300 "$t" >"$out" 2>&1; fi
                rc=$?
                if [ "$rc" = 77 ]; then
                        why=$(sed -n 's/.*# SKIP \(.*\)/\1/p' "$out" | tail -n1)
                        [ -n "$why" ] || why=$(sed -n '/^[0-9]* passed, [0-9]* failed/q; /^\(not \)\{0,1\}ok /d; s/^# //; p' "$out" | tail -n1)
                        echo "#   skipped: $name: ${why:-no reason given}"
                        skipped="$skipped $name"
                        check "$name skips with a reason" test -n "$why"
                else
                        echo "#   ran: $name: exit $rc, $(grep -E '^[0-9]+ passed, [0-9]+ failed|^\[  (PASSED|FAILED)  \]' "$out" | tail -n1)"
                        [ "$rc" = 0 ] || tail -n 15 "$out" | sed 's/^/#     /'
                        ran="$ran $name"
                        check_eq "$name passes" 0 "$rc"
                fi
        done
        rm -f "$out"
        echo "# on this systemd + cgroup v2 host: ran$ran (and tests/host/test-demo.sh above)"
        echo "# skipped$skipped"
}
