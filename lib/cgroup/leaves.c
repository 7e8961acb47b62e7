/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Root's leaves of a session as the user's helper finds and joins them. See leaves.h. */

#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "leaves.h"
#include "place.h"
#include "util.h"

#define LEAF_PROCS_MAX 4096

int ag_leaf_open(int sfd, const char *name, uid_t uid, int *ret_fd) {
        _cleanup_close_ int lfd = -1;
        struct stat st;
        int r;

        assert(name);

        r = ag_cg_open(sfd, name, &lfd);
        if (r < 0)
                return r == -ENOTDIR || r == -ELOOP ? -ENOENT : r;
        if (fstat(lfd, &st) < 0)
                return negative_errno();
        if (st.st_uid != 0)
                return -EPERM;
        if (fstatat(lfd, "cgroup.procs", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        if (st.st_uid != uid)
                return -EPERM;
        *ret_fd = take_fd(&lfd);
        return 0;
}

/* No process in the leaf? 1 yes, 0 no: one byte of cgroup.procs tells. */
static int leaf_empty(int lfd) {
        _cleanup_close_ int fd = -1;
        char c;
        ssize_t n;

        fd = openat(lfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        n = read(fd, &c, 1);
        if (n < 0)
                return negative_errno();
        return n == 0;
}

static int other_session(pid_t pid, void *userdata) {
        pid_t sid = getsid(pid);

        if (sid < 0)
                return errno == ESRCH ? -ESRCH : negative_errno();
        return sid == *(const pid_t *) userdata ? 0 : -EEXIST;
}

/* Is there a process of another session with a lower session id? */
static int lower_session(pid_t pid, void *userdata) {
        pid_t sid = getsid(pid), own = *(const pid_t *) userdata;

        if (sid < 0)
                return errno == ESRCH ? -ESRCH : negative_errno();
        return sid != own && sid < own ? -EEXIST : 0;
}

int ag_leaf_only_session(int lfd, pid_t sid) {
        int r = ag_cg_foreach_proc(lfd, LEAF_PROCS_MAX, other_session, &sid);

        if (r == -EEXIST)
                return 0;
        return r < 0 ? r : 1;
}

int ag_leaf_find_free(int sfd, uid_t uid, char *ret_name, size_t size, int *ret_fd) {
        bool any = false;
        char name[32];

        for (unsigned i = 1; i <= AG_LEAVES_MAX; i++) {
                _cleanup_close_ int lfd = -1;
                int r;

                if (ag_root_leaf_name(i, name, sizeof name) < 0)
                        break;
                /* root makes them 1..N; one can be missing a moment (a close
                 * removing a lingering session's free leaves makes them again) */
                r = ag_leaf_open(sfd, name, uid, &lfd);
                if (r < 0)
                        continue;
                any = true;
                if (leaf_empty(lfd) <= 0)
                        continue;
                if (strlen(name) >= size)
                        return -ENOBUFS;
                strcpy(ret_name, name);
                *ret_fd = take_fd(&lfd);
                return 0;
        }
        return any ? -ENOSPC : -ENOENT;
}

int ag_leaf_claim(int sfd, uid_t uid, pid_t pid, char *ret_name, size_t size) {
        int r = -ENOSPC;

        assert(ret_name);

        for (unsigned tries = 0; tries < AG_LEAVES_MAX; tries++) {
                _cleanup_close_ int lfd = -1;

                r = ag_leaf_find_free(sfd, uid, ret_name, size, &lfd);
                if (r < 0)
                        return r;
                r = ag_cg_attach(lfd, pid);
                if (r == -ENODEV || r == -ENOENT) {
                        r = -ENOSPC;    /* removed meanwhile: another */
                        continue;
                }
                if (r < 0)
                        return r;
                /* a terminal that raced for the same leaf: the lower session id keeps it */
                if (ag_cg_foreach_proc(lfd, LEAF_PROCS_MAX, lower_session, &pid) != -EEXIST)
                        return 0;
                r = -ENOSPC;
        }
        return r;
}

int ag_leaf_for_class(int sfd, uid_t uid, AgLatency l, char *ret_name, size_t size, int *ret_fd) {
        char name[32];
        int r;

        if (ag_class_leaf_name(l, name, sizeof name) >= 0) {
                _cleanup_close_ int lfd = -1;

                r = ag_leaf_open(sfd, name, uid, &lfd);
                if (r >= 0) {
                        if (strlen(name) >= size)
                                return -ENOBUFS;
                        strcpy(ret_name, name);
                        *ret_fd = take_fd(&lfd);
                        return 0;
                }
        }
        return ag_leaf_find_free(sfd, uid, ret_name, size, ret_fd);
}
