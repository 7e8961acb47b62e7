#!/bin/bash
# Building and installing on a host as an administrator would, from the
# release tree (make distdir) in a build directory of its own:
# 1. a host without libsystemd's headers and pkg-config file (libsystemd-dev
#    not installed; hidden in a private mount namespace) still gets the
#    systemd mode, loaded at run time: configure says so, the module needs no
#    libsystemd.so, and a mode=systemd login on a host that looks booted with
#    systemd reaches for the bus instead of logging "built without libsystemd";
# 2. make install with the default prefix into a DESTDIR puts the gc cron
#    file where cron reads it (/etc/cron.d), not /usr/local/etc/cron.d.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
command -v unshare >/dev/null || skip_all "no unshare"
[ -f "$abs_top_builddir/Makefile" ] || skip_all "no configured build tree"
for c in "${CC:-cc}" make pkg-config; do
        command -v "$c" >/dev/null || skip_all "no $c here: this host cannot build the release tree"
done
start_syslog || true

new_user a
SRC="$T/src"; B="$T/build"; DEST="$T/dest"
mkdir "$B" "$DEST" "$T/no-headers" "$T/pc"

echo "# 0. the release tree"
check "make distdir" make -s -C "$abs_top_builddir" distdir distdir="$SRC" top_distdir="$SRC"

# pkg-config's search path without libsystemd.pc (what a host without
# libsystemd-dev has), and an empty /usr/include/systemd in a private mount
# namespace for the configure and the build
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
        for f in "$d"/*.pc; do
                [ -e "$f" ] && [ "$(basename "$f")" != libsystemd.pc ] && [ ! -e "$T/pc/$(basename "$f")" ] &&
                        ln -s "$f" "$T/pc/"
        done
done
hidden() { # hidden CMD: CMD where libsystemd's headers and .pc file are not there
        unshare -m --propagation private sh -c "
                { [ ! -d /usr/include/systemd ] || mount --bind '$T/no-headers' /usr/include/systemd; } &&
                cd '$B' && PKG_CONFIG_LIBDIR='$T/pc' $*"
}

echo "# 1. no libsystemd headers: the systemd mode is built in all the same"
check "pkg-config finds no libsystemd there" test -z "$(PKG_CONFIG_LIBDIR="$T/pc" pkg-config --modversion libsystemd 2>/dev/null)"
hidden "test ! -e /usr/include/systemd/sd-bus.h && '$SRC/configure'" >"$T/configure.out" 2>&1
check "configure succeeds" grep -q "systemd:" "$T/configure.out"
sed -n 's/^ *systemd: */# configure: systemd: /p' "$T/configure.out"
check "configure: the systemd mode is in, lib/systemd/sdbus.h standing in for the headers" \
        grep -q "systemd: *yes (libsystemd.so.0 loaded at run time; no sd-bus headers here, lib/systemd/sdbus.h used)" "$T/configure.out"
hidden "make -j2 >'$T/make.out' 2>&1"
check "the build succeeds" test -f "$B/pam_autogroup/.libs/pam_autogroup.so"
MOD="$B/pam_autogroup/.libs/pam_autogroup.so"
check_not "the module does not need libsystemd.so (it is loaded at run time)" \
        sh -c "readelf -d '$MOD' | grep NEEDED | grep -q libsystemd"
check "the module holds the sd-bus calls it looks up with dlsym()" grep -q sd_bus_open_system "$MOD"

# A login in mode=systemd, on a host that looks booted with systemd (a
# private /run with /run/systemd/system) but has no D-Bus: the module tries
# the bus and logs why it failed, rather than that it was built without it.
CONF="$T/autogroup.conf"
printf '%s  weight  300\n' "$UA" >"$CONF"; chmod 644 "$CONF"
pam_other
printf 'session required pam_permit.so\nsession optional %s root=agtest-%s conf=%s mode=systemd\n' \
        "$MOD" "$$" "$CONF" >"$T/agsd"
unshare -m --propagation private sh -c "mount -t tmpfs -o mode=0755 agtest-run /run &&
        mkdir -p /run/systemd/system && '$AGDRV' --pam '$T' agsd '$UA' open close" >"$T/sd.out" 2>&1
check "mode=systemd login: the login goes on" grep -q '^open=PAM_SUCCESS' "$T/sd.out"
log_has "mode=systemd: the module reached for the bus (one line naming the slice)" \
        "user-$IA.slice for $UA through systemd"
if have_syslog; then
        check_not "  and does not say it was built without libsystemd" grep -q "built without libsystemd" "$SYSLOG"
fi

echo "# 2. make install with the default prefix: the gc cron file where cron reads it"
hidden "make install DESTDIR='$DEST' >'$T/install.out' 2>&1"
check "make install into DESTDIR succeeds" grep -q "autogroup-gc" "$T/install.out"
check "the cron file is in DESTDIR/etc/cron.d" test -f "$DEST/etc/cron.d/autogroup-gc"
check_not "  not in DESTDIR/usr/local/etc/cron.d (cron never reads that)" test -e "$DEST/usr/local/etc/cron.d"
check "  and runs the helper installed in /usr/local/bin" grep -q " /usr/local/bin/autogroup gc" "$DEST/etc/cron.d/autogroup-gc"
check "the helper is in DESTDIR/usr/local/bin" test -x "$DEST/usr/local/bin/autogroup"
check "the shell hook is in DESTDIR/etc/profile.d" test -f "$DEST/etc/profile.d/autogroup-hook.sh"

finish
