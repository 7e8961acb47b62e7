/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* The latency lane of a user beside the tree: its name, its making and
 * removal by root, and its opening by the user's helper. See lane.h. */

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acct.h"
#include "lane.h"
#include "leaves.h"
#include "place.h"
#include "util.h"

int ag_lane_name(const char *root, uid_t uid, char *buf, size_t size) {
        int n;

        assert(root);
        assert(buf);

        n = snprintf(buf, size, "%s" AG_LANE_INFIX "%" PRIuMAX, root, (uintmax_t) uid);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

int ag_lane_path_uid(const char *path, uid_t *ret_uid) {
        const char *name, *infix = NULL, *p;
        unsigned long v;

        if (!path || path[0] != '/')
                return -EINVAL;
        name = path + 1;
        if (strchr(name, '/'))
                return -EINVAL;
        /* the last ".lane-": a root's name may hold the infix too */
        for (p = strstr(name, AG_LANE_INFIX); p; p = strstr(p + 1, AG_LANE_INFIX))
                infix = p;
        if (!infix || infix == name)
                return -EINVAL;
        p = infix + strlen(AG_LANE_INFIX);
        if ((p[0] == '0' && p[1] != 0) || ag_safe_atoul(p, (uid_t) -2, &v) < 0)
                return -EINVAL;
        if (ret_uid)
                *ret_uid = (uid_t) v;
        return 0;
}

int ag_lane_parse(const char *name, const char *root, uid_t *ret_uid) {
        size_t n = strlen(root), m = strlen(AG_LANE_INFIX);
        const char *p;
        unsigned long v;

        assert(name);

        if (strncmp(name, root, n) != 0 || strncmp(name + n, AG_LANE_INFIX, m) != 0)
                return -EINVAL;
        p = name + n + m;
        /* "lane-007" and "lane-00" are not ours: only the canonical spelling is. */
        if (p[0] == '0' && p[1] != 0)
                return -EINVAL;
        if (ag_safe_atoul(p, (uid_t) -2, &v) < 0)
                return -EINVAL;
        *ret_uid = (uid_t) v;
        return 0;
}

bool ag_lane_wanted(const AgHierarchy *h, uid_t uid, const AgPolicy *policy) {
        /* leaves 0 and leaves-notty 0: no cgroup.procs of the user's
         * anywhere, the lane's neither (on v1 any of them would let the user
         * pull a process of theirs into it from anywhere in the hierarchy) */
        return h && policy && h->version == 1 && h->has_cpu && uid != 0 && policy->interactive == AG_INTERACTIVE_MAX &&
               (policy->leaves > 0 || policy->leaves_notty > 0);
}

/* The lane's values: the default weight, the cap lane_cap_pct, never idle. */
static void lane_values(const AgHierarchy *h, long lane_cap_pct, AgCgValues *ret) {
        AgPolicy lp;

        ag_policy_init(&lp);
        lp.max_pct = lane_cap_pct;
        ag_policy_to_values(&lp, h->version, ret);
}

int ag_lane_make(const AgHierarchy *h, int mfd, const char *root, uid_t uid, gid_t gid, const AgPolicy *policy,
                 const char **ret_what) {
        _cleanup_close_ int lfd = -1;
        char name[AG_ROOT_NAME_MAX + 32];
        bool created = false;
        struct stat st;
        AgCgValues v;
        const char *what;
        int r;

        assert(h && root && policy);

        what = "name the latency lane";
        r = ag_lane_name(root, uid, name, sizeof name);
        if (r < 0)
                goto fail;
        what = "create the latency lane";
        r = ag_cg_mkdir_open_0755(mfd, name, &created, &lfd);
        if (r < 0)
                goto fail;
        /* a group of that name someone else made is not ours to hand over */
        what = "use the latency lane (not root's)";
        if (fstat(lfd, &st) < 0) {
                r = negative_errno();
                goto fail;
        }
        if (st.st_uid != 0) {
                r = -EPERM;
                goto fail;
        }
        /* the default weight, the lane's cap, never idle; the cap before the
         * user can move anything in */
        lane_values(h, policy->lane_cap_pct, &v);
        what = "set the latency lane's cap";
        r = created ? ag_cg_apply_new(h, lfd, &v, NULL) : ag_cg_apply(h, lfd, &v, NULL);
        if (r < 0)
                goto fail;
        what = "hand the latency lane's cgroup.procs to the user";
        r = ag_cg_grant_procs(lfd, uid, gid);
        if (r < 0)
                goto fail;
        return created;

fail:
        /* a lane this call made goes again, uncapped or not the user's */
        if (created) {
                lfd = safe_close(lfd);
                (void) unlinkat(mfd, name, AT_REMOVEDIR);
        }
        if (ret_what)
                *ret_what = what;
        return r;
}

/* Removes the lane name below mfd (warn: a failure is told as AG_WARN_LANE)
 * and tells removed, with the lane's own CPU time where it has one (v1
 * cpu,cpuacct), read just before the rmdir: the lane is outside every
 * session, so this is the one place its figures are read. With cpuacct on
 * its own the lane has none (NULL): its processes stay in their sessions'
 * mirrors, whose records count them. */
static int remove_lane(int mfd, const char *name, bool warn, const AgEvents *events) {
        char path[AG_ROOT_NAME_MAX + 40];
        AgCpuUsage u = { -1, -1, -1 };
        bool have_usage = false;

        if (ag_events_want_removed(events)) {
                _cleanup_close_ int lfd = -1;

                have_usage = ag_cg_open(mfd, name, &lfd) >= 0 && ag_acct_read_group(1, lfd, &u) >= 0;
        }
        if (unlinkat(mfd, name, AT_REMOVEDIR) < 0) {
                int r = negative_errno();

                if (r == -ENOENT)
                        return 0;
                if (warn)
                        ag_events_warn(events, AG_WARN_LANE, r,
                                       r == -EBUSY ? "remove the latency lane (it holds processes)"
                                                   : "remove the latency lane");
                return r;
        }
        snprintf(path, sizeof path, "/%s", name);
        ag_events_removed(events, path, have_usage ? &u : NULL);
        return 1;
}

int ag_lane_sweep(int mfd, int pfd, const char *root, uid_t uid, const AgEvents *events) {
        char name[AG_ROOT_NAME_MAX + 32], ugroup[64];
        struct stat st;
        int r;

        assert(root);

        if (uid == 0)
                return 0;
        r = ag_lane_name(root, uid, name, sizeof name);
        if (r >= 0)
                r = ag_user_group_name(uid, ugroup, sizeof ugroup);
        if (r < 0)
                return r;
        if (fstatat(mfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
                return 0;
        if (pfd >= 0 && fstatat(pfd, ugroup, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;       /* the user is still here */
        return remove_lane(mfd, name, true, events);
}

int ag_lane_drop(int mfd, const char *root, uid_t uid, const AgEvents *events) {
        char name[AG_ROOT_NAME_MAX + 32];
        struct stat st;

        if (uid == 0 || ag_lane_name(root, uid, name, sizeof name) < 0)
                return 0;
        if (fstatat(mfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
                return 0;
        return remove_lane(mfd, name, false, events) > 0;
}

/* Has uid a user group in <root> (rfd) or in one of its pools? */
static bool user_has_group(int rfd, uid_t uid) {
        char ugroup[64];
        struct dirent *de;
        struct stat st;
        unsigned seen = 0;
        bool found = false;
        DIR *d;

        if (rfd < 0 || ag_user_group_name(uid, ugroup, sizeof ugroup) < 0)
                return false;
        if (fstatat(rfd, ugroup, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return true;
        if (ag_opendir_dup(rfd, &d) < 0)
                return true;    /* not known: kept */
        while (!found && (de = readdir(d)) && seen++ < AG_GC_MAX_DIRS) {
                _cleanup_close_ int pfd = -1;
                const char *pool;

                if (de->d_type != DT_DIR || ag_pool_group_parse(de->d_name, &pool) < 0 ||
                    ag_cg_open(rfd, de->d_name, &pfd) < 0)
                        continue;
                found = fstatat(pfd, ugroup, &st, AT_SYMLINK_NOFOLLOW) == 0;
        }
        closedir(d);
        return found;
}

/* The next entry of a readdir stream of the hierarchy's root that is named
 * as a lane of a user other than root (its uid in *ret_uid), within
 * AG_GC_MAX_DIRS entries read (counted in *seen); NULL at the end. Who owns
 * it is for the caller to check. */
static struct dirent *next_lane(DIR *d, const char *root, unsigned *seen, uid_t *ret_uid) {
        struct dirent *de;

        while ((de = readdir(d)) && (*seen)++ < AG_GC_MAX_DIRS)
                if (de->d_type == DT_DIR && ag_lane_parse(de->d_name, root, ret_uid) >= 0 && *ret_uid != 0)
                        return de;
        return NULL;
}

int ag_lane_gc(int mfd, int rfd, const char *root, const AgEvents *events) {
        struct dirent *de;
        unsigned seen = 0;
        uid_t uid;
        int n = 0, r;
        DIR *d;

        r = ag_opendir_dup(mfd, &d);
        if (r < 0)
                return r;
        while ((de = next_lane(d, root, &seen, &uid))) {
                struct stat st;

                if (fstatat(mfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid != 0 ||
                    user_has_group(rfd, uid))
                        continue;
                if (remove_lane(mfd, de->d_name, true, events) > 0)
                        n++;
        }
        closedir(d);
        return n;
}

int ag_lane_apply(const AgHierarchy *h, int mfd, const char *root,
                  int (*policy_for)(void *userdata, uid_t uid, AgPolicy *ret), void *userdata, unsigned *ret_failed) {
        struct dirent *de;
        unsigned seen = 0, failed = 0;
        uid_t uid;
        int n = 0, r;
        DIR *d;

        assert(h && root && policy_for);

        r = ag_opendir_dup(mfd, &d);
        if (r < 0)
                return r;
        while ((de = next_lane(d, root, &seen, &uid))) {
                _cleanup_close_ int lfd = -1;
                struct stat st;
                AgPolicy p;
                AgCgValues v;

                if (ag_cg_open(mfd, de->d_name, &lfd) < 0 || fstat(lfd, &st) < 0 || st.st_uid != 0)
                        continue;
                if (policy_for(userdata, uid, &p) <= 0)
                        continue;
                lane_values(h, p.lane_cap_pct, &v);
                if (ag_cg_apply(h, lfd, &v, NULL) < 0)
                        failed++;
                else
                        n++;
        }
        closedir(d);
        if (ret_failed)
                *ret_failed = failed;
        return n;
}

int ag_lane_open_at(int mfd, const char *root, uid_t uid, int *ret_fd) {
        _cleanup_close_ int fd = -1;
        char name[AG_ROOT_NAME_MAX + 32];
        struct stat st;
        int r;

        assert(root && ret_fd);

        if (uid == 0)
                return -ENOENT;
        r = ag_lane_name(root, uid, name, sizeof name);
        if (r >= 0)
                r = ag_cg_open(mfd, name, &fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_uid != 0)
                return -ENOENT;
        *ret_fd = take_fd(&fd);
        return 0;
}

int ag_lane_open(const AgHierarchy *h, const char *root, uid_t uid, int *ret_fd) {
        _cleanup_close_ int mfd = -1;
        char name[AG_ROOT_NAME_MAX + 32];
        int r;

        assert(h && root);

        if (h->version != 1)
                return -EPROTONOSUPPORT;
        if (uid == 0)
                return -ENOENT;
        r = ag_lane_name(root, uid, name, sizeof name);
        if (r >= 0)
                r = ag_hierarchy_open(h, &mfd);
        if (r >= 0)
                r = ag_leaf_open(mfd, name, uid, ret_fd);
        return r == -EPERM ? -ENOENT : r;
}
