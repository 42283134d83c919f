/* SPDX-License-Identifier: MIT */
/*
 * tests/test_threads.c -- what include/hpshm.h says about threads ("Threads"), done by 8
 * threads at once.
 *
 * Every test starts its threads together (a barrier) and has them work on one configuration
 * they share, which nobody changes meanwhile: creating, writing, spawning a child by exec that
 * attaches the segment at the creator's address and writes back, and destroying, on plain
 * pages and (with a pool) on huge pages; named segments while other threads list hpshm's
 * objects and ask the providers what they would do; read-only calls on one segment from every
 * thread.  Each thread checks its own results and records the first failure, which the test
 * thread asserts after joining (a Criterion assertion belongs to the test's own thread).
 *
 * On its own the suite checks the results (no two threads handed one range, every child saw
 * its creator's pattern at its creator's address); scripts/test-tsan.sh runs it under
 * ThreadSanitizer (-DHPSHM_SANITIZE=thread), which fails on any data race in the library.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm/provider.h"
#include "ports/posix/sys.h"
#include "reattach_child.h"

#ifndef HPSHM_REATTACH_CHILD
#error "HPSHM_REATTACH_CHILD must name the built reattach_child program"
#endif

#define NTHREADS 8
#define MIB      ((size_t)1 << 20)

TestSuite(threads, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 240);

/* What one thread is given and what it found. */
struct worker {
	int                 index;      /* 0 .. NTHREADS-1 */
	const hpshm_config *cfg;        /* shared by every thread, changed by none */
	size_t              size;       /* bytes per segment */
	int                 rounds;     /* segments made one after the other */
	int                 spawn;      /* 1: a child attaches each segment */
	size_t              page_size;  /* the page size each segment must have */
	pthread_barrier_t  *start;      /* every thread begins at once */
	int                 done;       /* segments made, checked and destroyed */
	char                why[512];   /* the first failure, empty if none */
};

static void worker_fail(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void worker_fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(w->why, sizeof w->why, fmt, ap);
	va_end(ap);
}

/* The thread's own word at index i: no two threads, rounds or words write the same. */
static uint64_t worker_word(const struct worker *w, int round, size_t i)
{
	return reattach_pattern(i) ^ ((uint64_t)(w->index + 1) << 56) ^ ((uint64_t)(round + 1) << 48);
}

/*
 * A child started by exec attaches the segment (the token in its environment, the descriptor
 * inherited), checks the pattern at the creator's address, writes back in slot 0 and detaches.
 */
static int worker_child(struct worker *w, hpshm_segment *seg)
{
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "check", addr[32], ps[32], slot[] = "0", nslots[] = "1";
	char value[32];
	char *argv[] = { path, mode, addr, ps, slot, nslots, value, NULL };
	uint64_t *words = hpshm_segment_address(seg), want;
	size_t n = hpshm_segment_size(seg) / sizeof *words, at = reattach_slot_word(0, n, 1);
	hpshm_child kid;
	hpshm_error err;
	int rc, status = -1;

	want = 0xc41d000000000000ULL | (uint64_t)(w->index + 1) << 32 | (uint64_t)getpid();
	snprintf(addr, sizeof addr, "%#" PRIxPTR, (uintptr_t)words);
	snprintf(ps, sizeof ps, "%zu", w->page_size);
	snprintf(value, sizeof value, "%#" PRIx64, want);
	for (size_t i = 0; i < n; i++)
		words[i] = reattach_pattern(i);
	rc = hpshm_child_spawn(seg, path, argv, NULL, &kid, &err);
	if (rc < 0) {
		worker_fail(w, "thread %d: hpshm_child_spawn: %s: %s", w->index, hpshm_errname(rc), err.message);
		return -1;
	}
	rc = hpshm_child_wait(&kid, &status, &err);
	if (rc < 0 || status != 0) {
		worker_fail(w, "thread %d: the child that attaches %p exited %d (%s)", w->index, (void *)words, status,
			    rc < 0 ? err.message : "reattach_child's exit codes: tests/reattach_child.h");
		return -1;
	}
	if (words[at] != want) {
		worker_fail(w, "thread %d: the child's write-back is %#" PRIx64 ", want %#" PRIx64, w->index, words[at],
			    want);
		return -1;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->start);
	for (int round = 0; round < w->rounds && !w->why[0]; round++) {
		hpshm_segment *seg = NULL;
		const hpshm_report *r;
		hpshm_error err;
		uint64_t *words;
		size_t n;
		int rc;

		rc = hpshm_segment_create(&seg, w->size, w->cfg, &err);
		if (rc < 0) {
			worker_fail(w, "thread %d, round %d: create: %s: %s", w->index, round, hpshm_errname(rc), err.message);
			break;
		}
		r = hpshm_segment_report(seg);
		if (r->page_size != w->page_size)
			worker_fail(w, "thread %d: page size %zu from %s, want %zu", w->index, r->page_size, r->provider,
				    w->page_size);
		words = hpshm_segment_address(seg);
		n = hpshm_segment_size(seg) / sizeof *words;
		/* Write the thread's own words, let the others run, and read them back: two threads
		 * handed one range would see each other's. */
		for (size_t i = 0; i < n; i++)
			words[i] = worker_word(w, round, i);
		sched_yield();
		for (size_t i = 0; i < n && !w->why[0]; i++)
			if (words[i] != worker_word(w, round, i))
				worker_fail(w, "thread %d: word %zu of its segment at %p was overwritten", w->index, i,
					    (void *)words);
		if (!w->why[0] && w->spawn)
			(void)worker_child(w, seg);
		rc = hpshm_segment_destroy(seg);
		if (rc < 0)
			worker_fail(w, "thread %d: destroy: %s", w->index, hpshm_errname(rc));
		if (!w->why[0])
			w->done++;
	}
	return NULL;
}

/* Run NTHREADS workers on cfg and assert that each made, checked and destroyed every segment. */
static void run_workers(const hpshm_config *cfg, size_t size, size_t page_size, int rounds, int spawn)
{
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];
	pthread_barrier_t start;

	cr_assert_eq(pthread_barrier_init(&start, NULL, NTHREADS), 0);
	memset(w, 0, sizeof w);
	fflush(NULL);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].index = i;
		w[i].cfg = cfg;
		w[i].size = size;
		w[i].rounds = rounds;
		w[i].spawn = spawn;
		w[i].page_size = page_size;
		w[i].start = &start;
		cr_assert_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < NTHREADS; i++) {
		cr_expect_eq(w[i].why[0], '\0', "%s", w[i].why);
		cr_expect_eq(w[i].done, rounds, "thread %d finished %d of %d segments", i, w[i].done, rounds);
	}
}

/* The log callback every thread's creates call at once: it counts, atomically. */
static void count_log(void *user, hpshm_log_level level, const char *msg)
{
	(void)level;
	(void)msg;
	atomic_fetch_add((atomic_int *)user, 1);
}

Test(threads, eight_threads_create_write_and_destroy_plain_segments_on_one_configuration)
{
	hpshm_config *cfg;
	atomic_int logged = 0;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=plain,huge_pages=off");
	hpshm_config_set_log(cfg, count_log, &logged, HPSHM_LOG_INFO);
	run_workers(cfg, MIB + 1, hpshm_base_page_size(), 40, 0);
	/* one line per create and one per destroy, from every thread */
	cr_expect_geq(atomic_load(&logged), 2 * NTHREADS * 40, "%d log lines", atomic_load(&logged));
	hpshm_config_free(cfg);
}

Test(threads, eight_threads_spawn_children_that_attach_their_plain_segments)
{
	hpshm_config *cfg;

	HPT_SKIP_UNDER_EMULATOR("reattach_child runs by exec through the emulator's script, and 8 at once exceed "
				"what qemu-user places at the creators' addresses");
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=plain,huge_pages=off,reattach=exec");
	run_workers(cfg, 256 * 1024, hpshm_base_page_size(), 3, 1);
	hpshm_config_free(cfg);
}

Test(threads, eight_threads_spawn_children_that_attach_their_huge_page_segments)
{
	size_t ps = hpt_default_huge_page_size();
	struct hpt_pool pool;
	char psz[32];
	hpshm_config *cfg;

	HPT_SKIP_UNDER_EMULATOR("reattach_child runs by exec through the emulator's script, and 8 at once exceed "
				"what qemu-user places at the creators' addresses");
	if (ps == 0)
		HPT_UNAVAILABLE("pool", NULL, "the kernel offers no huge page size");
	hpt_size_text(ps, psz, sizeof psz);
	/* one page each (the header is in a companion of base pages), all eight at once */
	if (hpt_pool_read(ps, &pool) < 0 || hpt_pool_available(&pool) < NTHREADS)
		HPT_UNAVAILABLE_PAGES("pool", psz, NTHREADS, "8 threads need %d free %s pages at once", NTHREADS, psz);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "huge_pages=on,reattach=exec,huge_page_size=%s", psz);
	run_workers(cfg, ps, ps, 3, 1);
	hpshm_config_free(cfg);
}

/* A thread that lists hpshm's objects and asks the providers, until the creators are done. */
struct looker {
	atomic_int *stop;    /* set by the test once the workers are joined */
	int         lists;   /* hpshm_objects_list() calls made */
	char        why[256]; /* the first failure, empty if none */
};

static int looked(void *user, const hpshm_object *obj)
{
	(void)user;
	(void)obj;
	return 0;
}

static int planned(void *user, const char *provider, const hpshm_requirement *r)
{
	(void)user;
	(void)provider;
	(void)r;
	return 0;
}

static void *looker_main(void *arg)
{
	struct looker *l = arg;
	char reason[HPSHM_TEXT_MAX];
	hpshm_error err;
	size_t ps;
	int rc;

	while (!atomic_load(l->stop)) {
		rc = hpshm_objects_list(looked, NULL, &err);
		if (rc < 0 && !l->why[0])
			snprintf(l->why, sizeof l->why, "hpshm_objects_list: %s: %.200s", hpshm_errname(rc), err.message);
		l->lists++;
		for (unsigned i = 0; hpshm_provider_name(i, NULL); i++)
			(void)hpshm_provider_probe(hpshm_provider_name(i, NULL), MIB, NULL, &ps, reason, sizeof reason);
		(void)hpshm_requirements(4 * MIB, 0, NULL, planned, NULL, &err);
	}
	return NULL;
}

/* Named segments: each thread's names are its own (this process's pid, the thread, the round). */
struct named {
	struct worker w;    /* as for the unnamed ones */
	hpshm_config *cfg;  /* this thread's: its own name */
};

static void *named_main(void *arg)
{
	struct named *n = arg;
	struct worker *w = &n->w;

	pthread_barrier_wait(w->start);
	for (int round = 0; round < w->rounds && !w->why[0]; round++) {
		hpshm_segment *seg = NULL;
		hpshm_error err;
		char name[64];
		int rc;

		snprintf(name, sizeof name, "hpt-threads-%ld-%d-%d", (long)getpid(), w->index, round);
		rc = hpshm_config_set(n->cfg, "name", name, &err);
		if (rc == 0)
			rc = hpshm_segment_create(&seg, w->size, n->cfg, &err);
		if (rc < 0) {
			worker_fail(w, "thread %d: named create %s: %s: %s", w->index, name, hpshm_errname(rc), err.message);
			break;
		}
		memset(hpshm_segment_address(seg), w->index + 1, hpshm_segment_size(seg));
		rc = hpshm_segment_destroy(seg);
		if (rc < 0)
			worker_fail(w, "thread %d: destroy of %s: %s", w->index, name, hpshm_errname(rc));
		else
			w->done++;
	}
	return NULL;
}

Test(threads, eight_threads_create_named_segments_while_others_list_probe_and_plan)
{
	struct named n[NTHREADS];
	struct looker look[2];
	pthread_t t[NTHREADS], lt[2];
	pthread_barrier_t start;
	atomic_int stop = 0;
	const int rounds = 20;

	cr_assert_eq(pthread_barrier_init(&start, NULL, NTHREADS), 0);
	memset(n, 0, sizeof n);
	memset(look, 0, sizeof look);
	for (int i = 0; i < 2; i++) {
		look[i].stop = &stop;
		cr_assert_eq(pthread_create(&lt[i], NULL, looker_main, &look[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		cr_assert_eq(hpshm_config_new(&n[i].cfg), 0);
		hpt_config_parsef(n[i].cfg, "provider=plain,huge_pages=off");
		n[i].w.index = i;
		n[i].w.size = 64 * 1024;
		n[i].w.rounds = rounds;
		n[i].w.start = &start;
		cr_assert_eq(pthread_create(&t[i], NULL, named_main, &n[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(pthread_join(lt[i], NULL), 0);
		cr_expect_eq(look[i].why[0], '\0', "%s", look[i].why);
		cr_expect_gt(look[i].lists, 0);
	}
	pthread_barrier_destroy(&start);
	for (int i = 0; i < NTHREADS; i++) {
		cr_expect_eq(n[i].w.why[0], '\0', "%s", n[i].w.why);
		cr_expect_eq(n[i].w.done, rounds, "thread %d finished %d of %d named segments", i, n[i].w.done, rounds);
		hpshm_config_free(n[i].cfg);
	}
}

/* Every thread reads one segment's facts and token at once. */
struct reader {
	const hpshm_segment *seg;       /* shared */
	pthread_barrier_t   *start;     /* every thread begins at once */
	char                 want[HPSHM_TOKEN_MAX]; /* the token the test thread got */
	char                 why[256];  /* the first failure, empty if none */
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char tok[HPSHM_TOKEN_MAX], line[HPSHM_MESSAGE_MAX];
	hpshm_error err;

	pthread_barrier_wait(r->start);
	for (int i = 0; i < 200 && !r->why[0]; i++) {
		if (hpshm_segment_token(r->seg, tok, sizeof tok, &err) < 0 || strcmp(tok, r->want) != 0)
			snprintf(r->why, sizeof r->why, "token %.70s, want %.70s (%.70s)", tok, r->want, err.message);
		if (!hpshm_segment_address(r->seg) || hpshm_segment_size(r->seg) == 0 || !hpshm_segment_is_owner(r->seg))
			snprintf(r->why, sizeof r->why, "the segment's address, size or owner changed");
		(void)hpshm_report_format(hpshm_segment_report(r->seg), line, sizeof line);
	}
	return NULL;
}

Test(threads, eight_threads_read_one_segment_at_once)
{
	struct reader r[NTHREADS];
	pthread_t t[NTHREADS];
	pthread_barrier_t start;
	hpshm_segment *seg;
	hpshm_config *cfg;
	hpshm_error err;
	char tok[HPSHM_TOKEN_MAX];

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=plain,huge_pages=off,reattach=exec");
	cr_assert_eq(hpshm_segment_create(&seg, MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, tok, sizeof tok, &err), 0, "%s", err.message);
	cr_assert_eq(pthread_barrier_init(&start, NULL, NTHREADS), 0);
	memset(r, 0, sizeof r);
	for (int i = 0; i < NTHREADS; i++) {
		r[i].seg = seg;
		r[i].start = &start;
		snprintf(r[i].want, sizeof r[i].want, "%s", tok);
		cr_assert_eq(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		cr_assert_eq(pthread_join(t[i], NULL), 0);
		cr_expect_eq(r[i].why[0], '\0', "%s", r[i].why);
	}
	pthread_barrier_destroy(&start);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

/*
 * Something else in the process maps in the range the core chose, after the choice and before
 * the segment is mapped there (another thread's malloc arena, a library loaded): the first
 * mapping at a fixed address meets a foreign one, as a thread that is not hpshm's would leave
 * it.  The core must choose again rather than fail with HPSHM_EEXIST.
 */
static void *intruder = MAP_FAILED; /* the foreign mapping */
static size_t intruder_len;         /* its length */

static void *intrude_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (addr && (flags & MAP_FIXED_NOREPLACE) && intruder == MAP_FAILED) {
		intruder = mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		intruder_len = len;
	}
	return mmap(addr, len, prot, flags, fd, off);
}

Test(threads, a_chosen_range_something_else_maps_first_is_chosen_again)
{
	hpshm_segment *seg = NULL;
	hpshm_config *cfg;
	hpshm_error err;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=plain,huge_pages=off,reattach=exec");
	hpshm__posix_sys.mmap = intrude_mmap;
	rc = hpshm_segment_create(&seg, MIB, cfg, &err);
	hpshm__posix_sys_reset();
	hpt_skip_emulated_refusal(rc, &err);
	cr_assert_neq(intruder, MAP_FAILED, "no mapping at a fixed address was made, or the intruder could not be placed");
	cr_expect_eq(rc, 0, "create after a foreign mapping took the chosen range: %s: %s", hpshm_errname(rc), err.message);
	if (rc == 0) {
		cr_expect_neq(hpshm_segment_address(seg), intruder, "mapped over the foreign mapping");
		cr_expect_eq(hpshm_segment_destroy(seg), 0);
	}
	cr_assert_eq(munmap(intruder, intruder_len), 0);
	intruder = MAP_FAILED;
	hpshm_config_free(cfg);
}
