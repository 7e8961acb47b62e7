/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libFuzzer target for the config parser and rule resolution:
 *   ag_config_parse_buffer (whole file) and ag_config_parse_line (first line),
 *   ag_policy_resolve for a handful of users, uids and group answers,
 *   ag_policy_to_values and ag_format_cpu_max for both cgroup versions.
 * Every result is checked against the documented invariants; a violation
 * aborts (a fuzzer finding like any sanitizer report).
 *
 * Build and run: tests/fuzz/run.sh [SECONDS] (clang -fsanitize=fuzzer,address,undefined). */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "policy.h"
#include "util.h"
#include "rule-invariants.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                    \
        do {                                                                        \
                if (!(x)) {                                                         \
                        fprintf(stderr, "fuzz-config: invariant failed: %s\n", #x); \
                        abort();                                                    \
                }                                                                   \
        } while (0)

typedef struct ErrCtx {
        unsigned n;
        unsigned last_line;
        const char *file;
} ErrCtx;

static void on_error(void *userdata, const char *file, unsigned line, const char *message) {
        ErrCtx *c = userdata;

        CHECK(file == c->file);
        CHECK(message && *message);
        /* Messages end up in syslog: printable, bounded. */
        size_t n = strlen(message);
        CHECK(n < 512);
        for (size_t i = 0; i < n; i++)
                CHECK((unsigned char) message[i] >= 0x20 && (unsigned char) message[i] < 0x7f);
        /* One message per line, in order. */
        CHECK(line > c->last_line);
        c->last_line = line;
        c->n++;
}

/* Deterministic group membership: the answer depends on the group name and a
 * per-call seed, and every call is counted to check the per-resolve cache. */
typedef struct GroupCtx {
        unsigned seed;
        unsigned calls;
} GroupCtx;

static int in_group(void *userdata, const char *group) {
        GroupCtx *g = userdata;
        unsigned h = g->seed;

        CHECK(group);
        g->calls++;
        for (const char *p = group; *p; p++)
                h = h * 31 + (unsigned char) *p;
        if (h % 7 == 0)
                return -5;                      /* an NSS error: counts as "no" */
        return (int) (h & 1);
}

static void check_rule(const AgConfig *c, const AgRule *r) {
        const char *broken = rule_broken(r);

        if (broken) {
                fprintf(stderr, "fuzz-config: invariant failed: %s\n", broken);
                abort();
        }
        CHECK(r >= c->rules && r < c->rules + c->n_rules);
        CHECK(r->line >= 1);
}

static void check_policy(const AgConfig *c, const AgPolicy *p) {
        char buf[64];
        AgCgValues v;

        CHECK(p->weight >= AG_WEIGHT_MIN && p->weight <= AG_WEIGHT_MAX);
        CHECK(p->max_pct == AG_MAX_NONE || (p->max_pct >= 1 && p->max_pct <= AG_MAX_PCT_MAX));
        CHECK((unsigned) p->latency < _AG_LATENCY_MAX);
        CHECK(p->interactive <= AG_INTERACTIVE_MAX);
        CHECK(p->leaves <= AG_LEAVES_MAX);
        CHECK(p->leaves_notty <= AG_LEAVES_MAX);
        CHECK(p->sessions_max >= 1 && p->sessions_max <= AG_SESSIONS_MAX_LIMIT);
        CHECK(p->lane_cap_pct == AG_MAX_NONE || (p->lane_cap_pct >= 1 && p->lane_cap_pct <= AG_MAX_PCT_MAX));
        for (size_t i = 0; i < _AG_ITEM_MAX; i++)
                if (p->source[i]) {
                        check_rule(c, p->source[i]);
                        CHECK(p->source[i]->item == (AgItem) i);
                }
        /* pools: a valid pool or none; its limits come from pool:NAME lines only */
        CHECK(!p->pool[0] || ag_pool_name_valid(p->pool, strlen(p->pool)));
        if (p->pool[0]) {
                AgPolicy pool;
                ag_pool_policy_resolve(c, p->pool, &pool);
                CHECK(pool.weight >= AG_WEIGHT_MIN && pool.weight <= AG_WEIGHT_MAX);
                CHECK(strcmp(pool.pool, p->pool) == 0);
                for (size_t i = 0; i < _AG_ITEM_MAX; i++)
                        CHECK(!pool.source[i] || (pool.source[i]->kind == AG_DOMAIN_POOL &&
                                                  strcmp(pool.source[i]->name, p->pool) == 0));
        }
        for (int version = 1; version <= 2; version++) {
                ag_policy_to_values(p, version, &v);
                if (version == 1)
                        CHECK(v.weight >= 2 && v.weight <= 262144);
                else
                        CHECK(v.weight == p->weight);
                CHECK(v.quota_us == -1 || (v.quota_us >= 1000 && v.quota_us <= 102400LL * 1000));
                CHECK(ag_format_cpu_max(&v, buf, sizeof buf) == 0);
                CHECK(strlen(buf) < sizeof buf);
        }
}

/* A user name taken from the input, so that user rules can match. */
static void pick_name(const AgConfig *c, size_t i, char *buf, size_t size) {
        buf[0] = 0;
        if (c->n_rules == 0)
                return;
        const AgRule *r = &c->rules[i % c->n_rules];
        if (r->name)
                snprintf(buf, size, "%s", r->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char file[] = "/fuzz/autogroup.conf";
        static const uid_t uids[] = { 0, 1, 999, 1000, 65534, (uid_t) -2 };
        ErrCtx err = { .file = file };
        AgConfig *c;
        int r;

        if (size > 256 * 1024)
                return 0;

        /* Line parser: on a NUL-terminated copy of the first line. */
        {
                size_t n = 0;
                while (n < size && data[n] != '\n')
                        n++;
                char *line = malloc(n + 1);
                if (!line)
                        return 0;
                memcpy(line, data, n);
                line[n] = 0;
                AgRule rule = { .kind = _AG_DOMAIN_KIND_MAX };
                const char *msg = NULL;
                r = ag_config_parse_line(line, &rule, &msg);
                CHECK(r == 0 || r == 1 || r == -EINVAL);
                if (r == -EINVAL)
                        CHECK(msg && *msg);
                if (r == 1) {
                        CHECK((unsigned) rule.kind < _AG_DOMAIN_KIND_MAX);
                        free(rule.name);
                        free(rule.str);
                } else
                        CHECK(rule.kind == _AG_DOMAIN_KIND_MAX);   /* untouched */
                free(line);
        }

        c = calloc(1, sizeof *c);
        if (!c)
                return 0;
        /* The buffer is not NUL-terminated: ASan catches any read past it. */
        r = ag_config_parse_buffer(c, file, (const char *) data, size, on_error, &err);
        CHECK(r >= 0);
        CHECK((unsigned) r == err.n);
        CHECK(c->n_files <= 1);
        CHECK((c->n_rules == 0) == (c->n_files == 0));
        for (size_t i = 0; i < c->n_rules; i++) {
                check_rule(c, &c->rules[i]);
                CHECK(c->rules[i].file == c->files[0]);
                CHECK(i == 0 || c->rules[i].line > c->rules[i - 1].line);
        }

        /* Appending a second buffer keeps the first one's rules. */
        if (size > 0 && data[0] == '#') {
                size_t before = c->n_rules;
                r = ag_config_parse_buffer(c, NULL, (const char *) data, size, NULL, NULL);
                CHECK(r >= 0);
                CHECK(c->n_rules == 2 * before);
                for (size_t i = before; i < c->n_rules; i++)
                        CHECK(c->rules[i].file == NULL);
        }

        for (size_t u = 0; u < ELEMENTSOF(uids); u++) {
                char name[AG_NAME_MAX + 1];
                GroupCtx g = { .seed = (unsigned) u };
                AgPolicy p, q;

                pick_name(c, u, name, sizeof name);
                ag_policy_resolve(c, name[0] ? name : NULL, uids[u], in_group, &g, &p);
                check_policy(c, &p);
                /* Each distinct group is asked at most once (cache of 32). */
                CHECK(g.calls <= c->n_rules);

                /* Same input, same answer. */
                GroupCtx g2 = { .seed = (unsigned) u };
                ag_policy_resolve(c, name[0] ? name : NULL, uids[u], in_group, &g2, &q);
                CHECK(memcmp(&p, &q, sizeof p) == 0);

                /* Without group lookups no group rule may win. */
                ag_policy_resolve(c, name[0] ? name : NULL, uids[u], NULL, NULL, &q);
                check_policy(c, &q);
                for (size_t i = 0; i < _AG_ITEM_MAX; i++)
                        CHECK(!q.source[i] || (q.source[i]->kind != AG_DOMAIN_GROUP &&
                                               q.source[i]->kind != AG_DOMAIN_POOL));
        }

        /* A NULL config resolves to the defaults. */
        {
                AgPolicy d;
                ag_policy_resolve(NULL, "x", 0, in_group, NULL, &d);
                CHECK(d.weight == AG_WEIGHT_DEFAULT && d.max_pct == AG_MAX_NONE && d.sessions && !d.idle &&
                      d.latency == AG_LATENCY_DEFAULT);
        }

        ag_config_free(c);
        return 0;
}
