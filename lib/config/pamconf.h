/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The module's options as the PAM configuration gives them: every
 * "session ... pam_autogroup.so OPTIONS" line reachable from the service
 * files of a pam.d directory, following "include", "substack" and Debian's
 * "@include" (bounded in depth, without loops), each with the file:line it
 * came from and the services that reach it. The administrator's tools
 * (status, gc, explain, check) use it to find root=, conf= and mode=
 * without being told.
 *
 * Pure logic on files: no cgroup, no PAM library. */

#include <stdbool.h>
#include <stddef.h>

#define AG_PAM_DIR_DEFAULT "/etc/pam.d"
#define AG_PAM_MODULE_NAME "pam_autogroup.so"
/* Bounds: files on one include chain, the service's own file counted
 * (libpam's PAM_SUBSTACK_MAX_LEVEL: it follows no more), files opened per
 * service (each service file has its own budget, so later services lose
 * nothing on stacks that include the same common files), files opened over
 * the whole scan, bytes read per file. */
#define AG_PAMCONF_MAX_DEPTH 16
#define AG_PAMCONF_MAX_FILES 1024
#define AG_PAMCONF_MAX_OPENS (64 * 1024)
#define AG_PAMCONF_MAX_FILE_SIZE (256 * 1024)

/* One module line. Options the module does not know are kept in warnings. */
typedef struct AgPamLine {
        char *file;                    /* path of the file holding the line */
        unsigned line;                 /* its first line number */
        char *root;                    /* root= in effect (the default when absent or invalid) */
        char *conf;                    /* conf= in effect (NULL: the built-in default) */
        char *mode;                    /* mode= as written (NULL: auto) */
        char *delegate;                /* delegate= as written, or NULL */
        char *acctlog;                 /* acctlog= as written, or NULL */
        bool root_given, debug, noaudit, strict;
        unsigned n_problems;           /* options invalid or unknown to the module */
        char **services;               /* names of the service files that reach the line, NULL-terminated */
        size_t n_services;
} AgPamLine;

/* A session line of another module that matters for the order of the
 * stack (pam_systemd.so). */
typedef struct AgPamRef {
        char *file;
        unsigned line;
} AgPamRef;

/* One entry of a service's session stack, in the order libpam runs it:
 * index into AgPamConf.lines, or (systemd) into AgPamConf.systemd_lines. */
typedef struct AgPamStackEntry {
        bool systemd;
        size_t index;
} AgPamStackEntry;

/* The session stack of one service file that reaches a module line. */
typedef struct AgPamStack {
        char *service;
        AgPamStackEntry *entries;
        size_t n_entries;
} AgPamStack;

typedef struct AgPamConf {
        char *dir;
        AgPamLine *lines;              /* in the order first met (services in name order) */
        size_t n_lines;
        AgPamRef *systemd_lines;       /* every session line of pam_systemd.so reached, deduplicated */
        size_t n_systemd_lines;
        AgPamStack *stacks;            /* the services that reach a module line, in name order */
        size_t n_stacks;
} AgPamConf;

/* Called for each problem met: an unreadable or oversized file, an include
 * loop or one too deep, an unknown or invalid option. line is 0 when the
 * problem is the file's. */
typedef void (*ag_pamconf_warn_fn)(void *userdata, const char *file, unsigned line, const char *message);

/* Reads every service file of dir (NULL: AG_PAM_DIR_DEFAULT). -ENOENT when
 * dir does not exist, -ENOTDIR when it is not a directory, -ENOMEM; other
 * problems go to warn and the file or line is skipped. *ret is untouched on
 * failure. */
int ag_pamconf_scan(const char *dir, ag_pamconf_warn_fn warn, void *userdata, AgPamConf **ret);

/* Parses one module line's option words (argv, argc) as the module does.
 * Fills l's option fields (freeing what they held); unknown and invalid
 * options go to warn with file and line. */
int ag_pamconf_parse_options(AgPamLine *l, int argc, char **argv, ag_pamconf_warn_fn warn, void *userdata);

AgPamConf *ag_pamconf_free(AgPamConf *c);

/* What the host is, for the order of the stack: booted with systemd
 * (ag_systemd_booted()), and the cpu controller on a cgroup v1 hierarchy
 * (legacy or hybrid: where mode=auto picks the cgroupfs mode). Given by the
 * caller, so that tests can pose as any host. */
typedef struct AgPamHostFacts {
        bool systemd_booted;
        bool cpu_v1;
} AgPamHostFacts;

/* The stacks' problems, each once per pair of lines (with the services
 * whose stacks have it), warn called at the file:line to change:
 *   - a stack reaching two module lines with different root= (at the later,
 *     which steps aside in that stack: the module opens a session once);
 *   - on a host booted with systemd whose cpu is on cgroup v1, a module line
 *     in the cgroupfs mode there (mode=auto or cgroupfs) that comes before a
 *     line of pam_systemd.so: logind's scope start moves the login out of
 *     its group in every v1 hierarchy, cpu included (at the module line).
 * Returns the number of warnings, or -ENOMEM. */
int ag_pamconf_check_stacks(const AgPamConf *c, const AgPamHostFacts *facts, ag_pamconf_warn_fn warn,
                            void *userdata);

/* The distinct values of a field over the lines: indices of the first line
 * with each distinct root (resp. conf, NULL meaning default_conf), in order.
 * ret holds c->n_lines entries; returns how many were written. */
size_t ag_pamconf_distinct_roots(const AgPamConf *c, size_t *ret);
size_t ag_pamconf_distinct_confs(const AgPamConf *c, const char *default_conf, size_t *ret);

/* "FILE:LINE" followed by " (services: a, b)" when reached from elsewhere. */
int ag_pamconf_describe(const AgPamLine *l, char **ret);

/* The line's options in effect, every default filled in (default_conf for
 * a line without conf=): "root=R conf=C mode=M delegate=D acctlog=A", then
 * " debug", " noaudit", " strict" when set. */
int ag_pamconf_options(const AgPamLine *l, const char *default_conf, char **ret);
