/* SPDX-License-Identifier: MIT */
/*
 * bench/memory_posix.c -- os.h's memory on POSIX: the raw peer (memfd or anonymous mmap) and
 * transparent huge pages.
 *
 * raw: for a fair comparison the raw peer does what the hpshm provider does, call for call:
 * memfd_create([MFD_HUGETLB | size bits]), ftruncate, mmap MAP_SHARED, fallocate,
 * madvise(MADV_POPULATE_WRITE), or for huge pages no fallocate and the madvise tail first
 * (raw_populate_pages()); for hugetlbfs the same with open + unlink of a file on a
 * mount of the page size instead of memfd_create; for sysv_hugetlb shmget(IPC_PRIVATE,
 * SHM_HUGETLB | size bits), shmat, IPC_RMID and the madvise; for mmap_hugetlb,
 * mmap(MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB) and the madvise.  The raw calls go straight
 * to libc, not through hpshm's system call table; the flags old libc headers lack, and the
 * page size bits, come from ports/linux/flags.h, as the port's do.
 *
 * With c->threads > 1 the raw calls populate as hpshm's Linux port does with
 * populate_threads: no fallocate (hugetlbfs and tmpfs allocate under the inode's lock, so
 * threads calling it would wait for each other), each thread madvise(MADV_POPULATE_WRITE)
 * on one contiguous range, 32 MiB at a time, the calling thread taking the first range.
 * That is the fair peer of hpshm's threaded populate, and what QEMU's prealloc-threads do
 * (but for the order of huge pages).  raw x1 (c->by_hand) is what a program writes by hand:
 * one thread, fallocate where there is a descriptor, and one madvise over the region.
 *
 * thp: transparent huge pages.  Shared when /sys/kernel/mm/transparent_hugepage/
 * shmem_enabled allows advise (a memfd with MADV_HUGEPAGE: workers are processes, as for
 * hpshm); else private anonymous memory with MADV_HUGEPAGE, which only threads of one
 * process can share, so its workers are threads and the row says so.  THP is verified from
 * smaps AnonHugePages/ShmemPmdMapped; khugepaged and the fault path may leave parts small.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <sys/shm.h>
#include <unistd.h>

#include "bench.h"
#include "os.h"
#include "ports/admin.h"
#include "ports/facts.h"
#include "ports/linux/flags.h"

static size_t round_up(size_t v, size_t to)
{
	return to ? (v + to - 1) / to * to : v;
}

const char *bench_os_raw_peer(const char *provider, enum bench_start start, enum bench_kind *kind, char *label,
			      size_t label_len)
{
	static const struct {
		const char     *provider;
		enum bench_kind kind;
		const char     *label;
	} peers[] = {
		{ "mmap_hugetlb", BENCH_RAW_ANON, "raw mmap" },
		{ "hugetlbfs", BENCH_RAW_FILE, "raw file" },
		{ "sysv_hugetlb", BENCH_RAW_SHM, "raw shm" },
	};

	*kind = BENCH_RAW_MEMFD;   /* memfd_hugetlb's calls, and plain's */
	snprintf(label, label_len, "raw memfd");
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		if (strcmp(provider, peers[i].provider) == 0) {
			*kind = peers[i].kind;
			snprintf(label, label_len, "%s", peers[i].label);
		}
	if (*kind == BENCH_RAW_ANON && start == BENCH_START_SPAWN)
		return "anonymous MAP_HUGETLB memory is inherited by fork only: run with --fork";
	return NULL;
}

/* ---- raw system calls -------------------------------------------------------------------- */

/* madvise(MADV_POPULATE_WRITE), as hpshm's populate does after fallocate. */
static int raw_populate(void *addr, size_t len)
{
	int rc;

	do
		rc = madvise(addr, len, MADV_POPULATE_WRITE);
	while (rc < 0 && errno == EINTR);
	return rc;
}

/*
 * The same as hpshm's port makes it for pages of `page`: a huge page is faulted in at its
 * last base page first, so the kernel clears it in ascending order, then the whole range
 * (ports/linux/populate.c says why).
 */
static int raw_populate_pages(unsigned char *addr, size_t len, size_t page)
{
	size_t base = hpshm_base_page_size();

	for (size_t at = 0; page > base && at < len; at += page)
		if (raw_populate(addr + at + page - base, base) < 0)
			return -1;
	return raw_populate(addr, len);
}

/* ---- threads: bench_os_parallel(), and the raw calls' populate split over them --------- */

struct parallel_part {
	void   (*fn)(void *arg, unsigned i);
	void    *arg;
	unsigned i;
};

static void *parallel_main(void *p)
{
	struct parallel_part *part = p;

	part->fn(part->arg, part->i);
	return NULL;
}

void bench_os_parallel(unsigned n, void (*fn)(void *arg, unsigned i), void *arg)
{
	struct parallel_part parts[BENCH_THREADS_MAX];
	pthread_t threads[BENCH_THREADS_MAX];
	int started[BENCH_THREADS_MAX] = { 0 };

	if (n > BENCH_THREADS_MAX)
		n = BENCH_THREADS_MAX;
	for (unsigned i = 1; i < n; i++) {
		parts[i].fn = fn;
		parts[i].arg = arg;
		parts[i].i = i;
		started[i] = pthread_create(&threads[i], NULL, parallel_main, &parts[i]) == 0;
	}
	fn(arg, 0);
	for (unsigned i = 1; i < n; i++) {
		if (started[i])
			(void)pthread_join(threads[i], NULL);
		else
			fn(arg, i);
	}
}

#define RAW_CHUNK ((size_t)32 << 20)   /* as hpshm's port: one madvise per 32 MiB */

struct raw_split {
	unsigned char *addr;
	size_t         len, page;
	unsigned       n;
	int            e[BENCH_THREADS_MAX];   /* errno of part i's failed madvise, 0 if none */
};

/* Part i of n: whole pages, the first parts one page more when they do not divide evenly. */
static void raw_part_run(void *arg, unsigned i)
{
	struct raw_split *sp = arg;
	size_t pages = sp->len / sp->page, each = pages / sp->n, extra = pages % sp->n;
	size_t off = ((size_t)i * each + (i < extra ? i : extra)) * sp->page;
	size_t end = off + (each + (i < extra ? 1 : 0)) * sp->page;

	for (size_t at = off; at < end && sp->e[i] == 0; at += RAW_CHUNK) {
		size_t n = end - at < RAW_CHUNK ? end - at : RAW_CHUNK;

		if (raw_populate_pages(sp->addr + at, n, sp->page) < 0)
			sp->e[i] = errno;
	}
}

/* The raw calls' populate with threads: 0, or -1 with errno set from the first part that failed. */
static int raw_populate_split(void *addr, size_t len, size_t page, unsigned n)
{
	static struct raw_split sp;   /* the controller creates one region at a time */

	memset(&sp, 0, sizeof(sp));
	sp.addr = addr;
	sp.len = len;
	sp.page = page;
	sp.n = n > BENCH_THREADS_MAX ? BENCH_THREADS_MAX : n;
	bench_os_parallel(sp.n, raw_part_run, &sp);
	for (unsigned i = 0; i < sp.n; i++)
		if (sp.e[i]) {
			errno = sp.e[i];
			return -1;
		}
	return 0;
}

static int raw_fail(char *why, size_t len, const char *call, int e)
{
	snprintf(why, len, "%s: %s%s", call, strerror(e),
		 e == ENOMEM || e == ENOSPC || e == EFAULT ? " (huge page pool too small?)" : "");
	return -1;
}

/* A memfd of maplen bytes with flags: its descriptor, or -1 with why filled. */
static int raw_memfd(const char *name, unsigned flags, size_t maplen, char *why, size_t len)
{
	int fd = memfd_create(name, flags), e;

	if (fd < 0)
		return raw_fail(why, len, "memfd_create", errno);
	if (ftruncate(fd, (off_t)maplen) < 0) {
		e = errno;
		close(fd);
		return raw_fail(why, len, "ftruncate", e);
	}
	return fd;
}

/* A file on a writable hugetlbfs mount of the page size, unlinked at once: hpshm's
 * hugetlbfs provider for an unnamed segment, call for call.  The descriptor, or -1. */
static int raw_file(size_t page_size, size_t maplen, char *why, size_t len)
{
	static unsigned seq;
	struct hpshm__mount m[HPSHM__MAX_MOUNTS];
	int n = hpshm__os_mounts(m, HPSHM__MAX_MOUNTS), fd, e;
	char path[sizeof(m[0].path) + 48];

	if (n > HPSHM__MAX_MOUNTS)
		n = HPSHM__MAX_MOUNTS;
	for (int i = 0; i < n; i++) {
		if (m[i].page_size != page_size || !m[i].writable)
			continue;
		snprintf(path, sizeof(path), "%s/hpshm-bench.raw.%ld.%u", m[i].path, (long)getpid(), seq++);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return raw_fail(why, len, "open on hugetlbfs", errno);
		(void)unlink(path);
		if (ftruncate(fd, (off_t)maplen) < 0) {
			e = errno;
			close(fd);
			return raw_fail(why, len, "ftruncate", e);
		}
		return fd;
	}
	snprintf(why, len, "no writable hugetlbfs mount with %zu KiB pages", page_size >> 10);
	return -1;
}

/* A SysV segment attached at addr and marked for removal at once, as sysv_hugetlb does
 * (Linux lets the workers attach a marked segment by id while it is attached). */
static void *raw_shm(size_t page_size, void *addr, size_t maplen, int *id, char *why, size_t len)
{
	void *p;
	int e;

	*id = shmget(IPC_PRIVATE, maplen, IPC_CREAT | IPC_EXCL | SHM_HUGETLB | (int)hpshm__linux_huge_bits(page_size) | 0600);
	if (*id < 0) {
		(void)raw_fail(why, len, "shmget", errno);
		return MAP_FAILED;
	}
	p = shmat(*id, addr, 0);
	e = errno;
	(void)shmctl(*id, IPC_RMID, NULL);
	if (p == (void *)-1) {
		(void)raw_fail(why, len, "shmat", e);
		return MAP_FAILED;
	}
	return p;
}

int bench_os_raw_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
		      size_t len)
{
	int flags = MAP_SHARED | (addr ? MAP_FIXED_NOREPLACE : 0);
	struct hpshm__backing b;
	size_t maplen = c->map_len ? c->map_len : round_up(size, c->page_size);
	uint64_t t0 = bench_wall_ns(), t1, t2;
	int fd = -1, id = -1, e, rc, huge;
	void *p;

	if (c->kind == BENCH_RAW_SHM && !c->page_size) {
		snprintf(why, len, "the SysV peer is for huge pages only");
		return -1;
	}
	if (c->kind == BENCH_RAW_MEMFD || c->kind == BENCH_RAW_FILE) {
		fd = c->kind == BENCH_RAW_FILE ? raw_file(c->page_size, maplen, why, len) :
		     raw_memfd("hpshm-bench:raw",
			       MFD_CLOEXEC | (c->page_size ? MFD_HUGETLB | hpshm__linux_huge_bits(c->page_size) : 0), maplen,
			       why, len);
		if (fd < 0)
			return -1;
	} else if (c->kind == BENCH_RAW_ANON) {
		flags |= MAP_ANONYMOUS | (c->page_size ? MAP_HUGETLB | (int)hpshm__linux_huge_bits(c->page_size) : 0);
	}
	if (c->kind == BENCH_RAW_SHM) {
		p = raw_shm(c->page_size, addr, maplen, &id, why, len);
		if (p == MAP_FAILED)
			return -1;
	} else {
		p = mmap(addr, maplen, PROT_READ | PROT_WRITE, flags, fd, 0);
		if (p == MAP_FAILED) {
			e = errno;
			if (fd >= 0)
				close(fd);
			return raw_fail(why, len, "mmap", e);
		}
	}
	/*
	 * Verified before populate, as hpshm verifies: smaps then has no page tables to walk, and
	 * a 4 KiB region's walk after populate would cost the raw peer what hpshm never pays.
	 */
	memset(&b, 0, sizeof(b));
	if (hpshm__os_backing(p, maplen, fd, &b) == 0 && b.page_size) {
		r->page_size = b.page_size;
		r->huge = b.huge;
		snprintf(r->verified_by, sizeof(r->verified_by), "%s", b.source);
	} else {
		r->page_size = c->page_size ? c->page_size : hpshm_base_page_size();
		snprintf(r->verified_by, sizeof(r->verified_by), "unverified");
	}
	rc = 0;
	t1 = bench_wall_ns();
	r->threads = c->threads > 1 && maplen / r->page_size > 1 ? c->threads : 1;
	huge = r->page_size > hpshm_base_page_size();
	if (r->threads > 1) {
		rc = raw_populate_split(p, maplen, r->page_size, r->threads);
	} else if (huge && !c->by_hand) {
		rc = raw_populate_pages(p, maplen, r->page_size);
	} else {
		if (fd >= 0)
			do
				rc = fallocate(fd, 0, 0, (off_t)maplen);
			while (rc < 0 && errno == EINTR);
		if (rc == 0)
			rc = raw_populate(p, maplen);
	}
	t2 = bench_wall_ns();
	r->addr = p;
	r->len = maplen;
	r->handle = fd >= 0 ? fd : id >= 0 ? id : BENCH_OS_NONE;
	r->raw_flags = id >= 0 ? BENCH_RAW_SHMID : 0;
	if (rc < 0) {
		e = errno;
		(void)bench_os_region_release(r);
		return raw_fail(why, len, fd >= 0 ? "fallocate/madvise" : "madvise", e);
	}
	/* Split as hpshm's report splits its own create: faulting in, and the rest. */
	r->populate_s = (double)(t2 - t1) / 1e9;
	r->rest_s = (double)(bench_wall_ns() - t0 - (t2 - t1)) / 1e9;
	return 0;
}

/* ---- THP --------------------------------------------------------------------------------- */

const char *bench_thp_mode(char *why, size_t len)
{
	struct hpshm__thp t;

	if (hpshm__os_thp(&t) < 0 || t.enabled[0] == '\0') {
		snprintf(why, len, "the kernel has no transparent huge pages");
		return NULL;
	}
	if (strcmp(t.shmem_enabled, "always") == 0 || strcmp(t.shmem_enabled, "advise") == 0 ||
	    strcmp(t.shmem_enabled, "within_size") == 0 || strcmp(t.shmem_enabled, "force") == 0)
		return "shmem";
	if (strcmp(t.enabled, "always") == 0 || strcmp(t.enabled, "madvise") == 0)
		return "private";
	snprintf(why, len, "transparent_hugepage/enabled is [%s] and shmem_enabled is [%s]", t.enabled,
		 t.shmem_enabled);
	return NULL;
}

int bench_os_thp_advise(char *prev, size_t prev_len, char *why, size_t len)
{
	struct hpshm__thp t;

	prev[0] = '\0';
	/* Only "never" and "deny" keep shared THP from a memfd that asks with MADV_HUGEPAGE. */
	if (hpshm__os_thp(&t) < 0 || t.shmem_enabled[0] == '\0' ||
	    (strcmp(t.shmem_enabled, "never") != 0 && strcmp(t.shmem_enabled, "deny") != 0))
		return 0;
	if (hpshm__os_thp_shmem_set("advise", why, len) < 0)
		return -1;
	snprintf(prev, prev_len, "%s", t.shmem_enabled);
	return 0;
}

int bench_os_thp_restore(const char *prev, char *why, size_t len)
{
	return prev[0] ? hpshm__os_thp_shmem_set(prev, why, len) : 0;
}

static size_t thp_pmd_size(void)
{
	size_t v = hpshm__os_thp_page_size();

	return v ? v : (size_t)2 << 20;
}

int bench_os_thp_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
		      size_t len)
{
	size_t pmd = thp_pmd_size(), maplen = round_up(size, pmd), over = 0;
	int shared = c->start != BENCH_START_THREAD;
	int flags = (shared ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS) | (addr ? MAP_FIXED_NOREPLACE : 0);
	int fd = -1, e;
	long kib;
	unsigned char *p;

	if (shared) {
		fd = raw_memfd("hpshm-bench:thp", MFD_CLOEXEC, maplen, why, len);
		if (fd < 0)
			return -1;
	} else if (!addr) {
		over = pmd;   /* map a huge page more and trim, so the region starts huge-aligned */
	}
	p = mmap(addr, maplen + over, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED) {
		e = errno;
		if (fd >= 0)
			close(fd);
		return raw_fail(why, len, "mmap", e);
	}
	if (over) {
		size_t head = (pmd - (uintptr_t)p % pmd) % pmd;

		if (head)
			munmap(p, head);
		if (over - head)
			munmap(p + head + maplen, over - head);
		p += head;
	}
	/*
	 * Private memory is copied on write by fork: a worker forked for another member of the
	 * group would write-protect every huge page here, and the threads' next writes would
	 * copy them.  MADV_DONTFORK keeps it out of every child.
	 */
	if (madvise(p, maplen, MADV_HUGEPAGE) < 0 || (!shared && madvise(p, maplen, MADV_DONTFORK) < 0) ||
	    raw_populate(p, maplen) < 0) {
		e = errno;
		munmap(p, maplen);
		if (fd >= 0)
			close(fd);
		return raw_fail(why, len, "madvise", e);
	}
	r->addr = p;
	r->len = maplen;
	r->handle = fd >= 0 ? fd : BENCH_OS_NONE;
	/* Huge only if (nearly) all of it is: a partly huge region is not what the row claims. */
	kib = hpshm__os_thp_kib(p);
	r->huge = kib >= 0 && (size_t)kib * 1024 >= maplen / 100 * 99;
	r->page_size = r->huge ? pmd : hpshm_base_page_size();
	snprintf(r->verified_by, sizeof(r->verified_by), "%s %ld%%", shared ? "ShmemPmdMapped" : "AnonHugePages",
		 kib < 0 ? 0L : (long)((double)kib * 1024 * 100 / (double)maplen));
	return 0;
}

int bench_os_region_release(struct bench_region *r)
{
	int rc = 0;

	if (r->raw_flags & BENCH_RAW_SHMID)
		return shmdt(r->addr) < 0 ? -1 : 0;   /* marked at create: the last detach frees it */
	if (munmap(r->addr, r->len) < 0)
		rc = -1;
	if (r->handle != BENCH_OS_NONE && close((int)r->handle) < 0)
		rc = -1;
	return rc;
}

/*
 * MADV_REMOVE frees the pages of a shared mapping of a memfd (its file's pages, as a punch
 * hole would; a hugetlb file's go back to the pool); the same regions are then faulted in
 * MIX_STEP at a time from each in turn (huge pages one at a time),
 * in an order drawn afresh for every step from seed.  The page allocator hands out what it
 * has in runs of neighbouring pages, so two regions faulted this way share every run, and
 * the host's backing of it, and no address bit above the step's tells them apart (a fixed
 * order gave one region the first 64 KiB of every 128 KiB: group.c, group_mix()).  64 KiB:
 * 16 pages from each at a time keep them mixed within every 2 MiB of guest memory, for
 * 16384 calls per GiB and region (a few hundredths of a second).
 */
#define MIX_STEP ((size_t)64 << 10)

int bench_os_mix(unsigned char *const *addr, const size_t *len, unsigned n, size_t page, uint64_t seed, char *why,
		 size_t why_len)
{
#ifdef MADV_REMOVE
	size_t most = 0, step = page > MIX_STEP ? page : MIX_STEP;
	unsigned removed = 0;

	for (unsigned i = 0; i < n; i++, removed++) {
		if (madvise(addr[i], len[i], MADV_REMOVE) < 0) {
			snprintf(why, why_len, "madvise(MADV_REMOVE): %s", strerror(errno));
			goto whole;
		}
		most = len[i] > most ? len[i] : most;
	}
	for (size_t off = 0; off < most; off += step) {
		unsigned order[BENCH_GROUP_MAX];

		for (unsigned i = 0; i < n; i++) {
			/* A fresh random order every step (Fisher-Yates, inside out). */
			unsigned j = (unsigned)(bench_splitmix(&seed) % (i + 1));

			order[i] = j == i ? i : order[j];
			order[j] = i;
		}
		for (unsigned k = 0; k < n; k++) {
			unsigned i = order[k];

			if (off < len[i] && raw_populate(addr[i] + off, len[i] - off < step ? len[i] - off : step) < 0) {
				snprintf(why, why_len, "madvise(MADV_POPULATE_WRITE): %s", strerror(errno));
				goto whole;
			}
		}
	}
	return 0;
whole:
	/* What was given back is faulted in again, in order, so that no region keeps a hole. */
	for (unsigned i = 0; i < removed; i++)
		if (raw_populate(addr[i], len[i]) < 0)
			return -2;
	return -1;
#else
	(void)addr;
	(void)len;
	(void)n;
	(void)page;
	snprintf(why, why_len, "this system has no MADV_REMOVE to give a mapping's pages back");
	return -1;
#endif
}

const char *bench_os_populate_how(void)
{
	return "fallocate + madvise; huge pages: madvise, tail first";
}

const char *bench_os_by_hand(void)
{
	return "by hand: fallocate + one madvise over the region";
}

const char *bench_os_caveat(void)
{
	return "";
}
