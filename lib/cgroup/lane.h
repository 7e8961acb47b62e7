/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The latency lane of a user (cgroup v1, the item "interactive" at 2):
 *
 *   <hierarchy>/<root>.lane-<uid>      beside <root>, not in it
 *
 * A group root makes at the top of the cpu hierarchy, for one user, with
 * the default weight (v1 cpu.shares 1024) and the cap of the item
 * "lane-cap" (default 10% of one CPU). Only its cgroup.procs is the
 * user's: the user moves their own processes in (autogroup run/set
 * --latency interactive|audio), can neither make a group in it, nor
 * rename, remove or change it, nor move another user's process in (v1
 * checks the mover's uid against the process's).
 *
 * Why beside the tree: <root> is one entity at the top of the hierarchy,
 * kept runnable by every user's hogs below it; a wakeup below it finds
 * every ancestor queued already and cannot preempt a task outside the
 * tree before the next tick. A group at the top gets its own place and
 * deadline there. The cap bounds what a user gains over its share by
 * running work in the lane.
 *
 * Not on cgroup v2: a move between the tree and a group beside it needs
 * write access to the common ancestor's cgroup.procs, the hierarchy root's
 * (root's) (Documentation/admin-guide/cgroup-v2.rst, "Delegation
 * Containment"), so the user's helper could not use it; there autogroup
 * run keeps the class leaf. Never for uid 0.
 *
 * Made by the module (root) at open, at interactive 2 only; one per user,
 * shared by every session and command of the user. Removed once the
 * user's group is gone (the close that removes user-<uid>, the watcher of
 * a lingering session, gc); while it holds processes it stays (a warning),
 * for a later close or gc. The helper never creates it. A login that opens
 * while the user's last close is removing the lane may find it gone: its
 * "run --latency" uses the class leaf (one note) until the user's next
 * login makes the lane again. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"
#include "events.h"
#include "policy.h"

#define AG_LANE_INFIX ".lane-"

/* "<root>.lane-<uid>". */
int ag_lane_name(const char *root, uid_t uid, char *buf, size_t size);
/* Is path (relative to the hierarchy, as events name groups) a lane's,
 * "/<anything>.lane-<uid>" of one component? 0 with *ret_uid (may be
 * NULL), -EINVAL when not. A session's path has three components or more. */
int ag_lane_path_uid(const char *path, uid_t *ret_uid);
/* Parses "<root>.lane-<uid>" (the canonical spelling of uid only); -EINVAL
 * for anything else. */
int ag_lane_parse(const char *name, const char *root, uid_t *ret_uid);

/* Does uid get a lane under policy in h? cgroup v1 with cpu, uid not 0,
 * interactive 2, and leaves or leaves-notty not 0 (with both 0 no
 * cgroup.procs is the user's, as for the class leaves). */
bool ag_lane_wanted(const AgHierarchy *h, uid_t uid, const AgPolicy *policy);

/* Root: makes (or finds) the lane of uid below the hierarchy's root mfd,
 * root's (a directory of another owner is refused: -EPERM), writes its
 * weight and cap where they differ, hands its cgroup.procs to uid:gid.
 * 1 when made now, 0 when it was there, or -errno (*ret_what, may be NULL,
 * names the step). */
int ag_lane_make(const AgHierarchy *h, int mfd, const char *root, uid_t uid, gid_t gid, const AgPolicy *policy,
                 const char **ret_what);

/* Root (gc --apply): writes to every lane of root below mfd (root's, as
 * ag_lane_gc finds them) the weight and cap ag_lane_make gives it, with the
 * lane-cap policy_for resolves for its uid now (policy_for fills *ret and
 * returns 1; 0 skips the lane: its user is unknown). Nothing is made,
 * removed or handed over; only values that differ are written (ag_cg_apply).
 * Returns the number of lanes written and checked, or -errno; *ret_failed
 * (may be NULL) counts the lanes the kernel refused. */
int ag_lane_apply(const AgHierarchy *h, int mfd, const char *root,
                  int (*policy_for)(void *userdata, uid_t uid, AgPolicy *ret), void *userdata, unsigned *ret_failed);

/* Root: removes the lane of uid below mfd when the user has no group left
 * in the place pfd (user-<uid> gone; pfd < 0: not checked). 1 removed, 0
 * none or kept (the user still has a group), -EBUSY when it still holds
 * processes (AG_WARN_LANE told), or -errno. One rmdir at most.
 *
 * Every removal (here and in ag_lane_gc) is told to removed with the path
 * "/<root>.lane-<uid>" and, where the lane has CPU time of its own (cgroup
 * v1 with cpuacct mounted with cpu: its cpuacct.usage, read just before the
 * rmdir), what it used since it was made; NULL where it has none: with
 * cpuacct mounted on its own, a process moved into the lane stays in its
 * session's cpuacct mirror, whose figures already count it. */
int ag_lane_sweep(int mfd, int pfd, const char *root, uid_t uid, const AgEvents *events);

/* Root: removes the lane of uid below mfd if it is there, root's and
 * empty (one rmdir; told to removed as above, no warning when it stays): at
 * a login below interactive 2. 1 removed, else 0. */
int ag_lane_drop(int mfd, const char *root, uid_t uid, const AgEvents *events);

/* Root (gc): removes every lane of root below mfd whose user has no
 * user-<uid> in <root> (rfd, may be -1: none) or in any of its pools, and
 * that holds no process. Looks at no more than AG_GC_MAX_DIRS entries.
 * Returns the number removed, or -errno. */
int ag_lane_gc(int mfd, int rfd, const char *root, const AgEvents *events);

/* Anyone (status, metrics): opens the lane of uid below mfd when it is
 * there and root's. 0 with *ret_fd, -ENOENT when there is none (or not
 * root's), -errno. */
int ag_lane_open_at(int mfd, const char *root, uid_t uid, int *ret_fd);

/* The user's helper: opens the lane of uid when it is there and root's
 * with uid's cgroup.procs. 0 with *ret_fd; -ENOENT when there is none (or
 * it is not made as above); -EPROTONOSUPPORT on cgroup v2 (no lane there). */
int ag_lane_open(const AgHierarchy *h, const char *root, uid_t uid, int *ret_fd);
