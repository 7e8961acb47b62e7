/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Lines that parse but change the policy silently (lint.h). */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint.h"
#include "util.h"

/* What is known of a rule's user or group name. */
enum {
        NAME_NOT_ASKED = 0,            /* not a name, or no lookup callback */
        NAME_KNOWN,
        NAME_UNKNOWN,
        NAME_ERROR,                    /* the name service could not answer */
        NAME_SKIPPED_BOUND,            /* more than AG_LINT_LOOKUPS_MAX distinct names */
        NAME_SKIPPED_AFTER_ERROR,      /* not asked after a failed look-up */
};

typedef struct Lint {
        const AgConfig *c;
        unsigned char *state;          /* NAME_* of each rule */
        int *error;                    /* -errno of each NAME_ERROR rule */
        size_t *rep;                   /* the first rule with the same kind and name (names only) */
        size_t *n_same;                /* of a rep: the rules naming the same user or group */
        size_t *winner;                /* the last rule of the same domain and item (itself when none later) */
        size_t n_skipped_bound, n_skipped_error;       /* distinct names not asked */
        bool bound_said;               /* the one warning about the bound was given */
} Lint;

static bool is_name(const AgRule *r) {
        return (r->kind == AG_DOMAIN_USER || r->kind == AG_DOMAIN_GROUP) && r->name;
}

static int cmp_str0(const char *a, const char *b) {
        return strcmp(a ? a : "", b ? b : "");
}

/* The domain of a rule, for sorting and for equality. */
static int cmp_domain(const AgRule *a, const AgRule *b) {
        int d;

        if (a->kind != b->kind)
                return a->kind < b->kind ? -1 : 1;
        d = cmp_str0(a->name, b->name);
        if (d != 0)
                return d;
        if (a->uid_min != b->uid_min)
                return a->uid_min < b->uid_min ? -1 : 1;
        if (a->uid_max != b->uid_max)
                return a->uid_max < b->uid_max ? -1 : 1;
        return 0;
}

static int cmp_index(size_t a, size_t b) {
        return a < b ? -1 : a > b;
}

/* qsort_r comparators over indices into the rules */
static int cmp_name_order(const void *x, const void *y, void *userdata) {
        const AgRule *rules = userdata;
        size_t i = *(const size_t *) x, j = *(const size_t *) y;
        int d = cmp_domain(&rules[i], &rules[j]);

        return d != 0 ? d : cmp_index(i, j);
}

static int cmp_item_order(const void *x, const void *y, void *userdata) {
        const AgRule *rules = userdata;
        size_t i = *(const size_t *) x, j = *(const size_t *) y;
        int d = cmp_domain(&rules[i], &rules[j]);

        if (d != 0)
                return d;
        if (rules[i].item != rules[j].item)
                return rules[i].item < rules[j].item ? -1 : 1;
        return cmp_index(i, j);
}

/* The rules sorted by cmp (indices), or NULL. */
static size_t *sorted_indices(const AgConfig *c, int (*cmp)(const void *, const void *, void *)) {
        size_t *v = calloc(c->n_rules ? c->n_rules : 1, sizeof *v);

        if (!v)
                return NULL;
        for (size_t i = 0; i < c->n_rules; i++)
                v[i] = i;
        qsort_r(v, c->n_rules, sizeof *v, cmp, c->rules);
        return v;
}

/* winner[i]: the last rule of i's domain and item. */
static int find_winners(Lint *l) {
        const AgConfig *c = l->c;
        _cleanup_free_ size_t *v = sorted_indices(c, cmp_item_order);

        if (!v)
                return -ENOMEM;
        for (size_t a = 0; a < c->n_rules;) {
                size_t b = a + 1;

                while (b < c->n_rules && cmp_domain(&c->rules[v[a]], &c->rules[v[b]]) == 0 &&
                       c->rules[v[a]].item == c->rules[v[b]].item)
                        b++;
                for (size_t k = a; k < b; k++)
                        l->winner[v[k]] = v[b - 1];
                a = b;
        }
        return 0;
}

/* rep[i]: the first rule naming the same user or group as i. */
static int find_reps(Lint *l) {
        const AgConfig *c = l->c;
        _cleanup_free_ size_t *v = sorted_indices(c, cmp_name_order);

        if (!v)
                return -ENOMEM;
        for (size_t a = 0; a < c->n_rules;) {
                size_t b = a + 1;

                while (b < c->n_rules && cmp_domain(&c->rules[v[a]], &c->rules[v[b]]) == 0)
                        b++;
                for (size_t k = a; k < b; k++)
                        l->rep[v[k]] = v[a];       /* the smallest index: sorted by index within */
                l->n_same[v[a]] = b - a;
                a = b;
        }
        return 0;
}

/* Each distinct name asked once, in the order of the rules. */
static int look_up(Lint *l, ag_lint_lookup_fn lookup, void *lookup_data) {
        const AgConfig *c = l->c;
        size_t asked = 0;
        bool failed = false;

        for (size_t i = 0; i < c->n_rules; i++) {
                const AgRule *r = &c->rules[i];
                int k;

                if (!is_name(r))
                        continue;
                if (l->rep[i] != i) {
                        l->state[i] = l->state[l->rep[i]];
                        l->error[i] = l->error[l->rep[i]];
                        continue;
                }
                if (failed) {
                        l->state[i] = NAME_SKIPPED_AFTER_ERROR;
                        l->n_skipped_error++;
                        continue;
                }
                if (asked >= AG_LINT_LOOKUPS_MAX) {
                        l->state[i] = NAME_SKIPPED_BOUND;
                        l->n_skipped_bound++;
                        continue;
                }
                asked++;
                k = lookup(lookup_data, r->kind, r->name);
                if (k == -ENOMEM)
                        return k;
                if (k < 0) {
                        l->state[i] = NAME_ERROR;
                        l->error[i] = k;
                        failed = true;
                } else
                        l->state[i] = k > 0 ? NAME_KNOWN : NAME_UNKNOWN;
        }
        return 0;
}

static bool all_digits(const char *p, size_t n) {
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (p[i] < '0' || p[i] > '9')
                        return false;
        return true;
}

/* A user name that is a uid range written with '-' ("1000-2000",
 * "1000-") or a bare uid ("1000"): the range as it is written, in fix. */
static bool range_like(const char *name, char *fix, size_t size) {
        const char *dash = strchr(name, '-');
        size_t n = strlen(name);

        if (!dash) {
                if (!all_digits(name, n))
                        return false;
                snprintf(fix, size, ":%s", name);
                return true;
        }
        if (!all_digits(name, (size_t) (dash - name)) ||
            (dash[1] && !all_digits(dash + 1, strlen(dash + 1))))
                return false;
        snprintf(fix, size, "%.*s:%s", (int) (dash - name), name, dash + 1);
        return true;
}

static bool same_value(const AgRule *a, const AgRule *b) {
        return a->value == b->value && (a->item != AG_ITEM_POOL || cmp_str0(a->str, b->str) == 0);
}

static void say(ag_error_fn warn, void *userdata, const AgRule *r, int *n, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static void say(ag_error_fn warn, void *userdata, const AgRule *r, int *n, const char *fmt, ...) {
        char msg[AG_NAME_MAX * 2 + 512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (warn)
                warn(userdata, r->file, r->line, msg);
        if (*n < INT32_MAX)
                (*n)++;
}

/* The findings of the name of rule i. */
static void name_findings(Lint *l, size_t i, ag_error_fn warn, void *userdata, int *n) {
        const AgRule *r = &l->c->rules[i];
        const char *what = r->kind == AG_DOMAIN_USER ? "user" : "group";
        const char *at = r->kind == AG_DOMAIN_USER ? "" : "@";
        char fix[AG_NAME_MAX + 2], more[64] = "";

        /* said once, on the first line naming it */
        if (l->rep[i] != i)
                return;
        if (l->n_same[i] > 1)
                snprintf(more, sizeof more, " (%zu more line%s name%s it too)", l->n_same[i] - 1,
                         l->n_same[i] == 2 ? "" : "s", l->n_same[i] == 2 ? "s" : "");

        if (l->state[i] == NAME_ERROR) {
                bool range = r->kind == AG_DOMAIN_USER && range_like(r->name, fix, sizeof fix);

                say(warn, userdata, r, n, "cannot look up %s '%s%s': the name service could not answer (%s; is "
                    "a directory down?)%s%s%s%s", what, at, r->name, strerror(-l->error[i]), more,
                    l->n_skipped_error > 0 ? "; the names after it were not looked up" : "",
                    range ? "; a uid range is written " : "", range ? fix : "");
                return;
        }
        if (r->kind == AG_DOMAIN_USER && l->state[i] != NAME_KNOWN && range_like(r->name, fix, sizeof fix)) {
                say(warn, userdata, r, n, "'%s' is read as a user name, not as a uid%s: write %s%s", r->name,
                    strchr(r->name, '-') ? " range" : "", fix, more);
                return;
        }
        switch (l->state[i]) {
        case NAME_UNKNOWN:
                say(warn, userdata, r, n, "unknown %s '%s%s' (the name service does not know it): the rule "
                    "applies to nobody%s", what, at, r->name, more);
                break;
        case NAME_SKIPPED_BOUND:
                if (!l->bound_said)
                        say(warn, userdata, r, n, "more than %d distinct user and group names: '%s%s' and %zu "
                            "more were not looked up", AG_LINT_LOOKUPS_MAX, at, r->name, l->n_skipped_bound - 1);
                l->bound_said = true;
                break;
        default:
                break;
        }
}

int ag_config_lint(const AgConfig *c, ag_lint_lookup_fn lookup, void *lookup_data, ag_error_fn warn,
                   void *userdata) {
        size_t m = c && c->n_rules ? c->n_rules : 1;
        Lint l = { .c = c };
        int n = 0, r = -ENOMEM;

        if (!c)
                return -EINVAL;
        l.state = calloc(m, sizeof *l.state);
        l.error = calloc(m, sizeof *l.error);
        l.rep = calloc(m, sizeof *l.rep);
        l.winner = calloc(m, sizeof *l.winner);
        l.n_same = calloc(m, sizeof *l.n_same);
        if (!l.state || !l.error || !l.rep || !l.winner || !l.n_same)
                goto finish;
        r = find_winners(&l);
        if (r >= 0)
                r = find_reps(&l);
        if (r >= 0 && lookup)
                r = look_up(&l, lookup, lookup_data);
        if (r < 0)
                goto finish;

        for (size_t i = 0; i < c->n_rules; i++) {
                const AgRule *rule = &c->rules[i], *w = &c->rules[l.winner[i]];

                if (is_name(rule))
                        name_findings(&l, i, warn, userdata, &n);
                if (l.winner[i] == i)
                        continue;
                if (same_value(rule, w))
                        say(warn, userdata, rule, &n, "repeated by %s:%u (the same domain, item and value): "
                            "this line has no effect", w->file ? w->file : "?", w->line);
                else
                        say(warn, userdata, rule, &n, "overridden by %s:%u (the same domain and item: the later "
                            "line wins)", w->file ? w->file : "?", w->line);
        }
        r = n;
finish:
        free(l.state);
        free(l.error);
        free(l.rep);
        free(l.winner);
        free(l.n_same);
        return r;
}
