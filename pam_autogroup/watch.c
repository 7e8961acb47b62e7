/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The watcher of a closed session that still holds processes
 * (ag_login_watch): started by close, it removes the session once they
 * exit, with the module's lines for what it removed. See module.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_ext.h>

#include "module.h"

/* How long the watcher of a closed session that still holds processes
 * waits for them to exit (then "autogroup gc", run by a timer, removes it). */
#define WATCH_TIMEOUT_MS 60000

/* The watcher's context: its sink first, so that the sink's userdata
 * (what ag_login_watch hands to watch_done) is this struct too. */
struct watch_ctx {
        struct module_events ev;
        const AgLogin *login;
};

/* The watcher's end, in the watcher: the session's accounting line when
 * it removed the session itself (the CPU time and wall time up to then). */
static void watch_done(void *userdata, int r, const AgLoginEnd *end) {
        struct watch_ctx *w = userdata;
        const AgLogin *l = w->login;

        if (end)
                log_session_end(&w->ev, l->session->path, AG_ACCT_SCOPE_SESSION, end->have_usage ? &end->usage : NULL,
                                l->acct ? (long long) ag_acct_wall_usec(l->acct) : -1, "removed", w->ev.by);
        ag_audit_done(&w->ev.audit);
        if (r == -EALREADY && AG_DEBUG(w->ev.ctl))
                pam_syslog(w->ev.pamh, LOG_DEBUG, "%s%s: another watcher of the user runs (one a user): left to its "
                           "last sweep, the user's next login or close, or autogroup gc", l->hierarchy->mount,
                           l->session->path);
        else if (r < 0 && AG_DEBUG(w->ev.ctl))
                pam_syslog(w->ev.pamh, LOG_DEBUG, "%s%s %s, left for autogroup gc", l->hierarchy->mount,
                           l->session->path, r == -ETIMEDOUT || r == -EBUSY ? "still holds processes" : strerror(-r));
}

void watch_start(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, uid_t uid, const AgLogin *l) {
        const char *mount = l->hierarchy->mount, *path = l->session->path;
        struct watch_ctx wc = { .login = l };
        int r;

        module_events_init(&wc.ev, pamh, ctl, user, uid);
        wc.ev.by = "watcher";
        r = ag_login_watch(l, WATCH_TIMEOUT_MS, &wc.ev.sink, watch_done);
        if (r < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot fork the watcher of %s%s: %s", mount, path, strerror(-r));
        else if (AG_DEBUG(ctl))
                pam_syslog(pamh, LOG_DEBUG, "%s%s: removed once its processes exit (watched for at most %d s)",
                           mount, path, WATCH_TIMEOUT_MS / 1000);
}
