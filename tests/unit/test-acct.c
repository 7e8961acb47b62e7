/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: reading CPU time from cgroup files (in a plain temp directory
 * standing in for a group) and the fields of the close line. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "acct.h"
#include "util.h"

static int make_dir(char *tmpl) {
        assert_non_null(mkdtemp(tmpl));
        int fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        return fd;
}

static void put(int dirfd, const char *name, const char *text) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static void cleanup_dir(int fd, const char *path, const char *const *names) {
        for (; *names; names++)
                (void) unlinkat(fd, *names, 0);
        close(fd);
        rmdir(path);
}

static void test_v2_cpu_stat(void **state) {
        char dir[] = "/tmp/agacct-unit.XXXXXX";
        int fd = make_dir(dir);
        AgCpuUsage u = { 7, 7, 7 };

        (void) state;
        put(fd, "cpu.stat", "usage_usec 1018857\nuser_usec 1000000\nsystem_usec 18857\n"
                            "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
        assert_int_equal(ag_acct_read_group(2, fd, &u), 0);
        assert_int_equal(u.usec, 1018857);
        assert_int_equal(u.user_usec, 1000000);
        assert_int_equal(u.system_usec, 18857);
        /* only usage_usec (the base stat without the cpu controller is the same) */
        put(fd, "cpu.stat", "usage_usec 42\n");
        assert_int_equal(ag_acct_read_group(2, fd, &u), 0);
        assert_int_equal(u.usec, 42);
        assert_int_equal(u.user_usec, -1);
        assert_int_equal(u.system_usec, -1);
        /* a key that only ends like usage_usec is not it */
        put(fd, "cpu.stat", "xusage_usec 5\n");
        u = (AgCpuUsage) { 7, 7, 7 };
        assert_int_equal(ag_acct_read_group(2, fd, &u), -ENOENT);
        assert_int_equal(u.usec, 7);     /* untouched on failure */
        put(fd, "cpu.stat", "usage_usec -5\n");
        assert_true(ag_acct_read_group(2, fd, &u) < 0);
        cleanup_dir(fd, dir, (const char *const[]) { "cpu.stat", NULL });
}

static void test_v1_cpuacct(void **state) {
        char dir[] = "/tmp/agacct-unit.XXXXXX";
        int fd = make_dir(dir);
        long hz = sysconf(_SC_CLK_TCK);
        AgCpuUsage u;

        (void) state;
        put(fd, "cpuacct.usage", "1018857123\n");
        put(fd, "cpuacct.stat", "user 100\nsystem 3\n");
        assert_int_equal(ag_acct_read_group(1, fd, &u), 0);
        assert_int_equal(u.usec, 1018857);
        assert_int_equal(u.user_usec, 100 * (1000000 / hz));
        assert_int_equal(u.system_usec, 3 * (1000000 / hz));
        /* no cpuacct.stat: the total alone */
        (void) unlinkat(fd, "cpuacct.stat", 0);
        assert_int_equal(ag_acct_read_group(1, fd, &u), 0);
        assert_int_equal(u.usec, 1018857);
        assert_int_equal(u.user_usec, -1);
        put(fd, "cpuacct.usage", "12x\n");
        assert_int_equal(ag_acct_read_group(1, fd, &u), -EINVAL);
        (void) unlinkat(fd, "cpuacct.usage", 0);
        assert_int_equal(ag_acct_read_group(1, fd, &u), -ENOENT);
        cleanup_dir(fd, dir, (const char *const[]) { "cpuacct.usage", "cpuacct.stat", NULL });
}

static void test_format(void **state) {
        char buf[200];
        AgCpuUsage u = { 1234567, 1000000, 234567 };

        (void) state;
        assert_int_equal(ag_acct_format(&u, 5000000, buf, sizeof buf), 0);
        assert_string_equal(buf, "cpu_usec=1234567 user_usec=1000000 system_usec=234567 wall_usec=5000000");
        u.user_usec = u.system_usec = -1;
        assert_int_equal(ag_acct_format(&u, 0, buf, sizeof buf), 0);
        assert_string_equal(buf, "cpu_usec=1234567 user_usec=? system_usec=? wall_usec=0");
        assert_int_equal(ag_acct_format(NULL, -1, buf, sizeof buf), 0);
        assert_string_equal(buf, "cpu_usec=? user_usec=? system_usec=? wall_usec=?");
        assert_int_equal(ag_acct_format(&u, 1, buf, 10), -ENOBUFS);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_v2_cpu_stat),
                cmocka_unit_test(test_v1_cpuacct),
                cmocka_unit_test(test_format),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
