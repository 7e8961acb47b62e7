#!/bin/bash
# Latency classes INSIDE the guest that tests/vm/test-guest.sh boots
# (pure cgroup2 with cpu; Debian 12's kernel 6.1, which has cpu.idle but no
# EEVDF custom slices): the module sets the class's policy and logs one debug
# line about the missing slices, the rest of the policy applies; "autogroup
# run" makes a leaf with cpu.weight and cpu.idle as the unprivileged user;
# "autogroup set" cannot raise login/ or anything above the session; the item
# "interactive": run leaf cpu.weight per class at levels 0, 1 and 2, the user
# group's and session's cpu.weight, cpu.max and cpu.idle unchanged; at
# "interactive 2" no latency lane on cgroup v2 (the kernel's common-ancestor
# rule keeps a user's process from moving beside the tree): nothing made
# beside the tree, "run --latency audio|interactive" keeps the class leaf
# (default line) or a leaf of its own (delegate=yes) with one notice.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_guest_v2
HELPER="$abs_top_builddir/helper/autogroup"
SA="$abs_top_builddir/tests/host/schedattr"
ROOT="agtest-$$"
CG="$CG2/$ROOT"
AG_CGROOTS="$CG $CG2/$ROOT.probe-lane"
AG="$HELPER --root $ROOT"
start_syslog || true

add_user "${TAG}a"; add_user "${TAG}b"
UA="${TAG}a"; UB="${TAG}b"
CONF="$T/autogroup.conf"
printf '%s latency audio\n%s latency batch\n%s weight 200\n' "$UA" "$UB" "$UA" >"$CONF"
chmod 644 "$CONF"
printf '%s required pam_deny.so\n' auth account password session >"$T/other"
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s debug delegate=yes\n' "$AG_MODULE" "$ROOT" "$CONF" >"$T/agtest"
bg() {
        local n="$1" u="$2"; shift 2
        "$AGDRV" --pam "$T" agtest "$u" open env cgroup "$@" wait-file "$T/$n.go" close >"$T/$n.out" 2>&1 &
        track_pid $!
        eval "PID_$n=$!"
        wait_for "$T/$n.out" '^cgroup='
}
val() { sed -n "s/^$1=//p" "$T/$2.out" | head -n1; }
attr() { "$SA" "$1" 2>/dev/null | sed -n "s/.* $2=\([0-9-]*\).*/\1/p"; }
echo "# kernel $(uname -r)"
slices=yes
case $(uname -r) in [0-5].*|6.[0-9].*|6.1[01].*) slices=no;; esac

echo "# 1. the module: class at open, the rest of the policy"
bg a "$UA"; bg b "$UB"
S_A=$(val AUTOGROUP_SESSION a)
check "session of A opened and grouped" grep -q '^open=PAM_SUCCESS' "$T/a.out"
check_eq "the rest of the policy applies: user group cpu.weight 200" 200 "$(cat "$CG2$(dirname "$S_A")/cpu.weight")"
if [ "$slices" = no ]; then
        check_eq "kernel without custom slices: the opener keeps SCHED_OTHER, no slice" "0 0" \
                "$(attr "$PID_a" policy) $(attr "$PID_a" runtime)"
        log_has "one debug line: no custom slices" "latency class audio .* the kernel has no custom slices"
else
        check_eq "the opener's slice is 0.1 ms" 100000 "$(attr "$PID_a" runtime)"
fi
check_eq "class 0: SCHED_BATCH applies with or without slices" 3 "$(attr "$PID_b" policy)"

echo "# 2. autogroup run / set as the user (cgroup v2)"
# in_a CMD: CMD as user A inside a fresh session of A (v2: a process can only
# be moved below the common ancestor it already sits in, so it starts there)
in_a() { "$AGDRV" --pam "$T" agtest "$UA" open run-user "$*" close 2>&1 | grep -v '^open=\|^close=\|^run-user: failed'; \
        return "${PIPESTATUS[0]}"; }
out=$(in_a "$AG run --weight 300 --latency audio -- sh -c 'L=\$(sed -n s/^0:://p /proc/self/cgroup); echo leaf=\$L; cat $CG2\$L/cpu.weight'" 2>&1); rc=$?
check_eq "run: exit 0" 0 "$rc"
check "run: CMD in a run-* leaf of the session" grep -q "^leaf=/$ROOT/user-$(id -u "$UA")/[^/]*/run-[0-9]*\$" <<<"$out"
check "run --weight 300: the leaf's cpu.weight reads back 300" grep -qx 300 <<<"$out"
if [ "$slices" = no ]; then
        check "run --latency on a kernel without slices: one note" grep -q "note: latency class audio: the kernel has no custom slices" <<<"$out"
fi
out=$(in_a "$AG run --idle -- sh -c 'cat $CG2\$(sed -n s/^0:://p /proc/self/cgroup)/cpu.idle'" 2>&1)
check "run --idle: cpu.idle 1 in the leaf" grep -qx 1 <<<"$out"
out=$(in_a "$AG set --weight 10000 login; echo rc=\$?; cat $CG2\$(sed -n s/^0:://p /proc/self/cgroup)/cpu.weight" 2>&1)
check "set --weight on login/ (root's cpu.weight): refused, unchanged" grep -qz "rc=1.100" <<<"$(echo $out | tr ' ' '.')"
out=$(in_a "$AG set --weight 5 ..; echo rc=\$?" 2>&1)
check "set on '..': refused (usage)" grep -q "^rc=2" <<<"$out"
out=$(in_a "$AG set --weight 10000 $PID_b; echo rc=\$?" 2>&1)
check "set on another user's session process: refused" grep -q "^rc=1" <<<"$out"
out=$(in_a "$AG run --weight 10000 -- sh -c 'L=\$(sed -n s/^0:://p /proc/self/cgroup); S=\${L%/*}; U=\${S%/*}
        for g in $CG2\$S $CG2\$S/login $CG2\$U; do echo 10000 > \$g/cpu.weight; done 2>/dev/null
        echo weights \$(cat $CG2\$U/cpu.weight $CG2\$S/cpu.weight $CG2\$S/login/cpu.weight)'" 2>&1)
check_eq "from a run leaf: user group, session and login/ weights unchanged" "weights 200 100 100" "$(grep '^weights' <<<"$out")"

echo "# 3. interactive 0|1|2: the run leaf's cpu.weight per class and level (cgroup v2)"
add_user "${TAG}c"; UC="${TAG}c"
cat >"$T/inter.conf" <<CONF
*     interactive  0
$UA   interactive  2
$UA   weight       200
$UA   max          150%
$UB   interactive  1
CONF
chmod 644 "$T/inter.conf"
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s debug delegate=yes\n' "$AG_MODULE" "$ROOT" "$T/inter.conf" >"$T/aginter"
# what the user runs inside a session: a leaf per class, each printing its cpu.weight;
# then --weight against the table, and set --latency on a leaf of the user's
cat >"$U/classes.sh" <<'SH'
for c in batch normal interactive audio; do
        $AG run --latency $c -- sh -c 'cat /sys/fs/cgroup$(sed -n s/^0:://p /proc/self/cgroup)/cpu.weight'
done | tr '\n' ' '; echo
$AG run --latency audio --weight 50 -- sh -c 'echo explicit $(cat /sys/fs/cgroup$(sed -n s/^0:://p /proc/self/cgroup)/cpu.weight)'
$AG run -- sh -c 'L=$(sed -n s/^0:://p /proc/self/cgroup); $AG set --latency audio ${L##*/} >/dev/null 2>&1; echo set $(cat /sys/fs/cgroup$L/cpu.weight)'
L=$(sed -n s/^0:://p /proc/self/cgroup); S=${L%/*}; U=${S%/*}
echo files $(cat /sys/fs/cgroup$U/cpu.weight /sys/fs/cgroup$U/cpu.max /sys/fs/cgroup$U/cpu.idle /sys/fs/cgroup$S/cpu.weight /sys/fs/cgroup$S/cpu.max /sys/fs/cgroup$S/cpu.idle /sys/fs/cgroup$S/login/cpu.weight)
SH
chmod 644 "$U/classes.sh"
# per user: the level the module exports, then the script inside a fresh session at that level
for u in "$UC" "$UB" "$UA"; do
        lv=$("$AGDRV" --pam "$T" aginter "$u" open env close 2>&1 | sed -n 's/^AUTOGROUP_INTERACTIVE=//p')
        out=$("$AGDRV" --pam "$T" aginter "$u" open run-user "AG='$AG' AUTOGROUP_INTERACTIVE=$lv sh $U/classes.sh" close 2>&1)
        case $u in
        "$UC") want_lv=0; want="100 100 100 100"; want_set=100; files="100 max 100000 0 100 max 100000 0 100" ;;
        "$UB") want_lv=1; want="100 100 200 400"; want_set=400; files="100 max 100000 0 100 max 100000 0 100" ;;
        *) want_lv=2; want="100 100 400 1000"; want_set=1000; files="200 150000 100000 0 100 max 100000 0 100" ;;
        esac
        check_eq "the module exports level $want_lv" "$want_lv" "$lv"
        check_eq "level $want_lv: run leaf cpu.weight for batch normal interactive audio" "$want" \
                "$(sed -n '/^[0-9 ]*$/p' <<<"$out" | head -n1 | sed 's/ $//')"
        check_eq "level $want_lv: an explicit --weight 50 wins" "explicit 50" "$(grep '^explicit' <<<"$out")"
        check_eq "level $want_lv: set --latency audio on a leaf of the user's" "set $want_set" "$(grep '^set' <<<"$out")"
        check_eq "level $want_lv: user group and session weight, max, idle and login/ weight as the policy says" \
                "files $files" "$(grep '^files' <<<"$out")"
done
out=$("$AGDRV" --pam "$T" aginter "$UC" open run-user "AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- sh -c 'L=\$(sed -n s/^0:://p /proc/self/cgroup); echo \$L \$(cat /sys/fs/cgroup\$L/cpu.weight)'" close 2>&1)
check "level 2 by hand at a level-0 login: only a leaf of the user's own session" \
        grep -q "^/$ROOT/user-$(id -u "$UC")/[^/]*/run-[0-9]* 1000\$" <<<"$out"
out=$(setpriv --reuid="$UC" --regid="$(id -g "$UC")" --init-groups -- env AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- true 2>&1); rc=$?
check_eq "outside any session, level 2 by hand: refused" 1 "$rc"

echo "# 3b. interactive 2 on cgroup v2: no latency lane (lib/cgroup/lane.h)"
IA=$(id -u "$UA")
AG_CGROOTS="$AG_CGROOTS $CG2/$ROOT.lane-$IA"
check_eq "the module made nothing beside the tree for A (interactive 2)" "" "$(ls -d "$CG2/$ROOT".* 2>/dev/null)"
check "explain: no lane on cgroup v2" grep -q "^lane: none on cgroup v2" <<<"$("$HELPER" explain --conf "$T/inter.conf" "$UA" 2>&1)"
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s debug\n' "$AG_MODULE" "$ROOT" "$T/inter.conf" >"$T/agdef"
for c in audio interactive; do
        out=$("$AGDRV" --pam "$T" agdef "$UA" open run-user "AUTOGROUP_INTERACTIVE=2 $AG run --latency $c -- sh -c 'L=\$(sed -n s/^0:://p /proc/self/cgroup); echo leaf=\$L \$(cat /sys/fs/cgroup\$L/cpu.weight)'" close 2>&1)
        w=1000; [ $c = interactive ] && w=400
        check "default line, level 2, run --latency $c: the class leaf (weight $w)" \
                grep -q "^leaf=/$ROOT/user-$IA/[^/]*/class-$c $w\$" <<<"$out"
        check_eq "  with one notice: no lane on cgroup v2" 1 "$(grep -c 'no latency lane beside the tree' <<<"$out")"
done
out=$("$AGDRV" --pam "$T" aginter "$UA" open run-user "AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- sh -c 'echo leaf=\$(sed -n s/^0:://p /proc/self/cgroup)'" close 2>&1)
check "delegate=yes, level 2, run --latency audio: a run leaf of the session" grep -q "^leaf=/$ROOT/user-$IA/[^/]*/run-[0-9]*\$" <<<"$out"
check_eq "  with one notice: no lane on cgroup v2" 1 "$(grep -c 'no latency lane beside the tree' <<<"$out")"
out=$("$AGDRV" --pam "$T" agdef "$UA" open run-user "AUTOGROUP_INTERACTIVE=2 $AG run --latency batch -- true" close 2>&1)
check_eq "  no notice for --latency batch" 0 "$(grep -c 'no latency lane' <<<"$out")"
check_eq "still nothing beside the tree" "" "$(ls -d "$CG2/$ROOT".* 2>/dev/null)"
# why: root makes a group beside the tree whose cgroup.procs is A's; A still
# cannot move its own process there from its session (the common ancestor,
# the hierarchy root, has root's cgroup.procs)
mkdir "$CG2/$ROOT.probe-lane" && chown "$UA" "$CG2/$ROOT.probe-lane/cgroup.procs"
out=$("$AGDRV" --pam "$T" agdef "$UA" open run-user "echo \$\$ > $CG2/$ROOT.probe-lane/cgroup.procs && echo moved; sed -n s/^0:://p /proc/self/cgroup" close 2>&1)
check "the v2 rule: A cannot move its own process from its session into a group beside the tree" \
        grep -q "^/$ROOT/user-$IA/" <<<"$out"
check_not "  (no 'moved')" grep -q "^moved" <<<"$out"
rmdir "$CG2/$ROOT.probe-lane"

echo "# 4. cleanup"
touch "$T/a.go" "$T/b.go"; wait "$PID_a" "$PID_b" 2>/dev/null
check_eq "no user group left behind" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
finish
