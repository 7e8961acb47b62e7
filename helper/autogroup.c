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
#include <getopt.h>
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
        bool help, version;
        const char *verb;
        char **argv;                   /* the verb's operands, after its options */
        int argc;

        /* the verbs' options: each verb reads those of its table entry */
        pid_t pid;                     /* enter --pid (default: the parent) */
        bool verbose;                  /* enter, run, set */
        bool json;                     /* status */
        const char *user;              /* status, metrics --user */
        const char *output;            /* metrics --output */
        const char *conf;              /* explain --conf */
        const char *leaf;              /* container-init --leaf */
        AgRunOptions run;              /* run, set: --latency, --weight, --idle, --verbose */
} Args;

/* getopt_long keys beyond the short options 'h' and 'v' */
enum {
        OPT_ROOT = 0x100,
        OPT_HIERARCHY,
        OPT_PAM_DIR,
        OPT_VERSION,
        OPT_PID,
        OPT_USER,
        OPT_JSON,
        OPT_OUTPUT,
        OPT_CONF,
        OPT_LEAF,
        OPT_LATENCY,
        OPT_WEIGHT,
        OPT_IDLE,
};

typedef struct VerbOption {
        const char *name;              /* the long name, without "--" */
        int has_arg;                   /* no_argument, required_argument, optional_argument */
        int key;                       /* a short option when below 0x100 */
        const char *arg;               /* the value's name in help texts */
        const char *help;              /* lines of help (\n between them) */
} VerbOption;

#define VERB_ANY (-1)

typedef struct Verb {
        const char *name;
        int (*run)(const Args *a);
        int min_args, max_args;        /* operands after the options; VERB_ANY: no limit */
        const char *args;              /* the operands in help texts, NULL for none */
        const char *help;              /* lines of help (\n between them) */
        const VerbOption *options;     /* the verb's own, ended by {}; the global ones come too */
        bool options_first;            /* options end at the first operand (run: CMD's own follow) */
} Verb;

static const VerbOption global_options[] = {
        { "root", required_argument, OPT_ROOT, "NAME",
          "the subtree below the cpu hierarchy root (default: for enter,\n"
          "status, run and set the module's root= from AUTOGROUP_SESSION\n"
          "when the caller's cgroup confirms it, else (enter, run, set)\n"
          "the root of the caller's own session when a module line in\n"
          "/etc/pam.d names it; for status without that\n"
          "hint, and for gc, every root= of the module's lines in /etc/pam.d;\n"
          "else " AG_ROOT_DEFAULT ")" },
        { "hierarchy", required_argument, OPT_HIERARCHY, "PATH", "use the cgroup filesystem mounted at PATH" },
        { "pam-dir", required_argument, OPT_PAM_DIR, "DIR",
          "read the module's lines from DIR instead of /etc/pam.d (for tests)" },
        { "help", no_argument, 'h', NULL, "this text (after a verb: the verb's)" },
        { "version", no_argument, OPT_VERSION, NULL, "the version" },
        {}
};

static const VerbOption enter_options[] = {
        { "pid", required_argument, OPT_PID, "PID", "the process to move (default: the parent, the calling shell)" },
        { "verbose", no_argument, 'v', NULL, "say what was done" },
        {}
};

static const VerbOption status_options[] = {
        { "user", required_argument, OPT_USER, "NAME", "only NAME's groups (anyone but root sees only their own)" },
        { "json", no_argument, OPT_JSON, NULL, "one JSON object (a line for each root=)" },
        {}
};

static const VerbOption metrics_options[] = {
        { "user", required_argument, OPT_USER, "NAME", "only NAME's groups (anyone but root sees only their own)" },
        { "output", required_argument, OPT_OUTPUT, "FILE", "replace FILE atomically instead of printing" },
        {}
};

static const VerbOption explain_options[] = {
        { "conf", required_argument, OPT_CONF, "FILE", "the configuration (default: every conf= of the module's lines)" },
        {}
};

#define LATENCY_HELP                                                            \
        "CLASS: 0|batch 1|normal 2|interactive 3|audio\n"                       \
        "(at interactive 1, 2 from AUTOGROUP_INTERACTIVE, and\n"                \
        "no --weight: the leaf's weight from the class)"

static const VerbOption run_options[] = {
        { "latency", required_argument, OPT_LATENCY, "CLASS", LATENCY_HELP },
        { "weight", required_argument, OPT_WEIGHT, "W", "the leaf's weight (1..10000)" },
        { "idle", optional_argument, OPT_IDLE, "yes|no", "the leaf's cpu.idle (no value: yes)" },
        { "verbose", no_argument, 'v', NULL, "say where CMD runs" },
        {}
};

static const VerbOption set_options[] = {
        { "latency", required_argument, OPT_LATENCY, "CLASS", LATENCY_HELP },
        { "weight", required_argument, OPT_WEIGHT, "W", "the leaf's weight (1..10000)" },
        { "idle", required_argument, OPT_IDLE, "yes|no", "the leaf's cpu.idle" },
        { "verbose", no_argument, 'v', NULL, "say what was changed" },
        {}
};

static const VerbOption container_init_options[] = {
        { "leaf", required_argument, OPT_LEAF, "NAME", "the leaf for the container's processes (default "
          AG_CONTAINER_LEAF ")" },
        {}
};

static int verb_enter(const Args *a);
static int verb_status(const Args *a);
static int verb_metrics(const Args *a);
static int verb_check(const Args *a);
static int verb_explain(const Args *a);
static int verb_gc(const Args *a);
static int verb_run_set(const Args *a);
static int verb_container_init(const Args *a);

static const Verb verbs[] = {
        { .name = "enter", .run = verb_enter, .options = enter_options,
          .help = "move a session-leading shell (default: the parent)\n"
                  "into a group of its own inside its login's session" },
        { .name = "status", .run = verb_status, .options = status_options,
          .help = "users, sessions and leaves with weight, cap and CPU used" },
        { .name = "metrics", .run = verb_metrics, .options = metrics_options,
          .help = "the same per user group and pool as Prometheus text\n"
                  "(for node_exporter's textfile collector)" },
        { .name = "check", .run = verb_check, .max_args = 1, .args = "[FILE]",
          .help = "validate the configuration and its drop-ins\n"
                  "(default: every conf= of the module's lines)" },
        { .name = "explain", .run = verb_explain, .min_args = 1, .max_args = 1, .args = "USER",
          .options = explain_options,
          .help = "which line set each item for USER (default: for\n"
                  "every conf= of the module's lines)" },
        { .name = "gc", .run = verb_gc, .help = "(root) remove empty groups" },
        { .name = "run", .run = verb_run_set, .min_args = 1, .max_args = VERB_ANY, .args = "-- CMD [ARGS...]",
          .options = run_options, .options_first = true,
          .help = "run CMD in a leaf of its own inside your session\n"
                  "(systemd mode: in a scope of your user manager)" },
        { .name = "set", .run = verb_run_set, .min_args = 1, .max_args = 1, .args = "PID|LEAF",
          .options = set_options, .options_first = true,
          .help = "change a running process or a leaf of your session\n"
                  "(systemd mode: the latency class of a PID only)" },
        { .name = "container-init", .run = verb_container_init, .options = container_init_options,
          .help = "(root) in a cgroup v2 container: move the container's\n"
                  "processes into a leaf and enable cpu" },
};

/* ---- help, from the tables ---- */

/* Prints text's lines, the first after what was already printed (col
 * columns wide; on a line of its own when wider than indent), each at indent. */
static void print_indented(FILE *f, int col, int indent, const char *text) {
        if (col >= indent) {
                fputc('\n', f);
                col = 0;
        }
        for (const char *s = text; *s;) {
                size_t n = strcspn(s, "\n");

                fprintf(f, "%*s%.*s\n", indent - col, "", (int) n, s);
                col = 0;
                s += n + (s[n] == '\n');
        }
}

/* "VERB [--name VALUE]... ARGS", the verb's synopsis; the columns it took */
static int print_synopsis(FILE *f, const Verb *v) {
        int n = fprintf(f, "%s", v->name);

        for (const VerbOption *o = v->options; o && o->name; o++)
                n += fprintf(f, o->has_arg == required_argument ? " [--%s %s]" :
                                o->has_arg == optional_argument ? " [--%s[=%s]]" : " [--%s]",
                             o->name, o->arg);
        if (v->args)
                n += fprintf(f, " %s", v->args);
        return n;
}

static void print_options(FILE *f, const VerbOption *options) {
        for (const VerbOption *o = options; o && o->name; o++) {
                int n = fprintf(f, "  ");

                if (o->key < 0x100)
                        n += fprintf(f, "-%c, ", o->key);
                n += fprintf(f, o->has_arg == required_argument ? "--%s %s" :
                                o->has_arg == optional_argument ? "--%s[=%s]" : "--%s", o->name, o->arg);
                print_indented(f, n, 21, o->help);
        }
}

static void usage(FILE *f) {
        fputs("Usage: autogroup [--root NAME] VERB [ARGS]\n"
              "\n"
              "Verbs (autogroup VERB --help: the verb's own help):\n", f);
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                print_indented(f, fprintf(f, "  ") + print_synopsis(f, &verbs[i]), 34, verbs[i].help);
        fputs("\nOptions (before or after the verb):\n", f);
        print_options(f, global_options);
}

static void verb_usage(const Verb *v, FILE *f) {
        fputs("Usage: autogroup [--root NAME] ", f);
        print_synopsis(f, v);
        fputs("\n\n", f);
        print_indented(f, 0, 2, v->help);
        if (v->options) {
                fputs("\nOptions:\n", f);
                print_options(f, v->options);
        }
        fputs("\nGlobal options (autogroup --help):\n", f);
        print_options(f, global_options);
}

/* ---- parsing, from the tables ---- */

static int parse_pid(const char *s, pid_t *ret) {
        unsigned long v;

        if (ag_safe_atoul(s, INT32_MAX, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

/* run and set: --latency, --weight and --idle. -EINVAL after a message. */
static int apply_run_option(Args *a, int key, const char *v) {
        AgRunOptions *o = &a->run;
        unsigned long w;

        switch (key) {
        case OPT_LATENCY:
                if (ag_latency_from_string(v, &o->latency) < 0) {
                        fprintf(stderr, "autogroup %s: invalid latency class '%s' "
                                        "(0|batch, 1|normal, 2|interactive, 3|audio)\n", a->verb, v);
                        return -EINVAL;
                }
                o->set_latency = true;
                return 0;
        case OPT_WEIGHT:
                if (ag_safe_atoul(v, AG_WEIGHT_MAX, &w) < 0 || w < AG_WEIGHT_MIN) {
                        fprintf(stderr, "autogroup %s: invalid weight '%s' (1..10000)\n", a->verb, v);
                        return -EINVAL;
                }
                o->weight = (unsigned) w;
                return 0;
        default:                       /* OPT_IDLE: run's without a value means yes */
                if (!v || strcmp(v, "yes") == 0)
                        o->idle = 1;
                else if (strcmp(v, "no") == 0)
                        o->idle = 0;
                else {
                        fprintf(stderr, "autogroup %s: invalid --idle '%s' (yes or no)\n", a->verb, v);
                        return -EINVAL;
                }
                return 0;
        }
}

/* One option of the verb's getopt_long table. -EINVAL after a message. */
static int apply_option(Args *a, int key, const char *v) {
        switch (key) {
        case OPT_ROOT:
                a->root = v;
                a->root_given = true;
                break;
        case OPT_HIERARCHY:
                a->hierarchy = v;
                break;
        case OPT_PAM_DIR:
                a->pam_dir = v;
                break;
        case 'h':
                a->help = true;
                break;
        case OPT_VERSION:
                a->version = true;
                break;
        case OPT_PID:
                if (parse_pid(v, &a->pid) < 0) {
                        fprintf(stderr, "autogroup %s: invalid pid '%s'\n", a->verb, v);
                        return -EINVAL;
                }
                break;
        case 'v':
                a->verbose = a->run.verbose = true;
                break;
        case OPT_USER:
                a->user = v;
                break;
        case OPT_JSON:
                a->json = true;
                break;
        case OPT_OUTPUT:
                a->output = v;
                break;
        case OPT_CONF:
                a->conf = v;
                break;
        case OPT_LEAF:
                a->leaf = v;
                break;
        default:
                return apply_run_option(a, key, v);
        }
        return 0;
}

/* The getopt_long table and short options of the global options and the
 * verb's (v NULL: the global ones only); mode is the optstring's start. */
static void build_options(const Verb *v, const char *mode, struct option *longopts, char *shortopts) {
        const VerbOption *lists[] = { global_options, v ? v->options : NULL };
        size_t n = 0;

        shortopts = stpcpy(shortopts, mode);
        for (size_t l = 0; l < ELEMENTSOF(lists); l++)
                for (const VerbOption *o = lists[l]; o && o->name; o++) {
                        longopts[n++] = (struct option) { o->name, o->has_arg, NULL, o->key };
                        if (o->key >= 0x100)
                                continue;
                        *shortopts++ = (char) o->key;
                        if (o->has_arg != no_argument)
                                shortopts = stpcpy(shortopts, o->has_arg == optional_argument ? "::" : ":");
                }
        longopts[n] = (struct option) {};
        *shortopts = 0;
}

#define OPTIONS_MAX 16

/* getopt_long over argv with the global options and the verb's: operands
 * (in "-" mode, wherever they are) go to a->argv. -EINVAL after a message. */
static int parse_options(const Verb *v, const char *mode, int argc, char **argv, Args *a) {
        struct option longopts[OPTIONS_MAX];
        char shortopts[2 * OPTIONS_MAX + 4];
        char who[64];
        int c;

        snprintf(who, sizeof who, "autogroup%s%s", v ? " " : "", v ? v->name : "");

        build_options(v, mode, longopts, shortopts);
        opterr = 0;
        optind = 0;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) >= 0) {
                if (c == 1) {
                        a->argv[a->argc++] = optarg;
                        continue;
                }
                if (c == ':')
                        fprintf(stderr, "%s: %s needs a value\n", who, argv[optind - 1]);
                else if (c == '?' && optopt > 0 && optopt < 0x100)
                        fprintf(stderr, "%s: unknown option '-%c'\n", who, optopt);
                else if (c == '?')
                        fprintf(stderr, "%s: unknown option '%s'\n", who, argv[optind - 1]);
                else if (apply_option(a, c, optarg) >= 0)
                        continue;
                return -EINVAL;
        }
        return optind;
}

static const Verb *verb_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

/* The verb's options and operands, argv[0] being its name. 0, or an exit
 * code after a message. */
static int parse_verb(const Verb *v, int argc, char **argv, Args *a) {
        int i = parse_options(v, v->options_first ? "+:" : "-:", argc, argv, a);

        if (i < 0)
                return EXIT_USAGE;
        while (i < argc)
                a->argv[a->argc++] = argv[i++];
        if (a->help || a->version)
                return 0;
        if (a->argc < v->min_args) {
                fprintf(stderr, "autogroup %s: %s expected (autogroup %s --help)\n", v->name, v->args, v->name);
                return EXIT_USAGE;
        }
        if (v->max_args != VERB_ANY && a->argc > v->max_args) {
                fprintf(stderr, "autogroup %s: unexpected argument '%s'\n", v->name, a->argv[v->max_args]);
                return EXIT_USAGE;
        }
        return 0;
}

/* ---- what the verbs share ---- */

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

/* ---- enter ---- */

/* enter, run and set: the mode of the caller's own login, as the module
 * that placed it exported it */
static bool login_is_systemd(void) {
        return ag_mode_decide(&(AgModeFacts) { .in_login = true, .exported = getenv(AG_MODE_ENV) }) ==
               AG_MODE_SYSTEMD;
}

/* status, metrics, check: the mode mode=auto gets on this host */
static bool auto_is_systemd(const AgHierarchy *h) {
        return ag_mode_decide(&(AgModeFacts) { .configured = AG_MODE_AUTO, .booted = ag_systemd_booted(NULL),
                                               .hierarchy = h }) == AG_MODE_SYSTEMD;
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
        bool verbose = a->verbose;
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
        bool json = a->json;
        uid_t only = (uid_t) -1;
        int r;

        if (only_user(a, a->user, &only) < 0)
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
        if (r >= 0 && !s->tree && auto_is_systemd(h)) {
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
                bool systemd = a->root_given ? auto_is_systemd(h) : ag_target_is_systemd(&t.v[i], h);
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
        const char *output = a->output;
        uid_t only;
        int r;

        if (only_user(a, a->user, &only) < 0)
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
        if (find_hierarchy(a, &h) >= 0 && h && auto_is_systemd(h))
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
        const char *path = a->conf, *user = a->argv[0];
        AgNssUser *u = NULL;
        AgTargets t;
        int r, ret = 0;

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
        int r = ag_gc(h, root, print_removed, g);

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

/* run and set: the work in the caller's session, on what each takes after
 * the options they share (run a command line, set one PID or LEAF). */
static int verb_run_set(const Args *a) {
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

/* ---- container-init ---- */

static int verb_container_init(const Args *a) {
        const char *leaf = a->leaf ? a->leaf : AG_CONTAINER_LEAF;
        AgHierarchy *h = NULL;
        unsigned moved = 0;
        bool changed = false;
        int r;

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

static bool root_valid(const Args *a) {
        if (ag_root_name_valid(a->root))
                return true;
        fprintf(stderr, "autogroup: invalid root name '%s'\n", a->root);
        return false;
}

/* autogroup [GLOBAL OPTIONS] VERB [OPTIONS] [ARGS]: the global options, the
 * verb from the table, its options and operands, then the verb. */
int main(int argc, char **argv) {
        Args a = { .root = AG_ROOT_DEFAULT, .pid = getppid() };
        const Verb *v = NULL;
        int i, r = EXIT_USAGE;

        a.run = (AgRunOptions) { .latency = AG_LATENCY_DEFAULT, .idle = -1,
                                 .interactive = ag_interactive_from_string(getenv(AG_INTERACTIVE_ENV)) };
        a.argv = calloc((size_t) argc + 1, sizeof *a.argv);
        if (!a.argv) {
                fprintf(stderr, "autogroup: out of memory\n");
                return EXIT_USAGE;
        }
        i = parse_options(NULL, "+:", argc, argv, &a);
        if (i < 0)
                goto finish;
        if (!a.help && !a.version && i < argc) {
                v = verb_find(argv[i]);
                if (!v) {
                        fprintf(stderr, "autogroup: unknown verb '%s'\n", argv[i]);
                        usage(stderr);
                        goto finish;
                }
                a.verb = v->name;
                if (parse_verb(v, argc - i, argv + i, &a) != 0)
                        goto finish;
        }
        if (!root_valid(&a))
                goto finish;
        if (a.help) {
                if (v)
                        verb_usage(v, stdout);
                else
                        usage(stdout);
                r = fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
        } else if (a.version) {
                printf("autogroup (pam_autogroup) " PACKAGE_VERSION "\n");
                r = 0;
        } else if (!v)
                usage(stderr);
        else
                r = v->run(&a);
finish:
        free(a.argv);
        return r;
}
