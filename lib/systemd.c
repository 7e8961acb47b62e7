/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

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
static void set_error(char *errbuf, size_t errsize, const sd_bus_error *e, int r) {
        if (!errbuf || errsize == 0)
                return;
        if (e && sd_bus_error_is_set(e))
                snprintf(errbuf, errsize, "%s", e->message ? e->message : e->name);
        else
                snprintf(errbuf, errsize, "%s", strerror(r < 0 ? -r : r));
}

static void bus_unrefp(sd_bus **b) {
        if (*b)
                sd_bus_flush_close_unref(*b);
}

static void message_unrefp(sd_bus_message **m) {
        if (*m)
                sd_bus_message_unref(*m);
}

int ag_systemd_set_user_slice(uid_t uid, const AgUnitValues *v, char *errbuf, size_t errsize) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_(message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        char slice[64];
        int r;

        r = ag_user_slice_name(uid, slice, sizeof slice);
        if (r < 0)
                return r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                set_error(errbuf, errsize, NULL, r);
                return r;
        }
        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "SetUnitProperties");
        if (r >= 0)
                r = sd_bus_message_append(m, "sb", slice, 1);   /* runtime = true */
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "CPUWeight", "t", v->cpu_weight);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "CPUQuotaPerSecUSec", "t", v->cpu_quota_per_sec_usec);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0) {
                set_error(errbuf, errsize, NULL, r);
                return r;
        }
        r = sd_bus_call(bus, m, 0 /* default timeout */, &error, &reply);
        if (r < 0)
                set_error(errbuf, errsize, &error, r);
        sd_bus_error_free(&error);
        return r < 0 ? r : 0;
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
