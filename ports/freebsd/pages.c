/* SPDX-License-Identifier: MIT */
/*
 * ports/freebsd/pages.c -- page sizes and verification on FreeBSD, which CMake builds in place
 * of the POSIX fallback ports/posix/pages_none.c.
 *
 *   - The sizes: getpagesizes() fills an array whose index is a page size index (psind): 0 is
 *     the base page, 1 and up the superpage sizes the pmap offers (amd64: 2MiB, 1GiB).  The
 *     huge page sizes are entries 1 and up; the default is the smallest of them.
 *   - What backs a mapping: from the descriptor, a largepage shm object's psind
 *     (FIOGSHMLPGCNF), which fixes the page size of every page of the object; then, like
 *     Linux's smaps, the mapping itself wins where it can be read: mincore() marks each
 *     resident page with MINCORE_PSIND(psind) when a superpage of that index maps it.  A range
 *     nobody has touched yet is not resident and says nothing; a descriptor that is no
 *     largepage object leaves the mapping alone to say it (resident base pages).  What neither
 *     shows is "unverified", as on any POSIX system.
 *
 * The calls are FreeBSD's own (getpagesizes, FIOGSHMLPGCNF, MINCORE_PSIND) and sit under
 * __FreeBSD__.  Elsewhere this file still compiles, with those answering "nothing known", so
 * CI on Linux keeps it building against port.h (into an object nothing links).
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __FreeBSD__
#include <sys/filio.h> /* FIOGSHMLPGCNF */
#include <sys/ioctl.h>
#endif

#include "port.h"

#define PAGES_MAX 8 /* getpagesizes() entries read: FreeBSD's MAXPAGESIZES is 3 or 4 */

/* The page sizes, index = psind; the count (0 if unknown). */
static int pages_all(size_t *out, int max)
{
#ifdef __FreeBSD__
	int n = getpagesizes(out, max);

	return n < 0 ? 0 : n;
#else
	(void)out;
	(void)max;
	return 0;
#endif
}

/* The psind of a largepage shm object's descriptor: > 0, or 0 if it is none (or unknown). */
static int pages_psind_of_fd(int fd)
{
#ifdef __FreeBSD__
	struct shm_largepage_conf conf;

	if (fd >= 0 && ioctl(fd, FIOGSHMLPGCNF, &conf) == 0 && conf.psind > 0)
		return conf.psind;
#else
	(void)fd;
#endif
	return 0;
}

/* The psind mincore() reports for one resident page (vec byte v): >= 0, or -1 if not resident. */
static int pages_psind_of_vec(unsigned char v)
{
#ifdef __FreeBSD__
	if (!(v & MINCORE_INCORE))
		return -1;
	for (int i = 1; i < PAGES_MAX; i++)
		if ((v & MINCORE_SUPER) == MINCORE_PSIND(i))
			return i;
	return 0;
#else
	(void)v;
	return -1;
#endif
}

int hpshm__port_huge_page_sizes(size_t *out, int max)
{
	size_t all[PAGES_MAX];
	int n = pages_all(all, PAGES_MAX), k = 0;

	for (int i = 1; i < n && k < max; i++)
		if (all[i] != 0)
			out[k++] = all[i];
	return k;
}

size_t hpshm__port_default_huge_page_size(void)
{
	size_t all[PAGES_MAX];

	return pages_all(all, PAGES_MAX) > 1 ? all[1] : 0;
}

/*
 * The smallest psind mincore() reports among the resident pages of [addr, addr+len), looking
 * at one base page in every step bytes, into *psind: 1 if any page looked at was resident, 0
 * if none, -1 if mincore() failed.  mincore() is asked about PAGES_VEC base pages at a time.
 */
#define PAGES_VEC 1024
static int pages_mincore(void *addr, size_t len, size_t step, int *psind)
{
	size_t base = hpshm__port_base_page_size(), n, skip;
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(base - 1), z = (uintptr_t)addr + len;
	unsigned char vec[PAGES_VEC];
	int seen = 0, p;

	skip = step > base ? step / base : 1;
	while (a < z) {
		n = (size_t)(z - a + base - 1) / base;
		if (n > PAGES_VEC)
			n = PAGES_VEC;
		/* vec is char * on FreeBSD and unsigned char * elsewhere: pass it untyped. */
		if (mincore((void *)a, n * base, (void *)vec) < 0)
			return -1;
		for (size_t i = 0; i < n; i += skip) {
			p = pages_psind_of_vec(vec[i]);
			if (p < 0)
				continue;
			if (!seen || p < *psind)
				*psind = p;
			seen = 1;
		}
		/* The next page looked at is skip pages past the last one, in this call or the next. */
		a += ((n + skip - 1) / skip) * skip * base;
	}
	return seen;
}

int hpshm__port_verify_backing(void *addr, size_t len, struct hpshm__port_handle h, struct hpshm__backing *out)
{
	size_t all[PAGES_MAX];
	int n, psind = 0, from_fd;

	assert(out != NULL); /* port.h's guarantee */
	out->page_size = 0;
	out->huge = 0;
	memcpy(out->source, "unverified", sizeof("unverified"));
	n = pages_all(all, PAGES_MAX);
	if (n <= 0)
		return HPSHM_EUNAVAILABLE;

	from_fd = (h.flags & HPSHM__PORT_FILE) ? pages_psind_of_fd((int)h.value) : 0;
	if (from_fd > 0 && from_fd < n) {
		out->page_size = all[from_fd];
		out->huge = 1;
		memcpy(out->source, "FIOGSHMLPGCNF", sizeof("FIOGSHMLPGCNF"));
	}
	/* One probe per page of the size claimed (per base page when none is): what maps it. */
	if (addr != NULL && len > 0 &&
	    pages_mincore(addr, len, out->page_size ? out->page_size : all[0], &psind) == 1 && psind < n) {
		out->page_size = all[psind];
		out->huge = psind > 0;
		memcpy(out->source, "mincore", sizeof("mincore"));
	}
	return out->page_size ? 0 : HPSHM_EUNAVAILABLE;
}
