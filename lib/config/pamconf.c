/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The module's options as the PAM configuration gives them (pamconf.h).
 *
 * The line syntax is libpam's (pam_handlers.c): "TYPE CONTROL MODULE ARGS",
 * a leading '-' on TYPE, CONTROL either a word or "[...]", "include" and
 * "substack" naming a file (absolute, or relative to the directory), ARGS
 * words or "[...]" with "\]" for a ']' inside, '#' to the end of a line a
 * comment, a backslash before the newline joining lines. Debian's libpam
 * adds "@include FILE" (every type of FILE). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf.h"
#include "pamconf.h"
#include "util.h"

#define MAX_WORDS 64
#define SYSTEMD_MODULE_NAME "pam_systemd.so"
/* services named in one warning of the stacks */
#define SERVICES_NAMED_MAX 6

typedef struct FileId {
        dev_t dev;
        ino_t ino;
} FileId;

typedef struct Walk {
        AgPamConf *c;
        const char *service;
        ag_pamconf_warn_fn warn;
        void *userdata;
        FileId stack[AG_PAMCONF_MAX_DEPTH + 1];
        unsigned depth;
        unsigned opened;               /* files opened for the current service */
        unsigned opened_total;         /* files opened over the whole scan */
        /* (dev, ino) of each line's file, parallel to c->lines */
        FileId *line_ids;
        /* the same for c->systemd_lines */
        FileId *systemd_ids;
        /* the current service's session stack */
        AgPamStack cur;
        bool stack_has_module;
} Walk;

static void warnf(Walk *w, const char *file, unsigned line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void warnf(Walk *w, const char *file, unsigned line, const char *fmt, ...) {
        char msg[512];
        va_list ap;

        if (!w->warn)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        w->warn(w->userdata, file, line, msg);
}

static void line_options_clear(AgPamLine *l) {
        free(l->root);
        free(l->conf);
        free(l->mode);
        free(l->delegate);
        free(l->acctlog);
        l->root = l->conf = l->mode = l->delegate = l->acctlog = NULL;
        l->root_given = l->debug = l->noaudit = l->strict = false;
        l->n_problems = 0;
}

static void line_free(AgPamLine *l) {
        line_options_clear(l);
        free(l->file);
        for (size_t i = 0; i < l->n_services; i++)
                free(l->services[i]);
        free(l->services);
}

static void stack_done(AgPamStack *s) {
        free(s->service);
        free(s->entries);
        *s = (AgPamStack) {};
}

AgPamConf *ag_pamconf_free(AgPamConf *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_lines; i++)
                line_free(&c->lines[i]);
        free(c->lines);
        for (size_t i = 0; i < c->n_systemd_lines; i++)
                free(c->systemd_lines[i].file);
        free(c->systemd_lines);
        for (size_t i = 0; i < c->n_stacks; i++)
                stack_done(&c->stacks[i]);
        free(c->stacks);
        free(c->dir);
        free(c);
        return NULL;
}

static int set_str(char **field, const char *value) {
        char *s = strdup(value);

        if (!s)
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

int ag_pamconf_parse_options(AgPamLine *l, int argc, char **argv, ag_pamconf_warn_fn warn, void *userdata) {
        char msg[300];
        int r = 0;

        assert(argv);

        line_options_clear(l);
        for (int i = 0; i < argc && r >= 0; i++) {
                const char *a = argv[i];

                msg[0] = 0;
                if (strcmp(a, "debug") == 0)
                        l->debug = true;
                else if (strcmp(a, "noaudit") == 0)
                        l->noaudit = true;
                else if (strcmp(a, "strict") == 0)
                        l->strict = true;
                else if (strncmp(a, "conf=", 5) == 0 && a[5])
                        r = set_str(&l->conf, a + 5);
                else if (strncmp(a, "root=", 5) == 0) {
                        if (ag_root_name_valid(a + 5)) {
                                r = set_str(&l->root, a + 5);
                                l->root_given = r >= 0;
                        } else
                                snprintf(msg, sizeof msg, "invalid root name '%.64s', the module uses '%s'", a + 5,
                                         AG_ROOT_DEFAULT);
                } else if (strncmp(a, "mode=", 5) == 0) {
                        if (ag_has_token("auto cgroupfs systemd", " ", a + 5) && a[5])
                                r = set_str(&l->mode, a + 5);
                        else
                                snprintf(msg, sizeof msg, "invalid mode '%.64s', the module uses 'auto'", a + 5);
                } else if (strncmp(a, "delegate=", 9) == 0) {
                        if (ag_has_token("yes no", " ", a + 9) && a[9])
                                r = set_str(&l->delegate, a + 9);
                        else
                                snprintf(msg, sizeof msg, "invalid delegate '%.64s' (yes or no)", a + 9);
                } else if (strncmp(a, "acctlog=", 8) == 0) {
                        if (ag_has_token("info debug off", " ", a + 8) && a[8])
                                r = set_str(&l->acctlog, a + 8);
                        else
                                snprintf(msg, sizeof msg, "invalid acctlog '%.64s' (info, debug or off)", a + 8);
                } else
                        snprintf(msg, sizeof msg, "unknown option '%.64s', the module ignores it", a);
                if (msg[0]) {
                        l->n_problems++;
                        if (warn)
                                warn(userdata, l->file, l->line, msg);
                }
        }
        if (r >= 0 && !l->root)
                r = set_str(&l->root, AG_ROOT_DEFAULT);
        return r;
}

/* Splits one logical line in place into words; "[...]" is one word without
 * its brackets ("\]" inside stands for ']'). Returns the number of words. */
static int split_words(char *s, char **words, int max) {
        int n = 0;

        for (;;) {
                while (*s == ' ' || *s == '\t')
                        s++;
                if (!*s || n >= max)
                        return n;
                if (*s == '[') {
                        char *out = ++s;
                        words[n++] = out;
                        while (*s && *s != ']') {
                                if (s[0] == '\\' && s[1] == ']')
                                        s++;
                                *out++ = *s++;
                        }
                        if (*s)
                                s++;
                        *out = 0;
                        /* a word glued to the bracket ends there */
                        continue;
                }
                words[n++] = s;
                while (*s && *s != ' ' && *s != '\t')
                        s++;
                if (*s)
                        *s++ = 0;
        }
}

static bool is_named(const char *path, const char *name) {
        const char *b = strrchr(path, '/');

        return strcmp(b ? b + 1 : path, name) == 0;
}

/* Appends an entry to the current service's stack. */
static int stack_push(Walk *w, bool systemd, size_t index) {
        AgPamStackEntry *v;

        v = realloc(w->cur.entries, (w->cur.n_entries + 1) * sizeof *v);
        if (!v)
                return -ENOMEM;
        w->cur.entries = v;
        v[w->cur.n_entries++] = (AgPamStackEntry) { .systemd = systemd, .index = index };
        w->stack_has_module |= !systemd;
        return 0;
}

/* A session line of pam_systemd.so: kept once, and in the stack. */
static int record_systemd(Walk *w, const char *file, const FileId *id, unsigned lineno) {
        AgPamConf *c = w->c;
        AgPamRef *v;
        FileId *ids;
        size_t i;

        for (i = 0; i < c->n_systemd_lines; i++)
                if (w->systemd_ids[i].dev == id->dev && w->systemd_ids[i].ino == id->ino &&
                    c->systemd_lines[i].line == lineno)
                        return stack_push(w, true, i);
        v = realloc(c->systemd_lines, (i + 1) * sizeof *v);
        if (!v)
                return -ENOMEM;
        c->systemd_lines = v;
        ids = realloc(w->systemd_ids, (i + 1) * sizeof *ids);
        if (!ids)
                return -ENOMEM;
        w->systemd_ids = ids;
        v[i] = (AgPamRef) { .file = strdup(file), .line = lineno };
        if (!v[i].file)
                return -ENOMEM;
        ids[i] = *id;
        c->n_systemd_lines++;
        return stack_push(w, true, i);
}

static int add_service(AgPamLine *l, const char *service) {
        char **v, *s;

        for (size_t i = 0; i < l->n_services; i++)
                if (strcmp(l->services[i], service) == 0)
                        return 0;
        v = realloc(l->services, (l->n_services + 2) * sizeof *v);
        if (!v)
                return -ENOMEM;
        l->services = v;
        s = strdup(service);
        if (!s)
                return -ENOMEM;
        v[l->n_services++] = s;
        v[l->n_services] = NULL;
        return 0;
}

static int record_line(Walk *w, const char *file, const FileId *id, unsigned lineno, int argc, char **argv) {
        AgPamConf *c = w->c;
        AgPamLine *l;
        FileId *ids;
        int r;

        for (size_t i = 0; i < c->n_lines; i++)
                if (w->line_ids[i].dev == id->dev && w->line_ids[i].ino == id->ino && c->lines[i].line == lineno) {
                        r = stack_push(w, false, i);
                        return r < 0 ? r : add_service(&c->lines[i], w->service);
                }

        l = realloc(c->lines, (c->n_lines + 1) * sizeof *l);
        if (!l)
                return -ENOMEM;
        c->lines = l;
        ids = realloc(w->line_ids, (c->n_lines + 1) * sizeof *ids);
        if (!ids)
                return -ENOMEM;
        w->line_ids = ids;
        l = &c->lines[c->n_lines];
        *l = (AgPamLine) { .line = lineno, .file = strdup(file) };
        if (!l->file)
                return -ENOMEM;
        ids[c->n_lines] = *id;
        c->n_lines++;
        r = ag_pamconf_parse_options(l, argc, argv, w->warn, w->userdata);
        if (r >= 0)
                r = stack_push(w, false, c->n_lines - 1);
        if (r < 0)
                return r;
        return add_service(l, w->service);
}

static int walk_file(Walk *w, const char *path, const char *from, unsigned from_line);

static int walk_include(Walk *w, const char *name, const char *from, unsigned lineno) {
        _cleanup_free_ char *path = NULL;

        if (!name || !*name) {
                warnf(w, from, lineno, "include without a file name");
                return 0;
        }
        if (name[0] == '/')
                path = strdup(name);
        else if (asprintf(&path, "%s/%s", w->c->dir, name) < 0)
                path = NULL;
        if (!path)
                return -ENOMEM;
        return walk_file(w, path, from, lineno);
}

/* The lines of one file that concern the session stack. */
static int walk_text(Walk *w, const char *path, const FileId *id, char *text) {
        unsigned lineno = 1;
        char *p = text;

        while (*p) {
                unsigned first = lineno;
                char *start = p, *out = p;
                char *words[MAX_WORDS];
                bool comment = false;
                int n, r;

                /* one logical line: '#' to its end is a comment, "\\\n" joins */
                for (; *p && *p != '\n'; p++) {
                        if (p[0] == '\\' && p[1] == '\n' && !comment) {
                                p++;
                                lineno++;
                                *out++ = ' ';
                                continue;
                        }
                        if (*p == '#')
                                comment = true;
                        if (!comment)
                                *out++ = *p;
                }
                if (*p)
                        p++;
                lineno++;
                *out = 0;

                n = split_words(start, words, MAX_WORDS);
                if (n == 0)
                        continue;
                if (strcmp(words[0], "@include") == 0) {
                        r = walk_include(w, n > 1 ? words[1] : NULL, path, first);
                        if (r < 0)
                                return r;
                        continue;
                }
                const char *type = words[0][0] == '-' ? words[0] + 1 : words[0];
                if (strcasecmp(type, "session") != 0 || n < 3)
                        continue;
                if (strcasecmp(words[1], "include") == 0 || strcasecmp(words[1], "substack") == 0) {
                        r = walk_include(w, words[2], path, first);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (is_named(words[2], SYSTEMD_MODULE_NAME)) {
                        r = record_systemd(w, path, id, first);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!is_named(words[2], AG_PAM_MODULE_NAME))
                        continue;
                r = record_line(w, path, id, first, n - 3, words + 3);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int walk_file(Walk *w, const char *path, const char *from, unsigned from_line) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *text = NULL;
        struct stat st;
        FileId id;
        size_t size;
        int r;

        if (w->depth >= AG_PAMCONF_MAX_DEPTH) {
                warnf(w, from, from_line, "include of %s nested deeper than %d files, not followed", path,
                      AG_PAMCONF_MAX_DEPTH);
                return 0;
        }
        if (w->opened >= AG_PAMCONF_MAX_FILES) {
                if (w->opened++ == AG_PAMCONF_MAX_FILES)
                        warnf(w, path, 0, "more than %d files read for service %s, the rest not followed",
                              AG_PAMCONF_MAX_FILES, w->service);
                return 0;
        }
        if (w->opened_total >= AG_PAMCONF_MAX_OPENS) {
                if (w->opened_total++ == AG_PAMCONF_MAX_OPENS)
                        warnf(w, path, 0, "more than %d files read in all, the rest not followed",
                              AG_PAMCONF_MAX_OPENS);
                return 0;
        }
        w->opened++;
        w->opened_total++;
        /* O_NONBLOCK: a FIFO put there must not hang the reader */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = negative_errno();
                if (from)
                        warnf(w, from, from_line, "cannot read included %s: %s", path, strerror(-r));
                else
                        warnf(w, path, 0, "cannot read: %s", strerror(-r));
                return 0;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                warnf(w, path, 0, "not a regular file, skipped");
                return 0;
        }
        id = (FileId) { st.st_dev, st.st_ino };
        for (unsigned i = 0; i < w->depth; i++)
                if (w->stack[i].dev == id.dev && w->stack[i].ino == id.ino) {
                        warnf(w, from, from_line, "include of %s makes a loop, not followed", path);
                        return 0;
                }
        r = ag_read_all(fd, (size_t) st.st_size + 1, AG_PAMCONF_MAX_FILE_SIZE, &text, &size);
        if (r == -EFBIG) {
                warnf(w, path, 0, "larger than %d bytes, skipped", AG_PAMCONF_MAX_FILE_SIZE);
                return 0;
        }
        if (r < 0) {
                if (r == -ENOMEM)
                        return r;
                warnf(w, path, 0, "cannot read: %s", strerror(-r));
                return 0;
        }
        if (memchr(text, 0, size)) {
                warnf(w, path, 0, "holds a NUL byte, skipped");
                return 0;
        }
        w->stack[w->depth++] = id;
        r = walk_text(w, path, &id, text);
        w->depth--;
        return r;
}

/* Names libpam never reads as a service, or that packaging leaves behind. */
static bool service_name_ok(const char *name) {
        static const char *const suffixes[] = { "~", ".dpkg-old", ".dpkg-dist", ".dpkg-new", ".dpkg-tmp",
                                                ".ucf-old", ".ucf-dist", ".ucf-new", ".rpmsave", ".rpmnew",
                                                ".rpmorig", ".swp", ".bak" };
        size_t n = strlen(name);

        if (name[0] == '.' || n == 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t m = strlen(suffixes[i]);
                if (n > m && strcmp(name + n - m, suffixes[i]) == 0)
                        return false;
        }
        return true;
}

/* The current service's stack into c->stacks when it reaches a module
 * line; dropped otherwise. */
static int stack_keep(Walk *w) {
        AgPamConf *c = w->c;
        AgPamStack *v;

        if (!w->stack_has_module) {
                stack_done(&w->cur);
                return 0;
        }
        v = realloc(c->stacks, (c->n_stacks + 1) * sizeof *v);
        if (!v)
                return -ENOMEM;
        c->stacks = v;
        w->cur.service = strdup(w->service);
        if (!w->cur.service)
                return -ENOMEM;
        v[c->n_stacks++] = w->cur;
        w->cur = (AgPamStack) {};
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int ag_pamconf_scan(const char *dir, ag_pamconf_warn_fn warn, void *userdata, AgPamConf **ret) {
        AgPamConf *c = NULL;
        Walk w = { .warn = warn, .userdata = userdata };
        char **names = NULL;
        size_t n_names = 0;
        DIR *d = NULL;
        struct dirent *de;
        int r = 0;

        if (!dir)
                dir = AG_PAM_DIR_DEFAULT;
        d = opendir(dir);
        if (!d)
                return negative_errno();
        c = calloc(1, sizeof *c);
        if (!c || !(c->dir = strdup(dir))) {
                r = -ENOMEM;
                goto finish;
        }
        w.c = c;
        while ((de = readdir(d))) {
                char **v;

                if (!service_name_ok(de->d_name))
                        continue;
                if (de->d_type != DT_REG && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
                        continue;
                if (n_names >= AG_PAMCONF_MAX_FILES)
                        break;
                v = realloc(names, (n_names + 1) * sizeof *v);
                if (!v || !(v[n_names] = strdup(de->d_name))) {
                        names = v ? v : names;
                        r = -ENOMEM;
                        goto finish;
                }
                names = v;
                n_names++;
        }
        qsort(names, n_names, sizeof *names, cmp_str);
        for (size_t i = 0; i < n_names && r >= 0; i++) {
                _cleanup_free_ char *path = NULL;

                if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
                        r = -ENOMEM;
                        break;
                }
                w.service = names[i];
                w.depth = 0;
                w.opened = 0;
                w.stack_has_module = false;
                r = walk_file(&w, path, NULL, 0);
                if (r >= 0)
                        r = stack_keep(&w);
        }
finish:
        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        free(names);
        free(w.line_ids);
        free(w.systemd_ids);
        stack_done(&w.cur);
        closedir(d);
        if (r < 0) {
                ag_pamconf_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

static bool same_str(const char *a, const char *b) {
        return strcmp(a ? a : "", b ? b : "") == 0;
}

size_t ag_pamconf_distinct_roots(const AgPamConf *c, size_t *ret) {
        size_t n = 0;

        assert(c);
        assert(ret);

        for (size_t i = 0; i < c->n_lines; i++) {
                size_t j;
                for (j = 0; j < n; j++)
                        if (same_str(c->lines[ret[j]].root, c->lines[i].root))
                                break;
                if (j == n)
                        ret[n++] = i;
        }
        return n;
}

size_t ag_pamconf_distinct_confs(const AgPamConf *c, const char *default_conf, size_t *ret) {
        size_t n = 0;

        assert(c);
        assert(ret);

        for (size_t i = 0; i < c->n_lines; i++) {
                const char *ci = c->lines[i].conf ? c->lines[i].conf : default_conf;
                size_t j;
                for (j = 0; j < n; j++) {
                        const char *cj = c->lines[ret[j]].conf ? c->lines[ret[j]].conf : default_conf;
                        if (same_str(ci, cj))
                                break;
                }
                if (j == n)
                        ret[n++] = i;
        }
        return n;
}

int ag_pamconf_describe(const AgPamLine *l, char **ret) {
        char *s = NULL, *svc = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&svc, &len);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < l->n_services; i++)
                fprintf(f, "%s%s", i ? ", " : "", l->services[i]);
        if (fclose(f) != 0) {
                free(svc);
                return -ENOMEM;
        }
        if (asprintf(&s, "%s:%u%s%s%s", l->file, l->line, len ? " (services: " : "", len ? svc : "",
                     len ? ")" : "") < 0) {
                free(svc);
                return -ENOMEM;
        }
        free(svc);
        *ret = s;
        return 0;
}

int ag_pamconf_options(const AgPamLine *l, const char *default_conf, char **ret) {
        char *s = NULL;

        assert(l);

        if (asprintf(&s, "root=%s conf=%s mode=%s delegate=%s acctlog=%s%s%s%s", l->root ? l->root : AG_ROOT_DEFAULT,
                     l->conf ? l->conf : default_conf, l->mode ? l->mode : "auto",
                     l->delegate ? l->delegate : "no", l->acctlog ? l->acctlog : "info", l->debug ? " debug" : "",
                     l->noaudit ? " noaudit" : "", l->strict ? " strict" : "") < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* ---- the stacks' problems ---- */

typedef enum PairKind {
        PAIR_ROOTS,                    /* two module lines, different root= */
        PAIR_ORDER,                    /* a module line before pam_systemd.so */
} PairKind;

/* One problem: a pair of lines, and the services whose stacks have it. */
typedef struct Pair {
        PairKind kind;
        size_t a, b;                   /* PAIR_ROOTS: lines[a] before lines[b]; PAIR_ORDER: lines[a], systemd_lines[b] */
        const char *services[SERVICES_NAMED_MAX];
        size_t n_services;
        const char *last;              /* the service that added it last */
} Pair;

typedef struct Pairs {
        Pair *v;
        size_t n;
} Pairs;

static int pair_add(Pairs *p, PairKind kind, size_t a, size_t b, const char *service) {
        Pair *x = NULL, *v;

        for (size_t i = 0; i < p->n && !x; i++)
                if (p->v[i].kind == kind && p->v[i].a == a && p->v[i].b == b)
                        x = &p->v[i];
        if (!x) {
                v = realloc(p->v, (p->n + 1) * sizeof *v);
                if (!v)
                        return -ENOMEM;
                p->v = v;
                x = &v[p->n++];
                *x = (Pair) { .kind = kind, .a = a, .b = b };
        }
        /* the same service twice (a file included twice) counts once: the
         * stacks come one after the other */
        if (x->last == service)
                return 0;
        x->last = service;
        if (x->n_services < SERVICES_NAMED_MAX)
                x->services[x->n_services] = service;
        x->n_services++;
        return 0;
}

/* Does the line run in the cgroupfs mode on a host booted with systemd
 * whose cpu is on cgroup v1? mode=auto and mode=cgroupfs do. */
static bool cgroupfs_there(const AgPamLine *l) {
        return !l->mode || strcmp(l->mode, "systemd") != 0;
}

static int stack_pairs(const AgPamConf *c, const AgPamStack *s, const AgPamHostFacts *f, Pairs *p) {
        bool order = f && f->systemd_booted && f->cpu_v1;
        int r;

        for (size_t i = 0; i < s->n_entries; i++) {
                const AgPamStackEntry *e = &s->entries[i];
                const AgPamLine *l;
                bool later_systemd = false;

                if (e->systemd)
                        continue;
                l = &c->lines[e->index];
                for (size_t j = i + 1; j < s->n_entries; j++) {
                        const AgPamStackEntry *g = &s->entries[j];

                        if (g->systemd) {
                                /* the first pam_systemd after the line */
                                if (order && !later_systemd && cgroupfs_there(l)) {
                                        r = pair_add(p, PAIR_ORDER, e->index, g->index, s->service);
                                        if (r < 0)
                                                return r;
                                }
                                later_systemd = true;
                                continue;
                        }
                        if (g->index == e->index || same_str(l->root, c->lines[g->index].root))
                                continue;
                        r = pair_add(p, PAIR_ROOTS, e->index, g->index, s->service);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* "a, b, c" or "a, b, ... (N services)" */
static void services_text(const Pair *x, char *buf, size_t size) {
        size_t o = 0, shown = x->n_services < SERVICES_NAMED_MAX ? x->n_services : SERVICES_NAMED_MAX;

        buf[0] = 0;
        for (size_t i = 0; i < shown && o < size; i++) {
                int k = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", x->services[i]);
                if (k < 0)
                        break;
                o += (size_t) k;
        }
        if (x->n_services > shown && o < size)
                snprintf(buf + o, size - o, " and %zu more", x->n_services - shown);
}

static void pair_say(const AgPamConf *c, const Pair *x, ag_pamconf_warn_fn warn, void *userdata) {
        char services[512], msg[2048];
        const AgPamLine *a = &c->lines[x->a];

        services_text(x, services, sizeof services);
        if (x->kind == PAIR_ROOTS) {
                const AgPamLine *b = &c->lines[x->b];

                snprintf(msg, sizeof msg, "the stack of %s reaches %s:%u (root=%s) before this line (root=%s): "
                         "the earlier line groups the login and this one steps aside, so its root= is not used "
                         "there; give every line a stack reaches the same root=", services, a->file, a->line,
                         a->root ? a->root : "?", b->root ? b->root : "?");
                warn(userdata, b->file, b->line, msg);
                return;
        }
        const AgPamRef *s = &c->systemd_lines[x->b];
        snprintf(msg, sizeof msg, "comes before %s at %s:%u in the stack of %s: on this host (booted with systemd, "
                 "cpu on cgroup v1) logind's session scope then moves every login out of its group; put "
                 "pam_autogroup after pam_systemd", SYSTEMD_MODULE_NAME, s->file, s->line, services);
        warn(userdata, a->file, a->line, msg);
}

int ag_pamconf_check_stacks(const AgPamConf *c, const AgPamHostFacts *facts, ag_pamconf_warn_fn warn,
                            void *userdata) {
        Pairs p = {};
        int r = 0;

        assert(c);

        for (size_t i = 0; i < c->n_stacks && r >= 0; i++)
                r = stack_pairs(c, &c->stacks[i], facts, &p);
        if (r >= 0) {
                for (size_t i = 0; i < p.n; i++)
                        if (warn)
                                pair_say(c, &p.v[i], warn, userdata);
                r = p.n > INT_MAX ? INT_MAX : (int) p.n;
        }
        free(p.v);
        return r;
}
