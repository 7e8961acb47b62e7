/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The two backends behind lib/login/login.c: what one mode does at open and at
 * close. Only login.c calls them. */

#include "login.h"

typedef struct AgLoginBackend {
        /* l->state NEW on entry; sets GROUPED, SLICE or NESTED, or fails
         * with *f naming the step. */
        int (*open)(AgLogin *l, const AgLoginParams *p, AgLoginFailure *f);
        /* ret_end zeroed by the caller */
        int (*close)(AgLogin *l, const AgLoginCloseParams *p, AgLoginEnd *ret_end);
} AgLoginBackend;

extern const AgLoginBackend ag_login_backend_cgroupfs;
extern const AgLoginBackend ag_login_backend_systemd;

/* The hierarchy, looked up now when ag_login_new() did not: -ENOENT when no
 * cgroup filesystem is mounted. Inline, so that the backends use nothing of
 * login.c and login.c nothing of theirs but the two tables (no cycle). */
static inline int ag_login_hierarchy(AgLogin *l) {
        AgHierarchy *h = NULL;
        int r;

        if (l->hierarchy)
                return 0;
        r = ag_hierarchy_find(NULL, &h);
        if (r < 0)
                return r;
        l->hierarchy = h;
        return 0;
}
