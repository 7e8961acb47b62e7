/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What several cmocka programs in tests/unit/ share: a temporary config
 * directory as a per-test fixture, text printed to memory, and main().
 * Define _GNU_SOURCE before the first include, include this after
 * <cmocka.h>. Test code only. */
#pragma once

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ---- temporary directories ---- */

/* Makes a new directory from template ("/tmp/NAME.XXXXXX"), its name in dir. */
static inline bool tmpdir_make(char *dir, size_t size, const char *template) {
        snprintf(dir, size, "%s", template);
        return mkdtemp(dir) != NULL;
}

/* a temporary directory with the paths of a config in it */

typedef struct TmpDir {
        char path[64];
        char *conf;    /* <path>/autogroup.conf */
        char *dropins; /* <path>/autogroup.d */
} TmpDir;

static inline int tmpdir_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) remove(path);
        return 0;
}

/* cmocka setup: a fresh directory, mode 0755 whatever the umask. */
static inline int tmpdir_setup(void **state) {
        TmpDir *t = calloc(1, sizeof(TmpDir));

        if (!t)
                return -1;
        *state = t;
        if (!tmpdir_make(t->path, sizeof(t->path), "/tmp/ag-unit-XXXXXX") || chmod(t->path, 0755) < 0)
                return -1;
        if (asprintf(&t->conf, "%s/autogroup.conf", t->path) < 0 ||
            asprintf(&t->dropins, "%s/autogroup.d", t->path) < 0)
                return -1;
        return 0;
}

/* cmocka teardown, run even when the test failed: makes the drop-in
 * directory removable, then removes everything depth first. */
static inline int tmpdir_teardown(void **state) {
        TmpDir *t = *state;

        if (!t)
                return 0;
        if (t->dropins)
                (void) chmod(t->dropins, 0755);
        if (t->path[0])
                (void) nftw(t->path, tmpdir_rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(t->conf);
        free(t->dropins);
        free(t);
        return 0;
}

/* a test run with a fresh TmpDir in *state */
#define tmpdir_test(f) cmocka_unit_test_setup_teardown(f, tmpdir_setup, tmpdir_teardown)

/* Writes content to dir/name (created or truncated). */
static inline void put_file(const char *dir, const char *name, const char *content) {
        char *p;
        FILE *fp;

        assert_true(asprintf(&p, "%s/%s", dir, name) >= 0);
        fp = fopen(p, "we");
        assert_non_null(fp);
        assert_true(fputs(content, fp) >= 0);
        assert_int_equal(fclose(fp), 0);
        free(p);
}

/* put_file() for each NAME, CONTENT pair after dir, up to a NULL */
static inline void put_files(const char *dir, ...) {
        va_list ap;
        const char *name;

        va_start(ap, dir);
        while ((name = va_arg(ap, const char *)))
                put_file(dir, name, va_arg(ap, const char *));
        va_end(ap);
}

/* ---- text printed to memory ---- */

typedef struct MemOut {
        char *buf;
        size_t size;
        FILE *f;
} MemOut;

/* A stream that writes into m; mem_out_done() closes it. */
static inline FILE *mem_out_open(MemOut *m) {
        *m = (MemOut) {};
        m->f = open_memstream(&m->buf, &m->size);
        assert_non_null(m->f);
        return m->f;
}

/* Closes m's stream; returns what was written (the caller frees). */
static inline char *mem_out_done(MemOut *m) {
        assert_int_equal(fclose(m->f), 0);
        m->f = NULL;
        return m->buf;
}

/* ---- main() of a program that runs only its list of tests ---- */

#define UNIT_MAIN(...)                                             \
        int main(void) {                                           \
                const struct CMUnitTest tests[] = { __VA_ARGS__ }; \
                return cmocka_run_group_tests(tests, NULL, NULL);  \
        }
