/*
 * backends/mmap_hugetlb.c -- anonymous shared huge pages: mmap(MAP_SHARED | MAP_ANONYMOUS |
 * MAP_HUGETLB).
 *
 * Mechanism: one mmap() with the page size encoded in the flags (log2 << 26).  No mount, no
 * name, no descriptor: the kernel backs the mapping from its internal hugetlbfs mount.
 *
 * Operator setup: pages in the pool of the requested size (vm.nr_hugepages, or the sysfs
 * nr_hugepages of a non-default size), or overcommit room (nr_overcommit_hugepages).  No
 * privilege is needed on current kernels; hugetlb cgroup limits apply.
 *
 * Kernel quirks, and what we do about them:
 *   - ENOMEM means the reservation failed: the pool is short or a hugetlb cgroup's rsvd limit
 *     was hit.  It is "unavailable", with the pool hint, so the core moves on.
 *   - EINVAL means the kernel refused the page size (no such hstate), or refused MAP_HUGETLB
 *     altogether; qemu-user also answers EINVAL.  Unavailable too.
 *   - EPERM came from kernels before 5.x, which checked vm.hugetlb_shm_group (or
 *     RLIMIT_MEMLOCK) for MAP_HUGETLB as they do for SysV; mmap.2 still documents it.
 *   - MAP_NORESERVE is never passed: without a reservation a fault with no free page is a
 *     SIGBUS long after create() returned.
 *   - A fixed address is asked for with MAP_FIXED_NOREPLACE, which fails with EEXIST rather
 *     than replace what is mapped there.  Kernels before 4.17 ignore that flag and treat the
 *     address as a hint, so the address we got is compared as well.  An address not aligned
 *     to the huge page would be silently ignored as a hint (or EINVAL), so it is refused up
 *     front.
 *   - munmap of a hugetlb mapping needs the huge-page-aligned length; the core hands us a
 *     size that is already a multiple of the page size, and we unmap exactly m->size.
 *
 * Capabilities: HUGE only.
 *
 * Re-attach: none.  The mapping has no name and no descriptor, so it is shared with fork()
 * children only; a child started by exec cannot find it.  With reattach=exec the core
 * skips this provider.
 */
#include <errno.h>
#include <stdint.h>

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"

static int mmap_hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out)
{
	out->sys_errno = 0;
	out->reason[0] = '\0';
	return hpshm__hugetlb_probe(rq, out);
}

/* The mapping at rq->address clashed with another one: say which, from /proc/self/maps. */
static int mmap_hugetlb_clash(const struct hpshm_request *rq, int sys_errno, hpshm_error *err)
{
	char line[HPSHM_TEXT_MAX - 80];
	char sz[32];

	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (hpshm__maps_line(rq->address, line, sizeof(line)) == 0)
		return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, "mmap", "choose another base_address",
				       "base_address %p is taken by: %s", rq->address, line);
	return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, "mmap", "choose another base_address",
			       "another mapping overlaps %s at base_address %p", sz, rq->address);
}

static int mmap_hugetlb_create(struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX];
	char sz[32], psz[32];
	unsigned bits = hpshm__huge_bits(rq->page_size);
	int flags = MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB | (int)bits;
	void *p;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (bits == 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "page size %zu is not a power of two",
				       rq->page_size);
	if (rq->address) {
		if ((uintptr_t)rq->address % rq->page_size != 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "give a base_address that is a multiple of the page size",
					       "base_address %p is not aligned to %s pages", rq->address, psz);
		flags |= MAP_FIXED_NOREPLACE;
	}

	p = hpshm__sys.mmap(rq->address, rq->size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		int saved = errno;

		switch (saved) {
		case ENOMEM:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
					       hpshm__hugetlb_hint(rq->size, rq->page_size, hint, sizeof(hint)),
					       "could not reserve %s of %s huge pages (pool or hugetlb cgroup short)",
					       sz, psz);
		case EINVAL:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
					       "use a page size listed in /sys/kernel/mm/hugepages, or another provider (qemu-user refuses MAP_HUGETLB)",
					       "the kernel rejected %s pages for this mapping", psz);
		case EPERM:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
					       "add the user to vm.hugetlb_shm_group or grant CAP_IPC_LOCK (older kernels require it for MAP_HUGETLB)",
					       "the kernel refused MAP_HUGETLB to this process");
		case EEXIST:
			return mmap_hugetlb_clash(rq, saved, err);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL,
					       "mmap of %s with %s huge pages failed", sz, psz);
		}
	}
	if (rq->address && p != rq->address) {
		/* A kernel before 4.17 took MAP_FIXED_NOREPLACE as a hint and put it elsewhere. */
		(void)hpshm__sys.munmap(p, rq->size);
		return mmap_hugetlb_clash(rq, EEXIST, err);
	}

	m->addr = p;
	m->size = rq->size;
	m->fd = -1;
	m->id = -1;
	m->path[0] = '\0';
	m->priv = NULL;
	return 0;
}

static int mmap_hugetlb_destroy(struct hpshm_mapping *m)
{
	if (hpshm__sys.munmap(m->addr, m->size) < 0)
		return HPSHM_ESYS;
	m->addr = NULL;
	return 0;
}

const struct hpshm_provider hpshm__provider_mmap_hugetlb = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "mmap_hugetlb",
	.summary     = "anonymous MAP_HUGETLB mapping, shared with fork() children only",
	.caps        = HPSHM_CAP_HUGE,
	.probe       = mmap_hugetlb_probe,
	.create      = mmap_hugetlb_create,
	.destroy     = mmap_hugetlb_destroy,
	/* ABI 2 members stay NULL: no name and no descriptor, so nothing to re-attach or scan. */
};
