/* SPDX-License-Identifier: MIT */
/*
 * ports/introspect.h -- the OS facts the tool and the benchmark show beyond the public API.
 *
 * Internal: not installed.  tools/, bench/ and preload/ include this header and nothing else
 * of ports/ (preload/ also the macros of ports/linux/flags.h):
 * `hpshm probe` shows the pools, mounts, privileges and limits the providers decide from,
 * `hpshm plan` turns them into commands, `hpshm bench` verifies what backs its raw peers and
 * counts page tables.  Asking through one header keeps the tool honest (it reads what the
 * library reads) without letting it grow into the port (libevent's event_base_get_method()
 * is the model: the library says what it chose, nobody reaches into its backends).
 *
 * The structs are the OS's facts in OS-neutral shape; every member says what it is on Linux,
 * the only port that fills them so far.  Where an OS lacks a fact the function says so: a
 * count of 0, HPSHM_EUNAVAILABLE, an empty string.  Implemented by ports/linux/introspect.c
 * on Linux, ports/windows/introspect.c on Windows, and by ports/posix/introspect.c (little
 * to show) elsewhere.
 *
 * Self-contained on purpose: it includes only the public header, so including it cannot hand
 * a tool the port's internals.
 */
#ifndef HPSHM_PORTS_INTROSPECT_H
#define HPSHM_PORTS_INTROSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "hpshm.h"

#define HPSHM__OS_MAX_SIZES  8          /* huge page sizes an OS offers, at most */
#define HPSHM__OS_MAX_MOUNTS 16         /* huge page file system mounts listed, at most */
#define HPSHM__OS_UNLIMITED  UINT64_MAX /* a limit that is not set */

/* ---- huge page pools ---- */

/* The pages an OS keeps for huge page mappings of one size (a Linux hstate), counts in pages. */
struct hpshm__os_pool {
	size_t        page_size;  /* bytes */
	unsigned long total;      /* the pool's size (nr_hugepages) */
	unsigned long free;       /* not mapped by anyone, reserved ones included (free_hugepages) */
	unsigned long resv;       /* promised to mappings, not yet faulted (resv_hugepages) */
	unsigned long surplus;    /* allocated beyond total under overcommit (surplus_hugepages) */
	unsigned long overcommit; /* the most surplus allowed (nr_overcommit_hugepages) */
};

/* The size the OS uses when none is named, 0 if it offers none. */
size_t hpshm__os_default_page_size(void);
/* Why the OS offers no huge pages for shared memory, one sentence for `hpshm probe` when
 * hpshm__os_default_page_size() is 0; "" when there is nothing particular to say. */
const char *hpshm__os_huge_absent(void);
/* The pools of every huge page size, ascending.  Returns the count. */
int hpshm__os_pools(struct hpshm__os_pool *out, int max);
/* The pool of one size: 0, or HPSHM_EUNAVAILABLE if the OS has no such size. */
int hpshm__os_pool(size_t page_size, struct hpshm__os_pool *out);
/* Pages a new mapping can reserve now: free minus reserved, plus the overcommit room. */
unsigned long hpshm__os_pool_available(const struct hpshm__os_pool *p);
/* Where the pool figures come from, for people ("/sys/kernel/mm/hugepages"); "" if nowhere. */
const char *hpshm__os_pool_source(void);
/*
 * The setting an operator changes to size the pool of page_size: a sysctl name where one
 * exists ("vm.nr_hugepages", the default size only), else the file that holds the count
 * (the size's nr_hugepages in sysfs).  Returns buf.  The same knob the library's own hints
 * name, so `hpshm plan` and an error message never disagree.
 */
char *hpshm__os_pool_knob(size_t page_size, char *buf, size_t len);
/* Set the pool of page_size to pages (root only; the OS may give fewer): 0, or -1 with why. */
int hpshm__os_pool_resize(size_t page_size, unsigned long pages, char *why, size_t len);

/* ---- file systems of huge pages ---- */

/* A mount whose files are backed by huge pages (hugetlbfs). */
struct hpshm__os_mount {
	char   path[256];   /* mount point */
	size_t page_size;   /* its page size */
	int    writable;    /* 1 if this process may create files in it */
};

/* The mounts this process sees, the first max of them in out.  Returns how many there are
 * in all, which may exceed max. */
int hpshm__os_mounts(struct hpshm__os_mount *out, int max);

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

struct hpshm__os_sysv_limits {
	uint64_t shmmax;   /* largest segment, bytes (kernel.shmmax) */
	uint64_t shmall;   /* all segments together, base pages (kernel.shmall) */
	uint64_t shmmni;   /* segments (kernel.shmmni) */
};
/* 0, or HPSHM_EIO when none can be read. */
int hpshm__os_sysv_limits(struct hpshm__os_sysv_limits *out);

/* ---- limits of a control group on huge pages ---- */

/* The limits a control group (the hugetlb cgroup) puts on one page size, in bytes. */
struct hpshm__os_limit {
	int      version;        /* the cgroup version, 1 or 2; 0: no limit applies */
	char     path[256];      /* the group (its cgroup directory) */
	uint64_t limit;          /* charged when a page is faulted in (v1 limit_in_bytes, v2 max) */
	uint64_t usage;          /* charged now */
	uint64_t rsvd_limit;     /* charged when a mapping reserves pages; HPSHM__OS_UNLIMITED if none */
	uint64_t rsvd_usage;     /* reserved now */
};

/* The limits on page_size for this process, ancestors included: 0 (version 0 if none), or an error. */
int hpshm__os_limit(size_t page_size, struct hpshm__os_limit *out);
/* The page size as the group's files name it ("2MB", "1GB", "64KB"). */
char *hpshm__os_limit_size_name(size_t page_size, char *buf, size_t len);
/* Would a fault of these pages risk SIGBUS (a fault-time limit and no reservation limit)?  1 or 0. */
int hpshm__os_fault_risk(size_t size, size_t page_size);

/* ---- transparent huge pages ---- */

/* The modes of transparent huge pages, each the chosen word, "" if the OS has no such setting. */
struct hpshm__os_thp {
	char enabled[32];       /* for private memory: "always", "madvise", "never" */
	char defrag[32];        /* how hard a fault tries to find a huge page */
	char shmem_enabled[32]; /* for shared memory: "always", "within_size", "advise", "never" ... */
};

int hpshm__os_thp(struct hpshm__os_thp *out);
/* The size of a transparent huge page (the PMD size); 0 if unknown. */
size_t hpshm__os_thp_page_size(void);
/* KiB of the mapping that holds addr backed by transparent huge pages, -1 if unknown. */
long hpshm__os_thp_kib(const void *addr);
/* Set the mode of transparent huge pages for shared memory (root only): 0, or -1 with why
 * filled (no such setting here, or the write was refused). */
int hpshm__os_thp_shmem_set(const char *mode, char *why, size_t len);

/* ---- this process's memory ---- */

/* What backs a range, as the OS reports it. */
struct hpshm__os_backing {
	size_t page_size;       /* bytes */
	int    huge;            /* 1 if backed by huge pages */
	char   source[32];      /* where it was read: "smaps", "fstatfs", or "unverified" */
};

/* What backs [addr, addr+len), from the descriptor if fd >= 0, then the mapping: 0, or
 * HPSHM_EUNAVAILABLE (out->source "unverified"). */
int hpshm__os_backing(void *addr, size_t len, int fd, struct hpshm__os_backing *out);
/* Length of the mapping that holds addr, 0 if none or unknown. */
size_t hpshm__os_mapping_len(const void *addr);
/*
 * The children of this process (made by any of its threads) that have a mapping starting at
 * addr: up to max pids in out, and how many; 0 where the OS cannot say.  It allocates nothing,
 * so the interposer (preload/) may ask at a process's exit.
 */
int hpshm__os_children_mapping(const void *addr, long *out, int max);
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

/* ---- this process ---- */

/* The file this program runs from, for starting copies of it: 0, or HPSHM_EUNAVAILABLE. */
int hpshm__os_program_path(char *buf, size_t len);
/* Have the OS kill this process when its parent dies: 0, or HPSHM_ENOTSUP. */
int hpshm__os_die_with_parent(void);
/*
 * Where hpshm would put a re-attachable segment of len bytes aligned to align: free in this
 * process now and far from where the OS puts libraries, heaps and stacks (port.h's
 * hpshm__pick_address()), so a program that starts copies of itself by exec can place
 * memory they map at the same address where their own loader is unlikely to be.  Nothing
 * is reserved.  0, or an error code.
 */
int hpshm__os_far_address(size_t len, size_t align, void **out);

#endif /* HPSHM_PORTS_INTROSPECT_H */
