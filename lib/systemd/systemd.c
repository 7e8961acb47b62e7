/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* systemd mode: unit names, and the D-Bus calls to the
 * system and user managers (libsystemd loaded with dlopen()). See systemd.h. */

#include <assert.h>
#include <ctype.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#ifdef AG_HAVE_SDBUS
#include "sdbus.h"
#endif

#include "systemd.h"
#include "sdbus.h"
#include "util.h"

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

void ag_policy_to_unit_values(const AgPolicy *policy, AgUnitValues *ret) {
        AgUnitValues v = {
                .cpu_weight = policy->weight,
                .cpu_quota_per_sec_usec = AG_SYSTEMD_USEC_INFINITY,
                /* only what a rule sets is written; the rest stays systemd's */
                .weight_set = policy->source[AG_ITEM_WEIGHT] || (policy->idle && policy->source[AG_ITEM_IDLE]),
                .quota_set = policy->source[AG_ITEM_MAX] != NULL,
        };

        assert(policy);
        assert(ret);

        if (policy->idle)
                v.cpu_weight = AG_SYSTEMD_CPU_WEIGHT_IDLE;
        /* max N% of one CPU: N% of a second of CPU time every second */
        if (policy->max_pct >= 0)
                v.cpu_quota_per_sec_usec = (uint64_t) policy->max_pct * UINT64_C(10000);
        *ret = v;
}

int ag_user_slice_name(uid_t uid, char *buf, size_t size) {
        assert(buf);

        int n = snprintf(buf, size, "user-%lu.slice", (unsigned long) uid);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

bool ag_systemd_session_scope_path(const char *path) {
        static const char user[] = "/user.slice/user-", slice[] = ".slice/session-";
        const char *p, *id;

        assert(path);

        if (strncmp(path, user, sizeof user - 1) != 0)
                return false;
        p = path + sizeof user - 1;
        if (!isdigit((unsigned char) *p) || (*p == '0' && isdigit((unsigned char) p[1])))
                return false;
        while (isdigit((unsigned char) *p))
                p++;
        if (strncmp(p, slice, sizeof slice - 1) != 0)
                return false;
        id = p += sizeof slice - 1;
        while (isalnum((unsigned char) *p))
                p++;
        return p > id && strcmp(p, ".scope") == 0;
}

int ag_session_scope_name(const char *id, char *buf, size_t size) {
        size_t n;
        int k;

        if (!id)
                return -EINVAL;
        n = strlen(id);
        if (n == 0 || n > 32 || strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != n)
                return -EINVAL;
        k = snprintf(buf, size, "session-%s.scope", id);
        if (k < 0 || (size_t) k >= size)
                return -ENAMETOOLONG;
        return 0;
}

int ag_terminal_scope_name(pid_t sid, char *buf, size_t size) {
        int n;

        if (sid <= 0)
                return -EINVAL;
        n = snprintf(buf, size, AG_TERMINAL_SCOPE_PREFIX "%jd.scope", (intmax_t) sid);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

int ag_run_scope_name(pid_t pid, unsigned n, char *buf, size_t size) {
        int k;

        if (pid <= 0)
                return -EINVAL;
        if (n == 0)
                k = snprintf(buf, size, AG_RUN_SCOPE_PREFIX "%jd.scope", (intmax_t) pid);
        else
                k = snprintf(buf, size, AG_RUN_SCOPE_PREFIX "%jd-%u.scope", (intmax_t) pid, n);
        if (k < 0 || (size_t) k >= size)
                return -ENOBUFS;
        return 0;
}

int ag_user_unit_path(uid_t uid, const char *slice, const char *unit, char *buf, size_t size) {
        assert(slice);
        assert(unit);
        assert(buf);

        int n = snprintf(buf, size, "/user.slice/user-%lu.slice/user@%lu.service/%s/%s", (unsigned long) uid,
                         (unsigned long) uid, slice, unit);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

/* A logind session id: letters and digits ("3", "c1"). */
static bool session_id_valid(const char *s, size_t n) {
        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
                        return false;
        return true;
}

bool ag_systemd_in_user_slice(const char *cgroup_path, uid_t uid) {
        char prefix[64];
        int n;

        n = snprintf(prefix, sizeof prefix, "/user.slice/user-%lu.slice/", (unsigned long) uid);
        return cgroup_path && n > 0 && (size_t) n < sizeof prefix && strncmp(cgroup_path, prefix, (size_t) n) == 0 &&
               cgroup_path[n] != 0;
}

AgScopePlace ag_scope_place(const char *cgroup_path, uid_t uid, pid_t sid) {
        char own[256], scope[64];
        const char *rest;

        if (!ag_systemd_in_user_slice(cgroup_path, uid))
                return AG_SCOPE_PLACE_OTHER;
        rest = strchr(cgroup_path + strlen("/user.slice/"), '/') + 1;
        if (strncmp(rest, "session-", 8) == 0) {
                const char *id = rest + 8, *dot = strchr(id, '.');

                if (dot && strcmp(dot, ".scope") == 0 && session_id_valid(id, (size_t) (dot - id)))
                        return AG_SCOPE_PLACE_SESSION;
                return AG_SCOPE_PLACE_OTHER;
        }
        if (ag_terminal_scope_name(sid, scope, sizeof scope) < 0 ||
            ag_user_unit_path(uid, AG_TERMINAL_SCOPE_SLICE, scope, own, sizeof own) < 0)
                return AG_SCOPE_PLACE_OTHER;
        if (strcmp(cgroup_path, own) == 0)
                return AG_SCOPE_PLACE_OWN;
        return AG_SCOPE_PLACE_OTHER;
}

int ag_systemd_user_bus_address(const char *env, const char *runtime_dir, char **ret) {
        char *a = NULL;

        /* one unix: address only: "unixexec:" would have libsystemd run a
         * program, "tcp:" reach another host, and a list (';') fall through
         * to such an address */
        if (env && strncmp(env, "unix:", 5) == 0 && env[5] && !strchr(env, ';'))
                a = strdup(env);
        else if (runtime_dir && runtime_dir[0] == '/') {
                if (asprintf(&a, "unix:path=%s/bus", runtime_dir) < 0)
                        a = NULL;
        } else
                return -ENXIO;
        if (!a)
                return -ENOMEM;
        *ret = a;
        return 0;
}

#ifdef AG_HAVE_SDBUS

#define LOAD(api, field, name)                                  \
        do {                                                    \
                *(void **) &(api)->field = dlsym((api)->dl, name); \
                if (!(api)->field)                              \
                        goto missing;                           \
        } while (0)

int ag_sdbus_load(SdBusApi *ret, char *errbuf, size_t errsize) {
        SdBusApi api = {};

        api.dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!api.dl) {
                if (errbuf && errsize)
                        snprintf(errbuf, errsize, "cannot load libsystemd.so.0: %s", dlerror());
                return -EOPNOTSUPP;
        }
        LOAD(&api, open_system, "sd_bus_open_system");
        LOAD(&api, bus_new, "sd_bus_new");
        LOAD(&api, set_address, "sd_bus_set_address");
        LOAD(&api, start, "sd_bus_start");
        LOAD(&api, flush_close_unref, "sd_bus_flush_close_unref");
        LOAD(&api, close, "sd_bus_close");
        LOAD(&api, unref, "sd_bus_unref");
        LOAD(&api, is_ready, "sd_bus_is_ready");
        LOAD(&api, process, "sd_bus_process");
        LOAD(&api, wait, "sd_bus_wait");
        LOAD(&api, message_new_method_call, "sd_bus_message_new_method_call");
        LOAD(&api, message_append, "sd_bus_message_append");
        LOAD(&api, message_open_container, "sd_bus_message_open_container");
        LOAD(&api, message_close_container, "sd_bus_message_close_container");
        LOAD(&api, message_unref, "sd_bus_message_unref");
        LOAD(&api, call, "sd_bus_call");
        LOAD(&api, error_is_set, "sd_bus_error_is_set");
        LOAD(&api, error_free, "sd_bus_error_free");
        LOAD(&api, error_has_name, "sd_bus_error_has_name");
        LOAD(&api, message_read, "sd_bus_message_read");
        LOAD(&api, message_enter_container, "sd_bus_message_enter_container");
        LOAD(&api, message_exit_container, "sd_bus_message_exit_container");
        *ret = api;
        return 0;
missing:
        if (errbuf && errsize)
                snprintf(errbuf, errsize, "libsystemd.so.0 lacks sd-bus: %s", dlerror());
        dlclose(api.dl);
        return -EOPNOTSUPP;
}
#undef LOAD

void ag_sdbus_set_error(const SdBusApi *api, char *errbuf, size_t errsize, const sd_bus_error *e, int r) {
        if (!errbuf || errsize == 0)
                return;
        if (e && api->error_is_set(e))
                snprintf(errbuf, errsize, "%s", e->message ? e->message : e->name);
        else
                snprintf(errbuf, errsize, "%s", strerror(r < 0 ? -r : r));
}

static uint64_t now_usec(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return UINT64_MAX;      /* cannot tell: count the deadline as passed */
        return (uint64_t) ts.tv_sec * UINT64_C(1000000) + (uint64_t) ts.tv_nsec / 1000;
}

/* Closes and frees bus without flushing: sd_bus_flush() first waits for the
 * connection to be up, as long as libsystemd's authentication timeout (90 s)
 * when the peer never answers. Nothing of ours is left to send when this is
 * called (the call was answered, or is abandoned). */
static void bus_drop(const SdBusApi *api, sd_bus *bus) {
        if (!bus)
                return;
        api->close(bus);
        api->unref(bus);
}

/* Drives bus until it takes calls (connected, authenticated and, on a bus
 * daemon, Hello answered), no later than deadline (CLOCK_MONOTONIC, usec).
 * sd_bus_call() would wait for all that without regard to its own timeout,
 * up to libsystemd's authentication timeout (90 s). -ETIMEDOUT at the
 * deadline. */
static int bus_wait_ready(const SdBusApi *api, sd_bus *bus, uint64_t deadline) {
        for (;;) {
                uint64_t now;
                int r;

                r = api->is_ready(bus);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = api->process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                now = now_usec();
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = api->wait(bus, deadline - now);
                if (r < 0)
                        return r;
        }
}

/* A new bus connected to address; sd_bus_start() only begins the
 * (non-blocking) connect. */
static int open_address(const SdBusApi *api, const char *address, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = api->bus_new(&bus);
        if (r < 0)
                return r;
        r = api->set_address(bus, address);
        if (r >= 0)
                r = api->start(bus);
        if (r < 0) {
                bus_drop(api, bus);
                return r;
        }
        *ret = bus;
        return 0;
}

/* The user manager's private socket: a direct D-Bus connection to systemd
 * --user, no bus daemon (systemctl --user uses it the same way). */
static int open_user_private(const SdBusApi *api, const char *runtime_dir, sd_bus **ret) {
        _cleanup_free_ char *address = NULL;

        if (!runtime_dir || runtime_dir[0] != '/')
                return -ENXIO;
        if (asprintf(&address, "unix:path=%s/systemd/private", runtime_dir) < 0) {
                address = NULL;
                return -ENOMEM;
        }
        return open_address(api, address, ret);
}

/* One StartTransientUnit call on bus, the connection's set-up included, all
 * of it before deadline. *ret_answered: the manager answered (an error reply
 * included) or the attempt ran out of time, so another connection is not
 * tried. */
static int start_scope_on(const SdBusApi *api, sd_bus *bus, const char *scope, const char *slice,
                          const char *description, pid_t pid, uint64_t cpu_weight, uint64_t deadline,
                          bool *ret_answered, char *errbuf, size_t errsize) {
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t now;
        int r;

        *ret_answered = false;
        r = bus_wait_ready(api, bus, deadline);
        if (r < 0) {
                *ret_answered = r == -ETIMEDOUT;
                ag_sdbus_set_error(api, errbuf, errsize, NULL, r);
                return r;
        }
        r = api->message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                         "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0)
                r = api->message_append(m, "ss", scope, "fail");
        if (r >= 0)
                r = api->message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = api->message_append(m, "(sv)", "Description", "s", description);
        if (r >= 0)
                r = api->message_append(m, "(sv)", "Slice", "s", slice);
        if (r >= 0)
                r = api->message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t) pid);
        if (r >= 0)
                r = api->message_append(m, "(sv)", "CPUWeight", "t", cpu_weight);
        if (r >= 0)
                r = api->message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
        if (r >= 0)
                r = api->message_close_container(m);
        if (r >= 0)
                r = api->message_append(m, "a(sa(sv))", 0);
        if (r < 0) {
                *ret_answered = true;   /* our own message: no other bus would do better */
                ag_sdbus_set_error(api, errbuf, errsize, NULL, r);
        } else {
                /* what is left of the attempt's time; 0 would mean libsystemd's default */
                now = now_usec();
                r = api->call(bus, m, now < deadline ? deadline - now : 1, &error, &reply);
                if (r < 0) {
                        *ret_answered = api->error_is_set(&error) || r == -ETIMEDOUT;
                        ag_sdbus_set_error(api, errbuf, errsize, &error, r);
                }
        }
        api->error_free(&error);
        if (reply)
                api->message_unref(reply);
        if (m)
                api->message_unref(m);
        return r < 0 ? r : 0;
}

int ag_systemd_start_user_scope(const char *runtime_dir, const char *scope, const char *slice,
                                const char *description, pid_t pid, uint64_t cpu_weight,
                                uint64_t timeout_usec, char *errbuf, size_t errsize) {
        SdBusApi api;
        bool answered = false;
        sd_bus *bus = NULL;
        int r;

        if (!scope || !slice || !description || pid <= 0 || timeout_usec == 0)
                return -EINVAL;
        r = ag_sdbus_load(&api, errbuf, errsize);
        if (r < 0)
                return r;
        /* each attempt: connect, authenticate, (Hello,) call and answer within timeout_usec */
        r = open_user_private(&api, runtime_dir, &bus);
        if (r >= 0) {
                r = start_scope_on(&api, bus, scope, slice, description, pid, cpu_weight,
                                   now_usec() + timeout_usec, &answered, errbuf, errsize);
                bus_drop(&api, bus);
                bus = NULL;
        }
        if (r < 0 && !answered) {
                /* no private socket (or it refused us): the user bus */
                uint64_t deadline = now_usec() + timeout_usec;

                _cleanup_free_ char *address = NULL;

                r = ag_systemd_user_bus_address(getenv("DBUS_SESSION_BUS_ADDRESS"), runtime_dir, &address);
                if (r >= 0)
                        r = open_address(&api, address, &bus);
                if (r >= 0) {
                        r = start_scope_on(&api, bus, scope, slice, description, pid, cpu_weight, deadline,
                                           &answered, errbuf, errsize);
                        bus_drop(&api, bus);
                } else
                        ag_sdbus_set_error(&api, errbuf, errsize, NULL, r);
        }
        dlclose(api.dl);
        return r;
}
#else
int ag_systemd_start_user_scope(const char *runtime_dir, const char *scope, const char *slice,
                                const char *description, pid_t pid, uint64_t cpu_weight,
                                uint64_t timeout_usec, char *errbuf, size_t errsize) {
        (void) runtime_dir;
        (void) scope;
        (void) slice;
        (void) description;
        (void) pid;
        (void) cpu_weight;
        (void) timeout_usec;
        if (errbuf && errsize)
                snprintf(errbuf, errsize, "built without libsystemd");
        return -EOPNOTSUPP;
}
#endif
