/* SPDX-License-Identifier: MIT */
/*
 * backends/memfd_hugetlb.c -- memfd_create(MFD_HUGETLB), mapped MAP_SHARED.
 *
 * Mechanism: memfd_create("hpshm:<name>", MFD_CLOEXEC | MFD_HUGETLB | size bits), ftruncate()
 * to the size, mmap(MAP_SHARED).  The file lives on the kernel's internal hugetlbfs mount
 * for that page size, so no mount is needed, and it has no name in any filesystem.
 *
 * Operator setup: pages in the pool of the requested size (vm.nr_hugepages or the sysfs
 * file).  No privilege and no mount: the best huge page backend in containers.
 *
 * Kernel quirks, and what we do about them:
 *   - MFD_HUGETLB needs Linux 4.14; memfd_create itself 3.17.  Older kernels answer EINVAL
 *     (unknown flag) or ENOSYS: unavailable.
 *   - An unsupported page size gives ENODEV (not in memfd_create.2), and ENOENT when the
 *     kernel has no internal mount for the size: unavailable.
 *   - The reservation is taken at mmap(), not at memfd_create() or ftruncate(): ENOMEM there
 *     means the pool or a hugetlb cgroup's rsvd limit is short.  Unavailable, with the pool
 *     hint.  MAP_NORESERVE is never passed: that mmap would succeed and a later touch
 *     would SIGBUS.
 *   - EINVAL from that mmap(), with size and address already multiples of the page, is the
 *     mapping refused as such (qemu-user answers so for hugetlb files): unavailable, as in
 *     mmap_hugetlb.
 *   - ftruncate() must be a multiple of the page size (else EINVAL); the core guarantees it.
 *   - Linux 6.3 added MFD_EXEC / MFD_NOEXEC_SEAL and vm.memfd_noexec.  We pass neither, so
 *     the kernel applies its default; passing one would make older kernels fail with EINVAL.
 *   - The probe creates and closes an empty memfd of the page size: that reserves nothing,
 *     and it is the only way to learn whether the kernel (or qemu-user, or a seccomp
 *     filter) accepts the call.
 *
 * Capabilities: HUGE, REATTACH, FD, TAG.  Not NAMED: the name is only a label in
 * /proc/pid/maps ("/memfd:hpshm:<name> (deleted)"), nothing can open the segment by it.  TAG:
 * given rq->tag, the memfd is named "hpshm:<tag>" and attach() maps a descriptor only if
 * /proc/self/fd says it carries that name; the core then needs no header object for an
 * unnamed segment that fills its huge pages (core/header.c).
 *
 * Re-attach: by descriptor only.  identify() says "fd=<n>"; the spawn helper clears FD_CLOEXEC
 * on m->fd just before exec and passes the token; the child's attach() checks that the
 * descriptor really is a hugetlbfs file of the page size and exactly the segment's length
 * (a stray descriptor number must not map some other file, nor an edited size part of this
 * one), then maps it with
 * MAP_FIXED_NOREPLACE at the creator's address and compares the address (kernels before 4.17
 * take the flag as a hint), as every descriptor-backed backend does (backends/fixmap.c).
 * The child owns its inherited copy from then on: attach() sets FD_CLOEXEC on it again and
 * detach() closes it.  A shared mapping of the memfd takes no new
 * reservation: the creator's covers every process.
 *
 * Crash safety: the kernel frees everything with the last descriptor and mapping, so a crash
 * leaves nothing behind, and there is nothing for scan()/remove() to do.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/hugetlb_common.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"

#define MEMFD_NAME_MAX 249 /* the kernel's limit for a memfd name, without the NUL */

/* memfd_create() failed with sys_errno: is that "this kernel cannot", and why? */
static const char *memfd_unavailable(int sys_errno)
{
	switch (sys_errno) {
	case ENOSYS:
		return "memfd_create is missing (MFD_HUGETLB needs Linux 4.14) or blocked by a seccomp filter";
	case EINVAL:
		return "the kernel rejected MFD_HUGETLB with this page size (MFD_HUGETLB needs Linux 4.14)";
	case ENODEV:
	case ENOENT:
		return "the kernel offers no hugetlb memfd of this page size";
	default:
		return NULL;
	}
}

static int memfd_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hpshm_request at;
	const char *why;
	int fd, rc;

	(void)self;
	rc = hpshm__hugetlb_probe(rq, out, &at);
	if (rc < 0)
		return rc;

	fd = hpshm__linux_sys.memfd_create("hpshm:probe", MFD_CLOEXEC | MFD_HUGETLB | hpshm__linux_huge_bits(at.page_size));
	if (fd < 0) {
		out->sys_errno = errno;
		why = memfd_unavailable(errno);
		if (why)
			snprintf(out->reason, sizeof(out->reason), "%s", why);
		else
			snprintf(out->reason, sizeof(out->reason), "memfd_create(MFD_HUGETLB) failed with errno %d",
				 out->sys_errno);
		return HPSHM_EUNAVAILABLE;
	}
	(void)hpshm__posix_sys.close(fd);
	return 0;
}

/* Not memfd_create(): libc owns that name. */
static int memfd_create_segment(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char label[MEMFD_NAME_MAX + 1];
	char sz[32], psz[32];
	unsigned bits = hpshm__linux_huge_bits(rq->page_size);
	const char *why;
	int fd, saved;
	void *p;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (!hpshm__size_fits_off_t(rq->size))
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, NULL, "%s does not fit in off_t", sz);

	/* A label for /proc/pid/maps: a long name is cut, not refused.  The core's tag is short
	 * and is never cut: memfd_attach() compares it whole. */
	snprintf(label, sizeof(label), "hpshm:%s", rq->tag ? rq->tag : rq->name ? rq->name : "anon");
	fd = hpshm__linux_sys.memfd_create(label, MFD_CLOEXEC | MFD_HUGETLB | bits);
	if (fd < 0) {
		saved = errno;
		why = memfd_unavailable(saved);
		if (why)
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "memfd_create",
					       "use another provider (hugetlbfs or sysv_hugetlb), or a newer kernel",
					       "%s", why);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "memfd_create",
				       saved == EMFILE || saved == ENFILE ? "raise the open file limit (ulimit -n)" : NULL,
				       "could not create a memfd for %s pages", psz);
	}

	if (hpshm__posix_sys.ftruncate(fd, (off_t)rq->size) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "ftruncate", NULL,
				       "could not size the memfd to %s (not a multiple of its %s pages?)", sz, psz);
	}

	p = hpshm__map_at(rq, MAP_SHARED, fd);
	if (p == MAP_FAILED) {
		saved = errno; /* close() below may clobber it */
		(void)hpshm__posix_sys.close(fd);
		switch (saved) {
		case ENOMEM:
			return hpshm__reserve_failed(err, "mmap", saved, rq, "pool or hugetlb cgroup");
		case EEXIST:
			return hpshm__map_taken(err, "mmap", saved, rq, HPSHM__MAP_CREATE);
		case EINVAL:
			/* Size and address are multiples of the page (the core's guarantee), so this
			 * is the mapping refused as such: qemu-user does so for hugetlb files.
			 * Unavailable, as in mmap_hugetlb, so the walk moves on. */
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
					       "use another provider (qemu-user refuses hugetlb mappings)",
					       "the kernel refused to map the %s memfd of %s pages", sz, psz);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL,
					       "could not map the %s memfd of %s pages", sz, psz);
		}
	}

	hpshm__mapping_fill(m, p, rq->size, fd, -1, NULL);
	return 0;
}

/*
 * Is descriptor fd the memfd that memfd_create_segment() labelled with tag?  The kernel keeps
 * the label as the file's name, which /proc/self/fd shows as "/memfd:<label> (deleted)";
 * nothing can rename a memfd, so the label is as good as a header in the object.
 */
static int memfd_check_tag(int fd, const char *tag, hpshm_error *err)
{
	char link[64], want[MEMFD_NAME_MAX + 32], got[MEMFD_NAME_MAX + 32];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	snprintf(want, sizeof(want), "/memfd:hpshm:%s (deleted)", tag);
	n = hpshm__posix_sys.readlink(link, got, sizeof(got) - 1);
	if (n < 0)
		return hpshm_error_set(err, HPSHM_ESYS, errno, "readlink", "mount /proc in the child (mount -t proc proc /proc)",
				       "could not read the name of descriptor %d in %s, which says whether it is the "
				       "token's segment", fd, link);
	got[n] = '\0';
	if (strcmp(got, want) != 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "the token is stale (the segment was recreated), forged or edited; pass a fresh one "
				       "exactly as hpshm_segment_token() made it",
				       "descriptor %d does not match the token: it is \"%.96s\", the token's segment "
				       "\"%.96s\"", fd, got, want);
	return 0;
}

static int memfd_attach(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, const char *id, hpshm_error *err)
{
	const char *spawn_hint = "start the child with hpshm_child_spawn(), which keeps the descriptor open across exec";
	struct statfs sfs;
	struct stat st;
	char what[48];
	char sz[32], psz[32], have[32];
	int fd;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (hpshm__id_parse(id, "fd=", &fd) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is not fd=<descriptor>", id);

	/* A stray descriptor number must not map some other file: a hugetlbfs file of the page size. */
	if (hpshm__linux_sys.fstatfs(fd, &sfs) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, errno, "fstatfs", spawn_hint,
				       "descriptor %d is not open in this process", fd);
	if ((uint32_t)sfs.f_type != (uint32_t)HUGETLBFS_MAGIC || sfs.f_bsize <= 0 || (size_t)sfs.f_bsize != rq->page_size)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, spawn_hint,
				       "descriptor %d is not the segment's memfd (not hugetlbfs with %s pages)", fd, psz);
	if (hpshm__posix_sys.fstat(fd, &st) < 0)
		return hpshm_error_set(err, HPSHM_ESYS, errno, "fstat", NULL, "could not inspect descriptor %d", fd);
	/* Exactly: a token edited to a shorter size would map part of the segment (a labelled
	 * memfd keeps no header that holds the size), a longer one what is not there. */
	if (st.st_size < 0 || (uint64_t)st.st_size != (uint64_t)rq->size)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "descriptor %d is not the token's segment: the memfd is %s long, the token says %s",
				       fd, hpshm_size_format(st.st_size > 0 ? (size_t)st.st_size : 0, have, sizeof(have)),
				       sz);

	if (rq->tag) {
		int rc = memfd_check_tag(fd, rq->tag, err);

		if (rc < 0)
			return rc;
	}
	snprintf(what, sizeof(what), "the memfd (descriptor %d)", fd);
	return hpshm__fd_attach_map(m, rq, fd, NULL, what, err);
}

const struct hpshm_provider hpshm__provider_memfd_hugetlb = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "memfd_hugetlb",
	.summary     = "memfd_create(MFD_HUGETLB), no mount needed, re-attachable by descriptor",
	.caps        = HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH | HPSHM_CAP_FD | HPSHM_CAP_TAG | HPSHM_CAP_RESIZE,
	.probe       = memfd_probe,
	.requirements = hpshm__hugetlb_requirements_member,
	.create      = memfd_create_segment,
	.destroy     = hpshm__fd_unmap,     /* the memfd has no name to remove */
	.identify    = hpshm__fd_identify, /* "fd=<n>": the mapping has no path */
	.attach      = memfd_attach,
	.detach      = hpshm__fd_unmap,
	.scan        = NULL, /* a memfd vanishes with its last user: nothing can be left over */
	.remove      = NULL,
};
