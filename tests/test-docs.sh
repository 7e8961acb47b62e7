#!/bin/bash
# The command blocks of README.md, the doc/ notes and the man pages' EXAMPLES
# are true. tests/doc-blocks.py extracts every block with the "doc-test:" mark
# before it (README.md and the EXAMPLES sections must mark every block) and
# this script does what the mark says:
#   run              run the commands (as root; a throw-away user for alice, a
#                    copy of conf/autogroup.conf for the installed config, a
#                    cgroup root of its own for gc): each must exit 0
#   conf             the block is a config: autogroup check must say OK
#   pam-line         each line, put in a runuser-l service of a private
#                    /etc/pam.d (unshare -m), groups a real runuser -l login
#   login-v1         "$ command" lines and their output, run in one such
#                    login on cgroup v1: the output must match (names, ids
#                    and times aside)
#   login-v1-hook    the same in the shell of a login with a terminal's
#                    leaves (leaves-notty 6: runuser -l has none), a
#                    setsid shell that ran the session hook's autogroup enter
#   status-v1        the same for autogroup status, in a login whose two
#                    setsid shells ran the session hook's autogroup enter,
#                    on cgroup v1 with cpuacct mounted apart
#   deb-build-deps   the apt-get line lists debian/control's Build-Depends
#   rpm-build-deps   the dnf line lists the spec's BuildRequires, and the
#                    tarball name is configure's
#   configure-install the configure options the document names exist, and
#                    the hook paths it names are where make install puts them
#   hook-line        the bash/zsh line names the packages' path of
#                    autogroup.bashrc and, pointed at the built snippet,
#                    sources it in an interactive bash
#   authselect-sed   the sed expression puts the line right after
#                    pam_systemd.so in a system-auth of authselect's layout
#   cite FILE grep:S ...  not run here: FILE (a test or a lane's script
#                    named in the build (Makefile.am and the */local.am it
#                    includes), or a CI script) runs the same
#                    command and contains each S
#   none REASON      not a command (a diagram, measured figures)
# and every relative link of README.md and doc/ leads to a file and heading;
# and every man page renders cleanly: no control bytes in the source (a
# literal form feed where "\f" was meant renders as "busR;"), and no warning
# from groff -ww (as man(1) runs it: preconv, -Tutf8).
# Nothing outside its own temp dir, users and cgroup root is changed.
. "${abs_top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
require_root
SRC="$abs_top_srcdir"
require_helper
command -v python3 >/dev/null || skip_all "no python3"
ROOT="agdoc-$$"
AG_CGROOTS="$CPU/$ROOT"
USR="${TAG}d"
add_user "$USR"
IU=$(id -u "$USR")
# The logins go through runuser -l with a private /etc/pam.d, on cgroup v1
HAVE_V1=1; NO_LOGIN=
if [ ! -f "$CPU/cpu.shares" ]; then NO_LOGIN="no cgroup v1 cpu hierarchy at $CPU"
elif ! command -v runuser >/dev/null || ! command -v unshare >/dev/null; then NO_LOGIN="no runuser or unshare"
# runuser is not instrumented: an ASan-built module aborts in its dlopen (.ci/sanitize)
elif ldd "$AG_MODULE" 2>/dev/null | grep -q libasan; then NO_LOGIN="the module is built with ASan, runuser is not"
fi
[ -z "$NO_LOGIN" ] || HAVE_V1=0
ACCT_APART=0
[ "$HAVE_V1" = 1 ] && [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ] && [ ! -e "$CPU/cpuacct.usage" ] && ACCT_APART=1
[ "$HAVE_V1" = 1 ] && [ "$ACCT_APART" = 0 ] && NO_LOGIN="cpuacct is not mounted apart from cpu"

mkdir -m 755 "$T/b" "$T/pamd"
python3 "$SRC/tests/doc-blocks.py" "$T/b" "$SRC/README.md" "$SRC"/doc/*.md \
        "$SRC/man/pam_autogroup.8" "$SRC/man/autogroup.conf.5" "$SRC/man/autogroup.1" ||
        { not_ok "tests/doc-blocks.py failed"; finish; }

CONF="$T/autogroup.conf"
install -m 644 "$SRC/conf/autogroup.conf" "$CONF"
pam_other "$T/pamd"
# service LINE: the runuser-l service with the documented session LINE, the
# module being the built one with this test's own root
service() {
        {
                echo "auth     sufficient pam_rootok.so"
                echo "auth     required   pam_deny.so"
                echo "account  required   pam_permit.so"
                echo "password required   pam_deny.so"
                echo "session  required   pam_permit.so"
                printf '%s\n' "$1" | sed "s|pam_autogroup\\.so|$AG_MODULE root=$ROOT|"
        } >"$T/pamd/runuser-l"
}
# commands BODY-FILE: the command lines of a block (after "$ " or "# " in a
# block that shows a prompt, else every line that is not a comment)
commands() {
        if grep -qE '^[$#] ' "$1"; then sed -n 's/^[$#] //p' "$1"; else grep -vE '^[[:space:]]*(#|$)' "$1"; fi
}
# norm: what may differ between the document and this run: user, uid, root,
# session and pane ids, CPU times, counts, the hierarchy's number, spacing
norm() {
        sed -E "s/$USR/alice/g; s/user-$IU\\b/user-1000/g; s|/$ROOT\\b|/autogroup|g;
                s#/(s|p)[0-9]+(-[0-9]+)?(/|\$| )#/SESSION\\3#g; s/(└─|├─|\`-|\\|-)(s|p)[0-9]+(-[0-9]+)? /\\1SESSION /;
                s/sid-[0-9]+/sid-N/g; s/^[0-9]+:/N:/;
                s/[0-9]+h [0-9]+min|[0-9]+min [0-9]+\\.[0-9]s|[0-9]+\\.[0-9]+s|[0-9]+ms/TIME/g;
                s/ +[0-9]+ +/ N /g; s/ +[0-9]+ +/ N /g; s/ +/ /g; s/ +\$//"
}
# in_login BODY-FILE OUT [PREFIX]: the block's commands in one runuser -l
# login, each output after a line "@@ N"; PREFIX runs first; $WRAP (such as
# setsid -w) runs the script's shell
in_login() {
        local body="$1" out="$2" pre="${3:-}" n=0 c script="$U/login.$$.sh"
        : >"$script"
        [ -n "$pre" ] && printf '%s\n' "$pre" >>"$script"
        while IFS= read -r c; do
                n=$((n + 1))
                c=$(printf '%s' "$c" | sed "s|^autogroup |LC_ALL=C.UTF-8 $HELPER |")
                printf 'echo "@@ %d"\n%s\n' "$n" "$c" >>"$script"
        done < <(commands "$body")
        printf '%s\n' "${POST:-}" >>"$script"
        chmod 644 "$script"
        within "runuser -l $USR -c '${WRAP:-} sh $script'" 2>&1 </dev/null | grep -v '^runuser: warning: cannot change directory' >"$out"
}
# expected BODY-FILE: the output lines the block shows, each after "@@ N"
expected() {
        awk '/^[$#] / { n++; print "@@ " n; next } { print }' "$1"
}
# compare WHAT EXPECTED ACTUAL: equal after norm
compare() {
        local d
        d=$(diff <(norm <"$2" | grep -v '^$') <(norm <"$3" | grep -v '^$'))
        if [ -z "$d" ]; then ok "$1"; else not_ok "$1: $(printf '%s' "$d" | tr '\n' '|')"; fi
}

PAM_LINE='session optional pam_autogroup.so'

do_run() {
        local where="$1" body="$2" c rc
        while IFS= read -r c; do
                c=$(printf '%s' "$c" | sed -E "s|/etc/security/autogroup\\.conf|$CONF|g; s/\\balice\\b/$USR/g;
                        s|^autogroup gc|autogroup --root $ROOT gc|; s|^autogroup |$HELPER |")
                timeout 60 bash -c "$c" >"$T/run.out" 2>&1; rc=$?
                if [ "$rc" = 0 ]; then ok "$where: $c"
                else not_ok "$where: $c (exit $rc: $(head -c 300 "$T/run.out" | tr '\n' '|'))"; fi
        done < <(commands "$body")
}

do_conf() {
        local where="$1" body="$2" f="$T/conf.$RANDOM.conf"
        install -m 644 "$body" "$f"
        if "$HELPER" check "$f" >"$T/check.out" 2>&1 && grep -q ': OK, ' "$T/check.out"; then ok "$where: autogroup check says OK"
        else not_ok "$where: autogroup check: $(tr '\n' '|' <"$T/check.out")"; fi
}

do_pam_line() {
        local where="$1" body="$2" l s
        [ "$HAVE_V1" = 1 ] || { skip "$where: the PAM line ($NO_LOGIN)"; return; }
        while IFS= read -r l; do
                [ -n "$l" ] || continue
                service "$l"
                within "runuser -l $USR -c 'echo S=\$AUTOGROUP_SESSION; grep -w cpu /proc/self/cgroup'" >"$T/pl.out" 2>&1 </dev/null
                s=$(sed -n 's/^S=//p' "$T/pl.out")
                if [ "${s%/*}" = "/$ROOT/user-$IU" ] && grep -qx "[0-9]*:cpu:$s/login" "$T/pl.out"; then
                        ok "$where: '$l' groups a runuser -l login ($s)"
                else not_ok "$where: '$l' did not group the login: $(tr '\n' '|' <"$T/pl.out")"; fi
        done <"$body"
}

do_login_v1() {
        local where="$1" body="$2"
        [ "$HAVE_V1" = 1 ] || { skip "$where: a login on cgroup v1 ($NO_LOGIN)"; return; }
        service "$PAM_LINE"
        in_login "$body" "$T/lv.out"
        expected "$body" >"$T/lv.exp"
        compare "$where: what a runuser -l login prints" "$T/lv.exp" "$T/lv.out"
}

do_login_v1_hook() {
        local where="$1" body="$2"
        [ "$HAVE_V1" = 1 ] || { skip "$where: a login on cgroup v1 ($NO_LOGIN)"; return; }
        printf '%s leaves-notty 6\n' "$USR" >"$T/hook.conf"
        chmod 644 "$T/hook.conf"
        service "session optional pam_autogroup.so conf=$T/hook.conf"
        # the script's shell leads its session, as a login shell does, and runs the hook's command
        WRAP="setsid -w" in_login "$body" "$T/lh.out" "$HELPER enter --pid \$\$ >/dev/null 2>&1"
        expected "$body" >"$T/lh.exp"
        compare "$where: what the shell of a runuser -l login that ran the session hook prints" "$T/lh.exp" "$T/lh.out"
}

do_status_v1() {
        local where="$1" body="$2"
        [ "$ACCT_APART" = 1 ] || { skip "$where: autogroup status as on cgroup v1 with cpuacct apart (${NO_LOGIN})"; return; }
        locale -a 2>/dev/null | grep -qiE '^c\.utf-?8$' || { skip "$where: autogroup status (no C.UTF-8 locale for its tree lines)"; return; }
        # runuser -l has no terminal: leaves-notty gives its login the leaves a terminal's would have
        printf '%s weight 400\n%s max 200%%\n%s leaves-notty 6\n' "$USR" "$USR" "$USR" >"$T/status.conf"
        chmod 644 "$T/status.conf"
        service "session optional pam_autogroup.so conf=$T/status.conf"
        # two terminals: setsid shells that run the hook's command, as a tab's shell does
        local tab="$HELPER enter >/dev/null 2>&1; exec sleep 60"
        POST='kill $p1 $p2; wait' in_login "$body" "$T/st.out" \
                "setsid sh -c '$tab' & p1=\$!; setsid sh -c '$tab' & p2=\$!
                 for i in \$(seq 300); do [ \$(cat $CPU\$AUTOGROUP_SESSION/leaf-*/cgroup.procs 2>/dev/null | wc -l) -ge 2 ] && break; sleep 0.1; done"
        expected "$body" >"$T/st.exp"
        compare "$where: autogroup status in a login with two terminals" "$T/st.exp" "$T/st.out"
}

# packages: the words after "install" on the line that has INSTALLER
pkgs_of() { grep -E "$1 install" "$2" | head -n1 | sed -E "s/.*$1 install//; s/#.*//" | tr -s ' ' '\n' | sed '/^$/d;/^-/d' | sort -u; }

do_deb_deps() {
        local where="$1" body="$2" bd missing p unknown=
        bd=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$SRC/debian/control" | sed '1s/^Build-Depends://; /^[A-Z]/d' |
                tr ',' '\n' | sed 's/([^)]*)//g; s/<[^>]*>//g; s/^ *//; s/ *$//; s/^debhelper-compat$/debhelper/' | sed '/^$/d' | sort -u)
        missing=$(comm -23 <(echo "$bd") <(pkgs_of apt-get "$body") | tr '\n' ' ')
        if [ -n "$bd" ] && [ -z "$missing" ]; then ok "$where: apt-get installs every Build-Depends ($(echo $bd))"
        else not_ok "$where: Build-Depends missing from the apt-get line: ${missing:-(none parsed)}"; fi
        if command -v apt-cache >/dev/null; then
                for p in $(pkgs_of apt-get "$body"); do apt-cache show -q "$p" >/dev/null 2>&1 || unknown="$unknown $p"; done
                check_eq "$where: apt knows every package of the line" "" "$unknown"
        fi
}

do_rpm_deps() {
        local where="$1" body="$2" br missing tarball
        br=$(sed -n 's/^BuildRequires:[[:space:]]*//p' "$SRC/rpm/pam_autogroup.spec" |
                sed 's/^pkgconfig(cmocka)$/libcmocka-devel/' | sort -u)
        missing=$(comm -23 <(printf '%s\nautoconf\nautomake\nlibtool\nrpm-build\n' "$br" | sort -u) <(pkgs_of dnf "$body") | tr '\n' ' ')
        check_eq "$where: dnf installs the spec's BuildRequires, autotools and rpm-build" "" "$missing"
        check "$where: autoreconf -fi before configure (a git checkout has no configure)" grep -q '^autoreconf -fi && ./configure' "$body"
        tarball=$(sed -n 's/^AC_INIT(\[\([^]]*\)\], \[\([^]]*\)\].*/\1-\2.tar.gz/p' "$SRC/configure.ac")
        check "$where: the tarball is $tarball" grep -q "rpmbuild -tb $tarball" "$body"
}

# make_var VAR: a variable of the build tree's Makefile, expanded (a make of
# its own: not the -w and jobserver of a make -j check that runs this test;
# its last line: a Makefile.am edited since the last make first remakes the
# Makefile, and that prints automake's command line)
make_var() { printf 'print-var:\n\t@echo $(%s)\n' "$1" | env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$abs_top_builddir" -f Makefile -f - print-var | tail -n1; }

# in_am GREP-OPTION PATTERN: the build's automake files (Makefile.am and the
# */local.am it includes) have PATTERN
in_am() { grep -q "$1" -- "$2" "$SRC/Makefile.am" "$SRC"/*/local.am; }

do_configure_install() {
        local where="$1" doc="$2" o help prefix
        help=$("$SRC/configure" --help 2>/dev/null)
        for o in $(grep -oE -- '--with(out)?-[a-z]+' "$doc" | sort -u); do
                check "$where: configure knows ${o}" grep -q -- "${o/--without-/--with-}" <<<"$help"
        done
        check "$where: configure's default for the hook is /etc/profile.d" grep -q 'default: /etc/profile.d' <<<"$help"
        if ! grep -q -- '--with-profiledir' "$abs_top_builddir/config.status"; then
                check_eq "$where: make install puts the hook in /etc/profile.d" /etc/profile.d "$(make_var profiledir)"
        else skip "$where: this build tree was configured with --with-profiledir=$(make_var profiledir)"; fi
        check "$where: the document names /etc/profile.d/autogroup-hook.sh" grep -q /etc/profile.d/autogroup-hook.sh "$doc"
        prefix=$(make_var prefix)
        if [ "$prefix" = /usr/local ]; then
                check "$where: the document names make install's $(make_var pkgdatadir)/autogroup.bashrc" \
                        grep -q "$(make_var pkgdatadir)/autogroup.bashrc" "$doc"
        else skip "$where: the build tree's prefix is $prefix, not configure's default"; fi
}

do_hook_line() {
        local where="$1" body="$2" p built="$T/autogroup.bashrc"
        p=$(sed -n 's/^\[ -r \([^ ]*\) \] && \. \1$/\1/p' "$body")
        check_eq "$where: the line sources the packages' snippet" /usr/share/pam_autogroup/autogroup.bashrc "$p"
        check "$where: make install puts it in \$(pkgdatadir), /usr/share/pam_autogroup with the packages' prefix" \
                in_am -x 'hookdir = $(pkgdatadir)'
        check "$where: the RPM installs it there" grep -q '^%{_datadir}/%{name}/autogroup.bashrc' "$SRC/rpm/pam_autogroup.spec"
        sed "s|@bindir@|$abs_top_builddir/helper|g; s|@pkgdatadir@|$T|g" "$SRC/conf/autogroup.bashrc.in" >"$built"
        out=$(bash --norc --noprofile -i -c "$(sed "s|$p|$built|g" "$body"); echo done=\${__autogroup_hook_done:-no}" 2>/dev/null </dev/null)
        check_eq "$where: the line, pointed at the built snippet, runs the hook in an interactive bash" "done=1" "$(tail -n1 <<<"$out")"
}

do_authselect_sed() {
        local where="$1" body="$2" expr f="$T/system-auth"
        check "$where: the block is valid sh" bash -n "$body"
        expr=$(sed -n "s/.*sed -i '\\([^']*\\)'.*/\\1/p" "$body")
        # the session part of authselect's sssd profile (system-auth)
        cat >"$f" <<'EOF'
session     optional                                     pam_keyinit.so revoke
session     required                                     pam_limits.so
-session    optional                                     pam_systemd.so
session     [success=1 default=ignore]                   pam_succeed_if.so service in crond quiet use_uid
session     required                                     pam_unix.so
EOF
        sed -i "$expr" "$f"
        check_eq "$where: the sed puts pam_autogroup right after pam_systemd" \
                "-session optional pam_systemd.so|session optional pam_autogroup.so" \
                "$(grep -A1 pam_systemd "$f" | tr -s ' ' | paste -sd'|')"
}

do_cite() {
        local where="$1" args="$2" file s
        file=${args%% *}
        check "$where: $file exists" test -f "$SRC/$file"
        case "$file" in tests/*)
                check "$where: $file is in the build's *.am (a test, or a script of a lane)" in_am -F "$file";;
        esac
        while IFS= read -r s; do
                [ -n "$s" ] || continue
                check "$where: $file has '$s'" grep -qF -- "$s" "$SRC/$file"
        done < <(case "$args" in *' grep:'*) printf '%s\n' "${args#* grep:}" | sed 's/ grep:/\n/g';; esac)
}

for m in "$SRC"/man/*.[1-8]; do
        w=${m#"$SRC/"}
        if grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$m"; then
                not_ok "$w: control bytes in the source (line $(grep -nP '[\x00-\x08\x0b-\x1f\x7f]' "$m" |
                        cut -d: -f1 | tr '\n' ' ')); an escape like \\fR was meant?"
        else ok "$w: no control bytes in the source"; fi
        if command -v groff >/dev/null; then
                LC_ALL=C.UTF-8 groff -k -Tutf8 -ww -z -man -t "$m" >"$T/groff.out" 2>&1
                check_eq "$w: groff -ww renders it without a warning" "" "$(head -n3 "$T/groff.out" | tr '\n' '|')"
        else skip "$w: groff not installed"; fi
done

if python3 "$SRC/tests/doc-blocks.py" --links "$SRC/README.md" "$SRC"/doc/*.md >"$T/links.out" 2>&1; then
        ok "every relative link of README.md and doc/ names a file and a heading that exist"
else not_ok "broken links: $(tr '\n' '|' <"$T/links.out")"; fi

for m in "$T"/b/*.mark; do
        n=${m%.mark}; where=$(cat "$n.where"); where=${where#"$SRC/"}
        doc=$SRC/${where%:*}
        IFS=';' read -ra directives <"$m"
        for d in "${directives[@]}"; do
                d=$(echo "$d" | sed 's/^ *//; s/ *$//')
                case "$d" in
                UNMARKED)        not_ok "$where: a block without a doc-test mark";;
                none\ ?*)        ok "$where: not a command (${d#none })";;
                run)             do_run "$where" "$n.body";;
                conf)            do_conf "$where" "$n.body";;
                pam-line)        do_pam_line "$where" "$n.body";;
                login-v1)        do_login_v1 "$where" "$n.body";;
                login-v1-hook)   do_login_v1_hook "$where" "$n.body";;
                status-v1)       do_status_v1 "$where" "$n.body";;
                deb-build-deps)  do_deb_deps "$where" "$n.body";;
                rpm-build-deps)  do_rpm_deps "$where" "$n.body";;
                configure-install) do_configure_install "$where" "$doc";;
                hook-line)       do_hook_line "$where" "$n.body";;
                authselect-sed)  do_authselect_sed "$where" "$n.body";;
                cite\ ?*)        do_cite "$where" "${d#cite }";;
                *)               not_ok "$where: unknown doc-test mark '$d'";;
                esac
        done
done

# README's behaviour table: every cell a claim the lanes can check
# (tests/behaviour.sh; tests/host/test-behaviour.sh and the guest lanes check them)
echo "# README.md: the behaviour table's grammar"
BEHAVIOUR_DOC="$SRC/README.md"
. "$SRC/tests/behaviour.sh"
behaviour_lint
finish
