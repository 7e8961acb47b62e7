/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * nomkdir.so: an LD_PRELOAD shim that makes the kernel refuse one cgroup,
 * for the tests of what the module does when a mkdir fails midway:
 *   AG_TEST_NOMKDIR=NAME:FILE   mkdirat() and mkdir() of a directory whose
 *                               last path component is NAME fail with ENOSPC
 *                               once FILE exists (so a test lets the open
 *                               make it and refuses it later, at close)
 * Test code only: never installed, never loaded by the product. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool refused(const char *path) {
        const char *spec = getenv("AG_TEST_NOMKDIR"), *colon, *base;

        if (!spec || !path || !(colon = strchr(spec, ':')))
                return false;
        base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strlen(base) != (size_t) (colon - spec) || strncmp(base, spec, (size_t) (colon - spec)) != 0)
                return false;
        return access(colon + 1, F_OK) == 0;
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
        static int (*real)(int, const char *, mode_t);

        if (refused(path)) {
                errno = ENOSPC;
                return -1;
        }
        if (!real)
                real = (int (*)(int, const char *, mode_t)) dlsym(RTLD_NEXT, "mkdirat");
        return real(dirfd, path, mode);
}

int mkdir(const char *path, mode_t mode) {
        static int (*real)(const char *, mode_t);

        if (refused(path)) {
                errno = ENOSPC;
                return -1;
        }
        if (!real)
                real = (int (*)(const char *, mode_t)) dlsym(RTLD_NEXT, "mkdir");
        return real(path, mode);
}
