/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: session and user group naming, mountinfo parsing, number parsing. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup.h"
#include "session.h"
#include "util.h"

static void test_session_name(void **state) {
        char buf[64];

        assert_int_equal(ag_session_name(42, 1234, 0, buf, sizeof buf), 0);
        assert_string_equal(buf, "s42");
        assert_int_equal(ag_session_name(42, 1234, 3, buf, sizeof buf), 0);
        assert_string_equal(buf, "s42-3");
        assert_int_equal(ag_session_name(AG_AUDIT_SESSION_UNSET, 1234, 0, buf, sizeof buf), 0);
        assert_string_equal(buf, "p1234");
        assert_int_equal(ag_session_name(AG_AUDIT_SESSION_UNSET, 1234, 1, buf, sizeof buf), 0);
        assert_string_equal(buf, "p1234-1");
        assert_int_equal(ag_session_name(AG_AUDIT_SESSION_UNSET, 0, 0, buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_session_name(4294967294UL, 1, 0, buf, 4), -ENOBUFS);
        /* never the name of the login leaf, and never a user group */
        assert_int_equal(ag_session_name(7, 1, 0, buf, sizeof buf), 0);
        assert_string_not_equal(buf, AG_LOGIN_LEAF);
        uid_t uid;
        assert_int_not_equal(ag_user_group_parse(buf, &uid), 0);
}

static void test_user_group(void **state) {
        char buf[32];
        uid_t uid = 0;

        assert_int_equal(ag_user_group_name(1000, buf, sizeof buf), 0);
        assert_string_equal(buf, "user-1000");
        assert_int_equal(ag_user_group_parse("user-1000", &uid), 0);
        assert_int_equal(uid, 1000);
        assert_int_equal(ag_user_group_parse("user-0", &uid), 0);
        assert_int_equal(uid, 0);
        uid = 5;
        assert_int_not_equal(ag_user_group_parse("user-", &uid), 0);
        assert_int_not_equal(ag_user_group_parse("user-01", &uid), 0);
        assert_int_not_equal(ag_user_group_parse("user-1x", &uid), 0);
        assert_int_not_equal(ag_user_group_parse("user--1", &uid), 0);
        assert_int_not_equal(ag_user_group_parse("user-4294967295", &uid), 0);
        assert_int_not_equal(ag_user_group_parse("group-1", &uid), 0);
        assert_int_equal(uid, 5);       /* untouched on failure */
        assert_int_equal(ag_user_group_name(1, buf, 6), -ENOBUFS);
}

static void test_root_name(void **state) {
        (void) state;
        assert_true(ag_root_name_valid("autogroup"));
        assert_true(ag_root_name_valid("ag-test_1.2"));
        assert_true(ag_root_name_valid("a"));
        assert_true(ag_root_name_valid("x234567890123456789012345678901234567890123456789012345678901234"));
        assert_false(ag_root_name_valid("x2345678901234567890123456789012345678901234567890123456789012345"));
        assert_false(ag_root_name_valid(""));
        assert_false(ag_root_name_valid(NULL));
        assert_false(ag_root_name_valid(".hidden"));
        assert_false(ag_root_name_valid(".."));
        assert_false(ag_root_name_valid("a/b"));
        assert_false(ag_root_name_valid("a b"));
        assert_false(ag_root_name_valid("caf\xc3\xa9"));
}

static void test_safe_atoul(void **state) {
        unsigned long v = 9;

        assert_int_equal(ag_safe_atoul("0", 10, &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(ag_safe_atoul("10", 10, &v), 0);
        assert_int_equal(v, 10);
        assert_int_equal(ag_safe_atoul("11", 10, &v), -ERANGE);
        assert_int_equal(ag_safe_atoul("", 10, &v), -EINVAL);
        assert_int_equal(ag_safe_atoul("+1", 10, &v), -EINVAL);
        assert_int_equal(ag_safe_atoul(" 1", 10, &v), -EINVAL);
        assert_int_equal(ag_safe_atoul("99999999999999999999999", (unsigned long) -1, &v), -ERANGE);
        assert_int_equal(v, 10);
}

static void test_mountinfo(void **state) {
        char l1[] = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        char l2[] = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n";
        char l3[] = "50 31 0:40 /sub /mnt/with\\040space rw - cgroup2 none rw,nsdelegate\n";
        char l4[] = "garbage without separator";
        char *root, *mp, *fs, *opts;

        assert_int_equal(ag_mountinfo_parse_line(l1, &root, &mp, &fs, &opts), 0);
        assert_string_equal(root, "/");
        assert_string_equal(mp, "/sys/fs/cgroup/unified");
        assert_string_equal(fs, "cgroup2");
        assert_string_equal(opts, "rw");
        assert_int_equal(ag_mountinfo_parse_line(l2, &root, &mp, &fs, &opts), 0);
        assert_string_equal(mp, "/sys/fs/cgroup/cpu,cpuacct");
        assert_string_equal(fs, "cgroup");
        assert_string_equal(opts, "rw,cpu,cpuacct");
        assert_int_equal(ag_mountinfo_parse_line(l3, &root, &mp, &fs, &opts), 0);
        assert_string_equal(root, "/sub");
        assert_string_equal(mp, "/mnt/with space");
        assert_string_equal(opts, "rw,nsdelegate");
        assert_int_equal(ag_mountinfo_parse_line(l4, &root, &mp, &fs, &opts), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_session_name),
                cmocka_unit_test(test_user_group),
                cmocka_unit_test(test_root_name),
                cmocka_unit_test(test_safe_atoul),
                cmocka_unit_test(test_mountinfo),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
