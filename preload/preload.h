/* SPDX-License-Identifier: MIT */
/*
 * preload/preload.h -- what the files of libhpshm_preload.so share.
 *
 * libhpshm_preload.so gives huge pages to a server nobody can change: loaded with
 * LD_PRELOAD (`hpshm exec`, doc/exec.md), it takes the server's large shared anonymous
 * mmap() and its large shmget(IPC_CREAT) and makes them hpshm's.  One idea per file:
 *   setup.c    the configuration read once, at load or at the first request, and the
 *              decisions taken from it (threshold, policy, the SysV page size)
 *   next.c     the next definitions of the calls taken over (the C library's), and the
 *              system calls made directly until they are known
 *   mmap.c     mmap, mmap64, munmap and mremap: anonymous shared regions as hpshm segments
 *   region.c   the table of regions mmap() gave out, and their end at exit
 *   sysv.c     shmget, shmat and shmctl: SHM_HUGETLB under hpshm's policy, and their table
 *   inherit.c  the exec family and posix_spawn: the interposer stays in what a server execs
 *   report.c   the words: stderr lines and the JSON report
 * None of them includes anything of hpshm but the public header, ports/facts.h (the OS
 * facts the library decides from, as the tool reads them) and ports/linux/flags.h (the Linux
 * flag values an old C library lacks): the interposer is a client of the library like the
 * tool, in the top layer of doc/architecture.md, and decides nothing the library decides.
 *
 * Safety inside someone else's process, which every file keeps:
 *   - No locks.  The tables are fixed arrays of slots whose state moves FREE -> BUSY ->
 *     LIVE by compare-and-swap, so a fork() or a signal at any point finds no lock held.
 *     A child inherits the tables with the memory: its copies of the handles are its own,
 *     and destroying one there only ends the child's mapping and descriptor (segments are
 *     unnamed: nothing is removed that the parent still uses).  The only allocation is
 *     in hpshm itself, on the paths that create or destroy a region, decide a taken
 *     shmget()'s page size, or verify its segment at the first shmat(); mmap, munmap,
 *     shmget and shmat are not async-signal-safe functions to begin with, and the
 *     pass-through paths allocate nothing.  The exit path asks which children map a
 *     region through a port reader that allocates nothing.  The exec wrappers, which may run after vfork(), allocate
 *     nothing at all (inherit.c).
 *   - No recursion.  hpshm calls mmap, munmap and shmget itself, and those calls come
 *     back here (the library's references bind to the first definition, ours).  A
 *     thread-local "inside" count (preload_inside), raised around every call into hpshm,
 *     sends them straight on.  It uses the initial-exec TLS model, which never allocates.
 *   - The next definitions are found with dlsym(RTLD_NEXT) once, at load.  Until then, and
 *     for mmap/munmap/mremap always as a fallback, the system call is made directly:
 *     dlsym may allocate, and malloc may call mmap.
 *   - A malformed configuration turns interposition off for the process with one line on
 *     stderr naming the variable; every call then goes to the C library unchanged.
 *   - setuid, setgid and file-capability programs (AT_SECURE) are left alone: their
 *     caller's environment must not steer them.  (The dynamic loader also ignores an
 *     LD_PRELOAD path with a slash for them.)
 *
 * The state in preload_cfg is written once, by the set-up, before it publishes with release
 * order that requests may be taken; every reader learns that through preload_ready_for(),
 * with acquire order, first, so no lock guards it.
 */
#ifndef HPSHM_PRELOAD_H
#define HPSHM_PRELOAD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
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
};

extern struct preload_config preload_cfg;

/*
 * Raised around every call into hpshm (and into the C library on its behalf): what that
 * calls comes back to the interposer and goes straight on.  Initial-exec TLS never allocates.
 */
extern _Thread_local int preload_inside __attribute__((tls_model("initial-exec")));

/* ---- setup.c --------------------------------------------------------------------------------- */

/*
 * May a request of len bytes be taken?  Sets up first when that has not happened yet (a
 * thread that arrives meanwhile waits; a fork()ed child of a process caught mid-set-up takes
 * nothing).  The first request at or above the threshold says what set-up kept.
 */
int preload_ready_for(size_t len);

/* The process this one was forked from (pthread_atfork()), 0 if not forked since its exec. */
long preload_fork_parent(void);

/* ---- next.c: the C library's definitions of the calls taken over ----------------------------- */

/* Look every next definition up now: the set-up does, while nothing else runs. */
void next_resolve_all(void);

/* The next definition of each call.  mmap, munmap and mremap make the system call themselves
 * until it is known; the SysV calls fail with ENOSYS without one. */
void *next_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int   next_munmap(void *addr, size_t len);
void *next_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr);
int   next_shmget(key_t key, size_t size, int flags);
void *next_shmat(int id, const void *addr, int flags);
struct shmid_ds;
int   next_shmctl(int id, int cmd, struct shmid_ds *buf);

/* ---- region.c: the regions mmap() gave out --------------------------------------------------- */

#define PRELOAD_MAX_REGIONS 256 /* intercepted mmap regions alive at once, per process */

/* A slot of a table (regions here, SysV ids in sysv.c): FREE -> BUSY -> LIVE by compare-and-swap. */
enum slot_state { SLOT_FREE = 0, SLOT_BUSY = 1, SLOT_LIVE = 2 };

/* One region mmap() gave out from an hpshm segment. */
struct region {
	atomic_int     state;  /* enum slot_state: only the thread that moved it to BUSY writes */
	uintptr_t      start;  /* the segment's first byte: the address the caller got */
	size_t         length; /* the caller's length, rounded up to base pages */
	size_t         asked;  /* the caller's length as asked, for the report */
	size_t         mapped; /* the whole mapping, a multiple of its page size */
	hpshm_segment *seg;    /* the handle; a forked child holds its own copy */
	long           maker;  /* the process that made it */
	atomic_long    holder; /* the process that holds it for the server (region.c) */
};

/* Record seg as a live region.  0, or -1 when the table is full. */
int  region_insert(hpshm_segment *seg, size_t asked, size_t length, size_t mapped);
/* Is any region live (or being made or ended)?  0 lets the calls skip the table. */
int  region_any(void);
/* The live region whose mapping overlaps [lo, hi), or NULL. */
struct region *region_overlapping(uintptr_t lo, uintptr_t hi);
/*
 * The live regions [lo, hi) touches, into hit[] (room for every slot): how many, or -1 with
 * *part set to the first one it covers only part of (the caller's length, not the slack).
 */
int  region_collect(uintptr_t lo, uintptr_t hi, struct region **hit, struct region **part);
/* Take a live region for this thread (LIVE -> BUSY): 1, or 0 when another thread has it. */
int  region_claim(struct region *r);
/* Give it back live (BUSY -> LIVE), or free its slot (BUSY -> FREE; the segment is gone). */
void region_unclaim(struct region *r);
void region_free(struct region *r);
/* Record r's end in the report ("munmap", "exit"), when this process holds it. */
void region_report_end(struct region *r, const char *call);
/* Would a fixed mapping at [addr, addr+len) land on a region?  Says so if it would. */
int  region_fixed_clash(const char *call, void *addr, size_t len);

/* ---- report.c: the words, and the few kernel files read -------------------------------------- */

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

/* ---- inherit.c: the exec family -------------------------------------------------------------- */

/*
 * Keep the interposer's variables (LD_PRELOAD's entry for this library and the HPSHM_*
 * variables `hpshm exec` set) as the process started with them, so an exec whose
 * environment drops them can put them back.  Called once by the set-up, in the constructor.
 */
void preload_inherit_setup(void);

#endif /* HPSHM_PRELOAD_H */
