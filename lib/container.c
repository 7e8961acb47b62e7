/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* cgroup v2 containers without systemd: whether the namespace's root blocks
 * every group below it, and container-init, which moves its processes into a
 * leaf. See container.h. */

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

/* Moves every process listed in fd's cgroup.procs into lfd, one read of
 * the list. Returns the number moved or -errno. */
static int move_listed(int fd, int lfd) {
        _cleanup_close_ int pfd = -1;
        char *line = NULL;
        size_t allocated = 0;
        int moved = 0, r = 0;
        FILE *f;

        pfd = openat(fd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (pfd < 0)
                return negative_errno();
        f = fdopen(pfd, "re");
        if (!f)
                return negative_errno();
        pfd = -1;
        while (getline(&line, &allocated, f) > 0) {
                unsigned long pid;

                line[strcspn(line, "\n")] = 0;
                if (ag_safe_atoul(line, INT32_MAX, &pid) < 0 || pid == 0)
                        continue;
                r = ag_cg_attach(lfd, (pid_t) pid);
                if (r == -ESRCH) {
                        r = 0;          /* exited meanwhile */
                        continue;
                }
                if (r < 0)
                        break;
                moved++;
        }
        free(line);
        fclose(f);
        return r < 0 ? r : moved;
}

int ag_container_init(const AgHierarchy *h, const char *leaf, unsigned *ret_moved, bool *ret_changed) {
        _cleanup_close_ int fd = -1, lfd = -1;
        unsigned moved = 0;
        bool enabled;
        int r;

        if (h->version != 2)
                return -EOPNOTSUPP;
        r = ag_hierarchy_open(h, &fd);
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
