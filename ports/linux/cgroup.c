/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/cgroup.c -- the hugetlb cgroup limits that apply to this process.
 *
 * Why it matters: the hugetlb controller's plain limit (v1 hugetlb.<S>.limit_in_bytes, v2
 * hugetlb.<S>.max) is charged when a page is faulted in, not when the mapping reserves it.
 * A process under such a limit can mmap a segment successfully and die of SIGBUS when it
 * touches it; that is how PostgreSQL's initdb crashes in containers whose runtime sets only
 * that limit.  The reservation limit (hugetlb.<S>.rsvd.*, Linux 5.7) is charged at mmap or
 * shmget time, which then fails cleanly.  The core uses what we read here to fault the
 * segment in at create time when the first kind applies without the second.
 *
 * How the cgroup is found:
 *   - /proc/self/cgroup has one line per hierarchy.  v1: "N:ctrl,ctrl:/path", and hugetlb
 *     may share a hierarchy with other controllers.  v2: "0::/path".  When both exist (the
 *     hybrid layout) the controller lives in at most one of them: a v1 hierarchy with
 *     hugetlb wins, else the v2 one.
 *   - The hierarchy's mount point comes from /proc/self/mountinfo: fstype "cgroup" with
 *     "hugetlb" among its super options, or fstype "cgroup2".  A container may mount a
 *     subtree: the mount's root field is then a prefix of our path and is stripped.
 *   - The files are named with the kernel's size format (mm/hugetlb_cgroup.c mem_fmt):
 *     KB below 1MiB, MB below 1GiB, else GB: hugetlb.64KB, hugetlb.2MB, hugetlb.1GB.
 *   - Limits of every ancestor apply too, so we walk up to the mount point and keep the one
 *     leaving the least room.  The v2 root has no hugetlb files, and a v2 cgroup only has
 *     them when its parent enabled the controller; missing files mean "no limit here".
 *   - "Unlimited" is "max" in v2, and in v1 the largest page counter times the page size
 *     rounded down to the huge page (9223372036854771712 on x86-64): anything from 2^62 on
 *     is read as HPSHM__UNLIMITED.
 *   - Kernels before 5.7 have no rsvd files: the reservation limit is then unlimited,
 *     which is exactly the SIGBUS-prone case.
 *
 * If the controller is bound to a v1 hierarchy that is not mounted in our namespace, no
 * limit can be seen and we report none (version 0).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"

#define CGROUP_LINE_MAX   8192       /* cgroup paths are at most PATH_MAX; longer lines are skipped */
#define CGROUP_UNLIMITED  (UINT64_C(1) << 62)

/* Where one hierarchy is mounted. */
struct cgroup_mount {
	char point[PATH_MAX]; /* mount point, unescaped */
	char root[PATH_MAX];  /* the hierarchy's directory shown there, unescaped */
};

/* Is word an item of the comma-separated list? */
static int cgroup_has_item(const char *list, const char *word)
{
	size_t wlen = strlen(word);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, word, wlen) == 0 && (p[wlen] == ',' || p[wlen] == '\0'))
			return 1;
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return 0;
}

/* Undo mountinfo's octal escapes (\040 is a space) while copying; -1 if it does not fit. */
static int cgroup_unescape(char *dst, size_t len, const char *s)
{
	size_t n = 0;

	while (*s != '\0') {
		if (n + 1 >= len)
			return -1;
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			dst[n++] = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			dst[n++] = *s++;
		}
	}
	dst[n] = '\0';
	return 0;
}

/* Does the hierarchy directory root contain path (root "/" contains everything)? */
static size_t cgroup_root_prefix(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return 0;
	if (strncmp(root, path, n) == 0 && (path[n] == '/' || path[n] == '\0'))
		return n;
	return SIZE_MAX;
}

/*
 * Find the mount of the hierarchy: v1 the "cgroup" mount carrying the controller ctrl, v2 the
 * "cgroup2" one.  Of several mounts, one whose root holds cgpath wins.  0, or -1.
 */
static int cgroup_find_mount(int version, const char *ctrl, const char *cgpath, struct cgroup_mount *m)
{
	char line[CGROUP_LINE_MAX];
	char *save, *root, *point, *tok, *fstype, *super;
	struct cgroup_mount cand;   /* this line's mount: m keeps the last whole one */
	int cut, found = 0, i;
	FILE *f = hpshm__linux_sysfile_open("/proc/self/mountinfo");

	if (f == NULL)
		return -1;
	while (hpshm__linux_getline(f, line, sizeof(line), &cut)) {
		if (cut)
			continue;
		save = NULL;
		tok = strtok_r(line, " ", &save);
		for (i = 0; tok != NULL && i < 3; i++)
			tok = strtok_r(NULL, " ", &save);
		root = tok;
		point = strtok_r(NULL, " ", &save);
		if (root == NULL || point == NULL || strtok_r(NULL, " ", &save) == NULL)
			continue;
		while ((tok = strtok_r(NULL, " ", &save)) != NULL && strcmp(tok, "-") != 0)
			;
		fstype = tok != NULL ? strtok_r(NULL, " ", &save) : NULL;
		if (fstype == NULL || strtok_r(NULL, " ", &save) == NULL)
			continue;
		super = strtok_r(NULL, " ", &save);
		if (version == 1 && (strcmp(fstype, "cgroup") != 0 || super == NULL || !cgroup_has_item(super, ctrl)))
			continue;
		if (version == 2 && strcmp(fstype, "cgroup2") != 0)
			continue;
		if (cgroup_unescape(cand.point, sizeof(cand.point), point) < 0 ||
		    cgroup_unescape(cand.root, sizeof(cand.root), root) < 0)
			continue;   /* longer than a path: no mount we could read */
		*m = cand;
		found = 1;
		if (cgroup_root_prefix(m->root, cgpath) != SIZE_MAX)
			break;   /* a mount that shows our cgroup: no later one replaces it */
	}
	fclose(f);
	return found ? 0 : -1;
}

/* Our cgroup's path in hierarchy version 1 (the one with controller) or 2.  0, or -1. */
static int cgroup_self_path(int version, const char *controller, char *out, size_t len)
{
	char line[CGROUP_LINE_MAX];
	char *ctrl, *path;
	int cut, found = 0;
	FILE *f = hpshm__linux_sysfile_open("/proc/self/cgroup");

	if (f == NULL)
		return -1;
	while (!found && hpshm__linux_getline(f, line, sizeof(line), &cut)) {
		if (cut)
			continue;
		ctrl = strchr(line, ':');
		path = ctrl != NULL ? strchr(ctrl + 1, ':') : NULL;
		if (path == NULL)
			continue;
		*ctrl++ = '\0';
		*path++ = '\0';
		if (version == 2 && (strcmp(line, "0") != 0 || *ctrl != '\0'))
			continue;
		if (version == 1 && (strcmp(line, "0") == 0 || !cgroup_has_item(ctrl, controller)))
			continue;
		if (strlen(path) >= len || path[0] != '/')
			continue;
		strcpy(out, path);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* A limit or usage file: 0 with *out set (HPSHM__UNLIMITED for "max" or >= 2^62), or -1. */
static int cgroup_read_value(const char *dir, const char *file, uint64_t *out)
{
	char path[PATH_MAX], buf[64];
	unsigned long long v;
	char *end;
	int n = snprintf(path, sizeof(path), "%s/%s", dir, file);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	if (hpshm__linux_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	if (strncmp(buf, "max", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0')) {
		*out = HPSHM__UNLIMITED;
		return 0;
	}
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno != 0 || (*end != '\n' && *end != '\0'))
		return -1;
	*out = v >= CGROUP_UNLIMITED ? HPSHM__UNLIMITED : (uint64_t)v;
	return 0;
}

/* Room left under a limit; HPSHM__UNLIMITED if there is none. */
static uint64_t cgroup_room(uint64_t limit, uint64_t usage)
{
	if (limit == HPSHM__UNLIMITED)
		return HPSHM__UNLIMITED;
	return limit > usage ? limit - usage : 0;
}

/* Copy a directory into out->path; a path too long keeps its end, marked with "...". */
static void cgroup_set_path(struct hpshm__limit *out, const char *dir)
{
	size_t n = strlen(dir), room = sizeof(out->path) - 1;

	if (n <= room) {
		memcpy(out->path, dir, n + 1);
		return;
	}
	memcpy(out->path, "...", 3);
	memcpy(out->path + 3, dir + n - (room - 3), room - 3 + 1);
}

/*
 * Read the limits of dir and of every ancestor up to the mount point, keeping the tightest.
 * out->version is set only if some level has the hugetlb files.
 */
static void cgroup_walk(int version, const struct cgroup_mount *m, const char *cgpath, const char *sname,
			struct hpshm__limit *out)
{
	char dir[PATH_MAX], file[96];
	uint64_t limit, usage, rlimit, rusage, room, best = HPSHM__UNLIMITED;
	size_t skip, mlen = strlen(m->point);
	char *slash;
	int n, first = 1;

	skip = cgroup_root_prefix(m->root, cgpath);
	if (skip == SIZE_MAX)
		skip = 0;  /* the mount shows another subtree: our path is the best guess */
	n = snprintf(dir, sizeof(dir), "%s%s", m->point, strcmp(cgpath + skip, "/") == 0 ? "" : cgpath + skip);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return;

	for (;;) {
		snprintf(file, sizeof(file), version == 1 ? "hugetlb.%s.limit_in_bytes" : "hugetlb.%s.max", sname);
		if (cgroup_read_value(dir, file, &limit) == 0) {
			snprintf(file, sizeof(file), version == 1 ? "hugetlb.%s.usage_in_bytes" : "hugetlb.%s.current",
				 sname);
			if (cgroup_read_value(dir, file, &usage) < 0)
				usage = 0;
			snprintf(file, sizeof(file),
				 version == 1 ? "hugetlb.%s.rsvd.limit_in_bytes" : "hugetlb.%s.rsvd.max", sname);
			if (cgroup_read_value(dir, file, &rlimit) < 0)
				rlimit = HPSHM__UNLIMITED;  /* before Linux 5.7 */
			snprintf(file, sizeof(file),
				 version == 1 ? "hugetlb.%s.rsvd.usage_in_bytes" : "hugetlb.%s.rsvd.current", sname);
			if (cgroup_read_value(dir, file, &rusage) < 0)
				rusage = 0;

			if (first) {
				/* Our own cgroup: its usage stands when no level limits anything. */
				out->version = version;
				out->usage = usage;
				out->rsvd_usage = rusage;
				cgroup_set_path(out, dir);
				first = 0;
			}
			if (cgroup_room(limit, usage) < cgroup_room(out->limit, out->usage)) {
				out->limit = limit;
				out->usage = usage;
			}
			if (cgroup_room(rlimit, rusage) < cgroup_room(out->rsvd_limit, out->rsvd_usage)) {
				out->rsvd_limit = rlimit;
				out->rsvd_usage = rusage;
			}
			/* The path names the level that leaves the least room of either kind. */
			room = cgroup_room(limit, usage);
			if (cgroup_room(rlimit, rusage) < room)
				room = cgroup_room(rlimit, rusage);
			if (room < best) {
				best = room;
				cgroup_set_path(out, dir);
			}
		}
		/* Up one level, stopping after the mount point itself. */
		if ((size_t)n <= mlen)
			break;
		slash = strrchr(dir, '/');
		if (slash == NULL || (size_t)(slash - dir) < mlen)
			break;
		*slash = '\0';
		n = (int)(slash - dir);
	}
}

int hpshm__linux_cgroup_get(size_t page_size, struct hpshm__limit *out)
{
	struct cgroup_mount m;
	char cgpath[PATH_MAX], sname[32];

	if (out == NULL)
		return HPSHM_EINVAL;
	memset(out, 0, sizeof(*out));
	out->limit = HPSHM__UNLIMITED;
	out->rsvd_limit = HPSHM__UNLIMITED;
	if (page_size == 0)
		return HPSHM_EINVAL;

	hpshm__linux_hugetlb_cgroup_size(page_size, sname, sizeof(sname));

	if (cgroup_self_path(1, "hugetlb", cgpath, sizeof(cgpath)) == 0) {
		if (cgroup_find_mount(1, "hugetlb", cgpath, &m) == 0)
			cgroup_walk(1, &m, cgpath, sname, out);
		return 0;   /* bound to v1: v2 cannot have it too */
	}
	if (cgroup_self_path(2, "", cgpath, sizeof(cgpath)) == 0 && cgroup_find_mount(2, "", cgpath, &m) == 0)
		cgroup_walk(2, &m, cgpath, sname, out);
	return 0;
}

/*
 * The CPUs one level's quota allows, rounded up: v2 cpu.max "QUOTA PERIOD" ("max PERIOD" for
 * none), v1 cpu.cfs_quota_us (-1 for none) over cpu.cfs_period_us.  0 when none is set.
 */
static unsigned cgroup_level_cpus(int version, const char *dir)
{
	char path[PATH_MAX], buf[64];
	long long quota = -1, period = 0;
	int n;

	if (version == 2) {
		n = snprintf(path, sizeof(path), "%s/cpu.max", dir);
		if (n < 0 || (size_t)n >= sizeof(path) || hpshm__linux_read_file(path, buf, sizeof(buf)) < 0 ||
		    sscanf(buf, "%lld %lld", &quota, &period) != 2)
			return 0;
	} else {
		n = snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
		if (n < 0 || (size_t)n >= sizeof(path) || hpshm__linux_read_file(path, buf, sizeof(buf)) < 0 ||
		    sscanf(buf, "%lld", &quota) != 1)
			return 0;
		n = snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
		if (n < 0 || (size_t)n >= sizeof(path) || hpshm__linux_read_file(path, buf, sizeof(buf)) < 0 ||
		    sscanf(buf, "%lld", &period) != 1)
			return 0;
	}
	if (quota <= 0 || period <= 0)
		return 0;   /* "max", -1: no quota */
	return (unsigned)((quota + period - 1) / period);
}

unsigned hpshm__linux_cgroup_cpus(void)
{
	struct cgroup_mount m;
	char cgpath[PATH_MAX], dir[PATH_MAX];
	unsigned best = 0, here;
	size_t skip, mlen;
	char *slash;
	int version = 2, n;

	if (cgroup_self_path(1, "cpu", cgpath, sizeof(cgpath)) == 0)
		version = 1;
	else if (cgroup_self_path(2, "", cgpath, sizeof(cgpath)) < 0)
		return 0;
	if (cgroup_find_mount(version, version == 1 ? "cpu" : "", cgpath, &m) < 0)
		return 0;
	skip = cgroup_root_prefix(m.root, cgpath);
	if (skip == SIZE_MAX)
		skip = 0;
	n = snprintf(dir, sizeof(dir), "%s%s", m.point, strcmp(cgpath + skip, "/") == 0 ? "" : cgpath + skip);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return 0;
	/* Every level up to the mount point: the tightest quota is the one that binds. */
	for (mlen = strlen(m.point);;) {
		here = cgroup_level_cpus(version, dir);
		if (here != 0 && (best == 0 || here < best))
			best = here;
		slash = strrchr(dir, '/');
		if (strlen(dir) <= mlen || slash == NULL || (size_t)(slash - dir) < mlen)
			break;
		*slash = '\0';
	}
	return best;
}
