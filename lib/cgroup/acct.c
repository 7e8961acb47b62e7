/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* CPU accounting: where a group's CPU time is read, the cpuacct mirror of a
 * session on cgroup v1 hosts whose cpuacct controller is a hierarchy of its
 * own, and its removal. See acct.h. */

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <linux/magic.h>

#include "acct.h"
#include "cgroup.h"
#include "escape.h"
#include "place.h"
#include "util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* Levels of a mirrored path ("/<root>/user-<uid>/<session>" has 3; pools add one). */
#define MAX_LEVELS 8
/* How often making the mirror starts over when a concurrent close or sweep
 * removed a level under its feet. */
#define MIRROR_RETRIES 16

AgAcct *ag_acct_free(AgAcct *a) {
        if (!a)
                return NULL;
        free(a->mount);
        free(a->path);
        free(a->origin);
        free(a);
        return NULL;
}

static bool has_file(int dirfd, const char *name) {
        return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int ag_acct_find(const AgHierarchy *h, AgAcctSource *ret_source, char **ret_mount) {
        _cleanup_close_ int fd = -1;
        char *m = NULL;
        int r;

        assert(h);
        assert(ret_source);

        if (h->version == 2 || h->cpuacct == AG_CPUACCT_WITH_CPU) {
                *ret_source = AG_ACCT_IN_CPU;
                return 0;
        }
        /* Finding the hierarchy usually told already (no second look). */
        if (h->cpuacct == AG_CPUACCT_UNKNOWN) {
                r = ag_hierarchy_open(h, &fd);
                if (r < 0)
                        return r;
                if (has_file(fd, "cpuacct.usage")) {
                        *ret_source = AG_ACCT_IN_CPU;
                        return 0;
                }
        }
        r = ag_cpuacct_mount_find(&m);
        if (r == -ENOENT) {
                *ret_source = AG_ACCT_NONE;
                return 0;
        }
        if (r < 0)
                return r;
        *ret_source = AG_ACCT_MIRROR;
        if (ret_mount)
                *ret_mount = m;
        else
                free(m);
        return 0;
}

/* "key value" lines (cpu.stat, cpuacct.stat): the value of key, or -ENOENT. */
static int keyed_value(const char *buf, const char *key, long long *ret) {
        size_t n = strlen(key);

        for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, key, n) == 0 && p[n] == ' ') {
                        char *end;
                        errno = 0;
                        long long v = strtoll(p + n + 1, &end, 10);
                        if (errno != 0 || end == p + n + 1 || v < 0 || (*end && *end != '\n'))
                                return -EINVAL;
                        *ret = v;
                        return 0;
                }
        return -ENOENT;
}

int ag_acct_read_group(int version, int cgfd, AgCpuUsage *ret) {
        AgCpuUsage u = { -1, -1, -1 };
        char buf[4096];
        long long v;
        int r;

        if (version == 2) {
                r = ag_read_small_file(cgfd, "cpu.stat", buf, sizeof buf);
                if (r < 0)
                        return r;
                if (keyed_value(buf, "usage_usec", &v) < 0)
                        return -ENOENT;
                u.usec = v;
                if (keyed_value(buf, "user_usec", &v) >= 0)
                        u.user_usec = v;
                if (keyed_value(buf, "system_usec", &v) >= 0)
                        u.system_usec = v;
        } else {
                char *end;

                r = ag_read_small_file(cgfd, "cpuacct.usage", buf, sizeof buf);
                if (r < 0)
                        return r;
                errno = 0;
                v = strtoll(buf, &end, 10);
                if (errno != 0 || end == buf || *end || v < 0)
                        return -EINVAL;
                u.usec = v / 1000;
                /* user and system in USER_HZ ticks, sampled at the tick */
                long hz = sysconf(_SC_CLK_TCK);
                if (hz > 0 && ag_read_small_file(cgfd, "cpuacct.stat", buf, sizeof buf) >= 0) {
                        if (keyed_value(buf, "user", &v) >= 0)
                                u.user_usec = v * (1000000 / hz);
                        if (keyed_value(buf, "system", &v) >= 0)
                                u.system_usec = v * (1000000 / hz);
                }
        }
        *ret = u;
        return 0;
}

int ag_acct_read_throttle(int version, int cgfd, AgCpuThrottle *ret, long long *ret_usage_usec, AgFdBatch *batch) {
        AgCpuThrottle t = { -1, -1, -1 };
        long long v, usage = -1;
        char buf[4096];
        int r;

        /* v1: the cpu controller's cpu.stat (throttled_time in ns), v2: the group's */
        r = ag_read_small_file_batch(cgfd, "cpu.stat", buf, sizeof buf, batch);
        if (r < 0)
                return r;
        if (keyed_value(buf, "nr_periods", &v) >= 0)
                t.periods = v;
        if (keyed_value(buf, "nr_throttled", &v) >= 0)
                t.throttled = v;
        if (version == 2 ? keyed_value(buf, "throttled_usec", &v) >= 0 : keyed_value(buf, "throttled_time", &v) >= 0)
                t.throttled_usec = version == 2 ? v : v / 1000;
        if (version == 2 && keyed_value(buf, "usage_usec", &v) >= 0)
                usage = v;
        if (t.periods < 0 && t.throttled < 0 && t.throttled_usec < 0 && usage < 0)
                return -ENOENT;
        *ret = t;
        if (ret_usage_usec)
                *ret_usage_usec = usage;
        return 0;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0 && clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int ag_acct_start(const AgHierarchy *h, AgAcct **ret) {
        AgAcct *a;
        int r;

        a = calloc(1, sizeof *a);
        if (!a)
                return -ENOMEM;
        a->start_usec = now_usec();
        r = ag_acct_find(h, &a->source, &a->mount);
        if (r == -ENOMEM) {
                free(a);
                return r;
        }
        if (r < 0) {
                /* Only the CPU time is unknown: the wall time still counts. */
                a->source = AG_ACCT_NONE;
                a->mount = NULL;
        }
        *ret = a;
        return 0;
}

uint64_t ag_acct_wall_usec(const AgAcct *a) {
        uint64_t now = now_usec();
        return now > a->start_usec ? now - a->start_usec : 0;
}

/* Splits "/a/b/c" into its components (in copy, which is modified). */
static int split_path(char *copy, char *comp[MAX_LEVELS], unsigned *ret_n) {
        unsigned n = 0;
        char *save = NULL;

        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (n >= MAX_LEVELS)
                        return -E2BIG;
                comp[n++] = c;
        }
        if (n == 0)
                return -EINVAL;
        *ret_n = n;
        return 0;
}

static void close_all(int fds[MAX_LEVELS]) {
        for (unsigned i = 0; i < MAX_LEVELS; i++)
                fds[i] = safe_close(fds[i]);
}

/* Tries to remove every group directly below dirfd but skip: only empty
 * ones go (the kernel refuses the others), at most AG_SESSION_MAX_DIRS. */
static int remove_empty_children(int dirfd, const char *skip) {
        struct dirent *de;
        unsigned seen = 0;
        int r, count = 0;
        DIR *d;

        r = ag_opendir_dup(dirfd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d)) && seen < AG_SESSION_MAX_DIRS) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.' || (skip && strcmp(de->d_name, skip) == 0))
                        continue;
                seen++;
                if (unlinkat(dirfd, de->d_name, AT_REMOVEDIR) == 0)
                        count++;
        }
        closedir(d);
        return count;
}

/* One attempt at the mirror: its levels comp[0..n-1] below the cpuacct
 * mount mfd, made where missing, pid moved into the last. fds and created
 * say what is open and what this attempt made, *ret_level how far it got. */
static int mirror_make(int mfd, char **comp, unsigned n, pid_t pid, int fds[], bool created[], unsigned *ret_level,
                       const char **what) {
        unsigned i;
        int r = 0;

        close_all(fds);
        memset(created, 0, MAX_LEVELS * sizeof(bool));
        for (i = 0; i < n; i++) {
                /* <root> is there but for the very first login */
                r = i == 0 ? ag_cg_open(mfd, comp[0], &fds[0]) : -ENOENT;
                if (r == -ENOENT)
                        r = ag_cg_mkdir_open_0755(i == 0 ? mfd : fds[i - 1], comp[i], &created[i], &fds[i]);
                if (r < 0)
                        break;
        }
        *ret_level = i;
        if (r < 0) {
                *what = "create the cpuacct group";
                return r;
        }
        *what = "move the process into the cpuacct group";
        return ag_cg_attach(fds[n - 1], pid);
}

int ag_acct_mirror_open(AgAcct *a, const char *path, pid_t pid, bool sweep, const char *origin_known,
                        const char **ret_what) {
        _cleanup_free_ char *copy = NULL, *origin = NULL, *saved = NULL;
        int fds[MAX_LEVELS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
        bool created[MAX_LEVELS] = {};
        char *comp[MAX_LEVELS];
        const char *what = NULL;
        unsigned n, i = 0;
        int r;

        assert(a);
        assert(path);

        if (a->source != AG_ACCT_MIRROR || a->path)
                return 0;
        if (pid <= 0)
                pid = getpid();
        copy = strdup(path);
        saved = strdup(path);
        if (!copy || !saved) {
                what = "allocate memory";
                r = -ENOMEM;
                goto fail;
        }
        r = split_path(copy, comp, &n);
        if (r < 0) {
                what = "split the session path";
                goto fail;
        }
        if (origin_known)
                origin = strdup(origin_known);
        else
                (void) ag_cg_pid_controller_path(pid, "cpuacct", &origin);

        for (unsigned attempt = 0;; attempt++) {
                _cleanup_close_ int mfd = open(a->mount, DIR_FLAGS);

                if (mfd < 0) {
                        r = negative_errno();
                        what = "open the cpuacct hierarchy";
                        goto fail;
                }
                r = mirror_make(mfd, comp, n, pid, fds, created, &i, &what);
                if (r >= 0)
                        break;
                /* A concurrent close or sweep removed a level: start over. */
                if ((r != -ENOENT && r != -ENODEV) || attempt + 1 >= MIRROR_RETRIES) {
                        /* Remove what this attempt made, bottom up. */
                        while (i-- > 1)
                                if (created[i])
                                        (void) unlinkat(fds[i - 1], comp[i], AT_REMOVEDIR);
                        goto fail;
                }
        }

        /* This user's mirrors that emptied since their close. */
        if (sweep && n >= 2 && !created[n - 2])
                (void) remove_empty_children(fds[n - 2], comp[n - 1]);
        close_all(fds);
        a->path = TAKE_PTR(saved);
        a->origin = TAKE_PTR(origin);
        a->sweep = sweep;
        return 0;

fail:
        close_all(fds);
        if (ret_what)
                *ret_what = what;
        return r;
}

int ag_acct_usage(const AgHierarchy *h, const AgAcct *a, const char *path, AgCpuUsage *ret) {
        _cleanup_close_ int mfd = -1, fd = -1;
        int r;

        assert(h);
        assert(path);

        switch (a->source) {
        case AG_ACCT_IN_CPU:
                r = ag_hierarchy_open_path(h, path, &fd);
                if (r < 0)
                        return r;
                return ag_acct_read_group(h->version, fd, ret);
        case AG_ACCT_MIRROR:
                if (!a->path)
                        return -ENOENT;
                mfd = open(a->mount, DIR_FLAGS);
                if (mfd < 0)
                        return negative_errno();
                r = ag_cg_open_path(mfd, a->path, &fd);
                if (r < 0)
                        return r;
                return ag_acct_read_group(1, fd, ret);
        default:
                return -EOPNOTSUPP;
        }
}

int ag_acct_read_session_at(int parent_fd, const char *name, const char *path, AgCpuUsage *ret) {
        _cleanup_free_ char *mount = NULL;
        _cleanup_close_ int fd = -1, mfd = -1, afd = -1;
        int r;

        assert(name);

        r = ag_cg_open(parent_fd, name, &fd);
        if (r < 0)
                return r;
        /* v2 (usage_usec of cpu.stat), or v1 with cpuacct beside cpu; a v1
         * cpu.stat has no usage_usec and a cpu-only group no cpuacct.usage */
        if (ag_acct_read_group(2, fd, ret) >= 0 || ag_acct_read_group(1, fd, ret) >= 0)
                return 0;
        /* v1 with cpuacct on its own: the session's mirror, same path */
        r = ag_cpuacct_mount_find(&mount);
        if (r < 0)
                return r;
        mfd = open(mount, DIR_FLAGS);
        if (mfd < 0)
                return negative_errno();
        r = ag_cg_open_path(mfd, path, &afd);
        if (r < 0)
                return r;
        return ag_acct_read_group(1, afd, ret);
}

int ag_acct_mirror_close(const AgAcct *a, pid_t pid, const char *current_known, AgCpuUsage *ret_usage) {
        _cleanup_free_ char *copy = NULL, *current = NULL;
        _cleanup_close_ int mfd = -1;
        int fds[MAX_LEVELS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
        char *comp[MAX_LEVELS];
        unsigned n, i;
        int r, result;

        if (a->source != AG_ACCT_MIRROR || !a->path)
                return 0;
        if (pid <= 0)
                pid = getpid();
        mfd = open(a->mount, DIR_FLAGS);
        if (mfd < 0)
                return negative_errno();

        /* Leave the mirror first, or its removal fails with EBUSY. */
        if (!current_known && ag_cg_pid_controller_path(pid, "cpuacct", &current) >= 0)
                current_known = current;
        if (current_known && ag_cg_path_is_below(current_known, a->path)) {
                _cleanup_close_ int ofd = -1;

                r = -ENOENT;
                if (a->origin && !ag_cg_path_is_below(a->origin, a->path)) {
                        if (strcmp(a->origin, "/") == 0)
                                r = ag_cg_attach(mfd, pid);
                        else if (ag_cg_open_path(mfd, a->origin, &ofd) >= 0)
                                r = ag_cg_attach(ofd, pid);
                }
                if (r < 0)
                        (void) ag_cg_attach(mfd, pid);
        }

        copy = strdup(a->path);
        if (!copy)
                return -ENOMEM;
        r = split_path(copy, comp, &n);
        if (r < 0)
                return r;
        /* Open the levels above the mirror; a missing one: nothing left to remove. */
        for (i = 0; i + 1 < n; i++) {
                r = ag_cg_open(i == 0 ? mfd : fds[i - 1], comp[i], &fds[i]);
                if (r < 0) {
                        close_all(fds);
                        return r == -ENOENT ? 0 : r;
                }
        }
        int parent = n >= 2 ? fds[n - 2] : mfd;
        /* What the session used, read on the way (the mirror's counters go with it). */
        if (ret_usage) {
                _cleanup_close_ int sfd = -1;
                AgCpuUsage u;

                if (ag_cg_open(parent, comp[n - 1], &sfd) >= 0 && ag_acct_read_group(1, sfd, &u) >= 0)
                        *ret_usage = u;
        }
        result = 0;
        if (unlinkat(parent, comp[n - 1], AT_REMOVEDIR) < 0 && errno != ENOENT)
                result = errno == EBUSY || errno == ENOTEMPTY ? -EBUSY : negative_errno();
        /* Then the levels above, up to (not including) <root>, once empty.
         * The user's other mirrors are looked at only when the user's group
         * does not go at once (the common last close reads no directory). */
        for (i = n - 1; i-- > 1;) {
                fds[i] = safe_close(fds[i]);
                if (unlinkat(fds[i - 1], comp[i], AT_REMOVEDIR) == 0)
                        continue;
                if (i != n - 2 || !a->sweep || (errno != EBUSY && errno != ENOTEMPTY))
                        break;
                r = ag_cg_open(fds[i - 1], comp[i], &fds[i]);
                if (r < 0 || remove_empty_children(fds[i], NULL) <= 0)
                        break;
                fds[i] = safe_close(fds[i]);
                if (unlinkat(fds[i - 1], comp[i], AT_REMOVEDIR) < 0)
                        break;
        }
        close_all(fds);
        return result;
}

int ag_acct_root_open(const AgHierarchy *h, const char *root, int *ret_fd) {
        _cleanup_free_ char *mount = NULL;
        _cleanup_close_ int mfd = -1;
        AgAcctSource source;
        int r;

        assert(h);

        r = ag_acct_find(h, &source, &mount);
        if (r < 0)
                return r;
        if (source != AG_ACCT_MIRROR)
                return -ENOENT;
        mfd = open(mount, DIR_FLAGS);
        if (mfd < 0)
                return negative_errno();
        return ag_cg_open(mfd, root, ret_fd);
}

int ag_acct_sweep_place(int acct_rfd, const char *pool, uid_t uid) {
        _cleanup_close_ int pfd = -1, ufd = -1;
        char ugroup[64], pool_dir[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1];
        bool in_pool = pool && *pool;
        int r, count;

        r = ag_user_group_name(uid, ugroup, sizeof ugroup);
        if (r >= 0 && in_pool)
                r = ag_pool_group_name(pool, pool_dir, sizeof pool_dir);
        if (r < 0)
                return r;
        /* The mirror of the place: the same path below <cpuacct>/<root>. */
        r = ag_pool_parent_find(acct_rfd, pool, &pfd);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        /* A user group without mirrors goes with one rmdir. */
        r = ag_cg_rmdir_or_open(pfd, ugroup, &ufd);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (r > 0)
                count = 1;
        else {
                /* Mirrors stop at the session level: the children are root's
                 * session mirrors without children of their own. */
                count = remove_empty_children(ufd, NULL);
                if (count < 0)
                        return count;
                ufd = safe_close(ufd);
                if (unlinkat(pfd, ugroup, AT_REMOVEDIR) == 0)
                        count++;
        }
        /* The place's own directory once that left it empty (a pool other
         * users' mirrors live in stays: the kernel refuses the rmdir). */
        if (in_pool && count > 0) {
                pfd = safe_close(pfd);
                if (unlinkat(acct_rfd, pool_dir, AT_REMOVEDIR) == 0)
                        count++;
        }
        return count;
}

int ag_acct_sweep_user(const AgHierarchy *h, const char *root, uid_t uid) {
        _cleanup_close_ int rfd = -1;
        int r;

        assert(h);

        r = ag_acct_root_open(h, root, &rfd);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        return ag_acct_sweep_place(rfd, NULL, uid);
}

int ag_acct_gc(const AgHierarchy *h, const char *root) {
        _cleanup_close_ int rfd = -1;
        struct dirent *de;
        unsigned total = 0;
        DIR *d;
        int r;

        assert(h);

        r = ag_acct_root_open(h, root, &rfd);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        r = ag_opendir_dup(rfd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                unsigned budget = AG_GC_MAX_DIRS;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                /* Every mirror group is root's: any empty one can go. */
                (void) ag_cg_remove_empty(rfd, de->d_name, AG_SESSION_MAX_DEPTH, &budget, &total);
        }
        closedir(d);
        return (int) total;
}

static void format_value(char *buf, size_t size, long long v) {
        if (v < 0)
                snprintf(buf, size, "?");
        else
                snprintf(buf, size, "%lld", v);
}

int ag_acct_format(const AgCpuUsage *u, long long wall_usec, char *buf, size_t size) {
        char c[32], us[32], sy[32], w[32];
        int n;

        assert(buf);

        format_value(c, sizeof c, u ? u->usec : -1);
        format_value(us, sizeof us, u ? u->user_usec : -1);
        format_value(sy, sizeof sy, u ? u->system_usec : -1);
        format_value(w, sizeof w, wall_usec);
        n = snprintf(buf, size, "cpu_usec=%s user_usec=%s system_usec=%s wall_usec=%s", c, us, sy, w);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

/* The pool of a group path "/<root>/pool-<name>/...": its second component
 * (user-<uid> never starts with "pool-"), copied into buf; "" for none. */
static void pool_of_path(const char *path, char *buf, size_t size) {
        const char *c = path ? strchr(path + (path[0] == '/'), '/') : NULL, *name = NULL;
        char comp[AG_ACCT_POOL_COMP_MAX];
        size_t len;

        buf[0] = 0;
        if (!c)
                return;
        c++;
        len = strcspn(c, "/");
        if (len >= sizeof comp)
                return;
        memcpy(comp, c, len);
        comp[len] = 0;
        if (ag_pool_group_parse(comp, &name) >= 0 && strlen(name) < size)
                strcpy(buf, name);
}

int ag_acct_record_format(const AgAcctRecord *r, char *buf, size_t size) {
        char fields[200], user[256 * 3 + 1], cgroup[1024 * 3 + 1], pool_name[AG_ACCT_POOL_COMP_MAX],
                pool[AG_ACCT_POOL_COMP_MAX * 3 + 1];
        int n;

        assert(r);

        pool_of_path(r->cgroup, pool_name, sizeof pool_name);
        if (ag_acct_format(r->usage, r->wall_usec, fields, sizeof fields) < 0 ||
            ag_escape_percent(r->user, user, sizeof user) < 0 ||
            ag_escape_percent(r->cgroup, cgroup, sizeof cgroup) < 0 ||
            ag_escape_percent(pool_name, pool, sizeof pool) < 0)
                return -ENOBUFS;
        static const char *const scopes[] = {
                [AG_ACCT_SCOPE_SESSION] = "session",
                [AG_ACCT_SCOPE_USER] = "user",
                [AG_ACCT_SCOPE_LANE] = "lane",
        };
        if ((unsigned) r->scope >= ELEMENTSOF(scopes))
                return -EINVAL;
        n = snprintf(buf, size, "%s %s %s: user=%s scope=%s %s uid=%lu state=%s cgroup=%s pool=%s by=%s",
                     r->scope == AG_ACCT_SCOPE_LANE ? "lane" : "session", cgroup, r->state, user, scopes[r->scope],
                     fields, (unsigned long) r->uid, r->state, cgroup, pool, r->by);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}
