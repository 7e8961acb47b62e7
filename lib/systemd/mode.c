/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The mode decision and the names of the modes. See mode.h. */

#include <string.h>

#include "env.h"
#include "mode.h"

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

AgMode ag_mode_decide(const AgModeFacts *f) {
        if (f->in_login)
                return f->exported && strcmp(f->exported, AG_MODE_ENV_SYSTEMD) == 0 ? AG_MODE_SYSTEMD
                                                                                    : AG_MODE_CGROUPFS;
        switch (f->configured) {
        case AG_MODE_CGROUPFS:
        case AG_MODE_SYSTEMD:
                return f->configured;
        case AG_MODE_AUTO:
                if (f->booted && f->hierarchy && f->hierarchy->version == 2 && f->hierarchy->has_cpu)
                        return AG_MODE_SYSTEMD;
                return AG_MODE_CGROUPFS;
        default:
                return AG_MODE_CGROUPFS;
        }
}
