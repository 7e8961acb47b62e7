/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * video: a stand-in for a video player that needs a fixed share of one CPU.
 *
 *   video FRAME_US WORK_US DURATION_S WARMUP_S OUTFILE
 *
 * Frames are due on a fixed CLOCK_MONOTONIC grid of FRAME_US. For each frame
 * the program works until it has used WORK_US of CPU time (its own thread
 * CPU clock, so time spent waiting for the CPU does not count as work), then
 * sleeps until the next frame starts. A frame finished after its deadline (the
 * start of the next frame) is late; frames whose whole slot passed while an
 * earlier one was still being worked on are dropped (the player skips to the
 * current frame) and counted as late too. WORK_US / FRAME_US is the CPU the
 * video needs: 8000 / 10000 = 0.8 CPU.
 *
 * Counting starts after WARMUP_S. Writes to OUTFILE:
 *   "frames=<due> late=<late or dropped> cpu=<CPUs used> latepct=<percent>"
 */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(clockid_t c) {
        struct timespec ts;

        clock_gettime(c, &ts);
        return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
        long long frame, work, dur, warm, t0, end, count_from, cpu0 = 0, wall0 = 0;
        long long due = 0, late = 0, k = 0;
        int counting = 0;
        FILE *f;

        if (argc != 6) {
                fprintf(stderr, "usage: video FRAME_US WORK_US DURATION_S WARMUP_S OUTFILE\n");
                return 2;
        }
        frame = atoll(argv[1]) * 1000LL;
        work = atoll(argv[2]) * 1000LL;
        dur = (long long) (atof(argv[3]) * 1e9);
        warm = (long long) (atof(argv[4]) * 1e9);
        if (frame <= 0 || work <= 0 || work > frame || dur <= 0 || warm < 0) {
                fprintf(stderr, "video: invalid arguments\n");
                return 2;
        }

        t0 = now_ns(CLOCK_MONOTONIC);
        count_from = t0 + warm;
        end = count_from + dur;
        for (;;) {
                long long start = t0 + k * frame, deadline = start + frame, c0, t;
                struct timespec ts;

                if (start >= end)
                        break;
                if (!counting && start >= count_from) {
                        counting = 1;
                        cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
                        wall0 = now_ns(CLOCK_MONOTONIC);
                }
                /* the frame's work: WORK_US of CPU time */
                c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
                while (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < work)
                        ;
                t = now_ns(CLOCK_MONOTONIC);
                if (counting) {
                        due++;
                        if (t > deadline)
                                late++;
                }
                /* the next frame: frames whose whole slot is over are dropped,
                 * the one whose slot is under way starts at once */
                k++;
                if (t > t0 + k * frame) {
                        long long m = (t - t0) / frame;       /* the slot under way */
                        if (counting) {
                                long long slots = (end - t0 + frame - 1) / frame;  /* slots starting before end */
                                long long skipped = (m < slots ? m : slots) - k;
                                if (skipped > 0) {
                                        due += skipped;
                                        late += skipped;
                                }
                        }
                        k = m;
                }
                start = t0 + k * frame;
                ts.tv_sec = start / 1000000000LL;
                ts.tv_nsec = start % 1000000000LL;
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
                        ;
        }

        f = fopen(argv[5], "w");
        if (!f) {
                perror("video: OUTFILE");
                return 1;
        }
        {
                long long wall = now_ns(CLOCK_MONOTONIC) - wall0, cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
                fprintf(f, "frames=%lld late=%lld cpu=%.3f latepct=%.1f\n", due, late,
                        wall > 0 ? (double) cpu / (double) wall : 0.0, due > 0 ? 100.0 * (double) late / (double) due : 0.0);
        }
        return fclose(f) == 0 ? 0 : 1;
}
