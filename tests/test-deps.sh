#!/bin/bash
# The quick start and CI install the same packages, from one list
# (tools/deps.txt), and that list holds what the build and the lanes need:
# the Debian package's Build-Depends and the host packages the guest lanes
# install (their vm_ensure_pkgs calls). Needs neither root nor network: it
# asks each script for its list (--print-deps) and reads files.
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

# what the guest lanes would otherwise install by themselves: the arguments of
# every vm_ensure_pkgs call (tests/vmlib/common.sh defines it; the lanes'
# vm-build.sh scripts call it) and any "for p in ...; do" list of an older
# script. A lane script without such a list is an error here, not a skip: the
# check would then prove nothing.
calls=$(grep -hE '^[[:space:]]*vm_ensure_pkgs[[:space:]]' tests/systemd/*.sh tests/vm/*.sh tests/vmlib/*.sh 2>/dev/null |
        sed -E 's/^[[:space:]]*vm_ensure_pkgs[[:space:]]+//; s/[;&|#].*$//')
loops=$(grep -hoE 'for p in [a-z0-9 .+-]+; do' tests/systemd/*.sh tests/vm/*.sh 2>/dev/null | sed 's/^for p in //; s/; do$//')
sd=$(printf '%s\n%s\n' "$calls" "$loops" | norm)
bad=$(echo "$sd" | grep -vE '^[a-z0-9][a-z0-9.+-]+$' | tr '\n' ' ')
if [ -z "$sd" ]; then
        not_ok "no vm_ensure_pkgs call (nor 'for p in' list) found in tests/systemd, tests/vm, tests/vmlib"
elif [ -n "$bad" ]; then
        not_ok "vm_ensure_pkgs arguments that are not package names (a variable?): $bad"
else
        missing=$(comm -23 <(echo "$sd") <(echo "$LIST") | tr '\n' ' ')
        if [ -z "$missing" ]; then ok "the guest lanes' host packages ($(echo "$sd" | tr '\n' ' ')) are listed"
        else not_ok "guest lane packages missing from tools/deps.txt: $missing"; fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
