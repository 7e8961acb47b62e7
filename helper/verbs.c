/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The glue every verb of autogroup uses: the hierarchy, the root, the
 * user and the mode from the command line. See verbs.h. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin-pam.h"
#include "env.h"
#include "hint.h"
#include "mode.h"
#include "systemd.h"
#include "util.h"
#include "verbs.h"

int find_hierarchy(const Args *a, AgHierarchy **ret) {
        return a->hierarchy ? ag_hierarchy_from_mount(a->hierarchy, ret) : ag_hierarchy_find(NULL, ret);
}

/* The subtree a verb that acts in the caller's own session works on (enter,
 * status, run, set): --root when given; otherwise the module's root= from
 * AUTOGROUP_SESSION when the caller's real cgroup confirms it (lib/cgroup/hint.c);
 * otherwise the root of the session the caller's own cgroup is in, when the
 * module's lines in the PAM configuration name it; otherwise the default. buf holds AG_ROOT_NAME_MAX + 1 bytes. */
const char *session_root(const Args *a, const AgHierarchy *h, char *buf, size_t size) {
        if (a->root_given)
                return a->root;
        if (ag_root_from_hint(h, getenv(AG_SESSION_ENV), 0, getuid(), buf, size) >= 0)
                return buf;
        /* the hint lost (su -, sudo -i, env -u): the caller's own group, when
         * its <root> is the default or one a module line names */
        if (ag_root_from_cgroup(h, 0, getuid(), buf, size) >= 0 &&
            (strcmp(buf, a->root) == 0 || ag_pam_names_root(a->pam_dir, buf) > 0))
                return buf;
        return a->root;
}

static const char *hierarchy_error(const Args *a, int r) {
        if (a->hierarchy && r == -ENOTDIR)
                return "not a cgroup file system";
        if (!a->hierarchy && r == -ENOENT)
                return "no cgroup file system is mounted";
        return strerror(-r);
}

/* find_hierarchy() for a verb that cannot go on without one: on failure
 * "autogroup VERB: WHERE: WHY" on stderr. */
int find_hierarchy_or_report(const Args *a, AgHierarchy **ret) {
        int r = find_hierarchy(a, ret);

        if (r < 0)
                fprintf(stderr, "autogroup %s: %s: %s\n", a->verb, a->hierarchy ? a->hierarchy : "cgroup hierarchy",
                        hierarchy_error(a, r));
        return r;
}

/* The same for a verb only root may use (gc, container-init), after that
 * check: "autogroup VERB: only root can WHAT" for anyone else. */
int find_hierarchy_as_root(const Args *a, const char *what, AgHierarchy **ret) {
        if (geteuid() != 0) {
                fprintf(stderr, "autogroup %s: only root can %s\n", a->verb, what);
                return -EPERM;
        }
        return find_hierarchy_or_report(a, ret);
}

int parse_pid(const char *s, pid_t *ret) {
        unsigned long v;

        if (ag_safe_atoul(s, INT32_MAX, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

/* enter, run and set: the mode of the caller's own login, as the module
 * that placed it exported it */
bool login_is_systemd(void) {
        return ag_mode_decide(&(AgModeFacts) { .in_login = true, .exported = getenv(AG_MODE_ENV) }) ==
               AG_MODE_SYSTEMD;
}

/* status, metrics, check: the mode mode=auto gets on this host */
bool auto_is_systemd(const AgHierarchy *h) {
        return ag_mode_decide(&(AgModeFacts) { .configured = AG_MODE_AUTO, .booted = ag_systemd_booted(NULL),
                                               .hierarchy = h }) == AG_MODE_SYSTEMD;
}

/* status and metrics: whose groups, from --user (NULL: everyone's); anyone
 * but root sees only their own. */
int only_user(const Args *a, const char *user, uid_t *ret) {
        uid_t only = (uid_t) -1;

        if (user) {
                struct passwd *pw = getpwnam(user);
                unsigned long v;

                if (pw)
                        only = pw->pw_uid;
                else if (ag_safe_atoul(user, (uid_t) -2, &v) >= 0)
                        only = (uid_t) v;
                else {
                        fprintf(stderr, "autogroup %s: unknown user '%s'\n", a->verb, user);
                        return -EINVAL;
                }
        }
        if (getuid() != 0) {
                if (only != (uid_t) -1 && only != getuid()) {
                        fprintf(stderr, "autogroup %s: only root can see another user's groups\n", a->verb);
                        return -EPERM;
                }
                only = getuid();
        }
        *ret = only;
        return 0;
}
