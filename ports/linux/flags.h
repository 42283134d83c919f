/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/flags.h -- the Linux flag values older C library headers lack, and the huge page
 * size encoding, written once.
 *
 * Internal: not installed.  ports/linux/linux.h includes it, so the Linux port and the Linux
 * backends have it; the code that makes Linux calls itself, outside the port's tables,
 * includes it alone: the bench's raw peer (bench/memory_posix.c, bench/worker_posix.c,
 * bench/apr.c) and the interposer (preload/).  Macros and one inline function: nothing to
 * link, nothing to initialise.
 *
 * Each value is the kernel's, for a C library whose headers are older than the kernel it
 * runs on (glibc before 2.27 has no MFD_HUGETLB, before 2.35 no MADV_POPULATE_WRITE; musl
 * cannot see <linux/memfd.h>).  An older kernel answers a flag it does not know with EINVAL,
 * which every caller handles.
 */
#ifndef HPSHM_PORTS_LINUX_FLAGS_H
#define HPSHM_PORTS_LINUX_FLAGS_H

#include <stddef.h>
#include <sys/mman.h>
#include <sys/shm.h>

/* mmap(), and what memfd_create() and madvise() take (<sys/mman.h>). */
#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4 /* Linux 5.7 */
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* shmget() (<sys/shm.h>). */
#ifndef SHM_HUGETLB
#define SHM_HUGETLB 04000
#endif
#ifndef SHM_NORESERVE
#define SHM_NORESERVE 010000
#endif

/* fstatfs() f_type of a hugetlbfs mount, and getrandom() (<sys/random.h> is glibc 2.25 and
 * musl 1.1.20; the port's table calls syscall()). */
#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif
#ifndef GRND_NONBLOCK
#define GRND_NONBLOCK 0x0001
#endif

/*
 * The huge page size encoding shared by mmap (MAP_HUGE_*), shmget (SHM_HUGE_*) and
 * memfd_create (MFD_HUGE_*): log2(size) << 26.  Computed rather than named, because C
 * library headers define only some of the names (glibc 2.36 has no MAP_HUGE_2MB).
 */
#define HPSHM__HUGE_SHIFT 26

/* log2(page_size) << 26, the size bits for MAP_/SHM_/MFD_HUGETLB; 0 if not a power of two. */
static inline unsigned hpshm__linux_huge_bits(size_t page_size)
{
	unsigned log2 = 0;

	if (page_size == 0 || (page_size & (page_size - 1)) != 0)
		return 0;
	while ((page_size >>= 1) != 0)
		log2++;
	return log2 << HPSHM__HUGE_SHIFT;
}

/* mbind() and move_pages() (<linux/mempolicy.h>; libnuma's <numaif.h> is not needed). */
#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT    0
#define MPOL_PREFERRED  1
#define MPOL_BIND       2
#define MPOL_INTERLEAVE 3
#define MPOL_LOCAL      4 /* Linux 3.8 */
#endif
#ifndef MPOL_MF_STRICT
#define MPOL_MF_STRICT  (1 << 0)
#define MPOL_MF_MOVE    (1 << 1)
#endif

#endif /* HPSHM_PORTS_LINUX_FLAGS_H */
