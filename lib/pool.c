/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Pools: the pool-<name> level between <root> and user-<uid>. */

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "acct.h"
#include "pool.h"
#include "util.h"

int ag_pool_group_name(const char *pool, char *buf, size_t size) {
        int n;

        if (!pool || !ag_pool_name_valid(pool, strlen(pool)))
                return -EINVAL;
        n = snprintf(buf, size, AG_POOL_PREFIX "%s", pool);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

int ag_pool_group_parse(const char *dirname, const char **ret_pool) {
        size_t n = strlen(AG_POOL_PREFIX);

        if (strncmp(dirname, AG_POOL_PREFIX, n) != 0 || !ag_pool_name_valid(dirname + n, strlen(dirname + n)))
                return -EINVAL;
        *ret_pool = dirname + n;
        return 0;
}

int ag_pool_place(const char *root, const char *pool, char *buf, size_t size) {
        int n;

        if (pool && *pool) {
                if (!ag_pool_name_valid(pool, strlen(pool)))
                        return -EINVAL;
                n = snprintf(buf, size, "%s/" AG_POOL_PREFIX "%s", root, pool);
        } else
                n = snprintf(buf, size, "%s", root);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

int ag_pool_parent_find(int rfd, const char *pool, int *ret_fd) {
        char name[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1];
        int fd, r;

        if (!pool || !*pool) {
                fd = fcntl(rfd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return negative_errno();
                *ret_fd = fd;
                return 0;
        }
        r = ag_pool_group_name(pool, name, sizeof name);
        if (r < 0)
                return r;
        return ag_cg_open(rfd, name, ret_fd);
}

int ag_pool_parent_open(const AgHierarchy *h, int rfd, const char *pool, const AgPolicy *limits, int *ret_fd,
                        const char **ret_what, int *ret_policy_error) {
        _cleanup_close_ int fd = -1;
        char name[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1];
        const char *what = NULL;
        bool created = false;
        int r, policy_error = 0;

        if (!pool || !*pool) {
                if (ret_policy_error)
                        *ret_policy_error = 0;
                r = ag_pool_parent_find(rfd, NULL, ret_fd);
                if (r < 0 && ret_what)
                        *ret_what = "open the root group";
                return r;
        }

        r = ag_pool_group_name(pool, name, sizeof name);
        if (r < 0) {
                what = "name the pool group";
                goto fail;
        }
        r = ag_cg_mkdir_open(rfd, name, &created, &fd);
        if (r < 0) {
                what = "create the pool group";
                goto fail;
        }
        if (created)
                (void) fchmod(fd, 0755);
        if (h->has_cpu) {
                AgCgValues v;
                AgPolicy defaults;

                if (!limits) {
                        ag_policy_init(&defaults);
                        limits = &defaults;
                }
                /* ag_cg_apply writes only what differs, as for user groups */
                ag_policy_to_values(limits, h->version, &v);
                r = ag_cg_apply(h, fd, &v, NULL);
                if (r == -ENOENT || r == -ENODEV) {
                        what = "set the pool group's cpu policy";
                        goto fail;
                }
                /* The members' logins are grouped all the same. */
                policy_error = r < 0 ? r : 0;
                r = ag_cg_enable_cpu(h, fd);
                if (r < 0) {
                        what = "enable cpu in the pool group";
                        goto fail;
                }
        }
        *ret_fd = take_fd(&fd);
        if (ret_policy_error)
                *ret_policy_error = policy_error;
        return 0;

fail:
        if (ret_what)
                *ret_what = what;
        return r;
}

int ag_pool_sweep_place(int rfd, const char *root, const char *pool, uid_t uid, bool remove_user_group,
                        unsigned max_dirs, ag_removed_fn removed, void *userdata) {
        _cleanup_close_ int pfd = -1;
        char name[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1], place[AG_PLACE_MAX];
        int r, n;

        if (!pool || !*pool)
                return ag_user_sweep(rfd, root, uid, remove_user_group, max_dirs, removed, userdata);

        r = ag_pool_group_name(pool, name, sizeof name);
        if (r >= 0)
                r = ag_pool_place(root, pool, place, sizeof place);
        if (r < 0)
                return r;
        r = ag_cg_open(rfd, name, &pfd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        n = ag_user_sweep(pfd, place, uid, remove_user_group, max_dirs, removed, userdata);
        if (n < 0)
                return n;
        pfd = safe_close(pfd);
        /* Only when this sweep removed something (the user group at least):
         * most logins then cost no rmdir for the pools they are not in.
         * rmdir on cgroupfs removes only a group without children: a pool
         * other users still live in stays. */
        if (remove_user_group && n > 0 && unlinkat(rfd, name, AT_REMOVEDIR) == 0) {
                n++;
                if (removed) {
                        char path[AG_PLACE_MAX + 1];
                        snprintf(path, sizeof path, "/%s", place);
                        removed(userdata, path);
                }
        }
        return n;
}

/* Was pool named by an earlier rule than index i? Keeps one visit per pool. */
static bool seen_before(const AgConfig *config, size_t i, const char *pool) {
        for (size_t j = 0; j < i; j++) {
                const AgRule *rule = &config->rules[j];
                const char *name = rule->kind == AG_DOMAIN_POOL ? rule->name
                                   : rule->item == AG_ITEM_POOL ? rule->str : NULL;
                if (name && strcmp(name, pool) == 0)
                        return true;
        }
        return false;
}

/* The cpuacct mirrors of the places swept (lib/acct.c): <cpuacct>/<root> is
 * opened at the first place, and only once. */
typedef struct MirrorSweep {
        const AgHierarchy *h;
        const char *root;
        int fd;                 /* <cpuacct>/<root>, -1 until opened */
        bool tried;
} MirrorSweep;

static void mirror_sweep_place(MirrorSweep *m, const char *place_dir, uid_t uid) {
        if (!m->h)
                return;
        if (!m->tried) {
                m->tried = true;
                if (ag_acct_root_open(m->h, m->root, &m->fd) < 0)
                        m->fd = -1;
        }
        if (m->fd >= 0)
                (void) ag_acct_sweep_place(m->fd, place_dir, uid);
}

int ag_pool_sweep_other_places(const AgHierarchy *h, int rfd, const char *root, uid_t uid, const char *current,
                               const AgConfig *config, ag_removed_fn removed, void *userdata) {
        MirrorSweep m = { .h = h, .root = root, .fd = -1 };
        bool in_pool = current && *current;
        int total = 0, r;

        /* The plain place <root>/user-<uid>, when the user now lives in a pool. */
        if (in_pool) {
                r = ag_user_sweep(rfd, root, uid, true, AG_SESSION_MAX_DIRS, removed, userdata);
                if (r > 0)
                        total += r;
                mirror_sweep_place(&m, NULL, uid);
        }
        for (size_t i = 0; config && i < config->n_rules; i++) {
                const AgRule *rule = &config->rules[i];
                const char *pool = rule->kind == AG_DOMAIN_POOL ? rule->name
                                   : rule->item == AG_ITEM_POOL ? rule->str : NULL;
                char name[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1];

                if (!pool || (in_pool && strcmp(pool, current) == 0) || seen_before(config, i, pool))
                        continue;
                r = ag_pool_sweep_place(rfd, root, pool, uid, true, AG_SESSION_MAX_DIRS, removed, userdata);
                if (r > 0)
                        total += r;
                /* Its mirrors too, whatever the cpu side found: v1 hierarchies
                 * are independent, so a mirror may outlive its session. */
                if (ag_pool_group_name(pool, name, sizeof name) >= 0)
                        mirror_sweep_place(&m, name, uid);
        }
        m.fd = safe_close(m.fd);
        return total;
}

int ag_pool_gc(int rfd, const char *root, const char *dirname, ag_removed_fn removed, void *userdata) {
        _cleanup_close_ int pfd = -1;
        char place[AG_PLACE_MAX];
        const char *pool;
        struct dirent *de;
        int r, total = 0;
        DIR *d;

        r = ag_pool_group_parse(dirname, &pool);
        if (r >= 0)
                r = ag_pool_place(root, pool, place, sizeof place);
        if (r < 0)
                return r;
        r = ag_cg_open(rfd, dirname, &pfd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ag_opendir_dup(pfd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                uid_t uid;

                if (de->d_type != DT_DIR || ag_user_group_parse(de->d_name, &uid) < 0)
                        continue;
                r = ag_user_sweep(pfd, place, uid, true, AG_GC_MAX_DIRS, removed, userdata);
                if (r > 0)
                        total += r;
        }
        closedir(d);
        pfd = safe_close(pfd);
        if (unlinkat(rfd, dirname, AT_REMOVEDIR) == 0) {
                total++;
                if (removed) {
                        char path[AG_PLACE_MAX + 1];
                        snprintf(path, sizeof path, "/%s", place);
                        removed(userdata, path);
                }
        }
        return total;
}
