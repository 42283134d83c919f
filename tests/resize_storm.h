/* SPDX-License-Identifier: MIT */
/*
 * tests/resize_storm.h -- the creator and the reader of test_resize_crash's kill storms
 * (resize_storm.c), and the log they share with the test.
 */
#ifndef HPSHM_TESTS_RESIZE_STORM_H
#define HPSHM_TESTS_RESIZE_STORM_H

#include <stddef.h>
#include <stdint.h>

#include "hpshm.h"

/* What a creator writes in the first word of page i of its segment: a page holds it or 0. */
#define RSTORM_STAMP(i)   (UINT64_C(0x5a24000000000000) ^ (uint64_t)(i))
/* The reader syncs before one loop in so many, and only reads in the others. */
#define RSTORM_SYNC_EVERY 4
/* The most pages a storm's segment has (a reader's table of pages it saw stamped). */
#define RSTORM_MAX_PAGES  64

/* How a reader ends, as its exit status: 0 when told to stop, else one of these. */
enum {
	RSTORM_EOPEN  = 2, /* its open or attach failed */
	RSTORM_ESYNC  = 3, /* its sync failed */
	RSTORM_ESIZE  = 4, /* its size is not whole pages up to max_size */
	RSTORM_ESTAMP = 5, /* a page holds neither zero nor its stamp */
	RSTORM_ELOST  = 6  /* a page it saw stamped since its sync reads zero: given back under it */
};

/* A kind of resizable named segment. */
struct rstorm_kind {
	const char *provider;  /* plain or hugetlbfs */
	size_t      page;      /* its page size */
	unsigned    max_pages; /* max_size in pages */
};

/* Shared (MAP_SHARED anonymous) between the test and its children; volatile, as they race. */
struct rstorm_log {
	volatile size_t        done;        /* the size the last resize returned with (the first at create) */
	volatile size_t        target;      /* the size asked of the resize in progress; done between calls */
	volatile int           created;     /* 1 once the creator's segment exists and is stamped */
	volatile int           rc;          /* a creator's or reader's failed call: its code */
	volatile int           died_mode;   /* points: the fallocate mode the creator died at, -1 none */
	volatile unsigned long resizes;     /* resizes the creator finished */
	volatile int           reader_open; /* the reader has the segment open */
	volatile int           reader_stop; /* the test tells the reader to detach and exit */
	volatile unsigned long reads;       /* the reader's loops that synced first, then read every page */
	volatile size_t        reader_size; /* the size the reader's last loop synced to */
	int                    spawn_fd;    /* set by the test: the pipe a creator's exec'd reader writes on, -1 none */
	volatile long          kid;         /* the pid of the reader the creator started by exec, 0 before */
	char                   msg[256];    /* a failed call's message, cut to fit */
	char                   table[768];  /* the creator's log lines about its table of processes
					     * (a slot freed, and why), the last ones that fit */
};

/* The log, in memory the test maps MAP_SHARED before it forks. */
extern struct rstorm_log *rlog;

/* Where a creator kills itself: before or after its at-th fallocate once created (a grow's
 * commit, a shrink's PUNCH_HOLE), after its at-th resize; after its last step in any case. */
enum rstorm_point { RSTORM_NONE, RSTORM_BEFORE_FALLOCATE, RSTORM_AFTER_FALLOCATE, RSTORM_AFTER_RESIZE };

/* xorshift64*: the next number from *state (not 0). */
static inline uint64_t rstorm_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

/* plain on base pages, 64 of them at most: always there. */
struct rstorm_kind rstorm_plain(void);
/* hugetlbfs on 2 MiB pages, 8 at most; a skip (a failure under HPSHM_TEST_REQUIRE) with the
 * reason when the pool or a mount is missing.  For tests (cr_* calls). */
struct rstorm_kind rstorm_huge(void);

/* Map the log (rlog) shared, once, and zero it for a round: no spawn_fd, no death yet. */
void rstorm_log_reset(void);
/* Where a listed object's file is (plain's ids are shm_open() names, under /dev/shm): buf. */
const char *rstorm_object_path(const hpshm_object *o, char *buf, size_t len);
/*
 * How long the storms wait for a process of theirs to get on (a creator to create, a reader to
 * read or write) before they call it stuck.  A bound on a hang, not a judge of speed: under
 * qemu-user, beside another lane of CI, a process that exec's and attaches can take seconds.
 */
#define RSTORM_PATIENCE_S 30

/* The next size an exec'd reader wrote on fd: 1, or 0 at EOF or after RSTORM_PATIENCE_S. */
int rstorm_next_size(int fd, uint64_t *size);

/* What rstorm_config() adds to a kind's configuration. */
enum { RSTORM_CFG_MAX = 1, RSTORM_CFG_EXEC = 2 }; /* max_size, reattach=exec */

/* The configuration of a segment of kind k named name, with what flags add; NULL on error. */
hpshm_config *rstorm_config(const struct rstorm_kind *k, const char *name, unsigned flags);

/*
 * In a forked child: create the segment at a random size (from seed), stamp it, start
 * reattach_child resize-read by exec (hpshm_child_spawn()) when the log has a spawn_fd, log it
 * as created, then resize it to random sizes and stamp what it gains, logging each size before
 * and after the call: steps times and then die of SIGKILL, or (steps 0) until killed.
 * Exits 2 (create failed), 3 (a resize failed) or 4 (the spawn failed) with the code and
 * message in the log.
 */
void rstorm_creator(const struct rstorm_kind *k, const char *name, uint64_t seed, unsigned steps,
		    enum rstorm_point point, unsigned at) __attribute__((noreturn));

/*
 * In a forked child: open the segment by name, then loop (rstorm_read_loop(), syncing one
 * loop in RSTORM_SYNC_EVERY) until the log says stop; detach and exit 0, or exit with an
 * RSTORM_E* code (the page in the log's rc for RSTORM_ELOST, the call's code and message
 * for the others).
 */
void rstorm_reader(const struct rstorm_kind *k, const char *name) __attribute__((noreturn));

/* 0, or the offset + 1 of the first page whose first word is neither 0 nor its stamp (resize_read.c). */
size_t rstorm_check_pages(const volatile uint64_t *base, size_t size, size_t page);

/*
 * One loop of a reader (resize_read.c): hpshm_segment_sync() first when sync is set, then the
 * size and word 0 of every page checked.  stamped[RSTORM_MAX_PAGES] holds, from one loop to
 * the next, the pages seen stamped since the last sync (which forgets them).  0, or an
 * RSTORM_E* code (RSTORM_ELOST sets *bad_page, RSTORM_ESYNC fills err); a read that faults
 * kills the process.
 */
int rstorm_read_loop(hpshm_segment *seg, size_t page, unsigned char *stamped, int sync, int *bad_page,
		     hpshm_error *err);

/* rstorm_check_pages() under a SIGSEGV/SIGBUS guard: 0, or -1 with why (a fault names its
 * signal and offset) for a test that must not crash on a fault. */
int rstorm_guarded_check(const volatile uint64_t *base, size_t size, size_t page, char *why, size_t len);

#endif /* HPSHM_TESTS_RESIZE_STORM_H */
