/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* "autogroup run" and "autogroup set" in the systemd mode: a transient
 * scope of the user's manager per command. See run-systemd.h. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "latency.h"
#include "run-systemd.h"
#include "systemd.h"
#include "util.h"

/* How long the process may take to arrive in its scope once the manager
 * accepted the start (its job moves it after the reply); within the
 * deadline: two D-Bus attempts of AG_TERMINAL_SCOPE_TIMEOUT_USEC and this. */
#define RUN_ARRIVAL_WAIT_USEC UINT64_C(2000000)
/* Names tried when autogroup-run-<pid>.scope still exists (background
 * processes of an earlier command whose pid was the same). */
#define RUN_SCOPE_NAMES 3

uint64_t ag_run_systemd_weight(const AgRunOptions *o) {
        unsigned w;

        if (o->weight > 0)
                return o->weight;
        if (o->idle > 0)
                return AG_SYSTEMD_CPU_WEIGHT_IDLE;
        w = ag_run_leaf_weight(o);
        return w > 0 ? w : AG_TERMINAL_SCOPE_WEIGHT;
}

/* What the asking child hands back through the pipe. */
typedef struct PlaceReply {
        int error;                     /* 0 placed, else -errno */
        char unit[256];                /* the scope's cgroup path */
        char why[256];
} PlaceReply;

/* The asking child: the request, then the wait for pid in the scope. */
static void ask(const AgHierarchy *h, const char *runtime_dir, pid_t pid, uid_t uid, uint64_t cpu_weight,
                const char *description, PlaceReply *rep) {
        char scope[64];
        int r = -EINVAL;

        for (unsigned n = 0; n < RUN_SCOPE_NAMES; n++) {
                r = ag_run_scope_name(pid, n, scope, sizeof scope);
                if (r < 0)
                        break;
                r = ag_systemd_start_user_scope(runtime_dir, scope, AG_TERMINAL_SCOPE_SLICE, description, pid,
                                                cpu_weight, AG_TERMINAL_SCOPE_TIMEOUT_USEC, rep->why,
                                                sizeof rep->why);
                if (r != -EEXIST)
                        break;
        }
        if (r < 0) {
                rep->error = r;
                return;
        }
        r = ag_user_unit_path(uid, AG_TERMINAL_SCOPE_SLICE, scope, rep->unit, sizeof rep->unit);
        if (r < 0) {
                rep->error = r;
                snprintf(rep->why, sizeof rep->why, "%s: name too long", scope);
                return;
        }
        if (!ag_scope_wait_arrival(h, pid, rep->unit, RUN_ARRIVAL_WAIT_USEC)) {
                rep->error = -EINPROGRESS;
                snprintf(rep->why, sizeof rep->why, "%s started, but the process is not in it yet", scope);
                return;
        }
        rep->error = 0;
}

static uint64_t now_msec(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return UINT64_MAX;
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Reads the child's reply from fd until deadline (CLOCK_MONOTONIC, ms).
 * -ETIMEDOUT at the deadline, -EPIPE when the child ended without one. */
static int read_reply(int fd, uint64_t deadline, PlaceReply *rep) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                uint64_t now = now_msec();
                ssize_t n;
                int k;

                if (now >= deadline)
                        return -ETIMEDOUT;
                k = poll(&p, 1, (int) (deadline - now > INT32_MAX ? INT32_MAX : deadline - now));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        continue;       /* the deadline is checked above */
                n = read(fd, rep, sizeof *rep);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                /* one write of less than PIPE_BUF: whole, or nothing at all */
                return n == (ssize_t) sizeof *rep ? 0 : -EPIPE;
        }
}

int ag_run_systemd_place(const AgHierarchy *h, const char *runtime_dir, pid_t pid, uid_t uid, uint64_t cpu_weight,
                         const char *description, unsigned deadline_s, char *unit, size_t size, char *why,
                         size_t why_size) {
        _cleanup_close_ int rfd = -1, wfd = -1;
        PlaceReply rep = {};
        uint64_t deadline;
        pid_t child;
        int fds[2], r;

        if (!h || !runtime_dir || !description || pid <= 0 || deadline_s == 0 || !unit || size == 0)
                return -EINVAL;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rfd = fds[0];
        wfd = fds[1];
        deadline = now_msec() + (uint64_t) deadline_s * 1000;
        fflush(NULL);
        child = fork();
        if (child < 0)
                return negative_errno();
        if (child == 0) {
                /* libsystemd is loaded here only: the process that becomes
                 * the command never maps it, and this one can be killed */
                rfd = safe_close(rfd);
                ask(h, runtime_dir, pid, uid, cpu_weight, description, &rep);
                (void) !write(wfd, &rep, sizeof rep);
                _exit(0);
        }
        wfd = safe_close(wfd);
        r = read_reply(rfd, deadline, &rep);
        if (r < 0)
                (void) kill(child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
        if (r == -ETIMEDOUT)
                snprintf(rep.why, sizeof rep.why, "no answer from the user manager within %u s", deadline_s);
        else if (r < 0)
                snprintf(rep.why, sizeof rep.why, "the request ended without an answer: %s", strerror(-r));
        else
                r = rep.error;
        if (r < 0) {
                if (why && why_size)
                        snprintf(why, why_size, "%s", rep.why[0] ? rep.why : strerror(-r));
                return r;
        }
        if (strlen(rep.unit) >= size)
                return -ENOBUFS;
        strcpy(unit, rep.unit);
        return 0;
}

static void weight_text(uint64_t w, char *buf, size_t size) {
        if (w == AG_SYSTEMD_CPU_WEIGHT_IDLE)
                snprintf(buf, size, "CPUWeight=idle");
        else
                snprintf(buf, size, "CPUWeight=%" PRIu64, w);
}

int ag_run_systemd(const AgHierarchy *h, const char *runtime_dir, const AgRunOptions *o, char **argv) {
        _cleanup_free_ char *path = NULL;
        char rundir[64], description[256], unit[256], why[300] = "", wtext[32];
        uint64_t weight = ag_run_systemd_weight(o);
        AgLatencyResult res = AG_LATENCY_APPLIED;
        uid_t uid = getuid();
        pid_t self = getpid();
        int r;

        weight_text(weight, wtext, sizeof wtext);
        if (h->version != 2 || !h->has_cpu)
                snprintf(why, sizeof why, "%s is not cgroup v2 with cpu", h->mount);
        else if (ag_cg_pid_path(h, self, &path) < 0 || !ag_systemd_in_user_slice(path, uid))
                snprintf(why, sizeof why, "not inside your user-%lu.slice", (unsigned long) uid);
        else {
                /* the manager logind started for uid, never one named by the environment */
                if (!runtime_dir) {
                        snprintf(rundir, sizeof rundir, "/run/user/%lu", (unsigned long) uid);
                        runtime_dir = rundir;
                }
                snprintf(description, sizeof description, "autogroup run%s%s: %s", o->set_latency ? " --latency " : "",
                         o->set_latency ? ag_latency_to_string(o->latency) : "", argv[0]);
                r = ag_run_systemd_place(h, runtime_dir, self, uid, weight, description, AG_RUN_SYSTEMD_DEADLINE_S,
                                         unit, sizeof unit, why, sizeof why);
                if (r >= 0) {
                        why[0] = 0;
                        if (o->verbose)
                                fprintf(stderr, "autogroup run: %s (%s)\n", unit, wtext);
                }
        }
        /* said always, --verbose or not: the command does not get its scope and weight */
        if (why[0])
                fprintf(stderr, "autogroup run: no scope of the user manager (%s): the command runs where it is\n",
                        why);

        if (o->set_latency) {
                r = ag_latency_apply(0, o->latency, &res);
                if (r < 0) {
                        fprintf(stderr, "autogroup run: cannot set latency class %s: %s\n",
                                ag_latency_to_string(o->latency), strerror(-r));
                        return 1;
                }
                ag_run_note_latency("run", o->latency, res);
        }
        fflush(NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "autogroup run: cannot run %s: %m\n", argv[0]);
        return 127;
}

int ag_set_systemd(const AgRunOptions *o, const char *target) {
        AgLatencyResult res = AG_LATENCY_APPLIED;
        unsigned long v;
        pid_t pid;
        int r;

        if (ag_safe_atoul(target, INT32_MAX, &v) < 0 || v == 0) {
                fprintf(stderr, "autogroup set: '%s' is not a PID (in the systemd mode there are no leaves: "
                                "set takes a PID)\n", target);
                return 2;
        }
        pid = (pid_t) v;
        if (o->weight > 0 || o->idle >= 0) {
                fprintf(stderr, "autogroup set: in the systemd mode set changes the latency class only; the weight "
                                "of a scope of yours: systemctl --user set-property UNIT CPUWeight=W, or start the "
                                "command with autogroup run --latency/--weight\n");
                return 1;
        }
        r = ag_set_own_process(pid, o->latency, &res);
        if (r == -EPERM)
                return 1;
        if (r < 0) {
                fprintf(stderr, "autogroup set: cannot set latency class %s on %s: %s\n",
                        ag_latency_to_string(o->latency), target, r == -ESRCH || r == -ENOENT ? "no such process"
                                                                                              : strerror(-r));
                return 1;
        }
        ag_run_note_latency("set", o->latency, res);
        if (o->verbose)
                fprintf(stderr, "autogroup set: latency class %s on process %jd (systemd mode: the class only, "
                                "the process stays in its scope)\n", ag_latency_to_string(o->latency), (intmax_t) pid);
        return 0;
}
