/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A user's effective policy: which rule sets each item (group membership
 * through NSS), and its values for cgroupfs. */

#include <stdbool.h>
#include <sys/types.h>

#include "conf.h"

/* The effective policy for one user, with the rule that set each item (NULL
 * for a built-in default). */
typedef struct AgPolicy {
        unsigned weight;               /* 1..10000, default 100 */
        long max_pct;                  /* AG_MAX_NONE or percent of one CPU */
        bool sessions;                 /* default true */
        bool idle;                     /* default false */
        const AgRule *source[_AG_ITEM_MAX];
        /* latency classes */
        AgLatency latency;             /* default AG_LATENCY_NORMAL */
        /* pools */
        char pool[AG_POOL_NAME_MAX + 1]; /* the user's pool; "" for none (the default) */
        unsigned interactive;          /* 0..AG_INTERACTIVE_MAX, default 0 */
        unsigned leaves;               /* 0..AG_LEAVES_MAX, default AG_LEAVES_DEFAULT: a login with a terminal */
        unsigned leaves_notty;         /* 0..AG_LEAVES_MAX, default AG_LEAVES_NOTTY_DEFAULT: one without */
        unsigned sessions_max;         /* 1..AG_SESSIONS_MAX_LIMIT, default AG_SESSIONS_MAX_DEFAULT */
        long lane_cap_pct;             /* AG_MAX_NONE or percent of one CPU, default AG_LANE_CAP_DEFAULT */
} AgPolicy;

/* Answers whether the user is a member of group (primary or supplementary).
 * Returns > 0 for yes, 0 for no, < 0 on error: treated as no, and during the
 * rest of that ag_policy_resolve() no other group is asked about (a directory
 * that is down is waited for once per login, not once per group). */
typedef int (*ag_in_group_fn)(void *userdata, const char *group);

/* Membership as the module and "autogroup explain" both decide it: group's
 * entry through getgrnam_r(), and the user a member when it is the user's
 * primary group (gid) or user is among its members. Returns > 0 for a
 * member; 0 for not a member, or no such group (getgrnam_r() returned 0 with
 * no entry); -errno when NSS could not answer: any error getgrnam_r()
 * returns, ENOENT included (glibc returns 0 for "no such group" and, when a
 * service is UNAVAIL, the service's errno, often ENOENT: nslcd or sssd
 * down). -ENOMEM when no buffer could be had. */
int ag_nss_group_member(const char *group, const char *user, gid_t gid);

/* The same with the lookup function given (tests pass a fake getgrnam_r). */
struct group;
typedef int (*ag_getgrnam_r_fn)(const char *name, struct group *grp, char *buf, size_t size,
                                struct group **result);
int ag_nss_group_member_by(ag_getgrnam_r_fn lookup, const char *group, const char *user, gid_t gid);

void ag_policy_init(AgPolicy *ret);

/* Whether rules of a domain kind apply to uid 0 at all: "*" and "@group" do
 * not (as in limits.conf); a user-name rule and a uid range do. */
bool ag_rule_kind_applies_to_root(AgDomainKind kind);

/* Resolve every item independently: a user-name rule beats an @group rule,
 * which beats a uid range, which beats "*"; within one class the later rule
 * wins. For uid 0 "*" and "@group" rules are skipped (no group is looked
 * up). in_group may be NULL (no group rule matches). */
void ag_policy_resolve(const AgConfig *config, const char *user, uid_t uid,
                       ag_in_group_fn in_group, void *userdata, AgPolicy *ret);

/* pools: the limits of pool NAME from its pool:NAME lines (the
 * later line wins); weight, max_pct, idle and their source[] are set, the
 * rest is the default (pool[] is NAME). Unknown pools get the defaults. */
void ag_pool_policy_resolve(const AgConfig *config, const char *pool, AgPolicy *ret);

/* Interface file values for a cgroup version. */
typedef struct AgCgValues {
        unsigned long weight;          /* v2 cpu.weight or v1 cpu.shares */
        long long quota_us;            /* -1 for unlimited */
        unsigned long period_us;
        bool idle;
} AgCgValues;

#define AG_CPU_PERIOD_US 100000UL

/* v1 shares = weight * 1024 / 100, the kernel's minimum of 2 enforced. */
unsigned long ag_weight_to_shares(unsigned weight);
void ag_policy_to_values(const AgPolicy *policy, int cgroup_version, AgCgValues *ret);

/* Formats the v2 cpu.max line into buf ("max 100000" or "<quota> <period>"). */
int ag_format_cpu_max(const AgCgValues *values, char *buf, size_t size);
