/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * sleeper: wakeup lateness of a periodic sleeper, the way cyclictest measures it.
 *
 *   sleeper PERIOD_US DURATION_S OUTFILE
 *
 * Sleeps with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) on a fixed grid of
 * PERIOD_US and records how late each wakeup is. A wakeup later than a whole
 * period skips the grid points already missed (they are not counted again).
 * Writes "n=<samples> p50=<us> p99=<us> p999=<us> max=<us>" to OUTFILE. */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long ts_ns(const struct timespec *ts) {
        return (long long) ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static int cmp_ll(const void *a, const void *b) {
        long long x = *(const long long *) a, y = *(const long long *) b;
        return (x > y) - (x < y);
}

static double pct(const long long *v, size_t n, double p) {
        size_t i = (size_t) (p * (double) (n - 1) + 0.5);
        return (double) v[i < n ? i : n - 1] / 1000.0;
}

int main(int argc, char **argv) {
        struct timespec now, next;
        long long period, end, *lat;
        size_t n = 0, cap;
        FILE *f;

        if (argc != 4) {
                fprintf(stderr, "usage: sleeper PERIOD_US DURATION_S OUTFILE\n");
                return 2;
        }
        period = atoll(argv[1]) * 1000LL;
        if (period <= 0 || atof(argv[2]) <= 0) {
                fprintf(stderr, "sleeper: bad period or duration\n");
                return 2;
        }
        cap = (size_t) (atof(argv[2]) * 1e9 / (double) period) + 16;
        lat = calloc(cap, sizeof *lat);
        if (!lat) {
                fprintf(stderr, "sleeper: out of memory\n");
                return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        end = ts_ns(&now) + (long long) (atof(argv[2]) * 1e9);
        long long t = ts_ns(&now) + period;
        while (n < cap) {
                next.tv_sec = (time_t) (t / 1000000000LL);
                next.tv_nsec = (long) (t % 1000000000LL);
                int r;
                while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR)
                        ;
                if (r != 0) {
                        fprintf(stderr, "sleeper: clock_nanosleep: error %d\n", r);
                        return 1;
                }
                clock_gettime(CLOCK_MONOTONIC, &now);
                long long late = ts_ns(&now) - t;
                lat[n++] = late;
                if (ts_ns(&now) >= end)
                        break;
                t += period;
                while (t <= ts_ns(&now))
                        t += period;
        }
        qsort(lat, n, sizeof *lat, cmp_ll);
        f = fopen(argv[3], "we");
        if (!f) {
                perror(argv[3]);
                return 1;
        }
        fprintf(f, "n=%zu p50=%.1f p99=%.1f p999=%.1f max=%.1f\n", n, pct(lat, n, 0.50), pct(lat, n, 0.99),
                pct(lat, n, 0.999), (double) lat[n - 1] / 1000.0);
        fclose(f);
        free(lat);
        return 0;
}
