/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/numa.c -- NUMA placement on Linux: the nodes and their huge page pools from
 * sysfs, the policy applied with mbind(), the pages' nodes read back with move_pages(), and
 * the populate threads run on the CPUs of the node they fill.  Raw system calls through the
 * Linux table (sys.c): no libnuma, and tests inject every call.
 *
 * What sysfs says (all under hpshm__linux_sysroot()):
 *   /sys/devices/system/node/online       the nodes, as a list ("0-3"); without it, the nodeN
 *                                         directories; without both, a kernel without NUMA
 *   /sys/devices/system/node/has_memory   the nodes with memory (N_MEMORY); a CPU-only node
 *                                         (or one of CXL memory not yet onlined) is not in it
 *   nodeN/cpulist, nodeN/meminfo          its CPUs, its MemFree
 *   nodeN/hugepages/hugepages-<kB>kB/     its share of each huge page pool: nr_hugepages,
 *                                         free_hugepages (no resv_hugepages: see below)
 *
 * Why the pools are checked per node, and how strictly (hpshm__port_numa_check()):
 *   The kernel reserves huge pages for a mapping globally (resv_huge_pages, mm/hugetlb.c
 *   hugetlb_acct_memory()), never per node, so a mapping bound to a node without free pages
 *   maps fine and then its faults find no page there: SIGBUS on touch, EFAULT from
 *   MADV_POPULATE_WRITE.  Only MPOL_BIND restricts where a huge page may come from:
 *   policy_nodemask() (mm/mempolicy.c) returns the policy's nodes as the allocation's
 *   nodemask for BIND, and NULL for PREFERRED and INTERLEAVE, whose node is only where
 *   dequeue_hugetlb_folio_nodemask() (mm/hugetlb.c) starts its walk of every node.  So:
 *     - bind: strict.  The free pages of the bound nodes together must hold the segment,
 *       else HPSHM_ENOMEM (and huge_pages=try goes on to the next provider);
 *     - preferred and interleave: not refused.  A short node makes the kernel take pages of
 *       another node, never fail; refusing would turn huge pages on the wrong node into
 *       base pages under try, which is worse, and the report says where the pages landed.
 *       `hpshm plan` prints the per-node commands that make each node hold its share.
 *   What is counted is free_hugepages of the node.  Pages other mappings reserved but have
 *   not faulted in are still counted free there (the kernel keeps the reservation count for
 *   the whole pool only), so the check can pass and the populate later find a reserved page
 *   gone: the populate a policy gets under populate=auto (core/segment.c) then fails
 *   cleanly, never with SIGBUS (populate=off takes that risk knowingly).  Counting free
 *   minus the global resv on every node would refuse segments that fit, on a machine with
 *   any reservation at all.
 *
 * local is the node of the CPU the creating thread runs on (getcpu), applied as
 * preferred:N rather than MPOL_LOCAL: under MPOL_LOCAL each page goes to the node of whichever
 * thread touches it first, so populate threads on other CPUs (and, with populate=off, the
 * server's workers) would scatter the segment.  A CPU of a node without memory keeps
 * MPOL_LOCAL, the kernel's nearest node with memory.
 *
 * The populate threads run on the CPUs of the node their range is for (bind, preferred, and
 * local as preferred), among the CPUs the process may use; the calling thread runs part 0
 * too, and gets its own CPUs back afterwards (populate.c saves and restores them).
 *
 * mbind's flags: MPOL_MF_MOVE and no MPOL_MF_STRICT.  The policy is applied before the
 * populate, but a named segment's header page is written just before (core/segment.c), so one
 * page may already be somewhere: MOVE migrates it onto the policy's nodes when it can, and
 * without STRICT a page that cannot move leaves it where it is rather than failing the create;
 * the report reads where every page is anyway.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"

#define NODE_DIR       "/sys/devices/system/node"
#define WHERE_CHUNK    1024  /* pages move_pages() is asked about per call */
#define NODE_LIST_MAX  4096  /* a cpulist of a large machine ("0-63,128-191,...") */

/* What the machine has, as bit sets of node numbers below HPSHM__MAX_NODES. */
struct numa_machine {
	uint64_t online;  /* the nodes */
	uint64_t memory;  /* those with memory */
};

/* Call add(user, n) for each number of a list such as "0-3,8,10-11".  0, or -1 if malformed. */
static int numa_list_each(const char *s, void (*add)(void *user, unsigned long n), void *user)
{
	const char *p = s;
	unsigned long lo, hi;
	char *end;

	while (*p == ' ' || *p == '\n')
		p++;
	while (*p != '\0' && *p != '\n') {
		errno = 0;
		lo = strtoul(p, &end, 10);
		if (end == p || errno != 0)
			return -1;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1 || errno != 0 || hi < lo)
				return -1;
			p = end;
		}
		for (unsigned long n = lo; n <= hi && n < 1u << 20; n++)
			add(user, n);
		if (*p == ',')
			p++;
		else if (*p != '\0' && *p != '\n')
			return -1;
	}
	return 0;
}

static void numa_add_node(void *user, unsigned long n)
{
	if (n < HPSHM__MAX_NODES)
		*(uint64_t *)user |= (uint64_t)1 << n;
}

static void numa_add_cpu(void *user, unsigned long n)
{
	if (n < CPU_SETSIZE)
		CPU_SET((int)n, (cpu_set_t *)user);
}

/* A list file under the sysroot into a node set.  0, or -1 if it cannot be read. */
static int numa_read_nodes(const char *path, uint64_t *set)
{
	char buf[NODE_LIST_MAX];

	*set = 0;
	if (hpshm__linux_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return numa_list_each(buf, numa_add_node, set);
}

/* The nodeN directories, where a kernel (or a fake tree) has no online file. */
static uint64_t numa_scan_nodes(void)
{
	char dir[PATH_MAX];
	struct dirent *de;
	uint64_t set = 0;
	unsigned long n;
	char *end;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s" NODE_DIR, hpshm__linux_sysroot());
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "node", 4) != 0 || de->d_name[4] < '0' || de->d_name[4] > '9')
			continue;
		n = strtoul(de->d_name + 4, &end, 10);
		if (*end == '\0')
			numa_add_node(&set, n);
	}
	closedir(d);
	return set;
}

/* The machine's nodes: 0 with m filled, or HPSHM_ENOTSUP when sysfs shows none. */
static int numa_machine_read(struct numa_machine *m)
{
	if (numa_read_nodes(NODE_DIR "/online", &m->online) < 0 || m->online == 0)
		m->online = numa_scan_nodes();
	if (m->online == 0)
		return HPSHM_ENOTSUP;
	/* has_memory is Linux 2.6.37; older kernels: every node counts as having memory. */
	if (numa_read_nodes(NODE_DIR "/has_memory", &m->memory) < 0)
		m->memory = m->online;
	m->memory &= m->online;
	return 0;
}

/* The CPUs of node, into set (empty if unknown). */
static void numa_node_cpus(int node, cpu_set_t *set)
{
	char path[96], buf[NODE_LIST_MAX];

	CPU_ZERO(set);
	snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist", node);
	if (hpshm__linux_read_file(path, buf, sizeof(buf)) >= 0)
		(void)numa_list_each(buf, numa_add_cpu, set);
}

char *hpshm__linux_numa_pool_file(int node, size_t page_size, char *buf, size_t len)
{
	snprintf(buf, len, NODE_DIR "/node%d/hugepages/hugepages-%zukB/nr_hugepages", node, page_size / 1024);
	return buf;
}

/* One counter of node's pool of page_size; 0 when unreadable (no such pool on the node). */
static unsigned long numa_pool_counter(int node, size_t page_size, const char *file)
{
	char path[160];
	uint64_t v;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/hugepages/hugepages-%zukB/%s", node, page_size / 1024, file);
	if (hpshm__linux_read_u64(path, &v) < 0)
		return 0;
	return v > ULONG_MAX ? ULONG_MAX : (unsigned long)v;
}

/* MemFree of node's meminfo ("Node 0 MemFree:   20138828 kB"), bytes; 0 if unknown. */
static uint64_t numa_mem_free(int node)
{
	char path[96], buf[4096];
	const char *v;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", node);
	if (hpshm__linux_read_file(path, buf, sizeof(buf)) < 0 || (v = strstr(buf, "MemFree:")) == NULL)
		return 0;
	return (uint64_t)strtoull(v + 8, NULL, 10) * 1024;
}

int hpshm__port_numa_nodes(size_t page_size, struct hpshm__node *out, int max)
{
	int huge = page_size > hpshm__port_base_page_size(), n = 0;
	struct numa_machine m;
	cpu_set_t mine, cpus;

	if (out == NULL || max <= 0 || numa_machine_read(&m) < 0)
		return 0;
	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		CPU_ZERO(&mine);
	for (int id = 0; id < HPSHM__MAX_NODES && n < max; id++) {
		struct hpshm__node *o = &out[n];

		if (!(m.online >> id & 1))
			continue;
		memset(o, 0, sizeof(*o));
		o->id = id;
		o->has_memory = (int)(m.memory >> id & 1);
		numa_node_cpus(id, &cpus);
		CPU_AND(&cpus, &cpus, &mine);
		o->cpus = (unsigned)CPU_COUNT(&cpus);
		o->mem_free = numa_mem_free(id);
		if (huge) {
			o->pool_total = numa_pool_counter(id, page_size, "nr_hugepages");
			o->pool_free = numa_pool_counter(id, page_size, "free_hugepages");
		}
		n++;
	}
	return n;
}

void hpshm__linux_numa_resolve(const struct hpshm__numa *p, struct hpshm__numa *out)
{
	struct numa_machine m;
	unsigned cpu, node;

	*out = *p;
	if ((p->mode != HPSHM__NUMA_LOCAL && (p->mode != HPSHM__NUMA_INTERLEAVE || p->nodes != 0)) ||
	    numa_machine_read(&m) < 0)
		return;
	/* A CPU of a node without memory (CPU-only, or CXL memory not onlined) stays local: the
	 * kernel then takes the nearest node with memory, where preferred:N would be refused. */
	if (p->mode == HPSHM__NUMA_LOCAL && hpshm__linux_sys.getcpu(&cpu, &node) == 0 && node < HPSHM__MAX_NODES &&
	    (m.memory >> node & 1)) {
		out->mode = HPSHM__NUMA_PREFERRED;
		out->nodes = (uint64_t)1 << node;
	}
	if (p->mode == HPSHM__NUMA_INTERLEAVE)
		out->nodes = m.memory;
}

/* "0-1,3" for a node set. */
static char *numa_set_text(uint64_t set, char *buf, size_t len)
{
	size_t used = 0;
	int n;

	buf[0] = '\0';
	for (int lo = 0; lo < HPSHM__MAX_NODES; lo++) {
		int hi = lo;

		if (!(set >> lo & 1))
			continue;
		while (hi + 1 < HPSHM__MAX_NODES && (set >> (hi + 1) & 1))
			hi++;
		n = hi > lo ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", lo, hi)
			    : snprintf(buf + used, len - used, "%s%d", used ? "," : "", lo);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
		lo = hi;
	}
	return buf;
}

/* The policy as the numa= key says it ("bind:1", "local"), for messages. */
static char *numa_policy_text(const struct hpshm__numa *p, char *buf, size_t len)
{
	static const char *const words[] = { "default", "local", "interleave", "bind", "preferred" };
	char set[128];

	if (p->nodes == 0)
		snprintf(buf, len, "numa=%s", words[p->mode]);
	else
		snprintf(buf, len, "numa=%s:%s", words[p->mode], numa_set_text(p->nodes, set, sizeof(set)));
	return buf;
}

/* "node 0 only", "nodes 0-3": what the machine has, for messages. */
static char *numa_have_text(uint64_t set, char *buf, size_t len)
{
	char list[128];

	snprintf(buf, len, "%s %s%s", (set & (set - 1)) ? "nodes" : "node", numa_set_text(set, list, sizeof(list)),
		 (set & (set - 1)) ? "" : " only");
	return buf;
}

/* Nodes named that are not there, or have no memory: HPSHM_EVALUE with err filled, else 0. */
static int numa_check_nodes(const struct hpshm__numa *p, const struct hpshm__numa *q, const struct numa_machine *m,
			    hpshm_error *err)
{
	char pol[160], have[160], bad[128], fix[HPSHM_TEXT_MAX];
	uint64_t missing = q->nodes & ~m->online, empty = q->nodes & m->online & ~m->memory;

	numa_policy_text(p, pol, sizeof(pol));
	snprintf(fix, sizeof(fix), "name only nodes with memory (%s), or leave numa at default",
		 numa_set_text(m->memory, bad, sizeof(bad)));
	if (missing != 0)
		return hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, fix, "%s: this machine has %s (no node %s)", pol,
				       numa_have_text(m->online, have, sizeof(have)),
				       numa_set_text(missing, bad, sizeof(bad)));
	if (empty != 0)
		return hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, fix,
				       "%s: node %s has no memory of its own (CPUs only); the nodes with memory are %s",
				       pol, numa_set_text(empty, bad, sizeof(bad)),
				       numa_set_text(m->memory, have, sizeof(have)));
	return 0;
}

/*
 * A bind whose nodes' free huge pages cannot hold pages pages: HPSHM_ENOMEM, the fix naming
 * each short node's pool file with the count that gives it an even share; else 0.
 */
static int numa_check_bind_pool(const struct hpshm__numa *p, size_t pages, size_t page_size, hpshm_error *err)
{
	char pol[160], psz[32], fix[HPSHM_TEXT_MAX], file[160];
	unsigned long free_sum = 0, share;
	int k = 0, used = 0, n;

	for (int id = 0; id < HPSHM__MAX_NODES; id++)
		if (p->nodes >> id & 1) {
			unsigned long f = numa_pool_counter(id, page_size, "free_hugepages");

			free_sum = free_sum > ULONG_MAX - f ? ULONG_MAX : free_sum + f;
			k++;
		}
	if (k == 0 || free_sum >= pages)
		return 0;
	share = (unsigned long)((pages + (size_t)k - 1) / (size_t)k);
	fix[0] = '\0';
	for (int id = 0; id < HPSHM__MAX_NODES; id++) {
		unsigned long f, nr;

		if (!(p->nodes >> id & 1) || (f = numa_pool_counter(id, page_size, "free_hugepages")) >= share)
			continue;
		nr = numa_pool_counter(id, page_size, "nr_hugepages");
		n = snprintf(fix + used, sizeof(fix) - (size_t)used, "%secho %lu > %s", used ? "; " : "",
			     nr + (share - f), hpshm__linux_numa_pool_file(id, page_size, file, sizeof(file)));
		if (n < 0 || (size_t)n >= sizeof(fix) - (size_t)used)
			break;
		used += n;
	}
	return hpshm_error_set(err, HPSHM_ENOMEM, 0, "numa", fix,
			       "%s: the bound node%s ha%s %lu free %s pages, the segment needs %zu; huge pages are "
			       "reserved for the whole machine, not per node, so its faults there would fail (SIGBUS)",
			       numa_policy_text(p, pol, sizeof(pol)), k > 1 ? "s" : "", k > 1 ? "ve" : "s", free_sum,
			       hpshm_size_format(page_size, psz, sizeof(psz)), pages);
}

int hpshm__port_numa_check(const struct hpshm__numa *p, size_t len, size_t page_size, hpshm_error *err)
{
	struct numa_machine m;
	struct hpshm__numa q;
	int rc;

	if (numa_machine_read(&m) < 0)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "leave numa at default on this machine",
				       "this kernel shows no NUMA nodes (no %s%s): there is nothing to place pages on",
				       hpshm__linux_sysroot(), NODE_DIR);
	hpshm__linux_numa_resolve(p, &q);
	rc = numa_check_nodes(p, &q, &m, err);
	if (rc < 0)
		return rc;
	if (q.mode == HPSHM__NUMA_BIND && page_size > hpshm__port_base_page_size())
		return numa_check_bind_pool(&q, len / page_size, page_size, err);
	return 0;
}

/* A refused mbind as a code, and the one thing to do about it. */
static int numa_apply_code(int e)
{
	return e == ENOSYS ? HPSHM_ENOTSUP : e == EPERM ? HPSHM_EACCES : e == EINVAL ? HPSHM_EVALUE : HPSHM_ESYS;
}

static const char *numa_apply_hint(int e)
{
	if (e == ENOSYS)
		return "leave numa at default: this kernel was built without NUMA (CONFIG_NUMA)";
	/* Docker's default seccomp profile lets mbind through only with CAP_SYS_NICE. */
	if (e == EPERM)
		return "in a container, grant CAP_SYS_NICE (its seccomp profile may allow mbind only then), "
		       "or leave numa at default";
	if (e == EINVAL)
		return "name nodes this process's cpuset allows (Mems_allowed_list in /proc/self/status)";
	return NULL;
}

int hpshm__port_numa_apply(void *addr, size_t len, const struct hpshm__numa *p, hpshm_error *err)
{
	unsigned long mask[HPSHM__MAX_NODES / (8 * sizeof(unsigned long))] = { 0 };
	static const int modes[] = { MPOL_DEFAULT, MPOL_LOCAL, MPOL_INTERLEAVE, MPOL_BIND, MPOL_PREFERRED };
	char pol[160], sz[32];
	struct hpshm__numa q;
	int e;

	hpshm__linux_numa_resolve(p, &q);
	for (int id = 0; id < HPSHM__MAX_NODES; id++)
		if (q.nodes >> id & 1)
			mask[id / (8 * sizeof(unsigned long))] |= 1ul << (id % (8 * sizeof(unsigned long)));
	/* The kernel reads maxnode - 1 bits of the mask (get_nodes() in mm/mempolicy.c starts
	 * with --maxnode), so maxnode is one more than the mask's bits. */
	if (hpshm__linux_sys.mbind(addr, (unsigned long)len, modes[q.mode], q.nodes ? mask : NULL,
				   q.nodes ? HPSHM__MAX_NODES + 1 : 0, MPOL_MF_MOVE) == 0)
		return 0;
	e = errno;
	return hpshm_error_set(err, numa_apply_code(e), e, "mbind", numa_apply_hint(e),
			       "%s: mbind of %s at %p failed: %s", numa_policy_text(p, pol, sizeof(pol)),
			       hpshm_size_format(len, sz, sizeof(sz)), addr, strerror(e));
}

int hpshm__port_numa_where(void *addr, size_t len, size_t page_size, uint64_t *bytes, int max)
{
	void *pages[WHERE_CHUNK];
	int status[WHERE_CHUNK], top = -1;
	size_t count = len / page_size;

	for (size_t at = 0; at < count; at += WHERE_CHUNK) {
		unsigned long n = (unsigned long)(count - at < WHERE_CHUNK ? count - at : WHERE_CHUNK);

		for (unsigned long i = 0; i < n; i++)
			pages[i] = (char *)addr + (at + i) * page_size;
		if (hpshm__linux_sys.move_pages(0, n, pages, NULL, status, 0) < 0)
			return errno == ENOSYS || errno == EPERM ? HPSHM_ENOTSUP : HPSHM_EIO;
		/* A negative status is a page not there (-ENOENT: never faulted in) or not
		 * movable to ask about (-EFAULT): not counted. */
		for (unsigned long i = 0; i < n; i++)
			if (status[i] >= 0 && status[i] < max) {
				bytes[status[i]] += page_size;
				top = status[i] > top ? status[i] : top;
			}
	}
	return top + 1;
}

void hpshm__linux_numa_place(const struct hpshm__numa *p, unsigned i, unsigned n)
{
	cpu_set_t mine, cpus;
	int k = 0, want, id;

	if ((p->mode != HPSHM__NUMA_BIND && p->mode != HPSHM__NUMA_PREFERRED) || p->nodes == 0 || n == 0)
		return;
	for (id = 0; id < HPSHM__MAX_NODES; id++)
		k += (int)(p->nodes >> id & 1);
	/* Contiguous ranges, so the k-th n-th of the threads (and of the segment) goes to node k. */
	want = (int)((uint64_t)i * (unsigned)k / n);
	for (id = 0; id < HPSHM__MAX_NODES; id++)
		if ((p->nodes >> id & 1) && want-- == 0)
			break;
	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		return;
	numa_node_cpus(id, &cpus);
	CPU_AND(&cpus, &cpus, &mine);
	/* No CPU of that node among ours (a cpuset, taskset): the pages still go where the
	 * policy says, only cleared from farther away. */
	if (CPU_COUNT(&cpus) > 0)
		(void)hpshm__linux_sys.sched_setaffinity(0, sizeof(cpus), &cpus);
}
