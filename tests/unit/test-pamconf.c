/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: finding the module's lines and options in a pam.d directory
 * (fixture directories made in /tmp), following include, substack and
 * @include, with loops and depth bounded. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "pamconf.h"
#include "session.h"
#include "util.h"
#include "unit-util.h"

typedef struct Fixture {
        char dir[64];
} Fixture;

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof *f);

        assert_non_null(f);
        assert_true(tmpdir_make(f->dir, sizeof f->dir, "/tmp/agpamconf-unit.XXXXXX"));
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;
        char cmd[128];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

/* warnings collected as "file:line: message" lines */
typedef struct Warnings {
        char text[8192];
        unsigned n;
} Warnings;

static void collect(void *userdata, const char *file, unsigned line, const char *message) {
        Warnings *w = userdata;
        const char *b = file ? strrchr(file, '/') : NULL;
        size_t len = strlen(w->text);

        snprintf(w->text + len, sizeof w->text - len, "%s:%u: %s\n", b ? b + 1 : (file ? file : "-"), line,
                 message);
        w->n++;
}

static const AgPamLine *find_line(const AgPamConf *c, const char *file, unsigned line) {
        for (size_t i = 0; i < c->n_lines; i++) {
                const char *b = strrchr(c->lines[i].file, '/');
                if (strcmp(b ? b + 1 : c->lines[i].file, file) == 0 && c->lines[i].line == line)
                        return &c->lines[i];
        }
        return NULL;
}

/* the module line at file:line, which must be there */
static const AgPamLine *line_at(const AgPamConf *c, const char *file, unsigned line) {
        const AgPamLine *l = find_line(c, file, line);

        assert_non_null(l);
        return l;
}

/* each text given, up to a NULL, is in one of the warnings */
static void assert_warned(const Warnings *w, ...) {
        va_list ap;
        const char *text;

        va_start(ap, w);
        while ((text = va_arg(ap, const char *)))
                assert_non_null(strstr(w->text, text));
        va_end(ap);
}

static bool has_service(const AgPamLine *l, const char *s) {
        for (size_t i = 0; i < l->n_services; i++)
                if (strcmp(l->services[i], s) == 0)
                        return true;
        return false;
}

/* Debian 12's shape: the line in common-session, reached by @include from
 * sshd, login, su, sudo-i; cron and sudo use common-session-noninteractive;
 * runuser includes neither. */
static void test_debian_layout(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};

        put_file(f->dir, "common-session", "# /etc/pam.d/common-session\n"
                                 "session [default=1]\t\t\tpam_permit.so\n"
                                 "session requisite\t\t\tpam_deny.so\n"
                                 "session required\t\t\tpam_permit.so\n"
                                 "session optional pam_autogroup.so root=web conf=/etc/ag/web.conf debug\n"
                                 "session required pam_unix.so\n");
        put_files(f->dir,
                  "common-session-noninteractive", "session required pam_unix.so\n",
                  "sshd", "@include common-auth\n@include common-session\nsession optional pam_motd.so\n",
                  "login", "session required pam_loginuid.so\n@include common-session\n",
                  "su", "auth sufficient pam_rootok.so\n@include common-session\n",
                  "sudo-i", "@include common-session\n",
                  "sudo", "@include common-session-noninteractive\n",
                  "cron", "@include common-session-noninteractive\n",
                  "runuser", "session include system-session-that-is-missing\nsession optional pam_keyinit.so\n",
                  "common-auth", "auth required pam_unix.so\n",
                  NULL);

        assert_int_equal(ag_pamconf_scan(f->dir, collect, &w, &c), 0);
        assert_non_null(c);
        assert_int_equal(c->n_lines, 1);
        const AgPamLine *l = line_at(c, "common-session", 5);
        assert_string_equal(l->root, "web");
        assert_true(l->root_given);
        assert_string_equal(l->conf, "/etc/ag/web.conf");
        assert_null(l->mode);
        assert_true(l->debug);
        assert_false(l->strict);
        for (const char *const *s = (const char *const[]) { "sshd", "login", "su", "sudo-i", NULL }; *s; s++)
                assert_true(has_service(l, *s));
        assert_false(has_service(l, "cron"));
        assert_false(has_service(l, "sudo"));
        assert_false(has_service(l, "runuser"));
        /* the missing include is named with the line that asked for it */
        assert_non_null(strstr(w.text, "runuser:1: cannot read included"));

        char *d = NULL;
        assert_int_equal(ag_pamconf_describe(l, &d), 0);
        assert_non_null(strstr(d, "/common-session:5 (services: "));
        assert_non_null(strstr(d, "sshd"));
        free(d);
        ag_pamconf_free(c);
}

/* Several lines with different options: each one, its distinct roots and confs. */
static void test_several_lines(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        size_t idx[8];

        put_files(f->dir,
                  "sshd", "session optional pam_autogroup.so root=ssh\n",
                  "login", "session optional pam_autogroup.so\n",
                  "su", "session optional /usr/lib/x86_64-linux-gnu/security/pam_autogroup.so conf=/etc/su.conf\n",
                  "other", "session optional pam_autogroup.so root=ssh conf=/etc/su.conf mode=cgroupfs\n",
                  NULL);

        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(c->n_lines, 4);
        size_t n = ag_pamconf_distinct_roots(c, idx);
        assert_int_equal(n, 2);
        bool seen_default = false, seen_ssh = false;
        for (size_t i = 0; i < n; i++) {
                seen_default |= strcmp(c->lines[idx[i]].root, AG_ROOT_DEFAULT) == 0;
                seen_ssh |= strcmp(c->lines[idx[i]].root, "ssh") == 0;
        }
        assert_true(seen_default && seen_ssh);
        n = ag_pamconf_distinct_confs(c, "/etc/security/autogroup.conf", idx);
        assert_int_equal(n, 2);
        const AgPamLine *l = line_at(c, "other", 1);
        assert_string_equal(l->mode, "cgroupfs");
        assert_false(find_line(c, "login", 1)->root_given);
        ag_pamconf_free(c);
}

/* include and substack only for the session type; @include for every type */
static void test_types(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;

        put_files(f->dir,
                  "inc-a", "session optional pam_autogroup.so root=a\n",
                  "inc-b", "session optional pam_autogroup.so root=b\n",
                  "svc1", "auth include inc-a\naccount substack inc-a\n-session   substack inc-b\n",
                  "svc2", "SESSION Include inc-a\n",
                  "svc3", "password include inc-b\nauth optional pam_autogroup.so root=c\n",
                  NULL);

        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(c->n_lines, 2);
        const AgPamLine *a = line_at(c, "inc-a", 1), *b = line_at(c, "inc-b", 1);
        assert_false(has_service(a, "svc1"));
        assert_true(has_service(a, "svc2"));
        assert_true(has_service(b, "svc1"));
        assert_false(has_service(b, "svc3"));
        ag_pamconf_free(c);
}

/* an include loop ends with a warning; a chain deeper than the bound too */
static void test_loop_and_depth(void **state) {
        char name[32], text[128];
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};

        put_files(f->dir,
                  "loop-a", "session include loop-b\nsession optional pam_autogroup.so root=la\n",
                  "loop-b", "@include loop-a\n",
                  "self", "@include self\n",
                  NULL);
        for (int i = 0; i < AG_PAMCONF_MAX_DEPTH + 3; i++) {
                snprintf(name, sizeof name, "chain%02d", i);
                snprintf(text, sizeof text, "@include chain%02d\n", i + 1);
                put_file(f->dir, name, text);
        }
        snprintf(name, sizeof name, "chain%02d", AG_PAMCONF_MAX_DEPTH + 3);
        put_file(f->dir, name, "session optional pam_autogroup.so root=deep\n");

        assert_int_equal(ag_pamconf_scan(f->dir, collect, &w, &c), 0);
        assert_warned(&w, "makes a loop", "self:1: include of", "nested deeper than", NULL);
        const AgPamLine *l = line_at(c, "loop-a", 2);
        assert_true(has_service(l, "loop-a"));
        assert_true(has_service(l, "loop-b"));
        /* the deep line is found from the services near it, not from chain00 */
        l = line_at(c, name, 1);
        assert_false(has_service(l, "chain00"));
        assert_true(has_service(l, name));
        ag_pamconf_free(c);
}

/* option words as the module parses them; libpam's [...] and \ continuation */
static void test_options(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};

        put_file(f->dir, "svc", "# session optional pam_autogroup.so root=commented\n"
                      "session optional pam_autogroup.so.bak root=not-the-module\n"
                      "session [success=ok default=ignore] pam_autogroup.so root=../etc mode=bogus \\\n"
                      "    delegate=yes acctlog=debug frobnicate noaudit strict\n"
                      "session optional pam_autogroup.so [conf=/etc/with space.conf] delegate=maybe acctlog=loud"
                      " # a comment root=x\n");
        assert_int_equal(ag_pamconf_scan(f->dir, collect, &w, &c), 0);
        assert_int_equal(c->n_lines, 2);
        const AgPamLine *l = line_at(c, "svc", 3);
        assert_string_equal(l->root, AG_ROOT_DEFAULT);
        assert_false(l->root_given);
        assert_null(l->mode);
        assert_string_equal(l->delegate, "yes");
        assert_string_equal(l->acctlog, "debug");
        assert_true(l->noaudit);
        assert_true(l->strict);
        assert_int_equal(l->n_problems, 3);
        assert_warned(&w, "svc:3: invalid root name '../etc'", "svc:3: invalid mode 'bogus'",
                      "svc:3: unknown option 'frobnicate'", NULL);
        l = line_at(c, "svc", 5);
        assert_string_equal(l->conf, "/etc/with space.conf");
        assert_null(l->delegate);
        assert_null(l->acctlog);
        assert_string_equal(l->root, AG_ROOT_DEFAULT);
        assert_warned(&w, "svc:5: invalid delegate 'maybe'", "svc:5: invalid acctlog 'loud'", NULL);
        assert_null(strstr(w.text, "root=x"));
        ag_pamconf_free(c);
}

/* what is not a service: backups, hidden files, FIFOs (read without hanging),
 * directories; an absolute include; the errors of the directory itself */
static void test_files(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};
        char path[256], text[300];

        put_files(f->dir,
                  "sshd.dpkg-old", "session optional pam_autogroup.so root=old\n",
                  ".hidden", "session optional pam_autogroup.so root=hidden\n",
                  "sshd~", "session optional pam_autogroup.so root=backup\n",
                  NULL);
        snprintf(path, sizeof path, "%s/fifo", f->dir);
        assert_int_equal(mkfifo(path, 0600), 0);
        snprintf(path, sizeof path, "%s/subdir", f->dir);
        assert_int_equal(mkdir(path, 0700), 0);
        put_file(f->dir, "subdir/x", "session optional pam_autogroup.so root=subdir\n");
        snprintf(text, sizeof text, "session include %s/subdir/x\nsession include fifo\n", f->dir);
        put_file(f->dir, "abs", text);

        assert_int_equal(ag_pamconf_scan(f->dir, collect, &w, &c), 0);
        assert_int_equal(c->n_lines, 1);
        assert_string_equal(c->lines[0].root, "subdir");
        assert_true(has_service(&c->lines[0], "abs"));
        assert_non_null(strstr(w.text, "fifo:0: not a regular file"));
        ag_pamconf_free(c);

        snprintf(path, sizeof path, "%s/none", f->dir);
        c = NULL;
        assert_int_equal(ag_pamconf_scan(path, NULL, NULL, &c), -ENOENT);
        assert_null(c);
        snprintf(path, sizeof path, "%s/abs", f->dir);
        assert_int_equal(ag_pamconf_scan(path, NULL, NULL, &c), -ENOTDIR);
        assert_null(c);
}

/* no module line anywhere: an empty result, not an error */
static void test_empty(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        size_t idx[1];

        put_file(f->dir, "other", "auth required pam_deny.so\nsession required pam_deny.so\n");
        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(c->n_lines, 0);
        assert_int_equal(ag_pamconf_distinct_roots(c, idx), 0);
        ag_pamconf_free(c);
}

/* ag_read_all's buffer ends in a NUL right after the data, whatever the
 * heap held there before (the chunk is dirtied and freed first, so malloc
 * hands the same bytes back), at a size that fills the first buffer and at
 * one that needs a larger one; more than max is -EFBIG. */
static void test_read_all_terminated(void **state) {
        Fixture *f = *state;
        static const size_t sizes[] = { 50, 99, 100, 150, 200 };

        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                char path[256], data[256], *junk, *buf = NULL;
                size_t size = 0;
                int fd;

                memset(data, 'a', sizes[k]);
                data[sizes[k]] = 0;
                put_file(f->dir, "blob", data);
                snprintf(path, sizeof path, "%s/blob", f->dir);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                junk = malloc(100);
                assert_non_null(junk);
                memset(junk, 'x', 100);
                free(junk);
                assert_int_equal(ag_read_all(fd, 99, 200, &buf, &size), 0);
                assert_int_equal(size, sizes[k]);
                assert_int_equal(buf[size], 0);
                assert_int_equal(strlen(buf), sizes[k]);
                free(buf);
                assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
                buf = NULL;
                assert_int_equal(ag_read_all(fd, 99, sizes[k] - 1, &buf, &size), -EFBIG);
                assert_null(buf);
                close(fd);
        }
}

/* libpam's limits: a chain of 16 files (the service's and 15 includes) is
 * followed to its end, the 17th is not; every service of a stack that
 * includes the same common files has its own budget of opens, so the last
 * of many services still reaches the line */
static void test_depth_and_budget(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};
        char name[32], text[128];
        const AgPamLine *l;

        assert_int_equal(AG_PAMCONF_MAX_DEPTH, 16);
        for (int i = 0; i < 16; i++) {
                snprintf(name, sizeof name, "deep%02d", i);
                snprintf(text, sizeof text, "session include deep%02d\n", i + 1);
                put_file(f->dir, name, i == 15 ? "session optional pam_autogroup.so root=sixteen\n"
                                     "session include deep16\n" : text);
        }
        put_file(f->dir, "deep16", "session optional pam_autogroup.so root=seventeen\n");
        /* 40 services x 31 files = 1,240 opens, more than one budget */
        put_file(f->dir, "zz-common", "");
        for (int i = 0; i < 30; i++) {
                snprintf(name, sizeof name, "zz-part%02d", i);
                put_file(f->dir, name, i == 29 ? "session optional pam_autogroup.so root=parts\n" : "session required pam_permit.so\n");
        }
        {
                char common[2048] = "";
                for (int i = 0; i < 30; i++) {
                        snprintf(text, sizeof text, "@include zz-part%02d\n", i);
                        strcat(common, text);
                }
                put_file(f->dir, "zz-common", common);
        }
        for (int i = 0; i < 40; i++) {
                snprintf(name, sizeof name, "zz-svc%02d", i);
                put_file(f->dir, name, "@include zz-common\n");
        }

        assert_int_equal(ag_pamconf_scan(f->dir, collect, &w, &c), 0);
        l = line_at(c, "deep15", 1);
        assert_true(has_service(l, "deep00"));
        l = line_at(c, "deep16", 1);
        assert_false(has_service(l, "deep00"));
        assert_true(has_service(l, "deep01"));
        assert_non_null(strstr(w.text, "deep15:2: include of"));
        l = line_at(c, "zz-part29", 1);
        for (int i = 0; i < 40; i++) {
                snprintf(name, sizeof name, "zz-svc%02d", i);
                if (!has_service(l, name))
                        fail_msg("service %s lost the line; warnings:\n%s", name, w.text);
        }
        assert_null(strstr(w.text, "files read"));
        ag_pamconf_free(c);
}

/* Every module line, each with the services that reach it and its options
 * in effect: Debian's two common files, runuser through the noninteractive
 * one, and sshd with a line of its own and other options. */
static void test_every_line_listed(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        char *d = NULL, *o = NULL;
        const AgPamLine *l;

        put_files(f->dir,
                  "common-session", "session required pam_unix.so\nsession optional pam_autogroup.so root=web\n",
                  "common-session-noninteractive", "session optional pam_autogroup.so root=web\n",
                  "runuser", "session include common-session-noninteractive\n",
                  "login", "@include common-session\n",
                  NULL);
        put_file(f->dir, "sshd", "@include common-session\n"
                       "session optional pam_autogroup.so root=web conf=/etc/ssh.conf debug strict delegate=yes\n");
        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(c->n_lines, 3);

        assert_non_null(l = find_line(c, "common-session", 2));
        assert_int_equal(ag_pamconf_describe(l, &d), 0);
        assert_non_null(strstr(d, "/common-session:2 (services: common-session, login, sshd)"));
        assert_int_equal(ag_pamconf_options(l, "/etc/security/autogroup.conf", &o), 0);
        assert_string_equal(o, "root=web conf=/etc/security/autogroup.conf mode=auto delegate=no acctlog=info");
        free(d);
        free(o);

        assert_non_null(l = find_line(c, "common-session-noninteractive", 1));
        assert_int_equal(ag_pamconf_describe(l, &d), 0);
        assert_non_null(strstr(d, "/common-session-noninteractive:1 (services: common-session-noninteractive, runuser)"));
        free(d);

        assert_non_null(l = find_line(c, "sshd", 2));
        assert_int_equal(ag_pamconf_describe(l, &d), 0);
        assert_non_null(strstr(d, "/sshd:2 (services: sshd)"));
        assert_int_equal(ag_pamconf_options(l, "/etc/security/autogroup.conf", &o), 0);
        assert_string_equal(o, "root=web conf=/etc/ssh.conf mode=auto delegate=yes acctlog=info debug strict");
        free(d);
        free(o);
        ag_pamconf_free(c);
}


/* ---- the stacks' problems ---- */

static const AgPamHostFacts HOST_V1_SYSTEMD = { .systemd_booted = true, .cpu_v1 = true };
static const AgPamHostFacts HOST_V2_SYSTEMD = { .systemd_booted = true, .cpu_v1 = false };
static const AgPamHostFacts HOST_V1_NO_SYSTEMD = { .systemd_booted = false, .cpu_v1 = true };

/* The stacks' warnings for facts, into w (cleared). */
static int stack_warnings(const AgPamConf *c, const AgPamHostFacts *facts, Warnings *w) {
        int n;

        memset(w, 0, sizeof *w);
        n = ag_pamconf_check_stacks(c, facts, collect, w);
        assert_true(n >= 0);
        assert_int_equal((unsigned) n, w->n);
        return n;
}

/* The order of Debian's old profile: the module before pam_systemd in
 * common-session, reached from three services (and common-session itself). */
static void test_order_before_systemd(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};
        char expect[512];

        put_file(f->dir, "common-session", "session [default=1] pam_permit.so\n"
                                 "session requisite pam_deny.so\n"
                                 "session required pam_permit.so\n"
                                 "session optional pam_autogroup.so\n"
                                 "session required pam_unix.so\n"
                                 "-session optional /lib/security/pam_systemd.so\n");
        put_files(f->dir,
                  "sshd", "@include common-session\n",
                  "login", "session include common-session\n",
                  "su", "session substack common-session\n",
                  "cron", "session required pam_unix.so\n",
                  NULL);
        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(c->n_systemd_lines, 1);
        assert_int_equal(c->n_stacks, 4);       /* cron reaches no module line */

        /* systemd with cpu on cgroup v1 (legacy or hybrid): one warning, at
         * the module's line, naming pam_systemd's line, the services and the fix */
        assert_int_equal(stack_warnings(c, &HOST_V1_SYSTEMD, &w), 1);
        snprintf(expect, sizeof expect, "common-session:4: comes before pam_systemd.so at %s/common-session:6 in the "
                 "stack of common-session, login, sshd, su: on this host (booted with systemd, cpu on cgroup v1) "
                 "logind's session scope then moves every login out of its group; put pam_autogroup after "
                 "pam_systemd\n", f->dir);
        assert_string_equal(w.text, expect);
        /* cgroup v2 under systemd: both orders work; without systemd no logind */
        assert_int_equal(stack_warnings(c, &HOST_V2_SYSTEMD, &w), 0);
        assert_int_equal(stack_warnings(c, &HOST_V1_NO_SYSTEMD, &w), 0);
        assert_int_equal(stack_warnings(c, NULL, &w), 0);
        ag_pamconf_free(c);

        /* the module after pam_systemd: nothing on any host */
        put_file(f->dir, "common-session", "session required pam_unix.so\n"
                                 "-session optional pam_systemd.so\n"
                                 "session optional pam_autogroup.so\n");
        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(stack_warnings(c, &HOST_V1_SYSTEMD, &w), 0);
        assert_int_equal(stack_warnings(c, &HOST_V2_SYSTEMD, &w), 0);
        ag_pamconf_free(c);

        /* mode=systemd before pam_systemd: not the cgroupfs mode, not this warning;
         * mode=cgroupfs is */
        put_file(f->dir, "common-session", "session optional pam_autogroup.so mode=systemd\n"
                                 "session optional pam_systemd.so\n");
        put_file(f->dir, "sshd", "session optional pam_autogroup.so mode=cgroupfs\n@include common-session\n");
        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(stack_warnings(c, &HOST_V1_SYSTEMD, &w), 1);
        assert_warned(&w, "sshd:1: comes before pam_systemd.so at ", "/common-session:2 in the stack of sshd:", NULL);
        ag_pamconf_free(c);
}

/* Two module lines with different root= in one stack: the later steps aside. */
static void test_two_roots(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};
        char expect[1024];

        put_files(f->dir,
                  "common-session", "session optional pam_autogroup.so\n",
                  "sshd", "@include common-session\nsession optional pam_autogroup.so root=web\n",
                  "login", "@include common-session\nsession optional pam_autogroup.so root=autogroup debug\n",
                  "su", "session optional pam_autogroup.so root=web\nsession substack su-more\n",
                  "su-more", "session optional pam_autogroup.so root=other\n",
                  NULL);
        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        /* sshd: autogroup, then web; login: the same root twice, nothing to say;
         * su: web, then other (through a substack); su-more alone: one line */
        assert_int_equal(stack_warnings(c, &HOST_V2_SYSTEMD, &w), 2);
        snprintf(expect, sizeof expect, "sshd:2: the stack of sshd reaches %s/common-session:1 (root=autogroup) "
                 "before this line (root=web): the earlier line groups the login and this one steps aside, so its "
                 "root= is not used there; give every line a stack reaches the same root=\n"
                 "su-more:1: the stack of su reaches %s/su:1 (root=web) before this line (root=other): the earlier "
                 "line groups the login and this one steps aside, so its root= is not used there; give every line "
                 "a stack reaches the same root=\n", f->dir, f->dir);
        assert_string_equal(w.text, expect);
        ag_pamconf_free(c);
}

/* One warning per pair of lines, however many services share it: at most
 * a few services named, then how many more. */
static void test_stack_warning_once(void **state) {
        Fixture *f = *state;
        AgPamConf *c = NULL;
        Warnings w = {};
        char name[32];

        put_file(f->dir, "common-session", "session optional pam_autogroup.so\nsession optional pam_systemd.so\n");
        for (int i = 0; i < 9; i++) {
                snprintf(name, sizeof name, "svc%d", i);
                /* included twice: still one service */
                put_file(f->dir, name, "@include common-session\n@include common-session\n");
        }
        assert_int_equal(ag_pamconf_scan(f->dir, NULL, NULL, &c), 0);
        assert_int_equal(stack_warnings(c, &HOST_V1_SYSTEMD, &w), 1);
        assert_non_null(strstr(w.text, "in the stack of common-session, svc0, svc1, svc2, svc3, svc4 and 4 more: "));
        ag_pamconf_free(c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_debian_layout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_several_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_every_line_listed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_types, setup, teardown),
                cmocka_unit_test_setup_teardown(test_loop_and_depth, setup, teardown),
                cmocka_unit_test_setup_teardown(test_options, setup, teardown),
                cmocka_unit_test_setup_teardown(test_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_all_terminated, setup, teardown),
                cmocka_unit_test_setup_teardown(test_depth_and_budget, setup, teardown),
                cmocka_unit_test_setup_teardown(test_order_before_systemd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_two_roots, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stack_warning_once, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
