/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * metricsfloor: the system calls that `autogroup metrics` cannot do without,
 * alone: for each user-<uid> group below DIR, its directory opened and listed
 * once, the link count of each session (a session's leaves), cpu.shares,
 * cpu.cfs_quota_us and cpu.stat opened, read and closed (cgroup v1, as
 * bench/metrics measures), and with cpuacct mounted apart the mirror's
 * cpuacct.usage (openat2 beneath MIRROR, as the helper reads it). Nothing is
 * parsed, named or printed: what is left is the kernel's part, the floor of
 * any program that gives the same series. bench/metrics times it beside the
 * helper, with bench/execloop, so that both pay for one exec.
 *
 *   metricsfloor DIR [MIRROR]
 *
 * Prints one line, "users=N", so that a caller can check it saw the tree. */

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void read_file(int dirfd, const char *name) {
        char buf[512];
        int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return;
        (void) !read(fd, buf, sizeof buf);
        close(fd);
}

static void read_beneath(int dirfd, const char *path) {
        struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        char buf[64];
        int fd = (int) syscall(SYS_openat2, dirfd, path, &how, sizeof how);

        if (fd < 0)
                return;
        (void) !read(fd, buf, sizeof buf);
        close(fd);
}

static void sessions(int ufd) {
        char buf[8192];
        ssize_t len = getdents64(ufd, buf, sizeof buf);

        for (ssize_t off = 0; off < len;) {
                struct dirent64 *de = (struct dirent64 *) (buf + off);
                struct stat st;

                off += de->d_reclen;
                if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        (void) fstatat(ufd, de->d_name, &st, AT_SYMLINK_NOFOLLOW);
        }
}

int main(int argc, char **argv) {
        static const char *const files[] = { "cpu.shares", "cpu.cfs_quota_us", "cpu.stat" };
        int rfd, afd = -1;
        unsigned users = 0;
        struct dirent *de;
        DIR *d;

        if (argc < 2 || (rfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                fprintf(stderr, "usage: metricsfloor DIR [MIRROR]\n");
                return 2;
        }
        if (argc > 2 && (afd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                perror(argv[2]);
                return 2;
        }
        d = fdopendir(dup(rfd));
        if (!d)
                return 2;
        while ((de = readdir(d))) {
                char path[NAME_MAX + sizeof "/cpuacct.usage"];
                int ufd;

                if (de->d_type != DT_DIR || strncmp(de->d_name, "user-", 5) != 0)
                        continue;
                ufd = openat(rfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (ufd < 0)
                        continue;
                users++;
                sessions(ufd);
                for (unsigned i = 0; i < sizeof files / sizeof files[0]; i++)
                        read_file(ufd, files[i]);
                if (afd >= 0) {
                        snprintf(path, sizeof path, "%s/cpuacct.usage", de->d_name);
                        read_beneath(afd, path);
                }
                close(ufd);
        }
        closedir(d);
        printf("users=%u\n", users);
        return 0;
}
