#!/bin/bash
# The latency lane on the host (cgroup v1 cpu), through real libpam (agdrv
# --pam, pam_autogroup.so): at "interactive 2" the module (root) makes one
# group per user beside the tree, <root>.lane-<uid>, with the cap of the item
# "lane-cap" (per user, @group, *), root's but for its cgroup.procs;
# "autogroup run/set --latency interactive|audio" put the command there,
# batch and normal do not; levels 0 and 1 get none, nor does uid 0. Attacks
# as the unprivileged user (other users' and root's processes, its cpu.*
# files, a sub-group, rename, symlinks, a level given by hand), bad input
# (10,000 runs, spinners in the lane, a class rule naming root), and the
# lane's end with the user's last session (not before; a lane that still
# holds a process is left for gc). status (text and JSON) and metrics show
# each user's lane with its cap, processes and throttling; gc --apply writes a
# changed lane-cap to the live lanes (and the user still cannot); a lane's
# CPU time counts in the sessions' records here (cpuacct mounted apart: the
# processes stay in their sessions' mirrors). No timing threshold anywhere:
# what the lane gives in latency is measured by bench/load.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu
require_helper
ROOT="agtest-$$"
CG="$CPU/$ROOT"
AG="$HELPER --root $ROOT"
start_syslog || true

add_group "${TAG}v"
add_user "${TAG}a"; add_user "${TAG}b"; add_user "${TAG}c" "${TAG}v"; add_user "${TAG}d"; add_user "${TAG}e"; add_user "${TAG}f"
UA="${TAG}a"; UB="${TAG}b"; UC="${TAG}c"; UD="${TAG}d"; UE="${TAG}e"; UF="${TAG}f"
IA=$(id -u "$UA"); IB=$(id -u "$UB"); IC=$(id -u "$UC"); ID=$(id -u "$UD"); IE=$(id -u "$UE"); IF=$(id -u "$UF")
lane() { echo "$CPU/$ROOT.lane-$1"; }
# every group this test can cause beside the tree, removed at exit
AG_CGROOTS="$CG $(lane "$IA") $(lane "$IB") $(lane "$IC") $(lane "$ID") $(lane "$IE") $(lane "$IF") $(lane 0)"
CONF="$T/autogroup.conf"
cat >"$CONF" <<CONF
*               interactive  2
@${TAG}v        lane-cap     25%
$UB             lane-cap     5%
$UD             interactive  1
$UE             interactive  0
$UF             leaves       0
root            interactive  2
root            latency      audio
CONF
chmod 644 "$CONF"
pam_other
printf 'session required pam_permit.so\nsession optional %s root=%s conf=%s debug\n' "$AG_MODULE" "$ROOT" "$CONF" >"$T/agtest"
SVC=agtest      # the service of lib.sh's bg NAME USER (open until $T/NAME.go; closed NAME)
cgof() { sed -n 's/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$1/cgroup" 2>/dev/null; }
# in_k NAME USER CMD: CMD as USER from the login/ leaf of session NAME, with the level the module exported
in_k() { ( echo "$BASHPID" >"$CPU$(val AUTOGROUP_SESSION "$1")/login/cgroup.procs" &&
           as_user "$2" "AUTOGROUP_INTERACTIVE=$(val AUTOGROUP_INTERACTIVE "$1") $3" ); }
# the groups beside the tree named after this test's root
beside() { find "$CPU" -mindepth 1 -maxdepth 1 -name "$ROOT.*" -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//'; }
WHERE="sh -c 'grep :cpu: /proc/self/cgroup | cut -d: -f3'"
sleep 600 & P_ROOT=$!; track_pid "$P_ROOT"      # a process of root's outside the tree

echo "# 1. check and explain know the item lane-cap"
out=$("$HELPER" check "$CONF" 2>&1); rc=$?
check_eq "check: the config is valid" "0:$CONF: OK, 8 rules" "$rc:$(echo "$out" | tail -n1)"
printf '* lane-cap 0%%\n* lane-cap 10\n* lane-cap x%%\n* lane-cap none\n* lane-cap 150%%\npool:p lane-cap 5%%\n' >"$T/bad.conf"
chmod 644 "$T/bad.conf"
out=$("$HELPER" check "$T/bad.conf" 2>&1); rc=$?
for n in 1 2 3; do
        check "check: a malformed lane-cap is an error naming file:line ($n)" grep -q "^$T/bad.conf:$n: invalid lane-cap" <<<"$out"
done
check_not "check: lane-cap none and 150% are valid" grep -qE "^$T/bad.conf:[45]:" <<<"$out"
check "check: lane-cap is not a pool's item" grep -q "^$T/bad.conf:6:" <<<"$out"
check_eq "check: exit non-zero, 4 errors" "1:$T/bad.conf: 4 errors" "$rc:$(echo "$out" | tail -n1 | cut -d, -f1)"
out=$("$HELPER" explain --conf "$CONF" "$UA" 2>&1)
check "explain: lane-cap 10% by default" grep -qE "^lane-cap +10% +default$" <<<"$out"
check "explain: the lane line" grep -q "^lane: <root>.lane-$IA beside the tree (cgroup v1), cap 10% of one CPU, weight 100" <<<"$out"
out=$("$HELPER" explain --conf "$CONF" "$UC" 2>&1)
check "explain: lane-cap from the @group line" grep -qE "^lane-cap +25% +from $CONF:2 " <<<"$out"
out=$("$HELPER" explain --conf "$CONF" "$UB" 2>&1)
check "explain: lane-cap from the user line" grep -qE "^lane-cap +5% +from $CONF:3 " <<<"$out"
out=$("$HELPER" explain --conf "$CONF" "$UD" 2>&1)
check_not "explain: no lane at interactive 1" grep -q "^lane:" <<<"$out"
out=$("$HELPER" explain --conf "$CONF" root 2>&1)
check "explain: uid 0 gets no lane" grep -q "^lane: none for uid 0" <<<"$out"

echo "# 2. the lane exists only at interactive 2, root's, with the cap from the config"
bg a "$UA"; bg b "$UB"; bg c "$UC"; bg d "$UD"; bg e "$UE"; bg f "$UF"; bg r root
for n in a b c d e f r; do check "session $n opened and grouped" grep -q "^cgroup=/$ROOT/user-" "$T/$n.out"; done
check_eq "the levels exported: 2 2 2 1 0 2" "2 2 2 1 0 2" \
        "$(for n in a b c d e r; do val AUTOGROUP_INTERACTIVE $n; done | tr '\n' ' ' | sed 's/ $//')"
check_eq "beside the tree: one lane each for A, B, C (level 2); none for D (1), E (0), F (2, leaves 0), root" \
        "$(printf '%s\n' "$ROOT.lane-$IA" "$ROOT.lane-$IB" "$ROOT.lane-$IC" | sort | tr '\n' ' ' | sed 's/ $//')" "$(beside)"
LA=$(lane "$IA")
check_eq "A's lane: directory, cpu.*, tasks root's; cgroup.procs A's" "root root root root root $UA" \
        "$(stat -c %U "$LA" "$LA/cpu.shares" "$LA/cpu.cfs_quota_us" "$LA/cpu.cfs_period_us" "$LA/tasks" "$LA/cgroup.procs" | tr '\n' ' ' | sed 's/ $//')"
check_eq "A's lane: mode 0755, cgroup.procs 0644" "755 644" "$(stat -c %a "$LA" "$LA/cgroup.procs" | tr '\n' ' ' | sed 's/ $//')"
check_eq "caps from the config: A * 10%, B user 5%, C @group 25% (quota/period us)" \
        "10000/100000 5000/100000 25000/100000" \
        "$(for u in $IA $IB $IC; do echo "$(cat "$(lane $u)/cpu.cfs_quota_us")/$(cat "$(lane $u)/cpu.cfs_period_us")"; done | tr '\n' ' ' | sed 's/ $//')"
check_eq "the lane's weight is the default (shares 1024)" 1024 "$(cat "$LA/cpu.shares")"
check_eq "A's lane is empty until a command goes there" "" "$(cat "$LA/cgroup.procs")"

echo "# 3. run and set --latency: interactive and audio into the lane, batch and normal not"
S_A=$(val AUTOGROUP_SESSION a); S_D=$(val AUTOGROUP_SESSION d)
for c in audio interactive 3 2; do
        check_eq "A: run --latency $c runs in the lane" "/$ROOT.lane-$IA" "$(in_k a "$UA" "$AG run --latency $c -- $WHERE" 2>/dev/null)"
done
for c in batch normal; do
        check_eq "A: run --latency $c runs in a leaf of the session" "$S_A/leaf-1" "$(in_k a "$UA" "$AG run --latency $c -- $WHERE" 2>/dev/null)"
done
check_eq "A: run without --latency: a leaf of the session" "$S_A/leaf-1" "$(in_k a "$UA" "$AG run -- $WHERE" 2>/dev/null)"
out=$(in_k a "$UA" "$AG run -v --latency audio -- true" 2>&1)
check "A: run -v names the lane" grep -qx "autogroup run: /$ROOT.lane-$IA" <<<"$out"
check_eq "D (interactive 1): run --latency audio: the class leaf, as before" "$S_D/class-audio" \
        "$(in_k d "$UD" "$AG run --latency audio -- $WHERE" 2>/dev/null)"
in_k a "$UA" "$AG run -- sh -c 'echo \$\$ > $U/a1.pid; exec sleep 600'" >/dev/null 2>&1 &
track_pid $!; wait_for "$U/a1.pid" '^[0-9]+$'; A1=$(cat "$U/a1.pid"); track_pid "$A1"
in_k a "$UA" "$AG set --latency audio $A1" >/dev/null 2>&1; rc=$?
check_eq "A: set --latency audio PID moves A's process into the lane" "0 /$ROOT.lane-$IA" "$rc $(cgof "$A1")"
echo "# 3b. status and metrics show each user's lane under its user, with its cap and processes"
$AG status >"$T/st.txt" 2>&1; $AG status --json >"$T/st.json" 2>&1
# the rows of user U's block in the text: from its user-<uid> row to the next user's
block() { awk -v u="user-$1 " 'index($0, u) { on = 1; print; next } on && /user-[0-9]+ / { on = 0 } on' "$T/st.txt"; }
check "status: A's lane is a row in A's block, cap 10%, 1 process (A1)" \
        grep -qE "/$ROOT\.lane-$IA \(latency lane\) +100 +1024 +10% +no +1 +-\$" <<<"$(block "$IA")"
check "status: B's lane in B's block, cap 5%" grep -qE "/$ROOT\.lane-$IB \(latency lane\) +100 +1024 +5% +no +0 " <<<"$(block "$IB")"
check "status: C's lane in C's block, cap 25% (@group)" grep -qE "/$ROOT\.lane-$IC \(latency lane\) +100 +1024 +25% " <<<"$(block "$IC")"
check_not "status: no lane row for D (interactive 1)" grep -q "latency lane" <<<"$(block "$ID")"
check "status: the footer says where a lane's CPU time counts" grep -q "^A latency lane has no mirror: its processes' time counts in their sessions' (\"-\" for lanes)" "$T/st.txt"
# lane_json FILE UID: the user's "lane" (path cap_percent quota_us period_us procs cpu_usec kind), "null" for none
lane_json() { python3 -c '
import json, sys
def users(n):
    if n.get("kind") == "user": yield n
    for c in n.get("children", []): yield from users(c)
for line in open(sys.argv[1]):
    for u in users(json.loads(line)["tree"] or {}):
        if str(u["uid"]) == sys.argv[2]:
            l = u["lane"]
            print("null" if l is None else " ".join(str(l[k]) for k in ("path", "cap_percent", "quota_us", "period_us", "procs", "cpu_usec", "kind")))
            print("children:", " ".join(c["name"] for c in u["children"] if ".lane-" in c["name"]) or "-")
' "$@" 2>&1; }
check_eq "status --json: A's user object has its lane (cpu_usec null: cpuacct is mounted apart)" \
        "/$ROOT.lane-$IA 10 10000 100000 1 None lane|children: -" "$(lane_json "$T/st.json" "$IA" | tr '\n' '|' | sed 's/|$//')"
check_eq "status --json: C's lane, 25%" "/$ROOT.lane-$IC 25 25000 100000 0 None lane" "$(lane_json "$T/st.json" "$IC" | head -n1)"
check_eq "status --json: D's lane is null" null "$(lane_json "$T/st.json" "$ID" | head -n1)"
in_k a "$UA" "$AG status --json" >"$T/st-a.json" 2>/dev/null
check_eq "status --json as A: A's own lane" "/$ROOT.lane-$IA 10 10000 100000 1 None lane" "$(lane_json "$T/st-a.json" "$IA" | head -n1)"
$AG metrics >"$T/m.txt" 2>&1
check "metrics: A's lane's cap (0.1 CPU)" grep -qx "autogroup_lane_cap_cpus{root=\"$ROOT\",uid=\"$IA\",user=\"$UA\"} 0.1" "$T/m.txt"
check "metrics: C's lane's cap (0.25 CPU)" grep -qx "autogroup_lane_cap_cpus{root=\"$ROOT\",uid=\"$IC\",user=\"$UC\"} 0.25" "$T/m.txt"
check "metrics: the family's TYPE line" grep -qx "# TYPE autogroup_lane_cap_cpus gauge" "$T/m.txt"
check "metrics: a lane's throttled periods" grep -qE "^autogroup_lane_cpu_throttled_periods_total\{root=\"$ROOT\",uid=\"$IA\",user=\"$UA\"\} [0-9]+\$" "$T/m.txt"
check_not "metrics: no lane series for D" grep -qE "^autogroup_lane_[a-z_]+\{root=\"$ROOT\",uid=\"$ID\"" "$T/m.txt"
check_not "metrics: no lane CPU seconds (cpuacct apart: they count in the user's)" grep -q "^autogroup_lane_cpu_seconds_total" "$T/m.txt"
check_eq "  where A can move it back into a leaf of its session" "$S_A/leaf-2" \
        "$(as_user "$UA" "echo $A1 > $CPU$S_A/leaf-2/cgroup.procs" && cgof "$A1")"

echo "# 4. attacks on the lane as the user"
( echo "$BASHPID" >"$CPU$(val AUTOGROUP_SESSION b)/login/cgroup.procs" &&
  exec setpriv --reuid="$UB" --regid="$(id -g "$UB")" --init-groups -- sh -c "echo \$\$ > $U/b1.pid; exec sleep 600" ) &
track_pid $!; wait_for "$U/b1.pid" '^[0-9]+$'; B1=$(cat "$U/b1.pid"); track_pid "$B1"
check_not "A cannot move root's process into A's lane" as_user "$UA" "echo $P_ROOT > $LA/cgroup.procs"
check_not "A cannot move B's process into A's lane" as_user "$UA" "echo $B1 > $LA/cgroup.procs"
check_not "A cannot move its own process into B's lane" as_user "$UA" "echo \$\$ > $(lane "$IB")/cgroup.procs"
check_not "A cannot move B's process into B's lane" as_user "$UA" "echo $B1 > $(lane "$IB")/cgroup.procs"
check_not "A cannot write the lane's tasks" as_user "$UA" "echo \$\$ > $LA/tasks"
check_eq "root's and B's processes stayed where they were" "/ $(val AUTOGROUP_SESSION b)/login" "$(cgof "$P_ROOT") $(cgof "$B1")"
for f in cpu.cfs_quota_us cpu.cfs_period_us cpu.shares cpu.rt_runtime_us cpu.rt_period_us notify_on_release; do
        check_not "A cannot write the lane's $f" as_user "$UA" "echo 1000000 > $LA/$f"
done
check_not "A cannot make a cpu.max in the lane (no such file on v1, none can be made)" as_user "$UA" "echo 'max 100000' > $LA/cpu.max"
check_not "A cannot make a group in the lane" as_user "$UA" "mkdir $LA/mine"
check_not "A cannot make a group beside the tree" as_user "$UA" "mkdir $CPU/$ROOT.lane-$IA-2"
check_not "A cannot rename the lane" as_user "$UA" "mv $LA $CPU/$ROOT.mine"
check_not "A cannot remove the lane" as_user "$UA" "rmdir $LA"
check_not "A cannot make a symlink beside the tree" as_user "$UA" "ln -s $CG $CPU/$ROOT.lane-$ID"
check_not "A cannot make a symlink in the lane" as_user "$UA" "ln -s $CG $LA/evil"
check_not "A cannot give the lane's cgroup.procs to B" as_user "$UA" "chown $UB $LA/cgroup.procs"
check_eq "A's lane: cap, period and weight unchanged" "10000 100000 1024" \
        "$(cat "$LA/cpu.cfs_quota_us" "$LA/cpu.cfs_period_us" "$LA/cpu.shares" | tr '\n' ' ' | sed 's/ $//')"
# a command in the lane tries the same from there
in_k a "$UA" "$AG run --latency audio -- sh -c 'echo 100000 > $LA/cpu.cfs_quota_us; echo -1 > $LA/cpu.cfs_quota_us; echo 262144 > $LA/cpu.shares; echo $P_ROOT > $LA/cgroup.procs; echo $B1 > $LA/cgroup.procs; echo \$\$ > $CPU/cgroup.procs; mkdir $LA/x'" >/dev/null 2>&1
check_eq "from inside the lane: cap and weight unchanged, nobody else moved in" "10000 1024 / $(val AUTOGROUP_SESSION b)/login" \
        "$(cat "$LA/cpu.cfs_quota_us") $(cat "$LA/cpu.shares") $(cgof "$P_ROOT") $(cgof "$B1")"
# the helper never makes a lane: D (level 1) asks for level 2 by hand
out=$(in_k d "$UD" "AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- $WHERE" 2>&1)
check_eq "D claims level 2 by hand: no lane made, the class leaf" "$S_D/class-audio" "$(tail -n1 <<<"$out")"
check "  and one line says there is no lane of D's" grep -q "no latency lane /$ROOT.lane-$ID of yours" <<<"$out"
check_eq "  nothing new beside the tree" "$(printf '%s\n' "$ROOT.lane-$IA" "$ROOT.lane-$IB" "$ROOT.lane-$IC" | sort | tr '\n' ' ' | sed 's/ $//')" "$(beside)"
out=$(as_user "$UA" "AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- $WHERE" 2>&1); rc=$?
check_eq "run outside any session: refused, not into the lane" 1 "$rc"

echo "# 5. bad input: a class rule naming root, spinners in the lane, 10,000 runs"
check "root's login (root interactive 2, latency audio) is grouped" grep -q "^cgroup=/$ROOT/user-0/" "$T/r.out"
check_eq "root gets no lane: nothing beside the tree for uid 0" "" "$(ls -d "$(lane 0)" 2>/dev/null)"
S_R=$(val AUTOGROUP_SESSION r)
out=$( ( echo "$BASHPID" >"$CPU$S_R/login/cgroup.procs" && AUTOGROUP_INTERACTIVE=2 $AG run --latency audio -- sh -c 'grep :cpu: /proc/self/cgroup | cut -d: -f3' ) 2>&1)
check_eq "root's run --latency audio: its class leaf" "$S_R/class-audio" "$(tail -n1 <<<"$out")"
check "  with one line: no lane for root" grep -q "no latency lane /$ROOT.lane-0 of yours" <<<"$out"
check_eq "  and still nothing beside the tree for uid 0" "" "$(ls -d "$(lane 0)" 2>/dev/null)"
# spinners: two of A's in the lane; the cap file holds its value, the kernel throttles the lane.
# They start as a process of the login's would: in the session's cpuacct
# mirror too (cpuacct is mounted apart here; in_k moves into the cpu tree only)
ACCT_S=/sys/fs/cgroup/cpuacct$S_A
RUNS=""
for i in 1 2; do
        ( [ ! -d "$ACCT_S" ] || echo "$BASHPID" >"$ACCT_S/cgroup.procs"
          in_k a "$UA" "$AG run --latency audio -- sh -c 'echo \$\$ > $U/spin$i.pid; while :; do :; done'" ) >/dev/null 2>&1 &
        track_pid $!; RUNS="$RUNS $!"
done
wait_for "$U/spin1.pid" '^[0-9]+$'; wait_for "$U/spin2.pid" '^[0-9]+$'
S1=$(cat "$U/spin1.pid"); S2=$(cat "$U/spin2.pid"); track_pid "$S1" "$S2"
check_eq "two spinners of A's in the lane" "/$ROOT.lane-$IA /$ROOT.lane-$IA" "$(cgof "$S1") $(cgof "$S2")"
for _ in $(seq 100); do t=$(sed -n 's/^nr_throttled //p' "$LA/cpu.stat"); [ "${t:-0}" -gt 0 ] && break; sleep 0.1; done
check "the kernel throttles the lane (cpu.stat nr_throttled > 0)" test "${t:-0}" -gt 0
check_eq "the cap holds its value with spinners in it" "10000 100000" "$(cat "$LA/cpu.cfs_quota_us" "$LA/cpu.cfs_period_us" | tr '\n' ' ' | sed 's/ $//')"
$AG status --json >"$T/st2.json" 2>&1; $AG metrics >"$T/m2.txt" 2>&1
check_eq "status --json: the lane's 2 processes" 2 "$(lane_json "$T/st2.json" "$IA" | head -n1 | cut -d' ' -f5)"
t2=$(sed -n "s/^autogroup_lane_cpu_throttled_periods_total{root=\"$ROOT\",uid=\"$IA\",user=\"$UA\"} //p" "$T/m2.txt")
check "metrics: the lane's throttled periods > 0 (got '$t2')" test "${t2:-0}" -gt 0
# the lane's CPU time: cpuacct is mounted apart here, and the lane has no
# mirror; the spinners stay in A's session's mirror, whose record counts them
check_eq "run --latency audio leaves the spinners in A's session's cpuacct mirror (its record counts their time)" "$S_A $S_A" \
        "$(sed -n 's/^[0-9]*:cpuacct:\(.*\)$/\1/p' "/proc/$S1/cgroup") $(sed -n 's/^[0-9]*:cpuacct:\(.*\)$/\1/p' "/proc/$S2/cgroup")"
# their CPU time in clock ticks, read before they go (no less than their share of the session's figure)
ticks() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }; set -- ${s##*) }; echo $(( ${12} + ${13} )); }
SPIN_TICKS=$(( $(ticks "$S1") + $(ticks "$S2") ))
kill "$S1" "$S2" 2>/dev/null; for p in $RUNS; do wait "$p" 2>/dev/null; done
# 10,000 runs: one lane, no new group anywhere, nothing left in the lane.
# (1,000 with a helper built with AddressSanitizer, .ci/sanitize: 10,000
# there outlast agdrv's 120 s hold of the sessions above)
if nm -D "$HELPER" 2>/dev/null | grep -q __asan_init; then FLOOD=${AG_LANE_FLOOD:-1000}; else FLOOD=${AG_LANE_FLOOD:-10000}; fi
before="$(beside) | $(find "$CG" -type d | wc -l)"
in_k a "$UA" "i=0; while [ \$i -lt $FLOOD ]; do $AG run --latency audio -- true || exit 1; i=\$((i + 1)); done" >"$T/flood.out" 2>&1; rc=$?
check_eq "$FLOOD runs of run --latency audio as A: all succeed" 0 "$rc"
check_eq "  no new group beside the tree or in the tree" "$before" "$(beside) | $(find "$CG" -type d | wc -l)"
check_eq "  nothing left in the lane" "" "$(cat "$LA/cgroup.procs")"

echo "# 5b. gc --apply: a changed lane-cap written to the live lanes, nothing else removed"
cp "$CONF" "$T/conf.before"
sed -i "s/^@${TAG}v        lane-cap     25%/@${TAG}v        lane-cap     30%/" "$CONF"
echo "$UA             lane-cap     20%" >>"$CONF"
before="$(beside) | $(find "$CG" -type d | wc -l)"
$AG --pam-dir "$T" gc --apply >"$T/apply.out" 2>&1; rc=$?
check_eq "gc --apply: exit 0" 0 "$rc"
check_eq "gc --apply: the lanes' caps from the changed config: A 20%, B 5%, C 30%" \
        "20000/100000 5000/100000 30000/100000" \
        "$(for u in $IA $IB $IC; do echo "$(cat "$(lane $u)/cpu.cfs_quota_us")/$(cat "$(lane $u)/cpu.cfs_period_us")"; done | tr '\n' ' ' | sed 's/ $//')"
check "gc --apply says how many lanes" grep -qx "applied lane-cap to 3 latency lanes beside $ROOT" "$T/apply.out"
check "  after the user groups' line" grep -q "^applied the configuration to [0-9]* groups\? below $ROOT" "$T/apply.out"
check_eq "  nothing removed beside or in the tree" "$before" "$(beside) | $(find "$CG" -type d | wc -l)"
check_eq "  the lane still root's but for its cgroup.procs (A's)" "root root root $UA" \
        "$(stat -c %U "$LA" "$LA/cpu.cfs_quota_us" "$LA/tasks" "$LA/cgroup.procs" | tr '\n' ' ' | sed 's/ $//')"
check_not "A cannot write the new cap" as_user "$UA" "echo 100000 > $LA/cpu.cfs_quota_us"
check_not "A cannot lift it" as_user "$UA" "echo -1 > $LA/cpu.cfs_quota_us"
check_eq "  A's lane keeps 20%" 20000 "$(cat "$LA/cpu.cfs_quota_us")"
$AG status >"$T/st3.txt" 2>&1; mv "$T/st.txt" "$T/st1.txt"; cp "$T/st3.txt" "$T/st.txt"
check "status shows the new cap under A" grep -qE "/$ROOT\.lane-$IA \(latency lane\) +100 +1024 +20% " <<<"$(block "$IA")"
$AG metrics >"$T/m3.txt" 2>&1
check "metrics: the new cap (0.2 CPU)" grep -qx "autogroup_lane_cap_cpus{root=\"$ROOT\",uid=\"$IA\",user=\"$UA\"} 0.2" "$T/m3.txt"
cp "$T/conf.before" "$CONF"

echo "# 6. the lane goes with the user's last session, not before"
kill_ended "$A1"
bg a2 "$UA"
closed a
check_eq "A closed one of two sessions: the lane stays" "$LA" "$(ls -d "$LA" 2>/dev/null)"
closed a2
check_eq "A closed its last session: user group and lane gone" ":" "$(ls -d "$CG/user-$IA" 2>/dev/null):$(ls -d "$LA" 2>/dev/null)"
log_has "debug line: the lane removed" "/$ROOT.lane-$IA"
# the accounting: the spinners' time is in session a's record; no record of
# the lane's own (it has no CPU time of its own here: it would count twice)
rec=$(grep -o "session $S_A closed: .*" "$SYSLOG" | head -n1)
cpu_a=$(sed -n 's/.* cpu_usec=\([0-9]*\) .*/\1/p' <<<"$rec")
hz=$(getconf CLK_TCK)
if have_syslog; then
        check "A's session's closed record counts the spinners' time in the lane ($cpu_a us >= $SPIN_TICKS ticks of 1/$hz s)" \
                test "${cpu_a:-0}" -ge $(( ${SPIN_TICKS:-1} * 1000000 / hz ))
        check_not "  and no lane record (scope=lane) here" grep -q "scope=lane" "$SYSLOG"
else
        skip "the session's record (no syslog capture)"
fi
# B leaves a process in its lane at its last close: logged, left, then gc
LB=$(lane "$IB")
in_k b "$UB" "$AG set --latency audio $B1" >/dev/null 2>&1
check_eq "B's process moved into B's lane" "/$ROOT.lane-$IB" "$(cgof "$B1")"
closed b
check_eq "B's last close: the user group goes, the lane with B's process stays" ":$LB" "$(ls -d "$CG/user-$IB" 2>/dev/null):$(ls -d "$LB" 2>/dev/null)"
log_has "a line says the lane still holds processes" "latency lane of $UB still holds processes"
$AG gc >/dev/null 2>&1
check_eq "gc leaves a lane that holds a process" "$LB" "$(ls -d "$LB" 2>/dev/null)"
kill_ended "$B1"
out=$($AG gc 2>&1)
check_eq "once empty, gc removes it" "" "$(ls -d "$LB" 2>/dev/null)"
check "  and says so" grep -q "$ROOT.lane-$IB" <<<"$out"
bg b2 "$UB"
check_eq "B's next login makes the lane again" "$LB 5000" "$(ls -d "$LB" 2>/dev/null) $(cat "$LB/cpu.cfs_quota_us" 2>/dev/null)"
for n in b2 c d e f r; do closed $n; done
check_eq "every session closed: nothing left beside the tree" "" "$(beside)"

echo "# 7. why there is no lane on cgroup v2: the common-ancestor rule (on $UNIFIED, which has no cpu)"
if [ "$(stat -f -c %T "$UNIFIED" 2>/dev/null)" = cgroup2fs ]; then
        V2T="$UNIFIED/$ROOT-tree" V2L="$UNIFIED/$ROOT.lane-$IA"
        AG_CGROOTS="$AG_CGROOTS $V2T $V2L"
        # root's session as the module makes it on v2: the session's and the leaves'
        # cgroup.procs the user's; a group beside the tree with the user's cgroup.procs
        mkdir -p "$V2T/leaf-1" "$V2T/leaf-2" "$V2L"
        chown "$UA" "$V2T/cgroup.procs" "$V2T/leaf-1/cgroup.procs" "$V2T/leaf-2/cgroup.procs" "$V2L/cgroup.procs"
        ( echo "$BASHPID" >"$V2T/leaf-1/cgroup.procs" && exec setpriv --reuid="$UA" --regid="$(id -g "$UA")" --init-groups -- sh -c "echo \$\$ > $U/v2.pid; exec sleep 600" ) &
        track_pid $!; wait_for "$U/v2.pid" '^[0-9]+$'; V2P=$(cat "$U/v2.pid"); track_pid "$V2P"
        check "v2: A moves its own process between two leaves of the tree" as_user "$UA" "echo $V2P > $V2T/leaf-2/cgroup.procs"
        check_not "v2: A cannot move it beside the tree, though that cgroup.procs is A's" as_user "$UA" "echo $V2P > $V2L/cgroup.procs"
        check_eq "  it stays in the tree" "/$ROOT-tree/leaf-2" "$(sed -n 's/^0:://p' "/proc/$V2P/cgroup")"
        kill "$V2P" 2>/dev/null
else
        skip "no cgroup2 at $UNIFIED"
fi
finish
