/* SPDX-License-Identifier: MIT */
/*
 * examples/attach_child.c -- a worker started by exec that attaches its parent's segment.
 *
 * Start it with `hpshm run` or with hpshm_child_spawn() from a program of your own (see
 * create_and_spawn.c); either puts the segment's token in HPSHM_TOKEN and keeps the
 * segment's descriptor open across exec where the provider needs one:
 *
 *     hpshm run --size 16MiB --config provider=memfd_hugetlb -- ./attach_child --write-back
 *     ./create_and_spawn --children 8 ./attach_child
 *
 * It attaches, prints where and with which verified page size, and then, as asked:
 *
 *   --check-pattern          check the pattern create_and_spawn wrote (every 4KiB of the
 *                            segment) and follow the raw pointer it stored
 *   --write-back             write this child's reply in its slot, for the parent to check
 *   --slot N                 the slot to write (0 .. 63, default 0)
 *   --expect-page-size SIZE  fail unless the kernel says the pages are SIZE (e.g. 2MiB)
 *   --quiet                  print nothing unless something fails
 *
 * Exit status, for scripts and tests: 0 all checks passed, 1 a check or the attach failed,
 * 2 usage (a bad argument, or not started by hpshm run / hpshm_child_spawn()).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hpshm.h>

#include "shared_area.h"

#define EXIT_OK    0
#define EXIT_FAIL  1
#define EXIT_USAGE 2

/* What the command line asked for. */
struct options {
	int      check_pattern;   /* --check-pattern */
	int      write_back;      /* --write-back */
	unsigned slot;            /* --slot N */
	size_t   want_page_size;  /* --expect-page-size, 0 if not given */
	int      quiet;           /* --quiet */
};

/* A usage error: what is wrong, the argument at fault (or NULL), and the usage line. */
static int usage(const char *problem, const char *arg)
{
	fprintf(stderr, "attach_child: %s", problem);
	if (arg)
		fprintf(stderr, " '%s'", arg);
	fprintf(stderr, "\nusage: attach_child [--check-pattern] [--write-back] [--slot N] "
		"[--expect-page-size SIZE] [--quiet]\n"
		"Start it with `hpshm run --size SIZE -- attach_child ...` or hpshm_child_spawn().\n");
	return EXIT_USAGE;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--check-pattern") == 0) {
			o->check_pattern = 1;
		} else if (strcmp(a, "--write-back") == 0) {
			o->write_back = 1;
		} else if (strcmp(a, "--quiet") == 0) {
			o->quiet = 1;
		} else if (strcmp(a, "--slot") == 0 && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);

			if (*argv[i] < '0' || *argv[i] > '9' || *end != '\0' || v >= AREA_SLOTS)
				return usage("bad --slot (expected 0 to 63):", argv[i]);
			o->slot = (unsigned)v;
		} else if (strcmp(a, "--expect-page-size") == 0 && i + 1 < argc) {
			if (hpshm_size_parse(argv[++i], &o->want_page_size) < 0 || o->want_page_size == 0)
				return usage("bad --expect-page-size (expected a size such as 2MiB or 4096):", argv[i]);
		} else {
			return usage("unexpected or incomplete argument", a);
		}
	}
	return 0;
}

/* The pattern the creator wrote, and the pointer it stored: proof of the object and address. */
static int check_pattern(struct area *area, size_t usable)
{
	uint64_t n;

	if (memcmp(area->magic, AREA_MAGIC, sizeof(area->magic)) != 0) {
		fprintf(stderr, "attach_child: no pattern in the segment (the creator writes one: create_and_spawn "
			"does, `hpshm run` does not)\n");
		return -1;
	}
	/*
	 * A pointer stored by the creator is only usable here because attach mapped the segment
	 * at the creator's address; this is what lets servers keep raw pointers in shared memory.
	 */
	if (area->seed_ptr != &area->seed) {
		fprintf(stderr, "attach_child: the creator's pointer %p does not point into this mapping (%p)\n",
			(void *)area->seed_ptr, (void *)&area->seed);
		return -1;
	}
	n = area_nwords(usable);
	if (area->nwords != n) {
		fprintf(stderr, "attach_child: the creator wrote %" PRIu64 " pattern words, this segment has room for %"
			PRIu64 "\n", area->nwords, n);
		return -1;
	}
	for (uint64_t k = 1; k <= n; k++) {
		uint64_t got = *area_word_at(area, k);

		if (got != area_word(*area->seed_ptr, k)) {
			fprintf(stderr, "attach_child: pattern word %" PRIu64 " (offset %" PRIu64 ") is %#" PRIx64
				", expected %#" PRIx64 "\n", k, k * AREA_STRIDE, got, area_word(area->seed, k));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	hpshm_segment *seg = NULL;
	const hpshm_report *r;
	struct options opt;
	struct area *area;
	hpshm_error err;
	char ps[32], sz[32];
	int attach_rc, rc, status = EXIT_OK;

	/*
	 * Attach before anything else.  The segment must appear at the creator's address, and
	 * every mapping this process makes first (malloc arenas, stdio buffers, thread stacks,
	 * libraries loaded later) could land in that range and make the attach fail.  Right
	 * after exec the address space holds little more than the program and its libraries,
	 * so this is the moment the range is most surely free.  Even the arguments are parsed
	 * after: parsing may print, and printing allocates a stdio buffer.
	 */
	attach_rc = hpshm_segment_attach_env(&seg, NULL, &err);

	rc = parse_options(argc, argv, &opt);
	if (rc != 0) {
		hpshm_segment_destroy(seg);
		return rc;
	}
	if (attach_rc < 0) {
		fprintf(stderr, "attach_child: cannot attach: %s\n", err.message);
		if (err.hint[0])
			fprintf(stderr, "  hint: %s\n", err.hint);
		/* Not started by hpshm run / hpshm_child_spawn(): that is a mistake in how we were run. */
		return getenv("HPSHM_TOKEN") ? EXIT_FAIL : EXIT_USAGE;
	}

	/* The report of an attached segment holds the page size the kernel reports in this process. */
	r = hpshm_segment_report(seg);
	area = hpshm_segment_address(seg);
	if (!opt.quiet)
		printf("attach_child (slot %u): attached at %p, %s usable, provider %s, page size %s (%s%s)\n",
		       opt.slot, (void *)area, hpshm_size_format(hpshm_segment_size(seg), sz, sizeof(sz)), r->provider,
		       hpshm_size_format(r->page_size, ps, sizeof(ps)), r->verified ? "verified by " : "unverified",
		       r->verified ? r->verified_by : "");

	if (opt.want_page_size && (!r->verified || r->page_size != opt.want_page_size)) {
		char want[32];

		fprintf(stderr, "attach_child: page size is %s (%s), expected %s\n", ps,
			r->verified ? "verified" : "unverified",
			hpshm_size_format(opt.want_page_size, want, sizeof(want)));
		status = EXIT_FAIL;
	}
	if (hpshm_segment_size(seg) < sizeof(struct area)) {
		fprintf(stderr, "attach_child: the segment is smaller than the shared area\n");
		status = EXIT_FAIL;
	} else {
		if (opt.check_pattern && check_pattern(area, hpshm_segment_size(seg)) < 0)
			status = EXIT_FAIL;
		/* Reply even after a failed check: the parent's own check then says which child failed. */
		if (opt.write_back)
			area->reply[opt.slot] = area_reply(area->seed, opt.slot);
	}
	if (!opt.quiet && status == EXIT_OK)
		printf("attach_child (slot %u): ok%s%s\n", opt.slot, opt.check_pattern ? ", pattern checked" : "",
		       opt.write_back ? ", reply written" : "");
	fflush(stdout);

	/* On an attached segment destroy only detaches: the creator still owns the object. */
	rc = hpshm_segment_destroy(seg);
	if (rc < 0) {
		fprintf(stderr, "attach_child: detach failed: %s\n", hpshm_strerror(rc));
		status = EXIT_FAIL;
	}
	return status;
}
