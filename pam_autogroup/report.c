/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the module says about each outcome of a login: one log line (debug
 * lines gated on the option debug) and the audit records. Nothing here acts:
 * the environment is env.c's, the watcher watch.c's. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_ext.h>

#include "escape.h"
#include "lane.h"
#include "module.h"
#include "util.h"

/* A cgroup path as logged: names below a session may be a user's, so every
 * byte outside printable ASCII is escaped (escape.h); longer ones are cut. */
#define LOG_PATH_MAX 2048

void log_session_end(struct module_events *ev, const char *path, AgAcctScope scope, const AgCpuUsage *u,
                     long long wall_usec, const char *state, const char *by) {
        AgAcctRecord ar = { .cgroup = path, .state = state, .user = ev->user, .uid = ev->uid,
                            .scope = scope, .by = by, .usage = u, .wall_usec = wall_usec };
        char fields[200], extra[240], record[AG_ACCT_RECORD_MAX];

        if (ag_acct_format(u, wall_usec, fields, sizeof fields) < 0)
                return;
        if (ev->ctl->acctlog != ACCT_LOG_OFF && ag_acct_record_format(&ar, record, sizeof record) >= 0)
                pam_syslog(ev->pamh, ev->ctl->acctlog == ACCT_LOG_DEBUG ? LOG_DEBUG : LOG_INFO, "%s", record);
        snprintf(extra, sizeof extra, "state=%s %s%s", state, scope == AG_ACCT_SCOPE_LANE ? "scope=lane " : "", fields);
        ag_audit_record(&ev->audit, "autogroup-session-end", ev->user, ev->uid, path, extra);
}

void log_removed(struct module_events *ev, const char *path, const AgCpuUsage *usage) {
        char esc[LOG_PATH_MAX];

        if (AG_DEBUG(ev->ctl))
                pam_syslog(ev->pamh, LOG_DEBUG, "removed %s", ag_escape_bytes(path, esc, sizeof esc));
        ag_audit_record(&ev->audit, "autogroup-remove", ev->user, ev->uid, path, NULL);
        /* a session that outlived its close: its end, with the CPU time up
         * to now (its open time is another login's: wall unknown); the
         * user's latency lane (v1 cpu,cpuacct): what it used since made */
        if (usage)
                log_session_end(ev, path,
                                ag_lane_path_uid(path, NULL) >= 0 ? AG_ACCT_SCOPE_LANE : AG_ACCT_SCOPE_SESSION, usage,
                                -1, "removed", ev->by);
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

void log_latency(const struct module_events *ev, const AgPolicy *policy, const AgLogin *l) {
        int error = module_warned(ev, AG_WARN_LATENCY, NULL);
        char what[96];

        if (policy->latency == AG_LATENCY_NORMAL)
                return;
        ag_latency_describe(policy->latency, what, sizeof what);
        if (error < 0)
                pam_syslog(ev->pamh, LOG_WARNING, "cannot set latency class %s (%s) for %s: %s",
                           ag_latency_to_string(policy->latency), what, ev->user, strerror(-error));
        else if (AG_DEBUG(ev->ctl))
                pam_syslog(ev->pamh, LOG_DEBUG, "latency class %s (%s) for %s: %s",
                           ag_latency_to_string(policy->latency), what, ev->user,
                           ag_latency_result_to_string(l->latency_result));
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

void log_moved(pam_handle_t *pamh, const struct module_ctl *ctl, const AgLogin *l) {
        char *where = NULL;
        int first;

        if (ag_login_caller_left(l, &where) <= 0)
                return;
        first = ag_once_per_boot("moved-logged");
        if (first != 0)
                pam_syslog(pamh, LOG_WARNING, "this login was moved out of %s%s after it opened (it is in %s%s "
                           "now), so it ran without its group: on a systemd host with cgroup v1, pam_systemd after "
                           "pam_autogroup in the session stack moves every login (put pam_autogroup after "
                           "pam_systemd: autogroup check names the line), and a CPU property set on a unit above "
                           "the logins (user.slice, user-UID.slice) makes systemd move them (leave those unset, "
                           "autogroup.conf sets the policy); logged once per boot",
                           l->hierarchy->mount, l->session->path, l->hierarchy->mount, where);
        else if (AG_DEBUG(ctl))
                pam_syslog(pamh, LOG_DEBUG, "this login was moved out of %s%s after it opened (it is in %s%s now)",
                           l->hierarchy->mount, l->session->path, l->hierarchy->mount, where);
        free(where);
}

void opened_slice(struct module_events *ev, const AgLogin *l, const AgPolicy *policy) {
        pam_handle_t *pamh = ev->pamh;
        char slice[64];

        (void) ag_user_slice_name(ev->uid, slice, sizeof slice);
        if (l->slice.idle_fallback_first)
                pam_syslog(pamh, LOG_NOTICE, "systemd refused CPUWeight=idle (systemd older than 252): users with "
                           "idle yes get CPUWeight=1, the lowest weight, instead (logged once per boot)");
        if (AG_DEBUG(ev->ctl)) {
                char what[512];

                ag_slice_state_format(&l->slice, &l->unit, what, sizeof what);
                pam_syslog(pamh, LOG_DEBUG, "systemd mode: %s %s%s", slice, what,
                           !policy->sessions ? "" :
                           l->session_weight == 0 ? ", session scope CPUWeight=100 (runtime)" :
                           l->session_weight > 0 ? ", session scope CPUWeight=100 through pam_systemd" :
                           ", session scope CPUWeight=100 failed");
        }
        if (l->session_weight < 0)
                pam_syslog(pamh, LOG_WARNING, "systemd mode: cannot set CPUWeight=100 on this login's session scope: "
                           "%s; the user's sessions share %s without a level of their own",
                           l->session_weight_error[0] ? l->session_weight_error : strerror(-l->session_weight),
                           slice);
        snprintf(slice, sizeof slice, "user.slice/user-%lu.slice", (unsigned long) ev->uid);
        ag_audit_record(&ev->audit, "autogroup-systemd-slice", ev->user, ev->uid, slice, NULL);
}

/* The warnings the library told during the open (module_warned), each
 * naming the session it could not know then. */
static void log_open_warnings(const struct module_events *ev, const AgLogin *l) {
        pam_handle_t *pamh = ev->pamh;
        const AgHierarchy *h = l->hierarchy;
        const AgSession *s = l->session;
        const char *what = NULL;
        int error;

        if ((error = module_warned(ev, AG_WARN_ACCT, &what)) < 0 && !l->acct)
                pam_syslog(pamh, LOG_CRIT, "out of memory");
        else if (error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s %s%s: %s, CPU time of this session not recorded",
                           what ? what : "make the cpuacct group", l->acct->mount, s->path, strerror(-error));
        if (!s->origin)
                pam_syslog(pamh, LOG_NOTICE, "cannot tell which cgroup this process came from (its path is too "
                           "long or unreadable): at close it stays in %s%s", h->mount, s->path);
        if ((error = module_warned(ev, AG_WARN_POLICY, &what)) < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s for %s in %s%s: %s; the session is grouped, the group "
                           "keeps the limits it had", what ? what : "set the user group's cpu policy", ev->user,
                           h->mount, s->path, strerror(-error));
        if ((error = module_warned(ev, AG_WARN_LEAVES, NULL)) < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot make the leaves of %s%s: %s; the session is grouped, with %u "
                           "leaves for terminals and autogroup run", h->mount, s->path, strerror(-error), s->leaves);
        if ((error = module_warned(ev, AG_WARN_LANE, &what)) < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s of %s (interactive 2): %s; the session is grouped, "
                           "autogroup run --latency uses the class leaves", what ? what : "make the latency lane",
                           ev->user, strerror(-error));
        /* fail closed: no session of its own, but below the user's group all the same */
        if ((error = module_warned(ev, AG_WARN_SHARED, &what)) == -EUSERS)
                pam_syslog(pamh, LOG_NOTICE, "%s has sessions-max sessions already: this login shares %s%s, under "
                           "the user's policy", ev->user, h->mount, s->path);
        else if (error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s for %s: %s; the login shares %s%s, under the user's "
                           "policy", what ? what : "make the session group", ev->user, strerror(-error), h->mount,
                           s->path);
}

void opened_session(struct module_events *ev, const AgLogin *l, const AgPolicy *policy) {
        pam_handle_t *pamh = ev->pamh;
        const struct module_ctl *ctl = ev->ctl;
        const char *user = ev->user;
        const AgHierarchy *h = l->hierarchy;
        const AgSession *s = l->session;
        int error;

        log_open_warnings(ev, l);
        if (AG_DEBUG(ctl) && s->name && (ctl->delegate <= 0 || h->version == 1)) {
                const void *tty = NULL;
                (void) pam_get_item(pamh, PAM_TTY, &tty);
                bool terminal = ag_tty_is_terminal(tty);
                pam_syslog(pamh, LOG_DEBUG, "session %s: %u of root's leaves (item %s: a login %s a terminal, "
                           "PAM_TTY %s)", s->path, s->leaves, terminal ? "leaves" : "leaves-notty",
                           terminal ? "with" : "without", tty ? (const char *) tty : "unset");
        }
        if (module_warned(ev, AG_WARN_DELEGATE_V1, NULL) < 0)
                pam_syslog(pamh, LOG_NOTICE, "delegate=yes refused on cgroup v1 (groups a user made there could "
                           "hold off a cap): %s%s of %s stays root's", h->mount, s->path, user);
        if ((error = module_warned(ev, AG_WARN_DELEGATE, NULL)) < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot bound %s%s (cgroup.max.descendants, cgroup.max.depth): %s; "
                           "the session is grouped but not delegated to %s", h->mount, s->path, strerror(-error),
                           user);
        /* cgroup v2 checks only write access to the common ancestor's
         * cgroup.procs, not who owns the process: in a delegated session the
         * user could move this (root) process out of login/, then freeze or
         * kill it. So no delegation unless the administrator asks. That is
         * the safe default, not news: a debug line, not one a login. */
        if (AG_DEBUG(ctl) && h->version == 2 && s->name && ctl->delegate <= 0)
                pam_syslog(pamh, LOG_DEBUG,
                           "session %s of %s not delegated: on cgroup v2 the user could move, freeze or kill the "
                           "process that opened it (delegate=yes delegates anyway)", s->path, user);
        /* a kernel without cpu.idle (before 5.15), as the user group's policy found it */
        if (AG_DEBUG(ctl) && policy->idle && module_warned(ev, AG_WARN_NO_CPU_IDLE, NULL) < 0)
                pam_syslog(pamh, LOG_DEBUG, "the kernel has no cpu.idle (Linux 5.15 or later needed): idle yes "
                           "not applied, the rest of the policy is");
        ag_audit_record(&ev->audit, s->name ? "autogroup-session-create" : "autogroup-user-join", user, s->uid,
                        s->path, NULL);
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

int closed_session(struct module_events *ev, const AgLogin *l, const AgLoginEnd *end, int r) {
        const char *mount = l->hierarchy->mount, *path = l->session->path;

        /* CPU accounting: the one line and audit record with what the session used */
        log_session_end(ev, path, l->session->name ? AG_ACCT_SCOPE_SESSION : AG_ACCT_SCOPE_USER,
                        end->have_usage ? &end->usage : NULL, l->acct ? (long long) ag_acct_wall_usec(l->acct) : -1,
                        end->lingering ? "lingering" : "closed", "close");
        if (module_warned(ev, AG_WARN_LANE, NULL) == -EBUSY)
                pam_syslog(ev->pamh, LOG_INFO, "the latency lane of %s still holds processes, left for a later "
                           "close or autogroup gc", ev->user);
        else if (module_warned(ev, AG_WARN_LANE, NULL) < 0)
                pam_syslog(ev->pamh, LOG_WARNING, "cannot remove the latency lane of %s: %s", ev->user,
                           strerror(-module_warned(ev, AG_WARN_LANE, NULL)));
        if (end->lingering) {
                int error = module_warned(ev, AG_WARN_LEAVES, NULL);

                if (error < 0)
                        pam_syslog(ev->pamh, LOG_WARNING, "%s%s still holds processes, left for a later sweep; a "
                                   "free leaf removed at close could not be made again (%s): the session has "
                                   "fewer leaves for terminals and autogroup run", mount, path, strerror(-error));
                else
                        pam_syslog(ev->pamh, LOG_INFO, "%s%s still holds processes, left for a later sweep", mount,
                                   path);
                return PAM_SUCCESS;
        }
        if (r < 0 && r != -EBUSY) {
                pam_syslog(ev->pamh, LOG_ERR, "cannot clean up %s%s: %s", mount, path, strerror(-r));
                return fail_rc(ev->ctl);
        }
        return PAM_SUCCESS;
}
