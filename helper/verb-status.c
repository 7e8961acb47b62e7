/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* autogroup status and metrics: the groups as a tree, JSON or Prometheus
 * text (their logic: status-*.c, metrics.c). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin-pam.h"
#include "env.h"
#include "hint.h"
#include "metrics.h"
#include "status.h"
#include "util.h"
#include "verbs.h"

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

int verb_status(const Args *a) {
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

int verb_metrics(const Args *a) {
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
