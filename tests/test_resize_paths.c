/* SPDX-License-Identifier: MIT */
/*
 * tests/test_resize_paths.c -- the edges of a resizable segment's port calls on Linux
 * (ports/linux/resize.c, ports/posix/protect.c), with fallocate() made to fail through the
 * system call table: a short pool gives back what it took, a file system without fallocate is
 * "not supported", any other errno is the system's, an interrupted call is retried; and
 * whether a process still maps an object, read from /proc/<pid>/maps.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/port.h"

#define PUNCH (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)

/* What the fake fallocate() was asked, and what it answers. */
static struct {
	int   fail_mode0;  /* errno for an allocation (mode 0), 0 to let it through */
	int   fail_punch;  /* errno for a punch, 0 to let it through */
	int   eintr;       /* EINTR answers before the real one */
	int   calls, punches;
	off_t punch_off, punch_len;
} ff;

static int fake_fallocate(int fd, int mode, off_t off, off_t len)
{
	(void)fd;
	ff.calls++;
	if (ff.eintr > 0) {
		ff.eintr--;
		errno = EINTR;
		return -1;
	}
	if (mode == PUNCH) {
		ff.punches++;
		ff.punch_off = off;
		ff.punch_len = len;
		if (ff.fail_punch) {
			errno = ff.fail_punch;
			return -1;
		}
		return 0;
	}
	if (ff.fail_mode0) {
		errno = ff.fail_mode0;
		return -1;
	}
	return 0;
}

static int memfd = -1;

static void paths_init(void)
{
	hpt_fixture_init();
	hpshm__linux_sys_reset();
	memset(&ff, 0, sizeof ff);
	memfd = memfd_create("hpshm-test-resize-paths", MFD_CLOEXEC);
	cr_assert_geq(memfd, 0);
	cr_assert_eq(ftruncate(memfd, 1 << 20), 0);
	hpshm__linux_sys.fallocate = fake_fallocate;
}

static void paths_fini(void)
{
	hpshm__linux_sys_reset();
	if (memfd >= 0)
		close(memfd);
	hpt_fixture_fini();
}

TestSuite(resize_paths, .init = paths_init, .fini = paths_fini);

static struct hpshm__port_handle file(void)
{
	return hpshm__port_handle_of(memfd, 1);
}

Test(resize_paths, a_short_pool_gives_back_what_it_took_and_names_the_fix)
{
	hpshm_error err;

	memset(&err, 0, sizeof err);
	ff.fail_mode0 = ENOSPC;
	cr_assert_eq(hpshm__port_commit(file(), 65536, 131072, 4096, &err), HPSHM_ENOMEM);
	cr_assert_eq(ff.punches, 1, "the part fallocate took was not given back");
	cr_assert_eq(ff.punch_off, 65536);
	cr_assert_eq(ff.punch_len, 131072);
	cr_assert_str_eq(err.call, "fallocate");
	cr_assert_neq(err.hint[0], '\0', "no fix for %s", err.message);
}

Test(resize_paths, a_file_system_without_fallocate_is_not_supported)
{
	hpshm_error err;

	ff.fail_mode0 = EOPNOTSUPP;
	cr_assert_eq(hpshm__port_commit(file(), 0, 4096, 4096, &err), HPSHM_ENOTSUP);
	cr_assert(hpt_contains(err.message, "cannot allocate"), "%s", err.message);
	ff.fail_punch = EOPNOTSUPP;
	cr_assert_eq(hpshm__port_decommit(file(), 0, 4096, &err), HPSHM_ENOTSUP);
}

Test(resize_paths, any_other_errno_is_the_systems_and_says_where)
{
	hpshm_error err;

	ff.fail_mode0 = EIO;
	cr_assert_eq(hpshm__port_commit(file(), 8192, 4096, 4096, &err), HPSHM_ESYS);
	cr_assert_eq(err.sys_errno, EIO);
	cr_assert(hpt_contains(err.message, "offset 8192"), "%s", err.message);
	ff.fail_punch = EIO;
	cr_assert_eq(hpshm__port_decommit(file(), 8192, 4096, &err), HPSHM_ESYS);
	cr_assert(hpt_contains(err.message, "PUNCH_HOLE"), "%s", err.message);
}

Test(resize_paths, an_interrupted_call_is_retried)
{
	ff.eintr = 2;
	cr_assert_eq(hpshm__port_commit(file(), 0, 4096, 4096, NULL), 0);
	cr_assert_eq(ff.calls, 3);
	ff.eintr = 1;
	cr_assert_eq(hpshm__port_decommit(file(), 0, 4096, NULL), 0);
}

Test(resize_paths, an_object_without_a_file_has_nothing_to_allocate_in)
{
	struct hpshm__port_handle none = HPSHM__PORT_NO_HANDLE;
	hpshm_error err;

	cr_assert_eq(hpshm__port_commit(none, 0, 4096, 4096, &err), HPSHM_ENOTSUP);
	cr_assert_eq(hpshm__port_decommit(none, 0, 4096, &err), HPSHM_ENOTSUP);
	cr_assert_eq(hpshm__port_process_maps(getpid(), none), -1);
	cr_assert_eq(ff.calls, 0);
}

/* This process maps the memfd, a child that mapped nothing does not, a reaped pid is gone. */
Test(resize_paths, a_process_maps_the_object_or_not)
{
	void *p = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, memfd, 0);
	int go[2], status;
	char c = 0;
	pid_t pid;

	cr_assert(p != MAP_FAILED);
	cr_assert_eq(hpshm__port_process_maps(getpid(), file()), 1);
	cr_assert_eq(pipe(go), 0);
	pid = hpt_fork();
	if (pid == 0) {
		/* Drop the inherited mapping, as an exec would. */
		munmap(p, 1 << 20);
		if (write(go[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(read(go[0], &c, 1), 1);
	cr_assert_eq(hpshm__port_process_maps(pid, file()), 0, "a process that unmapped it still counts");
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_eq(hpshm__port_process_maps(pid, file()), 0, "a reaped process still counts");
	munmap(p, 1 << 20);
	cr_assert_eq(hpshm__port_process_maps(getpid(), file()), 0);
}

/*
 * A maps file that opens but cannot be read says nothing: -1, never 0, which would free the
 * slot of a process that may still map the segment and give back pages it touches.  A
 * directory stands in for it under a fake /proc: it opens, and its read fails (EISDIR).
 */
Test(resize_paths, a_maps_file_that_cannot_be_read_is_no_answer)
{
	char root[] = "/tmp/hpshm-test-maps.XXXXXX", dir[128];
	void *p = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, memfd, 0);
	int rc;

	cr_assert(p != MAP_FAILED);
	cr_assert_not_null(mkdtemp(root));
	snprintf(dir, sizeof dir, "%s/proc", root);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof dir, "%s/proc/%ld", root, (long)getpid());
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof dir, "%s/proc/%ld/maps", root, (long)getpid());
	cr_assert_eq(mkdir(dir, 0700), 0);
	hpshm__linux_set_sysroot(root);
	rc = hpshm__port_process_maps(getpid(), file());
	hpshm__linux_set_sysroot(NULL);
	rmdir(dir);
	snprintf(dir, sizeof dir, "%s/proc/%ld", root, (long)getpid());
	rmdir(dir);
	snprintf(dir, sizeof dir, "%s/proc", root);
	rmdir(dir);
	rmdir(root);
	munmap(p, 1 << 20);
	cr_assert_eq(rc, -1, "a maps file whose read failed answered %d", rc);
	/* and with the real /proc the same question has its answer again */
	cr_assert_eq(hpshm__port_process_maps(getpid(), file()), 0);
}

Test(resize_paths, a_protection_the_system_refuses_is_its_error)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *gone = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hpshm_error err;
	int rc;

	/* A range nothing maps any more: mprotect() says ENOMEM. */
	cr_assert(gone != MAP_FAILED);
	cr_assert_eq(munmap(gone, page), 0);
	rc = hpshm__port_protect(gone, page, 0, &err);
	if (rc == 0 && hpt_emulator())
		HPT_SKIP("under %s mprotect() of a range the guest unmapped succeeds (qemu-i386 does so), where the "
			 "kernel says ENOMEM", hpt_emulator());
	cr_assert_eq(rc, HPSHM_ESYS);
	cr_assert_str_eq(err.call, "mprotect");
	cr_assert_eq(err.sys_errno, ENOMEM);
	cr_assert(hpt_contains(err.message, "inaccessible"), "%s", err.message);
}
