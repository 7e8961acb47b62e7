/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: a login's lifecycle (lib/login/login.c) where it is pure logic: the
 * mode decided once, what close does in each state, the unit value text.
 * The backends' cgroup work is tested through real libpam and cgroupfs by
 * the host and guest lanes. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "login.h"
#include "unit-util.h"

static void test_mode_decided_once(void **state) {
        AgLogin *l = NULL;

        (void) state;
        assert_int_equal(ag_login_new(AG_MODE_CGROUPFS, &l), 0);
        assert_int_equal(l->mode, AG_MODE_CGROUPFS);
        assert_int_equal(l->state, AG_LOGIN_NEW);
        assert_null(l->hierarchy);              /* an explicit mode looks nothing up */
        l = ag_login_free(l);

        assert_int_equal(ag_login_new(AG_MODE_SYSTEMD, &l), 0);
        assert_int_equal(l->mode, AG_MODE_SYSTEMD);
        assert_null(l->hierarchy);
        l = ag_login_free(l);

        assert_int_equal(ag_login_new(AG_MODE_AUTO, &l), 0);
        assert_true(l->mode == AG_MODE_CGROUPFS || l->mode == AG_MODE_SYSTEMD);
        if (!ag_systemd_booted(NULL)) {
                assert_int_equal(l->mode, AG_MODE_CGROUPFS);
                assert_null(l->hierarchy);      /* one lstat on a host without systemd */
        }
        ag_login_free(l);
}

static void test_close_by_state(void **state) {
        AgLogin *l = NULL;
        AgLoginEnd end;
        AgLoginCloseParams p = { .root = "autogroup", .uid = 4242, .user_known = false };

        (void) state;
        /* nested: nothing to undo, and the end says so */
        assert_int_equal(ag_login_new(AG_MODE_CGROUPFS, &l), 0);
        l->state = AG_LOGIN_NESTED;
        memset(&end, 0x55, sizeof end);
        assert_int_equal(ag_login_close(l, &p, &end), 0);
        assert_false(end.have_usage);
        assert_false(end.lingering);
        assert_int_equal(end.usage.usec, -1);
        /* a login open could not place, of a user open could not find: no sweep */
        l->state = AG_LOGIN_NEW;
        assert_int_equal(ag_login_close(l, &p, NULL), 0);
        assert_null(l->hierarchy);
        /* only a session is watched */
        assert_int_equal(ag_login_watch(l, 10, NULL, NULL), -EINVAL);
        l = ag_login_free(l);

        /* systemd: a login with a logind session leaves the units to systemd;
         * without one, an unknown user's slice is not looked for */
        assert_int_equal(ag_login_new(AG_MODE_SYSTEMD, &l), 0);
        p.logind_session = true;
        assert_int_equal(ag_login_close(l, &p, NULL), 0);
        p.logind_session = false;
        assert_int_equal(ag_login_close(l, &p, NULL), -ENOENT);
        ag_login_free(l);
}

static void test_systemd_open_without_systemd(void **state) {
        AgLogin *l = NULL;
        AgPolicy policy;
        AgLoginFailure f = { .step = AG_STEP_NONE };
        AgLoginParams p = { .root = "autogroup", .uid = 4242, .policy = &policy, .pool_policy = &policy,
                            .logind_session = true };

        (void) state;
        if (ag_systemd_booted(NULL))
                skip();
        ag_policy_init(&policy);
        assert_int_equal(ag_login_new(AG_MODE_SYSTEMD, &l), 0);
        assert_int_equal(ag_login_open(l, &p, &f), -EOPNOTSUPP);
        assert_int_equal(f.step, AG_STEP_NO_SYSTEMD);
        assert_int_equal(l->state, AG_LOGIN_NEW);
        ag_login_free(l);
}

static void test_unit_values_format(void **state) {
        char w[32], q[32];
        AgUnitValues v = { .cpu_weight = 200, .cpu_quota_per_sec_usec = 500000 };

        (void) state;
        ag_unit_values_format(&v, w, sizeof w, q, sizeof q);
        assert_string_equal(w, "200");
        assert_string_equal(q, "500000us");
        v = (AgUnitValues) { .cpu_weight = AG_SYSTEMD_CPU_WEIGHT_IDLE, .cpu_quota_per_sec_usec = AG_SYSTEMD_USEC_INFINITY };
        ag_unit_values_format(&v, w, sizeof w, q, sizeof q);
        assert_string_equal(w, "idle");
        assert_string_equal(q, "infinity");
}

UNIT_MAIN(cmocka_unit_test(test_mode_decided_once),
          cmocka_unit_test(test_close_by_state),
          cmocka_unit_test(test_systemd_open_without_systemd),
          cmocka_unit_test(test_unit_values_format))
