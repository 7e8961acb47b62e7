/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests of lib/systemd/systemd.c: mode names, the auto decision, unit values,
 * and the bound of ag_systemd_start_user_scope() when the user manager's
 * sockets are missing or never answer (real sockets in a temporary
 * directory, the real libsystemd); the user bus address "autogroup enter"
 * accepts (never unixexec:) and its backstop alarm under a blocked SIGALRM;
 * "autogroup run" in the systemd mode: its scope names and weights, and
 * ag_run_systemd_place() against a manager that never answers and a fake
 * one (sd-bus in server mode on the private socket) that records what
 * StartTransientUnit carried. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "enter-systemd.h"
#include "run-systemd.h"
#include "status.h"
#include "systemd.h"
#include "unit-util.h"

#ifdef AG_HAVE_SDBUS
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>
#endif

static void test_mode_names(void **state) {
        (void) state;
        assert_int_equal(ag_mode_from_string("auto"), AG_MODE_AUTO);
        assert_int_equal(ag_mode_from_string("cgroupfs"), AG_MODE_CGROUPFS);
        assert_int_equal(ag_mode_from_string("systemd"), AG_MODE_SYSTEMD);
        assert_int_equal(ag_mode_from_string("Systemd"), _AG_MODE_INVALID);
        assert_int_equal(ag_mode_from_string(""), _AG_MODE_INVALID);
        assert_int_equal(ag_mode_from_string("cgroupfs "), _AG_MODE_INVALID);
        assert_int_equal(ag_mode_from_string(NULL), _AG_MODE_INVALID);
        for (int m = 0; m < _AG_MODE_MAX; m++)
                assert_int_equal(ag_mode_from_string(ag_mode_to_string((AgMode) m)), m);
        assert_null(ag_mode_to_string(_AG_MODE_MAX));
        assert_null(ag_mode_to_string(_AG_MODE_INVALID));
}

static AgMode decide(AgMode configured, bool booted, const AgHierarchy *h) {
        return ag_mode_decide(&(AgModeFacts) { .configured = configured, .booted = booted, .hierarchy = h });
}

static AgMode decide_in_login(const char *exported, AgMode configured, const AgHierarchy *h) {
        return ag_mode_decide(&(AgModeFacts) { .configured = configured, .booted = true, .hierarchy = h,
                                               .in_login = true, .exported = exported });
}

static void test_mode_decide(void **state) {
        AgHierarchy v2cpu = { .version = 2, .mount = (char *) "/sys/fs/cgroup", .has_cpu = true };
        AgHierarchy v2 = { .version = 2, .mount = (char *) "/sys/fs/cgroup/unified", .has_cpu = false };
        AgHierarchy v1 = { .version = 1, .mount = (char *) "/sys/fs/cgroup/cpu", .has_cpu = true };

        (void) state;
        /* auto: systemd only when booted with systemd on cgroup v2 with cpu */
        assert_int_equal(decide(AG_MODE_AUTO, true, &v2cpu), AG_MODE_SYSTEMD);
        assert_int_equal(decide(AG_MODE_AUTO, false, &v2cpu), AG_MODE_CGROUPFS);
        assert_int_equal(decide(AG_MODE_AUTO, true, &v1), AG_MODE_CGROUPFS);
        assert_int_equal(decide(AG_MODE_AUTO, true, &v2), AG_MODE_CGROUPFS);
        assert_int_equal(decide(AG_MODE_AUTO, true, NULL), AG_MODE_CGROUPFS);
        /* forced modes stay */
        assert_int_equal(decide(AG_MODE_CGROUPFS, true, &v2cpu), AG_MODE_CGROUPFS);
        assert_int_equal(decide(AG_MODE_SYSTEMD, false, NULL), AG_MODE_SYSTEMD);
        assert_int_equal(decide(AG_MODE_SYSTEMD, true, &v1), AG_MODE_SYSTEMD);
        /* a verb in the caller's login: what the module exported, whatever the host */
        assert_int_equal(decide_in_login("systemd", AG_MODE_AUTO, &v1), AG_MODE_SYSTEMD);
        assert_int_equal(decide_in_login(NULL, AG_MODE_AUTO, &v2cpu), AG_MODE_CGROUPFS);
        assert_int_equal(decide_in_login("", AG_MODE_SYSTEMD, &v2cpu), AG_MODE_CGROUPFS);
        assert_int_equal(decide_in_login("Systemd", AG_MODE_AUTO, &v2cpu), AG_MODE_CGROUPFS);
}

static void test_booted(void **state) {
        char dir[] = "/tmp/ag-unit-sd.XXXXXX", p[256];

        (void) state;
        assert_non_null(mkdtemp(dir));
        assert_false(ag_systemd_booted(dir));
        snprintf(p, sizeof p, "%s/systemd", dir);
        assert_int_equal(mkdir(p, 0755), 0);
        assert_false(ag_systemd_booted(dir));
        /* a symlink to a directory does not count (sd_booted uses lstat) */
        snprintf(p, sizeof p, "%s/systemd/system", dir);
        assert_int_equal(symlink("/", p), 0);
        assert_false(ag_systemd_booted(dir));
        assert_int_equal(unlink(p), 0);
        assert_int_equal(mkdir(p, 0755), 0);
        assert_true(ag_systemd_booted(dir));
        assert_int_equal(rmdir(p), 0);
        snprintf(p, sizeof p, "%s/systemd", dir);
        assert_int_equal(rmdir(p), 0);
        assert_int_equal(rmdir(dir), 0);
}

static void test_unit_values(void **state) {
        AgPolicy p;
        AgUnitValues v;

        (void) state;
        ag_policy_init(&p);
        ag_policy_to_unit_values(&p, &v);
        assert_int_equal(v.cpu_weight, 100);
        assert_true(v.cpu_quota_per_sec_usec == AG_SYSTEMD_USEC_INFINITY);

        p.weight = 400;
        p.max_pct = 150;
        ag_policy_to_unit_values(&p, &v);
        assert_int_equal(v.cpu_weight, 400);
        assert_int_equal(v.cpu_quota_per_sec_usec, 1500000);   /* 150% = 1.5 s per second */

        p.max_pct = 0;
        ag_policy_to_unit_values(&p, &v);
        assert_int_equal(v.cpu_quota_per_sec_usec, 0);

        p.max_pct = AG_MAX_PCT_MAX;
        ag_policy_to_unit_values(&p, &v);
        assert_int_equal(v.cpu_quota_per_sec_usec, UINT64_C(1024000000));

        p.idle = true;
        ag_policy_to_unit_values(&p, &v);
        assert_true(v.cpu_weight == AG_SYSTEMD_CPU_WEIGHT_IDLE);
}

static void test_slice_name(void **state) {
        char buf[64], small[8];

        (void) state;
        assert_int_equal(ag_user_slice_name(1000, buf, sizeof buf), 0);
        assert_string_equal(buf, "user-1000.slice");
        assert_int_equal(ag_user_slice_name(4294967294U, buf, sizeof buf), 0);
        assert_string_equal(buf, "user-4294967294.slice");
        assert_int_equal(ag_user_slice_name(1000, small, sizeof small), -ENOBUFS);
}

static void test_session_scope_name(void **state) {
        char buf[64];

        (void) state;
        assert_int_equal(ag_session_scope_name("7", buf, sizeof buf), 0);
        assert_string_equal(buf, "session-7.scope");
        assert_int_equal(ag_session_scope_name("c2a", buf, sizeof buf), 0);
        assert_string_equal(buf, "session-c2a.scope");
        assert_int_equal(ag_session_scope_name(NULL, buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_session_scope_name("", buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_session_scope_name("1/../2", buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_session_scope_name("1.scope", buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_session_scope_name("123456789012345678901234567890123", buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_session_scope_name("7", buf, 8), -ENAMETOOLONG);
}

static void test_terminal_scope_name(void **state) {
        char buf[64], small[16];

        (void) state;
        assert_int_equal(ag_terminal_scope_name(4242, buf, sizeof buf), 0);
        assert_string_equal(buf, "autogroup-sid-4242.scope");
        assert_int_equal(ag_terminal_scope_name(0, buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_terminal_scope_name(-1, buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_terminal_scope_name(4242, small, sizeof small), -ENOBUFS);
}

static void test_scope_place(void **state) {
        (void) state;
        /* logind's session scopes of this user */
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/session-3.scope", 1000, 77), AG_SCOPE_PLACE_SESSION);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/session-c12.scope", 1000, 77), AG_SCOPE_PLACE_SESSION);
        /* its own terminal scope: only the one named after its session */
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/user@1000.service/app.slice/autogroup-sid-77.scope",
                                        1000, 77), AG_SCOPE_PLACE_OWN);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/user@1000.service/app.slice/autogroup-sid-78.scope",
                                        1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/user@1000.service/app.slice/autogroup-sid-77.scope/x",
                                        1000, 77), AG_SCOPE_PLACE_OTHER);
        /* another user's, or not a session scope */
        assert_int_equal(ag_scope_place("/user.slice/user-1001.slice/session-3.scope", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/user.slice/user-10000.slice/session-3.scope", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/session-3.scope/sub", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/session-.scope", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/session-3.scopex", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/session-../x.scope", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/user.slice/user-1000.slice/user@1000.service/app.slice/tmux-spawn-1.scope",
                                        1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/system.slice/ssh.service", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/autogroup/user-1000/s3/login", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place("/", 1000, 77), AG_SCOPE_PLACE_OTHER);
        assert_int_equal(ag_scope_place(NULL, 1000, 77), AG_SCOPE_PLACE_OTHER);
}

/* ---- ag_systemd_start_user_scope() against sockets that fail or hang */

/* The liveness guard: a hang becomes a failure (libsystemd's own
 * authentication timeout would otherwise hold the call for 90 s). No timing
 * is asserted. */
#define LIVENESS_S 30

static void hung(int sig) {
        static const char msg[] = "ag_systemd_start_user_scope() still had not returned after "
                                  "30 s: the attempt is not bounded\n";
        (void) sig;
        (void) !write(STDERR_FILENO, msg, sizeof msg - 1);
        _exit(1);
}

/* A unix stream socket listening at path that nobody ever accepts or
 * answers: connect() succeeds (the backlog), the D-Bus authentication
 * never gets a reply. Returns its fd. */
static int silent_listener(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        assert_true(strlen(path) < sizeof sa.sun_path);
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof sa), 0);
        assert_int_equal(listen(fd, 16), 0);
        return fd;
}

typedef struct Dirs {
        char top[64];
        char sd[96];       /* top/systemd */
        char priv[128];    /* top/systemd/private */
        char bus[128];     /* top/bus */
} Dirs;

/* the paths below d->top */
static void dirs_name(Dirs *d) {
        snprintf(d->sd, sizeof d->sd, "%s/systemd", d->top);
        snprintf(d->priv, sizeof d->priv, "%s/private", d->sd);
        snprintf(d->bus, sizeof d->bus, "%s/bus", d->top);
}

static int dirs_setup(void **state) {
        Dirs *d = calloc(1, sizeof *d);

        if (!d || !tmpdir_make(d->top, sizeof d->top, "/tmp/ag-unit-sd.XXXXXX"))
                return -1;
        dirs_name(d);
        *state = d;
        return mkdir(d->sd, 0700);
}

static int dirs_teardown(void **state) {
        Dirs *d = *state;

        alarm(0);
        (void) unlink(d->priv);
        (void) unlink(d->bus);
        (void) rmdir(d->sd);
        (void) rmdir(d->top);
        free(d);
        return 0;
}

/* a test run with fresh Dirs in *state */
#define dirs_test(f) cmocka_unit_test_setup_teardown(f, dirs_setup, dirs_teardown)

/* One call as "autogroup enter" makes it, the user bus at dir/bus. */
static int start_scope(const Dirs *d, char *why, size_t size) {
        char address[160];
        int r;

        snprintf(address, sizeof address, "unix:path=%s", d->bus);
        assert_int_equal(setenv("DBUS_SESSION_BUS_ADDRESS", address, 1), 0);
        signal(SIGALRM, hung);
        alarm(LIVENESS_S);
        r = ag_systemd_start_user_scope(d->top, "autogroup-sid-77.scope", "app.slice", "unit test", getpid(),
                                        100, UINT64_C(200000), why, size);
        alarm(0);
        return r;
}

static void test_scope_no_socket(void **state) {
        const Dirs *d = *state;
        char why[256] = "";
        int r;

        r = start_scope(d, why, sizeof why);
        if (r == -EOPNOTSUPP)
                skip();         /* built without libsystemd, or it cannot be loaded */
        print_message("# no private socket, no user bus: %d (%s)\n", r, why);
        assert_true(r < 0);
        assert_int_not_equal(r, -ETIMEDOUT);
        assert_true(why[0] != 0);
}

/* A listener at socket_path that never answers: the attempt ends at its
 * deadline with -ETIMEDOUT and a reason. */
static void check_never_answers(const Dirs *d, const char *socket_path, const char *what) {
        char why[256] = "";
        int fd, r;

        fd = silent_listener(socket_path);
        r = start_scope(d, why, sizeof why);
        close(fd);
        if (r == -EOPNOTSUPP)
                skip();
        print_message("# %s: %d (%s)\n", what, r, why);
        assert_int_equal(r, -ETIMEDOUT);
        assert_true(why[0] != 0);
}

static void test_scope_private_never_answers(void **state) {
        const Dirs *d = *state;

        check_never_answers(d, d->priv, "private socket that never answers");
}

static void test_scope_user_bus_never_answers(void **state) {
        const Dirs *d = *state;

        /* no private socket: the user bus is tried, and hangs */
        (void) unlink(d->priv);
        check_never_answers(d, d->bus, "no private socket, a user bus that never answers");
}

static void test_user_bus_address(void **state) {
        char *a = NULL;

        (void) state;
        assert_int_equal(ag_systemd_user_bus_address("unix:path=/run/user/5/bus", "/run/user/7", &a), 0);
        assert_string_equal(a, "unix:path=/run/user/5/bus");
        free(a);
        /* anything but one unix: address: the manager's own bus socket */
        const char *refused[] = {
                "unixexec:path=/bin/sh,argv1=-c,argv2=true",
                "unix:path=/x;unixexec:path=/bin/sh",
                "tcp:host=127.0.0.1,port=1",
                "unix:",
                "",
                " unix:path=/x",
        };
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
                a = NULL;
                assert_int_equal(ag_systemd_user_bus_address(refused[i], "/run/user/7", &a), 0);
                assert_string_equal(a, "unix:path=/run/user/7/bus");
                free(a);
        }
        a = NULL;
        assert_int_equal(ag_systemd_user_bus_address(NULL, "/run/user/7", &a), 0);
        assert_string_equal(a, "unix:path=/run/user/7/bus");
        free(a);
        a = (char *) "untouched";
        assert_int_equal(ag_systemd_user_bus_address("unixexec:path=/bin/true", NULL, &a), -ENXIO);
        assert_string_equal(a, "untouched");
}

/* DBUS_SESSION_BUS_ADDRESS=unixexec:... names a program that would leave a
 * mark: it is never run. */
static void test_scope_unixexec_refused(void **state) {
        const Dirs *d = *state;
        char address[256], mark[128], why[256] = "";
        struct stat st;
        int r;

        snprintf(mark, sizeof mark, "%s/ran", d->top);
        snprintf(address, sizeof address, "unixexec:path=/bin/sh,argv0=sh,argv1=-c,argv2=touch%%20%s", mark);
        assert_int_equal(setenv("DBUS_SESSION_BUS_ADDRESS", address, 1), 0);
        signal(SIGALRM, hung);
        alarm(LIVENESS_S);
        r = ag_systemd_start_user_scope(d->top, "autogroup-sid-77.scope", "app.slice", "unit test", getpid(),
                                        100, UINT64_C(200000), why, sizeof why);
        alarm(0);
        usleep(100000);         /* a program started would have written its mark by now */
        unsetenv("DBUS_SESSION_BUS_ADDRESS");
        if (r == -EOPNOTSUPP)
                skip();
        print_message("# unixexec: address: %d (%s)\n", r, why);
        assert_true(r < 0);
        assert_int_equal(stat(mark, &st), -1);
        (void) unlink(mark);
}

static void deadline_exit(int sig) {
        (void) sig;
        _exit(0);
}

/* The helper's backstop alarm fires even when the caller blocked SIGALRM
 * (the mask survives exec): the process ends, exit 0. */
static void test_deadline_blocked_alarm(void **state) {
        sigset_t ss;
        pid_t pid;
        int status = -1;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                sigemptyset(&ss);
                sigaddset(&ss, SIGALRM);
                sigprocmask(SIG_BLOCK, &ss, NULL);
                signal(SIGALRM, SIG_IGN);
                if (ag_enter_deadline_arm(1, deadline_exit) < 0)
                        _exit(3);
                for (;;)
                        pause();        /* "anything else blocks" */
        }
        signal(SIGALRM, hung);
        alarm(LIVENESS_S);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        alarm(0);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void put(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* ag_systemd_user_slice_forget() on a tree shaped like /sys/fs/cgroup and
 * /run/systemd/system.control */
static void test_slice_forget(void **state) {
        char top[] = "/tmp/ag-unit-forget.XXXXXX", p[256], q[256];
        struct stat st;

        (void) state;
        assert_non_null(mkdtemp(top));
        snprintf(p, sizeof p, "%s/cg", top); assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/cg/user.slice", top); assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/cg/user.slice/user-5.slice", top); assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/ctl", top); assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d", top); assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-CPUWeight.conf", top); put(p, "[Slice]\nCPUWeight=100\n");
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-CPUQuota.conf", top); put(p, "[Slice]\nCPUQuota=\n");
        snprintf(q, sizeof q, "%s/cg", top);
        snprintf(p, sizeof p, "%s/ctl", top);
        char rd[256];
        snprintf(rd, sizeof rd, "%s/rec", top);
        AgSystemdPaths paths = { .control_dir = p, .record_dir = rd };
        /* the module's own: CPUWeight; 50-CPUQuota.conf is an administrator's set-property */
        assert_int_equal(ag_systemd_record_dropin(&paths, 5, AG_SLICE_WEIGHT, "50-CPUWeight.conf"), 0);

        /* in use: nothing is removed */
        char ev[256];
        snprintf(ev, sizeof ev, "%s/cg/user.slice/user-5.slice/cgroup.events", top);
        put(ev, "populated 1\nfrozen 0\n");
        assert_int_equal(ag_systemd_user_slice_forget(5, q, &paths), -EBUSY);
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-CPUWeight.conf", top);
        assert_int_equal(stat(p, &st), 0);

        /* the slice cannot be looked at (no cgroup root; a symlink in place
         * of user.slice or of the slice): not known empty, nothing is removed */
        char r1[256], r2[256];
        snprintf(r1, sizeof r1, "%s/none", top);
        snprintf(p, sizeof p, "%s/ctl", top);
        assert_int_equal(ag_systemd_user_slice_forget(5, r1, &paths), -EBUSY);
        static const char *const moved[][2] = {         /* the directory, the name it is moved to */
                { "user.slice/user-5.slice", "real-5" },
                { "user.slice", "real.slice" },
        };
        for (size_t i = 0; i < sizeof moved / sizeof moved[0]; i++) {
                snprintf(r1, sizeof r1, "%s/cg/%s", top, moved[i][0]);
                snprintf(r2, sizeof r2, "%.*s%s", (int) (strrchr(r1, '/') + 1 - r1), r1, moved[i][1]);
                assert_int_equal(rename(r1, r2), 0);
                assert_int_equal(symlink(moved[i][1], r1), 0);
                assert_int_equal(ag_systemd_user_slice_forget(5, q, &paths), -EBUSY);
                assert_int_equal(unlink(r1), 0);
                assert_int_equal(rename(r2, r1), 0);
        }
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-CPUWeight.conf", top);
        assert_int_equal(stat(p, &st), 0);
        snprintf(p, sizeof p, "%s/ctl", top);

        /* empty: our drop-in goes; the administrator's and another setting
         * stay, and keep the directory */
        put(ev, "populated 0\nfrozen 0\n");
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-MemoryMax.conf", top); put(p, "[Slice]\nMemoryMax=1G\n");
        snprintf(p, sizeof p, "%s/ctl", top);
        assert_int_equal(ag_systemd_user_slice_forget(5, q, &paths), 0);
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-CPUWeight.conf", top);
        assert_int_equal(stat(p, &st), -1);
        snprintf(p, sizeof p, "%s/rec/user-5.slice", top);
        assert_int_equal(stat(p, &st), -1);             /* the record goes with it */
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-CPUQuota.conf", top);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(unlink(p), 0);
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d/50-MemoryMax.conf", top);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(unlink(p), 0);

        /* no slice cgroup at all, no drop-ins: nothing to do; the directory goes */
        snprintf(p, sizeof p, "%s/ctl", top);
        assert_int_equal(ag_systemd_user_slice_forget(5, q, &paths), 0);
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d", top);
        assert_int_equal(stat(p, &st), -1);

        /* a symlink in place of the drop-in directory is not followed */
        snprintf(p, sizeof p, "%s/victim", top); assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/victim/50-CPUWeight.conf", top); put(p, "x\n");
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d", top);
        snprintf(q, sizeof q, "%s/victim", top);
        assert_int_equal(symlink(q, p), 0);
        snprintf(q, sizeof q, "%s/cg", top);
        snprintf(p, sizeof p, "%s/ctl", top);
        assert_int_equal(ag_systemd_user_slice_forget(5, q, &paths), 0);
        snprintf(p, sizeof p, "%s/victim/50-CPUWeight.conf", top);
        assert_int_equal(stat(p, &st), 0);

        /* cleanup */
        unlink(p);
        snprintf(p, sizeof p, "%s/victim", top); rmdir(p);
        snprintf(p, sizeof p, "%s/ctl/user-5.slice.d", top); unlink(p);
        snprintf(p, sizeof p, "%s/ctl", top); rmdir(p);
        snprintf(p, sizeof p, "%s/rec", top); rmdir(p);
        unlink(ev);
        snprintf(p, sizeof p, "%s/cg/user.slice/user-5.slice", top); rmdir(p);
        snprintf(p, sizeof p, "%s/cg/user.slice", top); rmdir(p);
        snprintf(p, sizeof p, "%s/cg", top); rmdir(p);
        assert_int_equal(rmdir(top), 0);
}

static void mk(const char *top, const char *rel) {
        char p[512];

        snprintf(p, sizeof p, "%s/%s", top, rel);
        assert_int_equal(mkdir(p, 0755), 0);
}

static void wr(const char *top, const char *rel, const char *text) {
        char p[512];

        snprintf(p, sizeof p, "%s/%s", top, rel);
        put(p, text);
}

/* ag_status_systemd_collect() and the printers on a tree shaped like
 * /sys/fs/cgroup/user.slice */
static void test_status_systemd(void **state) {
        char top[] = "/tmp/ag-unit-status.XXXXXX", cmd[600], *text = NULL, *json = NULL;
        const char *m = "user.slice/user-5.slice/user@5.service/app.slice";
        AgHierarchy h = { .version = 2, .has_cpu = true };
        AgStatus *s = NULL;
        size_t len = 0;
        FILE *f;
        char p[512];

        (void) state;
        assert_non_null(mkdtemp(top));
        h.mount = top;
        mk(top, "user.slice");
        mk(top, "user.slice/user-5.slice");
        wr(top, "user.slice/user-5.slice/cpu.weight", "300\n");
        wr(top, "user.slice/user-5.slice/cpu.max", "150000 100000\n");
        wr(top, "user.slice/user-5.slice/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n");
        mk(top, "user.slice/user-5.slice/session-3.scope");
        wr(top, "user.slice/user-5.slice/session-3.scope/cpu.weight", "100\n");
        wr(top, "user.slice/user-5.slice/session-3.scope/cgroup.procs", "11\n12\n");
        mk(top, "user.slice/user-5.slice/user@5.service");
        mk(top, "user.slice/user-5.slice/user@5.service/app.slice");
        snprintf(p, sizeof p, "%s/autogroup-sid-77.scope", m); mk(top, p);
        snprintf(p, sizeof p, "%s/autogroup-sid-77.scope/cpu.weight", m); wr(top, p, "100\n");
        snprintf(p, sizeof p, "%s/autogroup-sid-\xe2\x80\xae\x1b[2J.scope", m); mk(top, p);   /* bidi, escape */
        snprintf(p, sizeof p, "%s/autogroup-run-88.scope", m); mk(top, p);
        snprintf(p, sizeof p, "%s/tmux-spawn-1.scope", m); mk(top, p);                    /* not ours */
        mk(top, "user.slice/user-5.slice/other.service");
        mk(top, "user.slice/user-6.slice");
        mk(top, "user.slice/something-else");

        assert_int_equal(ag_status_systemd_collect(&h, (uid_t) -1, &s), 0);
        assert_non_null(s->tree);
        assert_true(s->systemd);
        assert_int_equal(s->tree->n_children, 2);               /* user-5, user-6 */
        AgStatusNode *u5 = s->tree->children[0];
        assert_string_equal(u5->name, "user-5.slice");
        assert_true(u5->is_user);
        assert_int_equal(u5->uid, 5);
        assert_int_equal(u5->weight, 300);
        assert_int_equal(u5->quota_us, 150000);
        assert_int_equal(u5->cpu_usec, 2500000);
        assert_int_equal(u5->n_children, 2);                    /* session-3.scope, user@5.service */
        assert_string_equal(u5->children[0]->name, "session-3.scope");
        assert_int_equal(u5->children[0]->procs, 2);
        assert_string_equal(u5->children[1]->name, "user@5.service");
        assert_int_equal(u5->children[1]->n_children, 3);       /* two autogroup-sid scopes, one autogroup-run */
        for (size_t i = 0; i < 3; i++) {
                const AgStatusNode *c = u5->children[1]->children[i];

                if (strcmp(c->name, "app.slice/autogroup-sid-77.scope") == 0)
                        assert_string_equal(c->kind, "terminal");
                else if (strcmp(c->name, "app.slice/autogroup-run-88.scope") == 0)
                        assert_string_equal(c->kind, "run");
        }

        f = open_memstream(&text, &len);
        ag_status_print(s, f, false);
        fclose(f);
        f = open_memstream(&json, &len);
        ag_status_print_json(s, f);
        fclose(f);
        print_message("%s%s", text, json);
        assert_non_null(strstr(text, "user-5.slice"));
        assert_non_null(strstr(text, "app.slice/autogroup-sid-77.scope"));
        assert_non_null(strstr(text, "150%"));
        assert_non_null(strstr(text, "systemd mode"));
        assert_null(strstr(text, "No groups"));
        assert_null(strstr(text, "\xe2\x80\xae"));              /* neither bidi nor escape reach the terminal */
        assert_null(strstr(text, "\x1b"));
        assert_null(strstr(json, "\x1b"));
        assert_non_null(strstr(json, "\"mode\":\"systemd\""));
        assert_non_null(strstr(json, "\"kind\":\"terminal\""));
        assert_non_null(strstr(json, "\"kind\":\"run\""));
        free(text);
        free(json);
        ag_status_free(s);

        /* one user only */
        assert_int_equal(ag_status_systemd_collect(&h, 6, &s), 0);
        assert_int_equal(s->tree->n_children, 1);
        assert_string_equal(s->tree->children[0]->name, "user-6.slice");
        ag_status_free(s);

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
        assert_int_equal(system(cmd), 0);

        /* no user.slice: no tree, and the text says why */
        assert_non_null(mkdtemp(strcpy(top, "/tmp/ag-unit-status.XXXXXX")));
        h.mount = top;
        assert_int_equal(ag_status_systemd_collect(&h, (uid_t) -1, &s), 0);
        assert_null(s->tree);
        f = open_memstream(&text, &len);
        ag_status_print(s, f, false);
        fclose(f);
        assert_non_null(strstr(text, "No user slices"));
        free(text);
        ag_status_free(s);
        rmdir(top);
}

/* the nested-login test of the systemd mode: a logind session scope,
 * exactly, and none of the look-alikes a user can make in the delegated
 * tree of the user manager */
static void test_session_scope_path(void **state) {
        static const char *const yes[] = {
                "/user.slice/user-1000.slice/session-3.scope",
                "/user.slice/user-0.slice/session-c12.scope",
        };
        static const char *const no[] = {
                "/user.slice/user-1000.slice/user@1000.service/app.slice/session-x.scope",
                "/user.slice/user-1000.slice/user@1000.service/session-3.scope",
                "/user.slice/user-1000.slice/session-3.scope/sub",
                "/user.slice/user-1000.slice/session-3.scope/session-4.scope",
                "/user.slice/user-1000.slice/session-.scope",
                "/user.slice/user-1000.slice/session-3.scope.x",
                "/user.slice/user-1000.slice/session-3_x.scope",
                "/user.slice/user-01000.slice/session-3.scope",
                "/user.slice/user-.slice/session-3.scope",
                "/user.slice/user-1000x.slice/session-3.scope",
                "/system.slice/session-3.scope",
                "/user.slice/session-3.scope",
                "/x/user.slice/user-1000.slice/session-3.scope",
                "user.slice/user-1000.slice/session-3.scope",
                "/user.slice/user-1000.slice/session-3.scope\n",
                "/",
                "",
        };

        (void) state;
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
                assert_true(ag_systemd_session_scope_path(yes[i]));
        for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
                if (ag_systemd_session_scope_path(no[i]))
                        fail_msg("taken for a session scope: %s", no[i]);
        }
}


/* ---- "autogroup run" in the systemd mode */

static void test_run_scope_names(void **state) {
        char buf[256], small[16];

        (void) state;
        assert_int_equal(ag_run_scope_name(4242, 0, buf, sizeof buf), 0);
        assert_string_equal(buf, "autogroup-run-4242.scope");
        assert_int_equal(ag_run_scope_name(4242, 2, buf, sizeof buf), 0);
        assert_string_equal(buf, "autogroup-run-4242-2.scope");
        assert_int_equal(ag_run_scope_name(0, 0, buf, sizeof buf), -EINVAL);
        assert_int_equal(ag_run_scope_name(4242, 0, small, sizeof small), -ENOBUFS);
        assert_int_equal(ag_user_unit_path(1000, "app.slice", "autogroup-run-7.scope", buf, sizeof buf), 0);
        assert_string_equal(buf, "/user.slice/user-1000.slice/user@1000.service/app.slice/autogroup-run-7.scope");
        assert_int_equal(ag_user_unit_path(1000, "app.slice", "autogroup-run-7.scope", small, sizeof small), -ENOBUFS);
        /* where run asks for a scope: inside the user's own slice only */
        assert_true(ag_systemd_in_user_slice("/user.slice/user-1000.slice/session-3.scope", 1000));
        assert_true(ag_systemd_in_user_slice("/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope", 1000));
        assert_false(ag_systemd_in_user_slice("/user.slice/user-1000.slice/", 1000));
        assert_false(ag_systemd_in_user_slice("/user.slice/user-1000.slice", 1000));
        assert_false(ag_systemd_in_user_slice("/user.slice/user-10000.slice/session-3.scope", 1000));
        assert_false(ag_systemd_in_user_slice("/user.slice/user-1001.slice/session-3.scope", 1000));
        assert_false(ag_systemd_in_user_slice("/system.slice/cron.service", 1000));
        assert_false(ag_systemd_in_user_slice(NULL, 1000));
}

static void test_run_weight(void **state) {
        AgRunOptions o = { .latency = AG_LATENCY_AUDIO, .set_latency = true, .idle = -1, .interactive = 2 };

        (void) state;
        assert_int_equal(ag_run_systemd_weight(&o), 1000);
        o.interactive = 1;
        assert_int_equal(ag_run_systemd_weight(&o), 400);
        o.latency = AG_LATENCY_INTERACTIVE;
        assert_int_equal(ag_run_systemd_weight(&o), 200);
        o.interactive = 2;
        assert_int_equal(ag_run_systemd_weight(&o), 400);
        o.latency = AG_LATENCY_BATCH;
        assert_int_equal(ag_run_systemd_weight(&o), 100);
        /* level 0, or no class: CPUWeight=100, the default, set so that the
         * manager enables cpu for the scope (a group of its own) */
        o.interactive = 0;
        assert_int_equal(ag_run_systemd_weight(&o), 100);
        o.interactive = 2;
        o.set_latency = false;
        assert_int_equal(ag_run_systemd_weight(&o), 100);
        /* --idle: CPUWeight=idle; --weight wins */
        o.idle = 1;
        assert_true(ag_run_systemd_weight(&o) == AG_SYSTEMD_CPU_WEIGHT_IDLE);
        o.weight = 300;
        assert_int_equal(ag_run_systemd_weight(&o), 300);
}

/* The hierarchy ag_run_systemd_place() waits in: where this test process
 * sits is never the scope's cgroup (no manager moves it). */
static const AgHierarchy run_h = { .version = 2, .mount = (char *) "/sys/fs/cgroup", .has_cpu = true };

/* A manager that never answers: the request ends at its bound with a reason. */
static void test_run_place_never_answers(void **state) {
        const Dirs *d = *state;
        char unit[256] = "untouched", why[300] = "";
        int fd, r;

        unsetenv("DBUS_SESSION_BUS_ADDRESS");
        fd = silent_listener(d->priv);
        signal(SIGALRM, hung);
        alarm(LIVENESS_S);
        r = ag_run_systemd_place(&run_h, d->top, getpid(), getuid(), 1000, "unit test", 1, unit, sizeof unit, why,
                                 sizeof why);
        alarm(0);
        close(fd);
        print_message("# run, a manager that never answers: %d (%s)\n", r, why);
        if (r == -EOPNOTSUPP || strstr(why, "libsystemd"))
                skip();
        assert_int_equal(r, -ETIMEDOUT);
        assert_true(why[0] != 0);
        assert_string_equal(unit, "untouched");
}

#ifdef AG_HAVE_SDBUS
/* Serves the private socket lfd as a fake user manager: accepts `calls`
 * connections, one StartTransientUnit on each, writes what it carried to
 * log (one line a call: the unit name, then each property), answers call i
 * with a job path, or with UnitExists when exists[i]. Runs in a child. */
static _Noreturn void fake_manager(int lfd, const char *log, unsigned calls, const bool *exists) {
        FILE *f = fopen(log, "we");

        if (!f)
                _exit(2);
        for (unsigned i = 0; i < calls; i++) {
                sd_bus *bus = NULL;
                sd_id128_t id;
                int fd = accept(lfd, NULL, NULL), r;

                if (fd < 0 || sd_id128_randomize(&id) < 0 || sd_bus_new(&bus) < 0 || sd_bus_set_fd(bus, fd, fd) < 0 ||
                    sd_bus_set_server(bus, 1, id) < 0 || sd_bus_start(bus) < 0)
                        _exit(3);
                for (;;) {
                        sd_bus_message *m = NULL;
                        const char *name = NULL, *mode = NULL;

                        r = sd_bus_process(bus, &m);
                        if (r < 0)
                                _exit(4);
                        if (r == 0) {
                                (void) sd_bus_wait(bus, UINT64_MAX);
                                continue;
                        }
                        if (!m || !sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager",
                                                                 "StartTransientUnit")) {
                                sd_bus_message_unref(m);
                                continue;
                        }
                        if (sd_bus_message_read(m, "ss", &name, &mode) < 0 ||
                            sd_bus_message_enter_container(m, 'a', "(sv)") < 0)
                                _exit(5);
                        fprintf(f, "unit=%s mode=%s", name, mode);
                        while (sd_bus_message_enter_container(m, 'r', "sv") > 0) {
                                const char *p, *contents, *v;
                                char type;
                                uint64_t t;
                                uint32_t u;

                                if (sd_bus_message_read(m, "s", &p) < 0 || sd_bus_message_peek_type(m, &type, &contents) < 0)
                                        _exit(6);
                                if (strcmp(contents, "t") == 0 && sd_bus_message_read(m, "v", "t", &t) >= 0)
                                        fprintf(f, " %s=%" PRIu64, p, t);
                                else if (strcmp(contents, "s") == 0 && sd_bus_message_read(m, "v", "s", &v) >= 0)
                                        fprintf(f, " %s=%s", p, v);
                                else if (strcmp(contents, "au") == 0 && sd_bus_message_enter_container(m, 'v', "au") >= 0 &&
                                         sd_bus_message_enter_container(m, 'a', "u") >= 0) {
                                        fprintf(f, " %s=", p);
                                        while (sd_bus_message_read(m, "u", &u) > 0)
                                                fprintf(f, "%" PRIu32 ",", u);
                                        sd_bus_message_exit_container(m);
                                        sd_bus_message_exit_container(m);
                                } else if (sd_bus_message_skip(m, "v") >= 0)
                                        fprintf(f, " %s=?", p);
                                sd_bus_message_exit_container(m);
                        }
                        fputc('\n', f);
                        fflush(f);
                        if (exists[i])
                                r = sd_bus_reply_method_errorf(m, "org.freedesktop.systemd1.UnitExists",
                                                               "Unit %s already exists.", name);
                        else
                                r = sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/job/1");
                        (void) sd_bus_flush(bus);
                        sd_bus_message_unref(m);
                        break;
                }
                sd_bus_close(bus);
                sd_bus_unref(bus);
        }
        fclose(f);
        _exit(0);
}

/* One ag_run_systemd_place() against the fake manager; returns what it
 * logged (static buffer). */
static const char *place_with_fake(const Dirs *d, uint64_t weight, unsigned calls, const bool *exists, int *ret,
                                   char *why, size_t why_size) {
        static char logged[1024];
        char log[160], unit[256] = "";
        int fd, status = -1;
        pid_t srv;
        FILE *f;
        size_t n;

        unsetenv("DBUS_SESSION_BUS_ADDRESS");
        snprintf(log, sizeof log, "%s/fake.log", d->top);
        fd = silent_listener(d->priv);
        srv = fork();
        assert_true(srv >= 0);
        if (srv == 0)
                fake_manager(fd, log, calls, exists);
        signal(SIGALRM, hung);
        alarm(LIVENESS_S);
        *ret = ag_run_systemd_place(&run_h, d->top, getpid(), getuid(), weight, "unit test", AG_RUN_SYSTEMD_DEADLINE_S,
                                    unit, sizeof unit, why, why_size);
        assert_int_equal(waitpid(srv, &status, 0), srv);
        alarm(0);
        close(fd);
        (void) unlink(d->priv);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        f = fopen(log, "re");
        assert_non_null(f);
        n = fread(logged, 1, sizeof logged - 1, f);
        logged[n] = 0;
        fclose(f);
        (void) unlink(log);
        return logged;
}

/* The line the fake manager logs for a request of this process's scope
 * autogroup-run-<pid><suffix>.scope with CPUWeight=weight; the length. */
static size_t request_line(char *buf, size_t size, const char *suffix, unsigned weight) {
        intmax_t self = (intmax_t) getpid();
        int n = snprintf(buf, size,
                         "unit=autogroup-run-%jd%s.scope mode=fail Description=unit test Slice=app.slice PIDs=%jd, "
                         "CPUWeight=%u CollectMode=inactive-or-failed\n", self, suffix, self, weight);

        assert_true(n > 0 && (size_t) n < size);
        return (size_t) n;
}

/* The request: the scope autogroup-run-<pid>.scope in app.slice with
 * PIDs=[pid], the class's CPUWeight= (0 for idle) and CollectMode;
 * the manager accepts, the process never arrives (nobody moves it here):
 * -EINPROGRESS and the command runs where it is. */
static void test_run_place_request(void **state) {
        const Dirs *d = *state;
        char why[300] = "", want[512];
        const bool no[1] = { false };
        const char *logged;
        int r;

        logged = place_with_fake(d, 1000, 1, no, &r, why, sizeof why);
        print_message("# run, a manager that accepts: %d (%s)\n#   %s", r, why, logged);
        request_line(want, sizeof want, "", 1000);
        assert_string_equal(logged, want);
        assert_int_equal(r, -EINPROGRESS);
        assert_non_null(strstr(why, "started, but the process is not in it yet"));

        /* --idle: CPUWeight=idle is 0 on the bus */
        logged = place_with_fake(d, AG_SYSTEMD_CPU_WEIGHT_IDLE, 1, no, &r, why, sizeof why);
        request_line(want, sizeof want, "", 0);
        assert_string_equal(logged, want);
        assert_int_equal(r, -EINPROGRESS);
}

/* autogroup-run-<pid>.scope still exists (an earlier command's background
 * processes): the next name is asked for. */
static void test_run_place_name_taken(void **state) {
        const Dirs *d = *state;
        char why[300] = "", want[512];
        const bool exists[2] = { true, false };
        const char *logged;
        size_t n;
        int r;

        logged = place_with_fake(d, 400, 2, exists, &r, why, sizeof why);
        print_message("# run, the first name taken: %d (%s)\n#   %s", r, why, logged);
        n = request_line(want, sizeof want, "", 400);
        request_line(want + n, sizeof want - n, "-1", 400);
        assert_string_equal(logged, want);
        assert_int_equal(r, -EINPROGRESS);
        assert_non_null(strstr(why, "autogroup-run-"));
}
#endif

static void gc_seen(void *userdata, const char *slice) {
        strcat(userdata, slice);
        strcat(userdata, " ");
}

/* gc: the module's recorded drop-ins of a slice that is not running go (and
 * the record); a running slice's stay, and no cgroup is removed; an
 * administrator's drop-in stays. */
static void test_slice_gc(void **state) {
        char top[] = "/tmp/ag-unit-gc.XXXXXX", cg[128], ctl[128], rd[128], p[256], seen[256] = "", cmd[160];
        struct stat st;

        (void) state;
        assert_non_null(mkdtemp(top));
        snprintf(cg, sizeof cg, "%s/cg", top);
        snprintf(ctl, sizeof ctl, "%s/ctl", top);
        snprintf(rd, sizeof rd, "%s/rec", top);
        AgSystemdPaths paths = { .control_dir = ctl, .record_dir = rd };
        mk(top, "cg"); mk(top, "cg/user.slice"); mk(top, "cg/user.slice/user-6.slice");
        wr(top, "cg/user.slice/user-6.slice/cgroup.events", "populated 0\n");
        mk(top, "ctl");
        for (int uid = 5; uid <= 6; uid++) {
                snprintf(p, sizeof p, "ctl/user-%d.slice.d", uid); mk(top, p);
                snprintf(p, sizeof p, "ctl/user-%d.slice.d/50-CPUWeight.conf", uid); wr(top, p, "[Slice]\nCPUWeight=200\n");
                snprintf(p, sizeof p, "ctl/user-%d.slice.d/50-CPUQuota.conf", uid); wr(top, p, "[Slice]\nCPUQuota=30%\n");
                assert_int_equal(ag_systemd_record_dropin(&paths, (uid_t) uid, AG_SLICE_WEIGHT, "50-CPUWeight.conf"), 0);
        }
        assert_int_equal(ag_systemd_gc(cg, &paths, gc_seen, seen), 1);
        assert_string_equal(seen, "user-5.slice ");
        snprintf(p, sizeof p, "%s/user-5.slice.d/50-CPUWeight.conf", ctl);
        assert_int_equal(stat(p, &st), -1);
        snprintf(p, sizeof p, "%s/user-5.slice.d/50-CPUQuota.conf", ctl);       /* not the module's */
        assert_int_equal(stat(p, &st), 0);
        snprintf(p, sizeof p, "%s/user-5.slice", rd);
        assert_int_equal(stat(p, &st), -1);
        /* running (its cgroup exists, even empty): nothing removed, the cgroup stays */
        snprintf(p, sizeof p, "%s/user-6.slice.d/50-CPUWeight.conf", ctl);
        assert_int_equal(stat(p, &st), 0);
        snprintf(p, sizeof p, "%s/user.slice/user-6.slice", cg);
        assert_int_equal(stat(p, &st), 0);
        /* nothing left to do */
        seen[0] = 0;
        assert_int_equal(ag_systemd_gc(cg, &paths, gc_seen, seen), 0);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
        assert_int_equal(system(cmd), 0);
}

/* ---- user slice properties against a fake system manager: a direct D-Bus
 * connection (real libsystemd on both sides) to a child that answers as
 * systemd does: Properties.Get of FragmentPath, DropInPaths, CPUWeight,
 * CPUQuotaPerSecUSec and ActiveState, and SetUnitProperties, which writes
 * the runtime drop-in as systemd does (a new file each time) or refuses
 * CPUWeight=0 as systemd < 252 does, with its reply:
 * org.freedesktop.DBus.Error.InvalidArgs "Value specified in CPUWeight is
 * out of range" (src/core/dbus-cgroup.c, BUS_DEFINE_SET_CGROUP_WEIGHT). */
#ifdef AG_HAVE_SDBUS
#include <dirent.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

typedef struct Fake {
        char top[64];
        char sock[128];
        char ctl[128];            /* control_dir */
        char dropd[160];          /* ctl/user-5.slice.d */
        char rec[128];            /* record_dir */
        char log[128];            /* one line a SetUnitProperties: NAME=VALUE */
        char admin[160];          /* an administrator's drop-in listed first in DropInPaths, or "" */
        bool refuse_idle;         /* systemd < 252 */
} Fake;

static int fake_names(const Fake *f, char names[][512], int max) {
        struct dirent *de;
        DIR *d;
        int n = 0;

        if (f->admin[0])
                snprintf(names[n++], 512, "%s", f->admin);
        d = opendir(f->dropd);
        while (d && (de = readdir(d)) && n < max)
                if (de->d_name[0] != '.')
                        snprintf(names[n++], 512, "%s/%s", f->dropd, de->d_name);
        if (d)
                closedir(d);
        return n;
}

static int fake_get(sd_bus_message *m, const Fake *f) {
        const char *iface, *prop;
        sd_bus_message *reply = NULL;
        char names[16][512];
        int r, n;

        r = sd_bus_message_read(m, "ss", &iface, &prop);
        if (r < 0)
                return r;
        if (strcmp(prop, "FragmentPath") == 0)
                return sd_bus_reply_method_return(m, "v", "s", "");
        if (strcmp(prop, "ActiveState") == 0)
                return sd_bus_reply_method_return(m, "v", "s", "inactive");
        if (strcmp(prop, "CPUWeight") == 0 || strcmp(prop, "CPUQuotaPerSecUSec") == 0)
                return sd_bus_reply_method_return(m, "v", "t", UINT64_MAX);
        if (strcmp(prop, "DropInPaths") != 0)
                return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_PROPERTY, "no %s", prop);
        n = fake_names(f, names, 16);
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (int i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(reply, "s", names[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static int fake_set(sd_bus_message *m, const Fake *f) {
        const char *unit, *name;
        char path[256], tmp[300], text[128];
        uint64_t v;
        int runtime, r;
        FILE *log;

        r = sd_bus_message_read(m, "sb", &unit, &runtime);
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &name);
        if (r >= 0)
                r = sd_bus_message_read(m, "v", "t", &v);
        if (r < 0)
                return r;
        log = fopen(f->log, "ae");
        fprintf(log, "%s %s=%ju\n", unit, name, (uintmax_t) v);
        fclose(log);
        if (f->refuse_idle && strcmp(name, "CPUWeight") == 0 && v == 0)
                return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_INVALID_ARGS, "Value specified in %s is out of range",
                                                  name);
        /* as systemd: a new file (write, then rename) named after the setting */
        if (strcmp(name, "CPUWeight") == 0)
                snprintf(text, sizeof text, v == UINT64_MAX ? "CPUWeight=\n" : v == 0 ? "CPUWeight=idle\n" :
                         "CPUWeight=%ju\n", (uintmax_t) v);
        else
                snprintf(text, sizeof text, v == UINT64_MAX ? "CPUQuota=\n" : "CPUQuota=%ju%%\n",
                         (uintmax_t) (v / 10000));
        (void) mkdir(f->ctl, 0755);
        (void) mkdir(f->dropd, 0755);
        snprintf(path, sizeof path, "%s/50-%s.conf", f->dropd, strcmp(name, "CPUWeight") == 0 ? "CPUWeight" : "CPUQuota");
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        log = fopen(tmp, "we");
        fprintf(log, "# This is a drop-in unit file extension, created via \"systemctl set-property\"\n"
                "# or an equivalent operation. Do not edit.\n[Slice]\n%s", text);
        fclose(log);
        rename(tmp, path);
        return sd_bus_reply_method_return(m, NULL);
}

static int fake_filter(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const Fake *f = userdata;

        (void) error;
        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get"))
                return fake_get(m, f) < 0 ? -EIO : 1;
        if (sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "SetUnitProperties"))
                return fake_set(m, f) < 0 ? -EIO : 1;
        return 0;
}

/* Serves one connection at f->sock in a child, until the client hangs up. */
static pid_t fake_serve(const Fake *f) {
        int lfd = silent_listener(f->sock);
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                sd_bus *b = NULL;
                sd_id128_t id;
                int c = accept(lfd, NULL, NULL);

                alarm(LIVENESS_S);
                if (c < 0 || sd_bus_new(&b) < 0 || sd_bus_set_fd(b, c, c) < 0 || sd_id128_randomize(&id) < 0 ||
                    sd_bus_set_server(b, 1, id) < 0 || sd_bus_add_filter(b, NULL, fake_filter, (void *) f) < 0 ||
                    sd_bus_start(b) < 0)
                        _exit(2);
                for (;;) {
                        int r = sd_bus_process(b, NULL);
                        if (r < 0)
                                break;
                        if (r > 0)
                                continue;
                        if (sd_bus_wait(b, UINT64_MAX) < 0)
                                break;
                }
                _exit(0);
        }
        close(lfd);
        return pid;
}

static int fake_setup(void **state) {
        Fake *f = calloc(1, sizeof *f);

        if (!f || !tmpdir_make(f->top, sizeof f->top, "/tmp/ag-unit-fake.XXXXXX"))
                return -1;
        *state = f;
        snprintf(f->sock, sizeof f->sock, "%s/bus", f->top);
        snprintf(f->ctl, sizeof f->ctl, "%s/ctl", f->top);
        snprintf(f->dropd, sizeof f->dropd, "%s/user-5.slice.d", f->ctl);
        snprintf(f->rec, sizeof f->rec, "%s/rec", f->top);
        snprintf(f->log, sizeof f->log, "%s/calls", f->top);
        return 0;
}

static int fake_teardown(void **state) {
        Fake *f = *state;
        char cmd[128];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->top);
        (void) !system(cmd);
        free(f);
        return 0;
}

/* a test run with a fresh Fake in *state */
#define fake_test(f) cmocka_unit_test_setup_teardown(f, fake_setup, fake_teardown)

/* One apply against a fresh fake; the calls it got are in f->log. */
static int fake_apply(Fake *f, const AgUnitValues *v, AgSliceState *st, char *why, size_t size) {
        char address[160];
        AgSystemdPaths paths = { .bus_address = address, .control_dir = f->ctl, .record_dir = f->rec };
        int status = -1, r;
        pid_t pid;

        snprintf(address, sizeof address, "unix:path=%s", f->sock);
        (void) unlink(f->sock);
        (void) unlink(f->log);
        pid = fake_serve(f);
        signal(SIGALRM, hung);
        alarm(LIVENESS_S);
        r = ag_systemd_apply_user_slice(&paths, 5, v, st, why, size);
        alarm(0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return r;
}

static void calls_equal(const Fake *f, const char *want) {
        char got[1024] = "";
        FILE *log = fopen(f->log, "re");
        size_t n = 0;

        if (log) {
                n = fread(got, 1, sizeof got - 1, log);
                fclose(log);
        }
        got[n] = 0;
        print_message("# SetUnitProperties calls:\n%s", got);
        assert_string_equal(got, want);
}

static bool exists(const char *dir, const char *name) {
        char p[256];
        struct stat st;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        return stat(p, &st) == 0;
}

/* systemd < 252 refuses CPUWeight=0 (idle): the weight is sent alone, then
 * retried as CPUWeight=1; the cap goes in a call of its own and applies. */
static void test_slice_idle_refused(void **state) {
        Fake *f = *state;
        AgUnitValues v = { .cpu_weight = AG_SYSTEMD_CPU_WEIGHT_IDLE, .cpu_quota_per_sec_usec = 1500000,
                           .weight_set = true, .quota_set = true };
        AgSliceState st;
        char why[256] = "", what[512];

        f->refuse_idle = true;
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        calls_equal(f, "user-5.slice CPUWeight=0\nuser-5.slice CPUWeight=1\nuser-5.slice CPUQuotaPerSecUSec=1500000\n");
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_FALLBACK);
        assert_int_equal(st.prop[AG_SLICE_QUOTA].action, AG_SLICE_WRITTEN);
        assert_true(st.idle_fallback_first);
        ag_slice_state_format(&st, &v, what, sizeof what);
        print_message("# %s\n", what);
        assert_non_null(strstr(what, "CPUWeight=1 (runtime; CPUWeight=idle refused"));
        assert_non_null(strstr(what, "CPUQuota=150% (runtime)"));
        assert_true(exists(f->dropd, "50-CPUWeight.conf") && exists(f->dropd, "50-CPUQuota.conf"));
        assert_true(exists(f->rec, "user-5.slice"));

        /* logged once per boot: the second login does not say it again */
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_FALLBACK);
        assert_false(st.idle_fallback_first);

        /* systemd >= 252 takes it */
        f->refuse_idle = false;
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        calls_equal(f, "user-5.slice CPUWeight=0\nuser-5.slice CPUQuotaPerSecUSec=1500000\n");
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_WRITTEN);
}

/* No rule names the user: nothing is sent, nothing is written. */
static void test_slice_no_rule(void **state) {
        Fake *f = *state;
        AgPolicy p;
        AgUnitValues v;
        AgSliceState st;
        char why[256] = "";

        ag_policy_init(&p);
        ag_policy_to_unit_values(&p, &v);
        assert_false(v.weight_set);
        assert_false(v.quota_set);
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        calls_equal(f, "");
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_LEFT);
        assert_int_equal(st.prop[AG_SLICE_QUOTA].action, AG_SLICE_LEFT);
        assert_false(exists(f->ctl, "user-5.slice.d"));
        assert_false(exists(f->rec, "user-5.slice"));
}

/* systemd's own setting wins over a rule; what the module wrote goes when
 * the rule goes; an administrator's set-property over the module's drop-in
 * is theirs from then on. */
static void test_slice_precedence(void **state) {
        Fake *f = *state;
        AgUnitValues v = { .cpu_weight = 300, .cpu_quota_per_sec_usec = 2000000, .weight_set = true, .quota_set = true };
        AgSliceState st;
        char why[256] = "", p[256];

        /* a site-wide cap (user-.slice.d/20-cap.conf): CPUQuota is not written */
        snprintf(f->admin, sizeof f->admin, "%s/20-cap.conf", f->top);
        put(f->admin, "[Unit]\nDescription=x\n[Slice]\nCPUQuota=50%\nTasksMax=33%\n");
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        calls_equal(f, "user-5.slice CPUWeight=300\n");
        assert_int_equal(st.prop[AG_SLICE_QUOTA].action, AG_SLICE_ADMIN);
        assert_string_equal(st.prop[AG_SLICE_QUOTA].admin_value, "50%");
        assert_string_equal(st.prop[AG_SLICE_QUOTA].admin_path, f->admin);
        assert_false(exists(f->dropd, "50-CPUQuota.conf"));

        /* the weight rule removed: the module's drop-in goes, the live value is reset */
        v.weight_set = false;
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        calls_equal(f, "user-5.slice CPUWeight=18446744073709551615\n");
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_TAKEN_BACK);
        assert_false(exists(f->dropd, "50-CPUWeight.conf"));
        assert_false(exists(f->ctl, "user-5.slice.d"));
        assert_false(exists(f->rec, "user-5.slice"));

        /* written again, then "systemctl set-property --runtime CPUWeight=500" over it */
        v.weight_set = true;
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_WRITTEN);
        snprintf(p, sizeof p, "%s/50-CPUWeight.conf.new", f->dropd);
        put(p, "[Slice]\nCPUWeight=500\n");
        snprintf(why, sizeof why, "%s/50-CPUWeight.conf", f->dropd);
        assert_int_equal(rename(p, why), 0);
        why[0] = 0;
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        calls_equal(f, "");
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_ADMIN);
        assert_string_equal(st.prop[AG_SLICE_WEIGHT].admin_value, "500");
        /* and without the rule it stays: not the module's to take back */
        v.weight_set = false;
        assert_int_equal(fake_apply(f, &v, &st, why, sizeof why), 0);
        calls_equal(f, "");
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_LEFT);
        assert_true(exists(f->dropd, "50-CPUWeight.conf"));
}
/* No manager to answer: an error with a reason, the rule's properties
 * marked failed (the module's log line names them), nothing recorded. */
static void test_slice_no_manager(void **state) {
        Fake *f = *state;
        char address[160], why[256] = "", what[512];
        AgSystemdPaths paths = { .bus_address = address, .control_dir = f->ctl, .record_dir = f->rec };
        AgUnitValues v = { .cpu_weight = 300, .weight_set = true, .cpu_quota_per_sec_usec = AG_SYSTEMD_USEC_INFINITY };
        AgSliceState st;

        snprintf(address, sizeof address, "unix:path=%s", f->sock);   /* nobody listens */
        assert_true(ag_systemd_apply_user_slice(&paths, 5, &v, &st, why, sizeof why) < 0);
        print_message("# %s\n", why);
        assert_true(why[0] != 0);
        assert_int_equal(st.prop[AG_SLICE_WEIGHT].action, AG_SLICE_FAILED);
        assert_int_equal(st.prop[AG_SLICE_QUOTA].action, AG_SLICE_LEFT);
        ag_slice_state_format(&st, &v, what, sizeof what);
        assert_non_null(strstr(what, "CPUWeight=300 refused"));
        assert_false(exists(f->rec, "user-5.slice"));
}

/* After pam_systemd: the session scope's CPUWeight= in one runtime call on
 * logind's scope of that id; an id that is not logind's is refused before
 * any call, and no manager is one -errno with the reason. */
static void test_session_weight(void **state) {
        Fake *f = *state;
        char address[160], why[256] = "";
        AgSystemdPaths paths = { .bus_address = address, .control_dir = f->ctl, .record_dir = f->rec };
        int status = -1, r;
        pid_t pid;

        snprintf(address, sizeof address, "unix:path=%s", f->sock);
        (void) unlink(f->sock);
        pid = fake_serve(f);
        signal(SIGALRM, hung);
        alarm(LIVENESS_S);
        r = ag_systemd_set_session_weight(&paths, "c12", 100, why, sizeof why);
        alarm(0);
        assert_int_equal(r, 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        calls_equal(f, "session-c12.scope CPUWeight=100\n");

        (void) unlink(f->log);
        assert_int_equal(ag_systemd_set_session_weight(&paths, "../user-5.slice", 100, why, sizeof why), -EINVAL);
        assert_int_equal(ag_systemd_set_session_weight(&paths, "", 100, why, sizeof why), -EINVAL);
        assert_false(access(f->log, F_OK) == 0);
        (void) unlink(f->sock);         /* nobody listens */
        assert_true(ag_systemd_set_session_weight(&paths, "3", 100, why, sizeof why) < 0);
        print_message("# %s\n", why);
        assert_true(why[0] != 0);
}
#endif

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mode_names),
                cmocka_unit_test(test_mode_decide),
                cmocka_unit_test(test_booted),
                cmocka_unit_test(test_unit_values),
                cmocka_unit_test(test_slice_name),
                cmocka_unit_test(test_terminal_scope_name),
                cmocka_unit_test(test_session_scope_name),
                cmocka_unit_test(test_scope_place),
                dirs_test(test_scope_no_socket),
                dirs_test(test_scope_private_never_answers),
                dirs_test(test_scope_user_bus_never_answers),
                cmocka_unit_test(test_user_bus_address),
                dirs_test(test_scope_unixexec_refused),
                cmocka_unit_test(test_deadline_blocked_alarm),
                cmocka_unit_test(test_slice_forget),
                cmocka_unit_test(test_session_scope_path),
                cmocka_unit_test(test_status_systemd),
                cmocka_unit_test(test_run_scope_names),
                cmocka_unit_test(test_run_weight),
                dirs_test(test_run_place_never_answers),
#ifdef AG_HAVE_SDBUS
                dirs_test(test_run_place_request),
                dirs_test(test_run_place_name_taken),
#endif
                cmocka_unit_test(test_slice_gc),
#ifdef AG_HAVE_SDBUS
                fake_test(test_slice_idle_refused),
                fake_test(test_slice_no_rule),
                fake_test(test_slice_precedence),
                fake_test(test_slice_no_manager),
                fake_test(test_session_weight),
#endif
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
