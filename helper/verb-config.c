/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* autogroup check and explain: the configuration and the module's lines
 * (their logic: check.c, admin-pam.c). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin-pam.h"
#include "check.h"
#include "util.h"
#include "verbs.h"

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
int verb_check(const Args *a) {
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
