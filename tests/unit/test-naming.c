/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: the names and paths of the layout (lib/cgroup/place.c), mountinfo
 * parsing, number parsing. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup.h"
#include "place.h"
#include "session.h"
#include "util.h"
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
        assert_int_not_equal(ag_user_group_parse("user-00", &uid), 0);
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

/* the module's nested-login check: which session a cgroup path is in */
static void test_session_of_path(void **state) {
        const char *sn = NULL;
        size_t len = 0;
        uid_t uid = 7;

        (void) state;
        assert_int_equal(ag_session_of_path("/autogroup/user-1000/s5/sid-77", "autogroup", &uid, &sn, &len), 0);
        assert_int_equal(uid, 1000);
        assert_int_equal(len, 2);
        assert_memory_equal(sn, "s5", 2);
        assert_int_equal(ag_session_of_path("/autogroup/pool-gpu/user-0/s9-1/login", "autogroup", &uid, &sn, &len), 0);
        assert_int_equal(uid, 0);
        assert_int_equal(len, 4);
        uid = 7;
        /* not inside a session: the user group itself, another root, a look-alike */
        assert_int_equal(ag_session_of_path("/autogroup/user-1000", "autogroup", &uid, NULL, NULL), -ENOENT);
        assert_int_equal(ag_session_of_path("/autogroup/user-1000/", "autogroup", &uid, NULL, NULL), -ENOENT);
        assert_int_equal(ag_session_of_path("/autogroupx/user-1000/s5", "autogroup", &uid, NULL, NULL), -ENOENT);
        assert_int_equal(ag_session_of_path("/other/autogroup/user-1000/s5", "autogroup", &uid, NULL, NULL), -ENOENT);
        assert_int_equal(ag_session_of_path("/autogroup/pool-a/pool-b/user-1/s5", "autogroup", &uid, NULL, NULL),
                         -ENOENT);
        assert_int_equal(ag_session_of_path("/autogroup/s5/user-1/x", "autogroup", &uid, NULL, NULL), -ENOENT);
        assert_int_equal(ag_session_of_path("/", "autogroup", &uid, NULL, NULL), -ENOENT);
        assert_int_equal(uid, 7);

        assert_true(ag_session_name_matches_audit("s5", 2, 5));
        assert_true(ag_session_name_matches_audit("s5-2", 4, 5));
        assert_false(ag_session_name_matches_audit("s55", 3, 5));
        assert_false(ag_session_name_matches_audit("s5", 2, 6));
        assert_false(ag_session_name_matches_audit("p123", 4, 5));
        assert_true(ag_session_name_matches_audit("p123", 4, AG_AUDIT_SESSION_UNSET));
}

/* helper/enter.c's use of the same parser: a session of one uid, cut into
 * its parts in place */
static void test_session_path_split(void **state) {
        char *session = NULL, *rest = NULL, *pool = (char *) "x";
        char p1[] = "/autogroup/user-1000/s5/sid-77/x";
        char p2[] = "/autogroup/pool-gpu/user-1000/s9-1";
        char p3[] = "/autogroup/user-1000/s5/";

        (void) state;
        assert_int_equal(ag_session_path_split(p1, "autogroup", 1000, &session, &rest, &pool), 0);
        assert_string_equal(session, "s5");
        assert_string_equal(rest, "sid-77/x");
        assert_null(pool);
        assert_int_equal(ag_session_path_split(p2, "autogroup", 1000, &session, &rest, &pool), 0);
        assert_string_equal(session, "s9-1");
        assert_string_equal(rest, "");
        assert_string_equal(pool, "gpu");
        assert_int_equal(ag_session_path_split(p3, "autogroup", 1000, &session, &rest, NULL), 0);
        assert_string_equal(session, "s5");
        assert_string_equal(rest, "");

        /* another user's session, no session, odd components, a bad pool */
        static const char *const bad[] = {
                "/autogroup/user-1001/s5",
                "/autogroup/user-1000",
                "/autogroup/user-1000/",
                "/autogroup/user-1000/./x",
                "/autogroup/user-1000/../x",
                "/autogroup/user-01000/s5",
                "/autogroup/pool-/user-1000/s5",
                "/autogroup/pool-a/pool-b/user-1000/s5",
                "/autogroup//user-1000/s5",
                "/other/user-1000/s5",
                "autogroup/user-1000/s5",
                "",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                char buf[128];

                session = rest = (char *) "untouched";
                snprintf(buf, sizeof buf, "%s", bad[i]);
                assert_int_equal(ag_session_path_split(buf, "autogroup", 1000, &session, &rest, NULL), -ENOENT);
                assert_string_equal(session, "untouched");
                assert_string_equal(rest, "untouched");
        }
}

/* PAM_TTY: a terminal is an X display or a character device below /dev */
static void test_tty_is_terminal(void **state) {
        (void) state;
        assert_true(ag_tty_is_terminal("/dev/tty"));
        assert_true(ag_tty_is_terminal("tty"));
        assert_true(ag_tty_is_terminal("/dev/null"));   /* a character device: the client's word */
        assert_true(ag_tty_is_terminal(":0"));
        assert_true(ag_tty_is_terminal(":1.0"));
        assert_false(ag_tty_is_terminal(NULL));
        assert_false(ag_tty_is_terminal(""));
        assert_true(ag_tty_is_terminal("ssh"));         /* sshd, before it knows of a pty */
        assert_false(ag_tty_is_terminal("ftp"));
        assert_false(ag_tty_is_terminal("cron"));
        assert_false(ag_tty_is_terminal("/dev/"));
        assert_false(ag_tty_is_terminal("/dev/pts"));   /* a directory */
        assert_false(ag_tty_is_terminal("../dev/tty"));
        assert_false(ag_tty_is_terminal("/dev/../dev/tty"));
        assert_false(ag_tty_is_terminal("pts/.."));
        assert_false(ag_tty_is_terminal("/etc/passwd"));
        assert_false(ag_tty_is_terminal("//dev/tty"));
        assert_false(ag_tty_is_terminal("/dev/stdin")); /* a symbolic link: not followed */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_session_name),
                cmocka_unit_test(test_user_group),
                cmocka_unit_test(test_root_name),
                cmocka_unit_test(test_safe_atoul),
                cmocka_unit_test(test_mountinfo),
                cmocka_unit_test(test_session_of_path),
                cmocka_unit_test(test_session_path_split),
                cmocka_unit_test(test_tty_is_terminal),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
