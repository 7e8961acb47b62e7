/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* A login's groups, <root>[/pool-<name>]/user-<uid>/<session>: open, close
 * and wait. Where they live is place.c's; the sweeps of what earlier
 * sessions left behind are pool.c's. See session.h. */

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "lane.h"
#include "latency.h"
#include "place.h"
#include "pool.h"
#include "session.h"
#include "util.h"

/* How often open starts over when a concurrent close or sweep removed the
 * user group or the fresh session under its feet. */
#define OPEN_RETRIES 16
/* Names tried for one session: its own, then as many with a suffix unique
 * for the boot (the boot clock in ns) as it takes the clock to move on; a
 * login that still finds none shares the user's group (AG_WARN_SHARED). */
#define NAME_ATTEMPTS 32

AgSession *ag_session_free(AgSession *s) {
        if (!s)
                return NULL;
        free(s->root);
        free(s->name);
        free(s->origin);
        free(s->acct_origin);
        free(s->path);
        free(s->pool);
        free(s);
        return NULL;
}

unsigned long ag_audit_session_self(void) {
        _cleanup_close_ int fd = -1;
        unsigned long v;
        char buf[32];
        ssize_t n;

        fd = open("/proc/self/sessionid", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return AG_AUDIT_SESSION_UNSET;
        n = read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return AG_AUDIT_SESSION_UNSET;
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        if (ag_safe_atoul(buf, AG_AUDIT_SESSION_UNSET, &v) < 0)
                return AG_AUDIT_SESSION_UNSET;
        return v;
}

static void session_freep(AgSession **s) {
        ag_session_free(*s);
}

static bool retryable(int r) {
        /* The group went away between two steps: a concurrent close or sweep. */
        return r == -ENOENT || r == -ENODEV;
}

static int apply_user_policy(const AgHierarchy *h, int ufd, bool created, const AgPolicy *policy,
                             const AgEvents *events) {
        bool idle_missing = false;
        AgCgValues v;
        int r;

        if (!h->has_cpu)
                return 0;
        ag_policy_to_values(policy, h->version, &v);
        r = created ? ag_cg_apply_new(h, ufd, &v, &idle_missing) : ag_cg_apply(h, ufd, &v, &idle_missing);
        if (r >= 0 && idle_missing)
                ag_events_warn(events, AG_WARN_NO_CPU_IDLE, -ENOENT, NULL);
        return r;
}

/* One leaf of root's below the session sfd (at open, or again at close):
 * made, its mode set when the umask took bits away (fix_mode), its weight written
 * when weight > 0 (a class leaf), its cgroup.procs handed to the user. A
 * leaf without a weight to write is reached by name below sfd rather than
 * through a descriptor of its own (two system calls fewer a leaf): nobody
 * but root makes, renames or removes names in root's session, and
 * cgroupfs has no symbolic links. */
static int make_root_leaf(const AgHierarchy *h, int sfd, const char *name, unsigned weight, uid_t uid, gid_t gid,
                          bool fix_mode) {
        _cleanup_close_ int lfd = -1;
        char procs[64];
        int r;

        if (weight > 0 && h->has_cpu) {
                r = ag_cg_mkdir_open_0755(sfd, name, NULL, &lfd);
                if (r >= 0)
                        r = ag_cg_set_weight_idle(h, lfd, weight, -1, NULL);
                if (r >= 0)
                        r = ag_cg_grant_procs(lfd, uid, gid);
                return r;
        }
        if (snprintf(procs, sizeof procs, "%s/cgroup.procs", name) >= (int) sizeof procs)
                return -ENAMETOOLONG;
        if (mkdirat(sfd, name, 0755) < 0) {
                if (errno != EEXIST)
                        return negative_errno();
                fix_mode = true;        /* not made now: its mode is not known */
        }
        if (fix_mode && fchmodat(sfd, name, 0755, 0) < 0)
                return negative_errno();
        if (fchownat(sfd, procs, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        return 0;
}

/* The leaves of an undelegated session (place.h): leaf-1 .. leaf-<leaves>,
 * and at interactive 1 and 2 a leaf for each class whose weight the level
 * raises. On v2 the session's cgroup.procs goes to the user too, the common
 * ancestor the kernel checks for a move between two leaves. The first leaf
 * the kernel refuses ends the making: what was made stays, the login is
 * grouped, and the -errno is returned (*ret_leaves, *ret_classes say what
 * is there). */
static int make_leaves(const AgHierarchy *h, int sfd, const AgOpenParams *p, bool fix_mode, unsigned *ret_leaves,
                       unsigned *ret_classes) {
        unsigned n = p->terminal ? p->policy->leaves : p->policy->leaves_notty, level = p->policy->interactive;
        char name[32];
        int r;

        *ret_leaves = *ret_classes = 0;
        /* leaves 0: no cgroup.procs of the user's anywhere in the session,
         * class leaves included (on v1 any leaf would let the user pull a
         * process of theirs into it from anywhere in the hierarchy) */
        if (n == 0)
                return 0;
        if (h->version == 2) {
                r = ag_cg_grant_procs(sfd, p->uid, p->gid);
                if (r < 0)
                        return r;
        }
        for (unsigned i = 1; i <= n; i++) {
                r = ag_root_leaf_name(i, name, sizeof name);
                if (r >= 0)
                        r = make_root_leaf(h, sfd, name, 0, p->uid, p->gid, fix_mode);
                if (r < 0)
                        return r;
                *ret_leaves = i;
        }
        for (AgLatency l = 0; level > 0 && l < _AG_LATENCY_MAX; l++) {
                if (ag_class_leaf_name(l, name, sizeof name) < 0)
                        continue;       /* batch and normal keep the default weight: leaf-<i> */
                r = make_root_leaf(h, sfd, name, ag_latency_leaf_weight(l, level), p->uid, p->gid, fix_mode);
                if (r < 0)
                        return r;
                *ret_classes |= 1U << l;
        }
        return 0;
}

/* A number unique for the boot, for a session name that is taken: the boot
 * clock in ns (never 0). */
static uint64_t unique_suffix(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
                (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec + 1;
}

/* Makes the session directory below ufd under its name (ag_session_name)
 * or, when that is taken (pid reuse, a long-lived client's many logins), the
 * name with a unique suffix, into name (64 bytes). */
static int mkdir_session(int ufd, const AgOpenParams *p, pid_t pid, char name[static 64], const char **what) {
        int r;

        for (unsigned attempt = 0;; attempt++) {
                if (attempt >= NAME_ATTEMPTS) {
                        *what = "find a free session name";
                        return -EEXIST;
                }
                r = ag_session_name(p->audit_session, pid, attempt == 0 ? 0 : unique_suffix(), name, 64);
                if (r < 0) {
                        *what = "name the session";
                        return r;
                }
                if (mkdirat(ufd, name, 0755) == 0)
                        return 0;
                if (errno != EEXIST) {
                        *what = "create the session group";
                        return negative_errno();
                }
        }
}

/* A v2 session's own settings: the kernel's bound on what the user builds
 * in a delegated session (left unbounded, it is not handed to the user:
 * *delegate false, and a warning to events; an undelegated session
 * gets no group but root's), cpu enabled for its children. */
static int setup_session_v2(const AgHierarchy *h, int sfd, bool *delegate, const AgEvents *events,
                            const char **what) {
        char buf[32];
        int r;

        if (*delegate) {
                snprintf(buf, sizeof buf, "%d", AG_SESSION_MAX_DESCENDANTS);
                r = ag_write_file(sfd, "cgroup.max.descendants", buf);
                if (r >= 0) {
                        snprintf(buf, sizeof buf, "%d", AG_SESSION_MAX_DEPTH);
                        r = ag_write_file(sfd, "cgroup.max.depth", buf);
                }
                if (r < 0) {
                        ag_events_warn(events, AG_WARN_DELEGATE, r, NULL);
                        *delegate = false;
                }
        }
        if (h->has_cpu) {
                r = ag_cg_enable_cpu(h, sfd);
                if (r < 0) {
                        *what = "enable cpu in the session group";
                        return r;
                }
        }
        return 0;
}

/* Makes the session directory and its login/ leaf, delegates both when
 * p->delegate (on cgroup v2 only once the kernel's bounds on the session's
 * subtree are written; else AG_WARN_DELEGATE goes to p->events and the
 * session stays root's), or else makes root's leaves (ret_s->leaves,
 * class_leaves; AG_WARN_LEAVES for a refused one), moves pid in. On failure removes what it made. */
static int make_session(const AgHierarchy *h, int ufd, const AgOpenParams *p, pid_t pid, AgSession *ret_s,
                        char **ret_name, const char **what) {
        _cleanup_close_ int sfd = -1, lfd = -1;
        bool delegate = p->delegate && h->version == 2;       /* never on v1 (login.h) */
        char name[64];
        int mode;
        int r;

        r = mkdir_session(ufd, p, pid, name, what);
        if (r < 0)
                return r;
        r = ag_cg_open(ufd, name, &sfd);
        if (r < 0) {
                *what = "open the session group";
                goto fail;
        }
        /* The user reaches root's leaves through it, whatever the umask of
         * the process that opens the login (pam_umask, login.defs UMASK):
         * 0755. When the umask left 0755 alone, it leaves the leaves' too. */
        mode = ag_cg_mode_0755(sfd);
        if (h->version == 2) {
                r = setup_session_v2(h, sfd, &delegate, p->events, what);
                if (r < 0)
                        goto fail;
        }
        r = ag_cg_mkdir_open_0755(sfd, AG_LOGIN_LEAF, NULL, &lfd);
        if (r < 0) {
                *what = "create the login leaf";
                goto fail;
        }
        if (delegate) {
                r = ag_cg_delegate(h, sfd, p->uid, p->gid);
                if (r >= 0)
                        r = ag_cg_delegate(h, lfd, p->uid, p->gid);
                if (r < 0) {
                        *what = "delegate the session group";
                        goto fail;
                }
        } else if (p->policy->sessions) {
                ret_s->gid = p->gid;
                ret_s->interactive = p->policy->interactive;
                /* a session the user cannot enter: no leaf would be reachable */
                r = mode < 0 ? mode : make_leaves(h, sfd, p, mode > 0, &ret_s->leaves, &ret_s->class_leaves);
                if (r == -ENOENT || r == -ENODEV) {
                        *what = "create the session's leaves";
                        goto fail;      /* removed under our feet: start over */
                }
                if (r < 0)
                        ag_events_warn(p->events, AG_WARN_LEAVES, r, NULL);
        }
        r = ag_cg_attach(lfd, pid);
        if (r < 0) {
                *what = r == -EINVAL && h->version == 1 ? "move the process into the login leaf "
                                                          "(a real-time task, which stays where it is)"
                                                        : "move the process into the login leaf";
                goto fail;
        }

        char *s = strdup(name);
        if (!s) {
                /* The process is in; leave the session for close/gc to handle. */
                *what = "allocate memory";
                return -ENOMEM;
        }
        *ret_name = s;
        return 0;

fail:
        lfd = safe_close(lfd);
        sfd = safe_close(sfd);
        (void) ag_cg_remove_empty(ufd, name, AG_SESSION_MAX_DEPTH, NULL, NULL);
        return r;
}

/* What ag_session_open holds on its way down: the descent that makes
 * (mfd, rfd, pfd, ufd; no sfd) and what it made, for the undo. */
typedef struct OpenState {
        AgDescent d;
        char ugroup[64];
        char place[AG_PLACE_MAX];
        bool pool_created, user_created;
        int policy_error;               /* a soft failure of the user's or the pool's policy */
        const char *policy_what;
        unsigned live;                  /* the user's sessions below ufd after the sweep (not "shared") */
        int shared;                     /* 0: a session of its own; 1: in the shared group; 2: (v1) in
                                         * the user group itself */
        bool shared_created;
        int share_error;                /* why it shares (-EUSERS: sessions-max) */
        const char *share_what;         /* the step that failed, NULL for sessions-max */
} OpenState;

/* A failed open leaves nothing it made: su and login do not call close
 * after a failed open. The user group and the pool go when this open made
 * them and they are empty (rmdir on cgroupfs removes only a group without
 * children or processes: a concurrent login's stay, and such a login
 * that finds them gone starts over). <root> stays, as it always does. */
static void open_undo(OpenState *st, const char *pool) {
        char name[sizeof(AG_POOL_PREFIX) + AG_POOL_NAME_MAX + 1];

        if (st->shared_created && st->d.ufd >= 0)
                (void) unlinkat(st->d.ufd, AG_SHARED_GROUP, AT_REMOVEDIR);
        st->d.ufd = safe_close(st->d.ufd);
        if (st->d.pfd < 0)
                return;
        if (st->user_created)
                (void) unlinkat(st->d.pfd, st->ugroup, AT_REMOVEDIR);
        if (st->pool_created && ag_pool_group_name(pool, name, sizeof name) >= 0)
                (void) unlinkat(st->d.rfd, name, AT_REMOVEDIR);
}

/* Step 1: the hierarchy and <root> (made by the very first login), cpu
 * enabled for their children. */
static int open_root(const AgHierarchy *h, const char *root, AgDescent *d, const char **what) {
        bool created = false;
        int r;

        r = ag_hierarchy_open(h, &d->mfd);
        if (r < 0) {
                *what = "open the cgroup hierarchy";
                return r;
        }
        if (h->has_cpu) {
                r = ag_cg_enable_cpu(h, d->mfd);
                if (r < 0) {
                        *what = "enable cpu in the hierarchy root";
                        return r;
                }
        }
        r = ag_cg_open(d->mfd, root, &d->rfd);
        if (r == -ENOENT)
                r = ag_cg_mkdir_open_0755(d->mfd, root, &created, &d->rfd);
        if (r < 0) {
                *what = "create the root group";
                return r;
        }
        if (h->has_cpu) {
                r = ag_cg_enable_cpu(h, d->rfd);
                if (r < 0) {
                        *what = "enable cpu in the root group";
                        return r;
                }
        }
        return 0;
}

/* Step 2: the place and user-<uid> below it, made when missing, the user's
 * policy written; on the first try the sweeps of what the user left in
 * other places and, with sessions, in this one. A policy the kernel
 * refuses leaves the group as capped as it was: st->policy_error, and the
 * login is grouped all the same. -ENOENT/-ENODEV: a concurrent close or
 * sweep removed a level, try again. */
static int open_user(const AgHierarchy *h, const AgOpenParams *p, const char *root, bool first, OpenState *st,
                     const char **what) {
        int r, pool_error = 0;

        st->d.pfd = safe_close(st->d.pfd);
        st->d.ufd = safe_close(st->d.ufd);
        st->pool_created = st->user_created = false;
        r = ag_pool_parent_open(h, st->d.rfd, p->pool, p->pool_policy, &st->d.pfd, &st->pool_created, what,
                                &pool_error);
        if (r < 0)
                return r;
        r = ag_cg_mkdir_open_0755(st->d.pfd, st->ugroup, &st->user_created, &st->d.ufd);
        if (r < 0) {
                *what = "create the user group";
                return r;       /* retryable: an emptied pool swept meanwhile */
        }
        st->live = 0;
        r = apply_user_policy(h, st->d.ufd, st->user_created, p->policy, p->events);
        if (r < 0 && retryable(r)) {
                *what = "set the user group's cpu policy";
                return r;
        }
        st->policy_error = r < 0 ? r : pool_error;
        st->policy_what = r < 0 ? "set the user group's cpu policy"
                                : pool_error < 0 ? "set the pool group's cpu policy" : NULL;
        if (p->policy->sessions && h->has_cpu) {
                r = ag_cg_enable_cpu(h, st->d.ufd);
                if (r < 0) {
                        *what = "enable cpu in the user group";
                        return r;
                }
        }
        /* The places the user left (their pool changed): their processes
         * there come here, under this place's policy (into the shared
         * group, or with sessions no the user group), and those groups go. */
        if (first)
                (void) ag_pool_sweep_other_places(h, st->d.rfd, root, p->uid, p->pool, p->config, st->d.ufd,
                                                  p->policy->sessions, p->events);
        if (!p->policy->sessions)
                return 0;
        /* Sessions of this user that emptied since their close (a user
         * group made just now has none), a bounded number of them; then
         * how many are left (sessions-max). */
        if (first && !st->user_created) {
                struct stat sb;

                (void) ag_user_sweep(st->d.pfd, st->place, p->uid, false, AG_SESSION_MAX_DIRS, p->events);
                r = ag_cg_count_children(st->d.ufd);
                if (r > 0 && fstatat(st->d.ufd, AG_SHARED_GROUP, &sb, AT_SYMLINK_NOFOLLOW) == 0)
                        r--;
                st->live = r > 0 ? (unsigned) r : 0;
        }
        return 0;
}

/* The login into the user's shared group (place.h), made when missing; on
 * cgroup v1, when even that is refused, into the user group itself (v1 has
 * no rule against processes beside child groups). -errno when neither
 * takes it. */
static int share_user_group(const AgHierarchy *h, OpenState *st, pid_t pid) {
        _cleanup_close_ int gfd = -1;
        bool created = false;
        int r;

        r = ag_cg_mkdir_open_0755(st->d.ufd, AG_SHARED_GROUP, &created, &gfd);
        st->shared_created = st->shared_created || created;
        if (r >= 0) {
                r = ag_cg_attach(gfd, pid);
                if (r >= 0) {
                        st->shared = 1;
                        st->shared_created = false;     /* in use: not undone */
                        return 0;
                }
        }
        if (retryable(r) || h->version != 1)
                return r;
        r = ag_cg_attach(st->d.ufd, pid);
        if (r >= 0)
                st->shared = 2;
        return r;
}

/* Step 3 with "sessions no": the process into the user group itself. */
static int attach_user(const AgHierarchy *h, int ufd, pid_t pid, const char **what) {
        int r;

        r = ag_cg_attach(ufd, pid);
        if (r < 0)
                *what = r == -EINVAL && h->version == 1 ? "move the process into the user group "
                                                          "(a real-time task, which stays where it is)"
                                                        : "move the process into the user group";
        return r;
}

/* Steps 2 and 3: the user group, then the session (or, with "sessions
 * no", the process into the user group); once more when a concurrent close
 * or sweep removed a level under our feet. */
static int open_user_session(const AgHierarchy *h, const AgOpenParams *p, const char *root, pid_t pid,
                             OpenState *st, AgSession *made, char **name, const char **what) {
        int r;

        for (unsigned i = 0;; i++) {
                r = open_user(h, p, root, i == 0, st, what);
                if (r >= 0 && p->policy->sessions && st->live >= p->policy->sessions_max) {
                        /* the user's bound: this login shares */
                        st->share_error = -EUSERS;
                        st->share_what = NULL;
                        r = share_user_group(h, st, pid);
                        if (r < 0)
                                *what = "join the user's shared group";
                } else if (r >= 0 && p->policy->sessions) {
                        *made = (AgSession) {};
                        r = make_session(h, st->d.ufd, p, pid, made, name, what);
                        /* Fail closed: whatever kept the login from a session
                         * of its own, it still lands below the user group,
                         * under the user's policy, rather than stay where
                         * its caller is. A real-time task (v1) is refused
                         * there too, and stays. */
                        if (r < 0 && !retryable(r) && r != -ENOMEM) {
                                int r2;

                                st->share_error = r;
                                st->share_what = *what;
                                r2 = share_user_group(h, st, pid);
                                if (r2 >= 0 || retryable(r2))
                                        r = r2;
                        }
                } else if (r >= 0)
                        r = attach_user(h, st->d.ufd, pid, what);
                if (r >= 0 || !retryable(r) || i >= OPEN_RETRIES)
                        return r;
        }
}

/* The session object of a successful open; takes name, origin, acct_origin. */
static int session_new(const AgOpenParams *p, const char *root, const OpenState *st, const AgSession *made,
                       char **name, char **origin, char **acct_origin, AgSession **ret) {
        _cleanup_(session_freep) AgSession *s = NULL;

        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        if (st->shared) {
                if (asprintf(&s->path, "/%s/%s%s", st->place, st->ugroup,
                             st->shared == 1 ? "/" AG_SHARED_GROUP : "") < 0) {
                        s->path = NULL;
                        return -ENOMEM;
                }
                s->shared = true;
        } else if (asprintf(&s->path, "/%s/%s%s%s", st->place, st->ugroup, *name ? "/" : "", *name ? *name : "") < 0) {
                s->path = NULL;
                return -ENOMEM;
        }
        if (!(s->root = strdup(root)) || (p->pool && *p->pool && !(s->pool = strdup(p->pool))))
                return -ENOMEM;
        s->uid = p->uid;
        s->name = TAKE_PTR(*name);
        s->origin = TAKE_PTR(*origin);
        s->acct_origin = TAKE_PTR(*acct_origin);
        s->leaves = made->leaves;
        s->class_leaves = made->class_leaves;
        s->gid = made->gid;
        s->interactive = made->interactive;
        if (st->policy_error < 0)
                ag_events_warn(p->events, AG_WARN_POLICY, st->policy_error, st->policy_what);
        if (st->shared)
                ag_events_warn(p->events, AG_WARN_SHARED, st->share_error, st->share_what);
        *ret = TAKE_PTR(s);
        return 0;
}

int ag_session_open(const AgHierarchy *h, const AgOpenParams *p, AgSession **ret, const char **ret_what) {
        _cleanup_free_ char *origin = NULL, *acct_origin = NULL, *name = NULL;
        const char *what = NULL, *root = p->root ? p->root : AG_ROOT_DEFAULT;
        pid_t pid = p->pid > 0 ? p->pid : getpid();
        OpenState st = { .d = AG_DESCENT_NULL };
        AgSession made = {};
        int r;

        assert(h);
        assert(p && p->policy);
        assert(ret);

        r = ag_user_group_name(p->uid, st.ugroup, sizeof st.ugroup);
        if (r < 0)
                what = "name the user group";
        if (r >= 0 && (r = ag_pool_place(root, p->pool, st.place, sizeof st.place)) < 0)
                what = "name the pool group";
        if (r >= 0 && p->origin) {
                if (!(origin = strdup(p->origin)) ||
                    (h->version == 1 && p->acct_origin && !(acct_origin = strdup(p->acct_origin)))) {
                        r = -ENOMEM;
                        what = "allocate memory";
                }
        } else if (r >= 0)
                (void) ag_cg_pid_paths(h, pid, &origin, h->version == 1 ? &acct_origin : NULL);

        /* 1: the hierarchy and <root> */
        if (r >= 0)
                r = open_root(h, root, &st.d, &what);
        /* 2 and 3: the user group, then the session */
        if (r >= 0)
                r = open_user_session(h, p, root, pid, &st, &made, &name, &what);
        /* the user's latency lane beside the tree (lane.h): a login that
         * gets none is grouped all the same */
        if (r >= 0 && ag_lane_wanted(h, p->uid, p->policy)) {
                const char *lane_what = NULL;
                int lr = ag_lane_make(h, st.d.mfd, root, p->uid, p->gid, p->policy, &lane_what);

                if (lr < 0)
                        ag_events_warn(p->events, AG_WARN_LANE, lr, lane_what);
        } else if (r >= 0 && h->version == 1 && h->has_cpu && p->uid != 0)
                /* below interactive 2 (the level was lowered since): an
                 * empty lane of the user's goes, one rmdir (the helper uses a
                 * lane wherever it finds one) */
                (void) ag_lane_drop(st.d.mfd, root, p->uid, p->events);
        if (r >= 0) {
                r = session_new(p, root, &st, &made, &name, &origin, &acct_origin, ret);
                if (r < 0)
                        what = "allocate memory";
        }
        if (r < 0) {
                open_undo(&st, p->pool);
                if (ret_what)
                        *ret_what = what;
        }
        ag_descent_done(&st.d);
        return r;
}

/* The name of the i-th leaf open made (0 <= i < s->leaves + _AG_LATENCY_MAX):
 * leaf-1 .. leaf-<leaves>, then the class leaves in class order; -ENOENT
 * for a class whose leaf open did not make. *ret_weight (when not NULL):
 * the weight open wrote to it, 0 for none (make_leaves). */
static int made_leaf_name(const AgSession *s, unsigned i, char *buf, size_t size, unsigned *ret_weight) {
        if (i < s->leaves) {
                if (ret_weight)
                        *ret_weight = 0;
                return ag_root_leaf_name(i + 1, buf, size);
        }
        AgLatency l = (AgLatency) (i - s->leaves);
        if (!(s->class_leaves & (1U << l)))
                return -ENOENT;
        if (ret_weight)
                *ret_weight = ag_latency_leaf_weight(l, s->interactive);
        return ag_class_leaf_name(l, buf, size);
}

/* The leaves open made, removed by name (no directory read) in the order
 * open made them. The kernel refuses to remove a leaf that holds a process
 * (EBUSY: a terminal's tmux server, a nohup'd job the user moved there),
 * and that refusal is the test, no leaf's cgroup.procs is read: the
 * session then lives on, and the free leaves removed before the busy one
 * are made again for the panes still to come, so that a session that
 * outlives its login keeps all its free leaves (the user's helper passes
 * over a leaf missing meanwhile, ag_leaf_find_free). 1 when a leaf was in
 * use, else 0 with *n the leaves removed, each counted against *budget as
 * the walk would have. */
static int remove_root_leaves(const AgHierarchy *h, int sfd, const AgSession *s, unsigned *budget, unsigned *n,
                              const AgEvents *events) {
        bool removed[AG_LEAVES_MAX + _AG_LATENCY_MAX] = {};
        unsigned total = s->leaves + _AG_LATENCY_MAX;
        char name[32];

        assert(total <= ELEMENTSOF(removed));
        for (unsigned i = 0; i < total && *budget > 0; i++) {
                if (made_leaf_name(s, i, name, sizeof name, NULL) < 0)
                        continue;
                if (unlinkat(sfd, name, AT_REMOVEDIR) == 0) {
                        removed[i] = true;
                        (*budget)--;
                        (*n)++;
                        continue;
                }
                if (errno != EBUSY && errno != ENOTEMPTY)
                        continue;
                for (unsigned j = 0; j < i; j++) {
                        unsigned weight;
                        int r;

                        if (!removed[j] || made_leaf_name(s, j, name, sizeof name, &weight) < 0)
                                continue;
                        r = make_root_leaf(h, sfd, name, weight, s->uid, s->gid, true);
                        if (r < 0)      /* the session lives on with one free leaf fewer */
                                ag_events_warn(events, AG_WARN_LEAVES, r, NULL);
                }
                return 1;
        }
        return 0;
}

int ag_session_close(const AgHierarchy *h, const AgSession *s, pid_t pid, const AgEvents *events) {
        _cleanup_free_ char *current = NULL;

        assert(h);

        if (pid <= 0)
                pid = getpid();
        (void) ag_cg_pid_path(h, pid, &current);
        return ag_session_close_from(h, s, pid, current, events);
}

/* Is current (a process's path) in a group of uid below root: a session,
 * or the shared group, of any place? */
static bool in_user_groups(const char *current, const char *root, uid_t uid) {
        uid_t owner;

        return ag_session_of_path(current, root, &owner, NULL, NULL) >= 0 && owner == uid;
}

/* Leave the session first, or its removal fails with EBUSY: back to the
 * group the process came from; also from the user's shared group of
 * another place, where a later login of the user moved it when it closed
 * the place this session was in (pool.h). When that is unknown (its path
 * was too long to read) or gone, the process stays, and so does the
 * session, for a later sweep: never to the root cgroup, out of every
 * limit, unless it came from there. */
static void leave_session(int mfd, const AgSession *s, pid_t pid, const char *current) {
        _cleanup_close_ int ofd = -1;

        if (!current || !s->origin || ag_cg_path_is_below(s->origin, s->path) ||
            !(ag_cg_path_is_below(current, s->path) || in_user_groups(current, s->root, s->uid)))
                return;
        if (strcmp(s->origin, "/") == 0)
                (void) ag_cg_attach(mfd, pid);
        else if (ag_cg_open_path(mfd, s->origin, &ofd) >= 0)
                (void) ag_cg_attach(ofd, pid);
}

/* Removes the session s below its user group ufd, sfd its directory (-1
 * when it is gone). login/ is the only group of most sessions: with it gone
 * first, one rmdir removes the session; counted as the walk would have (one
 * directory visited and removed); when it stays, the walk deals with it. A
 * session of root's leaves that lives on (a tmux server, a nohup'd job, in
 * login/ or in a leaf) keeps its free leaves for the panes still to come: it
 * goes whole once empty (a later sweep, the watcher), -EBUSY meanwhile.
 * *sfd is closed. */
static int remove_own_session(const AgHierarchy *h, int ufd, int *sfd, const AgSession *s, const AgEvents *events) {
        unsigned budget = AG_SESSION_MAX_DIRS, n = 0;
        bool keep = false;
        int r;

        if (*sfd >= 0) {
                bool leaves = s->leaves > 0 || s->class_leaves;

                if (unlinkat(*sfd, AG_LOGIN_LEAF, AT_REMOVEDIR) == 0) {
                        budget--;
                        n++;
                } else if (leaves && errno == EBUSY) {
                        /* a process lives on in login/ (rather than groups
                         * below it): every leaf stays free for it */
                        unsigned look = AG_SESSION_MAX_DIRS;

                        keep = ag_cg_subtree_populated(*sfd, AG_LOGIN_LEAF, AG_SESSION_MAX_DEPTH, &look) > 0;
                }
                if (leaves && !keep)
                        keep = remove_root_leaves(h, *sfd, s, &budget, &n, events) > 0;
                *sfd = safe_close(*sfd);
        }
        if (keep)
                return -EBUSY;
        r = ag_cg_remove_empty(ufd, s->name, AG_SESSION_MAX_DEPTH, &budget, &n);
        if (r == 0 && n > 0)
                ag_events_removed(events, s->path, NULL);
        return r;
}

int ag_session_close_from(const AgHierarchy *h, const AgSession *s, pid_t pid, const char *current,
                          const AgEvents *events) {
        _cleanup_(ag_descent_done) AgDescent d = AG_DESCENT_NULL;
        int r, result = 0;

        assert(h);
        assert(s);

        if (pid <= 0)
                pid = getpid();
        r = ag_descent_open(h, s->root, s->pool, s->uid, s->name, 0, &d);
        if (d.mfd < 0)
                return r;
        leave_session(d.mfd, s, pid, current);
        if (d.rfd < 0)
                return r == -ENOENT ? 0 : r;

        /* Our own session first, so that the answer is about it, whatever a
         * concurrent sweep does to the others. */
        if (s->name && d.ufd >= 0) {
                result = remove_own_session(h, d.ufd, &d.sfd, s, events);
                if (result == -EBUSY) {
                        _cleanup_close_ int sfd = -1;

                        /* closed, lingering: for the one watcher of the user */
                        if (ag_cg_open(d.ufd, s->name, &sfd) >= 0)
                                (void) fsetxattr(sfd, AG_CLOSED_XATTR, "1", 1, 0);
                }
        }
        r = ag_user_sweep(d.rfd, s->root, s->uid, true, AG_SESSION_MAX_DIRS, events);
        if (r < 0)
                return r;
        /* pools: the user's groups in the pool, and the pool once empty */
        if (s->pool)
                (void) ag_pool_sweep_place(d.rfd, s->root, s->pool, s->uid, true, AG_SESSION_MAX_DIRS, events);
        /* the user's latency lane, once the user group is gone (lane.h) */
        (void) ag_lane_sweep(d.mfd, d.pfd, s->root, s->uid, events);
        return result == -E2BIG ? -EBUSY : result;
}

int ag_session_wait_empty(const AgHierarchy *h, const AgSession *s, unsigned timeout_ms) {
        _cleanup_(ag_descent_done) AgDescent d = AG_DESCENT_NULL;
        uint64_t waited_us = 0, step_us = 5000;
        int r;

        assert(h);
        assert(s);

        if (!s->name)
                return -EINVAL;
        /* A level that is gone: nothing left to wait for. */
        r = ag_descent_open(h, s->root, s->pool, s->uid, NULL, 0, &d);
        if (r < 0)
                return r == -ENOENT && d.mfd >= 0 ? 0 : r;

        for (;;) {
                unsigned budget = AG_SESSION_MAX_DIRS;

                r = ag_cg_subtree_populated(d.ufd, s->name, AG_SESSION_MAX_DEPTH, &budget);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                if (r == 0)
                        return 0;
                if (waited_us >= (uint64_t) timeout_ms * 1000)
                        return -ETIMEDOUT;
                (void) usleep((useconds_t) step_us);
                waited_us += step_us;
                if (step_us < AG_WAIT_STEP_MAX_US)
                        step_us = step_us * 2 > AG_WAIT_STEP_MAX_US ? AG_WAIT_STEP_MAX_US : step_us * 2;
        }
}
