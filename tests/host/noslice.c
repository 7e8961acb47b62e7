/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * noslice.so: an LD_PRELOAD shim for the latency tests that makes this
 * kernel look like one without EEVDF custom slices (before Linux 6.12):
 *   AG_TEST_NOSLICE=ignore   sched_setattr() drops sched_runtime (what
 *                            older kernels do with it for fair tasks)
 *   AG_TEST_NOSLICE=einval   sched_setattr() with a sched_runtime fails with EINVAL
 * Test code only: never installed, never loaded by the product. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "../../lib/latency.h"

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
