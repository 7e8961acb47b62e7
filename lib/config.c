/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Quoted includes search this file's directory first, so this is lib/config.h
 * and never the autoconf header at the top of the build tree. */
#include "config.h"
#include "util.h"

#define AG_FILE_SIZE_MAX (1024 * 1024)    /* larger config files are refused */
#define AG_UID_VALID_MAX ((uid_t) -1 - 1) /* (uid_t) -1 is never a valid uid */

#define STRINGIFY_IMPL(x) #x
#define STRINGIFY(x) STRINGIFY_IMPL(x)

/* The messages. Short, lowercase, no trailing period: the caller prefixes
 * file:line. */
#define MSG_LINE_TOO_LONG    "line too long"
#define MSG_NUL              "invalid character (NUL)"
#define MSG_FIELDS           "expected <domain> <item> <value>"
#define MSG_TRAILING         "trailing garbage after value"
#define MSG_DOMAIN_CHAR      "invalid character in domain"
#define MSG_GROUP_EMPTY      "empty group name"
#define MSG_NAME_TOO_LONG    "name too long"
#define MSG_RANGE            "invalid uid range"
#define MSG_RANGE_UID        "uid out of range"
#define MSG_RANGE_ORDER      "uid range min greater than max"
#define MSG_UNKNOWN_ITEM     "unknown item"
#define MSG_WEIGHT           "invalid weight (expected " STRINGIFY(AG_WEIGHT_MIN) ".." STRINGIFY(AG_WEIGHT_MAX) ")"
#define MSG_MAX              "invalid max (expected N% with N " "1.." STRINGIFY(AG_MAX_PCT_MAX) ", or none)"
#define MSG_SESSIONS         "invalid sessions (expected yes or no)"
#define MSG_IDLE             "invalid idle (expected yes or no)"

#define MSG_NOT_REGULAR      "not a regular file"
#define MSG_NOT_ROOT         "not owned by root, ignored"
#define MSG_WORLD_WRITABLE   "world-writable, ignored"
#define MSG_GROUP_WRITABLE   "group-writable, ignored"
#define MSG_TOO_LARGE        "file too large, ignored"

static const char *const item_table[_AG_ITEM_MAX] = {
        [AG_ITEM_WEIGHT]   = "weight",
        [AG_ITEM_MAX]      = "max",
        [AG_ITEM_SESSIONS] = "sessions",
        [AG_ITEM_IDLE]     = "idle",
};

static const char *const domain_kind_table[_AG_DOMAIN_KIND_MAX] = {
        [AG_DOMAIN_ALL]   = "*",
        [AG_DOMAIN_RANGE] = "range",
        [AG_DOMAIN_GROUP] = "group",
        [AG_DOMAIN_USER]  = "user",
};

const char *ag_item_to_string(AgItem item) {
        if ((unsigned) item >= _AG_ITEM_MAX)
                return NULL;
        return item_table[item];
}

const char *ag_domain_kind_to_string(AgDomainKind kind) {
        if ((unsigned) kind >= _AG_DOMAIN_KIND_MAX)
                return NULL;
        return domain_kind_table[kind];
}

/* ---- one line ---- */

typedef struct Field {
        const char *p;
        size_t n;
} Field;

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool field_eq(const Field *f, const char *s) {
        size_t n = strlen(s);
        return f->n == n && memcmp(f->p, s, n) == 0;
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

static const char *check_name(const char *p, size_t n) {
        if (n >= AG_NAME_MAX)
                return MSG_NAME_TOO_LONG;
        if (p[0] == '@' || memchr(p, ':', n))
                return MSG_DOMAIN_CHAR;
        return NULL;
}

/* Fills kind, uid_min, uid_max and sets *ret_name to the part to copy as the
 * name (n == 0 for none). Allocates nothing. */
static const char *parse_domain(const Field *f, AgRule *rule, Field *ret_name) {
        const char *msg;

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
                msg = check_name(name.p, name.n);
                if (msg)
                        return msg;
                rule->kind = AG_DOMAIN_GROUP;
                *ret_name = name;
                return NULL;
        }

        const char *colon = memchr(f->p, ':', f->n);
        if (colon) {
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
                if (lo > hi)
                        return MSG_RANGE_ORDER;
                rule->kind = AG_DOMAIN_RANGE;
                rule->uid_min = (uid_t) lo;
                rule->uid_max = (uid_t) hi;
                return NULL;
        }

        msg = check_name(f->p, f->n);
        if (msg)
                return msg;
        rule->kind = AG_DOMAIN_USER;
        *ret_name = *f;
        return NULL;
}

static int parse_item(const Field *f, AgItem *ret) {
        for (AgItem i = 0; i < _AG_ITEM_MAX; i++)
                if (field_eq(f, item_table[i])) {
                        *ret = i;
                        return 0;
                }
        return -EINVAL;
}

static const char *parse_value(AgItem item, const Field *f, long *ret) {
        unsigned long long v;

        switch (item) {
        case AG_ITEM_WEIGHT:
                if (parse_decimal(f->p, f->n, AG_WEIGHT_MAX, &v) < 0 || v < AG_WEIGHT_MIN)
                        return MSG_WEIGHT;
                *ret = (long) v;
                return NULL;

        case AG_ITEM_MAX:
                if (field_eq(f, "none")) {
                        *ret = AG_MAX_NONE;
                        return NULL;
                }
                if (f->n < 2 || f->p[f->n - 1] != '%' ||
                    parse_decimal(f->p, f->n - 1, AG_MAX_PCT_MAX, &v) < 0 || v < 1)
                        return MSG_MAX;
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

        default:
                return MSG_UNKNOWN_ITEM;
        }
}

/* Parses len bytes at line (no newline; may contain NUL bytes, which are an
 * error). Returns 1 with *ret_rule filled, 0 for nothing, -EINVAL with
 * *ret_error (and, for an unknown item, *ret_detail = the offending field),
 * or -ENOMEM. */
static int parse_line_impl(const char *line, size_t len, AgRule *ret_rule,
                           const char **ret_error, Field *ret_detail) {
        Field fields[3];
        size_t n_fields = 0;
        const char *hash, *msg;
        AgRule rule = {};
        Field name;

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
                if (n_fields == 3) {
                        *ret_error = MSG_TRAILING;
                        return -EINVAL;
                }
                fields[n_fields++] = (Field) { line + start, i - start };
        }

        if (n_fields == 0)
                return 0;
        if (n_fields < 3) {
                *ret_error = MSG_FIELDS;
                return -EINVAL;
        }

        msg = parse_domain(&fields[0], &rule, &name);
        if (msg) {
                *ret_error = msg;
                return -EINVAL;
        }
        if (parse_item(&fields[1], &rule.item) < 0) {
                *ret_error = MSG_UNKNOWN_ITEM;
                if (ret_detail)
                        *ret_detail = fields[1];
                return -EINVAL;
        }
        msg = parse_value(rule.item, &fields[2], &rule.value);
        if (msg) {
                *ret_error = msg;
                return -EINVAL;
        }

        if (name.n > 0) {
                rule.name = strndup(name.p, name.n);
                if (!rule.name)
                        return -ENOMEM;
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

static void report(ag_error_fn error, void *userdata, const char *file, unsigned line,
                   const char *message, int *n_errors) {
        if (error)
                error(userdata, file, line, message);
        if (*n_errors < INT_MAX)
                (*n_errors)++;
}

/* Grows *array of n elements of size by one. No hidden capacity: a config
 * built or extended by other code stays valid. (glibc's realloc grows in
 * place or by mremap; a 1 MiB file of rules parses in a few ms either way.) */
static int grow(void **array, size_t n, size_t size) {
        void *p;

        if (n >= SIZE_MAX / size - 1)
                return -ENOMEM;
        p = realloc(*array, (n + 1) * size);
        if (!p)
                return -ENOMEM;
        *array = p;
        return 0;
}

static int config_add_file(AgConfig *config, const char *file, const char **ret) {
        char *copy;
        int r;

        r = grow((void **) &config->files, config->n_files, sizeof(char *));
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
                                report(error, userdata, file, line_no, text, &n_errors);
                        } else
                                report(error, userdata, file, line_no, msg, &n_errors);
                        continue;
                }
                if (r == 0)
                        continue;

                if (file && !file_copy) {
                        r = config_add_file(config, file, &file_copy);
                        if (r < 0) {
                                free(rule.name);
                                return r;
                        }
                }
                r = grow((void **) &config->rules, config->n_rules, sizeof(AgRule));
                if (r < 0) {
                        free(rule.name);
                        return r;
                }
                rule.file = file_copy;
                rule.line = line_no;
                config->rules[config->n_rules++] = rule;
        }

        return n_errors;
}

/* ---- files ---- */

static void report_errno(ag_error_fn error, void *userdata, const char *file, const char *what,
                         int err, int *n_errors) {
        char text[256];

        errno = err;
        (void) snprintf(text, sizeof(text), "%s: %m", what);
        report(error, userdata, file, 0, text, n_errors);
}

/* Rule 4 of the brief: refuse what someone other than root could have written. */
static const char *check_safe(const struct stat *st) {
        if (st->st_uid != 0)
                return MSG_NOT_ROOT;
        if (st->st_mode & S_IWOTH)
                return MSG_WORLD_WRITABLE;
        if ((st->st_mode & S_IWGRP) && st->st_gid != 0)
                return MSG_GROUP_WRITABLE;
        return NULL;
}

/* Reads up to max bytes; -EFBIG when there is more. */
static int read_all(int fd, size_t hint, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t cap, len = 0;

        cap = (hint < max ? hint : max) + 1;
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                if (len == cap) {
                        size_t ncap;
                        char *p;

                        if (cap > max)
                                return -EFBIG;
                        ncap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
                        p = realloc(buf, ncap);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap = ncap;
                }

                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > max)
                        return -EFBIG;
        }

        *ret = TAKE_PTR(buf);
        *ret_size = len;
        return 0;
}

/* Checks and parses an open file. Returns 0 or -ENOMEM; every other problem
 * is reported and counted. */
static int load_fd(AgConfig *config, int fd, const char *path, unsigned flags,
                   ag_error_fn error, void *userdata, int *n_errors) {
        _cleanup_free_ char *buf = NULL;
        const char *msg;
        struct stat st;
        size_t size;
        int r;

        if (fstat(fd, &st) < 0) {
                report_errno(error, userdata, path, "cannot stat", errno, n_errors);
                return 0;
        }
        if (!S_ISREG(st.st_mode)) {
                report(error, userdata, path, 0, MSG_NOT_REGULAR, n_errors);
                return 0;
        }
        if (!(flags & AG_CONFIG_TRUST_ANY_OWNER)) {
                msg = check_safe(&st);
                if (msg) {
                        report(error, userdata, path, 0, msg, n_errors);
                        return 0;
                }
        }
        if (st.st_size < 0 || st.st_size > AG_FILE_SIZE_MAX) {
                report(error, userdata, path, 0, MSG_TOO_LARGE, n_errors);
                return 0;
        }

        r = read_all(fd, (size_t) st.st_size, AG_FILE_SIZE_MAX, &buf, &size);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG) {
                report(error, userdata, path, 0, MSG_TOO_LARGE, n_errors);
                return 0;
        }
        if (r < 0) {
                report_errno(error, userdata, path, "cannot read", -r, n_errors);
                return 0;
        }

        r = ag_config_parse_buffer(config, path, buf, size, error, userdata);
        if (r < 0)
                return r;
        *n_errors = r > INT_MAX - *n_errors ? INT_MAX : *n_errors + r;
        return 0;
}

/* O_NONBLOCK: a FIFO named like a config file must not hang a login; it is
 * then refused as not a regular file. */
#define CONF_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static int cmp_strp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static bool is_dropin_name(const char *name) {
        size_t n = strlen(name);

        return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".conf") == 0;
}

static void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

static int load_dropins(AgConfig *config, const char *dir, unsigned flags,
                        ag_error_fn error, void *userdata, int *n_errors) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_close_ int dfd = -1;
        char **names = NULL;
        size_t n_names = 0;
        struct dirent *de;
        struct stat st;
        int r = 0;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
        if (dfd < 0) {
                if (errno != ENOENT)
                        report_errno(error, userdata, dir, "cannot open", errno, n_errors);
                return 0;
        }
        if (fstat(dfd, &st) < 0) {
                report_errno(error, userdata, dir, "cannot stat", errno, n_errors);
                return 0;
        }
        if (!(flags & AG_CONFIG_TRUST_ANY_OWNER)) {
                const char *msg = check_safe(&st);
                if (msg) {
                        report(error, userdata, dir, 0, msg, n_errors);
                        return 0;
                }
        }

        d = fdopendir(dfd);
        if (!d) {
                if (errno == ENOMEM)
                        return -ENOMEM;
                report_errno(error, userdata, dir, "cannot open", errno, n_errors);
                return 0;
        }
        dfd = -1;                       /* owned by d now */

        for (;;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                report_errno(error, userdata, dir, "cannot read directory", errno, n_errors);
                        break;
                }
                if (!is_dropin_name(de->d_name))
                        continue;

                r = grow((void **) &names, n_names, sizeof(char *));
                if (r < 0)
                        goto finish;
                names[n_names] = strdup(de->d_name);
                if (!names[n_names]) {
                        r = -ENOMEM;
                        goto finish;
                }
                n_names++;
        }

        if (n_names > 1)
                qsort(names, n_names, sizeof(char *), cmp_strp);

        for (size_t i = 0; i < n_names; i++) {
                _cleanup_free_ char *path = NULL;
                _cleanup_close_ int fd = -1;

                if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
                        path = NULL;
                        r = -ENOMEM;
                        goto finish;
                }
                fd = openat(dirfd(d), names[i], CONF_OPEN_FLAGS);
                if (fd < 0) {
                        report_errno(error, userdata, path, "cannot open", errno, n_errors);
                        continue;
                }
                r = load_fd(config, fd, path, flags, error, userdata, n_errors);
                if (r < 0)
                        goto finish;
        }
        r = 0;

finish:
        strv_free_n(names, n_names);
        return r;
}

int ag_config_dropin_dir(const char *path, char **ret) {
        size_t n;
        char *s;

        if (!path || !ret)
                return -EINVAL;

        n = strlen(path);
        if (n >= 5 && strcmp(path + n - 5, ".conf") == 0)
                n -= 5;

        s = malloc(n + 3);
        if (!s)
                return -ENOMEM;
        memcpy(s, path, n);
        memcpy(s + n, ".d", 3);
        *ret = s;
        return 0;
}

static void config_freep(AgConfig **c) {
        ag_config_free(*c);
}

int ag_config_load(const char *path, unsigned flags, ag_error_fn error, void *userdata, AgConfig **ret) {
        _cleanup_(config_freep) AgConfig *config = NULL;
        int n_errors = 0, r;

        if (!path || !ret)
                return -EINVAL;

        config = calloc(1, sizeof(AgConfig));
        if (!config)
                return -ENOMEM;

        {
                _cleanup_close_ int fd = open(path, CONF_OPEN_FLAGS);
                if (fd < 0) {
                        if (errno != ENOENT)
                                report_errno(error, userdata, path, "cannot open", errno, &n_errors);
                } else {
                        r = load_fd(config, fd, path, flags, error, userdata, &n_errors);
                        if (r < 0)
                                return r;
                }
        }

        if (!(flags & AG_CONFIG_NO_DROPINS)) {
                _cleanup_free_ char *dir = NULL;

                r = ag_config_dropin_dir(path, &dir);
                if (r < 0)
                        return r;
                r = load_dropins(config, dir, flags, error, userdata, &n_errors);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(config);
        return n_errors;
}

AgConfig *ag_config_free(AgConfig *config) {
        if (!config)
                return NULL;

        for (size_t i = 0; i < config->n_rules; i++)
                free(config->rules[i].name);
        free(config->rules);
        for (size_t i = 0; i < config->n_files; i++)
                free(config->files[i]);
        free(config->files);
        free(config);
        return NULL;
}
