/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd mode: on hosts where systemd and logind own the cgroup tree,
 * pam_autogroup writes nothing into cgroupfs. It applies the same policy in
 * systemd's own terms instead:
 *
 *   user-UID.slice    CPUWeight= (or CPUWeight=idle), CPUQuotaPerSecUSec=, set at
 *                     runtime through org.freedesktop.systemd1.Manager.SetUnitProperties
 *   session-N.scope   CPUWeight= handed to pam_systemd as the PAM data
 *                     "systemd.cpu_weight" (pam_autogroup must come first)
 *
 * Processes stay in their session scope; nothing is moved or created. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "policy.h"

typedef enum AgMode {
        AG_MODE_AUTO,                  /* systemd when booted with systemd on cgroup v2 with cpu */
        AG_MODE_CGROUPFS,              /* the plain cgroupfs tree below <root> */
        AG_MODE_SYSTEMD,               /* user slices and session scopes through systemd */
        _AG_MODE_MAX,
        _AG_MODE_INVALID = -EINVAL,
} AgMode;

/* The PAM data pam_systemd (>= 239) reads as the session scope's CPUWeight=. */
#define AG_SYSTEMD_DATA_CPU_WEIGHT "systemd.cpu_weight"
/* systemd's special CPUWeight value for "idle" (cpu.idle = 1); systemd >= 252. */
#define AG_SYSTEMD_CPU_WEIGHT_IDLE UINT64_C(0)
#define AG_SYSTEMD_USEC_INFINITY UINT64_MAX

const char *ag_mode_to_string(AgMode m);
AgMode ag_mode_from_string(const char *s);

/* Like sd_booted(): is runtime_dir/systemd/system a directory? runtime_dir
 * NULL means "/run". */
bool ag_systemd_booted(const char *runtime_dir);

/* Decides the mode for a session. AUTO becomes SYSTEMD when booted and h is a
 * cgroup v2 hierarchy offering cpu (systemd >= 252 then enables cpu for user
 * slices), CGROUPFS otherwise; CGROUPFS and SYSTEMD stay as they are.
 * h may be NULL (no cgroup hierarchy found). */
AgMode ag_mode_resolve(AgMode requested, bool booted, const AgHierarchy *h);

/* The unit property values for a policy. */
typedef struct AgUnitValues {
        uint64_t cpu_weight;               /* 1..10000, or AG_SYSTEMD_CPU_WEIGHT_IDLE */
        uint64_t cpu_quota_per_sec_usec;   /* AG_SYSTEMD_USEC_INFINITY for none */
} AgUnitValues;

void ag_policy_to_unit_values(const AgPolicy *policy, AgUnitValues *ret);

/* "user-<uid>.slice" */
int ag_user_slice_name(uid_t uid, char *buf, size_t size);

/* Sets CPUWeight= and CPUQuotaPerSecUSec= on user-<uid>.slice as runtime
 * properties (systemd keeps them in /run/systemd/system.control/, gone at
 * reboot) through the system bus. The slice need not be active yet: systemd
 * loads it and applies the values when logind starts it. On failure a short
 * reason (the D-Bus error message when there is one) goes to errbuf.
 * libsystemd.so.0 is loaded on first use (dlopen), so the cgroupfs mode never
 * maps it. -EOPNOTSUPP when built without libsystemd or when it cannot be
 * loaded. */
int ag_systemd_set_user_slice(uid_t uid, const AgUnitValues *v, char *errbuf, size_t errsize);
