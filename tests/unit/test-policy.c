/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for rule resolution and the cgroup value mapping (lib/config/policy.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "policy.h"
#include "unit-util.h"

/* ---- a fake NSS ---- */

typedef struct FakeGroups {
        const char *const *member_of;   /* NULL-terminated */
        const char *fail;               /* asking about this group returns -EIO */
        size_t n_calls;
        char calls[64][64];
} FakeGroups;

static int fake_in_group(void *userdata, const char *group) {
        FakeGroups *f = userdata;

        assert_non_null(f);
        assert_non_null(group);
        if (f->n_calls < 64)
                snprintf(f->calls[f->n_calls], sizeof(f->calls[0]), "%s", group);
        f->n_calls++;

        if (f->fail && strcmp(group, f->fail) == 0)
                return -EIO;
        for (const char *const *g = f->member_of; g && *g; g++)
                if (strcmp(*g, group) == 0)
                        return 1;
        return 0;
}

static size_t calls_for(const FakeGroups *f, const char *group) {
        size_t n = 0;
        for (size_t i = 0; i < f->n_calls && i < 64; i++)
                n += strcmp(f->calls[i], group) == 0;
        return n;
}

/* ---- helpers ---- */

static AgConfig *parse(const char *text) {
        AgConfig *c = calloc(1, sizeof(AgConfig));
        assert_non_null(c);
        assert_int_equal(ag_config_parse_buffer(c, "test.conf", text, strlen(text), NULL, NULL), 0);
        return c;
}

static void assert_source(const AgPolicy *p, AgItem item, unsigned line) {
        if (line == 0) {
                assert_null(p->source[item]);
                return;
        }
        assert_non_null(p->source[item]);
        assert_int_equal(p->source[item]->line, line);
        assert_int_equal(p->source[item]->item, item);
}

static void assert_defaults(const AgPolicy *p) {
        assert_int_equal(p->weight, 100);
        assert_int_equal(p->max_pct, AG_MAX_NONE);
        assert_true(p->sessions);
        assert_false(p->idle);
        for (int i = 0; i < _AG_ITEM_MAX; i++)
                assert_null(p->source[i]);
        assert_string_equal(p->pool, "");       /* pools: none */
}

static AgPolicy resolve(const AgConfig *c, const char *user, uid_t uid, FakeGroups *f) {
        AgPolicy p;

        memset(&p, 0x77, sizeof(p));    /* every field must be written */
        ag_policy_resolve(c, user, uid, fake_in_group, f, &p);
        return p;
}

/* p's four items, and the line of the rule each came from (0: the default) */
static void assert_policy(const AgPolicy *p, unsigned weight, long max_pct, bool sessions, bool idle,
                          const unsigned lines[4]) {
        static const AgItem items[4] = { AG_ITEM_WEIGHT, AG_ITEM_MAX, AG_ITEM_SESSIONS, AG_ITEM_IDLE };

        assert_int_equal(p->weight, weight);
        assert_int_equal(p->max_pct, max_pct);
        assert_int_equal(p->sessions, sessions);
        assert_int_equal(p->idle, idle);
        for (size_t i = 0; i < 4; i++)
                assert_source(p, items[i], lines[i]);
}

/* No rule of c applies to these users (uid 1000, in no group), and no group is asked about. */
static void assert_nothing_applies(const AgConfig *c, const char *const *users) {
        FakeGroups f = {};

        for (; *users; users++) {
                AgPolicy p = resolve(c, *users, 1000, &f);
                assert_defaults(&p);
        }
        assert_int_equal(f.n_calls, 0);
}

/* ---- tests ---- */

static void test_init(void **state) {
        AgPolicy p;

        memset(&p, 0x77, sizeof(p));
        ag_policy_init(&p);
        assert_defaults(&p);
        assert_int_equal(AG_WEIGHT_DEFAULT, 100);
}

static void test_empty(void **state) {
        static const char *const alice[] = { "alice", NULL };
        AgConfig *c = parse("# nothing\n\n");

        assert_nothing_applies(c, alice);
        assert_nothing_applies(NULL, alice);
        ag_config_free(c);
}

/* Every subset of the four classes, in every order: the highest class wins. */
static void test_class_precedence(void **state) {
        static const char *const lines[_AG_DOMAIN_KIND_MAX] = {
                [AG_DOMAIN_ALL]   = "* weight 10\n",
                [AG_DOMAIN_RANGE] = "1000:1999 weight 20\n",
                [AG_DOMAIN_GROUP] = "@staff weight 30\n",
                [AG_DOMAIN_USER]  = "alice weight 40\n",
        };
        static const char *const staff[] = { "staff", NULL };
        static const int perms[24][4] = {
                {0,1,2,3},{0,1,3,2},{0,2,1,3},{0,2,3,1},{0,3,1,2},{0,3,2,1},
                {1,0,2,3},{1,0,3,2},{1,2,0,3},{1,2,3,0},{1,3,0,2},{1,3,2,0},
                {2,0,1,3},{2,0,3,1},{2,1,0,3},{2,1,3,0},{2,3,0,1},{2,3,1,0},
                {3,0,1,2},{3,0,2,1},{3,1,0,2},{3,1,2,0},{3,2,0,1},{3,2,1,0},
        };
        size_t checked = 0;

        for (unsigned mask = 1; mask < 16; mask++)
                for (int pi = 0; pi < 24; pi++) {
                        char text[256] = "";
                        unsigned line = 0, winner_line = 0;
                        int winner = -1;

                        for (int j = 0; j < 4; j++) {
                                int k = perms[pi][j];
                                if (!(mask & (1u << k)))
                                        continue;
                                strcat(text, lines[k]);
                                line++;
                                if (k > winner) {
                                        winner = k;
                                        winner_line = line;
                                }
                        }

                        FakeGroups f = { .member_of = staff };
                        AgConfig *c = parse(text);
                        AgPolicy p = resolve(c, "alice", 1000, &f);
                        assert_int_equal(p.weight, 10 * (winner + 1));
                        assert_source(&p, AG_ITEM_WEIGHT, winner_line);
                        assert_int_equal(p.source[AG_ITEM_WEIGHT]->kind, winner);
                        /* the other items keep their defaults */
                        assert_int_equal(p.max_pct, AG_MAX_NONE);
                        assert_true(p.sessions);
                        assert_false(p.idle);
                        assert_source(&p, AG_ITEM_MAX, 0);
                        /* the group is never asked about when a user rule decided */
                        if (winner == AG_DOMAIN_USER)
                                assert_int_equal(f.n_calls, 0);
                        else
                                assert_true(f.n_calls <= 1);
                        ag_config_free(c);
                        checked++;
                }
        assert_int_equal(checked, 15 * 24);
}

static void test_later_wins_within_class(void **state) {
        static const char *const both[] = { "staff", "dev", NULL };
        static const struct {
                const char *text;
                AgItem item;                    /* AG_ITEM_WEIGHT or AG_ITEM_MAX */
                long value;
                unsigned line;                  /* of the rule that decided */
        } cases[] = {
                { "* weight 10\n* weight 11\n", AG_ITEM_WEIGHT, 11, 2 },
                { "alice weight 1\n* weight 50\nalice weight 2\n", AG_ITEM_WEIGHT, 2, 3 },
                { "@staff weight 30\n@dev weight 31\n", AG_ITEM_WEIGHT, 31, 2 },
                { "@dev weight 31\n@staff weight 30\n", AG_ITEM_WEIGHT, 30, 2 },
                /* a later rule that does not match changes nothing */
                { "@staff weight 30\n@other weight 31\nbob weight 32\n2000: weight 33\n", AG_ITEM_WEIGHT, 30, 1 },
                /* ranges: the later wins, not the narrower */
                { "1000:1000 weight 20\n0: weight 21\n", AG_ITEM_WEIGHT, 21, 2 },
                { "0: weight 21\n1000:1000 weight 20\n", AG_ITEM_WEIGHT, 20, 2 },
                /* max: a later "none" lifts an earlier cap */
                { "* max 50%\n* max none\n", AG_ITEM_MAX, AG_MAX_NONE, 2 },
        };
        FakeGroups f = { .member_of = both };
        AgConfig *c;
        AgPolicy p;

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                c = parse(cases[i].text);
                p = resolve(c, "alice", 1000, &f);
                assert_int_equal(cases[i].item == AG_ITEM_MAX ? p.max_pct : (long) p.weight, cases[i].value);
                assert_source(&p, cases[i].item, cases[i].line);
                ag_config_free(c);
        }

        /* booleans both ways */
        c = parse("* sessions no\n* sessions yes\n* idle yes\n* idle no\n");
        p = resolve(c, "alice", 1000, &f);
        assert_true(p.sessions);
        assert_false(p.idle);
        assert_source(&p, AG_ITEM_SESSIONS, 2);
        assert_source(&p, AG_ITEM_IDLE, 4);
        ag_config_free(c);
}

static void test_items_independent(void **state) {
        static const char *const staff[] = { "staff", NULL };
        static const char text[] =
                "alice weight 400\n"            /* 1 */
                "@staff max 200%\n"             /* 2 */
                "1000: sessions no\n"           /* 3 */
                "* idle yes\n"                  /* 4 */
                "* weight 1\n"                  /* 5 */
                "@staff weight 2\n"             /* 6 */
                "1000: max 300%\n"              /* 7 */
                "* sessions yes\n";             /* 8 */
        FakeGroups f = { .member_of = staff };
        AgConfig *c = parse(text);
        AgPolicy p;

        p = resolve(c, "alice", 1000, &f);
        assert_policy(&p, 400, 200, false, true, (const unsigned[]) { 1, 2, 3, 4 });
        assert_int_equal(calls_for(&f, "staff"), 1);

        /* bob: staff, no user rule, below the range */
        f = (FakeGroups) { .member_of = staff };
        p = resolve(c, "bob", 999, &f);
        assert_policy(&p, 2, 200, true, true, (const unsigned[]) { 6, 2, 8, 4 });
        assert_int_equal(calls_for(&f, "staff"), 1);

        /* carol: no group, in the range */
        f = (FakeGroups) {};
        p = resolve(c, "carol", 5000, &f);
        assert_policy(&p, 1, 300, false, true, (const unsigned[]) { 5, 7, 3, 4 });
        ag_config_free(c);
}

static void test_range_boundaries(void **state) {
        static const struct {
                const char *rule;
                uid_t uid;
                bool match;
        } cases[] = {
                { "1000:2000 weight 5", 999, false },
                { "1000:2000 weight 5", 1000, true },
                { "1000:2000 weight 5", 1500, true },
                { "1000:2000 weight 5", 2000, true },
                { "1000:2000 weight 5", 2001, false },
                { "1000: weight 5", 999, false },
                { "1000: weight 5", 1000, true },
                { "1000: weight 5", (uid_t) -2, true },
                { "1000: weight 5", (uid_t) -1, false },   /* never a valid uid */
                /* limits.conf(5): "If min_uid is omitted, the match is exact for the max_uid" */
                { ":999 weight 5", 0, false },
                { ":999 weight 5", 998, false },
                { ":999 weight 5", 999, true },
                { ":999 weight 5", 1000, false },
                { ":0 weight 5", 0, true },
                { ":0 weight 5", 1, false },
                { "0:999 weight 5", 0, true },
                { "0:999 weight 5", 999, true },
                { "0:999 weight 5", 1000, false },
                { "0:0 weight 5", 0, true },
                { "0:0 weight 5", 1, false },
                { "0: weight 5", 0, true },
                { "65534:65534 weight 5", 65534, true },
                { "65534:65534 weight 5", 65533, false },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char text[64];
                snprintf(text, sizeof(text), "%s\n", cases[i].rule);
                AgConfig *c = parse(text);
                FakeGroups f = {};
                AgPolicy p = resolve(c, "someone", cases[i].uid, &f);
                if (cases[i].match) {
                        assert_int_equal(p.weight, 5);
                        assert_source(&p, AG_ITEM_WEIGHT, 1);
                } else
                        assert_defaults(&p);
                ag_config_free(c);
        }
}

static void test_user_exact(void **state) {
        AgConfig *c = parse("alice weight 5\n1000 weight 6\n");
        FakeGroups f = {};
        AgPolicy p;

        p = resolve(c, "alice", 1, &f);
        assert_int_equal(p.weight, 5);
        static const char *const others[] = { "alic", "alice2", "Alice", "ALICE", " alice", "", "@alice" };
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
                p = resolve(c, others[i], 1, &f);
                assert_defaults(&p);
        }
        /* no user name: user rules never match */
        p = resolve(c, NULL, 1, &f);
        assert_defaults(&p);

        /* a numeric user name is a name, not a uid */
        p = resolve(c, "bob", 1000, &f);
        assert_defaults(&p);
        p = resolve(c, "1000", 4242, &f);
        assert_int_equal(p.weight, 6);
        assert_int_equal(f.n_calls, 0);
        ag_config_free(c);
}

static void test_group_calls(void **state) {
        static const char *const ab[] = { "a", "b", NULL };
        static const char text[] =
                "@a weight 1\n"                 /* 1 */
                "@b weight 2\n"                 /* 2 */
                "@a max 50%\n"                  /* 3 */
                "@c idle yes\n"                 /* 4 */
                "alice weight 9\n"              /* 5 */
                "@a sessions no\n"              /* 6 */
                "@d weight 3\n";                /* 7 */
        AgConfig *c = parse(text);
        FakeGroups f = { .member_of = ab };
        AgPolicy p;

        /* alice: weight comes from her user rule, so b and d are never asked */
        p = resolve(c, "alice", 1000, &f);
        assert_policy(&p, 9, 50, false, false, (const unsigned[]) { 5, 3, 6, 0 });
        assert_int_equal(calls_for(&f, "a"), 1);
        assert_int_equal(calls_for(&f, "c"), 1);
        assert_int_equal(calls_for(&f, "b"), 0);
        assert_int_equal(calls_for(&f, "d"), 0);
        assert_int_equal(f.n_calls, 2);

        /* bob in a and b: weight from the later of @d (no) and @b (yes) */
        f = (FakeGroups) { .member_of = ab };
        p = resolve(c, "bob", 1000, &f);
        assert_int_equal(p.weight, 2);
        assert_source(&p, AG_ITEM_WEIGHT, 2);
        assert_int_equal(p.max_pct, 50);
        for (const char *g = "abcd"; *g; g++) {
                char name[2] = { *g, 0 };
                assert_int_equal(calls_for(&f, name), 1);       /* at most once each */
        }
        assert_int_equal(f.n_calls, 4);

        /* carol in nothing */
        f = (FakeGroups) {};
        p = resolve(c, "carol", 1000, &f);
        assert_defaults(&p);
        assert_int_equal(f.n_calls, 4);
        ag_config_free(c);

        /* user rules for every item: no group lookups at all */
        c = parse("@a weight 1\n@a max 5%\n@a sessions no\n@a idle yes\n"
                  "alice weight 2\nalice max none\nalice sessions yes\nalice idle no\n");
        f = (FakeGroups) { .member_of = ab };
        p = resolve(c, "alice", 1000, &f);
        assert_int_equal(p.weight, 2);
        assert_int_equal(f.n_calls, 0);
        ag_config_free(c);
}

static void test_group_many(void **state) {
        char text[8192];
        size_t o = 0;
        static const char *const g37[] = { "g37", NULL };

        /* more distinct groups than any cache, each with two items */
        for (int i = 0; i < 100; i++)
                o += (size_t) snprintf(text + o, sizeof(text) - o, "@g%d weight %d\n@g%d max %d%%\n", i, i + 1, i, i + 1);
        AgConfig *c = parse(text);
        FakeGroups f = { .member_of = g37 };
        AgPolicy p = resolve(c, "alice", 1000, &f);
        assert_int_equal(p.weight, 38);
        assert_int_equal(p.max_pct, 38);
        assert_source(&p, AG_ITEM_WEIGHT, 75);
        assert_source(&p, AG_ITEM_MAX, 76);
        /* g99 down to g37, each asked once though two rules name it (the
         * README's "each distinct @group at most once", past 32 groups too) */
        assert_int_equal(f.n_calls, 63);
        for (int i = 37; i < 100; i++) {
                char name[8];
                snprintf(name, sizeof name, "g%d", i);
                assert_int_equal(calls_for(&f, name), 1);
        }
        ag_config_free(c);
}

static void test_group_no_callback_or_error(void **state) {
        static const char *const staff[] = { "staff", NULL };
        AgConfig *c = parse("* weight 10\n@staff weight 30\n@broken weight 40\n");
        FakeGroups f = { .member_of = staff, .fail = "broken" };
        AgPolicy p;

        /* no callback: group rules never match */
        memset(&p, 0x77, sizeof(p));
        ag_policy_resolve(c, "alice", 1000, NULL, NULL, &p);
        assert_int_equal(p.weight, 10);
        assert_source(&p, AG_ITEM_WEIGHT, 1);

        /* an error is a no, and after it no other group is asked about
         * ("broken", the later line, is asked first) */
        p = resolve(c, "alice", 1000, &f);
        assert_int_equal(p.weight, 10);
        assert_source(&p, AG_ITEM_WEIGHT, 1);
        assert_int_equal(calls_for(&f, "broken"), 1);
        assert_int_equal(calls_for(&f, "staff"), 0);

        /* a group named like the user is still a group */
        ag_config_free(c);
        c = parse("@alice weight 3\n");
        f = (FakeGroups) {};
        p = resolve(c, "alice", 1000, &f);
        assert_defaults(&p);
        assert_int_equal(calls_for(&f, "alice"), 1);
        ag_config_free(c);
}

/* A directory that is down: the first group asked about fails, and with
 * many @group rules over several items that one look-up is the only one;
 * user, uid-range and * rules still apply. A group answered before the
 * failure keeps its answer. */
static void test_group_error_asks_once(void **state) {
        static const char *const staff[] = { "staff", NULL };
        AgConfig *c = parse("* weight 10\n"
                            "1000: max 50%\n"
                            "@d1 weight 20\n@d2 max 30%\n@d3 idle yes\n@d4 sessions no\n"
                            "@d5 weight 21\n@d6 max 31%\n@staff idle no\n@dead weight 40\n"
                            "alice sessions yes\n");
        FakeGroups f = { .member_of = staff, .fail = "dead" };
        AgPolicy p;

        (void) state;
        p = resolve(c, "alice", 1000, &f);
        assert_int_equal(f.n_calls, 1);
        assert_int_equal(calls_for(&f, "dead"), 1);
        assert_int_equal(p.weight, 10);
        assert_int_equal(p.max_pct, 50);
        assert_true(p.sessions);
        assert_false(p.idle);
        assert_source(&p, AG_ITEM_SESSIONS, 11);

        /* fails after one success: the success stands, nothing more is asked */
        f = (FakeGroups) { .member_of = staff, .fail = "d6" };
        ag_config_free(c);
        c = parse("@d1 weight 20\n@d6 max 31%\n@staff idle yes\n");
        p = resolve(c, "alice", 1000, &f);
        assert_int_equal(f.n_calls, 2);         /* staff (for idle), then d6 (for max) */
        assert_true(p.idle);
        assert_int_equal(p.max_pct, AG_MAX_NONE);
        assert_int_equal(p.weight, 100);
        assert_int_equal(calls_for(&f, "d1"), 0);
        ag_config_free(c);
}

/* limits.conf(5): "group and wildcard limits are not applied to the root
 * user"; as in Debian's pam_limits, that is any uid 0, and a rule naming the
 * account or a uid range holding 0 still applies. */
static void test_root_exempt_from_wildcard_and_group(void **state) {
        static const char *const wheel[] = { "wheel", NULL };
        AgConfig *c = parse("*       max     50%\n"          /* 1 */
                            "@wheel  weight  10\n"           /* 2 */
                            "@wheel  idle    yes\n"          /* 3 */
                            "*       sessions no\n");        /* 4 */
        FakeGroups f = { .member_of = wheel };
        AgPolicy p;

        p = resolve(c, "root", 0, &f);
        assert_defaults(&p);
        assert_int_equal(f.n_calls, 0);                 /* no group looked up for root */
        p = resolve(c, "toor", 0, &f);                  /* another name of uid 0 */
        assert_defaults(&p);

        f = (FakeGroups) { .member_of = wheel };        /* everybody else: as written */
        p = resolve(c, "alice", 1000, &f);
        assert_int_equal(p.max_pct, 50);
        assert_int_equal(p.weight, 10);
        assert_true(p.idle);
        assert_false(p.sessions);
        p = resolve(c, "daemon", 1, &f);
        assert_int_equal(p.max_pct, 50);
        ag_config_free(c);

        /* a rule naming root, and a uid range holding 0, do apply */
        c = parse("*      max  50%\n"
                  "root   max  400%\n"
                  "0:999  weight 20\n"
                  ":0     idle yes\n");
        f = (FakeGroups) {};
        p = resolve(c, "root", 0, &f);
        assert_int_equal(p.max_pct, 400);
        assert_source(&p, AG_ITEM_MAX, 2);
        assert_int_equal(p.weight, 20);
        assert_true(p.idle);
        p = resolve(c, "toor", 0, &f);                  /* not named: only the ranges */
        assert_int_equal(p.max_pct, AG_MAX_NONE);
        assert_int_equal(p.weight, 20);
        ag_config_free(c);

        assert_false(ag_rule_kind_applies_to_root(AG_DOMAIN_ALL));
        assert_false(ag_rule_kind_applies_to_root(AG_DOMAIN_GROUP));
        assert_true(ag_rule_kind_applies_to_root(AG_DOMAIN_RANGE));
        assert_true(ag_rule_kind_applies_to_root(AG_DOMAIN_USER));
}

/* The brief's example, end to end. */
static void test_brief_example(void **state) {
        static const char *const students[] = { "students", NULL };
        static const char *const batch[] = { "batch", NULL };
        static const char *const both[] = { "students", "batch", NULL };
        static const char text[] =
                "# domain        item        value\n"
                "*               weight      100\n"
                "1000:           sessions    yes          # uid range, open-ended like limits.conf\n"
                "@students       weight      50           # NSS group: local, LDAP, SSSD\n"
                "@students       max         200%         # at most two CPUs for each student\n"
                "alice           weight      400\n"
                "root            sessions    no           # root's logins are not grouped\n"
                "@batch          idle        yes          # cpu.idle: run only when nobody else wants the CPU\n";
        AgConfig *c = parse(text);
        FakeGroups f = { .member_of = students };
        AgPolicy p;

        assert_int_equal(c->n_rules, 7);

        p = resolve(c, "alice", 1000, &f);             /* alice is a student too */
        assert_int_equal(p.weight, 400);
        assert_int_equal(p.max_pct, 200);
        assert_true(p.sessions);
        assert_false(p.idle);
        assert_source(&p, AG_ITEM_SESSIONS, 3);

        f = (FakeGroups) { .member_of = students };
        p = resolve(c, "sam", 1001, &f);
        assert_int_equal(p.weight, 50);
        assert_int_equal(p.max_pct, 200);

        f = (FakeGroups) {};
        p = resolve(c, "root", 0, &f);
        assert_int_equal(p.weight, 100);
        assert_false(p.sessions);
        assert_source(&p, AG_ITEM_WEIGHT, 0);         /* "*" does not apply to root */
        assert_source(&p, AG_ITEM_SESSIONS, 7);

        f = (FakeGroups) { .member_of = batch };
        p = resolve(c, "worker", 500, &f);
        assert_int_equal(p.weight, 100);
        assert_true(p.idle);
        assert_true(p.sessions);
        assert_source(&p, AG_ITEM_SESSIONS, 0);       /* 500 is not in 1000: */

        f = (FakeGroups) { .member_of = both };
        p = resolve(c, "x", 2000, &f);
        assert_int_equal(p.weight, 50);
        assert_true(p.idle);
        ag_config_free(c);
}

/* Drop-ins come after the main file, in lexical order; class still beats order. */
static void test_dropins_after_main(void **state) {
        TmpDir *t = *state;
        const char *dir = t->path, *conf = t->conf, *dropins = t->dropins;
        FakeGroups f = {};
        AgConfig *c = NULL;
        AgPolicy p;

        assert_int_equal(mkdir(dropins, 0755), 0);

        put_file(dir, "autogroup.conf", "* weight 10\nalice max 50%\n* idle no\n");
        put_files(dropins,
                  "b.conf", "* weight 30\nalice idle no\n",
                  "a.conf", "* weight 20\n* max 300%\nalice idle yes\n",
                  "10-early.conf", "* weight 5\n* idle yes\n",
                  NULL);

        assert_int_equal(ag_config_load(conf, AG_CONFIG_TRUST_ANY_OWNER, NULL, NULL, &c), 0);
        p = resolve(c, "alice", 1000, &f);
        assert_int_equal(p.weight, 30);                 /* b.conf is the last file */
        assert_string_equal(p.source[AG_ITEM_WEIGHT]->file + strlen(dropins), "/b.conf");
        assert_int_equal(p.max_pct, 50);               /* user in main beats * in a drop-in */
        assert_string_equal(p.source[AG_ITEM_MAX]->file, conf);
        assert_false(p.idle);                           /* b.conf after a.conf */
        assert_string_equal(p.source[AG_ITEM_IDLE]->file + strlen(dropins), "/b.conf");
        assert_int_equal(p.source[AG_ITEM_IDLE]->line, 2);

        p = resolve(c, "bob", 1000, &f);
        assert_int_equal(p.weight, 30);
        assert_int_equal(p.max_pct, 300);
        assert_true(p.idle);                            /* 10-early.conf beats the main file */
        assert_string_equal(p.source[AG_ITEM_IDLE]->file + strlen(dropins), "/10-early.conf");
        ag_config_free(c);
}

static void test_weight_to_shares(void **state) {
        static const struct {
                unsigned weight;
                unsigned long shares;
        } cases[] = {
                { 100, 1024 },
                { 50, 512 },
                { 200, 2048 },
                { 400, 4096 },
                { 10000, 102400 },
                { 1, 10 },              /* 1 * 1024 / 100 */
                { 2, 20 },
                { 99, 1013 },           /* rounds down */
                { 0, 2 },               /* the kernel's minimum */
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                assert_int_equal(ag_weight_to_shares(cases[i].weight), cases[i].shares);

        /* never below 2 and monotonic over the valid range */
        unsigned long prev = 0;
        for (unsigned w = AG_WEIGHT_MIN; w <= AG_WEIGHT_MAX; w++) {
                unsigned long s = ag_weight_to_shares(w);
                assert_true(s >= 2 && s >= prev);
                prev = s;
        }
}

static void test_policy_to_values(void **state) {
        AgPolicy p;
        AgCgValues v;

        ag_policy_init(&p);
        ag_policy_to_values(&p, 2, &v);
        assert_int_equal(v.weight, 100);
        assert_int_equal(v.quota_us, -1);
        assert_int_equal(v.period_us, 100000);
        assert_false(v.idle);
        ag_policy_to_values(&p, 1, &v);
        assert_int_equal(v.weight, 1024);
        assert_int_equal(v.quota_us, -1);
        assert_int_equal(v.period_us, AG_CPU_PERIOD_US);

        static const struct {
                unsigned weight;
                long max_pct;
                bool idle;
                unsigned long v1, v2;
                long long quota;
        } cases[] = {
                { 1, 1, true, 10, 1, 1000 },
                { 50, 50, false, 512, 50, 50000 },
                { 100, 100, true, 1024, 100, 100000 },
                { 400, 200, false, 4096, 400, 200000 },
                { 10000, 102400, true, 102400, 10000, 102400000LL },
                { 250, AG_MAX_NONE, false, 2560, 250, -1 },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                p.weight = cases[i].weight;
                p.max_pct = cases[i].max_pct;
                p.idle = cases[i].idle;
                for (int version = 2; version >= 1; version--) {
                        memset(&v, 0x77, sizeof(v));
                        ag_policy_to_values(&p, version, &v);
                        assert_int_equal(v.weight, version == 2 ? cases[i].v2 : cases[i].v1);
                        assert_int_equal(v.quota_us, cases[i].quota);
                        assert_int_equal(v.period_us, 100000);
                        assert_int_equal(v.idle, cases[i].idle);
                }
        }
}

static void test_format_cpu_max(void **state) {
        AgCgValues v = { .weight = 100, .quota_us = -1, .period_us = AG_CPU_PERIOD_US };
        char buf[64];

        assert_int_equal(ag_format_cpu_max(&v, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "max 100000");

        static const struct {
                long long quota;
                const char *text;
        } cases[] = {
                { 200000, "200000 100000" },
                { 1000, "1000 100000" },
                { 100000, "100000 100000" },
                { 102400000LL, "102400000 100000" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                v.quota_us = cases[i].quota;
                assert_int_equal(ag_format_cpu_max(&v, buf, sizeof(buf)), 0);
                assert_string_equal(buf, cases[i].text);
        }

        /* through the policy */
        AgPolicy p;
        ag_policy_init(&p);
        p.max_pct = 150;
        ag_policy_to_values(&p, 2, &v);
        assert_int_equal(ag_format_cpu_max(&v, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "150000 100000");

        /* exact fit, one short (untouched), nothing */
        v.quota_us = -1;
        char small[11];
        assert_int_equal(ag_format_cpu_max(&v, small, sizeof(small)), 0);   /* "max 100000" + NUL */
        assert_string_equal(small, "max 100000");
        memcpy(small, "untouched", 10);
        assert_int_equal(ag_format_cpu_max(&v, small, 10), -ENOBUFS);
        assert_string_equal(small, "untouched");
        v.quota_us = 200000;
        assert_int_equal(ag_format_cpu_max(&v, small, sizeof(small)), -ENOBUFS);
        assert_string_equal(small, "untouched");
        assert_int_equal(ag_format_cpu_max(&v, small, 0), -ENOBUFS);
        assert_int_equal(ag_format_cpu_max(&v, NULL, 0), -ENOBUFS);
}

/* ---- pools ---- */

/* The pool item resolves like any other: user > @group > range > *, later wins. */
static void test_pool_membership(void **state) {
        static const char *const physics[] = { "physics", NULL };
        AgConfig *c = parse("* pool everyone\n"                /* 1 */
                            "1000:1999 pool range\n"           /* 2 */
                            "@physics pool physics\n"          /* 3 */
                            "@physics pool physics2\n"         /* 4 */
                            "carol pool none\n"                /* 5 */
                            "pool:physics2 weight 300\n"       /* 6 */
                            "dave pool chem\n");               /* 7 */
        FakeGroups f = { .member_of = physics }, none = {};
        AgPolicy p;

        p = resolve(c, "alice", 1000, &f);
        assert_string_equal(p.pool, "physics2");
        assert_source(&p, AG_ITEM_POOL, 4);
        assert_int_equal(p.weight, 100);        /* the pool's weight is not the user's */
        assert_null(p.source[AG_ITEM_WEIGHT]);
        p = resolve(c, "alice", 1000, &none);
        assert_string_equal(p.pool, "range");
        assert_source(&p, AG_ITEM_POOL, 2);
        p = resolve(c, "alice", 5000, &none);
        assert_string_equal(p.pool, "everyone");
        assert_source(&p, AG_ITEM_POOL, 1);
        p = resolve(c, "carol", 1000, &f);      /* taken out of the group's pool */
        assert_string_equal(p.pool, "");
        assert_source(&p, AG_ITEM_POOL, 5);
        p = resolve(c, "dave", 5000, &f);
        assert_string_equal(p.pool, "chem");
        ag_config_free(c);
}

/* A pool:NAME domain never matches a user, not even one called NAME. */
static void test_pool_domain_not_a_user(void **state) {
        AgConfig *c = parse("pool:physics weight 300\n"
                            "pool:physics max 50%\n"
                            "pool:physics idle yes\n");

        assert_nothing_applies(c, (const char *const[]) { "physics", "pool:physics", NULL });
        ag_config_free(c);
}

static void test_pool_limits(void **state) {
        AgConfig *c = parse("pool:a weight 300\n"      /* 1 */
                            "pool:b weight 100\n"      /* 2 */
                            "pool:a max 800%\n"        /* 3 */
                            "alice weight 50\n"        /* 4 */
                            "pool:a weight 400\n"      /* 5: later wins */
                            "pool:b idle yes\n");      /* 6 */
        AgPolicy p;
        AgCgValues v;

        memset(&p, 0x77, sizeof(p));
        ag_pool_policy_resolve(c, "a", &p);
        assert_string_equal(p.pool, "a");
        assert_int_equal(p.weight, 400);
        assert_source(&p, AG_ITEM_WEIGHT, 5);
        assert_int_equal(p.max_pct, 800);
        assert_source(&p, AG_ITEM_MAX, 3);
        assert_false(p.idle);
        assert_null(p.source[AG_ITEM_IDLE]);
        assert_null(p.source[AG_ITEM_SESSIONS]);
        ag_policy_to_values(&p, 1, &v);
        assert_int_equal(v.weight, 4096);
        assert_int_equal(v.quota_us, 800000);
        ag_policy_to_values(&p, 2, &v);
        assert_int_equal(v.weight, 400);

        ag_pool_policy_resolve(c, "b", &p);
        assert_int_equal(p.weight, 100);
        assert_true(p.idle);
        assert_source(&p, AG_ITEM_IDLE, 6);
        assert_int_equal(p.max_pct, AG_MAX_NONE);

        /* a pool with no lines, and no config at all: the defaults */
        ag_pool_policy_resolve(c, "c", &p);
        assert_string_equal(p.pool, "c");
        assert_int_equal(p.weight, 100);
        assert_int_equal(p.max_pct, AG_MAX_NONE);
        assert_false(p.idle);
        for (int i = 0; i < _AG_ITEM_MAX; i++)
                assert_null(p.source[i]);
        ag_pool_policy_resolve(NULL, "a", &p);
        assert_int_equal(p.weight, 100);
        ag_pool_policy_resolve(c, NULL, &p);
        assert_defaults(&p);
        ag_config_free(c);
}

/* ---- ag_nss_group_member_by(): getgrnam_r()'s answers as a membership ---- */

/* A scripted getgrnam_r: the first n_erange calls ask for a bigger buffer,
 * then it returns ret and, when ret is 0 and found, the group below. */
typedef struct FakeGetgr {
        int ret;
        bool found;
        gid_t gid;
        const char *const *members;     /* NULL-terminated, or NULL */
        unsigned n_erange;              /* UINT_MAX: always ERANGE */
        unsigned n_calls;
        size_t last_size;
} FakeGetgr;

static FakeGetgr fake_getgr;

static int fake_getgrnam_r(const char *name, struct group *grp, char *buf, size_t size, struct group **result) {
        FakeGetgr *f = &fake_getgr;

        assert_non_null(name);
        assert_non_null(buf);
        f->n_calls++;
        if (f->n_calls > 1)
                assert_true(size > f->last_size);       /* a bigger buffer each time */
        f->last_size = size;
        *result = NULL;
        if (f->n_erange == UINT_MAX || f->n_calls <= f->n_erange)
                return ERANGE;
        if (f->ret != 0 || !f->found)
                return f->ret;
        *grp = (struct group) { .gr_name = (char *) name, .gr_passwd = (char *) "x", .gr_gid = f->gid,
                                .gr_mem = (char **) f->members };
        *result = grp;
        return 0;
}

static int member(FakeGetgr f, const char *user, gid_t gid) {
        fake_getgr = f;
        return ag_nss_group_member_by(fake_getgrnam_r, "staff", user, gid);
}

static void test_nss_group_member(void **state) {
        static const char *const ab[] = { "a", "b", NULL };
        static const char *const none[] = { NULL };

        (void) state;
        /* found: a member by name, by primary gid, or not at all */
        assert_int_equal(member((FakeGetgr) { .found = true, .gid = 50, .members = ab }, "b", 100), 1);
        assert_int_equal(member((FakeGetgr) { .found = true, .gid = 50, .members = ab }, "c", 100), 0);
        assert_int_equal(member((FakeGetgr) { .found = true, .gid = 50, .members = none }, "c", 50), 1);
        assert_int_equal(member((FakeGetgr) { .found = true, .gid = 50, .members = NULL }, "c", 100), 0);
        /* no such group: glibc returns 0 and no entry; not a member, not an error */
        assert_int_equal(member((FakeGetgr) { .found = false }, "a", 100), 0);
        assert_int_equal(fake_getgr.n_calls, 1);
        /* any error is an outage, ENOENT too: glibc passes a service's errno
         * on when it was UNAVAIL (nslcd or sssd unreachable) */
        assert_int_equal(member((FakeGetgr) { .ret = ENOENT }, "a", 100), -ENOENT);
        assert_int_equal(member((FakeGetgr) { .ret = ESRCH }, "a", 100), -ESRCH);
        assert_int_equal(member((FakeGetgr) { .ret = EAGAIN }, "a", 100), -EAGAIN);
        assert_int_equal(member((FakeGetgr) { .ret = EIO }, "a", 100), -EIO);
        assert_int_equal(member((FakeGetgr) { .ret = -1 }, "a", 100), -EIO);
        /* a big group: the buffer grows until it fits */
        assert_int_equal(member((FakeGetgr) { .found = true, .gid = 50, .members = ab, .n_erange = 3 }, "a", 1), 1);
        assert_int_equal(fake_getgr.n_calls, 4);
        /* ... up to 16 MiB, then ERANGE is the answer: an error */
        assert_int_equal(member((FakeGetgr) { .n_erange = UINT_MAX }, "a", 1), -ERANGE);
        assert_int_equal(fake_getgr.last_size, 16U << 20);
        assert_int_equal(ag_nss_group_member_by(NULL, "staff", "a", 1), -EINVAL);
}

/* An in_group over the fake getgrnam_r, as the module's and explain's are */
typedef struct NssCtx {
        const char *user;
        gid_t gid;
        unsigned n_calls;
} NssCtx;

static int fake_nss_in_group(void *userdata, const char *group) {
        NssCtx *c = userdata;
        c->n_calls++;
        fake_getgr.n_calls = 0;         /* a look-up of its own */
        return ag_nss_group_member_by(fake_getgrnam_r, group, c->user, c->gid);
}

static AgPolicy resolve_with(const AgConfig *c, NssCtx *ctx) {
        AgPolicy p;

        memset(&p, 0x77, sizeof(p));
        ag_policy_resolve(c, ctx->user, 1000, fake_nss_in_group, ctx, &p);
        return p;
}

/* "No such group" is a no and the next group is asked; ENOENT from a
 * service that is down stops the group rules (user, range and * still apply). */
static void test_nss_group_missing_vs_down(void **state) {
        static const char *const alice[] = { "alice", NULL };
        AgConfig *c = parse("* weight 10\n@real weight 30\n@missing max 50%\nalice idle yes\n");
        NssCtx ctx = { .user = "alice", .gid = 100 };
        AgPolicy p;

        (void) state;
        /* @missing: no such group (0, no entry); @real then asked too */
        fake_getgr = (FakeGetgr) { .found = false };
        p = resolve_with(c, &ctx);
        assert_int_equal(ctx.n_calls, 2);
        assert_int_equal(p.max_pct, AG_MAX_NONE);
        assert_int_equal(p.weight, 10);         /* (the fake says "no such group" to both) */
        assert_true(p.idle);

        /* a found group where alice is a member */
        ctx.n_calls = 0;
        fake_getgr = (FakeGetgr) { .found = true, .gid = 7, .members = alice };
        p = resolve_with(c, &ctx);
        assert_int_equal(ctx.n_calls, 2);
        assert_int_equal(p.weight, 30);
        assert_int_equal(p.max_pct, 50);

        /* the directory down: ENOENT for the first group, and nothing more is asked */
        ctx.n_calls = 0;
        fake_getgr = (FakeGetgr) { .ret = ENOENT };
        p = resolve_with(c, &ctx);
        assert_int_equal(ctx.n_calls, 1);
        assert_int_equal(p.weight, 10);
        assert_source(&p, AG_ITEM_WEIGHT, 1);
        assert_int_equal(p.max_pct, AG_MAX_NONE);
        assert_true(p.idle);
        ag_config_free(c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_init),
                cmocka_unit_test(test_pool_membership),
                cmocka_unit_test(test_pool_domain_not_a_user),
                cmocka_unit_test(test_pool_limits),
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_class_precedence),
                cmocka_unit_test(test_later_wins_within_class),
                cmocka_unit_test(test_items_independent),
                cmocka_unit_test(test_range_boundaries),
                cmocka_unit_test(test_user_exact),
                cmocka_unit_test(test_group_calls),
                cmocka_unit_test(test_group_many),
                cmocka_unit_test(test_group_no_callback_or_error),
                cmocka_unit_test(test_group_error_asks_once),
                cmocka_unit_test(test_nss_group_member),
                cmocka_unit_test(test_nss_group_missing_vs_down),
                cmocka_unit_test(test_root_exempt_from_wildcard_and_group),
                cmocka_unit_test(test_brief_example),
                tmpdir_test(test_dropins_after_main),
                cmocka_unit_test(test_weight_to_shares),
                cmocka_unit_test(test_policy_to_values),
                cmocka_unit_test(test_format_cpu_max),
        };

        umask(022);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
