/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One login's lifecycle: the mode decided once, then the mode's backend
 * (login-cgroupfs.c, login-systemd.c). See login.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "login-backend.h"
#include "util.h"

AgLogin *ag_login_free(AgLogin *l) {
        if (!l)
                return NULL;
        ag_hierarchy_free(l->hierarchy);
        ag_session_free(l->session);
        ag_acct_free(l->acct);
        free(l->caller);
        free(l->caller_acct);
        free(l);
        return NULL;
}

int ag_login_new(AgMode requested, AgLogin **ret) {
        AgModeFacts f = { .configured = requested };
        AgLogin *l;

        l = calloc(1, sizeof *l);
        if (!l)
                return -ENOMEM;
        l->state = AG_LOGIN_NEW;
        /* auto costs one lstat on hosts without systemd; the hierarchy is
         * looked up only where it decides (none: the cgroupfs backend says why) */
        f.booted = requested == AG_MODE_AUTO && ag_systemd_booted(NULL);
        if (f.booted)
                (void) ag_login_hierarchy(l);
        f.hierarchy = l->hierarchy;
        l->mode = ag_mode_decide(&f);
        *ret = l;
        return 0;
}

static const AgLoginBackend *backend(const AgLogin *l) {
        return l->mode == AG_MODE_SYSTEMD ? &ag_login_backend_systemd : &ag_login_backend_cgroupfs;
}

int ag_login_open(AgLogin *l, const AgLoginParams *p, AgLoginFailure *ret_failure) {
        AgLoginFailure f = { .step = AG_STEP_NONE };
        int r;

        /* The class goes to the calling thread, the one that forks the
         * login, so every process of the login inherits it. It needs no
         * cgroup: it applies in every mode, nested logins included. */
        if (p->policy->latency != AG_LATENCY_NORMAL) {
                r = ag_latency_apply(0, p->policy->latency, &l->latency_result);
                if (r < 0)
                        ag_events_warn(p->events, AG_WARN_LATENCY, r, NULL);
        }

        r = backend(l)->open(l, p, &f);
        if (r < 0) {
                l->state = AG_LOGIN_NEW;
                if (ret_failure)
                        *ret_failure = f;
        }
        return r;
}

int ag_login_close(AgLogin *l, const AgLoginCloseParams *p, AgLoginEnd *ret_end) {
        AgLoginEnd end = { .usage = { -1, -1, -1 } };
        int r = 0;

        if (l->state != AG_LOGIN_NESTED)
                r = backend(l)->close(l, p, &end);
        if (ret_end)
                *ret_end = end;
        return r;
}

int ag_login_caller_left(const AgLogin *l, char **ret_where) {
        _cleanup_free_ char *root = NULL;
        char *cur = NULL;
        int r;

        if (l->mode != AG_MODE_CGROUPFS || l->state != AG_LOGIN_GROUPED || !l->hierarchy || !l->session ||
            !l->session->path)
                return -EINVAL;
        r = ag_cg_pid_path(l->hierarchy, 0, &cur);
        if (r < 0)
                return r;
        /* anywhere below root=: still ours (a later login of the user moves
         * what is left in a place the user no longer lives in) */
        if (l->session->root && l->session->root[0] && asprintf(&root, "/%s", l->session->root) < 0) {
                free(cur);
                return -ENOMEM;
        }
        if (ag_cg_path_is_below(cur, l->session->path) || (root && ag_cg_path_is_below(cur, root))) {
                free(cur);
                return 0;
        }
        *ret_where = cur;
        return 1;
}

int ag_once_per_boot(const char *name) {
        _cleanup_close_ int dir = -EBADF;
        struct stat st;
        int fd;

        if (mkdir(AG_RUN_DIR, 0755) < 0 && errno != EEXIST)
                return -errno;
        dir = open(AG_RUN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        if (fstat(dir, &st) < 0)
                return -errno;
        if (st.st_uid != 0 || (st.st_mode & 0022))
                return -EPERM;
        fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return errno == EEXIST ? 0 : -errno;
        safe_close(fd);
        return 1;
}

void ag_unit_values_format(const AgUnitValues *v, char *weight, size_t weight_size, char *quota,
                           size_t quota_size) {
        if (v->cpu_weight == AG_SYSTEMD_CPU_WEIGHT_IDLE)
                snprintf(weight, weight_size, "idle");
        else
                snprintf(weight, weight_size, "%" PRIu64, v->cpu_weight);
        if (v->cpu_quota_per_sec_usec == AG_SYSTEMD_USEC_INFINITY)
                snprintf(quota, quota_size, "infinity");
        else
                snprintf(quota, quota_size, "%" PRIu64 "us", v->cpu_quota_per_sec_usec);
}
