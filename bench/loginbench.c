/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * loginbench: cost of logins through real libpam inside one process.
 *
 *   loginbench [-m exiting|lingering] CONFDIR USER ITERATIONS SERVICE...
 *
 * One login is pam_start_confdir + pam_open_session + pam_close_session +
 * pam_end, as sshd's [priv] child, login or su do it once a login. The
 * services (files in CONFDIR) are interleaved in rounds of 50 logins, so that
 * every stack sees the same background load. After 20 untimed logins a
 * service, prints one line a service:
 *   <service> n=<logins> median=<us> mean=<us> oc_median=<us> oc_mean=<us> cpu_median=<us> session=<AUTOGROUP_SESSION>
 * where median/mean time the whole login and oc_* the open+close pair alone
 * (wall clock), and cpu_median is the CPU time of the whole login
 * (CLOCK_THREAD_CPUTIME_ID), which waiting for a busy CPU does not inflate;
 * close_median, close_p99 and close_max time pam_close_session alone (the
 * logout).
 * -m exiting: between open and close a child of the login sits in the
 * session and gets SIGHUP right before the close, as sshd's hangup of the
 * terminal does: the close comes while it exits. -m lingering: the child
 * lives on through the close (a nohup job) and is killed after it. The
 * child is reaped after the close, outside the timed part.
 * Exits 1 when an open or close does not return PAM_SUCCESS. */

#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_appl.h>

#define ROUND 50
#define WARMUP 20
#define MAX_SERVICES 16

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
        (void) msg;
        (void) data;
        *resp = calloc((size_t) n, sizeof **resp);
        return *resp ? PAM_SUCCESS : PAM_BUF_ERR;
}

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static double cpu_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

typedef struct Stats {
        const char *service;
        double *total, *oc, *cpu, *close;
        size_t n;
        char session[256];
} Stats;

enum child_mode { CHILD_NONE, CHILD_EXITING, CHILD_LINGERING };

/* One login; returns 0 or -1 (and says why). */
static int login(const char *confdir, const char *user, Stats *s, bool record, enum child_mode mode) {
        struct pam_conv c = { conv, NULL };
        pam_handle_t *pamh = NULL;
        double t0, t1, t2, tc, c0;
        pid_t child = 0;
        int rc;

        c0 = cpu_us();
        t0 = now_us();
        rc = pam_start_confdir(s->service, user, &c, confdir, &pamh);
        if (rc != PAM_SUCCESS) {
                fprintf(stderr, "loginbench: %s: pam_start_confdir: %d\n", s->service, rc);
                return -1;
        }
        /* a service named *-tty: a login on a terminal (sshd with a pty, login, su in one) */
        size_t len = strlen(s->service);
        if (len > 4 && strcmp(s->service + len - 4, "-tty") == 0)
                (void) pam_set_item(pamh, PAM_TTY, "/dev/tty");
        t1 = now_us();
        rc = pam_open_session(pamh, 0);
        if (rc != PAM_SUCCESS) {
                fprintf(stderr, "loginbench: %s: pam_open_session: %s\n", s->service, pam_strerror(pamh, rc));
                pam_end(pamh, rc);
                return -1;
        }
        if (!s->session[0]) {
                const char *e = pam_getenv(pamh, "AUTOGROUP_SESSION");
                snprintf(s->session, sizeof s->session, "%s", e && *e ? e : "-");
        }
        if (mode != CHILD_NONE) {
                child = fork();
                if (child == 0) {
                        for (;;)
                                pause();
                }
                if (child < 0) {
                        perror("loginbench: fork");
                        pam_end(pamh, PAM_SUCCESS);
                        return -1;
                }
                if (mode == CHILD_EXITING)
                        (void) kill(child, SIGHUP);
        }
        tc = now_us();
        rc = pam_close_session(pamh, 0);
        t2 = now_us();
        if (child > 0) {
                if (mode == CHILD_LINGERING)
                        (void) kill(child, SIGKILL);
                (void) waitpid(child, NULL, 0);
        }
        if (rc != PAM_SUCCESS) {
                fprintf(stderr, "loginbench: %s: pam_close_session: %s\n", s->service, pam_strerror(pamh, rc));
                pam_end(pamh, rc);
                return -1;
        }
        pam_end(pamh, PAM_SUCCESS);
        if (record) {
                s->total[s->n] = now_us() - t0;
                s->oc[s->n] = t2 - t1;
                s->cpu[s->n] = cpu_us() - c0;
                s->close[s->n] = t2 - tc;
                s->n++;
        }
        return 0;
}

static double mean(const double *v, size_t n) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
                sum += v[i];
        return n ? sum / (double) n : 0;
}

int main(int argc, char **argv) {
        Stats st[MAX_SERVICES];
        enum child_mode mode = CHILD_NONE;
        size_t iter, ns;

        if (argc > 2 && strcmp(argv[1], "-m") == 0) {
                if (strcmp(argv[2], "exiting") == 0)
                        mode = CHILD_EXITING;
                else if (strcmp(argv[2], "lingering") == 0)
                        mode = CHILD_LINGERING;
                else {
                        fprintf(stderr, "loginbench: -m exiting|lingering\n");
                        return 2;
                }
                argv += 2;
                argc -= 2;
        }
        if (argc < 5) {
                fprintf(stderr, "usage: loginbench [-m exiting|lingering] CONFDIR USER ITERATIONS SERVICE...\n");
                return 2;
        }
        iter = (size_t) atol(argv[3]);
        ns = (size_t) (argc - 4);
        if (iter == 0 || ns > MAX_SERVICES) {
                fprintf(stderr, "loginbench: bad iterations or too many services\n");
                return 2;
        }
        memset(st, 0, sizeof st);
        for (size_t i = 0; i < ns; i++) {
                st[i].service = argv[4 + i];
                st[i].total = calloc(iter, sizeof(double));
                st[i].oc = calloc(iter, sizeof(double));
                st[i].cpu = calloc(iter, sizeof(double));
                st[i].close = calloc(iter, sizeof(double));
                if (!st[i].total || !st[i].oc || !st[i].cpu || !st[i].close) {
                        fprintf(stderr, "loginbench: out of memory\n");
                        return 1;
                }
                for (int w = 0; w < WARMUP; w++)
                        if (login(argv[1], argv[2], &st[i], false, mode) < 0)
                                return 1;
        }
        for (size_t done = 0; done < iter; done += ROUND)
                for (size_t i = 0; i < ns; i++)
                        for (size_t k = done; k < iter && k < done + ROUND; k++)
                                if (login(argv[1], argv[2], &st[i], true, mode) < 0)
                                        return 1;
        for (size_t i = 0; i < ns; i++) {
                double m = mean(st[i].total, st[i].n), om = mean(st[i].oc, st[i].n);
                qsort(st[i].total, st[i].n, sizeof(double), cmp_d);
                qsort(st[i].oc, st[i].n, sizeof(double), cmp_d);
                qsort(st[i].cpu, st[i].n, sizeof(double), cmp_d);
                qsort(st[i].close, st[i].n, sizeof(double), cmp_d);
                printf("%s n=%zu median=%.1f mean=%.1f oc_median=%.1f oc_mean=%.1f cpu_median=%.1f "
                       "close_median=%.1f close_p99=%.1f close_max=%.1f session=%s\n",
                       st[i].service, st[i].n, st[i].total[st[i].n / 2], m, st[i].oc[st[i].n / 2], om,
                       st[i].cpu[st[i].n / 2], st[i].close[st[i].n / 2], st[i].close[st[i].n * 99 / 100],
                       st[i].close[st[i].n - 1], st[i].session);
                free(st[i].total);
                free(st[i].oc);
                free(st[i].cpu);
                free(st[i].close);
        }
        return 0;
}
