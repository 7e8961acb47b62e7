/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* autogroup gc and container-init: the verbs only root may use. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "config.h"             /* autoconf: HAVE_LIBAUDIT */

#include <errno.h>
#include <pwd.h>
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
#include "container.h"
#include "lane.h"
#include "session.h"
#include "systemd.h"
#include "util.h"
#include "verbs.h"

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
        /* a latency lane, "/<root>.lane-<uid>" (lane.h) */
        if (ag_lane_path_uid(path, &uid) < 0)
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
        /* its open time is the login's, unknown here: wall_usec=?; a lane
         * with CPU time of its own (v1 cpu,cpuacct): what it used since made */
        if (usage && ag_acct_format(usage, -1, fields, sizeof fields) >= 0) {
                bool lane = ag_lane_path_uid(path, NULL) >= 0;
                AgAcctRecord ar = { .cgroup = path, .state = "removed", .user = strcmp(user, "?") ? user : NULL,
                                    .uid = uid, .scope = lane ? AG_ACCT_SCOPE_LANE : AG_ACCT_SCOPE_SESSION,
                                    .by = "gc", .usage = usage, .wall_usec = -1 };
                char record[AG_ACCT_RECORD_MAX];

                if (ag_acct_record_format(&ar, record, sizeof record) >= 0)
                        syslog(LOG_INFO, "%s", record);
                snprintf(extra, sizeof extra, "state=removed %s%s", lane ? "scope=lane " : "", fields);
                gc_audit(g, "autogroup-session-end", uid, user, path, extra);
        }
}

/* userdata: the count of slices, said apart from the groups' (no group is
 * removed: the unit's drop-ins in /run/systemd/system.control are) */
static void print_slice_forgotten(void *userdata, const char *slice) {
        int *slices = userdata;

        (*slices)++;
        printf("removed the runtime properties pam_autogroup set on %s (not running)\n", slice);
        syslog(LOG_DEBUG, "removed the runtime properties of %s", slice);
}

/* Every config of the module's lines, for the pools they name (gc closes the
 * others); 0 and nothing when one cannot be read: then no pool is closed. */
static size_t gc_configs(const Args *a, AgConfig ***ret) {
        AgConfig **v = NULL;
        AgTargets t;
        size_t n = 0;

        if (ag_targets_from_pam(a->pam_dir, true, a->conf ? a->conf : AG_DEFAULT_CONF, NULL, &t) < 0)
                return 0;
        v = calloc(t.n ? t.n : 1, sizeof *v);
        for (size_t i = 0; v && i < t.n; i++, n++)
                if (ag_config_load(t.v[i].value, 0, NULL, NULL, &v[i]) < 0)
                        break;
        ag_targets_done(&t);
        if (!v || n < t.n) {
                for (size_t i = 0; v && i < n; i++)
                        ag_config_free(v[i]);
                free(v);
                return 0;
        }
        *ret = v;
        return n;
}

/* gc --apply: the user's policy as the module resolves it at login. */
typedef struct ApplyCtx {
        const AgConfig *config;
        const char *user;
        gid_t gid;
} ApplyCtx;

static int apply_in_group(void *userdata, const char *group) {
        const ApplyCtx *c = userdata;

        return ag_nss_group_member(group, c->user, c->gid);
}

static int apply_policy_for(void *userdata, uid_t uid, AgPolicy *ret) {
        ApplyCtx *c = userdata;
        const struct passwd *pw = getpwuid(uid);

        if (!pw)
                return 0;
        c->user = pw->pw_name;
        c->gid = pw->pw_gid;
        ag_policy_resolve(c->config, pw->pw_name, uid, apply_in_group, c, ret);
        return 1;
}

static void gc_apply(const AgHierarchy *h, const char *root, const char *pam_dir, const AgConfig *const *configs,
                     size_t n_configs) {
        unsigned failed = 0;
        int r;

        if (n_configs != 1 || ag_pam_names_root(pam_dir, root) <= 0) {
                printf("gc --apply: below %s not applied (%s)\n", root, n_configs > 1 ?
                       "the module's lines name more than one configuration" :
                       "no module line names it, or its configuration cannot be read");
                return;
        }
        ApplyCtx c = { .config = configs[0] };
        r = ag_gc_apply(h, root, configs[0], apply_policy_for, &c, &failed);
        if (r < 0) {
                printf("gc --apply below %s: %s\n", root, strerror(-r));
                syslog(LOG_ERR, "gc --apply below %s: %s", root, strerror(-r));
                return;
        }
        printf("applied the configuration to %d group%s below %s%s\n", r, r == 1 ? "" : "s", root,
               failed ? " (the kernel refused some: see autogroup explain)" : "");
        syslog(LOG_INFO, "gc --apply: the configuration applied to %d group%s below %s, %u refused", r,
               r == 1 ? "" : "s", root, failed);

        /* the users' latency lanes beside <root> (lane.h): their lane-cap */
        _cleanup_close_ int mfd = -1;
        failed = 0;
        r = ag_hierarchy_open(h, &mfd);
        if (r >= 0 && h->version == 1 && h->has_cpu)
                r = ag_lane_apply(h, mfd, root, apply_policy_for, &c, &failed);
        else if (r >= 0)
                return;                 /* no lanes on cgroup v2 */
        if (r < 0) {
                printf("gc --apply beside %s: %s\n", root, strerror(-r));
                syslog(LOG_ERR, "gc --apply of the latency lanes beside %s: %s", root, strerror(-r));
                return;
        }
        if (r == 0 && failed == 0)
                return;
        printf("applied lane-cap to %d latency lane%s beside %s%s\n", r, r == 1 ? "" : "s", root,
               failed ? " (the kernel refused some: see autogroup explain)" : "");
        syslog(LOG_INFO, "gc --apply: lane-cap applied to %d latency lane%s beside %s, %u refused", r,
               r == 1 ? "" : "s", root, failed);
}

static int gc_root(const AgHierarchy *h, const char *root, const char *pam_dir, const AgConfig *const *configs,
                   size_t n_configs, struct gc_log *g, int *removed) {
        const AgEvents events = { .removed = print_removed, .userdata = g };
        int r;

        /* pools are closed only below a root a module line names, with the
         * configs of those lines: a config that is not the module's must not
         * close a pool that is in use */
        if (n_configs && ag_pam_names_root(pam_dir, root) <= 0)
                n_configs = 0;
        r = ag_gc(h, root, n_configs ? configs : NULL, n_configs, &events);

        if (r > 0) {
                *removed += r;
                syslog(LOG_INFO, "gc: %d empty group%s removed below %s", r, r == 1 ? "" : "s", root);
        } else if (r < 0)
                syslog(LOG_ERR, "gc below %s: %s", root, strerror(-r));
        return r;
}

int verb_gc(const Args *a) {
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
        int removed = 0, slices = 0;
        AgConfig **configs = NULL;
        size_t n_configs = gc_configs(a, &configs);
        if (a->root_given) {
                r = gc_root(h, a->root, a->pam_dir, (const AgConfig *const *) configs, n_configs, &g, &removed);
                if (a->apply)
                        gc_apply(h, a->root, a->pam_dir, (const AgConfig *const *) configs, n_configs);
        } else if ((r = ag_targets_from_pam(a->pam_dir, false, a->root, NULL, &t)) >= 0) {
                for (size_t i = 0; r >= 0 && i < t.n; i++) {
                        ag_target_print_source(&t, &t.v[i], "root", a->pam_dir, stdout);
                        r = gc_root(h, t.v[i].value, a->pam_dir, (const AgConfig *const *) configs, n_configs, &g,
                                    &removed);
                        if (a->apply)
                                gc_apply(h, t.v[i].value, a->pam_dir, (const AgConfig *const *) configs, n_configs);
                }
                ag_targets_done(&t);
        }
        /* systemd mode: the module's runtime drop-ins of user slices that are not running */
        if (r >= 0 && h->version == 2 && ag_systemd_booted(NULL)) {
                static const AgSystemdPaths paths = {
                        .control_dir = AG_SYSTEMD_CONTROL_DIR,
                        .record_dir = AG_SYSTEMD_RECORD_DIR,
                };
                int n = ag_systemd_gc(h->mount, &paths, print_slice_forgotten, &slices);

                if (n > 0)
                        syslog(LOG_INFO, "gc: the runtime properties of %d user slice%s not running removed", n,
                               n == 1 ? "" : "s");
                else if (n < 0)
                        syslog(LOG_ERR, "gc of %s: %s", AG_SYSTEMD_RECORD_DIR, strerror(-n));
        }
        for (size_t i = 0; i < n_configs; i++)
                ag_config_free(configs[i]);
        free(configs);
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
        printf("%d group%s removed", removed, removed == 1 ? "" : "s");
        if (slices > 0)
                printf(", and the runtime properties of %d user slice%s not running", slices, slices == 1 ? "" : "s");
        putchar('\n');
        return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* ---- container-init ---- */

int verb_container_init(const Args *a) {
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
