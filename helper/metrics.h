/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "autogroup metrics": the collected trees (status.h) in the Prometheus text
 * exposition format (version 0.0.4, what node_exporter's textfile collector
 * reads), one series per user group and per pool. */

#include <stddef.h>
#include <stdio.h>

#include "status.h"

/* The metrics of n trees (several roots; the systemd mode's user slices),
 * each family once. Label values are escaped as the format says; bytes that
 * are not UTF-8 and control characters become the four characters \xNN. */
void ag_metrics_print(AgStatus *const *v, size_t n, FILE *f);

/* The same into path, atomically: a temporary file in path's directory
 * (".NAME.XXXXXX", which the textfile collector does not read) renamed over
 * path, mode 0644. Nothing is left behind on failure. */
int ag_metrics_write(const char *path, AgStatus *const *v, size_t n);
