/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Root's leaves of a session (place.h names them), as the user's helper
 * finds and joins them: "autogroup enter" moves a terminal's shell into a
 * free leaf-<i>, "autogroup run" a command into a free leaf-<i> or into the
 * class leaf of its latency class. Nothing here needs privilege: the kernel
 * lets the user write only the cgroup.procs files root handed over.
 *
 * A leaf counts as root's for the user when its directory belongs to root
 * and its cgroup.procs to the user; anything else below the session is not
 * used. A leaf is free when no process is in it. Two terminals that pick
 * the same free leaf at the same moment both see the other there after the
 * move: the one of the higher session id moves on to the next free leaf
 * (ag_leaf_claim). Two "autogroup run" commands that pick the same leaf at
 * the same moment share it (coarser grouping; no rule is broken). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"
#include "conf.h"

/* Opens the leaf name below the session sfd when it is one of root's leaves
 * for uid (see above): 0 and *ret_fd, -ENOENT when there is none, -EPERM
 * when its owners are not those. */
int ag_leaf_open(int sfd, const char *name, uid_t uid, int *ret_fd);

/* Is every process in the leaf a member of the setsid() session sid? 1 yes
 * (or no process at all), 0 no, -errno. Looks at no more than 4096. */
int ag_leaf_only_session(int lfd, pid_t sid);

/* Finds the first free leaf-<i> of the session sfd for uid: 0 with
 * *ret_fd and its name in ret_name (size bytes), -ENOSPC when every leaf
 * holds processes, -ENOENT when the session has no leaves. */
int ag_leaf_find_free(int sfd, uid_t uid, char *ret_name, size_t size, int *ret_fd);

/* Moves pid, the leader of its setsid() session, into a free leaf-<i> of
 * its own (see above). 0 with the leaf's name in ret_name; -ENOSPC when no
 * leaf is free (pid stays, or shares the last leaf it raced for), -ENOENT
 * when the session has no leaves, or the -errno of the move (-EINVAL: a
 * real-time task on v1 with RT group scheduling). */
int ag_leaf_claim(int sfd, uid_t uid, pid_t pid, char *ret_name, size_t size);

/* The leaf for a command of latency class l: the class leaf when the
 * session has one (interactive 1 and 2; shared by every command of the
 * class), else a free leaf-<i> as ag_leaf_find_free(). */
int ag_leaf_for_class(int sfd, uid_t uid, AgLatency l, char *ret_name, size_t size, int *ret_fd);
