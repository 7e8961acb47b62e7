/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sd-bus declarations lib/systemd.c needs. libsystemd.so.0 is loaded with
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
#endif
