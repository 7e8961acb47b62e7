/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * pam_cgfloor: bench/cgops's cgroupfs operations inside a PAM session
 * module, for bench/login. It is the floor of a login as libpam sees it: a
 * module that libpam loads and unloads every login and that does nothing
 * but the kernel work of a pam_autogroup login (no options parsed beyond
 * its own, no NSS, no config, no audit, no checks). Not installed, never
 * used outside the benchmark.
 *
 *   session optional pam_cgfloor.so dir=DIR origin=ORIGIN uid=UID [leaves=N]  the cgroupfs operations
 *   session optional pam_cgfloor.so                                           nothing (the cost of a module)
 *
 * DIR is an existing empty cgroup of the v1 cpu hierarchy, ORIGIN the cgroup
 * the caller is in (both directories). open makes DIR/user-x/s/login, chowns
 * the session's and the leaf's directory, cgroup.procs and tasks to UID and
 * moves the caller into login/; close moves it back to ORIGIN and removes
 * the three groups, all relative to directory fds (as bench/cgops). With
 * leaves=N, open also makes the session's root leaves leaf-1 .. leaf-N and
 * chowns each one's cgroup.procs to UID (the default layout since root's
 * leaves), and close removes them before the session. Every
 * call returns PAM_SUCCESS, or PAM_SESSION_ERR when an operation failed
 * (loginbench stops then). */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAM_SM_SESSION
#include <security/pam_modules.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv);
int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv);

static const char *option(int argc, const char **argv, const char *name) {
        size_t n = strlen(name);

        for (int i = 0; i < argc; i++)
                if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
                        return argv[i] + n + 1;
        return NULL;
}

static int write_at(int dfd, const char *file, const char *value) {
        int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -1;
        ssize_t n = write(fd, value, strlen(value));
        close(fd);
        return n < 0 ? -1 : 0;
}

static int mkdir_open(int dfd, const char *name) {
        if (dfd < 0 || (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST))
                return -1;
        return openat(dfd, name, DIR_FLAGS);
}

static unsigned leaves_option(int argc, const char **argv) {
        const char *v = option(argc, argv, "leaves");
        unsigned long n = v ? strtoul(v, NULL, 10) : 0;

        return n > 64 ? 64 : (unsigned) n;
}

/* leaf-1 .. leaf-n below the session s, each one's cgroup.procs the user's */
static int make_leaves(int s, unsigned n, uid_t uid) {
        char name[32];

        for (unsigned i = 1; i <= n; i++) {
                snprintf(name, sizeof name, "leaf-%u", i);
                if (mkdirat(s, name, 0755) < 0 && errno != EEXIST)
                        return -1;
                int fd = openat(s, name, DIR_FLAGS);
                if (fd < 0)
                        return -1;
                int r = fchownat(fd, "cgroup.procs", uid, (gid_t) -1, AT_SYMLINK_NOFOLLOW);
                close(fd);
                if (r < 0)
                        return -1;
        }
        return 0;
}

static int remove_leaves(int s, unsigned n) {
        char name[32];
        int r = 0;

        for (unsigned i = 1; i <= n; i++) {
                snprintf(name, sizeof name, "leaf-%u", i);
                if (unlinkat(s, name, AT_REMOVEDIR) < 0)
                        r = -1;
        }
        return r;
}

static int delegate(int fd, uid_t uid) {
        if (fchown(fd, uid, (gid_t) -1) < 0 || fchownat(fd, "cgroup.procs", uid, (gid_t) -1, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchownat(fd, "tasks", uid, (gid_t) -1, AT_SYMLINK_NOFOLLOW) < 0)
                return -1;
        return 0;
}

int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        const char *dir = option(argc, argv, "dir"), *uidstr = option(argc, argv, "uid");
        char pid[32];
        int d, u = -1, s = -1, l = -1, r = -1;

        (void) pamh;
        (void) flags;
        if (!dir || !uidstr)
                return PAM_SUCCESS;
        uid_t uid = (uid_t) strtoul(uidstr, NULL, 10);
        snprintf(pid, sizeof pid, "%d\n", (int) getpid());
        d = open(dir, DIR_FLAGS);
        u = mkdir_open(d, "user-x");
        s = mkdir_open(u, "s");
        l = mkdir_open(s, "login");
        if (l >= 0 && delegate(s, uid) == 0 && delegate(l, uid) == 0 &&
            make_leaves(s, leaves_option(argc, argv), uid) == 0 && write_at(l, "cgroup.procs", pid) == 0)
                r = 0;
        for (int *fd = (int[]) { l, s, u, d }, i = 0; i < 4; i++)
                if (fd[i] >= 0)
                        close(fd[i]);
        return r == 0 ? PAM_SUCCESS : PAM_SESSION_ERR;
}

int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        const char *dir = option(argc, argv, "dir"), *origin = option(argc, argv, "origin");
        char pid[32];
        int o, d, u, s, r = 0;

        (void) pamh;
        (void) flags;
        if (!dir || !origin)
                return PAM_SUCCESS;
        snprintf(pid, sizeof pid, "%d\n", (int) getpid());
        o = open(origin, DIR_FLAGS);
        if (o < 0 || write_at(o, "cgroup.procs", pid) < 0)
                r = -1;
        d = open(dir, DIR_FLAGS);
        u = d < 0 ? -1 : openat(d, "user-x", DIR_FLAGS);
        s = u < 0 ? -1 : openat(u, "s", DIR_FLAGS);
        if (s < 0 || remove_leaves(s, leaves_option(argc, argv)) < 0 || unlinkat(s, "login", AT_REMOVEDIR) < 0 ||
            unlinkat(u, "s", AT_REMOVEDIR) < 0 ||
            unlinkat(d, "user-x", AT_REMOVEDIR) < 0)
                r = -1;
        for (int *fd = (int[]) { s, u, d, o }, i = 0; i < 4; i++)
                if (fd[i] >= 0)
                        close(fd[i]);
        return r == 0 ? PAM_SUCCESS : PAM_SESSION_ERR;
}
