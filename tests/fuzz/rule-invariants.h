/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The invariants of one rule as the parser returns it (AgRule, lib/config/conf.h),
 * checked by the fuzzer (fuzz-config.c) and the unit tests (tests/unit/test-config.c)
 * alike. Test code only. */
#pragma once

#include <string.h>

#include "conf.h"

#define RULE_KEEPS(x)              \
        do {                       \
                if (!(x))          \
                        return #x; \
        } while (0)

/* NULL when r keeps every invariant, else the first one it breaks (as C text). */
static inline const char *rule_broken(const AgRule *r) {
        RULE_KEEPS((unsigned) r->kind < _AG_DOMAIN_KIND_MAX);
        RULE_KEEPS((unsigned) r->item < _AG_ITEM_MAX);
        RULE_KEEPS(ag_item_to_string(r->item));
        RULE_KEEPS(ag_domain_kind_to_string(r->kind));
        switch (r->kind) {
        case AG_DOMAIN_USER:
        case AG_DOMAIN_GROUP:
                RULE_KEEPS(r->name && *r->name && strlen(r->name) < AG_NAME_MAX);
                for (const char *p = r->name; *p; p++)
                        RULE_KEEPS((unsigned char) *p > 0x20 && (unsigned char) *p < 0x7f && *p != ':' && *p != '#');
                RULE_KEEPS(r->name[0] != '@');
                break;
        case AG_DOMAIN_RANGE:
                RULE_KEEPS(!r->name && r->uid_min <= r->uid_max && r->uid_max != (uid_t) -1);
                break;
        case AG_DOMAIN_POOL: /* pools: a pool's limits only */
                RULE_KEEPS(r->name && ag_pool_name_valid(r->name, strlen(r->name)));
                RULE_KEEPS(r->item == AG_ITEM_WEIGHT || r->item == AG_ITEM_MAX || r->item == AG_ITEM_IDLE);
                break;
        default:
                RULE_KEEPS(!r->name);
        }
        if (r->item == AG_ITEM_POOL)
                RULE_KEEPS(r->value == 1 ? r->str && ag_pool_name_valid(r->str, strlen(r->str)) : !r->str);
        else
                RULE_KEEPS(!r->str);
        switch (r->item) {
        case AG_ITEM_WEIGHT:
                RULE_KEEPS(r->value >= AG_WEIGHT_MIN && r->value <= AG_WEIGHT_MAX);
                break;
        case AG_ITEM_MAX:
        case AG_ITEM_LANE_CAP:          /* a percent of one CPU, as max */
                RULE_KEEPS(r->value == AG_MAX_NONE || (r->value >= 1 && r->value <= AG_MAX_PCT_MAX));
                break;
        case AG_ITEM_LATENCY:
                RULE_KEEPS(r->value >= 0 && r->value < _AG_LATENCY_MAX);
                RULE_KEEPS(ag_latency_to_string((AgLatency) r->value));
                break;
        case AG_ITEM_INTERACTIVE:
                RULE_KEEPS(r->value >= 0 && r->value <= AG_INTERACTIVE_MAX);
                break;
        case AG_ITEM_LEAVES:
        case AG_ITEM_LEAVES_NOTTY:
                RULE_KEEPS(r->value >= 0 && r->value <= AG_LEAVES_MAX);
                break;
        case AG_ITEM_SESSIONS_MAX:
                RULE_KEEPS(r->value >= 1 && r->value <= AG_SESSIONS_MAX_LIMIT);
                break;
        default:
                RULE_KEEPS(r->value == 0 || r->value == 1);
        }
        return NULL;
}

#undef RULE_KEEPS
