/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* The module's root= from AUTOGROUP_SESSION, used only when the process's
 * real cgroup and root-owned groups confirm it. See hint.h. */

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "hint.h"
#include "place.h"
#include "util.h"

/* The hint is parsed here, not by place.c's session-path parser: its root
 * is what is looked for (not known beforehand) and its session is optional
 * (a login with "sessions no" has none). What it names is then checked
 * against the process's own cgroup. */
int ag_root_from_hint(const AgHierarchy *h, const char *hint, pid_t pid, uid_t uid, char *ret_root, size_t size) {
        _cleanup_free_ char *copy = NULL, *current = NULL;
        _cleanup_(ag_descent_done) AgDescent d = AG_DESCENT_NULL;
        const char *pool = NULL;
        char *c[4], *p;
        unsigned n = 0, u = 1;
        uid_t hinted;
        int r;

        if (!hint || !*hint)
                return -ENOENT;
        if (hint[0] != '/' || strlen(hint) > 512)
                return -EINVAL;
        copy = strdup(hint + 1);
        if (!copy)
                return -ENOMEM;
        /* exactly "/<root>[/pool-<name>]/user-<uid>" or the same with "/<session>" */
        for (p = copy; n < 4; n++) {
                c[n] = p;
                p = strchr(p, '/');
                if (!*c[n] || (p && p == c[n]))
                        return -EINVAL;
                if (!p) {
                        n++;
                        break;
                }
                *p++ = 0;
        }
        if (p || n < 2)
                return -EINVAL;
        if (n >= 3 && ag_pool_group_parse(c[1], &pool) >= 0)
                u = 2;                  /* pools: one component more */
        if (n > u + 2 || !ag_root_name_valid(c[0]) || ag_user_group_parse(c[u], &hinted) < 0)
                return -EINVAL;
        if (n == u + 2 && (strcmp(c[u + 1], ".") == 0 || strcmp(c[u + 1], "..") == 0))
                return -EINVAL;
        if (hinted != uid)
                return -EPERM;
        if (strlen(c[0]) >= size)
                return -ENOBUFS;

        /* Where the kernel says the process is. */
        r = ag_cg_pid_path(h, pid, &current);
        if (r < 0)
                return r;
        if (!ag_cg_path_is_below(current, hint))
                return -ESRCH;

        /* <root>, pool-<name> and user-<uid> are the module's: root-owned directories. */
        r = ag_descent_open(h, c[0], pool, uid, NULL, AG_DESCENT_ROOT_OWNED, &d);
        if (r < 0)
                return r == -ENOENT ? -EPERM : r;

        strcpy(ret_root, c[0]);
        return 0;
}

int ag_root_from_cgroup(const AgHierarchy *h, pid_t pid, uid_t uid, char *ret_root, size_t size) {
        _cleanup_free_ char *path = NULL;
        char *second, *end;
        unsigned keep;
        int r;

        assert(h);

        r = ag_cg_pid_path(h, pid, &path);
        if (r < 0)
                return r;
        /* "/<root>[/pool-<name>]/user-<uid>[/<session>]": what follows the
         * session is cut, the rest checked as a hint would be */
        if (path[0] != '/')
                return -ENOENT;
        second = strchr(path + 1, '/');
        keep = second && strncmp(second + 1, AG_POOL_PREFIX, strlen(AG_POOL_PREFIX)) == 0 ? 4 : 3;
        end = path;
        for (unsigned i = 0; i < keep && end; i++)
                end = strchr(end + 1, '/');
        if (end)
                *end = 0;
        r = ag_root_from_hint(h, path, pid, uid, ret_root, size);
        return r == -EINVAL ? -ENOENT : r;
}
