/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/verify.c -- what really backs a mapping, as the kernel reports it.
 *
 * The flags a backend passed prove nothing: a hugetlbfs path may be a plain directory, a
 * THP-backed shmem segment looks like a success, qemu-user accepts MAP_HUGETLB and maps
 * small pages.  So the report's page size is read back:
 *   - from the descriptor when there is one: fstatfs() gives HUGETLBFS_MAGIC and the page
 *     size in f_bsize, for hugetlbfs files and MFD_HUGETLB memfds alike;
 *   - from /proc/self/smaps for the mapping itself: KernelPageSize of each VMA in the range,
 *     and the "ht" flag in VmFlags, which only hugetlb VMAs carry (KernelPageSize alone
 *     does not tell a hugetlb VMA on a 64KiB-page arm64 kernel from a plain one).
 * The mapping is asked about first with PROCMAP_QUERY (Linux 6.11), an ioctl on
 * /proc/self/maps that describes one VMA: its vma_page_size is what smaps prints as
 * KernelPageSize.  smaps is the fallback for older kernels (ENOTTY), and for an emulator's or a
 * test's maps file, which is no proc file.  The query walks no page tables, where smaps
 * computes Rss and the rest for each VMA it writes, walking the VMA's page tables, from the
 * first VMA up to the segment and past it (a read takes whole records, and the next VMA's
 * fills the buffer): with a 1 GiB region of 4 KiB pages mapped next to it, a 64 MiB create
 * took 6.2 ms with smaps against 0.015 ms with the query (medians of 31), and every attach
 * paid the same.  The query has no "ht": a VMA whose page size is above the base page is
 * hugetlb, as only hugetlb VMAs (and DAX devices, which hpshm never maps) have a page size of
 * their own; on a 64KiB-page arm64 kernel the base page is 64KiB, so the comparison holds there.
 * What the mapping says is read after fstatfs and wins: it describes the mapping, not the
 * file.  A range split into several VMAs (an mprotect in the middle) reports the smallest page
 * size, and huge only if every VMA is hugetlb.
 *
 * smaps and maps are read under the sysroot like every /proc file, so tests can feed fake
 * ones.  smaps header lines end in the mapped file's path, which can be long: a line that
 * does not fit the buffer keeps its start (the address range is all we parse) and the rest
 * is read past, so the fields that follow are never attributed to the wrong VMA.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/linux.h"

#define VERIFY_LINE_MAX 1024 /* every field line fits; header lines may be cut, harmlessly */

int hpshm__linux_maps_range(const char *line, uintptr_t *start, uintptr_t *end)
{
	uintmax_t s, e;
	char *p;

	if (!((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')))
		return 0;
	errno = 0;
	s = strtoumax(line, &p, 16);
	if (errno != 0 || *p != '-')
		return 0;
	e = strtoumax(p + 1, &p, 16);
	if (errno != 0 || *p != ' ')
		return 0;
	*start = (uintptr_t)s;
	*end = (uintptr_t)e;
	return 1;
}

/* Does the VmFlags value hold the two-letter flag? */
static int verify_has_flag(const char *flags, const char *flag)
{
	const char *p = flags;

	while ((p = strstr(p, flag)) != NULL) {
		if ((p == flags || p[-1] == ' ') && (p[2] == ' ' || p[2] == '\0'))
			return 1;
		p += 2;
	}
	return 0;
}

/*
 * Read smaps for the VMAs overlapping [lo, hi): 0 with out filled, or -1 if the file cannot
 * be read or no VMA overlaps.
 */
static int verify_smaps(uintptr_t lo, uintptr_t hi, struct hpshm__backing *out)
{
	char line[VERIFY_LINE_MAX];
	uintptr_t start, end;
	unsigned long long kb;
	size_t page_size = 0, vma_page = 0;
	int in = 0, nvma = 0, huge = 1, vma_huge = 0;
	FILE *f = hpshm__linux_sysfile_open("/proc/self/smaps");

	if (f == NULL)
		return -1;
	while (hpshm__linux_getline(f, line, sizeof(line), NULL)) {
		if (hpshm__linux_maps_range(line, &start, &end)) {
			if (in) {
				/* close the previous VMA */
				if (vma_page != 0 && (page_size == 0 || vma_page < page_size))
					page_size = vma_page;
				huge &= vma_huge;
			}
			if (start >= hi)
				break;   /* smaps is sorted by address */
			in = end > lo;
			if (in) {
				nvma++;
				vma_page = 0;
				vma_huge = 0;
			}
			continue;
		}
		if (!in)
			continue;
		if (strncmp(line, "KernelPageSize:", 15) == 0) {
			kb = strtoull(line + 15, NULL, 10);
			if (kb != 0 && kb <= SIZE_MAX / 1024)
				vma_page = (size_t)kb * 1024;
		} else if (strncmp(line, "VmFlags:", 8) == 0) {
			vma_huge = verify_has_flag(line + 8, "ht");
		}
	}
	if (in) {
		/* the range ran to the last VMA of the file */
		if (vma_page != 0 && (page_size == 0 || vma_page < page_size))
			page_size = vma_page;
		huge &= vma_huge;
	}
	fclose(f);
	if (nvma == 0 || page_size == 0)
		return -1;
	out->page_size = page_size;
	out->huge = huge;
	snprintf(out->source, sizeof(out->source), "smaps");
	return 0;
}

/*
 * The VMAs overlapping [lo, hi) from PROCMAP_QUERY: 0 with out filled, or -1 when the query is
 * not there (a kernel before 6.11, maps that is no proc file) or no VMA overlaps; smaps then.
 */
static int verify_query(uintptr_t lo, uintptr_t hi, struct hpshm__backing *out)
{
	char path[PATH_MAX];
	struct hpshm__procmap_query q;
	size_t base = hpshm__port_base_page_size(), page_size = 0;
	uint64_t at = lo;
	int fd, nvma = 0, huge = 1, n = snprintf(path, sizeof(path), "%s/proc/self/maps", hpshm__linux_sysroot());

	if (n < 0 || (size_t)n >= sizeof(path) || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (at < hi) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = HPSHM__PROCMAP_COVERING_OR_NEXT;
		q.query_addr = at;
		if (hpshm__linux_sys.procmap_query(fd, &q) < 0 || q.vma_start >= hi || q.vma_end <= at)
			break;   /* ENOENT past the last VMA, ENOTTY before 6.11 */
		if (q.vma_page_size == 0 || q.vma_page_size > SIZE_MAX)
			break;
		nvma++;
		if (page_size == 0 || q.vma_page_size < page_size)
			page_size = (size_t)q.vma_page_size;
		huge &= q.vma_page_size > base;
		at = q.vma_end;
	}
	close(fd);
	if (nvma == 0)
		return -1;
	out->page_size = page_size;
	out->huge = huge;
	snprintf(out->source, sizeof(out->source), "PROCMAP_QUERY");
	return 0;
}

int hpshm__port_verify_backing(void *addr, size_t len, struct hpshm__port_handle h, struct hpshm__backing *out)
{
	struct statfs sfs;
	uintptr_t lo = (uintptr_t)addr;
	int known = 0;

	assert(out != NULL); /* port.h's guarantee */
	out->page_size = 0;
	out->huge = 0;
	snprintf(out->source, sizeof(out->source), "unverified");

	if ((h.flags & HPSHM__PORT_FILE) && hpshm__linux_sys.fstatfs((int)h.value, &sfs) == 0) {
		/* f_type's width differs by architecture: compare 32 bits. */
		if ((uint32_t)sfs.f_type == (uint32_t)HUGETLBFS_MAGIC && sfs.f_bsize > 0) {
			out->page_size = (size_t)sfs.f_bsize;
			out->huge = 1;
			snprintf(out->source, sizeof(out->source), "fstatfs");
			known = 1;
		}
		/* Any other file system says "not hugetlb" but not the page size: smaps must. */
	}
	if (addr != NULL && len != 0) {
		uintptr_t hi = len > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + len;

		if (verify_query(lo, hi, out) == 0 || verify_smaps(lo, hi, out) == 0)
			known = 1;
	}
	return known ? 0 : HPSHM_EUNAVAILABLE;
}

int hpshm__port_maps_line(const void *addr, size_t size, char *buf, size_t len)
{
	char line[VERIFY_LINE_MAX];
	uintptr_t a = (uintptr_t)addr, z, start, end;
	int found = 0;
	FILE *f;

	if (buf == NULL || len == 0)
		return HPSHM_EINVAL;
	buf[0] = '\0';
	z = size && a <= UINTPTR_MAX - size ? a + size : a + 1;
	f = hpshm__linux_sysfile_open("/proc/self/maps");
	if (f == NULL)
		return HPSHM_EUNAVAILABLE;
	/* The first mapping that overlaps [a, z): maps is sorted by address.  A long path is cut
	 * to what fits: the line is only for a message. */
	while (hpshm__linux_getline(f, line, sizeof(line), NULL)) {
		if (!hpshm__linux_maps_range(line, &start, &end))
			continue;
		if (start >= z)
			break;
		if (end > a) {
			snprintf(buf, len, "%s", line);
			found = 1;
			break;
		}
	}
	fclose(f);
	return found ? 0 : HPSHM_EUNAVAILABLE;
}
