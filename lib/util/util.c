/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Small helpers shared by the library, the module and the helper: number
 * parsing, small reads and writes relative to a directory fd, a process's
 * uids (and the one ownership rule built on them), parent and session;
 * whether a login's PAM_TTY is a terminal. */

#include <assert.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int ag_safe_atoul(const char *s, unsigned long max, unsigned long *ret) {
        unsigned long v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                unsigned d = (unsigned) (*p - '0');
                if (v > (max - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

static int cmp_int(const void *a, const void *b) {
        int x = *(const int *) a, y = *(const int *) b;
        return x < y ? -1 : x > y;
}

void ag_fd_batch_close(AgFdBatch *b) {
        if (!b || b->n == 0)
                return;
        int saved = errno;
        qsort(b->fd, b->n, sizeof *b->fd, cmp_int);
        /* every number of a run is one of ours: close_range closes nothing else */
        for (size_t i = 0, j; i < b->n; i = j + 1) {
                for (j = i; j + 1 < b->n && b->fd[j + 1] == b->fd[j] + 1;)
                        j++;
                if (j == i || close_range((unsigned) b->fd[i], (unsigned) b->fd[j], 0) < 0)
                        for (size_t k = i; k <= j; k++)
                                (void) close(b->fd[k]);
        }
        b->n = 0;
        errno = saved;
}

void ag_fd_batch_add(AgFdBatch *b, int fd) {
        if (!b) {
                safe_close(fd);
                return;
        }
        if (b->n == AG_FD_BATCH_MAX)
                ag_fd_batch_close(b);
        b->fd[b->n++] = fd;
}

/* A whole small file from fd (closed here, or left in batch) into buf,
 * NUL-terminated, a trailing newline stripped */
static int read_small_fd(int fd, char *buf, size_t size, AgFdBatch *batch) {
        ssize_t n;

        n = read(fd, buf, size - 1);
        if (n < 0) {
                int r = negative_errno();
                ag_fd_batch_add(batch, fd);
                return r;
        }
        ag_fd_batch_add(batch, fd);
        buf[n] = 0;
        if (n > 0 && buf[n - 1] == '\n')
                buf[n - 1] = 0;
        return (int) n;
}

/* Out of descriptors with some held in batch: close them and try again */
static bool batch_retry(AgFdBatch *batch) {
        if (!batch || batch->n == 0 || (errno != EMFILE && errno != ENFILE))
                return false;
        ag_fd_batch_close(batch);
        return true;
}

int ag_read_small_file_batch(int dirfd, const char *name, char *buf, size_t size, AgFdBatch *batch) {
        int fd;

        assert(name);
        assert(buf);

        if (size < 2)
                return -ENOBUFS;
        do
                fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        while (fd < 0 && batch_retry(batch));
        if (fd < 0)
                return negative_errno();
        return read_small_fd(fd, buf, size, batch);
}

int ag_read_small_file(int dirfd, const char *name, char *buf, size_t size) {
        return ag_read_small_file_batch(dirfd, name, buf, size, NULL);
}

/* path below dirfd for reading, no symlink followed in any component and
 * nothing outside dirfd reached: openat2 where the kernel has it (5.6),
 * else one openat(O_NOFOLLOW) a component */
static int open_beneath(int dirfd, const char *path) {
        struct open_how how = {
                .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        int fd = (int) syscall(SYS_openat2, dirfd, path, &how, sizeof how);

        if (fd >= 0 || errno != ENOSYS)
                return fd;
        _cleanup_close_ int cur = -1;
        const char *p = path;
        for (const char *slash; (slash = strchr(p, '/')); p = slash + 1) {
                char comp[NAME_MAX + 1];
                size_t len = (size_t) (slash - p);

                if (len == 0 || len > NAME_MAX || (len <= 2 && strncmp(p, "..", len) == 0)) {
                        errno = EINVAL;
                        return -1;
                }
                memcpy(comp, p, len);
                comp[len] = 0;
                int next = openat(cur >= 0 ? cur : dirfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -1;
                safe_close(cur);
                cur = next;
        }
        if (strcmp(p, "..") == 0 || strcmp(p, ".") == 0 || !*p) {
                errno = EINVAL;
                return -1;
        }
        return openat(cur >= 0 ? cur : dirfd, p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
}

static int parse_ll(const char *buf, long long *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(buf, &end, 10);
        if (errno != 0 || end == buf || (*end && *end != '\n'))
                return -EINVAL;
        *ret = v;
        return 0;
}

int ag_read_ll(int dirfd, const char *name, long long *ret, AgFdBatch *batch) {
        char buf[64];
        int r;

        assert(name);

        r = ag_read_small_file_batch(dirfd, name, buf, sizeof buf, batch);
        if (r < 0)
                return r;
        return parse_ll(buf, ret);
}

int ag_read_ll_beneath(int dirfd, const char *path, long long *ret, AgFdBatch *batch) {
        char buf[64];
        int fd, r;

        assert(path);

        do
                fd = open_beneath(dirfd, path);
        while (fd < 0 && batch_retry(batch));
        if (fd < 0)
                return negative_errno();
        r = read_small_fd(fd, buf, sizeof buf, batch);
        if (r < 0)
                return r;
        return parse_ll(buf, ret);
}

int ag_read_all(int fd, size_t hint, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t cap, len = 0;

        /* cap counts the terminating NUL: there is always room for it, and
         * up to max + 1 bytes of data are read to tell "more than max". */
        cap = (hint < max ? hint : max) + 1;
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                if (len + 1 == cap) {
                        size_t ncap;
                        char *p;

                        if (len > max)
                                return -EFBIG;
                        ncap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
                        p = realloc(buf, ncap);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap = ncap;
                }

                ssize_t n = read(fd, buf + len, cap - 1 - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > max)
                        return -EFBIG;
        }

        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = len;
        return 0;
}

int ag_write_file(int dirfd, const char *name, const char *value) {
        _cleanup_close_ int fd = -1;
        size_t len = strlen(value);
        ssize_t n;

        assert(name);
        assert(value);

        fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        n = write(fd, value, len);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

bool ag_has_token(const char *list, const char *sep, const char *token) {
        size_t n = strlen(token);

        assert(sep);
        assert(token);

        for (const char *p = list; p && *p;) {
                size_t l = strcspn(p, sep);
                if (l == n && strncmp(p, token, n) == 0)
                        return true;
                p += l;
                p += strspn(p, sep);
        }
        return false;
}

int ag_opendir_dup(int fd, DIR **ret) {
        DIR *d;
        int dfd;

        dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return negative_errno();
        d = fdopendir(dfd);
        if (!d) {
                int r = negative_errno();
                safe_close(dfd);
                return r;
        }
        *ret = d;
        return 0;
}

/* Reads /proc/PID/<file> (a small one: stat, status) into buf. */
static int read_proc_pid(pid_t pid, const char *file, char *buf, size_t size) {
        char fn[64];

        snprintf(fn, sizeof fn, "/proc/%" PRIiMAX "/%s", (intmax_t) pid, file);
        return ag_read_small_file(AT_FDCWD, fn, buf, size);
}

int ag_pid_uids(pid_t pid, uid_t ret_uids[static 4]) {
        char buf[4096], *p;
        uid_t uids[4];
        int r;

        r = read_proc_pid(pid, "status", buf, sizeof buf);
        if (r < 0)
                return r;
        p = strstr(buf, "\nUid:");
        if (!p)
                return -EIO;
        p += 5;
        for (unsigned i = 0; i < 4; i++) {
                char one[32];
                unsigned long v;
                size_t len;

                p += strspn(p, " \t");
                len = strcspn(p, " \t\n");
                if (len == 0 || len >= sizeof one)
                        return -EIO;
                memcpy(one, p, len);
                one[len] = 0;
                if (ag_safe_atoul(one, (uid_t) -1, &v) < 0)
                        return -EIO;
                uids[i] = (uid_t) v;
                p += len;
        }
        memcpy(ret_uids, uids, sizeof uids);
        return 0;
}

int ag_pid_owned_by(pid_t pid, uid_t uid) {
        uid_t uids[4];
        int r;

        r = ag_pid_uids(pid, uids);
        if (r < 0)
                return r;
        return uids[0] == uid && uids[1] == uid && uids[2] == uid && uids[3] == uid;
}

int ag_pid_parent_session(pid_t pid, pid_t *ret_ppid, pid_t *ret_sid) {
        char buf[1024], *p;
        unsigned long v[4];
        int r;

        r = read_proc_pid(pid, "stat", buf, sizeof buf);
        if (r < 0)
                return r;
        p = strrchr(buf, ')');
        if (!p || p[1] != ' ')
                return -EIO;
        p += 2;
        /* "state ppid pgrp session ..." */
        p = strchr(p, ' ');
        for (unsigned i = 0; i < 3; i++) {
                char one[24];
                size_t len;

                if (!p)
                        return -EIO;
                p++;
                len = strcspn(p, " ");
                if (len == 0 || len >= sizeof one)
                        return -EIO;
                memcpy(one, p, len);
                one[len] = 0;
                if (ag_safe_atoul(one, INT32_MAX, &v[i]) < 0)
                        return -EIO;
                p += len;
        }
        *ret_ppid = (pid_t) v[0];
        *ret_sid = (pid_t) v[2];
        return 0;
}

bool ag_tty_is_terminal(const char *tty) {
        _cleanup_close_ int dfd = -1;
        const char *rel;
        struct stat st;

        if (!tty || !*tty)
                return false;
        if (tty[0] == ':')
                return true;    /* an X display: a graphical login, whose terminals are windows */
        /* sshd opens the session before the client asks for a pty (or for
         * scp, sftp, a command), with PAM_TTY "ssh" in every case */
        if (strcmp(tty, "ssh") == 0)
                return true;
        rel = strncmp(tty, "/dev/", 5) == 0 ? tty + 5 : tty;
        /* a name below /dev, never above it */
        if (!*rel || rel[0] == '/')
                return false;
        for (const char *c = rel; c; c = strchr(c, '/'), c = c ? c + 1 : NULL)
                if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == 0))
                        return false;
        dfd = open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return false;
        return fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode);
}
