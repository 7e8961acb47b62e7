/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup enter": moves a process that leads a setsid() session into a
 * leaf of its own inside the user's pam_autogroup session: a free one of
 * the leaves root made at open (lib/cgroup/leaves.h), or, in a session delegated to
 * the user (delegate=yes), a leaf sid-<pid> it makes there.
 *
 * No privilege is used or needed: the kernel's file permissions decide
 * (root handed the user the leaves' cgroup.procs, or the delegated session).
 * The session is found from the process's own cgroup, never from the
 * environment. */

#include <stdbool.h>
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
        AG_ENTER_NO_FREE_LEAF,         /* every leaf of the session holds processes: left where it is */
        AG_ENTER_NO_LEAVES,            /* the session has no leaves (the item leaves or leaves-notty is 0) */
        _AG_ENTER_RESULT_MAX,
} AgEnterResult;

const char *ag_enter_result_to_string(AgEnterResult r);


/* The session lookup of enter, run and set: the session of uid
 * that pid sits in, from pid's cgroup in h (ag_cg_pid_path) through
 * ag_session_dir_open(), with the same returns; *ret_rest is allocated here.
 * -ENOENT also when h has no cpu or pid no cgroup in h. On failure
 * *ret_what names the step that failed ("read the process's cgroup", "open
 * the session group", "allocate memory"), except for an h without cpu. */
int ag_session_dir_open_pid(const AgHierarchy *h, const char *root, pid_t pid, uid_t uid, int *ret_sfd,
                            char **ret_session_path, char **ret_rest, bool *ret_delegated, const char **ret_what);

/* The checks both modes of "autogroup enter" (this one and the systemd
 * mode's, enter-systemd.h) make of pid, each returning 1 to go on, 0 with
 * *ret_result set to stop with nothing to do, or -errno with *ret_what
 * naming the step. ag_enter_check_leader: pid leads its setsid() session
 * (else AG_ENTER_NOT_LEADER). ag_enter_check_owner: pid belongs to uid by
 * the rule of ag_pid_owned_by(), all four uids (real, effective, saved,
 * filesystem) uid's (else AG_ENTER_OTHER_USER). */
int ag_enter_check_leader(pid_t pid, AgEnterResult *ret_result, const char **ret_what);
int ag_enter_check_owner(pid_t pid, uid_t uid, AgEnterResult *ret_result, const char **ret_what);

/* Moves pid into a leaf of its own when pid leads its session, sits in a
 * session of uid (ag_session_dir_open) and belongs to uid
 * (ag_enter_check_owner): in a session of root's, the first free leaf-<i>
 * unless pid already sits in a leaf that holds only its own session's
 * processes; in a delegated session, <session>/sid-<pid>. On success
 * *ret_result says what happened and *ret_leaf (may be NULL) is the leaf's
 * cgroup path when there is one. On failure *ret_what (may be NULL) names
 * the step that failed. */
int ag_enter(const AgHierarchy *h, const char *root, pid_t pid, uid_t uid,
             AgEnterResult *ret_result, char **ret_leaf, const char **ret_what);
