/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * autogroup: the unprivileged companion of pam_autogroup.
 *
 *   autogroup [--root NAME] VERB [OPTIONS] [ARGS]
 *
 * The command line only: the verb table below (each verb's name, function,
 * operands, help and options), getopt_long over the global options and the
 * verb's, and the help texts made from the same table ("autogroup --help",
 * "autogroup VERB --help"). Each verb's glue is in verb-*.c (verbs.h), its
 * logic in enter.c, run.c, check.c, status-*.c, metrics.c...
 * (status, gc, explain and check take root= and conf= from the module's
 * lines in /etc/pam.d when not given; --pam-dir DIR reads DIR instead; run
 * and set in the systemd mode, AUTOGROUP_MODE=systemd outside a cgroupfs
 * session: a scope of the user's manager per command, run-systemd.h)
 *
 * No setuid bit: "enter" works inside the subtree the module delegated to the
 * user, and the kernel's file permissions are the only authority. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "config.h"             /* autoconf: PACKAGE_VERSION */

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container.h"
#include "env.h"
#include "latency.h"
#include "run.h"
#include "session.h"
#include "util.h"
#include "verbs.h"

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
        OPT_STRICT,
        OPT_APPLY,
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

static const VerbOption check_options[] = {
        { "strict", no_argument, OPT_STRICT, NULL, "exit 3 when there were warnings (and no error)" },
        {}
};

static const VerbOption gc_options[] = {
        { "apply", no_argument, OPT_APPLY, NULL,
          "also write the configuration's weight, cap and idle flag to the\n"
          "live user groups and pools (a cap added for a runaway user applies\n"
          "without waiting for their next login)" },
        {}
};

static const VerbOption explain_options[] = {
        { "conf", required_argument, OPT_CONF, "FILE", "the configuration (default: every conf= of the module's lines)" },
        {}
};

#define LATENCY_HELP                                                            \
        "CLASS: 0|batch 1|normal 2|interactive 3|audio\n"                       \
        "(at interactive 1, 2: the class leaf root made; in a\n"               \
        "delegated session or the systemd mode the class's\n"                  \
        "weight from AUTOGROUP_INTERACTIVE, unless --weight)"

static const VerbOption run_options[] = {
        { "latency", required_argument, OPT_LATENCY, "CLASS", LATENCY_HELP },
        { "weight", required_argument, OPT_WEIGHT, "W", "CMD's own leaf's weight (1..10000): in a session\n"
          "delegated to you (delegate=yes) or the systemd mode;\nroot's leaves keep root's weights" },
        { "idle", optional_argument, OPT_IDLE, "yes|no", "CMD's own leaf's cpu.idle (no value: yes):\n"
          "delegated session or systemd mode only" },
        { "verbose", no_argument, 'v', NULL, "say where CMD runs" },
        {}
};

static const VerbOption set_options[] = {
        { "latency", required_argument, OPT_LATENCY, "CLASS", LATENCY_HELP },
        { "weight", required_argument, OPT_WEIGHT, "W", "the weight of your own leaf the process is in\n"
          "(1..10000): in a delegated session only" },
        { "idle", required_argument, OPT_IDLE, "yes|no", "that leaf's cpu.idle: in a delegated session only" },
        { "verbose", no_argument, 'v', NULL, "say what was changed" },
        {}
};

static const VerbOption container_init_options[] = {
        { "leaf", required_argument, OPT_LEAF, "NAME", "the leaf for the container's processes (default "
          AG_CONTAINER_LEAF ")" },
        {}
};


static const Verb verbs[] = {
        { .name = "enter", .run = verb_enter, .options = enter_options,
          .help = "move a session-leading shell (default: the parent)\n"
                  "into a group of its own inside its login's session" },
        { .name = "status", .run = verb_status, .options = status_options,
          .help = "users, sessions and leaves with weight, cap and CPU used" },
        { .name = "metrics", .run = verb_metrics, .options = metrics_options,
          .help = "the same per user group and pool as Prometheus text\n"
                  "(for node_exporter's textfile collector)" },
        { .name = "check", .run = verb_check, .max_args = 1, .args = "[FILE]", .options = check_options,
          .help = "validate the configuration and its drop-ins\n"
                  "(default: every conf= of the module's lines)" },
        { .name = "explain", .run = verb_explain, .min_args = 1, .max_args = 1, .args = "USER",
          .options = explain_options,
          .help = "which line set each item for USER (default: for\n"
                  "every conf= of the module's lines)" },
        { .name = "gc", .run = verb_gc, .options = gc_options, .help = "(root) remove empty groups" },
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
        case OPT_APPLY:
                a->apply = true;
                break;
        case OPT_LEAF:
                a->leaf = v;
                break;
        case OPT_STRICT:
                a->strict = true;
                break;
        default:
                return apply_run_option(a, key, v);
        }
        return 0;
}

/* the global options and the most a verb has (4), with room to grow */
#define OPTIONS_MAX 16

/* The getopt_long table and short options of the global options and the
 * verb's (v NULL: the global ones only); mode is the optstring's start. */
static void build_options(const Verb *v, const char *mode, struct option *longopts, char *shortopts) {
        const VerbOption *lists[] = { global_options, v ? v->options : NULL };
        size_t n = 0;

        shortopts = stpcpy(shortopts, mode);
        for (size_t l = 0; l < ELEMENTSOF(lists); l++)
                for (const VerbOption *o = lists[l]; o && o->name; o++) {
                        assert(n + 1 < OPTIONS_MAX);
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

/* getopt_long over argv with the global options and the verb's: operands
 * (in "-" mode, wherever they are) go to a->argv. -EINVAL after a message. */
static int parse_options(const Verb *v, const char *mode, int argc, char **argv, Args *a) {
        struct option longopts[OPTIONS_MAX];
        char shortopts[3 * OPTIONS_MAX + 3];   /* the mode and "x::" an option at most */
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
                r = 0;
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
