#!/bin/bash
# Runs INSIDE the guest (tests/vm/test-guest.sh): each guest test script given
# as an argument, one after another in the same boot, with their output as
# it comes (line by line, so a guest that hangs still shows how far each
# script got) except each one's closing "N passed, N failed, N skipped" line,
# then one such line adding them all up. Exit status: 1 if any script failed
# (or printed no counts), else 77 if every script was skipped, else 0.
set -u
passed=0; failed=0; skipped=0; all_skipped=1; status=0
summary='^[0-9]+ passed, [0-9]+ failed'
for t in "$@"; do
        echo "# guest test $(basename "$t")"
        out=$(mktemp /tmp/guest-run.XXXXXX)
        # to a file, not a pipe: a process the script leaves behind must not
        # keep the loop waiting for the end of a pipe
        bash "$t" >"$out" 2>&1 &
        pid=$!
        tail -n +1 -s 0.5 -f --pid="$pid" "$out" | grep --line-buffered -Ev "$summary"
        wait "$pid"
        rc=$?
        line=$(grep -E "$summary" "$out" | tail -n1)
        rm -f "$out"
        if [ -z "$line" ]; then
                echo "not ok - $(basename "$t") printed no counts (status $rc)"
                failed=$((failed + 1)); status=1; all_skipped=0
                continue
        fi
        set -- $line
        passed=$((passed + $1)); failed=$((failed + $3))
        [ "$#" -ge 6 ] && skipped=$((skipped + $5))
        if [ "$rc" = 77 ] && [ "$3" = 0 ]; then continue; fi
        all_skipped=0
        [ "$rc" = 0 ] && [ "$3" = 0 ] || status=1
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$status" = 0 ] && [ "$all_skipped" = 1 ] && exit 77
exit "$status"
