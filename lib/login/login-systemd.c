/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The systemd backend of a login: nothing is written into cgroupfs and no
 * process is moved. What the rules set becomes runtime properties of
 * user-UID.slice (CPUWeight=, CPUWeight=idle, CPUQuotaPerSecUSec=), set over
 * D-Bus where systemd's own configuration leaves them unset
 * (lib/systemd/systemd-slice.c). The session level: after pam_systemd, the
 * scope's CPUWeight= set here over D-Bus; before it, handed to pam_systemd as
 * PAM data by the PAM module, whose part the login's environment is too. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include "login-backend.h"
#include "util.h"

/* Is the cgroup at path (below the hierarchy's mount) root's, reached
 * without following a symbolic link? */
static bool scope_is_roots(const AgHierarchy *h, const char *path) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (ag_hierarchy_open_path(h, path, &fd) < 0 || fstat(fd, &st) < 0)
                return false;
        return st.st_uid == 0;
}

/* A login opened from inside a logind session scope (su, runuser, sudo -i
 * from one of its shells) stays there, as logind keeps it, unless
 * pam_systemd made a session of its own for it before us. Only a scope of
 * exactly logind's name, root's: a user can make a scope of that name below
 * their own manager. */
static bool nested(AgLogin *l, const AgLoginParams *p) {
        if (p->logind_session || ag_login_hierarchy(l) < 0 || ag_cg_pid_path(l->hierarchy, 0, &l->caller) < 0)
                return false;
        l->nested = ag_systemd_session_scope_path(l->caller) && scope_is_roots(l->hierarchy, l->caller) ?
                AG_NESTED_SCOPE : AG_NESTED_NOT_SCOPE;
        return l->nested == AG_NESTED_SCOPE;
}

static const AgSystemdPaths paths = {
        .control_dir = AG_SYSTEMD_CONTROL_DIR,
        .record_dir = AG_SYSTEMD_RECORD_DIR,
};

static int systemd_open(AgLogin *l, const AgLoginParams *p, AgLoginFailure *f) {
        int r;

        if (nested(l, p)) {
                l->state = AG_LOGIN_NESTED;
                return 0;
        }
        if (!ag_systemd_booted(NULL)) {
                f->step = AG_STEP_NO_SYSTEMD;
                return -EOPNOTSUPP;
        }
        ag_policy_to_unit_values(p->policy, &l->unit);
        r = ag_systemd_apply_user_slice(&paths, p->uid, &l->unit, &l->slice, f->detail, sizeof f->detail);
        if (r < 0) {
                f->step = AG_STEP_SLICE;
                return r;
        }
        l->state = AG_LOGIN_SLICE;
        l->session_weight = 1;
        if (p->policy->sessions && p->logind_session_id)
                l->session_weight = ag_systemd_set_session_weight(&paths, p->logind_session_id, AG_WEIGHT_DEFAULT,
                                                                  l->session_weight_error,
                                                                  sizeof l->session_weight_error);
        return 0;
}

/* systemd owns the units: nothing to undo, except for a login that never
 * reached logind (pam_systemd missing or failed), whose slice never ran: what
 * open set on it is not left behind. -EBUSY when the slice is in use. */
static int systemd_close(AgLogin *l, const AgLoginCloseParams *p, AgLoginEnd *ret_end) {
        (void) l;
        (void) ret_end;
        if (p->logind_session)
                return 0;
        if (!p->user_known)
                return -ENOENT;
        return ag_systemd_user_slice_forget(p->uid, "/sys/fs/cgroup", &paths);
}

const AgLoginBackend ag_login_backend_systemd = {
        .open = systemd_open,
        .close = systemd_close,
};
