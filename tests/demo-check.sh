# shellcheck shell=bash
# Sourced by the test scripts that run tools/demo (after tests/lib.sh):
# tests/host/test-demo.sh (this host), tests/guest/test-demo.sh (the v2
# guest lane), tests/systemd/guest-test.sh (the systemd guest lane).
#
# demo_check MODE NEAR: runs tools/demo as root and checks that it
#   - exits 0 in MODE (systemd or cgroupfs), the mode the module picks here;
#   - ends with its summary line, printed here unindented so that it stays in
#     the lane's log: demo: B's part of A+B: X% without the module, Y% with
#     pam_autogroup (ideal 50%);
#   - with NEAR=yes: Y lies within 5 points of 50 (the guest lanes, where
#     nothing else runs; the spinners on CPU 0, AG_DEMO_CPUS=0, as the
#     lanes' own share checks do); with NEAR=no: Y is above X (a shared host);
#   - leaves nothing behind: its users, its cgroup subtree (cgroupfs mode),
#     its users' slices, their runtime properties in
#     /run/systemd/system.control and their cgroups (systemd mode).
# AG_DEMO_SECONDS (the measuring time per scenario) is passed on.
demo_check() {
        local mode=$1 near=$2 out="$T/demo.out" rc pid line with without id ids
        if [ "$near" = yes ]; then
                AG_DEMO_CPUS=${AG_DEMO_CPUS-0} timeout 600 "$abs_top_srcdir/tools/demo" >"$out" 2>&1 &
        else
                timeout 600 "$abs_top_srcdir/tools/demo" >"$out" 2>&1 &
        fi
        pid=$!
        wait "$pid"
        rc=$?
        sed 's/^/#   /' "$out"
        check_eq "tools/demo exits 0" 0 "$rc"
        check "tools/demo ran in the $mode mode" grep -q "^pam_autogroup demo: .*, $mode mode," "$out"
        line=$(grep "^demo: B's part of A+B: " "$out" | tail -n1)
        [ -n "$line" ] && echo "$line"
        check "tools/demo ends with its summary line" grep -qE \
                "^demo: B's part of A\+B: [0-9]+\.[0-9]% without the module, [0-9]+\.[0-9]% with pam_autogroup \(ideal 50%\)\$" "$out"
        without=$(echo "$line" | sed -n 's/.*: \([0-9.]*\)% without.*/\1/p')
        with=$(echo "$line" | sed -n 's/.*, \([0-9.]*\)% with pam_autogroup.*/\1/p')
        if [ "$near" = yes ]; then
                check "B's part with pam_autogroup within 5 points of 50% (${with:-?}%)" \
                        awk -v y="${with:-0}" 'BEGIN { exit !(y >= 45 && y <= 55) }'
        else
                check "B's part grows with pam_autogroup (${without:-?}% -> ${with:-?}%)" \
                        awk -v x="${without:-100}" -v y="${with:-0}" 'BEGIN { exit !(y > x) }'
        fi
        # the demo's own pid names its users, cgroup subtree and scopes
        pid=$(sed -n 's/^session A (agdemo\([0-9]*\)a) .*/\1/p' "$out")
        check "the demo named its users" test -n "$pid"
        check_not "the demo's users are gone" getent passwd "agdemo${pid}a" "agdemo${pid}b"
        check "no agdemo-$pid cgroup left" sh -c "! ls -d /sys/fs/cgroup/agdemo-$pid /sys/fs/cgroup/*/agdemo-$pid 2>/dev/null | grep -q ."
        if [ "$mode" = systemd ]; then
                ids=$(sed -n 's|^   session [AB]: /user.slice/user-\([0-9]*\)\.slice/.*|\1|p' "$out")
                check "the demo named both users' slices" test "$(echo "$ids" | wc -w)" = 2
                for id in $ids; do
                        check "no runtime properties left for user-$id.slice" test ! -e "/run/systemd/system.control/user-$id.slice.d"
                        check "no user-$id.slice cgroup left" test ! -e "/sys/fs/cgroup/user.slice/user-$id.slice"
                        check "user-$id.slice inactive" sh -c "[ \"\$(systemctl show user-$id.slice -p ActiveState --value)\" = inactive ]"
                done
                check "no agdemo-$pid scope left" sh -c "! systemctl list-units --all --no-legend 'agdemo-$pid-*' | grep -q ."
        fi
}
