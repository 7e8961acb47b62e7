/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* The module's root= from AUTOGROUP_SESSION, used only when the process's
 * real cgroup and root-owned groups confirm it. See hint.h. */

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hint.h"
#include "pool.h"
#include "session.h"
#include "util.h"

static bool path_is_at_or_below(const char *path, const char *prefix) {
        size_t n = strlen(prefix);
        return strncmp(path, prefix, n) == 0 && (path[n] == 0 || path[n] == '/');
}

static int owned_by_root(int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        return st.st_uid == 0 ? 0 : -EPERM;
}

int ag_root_from_hint(const AgHierarchy *h, const char *hint, pid_t pid, uid_t uid, char *ret_root, size_t size) {
        _cleanup_free_ char *copy = NULL, *current = NULL;
        _cleanup_close_ int mfd = -1, rfd = -1, pfd = -1, ufd = -1;
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
        if (!path_is_at_or_below(current, hint))
                return -ESRCH;

        /* <root>, pool-<name> and user-<uid> are the module's: root-owned directories. */
        r = ag_hierarchy_open(h, &mfd);
        if (r >= 0)
                r = ag_cg_open(mfd, c[0], &rfd);
        if (r >= 0)
                r = owned_by_root(rfd);
        if (r >= 0)
                r = ag_pool_parent_find(rfd, pool, &pfd);
        if (r >= 0)
                r = owned_by_root(pfd);
        if (r >= 0)
                r = ag_cg_open(pfd, c[u], &ufd);
        if (r >= 0)
                r = owned_by_root(ufd);
        if (r < 0)
                return r;

        strcpy(ret_root, c[0]);
        return 0;
}

int ag_session_of_path(const char *path, const char *root, uid_t *ret_uid, const char **ret_session,
                       size_t *ret_session_len) {
        size_t n = strlen(root);
        const char *p, *e;
        char comp[AG_ROOT_NAME_MAX + 16];
        uid_t uid;

        if (!path || path[0] != '/' || strncmp(path + 1, root, n) != 0 || path[n + 1] != '/')
                return -ENOENT;
        p = path + n + 2;
        for (unsigned i = 0; i < 2; i++) {
                const char *pool = NULL;

                e = strchrnul(p, '/');
                if ((size_t) (e - p) >= sizeof comp)
                        return -ENOENT;
                memcpy(comp, p, (size_t) (e - p));
                comp[e - p] = 0;
                if (ag_user_group_parse(comp, &uid) >= 0)
                        break;
                if (i > 0 || *e != '/' || ag_pool_group_parse(comp, &pool) < 0)
                        return -ENOENT;
                p = e + 1;
        }
        if (*e != '/' || !e[1] || e[1] == '/')
                return -ENOENT;
        p = e + 1;
        e = strchrnul(p, '/');
        *ret_uid = uid;
        if (ret_session) {
                *ret_session = p;
                *ret_session_len = (size_t) (e - p);
        }
        return 0;
}

bool ag_session_name_matches_audit(const char *name, size_t len, unsigned long audit_session) {
        char want[32];
        int n;

        if (audit_session == AG_AUDIT_SESSION_UNSET)
                return true;
        n = snprintf(want, sizeof want, "s%lu", audit_session);
        if (n <= 0 || len < (size_t) n || strncmp(name, want, (size_t) n) != 0)
                return false;
        return len == (size_t) n || name[n] == '-';
}
