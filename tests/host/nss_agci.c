/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libnss_agci.so.2: a test NSS module that answers getpwnam() for the
 * accounts of /etc/passwd whatever the case of the name asked for, the way
 * a case-insensitive directory does (nslcd "ignorecase yes", SSSD
 * "case_sensitive = false"): the entry it returns carries the account's own
 * name. Only for tests/host/test-caps.sh, loaded through a private
 * nsswitch.conf ("passwd: files agci") in a private mount namespace. */

#define _GNU_SOURCE
#include <errno.h>
#include <nss.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum nss_status _nss_agci_getpwnam_r(const char *name, struct passwd *pwd, char *buf, size_t buflen,
                                     int *errnop);

static int copy(char **dst, const char *src, char **p, size_t *left) {
        size_t n = strlen(src) + 1;

        if (n > *left)
                return -1;
        memcpy(*p, src, n);
        *dst = *p;
        *p += n;
        *left -= n;
        return 0;
}

enum nss_status _nss_agci_getpwnam_r(const char *name, struct passwd *pwd, char *buf, size_t buflen,
                                     int *errnop) {
        enum nss_status status = NSS_STATUS_NOTFOUND;
        struct passwd *e;
        FILE *f;

        f = fopen("/etc/passwd", "re");
        if (!f) {
                *errnop = errno;
                return NSS_STATUS_UNAVAIL;
        }
        while ((e = fgetpwent(f))) {
                char *p = buf;
                size_t left = buflen;

                if (strcasecmp(e->pw_name, name) != 0)
                        continue;
                *pwd = *e;
                if (copy(&pwd->pw_name, e->pw_name, &p, &left) < 0 ||
                    copy(&pwd->pw_passwd, e->pw_passwd, &p, &left) < 0 ||
                    copy(&pwd->pw_gecos, e->pw_gecos, &p, &left) < 0 ||
                    copy(&pwd->pw_dir, e->pw_dir, &p, &left) < 0 || copy(&pwd->pw_shell, e->pw_shell, &p, &left) < 0) {
                        *errnop = ERANGE;
                        status = NSS_STATUS_TRYAGAIN;
                } else
                        status = NSS_STATUS_SUCCESS;
                break;
        }
        fclose(f);
        return status;
}
