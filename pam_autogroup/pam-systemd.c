/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The systemd mode of pam_autogroup: nothing is written into cgroupfs and no
 * process is moved. The policy becomes unit properties:
 *   - user-UID.slice: CPUWeight= (CPUWeight=idle for "idle yes") and
 *     CPUQuotaPerSecUSec= ("max"), runtime properties set over D-Bus;
 *   - session-N.scope: CPUWeight=100 handed to pam_systemd as the PAM data
 *     "systemd.cpu_weight", so that the user's sessions share the user's CPU
 *     equally (the session level of the cgroupfs mode). pam_systemd reads it
 *     when it asks logind for the session, so pam_autogroup must come
 *     before pam_systemd in the session stack;
 *   - AUTOGROUP_MODE=systemd in the login's environment: "autogroup enter"
 *     then gives each terminal (setsid() session) a scope of the user's
 *     manager (helper/enter-systemd.c). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <pwd.h>

#include <security/pam_ext.h>
#include <security/pam_modutil.h>

#include "cgroup.h"
#include "conf.h"
#include "env.h"
#include "pam-systemd.h"

AgMode ag_pam_mode(AgMode requested) {
        AgHierarchy *h = NULL;
        AgMode m;

        if (requested == AG_MODE_CGROUPFS || requested == AG_MODE_SYSTEMD)
                return requested;
        if (!ag_systemd_booted(NULL))
                return AG_MODE_CGROUPFS;
        if (ag_hierarchy_find(NULL, &h) < 0)
                h = NULL;
        m = ag_mode_resolve(requested, true, h);
        ag_hierarchy_free(h);
        return m;
}

static void free_data(pam_handle_t *pamh, void *data, int error_status) {
        (void) pamh;
        (void) error_status;
        free(data);
}

static void format_quota(uint64_t usec, char *buf, size_t size) {
        if (usec == AG_SYSTEMD_USEC_INFINITY)
                snprintf(buf, size, "infinity");
        else
                snprintf(buf, size, "%" PRIu64 "us", usec);
}

int ag_pam_systemd_open(pam_handle_t *pamh, AgMode requested, bool debug, const char *user, uid_t uid,
                        const AgPolicy *policy) {
        AgUnitValues v;
        char slice[64], err[256] = "", quota[32], weight[32];
        int r;

        if (ag_pam_mode(requested) != AG_MODE_SYSTEMD)
                return AG_PAM_CGROUPFS;

        if (!ag_systemd_booted(NULL)) {
                pam_syslog(pamh, LOG_ERR, "mode=systemd, but this host does not run systemd "
                           "(no /run/systemd/system), session of %s not grouped", user);
                return PAM_SESSION_ERR;
        }
        if (ag_user_slice_name(uid, slice, sizeof slice) < 0)
                return PAM_SESSION_ERR;

        /* pam_systemd sets XDG_SESSION_ID once logind made the session: then
         * it ran first, and the session weight comes too late. */
        if (pam_getenv(pamh, "XDG_SESSION_ID"))
                pam_syslog(pamh, LOG_NOTICE, "pam_systemd ran before pam_autogroup: put pam_autogroup before "
                           "pam_systemd in the session stack to give the session scope its weight");

        /* The session level: the same weight for every session of the user.
         * A value another module set first is left alone. */
        if (policy->sessions) {
                const void *old = NULL;

                if (pam_get_data(pamh, AG_SYSTEMD_DATA_CPU_WEIGHT, &old) != PAM_SUCCESS || !old) {
                        char *w = NULL;

                        if (asprintf(&w, "%u", AG_WEIGHT_DEFAULT) < 0 ||
                            pam_set_data(pamh, AG_SYSTEMD_DATA_CPU_WEIGHT, w, free_data) != PAM_SUCCESS) {
                                free(w);
                                pam_syslog(pamh, LOG_WARNING, "cannot hand the session weight to pam_systemd");
                        }
                }
        }

        ag_policy_to_unit_values(policy, &v);
        r = ag_systemd_set_user_slice(uid, &v, err, sizeof err);
        format_quota(v.cpu_quota_per_sec_usec, quota, sizeof quota);
        if (v.cpu_weight == AG_SYSTEMD_CPU_WEIGHT_IDLE)
                snprintf(weight, sizeof weight, "idle");
        else
                snprintf(weight, sizeof weight, "%" PRIu64, v.cpu_weight);
        if (r < 0) {
                pam_syslog(pamh, LOG_ERR, "cannot set CPUWeight=%s CPUQuotaPerSecUSec=%s on %s for %s through "
                           "systemd: %s", weight, quota, slice, user, err[0] ? err : strerror(-r));
                return PAM_SESSION_ERR;
        }
        /* The switch for "autogroup enter" (the session hook): terminals of
         * this login get scopes of the user's manager. */
        if (pam_putenv(pamh, AG_MODE_ENV "=" AG_MODE_ENV_SYSTEMD) != PAM_SUCCESS)
                pam_syslog(pamh, LOG_WARNING, "cannot set " AG_MODE_ENV ": terminals of this login get no groups");
        if (debug)
                pam_syslog(pamh, LOG_DEBUG, "systemd mode: %s CPUWeight=%s CPUQuotaPerSecUSec=%s (runtime)%s",
                           slice, weight, quota,
                           policy->sessions ? ", session scope CPUWeight=100 through pam_systemd" : "");
        return PAM_SUCCESS;
}

int ag_pam_systemd_close(pam_handle_t *pamh, AgMode requested, bool debug) {
        if (ag_pam_mode(requested) != AG_MODE_SYSTEMD)
                return AG_PAM_CGROUPFS;
        /* pam_systemd exports XDG_SESSION_ID at open: without it, logind never
         * saw this login, which then ran outside user-UID.slice. */
        if (!pam_getenv(pamh, "XDG_SESSION_ID")) {
                const char *user = NULL;
                struct passwd *pw;
                int r = -ENOENT;

                pam_syslog(pamh, LOG_NOTICE, "systemd mode, but this login had no logind session "
                           "(pam_systemd is not in the session stack, or it failed): its processes were "
                           "outside the user slice and not grouped");
                /* what open set on a slice that never ran is not left behind */
                if (pam_get_item(pamh, PAM_USER, (const void **) &user) == PAM_SUCCESS && user &&
                    (pw = pam_modutil_getpwnam(pamh, user)))
                        r = ag_systemd_user_slice_forget(pw->pw_uid, "/sys/fs/cgroup",
                                                         "/run/systemd/system.control");
                if (r < 0 && r != -EBUSY)
                        pam_syslog(pamh, LOG_WARNING, "cannot remove the runtime properties of %s's slice: %s",
                                   user ? user : "?", strerror(-r));
                else if (debug)
                        pam_syslog(pamh, LOG_DEBUG, "systemd mode: %s", r == -EBUSY ?
                                   "the user slice is in use (or cannot be looked at), its properties stay" :
                                   "the user slice's runtime properties and empty cgroup removed");
        } else if (debug)
                pam_syslog(pamh, LOG_DEBUG, "systemd mode: nothing to remove (systemd owns the units)");
        return PAM_IGNORE;
}
