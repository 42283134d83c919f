/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/posix.h -- what ports/posix/ offers the OS folders beside it (ports/linux/) and its
 * own per-concern fallbacks (populate_touch.c, address.c, identity.c), so each OS writes only
 * what it does differently.
 *
 * Internal to ports/: neither the core nor the backends include it.  Everything here is
 * POSIX.1-2008 and compiles with _POSIX_C_SOURCE=200809L alone.
 */
#ifndef HPSHM_PORTS_POSIX_POSIX_H
#define HPSHM_PORTS_POSIX_POSIX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * 64 unpredictable bits the POSIX way: from /dev/urandom, or, where it cannot be read (a
 * chroot, a sandbox), mixed from the clock and the pid: a nonce needs to be unlikely to
 * repeat, not secret.  An OS with a system call for it (Linux getrandom) tries that first.
 */
uint64_t hpshm__posix_random64(void);

/*
 * Touch every page of [addr, addr+len), step bytes apart, reading each byte and writing it
 * back unchanged, under a SIGBUS handler that turns a page the kernel cannot supply into an
 * error: 0; 1 with *bad the offset that raised SIGBUS; or -1 with errno set if the handler
 * could not be installed.  The last resort of every populate: an OS with a call that fails
 * cleanly (Linux fallocate, MADV_POPULATE_WRITE) uses that first.
 */
int hpshm__posix_touch(void *addr, size_t len, size_t step, size_t *bad);
/*
 * The same touch spread over threads: hpshm__posix_touch_begin() installs the handler (0, or
 * -1 with errno) and holds it for this process until hpshm__posix_touch_end(); in between,
 * any thread may touch a range with hpshm__posix_touch_range(), which returns as
 * hpshm__posix_touch() does, and stops early (0, *bad where it stopped) once *stop is set
 * (stop may be NULL).
 */
int  hpshm__posix_touch_begin(void);
int  hpshm__posix_touch_range(void *addr, size_t len, size_t step, atomic_int *stop, size_t *bad);
void hpshm__posix_touch_end(void);

/*
 * Run fn(arg, i) for every i in [0, n): i = 0 in the calling thread, the others each in a
 * thread of its own, and return when all have.  A thread that cannot be started costs only
 * parallelism: its part then runs in the calling thread, after its own.
 */
void hpshm__posix_parallel(unsigned n, void (*fn)(void *arg, unsigned i), void *arg);

/*
 * One part of a populate split over threads (ports/posix/populate_split.c): the whole-page
 * range [off, off + len) of the segment that part i of n covers.
 */
void hpshm__posix_split(size_t len, size_t page_size, unsigned n, unsigned i, size_t *off, size_t *part);

/*
 * A free, aligned range of len bytes for a segment a child will map at the same address: a
 * span of len + align is reserved with mmap(hint, span, PROT_NONE, flags, fd, 0), aligned,
 * and given back.  The hints are tried best first -- 96 TiB on 64-bit systems (80 TiB where
 * that is taken, as a sanitizer's allocator takes it), 256 GiB for 39-bit ones, 256 MiB for
 * 32-bit processes, each far from where the system puts a fresh process's libraries -- and one
 * the system does not honour exactly is passed over; when none is, the system's own choice is
 * used.  flags and fd are the OS's way to reserve without
 * committing memory (Linux: MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE and -1; POSIX alone:
 * MAP_PRIVATE over /dev/zero).  busy, when not NULL, is asked first whether the OS shows a
 * hint's span as taken although mmap() might still place a reservation there (an emulator
 * that keeps a range of the guest for itself: qemu-i386 reserves most of the low 1 GiB for
 * the program's heap, gives a hint inside it out, and then refuses a SysV attach there);
 * such a hint is passed over too.  0 with *out set, or HPSHM_ENOMEM.
 */
int hpshm__posix_pick_address(size_t len, size_t align, int flags, int fd, int (*busy)(uintptr_t at, size_t len),
			      void **out);

/*
 * Ending a child with its parent (hpshm__port_spawn_ex()'s HPSHM__SPAWN_KILL_WITH_PARENT), which
 * only some systems can do: ports/linux/process.c with PR_SET_PDEATHSIG, the fallback
 * ports/posix/parent_none.c not at all.  hpshm__posix_can_end_with_parent(): 1 or 0, asked
 * before the fork.  hpshm__posix_end_with_parent(): called in the child between fork and
 * exec (async-signal-safe), parent the pid the parent had before the fork: 0, or -1 with errno
 * set; a child whose parent is already gone never returns.
 */
int hpshm__posix_can_end_with_parent(void);
int hpshm__posix_end_with_parent(pid_t parent);

#endif /* HPSHM_PORTS_POSIX_POSIX_H */
