/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Where a user's group lives: the names of <root>, pool-<name>, user-<uid>
 * and the session directories, the one parser of a session's path, and the
 * opening (for a pool, the making) of a place's directory. See place.h for
 * the layout and the library's layers. */

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "place.h"
#include "util.h"

int ag_session_name(unsigned long audit_session, pid_t pid, uint64_t suffix, char *buf, size_t size) {
        int n;

        assert(buf);

        if (audit_session != AG_AUDIT_SESSION_UNSET)
                n = suffix == 0 ? snprintf(buf, size, "s%lu", audit_session)
                                : snprintf(buf, size, "s%lu-%" PRIu64, audit_session, suffix);
        else if (pid > 0)
                n = suffix == 0 ? snprintf(buf, size, "p%" PRIiMAX, (intmax_t) pid)
                                : snprintf(buf, size, "p%" PRIiMAX "-%" PRIu64, (intmax_t) pid, suffix);
        else
                return -EINVAL;
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

int ag_root_leaf_name(unsigned i, char *buf, size_t size) {
        int n;

        if (i < 1 || i > AG_LEAVES_MAX)
                return -EINVAL;
        n = snprintf(buf, size, AG_ROOT_LEAF_PREFIX "%u", i);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

int ag_class_leaf_name(AgLatency l, char *buf, size_t size) {
        int n;

        if (l != AG_LATENCY_INTERACTIVE && l != AG_LATENCY_AUDIO)
                return -EINVAL;
        n = snprintf(buf, size, AG_CLASS_LEAF_PREFIX "%s", ag_latency_to_string(l));
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

bool ag_root_leaf_name_valid(const char *name) {
        char buf[32];
        unsigned long v;

        assert(name);

        if (strncmp(name, AG_ROOT_LEAF_PREFIX, strlen(AG_ROOT_LEAF_PREFIX)) == 0) {
                if (ag_safe_atoul(name + strlen(AG_ROOT_LEAF_PREFIX), AG_LEAVES_MAX, &v) < 0 ||
                    ag_root_leaf_name((unsigned) v, buf, sizeof buf) < 0)
                        return false;
                return strcmp(buf, name) == 0;         /* the canonical spelling only */
        }
        for (AgLatency l = 0; l < _AG_LATENCY_MAX; l++)
                if (ag_class_leaf_name(l, buf, sizeof buf) >= 0 && strcmp(buf, name) == 0)
                        return true;
        return false;
}

int ag_user_group_name(uid_t uid, char *buf, size_t size) {
        assert(buf);

        int n = snprintf(buf, size, AG_USER_PREFIX "%" PRIuMAX, (uintmax_t) uid);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

int ag_user_group_parse(const char *name, uid_t *ret_uid) {
        unsigned long v;
        int r;

        assert(name);

        if (strncmp(name, AG_USER_PREFIX, strlen(AG_USER_PREFIX)) != 0)
                return -EINVAL;
        r = ag_safe_atoul(name + strlen(AG_USER_PREFIX), (uid_t) -2, &v);
        if (r < 0)
                return r;
        /* "user-007" and "user-00" are not ours: only the canonical spelling is. */
        if (name[strlen(AG_USER_PREFIX)] == '0' && name[strlen(AG_USER_PREFIX) + 1] != 0)
                return -EINVAL;
        *ret_uid = (uid_t) v;
        return 0;
}

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

        assert(dirname);

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

void ag_descent_done(AgDescent *d) {
        d->sfd = safe_close(d->sfd);
        d->ufd = safe_close(d->ufd);
        d->pfd = safe_close(d->pfd);
        d->rfd = safe_close(d->rfd);
        d->mfd = safe_close(d->mfd);
}

/* -ENOENT unless fd's owner is root, or uid when uid is not (uid_t) -1. */
static int check_owner(int fd, uid_t uid) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        return st.st_uid == 0 || (uid != (uid_t) -1 && st.st_uid == uid) ? 0 : -ENOENT;
}

/* One level of the descent: dirfd/name (NULL: the place of pool below
 * dirfd) into *ret_fd, its owner checked when check. */
static int open_level(int dirfd, const char *name, const char *pool, bool check, uid_t uid, int *ret_fd) {
        _cleanup_close_ int fd = -1;
        int r;

        r = name ? ag_cg_open(dirfd, name, &fd) : ag_pool_parent_find(dirfd, pool, &fd);
        if (r >= 0 && check)
                r = check_owner(fd, uid);
        if (r < 0)
                return r == -ENOTDIR || r == -ELOOP ? -ENOENT : r;
        *ret_fd = take_fd(&fd);
        return 0;
}

int ag_descent_open(const AgHierarchy *h, const char *root, const char *pool, uid_t uid, const char *session,
                    unsigned flags, AgDescent *d) {
        bool root_owned = flags & AG_DESCENT_ROOT_OWNED;
        char ugroup[64];
        int r;

        assert(h);
        assert(root);
        assert(d);

        ag_descent_done(d);
        r = ag_user_group_name(uid, ugroup, sizeof ugroup);
        if (r >= 0)
                r = ag_hierarchy_open(h, &d->mfd);
        if (r >= 0)
                r = open_level(d->mfd, root, NULL, root_owned, -1, &d->rfd);
        if (r >= 0)
                r = open_level(d->rfd, NULL, pool, root_owned, -1, &d->pfd);
        if (r >= 0)
                r = open_level(d->pfd, ugroup, NULL, root_owned, -1, &d->ufd);
        if (r >= 0 && session)
                r = open_level(d->ufd, session, NULL, flags & AG_DESCENT_SESSION_OWNED, uid, &d->sfd);
        return r;
}

int ag_session_dir_open(const AgHierarchy *h, const char *root, uid_t uid, char *path, int *ret_sfd,
                        char **ret_session_path, char **ret_rest, bool *ret_delegated) {
        _cleanup_(ag_descent_done) AgDescent d = AG_DESCENT_NULL;
        char ugroup[64], place[AG_PLACE_MAX], *session, *rest, *pool = NULL, *spath;
        struct stat st;
        int r;

        assert(path);
        assert(ret_sfd && ret_session_path && ret_rest && ret_delegated);

        if (ag_session_path_split(path, root, uid, &session, &rest, &pool) < 0 ||
            ag_pool_place(root, pool, place, sizeof place) < 0)
                return -ENOENT;
        r = ag_user_group_name(uid, ugroup, sizeof ugroup);
        if (r >= 0)
                r = ag_descent_open(h, root, pool, uid, session, AG_DESCENT_ROOT_OWNED | AG_DESCENT_SESSION_OWNED,
                                    &d);
        if (r >= 0 && fstat(d.sfd, &st) < 0)
                r = negative_errno();
        if (r < 0)
                return r;
        if (asprintf(&spath, "/%s/%s/%s", place, ugroup, session) < 0)
                return -ENOMEM;
        *ret_sfd = take_fd(&d.sfd);
        *ret_session_path = spath;
        *ret_rest = rest;
        *ret_delegated = st.st_uid == uid && uid != 0;
        return 0;
}

int ag_pool_parent_open(const AgHierarchy *h, int rfd, const char *pool, const AgPolicy *limits, int *ret_fd,
                        bool *ret_created, const char **ret_what, int *ret_policy_error) {
        _cleanup_close_ int fd = -1;
        char name[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1];
        const char *what = NULL;
        bool created = false;
        int r, policy_error = 0;

        assert(ret_fd);

        if (!pool || !*pool) {
                if (ret_policy_error)
                        *ret_policy_error = 0;
                r = ag_pool_parent_find(rfd, NULL, ret_fd);
                if (r < 0 && ret_what)
                        *ret_what = "open the root group";
                if (r >= 0 && ret_created)
                        *ret_created = false;
                return r;
        }

        r = ag_pool_group_name(pool, name, sizeof name);
        if (r < 0) {
                what = "name the pool group";
                goto fail;
        }
        r = ag_cg_mkdir_open_0755(rfd, name, &created, &fd);
        if (r < 0) {
                what = "create the pool group";
                goto fail;
        }
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
        if (ret_created)
                *ret_created = created;
        if (ret_policy_error)
                *ret_policy_error = policy_error;
        return 0;

fail:
        /* a pool this call made goes again (a failed open leaves nothing) */
        if (created) {
                fd = safe_close(fd);
                (void) unlinkat(rfd, name, AT_REMOVEDIR);
        }
        if (ret_what)
                *ret_what = what;
        return r;
}

/* The parts of a session path, pointers into it. */
typedef struct SessionPath {
        uid_t uid;
        const char *pool;              /* the pool's name; NULL for none */
        size_t pool_len;
        const char *session;
        size_t session_len;
        const char *rest;              /* below the session, without a leading '/'; "" for none */
} SessionPath;

/* Copies the component at p (up to the next '/' or the end) into buf, with
 * *ret_end at its end. -ENOENT when it is empty or longer than a name. */
static int copy_component(const char *p, char buf[static NAME_MAX + 1], const char **ret_end) {
        size_t n = strcspn(p, "/");

        if (n == 0 || n > NAME_MAX)
                return -ENOENT;
        memcpy(buf, p, n);
        buf[n] = 0;
        *ret_end = p + n;
        return 0;
}

static int session_path_parse(const char *path, const char *root, SessionPath *ret) {
        char comp[NAME_MAX + 1];
        const char *p, *e, *pool = NULL, *name;
        size_t n, pool_len = 0;
        uid_t uid;

        if (!path || !root || path[0] != '/')
                return -ENOENT;
        /* <root> */
        p = path + 1;
        n = strcspn(p, "/");
        if (n == 0 || n != strlen(root) || strncmp(p, root, n) != 0 || p[n] != '/')
                return -ENOENT;
        p += n + 1;
        /* [pool-<name>/]user-<uid>/ */
        for (unsigned i = 0;; i++) {
                if (copy_component(p, comp, &e) < 0 || *e != '/')
                        return -ENOENT;
                if (ag_user_group_parse(comp, &uid) >= 0)
                        break;
                if (i > 0 || ag_pool_group_parse(comp, &name) < 0)
                        return -ENOENT;
                pool = p + (name - comp);
                pool_len = (size_t) (e - pool);
                p = e + 1;
        }
        /* <session>[/<rest>] */
        p = e + 1;
        n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                return -ENOENT;
        *ret = (SessionPath) {
                .uid = uid,
                .pool = pool,
                .pool_len = pool_len,
                .session = p,
                .session_len = n,
                .rest = p[n] == '/' ? p + n + 1 : p + n,
        };
        return 0;
}

int ag_session_of_path(const char *path, const char *root, uid_t *ret_uid, const char **ret_session,
                       size_t *ret_session_len) {
        assert(root);

        SessionPath sp;
        int r;

        r = session_path_parse(path, root, &sp);
        if (r < 0)
                return r;
        *ret_uid = sp.uid;
        if (ret_session) {
                *ret_session = sp.session;
                *ret_session_len = sp.session_len;
        }
        return 0;
}

int ag_session_path_split(char *path, const char *root, uid_t uid, char **ret_session, char **ret_rest,
                          char **ret_pool) {
        assert(root);

        SessionPath sp;
        char *session, *pool = NULL;
        int r;

        r = session_path_parse(path, root, &sp);
        if (r < 0)
                return r;
        if (sp.uid != uid)
                return -ENOENT;
        /* the parts are pointers into path: cut them out where they end */
        session = path + (sp.session - path);
        if (sp.pool) {
                pool = path + (sp.pool - path);
                pool[sp.pool_len] = 0;
        }
        *ret_rest = path + (sp.rest - path);
        session[sp.session_len] = 0;
        *ret_session = session;
        if (ret_pool)
                *ret_pool = pool;
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
