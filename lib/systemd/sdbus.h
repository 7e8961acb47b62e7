/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sd-bus declarations lib/systemd/systemd.c needs. libsystemd.so.0 is loaded with
 * dlopen() and its functions looked up with dlsym(), so the build needs no
 * libsystemd at all: with <systemd/sd-bus.h> (AG_HAVE_SDBUS_H) its own
 * declarations are used, without it these few, which are sd-bus's stable
 * ABI (the opaque handles and the public sd_bus_error). */

#ifdef AG_HAVE_SDBUS_H
#include <systemd/sd-bus.h>
#else
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;

typedef struct {
        const char *name;
        const char *message;
        int _need_free;
} sd_bus_error;

#define SD_BUS_ERROR_NULL ((const sd_bus_error) { NULL, NULL, 0 })
#define SD_BUS_ERROR_INVALID_ARGS "org.freedesktop.DBus.Error.InvalidArgs"
#endif

/* Internal to lib/systemd*.c: the sd-bus functions, from libsystemd.so.0
 * loaded with dlopen(). */

#ifdef AG_HAVE_SDBUS
#include <stddef.h>
#include <stdint.h>

/* libsystemd is loaded with dlopen() when the systemd mode first needs it,
 * not linked: linked, every dlopen() of pam_autogroup.so by libpam (once a
 * login in login, su, cron...) would map and relocate libsystemd and its
 * seven dependencies even in the cgroupfs mode, about 0.8 ms a login here
 * (bench/login). RTLD_NODELETE: once loaded it stays for the process's life,
 * as it would have linked. */
typedef struct SdBusApi {
        void *dl;
        int (*open_system)(sd_bus **ret);
        int (*bus_new)(sd_bus **ret);
        int (*set_address)(sd_bus *bus, const char *address);
        int (*start)(sd_bus *bus);
        sd_bus *(*flush_close_unref)(sd_bus *bus);
        void (*close)(sd_bus *bus);
        sd_bus *(*unref)(sd_bus *bus);
        int (*is_ready)(sd_bus *bus);
        int (*process)(sd_bus *bus, sd_bus_message **r);
        int (*wait)(sd_bus *bus, uint64_t timeout_usec);
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
        int (*error_has_name)(const sd_bus_error *e, const char *name);
        int (*message_read)(sd_bus_message *m, const char *types, ...);
        int (*message_enter_container)(sd_bus_message *m, char type, const char *contents);
        int (*message_exit_container)(sd_bus_message *m);
} SdBusApi;

/* Loads libsystemd.so.0 and the functions above; -EOPNOTSUPP (errbuf says
 * why) when it cannot. dlclose(ret->dl) when done. */
int ag_sdbus_load(SdBusApi *ret, char *errbuf, size_t errsize);

/* errbuf gets e's message (or name) when e is set, strerror(r) otherwise. */
void ag_sdbus_set_error(const SdBusApi *api, char *errbuf, size_t errsize, const sd_bus_error *e, int r);
#endif
