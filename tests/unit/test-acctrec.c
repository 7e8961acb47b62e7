/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: the accounting record of a session's end (lib/cgroup/acct.h), the one
 * format every writer uses: its keys in order, percent-encoded values, the
 * marks of none and unknown, the scopes (session, user, lane). */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "acct.h"

static void test_record(void **state) {
        AgCpuUsage u = { 1018857, 1000000, 10000 };
        AgAcctRecord r = { .cgroup = "/autogroup/user-1000/s42", .state = "closed", .user = "alice", .uid = 1000,
                           .by = "close", .usage = &u, .wall_usec = 2692585 };
        char buf[1024];

        (void) state;
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_string_equal(buf, "session /autogroup/user-1000/s42 closed: user=alice scope=session cpu_usec=1018857 "
                                 "user_usec=1000000 system_usec=10000 wall_usec=2692585 uid=1000 state=closed "
                                 "cgroup=/autogroup/user-1000/s42 pool=- by=close");
        /* sessions no, a pool, figures unknown */
        r = (AgAcctRecord) { .cgroup = "/autogroup/pool-physics/user-7", .state = "lingering", .user = "bob",
                             .uid = 7, .scope = AG_ACCT_SCOPE_USER, .by = "close", .wall_usec = -1 };
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_string_equal(buf, "session /autogroup/pool-physics/user-7 lingering: user=bob scope=user cpu_usec=? "
                                 "user_usec=? system_usec=? wall_usec=? uid=7 state=lingering "
                                 "cgroup=/autogroup/pool-physics/user-7 pool=physics by=close");
        /* the latency lane's, when it goes: its first word, scope lane, no pool */
        u = (AgCpuUsage) { 2500000, 2400000, 100000 };
        r = (AgAcctRecord) { .cgroup = "/autogroup.lane-1000", .state = "removed", .user = "alice", .uid = 1000,
                             .scope = AG_ACCT_SCOPE_LANE, .by = "sweep", .usage = &u, .wall_usec = -1 };
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_string_equal(buf, "lane /autogroup.lane-1000 removed: user=alice scope=lane cpu_usec=2500000 "
                                 "user_usec=2400000 system_usec=100000 wall_usec=? uid=1000 state=removed "
                                 "cgroup=/autogroup.lane-1000 pool=- by=sweep");
        /* no other scope */
        r.scope = (AgAcctScope) 3;
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), -EINVAL);
        /* the pool is the path's: a session in one; a pool-like name deeper down is no pool */
        r = (AgAcctRecord) { .cgroup = "/ag/pool-a_b/user-7/s1", .state = "removed", .uid = 7, .by = "gc",
                             .wall_usec = -1 };
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_non_null(strstr(buf, " pool=a_b by=gc"));
        r.cgroup = "/ag/user-7/pool-x";
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_non_null(strstr(buf, " pool=- by=gc"));
}

static void test_escaping(void **state) {
        AgAcctRecord r = { .cgroup = "/a/user-5/s 1", .state = "closed", .user = "Bob Smith=x\"%\n\xc3\xa9",
                           .uid = 5, .by = "gc", .wall_usec = 3 };
        char buf[1024];

        (void) state;
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_non_null(strstr(buf, " user=Bob%20Smith%3Dx%22%25%0A%C3%A9 "));
        assert_non_null(strstr(buf, " cgroup=/a/user-5/s%201 "));
        /* one line, no quote, every pair one word */
        assert_null(strchr(buf, '\n'));
        assert_null(strchr(buf, '"'));
        /* a name that is the mark of none or unknown is told apart from it */
        r.user = "-";
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_non_null(strstr(buf, " user=%2D "));
        r.user = NULL;
        assert_int_equal(ag_acct_record_format(&r, buf, sizeof buf), 0);
        assert_non_null(strstr(buf, " user=- "));
        /* too small a buffer: an error, not a cut record */
        assert_int_equal(ag_acct_record_format(&r, buf, 40), -ENOBUFS);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_record),
                cmocka_unit_test(test_escaping),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
