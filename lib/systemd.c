/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#ifdef AG_HAVE_SDBUS
#include <systemd/sd-bus.h>
#endif

#include "systemd.h"
#include "util.h"

static const char *const mode_table[_AG_MODE_MAX] = {
        [AG_MODE_AUTO] = "auto",
        [AG_MODE_CGROUPFS] = "cgroupfs",
        [AG_MODE_SYSTEMD] = "systemd",
};

const char *ag_mode_to_string(AgMode m) {
        if (m < 0 || m >= _AG_MODE_MAX)
                return NULL;
        return mode_table[m];
}

AgMode ag_mode_from_string(const char *s) {
        if (!s)
                return _AG_MODE_INVALID;
        for (int i = 0; i < _AG_MODE_MAX; i++)
                if (strcmp(s, mode_table[i]) == 0)
                        return (AgMode) i;
        return _AG_MODE_INVALID;
}

bool ag_systemd_booted(const char *runtime_dir) {
        char path[512];
        struct stat st;
        int n;

        n = snprintf(path, sizeof path, "%s/systemd/system", runtime_dir ? runtime_dir : "/run");
        if (n < 0 || (size_t) n >= sizeof path)
                return false;
        /* lstat: sd_booted() does the same; a symlink does not count. */
        return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

AgMode ag_mode_resolve(AgMode requested, bool booted, const AgHierarchy *h) {
        switch (requested) {
        case AG_MODE_CGROUPFS:
        case AG_MODE_SYSTEMD:
                return requested;
        case AG_MODE_AUTO:
                if (booted && h && h->version == 2 && h->has_cpu)
                        return AG_MODE_SYSTEMD;
                return AG_MODE_CGROUPFS;
        default:
                return AG_MODE_CGROUPFS;
        }
}

void ag_policy_to_unit_values(const AgPolicy *policy, AgUnitValues *ret) {
        AgUnitValues v = {
                .cpu_weight = policy->weight,
                .cpu_quota_per_sec_usec = AG_SYSTEMD_USEC_INFINITY,
        };

        if (policy->idle)
                v.cpu_weight = AG_SYSTEMD_CPU_WEIGHT_IDLE;
        /* max N% of one CPU: N% of a second of CPU time every second */
        if (policy->max_pct >= 0)
                v.cpu_quota_per_sec_usec = (uint64_t) policy->max_pct * UINT64_C(10000);
        *ret = v;
}

int ag_user_slice_name(uid_t uid, char *buf, size_t size) {
        int n = snprintf(buf, size, "user-%lu.slice", (unsigned long) uid);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

#ifdef AG_HAVE_SDBUS
/* libsystemd is loaded with dlopen() when the systemd mode first needs it,
 * not linked: linked, every dlopen() of pam_autogroup.so by libpam (once a
 * login in login, su, cron...) would map and relocate libsystemd and its
 * seven dependencies even in the cgroupfs mode, about 0.8 ms a login here
 * (bench/login). RTLD_NODELETE: once loaded it stays for the process's life,
 * as it would have linked. */
typedef struct SdBusApi {
        void *dl;
        int (*open_system)(sd_bus **ret);
        sd_bus *(*flush_close_unref)(sd_bus *bus);
        int (*message_new_method_call)(sd_bus *bus, sd_bus_message **m, const char *destination,
                                       const char *path, const char *interface, const char *member);
        int (*message_append)(sd_bus_message *m, const char *types, ...);
        int (*message_open_container)(sd_bus_message *m, char type, const char *contents);
        int (*message_close_container)(sd_bus_message *m);
        sd_bus_message *(*message_unref)(sd_bus_message *m);
        int (*call)(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
                    sd_bus_message **reply);
        int (*error_is_set)(const sd_bus_error *e);
        void (*error_free)(sd_bus_error *e);
} SdBusApi;

#define LOAD(api, field, name)                                  \
        do {                                                    \
                *(void **) &(api)->field = dlsym((api)->dl, name); \
                if (!(api)->field)                              \
                        goto missing;                           \
        } while (0)

static int sdbus_load(SdBusApi *ret, char *errbuf, size_t errsize) {
        SdBusApi api = {};

        api.dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!api.dl) {
                if (errbuf && errsize)
                        snprintf(errbuf, errsize, "cannot load libsystemd.so.0: %s", dlerror());
                return -EOPNOTSUPP;
        }
        LOAD(&api, open_system, "sd_bus_open_system");
        LOAD(&api, flush_close_unref, "sd_bus_flush_close_unref");
        LOAD(&api, message_new_method_call, "sd_bus_message_new_method_call");
        LOAD(&api, message_append, "sd_bus_message_append");
        LOAD(&api, message_open_container, "sd_bus_message_open_container");
        LOAD(&api, message_close_container, "sd_bus_message_close_container");
        LOAD(&api, message_unref, "sd_bus_message_unref");
        LOAD(&api, call, "sd_bus_call");
        LOAD(&api, error_is_set, "sd_bus_error_is_set");
        LOAD(&api, error_free, "sd_bus_error_free");
        *ret = api;
        return 0;
missing:
        if (errbuf && errsize)
                snprintf(errbuf, errsize, "libsystemd.so.0 lacks sd-bus: %s", dlerror());
        dlclose(api.dl);
        return -EOPNOTSUPP;
}
#undef LOAD

static void set_error(const SdBusApi *api, char *errbuf, size_t errsize, const sd_bus_error *e, int r) {
        if (!errbuf || errsize == 0)
                return;
        if (e && api->error_is_set(e))
                snprintf(errbuf, errsize, "%s", e->message ? e->message : e->name);
        else
                snprintf(errbuf, errsize, "%s", strerror(r < 0 ? -r : r));
}

static int set_user_slice(const SdBusApi *api, const char *slice, const AgUnitValues *v, char *errbuf,
                          size_t errsize) {
        sd_bus *bus = NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = api->open_system(&bus);
        if (r < 0) {
                set_error(api, errbuf, errsize, NULL, r);
                return r;
        }
        r = api->message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                         "org.freedesktop.systemd1.Manager", "SetUnitProperties");
        if (r >= 0)
                r = api->message_append(m, "sb", slice, 1);   /* runtime = true */
        if (r >= 0)
                r = api->message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = api->message_append(m, "(sv)", "CPUWeight", "t", v->cpu_weight);
        if (r >= 0)
                r = api->message_append(m, "(sv)", "CPUQuotaPerSecUSec", "t", v->cpu_quota_per_sec_usec);
        if (r >= 0)
                r = api->message_close_container(m);
        if (r < 0)
                set_error(api, errbuf, errsize, NULL, r);
        else {
                r = api->call(bus, m, 0 /* default timeout */, &error, &reply);
                if (r < 0)
                        set_error(api, errbuf, errsize, &error, r);
        }
        api->error_free(&error);
        if (reply)
                api->message_unref(reply);
        if (m)
                api->message_unref(m);
        api->flush_close_unref(bus);
        return r < 0 ? r : 0;
}

int ag_systemd_set_user_slice(uid_t uid, const AgUnitValues *v, char *errbuf, size_t errsize) {
        SdBusApi api;
        char slice[64];
        int r;

        r = ag_user_slice_name(uid, slice, sizeof slice);
        if (r < 0)
                return r;
        r = sdbus_load(&api, errbuf, errsize);
        if (r < 0)
                return r;
        r = set_user_slice(&api, slice, v, errbuf, errsize);
        dlclose(api.dl);
        return r;
}
#else
int ag_systemd_set_user_slice(uid_t uid, const AgUnitValues *v, char *errbuf, size_t errsize) {
        (void) uid;
        (void) v;
        if (errbuf && errsize)
                snprintf(errbuf, errsize, "built without libsystemd");
        return -EOPNOTSUPP;
}
#endif
