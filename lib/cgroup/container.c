/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* cgroup v2 containers without systemd: whether the namespace's root blocks
 * every group below it, and container-init, which moves its processes into a
 * leaf. See container.h. */

#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "container.h"
#include "util.h"

/* Rounds of "move what is listed": processes forking meanwhile show up in
 * the next round. */
#define MOVE_ROUNDS 16

static bool is_system_root(int fd) {
        /* The system's root cgroup is the only one without cgroup.type. */
        return faccessat(fd, "cgroup.type", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int ag_container_root_blocked(const AgHierarchy *h) {
        _cleanup_close_ int fd = -1;
        int r;

        assert(h);

        if (h->version != 2)
                return 0;
        r = ag_hierarchy_open(h, &fd);
        if (r < 0)
                return r;
        if (is_system_root(fd))
                return 0;
        r = ag_cg_count_procs(fd);
        if (r < 0)
                return r;
        return r > 0;
}

static int attach(pid_t pid, void *userdata) {
        return ag_cg_attach(*(const int *) userdata, pid);
}

/* Moves every process listed in fd's cgroup.procs into lfd, one read of
 * the list. Returns the number moved or -errno. */
static int move_listed(int fd, int lfd) {
        return ag_cg_foreach_proc(fd, 0, attach, &lfd);
}

int ag_container_init(const AgHierarchy *h, const char *leaf, unsigned *ret_moved, bool *ret_changed) {
        _cleanup_close_ int fd = -1, lfd = -1;
        unsigned moved = 0;
        bool enabled;
        int r;

        assert(h);

        r = ag_hierarchy_open_v2(h, &fd);
        if (r < 0)
                return r;
        r = ag_cg_lists_cpu(fd, "cgroup.controllers");
        if (r < 0)
                return r;
        if (r == 0)
                return -EOPNOTSUPP;
        r = ag_cg_lists_cpu(fd, "cgroup.subtree_control");
        if (r < 0)
                return r;
        enabled = r > 0;

        /* The system's root cgroup is exempt from the rule: never empty it. */
        r = is_system_root(fd) ? 0 : ag_cg_count_procs(fd);
        if (r < 0)
                return r;
        if (r == 0) {
                if (!enabled) {
                        r = ag_write_file(fd, "cgroup.subtree_control", "+cpu");
                        if (r < 0)
                                return r;
                }
                *ret_moved = 0;
                *ret_changed = !enabled;
                return 0;
        }

        /* A thread root (processes + cpu): its children are invalid
         * domains that cannot take processes. Undo that first. */
        if (enabled) {
                r = ag_write_file(fd, "cgroup.subtree_control", "-cpu");
                if (r < 0)
                        return r;
        }
        r = ag_cg_mkdir_open(fd, leaf, NULL, &lfd);
        if (r < 0)
                return r;
        for (unsigned i = 0;; i++) {
                int n = move_listed(fd, lfd);
                if (n < 0)
                        return n;
                moved += (unsigned) n;
                r = ag_cg_count_procs(fd);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (i + 1 >= MOVE_ROUNDS)
                        return -EBUSY;  /* processes keep appearing: do not make it a thread root */
        }
        r = ag_write_file(fd, "cgroup.subtree_control", "+cpu");
        if (r < 0)
                return r;
        *ret_moved = moved;
        *ret_changed = true;
        return 0;
}
