/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The module's root= as seen from inside a session.
 *
 * The module sets AUTOGROUP_SESSION=/<root>[/pool-<name>]/user-<uid>[/<session>] in the PAM
 * environment. The environment is the user's to change, so it is only a
 * hint: it is used when the process really sits at that path or below it
 * (its own line in /proc/PID/cgroup, read by the kernel) and <root> and
 * user-<uid> are root-owned groups, as the module makes them. The helper's
 * verbs that act in the caller's own session (enter, status, run, set) take the
 * root from here when --root is not given. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"
#include "env.h"
#include "place.h"      /* ag_session_of_path, ag_session_name_matches_audit */

/* Checks hint against pid's (0: the caller's) cgroup in h and the groups'
 * owners. On success copies <root> into ret_root (size bytes, at least
 * AG_ROOT_NAME_MAX + 1). -ENOENT: no hint; -EINVAL: not of the module's
 * shape; -EPERM: another uid's path, or groups not owned by root (or gone); -ESRCH: the
 * process is not there; another -errno when the cgroup cannot be read.
 * ret_root is untouched on failure. */
int ag_root_from_hint(const AgHierarchy *h, const char *hint, pid_t pid, uid_t uid, char *ret_root, size_t size);

/* The same without a hint: the session (or user group) the process pid (0:
 * the caller) sits in, as its own cgroup in h names it, with the same checks
 * (of the module's shape, uid's, <root> and user-<uid> root-owned). For
 * AUTOGROUP_SESSION lost on the way (su -, sudo -i, env -u): the caller
 * then checks that <root> is one the module's lines name. -ENOENT when the
 * process is in no such group; else as ag_root_from_hint. */
int ag_root_from_cgroup(const AgHierarchy *h, pid_t pid, uid_t uid, char *ret_root, size_t size);
