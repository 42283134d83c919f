/* SPDX-License-Identifier: MIT */
/*
 * ports/facts.h -- the OS facts the tool and the benchmark read beyond the public API.
 *
 * Internal: not installed.  `hpshm probe` shows the pools, mounts, privileges and limits the
 * providers decide from, `hpshm plan` turns them into commands, `hpshm bench` verifies what
 * backs its raw peers and counts page tables.  Asking through here keeps the tool honest (it
 * reads what the library reads) without letting it grow into the port (libevent's
 * event_base_get_method() is the model).  What changes the machine is in ports/admin.h, what
 * concerns this program as a process in ports/process.h (doc/architecture.md).
 *
 * The structs are port.h's, defined there once; tools/ and bench/ take them from this header
 * and call nothing of port.h itself (scripts/check-layers.sh keeps port.h out of their
 * includes).  Where an OS lacks a fact the function says so: a count of 0,
 * HPSHM_EUNAVAILABLE, an empty string.  Implemented by ports/<os>/facts.c (ports/posix/facts.c
 * where no OS folder applies: little to show).
 */
#ifndef HPSHM_PORTS_FACTS_H
#define HPSHM_PORTS_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "hpshm.h"
#include "port.h"

/* ---- huge page pools ---- */

/* The size the OS uses when none is named, 0 if it offers none. */
size_t hpshm__os_default_page_size(void);
/* Why the OS offers no huge pages for shared memory, one sentence for `hpshm probe` when
 * hpshm__os_default_page_size() is 0; "" when there is nothing particular to say. */
const char *hpshm__os_huge_absent(void);
/* The pools of every huge page size, ascending.  Returns the count. */
int hpshm__os_pools(struct hpshm__pool *out, int max);
/* The pool of one size: 0, or HPSHM_EUNAVAILABLE if the OS has no such size. */
int hpshm__os_pool(size_t page_size, struct hpshm__pool *out);
/* Pages a new mapping can reserve now: free minus reserved, plus the overcommit room. */
unsigned long hpshm__os_pool_available(const struct hpshm__pool *p);
/* Where the pool figures come from, for people ("/sys/kernel/mm/hugepages"); "" if nowhere. */
const char *hpshm__os_pool_source(void);
/*
 * The setting an operator changes to size the pool of page_size: a sysctl name where one
 * exists ("vm.nr_hugepages", the default size only), else the file that holds the count
 * (the size's nr_hugepages in sysfs).  Returns buf.  The same knob the library's own hints
 * name, so `hpshm plan` and an error message never disagree.
 */
char *hpshm__os_pool_knob(size_t page_size, char *buf, size_t len);
/*
 * The command that shows whether this processor can map pages of page_size at all, with
 * what its answer means ("grep -m1 -ow pdpe1gb /proc/cpuinfo ..." for 1 GiB pages on x86),
 * for `hpshm plan` of a size the OS does not offer now; "" where there is none.  Returns buf.
 */
char *hpshm__os_page_size_cpu_check(size_t page_size, char *buf, size_t len);

/* ---- NUMA nodes ---- */

/* The NUMA nodes with their share of the pool of page_size, as port.h's
 * hpshm__port_numa_nodes() gives them to the library: the count, 0 where the OS shows none. */
int hpshm__os_numa_nodes(size_t page_size, struct hpshm__node *out, int max);
/* Where the nodes are read from, for people ("/sys/devices/system/node"); "" if nowhere. */
const char *hpshm__os_numa_source(void);
/* The file an operator writes to size node's pool of page_size (Linux:
 * /sys/devices/system/node/nodeN/hugepages/hugepages-<kB>kB/nr_hugepages); "" where there is
 * none.  Returns buf. */
char *hpshm__os_numa_pool_file(int node, size_t page_size, char *buf, size_t len);

/* ---- file systems of huge pages ---- */

/* The mounts this process sees, the first max of them in out.  Returns how many there are
 * in all, which may exceed max. */
int hpshm__os_mounts(struct hpshm__mount *out, int max);

/* ---- privileges for SysV huge pages ---- */

/* Does the process hold the privilege that admits huge pages (Linux: CAP_IPC_LOCK, for SysV;
 * Windows: SeLockMemoryPrivilege, for large pages)?  1 or 0. */
int  hpshm__os_lock_privilege(void);
/* That privilege as the OS names it ("CAP_IPC_LOCK"), "" where there is none. */
const char *hpshm__os_lock_privilege_name(void);
/* The group admitted to SysV huge pages without it (vm.hugetlb_shm_group), -1 if unreadable. */
long hpshm__os_huge_group(void);
/* Is this process in group gid (effective or supplementary)?  1 or 0. */
int  hpshm__os_in_group(long gid);

/* ---- SysV shared memory limits ---- */

/* 0, or HPSHM_EIO when none can be read. */
int hpshm__os_sysv_limits(struct hpshm__sysv_limits *out);

/* ---- limits of a control group on huge pages ---- */

/* The limits on page_size for this process, ancestors included: 0 (version 0 if none), or an error. */
int hpshm__os_limit(size_t page_size, struct hpshm__limit *out);
/* The page size as the group's files name it ("2MB", "1GB", "64KB"). */
char *hpshm__os_limit_size_name(size_t page_size, char *buf, size_t len);
/* Would a fault of these pages risk SIGBUS (a fault-time limit and no reservation limit)?  1 or 0. */
int hpshm__os_fault_risk(size_t size, size_t page_size);

/* ---- transparent huge pages ---- */

int hpshm__os_thp(struct hpshm__thp *out);
/* The size of a transparent huge page (the PMD size); 0 if unknown. */
size_t hpshm__os_thp_page_size(void);
/* KiB of the mapping that holds addr backed by transparent huge pages, -1 if unknown. */
long hpshm__os_thp_kib(const void *addr);

/* ---- this process's memory ---- */

/* What backs [addr, addr+len), from file (an open file of the range's pages, a descriptor on
 * POSIX) if it is >= 0, then the mapping, as port.h's hpshm__port_verify_backing() reads it: 0, or
 * HPSHM_EUNAVAILABLE (out->source "unverified"); HPSHM_EINVAL for a NULL out. */
int hpshm__os_backing(void *addr, size_t len, intptr_t file, struct hpshm__backing *out);
/* Length of the mapping that holds addr, 0 if none or unknown. */
size_t hpshm__os_mapping_len(const void *addr);
/* Memory this process's page tables take, KiB (VmPTE); -1 if unknown. */
long hpshm__os_page_table_kib(void);
/* Why hpshm__os_page_table_kib() has no figure on this OS, one sentence for the bench's rows
 * ("not offered on Windows: ..."); "" where it has one. */
const char *hpshm__os_page_table_absent(void);
/* Page faults this process took so far: minor faults on POSIX (getrusage()'s ru_minflt),
 * every fault on Windows (PROCESS_MEMORY_COUNTERS.PageFaultCount, soft and hard together);
 * 0 if unknown. */
uint64_t hpshm__os_page_faults(void);
/* Memory the OS can give without swapping (MemAvailable), bytes; 0 if unknown. */
uint64_t hpshm__os_mem_available(void);

/*
 * The children of this process (made by any of its threads) that have a mapping starting at
 * addr: up to max pids in out, and how many; 0 where the OS cannot say.  It allocates nothing,
 * so the interposer (preload/) may ask at a process's exit.
 */
int hpshm__os_children_mapping(const void *addr, long *out, int max);

#endif /* HPSHM_PORTS_FACTS_H */
