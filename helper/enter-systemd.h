/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup enter" on logind hosts (pam_autogroup's systemd mode): a shell
 * that leads its setsid() session and still sits in its login's
 * session-N.scope is moved into a transient scope of the user's own manager,
 * user@UID.service/app.slice/autogroup-sid-<sid>.scope, with CPUWeight=100,
 * the way tmux >= 3.4 and VTE terminals place panes and tabs. The user's
 * manager does the move (asking the system manager for it, as for any of the
 * user's processes); no privilege is used. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "enter.h"
#include "env.h"

/* The backstop of "autogroup enter" on this path: at most two D-Bus attempts
 * of AG_TERMINAL_SCOPE_TIMEOUT_USEC each (lib/systemd/systemd.c bounds each one,
 * connect and authentication included) and half a second for the process to
 * arrive; should anything else block, an alarm ends the helper after this
 * many seconds, silently, with exit status 0 (the shell start goes on). */
#define AG_ENTER_SYSTEMD_DEADLINE_S 5

/* Arms that alarm: handler for SIGALRM, SIGALRM unblocked whatever mask the
 * caller handed down, alarm(seconds). handler must end the process with
 * async-signal-safe calls only. */
int ag_enter_deadline_arm(unsigned seconds, void (*handler)(int));

/* Waits, up to max_usec, until pid sits in the cgroup unit_path (as
 * ag_user_unit_path() gives it): the manager's job moves it once the start
 * of the unit was accepted. false when it did not arrive or is gone. */
bool ag_scope_wait_arrival(const AgHierarchy *h, pid_t pid, const char *unit_path, uint64_t max_usec);

/* Moves pid into its terminal scope when it leads its session, belongs to uid
 * (real, effective, saved and filesystem uid) and sits in one of uid's logind
 * session scopes; h must be the cgroup v2 hierarchy with cpu. The login's own
 * shell (the child, or grandchild through processes of the user, of the login
 * service: sshd, login, su) stays in the session scope (AG_ENTER_LOGIN_SHELL):
 * what it leaves behind at logout (a detached tmux server, nohup jobs) keeps
 * the logind session, and the user's manager, alive as before; nested
 * terminals (tmux panes, tabs, setsid shells) are the ones moved. A process
 * already in its scope is left alone (AG_ENTER_ALREADY); anywhere else,
 * nothing happens (AG_ENTER_NOT_MANAGED). When the manager cannot be reached
 * or refuses, *ret_result is AG_ENTER_SCOPE_FAILED and errbuf says why; the
 * call still succeeds. *ret_unit (may be NULL) is the scope's name for MOVED
 * and ALREADY. Returns < 0 only when the process cannot be inspected, with
 * *ret_what (may be NULL) naming the step. */
int ag_enter_systemd(const AgHierarchy *h, pid_t pid, uid_t uid, AgEnterResult *ret_result,
                     char **ret_unit, const char **ret_what, char *errbuf, size_t errsize);
