/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Direct cgroupfs access, relative to directory file descriptors.
 *
 * Every directory is opened with O_DIRECTORY|O_NOFOLLOW, every file with
 * O_NOFOLLOW, and paths are walked one component at a time: nothing here
 * follows a symbolic link or a path string a user could have influenced. */

#include <stdbool.h>
#include <sys/types.h>

#include "policy.h"

/* v1: is the cpuacct controller in the cpu hierarchy (cpu,cpuacct)? Told by
 * finding the hierarchy, so that CPU accounting need not look again. */
typedef enum AgCpuacctPlace {
        AG_CPUACCT_UNKNOWN = 0,        /* not looked at (v2, or a hierarchy described by hand) */
        AG_CPUACCT_WITH_CPU,           /* cpuacct.usage in the cpu hierarchy's root */
        AG_CPUACCT_APART,              /* not there: a hierarchy of its own, or none */
} AgCpuacctPlace;

typedef struct AgHierarchy {
        int version;                   /* 1 or 2 */
        char *mount;                   /* mount point of the hierarchy that has (or should have) cpu */
        bool has_cpu;                  /* v2: "cpu" in the root's cgroup.controllers; v1: always */
        AgCpuacctPlace cpuacct;        /* v1 only */
} AgHierarchy;

/* Finds the cpu hierarchy from a mountinfo file (NULL: /proc/self/mountinfo).
 * Prefers a cgroup2 mount whose root offers "cpu", then a v1 mount with the cpu
 * controller, then a cgroup2 mount without cpu (has_cpu false). -ENOENT when
 * no cgroup filesystem is mounted. With NULL, the usual mount points
 * (/sys/fs/cgroup, /sys/fs/cgroup/cpu, ...) are asked first with statfs and
 * mountinfo is read only when none of them is the root of a hierarchy with
 * cpu. */
int ag_hierarchy_find(const char *mountinfo, AgHierarchy **ret);

/* Uses the cgroup filesystem mounted at path (statfs decides the version). */
int ag_hierarchy_from_mount(const char *path, AgHierarchy **ret);

AgHierarchy *ag_hierarchy_free(AgHierarchy *h);

/* Opens the hierarchy's mount point as a directory fd. */
int ag_hierarchy_open(const AgHierarchy *h, int *ret_fd);
/* The same for what works on cgroup v2 only (systemd's units, containers):
 * -EOPNOTSUPP on a v1 hierarchy. */
int ag_hierarchy_open_v2(const AgHierarchy *h, int *ret_fd);

/* Opens the group at path ("/a/b/c") in the hierarchy (ag_cg_open_path). */
int ag_hierarchy_open_path(const AgHierarchy *h, const char *path, int *ret_fd);

/* Finds the root of a v1 hierarchy that has the cpuacct controller without
 * cpu (cpuacct mounted on its own): /sys/fs/cgroup/cpuacct when it is one,
 * else from /proc/self/mountinfo. -ENOENT when there is none. */
int ag_cpuacct_mount_find(char **ret_mount);

/* Splits one mountinfo line. Pointers go into line, which is modified;
 * octal escapes in the mount point are decoded. */
int ag_mountinfo_parse_line(char *line, char **ret_root, char **ret_mountpoint,
                            char **ret_fstype, char **ret_superopts);

/* Opens name below dirfd as a directory, never following a symlink. */
int ag_cg_open(int dirfd, const char *name, int *ret_fd);
/* The same where a missing group is no error: 1 when opened, 0 when name
 * does not exist (*ret_fd untouched), or -errno. */
int ag_cg_open_if_exists(int dirfd, const char *name, int *ret_fd);
/* Removes dirfd/name with one rmdir when it is a group without processes
 * or children, else opens it: 1 when removed, 0 when it stays (*ret_fd is
 * its fd), -ENOENT when it does not exist, or another -errno. */
int ag_cg_rmdir_or_open(int dirfd, const char *name, int *ret_fd);

/* Is the cgroup path at prefix or below it ("/a/b" is below "/a", "/ab" is not)? */
bool ag_cg_path_is_below(const char *path, const char *prefix);

/* mkdirat + open; EEXIST counts as success. *ret_created tells which. */
int ag_cg_mkdir_open(int dirfd, const char *name, bool *ret_created, int *ret_fd);
/* The same for a group of root's layout: one made now gets mode 0755,
 * whatever the caller's umask. */
int ag_cg_mkdir_open_0755(int dirfd, const char *name, bool *ret_created, int *ret_fd);
/* Gives the directory fd mode 0755 unless it has it: 1 when the mode had
 * to change (the caller's umask took bits away), 0 when not, or -errno. */
int ag_cg_mode_0755(int fd);

/* Walks a cgroup path ("/a/b/c") below rootfd component by component. */
int ag_cg_open_path(int rootfd, const char *path, int *ret_fd);

/* Moves a process into the cgroup (cgroup.procs). */
int ag_cg_attach(int cgfd, pid_t pid);

/* Hands the cgroup to uid:gid the way cgroup delegation expects: the
 * directory, cgroup.procs, and on v2 cgroup.threads and cgroup.subtree_control,
 * on v1 tasks. Never any cpu.* file. */
int ag_cg_delegate(const AgHierarchy *h, int cgfd, uid_t uid, gid_t gid);

/* Hands only the group's cgroup.procs to uid:gid, the one file the kernel
 * checks for a move into the group (on cgroup v2 also for a move below it,
 * as the common ancestor): the directory and every other file stay root's. */
int ag_cg_grant_procs(int cgfd, uid_t uid, gid_t gid);

/* Does the controller list file (v2 "cgroup.controllers" or
 * "cgroup.subtree_control") of the group list cpu? 1 yes, 0 no, or -errno. */
int ag_cg_lists_cpu(int cgfd, const char *file);

/* v2: makes sure "cpu" is in cgroup.subtree_control. A no-op on v1. */
int ag_cg_enable_cpu(const AgHierarchy *h, int cgfd);

/* Writes weight, cap and idle flag. A missing cpu.idle is ignored (old
 * kernels) and reported through *ret_idle_missing when not NULL. */
int ag_cg_apply(const AgHierarchy *h, int cgfd, const AgCgValues *v, bool *ret_idle_missing);

/* Sets the weight (cpu.weight units, 1..10000, written as cpu.shares on v1;
 * 0 leaves it) and the idle flag (0 or 1; -1 leaves it) of a group, in the
 * order ag_cg_apply uses: idle first, the weight only when the group is not
 * to be idle. Each file is written even when it holds the value already, so
 * that a group the caller may not change is reported as such. A missing
 * cpu.idle is ignored (old kernels) and reported through *ret_idle_missing
 * when not NULL. */
int ag_cg_set_weight_idle(const AgHierarchy *h, int cgfd, unsigned weight, int idle, bool *ret_idle_missing);

/* The same for a group made just now, which holds the kernel's defaults:
 * nothing is read, and only values that differ from them are written;
 * *ret_idle_missing (may be NULL) as ag_cg_apply gives it. */
int ag_cg_apply_new(const AgHierarchy *h, int cgfd, const AgCgValues *v, bool *ret_idle_missing);

/* Reads the cgroup path of pid (0: the caller) in the hierarchy from
 * /proc/PID/cgroup. -ENAMETOOLONG when a path of pid is PATH_MAX - 1 bytes
 * or more (current kernels fail the read; a cut path would name another
 * group). */
int ag_cg_pid_path(const AgHierarchy *h, pid_t pid, char **ret);
/* The same, and from the same read of /proc/PID/cgroup the path in the v1
 * hierarchy with cpuacct into *ret_cpuacct (when not NULL; left untouched
 * when the process has no such line, as on cgroup v2). */
int ag_cg_pid_paths(const AgHierarchy *h, pid_t pid, char **ret, char **ret_cpuacct);
/* The same in the v1 hierarchy that has controller (e.g. "cpuacct"). */
int ag_cg_pid_controller_path(pid_t pid, const char *controller, char **ret);

/* Removes dirfd/name and every empty cgroup below it, bottom up, without
 * following symlinks, at most max_depth levels deep and visiting at most
 * *budget directories (decremented as it goes). Cgroups that still hold
 * processes stay. Returns 0 when name is gone (removed now or already
 * missing), -EBUSY when it stayed, or another -errno. *ret_removed (may be
 * NULL) is increased by the number of directories removed. */
int ag_cg_remove_empty(int dirfd, const char *name, unsigned max_depth, unsigned *budget,
                       unsigned *ret_removed);

/* Does dirfd/name or any cgroup below it (at most max_depth levels, *budget
 * directories) hold a process? 1 yes (or too deep/wide to tell), 0 no, -errno. */
int ag_cg_subtree_populated(int dirfd, const char *name, unsigned max_depth, unsigned *budget);

/* True when the cgroup certainly has no child groups (its link count says
 * so); false when it has, or when that cannot be told. */
bool ag_cg_no_children(int cgfd);
/* The number of child groups, from the link count (no directory read);
 * -EOPNOTSUPP where the filesystem does not count them. */
int ag_cg_count_children(int cgfd);

/* Moves every process of dirfd/name and of the groups below it (at most
 * max_depth levels, *budget directories, AG_CG_MOVE_MAX processes a group)
 * into the group destfd, as root. A process the kernel refuses to move (a
 * real-time task on v1) stays. Returns the number moved or -errno. */
#define AG_CG_MOVE_MAX 4096
int ag_cg_move_procs_below(int dirfd, const char *name, int destfd, unsigned max_depth, unsigned *budget);

/* Calls fn for each process listed in the cgroup's cgroup.procs, from one
 * read of the list, until fn has taken max of them (0: no bound). A process
 * fn finds gone (-ESRCH) is skipped; any other error of fn ends the walk.
 * Returns the number of processes fn took, or -errno. */
int ag_cg_foreach_proc(int cgfd, unsigned max, int (*fn)(pid_t pid, void *userdata), void *userdata);

/* Counts processes listed in cgroup.procs (of this cgroup only). */
int ag_cg_count_procs(int cgfd);
