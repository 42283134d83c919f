/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/facts.c -- ports/facts.h on Linux: the facts of linux.h handed to the tool and
 * the benchmark in port.h's structs, and the few /proc readers only they need.
 *
 * Most functions hand over what the library itself decides from (pools, mounts, cgroups,
 * verification), in the very structs the library fills, so `hpshm probe` and a create cannot
 * disagree.  The rest serve the benchmark:
 *   - VmPTE in /proc/self/status is the memory of this process's page tables (PTE and PMD
 *     levels): deterministic, so two runs on one machine give the same figure;
 *   - transparent huge pages show in smaps as AnonHugePages (private) or ShmemPmdMapped
 *     (shared), never in KernelPageSize, which stays 4 kB even when every page is huge;
 *   - MemAvailable in /proc/meminfo is what a run may take without pushing the machine
 *     into reclaim.
 * Every path is read under the sysroot, like the rest of the Linux port.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "facts.h"
#include "linux/linux.h"

#define FACTS_LINE_MAX 1024 /* smaps field lines fit; a cut header line still has its range */

size_t hpshm__os_default_page_size(void)
{
	return hpshm__port_default_huge_page_size();
}

const char *hpshm__os_huge_absent(void)
{
	return ""; /* the pools say it: `hpshm probe` shows them */
}

int hpshm__os_pools(struct hpshm__pool *out, int max)
{
	return hpshm__linux_pools(out, max);
}

int hpshm__os_pool(size_t page_size, struct hpshm__pool *out)
{
	if (out == NULL)
		return HPSHM_EINVAL;
	return hpshm__linux_pool_get(page_size, out);
}

unsigned long hpshm__os_pool_available(const struct hpshm__pool *p)
{
	return hpshm__linux_pool_available(p);
}

const char *hpshm__os_pool_source(void)
{
	return "/sys/kernel/mm/hugepages";
}

char *hpshm__os_pool_knob(size_t page_size, char *buf, size_t len)
{
	return hpshm__linux_pool_knob(page_size, buf, len);
}

char *hpshm__os_page_size_cpu_check(size_t page_size, char *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return buf;
	buf[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
	/* x86 maps 1 GiB pages only with the pdpe1gb feature (X86_FEATURE_GBPAGES). */
	if (page_size == ((size_t)1 << 30))
		snprintf(buf, len, "grep -m1 -ow pdpe1gb /proc/cpuinfo   # prints pdpe1gb if the CPU maps 1 GiB pages; "
			 "in a virtual machine the hypervisor must pass the flag on (e.g. QEMU -cpu host)");
#else
	(void)page_size;
#endif
	return buf;
}

int hpshm__os_numa_nodes(size_t page_size, struct hpshm__node *out, int max)
{
	return hpshm__port_numa_nodes(page_size, out, max);
}

const char *hpshm__os_numa_source(void)
{
	return "/sys/devices/system/node";
}

char *hpshm__os_numa_pool_file(int node, size_t page_size, char *buf, size_t len)
{
	return hpshm__linux_numa_pool_file(node, page_size, buf, len);
}

int hpshm__os_mounts(struct hpshm__mount *out, int max)
{
	return hpshm__linux_hugetlbfs_mounts(out, max);
}

int hpshm__os_lock_privilege(void)
{
	return hpshm__linux_has_cap_ipc_lock();
}

const char *hpshm__os_lock_privilege_name(void)
{
	return "CAP_IPC_LOCK";
}

long hpshm__os_huge_group(void)
{
	return hpshm__linux_hugetlb_shm_group();
}

int hpshm__os_in_group(long gid)
{
	return hpshm__linux_in_group(gid);
}

int hpshm__os_sysv_limits(struct hpshm__sysv_limits *out)
{
	return hpshm__linux_sysv_limits(out);
}

int hpshm__os_limit(size_t page_size, struct hpshm__limit *out)
{
	if (out == NULL)
		return HPSHM_EINVAL;
	memset(out, 0, sizeof(*out));
	return hpshm__linux_cgroup_get(page_size, out);
}

char *hpshm__os_limit_size_name(size_t page_size, char *buf, size_t len)
{
	return hpshm__linux_hugetlb_cgroup_size(page_size, buf, len);
}

int hpshm__os_fault_risk(size_t size, size_t page_size)
{
	return hpshm__linux_hugetlb_fault_risk(size, page_size);
}

int hpshm__os_thp(struct hpshm__thp *out)
{
	if (out == NULL)
		return HPSHM_EINVAL;
	/* hpshm__linux_thp() fails only for a NULL out; each setting it cannot read is already "". */
	(void)hpshm__linux_thp(out);
	return 0;
}

size_t hpshm__os_thp_page_size(void)
{
	uint64_t v = 0;

	if (hpshm__linux_read_u64("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", &v) < 0 || v > SIZE_MAX)
		return 0;
	return (size_t)v;
}

long hpshm__os_thp_kib(const void *addr)
{
	char line[FACTS_LINE_MAX];
	uintptr_t a = (uintptr_t)addr, lo, hi;
	int inside = 0;
	long kib = -1, v;
	FILE *f = hpshm__linux_sysfile_open("/proc/self/smaps");

	if (f == NULL)
		return -1;
	while (hpshm__linux_getline(f, line, sizeof(line), NULL)) {
		if (hpshm__linux_maps_range(line, &lo, &hi)) {
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

int hpshm__os_backing(void *addr, size_t len, intptr_t file, struct hpshm__backing *out)
{
	if (out == NULL)
		return HPSHM_EINVAL;
	return hpshm__port_verify_backing(addr, len, hpshm__port_handle_of(file, file >= 0), out);
}

size_t hpshm__os_mapping_len(const void *addr)
{
	char line[FACTS_LINE_MAX];
	uintptr_t lo, hi;

	/* hpshm__port_maps_line() of one byte gives the mapping that holds it, as a whole maps line:
	 * lo <= addr < hi needs no second check. */
	if (hpshm__port_maps_line(addr, 0, line, sizeof(line)) < 0 || !hpshm__linux_maps_range(line, &lo, &hi))
		return 0;
	return (size_t)(hi - lo);
}

long hpshm__os_page_table_kib(void)
{
	unsigned long long kib;

	if (hpshm__linux_read_field("/proc/self/status", "VmPTE", 10, &kib) < 0 || kib > LONG_MAX)
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

	if (hpshm__linux_read_field("/proc/meminfo", "MemAvailable", 10, &kib) < 0 || kib > UINT64_MAX / 1024)
		return 0;
	return (uint64_t)kib * 1024;
}
