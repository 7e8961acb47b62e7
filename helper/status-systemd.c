/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* "autogroup status" in pam_autogroup's systemd mode: the units systemd and
 * logind made for the logins, read from their cgroups on the unified
 * hierarchy through directory fds (no symlink followed), bounded per user:
 *
 *   /user.slice
 *     user-UID.slice                    CPUWeight=, CPUQuota= from pam_autogroup
 *       session-N.scope                 the logins (CPUWeight=100 through pam_systemd)
 *       user@UID.service                the user's manager
 *         app.slice/autogroup-sid-S.scope   the terminals "autogroup enter" placed
 *         app.slice/autogroup-run-P.scope   the commands "autogroup run" started
 *
 * The result has the shape of the cgroupfs mode's (status.h), so that it is
 * printed the same way, as text or JSON. */

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "acct.h"
#include "status.h"
#include "systemd.h"
#include "util.h"

/* Children listed below one user slice and below one user manager: what a
 * user makes (sessions, scopes of their own manager) cannot hide another
 * user's slice. */
#define SD_STATUS_MAX_CHILDREN 256

/* cpu.weight, cpu.max, cpu.idle, CPU time and process count of a v2 group */
static void read_values(int fd, AgStatusNode *n) {
        ag_status_read_policy(2, fd, n, false, NULL);
        n->procs = ag_cg_count_procs(fd);
        if (n->procs < 0)
                n->procs = -1;
}

static int node_new(const char *parent_path, const char *name, unsigned depth, const char *kind,
                    AgStatusNode **ret) {
        AgStatusNode *n = calloc(1, sizeof *n);

        if (!n)
                return -ENOMEM;
        n->depth = depth;
        n->kind = kind;
        n->lingering = -1;
        n->name = strdup(name);
        if (!n->name || asprintf(&n->path, "%s/%s", parent_path, name) < 0) {
                free(n->name);
                free(n);
                return -ENOMEM;
        }
        *ret = n;
        return 0;
}

static int add_child(AgStatusNode *parent, AgStatusNode *child) {
        AgStatusNode **v = realloc(parent->children, (parent->n_children + 1) * sizeof *v);

        if (!v)
                return -ENOMEM;
        v[parent->n_children++] = child;
        parent->children = v;
        return 0;
}

static int cmp_nodes(const void *a, const void *b) {
        return strverscmp((*(AgStatusNode *const *) a)->name, (*(AgStatusNode *const *) b)->name);
}

/* Adds a child for each subdirectory of fd that match() accepts, at most max
 * (then parent->truncated), with its values. For each child, descend (may be
 * NULL) is called with its fd. */
static int add_units(AgStatusNode *parent, int fd, unsigned depth, size_t max,
                     bool (*match)(const char *name, void *userdata),
                     void *userdata, const char *(*kind)(const char *name),
                     int (*descend)(AgStatusNode *child, int fd, void *userdata)) {
        struct dirent *de;
        DIR *d;
        int r = 0;

        r = ag_opendir_dup(fd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_close_ int cfd = -EBADF;
                AgStatusNode *child = NULL;

                if (de->d_type != DT_DIR || !match(de->d_name, userdata))
                        continue;
                if (parent->n_children >= max) {
                        parent->truncated = true;
                        break;
                }
                cfd = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0)
                        continue;       /* gone meanwhile */
                r = node_new(parent->path, de->d_name, depth, kind(de->d_name), &child);
                if (r < 0)
                        break;
                read_values(cfd, child);
                /* a session-N.scope: the login's own process (sshd, login, su)
                 * is in it while it is open */
                if (strcmp(child->kind, "session") == 0 && parent->is_user) {
                        child->is_session = true;
                        child->lingering = ag_status_login_closed(cfd, parent->uid);
                }
                r = add_child(parent, child);
                if (r < 0) {
                        free(child->name);
                        free(child->path);
                        free(child);
                        break;
                }
                if (descend) {
                        r = descend(child, cfd, userdata);
                        if (r < 0)
                                break;
                }
        }
        closedir(d);
        if (parent->n_children > 1)
                qsort(parent->children, parent->n_children, sizeof *parent->children, cmp_nodes);
        return r < 0 ? r : 0;
}

static bool has_prefix_suffix(const char *s, const char *prefix, const char *suffix) {
        size_t n = strlen(s), p = strlen(prefix), x = strlen(suffix);

        return n > p + x && strncmp(s, prefix, p) == 0 && strcmp(s + n - x, suffix) == 0;
}

static bool match_terminal(const char *name, void *userdata) {
        (void) userdata;
        return has_prefix_suffix(name, AG_TERMINAL_SCOPE_PREFIX, ".scope") ||
               has_prefix_suffix(name, AG_RUN_SCOPE_PREFIX, ".scope");
}

static const char *kind_terminal(const char *name) {
        return strncmp(name, AG_RUN_SCOPE_PREFIX, strlen(AG_RUN_SCOPE_PREFIX)) == 0 ? "run" : "terminal";
}

/* user@UID.service: the terminals' and commands' scopes in its app.slice */
static int descend_manager(AgStatusNode *manager, int fd, void *userdata) {
        _cleanup_close_ int afd = -EBADF;
        _cleanup_free_ char *path = NULL;
        char *saved;
        int r;

        (void) userdata;
        afd = openat(fd, AG_TERMINAL_SCOPE_SLICE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (afd < 0)
                return 0;
        /* the scopes are named "app.slice/autogroup-sid-S.scope" below the manager */
        if (asprintf(&path, "%s/%s", manager->path, AG_TERMINAL_SCOPE_SLICE) < 0)
                return -ENOMEM;
        saved = manager->path;
        manager->path = path;
        r = add_units(manager, afd, 3, SD_STATUS_MAX_CHILDREN, match_terminal, NULL, kind_terminal, NULL);
        manager->path = saved;
        for (size_t i = 0; r >= 0 && i < manager->n_children; i++) {
                char *name = NULL;

                if (asprintf(&name, "%s/%s", AG_TERMINAL_SCOPE_SLICE, manager->children[i]->name) < 0)
                        return -ENOMEM;
                free(manager->children[i]->name);
                manager->children[i]->name = name;
        }
        return r;
}

/* userdata: the uid_t of the user slice being read */
static bool match_user_unit(const char *name, void *userdata) {
        const uid_t *uid = userdata;
        char manager[64];

        snprintf(manager, sizeof manager, "user@%lu.service", (unsigned long) *uid);
        return has_prefix_suffix(name, "session-", ".scope") || strcmp(name, manager) == 0;
}

static const char *kind_user_unit(const char *name) {
        return strncmp(name, "session-", 8) == 0 ? "session" : "manager";
}

static int descend_user_unit(AgStatusNode *child, int fd, void *userdata) {
        (void) userdata;
        if (strcmp(child->kind, "manager") == 0)
                return descend_manager(child, fd, NULL);
        return 0;
}

/* "user-UID.slice": its uid */
static bool user_slice_uid(const char *name, uid_t *ret) {
        unsigned long v;
        char num[32];
        size_t n;

        if (!has_prefix_suffix(name, "user-", ".slice"))
                return false;
        n = strlen(name) - strlen("user-") - strlen(".slice");
        if (n >= sizeof num)
                return false;
        memcpy(num, name + 5, n);
        num[n] = 0;
        if (ag_safe_atoul(num, (uid_t) -2, &v) < 0)
                return false;
        *ret = (uid_t) v;
        return true;
}

/* userdata: the uid_t of the only user to show, (uid_t) -1 for all */
static bool match_user_slice(const char *name, void *userdata) {
        const uid_t *only_uid = userdata;
        uid_t uid;

        return user_slice_uid(name, &uid) && (*only_uid == (uid_t) -1 || uid == *only_uid);
}

static const char *kind_user_slice(const char *name) {
        (void) name;
        return "user";
}

static int descend_user_slice(AgStatusNode *slice, int fd, void *userdata) {
        struct passwd *pw;
        uid_t uid;

        (void) userdata;
        if (!user_slice_uid(slice->name, &uid))
                return 0;
        slice->is_user = true;
        slice->uid = uid;
        pw = getpwuid(uid);
        if (pw && !(slice->user_name = strdup(pw->pw_name)))
                return -ENOMEM;
        return add_units(slice, fd, 2, SD_STATUS_MAX_CHILDREN, match_user_unit, &uid, kind_user_unit, descend_user_unit);
}

int ag_status_systemd_collect(const AgHierarchy *h, uid_t only_uid, AgStatus **ret) {
        _cleanup_close_ int mfd = -EBADF, ufd = -EBADF;
        AgStatus *s;
        int r;

        r = ag_hierarchy_open_v2(h, &mfd);
        if (r < 0)
                return r;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->version = 2;
        s->systemd = true;
        s->cpu_source = "cpu.stat";
        s->only_one_user = only_uid != (uid_t) -1;
        s->only_uid = only_uid;
        if (!(s->mount = strdup(h->mount)) || !(s->root = strdup("/user.slice"))) {
                ag_status_free(s);
                return -ENOMEM;
        }
        ufd = openat(mfd, "user.slice", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (ufd < 0) {
                *ret = s;       /* no tree: nobody logged in through logind */
                return 0;
        }
        s->tree = calloc(1, sizeof *s->tree);
        if (!s->tree || !(s->tree->name = strdup("user.slice")) || !(s->tree->path = strdup("/user.slice"))) {
                ag_status_free(s);
                return -ENOMEM;
        }
        s->tree->kind = "slice";
        read_values(ufd, s->tree);
        r = add_units(s->tree, ufd, 1, AG_STATUS_MAX_NODES, match_user_slice, &only_uid, kind_user_slice, descend_user_slice);
        if (r < 0) {
                ag_status_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

/* One property of explain: the rule's value (or none), systemd's own
 * setting, which applies, and a conflict. */
static void explain_prop(const AgPolicy *policy, const AgUnitValues *v, const AgSliceState *st, bool inspected,
                         AgSliceProp p, FILE *out) {
        const AgSliceSetting *s = &st->prop[p];
        const AgRule *rule = p == AG_SLICE_WEIGHT ? (v->weight_set && policy->idle && policy->source[AG_ITEM_IDLE] ?
                                                    policy->source[AG_ITEM_IDLE] : policy->source[AG_ITEM_WEIGHT]) :
                policy->source[AG_ITEM_MAX];
        bool want = p == AG_SLICE_WEIGHT ? v->weight_set : v->quota_set;
        const char *name = ag_slice_prop_name(p);
        char value[32];

        ag_slice_value_format(p, p == AG_SLICE_WEIGHT ? v->cpu_weight : v->cpu_quota_per_sec_usec, value,
                              sizeof value);
        if (want)
                fprintf(out, "  %s: rule %s:%u wants %s", name, rule && rule->file ? rule->file : "?",
                        rule ? rule->line : 0, value);
        else
                fprintf(out, "  %s: no rule sets it", name);
        if (!inspected)
                fprintf(out, "%s\n", want ? ", written at login unless systemd's configuration sets it" :
                        ", left to systemd");
        else if (want && s->admin)
                fprintf(out, "; CONFLICT: systemd's %s sets %s=%s, which wins: the rule is not applied\n",
                        s->admin_path, name, s->admin_value);
        else if (want)
                fprintf(out, "; written by pam_autogroup at login (runtime drop-in, %s)\n",
                        s->ours ? "in place" : "not written yet");
        else if (s->admin)
                fprintf(out, "; systemd's %s sets %s=%s\n", s->admin_path, name, s->admin_value);
        else if (s->ours)
                fprintf(out, "; pam_autogroup's earlier runtime value is still in place, taken back at the "
                        "user's next login\n");
        else
                fprintf(out, "; left to systemd (not set)\n");
}

void ag_explain_systemd(const AgPolicy *policy, uid_t uid, FILE *out) {
        static const AgSystemdPaths paths = {
                .control_dir = AG_SYSTEMD_CONTROL_DIR,
                .record_dir = AG_SYSTEMD_RECORD_DIR,
        };
        AgSliceState st;
        AgUnitValues v;
        char slice[64], weight[32], quota[32], why[256] = "";
        bool inspected;

        ag_policy_to_unit_values(policy, &v);
        if (ag_user_slice_name(uid, slice, sizeof slice) < 0)
                return;
        fprintf(out, "mode: systemd (systemd on cgroup v2 with cpu, what mode=auto picks here): "
                "no cgroup of pam_autogroup's own; unit properties instead\n");
        inspected = ag_systemd_inspect_user_slice(&paths, uid, &st, why, sizeof why) >= 0 && st.live_known;
        if (inspected) {
                ag_slice_value_format(AG_SLICE_WEIGHT, st.live_weight, weight, sizeof weight);
                ag_slice_value_format(AG_SLICE_QUOTA, st.live_quota_per_sec_usec, quota, sizeof quota);
                fprintf(out, "%s now (from systemd, %s): CPUWeight=%s CPUQuota=%s\n", slice,
                        st.active_state[0] ? st.active_state : "?", weight, quota);
        } else
                fprintf(out, "%s: cannot ask systemd (%s); what the rules would give:\n", slice, why);
        fprintf(out, "precedence: systemd's own settings of the slice (drop-ins, set-property) win; "
                "then the rules below (runtime properties, /run/systemd/system.control/%s.d); "
                "then systemd's defaults\n", slice);
        explain_prop(policy, &v, &st, inspected, AG_SLICE_WEIGHT, out);
        explain_prop(policy, &v, &st, inspected, AG_SLICE_QUOTA, out);
        if (policy->sessions)
                fprintf(out, "session-N.scope CPUWeight=%u (handed to pam_systemd, which must come after "
                        "pam_autogroup)\n", AG_WEIGHT_DEFAULT);
        else
                fprintf(out, "session-N.scope: systemd's default weight (sessions no)\n");
        fprintf(out, "terminals (autogroup enter): user@%ju.service/%s/%s<sid>.scope CPUWeight=%llu\n",
                (uintmax_t) uid, AG_TERMINAL_SCOPE_SLICE, AG_TERMINAL_SCOPE_PREFIX,
                (unsigned long long) AG_TERMINAL_SCOPE_WEIGHT);
        fprintf(out, "commands (autogroup run): user@%ju.service/%s/%s<pid>.scope CPUWeight= of the latency "
                "class at interactive %u (else %llu)\n", (uintmax_t) uid, AG_TERMINAL_SCOPE_SLICE, AG_RUN_SCOPE_PREFIX,
                policy->interactive, (unsigned long long) AG_TERMINAL_SCOPE_WEIGHT);
        if (policy->pool[0])
                fprintf(out, "pool %s: not applied in the systemd mode\n", policy->pool);
}
