/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Lines that parse but most likely do not say what their writer meant, for
 * "autogroup check" (the module never runs this):
 *   - a user-name domain that is a uid range written with '-' ("1000-2000",
 *     "1000-") or a bare uid ("1000"), and that no account has as its name;
 *   - a user or @group the name service does not know;
 *   - a rule that a later line of the same domain and item overrides (the
 *     later line wins, so the earlier one has no effect).
 * Pure logic: names are looked up through a callback, at most
 * AG_LINT_LOOKUPS_MAX distinct names, and none after the first look-up the
 * name service could not answer (a directory that is down answers each one
 * only after its timeout). Time O(n log n) in the rules. */

#include "conf.h"

#define AG_LINT_LOOKUPS_MAX 1000

/* Is name (kind AG_DOMAIN_USER: a user name; AG_DOMAIN_GROUP: a group name)
 * known? 1 known, 0 unknown, -errno when the name service could not answer
 * (-ENOMEM ends the lint). */
typedef int (*ag_lint_lookup_fn)(void *userdata, AgDomainKind kind, const char *name);

/* Calls warn(userdata, file, line, message) for each finding, in the order
 * of the rules, and returns how many there were, or -ENOMEM. lookup NULL:
 * no name is looked up (the uid-range warnings are still given). */
int ag_config_lint(const AgConfig *c, ag_lint_lookup_fn lookup, void *lookup_data, ag_error_fn warn,
                   void *userdata);
