/*
 * bench/procfs.c -- what the kernel says about this process: page-table memory, faults, THP.
 *
 * These are the deterministic figures of the run: VmPTE (the page tables the process owns,
 * PTE and PMD levels) and the minor fault count do not depend on load, so two runs on the
 * same machine give the same numbers.  VmPTE is read before and after a worker maps and
 * touches the segment, and the growth is the segment's cost; a process's own code, stack
 * and heap have their tables already.
 *
 * THP is verified from smaps AnonHugePages (private) or ShmemPmdMapped (shared), since its
 * KernelPageSize stays 4 kB even when every page is huge.
 *
 * MemAvailable is read before each group of configurations is created: a group holds all
 * its regions at once, and the bench must not push a shared machine into reclaim.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"

long bench_vmpte_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

uint64_t bench_minflt(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)ru.ru_minflt;
}

/* The smaps line "start-end ..." of the VMA containing addr: its range, or 0. */
static int vma_range(const char *line, uintptr_t *lo, uintptr_t *hi)
{
	char *end;

	*lo = (uintptr_t)strtoull(line, &end, 16);
	if (*end != '-')
		return 0;
	*hi = (uintptr_t)strtoull(end + 1, &end, 16);
	return *end == ' ';
}

size_t bench_vma_len(const void *addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t a = (uintptr_t)addr, lo, hi;
	char line[512];
	size_t len = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (vma_range(line, &lo, &hi) && a >= lo && a < hi) {
			len = hi - lo;
			break;
		}
	}
	fclose(f);
	return len;
}

long bench_anon_huge_kib(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t a = (uintptr_t)addr, lo, hi;
	char line[512];
	int inside = 0;
	long kib = -1, v;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (vma_range(line, &lo, &hi)) {
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

uint64_t bench_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}
