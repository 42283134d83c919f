/* SPDX-License-Identifier: MIT */
/*
 * tests/fixture.c -- the pool-leak fixture and the kernel readers the suites share.
 * See fixture.h.
 *
 * On Windows (the portable suites under wine, scripts/test-windows.sh) there are no pools,
 * SysV segments or shm directories: what a test can leave behind there is a named object
 * under hpshm's prefix, which lives as long as a handle to it is open, so the snapshot is
 * the list of hpshm.* objects in the session's Local\ and the Global\ namespace, read from
 * the object manager's directories as `hpshm ls` reads them.  The readers of /proc and /sys
 * find nothing there and report nothing, as on any system without them.
 */
#include "fixture.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <dirent.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#ifdef __linux__
#include <sched.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#endif
#include <time.h>

#include "harness.h"
#ifdef HPSHM_TEST_CRITERION
#include <criterion/hooks.h>
#include <criterion/options.h>
#endif

#include "hpshm.h"
/*
 * The Linux port's tables and sysroot, which the tests change and the fixture resets; also
 * HUGETLBFS_MAGIC, which musl-gcc cannot take from <linux/magic.h>.  Elsewhere (the POSIX
 * port, posix-generic included) there is neither, and the readers below of /proc and /sys
 * find nothing and report nothing.
 */
#ifdef __linux__
#include "ports/linux/linux.h"
#endif
#ifdef _WIN32
#include "ports/windows/sys.h"

#include <psapi.h>
#define strncasecmp _strnicmp
#else
#include "ports/posix/sys.h"
#endif

/* A growing text buffer: the snapshot is a list of lines, compared as one string. */
struct hpt_buf {
	char  *p;
	size_t len, cap;
};

static void buf_add(struct hpt_buf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (b->len + n + 1 > cap)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			abort();
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static int read_ulong(const char *path, unsigned long *out)
{
	char buf[64];

	if (read_text(path, buf, sizeof buf) < 0)
		return -1;
	*out = strtoul(buf, NULL, 10);
	return 0;
}

/*
 * The sandbox a test runs in (Linux, as root; see fixture.h): its own IPC and mount namespace,
 * with a private tmpfs on /dev/shm and a private hugetlbfs instance over every hugetlbfs mount
 * point, and its own hugetlb cgroup.  Whatever the test makes is then visible to the fixture
 * alone, and whatever other programs make is invisible to it.
 */
struct sandbox {
	int  spaces;                /* 1: the test has its own IPC and mount namespace */
	int  cgroup_v2;             /* the cgroup below is of the v2 hierarchy (else v1) */
	char cgroup[1200];          /* the test's hugetlb cgroup directory, "" without one */
	char home[1200];            /* the cgroup.procs this process came from, to go back to */
	char why[4096];             /* why the fixture judges the whole machine, "" when it does not */
	long owner;                 /* the process that made the cgroup: only it leaves it */
	char v1_mount[1024];        /* a v1 hugetlb hierarchy the fixture mounted, "" if none */
};

static struct sandbox sandbox;

#ifdef _WIN32
/* The hpshm.* objects of one namespace, as "<ns> <name> (<type>)" lines. */
struct snap_objects {
	const char *ns;       /* "Local" or "Global" */
	char      **names;    /* the lines */
	size_t      n, cap;
};

static int snap_object(void *user, const wchar_t *name, const wchar_t *type)
{
	struct snap_objects *o = user;
	char n8[512], t8[64], line[640];

	if (wcsncmp(name, L"hpshm.", 6) != 0)
		return 0;
	hpshm__win_utf8(name, n8, sizeof n8);
	hpshm__win_utf8(type, t8, sizeof t8);
	snprintf(line, sizeof line, "%s\\%s (%s)\n", o->ns, n8, t8);
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 16;
		o->names = realloc(o->names, o->cap * sizeof *o->names);
		if (!o->names)
			abort();
	}
	o->names[o->n] = _strdup(line);
	if (!o->names[o->n++])
		abort();
	return 0;
}

static void take_snapshot(struct hpt_buf *b)
{
	static const char *const spaces[] = { "Local", "Global" };
	const char *call = "";
	int same = 0;

	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	buf_add(b, "");
	for (int i = 0; i < 2 && !same; i++) {
		struct snap_objects o = { spaces[i], NULL, 0, 0 };
		char line[128];
		long st = hpshm__win_objects_list(i ? HPSHM__WIN_GLOBAL : HPSHM__WIN_LOCAL, snap_object, &o, &same,
						  &call);

		if (st != 0) {
			snprintf(line, sizeof line, "%s: %s failed, NTSTATUS %#lx\n", spaces[i], call, (unsigned long)st);
			buf_add(b, line);
		}
		if (o.n)
			qsort(o.names, o.n, sizeof *o.names, cmp_str);
		for (size_t k = 0; k < o.n; k++) {
			buf_add(b, o.names[k]);
			free(o.names[k]);
		}
		free(o.names);
	}
}
#else
/*
 * Append "<prefix><name>\n" for every entry of dir, sorted, skipping . and ..; without a
 * namespace of its own, only the names hpshm gives ("hpshm.*").
 */
static void snap_dir(struct hpt_buf *b, const char *prefix, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	char line[1024];

	if (!d) {
		snprintf(line, sizeof line, "%s<unreadable: %s>\n", prefix, strerror(errno));
		buf_add(b, line);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!sandbox.spaces && strncmp(e->d_name, "hpshm.", 6) != 0)
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap ? cap * 2 : 16) * sizeof *names);

			if (!p)
				abort();
			names = p;
			cap = cap ? cap * 2 : 16;
		}
		names[n] = strdup(e->d_name);
		if (!names[n])
			abort();
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof line, "%s%s\n", prefix, names[i]);
		buf_add(b, line);
		free(names[i]);
	}
	free(names);
}


#ifdef __linux__
/*
 * snprintf() for the sandbox's paths and messages: a path too long for its buffer is cut, and
 * then names nothing, which the call that uses it reports.
 */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void pathf(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return -1;
	rc = fputs(text, f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* Undo mountinfo's octal escapes (\040 for a space) of a field, in place. */
static void mountinfo_unescape(char *s)
{
	char *q = s;

	while (*s) {
		if (s[0] == '\\' && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
		    isdigit((unsigned char)s[3])) {
			*q++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*q++ = *s++;
		}
	}
	*q = '\0';
}

/*
 * One line of /proc/self/mountinfo: its mount point (unescaped), file system type and super
 * options, each copied into the caller's buffers.  0, or -1 for a line of another shape.
 */
static int mountinfo_fields(const char *line, char *point, size_t plen, char *fstype, size_t flen, char *super,
			    size_t slen)
{
	const char *sep = strstr(line, " - ");
	char mnt[1024], fs[64], src[512], opts[1024];

	if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
	    sscanf(sep + 3, "%63s %511s %1023s", fs, src, opts) != 3)
		return -1;
	mountinfo_unescape(mnt);
	pathf(point, plen, "%s", mnt);
	pathf(fstype, flen, "%s", fs);
	pathf(super, slen, "%s", opts);
	return 0;
}

/*
 * A hugetlbfs instance of our own over the mount point, with the original's page size, mode,
 * owner and size limit.  Its min_size is left out: a minimum reserves pages of the pool at
 * mount time, for every test, which no test needs.
 */
static int sandbox_hugetlbfs(const char *point, const char *super)
{
	char opts[1024] = "", copy[1024], *save = NULL;

	pathf(copy, sizeof copy, "%s", super);
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "rw") || !strcmp(o, "ro") || !strncmp(o, "min_size=", 9))
			continue;
		if (opts[0])
			strncat(opts, ",", sizeof opts - strlen(opts) - 1);
		strncat(opts, o, sizeof opts - strlen(opts) - 1);
	}
	return mount("hpshm-test", point, "hugetlbfs", 0, opts);
}

/* The private namespaces: 0, or -1 with sandbox.why set. */
static int sandbox_spaces(void)
{
	char line[4096], point[1024], fstype[64], super[1024];
	char done[16][1024];
	int ndone = 0;
	FILE *f;

	if (unshare(CLONE_NEWIPC | CLONE_NEWNS) < 0) {
		pathf(sandbox.why, sizeof sandbox.why, "unshare(CLONE_NEWIPC | CLONE_NEWNS): %s", strerror(errno));
		return -1;
	}
	/* Nothing mounted below reaches the machine's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		pathf(sandbox.why, sizeof sandbox.why, "making / private in the test's namespace: %s", strerror(errno));
		return -1;
	}
	if (access("/dev/shm", F_OK) == 0 &&
	    mount("hpshm-test", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0) {
		pathf(sandbox.why, sizeof sandbox.why, "mounting a private tmpfs on /dev/shm: %s", strerror(errno));
		return -1;
	}
	f = fopen("/proc/self/mountinfo", "r");
	if (!f) {
		pathf(sandbox.why, sizeof sandbox.why, "/proc/self/mountinfo: %s", strerror(errno));
		return -1;
	}
	/* Lines appended by our own mounts come after the ones read so far; a point mounted over
	 * once is not mounted over again. */
	while (fgets(line, sizeof line, f)) {
		int seen = 0;

		if (mountinfo_fields(line, point, sizeof point, fstype, sizeof fstype, super, sizeof super) < 0 ||
		    strcmp(fstype, "hugetlbfs") != 0)
			continue;
		for (int i = 0; i < ndone; i++)
			seen |= !strcmp(done[i], point);
		if (seen || ndone == 16)
			continue;
		pathf(done[ndone++], sizeof done[0], "%s", point);
		if (sandbox_hugetlbfs(point, super) < 0) {
			pathf(sandbox.why, sizeof sandbox.why, "mounting a private hugetlbfs over %s: %s", point,
				 strerror(errno));
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

/* Does the space-separated list in the file hold word? */
static int file_has_word(const char *path, const char *word)
{
	char text[512], *save = NULL;

	if (read_text(path, text, sizeof text) < 0)
		return 0;
	for (char *w = strtok_r(text, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (!strcmp(w, word))
			return 1;
	return 0;
}

/*
 * The test's hugetlb cgroup: on the v2 hierarchy where it offers hugetlb, else on a v1
 * hierarchy that carries it.  v2: <root>/hpshm-test.<pid> holds the test in a leaf "test"
 * (a v2 cgroup with processes may not hand controllers down), so a test may make cgroups of
 * its own beside that leaf, and the counters of hpshm-test.<pid> count them all.  0, or -1
 * with sandbox.why set.
 */
/*
 * The mount points of the hierarchies that carry hugetlb: v2 where its root offers the
 * controller, v1 where a hierarchy is mounted with it ("" for none).
 */
static void cgroup_roots(char *v1, size_t v1len, char *v2, size_t v2len)
{
	char line[4096], point[1024], fstype[64], super[1024], path[1100];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	v1[0] = v2[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		if (mountinfo_fields(line, point, sizeof point, fstype, sizeof fstype, super, sizeof super) < 0)
			continue;
		pathf(path, sizeof path, "%s/cgroup.controllers", point);
		if (!strcmp(fstype, "cgroup2") && !v2[0] && file_has_word(path, "hugetlb"))
			pathf(v2, v2len, "%s", point);
		if (!strcmp(fstype, "cgroup") && !v1[0] && strstr(super, "hugetlb"))
			pathf(v1, v1len, "%s", point);
	}
	if (f)
		fclose(f);
}

/*
 * Remove the test cgroups (hpshm-test.<pid>) of processes that are gone: a test that skipped
 * or crashed runs no .fini, and its cgroup stays until a later test, or the end of the suite
 * program, clears it.  One whose process still runs belongs to a test running now, here or in
 * another suite program, and is left alone; so is one the kernel still counts processes in.
 */
static void cgroup_sweep(const char *root)
{
	DIR *d = root[0] ? opendir(root) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char dir[1300], sub[1400], *end;
		long pid;
		DIR *dd;
		struct dirent *ee;

		if (strncmp(e->d_name, "hpshm-test.", 11) != 0)
			continue;
		pid = strtol(e->d_name + 11, &end, 10);
		if (*end != '\0' || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		pathf(dir, sizeof dir, "%s/%s", root, e->d_name);
		dd = opendir(dir);
		while (dd && (ee = readdir(dd)) != NULL) {
			if (ee->d_name[0] == '.' || ee->d_type != DT_DIR)
				continue;
			pathf(sub, sizeof sub, "%s/%s", dir, ee->d_name);
			(void)rmdir(sub);
		}
		if (dd)
			closedir(dd);
		(void)rmdir(dir);
	}
	if (d)
		closedir(d);
}

/*
 * The hugetlb controller bound to a v1 hierarchy that nothing mounts (a program mounted one,
 * left a cgroup in it and unmounted it: the hierarchy stays, and the v2 root no longer offers
 * the controller) is reached by mounting that hierarchy in the test's own mount namespace.
 * When the namespace goes, so does the mount, and the kernel then frees a hierarchy left with
 * no cgroup, which gives the controller back to v2.  0 with the mount point in dir, or -1.
 */
static int sandbox_v1_mount(char *dir, size_t len)
{
	char line[256], name[64];
	int hier = 0, enabled = 0;
	FILE *f = fopen("/proc/cgroups", "r");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%63s %d %*d %d", name, &hier, &enabled) == 3 && !strcmp(name, "hugetlb"))
			break;
	if (f)
		fclose(f);
	if (strcmp(name, "hugetlb") != 0 || hier == 0 || !enabled)
		return -1;
	pathf(dir, len, "/tmp/hpshm-test-cgroup.%ld", (long)getpid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if (mount("hpshm-test", dir, "cgroup", 0, "hugetlb") < 0) {
		(void)rmdir(dir);
		return -1;
	}
	return 0;
}

/*
 * Whether the v2 root hands hugetlb down is changed by every suite program: a test turns it on
 * if it is off, and the suite program that turned it on turns it off at its end when no test
 * cgroup is left.  Two suite programs side by side (CI's lanes) would race: one turns it off
 * between another's look at the root and the moment that one's own cgroup takes the
 * controller, which then fails, and the test runs without its sandbox.  A test holds the root
 * directory's lock shared from its look until its cgroup has the controller (after which the
 * kernel refuses to turn it off at the root: EBUSY); the end holds it exclusive.  -1 if the
 * lock cannot be had, which leaves things as they were without it.
 */
static int cgroup_root_lock(const char *root, int how)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && flock(fd, how) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void cgroup_root_unlock(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int sandbox_cgroup(void)
{
	char line[4096], v1[1024], v2[1024], path[1100];
	char self[1024] = "", procs[1200], pid[32];
	int lock = -1;
	FILE *f;

	cgroup_roots(v1, sizeof v1, v2, sizeof v2);
	if (!v2[0] && !v1[0] && sandbox_v1_mount(v1, sizeof v1) == 0)
		pathf(sandbox.v1_mount, sizeof sandbox.v1_mount, "%s", v1);
	cgroup_sweep(v2[0] ? v2 : v1);
	sandbox.cgroup_v2 = v2[0] != '\0';
	if (!v2[0] && !v1[0]) {
		pathf(sandbox.why, sizeof sandbox.why, "no cgroup hierarchy offers the hugetlb controller");
		return -1;
	}
	/* Where this process is now, to go back there after the test. */
	f = fopen("/proc/self/cgroup", "r");
	while (f && fgets(line, sizeof line, f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*c2 = '\0';
		if (sandbox.cgroup_v2 ? !strcmp(line, "0") : strstr(c1 + 1, "hugetlb") != NULL)
			pathf(self, sizeof self, "%s", c2 + 1);
	}
	if (f)
		fclose(f);
	pathf(sandbox.home, sizeof sandbox.home, "%s%s/cgroup.procs", sandbox.cgroup_v2 ? v2 : v1,
		 strcmp(self, "/") ? self : "");
	pathf(sandbox.cgroup, sizeof sandbox.cgroup, "%s/hpshm-test.%ld", sandbox.cgroup_v2 ? v2 : v1, (long)getpid());
	pathf(path, sizeof path, "%s/cgroup.subtree_control", v2);
	if (sandbox.cgroup_v2)
		lock = cgroup_root_lock(v2, LOCK_SH);
	if (sandbox.cgroup_v2 && !file_has_word(path, "hugetlb") && write_text(path, "+hugetlb\n") < 0) {
		pathf(sandbox.why, sizeof sandbox.why, "enabling hugetlb in %s: %s", path, strerror(errno));
		goto fail;
	}
	if (mkdir(sandbox.cgroup, 0755) < 0) {
		pathf(sandbox.why, sizeof sandbox.why, "mkdir %s: %s", sandbox.cgroup, strerror(errno));
		goto fail;
	}
	pathf(procs, sizeof procs, "%s/cgroup.procs", sandbox.cgroup);
	if (sandbox.cgroup_v2) {
		pathf(path, sizeof path, "%s/cgroup.subtree_control", sandbox.cgroup);
		pathf(procs, sizeof procs, "%s/test", sandbox.cgroup);
		if (write_text(path, "+hugetlb\n") < 0 || mkdir(procs, 0755) < 0) {
			pathf(sandbox.why, sizeof sandbox.why, "setting up %s: %s", sandbox.cgroup, strerror(errno));
			goto fail;
		}
		strncat(procs, "/cgroup.procs", sizeof procs - strlen(procs) - 1);
	}
	cgroup_root_unlock(&lock);
	pathf(pid, sizeof pid, "%ld\n", (long)getpid());
	sandbox.owner = (long)getpid();
	if (write_text(procs, pid) < 0) {
		pathf(sandbox.why, sizeof sandbox.why, "joining %s: %s", procs, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	cgroup_root_unlock(&lock);
	if (sandbox.cgroup[0]) {
		pathf(path, sizeof path, "%s/test", sandbox.cgroup);
		(void)rmdir(path);
		(void)rmdir(sandbox.cgroup);
	}
	sandbox.cgroup[0] = '\0';
	return -1;
}

/* Back to where the process came from, and the test's cgroups removed, deepest first. */
static void sandbox_cgroup_leave(void)
{
	char pid[32];

	if (!sandbox.cgroup[0] || sandbox.owner != (long)getpid())
		return;
	pathf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (write_text(sandbox.home, pid) < 0)
		fprintf(stderr, "[----] pool-leak fixture: could not go back to %s: %s\n", sandbox.home, strerror(errno));
	for (int tries = 0; tries < 40; tries++) {
		char sub[1100];
		DIR *d = opendir(sandbox.cgroup);
		struct dirent *e;

		while (d && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.' || e->d_type != DT_DIR)
				continue;
			pathf(sub, sizeof sub, "%s/%s", sandbox.cgroup, e->d_name);
			(void)rmdir(sub);
		}
		if (d)
			closedir(d);
		if (rmdir(sandbox.cgroup) == 0 || errno == ENOENT)
			break;
		usleep(50 * 1000); /* a process of the test still on its way out */
	}
	if (access(sandbox.cgroup, F_OK) == 0)
		fprintf(stderr, "[----] pool-leak fixture: could not remove %s (a process of the test still in it?)\n",
			sandbox.cgroup);
	if (sandbox.v1_mount[0] && umount2(sandbox.v1_mount, MNT_DETACH) == 0)
		(void)rmdir(sandbox.v1_mount);
	sandbox.cgroup[0] = '\0';
}

/*
 * The suite program (the runner, which starts a process per test) notes at its start whether
 * the v2 root already offered hugetlb to its children, and at its end removes the test cgroups
 * that skipped or crashed tests left, and turns the controller off again if the fixture turned
 * it on and no other suite's test cgroup is left.  Processes started below it (the tests, the
 * programs they exec) inherit the note and leave this to the runner.
 */
__attribute__((constructor)) static void fixture_runner_start(void)
{
	char v1[1024], v2[1024], path[1100], pid[32];

	if (getenv("HPSHM_TEST_RUNNER") || geteuid() != 0)
		return;
	cgroup_roots(v1, sizeof v1, v2, sizeof v2);
	pathf(path, sizeof path, "%s/cgroup.subtree_control", v2);
	pathf(pid, sizeof pid, "%ld", (long)getpid());
	setenv("HPSHM_TEST_RUNNER", pid, 1);
	setenv("HPSHM_TEST_HUGETLB_WAS_ON", v2[0] && file_has_word(path, "hugetlb") ? "1" : "0", 1);
}

__attribute__((destructor)) static void fixture_runner_end(void)
{
	const char *runner = getenv("HPSHM_TEST_RUNNER"), *was = getenv("HPSHM_TEST_HUGETLB_WAS_ON");
	char v1[1024], v2[1024], path[1100];
	DIR *d;
	struct dirent *e;
	int left = 0, lock;

	sandbox_cgroup_leave(); /* a test that ends with exit() after a skip */
	if (!runner || atol(runner) != (long)getpid())
		return;
	cgroup_roots(v1, sizeof v1, v2, sizeof v2);
	cgroup_sweep(v2[0] ? v2 : v1);
	if (!v2[0] || !was || strcmp(was, "0") != 0)
		return;
	lock = cgroup_root_lock(v2, LOCK_EX);
	d = opendir(v2);
	while (d && (e = readdir(d)) != NULL)
		left |= strncmp(e->d_name, "hpshm-test.", 11) == 0;
	if (d)
		closedir(d);
	pathf(path, sizeof path, "%s/cgroup.subtree_control", v2);
	if (!left)
		(void)write_text(path, "-hugetlb\n");
	cgroup_root_unlock(&lock);
}

static void sandbox_enter(void)
{
	static int told;

	memset(&sandbox, 0, sizeof sandbox);
	if (getenv("HPSHM_TEST_NO_SANDBOX"))
		pathf(sandbox.why, sizeof sandbox.why, "HPSHM_TEST_NO_SANDBOX is set");
	else if (geteuid() != 0)
		pathf(sandbox.why, sizeof sandbox.why, "not root: namespaces and cgroups need root");
	else if (sandbox_spaces() == 0)
		sandbox.spaces = 1;
	if (sandbox.spaces && sandbox_cgroup() < 0)
		sandbox.spaces = 0; /* both or neither: a count of the whole pool judges nothing well */
	if (!sandbox.spaces && !told++)
		fprintf(stderr, "[----] pool-leak fixture: %s; judging the whole machine's pools, SysV segments and "
			"hpshm's names in /dev/shm and hugetlbfs, so another program using them can fail a test\n",
			sandbox.why);
}

const char *hpt_test_cgroup(void)
{
	return sandbox.cgroup[0] ? sandbox.cgroup : NULL;
}

/* The name of a page size in hugetlb cgroup file names: "2MB", "1GB", "64KB". */
static const char *cgroup_size(size_t page_size, char *buf, size_t len)
{
	if (page_size >= ((size_t)1 << 30))
		pathf(buf, len, "%zuGB", page_size >> 30);
	else if (page_size >= ((size_t)1 << 20))
		pathf(buf, len, "%zuMB", page_size >> 20);
	else
		pathf(buf, len, "%zuKB", page_size >> 10);
	return buf;
}

int hpt_charge_read(size_t page_size, struct hpt_charge *out)
{
	char sz[16], path[1200];
	unsigned long long v;
	char text[64];

	memset(out, 0, sizeof *out);
	if (!sandbox.cgroup[0] || page_size == 0)
		return -1;
	cgroup_size(page_size, sz, sizeof sz);
	pathf(path, sizeof path, "%s/hugetlb.%s.%s", sandbox.cgroup, sz,
		 sandbox.cgroup_v2 ? "current" : "usage_in_bytes");
	if (read_text(path, text, sizeof text) < 0)
		return -1;
	v = strtoull(text, NULL, 10);
	out->faulted = (unsigned long)(v / page_size);
	/* Reservations are counted from Linux 5.10 on; before that only faults are. */
	pathf(path, sizeof path, "%s/hugetlb.%s.rsvd.%s", sandbox.cgroup, sz,
		 sandbox.cgroup_v2 ? "current" : "usage_in_bytes");
	if (read_text(path, text, sizeof text) == 0)
		out->reserved = (unsigned long)(strtoull(text, NULL, 10) / page_size);
	return 0;
}

int hpt_refuse_huge_pages(size_t page_size)
{
	char sz[16], dir[1300], path[1400];
	const char *limits[] = { "max", "rsvd.max", "limit_in_bytes", "rsvd.limit_in_bytes" };
	int set = 0;

	if (!sandbox.cgroup[0] || page_size == 0)
		return -1;
	cgroup_size(page_size, sz, sizeof sz);
	/* v2: the test's processes are in the "test" leaf; v1: in the cgroup itself. */
	pathf(dir, sizeof dir, "%s%s", sandbox.cgroup, sandbox.cgroup_v2 ? "/test" : "");
	for (unsigned i = sandbox.cgroup_v2 ? 0 : 2; i < (sandbox.cgroup_v2 ? 2u : 4u); i++) {
		pathf(path, sizeof path, "%s/hugetlb.%s.%s", dir, sz, limits[i]);
		if (write_text(path, "0\n") == 0)
			set++;
		else if (errno != ENOENT)
			cr_assert_fail("writing 0 to %s: %s", path, strerror(errno));
	}
	return set ? 0 : -1;
}

int hpt_limit_huge_faults(size_t page_size, const char *bytes)
{
	char sz[16], path[1400], text[64];

	if (!sandbox.cgroup[0] || page_size == 0)
		return -1;
	cgroup_size(page_size, sz, sizeof sz);
	/* v2: the test's processes are in the "test" leaf, whose "max" limits faults; v1: the
	 * cgroup itself, whose "limit_in_bytes" does. */
	pathf(path, sizeof path, "%s%s/hugetlb.%s.%s", sandbox.cgroup, sandbox.cgroup_v2 ? "/test" : "", sz,
	      sandbox.cgroup_v2 ? "max" : "limit_in_bytes");
	/* v1 takes -1 for no limit, v2 "max". */
	pathf(text, sizeof text, "%s\n", strcmp(bytes, "max") == 0 && !sandbox.cgroup_v2 ? "-1" : bytes);
	return write_text(path, text);
}

#endif /* __linux__ */

static void snap_pools(struct hpt_buf *b)
{
	static const char *const counters[] = {"nr_hugepages", "free_hugepages", "resv_hugepages",
					       "surplus_hugepages"};
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;
	char path[512], line[512];
	unsigned long v;
	size_t i;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "hugepages-", 10) != 0)
			continue;
		if (sandbox.cgroup[0]) {
			struct hpt_charge c;
			size_t ps = (size_t)strtoull(e->d_name + 10, NULL, 10) * 1024;

			/* The test's own pages: what its cgroup was charged and still is. */
			if (hpt_charge_read(ps, &c) == 0) {
				snprintf(line, sizeof line, "pool %s charged to the test: faulted=%lu reserved=%lu\n",
					 e->d_name, c.faulted, c.reserved);
				buf_add(b, line);
			}
			continue;
		}
		for (i = 0; i < sizeof counters / sizeof counters[0]; i++) {
			snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/%s/%s", e->d_name, counters[i]);
			if (read_ulong(path, &v) < 0)
				continue;
			snprintf(line, sizeof line, "pool %s %s=%lu\n", e->d_name, counters[i], v);
			buf_add(b, line);
		}
	}
	closedir(d);
}

static void snap_sysv(struct hpt_buf *b)
{
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	char line[1024], out[128];
	long key, id;

	if (!f)
		return;
	if (!fgets(line, sizeof line, f)) { /* header */
		fclose(f);
		return;
	}
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%ld %ld", &key, &id) == 2) {
			/* Without a namespace of its own, the test judges only the keys hpshm and its
			 * tests use: IPC_PRIVATE and hpshm's range of named keys (0x48xxxxxx). */
			if (!sandbox.spaces && key != 0 && ((unsigned long)key & 0xff000000ul) != 0x48000000ul)
				continue;
			snprintf(out, sizeof out, "sysv shmid=%ld key=%ld\n", id, key);
			buf_add(b, out);
		}
	}
	fclose(f);
}

/* Mount points of every hugetlbfs in /proc/self/mountinfo, with octal escapes decoded. */
static void snap_hugetlbfs(struct hpt_buf *b)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - ");
		char mnt[512], fstype[64], prefix[600];
		char *p, *q;
		int field = 0;

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "hugetlbfs") != 0)
			continue;
		/* field 5 (1-based) is the mount point */
		p = line;
		while (field < 4 && (p = strchr(p, ' ')) != NULL) {
			p++;
			field++;
		}
		if (!p)
			continue;
		q = mnt;
		while (*p && *p != ' ' && q < mnt + sizeof mnt - 1) {
			if (p[0] == '\\' && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
			    isdigit((unsigned char)p[3])) {
				*q++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
				p += 4;
			} else {
				*q++ = *p++;
			}
		}
		*q = '\0';
		snprintf(prefix, sizeof prefix, "hugetlbfs %s/", mnt);
		snap_dir(b, prefix, mnt);
	}
	free(line);
	fclose(f);
}

static void take_snapshot(struct hpt_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	buf_add(b, "");
	snap_pools(b);
	snap_sysv(b);
	snap_hugetlbfs(b);
	snap_dir(b, "/dev/shm/", "/dev/shm");
}
#endif

#ifndef __linux__
const char *hpt_test_cgroup(void)
{
	return NULL;
}

int hpt_refuse_huge_pages(size_t page_size)
{
	(void)page_size;
	return -1;
}

int hpt_charge_read(size_t page_size, struct hpt_charge *out)
{
	(void)page_size;
	memset(out, 0, sizeof *out);
	return -1;
}

int hpt_limit_huge_faults(size_t page_size, const char *bytes)
{
	(void)page_size;
	(void)bytes;
	return -1;
}
#endif

static struct hpt_buf snapshot_before;
static void (*skip_undo[8])(void);
static unsigned skip_undos;

void hpt_fixture_undo_on_skip(void (*undo)(void))
{
	for (unsigned i = 0; i < skip_undos; i++)
		if (skip_undo[i] == undo)
			return;
	if (skip_undos == sizeof(skip_undo) / sizeof(skip_undo[0]))
		cr_assert_fail("hpt_fixture_undo_on_skip: more than %u undo functions", skip_undos);
	skip_undo[skip_undos++] = undo;
}

void hpt_fixture_before_skip(void)
{
	while (skip_undos > 0)
		skip_undo[--skip_undos]();
}

void hpt_fixture_init(void)
{
	skip_undos = 0;
#if defined(__linux__)
	sandbox_enter();
#endif
	take_snapshot(&snapshot_before);
}

void hpt_fixture_fini(void)
{
	struct hpt_buf after = {0};

	/* Whatever a test injected, the library goes back to the real machine. */
#ifdef _WIN32
	hpshm__win_sys_reset();
#else
	hpshm__posix_sys_reset();
#endif
#ifdef __linux__
	hpshm__linux_sys_reset();
	hpshm__linux_set_sysroot(NULL);
#endif

	/*
	 * A child the test reaped has released its memory, but a process that outlives the test
	 * briefly (a sanitizer's helper, a grandchild on its way out) may still hold a segment
	 * for a moment.  Look again for up to two seconds before calling it a leak: what is
	 * still there then was left behind.
	 */
	take_snapshot(&after);
	for (int tries = 0; tries < 20 && strcmp(after.p, snapshot_before.p) != 0; tries++) {
#ifdef _WIN32
		Sleep(100);
#else
		struct timespec pause = { 0, 100 * 1000 * 1000 };

		nanosleep(&pause, NULL);
#endif
		free(after.p);
		memset(&after, 0, sizeof(after));
		take_snapshot(&after);
	}
#if defined(__linux__)
	sandbox_cgroup_leave();
#endif
	if (strcmp(after.p, snapshot_before.p) != 0) {
		cr_log_error("pool-leak fixture: the %s changed during the test\n"
			     "--- before\n%s--- after\n%s", sandbox.spaces ? "test's sandbox" : "machine",
			     snapshot_before.p, after.p);
		fflush(NULL);
		abort(); /* a failed cr_assert in .fini does not fail the test in Criterion 2.4.1 */
	}
	free(after.p);
	free(snapshot_before.p);
	snapshot_before.p = NULL;
	snapshot_before.len = snapshot_before.cap = 0;
}

#ifdef HPSHM_TEST_CRITERION
/*
 * Every suite program runs its tests one at a time (see fixture.h): the runner calls this
 * before it starts its first worker, and reads criterion_options.jobs only after.  Without it
 * Criterion 2.4.1 runs as many tests at once as there are processors.  The in-tree harness
 * always runs them one at a time.
 */
ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	if (criterion_options.jobs > 1)
		fprintf(stderr, "[----] hpshm tests run one at a time, not %zu: the pool-leak fixture compares "
			"machine-wide state before and after each test\n", criterion_options.jobs);
	criterion_options.jobs = 1;
}
#endif

/*
 * Parse "2MiB", "2MB", "2048k", "2M" as bytes (units of 1024); 0 if not a size, or if it is
 * more than size_t holds (a 1 TiB page on a 32-bit build), which no page of this process is.
 */
static size_t token_size(const char *s, size_t n)
{
	char buf[64], *end;
	unsigned long long v, mult = 1;

	if (n == 0 || n >= sizeof buf || !isdigit((unsigned char)s[0]))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtoull(buf, &end, 10);
	switch (tolower((unsigned char)*end)) {
	case 'k': mult = 1ULL << 10; end++; break;
	case 'm': mult = 1ULL << 20; end++; break;
	case 'g': mult = 1ULL << 30; end++; break;
	case 't': mult = 1ULL << 40; end++; break;
	default: break;
	}
	if (tolower((unsigned char)*end) == 'i')
		end++;
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end != '\0' || v > SIZE_MAX / mult)
		return 0;
	return (size_t)(v * mult);
}

/*
 * One item of HPSHM_TEST_REQUIRE, p[0..n): its text without the page count in *name_len, and
 * the count after '*' in *count (-1 when there is none).
 */
static void require_item(const char *p, size_t n, size_t *name_len, long *count)
{
	const char *star = memchr(p, '*', n);
	char digits[32], *end;
	size_t dn;

	*name_len = n;
	*count = -1;
	if (!star)
		return;
	*name_len = (size_t)(star - p);
	dn = n - *name_len - 1;
	if (!token_size(p, *name_len))
		cr_assert_fail("HPSHM_TEST_REQUIRE item \"%.*s\": only a page size takes a page count, as in 1GiB*2",
			       (int)n, p);
	if (dn == 0 || dn >= sizeof digits || !isdigit((unsigned char)star[1]))
		cr_assert_fail("HPSHM_TEST_REQUIRE item \"%.*s\": the page count after '*' must be a number, "
			       "as in 1GiB*2", (int)n, p);
	memcpy(digits, star + 1, dn);
	digits[dn] = '\0';
	errno = 0;
	*count = strtol(digits, &end, 10);
	if (*end != '\0' || errno)
		cr_assert_fail("HPSHM_TEST_REQUIRE item \"%.*s\": the page count after '*' must be a number, "
			       "as in 1GiB*2", (int)n, p);
}

/*
 * Walk the list: is tok named (or "all")?  When tok is a page size that the list gives a page
 * count, *count is the smallest such count; it is left alone otherwise.
 */
static int required_one(const char *list, const char *tok, long *count)
{
	const char *p = list;
	size_t tn = strlen(tok), tsize = token_size(tok, tn);
	int named = 0;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p), name_len;
		long c;

		while (n && isspace((unsigned char)*p)) {
			p++;
			n--;
		}
		while (n && isspace((unsigned char)p[n - 1]))
			n--;
		require_item(p, n, &name_len, &c);
		if ((name_len == 3 && !strncasecmp(p, "all", 3)) || (name_len == tn && !strncasecmp(p, tok, tn)))
			named = 1;
		if (tsize && token_size(p, name_len) == tsize) {
			named = 1;
			if (c >= 0 && (*count < 0 || c < *count))
				*count = c;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return named;
}

int hpt_required_pages(const char *a, const char *b, unsigned long pages)
{
	const char *list = getenv("HPSHM_TEST_REQUIRE");
	long count = -1;
	int named;

	if (!list || !*list)
		return 0;
	named = a ? required_one(list, a, &count) : 0;
	named |= b ? required_one(list, b, &count) : 0;
	if (count >= 0 && pages > (unsigned long)count) {
		cr_log_info("not required: HPSHM_TEST_REQUIRE=%s guarantees %ld page%s of this size, the test needs %lu",
			    list, count, count == 1 ? "" : "s", pages);
		return 0;
	}
	return named;
}

int hpt_required(const char *a, const char *b)
{
	return hpt_required_pages(a, b, 1);
}

unsigned long hpt_pages(size_t size, size_t page_size)
{
	return page_size ? (unsigned long)(size / page_size + (size % page_size != 0)) : 0;
}

const char *hpt_test_hugetlbfs(size_t page_size)
{
	const char *mnt = getenv("HPSHM_TEST_HUGETLBFS");
#ifdef __linux__
	struct statfs sfs;
#endif

	if (!mnt || !*mnt)
		return NULL;
#ifdef __linux__
	if (statfs(mnt, &sfs) == 0 && (uint32_t)sfs.f_type == (uint32_t)HUGETLBFS_MAGIC &&
	    (size_t)sfs.f_bsize != page_size)
		return NULL;
#else
	(void)page_size;
#endif
	return mnt;
}

const char *hpt_emulator(void)
{
	const char *e = getenv("HPSHM_TEST_EMULATOR");

	return e && e[0] ? e : NULL;
}

void hpt_skip_emulated_refusal(int rc, const hpshm_error *err)
{
	const char *emu = hpt_emulator();

	if (!emu || rc >= 0 || !err)
		return;
	if (strcmp(err->call, "verify") == 0)
		HPT_SKIP("under %s huge pages cannot be verified (the smaps it passes through is the host's): "
			 "hpshm refused them cleanly: %s", emu, err->message);
	if (err->sys_errno == EINVAL || rc == HPSHM_EEXIST || rc == HPSHM_EVALUE)
		HPT_SKIP("under %s the mapping or attach at that address was refused (%s), as the kernel would "
			 "not: %s", emu, hpshm_errname(rc), err->message);
	/* qemu-user places guest mappings in a host range of its own, and finds none for a large
	 * span on a large grid (2 GiB on the 1 GiB grid) where the kernel would. */
	if (err->sys_errno == ENOMEM)
		HPT_SKIP("under %s the mapping was refused for want of address space (ENOMEM), where the "
			 "kernel would have given it: %s", emu, err->message);
}

const char *hpt_emulator_refuses_sysv_hugetlb(size_t page_size)
{
#ifdef __linux__
	static char why[320];
	size_t seen;
	int id, e;
	void *p;

	if (!hpt_emulator() || page_size == 0)
		return NULL;
	id = shmget(IPC_PRIVATE, page_size, IPC_CREAT | IPC_EXCL | SHM_HUGETLB | 0600);
	if (id < 0)
		return NULL; /* no page to try with: the test says what it needs */
	p = shmat(id, NULL, SHM_RDONLY);
	e = errno;
	seen = p != (void *)-1 ? hpt_smaps_page_size(p, NULL) : 0;
	if (p != (void *)-1)
		(void)shmdt(p);
	(void)shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1) {
		snprintf(why, sizeof why, "under %s a SysV segment of huge pages cannot be attached anywhere (shmat: "
			 "%s), where the kernel attaches it", hpt_emulator(), strerror(e));
		return why;
	}
	/* Attached, but the smaps the emulator passes through is its own (qemu-i386 runs the guest
	 * at an offset): the segment shows base pages there, and nothing can verify it. */
	if (seen != page_size) {
		snprintf(why, sizeof why, "under %s a SysV segment of huge pages shows %zu-byte pages in "
			 "/proc/self/smaps (the emulator's view), so neither hpshm nor the test can verify it",
			 hpt_emulator(), seen);
		return why;
	}
	return NULL;
#else
	(void)page_size;
	return NULL;
#endif
}

#ifndef _WIN32
/* Does /proc/self/maps show anything in [lo, hi)?  Unreadable maps show nothing. */
static int maps_show(uintptr_t lo, uintptr_t hi, uintptr_t *next_free)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int hit = 0;

	*next_free = hi;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long a, z;

		if (sscanf(line, "%lx-%lx", &a, &z) != 2 || z <= lo || a >= hi)
			continue;
		hit = 1;
		if ((uintptr_t)z > *next_free || *next_free == hi)
			*next_free = (uintptr_t)z;
	}
	if (f)
		fclose(f);
	return hit;
}

uintptr_t hpt_free_address(size_t len, size_t align)
{
	void *p = mmap(NULL, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a, next;

	cr_assert_neq(p, MAP_FAILED, "mmap of %zu bytes: %s", len + align, strerror(errno));
	a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	cr_assert_eq(munmap(p, len + align), 0);
	if (!maps_show(a, a + len, &next))
		return a;
	/* The system's choice lies inside a range the maps show taken: walk up from 256 MiB,
	 * past each mapping in the way, to the first aligned gap that holds len. */
	for (a = (uintptr_t)256 << 20; a <= UINTPTR_MAX - len - align;) {
		a = (a + align - 1) & ~(uintptr_t)(align - 1);
		if (!maps_show(a, a + len, &next))
			return a;
		a = next;
	}
	cr_assert_fail("no %zu free bytes aligned to %zu in this address space", len, align);
	return 0;
}

uintptr_t hpt_sysv_address(size_t len, size_t align)
{
#ifdef __linux__
	int id = shmget(IPC_PRIVATE, len + align, IPC_CREAT | IPC_EXCL | 0600);
	void *p;

	cr_assert_geq(id, 0, "shmget of %zu bytes to find an address: %s", len + align, strerror(errno));
	p = shmat(id, NULL, 0);
	(void)shmctl(id, IPC_RMID, NULL);
	cr_assert_neq(p, (void *)-1, "shmat to find an address: %s", strerror(errno));
	cr_assert_eq(shmdt(p), 0);
	return ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
#else
	return hpt_free_address(len, align);
#endif
}

pid_t hpt_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* A test that dies (a failed assert, a timeout) takes its children with it; if it
		 * died before the signal was set, this child is already an orphan and goes too. */
#ifdef __linux__
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
		if (getppid() != parent)
			_exit(127);
	}
	return pid;
}

void hpt_crashed_creator(const hpshm_config *cfg, size_t size, const char *what)
{
	int fds[2], status;
	pid_t pid;
	char c;

	cr_assert_eq(pipe(fds), 0);
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_segment *seg;
		hpshm_error err;

		close(fds[0]);
		if (hpshm_segment_create(&seg, size, cfg, &err) != 0 || write(fds[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &c, 1), 1, "the creator could not create its %s", what);
	close(fds[0]);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
}
#endif

int hpt_pool_read(size_t page_size, struct hpt_pool *out)
{
	char dir[128], path[256];

	memset(out, 0, sizeof *out);
	snprintf(dir, sizeof dir, "/sys/kernel/mm/hugepages/hugepages-%zukB", page_size / 1024);
	out->page_size = page_size;
	snprintf(path, sizeof path, "%s/nr_hugepages", dir);
	if (read_ulong(path, &out->total) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/free_hugepages", dir);
	(void)read_ulong(path, &out->free);
	snprintf(path, sizeof path, "%s/resv_hugepages", dir);
	(void)read_ulong(path, &out->resv);
	snprintf(path, sizeof path, "%s/surplus_hugepages", dir);
	(void)read_ulong(path, &out->surplus);
	snprintf(path, sizeof path, "%s/nr_overcommit_hugepages", dir);
	(void)read_ulong(path, &out->overcommit);
	return 0;
}

long hpt_pages_held(size_t page_size)
{
	struct hpt_charge c;
	struct hpt_pool p;

	if (hpt_charge_read(page_size, &c) == 0)
		return (long)(c.faulted + c.reserved);
	cr_assert_eq(hpt_pool_read(page_size, &p), 0, "no pool of %zu-byte pages to read", page_size);
	return (long)(p.total - p.free + p.resv);
}

unsigned long hpt_pool_available(const struct hpt_pool *p)
{
	unsigned long avail = p->free > p->resv ? p->free - p->resv : 0;

	if (p->overcommit > p->surplus)
		avail += p->overcommit - p->surplus;
	return avail;
}

#ifndef _WIN32
int hpt_pool_knobs_lock(void)
{
	const char *path = access("/run/lock", W_OK) == 0 ? "/run/lock/hpshm-tests-pool-knobs.lock"
							     : "/tmp/hpshm-tests-pool-knobs.lock";
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0, "the lock of the pool's knobs, %s: %s", path, strerror(errno));
	while (flock(fd, LOCK_EX) < 0)
		cr_assert_eq(errno, EINTR, "flock(%s): %s", path, strerror(errno));
	return fd;
}

void hpt_pool_knobs_unlock(int fd)
{
	close(fd); /* and the lock with it */
}
#endif

#ifdef _WIN32
/*
 * Windows has one large page size and no /proc: the readers ask the system.  A page's size
 * comes from QueryWorkingSetEx() (its LargePage bit), the way ports/windows/memory.c verifies,
 * but called here directly so the test does not take the library's word.
 */
size_t hpt_default_huge_page_size(void)
{
	return GetLargePageMinimum();
}

size_t hpt_smaps_page_size(const void *addr, int *hugetlb)
{
	PSAPI_WORKING_SET_EX_INFORMATION ws;
	MEMORY_BASIC_INFORMATION mbi;
	SYSTEM_INFO si;

	if (hugetlb)
		*hugetlb = 0;
	if (VirtualQuery(addr, &mbi, sizeof mbi) != sizeof mbi || mbi.State != MEM_COMMIT)
		return 0;
	memset(&ws, 0, sizeof ws);
	ws.VirtualAddress = (void *)(uintptr_t)addr;
	if (!QueryWorkingSetEx(GetCurrentProcess(), &ws, sizeof ws) || !ws.VirtualAttributes.Valid) {
		GetSystemInfo(&si);
		return si.dwPageSize; /* not in the working set: a page of the default size, untouched */
	}
	if (ws.VirtualAttributes.LargePage) {
		if (hugetlb)
			*hugetlb = 1;
		return GetLargePageMinimum();
	}
	GetSystemInfo(&si);
	return si.dwPageSize;
}

int hpt_is_mapped(const void *addr, size_t len)
{
	MEMORY_BASIC_INFORMATION mbi;
	uintptr_t at = (uintptr_t)addr, end = at + len;

	while (at < end) {
		if (VirtualQuery((const void *)at, &mbi, sizeof mbi) != sizeof mbi)
			return -1;
		if (mbi.State != MEM_FREE)
			return 1;
		at = (uintptr_t)mbi.BaseAddress + mbi.RegionSize;
	}
	return 0;
}

int hpt_fd_count(void)
{
	DWORD n = 0;

	/* Windows counts handles, not descriptors: what a test compares before and after. */
	return GetProcessHandleCount(GetCurrentProcess(), &n) ? (int)n : -1;
}

int hpt_maps_count(void)
{
	return -1; /* Windows lists no mappings by the object behind them */
}
#else
size_t hpt_default_huge_page_size(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return (size_t)kb * 1024;
}

size_t hpt_smaps_page_size(const void *addr, int *hugetlb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char *line = NULL;
	size_t cap = 0, result = 0;
	uintptr_t a = (uintptr_t)addr;
	int inside = 0, done = 0;

	if (hugetlb)
		*hugetlb = 0;
	if (!f)
		return 0;
	while (!done && getline(&line, &cap, f) > 0) {
		unsigned long lo, hi, kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (inside)
				done = 1;
			inside = a >= lo && a < hi;
			continue;
		}
		if (!inside)
			continue;
		if (sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			result = (size_t)kb * 1024;
		else if (!strncmp(line, "VmFlags:", 8) && hugetlb)
			*hugetlb = strstr(line, " ht") != NULL;
	}
	free(line);
	fclose(f);
	return result;
}

int hpt_is_mapped(const void *addr, size_t len)
{
	/*
	 * mincore() page by page: it fails with ENOMEM for a page nothing maps.  Nothing is
	 * allocated here on purpose.  Reading /proc/self/maps through stdio would allocate its
	 * buffer, and a C library whose malloc takes fresh pages from mmap() for it (musl) can be
	 * handed the very range that was just unmapped: the check would then find its own buffer
	 * there and report a leak that is not one.
	 */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(page - 1), z = (uintptr_t)addr + len;
	unsigned char vec[1];

	for (; a < z; a += page) {
		/* vec is char * on FreeBSD and macOS, unsigned char * elsewhere: pass it untyped. */
		if (mincore((void *)a, page, (void *)vec) == 0)
			return 1;
		if (errno != ENOMEM)
			return -1;
	}
	return 0;
}

int hpt_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the descriptor opendir itself holds */
}

int hpt_maps_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int n = 0;

	if (!f)
		return -1;
	/*
	 * Only mappings of an object count: every segment hpshm makes has a name in maps
	 * (/memfd:..., /SYSV..., a hugetlbfs path, /dev/shm/..., /anon_hugepage, /dev/zero for
	 * shared anonymous memory).  Private anonymous mappings have none, and an allocator (a
	 * sanitizer's above all) makes and drops those at any time.
	 */
	while (fgets(line, sizeof line, f)) {
		char *path = NULL;
		int field = 0;

		if (!strchr(line, '\n'))
			continue;
		for (char *p = line; *p && field < 5; p++)
			if (*p == ' ' && p[1] != ' ')
				if (++field == 5)
					path = p + 1;
		while (path && *path == ' ')
			path++;
		if (path && *path && *path != '\n' && *path != '[')
			n++;
	}
	fclose(f);
	return n;
}

#endif

const char *hpt_size_text(size_t size, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;

	while (u < 4 && size >= 1024 && size % 1024 == 0) {
		size /= 1024;
		u++;
	}
	snprintf(buf, len, "%zu%s", size, units[u]);
	return buf;
}

int hpt_contains(const char *haystack, const char *needle)
{
	size_t n;

	if (!haystack || !needle)
		return 0;
	n = strlen(needle);
	for (; *haystack; haystack++)
		if (strncasecmp(haystack, needle, n) == 0)
			return 1;
	return n == 0;
}

void hpt_clear_config_env(void)
{
	const char *key;
	unsigned i;

	for (i = 0; (key = hpshm_config_key_name(i, NULL, NULL)) != NULL; i++) {
		char var[96];
		size_t j;

		snprintf(var, sizeof var, "HPSHM_%s", key);
		for (j = 0; var[j]; j++)
			var[j] = (char)toupper((unsigned char)var[j]);
#ifdef _WIN32
		(void)_putenv_s(var, "");
#else
		unsetenv(var);
#endif
	}
}

void hpt_config_parsef(hpshm_config *cfg, const char *fmt, ...)
{
	char kv[320];
	hpshm_error err;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(kv, sizeof kv, fmt, ap);
	va_end(ap);
	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

hpshm_error hpt_create_fails(const hpshm_config *cfg, size_t size, hpshm_report *r)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	memset(r, 0, sizeof *r);
	rc = hpshm_segment_create_ex(&seg, size, cfg, r, &err);
	cr_assert_lt(rc, 0, "the create succeeded");
	cr_assert_null(seg);
	cr_assert_eq(err.code, rc, "the error says %s, the call returned %s", hpshm_errname(err.code), hpshm_errname(rc));
	cr_assert_geq(r->nattempts, 1u);
	return err;
}
