#!/bin/bash
# make check entry of the systemd guest lane: builds (or reuses) the Debian 12
# systemd guest in /var/tmp/autogroup-vm/systemd (vm-build.sh: ~3 min cold
# with debootstrap, ~1 s warm), boots it once under QEMU (TCG) and runs
# guest-test.sh there with the build tree shared read-only. Prints the
# guest's test lines and its count line; exits with its status.
# Exit 77 (with the reason) when qemu/debootstrap cannot be had, the mirror
# is unreachable, or the module was built without libsystemd.
set -u
: "${abs_top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
HERE="$abs_top_srcdir/tests/systemd"
skip77() { echo "# SKIP: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ "$(id -u)" = 0 ] || skip77 "needs root (qemu's 9p passthrough, apt)"
[ "${AG_SKIP_VM:-0}" = 1 ] && skip77 "AG_SKIP_VM=1"
grep -q '^#define HAVE_SYSTEMD 1' "$abs_top_builddir/config.h" 2>/dev/null \
        || skip77 "built without libsystemd (install libsystemd-dev and re-run configure)"
[ -f "$abs_top_builddir/pam_autogroup/.libs/pam_autogroup.so" ] || skip77 "the module is not built"

t0=$(date +%s)
"$HERE/vm-build.sh"
rc=$?
[ "$rc" = 77 ] && skip77 "cannot build the systemd guest (see above)"
[ "$rc" = 0 ] || { echo "not ok - building the systemd guest failed (rc $rc)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
t1=$(date +%s)

OUT=$(mktemp -d /var/tmp/agsd.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
chmod 755 "$OUT"
SHARES=(--ro "$abs_top_srcdir" --rw "$OUT")
[ "$abs_top_builddir" != "$abs_top_srcdir" ] && SHARES+=(--ro "$abs_top_builddir")
(cd "$OUT" && "$HERE/vm-run.sh" -t "${AG_VM_TIMEOUT:-900}" "${SHARES[@]}" -- \
        env abs_top_srcdir="$abs_top_srcdir" abs_top_builddir="$abs_top_builddir" \
        bash -c "bash '$HERE/guest-test.sh' > '$OUT/guest.log' 2>&1; rc=\$?; cat '$OUT/guest.log'; exit \$rc") \
        >"$OUT/console.log" 2>&1
rc=$?
t2=$(date +%s)
if [ -s "$OUT/guest.log" ]; then
        cat "$OUT/guest.log"
else
        echo "# guest console:"; sed 's/^/#   /' "$OUT/console.log" | tail -n 40
fi
echo "# build $((t1 - t0)) s, boot + test $((t2 - t1)) s"
case $rc in
0|1|77) exit "$rc";;
*)      echo "not ok - the guest did not finish (vm-run.sh rc $rc)"
        grep -q '^[0-9]* passed, ' "$OUT/guest.log" 2>/dev/null || echo "0 passed, 1 failed, 0 skipped"
        exit 1;;
esac
