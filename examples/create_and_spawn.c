/* SPDX-License-Identifier: MIT */
/*
 * examples/create_and_spawn.c -- the creating side of re-attach, as a server would do it.
 *
 *     ./create_and_spawn [--size SIZE] [--children N] [--config KEY=VALUE,...] CHILD [ARGS...]
 *     ./create_and_spawn --children 8 --config provider=sysv_hugetlb,huge_pages=on ./attach_child
 *
 * It creates a segment with reattach=exec (only providers a child started by exec can map
 * again are then eligible), writes a pattern and a raw pointer into it (shared_area.h),
 * starts N copies of CHILD with hpshm_child_spawn(), each with
 * "--check-pattern --write-back --slot I" appended to ARGS, waits for them all, checks that
 * every child wrote its reply, and destroys the segment.
 *
 * The children run at the same time, each attaching the same segment at the same address.
 * The creator keeps the segment mapped until they have all ended: the backing object lives
 * as long as someone maps it, and the creator's destroy is what removes a named one.
 *
 * Exit status: 0 every child succeeded and replied, 1 something failed, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hpshm.h>

#include "shared_area.h"

#define EXIT_OK    0
#define EXIT_FAIL  1
#define EXIT_USAGE 2

#define CHILD_EXTRA_ARGS 4 /* --check-pattern --write-back --slot I */

/* exec takes char *const argv[]: writable arrays, not string literals. */
static char arg_check[] = "--check-pattern";
static char arg_write[] = "--write-back";
static char arg_slot[] = "--slot";

/* A usage error: what is wrong, the argument at fault (or NULL), and the usage line. */
static int usage(const char *problem, const char *arg)
{
	fprintf(stderr, "create_and_spawn: %s", problem);
	if (arg)
		fprintf(stderr, " '%s'", arg);
	fprintf(stderr, "\nusage: create_and_spawn [--size SIZE] [--children N] [--config KEY=VALUE,...] "
		"CHILD [ARGS...]\n");
	return EXIT_USAGE;
}

static void print_error(const char *what, const hpshm_error *err)
{
	fprintf(stderr, "create_and_spawn: %s: %s\n", what, err->message);
	if (err->hint[0])
		fprintf(stderr, "  hint: %s\n", err->hint);
}

/* A seed that differs from run to run, so a stale segment's pattern cannot pass for ours. */
static uint64_t make_seed(void)
{
	uint64_t s = (uint64_t)time(NULL) * UINT64_C(6364136223846793005);

	s ^= (uint64_t)clock() << 32;
	s ^= (uint64_t)(uintptr_t)&s;
	return s ? s : 1;
}

/* The creator's side of shared_area.h: every field but magic, then magic last. */
static void write_area(struct area *area, size_t usable)
{
	uint64_t n = area_nwords(usable);

	memset(area, 0, sizeof(*area));
	area->seed = make_seed();
	area->seed_ptr = &area->seed; /* a raw pointer into the segment, as servers keep them */
	area->nwords = n;
	for (uint64_t k = 1; k <= n; k++)
		*area_word_at(area, k) = area_word(area->seed, k);
	memcpy(area->magic, AREA_MAGIC, sizeof(area->magic));
}

int main(int argc, char **argv)
{
	const char *size_text = "16MiB", *kv = NULL;
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_child children[AREA_SLOTS];
	hpshm_report report;
	hpshm_error err;
	struct area *area;
	char **child_argv = NULL, line[1024], slot_text[AREA_SLOTS][12];
	size_t size;
	unsigned nchildren = 4, started = 0;
	int first = 1, status = EXIT_OK, nargs;

	for (; first < argc && argv[first][0] == '-'; first++) {
		if (strcmp(argv[first], "--size") == 0 && first + 1 < argc) {
			size_text = argv[++first];
		} else if (strcmp(argv[first], "--config") == 0 && first + 1 < argc) {
			kv = argv[++first];
		} else if (strcmp(argv[first], "--children") == 0 && first + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++first], &end, 10);

			if (*argv[first] < '0' || *argv[first] > '9' || *end || v < 1 || v > AREA_SLOTS)
				return usage("bad --children (expected 1 to 64):", argv[first]);
			nchildren = (unsigned)v;
		} else {
			return usage("unexpected or incomplete option", argv[first]);
		}
	}
	if (first >= argc)
		return usage("missing the CHILD program to start", NULL);
	if (hpshm_size_parse(size_text, &size) < 0 || size == 0)
		return usage("bad --size (expected a size such as 16MiB):", size_text);

	/*
	 * The configuration: the defaults, the HPSHM_* environment, the caller's --config, and
	 * then reattach=exec, which is not negotiable: without it the children cannot attach.
	 */
	if (hpshm_config_new(&cfg) < 0)
		return EXIT_FAIL;
	if (hpshm_config_load_env(cfg, &err) < 0 || (kv && hpshm_config_parse(cfg, kv, &err) < 0) ||
	    hpshm_config_set(cfg, "reattach", "exec", &err) < 0) {
		print_error("bad configuration", &err);
		hpshm_config_free(cfg);
		return EXIT_USAGE;
	}
	if (hpshm_segment_create_ex(&seg, size, cfg, &report, &err) < 0) {
		print_error("cannot create the segment", &err);
		hpshm_config_free(cfg);
		return EXIT_FAIL;
	}
	hpshm_config_free(cfg);
	hpshm_report_format(hpshm_segment_report(seg), line, sizeof(line));
	printf("create_and_spawn: %s\n", line);

	area = hpshm_segment_address(seg);
	if (hpshm_segment_size(seg) < AREA_STRIDE + sizeof(uint64_t)) {
		fprintf(stderr, "create_and_spawn: the segment is too small for the example's area\n");
		hpshm_segment_destroy(seg);
		return EXIT_USAGE;
	}
	write_area(area, hpshm_segment_size(seg));

	/* argv for the children: CHILD ARGS... --check-pattern --write-back --slot I NULL */
	nargs = argc - first;
	child_argv = calloc((size_t)nargs + CHILD_EXTRA_ARGS + 1, sizeof(*child_argv));
	if (!child_argv) {
		hpshm_segment_destroy(seg);
		return EXIT_FAIL;
	}
	memcpy(child_argv, argv + first, (size_t)nargs * sizeof(*child_argv));
	child_argv[nargs] = arg_check;
	child_argv[nargs + 1] = arg_write;
	child_argv[nargs + 2] = arg_slot;

	/* Flush before spawning, or text still in our buffers could be written twice. */
	fflush(stdout);
	for (unsigned i = 0; i < nchildren; i++) {
		snprintf(slot_text[i], sizeof(slot_text[i]), "%u", i);
		child_argv[nargs + 3] = slot_text[i];
		if (hpshm_child_spawn(seg, argv[first], child_argv, NULL, &children[i], &err) < 0) {
			print_error("cannot start a child", &err);
			status = EXIT_FAIL;
			break; /* wait for the ones already running before destroying */
		}
		started++;
	}

	for (unsigned i = 0; i < started; i++) {
		int child_status = 0;

		if (hpshm_child_wait(&children[i], &child_status, &err) < 0) {
			print_error("cannot wait for a child", &err);
			status = EXIT_FAIL;
			continue;
		}
		if (child_status != 0) {
			fprintf(stderr, "create_and_spawn: child %u exited with status %d\n", i, child_status);
			status = EXIT_FAIL;
		}
		/* The child has ended, so its write is visible here: waiting is the synchronisation. */
		if (area->reply[i] != area_reply(area->seed, i)) {
			fprintf(stderr, "create_and_spawn: child %u did not write its reply\n", i);
			status = EXIT_FAIL;
		}
	}
	if (status == EXIT_OK)
		printf("create_and_spawn: %u children attached at %p, checked the pattern and replied\n", started,
		       (void *)area);

	free(child_argv);
	if (hpshm_segment_destroy(seg) < 0) {
		fprintf(stderr, "create_and_spawn: destroying the segment failed\n");
		status = EXIT_FAIL;
	}
	return status;
}
