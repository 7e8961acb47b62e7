/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * agdrv: drives login sessions for the host tests, the way sshd, login and su do.
 *
 *   agdrv --pam CONFDIR SERVICE USER ACTION...   through real libpam (pam_start_confdir)
 *   agdrv --lib MOUNT ROOT USER ACTION...        through lib/cgroup/session.c directly, for a
 *                                                cgroup2 mount without the cpu controller
 * Actions, run in order:
 *   open | close          pam_open_session / pam_close_session; prints "open=<rc name>"
 *   delegate=yes|no       --lib: whether the next opens hand the session to USER (default no,
 *                         like the module; with --pam the module line decides)
 *   tty=NAME              PAM_TTY for the next opens (--lib: whether they are a login with a
 *                         terminal, as the module decides it); "tty=" unsets it. Default
 *                         "ssh": a login that may have a terminal, as every one of sshd
 *                         (no /dev needed)
 *   env                   prints AUTOGROUP_SESSION (and AUTOGROUP_INTERACTIVE when set) from
 *                         the PAM environment
 *   cgroup                prints this process's cgroup in the cpu (or given) hierarchy
 *   run-user CMD          fork, drop to USER (initgroups/setgid/setuid), sh -c CMD, wait
 *   spawn-user CMD        the same without waiting (a lingering process)
 *   wait-file PATH        wait until PATH exists (at most 120 s)
 *   touch PATH            create PATH
 * Exit status: 0 when every open/close returned PAM_SUCCESS (or 0), 1 otherwise. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "cgroup.h"
#include "policy.h"
#include "session.h"
#include "util.h"

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
        (void) msg;
        (void) data;
        *resp = calloc((size_t) n, sizeof **resp);
        return *resp ? PAM_SUCCESS : PAM_BUF_ERR;
}

static const char *rc_name(int rc) {
        switch (rc) {
        case PAM_SUCCESS: return "PAM_SUCCESS";
        case PAM_IGNORE: return "PAM_IGNORE";
        case PAM_SESSION_ERR: return "PAM_SESSION_ERR";
        case PAM_PERM_DENIED: return "PAM_PERM_DENIED";
        case PAM_SYSTEM_ERR: return "PAM_SYSTEM_ERR";
        default: return "PAM_OTHER";
        }
}

static pid_t run_user(const struct passwd *pw, const char *cmd) {
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
                perror("agdrv: drop privileges");
                _exit(127);
        }
        if (chdir("/") < 0)
                _exit(127);
        execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
        _exit(127);
}

/* Waits until path exists, at most timeout_s seconds, checking at first
 * every 10 ms and then less and less often, down to once every
 * $AGDRV_WAIT_MAX_MS (default 200 ms; the benchmarks use 1000): a session
 * process that woke up 100 times a second disturbed the kernel's group load
 * balancing that bench/fairness measures. (Not inotify: test-load runs 200
 * of these at once, and inotify instances are limited per user, root's
 * included.) */
static void wait_file(const char *path, int timeout_s) {
        struct stat st;
        const char *e = getenv("AGDRV_WAIT_MAX_MS");
        long nap_us = 10000, max_us = 200000;
        time_t end = time(NULL) + timeout_s;

        if (e && atol(e) >= 10 && atol(e) <= 10000)
                max_us = atol(e) * 1000;
        while (stat(path, &st) < 0 && time(NULL) < end) {
                usleep((useconds_t) nap_us);
                nap_us += nap_us / 2;
                if (nap_us > max_us)
                        nap_us = max_us;
        }
}

int main(int argc, char **argv) {
        pam_handle_t *pamh = NULL;
        AgHierarchy *h = NULL;
        AgSession *s = NULL;
        AgPolicy policy;
        const struct passwd *pw;
        bool pam;
        int failed = 0, i;

        if (argc < 5 || (strcmp(argv[1], "--pam") != 0 && strcmp(argv[1], "--lib") != 0)) {
                fprintf(stderr, "usage: agdrv --pam CONFDIR SERVICE USER ACTION... | --lib MOUNT ROOT USER ACTION...\n");
                return 2;
        }
        pam = strcmp(argv[1], "--pam") == 0;
        /* Through PAM a user NSS cannot resolve still gets a session attempt
         * (a directory that is down: the module must cope); only run-user and
         * spawn-user need the entry. */
        pw = getpwnam(argv[4]);
        if (!pw && !pam) {
                fprintf(stderr, "agdrv: no user %s\n", argv[4]);
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);

        if (pam) {
                struct pam_conv c = { conv, NULL };
                int rc = pam_start_confdir(argv[3], argv[4], &c, argv[2], &pamh);
                if (rc != PAM_SUCCESS) {
                        fprintf(stderr, "agdrv: pam_start_confdir: %d\n", rc);
                        return 2;
                }
                (void) pam_set_item(pamh, PAM_TTY, "ssh");
        } else {
                int r = ag_hierarchy_from_mount(argv[2], &h);
                if (r < 0) {
                        fprintf(stderr, "agdrv: %s: %s\n", argv[2], strerror(-r));
                        return 2;
                }
                ag_policy_init(&policy);
        }

        bool delegate = false, terminal = true;
        for (i = 5; i < argc; i++) {
                const char *a = argv[i];

                if (strcmp(a, "open") == 0 || strcmp(a, "close") == 0) {
                        bool open = a[0] == 'o';
                        int rc;
                        if (pam)
                                rc = open ? pam_open_session(pamh, 0) : pam_close_session(pamh, 0);
                        else if (open) {
                                const char *what = NULL;
                                AgOpenParams p = { .root = argv[3], .uid = pw->pw_uid, .gid = pw->pw_gid,
                                                   .policy = &policy, .audit_session = AG_AUDIT_SESSION_UNSET,
                                                   .delegate = delegate, .terminal = terminal };
                                rc = ag_session_open(h, &p, &s, &what);
                                if (rc < 0)
                                        fprintf(stderr, "agdrv: %s: %s\n", what, strerror(-rc));
                        } else {
                                rc = s ? ag_session_close(h, s, 0, NULL) : -ENOENT;
                                rc = rc < 0 ? rc : 0;
                        }
                        printf("%s=%s\n", a, pam ? rc_name(rc) : (rc == 0 ? "0" : strerror(-rc)));
                        if (rc != 0)
                                failed = 1;
                } else if (strncmp(a, "tty=", 4) == 0) {
                        terminal = ag_tty_is_terminal(a + 4);
                        if (pam)
                                (void) pam_set_item(pamh, PAM_TTY, a[4] ? a + 4 : NULL);
                } else if (strcmp(a, "delegate=yes") == 0 || strcmp(a, "delegate=no") == 0) {
                        delegate = strcmp(a, "delegate=yes") == 0;
                } else if (strcmp(a, "env") == 0) {
                        const char *v = pam ? pam_getenv(pamh, "AUTOGROUP_SESSION") : (s ? s->path : NULL);
                        printf("AUTOGROUP_SESSION=%s\n", v ? v : "");
                        v = pam ? pam_getenv(pamh, "AUTOGROUP_INTERACTIVE") : NULL;
                        if (v)
                                printf("AUTOGROUP_INTERACTIVE=%s\n", v);
                } else if (strcmp(a, "cgroup") == 0) {
                        AgHierarchy *hh = h;
                        char *path = NULL;
                        if (!hh && ag_hierarchy_find(NULL, &hh) < 0)
                                hh = NULL;
                        if (hh && ag_cg_pid_path(hh, 0, &path) >= 0)
                                printf("cgroup=%s\n", path);
                        free(path);
                        if (hh != h)
                                ag_hierarchy_free(hh);
                } else if ((strcmp(a, "run-user") == 0 || strcmp(a, "spawn-user") == 0) && i + 1 < argc && !pw) {
                        i++;
                        printf("run-user: failed (no user %s)\n", argv[4]);
                } else if ((strcmp(a, "run-user") == 0 || strcmp(a, "spawn-user") == 0) && i + 1 < argc) {
                        pid_t pid = run_user(pw, argv[++i]);
                        int st;
                        if (a[0] == 'r' && (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0))
                                printf("run-user: failed\n");
                } else if (strcmp(a, "wait-file") == 0 && i + 1 < argc) {
                        wait_file(argv[++i], 120);
                } else if (strcmp(a, "touch") == 0 && i + 1 < argc) {
                        int fd = open(argv[++i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                        if (fd >= 0)
                                close(fd);
                } else {
                        fprintf(stderr, "agdrv: unknown action %s\n", a);
                        failed = 1;
                }
        }

        if (pamh)
                pam_end(pamh, PAM_SUCCESS);
        ag_session_free(s);
        ag_hierarchy_free(h);
        return failed;
}
