/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/introspect.c -- ports/introspect.h on Linux: the facts of linux.h in the neutral
 * shape the tool and the benchmark read, and the few /proc readers only they need.
 *
 * Most functions hand over what the library itself decides from (pools, mounts, cgroups,
 * verification), so `hpshm probe` and a create cannot disagree.  The rest serve the
 * benchmark:
 *   - VmPTE in /proc/self/status is the memory of this process's page tables (PTE and PMD
 *     levels): deterministic, so two runs on one machine give the same figure;
 *   - transparent huge pages show in smaps as AnonHugePages (private) or ShmemPmdMapped
 *     (shared), never in KernelPageSize, which stays 4 kB even when every page is huge;
 *   - MemAvailable in /proc/meminfo is what a run may take without pushing the machine
 *     into reclaim;
 *   - the pool is resized through the size's sysfs nr_hugepages file, which exists for every
 *     size, unlike the sysctl (the default size only).
 * Every path is read under the sysroot, like the rest of the Linux port.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "introspect.h"
#include "linux/linux.h"

#define INTROSPECT_LINE_MAX 1024 /* smaps field lines fit; a cut header line still has its range */

_Static_assert(HPSHM__OS_UNLIMITED == HPSHM__UNLIMITED, "the neutral and the Linux 'no limit' differ");
_Static_assert(HPSHM__OS_MAX_SIZES == HPSHM__MAX_PAGE_SIZES, "the neutral and the port's size counts differ");

/* ---- huge page pools ---- */

static void introspect_pool(const struct hpshm__pool *in, struct hpshm__os_pool *out)
{
	out->page_size = in->page_size;
	out->total = in->total;
	out->free = in->free;
	out->resv = in->resv;
	out->surplus = in->surplus;
	out->overcommit = in->overcommit;
}

size_t hpshm__os_default_page_size(void)
{
	return hpshm__default_huge_page_size();
}

const char *hpshm__os_huge_absent(void)
{
	return ""; /* the pools say it: `hpshm probe` shows them */
}

int hpshm__os_pools(struct hpshm__os_pool *out, int max)
{
	struct hpshm__pool pools[HPSHM__MAX_PAGE_SIZES];
	int n;

	if (out == NULL || max <= 0)
		return 0;
	n = hpshm__pools(pools, max < HPSHM__MAX_PAGE_SIZES ? max : HPSHM__MAX_PAGE_SIZES);
	for (int i = 0; i < n; i++)
		introspect_pool(&pools[i], &out[i]);
	return n;
}

int hpshm__os_pool(size_t page_size, struct hpshm__os_pool *out)
{
	struct hpshm__pool pool;
	int rc;

	if (out == NULL)
		return HPSHM_EINVAL;
	rc = hpshm__pool_get(page_size, &pool);
	if (rc == 0)
		introspect_pool(&pool, out);
	return rc;
}

unsigned long hpshm__os_pool_available(const struct hpshm__os_pool *p)
{
	struct hpshm__pool pool = {
		.page_size = p->page_size,
		.total = p->total,
		.free = p->free,
		.resv = p->resv,
		.surplus = p->surplus,
		.overcommit = p->overcommit,
	};

	return hpshm__pool_available(&pool);
}

const char *hpshm__os_pool_source(void)
{
	return "/sys/kernel/mm/hugepages";
}

char *hpshm__os_pool_knob(size_t page_size, char *buf, size_t len)
{
	return hpshm__pool_knob(page_size, buf, len);
}

int hpshm__os_pool_resize(size_t page_size, unsigned long pages, char *why, size_t len)
{
	char file[128], path[PATH_MAX];
	FILE *f;
	int bad, n;

	hpshm__pool_file(page_size, file, sizeof(file));
	n = snprintf(path, sizeof(path), "%s%s", hpshm__sysroot(), file);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, len, "the path of %s is too long under the sysroot", file);
		return -1;
	}
	f = hpshm__fopen(path, "w");
	if (f == NULL) {
		snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	bad = fprintf(f, "%lu\n", pages) < 0;
	bad |= fclose(f) != 0;
	if (bad) {
		snprintf(why, len, "cannot write %lu to %s: %s", pages, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- file systems of huge pages ---- */

int hpshm__os_mounts(struct hpshm__os_mount *out, int max)
{
	struct hpshm__mount *mounts;
	int n;

	if (out == NULL || max <= 0)
		return 0;
	mounts = hpshm__hugetlbfs_mount_list(&n);
	for (int i = 0; i < n && i < max; i++) {
		hpshm__strlcpy(out[i].path, mounts[i].path, sizeof(out[i].path));
		out[i].page_size = mounts[i].page_size;
		out[i].writable = mounts[i].writable;
	}
	free(mounts);
	return n;
}

/* ---- privileges and SysV limits ---- */

int hpshm__os_lock_privilege(void)
{
	return hpshm__has_cap_ipc_lock();
}

const char *hpshm__os_lock_privilege_name(void)
{
	return "CAP_IPC_LOCK";
}

long hpshm__os_huge_group(void)
{
	return hpshm__hugetlb_shm_group();
}

int hpshm__os_in_group(long gid)
{
	return hpshm__in_group(gid);
}

int hpshm__os_sysv_limits(struct hpshm__os_sysv_limits *out)
{
	struct hpshm__sysv_limits lim;
	int rc;

	if (out == NULL)
		return HPSHM_EINVAL;
	rc = hpshm__sysv_limits(&lim);
	out->shmmax = lim.shmmax;
	out->shmall = lim.shmall;
	out->shmmni = lim.shmmni;
	return rc;
}

/* ---- the hugetlb cgroup ---- */

int hpshm__os_limit(size_t page_size, struct hpshm__os_limit *out)
{
	struct hpshm__cgroup cg;
	int rc;

	if (out == NULL)
		return HPSHM_EINVAL;
	memset(out, 0, sizeof(*out));
	rc = hpshm__cgroup_get(page_size, &cg);
	if (rc < 0)
		return rc;
	out->version = cg.version;
	hpshm__strlcpy(out->path, cg.path, sizeof(out->path));
	out->limit = cg.limit;
	out->usage = cg.usage;
	out->rsvd_limit = cg.rsvd_limit;
	out->rsvd_usage = cg.rsvd_usage;
	return 0;
}

char *hpshm__os_limit_size_name(size_t page_size, char *buf, size_t len)
{
	return hpshm__hugetlb_cgroup_size(page_size, buf, len);
}

int hpshm__os_fault_risk(size_t size, size_t page_size)
{
	return hpshm__hugetlb_fault_risk(size, page_size);
}

/* ---- transparent huge pages ---- */

int hpshm__os_thp_shmem_set(const char *mode, char *why, size_t len)
{
	static const char knob[] = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
	char path[PATH_MAX];
	FILE *f;
	int bad, n;

	n = snprintf(path, sizeof(path), "%s%s", hpshm__sysroot(), knob);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, len, "the path of %s is too long under the sysroot", knob);
		return -1;
	}
	f = hpshm__fopen(path, "w");
	if (f == NULL) {
		snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	bad = fputs(mode, f) < 0;
	bad |= fclose(f) != 0;
	if (bad) {
		snprintf(why, len, "cannot write %s to %s: %s", mode, path, strerror(errno));
		return -1;
	}
	return 0;
}

int hpshm__os_thp(struct hpshm__os_thp *out)
{
	struct hpshm__thp thp;

	if (out == NULL)
		return HPSHM_EINVAL;
	/* hpshm__thp() fails only for a NULL out; each setting it cannot read is already "". */
	(void)hpshm__thp(&thp);
	hpshm__strlcpy(out->enabled, thp.enabled, sizeof(out->enabled));
	hpshm__strlcpy(out->defrag, thp.defrag, sizeof(out->defrag));
	hpshm__strlcpy(out->shmem_enabled, thp.shmem_enabled, sizeof(out->shmem_enabled));
	return 0;
}

size_t hpshm__os_thp_page_size(void)
{
	uint64_t v = 0;

	if (hpshm__read_u64("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", &v) < 0 || v > SIZE_MAX)
		return 0;
	return (size_t)v;
}

long hpshm__os_thp_kib(const void *addr)
{
	char line[INTROSPECT_LINE_MAX];
	uintptr_t a = (uintptr_t)addr, lo, hi;
	int inside = 0;
	long kib = -1, v;
	FILE *f = hpshm__sysfile_open("/proc/self/smaps");

	if (f == NULL)
		return -1;
	while (hpshm__getline(f, line, sizeof(line), NULL)) {
		if (hpshm__maps_range(line, &lo, &hi)) {
			if (inside)
				break;
			inside = a >= lo && a < hi;
			continue;
		}
		if (!inside)
			continue;
		if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1 || sscanf(line, "ShmemPmdMapped: %ld kB", &v) == 1)
			kib = kib < 0 ? v : kib + v;
	}
	fclose(f);
	return kib;
}

/* ---- this process's memory ---- */

int hpshm__os_backing(void *addr, size_t len, int fd, struct hpshm__os_backing *out)
{
	struct hpshm__backing b;
	int rc;

	if (out == NULL)
		return HPSHM_EINVAL;
	memset(&b, 0, sizeof(b));
	rc = hpshm__verify_backing(addr, len, fd, &b);
	out->page_size = b.page_size;
	out->huge = b.huge;
	hpshm__strlcpy(out->source, b.source, sizeof(out->source));
	return rc;
}

size_t hpshm__os_mapping_len(const void *addr)
{
	char line[INTROSPECT_LINE_MAX];
	uintptr_t lo, hi;

	/* hpshm__maps_line() of one byte gives the mapping that holds it, as a whole maps line:
	 * lo <= addr < hi needs no second check. */
	if (hpshm__maps_line(addr, 0, line, sizeof(line)) < 0 || !hpshm__maps_range(line, &lo, &hi))
		return 0;
	return (size_t)(hi - lo);
}

long hpshm__os_page_table_kib(void)
{
	unsigned long long kib;

	if (hpshm__read_field("/proc/self/status", "VmPTE", 10, &kib) < 0 || kib > LONG_MAX)
		return -1;
	return (long)kib;
}

const char *hpshm__os_page_table_absent(void)
{
	return ""; /* VmPTE, since Linux 2.6.10 */
}

uint64_t hpshm__os_page_faults(void)
{
	struct rusage ru;

	/* getrusage() fails only for an unknown who or a bad pointer (EINVAL, EFAULT). */
	memset(&ru, 0, sizeof(ru));
	(void)getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_minflt;
}

uint64_t hpshm__os_mem_available(void)
{
	unsigned long long kib;

	if (hpshm__read_field("/proc/meminfo", "MemAvailable", 10, &kib) < 0 || kib > UINT64_MAX / 1024)
		return 0;
	return (uint64_t)kib * 1024;
}

/* ---- this process ---- */

int hpshm__os_program_path(char *buf, size_t len)
{
	ssize_t n;

	if (buf == NULL || len < 2)
		return HPSHM_EINVAL;
	n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0 || (size_t)n >= len - 1)
		return HPSHM_EUNAVAILABLE; /* no /proc, or a path that may have been cut */
	buf[n] = '\0';
	return 0;
}

int hpshm__os_die_with_parent(void)
{
	return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 ? 0 : HPSHM_ENOTSUP;
}

int hpshm__os_far_address(size_t len, size_t align, void **out)
{
	return hpshm__pick_address(len, align, out);
}
