/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* autogroup check and explain: the configuration and the module's lines
 * (their logic: check.c, admin-pam.c). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin-pam.h"
#include "check.h"
#include "systemd.h"
#include "util.h"
#include "verbs.h"

/* ---- check ---- */

/* What check and explain say of a main config file that does not exist. */
#define CONFIG_MISSING "does not exist, the built-in defaults apply"

static bool config_missing(const char *path) {
        return access(path, F_OK) < 0 && errno == ENOENT;
}

/* A FILE named on the command line that does not exist, and no drop-in
 * directory beside it either: a mistyped name, an error. */
static bool named_file_missing(const char *path) {
        _cleanup_free_ char *dir = NULL;

        return config_missing(path) && ag_config_dropin_dir(path, &dir) >= 0 && config_missing(dir);
}

/* One config file and its drop-ins: errors, then warnings (counted in
 * rep), then "FILE: OK, N rules" or "FILE: N errors". named: FILE came
 * from the command line. 0, or EXIT_FAILURE when there were errors. */
static int check_one(const Args *a, const char *path, bool named, AgCheckReport *rep) {
        AgConfig *config = NULL;
        AgHierarchy *h = NULL;
        unsigned before = rep->warnings;
        int r, w;
        bool missing = false;

        if (named && named_file_missing(path)) {
                char target[PATH_MAX];
                ssize_t n = readlink(path, target, sizeof target - 1);

                if (n > 0) {
                        target[n] = 0;
                        printf("%s: does not exist (a symbolic link to %s, which does not)\n", path, target);
                } else
                        printf("%s: does not exist\n", path);
                missing = true;
        } else if (config_missing(path))
                printf("%s: %s\n", path, CONFIG_MISSING);
        r = ag_check_config(path, rep, &config);
        w = r >= 0 ? ag_check_lint(config, rep) : 0;
        if (r < 0 || w < 0) {
                ag_config_free(config);
                fprintf(stderr, "autogroup check: %s\n", strerror(-(r < 0 ? r : w)));
                return EXIT_FAILURE;
        }
        r += missing;
        w = (int) (rep->warnings - before);
        if (r == 0)
                printf("%s: OK, %zu rule%s", path, config->n_rules, config->n_rules == 1 ? "" : "s");
        else
                printf("%s: %d error%s", path, r, r == 1 ? "" : "s");
        if (w > 0)
                printf(", %d warning%s", w, w == 1 ? "" : "s");
        putchar('\n');
        /* systemd mode: what systemd has now, and where its own settings beat a rule */
        if (find_hierarchy(a, &h) >= 0 && h && auto_is_systemd(h))
                ag_check_systemd(config, h, stdout);
        ag_hierarchy_free(h);
        ag_config_free(config);
        return r == 0 ? 0 : EXIT_FAILURE;
}

/* The exit status: errors first, then (--strict) warnings. */
static int check_status(const Args *a, int ret, const AgCheckReport *rep) {
        if (ret == 0 && a->strict && rep->warnings > 0)
                ret = AG_EXIT_WARNINGS;
        return fflush(stdout) == 0 || ret != 0 ? ret : EXIT_FAILURE;
}

/* The host facts the order of a stack depends on: booted with systemd, and
 * the cpu controller on cgroup v1 (where mode=auto is the cgroupfs mode). */
static AgPamHostFacts host_facts(const Args *a) {
        AgPamHostFacts f = { .systemd_booted = ag_systemd_booted(NULL) };
        AgHierarchy *h = NULL;

        if (find_hierarchy(a, &h) >= 0 && h)
                f.cpu_v1 = h->version == 1;
        ag_hierarchy_free(h);
        return f;
}

/* check without FILE: the module's lines (their options too), the
 * problems of their stacks, and every conf= they name, or the default. */
int verb_check(const Args *a) {
        AgCheckReport rep = { .out = stdout };
        AgTargets t;
        int ret = 0;

        if (a->argc == 1) {
                ret = check_one(a, a->argv[0], true, &rep);
                ag_check_report_done(&rep);
                return check_status(a, ret, &rep);
        }
        if (ag_targets_from_pam(a->pam_dir, true, AG_DEFAULT_CONF, stdout, &t) < 0) {
                fprintf(stderr, "autogroup check: out of memory\n");
                return EXIT_FAILURE;
        }
        AgPamHostFacts facts = host_facts(a);
        if (ag_check_print_pam_lines(t.pam, AG_DEFAULT_CONF, stdout) < 0 ||
            ag_check_pam_stacks(t.pam, &facts, &rep) < 0) {
                ag_targets_done(&t);
                ag_check_report_done(&rep);
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
                if (check_one(a, t.v[i].value, false, &rep) != 0)
                        ret = EXIT_FAILURE;
        }
        ag_targets_done(&t);
        ag_check_report_done(&rep);
        return check_status(a, ret, &rep);
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

int verb_explain(const Args *a) {
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
