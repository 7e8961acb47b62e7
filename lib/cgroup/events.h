/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one event sink of the library. Nothing in lib/ logs: what goes wrong
 * without failing the call (a cap the kernel refused, a leaf it would not
 * make, no CPU accounting...) is told to warn where it happens, and every
 * group a sweep removes is told to removed. The caller passes one AgEvents
 * (NULL: nobody listens) and turns the events into its own lines: the PAM
 * module into pam_syslog lines and audit records (pam_autogroup/events.c),
 * "autogroup gc" into its output, the watcher of a closed session into the
 * module's lines again. A call that fails may have told warn before it
 * failed: a caller reports warnings of a call that succeeded. */

#include <stdbool.h>
#include <stddef.h>

struct AgCpuUsage;

/* What a warning is about; error is the -errno, detail as below. */
typedef enum AgWarn {
        AG_WARN_LATENCY,               /* the latency class could not be set on the calling thread */
        AG_WARN_POLICY,                /* the kernel refused the user's or the pool's cpu policy (the
                                        * group keeps what it had, never less capped); detail: which
                                        * ("set the user group's cpu policy", "set the pool group's...") */
        AG_WARN_NO_CPU_IDLE,           /* idle yes, on a kernel without cpu.idle (before 5.15): not
                                        * applied, the rest of the policy is */
        AG_WARN_LEAVES,                /* the kernel refused a leaf: at open the session has the ones made
                                        * before; at close a free leaf removed could not be made again */
        AG_WARN_DELEGATE,              /* delegate asked, but the session's bounds (cgroup.max.descendants,
                                        * cgroup.max.depth) could not be written: not delegated */
        AG_WARN_DELEGATE_V1,           /* delegate asked on cgroup v1: refused, the session stays root's
                                        * (a user's own sub-groups there could hold off a cap: the
                                        * kernel refuses a quota below a descendant's) */
        AG_WARN_ACCT,                  /* no CPU accounting for the session; detail: the step that
                                        * failed, NULL when there was no memory for it at all */
        AG_WARN_SHARED,                /* the login got no session of its own and shares the user's
                                        * group "shared" (place.h), under the user's policy; error:
                                        * why (-EUSERS: sessions-max reached), detail: the step that
                                        * failed, NULL for sessions-max */
        AG_WARN_LANE,                  /* the user's latency lane (lane.h) could not be made or set up
                                        * at open (the login is grouped; run keeps the class leaves), or
                                        * at close could not be removed (-EBUSY: it holds processes, left
                                        * for a later close or gc); detail: the step */
        _AG_WARN_MAX,
} AgWarn;

typedef struct AgEvents {
        void (*warn)(void *userdata, AgWarn what, int error, const char *detail);
        /* A group a sweep removed; path relative to the hierarchy. usage:
         * for a session group removed after its login's close (a session
         * that was still lingering then), what it used up to its removal,
         * read just before it (lib/cgroup/acct.h; fields -1 where unknown);
         * for a latency lane ("/<root>.lane-<uid>", lane.h) with CPU time of
         * its own (v1 cpu,cpuacct), what it used since it was made; NULL
         * for every other group, and for the session a close or its
         * watcher removes itself (they read its figures on their own). */
        void (*removed)(void *userdata, const char *path, const struct AgCpuUsage *usage);
        void *userdata;
} AgEvents;

static inline void ag_events_warn(const AgEvents *e, AgWarn what, int error, const char *detail) {
        if (e && e->warn)
                e->warn(e->userdata, what, error, detail);
}

static inline void ag_events_removed(const AgEvents *e, const char *path, const struct AgCpuUsage *usage) {
        if (e && e->removed)
                e->removed(e->userdata, path, usage);
}

/* Does anyone listen to removed? (A sweep reads a session's CPU time only then.) */
static inline bool ag_events_want_removed(const AgEvents *e) {
        return e && e->removed;
}
