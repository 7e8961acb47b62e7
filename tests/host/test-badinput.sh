#!/bin/bash
# Hostile input through the real module: every config file of tests/corpus
# (and every line of tests/corpus/module-options.list) is handed to
# pam_autogroup.so through real libpam (tests/host/agdrv --pam) with a
# service file of its own. For each case:
#   - the documented log line(s) appear (FILE:LINE: message, or FILE: message);
#   - the valid lines still apply (the module's debug policy line, and the
#     user group's cpu.shares / cpu.cfs_quota_us on the real cpu hierarchy);
#   - the session opens under "optional", and under "strict" with "required"
#     it fails only when no group can be made at all;
#   - no login hangs (each is bounded with timeout), nothing is left behind;
#   - "autogroup check" (when the helper is built) reports the same errors.
#
# Corpus format: NAME.conf is the file ({USER} stands for the test user),
# NAME.expect lists what must happen, one key a line:
#   log ERE          a log line (also in "autogroup check" output); {FILE} is the
#                    config file, {DIR} its drop-in directory (both regex-escaped)
#   clean            no warning or error logged, and "autogroup check" passes
#   checkerr ERE     "autogroup check FILE" fails with ERE although the module
#                    takes the file as it is (a FILE named by hand that is missing)
#   warn ERE         a warning of "autogroup check" only ("warning: " and ERE): a
#                    line the module takes as it is but that most likely does not
#                    say what was meant; with one, "check --strict" exits 3 on a
#                    clean case; without, 0
#   shares N         the user group's cpu.shares (and the policy's weight N*100/1024)
#   quota N          the user group's cpu.cfs_quota_us (-1: no cap)
#   sessions yes|no  the policy's sessions item
#   setup NAME       a case this script builds (modes, owners, links, FIFOs)
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$abs_top_srcdir/tests/host/hardening-lib.sh"
require_root
require_v1_cpu

CORPUS="$abs_top_srcdir/tests/corpus"
test_root agtest
hl_syslog_start || { not_ok "syslog capture started"; finish; }

new_user u
USR="${TAG}u"
UID_=$(id -u "$USR")
UG="$CPU/$ROOT/user-$UID_"
pam_other
have_helper=false
[ -x "$HELPER" ] && have_helper=true

# drv (lib.sh): agdrv in the syslog namespace, bounded in time
BOUND=60; DRV_WRAP=(nsrun 'exec "$@"')

# A file root cannot read: a write-only sysfs attribute (kernfs refuses to
# open it for reading with EACCES, CAP_DAC_OVERRIDE or not).
WRITE_ONLY=$(find /sys/bus -maxdepth 2 -name uevent -perm 0200 -type f 2>/dev/null | head -n1)

# setup_case NAME DIR CONF: build the special cases
setup_case() {
        local name="$1" dir="$2" conf="$3" d="$2/autogroup.d"
        case "$name" in
        world-writable) chmod 666 "$conf" ;;
        group-writable) chgrp nogroup "$conf" && chmod 664 "$conf" ;;
        not-root-owned) chown nobody "$conf" ;;
        main-is-directory)
                rm -f "$conf"; mkdir -m 755 "$conf"
                mkdir -m 755 "$d"; echo "$USR weight 300" >"$d/10-a.conf" ;;
        main-is-fifo) rm -f "$conf"; mkfifo -m 644 "$conf" ;;
        main-symlink-loop) rm -f "$conf"; ln -s autogroup.conf "$conf" ;;
        main-dangling-symlink) rm -f "$conf"; ln -s nowhere.conf "$conf" ;;
        unreadable)
                [ -n "$WRITE_ONLY" ] || return 1
                rm -f "$conf"; ln -s "$WRITE_ONLY" "$conf"
                mkdir -m 755 "$d"; echo "$USR weight 300" >"$d/10-a.conf"; chmod 644 "$d/10-a.conf" ;;
        read-error) rm -f "$conf"; ln -s /proc/self/mem "$conf" ;;
        too-large)
                { echo "$USR weight 300"; head -c $((1024 * 1024)) /dev/zero | tr '\0' '#'; } >"$conf" ;;
        dropin-directory) mkdir -m 755 "$d" "$d/x.conf" ;;
        dropin-symlink-loop)
                mkdir -m 755 "$d"; ln -s loop.conf "$d/loop.conf"
                ln -s loop3.conf "$d/loop2.conf"; ln -s loop2.conf "$d/loop3.conf"
                echo "$USR max 50%" >"$d/90-z.conf" ;;
        dropin-dir-symlink-loop) ln -s autogroup.d "$d" ;;
        dropin-world-writable-dir)
                mkdir -m 777 "$d"; echo "$USR max 50%" >"$d/10-a.conf" ;;
        dropin-order)
                mkdir -m 755 "$d"
                echo "$USR weight 200" >"$d/10-a.conf"; echo "$USR weight 300" >"$d/20-b.conf"
                echo "$USR weight 900" >"$d/.hidden.conf"; echo "$USR weight 900" >"$d/30-c.conf.bak"
                echo "$USR weight 900" >"$d/README"; echo "$USR max 50%" >"$d/15-cap.conf"
                chmod 644 "$d"/* "$d"/.hidden.conf ;;
        dropin-bad-lines)
                mkdir -m 755 "$d"
                printf '%s\n' "$USR max 50%" "$USR weight 0" "$USR cap 3" >"$d/50-bad.conf"
                chmod 644 "$d/50-bad.conf" ;;
        "") ;;
        *) echo "# unknown setup $name"; return 1 ;;
        esac
}

# ---------------------------------------------------------------------------
echo "# 1. config corpus ($CORPUS)"
n_cases=0
for exp in "$CORPUS"/*.expect; do
        name=$(basename "$exp" .expect)
        n_cases=$((n_cases + 1))
        dir="$T/c/$name"; conf="$dir/autogroup.conf"; d="$dir/autogroup.d"
        mkdir -p "$dir"; chmod 755 "$dir"
        perl -pe "s/\\{USER\\}/$USR/g" "$CORPUS/$name.conf" >"$conf"
        chmod 644 "$conf"
        setup=$(sed -n 's/^setup //p' "$exp")
        setup_case "$setup" "$dir" "$conf" || { not_ok "$name: setup"; continue; }
        svc="bi-$name"; ssvc="bs-$name"
        pam_service "$svc" "root=$ROOT conf=$conf debug"
        CONTROL=required pam_service "$ssvc" "root=$ROOT conf=$conf strict"
        rm -f "$U/$name.shares" "$U/$name.quota"
        drv "$svc" "$USR" open cgroup \
                run-user "cat $UG/cpu.shares > $U/$name.shares; cat $UG/cpu.cfs_quota_us > $U/$name.quota" \
                close >"$T/$name.out" 2>&1
        rc=$?
        check_not "$name: the login did not hang" test "$rc" -eq 124 -o "$rc" -eq 137
        check "$name: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/$name.out"
        check "$name: close succeeds" grep -q '^close=PAM_SUCCESS' "$T/$name.out"
        check "$name: the session is grouped" grep -q "^cgroup=/$ROOT/user-$UID_\\(/\\|\$\\)" "$T/$name.out"
        drv "$ssvc" "$USR" open close >"$T/$name.strict" 2>&1
        check "$name: strict+required session opens too (a group can be made)" \
                grep -q '^open=PAM_SUCCESS' "$T/$name.strict"

        fre=$(re_escape "$conf"); dre=$(re_escape "$d")
        prefix="pam_autogroup\\($svc:session\\): "
        while read -r key val; do
                case "$key" in
                log)
                        pat=${val//\{FILE\}/$fre}; pat=${pat//\{DIR\}/$dre}
                        hlog_has "$name: logged: $val" "$prefix$pat" ;;
                clean)
                        hlog_hasnt "$name: nothing logged above debug but the close line" "^<8[0-6]>.*$prefix" "$HLOG_ACCT_LINE" ;;
                shares)
                        w=$((val * 100 / 1024))
                        hlog_has "$name: policy weight $w" "${prefix}policy for $USR: weight $w,"
                        check_eq "$name: cpu.shares" "$val" "$(cat "$U/$name.shares" 2>/dev/null)" ;;
                quota)
                        if [ "$val" = -1 ]; then m="-1 \\(none\\)"; else m="$((val / 1000))%"; fi
                        hlog_has "$name: policy max $m" "${prefix}policy for $USR: .*, max $m,"
                        check_eq "$name: cpu.cfs_quota_us" "$val" "$(cat "$U/$name.quota" 2>/dev/null)" ;;
                sessions)
                        hlog_has "$name: policy sessions $val" "${prefix}policy for $USR: .*, sessions $val," ;;
                setup|warn|checkerr|'#'*|'') ;;
                *) not_ok "$name: unknown key '$key' in $exp" ;;
                esac
        done <"$exp"

        # autogroup check reads the same files the same way
        if $have_helper; then
                nsrun 'exec timeout 60 "$@"' "$HELPER" check "$conf" >"$T/$name.check" 2>&1
                crc=$?
                if grep -q '^checkerr ' "$exp"; then
                        check_eq "$name: autogroup check FILE fails (1)" 1 "$crc"
                        while read -r key val; do
                                [ "$key" = checkerr ] || continue
                                pat=${val//\{FILE\}/$fre}; pat=${pat//\{DIR\}/$dre}
                                check "$name: autogroup check says: $val" grep -qE -- "$pat" "$T/$name.check"
                        done <"$exp"
                elif grep -q '^clean' "$exp"; then
                        check_eq "$name: autogroup check passes" 0 "$crc"
                        nsrun 'exec timeout 60 "$@"' "$HELPER" check --strict "$conf" >/dev/null 2>&1
                        crc=$?
                        if grep -q '^warn ' "$exp"; then
                                check_eq "$name: autogroup check --strict fails on the warnings (3)" 3 "$crc"
                        else
                                check_eq "$name: autogroup check --strict passes (no warning)" 0 "$crc"
                                check_not "$name: autogroup check gives no warning" grep -q '^warning: ' "$T/$name.check"
                        fi
                else
                        check_not "$name: autogroup check fails" test "$crc" -eq 0 -o "$crc" -eq 124
                        while read -r key val; do
                                [ "$key" = log ] || continue
                                pat=${val//\{FILE\}/$fre}; pat=${pat//\{DIR\}/$dre}
                                check "$name: autogroup check reports: $val" grep -qE -- "$pat" "$T/$name.check"
                        done <"$exp"
                fi
                while read -r key val; do
                        [ "$key" = warn ] || continue
                        pat=${val//\{FILE\}/$fre}; pat=${pat//\{DIR\}/$dre}
                        check "$name: autogroup check warns: $val" grep -qE -- "^warning: $pat" "$T/$name.check"
                done <"$exp"
        fi
done
check "corpus has cases" test "$n_cases" -gt 20
check_eq "no group left behind by the corpus" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
$have_helper || skip "autogroup check: helper not built ($HELPER)"

# ---------------------------------------------------------------------------
echo "# 2. malformed module options ($CORPUS/module-options.list)"
good="$T/opt/autogroup.conf"
mkdir -p "$T/opt"; echo "$USR weight 300" >"$good"; chmod 644 "$good"
i=0
while IFS=$'\t' read -r opts outcome logre; do
        case "$opts" in '#'*|'') continue ;; esac
        i=$((i + 1))
        opts=${opts//\{ROOT\}/$ROOT}; opts=${opts//\{CONF\}/$good}; opts=${opts//\{DIR\}/$T/opt}
        svc="bo-$i"; ssvc="bos-$i"
        pam_service "$svc" "$opts"
        CONTROL=required pam_service "$ssvc" "$opts strict"
        drv "$svc" "$USR" open cgroup close >"$T/$svc.out" 2>&1
        rc=$?
        label="options #$i ($(printf '%.40s' "$opts"))"
        check_not "$label: no hang" test "$rc" -eq 124 -o "$rc" -eq 137
        check "$label: optional session opens" grep -q '^open=PAM_SUCCESS' "$T/$svc.out"
        drv "$ssvc" "$USR" open close >"$T/$ssvc.out" 2>&1
        if [ "$outcome" = grouped ]; then
                check "$label: grouped below the test root" grep -q "^cgroup=/$ROOT/user-$UID_/" "$T/$svc.out"
                check "$label: strict+required opens" grep -q '^open=PAM_SUCCESS' "$T/$ssvc.out"
        else
                check_not "$label: not grouped" grep -q "^cgroup=/$ROOT/" "$T/$svc.out"
                check "$label: strict+required fails (no group can be made)" grep -q '^open=PAM_SESSION_ERR' "$T/$ssvc.out"
        fi
        if [ "$logre" != - ]; then
                pat=${logre//\{DIR\}/$(re_escape "$T/opt")}
                hlog_has "$label: logged" "pam_autogroup\\($svc:session\\): $pat"
        else
                hlog_hasnt "$label: nothing logged above debug but the close line" "^<8[0-6]>.*pam_autogroup\\($svc:session\\)" "$HLOG_ACCT_LINE"
        fi
done <"$CORPUS/module-options.list"
check "option cases ran" test "$i" -gt 10
check_eq "no group left behind by the options" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
check "host cpu hierarchy untouched" test -f "$CPU/cpu.shares" -a ! -d "$CPU/cpu.shares"

finish
