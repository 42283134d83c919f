/* SPDX-License-Identifier: MIT */
/*
 * ports/port.h -- what the core and the backends ask of the OS, in OS-neutral terms.
 *
 * Internal: not installed.  No OS header is included here, so core/ stays free of them.
 * Each OS implements these in ports/<os>/: ports/posix/ holds what POSIX.1-2008 alone can do,
 * and an OS folder beside it (ports/linux/) what needs that OS, or does it better there; CMake
 * builds one implementation of each function, one small file per concern
 * (doc/architecture.md).  Where a fact does not exist on an OS the function returns 0 items,
 * HPSHM_EUNAVAILABLE or HPSHM_ENOTSUP, and says so in text.
 *
 * What every caller guarantees, so that a port need not check it again (mimalloc's prim.h
 * states its contract the same way): a port may assert it, and populate and verify, which
 * every create calls, test none of it at run time:
 *   - a pointer argument is non-NULL, out-parameters included, unless the function says what
 *     NULL means there;
 *   - a range [addr, addr+len) handed to verify or populate is a mapping of this process made
 *     by a provider: addr non-NULL and aligned to page_size, len > 0 and a whole number of
 *     pages; page_size > 0 is the size the segment was created with.
 * The core and the backends establish these before they call (the core rounds every size to
 * whole pages and refuses a probe that names no page size).
 *
 * The structs below are the OS's facts in neutral shape, defined here once: the port fills
 * them, the backends decide from them, and ports/facts.h hands the same structs to the tool
 * and the benchmark.  Which file or setting fills each member on an OS is said by that OS's
 * header (ports/linux/linux.h), so this contract names no OS's terms.
 *
 * The port is a leaf above base/: it never includes core/, backends/, tools/ or bench/, nor
 * the provider interface.  OS facts beyond this contract are in the OS's own header
 * (ports/linux/linux.h), for that OS's backends.
 */
#ifndef HPSHM_PORT_H
#define HPSHM_PORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"

#define HPSHM__MAX_PAGE_SIZES 8 /* huge page sizes an OS offers: 2 to 4 on the systems served */

/* ---- pages ---- */

/* The base page size. */
size_t hpshm__port_base_page_size(void);
/* The huge page sizes the OS offers, ascending.  Returns the count (0: none). */
int hpshm__port_huge_page_sizes(size_t *out, int max);
/* The size the OS uses for huge pages when none is named, 0 if none. */
size_t hpshm__port_default_huge_page_size(void);

/*
 * An OS object a mapping lives on, as the port may use it: what a provider's mapping carries
 * (a descriptor, a SysV id, a Windows HANDLE) with what the port may do with it.  Without
 * HPSHM__PORT_FILE the port ignores value.
 */
struct hpshm__port_handle {
	intptr_t value; /* the OS's number or pointer for the object */
	unsigned flags; /* HPSHM__PORT_* bits */
};

/* The handle is an open file of the object's pages: the port may allocate those pages in
 * advance through it and ask which file system holds it. */
#define HPSHM__PORT_FILE 1u
/* No object the port may use: verify and populate work from the mapping alone. */
#define HPSHM__PORT_NO_HANDLE ((struct hpshm__port_handle){ -1, 0 })

/* The handle value, a file the port may use if file is non-zero (a provider's
 * HPSHM_MAP_DESCRIPTOR), else only carried. */
static inline struct hpshm__port_handle hpshm__port_handle_of(intptr_t value, unsigned file)
{
	struct hpshm__port_handle h;

	h.value = value;
	h.flags = file ? HPSHM__PORT_FILE : 0u;
	return h;
}

/* Backing of a mapping as the OS reports it. */
struct hpshm__backing {
	size_t page_size;       /* the page size the OS maps the range with; 0 if unknown */
	int    huge;            /* 1 if backed by huge pages */
	char   source[32];      /* what the OS read it from (a file, a call), or "unverified" */
};

/*
 * What backs [addr, addr+len): from the handle's file if it has one, then from the mapping
 * itself.  addr NULL with len 0 asks the handle alone (an exception to the guarantees above).
 * 0, or HPSHM_EUNAVAILABLE when the OS says nothing (out->source is then "unverified").
 */
int hpshm__port_verify_backing(void *addr, size_t len, struct hpshm__port_handle h, struct hpshm__backing *out);

/* ---- NUMA placement ---- */

#define HPSHM__MAX_NODES 64 /* NUMA nodes a policy can name: node numbers 0 to 63 */

/* The numa= key's modes. */
enum hpshm__numa_mode {
	HPSHM__NUMA_DEFAULT,    /* the process's own policy: hpshm changes nothing */
	HPSHM__NUMA_LOCAL,      /* the node of the CPU the creating thread runs on */
	HPSHM__NUMA_INTERLEAVE, /* page by page across nodes (every node with memory if nodes is 0) */
	HPSHM__NUMA_BIND,       /* only the nodes in nodes: a fault elsewhere fails */
	HPSHM__NUMA_PREFERRED   /* the one node in nodes first, others when it is full */
};

/* A NUMA policy for a segment's pages. */
struct hpshm__numa {
	int      mode;  /* enum hpshm__numa_mode */
	uint64_t nodes; /* bit n: node n; one bit for preferred; 0 for default and local */
};

/* One NUMA node as the OS describes it, with its share of one page size's pool. */
struct hpshm__node {
	int           id;          /* the node's number */
	int           has_memory;  /* 1 if the node has memory of its own (a CPU-only node has none) */
	unsigned      cpus;        /* CPUs of the node this process may run on */
	unsigned long pool_total;  /* huge pages of the asked size in the node's pool (0 for base pages) */
	unsigned long pool_free;   /* free ones among them */
	uint64_t      mem_free;    /* free memory of the node, bytes (0 if unknown) */
};

/*
 * The NUMA nodes of this machine, ascending, with their pools of page_size (0, or the base
 * page size: no pool).  Returns the count; 0 where the OS reports no nodes (then a policy
 * other than default is refused by hpshm__port_numa_check()).
 */
int hpshm__port_numa_nodes(size_t page_size, struct hpshm__node *out, int max);
/*
 * May a segment of len bytes on pages of page_size be placed by p?  Refuses nodes that do not
 * exist or have no memory, and a policy whose nodes' pools (huge pages) cannot hold the
 * segment: the kernel's huge page reservation is global, so a bind to a node without free
 * pages would succeed and then fault with SIGBUS.  0, or HPSHM_EVALUE (a node that is not
 * there), HPSHM_ENOMEM (pools too small), HPSHM_ENOTSUP (no NUMA here), with err naming the
 * nodes there and the fix (the per-node pool setting).
 */
int hpshm__port_numa_check(const struct hpshm__numa *p, size_t len, size_t page_size, hpshm_error *err);
/* Apply p to the mapping [addr, addr+len) before it is populated (Linux: mbind), so the first
 * touch lands where asked.  0, or an error with err filled. */
int hpshm__port_numa_apply(void *addr, size_t len, const struct hpshm__numa *p, hpshm_error *err);
/*
 * Where the pages of [addr, addr+len) are, read back from the OS (Linux: move_pages with no
 * target nodes, in chunks): bytes[n] gets the bytes on node n for n < max.  Pages not present
 * are not counted.  Returns the number of nodes counted into (the highest node seen plus 1),
 * or a negative code (HPSHM_ENOTSUP where the OS cannot say).
 */
int hpshm__port_numa_where(void *addr, size_t len, size_t page_size, uint64_t *bytes, int max);

/*
 * How a populate runs.  threads 1 faults the range in the calling thread; n > 1 splits it
 * into n contiguous ranges of whole pages, one per thread, and the first failure stops the
 * others.  numa, when not NULL and not default, places each thread on the CPUs of the node
 * its range is meant for, so the kernel clears the pages from a near CPU.
 */
struct hpshm__populate_how {
	unsigned                   threads; /* 1 or more */
	const struct hpshm__numa  *numa;    /* NULL: no placement */
};

#define HPSHM__POPULATE_THREADS_MAX 64 /* the most threads a populate starts */

/*
 * Fault every page of a mapping in, never raising SIGBUS: with calls that fail cleanly where
 * the OS has them (allocating into the handle's file, then asking the kernel to fault the
 * range in), a touch of every page guarded against SIGBUS only where it has neither.
 * *methods gets the HPSHM_POPULATE_* bits used.  Returns 0, or HPSHM_EPOPULATE with err
 * filled (the mapping is left as it was, for the caller to destroy).
 */
int hpshm__port_populate(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h,
			 const struct hpshm__populate_how *how, unsigned *methods, hpshm_error *err);

/* The CPUs this process may run on now: its affinity mask, less what a CPU quota of its
 * control group allows (cpu.max on Linux), at least 1. */
unsigned hpshm__port_cpus_usable(void);

/* ---- huge page pools ---- */

#define HPSHM__UNLIMITED  UINT64_MAX /* a limit that is not set */
#define HPSHM__MAX_MOUNTS 16         /* huge page file system mounts a caller lists, at most */

/* The pages an OS keeps for huge page mappings of one size, counts in pages. */
struct hpshm__pool {
	size_t        page_size;  /* bytes */
	unsigned long total;      /* the pool's size */
	unsigned long free;       /* not mapped by anyone, reserved ones included */
	unsigned long resv;       /* promised to mappings, not yet faulted */
	unsigned long surplus;    /* allocated beyond total under overcommit */
	unsigned long overcommit; /* the most surplus allowed */
};

/* A mount of a file system whose files are backed by huge pages. */
struct hpshm__mount {
	char   path[256];   /* mount point */
	size_t page_size;   /* its page size (its option, or the default huge page size) */
	int    writable;    /* 1 if this process may create files in it */
};

/* The limits a control group (this process's, or an ancestor) puts on huge pages of one
 * size, in bytes. */
struct hpshm__limit {
	int      version;        /* the controller's version, 1 or 2; 0: no limit applies */
	char     path[256];      /* the group (its directory) */
	uint64_t limit;          /* charged when a page is faulted in */
	uint64_t usage;          /* charged now */
	uint64_t rsvd_limit;     /* charged when a mapping reserves pages; HPSHM__UNLIMITED if none */
	uint64_t rsvd_usage;     /* reserved now */
};

/* The limits of System V shared memory; 0 where the OS has none to read. */
struct hpshm__sysv_limits {
	uint64_t shmmax;   /* largest segment, bytes */
	uint64_t shmall;   /* all segments together, base pages */
	uint64_t shmmni;   /* segments */
};

/* The modes of transparent huge pages, each the chosen word, "" if the OS has no such setting. */
struct hpshm__thp {
	char enabled[32];       /* for private memory, as the OS words it ("always", "never" ...) */
	char defrag[32];        /* how hard a fault tries to find a huge page */
	char shmem_enabled[32]; /* for shared memory, as the OS words it */
};

/* This port's words for a set of the HPSHM_POPULATE_* bits hpshm__port_populate() reports, e.g.
 * "fallocate+madvise" on Linux; "none" for 0.  A static string. */
const char *hpshm__port_populate_name(unsigned methods);

/* ---- addresses ---- */

/*
 * An address for a re-attachable segment: len bytes aligned to align, free in this process
 * now, and far from where the kernel puts ordinary mappings (libraries, heaps, thread
 * stacks), so that a freshly exec'd child is very unlikely to have anything there when it
 * attaches.  0, or an error.
 */
int hpshm__port_pick_address(size_t len, size_t align, void **out);

/*
 * The address lock, one per process.  hpshm__port_pick_address() finds a range free now and keeps
 * nothing, so two threads creating at once would be handed the same range and one would fail
 * to map there: the core holds this lock from choosing a segment's address until the segment
 * and its header's companion are mapped.  Another thread may wait meanwhile (a blocking lock,
 * not a spin: a create may take a while on some systems).  Not recursive.
 */
void hpshm__port_address_lock(void);
void hpshm__port_address_unlock(void);

/*
 * The provider table's lock (core/registry.c), one per process: held for the few instructions
 * that copy or change the table, statically initialised so the library needs no init call.
 * Not recursive.  The C11 atomics a spin lock would use are not in every compiler hpshm
 * builds with (MSVC's C mode has <stdatomic.h> only behind /experimental:c11atomics, from
 * Visual Studio 2022 17.5), so the lock is the port's, as the address lock is.
 */
void hpshm__port_registry_lock(void);
void hpshm__port_registry_unlock(void);

/*
 * A release fence: every store before it becomes visible to another thread, or another
 * process mapping the same memory, before any store after it.  A header's magic is written
 * after it, so a reader that sees the magic sees the whole header (core/header.c,
 * backends/named_create.c).  The port's, for the same reason as the registry lock.
 */
void hpshm__port_release_fence(void);

/* ---- resizable segments (core/resize.c) ---- */

/*
 * Atomic, sequentially consistent operations on a 64-bit word in shared memory (a resizable
 * segment's header and its table of attached processes), for the same reason as the
 * registry lock: C11's atomics are not in every compiler hpshm builds with.  p is aligned to
 * 8 bytes.  cas64() stores desired when *p is *expected and returns 1, else loads *p into
 * *expected and returns 0.
 */
uint64_t hpshm__port_load64(const volatile uint64_t *p);
void hpshm__port_store64(volatile uint64_t *p, uint64_t v);
int hpshm__port_cas64(volatile uint64_t *p, uint64_t *expected, uint64_t desired);

/*
 * Give the object behind h pages for [off, off + len) now (Linux: fallocate()), so that no
 * later touch of the range can find the pool or the file system short: 0, HPSHM_ENOMEM (no
 * pages or space left: what was allocated of the range is given back), HPSHM_ENOTSUP (no way
 * to do it here) or HPSHM_ESYS, with err filled.
 */
int hpshm__port_commit(struct hpshm__port_handle h, uint64_t off, size_t len, size_t page_size, hpshm_error *err);
/*
 * Give the pages of [off, off + len) of the object back to the system (Linux:
 * fallocate(PUNCH_HOLE)), keeping its length.  No process may touch the range any more: a
 * touch would take a new page, or fail.  0, HPSHM_ENOTSUP or HPSHM_ESYS, with err filled.
 */
int hpshm__port_decommit(struct hpshm__port_handle h, uint64_t off, size_t len, hpshm_error *err);
/*
 * Does process pid still map the object behind h?  A process may have exec'd since it took
 * its slot in a resizable segment's table, and then it touches nothing of it any more.  1 yes,
 * 0 no, -1 cannot tell (another user's process, /proc hidden, a system without the facts).
 */
int hpshm__port_process_maps(long long pid, struct hpshm__port_handle h);
/* Make [addr, addr + len) of a mapping readable and writable (writable 1) or inaccessible
 * (0), in this process only.  0, or HPSHM_ESYS with err filled. */
int hpshm__port_protect(void *addr, size_t len, int writable, hpshm_error *err);
/*
 * The lock of the process's list of resizable segments, and the functions the port runs
 * around a fork() (POSIX: pthread_atfork(), installed once however often this is called;
 * Windows has no fork and installs nothing): child runs in the new process before fork()
 * returns there.  0, or an error when the handlers could not be installed.
 */
void hpshm__port_segments_lock(void);
void hpshm__port_segments_unlock(void);
int hpshm__port_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

/* The first line of the process's map of mappings, as the OS shows it, overlapping [addr,
 * addr+size) (size 0: the byte at addr), for error messages that name what holds a range.
 * 0, or HPSHM_EUNAVAILABLE. */
int hpshm__port_maps_line(const void *addr, size_t size, char *buf, size_t len);

/* ---- processes, for the segment header and re-attach ---- */

/*
 * The lowest address, and the coarsest alignment, at which a re-attachable segment is ever
 * mapped: Windows' allocation granularity, and a multiple of every base page size.  Addresses
 * from base_address, from the automatic choice and from tokens all keep to it.
 */
#define HPSHM__ADDRESS_GRANULE ((size_t)65536)

/* A process's start time (in the OS's own unit), so a recycled pid is not taken
 * for the creator; 0 if unknown. */
uint64_t hpshm__port_process_start(long long pid);
/*
 * This process's pid, and in *start its start time as hpshm__port_process_start() says it, read
 * once per process: the value is kept with the pid it was read for, so a process made by
 * fork() reads its own.  What tells a segment's creator from a worker it forked (the owner)
 * with one getpid() and no file read per create and destroy.  *start is 0 if unknown.
 */
long long hpshm__port_self(uint64_t *start);
/* Is pid, started at start, still running?  1 yes, 0 no, -1 cannot tell. */
int hpshm__port_process_alive(long long pid, uint64_t start);
long long hpshm__port_getpid(void);
/* An id unique to this boot, as the OS keeps it.  0, or HPSHM_EIO, or
 * HPSHM_ENOTSUP where the OS has none. */
int hpshm__port_boot_id(char *buf, size_t len);
/* 64 unpredictable bits, for nonces. */
uint64_t hpshm__port_random64(void);

/* A child started by hpshm__port_spawn(). */
struct hpshm__process {
	long long pid;    /* its process id */
	intptr_t  handle; /* the OS's handle to it, owned until hpshm__port_wait() (Windows: a process
			   * HANDLE, which keeps the exit code and the pid from being recycled);
			   * 0 where the OS has none (POSIX: the pid is enough) */
};

/*
 * Start path with argv and envp (NULL: this process's environment, hpshm__port_environ()), and
 * fill *child.  A path without a directory is looked up in PATH (POSIX, as execvp() does;
 * Windows: SearchPath, with ".exe" added when the name has no extension).  A program that
 * cannot be started is an error here, with sys_errno the OS's code (ENOENT, or
 * ERROR_FILE_NOT_FOUND), never a child that exits 127.
 *
 * inherit[0..ninherit) are the OS objects the child keeps and nothing else of the caller's
 * does: descriptors on POSIX (their close-on-exec flag is cleared in the child only),
 * HANDLEs on Windows (passed in PROC_THREAD_ATTRIBUTE_HANDLE_LIST, with the standard
 * handles); the child finds each under the same number.
 *
 * reserve and reserve_len (NULL and 0: none) name a range the child must find free when it
 * attaches a segment there.  On Windows the child is created suspended, the range reserved
 * in it with VirtualAllocEx before its first instruction runs (so neither its DLLs nor its
 * heaps can land there), then resumed; the child gives the range back with
 * hpshm__port_reservation_release() just before it maps.  A range that cannot be reserved (the
 * child's image lies there) is an error and the child is ended.  On POSIX exec replaces the
 * address space, nothing can be placed in it from outside, and the range is ignored.
 */
int hpshm__port_spawn(const char *path, char *const argv[], char *const envp[], const intptr_t *inherit, int ninherit,
		 const void *reserve, size_t reserve_len, struct hpshm__process *child, hpshm_error *err);
/* hpshm__port_spawn_ex()'s flags. */
#define HPSHM__SPAWN_KILL_WITH_PARENT 1u /* the child ends when this process ends (hpshm.h's flag) */
/*
 * hpshm__port_spawn() with flags.  HPSHM__SPAWN_KILL_WITH_PARENT: Windows puts the child, still
 * suspended, in this process's kill-on-close job object; Linux sets PR_SET_PDEATHSIG to
 * SIGKILL in the child before exec (and ends it there if the parent is already gone); other
 * systems answer HPSHM_ENOTSUP before starting anything.
 */
int hpshm__port_spawn_ex(const char *path, char *const argv[], char *const envp[], const intptr_t *inherit,
			 int ninherit, const void *reserve, size_t reserve_len, unsigned flags,
			 struct hpshm__process *child, hpshm_error *err);
/*
 * Windows: in process, a child its caller created suspended, reserve [reserve, reserve+len)
 * as hpshm__port_spawn() does and duplicate handles[0..n) into it (not inheritable there);
 * out[i] is handles[i]'s value in the child.  0, or an error with nothing left in the child.
 * POSIX: HPSHM_ENOTSUP (no process can be prepared from outside before it runs).
 */
int hpshm__port_child_prepare(intptr_t process, const void *reserve, size_t reserve_len, const intptr_t *handles,
			      int n, intptr_t *out, hpshm_error *err);
/* Undo hpshm__port_child_prepare(): out[0..n) closed in process, the range released there. */
void hpshm__port_child_unprepare(intptr_t process, const void *reserve, size_t reserve_len, const intptr_t *out,
				 int n);
/* Wait for a child of hpshm__port_spawn() and release its handle: *status is its exit code, or
 * 128 + the signal that ended it (Windows: an exception code is reported as the signal C
 * raises for it, 0xC0000005 as SIGSEGV). */
int hpshm__port_wait(struct hpshm__process *child, int *status, hpshm_error *err);
/*
 * In a child of hpshm__port_spawn(), release the reservation its parent made at [addr, addr+len),
 * so the segment can be mapped there: 1 released, 2 kept because it is a placeholder the
 * mapping replaces (Windows 10 1803+: no moment in which the range is free), 0 nothing of the
 * kind there (never the case on POSIX).  Only a reservation of exactly that range, with nothing committed in it, is
 * released: whatever else holds the range stays, and the attach then fails naming it.
 */
int hpshm__port_reservation_release(void *addr, size_t len);
/*
 * Let handle survive this process's own exec or CreateProcess with inheritance (POSIX: clear
 * FD_CLOEXEC on the descriptor; Windows: HANDLE_FLAG_INHERIT), for a server that starts its
 * workers itself.  0, or an error.
 */
int hpshm__port_handle_inheritable(intptr_t handle, hpshm_error *err);
/* Undo hpshm__port_handle_inheritable(): handle no longer survives this process's exec or
 * CreateProcess (POSIX: set FD_CLOEXEC; Windows: clear HANDLE_FLAG_INHERIT).  0, or an error. */
int hpshm__port_handle_private(intptr_t handle, hpshm_error *err);
/* This process's environment, NULL-terminated, as hpshm__port_spawn() passes it for envp NULL. */
char **hpshm__port_environ(void);

/* Monotonic clock in nanoseconds. */
uint64_t hpshm__port_now_ns(void);

/* ---- files and the environment ---- */

/* fopen() with the descriptor close-on-exec, through the system call table (so fault
 * injection reaches it).  NULL with errno set. */
FILE *hpshm__port_fopen(const char *path, const char *mode);

/*
 * The trusted getenv: the value of the environment variable name, or NULL when it is unset
 * or when this process runs with privileges its caller lacks (setuid, setgid, file
 * capabilities): such a program must not take memory policy from its caller.
 */
const char *hpshm__port_getenv(const char *name);

/* ---- loadable modules ---- */

/* Any function, as the port hands a module's entry point over (callers cast it back). */
typedef void (*hpshm__port_fn)(void);
/*
 * Load the shared object at path (dlopen; LoadLibraryW on Windows), never to be unloaded, and
 * find the function symbol in it: its address, or NULL with *loaded 0 when the file did not
 * load, 1 when it loaded without the symbol, and why (the loader's own words) filled.
 */
hpshm__port_fn hpshm__port_module_entry(const char *path, const char *symbol, int *loaded, char *why, size_t len);

#endif /* HPSHM_PORT_H */
