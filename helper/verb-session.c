/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* autogroup enter, run and set: the verbs that act in the caller's own
 * session (their logic: enter.c, enter-systemd.c, run.c, run-systemd.c). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enter.h"
#include "enter-systemd.h"
#include "run.h"
#include "run-systemd.h"
#include "session.h"
#include "util.h"
#include "verbs.h"

/* ---- enter ---- */

/* SIGALRM at AG_ENTER_SYSTEMD_DEADLINE_S: the helper ends, exit 0, the
 * shell stays where it is. Only async-signal-safe calls. */
static void enter_deadline_silent(int sig) {
        (void) sig;
        _exit(0);
}

static void enter_deadline_verbose(int sig) {
        static const char msg[] = "autogroup enter: no answer from the user manager within the deadline, "
                                  "left where it is\n";

        (void) sig;
        (void) !write(STDOUT_FILENO, msg, sizeof msg - 1);
        _exit(0);
}

int verb_enter(const Args *a) {
        AgHierarchy *h = NULL;
        AgEnterResult result;
        _cleanup_free_ char *leaf = NULL;
        const char *what = NULL;
        bool verbose = a->verbose, scope = false;
        pid_t pid = a->pid;
        int r;

        r = find_hierarchy(a, &h);
        if (r < 0) {
                /* No cgroup filesystem: certainly not under pam_autogroup. */
                if (verbose)
                        printf("no cgroup hierarchy: nothing to do\n");
                return 0;
        }
        char root[AG_ROOT_NAME_MAX + 1];
        r = ag_enter(h, session_root(a, h, root, sizeof root), pid, getuid(), &result, &leaf, &what);
        if (r >= 0 && result == AG_ENTER_NOT_MANAGED && login_is_systemd()) {
                /* a login of pam_autogroup's systemd mode: a scope of the user's manager */
                char why[256] = "";

                free(leaf);
                leaf = NULL;
                /* a backstop behind lib/systemd/systemd.c's deadline of each D-Bus attempt */
                (void) ag_enter_deadline_arm(AG_ENTER_SYSTEMD_DEADLINE_S,
                                             verbose ? enter_deadline_verbose : enter_deadline_silent);
                r = ag_enter_systemd(h, pid, getuid(), &result, &leaf, &what, why, sizeof why);
                alarm(0);
                scope = true;
                if (r >= 0 && result == AG_ENTER_SCOPE_FAILED && verbose)
                        printf("%jd: %s: %s\n", (intmax_t) pid, ag_enter_result_to_string(result), why);
        }
        ag_hierarchy_free(h);
        if (r < 0) {
                fprintf(stderr, "autogroup enter: cannot %s for process %jd: %s\n", what ? what : "enter",
                        (intmax_t) pid, strerror(-r));
                return EXIT_FAILURE;
        }
        if (verbose && result != AG_ENTER_SCOPE_FAILED) {
                /* the systemd mode's group is a scope of the user's manager, not a leaf */
                if (leaf && scope && result == AG_ENTER_MOVED)
                        printf("%jd: moved into its terminal scope: %s\n", (intmax_t) pid, leaf);
                else if (leaf && scope && result == AG_ENTER_ALREADY)
                        printf("%jd: already in its terminal scope, nothing to do: %s\n", (intmax_t) pid, leaf);
                else if (leaf)
                        printf("%jd: %s: %s\n", (intmax_t) pid, ag_enter_result_to_string(result), leaf);
                else
                        printf("%jd: %s\n", (intmax_t) pid, ag_enter_result_to_string(result));
        }
        return 0;
}

/* ---- run, set (latency classes) ---- */

/* run and set: the work in the caller's session, on what each takes after
 * the options they share (run a command line, set one PID or LEAF). */
int verb_run_set(const Args *a) {
        bool run = strcmp(a->verb, "run") == 0;
        AgHierarchy *h = NULL;
        AgRunOptions o = a->run;
        int r;

        if (!run && !o.set_latency && o.weight == 0 && o.idle < 0) {
                fprintf(stderr, "autogroup set: nothing to change (--latency, --weight or --idle)\n");
                return EXIT_USAGE;
        }
        if (find_hierarchy_or_report(a, &h) < 0)
                return EXIT_FAILURE;
        char root[AG_ROOT_NAME_MAX + 1];
        const char *sroot = session_root(a, h, root, sizeof root);
        pid_t target = getpid();
        if (!run)
                (void) parse_pid(a->argv[0], &target);
        if (login_is_systemd() && !ag_run_in_session(h, sroot, target))
                /* a login of pam_autogroup's systemd mode: a scope of the user's manager */
                r = run ? ag_run_systemd(h, NULL, &o, a->argv) : ag_set_systemd(&o, a->argv[0]);
        else
                r = run ? ag_run(h, sroot, &o, a->argv) : ag_set(h, sroot, &o, a->argv[0]);
        ag_hierarchy_free(h);
        return r;
}
