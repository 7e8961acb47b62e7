/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the autogroup.conf parser and loader (lib/config/config-*.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

#include "conf.h"
#include "lint.h"
#include "unit-util.h"
#include "../fuzz/rule-invariants.h"

#define UID_OPEN_MAX ((uid_t) -1 - 1)

/* ---- error collection ---- */

#define MAX_ERRORS 64

typedef struct Error {
        char file[512];
        bool has_file;
        unsigned line;
        char message[512];
} Error;

typedef struct Errors {
        Error e[MAX_ERRORS];
        size_t n;                       /* every call, even past MAX_ERRORS */
} Errors;

static void collect(void *userdata, const char *file, unsigned line, const char *message) {
        Errors *errs = userdata;

        assert_non_null(message);
        if (errs->n < MAX_ERRORS) {
                Error *e = &errs->e[errs->n];
                e->has_file = file != NULL;
                snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
                e->line = line;
                snprintf(e->message, sizeof(e->message), "%s", message);
        }
        errs->n++;
}

static void assert_error(const Errors *errs, size_t i, const char *file, unsigned line, const char *message) {
        assert_true(i < errs->n && i < MAX_ERRORS);
        if (file)
                assert_string_equal(errs->e[i].file, file);
        assert_int_equal(errs->e[i].line, line);
        assert_string_equal(errs->e[i].message, message);
}

/* c has n rules, from the lines given after n, in this order */
static void assert_rule_lines(const AgConfig *c, size_t n, ...) {
        va_list ap;

        assert_int_equal(c->n_rules, n);
        va_start(ap, n);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(c->rules[i].line, va_arg(ap, unsigned));
        va_end(ap);
}

/* assert_error() for errors first, first + 1, ...: a LINE, MESSAGE pair
 * each after file, up to a line 0 */
static void assert_errors(const Errors *errs, size_t first, const char *file, ...) {
        va_list ap;
        unsigned line;

        va_start(ap, file);
        for (size_t i = first; (line = va_arg(ap, unsigned)) > 0; i++)
                assert_error(errs, i, file, line, va_arg(ap, const char *));
        va_end(ap);
}

static AgConfig *config_new(void) {
        AgConfig *c = calloc(1, sizeof(AgConfig));
        assert_non_null(c);
        return c;
}

/* Parses text as one file named "test.conf". */
static AgConfig *parse_n(const char *text, size_t size, Errors *errs, int *ret_n) {
        AgConfig *c = config_new();
        int r;

        memset(errs, 0, sizeof(*errs));
        r = ag_config_parse_buffer(c, "test.conf", text, size, collect, errs);
        assert_true(r >= 0);
        assert_int_equal((size_t) r, errs->n);
        if (ret_n)
                *ret_n = r;
        return c;
}

static AgConfig *parse(const char *text, Errors *errs) {
        return parse_n(text, strlen(text), errs, NULL);
}

/* ---- names ---- */

static void test_to_string(void **state) {
        static const char *const items[] = {
                [AG_ITEM_WEIGHT] = "weight", [AG_ITEM_MAX] = "max", [AG_ITEM_SESSIONS] = "sessions",
                [AG_ITEM_IDLE] = "idle", [AG_ITEM_POOL] = "pool",
        };
        static const char *const kinds[] = {
                [AG_DOMAIN_ALL] = "*", [AG_DOMAIN_RANGE] = "range", [AG_DOMAIN_GROUP] = "group",
                [AG_DOMAIN_USER] = "user", [AG_DOMAIN_POOL] = "pool",
        };

        /* the names of these items and kinds; the other items' with their tests */
        for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
                if (items[i])
                        assert_string_equal(ag_item_to_string((AgItem) i), items[i]);
        assert_null(ag_item_to_string(_AG_ITEM_MAX));
        assert_null(ag_item_to_string((AgItem) -1));
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
                if (kinds[i])
                        assert_string_equal(ag_domain_kind_to_string((AgDomainKind) i), kinds[i]);
        assert_null(ag_domain_kind_to_string(_AG_DOMAIN_KIND_MAX));

        /* the precedence order the resolver relies on */
        assert_true(AG_DOMAIN_ALL < AG_DOMAIN_RANGE);
        assert_true(AG_DOMAIN_RANGE < AG_DOMAIN_GROUP);
        assert_true(AG_DOMAIN_GROUP < AG_DOMAIN_USER);
}

/* ---- single lines ---- */

typedef struct ValidCase {
        const char *line;
        AgDomainKind kind;
        const char *name;
        uid_t uid_min, uid_max;
        AgItem item;
        long value;
} ValidCase;

static const ValidCase valid_cases[] = {
        { "* weight 100",                AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "*\tweight\t1",                AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 1 },
        { "  *   weight   10000   ",     AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 10000 },
        { "\t* \t weight \t 42\t",       AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 42 },
        { "* weight 0100",               AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "* weight 100# comment",       AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "* weight 100 # comment",      AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "* weight 100 #",              AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "* weight 100\r",              AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "* weight 100 \t \r",          AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "* weight 100 # c\r",          AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_WEIGHT, 100 },
        { "* max none",                  AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_MAX, AG_MAX_NONE },
        { "* max 1%",                    AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_MAX, 1 },
        { "* max 102400%",               AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_MAX, 102400 },
        { "* sessions yes",              AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_SESSIONS, 1 },
        { "* sessions no",               AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_SESSIONS, 0 },
        { "* idle yes",                  AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_IDLE, 1 },
        { "* idle no",                   AG_DOMAIN_ALL,   NULL, 0, 0, AG_ITEM_IDLE, 0 },
        { "1000: sessions yes",          AG_DOMAIN_RANGE, NULL, 1000, UID_OPEN_MAX, AG_ITEM_SESSIONS, 1 },
        /* limits.conf(5): ":N" is exactly uid N, not 0..N */
        { ":999 idle no",                AG_DOMAIN_RANGE, NULL, 999, 999, AG_ITEM_IDLE, 0 },
        { ":0 weight 5",                 AG_DOMAIN_RANGE, NULL, 0, 0, AG_ITEM_WEIGHT, 5 },
        { "0:999 sessions no",           AG_DOMAIN_RANGE, NULL, 0, 999, AG_ITEM_SESSIONS, 0 },
        { "1000:2000 max 200%",          AG_DOMAIN_RANGE, NULL, 1000, 2000, AG_ITEM_MAX, 200 },
        { "0:0 weight 5",                AG_DOMAIN_RANGE, NULL, 0, 0, AG_ITEM_WEIGHT, 5 },
        { "5:5 weight 5",                AG_DOMAIN_RANGE, NULL, 5, 5, AG_ITEM_WEIGHT, 5 },
        { "0: weight 5",                 AG_DOMAIN_RANGE, NULL, 0, UID_OPEN_MAX, AG_ITEM_WEIGHT, 5 },
        { "007:010 weight 3",            AG_DOMAIN_RANGE, NULL, 7, 10, AG_ITEM_WEIGHT, 3 },
        { "4294967294: weight 1",        AG_DOMAIN_RANGE, NULL, 4294967294u, 4294967294u, AG_ITEM_WEIGHT, 1 },
        { ":4294967294 weight 1",        AG_DOMAIN_RANGE, NULL, 4294967294u, 4294967294u, AG_ITEM_WEIGHT, 1 },
        { "@students weight 50",         AG_DOMAIN_GROUP, "students", 0, 0, AG_ITEM_WEIGHT, 50 },
        { "@students max 200%",          AG_DOMAIN_GROUP, "students", 0, 0, AG_ITEM_MAX, 200 },
        { "@batch idle yes",             AG_DOMAIN_GROUP, "batch", 0, 0, AG_ITEM_IDLE, 1 },
        { "@a-b_c.d$ sessions no",       AG_DOMAIN_GROUP, "a-b_c.d$", 0, 0, AG_ITEM_SESSIONS, 0 },
        { "@x weight 2",                 AG_DOMAIN_GROUP, "x", 0, 0, AG_ITEM_WEIGHT, 2 },
        { "alice weight 400",            AG_DOMAIN_USER,  "alice", 0, 0, AG_ITEM_WEIGHT, 400 },
        { "root sessions no",            AG_DOMAIN_USER,  "root", 0, 0, AG_ITEM_SESSIONS, 0 },
        { "alice max none",              AG_DOMAIN_USER,  "alice", 0, 0, AG_ITEM_MAX, AG_MAX_NONE },
        { "1000 weight 7",               AG_DOMAIN_USER,  "1000", 0, 0, AG_ITEM_WEIGHT, 7 },
        { "first.last-x_y weight 7",     AG_DOMAIN_USER,  "first.last-x_y", 0, 0, AG_ITEM_WEIGHT, 7 },
        { "DOMAIN\\user idle yes",       AG_DOMAIN_USER,  "DOMAIN\\user", 0, 0, AG_ITEM_IDLE, 1 },
        { "a@b weight 3",                AG_DOMAIN_USER,  "a@b", 0, 0, AG_ITEM_WEIGHT, 3 },
        { "** weight 3",                 AG_DOMAIN_USER,  "**", 0, 0, AG_ITEM_WEIGHT, 3 },
};

static void test_parse_line_valid(void **state) {
        assert_int_equal(sizeof(uid_t), 4);     /* the table's big uids assume it */

        for (size_t i = 0; i < sizeof(valid_cases) / sizeof(valid_cases[0]); i++) {
                const ValidCase *t = &valid_cases[i];
                const char *msg = "untouched";
                AgRule rule;
                int r;

                memset(&rule, 0xaa, sizeof(rule));
                r = ag_config_parse_line(t->line, &rule, &msg);
                if (r != 1)
                        print_error("line '%s': r=%d msg=%s\n", t->line, r, msg);
                assert_int_equal(r, 1);
                assert_string_equal(msg, "untouched");
                assert_int_equal(rule.kind, t->kind);
                if (t->name)
                        assert_string_equal(rule.name, t->name);
                else
                        assert_null(rule.name);
                if (t->kind == AG_DOMAIN_RANGE) {
                        assert_int_equal(rule.uid_min, t->uid_min);
                        assert_int_equal(rule.uid_max, t->uid_max);
                }
                assert_int_equal(rule.item, t->item);
                assert_int_equal(rule.value, t->value);
                free(rule.name);
        }
}

static void test_parse_line_blank(void **state) {
        static const char *const blank[] = {
                "", " ", "\t", "  \t  ", "\r", " \t\r", "#", "# comment", "   # indented",
                "\t#* weight 100", "#alice frob 1", "# \x01\x7f\xff binary in comment",
        };

        for (size_t i = 0; i < sizeof(blank) / sizeof(blank[0]); i++) {
                const char *msg = "untouched";
                AgRule rule;

                memset(&rule, 0x55, sizeof(rule));
                assert_int_equal(ag_config_parse_line(blank[i], &rule, &msg), 0);
                assert_string_equal(msg, "untouched");
        }
}

typedef struct InvalidCase {
        const char *line;
        const char *message;
} InvalidCase;

#define E_FIELDS   "expected <domain> <item> <value>"
#define E_TRAIL    "trailing garbage after value"
#define E_CHAR     "invalid character in domain"
#define E_RANGE    "invalid uid range"
#define E_UID      "uid out of range"
#define E_ORDER    "uid range min greater than max"
#define E_GROUP    "empty group name"
#define E_GIDRANGE "gid ranges (@min:max, @:gid) are not supported; name the group"
#define E_LONG     "name too long"
#define E_ITEM     "unknown item"
#define E_WEIGHT   "invalid weight (expected 1..10000)"
#define E_MAX      "invalid max (expected N% with N 1..102400, or none)"
#define E_SESSIONS "invalid sessions (expected yes or no)"
#define E_IDLE     "invalid idle (expected yes or no)"

static const InvalidCase invalid_cases[] = {
        /* field count */
        { "alice",                       E_FIELDS },
        { "alice weight",                E_FIELDS },
        { "  alice   weight  # 100",     E_FIELDS },
        { "alice weight 100 extra",      E_TRAIL },
        { "alice weight 100 200",        E_TRAIL },
        { "alice weight 1 0 0",          E_TRAIL },
        { "alice max 50 %",              E_TRAIL },
        /* ranges */
        { ": weight 1",                  E_RANGE },
        { "5:1 weight 1",                E_ORDER },
        { "2000:1000 weight 1",          E_ORDER },
        { "-1: weight 1",                E_RANGE },
        { "+1: weight 1",                E_RANGE },
        { "1:-2 weight 1",               E_RANGE },
        { "1:+2 weight 1",               E_RANGE },
        { "1:2:3 weight 1",              E_RANGE },
        { "1:: weight 1",                E_RANGE },
        { ":: weight 1",                 E_RANGE },
        { "1000:x weight 1",             E_RANGE },
        { "x:1000 weight 1",             E_RANGE },
        { "0x10: weight 1",              E_RANGE },
        { "1e3: weight 1",               E_RANGE },
        { "4294967295: weight 1",        E_UID },
        { ":4294967295 weight 1",        E_UID },
        { "4294967296: weight 1",        E_UID },
        { ":99999999999999999999999999 weight 1", E_UID },
        /* groups */
        { "@ weight 1",                  E_GROUP },
        { "@@x weight 1",                E_CHAR },
        { "@a:b weight 1",               E_CHAR },
        /* limits.conf's gid ranges: refused by name, not read as a group "100:200" */
        { "@100:200 weight 1",           E_GIDRANGE },
        { "@:100 weight 1",              E_GIDRANGE },
        { "@100: weight 1",              E_GIDRANGE },
        { "@g\x01 weight 1",             E_CHAR },
        /* bad characters */
        { "al\x01" "ce weight 1",        E_CHAR },
        { "al\x7f weight 1",             E_CHAR },
        { "\xc3\xa9t\xc3\xa9 weight 1",  E_CHAR },
        { "alice\xff weight 1",          E_CHAR },
        { "alice\r weight 1",            E_CHAR },
        { "ali\vce weight 1",            E_CHAR },
        { "ali\fce weight 1",            E_CHAR },
        { "\x1b[31m weight 1",           E_CHAR },
        /* items: exact, case-sensitive keywords */
        { "alice Weight 1",              E_ITEM },
        { "alice WEIGHT 1",              E_ITEM },
        { "alice weights 1",             E_ITEM },
        { "alice weigh 1",               E_ITEM },
        { "alice cpu 1",                 E_ITEM },
        { "alice priority 1",            E_ITEM },
        { "alice weight\r 1",            E_ITEM },
        /* weight */
        { "alice weight 0",              E_WEIGHT },
        { "alice weight 00",             E_WEIGHT },
        { "alice weight 10001",          E_WEIGHT },
        { "alice weight -1",             E_WEIGHT },
        { "alice weight +5",             E_WEIGHT },
        { "alice weight 5x",             E_WEIGHT },
        { "alice weight 1.5",            E_WEIGHT },
        { "alice weight 1e3",            E_WEIGHT },
        { "alice weight 0x10",           E_WEIGHT },
        { "alice weight 99999999999999999999999999999", E_WEIGHT },
        { "alice weight 18446744073709551617", E_WEIGHT },
        { "alice weight none",           E_WEIGHT },
        { "alice weight 100%",           E_WEIGHT },
        { "alice weight 1\r0",           E_WEIGHT },
        /* max */
        { "alice max 0%",                E_MAX },
        { "alice max 102401%",           E_MAX },
        { "alice max %",                 E_MAX },
        { "alice max 50",                E_MAX },
        { "alice max none%",             E_MAX },
        { "alice max NONE",              E_MAX },
        { "alice max None",              E_MAX },
        { "alice max -5%",               E_MAX },
        { "alice max +5%",               E_MAX },
        { "alice max 5%%",               E_MAX },
        { "alice max %5",                E_MAX },
        { "alice max 1.5%",              E_MAX },
        { "alice max 99999999999999999999999%", E_MAX },
        { "alice max unlimited",         E_MAX },
        /* booleans */
        { "alice sessions Yes",          E_SESSIONS },
        { "alice sessions 1",            E_SESSIONS },
        { "alice sessions true",         E_SESSIONS },
        { "alice sessions yess",         E_SESSIONS },
        { "alice sessions y",            E_SESSIONS },
        { "alice idle YES",              E_IDLE },
        { "alice idle 0",                E_IDLE },
        { "alice idle off",              E_IDLE },
        { "alice idle n",                E_IDLE },
};

static void test_parse_line_invalid(void **state) {
        for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(invalid_cases[0]); i++) {
                const InvalidCase *t = &invalid_cases[i];
                const char *msg = NULL;
                AgRule rule, before;
                int r;

                memset(&rule, 0x5a, sizeof(rule));
                before = rule;
                r = ag_config_parse_line(t->line, &rule, &msg);
                if (r != -EINVAL || !msg || strcmp(msg, t->message) != 0)
                        print_error("case %zu: r=%d msg='%s' expected '%s'\n", i, r, msg ? msg : "(null)", t->message);
                assert_int_equal(r, -EINVAL);
                assert_non_null(msg);
                assert_string_equal(msg, t->message);
                assert_memory_equal(&rule, &before, sizeof(rule));  /* untouched */
        }

        /* ret_error may be NULL */
        AgRule rule;
        assert_int_equal(ag_config_parse_line("alice weight 0", &rule, NULL), -EINVAL);
}

/* ---- pools ---- */

#define E_POOL      "invalid pool (expected a pool name or none)"
#define E_POOL_NAME "invalid pool name (expected 1..32 of a-z 0-9 _ -, starting with a letter or digit)"
#define E_POOL_ITEM "a pool:NAME domain takes only weight, max or idle"

static void test_parse_line_pool(void **state) {
        static const struct {
                const char *line;
                AgDomainKind kind;
                const char *name;
                AgItem item;
                long value;
                const char *str;
        } cases[] = {
                { "@physics pool physics",       AG_DOMAIN_GROUP, "physics", AG_ITEM_POOL, 1, "physics" },
                { "alice pool chem",             AG_DOMAIN_USER,  "alice", AG_ITEM_POOL, 1, "chem" },
                { "2000:2999 pool guests",       AG_DOMAIN_RANGE, NULL, AG_ITEM_POOL, 1, "guests" },
                { "* pool none",                 AG_DOMAIN_ALL,   NULL, AG_ITEM_POOL, 0, NULL },
                { "bob pool 0a_b-c",             AG_DOMAIN_USER,  "bob", AG_ITEM_POOL, 1, "0a_b-c" },
                { "bob pool abcdefghijklmnopqrstuvwxyz012345", AG_DOMAIN_USER, "bob", AG_ITEM_POOL, 1,
                  "abcdefghijklmnopqrstuvwxyz012345" },
                { "pool:physics weight 300",     AG_DOMAIN_POOL,  "physics", AG_ITEM_WEIGHT, 300, NULL },
                { "pool:physics max 800%",       AG_DOMAIN_POOL,  "physics", AG_ITEM_MAX, 800, NULL },
                { "pool:physics max none",       AG_DOMAIN_POOL,  "physics", AG_ITEM_MAX, AG_MAX_NONE, NULL },
                { "pool:b idle yes",             AG_DOMAIN_POOL,  "b", AG_ITEM_IDLE, 1, NULL },
                { "pool:9 weight 1 # comment",   AG_DOMAIN_POOL,  "9", AG_ITEM_WEIGHT, 1, NULL },
                { "pool weight 5",               AG_DOMAIN_USER,  "pool", AG_ITEM_WEIGHT, 5, NULL },
                { "pool pool pool",              AG_DOMAIN_USER,  "pool", AG_ITEM_POOL, 1, "pool" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *msg = "untouched";
                AgRule rule;
                int r;

                memset(&rule, 0xaa, sizeof(rule));
                r = ag_config_parse_line(cases[i].line, &rule, &msg);
                if (r != 1)
                        print_error("line '%s': r=%d msg=%s\n", cases[i].line, r, msg);
                assert_int_equal(r, 1);
                assert_int_equal(rule.kind, cases[i].kind);
                if (cases[i].name)
                        assert_string_equal(rule.name, cases[i].name);
                else
                        assert_null(rule.name);
                assert_int_equal(rule.item, cases[i].item);
                assert_int_equal(rule.value, cases[i].value);
                if (cases[i].str)
                        assert_string_equal(rule.str, cases[i].str);
                else
                        assert_null(rule.str);
                free(rule.name);
                free(rule.str);
        }

        /* pool names: the valid ones first */
        static const char *const names[] = { "a", "a-_9", "", NULL, "-a", "_a", "A", "a.b", "a/b",
                                             "abcdefghijklmnopqrstuvwxyz0123456" };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                assert_int_equal(ag_pool_name_valid(names[i], names[i] ? strlen(names[i]) : 0), i < 2);
}

static const InvalidCase pool_invalid_cases[] = {
        /* the pool item's value */
        { "alice pool Physics",          E_POOL },
        { "alice pool -x",               E_POOL },
        { "alice pool _x",               E_POOL },
        { "alice pool a.b",              E_POOL },
        { "alice pool ../x",             E_POOL },
        { "alice pool a/b",              E_POOL },
        { "alice pool pool-x:y",         E_POOL },
        { "alice pool NONE",             E_POOL },
        { "alice pool abcdefghijklmnopqrstuvwxyz0123456", E_POOL },
        { "alice pool caf\xc3\xa9",       E_POOL },
        { "alice pool x y",              E_TRAIL },
        { "alice pool",                  E_FIELDS },
        /* the pool:NAME domain */
        { "pool: weight 1",              E_POOL_NAME },
        { "pool:Physics weight 1",       E_POOL_NAME },
        { "pool:-x weight 1",            E_POOL_NAME },
        { "pool:a.b weight 1",           E_POOL_NAME },
        { "pool:a:b weight 1",           E_POOL_NAME },
        { "pool:abcdefghijklmnopqrstuvwxyz0123456 weight 1", E_POOL_NAME },
        { "pool:x sessions no",          E_POOL_ITEM },
        { "pool:x sessions yes",         E_POOL_ITEM },
        { "pool:x pool y",               E_POOL_ITEM },
        { "pool:x pool none",            E_POOL_ITEM },
        { "pool:x weight 0",             E_WEIGHT },
        { "pool:x max 0%",               E_MAX },
        { "pool:x idle maybe",           E_IDLE },
        { "pool:x frob 1",               E_ITEM },
        { "Pool:x weight 1",             E_RANGE },
        { "@pool:x weight 1",            E_CHAR },
};

static void test_parse_line_pool_invalid(void **state) {
        for (size_t i = 0; i < sizeof(pool_invalid_cases) / sizeof(pool_invalid_cases[0]); i++) {
                const InvalidCase *t = &pool_invalid_cases[i];
                const char *msg = NULL;
                AgRule rule, before;
                int r;

                memset(&rule, 0x5a, sizeof(rule));
                before = rule;
                r = ag_config_parse_line(t->line, &rule, &msg);
                if (r != -EINVAL || !msg || strcmp(msg, t->message) != 0)
                        print_error("case %zu '%s': r=%d msg='%s' expected '%s'\n", i, t->line, r,
                                    msg ? msg : "(null)", t->message);
                assert_int_equal(r, -EINVAL);
                assert_string_equal(msg, t->message);
                assert_memory_equal(&rule, &before, sizeof(rule));  /* untouched */
        }
}

/* Malformed pool lines name file:line and are skipped; the rest applies. */
static void test_buffer_pool(void **state) {
        static const char text[] =
                "@physics pool physics\n"       /* 1 */
                "pool:physics weight 300\n"     /* 2 */
                "pool:physics sessions no\n"    /* 3: not a pool item */
                "alice pool Chem\n"             /* 4: bad name */
                "pool:Chem weight 5\n"          /* 5: bad name */
                "pool:chem pool physics\n"      /* 6: not a pool item */
                "bob pool none\n"               /* 7 */
                "pool:chem max 200%\n";         /* 8 */
        Errors errs;
        int n;
        AgConfig *c = parse_n(text, sizeof(text) - 1, &errs, &n);

        assert_int_equal(n, 4);
        assert_errors(&errs, 0, "test.conf", 3, E_POOL_ITEM, 4, E_POOL, 5, E_POOL_NAME, 6, E_POOL_ITEM, 0);
        assert_int_equal(c->n_rules, 4);
        assert_int_equal(c->rules[0].line, 1);
        assert_string_equal(c->rules[0].str, "physics");
        assert_int_equal(c->rules[1].kind, AG_DOMAIN_POOL);
        assert_string_equal(c->rules[1].name, "physics");
        assert_int_equal(c->rules[2].line, 7);
        assert_null(c->rules[2].str);
        assert_int_equal(c->rules[3].line, 8);
        ag_config_free(c);
}

static void test_parse_line_name_length(void **state) {
        char line[AG_NAME_MAX + 64];
        const char *msg = NULL;
        AgRule rule;

        /* AG_NAME_MAX - 1 characters: the longest accepted */
        memset(line, 'a', AG_NAME_MAX - 1);
        strcpy(line + AG_NAME_MAX - 1, " weight 5");
        assert_int_equal(ag_config_parse_line(line, &rule, &msg), 1);
        assert_int_equal(rule.kind, AG_DOMAIN_USER);
        assert_int_equal(strlen(rule.name), AG_NAME_MAX - 1);
        free(rule.name);

        memset(line, 'a', AG_NAME_MAX);
        strcpy(line + AG_NAME_MAX, " weight 5");
        assert_int_equal(ag_config_parse_line(line, &rule, &msg), -EINVAL);
        assert_string_equal(msg, E_LONG);

        line[0] = '@';
        memset(line + 1, 'g', AG_NAME_MAX - 1);
        strcpy(line + AG_NAME_MAX, " weight 5");
        assert_int_equal(ag_config_parse_line(line, &rule, &msg), 1);
        assert_int_equal(rule.kind, AG_DOMAIN_GROUP);
        assert_int_equal(strlen(rule.name), AG_NAME_MAX - 1);
        free(rule.name);

        memset(line + 1, 'g', AG_NAME_MAX);
        strcpy(line + AG_NAME_MAX + 1, " weight 5");
        assert_int_equal(ag_config_parse_line(line, &rule, &msg), -EINVAL);
        assert_string_equal(msg, E_LONG);
}

static void test_parse_line_too_long(void **state) {
        char line[AG_LINE_MAX + 2];
        const char *msg = NULL;
        AgRule rule;

        /* exactly AG_LINE_MAX bytes: accepted (a rule padded with blanks) */
        memset(line, ' ', AG_LINE_MAX);
        memcpy(line, "* weight 5", 10);
        line[AG_LINE_MAX] = 0;
        assert_int_equal(ag_config_parse_line(line, &rule, &msg), 1);
        assert_int_equal(rule.value, 5);

        /* one more byte: refused, even though it is only blanks */
        memset(line, ' ', AG_LINE_MAX + 1);
        memcpy(line, "* weight 5", 10);
        line[AG_LINE_MAX + 1] = 0;
        assert_int_equal(ag_config_parse_line(line, &rule, &msg), -EINVAL);
        assert_string_equal(msg, "line too long");

        /* a long comment is too long as well */
        memset(line, '#', AG_LINE_MAX + 1);
        assert_int_equal(ag_config_parse_line(line, &rule, &msg), -EINVAL);
        assert_string_equal(msg, "line too long");
}

/* ---- buffers ---- */

static void test_buffer_line_numbers(void **state) {
        static const char text[] =
                "# header\n"                    /* 1 */
                "* weight 100\n"                /* 2 */
                "bogus\n"                       /* 3 */
                "\n"                            /* 4 */
                "alice weight 0\n"              /* 5 */
                "@g max 200%\n"                 /* 6 */
                "alice frob 1\n"                /* 7 */
                "   # indented comment\n"       /* 8 */
                "5:1 idle yes\n"                /* 9 */
                "bob sessions no\n"             /* 10 */
                "bob sessions no please\n"      /* 11 */
                ": weight 1\n"                  /* 12 */
                "@ weight 1\n"                  /* 13 */
                "4294967295: weight 1\n"        /* 14 */
                "carol max 0%\n"                /* 15 */
                "carol idle maybe\n"            /* 16 */
                "carol sessions 1\n"            /* 17 */
                "d\x01ve weight 5\n"            /* 18 */
                "1000: idle yes\n";             /* 19 */
        Errors errs;
        int n;
        AgConfig *c = parse_n(text, sizeof(text) - 1, &errs, &n);

        assert_int_equal(n, 12);
        assert_errors(&errs, 0, "test.conf", 3, E_FIELDS, 5, E_WEIGHT, 7, "unknown item 'frob'", 9, E_ORDER,
                      11, E_TRAIL, 12, E_RANGE, 13, E_GROUP, 14, E_UID, 15, E_MAX, 16, E_IDLE, 17, E_SESSIONS,
                      18, E_CHAR, 0);

        assert_rule_lines(c, 4, 2, 6, 10, 19);
        ag_config_free(c);
}

/* Valid lines still apply after bad ones, in file order, with their lines. */
static void test_buffer_mixed(void **state) {
        Errors errs;
        int n;
        static const char text[] =
                "* weight 100\n"                /* 1 */
                "bogus line here too\n"         /* 2 */
                "@students weight 50\n"         /* 3 */
                "@students max 200%\n"          /* 4 */
                "alice weight 0\n"              /* 5 */
                "alice weight 400\n"            /* 6 */
                "root sessions no\n"            /* 7 */
                "@batch idle yes\n"             /* 8 */
                "1000: sessions yes\n";         /* 9 */
        AgConfig *c = parse_n(text, sizeof(text) - 1, &errs, &n);

        assert_int_equal(n, 2);
        assert_error(&errs, 0, "test.conf", 2, E_TRAIL);
        assert_error(&errs, 1, "test.conf", 5, E_WEIGHT);

        assert_int_equal(c->n_rules, 7);
        static const unsigned lines[] = { 1, 3, 4, 6, 7, 8, 9 };
        static const AgDomainKind kinds[] = {
                AG_DOMAIN_ALL, AG_DOMAIN_GROUP, AG_DOMAIN_GROUP, AG_DOMAIN_USER,
                AG_DOMAIN_USER, AG_DOMAIN_GROUP, AG_DOMAIN_RANGE,
        };
        static const AgItem items[] = {
                AG_ITEM_WEIGHT, AG_ITEM_WEIGHT, AG_ITEM_MAX, AG_ITEM_WEIGHT,
                AG_ITEM_SESSIONS, AG_ITEM_IDLE, AG_ITEM_SESSIONS,
        };
        static const long values[] = { 100, 50, 200, 400, 0, 1, 1 };
        for (size_t i = 0; i < c->n_rules; i++) {
                assert_int_equal(c->rules[i].line, lines[i]);
                assert_int_equal(c->rules[i].kind, kinds[i]);
                assert_int_equal(c->rules[i].item, items[i]);
                assert_int_equal(c->rules[i].value, values[i]);
                assert_string_equal(c->rules[i].file, "test.conf");
        }
        assert_string_equal(c->rules[1].name, "students");
        assert_string_equal(c->rules[3].name, "alice");
        assert_int_equal(c->rules[6].uid_min, 1000);
        assert_int_equal(c->rules[6].uid_max, UID_OPEN_MAX);

        /* file names are owned copies, and rules point at them */
        assert_int_equal(c->n_files, 1);
        assert_string_equal(c->files[0], "test.conf");
        for (size_t i = 0; i < c->n_rules; i++)
                assert_ptr_equal(c->rules[i].file, c->files[0]);
        ag_config_free(c);
}

static void test_buffer_unknown_item_message(void **state) {
        Errors errs;
        char text[512];
        AgConfig *c;

        c = parse("alice frob 1\nbob Weight 2\ncarol we\x01ght 3\ndave it'em 4\n", &errs);
        assert_int_equal(errs.n, 4);
        assert_errors(&errs, 0, "test.conf", 1, "unknown item 'frob'", 2, "unknown item 'Weight'",
                      3, "unknown item 'we\\x01ght'", 4, "unknown item 'it\\x27em'", 0);
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);

        /* a long item is cut in the message */
        strcpy(text, "alice ");
        memset(text + 6, 'x', 300);
        strcpy(text + 306, " 1\n");
        c = parse(text, &errs);
        assert_int_equal(errs.n, 1);
        assert_int_equal(errs.e[0].line, 1);
        assert_true(strncmp(errs.e[0].message, "unknown item 'xxxx", 18) == 0);
        assert_true(strlen(errs.e[0].message) < 100);
        assert_string_equal(errs.e[0].message + strlen(errs.e[0].message) - 5, "x...'");
        ag_config_free(c);
}

static void test_buffer_overlong(void **state) {
        size_t big = 100000;
        char *text = malloc(big + 4 * AG_LINE_MAX);
        size_t o = 0;
        Errors errs;
        int n;
        AgConfig *c;

        assert_non_null(text);

        /* 1: exactly AG_LINE_MAX: fine */
        memset(text + o, '#', AG_LINE_MAX);
        o += AG_LINE_MAX;
        text[o++] = '\n';
        /* 2: AG_LINE_MAX + 1, a rule padded with blanks: one error */
        memset(text + o, ' ', AG_LINE_MAX + 1);
        memcpy(text + o, "* weight 1", 10);
        o += AG_LINE_MAX + 1;
        text[o++] = '\n';
        /* 3: a valid rule */
        o += (size_t) sprintf(text + o, "* weight 3\n");
        /* 4: a huge line that looks like a rule: one error, no rule */
        memset(text + o, ' ', big);
        memcpy(text + o, "* weight 4", 10);
        o += big;
        text[o++] = '\n';
        /* 5: a valid rule (CRLF) */
        o += (size_t) sprintf(text + o, "* weight 5\r\n");
        /* 6: overlong, last line without a newline */
        memset(text + o, '#', AG_LINE_MAX + 5);
        o += AG_LINE_MAX + 5;

        c = parse_n(text, o, &errs, &n);
        assert_int_equal(n, 3);
        assert_errors(&errs, 0, "test.conf", 2, "line too long", 4, "line too long", 6, "line too long", 0);
        assert_int_equal(c->n_rules, 2);
        assert_int_equal(c->rules[0].line, 3);
        assert_int_equal(c->rules[0].value, 3);
        assert_int_equal(c->rules[1].line, 5);
        assert_int_equal(c->rules[1].value, 5);
        ag_config_free(c);
        free(text);
}

static void test_buffer_nul(void **state) {
        static const char text[] =
                "alice weight 100\0\n"          /* 1: NUL at the end */
                "* weight 2\n"                  /* 2 */
                "bo\0b weight 3\n"              /* 3: NUL in the domain */
                "# comment \0 with a NUL\n"     /* 4: NUL even in a comment */
                "\0\n"                          /* 5: only a NUL */
                "carol weight 6\n"              /* 6 */
                "dave weight 7\0";              /* 7: last line, no newline */
        Errors errs;
        int n;
        AgConfig *c = parse_n(text, sizeof(text) - 1, &errs, &n);

        assert_int_equal(n, 5);
        assert_errors(&errs, 0, "test.conf", 1, "invalid character (NUL)", 3, "invalid character (NUL)",
                      4, "invalid character (NUL)", 5, "invalid character (NUL)", 7, "invalid character (NUL)", 0);
        assert_rule_lines(c, 2, 2, 6);
        assert_string_equal(c->rules[1].name, "carol");
        ag_config_free(c);
}

static uint64_t rng_next(uint64_t *s) {
        /* xorshift64*: deterministic, so a failure can be replayed */
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * 2685821657736338717ULL;
}

static void check_rule_sane(const AgRule *r) {
        const char *broken = rule_broken(r);

        if (broken)
                fail_msg("a rule breaks %s", broken);
}

/* Random binary: never a crash, never a rule. */
static void test_buffer_binary_garbage(void **state) {
        size_t size = 256 * 1024;
        unsigned char *buf = malloc(size);
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        Errors errs;
        int n;

        assert_non_null(buf);
        for (int round = 0; round < 8; round++) {
                for (size_t i = 0; i < size; i++)
                        buf[i] = (unsigned char) rng_next(&seed);
                /* round 0: as is (long lines, NULs); later rounds: more newlines */
                if (round > 0)
                        for (size_t i = 0; i < size; i += 1 + rng_next(&seed) % (size_t) (round * 40))
                                buf[i] = '\n';
                AgConfig *c = parse_n((const char *) buf, size, &errs, &n);
                assert_true(n > 0);
                assert_int_equal(c->n_rules, 0);
                ag_config_free(c);
        }

        /* an ELF-like header followed by text */
        static const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\n* weight 9\n";
        AgConfig *c = parse_n(elf, sizeof(elf) - 1, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, "test.conf", 1, "invalid character (NUL)");
        assert_int_equal(c->n_rules, 1);
        assert_int_equal(c->rules[0].line, 2);
        ag_config_free(c);

        free(buf);
}

/* Lines made of pieces of valid and invalid syntax: every accepted rule is
 * sane, every line is either a rule, blank, or exactly one error, and
 * parse_line agrees with parse_buffer. */
static void test_buffer_token_soup(void **state) {
        static const char *const pieces[] = {
                "*", "@g", "@", "@@", "alice", "1000:", ":999", "5:1", ":", "1:2:3", "4294967295:",
                "weight", "max", "sessions", "idle", "Weight", "frob",
                "100", "0", "10001", "50%", "0%", "102400%", "none", "yes", "no", "%", "-1",
                "#", "\t", " ", "  ", "\r", "\x01", "\xff", "x", "\v",
        };
        size_t n_pieces = sizeof(pieces) / sizeof(pieces[0]);
        uint64_t seed = 12345;
        char line[256];

        for (int i = 0; i < 20000; i++) {
                size_t len = 0;
                int k = (int) (rng_next(&seed) % 7);

                line[0] = 0;
                for (int j = 0; j < k; j++) {
                        const char *p = pieces[rng_next(&seed) % n_pieces];
                        if (len + strlen(p) + 2 >= sizeof(line))
                                break;
                        len += (size_t) sprintf(line + len, "%s%s", p, rng_next(&seed) % 4 ? " " : "");
                }

                const char *msg = NULL;
                AgRule rule;
                int r = ag_config_parse_line(line, &rule, &msg);
                assert_true(r == 0 || r == 1 || r == -EINVAL);
                if (r == 1) {
                        check_rule_sane(&rule);
                        free(rule.name);
                }

                Errors errs;
                int n;
                AgConfig *c = parse_n(line, len, &errs, &n);
                if (r == 1) {
                        assert_int_equal(n, 0);
                        assert_int_equal(c->n_rules, 1);
                        check_rule_sane(&c->rules[0]);
                } else if (r == 0) {
                        assert_int_equal(n, 0);
                        assert_int_equal(c->n_rules, 0);
                } else {
                        assert_int_equal(n, 1);
                        assert_int_equal(c->n_rules, 0);
                        assert_true(strncmp(errs.e[0].message, msg, strlen(msg)) == 0);
                }
                ag_config_free(c);
        }
}

static void test_buffer_crlf(void **state) {
        static const char text[] =
                "# a file from another system\r\n"
                "* weight 200\r\n"
                "\r\n"
                "@g max 50%\r\n"
                "alice idle yes   \r\n"
                "bob sessions no # comment\r\n"
                "carol weight 7\r";             /* last line, CR and no LF */
        Errors errs;
        int n;
        AgConfig *c = parse_n(text, sizeof(text) - 1, &errs, &n);

        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 5);
        assert_int_equal(c->rules[0].value, 200);
        assert_int_equal(c->rules[0].line, 2);
        assert_int_equal(c->rules[1].value, 50);
        assert_string_equal(c->rules[1].name, "g");
        assert_int_equal(c->rules[2].value, 1);
        assert_string_equal(c->rules[2].name, "alice");
        assert_int_equal(c->rules[3].value, 0);
        assert_int_equal(c->rules[4].value, 7);
        assert_int_equal(c->rules[4].line, 7);
        ag_config_free(c);

        /* a CR anywhere else is not a blank */
        c = parse("alice\rweight 1\nalice max\r50%\n", &errs);
        assert_int_equal(errs.n, 2);
        assert_error(&errs, 0, "test.conf", 1, E_FIELDS);
        assert_error(&errs, 1, "test.conf", 2, E_FIELDS);
        ag_config_free(c);

        /* a bare CR is a line-ending blank, not a line separator */
        c = parse("alice weight 1\rbob weight 2\n", &errs);
        assert_int_equal(errs.n, 1);
        assert_error(&errs, 0, "test.conf", 1, E_TRAIL);
        ag_config_free(c);
}

static void test_buffer_edges(void **state) {
        Errors errs;
        int n;
        AgConfig *c;

        /* empty */
        c = parse_n("", 0, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);

        c = config_new();
        assert_int_equal(ag_config_parse_buffer(c, "x", NULL, 0, collect, &errs), 0);
        assert_int_equal(ag_config_parse_buffer(c, "x", NULL, 1, collect, &errs), -EINVAL);
        assert_int_equal(ag_config_parse_buffer(NULL, "x", "", 0, collect, &errs), -EINVAL);
        ag_config_free(c);

        /* only newlines, then a rule: line counting */
        c = parse("\n\n\n* weight 4", &errs);
        assert_int_equal(errs.n, 0);
        assert_int_equal(c->n_rules, 1);
        assert_int_equal(c->rules[0].line, 4);
        ag_config_free(c);

        /* the last line without newline is still checked */
        c = parse("* weight 1\nbogus", &errs);
        assert_int_equal(errs.n, 1);
        assert_error(&errs, 0, "test.conf", 2, E_FIELDS);
        ag_config_free(c);

        /* a trailing newline does not make an extra line */
        c = parse("* weight 1\n", &errs);
        assert_int_equal(errs.n, 0);
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);

        /* a buffer that is not NUL-terminated: the size is honoured */
        char raw[] = { '*', ' ', 'w', 'e', 'i', 'g', 'h', 't', ' ', '1', '2' };
        c = parse_n(raw, sizeof(raw) - 1, &errs, &n);      /* "* weight 1" */
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 1);
        assert_int_equal(c->rules[0].value, 1);
        ag_config_free(c);

        /* no file: rules get no file, errors get NULL, callback may be NULL */
        c = config_new();
        memset(&errs, 0, sizeof(errs));
        assert_int_equal(ag_config_parse_buffer(c, NULL, "* weight 1\nbad\n", 15, collect, &errs), 1);
        assert_int_equal(errs.n, 1);
        assert_false(errs.e[0].has_file);
        assert_int_equal(c->n_rules, 1);
        assert_null(c->rules[0].file);
        assert_int_equal(ag_config_parse_buffer(c, "f", "bad\nbad\n* idle yes\n", 19, NULL, NULL), 2);
        assert_int_equal(c->n_rules, 2);
        assert_string_equal(c->rules[1].file, "f");
        ag_config_free(c);

        assert_null(ag_config_free(NULL));
}

/* Several buffers into one config: order kept, each rule points at its own
 * file, many rules grow the array. */
static void test_buffer_several_files(void **state) {
        AgConfig *c = config_new();
        char name[64], *big;
        size_t o = 0;
        Errors errs = {};

        assert_int_equal(ag_config_parse_buffer(c, "main.conf", "* weight 1\n* weight 2\n", 22, collect, &errs), 0);
        assert_int_equal(ag_config_parse_buffer(c, "only-errors.conf", "bad\n", 4, collect, &errs), 1);

        big = malloc(1000 * 32);
        assert_non_null(big);
        for (int i = 1; i <= 1000; i++)
                o += (size_t) sprintf(big + o, "user%d weight %d\n", i, i);
        assert_int_equal(ag_config_parse_buffer(c, "d/50-big.conf", big, o, collect, &errs), 0);
        free(big);

        assert_int_equal(c->n_rules, 1002);
        assert_string_equal(c->rules[0].file, "main.conf");
        assert_string_equal(c->rules[1].file, "main.conf");
        assert_ptr_equal(c->rules[0].file, c->rules[1].file);
        for (int i = 1; i <= 1000; i++) {
                const AgRule *r = &c->rules[1 + i];
                snprintf(name, sizeof(name), "user%d", i);
                assert_string_equal(r->name, name);
                assert_int_equal(r->value, i);
                assert_int_equal(r->line, (unsigned) i);
                assert_string_equal(r->file, "d/50-big.conf");
        }
        /* every rule's file is one of config->files */
        for (size_t i = 0; i < c->n_rules; i++) {
                bool found = false;
                for (size_t j = 0; j < c->n_files; j++)
                        found = found || c->rules[i].file == c->files[j];
                assert_true(found);
        }
        ag_config_free(c);
}

static void test_dropin_dir(void **state) {
        static const struct {
                const char *path, *dir;
        } cases[] = {
                { "/etc/security/autogroup.conf", "/etc/security/autogroup.d" },
                { "/etc/security/autogroup",      "/etc/security/autogroup.d" },
                { "autogroup.conf",               "autogroup.d" },
                { "x.conf.conf",                  "x.conf.d" },
                { "/a/b.config",                  "/a/b.config.d" },
                { "/a/b.CONF",                    "/a/b.CONF.d" },
                { "/a/conf",                      "/a/conf.d" },
                { ".conf",                        ".d" },
                { "",                             ".d" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *d = NULL;
                assert_int_equal(ag_config_dropin_dir(cases[i].path, &d), 0);
                assert_string_equal(d, cases[i].dir);
                free(d);
        }

        char *untouched = (char *) "x";
        assert_int_equal(ag_config_dropin_dir(NULL, &untouched), -EINVAL);
        assert_string_equal(untouched, "x");
}

/* ---- files ---- */

static char *path_join(const char *dir, const char *name) {
        char *p;
        assert_true(asprintf(&p, "%s/%s", dir, name) >= 0);
        return p;
}

static void write_file_n(const char *path, const char *content, size_t size, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        while (size > 0) {
                ssize_t n = write(fd, content, size);
                assert_true(n > 0);
                content += n;
                size -= (size_t) n;
        }
        assert_int_equal(close(fd), 0);
        assert_int_equal(chmod(path, mode), 0);
}

static void write_file(const char *path, const char *content) {
        write_file_n(path, content, strlen(content), 0644);
}

static void write_dropin(const TmpDir *t, const char *name, const char *content) {
        char *p = path_join(t->dropins, name);
        write_file(p, content);
        free(p);
}

static void make_dropins(const TmpDir *t) {
        assert_int_equal(mkdir(t->dropins, 0755), 0);
        assert_int_equal(chmod(t->dropins, 0755), 0);
}

static AgConfig *load(const char *path, unsigned flags, Errors *errs, int *ret_n) {
        AgConfig *c = NULL;
        int r;

        memset(errs, 0, sizeof(*errs));
        r = ag_config_load(path, flags, collect, errs, &c);
        assert_true(r >= 0);
        assert_non_null(c);
        assert_int_equal((size_t) r, errs->n);
        if (ret_n)
                *ret_n = r;
        return c;
}

static bool is_root(void) {
        return geteuid() == 0;
}

static void expect_errno_message(char *buf, size_t size, const char *what, int err) {
        snprintf(buf, size, "%s: %s", what, strerror(err));
}

static void test_load_missing(void **state) {
        TmpDir *t = *state;
        Errors errs;
        int n;
        AgConfig *c;

        /* neither main file nor drop-ins: no error, empty config */
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 0);
        assert_int_equal(c->n_files, 0);
        ag_config_free(c);

        /* a missing directory on the way is just as missing */
        char *deep = path_join(t->path, "no/such/dir/autogroup.conf");
        c = load(deep, 0, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);
        free(deep);

        /* bad arguments; *ret untouched */
        AgConfig *untouched = (AgConfig *) 0x1;
        assert_int_equal(ag_config_load(NULL, 0, collect, &errs, &untouched), -EINVAL);
        assert_ptr_equal(untouched, (AgConfig *) 0x1);
}

static void test_load_empty_file(void **state) {
        TmpDir *t = *state;
        Errors errs;
        int n;
        AgConfig *c;

        write_file(t->conf, "");
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);

        write_file(t->conf, "# only comments\n\n   \n");
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);
}

/* Main file first, then drop-ins sorted with strcmp; only *.conf not
 * starting with '.'. */
static void test_load_dropin_order(void **state) {
        TmpDir *t = *state;
        Errors errs;
        int n;
        AgConfig *c;

        write_file(t->conf, "* weight 1\nmain-bad\n* weight 2\n");
        make_dropins(t);
        put_files(t->dropins,
                  "b.conf", "* weight 30\n",
                  "a.conf", "* weight 20\nbad\n",
                  "10-x.conf", "* weight 10\n",
                  "B.conf", "* weight 15\n", /* 'B' < 'a' in strcmp */
                  "a.conf~", "* weight 900\n",
                  ".hidden.conf", "* weight 901\n",
                  "x.conf.bak", "* weight 902\n",
                  "x.CONF", "* weight 903\n",
                  "README", "* weight 904\n",
                  ".conf", "* weight 905\n",
                  "conf", "* weight 906\n",
                  "empty.conf", "",
                  NULL);

        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 2);
        assert_error(&errs, 0, t->conf, 2, E_FIELDS);
        char *a = path_join(t->dropins, "a.conf");
        assert_error(&errs, 1, a, 2, E_FIELDS);

        static const long expect[] = { 1, 2, 10, 15, 20, 30 };
        static const unsigned lines[] = { 1, 3, 1, 1, 1, 1 };
        static const char *const files[] = { NULL, NULL, "10-x.conf", "B.conf", "a.conf", "b.conf" };
        assert_int_equal(c->n_rules, 6);
        for (size_t i = 0; i < 6; i++) {
                assert_int_equal(c->rules[i].value, expect[i]);
                assert_int_equal(c->rules[i].line, lines[i]);
                if (files[i]) {
                        char *p = path_join(t->dropins, files[i]);
                        assert_string_equal(c->rules[i].file, p);
                        free(p);
                } else
                        assert_string_equal(c->rules[i].file, t->conf);
        }
        ag_config_free(c);

        /* without drop-ins */
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER | AG_CONFIG_NO_DROPINS, &errs, &n);
        assert_int_equal(n, 1);
        assert_int_equal(c->n_rules, 2);
        ag_config_free(c);

        /* the main file missing: drop-ins still read */
        assert_int_equal(unlink(t->conf), 0);
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, a, 2, E_FIELDS);
        assert_int_equal(c->n_rules, 4);
        assert_int_equal(c->rules[0].value, 10);
        ag_config_free(c);

        /* a main path without ".conf": its drop-ins are <path>.d */
        char *plain = path_join(t->path, "plain");
        char *plain_d = path_join(t->path, "plain.d");
        char *plain_x = path_join(plain_d, "x.conf");
        write_file(plain, "* weight 7\n");
        assert_int_equal(mkdir(plain_d, 0755), 0);
        write_file(plain_x, "* weight 8\n");
        c = load(plain, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 2);
        assert_int_equal(c->rules[0].value, 7);
        assert_int_equal(c->rules[1].value, 8);
        assert_string_equal(c->rules[1].file, plain_x);
        ag_config_free(c);

        free(plain);
        free(plain_d);
        free(plain_x);
        free(a);
}

static void test_load_not_regular(void **state) {
        TmpDir *t = *state;
        char msg[256];
        Errors errs;
        int n;
        AgConfig *c;

        /* a directory where the main file should be */
        assert_int_equal(mkdir(t->conf, 0755), 0);
        make_dropins(t);
        write_dropin(t, "ok.conf", "* weight 5\n");
        /* a directory in the drop-in dir */
        char *dir = path_join(t->dropins, "dir.conf");
        assert_int_equal(mkdir(dir, 0755), 0);
        /* a FIFO: must not hang */
        char *fifo = path_join(t->dropins, "fifo.conf");
        assert_int_equal(mkfifo(fifo, 0644), 0);
        /* a dangling symlink */
        char *dangling = path_join(t->dropins, "dangling.conf");
        assert_int_equal(symlink("/nonexistent/ag-test", dangling), 0);
        /* a symlink loop */
        char *loop = path_join(t->dropins, "loop.conf");
        assert_int_equal(symlink("loop.conf", loop), 0);
        char *loop2 = path_join(t->dropins, "loop2.conf");
        char *loop3 = path_join(t->dropins, "loop3.conf");
        assert_int_equal(symlink("loop3.conf", loop2), 0);
        assert_int_equal(symlink("loop2.conf", loop3), 0);
        /* a good symlink is followed */
        char *target = path_join(t->path, "target");
        char *link = path_join(t->dropins, "link.conf");
        write_file(target, "* weight 6\n");
        assert_int_equal(symlink(target, link), 0);

        for (int trust = 0; trust < 2; trust++) {
                if (!trust && !is_root())
                        continue;       /* unprivileged: nothing is trusted without the flag */
                c = load(t->conf, trust ? AG_CONFIG_TRUST_ANY_OWNER : 0, &errs, &n);
                assert_int_equal(n, 7);
                /* main first; then sorted: dangling dir fifo link loop loop2 loop3 ok */
                assert_error(&errs, 0, t->conf, 0, "not a regular file (a directory)");
                expect_errno_message(msg, sizeof(msg), "cannot open", ENOENT);
                assert_error(&errs, 1, dangling, 0, msg);
                assert_error(&errs, 2, dir, 0, "not a regular file (a directory)");
                assert_error(&errs, 3, fifo, 0, "not a regular file (a FIFO)");
                expect_errno_message(msg, sizeof(msg), "cannot open", ELOOP);
                assert_error(&errs, 4, loop, 0, msg);
                assert_error(&errs, 5, loop2, 0, msg);
                assert_error(&errs, 6, loop3, 0, msg);
                assert_int_equal(c->n_rules, 2);
                assert_int_equal(c->rules[0].value, 6);
                assert_string_equal(c->rules[0].file, link);   /* the name, not the target */
                assert_int_equal(c->rules[1].value, 5);
                ag_config_free(c);
        }

        free(dir);
        free(fifo);
        free(dangling);
        free(loop);
        free(loop2);
        free(loop3);
        free(target);
        free(link);
}

static void test_load_dropins_not_a_dir(void **state) {
        TmpDir *t = *state;
        char msg[256];
        Errors errs;
        int n;

        write_file(t->conf, "* weight 5\n");
        write_file(t->dropins, "* weight 6\n");       /* a file named autogroup.d */
        AgConfig *c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 1);
        expect_errno_message(msg, sizeof(msg), "cannot open", ENOTDIR);
        assert_error(&errs, 0, t->dropins, 0, msg);
        assert_int_equal(c->n_rules, 1);
        assert_int_equal(c->rules[0].value, 5);
        ag_config_free(c);
}

static void test_load_too_large(void **state) {
        TmpDir *t = *state;
        size_t mib = 1024 * 1024;
        char *buf = malloc(mib + 1);
        unsigned lines = 0;
        Errors errs;
        int n;
        AgConfig *c;

        assert_non_null(buf);
        /* exactly 1 MiB of comment lines ending in a rule: accepted */
        static const char rule[] = "* weight 5\n";
        size_t prefix = mib - (sizeof(rule) - 1);
        for (size_t i = 0; i < prefix; i++)
                buf[i] = (i % 64 == 63 || i == prefix - 1) ? '\n' : '#';
        for (size_t i = 0; i < prefix; i++)
                lines += buf[i] == '\n';
        memcpy(buf + prefix, rule, sizeof(rule) - 1);
        write_file_n(t->conf, buf, mib, 0644);
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 1);
        assert_int_equal(c->rules[0].line, lines + 1);
        ag_config_free(c);

        /* one byte more: refused as a whole */
        buf[mib] = '\n';
        write_file_n(t->conf, buf, mib + 1, 0644);
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, t->conf, 0, "file too large, ignored");
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);

        /* a sparse huge file as a drop-in */
        make_dropins(t);
        char *huge = path_join(t->dropins, "huge.conf");
        write_file(huge, "");
        assert_int_equal(truncate(huge, 1LL << 32), 0);
        write_dropin(t, "z.conf", "* weight 9\n");
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 2);
        assert_error(&errs, 1, huge, 0, "file too large, ignored");
        assert_int_equal(c->n_rules, 1);
        assert_int_equal(c->rules[0].value, 9);
        ag_config_free(c);

        free(huge);
        free(buf);
}

/* Rule 4: a file not owned by root is refused without the trust flag and
 * read with it. */
static void test_load_refuse_owner(void **state) {
        TmpDir *t = *state;
        Errors errs;
        int n;
        AgConfig *c;

        write_file(t->conf, "* weight 5\n");
        if (is_root())
                assert_int_equal(chown(t->conf, 65534, 0), 0);

        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, t->conf, 0, "not owned by root, ignored");
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);

        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);

        /* the same for one drop-in among others */
        make_dropins(t);
        write_dropin(t, "a.conf", "* weight 6\n");
        write_dropin(t, "b.conf", "* weight 7\n");
        char *a = path_join(t->dropins, "a.conf");
        if (is_root()) {
                assert_int_equal(chown(t->conf, 0, 0), 0);
                assert_int_equal(chown(a, 65534, 65534), 0);
                c = load(t->conf, 0, &errs, &n);
                assert_int_equal(n, 1);
                assert_error(&errs, 0, a, 0, "not owned by root, ignored");
                assert_int_equal(c->n_rules, 2);
                assert_int_equal(c->rules[0].value, 5);
                assert_int_equal(c->rules[1].value, 7);
                ag_config_free(c);
        }
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 3);
        ag_config_free(c);
        free(a);
}

/* Root only: modes. */
static void test_load_refuse_modes(void **state) {
        TmpDir *t = *state;
        Errors errs;
        int n;
        AgConfig *c;

        if (!is_root())
                skip();

        write_file(t->conf, "* weight 5\n");

        /* root-owned 0644 and 0600: accepted without the flag */
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);
        assert_int_equal(chmod(t->conf, 0600), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);

        /* world-writable */
        assert_int_equal(chmod(t->conf, 0646), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, t->conf, 0, "world-writable, ignored");
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);
        assert_int_equal(chmod(t->conf, 0666), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, t->conf, 0, "world-writable, ignored");
        ag_config_free(c);
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);

        /* group-writable by group root: fine; by another group: refused */
        assert_int_equal(chmod(t->conf, 0664), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);
        assert_int_equal(chown(t->conf, 0, 65534), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, t->conf, 0, "group-writable, ignored");
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);
        /* readable only by another group is fine */
        assert_int_equal(chmod(t->conf, 0644), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 0);
        ag_config_free(c);

        /* owner is checked first */
        assert_int_equal(chown(t->conf, 65534, 65534), 0);
        assert_int_equal(chmod(t->conf, 0666), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, t->conf, 0, "not owned by root, ignored");
        ag_config_free(c);

        /* a symlink is judged by its target */
        assert_int_equal(chown(t->conf, 0, 0), 0);
        assert_int_equal(chmod(t->conf, 0644), 0);
        make_dropins(t);
        char *target = path_join(t->path, "target");
        char *link = path_join(t->dropins, "link.conf");
        write_file(target, "* weight 8\n");
        assert_int_equal(chmod(target, 0666), 0);
        assert_int_equal(symlink(target, link), 0);
        c = load(t->conf, 0, &errs, &n);
        assert_int_equal(n, 1);
        assert_error(&errs, 0, link, 0, "world-writable, ignored");
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);
        free(target);
        free(link);
}

/* The drop-in directory itself must be safe, else all its files are skipped. */
static void test_load_refuse_dropin_dir(void **state) {
        TmpDir *t = *state;
        Errors errs;
        int n;
        AgConfig *c;

        make_dropins(t);
        write_dropin(t, "a.conf", "* weight 6\n");

        if (is_root()) {
                write_file(t->conf, "* weight 5\n");
                char *a = path_join(t->dropins, "a.conf");

                assert_int_equal(chmod(t->dropins, 0757), 0);
                c = load(t->conf, 0, &errs, &n);
                assert_int_equal(n, 1);
                assert_error(&errs, 0, t->dropins, 0, "world-writable, ignored");
                assert_int_equal(c->n_rules, 1);                /* the main file still applies */
                assert_int_equal(c->rules[0].value, 5);
                ag_config_free(c);

                /* sticky does not help */
                assert_int_equal(chmod(t->dropins, 01777), 0);
                c = load(t->conf, 0, &errs, &n);
                assert_int_equal(n, 1);
                assert_error(&errs, 0, t->dropins, 0, "world-writable, ignored");
                ag_config_free(c);

                assert_int_equal(chmod(t->dropins, 0775), 0);
                assert_int_equal(chown(t->dropins, 0, 65534), 0);
                c = load(t->conf, 0, &errs, &n);
                assert_int_equal(n, 1);
                assert_error(&errs, 0, t->dropins, 0, "group-writable, ignored");
                ag_config_free(c);

                assert_int_equal(chmod(t->dropins, 0755), 0);
                assert_int_equal(chown(t->dropins, 65534, 65534), 0);
                c = load(t->conf, 0, &errs, &n);
                assert_int_equal(n, 1);
                assert_error(&errs, 0, t->dropins, 0, "not owned by root, ignored");
                assert_int_equal(c->n_rules, 1);
                ag_config_free(c);

                /* back to root: read */
                assert_int_equal(chown(t->dropins, 0, 0), 0);
                c = load(t->conf, 0, &errs, &n);
                assert_int_equal(n, 0);
                assert_int_equal(c->n_rules, 2);
                assert_string_equal(c->rules[1].file, a);
                ag_config_free(c);
                free(a);
        } else {
                /* no main file; the directory is ours, not root's */
                c = load(t->conf, 0, &errs, &n);
                assert_int_equal(n, 1);
                assert_error(&errs, 0, t->dropins, 0, "not owned by root, ignored");
                assert_int_equal(c->n_rules, 0);
                ag_config_free(c);
        }

        /* trusted: read */
        assert_int_equal(chmod(t->dropins, 0777), 0);
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 0);
        assert_int_equal(c->rules[c->n_rules - 1].value, 6);
        ag_config_free(c);
}

/* Unprivileged only: an unreadable file is reported with its errno text. */
static void test_load_unreadable(void **state) {
        TmpDir *t = *state;
        char msg[256];
        Errors errs;
        int n;

        if (is_root())
                skip();

        write_file_n(t->conf, "* weight 5\n", 11, 0000);
        make_dropins(t);
        write_dropin(t, "a.conf", "* weight 6\n");
        char *b = path_join(t->dropins, "b.conf");
        write_file_n(b, "* weight 7\n", 11, 0000);

        AgConfig *c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 2);
        expect_errno_message(msg, sizeof(msg), "cannot open", EACCES);
        assert_error(&errs, 0, t->conf, 0, msg);
        assert_error(&errs, 1, b, 0, msg);
        assert_int_equal(c->n_rules, 1);
        assert_int_equal(c->rules[0].value, 6);
        ag_config_free(c);

        /* an unreadable drop-in directory */
        assert_int_equal(chmod(t->dropins, 0000), 0);
        c = load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, &errs, &n);
        assert_int_equal(n, 2);
        assert_error(&errs, 1, t->dropins, 0, msg);
        assert_int_equal(c->n_rules, 0);
        ag_config_free(c);
        free(b);
}

/* No callback: errors are still counted. */
static void test_load_null_callback(void **state) {
        TmpDir *t = *state;
        AgConfig *c = NULL;

        write_file(t->conf, "bad\n* weight 5\nbad again\n");
        assert_int_equal(ag_config_load(t->conf, AG_CONFIG_TRUST_ANY_OWNER, NULL, NULL, &c), 2);
        assert_int_equal(c->n_rules, 1);
        ag_config_free(c);
}


/* ---- lint: lines that parse but change the policy silently ---- */

/* A name service for the lint: "alice", "bob" and group "staff" known,
 * "down*" names fail (the service could not answer); counts the questions. */
typedef struct FakeNss {
        bool down;                     /* every look-up fails */
        unsigned asked;
        char last[64];
} FakeNss;

static int fake_lookup(void *userdata, AgDomainKind kind, const char *name) {
        FakeNss *f = userdata;

        f->asked++;
        snprintf(f->last, sizeof f->last, "%s%s", kind == AG_DOMAIN_GROUP ? "@" : "", name);
        if (f->down || strncmp(name, "down", 4) == 0)
                return -EHOSTDOWN;
        if (kind == AG_DOMAIN_USER)
                return strcmp(name, "alice") == 0 || strcmp(name, "bob") == 0 || strcmp(name, "1234") == 0;
        return strcmp(name, "staff") == 0;
}

/* keeps the last message only */
typedef struct Last {
        unsigned line;
        char message[512];
} Last;

static void collect_last(void *userdata, const char *file, unsigned line, const char *message) {
        Last *l = userdata;

        (void) file;
        l->line = line;
        snprintf(l->message, sizeof l->message, "%s", message);
}

static int lint(const char *text, FakeNss *f, Errors *warns) {
        Errors errs;
        AgConfig *c = parse(text, &errs);
        int n;

        assert_int_equal(errs.n, 0);
        memset(warns, 0, sizeof *warns);
        n = ag_config_lint(c, f ? fake_lookup : NULL, f, collect, warns);
        assert_int_equal((size_t) n, warns->n);
        ag_config_free(c);
        return n;
}

/* A uid range written with '-', or a bare uid, is a user name to the parser. */
static void test_lint_dash_range(void **state) {
        FakeNss f = {};
        Errors w;

        (void) state;
        assert_int_equal(lint("1000-2000 weight 50\n1000- max 50%\n1000 idle yes\n1234 idle yes\n"
                              "alice weight 5\n1000:2000 weight 60\n", &f, &w), 3);
        assert_errors(&w, 0, "test.conf", 1, "'1000-2000' is read as a user name, not as a uid range: write 1000:2000",
                      2, "'1000-' is read as a user name, not as a uid range: write 1000:",
                      3, "'1000' is read as a user name, not as a uid: write :1000", 0);
        /* an account named 1234 exists: its rule is fine */
        /* without a name service the ranges are still flagged */
        assert_int_equal(lint("1000-2000 weight 50\nnobody-here weight 5\n", NULL, &w), 1);
        assert_error(&w, 0, "test.conf", 1, "'1000-2000' is read as a user name, not as a uid range: write 1000:2000");
}

static void test_lint_unknown_names(void **state) {
        FakeNss f = {};
        Errors w;

        (void) state;
        assert_int_equal(lint("alice weight 5\ncarol weight 6\n@staff max 50%\n@nogroup max 40%\n"
                              "carol idle yes\n* weight 100\n:1000 weight 7\n", &f, &w), 2);
        assert_error(&w, 0, "test.conf", 2, "unknown user 'carol' (the name service does not know it): the rule "
                     "applies to nobody (1 more line names it too)");
        assert_error(&w, 1, "test.conf", 4, "unknown group '@nogroup' (the name service does not know it): the rule "
                     "applies to nobody");
        /* each distinct name asked once: alice, carol, @staff, @nogroup */
        assert_int_equal(f.asked, 4);
}

/* A name service that cannot answer: said once, and nothing asked after it. */
static void test_lint_nss_down(void **state) {
        FakeNss f = {};
        Errors w;

        (void) state;
        assert_int_equal(lint("alice weight 5\n@downgroup weight 6\ncarol weight 7\n@other idle yes\n", &f, &w), 1);
        assert_error(&w, 0, "test.conf", 2, "cannot look up group '@downgroup': the name service could not answer "
                     "(Host is down; is a directory down?); the names after it were not looked up");
        assert_int_equal(f.asked, 2);
        assert_string_equal(f.last, "@downgroup");
        /* a dash range the service could not answer for: the failure, and the range's spelling */
        f = (FakeNss) { .down = true };
        assert_int_equal(lint("1000-2000 weight 5\n1000-2000 max 5%\nalice idle yes\n", &f, &w), 1);
        assert_error(&w, 0, "test.conf", 1, "cannot look up user '1000-2000': the name service could not answer "
                     "(Host is down; is a directory down?) (1 more line names it too); the names after it were not "
                     "looked up; a uid range is written 1000:2000");
        assert_int_equal(f.asked, 1);
}

/* At most AG_LINT_LOOKUPS_MAX distinct names are asked about. */
static void test_lint_lookup_bound(void **state) {
        size_t n = AG_LINT_LOOKUPS_MAX + 10, size = n * 32, o = 0;
        char *text = malloc(size), expect[128];
        FakeNss f = {};

        (void) state;
        assert_non_null(text);
        for (size_t i = 0; i < n; i++)
                o += (size_t) snprintf(text + o, size - o, "u%zu weight 5\n", i);
        {
                Errors errs;
                AgConfig *c = parse(text, &errs);
                Last last = {};

                assert_int_equal(ag_config_lint(c, fake_lookup, &f, collect_last, &last), AG_LINT_LOOKUPS_MAX + 1);
                assert_int_equal(f.asked, AG_LINT_LOOKUPS_MAX);
                /* the last warning: the bound, once, at the first name not asked */
                snprintf(expect, sizeof expect, "more than %d distinct user and group names: 'u%d' and 9 more were "
                         "not looked up", AG_LINT_LOOKUPS_MAX, AG_LINT_LOOKUPS_MAX);
                assert_string_equal(last.message, expect);
                assert_int_equal(last.line, AG_LINT_LOOKUPS_MAX + 1);
                ag_config_free(c);
        }
        free(text);
        /* the bound's warning is the last one */
        {
                Errors errs;
                AgConfig *c;
                Errors *all = calloc(1, sizeof *all);

                assert_non_null(all);
                text = malloc(size);
                assert_non_null(text);
                o = 0;
                for (size_t i = 0; i < n; i++)
                        o += (size_t) snprintf(text + o, size - o, "alice weight %zu\n", i % 2 + 1);
                o += (size_t) snprintf(text + o, size - o, "bob max 50%%\n");
                c = parse(text, &errs);
                assert_int_equal(ag_config_lint(c, fake_lookup, &f, collect, all), (int) n - 1);
                /* every alice line but the last is overridden (or repeated) by it */
                snprintf(expect, sizeof expect, "overridden by test.conf:%zu (the same domain and item: the later "
                         "line wins)", n);
                assert_error(all, 0, "test.conf", 1, expect);
                snprintf(expect, sizeof expect, "repeated by test.conf:%zu (the same domain, item and value): this "
                         "line has no effect", n);
                assert_error(all, 1, "test.conf", 2, expect);
                ag_config_free(c);
                free(all);
                free(text);
        }
}

/* The later line of the same domain and item wins: the earlier is named. */
static void test_lint_overridden(void **state) {
        Errors w;

        (void) state;
        assert_int_equal(lint("* weight 50\n@staff weight 60\n* max 50%\n* weight 70\n1000: weight 5\n"
                              "1000:2000 weight 6\n1000: weight 8\npool:web weight 9\npool:web weight 9\n"
                              "@staff pool web\n@staff pool none\n:0 idle yes\n0:0 idle no\n", NULL, &w), 5);
        assert_error(&w, 0, "test.conf", 1, "overridden by test.conf:4 (the same domain and item: the later line "
                     "wins)");
        assert_error(&w, 1, "test.conf", 5, "overridden by test.conf:7 (the same domain and item: the later line "
                     "wins)");
        assert_error(&w, 2, "test.conf", 8, "repeated by test.conf:9 (the same domain, item and value): this line "
                     "has no effect");
        assert_error(&w, 3, "test.conf", 10, "overridden by test.conf:11 (the same domain and item: the later line "
                     "wins)");
        /* ":0" and "0:0" are the same range */
        assert_error(&w, 4, "test.conf", 12, "overridden by test.conf:13 (the same domain and item: the later line "
                     "wins)");
        /* nothing to say about a clean file */
        assert_int_equal(lint("* weight 100\n@staff max 50%\nalice weight 200\n1000: sessions yes\n", NULL, &w), 0);
}

/* Across files: a drop-in overrides the main file. */
static void test_lint_across_files(void **state) {
        AgConfig *c = config_new();
        Errors w = {};

        (void) state;
        assert_int_equal(ag_config_parse_buffer(c, "main.conf", "* weight 50\n* max 20%\n", 22, NULL, NULL), 0);
        assert_int_equal(ag_config_parse_buffer(c, "d/10.conf", "* weight 80\n", 12, NULL, NULL), 0);
        assert_int_equal(ag_config_lint(c, NULL, NULL, collect, &w), 1);
        assert_error(&w, 0, "main.conf", 1, "overridden by d/10.conf:1 (the same domain and item: the later line "
                     "wins)");
        ag_config_free(c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_to_string),
                cmocka_unit_test(test_parse_line_valid),
                cmocka_unit_test(test_parse_line_blank),
                cmocka_unit_test(test_parse_line_invalid),
                cmocka_unit_test(test_parse_line_pool),
                cmocka_unit_test(test_parse_line_pool_invalid),
                cmocka_unit_test(test_buffer_pool),
                cmocka_unit_test(test_parse_line_name_length),
                cmocka_unit_test(test_parse_line_too_long),
                cmocka_unit_test(test_buffer_line_numbers),
                cmocka_unit_test(test_buffer_mixed),
                cmocka_unit_test(test_buffer_unknown_item_message),
                cmocka_unit_test(test_buffer_overlong),
                cmocka_unit_test(test_buffer_nul),
                cmocka_unit_test(test_buffer_binary_garbage),
                cmocka_unit_test(test_buffer_token_soup),
                cmocka_unit_test(test_buffer_crlf),
                cmocka_unit_test(test_buffer_edges),
                cmocka_unit_test(test_buffer_several_files),
                cmocka_unit_test(test_dropin_dir),
                cmocka_unit_test(test_lint_dash_range),
                cmocka_unit_test(test_lint_unknown_names),
                cmocka_unit_test(test_lint_nss_down),
                cmocka_unit_test(test_lint_lookup_bound),
                cmocka_unit_test(test_lint_overridden),
                cmocka_unit_test(test_lint_across_files),
                tmpdir_test(test_load_missing),
                tmpdir_test(test_load_empty_file),
                tmpdir_test(test_load_dropin_order),
                tmpdir_test(test_load_not_regular),
                tmpdir_test(test_load_dropins_not_a_dir),
                tmpdir_test(test_load_too_large),
                tmpdir_test(test_load_refuse_owner),
                tmpdir_test(test_load_refuse_modes),
                tmpdir_test(test_load_refuse_dropin_dir),
                tmpdir_test(test_load_unreadable),
                tmpdir_test(test_load_null_callback),
        };

        umask(022);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
