/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * autogroup: the unprivileged companion of pam_autogroup.
 *
 *   autogroup [--root NAME] enter [--pid PID] [--verbose]
 *   autogroup [--root NAME] status [--user NAME] [--json]
 *   autogroup [--root NAME] metrics [--user NAME] [--output FILE]
 *   autogroup check [FILE]
 *   autogroup explain [--conf FILE] USER
 *   autogroup [--root NAME] gc
 *   (status, gc, explain and check take root= and conf= from the module's
 *   lines in /etc/pam.d when not given; --pam-dir DIR reads DIR instead)
 *   autogroup [--root NAME] run [--latency CLASS] [--weight W] [--idle] -- CMD [ARGS...]
 *   autogroup [--root NAME] set [--latency CLASS] [--weight W] [--idle yes|no] PID|LEAF
 *   (run and set in the systemd mode, AUTOGROUP_MODE=systemd outside a
 *   cgroupfs session: a scope of the user's manager per command, the class
 *   on the process; run-systemd.h)
 *   autogroup container-init [--leaf NAME]
 *
 * No setuid bit: "enter" works inside the subtree the module delegated to the
 * user, and the kernel's file permissions are the only authority. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "config.h"             /* autoconf: PACKAGE_VERSION */

#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "acct.h"
#include "admin-pam.h"
#ifdef HAVE_LIBAUDIT
#include <libaudit.h>
#endif

#include "cgroup.h"
#include "check.h"
#include "container.h"
#include "enter.h"
#include "run.h"
#include "run-systemd.h"
#include "hint.h"
#include "metrics.h"
#include "enter-systemd.h"
#include "systemd.h"
#include "status.h"
#include "session.h"
#include "util.h"

#ifndef AG_DEFAULT_CONF
#define AG_DEFAULT_CONF "/etc/security/autogroup.conf"
#endif

#define EXIT_USAGE 2

typedef struct Args {
        const char *root;
        bool root_given;               /* --root on the command line */
        const char *hierarchy;         /* a cgroup mount to use instead of the one found */
        const char *pam_dir;           /* where the module's lines are looked for (NULL: /etc/pam.d) */
        const char *verb;
        char **argv;                   /* the verb's own arguments */
        int argc;
} Args;

static void usage(FILE *f) {
        fputs("Usage: autogroup [--root NAME] VERB [ARGS]\n"
              "\n"
              "  enter [--pid PID] [--verbose]   move a session-leading shell (default: the parent)\n"
              "                                  into a group of its own inside its login's session\n"
              "  status [--user NAME] [--json]   users, sessions and leaves with weight, cap and CPU used\n"
              "  metrics [--user NAME] [--output FILE]\n"
              "                                  the same per user group and pool as Prometheus text\n"
              "                                  (for node_exporter's textfile collector); --output\n"
              "                                  replaces FILE atomically\n"
              "  check [FILE]                    validate the configuration and its drop-ins\n"
              "                                  (default: every conf= of the module's lines)\n"
              "  explain [--conf FILE] USER      which line set each item for USER (default: for\n"
              "                                  every conf= of the module's lines)\n"
              "  gc                              (root) remove empty groups\n"
              "  run [--latency CLASS] [--weight W] [--idle] [--verbose] -- CMD [ARGS...]\n"
              "                                  run CMD in a leaf of its own inside your session\n"
              "                                  (systemd mode: in a scope of your user manager)\n"
              "  set [--latency CLASS] [--weight W] [--idle yes|no] [--verbose] PID|LEAF\n"
              "                                  change a running process or a leaf of your session\n"
              "                                  (systemd mode: the latency class of a PID only)\n"
              "                                  CLASS: 0|batch 1|normal 2|interactive 3|audio\n"
              "                                  (at interactive 1, 2 from AUTOGROUP_INTERACTIVE, and\n"
              "                                  no --weight: the leaf's weight from the class)\n"
              "  container-init [--leaf NAME]    (root) in a cgroup v2 container: move the container's\n"
              "                                  processes into a leaf (default " AG_CONTAINER_LEAF ") and enable cpu\n"
              "\n"
              "Options:\n"
              "  --root NAME        the subtree below the cpu hierarchy root (default: for enter,\n"
              "                     status, run and set the module's root= from AUTOGROUP_SESSION\n"
              "                     when the caller's cgroup confirms it, else (enter, run, set)\n"
              "                     the root of the caller's own session when a module line in\n"
              "                     /etc/pam.d names it; for status without that\n"
              "                     hint, and for gc, every root= of the module's lines in /etc/pam.d;\n"
              "                     else " AG_ROOT_DEFAULT ")\n"
              "  --hierarchy PATH   use the cgroup filesystem mounted at PATH\n"
              "  --pam-dir DIR      read the module's lines from DIR instead of /etc/pam.d (for tests)\n"
              "  -h, --help         this text\n"
              "  --version          the version\n",
              f);
}

static int find_hierarchy(const Args *a, AgHierarchy **ret) {
        return a->hierarchy ? ag_hierarchy_from_mount(a->hierarchy, ret) : ag_hierarchy_find(NULL, ret);
}

/* The subtree a verb that acts in the caller's own session works on (enter,
 * status, run, set): --root when given; otherwise the module's root= from
 * AUTOGROUP_SESSION when the caller's real cgroup confirms it (lib/hint.c);
 * otherwise the root of the session the caller's own cgroup is in, when the
 * module's lines in the PAM configuration name it; otherwise the default. buf holds AG_ROOT_NAME_MAX + 1 bytes. */
static const char *session_root(const Args *a, const AgHierarchy *h, char *buf, size_t size) {
        if (a->root_given)
                return a->root;
        if (ag_root_from_hint(h, getenv(AG_SESSION_ENV), 0, getuid(), buf, size) >= 0)
                return buf;
        /* the hint lost (su -, sudo -i, env -u): the caller's own group, when
         * its <root> is the default or one a module line names */
        if (ag_root_from_cgroup(h, 0, getuid(), buf, size) >= 0 &&
            (strcmp(buf, a->root) == 0 || ag_pam_names_root(a->pam_dir, buf) > 0))
                return buf;
        return a->root;
}

static const char *hierarchy_error(const Args *a, int r) {
        if (a->hierarchy && r == -ENOTDIR)
                return "not a cgroup file system";
        if (!a->hierarchy && r == -ENOENT)
                return "no cgroup file system is mounted";
        return strerror(-r);
}

/* find_hierarchy() for a verb that cannot go on without one: on failure
 * "autogroup VERB: WHERE: WHY" on stderr. */
static int find_hierarchy_or_report(const Args *a, AgHierarchy **ret) {
        int r = find_hierarchy(a, ret);

        if (r < 0)
                fprintf(stderr, "autogroup %s: %s: %s\n", a->verb, a->hierarchy ? a->hierarchy : "cgroup hierarchy",
                        hierarchy_error(a, r));
        return r;
}

/* The same for a verb only root may use (gc, container-init), after that
 * check: "autogroup VERB: only root can WHAT" for anyone else. */
static int find_hierarchy_as_root(const Args *a, const char *what, AgHierarchy **ret) {
        if (geteuid() != 0) {
                fprintf(stderr, "autogroup %s: only root can %s\n", a->verb, what);
                return -EPERM;
        }
        return find_hierarchy_or_report(a, ret);
}

/* The verb's argument *i as "NAME VALUE" (*i then moves on to VALUE) or
 * "NAME=VALUE": VALUE; NULL when it is neither. */
static const char *option_value(const Args *a, int *i, const char *name) {
        const char *s = a->argv[*i];
        size_t n = strlen(name);

        if (strncmp(s, name, n) != 0)
                return NULL;
        if (s[n] == '=')
                return s + n + 1;
        if (s[n] == 0 && *i + 1 < a->argc)
                return a->argv[++*i];
        return NULL;
}

static int parse_pid(const char *s, pid_t *ret) {
        unsigned long v;

        if (ag_safe_atoul(s, INT32_MAX, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

/* ---- enter ---- */

static bool mode_env_is_systemd(void) {
        const char *m = getenv(AG_MODE_ENV);
        return m && strcmp(m, AG_MODE_ENV_SYSTEMD) == 0;
}

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

static int verb_enter(const Args *a) {
        AgHierarchy *h = NULL;
        AgEnterResult result;
        _cleanup_free_ char *leaf = NULL;
        const char *what = NULL;
        bool verbose = false;
        pid_t pid = getppid();
        int r;

        for (int i = 0; i < a->argc; i++) {
                const char *v;

                if ((v = option_value(a, &i, "--pid"))) {
                        if (parse_pid(v, &pid) < 0) {
                                fprintf(stderr, "autogroup enter: invalid pid '%s'\n", v);
                                return EXIT_USAGE;
                        }
                } else if (strcmp(a->argv[i], "-v") == 0 || strcmp(a->argv[i], "--verbose") == 0)
                        verbose = true;
                else {
                        fprintf(stderr, "autogroup enter: unexpected argument '%s'\n", a->argv[i]);
                        return EXIT_USAGE;
                }
        }

        r = find_hierarchy(a, &h);
        if (r < 0) {
                /* No cgroup filesystem: certainly not under pam_autogroup. */
                if (verbose)
                        printf("no cgroup hierarchy: nothing to do\n");
                return 0;
        }
        char root[AG_ROOT_NAME_MAX + 1];
        r = ag_enter(h, session_root(a, h, root, sizeof root), pid, getuid(), &result, &leaf, &what);
        if (r >= 0 && result == AG_ENTER_NOT_MANAGED && mode_env_is_systemd()) {
                /* a login of pam_autogroup's systemd mode: a scope of the user's manager */
                char why[256] = "";

                free(leaf);
                leaf = NULL;
                /* a backstop behind lib/systemd.c's deadline of each D-Bus attempt */
                (void) ag_enter_deadline_arm(AG_ENTER_SYSTEMD_DEADLINE_S,
                                             verbose ? enter_deadline_verbose : enter_deadline_silent);
                r = ag_enter_systemd(h, pid, getuid(), &result, &leaf, &what, why, sizeof why);
                alarm(0);
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
                if (leaf)
                        printf("%jd: %s: %s\n", (intmax_t) pid, ag_enter_result_to_string(result), leaf);
                else
                        printf("%jd: %s\n", (intmax_t) pid, ag_enter_result_to_string(result));
        }
        return 0;
}

/* ---- status ---- */

static bool want_unicode(void) {
        const char *cs;

        setlocale(LC_CTYPE, "");
        cs = nl_langinfo(CODESET);
        return cs && strcmp(cs, "UTF-8") == 0;
}

static void print_other_root(void *userdata, const char *root) {
        const AgHierarchy *h = userdata;

        printf("Groups of pam_autogroup exist below %s/%s: autogroup --root %s status\n", h->mount, root, root);
}

/* status without --root or a session's hint: every root= of the module's
 * lines (one JSON object a line for --json), each with where it came from;
 * when none of them holds groups, the other roots that do. */
static int status_pam_roots(const Args *a, const AgHierarchy *h, uid_t only, bool json) {
        AgTargets t;
        bool any = false, systemd_shown = false;
        int r;

        r = ag_targets_from_pam(a->pam_dir, false, a->root, NULL, &t);
        for (size_t i = 0; r >= 0 && i < t.n; i++) {
                AgStatus *s = NULL;

                if (!json)
                        ag_target_print_source(&t, &t.v[i], "root", a->pam_dir, stdout);
                r = ag_status_collect(h, t.v[i].value, only, &s);
                if (r < 0)
                        break;
                /* a line whose mode is systemd here: its groups are systemd's
                 * user slices and scopes (shown once, whatever the lines) */
                if (!s->tree && ag_target_is_systemd(&t.v[i], h)) {
                        ag_status_free(s);
                        s = NULL;
                        if (systemd_shown) {
                                if (!json)
                                        printf("mode=systemd here: its groups are the user slices shown above\n");
                                continue;
                        }
                        r = ag_status_systemd_collect(h, only, &s);
                        if (r < 0)
                                break;
                        systemd_shown = true;
                }
                any |= s->tree != NULL;
                if (json)
                        ag_status_print_json(s, stdout);
                else
                        ag_status_print(s, stdout, want_unicode());
                ag_status_free(s);
        }
        if (r >= 0 && !any && !json) {
                const char **known = calloc(t.n, sizeof *known);
                for (size_t i = 0; known && i < t.n; i++)
                        known[i] = t.v[i].value;
                if (known)
                        (void) ag_find_other_roots(h, known, t.n, print_other_root, (void *) h);
                free(known);
        }
        ag_targets_done(&t);
        if (r < 0) {
                fprintf(stderr, "autogroup status: cannot read the groups: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* status and metrics: whose groups, from --user (NULL: everyone's); anyone
 * but root sees only their own. */
static int only_user(const Args *a, const char *user, uid_t *ret) {
        uid_t only = (uid_t) -1;

        if (user) {
                struct passwd *pw = getpwnam(user);
                unsigned long v;

                if (pw)
                        only = pw->pw_uid;
                else if (ag_safe_atoul(user, (uid_t) -2, &v) >= 0)
                        only = (uid_t) v;
                else {
                        fprintf(stderr, "autogroup %s: unknown user '%s'\n", a->verb, user);
                        return -EINVAL;
                }
        }
        if (getuid() != 0) {
                if (only != (uid_t) -1 && only != getuid()) {
                        fprintf(stderr, "autogroup %s: only root can see another user's groups\n", a->verb);
                        return -EPERM;
                }
                only = getuid();
        }
        *ret = only;
        return 0;
}

static int verb_status(const Args *a) {
        AgHierarchy *h = NULL;
        AgStatus *s = NULL;
        const char *user = NULL;
        bool json = false;
        uid_t only = (uid_t) -1;
        int r;

        for (int i = 0; i < a->argc; i++) {
                const char *v;

                if ((v = option_value(a, &i, "--user")))
                        user = v;
                else if (strcmp(a->argv[i], "--json") == 0)
                        json = true;
                else {
                        fprintf(stderr, "autogroup status: unexpected argument '%s'\n", a->argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (only_user(a, user, &only) < 0)
                return EXIT_FAILURE;

        if (find_hierarchy_or_report(a, &h) < 0)
                return EXIT_FAILURE;
        char root[AG_ROOT_NAME_MAX + 1];
        if (!a->root_given && ag_root_from_hint(h, getenv(AG_SESSION_ENV), 0, getuid(), root, sizeof root) < 0) {
                r = status_pam_roots(a, h, only, json);
                ag_hierarchy_free(h);
                return r;
        }
        r = ag_status_collect(h, session_root(a, h, root, sizeof root), only, &s);
        /* no cgroupfs tree on a host where the systemd mode applies: its units */
        if (r >= 0 && !s->tree && ag_mode_resolve(AG_MODE_AUTO, ag_systemd_booted(NULL), h) == AG_MODE_SYSTEMD) {
                ag_status_free(s);
                s = NULL;
                r = ag_status_systemd_collect(h, only, &s);
        }
        ag_hierarchy_free(h);
        if (r < 0) {
                fprintf(stderr, "autogroup status: cannot read the groups: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (json)
                ag_status_print_json(s, stdout);
        else
                ag_status_print(s, stdout, want_unicode());
        ag_status_free(s);
        return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* ---- metrics ---- */

/* What metrics reports: --root's groups, or every root= of the module's
 * lines; where the systemd mode applies, the user slices (once). */
static int metrics_collect(const Args *a, const AgHierarchy *h, uid_t only, AgMetrics *m) {
        AgTargets t = {};
        bool systemd_done = false;
        int r = 0;

        if (!a->root_given && (r = ag_targets_from_pam(a->pam_dir, false, a->root, NULL, &t)) < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < (a->root_given ? 1 : t.n); i++) {
                const char *root = a->root_given ? a->root : t.v[i].value;
                bool systemd = a->root_given ? ag_mode_resolve(AG_MODE_AUTO, ag_systemd_booted(NULL), h) ==
                                               AG_MODE_SYSTEMD : ag_target_is_systemd(&t.v[i], h);
                _cleanup_close_ int mfd = -1, rfd = -1;

                /* no cgroupfs tree where the systemd mode applies: its user slices */
                if (systemd && ag_hierarchy_open(h, &mfd) >= 0 && ag_cg_open(mfd, root, &rfd) == -ENOENT) {
                        AgStatus *s = NULL;

                        if (systemd_done)
                                continue;
                        r = ag_status_systemd_collect(h, only, &s);
                        if (r >= 0)
                                r = ag_metrics_add_status(m, s);
                        ag_status_free(s);
                        systemd_done = true;
                } else
                        r = ag_metrics_collect(m, h, root, only);
        }
        if (!a->root_given)
                ag_targets_done(&t);
        return r;
}

static int verb_metrics(const Args *a) {
        AgHierarchy *h = NULL;
        AgMetrics m = {};
        const char *user = NULL, *output = NULL;
        uid_t only;
        int r;

        for (int i = 0; i < a->argc; i++) {
                const char *o;

                if ((o = option_value(a, &i, "--user")))
                        user = o;
                else if ((o = option_value(a, &i, "--output")))
                        output = o;
                else {
                        fprintf(stderr, "autogroup metrics: unexpected argument '%s'\n", a->argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (only_user(a, user, &only) < 0)
                return EXIT_FAILURE;
        if (find_hierarchy_or_report(a, &h) < 0)
                return EXIT_FAILURE;
        r = metrics_collect(a, h, only, &m);
        ag_hierarchy_free(h);
        if (r < 0)
                fprintf(stderr, "autogroup metrics: cannot read the groups: %s\n", strerror(-r));
        else if (output) {
                r = ag_metrics_write(&m, output);
                if (r < 0)
                        fprintf(stderr, "autogroup metrics: cannot write %s: %s\n", output, strerror(-r));
        } else {
                ag_metrics_print(&m, stdout);
                r = fflush(stdout) == 0 ? 0 : -EIO;
        }
        ag_metrics_done(&m);
        return r < 0 ? EXIT_FAILURE : 0;
}

/* ---- check ---- */

/* What check and explain say of a main config file that does not exist. */
#define CONFIG_MISSING "does not exist, the built-in defaults apply"

static bool config_missing(const char *path) {
        return access(path, F_OK) < 0 && errno == ENOENT;
}

static int check_one(const Args *a, const char *path) {
        AgConfig *config = NULL;
        AgHierarchy *h = NULL;
        int r;

        if (config_missing(path))
                printf("%s: %s\n", path, CONFIG_MISSING);
        r = ag_check_config(path, stdout, &config);
        if (r < 0) {
                fprintf(stderr, "autogroup check: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (r == 0)
                printf("%s: OK, %zu rule%s\n", path, config->n_rules, config->n_rules == 1 ? "" : "s");
        else
                printf("%s: %d error%s\n", path, r, r == 1 ? "" : "s");
        /* systemd mode: what systemd has now, and where its own settings beat a rule */
        if (find_hierarchy(a, &h) >= 0 && h && ag_mode_resolve(AG_MODE_AUTO, ag_systemd_booted(NULL), h) == AG_MODE_SYSTEMD)
                ag_check_systemd(config, h, stdout);
        ag_hierarchy_free(h);
        ag_config_free(config);
        return r == 0 ? 0 : EXIT_FAILURE;
}

/* check without FILE: the module's lines (their options too) and every
 * conf= they name, or the default. */
static int verb_check(const Args *a) {
        AgTargets t;
        int ret = 0;

        if (a->argc > 1) {
                fprintf(stderr, "autogroup check: at most one FILE\n");
                return EXIT_USAGE;
        }
        if (a->argc == 1)
                return check_one(a, a->argv[0]);
        if (ag_targets_from_pam(a->pam_dir, true, AG_DEFAULT_CONF, stdout, &t) < 0) {
                fprintf(stderr, "autogroup check: out of memory\n");
                return EXIT_FAILURE;
        }
        if (ag_check_print_pam_lines(t.pam, AG_DEFAULT_CONF, stdout) < 0) {
                ag_targets_done(&t);
                fprintf(stderr, "autogroup check: out of memory\n");
                return EXIT_FAILURE;
        }
        if (t.problems > 0) {
                printf("%s: %u invalid or unknown option%s on the module's lines\n",
                       a->pam_dir ? a->pam_dir : AG_PAM_DIR_DEFAULT, t.problems, t.problems == 1 ? "" : "s");
                ret = EXIT_FAILURE;
        }
        for (size_t i = 0; i < t.n; i++) {
                ag_target_print_source(&t, &t.v[i], "conf", a->pam_dir, stdout);
                if (check_one(a, t.v[i].value) != 0)
                        ret = EXIT_FAILURE;
        }
        ag_targets_done(&t);
        return ret;
}

/* ---- explain ---- */

static void warn_error(void *userdata, const char *file, unsigned line, const char *message) {
        (void) userdata;
        ag_config_error_print(stderr, "warning: ", file, line, message, " (line skipped)");
}

static int explain_one(const Args *a, const char *path, const char *user, const AgNssUser *u) {
        AgConfig *config = NULL;
        AgHierarchy *h = NULL;
        int r;

        r = ag_config_load(path, 0, warn_error, NULL, &config);
        if (r < 0) {
                fprintf(stderr, "autogroup explain: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (config_missing(path) && config->n_rules == 0)
                printf("config %s: %s\n", path, CONFIG_MISSING);
        else if (config_missing(path))
                printf("config %s: %s, with %zu rule%s from its drop-ins\n", path, CONFIG_MISSING,
                       config->n_rules, config->n_rules == 1 ? "" : "s");
        else
                printf("config %s (%zu rule%s)\n", path, config->n_rules, config->n_rules == 1 ? "" : "s");
        /* as the module does: rules match the account's own name */
        if (strcmp(u->name, user) != 0)
                printf("%s is account %s: rules matched for %s\n", user, u->name, u->name);
        if (find_hierarchy(a, &h) < 0)
                h = NULL;
        ag_explain_print(config, u, h, stdout);
        ag_hierarchy_free(h);
        ag_config_free(config);
        return 0;
}

static int verb_explain(const Args *a) {
        const char *path = NULL, *user = NULL;
        AgNssUser *u = NULL;
        AgTargets t;
        int r, ret = 0;

        for (int i = 0; i < a->argc; i++) {
                const char *v;

                if ((v = option_value(a, &i, "--conf")))
                        path = v;
                else if (!user && a->argv[i][0] != '-')
                        user = a->argv[i];
                else {
                        fprintf(stderr, "autogroup explain: unexpected argument '%s'\n", a->argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (!user) {
                fprintf(stderr, "autogroup explain: which USER?\n");
                return EXIT_USAGE;
        }
        r = ag_nss_user_get(user, &u);
        if (r < 0) {
                fprintf(stderr, "autogroup explain: unknown user '%s'%s%s\n", user, r == -ENOENT ? "" : ": ",
                        r == -ENOENT ? "" : strerror(-r));
                return EXIT_FAILURE;
        }
        if (path)
                ret = explain_one(a, path, user, u);
        else if (ag_targets_from_pam(a->pam_dir, true, AG_DEFAULT_CONF, NULL, &t) < 0) {
                fprintf(stderr, "autogroup explain: out of memory\n");
                ret = EXIT_FAILURE;
        } else {
                /* every conf= of the module's lines, each after where it came from */
                for (size_t i = 0; i < t.n; i++) {
                        if (i > 0)
                                putchar('\n');
                        ag_target_print_source(&t, &t.v[i], "conf", a->pam_dir, stdout);
                        if (explain_one(a, t.v[i].value, user, u) != 0)
                                ret = EXIT_FAILURE;
                }
                ag_targets_done(&t);
        }
        ag_nss_user_free(u);
        return ret == 0 && fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* ---- gc ---- */

/* Every group gc removes: a line on stdout, the module's debug line
 * ("removed PATH") through syslog, and the module's audit record
 * (op=autogroup-remove) with the uid the path names. A session group also
 * gets the module's accounting line ("session PATH removed: ...") and its
 * record (op=autogroup-session-end state=removed), with the CPU time it
 * used up to its removal (doc/design.md, "CPU accounting"). */
struct gc_log {
        int audit_fd;                  /* -1: none (no audit in the kernel, or not built) */
};

/* The uid the path names ("/<root>/[pool-<name>/]user-<uid>[/...]": the
 * first user-<uid> component), (uid_t) -1 for none, and its user's name. */
static uid_t path_owner(const char *path, const char **ret_name) {
        _cleanup_free_ char *copy = strdup(path);
        const struct passwd *pw;
        uid_t uid = (uid_t) -1;
        char *save = NULL;

        *ret_name = "?";
        if (!copy)
                return uid;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
                if (ag_user_group_parse(c, &uid) >= 0)
                        break;
        pw = uid != (uid_t) -1 ? getpwuid(uid) : NULL;
        if (pw)
                *ret_name = pw->pw_name;
        return uid;
}

static void gc_audit(struct gc_log *g, const char *op, uid_t uid, const char *user, const char *path,
                     const char *extra) {
#ifdef HAVE_LIBAUDIT
        char msg[768], *acct;

        if (g->audit_fd < 0)
                return;
        acct = audit_encode_nv_string("acct", user, 0);
        if (uid != (uid_t) -1)
                snprintf(msg, sizeof msg, "op=%s %s uid=%lu cgroup=%s%s%s", op, acct ? acct : "acct=?",
                         (unsigned long) uid, path, extra ? " " : "", extra ? extra : "");
        else
                snprintf(msg, sizeof msg, "op=%s %s cgroup=%s%s%s", op, acct ? acct : "acct=?", path,
                         extra ? " " : "", extra ? extra : "");
        free(acct);
        if (audit_log_user_message(g->audit_fd, AUDIT_TRUSTED_APP, msg, NULL, NULL, NULL, 1) <= 0 &&
            errno != EPERM && errno != ECONNREFUSED)
                syslog(LOG_ERR, "cannot write audit record: %m");
#else
        (void) g;
        (void) op;
        (void) uid;
        (void) user;
        (void) path;
        (void) extra;
#endif
}

static void print_removed(void *userdata, const char *path, const AgCpuUsage *usage) {
        struct gc_log *g = userdata;
        char fields[200], extra[240];
        const char *user;
        uid_t uid = path_owner(path, &user);

        printf("removed %s\n", path);
        syslog(LOG_DEBUG, "removed %s", path);
        gc_audit(g, "autogroup-remove", uid, user, path, NULL);
        /* its open time is the login's, unknown here: wall_usec=? */
        if (usage && ag_acct_format(usage, -1, fields, sizeof fields) >= 0) {
                AgAcctRecord ar = { .cgroup = path, .state = "removed", .user = strcmp(user, "?") ? user : NULL,
                                    .uid = uid, .by = "gc", .usage = usage, .wall_usec = -1 };
                char record[AG_ACCT_RECORD_MAX];

                if (ag_acct_record_format(&ar, record, sizeof record) >= 0)
                        syslog(LOG_INFO, "%s", record);
                snprintf(extra, sizeof extra, "state=removed %s", fields);
                gc_audit(g, "autogroup-session-end", uid, user, path, extra);
        }
}

static void print_slice_forgotten(void *userdata, const char *slice) {
        (void) userdata;
        printf("removed the runtime properties pam_autogroup set on %s (not running)\n", slice);
        syslog(LOG_DEBUG, "removed the runtime properties of %s", slice);
}

static int gc_root(const AgHierarchy *h, const char *root, struct gc_log *g, int *removed) {
        const AgEvents events = { .removed = print_removed, .userdata = g };
        int r = ag_gc(h, root, &events);

        if (r > 0) {
                *removed += r;
                syslog(LOG_INFO, "gc: %d empty group%s removed below %s", r, r == 1 ? "" : "s", root);
        } else if (r < 0)
                syslog(LOG_ERR, "gc below %s: %s", root, strerror(-r));
        return r;
}

static int verb_gc(const Args *a) {
        AgHierarchy *h = NULL;
        int r;

        if (a->argc > 0) {
                fprintf(stderr, "autogroup gc: unexpected argument '%s'\n", a->argv[0]);
                return EXIT_USAGE;
        }
        if (find_hierarchy_as_root(a, "remove groups", &h) < 0)
                return EXIT_FAILURE;
        struct gc_log g = { .audit_fd = -1 };
        openlog("autogroup", LOG_PID, LOG_AUTHPRIV);
#ifdef HAVE_LIBAUDIT
        g.audit_fd = audit_open();
        if (g.audit_fd < 0 && errno != EINVAL && errno != EPROTONOSUPPORT && errno != EAFNOSUPPORT)
                syslog(LOG_ERR, "audit_open: %m");
#endif
        /* --root, or every root= of the module's lines */
        AgTargets t;
        int removed = 0;
        if (a->root_given)
                r = gc_root(h, a->root, &g, &removed);
        else if ((r = ag_targets_from_pam(a->pam_dir, false, a->root, NULL, &t)) >= 0) {
                for (size_t i = 0; r >= 0 && i < t.n; i++) {
                        ag_target_print_source(&t, &t.v[i], "root", a->pam_dir, stdout);
                        r = gc_root(h, t.v[i].value, &g, &removed);
                }
                ag_targets_done(&t);
        }
        /* systemd mode: the module's runtime drop-ins of user slices that are not running */
        if (r >= 0 && h->version == 2 && ag_systemd_booted(NULL)) {
                static const AgSystemdPaths paths = {
                        .control_dir = AG_SYSTEMD_CONTROL_DIR,
                        .record_dir = AG_SYSTEMD_RECORD_DIR,
                };
                int n = ag_systemd_gc(h->mount, &paths, print_slice_forgotten, NULL);

                if (n > 0)
                        syslog(LOG_INFO, "gc: the runtime properties of %d user slice%s not running removed", n,
                               n == 1 ? "" : "s");
                else if (n < 0)
                        syslog(LOG_ERR, "gc of %s: %s", AG_SYSTEMD_RECORD_DIR, strerror(-n));
        }
        ag_hierarchy_free(h);
#ifdef HAVE_LIBAUDIT
        if (g.audit_fd >= 0)
                audit_close(g.audit_fd);
#endif
        if (r < 0) {
                closelog();
                fprintf(stderr, "autogroup gc: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        closelog();
        r = removed;
        printf("%d group%s removed\n", r, r == 1 ? "" : "s");
        return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* ---- run, set (latency classes) ---- */

/* Parses the options run and set share; returns the index of the first
 * argument that is not one, or -1 after a message. */
static int parse_run_options(const char *verb, int argc, char **argv, AgRunOptions *o) {
        int i;

        *o = (AgRunOptions) { .latency = AG_LATENCY_DEFAULT, .idle = -1,
                              .interactive = ag_interactive_from_string(getenv(AG_INTERACTIVE_ENV)) };
        for (i = 0; i < argc; i++) {
                const char *s = argv[i], *v = NULL;
                unsigned long w;

                if (strcmp(s, "--") == 0)
                        return i + 1;
                if (s[0] != '-')
                        return i;
                if (strcmp(s, "--latency") == 0 || strcmp(s, "--weight") == 0 ||
                    (strcmp(s, "--idle") == 0 && strcmp(verb, "set") == 0)) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "autogroup %s: %s needs a value\n", verb, s);
                                return -1;
                        }
                        v = argv[++i];
                } else if (strncmp(s, "--latency=", 10) == 0 || strncmp(s, "--weight=", 9) == 0 ||
                           strncmp(s, "--idle=", 7) == 0)
                        v = strchr(s, '=') + 1;

                if (strncmp(s, "--latency", 9) == 0 && v) {
                        if (ag_latency_from_string(v, &o->latency) < 0) {
                                fprintf(stderr, "autogroup %s: invalid latency class '%s' "
                                                "(0|batch, 1|normal, 2|interactive, 3|audio)\n", verb, v);
                                return -1;
                        }
                        o->set_latency = true;
                } else if (strncmp(s, "--weight", 8) == 0 && v) {
                        if (ag_safe_atoul(v, AG_WEIGHT_MAX, &w) < 0 || w < AG_WEIGHT_MIN) {
                                fprintf(stderr, "autogroup %s: invalid weight '%s' (1..10000)\n", verb, v);
                                return -1;
                        }
                        o->weight = (unsigned) w;
                } else if (strcmp(s, "--idle") == 0 && !v)
                        o->idle = 1;
                else if (strncmp(s, "--idle", 6) == 0 && v) {
                        if (strcmp(v, "yes") == 0)
                                o->idle = 1;
                        else if (strcmp(v, "no") == 0)
                                o->idle = 0;
                        else {
                                fprintf(stderr, "autogroup %s: invalid --idle '%s' (yes or no)\n", verb, v);
                                return -1;
                        }
                } else if (strcmp(s, "-v") == 0 || strcmp(s, "--verbose") == 0)
                        o->verbose = true;
                else {
                        fprintf(stderr, "autogroup %s: unknown option '%s'\n", verb, s);
                        return -1;
                }
        }
        return i;
}

/* run and set: the options they share, what each takes after them (run a
 * command line, set one PID or LEAF), then the work in the caller's session. */
static int verb_run_set(const Args *a) {
        bool run = strcmp(a->verb, "run") == 0;
        AgHierarchy *h = NULL;
        AgRunOptions o;
        int i, r;

        i = parse_run_options(a->verb, a->argc, a->argv, &o);
        if (i < 0)
                return EXIT_USAGE;
        if (run && i >= a->argc) {
                fprintf(stderr, "autogroup run: which command? (autogroup run [OPTIONS] -- CMD [ARGS...])\n");
                return EXIT_USAGE;
        }
        if (!run && i != a->argc - 1) {
                fprintf(stderr, "autogroup set: one PID or LEAF expected\n");
                return EXIT_USAGE;
        }
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
                (void) parse_pid(a->argv[i], &target);
        if (mode_env_is_systemd() && !ag_run_in_session(h, sroot, target))
                /* a login of pam_autogroup's systemd mode: a scope of the user's manager */
                r = run ? ag_run_systemd(h, NULL, &o, a->argv + i) : ag_set_systemd(&o, a->argv[i]);
        else
                r = run ? ag_run(h, sroot, &o, a->argv + i) : ag_set(h, sroot, &o, a->argv[i]);
        ag_hierarchy_free(h);
        return r;
}

/* ---- container-init ---- */

static int verb_container_init(const Args *a) {
        const char *leaf = AG_CONTAINER_LEAF;
        AgHierarchy *h = NULL;
        unsigned moved = 0;
        bool changed = false;
        int r;

        for (int i = 0; i < a->argc; i++) {
                const char *v;

                if ((v = option_value(a, &i, "--leaf")))
                        leaf = v;
                else {
                        fprintf(stderr, "autogroup container-init: unexpected argument '%s'\n", a->argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (!ag_root_name_valid(leaf)) {
                fprintf(stderr, "autogroup container-init: invalid leaf name '%s'\n", leaf);
                return EXIT_USAGE;
        }
        if (find_hierarchy_as_root(a, "move the container's processes", &h) < 0)
                return EXIT_FAILURE;
        if (h->version == 1) {
                printf("cgroup v1 at %s: nothing to do\n", h->mount);
                ag_hierarchy_free(h);
                return 0;
        }
        r = ag_container_init(h, leaf, &moved, &changed);
        if (r == -EOPNOTSUPP)
                fprintf(stderr, "autogroup container-init: %s does not offer the cpu controller "
                        "(the container's host or runtime must delegate it)\n", h->mount);
        else if (r < 0)
                fprintf(stderr, "autogroup container-init: cannot enable cpu below %s: %s\n", h->mount, strerror(-r));
        else if (!changed)
                printf("cpu already enabled below %s: nothing to do\n", h->mount);
        else
                printf("moved %u process%s into %s/%s; cpu enabled below %s\n", moved, moved == 1 ? "" : "es",
                       h->mount, leaf, h->mount);
        ag_hierarchy_free(h);
        if (r < 0)
                return EXIT_FAILURE;
        return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* ---- main ---- */

/* Pulls the global options out of argv, wherever they are, and finds the verb. */
static int parse_args(int argc, char **argv, Args *a) {
        int n = 0;

        *a = (Args) { .root = AG_ROOT_DEFAULT };
        a->argv = calloc((size_t) argc + 1, sizeof *a->argv);
        if (!a->argv)
                return -ENOMEM;
        for (int i = 1; i < argc; i++) {
                const char *s = argv[i];

                if (a->verb && strcmp(s, "--") == 0) {
                        /* the rest is the verb's (run: the command line) */
                        for (; i < argc; i++)
                                a->argv[n++] = argv[i];
                        break;
                }
                if (strcmp(s, "--root") == 0 || strcmp(s, "--hierarchy") == 0) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "autogroup: %s needs a value\n", s);
                                return -EINVAL;
                        }
                        if (s[2] == 'r') {
                                a->root = argv[++i];
                                a->root_given = true;
                        } else
                                a->hierarchy = argv[++i];
                } else if (strncmp(s, "--root=", 7) == 0) {
                        a->root = s + 7;
                        a->root_given = true;
                } else if (strncmp(s, "--hierarchy=", 12) == 0)
                        a->hierarchy = s + 12;
                else if (strcmp(s, "--pam-dir") == 0) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "autogroup: %s needs a value\n", s);
                                return -EINVAL;
                        }
                        a->pam_dir = argv[++i];
                } else if (strncmp(s, "--pam-dir=", 10) == 0)
                        a->pam_dir = s + 10;
                else if (!a->verb && (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0))
                        a->verb = "help";
                else if (!a->verb && strcmp(s, "--version") == 0)
                        a->verb = "version";
                else if (!a->verb)
                        a->verb = s;
                else
                        a->argv[n++] = argv[i];
        }
        a->argc = n;
        if (!ag_root_name_valid(a->root)) {
                fprintf(stderr, "autogroup: invalid root name '%s'\n", a->root);
                return -EINVAL;
        }
        return 0;
}

int main(int argc, char **argv) {
        Args a;
        int r;

        r = parse_args(argc, argv, &a);
        if (r < 0) {
                free(a.argv);
                if (r == -ENOMEM)
                        fprintf(stderr, "autogroup: out of memory\n");
                return EXIT_USAGE;
        }
        if (!a.verb) {
                usage(stderr);
                r = EXIT_USAGE;
        } else if (strcmp(a.verb, "enter") == 0)
                r = verb_enter(&a);
        else if (strcmp(a.verb, "status") == 0)
                r = verb_status(&a);
        else if (strcmp(a.verb, "metrics") == 0)
                r = verb_metrics(&a);
        else if (strcmp(a.verb, "check") == 0)
                r = verb_check(&a);
        else if (strcmp(a.verb, "explain") == 0)
                r = verb_explain(&a);
        else if (strcmp(a.verb, "gc") == 0)
                r = verb_gc(&a);
        else if (strcmp(a.verb, "run") == 0 || strcmp(a.verb, "set") == 0)
                r = verb_run_set(&a);
        else if (strcmp(a.verb, "container-init") == 0)
                r = verb_container_init(&a);
        else if (strcmp(a.verb, "help") == 0) {
                usage(stdout);
                r = 0;
        } else if (strcmp(a.verb, "version") == 0) {
                printf("autogroup (pam_autogroup) " PACKAGE_VERSION "\n");
                r = 0;
        } else {
                fprintf(stderr, "autogroup: unknown verb '%s'\n", a.verb);
                usage(stderr);
                r = EXIT_USAGE;
        }
        free(a.argv);
        return r;
}
