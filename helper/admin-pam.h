/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the administrator's verbs (status, gc, explain, check) act on when
 * the command line does not say: the roots or config files of the module's
 * lines in the PAM configuration (lib/config/pamconf.c), each with the file:line it
 * came from, or the built-in default when no line names one. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cgroup.h"
#include "pamconf.h"

typedef struct AgTarget {
        const char *value;             /* a root name or a config path */
        char *source;                  /* "FILE:LINE (services: ...)"; NULL: the built-in default */
        const char *mode;              /* mode= of that line (NULL: auto) */
        bool line_default;             /* the line at source does not set it: the default applies */
} AgTarget;

typedef struct AgTargets {
        AgPamConf *pam;                /* NULL when the directory could not be read */
        int pam_error;                 /* -errno of reading it, or 0 */
        AgTarget *v;
        size_t n;
        unsigned problems;             /* invalid or unknown options on the module's lines */
} AgTargets;

/* Reads pam_dir (NULL: /etc/pam.d) and fills t with the distinct roots
 * (confs false) or config files (confs true, default_conf standing for a
 * line without conf=). Without any line: one target, the default, with
 * source NULL. warn: where the reading's problems are printed (NULL: not
 * printed). -ENOMEM only. */
int ag_targets_from_pam(const char *pam_dir, bool confs, const char *default_value, FILE *warn, AgTargets *t);
void ag_targets_done(AgTargets *t);

/* Does a module line of pam_dir (NULL: /etc/pam.d) give root=root? 1 or 0,
 * or -errno when the directory cannot be read. */
int ag_pam_names_root(const char *pam_dir, const char *root);

/* "root=web from FILE:LINE (services: ...)", or a sentence saying the
 * default applies and why. */
void ag_target_print_source(const AgTargets *t, const AgTarget *x, const char *what, const char *pam_dir,
                            FILE *f);

/* Does the mode of x resolve to systemd on this host (h may be NULL)? */
bool ag_target_is_systemd(const AgTarget *x, const AgHierarchy *h);

/* Top-level groups of the hierarchy, other than the names in known, that
 * hold a root-owned user-<uid> or pool-<name> group: the roots of
 * pam_autogroup sessions (bounded in entries read). Calls found for each. */
int ag_find_other_roots(const AgHierarchy *h, const char *const *known, size_t n_known,
                        void (*found)(void *userdata, const char *root), void *userdata);
