/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the module says about each outcome of a login: one log line (debug
 * lines gated on the option debug), the login's environment, the audit
 * records, and the watcher of a session that outlives its close. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_ext.h>

#include "env.h"
#include "escape.h"
#include "module.h"
#include "util.h"

/* How long the watcher of a closed session that still holds processes
 * waits for them to exit (then "autogroup gc", run by a timer, removes it). */
#define WATCH_TIMEOUT_MS 60000
/* A cgroup path as logged: names below a session may be a user's, so every
 * byte outside printable ASCII is escaped (escape.h); longer ones are cut. */
#define LOG_PATH_MAX 2048

/* The accounting record (ag_acct_record_format) and audit record of a
 * session's end (doc/design.md, "CPU accounting"): state "closed" or
 * "lingering" at close, "removed" when a lingering session (or one whose
 * login never closed) goes later; by names the writer. u NULL or a field
 * < 0: "?"; wall_usec < 0: "?". */
static void acct_report(pam_handle_t *pamh, const struct module_ctl *ctl, AgAuditConn *audit, const char *user,
                        uid_t uid, const char *path, bool user_scope, const AgCpuUsage *u, long long wall_usec,
                        const char *state, const char *by) {
        AgAcctRecord ar = { .cgroup = path, .state = state, .user = user, .uid = uid, .user_scope = user_scope,
                            .by = by, .usage = u, .wall_usec = wall_usec };
        char fields[200], extra[240], record[AG_ACCT_RECORD_MAX];

        if (ag_acct_format(u, wall_usec, fields, sizeof fields) < 0)
                return;
        if (ctl->acctlog != ACCT_LOG_OFF && ag_acct_record_format(&ar, record, sizeof record) >= 0)
                pam_syslog(pamh, ctl->acctlog == ACCT_LOG_DEBUG ? LOG_DEBUG : LOG_INFO, "%s", record);
        snprintf(extra, sizeof extra, "state=%s %s", state, fields);
        ag_audit_record(audit, "autogroup-session-end", user, uid, path, extra);
}

void on_removed(void *userdata, const char *path, const AgCpuUsage *usage) {
        struct removed_ctx *c = userdata;
        char esc[LOG_PATH_MAX];

        if (AG_DEBUG(c->ctl))
                pam_syslog(c->pamh, LOG_DEBUG, "removed %s", ag_escape_bytes(path, esc, sizeof esc));
        ag_audit_record(&c->audit, "autogroup-remove", c->user, c->uid, path, NULL);
        /* a session that outlived its close: its end, with the CPU time up
         * to now (its open time is another login's: wall unknown) */
        if (usage)
                acct_report(c->pamh, c->ctl, &c->audit, c->user, c->uid, path, false, usage, -1, "removed", c->by);
}

static const char *max_unit(long max_pct) {
        return max_pct < 0 ? " (none)" : "%";
}

void log_policy(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, const AgLogin *l,
                const AgPolicy *policy, const AgPolicy *pool_policy) {
        if (AG_DEBUG(ctl))
                pam_syslog(pamh, LOG_DEBUG, "policy for %s: weight %u, max %ld%s, sessions %s, idle %s", user,
                           policy->weight, policy->max_pct, max_unit(policy->max_pct),
                           policy->sessions ? "yes" : "no", policy->idle ? "yes" : "no");
        if (!policy->pool[0])
                return;
        if (l->mode == AG_MODE_SYSTEMD)
                pam_syslog(pamh, LOG_INFO, "systemd mode: pool %s of %s not applied (systemd cannot put "
                           "user slices below a pool slice); the user's own policy applies", policy->pool, user);
        else if (AG_DEBUG(ctl))
                pam_syslog(pamh, LOG_DEBUG, "pool %s: weight %u, max %ld%s, idle %s", policy->pool,
                           pool_policy->weight, pool_policy->max_pct, max_unit(pool_policy->max_pct),
                           pool_policy->idle ? "yes" : "no");
}

void log_latency(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, const AgPolicy *policy,
                 const AgLogin *l) {
        char what[96];

        if (policy->latency == AG_LATENCY_NORMAL)
                return;
        ag_latency_describe(policy->latency, what, sizeof what);
        if (l->latency_error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot set latency class %s (%s) for %s: %s",
                           ag_latency_to_string(policy->latency), what, user, strerror(-l->latency_error));
        else if (AG_DEBUG(ctl))
                pam_syslog(pamh, LOG_DEBUG, "latency class %s (%s) for %s: %s",
                           ag_latency_to_string(policy->latency), what, user,
                           ag_latency_result_to_string(l->latency_result));
}

/* The session level of the systemd mode: the same weight for every session
 * of the user, handed to pam_systemd, which reads it when it asks logind for
 * the session (so pam_autogroup must come first). A value another module
 * set first is left alone. */
void systemd_session_level(pam_handle_t *pamh, const AgPolicy *policy, bool logind_session) {
        const void *old = NULL;
        char *w = NULL;

        /* pam_systemd sets XDG_SESSION_ID once logind made the session: then
         * it ran first, and the session weight comes too late. */
        if (logind_session)
                pam_syslog(pamh, LOG_NOTICE, "pam_systemd ran before pam_autogroup: put pam_autogroup before "
                           "pam_systemd in the session stack to give the session scope its weight");
        if (!policy->sessions ||
            (pam_get_data(pamh, AG_SYSTEMD_DATA_CPU_WEIGHT, &old) == PAM_SUCCESS && old))
                return;
        if (asprintf(&w, "%u", AG_WEIGHT_DEFAULT) < 0 ||
            pam_set_data(pamh, AG_SYSTEMD_DATA_CPU_WEIGHT, w, free_data) != PAM_SUCCESS) {
                free(w);
                pam_syslog(pamh, LOG_WARNING, "cannot hand the session weight to pam_systemd");
        }
}

void log_failure(pam_handle_t *pamh, const char *user, const AgLogin *l, const AgLoginParams *p,
                 const AgLoginFailure *f, int r) {
        const char *mount = l->hierarchy ? l->hierarchy->mount : "?";
        char slice[64];

        switch (f->step) {
        case AG_STEP_NO_CGROUPFS:
                pam_syslog(pamh, LOG_NOTICE, "no cgroup filesystem is mounted, session not grouped");
                break;
        case AG_STEP_NO_CPU:
                pam_syslog(pamh, LOG_NOTICE, "no cpu controller available (cgroup2 at %s lacks cpu), session "
                           "not grouped", mount);
                break;
        case AG_STEP_CONTAINER:
                pam_syslog(pamh, LOG_ERR,
                           "cgroup root %s holds processes and is not the system's root cgroup (a container?), "
                           "so cpu cannot be enabled below it: run 'autogroup container-init' as root once "
                           "at container start; session of %s not grouped", mount, user);
                break;
        case AG_STEP_SESSION:
                pam_syslog(pamh, LOG_ERR, "cannot %s for %s below %s/%s: %s, session not grouped",
                           f->what ? f->what : "open the session", user, mount, p->root, strerror(-r));
                break;
        case AG_STEP_NO_SYSTEMD:
                pam_syslog(pamh, LOG_ERR, "mode=systemd, but this host does not run systemd "
                           "(no /run/systemd/system), session of %s not grouped", user);
                break;
        case AG_STEP_SLICE: {
                char what[512];

                (void) ag_user_slice_name(p->uid, slice, sizeof slice);
                ag_slice_state_format(&l->slice, &l->unit, what, sizeof what);
                pam_syslog(pamh, LOG_ERR, "cannot set the properties of %s for %s through systemd (%s): %s", slice,
                           user, what, f->detail[0] ? f->detail : strerror(-r));
                break;
        }
        default:
                pam_syslog(pamh, LOG_ERR, "cannot find the cgroup hierarchy: %s", strerror(-r));
                break;
        }
}

void log_where(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, const AgLogin *l,
                bool nested) {
        char caller[LOG_PATH_MAX];
        const char *mount;

        if (!AG_DEBUG(ctl))
                return;
        mount = l->mode == AG_MODE_SYSTEMD || !l->hierarchy ? "" : l->hierarchy->mount;
        if (l->mode == AG_MODE_CGROUPFS && l->hierarchy && l->hierarchy->has_cpu)
                pam_syslog(pamh, LOG_DEBUG, "using cgroup v%d hierarchy at %s", l->hierarchy->version, mount);
        if (!l->caller)
                return;
        ag_escape_bytes(l->caller, caller, sizeof caller);
        switch (l->nested) {
        case AG_NESTED_SAME_USER:
        case AG_NESTED_SCOPE:
                if (nested)
                        pam_syslog(pamh, LOG_DEBUG, "login of %s from inside %s%s: stays in its caller's group, "
                                   "no session of its own", user, mount, caller);
                break;
        case AG_NESTED_OTHER_USER:
                pam_syslog(pamh, LOG_DEBUG, "login of %s from inside %s%s of uid %lu: a session of its own (a "
                           "process of another user is not left in a group its caller owns)",
                           user, mount, caller, (unsigned long) l->caller_owner);
                break;
        case AG_NESTED_NOT_SCOPE:
                pam_syslog(pamh, LOG_DEBUG, "login of %s from inside %s: not a session scope of logind's "
                           "(%s/user.slice/user-UID.slice/session-ID.scope owned by root), a session of its own",
                           user, caller, l->hierarchy->mount);
                break;
        default:
                break;
        }
}

static void putenv_or_log(pam_handle_t *pamh, const char *name, const char *value) {
        char env[600];

        snprintf(env, sizeof env, "%s=%s", name, value);
        if (pam_putenv(pamh, env) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set %s", name);
}

void opened_slice(pam_handle_t *pamh, const struct module_ctl *ctl, AgAuditConn *a, const char *user, uid_t uid,
                  const AgLogin *l, const AgPolicy *policy) {
        char slice[64], level[16];

        (void) ag_user_slice_name(uid, slice, sizeof slice);
        /* The switch for "autogroup enter" (the session hook): terminals of
         * this login get scopes of the user's manager. */
        if (pam_putenv(pamh, AG_MODE_ENV "=" AG_MODE_ENV_SYSTEMD) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set " AG_MODE_ENV ": terminals of this login get no groups");
        /* the item "interactive", for "autogroup run --latency": its scope's CPUWeight= */
        snprintf(level, sizeof level, "%u", policy->interactive);
        putenv_or_log(pamh, AG_INTERACTIVE_ENV, level);
        if (l->slice.idle_fallback_first)
                pam_syslog(pamh, LOG_NOTICE, "systemd refused CPUWeight=idle (systemd older than 252): users with "
                           "idle yes get CPUWeight=1, the lowest weight, instead (logged once per boot)");
        if (AG_DEBUG(ctl)) {
                char what[512];

                ag_slice_state_format(&l->slice, &l->unit, what, sizeof what);
                pam_syslog(pamh, LOG_DEBUG, "systemd mode: %s %s%s", slice, what,
                           policy->sessions ? ", session scope CPUWeight=100 through pam_systemd" : "");
        }
        snprintf(slice, sizeof slice, "user.slice/user-%lu.slice", (unsigned long) uid);
        ag_audit_record(a, "autogroup-systemd-slice", user, uid, slice, NULL);
}

void nested_session(pam_handle_t *pamh, const struct module_ctl *ctl, const AgLogin *l, const AgPolicy *policy) {
        const char *sname = NULL;
        size_t slen = 0;
        uid_t owner;
        char path[512], level[16];

        /* cgroupfs: the caller's session, as the kernel gives the caller's
         * group (nested() checked it is this user's); the systemd mode sets
         * none (its terminals go by AUTOGROUP_MODE) */
        if (l->mode != AG_MODE_CGROUPFS || l->nested != AG_NESTED_SAME_USER || !l->caller ||
            ag_session_of_path(l->caller, ctl->root, &owner, &sname, &slen) < 0 ||
            (size_t) (sname + slen - l->caller) >= sizeof path)
                return;
        snprintf(path, sizeof path, "%.*s", (int) (sname + slen - l->caller), l->caller);
        putenv_or_log(pamh, AG_SESSION_ENV, path);
        snprintf(level, sizeof level, "%u", policy->interactive);
        putenv_or_log(pamh, AG_INTERACTIVE_ENV, level);
}

void opened_session(pam_handle_t *pamh, const struct module_ctl *ctl, AgAuditConn *a, const char *user,
                    const AgLogin *l, const AgPolicy *policy) {
        const AgHierarchy *h = l->hierarchy;
        const AgSession *s = l->session;

        if (l->acct_error < 0 && !l->acct)
                pam_syslog(pamh, LOG_CRIT, "out of memory");
        else if (l->acct_error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s %s%s: %s, CPU time of this session not recorded",
                           l->acct_what ? l->acct_what : "make the cpuacct group", l->acct->mount, s->path,
                           strerror(-l->acct_error));
        if (!s->origin)
                pam_syslog(pamh, LOG_NOTICE, "cannot tell which cgroup this process came from (its path is too "
                           "long or unreadable): at close it stays in %s%s", h->mount, s->path);
        if (s->policy_error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s for %s in %s%s: %s; the session is grouped, the group "
                           "keeps the limits it had", s->policy_what, user, h->mount, s->path,
                           strerror(-s->policy_error));
        if (s->leaves_error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot make the leaves of %s%s: %s; the session is grouped, with %u "
                           "leaves for terminals and autogroup run", h->mount, s->path, strerror(-s->leaves_error),
                           s->leaves);
        if (AG_DEBUG(ctl) && s->name && (ctl->delegate <= 0 || h->version == 1)) {
                const void *tty = NULL;
                (void) pam_get_item(pamh, PAM_TTY, &tty);
                bool terminal = ag_tty_is_terminal(tty);
                pam_syslog(pamh, LOG_DEBUG, "session %s: %u of root's leaves (item %s: a login %s a terminal, "
                           "PAM_TTY %s)", s->path, s->leaves, terminal ? "leaves" : "leaves-notty",
                           terminal ? "with" : "without", tty ? (const char *) tty : "unset");
        }
        if (l->delegate_refused)
                pam_syslog(pamh, LOG_NOTICE, "delegate=yes refused on cgroup v1 (groups a user made there could "
                           "hold off a cap): %s%s of %s stays root's", h->mount, s->path, user);
        if (s->delegate_error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot bound %s%s (cgroup.max.descendants, cgroup.max.depth): %s; "
                           "the session is grouped but not delegated to %s", h->mount, s->path,
                           strerror(-s->delegate_error), user);

        char level[16];
        putenv_or_log(pamh, AG_SESSION_ENV, s->path);
        /* the item "interactive", for "autogroup run/set --latency" */
        snprintf(level, sizeof level, "%u", policy->interactive);
        putenv_or_log(pamh, AG_INTERACTIVE_ENV, level);

        /* cgroup v2 checks only write access to the common ancestor's
         * cgroup.procs, not who owns the process: in a delegated session the
         * user could move this (root) process out of login/, then freeze or
         * kill it. So no delegation unless the administrator asks. That is
         * the safe default, not news: a debug line, not one a login. */
        if (AG_DEBUG(ctl) && h->version == 2 && s->name && ctl->delegate <= 0)
                pam_syslog(pamh, LOG_DEBUG,
                           "session %s of %s not delegated: on cgroup v2 the user could move, freeze or kill the "
                           "process that opened it (delegate=yes delegates anyway)", s->path, user);
        /* a kernel without cpu.idle (before 5.15) */
        if (AG_DEBUG(ctl) && policy->idle && ag_kernel_has_cpu_idle(h, s->path) == 0)
                pam_syslog(pamh, LOG_DEBUG, "the kernel has no cpu.idle (Linux 5.15 or later needed): idle yes "
                           "not applied, the rest of the policy is");
        ag_audit_record(a, s->name ? "autogroup-session-create" : "autogroup-user-join", user, s->uid, s->path,
                        NULL);
        if (AG_DEBUG(ctl))
                pam_syslog(pamh, LOG_DEBUG, "session of %s in %s%s (cgroup v%d)", user, h->mount, s->path,
                           h->version);
}

void closed_slice(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, bool logind_session, int r) {
        if (logind_session) {
                if (AG_DEBUG(ctl))
                        pam_syslog(pamh, LOG_DEBUG, "systemd mode: nothing to remove (systemd owns the units)");
        } else if (r < 0 && r != -EBUSY)
                pam_syslog(pamh, LOG_WARNING, "cannot remove the runtime properties of %s's slice: %s", user,
                           strerror(-r));
        else if (AG_DEBUG(ctl))
                pam_syslog(pamh, LOG_DEBUG, "systemd mode: %s", r == -EBUSY ?
                           "the user slice is in use (or cannot be looked at), its properties stay" :
                           "the user slice's runtime properties and empty cgroup removed");
}

/* The watcher's context: what on_removed needs first, so that one pointer
 * serves both callbacks. */
struct watch_ctx {
        struct removed_ctx rc;
        const AgLogin *login;
};

/* The watcher's end, in the watcher: the session's accounting line when
 * it removed the session itself (the CPU time and wall time up to then). */
static void watch_done(void *userdata, int r, const AgLoginEnd *end) {
        struct watch_ctx *w = userdata;
        const AgLogin *l = w->login;

        if (end)
                acct_report(w->rc.pamh, w->rc.ctl, &w->rc.audit, w->rc.user, l->session->uid, l->session->path,
                            false, end->have_usage ? &end->usage : NULL,
                            l->acct ? (long long) ag_acct_wall_usec(l->acct) : -1, "removed", w->rc.by);
        ag_audit_done(&w->rc.audit);
        if (r < 0 && AG_DEBUG(w->rc.ctl))
                pam_syslog(w->rc.pamh, LOG_DEBUG, "%s%s %s, left for autogroup gc", w->login->hierarchy->mount,
                           w->login->session->path,
                           r == -ETIMEDOUT || r == -EBUSY ? "still holds processes" : strerror(-r));
}

int closed_session(pam_handle_t *pamh, const struct module_ctl *ctl, struct removed_ctx *rc, const AgLogin *l,
                   const AgLoginEnd *end, int r) {
        const char *mount = l->hierarchy->mount, *path = l->session->path;

        /* CPU accounting: the one line and audit record with what the session used */
        acct_report(pamh, ctl, &rc->audit, rc->user, l->session->uid, path, !l->session->name,
                    end->have_usage ? &end->usage : NULL, l->acct ? (long long) ag_acct_wall_usec(l->acct) : -1,
                    end->lingering ? "lingering" : "closed", "close");
        if (end->lingering) {
                pam_syslog(pamh, LOG_INFO, "%s%s still holds processes, left for a later sweep", mount, path);
                /* A caller whose origin is unknown stayed in the session: a
                 * watcher forked from it would sit there too and keep it busy.
                 * The next sweep or gc removes such a session. */
                if (!l->session->origin)
                        return PAM_SUCCESS;
                struct watch_ctx wc = { .rc = REMOVED_CTX(pamh, ctl, rc->user, rc->uid), .login = l };
                wc.rc.by = "watcher";
                r = ag_login_watch(l, WATCH_TIMEOUT_MS, on_removed, watch_done, &wc);
                if (r < 0)
                        pam_syslog(pamh, LOG_WARNING, "cannot fork the watcher of %s%s: %s", mount, path,
                                   strerror(-r));
                else if (AG_DEBUG(ctl))
                        pam_syslog(pamh, LOG_DEBUG, "%s%s: removed once its processes exit (watched for at most "
                                   "%d s)", mount, path, WATCH_TIMEOUT_MS / 1000);
                return PAM_SUCCESS;
        }
        if (r < 0 && r != -EBUSY) {
                pam_syslog(pamh, LOG_ERR, "cannot clean up %s%s: %s", mount, path, strerror(-r));
                return fail_rc(ctl);
        }
        return PAM_SUCCESS;
}
