/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: the bandwidth counters of cpu.stat (v1 and v2, in a plain temp
 * directory standing in for a group) and "autogroup metrics" of collected
 * trees in the shapes the host cannot make: cgroup v2 with pools and a user
 * with sessions no, and the systemd mode's user slices. */
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
#include "metrics.h"
#include "util.h"

static void put(int dirfd, const char *name, const char *text) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static void test_throttle(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX";
        AgCpuThrottle t = { 9, 9, 9 };
        int fd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(ag_acct_read_throttle(2, fd, &t), -ENOENT);
        assert_int_equal(t.periods, 9);          /* untouched on failure */
        put(fd, "cpu.stat", "usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 10\nnr_throttled 3\n"
                            "throttled_usec 4500\nnr_bursts 0\nburst_usec 0\n");
        assert_int_equal(ag_acct_read_throttle(2, fd, &t), 0);
        assert_int_equal(t.periods, 10);
        assert_int_equal(t.throttled, 3);
        assert_int_equal(t.throttled_usec, 4500);
        /* v1: throttled_time in ns */
        put(fd, "cpu.stat", "nr_periods 7\nnr_throttled 2\nthrottled_time 3000000\nnr_bursts 0\nburst_time 0\n");
        assert_int_equal(ag_acct_read_throttle(1, fd, &t), 0);
        assert_int_equal(t.periods, 7);
        assert_int_equal(t.throttled, 2);
        assert_int_equal(t.throttled_usec, 3000);
        /* v2 without CONFIG_CFS_BANDWIDTH: no counters */
        put(fd, "cpu.stat", "usage_usec 5\nuser_usec 3\nsystem_usec 2\n");
        assert_int_equal(ag_acct_read_throttle(2, fd, &t), -ENOENT);
        (void) unlinkat(fd, "cpu.stat", 0);
        close(fd);
        rmdir(dir);
}

static AgStatusNode *node(AgStatusNode *parent, const char *name, const char *kind) {
        AgStatusNode *n = calloc(1, sizeof *n);

        assert_non_null(n);
        n->name = strdup(name);
        n->path = strdup(name);
        n->kind = kind;
        n->weight = n->shares = -1;
        n->quota_us = -2;
        n->idle = -1;
        n->procs = 0;
        n->cpu_usec = -1;
        n->throttle = (AgCpuThrottle) { -1, -1, -1 };
        if (parent) {
                parent->children = realloc(parent->children, (parent->n_children + 1) * sizeof *parent->children);
                assert_non_null(parent->children);
                parent->children[parent->n_children++] = n;
                n->depth = parent->depth + 1;
        }
        return n;
}

static AgStatusNode *user(AgStatusNode *parent, uid_t uid, const char *name) {
        char dir[32];

        snprintf(dir, sizeof dir, "user-%u", (unsigned) uid);
        AgStatusNode *n = node(parent, dir, parent->kind ? "user" : NULL);
        n->is_user = true;
        n->uid = uid;
        n->user_name = name ? strdup(name) : NULL;
        return n;
}

static AgStatus *status(int version, bool systemd, const char *root) {
        AgStatus *s = calloc(1, sizeof *s);

        assert_non_null(s);
        s->version = version;
        s->systemd = systemd;
        s->mount = strdup("/sys/fs/cgroup");
        s->root = strdup(root);
        s->cpu_source = "cpu.stat";
        s->tree = node(NULL, root + 1, systemd ? "slice" : NULL);
        return s;
}

static char *print(AgStatus *const *v, size_t n) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        ag_metrics_print(v, n, f);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void assert_line(const char *text, const char *line) {
        const char *p = text;
        size_t n = strlen(line);

        for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == 0))
                        return;
        fail_msg("no line '%s' in:\n%s", line, text);
}

/* "METRIC{LABELS} VALUE" is a line of text */
static void assert_metric(const char *text, const char *metric, const char *labels, const char *value) {
        char line[512];

        snprintf(line, sizeof line, "%s%s %s", metric, labels, value);
        assert_line(text, line);
}

static void test_systemd(void **state) {
        AgStatus *s = status(2, true, "/user.slice");
        (void) state;

        AgStatusNode *u = user(s->tree, 1000, "alice");
        u->cpu_usec = 2500000;
        u->throttle = (AgCpuThrottle) { 100, 5, 250000 };
        u->weight = 200;
        u->quota_us = 150000;
        u->period_us = 100000;
        u->idle = 0;
        node(u, "session-3.scope", "session")->procs = 2;
        AgStatusNode *m = node(u, "user@1000.service", "manager");
        m->procs = 1;
        node(m, "autogroup-sid-5.scope", "terminal")->procs = 1;
        node(m, "autogroup-sid-9.scope", "terminal");
        /* a slice whose user NSS does not know, nothing readable */
        user(s->tree, 1001, NULL);

        char *out = print(&s, 1);
        const char *l = "{root=\"user.slice\",pool=\"\",uid=\"1000\",user=\"alice\"}";
        assert_line(out, "autogroup_info{root=\"user.slice\",mode=\"systemd\",cgroup=\"2\",cpu_source=\"cpu.stat\"} 1");
        assert_line(out, "# TYPE autogroup_user_cpu_seconds_total counter");
        assert_metric(out, "autogroup_user_cpu_seconds_total", l, "2.500000");
        assert_metric(out, "autogroup_user_cpu_periods_total", l, "100");
        assert_metric(out, "autogroup_user_cpu_throttled_periods_total", l, "5");
        assert_metric(out, "autogroup_user_cpu_throttled_seconds_total", l, "0.250000");
        assert_metric(out, "autogroup_user_weight", l, "200");
        assert_metric(out, "autogroup_user_cap_cpus", l, "1.5");
        assert_metric(out, "autogroup_user_idle", l, "0");
        assert_metric(out, "autogroup_user_sessions", l, "1");
        assert_metric(out, "autogroup_user_leaves", l, "2");
        assert_metric(out, "autogroup_user_processes", l, "4");
        /* the unknown user: an empty user label, and no sample of what was unreadable */
        assert_line(out, "autogroup_user_sessions{root=\"user.slice\",pool=\"\",uid=\"1001\",user=\"\"} 0");
        assert_null(strstr(out, "autogroup_user_cpu_seconds_total{root=\"user.slice\",pool=\"\",uid=\"1001\""));
        /* no pools: no pool family at all */
        assert_null(strstr(out, "autogroup_pool_"));
        free(out);
        ag_status_free(s);
}

static void test_v2_pools(void **state) {
        AgStatus *s = status(2, false, "/autogroup");
        (void) state;

        /* sessions no: login/ and a leaf right below the user group */
        AgStatusNode *u = user(s->tree, 1000, "alice");
        u->cpu_usec = 7;
        u->quota_us = -1;
        node(u, "login", NULL)->procs = 3;
        node(u, "t1", NULL);
        /* a pool with two users, sessions yes */
        AgStatusNode *p = node(s->tree, "pool-physics", NULL);
        p->is_pool = true;
        p->cpu_usec = 3000001;
        p->weight = 300;
        p->idle = 1;
        for (uid_t uid = 2000; uid < 2002; uid++) {
                AgStatusNode *x = user(p, uid, "bob");
                x->in_pool = true;
                AgStatusNode *sess = node(x, "s1", NULL);
                node(sess, "login", NULL)->procs = 1;
                node(sess, "t1", NULL);
                node(x, "s2", NULL);
        }
        /* a second root: its series are told apart by the root label */
        AgStatus *s2 = status(2, false, "/web");
        user(s2->tree, 1000, "alice")->cpu_usec = 1;

        AgStatus *v[] = { s, s2 };
        char *out = print(v, 2);
        assert_line(out, "autogroup_user_sessions{root=\"autogroup\",pool=\"\",uid=\"1000\",user=\"alice\"} 1");
        assert_line(out, "autogroup_user_leaves{root=\"autogroup\",pool=\"\",uid=\"1000\",user=\"alice\"} 2");
        assert_line(out, "autogroup_user_processes{root=\"autogroup\",pool=\"\",uid=\"1000\",user=\"alice\"} 3");
        assert_line(out, "autogroup_user_cap_cpus{root=\"autogroup\",pool=\"\",uid=\"1000\",user=\"alice\"} +Inf");
        assert_line(out, "autogroup_user_cpu_seconds_total{root=\"autogroup\",pool=\"\",uid=\"1000\",user=\"alice\"} 0.000007");
        assert_line(out, "autogroup_user_sessions{root=\"autogroup\",pool=\"physics\",uid=\"2001\",user=\"bob\"} 2");
        assert_line(out, "autogroup_user_leaves{root=\"autogroup\",pool=\"physics\",uid=\"2001\",user=\"bob\"} 2");
        assert_line(out, "autogroup_pool_users{root=\"autogroup\",pool=\"physics\"} 2");
        assert_line(out, "autogroup_pool_sessions{root=\"autogroup\",pool=\"physics\"} 4");
        assert_line(out, "autogroup_pool_leaves{root=\"autogroup\",pool=\"physics\"} 4");
        assert_line(out, "autogroup_pool_cpu_seconds_total{root=\"autogroup\",pool=\"physics\"} 3.000001");
        assert_line(out, "autogroup_pool_weight{root=\"autogroup\",pool=\"physics\"} 300");
        assert_line(out, "autogroup_pool_idle{root=\"autogroup\",pool=\"physics\"} 1");
        assert_line(out, "autogroup_user_cpu_seconds_total{root=\"web\",pool=\"\",uid=\"1000\",user=\"alice\"} 0.000001");
        /* each family once: one HELP line for the CPU counter across both roots */
        const char *h = strstr(out, "# HELP autogroup_user_cpu_seconds_total ");
        assert_non_null(h);
        assert_null(strstr(h + 1, "# HELP autogroup_user_cpu_seconds_total "));
        free(out);
        ag_status_free(s);
        ag_status_free(s2);
}

static void test_escaping(void **state) {
        AgStatus *s = status(1, false, "/autogroup");
        (void) state;

        user(s->tree, 1000, "q\"u\\o\n\xff\x01t\xc3\xa9")->procs = 1;
        char *out = print(&s, 1);
        /* \" \\ \n as the format says; invalid UTF-8 and controls as the text \xNN; UTF-8 kept */
        assert_line(out, "autogroup_user_processes{root=\"autogroup\",pool=\"\",uid=\"1000\","
                         "user=\"q\\\"u\\\\o\\n\\\\xff\\\\x01t\xc3\xa9\"} 1");
        free(out);
        ag_status_free(s);
}

static void test_write(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX", path[64], bad[80];
        AgStatus *s = status(2, false, "/autogroup");
        (void) state;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/autogroup.prom", dir);
        assert_int_equal(ag_metrics_write(path, &s, 1), 0);
        assert_int_equal(ag_metrics_write(path, &s, 1), 0);     /* replaces */
        snprintf(bad, sizeof bad, "%s/none/x.prom", dir);
        assert_int_equal(ag_metrics_write(bad, &s, 1), -ENOENT);
        /* only the file itself: no temporary file left */
        char cmd[128];
        snprintf(cmd, sizeof cmd, "test \"$(ls -A %s)\" = autogroup.prom", dir);
        assert_int_equal(system(cmd), 0);
        unlink(path);
        rmdir(dir);
        ag_status_free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_throttle),
                cmocka_unit_test(test_systemd),
                cmocka_unit_test(test_v2_pools),
                cmocka_unit_test(test_escaping),
                cmocka_unit_test(test_write),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
