/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Latency classes: Con Kolivas's four "latency nice" levels mapped
 * to the EEVDF per-task slice of Linux 6.12+ (sched_setattr() with
 * sched_runtime for SCHED_OTHER/SCHED_BATCH). A slice changes how soon a task
 * runs after it wakes up, never how much CPU it gets: the weight (nice value)
 * is kept, so a class takes nothing from anyone. No privilege is needed to
 * set one on one's own tasks; it is inherited across fork and exec.
 *
 *   class            policy        sched_runtime (slice)
 *   0 batch          SCHED_BATCH   100 ms  (the longest the kernel allows)
 *   1 normal         SCHED_OTHER   0       (the kernel's default slice)
 *   2 interactive    SCHED_OTHER   0.5 ms
 *   3 audio          SCHED_OTHER   0.1 ms  (the shortest the kernel allows)
 *
 * Real-time, deadline and SCHED_IDLE tasks are left alone. A kernel without
 * custom slices (before 6.12) accepts and ignores sched_runtime or refuses it
 * with EINVAL; either way the policy part (SCHED_BATCH for class 0) still
 * applies and the caller is told (*ret_result is AG_LATENCY_NO_SLICES). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"

#define AG_SLICE_BATCH_NS       100000000ULL
#define AG_SLICE_INTERACTIVE_NS    500000ULL
#define AG_SLICE_AUDIO_NS          100000ULL

/* struct sched_attr as the kernel defines it (first version, 48 bytes):
 * glibc before 2.41 has neither the struct nor a wrapper. */
typedef struct AgSchedAttr {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime;
        uint64_t sched_deadline;
        uint64_t sched_period;
} AgSchedAttr;

#define AG_SCHED_FLAG_RESET_ON_FORK 0x01ULL

/* The item "interactive" (Con Kolivas's levels 0, 1 and 2 of desktop
 * interactivity): the weight of the leaf that "autogroup run --latency CLASS"
 * makes (and that "autogroup set --latency CLASS" changes), as v2 cpu.weight
 * (v1 cpu.shares = weight * 1024 / 100; the login leaf beside it has 100):
 *
 *   level   batch  normal  interactive  audio
 *   0       -      -       -            -       the leaf's weight is not touched
 *   1       100    100     200          400
 *   2       100    100     400          1000
 *
 * A leaf only divides its session's share, which the user group above it
 * (root's) bounds: the user's weight, cap and idle flag never change, so a
 * level takes nothing from other users. An explicit --weight wins. */
#define AG_LEAF_WEIGHT_INTERACTIVE_1   200U
#define AG_LEAF_WEIGHT_AUDIO_1         400U
#define AG_LEAF_WEIGHT_INTERACTIVE_2   400U
#define AG_LEAF_WEIGHT_AUDIO_2        1000U

/* The leaf weight of class l at level (0..AG_INTERACTIVE_MAX); 0 for "not
 * touched" (level 0, or out of range). */
unsigned ag_latency_leaf_weight(AgLatency l, unsigned level);

/* The weight a leaf gets from "autogroup run/set": weight when given (> 0),
 * else the table's for class l at level when has_class, else 0 (not
 * touched). */
unsigned ag_latency_pick_leaf_weight(unsigned weight, bool has_class, AgLatency l, unsigned level);

/* A level as "0", "1" or "2" (the module's AUTOGROUP_INTERACTIVE); 0 for NULL
 * or anything else. */
unsigned ag_interactive_from_string(const char *s);

/* The policy and slice of a class. */
int ag_latency_policy(AgLatency l);
uint64_t ag_latency_slice_ns(AgLatency l);

/* sched_getattr / sched_setattr of a thread (0: the calling thread). */
int ag_sched_getattr(pid_t tid, AgSchedAttr *ret);
int ag_sched_setattr(pid_t tid, const AgSchedAttr *attr);

typedef enum AgLatencyResult {
        AG_LATENCY_APPLIED,            /* policy and slice set */
        AG_LATENCY_NO_SLICES,          /* the kernel has no custom slices: policy only */
        AG_LATENCY_NOT_FAIR,           /* a real-time, deadline or SCHED_IDLE task: left alone */
        _AG_LATENCY_RESULT_MAX,
} AgLatencyResult;

const char *ag_latency_result_to_string(AgLatencyResult r);

/* Sets the class on one thread (0: the calling thread), keeping its nice
 * value and its reset-on-fork flag. Returns 0 with *ret_result set, or
 * -errno (-EPERM: not the caller's task; -ESRCH: gone). */
int ag_latency_apply(pid_t tid, AgLatency l, AgLatencyResult *ret_result);

/* The same for every thread of a process (pid > 0). *ret_result is the
 * first thread's; a thread that ended meanwhile is skipped. */
int ag_latency_apply_process(pid_t pid, AgLatency l, AgLatencyResult *ret_result);

/* Formats a slice for people: "0.1 ms", "100 ms", "the kernel's default". */
void ag_latency_describe(AgLatency l, char *buf, size_t size);
