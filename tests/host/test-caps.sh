#!/bin/bash
# Caps and names that hold against the user, through real libpam sessions
# (tests/host/agdrv) on the real cgroup v1 cpu hierarchy. Every attack runs
# as the unprivileged user:
#   1. delegate=yes is refused on cgroup v1: the user can make no sub-group
#      (nor a chain of 4,100) to hold a quota; adding a cap applies at once;
#   2. lowering a cap (50% -> 10%);
#   3. raising and removing caps;
#   4. pools: pool:NAME max against a member's attack and a member's own cap;
#   5. status: 9,000 groups in one user's session do not hide another user's
#      session; --json escapes control, format (Cf) and noncharacter code
#      points and every invalid UTF-8 byte (\udcXX), and the text prints
#      none of them raw (groups made by root in a test root);
#   6. close reads no more of a session directory than its budget;
#   7. a caller whose cgroup path is too long for /proc/PID/cgroup is never
#      moved to the root cgroup at close;
#   8. rules match the account's own name whatever case PAM_USER has (a
#      case-insensitive NSS module, tests/host/libnss_agci.so.2, loaded
#      through a private nsswitch.conf in a private mount namespace).
# AG_MODULE and AG_HELPER select the module and helper under test (an older
# build shows which checks it fails).
. "${abs_top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_root
require_v1_cpu cpu.cfs_quota_us
NSSDIR="$abs_top_builddir/tests/host"
require_helper

test_root agtest
test_outside                    # OUT: where section 7's caller comes from
mkdir -p "$OUT"
N250=$(printf 'd%.0s' $(seq 250))
# the deep tree of section 7 (and a chain of section 1, should a build let
# the user make it) are too long for find's paths: removed by cd
rm_deep() {
        (
                cd "$1" 2>/dev/null || exit 0
                d=0
                while [ -d "$2" ]; do cd "$2" || break; d=$((d + 1)); done
                while [ "$d" -gt 0 ]; do cd .. && rmdir "$2" 2>/dev/null; d=$((d - 1)); done
        ) 2>/dev/null
}
rm_chains() { for s in "$CG"/user-*/*/; do rm_deep "$s" c; done; }
trap 'rm_deep "$OUT" "$N250"; rm_chains; ag_cleanup' EXIT
start_syslog || true

new_user a; new_user b; new_user p; new_user q
add_group "${TAG}g"; new_user n "${TAG}g"
# conf LINE...: the configuration, one rule an argument after "* weight 100"
conf() { write_conf "* weight 100" "$@"; }
conf
pam_other
# delegate=yes: before, the user's own sub-groups in their session were what
# these attacks used; on cgroup v1 the module refuses it (one log line), so
# the attacks fail and every cap the administrator sets applies at the next login
pam_service agh "root=$ROOT conf=$CONF delegate=yes"
pam_service aghs "root=$ROOT conf=$CONF delegate=yes strict"
SVC=agh; BOUND=120              # drv and bg (lib.sh)
rd() { cat "$1" 2>/dev/null || echo missing; }
# a user process that tries to keep a sub-group of its session with the
# given quota (the attack), writes what came of it to $R and stays
HOG='S=$(grep :cpu: /proc/self/cgroup | cut -d: -f3); S=${S%/login}; if mkdir '"$CPU"'$S/hog 2>/dev/null && echo $Q > '"$CPU"'$S/hog/cpu.cfs_quota_us && echo $$ > '"$CPU"'$S/hog/cgroup.procs; then echo made > $R; else echo refused > $R; fi; exec sleep 600'
# chain N: as the user, a chain of N nested groups in their session with a quota
# at the bottom (the attack that held off caps with delegate=yes on v1); prints
# how many levels were made
CHAIN='S=$(grep :cpu: /proc/self/cgroup | cut -d: -f3); S=${S%/login}; cd '"$CPU"'$S || exit; i=0; while [ $i -lt $N ] && mkdir c 2>/dev/null && cd c; do i=$((i + 1)); done; [ $i -gt 0 ] && echo 1000000 > cpu.cfs_quota_us; echo $i > $R'

echo "# 1. delegate=yes on v1: refused, the session stays root's; adding a cap applies at the next login"
bg a "$UA" spawn-user "Q=1000000 R=$U/a.ready; $HOG" run-user "N=4100 R=$U/a.chain; $CHAIN"
SA=$(val AUTOGROUP_SESSION a)
wait_for "$U/a.ready" . && wait_for "$U/a.chain" '^[0-9]'
check_eq "the session directory is root's (delegate=yes refused on v1)" root "$(stat -c %U "$CPU$SA" 2>/dev/null)"
log_has "one log line says so" "delegate=yes refused on cgroup v1 .*$SA of $UA stays root's"
check_eq "the user cannot make a sub-group with its own quota" refused "$(cat "$U/a.ready")"
check_eq "the user cannot build a chain of nested groups (0 of 4,100 levels)" 0 "$(cat "$U/a.chain" 2>/dev/null)"
check_eq "the session holds login/ and root's leaves, nothing else" "leaf-1 leaf-2 leaf-3 leaf-4 leaf-5 leaf-6 login" \
        "$(find "$CPU$SA" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
conf "$UA max 20%"
drv "$UA" open cgroup close >"$T/a1.out" 2>&1
check "the next login is grouped" grep -q "^cgroup=/$ROOT/user-$IA/" "$T/a1.out"
check_eq "the user group's quota is 20% (20000 of 100000)" "20000 100000" \
        "$(rd "$CG/user-$IA/cpu.cfs_quota_us") $(rd "$CG/user-$IA/cpu.cfs_period_us")"
check_not "no log line says the cap was refused" grep -q "cannot set the user group's cpu policy for $UA" "$SYSLOG"

echo "# 2. lowering a cap (50% -> 10%) while the user's session runs"
conf "$UA max 50%"
drv "$UA" open close >/dev/null 2>&1
check_eq "the cap is raised to 50%" 50000 "$(rd "$CG/user-$IA/cpu.cfs_quota_us")"
check_not "the user cannot write a quota in their session" as_user "$UA" "echo 50000 > $CPU$SA/login/cpu.cfs_quota_us"
check_not "  nor make a group there to hold one" as_user "$UA" "mkdir $CPU$SA/x"
conf "$UA max 10%"
drv "$UA" open cgroup close >"$T/a2.out" 2>&1
check "the next login is grouped" grep -q "^cgroup=/$ROOT/user-$IA/" "$T/a2.out"
check_eq "the user group is at 10% (10000)" 10000 "$(rd "$CG/user-$IA/cpu.cfs_quota_us")"
# behaviour: two spinners in the session's login/ for a second get throttled by the user group
t0=$(sed -n 's/^nr_throttled //p' "$CG/user-$IA/cpu.stat")
spin=""
for k in 1 2; do
        (echo "$BASHPID" >"$CPU$SA/login/cgroup.procs" && as_user "$UA" "exec timeout 1 sh -c 'while :; do :; done'") &
        spin="$spin $!"; track_pid $!
done
for p in $spin; do wait "$p"; done
t1=$(sed -n 's/^nr_throttled //p' "$CG/user-$IA/cpu.stat")
check "two spinners in the session are throttled by the user group's cap (nr_throttled $t0 -> $t1)" \
        test "${t1:-0}" -gt "${t0:-0}"

echo "# 3. raising and removing a cap"
conf "$UA max 40%"
drv "$UA" open close >/dev/null 2>&1
check_eq "raised 10% -> 40%" "40000 100000" \
        "$(rd "$CG/user-$IA/cpu.cfs_quota_us") $(rd "$CG/user-$IA/cpu.cfs_period_us")"
conf
drv "$UA" open close >/dev/null 2>&1
check_eq "removed: no quota" "-1 100000" \
        "$(rd "$CG/user-$IA/cpu.cfs_quota_us") $(rd "$CG/user-$IA/cpu.cfs_period_us")"
closed a

echo "# 4. pools: pool:NAME max against members' own caps and attacks (strict module)"
PCONF=("$UP pool tp$$" "$UQ pool tp$$")
PG="$CG/pool-tp$$"
conf "${PCONF[@]}"
bg p "$UP" spawn-user "Q=1000000 R=$U/p.ready; $HOG"
SP=$(val AUTOGROUP_SESSION p)
wait_for "$U/p.ready" .
check_eq "member p cannot make a sub-group with quota 1000000" refused "$(cat "$U/p.ready")"
conf "${PCONF[@]}" "pool:tp$$ max 30%"
SVC=aghs drv "$UQ" open cgroup close >"$T/q1.out" 2>&1
check "member q's login succeeds under strict" grep -q "^open=PAM_SUCCESS" "$T/q1.out"
check "and is grouped in the pool" grep -q "^cgroup=/$ROOT/pool-tp$$/user-$IQ/" "$T/q1.out"
check_eq "pool:tp max 30% is applied (30000)" 30000 "$(rd "$PG/cpu.cfs_quota_us")"
conf "${PCONF[@]}" "pool:tp$$ max 10%"
SVC=aghs drv "$UQ" open cgroup close >"$T/q2.out" 2>&1
check "member q's next login is grouped in the pool" grep -q "^cgroup=/$ROOT/pool-tp$$/user-$IQ/" "$T/q2.out"
check_eq "lowering the pool cap keeps the pool capped: 10000" 10000 "$(rd "$PG/cpu.cfs_quota_us")"
check_eq "member p's running session stays below the pool: its user group is under the pool" \
        "/$ROOT/pool-tp$$/user-$IP" "$(dirname "$SP")"
# a cap the kernel refuses: above the pool's own
conf "${PCONF[@]}" "pool:tp$$ max 10%" "$UQ max 200%"
SVC=aghs drv "$UQ" open cgroup close >"$T/q3.out" 2>&1
check "a user cap above the pool's (refused by the kernel): the login still succeeds under strict" \
        grep -q "^open=PAM_SUCCESS" "$T/q3.out"
check "  and is grouped in the pool" grep -q "^cgroup=/$ROOT/pool-tp$$/user-$IQ/" "$T/q3.out"
log_has "  with one log line" "cannot set the user group's cpu policy for $UQ .*the session is grouped"
check_eq "  the pool keeps its cap" 10000 "$(rd "$PG/cpu.cfs_quota_us")"
# a pool cap lowered below a member's own (root's) cap: the kernel refuses a
# quota below a child's, the member's cap gives way
conf "${PCONF[@]}" "pool:tp$$ max 50%" "$UP max 40%"
SVC=aghs drv "$UP" open close >/dev/null 2>&1
check_eq "member p's own cap 40% under the pool's 50%" "40000 50000" \
        "$(rd "$PG/user-$IP/cpu.cfs_quota_us") $(rd "$PG/cpu.cfs_quota_us")"
conf "${PCONF[@]}" "pool:tp$$ max 20%" "$UP max 40%"
SVC=aghs drv "$UQ" open cgroup close >"$T/q4.out" 2>&1
check_eq "the pool cap lowered to 20% below p's 40% applies at q's next login" 20000 "$(rd "$PG/cpu.cfs_quota_us")"
check_eq "  p's own cap above it gave way (no quota: the pool's applies)" -1 "$(rd "$PG/user-$IP/cpu.cfs_quota_us")"
closed p

echo "# 5. status: 9,000 groups in one user's session; format characters and invalid UTF-8 in names"
bg b "$UB" spawn-user "exec sleep 600"
SB=$(val AUTOGROUP_SESSION b)
# odd names (as root: no user can make a group in a session on v1): C1, bidi
# controls, zero-width and other format characters (Cf), tag characters,
# noncharacters, invalid UTF-8 bytes, a name that differs from another only
# in an invalid byte, and one holding a backslash and a quote
ODD=("c1-$(printf '\302\233')" "rlo-$(printf '\342\200\256')x" "lri-$(printf '\342\201\246')"
     "zwsp-$(printf '\342\200\213')" "bom-$(printf '\357\273\277')" "shy-$(printf '\302\255')"
     "alm-$(printf '\330\234')" "mvs-$(printf '\341\240\216')" "wj-$(printf '\342\201\240')"
     "tag-$(printf '\363\240\200\201\363\240\201\241')" "nc-$(printf '\357\277\276')" "ncf-$(printf '\357\267\220')"
     "ncp-$(printf '\364\217\277\277')" "bad-$(printf '\377')" "bad-$(printf '\376')" "ctl-$(printf '\r\033')"
     'bs-\"q')
for n in "${ODD[@]}"; do mkdir "$CPU$SB/$n"; done
# with debug, the module logs the cgroup of a caller inside another user's
# session: a path with CR and ESC goes into the log escaped
pam_service aghd "root=$ROOT conf=$CONF debug"
(echo "$BASHPID" >"$CPU$SB/ctl-"$'\r\033'/cgroup.procs && exec timeout 60 "$AGDRV" --pam "$T" aghd "$UA" open close) \
        >"$T/ctl.out" 2>&1
check "a login from a group named with CR and ESC opened" grep -q '^open=PAM_SUCCESS' "$T/ctl.out"
log_has "debug: the caller's path is logged with CR and ESC escaped" \
        "from inside $CPU$SB/ctl-\\\\x0d\\\\x1b of uid $IB"
check_not "  no raw CR or ESC in the log" grep -qaP '[\r\x1b]' "$SYSLOG"
BOUND=300 drv "$UA" open run-user "S=\$(grep :cpu: /proc/self/cgroup | cut -d: -f3); echo \${S%/login} > $U/m.path" \
        touch "$T/m.made" wait-file "$T/m.go" close >"$T/m.out" 2>&1 &
PID_m=$!; track_pid $PID_m
for _ in $(seq 600); do [ -e "$T/m.made" ] && break; sleep 0.1; done
SM=$(cat "$U/m.path" 2>/dev/null)
(cd "$CPU$SM" && seq 9000 | sed 's/^/x/' | xargs mkdir)
check_eq "user A's session holds 9,000 groups (made by root)" 9000 \
        "$(find "$CPU$SM" -mindepth 1 -maxdepth 1 -type d -name 'x*' | wc -l)"
timeout 120 "$HELPER" --root "$ROOT" status >"$T/st.txt" 2>&1
check "status (text) still lists user B's group" grep -q "user-$IB" "$T/st.txt"
check "  and user B's session" grep -q "${SB##*/}" "$T/st.txt"
timeout 120 "$HELPER" --root "$ROOT" status --json >"$T/st.json" 2>&1
check "status --json lists user B's session" grep -qF "\"$SB\"" "$T/st.json"
# user B's own groups (status --user), where the odd names are listed
timeout 120 "$HELPER" --root "$ROOT" status --user "$UB" --json >"$T/stb.json" 2>&1
timeout 120 "$HELPER" --root "$ROOT" status --user "$UB" >"$T/stb.txt" 2>&1
check "status --user $UB --json lists the groups made there" grep -qF "\"$SB/c1-" "$T/stb.json"
# every byte of the output is printable ASCII (or a newline): nothing raw
check_not "status --json prints nothing but printable ASCII" grep -qaP '[^\x20-\x7e]' "$T/stb.json"
check_not "status (text) prints nothing but printable ASCII and the tree's own drawing" \
        sh -c "LC_ALL=C sed 's/\xe2\x94[\x80-\xbf]//g' '$T/stb.txt' | grep -qaP '[^\x20-\x7e]'"
check "  it escapes C1 and bidi controls as \\u009b, \\u202e, \\u2066" \
        sh -c "grep -qF 'c1-\\u009b' '$T/stb.json' && grep -qF 'rlo-\\u202ex' '$T/stb.json' && grep -qF 'lri-\\u2066' '$T/stb.json'"
check "  format characters as \\u200b, \\ufeff, \\u00ad, \\u061c, \\u180e, \\u2060" \
        sh -c "grep -qF 'zwsp-\\u200b\"' '$T/stb.json' && grep -qF 'bom-\\ufeff\"' '$T/stb.json' && grep -qF 'shy-\\u00ad\"' '$T/stb.json' && grep -qF 'alm-\\u061c\"' '$T/stb.json' && grep -qF 'mvs-\\u180e\"' '$T/stb.json' && grep -qF 'wj-\\u2060\"' '$T/stb.json'"
check "  tag characters as surrogate pairs (U+E0001 U+E0061: \\udb40\\udc01\\udb40\\udc61)" \
        grep -qF 'tag-\udb40\udc01\udb40\udc61"' "$T/stb.json"
check "  noncharacters U+FFFE, U+FDD0, U+10FFFF as \\ufffe, \\ufdd0, \\udbff\\udfff" \
        sh -c "grep -qF 'nc-\\ufffe\"' '$T/stb.json' && grep -qF 'ncf-\\ufdd0\"' '$T/stb.json' && grep -qF 'ncp-\\udbff\\udfff\"' '$T/stb.json'"
check "  each invalid byte as \\udcXX (0xff, 0xfe: two names, two strings)" \
        sh -c "grep -qF 'bad-\\udcff\"' '$T/stb.json' && grep -qF 'bad-\\udcfe\"' '$T/stb.json'"
check "  CR and ESC as \\u000d\\u001b" grep -qF 'ctl-\u000d\u001b"' "$T/stb.json"
check "status --json is valid JSON" python3 -c "import json,sys; json.load(open('$T/st.json')); json.load(open('$T/stb.json'))"
check "status --json gives back every name byte for byte (surrogateescape)" python3 -c "
import json, os, sys
t = json.load(open('$T/stb.json'))['tree']
names = set()
def walk(n):
    names.add(n['name'].encode('utf-8', 'surrogateescape')); [walk(c) for c in n['children']]
walk(t)
want = set(os.listdir(os.fsencode('$CPU$SB'))) - {b'login'}
want = {w for w in want if os.path.isdir(os.path.join(os.fsencode('$CPU$SB'), w))}
sys.exit(0 if want <= names else 1)"

echo "# 6. close reads no more of the session directory than its budget"
# the close of user A's session (9,000 empty groups) under strace
spid=$(pgrep -P "$PID_m" -x timeout || echo "$PID_m")
apid=$(pgrep -P "$spid" -x agdrv || true)
if command -v strace >/dev/null && [ -n "$apid" ]; then
        strace -f -y -e trace=getdents64 -o "$T/m.strace" -p "$apid" 2>/dev/null &
        STRACE=$!
        sleep 1
        closed m
        wait "$STRACE" 2>/dev/null
        n=$(grep -cF "$CPU$SM>" "$T/m.strace")
        echo "# getdents64 calls on the session directory during close: $n (9,000 entries need about 9)"
        check "close read the session directory in at most 3 getdents64 calls ($n)" test "$n" -le 3
else
        closed m
        skip "close budget (no strace, or agdrv not found)"
fi
check "close of that session returned PAM_SUCCESS" grep -q '^close=PAM_SUCCESS' "$T/m.out"
for n in "${ODD[@]}"; do rmdir "$CPU$SB/$n"; done
closed b

echo "# 7. a caller whose cgroup path is longer than /proc/PID/cgroup shows"
(
        cd "$OUT" || exit 1
        for _ in $(seq 18); do mkdir "$N250" && cd "$N250" || exit 1; done
        echo $BASHPID >cgroup.procs && exec timeout 60 "$AGDRV" --pam "$T" agh "$UB" open cgroup close cgroup
) >"$T/deep.out" 2>&1
check "the login from the deep group opened" grep -q '^open=PAM_SUCCESS' "$T/deep.out"
check "it was grouped" grep -q "^cgroup=/$ROOT/user-$IB/" "$T/deep.out"
check_not "close did not move the caller to the root cgroup" grep -qx 'cgroup=/' "$T/deep.out"
log_has "one log line says the caller stays" "cannot tell which cgroup this process came from"
SD=$(sed -n 's/^cgroup=//p' "$T/deep.out" | head -n1); SD=${SD%/login}
# the close's watcher was forked in the session with the caller: it leaves it
# (or it would wait on itself until it gives up) and removes the session once
# the caller has gone; it gives up after 60 s
check "once the caller has exited, the close's watcher removes the session it stayed in" \
        sh -c "for i in \$(seq 900); do [ -e '$CPU$SD' ] || exit 0; sleep 0.1; done; exit 1"
drv "$UB" open close >/dev/null 2>&1
check_not "nothing of it is left after the next login" test -d "$CPU$SD"

echo "# 8. rules match the account's own name whatever case PAM_USER has"
UPPER=$(echo "$UN" | tr a-z A-Z)
conf "$UN max 15%" "@${TAG}g weight 50"
sed 's/^passwd:.*/passwd: files agci/' /etc/nsswitch.conf >"$T/nsswitch.conf"
grep -q '^passwd:' "$T/nsswitch.conf" || echo 'passwd: files agci' >>"$T/nsswitch.conf"
# in a private mount namespace: the host's /etc/nsswitch.conf is untouched
ns() { unshare -m sh -c "mount --bind '$T/nsswitch.conf' /etc/nsswitch.conf && LD_LIBRARY_PATH='$NSSDIR' exec \"\$@\"" ns "$@"; }
check_eq "the private NSS answers $UPPER with account $UN" "$UN" "$(ns getent passwd "$UPPER" | cut -d: -f1)"
ns timeout -k 5 120 "$AGDRV" --pam "$T" agh "$UPPER" open cgroup touch "$T/n.open" wait-file "$T/n.go" close \
        >"$T/n.out" 2>&1 &
PID_n=$!; track_pid $PID_n
for _ in $(seq 200); do [ -e "$T/n.open" ] && break; sleep 0.05; done
check "login as $UPPER is grouped as uid $IN" grep -q "^cgroup=/$ROOT/user-$IN/" "$T/n.out"
check_eq "the rule for $UN applies: max 15%" 15000 "$(rd "$CG/user-$IN/cpu.cfs_quota_us")"
check_eq "the @group rule applies: weight 50 (shares 512)" 512 "$(rd "$CG/user-$IN/cpu.shares")"
touch "$T/n.go"; wait "$PID_n"
log_has "the log line names both" "PAM user $UPPER is account $UN"
ns "$HELPER" explain --conf "$CONF" "$UPPER" >"$T/explain.out" 2>&1
check "autogroup explain $UPPER says which account it is" grep -q "$UPPER is account $UN" "$T/explain.out"
check "  and shows max 15% from the rule for $UN" grep -qE "max.*15%" "$T/explain.out"

finish
