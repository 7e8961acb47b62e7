/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cgops: the kernel's own cost of the cgroupfs operations one pam_autogroup
 * login makes on cgroup v1, without PAM, the module or its library: the
 * floor under bench/login's figure.
 *
 *   cgops DIR ORIGIN UID ITERATIONS
 *
 * DIR is an existing (empty) cgroup directory of the cpu hierarchy, ORIGIN
 * the cgroup the process is in. Each iteration makes DIR/user-x/s/login,
 * chowns the session's and the leaf's directory, cgroup.procs and tasks to
 * UID, moves the calling process into login/, then back to ORIGIN, and
 * removes the three groups, all relative to directory file descriptors. Prints
 *   cgops n=<iterations> median=<us> create_median=<us> remove_median=<us>
 * (create = mkdir, chown and the move in; remove = the move out and rmdir). */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
        qsort(v, (size_t) n, sizeof *v, cmp);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int write_at(int dfd, const char *file, const char *value) {
        int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, value, strlen(value));
        int r = n < 0 ? -errno : 0;
        close(fd);
        return r;
}

static int mkdir_open(int dfd, const char *name) {
        if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
                return -errno;
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static int delegate(int fd, uid_t uid) {
        if (fchown(fd, uid, (gid_t) -1) < 0 || fchownat(fd, "cgroup.procs", uid, (gid_t) -1, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchownat(fd, "tasks", uid, (gid_t) -1, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

/* One iteration; returns 0 or -errno, the two phase times in *create, *remove. */
static int one(int dir, int origin, uid_t uid, const char *pid, double *create, double *remove) {
        double t0 = now_us(), t1;
        int u, s, l, r = 0;

        u = mkdir_open(dir, "user-x");
        if (u < 0)
                return u;
        s = mkdir_open(u, "s");
        l = s < 0 ? s : mkdir_open(s, "login");
        if (l < 0)
                r = l;
        if (r == 0)
                r = delegate(s, uid);
        if (r == 0)
                r = delegate(l, uid);
        if (r == 0)
                r = write_at(l, "cgroup.procs", pid);
        t1 = now_us();
        if (write_at(origin, "cgroup.procs", pid) < 0 && r == 0)
                r = -errno;
        if (l >= 0)
                close(l);
        if (s >= 0) {
                if (unlinkat(s, "login", AT_REMOVEDIR) < 0 && r == 0)
                        r = -errno;
                close(s);
        }
        if (unlinkat(u, "s", AT_REMOVEDIR) < 0 && r == 0)
                r = -errno;
        close(u);
        if (unlinkat(dir, "user-x", AT_REMOVEDIR) < 0 && r == 0)
                r = -errno;
        *create = t1 - t0;
        *remove = now_us() - t1;
        return r;
}

int main(int argc, char **argv) {
        char pid[32];
        int n, dir, origin, r;

        if (argc != 5 || (n = atoi(argv[4])) <= 0) {
                fprintf(stderr, "usage: cgops DIR ORIGIN UID ITERATIONS\n");
                return 2;
        }
        uid_t uid = (uid_t) strtoul(argv[3], NULL, 10);
        dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        origin = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0 || origin < 0) {
                fprintf(stderr, "cgops: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        snprintf(pid, sizeof pid, "%d\n", (int) getpid());
        double *all = calloc((size_t) n, sizeof *all), *cr = calloc((size_t) n, sizeof *cr),
               *rm = calloc((size_t) n, sizeof *rm);
        if (!all || !cr || !rm)
                return 1;
        for (int i = 0; i < 20; i++)   /* warm-up */
                if ((r = one(dir, origin, uid, pid, &cr[0], &rm[0])) < 0) {
                        fprintf(stderr, "cgops: %s\n", strerror(-r));
                        return 1;
                }
        for (int i = 0; i < n; i++) {
                if ((r = one(dir, origin, uid, pid, &cr[i], &rm[i])) < 0) {
                        fprintf(stderr, "cgops: iteration %d: %s\n", i, strerror(-r));
                        return 1;
                }
                all[i] = cr[i] + rm[i];
        }
        printf("cgops n=%d median=%.1f create_median=%.1f remove_median=%.1f\n", n, median(all, n), median(cr, n),
               median(rm, n));
        free(all);
        free(cr);
        free(rm);
        close(dir);
        close(origin);
        return 0;
}
