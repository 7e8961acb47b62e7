/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "enter.h"
#include "leaves.h"
#include "session.h"
#include "pool.h"
#include "util.h"

/* How often mkdir + move starts over when a concurrent enter removed the
 * fresh leaf as an empty sibling before the move. */
#define ENTER_RETRIES 16

static const char *const result_table[_AG_ENTER_RESULT_MAX] = {
        [AG_ENTER_NOT_LEADER] = "not a session leader, nothing to do",
        [AG_ENTER_NOT_MANAGED] = "not inside a pam_autogroup session of this user, nothing to do",
        [AG_ENTER_OTHER_USER] = "the process belongs to another user, nothing to do",
        [AG_ENTER_ALREADY] = "already in its leaf, nothing to do",
        [AG_ENTER_MOVED] = "moved into its leaf",
        [AG_ENTER_REALTIME] = "a real-time task, left where it is",
        [AG_ENTER_SCOPE_FAILED] = "the user manager did not move it, left where it is",
        [AG_ENTER_LOGIN_SHELL] = "the login's own shell, left in its session scope",
        [AG_ENTER_NO_FREE_LEAF] = "every leaf of the session holds processes, left where it is",
        [AG_ENTER_NO_LEAVES] = "the session has no leaves (autogroup.conf: leaves 0, or leaves-notty 0 for a login without a terminal), nothing to do",
};

const char *ag_enter_result_to_string(AgEnterResult r) {
        if ((unsigned) r >= _AG_ENTER_RESULT_MAX)
                return NULL;
        return result_table[r];
}

int ag_enter_check_leader(pid_t pid, AgEnterResult *ret_result, const char **ret_what) {
        pid_t sid = getsid(pid);

        if (sid < 0) {
                *ret_what = "find the process's session";
                return negative_errno();
        }
        if (sid != pid) {
                *ret_result = AG_ENTER_NOT_LEADER;
                return 0;
        }
        return 1;
}

int ag_enter_check_owner(pid_t pid, uid_t uid, AgEnterResult *ret_result, const char **ret_what) {
        int r = ag_pid_owned_by(pid, uid);

        if (r < 0) {
                *ret_what = "read the process's owner";
                return r;
        }
        if (r == 0) {
                *ret_result = AG_ENTER_OTHER_USER;
                return 0;
        }
        return 1;
}

static bool is_realtime(pid_t pid) {
        int policy = sched_getscheduler(pid);
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* Removes empty sibling leaves "sid-*" (never login/ or anything the user
 * named otherwise), looking at no more than AG_ENTER_SWEEP_MAX entries. */
static void sweep_siblings(int sfd, const char *keep) {
        struct dirent *de;
        unsigned seen = 0;
        DIR *d;

        if (ag_opendir_dup(sfd, &d) < 0)
                return;
        while ((de = readdir(d)) && seen++ < AG_ENTER_SWEEP_MAX) {
                if (de->d_type != DT_DIR || strncmp(de->d_name, AG_LEAF_PREFIX, strlen(AG_LEAF_PREFIX)) != 0 ||
                    strcmp(de->d_name, keep) == 0)
                        continue;
                /* rmdir on cgroupfs removes only an empty group with no children */
                (void) unlinkat(sfd, de->d_name, AT_REMOVEDIR);
        }
        closedir(d);
}

int ag_session_dir_open_pid(const AgHierarchy *h, const char *root, pid_t pid, uid_t uid, int *ret_sfd,
                            char **ret_session_path, char **ret_rest, bool *ret_delegated, const char **ret_what) {
        _cleanup_close_ int sfd = -1;
        _cleanup_free_ char *path = NULL, *spath = NULL, *rest_copy = NULL;
        char *rest;
        bool delegated;
        int r;

        if (!h->has_cpu)
                return -ENOENT;
        r = ag_cg_pid_path(h, pid, &path);
        if (r < 0) {
                *ret_what = "read the process's cgroup";
                return r;
        }
        r = ag_session_dir_open(h, root, uid, path, &sfd, &spath, &rest, &delegated);
        if (r < 0) {
                *ret_what = r == -ENOMEM ? "allocate memory" : "open the session group";
                return r;
        }
        rest_copy = strdup(rest);
        if (!rest_copy) {
                *ret_what = "allocate memory";
                return -ENOMEM;
        }
        *ret_sfd = take_fd(&sfd);
        *ret_session_path = TAKE_PTR(spath);
        *ret_rest = TAKE_PTR(rest_copy);
        *ret_delegated = delegated;
        return 0;
}

/* A delegated session: pid into <session>/sid-<pid>, made when missing;
 * the user's empty sid-* leaves of ended terminals go. */
static int enter_delegated(int sfd, const char *session_path, const char *rest, pid_t pid,
                           AgEnterResult *ret_result, char **ret_leaf, const char **ret_what) {
        _cleanup_free_ char *leaf_path = NULL;
        char leaf[64];
        int r;

        /* pid leads its session: the session id is pid */
        snprintf(leaf, sizeof leaf, AG_LEAF_PREFIX "%" PRIiMAX, (intmax_t) pid);
        if (asprintf(&leaf_path, "%s/%s", session_path, leaf) < 0) {
                *ret_what = "allocate memory";
                return -ENOMEM;
        }
        if (strcmp(rest, leaf) == 0) {
                *ret_result = AG_ENTER_ALREADY;
                *ret_leaf = TAKE_PTR(leaf_path);
                return 0;
        }

        for (unsigned i = 0;; i++) {
                _cleanup_close_ int lfd = -1;
                bool created = false;

                r = ag_cg_mkdir_open(sfd, leaf, &created, &lfd);
                if (r < 0) {
                        *ret_what = "create the leaf";
                        return r;
                }
                r = ag_cg_attach(lfd, pid);
                if (r >= 0)
                        break;
                lfd = safe_close(lfd);
                if ((r == -ENOENT || r == -ENODEV) && i < ENTER_RETRIES)
                        continue;       /* removed under our feet: make it again */
                if (created)
                        (void) unlinkat(sfd, leaf, AT_REMOVEDIR);
                if (r == -EINVAL && is_realtime(pid)) {
                        /* v1 with RT group scheduling: the leaf has no RT
                         * budget. RT tasks stay where they are. */
                        *ret_result = AG_ENTER_REALTIME;
                        return 0;
                }
                *ret_what = "move the process into the leaf";
                return r;
        }
        sweep_siblings(sfd, leaf);
        *ret_result = AG_ENTER_MOVED;
        *ret_leaf = TAKE_PTR(leaf_path);
        return 0;
}

/* A session of root's: pid stays in a leaf of root's that holds only its
 * own session's processes, else goes into the first free one. */
static int enter_root_leaves(int sfd, const char *session_path, const char *rest, pid_t pid, uid_t uid,
                             AgEnterResult *ret_result, char **ret_leaf, const char **ret_what) {
        _cleanup_close_ int lfd = -1;
        char leaf[32];
        int r;

        if (ag_root_leaf_name_valid(rest) && ag_leaf_open(sfd, rest, uid, &lfd) >= 0 &&
            ag_leaf_only_session(lfd, pid) > 0) {
                if (asprintf(ret_leaf, "%s/%s", session_path, rest) < 0) {
                        *ret_what = "allocate memory";
                        return -ENOMEM;
                }
                *ret_result = AG_ENTER_ALREADY;
                return 0;
        }
        lfd = safe_close(lfd);

        r = ag_leaf_claim(sfd, uid, pid, leaf, sizeof leaf);
        if (r == -ENOSPC || r == -ENOENT) {
                *ret_result = r == -ENOSPC ? AG_ENTER_NO_FREE_LEAF : AG_ENTER_NO_LEAVES;
                *ret_leaf = NULL;
                return 0;
        }
        if (r == -EINVAL && is_realtime(pid)) {
                /* v1 with RT group scheduling: the leaf has no RT budget */
                *ret_result = AG_ENTER_REALTIME;
                *ret_leaf = NULL;
                return 0;
        }
        if (r == -ENODEV) {
                *ret_result = AG_ENTER_NOT_MANAGED;    /* the session is being closed */
                *ret_leaf = NULL;
                return 0;
        }
        if (r < 0) {
                *ret_what = "move the process into a free leaf";
                return r;
        }
        if (asprintf(ret_leaf, "%s/%s", session_path, leaf) < 0) {
                *ret_leaf = NULL;      /* moved all the same */
        }
        *ret_result = AG_ENTER_MOVED;
        return 0;
}

int ag_enter(const AgHierarchy *h, const char *root, pid_t pid, uid_t uid,
             AgEnterResult *ret_result, char **ret_leaf, const char **ret_what) {
        _cleanup_close_ int sfd = -1;
        _cleanup_free_ char *leaf_path = NULL, *session_path = NULL, *rest = NULL;
        AgEnterResult result;
        const char *what = NULL;
        bool delegated = false;
        int r;

        r = ag_enter_check_leader(pid, &result, &what);
        if (r < 0)
                goto fail;
        if (r == 0)
                goto done;
        r = ag_session_dir_open_pid(h, root, pid, uid, &sfd, &session_path, &rest, &delegated, &what);
        if (r == -ENOENT) {
                result = AG_ENTER_NOT_MANAGED;
                goto done;
        }
        if (r < 0)
                goto fail;

        r = ag_enter_check_owner(pid, uid, &result, &what);
        if (r < 0)
                goto fail;
        if (r == 0)
                goto done;

        r = delegated ? enter_delegated(sfd, session_path, rest, pid, &result, &leaf_path, &what)
                      : enter_root_leaves(sfd, session_path, rest, pid, uid, &result, &leaf_path, &what);
        if (r < 0)
                goto fail;

done:
        *ret_result = result;
        if (ret_leaf)
                *ret_leaf = result == AG_ENTER_MOVED || result == AG_ENTER_ALREADY ? TAKE_PTR(leaf_path) : NULL;
        return 0;

fail:
        if (ret_what)
                *ret_what = what;
        return r;
}
