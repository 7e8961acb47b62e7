/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the verbs of autogroup share: the parsed command line (Args, filled
 * from the verb table in autogroup.c) and the glue every verb uses to find
 * the hierarchy, the root and the mode. Each verb's glue is in a verb-*.c
 * file; its logic in the files named there. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"
#include "run.h"

#define EXIT_USAGE 2

#ifndef AG_DEFAULT_CONF
#define AG_DEFAULT_CONF "/etc/security/autogroup.conf"
#endif

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
        bool strict;                   /* check --strict: warnings make the exit status AG_EXIT_WARNINGS */
        bool apply;                    /* gc --apply */
        const char *leaf;              /* container-init --leaf */
        AgRunOptions run;              /* run, set: --latency, --weight, --idle, --verbose */
} Args;

/* The verbs (the verb table's functions): an exit code. */
int verb_enter(const Args *a);             /* verb-session.c */
int verb_run_set(const Args *a);           /* verb-session.c */
int verb_status(const Args *a);            /* verb-status.c */
int verb_metrics(const Args *a);           /* verb-status.c */
int verb_check(const Args *a);             /* verb-config.c */
int verb_explain(const Args *a);           /* verb-config.c */
int verb_gc(const Args *a);                /* verb-admin.c */
int verb_container_init(const Args *a);    /* verb-admin.c */

/* verbs.c */
int find_hierarchy(const Args *a, AgHierarchy **ret);
int find_hierarchy_or_report(const Args *a, AgHierarchy **ret);
int find_hierarchy_as_root(const Args *a, const char *what, AgHierarchy **ret);
const char *session_root(const Args *a, const AgHierarchy *h, char *buf, size_t size);
int only_user(const Args *a, const char *user, uid_t *ret);
int parse_pid(const char *s, pid_t *ret);
bool login_is_systemd(void);
bool auto_is_systemd(const AgHierarchy *h);
