#!/bin/bash
# The quick start and CI install the same packages, from one list
# (tools/deps.txt), and that list holds what the build and the lanes need:
# the Debian package's Build-Depends and the host packages of the systemd
# guest lane. Needs neither root nor network: it asks each script for its
# list (--print-deps) and reads files.
set -u
top=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }
norm() { tr -s ' \t' '\n\n' | sed '/^$/d' | sort -u; }

LIST=$(sed 's/#.*//' tools/deps.txt | norm)
if [ -n "$LIST" ]; then ok "tools/deps.txt lists $(echo "$LIST" | wc -l) packages"; else not_ok "tools/deps.txt is empty or missing"; fi
for s in .ci/run tools/quickstart; do
        # never run a script that would not stop after printing its list
        if ! grep -q -- '--print-deps' "$s"; then not_ok "$s has no --print-deps (it must read tools/deps.txt)"; continue; fi
        got=$(bash "$s" --print-deps </dev/null 2>&1 | norm)
        if [ "$got" = "$LIST" ]; then ok "$s installs exactly tools/deps.txt"
        else not_ok "$s installs a list of its own: $(diff <(echo "$LIST") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"; fi
done

# debian/control Build-Depends (without versions and build profiles; the
# debhelper-compat virtual package comes from debhelper)
bd=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed '1s/^Build-Depends://; /^[A-Z]/d' |
        tr ',' '\n' | sed 's/([^)]*)//g; s/<[^>]*>//g; s/^ *//; s/ *$//; s/^debhelper-compat$/debhelper/' | norm)
missing=$(comm -23 <(echo "$bd") <(echo "$LIST") | tr '\n' ' ')
if [ -n "$bd" ] && [ -z "$missing" ]; then ok "every Build-Depends of debian/control is listed"
else not_ok "Build-Depends missing from tools/deps.txt: ${missing:-(none parsed)}"; fi

# what the systemd guest lane would otherwise install by itself
sd=$(grep -rhoE 'for p in [a-z0-9 .+-]+; do' tests/systemd/*.sh 2>/dev/null | sed 's/^for p in //; s/; do$//' | norm)
if [ -z "$sd" ]; then
        echo "ok - # SKIP no package list found in tests/systemd"
else
        missing=$(comm -23 <(echo "$sd") <(echo "$LIST") | tr '\n' ' ')
        if [ -z "$missing" ]; then ok "the systemd guest lane's host packages are listed"
        else not_ok "systemd guest lane packages missing from tools/deps.txt: $missing"; fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
