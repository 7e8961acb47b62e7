/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the three parts of the config reader, and nothing else:
 * config-value.c (the value syntax), config-parse.c (lines and buffers) and
 * config-load.c (files and drop-ins). */

#include <stddef.h>
#include <sys/types.h>

#include "conf.h"

#define AG_UID_VALID_MAX ((uid_t) -1 - 1) /* (uid_t) -1 is never a valid uid */
#define MSG_UNKNOWN_ITEM     "unknown item"

/* A token of a line: not NUL-terminated. */
typedef struct Field {
        const char *p;
        size_t n;
} Field;

/* Each returns NULL on success or a static message. parse_domain fills kind,
 * uid_min and uid_max of rule and sets *ret_name to the part to copy as the
 * name (n == 0 for none); it allocates nothing. */
const char *ag_config_parse_domain(const Field *f, AgRule *rule, Field *ret_name);
const char *ag_config_parse_value(AgItem item, const Field *f, long *ret);
/* 0 with *ret set, or -EINVAL for an unknown item name. */
int ag_config_parse_item(const Field *f, AgItem *ret);

/* Calls error (if set) and counts the error in *n_errors (saturating). */
void ag_config_report(ag_error_fn error, void *userdata, const char *file, unsigned line,
                      const char *message, int *n_errors);
/* Grows *array of n elements of size by one; -ENOMEM leaves it as it was.
 * Only for arrays that grow here alone, from NULL and 0, one at a time: the
 * capacity is the next power of two (see config-parse.c). */
int ag_config_grow(void **array, size_t n, size_t size);
