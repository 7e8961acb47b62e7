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
 * cgroup filesystem is mounted. */
int ag_login_hierarchy(AgLogin *l);
