/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* The value syntax of autogroup.conf: domains, item names and item values. */

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "conf.h"
#include "config-internal.h"
#include "util.h"

#define STRINGIFY_IMPL(x) #x
#define STRINGIFY(x) STRINGIFY_IMPL(x)

#define MSG_DOMAIN_CHAR      "invalid character in domain"
#define MSG_GROUP_EMPTY      "empty group name"
#define MSG_GID_RANGE        "gid ranges (@min:max, @:gid) are not supported; name the group"
#define MSG_NAME_TOO_LONG    "name too long"
#define MSG_RANGE            "invalid uid range"
#define MSG_RANGE_UID        "uid out of range"
#define MSG_RANGE_ORDER      "uid range min greater than max"
#define MSG_WEIGHT           "invalid weight (expected " STRINGIFY(AG_WEIGHT_MIN) ".." STRINGIFY(AG_WEIGHT_MAX) ")"
#define MSG_MAX              "invalid max (expected N% with N " "1.." STRINGIFY(AG_MAX_PCT_MAX) ", or none)"
#define MSG_SESSIONS         "invalid sessions (expected yes or no)"
#define MSG_IDLE             "invalid idle (expected yes or no)"
/* latency classes */
#define MSG_LATENCY          "invalid latency (expected 0|batch, 1|normal, 2|interactive or 3|audio)"
/* pools */
#define MSG_POOL_NAME        "invalid pool name (expected 1.." STRINGIFY(AG_POOL_NAME_MAX) \
                             " of a-z 0-9 _ -, starting with a letter or digit)"
#define MSG_POOL             "invalid pool (expected a pool name or none)"
#define MSG_INTERACTIVE      "invalid interactive (expected 0, 1 or 2)"
#define MSG_LEAVES           "invalid leaves (expected 0.." STRINGIFY(AG_LEAVES_MAX) ")"
#define MSG_LANE_CAP         "invalid lane-cap (expected N% of one CPU, N in 1.." STRINGIFY(AG_MAX_PCT_MAX) ", or none)"
#define MSG_SESSIONS_MAX     "invalid sessions-max (expected 1.." STRINGIFY(AG_SESSIONS_MAX_LIMIT) ")"

static const char *const item_table[_AG_ITEM_MAX] = {
        [AG_ITEM_WEIGHT]   = "weight",
        [AG_ITEM_MAX]      = "max",
        [AG_ITEM_SESSIONS] = "sessions",
        [AG_ITEM_IDLE]     = "idle",
        [AG_ITEM_POOL]     = "pool",
        /* latency classes */
        [AG_ITEM_LATENCY]  = "latency",
        [AG_ITEM_INTERACTIVE] = "interactive",
        [AG_ITEM_LEAVES]   = "leaves",
        [AG_ITEM_LEAVES_NOTTY] = "leaves-notty",
        [AG_ITEM_SESSIONS_MAX] = "sessions-max",
        [AG_ITEM_LANE_CAP] = "lane-cap",
};

/* latency classes */
static const char *const latency_table[_AG_LATENCY_MAX] = {
        [AG_LATENCY_BATCH]       = "batch",
        [AG_LATENCY_NORMAL]      = "normal",
        [AG_LATENCY_INTERACTIVE] = "interactive",
        [AG_LATENCY_AUDIO]       = "audio",
};

static const char *const domain_kind_table[_AG_DOMAIN_KIND_MAX] = {
        [AG_DOMAIN_ALL]   = "*",
        [AG_DOMAIN_RANGE] = "range",
        [AG_DOMAIN_GROUP] = "group",
        [AG_DOMAIN_USER]  = "user",
        [AG_DOMAIN_POOL]  = "pool",
};

AG_DEFINE_STRING_TABLE_TO_STRING(ag_item_to_string, AgItem, item_table)

AG_DEFINE_STRING_TABLE_TO_STRING(ag_domain_kind_to_string, AgDomainKind, domain_kind_table)

static bool field_eq(const Field *f, const char *s) {
        size_t n = strlen(s);
        return f->n == n && memcmp(f->p, s, n) == 0;
}

/* latency classes: a number 0..3 (one digit) or a name */
static int latency_from_field(const Field *f, AgLatency *ret) {
        for (AgLatency l = 0; l < _AG_LATENCY_MAX; l++)
                if (field_eq(f, latency_table[l]) || (f->n == 1 && f->p[0] == (char) ('0' + l))) {
                        *ret = l;
                        return 0;
                }
        return -EINVAL;
}

AG_DEFINE_STRING_TABLE_TO_STRING(ag_latency_to_string, AgLatency, latency_table)

int ag_latency_from_string(const char *s, AgLatency *ret) {
        Field f = { s, s ? strlen(s) : 0 };

        if (!s)
                return -EINVAL;
        return latency_from_field(&f, ret);
}

/* Strict decimal: digits only, at least one, no sign, no blanks. */
static int parse_decimal(const char *p, size_t n, unsigned long long max, unsigned long long *ret) {
        unsigned long long v = 0;
        bool too_big = false;

        if (n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return -EINVAL;
                unsigned d = (unsigned) (p[i] - '0');
                if (too_big || v > (max - d) / 10)
                        too_big = true;
                else
                        v = v * 10 + d;
        }
        if (too_big)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* Digits and colons only: what limits.conf reads as a gid range after "@". */
static bool is_range_text(const char *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i] != ':' && (p[i] < '0' || p[i] > '9'))
                        return false;
        return true;
}

static const char *check_name(const char *p, size_t n) {
        if (n >= AG_NAME_MAX)
                return MSG_NAME_TOO_LONG;
        if (p[0] == '@' || memchr(p, ':', n))
                return MSG_DOMAIN_CHAR;
        return NULL;
}

/* Fills kind, uid_min, uid_max and sets *ret_name to the part to copy as the
 * name (n == 0 for none). Allocates nothing. */
/* A uid range "min:max", ":max" or "min:" (colon at its colon). */
static const char *parse_uid_range(const Field *f, const char *colon, AgRule *rule) {
        size_t lo_n = (size_t) (colon - f->p), hi_n = f->n - lo_n - 1;
        unsigned long long lo = 0, hi = AG_UID_VALID_MAX;
        int r;

        if (lo_n == 0 && hi_n == 0)
                return MSG_RANGE;
        if (lo_n > 0) {
                r = parse_decimal(f->p, lo_n, AG_UID_VALID_MAX, &lo);
                if (r < 0)
                        return r == -ERANGE ? MSG_RANGE_UID : MSG_RANGE;
        }
        if (hi_n > 0) {
                r = parse_decimal(colon + 1, hi_n, AG_UID_VALID_MAX, &hi);
                if (r < 0)
                        return r == -ERANGE ? MSG_RANGE_UID : MSG_RANGE;
        }
        /* limits.conf(5): "If min_uid is omitted, the match is exact for
         * the max_uid" (":999" is uid 999 only) */
        if (lo_n == 0)
                lo = hi;
        if (lo > hi)
                return MSG_RANGE_ORDER;
        rule->kind = AG_DOMAIN_RANGE;
        rule->uid_min = (uid_t) lo;
        rule->uid_max = (uid_t) hi;
        return NULL;
}

const char *ag_config_parse_domain(const Field *f, AgRule *rule, Field *ret_name) {
        const char *msg;

        assert(f);

        for (size_t i = 0; i < f->n; i++) {
                unsigned char c = (unsigned char) f->p[i];
                if (c < 0x21 || c >= 0x7f)
                        return MSG_DOMAIN_CHAR;
        }

        *ret_name = (Field) {};
        rule->uid_min = rule->uid_max = 0;

        if (field_eq(f, "*")) {
                rule->kind = AG_DOMAIN_ALL;
                return NULL;
        }

        if (f->p[0] == '@') {
                Field name = { f->p + 1, f->n - 1 };
                if (name.n == 0)
                        return MSG_GROUP_EMPTY;
                /* limits.conf's @min:max and @:gid: refused by name rather
                 * than read as something else */
                if (memchr(name.p, ':', name.n) && is_range_text(name.p, name.n))
                        return MSG_GID_RANGE;
                msg = check_name(name.p, name.n);
                if (msg)
                        return msg;
                rule->kind = AG_DOMAIN_GROUP;
                *ret_name = name;
                return NULL;
        }

        /* pools: before the uid range, which also has a colon */
        size_t prefix_n = strlen(AG_POOL_DOMAIN_PREFIX);
        if (f->n >= prefix_n && memcmp(f->p, AG_POOL_DOMAIN_PREFIX, prefix_n) == 0) {
                Field name = { f->p + prefix_n, f->n - prefix_n };
                if (!ag_pool_name_valid(name.p, name.n))
                        return MSG_POOL_NAME;
                rule->kind = AG_DOMAIN_POOL;
                *ret_name = name;
                return NULL;
        }

        const char *colon = memchr(f->p, ':', f->n);
        if (colon)
                return parse_uid_range(f, colon, rule);

        msg = check_name(f->p, f->n);
        if (msg)
                return msg;
        rule->kind = AG_DOMAIN_USER;
        *ret_name = *f;
        return NULL;
}

int ag_config_parse_item(const Field *f, AgItem *ret) {
        assert(f);
        assert(ret);

        for (AgItem i = 0; i < _AG_ITEM_MAX; i++)
                if (field_eq(f, item_table[i])) {
                        *ret = i;
                        return 0;
                }
        return -EINVAL;
}

const char *ag_config_parse_value(AgItem item, const Field *f, long *ret) {
        unsigned long long v;

        assert(f);

        switch (item) {
        case AG_ITEM_WEIGHT:
                if (parse_decimal(f->p, f->n, AG_WEIGHT_MAX, &v) < 0 || v < AG_WEIGHT_MIN)
                        return MSG_WEIGHT;
                *ret = (long) v;
                return NULL;

        case AG_ITEM_MAX:
        case AG_ITEM_LANE_CAP:
                if (field_eq(f, "none")) {
                        *ret = AG_MAX_NONE;
                        return NULL;
                }
                if (f->n < 2 || f->p[f->n - 1] != '%' ||
                    parse_decimal(f->p, f->n - 1, AG_MAX_PCT_MAX, &v) < 0 || v < 1)
                        return item == AG_ITEM_MAX ? MSG_MAX : MSG_LANE_CAP;
                *ret = (long) v;
                return NULL;

        case AG_ITEM_SESSIONS:
        case AG_ITEM_IDLE:
                if (field_eq(f, "yes"))
                        *ret = 1;
                else if (field_eq(f, "no"))
                        *ret = 0;
                else
                        return item == AG_ITEM_SESSIONS ? MSG_SESSIONS : MSG_IDLE;
                return NULL;

        /* latency classes */
        case AG_ITEM_LATENCY: {
                AgLatency l;
                if (latency_from_field(f, &l) < 0)
                        return MSG_LATENCY;
                *ret = (long) l;
                return NULL;
        }
        case AG_ITEM_INTERACTIVE:
                if (f->n != 1 || f->p[0] < '0' || f->p[0] > '0' + AG_INTERACTIVE_MAX)
                        return MSG_INTERACTIVE;
                *ret = f->p[0] - '0';
                return NULL;

        case AG_ITEM_LEAVES:
        case AG_ITEM_LEAVES_NOTTY:
                if (parse_decimal(f->p, f->n, AG_LEAVES_MAX, &v) < 0)
                        return MSG_LEAVES;
                *ret = (long) v;
                return NULL;

        case AG_ITEM_SESSIONS_MAX:
                if (parse_decimal(f->p, f->n, AG_SESSIONS_MAX_LIMIT, &v) < 0 || v < 1)
                        return MSG_SESSIONS_MAX;
                *ret = (long) v;
                return NULL;

        /* pools: 1 for a name (the caller copies the field), 0 for none */
        case AG_ITEM_POOL:
                if (field_eq(f, "none"))
                        *ret = 0;
                else if (ag_pool_name_valid(f->p, f->n))
                        *ret = 1;
                else
                        return MSG_POOL;
                return NULL;

        default:
                return MSG_UNKNOWN_ITEM;
        }
}

/* pools */
bool ag_pool_name_valid(const char *p, size_t n) {
        if (!p || n == 0 || n > AG_POOL_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = p[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (!alnum && (i == 0 || (c != '_' && c != '-')))
                        return false;
        }
        return true;
}

bool ag_root_name_valid(const char *s) {
        if (!s || !*s || *s == '.' || strlen(s) > AG_ROOT_NAME_MAX)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      *s == '-' || *s == '_' || *s == '.'))
                        return false;
        return true;
}
