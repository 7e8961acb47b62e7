/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The roots and config files of the module's lines in the PAM
 * configuration, for the administrator's verbs (admin-pam.h). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "admin-pam.h"
#include "session.h"
#include "systemd.h"
#include "util.h"

/* entries read in the hierarchy's top directory, and in each group there */
#define FIND_ROOTS_MAX_ENTRIES 4096

static void print_warning(void *userdata, const char *file, unsigned line, const char *message) {
        FILE *f = userdata;

        if (line > 0)
                fprintf(f, "warning: %s:%u: %s\n", file, line, message);
        else
                fprintf(f, "warning: %s: %s\n", file, message);
}

int ag_targets_from_pam(const char *pam_dir, bool confs, const char *default_value, FILE *warn, AgTargets *t) {
        _cleanup_free_ size_t *idx = NULL;
        size_t n = 0;
        int r;

        *t = (AgTargets) {};
        r = ag_pamconf_scan(pam_dir, warn ? print_warning : NULL, warn, &t->pam);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                t->pam_error = r;
                t->pam = NULL;
        }
        if (t->pam && t->pam->n_lines > 0) {
                idx = calloc(t->pam->n_lines, sizeof *idx);
                if (!idx)
                        return -ENOMEM;
                n = confs ? ag_pamconf_distinct_confs(t->pam, default_value, idx)
                          : ag_pamconf_distinct_roots(t->pam, idx);
                for (size_t i = 0; i < t->pam->n_lines; i++)
                        t->problems += t->pam->lines[i].n_problems;
        }
        t->v = calloc(n ? n : 1, sizeof *t->v);
        if (!t->v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const AgPamLine *l = &t->pam->lines[idx[i]];
                const char *v = confs ? l->conf : l->root;

                t->v[i].value = v ? v : default_value;
                t->v[i].mode = l->mode;
                t->v[i].line_default = confs ? !l->conf : !l->root_given;
                r = ag_pamconf_describe(l, &t->v[i].source);
                if (r < 0)
                        return r;
                t->n++;
        }
        if (n == 0) {
                t->v[0] = (AgTarget) { .value = default_value };
                t->n = 1;
        }
        return 0;
}

void ag_targets_done(AgTargets *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i].source);
        free(t->v);
        ag_pamconf_free(t->pam);
        *t = (AgTargets) {};
}

void ag_target_print_source(const AgTargets *t, const AgTarget *x, const char *what, const char *pam_dir,
                            FILE *f) {
        if (!pam_dir)
                pam_dir = AG_PAM_DIR_DEFAULT;
        if (x->source && x->line_default)
                fprintf(f, "%s=%s: the default (the line at %s sets no %s=)\n", what, x->value, x->source, what);
        else if (x->source)
                fprintf(f, "%s=%s from %s\n", what, x->value, x->source);
        else if (t->pam_error)
                fprintf(f, "%s=%s: the default (%s cannot be read: %s)\n", what, x->value, pam_dir,
                        strerror(-t->pam_error));
        else if (t->pam && t->pam->n_lines > 0)
                fprintf(f, "%s=%s: the default (no line of %s in %s sets %s=)\n", what, x->value,
                        AG_PAM_MODULE_NAME, pam_dir, what);
        else
                fprintf(f, "%s=%s: the default (no session line of %s in %s)\n", what, x->value,
                        AG_PAM_MODULE_NAME, pam_dir);
}

bool ag_target_is_systemd(const AgTarget *x, const AgHierarchy *h) {
        AgMode m = x->mode ? ag_mode_from_string(x->mode) : AG_MODE_AUTO;

        if (m < 0)
                m = AG_MODE_AUTO;
        return ag_mode_decide(&(AgModeFacts) { .configured = m, .booted = ag_systemd_booted(NULL), .hierarchy = h }) ==
               AG_MODE_SYSTEMD;
}

/* Does the group at fd hold a root-owned user-<uid> or pool-<name> group? */
static bool holds_user_groups(int fd) {
        DIR *d = NULL;
        struct dirent *de;
        unsigned n = 0;
        bool found = false;

        if (ag_opendir_dup(fd, &d) < 0)
                return false;
        while (!found && n++ < FIND_ROOTS_MAX_ENTRIES && (de = readdir(d))) {
                struct stat st;
                uid_t uid;

                if (de->d_type != DT_DIR)
                        continue;
                if (ag_user_group_parse(de->d_name, &uid) < 0 && strncmp(de->d_name, "pool-", 5) != 0)
                        continue;
                found = fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISDIR(st.st_mode) &&
                        st.st_uid == 0;
        }
        closedir(d);
        return found;
}

int ag_find_other_roots(const AgHierarchy *h, const char *const *known, size_t n_known,
                        void (*found)(void *userdata, const char *root), void *userdata) {
        _cleanup_close_ int mfd = -1;
        DIR *d = NULL;
        struct dirent *de;
        unsigned n = 0;
        int r;

        r = ag_hierarchy_open(h, &mfd);
        if (r < 0)
                return r;
        r = ag_opendir_dup(mfd, &d);
        if (r < 0)
                return r;
        while (n++ < FIND_ROOTS_MAX_ENTRIES && (de = readdir(d))) {
                _cleanup_close_ int fd = -1;
                bool is_known = false;

                if (de->d_type != DT_DIR || !ag_root_name_valid(de->d_name))
                        continue;
                for (size_t i = 0; i < n_known; i++)
                        is_known |= strcmp(known[i], de->d_name) == 0;
                if (is_known || ag_cg_open(mfd, de->d_name, &fd) < 0)
                        continue;
                if (holds_user_groups(fd))
                        found(userdata, de->d_name);
        }
        closedir(d);
        return 0;
}

int ag_pam_names_root(const char *pam_dir, const char *root) {
        AgPamConf *c = NULL;
        int r, found = 0;

        r = ag_pamconf_scan(pam_dir, NULL, NULL, &c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->n_lines && !found; i++)
                found = c->lines[i].root && strcmp(c->lines[i].root, root) == 0;
        ag_pamconf_free(c);
        return found;
}
