/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Loading autogroup.conf and its drop-in directory: the safety checks on
 * each file, reading it, and the order of the drop-ins. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "config-internal.h"
#include "util.h"

#define AG_FILE_SIZE_MAX (1024 * 1024)    /* larger config files are refused */

#define MSG_NOT_REGULAR      "not a regular file"
#define MSG_NOT_ROOT         "not owned by root, ignored"
#define MSG_WORLD_WRITABLE   "world-writable, ignored"
#define MSG_GROUP_WRITABLE   "group-writable, ignored"
#define MSG_TOO_LARGE        "file too large, ignored"


static void report_errno(ag_error_fn error, void *userdata, const char *file, const char *what,
                         int err, int *n_errors) {
        char text[256];

        errno = err;
        (void) snprintf(text, sizeof(text), "%s: %m", what);
        ag_config_report(error, userdata, file, 0, text, n_errors);
}

/* "not a regular file", and what it is instead */
static const char *not_regular(mode_t mode) {
        return S_ISDIR(mode) ? MSG_NOT_REGULAR " (a directory)" :
               S_ISCHR(mode) || S_ISBLK(mode) ? MSG_NOT_REGULAR " (a device)" :
               S_ISFIFO(mode) ? MSG_NOT_REGULAR " (a FIFO)" :
               S_ISSOCK(mode) ? MSG_NOT_REGULAR " (a socket)" : MSG_NOT_REGULAR;
}

/* SECURITY.md rule 4: refuse what someone other than root could have written. */
static const char *check_safe(const struct stat *st) {
        if (st->st_uid != 0)
                return MSG_NOT_ROOT;
        if (st->st_mode & S_IWOTH)
                return MSG_WORLD_WRITABLE;
        if ((st->st_mode & S_IWGRP) && st->st_gid != 0)
                return MSG_GROUP_WRITABLE;
        return NULL;
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
                ag_config_report(error, userdata, path, 0, not_regular(st.st_mode), n_errors);
                return 0;
        }
        if (!(flags & AG_CONFIG_TRUST_ANY_OWNER)) {
                msg = check_safe(&st);
                if (msg) {
                        ag_config_report(error, userdata, path, 0, msg, n_errors);
                        return 0;
                }
        }
        if (st.st_size < 0 || st.st_size > AG_FILE_SIZE_MAX) {
                ag_config_report(error, userdata, path, 0, MSG_TOO_LARGE, n_errors);
                return 0;
        }

        r = ag_read_all(fd, (size_t) st.st_size, AG_FILE_SIZE_MAX, &buf, &size);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG) {
                ag_config_report(error, userdata, path, 0, MSG_TOO_LARGE, n_errors);
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

/* Opens the drop-in directory dir, checked as a config file is: 0 with
 * *ret_d NULL when it is missing or refused (reported). */
static int open_dropin_dir(const char *dir, unsigned flags, ag_error_fn error, void *userdata, int *n_errors,
                           DIR **ret_d) {
        _cleanup_close_ int dfd = -1;
        struct stat st;
        DIR *d;

        *ret_d = NULL;
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
                        ag_config_report(error, userdata, dir, 0, msg, n_errors);
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
        *ret_d = d;
        return 0;
}

/* The drop-in names of d (is_dropin_name), sorted, into *names (n_names
 * grown; the caller frees them, also on failure). */
static int list_dropins(DIR *d, const char *dir, ag_error_fn error, void *userdata, int *n_errors, char ***names,
                        size_t *n_names) {
        struct dirent *de;
        int r;

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
                r = ag_config_grow((void **) names, *n_names, sizeof(char *));
                if (r < 0)
                        return r;
                (*names)[*n_names] = strdup(de->d_name);
                if (!(*names)[*n_names])
                        return -ENOMEM;
                (*n_names)++;
        }
        if (*n_names > 1)
                qsort(*names, *n_names, sizeof(char *), cmp_strp);
        return 0;
}

static int load_dropins(AgConfig *config, const char *dir, unsigned flags,
                        ag_error_fn error, void *userdata, int *n_errors) {
        _cleanup_(closedirp) DIR *d = NULL;
        char **names = NULL;
        size_t n_names = 0;
        int r;

        r = open_dropin_dir(dir, flags, error, userdata, n_errors, &d);
        if (r < 0 || !d)
                return r;
        r = list_dropins(d, dir, error, userdata, n_errors, &names, &n_names);
        for (size_t i = 0; r >= 0 && i < n_names; i++) {
                _cleanup_free_ char *path = NULL;
                _cleanup_close_ int fd = -1;

                if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
                        path = NULL;
                        r = -ENOMEM;
                        break;
                }
                fd = openat(dirfd(d), names[i], CONF_OPEN_FLAGS);
                if (fd < 0) {
                        report_errno(error, userdata, path, "cannot open", errno, n_errors);
                        continue;
                }
                r = load_fd(config, fd, path, flags, error, userdata, n_errors);
        }
        strv_free_n(names, n_names);
        return r < 0 ? r : 0;
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
