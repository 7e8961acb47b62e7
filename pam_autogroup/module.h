/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the module's files share: the options of one PAM call, the event
 * sink of one call (events.c), the per-handle state (state.c), what the
 * login is handed (env.c), the close's watcher (watch.c) and the lines of
 * each outcome (report.c), which pam_autogroup.c calls in order. */

#include <stdbool.h>
#include <sys/types.h>

#include <security/pam_modules.h>

#include "audit.h"
#include "login.h"

/* option flags (the module's own namespace, not libpam's PAM_*) */
#define AG_OPT_DEBUG    0x0001
#define AG_OPT_NOAUDIT  0x0002
#define AG_OPT_STRICT   0x0004

/* acctlog=info|debug|off: the priority of the per-session accounting line at close */
enum acct_log { ACCT_LOG_INFO, ACCT_LOG_DEBUG, ACCT_LOG_OFF };

struct module_ctl {
        unsigned flags;
        const char *conf;
        const char *root;
        AgMode mode;                   /* mode=auto|cgroupfs|systemd */
        int delegate;                  /* delegate=yes 1, delegate=no 0, not given -1 (the same as no) */
        enum acct_log acctlog;
};

#define AG_DEBUG(ctl) ((ctl)->flags & AG_OPT_DEBUG)

/* What a failure returns: PAM_SESSION_ERR only where the administrator asked
 * for strictness. */
static inline int fail_rc(const struct module_ctl *ctl) {
        return (ctl->flags & AG_OPT_STRICT) ? PAM_SESSION_ERR : PAM_IGNORE;
}

/* ---- the event sink of one PAM call (events.c, lib/cgroup/events.h) */
/* Every group a sweep removes becomes at once a debug line and an audit
 * record (for a session that outlived its close, its accounting line and
 * session-end record too: log_removed). A warning is kept, the last one of
 * each kind, for the line of the outcome (opened_session, log_latency),
 * which names the session the library did not know yet when it told it. */
struct module_events {
        AgEvents sink;                 /* what the library is given; its userdata is this struct */
        pam_handle_t *pamh;
        const struct module_ctl *ctl;
        AgAuditConn audit;
        const char *user;
        uid_t uid;
        const char *by;                /* the accounting record's writer: "sweep", "watcher" */
        struct {
                int error;             /* -errno told, 0 when none */
                const char *detail;    /* static text, or NULL */
        } warned[_AG_WARN_MAX];
};
/* Sets up ev in place (ev->sink points to it), its audit connection per
 * the options; by "sweep". */
void module_events_init(struct module_events *ev, pam_handle_t *pamh, const struct module_ctl *ctl,
                        const char *user, uid_t uid);
/* The -errno told for what (0: none), and its detail (may be NULL). */
int module_warned(const struct module_events *ev, AgWarn what, const char **ret_detail);

/* ---- the per-handle state (state.c) */
/* What one open leaves for its close (pam_set_data): the user as open
 * found it, so that close never asks NSS again (with the directory down the
 * logout would wait for its timeout a second time), and the login. Its
 * presence also tells a second instance of the module in the same stack
 * that this handle's session is taken. */
struct login_data {
        bool known;                    /* open found the user */
        uid_t uid;
        char *user;                    /* the account's name (pw_name); NULL when unknown */
        AgLogin *login;                /* NULL until the mode was decided */
};

struct passwd;
/* The state of this handle's open; NULL when none (no open, or closed). */
struct login_data *login_data_get(pam_handle_t *pamh);
/* A new state, kept in the handle, for the user pw (NULL: open could not
 * find the user); NULL when out of memory. */
struct login_data *login_data_new(pam_handle_t *pamh, const struct passwd *pw);
/* The cleanup of PAM data that is one malloc'ed block. */
void free_data(pam_handle_t *pamh, void *data, int error_status);
/* Forgets (and frees) the state: the close is done. */
void login_data_drop(pam_handle_t *pamh);
/* The module twice in one stack (common-session and the service's own file;
 * or libpam reading "other" twice): the first instance opens and closes the
 * session, every later one steps aside. delta +1 at open, -1 at close;
 * returns false (and changes nothing) when asked to take one that is not
 * there. */
bool aside_count(pam_handle_t *pamh, int delta);

/* ---- what the login is handed through the PAM handle (env.c) */
/* systemd: the session scope's weight, handed to pam_systemd */
void env_session_weight(pam_handle_t *pamh, const AgPolicy *policy, bool logind_session);
/* systemd: AUTOGROUP_MODE and AUTOGROUP_INTERACTIVE */
void env_slice(pam_handle_t *pamh, const AgPolicy *policy);
/* cgroupfs: AUTOGROUP_SESSION (path) and AUTOGROUP_INTERACTIVE */
void env_session(pam_handle_t *pamh, const char *path, const AgPolicy *policy);
/* A login nested in a session of the same user (it stays in its caller's
 * group): AUTOGROUP_SESSION (the caller's session) and
 * AUTOGROUP_INTERACTIVE in the PAM environment, as env_session sets
 * them, for clients that start from a clean environment (su -, sudo -i). */
void env_nested(pam_handle_t *pamh, const struct module_ctl *ctl, const AgLogin *l, const AgPolicy *policy);

/* ---- the watcher of a closed session that still holds processes (watch.c) */
void watch_start(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, uid_t uid, const AgLogin *l);

/* ---- the lines (report.c) */
/* a group a sweep removed: the debug line, the audit record and, for a
 * session that outlived its close or a latency lane with CPU time of its
 * own (usage not NULL), its end (log_session_end, scope lane for a lane) */
void log_removed(struct module_events *ev, const char *path, const AgCpuUsage *usage);
/* The accounting record (ag_acct_record_format) and audit record of a
 * session's end (doc/design.md, "CPU accounting"): state "closed" or
 * "lingering" at close, "removed" when a lingering session (or one whose
 * login never closed) goes later; by names the writer. u NULL or a field
 * < 0: "?"; wall_usec < 0: "?". */
void log_session_end(struct module_events *ev, const char *path, AgAcctScope scope, const AgCpuUsage *u,
                     long long wall_usec, const char *state, const char *by);
/* open: the debug lines of the policy; the pool a systemd login cannot have */
void log_policy(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, const AgLogin *l,
                const AgPolicy *policy, const AgPolicy *pool_policy);
/* the latency class given to the caller */
void log_latency(const struct module_events *ev, const AgPolicy *policy, const AgLogin *l);
/* the one line of a login that got no group */
void log_failure(pam_handle_t *pamh, const char *user, const AgLogin *l, const AgLoginParams *p,
                 const AgLoginFailure *f, int r);
/* the debug lines of where the login goes: the hierarchy, and what the look
 * at the caller's group found (nested: the login stepped aside) */
void log_where(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, const AgLogin *l,
                bool nested);
/* a login that got its slice (systemd) or its session (cgroupfs): lines, audit */
void opened_slice(struct module_events *ev, const AgLogin *l, const AgPolicy *policy);
void opened_session(struct module_events *ev, const AgLogin *l, const AgPolicy *policy);

/* close */
/* cgroupfs, at close: a login whose caller another module or systemd moved
 * out of its session since open, logged once per boot with the fix. */
void log_moved(pam_handle_t *pamh, const struct module_ctl *ctl, const AgLogin *l);
void closed_slice(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, bool logind_session, int r);
/* the accounting line and record; returns the PAM result */
int closed_session(struct module_events *ev, const AgLogin *l, const AgLoginEnd *end, int r);
