/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* "autogroup metrics": per user group and per pool, the CPU time, the
 * bandwidth counters of cpu.stat, the policy (weight, cap, idle) and what
 * is live (sessions, leaves), as Prometheus text (0.0.4) for node_exporter's
 * textfile collector. Reading is kept to what the series need: the user
 * groups' and pools' own files, and below a user group only directory
 * entries and link counts (a cgroup directory's link count is 2 plus its
 * child groups), so that a fleet of users costs little. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "lane.h"
#include "metrics.h"
#include "place.h"
#include "session.h"
#include "util.h"

typedef enum What {
        W_CPU,
        W_PERIODS,
        W_THROTTLED,
        W_THROTTLED_SEC,
        W_WEIGHT,
        W_CAP,
        W_IDLE,
        W_SESSIONS,
        W_LEAVES,
        W_USERS,                       /* pools only */
} What;

typedef struct Family {
        const char *name;              /* after "autogroup_user_", "autogroup_pool_" or "autogroup_lane_" */
        const char *type;
        const char *help;
        What what;
        const char *lane_help;         /* the lanes' series of the family; NULL: none */
} Family;

static const Family families[] = {
        { "cpu_seconds_total", "counter",
          "CPU time used in the group since it was made, its ended sessions' included.", W_CPU,
          "CPU time used in the user's latency lane since it was made (cgroup v1 with cpuacct mounted with cpu "
          "only: with cpuacct apart it counts in the user's group)." },
        { "cpu_periods_total", "counter",
          "Enforcement periods of the group's cap with runnable tasks (cpu.stat nr_periods).", W_PERIODS,
          "Enforcement periods of the lane's cap (lane-cap) with runnable tasks (cpu.stat nr_periods)." },
        { "cpu_throttled_periods_total", "counter",
          "Periods in which the group used up its cap (cpu.stat nr_throttled).", W_THROTTLED,
          "Periods in which the user's latency lane used up its cap (cpu.stat nr_throttled)." },
        { "cpu_throttled_seconds_total", "counter",
          "Time the group's tasks were held back by its cap (cpu.stat throttled_usec, v1 throttled_time).",
          W_THROTTLED_SEC, "Time the lane's tasks were held back by its cap (cpu.stat throttled_time)." },
        { "weight", "gauge",
          "CPU weight (1..10000; cgroup v1: cpu.shares * 100 / 1024 rounded); 0 for an idle group "
          "(autogroup_*_idle 1: the kernel gives it the weight of SCHED_IDLE).", W_WEIGHT, NULL },
        { "cap_cpus", "gauge", "CPU cap in CPUs (cpu.max quota / period; +Inf: none).", W_CAP,
          "The cap of the user's latency lane in CPUs (lane-cap: cpu.cfs_quota_us / cpu.cfs_period_us; "
          "+Inf: none)." },
        { "idle", "gauge", "1 when the group runs only when nobody else wants the CPU (cpu.idle).", W_IDLE, NULL },
        { "sessions", "gauge",
          "Sessions (session groups, a lingering one too: its login closed, processes outlived it; "
          "a user with sessions no counts 1 while logged in).", W_SESSIONS, NULL },
        { "leaves", "gauge",
          "Leaves of the sessions but login/ (root's leaf-N and class-CLASS, a delegated session's own; "
          "systemd: the terminals' and commands' scopes).", W_LEAVES, NULL },
        { "users", "gauge", "User groups in the pool.", W_USERS, NULL },
};

static int group_add(AgMetrics *m, size_t root, bool is_pool, const char *pool, AgMetricsGroup **ret) {
        if (m->n_groups == m->allocated) {
                size_t na = m->allocated ? m->allocated * 2 : 64;
                AgMetricsGroup *p = realloc(m->groups, na * sizeof *p);
                if (!p)
                        return -ENOMEM;
                m->groups = p;
                m->allocated = na;
        }
        AgMetricsGroup *g = &m->groups[m->n_groups];
        *g = (AgMetricsGroup) { .root = root, .is_pool = is_pool, .pool = strdup(pool ? pool : "") };
        if (!g->pool)
                return -ENOMEM;
        m->n_groups++;
        *ret = g;
        return 0;
}

static int root_add(AgMetrics *m, const char *name, bool systemd, int version, const char *cpu_source,
                    size_t *ret) {
        AgMetricsRoot *p = realloc(m->roots, (m->n_roots + 1) * sizeof *p);

        if (!p)
                return -ENOMEM;
        m->roots = p;
        p[m->n_roots] = (AgMetricsRoot) { .name = strdup(name[0] == '/' ? name + 1 : name), .systemd = systemd,
                                          .version = version, .cpu_source = cpu_source };
        if (!p[m->n_roots].name)
                return -ENOMEM;
        *ret = m->n_roots++;
        return 0;
}

/* Names of the uids in /etc/passwd, read once: a fleet's thousand users cost
 * one read of the file rather than a lookup each. Uids it does not hold go
 * to NSS (a directory). */
#define PW_FILE_MAX (64U << 20)

typedef struct PwName {
        uid_t uid;
        size_t line;                   /* equal uids: the first line wins, as getpwuid() has it */
        char *name;
} PwName;

typedef struct PwCache {
        PwName *v;
        size_t n;
        bool loaded;
} PwCache;

static int cmp_pw(const void *a, const void *b) {
        const PwName *x = a, *y = b;
        if (x->uid != y->uid)
                return x->uid < y->uid ? -1 : 1;
        return x->line < y->line ? -1 : x->line > y->line;
}

/* bsearch's key: equal to every line of its uid */
static int cmp_pw_uid(const void *a, const void *b) {
        const PwName *x = a, *y = b;
        return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/* name:password:uid:... of each line (the format of passwd(5); what fgetpwent
 * reads, without its two lseek()s a line): the file read in one go */
static void pw_load(PwCache *c) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -1;
        size_t allocated = 0, len = 0;

        c->loaded = true;
        fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || ag_read_all(fd, 1 << 16, PW_FILE_MAX, &text, &len) < 0)
                return;
        for (char *line = text, *next; line && *line; line = next) {
                char *name = line, *uid_s, *end;
                unsigned long uid;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                /* name, password, uid: the name not empty, no NIS "+"/"-" entry */
                if (!*name || *name == '+' || *name == '-' || !(end = strchr(name, ':')))
                        continue;
                *end = 0;
                if (!(uid_s = strchr(end + 1, ':')))
                        continue;
                uid_s++;
                if ((end = strchr(uid_s, ':')))
                        *end = 0;
                if (ag_safe_atoul(uid_s, UINT32_MAX - 1, &uid) < 0)
                        continue;
                if (c->n == allocated) {
                        size_t na = allocated ? allocated * 2 : 256;
                        PwName *p = realloc(c->v, na * sizeof *p);
                        if (!p)
                                break;
                        c->v = p;
                        allocated = na;
                }
                c->v[c->n].uid = (uid_t) uid;
                c->v[c->n].line = c->n;
                if (!(c->v[c->n].name = strdup(name)))
                        break;
                c->n++;
        }
        if (c->n > 1)
                qsort(c->v, c->n, sizeof *c->v, cmp_pw);
}

static void pw_done(PwCache *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->v[i].name);
        free(c->v);
}

static int user_name(PwCache *c, AgMetricsGroup *g) {
        const PwName key = { .uid = g->uid }, *e;
        const char *name = NULL;
        struct passwd *pw;

        if (!c->loaded)
                pw_load(c);
        e = c->n > 0 ? bsearch(&key, c->v, c->n, sizeof *c->v, cmp_pw_uid) : NULL;
        if (e) {
                /* bsearch finds any line of the uid: back to its first */
                while (e > c->v && e[-1].uid == g->uid)
                        e--;
                name = e->name;
        } else if ((pw = getpwuid(g->uid)))
                name = pw->pw_name;
        if (name && !(g->user = strdup(name)))
                return -ENOMEM;
        return 0;
}

/* ---- cgroupfs mode ---- */

typedef struct Walk {
        AgMetrics *m;
        int version;
        bool acct_here;                /* v2, or v1 with cpuacct co-mounted with cpu */
        size_t root;
        uid_t only_uid;
        PwCache *pw;
        AgFdBatch *fds;                /* the files read, closed together */
} Walk;

/* The group name below parent_fd: its values into g->v, its fd into
 * *ret_fd, and its cpuacct mirror's (or -1) into *ret_afd when that is not
 * NULL (without it the mirror's file is read in one open). */
static int read_group(const Walk *w, int parent_fd, int parent_afd, const char *name, AgMetricsGroup *g,
                      int *ret_fd, int *ret_afd) {
        _cleanup_close_ int fd = -1, afd = -1;
        long long ns;
        int r;

        r = ag_cg_open(parent_fd, name, &fd);
        if ((r == -EMFILE || r == -ENFILE) && w->fds->n > 0) {
                /* out of descriptors, some held to be closed: close them */
                ag_fd_batch_close(w->fds);
                r = ag_cg_open(parent_fd, name, &fd);
        }
        if (r < 0)
                return r;
        /* v2: the CPU time too, from the same cpu.stat */
        ag_status_read_policy(w->version, fd, &g->v, true, w->fds);
        g->v.procs = -1;
        if (w->version == 2)
                ;
        else if (w->acct_here) {
                /* v1 cpu,cpuacct: the total only (cpuacct.stat's parts are not series) */
                if (ag_read_ll(fd, "cpuacct.usage", &ns, w->fds) >= 0 && ns >= 0)
                        g->v.cpu_usec = ns / 1000;
        } else if (parent_afd >= 0 && !ret_afd) {
                /* v1 with cpuacct apart: the mirror's */
                char path[NAME_MAX + sizeof "/cpuacct.usage"];
                snprintf(path, sizeof path, "%s/cpuacct.usage", name);
                if (ag_read_ll_beneath(parent_afd, path, &ns, w->fds) >= 0 && ns >= 0)
                        g->v.cpu_usec = ns / 1000;
        } else if (parent_afd >= 0 && ag_cg_open(parent_afd, name, &afd) >= 0) {
                if (ag_read_ll(afd, "cpuacct.usage", &ns, w->fds) >= 0 && ns >= 0)
                        g->v.cpu_usec = ns / 1000;
        }
        *ret_fd = take_fd(&fd);
        if (ret_afd)
                *ret_afd = take_fd(&afd);
        return 0;
}

/* The leaves of the session name below ufd: every group right below it but
 * login/ (root's leaf-<i> and class-<class>, in a delegated session the ones
 * the user made), from its link count (2 + its child groups) less login/
 * when it is there: a session whose login closed keeps its leaves for what
 * outlived the logout, and close removed its empty login/. Two stats, of
 * the session and of name/login: name is an entry of the user group, which
 * only root writes, in cgroupfs, which has no symbolic links. */
static long long session_leaves(int ufd, const char *name) {
        char login[NAME_MAX + sizeof "/" AG_LOGIN_LEAF];
        struct stat st;
        long long below;

        if (fstatat(ufd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) || st.st_nlink <= 2)
                return 0;
        below = (long long) st.st_nlink - 2;
        snprintf(login, sizeof login, "%s/%s", name, AG_LOGIN_LEAF);
        if (fstatat(ufd, login, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISDIR(st.st_mode))
                below--;
        return below;
}

/* Sessions and leaves below the user group ufd, without reading the
 * sessions' directories: the entries read straight from ufd (no directory
 * stream), each session's leaves as session_leaves() counts them. A user
 * group with no session (sessions no: the logins share it) counts one
 * session while it holds processes. */
static void count_sessions(const Walk *w, int ufd, AgMetricsGroup *g) {
        long long n = 0, below = 0;
        bool end = false;
        char buf[8192];
        ssize_t len;

        while (!end && n < AG_STATUS_USER_MAX_NODES && (len = getdents64(ufd, buf, sizeof buf)) > 0)
                for (ssize_t off = 0; off < len && n < AG_STATUS_USER_MAX_NODES;) {
                        struct dirent64 *de = (struct dirent64 *) (buf + off);

                        off += de->d_reclen;
                        /* kernfs (cgroupfs) gives the last entry of a directory the
                         * offset INT_MAX: no need to ask again to learn it is the end */
                        if (off == len && de->d_off == INT_MAX)
                                end = true;
                        if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                                continue;
                        n++;
                        below += session_leaves(ufd, de->d_name);
                }
        if (n == 0 && ag_read_small_file_batch(ufd, "cgroup.procs", buf, 2, w->fds) > 0)
                n = 1;
        g->sessions = n;
        g->leaves = below;
}

/* The user groups (and, at the top, the pools) below fd; afd is its mirror or -1. */
static int walk_place(const Walk *w, int fd, int afd, const char *pool) {
        struct dirent *de;
        unsigned seen = 0;
        DIR *d;
        int r = 0;

        if (ag_opendir_dup(fd, &d) < 0)
                return 0;
        while (r >= 0 && (de = readdir(d)) && seen++ < AG_STATUS_MAX_NODES) {
                _cleanup_close_ int cfd = -1, cafd = -1;
                AgMetricsGroup *g;
                const char *p;
                uid_t uid;

                if (de->d_type != DT_DIR)
                        continue;
                if (!pool && ag_pool_group_parse(de->d_name, &p) >= 0) {
                        size_t pi = w->m->n_groups;

                        if ((r = group_add(w->m, w->root, true, p, &g)) < 0)
                                break;
                        if (read_group(w, fd, afd, de->d_name, g, &cfd, &cafd) < 0) {
                                free(g->pool);
                                w->m->n_groups--;
                                continue;
                        }
                        r = walk_place(w, cfd, cafd, p);
                        /* the pool: the sum of its users' */
                        for (size_t i = pi + 1; i < w->m->n_groups; i++) {
                                AgMetricsGroup *x = &w->m->groups[i];
                                w->m->groups[pi].sessions += x->sessions;
                                w->m->groups[pi].leaves += x->leaves;
                                w->m->groups[pi].users++;
                        }
                        /* for one user, only the pool they are in */
                        if (w->only_uid != (uid_t) -1 && w->m->groups[pi].users == 0) {
                                free(w->m->groups[pi].pool);
                                w->m->n_groups--;
                        }
                        continue;
                }
                if (ag_user_group_parse(de->d_name, &uid) < 0 || (w->only_uid != (uid_t) -1 && uid != w->only_uid))
                        continue;
                if ((r = group_add(w->m, w->root, false, pool, &g)) < 0)
                        break;
                g->uid = uid;
                if (read_group(w, fd, afd, de->d_name, g, &cfd, NULL) < 0) {
                        free(g->pool);
                        w->m->n_groups--;
                        continue;
                }
                count_sessions(w, cfd, g);
                ag_fd_batch_add(w->fds, take_fd(&cfd));
                /* closed between two users, the batch is one run of numbers: one call */
                if (w->fds->n > AG_FD_BATCH_MAX - 8)
                        ag_fd_batch_close(w->fds);
                r = user_name(w->pw, g);
        }
        closedir(d);
        return r;
}

/* The latency lanes (v1) of the users groups first..m->n_groups hold:
 * "<root>.lane-<uid>" beside the tree, root's, each once. Their values as
 * a user group's; their CPU time where cpuacct is mounted with cpu (with
 * cpuacct apart a lane has no mirror: its time counts in the user's). */
static int walk_lanes(const Walk *w, int mfd, const char *root, size_t first) {
        size_t last = w->m->n_groups;

        for (size_t i = first; i < last; i++) {
                _cleanup_close_ int lfd = -1;
                AgMetricsGroup *g;
                uid_t uid = w->m->groups[i].uid;
                bool seen = false;
                long long ns;
                int r;

                if (w->m->groups[i].is_pool)
                        continue;
                for (size_t k = last; k < w->m->n_groups && !seen; k++)
                        seen = w->m->groups[k].uid == uid;
                if (seen || ag_lane_open_at(mfd, root, uid, &lfd) < 0)
                        continue;
                if ((r = group_add(w->m, w->root, false, "", &g)) < 0)
                        return r;
                /* group_add may move the array */
                const AgMetricsGroup *u = &w->m->groups[i];
                g->is_lane = true;
                g->uid = uid;
                if (u->user && !(g->user = strdup(u->user)))
                        return -ENOMEM;
                ag_status_read_policy(1, lfd, &g->v, true, w->fds);
                g->v.procs = -1;
                if (w->acct_here && ag_read_ll(lfd, "cpuacct.usage", &ns, w->fds) >= 0 && ns >= 0)
                        g->v.cpu_usec = ns / 1000;
                g->sessions = g->leaves = -1;
                ag_fd_batch_add(w->fds, take_fd(&lfd));
                if (w->fds->n > AG_FD_BATCH_MAX - 8)
                        ag_fd_batch_close(w->fds);
        }
        return 0;
}

int ag_metrics_collect(AgMetrics *m, const AgHierarchy *h, const char *root, uid_t only_uid) {
        _cleanup_close_ int mfd = -1, rfd = -1, amfd = -1, arfd = -1;
        _cleanup_free_ char *acct_mount = NULL;
        AgAcctSource source = AG_ACCT_NONE;
        size_t ri;
        int r;

        if (ag_acct_find(h, &source, &acct_mount) < 0)
                source = AG_ACCT_NONE;
        r = root_add(m, root, false, h->version,
                     h->version == 2 ? "cpu.stat" : source != AG_ACCT_NONE ? "cpuacct.usage" : NULL, &ri);
        if (r < 0)
                return r;
        r = ag_hierarchy_open(h, &mfd);
        if (r < 0)
                return r;
        r = ag_cg_open(mfd, root, &rfd);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (source == AG_ACCT_MIRROR) {
                amfd = open(acct_mount, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (amfd >= 0 && ag_cg_open(amfd, root, &arfd) < 0)
                        arfd = -1;
        }
        PwCache pw = {};
        AgFdBatch fds = {};
        Walk w = { .m = m, .version = h->version, .acct_here = source == AG_ACCT_IN_CPU, .root = ri,
                   .only_uid = only_uid, .pw = &pw, .fds = &fds };
        size_t first = m->n_groups;
        r = walk_place(&w, rfd, arfd, NULL);
        if (r >= 0 && h->version == 1)
                r = walk_lanes(&w, mfd, root, first);
        ag_fd_batch_close(&fds);
        pw_done(&pw);
        return r;
}

/* ---- a collected tree (the systemd mode) ---- */

static long long count_kind(const AgStatusNode *n, const char *kind) {
        long long sum = n->kind && strcmp(n->kind, kind) == 0;

        for (size_t i = 0; i < n->n_children; i++)
                sum += count_kind(n->children[i], kind);
        return sum;
}

/* The values of node n, without its names and children. */
static void copy_values(AgStatusNode *dst, const AgStatusNode *n) {
        *dst = *n;
        dst->name = dst->path = dst->user_name = NULL;
        dst->children = NULL;
        dst->n_children = 0;
        dst->lane = NULL;
}

/* The latency lane of the user node u, when the tree has one. */
static int add_lane_node(AgMetrics *m, size_t ri, const AgStatusNode *u) {
        AgMetricsGroup *g;
        int r;

        if (!u->lane)
                return 0;
        r = group_add(m, ri, false, "", &g);
        if (r < 0)
                return r;
        copy_values(&g->v, u->lane);
        g->is_lane = true;
        g->uid = u->uid;
        g->sessions = g->leaves = -1;
        if (u->user_name && !(g->user = strdup(u->user_name)))
                return -ENOMEM;
        return 0;
}

static int add_user_node(AgMetrics *m, size_t ri, const AgStatusNode *u, const char *pool) {
        AgMetricsGroup *g;
        int r = add_lane_node(m, ri, u);

        if (r >= 0)
                r = group_add(m, ri, false, pool, &g);
        if (r < 0)
                return r;
        copy_values(&g->v, u);
        g->uid = u->uid;
        if (u->user_name && !(g->user = strdup(u->user_name)))
                return -ENOMEM;
        if (u->kind) {
                /* systemd mode: session-N.scope units; the leaves are the terminals'
                 * and the commands' scopes (autogroup-sid-S, autogroup-run-P) */
                g->sessions = count_kind(u, "session");
                g->leaves = count_kind(u, "terminal") + count_kind(u, "run");
                return 0;
        }
        /* as count_sessions: every group below a session but its login/ */
        for (size_t i = 0; i < u->n_children; i++) {
                const AgStatusNode *c = u->children[i];

                for (size_t k = 0; k < c->n_children; k++)
                        g->leaves += strcmp(c->children[k]->name, AG_LOGIN_LEAF) != 0;
        }
        g->sessions = u->n_children ? (long long) u->n_children : u->procs > 0;
        return 0;
}

int ag_metrics_add_status(AgMetrics *m, const AgStatus *s) {
        size_t ri;
        int r;

        r = root_add(m, s->root, s->systemd, s->version, s->cpu_source, &ri);
        for (size_t j = 0; r >= 0 && s->tree && j < s->tree->n_children; j++) {
                const AgStatusNode *c = s->tree->children[j];
                const char *pool;

                if (c->is_user) {
                        r = add_user_node(m, ri, c, "");
                        continue;
                }
                if (!c->is_pool || ag_pool_group_parse(c->name, &pool) < 0)
                        continue;
                AgMetricsGroup *g;
                size_t pi = m->n_groups;
                if ((r = group_add(m, ri, true, pool, &g)) < 0)
                        break;
                copy_values(&g->v, c);
                for (size_t k = 0; r >= 0 && k < c->n_children; k++)
                        if (c->children[k]->is_user) {
                                r = add_user_node(m, ri, c->children[k], pool);
                                if (r >= 0) {
                                        m->groups[pi].sessions += m->groups[m->n_groups - 1].sessions;
                                        m->groups[pi].leaves += m->groups[m->n_groups - 1].leaves;
                                        m->groups[pi].users++;
                                }
                        }
        }
        return r;
}

void ag_metrics_done(AgMetrics *m) {
        for (size_t i = 0; i < m->n_groups; i++) {
                free(m->groups[i].pool);
                free(m->groups[i].user);
        }
        free(m->groups);
        for (size_t i = 0; i < m->n_roots; i++)
                free(m->roots[i].name);
        free(m->roots);
        *m = (AgMetrics) {};
}

/* ---- printing ---- */

/* The value of w for group g as text; false when unknown. */
static bool value(const AgMetricsGroup *g, What w, char *buf, size_t size) {
        const AgStatusNode *n = &g->v;
        long long v;

        switch (w) {
        case W_CPU:
                v = n->cpu_usec;
                goto seconds;
        case W_THROTTLED_SEC:
                v = n->throttle.throttled_usec;
        seconds:
                if (v < 0)
                        return false;
                snprintf(buf, size, "%lld.%06lld", v / 1000000, v % 1000000);
                return true;
        case W_PERIODS:
                v = n->throttle.periods;
                break;
        case W_THROTTLED:
                v = n->throttle.throttled;
                break;
        case W_WEIGHT:
                /* idle: whatever the kernel reads back for it (v1 3 shares,
                 * v2 cpu.weight 0, or 1 since Linux 6.6), 0 */
                v = n->idle == 1 && n->weight >= 0 ? 0 : n->weight;
                break;
        case W_CAP:
                if (n->quota_us == -1) {
                        snprintf(buf, size, "+Inf");
                        return true;
                }
                if (n->quota_us < 0 || n->period_us == 0)
                        return false;
                snprintf(buf, size, "%.6g", (double) n->quota_us / (double) n->period_us);
                return true;
        case W_IDLE:
                v = n->idle;
                break;
        case W_SESSIONS:
                v = g->sessions;
                break;
        case W_LEAVES:
                v = g->leaves;
                break;
        case W_USERS:
                if (!g->is_pool)
                        return false;
                v = g->users;
                break;
        default:
                return false;
        }
        if (v < 0)
                return false;
        snprintf(buf, size, "%lld", v);
        return true;
}

/* A label value as the format has it: \\, \" and \n escaped. What a reader
 * could not take (bytes that are not UTF-8) or should not see raw (other
 * control characters) becomes the text \xNN. */
static void label_value(FILE *f, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                unsigned cp = 0;
                size_t n = ag_utf8_decode(p, &cp);

                if (n == 0 || cp < 0x20 || cp == 0x7f) {
                        if (*p == '\n')
                                fputs("\\n", f);
                        else
                                fprintf(f, "\\\\x%02x", *p);
                        p++;
                        continue;
                }
                if (*p == '\\' || *p == '"')
                        fputc('\\', f);
                fwrite(p, 1, n, f);
                p += n;
        }
}

static void label(FILE *f, const char *name, const char *v, bool first) {
        fprintf(f, "%s%s=\"", first ? "{" : ",", name);
        label_value(f, v);
        fputc('"', f);
}

/* The labels of group g, escaped once for all its series:
 * {root="...",pool="..."[,uid="...",user="..."]}. NULL when out of memory. */
static char *group_labels(const AgMetrics *m, const AgMetricsGroup *g) {
        /* (a lane: root, uid, user; it is in no pool) */
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        label(f, "root", m->roots[g->root].name, true);
        if (!g->is_lane)
                label(f, "pool", g->pool, false);
        if (!g->is_pool) {
                char uid[32];
                snprintf(uid, sizeof uid, "%ju", (uintmax_t) g->uid);
                label(f, "uid", uid, false);
                label(f, "user", g->user ? g->user : "", false);
        }
        fputc('}', f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

typedef enum Kind { K_USER, K_POOL, K_LANE } Kind;

static Kind kind_of(const AgMetricsGroup *g) {
        return g->is_pool ? K_POOL : g->is_lane ? K_LANE : K_USER;
}

static void print_family(FILE *f, const AgMetrics *m, char *const *labels, const Family *fam, Kind k) {
        static const char *const kinds[] = { [K_USER] = "user", [K_POOL] = "pool", [K_LANE] = "lane" };
        char buf[64], series[96];
        bool any = false;

        if (k == K_LANE && !fam->lane_help)
                return;
        for (size_t i = 0; i < m->n_groups && !any; i++)
                any = kind_of(&m->groups[i]) == k && labels[i] && value(&m->groups[i], fam->what, buf, sizeof buf);
        if (!any)
                return;
        snprintf(series, sizeof series, "autogroup_%s_%s", kinds[k], fam->name);
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", series, k == K_LANE ? fam->lane_help : fam->help, series,
                fam->type);
        for (size_t i = 0; i < m->n_groups; i++) {
                const AgMetricsGroup *g = &m->groups[i];

                if (kind_of(g) != k || !labels[i] || !value(g, fam->what, buf, sizeof buf))
                        continue;
                fputs(series, f);
                fputs(labels[i], f);
                fputc(' ', f);
                fputs(buf, f);
                fputc('\n', f);
        }
}

static int cmp_groups(const void *a, const void *b) {
        const AgMetricsGroup *x = a, *y = b;
        int c;

        if (x->root != y->root)
                return x->root < y->root ? -1 : 1;
        if ((c = strcmp(x->pool, y->pool)) != 0)
                return c;
        return x->uid < y->uid ? -1 : x->uid > y->uid;
}

void ag_metrics_print(AgMetrics *m, FILE *f) {
        fputs("# HELP autogroup_info The roots pam_autogroup's groups were read from (value always 1).\n"
              "# TYPE autogroup_info gauge\n", f);
        for (size_t i = 0; i < m->n_roots; i++) {
                char version[16];

                snprintf(version, sizeof version, "%d", m->roots[i].version);
                fputs("autogroup_info", f);
                label(f, "root", m->roots[i].name, true);
                label(f, "mode", m->roots[i].systemd ? "systemd" : "cgroupfs", false);
                label(f, "cgroup", version, false);
                label(f, "cpu_source", m->roots[i].cpu_source ? m->roots[i].cpu_source : "", false);
                fputs("} 1\n", f);
        }
        if (m->n_groups > 1)
                qsort(m->groups, m->n_groups, sizeof *m->groups, cmp_groups);
        /* (a group whose labels cannot be made for want of memory is left out) */
        char **labels = calloc(m->n_groups ? m->n_groups : 1, sizeof *labels);
        if (!labels)
                return;
        for (size_t i = 0; i < m->n_groups; i++)
                labels[i] = group_labels(m, &m->groups[i]);
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                if (families[i].what != W_USERS)
                        print_family(f, m, labels, &families[i], K_USER);
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                print_family(f, m, labels, &families[i], K_POOL);
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                print_family(f, m, labels, &families[i], K_LANE);
        for (size_t i = 0; i < m->n_groups; i++)
                free(labels[i]);
        free(labels);
}

#define METRICS_BUFFER (256U << 10)

int ag_metrics_write(AgMetrics *m, const char *path) {
        _cleanup_free_ char *tmp = NULL, *buffer = NULL;
        const char *slash = strrchr(path, '/');
        int fd, r = 0;
        FILE *f;

        /* ".NAME.XXXXXX" beside NAME */
        if (asprintf(&tmp, "%.*s.%s.XXXXXX", slash ? (int) (slash - path + 1) : 0, path, slash ? slash + 1 : path) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "w");
        if (!f) {
                r = negative_errno();
                close(fd);
                unlink(tmp);
                return r;
        }
        /* one writer: no stdio locking; a buffer of 256 KiB (a thousand
         * users are 850 KB: four writes; stdio's own would be a page) */
        __fsetlocking(f, FSETLOCKING_BYCALLER);
        buffer = malloc(METRICS_BUFFER);
        if (buffer)
                setvbuf(f, buffer, _IOFBF, METRICS_BUFFER);
        ag_metrics_print(m, f);
        /* no fsync: readers see the old file or the whole new one (rename);
         * after a crash the next run writes it again */
        if (fflush(f) != 0 || ferror(f) || fchmod(fd, 0644) < 0)
                r = errno > 0 ? -errno : -EIO;
        if (fclose(f) != 0 && r == 0)
                r = errno > 0 ? -errno : -EIO;
        if (r == 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                unlink(tmp);
        return r;
}
