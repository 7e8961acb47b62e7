/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The module's event sink (lib/cgroup/events.h): what the library tells during one
 * PAM call. A removed group goes to its lines at once (report.c); a
 * warning is kept for the line of the outcome. See module.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>

#include "module.h"

static void on_warn(void *userdata, AgWarn what, int error, const char *detail) {
        struct module_events *ev = userdata;

        if ((unsigned) what >= _AG_WARN_MAX)
                return;
        ev->warned[what].error = error < 0 ? error : -EIO;
        ev->warned[what].detail = detail;
}

static void on_removed(void *userdata, const char *path, const AgCpuUsage *usage) {
        log_removed(userdata, path, usage);
}

void module_events_init(struct module_events *ev, pam_handle_t *pamh, const struct module_ctl *ctl,
                        const char *user, uid_t uid) {
        *ev = (struct module_events) {
                .sink = { .warn = on_warn, .removed = on_removed, .userdata = ev },
                .pamh = pamh,
                .ctl = ctl,
                .audit = AG_AUDIT_CONN_INIT(pamh, !(ctl->flags & AG_OPT_NOAUDIT), AG_DEBUG(ctl)),
                .user = user,
                .uid = uid,
                .by = "sweep",
        };
}

int module_warned(const struct module_events *ev, AgWarn what, const char **ret_detail) {
        if ((unsigned) what >= _AG_WARN_MAX)
                return 0;
        if (ret_detail)
                *ret_detail = ev->warned[what].detail;
        return ev->warned[what].error;
}
