/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* autogroup.conf text to rules: one line, and a buffer of lines. */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "config-internal.h"

#define MSG_LINE_TOO_LONG    "line too long"
#define MSG_NUL              "invalid character (NUL)"
#define MSG_FIELDS           "expected <domain> <item> <value>"
#define MSG_TRAILING         "trailing garbage after value"
/* pools */
#define MSG_POOL_ITEM        "a pool:NAME domain takes only weight, max or idle"

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

/* Parses len bytes at line (no newline; may contain NUL bytes, which are an
 * error). Returns 1 with *ret_rule filled, 0 for nothing, -EINVAL with
 * *ret_error (and, for an unknown item, *ret_detail = the offending field),
 * or -ENOMEM. */
/* Cuts a line (len bytes, no newline) into at most three blank-separated
 * fields, a '#' and what follows it a comment. */
static int split_fields(const char *line, size_t len, Field fields[static 3], size_t *ret_n, const char **ret_error) {
        const char *hash;
        size_t n = 0;

        if (len > AG_LINE_MAX) {
                *ret_error = MSG_LINE_TOO_LONG;
                return -EINVAL;
        }
        if (memchr(line, 0, len)) {
                *ret_error = MSG_NUL;
                return -EINVAL;
        }
        hash = memchr(line, '#', len);
        if (hash)
                len = (size_t) (hash - line);
        while (len > 0 && (is_blank(line[len - 1]) || line[len - 1] == '\r'))
                len--;
        for (size_t i = 0; i < len;) {
                if (is_blank(line[i])) {
                        i++;
                        continue;
                }
                size_t start = i;
                while (i < len && !is_blank(line[i]))
                        i++;
                if (n == 3) {
                        *ret_error = MSG_TRAILING;
                        return -EINVAL;
                }
                fields[n++] = (Field) { line + start, i - start };
        }
        *ret_n = n;
        return 0;
}

static int parse_line_impl(const char *line, size_t len, AgRule *ret_rule,
                           const char **ret_error, Field *ret_detail) {
        Field fields[3];
        size_t n_fields = 0;
        const char *msg;
        AgRule rule = {};
        Field name;
        int r;

        r = split_fields(line, len, fields, &n_fields, ret_error);
        if (r < 0)
                return r;

        if (n_fields == 0)
                return 0;
        if (n_fields < 3) {
                *ret_error = MSG_FIELDS;
                return -EINVAL;
        }

        msg = ag_config_parse_domain(&fields[0], &rule, &name);
        if (msg) {
                *ret_error = msg;
                return -EINVAL;
        }
        if (ag_config_parse_item(&fields[1], &rule.item) < 0) {
                *ret_error = MSG_UNKNOWN_ITEM;
                if (ret_detail)
                        *ret_detail = fields[1];
                return -EINVAL;
        }
        /* pools: a pool's limits, nothing else */
        if (rule.kind == AG_DOMAIN_POOL && rule.item != AG_ITEM_WEIGHT && rule.item != AG_ITEM_MAX &&
            rule.item != AG_ITEM_IDLE) {
                *ret_error = MSG_POOL_ITEM;
                return -EINVAL;
        }
        msg = ag_config_parse_value(rule.item, &fields[2], &rule.value);
        if (msg) {
                *ret_error = msg;
                return -EINVAL;
        }

        if (name.n > 0) {
                rule.name = strndup(name.p, name.n);
                if (!rule.name)
                        return -ENOMEM;
        }
        /* pools: the pool name */
        if (rule.item == AG_ITEM_POOL && rule.value == 1) {
                rule.str = strndup(fields[2].p, fields[2].n);
                if (!rule.str) {
                        free(rule.name);
                        return -ENOMEM;
                }
        }

        *ret_rule = rule;
        return 1;
}

int ag_config_parse_line(const char *line, AgRule *ret_rule, const char **ret_error) {
        const char *msg = NULL;
        int r;

        if (!line || !ret_rule)
                return -EINVAL;

        /* strnlen: never scan further than needed to know the line is too long */
        r = parse_line_impl(line, strnlen(line, AG_LINE_MAX + 1), ret_rule, &msg, NULL);
        if (r == -EINVAL && ret_error)
                *ret_error = msg;
        return r;
}

/* ---- a buffer ---- */

/* Copies at most 64 bytes of a token into buf for a message, escaping
 * anything that is not printable ASCII so that log lines stay clean. */
static void escape_token(const char *p, size_t n, char *buf, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t o = 0, limit = n > 64 ? 64 : n;

        for (size_t i = 0; i < limit && o + 5 < size; i++) {
                unsigned char c = (unsigned char) p[i];
                if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
                        buf[o++] = (char) c;
                else {
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[c >> 4];
                        buf[o++] = hex[c & 15];
                }
        }
        if (limit < n && o + 4 <= size) {
                memcpy(buf + o, "...", 3);
                o += 3;
        }
        buf[o] = 0;
}

void ag_config_report(ag_error_fn error, void *userdata, const char *file, unsigned line,
                   const char *message, int *n_errors) {
        assert(n_errors);

        if (error)
                error(userdata, file, line, message);
        if (*n_errors < INT_MAX)
                (*n_errors)++;
}

/* Grows *array of n elements of size by one. No hidden capacity: a config
 * built or extended by other code stays valid. (glibc's realloc grows in
 * place or by mremap; a 1 MiB file of rules parses in a few ms either way.) */
int ag_config_grow(void **array, size_t n, size_t size) {
        size_t cap;
        void *p;

        /* n elements, grown only here, one at a time, from none: the
         * capacity is the next power of two, so the array is reallocated
         * only when n is 0 or a power of two (linear, not quadratic, in the
         * number of rules) */
        if (n > 0 && (n & (n - 1)) != 0)
                return 0;
        cap = n == 0 ? 1 : n * 2;
        if (cap >= SIZE_MAX / size)
                return -ENOMEM;
        p = realloc(*array, cap * size);
        if (!p)
                return -ENOMEM;
        *array = p;
        return 0;
}

static int config_add_file(AgConfig *config, const char *file, const char **ret) {
        char *copy;
        int r;

        r = ag_config_grow((void **) &config->files, config->n_files, sizeof(char *));
        if (r < 0)
                return r;

        copy = strdup(file);
        if (!copy)
                return -ENOMEM;
        config->files[config->n_files++] = copy;
        *ret = copy;
        return 0;
}

int ag_config_parse_buffer(AgConfig *config, const char *file, const char *buf, size_t size,
                           ag_error_fn error, void *userdata) {
        const char *file_copy = NULL;   /* added to config->files with the first rule */
        unsigned line_no = 0;
        int n_errors = 0, r;

        if (!config || (!buf && size > 0))
                return -EINVAL;

        for (size_t pos = 0; pos < size;) {
                const char *start = buf + pos, *nl, *msg = NULL;
                Field detail = {};
                AgRule rule;
                size_t len;

                nl = memchr(start, '\n', size - pos);
                len = nl ? (size_t) (nl - start) : size - pos;
                pos += len + (nl ? 1 : 0);
                if (line_no < UINT_MAX)
                        line_no++;

                r = parse_line_impl(start, len, &rule, &msg, &detail);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (detail.p) {
                                char token[64 * 4 + 4], text[sizeof(token) + 32];

                                escape_token(detail.p, detail.n, token, sizeof(token));
                                (void) snprintf(text, sizeof(text), "%s '%s'", msg, token);
                                ag_config_report(error, userdata, file, line_no, text, &n_errors);
                        } else
                                ag_config_report(error, userdata, file, line_no, msg, &n_errors);
                        continue;
                }
                if (r == 0)
                        continue;

                if (file && !file_copy) {
                        r = config_add_file(config, file, &file_copy);
                        if (r < 0) {
                                free(rule.name);
                                free(rule.str);
                                return r;
                        }
                }
                r = ag_config_grow((void **) &config->rules, config->n_rules, sizeof(AgRule));
                if (r < 0) {
                        free(rule.name);
                        free(rule.str);
                        return r;
                }
                rule.file = file_copy;
                rule.line = line_no;
                config->rules[config->n_rules++] = rule;
        }

        return n_errors;
}

AgConfig *ag_config_free(AgConfig *config) {
        if (!config)
                return NULL;

        for (size_t i = 0; i < config->n_rules; i++) {
                free(config->rules[i].name);
                free(config->rules[i].str);
        }
        free(config->rules);
        for (size_t i = 0; i < config->n_files; i++)
                free(config->files[i]);
        free(config->files);
        free(config);
        return NULL;
}
