/* SPDX-License-Identifier: MIT */
/*
 * bench/os.h -- the seam between the bench and the system it runs on.
 *
 * Everything the bench does that POSIX and Windows do differently sits behind this header,
 * implemented twice: bench/worker_posix.c and bench/memory_posix.c (fork, socketpair, POSIX
 * threads, signals, mmap, memfd, THP) and bench/worker_windows.c and bench/memory_windows.c
 * (CreateProcessW, named pipes, Win32 threads, the console control handler, VirtualAlloc,
 * CreateFileMappingW).  The files above the seam (run.c and the controller's files of run.h,
 * worker.c, memory.c, workload.c, output.c) are ISO C and include no system header beyond
 * the C library, so a workload, a group or an output format is written once and runs the
 * same on every system.
 *
 * A channel is the controller's line to one worker: a stream that carries the fixed-size
 * commands and replies of worker.c, both ways.  It is an intptr_t so the header names no
 * system type: a socket descriptor on POSIX, a pipe HANDLE on Windows, BENCH_OS_NONE (bench.h)
 * for none.  Messages are always sent and received whole: a short read is the worker's end.
 */
#ifndef HPSHM_BENCH_OS_H
#define HPSHM_BENCH_OS_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

/* ---- what a worker serves: worker.c's loop, in a thread or in a spawned process ---------- */

/* Where a worker's memory is and how it gets there. */
struct bench_view {
	intptr_t       chan;       /* the worker's end of its channel */
	unsigned char *addr;       /* the region (after attach, for spawned workers) */
	size_t         size;       /* bytes the workloads use */
	size_t         len;        /* bytes mapped: attach touches them all */
	intptr_t       raw;        /* spawned raw worker: the memfd or section to map, else BENCH_OS_NONE */
	int            use_hpshm;  /* spawned hpshm worker: attach by token */
	hpshm_segment *seg;        /* the attached segment */
	unsigned       raw_flags;  /* how to map raw: BENCH_RAW_LARGE for a large-page view, BENCH_RAW_SHMID for shmat() */
	void          *raw_view;   /* the raw mapping a spawned worker made, to let go at exit */
};

/* worker.c: serve commands until EXIT or end of file; map: 1 in a spawned worker. */
void bench_worker_serve(struct bench_view *v, int map);
/* worker.c: the arguments of a spawned worker, NULL-terminated, in a static buffer. */
char **bench_worker_argv(const char *self_exe, const struct bench_region *r, intptr_t chan_arg,
			 intptr_t raw_arg, long long parent);

/* ---- clocks, the stop flag, the process ---------------------------------------------------- */

/* Catch Ctrl-C and the termination requests: they set bench_stop, nothing else. */
void bench_os_stop_catch(void);
/* Give them back to what was there before. */
void bench_os_stop_release(void);
/* What cannot run on this system at all, one sentence for the output; "" where all can. */
const char *bench_os_left_out(void);
/* What hpshm's populate does here, a few words for a table's title: "fallocate + madvise". */
const char *bench_os_populate_how(void);
/* How raw x1 populates: as a program writes it by hand, a few words for its row's note. */
const char *bench_os_by_hand(void);
/* Why this system's figures do not say what a real one would (the bench runs under an
 * emulator), one sentence for the output; "" where they do. */
const char *bench_os_caveat(void);
/* Why fork workers cannot be had here, or NULL where they can. */
const char *bench_os_no_fork(void);
/* May this process resize a huge page pool (--reserve)?  0, or -1 with why. */
int bench_os_pool_writable(char *why, size_t len);

/* ---- address slots: where the members of a group are mapped -------------------------------- */

/*
 * Reserve n slots of slot_len bytes each, the first on a boundary of align, back to back,
 * and store their addresses in slot[].  0, or -1 with why.  A slot is opened (its
 * reservation given up) just before a region is mapped there and closed (reserved again)
 * after the region is gone; a slot that cannot be reserved again becomes NULL, and regions
 * there go where the system puts them.
 */
int  bench_os_slots_reserve(unsigned char **slot, unsigned n, size_t slot_len, size_t align, char *why, size_t len);
void bench_os_slot_open(unsigned char *slot, size_t slot_len);
int  bench_os_slot_close(unsigned char *slot, size_t slot_len);
/* Give up every slot still reserved. */
void bench_os_slots_free(unsigned char **slot, unsigned n, size_t slot_len);

/* ---- channels and workers ------------------------------------------------------------------ */

/* Send n bytes whole: 0, or -1 if the other end is gone. */
int  bench_os_chan_send(intptr_t chan, const void *buf, size_t n);
/* Receive n bytes whole: n, 0 at the other end's close (or a short message), -1 on an error
 * or when bench_stop interrupted the wait. */
long bench_os_chan_recv(intptr_t chan, void *buf, size_t n);
void bench_os_chan_close(intptr_t chan);
/* A spawned worker's end, from the --chan argument its controller gave (parent: its pid). */
intptr_t bench_os_chan_open(uint64_t arg, long long parent);

/* Start worker w over r the way c says (spawn, fork or thread): 0, or -1 with why. */
int  bench_os_worker_start(struct bench_worker *w, const struct bench_config *c, const struct bench_region *r,
			   const char *self_exe, char *why, size_t len);
/* Worker w (number i) did not answer: say how it ended, reaping it if it did. */
void bench_os_worker_gone(struct bench_worker *w, unsigned i, char *why, size_t len);
/* Wait for w to end until deadline (bench_wall_ns()), then kill it; join a thread. */
void bench_os_worker_reap(struct bench_worker *w, uint64_t deadline_ns);
/* A spawned worker's first act: die with the controller, leave Ctrl-C to it.  0, or -1. */
int  bench_os_worker_setup(long long parent, uint64_t parent_start);
/* A spawned raw worker: map v->raw at v->addr.  0, or -1 with msg. */
int  bench_os_raw_map(struct bench_view *v, char *msg, size_t len);
/* ... and let it go again. */
void bench_os_raw_unmap(struct bench_view *v);

/* ---- memory: the raw peer and THP ---------------------------------------------------------- */

/*
 * The raw peer of an hpshm configuration of provider: its kind and its row's label.  NULL,
 * or why it cannot run with workers started as start.
 */
const char *bench_os_raw_peer(const char *provider, enum bench_start start, enum bench_kind *kind, char *label,
			      size_t label_len);
/* Create the raw peer's memory (c->kind) and populate it: 0, or -1 with why. */
int  bench_os_raw_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
			 size_t len);
/* THP's memory: 0, or -1 with why (never called where bench_thp_mode() said no). */
int  bench_os_thp_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
			 size_t len);
/*
 * --reserve: make shared THP usable for the run (shmem_enabled "advise") where the system
 * has it switched off.  0 with prev holding what to put back ("" when nothing changed), or
 * -1 with why.  bench_os_thp_restore() puts prev back; 0, or -1 with why.
 */
int  bench_os_thp_advise(char *prev, size_t prev_len, char *why, size_t len);
int  bench_os_thp_restore(const char *prev, char *why, size_t len);
/*
 * Run fn(arg, i) for i in [0, n): i = 0 in the calling thread, the others in threads of
 * their own, all joined before it returns (one done in the caller when a thread cannot be
 * had).  The raw calls' populate and the limit split their work with it, as hpshm does.
 */
#define BENCH_THREADS_MAX 64
void bench_os_parallel(unsigned n, void (*fn)(void *arg, unsigned i), void *arg);
/* Release a raw or THP region: 0, or -1 if the system refused. */
int  bench_os_region_release(struct bench_region *r);
/*
 * Give the pages of the n regions addr[i] (len[i] bytes, alive together, all of pages of
 * `page` bytes, 0 for base pages) back to the system and fault them in again, a few at a
 * time from each in turn (the order drawn afresh for every step from seed), so that they are
 * drawn from the same free memory or pool, mixed, and placed alike (group.c).  0; -1 with
 * why where the system cannot, every region whole again (its contents gone); -2 with why
 * where what was given back could not all be faulted in again (a pool another program took
 * from meanwhile): a huge page region then has holes, which fault at the first touch.
 */
int  bench_os_mix(unsigned char *const *addr, const size_t *len, unsigned n, size_t page, uint64_t seed, char *why,
		  size_t why_len);

/* ---- the resize rows (resize.c): the raw calls, and a process that attached by fork() ---- */

/*
 * The raw calls of a resizable region (resize_posix.c says which): max bytes reserved and
 * mapped without their pages, the first size bytes allocated and accessible, at page_size
 * (0: base pages).  grow allocates and opens [r->size, to), shrink closes [to, r->size) and
 * gives its pages back; both set r->size.  0, or -1 with why.  bench_os_region_release()
 * lets it go.
 */
int  bench_os_rs_create(size_t page_size, size_t size, size_t max, struct bench_region *r, char *why, size_t len);
int  bench_os_rs_grow(struct bench_region *r, size_t to, char *why, size_t len);
int  bench_os_rs_shrink(struct bench_region *r, size_t to, char *why, size_t len);
/*
 * Run fn(arg, out, n) in a child made by fork() (it inherits this process's segments, and
 * hpshm's fork handler registers it in the resizable ones) and bring its n figures back into
 * out.  0, or -1 with why (no fork here, or the child failed).
 */
int  bench_os_forked(void (*fn)(void *arg, double *out, unsigned n), void *arg, double *out, unsigned n, char *why,
		     size_t len);

#endif /* HPSHM_BENCH_OS_H */
