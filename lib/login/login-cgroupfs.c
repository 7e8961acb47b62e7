/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The cgroupfs backend of a login, cgroup v1 and v2:
 *
 *   <hierarchy>/<root>[/pool-<name>]/user-<uid>/<session>/login
 *
 * open: the session's groups with the user's (and pool's) policy, the caller
 * moved into login/ (lib/cgroup/session.c), and the CPU accounting (lib/cgroup/acct.c: on
 * v1 with cpuacct mounted apart, a mirror of the session there). close: the
 * CPU time read, the caller moved back, the session and the user's other
 * empty groups removed. The watcher finishes a close whose processes were
 * still exiting. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "container.h"
#include "lane.h"
#include "place.h"
#include "login-backend.h"
#include "util.h"

static int find(AgLogin *l, AgLoginFailure *f) {
        int r;

        r = ag_login_hierarchy(l);
        if (r < 0) {
                f->step = r == -ENOENT ? AG_STEP_NO_CGROUPFS : AG_STEP_HIERARCHY;
                return r;
        }
        if (!l->hierarchy->has_cpu) {
                f->step = AG_STEP_NO_CPU;
                return -EOPNOTSUPP;
        }
        return 0;
}

/* A login opened from inside one of this user's sessions below root, of its
 * audit session (pam_loginuid gives sshd, login and cron logins a new one;
 * su and sudo keep it), stays in its caller's group, as logind keeps such
 * logins in the caller's session. A login of another user gets a session of
 * its own: the caller's session may be delegated to the caller, who could
 * move, freeze or kill another user's processes there. */
static bool nested(AgLogin *l, const AgLoginParams *p) {
        const char *sname = NULL;
        size_t slen = 0;
        uid_t owner;

        /* one read of /proc/self/cgroup: the cpuacct path too, the origin
         * that ag_session_open() needs */
        if (ag_cg_pid_paths(l->hierarchy, 0, &l->caller, l->hierarchy->version == 1 ? &l->caller_acct : NULL) < 0 ||
            ag_session_of_path(l->caller, p->root, &owner, &sname, &slen) < 0 ||
            !ag_session_name_matches_audit(sname, slen, ag_audit_session_self()))
                return false;
        l->caller_owner = owner;
        l->nested = owner == p->uid ? AG_NESTED_SAME_USER : AG_NESTED_OTHER_USER;
        return l->nested == AG_NESTED_SAME_USER;
}

/* CPU accounting: the start time and, on v1 with cpuacct mounted on its
 * own, the session's mirror there. A failure costs only the CPU figure. */
static void acct_open(AgLogin *l, const AgEvents *events) {
        const AgSession *s = l->session;
        const char *what = NULL;
        int r;

        r = ag_acct_start(l->hierarchy, &l->acct);
        if (r < 0) {
                ag_events_warn(events, AG_WARN_ACCT, r, NULL);  /* -ENOMEM, with l->acct NULL */
                return;
        }
        r = ag_acct_mirror_open(l->acct, s->path, getpid(), s->name != NULL, s->acct_origin, &what);
        if (r < 0)
                ag_events_warn(events, AG_WARN_ACCT, r, what ? what : "make the cpuacct group");
}

static int cgroupfs_open(AgLogin *l, const AgLoginParams *p, AgLoginFailure *f) {
        const AgHierarchy *h;
        AgSession *s = NULL;
        int r;

        r = find(l, f);
        if (r < 0)
                return r;
        h = l->hierarchy;
        /* A container's cgroup namespace whose root holds the container's
         * processes: nothing below it can get cpu. Checked before touching
         * it ("+cpu" there would make it a thread root). */
        if (h->version == 2 && ag_container_root_blocked(h) > 0) {
                f->step = AG_STEP_CONTAINER;
                return -EBUSY;
        }
        if (nested(l, p)) {
                l->state = AG_LOGIN_NESTED;
                return 0;
        }

        AgOpenParams op = {
                .root = p->root,
                .uid = p->uid,
                .gid = p->gid,
                .policy = p->policy,
                .pid = getpid(),
                .origin = l->caller,
                .acct_origin = l->caller_acct,
                .audit_session = ag_audit_session_self(),
                .pool = p->policy->pool,
                .pool_policy = p->pool_policy,
                .config = p->config,
                /* v1: never (AG_WARN_DELEGATE_V1) */
                .delegate = p->delegate && h->version == 2,
                .terminal = p->terminal,
                .events = p->events,
        };
        r = ag_session_open(h, &op, &s, &f->what);
        if (r < 0) {
                f->step = AG_STEP_SESSION;
                return r;
        }
        l->session = s;
        l->state = AG_LOGIN_GROUPED;
        if (p->delegate && h->version == 1)
                ag_events_warn(p->events, AG_WARN_DELEGATE_V1, -EOPNOTSUPP, NULL);
        acct_open(l, p->events);
        return 0;
}

/* The session's end: what it used, read while its groups still exist (from
 * the session's group, or from its cpuacct mirror as that is removed; one
 * read of /proc/self/cgroup tells where this process is in both), then the
 * groups removed. */
static int session_close(AgLogin *l, pid_t pid, const AgLoginCloseParams *p, AgLoginEnd *ret_end) {
        const AgHierarchy *h = l->hierarchy;
        const AgSession *s = l->session;
        int r;

        if (l->acct && l->acct->source == AG_ACCT_MIRROR) {
                _cleanup_free_ char *cur = NULL, *cur_acct = NULL;

                (void) ag_cg_pid_paths(h, pid, &cur, &cur_acct);
                r = ag_session_close_from(h, s, pid, cur, p->events);
                (void) ag_acct_mirror_close(l->acct, pid, cur_acct, &ret_end->usage);
                ret_end->have_usage = ret_end->usage.usec >= 0;
        } else {
                ret_end->have_usage = l->acct && ag_acct_usage(h, l->acct, s->path, &ret_end->usage) >= 0;
                r = ag_session_close(h, s, pid, p->events);
        }
        ret_end->lingering = r == -EBUSY && s->name;
        return r;
}

/* No session of this login: nothing to leave, but what this user left
 * behind earlier is swept. Never for a user open could not find. */
static int sweep(AgLogin *l, const AgLoginCloseParams *p) {
        _cleanup_close_ int mfd = -1;
        int r;

        if (!p->user_known)
                return 0;
        r = ag_login_hierarchy(l);
        if (r < 0)
                return r;
        if (!l->hierarchy->has_cpu)
                return 0;
        r = ag_hierarchy_open(l->hierarchy, &mfd);
        if (r < 0)
                return r;
        r = ag_user_sweep_at(mfd, p->root, p->uid, p->events);
        (void) ag_acct_sweep_user(l->hierarchy, p->root, p->uid);
        return r;
}

static int cgroupfs_close(AgLogin *l, const AgLoginCloseParams *p, AgLoginEnd *ret_end) {
        if (l->state == AG_LOGIN_GROUPED)
                return session_close(l, 0, p, ret_end);
        return sweep(l, p);
}

const AgLoginBackend ag_login_backend_cgroupfs = {
        .open = cgroupfs_open,
        .close = cgroupfs_close,
};

/* The watcher's sink in front of the caller's: notes whether the session
 * it watches went in its own close (the one group reported without
 * figures), passes every event on. */
struct watch_events {
        const AgEvents *events;
        const char *path;
        bool own;
};

static void watch_warn(void *userdata, AgWarn what, int error, const char *detail) {
        struct watch_events *w = userdata;

        ag_events_warn(w->events, what, error, detail);
}

static void watch_removed(void *userdata, const char *path, const AgCpuUsage *usage) {
        struct watch_events *w = userdata;

        if (!usage && strcmp(path, w->path) == 0)
                w->own = true;
        ag_events_removed(w->events, path, usage);
}

/* Root's credentials only: a su-style caller (real uid the invoking
 * user's, effective uid root) would leave the watcher in reach of that
 * user's kill(2) and ptrace(2). Best effort: without CAP_SETUID/SETGID the
 * watcher does its work all the same. */
static void watch_drop_caller_ids(void) {
        (void) setgroups(0, NULL);
        (void) setresgid(0, 0, 0);
        (void) setresuid(0, 0, 0);
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* The watcher leaves its caller's group for the hierarchy's root, whatever
 * that group is: a caller that stays in its session at close (where it
 * came from is not known, or gone) would keep the session from ever
 * emptying, and a su-style caller is back in the invoking user's leaf,
 * where that user's cap (or a hog of theirs) could starve the watcher. It
 * is root's own process, with every id 0 and not dumpable: no user can
 * reach it there. */
static void watch_leave_session(const AgLogin *l) {
        _cleanup_close_ int mfd = -1;

        if (ag_hierarchy_open(l->hierarchy, &mfd) >= 0)
                (void) ag_cg_attach(mfd, getpid());
}

/* The one watcher of a user, once its own session is dealt with: the
 * user's other closed sessions that still hold processes (whose own
 * watchers left them to this one) are removed as they empty, by the
 * bounded sweep, once a second, until none is left or the time is up. */
#define WATCH_OTHERS_STEP_US 1000000
static void watch_others(const AgLogin *l, uint64_t left_us, const AgEvents *sink) {
        const AgSession *s = l->session;
        char place[AG_PLACE_MAX];

        if (ag_pool_place(s->root, s->pool, place, sizeof place) < 0)
                return;
        for (uint64_t waited = 0;; waited += WATCH_OTHERS_STEP_US) {
                _cleanup_(ag_descent_done) AgDescent d = AG_DESCENT_NULL;

                if (ag_descent_open(l->hierarchy, s->root, s->pool, s->uid, NULL, AG_DESCENT_ROOT_OWNED, &d) < 0 ||
                    ag_user_closed_sessions(d.ufd) <= 0)
                        return;
                d.ufd = safe_close(d.ufd);
                (void) ag_user_sweep(d.pfd, place, s->uid, true, AG_SESSION_MAX_DIRS, sink);
                (void) ag_lane_sweep(d.mfd, d.pfd, s->root, s->uid, sink);
                if (waited >= left_us)
                        return;
                (void) usleep(WATCH_OTHERS_STEP_US);
        }
}

/* The watcher: nothing of the caller's (its ids, its syslog socket, closed
 * before the fds it uses go; signal handlers and mask; open files; working
 * directory), then the wait, the removal, the report. Never returns. */
static _Noreturn void watch_run(const AgLogin *l, unsigned timeout_ms, const AgEvents *events,
                                ag_watch_done_fn done) {
        const AgSession *s = l->session;
        AgLoginEnd end = { .usage = { -1, -1, -1 } };
        struct watch_events w = { .events = events, .path = s->path };
        const AgEvents sink = { .warn = watch_warn, .removed = watch_removed, .userdata = &w };
        _cleanup_(ag_descent_done) AgDescent d = AG_DESCENT_NULL;
        struct timespec t0;
        sigset_t none;
        int fd, r;

        watch_drop_caller_ids();
        closelog();
        for (int sig = 1; sig < NSIG; sig++)
                (void) signal(sig, SIG_DFL);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (close_range(3, ~0U, 0) < 0)
                for (fd = 3; fd < 1024; fd++)
                        (void) close(fd);
        fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
                (void) dup2(fd, 0);
                (void) dup2(fd, 1);
                (void) dup2(fd, 2);
                if (fd > 2)
                        (void) close(fd);
        }
        (void) chdir("/");
        (void) prctl(PR_SET_NAME, "pam_autogroup", 0, 0, 0);
        watch_leave_session(l);

        /* One watcher a user: the user group's lock (flock on its directory)
         * is held by the one that runs; another leaves its session to it
         * (its last sweep), to the user's next login or close, or to gc. */
        r = ag_descent_open(l->hierarchy, s->root, s->pool, s->uid, NULL, AG_DESCENT_ROOT_OWNED, &d);
        if (r == -ENOENT)
                r = 0;          /* the user group is gone, and the session with it */
        else if (r >= 0 && flock(d.ufd, LOCK_EX | LOCK_NB) < 0)
                r = errno == EWOULDBLOCK ? -EALREADY : negative_errno();
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (r >= 0)
                r = ag_session_wait_empty(l->hierarchy, s, timeout_ms);
        if (r == 0) {
                /* What it used, final now that it is empty, read while its
                 * groups (and its cpuacct mirror) still exist. */
                end.have_usage = l->acct && ag_acct_usage(l->hierarchy, l->acct, s->path, &end.usage) >= 0;
                r = ag_session_close_from(l->hierarchy, s, getpid(), NULL, &sink);
                if (l->acct && l->acct->source == AG_ACCT_MIRROR)
                        (void) ag_acct_mirror_close(l->acct, getpid(), NULL, NULL);
                (void) ag_acct_sweep_user(l->hierarchy, s->root, s->uid);
        }
        if (done)
                done(events ? events->userdata : NULL, r, w.own ? &end : NULL);
        if (r == 0 || r == -ETIMEDOUT || r == -EBUSY) {
                struct timespec t1;
                uint64_t spent;

                clock_gettime(CLOCK_MONOTONIC, &t1);
                spent = (uint64_t) (t1.tv_sec - t0.tv_sec) * 1000000 + (uint64_t) (t1.tv_nsec / 1000) -
                        (uint64_t) (t0.tv_nsec / 1000);
                watch_others(l, spent < (uint64_t) timeout_ms * 1000 ? (uint64_t) timeout_ms * 1000 - spent : 0,
                             &sink);
                (void) ag_acct_sweep_user(l->hierarchy, s->root, s->uid);
        }
        _exit(0);
}

int ag_login_watch(const AgLogin *l, unsigned timeout_ms, const AgEvents *events, ag_watch_done_fn done) {
        uid_t ruid, euid, suid;
        bool swapped = false;
        pid_t pid;
        int status, saved;

        if (l->state != AG_LOGIN_GROUPED || !l->session->name)
                return -EINVAL;
        /* A su-style caller has the invoking user's real uid: a child forked
         * with it could be stopped (SIGSTOP) by that user before it drops
         * it, and the waitpid below, so pam_close_session, would wait for as
         * long as the user likes. So the caller's real uid is root's across
         * the fork: no process of the close is ever the user's. */
        if (getresuid(&ruid, &euid, &suid) == 0 && ruid != 0 && euid == 0)
                swapped = setresuid(0, (uid_t) -1, (uid_t) -1) == 0;
        /* one fork for a child that detaches (setsid) and forks the watcher,
         * reaped here at once: the caller keeps no child and does not wait */
        pid = fork();
        saved = errno;
        if (pid != 0 && swapped)
                (void) setresuid(ruid, (uid_t) -1, (uid_t) -1);
        if (pid < 0)
                return -saved;
        if (pid == 0) {
                (void) setsid();
                pid = fork();
                if (pid == 0)
                        watch_run(l, timeout_ms, events, done);
                _exit(pid < 0 ? 1 : 0);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return 0;
}
