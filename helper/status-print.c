/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* "autogroup status", the printing half: the collected tree as a table drawn
 * like systemd-cgls, or as JSON. Names a user chose are escaped. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "status.h"
#include "util.h"

/* ---- formatting ---- */

void ag_format_usec(long long usec, char *buf, size_t size) {
        if (usec < 0)
                snprintf(buf, size, "-");
        else if (usec < 1000000)
                snprintf(buf, size, "%lldms", usec / 1000);
        else if (usec < 60LL * 1000000)
                snprintf(buf, size, "%lld.%03llds", usec / 1000000, usec / 1000 % 1000);
        else if (usec < 3600LL * 1000000)
                snprintf(buf, size, "%lldmin %lld.%llds", usec / 60000000, usec / 1000000 % 60, usec / 100000 % 10);
        else
                snprintf(buf, size, "%lldh %lldmin", usec / 3600000000LL, usec / 60000000 % 60);
}

void ag_format_cap(long long quota_us, unsigned long period_us, char *buf, size_t size) {
        if (quota_us == -1)
                snprintf(buf, size, "none");
        else if (quota_us < 0 || period_us == 0)
                snprintf(buf, size, "-");
        else {
                long long tenths = quota_us * 1000 / (long long) period_us;
                if (tenths % 10 == 0)
                        snprintf(buf, size, "%lld%%", tenths / 10);
                else
                        snprintf(buf, size, "%lld.%lld%%", tenths / 10, tenths % 10);
        }
}

/* A group name as printed: anything not printable ASCII as \xNN, so that a
 * name a user chose cannot drive root's terminal. Returns its width. */
static size_t sanitize(const char *s, char *buf, size_t size) {
        return strlen(ag_escape_bytes(s, buf, size));
}

enum { COL_WEIGHT, COL_SHARES, COL_CAP, COL_IDLE, COL_PROCS, COL_CPU, _COL_MAX };

typedef struct Row {
        char *prefix;                  /* tree drawing */
        size_t prefix_width;
        char label[1400];
        size_t label_width;
        char col[_COL_MAX][32];
} Row;

typedef struct Rows {
        Row *v;
        size_t n, allocated;
} Rows;

static Row *row_add(Rows *rows) {
        if (rows->n == rows->allocated) {
                size_t na = rows->allocated ? rows->allocated * 2 : 32;
                Row *p = realloc(rows->v, na * sizeof *p);
                if (!p)
                        return NULL;
                rows->v = p;
                rows->allocated = na;
        }
        Row *r = &rows->v[rows->n++];
        memset(r, 0, sizeof *r);
        return r;
}

static void fill_row(Row *row, const AgStatusNode *n) {
        char name[1024];

        if (n->depth == 0)
                row->label_width = sanitize(n->path, row->label, sizeof row->label);
        else if (n->is_lane) {
                /* beside the tree: its path from the hierarchy's root */
                sanitize(n->path, name, sizeof name);
                snprintf(row->label, sizeof row->label, "%s (latency lane)", name);
                row->label_width = strlen(row->label);
        } else {
                sanitize(n->name, name, sizeof name);
                if (n->is_user && n->user_name) {
                        char user[256];
                        sanitize(n->user_name, user, sizeof user);
                        snprintf(row->label, sizeof row->label, "%s (%s)", name, user);
                } else if (n->is_session && n->lingering == 1)
                        /* its login closed: what runs there outlived it */
                        snprintf(row->label, sizeof row->label, "%s (lingering)", name);
                else
                        snprintf(row->label, sizeof row->label, "%s", name);
                row->label_width = strlen(row->label);
        }
        if (n->weight >= 0)
                snprintf(row->col[COL_WEIGHT], 32, "%ld", n->weight);
        else
                snprintf(row->col[COL_WEIGHT], 32, "-");
        if (n->shares >= 0)
                snprintf(row->col[COL_SHARES], 32, "%ld", n->shares);
        else
                snprintf(row->col[COL_SHARES], 32, "-");
        ag_format_cap(n->quota_us, n->period_us, row->col[COL_CAP], 32);
        snprintf(row->col[COL_IDLE], 32, "%s", n->idle < 0 ? "-" : n->idle ? "yes" : "no");
        if (n->procs >= 0)
                snprintf(row->col[COL_PROCS], 32, "%d", n->procs);
        else
                snprintf(row->col[COL_PROCS], 32, "-");
        ag_format_usec(n->cpu_usec, row->col[COL_CPU], 32);
}

static int build_rows(Rows *rows, const AgStatusNode *n, const char *prefix, size_t prefix_width, bool unicode) {
        /* the children, then a user's latency lane, then "..." */
        size_t n_rows = n->n_children + (n->lane ? 1 : 0) + (n->truncated ? 1 : 0);

        for (size_t i = 0; i < n_rows; i++) {
                bool last = i + 1 == n_rows;
                const char *branch = unicode ? (last ? "└─" : "├─") : (last ? "`-" : "|-");
                const char *cont = unicode ? (last ? "  " : "│ ") : (last ? "  " : "| ");
                Row *row = row_add(rows);

                if (!row || asprintf(&row->prefix, "%s%s", prefix, branch) < 0) {
                        if (row)
                                row->prefix = NULL;
                        return -ENOMEM;
                }
                row->prefix_width = prefix_width + 2;
                if (i == n->n_children && n->lane) {
                        fill_row(row, n->lane);
                        continue;
                }
                if (i >= n->n_children) {
                        /* the bounds stopped the listing */
                        snprintf(row->label, sizeof row->label, "...");
                        row->label_width = 3;
                        continue;
                }
                fill_row(row, n->children[i]);

                _cleanup_free_ char *sub = NULL;
                if (asprintf(&sub, "%s%s", prefix, cont) < 0)
                        return -ENOMEM;
                int r = build_rows(rows, n->children[i], sub, prefix_width + 2, unicode);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Where the figures come from, below the table. */
static void print_footer(const AgStatus *s, FILE *f) {
        if (s->systemd)
                fprintf(f, "\nsystemd mode, cgroup v2 at %s; CPU time from cpu.stat. pam_autogroup sets the user "
                        "slices'\nCPUWeight= and CPUQuota=, the sessions' CPUWeight= (through pam_systemd) and "
                        "starts the\nterminals' autogroup-sid-*.scope units in each user's manager.\n", s->mount);
        else if (s->version == 2)
                fprintf(f, "\ncgroup v2 at %s; CPU time from cpu.stat.\n", s->mount);
        else if (s->acct_mount)
                fprintf(f, "\ncgroup v1 at %s; CPU time from cpuacct.usage of the same group in the cpuacct "
                        "hierarchy at %s,\nwhich mirrors sessions and the levels above them: a leaf's time counts "
                        "in its session's (\"-\" for leaves).\n%s", s->mount, s->acct_mount,
                        s->lanes ? "A latency lane has no mirror: its processes' time counts in their sessions' "
                                   "(\"-\" for lanes).\n" : "");
        else if (s->cpu_source)
                fprintf(f, "\ncgroup v1 at %s; CPU time from cpuacct.usage of each group (cpu and cpuacct "
                        "mounted together).\n%s", s->mount,
                        s->lanes ? "A latency lane's time is its own, beside the tree: not in its user's group's.\n"
                                 : "");
        else
                fprintf(f, "\ncgroup v1 at %s; no cpuacct hierarchy, so no CPU time.\n", s->mount);
        if (s->only_one_user)
                fprintf(f, "Showing only the groups of user-%ju%s.\n", (uintmax_t) s->only_uid,
                        getuid() != 0 ? " (only root sees every user)" : "");
}

void ag_status_print(const AgStatus *s, FILE *f, bool unicode) {
        static const char *const header[_COL_MAX] = { "WEIGHT", "SHARES", "CAP", "IDLE", "PROCS", "CPU" };
        Rows rows = {};
        size_t wname = strlen("CGROUP"), w[_COL_MAX];
        int r = 0;

        if (!s->tree) {
                if (s->systemd)
                        fprintf(f, "No user slices: %s%s does not exist (nobody has logged in through logind).\n",
                                s->mount, s->root);
                else
                        fprintf(f, "No groups below this root: %s%s does not exist.\n", s->mount, s->root);
                return;
        }

        Row *top = row_add(&rows);
        if (!top)
                r = -ENOMEM;
        else {
                top->prefix = strdup("");
                fill_row(top, s->tree);
                r = top->prefix ? build_rows(&rows, s->tree, "", 0, unicode) : -ENOMEM;
        }
        if (r < 0) {
                fprintf(f, "out of memory\n");
                goto finish;
        }

        for (size_t c = 0; c < _COL_MAX; c++)
                w[c] = strlen(header[c]);
        for (size_t i = 0; i < rows.n; i++) {
                size_t lw = rows.v[i].prefix_width + rows.v[i].label_width;
                if (lw > wname)
                        wname = lw;
                for (size_t c = 0; c < _COL_MAX; c++)
                        if (strlen(rows.v[i].col[c]) > w[c])
                                w[c] = strlen(rows.v[i].col[c]);
        }

        fprintf(f, "%-*s", (int) wname, "CGROUP");
        for (size_t c = 0; c < _COL_MAX; c++) {
                if (c == COL_SHARES && s->version != 1)
                        continue;
                fprintf(f, "  %*s", (int) w[c], header[c]);
        }
        fputc('\n', f);
        for (size_t i = 0; i < rows.n; i++) {
                const Row *row = &rows.v[i];

                fprintf(f, "%s%s%*s", row->prefix ? row->prefix : "", row->label,
                        (int) (wname - row->prefix_width - row->label_width), "");
                if (strcmp(row->label, "...") != 0 || row->col[COL_CPU][0])
                        for (size_t c = 0; c < _COL_MAX; c++) {
                                if (c == COL_SHARES && s->version != 1)
                                        continue;
                                fprintf(f, "  %*s", (int) w[c], row->col[c]);
                        }
                fputc('\n', f);
        }
        print_footer(s, f);

finish:
        for (size_t i = 0; i < rows.n; i++)
                free(rows.v[i].prefix);
        free(rows.v);
}

/* ---- JSON ---- */

static void json_num(FILE *f, const char *key, long long v, bool valid) {
        fprintf(f, ",\"%s\":", key);
        if (valid)
                fprintf(f, "%lld", v);
        else
                fputs("null", f);
}

/* A group's values, from "weight" to "cpu_usec". */
static void json_values(FILE *f, const AgStatus *s, const AgStatusNode *n) {
        json_num(f, "weight", n->weight, n->weight >= 0);
        if (s->version == 1)
                json_num(f, "shares", n->shares, n->shares >= 0);
        if (n->quota_us == -1)
                fputs(",\"cap_percent\":null,\"quota_us\":null", f);
        else {
                json_num(f, "cap_percent", n->period_us ? n->quota_us * 100 / (long long) n->period_us : 0,
                         n->quota_us >= 0 && n->period_us > 0);
                json_num(f, "quota_us", n->quota_us, n->quota_us >= 0);
        }
        json_num(f, "period_us", (long long) n->period_us, n->period_us > 0);
        fprintf(f, ",\"idle\":%s", n->idle < 0 ? "null" : n->idle ? "true" : "false");
        json_num(f, "procs", n->procs, n->procs >= 0);
        json_num(f, "cpu_usec", n->cpu_usec, n->cpu_usec >= 0);
}

/* A user's latency lane: {"name","path","kind":"lane", its values}, or null. */
static void json_lane(FILE *f, const AgStatus *s, const AgStatusNode *lane) {
        fputs(",\"lane\":", f);
        if (!lane) {
                fputs("null", f);
                return;
        }
        fputs("{\"name\":", f);
        ag_json_string(f, lane->name);
        fputs(",\"path\":", f);
        ag_json_string(f, lane->path);
        fputs(",\"kind\":\"lane\"", f);
        json_values(f, s, lane);
        fputc('}', f);
}

static void json_node(FILE *f, const AgStatus *s, const AgStatusNode *n) {
        static const char *const kinds[] = { "root", "user", "session", "leaf" };

        fputs("{\"name\":", f);
        ag_json_string(f, n->name);
        fputs(",\"path\":", f);
        ag_json_string(f, n->path);
        /* pools: below a pool every level is one deeper */
        unsigned level = n->in_pool ? n->depth - 1 : n->depth;
        fprintf(f, ",\"kind\":\"%s\"", n->kind ? n->kind : n->is_pool ? "pool" :
                level < ELEMENTSOF(kinds) ? kinds[level] : "group");
        if (n->is_user) {
                fprintf(f, ",\"uid\":%ju,\"user\":", (uintmax_t) n->uid);
                if (n->user_name)
                        ag_json_string(f, n->user_name);
                else
                        fputs("null", f);
                json_lane(f, s, n->lane);
        }
        if (n->is_session)
                fprintf(f, ",\"lingering\":%s", n->lingering < 0 ? "null" : n->lingering ? "true" : "false");
        json_values(f, s, n);
        fprintf(f, ",\"truncated\":%s,\"children\":[", n->truncated ? "true" : "false");
        for (size_t i = 0; i < n->n_children; i++) {
                if (i > 0)
                        fputc(',', f);
                json_node(f, s, n->children[i]);
        }
        fputs("]}", f);
}

void ag_status_print_json(const AgStatus *s, FILE *f) {
        fputs("{\"hierarchy\":", f);
        ag_json_string(f, s->mount);
        fprintf(f, ",\"version\":%d,\"mode\":\"%s\",\"root\":", s->version, s->systemd ? "systemd" : "cgroupfs");
        ag_json_string(f, s->root);
        fputs(",\"cpu_source\":", f);
        if (s->cpu_source)
                ag_json_string(f, s->cpu_source);
        else
                fputs("null", f);
        fputs(",\"cpuacct_mount\":", f);
        if (s->acct_mount)
                ag_json_string(f, s->acct_mount);
        else
                fputs("null", f);
        fputs(",\"only_uid\":", f);
        if (s->only_one_user)
                fprintf(f, "%ju", (uintmax_t) s->only_uid);
        else
                fputs("null", f);
        fputs(",\"tree\":", f);
        if (s->tree)
                json_node(f, s, s->tree);
        else
                fputs("null", f);
        fputs("}\n", f);
}
