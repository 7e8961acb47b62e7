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

/* Checks hint against pid's (0: the caller's) cgroup in h and the groups'
 * owners. On success copies <root> into ret_root (size bytes, at least
 * AG_ROOT_NAME_MAX + 1). -ENOENT: no hint; -EINVAL: not of the module's
 * shape; -EPERM: another uid's path, or groups not owned by root; -ESRCH: the
 * process is not there; another -errno when the cgroup cannot be read.
 * ret_root is untouched on failure. */
int ag_root_from_hint(const AgHierarchy *h, const char *hint, pid_t pid, uid_t uid, char *ret_root, size_t size);

/* Is path (a process's group in the cpu hierarchy, as /proc/PID/cgroup
 * gives it) inside a session of root: "/<root>[/pool-<name>]/user-<uid>/
 * <session>[/...]"? On success *ret_uid is the session's user and
 * *ret_session (when not NULL) the session directory's name, a pointer into
 * path of *ret_session_len bytes. -ENOENT when it is not; outputs untouched
 * then. Pure string work: the caller knows the path is the kernel's. */
int ag_session_of_path(const char *path, const char *root, uid_t *ret_uid, const char **ret_session,
                       size_t *ret_session_len);

/* Does a session directory name belong to the audit session id (the module
 * names sessions "s<id>" or "s<id>-<n>")? With id AG_AUDIT_SESSION_UNSET
 * every name does (the module then named it by pid). */
bool ag_session_name_matches_audit(const char *name, size_t len, unsigned long audit_session);
