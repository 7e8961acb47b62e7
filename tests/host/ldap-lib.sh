# Shared helpers for the directory lane (sourced after tests/lib.sh): a
# throw-away slapd on 127.0.0.1 and a private nslcd, with the tests running in
# a private mount namespace whose /etc/nsswitch.conf says "files ldap".
#
# Nothing of the host's is used or changed: slapd listens on a free port with
# a scratch database under $T; nslcd reads a private config and keeps its
# socket and pid file in a private /run/nslcd (libnss-ldapd talks to the
# fixed path /run/nslcd/socket, so inside the namespace a private directory
# is bind-mounted there, or a tmpfs on /run when the host has no /run/nslcd).
# The host's nsswitch.conf, nslcd.conf and any host nslcd stay untouched.
# Only the processes started here are stopped, by the PIDs kept here.

LD="$T/ldap"
LD_SLAPD_PID=""
LD_NSLCD_PID=""
LD_HOLDER_PID=""
LD_LOGCAP_PID=""
LD_NS=""                # the lane's mount namespace (readlink of /proc/PID/ns/mnt)
LD_STARTED=""           # PID:start-time of every process the lane started

# ld_track PID: remember a process the lane started, with its start time
# (pid_start, tests/lib.sh), for ldap_leftovers
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
                [ "$(pid_start "$p")" != "${e#*:}" ] || echo "$p"
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

# ldap_missing: prints why the lane cannot run here (empty when it can)
ldap_missing() {
        local p
        for p in slapd nslcd ldapadd ldapsearch unshare nsenter; do
                command -v "$p" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$p" >/dev/null 2>&1 ||
                        { echo "$p not installed (packages slapd, ldap-utils, nslcd, util-linux)"; return; }
        done
        ls /lib/*/libnss_ldap.so.2 /usr/lib/*/libnss_ldap.so.2 >/dev/null 2>&1 ||
                { echo "libnss_ldap.so.2 not installed (package libnss-ldapd)"; return; }
        [ -d /etc/ldap/schema ] || { echo "no /etc/ldap/schema (package slapd)"; return; }
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
        for _ in $(seq 100); do
                ldapsearch -x -LLL -H "$LD_URI" -b "" -s base namingContexts >/dev/null 2>&1 && return 0
                kill -0 "$LD_SLAPD_PID" 2>/dev/null || break
                sleep 0.1
        done
        cat "$LD/slapd.log" >&2
        return 1
}

ldap_stop_slapd() {
        [ -n "$LD_SLAPD_PID" ] || return 0
        kill -TERM "$LD_SLAPD_PID" 2>/dev/null
        kill -CONT "$LD_SLAPD_PID" 2>/dev/null   # it may be stopped (the hung-directory case)
        wait "$LD_SLAPD_PID" 2>/dev/null
        LD_SLAPD_PID=""
}

# ldap_add: LDIF on stdin into the scratch directory
ldap_add() { ldapadd -x -H "$LD_URI" -D "cn=admin,$LD_BASE" -w secret >>"$LD/ldapadd.log" 2>&1; }

# ldap_start_ns NSLCD_CONF_EXTRA...: the private mount namespace (held by a
# sleeping process) and nslcd inside it
ldap_start_ns() {
        mkdir -p "$LD/run-nslcd"
        [ -S "$LD/log.sock" ] || rm -f "$LD/log.sock"
        cat >"$LD/nsswitch.conf" <<'CONF'
# private to the pam_autogroup directory lane (bind-mounted in its namespace)
passwd:         files ldap
group:          files ldap
shadow:         files
hosts:          files
CONF
        {
                echo "# private to the pam_autogroup directory lane"
                echo "uri $LD_URI"
                echo "base $LD_BASE"
                printf '%s\n' "$@"
        } >"$LD/nslcd.conf"
        chmod 644 "$LD/nsswitch.conf" "$LD/nslcd.conf"
        unshare -m --propagation private -- sh -c '
                set -e
                mount --bind "$1/nsswitch.conf" /etc/nsswitch.conf
                mount --bind "$1/nslcd.conf" /etc/nslcd.conf
                if [ -S "$1/log.sock" ]; then mount --bind "$1/log.sock" /dev/log; fi
                if [ -d /run/nslcd ]; then mount --bind "$1/run-nslcd" /run/nslcd
                else mount -t tmpfs -o mode=755 agtest-run /run && mkdir -p /run/nslcd /run/lock; fi
                echo ready >"$1/ns.ready"
                exec sleep 3600' sh "$LD" >"$LD/ns.log" 2>&1 &
        LD_HOLDER_PID=$!
        ld_track "$LD_HOLDER_PID"
        for _ in $(seq 100); do [ -e "$LD/ns.ready" ] && break; kill -0 "$LD_HOLDER_PID" 2>/dev/null || break; sleep 0.05; done
        [ -e "$LD/ns.ready" ] || { cat "$LD/ns.log" >&2; return 1; }
        # (the holder's sh has unshared by now: ns.ready is written inside)
        LD_NS=$(readlink "/proc/$LD_HOLDER_PID/ns/mnt" 2>/dev/null)
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
        for _ in $(seq 100); do
                [ -S "/proc/$LD_HOLDER_PID/root/run/nslcd/socket" ] && return 0
                kill -0 "$LD_NSLCD_PID" 2>/dev/null || break
                sleep 0.05
        done
        cat "$LD/nslcd.log" >&2
        return 1
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
                [ "$(readlink "$p/ns/mnt" 2>/dev/null)" != "$LD_NS" ] || echo "${p#/proc/}"
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
}
