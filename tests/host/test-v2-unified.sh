#!/bin/bash
# The cgroup v2 code path on this host's cgroup2 mount (/sys/fs/cgroup/unified),
# which has no cpu controller: delegation, the login/ leaf, migration between
# the user's own leaves, and cleanup, driven through lib/cgroup/session.c (the code
# the module calls). The module refuses a hierarchy without cpu, so PAM is not
# in this loop; the full v2 lane with cpu runs in the QEMU guest.
#
# On a systemd host with pure cgroup v2 (no /sys/fs/cgroup/unified) the test
# runs below a delegated scope of its own instead (systemd-run --scope -p
# Delegate=yes), in a cgroup namespace rooted there with a private cgroup2
# mount as $UNIFIED: the same paths and rules, without touching systemd's
# tree; the test's own shell sits in a leaf "self" beside <root>.
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
if [ ! -f "$UNIFIED/cgroup.procs" ] && [ -z "${AG_V2_DELEGATED:-}" ] && [ -d /run/systemd/system ] &&
   [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] && command -v systemd-run >/dev/null &&
   command -v unshare >/dev/null; then
        rm -rf "$T"; trap - EXIT
        exec systemd-run --quiet --scope -p Delegate=yes --unit="agtest-v2-$$" -- \
                unshare -m -C --propagation private env AG_V2_DELEGATED=1 bash "$0" "$@"
fi
if [ -n "${AG_V2_DELEGATED:-}" ]; then
        UNIFIED="/run/agtest-v2-$$"
        trap 'ag_cleanup; umount -l "$UNIFIED"; rmdir "$UNIFIED"' EXIT
        mkdir "$UNIFIED" && mount -t cgroup2 cgroup2 "$UNIFIED" && mkdir "$UNIFIED/self" &&
                echo $$ >"$UNIFIED/self/cgroup.procs" ||
                skip_all "cannot mount the delegated scope's cgroup2 at $UNIFIED"
        echo "# cgroup v2 below a delegated scope of systemd (its own cgroup namespace), mounted at $UNIFIED"
fi
[ -f "$UNIFIED/cgroup.procs" ] && [ "$(stat -f -c %T "$UNIFIED")" = cgroup2fs ] ||
        skip_all "no cgroup2 mount at $UNIFIED"

ROOT="agv2-$$"
CG="$UNIFIED/$ROOT"
AG_CGROOTS="$CG"
new_user a; new_user b
lib() { local u="$1"; shift; "$AGDRV" --lib "$UNIFIED" "$ROOT" "$u" delegate=yes "$@"; }

lib "$UA" open env cgroup wait-file "$T/a.go" close cgroup >"$T/a.out" 2>&1 &
PA=$!; track_pid $PA
lib "$UB" open env cgroup wait-file "$T/b.go" close >"$T/b.out" 2>&1 &
PB=$!; track_pid $PB
wait_for "$T/a.out" '^cgroup=' && wait_for "$T/b.out" '^cgroup='
S=$(val AUTOGROUP_SESSION a); SB=$(val AUTOGROUP_SESSION b)

echo "# layout and the leaf rule"
check "session opened" grep -q '^open=0' "$T/a.out"
check_eq "caller sits in the login/ leaf" "$S/login" "$(val cgroup a)"
check_eq "the session itself holds no process" "" "$(cat "$UNIFIED$S/cgroup.procs")"
check_eq "the user group holds no process" "" "$(cat "$UNIFIED/$ROOT/user-$IA/cgroup.procs")"

echo "# delegation (cgroup v2 rules)"
check_eq "session dir owned by the user" "$UA" "$(owner "$UNIFIED$S")"
check_eq "session cgroup.procs owned by the user" "$UA" "$(owner "$UNIFIED$S/cgroup.procs")"
check_eq "session cgroup.threads owned by the user" "$UA" "$(owner "$UNIFIED$S/cgroup.threads")"
check_eq "session cgroup.subtree_control owned by the user" "$UA" "$(owner "$UNIFIED$S/cgroup.subtree_control")"
check_eq "session cgroup.max.descendants stays root's" root "$(owner "$UNIFIED$S/cgroup.max.descendants")"
check_eq "session cgroup.max.descendants is 128" 128 "$(cat "$UNIFIED$S/cgroup.max.descendants")"
check_eq "user group owned by root" root "$(owner "$UNIFIED/$ROOT/user-$IA")"
check_eq "user group cgroup.procs owned by root" root "$(owner "$UNIFIED/$ROOT/user-$IA/cgroup.procs")"

echo "# migration as the user, inside and outside the delegated subtree"
check "user can make a leaf in own session" as_user "$UA" "mkdir $UNIFIED$S/tab1"
# another login of the same user opens and closes: its sweep leaves the live
# session's fresh, still empty leaf alone
"$AGDRV" --lib "$UNIFIED" "$ROOT" "$UA" delegate=yes open close >/dev/null 2>&1
check "another login's sweep keeps a live session's empty leaf" test -d "$UNIFIED$S/tab1"
setpriv --reuid="$UA" --regid="$(id -g "$UA")" --init-groups -- sleep 300 &
SP=$!; track_pid $SP
echo "$SP" >"$UNIFIED$S/login/cgroup.procs"
check "root placed a user process in login/" grep -q "^0::$S/login\$" "/proc/$SP/cgroup"
check "user moves own process from login/ to own leaf" as_user "$UA" "echo $SP > $UNIFIED$S/tab1/cgroup.procs"
check "and it is there" grep -q "^0::$S/tab1\$" "/proc/$SP/cgroup"
check "user moves it back into login/" as_user "$UA" "echo $SP > $UNIFIED$S/login/cgroup.procs"
check_not "user cannot move it into the user group" as_user "$UA" "echo $SP > $UNIFIED/$ROOT/user-$IA/cgroup.procs"
check_not "user cannot move it into <root>" as_user "$UA" "echo $SP > $CG/cgroup.procs"
check_not "user cannot move it to the root cgroup" as_user "$UA" "echo $SP > $UNIFIED/cgroup.procs"
check_not "user cannot move it into another user's session" as_user "$UA" "echo $SP > $UNIFIED$SB/login/cgroup.procs"
check_not "user cannot raise cgroup.max.descendants" as_user "$UA" "echo 100000 > $UNIFIED$S/cgroup.max.descendants"
check_not "user cannot make groups in another user's session" as_user "$UA" "mkdir $UNIFIED$SB/x"
check_not "user cannot make groups in the user group" as_user "$UA" "mkdir $UNIFIED/$ROOT/user-$IA/x"
kill "$SP"; wait "$SP" 2>/dev/null

echo "# cleanup at close"
touch "$T/a.go" "$T/b.go"; wait "$PA" "$PB"
check "close succeeded" grep -q "^close=0" "$T/a.out"
check_eq "caller moved back to where it came from" "$(grep '^0::' /proc/self/cgroup | cut -d: -f3)" "$(sed -n 's/^cgroup=//p' "$T/a.out" | tail -n1)"
check "session and its leaves removed" test ! -e "$UNIFIED$S"
check "user groups removed" test ! -e "$UNIFIED/$ROOT/user-$IA"
check_eq "nothing left below the test root" "" "$(ls -d "$CG"/user-* 2>/dev/null)"
finish
