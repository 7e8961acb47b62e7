/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Latency classes: "autogroup run" and "autogroup set". See run.h. */

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "enter.h"
#include "lane.h"
#include "leaves.h"
#include "policy.h"
#include "pool.h"
#include "run.h"
#include "session.h"
#include "util.h"

#define LEAF_ATTEMPTS 16
#define MAX_LEAF_PROCS 4096

/* The caller's (or pid's) session, through the lookup of "autogroup
 * enter"; *ret_what is what run and set say they could not do. */
static int open_session(const AgHierarchy *h, const char *root, pid_t pid, int *ret_sfd, char **ret_path,
                        char **ret_rest, bool *ret_delegated, const char **ret_what) {
        const char *step = NULL;
        int r;

        r = ag_session_dir_open_pid(h, root, pid, getuid(), ret_sfd, ret_path, ret_rest, ret_delegated, &step);
        if (r < 0)
                *ret_what = r == -ENOMEM ? "allocate memory" : "find the session";
        return r;
}

bool ag_run_in_session(const AgHierarchy *h, const char *root, pid_t pid) {
        _cleanup_close_ int sfd = -1;
        _cleanup_free_ char *spath = NULL, *rest = NULL;
        const char *step = NULL;
        bool delegated;

        return ag_session_dir_open_pid(h, root, pid, getuid(), &sfd, &spath, &rest, &delegated, &step) != -ENOENT;
}

unsigned ag_run_leaf_weight(const AgRunOptions *o) {
        return ag_latency_pick_leaf_weight(o->weight, o->set_latency, o->latency, o->interactive);
}

static void note_idle_missing(const char *verb) {
        fprintf(stderr, "autogroup %s: note: the kernel has no cpu.idle (Linux 5.15 or later needed): "
                        "idle not set, the rest applies\n", verb);
}

void ag_run_note_latency(const char *verb, AgLatency l, AgLatencyResult res) {
        if (res != AG_LATENCY_APPLIED)
                fprintf(stderr, "autogroup %s: note: latency class %s: %s\n", verb, ag_latency_to_string(l),
                        ag_latency_result_to_string(res));
}

static const char *session_error(int r) {
        return r == -ENOENT ? "not inside one of your pam_autogroup sessions" : strerror(-r);
}

/* Removes empty "run-*" leaves of commands that ended without their run
 * removing them (killed), looking at no more than AG_RUN_SWEEP_MAX entries. */
static void sweep_stale(int sfd) {
        struct dirent *de;
        unsigned seen = 0;
        DIR *d;

        if (ag_opendir_dup(sfd, &d) < 0)
                return;
        while ((de = readdir(d)) && seen++ < AG_RUN_SWEEP_MAX)
                if (de->d_type == DT_DIR && strncmp(de->d_name, AG_RUN_LEAF_PREFIX, strlen(AG_RUN_LEAF_PREFIX)) == 0)
                        (void) unlinkat(sfd, de->d_name, AT_REMOVEDIR);   /* only an empty group goes */
        closedir(d);
}

/* What the child reports through the pipe when it cannot start CMD. */
typedef struct ChildError {
        int step;                      /* 0 move, 1 latency, 2 exec */
        int error;                     /* errno */
} ChildError;

static _Noreturn void child(int lfd, int errfd, const AgRunOptions *o, char **argv, const sigset_t *mask) {
        ChildError e = { 0, 0 };
        AgLatencyResult res = AG_LATENCY_APPLIED;
        int r;

        (void) sigprocmask(SIG_SETMASK, mask, NULL);
        if (lfd >= 0) {         /* -1: no leaf free, the command runs where it is */
                r = ag_cg_attach(lfd, getpid());
                if (r < 0) {
                        e = (ChildError) { 0, -r };
                        goto fail;
                }
                safe_close(lfd);
        }
        if (o->set_latency) {
                r = ag_latency_apply(0, o->latency, &res);
                if (r < 0) {
                        e = (ChildError) { 1, -r };
                        goto fail;
                }
                ag_run_note_latency("run", o->latency, res);
        }
        execvp(argv[0], argv);
        e = (ChildError) { 2, errno };
fail:
        (void) !write(errfd, &e, sizeof e);
        _exit(e.step == 2 ? 127 : 1);
}

/* The signals run blocks while CMD runs and waits for: SIGCHLD, SIGTERM,
 * SIGHUP, SIGINT, SIGQUIT. */
static void run_signals(sigset_t *ret) {
        sigemptyset(ret);
        sigaddset(ret, SIGCHLD);
        sigaddset(ret, SIGTERM);
        sigaddset(ret, SIGHUP);
        sigaddset(ret, SIGINT);
        sigaddset(ret, SIGQUIT);
}

/* Waits for pid, passing SIGTERM and SIGHUP on; SIGINT and SIGQUIT from the
 * terminal reach the command by themselves (same process group), so they are
 * only kept from ending this process first. */
static int wait_child(pid_t pid) {
        sigset_t set;
        int st;

        run_signals(&set);
        for (;;) {
                pid_t w = waitpid(pid, &st, WNOHANG);
                siginfo_t si;

                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        return 1;
                if (sigwaitinfo(&set, &si) < 0)
                        continue;
                if (si.si_signo == SIGTERM || si.si_signo == SIGHUP)
                        (void) kill(pid, si.si_signo);
        }
        if (WIFEXITED(st))
                return WEXITSTATUS(st);
        if (WIFSIGNALED(st))
                return 128 + WTERMSIG(st);
        return 1;
}

/* A delegated session: a leaf run-<pid> of the caller's own, with the
 * weight and idle flag asked for. */
static int make_own_leaf(const AgHierarchy *h, int sfd, const char *spath, const AgRunOptions *o, char *leaf,
                         size_t size, int *ret_lfd) {
        _cleanup_close_ int lfd = -1;
        bool idle_missing = false;
        int r;

        sweep_stale(sfd);
        for (unsigned i = 0;; i++) {
                if (i >= LEAF_ATTEMPTS) {
                        fprintf(stderr, "autogroup run: cannot find a free leaf name in %s\n", spath);
                        return -EEXIST;
                }
                if (i == 0)
                        snprintf(leaf, size, AG_RUN_LEAF_PREFIX "%" PRIiMAX, (intmax_t) getpid());
                else
                        snprintf(leaf, size, AG_RUN_LEAF_PREFIX "%" PRIiMAX "-%u", (intmax_t) getpid(), i);
                if (mkdirat(sfd, leaf, 0755) == 0)
                        break;
                if (errno != EEXIST) {
                        r = -errno;
                        fprintf(stderr, "autogroup run: cannot create %s/%s: %s\n", spath, leaf, strerror(-r));
                        return r;
                }
        }
        r = ag_cg_open(sfd, leaf, &lfd);
        if (r >= 0)
                r = ag_cg_set_weight_idle(h, lfd, ag_run_leaf_weight(o), o->idle, &idle_missing);
        if (r < 0) {
                fprintf(stderr, "autogroup run: cannot set up %s/%s: %s\n", spath, leaf, strerror(-r));
                lfd = safe_close(lfd);
                (void) unlinkat(sfd, leaf, AT_REMOVEDIR);
                return r;
        }
        if (idle_missing)
                note_idle_missing("run");
        *ret_lfd = take_fd(&lfd);
        return 0;
}

/* For the classes interactive and audio: the user's latency lane beside
 * the tree (lib/cgroup/lane.h), where root made one (only at interactive
 * 2; the level's environment variable is not needed to find it). 1 with
 * *ret_lfd and the lane's path ("/<root>.lane-<uid>") in ret_path; 0 when
 * there is none (at interactive 2 one line on stderr says why: the class
 * leaf then). */
static int pick_lane(const AgHierarchy *h, const char *root, const char *verb, const AgRunOptions *o,
                     char *ret_path, size_t size, int *ret_lfd) {
        char name[AG_ROOT_NAME_MAX + 32];
        int r;

        if (!o->set_latency || (o->latency != AG_LATENCY_INTERACTIVE && o->latency != AG_LATENCY_AUDIO))
                return 0;
        if (ag_lane_name(root, getuid(), name, sizeof name) < 0 || strlen(name) + 2 > size)
                return 0;
        r = ag_lane_open(h, root, getuid(), ret_lfd);
        if (r < 0 && o->interactive < AG_INTERACTIVE_MAX)
                return 0;
        if (r == -EPROTONOSUPPORT) {
                fprintf(stderr, "autogroup %s: note: interactive 2 on cgroup v2: no latency lane beside the tree "
                                "(a move there needs the hierarchy root's cgroup.procs, root's): the class "
                                "leaf\n", verb);
                return 0;
        }
        if (r < 0) {
                fprintf(stderr, "autogroup %s: note: interactive 2, but no latency lane /%s of yours (%s): the "
                                "class leaf\n", verb, name,
                        r == -ENOENT ? "root made none: root's own logins get none, nor does a login made before "
                                       "interactive 2" : strerror(-r));
                return 0;
        }
        snprintf(ret_path, size, "/%s", name);
        return 1;
}

/* A session of root's: at interactive 2 the user's latency lane for the
 * classes interactive and audio (pick_lane; *ret_lane set), else the
 * class leaf of --latency's class where root made one (interactive 1, 2),
 * else a free leaf-<i>; none free (or none at all): *ret_lfd stays -1, the
 * command runs where the caller is, and one line on stderr says so.
 * Weights are root's. */
static int pick_root_leaf(const AgHierarchy *h, const char *root, int sfd, const char *spath,
                          const AgRunOptions *o, char *leaf, size_t size, int *ret_lfd, bool *ret_lane) {
        int r;

        if (o->weight > 0 || o->idle >= 0) {
                fprintf(stderr, "autogroup run: the weight and idle flag of your session's leaves are root's "
                                "(autogroup.conf: interactive, idle); --weight and --idle need a session "
                                "delegated to you\n");
                return -EPERM;
        }
        if (pick_lane(h, root, "run", o, leaf, size, ret_lfd) > 0) {
                *ret_lane = true;
                return 0;
        }
        r = o->set_latency ? ag_leaf_for_class(sfd, getuid(), o->latency, leaf, size, ret_lfd)
                           : ag_leaf_find_free(sfd, getuid(), leaf, size, ret_lfd);
        if (r == -ENOSPC || r == -ENOENT) {
                /* said always: the command does not get what run is for */
                fprintf(stderr, "autogroup run: %s in %s: the command runs where it is\n",
                        r == -ENOSPC ? "every leaf holds processes" : "no leaves (leaves 0)", spath);
                *leaf = 0;
                return 0;
        }
        if (r < 0)
                fprintf(stderr, "autogroup run: cannot find a leaf in %s: %s\n", spath, strerror(-r));
        return r;
}

int ag_run(const AgHierarchy *h, const char *root, const AgRunOptions *o, char **argv) {
        _cleanup_close_ int sfd = -1, lfd = -1;
        _cleanup_free_ char *spath = NULL, *rest = NULL;
        const char *what = NULL;
        char leaf[AG_ROOT_NAME_MAX + 40] = "", where[PATH_MAX];
        bool delegated = false, lane = false;
        sigset_t block, old;
        int r, pipefd[2], status;
        ChildError e;
        pid_t pid;
        ssize_t n;

        r = open_session(h, root, getpid(), &sfd, &spath, &rest, &delegated, &what);
        if (r < 0) {
                fprintf(stderr, "autogroup run: cannot %s: %s\n", what, session_error(r));
                return 1;
        }
        if (delegated && o->set_latency && o->interactive >= AG_INTERACTIVE_MAX &&
            (o->latency == AG_LATENCY_INTERACTIVE || o->latency == AG_LATENCY_AUDIO))
                /* cgroup v2 only: the same notice as in a session of root's leaves */
                fprintf(stderr, "autogroup run: note: interactive 2 on cgroup v2: no latency lane beside the tree "
                                "(a move there needs the hierarchy root's cgroup.procs, root's): a leaf of "
                                "the session\n");
        r = delegated ? make_own_leaf(h, sfd, spath, o, leaf, sizeof leaf, &lfd)
                      : pick_root_leaf(h, root, sfd, spath, o, leaf, sizeof leaf, &lfd, &lane);
        if (r < 0)
                return 1;
        /* the lane: its path; a leaf: below the session */
        snprintf(where, sizeof where, "%s%s%s", lane ? "" : spath, lane ? "" : "/", leaf);
        if (o->verbose && lfd >= 0)
                fprintf(stderr, "autogroup run: %s\n", where);

        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                fprintf(stderr, "autogroup run: pipe: %m\n");
                goto remove;
        }
        run_signals(&block);
        (void) sigprocmask(SIG_BLOCK, &block, &old);
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "autogroup run: fork: %m\n");
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                safe_close(pipefd[0]);
                safe_close(pipefd[1]);
                goto remove;
        }
        if (pid == 0) {
                safe_close(pipefd[0]);
                child(lfd, pipefd[1], o, argv, &old);
        }
        safe_close(pipefd[1]);
        lfd = safe_close(lfd);
        do
                n = read(pipefd[0], &e, sizeof e);
        while (n < 0 && errno == EINTR);
        safe_close(pipefd[0]);
        status = wait_child(pid);
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        if (n == (ssize_t) sizeof e) {
                if (e.step == 2)
                        fprintf(stderr, "autogroup run: cannot run %s: %s\n", argv[0], strerror(e.error));
                else
                        fprintf(stderr, "autogroup run: cannot %s %s: %s\n",
                                e.step == 0 ? "move into" : "set the latency class in", where,
                                strerror(e.error));
        }
        /* The command is done: a leaf of its own goes once empty (background
         * processes keep it until they end; the session's close removes
         * it); root's leaves stay for the next command. */
        if (delegated)
                (void) unlinkat(sfd, leaf, AT_REMOVEDIR);
        return status;

remove:
        lfd = safe_close(lfd);
        if (delegated)
                (void) unlinkat(sfd, leaf, AT_REMOVEDIR);
        return 1;
}

static bool is_pid(const char *s, pid_t *ret) {
        unsigned long v;

        if (ag_safe_atoul(s, INT32_MAX, &v) < 0 || v == 0)
                return false;
        *ret = (pid_t) v;
        return true;
}

int ag_set_own_process(pid_t pid, AgLatency l, AgLatencyResult *ret_res) {
        int r = ag_pid_owned_by(pid, getuid());

        if (r > 0)
                r = ag_latency_apply_process(pid, l, ret_res);
        else if (r == 0)
                r = -EPERM;
        if (r == -EPERM)
                fprintf(stderr, "autogroup set: process %jd is not yours\n", (intmax_t) pid);
        return r;
}

typedef struct LeafLatency {
        AgLatency latency;
        AgLatencyResult *res;
} LeafLatency;

static int process_latency(pid_t pid, void *userdata) {
        const LeafLatency *l = userdata;

        return ag_latency_apply_process(pid, l->latency, l->res);
}

/* Every process in the leaf (cgroup.procs, at most MAX_LEAF_PROCS) gets the class. */
static int leaf_latency(int lfd, AgLatency l, unsigned *ret_n, AgLatencyResult *ret_res) {
        LeafLatency ll = { .latency = l, .res = ret_res };
        int r;

        r = ag_cg_foreach_proc(lfd, MAX_LEAF_PROCS, process_latency, &ll);
        if (r < 0)
                return r;
        *ret_n = (unsigned) r;
        return 0;
}

/* Is the leaf at path (below the session sfd) the caller's own group, its
 * weight file writable by the caller? */
static bool leaf_is_users(int sfd, const char *path) {
        _cleanup_close_ int lfd = -1;

        if (ag_cg_open_path(sfd, path, &lfd) < 0)
                return false;
        return faccessat(lfd, "cpu.weight", W_OK, AT_EACCESS) == 0 ||
               faccessat(lfd, "cpu.shares", W_OK, AT_EACCESS) == 0;
}

/* What set says of a latency class it applied (r its -errno, n the
 * processes, res the kernel's answer): 0, or 1 once the error is printed. */
static int latency_outcome(const AgRunOptions *o, const char *target, int r, unsigned n, AgLatencyResult res) {
        if (r < 0) {
                fprintf(stderr, "autogroup set: cannot set latency class %s on %s: %s\n",
                        ag_latency_to_string(o->latency), target, strerror(-r));
                return 1;
        }
        if (n > 0)
                ag_run_note_latency("set", o->latency, res);
        return 0;
}

/* set in a session of root's: weights and idle flags are root's; the
 * class goes on the process (or on every process of a leaf), and a process
 * of the user's own goes into its class's leaf where root made one. */
static int set_root_leaves(const AgHierarchy *h, const char *root, int sfd, const char *spath,
                           const AgRunOptions *o, bool by_pid, pid_t pid, bool in_lane, const char *target) {
        AgLatencyResult res = AG_LATENCY_APPLIED;
        _cleanup_close_ int lfd = -1;
        char leaf[AG_ROOT_NAME_MAX + 40];
        unsigned n = 1;
        int r;

        if (o->weight > 0 || o->idle >= 0) {
                fprintf(stderr, "autogroup set: the weight and idle flag of your session's leaves are root's "
                                "(autogroup.conf: interactive, idle); --weight and --idle need a session "
                                "delegated to you\n");
                return 1;
        }
        if (!by_pid) {
                r = ag_leaf_open(sfd, target, getuid(), &lfd);
                if (r < 0) {
                        fprintf(stderr, "autogroup set: no leaf %s of yours in %s: %s\n", target, spath,
                                r == -ENOENT ? "no such leaf" : r == -EPERM ? "not one of root's leaves for you"
                                                                             : strerror(-r));
                        return 1;
                }
                r = leaf_latency(lfd, o->latency, &n, &res);
        } else {
                r = ag_set_own_process(pid, o->latency, &res);
                if (r == -EPERM)
                        return 1;
                if (r >= 0 && pick_lane(h, root, "set", o, leaf, sizeof leaf, &lfd) > 0) {
                        r = ag_cg_attach(lfd, pid);
                        if (r >= 0 && o->verbose)
                                fprintf(stderr, "autogroup set: process %jd moved into %s\n", (intmax_t) pid, leaf);
                } else if (r >= 0 && ag_class_leaf_name(o->latency, leaf, sizeof leaf) >= 0 &&
                           ag_leaf_open(sfd, leaf, getuid(), &lfd) >= 0) {
                        r = ag_cg_attach(lfd, pid);
                        if (r >= 0 && o->verbose)
                                fprintf(stderr, "autogroup set: process %jd moved into %s/%s\n", (intmax_t) pid,
                                        spath, leaf);
                } else if (r >= 0 && in_lane) {
                        /* out of the lane, into a free leaf of the caller's session */
                        if (ag_leaf_find_free(sfd, getuid(), leaf, sizeof leaf, &lfd) >= 0) {
                                r = ag_cg_attach(lfd, pid);
                                if (r >= 0 && o->verbose)
                                        fprintf(stderr, "autogroup set: process %jd moved into %s/%s\n",
                                                (intmax_t) pid, spath, leaf);
                        } else
                                fprintf(stderr, "autogroup set: note: no free leaf in %s: process %jd stays in "
                                                "your latency lane\n", spath, (intmax_t) pid);
                }
        }
        return latency_outcome(o, target, r, n, res);
}

/* set in a delegated session: the weight (or idle flag) of the user's own
 * leaf, opened into *lfd. 0, or 1 once the error is printed. */
static int set_delegated_weight(const AgHierarchy *h, int sfd, const char *spath, const char *leaf, bool by_pid,
                                pid_t pid, const AgRunOptions *o, int *lfd) {
        bool idle_missing = false;
        int r;

        if (!*leaf) {
                fprintf(stderr, "autogroup set: process %jd sits in the session group %s itself, "
                                "whose weight is root's\n", (intmax_t) pid, spath);
                return 1;
        }
        r = by_pid ? ag_cg_open_path(sfd, leaf, lfd) : ag_cg_open(sfd, leaf, lfd);
        if (r < 0) {
                fprintf(stderr, "autogroup set: no leaf %s in %s: %s\n", leaf, spath,
                        r == -ELOOP || r == -ENOTDIR ? "not a group" : strerror(-r));
                return 1;
        }
        r = ag_cg_set_weight_idle(h, *lfd, ag_run_leaf_weight(o), o->idle, &idle_missing);
        if (r < 0) {
                fprintf(stderr, "autogroup set: cannot change %s/%s: %s%s\n", spath, leaf, strerror(-r),
                        r == -EACCES || r == -EPERM ? " (only leaves you made yourself are yours to change; "
                                                      "login/ belongs to root)" : "");
                return 1;
        }
        if (idle_missing)
                note_idle_missing("set");
        return 0;
}

/* set in a delegated session: the latency class of pid, or of every
 * process of the leaf (*lfd, opened here when not yet). 0, or 1 once the
 * error is printed. */
static int set_delegated_latency(int sfd, const char *spath, const char *leaf, const char *target, bool by_pid,
                                 pid_t pid, const AgRunOptions *o, int *lfd) {
        AgLatencyResult res = AG_LATENCY_APPLIED;
        unsigned n = 1;
        int r;

        if (by_pid)
                r = ag_latency_apply_process(pid, o->latency, &res);
        else {
                if (*lfd < 0) {
                        r = ag_cg_open(sfd, leaf, lfd);
                        if (r < 0) {
                                fprintf(stderr, "autogroup set: no leaf %s in %s: %s\n", leaf, spath, strerror(-r));
                                return 1;
                        }
                }
                r = leaf_latency(*lfd, o->latency, &n, &res);
        }
        return latency_outcome(o, target, r, n, res);
}

/* Is pid in the caller's latency lane (lib/cgroup/lane.h)? */
static bool pid_in_own_lane(const AgHierarchy *h, const char *root, pid_t pid) {
        _cleanup_free_ char *path = NULL;
        char name[AG_ROOT_NAME_MAX + 32];

        return h->version == 1 && ag_lane_name(root, getuid(), name, sizeof name) >= 0 &&
               ag_cg_pid_path(h, pid, &path) >= 0 && path[0] == '/' && strcmp(path + 1, name) == 0;
}

int ag_set(const AgHierarchy *h, const char *root, const AgRunOptions *o, const char *target) {
        _cleanup_close_ int sfd = -1, lfd = -1;
        _cleanup_free_ char *spath = NULL, *rest = NULL;
        const char *what = NULL, *leaf;
        bool delegated = false;
        pid_t pid = 0;
        int r;

        bool by_pid = is_pid(target, &pid);
        if (!by_pid && (!*target || strchr(target, '/') || strcmp(target, ".") == 0 || strcmp(target, "..") == 0)) {
                fprintf(stderr, "autogroup set: '%s' is neither a PID nor a leaf name of your session\n", target);
                return 2;
        }
        /* a process of the caller's in the caller's latency lane: set in the caller's session */
        bool in_lane = by_pid && pid_in_own_lane(h, root, pid);
        r = open_session(h, root, by_pid && !in_lane ? pid : getpid(), &sfd, &spath, &rest, &delegated, &what);
        if (r < 0) {
                if (by_pid)
                        fprintf(stderr, "autogroup set: process %jd is %s\n", (intmax_t) pid,
                                r == -ENOENT || r == -EPERM ? session_error(r)
                                             : r == -ESRCH ? "gone" : strerror(-r));
                else
                        fprintf(stderr, "autogroup set: cannot %s: %s\n", what, session_error(r));
                return 1;
        }
        leaf = by_pid ? rest : target;
        if (!delegated)
                return set_root_leaves(h, root, sfd, spath, o, by_pid, pid, in_lane, target);

        /* The table's weight for --latency (interactive 1, 2) where the
         * process sits in a leaf that is not the user's (login/, or the
         * session group itself): the class still applies, the weight not. */
        AgRunOptions oo = *o;
        if (o->weight == 0 && o->idle < 0 && ag_run_leaf_weight(o) > 0 && by_pid &&
            (!*leaf || !leaf_is_users(sfd, leaf))) {
                fprintf(stderr, "autogroup set: note: process %jd sits in %s/%s, whose weight is root's: "
                                "latency class only (interactive %u)\n", (intmax_t) pid, spath,
                        *leaf ? leaf : "", o->interactive);
                oo.set_latency = false;         /* for ag_run_leaf_weight(): no table weight */
        }

        if ((ag_run_leaf_weight(&oo) > 0 || o->idle >= 0) &&
            set_delegated_weight(h, sfd, spath, leaf, by_pid, pid, &oo, &lfd) != 0)
                return 1;
        if (o->set_latency && set_delegated_latency(sfd, spath, leaf, target, by_pid, pid, o, &lfd) != 0)
                return 1;
        if (o->verbose)
                fprintf(stderr, "autogroup set: %s/%s\n", spath, leaf);
        return 0;
}
