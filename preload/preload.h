/* SPDX-License-Identifier: MIT */
/*
 * preload/preload.h -- what the two files of libhpshm_preload.so share.
 *
 * interpose.c holds the entry points (mmap, munmap, mremap, shmget, shmat, shmctl), the
 * tables of regions and SysV ids, and the set-up; inherit.c holds the exec family, which
 * keeps the interposer in the programs a server execs; report.c holds everything that only
 * writes or reads text: the stderr lines, the JSON report, and the few kernel files read
 * (smaps, the pool counters, a process's children).  None of them includes anything of
 * hpshm but the public header: the interposer is a client of the library like any other.
 *
 * The state below is written once, by preload_setup(), before `enabled` is published with
 * release order; every reader loads `enabled` with acquire order first, so no lock guards it.
 */
#ifndef HPSHM_PRELOAD_H
#define HPSHM_PRELOAD_H

#include <stddef.h>
#include <sys/types.h>

#include "hpshm.h"

/* The threshold when HPSHM_PRELOAD_MIN_SIZE is not set. */
#define PRELOAD_DEFAULT_MIN_SIZE ((size_t)32 << 20)

/* Longest report path kept; a longer one is refused at set-up with a message. */
#define PRELOAD_PATH_MAX 1024

/* The configuration and decisions taken once, at load time. */
struct preload_config {
	hpshm_config    *cfg;                       /* HPSHM_<KEY> values, name/reattach forced off */
	hpshm_huge_pages policy;                    /* huge_pages, read back from cfg */
	size_t           min_size;                  /* requests below this go to the C library */
	size_t           base_page;                 /* the base page size */
	char             report[PRELOAD_PATH_MAX];  /* where JSON lines go; empty: no report */
	int              sysv;                      /* 0 when provider= leaves sysv_hugetlb out */
	size_t           sysv_page_size;            /* SHM_HUGETLB page size; 0 when none is offered */
	char             sysv_why[HPSHM_TEXT_MAX];  /* why sysv_page_size is 0 */
};

extern struct preload_config preload_cfg;

/*
 * Raised around every call into hpshm (and into the C library on its behalf): what that
 * calls comes back to the interposer and goes straight on.  Initial-exec TLS never allocates.
 */
extern _Thread_local int preload_inside __attribute__((tls_model("initial-exec")));

/* "hpshm preload: pid N: " + the message + newline, on stderr, in one write(). */
void preload_say(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* The huge_pages word for a policy ("off", "try", "on"). */
const char *preload_policy_name(hpshm_huge_pages policy);

/* A size for people: whole GiB or MiB as "2GiB", "64MiB", other sizes rounded ("1069.7MiB"). */
char *preload_size_text(size_t size, char *buf, size_t len);

/*
 * Append one JSON line to the report file (nothing when no report was asked for).
 * call is the intercepted call ("mmap", "shmget"); addr the region's address or NULL;
 * r the segment's report (on failure, what the walk recorded); err NULL on success, else
 * the failure; extra is more members, already JSON ("\"shmid\":3"), or NULL.
 */
void preload_report(const char *call, const void *addr, const hpshm_report *r, const hpshm_error *err,
		    const char *extra);

/* The end of a segment in the process that holds it, for preload_report_end(). */
struct preload_end {
	const char *call;       /* what ended it: "munmap", "shmctl", "exit" */
	const char *event;      /* "destroy", or "handover" when children map it still */
	const void *addr;       /* the region's address; NULL for a SysV id */
	size_t      size;       /* bytes the program asked for */
	size_t      mapped;     /* the mapping's length (with addr) */
	const char *provider;   /* the provider that made it */
	long        created_by; /* the process that made it */
	const long *held_by;    /* the children that map it (handover) */
	int         nheld;      /* entries in held_by */
	const char *extra;      /* more members, already JSON ("\"shmid\":3"), or NULL */
};

/* Append the line of a segment's end (nothing when no report was asked for). */
void preload_report_end(const struct preload_end *e);

/*
 * The children of this process (made by any of its threads) that have a mapping starting at
 * addr: up to max pids in out, and how many.  0 when /proc cannot say.
 */
int preload_children_mapping(const void *addr, long *out, int max);

/*
 * inherit.c: keep the interposer's variables (LD_PRELOAD's entry for this library and the
 * HPSHM_* variables `hpshm exec` set) as the process started with them, so an exec whose
 * environment drops them can put them back.  Called once by the set-up, in the constructor.
 */
void preload_inherit_setup(void);

/*
 * The VMA of /proc/self/smaps that holds addr: its KernelPageSize in bytes (0 if none holds
 * it or smaps cannot be read), and whether it is hugetlb (VmFlags "ht").
 */
size_t preload_smaps_page_size(const void *addr, int *hugetlb);

/* Pages of page_size a new mapping could reserve now (free - resv); -1 if unreadable. */
long preload_pool_available(size_t page_size);

/* The kernel's default huge page size (/proc/meminfo Hugepagesize), 0 if none. */
size_t preload_default_huge_page_size(void);

#endif /* HPSHM_PRELOAD_H */
