#!/bin/bash
# A login that a module later in the stack moves out of its group. On a
# systemd host with cgroup v1 (or hybrid), pam_systemd's session start moves
# the login in every v1 hierarchy, cpu included; so does systemd when a unit
# above the logins gains a CPU property. Here a pam_exec line plays that
# part on the host's cgroup v1 cpu hierarchy (it writes its caller into the
# hierarchy's root cgroup.procs), through real libpam (tests/host/agdrv):
#   1. the mover after pam_autogroup: the login ran outside its group; close
#      logs one warning naming the fix (pam_autogroup after pam_systemd,
#      CPU properties of user slices unset), once per boot (a marker in
#      /run/autogroup, a private tmpfs here); a second such login logs it no
#      more, and with debug a short debug line instead;
#   2. the mover before pam_autogroup (the order the package now writes):
#      the login keeps its group and nothing is logged;
#   3. a login nobody moves: nothing logged.
if [ -z "${AG_ORDER_INNER:-}" ]; then
        AG_LIB_FUNCS_ONLY=1 . "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
        require_root
        require_cmds "util-linux" unshare
        made=""
        [ -d /run/autogroup ] || { mkdir -m 755 /run/autogroup && made=yes; }
        AG_ORDER_INNER=1 unshare -m --propagation private -- bash "$0" "$@"
        rc=$?
        [ -n "$made" ] && rmdir /run/autogroup 2>/dev/null
        exit "$rc"
fi
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
PAM_EXEC=$(dirname "$(readlink -f "$AG_MODULE")")
for d in /lib/x86_64-linux-gnu/security /usr/lib/x86_64-linux-gnu/security /lib/security /usr/lib/security /lib64/security; do
        [ -f "$d/pam_exec.so" ] && PAM_EXEC="$d/pam_exec.so" && break
done
[ -f "$PAM_EXEC" ] || skip_all "no pam_exec.so"
mount -t tmpfs -o mode=755 tmpfs /run/autogroup || skip_all "cannot mount a private tmpfs on /run/autogroup"
start_syslog || true

test_root agorder
new_user a
write_conf "* weight 100"
# the mover: what pam_systemd's scope start does to its caller on cgroup v1
cat >"$T/mover" <<EOS
#!/bin/sh
echo "\$PPID" >$CPU/cgroup.procs
EOS
chmod 755 "$T/mover"
pam_other
MOVER="session optional $PAM_EXEC type=open_session $T/mover"
AGL="session optional $AG_MODULE root=$ROOT conf=$CONF"
printf '%s\n%s\n' "$AGL" "$MOVER" >"$T/agbefore"
printf '%s debug\n%s\n' "$AGL" "$MOVER" >"$T/agbeforedebug"
printf '%s\n%s\n' "$MOVER" "$AGL" >"$T/agafter"
printf '%s\n' "$AGL" >"$T/agalone"
# login NAME SERVICE: a login of UA through SERVICE; where its child ran in $U/NAME.cg
login() {
        "$AGDRV" --pam "$T" "$2" "$UA" open env run-user "cat /proc/self/cgroup >$U/$1.cg" close >"$T/$1.out" 2>&1
}
cpu_of() { sed -n 's/^[0-9]*:[a-z,]*\bcpu\b[a-z,]*://p' "$U/$1.cg"; }
G_RE="^/$ROOT/user-$IA/[^/]*/login$"
WARN='was moved out of .* after it opened .*put pam_autogroup after pam_systemd.*logged once per boot'
nwarn() { grep -cE "$WARN" "$SYSLOG"; }

echo "# 1. a module after pam_autogroup moves the login"
login before agbefore
check "the login opened and closed" grep -q '^close=PAM_SUCCESS' "$T/before.out"
check_not "it ran outside its group ($(cpu_of before))" grep -qE "$G_RE" <(cpu_of before)
log_has "close logs that the login was moved, with the fix" "$WARN"
check "the once-per-boot marker is in /run/autogroup" test -f /run/autogroup/moved-logged
if have_syslog; then
        login before2 agbefore
        sleep 0.2
        check_eq "a second moved login: the warning is not repeated" 1 "$(nwarn)"
        login before3 agbeforedebug
        log_has "  with debug: a debug line instead" "was moved out of [^ ]*/$ROOT/user-$IA/[^ ]* after it opened \(it is in [^ ]*/ now\)$"
        rm -f /run/autogroup/moved-logged
        login before4 agbefore
        sleep 0.2
        check_eq "the marker gone (a new boot): the warning again" 2 "$(nwarn)"
fi
check_not "the moved sessions are gone after close" sh -c "ls -d $CG/user-$IA/*/ 2>/dev/null | grep -q ."

echo "# 2. the mover before pam_autogroup: the login keeps its group"
: >"$SYSLOG"
login after agafter
check "the login opened and closed" grep -q '^close=PAM_SUCCESS' "$T/after.out"
check "it ran in its group ($(cpu_of after))" grep -qE "$G_RE" <(cpu_of after)
echo "# 3. nobody moves the login"
login alone agalone
check "it ran in its group ($(cpu_of alone))" grep -qE "$G_RE" <(cpu_of alone)
if have_syslog; then
        sleep 0.2
        check_not "no moved line for either" grep -q 'was moved out of' "$SYSLOG"
fi
finish
