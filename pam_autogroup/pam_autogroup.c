/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * pam_autogroup: one cpu cgroup per login session, below a group per user.
 *
 * This file is only the PAM glue: option parsing, logging, PAM data and
 * audit records. The cgroup work is in lib/ (session.c, cgroup.c) and the
 * policy in lib/config-*.c and lib/policy.c. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#ifdef HAVE_LIBAUDIT
#include <libaudit.h>
#endif

#define PAM_SM_SESSION
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

#include "acct.h"
#include "conf.h"
#include "cgroup.h"
#include "latency.h"
#include "container.h"
#include "env.h"
#include "hint.h"
#include "policy.h"
#include "session.h"
#include "pam-systemd.h"
#include "systemd.h"

#ifndef AG_DEFAULT_CONF
#define AG_DEFAULT_CONF "/etc/security/autogroup.conf"
#endif

#define DATA_NAME "pam_autogroup"
#define DATA_USER_NAME "pam_autogroup_user"    /* struct open_user */
#define DATA_NESTED_NAME "pam_autogroup_nested" /* open stepped aside: close does nothing */
#define DATA_ASIDE_NAME "pam_autogroup_aside"  /* unsigned: instances that stepped aside at open */

/* option flags (the module's own namespace, not libpam's PAM_*) */
#define AG_OPT_DEBUG    0x0001
#define AG_OPT_NOAUDIT  0x0002
#define AG_OPT_STRICT   0x0004

/* acctlog=info|debug|off: the priority of the per-session accounting line at close */
enum acct_log { ACCT_LOG_INFO, ACCT_LOG_DEBUG, ACCT_LOG_OFF };

/* How long the watcher of a closed session that still holds processes
 * waits for them to exit (then "autogroup gc", run by a timer, removes it). */
#define WATCH_TIMEOUT_MS 60000

struct module_ctl {
        unsigned flags;
        const char *conf;
        const char *root;
        AgMode mode;                   /* mode=auto|cgroupfs|systemd (pam-systemd.c) */
        int delegate;                  /* delegate=yes 1, delegate=no 0, not given -1 (no) */
        enum acct_log acctlog;
};

struct module_data {
        AgHierarchy *hierarchy;
        AgSession *session;
        AgAcct *acct;                  /* CPU accounting: start time, cpuacct mirror (lib/acct.c) */
        char *user;                    /* the account's name (pw_name), which close logs and audits */
};

static unsigned _pam_parse(pam_handle_t *pamh, int argc, const char **argv, struct module_ctl *ctl) {
        ctl->flags = 0;
        ctl->conf = AG_DEFAULT_CONF;
        ctl->root = AG_ROOT_DEFAULT;
        ctl->mode = AG_MODE_AUTO;
        ctl->delegate = -1;
        ctl->acctlog = ACCT_LOG_INFO;

        for (; argc-- > 0; ++argv) {
                if (strcmp(*argv, "debug") == 0)
                        ctl->flags |= AG_OPT_DEBUG;
                else if (strcmp(*argv, "noaudit") == 0)
                        ctl->flags |= AG_OPT_NOAUDIT;
                else if (strcmp(*argv, "strict") == 0)
                        ctl->flags |= AG_OPT_STRICT;
                else if (strncmp(*argv, "conf=", 5) == 0 && (*argv)[5])
                        ctl->conf = *argv + 5;
                else if (strncmp(*argv, "root=", 5) == 0) {
                        if (ag_root_name_valid(*argv + 5))
                                ctl->root = *argv + 5;
                        else
                                pam_syslog(pamh, LOG_ERR, "invalid root name '%s', using '%s'", *argv + 5,
                                           AG_ROOT_DEFAULT);
                } else if (strncmp(*argv, "mode=", 5) == 0) {
                        AgMode m = ag_mode_from_string(*argv + 5);
                        if (m >= 0)
                                ctl->mode = m;
                        else
                                pam_syslog(pamh, LOG_ERR, "invalid mode '%s', using 'auto'", *argv + 5);
                } else if (strcmp(*argv, "delegate=yes") == 0)
                        ctl->delegate = 1;
                else if (strcmp(*argv, "delegate=no") == 0)
                        ctl->delegate = 0;
                else if (strncmp(*argv, "delegate=", 9) == 0)
                        pam_syslog(pamh, LOG_ERR, "invalid delegate '%s', using 'no'", *argv + 9);
                else if (strncmp(*argv, "acctlog=", 8) == 0) {
                        if (strcmp(*argv + 8, "info") == 0)
                                ctl->acctlog = ACCT_LOG_INFO;
                        else if (strcmp(*argv + 8, "debug") == 0)
                                ctl->acctlog = ACCT_LOG_DEBUG;
                        else if (strcmp(*argv + 8, "off") == 0)
                                ctl->acctlog = ACCT_LOG_OFF;
                        else
                                pam_syslog(pamh, LOG_ERR, "invalid acctlog '%s', using 'info'", *argv + 8);
                } else
                        pam_syslog(pamh, LOG_ERR, "unknown option: %s", *argv);
        }
        return ctl->flags;
}

static int fail_rc(const struct module_ctl *ctl) {
        return (ctl->flags & AG_OPT_STRICT) ? PAM_SESSION_ERR : PAM_IGNORE;
}

static void config_error(void *userdata, const char *file, unsigned line, const char *message) {
        pam_handle_t *pamh = userdata;

        if (file && line > 0)
                pam_syslog(pamh, LOG_ERR, "%s:%u: %s, line skipped", file, line, message);
        else if (file)
                pam_syslog(pamh, LOG_ERR, "%s: %s", file, message);
        else
                pam_syslog(pamh, LOG_ERR, "%s", message);
}

struct group_ctx {
        pam_handle_t *pamh;
        const char *user;
        gid_t gid;                      /* the user's primary group */
};

/* Membership decided by ag_nss_group_member() (lib/policy.c; "autogroup
 * explain" uses the same): the primary gid, or the user's name among the
 * members, with the user's entry looked up once per login. Unlike
 * pam_modutil_user_in_group_nam_nam(), which reports an NSS error (a
 * directory that is down) as "not a member", an error is returned as -errno
 * and logged here, once: ag_policy_resolve() asks about no further group
 * after it. Any error counts, ENOENT too; "no such group" is not an error. */
static int in_group(void *userdata, const char *group) {
        struct group_ctx *g = userdata;
        int r;

        r = ag_nss_group_member(group, g->user, g->gid);
        if (r < 0)
                pam_syslog(g->pamh, LOG_WARNING,
                           "cannot look up group %s (%s; is the directory down?): "
                           "@group rules not applied to %s for this login", group, strerror(-r), g->user);
        return r;
}

/* The audit socket of one session call: opened at its first record, shared
 * by the records of that call (a close writes one for each group it
 * removes), closed by audit_done() before the call returns. */
struct audit_conn {
        int fd;
        bool opened;
};
#define AUDIT_CONN_INIT { .fd = -1, .opened = false }

static void audit_done(struct audit_conn *a) {
#ifdef HAVE_LIBAUDIT
        if (a->fd >= 0)
                audit_close(a->fd);
#endif
        a->fd = -1;
        a->opened = false;
}

/* extra: more " key=value" fields after cgroup=, or NULL */
static void audit_record_fields(pam_handle_t *pamh, const struct module_ctl *ctl, struct audit_conn *a,
                                const char *op, const char *user, uid_t uid, const char *path, const char *extra) {
#ifdef HAVE_LIBAUDIT
        char msg[768], *acct;
        const void *tty = NULL, *rhost = NULL;
        int fd;

        if (ctl->flags & AG_OPT_NOAUDIT)
                return;
        if (!a->opened) {
                a->opened = true;
                a->fd = audit_open();
                /* A kernel without audit support is not an error. */
                if (a->fd < 0 && errno != EINVAL && errno != EPROTONOSUPPORT && errno != EAFNOSUPPORT)
                        pam_syslog(pamh, LOG_ERR, "audit_open: %m");
        }
        fd = a->fd;
        if (fd < 0)
                return;
        acct = audit_encode_nv_string("acct", user, 0);
        (void) pam_get_item(pamh, PAM_TTY, &tty);
        (void) pam_get_item(pamh, PAM_RHOST, &rhost);
        /* PAM_USER as the client gave it, when it is not the account's name */
        const void *typed = NULL;
        char *typed_field = NULL;
        if (pam_get_item(pamh, PAM_USER, &typed) == PAM_SUCCESS && typed && strcmp(typed, user) != 0)
                typed_field = audit_encode_nv_string("pam_user", typed, 0);
        snprintf(msg, sizeof msg, "op=%s %s%s%s uid=%lu cgroup=%s%s%s", op, acct ? acct : "acct=?",
                 typed_field ? " " : "", typed_field ? typed_field : "", (unsigned long) uid, path,
                 extra ? " " : "", extra ? extra : "");
        free(acct);
        free(typed_field);
        if (audit_log_user_message(fd, AUDIT_TRUSTED_APP, msg, rhost, NULL, tty, 1) <= 0 && errno != EPERM &&
            errno != ECONNREFUSED)
                pam_syslog(pamh, LOG_ERR, "cannot write audit record: %m");
        if (ctl->flags & AG_OPT_DEBUG)
                pam_syslog(pamh, LOG_DEBUG, "audit: %s", msg);
#else
        (void) pamh;
        (void) ctl;
        (void) a;
        (void) op;
        (void) user;
        (void) uid;
        (void) path;
        (void) extra;
#endif
}

static void audit_record(pam_handle_t *pamh, const struct module_ctl *ctl, struct audit_conn *a, const char *op,
                         const char *user, uid_t uid, const char *path) {
        audit_record_fields(pamh, ctl, a, op, user, uid, path, NULL);
}

/* The user as open found it, kept with pam_set_data for the close of a
 * login that got no session (the user unknown to NSS, a directory that is
 * down, no cgroup, a real-time caller...). That close then sweeps by this
 * uid, or does nothing for a user open could not find, and never asks NSS
 * about the user again: with the directory down the logout would wait for
 * its timeout a second time. */
struct open_user {
        bool known;
        uid_t uid;
};

static void open_user_cleanup(pam_handle_t *pamh, void *data, int error_status) {
        (void) pamh;
        (void) error_status;
        free(data);
}

/* After the user look-up of open. Without memory for it the close asks NSS
 * itself, as for a handle that open never saw. */
static void open_user_remember(pam_handle_t *pamh, const struct passwd *pw) {
        struct open_user *o = malloc(sizeof *o);

        if (!o)
                return;
        *o = (struct open_user) { .known = pw != NULL, .uid = pw ? pw->pw_uid : (uid_t) -1 };
        if (pam_set_data(pamh, DATA_USER_NAME, o, open_user_cleanup) != PAM_SUCCESS)
                free(o);
}

/* What open remembered, forgotten now (a later open in the same handle
 * remembers afresh). Returns false when open did not run in this handle. */
static bool open_user_take(pam_handle_t *pamh, struct open_user *ret) {
        const void *data = NULL;

        if (pam_get_data(pamh, DATA_USER_NAME, &data) != PAM_SUCCESS || !data)
                return false;
        *ret = *(const struct open_user *) data;
        (void) pam_set_data(pamh, DATA_USER_NAME, NULL, NULL);
        return true;
}

/* The module twice in one stack (common-session and the service's own file;
 * or libpam reading "other" twice): the first instance opens and closes the
 * session, every later one steps aside. An instance steps aside at open when
 * an open already ran in this handle and its close has not; the count of
 * those tells as many closes to step aside after the first one. */
static bool open_pending(pam_handle_t *pamh) {
        const void *data = NULL;

        return pam_get_data(pamh, DATA_USER_NAME, &data) == PAM_SUCCESS && data;
}

static void aside_cleanup(pam_handle_t *pamh, void *data, int error_status) {
        (void) pamh;
        (void) error_status;
        free(data);
}

/* delta +1 at open, -1 at close; returns false (and changes nothing) when
 * asked to take one that is not there. */
static bool aside_count(pam_handle_t *pamh, int delta) {
        const void *data = NULL;
        unsigned *n;

        if (pam_get_data(pamh, DATA_ASIDE_NAME, &data) == PAM_SUCCESS && data)
                n = (unsigned *) data;
        else {
                if (delta < 0)
                        return false;
                n = calloc(1, sizeof *n);
                if (!n || pam_set_data(pamh, DATA_ASIDE_NAME, n, aside_cleanup) != PAM_SUCCESS) {
                        free(n);
                        return true;
                }
        }
        if (delta < 0 && *n == 0)
                return false;
        *n += (unsigned) delta;
        return true;
}

static void data_cleanup(pam_handle_t *pamh, void *data, int error_status) {
        struct module_data *d = data;

        (void) pamh;
        (void) error_status;
        if (!d)
                return;
        ag_session_free(d->session);
        ag_hierarchy_free(d->hierarchy);
        ag_acct_free(d->acct);
        free(d->user);
        free(d);
}

static int find_hierarchy(pam_handle_t *pamh, const struct module_ctl *ctl, AgHierarchy **ret) {
        AgHierarchy *h = NULL;
        int r;

        r = ag_hierarchy_find(NULL, &h);
        if (r == -ENOENT) {
                pam_syslog(pamh, LOG_NOTICE, "no cgroup filesystem is mounted, session not grouped");
                return r;
        }
        if (r < 0) {
                pam_syslog(pamh, LOG_ERR, "cannot find the cgroup hierarchy: %s", strerror(-r));
                return r;
        }
        if (!h->has_cpu) {
                pam_syslog(pamh, LOG_NOTICE, "no cpu controller available (cgroup2 at %s lacks cpu), session not grouped",
                           h->mount);
                ag_hierarchy_free(h);
                return -EOPNOTSUPP;
        }
        if (ctl->flags & AG_OPT_DEBUG)
                pam_syslog(pamh, LOG_DEBUG, "using cgroup v%d hierarchy at %s", h->version, h->mount);
        *ret = h;
        return 0;
}

struct removed_ctx {
        pam_handle_t *pamh;
        const struct module_ctl *ctl;
        struct audit_conn *audit;
        const char *user;
        uid_t uid;
};

static void on_removed(void *userdata, const char *path) {
        struct removed_ctx *c = userdata;

        if (c->ctl->flags & AG_OPT_DEBUG)
                pam_syslog(c->pamh, LOG_DEBUG, "removed %s", path);
        audit_record(c->pamh, c->ctl, c->audit, "autogroup-remove", c->user, c->uid, path);
}

/* latency classes: the class goes to the calling thread, the one
 * that forks the login, so every process of the login inherits it. It needs
 * no cgroup, so it applies in every mode; class normal changes nothing. A
 * failure is one log line and never fails the session. */
static void apply_latency(pam_handle_t *pamh, const struct module_ctl *ctl, const char *user, AgLatency l) {
        AgLatencyResult res;
        char what[96];
        int r;

        if (l == AG_LATENCY_NORMAL)
                return;
        ag_latency_describe(l, what, sizeof what);
        r = ag_latency_apply(0, l, &res);
        if (r < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot set latency class %s (%s) for %s: %s",
                           ag_latency_to_string(l), what, user, strerror(-r));
        else if (ctl->flags & AG_OPT_DEBUG)
                pam_syslog(pamh, LOG_DEBUG, "latency class %s (%s) for %s: %s", ag_latency_to_string(l), what,
                           user, ag_latency_result_to_string(res));
}

/* CPU accounting at open: the start time and, on v1 with cpuacct mounted on
 * its own, the session's mirror there. A failure costs only the CPU figure. */
static void acct_open(pam_handle_t *pamh, struct module_data *d) {
        const char *what = NULL;
        int r;

        r = ag_acct_start(d->hierarchy, &d->acct);
        if (r < 0) {
                pam_syslog(pamh, LOG_CRIT, "out of memory");
                return;
        }
        r = ag_acct_mirror_open(d->acct, d->session->path, getpid(), d->session->name != NULL,
                                d->session->acct_origin, &what);
        if (r < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s %s%s: %s, CPU time of this session not recorded",
                           what ? what : "make the cpuacct group", d->acct->mount, d->session->path, strerror(-r));
}

/* CPU accounting at close: the one line and audit record with what the
 * session used (read before its groups are removed, see pam_sm_close_session). */
static void acct_report(pam_handle_t *pamh, const struct module_ctl *ctl, struct audit_conn *a, const char *user,
                        const struct module_data *d, const AgCpuUsage *u, bool lingering) {
        char fields[200], extra[240];

        if (ag_acct_format(u, d->acct ? (long long) ag_acct_wall_usec(d->acct) : -1, fields, sizeof fields) < 0)
                return;
        if (ctl->acctlog != ACCT_LOG_OFF)
                pam_syslog(pamh, ctl->acctlog == ACCT_LOG_DEBUG ? LOG_DEBUG : LOG_INFO,
                           "session %s %s: user=%s scope=%s %s", d->session->path,
                           lingering ? "lingering" : "closed", user, d->session->name ? "session" : "user", fields);
        snprintf(extra, sizeof extra, "state=%s %s", lingering ? "lingering" : "closed", fields);
        audit_record_fields(pamh, ctl, a, "autogroup-session-end", user, d->session->uid, d->session->path, extra);
}

/* A login opened from inside a session (su, su -l, runuser, sudo -i from one
 * of its shells; the module twice in one stack) steps aside and stays where
 * its caller is, as logind keeps such logins in the caller's session:
 *   - cgroupfs mode: when the caller sits in a session below root of the
 *     same user, of its audit session (pam_loginuid gives sshd, login and
 *     cron logins a new one; su and sudo keep it). A login of another user
 *     gets a session of its own: the caller's session is delegated to the
 *     caller, who could move, freeze or kill (cgroup.freeze, cgroup.kill
 *     of their own leaves) another user's processes there;
 *   - systemd mode: when the caller sits in a logind session scope (logind
 *     keeps the login there; the scope is root's) and pam_systemd did not
 *     make one for this login before us.
 * Remembered for close, which then does nothing. */
/* Is the cgroup at path (below the hierarchy's mount) root's, reached
 * without following a symbolic link? */
static bool scope_is_roots(const AgHierarchy *h, const char *path) {
        struct stat st;
        int rootfd = -1, fd = -1;
        bool r = false;

        if (ag_hierarchy_open(h, &rootfd) < 0)
                return false;
        if (ag_cg_open_path(rootfd, path, &fd) >= 0 && fstat(fd, &st) == 0)
                r = st.st_uid == 0;
        if (fd >= 0)
                (void) close(fd);
        (void) close(rootfd);
        return r;
}

static bool nested_login(pam_handle_t *pamh, const struct module_ctl *ctl, const AgHierarchy *h, bool systemd,
                         uid_t uid, const char *user) {
        char *cur = NULL;
        const char *sname = NULL;
        size_t slen = 0;
        uid_t owner;
        bool nested;

        if (ag_cg_pid_path(h, 0, &cur) < 0)
                return false;
        if (systemd) {
                nested = ag_systemd_session_scope_path(cur) && scope_is_roots(h, cur);
                if (!nested && (ctl->flags & AG_OPT_DEBUG))
                        pam_syslog(pamh, LOG_DEBUG, "login of %s from inside %s: not a session scope of "
                                   "logind's (%s/user.slice/user-UID.slice/session-ID.scope owned by root), "
                                   "a session of its own", user, cur, h->mount);
        } else if (ag_session_of_path(cur, ctl->root, &owner, &sname, &slen) < 0 ||
                 !ag_session_name_matches_audit(sname, slen, ag_audit_session_self()))
                nested = false;
        else if (owner != uid) {
                if (ctl->flags & AG_OPT_DEBUG)
                        pam_syslog(pamh, LOG_DEBUG, "login of %s from inside %s%s of uid %lu: a session of its "
                                   "own (a process of another user is not left in a group its caller owns)",
                                   user, h->mount, cur, (unsigned long) owner);
                nested = false;
        } else
                nested = true;
        if (nested) {
                if (ctl->flags & AG_OPT_DEBUG)
                        pam_syslog(pamh, LOG_DEBUG, "login of %s from inside %s%s: stays in its caller's group, "
                                   "no session of its own", user, systemd ? "" : h->mount, cur);
                (void) pam_set_data(pamh, DATA_NESTED_NAME, (void *) 1, NULL);
        }
        free(cur);
        return nested;
}

/* The watcher: a process of its own, detached from the caller (setsid, a
 * child of init), that waits at most WATCH_TIMEOUT_MS for the processes of
 * a closed session to exit, then removes the session's groups as close
 * would have, and exits. It never outlives that bound: not a daemon. */
static _Noreturn void watcher_run(pam_handle_t *pamh, const struct module_ctl *ctl, const struct module_data *d,
                                  const char *user) {
        struct audit_conn a = AUDIT_CONN_INIT;
        struct removed_ctx c = {
                .pamh = pamh, .ctl = ctl, .audit = &a, .user = user, .uid = d->session->uid,
        };
        sigset_t all;
        int fd, r;

        /* Nothing of the caller's: its syslog socket (closed before the fds
         * it uses go), signal handlers, open files, working directory. */
        closelog();
        for (int sig = 1; sig < NSIG; sig++)
                (void) signal(sig, SIG_DFL);
        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
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

        r = ag_session_wait_empty(d->hierarchy, d->session, WATCH_TIMEOUT_MS);
        if (r == 0) {
                r = ag_session_close_from(d->hierarchy, d->session, getpid(), NULL, on_removed, &c);
                if (d->acct && d->acct->source == AG_ACCT_MIRROR)
                        (void) ag_acct_mirror_close(d->acct, getpid(), NULL, NULL);
                (void) ag_acct_sweep_user(d->hierarchy, d->session->root, d->session->uid);
        }
        audit_done(&a);
        if (r < 0 && (ctl->flags & AG_OPT_DEBUG))
                pam_syslog(pamh, LOG_DEBUG, "%s%s %s, left for autogroup gc", d->hierarchy->mount,
                           d->session->path, r == -ETIMEDOUT || r == -EBUSY ? "still holds processes" : strerror(-r));
        _exit(0);
}

/* Starts the watcher of a closed session that still holds processes: one
 * fork for a child that detaches (setsid) and forks the watcher, reaped
 * here at once, so the caller keeps no child and the logout does not wait. */
static void watcher_start(pam_handle_t *pamh, const struct module_ctl *ctl, const struct module_data *d,
                          const char *user) {
        pid_t pid;
        int status;

        pid = fork();
        if (pid < 0) {
                pam_syslog(pamh, LOG_WARNING, "cannot fork the watcher of %s%s: %m", d->hierarchy->mount,
                           d->session->path);
                return;
        }
        if (pid == 0) {
                (void) setsid();
                pid = fork();
                if (pid == 0)
                        watcher_run(pamh, ctl, d, user);
                _exit(pid < 0 ? 1 : 0);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (ctl->flags & AG_OPT_DEBUG)
                pam_syslog(pamh, LOG_DEBUG, "%s%s: removed once its processes exit (watched for at most %d s)",
                           d->hierarchy->mount, d->session->path, WATCH_TIMEOUT_MS / 1000);
}

int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        struct module_ctl ctl;
        const char *user = NULL, *what = NULL;
        const struct passwd *pw;
        AgConfig *config = NULL;
        AgHierarchy *h = NULL;
        AgSession *s = NULL;
        struct module_data *d;
        AgPolicy policy;
        int r;

        (void) flags;
        _pam_parse(pamh, argc, argv, &ctl);

        if (open_pending(pamh)) {
                (void) aside_count(pamh, +1);
                if (ctl.flags & AG_OPT_DEBUG)
                        pam_syslog(pamh, LOG_DEBUG, "pam_autogroup is in this stack more than once: "
                                   "an earlier line opened this session, this one steps aside");
                return PAM_IGNORE;
        }

        if (pam_get_item(pamh, PAM_USER, (const void **) &user) != PAM_SUCCESS || !user || !*user) {
                pam_syslog(pamh, LOG_ERR, "no user name, session not grouped");
                return fail_rc(&ctl);
        }
        pw = pam_modutil_getpwnam(pamh, user);
        open_user_remember(pamh, pw);
        if (!pw) {
                pam_syslog(pamh, LOG_NOTICE, "unknown user %s, session not grouped", user);
                return fail_rc(&ctl);
        }
        /* Rules, groups, logs and audit records use the account's own name,
         * whatever case or form the client passed (a case-insensitive
         * directory answers "ALICE" with alice's entry). */
        if (strcmp(pw->pw_name, user) != 0) {
                pam_syslog(pamh, LOG_INFO, "PAM user %s is account %s (uid %lu): rules matched for %s", user,
                           pw->pw_name, (unsigned long) pw->pw_uid, pw->pw_name);
                user = pw->pw_name;
        }

        r = ag_config_load(ctl.conf, 0, config_error, pamh, &config);
        if (r < 0) {
                pam_syslog(pamh, LOG_CRIT, "cannot load %s: %s", ctl.conf, strerror(-r));
                return fail_rc(&ctl);
        }
        struct group_ctx g = { .pamh = pamh, .user = user, .gid = pw->pw_gid };
        ag_policy_resolve(config, user, pw->pw_uid, in_group, &g, &policy);
        if (ctl.flags & AG_OPT_DEBUG)
                pam_syslog(pamh, LOG_DEBUG, "policy for %s: weight %u, max %ld%s, sessions %s, idle %s", user,
                           policy.weight, policy.max_pct, policy.max_pct < 0 ? " (none)" : "%",
                           policy.sessions ? "yes" : "no", policy.idle ? "yes" : "no");
        /* pools */
        AgPolicy pool_policy;
        ag_pool_policy_resolve(config, policy.pool, &pool_policy);
        if (policy.pool[0] && ag_pam_mode(ctl.mode) == AG_MODE_SYSTEMD)
                pam_syslog(pamh, LOG_INFO, "systemd mode: pool %s of %s not applied (systemd cannot put "
                           "user slices below a pool slice); the user's own policy applies", policy.pool, user);
        else if (policy.pool[0] && (ctl.flags & AG_OPT_DEBUG))
                pam_syslog(pamh, LOG_DEBUG, "pool %s: weight %u, max %ld%s, idle %s", policy.pool,
                           pool_policy.weight, pool_policy.max_pct, pool_policy.max_pct < 0 ? " (none)" : "%",
                           pool_policy.idle ? "yes" : "no");

        apply_latency(pamh, &ctl, user, policy.latency);

        /* systemd hosts: the policy goes to systemd, nothing into cgroupfs */
        /* (XDG_SESSION_ID: pam_systemd ran first and made this login's own scope) */
        if (ag_pam_mode(ctl.mode) == AG_MODE_SYSTEMD && !pam_getenv(pamh, "XDG_SESSION_ID") &&
            ag_hierarchy_find(NULL, &h) >= 0) {
                bool nested = nested_login(pamh, &ctl, h, true, pw->pw_uid, user);
                ag_hierarchy_free(h);
                h = NULL;
                if (nested) {
                        ag_config_free(config);
                        return PAM_IGNORE;
                }
        }
        r = ag_pam_systemd_open(pamh, ctl.mode, ctl.flags & AG_OPT_DEBUG, user, pw->pw_uid, &policy);
        if (r != AG_PAM_CGROUPFS) {
                if (r == PAM_SUCCESS) {
                        char slice[64];
                        snprintf(slice, sizeof slice, "user.slice/user-%lu.slice", (unsigned long) pw->pw_uid);
                        struct audit_conn a = AUDIT_CONN_INIT;
                        audit_record(pamh, &ctl, &a, "autogroup-systemd-slice", user, pw->pw_uid, slice);
                        audit_done(&a);
                }
                ag_config_free(config);
                return r == PAM_SUCCESS ? PAM_SUCCESS : fail_rc(&ctl);
        }

        if (find_hierarchy(pamh, &ctl, &h) < 0) {
                ag_config_free(config);
                return fail_rc(&ctl);
        }

        struct audit_conn a = AUDIT_CONN_INIT;
        struct removed_ctx rc = {
                .pamh = pamh, .ctl = &ctl, .audit = &a, .user = user, .uid = pw->pw_uid,
        };
        AgOpenParams p = {
                .removed = on_removed,
                .removed_userdata = &rc,
                .root = ctl.root,
                .uid = pw->pw_uid,
                .gid = pw->pw_gid,
                .policy = &policy,
                .pid = getpid(),
                .audit_session = ag_audit_session_self(),
                .pool = policy.pool,
                .pool_policy = &pool_policy,
                .config = config,
                .delegate = ctl.delegate > 0,
        };
        /* A container's cgroup namespace whose root holds the container's
         * processes: nothing below it can get cpu. Check before touching it
         * ("+cpu" there would make it a thread root). */
        if (h->version == 2 && ag_container_root_blocked(h) > 0) {
                pam_syslog(pamh, LOG_ERR,
                           "cgroup root %s holds processes and is not the system's root cgroup (a container?), "
                           "so cpu cannot be enabled below it: run 'autogroup container-init' as root once "
                           "at container start; session of %s not grouped",
                           h->mount, user);
                ag_hierarchy_free(h);
                ag_config_free(config);
                return fail_rc(&ctl);
        }
        if (nested_login(pamh, &ctl, h, false, pw->pw_uid, user)) {
                ag_config_free(config);
                ag_hierarchy_free(h);
                return PAM_IGNORE;
        }
        r = ag_session_open(h, &p, &s, &what);
        ag_config_free(config);
        audit_done(&a);
        if (r < 0) {
                pam_syslog(pamh, LOG_ERR, "cannot %s for %s below %s/%s: %s, session not grouped",
                           what ? what : "open the session", user, h->mount, ctl.root, strerror(-r));
                ag_hierarchy_free(h);
                return fail_rc(&ctl);
        }

        d = calloc(1, sizeof *d);
        if (!d) {
                pam_syslog(pamh, LOG_CRIT, "out of memory");
                ag_session_close(h, s, 0, NULL, NULL);
                ag_session_free(s);
                ag_hierarchy_free(h);
                return fail_rc(&ctl);
        }
        d->hierarchy = h;
        d->session = s;
        d->user = strdup(user);         /* NULL: close logs PAM_USER */
        if (pam_set_data(pamh, DATA_NAME, d, data_cleanup) != PAM_SUCCESS) {
                pam_syslog(pamh, LOG_ERR, "cannot remember the session");
                ag_session_close(h, s, 0, NULL, NULL);
                data_cleanup(pamh, d, 0);
                return fail_rc(&ctl);
        }

        acct_open(pamh, d);
        if (!s->origin)
                pam_syslog(pamh, LOG_NOTICE, "cannot tell which cgroup this process came from (its path is too "
                           "long or unreadable): at close it stays in %s%s", h->mount, s->path);
        if (s->policy_error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot %s for %s in %s%s: %s; the session is grouped, the group "
                           "keeps the limits it had", s->policy_what, user, h->mount, s->path,
                           strerror(-s->policy_error));
        if (s->delegate_error < 0)
                pam_syslog(pamh, LOG_WARNING, "cannot bound %s%s (cgroup.max.descendants, cgroup.max.depth): %s; "
                           "the session is grouped but not delegated to %s", h->mount, s->path,
                           strerror(-s->delegate_error), user);

        char env[600];
        snprintf(env, sizeof env, AG_SESSION_ENV "=%s", s->path);
        if (pam_putenv(pamh, env) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set %s", AG_SESSION_ENV);
        /* the item "interactive", for "autogroup run/set --latency" */
        snprintf(env, sizeof env, AG_INTERACTIVE_ENV "=%u", policy.interactive);
        if (pam_putenv(pamh, env) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set %s", AG_INTERACTIVE_ENV);

        /* cgroup v2 checks only write access to the common ancestor's
         * cgroup.procs, not who owns the process: in a delegated session the
         * user could move this (root) process out of login/, then freeze or
         * kill it. So no delegation unless the administrator asks. */
        if (h->version == 2 && s->name && ctl.delegate < 0)
                pam_syslog(pamh, LOG_NOTICE,
                           "session %s of %s not delegated: on cgroup v2 the user could move, freeze or kill the "
                           "process that opened it (delegate=yes delegates anyway, delegate=no drops this line)",
                           s->path, user);
        /* a kernel without cpu.idle (before 5.15) */
        if ((ctl.flags & AG_OPT_DEBUG) && policy.idle && ag_kernel_has_cpu_idle(h, s->path) == 0)
                pam_syslog(pamh, LOG_DEBUG, "the kernel has no cpu.idle (Linux 5.15 or later needed): idle yes "
                           "not applied, the rest of the policy is");
        audit_record(pamh, &ctl, &a, s->name ? "autogroup-session-create" : "autogroup-user-join", user,
                     pw->pw_uid, s->path);
        audit_done(&a);
        if (ctl.flags & AG_OPT_DEBUG)
                pam_syslog(pamh, LOG_DEBUG, "session of %s in %s%s (cgroup v%d)", user, h->mount, s->path,
                           h->version);
        return PAM_SUCCESS;
}

int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
        struct module_ctl ctl;
        const void *data = NULL;
        const struct module_data *d;
        const char *user = NULL;
        struct open_user ou;
        bool opened;
        int r;

        (void) flags;
        _pam_parse(pamh, argc, argv, &ctl);
        (void) pam_get_item(pamh, PAM_USER, (const void **) &user);
        /* An instance that stepped aside at open (the module twice in the
         * stack): the earlier line has closed the session already. */
        if (!open_pending(pamh) && aside_count(pamh, -1)) {
                if (ctl.flags & AG_OPT_DEBUG)
                        pam_syslog(pamh, LOG_DEBUG, "pam_autogroup is in this stack more than once: "
                                   "an earlier line closed this session, this one steps aside");
                return PAM_IGNORE;
        }
        opened = open_user_take(pamh, &ou);

        if (pam_get_data(pamh, DATA_NAME, &data) != PAM_SUCCESS || !data) {
                /* No session of ours in this handle: nothing to leave, but sweep
                 * what this user left behind earlier. The user is the one open
                 * found (or could not find: then nothing is done); only for a
                 * handle that open never saw is NSS asked here. */
                AgHierarchy *h = NULL;
                const void *nested = NULL;
                int mfd = -1;

                if (pam_get_data(pamh, DATA_NESTED_NAME, &nested) == PAM_SUCCESS && nested) {
                        /* open stepped aside (nested_login): nothing of ours to close */
                        (void) pam_set_data(pamh, DATA_NESTED_NAME, NULL, NULL);
                        return PAM_IGNORE;
                }
                if (ag_pam_systemd_close(pamh, ctl.mode, ctl.flags & AG_OPT_DEBUG) != AG_PAM_CGROUPFS)
                        return PAM_IGNORE;
                if (!opened) {
                        const struct passwd *pw = user ? pam_modutil_getpwnam(pamh, user) : NULL;
                        ou = (struct open_user) { .known = pw != NULL, .uid = pw ? pw->pw_uid : (uid_t) -1 };
                }

                if (ou.known && user && ag_hierarchy_find(NULL, &h) >= 0 && h->has_cpu &&
                    ag_hierarchy_open(h, &mfd) >= 0) {
                        struct audit_conn a = AUDIT_CONN_INIT;
                        struct removed_ctx c = {
                                .pamh = pamh, .ctl = &ctl, .audit = &a, .user = user, .uid = ou.uid,
                        };
                        (void) ag_user_sweep_at(mfd, ctl.root, ou.uid, on_removed, &c);
                        (void) ag_acct_sweep_user(h, ctl.root, ou.uid);
                        audit_done(&a);
                        close(mfd);
                }
                ag_hierarchy_free(h);
                return PAM_IGNORE;
        }
        d = data;

        struct audit_conn a = AUDIT_CONN_INIT;
        struct removed_ctx c = {
                .pamh = pamh, .ctl = &ctl, .audit = &a, .user = d->user ? d->user : user ? user : "?",
                .uid = d->session->uid,
        };
        /* What the session used, read while its groups still exist: from the
         * session's group, or from its cpuacct mirror as that is removed. One
         * read of /proc/self/cgroup tells where this process is in both. */
        AgCpuUsage usage = { -1, -1, -1 };
        bool have_usage;
        if (d->acct && d->acct->source == AG_ACCT_MIRROR) {
                char *cur = NULL, *cur_acct = NULL;
                (void) ag_cg_pid_paths(d->hierarchy, 0, &cur, &cur_acct);
                r = ag_session_close_from(d->hierarchy, d->session, 0, cur, on_removed, &c);
                (void) ag_acct_mirror_close(d->acct, 0, cur_acct, &usage);
                have_usage = usage.usec >= 0;
                free(cur);
                free(cur_acct);
        } else {
                have_usage = d->acct && ag_acct_usage(d->hierarchy, d->acct, d->session->path, &usage) >= 0;
                r = ag_session_close(d->hierarchy, d->session, 0, on_removed, &c);
        }
        acct_report(pamh, &ctl, &a, c.user, d, have_usage ? &usage : NULL, r == -EBUSY && d->session->name);
        audit_done(&a);
        if (r == -EBUSY && d->session->name) {
                pam_syslog(pamh, LOG_INFO, "%s%s still holds processes, left for a later sweep",
                           d->hierarchy->mount, d->session->path);
                /* A caller whose origin is unknown stayed in the session: a
                 * watcher forked from it would sit there too and keep it busy.
                 * The next sweep or gc removes such a session. */
                if (d->session->origin)
                        watcher_start(pamh, &ctl, d, c.user);
        } else if (r < 0 && r != -EBUSY) {
                pam_syslog(pamh, LOG_ERR, "cannot clean up %s%s: %s", d->hierarchy->mount, d->session->path,
                           strerror(-r));
                (void) pam_set_data(pamh, DATA_NAME, NULL, NULL);
                return fail_rc(&ctl);
        }
        (void) pam_set_data(pamh, DATA_NAME, NULL, NULL);
        return PAM_SUCCESS;
}
