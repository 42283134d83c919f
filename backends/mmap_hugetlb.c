/* SPDX-License-Identifier: MIT */
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
 *     than replace what is mapped there; kernels before 4.17 take it as a hint, so the address
 *     we got is compared as well (hpshm__map_at() in backends/fixmap.c does both, and
 *     names the holder of a taken range).  An address not aligned to the huge page would be
 *     silently ignored as a hint (or EINVAL), so it is refused up front.
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

#include "backends/hugetlb_common.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"

static int mmap_hugetlb_probe(const struct hpshm_instance *self, const struct hpshm_request *rq,
			      struct hpshm_probe *out)
{
	struct hpshm_request at;

	(void)self;
	return hpshm__hugetlb_probe(rq, out, &at);
}

static int mmap_hugetlb_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char sz[32], psz[32];
	unsigned bits = hpshm__linux_huge_bits(rq->page_size);
	void *p;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));

	p = hpshm__map_at(rq, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB | (int)bits, -1);
	if (p == MAP_FAILED) {
		int saved = errno;

		switch (saved) {
		case ENOMEM:
			return hpshm__reserve_failed(err, "mmap", saved, rq, "pool or hugetlb cgroup");
		case EINVAL:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
					       "use a page size listed in /sys/kernel/mm/hugepages, or another provider (qemu-user refuses MAP_HUGETLB)",
					       "the kernel rejected %s pages for this mapping", psz);
		case EPERM:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
					       "add the user to vm.hugetlb_shm_group or grant CAP_IPC_LOCK (older kernels require it for MAP_HUGETLB)",
					       "the kernel refused MAP_HUGETLB to this process");
		case EEXIST:
			return hpshm__map_taken(err, "mmap", saved, rq, HPSHM__MAP_CREATE);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL,
					       "mmap of %s with %s huge pages failed", sz, psz);
		}
	}
	hpshm__mapping_fill(m, p, rq->size, -1, -1, NULL);
	return 0;
}

static int mmap_hugetlb_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	if (hpshm__posix_sys.munmap(m->addr, m->size) < 0)
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
	.requirements = hpshm__hugetlb_requirements_member,
	.create      = mmap_hugetlb_create,
	.destroy     = mmap_hugetlb_destroy,
	/* ABI 2 members stay NULL: no name and no descriptor, so nothing to re-attach or scan. */
};
