/*
 * ports/port.h -- what the core, the backends and the tool ask of the OS, in OS-neutral terms.
 *
 * Internal: not installed.  No OS header is included here, so core/ stays free of them.
 * Each OS implements these in ports/<os>/; where a fact does not exist on an OS the function
 * returns 0 items or HPSHM_ENOTSUP and says so in text.
 *
 * Every reader of /proc and /sys takes its root from hpshm__sysroot(), so tests can point
 * the library at a fake tree with hpshm__set_sysroot().
 */
#ifndef HPSHM_PORT_H
#define HPSHM_PORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"

#define HPSHM__MAX_PAGE_SIZES 8 /* hstates a kernel offers: x86 2, arm64 4, ppc64 3 */
#define HPSHM__MAX_MOUNTS     16
#define HPSHM__UNLIMITED      UINT64_MAX

/* One huge page pool (a Linux hstate), counts in pages. */
struct hpshm__pool {
	size_t        page_size;  /* bytes */
	unsigned long total;      /* nr_hugepages */
	unsigned long free;       /* free_hugepages: includes reserved ones */
	unsigned long resv;       /* resv_hugepages: promised to mappings, not yet faulted */
	unsigned long surplus;    /* surplus_hugepages */
	unsigned long overcommit; /* nr_overcommit_hugepages: the most surplus allowed */
};

/* Pages a new mapping can reserve right now: free minus reserved, plus overcommit room. */
unsigned long hpshm__pool_available(const struct hpshm__pool *p);

/* A hugetlbfs mount. */
struct hpshm__mount {
	char   path[256];   /* mount point */
	size_t page_size;   /* pagesize= option, or the default huge page size */
	int    writable;    /* 1 if this process may create files in it */
};

/* The hugetlb cgroup limits that apply to this process for one page size (bytes). */
struct hpshm__cgroup {
	int      version;        /* 1 or 2; 0: no hugetlb controller applies */
	char     path[256];      /* the cgroup's directory */
	uint64_t limit;          /* fault-time limit (v1 limit_in_bytes, v2 max) */
	uint64_t usage;          /* charged now */
	uint64_t rsvd_limit;     /* reservation limit, HPSHM__UNLIMITED if none or not supported */
	uint64_t rsvd_usage;     /* reserved now */
};

/* Backing of a mapping as the kernel reports it. */
struct hpshm__backing {
	size_t page_size;       /* KernelPageSize, or f_bsize on hugetlbfs */
	int    huge;            /* hugetlb VMA (VmFlags ht) or hugetlbfs descriptor */
	char   source[32];      /* "smaps", "fstatfs", or "unverified" */
};

/* Root under which /proc and /sys are read: "" normally. */
const char *hpshm__sysroot(void);
void hpshm__set_sysroot(const char *root);   /* tests only; NULL restores "" */

size_t hpshm__base_page_size(void);
/* The kernel's default huge page size (Hugepagesize in /proc/meminfo), 0 if none. */
size_t hpshm__default_huge_page_size(void);
/* Pools of every huge page size, ascending.  Returns the count. */
int hpshm__pools(struct hpshm__pool *out, int max);
/* The pool for one size: 0, or HPSHM_EUNAVAILABLE if the kernel has no such size. */
int hpshm__pool_get(size_t page_size, struct hpshm__pool *out);

/* hugetlbfs mounts from /proc/self/mountinfo.  Returns the count. */
int hpshm__hugetlbfs_mounts(struct hpshm__mount *out, int max);
/* Is dir on hugetlbfs, and with what page size?  0, or HPSHM_EUNAVAILABLE with errno set. */
int hpshm__hugetlbfs_dir(const char *dir, size_t *page_size);

/* The hugetlb cgroup for page_size: 0 (out->version 0 if none applies) or an error. */
int hpshm__cgroup_get(size_t page_size, struct hpshm__cgroup *out);

/* Privileges SysV hugetlb needs. */
int  hpshm__has_cap_ipc_lock(void);
long hpshm__hugetlb_shm_group(void);   /* -1 if unreadable */
int  hpshm__in_group(long gid);

/* SysV shared memory limits; 0 if the OS has none to read. */
struct hpshm__sysv_limits {
	uint64_t shmmax;   /* bytes */
	uint64_t shmall;   /* pages */
	uint64_t shmmni;   /* segments */
};
int hpshm__sysv_limits(struct hpshm__sysv_limits *out);

/* Transparent huge pages: the bracketed choice of each file, or "" if absent. */
struct hpshm__thp {
	char enabled[32];
	char defrag[32];
	char shmem_enabled[32];
};
int hpshm__thp(struct hpshm__thp *out);

/* What backs [addr, addr+len): from the descriptor if fd >= 0, then from smaps. */
int hpshm__verify_backing(void *addr, size_t len, int fd, struct hpshm__backing *out);

/*
 * Fault every page of a mapping in, never raising SIGBUS: fallocate on fd (if >= 0), then
 * MADV_POPULATE_WRITE; a guarded touch only where the kernel has neither.  *methods gets the
 * HPSHM_POPULATE_* bits used.  Returns 0, or HPSHM_EPOPULATE with err filled (the mapping is
 * left as it was, for the caller to destroy).
 */
int hpshm__populate(void *addr, size_t len, size_t page_size, int fd, unsigned *methods, hpshm_error *err);

/* The first line of /proc/self/maps overlapping [addr, addr+size) (size 0: the byte at
 * addr), for error messages that name what holds a range.  0, or HPSHM_EUNAVAILABLE. */
int hpshm__maps_line(const void *addr, size_t size, char *buf, size_t len);

/*
 * The checks every hugetlb provider shares, for probe(): the kernel offers rq->page_size,
 * the pool has rq->size / rq->page_size pages available (free - resv + overcommit room), and
 * no hugetlb cgroup limit leaves less than rq->size.  0, or HPSHM_EUNAVAILABLE with
 * out->reason one sentence such as "vm.nr_hugepages is 0 for 2MiB pages: raise it to at
 * least 8" or "hugetlb cgroup /x allows 4MiB of 2MiB pages at fault time, below 32MiB".
 */
struct hpshm_request;
struct hpshm_probe;
int hpshm__hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out);

/*
 * The hint for a hugetlb reservation that failed (ENOMEM/ENOSPC), naming the sysctl and the
 * number of pages: "raise vm.nr_hugepages to at least 520 (needs 8 more 2MiB pages)"; for
 * non-default sizes the sysfs file.  Writes into buf and returns it.
 */
char *hpshm__hugetlb_hint(size_t size, size_t page_size, char *buf, size_t len);

/*
 * Does a hugetlb cgroup make faults of this size a SIGBUS risk?  1 when a fault-time limit
 * applies with no reservation limit (reservations then do not protect faults), else 0.
 */
int hpshm__hugetlb_fault_risk(size_t size, size_t page_size);

/* ---- processes, for the segment header and re-attach ---- */

/* A process's start time (clock ticks since boot on Linux), so a recycled pid is not taken
 * for the creator; 0 if unknown. */
uint64_t hpshm__process_start(long long pid);
/* Is pid, started at start, still running?  1 yes, 0 no, -1 cannot tell. */
int hpshm__process_alive(long long pid, uint64_t start);
long long hpshm__getpid(void);
/* An id unique to this boot (Linux: /proc/sys/kernel/random/boot_id).  0, or HPSHM_EIO. */
int hpshm__boot_id(char *buf, size_t len);
/* 64 unpredictable bits, for nonces. */
uint64_t hpshm__random64(void);

/*
 * An address for a re-attachable segment: len bytes aligned to align, free in this process
 * now, and far from where the kernel puts ordinary mappings (libraries, heaps, thread
 * stacks), so that a freshly exec'd child is very unlikely to have anything there when it
 * attaches.  0, or an error.
 */
int hpshm__pick_address(size_t len, size_t align, void **out);

/*
 * Start path by fork and exec with argv and envp (NULL: environ), keeping the descriptors in
 * keep[] open across exec (their close-on-exec flag is cleared in the child only).  0 with
 * *pid set, or an error (exec failures are reported through a close-on-exec pipe, so a
 * missing program is an error here rather than a child exiting 127).
 */
int hpshm__spawn(const char *path, char *const argv[], char *const envp[], const int *keep, int nkeep,
		 long long *pid, hpshm_error *err);
/* Wait for pid: *status is its exit code or 128 + signal. */
int hpshm__wait(long long pid, int *status, hpshm_error *err);

/* Monotonic clock in nanoseconds. */
uint64_t hpshm__now_ns(void);

/* fopen() a file under the sysroot, close-on-exec.  NULL with errno set. */
FILE *hpshm__sysfile_open(const char *path);
/*
 * The next line of f into buf, without its newline: 1, or 0 at end of file.  A line that does
 * not fit keeps its start in buf, the rest is read past, and *cut (if not NULL) is set, so a
 * caller can skip an overlong line rather than parse half of it.
 */
int hpshm__getline(FILE *f, char *buf, size_t len, int *cut);
/* The kernel's name for a huge page size in hugetlb cgroup files (mem_fmt() in
 * mm/hugetlb_cgroup.c: the largest unit not above the size): "2MB", "1GB", "64KB". */
char *hpshm__hugetlb_cgroup_size(size_t page_size, char *buf, size_t len);

/* Read a whole small file under the sysroot into buf (NUL-terminated). Returns length or <0. */
long hpshm__read_file(const char *path, char *buf, size_t len);
/* Read one unsigned number from a file under the sysroot. 0, or HPSHM_EIO. */
int hpshm__read_u64(const char *path, uint64_t *out);

#endif /* HPSHM_PORT_H */
