/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the module hands on through the PAM handle: the login's environment
 * (AUTOGROUP_*, lib/util/env.h), read by the session hook and "autogroup run",
 * and in the systemd mode the session scope's weight, PAM data that
 * pam_systemd reads. See module.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include <security/pam_ext.h>

#include "env.h"
#include "module.h"

/* The session level of the systemd mode: the same weight for every session
 * of the user. pam_systemd sets XDG_SESSION_ID once logind made the session:
 * then it ran first, and the backend set the scope's weight over D-Bus.
 * Otherwise pam_systemd comes later (or not at all): the weight is handed
 * to it as PAM data, which it reads when it asks logind for the session. A
 * value another module set first is left alone. */
void env_session_weight(pam_handle_t *pamh, const AgPolicy *policy, bool logind_session) {
        const void *old = NULL;
        char *w = NULL;

        if (logind_session || !policy->sessions ||
            (pam_get_data(pamh, AG_SYSTEMD_DATA_CPU_WEIGHT, &old) == PAM_SUCCESS && old))
                return;
        if (asprintf(&w, "%u", AG_WEIGHT_DEFAULT) < 0 ||
            pam_set_data(pamh, AG_SYSTEMD_DATA_CPU_WEIGHT, w, free_data) != PAM_SUCCESS) {
                free(w);
                pam_syslog(pamh, LOG_WARNING, "cannot hand the session weight to pam_systemd");
        }
}

static void putenv_or_log(pam_handle_t *pamh, const char *name, const char *value) {
        char env[600];

        snprintf(env, sizeof env, "%s=%s", name, value);
        if (pam_putenv(pamh, env) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set %s", name);
}

/* the item "interactive", for "autogroup run/set --latency" (in the
 * systemd mode: its scope's CPUWeight=) */
static void putenv_interactive(pam_handle_t *pamh, const AgPolicy *policy) {
        char level[16];

        snprintf(level, sizeof level, "%u", policy->interactive);
        putenv_or_log(pamh, AG_INTERACTIVE_ENV, level);
}

void env_slice(pam_handle_t *pamh, const AgPolicy *policy) {
        /* The switch for "autogroup enter" (the session hook): terminals of
         * this login get scopes of the user's manager. */
        if (pam_putenv(pamh, AG_MODE_ENV "=" AG_MODE_ENV_SYSTEMD) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set " AG_MODE_ENV ": terminals of this login get no groups");
        putenv_interactive(pamh, policy);
}

void env_session(pam_handle_t *pamh, const char *path, const AgPolicy *policy) {
        putenv_or_log(pamh, AG_SESSION_ENV, path);
        putenv_interactive(pamh, policy);
}

void env_nested(pam_handle_t *pamh, const struct module_ctl *ctl, const AgLogin *l, const AgPolicy *policy) {
        const char *sname = NULL;
        size_t slen = 0;
        uid_t owner;
        char path[512];

        /* cgroupfs: the caller's session, as the kernel gives the caller's
         * group (nested() checked it is this user's); the systemd mode sets
         * none (its terminals go by AUTOGROUP_MODE) */
        if (l->mode != AG_MODE_CGROUPFS || l->nested != AG_NESTED_SAME_USER || !l->caller ||
            ag_session_of_path(l->caller, ctl->root, &owner, &sname, &slen) < 0 ||
            (size_t) (sname + slen - l->caller) >= sizeof path)
                return;
        snprintf(path, sizeof path, "%.*s", (int) (sname + slen - l->caller), l->caller);
        env_session(pamh, path, policy);
}
