/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup run" and "autogroup set" in pam_autogroup's systemd mode
 * (AUTOGROUP_MODE=systemd, the caller in no cgroupfs session).
 *
 *   run [--latency CLASS] [--weight W] [--idle] -- CMD [ARGS...]
 *       the user's own manager (systemd --user) adopts the process into a
 *       transient scope user@UID.service/app.slice/autogroup-run-<pid>.scope
 *       with CPUWeight= from lib/config/latency.h's table (the class at the level of
 *       AUTOGROUP_INTERACTIVE; 100 at level 0), or --weight, or
 *       CPUWeight=idle for --idle; then the process takes the latency class
 *       and becomes CMD (exec), as systemd-run --scope does: CMD keeps the
 *       pid, the terminal's job control, its signals and its exit status.
 *       The request is made by a child process, which is killed when it has
 *       not answered within AG_RUN_SYSTEMD_DEADLINE_S: CMD then runs where it
 *       is, and one line on stderr says why (--verbose or not). The scope is a unit of the user's own
 *       manager, below user-UID.slice, whose weight, cap and idle flag are
 *       root's: it only divides the user's share.
 *   set --latency CLASS PID
 *       the class on the process, nothing more: a scope's weight is shared
 *       by every process in it, the session scope is logind's, and moving a
 *       running process would leave its children behind. --weight and
 *       --idle are refused (systemctl --user set-property does that for the
 *       user's own units).
 *
 * No privilege is used: the user's manager asks the system manager for the
 * move, as for any of the user's processes. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "enter-systemd.h"
#include "run.h"

/* The bound of the request (both D-Bus attempts of lib/systemd/systemd.c and the
 * wait for the process to arrive in its scope): the asking child is killed
 * after this many seconds. */
#define AG_RUN_SYSTEMD_DEADLINE_S AG_ENTER_SYSTEMD_DEADLINE_S

/* The CPUWeight= of the command's scope: --weight, else CPUWeight=idle for
 * --idle, else the table's for --latency at o->interactive, else
 * AG_TERMINAL_SCOPE_WEIGHT (100, the default weight, as a terminal's scope):
 * a scope without CPUWeight= is no scheduling group of its own, the user's
 * manager enables cpu for a unit only when something in it asks for it. */
uint64_t ag_run_systemd_weight(const AgRunOptions *o);

/* Has uid's manager (its sockets below runtime_dir, the user's
 * XDG_RUNTIME_DIR) put pid into a new transient scope of app.slice with
 * cpu_weight? The request runs in a child process killed after deadline_s;
 * then pid is waited for in the scope's cgroup (h: cgroup v2 with cpu).
 * 0 with the scope's cgroup path in unit (size bytes); -errno with a reason
 * in why: -ETIMEDOUT at the deadline, the manager's refusal, or a process
 * that did not arrive in time (the manager may still move it later). */
int ag_run_systemd_place(const AgHierarchy *h, const char *runtime_dir, pid_t pid, uid_t uid, uint64_t cpu_weight,
                         const char *description, unsigned deadline_s, char *unit, size_t size, char *why,
                         size_t why_size);

/* "autogroup run" in the systemd mode: runtime_dir NULL means
 * /run/user/<uid>. Does not return when CMD started; otherwise returns the
 * exit status (127: CMD could not be run, 1: the class could not be set). */
int ag_run_systemd(const AgHierarchy *h, const char *runtime_dir, const AgRunOptions *o, char **argv);

/* "autogroup set" in the systemd mode; returns the exit status. */
int ag_set_systemd(const AgRunOptions *o, const char *target);
