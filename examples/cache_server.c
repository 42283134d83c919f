/* SPDX-License-Identifier: MIT */
/*
 * examples/cache_server.c -- a cache whose segment grows under load, in place, while its
 * workers keep reading it.
 *
 *     ./cache_server [--size SIZE] [--max-size SIZE] [--step SIZE] [--workers N] [--config KV]
 *     ./cache_server --size 64MiB --max-size 512MiB --step 64MiB --workers 2
 *
 * The owner creates a segment of --size with max_size = --max-size (provider=auto takes the
 * first provider that resizes in place: memfd_hugetlb with a huge page pool, plain 4 KiB
 * pages without one), fills it with cache entries, and starts --workers copies of itself
 * with hpshm_child_spawn(); each attaches by token (hpshm_segment_attach_env()).  Then the
 * owner grows the segment by --step up to --max-size, filling each new range with entries,
 * and at the end shrinks it back to --size.  The workers read random entries all along and
 * check every one; each calls hpshm_segment_sync() at its safe point, the top of its loop,
 * where it holds no pointer into the segment.
 *
 * What a worker may read: the owner publishes a size (hpshm_segment_resize()) and only then
 * can write the new range, so a published size says nothing about the entries of its last
 * step.  It does say that everything written before it is there: the library publishes
 * with a sequentially consistent store and hpshm_segment_sync() reads with a sequentially
 * consistent load, so the entries of every earlier step are complete for a worker that sees
 * the size.  A worker therefore trusts the entries below the step before the size it sees,
 * and all of them once the size goes down (the owner shrinks after it wrote everything),
 * which is also how it learns the load is over: it checks every entry then and exits.  A
 * server would keep an entry count or a lock in the segment instead; this keeps the example
 * to the public API and plain C11.
 *
 * A grow that the pool cannot give (HPSHM_ENOMEM) ends the growth early, as a server would
 * keep serving at the size it has.  Exit status: 0 every worker checked what it read and
 * replied, 1 something failed, 2 usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hpshm.h>

#define EXIT_OK    0
#define EXIT_FAIL  1
#define EXIT_USAGE 2

#define MAX_WORKERS   16
#define ENTRY_WORDS   8              /* an entry: its key, six words of value, a check word */
#define ENTRY_BYTES   (ENTRY_WORDS * sizeof(uint64_t))
#define HEAD_BYTES    ENTRY_BYTES    /* the header takes the first entry's place */
#define CACHE_MAGIC   UINT64_C(0x6361636865737276) /* "cachesrv" */
#define WORKER_SECONDS 120           /* a worker that sees no end in this long gives up */

/* The start of the segment, written before the workers are started. */
struct cache_head {
	uint64_t magic;
	uint64_t seed;                   /* entry values depend on it: a stale segment cannot pass */
	uint64_t initial, step, max;     /* the sizes the owner goes through */
	uint64_t spare[3];
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= UINT64_C(0x7fb5d329728ea185);
	x ^= x >> 27;
	x *= UINT64_C(0x81dadef4bc2dd44d);
	return x ^ (x >> 33);
}

static uint64_t *entry_at(void *base, uint64_t i)
{
	return (uint64_t *)(void *)((unsigned char *)base + HEAD_BYTES + i * ENTRY_BYTES);
}

/* Entries wholly below `bytes`. */
static uint64_t entries_below(uint64_t bytes)
{
	return bytes > HEAD_BYTES ? (bytes - HEAD_BYTES) / ENTRY_BYTES : 0;
}

static void entry_write(void *base, uint64_t seed, uint64_t i)
{
	uint64_t *e = entry_at(base, i), sum = 0;

	e[0] = i;
	for (unsigned j = 1; j < ENTRY_WORDS - 1; j++)
		sum ^= e[j] = mix(seed ^ (i * ENTRY_WORDS + j));
	e[ENTRY_WORDS - 1] = sum ^ mix(seed + i);
}

static int entry_ok(const void *base, uint64_t seed, uint64_t i)
{
	const uint64_t *e = entry_at((void *)(uintptr_t)base, i);
	uint64_t sum = 0;

	if (e[0] != i)
		return 0;
	for (unsigned j = 1; j < ENTRY_WORDS - 1; j++) {
		if (e[j] != mix(seed ^ (i * ENTRY_WORDS + j)))
			return 0;
		sum ^= e[j];
	}
	return e[ENTRY_WORDS - 1] == (sum ^ mix(seed + i));
}

/* The size the owner published before `size` on its way up: the step below it. */
static uint64_t step_below(const struct cache_head *h, uint64_t size)
{
	if (size <= h->initial)
		return h->initial;
	return h->initial + (size - h->initial - 1) / h->step * h->step;
}

/* ---- the worker ---- */

static int worker(unsigned id)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	struct cache_head h;
	uint64_t rng = mix(id + 1), largest, checked = 0, syncs = 0, grows = 0;
	time_t t0 = time(NULL);
	void *base;

	if (hpshm_segment_attach_env(&seg, NULL, &err) < 0) {
		fprintf(stderr, "cache_server worker %u: cannot attach: %s\n", id, err.message);
		return EXIT_FAIL;
	}
	base = hpshm_segment_address(seg);
	memcpy(&h, base, sizeof(h));
	if (h.magic != CACHE_MAGIC || h.step == 0) {
		fprintf(stderr, "cache_server worker %u: the segment holds no cache\n", id);
		hpshm_segment_detach(seg);
		return EXIT_FAIL;
	}
	largest = hpshm_segment_size(seg);
	for (;;) {
		uint64_t size, trusted, n;

		/* The safe point: nothing of the segment is held here. */
		if (hpshm_segment_sync(seg, &err) < 0) {
			fprintf(stderr, "cache_server worker %u: sync: %s\n", id, err.message);
			break;
		}
		syncs++;
		size = hpshm_segment_size(seg);
		grows += size > largest;
		if (size < largest) {
			/* The owner shrank: it wrote everything before, so every entry is checked. */
			for (uint64_t i = 0; i < entries_below(size); i++, checked++)
				if (!entry_ok(base, h.seed, i)) {
					fprintf(stderr, "cache_server worker %u: entry %llu is wrong\n", id, (unsigned long long)i);
					goto fail;
				}
			printf("cache_server worker %u: %llu entries checked, %llu syncs, saw %llu grows, ends at %llu MiB\n",
			       id, (unsigned long long)checked, (unsigned long long)syncs, (unsigned long long)grows,
			       (unsigned long long)(size >> 20));
			hpshm_segment_detach(seg);
			return EXIT_OK;
		}
		largest = size;
		trusted = step_below(&h, size);
		n = entries_below(trusted);
		for (unsigned k = 0; k < 256 && n; k++, checked++) {
			uint64_t i = k == 0 ? n - 1 : (rng = mix(rng)) % n;

			if (!entry_ok(base, h.seed, i)) {
				fprintf(stderr, "cache_server worker %u: entry %llu of %llu is wrong at size %llu\n", id,
					(unsigned long long)i, (unsigned long long)n, (unsigned long long)size);
				goto fail;
			}
		}
		if (time(NULL) - t0 > WORKER_SECONDS) {
			fprintf(stderr, "cache_server worker %u: the owner did not finish in %d s\n", id, WORKER_SECONDS);
			break;
		}
	}
fail:
	hpshm_segment_detach(seg);
	return EXIT_FAIL;
}

/* ---- the owner ---- */

struct options {
	size_t      size, max, step;
	unsigned    workers;
	const char *kv;
};

static int usage(const char *problem, const char *arg)
{
	fprintf(stderr, "cache_server: %s '%s'\nusage: cache_server [--size SIZE] [--max-size SIZE] [--step SIZE] "
		"[--workers N] [--config KEY=VALUE,...]\n", problem, arg ? arg : "");
	return EXIT_USAGE;
}

static int parse(int argc, char **argv, struct options *o)
{
	o->size = (size_t)64 << 20;
	o->max = (size_t)256 << 20;
	o->step = (size_t)32 << 20;
	o->workers = 2;
	o->kv = NULL;
	for (int i = 1; i < argc; i++) {
		size_t *target = strcmp(argv[i], "--size") == 0 ? &o->size : strcmp(argv[i], "--max-size") == 0 ? &o->max :
				 strcmp(argv[i], "--step") == 0 ? &o->step : NULL;

		if (i + 1 >= argc)
			return usage("incomplete option", argv[i]);
		if (target) {
			if (hpshm_size_parse(argv[++i], target) < 0 || *target == 0)
				return usage("bad size", argv[i]);
		} else if (strcmp(argv[i], "--workers") == 0) {
			o->workers = (unsigned)strtoul(argv[++i], NULL, 10);
			if (o->workers < 1 || o->workers > MAX_WORKERS)
				return usage("--workers must be 1 to 16:", argv[i]);
		} else if (strcmp(argv[i], "--config") == 0) {
			o->kv = argv[++i];
		} else {
			return usage("unexpected argument", argv[i]);
		}
	}
	if (o->max < o->size)
		return usage("--max-size is below --size:", "");
	return 0;
}

static hpshm_segment *create(const struct options *o)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char line[1024];

	/* The defaults, the HPSHM_* environment, --config; then what the example needs. */
	if (hpshm_config_new(&cfg) < 0)
		return NULL;
	if (hpshm_config_load_env(cfg, &err) < 0 || (o->kv && hpshm_config_parse(cfg, o->kv, &err) < 0) ||
	    hpshm_config_set(cfg, "reattach", "exec", &err) < 0 || hpshm_config_set_max_size(cfg, o->max, &err) < 0 ||
	    hpshm_segment_create(&seg, o->size, cfg, &err) < 0) {
		fprintf(stderr, "cache_server: cannot create the cache: %s\n", err.message);
		if (err.hint[0])
			fprintf(stderr, "  hint: %s\n", err.hint);
		seg = NULL;
	}
	hpshm_config_free(cfg);
	if (seg) {
		hpshm_report_format(hpshm_segment_report(seg), line, sizeof(line));
		printf("cache_server: %s\n", line);
		if (!hpshm_segment_report(seg)->huge)
			printf("cache_server: on base pages (no huge page pool for it): the same code, 4 KiB pages\n");
	}
	return seg;
}

/* The owner serves too between two steps: reads and checks entries for about ms of CPU time. */
static int serve(const void *base, uint64_t seed, uint64_t n, unsigned ms)
{
	clock_t end = clock() + (clock_t)((double)CLOCKS_PER_SEC * ms / 1000);
	uint64_t rng = seed;

	while (n && clock() < end)
		for (unsigned k = 0; k < 1024; k++)
			if (!entry_ok(base, seed, (rng = mix(rng)) % n))
				return -1;
	return 0;
}

/* Grow by steps to max, filling each new range after it is published; then shrink back. */
static int grow_under_load(hpshm_segment *seg, const struct cache_head *h)
{
	void *base = hpshm_segment_address(seg);
	uint64_t size = hpshm_segment_size(seg);
	hpshm_error err;
	unsigned steps = 0;

	while (size < h->max) {
		uint64_t next = size + h->step < h->max ? size + h->step : h->max;

		if (hpshm_segment_resize(seg, (size_t)next, &err) < 0) {
			if (err.code != HPSHM_ENOMEM) {
				fprintf(stderr, "cache_server: resize: %s\n", err.message);
				return -1;
			}
			printf("cache_server: stops growing at %llu MiB: %s\n", (unsigned long long)(size >> 20), err.message);
			break;
		}
		for (uint64_t i = entries_below(size); i < entries_below(next); i++)
			entry_write(base, h->seed, i);
		size = next;
		steps++;
		if (serve(base, h->seed, entries_below(size), 5) < 0) {
			fprintf(stderr, "cache_server: the owner read a wrong entry\n");
			return -1;
		}
	}
	printf("cache_server: grew in %u steps to %llu MiB under its workers' reads\n", steps,
	       (unsigned long long)(size >> 20));
	fflush(stdout);
	/* The end of the load, and the workers' sign: every entry is written. */
	if (hpshm_segment_resize(seg, (size_t)h->initial, &err) < 0) {
		fprintf(stderr, "cache_server: shrink: %s\n", err.message);
		return -1;
	}
	return 0;
}

static int owner(const char *self, const struct options *o)
{
	static char arg_worker[] = "--worker";
	char id_text[MAX_WORKERS][12], *argv_w[4];
	hpshm_child children[MAX_WORKERS];
	hpshm_segment *seg = create(o);
	struct cache_head *h;
	hpshm_error err;
	unsigned started = 0;
	int status = EXIT_OK;

	if (!seg)
		return EXIT_FAIL;
	h = hpshm_segment_address(seg);
	memset(h, 0, sizeof(*h));
	h->seed = mix((uint64_t)time(NULL) ^ (uint64_t)clock() << 32);
	h->initial = hpshm_segment_size(seg);
	h->max = hpshm_segment_max_size(seg);
	h->step = o->step;
	for (uint64_t i = 0; i < entries_below(h->initial); i++)
		entry_write(h, h->seed, i);
	h->magic = CACHE_MAGIC;

	argv_w[0] = (char *)(uintptr_t)self;
	argv_w[1] = arg_worker;
	argv_w[3] = NULL;
	fflush(stdout);
	for (unsigned i = 0; i < o->workers; i++) {
		snprintf(id_text[i], sizeof(id_text[i]), "%u", i);
		argv_w[2] = id_text[i];
		if (hpshm_child_spawn(seg, self, argv_w, NULL, &children[i], &err) < 0) {
			fprintf(stderr, "cache_server: cannot start a worker: %s\n", err.message);
			status = EXIT_FAIL;
			break;
		}
		started++;
	}
	if (status == EXIT_OK && grow_under_load(seg, h) < 0)
		status = EXIT_FAIL;
	/* A worker waiting for the end would wait forever after a failure: the shrink is its sign. */
	if (status != EXIT_OK)
		(void)hpshm_segment_resize(seg, (size_t)h->initial, NULL);
	for (unsigned i = 0; i < started; i++) {
		int st = 0;

		if (hpshm_child_wait(&children[i], &st, &err) < 0 || st != 0) {
			fprintf(stderr, "cache_server: worker %u failed (status %d)\n", i, st);
			status = EXIT_FAIL;
		}
	}
	if (status == EXIT_OK)
		printf("cache_server: %u workers read and checked the cache while it grew\n", started);
	if (hpshm_segment_destroy(seg) < 0)
		status = EXIT_FAIL;
	return status;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	if (argc == 3 && strcmp(argv[1], "--worker") == 0)
		return worker((unsigned)strtoul(argv[2], NULL, 10));
	if ((rc = parse(argc, argv, &o)) != 0)
		return rc;
	return owner(argv[0], &o);
}
