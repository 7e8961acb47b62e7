/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Which rules apply to a user or a pool (group membership through NSS), and
 * the resulting policy as cgroup values. See policy.h. */

#include <assert.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

void ag_policy_init(AgPolicy *ret) {
        assert(ret);

        *ret = (AgPolicy) {
                .weight = AG_WEIGHT_DEFAULT,
                .max_pct = AG_MAX_NONE,
                .sessions = true,
                .idle = false,
                .latency = AG_LATENCY_DEFAULT,
                .interactive = AG_INTERACTIVE_DEFAULT,
                .leaves = AG_LEAVES_DEFAULT,
                .leaves_notty = AG_LEAVES_NOTTY_DEFAULT,
                .sessions_max = AG_SESSIONS_MAX_DEFAULT,
                .lane_cap_pct = AG_LANE_CAP_DEFAULT,
        };
}

#define GROUP_BUF_MAX (16U << 20)       /* a directory group with very many members */

int ag_nss_group_member_by(ag_getgrnam_r_fn lookup, const char *group, const char *user, gid_t gid) {
        struct group grp, *res = NULL;
        size_t size = 16384;
        char *buf = NULL;
        int r, member = 0;

        if (!lookup || !group || !user)
                return -EINVAL;
        for (;;) {
                char *n = realloc(buf, size);
                if (!n) {
                        free(buf);
                        return -ENOMEM;
                }
                buf = n;
                res = NULL;
                r = lookup(group, &grp, buf, size, &res);
                if (r != ERANGE || size >= GROUP_BUF_MAX)
                        break;
                size *= 2;
        }
        /* Any error is "NSS could not answer", ENOENT too: "no such group"
         * is 0 with no entry (glibc's nss/getXXbyYY_r.c returns 0 for
         * NSS_STATUS_NOTFOUND and errno for UNAVAIL/TRYAGAIN). */
        if (r > 0) {
                free(buf);
                return -r;
        }
        if (r < 0) {                    /* not a valid return: an error all the same */
                free(buf);
                return -EIO;
        }
        if (res) {
                member = res->gr_gid == gid;
                for (char **m = res->gr_mem; !member && m && *m; m++)
                        member = strcmp(*m, user) == 0;
        }
        free(buf);
        return member;
}

int ag_nss_group_member(const char *group, const char *user, gid_t gid) {
        return ag_nss_group_member_by(getgrnam_r, group, user, gid);
}

/* in_group answers, so that each distinct group is asked about at most once
 * per resolve: the first GROUP_CACHE_INLINE answers on the stack, more on
 * the heap (if even that allocation fails, a group named by several rules
 * may be asked about again). After the first error (NSS could not answer: a
 * directory that is down) no group is asked about any more: every further
 * @group rule counts as "no" at once, so a login pays the directory's
 * timeout once rather than once per group. */
#define GROUP_CACHE_INLINE 32

typedef struct GroupAnswer {
        const char *name;
        bool member;
} GroupAnswer;

typedef struct GroupCache {
        GroupAnswer inline_entries[GROUP_CACHE_INLINE];
        GroupAnswer *entries;           /* inline_entries, or the heap past them */
        size_t n, size;
        bool failed;                    /* in_group returned an error */
} GroupCache;

static void group_cache_init(GroupCache *cache) {
        cache->entries = cache->inline_entries;
        cache->n = 0;
        cache->size = GROUP_CACHE_INLINE;
        cache->failed = false;
}

static void group_cache_done(GroupCache *cache) {
        if (cache->entries != cache->inline_entries)
                free(cache->entries);
        cache->entries = NULL;
}

static void group_cache_add(GroupCache *cache, const char *group, bool member) {
        if (cache->n == cache->size) {
                size_t size = cache->size * 2;
                GroupAnswer *e = cache->entries == cache->inline_entries ? NULL : cache->entries;

                e = realloc(e, size * sizeof *e);
                if (!e)
                        return;         /* not remembered */
                if (cache->entries == cache->inline_entries)
                        memcpy(e, cache->inline_entries, sizeof cache->inline_entries);
                cache->entries = e;
                cache->size = size;
        }
        cache->entries[cache->n++] = (GroupAnswer) { group, member };
}

static bool in_group_cached(GroupCache *cache, const char *group,
                            ag_in_group_fn in_group, void *userdata) {
        bool member;
        int r;

        for (size_t i = 0; i < cache->n; i++)
                if (strcmp(cache->entries[i].name, group) == 0)
                        return cache->entries[i].member;

        if (cache->failed)
                return false;
        r = in_group(userdata, group);
        if (r < 0) {
                cache->failed = true;   /* an error counts as "no", for every group from now on */
                return false;
        }
        member = r > 0;
        group_cache_add(cache, group, member);
        return member;
}

static bool rule_matches(const AgRule *rule, const char *user, uid_t uid,
                         ag_in_group_fn in_group, void *userdata, GroupCache *cache) {
        switch (rule->kind) {
        case AG_DOMAIN_ALL:
                return true;
        case AG_DOMAIN_RANGE:
                return rule->uid_min <= uid && uid <= rule->uid_max;
        case AG_DOMAIN_GROUP:
                return in_group && rule->name && in_group_cached(cache, rule->name, in_group, userdata);
        case AG_DOMAIN_USER:
                return user && rule->name && strcmp(rule->name, user) == 0;
        default:
                return false;
        }
}

bool ag_rule_kind_applies_to_root(AgDomainKind kind) {
        /* limits.conf(5), Debian's pam_limits: "group and wildcard limits
         * are not applied to the root user" (its code also skips them for
         * any account with uid 0, and applies uid ranges). A "* max 50%"
         * must not cap root's rescue login on a runaway machine. */
        return kind != AG_DOMAIN_ALL && kind != AG_DOMAIN_GROUP;
}

void ag_policy_resolve(const AgConfig *config, const char *user, uid_t uid,
                       ag_in_group_fn in_group, void *userdata, AgPolicy *ret) {
        const AgRule *best[_AG_ITEM_MAX] = {};
        size_t unresolved = _AG_ITEM_MAX;
        GroupCache cache;
        AgPolicy p;

        assert(ret);

        group_cache_init(&cache);

        /* From the strongest class down, and within a class from the last
         * rule up: the first match for an item is the winner. This way a
         * group is never looked up when a user rule already decided every
         * item it could set. */
        for (int kind = _AG_DOMAIN_KIND_MAX - 1; config && kind >= 0 && unresolved > 0; kind--)
                for (size_t i = config->n_rules; i > 0 && unresolved > 0; i--) {
                        const AgRule *rule = &config->rules[i - 1];

                        if ((int) rule->kind != kind || (unsigned) rule->item >= _AG_ITEM_MAX ||
                            best[rule->item])
                                continue;
                        if (uid == 0 && !ag_rule_kind_applies_to_root(rule->kind))
                                continue;
                        if (!rule_matches(rule, user, uid, in_group, userdata, &cache))
                                continue;
                        best[rule->item] = rule;
                        unresolved--;
                }
        group_cache_done(&cache);

        ag_policy_init(&p);
        if (best[AG_ITEM_WEIGHT])
                p.weight = (unsigned) best[AG_ITEM_WEIGHT]->value;
        if (best[AG_ITEM_MAX])
                p.max_pct = best[AG_ITEM_MAX]->value;
        if (best[AG_ITEM_SESSIONS])
                p.sessions = best[AG_ITEM_SESSIONS]->value != 0;
        if (best[AG_ITEM_IDLE])
                p.idle = best[AG_ITEM_IDLE]->value != 0;
        /* latency classes */
        if (best[AG_ITEM_LATENCY] && (unsigned long) best[AG_ITEM_LATENCY]->value < _AG_LATENCY_MAX)
                p.latency = (AgLatency) best[AG_ITEM_LATENCY]->value;
        if (best[AG_ITEM_INTERACTIVE] && (unsigned long) best[AG_ITEM_INTERACTIVE]->value <= AG_INTERACTIVE_MAX)
                p.interactive = (unsigned) best[AG_ITEM_INTERACTIVE]->value;
        if (best[AG_ITEM_LEAVES] && (unsigned long) best[AG_ITEM_LEAVES]->value <= AG_LEAVES_MAX)
                p.leaves = (unsigned) best[AG_ITEM_LEAVES]->value;
        if (best[AG_ITEM_LEAVES_NOTTY] && (unsigned long) best[AG_ITEM_LEAVES_NOTTY]->value <= AG_LEAVES_MAX)
                p.leaves_notty = (unsigned) best[AG_ITEM_LEAVES_NOTTY]->value;
        if (best[AG_ITEM_SESSIONS_MAX] && best[AG_ITEM_SESSIONS_MAX]->value >= 1 &&
            best[AG_ITEM_SESSIONS_MAX]->value <= AG_SESSIONS_MAX_LIMIT)
                p.sessions_max = (unsigned) best[AG_ITEM_SESSIONS_MAX]->value;
        if (best[AG_ITEM_LANE_CAP])
                p.lane_cap_pct = best[AG_ITEM_LANE_CAP]->value;
        /* pools */
        if (best[AG_ITEM_POOL] && best[AG_ITEM_POOL]->str)
                snprintf(p.pool, sizeof p.pool, "%s", best[AG_ITEM_POOL]->str);
        for (size_t i = 0; i < _AG_ITEM_MAX; i++)
                p.source[i] = best[i];

        *ret = p;
}

/* pools */
void ag_pool_policy_resolve(const AgConfig *config, const char *pool, AgPolicy *ret) {
        AgPolicy p;

        assert(ret);

        ag_policy_init(&p);
        for (size_t i = 0; config && pool && i < config->n_rules; i++) {
                const AgRule *rule = &config->rules[i];

                if (rule->kind != AG_DOMAIN_POOL || !rule->name || strcmp(rule->name, pool) != 0)
                        continue;
                switch (rule->item) {
                case AG_ITEM_WEIGHT:
                        p.weight = (unsigned) rule->value;
                        break;
                case AG_ITEM_MAX:
                        p.max_pct = rule->value;
                        break;
                case AG_ITEM_IDLE:
                        p.idle = rule->value != 0;
                        break;
                default:
                        continue;       /* the parser never makes these */
                }
                p.source[rule->item] = rule;
        }
        if (pool)
                snprintf(p.pool, sizeof p.pool, "%s", pool);
        *ret = p;
}

unsigned long ag_weight_to_shares(unsigned weight) {
        unsigned long shares = (unsigned long) weight * 1024UL / 100UL;

        return shares < 2 ? 2 : shares;
}

void ag_policy_to_values(const AgPolicy *policy, int cgroup_version, AgCgValues *ret) {
        assert(policy);
        assert(ret);

        *ret = (AgCgValues) {
                .weight = cgroup_version == 1 ? ag_weight_to_shares(policy->weight) : policy->weight,
                .quota_us = policy->max_pct < 0 ? -1 :
                            (long long) policy->max_pct * (long long) AG_CPU_PERIOD_US / 100,
                .period_us = AG_CPU_PERIOD_US,
                .idle = policy->idle,
        };
}

int ag_format_cpu_max(const AgCgValues *values, char *buf, size_t size) {
        char text[64];                  /* "%lld %lu" always fits */
        int n;

        if (!values || (!buf && size > 0))
                return -EINVAL;

        if (values->quota_us < 0)
                n = snprintf(text, sizeof(text), "max %lu", values->period_us);
        else
                n = snprintf(text, sizeof(text), "%lld %lu", values->quota_us, values->period_us);
        if (n < 0 || (size_t) n >= sizeof(text))
                return -EIO;
        if ((size_t) n >= size)
                return -ENOBUFS;        /* buf untouched */

        memcpy(buf, text, (size_t) n + 1);
        return 0;
}
