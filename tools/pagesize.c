/* SPDX-License-Identifier: MIT */
/*
 * tools/pagesize.c -- which huge page sizes could exist, and how an operator gets one the
 * kernel does not offer now.
 *
 * `hpshm plan 8GiB --huge-page-size 1G` on a kernel that shows no 1 GiB pool is a question a
 * plan must answer, not refuse (issue 26): 1 GiB pages exist on this architecture, the kernel
 * just has not been told to keep them.  A size no processor of this architecture can map (3M,
 * or 16M on x86) is a typing error, and the refusal names the sizes that exist.  The sizes are
 * the processor's, so they are compiled in per architecture; the pool files and the per-node
 * files come from the port (ports/facts.h), as every other path plan prints.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "ports/facts.h"
#include "tool.h"

#define GIB ((uint64_t)1 << 30)
#define MIB ((uint64_t)1 << 20)
#define KIB ((uint64_t)1 << 10)

/*
 * What the processors of this architecture can map as one page for hugetlb, ascending.
 * x86: 2 MiB (PAE, and 4 MiB without it), 1 GiB with pdpe1gb (a 32-bit program can run on a
 * 64-bit kernel).  arm64: 64K/2M/32M/1G with 4 KiB base pages, 2M/32M/1G with 16 KiB, 2M/512M/
 * 16G with 64 KiB.  powerpc64: 2M/1G (radix), 16M/16G (hash).  s390x: 1M, 2G.  riscv64: 64K
 * (Svnapot), 2M, 1G, 512G.
 */
static const struct {
	const char *arch;
	uint64_t    sizes[8];
} tool_arch =
#if defined(__x86_64__) || defined(_M_X64)
	{ "x86-64", { 2 * MIB, GIB } };
#elif defined(__i386__) || defined(_M_IX86)
	{ "x86", { 2 * MIB, 4 * MIB, GIB } };
#elif defined(__aarch64__) || defined(_M_ARM64)
	{ "arm64", { 64 * KIB, 2 * MIB, 32 * MIB, 512 * MIB, GIB, 16 * GIB } };
#elif defined(__powerpc64__)
	{ "powerpc64", { 2 * MIB, 16 * MIB, GIB, 16 * GIB } };
#elif defined(__s390x__)
	{ "s390x", { MIB, 2 * GIB } };
#elif defined(__riscv) && __riscv_xlen == 64
	{ "riscv64", { 64 * KIB, 2 * MIB, GIB, 512 * GIB } };
#else
	{ NULL, { 0 } }; /* unknown: any power of two above the base page may exist */
#endif

int tool_possible_page_sizes(size_t *out, int max, const char **arch)
{
	int n = 0;

	*arch = tool_arch.arch;
	for (size_t i = 0; i < sizeof(tool_arch.sizes) / sizeof(tool_arch.sizes[0]); i++) {
		uint64_t s = tool_arch.sizes[i];

		/* 0 ends the list; a size this program's size_t cannot hold cannot be asked for. */
		if (s == 0 || s > (uint64_t)SIZE_MAX || n >= max)
			break;
		out[n++] = (size_t)s;
	}
	return n;
}

int tool_page_size_possible(size_t ps, char *why, size_t len)
{
	size_t sizes[8];
	const char *arch;
	char list[160];
	int n = tool_possible_page_sizes(sizes, 8, &arch);

	if (n == 0) {
		/* No table for this processor: the kernel alone can tell, and a power of two above
		 * the base page is all that can be ruled in. */
		snprintf(why, len, "huge pages are a power of two above the base page size (%zu bytes)",
			 hpshm_base_page_size());
		return ps > hpshm_base_page_size() && (ps & (ps - 1)) == 0;
	}
	snprintf(why, len, "%s processors have huge pages of %s only", arch, hpshm__size_list(sizes, n, list, sizeof(list)));
	for (int i = 0; i < n; i++)
		if (sizes[i] == ps)
			return 1;
	return 0;
}

void tool_pages_fix(size_t ps, size_t pages, struct tool_pages_fix *fix)
{
	struct hpshm__node nodes[HPSHM__MAX_NODES];
	char ks[32], psz[32], file[160];
	int nnodes, node = -1;

	memset(fix, 0, sizeof(*fix));
	tool_kernel_size(ps, ks, sizeof(ks));
	hpshm_size_format(ps, psz, sizeof(psz));
	snprintf(fix->boot, sizeof(fix->boot), "hugepagesz=%s hugepages=%zu", ks, pages);
	snprintf(fix->boot_default, sizeof(fix->boot_default), "default_hugepagesz=%s", ks);
	snprintf(fix->boot_how, sizeof(fix->boot_how),
		 "GRUB: append to GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub (or grub2-mkconfig -o "
		 "/boot/grub2/grub.cfg), reboot.  Put %s in front only if %s should also be the default size, the "
		 "one vm.nr_hugepages, hugetlbfs mounts without pagesize= and huge_page_size=default mean",
		 fix->boot_default, psz);
	/* The pool file of a size that is not the default: the sysfs file, not the sysctl. */
	snprintf(fix->runtime, sizeof(fix->runtime), "echo %zu > %s", pages,
		 hpshm__os_pool_knob(ps, file, sizeof(file)));
	/* Per node: the first node with memory of this machine as the example. */
	nnodes = hpshm__os_numa_nodes(ps, nodes, HPSHM__MAX_NODES);
	for (int i = 0; i < nnodes && i < HPSHM__MAX_NODES && node < 0; i++)
		if (nodes[i].has_memory)
			node = nodes[i].id;
	if (node >= 0)
		snprintf(fix->runtime_node, sizeof(fix->runtime_node), "echo %zu > %s   # on node %d alone; nodeK: node K",
			 pages, hpshm__os_numa_pool_file(node, ps, file, sizeof(file)), node);
	snprintf(fix->caveat, sizeof(fix->caveat),
		 "at run time the kernel must find %zu free, aligned, physically contiguous blocks of %s: on a "
		 "machine that has run a while memory is fragmented and it often gives fewer pages than asked, "
		 "without an error (read nr_hugepages back); and the file exists only once the kernel offers %s "
		 "pages (after a boot with \"hugepagesz=%s hugepages=0\", or on a kernel that offers them "
		 "without it)", pages, psz, psz, ks);
	hpshm__os_page_size_cpu_check(ps, fix->cpu_check, sizeof(fix->cpu_check));
	snprintf(fix->offered_check, sizeof(fix->offered_check),
		 "ls %s   # lists hugepages-%zukB once the kernel offers %s pages; `hpshm probe` shows their pool",
		 hpshm__os_pool_source(), ps / 1024, psz);
}
