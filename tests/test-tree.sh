#!/bin/bash
# The source tree holds sources only: no tracked file is a compiled object,
# library or executable (build outputs belong in .gitignore). Skipped (77)
# outside a git checkout, e.g. in a release tarball.
set -u
top=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        echo "1..0 # SKIP not a git checkout: nothing to check"; echo "0 passed, 0 failed, 1 skipped"; exit 77
fi
pass=0 fail=0
bad=""
while IFS= read -r -d '' f; do
        [ -f "$f" ] || continue
        # ELF magic (objects, shared libraries, executables) or an ar archive
        magic=$(head -c 8 -- "$f" | od -An -c | tr -d ' \n')
        case $magic in
        177ELF*|'!<arch>'*) bad="$bad $f";;
        esac
        case $f in *.o|*.lo|*.la|*.so|*.a) bad="$bad $f";; esac
done < <(git ls-files -z)
if [ -z "$bad" ]; then
        echo "ok - no build output is tracked"; pass=$((pass + 1))
else
        echo "not ok - build outputs tracked in git:$bad"; fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
