#!/bin/bash
# The RPM side: build binary RPMs from rpm/pam_autogroup.spec with rpmbuild
# (Debian's rpm package: no RPM database of build dependencies, so --nodeps),
# the way the README says, `rpmbuild -tb` on the release tarball (the spec
# read from inside it), in a scratch _topdir. The tarball is made as
# `make dist` makes it, with `make distdir` and tar (make dist would write it
# into the build tree).
# Then check that the package holds exactly what `make install` installs
# (run again, independently, into a DESTDIR from rpmbuild's configured tree),
# plus only the %doc files, the two %dir and the build-id links rpmbuild adds; the paths of a Fedora/RHEL layout; the config as
# %config(noreplace); and that the packaged module really works: loaded by
# real libpam (pam_start_confdir) from the unpacked package, it groups a
# throw-away user's session on the host's cpu hierarchy.
# Skipped (77) only when rpmbuild is missing. Nothing is installed with rpm.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
# The spec's %check runs make check (unit tests only); never this test again inside it.
[ -z "${AG_IN_RPM_TEST:-}" ] && export AG_IN_RPM_TEST=1 || skip_all "nested in test-rpm.sh's own rpmbuild"
for c in rpmbuild rpm rpm2cpio cpio; do
        command -v "$c" >/dev/null 2>&1 || skip_all "$c not installed (package rpm, cpio)"
done
SPEC="$abs_top_srcdir/rpm/pam_autogroup.spec"
VERSION=$(sed -n 's/^PACKAGE_VERSION = //p' "$abs_top_builddir/Makefile")
NAME=pam_autogroup
R="$T/rpm"
mkdir -p "$R/SOURCES"

echo "# 1. the spec"
check "spec exists" test -f "$SPEC"
check_eq "spec Version is the package version ($VERSION)" "$VERSION" "$(sed -n 's/^Version: *//p' "$SPEC")"
check_eq "rpmspec parses the spec" 0 "$(rpmspec -q --srpm --qf '%{name}\n' "$SPEC" >/dev/null 2>&1; echo $?)"
# %check runs the unit tests, which need cmocka (the README says so); the
# build without them is explicit (--without check)
check "BuildRequires cmocka for %check" sh -c "rpmspec -q --buildrequires '$SPEC' 2>/dev/null | grep -qx 'pkgconfig(cmocka)'"
check_not "  not with --without check" sh -c "rpmspec -q --buildrequires --without check '$SPEC' 2>/dev/null | grep -q cmocka"

echo "# 2. rpmbuild -tb on the release tarball (the README's command)"
DIST="$T/$NAME-$VERSION"
make -s -C "$abs_top_builddir" distdir distdir="$DIST" >"$T/distdir.log" 2>&1
check "make distdir" test -f "$DIST/configure"
TARBALL="$R/SOURCES/$NAME-$VERSION.tar.gz"
tar -C "$T" -czf "$TARBALL" "$NAME-$VERSION"
rm -rf "$DIST"
check "the spec is in the tarball" sh -c "tar -tzf '$TARBALL' | grep -qx '$NAME-$VERSION/rpm/$NAME.spec'"
t0=$(date +%s)
# --noclean: keep the build tree for the make install comparison below
# Without the make variables of a calling make check: its MAKEFLAGS carry
# TESTS=..., which would reach the make check of the spec's %check.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u TESTS \
        rpmbuild -tb --nodeps --noclean --define "_topdir $R" --define "_smp_mflags -j2" \
        "$TARBALL" >"$T/rpmbuild.log" 2>&1
rc=$?
echo "# rpmbuild took $(( $(date +%s) - t0 )) s"
check_eq "rpmbuild -tb succeeded" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 40 "$T/rpmbuild.log" | sed 's/^/#   /'
check_not "no installed-but-unpackaged files" grep -q "Installed (but unpackaged) file(s) found" "$T/rpmbuild.log"
check "the %check unit tests ran" grep -qE "^# PASS: +[1-9]" "$T/rpmbuild.log"
RPM=$(ls "$R"/RPMS/*/"$NAME-$VERSION"-1*.rpm 2>/dev/null | grep -v -- '-debug' | head -n1)
check "a binary RPM was written" test -f "$RPM"
if [ ! -f "$RPM" ]; then finish; fi
echo "# $(basename "$RPM")"

echo "# 3. the file list is what make install installs"
BUILD=$(ls -d "$R"/BUILD/"$NAME-$VERSION" 2>/dev/null | head -n1)
check "rpmbuild's configured tree kept" test -f "$BUILD/Makefile"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make -s -C "$BUILD" install DESTDIR="$T/inst" >"$T/install.log" 2>&1
check "make install DESTDIR=... from the same configure" test -d "$T/inst"
# files and symlinks; man pages are compressed by rpmbuild (brp-compress)
(cd "$T/inst" && find . ! -type d | sed 's|^\.||' | sed -E 's/\.(gz|bz2|xz|zst)$//' | sort) >"$T/inst.list"
rpm -qlp "$RPM" 2>/dev/null >"$T/rpm.all"
rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms}\n]' "$RPM" 2>/dev/null | awk '$2 !~ /^d/ {print $1}' |
        sed -E 's/\.(gz|bz2|xz|zst)$//' | grep -v -e '^/usr/share/doc/' -e '^/usr/lib/\.build-id/' | sort >"$T/rpm.list"
if diff -u "$T/inst.list" "$T/rpm.list" >"$T/list.diff"; then
        ok "%files == make install ($(wc -l <"$T/inst.list") files)"
else
        not_ok "%files differs from make install"
        sed 's/^/#   /' "$T/list.diff"
fi
check "non-empty file list" test -s "$T/inst.list"
extra=""
while read -r f; do
        g=$(echo "$f" | sed -E 's/\.(gz|bz2|xz|zst)$//')
        grep -qx -F -- "$g" "$T/inst.list" && continue
        # %doc; the two %dir; the build-id links rpmbuild adds for each ELF file
        case "$f" in /usr/share/doc/*|/etc/security/autogroup.d|/usr/share/$NAME|/usr/lib/.build-id*) continue ;; esac
        [ -d "$T/inst$f" ] && continue   # a directory make install makes too
        extra="$extra $f"
done <"$T/rpm.all"
check_eq "nothing else in the package but %doc and its two %dir" "" "$extra"

echo "# 4. the layout of an RPM system"
has() { grep -qx -- "$1" "$T/rpm.all"; }
check "module in %{_libdir}/security" has /usr/lib64/security/pam_autogroup.so
check "no libtool archive" sh -c "! grep -q '\\.la\$' '$T/rpm.all'"
check "helper in %{_bindir}" has /usr/bin/autogroup
check "config in /etc/security" has /etc/security/autogroup.conf
check "drop-in directory owned" has /etc/security/autogroup.d
check "profile.d hook" has /etc/profile.d/autogroup-hook.sh
check "bashrc snippet" has /usr/share/pam_autogroup/autogroup.bashrc
for m in man1/autogroup.1 man5/autogroup.conf.5 man8/pam_autogroup.8; do
        check "man page $m" sh -c "grep -qE '^/usr/share/man/$m(\\.gz)?\$' '$T/rpm.all'"
done
flags() { rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$RPM" 2>/dev/null | awk -v f="$1" '$1 == f {print $2}'; }
check_eq "autogroup.conf is %config(noreplace)" cn "$(flags /etc/security/autogroup.conf)"
check_eq "the hook is %config(noreplace)" cn "$(flags /etc/profile.d/autogroup-hook.sh)"
mode() { rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms} %{FILEUSERNAME}\n]' "$RPM" 2>/dev/null | awk -v f="$1" '$1 == f {print $2, $3}'; }
check_eq "helper is not setuid" "-rwxr-xr-x root" "$(mode /usr/bin/autogroup)"
check_eq "config is root's, not writable by others" "-rw-r--r-- root" "$(mode /etc/security/autogroup.conf)"
check "requires pam" sh -c "rpm -qp --requires '$RPM' 2>/dev/null | grep -qx 'pam'"

echo "# 5. the packaged module and helper work (unpacked, not installed)"
X="$T/x"; mkdir -p "$X"
(cd "$X" && rpm2cpio "$RPM" | cpio -idm --quiet) 2>/dev/null
MOD="$X/usr/lib64/security/pam_autogroup.so"
check "module exports pam_sm_open_session" sh -c "nm -D --defined-only '$MOD' | grep -qw pam_sm_open_session"
check_eq "hook calls the helper at its installed path" 1 "$(grep -c '/usr/bin/autogroup' "$X/etc/profile.d/autogroup-hook.sh" 2>/dev/null | awk '{print ($1 > 0)}')"
check "packaged helper: check accepts the packaged config" "$X/usr/bin/autogroup" check "$X/etc/security/autogroup.conf"
if [ -f "$CPU/cpu.shares" ]; then
        ROOT="agtest-$$"
        AG_CGROOTS="$CPU/$ROOT"
        add_user "${TAG}r"
        IR=$(id -u "${TAG}r")
        printf '* weight 250\n' >"$T/rpm.conf"; chmod 644 "$T/rpm.conf"
        pam_other
        printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s\n' "$MOD" "$ROOT" "$T/rpm.conf" >"$T/agrpm"
        "$AGDRV" --pam "$T" agrpm "${TAG}r" open cgroup run-user "cat $CPU/$ROOT/user-$IR/cpu.shares >$U/shares" close >"$T/login.out" 2>&1
        check "login through the packaged module: open PAM_SUCCESS" grep -q '^open=PAM_SUCCESS' "$T/login.out"
        check "  grouped in <root>/user-<uid>/<session>/login" grep -q "^cgroup=/$ROOT/user-$IR/[^/]*/login\$" "$T/login.out"
        check_eq "  weight 250 -> cpu.shares 2560" 2560 "$(cat "$U/shares" 2>/dev/null)"
        check "  removed at close" test ! -e "$CPU/$ROOT/user-$IR"
else
        skip "no cgroup v1 cpu hierarchy at $CPU: packaged module not logged in with"
fi

finish
