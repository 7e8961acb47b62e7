#!/bin/bash
# Hostile users inside their own session, with the default line (root's
# leaves: the user owns only their cgroup.procs), against real libpam
# sessions (tests/host/agdrv) on the real cgroup v1 cpu hierarchy, and inside
# a delegated session (delegate=yes, v2 only) against lib/cgroup/session.c on this
# host's cgroup2 mount:
#   1. "autogroup enter", moves between leaves and mkdir attempts racing
#      close_session;
#   2. thousands of groups in one session: the user can make none; root-made
#      ones (v1 has no kernel limit) keep close bounded, gc removes them;
#   3. renaming and "filling" the session: all refused;
#   4. cgroup v2, delegated: the per-session limits (cgroup.max.descendants
#      128, cgroup.max.depth 8) hold against the user.
# Throughout: nothing outside the user's own subtree is touched, every close
# and gc is bounded (timeout turns a hang into a failure), and the tree ends
# empty.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_helper

test_root agtest
test_outside                    # OUT must survive
V2ROOT="agv2h-$$"
AG_CGROOTS="$AG_CGROOTS $UNIFIED/$V2ROOT"
AG="$HELPER --root $ROOT"
mkdir -p "$OUT/login"

new_user a; new_user b
write_conf "* weight 100"
pam_other
pam_service agh "root=$ROOT conf=$CONF"
# Every session is bounded (120 s, or BOUND seconds) so that a hang is a failure;
# user B's bystander session and its process live through the whole test,
# which under the sanitizers can take longer than 120 s: both get B_LIFE.
SVC=agh; BOUND=120              # drv and bg (lib.sh)
wait_gone() { local p; for p in "$@"; do for _ in $(seq 200); do [ -d "/proc/$p" ] || break; sleep 0.05; done; done; }

# user B's live session and the outside group must survive everything below
B_LIFE=1800
BOUND=$B_LIFE bg b "$UB" spawn-user "echo \$\$ > $U/b.pid; exec sleep $B_LIFE"
SB=$(val AUTOGROUP_SESSION b)
wait_for "$U/b.pid" '^[0-9]+$'; PB=$(cat "$U/b.pid"); track_pid "$PB"
bystanders_ok() {
        check "$1: user B's session and process untouched" test "$(cgof "$PB")" = "$SB/login"
        check "$1: the group outside <root> untouched" test -d "$OUT/login"
}

echo "# 1. enter, moves between leaves and mkdir attempts racing close_session (5 rounds, 4 racers each)"
# A racer: a session leader of its own that, N times, enters a leaf, moves
# itself into another leaf by hand (close removes the empty ones meanwhile)
# and tries to make a group; it counts enter's failures and groups made.
cat >"$T/race.sh" <<EOF
S=\$(grep ':cpu:' /proc/self/cgroup | cut -d: -f3); S=\${S%/login}
fails=0; i=0
while [ \$i -lt \$2 ]; do
        $AG enter --pid \$\$ >/dev/null 2>>$U/race.err || fails=\$((fails + 1))
        echo \$\$ > $CPU\$S/leaf-\$((i % 6 + 1))/cgroup.procs 2>/dev/null
        mkdir $CPU\$S/r\$\$ 2>/dev/null && { fails=\$((fails + 1)); rmdir $CPU\$S/r\$\$ 2>/dev/null; }
        i=\$((i + 1))
done
echo \$fails > $U/race.\$1.done
EOF
chmod 644 "$T/race.sh"
: >"$U/race.err"; chmod 666 "$U/race.err"
fails=0; closes=0; sessions=""
for round in 1 2 3 4 5; do
        rm -f "$U"/race.*.done
        bg r$round "$UA" spawn-user "for k in 1 2 3 4; do setsid sh $T/race.sh \$k 120 & done"
        sessions="$sessions $(val AUTOGROUP_SESSION r$round)"
        sleep "0.$((RANDOM % 5))"
        closed r$round
        grep -q '^close=PAM_SUCCESS' "$T/r$round.out" && closes=$((closes + 1))
        for k in 1 2 3 4; do wait_for "$U/race.$k.done" '^[0-9]+$' || fails=$((fails + 1000)); done
        for k in 1 2 3 4; do fails=$((fails + $(cat "$U/race.$k.done" 2>/dev/null || echo 1000))); done
done
# each racer writes its .done file just before it exits: wait until they are all gone
for _ in $(seq 200); do pgrep -u "$UA" -f race.sh >/dev/null || break; sleep 0.05; done
check_eq "every close during the race returned PAM_SUCCESS, in bounded time" 5 "$closes"
check_eq "enter never failed while close ran, and no mkdir succeeded" 0 "$fails"
check_eq "enter printed no error" "" "$(head -n 3 "$U/race.err")"
bystanders_ok "race"
drv "$UA" open close >"$T/sweep1.out" 2>&1
check "the next login of the user succeeds" grep -q '^close=PAM_SUCCESS' "$T/sweep1.out"
left=""; for s in $sessions; do [ -e "$CPU$s" ] && left="$left $s"; done
check_eq "and sweeps every raced session once the racers are gone" "" "$left"
check_eq "user A's group is gone" "" "$(ls -d "$CG/user-$IA" 2>/dev/null)"

echo "# 2. thousands of groups in one session (cgroup v1: no kernel limit): none by the user, 3,000 by root"
bg m "$UA" spawn-user "echo \$\$ > $U/m.pid; exec sleep 600"
SM=$(val AUTOGROUP_SESSION m)
wait_for "$U/m.pid" '^[0-9]+$'; PM=$(cat "$U/m.pid"); track_pid "$PM"
as_user "$UA" "cd $CPU$SM && seq 3000 | sed 's/^/x/' | xargs mkdir; mkdir -p leaf-1/a login/a" >"$T/mk.out" 2>&1
check_eq "3,000 mkdirs by the user in the session, its leaf and login/: none made" "" \
        "$(find "$CPU$SM" -mindepth 1 -type d ! -name login ! -name 'leaf-[1-6]')"
# what a delegated session could hold, or an admin's tool might leave: root makes it
(cd "$CPU$SM" && seq 3000 | sed 's/^/x/' | xargs mkdir && mkdir -p x1/a/b/c x2/a/b/c) >"$T/mk.out" 2>&1
check_eq "root made 3,000 groups in the session" 3000 "$(find "$CPU$SM" -mindepth 1 -maxdepth 1 -name 'x*' -type d | wc -l)"
( echo "$BASHPID" >"$CPU$SM/login/cgroup.procs" &&
  as_user "$UA" "setsid sh -c 'timeout 60 $AG enter --pid \$\$; echo \$? > $U/m.enter; grep :cpu: /proc/\$\$/cgroup | cut -d: -f3 > $U/m.cg'" ) >/dev/null 2>&1
check_eq "enter in that session still works (exit 0)" 0 "$(cat "$U/m.enter" 2>/dev/null)"
check "  and lands in one of root's leaves" grep -q "^$SM/leaf-[1-6]\$" "$U/m.cg"
timeout 60 $AG status >"$T/m.status" 2>&1
check_eq "status over that session: exit 0, bounded" 0 "$?"
kill "$PM"; wait_gone "$PM"
closed m
check "close with 3,000 groups: PAM_SUCCESS, bounded" grep -q '^close=PAM_SUCCESS' "$T/m.out"
check "  the session is left (more than close's budget of 256)" test -d "$CPU$SM"
drv "$UA" open close >"$T/sweep2.out" 2>&1
check "the next login of that user succeeds, bounded" grep -q '^close=PAM_SUCCESS' "$T/sweep2.out"
bystanders_ok "many groups"
timeout 120 $AG gc >"$T/gc2.out" 2>&1
check_eq "gc: exit 0, bounded" 0 "$?"
check "gc removes the session with its 3,000 groups" grep -qx "removed $SM" "$T/gc2.out"
check_eq "  and nothing of user A is left" "" "$(ls -d "$CG/user-$IA" 2>/dev/null)"
bystanders_ok "gc"

echo "# 2b. a tree exactly as deep as close and gc look (8 levels), held by a lingering process"
# The process sits at the bottom, so close cannot remove the chain and leaves
# the session; once the process is gone, gc or the watcher that close started
# (session e) and the next login's sweep or that watcher (session d) must
# remove the whole 8-deep session. The user cannot make the chain: root
# makes it and moves the user's process to its bottom.
D8=d/d/d/d/d/d/d/d
for n in e d; do
        bg $n "$UA" spawn-user "echo \$\$ > $U/$n.pid && exec sleep 600"
        wait_for "$U/$n.pid" '^[0-9]+$'; eval "P8$n=\$(cat $U/$n.pid)"; eval "track_pid \$P8$n"
        eval "S8$n=\$(val AUTOGROUP_SESSION $n)"
        eval "mkdir -p \"$CPU\$S8$n/$D8\" && echo \$P8$n >\"$CPU\$S8$n/$D8/cgroup.procs\""
done
check_not "the user cannot make such a chain" as_user "$UA" "mkdir -p $CPU$S8e/leaf-1/$D8"
check_eq "the lingering process sits 8 levels down" "$S8e/$D8" "$(cgof "$P8e")"
closed e; closed d
check "close leaves a session whose bottom group holds a process" test -d "$CPU$S8e/$D8" -a -d "$CPU$S8d/$D8"
kill "$P8e"; wait_gone "$P8e"
timeout 60 $AG gc >"$T/gc8.out" 2>&1
# close started a watcher for the held session, so the watcher may have
# removed it before gc ran: either way the whole 8-deep chain is gone
check "gc (or the watcher of its close) removes the emptied 8-deep session" test ! -e "$CPU$S8e"
check "  and leaves the one still held" test -d "$CPU$S8d/$D8"
kill "$P8d"; wait_gone "$P8d"
drv "$UA" open close >"$T/sweep8.out" 2>&1
check "the next login's sweep removes the other emptied 8-deep session" test ! -e "$CPU$S8d"
check_eq "  and nothing of user A is left" "" "$(ls -d "$CG/user-$IA" 2>/dev/null)"

echo "# 3. renaming and filling the session: all refused"
bg n "$UA" spawn-user "echo \$\$ > $U/n.pid; exec sleep 600"
SN=$(val AUTOGROUP_SESSION n)
wait_for "$U/n.pid" '^[0-9]+$'; PN=$(cat "$U/n.pid"); track_pid "$PN"
check_not "user cannot rename login/ inside the session" as_user "$UA" "mv $CPU$SN/login $CPU$SN/evil"
check_not "user cannot rename a leaf" as_user "$UA" "mv $CPU$SN/leaf-1 $CPU$SN/user-0"
check_not "user cannot remove a free leaf" as_user "$UA" "rmdir $CPU$SN/leaf-6"
check_eq "  the process stays in login/, the leaves in place" "$SN/login:leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login" \
        "$(cgof "$PN"):$(find "$CPU$SN" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check_not "user cannot make a group in the session" as_user "$UA" "mkdir $CPU$SN/a"
check_not "user cannot rename the session itself" as_user "$UA" "mv $CPU$SN $CPU/$ROOT/user-$IA/x"
check_not "user cannot rename the session to another user's name" as_user "$UA" "mv $CPU$SN $CPU/$ROOT/user-$IB"
check_not "user cannot rename their user group" as_user "$UA" "mv $CPU/$ROOT/user-$IA $CPU/$ROOT/user-$IB-x"
check_not "user cannot move a leaf out of the session" as_user "$UA" "mv $CPU$SN/leaf-2 $CPU/$ROOT/user-$IA/evil"
check_not "user cannot move a leaf outside <root>" as_user "$UA" "mv $CPU$SN/leaf-2 $CPU/user-0"
check_not "user cannot create a file in the session" as_user "$UA" "touch $CPU$SN/file"
check_not "user cannot create a file in a leaf" as_user "$UA" "touch $CPU$SN/leaf-1/file"
check_not "user cannot create a symlink in the session" as_user "$UA" "ln -s / $CPU$SN/link"
check_not "user cannot create a symlink in a leaf" as_user "$UA" "ln -s / $CPU$SN/leaf-1/link"
check_not "user cannot create a FIFO in the session" as_user "$UA" "mkfifo $CPU$SN/fifo"
check_not "user cannot write the session's cpu.shares" as_user "$UA" "echo 262144 > $CPU$SN/cpu.shares"
check_not "user cannot write a leaf's cpu.shares" as_user "$UA" "echo 262144 > $CPU$SN/leaf-1/cpu.shares"
check "nothing appeared at the hierarchy root" test ! -e "$CPU/user-0" -a ! -e "$CPU/evil"
kill "$PN"; wait_gone "$PN"
closed n
check "close after the attempts: PAM_SUCCESS" grep -q '^close=PAM_SUCCESS' "$T/n.out"
check "  the session is removed" test ! -e "$CPU$SN"
check_eq "  and user A's group too" "" "$(ls -d "$CG/user-$IA" 2>/dev/null)"
bystanders_ok "renames"

echo "# 4. cgroup v2, a delegated session (delegate=yes): per-session limits against the user ($UNIFIED)"
if [ -f "$UNIFIED/cgroup.procs" ] && [ "$(stat -f -c %T "$UNIFIED")" = cgroup2fs ]; then
        timeout -k 5 120 "$AGDRV" --lib "$UNIFIED" "$V2ROOT" "$UA" delegate=yes open env cgroup wait-file "$T/v.go" close >"$T/v.out" 2>&1 &
        PV=$!; track_pid $PV
        wait_for "$T/v.out" '^cgroup='
        SV=$(val AUTOGROUP_SESSION v)
        check_eq "session cgroup.max.depth is 8 (root's)" "8 root" \
                "$(cat "$UNIFIED$SV/cgroup.max.depth") $(stat -c %U "$UNIFIED$SV/cgroup.max.depth")"
        as_user "$UA" "cd $UNIFIED$SV && for i in \$(seq 200); do mkdir y\$i 2>/dev/null; done" >/dev/null 2>&1
        check_eq "200 mkdirs by the user: the kernel stops them at 128 groups in the session" 128 \
                "$(find "$UNIFIED$SV" -mindepth 1 -type d | wc -l)"
        as_user "$UA" "cd $UNIFIED$SV && find . -mindepth 1 -maxdepth 1 -name 'y*' -exec rmdir {} +" >/dev/null 2>&1
        as_user "$UA" "cd $UNIFIED$SV && mkdir -p d/d/d/d/d/d/d/d/d/d" >/dev/null 2>&1
        check "the user can nest 8 levels" test -d "$UNIFIED$SV/d/d/d/d/d/d/d/d"
        check "  but not a 9th" test ! -e "$UNIFIED$SV/d/d/d/d/d/d/d/d/d"
        check_not "user cannot raise cgroup.max.depth" as_user "$UA" "echo max > $UNIFIED$SV/cgroup.max.depth"
        touch "$T/v.go"; wait "$PV"
        check "close removes the 8-deep tree and the session" test ! -e "$UNIFIED$SV"
        check_eq "  and the user group" "" "$(ls -d "$UNIFIED/$V2ROOT/user-$IA" 2>/dev/null)"
else
        skip "no cgroup2 mount at $UNIFIED"
fi

closed b
check "user B's session closes normally at the end" grep -q '^close=PAM_SUCCESS' "$T/b.out"
kill "$PB" 2>/dev/null; wait_gone "$PB"
drv "$UB" open close >/dev/null 2>&1
check_eq "the test root is empty" "" "$(find "$CG" -mindepth 1 -type d 2>/dev/null)"
finish
