#!/bin/sh
# Run by the unprivileged user inside a login of pam_autogroup's default line
# (tests/host/test-leaves.sh on cgroup v1, tests/guest/test-leaves.sh on v2):
# every move, mkdir and write the user might try against root's leaves.
# Writes KEY=VALUE lines to OUT; "done" or "refused" for each attempt.
#
#   leaves-attack.sh OUT [FOREIGN_PID]
#
# FOREIGN_PID: a process of another user in that user's own session.
# ATTACK_V2_MOUNT: a cgroup2 mount to attack instead of the cpu hierarchy
# (the host's /sys/fs/cgroup/unified, which has no cpu controller).
out="$1"; foreign="${2:-}"
if [ -n "${ATTACK_V2_MOUNT:-}" ] || { grep -q '^0::' /proc/self/cgroup && [ ! -d /sys/fs/cgroup/cpu ]; }; then
        v=2; M=${ATTACK_V2_MOUNT:-/sys/fs/cgroup}; S=$(sed -n 's/^0:://p' /proc/self/cgroup)
        W=cpu.weight; Q=cpu.max
else
        v=1; M=/sys/fs/cgroup/cpu; S=$(sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' /proc/self/cgroup)
        W=cpu.shares; Q=cpu.cfs_quota_us
fi
S=${S%/login}; C=$M$S; UG=${C%/*}; RT=${UG%/*}
# try KEY VALUE FILE: write VALUE into FILE
try() { if (echo "$2" >"$3") 2>/dev/null; then echo "$1=done"; else echo "$1=refused"; fi; }
cg() { if [ $v = 2 ]; then sed -n 's/^0:://p' "/proc/$1/cgroup"; else sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$1/cgroup"; fi; }
R=""
for p in $(cat "$C/login/cgroup.procs"); do
        [ "$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)" = 0 ] && R=$p
done
setsid sleep 300 </dev/null >/dev/null 2>&1 &
P=$!
sleep 0.2
{
echo "version=$v"
echo "session=$S"
echo "caller=$R"
echo "leaves=$(cd "$C" && ls -d leaf-* class-* 2>/dev/null | tr '\n' ' ')"
echo "owners=$(stat -c %U "$C" "$C/cgroup.procs" "$C/login" "$C/login/cgroup.procs" "$C/leaf-1" \
        "$C/leaf-1/cgroup.procs" "$C/leaf-1/$W" | tr '\n' ' ')"
if mkdir "$C/x" 2>/dev/null; then echo "mkdir_session=done"; else echo "mkdir_session=refused"; fi
if mkdir "$C/leaf-1/x" 2>/dev/null; then echo "mkdir_leaf=done"; else echo "mkdir_leaf=refused"; fi
if mkdir "$C/login/x" 2>/dev/null; then echo "mkdir_login=done"; else echo "mkdir_login=refused"; fi
try weight_leaf 10000 "$C/leaf-1/$W"
try weight_session 10000 "$C/$W"
try weight_user 10000 "$UG/$W"
try cap_user -1 "$UG/$Q"
try idle_leaf 0 "$C/leaf-1/cpu.idle"
[ $v = 1 ] && try tasks_leaf "$P" "$C/leaf-1/tasks"
# the user's own process, between the session's leaves and out of them
try own_into_leaf1 "$P" "$C/leaf-1/cgroup.procs"
echo "own_at=$(cg "$P")"
try own_into_leaf2 "$P" "$C/leaf-2/cgroup.procs"
try own_into_login "$P" "$C/login/cgroup.procs"
try own_into_session "$P" "$C/cgroup.procs"
try own_into_user "$P" "$UG/cgroup.procs"
try own_into_root "$P" "$RT/cgroup.procs"
try own_into_top "$P" "$M/cgroup.procs"
echo "own_end=$(cg "$P")"
# the root process that opened the login
if [ -n "$R" ]; then
        try caller_into_leaf1 "$R" "$C/leaf-1/cgroup.procs"
        echo "caller_moved_to=$(cg "$R")"
        try caller_into_user "$R" "$UG/cgroup.procs"
        try caller_into_top "$R" "$M/cgroup.procs"
        if [ $v = 2 ]; then
                for f in "$C/leaf-1" "$C/login" "$C"; do
                        try "freeze_${f##*/}" 1 "$f/cgroup.freeze"
                        try "kill_${f##*/}" 1 "$f/cgroup.kill"
                done
        fi
        if kill -STOP "$R" 2>/dev/null; then echo "signal_caller=done"; else echo "signal_caller=refused"; fi
        echo "caller_at=$(cg "$R")"
        echo "caller_state=$(awk '/^State:/ {print $2}' "/proc/$R/status" 2>/dev/null)"
fi
# another user's process, into this user's leaf
if [ -n "$foreign" ]; then
        try foreign_into_leaf "$foreign" "$C/leaf-3/cgroup.procs"
        echo "foreign_at=$(cg "$foreign")"
fi
} >"$out" 2>&1
kill "$P" 2>/dev/null
# reaped before close looks at the leaves: a dying process still counts in its group
wait "$P" 2>/dev/null
exit 0
