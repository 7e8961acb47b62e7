/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * pam_autogroup: one cpu cgroup per login session, below a group per user.
 *
 * This file is the PAM glue, and the two entry points read top to bottom:
 * the options, the user and the policy (lib/config/config-*.c, lib/config/policy.c, NSS
 * through in_group), the login's open or close (lib/login/login.c with its two
 * backends), then the lines, the environment and the watcher. The
 * per-handle state is state.c, the event sink of one call events.c, the
 * environment and pam_systemd's session weight env.c, the close's watcher
 * watch.c, one log line per outcome report.c, the audit records audit.c. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#define PAM_SM_SESSION
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

#include "conf.h"
#include "module.h"
#include "util.h"

#ifndef AG_DEFAULT_CONF
#define AG_DEFAULT_CONF "/etc/security/autogroup.conf"
#endif

/* The options into ctl, and the flags word (debug, noaudit, strict) as the
 * return value. An unknown or invalid option is one log line, never fatal. */
static unsigned _pam_parse(pam_handle_t *pamh, int argc, const char **argv, struct module_ctl *ctl) {
        unsigned ctrl = 0;

        *ctl = (struct module_ctl) { .conf = AG_DEFAULT_CONF, .root = AG_ROOT_DEFAULT, .mode = AG_MODE_AUTO,
                                     .delegate = -1, .acctlog = ACCT_LOG_INFO };
        for (; argc-- > 0; ++argv) {
                const char *v;

                if (strcmp(*argv, "debug") == 0)
                        ctrl |= AG_OPT_DEBUG;
                else if (strcmp(*argv, "noaudit") == 0)
                        ctrl |= AG_OPT_NOAUDIT;
                else if (strcmp(*argv, "strict") == 0)
                        ctrl |= AG_OPT_STRICT;
                else if (strncmp(*argv, "conf=", 5) == 0 && (*argv)[5])
                        ctl->conf = *argv + 5;
                else if (strncmp(*argv, "root=", 5) == 0) {
                        if (ag_root_name_valid(v = *argv + 5))
                                ctl->root = v;
                        else
                                pam_syslog(pamh, LOG_ERR, "invalid root name '%s', using '%s'", v, AG_ROOT_DEFAULT);
                } else if (strncmp(*argv, "mode=", 5) == 0) {
                        AgMode m = ag_mode_from_string(v = *argv + 5);
                        if (m >= 0)
                                ctl->mode = m;
                        else
                                pam_syslog(pamh, LOG_ERR, "invalid mode '%s', using 'auto'", v);
                } else if (strncmp(*argv, "delegate=", 9) == 0) {
                        if (strcmp(v = *argv + 9, "yes") == 0 || strcmp(v, "no") == 0)
                                ctl->delegate = strcmp(v, "yes") == 0;
                        else
                                pam_syslog(pamh, LOG_ERR, "invalid delegate '%s', using 'no'", v);
                } else if (strncmp(*argv, "acctlog=", 8) == 0) {
                        static const char *const names[] = { "info", "debug", "off" };
                        unsigned i;

                        for (i = 0, v = *argv + 8; i < ELEMENTSOF(names) && strcmp(v, names[i]) != 0; i++)
                                ;
                        if (i < ELEMENTSOF(names))
                                ctl->acctlog = (enum acct_log) i;
                        else
                                pam_syslog(pamh, LOG_ERR, "invalid acctlog '%s', using 'info'", v);
                } else
                        pam_syslog(pamh, LOG_ERR, "unknown option: %s", *argv);
        }
        return ctrl;
}

static void config_error(void *userdata, const char *file, unsigned line, const char *message) {
        pam_handle_t *pamh = userdata;

        if (file && line > 0)
                pam_syslog(pamh, LOG_ERR, "%s:%u: %s, line skipped", file, line, message);
        else if (file)
                pam_syslog(pamh, LOG_ERR, "%s: %s", file, message);
        else
                pam_syslog(pamh, LOG_ERR, "%s", message);
}

static void config_freep(AgConfig **c) {
        ag_config_free(*c);
}

struct group_ctx {
        pam_handle_t *pamh;
        const char *user;
        gid_t gid;                      /* the user's primary group */
};

/* Membership decided by ag_nss_group_member() ("autogroup explain" uses the
 * same): the primary gid, or the user's name among the members. Unlike
 * pam_modutil_user_in_group_nam_nam(), which reports an NSS error (a
 * directory that is down) as "not a member", an error is logged here, once:
 * ag_policy_resolve() asks about no further group after it. */
static int in_group(void *userdata, const char *group) {
        struct group_ctx *g = userdata;
        int r;

        r = ag_nss_group_member(group, g->user, g->gid);
        if (r < 0)
                pam_syslog(g->pamh, LOG_WARNING,
                           "cannot look up group %s (%s; is the directory down?): "
                           "@group rules not applied to %s for this login", group, strerror(-r), g->user);
        return r;
}

/* The user the login is for, and this handle's state (state.c), which
 * keeps what open found for close. false: one line said why. */
static bool open_user(pam_handle_t *pamh, const struct passwd **ret_pw, struct login_data **ret_d) {
        const struct passwd *pw;
        const char *user = NULL;
        struct login_data *d;

        if (pam_get_item(pamh, PAM_USER, (const void **) &user) != PAM_SUCCESS || !user || !*user) {
                pam_syslog(pamh, LOG_ERR, "no user name, session not grouped");
                return false;
        }
        pw = pam_modutil_getpwnam(pamh, user);
        d = login_data_new(pamh, pw);
        if (!d) {
                pam_syslog(pamh, LOG_CRIT, "out of memory");
                return false;
        }
        if (!pw) {
                pam_syslog(pamh, LOG_NOTICE, "unknown user %s, session not grouped", user);
                return false;
        }
        /* Rules, groups, logs and audit records use the account's own name,
         * whatever case or form the client passed. */
        if (strcmp(pw->pw_name, user) != 0)
                pam_syslog(pamh, LOG_INFO, "PAM user %s is account %s (uid %lu): rules matched for %s", user,
                           pw->pw_name, (unsigned long) pw->pw_uid, pw->pw_name);
        *ret_pw = pw;
        *ret_d = d;
        return true;
}

/* The config, the user's policy and their pool's. false: one line said why. */
static bool open_policy(pam_handle_t *pamh, const struct module_ctl *ctl, const struct passwd *pw,
                        const char *user, AgConfig **ret_config, AgPolicy *ret_policy, AgPolicy *ret_pool_policy) {
        struct group_ctx g = { .pamh = pamh, .user = user, .gid = pw->pw_gid };
        int r;

        r = ag_config_load(ctl->conf, 0, config_error, pamh, ret_config);
        if (r < 0) {
                pam_syslog(pamh, LOG_CRIT, "cannot load %s: %s", ctl->conf, strerror(-r));
                return false;
        }
        ag_policy_resolve(*ret_config, user, pw->pw_uid, in_group, &g, ret_policy);
        ag_pool_policy_resolve(*ret_config, ret_policy->pool, ret_pool_policy);
        return true;
}

/* A login that got its group (or stepped aside): its lines and audit
 * records, and what it is handed. The PAM result. */
static int opened(struct module_events *ev, const AgLogin *l, const AgPolicy *policy) {
        switch (l->state) {
        case AG_LOGIN_NESTED:
                env_nested(ev->pamh, ev->ctl, l, policy);
                return PAM_IGNORE;
        case AG_LOGIN_SLICE:
                env_slice(ev->pamh, policy);
                opened_slice(ev, l, policy);
                return PAM_SUCCESS;
        default:
                opened_session(ev, l, policy);
                env_session(ev->pamh, l->session->path, policy);
                return PAM_SUCCESS;
        }
}

int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        _cleanup_(config_freep) AgConfig *config = NULL;
        AgLoginFailure f = { .step = AG_STEP_NONE };
        AgPolicy policy, pool_policy;
        struct module_events ev;
        struct module_ctl ctl;
        const struct passwd *pw;
        struct login_data *d;
        const void *tty = NULL;
        AgLogin *l;
        int r;

        (void) flags;
        ctl.flags = _pam_parse(pamh, argc, argv, &ctl);
        if (login_data_get(pamh)) {
                (void) aside_count(pamh, +1);
                if (AG_DEBUG(&ctl))
                        pam_syslog(pamh, LOG_DEBUG, "pam_autogroup is in this stack more than once: "
                                   "an earlier line opened this session, this one steps aside");
                return PAM_IGNORE;
        }
        if (!open_user(pamh, &pw, &d) || !open_policy(pamh, &ctl, pw, d->user, &config, &policy, &pool_policy))
                return fail_rc(&ctl);
        if (ag_login_new(ctl.mode, &d->login) < 0) {
                pam_syslog(pamh, LOG_CRIT, "out of memory");
                return fail_rc(&ctl);
        }
        l = d->login;
        log_policy(pamh, &ctl, d->user, l, &policy, &pool_policy);

        module_events_init(&ev, pamh, &ctl, d->user, pw->pw_uid);
        (void) pam_get_item(pamh, PAM_TTY, &tty);
        AgLoginParams p = {
                .root = ctl.root,
                .uid = pw->pw_uid,
                .gid = pw->pw_gid,
                .policy = &policy,
                .pool_policy = &pool_policy,
                .config = config,
                .delegate = ctl.delegate > 0,
                .logind_session = pam_getenv(pamh, "XDG_SESSION_ID") != NULL,
                .logind_session_id = pam_getenv(pamh, "XDG_SESSION_ID"),
                .terminal = ag_tty_is_terminal(tty),
                .events = &ev.sink,
        };
        r = ag_login_open(l, &p, &f);
        log_latency(&ev, &policy, l);
        if (l->mode == AG_MODE_SYSTEMD && ((r >= 0 && l->state == AG_LOGIN_SLICE) || f.step == AG_STEP_SLICE))
                env_session_weight(pamh, &policy, p.logind_session);
        log_where(pamh, &ctl, d->user, l, r >= 0 && l->state == AG_LOGIN_NESTED);
        if (r < 0) {
                log_failure(pamh, d->user, l, &p, &f, r);
                r = fail_rc(&ctl);
        } else
                r = opened(&ev, l, &policy);
        ag_audit_done(&ev.audit);
        return r;
}

int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        struct module_events ev;
        struct module_ctl ctl;
        const char *user = NULL;
        struct login_data *d;
        AgLoginEnd end;
        AgLogin *l;
        int r, ret = PAM_IGNORE;

        (void) flags;
        ctl.flags = _pam_parse(pamh, argc, argv, &ctl);
        (void) pam_get_item(pamh, PAM_USER, (const void **) &user);
        d = login_data_get(pamh);
        /* An instance that stepped aside at open (the module twice in the
         * stack): the earlier line has closed the session already. */
        if (!d && aside_count(pamh, -1)) {
                if (AG_DEBUG(&ctl))
                        pam_syslog(pamh, LOG_DEBUG, "pam_autogroup is in this stack more than once: "
                                   "an earlier line closed this session, this one steps aside");
                return PAM_IGNORE;
        }
        /* A handle open never saw: only then is NSS asked here. */
        if (!d && !(d = login_data_new(pamh, user ? pam_modutil_getpwnam(pamh, user) : NULL)))
                return PAM_IGNORE;
        if (!d->login && ag_login_new(ctl.mode, &d->login) < 0)
                goto done;
        l = d->login;
        if (l->state == AG_LOGIN_NESTED)        /* open stepped aside: nothing of ours to close */
                goto done;

        module_events_init(&ev, pamh, &ctl, d->user ? d->user : user ? user : "?", d->uid);
        AgLoginCloseParams p = {
                .root = ctl.root,
                .uid = d->uid,
                .user_known = d->known,
                .logind_session = pam_getenv(pamh, "XDG_SESSION_ID") != NULL,
                .events = &ev.sink,
        };
        if (l->mode == AG_MODE_SYSTEMD && !p.logind_session)
                pam_syslog(pamh, LOG_NOTICE, "systemd mode, but this login had no logind session "
                           "(pam_systemd is not in the session stack, or it failed): its processes were "
                           "outside the user slice and not grouped");
        if (l->mode == AG_MODE_CGROUPFS && l->state == AG_LOGIN_GROUPED)
                log_moved(pamh, &ctl, l);
        r = ag_login_close(l, &p, &end);
        if (l->mode == AG_MODE_SYSTEMD)
                closed_slice(pamh, &ctl, ev.user, p.logind_session, r);
        else if (l->state == AG_LOGIN_GROUPED) {
                ret = closed_session(&ev, l, &end, r);
                /* also when the caller stayed in the session (its origin
                 * unknown or gone): the watcher leaves it first */
                if (end.lingering)
                        watch_start(pamh, &ctl, ev.user, ev.uid, l);
        }
        ag_audit_done(&ev.audit);
done:
        login_data_drop(pamh);
        return ret;
}
