/*
 * backends/sysv_hugetlb.c -- System V shared memory with SHM_HUGETLB.
 *
 * Mechanism: shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | SHM_HUGETLB | size bits | mode),
 * then shmat().  The segment is a file on the kernel's internal hugetlbfs mount; the shmid
 * names it to any process allowed to attach it.
 *
 * Operator setup:
 *   - pages in the pool of the requested size (vm.nr_hugepages or the sysfs file);
 *   - the privilege: CAP_IPC_LOCK, or membership in the single group vm.hugetlb_shm_group.
 *     Kernels before 5.x fell back to RLIMIT_MEMLOCK with a "deprecated" warning; 6.x
 *     returns EPERM even with a generous limit, so we do not count on that fallback;
 *   - kernel.shmmax at least the segment size, and room in kernel.shmall / kernel.shmmni.
 *     A container usually has its own IPC namespace with its own limits.
 *
 * Kernel quirks, and what we do about them:
 *   - The segment is marked for removal (IPC_RMID) right after the first shmat().  A SysV
 *     segment otherwise outlives a crash and keeps its huge pages until someone removes it
 *     by hand; marked, it disappears with its last detach, crash or not.  Linux (unlike
 *     other Unixes, see shmctl(2)) still lets a process shmat() a marked segment by its id
 *     for as long as the segment has attachments: the kernel only refuses once the segment
 *     is actually destroyed.  The re-attach work relies on exactly that: the creator stays
 *     attached while its exec'd children attach by id.  IPC_PRIVATE plus marking also means
 *     no key can collide with another program's.
 *   - shmat() is never given SHM_REMAP: with an address, a clash must fail (EINVAL), not
 *     silently replace another mapping.  An address not aligned to the huge page is refused
 *     up front, so an EINVAL from shmat() at an aligned address means a clash.
 *   - SHM_NORESERVE is never passed: the reservation at shmget() time is what keeps a
 *     later fault from raising SIGBUS.
 *   - shm_segsz reports the requested size while the kernel rounds the file up to the huge
 *     page; the core asks for a multiple of the page size, so the two agree.
 *
 * Capabilities: HUGE, REATTACH (by shmid), NAMED (the shmid is a name other processes use).
 *
 * Re-attach: the token carries m->id; a child started by exec calls shmat(id, addr, 0) and
 * compares the address.  It works while at least one process (normally the creator) keeps
 * the segment attached, which is also what PostgreSQL's EXEC_BACKEND path assumes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"

#define SYSV_DEFAULT_MODE 0600

static int sysv_probe(const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hpshm__sysv_limits lim;
	char sz[32], max[32];
	long gid;
	int rc;

	out->sys_errno = 0;
	out->reason[0] = '\0';
	rc = hpshm__hugetlb_probe(rq, out);
	if (rc < 0)
		return rc;

	if (!hpshm__has_cap_ipc_lock()) {
		gid = hpshm__hugetlb_shm_group();
		if (gid < 0) {
			snprintf(out->reason, sizeof(out->reason),
				 "cannot read vm.hugetlb_shm_group and no CAP_IPC_LOCK: grant CAP_IPC_LOCK");
			return HPSHM_EUNAVAILABLE;
		}
		if (!hpshm__in_group(gid)) {
			out->sys_errno = EPERM;
			snprintf(out->reason, sizeof(out->reason),
				 "not in vm.hugetlb_shm_group (gid %ld) and no CAP_IPC_LOCK: add the user to "
				 "that group or grant CAP_IPC_LOCK", gid);
			return HPSHM_EUNAVAILABLE;
		}
	}

	/* Limits the OS does not report read as 0: nothing to check then. */
	memset(&lim, 0, sizeof(lim));
	if (hpshm__sysv_limits(&lim) == 0) {
		if (lim.shmmax != 0 && rq->size > lim.shmmax) {
			out->sys_errno = EINVAL;
			snprintf(out->reason, sizeof(out->reason), "kernel.shmmax is %s, below %s: raise kernel.shmmax",
				 hpshm_size_format((size_t)lim.shmmax, max, sizeof(max)),
				 hpshm_size_format(rq->size, sz, sizeof(sz)));
			return HPSHM_EUNAVAILABLE;
		}
		if (lim.shmall != 0 && rq->size / hpshm__base_page_size() > lim.shmall) {
			out->sys_errno = ENOSPC;
			snprintf(out->reason, sizeof(out->reason),
				 "kernel.shmall allows %llu pages in all, below %s: raise kernel.shmall",
				 (unsigned long long)lim.shmall, hpshm_size_format(rq->size, sz, sizeof(sz)));
			return HPSHM_EUNAVAILABLE;
		}
	}
	return 0;
}

/* The hint for a failed shmget(), per errno. */
static const char *sysv_hint(int sys_errno, const struct hpshm_request *rq, char *buf, size_t len)
{
	switch (sys_errno) {
	case EPERM:
		return "add the user to vm.hugetlb_shm_group or grant CAP_IPC_LOCK";
	case ENOMEM:
		return hpshm__hugetlb_hint(rq->size, rq->page_size, buf, len);
	case ENOSPC:
		return "kernel.shmall or kernel.shmmni exhausted: raise them, or remove stale segments (ipcs -m)";
	case EINVAL:
		return "size above kernel.shmmax or unsupported page size: raise kernel.shmmax or pick a size in "
		       "/sys/kernel/mm/hugepages";
	default:
		return NULL;
	}
}

static int sysv_create(struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX];
	char sz[32], psz[32];
	unsigned bits = hpshm__huge_bits(rq->page_size);
	unsigned mode = rq->mode ? rq->mode & 0777 : SYSV_DEFAULT_MODE;
	void *p;
	int id, saved;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (bits == 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "page size %zu is not a power of two",
				       rq->page_size);
	if (rq->address && (uintptr_t)rq->address % rq->page_size != 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "give a base_address that is a multiple of the page size",
				       "base_address %p is not aligned to %s pages", rq->address, psz);

	id = hpshm__sys.shmget(IPC_PRIVATE, rq->size, (int)(IPC_CREAT | IPC_EXCL | SHM_HUGETLB | bits | mode));
	if (id < 0) {
		saved = errno;
		switch (saved) {
		case EPERM:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "shmget", sysv_hint(saved, rq, hint, sizeof(hint)),
					       "SysV huge pages need CAP_IPC_LOCK or vm.hugetlb_shm_group membership");
		case ENOMEM:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "shmget", sysv_hint(saved, rq, hint, sizeof(hint)),
					       "could not reserve %s of %s huge pages (pool or hugetlb cgroup short)",
					       sz, psz);
		case ENOSPC:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "shmget", sysv_hint(saved, rq, hint, sizeof(hint)),
					       "no room for a %s SysV segment", sz);
		case EINVAL:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "shmget", sysv_hint(saved, rq, hint, sizeof(hint)),
					       "the kernel refused a %s SysV segment of %s huge pages", sz, psz);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "shmget", NULL,
					       "shmget of %s with %s huge pages failed", sz, psz);
		}
	}

	p = hpshm__sys.shmat(id, rq->address, 0);
	if (p == (void *)-1) {
		char line[HPSHM_TEXT_MAX - 80];

		saved = errno;                                 /* shmctl() below may clobber it */
		(void)hpshm__sys.shmctl(id, IPC_RMID, NULL);   /* back out the segment */
		if (rq->address && saved == EINVAL) {
			if (hpshm__maps_line(rq->address, line, sizeof(line)) == 0)
				return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmat", "choose another base_address",
						       "base_address %p is taken by: %s", rq->address, line);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmat", "choose another base_address",
					       "another mapping overlaps %s at base_address %p", sz, rq->address);
		}
		/* The pages were reserved by shmget(): ENOMEM here is address space, not the pool. */
		return hpshm_error_set(err, saved == ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS, saved, "shmat",
				       saved == ENOMEM ? "check ulimit -v, or ask for less" : NULL,
				       "could not attach the %s SysV segment %d", sz, id);
	}

	/* Mark it now, so a crash from here on leaves nothing behind (see the top comment). */
	if (hpshm__sys.shmctl(id, IPC_RMID, NULL) < 0) {
		saved = errno;
		(void)hpshm__sys.shmdt(p);
		(void)hpshm__sys.shmctl(id, IPC_RMID, NULL);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", NULL,
				       "could not mark SysV segment %d for removal", id);
	}
	if (rq->address && p != rq->address) {
		/* shmat() with an address maps there or fails; a mismatch means a broken kernel or shim. */
		(void)hpshm__sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmat", "choose another base_address",
				       "the kernel attached at %p, not at base_address %p", p, rq->address);
	}

	m->addr = p;
	m->size = rq->size;
	m->fd = -1;
	m->id = id;
	m->path[0] = '\0';
	m->priv = NULL;
	return 0;
}

static int sysv_destroy(struct hpshm_mapping *m)
{
	struct shmid_ds ds;
	int rc = 0;

	/*
	 * A segment created here is already marked; one attached some other way may not be.
	 * Mark it while still attached, so the id cannot have been reused by someone else;
	 * EINVAL/EIDRM mean it is gone already.
	 */
	if (m->id >= 0 && hpshm__sys.shmctl((int)m->id, IPC_STAT, &ds) == 0 && !(ds.shm_perm.mode & SHM_DEST)) {
		if (hpshm__sys.shmctl((int)m->id, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM)
			rc = HPSHM_ESYS;
	}
	if (hpshm__sys.shmdt(m->addr) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->id = -1;
	return rc;
}

const struct hpshm_provider hpshm__provider_sysv_hugetlb = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "sysv_hugetlb",
	.summary     = "SysV shmget(SHM_HUGETLB) segment, re-attachable by shmid",
	.caps        = HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED,
	.probe       = sysv_probe,
	.create      = sysv_create,
	.destroy     = sysv_destroy,
};
