/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* CPU accounting of sessions and users.
 *
 * Where the CPU time of a group is read:
 *   cgroup v2                      cpu.stat of the group (usage_usec, user_usec, system_usec)
 *   v1, cpuacct mounted with cpu   cpuacct.usage (ns) and cpuacct.stat (USER_HZ ticks) of the group
 *   v1, cpuacct on its own         the same files of a "mirror" group in the cpuacct hierarchy
 *
 * The mirror has the path of the session relative to the cpu hierarchy root,
 * so "<cpu>/autogroup/user-1000/s42" is mirrored by
 * "<cpuacct>/autogroup/user-1000/s42", whatever levels the cpu path has. It
 * stops at the session level: v1 hierarchies are independent, so processes
 * that move between the session's leaves in the cpu hierarchy stay in the
 * session's mirror. Every mirror group belongs to root (nothing is
 * delegated): the user can neither leave it nor move anything into it. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "place.h"
#include "util.h"

typedef struct AgCpuUsage {
        long long usec;                /* total CPU time; -1 unknown */
        long long user_usec;           /* -1 unknown */
        long long system_usec;         /* -1 unknown */
} AgCpuUsage;

/* Bandwidth control of a group, from its cpu.stat (v1: the cpu controller's) */
typedef struct AgCpuThrottle {
        long long periods;             /* nr_periods: enforcement periods with runnable tasks; -1 unknown */
        long long throttled;           /* nr_throttled: periods in which the group hit its quota; -1 unknown */
        long long throttled_usec;      /* time its tasks were held back (v1 throttled_time / 1000); -1 unknown */
} AgCpuThrottle;

typedef enum AgAcctSource {
        AG_ACCT_NONE,                  /* no CPU accounting on this machine (v1 without cpuacct) */
        AG_ACCT_IN_CPU,                /* in the cpu hierarchy's own groups (v2, or v1 cpu,cpuacct) */
        AG_ACCT_MIRROR,                /* v1: in a mirror in the separate cpuacct hierarchy */
} AgAcctSource;

typedef struct AgAcct {
        AgAcctSource source;
        char *mount;                   /* AG_ACCT_MIRROR: mount point of the cpuacct hierarchy */
        char *path;                    /* the mirrored group ("/<root>/.../<session>"), NULL until made */
        char *origin;                  /* cpuacct group of the process before the mirror (may be NULL) */
        bool sweep;                    /* path's parent holds only this user's groups */
        uint64_t start_usec;           /* CLOCK_BOOTTIME at open */
} AgAcct;

/* Where CPU time is read for groups of the cpu hierarchy h. For
 * AG_ACCT_MIRROR, *ret_mount (not NULL) gets the cpuacct mount point. */
int ag_acct_find(const AgHierarchy *h, AgAcctSource *ret_source, char **ret_mount);

/* Reads the CPU time of one group: v2 from cpu.stat, v1 from cpuacct.*.
 * Values it cannot read stay -1; -ENOENT when even the total is missing. */
int ag_acct_read_group(int version, int cgfd, AgCpuUsage *ret);

/* Reads the throttling counters of one group and, on v2, its CPU time
 * (usage_usec of the same cpu.stat) into *ret_usage_usec when not NULL (-1
 * on v1 or when missing). Values it cannot read stay -1; -ENOENT when it
 * has none of them. The file's descriptor is left in batch (NULL: closed). */
int ag_acct_read_throttle(int version, int cgfd, AgCpuThrottle *ret, long long *ret_usage_usec, AgFdBatch *batch);

/* Starts the accounting of a session: takes the time and finds the source
 * (AG_ACCT_NONE when it cannot tell). -ENOMEM is its only failure. */
int ag_acct_start(const AgHierarchy *h, AgAcct **ret);

/* AG_ACCT_MIRROR: makes the mirror of path (the session's, or the user
 * group's with "sessions no") and moves pid into it. sweep: path's parent is
 * the user's own group (sessions yes), so this user's emptied mirrors there
 * are removed too. origin: pid's cpuacct group before, when the caller
 * read it already (ag_cg_pid_paths(), as ag_session_open() does; NULL: read
 * here). A no-op (0) for other sources. On failure nothing new is left and
 * *ret_what names the step. */
int ag_acct_mirror_open(AgAcct *a, const char *path, pid_t pid, bool sweep, const char *origin,
                        const char **ret_what);

/* What the session group parent_fd/name (whose path below the hierarchy
 * is path, "/<place>/user-<uid>/<session>") used, for a sweep that removes
 * it: from the group itself (v2 cpu.stat, v1 cpu,cpuacct), else from its
 * mirror in a separate cpuacct hierarchy. Values it cannot read stay -1;
 * -errno when even the total is unknown. */
int ag_acct_read_session_at(int parent_fd, const char *name, const char *path, AgCpuUsage *ret);

/* The CPU time so far of the session at path (in the cpu hierarchy h). */
int ag_acct_usage(const AgHierarchy *h, const AgAcct *a, const char *path, AgCpuUsage *ret);

/* Microseconds since ag_acct_start. */
uint64_t ag_acct_wall_usec(const AgAcct *a);

/* Moves pid out of the mirror (back where it came from) and removes the
 * mirror when empty, then this user's other emptied mirrors. current: pid's
 * cpuacct group when the caller read it already (ag_cg_pid_paths(); NULL:
 * read here). ret_usage (may be NULL): the mirror's CPU time, read on the
 * way before its removal, so that a close reads the mirror once; left
 * untouched when it cannot be read. 0 when gone (or no mirror), -EBUSY when
 * it still holds processes. */
int ag_acct_mirror_close(const AgAcct *a, pid_t pid, const char *current, AgCpuUsage *ret_usage);

/* Removes the emptied mirrors of one user ("<root>/user-<uid>/...") and the
 * user's mirror group once empty. Bounded by that user's own groups. */
int ag_acct_sweep_user(const AgHierarchy *h, const char *root, uid_t uid);

/* Opens <cpuacct>/<root>, the top of the mirrors of h's groups (no symlink
 * followed). -ENOENT when there is none: no separate cpuacct hierarchy, or
 * no mirror made yet. */
int ag_acct_root_open(const AgHierarchy *h, const char *root, int *ret_fd);

/* Removes uid's emptied mirrors in one place below acct_rfd (from
 * ag_acct_root_open), the mirror of the place of pool (NULL or "": of
 * <root> itself; found with ag_pool_parent_find, as in the cpu hierarchy).
 * Then the user's mirror group once empty and, when this removed something,
 * the pool's mirror directory once empty. Bounded by that user's own groups
 * (AG_SESSION_MAX_DIRS); never reads the place itself. Returns the number of
 * groups removed or -errno. */
int ag_acct_sweep_place(int acct_rfd, const char *pool, uid_t uid);

/* gc: every empty mirror group below <root> (bounded like ag_gc). Returns
 * the number removed (not reported one by one: a mirror goes with the group
 * it mirrors) or -errno. */
int ag_acct_gc(const AgHierarchy *h, const char *root);

/* "cpu_usec=N user_usec=N system_usec=N wall_usec=N", "?" for an unknown
 * value (u NULL, a field < 0): the fields of the close log line and of the
 * audit record. */
int ag_acct_format(const AgCpuUsage *u, long long wall_usec, char *buf, size_t size);

/* The accounting record of a session's end: one line of key=value pairs that
 * every writer (the module at close, its watcher and sweeps, gc) formats here:
 *
 *   session CGROUP STATE: user=U scope=S cpu_usec=N user_usec=N system_usec=N
 *     wall_usec=N uid=N state=STATE cgroup=CGROUP pool=P by=W
 *
 * The words before the colon are for people; the pairs after it are the
 * record (the first six as they have always been, the others after them).
 * Values are percent-encoded (ag_escape_percent): every byte outside A-Z a-z
 * 0-9 and . _ - / @ : + as %XX, so a value never holds a space, '=' or '"',
 * and "-" for none, "?" for a figure that could not be read. pool is read
 * from the cgroup path ("-" outside a pool). A latency lane's record (scope
 * lane) has the same pairs, "lane" for its first word and state removed. */
typedef enum AgAcctScope {
        AG_ACCT_SCOPE_SESSION,         /* scope=session: what one session used */
        AG_ACCT_SCOPE_USER,            /* scope=user: sessions no, the user group's figures since it was made */
        AG_ACCT_SCOPE_LANE,            /* scope=lane: the user's latency lane beside the tree (lane.h), its
                                        * own figures since it was made, written once, at its removal (v1
                                        * cpu,cpuacct only: elsewhere its processes' time is their sessions') */
} AgAcctScope;

typedef struct AgAcctRecord {
        const char *cgroup;            /* the session's path (the user group's with sessions no, the lane's) */
        const char *state;             /* "closed", "lingering", "removed" */
        const char *user;              /* NULL: unknown */
        uid_t uid;
        AgAcctScope scope;
        const char *by;                /* who wrote it: "close", "watcher", "sweep" (a later login's), "gc" */
        const AgCpuUsage *usage;       /* NULL: unknown */
        long long wall_usec;           /* -1: unknown */
} AgAcctRecord;

/* A buffer that holds any record; the longest pool directory name read. */
#define AG_ACCT_RECORD_MAX 4096
#define AG_ACCT_POOL_COMP_MAX 256

/* The record into buf (size bytes); -ENOBUFS when it does not fit. */
int ag_acct_record_format(const AgAcctRecord *r, char *buf, size_t size);

AgAcct *ag_acct_free(AgAcct *a);
