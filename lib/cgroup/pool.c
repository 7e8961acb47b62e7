/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Sweeps, place by place: a user's emptied sessions and user group in one
 * place, the places a user left (with their cpuacct mirrors), pool
 * directories once empty, and gc of everything below <root>. See pool.h. */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "acct.h"
#include "lane.h"
#include "place.h"
#include "pool.h"
#include "util.h"

/* "/<place>[/<name>[/<sub>]]" (name, sub may be NULL). */
static void group_path(char *path, size_t size, const char *place, const char *name, const char *sub) {
        snprintf(path, size, "/%s%s%s%s%s", place, name ? "/" : "", name ? name : "", sub ? "/" : "",
                 sub ? sub : "");
}

/* Tells events of the group removed at "/<place>[/<name>[/<sub>]]"; usage: a
 * session's figures (AgEvents.removed), else NULL. */
static void report(const AgEvents *events, const char *place, const char *name, const char *sub,
                   const AgCpuUsage *usage) {
        char path[512];

        if (!ag_events_want_removed(events))
                return;
        group_path(path, sizeof path, place, name, sub);
        ag_events_removed(events, path, usage);
}

/* A session of the user's that lives on in a place the user left (their
 * pool changed). On cgroup v1 the kernel lets a user move any process of
 * theirs into a group whose cgroup.procs they own, wherever the process is
 * now (__cgroup1_procs_write checks uids, not the source), so with its
 * leaves the user could keep putting new work under the old place's policy.
 * The cgroup.procs of the session and of its groups one level down (root's
 * leaves) go back to root, at most max_dirs of them; the processes already
 * there stay. */
static void disarm_session(int ufd, const char *name, unsigned max_dirs) {
        _cleanup_close_ int sfd = -1;
        struct dirent *de;
        unsigned k = 0;
        DIR *d;

        if (ag_cg_open(ufd, name, &sfd) < 0)
                return;
        (void) fchownat(sfd, "cgroup.procs", 0, 0, AT_SYMLINK_NOFOLLOW);
        if (ag_opendir_dup(sfd, &d) < 0)
                return;
        while ((de = readdir(d)) && k < max_dirs) {
                char procs[NAME_MAX + sizeof "/cgroup.procs"];

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                k++;
                if (snprintf(procs, sizeof procs, "%s/cgroup.procs", de->d_name) < (int) sizeof procs)
                        (void) fchownat(sfd, procs, 0, 0, AT_SYMLINK_NOFOLLOW);
        }
        closedir(d);
}

/* Where the processes of a place the user left go: the user's group in the
 * place they live in now (ufd): its shared group (place.h) for a user with
 * sessions, else the user group itself. Opened (made) at the first process. */
typedef struct Evict {
        int ufd;
        bool shared;
        bool in_place;          /* gc: into the shared group of the very user group swept (ufd set there) */
        int fd;                 /* the destination, -1 until needed */
        bool failed;
} Evict;

static int evict_dest(Evict *e) {
        if (e->fd < 0 && !e->failed) {
                if (e->shared) {
                        if (ag_cg_mkdir_open_0755(e->ufd, AG_SHARED_GROUP, NULL, &e->fd) < 0)
                                e->fd = -1;
                } else
                        e->fd = fcntl(e->ufd, F_DUPFD_CLOEXEC, 3);
                e->failed = e->fd < 0;
        }
        return e->fd;
}

/* Rounds of moves out of one session: a process that forks while it is
 * moved leaves its child behind, which the next round takes. */
#define EVICT_ROUNDS 4

/* Empties the session name below ufd into e's destination: every process of
 * it, root's caller included. 0 when it is empty now, 1 when not. */
static int evict_session(int ufd, const char *name, Evict *e, unsigned max_dirs) {
        int dest = evict_dest(e);

        for (unsigned round = 0; dest >= 0 && round < EVICT_ROUNDS; round++) {
                unsigned budget = max_dirs;

                (void) ag_cg_move_procs_below(ufd, name, dest, AG_SESSION_MAX_DEPTH, &budget);
                budget = max_dirs;
                if (ag_cg_subtree_populated(ufd, name, AG_SESSION_MAX_DEPTH, &budget) == 0)
                        return 0;
        }
        return 1;
}

/* ag_user_sweep; evict (a place the user left): a session that holds
 * processes is emptied into evict's destination and removed, and one that
 * still holds some after that is disarmed (disarm_session); max_sessions:
 * how many session directories it visits at most */
static int user_sweep(int rootfd, const char *root, uid_t uid, bool remove_user_group, Evict *evict,
                      unsigned max_dirs, unsigned max_sessions, const AgEvents *events) {
        _cleanup_close_ int ufd = -1;
        char ugroup[64];
        unsigned count = 0, dirs = 0;
        DIR *d;
        struct dirent *de;
        int r;

        r = ag_user_group_name(uid, ugroup, sizeof ugroup);
        if (r < 0)
                return r;
        /* A user group without sessions goes with one rmdir (what the end of
         * the sweep would do), and then there is nothing left to sweep. */
        r = remove_user_group ? ag_cg_rmdir_or_open(rootfd, ugroup, &ufd) : ag_cg_open(rootfd, ugroup, &ufd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (r > 0) {
                report(events, root, ugroup, NULL, NULL);
                return 1;
        }

        if (evict && evict->in_place)
                evict->ufd = ufd;
        /* processes in the user group itself (sessions no; the v1 fallback) */
        if (evict && evict_dest(evict) >= 0)
                (void) ag_cg_move_procs_below(rootfd, ugroup, evict->fd, 0, NULL);
        /* No session below the user group: nothing to read. */
        if (ag_cg_no_children(ufd))
                goto sessions_done;
        r = ag_opendir_dup(ufd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                unsigned budget = max_dirs, n = 0;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                if (++dirs > max_sessions)
                        break;          /* the rest is left to gc: a fixed cost whatever the user left */
                /* A live session keeps its empty leaves: only a session that is
                 * empty as a whole goes, so a user's fresh leaf is never pulled
                 * away between its mkdir and the move into it. */
                if (ag_cg_subtree_populated(ufd, de->d_name, AG_SESSION_MAX_DEPTH, &budget) != 0 &&
                    (!evict || (evict->in_place && strcmp(de->d_name, AG_SHARED_GROUP) == 0) ||
                     evict_session(ufd, de->d_name, evict, max_dirs) != 0)) {
                        if (evict && !(evict->in_place && strcmp(de->d_name, AG_SHARED_GROUP) == 0))
                                disarm_session(ufd, de->d_name, max_dirs);
                        continue;
                }
                /* Its CPU time, final now that it is empty, before it goes
                 * (the session's accounting line at its removal). */
                AgCpuUsage u = { -1, -1, -1 };
                if (ag_events_want_removed(events)) {
                        char path[512];

                        group_path(path, sizeof path, root, ugroup, de->d_name);
                        (void) ag_acct_read_session_at(ufd, de->d_name, path, &u);
                }
                budget = max_dirs;
                if (ag_cg_remove_empty(ufd, de->d_name, AG_SESSION_MAX_DEPTH, &budget, &n) == 0 && n > 0) {
                        count++;
                        report(events, root, ugroup, de->d_name, &u);
                }
        }
        closedir(d);

sessions_done:
        if (evict && evict->in_place) {
                evict->fd = safe_close(evict->fd);
                evict->failed = false;
        }
        if (remove_user_group) {
                ufd = safe_close(ufd);
                if (unlinkat(rootfd, ugroup, AT_REMOVEDIR) == 0) {
                        count++;
                        report(events, root, ugroup, NULL, NULL);
                }
        }
        return (int) count;
}

int ag_user_sweep(int rootfd, const char *root, uid_t uid, bool remove_user_group, unsigned max_dirs,
                  const AgEvents *events) {
        return user_sweep(rootfd, root, uid, remove_user_group, NULL, max_dirs, AG_SWEEP_MAX_SESSIONS, events);
}

int ag_user_closed_sessions(int ufd) {
        struct dirent *de;
        unsigned dirs = 0;
        int n = 0, r;
        DIR *d;

        if (ag_cg_no_children(ufd))
                return 0;
        r = ag_opendir_dup(ufd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d)) && dirs < AG_SWEEP_MAX_SESSIONS) {
                char login[NAME_MAX + sizeof "/" AG_LOGIN_LEAF];
                struct stat st;

                if (de->d_type != DT_DIR || de->d_name[0] == '.' || strcmp(de->d_name, AG_SHARED_GROUP) == 0)
                        continue;
                dirs++;
                if (snprintf(login, sizeof login, "%s/" AG_LOGIN_LEAF, de->d_name) >= (int) sizeof login)
                        continue;
                if (fstatat(ufd, login, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
                        n++;
                else {
                        _cleanup_close_ int sfd = -1;
                        char c;

                        if (ag_cg_open(ufd, de->d_name, &sfd) >= 0 && fgetxattr(sfd, AG_CLOSED_XATTR, &c, 1) >= 0)
                                n++;
                }
        }
        closedir(d);
        return n;
}

int ag_user_sweep_at(int mfd, const char *root, uid_t uid, const AgEvents *events) {
        _cleanup_close_ int rfd = -1;
        int r;

        r = ag_cg_open_if_exists(mfd, root, &rfd);
        if (r <= 0)
                return r;
        return ag_user_sweep(rfd, root, uid, true, AG_SESSION_MAX_DIRS, events);
}

/* Removes the pool directory dirname ("pool-<name>", the place "<place>")
 * below rfd when it is empty: 1 when removed, else 0. rmdir on cgroupfs
 * removes only a group without children: a pool other users still live in
 * stays. */
static int remove_pool_if_empty(int rfd, const char *dirname, const char *place, const AgEvents *events) {
        if (unlinkat(rfd, dirname, AT_REMOVEDIR) < 0)
                return 0;
        report(events, place, NULL, NULL, NULL);
        return 1;
}

/* ag_pool_sweep_place; evict as user_sweep */
static int pool_sweep_place(int rfd, const char *root, const char *pool, uid_t uid, bool remove_user_group,
                            Evict *evict, unsigned max_dirs, const AgEvents *events) {
        _cleanup_close_ int pfd = -1;
        char name[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1], place[AG_PLACE_MAX];
        int r, n;

        if (!pool || !*pool)
                return user_sweep(rfd, root, uid, remove_user_group, evict, max_dirs, AG_SWEEP_MAX_SESSIONS,
                                  events);

        r = ag_pool_group_name(pool, name, sizeof name);
        if (r >= 0)
                r = ag_pool_place(root, pool, place, sizeof place);
        if (r >= 0)
                r = ag_cg_open_if_exists(rfd, name, &pfd);
        if (r <= 0)
                return r;
        n = user_sweep(pfd, place, uid, remove_user_group, evict, max_dirs, AG_SWEEP_MAX_SESSIONS, events);
        if (n < 0)
                return n;
        pfd = safe_close(pfd);
        /* Only when this sweep removed something (the user group at least):
         * most logins then cost no rmdir for the pools they are not in. */
        if (remove_user_group && n > 0)
                n += remove_pool_if_empty(rfd, name, place, events);
        return n;
}

int ag_pool_sweep_place(int rfd, const char *root, const char *pool, uid_t uid, bool remove_user_group,
                        unsigned max_dirs, const AgEvents *events) {
        return pool_sweep_place(rfd, root, pool, uid, remove_user_group, NULL, max_dirs, events);
}

/* The pool a rule names (a pool item or a pool:NAME line), or NULL. */
static const char *rule_pool(const AgRule *rule) {
        return rule->kind == AG_DOMAIN_POOL ? rule->name : rule->item == AG_ITEM_POOL ? rule->str : NULL;
}

/* Was pool named by an earlier rule than index i? Keeps one visit per pool. */
static bool seen_before(const AgConfig *config, size_t i, const char *pool) {
        for (size_t j = 0; j < i; j++) {
                const char *name = rule_pool(&config->rules[j]);
                if (name && strcmp(name, pool) == 0)
                        return true;
        }
        return false;
}

/* The cpuacct mirrors of the places swept (lib/cgroup/acct.c): <cpuacct>/<root> is
 * opened at the first place, and only once. */
typedef struct MirrorSweep {
        const AgHierarchy *h;
        const char *root;
        int fd;                 /* <cpuacct>/<root>, -1 until opened */
        bool tried;
} MirrorSweep;

static void mirror_sweep_place(MirrorSweep *m, const char *pool, uid_t uid) {
        if (!m->h)
                return;
        if (!m->tried) {
                m->tried = true;
                if (ag_acct_root_open(m->h, m->root, &m->fd) < 0)
                        m->fd = -1;
        }
        if (m->fd >= 0)
                (void) ag_acct_sweep_place(m->fd, pool, uid);
}

int ag_pool_sweep_other_places(const AgHierarchy *h, int rfd, const char *root, uid_t uid, const char *current,
                               const AgConfig *config, int ufd, bool sessions, const AgEvents *events) {
        MirrorSweep m = { .h = h, .root = root, .fd = -1 };
        Evict e = { .ufd = ufd, .shared = sessions, .fd = -1, .failed = ufd < 0 };
        bool in_pool = current && *current;
        int total = 0, r;

        /* The plain place <root>/user-<uid>, when the user now lives in a pool. */
        if (in_pool) {
                r = user_sweep(rfd, root, uid, true, &e, AG_SESSION_MAX_DIRS, AG_SWEEP_MAX_SESSIONS, events);
                if (r > 0)
                        total += r;
                mirror_sweep_place(&m, NULL, uid);
        }
        for (size_t i = 0; config && i < config->n_rules; i++) {
                const char *pool = rule_pool(&config->rules[i]);

                if (!pool || (in_pool && strcmp(pool, current) == 0) || seen_before(config, i, pool))
                        continue;
                r = pool_sweep_place(rfd, root, pool, uid, true, &e, AG_SESSION_MAX_DIRS, events);
                if (r > 0)
                        total += r;
                /* Its mirrors too, whatever the cpu side found: v1 hierarchies
                 * are independent, so a mirror may outlive its session. */
                mirror_sweep_place(&m, pool, uid);
        }
        m.fd = safe_close(m.fd);
        e.fd = safe_close(e.fd);
        return total;
}

/* Which pools the module's configs name, for gc (NULL: not known). */
typedef struct GcNamed {
        const AgConfig *const *configs;
        size_t n;
} GcNamed;

static bool pool_named(const GcNamed *named, const char *pool) {
        if (!named)
                return true;
        for (size_t c = 0; c < named->n; c++)
                for (size_t i = 0; named->configs[c] && i < named->configs[c]->n_rules; i++) {
                        const char *name = rule_pool(&named->configs[c]->rules[i]);

                        if (name && strcmp(name, pool) == 0)
                                return true;
                }
        return false;
}

static int gc_pool(int rfd, const char *root, const char *dirname, const GcNamed *named, const AgEvents *events);

/* gc of the place dirname below parent_fd ("<place>" below the hierarchy):
 * every user group in it, with the gc budget, and when pools (the place is
 * <root>) every pool directory in it (gc_pool). close: a place no config
 * names any more, closed (ag_gc). Returns the number removed, -ENOENT when
 * the place does not exist, or another -errno. */
static int gc_place(int parent_fd, const char *dirname, const char *place, bool pools, bool close,
                    const GcNamed *named, const AgEvents *events) {
        _cleanup_close_ int pfd = -1;
        struct dirent *de;
        int r, total = 0;
        DIR *d;

        r = ag_cg_open(parent_fd, dirname, &pfd);
        if (r < 0)
                return r;
        r = ag_opendir_dup(pfd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                const char *pool;
                uid_t uid;

                if (de->d_type != DT_DIR)
                        continue;
                if (pools && ag_pool_group_parse(de->d_name, &pool) >= 0)
                        r = gc_pool(pfd, place, de->d_name, named, events);
                else if (ag_user_group_parse(de->d_name, &uid) >= 0) {
                        Evict e = { .in_place = true, .shared = true, .fd = -1 };

                        r = user_sweep(pfd, place, uid, true, close ? &e : NULL, AG_GC_MAX_DIRS, 65536, events);
                        e.fd = safe_close(e.fd);
                } else
                        continue;
                if (r > 0)
                        total += r;
        }
        closedir(d);
        return total;
}

/* gc: every user group in <root>/<dirname> (a pool directory), with the gc
 * budget, then the pool directory once empty; a pool no config names is
 * closed. */
static int gc_pool(int rfd, const char *root, const char *dirname, const GcNamed *named, const AgEvents *events) {
        char place[AG_PLACE_MAX];
        const char *pool;
        int r;

        r = ag_pool_group_parse(dirname, &pool);
        if (r >= 0)
                r = ag_pool_place(root, pool, place, sizeof place);
        if (r >= 0)
                r = gc_place(rfd, dirname, place, false, !pool_named(named, pool), named, events);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        return r + remove_pool_if_empty(rfd, dirname, place, events);
}

int ag_gc(const AgHierarchy *h, const char *root, const AgConfig *const *configs, size_t n_configs,
          const AgEvents *events) {
        _cleanup_close_ int mfd = -1;
        GcNamed named = { .configs = configs, .n = n_configs };
        int r;

        r = ag_hierarchy_open(h, &mfd);
        if (r < 0)
                return r;
        r = gc_place(mfd, root, root, true, false, configs ? &named : NULL, events);
        /* the latency lanes of users who have no group left (lane.h) */
        {
                _cleanup_close_ int rfd = -1;
                int n;

                if (ag_cg_open_if_exists(mfd, root, &rfd) >= 0) {
                        n = ag_lane_gc(mfd, rfd, root, events);
                        if (n > 0 && r >= 0)
                                r += n;
                }
        }
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        /* v1 with a separate cpuacct hierarchy: the emptied mirrors too (acct.c). */
        (void) ag_acct_gc(h, root);
        return r;
}

/* gc --apply of one place: its user groups (place NULL pool: <root>). */
static int apply_place(const AgHierarchy *h, int pfd, const char *pool, ag_policy_for_fn policy_for, void *userdata,
                       unsigned *failed) {
        struct dirent *de;
        int n = 0, r;
        DIR *d;

        r = ag_opendir_dup(pfd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_close_ int ufd = -1;
                AgPolicy p;
                AgCgValues v;
                uid_t uid;

                if (de->d_type != DT_DIR || ag_user_group_parse(de->d_name, &uid) < 0)
                        continue;
                if (policy_for(userdata, uid, &p) <= 0 || strcmp(p.pool, pool ? pool : "") != 0)
                        continue;
                if (ag_cg_open(pfd, de->d_name, &ufd) < 0)
                        continue;
                ag_policy_to_values(&p, h->version, &v);
                if (ag_cg_apply(h, ufd, &v, NULL) < 0)
                        (*failed)++;
                else
                        n++;
        }
        closedir(d);
        return n;
}

int ag_gc_apply(const AgHierarchy *h, const char *root, const AgConfig *config, ag_policy_for_fn policy_for,
                void *userdata, unsigned *ret_failed) {
        _cleanup_close_ int mfd = -1, rfd = -1;
        const AgConfig *const one[] = { config };
        GcNamed named = { .configs = one, .n = 1 };
        unsigned failed = 0;
        struct dirent *de;
        int r, total;
        DIR *d;

        if (!h->has_cpu)
                return 0;
        r = ag_hierarchy_open(h, &mfd);
        if (r >= 0)
                r = ag_cg_open_if_exists(mfd, root, &rfd);
        if (r <= 0)
                return r;
        total = apply_place(h, rfd, NULL, policy_for, userdata, &failed);
        if (total < 0)
                return total;
        r = ag_opendir_dup(rfd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_close_ int pfd = -1;
                const char *pool;
                AgPolicy limits;
                AgCgValues v;

                if (de->d_type != DT_DIR || ag_pool_group_parse(de->d_name, &pool) < 0 ||
                    ag_cg_open(rfd, de->d_name, &pfd) < 0)
                        continue;
                /* a pool no line names keeps what it had (gc closes it) */
                if (!pool_named(&named, pool))
                        continue;
                /* the pool first: a member's cap above a lowered pool cap is refused */
                ag_pool_policy_resolve(config, pool, &limits);
                ag_policy_to_values(&limits, h->version, &v);
                if (ag_cg_apply(h, pfd, &v, NULL) < 0)
                        failed++;
                else
                        total++;
                r = apply_place(h, pfd, pool, policy_for, userdata, &failed);
                if (r > 0)
                        total += r;
        }
        closedir(d);
        if (ret_failed)
                *ret_failed = failed;
        return total;
}
