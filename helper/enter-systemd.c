/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "enter-systemd.h"
#include "systemd.h"
#include "util.h"

/* How long to wait for the manager's job to put the process into the scope
 * once StartTransientUnit was accepted (the job runs after the reply). */
#define ARRIVAL_WAIT_USEC UINT64_C(500000)

/* Is pid the login's own shell? Its ancestors inside the same session scope
 * lead, through processes of the user that do not lead a session of their
 * own, to a process of another user (root's sshd, login, su, a display
 * manager's worker: the login service itself). A nested terminal's shell
 * meets a process of the user leading its own session first (a tmux or
 * screen server, the login shell, a desktop session), or leaves the scope
 * (a daemonized parent, PID 1). The login's own shell stays in the session
 * scope, so that what it leaves behind at logout (a detached tmux server,
 * nohup jobs) keeps the logind session, and the user's manager, alive as
 * logind intends. The walk looks at no more than 8 ancestors. */
static bool is_login_shell(const AgHierarchy *h, const char *scope_path, pid_t pid, uid_t uid) {
        pid_t p = pid;

        for (unsigned i = 0; i < 8; i++) {
                _cleanup_free_ char *path = NULL;
                pid_t ppid, sid;
                int own;

                if (ag_pid_parent_session(p, &ppid, &sid) < 0 || ppid <= 1)
                        return false;
                p = ppid;
                if (ag_cg_pid_path(h, p, &path) < 0 || strcmp(path, scope_path) != 0)
                        return false;
                own = ag_pid_owned_by(p, uid);
                if (own < 0)
                        return false;
                if (own == 0)
                        return true;
                if (ag_pid_parent_session(p, &ppid, &sid) < 0 || sid == p)
                        return false;
        }
        return false;
}

int ag_enter_deadline_arm(unsigned seconds, void (*handler)(int)) {
        struct sigaction sa = { .sa_handler = handler };
        sigset_t ss;

        if (seconds == 0 || !handler)
                return -EINVAL;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) < 0)
                return negative_errno();
        /* the caller's mask is inherited through exec: a blocked SIGALRM
         * would hold the deadline back for as long as anything blocks */
        sigemptyset(&ss);
        sigaddset(&ss, SIGALRM);
        if (sigprocmask(SIG_UNBLOCK, &ss, NULL) < 0)
                return negative_errno();
        alarm(seconds);
        return 0;
}

static void sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000), .tv_nsec = (long) (usec % 1000000) * 1000 };
        (void) nanosleep(&ts, NULL);
}

bool ag_scope_wait_arrival(const AgHierarchy *h, pid_t pid, const char *unit_path, uint64_t max_usec) {
        uint64_t waited = 0, step = 1000;

        for (;;) {
                _cleanup_free_ char *path = NULL;

                if (ag_cg_pid_path(h, pid, &path) < 0)
                        return false;
                if (strcmp(path, unit_path) == 0)
                        return true;
                if (waited >= max_usec)
                        return false;
                sleep_usec(step);
                waited += step;
                if (step < 50000)
                        step *= 2;
        }
}

/* Is pid, at path, in a login's session scope and not the login shell
 * itself? Else *ret_result says why not. */
static bool in_session_scope(const AgHierarchy *h, const char *path, pid_t pid, uid_t uid, pid_t sid,
                             AgEnterResult *ret_result) {
        switch (ag_scope_place(path, uid, sid)) {
        case AG_SCOPE_PLACE_OWN:
                *ret_result = AG_ENTER_ALREADY;
                return false;
        case AG_SCOPE_PLACE_OTHER:
                /* not in a login's scope: already placed by a terminal, tmux,
                 * the user's manager, or not a login at all */
                *ret_result = AG_ENTER_NOT_MANAGED;
                return false;
        case AG_SCOPE_PLACE_SESSION:
                break;
        }
        if (is_login_shell(h, path, pid, uid)) {
                *ret_result = AG_ENTER_LOGIN_SHELL;
                return false;
        }
        return true;
}

/* pid into the terminal scope named scope, started by uid's own manager
 * (the one logind started for uid, never one named by the environment),
 * and seen there: AG_ENTER_MOVED, else AG_ENTER_SCOPE_FAILED with errbuf. */
static AgEnterResult start_terminal_scope(const AgHierarchy *h, pid_t pid, uid_t uid, pid_t sid, const char *scope,
                                          const char *path, char *errbuf, size_t errsize) {
        char runtime_dir[64], description[256], unit_path[256];
        const char *from = strrchr(path, '/');

        snprintf(runtime_dir, sizeof runtime_dir, "/run/user/%lu", (unsigned long) uid);
        snprintf(description, sizeof description, "autogroup: terminal session %jd from %s", (intmax_t) sid,
                 from ? from + 1 : path);
        if (ag_systemd_start_user_scope(runtime_dir, scope, AG_TERMINAL_SCOPE_SLICE, description, pid,
                                        AG_TERMINAL_SCOPE_WEIGHT, AG_TERMINAL_SCOPE_TIMEOUT_USEC, errbuf,
                                        errsize) < 0)
                return AG_ENTER_SCOPE_FAILED;
        if (ag_user_unit_path(uid, AG_TERMINAL_SCOPE_SLICE, scope, unit_path, sizeof unit_path) < 0 ||
            !ag_scope_wait_arrival(h, pid, unit_path, ARRIVAL_WAIT_USEC)) {
                if (errbuf && errsize)
                        snprintf(errbuf, errsize, "%s started, but the process is not in it yet", scope);
                return AG_ENTER_SCOPE_FAILED;
        }
        return AG_ENTER_MOVED;
}

int ag_enter_systemd(const AgHierarchy *h, pid_t pid, uid_t uid, AgEnterResult *ret_result,
                     char **ret_unit, const char **ret_what, char *errbuf, size_t errsize) {
        _cleanup_free_ char *path = NULL;
        char scope[64];
        const char *what = NULL;
        AgEnterResult result;
        pid_t sid = pid;
        int r;

        if (errbuf && errsize)
                errbuf[0] = 0;
        r = ag_enter_check_leader(pid, &result, &what);
        if (r < 0)
                goto fail;
        if (r == 0)
                goto done;
        /* logind's units are on the unified hierarchy; without cpu there a
         * scope would not be a scheduling group */
        if (h->version != 2 || !h->has_cpu) {
                result = AG_ENTER_NOT_MANAGED;
                goto done;
        }
        r = ag_cg_pid_path(h, pid, &path);
        if (r == -ENOENT) {
                result = AG_ENTER_NOT_MANAGED;
                goto done;
        }
        if (r < 0) {
                what = "read the process's cgroup";
                goto fail;
        }
        r = ag_enter_check_owner(pid, uid, &result, &what);
        if (r < 0)
                goto fail;
        if (r == 0)
                goto done;
        r = ag_terminal_scope_name(sid, scope, sizeof scope);
        if (r < 0) {
                what = "name the scope";
                goto fail;
        }
        if (!in_session_scope(h, path, pid, uid, sid, &result))
                goto done;

        result = start_terminal_scope(h, pid, uid, sid, scope, path, errbuf, errsize);


done:
        *ret_result = result;
        if (ret_unit) {
                *ret_unit = NULL;
                if (result == AG_ENTER_MOVED || result == AG_ENTER_ALREADY) {
                        *ret_unit = strdup(scope);
                        if (!*ret_unit) {
                                r = -ENOMEM;
                                what = "allocate memory";
                                goto fail;
                        }
                }
        }
        return 0;

fail:
        if (ret_what)
                *ret_what = what;
        return r;
}
