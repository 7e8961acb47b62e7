/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * noslice.so: an LD_PRELOAD shim for the latency tests that makes this
 * kernel look like one without EEVDF custom slices (before Linux 6.12):
 *   AG_TEST_NOSLICE=ignore   sched_setattr() drops sched_runtime (what
 *                            older kernels do with it for fair tasks)
 *   AG_TEST_NOSLICE=einval   sched_setattr() with a sched_runtime fails with EINVAL
 * and, for the idle flag, like one without cpu.idle (before Linux 5.15):
 *   AG_TEST_NOIDLE=1         openat() and faccessat() of a file named
 *                            "cpu.idle" fail with ENOENT, as they do where the
 *                            kernel does not make that file
 * Test code only: never installed, never loaded by the product. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "latency.h"

long syscall(long n, ...);

long syscall(long n, ...) {
        static long (*real)(long, ...);
        long a[6];
        va_list ap;

        va_start(ap, n);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (!real)
                real = (long (*)(long, ...)) dlsym(RTLD_NEXT, "syscall");

        const char *mode = getenv("AG_TEST_NOSLICE");
        if (n == SYS_sched_setattr && mode && a[1]) {
                AgSchedAttr attr;

                memcpy(&attr, (const void *) a[1], sizeof attr);
                if (attr.sched_runtime != 0 && strcmp(mode, "einval") == 0) {
                        errno = EINVAL;
                        return -1;
                }
                attr.sched_runtime = 0;
                return real(n, a[0], (long) &attr, a[2]);
        }
        return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* AG_TEST_NOIDLE: is path a "cpu.idle" file (by its last component)? */
static int hide_idle(const char *path) {
        const char *base;

        if (!path || !getenv("AG_TEST_NOIDLE"))
                return 0;
        base = strrchr(path, '/');
        return strcmp(base ? base + 1 : path, "cpu.idle") == 0;
}

static mode_t open_mode(int flags, va_list ap) {
        return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

int openat(int dirfd, const char *path, int flags, ...);
int openat64(int dirfd, const char *path, int flags, ...);
int faccessat(int dirfd, const char *path, int mode, int flags);

typedef int (*openat_fn)(int, const char *, int, ...);

/* openat() and openat64() alike: the mode taken from the variadic argument by
 * the caller, the real function (looked up once as sym) for all but cpu.idle. */
static int openat_unless_idle(openat_fn *real, const char *sym, int dirfd, const char *path, int flags,
                              mode_t mode) {
        if (hide_idle(path)) {
                errno = ENOENT;
                return -1;
        }
        if (!*real)
                *real = (openat_fn) dlsym(RTLD_NEXT, sym);
        return (*real)(dirfd, path, flags, mode);
}

/* openat() and openat64(): the same wrapper, each with its own real function */
#define DEFINE_OPENAT(name)                                                        \
        int name(int dirfd, const char *path, int flags, ...) {                    \
                static openat_fn real;                                             \
                va_list ap;                                                        \
                mode_t mode;                                                       \
                                                                                   \
                va_start(ap, flags);                                               \
                mode = open_mode(flags, ap);                                       \
                va_end(ap);                                                        \
                return openat_unless_idle(&real, #name, dirfd, path, flags, mode); \
        }

DEFINE_OPENAT(openat)
DEFINE_OPENAT(openat64)

int faccessat(int dirfd, const char *path, int mode, int flags) {
        static int (*real)(int, const char *, int, int);

        if (hide_idle(path)) {
                errno = ENOENT;
                return -1;
        }
        if (!real)
                real = (int (*)(int, const char *, int, int)) dlsym(RTLD_NEXT, "faccessat");
        return real(dirfd, path, mode, flags);
}
