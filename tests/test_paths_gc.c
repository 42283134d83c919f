/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_gc.c -- the races of remove: what gc does when the object it listed as dead
 * changes between its look and its removal (it vanished, a process holds it again, its name
 * now holds another object), and when it may not open or unlink it.
 *
 * The dead object is real: a named plain segment in /dev/shm whose creator was killed.  The
 * provider's scan() finds it as gc does; then remove() is called with one system call of the
 * table replaced by a hook that makes the race happen for real at that instant (unlinks the
 * object, opens and locks it, puts another object under its name, gives it to another user)
 * or fails with EACCES/EPERM.  One test swaps the dead object's name with a live segment's
 * (renameat2(RENAME_EXCHANGE)) before the first system call remove() makes, then before the
 * second, and so on to its last: at no step may the live one lose its name.
 *
 * remove()'s own steps fail too (paths_gc_steps): the directory of the objects cannot be
 * opened, its private directory cannot be made, its names are taken, it is swapped for one
 * others may enter, the moved object cannot be unlinked, the name is taken again before the
 * object can be given back.  Each test checks what stays: the segment under its name, or the
 * other object beside it as "<name>.kept-*", and no private directory of remove()'s left.
 * And opening a segment by name (paths_open) when the object cannot be opened says why.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "harness.h"

#include "core/internal.h"
#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "ports/posix/sys.h"

#define MIB ((size_t)1 << 20)

static struct hpshm__syscalls real;
static char shm_name[64];        /* the segment's name */
static char shm_path[96];        /* its POSIX name, "/hpshm.<name>" */
static char live_path[112];      /* a live segment's, "/hpshm.<name>-live" (one test) */
static int  holder = -1;         /* a descriptor the test holds the object by */

static enum {
	RACE_NONE,
	RACE_VANISH,      /* the object is unlinked just before remove() opens it */
	RACE_HOLD,        /* a process opens and locks it just before remove() locks it */
	RACE_RECYCLE,     /* another object takes its name just before remove() opens it */
	RACE_EACCES,      /* remove() may not open it */
	RACE_EPERM,       /* remove() may not take its name away */
	RACE_CHOWN        /* it becomes another user's just before remove() opens it */
} race;

static int hook_shm_open(const char *name, int flags, mode_t mode)
{
	if (strcmp(name, shm_path) == 0) {
		switch (race) {
		case RACE_VANISH:
			(void)real.shm_unlink(name);
			break;
		case RACE_RECYCLE: {
			int fd;

			(void)real.shm_unlink(name);
			fd = real.shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
			if (fd >= 0) {
				(void)ftruncate(fd, (off_t)(4 * MIB + 4096));
				(void)close(fd);
			}
			break;
		}
		case RACE_EACCES:
			errno = EACCES;
			return -1;
		case RACE_CHOWN: {
			char file[128];

			snprintf(file, sizeof file, "/dev/shm%s", name);
			(void)chown(file, 65534, 65534);
			break;
		}
		default:
			break;
		}
		race = race == RACE_HOLD || race == RACE_EPERM ? race : RACE_NONE;
	}
	return real.shm_open(name, flags, mode);
}

static int hook_flock(int fd, int op)
{
	if (race == RACE_HOLD && (op & LOCK_EX)) {
		holder = real.shm_open(shm_path, O_RDONLY, 0);
		if (holder >= 0)
			(void)real.flock(holder, LOCK_SH | LOCK_NB);
		race = RACE_NONE;
	}
	return real.flock(fd, op);
}

/* remove() takes the name away with renameat() from the directory of the shm objects. */
static int hook_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	if (race == RACE_EPERM && strcmp(oldpath, shm_path + 1) == 0) {
		race = RACE_NONE;
		errno = EPERM;
		return -1;
	}
	return real.renameat(olddirfd, oldpath, newdirfd, newpath);
}

static void gc_init(void)
{
	hpt_fixture_init();
	hpshm__posix_sys_reset();
	real = hpshm__posix_sys;
	race = RACE_NONE;
	holder = -1;
	snprintf(shm_name, sizeof shm_name, "hpt-paths-gc-%ld", (long)getpid());
	snprintf(shm_path, sizeof shm_path, "/hpshm.%s", shm_name);
}

static void gc_fini(void)
{
	hpshm__posix_sys_reset();
	if (holder >= 0)
		(void)close(holder);
	(void)shm_unlink(shm_path);
	if (live_path[0])
		(void)shm_unlink(live_path);
	hpt_fixture_fini();
}

TestSuite(paths_gc, .init = gc_init, .fini = gc_fini, .timeout = 60);

/* Make the named plain segment in a child and kill the child: a dead object. */
static void make_dead_segment(void)
{
	hpshm_config *cfg;
	hpshm_error err;
	char kv[128];

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(kv, sizeof kv, "provider=plain,name=%s", shm_name);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	hpt_crashed_creator(cfg, 4 * MIB, "segment");
	hpshm_config_free(cfg);
}

struct look {
	struct hpshm_found found;  /* the object as the scan saw it */
	int                hit;    /* seen? */
};

static int look_one(void *user, const struct hpshm_found *f)
{
	struct look *l = user;

	if (strcmp(f->name, shm_name) == 0) {
		l->found = *f;
		l->hit = 1;
	}
	return 0;
}

/* The dead object as plain's scan() lists it, and plain's instance. */
static struct look listed(struct hpshm_instance *inst)
{
	struct look l;

	memset(&l, 0, sizeof l);
	cr_assert_eq(hpshm__provider_find("plain", inst), 0);
	cr_assert_geq(inst->ops->scan(inst, look_one, &l), 0);
	cr_assert(l.hit, "plain's scan did not list %s", shm_name);
	cr_assert_eq(l.found.has_header, HPSHM_FOUND_HEADER);
	cr_assert_eq(l.found.alive, 0, "nobody should hold the dead segment");
	return l;
}

static int remove_during(int what, struct hpshm_instance *inst, const struct look *l, hpshm_error *err)
{
	memset(err, 0, sizeof *err);
	race = what;
	hpshm__posix_sys.shm_open = hook_shm_open;
	hpshm__posix_sys.flock = hook_flock;
	hpshm__posix_sys.renameat = hook_renameat;
	return inst->ops->remove(inst, &l->found, err);
}

static int exists(void)
{
	char path[128];

	snprintf(path, sizeof path, "/dev/shm%s", shm_path);
	return access(path, F_OK) == 0;
}

Test(paths_gc, remove_of_a_segment_that_vanished_meanwhile_is_done)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	cr_assert_eq(remove_during(RACE_VANISH, &inst, &l, &err), 0, "%s", err.message);
	cr_assert(!exists());
}

Test(paths_gc, remove_of_a_segment_held_again_is_eexist_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	cr_assert_eq(remove_during(RACE_HOLD, &inst, &l, &err), HPSHM_EEXIST, "%s", err.message);
	cr_assert_geq(holder, 0, "the hook could not hold the segment");
	cr_assert_str_eq(err.call, "flock");
	cr_assert(exists(), "a segment that a process holds was removed");
	/* let go, and the same removal goes through */
	close(holder);
	holder = -1;
	cr_assert_eq(remove_during(RACE_NONE, &inst, &l, &err), 0, "%s", err.message);
	cr_assert(!exists());
}

Test(paths_gc, remove_of_a_name_that_now_holds_another_object_is_einval_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	cr_assert_eq(remove_during(RACE_RECYCLE, &inst, &l, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "no longer"), "%s", err.message);
	cr_assert(exists(), "the object that took the name was removed");
}

Test(paths_gc, remove_that_may_not_open_the_segment_is_esys_eacces_with_a_hint)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	cr_assert_eq(remove_during(RACE_EACCES, &inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert_str_eq(err.call, "shm_open");
	cr_assert(hpt_contains(err.hint, "gc as"), "hint: %s", err.hint);
	cr_assert(exists());
}

Test(paths_gc, remove_that_may_not_unlink_the_segment_is_esys_eperm_with_a_hint)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	cr_assert_eq(remove_during(RACE_EPERM, &inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert_str_eq(err.call, "renameat");
	cr_assert(hpt_contains(err.hint, "gc as"), "hint: %s", err.hint);
	cr_assert(exists(), "the rename failed, yet the object is gone");
}

Test(paths_gc, remove_through_the_api_refuses_an_object_that_vanished_after_ls)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_object o;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	memset(&o, 0, sizeof o);
	snprintf(o.provider, sizeof o.provider, "plain");
	snprintf(o.id, sizeof o.id, "%s", l.found.id);
	cr_assert_eq(shm_unlink(shm_path), 0);
	cr_assert_eq(hpshm_objects_remove(&o, 0, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "gone"), "%s", err.message);
}

/* ---- debris that became another user's ---- */

Test(paths_gc, remove_of_own_debris_that_another_user_now_owns_is_einval_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;
	char file[128];
	int fd;

	if (geteuid() != 0)
		HPT_UNAVAILABLE("root", NULL, "giving a file to another user needs root");
	/* A headerless object of this user's: debris, which a forced remove may take as its own. */
	fd = shm_open(shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0, "shm_open %s: %s", shm_path, strerror(errno));
	cr_assert_eq(ftruncate(fd, 65536), 0);
	close(fd);
	memset(&l, 0, sizeof l);
	cr_assert_eq(hpshm__provider_find("plain", &inst), 0);
	cr_assert_geq(inst.ops->scan(&inst, look_one, &l), 0);
	cr_assert(l.hit, "plain's scan did not list %s", shm_name);
	cr_assert_eq(l.found.has_header, HPSHM_FOUND_BARE);
	cr_assert_eq(l.found.mine, 1, "this user's file is not listed as its own");
	snprintf(file, sizeof file, "/dev/shm%s", shm_path);
	cr_assert_eq(remove_during(RACE_CHOWN, &inst, &l, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "no longer"), "%s", err.message);
	cr_assert(exists(), "debris that became another user's was removed as this user's");
}

/* ---- a live segment's name swapped in at every step of remove() ---- */

static long swap_step;            /* remove()'s system calls so far */
static long swap_at;              /* the one before which the names are swapped */

/* renameat2(RENAME_EXCHANGE) of the two objects' files, by the system call (not every C library wraps it). */
static int swap_names(void)
{
	char a[128], b[128];

	snprintf(a, sizeof a, "/dev/shm%s", shm_path);
	snprintf(b, sizeof b, "/dev/shm%s", live_path);
#ifdef SYS_renameat2
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */);
#else
	errno = ENOSYS;
	return -1;
#endif
}

static void step(void)
{
	if (++swap_step == swap_at)
		(void)swap_names();
}

/* Every call remove() may make: counted, and the names swapped before the swap_at-th. */
static int st_shm_open(const char *n, int f, mode_t m) { step(); return real.shm_open(n, f, m); }
static int st_shm_unlink(const char *n) { step(); return real.shm_unlink(n); }
static int st_open(const char *p, int f, mode_t m) { step(); return real.open(p, f, m); }
static int st_openat(int d, const char *p, int f, mode_t m) { step(); return real.openat(d, p, f, m); }
static int st_close(int fd) { step(); return real.close(fd); }
static int st_fstat(int fd, struct stat *b) { step(); return real.fstat(fd, b); }
static int st_fstatat(int d, const char *p, struct stat *b, int f) { step(); return real.fstatat(d, p, b, f); }
static int st_flock(int fd, int op) { step(); return real.flock(fd, op); }
static ssize_t st_pread(int fd, void *b, size_t n, off_t o) { step(); return real.pread(fd, b, n, o); }
static int st_fcntl(int fd, int c, int a) { step(); return real.fcntl(fd, c, a); }
static int st_fchmod(int fd, mode_t m) { step(); return real.fchmod(fd, m); }
static int st_mkdirat(int d, const char *p, mode_t m) { step(); return real.mkdirat(d, p, m); }
static int st_renameat(int a, const char *p, int b, const char *q) { step(); return real.renameat(a, p, b, q); }
static int st_unlinkat(int d, const char *p, int f) { step(); return real.unlinkat(d, p, f); }
static int st_unlink(const char *p) { step(); return real.unlink(p); }
static int st_linkat(int a, const char *p, int b, const char *q, int f) { step(); return real.linkat(a, p, b, q, f); }

static void steps_on(void)
{
	hpshm__posix_sys.shm_open = st_shm_open;
	hpshm__posix_sys.shm_unlink = st_shm_unlink;
	hpshm__posix_sys.open = st_open;
	hpshm__posix_sys.openat = st_openat;
	hpshm__posix_sys.close = st_close;
	hpshm__posix_sys.fstat = st_fstat;
	hpshm__posix_sys.fstatat = st_fstatat;
	hpshm__posix_sys.flock = st_flock;
	hpshm__posix_sys.pread = st_pread;
	hpshm__posix_sys.fcntl = st_fcntl;
	hpshm__posix_sys.fchmod = st_fchmod;
	hpshm__posix_sys.mkdirat = st_mkdirat;
	hpshm__posix_sys.renameat = st_renameat;
	hpshm__posix_sys.unlinkat = st_unlinkat;
	hpshm__posix_sys.unlink = st_unlink;
	hpshm__posix_sys.linkat = st_linkat;
}

/* The inode a /dev/shm name holds now, or 0. */
static ino_t ino_of(const char *shm)
{
	char file[128];
	struct stat st;

	snprintf(file, sizeof file, "/dev/shm%s", shm);
	return lstat(file, &st) == 0 ? st.st_ino : 0;
}

/* remove()'s private directories of this process left in /dev/shm. */
static int private_dirs(void)
{
	char pat[64];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	int n = 0;

	cr_assert_not_null(d);
	snprintf(pat, sizeof pat, ".hpshm-gc-%ld-", (long)getpid());
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, pat, strlen(pat)) == 0)
			n++;
	closedir(d);
	return n;
}

Test(paths_gc, a_live_segments_name_swapped_in_at_any_step_of_remove_is_never_removed)
{
	struct hpshm_instance inst;
	hpshm_segment *live = NULL;
	hpshm_config *cfg;
	hpshm_error err;
	struct stat ls, st;
	char kv[128], file[128];
	int watch, rc, removed = 0, kept = 0;
	long k;

	snprintf(live_path, sizeof live_path, "%s-live", shm_path);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(kv, sizeof kv, "provider=plain,name=%s-live", shm_name);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&live, 4 * MIB, cfg, &err), 0, "%s", err.message);
	hpshm_config_free(cfg);
	snprintf(file, sizeof file, "/dev/shm%s", live_path);
	watch = open(file, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(watch, 0, "%s: %s", file, strerror(errno));
	cr_assert_eq(fstat(watch, &ls), 0);
	make_dead_segment();
	if (swap_names() < 0) {
		int e = errno;

		close(watch);
		hpshm_segment_destroy(live);
		HPT_UNAVAILABLE("renameat2", NULL, "renameat2(RENAME_EXCHANGE) in /dev/shm: %s", strerror(e));
	}
	cr_assert_eq(swap_names(), 0);

	for (k = 1;; k++) {
		struct look l;

		/* The live one under its name, a dead one under the other. */
		if (ino_of(live_path) != ls.st_ino)
			cr_assert_eq(swap_names(), 0, "swap back: %s", strerror(errno));
		if (ino_of(shm_path) == 0)
			make_dead_segment();
		l = listed(&inst);
		swap_step = 0;
		swap_at = k;
		memset(&err, 0, sizeof err);
		steps_on();
		rc = inst.ops->remove(&inst, &l.found, &err);
		hpshm__posix_sys = real;
		cr_assert(rc == 0 || rc == HPSHM_EINVAL || rc == HPSHM_EEXIST, "names swapped before step %ld: %s: %s", k,
			  hpshm_errname(rc), err.message);
		cr_assert(fstat(watch, &st) == 0 && st.st_nlink == 1,
			  "names swapped before step %ld of remove(): the live segment lost its name (%s)", k,
			  rc == 0 ? "removed" : err.message);
		cr_assert(ino_of(live_path) == ls.st_ino || ino_of(shm_path) == ls.st_ino,
			  "names swapped before step %ld: the live segment is under neither name", k);
		cr_assert_eq(private_dirs(), 0, "names swapped before step %ld: remove() left its private directory", k);
		if (rc == 0)
			removed++;
		else
			kept++;
		if (swap_step < k)
			break; /* remove() made fewer calls: every step has had its swap */
	}
	close(watch);
	cr_assert_eq(hpshm_segment_destroy(live), 0);
	cr_log_info("names swapped before each of remove()'s %ld system calls: the dead one removed %d times, refused "
		    "%d times, the live one never lost", k - 1, removed, kept);
	cr_assert_gt(removed, 0);
	cr_assert_gt(kept, 0);
}

/* ---- remove()'s own steps failing: its directory, its private directory, putting back ---- */

static int  fail_dir_open;        /* open() of /dev/shm fails with this errno */
static int  fail_mkdirat;         /* mkdirat() of the private directory fails with this errno */
static int  squat_mkdirat;        /* this many private names are taken by a directory just before mkdirat() */
static int  fail_openat;          /* openat() of the private directory fails with this errno */
static int  swap_private;         /* the private directory is swapped for one that others may enter */
static int  fail_unlink_taken;    /* the unlinkat() of the object in the private directory fails with this errno */
static int  retake_before_link;   /* another object takes the name just before it is given back */
static int  fail_kept;            /* the renameat() to "<name>.kept-*" fails with this errno */
static ino_t recycled_ino;        /* the object the recycle put under the name */
static int  fail_dir_fstat;       /* fstat() of a directory (/dev/shm, opened) fails with this errno */
static int  fail_take;            /* the renameat() of the object into the private directory fails with this errno */

static int hook_fstat(int fd, struct stat *st)
{
	int rc = real.fstat(fd, st);

	if (rc == 0 && fail_dir_fstat && S_ISDIR(st->st_mode)) {
		errno = fail_dir_fstat;
		return -1;
	}
	return rc;
}

static int hook_open(const char *path, int flags, mode_t mode)
{
	if (fail_dir_open && (flags & O_DIRECTORY) && strcmp(path, "/dev/shm") == 0) {
		errno = fail_dir_open;
		return -1;
	}
	return real.open(path, flags, mode);
}

static int is_private(const char *name)
{
	return strncmp(name, ".hpshm-gc-", 10) == 0;
}

static int hook_mkdirat(int dfd, const char *path, mode_t mode)
{
	if (is_private(path) && squat_mkdirat > 0) {
		squat_mkdirat--;
		(void)real.mkdirat(dfd, path, 0700); /* someone else's directory under the name */
	}
	if (is_private(path) && fail_mkdirat) {
		errno = fail_mkdirat;
		return -1;
	}
	return real.mkdirat(dfd, path, mode);
}

static int hook_openat(int dfd, const char *path, int flags, mode_t mode)
{
	if (is_private(path) && fail_openat) {
		errno = fail_openat;
		return -1;
	}
	if (is_private(path) && swap_private) {
		/* Between mkdirat() and openat() the name comes to hold a directory anyone may enter. */
		(void)real.unlinkat(dfd, path, AT_REMOVEDIR);
		(void)real.mkdirat(dfd, path, 0700);
		(void)fchmodat(dfd, path, 0777, 0);
	}
	return real.openat(dfd, path, flags, mode);
}

/* Put a new object of 64 KiB under the segment's name, in place of whatever is there; its inode. */
static ino_t put_new_object(void)
{
	struct stat st;
	int fd;

	(void)real.shm_unlink(shm_path);
	fd = real.shm_open(shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return 0;
	(void)ftruncate(fd, 65536);
	(void)fstat(fd, &st);
	(void)close(fd);
	return st.st_ino;
}

static int hook_gc_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	if (race == RACE_RECYCLE && strcmp(oldpath, shm_path + 1) == 0) {
		race = RACE_NONE;
		recycled_ino = put_new_object(); /* the name holds another object when it is taken away */
	}
	if (fail_take && strcmp(oldpath, shm_path + 1) == 0 && strcmp(newpath, "taken") == 0) {
		errno = fail_take;
		return -1;
	}
	if (fail_kept && strstr(newpath, ".kept-")) {
		errno = fail_kept;
		return -1;
	}
	return real.renameat(olddirfd, oldpath, newdirfd, newpath);
}

static int hook_unlinkat(int dfd, const char *path, int flags)
{
	if (fail_unlink_taken && strcmp(path, "taken") == 0) {
		errno = fail_unlink_taken;
		fail_unlink_taken = 0;
		return -1;
	}
	return real.unlinkat(dfd, path, flags);
}

static int hook_linkat(int a, const char *p, int b, const char *q, int f)
{
	if (retake_before_link && strcmp(q, shm_path + 1) == 0) {
		retake_before_link = 0;
		(void)put_new_object(); /* and again, before it can be given back */
	}
	return real.linkat(a, p, b, q, f);
}

static int remove_with_faults(struct hpshm_instance *inst, const struct look *l, hpshm_error *err)
{
	memset(err, 0, sizeof *err);
	hpshm__posix_sys.open = hook_open;
	hpshm__posix_sys.mkdirat = hook_mkdirat;
	hpshm__posix_sys.openat = hook_openat;
	hpshm__posix_sys.renameat = hook_gc_renameat;
	hpshm__posix_sys.unlinkat = hook_unlinkat;
	hpshm__posix_sys.linkat = hook_linkat;
	hpshm__posix_sys.fstat = hook_fstat;
	return inst->ops->remove(inst, &l->found, err);
}

/* The entries of /dev/shm whose names start with prefix; the first one's name in first. */
static int entries(const char *prefix, char *first, size_t len)
{
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			if (n++ == 0 && first)
				snprintf(first, len, "%s", e->d_name);
		}
	closedir(d);
	return n;
}

/* Remove this process's private-looking directories (the test's own squatters), emptied first. */
static void clear_private_dirs(void)
{
	char pat[64], name[256], path[512];

	snprintf(pat, sizeof pat, ".hpshm-gc-%ld-", (long)getpid());
	while (entries(pat, name, sizeof name) > 0) {
		snprintf(path, sizeof path, "/dev/shm/%s/taken", name);
		(void)unlink(path);
		snprintf(path, sizeof path, "/dev/shm/%s", name);
		cr_assert_eq(rmdir(path), 0, "rmdir %s: %s", path, strerror(errno));
	}
}

/* The inode of the object under "<name>.kept-*", which is then unlinked; 0 if there is none. */
static ino_t take_kept(void)
{
	char pat[128], name[256], path[512];
	struct stat st;

	snprintf(pat, sizeof pat, "%s.kept-", shm_path + 1);
	if (entries(pat, name, sizeof name) != 1)
		return 0;
	snprintf(path, sizeof path, "/dev/shm/%s", name);
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(unlink(path), 0);
	return st.st_ino;
}

static void faults_init(void)
{
	gc_init();
	fail_dir_open = fail_mkdirat = squat_mkdirat = fail_openat = swap_private = 0;
	fail_unlink_taken = retake_before_link = fail_kept = 0;
	recycled_ino = 0;
	fail_dir_fstat = fail_take = 0;
}

static void faults_fini(void)
{
	char pat[128], name[256], path[512];

	hpshm__posix_sys_reset();
	clear_private_dirs();
	snprintf(pat, sizeof pat, "%s.kept-", shm_path + 1);
	while (entries(pat, name, sizeof name) > 0) {
		snprintf(path, sizeof path, "/dev/shm/%s", name);
		cr_assert_eq(unlink(path), 0, "unlink %s: %s", path, strerror(errno));
	}
	gc_fini();
}

TestSuite(paths_gc_steps, .init = faults_init, .fini = faults_fini, .timeout = 60);

Test(paths_gc_steps, remove_that_may_not_open_the_shm_directory_is_esys_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	fail_dir_open = EMFILE; /* out of descriptors */
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "open");
	cr_assert_eq(err.sys_errno, EMFILE);
	cr_assert(exists(), "remove() could not work in /dev/shm, yet the segment is gone");
	cr_assert_eq(private_dirs(), 0);
}

Test(paths_gc_steps, remove_that_cannot_inspect_the_opened_shm_directory_is_esys_fstat_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	fail_dir_fstat = EIO;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "fstat");
	cr_assert_eq(err.sys_errno, EIO);
	cr_assert(exists(), "remove() could not look at /dev/shm, yet the segment is gone");
	cr_assert_eq(private_dirs(), 0);
}

Test(paths_gc_steps, remove_that_may_not_move_the_segment_aside_is_esys_renameat_with_a_hint)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	fail_take = EPERM; /* a sticky directory, the object another user's */
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "renameat");
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert(hpt_contains(err.hint, "gc as"), "hint: %s", err.hint);
	cr_assert(exists(), "the segment left its name although it could not be moved");
	cr_assert_eq(private_dirs(), 0, "remove() left its private directory");
}

Test(paths_gc_steps, remove_whose_move_aside_fails_otherwise_is_esys_renameat_without_the_hint)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	fail_take = EIO;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "renameat");
	cr_assert_eq(err.sys_errno, EIO);
	cr_assert(!hpt_contains(err.hint, "gc as"), "hint: %s", err.hint);
	cr_assert(exists());
	cr_assert_eq(private_dirs(), 0, "remove() left its private directory");
}

Test(paths_gc_steps, remove_that_may_not_make_its_private_directory_is_esys_with_a_hint)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	fail_mkdirat = EACCES; /* a directory this user may read but not write */
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "mkdirat");
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert(hpt_contains(err.hint, "gc as"), "hint: %s", err.hint);
	cr_assert(exists());
	cr_assert_eq(private_dirs(), 0);
}

Test(paths_gc_steps, remove_whose_private_name_is_taken_tries_another_and_leaves_the_squatter)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	squat_mkdirat = 2;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), 0, "%s", err.message);
	cr_assert(!exists());
	cr_assert_eq(private_dirs(), 2, "the directories that held the names first were not left alone");
}

Test(paths_gc_steps, remove_whose_every_private_name_is_taken_is_esys_eexist_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	squat_mkdirat = 1000;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "mkdirat");
	cr_assert_eq(err.sys_errno, EEXIST);
	cr_assert(exists());
	cr_assert_gt(private_dirs(), 1, "remove() gave up after one name");
}

Test(paths_gc_steps, remove_that_cannot_open_its_private_directory_removes_it_and_keeps_the_segment)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	fail_openat = EMFILE;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "openat");
	cr_assert_eq(err.sys_errno, EMFILE);
	cr_assert(exists());
	cr_assert_eq(private_dirs(), 0, "the private directory it made was left behind");
}

Test(paths_gc_steps, remove_whose_private_directory_is_swapped_is_eperm_and_leaves_that_directory)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	swap_private = 1;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "openat");
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert(exists(), "the segment was moved into a directory others may enter");
	cr_assert_eq(private_dirs(), 1, "a directory that is not remove()'s own was removed");
}

Test(paths_gc_steps, remove_that_cannot_unlink_the_moved_segment_puts_it_back_under_its_name)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;
	ino_t before;

	make_dead_segment();
	before = ino_of(shm_path);
	l = listed(&inst);
	fail_unlink_taken = EBUSY;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "unlinkat");
	cr_assert_eq(err.sys_errno, EBUSY);
	cr_assert_eq(ino_of(shm_path), before, "the segment is not back under its name");
	cr_assert(hpt_contains(err.message, shm_path + 1), "%s", err.message);
	cr_assert_eq(private_dirs(), 0);
	cr_assert_eq(take_kept(), 0, "put aside although its name was free");
}

Test(paths_gc_steps, remove_of_a_name_taken_twice_keeps_the_other_object_beside_it)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;
	ino_t kept;

	make_dead_segment();
	l = listed(&inst);
	race = RACE_RECYCLE;       /* another object under the name when remove() takes it */
	retake_before_link = 1;   /* and a third one there before the second can be given back */
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert_neq(recycled_ino, 0, "the hook could not recycle the name");
	cr_assert(hpt_contains(err.message, ".kept-"), "%s", err.message);
	cr_assert(exists(), "the object that took the name last lost it");
	cr_assert_neq(ino_of(shm_path), recycled_ino);
	cr_assert_eq(private_dirs(), 0);
	kept = take_kept();
	cr_assert_eq(kept, recycled_ino, "the object that took the name first is not kept beside it");
}

Test(paths_gc_steps, remove_that_can_put_nothing_back_says_where_the_object_is)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;
	char pat[64], name[256], path[512];
	struct stat st;

	make_dead_segment();
	l = listed(&inst);
	race = RACE_RECYCLE;
	retake_before_link = 1;
	fail_kept = EIO;
	cr_assert_eq(remove_with_faults(&inst, &l, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_str_eq(err.call, "renameat");
	cr_assert_eq(err.sys_errno, EIO);
	/* The object stays in the private directory, which the message names. */
	snprintf(pat, sizeof pat, ".hpshm-gc-%ld-", (long)getpid());
	cr_assert_eq(entries(pat, name, sizeof name), 1);
	cr_assert(hpt_contains(err.message, name), "%s", err.message);
	snprintf(path, sizeof path, "/dev/shm/%s/taken", name);
	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(st.st_ino, recycled_ino);
}

/* ---- open by name: what lookup() and attach() tell when the object cannot be opened ---- */

static int fail_open_errno;       /* shm_open() of the segment fails with this errno */
static int fail_open_rdwr_only;   /* ... but only the read-write open of attach(), not lookup()'s look */

static int hook_open_shm(const char *name, int flags, mode_t mode)
{
	if (fail_open_errno && strcmp(name, shm_path) == 0 && (!fail_open_rdwr_only || (flags & O_ACCMODE) == O_RDWR)) {
		errno = fail_open_errno;
		return -1;
	}
	return real.shm_open(name, flags, mode);
}

/* hpshm_segment_open() of the segment by plain, with shm_open() hooked. */
static int open_plain(hpshm_segment **seg, hpshm_error *err)
{
	hpshm_config *cfg;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=plain");
	hpshm__posix_sys.shm_open = hook_open_shm;
	memset(err, 0, sizeof *err);
	rc = hpshm_segment_open(seg, shm_name, cfg, err);
	hpshm__posix_sys = real;
	hpshm_config_free(cfg);
	return rc;
}

static void open_init(void)
{
	gc_init();
	fail_open_errno = fail_open_rdwr_only = 0;
}

TestSuite(paths_open, .init = open_init, .fini = gc_fini, .timeout = 60);

Test(paths_open, open_of_a_segment_this_user_may_not_open_is_eacces_naming_its_owner)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char uid[32];

	make_dead_segment();
	fail_open_errno = EACCES; /* its mode= admits only its creator's user */
	cr_assert_eq(open_plain(&seg, &err), HPSHM_EACCES, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert_str_eq(err.call, "shm_open");
	snprintf(uid, sizeof uid, "uid %lu", (unsigned long)geteuid());
	cr_assert(hpt_contains(err.hint, uid), "the hint does not name the owner %s: %s", uid, err.hint);
	cr_assert(exists());
}

Test(paths_open, open_that_cannot_look_at_the_segment_is_esys_with_the_errno)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	make_dead_segment();
	fail_open_errno = EMFILE;
	cr_assert_eq(open_plain(&seg, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, EMFILE);
	cr_assert_str_eq(err.call, "shm_open");
}

Test(paths_open, open_whose_attach_cannot_open_the_segment_is_esys_and_leaves_it_to_its_owner)
{
	hpshm_segment *live = NULL, *seg = NULL;
	hpshm_config *cfg;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=plain,name=%s", shm_name);
	cr_assert_eq(hpshm_segment_create(&live, 4 * MIB, cfg, &err), 0, "%s", err.message);
	hpshm_config_free(cfg);
	fail_open_errno = EMFILE; /* lookup() has looked; attach()'s own open runs out of descriptors */
	fail_open_rdwr_only = 1;
	cr_assert_eq(open_plain(&seg, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, EMFILE);
	cr_assert_str_eq(err.call, "shm_open");
	cr_assert(exists(), "a failed open removed the owner's segment");
	cr_assert_eq(hpshm_segment_destroy(live), 0);
	cr_assert(!exists());
}

Test(paths_open, open_by_a_path_too_long_for_a_token_is_enotsup)
{
	char dir[HPSHM_PATH_MAX], file[HPSHM_PATH_MAX + 80];
	hpshm_segment *seg = NULL;
	hpshm_config *cfg;
	hpshm_error err;
	size_t n;
	int fd, rc;

	/* A hugetlbfs_path whose file's path fits the path buffer but not "path=<path>" in a token. */
	n = (size_t)snprintf(dir, sizeof dir, "/tmp/hpt-paths-open-%ld-", (long)getpid());
	while (n + strlen("/hpshm.") + strlen(shm_name) < HPSHM_PATH_MAX - 3)
		dir[n++] = 'd';
	dir[n] = '\0';
	cr_assert_eq(mkdir(dir, 0700), 0, "%s: %s", dir, strerror(errno));
	snprintf(file, sizeof file, "%s/hpshm.%s", dir, shm_name);
	fd = open(file, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0, "%s: %s", file, strerror(errno));
	close(fd);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=hugetlbfs,hugetlbfs_path=%s", dir);
	rc = hpshm_segment_open(&seg, shm_name, cfg, &err);
	hpshm_config_free(cfg);
	(void)unlink(file);
	(void)rmdir(dir);
	cr_assert_eq(rc, HPSHM_ENOTSUP, "%s", err.message);
	cr_assert_null(seg);
	cr_assert(hpt_contains(err.hint, "shorter"), "hint: %s", err.hint);
}

Test(paths_open, remove_never_takes_what_the_scan_found_foreign)
{
	struct hpshm_instance inst;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	l.found.has_header = HPSHM_FOUND_FOREIGN_HEADER; /* a caller that kept a foreign entry */
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(exists(), "remove() took an object the scan did not find to be hpshm's");
}

/* provider's lookup() of name, asked as hpshm_segment_open() asks it, with cfg's keys. */
static int lookup_by(const char *provider, const char *name, const char *kv, struct hpshm_found *f, hpshm_error *err)
{
	struct hpshm_instance inst;
	struct hpshm_request rq;
	hpshm_config *cfg;
	int rc;

	cr_assert_eq(hpshm__provider_find(provider, &inst), 0);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	if (kv)
		hpt_config_parsef(cfg, "%s", kv);
	memset(&rq, 0, sizeof rq);
	rq.name = name;
	rq.page_size = HPSHM_PAGE_SIZE_DEFAULT;
	rq.mode = 0600;
	rq.config = cfg;
	rq.option = hpshm__request_option;
	memset(f, 0, sizeof *f);
	memset(err, 0, sizeof *err);
	rc = inst.ops->lookup(&inst, &rq, f, err);
	hpshm_config_free(cfg);
	return rc;
}

Test(paths_open, lookup_of_a_name_a_provider_cannot_hold_is_enoent)
{
	struct hpshm_found f;
	hpshm_error err;

	cr_assert_eq(lookup_by("plain", "a/b", NULL, &f, &err), HPSHM_ENOENT, "%s", err.message);
	cr_assert_eq(lookup_by("hugetlbfs", "..", "hugetlbfs_path=/work", &f, &err), HPSHM_ENOENT, "%s", err.message);
}

Test(paths_open, lookup_of_each_kind_of_name_a_provider_cannot_hold_is_enoent)
{
	static const char *const providers[] = { "plain", "hugetlbfs", "sysv_hugetlb" };
	char tall[300];
	const char *names[5];
	struct hpshm_found f;
	hpshm_error err;
	size_t p, i;

	memset(tall, 'n', sizeof tall - 1);   /* longer than any of the three takes */
	tall[sizeof tall - 1] = '\0';
	names[0] = "";
	names[1] = ".";
	names[2] = "..";
	names[3] = "a/b";
	names[4] = tall;
	for (p = 0; p < sizeof providers / sizeof providers[0]; p++)
		for (i = 0; i < sizeof names / sizeof names[0]; i++) {
			/* SysV keys are hashed from any short name: only "" and the tall one are refused. */
			if (strcmp(providers[p], "sysv_hugetlb") == 0 && i >= 1 && i <= 3)
				continue;
			cr_assert_eq(lookup_by(providers[p], names[i], p == 1 ? "hugetlbfs_path=/work" : NULL, &f, &err),
				     HPSHM_ENOENT, "%s, name \"%.20s\" (%zu chars): %s", providers[p], names[i],
				     strlen(names[i]), err.message);
			/* Refused as a name, not looked for: no call failed. */
			cr_assert_eq(err.sys_errno, 0, "%s, name \"%.20s\": %s", providers[p], names[i], err.message);
			cr_assert_str_eq(err.call, "", "%s, name \"%.20s\"", providers[p], names[i]);
		}
}

Test(paths_open, lookup_under_a_hugetlbfs_path_too_long_for_the_name_is_enoent_enametoolong)
{
	char kv[HPSHM_PATH_MAX + 32];
	struct hpshm_found f;
	hpshm_error err;
	int n;

	n = snprintf(kv, sizeof kv, "hugetlbfs_path=/");
	while (n < HPSHM_PATH_MAX - 4)
		kv[n++] = 'd';
	kv[n] = '\0';
	cr_assert_eq(lookup_by("hugetlbfs", shm_name, kv, &f, &err), HPSHM_ENOENT, "%s", err.message);
	cr_assert_eq(err.sys_errno, ENAMETOOLONG);
}

Test(paths_open, remove_refuses_an_id_that_is_not_the_providers_object)
{
	struct hpshm_instance inst, huge;
	struct look l;
	hpshm_error err;

	make_dead_segment();
	l = listed(&inst);
	/* plain's ids are shm names, never paths; hugetlbfs never follows "/../" out of its mount. */
	snprintf(l.found.id, sizeof l.found.id, "/dev/shm%s", shm_path);
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(exists());
	cr_assert_eq(hpshm__provider_find("hugetlbfs", &huge), 0);
	snprintf(l.found.id, sizeof l.found.id, "/mnt/huge/../../dev/shm%s", shm_path);
	cr_assert_eq(huge.ops->remove(&huge, &l.found, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(exists(), "hugetlbfs's remove() followed /../ out of its mount");
}

/* ---- the same races on SysV segments (needs a pool) ---- */

static int sysv_id = -1;          /* the dead segment's id */
static int sysv_attached_at_look; /* attach it ourselves when remove() looks */
static int sysv_rmid_at_look;     /* remove it ourselves when remove() looks */
static int sysv_stat_errno;       /* fail remove()'s IPC_STAT with this */
static int sysv_rmid_errno;       /* fail remove()'s IPC_RMID with this */
static int sysv_foreign_key;      /* IPC_STAT shows a key outside hpshm's range: the id was reused */
static void *sysv_ours = (void *)-1; /* our own attachment */
static int sysv_get_errno;        /* fail shmget() of the name's key with this */
static key_t sysv_get_key;        /* that key */
static int sysv_scribble = -1;    /* fill the header region with this byte when remove() looks; -1: never */

/* What another program's write does to the dead segment's header: its region filled with fill. */
static void sysv_fill_header(int id, int fill)
{
	struct shmid_ds ds;
	size_t mapped;
	char *p;

	if (real.shmctl(id, IPC_STAT, &ds) < 0)
		return;
	p = real.shmat(id, NULL, 0);
	if (p == (void *)-1)
		return;
	mapped = ((size_t)ds.shm_segsz + 2 * MIB - 1) & ~(2 * MIB - 1);
	memset(p + mapped - HPSHM_HEADER_REGION, fill, HPSHM_HEADER_REGION);
	(void)real.shmdt(p);
}

static int hook_shmget(key_t key, size_t size, int flags)
{
	if (sysv_get_errno && key == sysv_get_key) {
		errno = sysv_get_errno;
		return -1;
	}
	return real.shmget(key, size, flags);
}

static int hook_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	int rc;

	if (id == sysv_id && cmd == IPC_STAT) {
		if (sysv_stat_errno) {
			errno = sysv_stat_errno;
			return -1;
		}
		if (sysv_rmid_at_look) {
			sysv_rmid_at_look = 0;
			(void)real.shmctl(id, IPC_RMID, NULL);
		}
		if (sysv_scribble >= 0) {
			sysv_fill_header(id, sysv_scribble);
			sysv_scribble = -1;
		}
		if (sysv_attached_at_look) {
			sysv_attached_at_look = 0;
			sysv_ours = real.shmat(id, NULL, SHM_RDONLY);
		}
		rc = real.shmctl(id, cmd, buf);
		if (rc == 0 && sysv_foreign_key)
			buf->shm_perm.__key = 0x12345678;
		return rc;
	}
	if (id == sysv_id && cmd == IPC_RMID && sysv_rmid_errno) {
		errno = sysv_rmid_errno;
		return -1;
	}
	return real.shmctl(id, cmd, buf);
}

static void sysv_gc_init(void)
{
	gc_init();
	sysv_id = -1;
	sysv_attached_at_look = sysv_rmid_at_look = sysv_stat_errno = sysv_rmid_errno = sysv_foreign_key = 0;
	sysv_get_errno = 0;
	sysv_get_key = 0;
	sysv_scribble = -1;
	sysv_ours = (void *)-1;
}

static void sysv_gc_fini(void)
{
	hpshm__posix_sys_reset();
	if (sysv_ours != (void *)-1)
		(void)shmdt(sysv_ours);
	if (sysv_id >= 0)
		(void)shmctl(sysv_id, IPC_RMID, NULL);
	gc_fini();
}

TestSuite(paths_gc_sysv, .init = sysv_gc_init, .fini = sysv_gc_fini, .timeout = 60);

/* A named SysV segment whose creator was killed; its entry as sysv_hugetlb's scan() lists it. */
static struct look sysv_dead(struct hpshm_instance *inst)
{
	struct hpt_pool p;
	struct look l;
	hpshm_config *cfg;
	hpshm_error err;
	char kv[160];
	const char *emu = hpt_emulator_refuses_sysv_hugetlb(2 * MIB);

	if (emu) {
		hpshm__posix_sys_reset();
		HPT_SKIP("%s", emu);
	}
	if (hpt_pool_read(2 * MIB, &p) < 0 || hpt_pool_available(&p) < 3) {
		hpshm__posix_sys_reset();
		HPT_UNAVAILABLE_PAGES("sysv_hugetlb", "2MiB", 3, "needs 3 free 2MiB pages for a named SysV segment");
	}
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(kv, sizeof kv, "provider=sysv_hugetlb,huge_pages=on,name=%s", shm_name);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	/* Under an emulator a SysV attach lands only where the emulator would put one. */
	if (hpt_emulator())
		hpt_config_parsef(cfg, "base_address=%#lx", (unsigned long)hpt_sysv_address(8 * MIB, 2 * MIB));
	hpt_crashed_creator(cfg, 4 * MIB, "SysV segment");
	hpshm_config_free(cfg);

	memset(&l, 0, sizeof l);
	cr_assert_eq(hpshm__provider_find("sysv_hugetlb", inst), 0);
	cr_assert_geq(inst->ops->scan(inst, look_one, &l), 0);
	cr_assert(l.hit, "sysv_hugetlb's scan did not list %s", shm_name);
	cr_assert_eq(sscanf(l.found.id, "shm=%d", &sysv_id), 1, "%s", l.found.id);
	cr_assert_eq(l.found.has_header, HPSHM_FOUND_HEADER);
	hpshm__posix_sys.shmctl = hook_shmctl;
	return l;
}

static int sysv_exists(void)
{
	struct shmid_ds ds;

	return real.shmctl(sysv_id, IPC_STAT, &ds) == 0;
}

Test(paths_gc_sysv, remove_of_a_sysv_segment_removed_meanwhile_is_done)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_rmid_at_look = 1;
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), 0, "%s", err.message);
	cr_assert(!sysv_exists());
}

Test(paths_gc_sysv, remove_of_a_sysv_segment_attached_again_is_eexist_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_attached_at_look = 1;
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_EEXIST, "%s", err.message);
	cr_assert_neq(sysv_ours, (void *)-1, "the hook could not attach the segment");
	cr_assert(sysv_exists(), "a segment a process has attached was removed");
	cr_assert_eq(shmdt(sysv_ours), 0);
	sysv_ours = (void *)-1;
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), 0, "%s", err.message);
	cr_assert(!sysv_exists());
}

Test(paths_gc_sysv, remove_of_a_sysv_id_now_holding_another_segment_is_einval)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_foreign_key = 1;
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "no longer"), "%s", err.message);
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, remove_of_a_sysv_segment_whose_header_was_overwritten_meanwhile_is_einval_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_scribble = 0x5a;   /* data that is not hpshm's header: the segment is foreign now */
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "not hpshm's"), "%s", err.message);
	cr_assert(sysv_exists(), "a segment that is not hpshm's was removed");
}

Test(paths_gc_sysv, remove_of_a_sysv_segment_whose_header_was_cleared_meanwhile_is_einval_and_keeps_it)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_scribble = 0;   /* the id now holds a segment whose create has not written its header */
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "no longer"), "%s", err.message);
	cr_assert(sysv_exists(), "a segment other than the one listed was removed");
}

Test(paths_gc_sysv, remove_that_may_not_look_at_a_sysv_segment_is_esys_eacces_with_a_hint)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_stat_errno = EACCES;
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert_str_eq(err.call, "shmctl");
	cr_assert(hpt_contains(err.hint, "owner or root"), "hint: %s", err.hint);
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, remove_that_may_not_remove_a_sysv_segment_is_esys_eperm_with_a_hint)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_rmid_errno = EPERM;
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert_str_eq(err.call, "shmctl");
	cr_assert(hpt_contains(err.hint, "gc as"), "hint: %s", err.hint);
	cr_assert(sysv_exists(), "IPC_RMID failed, yet the segment is gone");
}

/* hpshm_segment_open() of the SysV segment, with the hooks sysv_dead() put in place. */
static int open_sysv(hpshm_segment **seg, hpshm_error *err)
{
	hpshm_config *cfg;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=sysv_hugetlb");
	memset(err, 0, sizeof *err);
	rc = hpshm_segment_open(seg, shm_name, cfg, err);
	hpshm_config_free(cfg);
	return rc;
}

Test(paths_gc_sysv, open_of_a_sysv_segment_this_user_may_not_look_at_is_eacces_naming_its_owner)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char uid[32];

	(void)l;
	sysv_stat_errno = EACCES; /* IPC_STAT needs read permission; /proc/sysvipc/shm does not */
	cr_assert_eq(open_sysv(&seg, &err), HPSHM_EACCES, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert_str_eq(err.call, "shmctl");
	snprintf(uid, sizeof uid, "uid %lu", (unsigned long)geteuid());
	cr_assert(hpt_contains(err.hint, uid), "the hint does not name the owner %s: %s", uid, err.hint);
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, open_of_a_sysv_segment_removed_while_it_is_looked_at_is_enoent)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_segment *seg = NULL;
	hpshm_error err;

	(void)l;
	sysv_rmid_at_look = 1;
	cr_assert_eq(open_sysv(&seg, &err), HPSHM_ENOENT, "%s", err.message);
	cr_assert_null(seg);
	cr_assert(!sysv_exists());
}

Test(paths_gc_sysv, open_that_cannot_inspect_a_sysv_segment_is_esys_with_the_errno)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_segment *seg = NULL;
	hpshm_error err;

	(void)l;
	sysv_stat_errno = EOVERFLOW; /* IPC_STAT's answer when a value does not fit the caller's struct */
	cr_assert_eq(open_sysv(&seg, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, EOVERFLOW);
	cr_assert_str_eq(err.call, "shmctl");
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, open_that_may_not_get_the_sysv_key_is_eacces)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	struct shmid_ds ds;
	hpshm_segment *seg = NULL;
	hpshm_error err;

	(void)l;
	cr_assert_eq(real.shmctl(sysv_id, IPC_STAT, &ds), 0);
	sysv_get_key = ds.shm_perm.__key;
	sysv_get_errno = EACCES; /* shmget() of a key whose segment's mode does not admit this user */
	hpshm__posix_sys.shmget = hook_shmget;
	cr_assert_eq(open_sysv(&seg, &err), HPSHM_EACCES, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert_str_eq(err.call, "shmget");
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, remove_of_a_sysv_segment_the_kernel_says_is_being_removed_leaves_it_to_the_kernel)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_stat_errno = EIDRM;   /* marked for removal by someone else: nothing left to do */
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), 0, "%s", err.message);
	cr_assert(sysv_exists(), "remove() went on to remove what it took for gone");
}

Test(paths_gc_sysv, remove_that_cannot_inspect_a_sysv_segment_otherwise_is_esys_without_a_hint)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_error err;

	sysv_stat_errno = EOVERFLOW;
	cr_assert_eq(inst.ops->remove(&inst, &l.found, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_eq(err.sys_errno, EOVERFLOW);
	cr_assert_str_eq(err.call, "shmctl");
	cr_assert(!hpt_contains(err.hint, "owner or root"), "hint: %s", err.hint);
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, open_of_a_sysv_segment_removed_while_it_is_inspected_is_enoent)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_segment *seg = NULL;
	hpshm_error err;

	(void)l;
	sysv_stat_errno = EIDRM; /* what Linux says of an id marked for removal meanwhile */
	cr_assert_eq(open_sysv(&seg, &err), HPSHM_ENOENT, "%s", err.message);
	cr_assert_null(seg);
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, open_of_a_sysv_segment_this_user_is_not_permitted_to_inspect_is_eacces)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	hpshm_segment *seg = NULL;
	hpshm_error err;

	(void)l;
	sysv_stat_errno = EPERM;
	cr_assert_eq(open_sysv(&seg, &err), HPSHM_EACCES, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert(hpt_contains(err.hint, "mode="), "hint: %s", err.hint);
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, open_whose_key_lookup_fails_otherwise_is_esys)
{
	struct hpshm_instance inst;
	struct look l = sysv_dead(&inst);
	struct shmid_ds ds;
	hpshm_segment *seg = NULL;
	hpshm_error err;

	(void)l;
	cr_assert_eq(real.shmctl(sysv_id, IPC_STAT, &ds), 0);
	sysv_get_key = ds.shm_perm.__key;
	sysv_get_errno = ENOMEM;
	hpshm__posix_sys.shmget = hook_shmget;
	cr_assert_eq(open_sysv(&seg, &err), HPSHM_ESYS, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, ENOMEM);
	cr_assert_str_eq(err.call, "shmget");
	cr_assert(sysv_exists());
}

Test(paths_gc_sysv, remove_refuses_an_id_that_is_not_a_sysv_id_or_a_foreign_entry)
{
	struct hpshm_instance inst;
	struct hpshm_found f;
	hpshm_error err;

	hpshm__posix_sys_reset();
	cr_assert_eq(hpshm__provider_find("sysv_hugetlb", &inst), 0);
	memset(&f, 0, sizeof f);
	snprintf(f.id, sizeof f.id, "/hpshm.%s", shm_name); /* another provider's id */
	f.has_header = HPSHM_FOUND_HEADER;
	cr_assert_eq(inst.ops->remove(&inst, &f, &err), HPSHM_EINVAL, "%s", err.message);
	snprintf(f.id, sizeof f.id, "shm=%d", INT32_MAX);
	f.has_header = HPSHM_FOUND_FOREIGN_HEADER; /* what the scan found not to be hpshm's */
	cr_assert_eq(inst.ops->remove(&inst, &f, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "never removed"), "%s", err.message);
}
