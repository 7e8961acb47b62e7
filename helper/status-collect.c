/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* "autogroup status", the collecting half: the tree below <root> read from
 * cgroupfs through directory fds, bounded in depth and nodes. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acct.h"
#include "lane.h"
#include "status.h"
#include "pool.h"
#include "session.h"
#include "util.h"

typedef struct Ctx {
        const AgHierarchy *h;
        int mfd;                       /* the hierarchy's root: the latency lanes are there */
        const char *root;
        bool lanes;                    /* a lane was found */
        int acct_fd;                   /* v1: mount of a separate cpuacct hierarchy (the mirrors, lib/cgroup/acct.c), or -1 */
        bool acct_here;                /* v2, or v1 with cpuacct co-mounted with cpu */
        unsigned n_nodes;              /* pools and user groups */
        unsigned user_nodes;           /* groups below the user group being read */
} Ctx;

void ag_status_read_policy(int version, int fd, AgStatusNode *n, bool lean, AgFdBatch *batch) {
        long long v, p;
        char buf[128];

        n->weight = n->shares = -1;
        n->quota_us = -2;
        n->period_us = 0;
        n->idle = -1;

        if (version == 2) {
                if (ag_read_ll(fd, "cpu.weight", &v, batch) >= 0)
                        n->weight = (long) v;
                if (ag_read_small_file_batch(fd, "cpu.max", buf, sizeof buf, batch) >= 0) {
                        char *sp = strchr(buf, ' ');
                        if (sp) {
                                *sp = 0;
                                p = strtoll(sp + 1, NULL, 10);
                                n->period_us = p > 0 ? (unsigned long) p : 0;
                                n->quota_us = strcmp(buf, "max") == 0 ? -1 : strtoll(buf, NULL, 10);
                        }
                }
        } else {
                if (ag_read_ll(fd, "cpu.shares", &v, batch) >= 0) {
                        n->shares = (long) v;
                        /* rounded: the module writes weight * 1024 / 100
                         * truncated, so that weight 1 (10 shares) reads 1 */
                        n->weight = (long) ((v * 100 + 512) / 1024);
                }
                if (ag_read_ll(fd, "cpu.cfs_quota_us", &v, batch) >= 0) {
                        if (v < 0 && lean)
                                n->quota_us = -1;       /* no cap: its period does not matter */
                        else if (ag_read_ll(fd, "cpu.cfs_period_us", &p, batch) >= 0) {
                                n->quota_us = v < 0 ? -1 : v;
                                n->period_us = p > 0 ? (unsigned long) p : 0;
                        }
                }
        }
        /* The kernel gives an idle group the weight of SCHED_IDLE (v1
         * cpu.shares 3, v2 cpu.weight 1, or 0 before Linux 6.6) and refuses
         * another while it is idle: a group of any other weight is not idle. */
        if (lean && (version == 2 ? n->weight > 1 : n->shares > 3))
                n->idle = 0;
        else if (ag_read_ll(fd, "cpu.idle", &v, batch) >= 0)
                n->idle = v != 0;
        n->throttle = (AgCpuThrottle) { -1, -1, -1 };
        n->cpu_usec = -1;
        (void) ag_acct_read_throttle(version, fd, &n->throttle, &n->cpu_usec, batch);
}

static void read_values(Ctx *c, int fd, AgStatusNode *n) {
        ag_status_read_policy(c->h->version, fd, n, false, NULL);
        /* CPU time: the group's own cpu.stat (v2, read above) or cpuacct.*
         * (v1 cpu,cpuacct); on v1 with cpuacct on its own, its mirror
         * (sessions and above only). */
        AgCpuUsage u;
        if (n->cpu_usec >= 0)
                ;
        else if (c->acct_here && ag_acct_read_group(c->h->version, fd, &u) >= 0)
                n->cpu_usec = u.usec;
        else if (c->acct_fd >= 0) {
                _cleanup_close_ int afd = -1;
                if (ag_cg_open_path(c->acct_fd, n->path, &afd) >= 0 && ag_acct_read_group(1, afd, &u) >= 0)
                        n->cpu_usec = u.usec;
        }
        n->procs = ag_cg_count_procs(fd);
        if (n->procs < 0)
                n->procs = -1;
}

#define LOGIN_PROCS_MAX 4096

typedef struct LoginLook {
        bool unknown;                  /* a process whose status could not be read */
} LoginLook;

/* -EEXIST when pid runs with effective uid 0 */
static int root_process(pid_t pid, void *userdata) {
        LoginLook *look = userdata;
        _cleanup_close_ int fd = -1;
        char path[64], buf[2048], *p;
        unsigned long real, eff;
        ssize_t n;

        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (errno == ENOENT || errno == ESRCH)
                        return -ESRCH;
                look->unknown = true;
                return 0;
        }
        n = read(fd, buf, sizeof buf - 1);
        if (n <= 0) {
                if (n < 0 && errno == ESRCH)
                        return -ESRCH;
                look->unknown = true;
                return 0;
        }
        buf[n] = 0;
        /* "Uid:\treal\teffective\tsaved\tfs" */
        p = strstr(buf, "\nUid:");
        if (!p || sscanf(p + 5, "%lu %lu", &real, &eff) != 2) {
                look->unknown = true;
                return 0;
        }
        return eff == 0 ? -EEXIST : 0;
}

int ag_status_login_closed(int fd, uid_t uid) {
        LoginLook look = {};
        int r;

        if (fd < 0)
                return 1;
        if (uid == 0)
                return -1;
        r = ag_cg_foreach_proc(fd, LOGIN_PROCS_MAX, root_process, &look);
        if (r == -EEXIST)
                return 0;
        if (r < 0 || r >= LOGIN_PROCS_MAX || look.unknown)
                return -1;
        return 1;
}

/* Session s of the user group user: whether its login closed, from its
 * login/ (sfd: the session's directory; close removes an empty login/). */
static void session_lingering(const AgStatusNode *user, AgStatusNode *s, int sfd) {
        _cleanup_close_ int lfd = -1;
        bool listed = false;

        s->is_session = true;
        for (size_t i = 0; i < s->n_children && !listed; i++)
                listed = strcmp(s->children[i]->name, AG_LOGIN_LEAF) == 0;
        if (!listed && s->truncated) {
                s->lingering = -1;      /* not all listed: login/ may be there */
                return;
        }
        if (listed && ag_cg_open(sfd, AG_LOGIN_LEAF, &lfd) < 0) {
                s->lingering = -1;
                return;
        }
        s->lingering = ag_status_login_closed(lfd, user->uid);
}

static void node_free(AgStatusNode *n) {
        if (!n)
                return;
        node_free(n->lane);
        for (size_t i = 0; i < n->n_children; i++)
                node_free(n->children[i]);
        free(n->children);
        free(n->name);
        free(n->path);
        free(n->user_name);
        free(n);
}

AgStatus *ag_status_free(AgStatus *s) {
        if (!s)
                return NULL;
        node_free(s->tree);
        free(s->mount);
        free(s->root);
        free(s->acct_mount);
        free(s);
        return NULL;
}

static int cmp_names(const void *a, const void *b) {
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

/* below_user: a group below a user group, counted in that user's budget. */
static int node_new(Ctx *c, const char *parent_path, const char *name, unsigned depth, bool below_user,
                    AgStatusNode **ret) {
        unsigned *count = below_user ? &c->user_nodes : &c->n_nodes;
        AgStatusNode *n;

        if (*count >= (below_user ? AG_STATUS_USER_MAX_NODES : AG_STATUS_MAX_NODES))
                return -E2BIG;
        n = calloc(1, sizeof *n);
        if (!n)
                return -ENOMEM;
        n->depth = depth;
        n->lingering = -1;
        n->name = strdup(name);
        if (!n->name || asprintf(&n->path, "%s/%s", parent_path, name) < 0) {
                n->path = NULL;
                node_free(n);
                return -ENOMEM;
        }
        (*count)++;
        *ret = n;
        return 0;
}

static void free_names(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* Reads at most max subdirectory names of fd, sorted. */
static int list_dirs(int fd, size_t max, char ***ret, size_t *ret_n, bool *ret_truncated) {
        char **names = NULL;
        size_t n = 0, allocated = 0;
        bool truncated = false;
        struct dirent *de;
        DIR *d;
        int r;

        r = ag_opendir_dup(fd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (n >= max) {
                        truncated = true;
                        break;
                }
                if (n == allocated) {
                        size_t na = allocated ? allocated * 2 : 16;
                        char **p = realloc(names, na * sizeof *p);
                        if (!p) {
                                closedir(d);
                                free_names(names, n);
                                return -ENOMEM;
                        }
                        names = p;
                        allocated = na;
                }
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        closedir(d);
                        free_names(names, n);
                        return -ENOMEM;
                }
                n++;
        }
        closedir(d);
        if (n > 0)
                qsort(names, n, sizeof *names, cmp_names);
        *ret = names;
        *ret_n = n;
        *ret_truncated = truncated;
        return 0;
}

/* A child node of n for the group name, added to n's children: a pool,
 * a user group (user_level: uid and its name), or a group below them.
 * -E2BIG when the budget is spent. */
static int add_child(Ctx *c, AgStatusNode *n, const char *name, bool below_user, bool is_pool, bool user_level,
                     uid_t uid, AgStatusNode **ret) {
        AgStatusNode *child;
        int r;

        r = node_new(c, n->path, name, n->depth + 1, below_user, &child);
        if (r < 0)
                return r;
        n->children[n->n_children++] = child;
        child->below_user = below_user;
        child->is_pool = is_pool;
        child->in_pool = n->is_pool || n->in_pool;
        if (user_level) {
                struct passwd *pw = getpwuid(uid);
                child->is_user = true;
                child->uid = uid;
                c->user_nodes = 0;      /* a budget of its own */
                if (pw && !(child->user_name = strdup(pw->pw_name)))
                        return -ENOMEM;
        }
        *ret = child;
        return 0;
}

/* The latency lane of the user group u (lane.h), beside the tree: its
 * values as any group's. Its CPU time is its own where cpuacct is mounted
 * with cpu; with cpuacct apart it has no mirror (its processes stay in their
 * sessions' mirrors, which count them): unknown. */
static int collect_lane(Ctx *c, AgStatusNode *u) {
        _cleanup_close_ int lfd = -1;
        char name[AG_ROOT_NAME_MAX + 32];
        AgStatusNode *n;
        int r;

        if (c->h->version != 1 || c->mfd < 0 || ag_lane_name(c->root, u->uid, name, sizeof name) < 0 ||
            ag_lane_open_at(c->mfd, c->root, u->uid, &lfd) < 0)
                return 0;
        r = node_new(c, "", name, 1, false, &n);
        if (r < 0)
                return r == -E2BIG ? 0 : r;
        n->is_lane = true;
        if (c->acct_fd >= 0) {
                /* no mirror of the lane: not read there */
                int afd = c->acct_fd;
                c->acct_fd = -1;
                read_values(c, lfd, n);
                c->acct_fd = afd;
        } else
                read_values(c, lfd, n);
        u->lane = n;
        c->lanes = true;
        return 0;
}

static int collect(Ctx *c, int fd, AgStatusNode *n, uid_t only_uid) {
        char **names = NULL;
        size_t n_names = 0;
        bool truncated = false;
        int r;

        read_values(c, fd, n);
        if (n->depth >= AG_STATUS_MAX_DEPTH) {
                n->truncated = true;
                return 0;
        }
        /* below a user group, no more names than the user's budget has left */
        bool below_user = n->is_user || n->below_user;
        r = list_dirs(fd, below_user ? AG_STATUS_USER_MAX_NODES - c->user_nodes : AG_STATUS_MAX_NODES, &names,
                      &n_names, &truncated);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        n->truncated = truncated;
        if (n_names > 0) {
                n->children = calloc(n_names, sizeof *n->children);
                if (!n->children) {
                        free_names(names, n_names);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < n_names; i++) {
                _cleanup_close_ int cfd = -1;
                AgStatusNode *child;
                uid_t uid = 0;

                /* pools: below <root> pool-<name> groups, below those user groups */
                const char *pool;
                bool is_pool = n->depth == 0 && ag_pool_group_parse(names[i], &pool) >= 0;
                bool user_level = (n->depth == 0 && !is_pool) || (n->is_pool && n->depth == 1);

                if (user_level) {
                        /* Below <root> (or a pool) only user groups are ours. */
                        if (ag_user_group_parse(names[i], &uid) < 0)
                                continue;
                        if (only_uid != (uid_t) -1 && uid != only_uid)
                                continue;
                }
                if (ag_cg_open(fd, names[i], &cfd) < 0)
                        continue;       /* gone meanwhile, or not a plain directory */
                r = add_child(c, n, names[i], below_user, is_pool, user_level, uid, &child);
                if (r == -E2BIG) {
                        n->truncated = true;
                        break;
                }
                if (r >= 0)
                        r = collect(c, cfd, child, only_uid);
                if (r >= 0 && user_level)
                        r = collect_lane(c, child);
                /* below a user group: its sessions */
                if (r >= 0 && n->is_user)
                        session_lingering(n, child, cfd);
                if (r < 0) {
                        free_names(names, n_names);
                        return r;
                }
                /* pools: for one user, only the pool they are in */
                if (is_pool && only_uid != (uid_t) -1 && child->n_children == 0 && !child->truncated) {
                        node_free(child);
                        n->n_children--;
                }
        }
        free_names(names, n_names);
        return 0;
}

int ag_status_collect(const AgHierarchy *h, const char *root, uid_t only_uid, AgStatus **ret) {
        _cleanup_close_ int mfd = -1, rfd = -1, afd = -1;
        _cleanup_free_ char *acct_mount = NULL;
        AgStatus *s;
        Ctx c = { .h = h, .acct_fd = -1, .mfd = -1, .root = root };
        int r;

        r = ag_hierarchy_open(h, &mfd);
        if (r < 0)
                return r;
        AgAcctSource source = AG_ACCT_NONE;
        if (ag_acct_find(h, &source, &acct_mount) < 0)
                source = AG_ACCT_NONE;
        c.acct_here = source == AG_ACCT_IN_CPU;
        if (source == AG_ACCT_MIRROR) {
                afd = open(acct_mount, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                c.acct_fd = afd;
        }

        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->version = h->version;
        s->only_one_user = only_uid != (uid_t) -1;
        s->only_uid = only_uid;
        if (!(s->mount = strdup(h->mount)) || asprintf(&s->root, "/%s", root) < 0) {
                s->root = NULL;
                ag_status_free(s);
                return -ENOMEM;
        }
        if (h->version == 2)
                s->cpu_source = "cpu.stat";
        else if (c.acct_here || c.acct_fd >= 0)
                s->cpu_source = "cpuacct.usage";
        if (c.acct_fd >= 0)
                s->acct_mount = TAKE_PTR(acct_mount);

        r = ag_cg_open(mfd, root, &rfd);
        if (r == -ENOENT) {
                *ret = s;
                return 0;
        }
        if (r < 0) {
                ag_status_free(s);
                return r;
        }
        s->tree = calloc(1, sizeof *s->tree);
        if (!s->tree || !(s->tree->name = strdup(root)) || !(s->tree->path = strdup(s->root))) {
                ag_status_free(s);
                return -ENOMEM;
        }
        c.n_nodes = 1;
        c.mfd = mfd;
        r = collect(&c, rfd, s->tree, only_uid);
        s->lanes = c.lanes;
        if (r < 0) {
                ag_status_free(s);
                return r;
        }
        *ret = s;
        return 0;
}
