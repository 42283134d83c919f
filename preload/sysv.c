/* SPDX-License-Identifier: MIT */
/*
 * preload/sysv.c -- shmget, shmat and shmctl: SysV segments on huge pages, under hpshm's policy.
 *
 * shmget(IPC_CREAT) of at least the threshold is a different case from mmap's.  SysV
 * callers rely on the key, IPC_PRIVATE, IPC_EXCL, shm_nattch (PostgreSQL's interlock reads
 * it), the id being usable by other processes, and IPC_RMID; only a real SysV segment keeps
 * all of that.  So the request goes to the kernel with SHM_HUGETLB (and the size bits of the
 * huge page size) added, and every SysV semantic stays the kernel's.  The page size is the
 * library's choice, not ours: what the sysv_hugetlb provider's probe picks for the request
 * and the configuration (hpshm_provider_probe(): huge_page_size=default, largest or a size),
 * and a refusal names the pool as the library counts it (its overcommit room included).  hpshm's
 * policy still decides: with huge_pages=try an ENOMEM or EPERM from the huge request is
 * retried as asked, without SHM_HUGETLB; with on the call fails with the kernel's errno
 * (ENOMEM: the pool; EPERM: not in vm.hugetlb_shm_group), and with ENOMEM when the kernel
 * offers no huge pages at all.  SHM_NORESERVE requests are passed on unchanged, as
 * MAP_NORESERVE ones are: SHM_HUGETLB with SHM_NORESERVE reserves no huge page, so an empty
 * pool would not refuse the segment but kill the writer with SIGBUS at its first fault.
 * provider=auto,-sysv_hugetlb leaves shmget() alone.
 *
 * Each segment made is remembered (a table of slots, FREE -> BUSY -> LIVE by
 * compare-and-swap, as region.c's) until its report line is written: the page size is
 * verified from the kernel at its first shmat() in this process, which is when the line is
 * written.  shmdt() needs nothing; shmctl(IPC_RMID) drops the record and reports the
 * removal.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "preload.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include "ports/facts.h"
#include "ports/linux/flags.h"

#define PRELOAD_MAX_SHM 64 /* intercepted SysV ids remembered for their report */

/* One SysV segment shmget() made, until its report line is written or it is removed. */
struct shm_rec {
	atomic_int state;                /* enum slot_state */
	atomic_int reported;             /* 1 once its line is written */
	int        id;                   /* the shmid */
	long       key;                  /* its key, for the report */
	size_t     size;                 /* bytes asked for */
	size_t     page_size;            /* huge page size it has; 0 if base pages */
	size_t     tried;                /* huge page size SHM_HUGETLB asked for; 0 if none was offered */
	int        huge_errno;           /* errno of the SHM_HUGETLB attempt that failed, or 0 */
	long       maker;                /* the process whose shmget() made it */
	char       why[HPSHM_TEXT_MAX];  /* why huge pages were not used; empty if they were */
};

static struct shm_rec shms[PRELOAD_MAX_SHM];
static atomic_int nshms;

static struct shm_rec *shm_find(int id)
{
	for (int i = 0; i < PRELOAD_MAX_SHM; i++)
		if (atomic_load_explicit(&shms[i].state, memory_order_acquire) == SLOT_LIVE && shms[i].id == id)
			return &shms[i];
	return NULL;
}

/* Remember a segment shmget() made; a full table only costs its report line. */
static void shm_remember(int id, key_t key, size_t size, size_t page_size, size_t tried, int huge_errno,
			 const char *why)
{
	struct shm_rec *s = shm_find(id);
	int expected = SLOT_LIVE;

	/* An id seen before was removed behind our back and reused: the new segment replaces it. */
	if (s && atomic_compare_exchange_strong(&s->state, &expected, SLOT_BUSY))
		atomic_fetch_sub(&nshms, 1);
	else
		s = NULL;
	for (int i = 0; !s && i < PRELOAD_MAX_SHM; i++) {
		expected = SLOT_FREE;
		if (atomic_compare_exchange_strong(&shms[i].state, &expected, SLOT_BUSY))
			s = &shms[i];
	}
	if (!s)
		return;
	s->id = id;
	s->key = (long)key;
	s->size = size;
	s->page_size = page_size;
	s->tried = tried;
	s->huge_errno = huge_errno;
	s->maker = (long)getpid();
	snprintf(s->why, sizeof(s->why), "%s", why ? why : "");
	atomic_store(&s->reported, 0);
	atomic_fetch_add(&nshms, 1);
	atomic_store_explicit(&s->state, SLOT_LIVE, memory_order_release);
}

/* The report of a SysV segment, in hpshm's terms. */
static void shm_fill_report(const struct shm_rec *s, hpshm_report *r)
{
	hpshm_attempt *a;

	memset(r, 0, sizeof(*r));
	r->version = HPSHM_REPORT_VERSION;
	r->requested_size = s->size;
	r->policy = preload_cfg.policy;
	if (preload_cfg.policy != HPSHM_HUGE_OFF) {
		a = &r->attempts[r->nattempts++];
		snprintf(a->provider, sizeof(a->provider), "sysv_hugetlb");
		a->page_size = s->tried;
		a->result = s->why[0] ? HPSHM_EUNAVAILABLE : 0;
		a->sys_errno = s->huge_errno;
		/* No huge page size to ask for is the machine's answer (a probe's), not a provider the
		 * configuration left out: the fallback it causes is a real one. */
		snprintf(a->call, sizeof(a->call), "%s", s->huge_errno ? "shmget" : s->why[0] ? "probe" : "");
		snprintf(a->reason, sizeof(a->reason), "%s", s->why);
	}
	if (s->why[0] || preload_cfg.policy == HPSHM_HUGE_OFF) {
		a = &r->attempts[r->nattempts++];
		snprintf(a->provider, sizeof(a->provider), "sysv");
		a->page_size = preload_cfg.base_page;
	}
	snprintf(r->provider, sizeof(r->provider), "%s", s->page_size ? "sysv_hugetlb" : "sysv");
	r->requested_page_size = s->page_size ? s->page_size : preload_cfg.base_page;
	r->page_size = r->requested_page_size;
	r->mapped_size = s->size / r->page_size * r->page_size + (s->size % r->page_size ? r->page_size : 0);
	r->usable_size = s->size;
	r->huge = s->page_size != 0;
}

/* Write the segment's line once: at its first attach here (verified), or at its removal. */
static void shm_report(struct shm_rec *s, const void *addr)
{
	hpshm_report r;
	char extra[96];
	int expected = 0;

	if (!atomic_compare_exchange_strong(&s->reported, &expected, 1))
		return;
	shm_fill_report(s, &r);
	if (addr) {
		struct hpshm__backing b;

		/* What backs it, as the library verifies its own segments (PROCMAP_QUERY or smaps on Linux). */
		if (hpshm__os_backing((void *)(uintptr_t)addr, s->size, -1, &b) == 0 && b.page_size) {
			r.page_size = b.page_size;
			r.huge = b.huge;
			r.verified = 1;
			snprintf(r.verified_by, sizeof(r.verified_by), "%s", b.source);
		}
	}
	snprintf(extra, sizeof(extra), "\"shmid\":%d,\"key\":%ld", s->id, s->key);
	preload_report("shmget", addr, &r, NULL, extra);
}

/* The removal of a SysV segment, in the process that removed it. */
static void shm_report_end(const struct shm_rec *s)
{
	struct preload_end e;
	char extra[96];

	memset(&e, 0, sizeof(e));
	snprintf(extra, sizeof(extra), "\"shmid\":%d,\"key\":%ld", s->id, s->key);
	e.call = "shmctl";
	e.event = "destroy";
	e.size = s->size;
	e.provider = s->page_size ? "sysv_hugetlb" : "sysv";
	e.created_by = s->maker;
	e.extra = extra;
	preload_report_end(&e);
}

/*
 * The page size a SysV segment of size bytes asks for: the one the sysv_hugetlb provider would
 * use for it under the configuration (whether or not its probe expects it to work now: the
 * kernel answers that), or 0 with why set when it offers none.
 */
static size_t shm_page_size(size_t size, char *why, size_t len)
{
	size_t ps = 0;
	int rc;

	why[0] = '\0';
	preload_inside++;
	rc = hpshm_provider_probe("sysv_hugetlb", size, preload_cfg.cfg, &ps, why, len);
	preload_inside--;
	if (ps) {
		why[0] = '\0';
		return ps;
	}
	if (rc == HPSHM_ENOPROVIDER || !why[0])
		snprintf(why, len, "the sysv_hugetlb provider offers no huge page size here (%s)", hpshm_strerror(rc));
	return 0;
}

/* Pages of page_size a new segment could reserve now, as the library counts them; -1 if unknown. */
static long shm_pool_available(size_t page_size)
{
	struct hpshm__pool pool;
	long avail = -1;

	preload_inside++;
	if (hpshm__os_pool(page_size, &pool) == 0) {
		unsigned long n = hpshm__os_pool_available(&pool);

		avail = n > (unsigned long)LONG_MAX ? LONG_MAX : (long)n;
	}
	preload_inside--;
	return avail;
}

/* Why the SHM_HUGETLB request for ps-byte pages failed with e, in words an operator can act on. */
static void shm_why(int e, size_t size, size_t ps, char *why, size_t len)
{
	char s[32];

	if (e == EPERM) {
		snprintf(why, len, "shmget(SHM_HUGETLB) failed with EPERM: not in vm.hugetlb_shm_group and no "
			 "CAP_IPC_LOCK (set vm.hugetlb_shm_group to the server's group id)");
		return;
	}
	snprintf(why, len, "shmget(SHM_HUGETLB) failed with ENOMEM: the pool of %s pages has %ld available, the "
		 "segment needs %zu (raise vm.nr_hugepages)", hpshm_size_format(ps, s, sizeof(s)),
		 shm_pool_available(ps), size / ps + (size % ps != 0));
}

/*
 * huge_pages=on, and no huge pages for size bytes (s for people): the failure in the report
 * and on stderr.  Returns the errno the call fails with: the kernel's e where it gave one
 * (EPERM blamed on the pool would send the operator to vm.nr_hugepages, and PostgreSQL's
 * hint to SHMALL, for a group setting), else ENOMEM.
 */
static int shm_refuse(size_t size, size_t ps, const char *s, int e, const char *why)
{
	hpshm_report r;
	hpshm_error err;
	struct shm_rec tmp;

	memset(&tmp, 0, sizeof(tmp));
	tmp.size = size;
	tmp.tried = ps;
	tmp.huge_errno = e;
	snprintf(tmp.why, sizeof(tmp.why), "%s", why);
	shm_fill_report(&tmp, &r);
	r.nattempts = 1;
	memset(&err, 0, sizeof(err));
	err.code = HPSHM_ENOHUGE;
	err.sys_errno = e;
	snprintf(err.message, sizeof(err.message), "%s", why);
	preload_report("shmget", NULL, &r, &err, NULL);
	e = e ? e : ENOMEM;
	preload_say("shmget of %s refused (huge_pages=on): %s; the call fails with %s", s, why,
		    e == EPERM ? "EPERM" : "ENOMEM");
	return e;
}

/*
 * huge_pages=try, and no huge pages (why; e: the SHM_HUGETLB attempt's errno, or 0): the
 * request as asked, remembered and said.  The id, or -1 with the kernel's errno.
 */
static int shm_fall_back(key_t key, size_t size, int flags, size_t ps, int e, const char *s, const char *why)
{
	int id = next_shmget(key, size, flags);

	if (id < 0)
		return -1;
	shm_remember(id, key, size, 0, ps, e, why);
	preload_say("shmget of %s: huge pages not used, fell back to base pages (%s)", s, why);
	return id;
}

/* shmget(IPC_CREAT) at or above the threshold.  1 with *out set, or 0 to pass on. */
static int take_shmget(key_t key, size_t size, int flags, int *out)
{
	char why[HPSHM_TEXT_MAX], s[32];
	size_t ps;
	int id, e = 0;

	if (!preload_ready_for(size) || !preload_cfg.sysv)
		return 0;
	preload_size_text(size, s, sizeof(s));
	if (preload_cfg.policy == HPSHM_HUGE_OFF) {
		id = next_shmget(key, size, flags);
		if (id >= 0)
			shm_remember(id, key, size, 0, 0, 0, "");
		*out = id;
		return 1;
	}
	ps = shm_page_size(size, why, sizeof(why));
	if (ps) {
		id = next_shmget(key, size, flags | SHM_HUGETLB | (int)hpshm__linux_huge_bits(ps));
		if (id >= 0) {
			shm_remember(id, key, size, ps, ps, 0, NULL);
			*out = id;
			return 1;
		}
		e = errno;
		if (e != ENOMEM && e != EPERM) {
			/* EEXIST, EACCES, ENOENT, EINVAL, ENOSPC: the caller's answer, as for any shmget. */
			*out = -1;
			errno = e;
			return 1;
		}
		shm_why(e, size, ps, why, sizeof(why));
	}
	if (preload_cfg.policy == HPSHM_HUGE_ON) {
		e = shm_refuse(size, ps, s, e, why);
		*out = -1;
		errno = e;
		return 1;
	}
	*out = shm_fall_back(key, size, flags, ps, e, s, why);
	return 1;
}

int shmget(key_t key, size_t size, int flags)
{
	int id;

	/* SHM_NORESERVE goes on as asked: see the file's comment. */
	if (!preload_inside && (flags & IPC_CREAT) && !(flags & (SHM_HUGETLB | SHM_NORESERVE)) &&
	    take_shmget(key, size, flags, &id))
		return id;
	return next_shmget(key, size, flags);
}

void *shmat(int id, const void *addr, int flags)
{
	void *p = next_shmat(id, addr, flags);

	if (p != (void *)-1 && !preload_inside && atomic_load_explicit(&nshms, memory_order_acquire) > 0) {
		int saved = errno;
		struct shm_rec *s = shm_find(id);

		if (s) {
			preload_inside++;
			shm_report(s, p);
			preload_inside--;
		}
		errno = saved;
	}
	return p;
}

int shmctl(int id, int cmd, struct shmid_ds *buf)
{
	int rc = next_shmctl(id, cmd, buf);

	if (rc == 0 && cmd == IPC_RMID && !preload_inside && atomic_load_explicit(&nshms, memory_order_acquire) > 0) {
		int saved = errno;
		struct shm_rec *s = shm_find(id);
		int expected = SLOT_LIVE;

		if (s && atomic_compare_exchange_strong(&s->state, &expected, SLOT_BUSY)) {
			preload_inside++;
			shm_report(s, NULL); /* never attached here: the line says unverified */
			shm_report_end(s);
			preload_inside--;
			atomic_fetch_sub(&nshms, 1);
			atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
		}
		errno = saved;
	}
	return rc;
}
