/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for latency classes: the config items "latency" and
 * "interactive" (lib/config/config-value.c), their resolution (lib/config/policy.c), the
 * class -> scheduler attribute mapping and the leaf weight table
 * (lib/config/latency.c). The last test sets a class on
 * the test's own thread, which needs no privilege; on a kernel without custom
 * slices it checks the fallback instead. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "conf.h"
#include "lane.h"
#include "latency.h"
#include "policy.h"

#define E_LATENCY "invalid latency (expected 0|batch, 1|normal, 2|interactive or 3|audio)"

static void test_names(void **state) {
        (void) state;
        assert_string_equal(ag_item_to_string(AG_ITEM_LATENCY), "latency");
        assert_string_equal(ag_latency_to_string(AG_LATENCY_BATCH), "batch");
        assert_string_equal(ag_latency_to_string(AG_LATENCY_NORMAL), "normal");
        assert_string_equal(ag_latency_to_string(AG_LATENCY_INTERACTIVE), "interactive");
        assert_string_equal(ag_latency_to_string(AG_LATENCY_AUDIO), "audio");
        assert_null(ag_latency_to_string(_AG_LATENCY_MAX));
        assert_null(ag_latency_to_string((AgLatency) -1));
        assert_int_equal(AG_LATENCY_BATCH, 0);
        assert_int_equal(AG_LATENCY_AUDIO, 3);
        assert_int_equal(AG_LATENCY_DEFAULT, AG_LATENCY_NORMAL);
}

static void test_from_string(void **state) {
        static const struct { const char *s; int want; } cases[] = {
                { "0", 0 }, { "batch", 0 }, { "1", 1 }, { "normal", 1 },
                { "2", 2 }, { "interactive", 2 }, { "3", 3 }, { "audio", 3 },
                { "4", -1 }, { "-1", -1 }, { "00", -1 }, { "01", -1 }, { "+1", -1 }, { "", -1 },
                { "Audio", -1 }, { "AUDIO", -1 }, { "audio ", -1 }, { "aud", -1 }, { "audios", -1 },
                { "low", -1 }, { "realtime", -1 }, { "3.0", -1 }, { "9", -1 },
        };
        AgLatency l;

        (void) state;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                l = (AgLatency) 99;
                int r = ag_latency_from_string(cases[i].s, &l);
                if (cases[i].want < 0) {
                        assert_int_equal(r, -EINVAL);
                        assert_int_equal(l, 99);        /* untouched */
                } else {
                        assert_int_equal(r, 0);
                        assert_int_equal(l, cases[i].want);
                }
        }
        assert_int_equal(ag_latency_from_string(NULL, &l), -EINVAL);
}

static void test_parse_line(void **state) {
        static const struct { const char *line; AgDomainKind kind; long value; } ok[] = {
                { "* latency 1",                AG_DOMAIN_ALL,   1 },
                { "* latency normal",           AG_DOMAIN_ALL,   1 },
                { "alice latency audio",        AG_DOMAIN_USER,  3 },
                { "alice latency 3 # comment",  AG_DOMAIN_USER,  3 },
                { "@video latency interactive", AG_DOMAIN_GROUP, 2 },
                { "1000:1999 latency 0",        AG_DOMAIN_RANGE, 0 },
                { "@batch\tlatency\tbatch\r",   AG_DOMAIN_GROUP, 0 },
        };
        static const struct { const char *line; const char *msg; } bad[] = {
                { "alice latency 4",            E_LATENCY },
                { "alice latency -1",           E_LATENCY },
                { "alice latency 01",           E_LATENCY },
                { "alice latency Audio",        E_LATENCY },
                { "alice latency yes",          E_LATENCY },
                { "alice latency none",         E_LATENCY },
                { "alice latency 100",          E_LATENCY },
                { "alice latency audio extra",  "trailing garbage after value" },
                { "alice Latency 3",            "unknown item" },
                { "alice latencies 3",          "unknown item" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
                const char *msg = "untouched";
                AgRule rule;

                assert_int_equal(ag_config_parse_line(ok[i].line, &rule, &msg), 1);
                assert_string_equal(msg, "untouched");
                assert_int_equal(rule.kind, ok[i].kind);
                assert_int_equal(rule.item, AG_ITEM_LATENCY);
                assert_int_equal(rule.value, ok[i].value);
                free(rule.name);
        }
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                const char *msg = NULL;
                AgRule rule;

                assert_int_equal(ag_config_parse_line(bad[i].line, &rule, &msg), -EINVAL);
                assert_non_null(msg);
                assert_string_equal(msg, bad[i].msg);
        }
}

static void count_error(void *userdata, const char *file, unsigned line, const char *message) {
        unsigned *lines = userdata;
        (void) file;
        (void) message;
        *lines = *lines * 100 + line;
}

static int in_group(void *userdata, const char *group) {
        (void) userdata;
        return strcmp(group, "video") == 0;
}

static void test_resolve(void **state) {
        static const char conf[] =
                "*            latency  batch\n"         /* 1 */
                "1000:1999    latency  2\n"             /* 2 */
                "@video       latency  audio\n"         /* 3 */
                "@video       latency  7\n"             /* 4: error, skipped */
                "alice        latency  normal\n"        /* 5 */
                "alice        weight   300\n";          /* 6 */
        AgConfig *c = calloc(1, sizeof *c);
        unsigned errors = 0;
        AgPolicy p;

        (void) state;
        assert_non_null(c);
        assert_int_equal(ag_config_parse_buffer(c, "t.conf", conf, sizeof conf - 1, count_error, &errors), 1);
        assert_int_equal(errors, 4);

        ag_policy_init(&p);
        assert_int_equal(p.latency, AG_LATENCY_NORMAL);

        ag_policy_resolve(c, "alice", 1500, in_group, NULL, &p);       /* user beats @group and range */
        assert_int_equal(p.latency, AG_LATENCY_NORMAL);
        assert_int_equal(p.source[AG_ITEM_LATENCY]->line, 5);
        assert_int_equal(p.weight, 300);                                /* items independent */

        ag_policy_resolve(c, "bob", 1500, in_group, NULL, &p);         /* @group beats range */
        assert_int_equal(p.latency, AG_LATENCY_AUDIO);
        assert_int_equal(p.source[AG_ITEM_LATENCY]->line, 3);

        ag_policy_resolve(c, "carol", 1500, NULL, NULL, &p);           /* range beats * */
        assert_int_equal(p.latency, AG_LATENCY_INTERACTIVE);

        ag_policy_resolve(c, "dave", 5000, NULL, NULL, &p);            /* * */
        assert_int_equal(p.latency, AG_LATENCY_BATCH);
        assert_int_equal(p.source[AG_ITEM_LATENCY]->line, 1);

        ag_policy_resolve(NULL, "dave", 5000, NULL, NULL, &p);         /* no config: default */
        assert_int_equal(p.latency, AG_LATENCY_NORMAL);
        assert_null(p.source[AG_ITEM_LATENCY]);
        ag_config_free(c);
}

static void test_mapping(void **state) {
        char buf[96];

        (void) state;
        assert_int_equal(ag_latency_policy(AG_LATENCY_BATCH), SCHED_BATCH);
        assert_int_equal(ag_latency_policy(AG_LATENCY_NORMAL), SCHED_OTHER);
        assert_int_equal(ag_latency_policy(AG_LATENCY_INTERACTIVE), SCHED_OTHER);
        assert_int_equal(ag_latency_policy(AG_LATENCY_AUDIO), SCHED_OTHER);
        /* within the kernel's 0.1..100 ms; 0 = the default */
        assert_int_equal(ag_latency_slice_ns(AG_LATENCY_BATCH), 100000000);
        assert_int_equal(ag_latency_slice_ns(AG_LATENCY_NORMAL), 0);
        assert_int_equal(ag_latency_slice_ns(AG_LATENCY_INTERACTIVE), 500000);
        assert_int_equal(ag_latency_slice_ns(AG_LATENCY_AUDIO), 100000);
        assert_true(ag_latency_slice_ns(AG_LATENCY_AUDIO) < ag_latency_slice_ns(AG_LATENCY_INTERACTIVE));
        assert_int_equal(sizeof(AgSchedAttr), 48);

        ag_latency_describe(AG_LATENCY_AUDIO, buf, sizeof buf);
        assert_string_equal(buf, "SCHED_OTHER, slice 0.1 ms");
        ag_latency_describe(AG_LATENCY_INTERACTIVE, buf, sizeof buf);
        assert_string_equal(buf, "SCHED_OTHER, slice 0.5 ms");
        ag_latency_describe(AG_LATENCY_BATCH, buf, sizeof buf);
        assert_string_equal(buf, "SCHED_BATCH, slice 100 ms");
        ag_latency_describe(AG_LATENCY_NORMAL, buf, sizeof buf);
        assert_string_equal(buf, "SCHED_OTHER, the kernel's default slice");
        assert_int_equal(ag_latency_apply(0, _AG_LATENCY_MAX, &(AgLatencyResult) { 0 }), -EINVAL);
}

/* The item "interactive": its syntax, resolution like every other item, the
 * leaf weight table and which weight a leaf of "autogroup run" gets. */
#define E_INTERACTIVE "invalid interactive (expected 0, 1 or 2)"

static void test_interactive_parse(void **state) {
        static const struct { const char *line; AgDomainKind kind; long value; } ok[] = {
                { "* interactive 0",             AG_DOMAIN_ALL,   0 },
                { "alice interactive 2",         AG_DOMAIN_USER,  2 },
                { "@video\tinteractive\t1\r",    AG_DOMAIN_GROUP, 1 },
                { "1000: interactive 2 # note",  AG_DOMAIN_RANGE, 2 },
        };
        static const struct { const char *line; const char *msg; } bad[] = {
                { "alice interactive 3",         E_INTERACTIVE },
                { "alice interactive -1",        E_INTERACTIVE },
                { "alice interactive 01",        E_INTERACTIVE },
                { "alice interactive 10",        E_INTERACTIVE },
                { "alice interactive yes",       E_INTERACTIVE },
                { "alice interactive audio",     E_INTERACTIVE },
                { "alice interactive 2 3",       "trailing garbage after value" },
                { "alice Interactive 2",         "unknown item" },
                { "pool:desk interactive 2",     "a pool:NAME domain takes only weight, max or idle" },
        };

        (void) state;
        assert_string_equal(ag_item_to_string(AG_ITEM_INTERACTIVE), "interactive");
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
                const char *msg = "untouched";
                AgRule rule;

                assert_int_equal(ag_config_parse_line(ok[i].line, &rule, &msg), 1);
                assert_string_equal(msg, "untouched");
                assert_int_equal(rule.kind, ok[i].kind);
                assert_int_equal(rule.item, AG_ITEM_INTERACTIVE);
                assert_int_equal(rule.value, ok[i].value);
                free(rule.name);
        }
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                const char *msg = NULL;
                AgRule rule;

                assert_int_equal(ag_config_parse_line(bad[i].line, &rule, &msg), -EINVAL);
                assert_non_null(msg);
                assert_string_equal(msg, bad[i].msg);
        }
}

static void test_interactive_resolve(void **state) {
        static const char conf[] =
                "*            interactive  1\n"         /* 1 */
                "1000:1999    interactive  2\n"         /* 2 */
                "@video       interactive  0\n"         /* 3 */
                "@video       interactive  5\n"         /* 4: error, skipped */
                "alice        interactive  2\n"         /* 5 */
                "alice        pool         desk\n"      /* 6: a pool member */
                "pool:desk    weight       300\n"       /* 7 */
                "*            interactive  0\n";        /* 8: the later * line wins */
        AgConfig *c = calloc(1, sizeof *c);
        unsigned errors = 0;
        AgPolicy p, pool;

        (void) state;
        assert_non_null(c);
        assert_int_equal(ag_config_parse_buffer(c, "t.conf", conf, sizeof conf - 1, count_error, &errors), 1);
        assert_int_equal(errors, 4);

        ag_policy_init(&p);
        assert_int_equal(p.interactive, 0);

        ag_policy_resolve(c, "alice", 1500, in_group, NULL, &p);       /* user beats @group and range */
        assert_int_equal(p.interactive, 2);
        assert_int_equal(p.source[AG_ITEM_INTERACTIVE]->line, 5);
        assert_string_equal(p.pool, "desk");                            /* pool members resolve it too */
        assert_int_equal(p.weight, AG_WEIGHT_DEFAULT);                  /* the user's weight untouched */
        ag_pool_policy_resolve(c, p.pool, &pool);
        assert_int_equal(pool.weight, 300);
        assert_int_equal(pool.interactive, 0);                          /* a pool has no level */

        ag_policy_resolve(c, "bob", 1500, in_group, NULL, &p);         /* @group beats range */
        assert_int_equal(p.interactive, 0);
        assert_int_equal(p.source[AG_ITEM_INTERACTIVE]->line, 3);

        ag_policy_resolve(c, "carol", 1500, NULL, NULL, &p);           /* range beats * */
        assert_int_equal(p.interactive, 2);

        ag_policy_resolve(c, "dave", 5000, NULL, NULL, &p);            /* * : the later line */
        assert_int_equal(p.interactive, 0);
        assert_int_equal(p.source[AG_ITEM_INTERACTIVE]->line, 8);

        ag_policy_resolve(NULL, "dave", 5000, NULL, NULL, &p);         /* no config: default 0 */
        assert_int_equal(p.interactive, 0);
        assert_null(p.source[AG_ITEM_INTERACTIVE]);
        ag_config_free(c);
}


/* The item "lane-cap" (the cap of the latency lane at interactive 2,
 * lib/cgroup/lane.h): the forms of "max", resolved like every item, never
 * from "*" or "@group" for root; the lane's name and who gets one. */
#define E_LANE_CAP "invalid lane-cap (expected N% of one CPU, N in 1..102400, or none)"

static void test_lane_cap(void **state) {
        static const struct { const char *line; long value; } ok[] = {
                { "* lane-cap 10%", 10 }, { "alice lane-cap 150%", 150 }, { "@video lane-cap none", AG_MAX_NONE },
                { "1000: lane-cap 102400%", 102400 },
        };
        static const char *const bad[] = {
                "* lane-cap 0%", "* lane-cap 10", "* lane-cap x%", "* lane-cap 102401%", "* lane-cap -5%",
                "* lane-cap %",
        };
        static const char conf[] =
                "*          lane-cap  20%\n"            /* 1 */
                "@video     lane-cap  none\n"           /* 2 */
                "alice      lane-cap  5%\n"             /* 3 */
                "pool:p     lane-cap  5%\n";            /* 4: error, skipped */
        AgConfig *c = calloc(1, sizeof *c);
        unsigned errors = 0;
        AgHierarchy v1 = { .version = 1, .has_cpu = true }, v2 = { .version = 2, .has_cpu = true };
        char name[128];
        AgPolicy p;
        uid_t uid;

        (void) state;
        assert_string_equal(ag_item_to_string(AG_ITEM_LANE_CAP), "lane-cap");
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
                const char *msg = "untouched";
                AgRule rule;

                assert_int_equal(ag_config_parse_line(ok[i].line, &rule, &msg), 1);
                assert_int_equal(rule.item, AG_ITEM_LANE_CAP);
                assert_int_equal(rule.value, ok[i].value);
                free(rule.name);
        }
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                const char *msg = NULL;
                AgRule rule;

                assert_int_equal(ag_config_parse_line(bad[i], &rule, &msg), -EINVAL);
                assert_string_equal(msg, E_LANE_CAP);
        }

        assert_non_null(c);
        assert_int_equal(ag_config_parse_buffer(c, "t.conf", conf, sizeof conf - 1, count_error, &errors), 1);
        ag_policy_init(&p);
        assert_int_equal(p.lane_cap_pct, AG_LANE_CAP_DEFAULT);
        assert_int_equal(AG_LANE_CAP_DEFAULT, 10);
        ag_policy_resolve(c, "alice", 1500, in_group, NULL, &p);
        assert_int_equal(p.lane_cap_pct, 5);
        ag_policy_resolve(c, "bob", 1500, in_group, NULL, &p);
        assert_int_equal(p.lane_cap_pct, AG_MAX_NONE);
        ag_policy_resolve(c, "carol", 1500, NULL, NULL, &p);
        assert_int_equal(p.lane_cap_pct, 20);
        ag_policy_resolve(c, "root", 0, in_group, NULL, &p);            /* "*" and "@group" not for root */
        assert_int_equal(p.lane_cap_pct, AG_LANE_CAP_DEFAULT);
        ag_config_free(c);

        /* the name, parsed back in its canonical spelling only */
        assert_int_equal(ag_lane_name("autogroup", 1000, name, sizeof name), 0);
        assert_string_equal(name, "autogroup.lane-1000");
        assert_int_equal(ag_lane_name("autogroup", 1000, name, 10), -ENOBUFS);
        assert_int_equal(ag_lane_parse("autogroup.lane-1000", "autogroup", &uid), 0);
        assert_int_equal(uid, 1000);
        assert_int_equal(ag_lane_parse("autogroup.lane-0", "autogroup", &uid), 0);
        assert_int_equal(uid, 0);
        assert_int_equal(ag_lane_parse("autogroup.lane-01000", "autogroup", &uid), -EINVAL);
        assert_int_equal(ag_lane_parse("autogroup.lane-", "autogroup", &uid), -EINVAL);
        assert_int_equal(ag_lane_parse("autogroup.lane-1x", "autogroup", &uid), -EINVAL);
        assert_int_equal(ag_lane_parse("other.lane-1000", "autogroup", &uid), -EINVAL);
        assert_int_equal(ag_lane_parse("autogroup", "autogroup", &uid), -EINVAL);

        /* who gets one: cgroup v1, interactive 2, not uid 0 */
        ag_policy_init(&p);
        assert_false(ag_lane_wanted(&v1, 1000, &p));
        p.interactive = 1;
        assert_false(ag_lane_wanted(&v1, 1000, &p));
        p.interactive = 2;
        assert_true(ag_lane_wanted(&v1, 1000, &p));
        assert_false(ag_lane_wanted(&v1, 0, &p));
        assert_false(ag_lane_wanted(&v2, 1000, &p));
        p.leaves = 0;                                                   /* no leaves at all: no lane */
        assert_false(ag_lane_wanted(&v1, 1000, &p));
        p.leaves_notty = 1;
        assert_true(ag_lane_wanted(&v1, 1000, &p));
}

/* A removed group's path is a lane's (the removed event, the accounting
 * record's scope lane, gc's audit uid) only as "/<root>.lane-<uid>", one
 * component, the uid spelt canonically. */
static void test_lane_path(void **state) {
        uid_t uid = 7;

        (void) state;
        assert_int_equal(ag_lane_path_uid("/autogroup.lane-1000", &uid), 0);
        assert_int_equal(uid, 1000);
        assert_int_equal(ag_lane_path_uid("/a.lane-b.lane-42", &uid), 0);       /* the last infix */
        assert_int_equal(uid, 42);
        assert_int_equal(ag_lane_path_uid("/autogroup.lane-5", NULL), 0);
        uid = 7;
        assert_int_equal(ag_lane_path_uid("autogroup.lane-1000", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid("/autogroup/user-1000/s.lane-1", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid("/autogroup/user-1000/s42", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid("/.lane-1000", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid("/autogroup.lane-01", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid("/autogroup.lane-", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid("/autogroup.lane-1x", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid("/autogroup.lane-4294967295", &uid), -EINVAL);
        assert_int_equal(ag_lane_path_uid(NULL, &uid), -EINVAL);
        assert_int_equal(uid, 7);
}

static void test_interactive_table(void **state) {
        (void) state;
        /* level 0: no weight is touched, whatever the class */
        for (AgLatency l = 0; l < _AG_LATENCY_MAX; l++)
                assert_int_equal(ag_latency_leaf_weight(l, 0), 0);
        /* levels 1 and 2: batch and normal keep the default, the rest grows */
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_BATCH, 1), 100);
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_NORMAL, 1), 100);
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_INTERACTIVE, 1), 200);
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_AUDIO, 1), 400);
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_BATCH, 2), 100);
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_NORMAL, 2), 100);
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_INTERACTIVE, 2), 400);
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_AUDIO, 2), 1000);
        /* progressive: never less with a higher class or a higher level, all valid weights */
        for (unsigned lv = 1; lv <= AG_INTERACTIVE_MAX; lv++)
                for (AgLatency l = 0; l < _AG_LATENCY_MAX; l++) {
                        unsigned w = ag_latency_leaf_weight(l, lv);
                        assert_true(w >= AG_WEIGHT_MIN && w <= AG_WEIGHT_MAX);
                        if (l > 0)
                                assert_true(w >= ag_latency_leaf_weight(l - 1, lv));
                        if (lv > 1)
                                assert_true(w >= ag_latency_leaf_weight(l, lv - 1));
                }
        /* out of range */
        assert_int_equal(ag_latency_leaf_weight(AG_LATENCY_AUDIO, 3), 0);
        assert_int_equal(ag_latency_leaf_weight(_AG_LATENCY_MAX, 2), 0);
        assert_int_equal(ag_latency_leaf_weight((AgLatency) -1, 2), 0);

        /* which weight a leaf gets: --weight wins; no class, no table */
        assert_int_equal(ag_latency_pick_leaf_weight(300, true, AG_LATENCY_AUDIO, 2), 300);
        assert_int_equal(ag_latency_pick_leaf_weight(0, true, AG_LATENCY_AUDIO, 2), 1000);
        assert_int_equal(ag_latency_pick_leaf_weight(0, true, AG_LATENCY_AUDIO, 0), 0);
        assert_int_equal(ag_latency_pick_leaf_weight(0, false, AG_LATENCY_AUDIO, 2), 0);
        assert_int_equal(ag_latency_pick_leaf_weight(0, true, AG_LATENCY_NORMAL, 1), 100);

        /* the module's AUTOGROUP_INTERACTIVE; anything else is level 0 */
        static const struct { const char *s; unsigned want; } env[] = {
                { "0", 0 }, { "1", 1 }, { "2", 2 }, { "3", 0 }, { "02", 0 }, { "2 ", 0 }, { "", 0 },
                { "-1", 0 }, { "x", 0 }, { "22", 0 },
        };
        for (size_t i = 0; i < sizeof env / sizeof env[0]; i++)
                assert_int_equal(ag_interactive_from_string(env[i].s), env[i].want);
        assert_int_equal(ag_interactive_from_string(NULL), 0);
}

/* On the running kernel, on the test's own thread: no privilege needed. */
static void test_apply_self(void **state) {
        AgSchedAttr before, after;
        AgLatencyResult res;

        (void) state;
        assert_int_equal(ag_sched_getattr(0, &before), 0);
        if (before.sched_policy != SCHED_OTHER && before.sched_policy != SCHED_BATCH)
                skip();

        assert_int_equal(ag_latency_apply(0, AG_LATENCY_AUDIO, &res), 0);
        assert_int_equal(ag_sched_getattr(0, &after), 0);
        assert_int_equal(after.sched_policy, SCHED_OTHER);
        assert_int_equal(after.sched_nice, before.sched_nice);         /* the weight is kept */
        if (res == AG_LATENCY_APPLIED)
                assert_int_equal(after.sched_runtime, 100000);
        else
                assert_int_equal(res, AG_LATENCY_NO_SLICES);

        assert_int_equal(ag_latency_apply(0, AG_LATENCY_BATCH, &res), 0);
        assert_int_equal(ag_sched_getattr(0, &after), 0);
        assert_int_equal(after.sched_policy, SCHED_BATCH);             /* applies even without slices */
        assert_int_equal(after.sched_nice, before.sched_nice);

        assert_int_equal(ag_latency_apply(0, AG_LATENCY_NORMAL, &res), 0);
        assert_int_equal(res, AG_LATENCY_APPLIED);
        assert_int_equal(ag_sched_getattr(0, &after), 0);
        assert_int_equal(after.sched_policy, SCHED_OTHER);
        assert_int_equal(after.sched_nice, before.sched_nice);

        /* a process: every thread (here the only one) */
        assert_int_equal(ag_latency_apply_process(getpid(), AG_LATENCY_INTERACTIVE, &res), 0);
        assert_int_equal(ag_sched_getattr(0, &after), 0);
        if (res == AG_LATENCY_APPLIED)
                assert_int_equal(after.sched_runtime, 500000);
        assert_int_equal(ag_latency_apply_process(0, AG_LATENCY_AUDIO, &res), -EINVAL);
        assert_int_equal(ag_latency_apply(0, AG_LATENCY_NORMAL, &res), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_from_string),
                cmocka_unit_test(test_parse_line),
                cmocka_unit_test(test_resolve),
                cmocka_unit_test(test_mapping),
                cmocka_unit_test(test_interactive_parse),
                cmocka_unit_test(test_interactive_resolve),
                cmocka_unit_test(test_interactive_table),
                cmocka_unit_test(test_lane_cap),
                cmocka_unit_test(test_lane_path),
                cmocka_unit_test(test_apply_self),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
