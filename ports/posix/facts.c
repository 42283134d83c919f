/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/facts.c -- ports/facts.h on a system with no OS folder: nothing to show.
 *
 * POSIX has no huge page pools, mounts, cgroups or page-table counters, so every fact is
 * absent: counts of 0, HPSHM_EUNAVAILABLE, empty strings.  The tool then says "none" or
 * "unreadable" rather than guessing.  Two facts come from elsewhere: the default huge page
 * size from the port (an OS folder such as ports/freebsd/ knows it; pages_none.c says none),
 * and on macOS the sentence that says why there are no shared superpages at all.  Built where
 * the fallbacks of ports/posix/ are, and, like them, compiled on Linux into an object library
 * nothing links, so it keeps up with the header.
 */
#include <string.h>
#include <sys/resource.h>

#include "base/base.h"
#include "facts.h"
#include "port.h"

size_t hpshm__os_default_page_size(void)
{
	return hpshm__port_default_huge_page_size(); /* 0 but where an OS folder knows (FreeBSD) */
}

const char *hpshm__os_huge_absent(void)
{
#ifdef __APPLE__
	/* Superpages exist on macOS only for private memory of x86_64 processes
	 * (VM_FLAGS_SUPERPAGE_SIZE_* of mach_vm_allocate), never for memory another process
	 * can map: hpshm offers plain there. */
	return "macOS has no superpages for shared memory (only private memory on x86_64 gets them): "
	       "segments use base pages (plain)";
#else
	return "";
#endif
}

int hpshm__os_pools(struct hpshm__pool *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}

int hpshm__os_pool(size_t page_size, struct hpshm__pool *out)
{
	(void)page_size;
	(void)out;
	return HPSHM_EUNAVAILABLE;
}

unsigned long hpshm__os_pool_available(const struct hpshm__pool *p)
{
	(void)p;
	return 0;
}

const char *hpshm__os_pool_source(void)
{
	return "";
}

char *hpshm__os_pool_knob(size_t page_size, char *buf, size_t len)
{
	(void)page_size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return buf;
}

int hpshm__os_mounts(struct hpshm__mount *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}

int hpshm__os_lock_privilege(void)
{
	return 0;
}

const char *hpshm__os_lock_privilege_name(void)
{
	return "";
}

long hpshm__os_huge_group(void)
{
	return -1;
}

int hpshm__os_in_group(long gid)
{
	(void)gid;
	return 0;
}

int hpshm__os_sysv_limits(struct hpshm__sysv_limits *out)
{
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	return HPSHM_EIO;
}

int hpshm__os_limit(size_t page_size, struct hpshm__limit *out)
{
	(void)page_size;
	if (out == NULL)
		return HPSHM_EINVAL;
	memset(out, 0, sizeof(*out));
	return 0;
}

char *hpshm__os_limit_size_name(size_t page_size, char *buf, size_t len)
{
	(void)page_size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return buf;
}

int hpshm__os_fault_risk(size_t size, size_t page_size)
{
	(void)size;
	(void)page_size;
	return 0;
}

int hpshm__os_thp(struct hpshm__thp *out)
{
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	return HPSHM_EUNAVAILABLE;
}

size_t hpshm__os_thp_page_size(void)
{
	return 0;
}

long hpshm__os_thp_kib(const void *addr)
{
	(void)addr;
	return -1;
}

int hpshm__os_backing(void *addr, size_t len, intptr_t file, struct hpshm__backing *out)
{
	(void)addr;
	(void)len;
	(void)file;
	if (out == NULL)
		return HPSHM_EINVAL;
	out->page_size = 0;
	out->huge = 0;
	hpshm__strlcpy(out->source, "unverified", sizeof(out->source));
	return HPSHM_EUNAVAILABLE;
}

size_t hpshm__os_mapping_len(const void *addr)
{
	(void)addr;
	return 0;
}

int hpshm__os_children_mapping(const void *addr, long *out, int max)
{
	(void)addr;
	(void)out;
	(void)max;
	return 0; /* no interposer here, and no listing of a process's children */
}

long hpshm__os_page_table_kib(void)
{
	return -1;
}

const char *hpshm__os_page_table_absent(void)
{
	return "not offered here: POSIX has no per-process page-table figure, and this port reads none";
}

uint64_t hpshm__os_page_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)ru.ru_minflt;
}

uint64_t hpshm__os_mem_available(void)
{
	return 0;
}
