/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers shared by the library, the module and the helper. */

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* Returns the value and leaves -1 behind, to hand an fd over to an owner. */
static inline int take_fd(int *fd) {
        int r = *fd;
        *fd = -1;
        return r;
}

static inline void *take_ptr_impl(void **p) {
        void *r = *p;
        *p = NULL;
        return r;
}
#define TAKE_PTR(p) take_ptr_impl((void **) &(p))

static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* Defines "const char *name(type i)": table[i] (a table of ELEMENTSOF
 * entries indexed by an enum), NULL when i is out of its range. */
#define AG_DEFINE_STRING_TABLE_TO_STRING(name, type, table)     \
        const char *name(type i) {                              \
                if ((size_t) i >= ELEMENTSOF(table))            \
                        return NULL;                            \
                return table[i];                                \
        }

/* Parses a decimal unsigned number with no sign, blanks or trailing garbage. */
int ag_safe_atoul(const char *s, unsigned long max, unsigned long *ret);

/* Descriptors closed later, together: a run of consecutive numbers (as
 * files opened one after the other get) in one close_range(2), not a
 * close(2) each. A reader of many small files (autogroup metrics) saves
 * one system call a file. At most AG_FD_BATCH_MAX are held. */
#define AG_FD_BATCH_MAX 128
typedef struct AgFdBatch {
        int fd[AG_FD_BATCH_MAX];
        size_t n;
} AgFdBatch;
/* Takes fd (>= 0) into b, closing the batch first when it is full; with b
 * NULL, closes fd now. */
void ag_fd_batch_add(AgFdBatch *b, int fd);
/* Closes every descriptor of b (b may be NULL). */
void ag_fd_batch_close(AgFdBatch *b);

/* Reads a whole small file relative to dirfd (no symlink following) into a
 * NUL-terminated buffer with a trailing newline stripped. */
int ag_read_small_file(int dirfd, const char *name, char *buf, size_t size);
/* The same, its descriptor left in batch (NULL: closed) */
int ag_read_small_file_batch(int dirfd, const char *name, char *buf, size_t size, AgFdBatch *batch);
/* Reads a small file relative to dirfd holding one signed decimal number
 * (a cgroup interface file such as cpu.weight or cpu.idle). -EINVAL when it
 * holds anything else. Its descriptor is left in batch (NULL: closed). */
int ag_read_ll(int dirfd, const char *name, long long *ret, AgFdBatch *batch);
/* The same for a path of several components below dirfd ("user-1000/
 * cpuacct.usage"): one open where the kernel has openat2, no symlink
 * followed in any component, nothing outside dirfd reached. */
int ag_read_ll_beneath(int dirfd, const char *path, long long *ret, AgFdBatch *batch);
/* Reads fd to its end into a NUL-terminated heap buffer (*ret, its length in
 * *ret_size), starting with room for hint bytes; -EFBIG when there is more
 * than max. */
int ag_read_all(int fd, size_t hint, size_t max, char **ret, size_t *ret_size);

/* Writes a short string to a file relative to dirfd in one write(2). */
int ag_write_file(int dirfd, const char *name, const char *value);

/* Is token one of the items of list, separated by any character of sep? */
bool ag_has_token(const char *list, const char *sep, const char *token);

/* Opens a directory stream on a duplicate of fd (fd stays the caller's). */
int ag_opendir_dup(int fd, DIR **ret);

/* The real, effective, saved and filesystem uids of pid, from /proc/PID/status. */
int ag_pid_uids(pid_t pid, uid_t ret_uids[static 4]);
/* Does pid belong to uid? The one rule of the helper: all four uids (real,
 * effective, saved, filesystem) are uid, so that a set-user-ID program the
 * user started (real uid the user's, effective root's) is never theirs to
 * move. 1 yes, 0 no, -errno (-ENOENT: gone). */
int ag_pid_owned_by(pid_t pid, uid_t uid);
/* The parent pid and session id of pid, from /proc/PID/stat. */
int ag_pid_parent_session(pid_t pid, pid_t *ret_ppid, pid_t *ret_sid);
/* Whether a login whose PAM_TTY is tty may have a terminal: an X display
 * (":0"), a character device below /dev ("/dev/pts/3", "tty1", "hvc0"), or
 * "ssh" (sshd sets it before it knows whether a pty follows). Not one: NULL,
 * "", and the names other clients set without a terminal ("cron", "ftp").
 * Looks only below /dev, without following a last symbolic link. */
bool ag_tty_is_terminal(const char *tty);
