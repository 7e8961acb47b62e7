/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* systemd mode: the user slice's properties, by the precedence described in
 * systemd.h: systemd's own configuration first, then the config file's
 * rules, then systemd's defaults; what the module wrote and no longer applies
 * is taken back. The module's runtime drop-ins are told from an
 * administrator's "systemctl set-property --runtime" (the same file name) by
 * a record of the file the module's own call produced. */

#include <assert.h>
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "systemd.h"
#include "sdbus.h"
#include "util.h"

static const char *const prop_names[_AG_SLICE_PROP_MAX] = {
        [AG_SLICE_WEIGHT] = "CPUWeight",
        [AG_SLICE_QUOTA] = "CPUQuota",
};

/* The drop-ins SetUnitProperties(runtime) writes for each property
 * (CPUQuotaPerSecUSec= is written as CPUQuota=, depending on the version). */
static const char *const prop_dropins[_AG_SLICE_PROP_MAX][2] = {
        [AG_SLICE_WEIGHT] = { "50-CPUWeight.conf", NULL },
        [AG_SLICE_QUOTA] = { "50-CPUQuota.conf", "50-CPUQuotaPerSecUSec.conf" },
};

const char *ag_slice_prop_name(AgSliceProp p) {
        if (p < 0 || p >= _AG_SLICE_PROP_MAX)
                return NULL;
        return prop_names[p];
}

/* ---- the record of the module's drop-ins: record_dir/user-<uid>.slice,
 * one line a property: "<prop> <drop-in name> <inode> <mtime s> <mtime ns>" */

typedef struct Record {
        bool has[_AG_SLICE_PROP_MAX];
        char name[_AG_SLICE_PROP_MAX][64];
        unsigned long long ino[_AG_SLICE_PROP_MAX];
        long long sec[_AG_SLICE_PROP_MAX];
        long nsec[_AG_SLICE_PROP_MAX];
} Record;

static bool dropin_name_valid(AgSliceProp p, const char *name) {
        for (size_t i = 0; i < 2; i++)
                if (prop_dropins[p][i] && strcmp(prop_dropins[p][i], name) == 0)
                        return true;
        return false;
}

static int record_dir_open(const char *dir, bool create) {
        int fd;

        if (create) {
                /* /run/autogroup, then /run/autogroup/systemd: root's, in root's /run */
                char parent[256];
                const char *slash = strrchr(dir, '/');

                if (slash && slash > dir && (size_t) (slash - dir) < sizeof parent) {
                        memcpy(parent, dir, (size_t) (slash - dir));
                        parent[slash - dir] = 0;
                        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                                return negative_errno();
                }
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* The record file of uid, locked (exclusive when writable, shared when not). */
static int record_open(int dirfd, uid_t uid, bool writable, int *ret) {
        char name[64];
        int fd, r;

        r = ag_user_slice_name(uid, name, sizeof name);
        if (r < 0)
                return r;
        fd = openat(dirfd, name, (writable ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        if (flock(fd, writable ? LOCK_EX : LOCK_SH) < 0) {
                r = negative_errno();
                safe_close(fd);
                return r;
        }
        *ret = fd;
        return 0;
}

static void record_read(int fd, Record *ret) {
        char buf[1024], prop[32], name[64];
        unsigned long long ino;
        long long sec;
        long nsec;
        ssize_t n;
        Record rec = {};

        n = pread(fd, buf, sizeof buf - 1, 0);
        if (n > 0) {
                buf[n] = 0;
                for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                        if (sscanf(line, "%31s %63s %llu %lld %ld", prop, name, &ino, &sec, &nsec) != 5)
                                continue;
                        for (AgSliceProp p = 0; p < _AG_SLICE_PROP_MAX; p++)
                                if (strcmp(prop, prop_names[p]) == 0 && dropin_name_valid(p, name)) {
                                        rec.has[p] = true;
                                        snprintf(rec.name[p], sizeof rec.name[p], "%s", name);
                                        rec.ino[p] = ino;
                                        rec.sec[p] = sec;
                                        rec.nsec[p] = nsec;
                                }
                }
        }
        *ret = rec;
}

static bool record_empty(const Record *rec) {
        for (AgSliceProp p = 0; p < _AG_SLICE_PROP_MAX; p++)
                if (rec->has[p])
                        return false;
        return true;
}

static int record_write(int fd, const Record *rec) {
        char buf[1024];
        size_t len = 0;

        for (AgSliceProp p = 0; p < _AG_SLICE_PROP_MAX; p++)
                if (rec->has[p])
                        len += (size_t) snprintf(buf + len, sizeof buf - len, "%s %s %llu %lld %ld\n", prop_names[p],
                                                 rec->name[p], rec->ino[p], rec->sec[p], rec->nsec[p]);
        if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, len, 0) != (ssize_t) len)
                return negative_errno();
        return 0;
}

/* Is the recorded drop-in of p the file in d now (same inode and mtime)?
 * set-property rewrites the file under a new inode. */
static bool record_matches(const Record *rec, AgSliceProp p, int d) {
        struct stat st;

        if (!rec->has[p] || d < 0 || fstatat(d, rec->name[p], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                return false;
        return (unsigned long long) st.st_ino == rec->ino[p] && (long long) st.st_mtim.tv_sec == rec->sec[p] &&
                st.st_mtim.tv_nsec == rec->nsec[p];
}

/* Notes the drop-in of p now in d (the first of its names that exists) in rec. */
static int record_take(Record *rec, AgSliceProp p, int d, const char *only) {
        struct stat st;

        for (size_t i = 0; i < 2; i++) {
                const char *name = prop_dropins[p][i];

                if (!name || (only && strcmp(only, name) != 0))
                        continue;
                if (d < 0 || fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                rec->has[p] = true;
                snprintf(rec->name[p], sizeof rec->name[p], "%s", name);
                rec->ino[p] = (unsigned long long) st.st_ino;
                rec->sec[p] = (long long) st.st_mtim.tv_sec;
                rec->nsec[p] = st.st_mtim.tv_nsec;
                return 0;
        }
        rec->has[p] = false;
        return -ENOENT;
}

/* control_dir/user-<uid>.slice.d, or -errno (-ENOENT: none yet) */
static int control_open(const AgSystemdPaths *paths, uid_t uid, int *ret_control) {
        _cleanup_close_ int control = -EBADF;
        char name[80];
        int d, r;

        r = ag_user_slice_name(uid, name, sizeof name - 2);
        if (r < 0)
                return r;
        strcat(name, ".d");
        control = open(paths->control_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (control < 0)
                return negative_errno();
        d = openat(control, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0)
                return negative_errno();
        if (ret_control)
                *ret_control = take_fd(&control);
        return d;
}

int ag_systemd_record_dropin(const AgSystemdPaths *paths, uid_t uid, AgSliceProp prop, const char *name) {
        _cleanup_close_ int dir = -EBADF, fd = -EBADF, d = -EBADF;
        Record rec;
        int r;

        assert(name);

        if (prop < 0 || prop >= _AG_SLICE_PROP_MAX || !dropin_name_valid(prop, name))
                return -EINVAL;
        dir = record_dir_open(paths->record_dir, true);
        if (dir < 0)
                return dir;
        r = record_open(dir, uid, true, &fd);
        if (r < 0)
                return r;
        d = control_open(paths, uid, NULL);
        if (d < 0)
                return d;
        record_read(fd, &rec);
        r = record_take(&rec, prop, d, name);
        if (r < 0)
                return r;
        return record_write(fd, &rec);
}

/* ---- systemd's own configuration of the slice */

/* The last assignment of key in the [Slice] sections of the unit file or
 * drop-in at path (systemd's own directories, root's): 1 with its value
 * (empty: a reset), 0 when there is none, -errno. */
static int file_assignment(const char *path, const char *key, char *value, size_t size) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0, klen = strlen(key);
        bool in_slice = false;
        int found = 0;
        FILE *f;

        f = fopen(path, "re");
        if (!f)
                return negative_errno();
        while (getline(&line, &cap, f) > 0) {
                char *s = line, *e;

                s += strspn(s, " \t");
                e = s + strlen(s);
                while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
                        *--e = 0;
                if (*s == '[') {
                        in_slice = strcmp(s, "[Slice]") == 0;
                        continue;
                }
                if (!in_slice || *s == '#' || *s == ';' || strncmp(s, key, klen) != 0)
                        continue;
                s += klen;
                s += strspn(s, " \t");
                if (*s != '=')
                        continue;
                s++;
                s += strspn(s, " \t");
                snprintf(value, size, "%s", s);
                found = 1;
        }
        fclose(f);
        return found;
}

/* Sets what files (the manager's FragmentPath then DropInPaths, in the order
 * systemd applies them) say of p in st, the module's own drop-in skipped. */
static void settings_from_files(char *const *files, size_t n, const char *ours_path, AgSliceProp p,
                                AgSliceSetting *st) {
        char value[64];

        st->admin = false;
        st->admin_path[0] = st->admin_value[0] = 0;
        for (size_t i = 0; i < n; i++) {
                if (!files[i][0] || (ours_path && strcmp(files[i], ours_path) == 0))
                        continue;
                if (file_assignment(files[i], prop_names[p], value, sizeof value) <= 0)
                        continue;
                /* an empty assignment resets what came before */
                st->admin = value[0] != 0;
                snprintf(st->admin_path, sizeof st->admin_path, "%s", st->admin ? files[i] : "");
                snprintf(st->admin_value, sizeof st->admin_value, "%s", value);
        }
}

/* The value an administrator's setting stands for on the bus, to put the
 * live value back to it; -EINVAL when it is not understood here. */
static int admin_value_parse(AgSliceProp p, const AgSliceSetting *st, uint64_t *ret) {
        char *end;

        if (!st->admin) {
                *ret = UINT64_MAX;             /* unset: CPUWeight= (100), CPUQuota= (none) */
                return 0;
        }
        if (p == AG_SLICE_WEIGHT) {
                unsigned long long w;

                if (strcmp(st->admin_value, "idle") == 0) {
                        *ret = AG_SYSTEMD_CPU_WEIGHT_IDLE;
                        return 0;
                }
                errno = 0;
                w = strtoull(st->admin_value, &end, 10);
                if (errno || *end || w < 1 || w > 10000)
                        return -EINVAL;
                *ret = w;
                return 0;
        }
        double pct = strtod(st->admin_value, &end);
        if (end == st->admin_value || strcmp(end, "%") != 0 || pct <= 0)
                return -EINVAL;
        *ret = (uint64_t) (pct * 10000.0 + 0.5);
        return 0;
}

#ifdef AG_HAVE_SDBUS
#define SD_DEST "org.freedesktop.systemd1"

/* /org/freedesktop/systemd1/unit/<unit, escaped as sd_bus_path_encode() does> */
static void unit_object_path(const char *unit, char *buf, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t n = (size_t) snprintf(buf, size, "/org/freedesktop/systemd1/unit/");

        for (const char *c = unit; *c && n + 4 < size; c++) {
                if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))
                        buf[n++] = *c;
                else {
                        buf[n++] = '_';
                        buf[n++] = hex[(unsigned char) *c >> 4];
                        buf[n++] = hex[(unsigned char) *c & 15];
                }
        }
        buf[n] = 0;
}

static int bus_open(const SdBusApi *api, const AgSystemdPaths *paths, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        if (!paths->bus_address)
                return api->open_system(ret);
        r = api->bus_new(&bus);
        if (r >= 0)
                r = api->set_address(bus, paths->bus_address);
        if (r >= 0)
                r = api->start(bus);
        if (r < 0) {
                if (bus)
                        api->unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

/* Properties.Get: the reply, entered into its variant of signature sig. */
static int get_property(const SdBusApi *api, sd_bus *bus, const char *path, const char *iface, const char *prop,
                        const char *sig, sd_bus_message **ret, sd_bus_error *error) {
        sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = api->message_new_method_call(bus, &m, SD_DEST, path, "org.freedesktop.DBus.Properties", "Get");
        if (r >= 0)
                r = api->message_append(m, "ss", iface, prop);
        if (r >= 0)
                r = api->call(bus, m, 0, error, &reply);
        if (m)
                api->message_unref(m);
        if (r >= 0)
                r = api->message_enter_container(reply, 'v', sig);
        if (r < 0) {
                if (reply)
                        api->message_unref(reply);
                return r;
        }
        *ret = reply;
        return 0;
}

static int get_u64(const SdBusApi *api, sd_bus *bus, const char *path, const char *iface, const char *prop,
                   uint64_t *ret, sd_bus_error *error) {
        sd_bus_message *reply = NULL;
        uint64_t v;
        int r;

        r = get_property(api, bus, path, iface, prop, "t", &reply, error);
        if (r < 0)
                return r;
        r = api->message_read(reply, "t", &v);
        api->message_unref(reply);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

#define MAX_FILES 64

typedef struct Files {
        char *v[MAX_FILES];
        size_t n;
} Files;

static void files_done(Files *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->v[i]);
        f->n = 0;
}

static int files_add(Files *f, const char *s) {
        if (f->n >= MAX_FILES)
                return 0;
        f->v[f->n] = strdup(s);
        if (!f->v[f->n])
                return -ENOMEM;
        f->n++;
        return 0;
}

/* FragmentPath and DropInPaths of the unit at path, in the order systemd
 * applies them (asking for them loads the unit when it is not). */
static int get_files(const SdBusApi *api, sd_bus *bus, const char *path, Files *ret, sd_bus_error *error) {
        sd_bus_message *reply = NULL;
        const char *s;
        int r;

        r = get_property(api, bus, path, "org.freedesktop.systemd1.Unit", "FragmentPath", "s", &reply, error);
        if (r < 0)
                return r;
        r = api->message_read(reply, "s", &s);
        if (r >= 0 && s && *s)
                r = files_add(ret, s);
        api->message_unref(reply);
        if (r < 0)
                return r;
        r = get_property(api, bus, path, "org.freedesktop.systemd1.Unit", "DropInPaths", "as", &reply, error);
        if (r < 0)
                return r;
        r = api->message_enter_container(reply, 'a', "s");
        while (r >= 0) {
                r = api->message_read(reply, "s", &s);
                if (r <= 0)
                        break;
                r = files_add(ret, s);
        }
        api->message_unref(reply);
        return r < 0 ? r : 0;
}

/* One runtime property (name as on the bus, of type "t") of unit in one
 * call: what systemd refuses stays apart. */
static int set_unit_property(const SdBusApi *api, sd_bus *bus, const char *unit, const char *name, uint64_t value,
                             sd_bus_error *error) {
        sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = api->message_new_method_call(bus, &m, SD_DEST, "/org/freedesktop/systemd1",
                                         "org.freedesktop.systemd1.Manager", "SetUnitProperties");
        if (r >= 0)
                r = api->message_append(m, "sb", unit, 1);    /* runtime = true */
        if (r >= 0)
                r = api->message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = api->message_append(m, "(sv)", name, "t", value);
        if (r >= 0)
                r = api->message_close_container(m);
        if (r >= 0)
                r = api->call(bus, m, 0 /* default timeout */, error, &reply);
        if (reply)
                api->message_unref(reply);
        if (m)
                api->message_unref(m);
        return r;
}

static int set_property(const SdBusApi *api, sd_bus *bus, const char *slice, AgSliceProp p, uint64_t value,
                        sd_bus_error *error) {
        return set_unit_property(api, bus, slice, p == AG_SLICE_WEIGHT ? "CPUWeight" : "CPUQuotaPerSecUSec", value,
                                 error);
}

typedef struct Ctx {
        SdBusApi api;
        sd_bus *bus;
        char slice[64];
        char object[160];
        Files files;
        int d;                          /* control_dir/user-<uid>.slice.d, or -errno */
        int control;
        Record rec;
} Ctx;

static void ctx_done(Ctx *c) {
        files_done(&c->files);
        safe_close(c->d);
        safe_close(c->control);
        if (c->bus)
                c->api.flush_close_unref(c->bus);
        if (c->api.dl)
                dlclose(c->api.dl);
}

static int ctx_open(Ctx *c, const AgSystemdPaths *paths, uid_t uid, char *errbuf, size_t errsize) {
        int r;

        *c = (Ctx) { .d = -EBADF, .control = -EBADF };
        r = ag_user_slice_name(uid, c->slice, sizeof c->slice);
        if (r < 0)
                return r;
        unit_object_path(c->slice, c->object, sizeof c->object);
        r = ag_sdbus_load(&c->api, errbuf, errsize);
        if (r < 0)
                return r;
        r = bus_open(&c->api, paths, &c->bus);
        if (r < 0) {
                c->bus = NULL;
                ag_sdbus_set_error(&c->api, errbuf, errsize, NULL, r);
                return r;
        }
        return 0;
}

/* The files' say on each property, the module's recorded drop-in set apart. */
static void ctx_settings(Ctx *c, const AgSystemdPaths *paths, uid_t uid, AgSliceState *st) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        char ours[512];

        st->files_known = get_files(&c->api, c->bus, c->object, &c->files, &error) >= 0;
        c->api.error_free(&error);
        if (c->d < 0)
                c->d = control_open(paths, uid, &c->control);
        for (AgSliceProp p = 0; p < _AG_SLICE_PROP_MAX; p++) {
                st->prop[p].ours = record_matches(&c->rec, p, c->d);
                if (!st->prop[p].ours)
                        c->rec.has[p] = false;
                snprintf(ours, sizeof ours, "%s/%s.d/%s", paths->control_dir, c->slice, c->rec.name[p]);
                settings_from_files(c->files.v, c->files.n, st->prop[p].ours ? ours : NULL, p, &st->prop[p]);
        }
}

static void unlink_dropins(int d, AgSliceProp p) {
        for (size_t i = 0; i < 2; i++)
                if (d >= 0 && prop_dropins[p][i])
                        (void) unlinkat(d, prop_dropins[p][i], 0);
}

/* One property of the user slice: written when a rule sets it and the
 * administrator's files do not (the lowest weight where systemd < 252 has
 * no CPUWeight=idle), taken back when it no longer applies, else left.
 * The first failure goes to errbuf and *ret_r. */
static void apply_prop(Ctx *c, const AgSystemdPaths *paths, uid_t uid, AgSliceProp p, AgSliceSetting *s, bool want,
                       uint64_t value, char *errbuf, size_t errsize, int *ret_r) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (want && !s->admin) {
                s->action = AG_SLICE_WRITTEN;
                r = set_property(&c->api, c->bus, c->slice, p, value, &error);
                if (r < 0 && p == AG_SLICE_WEIGHT && value == AG_SYSTEMD_CPU_WEIGHT_IDLE &&
                    c->api.error_has_name(&error, SD_BUS_ERROR_INVALID_ARGS)) {
                        /* systemd < 252 has no CPUWeight=idle: the lowest weight instead */
                        c->api.error_free(&error);
                        s->action = AG_SLICE_FALLBACK;
                        r = set_property(&c->api, c->bus, c->slice, p, 1, &error);
                }
                if (r < 0) {
                        s->action = AG_SLICE_FAILED;
                        if (*ret_r == 0) {
                                ag_sdbus_set_error(&c->api, errbuf, errsize, &error, r);
                                *ret_r = r;
                        }
                } else {
                        if (c->d < 0)
                                c->d = control_open(paths, uid, &c->control);
                        (void) record_take(&c->rec, p, c->d, NULL);
                }
        } else if (s->ours) {
                uint64_t back;

                /* no longer applies: the drop-in goes, and the live value
                 * becomes what the files say (the reset writes a drop-in
                 * of its own, which goes too) */
                unlink_dropins(c->d, p);
                c->rec.has[p] = false;
                if (admin_value_parse(p, s, &back) >= 0 &&
                    set_property(&c->api, c->bus, c->slice, p, back, &error) >= 0)
                        unlink_dropins(c->d, p);
                s->action = AG_SLICE_TAKEN_BACK;
        } else
                s->action = want ? AG_SLICE_ADMIN : AG_SLICE_LEFT;
        c->api.error_free(&error);
}

int ag_systemd_apply_user_slice(const AgSystemdPaths *paths, uid_t uid, const AgUnitValues *v,
                                AgSliceState *ret, char *errbuf, size_t errsize) {
        _cleanup_close_ int dir = -EBADF, fd = -EBADF;
        AgSliceState st = {};
        Ctx c;
        int r, ret_r = 0;

        r = ctx_open(&c, paths, uid, errbuf, errsize);
        if (r < 0)
                goto out;
        dir = record_dir_open(paths->record_dir, true);
        if (dir >= 0)
                r = record_open(dir, uid, true, &fd);
        if (dir < 0 || r < 0) {
                r = dir < 0 ? dir : r;
                snprintf(errbuf, errsize, "cannot open the record of %s in %s: %s", c.slice, paths->record_dir,
                         strerror(-r));
                goto out;
        }
        record_read(fd, &c.rec);
        ctx_settings(&c, paths, uid, &st);

        for (AgSliceProp p = 0; p < _AG_SLICE_PROP_MAX; p++) {
                bool want = p == AG_SLICE_WEIGHT ? v->weight_set : v->quota_set;
                uint64_t value = p == AG_SLICE_WEIGHT ? v->cpu_weight : v->cpu_quota_per_sec_usec;

                apply_prop(&c, paths, uid, p, &st.prop[p], want, value, errbuf, errsize, &ret_r);
        }

        if (record_empty(&c.rec)) {
                char name[64];

                (void) ag_user_slice_name(uid, name, sizeof name);
                (void) unlinkat(dir, name, 0);
                if (c.control >= 0) {
                        strcat(name, ".d");
                        (void) unlinkat(c.control, name, AT_REMOVEDIR);  /* only when empty */
                }
        } else
                (void) record_write(fd, &c.rec);
        if (st.prop[AG_SLICE_WEIGHT].action == AG_SLICE_FALLBACK) {
                int m = openat(dir, "idle-fallback-logged", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

                st.idle_fallback_first = m >= 0;
                safe_close(m);
        }
        r = ret_r;
out:
        ctx_done(&c);
        if (r < 0)      /* no call made: what a rule sets failed */
                for (AgSliceProp p = 0; p < _AG_SLICE_PROP_MAX; p++)
                        if (st.prop[p].action == AG_SLICE_LEFT &&
                            (p == AG_SLICE_WEIGHT ? v->weight_set : v->quota_set))
                                st.prop[p].action = AG_SLICE_FAILED;
        if (ret)
                *ret = st;
        return r;
}

int ag_systemd_inspect_user_slice(const AgSystemdPaths *paths, uid_t uid, AgSliceState *ret, char *errbuf,
                                  size_t errsize) {
        _cleanup_close_ int dir = -EBADF, fd = -EBADF;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        AgSliceState st = {};
        const char *s;
        Ctx c;
        int r;

        r = ctx_open(&c, paths, uid, errbuf, errsize);
        if (r < 0)
                goto out;
        dir = record_dir_open(paths->record_dir, false);
        if (dir >= 0 && record_open(dir, uid, false, &fd) >= 0)
                record_read(fd, &c.rec);
        ctx_settings(&c, paths, uid, &st);
        r = get_u64(&c.api, c.bus, c.object, "org.freedesktop.systemd1.Slice", "CPUWeight", &st.live_weight, &error);
        if (r >= 0)
                r = get_u64(&c.api, c.bus, c.object, "org.freedesktop.systemd1.Slice", "CPUQuotaPerSecUSec",
                            &st.live_quota_per_sec_usec, &error);
        if (r >= 0)
                r = get_property(&c.api, c.bus, c.object, "org.freedesktop.systemd1.Unit", "ActiveState", "s",
                                 &reply, &error);
        if (r >= 0) {
                if (c.api.message_read(reply, "s", &s) > 0)
                        snprintf(st.active_state, sizeof st.active_state, "%s", s);
                c.api.message_unref(reply);
                st.live_known = true;
        } else
                ag_sdbus_set_error(&c.api, errbuf, errsize, &error, r);
        c.api.error_free(&error);
out:
        ctx_done(&c);
        if (ret)
                *ret = st;
        return r < 0 ? r : 0;
}

int ag_systemd_set_session_weight(const AgSystemdPaths *paths, const char *session_id, uint64_t weight, char *errbuf,
                                  size_t errsize) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        char scope[64];
        SdBusApi api;
        sd_bus *bus = NULL;
        int r;

        r = ag_session_scope_name(session_id, scope, sizeof scope);
        if (r < 0) {
                snprintf(errbuf, errsize, "not a logind session id");
                return r;
        }
        r = ag_sdbus_load(&api, errbuf, errsize);
        if (r < 0)
                return r;
        r = bus_open(&api, paths, &bus);
        if (r < 0)
                ag_sdbus_set_error(&api, errbuf, errsize, NULL, r);
        else {
                r = set_unit_property(&api, bus, scope, "CPUWeight", weight, &error);
                if (r < 0)
                        ag_sdbus_set_error(&api, errbuf, errsize, &error, r);
                api.error_free(&error);
                api.flush_close_unref(bus);
        }
        dlclose(api.dl);
        return r < 0 ? r : 0;
}
#else
int ag_systemd_apply_user_slice(const AgSystemdPaths *paths, uid_t uid, const AgUnitValues *v,
                                AgSliceState *ret, char *errbuf, size_t errsize) {
        (void) paths;
        (void) uid;
        (void) v;
        if (ret)
                *ret = (AgSliceState) {};
        if (errbuf && errsize)
                snprintf(errbuf, errsize, "built without libsystemd");
        return -EOPNOTSUPP;
}

int ag_systemd_inspect_user_slice(const AgSystemdPaths *paths, uid_t uid, AgSliceState *ret, char *errbuf,
                                  size_t errsize) {
        return ag_systemd_apply_user_slice(paths, uid, NULL, ret, errbuf, errsize);
}

int ag_systemd_set_session_weight(const AgSystemdPaths *paths, const char *session_id, uint64_t weight, char *errbuf,
                                  size_t errsize) {
        (void) paths;
        (void) session_id;
        (void) weight;
        if (errbuf && errsize)
                snprintf(errbuf, errsize, "built without libsystemd");
        return -EOPNOTSUPP;
}
#endif

/* ---- a login that never reached logind; gc */

/* only_absent: gc's variant, which acts only on a slice that has no cgroup
 * (not running) and never removes a cgroup: an empty slice cgroup may be
 * one logind just started for a login. */
static int slice_forget(uid_t uid, const char *cgroup_root, const AgSystemdPaths *paths, bool only_absent) {
        _cleanup_close_ int users = -EBADF, slice = -EBADF, control = -EBADF, d = -EBADF, dir = -EBADF,
                fd = -EBADF;
        char name[64], events[512];
        const char *p;
        Record rec = {};
        int r;

        r = ag_user_slice_name(uid, name, sizeof name);
        if (r < 0)
                return r;
        /* Known empty, or else nothing is removed: the slice's cgroup says
         * "populated 0", or it does not exist (ENOENT from an open directory
         * above it). Any other failure to look (no cgroup root, a symlink,
         * EACCES...) is -EBUSY: the slice may be in use by other logins. */
        users = open(cgroup_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (users < 0)
                return -EBUSY;
        {
                int u = openat(users, "user.slice", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (u < 0 && errno != ENOENT)
                        return -EBUSY;
                safe_close(users);
                users = u;
        }
        if (users >= 0) {
                slice = openat(users, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (slice < 0 && errno != ENOENT)
                        return -EBUSY;
        }
        if (slice >= 0 && only_absent)
                return -EBUSY;
        if (slice >= 0) {
                r = ag_read_small_file(slice, "cgroup.events", events, sizeof events);
                if (r < 0)
                        return r;
                p = strstr(events, "populated ");
                if (!p || p[10] != '0')
                        return -EBUSY;          /* in use: another login of the user */
        }
        /* only the drop-ins recorded as the module's: an administrator's
         * runtime set-property (the same file name) stays */
        dir = record_dir_open(paths->record_dir, false);
        if (dir >= 0 && record_open(dir, uid, true, &fd) >= 0)
                record_read(fd, &rec);
        d = control_open(paths, uid, &control);
        if (d >= 0) {
                for (AgSliceProp q = 0; q < _AG_SLICE_PROP_MAX; q++)
                        if (record_matches(&rec, q, d) && unlinkat(d, rec.name[q], 0) < 0 && errno != ENOENT)
                                return negative_errno();
                /* other runtime settings an administrator made stay, and so does the directory */
                char dname[80];
                snprintf(dname, sizeof dname, "%s.d", name);
                if (unlinkat(control, dname, AT_REMOVEDIR) < 0 && errno != ENOENT && errno != ENOTEMPTY &&
                    errno != EEXIST)
                        return negative_errno();
        }
        if (fd >= 0)
                (void) unlinkat(dir, name, 0);
        /* the empty cgroup systemd made for the slice when the properties
         * were set, and removes only for a slice that ran */
        if (slice >= 0 && unlinkat(users, name, AT_REMOVEDIR) < 0 && errno != ENOENT && errno != EBUSY &&
            errno != ENOTEMPTY)
                return negative_errno();
        return 0;
}

/* ---- words */

void ag_slice_value_format(AgSliceProp p, uint64_t value, char *buf, size_t size) {
        assert(buf);

        if (p == AG_SLICE_WEIGHT && value == AG_SYSTEMD_CPU_WEIGHT_IDLE)
                snprintf(buf, size, "idle");
        else if (value == UINT64_MAX)
                snprintf(buf, size, p == AG_SLICE_WEIGHT ? "(unset: 100)" : "(none)");
        else if (p == AG_SLICE_WEIGHT)
                snprintf(buf, size, "%" PRIu64, value);
        else if (value % 10000 == 0)
                snprintf(buf, size, "%" PRIu64 "%%", value / 10000);
        else
                snprintf(buf, size, "%.2f%%", (double) value / 10000.0);
}

void ag_slice_state_format(const AgSliceState *st, const AgUnitValues *v, char *buf, size_t size) {
        size_t n = 0;

        assert(st);
        assert(v);
        assert(buf);

        buf[0] = 0;
        for (AgSliceProp p = 0; p < _AG_SLICE_PROP_MAX && n < size; p++) {
                const AgSliceSetting *s = &st->prop[p];
                const char *name = prop_names[p], *sep = p ? ", " : "";
                char value[32];

                ag_slice_value_format(p, p == AG_SLICE_WEIGHT ? v->cpu_weight : v->cpu_quota_per_sec_usec, value,
                                      sizeof value);
                switch (s->action) {
                case AG_SLICE_WRITTEN:
                        n += (size_t) snprintf(buf + n, size - n, "%s%s=%s (runtime)", sep, name, value);
                        break;
                case AG_SLICE_FALLBACK:
                        n += (size_t) snprintf(buf + n, size - n, "%s%s=1 (runtime; CPUWeight=idle refused, "
                                               "systemd older than 252)", sep, name);
                        break;
                case AG_SLICE_ADMIN:
                        n += (size_t) snprintf(buf + n, size - n, "%s%s=%s from %s kept (systemd's setting wins), "
                                               "the rule's %s not written", sep, name, s->admin_value, s->admin_path,
                                               value);
                        break;
                case AG_SLICE_TAKEN_BACK:
                        n += (size_t) snprintf(buf + n, size - n, "%s%s: the module's earlier value taken back%s%s",
                                               sep, name, s->admin ? ", systemd's " : "",
                                               s->admin ? s->admin_path : "");
                        break;
                case AG_SLICE_FAILED:
                        n += (size_t) snprintf(buf + n, size - n, "%s%s=%s refused", sep, name, value);
                        break;
                default:
                        n += (size_t) snprintf(buf + n, size - n, "%s%s: no rule, left to systemd", sep, name);
                        break;
                }
        }
}

int ag_systemd_user_slice_forget(uid_t uid, const char *cgroup_root, const AgSystemdPaths *paths) {
        return slice_forget(uid, cgroup_root, paths, false);
}

int ag_systemd_gc(const char *cgroup_root, const AgSystemdPaths *paths, ag_systemd_gc_fn removed,
                  void *userdata) {
        _cleanup_close_ int dir = -EBADF;
        struct dirent *de;
        DIR *d = NULL;
        int n = 0, r;

        assert(paths);

        dir = record_dir_open(paths->record_dir, false);
        if (dir == -ENOENT)
                return 0;
        if (dir < 0)
                return dir;
        r = ag_opendir_dup(dir, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                unsigned long uid;
                char num[32];
                const char *dot;
                size_t len;

                /* "user-<uid>.slice", the records apply writes */
                if (strncmp(de->d_name, "user-", 5) != 0 || !(dot = strstr(de->d_name, ".slice")) || dot[6])
                        continue;
                len = (size_t) (dot - de->d_name - 5);
                if (len == 0 || len >= sizeof num)
                        continue;
                memcpy(num, de->d_name + 5, len);
                num[len] = 0;
                if (ag_safe_atoul(num, (uid_t) -2, &uid) < 0)
                        continue;
                r = slice_forget((uid_t) uid, cgroup_root, paths, true);
                if (r >= 0) {
                        n++;
                        if (removed)
                                removed(userdata, de->d_name);
                }
        }
        closedir(d);
        return n;
}
