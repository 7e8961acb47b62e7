/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Pools: a level above the user groups.
 *
 *   <hierarchy>/<root>/pool-<name>/user-<uid>/<session>/login
 *   <hierarchy>/<root>/user-<uid>/<session>/login        (a user in no pool)
 *
 * pool-<name> belongs to root like user-<uid>, carries the pool's weight, cap
 * and idle flag (pool:NAME lines), is made on demand (EEXIST is success) and
 * removed once empty. A "place" is where a user's group lives: <root> itself
 * or one pool directory. */

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"
#include "conf.h"
#include "policy.h"
#include "session.h"

#define AG_POOL_PREFIX "pool-"
/* "<root>/pool-<name>", the place's path below the hierarchy without the leading '/' */
#define AG_PLACE_MAX (AG_ROOT_NAME_MAX + 1 + sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1)

/* "pool-<name>"; -EINVAL for an invalid pool name. */
int ag_pool_group_name(const char *pool, char *buf, size_t size);
/* Parses "pool-<name>" with a valid name; *ret_pool points into dirname. */
int ag_pool_group_parse(const char *dirname, const char **ret_pool);
/* "<root>" or "<root>/pool-<name>" (pool NULL or "": no pool). */
int ag_pool_place(const char *root, const char *pool, char *buf, size_t size);

/* Opens the directory that holds user-<uid> for a user in pool (NULL or "":
 * <root> itself, rfd duplicated). For a pool: creates pool-<name> below rfd
 * when missing (root's, mode 0755), writes the pool's limits where they
 * differ, enables cpu for its children (v2). On failure *ret_what names the
 * step. -ENOENT/-ENODEV when a concurrent sweep removed it: try again.
 * Limits the kernel refuses do not fail it: the pool keeps what it had
 * (never less capped, see ag_cg_apply) and *ret_policy_error (may be NULL)
 * gets the -errno; else it is set to 0. */
int ag_pool_parent_open(const AgHierarchy *h, int rfd, const char *pool, const AgPolicy *limits, int *ret_fd,
                        const char **ret_what, int *ret_policy_error);

/* Opens an existing place's directory: rfd duplicated for no pool, else
 * <root>/pool-<name> (never created, no symlink followed). */
int ag_pool_parent_find(int rfd, const char *pool, int *ret_fd);

/* Sweeps uid's groups in one place (see ag_user_sweep) and then, when
 * remove_user_group and the sweep removed something, removes the pool
 * directory if that left it empty.
 * Returns the number of groups removed or -errno. */
int ag_pool_sweep_place(int rfd, const char *root, const char *pool, uid_t uid, bool remove_user_group,
                        unsigned max_dirs, ag_removed_fn removed, void *userdata);

/* At open: sweeps uid's groups (user group included) in every place the
 * config names (each pool of a pool item or pool:NAME line, and <root> itself)
 * except the place `current` (the user's pool, NULL or "" for none), so that a
 * user whose pool changed leaves nothing behind once their old sessions are
 * empty. With h (may be NULL) on cgroup v1 with cpuacct mounted on its own,
 * the same places' cpuacct mirrors too (ag_acct_sweep_place). Costs one
 * openat per known pool in each hierarchy; never reads <root>. */
int ag_pool_sweep_other_places(const AgHierarchy *h, int rfd, const char *root, uid_t uid, const char *current,
                               const AgConfig *config, ag_removed_fn removed, void *userdata);

/* gc: every user group in <root>/<dirname> (a pool directory), with the gc
 * budget, then the pool directory once empty. */
int ag_pool_gc(int rfd, const char *root, const char *dirname, ag_removed_fn removed, void *userdata);
