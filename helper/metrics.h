/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup metrics": per user group and per pool, in the Prometheus text
 * exposition format (version 0.0.4, what node_exporter's textfile collector
 * reads). */

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "cgroup.h"
#include "status.h"

typedef struct AgMetricsRoot {
        char *name;                    /* "autogroup", "user.slice" */
        bool systemd;
        int version;
        const char *cpu_source;        /* as AgStatus has it */
} AgMetricsRoot;

typedef struct AgMetricsGroup {
        size_t root;                   /* index in AgMetrics.roots */
        bool is_pool;
        bool is_lane;                  /* a user's latency lane beside the tree (lane.h): uid, user; pool "" */
        char *pool;                    /* "" for none */
        uid_t uid;                     /* users */
        char *user;                    /* users; NULL when NSS does not know the uid */
        AgStatusNode v;                /* its values (weight, cap, idle, CPU time, throttling); no name, no children */
        long long sessions, leaves, users;
} AgMetricsGroup;

typedef struct AgMetrics {
        AgMetricsRoot *roots;
        size_t n_roots;
        AgMetricsGroup *groups;
        size_t n_groups, allocated;
} AgMetrics;

/* Adds the pools and user groups below root (cgroupfs mode) to m: only
 * their own values and, below each user group, the sessions and leaves
 * counted from directory entries and link counts, no group below a user
 * group opened (bounded like status); and the latency lane of each user
 * with a user group, when there is one (cgroup v1: one open by name).
 * only_uid: (uid_t) -1 for every user. */
int ag_metrics_collect(AgMetrics *m, const AgHierarchy *h, const char *root, uid_t only_uid);
/* Adds what a collected tree holds (the systemd mode's user slices). */
int ag_metrics_add_status(AgMetrics *m, const AgStatus *s);
void ag_metrics_done(AgMetrics *m);

/* Every family once. Label values are escaped as the format says; bytes
 * that are not UTF-8 and control characters become the four characters \xNN. */
void ag_metrics_print(AgMetrics *m, FILE *f);
/* The same into path, atomically: a temporary file in path's directory
 * (".NAME.XXXXXX", which the textfile collector does not read) renamed over
 * path, mode 0644. Nothing is left behind on failure. */
int ag_metrics_write(AgMetrics *m, const char *path);
