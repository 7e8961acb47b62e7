/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The mode of pam_autogroup (mode=auto|cgroupfs|systemd), decided in one
 * place for the module (lib/login/login.c) and every verb of the helper. */

#include <errno.h>
#include <stdbool.h>

#include "cgroup.h"

typedef enum AgMode {
        AG_MODE_AUTO,                  /* systemd when booted with systemd on cgroup v2 with cpu */
        AG_MODE_CGROUPFS,              /* the plain cgroupfs tree below <root> */
        AG_MODE_SYSTEMD,               /* user slices and session scopes through systemd */
        _AG_MODE_MAX,
        _AG_MODE_INVALID = -EINVAL,
} AgMode;

const char *ag_mode_to_string(AgMode m);
AgMode ag_mode_from_string(const char *s);

/* What is known where the mode is decided. */
typedef struct AgModeFacts {
        AgMode configured;             /* mode= of the module's line; AG_MODE_AUTO when none says */
        bool booted;                   /* ag_systemd_booted(): looked at for AUTO only */
        const AgHierarchy *hierarchy;  /* the cpu hierarchy, NULL when none was found (AUTO only) */
        bool in_login;                 /* a verb acting in the caller's own login (enter, run, set) */
        const char *exported;          /* then: the AG_MODE_ENV the module exported (NULL: unset) */
} AgModeFacts;

/* The mode, by one rule:
 *   1. a verb acting in the caller's own login follows the module that
 *      placed it: SYSTEMD when the login's environment says
 *      AG_MODE_ENV=AG_MODE_ENV_SYSTEMD (lib/util/env.h), CGROUPFS otherwise. The
 *      variable is the user's to change: only a switch, where a process
 *      sits is read from its real cgroup;
 *   2. otherwise the configured mode: CGROUPFS and SYSTEMD as they are;
 *   3. AUTO becomes SYSTEMD when booted with systemd and the hierarchy is
 *      cgroup v2 offering cpu (systemd >= 252 then enables cpu for user
 *      slices), CGROUPFS otherwise (no hierarchy included).
 * Never AUTO. */
AgMode ag_mode_decide(const AgModeFacts *f);
