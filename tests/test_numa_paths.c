/* SPDX-License-Identifier: MIT */
/*
 * tests/test_numa_paths.c -- the edges of issue 23's Linux port code that test_numa and
 * test_populate do not reach: sysfs node lists that are malformed or missing
 * (ports/linux/numa.c), every refusal of mbind and move_pages, a thread placement that has
 * nothing to do; the CPU quota of a cgroup read from malformed files, from ancestors, and from
 * paths too long to read (ports/linux/cgroup.c); the threaded populate's failures, its retry
 * after EINTR, its stop once a part failed, and its fall back to one thread where the kernel
 * does not know MADV_POPULATE_WRITE (ports/linux/populate.c).
 *
 * Everything runs on the fake sysroot with the system calls replaced through hpshm__linux_sys;
 * the populate fakes are called from the populate's threads and count with atomics.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/port.h"

#ifndef EHWPOISON
#define EHWPOISON 133
#endif

#define MIB HPT_MIB
#define PS2M ((size_t)2 << 20)

/* What the fakes answer and saw. */
static struct {
	int           mbind_errno;   /* mbind fails with this */
	int           mbind_nomask;  /* the last mbind had no node mask */
	int           move_errno;    /* move_pages fails with this (0: answers status_node) */
	int           status_node;   /* the node move_pages says each page is on */
	int           getcpu_errno;  /* getcpu fails with this */
	unsigned      getcpu_node;   /* else the node it says */
	atomic_uint   affinities;    /* sched_setaffinity calls */
} fk;

static long fake_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask, unsigned long maxnode,
		       unsigned flags)
{
	(void)addr;
	(void)len;
	(void)mode;
	(void)maxnode;
	(void)flags;
	fk.mbind_nomask = nodemask == NULL;
	if (fk.mbind_errno) {
		errno = fk.mbind_errno;
		return -1;
	}
	return 0;
}

static long fake_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
	(void)pid;
	(void)pages;
	(void)nodes;
	(void)flags;
	if (fk.move_errno) {
		errno = fk.move_errno;
		return -1;
	}
	for (unsigned long i = 0; i < count; i++)
		status[i] = fk.status_node;
	return 0;
}

static int fake_getcpu(unsigned *cpu, unsigned *node)
{
	if (fk.getcpu_errno) {
		errno = fk.getcpu_errno;
		return -1;
	}
	*cpu = 0;
	*node = fk.getcpu_node;
	return 0;
}

static int fake_setaffinity(int pid, size_t size, const void *mask)
{
	(void)pid;
	(void)size;
	(void)mask;
	atomic_fetch_add(&fk.affinities, 1);
	return 0;
}

static void node_file(int id, const char *file, const char *content)
{
	char rel[200];

	snprintf(rel, sizeof rel, "sys/devices/system/node/node%d/%s", id, file);
	hpt_fakeroot_write(rel, content);
}

/* A node with CPU list cpus, 10 pages of 2 MiB of which free_pages are free. */
static void fake_node(int id, const char *cpus, const char *free_pages)
{
	node_file(id, "cpulist", cpus);
	node_file(id, "meminfo", "Node 0 MemFree:        1000 kB\n");
	node_file(id, "hugepages/hugepages-2048kB/nr_hugepages", "10\n");
	node_file(id, "hugepages/hugepages-2048kB/free_hugepages", free_pages);
}

static void numa_init(void)
{
	hpt_fixture_init();
	hpt_fakeroot_create(64, 64);
	hpshm__linux_sys_reset();
	memset(&fk, 0, sizeof fk);
	hpshm__linux_sys.mbind = fake_mbind;
	hpshm__linux_sys.move_pages = fake_move_pages;
	hpshm__linux_sys.getcpu = fake_getcpu;
	hpshm__linux_sys.sched_setaffinity = fake_setaffinity;
}

static void numa_fini(void)
{
	hpshm__linux_sys_reset();
	hpt_fakeroot_destroy();
	hpt_fixture_fini();
}

TestSuite(numa_paths, .init = numa_init, .fini = numa_fini);

static struct hpshm__numa policy(int mode, uint64_t nodes)
{
	return (struct hpshm__numa){ mode, nodes };
}

/* The ids hpshm__port_numa_nodes() lists, as a bit set. */
static uint64_t listed(size_t page_size)
{
	struct hpshm__node n[8];
	uint64_t set = 0;
	int count = hpshm__port_numa_nodes(page_size, n, 8);

	for (int i = 0; i < count; i++)
		set |= (uint64_t)1 << n[i].id;
	return set;
}

Test(numa_paths, an_online_list_with_blanks_and_ranges_is_read)
{
	hpt_fakeroot_write("sys/devices/system/node/online", " 0-1,3\n");
	cr_assert_eq(listed(PS2M), 0xbu);
}

Test(numa_paths, a_malformed_online_list_falls_back_to_the_node_directories)
{
	static const char *const bad[] = { "x\n", "0-\n", "2-1\n", "0;1\n", "0-1x\n" };

	fake_node(0, "0\n", "5\n");
	fake_node(2, "0\n", "5\n");
	/* Not nodes: no number, a number with a tail, a node past the 64 a policy can name. */
	hpt_fakeroot_write("sys/devices/system/node/nodex/cpulist", "0\n");
	hpt_fakeroot_write("sys/devices/system/node/node1a/cpulist", "0\n");
	hpt_fakeroot_write("sys/devices/system/node/node70/cpulist", "0\n");
	hpt_fakeroot_write("sys/devices/system/node/power/cpulist", "0\n");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		hpt_fakeroot_write("sys/devices/system/node/online", bad[i]);
		cr_assert_eq(listed(PS2M), 0x5u, "online \"%s\"", bad[i]);
	}
}

Test(numa_paths, without_has_memory_every_node_has_memory)
{
	struct hpshm__node n[2];

	hpt_fakeroot_write("sys/devices/system/node/online", "0-1\n");
	fake_node(0, "0\n", "5\n");
	/* Node 1: no cpulist, no meminfo, no pool. */
	node_file(1, "hugepages/x", "");
	cr_assert_eq(hpshm__port_numa_nodes(PS2M, n, 2), 2);
	cr_assert(n[0].has_memory && n[1].has_memory);
	cr_assert_eq(n[1].cpus, 0u);
	cr_assert_eq(n[1].mem_free, 0u);
	cr_assert_eq(n[1].pool_total, 0u);
}

Test(numa_paths, nodes_fill_at_most_the_room_given)
{
	struct hpshm__node n[2];

	hpt_fakeroot_write("sys/devices/system/node/online", "0-3\n");
	cr_assert_eq(hpshm__port_numa_nodes(PS2M, n, 1), 1);
	cr_assert_eq(n[0].id, 0);
	cr_assert_eq(hpshm__port_numa_nodes(PS2M, n, 0), 0);
	cr_assert_eq(hpshm__port_numa_nodes(PS2M, NULL, 2), 0);
	node_file(0, "meminfo", "Node 0 MemTotal: 5 kB\n");
	cr_assert_eq(hpshm__port_numa_nodes(PS2M, n, 2), 2);
	cr_assert_eq(n[0].mem_free, 0u, "no MemFree line");
}

Test(numa_paths, local_stays_local_when_getcpu_fails_or_names_no_node_we_know)
{
	struct hpshm__numa q;
	struct hpshm__numa p = policy(HPSHM__NUMA_LOCAL, 0);

	hpt_fakeroot_write("sys/devices/system/node/online", "0-1\n");
	fk.getcpu_errno = ENOSYS;
	hpshm__linux_numa_resolve(&p, &q);
	cr_assert_eq(q.mode, HPSHM__NUMA_LOCAL);
	fk.getcpu_errno = 0;
	fk.getcpu_node = 99;
	hpshm__linux_numa_resolve(&p, &q);
	cr_assert_eq(q.mode, HPSHM__NUMA_LOCAL);
	cr_assert_eq(q.nodes, 0u);
	/* A bind is taken as it stands. */
	p = policy(HPSHM__NUMA_BIND, 2);
	hpshm__linux_numa_resolve(&p, &q);
	cr_assert(q.mode == HPSHM__NUMA_BIND && q.nodes == 2);
}

Test(numa_paths, a_missing_node_is_named_among_ranges_of_the_nodes_there)
{
	struct hpshm__numa p = policy(HPSHM__NUMA_BIND, (uint64_t)1 << 9 | (uint64_t)1 << 10 | 1u << 12);
	hpshm_error err;

	hpt_fakeroot_write("sys/devices/system/node/online", "0-2,5\n");
	hpt_fakeroot_write("sys/devices/system/node/has_memory", "0-2,5\n");
	cr_assert_eq(hpshm__port_numa_check(&p, 4 * MIB, 4096, &err), HPSHM_EVALUE);
	cr_assert(strstr(err.message, "numa=bind:9-10,12") != NULL, "%s", err.message);
	cr_assert(strstr(err.message, "nodes 0-2,5 (no node 9-10,12)") != NULL, "%s", err.message);
}

Test(numa_paths, a_bind_over_many_short_nodes_names_as_many_pool_commands_as_fit)
{
	struct hpshm__numa p = policy(HPSHM__NUMA_BIND, 0xffffu);
	hpshm_error err;

	hpt_fakeroot_write("sys/devices/system/node/online", "0-15\n");
	for (int id = 0; id < 16; id++)
		fake_node(id, "0\n", "0\n");
	cr_assert_eq(hpshm__port_numa_check(&p, 64 * PS2M, PS2M, &err), HPSHM_ENOMEM);
	cr_assert(strstr(err.hint, "echo 14 > ") == err.hint, "%s", err.hint);
	cr_assert(strstr(err.hint, "node15") == NULL, "the commands stop where the hint is full: %s", err.hint);
	cr_assert(strstr(err.message, "bound nodes have 0 free") != NULL, "%s", err.message);
}

Test(numa_paths, free_pages_past_a_long_are_counted_as_plenty)
{
	struct hpshm__numa p = policy(HPSHM__NUMA_BIND, 3);
	hpshm_error err;

	hpt_fakeroot_write("sys/devices/system/node/online", "0-1\n");
	fake_node(0, "0\n", "18446744073709551615\n");
	fake_node(1, "0\n", "18446744073709551615\n");
	cr_assert_eq(hpshm__port_numa_check(&p, 64 * PS2M, PS2M, &err), 0);
}

/* Each refusal of mbind as its code, with a hint where there is one thing to do. */
Test(numa_paths, each_refused_mbind_has_its_code)
{
	static const struct {
		int e, code, hinted;
	} cases[] = {
		{ ENOSYS, HPSHM_ENOTSUP, 1 }, { EPERM, HPSHM_EACCES, 1 }, { EINVAL, HPSHM_EVALUE, 1 }, { EIO, HPSHM_ESYS, 0 },
	};
	struct hpshm__numa p = policy(HPSHM__NUMA_BIND, 1);
	char buf[64];
	hpshm_error err;

	hpt_fakeroot_write("sys/devices/system/node/online", "0\n");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fk.mbind_errno = cases[i].e;
		cr_assert_eq(hpshm__port_numa_apply(buf, sizeof buf, &p, &err), cases[i].code);
		cr_assert_eq(err.sys_errno, cases[i].e);
		cr_assert_eq(err.hint[0] != '\0', cases[i].hinted, "errno %d: hint \"%s\"", cases[i].e, err.hint);
	}
	/* Local where the creating thread's node is not known: mbind with no nodes. */
	fk.mbind_errno = 0;
	fk.getcpu_errno = ENOSYS;
	p = policy(HPSHM__NUMA_LOCAL, 0);
	cr_assert_eq(hpshm__port_numa_apply(buf, sizeof buf, &p, &err), 0);
	cr_assert(fk.mbind_nomask);
}

Test(numa_paths, where_turns_a_refused_move_pages_into_a_code_and_skips_nodes_past_max)
{
	uint64_t bytes[2] = { 0, 0 };
	char buf[4 * 4096];

	fk.move_errno = ENOSYS;
	cr_assert_eq(hpshm__port_numa_where(buf, sizeof buf, 4096, bytes, 2), HPSHM_ENOTSUP);
	fk.move_errno = EPERM;
	cr_assert_eq(hpshm__port_numa_where(buf, sizeof buf, 4096, bytes, 2), HPSHM_ENOTSUP);
	fk.move_errno = EFAULT;
	cr_assert_eq(hpshm__port_numa_where(buf, sizeof buf, 4096, bytes, 2), HPSHM_EIO);
	fk.move_errno = 0;
	fk.status_node = 5;
	cr_assert_eq(hpshm__port_numa_where(buf, sizeof buf, 4096, bytes, 2), 0, "node 5 is past the 2 asked for");
	cr_assert(bytes[0] == 0 && bytes[1] == 0);
}

Test(numa_paths, placement_leaves_the_thread_alone_where_there_is_nothing_to_place)
{
	struct hpshm__numa p;

	hpt_fakeroot_write("sys/devices/system/node/online", "0-1\n");
	fake_node(0, "0\n", "5\n");
	node_file(1, "cpulist", "\n");
	p = policy(HPSHM__NUMA_INTERLEAVE, 3);
	hpshm__linux_numa_place(&p, 0, 2);
	p = policy(HPSHM__NUMA_BIND, 0);
	hpshm__linux_numa_place(&p, 0, 2);
	p = policy(HPSHM__NUMA_BIND, 3);
	hpshm__linux_numa_place(&p, 0, 0);
	cr_assert_eq(atomic_load(&fk.affinities), 0u);
	/* Node 1 has no CPU of ours: the thread stays where it is. */
	p = policy(HPSHM__NUMA_PREFERRED, 2);
	hpshm__linux_numa_place(&p, 0, 1);
	cr_assert_eq(atomic_load(&fk.affinities), 0u);
	/* Node 0 has CPU 0, if it is ours. */
	p = policy(HPSHM__NUMA_BIND, 3);
	hpshm__linux_numa_place(&p, 0, 2);
	{
		cpu_set_t mine;

		cr_assert_eq(sched_getaffinity(0, sizeof mine, &mine), 0);
		cr_assert_eq(atomic_load(&fk.affinities), CPU_ISSET(0, &mine) ? 1u : 0u);
	}
}

Test(numa_paths, numbers_out_of_range_are_malformed_or_capped)
{
	struct hpshm__node n[2];

	fake_node(1, "0\n", "5\n");
	/* Past an unsigned long: malformed, so the directories are read. */
	hpt_fakeroot_write("sys/devices/system/node/online", "99999999999999999999999\n");
	cr_assert_eq(listed(PS2M), 0x2u);
	hpt_fakeroot_write("sys/devices/system/node/online", "0-99999999999999999999999\n");
	cr_assert_eq(listed(PS2M), 0x2u);
	/* A range past the nodes a policy can name, with no newline: the first 64. */
	hpt_fakeroot_write("sys/devices/system/node/online", "0-2000000");
	cr_assert_eq(hpshm__port_numa_nodes(PS2M, n, 2), 2);
	cr_assert_eq(n[1].id, 1);
	/* A CPU past what a cpu_set_t holds is not counted. */
	node_file(1, "cpulist", "0,100000\n");
	cr_assert_eq(hpshm__port_numa_nodes(PS2M, n, 2), 2);
	cr_assert(n[1].cpus <= 1u);
}

Test(numa_paths, the_last_node_a_policy_can_name_is_named)
{
	struct hpshm__numa p = policy(HPSHM__NUMA_BIND, (uint64_t)3 << 62);
	hpshm_error err;

	hpt_fakeroot_write("sys/devices/system/node/online", "0\n");
	cr_assert_eq(hpshm__port_numa_check(&p, 4 * MIB, 4096, &err), HPSHM_EVALUE);
	cr_assert(strstr(err.message, "numa=bind:62-63: this machine has node 0 only (no node 62-63)") != NULL, "%s",
		  err.message);
}
