/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Sweeps: the removal of what sessions left behind, place by place (the
 * places, <root> and <root>/pool-<name>: place.h).
 *
 * pool-<name> belongs to root like user-<uid> and carries the pool's weight,
 * cap and idle flag (pool:NAME lines). It is made on demand at open
 * (ag_pool_parent_open) and removed here once empty. A session that still
 * holds processes stays; the next open or close of that user, or gc, removes
 * it once it is empty. The cost of a sweep at open or close is bounded by
 * that user's own groups, never by the number of other users. */

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"
#include "conf.h"
#include "place.h"

/* Session directories of one user a sweep at open or close visits at most:
 * a fixed cost whatever the user left behind (sessions-max bounds what a
 * user makes; gc visits the rest). */
#define AG_SWEEP_MAX_SESSIONS 64

/* Removes the empty sessions of one user in the place rootfd (whose path
 * below the hierarchy is root, for the removed event) and, if
 * remove_user_group, the user group once empty, visiting at most max_dirs
 * directories per session (a session with more is left). Cost is bounded by
 * that user's own groups. Returns the number of groups removed or -errno. */
int ag_user_sweep(int rootfd, const char *root, uid_t uid, bool remove_user_group, unsigned max_dirs,
                  const AgEvents *events);

/* How many sessions below the user group ufd were closed and still hold
 * processes: those close marked (AG_CLOSED_XATTR, place.h) or without
 * login/ (close removes it; a live login's caller sits in it), at most
 * AG_SWEEP_MAX_SESSIONS looked at; "shared" is not one. For the one watcher of a user, which stays while any is left. */
int ag_user_closed_sessions(int ufd);

/* The same in <root> itself, given the hierarchy's root directory fd;
 * removes the user group. */
int ag_user_sweep_at(int hierarchy_fd, const char *root, uid_t uid, const AgEvents *events);

/* Sweeps uid's groups in one place (see ag_user_sweep) and then, when
 * remove_user_group and the sweep removed something, removes the pool
 * directory if that left it empty.
 * Returns the number of groups removed or -errno. */
int ag_pool_sweep_place(int rfd, const char *root, const char *pool, uid_t uid, bool remove_user_group,
                        unsigned max_dirs, const AgEvents *events);

/* At open: closes uid's groups (user group included) in every place the
 * config names (each pool of a pool item or pool:NAME line, and <root> itself)
 * except the place `current` (the user's pool, NULL or "" for none). Every
 * process there (the user's, and the root caller of a login that lingers
 * there) is moved by root into ufd, the user group of the place the user
 * lives in now: into its shared group (place.h) when sessions, else into
 * ufd itself; so it runs under the current policy, and the old groups,
 * empty, go: a cgroup.procs of theirs the user opened earlier then points
 * at a group that is gone (on v1 the kernel checks the opener's
 * credentials at each write, so an open descriptor would outlive a chown).
 * A group that still holds processes after a few rounds (a real-time task
 * on v1, a fork bomb) gets its cgroup.procs back (root's) and stays. With
 * h on cgroup v1 with cpuacct mounted on its own, the same places' cpuacct
 * mirrors too (ag_acct_sweep_place). Costs one openat per known pool in each
 * hierarchy; never reads <root>. */
int ag_pool_sweep_other_places(const AgHierarchy *h, int rfd, const char *root, uid_t uid, const char *current,
                               const AgConfig *config, int ufd, bool sessions, const AgEvents *events);

/* Sweeps every place below root: every user group in <root> and in each pool
 * directory, then each pool directory once empty, with the larger budget
 * AG_GC_MAX_DIRS per session (gc is an administrator's command, not in the
 * login path); on v1 with cpuacct mounted on its own, the emptied mirrors
 * too (ag_acct_gc). With configs (the module's configs, all of them), a
 * pool none of them names is closed as a login closes a place its user
 * left: in each of its user groups, every process of a session (and of the
 * user group itself) moves into that user group's shared group (place.h),
 * under the same pool's and user's caps, and the sessions go, so that no
 * cgroup.procs of the user's is left there (a descriptor opened earlier
 * points at a group that is gone); the pool goes once its processes have
 * exited. configs NULL: no pool is closed. Returns the number removed or
 * -errno. */
int ag_gc(const AgHierarchy *h, const char *root, const AgConfig *const *configs, size_t n_configs,
          const AgEvents *events);

/* gc --apply: writes config's policy to the live groups below root, as a
 * login would: each pool directory its pool:NAME lines (defaults for none),
 * and each user-<uid> in a place the limits policy_for resolves for uid,
 * when that is the user's place now (policy_for fills *ret and returns 1;
 * 0 skips the user: unknown, or their pool changed and their next login
 * moves them). Only values that differ are written (ag_cg_apply: never a
 * moment less capped than before or than asked). Returns the number of
 * groups whose values were written and checked, or -errno; *ret_failed (may
 * be NULL) counts the groups the kernel refused. */
typedef int (*ag_policy_for_fn)(void *userdata, uid_t uid, AgPolicy *ret);
int ag_gc_apply(const AgHierarchy *h, const char *root, const AgConfig *config, ag_policy_for_fn policy_for,
                void *userdata, unsigned *ret_failed);
