/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The module's audit records (libaudit, AUDIT_TRUSTED_APP, under
 * HAVE_LIBAUDIT): "op=autogroup-... acct=USER [pam_user=NAME] uid=UID
 * cgroup=PATH [fields]". One connection per session call: opened at its
 * first record, shared by the records of that call (a close writes one for
 * each group it removes), closed by ag_audit_done() before the call
 * returns. */

#include <stdbool.h>
#include <sys/types.h>

#include <security/pam_modules.h>

typedef struct AgAuditConn {
        pam_handle_t *pamh;
        bool enabled;                  /* false with the option noaudit */
        bool debug;                    /* each record also as a debug line */
        int fd;
        bool opened;
} AgAuditConn;

#define AG_AUDIT_CONN_INIT(h_, enabled_, debug_) \
        { .pamh = (h_), .enabled = (enabled_), .debug = (debug_), .fd = -1, .opened = false }

/* extra: more " key=value" fields after cgroup=, or NULL. A kernel without
 * audit is not an error; any other failure is one log line. */
void ag_audit_record(AgAuditConn *a, const char *op, const char *user, uid_t uid, const char *path,
                     const char *extra);

void ag_audit_done(AgAuditConn *a);
