/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cgroup v2 containers without systemd.
 *
 * Inside a container's cgroup namespace the hierarchy's root (what
 * /sys/fs/cgroup shows) is not the system's root cgroup but an ordinary one
 * that holds the container's processes. cpu is a threaded controller, so the
 * kernel does accept "+cpu" there, but a cgroup with processes and a
 * threaded controller enabled becomes a thread root: every child is then
 * "domain invalid", cpu cannot be enabled in it (EOPNOTSUPP) and no process
 * can move into it. That is the "no internal processes" rule in its
 * threaded form; no session can be made below such a root. The fix is the
 * one systemd-less container images apply by hand at start: move the
 * container's own processes into a leaf, then enable cpu for the children. */

#include <stdbool.h>

#include "cgroup.h"

#define AG_CONTAINER_LEAF "init"

/* Is the hierarchy's root a v2 cgroup that is not the system's root cgroup
 * (it has cgroup.type, which the real root lacks) and holds processes? Then
 * nothing below it can get cpu. 1 yes, 0 no, or -errno. */
int ag_container_root_blocked(const AgHierarchy *h);

/* Root only. Makes the hierarchy's root able to give cpu to its children:
 * when it is not the system's root cgroup and holds processes, takes cpu out
 * of its cgroup.subtree_control if it is there (a thread root), moves every
 * process into the leaf (created if missing, root-owned), then enables cpu.
 * *ret_moved: processes moved; *ret_changed: false when there was nothing
 * to do. -EOPNOTSUPP on v1 or when the root does not offer cpu; -EBUSY when
 * processes kept appearing in the root. */
int ag_container_init(const AgHierarchy *h, const char *leaf, unsigned *ret_moved, bool *ret_changed);
