/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The environment variables the module exports to a login and the helper
 * reads back. Both are the user's to change: only hints, checked against the
 * process's real cgroup before use. */

/* /<root>[/pool-<name>]/user-<uid>[/<session>]: where the cgroupfs mode put
 * the login (checked by lib/cgroup/hint.c). */
#define AG_SESSION_ENV "AUTOGROUP_SESSION"

/* AG_MODE_ENV=AG_MODE_ENV_SYSTEMD: the systemd mode placed the login, so
 * "autogroup enter" asks the user's manager for a scope. Only a switch: where
 * a process sits is read from its real cgroup. */
#define AG_MODE_ENV         "AUTOGROUP_MODE"
#define AG_MODE_ENV_SYSTEMD "systemd"

/* AG_INTERACTIVE_ENV=0|1|2: the user's level of the item "interactive", for
 * "autogroup run/set --latency". The user's to change: it only picks leaf
 * weights inside the user's own session, which --weight can set to anything
 * anyway. */
#define AG_INTERACTIVE_ENV "AUTOGROUP_INTERACTIVE"
