/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup enter": moves a process that leads a setsid() session into a
 * leaf of its own inside the user's delegated pam_autogroup session.
 *
 * No privilege is used or needed: the session directory and its cgroup.procs
 * belong to the user (the module delegated them), so the kernel's file
 * permissions decide. The session is found from the process's own cgroup,
 * never from the environment. */

#include <sys/types.h>

#include "cgroup.h"

#define AG_LEAF_PREFIX "sid-"
/* Entries of the session directory looked at when removing empty sibling leaves. */
#define AG_ENTER_SWEEP_MAX 256

typedef enum AgEnterResult {
        AG_ENTER_NOT_LEADER,           /* the process does not lead its session */
        AG_ENTER_NOT_MANAGED,          /* not inside one of the user's delegated sessions */
        AG_ENTER_OTHER_USER,           /* the process belongs to another user */
        AG_ENTER_ALREADY,              /* already in its leaf: nothing changed */
        AG_ENTER_MOVED,                /* moved into its leaf */
        AG_ENTER_REALTIME,             /* a real-time task the kernel refused: left where it is */
        AG_ENTER_SCOPE_FAILED,         /* logind host: the user manager could not be asked, or refused */
        AG_ENTER_LOGIN_SHELL,          /* logind host: the login's own shell stays in its session scope */
        AG_ENTER_NOT_DELEGATED,        /* in the user's session, which stays root's (delegate=no) */
        _AG_ENTER_RESULT_MAX,
} AgEnterResult;

const char *ag_enter_result_to_string(AgEnterResult r);

/* Opens the session directory that path (a process's cgroup path in h, as
 * ag_cg_pid_path gives it; modified) is in: a session of uid below root, the
 * user group (and its pool) root's and the session uid's, as the module makes
 * them, walked down from the mount without following symlinks. Returns the
 * directory fd, the session's cgroup path ("/<root>[/pool-<name>]/user-<uid>/<session>",
 * allocated) and the rest of path below it (a pointer into path, "" for
 * none). -ENOENT when path is not in such a session, -EPERM when it is in
 * a session of uid that was not delegated (root's, pam_autogroup's default). */
int ag_session_dir_open(const AgHierarchy *h, const char *root, uid_t uid, char *path, int *ret_sfd,
                        char **ret_session_path, char **ret_rest);

/* The session lookup of enter, run and set: the delegated session of uid
 * that pid sits in, from pid's cgroup in h (ag_cg_pid_path) through
 * ag_session_dir_open(), with the same returns; *ret_rest is allocated here.
 * -ENOENT also when h has no cpu or pid no cgroup in h. On failure
 * *ret_what names the step that failed ("read the process's cgroup", "open
 * the session group", "allocate memory"), except for an h without cpu. */
int ag_session_dir_open_pid(const AgHierarchy *h, const char *root, pid_t pid, uid_t uid, int *ret_sfd,
                            char **ret_session_path, char **ret_rest, const char **ret_what);

/* The checks both modes of "autogroup enter" (this one and the systemd
 * mode's, enter-systemd.h) make of pid, each returning 1 to go on, 0 with
 * *ret_result set to stop with nothing to do, or -errno with *ret_what
 * naming the step. ag_enter_check_leader: pid leads its setsid() session
 * (else AG_ENTER_NOT_LEADER). ag_enter_check_owner: pid belongs to uid by
 * the rule of ag_pid_owned_by(), all four uids (real, effective, saved,
 * filesystem) uid's (else AG_ENTER_OTHER_USER). */
int ag_enter_check_leader(pid_t pid, AgEnterResult *ret_result, const char **ret_what);
int ag_enter_check_owner(pid_t pid, uid_t uid, AgEnterResult *ret_result, const char **ret_what);

/* Moves pid into <session>/sid-<pid> when pid leads its session and sits in a
 * session of uid (the session directory must be owned by uid, the user group
 * by root) and belongs to uid (ag_enter_check_owner). On success *ret_result says what happened and *ret_leaf (may be
 * NULL) is the leaf's cgroup path when there is one. On failure *ret_what
 * (may be NULL) names the step that failed. */
int ag_enter(const AgHierarchy *h, const char *root, pid_t pid, uid_t uid,
             AgEnterResult *ret_result, char **ret_leaf, const char **ret_what);
