/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where a user's group lives: the names, paths and directories of the layout.
 *
 *   <hierarchy>/<root>/user-<uid>/<session>/login              a user in no pool
 *   <hierarchy>/<root>/pool-<name>/user-<uid>/<session>/login  a user in pool <name>
 *
 * A "place" is the directory that holds user-<uid>: <root> itself or one
 * pool directory <root>/pool-<name>. On cgroup v1 with cpuacct mounted on
 * its own, the cpuacct mirror of a place (lib/cgroup/acct.h) has the same path
 * below the cpuacct hierarchy's root: what takes the fd of <root> here
 * (ag_pool_parent_find) finds a place in either hierarchy.
 *
 * The library's layers; each header includes only headers of the layers
 * below it, each .c file only its own header and those below:
 *
 *   events.h                 the event sink every layer reports to (warnings, removed groups)
 *   cgroup.h                 hierarchies (mountinfo) and directory-fd operations on groups
 *   place.h                  names, paths and directories of the layout (this file)
 *   acct.h                   CPU time; the cpuacct mirrors of v1 sessions
 *   pool.h                   sweeps: a user's emptied groups in a place, the places a user left, gc
 *   session.h                a login's groups: open, close, wait
 *   login.h                  a login's lifecycle: the mode, and the cgroupfs (session.h, acct.h)
 *                            or the systemd (systemd.h) backend; what the PAM module calls
 * and beside session.h, on place.h only: hint.h (the root from AUTOGROUP_SESSION); on
 * place.h and leaves.h: lane.h (a user's latency lane beside <root>, cgroup v1). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "conf.h"
#include "events.h"
#include "policy.h"

#define AG_USER_PREFIX "user-"
#define AG_POOL_PREFIX "pool-"
#define AG_AUDIT_SESSION_UNSET 4294967295UL

/* How far root descends into a user's session when removing it, and how many
 * directories it visits there at most: a session with more stays until gc
 * (or the user) clears it. Bounds close and gc against hostile trees. */
#define AG_SESSION_MAX_DEPTH 8
#define AG_SESSION_MAX_DIRS 256
/* The same for "autogroup gc", run by the administrator. */
#define AG_GC_MAX_DIRS 16384


/* The leaves root makes in a session that is not delegated (the default),
 * each root's but for its cgroup.procs, which is the user's (on cgroup v2
 * the session's cgroup.procs too, the common ancestor of every move between
 * them): the user can move their own processes between them and nowhere
 * else, and can neither make a group nor change a weight.
 *
 *   leaf-1 .. leaf-<leaves>   a terminal (autogroup enter) or an "autogroup run"
 *                             command each, the default weight
 *   class-interactive         at interactive 1 and 2: "autogroup run --latency"
 *   class-audio               of that class, with the weight of lib/config/latency.h's
 *                             table (the item interactive), written by root */
/* The mark close leaves on a session that still holds processes (an
 * extended attribute only root can set or read): the one watcher of the
 * user stays while such a session is left (pool.h). */
#define AG_CLOSED_XATTR "trusted.autogroup.closed"
/* A session's own leaf: the login's caller and what it starts, root's. */
#define AG_LOGIN_LEAF "login"
#define AG_ROOT_LEAF_PREFIX "leaf-"
#define AG_CLASS_LEAF_PREFIX "class-"
/* "leaf-<i>" for i in 1..AG_LEAVES_MAX. */
int ag_root_leaf_name(unsigned i, char *buf, size_t size);
/* "class-<class>" for the classes whose leaf weight the level raises
 * (interactive, audio); -EINVAL for the others (they use leaf-<i>). */
int ag_class_leaf_name(AgLatency l, char *buf, size_t size);
/* Is name one of the names above? */
bool ag_root_leaf_name_valid(const char *name);

/* "user-<uid>". */
int ag_user_group_name(uid_t uid, char *buf, size_t size);
/* Parses "user-<uid>" (the canonical spelling only); -EINVAL for anything else. */
int ag_user_group_parse(const char *name, uid_t *ret_uid);

/* "pool-<name>"; -EINVAL for an invalid pool name. */
int ag_pool_group_name(const char *pool, char *buf, size_t size);
/* Parses "pool-<name>" with a valid name; *ret_pool points into dirname. */
int ag_pool_group_parse(const char *dirname, const char **ret_pool);

/* "<root>/pool-<name>", the place's path below the hierarchy without the leading '/' */
#define AG_PLACE_MAX (AG_ROOT_NAME_MAX + 1 + sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1)
/* "<root>" or "<root>/pool-<name>" (pool NULL or "": no pool). */
int ag_pool_place(const char *root, const char *pool, char *buf, size_t size);

/* Session directory names: "s<audit session id>" when set, "p<pid>" otherwise;
 * suffix n > 0 appends "-<n>" (the first name was taken: open passes a
 * number unique for the boot, so that names never run out). */
int ag_session_name(unsigned long audit_session, pid_t pid, uint64_t suffix, char *buf, size_t size);

/* The user's shared group, user-<uid>/shared: root's throughout (no file of
 * it is the user's, on v1 and v2), no leaves, below the user group and so
 * under the user's weight, cap and idle flag. A login that cannot have a
 * session of its own lands there (one log line): the user has sessions-max
 * sessions already, or the kernel refused the session (ENOSPC, EBUSY, a
 * mkdir refused...). A group of its own rather than the user group itself:
 * on cgroup v2 a group with cpu enabled for its children holds no process.
 * The processes of a place the user left are moved there by root too
 * (pool.h). Sweeps remove it once empty, like a session. */
#define AG_SHARED_GROUP "shared"
/* Does a session directory name (len bytes) belong to the audit session id
 * ("s<id>" or "s<id>-<n>")? With id AG_AUDIT_SESSION_UNSET every name does
 * (the module then named it by pid). */
bool ag_session_name_matches_audit(const char *name, size_t len, unsigned long audit_session);

/* The one parser of a session path, "/<root>[/pool-<name>]/user-<uid>/
 * <session>[/<rest>]" (a process's group in the cpu hierarchy, as
 * /proc/PID/cgroup gives it). Pure string work: the caller knows the path
 * is the kernel's. Every component is checked: <root> exactly, the pool
 * name valid, user-<uid> canonical, <session> neither empty nor "." or "..".
 * -ENOENT when path is not inside a session of root; outputs untouched then.
 *
 * ag_session_of_path: any user's session. *ret_uid is its user and
 * *ret_session (when not NULL) the session directory's name, a pointer into
 * path of *ret_session_len bytes. */
int ag_session_of_path(const char *path, const char *root, uid_t *ret_uid, const char **ret_session,
                       size_t *ret_session_len);
/* ag_session_path_split: a session of uid only; cuts path (modified) into
 * the session name, the rest below it (without a leading '/', "" for none)
 * and the pool name (NULL for none; ret_pool may be NULL), pointers into path. */
int ag_session_path_split(char *path, const char *root, uid_t uid, char **ret_session, char **ret_rest,
                          char **ret_pool);

/* Opens an existing place's directory below rfd, the fd of <root> in the cpu
 * hierarchy or in the cpuacct one (its mirror): rfd duplicated for no pool
 * (NULL or ""), else pool-<name> (never created, no symlink followed). */
int ag_pool_parent_find(int rfd, const char *pool, int *ret_fd);

/* The one walk down the layout, for everyone who reads a user's groups
 * (the module's close and wait, enter/run/set, the hint, the watcher):
 *
 *   <hierarchy> -> <root> -> the place (<root>, or <root>/pool-<name>) -> user-<uid> -> <session>
 *
 * each level opened relative to the one above (ag_cg_open: O_DIRECTORY,
 * O_NOFOLLOW, no symlink followed), nothing created. A level not reached
 * is -1. The fds are the walk's state, not an output: the caller closes
 * them with ag_descent_done (also as a _cleanup_ function). */
typedef struct AgDescent {
        int mfd;        /* the hierarchy's mount */
        int rfd;        /* <root> */
        int pfd;        /* the place */
        int ufd;        /* user-<uid> */
        int sfd;        /* <session>, when one was asked for */
} AgDescent;
#define AG_DESCENT_NULL { -1, -1, -1, -1, -1 }

/* The ownership rule, as the module makes the layout. */
typedef enum AgDescentFlags {
        /* <root>, the pool and user-<uid> are root's: anything else is not the
         * module's and counts as missing */
        AG_DESCENT_ROOT_OWNED = 1 << 0,
        /* the session is root's (root's leaves) or uid's (delegated) */
        AG_DESCENT_SESSION_OWNED = 1 << 1,
} AgDescentFlags;

/* Opens the levels down to user-<uid> (session NULL) or to <session>, for
 * uid in pool (NULL or "": none) below root. 0 when every level asked for
 * is open. A level that is missing, not a directory, a symlink or not owned
 * as flags ask: -ENOENT; another failure: its -errno. Either way the levels
 * above it stay open in *d (the caller may go on from them). */
int ag_descent_open(const AgHierarchy *h, const char *root, const char *pool, uid_t uid, const char *session,
                    unsigned flags, AgDescent *d);
/* Closes what *d holds and resets it to AG_DESCENT_NULL. */
void ag_descent_done(AgDescent *d);

/* Opens the session directory that path (a process's cgroup path in h, as
 * ag_cg_pid_path gives it; modified) is in: a session of uid below root,
 * found by the descent with both ownership rules (the user group and its
 * pool root's, the session root's or, delegated, uid's). Returns the
 * directory fd, the session's cgroup path ("/<root>[/pool-<name>]/user-<uid>/
 * <session>", allocated), the rest of path below it (a pointer into path,
 * "" for none) and whether the session is delegated to uid. -ENOENT when
 * path is not in such a session. */
int ag_session_dir_open(const AgHierarchy *h, const char *root, uid_t uid, char *path, int *ret_sfd,
                        char **ret_session_path, char **ret_rest, bool *ret_delegated);

/* Opens the place that holds user-<uid> for a user in pool (NULL or "":
 * <root> itself, rfd duplicated). For a pool: creates pool-<name> below rfd
 * when missing (root's, mode 0755), writes the pool's limits where they
 * differ, enables cpu for its children (v2). On failure *ret_what names the
 * step. -ENOENT/-ENODEV when a concurrent sweep removed it: try again.
 * Limits the kernel refuses do not fail it: the pool keeps what it had
 * (never less capped, see ag_cg_apply) and *ret_policy_error (may be NULL)
 * gets the -errno; else it is set to 0. *ret_created (may be NULL) tells
 * whether this call made pool-<name> (set on success only). */
int ag_pool_parent_open(const AgHierarchy *h, int rfd, const char *pool, const AgPolicy *limits, int *ret_fd,
                        bool *ret_created, const char **ret_what, int *ret_policy_error);
