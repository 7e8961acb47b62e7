#!/bin/bash
# End-to-end test of the Debian package, the way an administrator installs it:
# build libpam-autogroup with dpkg-buildpackage from a copy of the source tree,
# lintian it, install it with apt (its postinst runs pam-auth-update, which adds
# the session line to /etc/pam.d/common-session), log a throw-away user in with
# `su -l` through the system's real PAM stack, check the groups, then remove and
# purge the package and check that /etc/pam.d is byte-identical to before.
#
# This test changes the machine's PAM stack for as long as the package is
# installed (a few seconds), with the default root group "autogroup". It skips
# when that could collide with a real install: the package already installed,
# pam_autogroup.so already in /etc/pam.d, sessions under <cpu>/autogroup, or a
# file at one of the package's paths (a `make install` leaves them): dpkg would
# overwrite it (or stop at its conffile prompt) and the purge would delete it.
# It removes only what it installed.
# Only with AG_TEST_SYSTEM=1 (skipped otherwise, saying so). Makefile.am runs it
# after every host test of `make check`. It does not capture
# syslog: /dev/log belongs to whichever other host test took it first.
# The EXIT trap purges the package, removes the user and the temp dirs, and
# removes the empty root group if this test made it.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
# It changes the machine: only when asked (doc/testing.md, "What make check touches").
[ "${AG_TEST_SYSTEM:-0}" = 1 ] || skip_all "installs the Debian package, whose postinst adds the module to the machine's /etc/pam.d/common-session while it runs: set AG_TEST_SYSTEM=1 to run it (.ci/run does)"
for c in dpkg-buildpackage dpkg-checkbuilddeps dh lintian apt-get pam-auth-update su flock; do
        command -v "$c" >/dev/null 2>&1 || skip_all "$c not installed (needs debhelper lintian dpkg-dev apt libpam-runtime)"
done
require_v1_cpu
# One package test at a time on this machine (several trees may run make check).
exec 9>/run/lock/pam-autogroup-test-package.lock
flock -w 900 9 || skip_all "another package test holds /run/lock/pam-autogroup-test-package.lock"
# Nothing that sees this machine's /etc runs meanwhile: the minimal guest lanes
# (tests/vm), whose root is the host's own, hold this lock shared while they run
# (.ci/run runs them beside the host tests).
exec 8>/run/lock/pam-autogroup-test-system.lock
flock -w 3600 8 || skip_all "a guest lane held /run/lock/pam-autogroup-test-system.lock for an hour"
PKG=libpam-autogroup
installed() { dpkg-query -W -f='${db:Status-Status}' "$PKG" 2>/dev/null | grep -qv '^not-installed$'; }
installed && skip_all "$PKG is installed on this machine; not touching a real install"
grep -rqs pam_autogroup /etc/pam.d && skip_all "pam_autogroup.so already appears in /etc/pam.d"
grep -qs '^# end of pam-auth-update config' /etc/pam.d/common-session ||
        skip_all "/etc/pam.d/common-session is not managed by pam-auth-update"
AGROOT="$CPU/autogroup"
ROOT_EXISTED=no
if [ -d "$AGROOT" ]; then
        [ -z "$(find "$AGROOT" -mindepth 1 -type d -print -quit)" ] && [ ! -s "$AGROOT/cgroup.procs" ] ||
                skip_all "$AGROOT holds groups or processes (a real pam_autogroup is in use)"
        ROOT_EXISTED=yes
fi

SRC="$T/src"
export DEBIAN_FRONTEND=noninteractive
APT="apt-get -y -q -o DPkg::Lock::Timeout=120"
UP="${TAG}p"
PKG_TOUCHED=no

pkg_cleanup() {
        if [ "$PKG_TOUCHED" = yes ] && installed; then
                $APT purge "$PKG" >/dev/null 2>&1 || dpkg --purge "$PKG" >/dev/null 2>&1
        fi
        if id "$UP" >/dev/null 2>&1; then
                pkill -KILL -u "$UP" 2>/dev/null && sleep 0.1
                rm_cgroup_tree "$AGROOT/user-$(id -u "$UP")"
        fi
        if [ "$ROOT_EXISTED" = no ]; then
                [ -d "$AGROOT" ] && rmdir "$AGROOT" 2>/dev/null
        elif [ ! -d "$AGROOT" ]; then
                mkdir "$AGROOT" 2>/dev/null     # it was there, empty, before the test
        fi
        return 0
}
trap 'pkg_cleanup; ag_cleanup' EXIT

# snapshot FILE: names, types, modes, owners, link targets and sha256 of the
# files under /etc/pam.d and pam-auth-update's state in /var/lib/pam
snapshot() {
        find /etc/pam.d /var/lib/pam -printf '%p %y %m %u %g %l\n' 2>/dev/null | LC_ALL=C sort >"$1"
        find /etc/pam.d /var/lib/pam -type f -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 sha256sum >>"$1"
}

echo "# 1. build the package from a copy of the source tree"
mkdir "$SRC"
top=$(git -C "$abs_top_srcdir" rev-parse --show-toplevel 2>/dev/null || true)
if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$abs_top_srcdir" && pwd -P)" ]; then
        # a git work tree: tracked and untracked files, without what .gitignore lists
        git -C "$abs_top_srcdir" ls-files -z -co --exclude-standard |
                (cd "$abs_top_srcdir" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$SRC" -xf -
else
        # an unpacked tarball (make distcheck: read-only, and a clean dist tree)
        cp -a "$abs_top_srcdir/." "$SRC/"
        chmod -R u+w "$SRC"
fi
[ -f "$SRC/debian/control" ] || { not_ok "debian/control is in the source tree"; finish; }
deps=$(cd "$SRC" && dpkg-checkbuilddeps 2>&1) || skip_all "build dependencies missing: ${deps#*: }"
# The outer make's flags (jobserver, command-line variables) must not leak into debian/rules.
if (cd "$SRC" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u DESTDIR \
                dpkg-buildpackage -us -uc -b -Jauto) >"$T/build.log" 2>&1; then
        ok "dpkg-buildpackage -us -uc -b"
else
        not_ok "dpkg-buildpackage -us -uc -b"; tail -n 40 "$T/build.log" | sed 's/^/# /'; finish
fi
DEB=$(ls "$T"/${PKG}_*.deb 2>/dev/null | head -n1)
check "the binary package $PKG exists" test -f "$DEB"
[ -f "$DEB" ] || finish
grep -q '^PASS: tests/unit/' "$T/build.log" && ok "unit tests ran during the build" ||
        skip "unit tests ran during the build (none: cmocka missing, or nocheck)"
AC_VERSION=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$SRC/configure.ac")
check_eq "debian/changelog version matches configure.ac" "$AC_VERSION" "$(cd "$SRC" && dpkg-parsechangelog -SVersion)"

echo "# 2. contents"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
MOD="/lib/$MA/security/pam_autogroup.so"
dpkg-deb -c "$DEB" >"$T/contents.long"
awk '{ print $6 }' "$T/contents.long" | sed 's|^\./|/|' >"$T/contents"
dpkg-deb -e "$DEB" "$T/control"
for f in "$MOD" /usr/bin/autogroup /usr/share/pam-configs/autogroup /etc/security/autogroup.conf \
         /etc/profile.d/autogroup-hook.sh /usr/share/man/man8/pam_autogroup.8.gz \
         /usr/share/man/man5/autogroup.conf.5.gz /usr/share/man/man1/autogroup.1.gz \
         /usr/share/doc/$PKG/copyright; do
        check "package ships $f" grep -qx -- "$f" "$T/contents"
done
check_not "no libtool .la file shipped" grep -q '\.la$' "$T/contents"
check "autogroup.conf is a conffile" grep -qx /etc/security/autogroup.conf "$T/control/conffiles"
check "the profile.d hook is a conffile" grep -qx /etc/profile.d/autogroup-hook.sh "$T/control/conffiles"
check_not "nothing in the package is setuid or setgid" grep -Eq '^-..[sS]|^-.....[sS]' "$T/contents.long"
check "postinst runs pam-auth-update --package" grep -q 'pam-auth-update --package$' "$T/control/postinst"
check "prerm runs pam-auth-update --package --remove autogroup" \
        grep -q 'pam-auth-update --package --remove autogroup' "$T/control/prerm"
# the metrics timer and cron line: shipped, neither turned on
for f in /lib/systemd/system/autogroup-metrics.timer /lib/systemd/system/autogroup-metrics.service \
         /etc/cron.d/autogroup-metrics; do
        check "package ships $f" grep -qx -- "$f" "$T/contents"
done
check "postinst enables the gc timer" grep -q "deb-systemd-helper enable 'autogroup-gc.timer'" "$T/control/postinst"
# dh_installsystemd --no-enable: enabled again on upgrade only where the administrator enabled it
check "postinst leaves the metrics timer off (enables it only where it was enabled)" \
        grep -q "deb-systemd-helper debian-installed 'autogroup-metrics.timer'" "$T/control/postinst"

# A file at one of the package's paths that is not the package's: installing
# would overwrite it (a conffile: dpkg's prompt) and the purge would delete
# what this test did not install. Directories are shared and fine.
while IFS= read -r f; do
        [ -n "$f" ] && [ "${f%/}" = "$f" ] || continue
        [ -e "$f" ] || [ -L "$f" ] || continue
        [ -d "$f" ] && [ ! -L "$f" ] && continue
        if owner=$(dpkg-query -S "$f" 2>/dev/null); then
                skip_all "$f exists and belongs to ${owner%%:*}: installing $PKG would overwrite it"
        fi
        skip_all "$f exists and no package owns it (a 'make install'?): installing $PKG would overwrite it and purging it would delete it"
done <"$T/contents"
ok "no file at the package's paths exists on this machine"

echo "# 3. lintian"
(cd "$T" && lintian --no-cfg --fail-on error "$(ls ./*.changes | head -n1)") >"$T/lintian.out" 2>&1
lint_rc=$?
grep -v '^running with root privileges' "$T/lintian.out" | sed 's/^/# /'
if [ "$lint_rc" -eq 0 ] && ! grep -q '^E: ' "$T/lintian.out"; then ok "lintian: no errors"; else not_ok "lintian: no errors"; fi

echo "# 4. install with apt: pam-auth-update enables the module in common-session"
snapshot "$T/pam.before"
PKG_TOUCHED=yes
if $APT install "$DEB" >"$T/install.log" 2>&1; then ok "apt-get install ./$(basename "$DEB")"; else
        not_ok "apt-get install ./$(basename "$DEB")"; sed 's/^/# /' "$T/install.log"; finish; fi
check "$MOD is installed" test -f "$MOD"
check "the helper is installed" test -x /usr/bin/autogroup
line='^session[[:space:]]+optional[[:space:]]+pam_autogroup\.so[[:space:]]*$'
check "common-session has 'session optional pam_autogroup.so'" grep -Eq "$line" /etc/pam.d/common-session
check_not "common-session-noninteractive does not have it (Session-Interactive-Only)" \
        grep -q pam_autogroup /etc/pam.d/common-session-noninteractive
if grep -q pam_systemd /etc/pam.d/common-session; then
        n_sd=$(grep -n pam_systemd /etc/pam.d/common-session | head -n1 | cut -d: -f1)
        n_ag=$(grep -n pam_autogroup /etc/pam.d/common-session | head -n1 | cut -d: -f1)
        check "pam_autogroup comes after pam_systemd (on cgroup v1 logind's scope start would undo its group)" \
                test "${n_ag:-0}" -gt "$n_sd"
fi
check "autogroup check accepts the shipped autogroup.conf" /usr/bin/autogroup check /etc/security/autogroup.conf
check "the gc timer is enabled" test -L /etc/systemd/system/timers.target.wants/autogroup-gc.timer
check_not "the metrics timer is not" test -e /etc/systemd/system/timers.target.wants/autogroup-metrics.timer
check_not "the metrics cron line is commented out" grep -q '^[^#].*autogroup metrics' /etc/cron.d/autogroup-metrics
check "autogroup metrics runs from the package" /usr/bin/autogroup metrics

echo "# 5. a login through the system's PAM stack: su -l"
add_user "$UP"
IP=$(id -u "$UP")
cat >"$T/probe.sh" <<'EOF'
cg=$(awk -F: '{ n = split($2, c, ","); for (i = 1; i <= n; i++) if (c[i] == "cpu") print $3 }' /proc/self/cgroup)
echo "cg=$cg"
d=$1$cg
echo "session_owner=$(stat -c %U "${d%/*}")"
echo "session_procs_owner=$(stat -c %U "${d%/*}/cgroup.procs")"
echo "session_shares_owner=$(stat -c %U "${d%/*}/cpu.shares")"
echo "user_owner=$(stat -c %U "${d%/*/*}")"
EOF
chmod 644 "$T/probe.sh"
su -l "$UP" -c "sh $T/probe.sh $CPU" >"$T/su.out" 2>"$T/su.err"
su_rc=$?
sed 's/^/# su: /' "$T/su.out" "$T/su.err"
check_eq "su -l exits 0" 0 "$su_rc"
pv() { sed -n "s/^$1=//p" "$T/su.out" | head -n1; }
CG=$(pv cg)
if printf '%s\n' "$CG" | grep -Eq "^/autogroup/user-$IP/[^/]+/login\$"; then
        ok "the login's shell ran in /autogroup/user-$IP/<session>/login ($CG)"
else
        not_ok "the login's shell ran in /autogroup/user-$IP/<session>/login (got '$CG')"
fi
check_eq "the session group stayed root's (the profile's line has no delegate=yes)" root "$(pv session_owner)"
check_eq "the session's cgroup.procs stayed root's" root "$(pv session_procs_owner)"
check_eq "the session's cpu.shares stayed root's" root "$(pv session_shares_owner)"
check_eq "the user group was root's" root "$(pv user_owner)"
if [ -n "$CG" ]; then
        check_not "the session group is gone after logout" test -e "$CPU${CG%/login}"
fi
check_not "the user group is gone after logout" test -e "$AGROOT/user-$IP"

echo "# 6. upgrade keeps the administrator's choice; remove takes the line out"
check "pam-auth-update --disable autogroup" pam-auth-update --disable autogroup
check_not "common-session no longer has the module" grep -q pam_autogroup /etc/pam.d/common-session
check "reinstall (prerm upgrade, postinst configure)" $APT install --reinstall "$DEB"
check_not "still disabled after the reinstall" grep -q pam_autogroup /etc/pam.d/common-session
check "pam-auth-update --enable autogroup" pam-auth-update --enable autogroup
check "enabled again" grep -Eq "$line" /etc/pam.d/common-session
check "apt-get remove" $APT remove "$PKG"
check_not "removed: common-session has no pam_autogroup" grep -q pam_autogroup /etc/pam.d/common-session
check_not "removed: the module is gone" test -e "$MOD"
check "removed: autogroup.conf stays (a conffile)" test -f /etc/security/autogroup.conf
# an interactive shell prints the same with the orphaned hook as without it
hook_silent() {
        [ "$(sh -i -c '. /etc/profile.d/autogroup-hook.sh; echo "rc=$?"' 2>&1 </dev/null)" = \
          "$(sh -i -c 'true; echo "rc=$?"' 2>&1 </dev/null)" ]
}
check "removed: the hook left behind is silent and harmless" hook_silent

echo "# 7. purge: /etc/pam.d exactly as before"
check "apt-get purge" $APT purge "$PKG"
check_not "the package is gone" installed
snapshot "$T/pam.after"
if cmp -s "$T/pam.before" "$T/pam.after"; then
        ok "/etc/pam.d and /var/lib/pam are byte-identical to before"
else
        not_ok "/etc/pam.d and /var/lib/pam are byte-identical to before"
        diff "$T/pam.before" "$T/pam.after" | sed 's/^/# /'
fi
for f in /etc/security/autogroup.conf /etc/profile.d/autogroup-hook.sh "$MOD" /usr/bin/autogroup \
         /usr/share/pam-configs/autogroup; do
        check_not "purged: $f is gone" test -e "$f"
done
check_eq "no groups left under $AGROOT" "" "$(find "$AGROOT" -mindepth 1 -type d 2>/dev/null)"

echo "# 8. autopkgtest (null runner): debian/tests against the installed package"
# The way Debian's CI tests a package: autopkgtest installs the built .deb
# here and runs debian/tests/real-clients (su -l, sudo -i, sshd on loopback,
# cron) through the system's PAM stack; then the package is purged again.
if command -v autopkgtest >/dev/null; then
        autopkgtest -B "$DEB" "$SRC/" -- null >"$T/autopkgtest.log" 2>&1
        apt_rc=$?
        grep -E '^(ok|not ok) - |passed, .* failed|^real-clients ' "$T/autopkgtest.log" | sed 's/^/# autopkgtest: /'
        check_eq "autopkgtest: real-clients PASS (exit $apt_rc)" "real-clients PASS" \
                "$(grep -Eo '^real-clients +(PASS|FAIL|SKIP)' "$T/autopkgtest.log" | tr -s ' ' | tail -n1)"
        check_eq "autopkgtest: su -l, sudo -i, ssh and cron (2 checks each), all passed" "8 passed, 0 failed" \
                "$(grep -Eo '^[0-9]+ passed, [0-9]+ failed' "$T/autopkgtest.log" | tail -n1)"
        $APT purge "$PKG" >/dev/null 2>&1
        snapshot "$T/pam.after2"
        check "after autopkgtest and purge: /etc/pam.d byte-identical to before" cmp -s "$T/pam.before" "$T/pam.after2"
else
        skip "autopkgtest is not installed (bash .ci/apt-install autopkgtest)"
fi
if [ "$ROOT_EXISTED" = no ]; then
        check_not "postrm removed the empty root group $AGROOT" test -d "$AGROOT"
fi
finish
