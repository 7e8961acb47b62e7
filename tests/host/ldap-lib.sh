# Shared helpers for the directory lanes (sourced after tests/lib.sh): a
# throw-away slapd on 127.0.0.1, and a private mount namespace whose
# /etc/nsswitch.conf says "files ldap" (a private nslcd: tests/host/test-ldap.sh)
# or "files sss" (a private sssd: tests/host/test-sssd.sh), the tests running
# inside it.
#
# Nothing of the host's is used or changed: slapd listens on a free port with
# a scratch database under $T; the NSS daemon reads a private config and keeps
# its sockets, caches and pid file in private directories bind-mounted over
# the fixed paths its NSS module talks to (nslcd: /run/nslcd, or a tmpfs on
# /run when the host has no /run/nslcd; sssd: /etc/sssd, /var/lib/sss,
# /var/log/sssd and a tmpfs on /run). The host's nsswitch.conf, the daemons'
# configs and any host daemon stay untouched. Only the processes started here
# are stopped, by the PIDs kept here.

LD="$T/ldap"
LD_SLAPD_PID=""
LD_NSLCD_PID=""
LD_HOLDER_PID=""
LD_LOGCAP_PID=""
LD_NS=""                # the lane's mount namespace (readlink of /proc/PID/ns/mnt)
LD_NS_FD=""             # an fd on it, so that its number stays ours
LD_STARTED=""           # PID:start-time of every process the lane started

# ldap_lane: the names every directory lane uses: its cgroup root (cleaned
# up by ag_cleanup), and the host's nsswitch.conf as it was
ldap_lane() {
        test_root agtest
        NSS_BEFORE=$(sha256sum /etc/nsswitch.conf)
}

# ld_track PID: remember a process the lane started, with its start time
# (pid_start, tests/lib.sh), for ldap_leftovers
# ld_ready PID STEP LOG COMMAND...: wait until COMMAND succeeds (100 tries,
# STEP seconds apart) while the daemon PID lives; else LOG to stderr, fail
ld_ready() {
        local pid="$1" step="$2" log="$3" _
        shift 3
        for _ in $(seq 100); do
                "$@" && return 0
                kill -0 "$pid" 2>/dev/null || break
                sleep "$step"
        done
        cat "$log" >&2
        return 1
}
ld_track() {
        local t
        t=$(pid_start "$1")
        [ -z "$t" ] || LD_STARTED="$LD_STARTED $1:$t"
}

# ldap_leftovers: prints the PID of every process the lane started that still
# runs (the same PID with the same start time: a PID the kernel has reused
# for someone else's process is not counted), and of any process left in
# the lane's mount namespace. Empty after ldap_cleanup.
ldap_leftovers() {
        local e p
        for e in $LD_STARTED; do
                p=${e%%:*}
                [ "$(pid_start "$p")" != "${e#*:}" ] || exited "$p" || echo "$p"
        done
        ldap_ns_pids
}

# ldap_private_syslog: when the host's /dev/log is taken (another test's
# capture, or a real syslog), capture this lane's log lines anyway: a private
# receiver whose socket is bind-mounted over /dev/log in the namespace.
# Call before ldap_start_ns.
ldap_private_syslog() {
        have_syslog && return 0
        [ -S /dev/log ] || return 1
        "$LOGCAP" "$LD/log.sock" "$SYSLOG" >"$LD/logcap.out" 2>&1 &
        LD_LOGCAP_PID=$!
        ld_track "$LD_LOGCAP_PID"
        for _ in $(seq 100); do grep -q ready "$LD/logcap.out" 2>/dev/null && return 0; sleep 0.05; done
        return 1
}
# ldap_have_log: this lane's log lines are captured in $SYSLOG
ldap_have_log() { have_syslog || [ -n "$LD_LOGCAP_PID" ]; }

# ldap_missing_server: prints why no throw-away directory can run here (empty when it can)
ldap_missing_server() {
        local p
        for p in slapd ldapadd ldapsearch unshare nsenter; do
                command -v "$p" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$p" >/dev/null 2>&1 ||
                        { echo "$p not installed (packages slapd, ldap-utils, util-linux)"; return; }
        done
        [ -d /etc/ldap/schema ] || { echo "no /etc/ldap/schema (package slapd)"; return; }
}

# ldap_missing: prints why the nslcd lane cannot run here (empty when it can)
ldap_missing() {
        local why
        why=$(ldap_missing_server)
        [ -z "$why" ] || { echo "$why"; return; }
        command -v nslcd >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v nslcd >/dev/null 2>&1 ||
                { echo "nslcd not installed (package nslcd)"; return; }
        ls /lib/*/libnss_ldap.so.2 /usr/lib/*/libnss_ldap.so.2 >/dev/null 2>&1 ||
                { echo "libnss_ldap.so.2 not installed (package libnss-ldapd)"; return; }
        # nslcd reads the fixed path /etc/nslcd.conf (the package's postinst makes it);
        # the lane bind-mounts its own over it
        [ -f /etc/nslcd.conf ] || { echo "no /etc/nslcd.conf to bind over (package nslcd)"; return; }
}

ldap_free_port() {
        local p
        for _ in $(seq 50); do
                p=$((20000 + RANDOM % 30000))
                # no TCP socket of any state uses the port, as local or
                # remote end ("ADDR:PORT " in /proc/net/tcp and tcp6)
                if ! grep -qi ":$(printf '%04X' "$p") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then echo "$p"; return; fi
        done
        echo $((20000 + $$ % 30000))
}

# ldap_start_slapd: a scratch directory with suffix $LD_BASE on 127.0.0.1:$LD_PORT
ldap_start_slapd() {
        mkdir -p "$LD/db"
        [ -n "${LD_PORT:-}" ] || LD_PORT=$(ldap_free_port)
        LD_BASE="dc=ag$$,dc=test"
        LD_URI="ldap://127.0.0.1:$LD_PORT/"
        cat >"$LD/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
pidfile $LD/slapd.pid
argsfile $LD/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 16777216
suffix "$LD_BASE"
rootdn "cn=admin,$LD_BASE"
rootpw secret
directory $LD/db
access to * by * read
CONF
        # -d 0: stays in the foreground (no fork), so $! is slapd itself
        slapd -d 0 -f "$LD/slapd.conf" -h "$LD_URI" >"$LD/slapd.log" 2>&1 &
        LD_SLAPD_PID=$!
        ld_track "$LD_SLAPD_PID"
        ld_ready "$LD_SLAPD_PID" 0.1 "$LD/slapd.log" ldap_up
}

# ldap_up: slapd answers a search of its root DSE
ldap_up() { ldapsearch -x -LLL -H "$LD_URI" -b "" -s base namingContexts >/dev/null 2>&1; }

ldap_stop_slapd() {
        [ -n "$LD_SLAPD_PID" ] || return 0
        kill -TERM "$LD_SLAPD_PID" 2>/dev/null
        kill -CONT "$LD_SLAPD_PID" 2>/dev/null   # it may be stopped (the hung-directory case)
        wait "$LD_SLAPD_PID" 2>/dev/null
        LD_SLAPD_PID=""
}

# ldap_add: LDIF on stdin into the scratch directory
ldap_add() { ldapadd -x -H "$LD_URI" -D "cn=admin,$LD_BASE" -w secret >>"$LD/ldapadd.log" 2>&1; }

# ldap_tree: the LDIF of the base entry, ou=people and ou=groups
ldap_tree() {
        printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: pam_autogroup test\ndc: ag%s\n\n' "$LD_BASE" "$$"
        printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$LD_BASE"
        printf 'dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n\n' "$LD_BASE"
}

# ldap_person NAME UID GID: the LDIF of a directory-only user
ldap_person() {
        printf 'dn: uid=%s,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\n' "$1" "$LD_BASE"
        printf 'cn: %s\nuid: %s\nuidNumber: %s\ngidNumber: %s\nhomeDirectory: /nonexistent\nloginShell: /bin/sh\n\n' \
                "$1" "$1" "$2" "$3"
}

# ldap_ns SOURCE RUNDIR BIND...: the private mount namespace (held by a
# sleeping process) whose nsswitch.conf says "files SOURCE" for passwd and
# group. Each BIND is PRIVATE:TARGET, bind-mounted in it. /run: the private
# $LD/run-RUNDIR over /run/RUNDIR when the host has that directory, else a
# tmpfs on /run (with RUNDIR made in it).
ldap_ns() {
        local src="$1" run="$2"
        shift 2
        [ -z "$run" ] || mkdir -p "$LD/run-$run"
        [ -S "$LD/log.sock" ] || rm -f "$LD/log.sock"
        cat >"$LD/nsswitch.conf" <<CONF
# private to a pam_autogroup directory lane (bind-mounted in its namespace)
passwd:         files $src
group:          files $src
shadow:         files
hosts:          files
CONF
        chmod 644 "$LD/nsswitch.conf"
        unshare -m --propagation private -- sh -c '
                set -e
                d="$1"; run="$2"; shift 2
                mount --bind "$d/nsswitch.conf" /etc/nsswitch.conf
                for b in "$@"; do mount --bind "${b%%:*}" "${b#*:}"; done
                if [ -S "$d/log.sock" ]; then mount --bind "$d/log.sock" /dev/log; fi
                if [ -n "$run" ] && [ -d "/run/$run" ]; then mount --bind "$d/run-$run" "/run/$run"
                else mount -t tmpfs -o mode=755 agtest-run /run && mkdir -p /run/lock ${run:+"/run/$run"}; fi
                echo ready >"$d/ns.ready"
                exec sleep 3600' sh "$LD" "$run" "$@" >"$LD/ns.log" 2>&1 &
        LD_HOLDER_PID=$!
        ld_track "$LD_HOLDER_PID"
        for _ in $(seq 100); do [ -e "$LD/ns.ready" ] && break; kill -0 "$LD_HOLDER_PID" 2>/dev/null || break; sleep 0.05; done
        [ -e "$LD/ns.ready" ] || { cat "$LD/ns.log" >&2; return 1; }
        # (the holder's sh has unshared by now: ns.ready is written inside)
        LD_NS=$(readlink "/proc/$LD_HOLDER_PID/ns/mnt" 2>/dev/null)
        # held open until the script exits: a namespace's number is free for
        # the next namespace anyone makes once its last user is gone, and a
        # process of another lane in a namespace with our old number must
        # not count as ours (nor be killed)
        exec {LD_NS_FD}<"/proc/$LD_HOLDER_PID/ns/mnt"
}

# ldap_start_ns NSLCD_CONF_EXTRA...: the namespace for nslcd ("files ldap",
# its private nslcd.conf) and nslcd inside it
ldap_start_ns() {
        {
                echo "# private to the pam_autogroup directory lane"
                echo "uri $LD_URI"
                echo "base $LD_BASE"
                printf '%s\n' "$@"
        } >"$LD/nslcd.conf"
        chmod 644 "$LD/nslcd.conf"
        ldap_ns ldap nslcd "$LD/nslcd.conf:/etc/nslcd.conf" || return 1
        ldap_start_nslcd
}

# inns COMMAND...: run a command inside the lane's mount namespace
inns() { nsenter -t "$LD_HOLDER_PID" -m -- "$@"; }

ldap_start_nslcd() {
        # -n: no fork; nsenter execs nslcd, so $! is nslcd itself.
        # NSLCD_DEBUG=1: -d, every request logged to $LD/nslcd.log
        # (a simple command, not the inns function: that would background a
        # subshell and $! would not be nslcd)
        nsenter -t "$LD_HOLDER_PID" -m -- nslcd -n ${NSLCD_DEBUG:+-d} >"$LD/nslcd.log" 2>&1 &
        LD_NSLCD_PID=$!
        ld_track "$LD_NSLCD_PID"
        ld_ready "$LD_NSLCD_PID" 0.05 "$LD/nslcd.log" test -S "/proc/$LD_HOLDER_PID/root/run/nslcd/socket"
}

ldap_stop_nslcd() {
        [ -n "$LD_NSLCD_PID" ] || return 0
        kill -TERM "$LD_NSLCD_PID" 2>/dev/null
        wait "$LD_NSLCD_PID" 2>/dev/null
        LD_NSLCD_PID=""
}

# ldap_ns_pids: every process in the lane's mount namespace (only this test
# puts processes there: the holder, nslcd, and what inns ran)
ldap_ns_pids() {
        local p
        [ -n "$LD_NS" ] || return 0
        for p in /proc/[0-9]*; do
                [ "$(readlink "$p/ns/mnt" 2>/dev/null)" != "$LD_NS" ] || exited "${p#/proc/}" || echo "${p#/proc/}"
        done
}

ldap_cleanup() {
        local p
        ldap_stop_nslcd
        ldap_stop_slapd
        for p in $(ldap_ns_pids); do
                [ "$p" = "$LD_HOLDER_PID" ] || kill -KILL "$p" 2>/dev/null
        done
        if [ -n "$LD_LOGCAP_PID" ]; then
                kill "$LD_LOGCAP_PID" 2>/dev/null; wait "$LD_LOGCAP_PID" 2>/dev/null
                LD_LOGCAP_PID=""
        fi
        if [ -n "$LD_HOLDER_PID" ]; then
                kill -TERM "$LD_HOLDER_PID" 2>/dev/null
                wait "$LD_HOLDER_PID" 2>/dev/null
                LD_HOLDER_PID=""
        fi
        # a SIGKILL is delivered, not waited for (sssd's children exit after
        # their monitor; a loaded CI host took more than 10 s): up to 60 s for
        # the killed to be gone
        for p in $(seq 600); do
                [ -z "$(ldap_leftovers)" ] && break
                sleep 0.1
        done
}
