/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What one PAM handle remembers between its open and its close: the
 * login (struct login_data) and how many instances of the module stepped
 * aside. See module.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

#define DATA_NAME "pam_autogroup"              /* struct login_data */
#define DATA_ASIDE_NAME "pam_autogroup_aside"  /* unsigned: instances that stepped aside at open */

static void login_data_cleanup(pam_handle_t *pamh, void *data, int error_status) {
        struct login_data *d = data;

        (void) pamh;
        (void) error_status;
        if (!d)
                return;
        ag_login_free(d->login);
        free(d->user);
        free(d);
}

struct login_data *login_data_get(pam_handle_t *pamh) {
        const void *data = NULL;

        return pam_get_data(pamh, DATA_NAME, &data) == PAM_SUCCESS ? (struct login_data *) data : NULL;
}

/* NULL when out of memory. */
struct login_data *login_data_new(pam_handle_t *pamh, const struct passwd *pw) {
        struct login_data *d = calloc(1, sizeof *d);

        if (!d)
                return NULL;
        *d = (struct login_data) { .known = pw != NULL, .uid = pw ? pw->pw_uid : (uid_t) -1,
                                   .user = pw ? strdup(pw->pw_name) : NULL };
        if ((pw && !d->user) || pam_set_data(pamh, DATA_NAME, d, login_data_cleanup) != PAM_SUCCESS) {
                login_data_cleanup(pamh, d, 0);
                return NULL;
        }
        return d;
}

void free_data(pam_handle_t *pamh, void *data, int error_status) {
        (void) pamh;
        (void) error_status;
        free(data);
}

/* The module twice in one stack: see module.h. */
bool aside_count(pam_handle_t *pamh, int delta) {
        const void *data = NULL;
        unsigned *n;

        if (pam_get_data(pamh, DATA_ASIDE_NAME, &data) == PAM_SUCCESS && data)
                n = (unsigned *) data;
        else {
                if (delta < 0)
                        return false;
                n = calloc(1, sizeof *n);
                if (!n || pam_set_data(pamh, DATA_ASIDE_NAME, n, free_data) != PAM_SUCCESS) {
                        free(n);
                        return true;
                }
        }
        if (delta < 0 && *n == 0)
                return false;
        *n += (unsigned) delta;
        return true;
}

void login_data_drop(pam_handle_t *pamh) {
        (void) pam_set_data(pamh, DATA_NAME, NULL, NULL);
}
