/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Parser for autogroup.conf and the autogroup.d drop-ins.
 *
 * Syntax, one rule a line, '#' starts a comment:
 *     <domain> <item> <value>
 * domain: user name | @group | uid range as limits.conf: min:max, min: (min and up),
 *         :uid (exactly uid) | *
 *         As in Debian's pam_limits, "*" and "@group" rules do not apply to
 *         root (uid 0): a rule naming the user, or a uid range that holds 0,
 *         does.
 * item:   weight (1..10000) | max (N% or none) | sessions (yes|no) | idle (yes|no)
 *         | latency (0|batch, 1|normal, 2|interactive, 3|audio)
 *         | pool (NAME or none) | interactive (0|1|2) | leaves (0..64)
 *         | leaves-notty (0..64) | sessions-max (1..1024)
 * pools:  pool:NAME <weight|max|idle> <value> gives the pool NAME its limits
 *
 * Malformed lines are reported through the error callback (file, line,
 * message) and skipped; the rest of the file still applies. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define AG_WEIGHT_MIN 1
#define AG_WEIGHT_MAX 10000
#define AG_WEIGHT_DEFAULT 100
#define AG_MAX_PCT_MAX 102400          /* 1024 CPUs */
#define AG_LINE_MAX 1024               /* longer lines are an error */
#define AG_NAME_MAX 256                /* longest user or group name */

typedef enum AgDomainKind {
        AG_DOMAIN_ALL,                 /* "*" */
        AG_DOMAIN_RANGE,               /* "min:max" */
        AG_DOMAIN_GROUP,               /* "@group" */
        AG_DOMAIN_USER,                /* "name" */
        /* pools: never matches a user; only weight, max and idle */
        AG_DOMAIN_POOL,                /* "pool:NAME" */
        _AG_DOMAIN_KIND_MAX,
} AgDomainKind;                        /* user domains ordered by precedence, lowest first */

typedef enum AgItem {
        AG_ITEM_WEIGHT,
        AG_ITEM_MAX,
        AG_ITEM_SESSIONS,
        AG_ITEM_IDLE,
        /* latency classes */
        AG_ITEM_LATENCY,
        /* pools */
        AG_ITEM_POOL,                  /* value in AgRule.str (NULL: "none") */
        AG_ITEM_INTERACTIVE,           /* 0..AG_INTERACTIVE_MAX: leaf weights of latency classes */
        AG_ITEM_LEAVES,                /* 0..AG_LEAVES_MAX: root-made leaves of a login with a terminal */
        AG_ITEM_LEAVES_NOTTY,          /* 0..AG_LEAVES_MAX: the same for a login without one */
        AG_ITEM_SESSIONS_MAX,          /* 1..AG_SESSIONS_MAX_LIMIT: sessions of one user before logins share */
        AG_ITEM_LANE_CAP,              /* percent of one CPU or AG_MAX_NONE: the cap of the user's latency
                                        * lane at interactive 2 (lib/cgroup/lane.h) */
        _AG_ITEM_MAX,
} AgItem;

#define AG_MAX_NONE (-1L)              /* value of "max none" */

/* latency classes: the values of the item "latency" (lib/config/latency.h
 * maps them to scheduler attributes) */
typedef enum AgLatency {
        AG_LATENCY_BATCH,              /* 0: latency-insensitive */
        AG_LATENCY_NORMAL,             /* 1: the kernel's default (the default) */
        AG_LATENCY_INTERACTIVE,        /* 2 */
        AG_LATENCY_AUDIO,              /* 3 */
        _AG_LATENCY_MAX,
} AgLatency;
#define AG_LATENCY_DEFAULT AG_LATENCY_NORMAL

/* The item "interactive": 0 (the default) a latency class changes only
 * latency; 1 and 2 the leaf "autogroup run --latency" makes also gets a larger
 * weight inside the user's own share (lib/config/latency.h has the table). */
#define AG_INTERACTIVE_MAX 2
#define AG_INTERACTIVE_DEFAULT 0

/* The item "leaves": how many leaves root makes at open in the session of
 * a login that may have a terminal (ag_tty_is_terminal(): PAM_TTY a
 * terminal device, an X display, or sshd's "ssh"), for
 * the user's terminals and "autogroup run" commands (lib/cgroup/place.h). The
 * default serves a tmux with four panes and two "autogroup run" commands
 * beside the login's own shell in login/. The item "leaves-notty": the same
 * for a login without one (cron; su, runuser or sudo in a script),
 * which starts no terminals: by default none, so that such a login costs
 * no more than a session with login/ alone. */
#define AG_LEAVES_MAX 64
#define AG_LEAVES_DEFAULT 6
#define AG_LEAVES_NOTTY_DEFAULT 0

/* The item "sessions-max": how many sessions of one user (in the place the
 * user lives in, lingering ones included) get a group of their own; a
 * login beyond it shares the user's group "shared" (lib/cgroup/place.h),
 * root's throughout, under the user's policy. It bounds the groups, the
 * sweep at open and the watchers one user can cause. */
#define AG_SESSIONS_MAX_LIMIT 1024
#define AG_SESSIONS_MAX_DEFAULT 64

/* The item "lane-cap": the cap of the user's latency lane (cgroup v1,
 * interactive 2; lib/cgroup/lane.h), in percent of one CPU like "max", or
 * none. The most a user gains over its share by putting work in the lane. */
#define AG_LANE_CAP_DEFAULT 10L

/* "batch", "normal", "interactive", "audio"; NULL out of range. */
const char *ag_latency_to_string(AgLatency l);
/* A class number (0..3) or name; -EINVAL for anything else. */
int ag_latency_from_string(const char *s, AgLatency *ret);
/* pools: names are [a-z0-9_-], starting with a letter or digit */
#define AG_POOL_NAME_MAX 32
#define AG_POOL_DOMAIN_PREFIX "pool:"

typedef struct AgRule {
        AgDomainKind kind;
        char *name;                    /* user or group name (without '@'); NULL otherwise */
        uid_t uid_min, uid_max;        /* AG_DOMAIN_RANGE; an open max is (uid_t)-1 - 1; ":N" is N..N */
        AgItem item;
        long value;                    /* weight; max in percent or AG_MAX_NONE; 0/1 for booleans;
                                        * an AgLatency for latency; 0..2 for interactive;
                                        * 0..AG_LEAVES_MAX for leaves, leaves-notty;
                                        * 1..AG_SESSIONS_MAX_LIMIT for sessions-max;
                                        * lane-cap as max */
        const char *file;              /* points into AgConfig.files, valid as long as the config */
        unsigned line;
        /* pools */
        char *str;                     /* AG_ITEM_POOL: the pool name; NULL for "none" */
} AgRule;

typedef struct AgConfig {
        AgRule *rules;                 /* in file order: main file first, then drop-ins in lexical order */
        size_t n_rules;
        char **files;                  /* every file name a rule refers to */
        size_t n_files;
} AgConfig;

/* Called once for every error: file is the path (or NULL for errors not tied
 * to a file), line is 0 when the error concerns the whole file. */
typedef void (*ag_error_fn)(void *userdata, const char *file, unsigned line, const char *message);

enum {
        /* Accept files not owned by root or writable by others. Only for
         * unit tests and for "autogroup check" on a file given by hand. */
        AG_CONFIG_TRUST_ANY_OWNER = 1 << 0,
        /* Do not read the drop-in directory. */
        AG_CONFIG_NO_DROPINS      = 1 << 1,
};

const char *ag_item_to_string(AgItem item);
const char *ag_domain_kind_to_string(AgDomainKind kind);

/* Parse one line (without its newline). On success with a rule, *ret_rule is
 * filled (name allocated) and 1 is returned; 0 for a blank or comment line;
 * -EINVAL for a malformed line with *ret_error set to a static message. */
int ag_config_parse_line(const char *line, AgRule *ret_rule, const char **ret_error);

/* Parse a file's contents into config. Errors go to the callback. Returns the
 * number of errors found (>= 0), or -errno when memory runs out. */
int ag_config_parse_buffer(AgConfig *config, const char *file, const char *buf, size_t size,
                           ag_error_fn error, void *userdata);

/* Read the main file at path and then every <stem>.d/\*.conf next to it (stem
 * is path without a trailing ".conf"), in lexical order. A missing main file
 * or drop-in directory is not an error; an unreadable, unsafe or malformed one
 * is reported and skipped. Returns the number of errors reported (>= 0) with
 * *ret set, or -errno (only -ENOMEM) leaving *ret untouched. */
int ag_config_load(const char *path, unsigned flags, ag_error_fn error, void *userdata, AgConfig **ret);

/* Builds the drop-in directory name for a main config path. */
int ag_config_dropin_dir(const char *path, char **ret);

AgConfig *ag_config_free(AgConfig *config);

/* pools: is p[0..n) a valid pool name? */
bool ag_pool_name_valid(const char *p, size_t n);

/* The root= of the module: the default subtree. */
#define AG_ROOT_DEFAULT "autogroup"
/* The subtree name given with root=: letters, digits, '-', '_', '.', not
 * starting with '.', 1..AG_ROOT_NAME_MAX characters (one path component). */
#define AG_ROOT_NAME_MAX 64
bool ag_root_name_valid(const char *s);
