/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Direct cgroupfs access: finding the hierarchy with cpu and the v1 one with
 * cpuacct alone (the one mountinfo reader) and the directory-fd operations
 * on their groups: open, make, attach, delegate, set limits, remove. See
 * cgroup.h. */

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "cgroup.h"
#include "util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* The usual mount point of a separate cpuacct hierarchy, tried before mountinfo. */
#define AG_CPUACCT_MOUNT "/sys/fs/cgroup/cpuacct"
/* v1: the child groups one cap change may look at to clear quotas of
 * root's that stand in its way (clear_children_above), and the kernel's
 * smallest quota (1 ms). */
#define AG_CLEAR_MAX_DIRS 65536
#define AG_CPU_QUOTA_MIN_US 1000

AgHierarchy *ag_hierarchy_free(AgHierarchy *h) {
        if (!h)
                return NULL;
        free(h->mount);
        free(h);
        return NULL;
}

static void unescape_octal(char *s) {
        char *w = s;

        for (char *r = s; *r; r++) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
                    r[3] >= '0' && r[3] <= '7') {
                        *w++ = (char) ((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
                        r += 3;
                } else
                        *w++ = *r;
        }
        *w = 0;
}

int ag_mountinfo_parse_line(char *line, char **ret_root, char **ret_mountpoint,
                            char **ret_fstype, char **ret_superopts) {
        char *field[5] = {}, *sep, *save = NULL, *tok;
        unsigned i = 0;

        assert(line);

        /* "id parent maj:min root mountpoint opts [optional...] - fstype source superopts" */
        sep = strstr(line, " - ");
        if (!sep)
                return -EINVAL;
        *sep = 0;
        for (tok = strtok_r(line, " ", &save); tok && i < 5; tok = strtok_r(NULL, " ", &save))
                field[i++] = tok;
        if (i < 5)
                return -EINVAL;

        char *fstype, *source, *superopts;
        save = NULL;
        fstype = strtok_r(sep + 3, " \n", &save);
        source = fstype ? strtok_r(NULL, " \n", &save) : NULL;
        superopts = source ? strtok_r(NULL, " \n", &save) : NULL;
        if (!superopts)
                return -EINVAL;

        unescape_octal(field[3]);
        unescape_octal(field[4]);
        *ret_root = field[3];
        *ret_mountpoint = field[4];
        *ret_fstype = fstype;
        *ret_superopts = superopts;
        return 0;
}

/* Is a cgroup filesystem of that version (1 or 2) really reachable at path?
 * mountinfo also lists mounts that a later mount has covered. */
static bool is_cgroupfs(const char *path, int version) {
        struct statfs sfs;

        if (statfs(path, &sfs) < 0)
                return false;
        return (unsigned long) sfs.f_type ==
               (unsigned long) (version == 2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC);
}

int ag_cg_lists_cpu(int cgfd, const char *file) {
        char buf[512];
        int r;

        assert(file);

        r = ag_read_small_file(cgfd, file, buf, sizeof buf);
        if (r < 0)
                return r;
        return ag_has_token(buf, " ", "cpu");
}

static int v2_root_has_cpu(const char *mountpoint) {
        _cleanup_close_ int fd = -1;

        fd = open(mountpoint, DIR_FLAGS);
        if (fd < 0)
                return negative_errno();
        return ag_cg_lists_cpu(fd, "cgroup.controllers");
}

/* v1: where cpuacct is, seen from a directory of the cpu hierarchy. */
static AgCpuacctPlace v1_cpuacct_place(int fd) {
        return faccessat(fd, "cpuacct.usage", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ? AG_CPUACCT_WITH_CPU
                                                                               : AG_CPUACCT_APART;
}

/* Is the directory fd the root of a cgroup hierarchy (as mountinfo would
 * show it: root "/", not a bind mount of a sub-group) with the cpu
 * controller? 1 with *ret_version set, 0 no or cannot tell. Only files the
 * kernel puts in a hierarchy's root group tell: v1 "cgroup.sane_behavior"
 * (root only) and "cpu.shares" (cpu controller); v2 no "cgroup.events"
 * (every group but the root has one) and "cpu" in cgroup.controllers. */
static int probe_cpu_root(int fd, int *ret_version, AgCpuacctPlace *ret_cpuacct) {
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return 0;
        if ((unsigned long) sfs.f_type == (unsigned long) CGROUP_SUPER_MAGIC) {
                if (faccessat(fd, "cpu.shares", F_OK, AT_SYMLINK_NOFOLLOW) < 0 ||
                    faccessat(fd, "cgroup.sane_behavior", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                        return 0;
                *ret_version = 1;
                *ret_cpuacct = v1_cpuacct_place(fd);
                return 1;
        }
        if ((unsigned long) sfs.f_type == (unsigned long) CGROUP2_SUPER_MAGIC) {
                if (faccessat(fd, "cgroup.events", F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                        return 0;
                if (ag_cg_lists_cpu(fd, "cgroup.controllers") <= 0)
                        return 0;
                *ret_version = 2;
                return 1;
        }
        return 0;
}

/* The usual places of the cpu hierarchy, tried before /proc/self/mountinfo:
 * reading mountinfo makes the kernel format every mount of the namespace
 * (45 to 75 us of a login on a host with twenty mounts, bench/RESULTS.md),
 * while a statfs answers at once. Pure cgroup2 first (the unified
 * root), then the v1 cpu hierarchy under its usual names, then a hybrid
 * host's cgroup2 in case cpu is not bound to v1. The cpu controller sits in
 * one hierarchy only, so when one of these has it, it is the hierarchy the
 * mountinfo scan would pick too. Each is opened without following a
 * symlink (the cpu -> cpu,cpuacct links of some distributions are skipped
 * and their target tried). Anything else (no cpu, another mount point, a
 * container's bind mounts) is left to the mountinfo scan. */
static int hierarchy_well_known(AgHierarchy **ret) {
        static const char *const paths[] = {
                "/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                "/sys/fs/cgroup/cpuacct,cpu", "/sys/fs/cgroup/unified",
        };
        struct statfs sfs;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                _cleanup_close_ int fd = -1;
                AgCpuacctPlace cpuacct = AG_CPUACCT_UNKNOWN;
                int version = 0;

                /* the first is a tmpfs on v1 and hybrid hosts: no need to open it */
                if (i == 0 && (statfs(paths[i], &sfs) < 0 ||
                               (unsigned long) sfs.f_type != (unsigned long) CGROUP2_SUPER_MAGIC))
                        continue;
                fd = open(paths[i], DIR_FLAGS);
                if (fd < 0 || probe_cpu_root(fd, &version, &cpuacct) <= 0)
                        continue;

                AgHierarchy *h = calloc(1, sizeof *h);
                if (!h)
                        return -ENOMEM;
                *h = (AgHierarchy) {
                        .version = version, .mount = strdup(paths[i]), .has_cpu = true, .cpuacct = cpuacct,
                };
                if (!h->mount) {
                        free(h);
                        return -ENOMEM;
                }
                *ret = h;
                return 1;
        }
        return 0;
}

/* Calls f for every mount listed in the mountinfo file fn (NULL:
 * /proc/self/mountinfo) with its root, mount point, fstype and super
 * options, until f returns non-zero; returns that, or 0 after the last. */
typedef int (*mount_fn)(void *userdata, const char *root, const char *mountpoint, const char *fstype,
                        const char *superopts);
static int mountinfo_foreach(const char *fn, mount_fn f, void *userdata) {
        _cleanup_free_ char *line = NULL;
        size_t allocated = 0;
        int r = 0;
        FILE *f_in;

        f_in = fopen(fn ? fn : "/proc/self/mountinfo", "re");
        if (!f_in)
                return negative_errno();
        while (r == 0 && getline(&line, &allocated, f_in) > 0) {
                char *root, *mp, *fstype, *opts;

                if (ag_mountinfo_parse_line(line, &root, &mp, &fstype, &opts) < 0)
                        continue;
                r = f(userdata, root, mp, fstype, opts);
        }
        fclose(f_in);
        return r;
}

/* What the mountinfo scan of ag_hierarchy_find has found so far. */
typedef struct CpuMounts {
        char *v2_cpu, *v1_cpu, *v2_nocpu;
        AgCpuacctPlace v1_cpuacct;
} CpuMounts;

static int cpu_mount(void *userdata, const char *root, const char *mp, const char *fstype, const char *opts) {
        CpuMounts *m = userdata;

        if (strcmp(root, "/") != 0)
                return 0;       /* a bind mount of a sub-cgroup: paths would not match */
        if (strcmp(fstype, "cgroup2") == 0) {
                if (!is_cgroupfs(mp, 2))
                        return 0;
                char **slot = v2_root_has_cpu(mp) > 0 ? &m->v2_cpu : &m->v2_nocpu;
                if (!*slot && !(*slot = strdup(mp)))
                        return -ENOMEM;
        } else if (strcmp(fstype, "cgroup") == 0 && ag_has_token(opts, ",", "cpu") && is_cgroupfs(mp, 1)) {
                if (!m->v1_cpu && !(m->v1_cpu = strdup(mp)))
                        return -ENOMEM;
                if (m->v1_cpuacct == AG_CPUACCT_UNKNOWN)
                        m->v1_cpuacct = ag_has_token(opts, ",", "cpuacct") ? AG_CPUACCT_WITH_CPU : AG_CPUACCT_APART;
        }
        return 0;
}

int ag_hierarchy_find(const char *mountinfo, AgHierarchy **ret) {
        assert(ret);

        CpuMounts m = {};
        AgHierarchy *h = NULL;
        int r;

        if (!mountinfo) {
                r = hierarchy_well_known(ret);
                if (r != 0)
                        return r < 0 ? r : 0;
        }

        r = mountinfo_foreach(mountinfo, cpu_mount, &m);
        if (r >= 0 && !(h = calloc(1, sizeof *h)))
                r = -ENOMEM;
        if (r >= 0) {
                if (m.v2_cpu)
                        *h = (AgHierarchy) { .version = 2, .mount = TAKE_PTR(m.v2_cpu), .has_cpu = true };
                else if (m.v1_cpu)
                        *h = (AgHierarchy) {
                                .version = 1, .mount = TAKE_PTR(m.v1_cpu), .has_cpu = true, .cpuacct = m.v1_cpuacct,
                        };
                else if (m.v2_nocpu)
                        *h = (AgHierarchy) { .version = 2, .mount = TAKE_PTR(m.v2_nocpu), .has_cpu = false };
                else
                        r = -ENOENT;
        }
        free(m.v2_cpu);
        free(m.v1_cpu);
        free(m.v2_nocpu);
        if (r < 0) {
                free(h);
                return r;
        }
        *ret = h;
        return 0;
}

/* Is path the root of a v1 hierarchy with cpuacct and without cpu? */
static bool is_cpuacct_only(const char *path) {
        _cleanup_close_ int fd = -1;
        struct statfs sfs;

        fd = open(path, DIR_FLAGS);
        if (fd < 0 || fstatfs(fd, &sfs) < 0 || (unsigned long) sfs.f_type != (unsigned long) CGROUP_SUPER_MAGIC)
                return false;
        return faccessat(fd, "cpuacct.usage", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
               faccessat(fd, "cpu.shares", F_OK, AT_SYMLINK_NOFOLLOW) < 0;
}

static int cpuacct_mount(void *userdata, const char *root, const char *mp, const char *fstype, const char *opts) {
        char **ret_mount = userdata;

        if (strcmp(root, "/") != 0 || strcmp(fstype, "cgroup") != 0 || !ag_has_token(opts, ",", "cpuacct") ||
            ag_has_token(opts, ",", "cpu") || !is_cpuacct_only(mp))
                return 0;
        *ret_mount = strdup(mp);
        return *ret_mount ? 1 : -ENOMEM;
}

int ag_cpuacct_mount_find(char **ret_mount) {
        char *m = NULL;
        int r;

        /* The usual place first: no mountinfo to read at every login. */
        if (is_cpuacct_only(AG_CPUACCT_MOUNT)) {
                m = strdup(AG_CPUACCT_MOUNT);
                if (!m)
                        return -ENOMEM;
        } else {
                r = mountinfo_foreach(NULL, cpuacct_mount, &m);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -ENOENT;
        }
        *ret_mount = m;
        return 0;
}

int ag_hierarchy_from_mount(const char *path, AgHierarchy **ret) {
        _cleanup_close_ int fd = -1;
        struct statfs sfs;
        AgHierarchy *h;
        int r;

        assert(path);

        fd = open(path, DIR_FLAGS);
        if (fd < 0)
                return negative_errno();
        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();

        h = calloc(1, sizeof *h);
        if (!h)
                return -ENOMEM;
        h->mount = strdup(path);
        if (!h->mount) {
                free(h);
                return -ENOMEM;
        }
        if ((unsigned long) sfs.f_type == (unsigned long) CGROUP2_SUPER_MAGIC) {
                h->version = 2;
                r = v2_root_has_cpu(path);
                h->has_cpu = r > 0;
        } else if ((unsigned long) sfs.f_type == (unsigned long) CGROUP_SUPER_MAGIC) {
                h->version = 1;
                h->has_cpu = faccessat(fd, "cpu.shares", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
                h->cpuacct = v1_cpuacct_place(fd);
        } else {
                ag_hierarchy_free(h);
                return -ENOTDIR;
        }
        *ret = h;
        return 0;
}

int ag_hierarchy_open(const AgHierarchy *h, int *ret_fd) {
        assert(h);

        int fd = open(h->mount, DIR_FLAGS);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

int ag_hierarchy_open_v2(const AgHierarchy *h, int *ret_fd) {
        assert(h);

        if (h->version != 2)
                return -EOPNOTSUPP;
        return ag_hierarchy_open(h, ret_fd);
}

int ag_hierarchy_open_path(const AgHierarchy *h, const char *path, int *ret_fd) {
        _cleanup_close_ int mfd = -1;
        int r;

        assert(h);

        r = ag_hierarchy_open(h, &mfd);
        if (r < 0)
                return r;
        return ag_cg_open_path(mfd, path, ret_fd);
}

bool ag_cg_path_is_below(const char *path, const char *prefix) {
        assert(prefix);

        size_t n = strlen(prefix);
        return strncmp(path, prefix, n) == 0 && (path[n] == 0 || path[n] == '/');
}

static bool name_is_component(const char *name) {
        return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
               strlen(name) < NAME_MAX;
}

int ag_cg_open(int dirfd, const char *name, int *ret_fd) {
        int fd;

        assert(name);

        if (!name_is_component(name))
                return -EINVAL;
        fd = openat(dirfd, name, DIR_FLAGS);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

int ag_cg_open_if_exists(int dirfd, const char *name, int *ret_fd) {
        assert(name);
        assert(ret_fd);

        int r = ag_cg_open(dirfd, name, ret_fd);
        if (r == -ENOENT)
                return 0;
        return r < 0 ? r : 1;
}

int ag_cg_rmdir_or_open(int dirfd, const char *name, int *ret_fd) {
        assert(name);

        if (!name_is_component(name))
                return -EINVAL;
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
                return 1;
        if (errno == ENOENT)
                return -ENOENT;
        return ag_cg_open(dirfd, name, ret_fd);
}

int ag_cg_mkdir_open(int dirfd, const char *name, bool *ret_created, int *ret_fd) {
        int r = -ENOENT;

        assert(name);

        if (!name_is_component(name))
                return -EINVAL;
        /* A concurrent rmdir may remove an existing group between mkdirat()
         * and openat(): then make it again. */
        for (unsigned i = 0; i < 16 && r == -ENOENT; i++) {
                bool created = true;

                if (mkdirat(dirfd, name, 0755) < 0) {
                        if (errno != EEXIST)
                                return negative_errno();
                        created = false;
                }
                r = ag_cg_open(dirfd, name, ret_fd);
                if (r >= 0 && ret_created)
                        *ret_created = created;
        }
        return r;
}

int ag_cg_mode_0755(int fd) {
        struct stat st;

        /* a look is cheaper than a change on cgroupfs, and the usual umask
         * (022, 002) leaves 0755 as it was asked for */
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((st.st_mode & 07777) == 0755)
                return 0;
        if (fchmod(fd, 0755) < 0)
                return negative_errno();
        return 1;
}

int ag_cg_mkdir_open_0755(int dirfd, const char *name, bool *ret_created, int *ret_fd) {
        bool created = false;
        int r;

        assert(name);
        assert(ret_fd);

        r = ag_cg_mkdir_open(dirfd, name, &created, ret_fd);
        if (r < 0)
                return r;
        if (created)
                (void) ag_cg_mode_0755(*ret_fd);
        if (ret_created)
                *ret_created = created;
        return 0;
}

int ag_cg_open_path(int rootfd, const char *path, int *ret_fd) {
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int fd = -1;
        char *save = NULL;

        assert(path);

        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        fd = openat(rootfd, ".", DIR_FLAGS);
        if (fd < 0)
                return negative_errno();
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int next, r;

                r = ag_cg_open(fd, c, &next);
                if (r < 0)
                        return r;
                safe_close(fd);
                fd = next;
        }
        *ret_fd = take_fd(&fd);
        return 0;
}

int ag_cg_attach(int cgfd, pid_t pid) {
        char buf[32];

        snprintf(buf, sizeof buf, "%" PRIiMAX "\n", (intmax_t) pid);
        return ag_write_file(cgfd, "cgroup.procs", buf);
}

int ag_cg_delegate(const AgHierarchy *h, int cgfd, uid_t uid, gid_t gid) {
        static const char *const v1_files[] = { "cgroup.procs", "tasks" };
        static const char *const v2_files[] = { "cgroup.procs", "cgroup.threads", "cgroup.subtree_control" };
        const char *const *files = h->version == 2 ? v2_files : v1_files;
        size_t n = h->version == 2 ? ELEMENTSOF(v2_files) : ELEMENTSOF(v1_files);

        assert(h);

        if (fchown(cgfd, uid, gid) < 0)
                return negative_errno();
        for (size_t i = 0; i < n; i++)
                if (fchownat(cgfd, files[i], uid, gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT)
                        return negative_errno();
        return 0;
}

int ag_cg_grant_procs(int cgfd, uid_t uid, gid_t gid) {
        if (fchownat(cgfd, "cgroup.procs", uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        return 0;
}

int ag_cg_enable_cpu(const AgHierarchy *h, int cgfd) {
        int r;

        assert(h);

        if (h->version != 2)
                return 0;
        r = ag_cg_lists_cpu(cgfd, "cgroup.subtree_control");
        if (r != 0)
                return r < 0 ? r : 0;
        return ag_write_file(cgfd, "cgroup.subtree_control", "+cpu");
}

/* The next child group of a readdir stream: directories only (cgroupfs
 * fills d_type; a link or a file is never descended), "." and ".." skipped.
 * NULL at the end. */
static struct dirent *next_child(DIR *d) {
        struct dirent *de;

        while ((de = readdir(d)))
                if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        return de;
        return NULL;
}

/* Writes value unless the file already holds it. Writes to the cpu
 * bandwidth files walk every task group of the machine in the kernel, so a
 * write that changes nothing would make each login cost more as the number
 * of groups grows. Returns 0, or -ENOENT when the file does not exist. */
static int write_if_changed(int cgfd, const char *file, const char *value) {
        char cur[128];
        int r;

        r = ag_read_small_file(cgfd, file, cur, sizeof cur);
        if (r >= 0 && strcmp(cur, value) == 0)
                return 0;
        if (r == -ENOENT)
                return r;
        return ag_write_file(cgfd, file, value);
}

/* Reads a v1 group's quota and period. */
static int read_bandwidth(int cgfd, long long *ret_quota, unsigned long *ret_period) {
        char q[32], p[32];
        unsigned long period;
        long long quota;
        char *end;
        int r;

        r = ag_read_small_file(cgfd, "cpu.cfs_quota_us", q, sizeof q);
        if (r < 0)
                return r;
        r = ag_read_small_file(cgfd, "cpu.cfs_period_us", p, sizeof p);
        if (r < 0)
                return r;
        r = ag_safe_atoul(p, ULONG_MAX, &period);
        if (r < 0)
                return r;
        errno = 0;
        quota = strtoll(q, &end, 10);
        if (errno != 0 || end == q || *end)
                return -EINVAL;
        *ret_quota = quota < 0 ? -1 : quota;
        *ret_period = period;
        return 0;
}

/* v1 CFS bandwidth as the kernel compares it between a group and its
 * descendants (to_ratio() in kernel/sched): quota << 20 / period, both in
 * ns. -1 for no quota. */
static int64_t bw_ratio(long long quota_us, unsigned long period_us) {
        if (quota_us < 0 || period_us == 0)
                return -1;
        return (int64_t) (((uint64_t) quota_us * 1000u << 20) / ((uint64_t) period_us * 1000u));
}

/* Clears (-1: "no quota of its own") the quota of every root-owned child
 * group of cgfd whose ratio is above limit, reading at most
 * AG_CLEAR_MAX_DIRS entries and going no deeper. On cgroup v1 the kernel
 * refuses a quota below a descendant's; the only groups below a capped one
 * that carry a quota are root's own: the user groups of a pool, whose caps
 * are written again at each member's login (and refused, with a log line,
 * when above the pool's). No user can make a group there (delegate=yes is
 * refused on v1), so a group the user owns is never looked into. Returns
 * the number of quotas cleared, or -errno. */
static int clear_children_above(int cgfd, int64_t limit) {
        unsigned seen = 0, cleared = 0;
        struct dirent *de;
        DIR *d;
        int r;

        r = ag_opendir_dup(cgfd, &d);
        if (r < 0)
                return r;
        while ((de = next_child(d)) && seen++ < AG_CLEAR_MAX_DIRS) {
                _cleanup_close_ int fd = -1;
                unsigned long period;
                long long quota;
                struct stat st;

                if (ag_cg_open(dirfd(d), de->d_name, &fd) < 0 || fstat(fd, &st) < 0 || st.st_uid != 0)
                        continue;
                if (read_bandwidth(fd, &quota, &period) < 0 || quota < 0 || bw_ratio(quota, period) <= limit)
                        continue;
                if (ag_write_file(fd, "cpu.cfs_quota_us", "-1") >= 0)
                        cleared++;
        }
        closedir(d);
        return (int) cleared;
}

/* Writes one v1 bandwidth file. When the kernel refuses it (EINVAL: a
 * child group of root's has a larger quota), clears those quotas and tries
 * once more. */
static int write_bandwidth(int cgfd, const char *file, const char *value, int64_t limit) {
        int r;

        r = ag_write_file(cgfd, file, value);
        if (r != -EINVAL || limit < 0 || clear_children_above(cgfd, limit) <= 0)
                return r;
        return ag_write_file(cgfd, file, value);
}

/* Sets a v1 group's quota and period so that no step leaves it less capped
 * than before or than asked: the quota a failed write leaves behind is
 * never above either. quota -1: no cap. */
static int v1_apply_bandwidth(int cgfd, long long quota, unsigned long period) {
        unsigned long cur_period;
        long long cur_quota;
        char buf[32];
        int r;

        r = read_bandwidth(cgfd, &cur_quota, &cur_period);
        if (r < 0)
                return r;
        if (cur_quota == quota && cur_period == period)
                return 0;

        if (quota < 0) {
                /* Removing the cap: nothing below can be in the way. */
                if (cur_quota >= 0) {
                        r = ag_write_file(cgfd, "cpu.cfs_quota_us", "-1");
                        if (r < 0)
                                return r;
                }
                if (cur_period == period)
                        return 0;
                snprintf(buf, sizeof buf, "%lu", period);
                return ag_write_file(cgfd, "cpu.cfs_period_us", buf);
        }

        if (cur_period != period) {
                if (cur_quota >= 0 && period < cur_period) {
                        /* A shorter period raises the ratio of the quota in
                         * place: first a quota that, over the new period,
                         * is no more than the old ratio and the new one. */
                        long long q = (long long) ((unsigned long long) cur_quota * period / cur_period);
                        if (q > quota)
                                q = quota;
                        if (q < AG_CPU_QUOTA_MIN_US)
                                q = AG_CPU_QUOTA_MIN_US;
                        snprintf(buf, sizeof buf, "%lld", q);
                        r = write_bandwidth(cgfd, "cpu.cfs_quota_us", buf, bw_ratio(q, cur_period));
                        if (r < 0)
                                return r;
                        cur_quota = q;
                }
                snprintf(buf, sizeof buf, "%lu", period);
                r = write_bandwidth(cgfd, "cpu.cfs_period_us", buf, bw_ratio(cur_quota, period));
                if (r < 0)
                        return r;
        }
        snprintf(buf, sizeof buf, "%lld", quota);
        return write_bandwidth(cgfd, "cpu.cfs_quota_us", buf, bw_ratio(quota, period));
}

/* Writes a group's weight (in the hierarchy's own unit: v2 cpu.weight, v1
 * cpu.shares; 0 leaves it) and idle flag (0 or 1; -1 leaves it). The kernel
 * refuses a weight change on an idle group, and setting or clearing idle
 * resets the weight (to the idle minimum, or to the default): so idle is
 * written first, cleared or set, and the weight only when the group is not
 * to be idle (or the kernel has no cpu.idle, Linux < 5.15). if_changed:
 * each file is read first and written only when it holds another value.
 * *ret_idle_missing: cpu.idle was to be written and does not exist. */
static int write_weight_idle(const AgHierarchy *h, int cgfd, unsigned long weight, int idle, bool if_changed,
                             bool *ret_idle_missing) {
        int (*write)(int, const char *, const char *) = if_changed ? write_if_changed : ag_write_file;
        bool idle_missing = false;
        char buf[32];
        int r;

        if (idle >= 0) {
                r = write(cgfd, "cpu.idle", idle ? "1" : "0");
                if (r == -ENOENT)
                        idle_missing = true;
                else if (r < 0)
                        return r;
        }
        if (weight > 0 && (idle != 1 || idle_missing)) {
                snprintf(buf, sizeof buf, "%lu", weight);
                r = write(cgfd, h->version == 2 ? "cpu.weight" : "cpu.shares", buf);
                if (r < 0)
                        return r;
        }
        *ret_idle_missing = idle_missing;
        return 0;
}

int ag_cg_set_weight_idle(const AgHierarchy *h, int cgfd, unsigned weight, int idle, bool *ret_idle_missing) {
        unsigned long w = h->version == 2 || weight == 0 ? weight : ag_weight_to_shares(weight);
        bool idle_missing = false;
        int r;

        assert(h);

        r = write_weight_idle(h, cgfd, w, idle, false, &idle_missing);
        if (r < 0)
                return r;
        if (ret_idle_missing)
                *ret_idle_missing = idle_missing;
        return 0;
}

int ag_cg_apply(const AgHierarchy *h, int cgfd, const AgCgValues *v, bool *ret_idle_missing) {
        bool idle_missing = false;
        char buf[64];
        int r;

        assert(h);
        assert(v);

        r = write_weight_idle(h, cgfd, v->weight, v->idle, true, &idle_missing);
        if (r < 0)
                return r;

        if (h->version == 2) {
                r = ag_format_cpu_max(v, buf, sizeof buf);
                if (r < 0)
                        return r;
                r = write_if_changed(cgfd, "cpu.max", buf);
                if (r < 0)
                        return r;
        } else {
                r = v1_apply_bandwidth(cgfd, v->quota_us >= 0 ? v->quota_us : -1, v->period_us);
                if (r < 0)
                        return r;
        }

        if (ret_idle_missing)
                *ret_idle_missing = idle_missing && v->idle;
        return 0;
}

int ag_cg_apply_new(const AgHierarchy *h, int cgfd, const AgCgValues *v, bool *ret_idle_missing) {
        assert(h);

        /* What the kernel gives every new cpu cgroup: weight 100 (v1 shares
         * 1024), no quota, the 100 ms period, not idle. */
        unsigned long weight = h->version == 2 ? 100 : 1024;

        if (!v->idle && v->weight == weight && v->quota_us < 0 && v->period_us == AG_CPU_PERIOD_US) {
                if (ret_idle_missing)
                        *ret_idle_missing = false;
                return 0;
        }
        return ag_cg_apply(h, cgfd, v, ret_idle_missing);
}

/* Reads a /proc file whole (its size is not known beforehand) into a
 * NUL-terminated heap buffer, with plain read(2)s. */
static int read_proc_file(const char *fn, char **ret) {
        _cleanup_close_ int fd = -1;
        size_t size;

        fd = open(fn, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return ag_read_all(fd, 2047, 1024 * 1024 - 2, ret, &size);
}

/* Does one line of /proc/PID/cgroup (split into ctrl and its hierarchy ID
 * in line) name the hierarchy of controller (NULL: the v2 line "0::")? */
static bool line_matches(const char *line, const char *ctrl, const char *controller) {
        return !controller ? (strncmp(line, "0:", 2) == 0 && *ctrl == 0) : ag_has_token(ctrl, ",", controller);
}

/* The paths of pid (0: the caller) in two hierarchies from one read of
 * /proc/PID/cgroup: ret_first gets the line of controller first (NULL: the
 * v2 line "0::", else the v1 line whose controller list has it), and
 * ret_second (when not NULL) the v1 line of controller second, left
 * untouched when there is none. -ENOENT when the first is missing. */
static int pid_paths(pid_t pid, const char *first, char **ret_first, const char *second, char **ret_second) {
        _cleanup_free_ char *text = NULL, *a = NULL, *b = NULL;
        char fn[64], *line, *next;
        int r;

        if (pid > 0)
                snprintf(fn, sizeof fn, "/proc/%" PRIiMAX "/cgroup", (intmax_t) pid);
        else
                snprintf(fn, sizeof fn, "/proc/self/cgroup");
        r = read_proc_file(fn, &text);
        if (r < 0)
                return r;

        for (line = text; line && *line && (!a || (ret_second && !b)); line = next) {
                char *ctrl, *path;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                ctrl = strchr(line, ':');
                if (!ctrl)
                        continue;
                ctrl++;
                path = strchr(ctrl, ':');
                if (!path)
                        continue;
                *path++ = 0;
                /* Current kernels fail the whole read (ENAMETOOLONG, above)
                 * when a path is PATH_MAX - 1 bytes or more; one that cut it
                 * instead would show a path naming some other group, or none. */
                bool cut = strlen(path) >= PATH_MAX - 1;
                if (!a && line_matches(line, ctrl, first)) {
                        if (cut)
                                return -ENAMETOOLONG;
                        if (!(a = strdup(path)))
                                return -ENOMEM;
                }
                if (ret_second && !b && !cut && second && line_matches(line, ctrl, second) && !(b = strdup(path)))
                        return -ENOMEM;
        }
        if (!a)
                return -ENOENT;
        *ret_first = TAKE_PTR(a);
        if (ret_second && b)
                *ret_second = TAKE_PTR(b);
        return 0;
}

int ag_cg_pid_path(const AgHierarchy *h, pid_t pid, char **ret) {
        return pid_paths(pid, h->version == 2 ? NULL : "cpu", ret, NULL, NULL);
}

int ag_cg_pid_paths(const AgHierarchy *h, pid_t pid, char **ret, char **ret_cpuacct) {
        return pid_paths(pid, h->version == 2 ? NULL : "cpu", ret, "cpuacct", ret_cpuacct);
}

int ag_cg_pid_controller_path(pid_t pid, const char *controller, char **ret) {
        if (!controller)
                return -EINVAL;
        return pid_paths(pid, controller, ret, NULL, NULL);
}

bool ag_cg_no_children(int cgfd) {
        struct stat st;

        /* cgroupfs (kernfs) keeps 2 + the number of child directories in a
         * directory's link count. Some filesystems leave it at 1 ("not
         * counted"): only 2 says "none". */
        return fstat(cgfd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 2;
}

int ag_cg_count_children(int cgfd) {
        struct stat st;

        if (fstat(cgfd, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode) || st.st_nlink < 2)
                return -EOPNOTSUPP;
        return st.st_nlink - 2 > INT32_MAX ? INT32_MAX : (int) (st.st_nlink - 2);
}

static int budget_take(unsigned *budget);

static int move_one(pid_t pid, void *userdata) {
        int r = ag_cg_attach(*(const int *) userdata, pid);

        /* gone meanwhile, or refused (a real-time task on v1): it stays */
        return r == -ESRCH || r == -EINVAL || r == -EBUSY || r == -EPERM ? -ESRCH : r;
}

int ag_cg_move_procs_below(int dirfd, const char *name, int destfd, unsigned max_depth, unsigned *budget) {
        _cleanup_close_ int fd = -1;
        struct dirent *de;
        int r, moved;
        DIR *d;

        r = budget_take(budget);
        if (r < 0)
                return r;
        r = ag_cg_open(dirfd, name, &fd);
        if (r < 0)
                return r;
        moved = ag_cg_foreach_proc(fd, AG_CG_MOVE_MAX, move_one, &destfd);
        if (moved < 0)
                moved = 0;
        if (max_depth == 0 || ag_cg_no_children(fd))
                return moved;
        r = ag_opendir_dup(fd, &d);
        if (r < 0)
                return moved;
        while ((!budget || *budget > 0) && (de = next_child(d))) {
                r = ag_cg_move_procs_below(fd, de->d_name, destfd, max_depth - 1, budget);
                if (r > 0)
                        moved += r;
        }
        closedir(d);
        return moved;
}

static int remove_below(int fd, unsigned depth, unsigned *budget, unsigned *removed) {
        DIR *d;
        struct dirent *de;
        int r;

        if (depth == 0 || ag_cg_no_children(fd))
                return 0;
        r = ag_opendir_dup(fd, &d);
        if (r < 0)
                return r;
        /* no further than the budget: a user may have made any number of groups */
        while ((!budget || *budget > 0) && (de = next_child(d)))
                (void) ag_cg_remove_empty(fd, de->d_name, depth - 1, budget, removed);
        closedir(d);
        return 0;
}

/* Takes one directory from *budget (NULL: no bound); -E2BIG when spent. */
static int budget_take(unsigned *budget) {
        if (!budget)
                return 0;
        if (*budget == 0)
                return -E2BIG;
        (*budget)--;
        return 0;
}

int ag_cg_remove_empty(int dirfd, const char *name, unsigned max_depth, unsigned *budget,
                       unsigned *ret_removed) {
        _cleanup_close_ int fd = -1;
        int r;

        r = budget_take(budget);
        if (r < 0)
                return r;
        /* Most groups met here are empty leaves: one rmdir removes them. Only
         * when it fails (children, processes, anything else) is the group
         * opened and walked. */
        r = ag_cg_rmdir_or_open(dirfd, name, &fd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (r > 0) {
                if (ret_removed)
                        (*ret_removed)++;
                return 0;
        }
        r = remove_below(fd, max_depth, budget, ret_removed);
        if (r < 0)
                return r;
        fd = safe_close(fd);
        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0) {
                if (errno == ENOENT)
                        return 0;
                if (errno == ENOTEMPTY)
                        return -EBUSY;
                return negative_errno();
        }
        if (ret_removed)
                (*ret_removed)++;
        return 0;
}

int ag_cg_subtree_populated(int dirfd, const char *name, unsigned max_depth, unsigned *budget) {
        _cleanup_close_ int fd = -1;
        struct dirent *de;
        DIR *d;
        int r;

        r = budget_take(budget);
        if (r < 0)
                return r;
        r = ag_cg_open(dirfd, name, &fd);
        if (r < 0)
                return r;
        r = ag_cg_count_procs(fd);
        if (r != 0)
                return r < 0 ? r : 1;
        if (ag_cg_no_children(fd))
                return 0;

        r = ag_opendir_dup(fd, &d);
        if (r < 0)
                return r;
        r = 0;
        while (r == 0 && (de = next_child(d))) {
                if (max_depth == 0) {
                        r = 1;  /* a group deeper than we look: count it as in use */
                        break;
                }
                r = ag_cg_subtree_populated(fd, de->d_name, max_depth - 1, budget);
                if (r == -ENOENT)
                        r = 0;
        }
        closedir(d);
        return r;
}

int ag_cg_foreach_proc(int cgfd, unsigned max, int (*fn)(pid_t pid, void *userdata), void *userdata) {
        _cleanup_close_ int fd = -1;
        char *line = NULL;
        size_t allocated = 0;
        unsigned n = 0;
        int r = 0;
        FILE *f;

        fd = openat(cgfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "re");
        if (!f)
                return negative_errno();
        fd = -1;
        while ((max == 0 || n < max) && getline(&line, &allocated, f) > 0) {
                unsigned long pid;

                line[strcspn(line, "\n")] = 0;
                if (ag_safe_atoul(line, INT32_MAX, &pid) < 0 || pid == 0)
                        continue;
                r = fn((pid_t) pid, userdata);
                if (r == -ESRCH) {
                        r = 0;          /* exited meanwhile */
                        continue;
                }
                if (r < 0)
                        break;
                n++;
        }
        free(line);
        fclose(f);
        return r < 0 ? r : (int) n;
}

int ag_cg_count_procs(int cgfd) {
        _cleanup_close_ int fd = -1;
        char buf[4096];
        ssize_t n;
        int count = 0;

        fd = openat(cgfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        while ((n = read(fd, buf, sizeof buf)) > 0)
                for (ssize_t i = 0; i < n; i++)
                        if (buf[i] == '\n')
                                count++;
        if (n < 0)
                return negative_errno();
        return count;
}
