/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A login's groups (the layout and the layers: place.h):
 *
 *   <hierarchy>/<root>[/pool-<name>]/user-<uid>/<session>/login
 *                                                        /leaf-1 .. leaf-<leaves>
 *                                                        /class-interactive, class-audio
 *
 * <root>, pool-<name> and user-<uid> belong to root and carry the policy.
 * By default a session is root's throughout but for the cgroup.procs files
 * of its leaves (on v2 also the session's own, the common ancestor of a
 * move between them), which belong to the user: the user moves their own
 * processes between the session's leaves (autogroup enter and run), and can
 * neither make a group, change a weight, nor move a process into the
 * session from outside or out of it (place.h names the leaves). login/
 * stays root's entirely. A delegated session (AgOpenParams.delegate, cgroup
 * v2) gets no leaves from root: its directory and its cgroup.procs,
 * cgroup.threads and cgroup.subtree_control are the user's, who makes
 * groups in it; its cpu.* files stay root's. Opening creates what is
 * missing and moves a process into login/; closing moves it out and removes
 * every empty group of that user (the sweeps: pool.h). */

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"
#include "place.h"
#include "policy.h"
#include "pool.h"

/* v2: cgroup.max.descendants of every delegated session (root-owned); its
 * cgroup.max.depth is AG_SESSION_MAX_DEPTH, so on v2 the kernel keeps every
 * session within what close and gc remove. v1 has neither limit. */
#define AG_SESSION_MAX_DESCENDANTS 128

typedef struct AgSession {
        char *root;                    /* name of the subtree below the hierarchy root */
        uid_t uid;
        char *name;                    /* session directory; NULL when the user has sessions no */
        char *origin;                  /* cgroup the process came from (may be NULL) */
        char *acct_origin;             /* v1: its cpuacct group then, read with origin (may be NULL);
                                        * where the accounting mirror puts it back (lib/cgroup/acct.h) */
        char *path;                    /* cgroup path of the session (or user group), "/<root>/user-<uid>/<name>" */
        /* pools */
        char *pool;                    /* the user's pool (path "/<root>/pool-<pool>/user-<uid>/<name>"); NULL for none */
        unsigned leaves;               /* leaf-1 .. leaf-<leaves> made at open */
        unsigned class_leaves;         /* bit l set: class-<l> made at open */
        gid_t gid;                     /* the group of the leaves' cgroup.procs */
        unsigned interactive;          /* the level the class leaves' weights are for */
        bool shared;                   /* no session of its own (name NULL): the login is in the user's
                                        * shared group (path ".../user-<uid>/shared"), or on v1 in the
                                        * user group itself when even that was refused (place.h) */
} AgSession;

typedef struct AgOpenParams {
        const char *root;
        uid_t uid;
        gid_t gid;
        const AgPolicy *policy;
        pid_t pid;                     /* process moved into login/; 0 for the caller */
        /* where pid is, when the caller read it already (ag_cg_pid_paths());
         * origin NULL: ag_session_open() reads it (acct_origin NULL: no
         * cpuacct path) */
        const char *origin;
        const char *acct_origin;
        unsigned long audit_session;   /* AG_AUDIT_SESSION_UNSET when none */
        /* pools */
        const char *pool;              /* the user's pool; NULL or "" for none */
        const AgPolicy *pool_policy;   /* its limits (NULL: the defaults) */
        const AgConfig *config;        /* names the places swept at open (NULL: only the user's own) */
        bool delegate;                 /* hand the session group to the user (see the layout above);
                                        * cgroup v2 only, ignored on v1 */
        bool terminal;                 /* a login with a terminal: policy->leaves root's leaves,
                                        * else policy->leaves_notty */
        /* told of every group the sweep at open removes, and of what went
         * wrong without failing the open (lib/cgroup/events.h; may be NULL) */
        const AgEvents *events;
} AgOpenParams;

/* Reads the audit session id of the calling process (AG_AUDIT_SESSION_UNSET when unset). */
unsigned long ag_audit_session_self(void);

/* Opens a session. On failure *ret_what (when not NULL) names the step that
 * failed, for the one log line, and nothing of the new session is left. */
int ag_session_open(const AgHierarchy *h, const AgOpenParams *p, AgSession **ret, const char **ret_what);

/* Moves pid (0: caller) back where it came from (or to the hierarchy root)
 * if it is still inside the session, removes the session if it is empty,
 * then sweeps the user's other empty groups. Returns 0 when the session is
 * gone, -EBUSY when it still holds processes, or another -errno. */
int ag_session_close(const AgHierarchy *h, const AgSession *s, pid_t pid, const AgEvents *events);
/* The same when the caller read pid's cgroup already (ag_cg_pid_paths(),
 * so that one read serves the accounting mirror's close too); current NULL:
 * the process's group could not be read (nothing is moved). */
int ag_session_close_from(const AgHierarchy *h, const AgSession *s, pid_t pid, const char *current,
                          const AgEvents *events);

/* Waits until no process is left in the session s (its whole subtree),
 * polling at growing intervals of at most AG_WAIT_STEP_MAX_US, for at most
 * timeout_ms. 0 when it is empty or gone, -ETIMEDOUT when it still holds
 * processes then, or another -errno. -EINVAL for a session without a
 * session level (sessions no). */
#define AG_WAIT_STEP_MAX_US 250000
int ag_session_wait_empty(const AgHierarchy *h, const AgSession *s, unsigned timeout_ms);

AgSession *ag_session_free(AgSession *s);
