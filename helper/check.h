/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup check" and "autogroup explain": the configuration as the module
 * reads it (same ownership rules), reported for people. */

#include <stdio.h>
#include <sys/types.h>

#include "cgroup.h"
#include "pamconf.h"
#include "policy.h"

/* The exit status of "check --strict" when there were warnings and no error. */
#define AG_EXIT_WARNINGS 3
/* Messages of one kind (errors, warnings) printed for one file in a row;
 * then "FILE: N more errors not shown". */
#define AG_CHECK_SHOWN_MAX 50
/* The largest buffer a name look-up is given. */
#define AG_CHECK_NSS_BUF_MAX (1024 * 1024)

/* Where check's errors and warnings go, and what it has counted. */
typedef struct AgCheckReport {
        FILE *out;
        char *file;                    /* the file of the last message */
        unsigned shown[2], hidden[2];  /* its errors [0] and warnings [1], printed and not */
        unsigned nul_lines;            /* its lines with a NUL byte (a binary file) */
        unsigned warnings;             /* every warning so far */
} AgCheckReport;

/* Loads path (and its drop-ins), printing every error as "file:line: message"
 * ("file: message" for errors about a whole file). Returns the number
 * of errors (>= 0) and the config in *ret, or -ENOMEM. */
int ag_check_config(const char *path, AgCheckReport *rep, AgConfig **ret);
/* The lines of config that parse but change the policy silently
 * (lib/config/lint.h; names through NSS), each as "warning: file:line: message".
 * Returns how many, or -ENOMEM. */
int ag_check_lint(const AgConfig *config, AgCheckReport *rep);
/* The problems of the PAM stacks (ag_pamconf_check_stacks()) as warnings. */
int ag_check_pam_stacks(const AgPamConf *c, const AgPamHostFacts *facts, AgCheckReport *rep);
/* A warning of check's own ("warning: file:line: message"), counted; an
 * ag_error_fn. */
void ag_check_report_warning(void *userdata, const char *file, unsigned line, const char *message);
/* Prints what was left unsaid of the last file; frees what rep holds. */
void ag_check_report_done(AgCheckReport *rep);

/* Prints every module line of c (none when c is NULL or has none): a
 * heading, then "  FILE:LINE (services: a, b): OPTIONS" a line, with the
 * options in effect (ag_pamconf_options). -ENOMEM only. */
int ag_check_print_pam_lines(const AgPamConf *c, const char *default_conf, FILE *out);

/* Prints one error of the configuration: prefix, then "file:line: message"
 * and line_note for an error of one line, "file: message" for one of a whole
 * file, or the message alone. */
void ag_config_error_print(FILE *out, const char *prefix, const char *file, unsigned line, const char *message,
                          const char *line_note);

/* Formats a rule back as "domain item value". */
void ag_rule_format(const AgRule *rule, char *buf, size_t size);
/* Formats an item's value: "100", "150%", "none", "yes", "no". */
void ag_item_value_format(AgItem item, long value, char *buf, size_t size);

/* Group membership through NSS: primary and supplementary groups. */
typedef struct AgNssUser {
        char *name;
        uid_t uid;
        gid_t gid;
        gid_t *groups;
        int n_groups;
} AgNssUser;

/* Looks the user up (name or numeric uid). -ENOENT when unknown. */
int ag_nss_user_get(const char *name, AgNssUser **ret);
AgNssUser *ag_nss_user_free(AgNssUser *u);
/* An ag_in_group_fn over an AgNssUser: ag_nss_group_member(), the module's rule. */
int ag_nss_in_group(void *userdata, const char *group);

/* Prints which rule set each item for the user and the resulting cgroup
 * values. h may be NULL (no cgroup filesystem): both versions are shown. */
void ag_explain_print(const AgConfig *config, const AgNssUser *u, const AgHierarchy *h, FILE *out);
/* check in the systemd mode: the user slices systemd has now, their live
 * values, and each conflict between a rule and systemd's own settings. */
void ag_check_systemd(const AgConfig *config, const AgHierarchy *h, FILE *out);
