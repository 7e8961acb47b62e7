#!/bin/bash
# cgroup v1 with cpu and cpuacct mounted apart (this host: /sys/fs/cgroup/cpu
# and /sys/fs/cgroup/cpuacct), next to a cgroup2 mount without cpu: the
# module and the helper pick the cpu hierarchy (never cpuacct, never the
# cpu-less cgroup2), write shares and quota there, and leave nothing behind
# in any hierarchy. The co-mounted layout (cpu,cpuacct in one hierarchy) is
# covered in the guest (tests/guest/test-platforms.sh §2): this host's mounts
# are never touched.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_helper
# v1 mounts by controller: "cpu" without cpuacct, and cpuacct without cpu
mnt_of() { awk -v want="$1" -v not="$2" '$0 ~ / - cgroup / {
        n = split($NF, o, ","); w = 0; x = 0
        for (i = 1; i <= n; i++) { if (o[i] == want) w = 1; if (o[i] == not) x = 1 }
        if (w && !x && $4 == "/") print $5 }' /proc/self/mountinfo | head -n1; }
CPUM=$(mnt_of cpu cpuacct); ACCTM=$(mnt_of cpuacct cpu)
if [ -z "$CPUM" ] || [ -z "$ACCTM" ]; then
        skip_all "this host does not mount cpu and cpuacct apart (cpu: '${CPUM}', cpuacct: '${ACCTM}')"
fi
ROOT="agtest-$$"
AG_CGROOTS="$CPUM/$ROOT $ACCTM/$ROOT"
start_syslog || true

new_user a
CONF="$T/autogroup.conf"
printf '%s  weight  300\n%s  max  50%%\n' "$UA" "$UA" >"$CONF"
chmod 644 "$CONF"
pam_other
pam_service agtest "root=$ROOT conf=$CONF debug"

echo "# 1. the layout: cpu at $CPUM, cpuacct at $ACCTM$(grep -q ' - cgroup2 ' /proc/self/mountinfo && echo ', and a cgroup2 mount')"
check "two separate v1 hierarchies (two superblocks)" test "$(stat -c %d "$CPUM")" != "$(stat -c %d "$ACCTM")"
check "the cpu hierarchy has no cpuacct files" test ! -e "$CPUM/cpuacct.usage"
check "the cpuacct hierarchy has no cpu files" test ! -e "$ACCTM/cpu.shares"
"$HELPER" --root "$ROOT" status --json >"$T/st0.json" 2>&1
check_eq "the helper picks the cpu hierarchy" "1 $CPUM" \
        "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["version"], j["hierarchy"])' "$T/st0.json" 2>&1)"

echo "# 2. a session: groups in the cpu hierarchy with the policy's values"
"$AGDRV" --pam "$T" agtest "$UA" open env cgroup \
        spawn-user "i=0; while [ \$i -lt 100000 ]; do i=\$((i+1)); done; echo \$\$ >$U/busy.pid; exec sleep 600" \
        wait-file "$T/go" close cgroup >"$T/s.out" 2>&1 &
PS=$!; track_pid "$PS"
wait_for "$U/busy.pid" '^[0-9]+$'; PB=$(cat "$U/busy.pid"); track_pid "$PB"
S=$(val AUTOGROUP_SESSION s)
check_eq "open: PAM_SUCCESS" PAM_SUCCESS "$(val open s)"
log_has "the module uses the cpu hierarchy" "using cgroup v1 hierarchy at $CPUM\$"
check_eq "the caller in login/" "$S/login" "$(val cgroup s)"
check "the user's process: cpu line of /proc/PID/cgroup in the session" grep -qx "[0-9]*:cpu:$S/login" "/proc/$PB/cgroup"
check "  its cpuacct line is a line of its own" grep -qE '^[0-9]+:cpuacct:' "/proc/$PB/cgroup"
check_eq "user group cpu.shares 3072 (weight 300)" 3072 "$(cat "$CPUM/$ROOT/user-$IA/cpu.shares" 2>/dev/null)"
check_eq "user group cpu.cfs_quota_us 50000 (max 50%)" 50000 "$(cat "$CPUM/$ROOT/user-$IA/cpu.cfs_quota_us" 2>/dev/null)"
check_eq "session cpu.shares 1024" 1024 "$(cat "$CPUM$S/cpu.shares" 2>/dev/null)"
check_eq "the session and its cpu.shares are root's" "root root" "$(stat -c %U "$CPUM$S" "$CPUM$S/cpu.shares" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
check_eq "root's leaves beside login/ (leaves 6), each root's but its cgroup.procs" \
        "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login|root $UA root" \
        "$(find "$CPUM$S" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')|$(stat -c %U "$CPUM$S/leaf-1" "$CPUM$S/leaf-1/cgroup.procs" "$CPUM$S/leaf-1/cpu.shares" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
check_not "nothing of it in the cgroup2 mount" test -e "/sys/fs/cgroup/unified/$ROOT/user-$IA"
"$HELPER" --root "$ROOT" status --json >"$T/st1.json" 2>&1
check_eq "status: the user group with weight 300 and cap 50%" "300 50" "$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
u = [c for c in t["children"] if c["name"] == sys.argv[2]][0]
print(u["weight"], u["cap_percent"])' "$T/st1.json" "user-$IA" 2>&1)"
check "status: the session's login/ with its process" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
s = [s for u in t["children"] for s in u["children"] if s["path"] == sys.argv[2]][0]
sys.exit(0 if [l for l in s["children"] if l["name"] == "login" and l["procs"] >= 1] else 1)' "$T/st1.json" "$S"

echo "# 3. logout: nothing left in any hierarchy"
kill "$PB" 2>/dev/null; for _ in $(seq 100); do [ -d "/proc/$PB" ] || break; sleep 0.05; done
touch "$T/go"; wait "$PS" 2>/dev/null
check_eq "close: PAM_SUCCESS" PAM_SUCCESS "$(val close s)"
check "the session and the user group are gone from the cpu hierarchy" test ! -e "$CPUM$S" -a ! -e "$CPUM/$ROOT/user-$IA"
check "no user group in the cpuacct hierarchy" test ! -e "$ACCTM/$ROOT/user-$IA"
check "no user group in the cgroup2 mount" test ! -e "/sys/fs/cgroup/unified/$ROOT/user-$IA"
finish
