/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Latency classes: the class -> sched_attr mapping and the
 * sched_getattr/sched_setattr system calls. See latency.h. */

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "latency.h"
#include "util.h"

#ifndef SCHED_BATCH
#define SCHED_BATCH 3
#endif
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif
#define AG_SCHED_ATTR_SIZE_VER0 48

/* Threads of one process changed at most (a bound, not a limit anyone meets). */
#define MAX_THREADS 65536

static const char *const result_table[_AG_LATENCY_RESULT_MAX] = {
        [AG_LATENCY_APPLIED] = "applied",
        [AG_LATENCY_NO_SLICES] = "the kernel has no custom slices (Linux 6.12 or later needed): policy only",
        [AG_LATENCY_NOT_FAIR] = "a real-time, deadline or SCHED_IDLE task: left alone",
};

AG_DEFINE_STRING_TABLE_TO_STRING(ag_latency_result_to_string, AgLatencyResult, result_table)

int ag_latency_policy(AgLatency l) {
        return l == AG_LATENCY_BATCH ? SCHED_BATCH : SCHED_OTHER;
}

uint64_t ag_latency_slice_ns(AgLatency l) {
        switch (l) {
        case AG_LATENCY_BATCH: return AG_SLICE_BATCH_NS;
        case AG_LATENCY_INTERACTIVE: return AG_SLICE_INTERACTIVE_NS;
        case AG_LATENCY_AUDIO: return AG_SLICE_AUDIO_NS;
        default: return 0;
        }
}

unsigned ag_latency_leaf_weight(AgLatency l, unsigned level) {
        static const unsigned table[AG_INTERACTIVE_MAX + 1][_AG_LATENCY_MAX] = {
                [1] = {
                        [AG_LATENCY_BATCH] = AG_WEIGHT_DEFAULT,
                        [AG_LATENCY_NORMAL] = AG_WEIGHT_DEFAULT,
                        [AG_LATENCY_INTERACTIVE] = AG_LEAF_WEIGHT_INTERACTIVE_1,
                        [AG_LATENCY_AUDIO] = AG_LEAF_WEIGHT_AUDIO_1,
                },
                [2] = {
                        [AG_LATENCY_BATCH] = AG_WEIGHT_DEFAULT,
                        [AG_LATENCY_NORMAL] = AG_WEIGHT_DEFAULT,
                        [AG_LATENCY_INTERACTIVE] = AG_LEAF_WEIGHT_INTERACTIVE_2,
                        [AG_LATENCY_AUDIO] = AG_LEAF_WEIGHT_AUDIO_2,
                },
        };

        if (level > AG_INTERACTIVE_MAX || (unsigned) l >= _AG_LATENCY_MAX)
                return 0;
        return table[level][l];
}

unsigned ag_latency_pick_leaf_weight(unsigned weight, bool has_class, AgLatency l, unsigned level) {
        if (weight > 0)
                return weight;
        return has_class ? ag_latency_leaf_weight(l, level) : 0;
}

unsigned ag_interactive_from_string(const char *s) {
        if (!s || s[0] < '0' || s[0] > '0' + AG_INTERACTIVE_MAX || s[1])
                return 0;
        return (unsigned) (s[0] - '0');
}

void ag_latency_describe(AgLatency l, char *buf, size_t size) {
        uint64_t ns = ag_latency_slice_ns(l);
        const char *policy = ag_latency_policy(l) == SCHED_BATCH ? "SCHED_BATCH" : "SCHED_OTHER";

        assert(buf);

        if ((unsigned) l >= _AG_LATENCY_MAX)
                snprintf(buf, size, "?");
        else if (ns == 0)
                snprintf(buf, size, "%s, the kernel's default slice", policy);
        else if (ns % 1000000 == 0)
                snprintf(buf, size, "%s, slice %" PRIu64 " ms", policy, ns / 1000000);
        else
                snprintf(buf, size, "%s, slice %" PRIu64 ".%" PRIu64 " ms", policy, ns / 1000000,
                         ns % 1000000 / 100000);
}

int ag_sched_getattr(pid_t tid, AgSchedAttr *ret) {
        AgSchedAttr a = {};

        if (syscall(SYS_sched_getattr, (long) tid, &a, (unsigned) AG_SCHED_ATTR_SIZE_VER0, 0U) < 0)
                return negative_errno();
        *ret = a;
        return 0;
}

int ag_sched_setattr(pid_t tid, const AgSchedAttr *attr) {
        AgSchedAttr a = *attr;

        assert(attr);

        a.size = AG_SCHED_ATTR_SIZE_VER0;
        if (syscall(SYS_sched_setattr, (long) tid, &a, 0U) < 0)
                return negative_errno();
        return 0;
}

int ag_latency_apply(pid_t tid, AgLatency l, AgLatencyResult *ret_result) {
        AgSchedAttr cur, want, back;
        uint64_t slice;
        int r;

        if ((unsigned) l >= _AG_LATENCY_MAX)
                return -EINVAL;
        r = ag_sched_getattr(tid, &cur);
        if (r < 0)
                return r;
        if (cur.sched_policy != SCHED_OTHER && cur.sched_policy != SCHED_BATCH) {
                *ret_result = AG_LATENCY_NOT_FAIR;
                return 0;
        }

        slice = ag_latency_slice_ns(l);
        want = (AgSchedAttr) {
                .sched_policy = (uint32_t) ag_latency_policy(l),
                /* An unprivileged task may not clear its reset-on-fork flag. */
                .sched_flags = cur.sched_flags & AG_SCHED_FLAG_RESET_ON_FORK,
                /* Keep the weight: a class changes when a task runs, not how much. */
                .sched_nice = cur.sched_nice,
                .sched_runtime = slice,
        };
        r = ag_sched_setattr(tid, &want);
        if (r == -EINVAL && slice != 0) {
                /* A kernel that validates sched_runtime but has no custom
                 * slices for fair tasks: the policy alone. */
                want.sched_runtime = 0;
                r = ag_sched_setattr(tid, &want);
                if (r < 0)
                        return r;
                *ret_result = AG_LATENCY_NO_SLICES;
                return 0;
        }
        if (r < 0)
                return r;

        /* Before 6.12 the kernel ignores sched_runtime of fair tasks (and
         * reports 0): read it back. */
        if (slice != 0 && (ag_sched_getattr(tid, &back) < 0 || back.sched_runtime != slice)) {
                *ret_result = AG_LATENCY_NO_SLICES;
                return 0;
        }
        *ret_result = AG_LATENCY_APPLIED;
        return 0;
}

static bool is_tid_name(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

int ag_latency_apply_process(pid_t pid, AgLatency l, AgLatencyResult *ret_result) {
        AgLatencyResult first = AG_LATENCY_APPLIED, res;
        _cleanup_close_ int fd = -1;
        char fn[64];
        struct dirent *de;
        unsigned n = 0;
        DIR *d;
        int r = 0;

        if (pid <= 0)
                return -EINVAL;
        snprintf(fn, sizeof fn, "/proc/%" PRIiMAX "/task", (intmax_t) pid);
        fd = open(fn, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        r = ag_opendir_dup(fd, &d);
        if (r < 0)
                return r;
        /* The main thread first: its answer is the process's. */
        r = ag_latency_apply(pid, l, &first);
        if (r < 0) {
                closedir(d);
                return r;
        }
        while ((de = readdir(d)) && n++ < MAX_THREADS) {
                unsigned long tid;

                if (!is_tid_name(de->d_name) || ag_safe_atoul(de->d_name, INT32_MAX, &tid) < 0 ||
                    (pid_t) tid == pid)
                        continue;
                r = ag_latency_apply((pid_t) tid, l, &res);
                if (r == -ESRCH) {
                        r = 0;          /* the thread ended */
                        continue;
                }
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0)
                return r;
        *ret_result = first;
        return 0;
}
