#!/bin/bash
# "autogroup check" on this host, with the real name service and real files:
#   1. a FILE named on the command line that is no configuration (missing, a
#      directory, /dev/zero, a binary, 100,000 lines, unreadable to the user
#      running check): a clear error, a non-zero exit, bounded output, time
#      (timeout as a guard only) and memory (ulimit -v);
#   2. lines that parse but change the policy silently, each a warning naming
#      FILE:LINE: a uid range written with '-', an unknown user or @group,
#      a rule a later line overrides; --strict makes them exit 3, a clean
#      file still says only "FILE: OK, N rules";
#   3. a name service that cannot answer (a private nsswitch.conf "files
#      ldap" with no nslcd, in a private mount namespace) is said as such;
#   4. the PAM stacks (a fixture directory through --pam-dir): two roots in
#      one stack (and, through real libpam, that the later line steps aside),
#      and pam_autogroup before pam_systemd where the host is booted with
#      systemd and cpu is on cgroup v1 (a private /run holding
#      /run/systemd/system poses as that on this v1 host; --hierarchy on the
#      cgroup2 mount poses as cgroup v2).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_helper

new_user u
USR="${TAG}u"
add_group "${TAG}g"
GRP="${TAG}g"
ROOT="agtest-$$"
AG_CGROOTS="$CPU/$ROOT"
C="$T/conf"; mkdir -m 755 "$C"

# chk OUT [ARG...]: autogroup check, bounded (a guard, not a measure) and in
# at most 256 MiB of address space; the output in $T/OUT, its status in $T/OUT.rc.
# A helper built with AddressSanitizer (.ci/sanitize) maps terabytes of
# shadow memory at start: there the address-space bound is left out (ASan
# itself then reports any heap overflow, LeakSanitizer any leak).
if nm -D "$HELPER" 2>/dev/null | grep -q __asan_init; then AS_LIMIT=unlimited; else AS_LIMIT=262144; fi
# On a host in the systemd mode check ends with what systemd has now (lines
# from the first "systemd mode:" on, guest-test.sh checks them): they go to
# $T/OUT.systemd, so that $T/OUT holds what the file alone gives on any host.
chk() {
        local out="$1"; shift
        ( ulimit -v "$AS_LIMIT"; exec timeout -k 5 120 "$HELPER" "$@" ) >"$T/$out.all" 2>&1
        echo $? >"$T/$out.rc"
        sed '/^systemd mode: /,$d' "$T/$out.all" >"$T/$out"
        sed -n '/^systemd mode: /,$p' "$T/$out.all" >"$T/$out.systemd"
}
rc() { cat "$T/$1.rc"; }
has() { grep -qF -- "$2" "$T/$1"; }
lines() { wc -l <"$T/$1"; }
conf() { # conf NAME TEXT: a root-owned 0644 config file
        printf '%s' "$2" >"$C/$1"; chmod 644 "$C/$1"
}

echo "# 1. a FILE named on the command line that is no configuration"
chk missing check "$C/mistyped.conf"
check_eq "a missing FILE: exit 1" 1 "$(rc missing)"
check "a missing FILE: 'does not exist', 1 error" \
        sh -c "grep -qx '$C/mistyped.conf: does not exist' '$T/missing' && grep -qx '$C/mistyped.conf: 1 error' '$T/missing'"
mkdir -m 755 "$C/dropins-only.d"; conf dropins-only.d/10-a.conf "* weight 200
"
chk dropinsonly check "$C/dropins-only.conf"
check_eq "a missing FILE whose drop-in directory exists: the drop-ins are the configuration, exit 0" \
        0 "$(rc dropinsonly)"
check "... and it says the defaults apply to the rest" has dropinsonly "does not exist, the built-in defaults apply"

mkdir -m 755 "$C/adir"
chk dir check "$C/adir"
check_eq "a directory: exit 1" 1 "$(rc dir)"
check "a directory: said so" has dir "$C/adir: not a regular file (a directory)"
chk zero check /dev/zero
check_eq "/dev/zero: exit 1" 1 "$(rc zero)"
check "/dev/zero: said so" has zero "/dev/zero: not a regular file (a device)"

head -c 262144 "$HELPER" >"$C/binary.conf"; chmod 644 "$C/binary.conf"    # the first 256 KiB of an ELF file
chk binary check "$C/binary.conf"
check_eq "a binary file: exit 1" 1 "$(rc binary)"
check "a binary file: said to be one" has binary "NUL bytes: a binary file, not a configuration"
check "a binary file: the rest of its errors counted, not printed" has binary "more errors not shown"
check "a binary file: at most 50 errors printed ($(lines binary) lines)" test "$(lines binary)" -le 55

yes 'x' | head -n 100000 >"$C/errors.conf"; chmod 644 "$C/errors.conf"
chk errors check "$C/errors.conf"
check_eq "100,000 malformed lines: exit 1" 1 "$(rc errors)"
check "100,000 malformed lines: all counted" has errors "$C/errors.conf: 100000 errors"
check "100,000 malformed lines: 50 printed, then how many more ($(lines errors) lines)" \
        sh -c "[ $(lines errors) -le 53 ] && grep -qF '99950 more errors not shown' '$T/errors'"
NREP=100000
yes "* idle no" | head -n "$NREP" >"$C/repeated.conf"; chmod 644 "$C/repeated.conf"
chk repeated check "$C/repeated.conf"
check_eq "$NREP valid lines (one rule repeated): exit 0" 0 "$(rc repeated)"
check "... OK, with its warnings counted" has repeated "$C/repeated.conf: OK, $NREP rules, $((NREP - 1)) warnings"
check "... bounded output ($(lines repeated) lines)" test "$(lines repeated)" -le 53
chk repeated-strict check --strict "$C/repeated.conf"
check_eq "... with --strict: exit 3" 3 "$(rc repeated-strict)"
seq 100000 | sed "s/^/$USR weight /; s/ weight \([0-9]*\)\$/ weight 1/" >"$C/large.conf"; chmod 644 "$C/large.conf"
chk large check "$C/large.conf"
check_eq "100,000 lines over 1 MiB: exit 1" 1 "$(rc large)"
check "100,000 lines over 1 MiB: refused as too large" has large "$C/large.conf: file too large, ignored"
for o in missing dir zero binary errors repeated large; do
        check_not "$o: no hang, within the memory bound (rc $(rc $o))" test "$(rc $o)" -ge 124
done

# unreadable to the user who runs check
conf secret.conf "* weight 50
"; chmod 600 "$C/secret.conf"
as_user "$USR" "timeout 60 '$HELPER' check '$C/secret.conf' >'$U/secret' 2>&1; echo \$? >'$U/secret.rc'"
check_eq "a file the user cannot read: exit 1" 1 "$(cat "$U/secret.rc")"
check "... 'cannot open: Permission denied'" grep -qF "$C/secret.conf: cannot open: Permission denied" "$U/secret"
as_user "$USR" "timeout 60 '$HELPER' check /dev/zero >'$U/zero' 2>&1; echo \$? >'$U/zero.rc'"
check_eq "/dev/zero as the user: exit 1" 1 "$(cat "$U/zero.rc")"
as_user "$USR" "timeout 60 '$HELPER' check '$C/nowhere.conf' >'$U/nowhere' 2>&1; echo \$? >'$U/nowhere.rc'"
check_eq "a missing FILE as the user: exit 1" 1 "$(cat "$U/nowhere.rc")"

echo "# 2. lines that change the policy silently"
conf clean.conf "* weight 100
$USR weight 300
@$GRP max 50%
1000: sessions yes
"
chk clean check "$C/clean.conf"
check_eq "a clean file: exit 0" 0 "$(rc clean)"
check_eq "a clean file: one line, as before" "$C/clean.conf: OK, 4 rules" "$(cat "$T/clean")"
chk clean-strict check --strict "$C/clean.conf"
check_eq "a clean file with --strict: exit 0" 0 "$(rc clean-strict)"

conf policy.conf "1000-2000 weight 50
$USR weight 300
nosuch-$$ weight 20
@nogroup-$$ max 50%
@$GRP idle yes
* weight 100
* weight 200
$USR weight 300
"
mkdir -m 755 "$C/policy.d"; conf policy.d/50-cap.conf "@$GRP idle no
"
chk policy check "$C/policy.conf"
P="$C/policy.conf"
check_eq "warnings alone: exit 0" 0 "$(rc policy)"
check "a dash range: not a uid range, write 1000:2000" \
        has policy "warning: $P:1: '1000-2000' is read as a user name, not as a uid range: write 1000:2000"
check "an unknown user" has policy "warning: $P:3: unknown user 'nosuch-$$' (the name service does not know it): the rule applies to nobody"
check "an unknown group" has policy "warning: $P:4: unknown group '@nogroup-$$' (the name service does not know it): the rule applies to nobody"
check "a rule a later line overrides" has policy "warning: $P:6: overridden by $P:7 (the same domain and item: the later line wins)"
check "a rule repeated" has policy "warning: $P:2: repeated by $P:8 (the same domain, item and value): this line has no effect"
check "a rule a drop-in overrides" has policy "warning: $P:5: overridden by $C/policy.d/50-cap.conf:1 (the same domain and item: the later line wins)"
check_not "a known user, a known group: nothing said of them" grep -qE "unknown (user '$USR'|group '@$GRP')" "$T/policy"
check "the summary counts them" has policy "$P: OK, 9 rules, 6 warnings"
chk policy-strict check --strict "$P"
check_eq "warnings with --strict: exit 3" 3 "$(rc policy-strict)"
printf 'bad line\n' >>"$C/policy.d/50-cap.conf"
chk policy-err check --strict "$P"
check_eq "errors and warnings with --strict: exit 1 (errors keep theirs)" 1 "$(rc policy-err)"
check "... the summary counts both" has policy-err "$P: 1 error, 6 warnings"

echo "# 3. a name service that cannot answer"
printf 'passwd: files ldap\ngroup: files ldap\nshadow: files\n' >"$T/nsswitch.conf"
conf down.conf "$USR weight 300
nosuch-$$ weight 20
@nogroup-$$ max 50%
"
P="$C/down.conf"
unshare -m --propagation private sh -c '
        mount --bind "$1" /etc/nsswitch.conf || exit 125
        if [ -d /run/nslcd ]; then mount -t tmpfs -o mode=0755 agtest-nslcd /run/nslcd || exit 125; fi
        exec timeout -k 5 120 "$2" check "$3"' sh "$T/nsswitch.conf" "$HELPER" "$P" >"$T/down" 2>&1
echo $? >"$T/down.rc"
check_eq "the name service down: warnings only, exit 0" 0 "$(rc down)"
check "a local user is still known (files answers first)" sh -c "! grep -q \"'$USR'\" '$T/down'"
if ldconfig -p 2>/dev/null | grep -q 'libnss_ldap\.so'; then
        check "the first name it cannot answer for: said so, not 'unknown'" grep -qE \
                "^warning: $P:2: cannot look up user 'nosuch-$$': the name service could not answer \([^;]*; is a directory down\?\); the names after it were not looked up\$" "$T/down"
        check_not "no 'unknown' claimed while it is down" grep -q "unknown \(user\|group\)" "$T/down"
else
        skip "a name service that cannot answer (no libnss_ldap here: glibc skips an nsswitch source it cannot load)"
        skip "no 'unknown' claimed while it is down (no libnss_ldap here)"
fi

echo "# 4. the PAM stacks"
D="$T/pam.d"; mkdir -m 755 "$D"
printf '%s\n' "session [default=1] pam_permit.so" "session requisite pam_deny.so" "session required pam_permit.so" \
        "session optional pam_autogroup.so conf=$C/clean.conf" "session required pam_unix.so" \
        "-session optional pam_systemd.so" >"$D/common-session"
printf '@include common-session\n' >"$D/sshd"
printf 'session include common-session\n' >"$D/login"
in_fake_systemd() { # a private /run holding /run/systemd/system: "booted with systemd"
        unshare -m --propagation private sh -c 'mount -t tmpfs -o mode=0755 agtest-run /run &&
                mkdir -p /run/systemd/system && shift && exec timeout -k 5 120 "$@"' sh - "$@"
}
ORDER="warning: $D/common-session:4: comes before pam_systemd.so at $D/common-session:6 in the stack of common-session, login, sshd: on this host (booted with systemd, cpu on cgroup v1) logind's session scope then moves every login out of its group; put pam_autogroup after pam_systemd"
if [ -e /run/systemd/system ]; then
        skip "this host runs systemd: the not-booted case does not apply"
else
        chk order-nosd check --pam-dir "$D"
        check_eq "not booted with systemd: exit 0" 0 "$(rc order-nosd)"
        check_not "not booted with systemd: no word on the order" grep -q "pam_systemd" "$T/order-nosd"
fi
if [ -f "$CPU/cpu.shares" ]; then
        in_fake_systemd "$HELPER" check --pam-dir "$D" >"$T/order-v1" 2>&1; echo $? >"$T/order-v1.rc"
        check_eq "systemd with cpu on cgroup v1: warnings alone, exit 0" 0 "$(rc order-v1)"
        check "systemd with cpu on cgroup v1, pam_autogroup before pam_systemd: both lines and the fix named" \
                has order-v1 "$ORDER"
        in_fake_systemd "$HELPER" check --strict --pam-dir "$D" >/dev/null 2>&1; echo $? >"$T/order-strict.rc"
        check_eq "... with --strict: exit 3" 3 "$(rc order-strict)"
else
        skip "cpu is not on cgroup v1 here ($CPU): the v1 order (tests/unit/test-pamconf covers it)"
fi
# cgroup v2: this host's own when it is one, else the cgroup2 mount without cpu
V2=""
[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] && V2=/sys/fs/cgroup
[ -z "$V2" ] && [ "$(stat -f -c %T "$UNIFIED" 2>/dev/null)" = cgroup2fs ] && V2=$UNIFIED
if [ -n "$V2" ]; then
        in_fake_systemd "$HELPER" --hierarchy "$V2" check --pam-dir "$D" >"$T/order-v2" 2>&1
        check "systemd on cgroup v2: the lines are listed" has order-v2 "$D/common-session:4 (services: "
        check_not "systemd on cgroup v2: no word on the order" grep -q "pam_systemd" "$T/order-v2"
else
        skip "no cgroup2 mount"
fi
printf '%s\n' "session required pam_unix.so" "-session optional pam_systemd.so" \
        "session optional pam_autogroup.so conf=$C/clean.conf" >"$D/common-session"
in_fake_systemd "$HELPER" check --pam-dir "$D" >"$T/order-after" 2>&1
check_not "pam_autogroup after pam_systemd: no word on the order" grep -q "pam_systemd" "$T/order-after"
check "... and the lines are still listed" has order-after "$D/common-session:3 (services: common-session, login, sshd)"

# two roots in one stack
printf 'session optional pam_autogroup.so root=%s conf=%s\n' "$ROOT" "$C/clean.conf" >"$D/common-session"
printf '@include common-session\nsession optional pam_autogroup.so root=%s-b conf=%s\n' "$ROOT" "$C/clean.conf" >"$D/sshd"
printf '@include common-session\nsession optional pam_autogroup.so root=%s conf=%s\n' "$ROOT" "$C/clean.conf" >"$D/login"
chk roots check --pam-dir "$D"
check_eq "two roots in one stack: warnings alone, exit 0" 0 "$(rc roots)"
check "two roots in one stack: the later line named, with the earlier" has roots \
        "warning: $D/sshd:2: the stack of sshd reaches $D/common-session:1 (root=$ROOT) before this line (root=$ROOT-b): the earlier line groups the login and this one steps aside"
check_not "the same root twice (login): nothing said" grep -q "stack of login" "$T/roots"
chk roots-strict check --strict --pam-dir "$D"
check_eq "... with --strict: exit 3" 3 "$(rc roots-strict)"
# what the warning says, through real libpam: the login is in the earlier line's root
if [ -f "$CPU/cpu.shares" ]; then
sed "s|pam_autogroup.so|$AG_MODULE|" "$D/sshd" | sed "s|^@include common-session|session optional $AG_MODULE root=$ROOT conf=$C/clean.conf|" >"$T/svc-sshd"
mkdir -m 755 "$T/svc"; mv "$T/svc-sshd" "$T/svc/sshd"; pam_other "$T/svc"
AG_CGROOTS="$AG_CGROOTS $CPU/$ROOT-b"
timeout -k 5 60 "$AGDRV" --pam "$T/svc" sshd "$USR" open cgroup close >"$T/two.out" 2>&1
check "through libpam the login is in the earlier line's root" grep -q "^cgroup=/$ROOT/user-$(id -u "$USR")/" "$T/two.out"
check "... and the later line made nothing" test ! -e "$CPU/$ROOT-b/user-$(id -u "$USR")"
else
        skip "no cgroup v1 cpu hierarchy at $CPU: the stack's login not driven"
fi

finish
