/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/facts.c -- ports/facts.h on a system with no OS folder: what POSIX can say.
 *
 * What only Linux has (pools, mounts, cgroups, THP) answers from ports/facts_absent.c.  Here:
 * the default huge page size from the port (an OS folder such as ports/freebsd/ knows it;
 * pages_none.c says none), on macOS the sentence that says why there are no shared superpages
 * at all, and what getrusage() and the backing check tell.  Built where the fallbacks of
 * ports/posix/ are, and, like them, compiled on Linux into an object library nothing links,
 * so it keeps up with the header.
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

int hpshm__os_lock_privilege(void)
{
	return 0;
}

const char *hpshm__os_lock_privilege_name(void)
{
	return "";
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
