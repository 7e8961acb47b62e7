/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * schedattr: prints the scheduler attributes of processes (their main
 * threads) as sched_getattr() reports them, for the latency tests.
 *
 *   schedattr PID...
 *
 * One line a PID: "<pid> policy=<n> nice=<n> runtime=<ns>"; exit 1 when a
 * PID could not be read. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"

int main(int argc, char **argv) {
        int rc = 0;

        for (int i = 1; i < argc; i++) {
                AgSchedAttr a;
                int r = ag_sched_getattr((pid_t) atoi(argv[i]), &a);

                if (r < 0) {
                        fprintf(stderr, "schedattr: %s: %s\n", argv[i], strerror(-r));
                        rc = 1;
                        continue;
                }
                printf("%s policy=%" PRIu32 " nice=%" PRIi32 " runtime=%" PRIu64 "\n", argv[i], a.sched_policy,
                       a.sched_nice, a.sched_runtime);
        }
        return rc;
}
