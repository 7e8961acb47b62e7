/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd mode: on hosts where systemd and logind own the cgroup tree,
 * pam_autogroup writes nothing into cgroupfs. It applies the same policy in
 * systemd's own terms instead:
 *
 *   user-UID.slice    CPUWeight= (or CPUWeight=idle), CPUQuotaPerSecUSec=, set at
 *                     runtime through org.freedesktop.systemd1.Manager.SetUnitProperties
 *   session-N.scope   CPUWeight= handed to pam_systemd as the PAM data
 *                     "systemd.cpu_weight" (pam_autogroup must come first)
 *
 * The module moves no process and creates nothing. "autogroup enter" may
 * have the user's own manager adopt a terminal into a scope (below). */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "mode.h"
#include "policy.h"

/* The PAM data pam_systemd (>= 239) reads as the session scope's CPUWeight=. */
#define AG_SYSTEMD_DATA_CPU_WEIGHT "systemd.cpu_weight"
/* systemd's special CPUWeight value for "idle" (cpu.idle = 1); systemd >= 252. */
#define AG_SYSTEMD_CPU_WEIGHT_IDLE UINT64_C(0)
#define AG_SYSTEMD_USEC_INFINITY UINT64_MAX

/* Like sd_booted(): is runtime_dir/systemd/system a directory? runtime_dir
 * NULL means "/run". */
bool ag_systemd_booted(const char *runtime_dir);

/* The unit property values for a policy. */
typedef struct AgUnitValues {
        uint64_t cpu_weight;               /* 1..10000, or AG_SYSTEMD_CPU_WEIGHT_IDLE */
        uint64_t cpu_quota_per_sec_usec;   /* AG_SYSTEMD_USEC_INFINITY for none */
        bool weight_set;                   /* a rule sets weight, or idle yes */
        bool quota_set;                    /* a rule sets max */
} AgUnitValues;

/* The values, and which of them a rule sets (source[] of the policy): only
 * those are written to the user's slice. */
void ag_policy_to_unit_values(const AgPolicy *policy, AgUnitValues *ret);

/* "user-<uid>.slice" */
int ag_user_slice_name(uid_t uid, char *buf, size_t size);

/* Is path (a cgroup path as /proc/PID/cgroup shows it) exactly a logind
 * session scope, /user.slice/user-<uid>.slice/session-<id>.scope, with
 * nothing below it and nothing else around it (a scope of that name under
 * a user manager's user@<uid>.service is the user's own making)? */
bool ag_systemd_session_scope_path(const char *path);

/* ---- user slices: what a rule sets, and nothing an administrator set in
 * systemd (lib/systemd/systemd-slice.c)
 *
 * Precedence, per property (CPUWeight= with idle, CPUQuota=) of
 * user-<uid>.slice:
 *   1. systemd's own configuration of the slice, as the manager has loaded
 *      it (FragmentPath and DropInPaths): site-wide drop-ins
 *      (user-.slice.d/, slice.d/), per-user ones (user-<uid>.slice.d/),
 *      "systemctl set-property" persistent (/etc/systemd/system.control) and
 *      runtime (/run/systemd/system.control) when that file is not the
 *      module's own. Where it sets the property, the module writes nothing.
 *   2. a config rule for the user: written as a runtime property
 *      (SetUnitProperties, one call per property), the drop-in systemd makes
 *      for it recorded as the module's (record_dir/user-<uid>.slice: its
 *      name, inode and mtime; "systemctl set-property" replaces the file, so
 *      a record that no longer matches is the administrator's).
 *   3. nothing: systemd's defaults.
 * What the module wrote and no longer applies (the rule is gone, or systemd's
 * configuration now sets the property) is taken back: its drop-in is removed
 * and the live value set to what the files say (unset when they say nothing).
 * Applying and taking back hold a lock on the record (concurrent logins of a
 * user take turns). */

typedef struct AgSystemdPaths {
        const char *bus_address;           /* NULL: the system bus; tests: a unix: address of a fake manager */
        const char *control_dir;           /* /run/systemd/system.control */
        const char *record_dir;            /* /run/autogroup/systemd */
} AgSystemdPaths;

#define AG_SYSTEMD_CONTROL_DIR "/run/systemd/system.control"
#define AG_SYSTEMD_RECORD_DIR "/run/autogroup/systemd"

typedef enum AgSliceProp {
        AG_SLICE_WEIGHT,                   /* CPUWeight= (idle: CPUWeight=idle) */
        AG_SLICE_QUOTA,                    /* CPUQuota= (CPUQuotaPerSecUSec on the bus) */
        _AG_SLICE_PROP_MAX,
} AgSliceProp;

typedef enum AgSliceAction {
        AG_SLICE_LEFT,                     /* no rule, nothing of ours: systemd's */
        AG_SLICE_WRITTEN,                  /* the rule's value written */
        AG_SLICE_FALLBACK,                 /* idle refused (systemd < 252): CPUWeight=1 written */
        AG_SLICE_ADMIN,                    /* a rule, but systemd's configuration sets it: not written */
        AG_SLICE_TAKEN_BACK,               /* ours, no longer applies: removed */
        AG_SLICE_FAILED,                   /* systemd refused (errbuf says why) */
} AgSliceAction;

typedef struct AgSliceSetting {
        bool admin;                        /* systemd's configuration sets it (not the module's drop-in) */
        char admin_path[256];              /* the last file that does */
        char admin_value[64];              /* its value as written there ("50%", "idle", "300") */
        bool ours;                         /* the module's recorded runtime drop-in is in place */
        AgSliceAction action;              /* apply: what was done */
} AgSliceSetting;

typedef struct AgSliceState {
        AgSliceSetting prop[_AG_SLICE_PROP_MAX];
        bool files_known;                  /* the manager told FragmentPath and DropInPaths */
        bool idle_fallback_first;          /* AG_SLICE_FALLBACK, first time this boot (log it once) */
        /* inspect: the values the manager has now */
        bool live_known;
        uint64_t live_weight;              /* UINT64_MAX: unset (100), 0: idle */
        uint64_t live_quota_per_sec_usec;  /* UINT64_MAX: none */
        char active_state[32];
} AgSliceState;

const char *ag_slice_prop_name(AgSliceProp p);     /* "CPUWeight", "CPUQuota" */

/* Applies v to user-<uid>.slice by the precedence above. 0 when every
 * property got its action; -errno (errbuf: systemd's message) when a call
 * failed (the other property is still done, ret says which). A refused
 * CPUWeight=idle (InvalidArgs, systemd < 252) is retried as CPUWeight=1.
 * -EOPNOTSUPP without libsystemd. */
int ag_systemd_apply_user_slice(const AgSystemdPaths *paths, uid_t uid, const AgUnitValues *v,
                                AgSliceState *ret, char *errbuf, size_t errsize);

/* What the manager and the files say of user-<uid>.slice now, nothing
 * changed (explain, check). */
int ag_systemd_inspect_user_slice(const AgSystemdPaths *paths, uid_t uid, AgSliceState *ret, char *errbuf,
                                  size_t errsize);

/* Records the drop-in control_dir/user-<uid>.slice.d/<name> as the module's
 * (what apply does after each call; tests). */
int ag_systemd_record_dropin(const AgSystemdPaths *paths, uid_t uid, AgSliceProp prop, const char *name);

/* "200", "idle", "150%", "(none)": a value as systemd writes it */
void ag_slice_value_format(AgSliceProp p, uint64_t value, char *buf, size_t size);
/* What apply did, one clause a property ("CPUWeight=200 (runtime), CPUQuota:
 * no rule, left to systemd"), for the log. */
void ag_slice_state_format(const AgSliceState *st, const AgUnitValues *v, char *buf, size_t size);

/* Undoes the module's runtime properties for a login that never became a
 * logind session (pam_systemd missing or failed), when user-<uid>.slice holds
 * no process (cgroup_root/user.slice/user-<uid>.slice/cgroup.events
 * "populated 0", or no such cgroup): removes the drop-ins recorded as the
 * module's (an administrator's runtime set-property stays), the record, the
 * drop-in directory when nothing else is in it, and the slice's empty cgroup
 * that systemd made when the properties were set. A loaded unit keeps the
 * values in memory until systemd unloads it. Every path is opened relative to
 * a directory fd without following symlinks. -EBUSY when the slice is in use
 * or cannot be looked at (no cgroup root, a symlink, ...): nothing is removed
 * then. cgroup_root is "/sys/fs/cgroup" outside the tests. */
int ag_systemd_user_slice_forget(uid_t uid, const char *cgroup_root, const AgSystemdPaths *paths);

/* "autogroup gc" in the systemd mode: for each user with a record, when
 * user-<uid>.slice is not running (no cgroup below cgroup_root/user.slice),
 * removes the module's recorded drop-ins and the record (the next login
 * writes them again before logind starts the slice), so that nothing of the
 * module stays in control_dir for users who logged out. Never removes a
 * cgroup. Calls removed(userdata, "user-<uid>.slice") for each; returns
 * how many, or -errno. */
typedef void (*ag_systemd_gc_fn)(void *userdata, const char *slice);
int ag_systemd_gc(const char *cgroup_root, const AgSystemdPaths *paths, ag_systemd_gc_fn removed, void *userdata);

/* ---- terminals on logind hosts: one transient scope of the user's manager
 * per setsid() session ("autogroup enter")
 *
 * logind does not delegate session-N.scope, but the user's manager
 * (user@UID.service, delegated to the user) may adopt the user's processes
 * into a transient scope, as tmux >= 3.4 and VTE terminals do per pane or
 * tab. The scope is user@UID.service/app.slice/autogroup-sid-<sid>.scope. */

#define AG_TERMINAL_SCOPE_PREFIX "autogroup-sid-"
#define AG_TERMINAL_SCOPE_SLICE "app.slice"
/* Each terminal's scope gets the weight of a cgroupfs-mode leaf. */
#define AG_TERMINAL_SCOPE_WEIGHT UINT64_C(100)
/* Bound of each D-Bus attempt: connect, authenticate (and Hello on a bus
 * daemon), the call and its answer, all within this much of its start. */
#define AG_TERMINAL_SCOPE_TIMEOUT_USEC UINT64_C(1000000)

/* "session-<id>.scope", logind's scope of session id (XDG_SESSION_ID: letters
 * and digits, at most 32). -EINVAL for anything else. */
int ag_session_scope_name(const char *id, char *buf, size_t size);

/* After pam_systemd: CPUWeight=weight, runtime, on logind's scope of session
 * id (the session level of the systemd mode; before pam_systemd the weight
 * goes as PAM data instead). One connection to the system bus (paths->bus_address
 * for tests). -errno with errbuf saying why. */
int ag_systemd_set_session_weight(const AgSystemdPaths *paths, const char *session_id, uint64_t weight, char *errbuf,
                                  size_t errsize);

/* "autogroup-sid-<sid>.scope" */
int ag_terminal_scope_name(pid_t sid, char *buf, size_t size);

/* "autogroup run" in the systemd mode: the command's own transient scope of
 * the user's manager, user@UID.service/app.slice/autogroup-run-<pid>.scope
 * (pid: the process that becomes the command), "-<n>" added for n > 0. */
#define AG_RUN_SCOPE_PREFIX "autogroup-run-"
int ag_run_scope_name(pid_t pid, unsigned n, char *buf, size_t size);

/* The cgroup path (as /proc/PID/cgroup shows it) of unit `unit` in `slice`
 * of uid's manager: /user.slice/user-UID.slice/user@UID.service/SLICE/UNIT. */
int ag_user_unit_path(uid_t uid, const char *slice, const char *unit, char *buf, size_t size);

typedef enum AgScopePlace {
        AG_SCOPE_PLACE_SESSION,        /* /user.slice/user-UID.slice/session-<id>.scope: logind's scope */
        AG_SCOPE_PLACE_OWN,            /* .../user@UID.service/app.slice/autogroup-sid-<sid>.scope */
        AG_SCOPE_PLACE_OTHER,          /* anywhere else (another unit of the user's manager included) */
} AgScopePlace;

/* Is cgroup_path (a process's cgroup v2 path) below uid's user slice,
 * /user.slice/user-UID.slice/...: a login's session scope, the user's
 * manager or one of its units? */
bool ag_systemd_in_user_slice(const char *cgroup_path, uid_t uid);

/* Where a process of uid, leading session sid, sits, from its cgroup v2 path
 * (the "0::" line of /proc/PID/cgroup). */
AgScopePlace ag_scope_place(const char *cgroup_path, uid_t uid, pid_t sid);

/* The address of the user bus for "autogroup enter": env (the caller's
 * DBUS_SESSION_BUS_ADDRESS) when it is one unix: address, otherwise
 * unix:path=runtime_dir/bus. Any other transport (unixexec: runs a program,
 * tcp:, a ';' list) is never used. -ENXIO when neither applies. */
int ag_systemd_user_bus_address(const char *env, const char *runtime_dir, char **ret);

/* Asks the user manager of uid to start the transient scope `scope` in
 * `slice` with PIDs=[pid], CPUWeight=cpu_weight and
 * CollectMode=inactive-or-failed (job mode "fail"). It tries the manager's
 * private socket runtime_dir/systemd/private first (what systemctl --user
 * does; no bus daemon is started for it), then the user bus (ag_systemd_user_bus_address():
 * a unix: DBUS_SESSION_BUS_ADDRESS, else runtime_dir/bus) when the first could not be
 * reached. Each attempt ends no later than timeout_usec after it began,
 * connect, authentication and Hello included (the connection is driven here
 * with sd_bus_process/sd_bus_wait up to that deadline: sd_bus_call() would
 * wait for the set-up as long as libsystemd's authentication timeout, 90 s,
 * and sd_bus_flush() too, so the buses are closed without a flush). A
 * timeout (-ETIMEDOUT) or an answer from the manager (an error included)
 * ends the attempts. -EOPNOTSUPP when built
 * without libsystemd or when it cannot be loaded; errbuf gets a reason. */
int ag_systemd_start_user_scope(const char *runtime_dir, const char *scope, const char *slice,
                                const char *description, pid_t pid, uint64_t cpu_weight,
                                uint64_t timeout_usec, char *errbuf, size_t errsize);
