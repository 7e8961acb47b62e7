/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * execloop: time fork + exec + wait of a command, many times.
 *
 *   execloop [-s] N CMD [ARG...]
 *
 * -s: each run happens in a fresh setsid() session whose leader is a forked
 *     child of execloop that runs CMD as its own child and waits for it, the
 *     way an interactive shell runs the session hook at start (CMD's parent
 *     then leads a session). The baseline must be timed with -s as well.
 * Prints "n=<runs> median=<us> mean=<us> min=<us> cpu_median=<us>" after 10
 * untimed runs, and exits 1 when CMD fails. median/mean/min are wall-clock
 * times; cpu_median is the user + system CPU time of the run's processes (from
 * wait4, children included), which waiting for a busy CPU does not inflate. */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static int run(char **cmd, int leader, double *ret_cpu_us) {
        struct rusage ru;
        pid_t pid = fork();
        int st;

        if (pid < 0)
                return -1;
        if (pid == 0) {
                if (leader) {
                        if (setsid() < 0)
                                _exit(126);
                        pid_t c = fork();
                        if (c < 0)
                                _exit(126);
                        if (c > 0) {
                                if (waitpid(c, &st, 0) < 0)
                                        _exit(126);
                                _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 126);
                        }
                }
                execvp(cmd[0], cmd);
                _exit(127);
        }
        if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return -1;
        *ret_cpu_us = (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
                      (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
        return 0;
}

int main(int argc, char **argv) {
        int leader = 0, i = 1;
        size_t n;
        double *t, *c, sum = 0, cpu;

        if (argc > 1 && strcmp(argv[1], "-s") == 0) {
                leader = 1;
                i++;
        }
        if (argc < i + 2) {
                fprintf(stderr, "usage: execloop [-s] N CMD [ARG...]\n");
                return 2;
        }
        n = (size_t) atol(argv[i]);
        if (n == 0)
                return 2;
        t = calloc(n, sizeof *t);
        c = calloc(n, sizeof *c);
        if (!t || !c)
                return 1;
        for (int w = 0; w < 10; w++)
                if (run(argv + i + 1, leader, &cpu) < 0) {
                        fprintf(stderr, "execloop: %s failed\n", argv[i + 1]);
                        return 1;
                }
        for (size_t k = 0; k < n; k++) {
                double t0 = now_us();
                if (run(argv + i + 1, leader, &cpu) < 0) {
                        fprintf(stderr, "execloop: %s failed\n", argv[i + 1]);
                        return 1;
                }
                t[k] = now_us() - t0;
                c[k] = cpu;
                sum += t[k];
        }
        qsort(t, n, sizeof *t, cmp_d);
        qsort(c, n, sizeof *c, cmp_d);
        printf("n=%zu median=%.1f mean=%.1f min=%.1f cpu_median=%.1f\n", n, t[n / 2], sum / (double) n, t[0],
               c[n / 2]);
        free(t);
        free(c);
        return 0;
}
