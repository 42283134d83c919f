/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/linux.h -- the Linux-only facts and calls behind the neutral port (port.h).
 *
 * Internal: not installed.  Who may include it: the files of ports/linux/ (the facts the tool
 * reads, ports/linux/facts.c, among them), the Linux backends and the descriptor-backed
 * segment helper they share.  Everything else asks through port.h or ports/facts.h, so a port
 * for another OS never has to invent hstate pools, hugetlbfs or cgroups.
 * scripts/check-layers.sh enforces the list.
 *
 * What is here:
 *   - the Linux system call table (hpshm__linux_sys): the calls POSIX does not have, made
 *     through an overridable table like the POSIX ones (posix/sys.h), so tests inject their
 *     failures the same way;
 *   - through linux/flags.h, the flag values older libc headers lack (MAP_HUGETLB, MFD_HUGETLB,
 *     MADV_POPULATE_WRITE ...) and the huge page size bits (hpshm__linux_huge_bits());
 *   - the readers of /proc and /sys, all under hpshm__linux_sysroot() so tests can point the library
 *     at a fake tree with hpshm__linux_set_sysroot();
 *   - hstate pools, hugetlbfs mounts, the hugetlb cgroup, the SysV privileges, limits and
 *     segment list (sysvipc.c, with when a creator started),
 *     transparent huge pages, and the operator advice built from them, in the neutral structs
 *     of port.h: a pool is an hstate of /sys/kernel/mm/hugepages (nr_hugepages,
 *     free_hugepages, resv_hugepages, surplus_hugepages, nr_overcommit_hugepages), a mount a
 *     hugetlbfs mount, a limit the hugetlb cgroup (v1 limit_in_bytes, v2 max, and their rsvd
 *     files), the SysV limits kernel.shmmax, shmall and shmmni, the THP modes the bracketed
 *     words of /sys/kernel/mm/transparent_hugepage, and a backing KernelPageSize and VmFlags
 *     "ht" of smaps, or f_bsize of a hugetlbfs descriptor.
 */
#ifndef HPSHM_PORTS_LINUX_LINUX_H
#define HPSHM_PORTS_LINUX_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/types.h>
#include <time.h>
#ifdef __linux__
#include <sys/statfs.h>
#else
/*
 * The named-object helpers (backends/named*.c) and the tests include this header on
 * the other POSIX systems too, for the names only; a system without <sys/statfs.h> (macOS,
 * and FreeBSD, which has it in <sys/mount.h>) needs just the struct's name for the table.
 */
struct statfs;
#endif

#include "linux/flags.h"
#include "port.h"

/* ---- the Linux system call table ---- */

/*
 * Backends and ports call hpshm__linux_sys.memfd_create(...) rather than memfd_create(...),
 * so a test can replace one entry and make it fail (ENOSYS, ENOSPC, EFAULT ...) without
 * touching the machine.  The table starts out pointing at the real calls;
 * hpshm__linux_sys_reset() puts them back.  Only tests write to it, and only while no segment
 * is being created.  The POSIX calls are in posix/sys.h (hpshm__posix_sys).
 */
/*
 * The argument of PROCMAP_QUERY (Linux 6.11, uapi linux/fs.h), an ioctl on a /proc/<pid>/maps
 * descriptor that describes the VMA at or after an address; written out here, as the headers
 * of older systems lack it.  size is sizeof the struct, which the kernel reads first.
 */
struct hpshm__procmap_query {
	uint64_t size;
	uint64_t query_flags;    /* in: HPSHM__PROCMAP_COVERING_OR_NEXT, ... */
	uint64_t query_addr;     /* in */
	uint64_t vma_start;      /* out: [vma_start, vma_end) */
	uint64_t vma_end;
	uint64_t vma_flags;      /* out: readable, writable, executable, shared */
	uint64_t vma_page_size;  /* out: the kernel's page size of the VMA, smaps' KernelPageSize */
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;  /* in: 0, no name asked for */
	uint32_t build_id_size;  /* in: 0 */
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define HPSHM__PROCMAP_COVERING_OR_NEXT 0x10u /* the VMA at query_addr, else the next one */

struct hpshm__linux_syscalls {
	int     (*memfd_create)(const char *name, unsigned flags);
	int     (*fallocate)(int fd, int mode, off_t off, off_t len);
	int     (*madvise)(void *addr, size_t len, int advice);
	int     (*fstatfs)(int fd, struct statfs *buf);
	int     (*statfs)(const char *path, struct statfs *buf);
	ssize_t (*getrandom)(void *buf, size_t len, unsigned flags);
	char   *(*secure_getenv)(const char *name); /* libc, not a system call: a test plays setuid with it */
	/* NUMA placement (numa.c): raw system calls, so hpshm needs no libnuma */
	long    (*mbind)(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
			 unsigned long maxnode, unsigned flags);
	long    (*move_pages)(int pid, unsigned long count, void **pages, const int *nodes, int *status,
			      int flags);
	int     (*getcpu)(unsigned *cpu, unsigned *node);  /* the CPU and node this thread runs on */
	int     (*sched_setaffinity)(int pid, size_t size, const void *mask); /* mask: a cpu_set_t */
	/* ioctl(fd, PROCMAP_QUERY, q) on a /proc/<pid>/maps descriptor (verify.c) */
	int     (*procmap_query)(int fd, struct hpshm__procmap_query *q);
};

extern struct hpshm__linux_syscalls hpshm__linux_sys;

/* The operator's fix when the kernel could not supply len bytes of page_size pages: the
 * hugetlb cgroup limit that is short, else the pool (populate.c).  Returns buf, or a static
 * text for base pages. */
const char *hpshm__linux_shortage_hint(size_t len, size_t page_size, char *buf, size_t buflen);

/* Put every entry back to the real call. */
void hpshm__linux_sys_reset(void);

/* ---- NUMA (ports/linux/numa.c) ---- */

/*
 * p as this thread, the creating one, will apply it: local becomes preferred:N, N the node of
 * the CPU this thread runs on now (left local when the kernel cannot say, or when N has no
 * memory), and interleave over no nodes becomes interleave over every node with memory.
 * check, apply and the populate's placement all resolve it so, in the creating thread, and
 * so agree on one node.
 */
void hpshm__linux_numa_resolve(const struct hpshm__numa *p, struct hpshm__numa *out);
/*
 * In thread i of the n that populate a segment under policy p (resolved as above): run this
 * thread on the CPUs of the node its range is meant for (bind and preferred: the policy's
 * nodes, node k of them for the k-th n-th of the threads; interleave: anywhere), among the
 * CPUs it may run on now.  Nothing when it cannot.  The caller restores the calling thread's
 * CPUs afterwards (populate.c): part 0, and any part no thread could be started for, run in it.
 */
void hpshm__linux_numa_place(const struct hpshm__numa *p, unsigned i, unsigned n);
/* The sysfs file that sizes node's pool of page_size
 * (/sys/devices/system/node/nodeN/hugepages/hugepages-<kB>kB/nr_hugepages).  Returns buf. */
char *hpshm__linux_numa_pool_file(int node, size_t page_size, char *buf, size_t len);

/* ---- /proc and /sys, under the sysroot ---- */

/* Root under which /proc and /sys are read: "" normally. */
const char *hpshm__linux_sysroot(void);
void hpshm__linux_set_sysroot(const char *root);   /* tests only; NULL restores "" */

/* fopen() a file under the sysroot for reading, close-on-exec.  NULL with errno set. */
FILE *hpshm__linux_sysfile_open(const char *path);
/*
 * The next line of f into buf, without its newline: 1, or 0 at end of file.  A line that does
 * not fit keeps its start in buf, the rest is read past, and *cut (if not NULL) is set, so a
 * caller can skip an overlong line rather than parse half of it.
 */
int hpshm__linux_getline(FILE *f, char *buf, size_t len, int *cut);
/* Read a whole small file under the sysroot into buf (NUL-terminated). Returns length or <0. */
long hpshm__linux_read_file(const char *path, char *buf, size_t len);
/* Read one unsigned number from a file under the sysroot. 0, or HPSHM_EIO. */
int hpshm__linux_read_u64(const char *path, uint64_t *out);
/* The number after "key:" in a "key: value" file such as /proc/meminfo, in base 10 or 16
 * (CapEff).  0, or HPSHM_EIO. */
int hpshm__linux_read_field(const char *path, const char *key, int base, unsigned long long *out);

/* A /proc/<pid>/maps or smaps VMA header "start-end perms ...": 1 with its range, or 0 for
 * any other line (an smaps field line).  verify.c and facts.c read VMAs with it. */
int hpshm__linux_maps_range(const char *line, uintptr_t *start, uintptr_t *end);

/* ---- hstate pools ---- */

/* Pages a new mapping can reserve right now: free minus reserved, plus overcommit room. */
unsigned long hpshm__linux_pool_available(const struct hpshm__pool *p);
/* Pools of every huge page size, ascending.  Returns the count. */
int hpshm__linux_pools(struct hpshm__pool *out, int max);
/* The pool for one size: 0, or HPSHM_EUNAVAILABLE if the kernel has no such size. */
int hpshm__linux_pool_get(size_t page_size, struct hpshm__pool *out);
/* The setting that sizes the pool of page_size, as an operator names it: the sysctl
 * "vm.nr_hugepages" for the default size, else the size's nr_hugepages file in sysfs. */
char *hpshm__linux_pool_knob(size_t page_size, char *buf, size_t len);
/* The sysfs file that holds the pool's size, for every page size (also the default one). */
char *hpshm__linux_pool_file(size_t page_size, char *buf, size_t len);

/* ---- hugetlbfs ---- */

/*
 * Every visible hugetlbfs mount from /proc/self/mountinfo, in an array the caller frees, with
 * the count in *count; NULL (count 0) when there is none.
 */
struct hpshm__mount *hpshm__linux_hugetlbfs_mount_list(int *count);
/* The first max of them copied to out.  Returns how many there are in all (may exceed max). */
int hpshm__linux_hugetlbfs_mounts(struct hpshm__mount *out, int max);
/* Is dir on hugetlbfs, and with what page size?  0, or HPSHM_EUNAVAILABLE with errno set. */
int hpshm__linux_hugetlbfs_dir(const char *dir, size_t *page_size);

/* ---- the hugetlb cgroup ---- */

/* The hugetlb cgroup for page_size: 0 (out->version 0 if none applies) or an error. */
int hpshm__linux_cgroup_get(size_t page_size, struct hpshm__limit *out);
/* The kernel's name for a huge page size in hugetlb cgroup files (mem_fmt() in
 * mm/hugetlb_cgroup.c: the largest unit not above the size): "2MB", "1GB", "64KB". */
char *hpshm__linux_hugetlb_cgroup_size(size_t page_size, char *buf, size_t len);
/* The CPUs the CPU quota of this process's cgroup allows (v2 cpu.max, v1 cpu.cfs_quota_us over
 * cpu.cfs_period_us; the tightest of its level and every ancestor), rounded up; 0 if none. */
unsigned hpshm__linux_cgroup_cpus(void);

/* ---- SysV shared memory: privileges and limits ---- */

/* Privileges SysV hugetlb needs. */
int  hpshm__linux_has_cap_ipc_lock(void);
long hpshm__linux_hugetlb_shm_group(void);   /* -1 if unreadable */
int  hpshm__linux_in_group(long gid);

/* kernel.shmmax, shmall and shmmni: 0, or HPSHM_EIO when none can be read. */
int hpshm__linux_sysv_limits(struct hpshm__sysv_limits *out);

/* ---- SysV shared memory: the kernel's list, and creators' start times (sysvipc.c) ---- */

/* One segment as /proc/sysvipc/shm lists it. */
struct hpshm__linux_shm {
	long long          key;    /* its key; IPC_PRIVATE (0) once marked for removal */
	int                id;     /* its shmid */
	unsigned long      perms;  /* shm_perm.mode: the permission bits, SHM_DEST once marked */
	unsigned long long size;   /* shm_segsz: what shmget() was asked for, not rounded up */
	long               cpid;   /* its creator's pid, 0 if in a pid namespace we cannot see */
	long               lpid;   /* the last process to attach or detach it */
	unsigned long      nattch; /* attachments now */
	unsigned long      uid;    /* its owner */
};

/* Called per listed segment; non-zero stops the walk. */
typedef int (*hpshm__linux_shm_fn)(void *user, const struct hpshm__linux_shm *e);

/*
 * Walk /proc/sysvipc/shm, calling fn for each segment in it.  0 when the walk is done or fn
 * stopped it, also when the kernel has no SysV IPC (no list); HPSHM_EIO, errno set, when the
 * list cannot be read.
 */
int hpshm__linux_shm_each(hpshm__linux_shm_fn fn, void *user);
/* The listed entry of segment id: 0, or -1 if the list cannot be read or does not show it. */
int hpshm__linux_shm_find(int id, struct hpshm__linux_shm *out);
/* The boot time (btime of /proc/stat) as a Unix time, 0 if unreadable. */
time_t hpshm__linux_boot_time(void);
/* When process pid started, as a Unix time (to the second), 0 if unknown. */
time_t hpshm__linux_process_started(long long pid);

/* ---- transparent huge pages ---- */

/* The bracketed choice of each setting file, or "" if absent. */
int hpshm__linux_thp(struct hpshm__thp *out);

/* ---- advice when huge pages fall short (advice.c) ---- */

/*
 * Does a hugetlb cgroup leave less than size bytes of page_size pages?  0 if it leaves room,
 * else 1 with one sentence in buf: with advice 0 the reason ("hugetlb cgroup /x allows 4MiB
 * of 2MiB pages ..., below the 32MiB needed: raise ..."), with advice 1 only the fix.
 */
int hpshm__linux_hugetlb_cgroup_short(size_t size, size_t page_size, int advice, char *buf, size_t len);

/*
 * The hint for a hugetlb reservation that failed (ENOMEM/ENOSPC), naming the sysctl and the
 * number of pages: "raise vm.nr_hugepages to at least 520 (needs 8 more 2MiB pages)"; for
 * non-default sizes the sysfs file.  Writes into buf and returns it.
 */
char *hpshm__linux_hugetlb_hint(size_t size, size_t page_size, char *buf, size_t len);

/*
 * Does a hugetlb cgroup make faults of this size a SIGBUS risk?  1 when a fault-time limit
 * applies with no reservation limit (reservations then do not protect faults), else 0.
 */
int hpshm__linux_hugetlb_fault_risk(size_t size, size_t page_size);

/*
 * Both of the above from one reading of the cgroup (a probe asks both, and each reading
 * parses /proc/self/cgroup and /proc/self/mountinfo): *fault_risk as
 * hpshm__linux_hugetlb_fault_risk(), the result and buf as hpshm__linux_hugetlb_cgroup_short() with
 * advice 0.
 */
int hpshm__linux_hugetlb_cgroup_probe(size_t size, size_t page_size, int *fault_risk, char *buf, size_t len);

#endif /* HPSHM_PORTS_LINUX_LINUX_H */
