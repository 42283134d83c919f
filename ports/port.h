/* SPDX-License-Identifier: MIT */
/*
 * ports/port.h -- what the core and the backends ask of the OS, in OS-neutral terms.
 *
 * Internal: not installed.  No OS header is included here, so core/ stays free of them.
 * Each OS implements these in ports/<os>/: ports/posix/ holds what POSIX.1-2008 alone can do,
 * and an OS folder beside it (ports/linux/) what needs that OS, or does it better there; CMake
 * builds one implementation of each function.  Where a fact does not exist on an OS the
 * function returns 0 items, HPSHM_EUNAVAILABLE or HPSHM_ENOTSUP, and says so in text.
 *
 * The port is a leaf above base/: it never includes core/, backends/, tools/ or bench/, nor
 * the provider interface.  OS facts beyond this contract are in the OS's own header
 * (ports/linux/linux.h), for that OS's backends, and in ports/introspect.h for the tool.
 */
#ifndef HPSHM_PORT_H
#define HPSHM_PORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"

#define HPSHM__MAX_PAGE_SIZES 8 /* huge page sizes an OS offers: Linux x86 2, arm64 4, ppc64 3 */

/* ---- pages ---- */

/* The base page size (sysconf). */
size_t hpshm__base_page_size(void);
/* The huge page sizes the OS offers, ascending.  Returns the count (0: none). */
int hpshm__huge_page_sizes(size_t *out, int max);
/* The size the OS uses for huge pages when none is named (Linux: Hugepagesize), 0 if none. */
size_t hpshm__default_huge_page_size(void);

/* Backing of a mapping as the kernel reports it. */
struct hpshm__backing {
	size_t page_size;       /* KernelPageSize, or f_bsize on hugetlbfs */
	int    huge;            /* hugetlb VMA (VmFlags ht) or hugetlbfs descriptor */
	char   source[32];      /* "smaps", "fstatfs", or "unverified" */
};

/* What backs [addr, addr+len): from the descriptor if fd >= 0, then from the mapping itself.
 * 0, or HPSHM_EUNAVAILABLE when the OS says nothing (out->source is then "unverified"). */
int hpshm__verify_backing(void *addr, size_t len, int fd, struct hpshm__backing *out);

/*
 * Fault every page of a mapping in, never raising SIGBUS: fallocate on fd (if >= 0), then
 * MADV_POPULATE_WRITE; a guarded touch only where the kernel has neither.  *methods gets the
 * HPSHM_POPULATE_* bits used.  Returns 0, or HPSHM_EPOPULATE with err filled (the mapping is
 * left as it was, for the caller to destroy).
 */
int hpshm__populate(void *addr, size_t len, size_t page_size, int fd, unsigned *methods, hpshm_error *err);

/* ---- addresses ---- */

/*
 * An address for a re-attachable segment: len bytes aligned to align, free in this process
 * now, and far from where the kernel puts ordinary mappings (libraries, heaps, thread
 * stacks), so that a freshly exec'd child is very unlikely to have anything there when it
 * attaches.  0, or an error.
 */
int hpshm__pick_address(size_t len, size_t align, void **out);

/*
 * The address lock, one per process.  hpshm__pick_address() finds a range free now and keeps
 * nothing, so two threads creating at once would be handed the same range and one would fail
 * to map there: the core holds this lock from choosing a segment's address until the segment
 * and its header's companion are mapped.  Another thread may wait meanwhile (a blocking lock,
 * not a spin: a create may take a while on some systems).  Not recursive.
 */
void hpshm__address_lock(void);
void hpshm__address_unlock(void);

/* The first line of the process's map (/proc/self/maps on Linux) overlapping [addr,
 * addr+size) (size 0: the byte at addr), for error messages that name what holds a range.
 * 0, or HPSHM_EUNAVAILABLE. */
int hpshm__maps_line(const void *addr, size_t size, char *buf, size_t len);

/* ---- processes, for the segment header and re-attach ---- */

/*
 * The lowest address, and the coarsest alignment, at which a re-attachable segment is ever
 * mapped: Windows' allocation granularity, and a multiple of every base page size.  Addresses
 * from base_address, from the automatic choice and from tokens all keep to it.
 */
#define HPSHM__ADDRESS_GRANULE ((size_t)65536)

/* A process's start time (clock ticks since boot on Linux), so a recycled pid is not taken
 * for the creator; 0 if unknown. */
uint64_t hpshm__process_start(long long pid);
/*
 * This process's pid, and in *start its start time as hpshm__process_start() says it, read
 * once per process: the value is kept with the pid it was read for, so a process made by
 * fork() reads its own.  What tells a segment's creator from a worker it forked (the owner)
 * with one getpid() and no file read per create and destroy.  *start is 0 if unknown.
 */
long long hpshm__self(uint64_t *start);
/* Is pid, started at start, still running?  1 yes, 0 no, -1 cannot tell. */
int hpshm__process_alive(long long pid, uint64_t start);
long long hpshm__getpid(void);
/* An id unique to this boot (Linux: /proc/sys/kernel/random/boot_id).  0, or HPSHM_EIO, or
 * HPSHM_ENOTSUP where the OS has none. */
int hpshm__boot_id(char *buf, size_t len);
/* 64 unpredictable bits, for nonces. */
uint64_t hpshm__random64(void);

/* A child started by hpshm__spawn(). */
struct hpshm__process {
	long long pid;    /* its process id */
	intptr_t  handle; /* the OS's handle to it, owned until hpshm__wait() (Windows: a process
			   * HANDLE, which keeps the exit code and the pid from being recycled);
			   * 0 where the OS has none (POSIX: the pid is enough) */
};

/*
 * Start path with argv and envp (NULL: this process's environment, hpshm__environ()), and
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
 * hpshm__reservation_release() just before it maps.  A range that cannot be reserved (the
 * child's image lies there) is an error and the child is ended.  On POSIX exec replaces the
 * address space, nothing can be placed in it from outside, and the range is ignored.
 */
int hpshm__spawn(const char *path, char *const argv[], char *const envp[], const intptr_t *inherit, int ninherit,
		 const void *reserve, size_t reserve_len, struct hpshm__process *child, hpshm_error *err);
/* Wait for a child of hpshm__spawn() and release its handle: *status is its exit code, or
 * 128 + the signal that ended it (Windows: an exception code is reported as the signal C
 * raises for it, 0xC0000005 as SIGSEGV). */
int hpshm__wait(struct hpshm__process *child, int *status, hpshm_error *err);
/*
 * In a child of hpshm__spawn(), release the reservation its parent made at [addr, addr+len),
 * so the segment can be mapped there: 1 released, 0 nothing of the kind there (never the
 * case on POSIX).  Only a reservation of exactly that range, with nothing committed in it, is
 * released: whatever else holds the range stays, and the attach then fails naming it.
 */
int hpshm__reservation_release(void *addr, size_t len);
/*
 * Let handle survive this process's own exec or CreateProcess with inheritance (POSIX: clear
 * FD_CLOEXEC on the descriptor; Windows: HANDLE_FLAG_INHERIT), for a server that starts its
 * workers itself.  0, or an error.
 */
int hpshm__handle_inheritable(intptr_t handle, hpshm_error *err);
/* Undo hpshm__handle_inheritable(): handle no longer survives this process's exec or
 * CreateProcess (POSIX: set FD_CLOEXEC; Windows: clear HANDLE_FLAG_INHERIT).  0, or an error. */
int hpshm__handle_private(intptr_t handle, hpshm_error *err);
/* This process's environment, NULL-terminated, as hpshm__spawn() passes it for envp NULL. */
char **hpshm__environ(void);

/* Monotonic clock in nanoseconds. */
uint64_t hpshm__now_ns(void);

/* ---- files and the environment ---- */

/* fopen() with the descriptor close-on-exec, through the system call table (so fault
 * injection reaches it).  NULL with errno set. */
FILE *hpshm__fopen(const char *path, const char *mode);

/*
 * The trusted getenv: the value of the environment variable name, or NULL when it is unset
 * or when this process runs with privileges its caller lacks (setuid, setgid, file
 * capabilities): such a program must not take memory policy from its caller.
 */
const char *hpshm__getenv(const char *name);

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
