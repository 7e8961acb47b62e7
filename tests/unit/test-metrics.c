/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: the bandwidth counters of cpu.stat (v1 and v2, in a plain temp
 * directory standing in for a group) and "autogroup metrics" of collected
 * trees in the shapes the host's tests do not make: cgroup v2 (files in a temp
 * directory) with pools and a user with sessions no, and the systemd mode's
 * user slices (their run scopes among the leaves), a user's latency lane with
 * CPU time of its own (v1 cpu,cpuacct: its series, status's row and JSON);
 * and the status's test of a closed login (ag_status_login_closed) on a
 * cgroup.procs of real processes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
#include "unit-util.h"

static void put(int dirfd, const char *name, const char *text) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}


static bool fd_open(int fd) {
        return fcntl(fd, F_GETFD) >= 0;
}

/* AgFdBatch closes its descriptors (runs of numbers in one call) and no
 * other, even one between them; its readers leave theirs there, and an
 * open out of descriptors gives the batch back and tries again */
static void test_fd_batch(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX";
        AgFdBatch b = {};
        struct rlimit old, low;
        long long v = 0;
        int fd, other, mine[6], n = 0;

        (void) state;
        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        put(fd, "cpu.shares", "1024\n");
        for (int i = 0; i < 6; i++) {
                int x = openat(fd, "cpu.shares", O_RDONLY | O_CLOEXEC);
                assert_true(x >= 0);
                if (i == 3) {
                        other = x;      /* not the batch's: a hole in its run */
                        continue;
                }
                mine[n++] = x;
                ag_fd_batch_add(&b, x);
        }
        assert_int_equal(ag_read_ll(fd, "cpu.shares", &v, &b), 0);
        assert_int_equal(v, 1024);
        assert_int_equal(b.n, (size_t) n + 1);
        mine[n++] = b.fd[b.n - 1];
        ag_fd_batch_close(&b);
        assert_int_equal(b.n, 0);
        for (int i = 0; i < n; i++)
                assert_false(fd_open(mine[i]));
        assert_true(fd_open(other));
        close(other);

        /* no descriptor left but the batch's: the read still succeeds */
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
        for (int i = 0;; i++) {
                int x = openat(fd, "cpu.shares", O_RDONLY | O_CLOEXEC);
                if (x < 0)
                        break;
                ag_fd_batch_add(&b, x);
                if (b.n == AG_FD_BATCH_MAX - 1)
                        break;
        }
        low = old;
        low.rlim_cur = (rlim_t) b.fd[b.n - 1] + 1;      /* every number up to the batch's last in use */
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        v = 0;
        assert_int_equal(ag_read_ll(fd, "cpu.shares", &v, &b), 0);
        assert_int_equal(v, 1024);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
        assert_int_equal(b.n, 1);
        ag_fd_batch_close(&b);
        ag_fd_batch_add(NULL, openat(fd, "cpu.shares", O_RDONLY | O_CLOEXEC));     /* NULL: closed now */

        (void) unlinkat(fd, "cpu.shares", 0);
        close(fd);
        rmdir(dir);
}
/* ag_read_ll_beneath: a file below a directory in one open, never through a symlink or out of it */
static void test_read_beneath(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX";
        long long v = 9;
        int fd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(mkdirat(fd, "user-5", 0755), 0);
        put(fd, "user-5/cpuacct.usage", "4200\n");
        put(fd, "top", "7\n");
        assert_int_equal(symlinkat("user-5", fd, "link"), 0);
        assert_true(ag_read_ll_beneath(fd, "user-5/../top", &v, NULL) < 0 || v == 7);     /* never outside fd */
        assert_true(ag_read_ll_beneath(fd, "../top", &v, NULL) < 0);
        assert_true(ag_read_ll_beneath(fd, "link/cpuacct.usage", &v, NULL) < 0);
        assert_int_equal(ag_read_ll_beneath(fd, "user-5/cpuacct.usage", &v, NULL), 0);
        assert_int_equal(v, 4200);
        assert_int_equal(ag_read_ll_beneath(fd, "user-5/missing", &v, NULL), -ENOENT);
        assert_int_equal(v, 4200);               /* untouched on failure */
        (void) unlinkat(fd, "user-5/cpuacct.usage", 0);
        (void) unlinkat(fd, "user-5", AT_REMOVEDIR);
        (void) unlinkat(fd, "top", 0);
        (void) unlinkat(fd, "link", 0);
        close(fd);
        rmdir(dir);
}

static void test_throttle(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX";
        AgCpuThrottle t = { 9, 9, 9 };
        int fd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(ag_acct_read_throttle(2, fd, &t, NULL, NULL), -ENOENT);
        assert_int_equal(t.periods, 9);          /* untouched on failure */
        put(fd, "cpu.stat", "usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 10\nnr_throttled 3\n"
                            "throttled_usec 4500\nnr_bursts 0\nburst_usec 0\n");
        long long usage = 0;
        assert_int_equal(ag_acct_read_throttle(2, fd, &t, &usage, NULL), 0);
        assert_int_equal(t.periods, 10);
        assert_int_equal(t.throttled, 3);
        assert_int_equal(t.throttled_usec, 4500);
        assert_int_equal(usage, 5);             /* the CPU time of the same read */
        /* v1: throttled_time in ns */
        put(fd, "cpu.stat", "nr_periods 7\nnr_throttled 2\nthrottled_time 3000000\nnr_bursts 0\nburst_time 0\n");
        assert_int_equal(ag_acct_read_throttle(1, fd, &t, &usage, NULL), 0);
        assert_int_equal(usage, -1);            /* v1: in cpuacct */
        assert_int_equal(t.periods, 7);
        assert_int_equal(t.throttled, 2);
        assert_int_equal(t.throttled_usec, 3000);
        /* v2 without CONFIG_CFS_BANDWIDTH: no counters, the CPU time all the same */
        put(fd, "cpu.stat", "usage_usec 6\nuser_usec 3\nsystem_usec 3\n");
        assert_int_equal(ag_acct_read_throttle(2, fd, &t, &usage, NULL), 0);
        assert_int_equal(t.periods, -1);
        assert_int_equal(t.throttled_usec, -1);
        assert_int_equal(usage, 6);
        /* nothing of either */
        put(fd, "cpu.stat", "nr_bursts 0\n");
        assert_int_equal(ag_acct_read_throttle(2, fd, &t, &usage, NULL), -ENOENT);
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

static char *print(AgMetrics *m) {
        MemOut out;

        ag_metrics_print(m, mem_out_open(&out));
        return mem_out_done(&out);
}

/* the metrics of one collected tree */
static char *print_status(const AgStatus *s) {
        AgMetrics m = {};

        assert_int_equal(ag_metrics_add_status(&m, s), 0);
        char *out = print(&m);
        ag_metrics_done(&m);
        return out;
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

/* assert_metric() for each NAME, VALUE pair after labels, up to a NULL */
static void assert_metrics(const char *text, const char *labels, ...) {
        va_list ap;
        const char *metric;

        va_start(ap, labels);
        while ((metric = va_arg(ap, const char *)))
                assert_metric(text, metric, labels, va_arg(ap, const char *));
        va_end(ap);
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
        /* "autogroup run" commands' scopes are leaves too */
        node(m, "autogroup-run-40.scope", "run")->procs = 1;
        /* a slice whose user NSS does not know, nothing readable */
        user(s->tree, 1001, NULL);

        char *out = print_status(s);
        const char *l = "{root=\"user.slice\",pool=\"\",uid=\"1000\",user=\"alice\"}";
        assert_line(out, "autogroup_info{root=\"user.slice\",mode=\"systemd\",cgroup=\"2\",cpu_source=\"cpu.stat\"} 1");
        assert_line(out, "# TYPE autogroup_user_cpu_seconds_total counter");
        assert_metrics(out, l, "autogroup_user_cpu_seconds_total", "2.500000",
                       "autogroup_user_cpu_periods_total", "100", "autogroup_user_cpu_throttled_periods_total", "5",
                       "autogroup_user_cpu_throttled_seconds_total", "0.250000", "autogroup_user_weight", "200",
                       "autogroup_user_cap_cpus", "1.5", "autogroup_user_idle", "0", "autogroup_user_sessions", "1",
                       "autogroup_user_leaves", "3", NULL);
        /* the unknown user: an empty user label, and no sample of what was unreadable */
        assert_line(out, "autogroup_user_sessions{root=\"user.slice\",pool=\"\",uid=\"1001\",user=\"\"} 0");
        assert_null(strstr(out, "autogroup_user_cpu_seconds_total{root=\"user.slice\",pool=\"\",uid=\"1001\""));
        /* no pools: no pool family at all */
        assert_null(strstr(out, "autogroup_pool_"));
        free(out);
        ag_status_free(s);
}

/* mkdir -p of a relative path below fd */
static void mkdirs(int fd, const char *path) {
        char buf[256];

        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf; (p = strchr(p + 1, '/'));) {
                *p = 0;
                (void) mkdirat(fd, buf, 0755);
                *p = '/';
        }
        assert_true(mkdirat(fd, buf, 0755) == 0 || errno == EEXIST);
}

static void putf(int fd, const char *dir, const char *name, const char *text) {
        char path[256];

        snprintf(path, sizeof path, "%s/%s", dir, name);
        put(fd, path, text);
}

/* cgroup v2 read from files: a temp directory stands in for the hierarchy
 * (its directories' link counts work the same way) */
static void test_v2_pools(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX";
        (void) state;

        assert_non_null(mkdtemp(dir));
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        /* root (uid 0, named in /etc/passwd) with sessions no: its logins' processes in the user group */
        mkdirs(fd, "autogroup/user-0");
        putf(fd, "autogroup/user-0", "cgroup.procs", "4242\n");
        putf(fd, "autogroup/user-0", "cpu.weight", "100\n");
        putf(fd, "autogroup/user-0", "cpu.max", "max 100000\n");
        putf(fd, "autogroup/user-0", "cpu.stat", "usage_usec 7\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
        /* a pool of two users with sessions, capped at 4 CPUs */
        mkdirs(fd, "autogroup/pool-physics");
        /* idle: the kernel then reports the idle weight, 1 */
        putf(fd, "autogroup/pool-physics", "cpu.weight", "1\n");
        putf(fd, "autogroup/pool-physics", "cpu.idle", "1\n");
        putf(fd, "autogroup/pool-physics", "cpu.max", "400000 100000\n");
        putf(fd, "autogroup/pool-physics", "cpu.stat", "usage_usec 3000001\nnr_periods 20\nnr_throttled 4\n"
                                                        "throttled_usec 1500\n");
        /* sessions with root's leaves (login/ is not one), a delegated one with the user's own */
        mkdirs(fd, "autogroup/pool-physics/user-3999999990/s1/login");
        mkdirs(fd, "autogroup/pool-physics/user-3999999990/s1/leaf-1");
        mkdirs(fd, "autogroup/pool-physics/user-3999999990/s1/class-interactive");
        mkdirs(fd, "autogroup/pool-physics/user-3999999990/s2/login");
        mkdirs(fd, "autogroup/pool-physics/user-3999999990/s2/sid-77");
        mkdirs(fd, "autogroup/pool-physics/user-3999999991/s1/login");
        /* a session whose login closed: login/ removed, its six leaves kept */
        for (int i = 1; i <= 6; i++) {
                char leaf[80];
                snprintf(leaf, sizeof leaf, "autogroup/pool-physics/user-3999999991/s2/leaf-%d", i);
                mkdirs(fd, leaf);
        }
        /* a user group with neither sessions nor processes: no session */
        mkdirs(fd, "autogroup/pool-physics/user-3999999992");
        putf(fd, "autogroup/pool-physics/user-3999999992", "cgroup.procs", "");
        /* not ours: ignored */
        mkdirs(fd, "autogroup/junk/user-5");
        mkdirs(fd, "autogroup/user-05");
        /* a second root: its series told apart by the root label */
        mkdirs(fd, "web/user-0");
        putf(fd, "web/user-0", "cpu.stat", "usage_usec 1\n");

        AgHierarchy h = { .version = 2, .mount = dir, .has_cpu = true };
        AgMetrics m = {};
        assert_int_equal(ag_metrics_collect(&m, &h, "autogroup", (uid_t) -1), 0);
        assert_int_equal(ag_metrics_collect(&m, &h, "web", (uid_t) -1), 0);
        assert_int_equal(ag_metrics_collect(&m, &h, "none", (uid_t) -1), 0);     /* no such root: no groups */
        char *out = print(&m);
        const char *r0 = "{root=\"autogroup\",pool=\"\",uid=\"0\",user=\"root\"}";
        const char *u1 = "{root=\"autogroup\",pool=\"physics\",uid=\"3999999990\",user=\"\"}";
        const char *p = "{root=\"autogroup\",pool=\"physics\"}";
        assert_line(out, "autogroup_info{root=\"autogroup\",mode=\"cgroupfs\",cgroup=\"2\",cpu_source=\"cpu.stat\"} 1");
        assert_line(out, "autogroup_info{root=\"none\",mode=\"cgroupfs\",cgroup=\"2\",cpu_source=\"cpu.stat\"} 1");
        assert_metrics(out, r0, "autogroup_user_sessions", "1", "autogroup_user_leaves", "0",
                       "autogroup_user_cap_cpus", "+Inf", "autogroup_user_cpu_seconds_total", "0.000007",
                       "autogroup_user_weight", "100", NULL);
        assert_metric(out, "autogroup_user_sessions", u1, "2");
        assert_metric(out, "autogroup_user_leaves", u1, "3");
        assert_metric(out, "autogroup_user_sessions", "{root=\"autogroup\",pool=\"physics\",uid=\"3999999992\",user=\"\"}",
                      "0");
        assert_metric(out, "autogroup_user_sessions", "{root=\"autogroup\",pool=\"physics\",uid=\"3999999991\",user=\"\"}",
                      "2");
        assert_metric(out, "autogroup_user_leaves", "{root=\"autogroup\",pool=\"physics\",uid=\"3999999991\",user=\"\"}",
                      "6");
        assert_metrics(out, p, "autogroup_pool_users", "3", "autogroup_pool_sessions", "4",
                       "autogroup_pool_leaves", "9", "autogroup_pool_cpu_seconds_total", "3.000001",
                       "autogroup_pool_cpu_throttled_periods_total", "4",
                       "autogroup_pool_cpu_throttled_seconds_total", "0.001500", "autogroup_pool_cap_cpus", "4", NULL);
        /* idle: weight 0, whatever the kernel reads back (1 here, as since Linux 6.6) */
        assert_metric(out, "autogroup_pool_weight", p, "0");
        assert_metric(out, "autogroup_pool_idle", p, "1");
        /* any other weight: not idle, cpu.idle not read (user-0 has none) */
        assert_metric(out, "autogroup_user_idle", r0, "0");
        assert_metric(out, "autogroup_user_cpu_seconds_total", "{root=\"web\",pool=\"\",uid=\"0\",user=\"root\"}",
                      "0.000001");
        assert_null(strstr(out, "uid=\"5\""));
        /* each family once: one HELP line for the CPU counter across both roots */
        const char *help = strstr(out, "# HELP autogroup_user_cpu_seconds_total ");
        assert_non_null(help);
        assert_null(strstr(help + 1, "# HELP autogroup_user_cpu_seconds_total "));
        free(out);
        ag_metrics_done(&m);

        /* one user: their own series and only their pool */
        assert_int_equal(ag_metrics_collect(&m, &h, "autogroup", 3999999991), 0);
        out = print(&m);
        assert_metric(out, "autogroup_pool_users", p, "1");
        assert_null(strstr(out, "uid=\"0\""));
        assert_null(strstr(out, "uid=\"3999999990\""));
        free(out);
        ag_metrics_done(&m);
        assert_int_equal(ag_metrics_collect(&m, &h, "autogroup", 0), 0);
        out = print(&m);
        assert_null(strstr(out, "autogroup_pool_"));
        free(out);
        ag_metrics_done(&m);

        close(fd);
        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

/* Whether a session's login closed, from the group the login's own
 * process (root's) sits in while it is open: a temp directory's cgroup.procs
 * lists real processes */
static void test_login_closed(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX", text[64];
        int fd, sync[2];
        pid_t child;
        (void) state;

        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        /* the group is gone (close removed an empty login/) */
        assert_int_equal(ag_status_login_closed(-1, 1000), 1);
        /* no process at all */
        put(fd, "cgroup.procs", "");
        assert_int_equal(ag_status_login_closed(fd, 1000), 1);
        /* a process that is not root's (the user's nohup job): closed */
        assert_int_equal(pipe(sync), 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                if (geteuid() == 0 && setresuid(65534, 65534, 65534) < 0)
                        _exit(1);
                (void) write(sync[1], "x", 1);
                for (;;)
                        pause();        /* until the parent kills it */
        }
        char c;
        close(sync[1]);         /* a child that failed: read gives 0, not a wait */
        assert_int_equal(read(sync[0], &c, 1), 1);
        snprintf(text, sizeof text, "%d\n", (int) child);
        put(fd, "cgroup.procs", text);
        assert_int_equal(ag_status_login_closed(fd, 1000), 1);
        /* with a process of effective uid 0 (pid 1 here, as sshd's [priv] in a login/): open */
        FILE *f = fopen("/proc/1/status", "re");
        if (f) {
                char line[256];
                unsigned long r, e = 1;
                while (fgets(line, sizeof line, f))
                        if (sscanf(line, "Uid: %lu %lu", &r, &e) == 2)
                                break;
                fclose(f);
                if (e == 0) {
                        snprintf(text, sizeof text, "%d\n1\n", (int) child);
                        put(fd, "cgroup.procs", text);
                        assert_int_equal(ag_status_login_closed(fd, 1000), 0);
                        /* a session of root's: every process is root's, it cannot be told */
                        assert_int_equal(ag_status_login_closed(fd, 0), -1);
                }
        }
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        /* a process gone meanwhile is skipped */
        snprintf(text, sizeof text, "%d\n", (int) child);
        put(fd, "cgroup.procs", text);
        assert_int_equal(ag_status_login_closed(fd, 1000), 1);
        close(sync[0]);
        close(fd);
        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

/* A user's latency lane (cgroup v1, beside the tree) as a collected tree
 * has it where cpuacct is mounted with cpu (its own CPU time, which the host
 * cannot show: cpuacct is mounted apart there): status's row and JSON
 * "lane", and the autogroup_lane_* series, labels root, uid, user. */
static void test_lane(void **state) {
        AgStatus *s = status(1, false, "/autogroup");
        (void) state;

        s->cpu_source = "cpuacct.usage";
        s->lanes = true;
        AgStatusNode *u = user(s->tree, 1000, "alice");
        u->weight = 100;
        node(u, "p42", NULL)->procs = 1;
        AgStatusNode *l = node(NULL, "autogroup.lane-1000", NULL);
        free(l->path);
        l->path = strdup("/autogroup.lane-1000");
        l->is_lane = true;
        l->depth = 1;
        l->weight = 100;
        l->shares = 1024;
        l->quota_us = 10000;
        l->period_us = 100000;
        l->idle = 0;
        l->procs = 2;
        l->cpu_usec = 3000000;
        l->throttle = (AgCpuThrottle) { 50, 7, 120000 };
        u->lane = l;
        user(s->tree, 1001, "bob")->weight = 100;

        /* metrics */
        char *out = print_status(s);
        const char *lb = "{root=\"autogroup\",uid=\"1000\",user=\"alice\"}";
        assert_line(out, "# TYPE autogroup_lane_cap_cpus gauge");
        assert_metrics(out, lb, "autogroup_lane_cap_cpus", "0.1", "autogroup_lane_cpu_seconds_total", "3.000000",
                       "autogroup_lane_cpu_periods_total", "50", "autogroup_lane_cpu_throttled_periods_total", "7",
                       "autogroup_lane_cpu_throttled_seconds_total", "0.120000", NULL);
        /* the user's own series as before; none of the lane's in them */
        assert_line(out, "autogroup_user_sessions{root=\"autogroup\",pool=\"\",uid=\"1000\",user=\"alice\"} 1");
        assert_null(strstr(out, "autogroup_user_cpu_seconds_total{root=\"autogroup\",pool=\"\",uid=\"1000\""));
        /* no weight, idle, sessions or leaves of a lane; no lane of bob's */
        assert_null(strstr(out, "autogroup_lane_weight"));
        assert_null(strstr(out, "autogroup_lane_idle"));
        assert_null(strstr(out, "autogroup_lane_sessions"));
        assert_null(strstr(out, "uid=\"1001\",user=\"bob\"} 0.1"));
        assert_null(strstr(out, "autogroup_lane_cap_cpus{root=\"autogroup\",uid=\"1001\""));
        free(out);
        /* its time unknown (cpuacct apart): no CPU series of the lanes at all */
        l->cpu_usec = -1;
        out = print_status(s);
        assert_null(strstr(out, "autogroup_lane_cpu_seconds_total"));
        assert_metric(out, "autogroup_lane_cap_cpus", lb, "0.1");
        free(out);
        l->cpu_usec = 3000000;

        /* status --json: the user object's "lane", null for none; not a child */
        MemOut mo;
        ag_status_print_json(s, mem_out_open(&mo));
        out = mem_out_done(&mo);
        assert_non_null(strstr(out, "\"uid\":1000,\"user\":\"alice\",\"lane\":{\"name\":\"autogroup.lane-1000\","
                                    "\"path\":\"/autogroup.lane-1000\",\"kind\":\"lane\",\"weight\":100,"
                                    "\"shares\":1024,\"cap_percent\":10,\"quota_us\":10000,\"period_us\":100000,"
                                    "\"idle\":false,\"procs\":2,\"cpu_usec\":3000000},\"weight\":100,"));
        assert_non_null(strstr(out, "\"uid\":1001,\"user\":\"bob\",\"lane\":null,\"weight\":100,"));
        assert_null(strstr(out, "\"children\":[{\"name\":\"autogroup.lane-1000\""));
        free(out);
        /* status: the lane's row is the last below its user, its time its own */
        ag_status_print(s, mem_out_open(&mo), false);
        out = mem_out_done(&mo);
        const char *row = strstr(out, "| `-/autogroup.lane-1000 (latency lane)");
        assert_non_null(row);
        assert_true(strstr(out, "|-p42") && strstr(out, "|-p42") < row);
        char line[256], *nl = strchr(row, '\n');
        assert_non_null(nl);
        snprintf(line, sizeof line, "%.*s", (int) (nl - row), row);
        /* its columns: weight, shares, cap, idle, processes, CPU */
        char w[16], sh[16], cap[16], idle[16], procs[16], cpu[16];
        assert_int_equal(sscanf(strstr(line, ")") + 1, "%15s %15s %15s %15s %15s %15s", w, sh, cap, idle, procs, cpu),
                         6);
        assert_string_equal(w, "100");
        assert_string_equal(sh, "1024");
        assert_string_equal(cap, "10%");
        assert_string_equal(idle, "no");
        assert_string_equal(procs, "2");
        assert_string_equal(cpu, "3.000s");
        assert_non_null(strstr(out, "\nA latency lane's time is its own, beside the tree: not in its user's "
                                    "group's.\n"));
        free(out);
        ag_status_free(s);
}

static void test_escaping(void **state) {
        AgStatus *s = status(1, false, "/autogroup");
        (void) state;

        user(s->tree, 1000, "q\"u\\o\n\xff\x01t\xc3\xa9")->weight = 100;
        char *out = print_status(s);
        /* \" \\ \n as the format says; invalid UTF-8 and controls as the text \xNN; UTF-8 kept */
        assert_line(out, "autogroup_user_weight{root=\"autogroup\",pool=\"\",uid=\"1000\","
                         "user=\"q\\\"u\\\\o\\n\\\\xff\\\\x01t\xc3\xa9\"} 100");
        free(out);
        ag_status_free(s);
}

static void test_write(void **state) {
        char dir[] = "/tmp/ag-metrics-XXXXXX", path[64], bad[80];
        AgStatus *s = status(2, false, "/autogroup");
        (void) state;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/autogroup.prom", dir);
        AgMetrics m = {};
        assert_int_equal(ag_metrics_add_status(&m, s), 0);
        assert_int_equal(ag_metrics_write(&m, path), 0);
        assert_int_equal(ag_metrics_write(&m, path), 0);        /* replaces */
        snprintf(bad, sizeof bad, "%s/none/x.prom", dir);
        assert_int_equal(ag_metrics_write(&m, bad), -ENOENT);
        ag_metrics_done(&m);
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
                cmocka_unit_test(test_read_beneath),
                cmocka_unit_test(test_fd_batch),
                cmocka_unit_test(test_throttle),
                cmocka_unit_test(test_systemd),
                cmocka_unit_test(test_v2_pools),
                cmocka_unit_test(test_login_closed),
                cmocka_unit_test(test_lane),
                cmocka_unit_test(test_escaping),
                cmocka_unit_test(test_write),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
