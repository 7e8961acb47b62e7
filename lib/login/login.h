/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The lifecycle of one login, whatever the mode:
 *
 *   ag_login_new()    decides the mode once (mode=auto|cgroupfs|systemd)
 *   ag_login_open()   applies the resolved policy through the mode's backend
 *   ag_login_close()  undoes it, or sweeps what this user left behind
 *   ag_login_watch()  removes a closed session once its processes are gone
 *
 * Two backends do the work:
 *   cgroupfs (lib/login/login-cgroupfs.c)  v1 and v2, pools, the cpuacct mirror:
 *                                    <root>[/pool-<name>]/user-<uid>/<session>/login
 *   systemd  (lib/login/login-systemd.c)   user-UID.slice properties through systemd
 *
 * Nothing here logs or knows PAM: every call returns -errno, with the failing
 * step in an AgLoginFailure, and tells what went wrong without failing the
 * login (a cap the kernel refused, no CPU accounting...) and each group a
 * sweep removed to the caller's event sink (lib/cgroup/events.h), passed once in
 * the call's parameters, for the caller's one log line each. */

#include <stdbool.h>
#include <sys/types.h>

#include "acct.h"
#include "cgroup.h"
#include "latency.h"
#include "policy.h"
#include "session.h"
#include "systemd.h"

typedef enum AgLoginState {
        AG_LOGIN_NEW,                  /* mode decided, nothing applied (or open failed) */
        AG_LOGIN_GROUPED,              /* cgroupfs: in a session (or the user group) of its own */
        AG_LOGIN_SLICE,                /* systemd: the user slice carries the policy */
        AG_LOGIN_NESTED,               /* opened from inside a session: stays in its caller's group */
} AgLoginState;

/* What the look at the caller's cgroup found (for the debug lines). */
typedef enum AgNested {
        AG_NESTED_UNKNOWN,             /* not looked at, or not inside a session of ours */
        AG_NESTED_SAME_USER,           /* cgroupfs: a session of this user and audit session: nested */
        AG_NESTED_OTHER_USER,          /* cgroupfs: a session of another user: a session of its own */
        AG_NESTED_SCOPE,               /* systemd: a root-owned logind session scope: nested */
        AG_NESTED_NOT_SCOPE,           /* systemd: anywhere else: a session of its own */
} AgNested;

typedef enum AgLoginStep {
        AG_STEP_NONE,
        AG_STEP_NO_CGROUPFS,           /* no cgroup filesystem is mounted */
        AG_STEP_HIERARCHY,             /* the mounts could not be read */
        AG_STEP_NO_CPU,                /* cgroup2 without the cpu controller */
        AG_STEP_CONTAINER,             /* a container's cgroup root that holds processes */
        AG_STEP_SESSION,               /* making the groups or moving the process (what names it) */
        AG_STEP_NO_SYSTEMD,            /* mode=systemd on a host that does not run systemd */
        AG_STEP_SLICE,                 /* systemd refused the slice's properties (detail says why) */
} AgLoginStep;

typedef struct AgLoginFailure {
        AgLoginStep step;
        const char *what;              /* AG_STEP_SESSION: the step that failed (static text), or NULL */
        char detail[256];              /* AG_STEP_SLICE: systemd's own message, "" when none */
} AgLoginFailure;

typedef struct AgLogin {
        AgMode mode;                   /* AG_MODE_CGROUPFS or AG_MODE_SYSTEMD, decided by ag_login_new() */
        AgLoginState state;
        AgHierarchy *hierarchy;        /* the cpu hierarchy, looked up once; NULL when there is none */

        /* the latency class given to the calling thread at open (AG_WARN_LATENCY when it could not) */
        AgLatencyResult latency_result;

        /* the caller's cgroup, looked at for a nested login */
        AgNested nested;
        char *caller;                  /* its path in the hierarchy (NULL when not read) */
        char *caller_acct;             /* v1: its path in the cpuacct hierarchy (NULL: none, or not read) */
        uid_t caller_owner;            /* AG_NESTED_OTHER_USER: the uid of that session */

        /* cgroupfs, AG_LOGIN_GROUPED */
        AgSession *session;
        AgAcct *acct;                  /* CPU accounting; NULL when there was no memory for it
                                        * (AG_WARN_ACCT tells either, and a mirror that failed) */

        /* systemd: the values for the user slice (AG_LOGIN_SLICE, or AG_STEP_SLICE) */
        AgUnitValues unit;
        AgSliceState slice;            /* what was done with each property */
        /* after pam_systemd: the session scope's CPUWeight= set over D-Bus
         * (0), not asked for (1: no session level, or pam_systemd comes
         * later and gets it as PAM data), or -errno with why */
        int session_weight;
        char session_weight_error[160];
} AgLogin;

typedef struct AgLoginParams {
        const char *root;              /* root=, the cgroupfs mode's subtree */
        uid_t uid;
        gid_t gid;
        const AgPolicy *policy;        /* the user's */
        const AgPolicy *pool_policy;   /* the user's pool's (policy->pool) */
        const AgConfig *config;        /* names the places swept at open */
        bool delegate;                 /* delegate=yes */
        bool logind_session;           /* pam_systemd already made this login's session (XDG_SESSION_ID) */
        const char *logind_session_id; /* that session's id (XDG_SESSION_ID), or NULL */
        bool terminal;                 /* the login has a terminal (ag_tty_is_terminal() of PAM_TTY) */
        const AgEvents *events;        /* warnings, and each group a sweep removes (may be NULL) */
} AgLoginParams;

/* Decides the mode of one login by ag_mode_decide() (lib/systemd/mode.h): CGROUPFS
 * and SYSTEMD as asked; AUTO becomes SYSTEMD on a systemd host whose cgroup
 * v2 offers cpu. The hierarchy found on the way is kept for the backend.
 * -ENOMEM only. */
int ag_login_new(AgMode requested, AgLogin **ret);

/* Applies the policy: the latency class to the calling thread (any mode,
 * never fatal), then the backend's groups or slice. 0 with l->state
 * GROUPED, SLICE or NESTED; -errno with *ret_failure (when not NULL) naming
 * the step, and l->state still NEW. */
int ag_login_open(AgLogin *l, const AgLoginParams *p, AgLoginFailure *ret_failure);

typedef struct AgLoginEnd {
        AgCpuUsage usage;              /* what the session used; valid when have_usage */
        bool have_usage;
        bool lingering;                /* the session still holds processes: left for the watcher or gc */
} AgLoginEnd;

typedef struct AgLoginCloseParams {
        const char *root;              /* root= (for a sweep; a session knows its own) */
        uid_t uid;
        bool user_known;               /* false: open could not find the user, nothing is swept */
        bool logind_session;           /* systemd: the login had a logind session */
        const AgEvents *events;        /* each group a sweep removes (may be NULL) */
} AgLoginCloseParams;

/* Ends the login:
 *   GROUPED   moves the caller out, removes the session once empty (with its
 *             cpuacct mirror) and this user's other empty groups; the CPU
 *             time goes to *ret_end. -EBUSY when the session still holds
 *             processes (ret_end->lingering for a session level).
 *   NEW       cgroupfs: sweeps the user's empty groups; systemd: takes back
 *             what open set on a slice that never ran (no logind session).
 *   SLICE     the same as NEW in the systemd mode.
 *   NESTED    nothing.
 * *ret_end (may be NULL) is always written. */
int ag_login_close(AgLogin *l, const AgLoginCloseParams *p, AgLoginEnd *ret_end);

/* A closed session that still holds processes: forks a detached watcher
 * (setsid, a child of init; the caller keeps no child) that waits at most
 * timeout_ms for them to exit, removes the session as close would have
 * (telling events of each group), calls done (with events->userdata) with the result (0, or
 * -ETIMEDOUT/-EBUSY when processes stayed) and exits. end is not NULL when
 * the watcher removed the session itself (not a concurrent sweep, which
 * reports it): its CPU time up to the removal, read just before it. The
 * watcher runs with root's credentials only (real, effective and saved
 * uid and gid 0, no supplementary groups, not dumpable): a su-style caller
 * keeps the invoking user's real uid, which would let that user stop, kill
 * or trace it; the caller's real uid is root's across the fork too, so that
 * no process of the close is ever the user's (a stopped child would hold
 * the close). One watcher a user: one that finds another running (a lock
 * on the user group) leaves its session to it, and the one running stays,
 * within timeout_ms, while the user has a closed session that still holds
 * processes (lib/cgroup/pool.h). It waits in the hierarchy's root. Every
 * signal handler, file and the syslog socket of the caller are dropped in
 * the watcher. -errno when it could not be started. */
typedef void (*ag_watch_done_fn)(void *userdata, int r, const AgLoginEnd *end);
int ag_login_watch(const AgLogin *l, unsigned timeout_ms, const AgEvents *events, ag_watch_done_fn done);

/* cgroupfs, a GROUPED login, at close: has its caller been moved out of
 * its session since open (by a module later in the stack, such as
 * pam_systemd on a systemd host with cgroup v1, or by systemd itself)? 1
 * with *ret_where (freed by the caller) the caller's cgroup now, 0 when it
 * is still below root= (its session, or where a later login of the user
 * moved it), -errno when it cannot be told. */
int ag_login_caller_left(const AgLogin *l, char **ret_where);

/* Creates AG_RUN_DIR/name (AG_RUN_DIR made root's 0755 when missing): 1 the
 * first time since boot (/run is a tmpfs), 0 when it was there, -errno.
 * What is "logged once per boot" uses it. */
#define AG_RUN_DIR "/run/autogroup"
int ag_once_per_boot(const char *name);

/* "CPUWeight" and "CPUQuotaPerSecUSec" values as systemctl shows them. */
void ag_unit_values_format(const AgUnitValues *v, char *weight, size_t weight_size, char *quota,
                           size_t quota_size);

AgLogin *ag_login_free(AgLogin *l);
