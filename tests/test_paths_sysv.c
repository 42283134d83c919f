/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_sysv.c -- sysv_hugetlb when a call fails half way or answers as in a race:
 * shmget refused per errno, attach by a stale or forged shm=<id>, a segment that is gone or
 * marked under the look, a key of a name held by something that is not hpshm's, destroy that
 * may not remove, and what ls lists.
 *
 * The library sees a fake sysroot (fakes.h) with 64 free 2 MiB pages, so the probe passes on
 * any machine.  Where a test needs a segment the kernel would give only from a huge page
 * pool, a fake one stands in: shmget() of the fake id, and shmat() of it maps anonymous
 * shared memory that the fake sysroot's smaps calls hugetlb (hpt_fakeroot_smaps_huge).  A
 * segment that needs no pool (a SysV segment of base pages under an hpshm key) is real.  The
 * tests at the end need real huge pages and skip, with the reason, without them.  Each test
 * checks the code, call and errno, and that nothing is left: the fake segment removed and
 * detached, descriptors as before, and (the fixture) the SysV ids and pools as before.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "harness.h"

#include "base/base.h"
#include "base/header.h"
#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/posix/sys.h"

#define MIB HPT_MIB

#ifndef SHM_HUGETLB
#define SHM_HUGETLB 04000
#endif

#define FAKE_ID 0x7ffff00d /* an id no kernel call sees: the hooks answer for it */
#define MARK    0x48u      /* what sysv_hugetlb asks shmget() for less than it maps */

static struct hpshm__syscalls real;
static struct hpshm__linux_syscalls real_linux;

/* The fake segment. */
static struct {
	int    on;         /* shmget(IPC_CREAT) makes the fake segment */
	int    live;       /* it exists */
	int    dest;       /* marked for removal */
	size_t segsz;      /* what shmget() was asked for */
	void  *at;         /* its one attachment, NULL if none */
	size_t len;        /* the attachment's length */
	int    elsewhere;  /* shmat() with an address maps somewhere else */
	int    cpid;       /* its creator per IPC_STAT: 0 this process, -1 pid 0 (unseen) */
} fake;

static struct {
	int create_errno;   /* shmget(IPC_CREAT) fails with this */
	int stat_errno;     /* shmctl(IPC_STAT) of stat_id fails with this */
	int stat_id;
	int stat_after_ro;  /* ... only the IPC_STAT right after a read-only attach */
	int stat_marked;    /* IPC_STAT of stat_id after a read-only attach says: marked, key IPC_PRIVATE */
	int shmat_errno;    /* shmat() for writing fails with this */
	int gone_on_shmat;  /* ... and the fake segment is gone from then on */
	int shmat_ro_errno; /* shmat(SHM_RDONLY) fails with this */
	int rmid_errno;     /* shmctl(IPC_RMID) fails with this */
	int shmdt_errno;    /* shmdt() fails with this, once */
	int madvise_errno;  /* madvise(MADV_POPULATE_READ) fails with this */
	int ro_attached;    /* a read-only attach happened since the last IPC_STAT */
	unsigned ro_live;   /* read-only attachments not yet detached */
} inj;

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static int h_shmget(key_t key, size_t size, int flags)
{
	if ((flags & IPC_CREAT) && inj.create_errno) {
		errno = inj.create_errno;
		return -1;
	}
	if ((flags & IPC_CREAT) && fake.on) {
		fake.live = 1;
		fake.dest = 0;
		fake.segsz = size;
		(void)key;
		return FAKE_ID;
	}
	return real.shmget(key, size, flags);
}

static int h_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	int rc;

	if (cmd == IPC_RMID && inj.rmid_errno) {
		errno = inj.rmid_errno;
		return -1;
	}
	if (cmd == IPC_STAT && inj.stat_errno && id == inj.stat_id && (!inj.stat_after_ro || inj.ro_attached)) {
		inj.ro_attached = 0;
		errno = inj.stat_errno;
		return -1;
	}
	if (id == FAKE_ID) {
		if (!fake.live) {
			errno = EINVAL;
			return -1;
		}
		if (cmd == IPC_RMID) {
			fake.dest = 1;
			if (!fake.at)
				fake.live = 0;
			return 0;
		}
		if (cmd == IPC_STAT) {
			memset(buf, 0, sizeof *buf);
			buf->shm_segsz = fake.segsz;
			buf->shm_perm.mode = 0600 | (fake.dest ? 01000 /* SHM_DEST */ : 0);
			buf->shm_perm.uid = getuid();
			buf->shm_nattch = fake.at ? 1 : 0;
			buf->shm_cpid = fake.cpid < 0 ? 0 : getpid();
			return 0;
		}
		errno = EINVAL;
		return -1;
	}
	rc = real.shmctl(id, cmd, buf);
	if (rc == 0 && cmd == IPC_STAT && inj.stat_marked && id == inj.stat_id && inj.ro_attached) {
		buf->shm_perm.mode |= 01000;
		buf->shm_perm.__key = IPC_PRIVATE;
	}
	if (cmd == IPC_STAT)
		inj.ro_attached = 0;
	return rc;
}

static void *h_shmat(int id, const void *addr, int flags)
{
	void *p;

	if ((flags & SHM_RDONLY) && inj.shmat_ro_errno) {
		errno = inj.shmat_ro_errno;
		return (void *)-1;
	}
	if (!(flags & SHM_RDONLY) && inj.shmat_errno) {
		if (id == FAKE_ID && inj.gone_on_shmat)
			fake.live = 0;
		errno = inj.shmat_errno;
		return (void *)-1;
	}
	if (id == FAKE_ID) {
		if (!fake.live || fake.at) {
			errno = EINVAL;
			return (void *)-1;
		}
		fake.len = round_up(fake.segsz, 2 * MIB);
		if (addr && !fake.elsewhere)
			p = mmap((void *)(uintptr_t)addr, fake.len, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		else
			p = mmap(NULL, fake.len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			errno = EINVAL;
			return (void *)-1;
		}
		if (addr && p == addr && fake.elsewhere) {
			void *q = mmap(NULL, fake.len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

			(void)munmap(p, fake.len);
			p = q;
		}
		fake.at = p;
		hpt_fakeroot_smaps_huge(p, fake.len, 2 * MIB);
		return p;
	}
	p = real.shmat(id, addr, flags);
	if (p != (void *)-1 && (flags & SHM_RDONLY)) {
		inj.ro_attached = 1;
		inj.ro_live++;
	}
	return p;
}

static int h_shmdt(const void *addr)
{
	int rc;

	if (inj.shmdt_errno) {
		errno = inj.shmdt_errno;
		inj.shmdt_errno = 0;
		return -1;
	}
	if (fake.at && addr == fake.at) {
		(void)munmap(fake.at, fake.len);
		hpt_fakeroot_smaps_real();
		fake.at = NULL;
		if (fake.dest)
			fake.live = 0;
		return 0;
	}
	rc = real.shmdt(addr);
	if (rc == 0 && inj.ro_live)
		inj.ro_live--;
	return rc;
}

static int h_madvise(void *addr, size_t len, int advice)
{
	if (advice == 22 /* MADV_POPULATE_READ */ && inj.madvise_errno) {
		errno = inj.madvise_errno;
		return -1;
	}
	return real_linux.madvise(addr, len, advice);
}

/* ---- suite ---- */

static hpshm_config *cfg;
static int fds_before;
static char name[64];   /* this test's segment name */
static int made = -1;   /* a real segment the test made, removed by .fini */

/* What .fini undoes, and a skip (hpt_fixture_undo_on_skip()): what is still there. */
static void sysv_undo(void)
{
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	if (fake.at)
		(void)munmap(fake.at, fake.len);
	fake.at = NULL;
	if (made >= 0)
		(void)shmctl(made, IPC_RMID, NULL);
	made = -1;
	hpshm_config_free(cfg);
	cfg = NULL;
	hpt_fakeroot_destroy();
}

static void sysv_init(void)
{
	hpt_fixture_init();
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	real = hpshm__posix_sys;
	real_linux = hpshm__linux_sys;
	memset(&fake, 0, sizeof fake);
	memset(&inj, 0, sizeof inj);
	made = -1;
	hpt_fakeroot_create(64, 64);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(name, sizeof name, "hpt-paths-sysv-%ld", (long)getpid());
	hpshm__posix_sys.shmget = h_shmget;
	hpshm__posix_sys.shmctl = h_shmctl;
	hpshm__posix_sys.shmat = h_shmat;
	hpshm__posix_sys.shmdt = h_shmdt;
	hpshm__linux_sys.madvise = h_madvise;
	fds_before = hpt_fd_count();
	hpt_fixture_undo_on_skip(sysv_undo);
}

static void sysv_fini(void)
{
	sysv_undo();
	hpt_fixture_fini();
}

TestSuite(paths_sysv, .init = sysv_init, .fini = sysv_fini, .timeout = 60);

#define set(...) hpt_config_parsef(cfg, __VA_ARGS__)

/* Nothing of the fake segment, and no read-only look, is left. */
static void assert_nothing_left(void)
{
	cr_assert_null(fake.at, "the fake segment is still attached");
	cr_assert(!fake.live, "the fake segment was not removed");
	cr_assert_eq(inj.ro_live, 0u, "a read-only look is still attached");
	cr_assert_eq(hpt_fd_count(), fds_before, "descriptors: %d before, %d after", fds_before, hpt_fd_count());
}

/* A failed create: the report's first attempt, the error in *err. */
static hpshm_attempt create_fails(size_t size, hpshm_error *err)
{
	hpshm_report r;
	hpshm_error e = hpt_create_fails(cfg, size, &r);

	cr_assert_str_eq(r.attempts[0].provider, "sysv_hugetlb");
	if (err)
		*err = e;
	return r.attempts[0];
}

/* The key sysv_hugetlb gives a name (its top comment). */
static key_t key_of(const char *n)
{
	uint32_t h = hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "hpshm:", 6);

	h = hpshm__fnv1a32(h, n, strlen(n));
	return (key_t)(0x48000000u | (h & 0x00ffffffu));
}

/* An address range of len bytes that nothing maps now, aligned to align. */
static uintptr_t free_range(size_t len, size_t align)
{
	return hpt_free_address(len, align);
}

/* ---- shmget refused, per errno ---- */

Test(paths_sysv, shmget_out_of_shmall_or_shmmni_is_unavailable_with_the_hint)
{
	hpshm_error err;
	hpshm_attempt a;

	set("provider=sysv_hugetlb,huge_pages=on");
	inj.create_errno = ENOSPC;
	a = create_fails(4 * MIB, &err);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmget");
	cr_assert_eq(a.sys_errno, ENOSPC);
	cr_assert(hpt_contains(err.hint, "shmall"), "hint: %s", err.hint);
	assert_nothing_left();
}

Test(paths_sysv, shmget_refusing_the_size_is_unavailable_with_the_shmmax_hint)
{
	hpshm_error err;
	hpshm_attempt a;

	set("provider=sysv_hugetlb,huge_pages=on");
	inj.create_errno = EINVAL;
	a = create_fails(4 * MIB, &err);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert_eq(a.sys_errno, EINVAL);
	cr_assert(hpt_contains(err.hint, "shmmax"), "hint: %s", err.hint);
	assert_nothing_left();
}

Test(paths_sysv, shmget_failing_otherwise_is_esys)
{
	hpshm_attempt a;

	set("provider=sysv_hugetlb,huge_pages=on");
	inj.create_errno = ENFILE;
	a = create_fails(4 * MIB, NULL);
	cr_assert_eq(a.result, HPSHM_ESYS, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmget");
	cr_assert_eq(a.sys_errno, ENFILE);
	assert_nothing_left();
}

Test(paths_sysv, a_named_shmget_refused_is_reported_as_an_unnamed_one_is)
{
	hpshm_error err;
	hpshm_attempt a;

	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	inj.create_errno = ENOSPC;
	a = create_fails(4 * MIB, &err);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmget");
	cr_assert_eq(a.sys_errno, ENOSPC);
	assert_nothing_left();
}

/* ---- the kernel attaching somewhere else than asked ---- */

static void create_attached_elsewhere(int named)
{
	hpshm_error err;
	hpshm_attempt a;
	uintptr_t at = free_range(8 * MIB, 2 * MIB);

	if (named)
		set("provider=sysv_hugetlb,huge_pages=on,name=%s,base_address=%#lx", name, (unsigned long)at);
	else
		set("provider=sysv_hugetlb,huge_pages=on,base_address=%#lx", (unsigned long)at);
	fake.on = 1;
	fake.elsewhere = 1;   /* a broken kernel or shim */
	a = create_fails(4 * MIB, &err);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmat");
	cr_assert(hpt_contains(a.reason, "not at base_address"), "%s", a.reason);
	cr_assert_eq(hpt_is_mapped((void *)at, 4 * MIB), 0);
	assert_nothing_left();
}

Test(paths_sysv, create_attached_elsewhere_than_base_address_detaches_and_removes_it)
{
	create_attached_elsewhere(0);
}

Test(paths_sysv, a_named_create_attached_elsewhere_than_base_address_removes_it)
{
	create_attached_elsewhere(1);
}

/* ---- destroy ---- */

Test(paths_sysv, destroy_that_may_not_remove_a_named_segment_is_esys_and_still_detaches)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	fake.on = 1;
	rc = hpshm_segment_create(&seg, 4 * MIB, cfg, &err);
	if (rc != 0)
		hpt_skip_emulated_refusal(rc, &err);   /* the fake smaps names the emulator's addresses */
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert(!fake.dest, "a named segment is marked only at destroy");
	inj.rmid_errno = EPERM;
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	cr_assert_null(fake.at, "destroy did not detach");
	/* what the refused removal left */
	inj.rmid_errno = 0;
	cr_assert_eq(hpshm__posix_sys.shmctl(FAKE_ID, IPC_RMID, NULL), 0);
	assert_nothing_left();
}

Test(paths_sysv, destroy_whose_detach_fails_is_esys)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	set("provider=sysv_hugetlb,huge_pages=on");
	fake.on = 1;
	rc = hpshm_segment_create(&seg, 4 * MIB, cfg, &err);
	if (rc != 0)
		hpt_skip_emulated_refusal(rc, &err);   /* the fake smaps names the emulator's addresses */
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert(fake.dest, "an unnamed segment is marked at once");
	inj.shmdt_errno = EINVAL;
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	cr_assert_eq(hpshm__posix_sys.shmdt(fake.at), 0);   /* what the failed detach left */
	assert_nothing_left();
}

/* ---- attach by shm=<id> ---- */

/* A token for the fake segment of 4 MiB at a free address, check digits and all. */
static void forged_token(char *tok, size_t len, uintptr_t at)
{
	int n = snprintf(tok, len, "hpshm2:sysv_hugetlb:shm=%d:%zx:%zx:%lx:%016llx:tail:", FAKE_ID, 4 * MIB, 2 * MIB,
			 (unsigned long)at, 0x1234567890abcdefULL);

	cr_assert(n > 0 && (size_t)n + 9 < len);
	snprintf(tok + n, len - (size_t)n, "%08x", hpshm__fnv1a32(HPSHM__FNV1A32_INIT, tok, (size_t)n));
}

/* The fake segment exists (4 MiB, SYSV_MARK short), nobody attached; attach must fail with want. */
static hpshm_error attach_fails(int want, uintptr_t *at_out)
{
	char tok[HPSHM_TOKEN_MAX];
	hpshm_segment *seg = NULL;
	hpshm_error err;
	uintptr_t at = free_range(8 * MIB, 2 * MIB);
	int rc;

	fake.live = 1;
	fake.segsz = 4 * MIB - MARK;
	forged_token(tok, sizeof tok, at);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_attach(&seg, tok, NULL, &err);
	cr_assert_eq(rc, want, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	cr_assert_null(fake.at, "a failed attach left the segment attached");
	cr_assert_eq(hpt_is_mapped((void *)at, 4 * MIB), 0);
	if (at_out)
		*at_out = at;
	fake.live = 0;
	assert_nothing_left();
	return err;
}

Test(paths_sysv, attach_that_may_not_read_the_segment_is_eacces_with_the_user_hint)
{
	hpshm_error err;

	inj.stat_errno = EACCES;
	inj.stat_id = FAKE_ID;
	err = attach_fails(HPSHM_EACCES, NULL);
	cr_assert_str_eq(err.call, "shmctl");
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert(hpt_contains(err.hint, "creator's user"), "hint: %s", err.hint);
}

Test(paths_sysv, attach_that_may_not_attach_the_segment_is_eacces_with_the_user_hint)
{
	hpshm_error err;

	inj.shmat_errno = EACCES;
	err = attach_fails(HPSHM_EACCES, NULL);
	cr_assert_str_eq(err.call, "shmat");
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert(hpt_contains(err.hint, "creator's user"), "hint: %s", err.hint);
}

Test(paths_sysv, attach_to_a_segment_destroyed_while_attaching_is_einval)
{
	hpshm_error err;

	inj.shmat_errno = EIDRM;
	inj.gone_on_shmat = 1;   /* the creator's last detach, between the look and the attach */
	err = attach_fails(HPSHM_EINVAL, NULL);
	cr_assert_str_eq(err.call, "shmat");
	cr_assert_eq(err.sys_errno, EIDRM);
	cr_assert(hpt_contains(err.message, "went away"), "%s", err.message);
}

Test(paths_sysv, attach_over_a_taken_range_that_maps_shows_nothing_is_eexist)
{
	hpshm_error err;

	if (hpt_emulator()) {
		/* The library reads maps through the fake tree's link to the real /proc/self, and
		 * through a link an emulator shows its own maps, not the guest's: qemu-i386 there
		 * shows the guest's whole low memory reserved, so no range "shows nothing". */
		HPT_SKIP("under %s /proc/self/maps read through a link is the emulator's own", hpt_emulator());
	}
	inj.shmat_errno = EINVAL;   /* the segment is there (IPC_STAT says so): the range is taken */
	err = attach_fails(HPSHM_EEXIST, NULL);
	cr_assert_str_eq(err.call, "shmat");
	cr_assert(hpt_contains(err.message, "another mapping overlaps"), "%s", err.message);
	cr_assert(hpt_contains(err.hint, "base_address"), "hint: %s", err.hint);
}

Test(paths_sysv, attach_that_the_kernel_puts_elsewhere_is_undone_and_eexist)
{
	hpshm_error err;

	fake.elsewhere = 1;
	err = attach_fails(HPSHM_EEXIST, NULL);
	cr_assert_str_eq(err.call, "shmat");
	cr_assert(hpt_contains(err.message, "not at"), "%s", err.message);
}

/* ---- a name's key held by a segment that is not hpshm's (no pool needed) ---- */

/* A SysV segment of base pages, size bytes, under the key of this test's name. */
static void hold_the_key(size_t size)
{
	made = shmget(key_of(name), size, IPC_CREAT | IPC_EXCL | 0600);
	cr_assert_geq(made, 0, "shmget of a plain segment under key %#x: %s", (unsigned)key_of(name), strerror(errno));
}

static void assert_still_there(void)
{
	struct shmid_ds ds;

	cr_assert_eq(shmctl(made, IPC_STAT, &ds), 0, "another program's segment was removed");
	cr_assert_eq(ds.shm_perm.mode & 01000, 0, "another program's segment was marked for removal");
}

Test(paths_sysv, a_key_held_by_a_segment_of_base_pages_is_eexist_and_kept)
{
	hpshm_error err;
	hpshm_attempt a;

	hold_the_key(2 * MIB);
	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	a = create_fails(4 * MIB, &err);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmget");
	cr_assert(hpt_contains(a.reason, "not hpshm's") && hpt_contains(a.reason, "not hugetlb"), "%s", a.reason);
	cr_assert(hpt_contains(err.hint, "ipcrm"), "hint: %s", err.hint);
	assert_still_there();
	assert_nothing_left();
}

Test(paths_sysv, a_key_held_by_a_segment_this_user_may_not_read_is_eexist_naming_shmctl)
{
	hpshm_attempt a;

	hold_the_key(2 * MIB);
	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	inj.stat_errno = EACCES;
	inj.stat_id = made;
	a = create_fails(4 * MIB, NULL);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmctl");
	cr_assert_eq(a.sys_errno, EACCES);
	inj.stat_errno = 0;
	assert_still_there();
	assert_nothing_left();
}

Test(paths_sysv, a_key_held_by_a_segment_this_user_may_not_attach_is_eexist_naming_shmat)
{
	hpshm_attempt a;

	hold_the_key(2 * MIB);
	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	inj.shmat_ro_errno = EACCES;
	a = create_fails(4 * MIB, NULL);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmat");
	cr_assert_eq(a.sys_errno, EACCES);
	assert_still_there();
	assert_nothing_left();
}

Test(paths_sysv, a_key_whose_segment_vanishes_under_every_look_gives_up_and_detaches_each_look)
{
	hpshm_attempt a;

	hold_the_key(2 * MIB);
	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	inj.stat_errno = EIDRM;   /* each look: attached, then IPC_STAT says it went */
	inj.stat_id = made;
	inj.stat_after_ro = 1;
	a = create_fails(4 * MIB, NULL);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert(hpt_contains(a.reason, "keeps being re-created"), "%s", a.reason);
	inj.stat_errno = 0;
	assert_still_there();
	assert_nothing_left();
}

/* ---- what ls lists ---- */

struct seen {
	hpshm_object obj;   /* the object listed as shm=<made> */
	int          hits;
};

static int see_one(void *user, const hpshm_object *o)
{
	struct seen *s = user;
	char id[32];

	snprintf(id, sizeof id, "shm=%d", made);
	if (strcmp(o->id, id) == 0) {
		s->obj = *o;
		s->hits++;
	}
	return 0;
}

static struct seen list_made(void)
{
	struct seen s;
	hpshm_error err;

	memset(&s, 0, sizeof s);
	cr_assert_geq(hpshm_objects_list(see_one, &s, &err), 0, "%s", err.message);
	return s;
}

Test(paths_sysv, ls_never_lists_a_segment_outside_hpshms_keys)
{
	made = shmget((key_t)0x12ab34cd, 2 * MIB, IPC_CREAT | IPC_EXCL | 0600);
	if (made < 0 && errno == EEXIST)
		HPT_SKIP("key 0x12ab34cd is taken by another program here");
	cr_assert_geq(made, 0, "%s", strerror(errno));
	cr_assert_eq(list_made().hits, 0, "a segment outside hpshm's keys was listed");
	cr_assert_eq(inj.ro_live, 0u, "ls attached a segment that is none of its business");
	assert_still_there();
}

Test(paths_sysv, ls_lists_a_segment_of_base_pages_under_an_hpshm_key_as_foreign)
{
	struct seen s;

	hold_the_key(2 * MIB);
	s = list_made();
	cr_assert_eq(s.hits, 1);
	cr_assert_eq(s.obj.state, HPSHM_OBJECT_FOREIGN, "state %d: %s", s.obj.state, s.obj.note);
	cr_assert(hpt_contains(s.obj.note, "not hugetlb"), "%s", s.obj.note);
	cr_assert_eq(inj.ro_live, 0u, "ls left its look attached");
	assert_still_there();
}

Test(paths_sysv, ls_skips_a_segment_it_may_not_read)
{
	hold_the_key(2 * MIB);
	inj.stat_errno = EACCES;
	inj.stat_id = made;
	cr_assert_eq(list_made().hits, 0);
	assert_still_there();
}

Test(paths_sysv, ls_skips_a_segment_marked_for_removal_since_its_line_was_read_and_detaches)
{
	hold_the_key(2 * MIB);
	inj.stat_marked = 1;
	inj.stat_id = made;
	cr_assert_eq(list_made().hits, 0, "a segment no longer in hpshm's name space was listed");
	cr_assert_eq(inj.ro_live, 0u, "ls left its look attached");
	assert_still_there();
}

/* ---- requirements: a callback that says stop ---- */

struct stop_at {
	const char *what;    /* stop at the first requirement of this kind */
	unsigned    after;   /* requirements of sysv_hugetlb seen after the stop */
	int         stopped;
};

static int stop_cb(void *user, const char *provider, const hpshm_requirement *r)
{
	struct stop_at *s = user;

	if (strcmp(provider, "sysv_hugetlb") != 0)
		return 0;
	if (s->stopped) {
		s->after++;
		return 0;
	}
	if (strcmp(r->what, s->what) == 0) {
		s->stopped = 1;
		return 1;
	}
	return 0;
}

static void requirements_stop_at(const char *what)
{
	struct stop_at s;
	hpshm_error err;

	memset(&s, 0, sizeof s);
	s.what = what;
	set("provider=sysv_hugetlb");
	cr_assert_geq(hpshm_requirements(4 * MIB, 2 * MIB, cfg, stop_cb, &s, &err), 0, "%s", err.message);
	cr_assert(s.stopped, "sysv_hugetlb gave no %s requirement", what);
	cr_assert_eq(s.after, 0u, "sysv_hugetlb went on after its callback said stop at %s", what);
}

Test(paths_sysv, requirements_stop_when_the_callback_says_so_at_the_pool)
{
	requirements_stop_at("pool");
}

Test(paths_sysv, requirements_stop_when_the_callback_says_so_at_the_privilege)
{
	requirements_stop_at("sysv_privilege");
}

Test(paths_sysv, requirements_stop_when_the_callback_says_so_at_a_short_shmmax)
{
	char v[512];

	/* The tree links the real file: replace the link, never write through it. */
	snprintf(v, sizeof v, "%s/proc/sys/kernel/shmmax", hpt_fakeroot_dir());
	cr_assert_eq(unlink(v), 0, "%s: %s", v, strerror(errno));
	snprintf(v, sizeof v, "%zu\n", 2 * MIB);
	hpt_fakeroot_write("proc/sys/kernel/shmmax", v);
	requirements_stop_at("sysv_limits");
}

/* ---- a name's key held by a hugetlb segment that proves nothing (these need the pool) ---- */

/* Skip (or fail where required) without `pages` free 2 MiB pages (the skip undoes the setup). */
#define NEED_POOL(pages)                                                                            \
	do {                                                                                        \
		struct hpt_pool p_;                                                                 \
		const char *emu_ = hpt_emulator_refuses_sysv_hugetlb(2 * MIB);                      \
		if (emu_)                                                                           \
			HPT_SKIP("%s", emu_);                                                       \
		if (hpt_pool_read(2 * MIB, &p_) < 0 || hpt_pool_available(&p_) < (pages))           \
			HPT_UNAVAILABLE_PAGES("sysv_hugetlb", "2MiB", (pages),                      \
					      "needs %d free 2MiB pages for a SysV hugetlb segment", (pages)); \
	} while (0)

/* A SysV segment of 2 MiB pages, size bytes, under the key of this test's name, made by this
 * process (which so is its running creator); its tail holds tail (NULL: zeros). */
static void hold_the_key_huge(size_t size, const void *tail, size_t tail_len)
{
	char *p;

	made = shmget(key_of(name), size, IPC_CREAT | IPC_EXCL | SHM_HUGETLB | (21 << 26) | 0600);
	cr_assert_geq(made, 0, "shmget(SHM_HUGETLB) under key %#x: %s", (unsigned)key_of(name), strerror(errno));
	if (tail) {
		p = shmat(made, NULL, 0);
		cr_assert_neq(p, (void *)-1, "%s", strerror(errno));
		memcpy(p + round_up(size, 2 * MIB) - HPSHM_HEADER_REGION, tail, tail_len);
		cr_assert_eq(shmdt(p), 0);
	}
}

/* The fake tree's /proc/stat and /proc/<this pid>: links to the real ones. */
static void link_real_proc(void)
{
	char path[512], target[64];

	snprintf(path, sizeof path, "%s/proc/stat", hpt_fakeroot_dir());
	cr_assert_eq(symlink("/proc/stat", path), 0, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof path, "%s/proc/%ld", hpt_fakeroot_dir(), (long)getpid());
	snprintf(target, sizeof target, "/proc/%ld", (long)getpid());
	cr_assert_eq(symlink(target, path), 0, "%s: %s", path, strerror(errno));
}

static hpshm_attempt create_over_the_key(void)
{
	hpshm_attempt a;

	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	a = create_fails(4 * MIB, NULL);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "shmget");
	assert_still_there();
	assert_nothing_left();
	return a;
}

Test(paths_sysv, a_key_held_by_a_headerless_hugetlb_segment_nobody_holds_points_at_gc_force)
{
	hpshm_attempt a;

	NEED_POOL(1);
	hold_the_key_huge(2 * MIB, NULL, 0);
	a = create_over_the_key();
	cr_assert(hpt_contains(a.reason, "without hpshm's header or mark"), "%s", a.reason);
}

Test(paths_sysv, a_key_held_by_a_headerless_hugetlb_segment_someone_attaches_is_in_use)
{
	hpshm_attempt a;
	void *other;

	NEED_POOL(1);
	hold_the_key_huge(2 * MIB, NULL, 0);
	other = shmat(made, NULL, SHM_RDONLY);   /* another process of the program, say */
	cr_assert_neq(other, (void *)-1);
	a = create_over_the_key();
	cr_assert(hpt_contains(a.reason, "in use") && hpt_contains(a.reason, "no hpshm header"), "%s", a.reason);
	cr_assert_eq(shmdt(other), 0);
}

Test(paths_sysv, a_key_held_by_a_marked_segment_whose_creator_runs_is_being_created)
{
	hpshm_attempt a;
	char pid[32];

	NEED_POOL(1);
	link_real_proc();   /* the creator's start time, against the segment's */
	hold_the_key_huge(2 * MIB - MARK, NULL, 0);   /* a create of ours, before its header */
	a = create_over_the_key();
	snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
	cr_assert(hpt_contains(a.reason, "being created") && hpt_contains(a.reason, pid), "%s", a.reason);
}

Test(paths_sysv, a_key_held_by_a_segment_with_a_torn_header_whose_creator_runs_is_being_created)
{
	struct hpshm_header h;
	hpshm_attempt a;

	NEED_POOL(1);
	memset(&h, 0, sizeof h);
	h.version = HPSHM_HEADER_VERSION;
	h.header_size = (uint32_t)sizeof h;
	snprintf(h.provider, sizeof h.provider, "sysv_hugetlb");   /* all but the magic */
	hold_the_key_huge(2 * MIB, &h, sizeof h);
	a = create_over_the_key();
	cr_assert(hpt_contains(a.reason, "being created"), "%s", a.reason);
}

Test(paths_sysv, a_key_held_by_a_hugetlb_segment_with_a_foreign_tail_is_eexist_and_kept)
{
	char junk[64];
	hpshm_attempt a;

	NEED_POOL(1);
	memset(junk, 'x', sizeof junk);
	hold_the_key_huge(2 * MIB, junk, sizeof junk);
	a = create_over_the_key();
	cr_assert(hpt_contains(a.reason, "not hpshm's") && hpt_contains(a.reason, "tail"), "%s", a.reason);
}

Test(paths_sysv, a_key_held_by_a_hugetlb_segment_of_a_size_hpshm_never_asks_is_foreign)
{
	hpshm_attempt a;

	NEED_POOL(1);
	hold_the_key_huge(1 * MIB, NULL, 0);   /* neither whole pages nor the mark */
	a = create_over_the_key();
	cr_assert(hpt_contains(a.reason, "not hpshm's") && hpt_contains(a.reason, "size"), "%s", a.reason);
}

Test(paths_sysv, a_segment_whose_tail_cannot_be_faulted_in_is_never_taken_for_debris)
{
	hpshm_attempt a;

	NEED_POOL(1);
	hold_the_key_huge(2 * MIB, NULL, 0);
	inj.madvise_errno = EFAULT;   /* what an empty pool gives a SHM_NORESERVE segment */
	a = create_over_the_key();
	cr_assert(hpt_contains(a.reason, "not hpshm's"), "%s", a.reason);
}

/* ---- without CAP_IPC_LOCK, read from the (fake) /proc/self/status ---- */

/* Replace a file of the fake tree that may be a link to the real one: never write through it. */
static void replace(const char *rel, const char *content)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", hpt_fakeroot_dir(), rel);
	(void)unlink(path);
	hpt_fakeroot_write(rel, content);
}

static int sysv_probe(char *reason, size_t len)
{
	size_t ps = 0;

	reason[0] = '\0';
	return hpshm_provider_probe("sysv_hugetlb", 4 * MIB, NULL, &ps, reason, len);
}

struct privilege {
	int  met;   /* the sysv_privilege need as reported, -1 if none */
	int  limits; /* sysv_limits needs reported */
	char now[HPSHM_REQUIREMENT_TEXT];
};

static int keep_privilege(void *user, const char *provider, const hpshm_requirement *r)
{
	struct privilege *p = user;

	if (strcmp(provider, "sysv_hugetlb") != 0)
		return 0;
	if (strcmp(r->what, "sysv_privilege") == 0) {
		p->met = r->met;
		snprintf(p->now, sizeof p->now, "%s", r->now[0]);
	}
	if (strcmp(r->what, "sysv_limits") == 0)
		p->limits++;
	return 0;
}

Test(paths_sysv, without_cap_ipc_lock_and_outside_the_group_probe_and_plan_name_the_group)
{
	char reason[HPSHM_TEXT_MAX], cmd[64];
	struct privilege p;
	hpshm_error err;

	replace("proc/self/status", "Name:\thpt\nCapEff:\t0000000000000000\n");
	replace("proc/sys/vm/hugetlb_shm_group", "54321\n");   /* a group this process is not in */
	cr_assert_eq(sysv_probe(reason, sizeof reason), HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(reason, "not in vm.hugetlb_shm_group (gid 54321)"), "%s", reason);
	memset(&p, 0, sizeof p);
	p.met = -1;
	cr_assert_geq(hpshm_requirements(4 * MIB, 2 * MIB, NULL, keep_privilege, &p, &err), 1, "%s", err.message);
	cr_assert_eq(p.met, 0, "the privilege was reported as met");
	snprintf(cmd, sizeof cmd, "sysctl -w vm.hugetlb_shm_group=%ld", (long)getegid());
	cr_assert_str_eq(p.now, cmd);
}

Test(paths_sysv, without_cap_ipc_lock_and_an_unreadable_group_probe_asks_for_the_capability)
{
	char reason[HPSHM_TEXT_MAX];

	replace("proc/self/status", "Name:\thpt\nCapEff:\t0000000000000000\n");
	replace("proc/sys/vm/hugetlb_shm_group", "staff\n");
	cr_assert_eq(sysv_probe(reason, sizeof reason), HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(reason, "cannot read vm.hugetlb_shm_group"), "%s", reason);
}

Test(paths_sysv, limits_the_kernel_does_not_show_are_neither_checked_nor_planned)
{
	char reason[HPSHM_TEXT_MAX], path[512];
	struct privilege p;
	hpshm_error err;

	/* An IPC namespace whose /proc/sys/kernel/shm* cannot be read */
	snprintf(path, sizeof path, "%s/proc/sys/kernel/shmmax", hpt_fakeroot_dir());
	cr_assert_eq(unlink(path), 0, "%s", strerror(errno));
	snprintf(path, sizeof path, "%s/proc/sys/kernel/shmall", hpt_fakeroot_dir());
	cr_assert_eq(unlink(path), 0, "%s", strerror(errno));
	snprintf(path, sizeof path, "%s/proc/sys/kernel/shmmni", hpt_fakeroot_dir());
	cr_assert_eq(unlink(path), 0, "%s", strerror(errno));
	cr_assert_eq(sysv_probe(reason, sizeof reason), 0, "%s", reason);
	memset(&p, 0, sizeof p);
	cr_assert_geq(hpshm_requirements(4 * MIB, 2 * MIB, NULL, keep_privilege, &p, &err), 1, "%s", err.message);
	cr_assert_eq(p.limits, 0, "limits nobody can read were planned");
}

/* ---- ls when /proc/sysvipc/shm cannot be read ---- */

static FILE *h_fopen_eacces(const char *path, const char *mode)
{
	size_t n = strlen(path), k = strlen("/proc/sysvipc/shm");

	if (n >= k && strcmp(path + n - k, "/proc/sysvipc/shm") == 0) {
		errno = EACCES;
		return NULL;
	}
	return real.fopen(path, mode);
}

static FILE *h_fopen_enoent(const char *path, const char *mode)
{
	size_t n = strlen(path), k = strlen("/proc/sysvipc/shm");

	if (n >= k && strcmp(path + n - k, "/proc/sysvipc/shm") == 0) {
		errno = ENOENT;
		return NULL;
	}
	return real.fopen(path, mode);
}

static int count_sysv(void *user, const hpshm_object *o)
{
	if (strcmp(o->provider, "sysv_hugetlb") == 0)
		(*(int *)user)++;
	return 0;
}

Test(paths_sysv, ls_that_may_not_read_the_sysv_list_fails_naming_the_provider)
{
	hpshm_error err;
	int n = 0;

	hpshm__posix_sys.fopen = h_fopen_eacces;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_objects_list(count_sysv, &n, &err), HPSHM_EIO, "%s", err.message);
	cr_assert(hpt_contains(err.message, "sysv_hugetlb"), "%s", err.message);
}

Test(paths_sysv, ls_on_a_kernel_without_sysv_ipc_lists_no_sysv_segment)
{
	hpshm_error err;
	int n = 0;

	hold_the_key(2 * MIB);   /* there, but the kernel shows no list */
	hpshm__posix_sys.fopen = h_fopen_enoent;
	cr_assert_geq(hpshm_objects_list(count_sysv, &n, &err), 0, "%s", err.message);
	cr_assert_eq(n, 0);
}

/* ---- a fake segment under the name's key, without a pool ---- */

static int h_shmget_taken(key_t key, size_t size, int flags)
{
	if (key == key_of(name) && (flags & IPC_CREAT) && (flags & IPC_EXCL)) {
		errno = EEXIST;
		return -1;
	}
	if (key == key_of(name) && !(flags & IPC_CREAT))
		return FAKE_ID;
	return real.shmget(key, size, flags);
}

Test(paths_sysv, a_marked_segment_whose_creator_is_in_another_pid_namespace_is_never_taken_for_debris)
{
	hpshm_attempt a;

	fake.live = 1;
	fake.segsz = 2 * MIB - MARK;   /* hpshm's mark, no header yet */
	fake.cpid = -1;                /* IPC_STAT says shm_cpid 0: a creator we cannot see */
	hpshm__posix_sys.shmget = h_shmget_taken;
	set("provider=sysv_hugetlb,huge_pages=on,name=%s", name);
	a = create_fails(4 * MIB, NULL);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert(hpt_contains(a.reason, "being created by pid 0"), "%s", a.reason);
	cr_assert(!fake.dest, "a segment whose creator may run was marked for removal");
	cr_assert_null(fake.at, "the look was left attached");
	fake.live = 0;
	assert_nothing_left();
}
