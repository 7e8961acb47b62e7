#!/bin/bash
# Runs INSIDE the guest of tests/vm/test-guest.sh: the guest test scripts
# given, one after the other in the same boot, and adds up their counts.
#
#   run-tests.sh SCRIPT...
#
# Prints each script's output without its closing count line, then one
# "N passed, N failed, N skipped" line for all. Exit status: 1 when a script
# failed (or printed no counts), 77 when every script skipped, 0 otherwise.
set -u
p=0; f=0; s=0; rc=0; ran=0
for t in "$@"; do
        out=$(mktemp)
        bash "$t" >"$out" 2>&1
        r=$?
        line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n1)
        grep -vxF -- "$line" "$out"
        rm -f "$out"
        if [ -z "$line" ]; then
                echo "not ok - $(basename "$t") printed no counts (status $r)"
                f=$((f + 1)); rc=1; continue
        fi
        set -- $line
        p=$((p + $1)); f=$((f + $3)); [ "$#" -ge 6 ] && s=$((s + $5))
        if [ "$r" != 77 ]; then ran=1; fi
        if [ "$r" != 0 ] && [ "$r" != 77 ]; then rc=1; fi
done
echo "$p passed, $f failed, $s skipped"
[ "$rc" = 0 ] && [ "$f" = 0 ] || exit 1
[ "$ran" = 1 ] || exit 77
exit 0
