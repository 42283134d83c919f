/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_compete.c -- two creates of one name at once: the lock retries, the name
 * taken between a look and a create, the new object unlinked by another creator before it was
 * locked, and a live holder of a file that has no header yet.
 *
 * The segments are named plain ones, real objects in /dev/shm.  The other creator is played
 * by hooks in the system call table that do, at the instant the race needs, what the other
 * process would have done: create the name, unlink it, hold its lock.  Each test checks the
 * outcome (a segment under the name, or HPSHM_EEXIST / HPSHM_ESYS with the call), that the
 * retry happened (the calls counted), and that no descriptor and no object was left.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/posix/sys.h"

#define MIB ((size_t)1 << 20)

static struct hpshm__syscalls real;
static hpshm_config *cfg;
static char shm_name[64];   /* the segment's name */
static char shm_path[96];   /* "/hpshm.<name>" */
static int  fds_before;

static struct {
	int      no_tmpfile;     /* open(O_TMPFILE) fails with EOPNOTSUPP: the linked path */
	int      excl_eexist;    /* shm_open(O_CREAT|O_EXCL) answers EEXIST this many times */
	int      unlink_at_lock; /* unlink the name at the first LOCK_SH of a new object */
	int      lock_busy;      /* LOCK_SH|LOCK_NB answers EWOULDBLOCK this many times (-1: always) */
	int      link_eexist;    /* linkat answers EEXIST this many times */
	int      link_errno;     /* linkat fails with this */
	int      excl_errno;     /* shm_open(O_CREAT|O_EXCL) fails with this */
	int      look_errno;     /* shm_open(O_RDONLY) of the name fails with this */
	int      fchmod_errno;   /* fchmod fails with this */
	unsigned excl_calls;     /* shm_open(O_CREAT|O_EXCL) calls seen */
	unsigned lock_calls;     /* LOCK_SH calls seen */
	unsigned link_calls;     /* linkat calls seen */
} inj;

static int hook_open(const char *path, int flags, mode_t mode)
{
#ifdef O_TMPFILE
	if (inj.no_tmpfile && (flags & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return -1;
	}
#endif
	return real.open(path, flags, mode);
}

static int hook_shm_open(const char *name, int flags, mode_t mode)
{
	if (inj.look_errno && (flags & O_ACCMODE) == O_RDONLY && strcmp(name, shm_path) == 0) {
		errno = inj.look_errno;
		return -1;
	}
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) && strcmp(name, shm_path) == 0) {
		inj.excl_calls++;
		if (inj.excl_errno) {
			errno = inj.excl_errno;
			return -1;
		}
		if (inj.excl_eexist != 0) {
			if (inj.excl_eexist > 0)
				inj.excl_eexist--;
			errno = EEXIST;
			return -1;
		}
	}
	return real.shm_open(name, flags, mode);
}

static int hook_flock(int fd, int op)
{
	if (op & LOCK_SH) {
		inj.lock_calls++;
		if (inj.unlink_at_lock) {
			inj.unlink_at_lock = 0;
			(void)real.shm_unlink(shm_path);   /* the other creator took it for dead */
		}
		if (inj.lock_busy != 0) {
			if (inj.lock_busy > 0)
				inj.lock_busy--;
			errno = EWOULDBLOCK;
			return -1;
		}
	}
	return real.flock(fd, op);
}

static int hook_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	inj.link_calls++;
	if (inj.link_errno) {
		errno = inj.link_errno;
		return -1;
	}
	if (inj.link_eexist > 0) {
		inj.link_eexist--;
		errno = EEXIST;
		return -1;
	}
	return real.linkat(olddirfd, oldpath, newdirfd, newpath, flags);
}

static int hook_fchmod(int fd, mode_t mode)
{
	if (inj.fchmod_errno) {
		errno = inj.fchmod_errno;
		return -1;
	}
	return real.fchmod(fd, mode);
}

static void compete_init(void)
{
	char kv[128];
	hpshm_error err;

	hpt_fixture_init();
	hpshm__posix_sys_reset();
	real = hpshm__posix_sys;
	memset(&inj, 0, sizeof inj);
	snprintf(shm_name, sizeof shm_name, "hpt-paths-compete-%ld", (long)getpid());
	snprintf(shm_path, sizeof shm_path, "/hpshm.%s", shm_name);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(kv, sizeof kv, "provider=plain,name=%s", shm_name);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	fds_before = hpt_fd_count();
	hpshm__posix_sys.open = hook_open;
	hpshm__posix_sys.shm_open = hook_shm_open;
	hpshm__posix_sys.flock = hook_flock;
	hpshm__posix_sys.linkat = hook_linkat;
	hpshm__posix_sys.fchmod = hook_fchmod;
}

static void compete_fini(void)
{
	hpshm__posix_sys_reset();
	hpshm_config_free(cfg);
	(void)shm_unlink(shm_path);
	hpt_fixture_fini();
}

TestSuite(paths_compete, .init = compete_init, .fini = compete_fini, .timeout = 60);

static int exists(void)
{
	char path[128];

	snprintf(path, sizeof path, "/dev/shm%s", shm_path);
	return access(path, F_OK) == 0;
}

/* Create, which must succeed, then destroy: nothing of it is left. */
static void create_succeeds(void)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, 4 * MIB, cfg, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert(exists(), "the segment has no name after create");
	memset(hpshm_segment_address(seg), 1, hpshm_segment_size(seg));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(!exists(), "destroy left the name");
	cr_assert_eq(hpt_fd_count(), fds_before);
}

/* Create, which must fail with want: the error. */
static hpshm_error create_fails(int want)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, 4 * MIB, cfg, &err);
	cr_assert_eq(rc, want, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	cr_assert_eq(hpt_fd_count(), fds_before, "a descriptor was left open");
	return err;
}

Test(paths_compete, create_retries_when_the_name_is_taken_between_its_look_and_its_create)
{
	inj.no_tmpfile = 1;
	inj.excl_eexist = 1;
	create_succeeds();
	cr_assert_eq(inj.excl_calls, 2u, "shm_open(O_EXCL) was called %u times", inj.excl_calls);
}

Test(paths_compete, create_gives_up_with_eexist_on_a_name_that_keeps_being_recreated)
{
	hpshm_error err;

	inj.no_tmpfile = 1;
	inj.excl_eexist = -1;
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "keeps being re-created"), "%s", err.message);
	cr_assert_gt(inj.excl_calls, 1u);
}

Test(paths_compete, create_starts_again_when_its_object_was_unlinked_before_it_locked_it)
{
	inj.no_tmpfile = 1;
	inj.unlink_at_lock = 1;
	create_succeeds();
	cr_assert_eq(inj.excl_calls, 2u, "the unlinked object was kept (%u creates)", inj.excl_calls);
}

Test(paths_compete, create_retries_a_busy_lock_and_then_succeeds)
{
	inj.no_tmpfile = 1;
	inj.lock_busy = 3;
	create_succeeds();
	cr_assert_geq(inj.lock_calls, 4u, "the lock was tried %u times", inj.lock_calls);
}

Test(paths_compete, create_that_never_gets_its_lock_fails_and_unlinks_its_object)
{
	hpshm_error err;

	inj.no_tmpfile = 1;
	inj.lock_busy = -1;
	err = create_fails(HPSHM_ESYS);
	cr_assert_str_eq(err.call, "flock");
	cr_assert_eq(err.sys_errno, EWOULDBLOCK);
	cr_assert(!exists(), "the object that could not be locked was left under the name");
}

Test(paths_compete, create_links_again_after_another_creator_linked_first)
{
	inj.link_eexist = 1;
	create_succeeds();
	if (inj.link_calls == 0) {
		hpshm__posix_sys_reset();
		hpshm_config_free(cfg);
		HPT_SKIP("no O_TMPFILE here: the object was created under its name, never linked");
	}
	cr_assert_geq(inj.link_calls, 2u, "linkat was called %u times", inj.link_calls);
}

Test(paths_compete, a_live_holder_of_a_file_without_a_header_makes_create_eexist)
{
	hpshm_error err;
	int fd = shm_open(shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)(4 * MIB + 4096)), 0);
	cr_assert_eq(flock(fd, LOCK_SH), 0);   /* a creator that has not written its header yet */
	fds_before = hpt_fd_count();
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "being created"), "%s", err.message);
	cr_assert(exists(), "the holder's file was removed");
	close(fd);
}

Test(paths_compete, a_dead_file_without_a_header_makes_create_eexist_pointing_at_gc_force)
{
	hpshm_error err;
	int fd = shm_open(shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)(4 * MIB + 4096)), 0);
	close(fd);
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.hint, "--force"), "hint: %s", err.hint);
	cr_assert(exists(), "a file nothing proves is hpshm's was removed");
}

/* ---- what create says when the name cannot be made ---- */

Test(paths_compete, create_that_may_not_make_the_object_is_esys_with_the_call)
{
	hpshm_error err;

	inj.no_tmpfile = 1;
	inj.excl_errno = EACCES;
	err = create_fails(HPSHM_ESYS);
	cr_assert_str_eq(err.call, "shm_open");
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert(!exists());
}

Test(paths_compete, create_that_cannot_set_the_mode_unlinks_what_it_made)
{
	hpshm_error err;

	inj.no_tmpfile = 1;
	inj.fchmod_errno = EPERM;
	err = create_fails(HPSHM_ESYS);
	cr_assert_str_eq(err.call, "fchmod");
	cr_assert(!exists(), "the object whose mode could not be set was left under the name");
}

Test(paths_compete, create_that_cannot_name_its_unnamed_object_says_linkat)
{
	hpshm_error err;

	inj.link_errno = ENOENT;
	err = create_fails(HPSHM_ESYS);
	if (inj.link_calls == 0) {
		hpshm__posix_sys_reset();
		hpshm_config_free(cfg);
		HPT_SKIP("no O_TMPFILE here: nothing is linked");
	}
	cr_assert_str_eq(err.call, "linkat");
	cr_assert(hpt_contains(err.hint, "/proc"), "hint: %s", err.hint);
	cr_assert(!exists());
}

Test(paths_compete, create_over_a_name_this_user_cannot_open_is_eexist_naming_the_owner)
{
	hpshm_error err;
	int fd = shm_open(shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0);
	close(fd);
	inj.look_errno = EACCES;
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "cannot open"), "%s", err.message);
	cr_assert(hpt_contains(err.hint, "root"), "hint: %s", err.hint);
	cr_assert(exists(), "the other user's object was removed");
}

Test(paths_compete, create_over_a_fifo_or_a_link_is_eexist_and_keeps_it)
{
	char path[128];
	hpshm_error err;

	snprintf(path, sizeof path, "/dev/shm%s", shm_path);
	cr_assert_eq(mkfifo(path, 0600), 0);
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "not an hpshm segment"), "%s", err.message);
	cr_assert(exists());
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(symlink("/dev/null", path), 0);
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "symbolic link"), "%s", err.message);
	cr_assert_eq(unlink(path), 0);
}

Test(paths_compete, attach_after_the_creator_removed_the_segment_is_einval)
{
	hpshm_segment *seg = NULL, *other = NULL;
	char token[HPSHM_TOKEN_MAX], kv[160];
	hpshm_error err;
	void *addr;
	size_t len;

	snprintf(kv, sizeof kv, "provider=plain,name=%s,reattach=exec", shm_name);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof token, &err), 0);
	addr = hpshm_segment_address(seg);
	len = hpshm_segment_report(seg)->mapped_size;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(hpt_is_mapped(addr, len), 0);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_attach(&other, token, NULL, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert_eq(err.sys_errno, ENOENT);
	cr_assert(hpt_contains(err.message, "does not exist"), "%s", err.message);
	cr_assert_eq(hpt_fd_count(), fds_before);
}

/* ---- the same on SysV names (the first two need a pool) ---- */

static struct {
	int excl_eexist;   /* shmget(IPC_CREAT|IPC_EXCL) of a named key answers EEXIST */
	int look_errno;    /* shmget(key, 0, 0) fails with this */
	int rmid_errno;    /* shmctl(IPC_RMID) fails with this */
} sinj;

static int shook_shmget(key_t key, size_t size, int flags)
{
	if (key != IPC_PRIVATE && (flags & IPC_EXCL) && sinj.excl_eexist) {
		errno = EEXIST;
		return -1;
	}
	if (key != IPC_PRIVATE && !(flags & IPC_CREAT) && sinj.look_errno) {
		errno = sinj.look_errno;
		return -1;
	}
	return real.shmget(key, size, flags);
}

static int shook_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	if (cmd == IPC_RMID && sinj.rmid_errno) {
		errno = sinj.rmid_errno;
		return -1;
	}
	return real.shmctl(id, cmd, buf);
}

static void sysv_compete_init(void)
{
	char kv[160];
	hpshm_error err;

	compete_init();
	memset(&sinj, 0, sizeof sinj);
	/* The probe sees a pool of its own; shmget() still asks the real one. */
	hpt_fakeroot_create(64, 64);
	snprintf(kv, sizeof kv, "provider=sysv_hugetlb,huge_pages=on,name=%s", shm_name);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	hpshm__posix_sys.shmget = shook_shmget;
	hpshm__posix_sys.shmctl = shook_shmctl;
}

static void sysv_compete_fini(void)
{
	hpt_fakeroot_destroy();
	compete_fini();
}

TestSuite(paths_compete_sysv, .init = sysv_compete_init, .fini = sysv_compete_fini, .timeout = 60);

/* Skip (or fail where required) without 3 free 2 MiB pages, undoing the setup first. */
static void sysv_need_pool(void)
{
	struct hpt_pool p;
	const char *emu = hpt_emulator_refuses_sysv_hugetlb(2 * MIB);

	if (emu) {
		hpshm__posix_sys_reset();
		hpshm_config_free(cfg);
		hpt_fakeroot_destroy();
		HPT_SKIP("%s", emu);
	}
	if (hpt_pool_read(2 * MIB, &p) < 0 || hpt_pool_available(&p) < 3) {
		hpshm__posix_sys_reset();
		hpshm_config_free(cfg);
		hpt_fakeroot_destroy();
		HPT_UNAVAILABLE_PAGES("sysv_hugetlb", "2MiB", 3, "needs 3 free 2MiB pages for a named SysV segment");
	}
	/* Under an emulator a SysV attach lands only where the emulator would put one. */
	if (hpt_emulator())
		hpt_config_parsef(cfg, "base_address=%#lx", (unsigned long)hpt_sysv_address(8 * MIB, 2 * MIB));
}

Test(paths_compete_sysv, a_sysv_name_longer_than_sysv_allows_is_einval_before_anything_is_made)
{
	hpshm_error err;
	char kv[300], name[200];

	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	snprintf(kv, sizeof kv, "name=%s", name);
	if (hpshm_config_parse(cfg, kv, &err) != 0) {
		cr_assert_str_eq(err.key, "name");
		return;
	}
	err = create_fails(HPSHM_ENOHUGE);
	cr_assert(hpt_contains(err.message, "too long"), "%s", err.message);
}

Test(paths_compete_sysv, a_sysv_create_gives_up_on_a_key_that_keeps_being_recreated)
{
	hpshm_error err;

	sinj.excl_eexist = 1;
	sinj.look_errno = ENOENT;   /* gone again each time it is looked at */
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "keeps being re-created"), "%s", err.message);
}

Test(paths_compete_sysv, a_sysv_key_held_by_a_segment_this_user_cannot_open_is_eexist)
{
	hpshm_error err;

	sinj.excl_eexist = 1;
	sinj.look_errno = EACCES;
	err = create_fails(HPSHM_EEXIST);
	cr_assert_str_eq(err.call, "shmget");
	cr_assert_eq(err.sys_errno, EACCES);
}

Test(paths_compete_sysv, a_second_sysv_create_of_a_live_name_is_eexist_naming_the_creator)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char pid[32];

	sysv_need_pool();
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	fds_before = hpt_fd_count();
	err = create_fails(HPSHM_EEXIST);
	snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
	cr_assert(hpt_contains(err.message, "in use") && hpt_contains(err.message, pid), "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* A named SysV segment whose creator was killed. */
static void sysv_dead_named(void)
{
	hpshm_error err;
	char c;
	int fds[2], status;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_segment *seg;

		hpshm__posix_sys_reset();
		close(fds[0]);
		if (hpshm_segment_create(&seg, 4 * MIB, cfg, &err) != 0 || write(fds[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &c, 1), 1, "the creator could not create its SysV segment");
	close(fds[0]);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
}

Test(paths_compete_sysv, a_sysv_create_recycles_the_name_of_a_dead_creator)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	sysv_need_pool();
	sysv_dead_named();
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(paths_compete_sysv, a_dead_sysv_segment_this_user_may_not_remove_is_eexist_with_the_owner)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	sysv_need_pool();
	sysv_dead_named();
	sinj.rmid_errno = EPERM;
	err = create_fails(HPSHM_EEXIST);
	cr_assert_str_eq(err.call, "shmctl");
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert(hpt_contains(err.hint, "gc"), "hint: %s", err.hint);
	/* let it go: the next create recycles it */
	sinj.rmid_errno = 0;
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* ---- what create finds under the name, classified ---- */

/* Put a file of len bytes under the name, its last 4 KiB filled with fill. */
static void put_file(off_t len, int fill)
{
	char tail[4096];
	int fd = shm_open(shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, len), 0);
	if (len >= (off_t)sizeof tail && fill) {
		memset(tail, fill, sizeof tail);
		cr_assert_eq(pwrite(fd, tail, sizeof tail, len - (off_t)sizeof tail), (ssize_t)sizeof tail);
	}
	close(fd);
}

Test(paths_compete, create_over_a_file_of_a_size_hpshm_never_makes_is_eexist_and_keeps_it)
{
	hpshm_error err;

	put_file(12345, 0);
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "size hpshm never makes"), "%s", err.message);
	cr_assert(exists());
}

Test(paths_compete, create_over_a_file_whose_tail_is_not_hpshms_header_is_eexist_and_keeps_it)
{
	hpshm_error err;

	put_file((off_t)(4 * MIB + 4096), 0x5a);
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "tail is not hpshm's header"), "%s", err.message);
	cr_assert(exists());
}

Test(paths_compete, create_over_an_empty_file_nobody_holds_is_eexist_pointing_at_gc_force)
{
	hpshm_error err;

	put_file(0, 0);
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.hint, "--force"), "hint: %s", err.hint);
	cr_assert(exists());
}

Test(paths_compete, create_over_a_directory_names_it)
{
	char path[128];
	hpshm_error err;

	snprintf(path, sizeof path, "/dev/shm%s", shm_path);
	cr_assert_eq(mkdir(path, 0700), 0);
	err = create_fails(HPSHM_EEXIST);
	rmdir(path);
	cr_assert(hpt_contains(err.message, "a directory"), "%s", err.message);
}

static ssize_t failing_pread(int fd, void *buf, size_t len, off_t off)
{
	(void)fd;
	(void)buf;
	(void)len;
	(void)off;
	errno = EIO;
	return -1;
}

Test(paths_compete, create_over_a_file_it_cannot_read_never_takes_it_for_its_own)
{
	hpshm_error err;

	put_file((off_t)(4 * MIB + 4096), 0);
	hpshm__posix_sys.pread = failing_pread;
	err = create_fails(HPSHM_EEXIST);
	cr_assert(hpt_contains(err.message, "not an hpshm segment"), "%s", err.message);
	cr_assert(exists());
}
