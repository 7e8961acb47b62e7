/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>

#include "check.h"
#include "status.h"
#include "systemd.h"
#include "latency.h"
#include "lint.h"
#include "util.h"

void ag_config_error_print(FILE *out, const char *prefix, const char *file, unsigned line, const char *message,
                          const char *line_note) {
        if (file && line > 0)
                fprintf(out, "%s%s:%u: %s%s\n", prefix, file, line, message, line_note);
        else if (file)
                fprintf(out, "%s%s: %s\n", prefix, file, message);
        else
                fprintf(out, "%s%s\n", prefix, message);
}

/* ---- check's messages: at most AG_CHECK_SHOWN_MAX errors and as many
 * warnings of one file in a row, then how many more there were */

#define MSG_NUL "invalid character (NUL)"      /* lib/config/config-parse.c's */

static void report_flush(AgCheckReport *rep) {
        if (!rep->file)
                return;
        if (rep->hidden[0] > 0)
                fprintf(rep->out, "%s: %u more error%s not shown\n", rep->file, rep->hidden[0],
                        rep->hidden[0] == 1 ? "" : "s");
        if (rep->hidden[1] > 0)
                fprintf(rep->out, "%s: %u more warning%s not shown\n", rep->file, rep->hidden[1],
                        rep->hidden[1] == 1 ? "" : "s");
        if (rep->nul_lines > 0)
                fprintf(rep->out, "%s: %u line%s hold%s NUL bytes: a binary file, not a configuration\n", rep->file,
                        rep->nul_lines, rep->nul_lines == 1 ? "" : "s", rep->nul_lines == 1 ? "s" : "");
        free(rep->file);
        rep->file = NULL;
        rep->shown[0] = rep->shown[1] = rep->hidden[0] = rep->hidden[1] = rep->nul_lines = 0;
}

void ag_check_report_done(AgCheckReport *rep) {
        report_flush(rep);
}

/* One message (warning: 0 an error, 1 a warning) of file (NULL: none). */
static void report(AgCheckReport *rep, int warning, const char *file, unsigned line, const char *message) {
        if (!file || !rep->file || strcmp(file, rep->file) != 0) {
                report_flush(rep);
                rep->file = file ? strdup(file) : NULL;        /* NULL (no memory): no bound for it */
        }
        if (warning && rep->warnings < UINT_MAX)
                rep->warnings++;
        if (!warning && line > 0 && strcmp(message, MSG_NUL) == 0)
                rep->nul_lines++;
        if (rep->file && rep->shown[warning] >= AG_CHECK_SHOWN_MAX) {
                rep->hidden[warning]++;
                return;
        }
        rep->shown[warning]++;
        ag_config_error_print(rep->out, warning ? "warning: " : "", file, line, message, "");
}

static void report_error(void *userdata, const char *file, unsigned line, const char *message) {
        report(userdata, 0, file, line, message);
}

void ag_check_report_warning(void *userdata, const char *file, unsigned line, const char *message) {
        report(userdata, 1, file, line, message);
}

int ag_check_config(const char *path, AgCheckReport *rep, AgConfig **ret) {
        int r = ag_config_load(path, 0, report_error, rep, ret);

        report_flush(rep);
        return r;
}

/* The name service's answer for a user or group name: 1 known, 0 unknown
 * (an answer without an entry), -errno when it could not answer (glibc
 * returns the error of an unavailable source, ENOENT included). */
static int nss_lookup(void *userdata, AgDomainKind kind, const char *name) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 4096;
        int r;

        (void) userdata;
        for (;;) {
                char *b = realloc(buf, size);
                void *res = NULL;

                if (!b)
                        return -ENOMEM;
                buf = b;
                if (kind == AG_DOMAIN_USER) {
                        struct passwd pw;
                        r = getpwnam_r(name, &pw, buf, size, (struct passwd **) &res);
                } else {
                        struct group gr;
                        r = getgrnam_r(name, &gr, buf, size, (struct group **) &res);
                }
                if (r == ERANGE && size < AG_CHECK_NSS_BUF_MAX) {
                        size *= 2;
                        continue;
                }
                if (r > 0)
                        return r == ENOMEM ? -EIO : -r;        /* -ENOMEM would end the check */
                if (r < 0)
                        return -EIO;
                return res != NULL;
        }
}

int ag_check_lint(const AgConfig *config, AgCheckReport *rep) {
        int r = ag_config_lint(config, nss_lookup, NULL, ag_check_report_warning, rep);

        report_flush(rep);
        return r;
}

int ag_check_pam_stacks(const AgPamConf *c, const AgPamHostFacts *facts, AgCheckReport *rep) {
        int r;

        if (!c)
                return 0;
        r = ag_pamconf_check_stacks(c, facts, ag_check_report_warning, rep);
        report_flush(rep);
        return r;
}

int ag_check_print_pam_lines(const AgPamConf *c, const char *default_conf, FILE *out) {
        if (!c || c->n_lines == 0)
                return 0;
        fprintf(out, "%zu line%s of %s in %s (the services that reach each, its options in effect):\n",
                c->n_lines, c->n_lines == 1 ? "" : "s", AG_PAM_MODULE_NAME, c->dir);
        for (size_t i = 0; i < c->n_lines; i++) {
                _cleanup_free_ char *where = NULL, *options = NULL;
                int r;

                r = ag_pamconf_describe(&c->lines[i], &where);
                if (r >= 0)
                        r = ag_pamconf_options(&c->lines[i], default_conf, &options);
                if (r < 0)
                        return r;
                fprintf(out, "  %s: %s\n", where, options);
        }
        return 0;
}

void ag_item_value_format(AgItem item, long value, char *buf, size_t size) {
        switch (item) {
        case AG_ITEM_WEIGHT:
                snprintf(buf, size, "%ld", value);
                break;
        case AG_ITEM_MAX:
        case AG_ITEM_LANE_CAP:
                if (value == AG_MAX_NONE)
                        snprintf(buf, size, "none");
                else
                        snprintf(buf, size, "%ld%%", value);
                break;
        case AG_ITEM_LATENCY:
                snprintf(buf, size, "%s", ag_latency_to_string((AgLatency) value) ?: "?");
                break;
        case AG_ITEM_INTERACTIVE:
        case AG_ITEM_LEAVES:
        case AG_ITEM_LEAVES_NOTTY:
        case AG_ITEM_SESSIONS_MAX:
                snprintf(buf, size, "%ld", value);
                break;
        default:
                snprintf(buf, size, "%s", value ? "yes" : "no");
                break;
        }
}

void ag_rule_format(const AgRule *rule, char *buf, size_t size) {
        char domain[AG_NAME_MAX + 64], value[AG_POOL_NAME_MAX + 16];

        switch (rule->kind) {
        case AG_DOMAIN_ALL:
                snprintf(domain, sizeof domain, "*");
                break;
        case AG_DOMAIN_GROUP:
                snprintf(domain, sizeof domain, "@%s", rule->name);
                break;
        case AG_DOMAIN_USER:
                snprintf(domain, sizeof domain, "%s", rule->name);
                break;
        case AG_DOMAIN_RANGE: {
                /* as limits.conf writes them: ":N" exactly N, "N:" N and up */
                char lo[32] = "", hi[32] = "";
                if (rule->uid_min != rule->uid_max)
                        snprintf(lo, sizeof lo, "%ju", (uintmax_t) rule->uid_min);
                if (rule->uid_max != (uid_t) -1 - 1 || rule->uid_min == rule->uid_max)
                        snprintf(hi, sizeof hi, "%ju", (uintmax_t) rule->uid_max);
                snprintf(domain, sizeof domain, "%s:%s", lo, hi);
                break;
        }
        /* pools */
        case AG_DOMAIN_POOL:
                snprintf(domain, sizeof domain, AG_POOL_DOMAIN_PREFIX "%s", rule->name);
                break;
        default:
                snprintf(domain, sizeof domain, "?");
        }
        if (rule->item == AG_ITEM_POOL)
                snprintf(value, sizeof value, "%s", rule->str ? rule->str : "none");
        else
                ag_item_value_format(rule->item, rule->value, value, sizeof value);
        snprintf(buf, size, "%s %s %s", domain, ag_item_to_string(rule->item), value);
}

AgNssUser *ag_nss_user_free(AgNssUser *u) {
        if (!u)
                return NULL;
        free(u->name);
        free(u->groups);
        free(u);
        return NULL;
}

int ag_nss_user_get(const char *name, AgNssUser **ret) {
        struct passwd *pw;
        unsigned long v;
        AgNssUser *u;
        int n = 32;

        errno = 0;
        pw = getpwnam(name);
        if (!pw && ag_safe_atoul(name, (uid_t) -2, &v) >= 0) {
                errno = 0;
                pw = getpwuid((uid_t) v);
        }
        if (!pw)
                return errno != 0 && errno != ENOENT && errno != ESRCH ? negative_errno() : -ENOENT;

        u = calloc(1, sizeof *u);
        if (!u)
                return -ENOMEM;
        u->uid = pw->pw_uid;
        u->gid = pw->pw_gid;
        u->name = strdup(pw->pw_name);
        if (!u->name) {
                ag_nss_user_free(u);
                return -ENOMEM;
        }
        for (unsigned tries = 0; tries < 8; tries++) {
                gid_t *g = realloc(u->groups, (size_t) n * sizeof *g);
                int m = n;

                if (!g) {
                        ag_nss_user_free(u);
                        return -ENOMEM;
                }
                u->groups = g;
                if (getgrouplist(u->name, u->gid, u->groups, &m) >= 0) {
                        u->n_groups = m;
                        break;
                }
                n = m > n ? m : n * 2;
        }
        *ret = u;
        return 0;
}

int ag_nss_in_group(void *userdata, const char *group) {
        const AgNssUser *u = userdata;

        /* The module's rule (lib/config/policy.c): "no such group" is a no, any
         * error (ENOENT too) is NSS not answering. */
        return ag_nss_group_member(group, u->name, u->gid);
}

/* explain's in_group: ag_nss_in_group, keeping the first error to report it */
typedef struct ExplainGroups {
        const AgNssUser *user;
        const char *failed;             /* the group whose look-up failed */
        int error;                      /* -errno */
} ExplainGroups;

static int explain_in_group(void *userdata, const char *group) {
        ExplainGroups *e = userdata;
        int r;

        r = ag_nss_in_group((void *) e->user, group);
        if (r < 0 && !e->failed) {
                e->failed = group;
                e->error = r;
        }
        return r;
}

static void print_values(const AgPolicy *p, int version, FILE *out) {
        AgCgValues v;
        char buf[64];

        ag_policy_to_values(p, version, &v);
        if (version == 2) {
                (void) ag_format_cpu_max(&v, buf, sizeof buf);
                fprintf(out, "cgroup v2: cpu.weight=%lu cpu.max=\"%s\" cpu.idle=%d\n", v.weight, buf, v.idle ? 1 : 0);
        } else
                fprintf(out, "cgroup v1: cpu.shares=%lu cpu.cfs_quota_us=%lld cpu.cfs_period_us=%lu cpu.idle=%d\n",
                        v.weight, v.quota_us, v.period_us, v.idle ? 1 : 0);
}

/* One line of explain: the item, its value and the rule that set it ("default"
 * when none), the item name in a column of width after indent. */
static void print_source(FILE *out, const char *indent, int width, AgItem item, const char *value,
                         const AgRule *rule) {
        char text[AG_NAME_MAX + 128];

        if (!rule) {
                fprintf(out, "%s%-*s %-6s default\n", indent, width, ag_item_to_string(item), value);
                return;
        }
        ag_rule_format(rule, text, sizeof text);
        fprintf(out, "%s%-*s %-6s from %s:%u (rule text: %s)\n", indent, width, ag_item_to_string(item), value,
                rule->file ? rule->file : "?", rule->line, text);
}

static const AgSystemdPaths check_paths = {
        .control_dir = AG_SYSTEMD_CONTROL_DIR,
        .record_dir = AG_SYSTEMD_RECORD_DIR,
};

/* check: one line per user slice that systemd has now (logged-in users),
 * its live values, and the properties where a rule and systemd's own
 * configuration both set a value (systemd's wins). */
void ag_check_systemd(const AgConfig *config, const AgHierarchy *h, FILE *out) {
        _cleanup_close_ int mfd = -EBADF, ufd = -EBADF;
        struct dirent *de;
        DIR *d = NULL;
        unsigned n = 0, conflicts = 0;

        mfd = open(h->mount, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (mfd >= 0)
                ufd = openat(mfd, "user.slice", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (ufd < 0 || ag_opendir_dup(ufd, &d) < 0) {
                fprintf(out, "systemd mode: no user slices now\n");
                return;
        }
        fprintf(out, "systemd mode: user slices now (values from systemd; systemd's own settings win over the rules)\n");
        while ((de = readdir(d)) && n < AG_STATUS_MAX_NODES) {
                unsigned long uid;
                char num[32], weight[32], quota[32], why[256] = "";
                const char *dot;
                struct passwd *pw;
                AgNssUser *u = NULL;
                AgSliceState st;
                AgUnitValues v;
                AgPolicy p;

                if (strncmp(de->d_name, "user-", 5) != 0 || !(dot = strstr(de->d_name, ".slice")) || dot[6] ||
                    (size_t) (dot - de->d_name - 5) >= sizeof num)
                        continue;
                memcpy(num, de->d_name + 5, (size_t) (dot - de->d_name - 5));
                num[dot - de->d_name - 5] = 0;
                if (ag_safe_atoul(num, (uid_t) -2, &uid) < 0)
                        continue;
                n++;
                pw = getpwuid((uid_t) uid);
                if (!pw || ag_nss_user_get(pw->pw_name, &u) < 0) {
                        fprintf(out, "  %s: no such user\n", de->d_name);
                        continue;
                }
                ag_policy_resolve(config, u->name, u->uid, ag_nss_in_group, u, &p);
                ag_policy_to_unit_values(&p, &v);
                if (ag_systemd_inspect_user_slice(&check_paths, u->uid, &st, why, sizeof why) < 0 || !st.live_known) {
                        fprintf(out, "  %s (%s): cannot ask systemd: %s\n", de->d_name, u->name, why);
                        ag_nss_user_free(u);
                        continue;
                }
                ag_slice_value_format(AG_SLICE_WEIGHT, st.live_weight, weight, sizeof weight);
                ag_slice_value_format(AG_SLICE_QUOTA, st.live_quota_per_sec_usec, quota, sizeof quota);
                fprintf(out, "  %s (%s): CPUWeight=%s CPUQuota=%s\n", de->d_name, u->name, weight, quota);
                for (AgSliceProp q = 0; q < _AG_SLICE_PROP_MAX; q++) {
                        const AgRule *rule = p.source[q == AG_SLICE_WEIGHT ? AG_ITEM_WEIGHT : AG_ITEM_MAX];
                        bool want = q == AG_SLICE_WEIGHT ? v.weight_set : v.quota_set;

                        if (q == AG_SLICE_WEIGHT && !rule)
                                rule = p.source[AG_ITEM_IDLE];
                        if (!want || !st.prop[q].admin)
                                continue;
                        conflicts++;
                        fprintf(out, "    CONFLICT %s: rule %s:%u, but systemd's %s sets %s=%s, which wins\n",
                                ag_slice_prop_name(q), rule && rule->file ? rule->file : "?", rule ? rule->line : 0,
                                st.prop[q].admin_path, ag_slice_prop_name(q), st.prop[q].admin_value);
                }
                ag_nss_user_free(u);
        }
        closedir(d);
        fprintf(out, "systemd mode: %u user slice%s, %u conflict%s (see autogroup explain USER)\n", n,
                n == 1 ? "" : "s", conflicts, conflicts == 1 ? "" : "s");
}

/* Who the user is to the rules: name, uid, groups, root's exception, a
 * group look-up that failed. */
static void explain_user(const AgNssUser *u, const AgConfig *config, const ExplainGroups *groups, FILE *out) {
        fprintf(out, "user %s (uid %ju), groups:", u->name, (uintmax_t) u->uid);
        for (int i = 0; i < u->n_groups; i++) {
                struct group *gr = getgrgid(u->groups[i]);
                if (gr)
                        fprintf(out, " %s", gr->gr_name);
                else
                        fprintf(out, " %ju", (uintmax_t) u->groups[i]);
        }
        fputc('\n', out);
        if (u->uid == 0) {
                size_t skipped = 0;
                for (size_t i = 0; config && i < config->n_rules; i++)
                        skipped += !ag_rule_kind_applies_to_root(config->rules[i].kind);
                fprintf(out, "uid 0: \"*\" and \"@group\" rules do not apply (as in limits.conf), %zu such "
                        "line%s skipped; only a rule naming %s, or a uid range holding 0, does\n", skipped,
                        skipped == 1 ? "" : "s", u->name);
        }
        /* a directory that is down: the module's log line, and what follows from it */
        if (groups->failed)
                fprintf(out, "cannot look up group %s (%s; is the directory down?): @group rules not applied, "
                        "as for a login now\n", groups->failed, strerror(-groups->error));
}

/* Each item's value and the line that set it. */
static void explain_items(const AgPolicy *p, FILE *out) {
        for (AgItem item = 0; item < _AG_ITEM_MAX; item++) {
                const AgRule *rule = p->source[item];
                char value[AG_POOL_NAME_MAX + 16];
                long v;

                switch (item) {
                case AG_ITEM_WEIGHT: v = (long) p->weight; break;
                case AG_ITEM_MAX: v = p->max_pct; break;
                case AG_ITEM_SESSIONS: v = p->sessions; break;
                case AG_ITEM_LATENCY: v = (long) p->latency; break;
                case AG_ITEM_INTERACTIVE: v = (long) p->interactive; break;
                case AG_ITEM_LEAVES: v = (long) p->leaves; break;
                case AG_ITEM_LEAVES_NOTTY: v = (long) p->leaves_notty; break;
                case AG_ITEM_SESSIONS_MAX: v = (long) p->sessions_max; break;
                case AG_ITEM_LANE_CAP: v = p->lane_cap_pct; break;
                default: v = p->idle; break;
                }
                if (item == AG_ITEM_POOL)
                        snprintf(value, sizeof value, "%s", p->pool[0] ? p->pool : "none");
                else
                        ag_item_value_format(item, v, value, sizeof value);
                print_source(out, "", 11, item, value, rule);
        }
}

/* The latency class and what the interactive level gives the leaves. */
static void explain_scheduler(const AgPolicy *p, FILE *out) {
        char sched[96];

        ag_latency_describe(p->latency, sched, sizeof sched);
        fprintf(out, "scheduler: latency class %d (%s): %s, nice kept%s\n", (int) p->latency,
                ag_latency_to_string(p->latency), sched,
                p->latency == AG_LATENCY_NORMAL ? ", nothing changed at login" : "");
        if (p->interactive == 0)
                fprintf(out, "interactive: level 0: autogroup run --latency changes latency only\n");
        else
                fprintf(out, "interactive: level %u: the leaf of autogroup run --latency gets weight "
                        "batch %u, normal %u, interactive %u, audio %u (login/ has %u; the user's share unchanged)\n",
                        p->interactive, ag_latency_leaf_weight(AG_LATENCY_BATCH, p->interactive),
                        ag_latency_leaf_weight(AG_LATENCY_NORMAL, p->interactive),
                        ag_latency_leaf_weight(AG_LATENCY_INTERACTIVE, p->interactive),
                        ag_latency_leaf_weight(AG_LATENCY_AUDIO, p->interactive), AG_WEIGHT_DEFAULT);
}

/* The latency lane (lib/cgroup/lane.h): where run --latency interactive|audio goes at interactive 2. */
static void explain_lane(const AgPolicy *p, uid_t uid, const AgHierarchy *h, FILE *out) {
        char cap[64];

        if (p->interactive < AG_INTERACTIVE_MAX)
                return;
        if (p->lane_cap_pct == AG_MAX_NONE)
                snprintf(cap, sizeof cap, "no cap (lane-cap none)");
        else
                snprintf(cap, sizeof cap, "cap %ld%% of one CPU", p->lane_cap_pct);
        if (uid == 0)
                fprintf(out, "lane: none for uid 0 (root's run --latency interactive|audio uses the class leaves)\n");
        else if (h && h->version == 2)
                fprintf(out, "lane: none on cgroup v2 (a move beside the tree needs the hierarchy root's "
                        "cgroup.procs): run --latency interactive|audio uses the class leaves\n");
        else
                fprintf(out, "lane: <root>.lane-%ju beside the tree (cgroup v1), %s, weight %u: "
                        "run --latency interactive|audio goes there\n", (uintmax_t) uid, cap, AG_WEIGHT_DEFAULT);
}

/* The pool's own limits and the lines that set them (the pool's policy into
 * *ret_pool, untouched without a pool). */
static void explain_pool(const AgConfig *config, const AgPolicy *p, AgPolicy *ret_pool, FILE *out) {
        if (!p->pool[0])
                return;
        ag_pool_policy_resolve(config, p->pool, ret_pool);
        fprintf(out, "pool %s:\n", p->pool);
        for (AgItem item = 0; item < _AG_ITEM_MAX; item++) {
                char value[AG_POOL_NAME_MAX + 16];
                long v;

                if (item != AG_ITEM_WEIGHT && item != AG_ITEM_MAX && item != AG_ITEM_IDLE)
                        continue;
                v = item == AG_ITEM_WEIGHT ? (long) ret_pool->weight : item == AG_ITEM_MAX ? ret_pool->max_pct
                                                                                           : ret_pool->idle;
                ag_item_value_format(item, v, value, sizeof value);
                print_source(out, "  ", 7, item, value, ret_pool->source[item]);
        }
}

/* The cgroupfs mode: the layout, the place and the values written. */
static void explain_layout(const AgPolicy *p, const AgPolicy *pool, const AgNssUser *u, const AgHierarchy *h,
                           FILE *out) {
        if (!p->sessions)
                fprintf(out, "layout: one group for the user (sessions no), no session level\n");
        else
                fprintf(out, "layout: a group for the user, one below it for each session\n");
        if (p->pool[0])
                fprintf(out, "place: <root>/pool-%s/user-%ju (in systemd mode the pool is not applied)\n", p->pool,
                        (uintmax_t) u->uid);
        else
                fprintf(out, "place: <root>/user-%ju (no pool)\n", (uintmax_t) u->uid);
        if (h && h->has_cpu) {
                if (p->pool[0]) {
                        fprintf(out, "pool-%s ", p->pool);
                        print_values(pool, h->version, out);
                        fprintf(out, "user-%ju ", (uintmax_t) u->uid);
                }
                print_values(p, h->version, out);
        } else {
                fprintf(out, "no cpu controller found on this machine; the values would be:\n");
                if (p->pool[0]) {
                        fprintf(out, "pool-%s ", p->pool);
                        print_values(pool, 1, out);
                        fprintf(out, "pool-%s ", p->pool);
                        print_values(pool, 2, out);
                }
                print_values(p, 1, out);
                print_values(p, 2, out);
        }
}

void ag_explain_print(const AgConfig *config, const AgNssUser *u, const AgHierarchy *h, FILE *out) {
        ExplainGroups groups = { .user = u };
        AgPolicy p, pool = {};

        ag_policy_resolve(config, u->name, u->uid, explain_in_group, &groups, &p);
        explain_user(u, config, &groups, out);
        explain_items(&p, out);
        explain_scheduler(&p, out);
        explain_lane(&p, u->uid, h, out);
        /* pools: the pool's own limits and the lines that set them */
        explain_pool(config, &p, &pool, out);

        /* systemd on cgroup v2 with cpu: mode=auto sets unit properties instead */
        if (ag_mode_decide(&(AgModeFacts) { .configured = AG_MODE_AUTO, .booted = ag_systemd_booted(NULL),
                                         .hierarchy = h }) == AG_MODE_SYSTEMD) {
                ag_explain_systemd(&p, u->uid, out);
                return;
        }
        explain_layout(&p, &pool, u, h, out);
}
