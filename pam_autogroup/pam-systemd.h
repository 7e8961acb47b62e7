/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The systemd mode of the PAM module (see lib/systemd.h): the PAM side of it,
 * called from pam_autogroup.c. */

#include <stdbool.h>
#include <sys/types.h>

#include <security/pam_modules.h>

#include "policy.h"
#include "systemd.h"

/* Returned when the session belongs to the cgroupfs mode: go on as before. */
#define AG_PAM_CGROUPFS (-1)

/* The mode this session runs in. CGROUPFS costs nothing; AUTO costs one
 * lstat on hosts without systemd. */
AgMode ag_pam_mode(AgMode requested);

/* systemd mode: hands the session weight to pam_systemd ("systemd.cpu_weight")
 * and sets the user's weight, cap and idle flag on user-UID.slice. Returns
 * AG_PAM_CGROUPFS when the session is not for the systemd mode, PAM_SUCCESS,
 * or PAM_SESSION_ERR after one log line (the caller maps it to PAM_IGNORE
 * unless strict). */
int ag_pam_systemd_open(pam_handle_t *pamh, AgMode requested, bool debug, const char *user, uid_t uid,
                        const AgPolicy *policy);

/* systemd mode: nothing to undo (systemd owns the units). Returns
 * AG_PAM_CGROUPFS or PAM_IGNORE. */
int ag_pam_systemd_close(pam_handle_t *pamh, AgMode requested, bool debug);
