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
	hpshm__sys_reset();
	real = hpshm__sys;
	race = RACE_NONE;
	holder = -1;
	snprintf(shm_name, sizeof shm_name, "hpt-paths-gc-%ld", (long)getpid());
	snprintf(shm_path, sizeof shm_path, "/hpshm.%s", shm_name);
}

static void gc_fini(void)
{
	hpshm__sys_reset();
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
	hpshm__sys.shm_open = hook_shm_open;
	hpshm__sys.flock = hook_flock;
	hpshm__sys.renameat = hook_renameat;
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
	hpshm__sys.shm_open = st_shm_open;
	hpshm__sys.shm_unlink = st_shm_unlink;
	hpshm__sys.open = st_open;
	hpshm__sys.openat = st_openat;
	hpshm__sys.close = st_close;
	hpshm__sys.fstat = st_fstat;
	hpshm__sys.fstatat = st_fstatat;
	hpshm__sys.flock = st_flock;
	hpshm__sys.pread = st_pread;
	hpshm__sys.fcntl = st_fcntl;
	hpshm__sys.fchmod = st_fchmod;
	hpshm__sys.mkdirat = st_mkdirat;
	hpshm__sys.renameat = st_renameat;
	hpshm__sys.unlinkat = st_unlinkat;
	hpshm__sys.unlink = st_unlink;
	hpshm__sys.linkat = st_linkat;
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
		hpshm__sys = real;
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

/* ---- the same races on SysV segments (needs a pool) ---- */

static int sysv_id = -1;          /* the dead segment's id */
static int sysv_attached_at_look; /* attach it ourselves when remove() looks */
static int sysv_rmid_at_look;     /* remove it ourselves when remove() looks */
static int sysv_stat_errno;       /* fail remove()'s IPC_STAT with this */
static int sysv_rmid_errno;       /* fail remove()'s IPC_RMID with this */
static int sysv_foreign_key;      /* IPC_STAT shows a key outside hpshm's range: the id was reused */
static void *sysv_ours = (void *)-1; /* our own attachment */

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
	sysv_ours = (void *)-1;
}

static void sysv_gc_fini(void)
{
	hpshm__sys_reset();
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
		hpshm__sys_reset();
		cr_skip_test("%s", emu);
	}
	if (hpt_pool_read(2 * MIB, &p) < 0 || hpt_pool_available(&p) < 3) {
		hpshm__sys_reset();
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
	hpshm__sys.shmctl = hook_shmctl;
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
