/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * loopdrv: many login sessions through real libpam inside ONE process, for
 * the leak (valgrind), soak and load tests.
 *
 *   loopdrv [OPTION...] CONFDIR SERVICE USER
 *     --pairs N      N pam_open_session/pam_close_session pairs on one handle
 *                    (pam_start_confdir once), as a long-lived sshd child would
 *     --restarts M   then M rounds of pam_start_confdir, open, close, pam_end:
 *                    libpam dlopen()s the module at the first call of a handle
 *                    and dlclose()s it at pam_end, as sshd and login do
 *     --watch DIR    count the directories at and below DIR (the test's cgroup
 *                    root) every --every K cycles and at the end; prints
 *                    "watch=<cycle> <count> heap=<bytes>" lines, heap being
 *                    the bytes malloc has handed out and not got back
 *     --every K      (default 1000)
 *     --rt-thread    first start a SCHED_FIFO thread that sleeps for the whole
 *                    run (a multi-threaded caller with one real-time thread)
 *     --cgroup       print "cgroup=<path>" (the cpu hierarchy) after each open
 *
 * Prints "pairs=N restarts=M failed=F" at the end. Exit status 0 when every
 * call returned PAM_SUCCESS, 1 otherwise, 2 on usage errors. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
        (void) msg;
        (void) data;
        *resp = calloc((size_t) n, sizeof **resp);
        return *resp ? PAM_SUCCESS : PAM_BUF_ERR;
}

static long n_dirs;

static int count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) path;
        (void) st;
        (void) ftw;
        if (flag == FTW_D || flag == FTW_DP)
                n_dirs++;
        return 0;
}

static long count_dirs(const char *dir) {
        n_dirs = 0;
        if (nftw(dir, count_one, 16, FTW_PHYS) < 0)
                return errno == ENOENT ? 0 : -1;
        return n_dirs;
}

static void watch(const char *dir, unsigned long cycle) {
        if (dir) {
                long n = count_dirs(dir);
                struct mallinfo2 mi = mallinfo2();
                printf("watch=%lu %ld heap=%zu\n", cycle, n, mi.uordblks);
        }
}

static void *rt_main(void *arg) {
        (void) arg;
        for (;;)
                pause();
        return NULL;
}

static int start_rt_thread(void) {
        struct sched_param sp = { .sched_priority = 1 };
        pthread_attr_t attr;
        pthread_t t;
        int r;

        r = pthread_attr_init(&attr);
        if (r == 0)
                r = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        if (r == 0)
                r = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
        if (r == 0)
                r = pthread_attr_setschedparam(&attr, &sp);
        if (r == 0)
                r = pthread_create(&t, &attr, rt_main, NULL);
        (void) pthread_attr_destroy(&attr);
        return -r;
}

static void print_cgroup(void) {
        char line[4096];
        FILE *f = fopen("/proc/self/cgroup", "re");

        if (!f)
                return;
        while (fgets(line, sizeof line, f)) {
                char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
                if (!b)
                        continue;
                *b = 0;
                /* the controller list of the cpu hierarchy: "cpu", "cpu,cpuacct" ... */
                char *tok, *save = NULL;
                for (tok = strtok_r(a + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                        if (strcmp(tok, "cpu") == 0) {
                                printf("cgroup=%s", b + 1);
                                break;
                        }
        }
        fclose(f);
}

static int parse_ul(const char *s, unsigned long *ret) {
        char *end;

        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || end == s || *end || *s == '-')
                return -EINVAL;
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        struct pam_conv c = { conv, NULL };
        unsigned long pairs = 0, restarts = 0, every = 1000, failed = 0, cycle = 0;
        const char *watch_dir = NULL;
        bool rt_thread = false, show_cgroup = false;
        pam_handle_t *pamh = NULL;
        int i, rc;

        for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
                if (strcmp(argv[i], "--rt-thread") == 0 || strcmp(argv[i], "--cgroup") == 0) {
                        if (argv[i][2] == 'r')
                                rt_thread = true;
                        else
                                show_cgroup = true;
                        i--;
                        continue;
                }
                if (i + 1 >= argc)
                        goto usage;
                if (strcmp(argv[i], "--pairs") == 0 && parse_ul(argv[i + 1], &pairs) == 0)
                        continue;
                if (strcmp(argv[i], "--restarts") == 0 && parse_ul(argv[i + 1], &restarts) == 0)
                        continue;
                if (strcmp(argv[i], "--every") == 0 && parse_ul(argv[i + 1], &every) == 0 && every > 0)
                        continue;
                if (strcmp(argv[i], "--watch") == 0) {
                        watch_dir = argv[i + 1];
                        continue;
                }
                goto usage;
        }
        if (argc - i != 3)
                goto usage;
        const char *confdir = argv[i], *service = argv[i + 1], *user = argv[i + 2];
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (rt_thread) {
                int r = start_rt_thread();
                if (r < 0) {
                        fprintf(stderr, "loopdrv: SCHED_FIFO thread: %s\n", strerror(-r));
                        return 1;
                }
                printf("rt-thread=started\n");
        }

        if (pairs > 0) {
                rc = pam_start_confdir(service, user, &c, confdir, &pamh);
                if (rc != PAM_SUCCESS) {
                        fprintf(stderr, "loopdrv: pam_start_confdir: %d\n", rc);
                        return 1;
                }
                for (unsigned long n = 0; n < pairs; n++) {
                        rc = pam_open_session(pamh, 0);
                        if (show_cgroup)
                                print_cgroup();
                        if (rc != PAM_SUCCESS) {
                                if (failed++ < 10)
                                        fprintf(stderr, "loopdrv: pair %lu: open: %s\n", n, pam_strerror(pamh, rc));
                        }
                        rc = pam_close_session(pamh, 0);
                        if (rc != PAM_SUCCESS) {
                                if (failed++ < 10)
                                        fprintf(stderr, "loopdrv: pair %lu: close: %s\n", n, pam_strerror(pamh, rc));
                        }
                        if (++cycle % every == 0)
                                watch(watch_dir, cycle);
                }
                pam_end(pamh, PAM_SUCCESS);
        }

        for (unsigned long n = 0; n < restarts; n++) {
                rc = pam_start_confdir(service, user, &c, confdir, &pamh);
                if (rc != PAM_SUCCESS) {
                        if (failed++ < 10)
                                fprintf(stderr, "loopdrv: restart %lu: pam_start_confdir: %d\n", n, rc);
                        continue;
                }
                rc = pam_open_session(pamh, 0);
                if (show_cgroup)
                        print_cgroup();
                if (rc != PAM_SUCCESS && failed++ < 10)
                        fprintf(stderr, "loopdrv: restart %lu: open: %s\n", n, pam_strerror(pamh, rc));
                rc = pam_close_session(pamh, 0);
                if (rc != PAM_SUCCESS && failed++ < 10)
                        fprintf(stderr, "loopdrv: restart %lu: close: %s\n", n, pam_strerror(pamh, rc));
                pam_end(pamh, PAM_SUCCESS);
                if (++cycle % every == 0)
                        watch(watch_dir, cycle);
        }

        watch(watch_dir, cycle);
        printf("pairs=%lu restarts=%lu failed=%lu\n", pairs, restarts, failed);
        return failed ? 1 : 0;

usage:
        fprintf(stderr, "usage: loopdrv [--pairs N] [--restarts M] [--watch DIR] [--every K] [--rt-thread] [--cgroup]\n"
                        "               CONFDIR SERVICE USER\n");
        return 2;
}
