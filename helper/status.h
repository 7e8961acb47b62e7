/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup status": the tree below <root> with each group's weight, cap,
 * idle flag, process count and CPU time, read from cgroupfs without
 * following symlinks and with bounded effort. */

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "acct.h"
#include "cgroup.h"
#include "policy.h"

/* Bounds against a user's crafted tree. */
#define AG_STATUS_MAX_DEPTH 12         /* levels below <root> */
/* Pools and user groups (root makes these: one per user with a login). */
#define AG_STATUS_MAX_NODES 65536
/* Groups below one user group (sessions and what the user made in them):
 * each user has a budget of their own, so that one user's tree cannot hide
 * another user's groups. */
#define AG_STATUS_USER_MAX_NODES 2048

typedef struct AgStatusNode AgStatusNode;
struct AgStatusNode {
        char *name;
        char *path;                    /* relative to the hierarchy mount, "/<root>/..." */
        unsigned depth;                /* 0: <root>, 1: user group, 2: session, 3: leaf (see in_pool) */
        bool is_user;                  /* a user-<uid> group */
        bool below_user;               /* below a user group (counted in that user's status budget) */
        uid_t uid;                     /* when is_user */
        char *user_name;               /* when is_user and known to NSS */
        long weight;                   /* v2 cpu.weight, v1 shares*100/1024; -1 unknown */
        long shares;                   /* v1 cpu.shares; -1 unknown or v2 */
        long long quota_us;            /* -1 none; -2 unknown */
        unsigned long period_us;
        int idle;                      /* 0, 1; -1 unknown */
        int procs;                     /* -1 unknown */
        long long cpu_usec;            /* -1 unknown */
        AgCpuThrottle throttle;        /* cpu.stat's bandwidth counters; -1 unknown */
        bool truncated;                /* children not all listed (bounds) */
        /* pools: a pool-<name> group at depth 1; below one, every
         * level is one deeper (user group 2, session 3, leaf 4) */
        bool is_pool;
        bool in_pool;                  /* a group below a pool-<name> group */
        const char *kind;              /* systemd mode: "slice", "user", "session", "manager", "terminal", "run"; else NULL */
        bool is_session;               /* a session group (cgroupfs) or session-N.scope (systemd) */
        int lingering;                 /* sessions: 1 its login closed (what runs outlived it), 0 open, -1 unknown */
        AgStatusNode **children;
        size_t n_children;
        /* a user group: the user's latency lane beside the tree (lane.h),
         * "/<root>.lane-<uid>", when there is one (NULL: none); its own
         * values, not among the children */
        AgStatusNode *lane;
        bool is_lane;
};

typedef struct AgStatus {
        int version;
        char *mount;
        char *root;                    /* "/<root>" */
        const char *cpu_source;        /* where CPU time comes from: "cpu.stat", "cpuacct.usage" or NULL */
        bool only_one_user;            /* filtered to one user */
        uid_t only_uid;
        AgStatusNode *tree;            /* NULL when <root> does not exist */
        char *acct_mount;              /* v1: the separate cpuacct hierarchy whose mirrors give CPU time, or NULL */
        bool systemd;                  /* the systemd mode's units (status-systemd.c), root "/user.slice" */
        bool lanes;                    /* a user shown has a latency lane */
} AgStatus;

/* Has the login of a session of uid closed? fd: the group the login's own
 * process sits in while it is open (login/ of a session, the
 * session-N.scope of the systemd mode), -1 when that group is gone. The
 * process that opened the login (sshd, login, su, cron) runs as root
 * (effective uid 0) and leaves at close; what the user left running is
 * theirs. 1 closed: the group is gone, or holds no process of effective uid
 * 0; 0 open; -1 cannot tell (a session of root's, a process whose status
 * cannot be read, more than 4096 processes). */
int ag_status_login_closed(int fd, uid_t uid);
/* Collects the tree. only_uid: (uid_t) -1 for every user. */
int ag_status_collect(const AgHierarchy *h, const char *root, uid_t only_uid, AgStatus **ret);
AgStatus *ag_status_free(AgStatus *s);
/* Weight, shares, cap, idle flag and throttling counters of one group
 * (cgroup version 1 or 2), and on v2 its CPU time (the same cpu.stat); what
 * cannot be read is -1 (quota_us -2). lean: no file the values do not need
 * (v1: no period without a cap; cpu.idle only for a group whose weight is
 * the kernel's idle weight). batch: where the files' descriptors are left,
 * to be closed together (NULL: each closed after its read). */
void ag_status_read_policy(int version, int fd, AgStatusNode *n, bool lean, AgFdBatch *batch);
/* The same for the systemd mode (h: cgroup v2): user-UID.slice below
 * /user.slice, its session-N.scope units and user@UID.service with the
 * terminals' app.slice/autogroup-sid-S.scope units. */
int ag_status_systemd_collect(const AgHierarchy *h, uid_t only_uid, AgStatus **ret);
/* "autogroup explain" in the systemd mode: the unit properties policy
 * becomes for uid (user-UID.slice, its session scopes, the terminals'
 * scopes). */
void ag_explain_systemd(const AgPolicy *policy, uid_t uid, FILE *out);


/* Human output: a tree drawn like systemd-cgls, columns aligned.
 * unicode: draw the tree with box-drawing characters. */
void ag_status_print(const AgStatus *s, FILE *f, bool unicode);
/* One JSON object. */
void ag_status_print_json(const AgStatus *s, FILE *f);

/* "1.234s", "2min 3.4s", "1h 2min", "-" for < 0. */
void ag_format_usec(long long usec, char *buf, size_t size);
/* "150%", "none", "-" for unknown. */
void ag_format_cap(long long quota_us, unsigned long period_us, char *buf, size_t size);
