/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cpushare: CPU used by groups of processes, from /proc/PID/schedstat (time on
 * CPU in ns, per task, whatever cgroup or autogroup the task is in).
 *
 *   cpushare [-i INTERVAL] [-w WARMUP] [-d DURATION] [-o TIMELINE] NAME=PIDFILE...
 *
 * Each PIDFILE holds one pid a line (the benchmark's spinners write their own).
 * Samples every INTERVAL seconds (default 0.25) for WARMUP + DURATION seconds.
 * TIMELINE (optional) gets one line a sample: "<t> <cpus of NAME1> ...", where
 * cpus is the average number of CPUs the group used during that interval.
 * On stdout, for the DURATION after the warm-up: "NAME <cpus>" a group.
 * Only threads' main tasks are counted: the spinners are single-threaded. */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_GROUPS 8
#define MAX_PIDS 64

typedef struct Group {
        const char *name;
        const char *pidfile;
        unsigned n;
        pid_t pids[MAX_PIDS];
        uint64_t last[MAX_PIDS];
} Group;

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int read_pids(Group *g) {
        FILE *f = fopen(g->pidfile, "re");
        long p;

        if (!f)
                return -errno;
        g->n = 0;
        while (g->n < MAX_PIDS && fscanf(f, "%ld", &p) == 1)
                g->pids[g->n++] = (pid_t) p;
        fclose(f);
        return 0;
}

/* Time on CPU of one task in ns; keeps the last value once the task is gone. */
static uint64_t task_ns(Group *g, unsigned i) {
        char path[64];
        unsigned long long ns;
        FILE *f;

        snprintf(path, sizeof path, "/proc/%ld/schedstat", (long) g->pids[i]);
        f = fopen(path, "re");
        if (!f)
                return g->last[i];
        if (fscanf(f, "%llu", &ns) == 1)
                g->last[i] = ns;
        fclose(f);
        return g->last[i];
}

static uint64_t group_ns(Group *g) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < g->n; i++)
                sum += task_ns(g, i);
        return sum;
}

static void sleep_until(double t) {
        double d = t - now_s();
        if (d <= 0)
                return;
        struct timespec ts = { (time_t) d, (long) ((d - (double) (time_t) d) * 1e9) };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

int main(int argc, char **argv) {
        double interval = 0.25, warmup = 1.0, duration = 6.0;
        const char *timeline = NULL;
        Group groups[MAX_GROUPS];
        uint64_t prev[MAX_GROUPS], start[MAX_GROUPS];
        unsigned ng = 0;
        FILE *tl = NULL;
        int c;

        while ((c = getopt(argc, argv, "i:w:d:o:")) != -1) {
                switch (c) {
                case 'i': interval = atof(optarg); break;
                case 'w': warmup = atof(optarg); break;
                case 'd': duration = atof(optarg); break;
                case 'o': timeline = optarg; break;
                default:
                        fprintf(stderr, "usage: cpushare [-i S] [-w S] [-d S] [-o FILE] NAME=PIDFILE...\n");
                        return 2;
                }
        }
        if (interval <= 0 || duration <= 0 || warmup < 0) {
                fprintf(stderr, "cpushare: bad interval or duration\n");
                return 2;
        }
        for (int i = optind; i < argc && ng < MAX_GROUPS; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq) {
                        fprintf(stderr, "cpushare: expected NAME=PIDFILE, got %s\n", argv[i]);
                        return 2;
                }
                *eq = 0;
                memset(&groups[ng], 0, sizeof groups[ng]);
                groups[ng].name = argv[i];
                groups[ng].pidfile = eq + 1;
                if (read_pids(&groups[ng]) < 0 || groups[ng].n == 0) {
                        fprintf(stderr, "cpushare: no pids in %s\n", eq + 1);
                        return 1;
                }
                ng++;
        }
        if (ng == 0) {
                fprintf(stderr, "cpushare: no groups\n");
                return 2;
        }
        if (timeline) {
                tl = fopen(timeline, "we");
                if (!tl) {
                        perror(timeline);
                        return 1;
                }
        }

        double t0 = now_s(), tprev = t0, tstart = 0;
        bool started = warmup == 0;
        for (unsigned g = 0; g < ng; g++)
                start[g] = prev[g] = group_ns(&groups[g]);
        if (started)
                tstart = t0;

        for (unsigned k = 1;; k++) {
                double target = t0 + k * interval;
                if (target > t0 + warmup + duration + 1e-9)
                        break;
                sleep_until(target);
                double t = now_s();
                if (tl)
                        fprintf(tl, "%.3f", t - t0);
                for (unsigned g = 0; g < ng; g++) {
                        uint64_t v = group_ns(&groups[g]);
                        if (tl)
                                fprintf(tl, " %.4f", (double) (v - prev[g]) / 1e9 / (t - tprev));
                        prev[g] = v;
                }
                if (tl)
                        fputc('\n', tl);
                tprev = t;
                if (!started && t - t0 >= warmup - 1e-9) {
                        started = true;
                        tstart = t;
                        for (unsigned g = 0; g < ng; g++)
                                start[g] = prev[g];
                }
        }
        double span = tprev - tstart;
        for (unsigned g = 0; g < ng; g++)
                printf("%s %.4f\n", groups[g].name, (double) (prev[g] - start[g]) / 1e9 / span);
        if (tl)
                fclose(tl);
        return 0;
}
