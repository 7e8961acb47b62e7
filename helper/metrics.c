/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* "autogroup metrics": per user group and per pool, the CPU time, the
 * bandwidth counters of cpu.stat, the policy (weight, cap, idle) and what
 * is live (sessions, leaves, processes), as Prometheus text (0.0.4) for
 * node_exporter's textfile collector. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"
#include "place.h"
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
        W_PROCS,
        W_USERS,                       /* pools only */
} What;

typedef struct Family {
        const char *name;              /* after "autogroup_user_" or "autogroup_pool_" */
        const char *type;
        const char *help;
        What what;
} Family;

static const Family families[] = {
        { "cpu_seconds_total", "counter",
          "CPU time used in the group since it was made, its ended sessions' included.", W_CPU },
        { "cpu_periods_total", "counter",
          "Enforcement periods of the group's cap with runnable tasks (cpu.stat nr_periods).", W_PERIODS },
        { "cpu_throttled_periods_total", "counter",
          "Periods in which the group used up its cap (cpu.stat nr_throttled).", W_THROTTLED },
        { "cpu_throttled_seconds_total", "counter",
          "Time the group's tasks were held back by its cap (cpu.stat throttled_usec, v1 throttled_time).",
          W_THROTTLED_SEC },
        { "weight", "gauge", "CPU weight (1..10000; cgroup v1: cpu.shares * 100 / 1024).", W_WEIGHT },
        { "cap_cpus", "gauge", "CPU cap in CPUs (cpu.max quota / period; +Inf: none).", W_CAP },
        { "idle", "gauge", "1 when the group runs only when nobody else wants the CPU (cpu.idle).", W_IDLE },
        { "sessions", "gauge", "Live sessions (session groups; a user with sessions no counts 1).", W_SESSIONS },
        { "leaves", "gauge", "Groups below the sessions (login/ and the helper's leaves; systemd: terminal scopes).",
          W_LEAVES },
        { "processes", "gauge", "Processes in the group and the groups below it that were listed.", W_PROCS },
        { "users", "gauge", "User groups in the pool.", W_USERS },
};

/* What is live below a user group or a pool. */
typedef struct Agg {
        long long sessions, leaves, procs, users;
} Agg;

static long long subtree_procs(const AgStatusNode *n) {
        long long sum = n->procs > 0 ? n->procs : 0;

        for (size_t i = 0; i < n->n_children; i++)
                sum += subtree_procs(n->children[i]);
        return sum;
}

static long long count_kind(const AgStatusNode *n, const char *kind) {
        long long sum = n->kind && strcmp(n->kind, kind) == 0;

        for (size_t i = 0; i < n->n_children; i++)
                sum += count_kind(n->children[i], kind);
        return sum;
}

static void user_agg(const AgStatusNode *u, Agg *a) {
        bool user_is_session = false;

        a->procs += subtree_procs(u);
        a->users++;
        if (u->kind) {
                /* systemd mode: session-N.scope units, the terminals' scopes */
                a->sessions += count_kind(u, "session");
                a->leaves += count_kind(u, "terminal");
                return;
        }
        /* sessions no: login/ right below the user group */
        for (size_t i = 0; i < u->n_children; i++)
                if (strcmp(u->children[i]->name, "login") == 0)
                        user_is_session = true;
        if (user_is_session) {
                a->sessions++;
                a->leaves += (long long) u->n_children;
                return;
        }
        a->sessions += (long long) u->n_children;
        for (size_t i = 0; i < u->n_children; i++)
                a->leaves += (long long) u->children[i]->n_children;
}

/* The value of w for group n as text; false when unknown. */
static bool value(const AgStatusNode *n, const Agg *a, What w, char *buf, size_t size) {
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
                v = n->weight;
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
                v = a->sessions;
                break;
        case W_LEAVES:
                v = a->leaves;
                break;
        case W_PROCS:
                v = a->procs;
                break;
        case W_USERS:
                v = a->users;
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

/* One group of the trees: a user group (user true) or a pool. */
typedef struct Group {
        const AgStatus *s;
        const AgStatusNode *n;
        const char *pool;              /* "" for none */
        Agg agg;
} Group;

typedef struct Groups {
        Group *v;
        size_t n, allocated;
} Groups;

static int groups_add(Groups *g, const AgStatus *s, const AgStatusNode *n, const char *pool) {
        if (g->n == g->allocated) {
                size_t na = g->allocated ? g->allocated * 2 : 64;
                Group *p = realloc(g->v, na * sizeof *p);
                if (!p)
                        return -ENOMEM;
                g->v = p;
                g->allocated = na;
        }
        g->v[g->n++] = (Group) { .s = s, .n = n, .pool = pool };
        return 0;
}

/* The user groups and the pools of every tree, with what is live below each. */
static int groups_collect(AgStatus *const *v, size_t n, Groups *users, Groups *pools) {
        for (size_t i = 0; i < n; i++) {
                const AgStatusNode *t = v[i]->tree;

                for (size_t j = 0; t && j < t->n_children; j++) {
                        const AgStatusNode *c = t->children[j];
                        const char *pool;

                        if (c->is_user) {
                                if (groups_add(users, v[i], c, "") < 0)
                                        return -ENOMEM;
                                user_agg(c, &users->v[users->n - 1].agg);
                                continue;
                        }
                        if (!c->is_pool || ag_pool_group_parse(c->name, &pool) < 0)
                                continue;
                        if (groups_add(pools, v[i], c, pool) < 0)
                                return -ENOMEM;
                        size_t pi = pools->n - 1;
                        for (size_t k = 0; k < c->n_children; k++) {
                                if (!c->children[k]->is_user)
                                        continue;
                                if (groups_add(users, v[i], c->children[k], pool) < 0)
                                        return -ENOMEM;
                                user_agg(c->children[k], &users->v[users->n - 1].agg);
                                user_agg(c->children[k], &pools->v[pi].agg);
                        }
                }
        }
        return 0;
}

/* "/autogroup" -> "autogroup", "/user.slice" -> "user.slice" */
static const char *root_label(const AgStatus *s) {
        return s->root[0] == '/' ? s->root + 1 : s->root;
}

static void print_family(FILE *f, const char *kind, const Family *fam, const Groups *g, bool user) {
        char buf[64];
        bool any = false;

        for (size_t i = 0; i < g->n && !any; i++)
                any = value(g->v[i].n, &g->v[i].agg, fam->what, buf, sizeof buf);
        if (!any)
                return;
        fprintf(f, "# HELP autogroup_%s_%s %s\n# TYPE autogroup_%s_%s %s\n", kind, fam->name, fam->help, kind,
                fam->name, fam->type);
        for (size_t i = 0; i < g->n; i++) {
                const Group *x = &g->v[i];

                if (!value(x->n, &x->agg, fam->what, buf, sizeof buf))
                        continue;
                fprintf(f, "autogroup_%s_%s", kind, fam->name);
                label(f, "root", root_label(x->s), true);
                label(f, "pool", x->pool, false);
                if (user) {
                        char uid[32];
                        snprintf(uid, sizeof uid, "%ju", (uintmax_t) x->n->uid);
                        label(f, "uid", uid, false);
                        label(f, "user", x->n->user_name ? x->n->user_name : "", false);
                }
                fprintf(f, "} %s\n", buf);
        }
}

void ag_metrics_print(AgStatus *const *v, size_t n, FILE *f) {
        Groups users = {}, pools = {};

        fputs("# HELP autogroup_info The roots pam_autogroup's groups were read from (value always 1).\n"
              "# TYPE autogroup_info gauge\n", f);
        for (size_t i = 0; i < n; i++) {
                char version[16];

                snprintf(version, sizeof version, "%d", v[i]->version);
                fputs("autogroup_info", f);
                label(f, "root", root_label(v[i]), true);
                label(f, "mode", v[i]->systemd ? "systemd" : "cgroupfs", false);
                label(f, "cgroup", version, false);
                label(f, "cpu_source", v[i]->cpu_source ? v[i]->cpu_source : "", false);
                fprintf(f, "} 1\n");
        }
        if (groups_collect(v, n, &users, &pools) < 0)
                fputs("# out of memory: no groups listed\n", f);
        else {
                for (size_t i = 0; i < ELEMENTSOF(families); i++)
                        if (families[i].what != W_USERS)
                                print_family(f, "user", &families[i], &users, true);
                for (size_t i = 0; i < ELEMENTSOF(families); i++)
                        print_family(f, "pool", &families[i], &pools, false);
        }
        free(users.v);
        free(pools.v);
}

int ag_metrics_write(const char *path, AgStatus *const *v, size_t n) {
        _cleanup_free_ char *tmp = NULL;
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
        ag_metrics_print(v, n, f);
        if (fflush(f) != 0 || ferror(f) || fchmod(fd, 0644) < 0 || fsync(fd) < 0)
                r = errno > 0 ? -errno : -EIO;
        if (fclose(f) != 0 && r == 0)
                r = errno > 0 ? -errno : -EIO;
        if (r == 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                unlink(tmp);
        return r;
}
