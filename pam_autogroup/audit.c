/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The module's audit records: see audit.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#ifdef HAVE_LIBAUDIT
#include <libaudit.h>
#endif

#include <security/pam_ext.h>

#include "audit.h"

void ag_audit_done(AgAuditConn *a) {
#ifdef HAVE_LIBAUDIT
        if (a->fd >= 0)
                audit_close(a->fd);
#endif
        a->fd = -1;
        a->opened = false;
}

void ag_audit_record(AgAuditConn *a, const char *op, const char *user, uid_t uid, const char *path,
                     const char *extra) {
#ifdef HAVE_LIBAUDIT
        pam_handle_t *pamh = a->pamh;
        const void *tty = NULL, *rhost = NULL, *typed = NULL;
        char msg[768], *acct, *typed_field = NULL;

        if (!a->enabled)
                return;
        if (!a->opened) {
                a->opened = true;
                a->fd = audit_open();
                if (a->fd < 0 && errno != EINVAL && errno != EPROTONOSUPPORT && errno != EAFNOSUPPORT)
                        pam_syslog(pamh, LOG_ERR, "audit_open: %m");
        }
        if (a->fd < 0)
                return;
        acct = audit_encode_nv_string("acct", user, 0);
        (void) pam_get_item(pamh, PAM_TTY, &tty);
        (void) pam_get_item(pamh, PAM_RHOST, &rhost);
        /* PAM_USER as the client gave it, when it is not the account's name */
        if (pam_get_item(pamh, PAM_USER, &typed) == PAM_SUCCESS && typed && strcmp(typed, user) != 0)
                typed_field = audit_encode_nv_string("pam_user", typed, 0);
        snprintf(msg, sizeof msg, "op=%s %s%s%s uid=%lu cgroup=%s%s%s", op, acct ? acct : "acct=?",
                 typed_field ? " " : "", typed_field ? typed_field : "", (unsigned long) uid, path,
                 extra ? " " : "", extra ? extra : "");
        free(acct);
        free(typed_field);
        if (audit_log_user_message(a->fd, AUDIT_TRUSTED_APP, msg, rhost, NULL, tty, 1) <= 0 && errno != EPERM &&
            errno != ECONNREFUSED)
                pam_syslog(pamh, LOG_ERR, "cannot write audit record: %m");
        if (a->debug)
                pam_syslog(pamh, LOG_DEBUG, "audit: %s", msg);
#else
        (void) a;
        (void) op;
        (void) user;
        (void) uid;
        (void) path;
        (void) extra;
#endif
}
