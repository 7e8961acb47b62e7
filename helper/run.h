/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "env.h"

/* Latency classes: "autogroup run" and "autogroup set".
 *
 *   run [--latency CLASS] [--weight W] [--idle] -- CMD [ARGS...]
 *       makes a leaf <session>/run-<pid> of its own inside the caller's
 *       session, gives it the weight (and cpu.idle), starts CMD in it with the
 *       latency class, waits for it, and removes the leaf once it is empty.
 *       Without --weight, at interactive 1 or 2 the leaf of a class gets the
 *       weight of the table in lib/config/latency.h.
 *   set [--latency CLASS] [--weight W] [--idle yes|no] PID|LEAF
 *       changes a running process (its class; the weight and idle flag of
 *       the leaf it is in) or a leaf of the caller's session (every process
 *       in it gets the class).
 *
 * No privilege is used: the leaves are the user's own groups inside the
 * session the module delegated, so they can only divide the user's own share
 * (the session and user groups above are root's). Anything outside one of
 * the user's own sessions is refused; nothing follows a symlink. */

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"
#include "latency.h"

#define AG_RUN_LEAF_PREFIX "run-"
/* Entries of the session looked at when removing stale empty run-* leaves. */
#define AG_RUN_SWEEP_MAX 256

typedef struct AgRunOptions {
        bool set_latency;
        AgLatency latency;
        unsigned weight;               /* 0: leave as it is; else 1..10000 (v1: shares = weight * 1024 / 100) */
        int idle;                      /* -1: leave; 0 or 1: cpu.idle */
        bool verbose;
        unsigned interactive;          /* the item "interactive" (0..2): with --latency and no
                                        * --weight, the leaf gets ag_latency_leaf_weight() */
} AgRunOptions;


/* The weight the leaf gets: --weight when given, else the table's for the
 * class and level when --latency is given, else 0 (not touched). */
unsigned ag_run_leaf_weight(const AgRunOptions *o);

/* "autogroup VERB: note: latency class C: WHY" on stderr unless res is
 * AG_LATENCY_APPLIED. */
void ag_run_note_latency(const char *verb, AgLatency l, AgLatencyResult res);

/* "autogroup set" on one process: the class on pid when it is the caller's
 * (ag_pid_owned_by). -EPERM after "process N is not yours" on stderr;
 * other -errno without a message. */
int ag_set_own_process(pid_t pid, AgLatency l, AgLatencyResult *ret_res);

/* Is pid inside one of the caller's pam_autogroup sessions below root (the
 * cgroupfs mode)? run and set pick the systemd mode's way when it is not. */
bool ag_run_in_session(const AgHierarchy *h, const char *root, pid_t pid);

/* "autogroup run": returns the exit status for the command line (the
 * command's own, 128+N when it died of signal N, 1 or 127 when it could not
 * be started), messages go to stderr prefixed with "autogroup run: ". */
int ag_run(const AgHierarchy *h, const char *root, const AgRunOptions *o, char **argv);

/* "autogroup set": target is a PID or a leaf name of the caller's session.
 * Returns the exit status. */
int ag_set(const AgHierarchy *h, const char *root, const AgRunOptions *o, const char *target);
