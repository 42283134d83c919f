/* SPDX-License-Identifier: MIT */
/*
 * tools/check_resize.c -- `hpshm check --size SIZE --resize-to TO`: does growing (or
 * shrinking) a segment in place work on this machine, with these settings?
 *
 * check.c creates the segment with max_size = max(SIZE, TO), so provider=auto takes the
 * first provider with HPSHM_CAP_RESIZE that works (the library skips the others, saying
 * why in the attempts), and a named provider that cannot resize is refused by the library
 * with the providers that can.  Here the segment is resized to TO and back, and each step is
 * verified from outside the call's own account: hpshm_segment_size(); for huge pages the
 * pool's free pages (ports/facts.h, as `hpshm probe` reads them) moved by exactly the pages
 * the step adds or gives back; and the memory in use holds a pattern written before the
 * step (the part both sizes share) and takes one written after it (a grow's new pages).  A
 * pool another process uses at the same moment can move by more: the line then says by how
 * much, and the check fails rather than guess.
 */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "bench.h"
#include "ports/facts.h"
#include "tool.h"

/* The pool's free pages now, or -1 when the segment is not on a huge page pool. */
static long cr_pool_free(const struct check_resize *cr)
{
	struct hpshm__pool p;

	if (!cr->huge || hpshm__os_pool(cr->page_size, &p) < 0)
		return -1;
	return (long)p.free;
}

/* The pattern of the word at offset off: its offset and a seed, so a page moved or lost shows. */
static uint64_t cr_word(size_t off)
{
	return (uint64_t)off * UINT64_C(0x9e3779b97f4a7c15) ^ UINT64_C(0x6870736d);
}

/* Write (or with check set, compare) one word per base page of [from, to) of the segment. */
static int cr_pattern(unsigned char *base, size_t from, size_t to, int check)
{
	for (size_t off = from; off + sizeof(uint64_t) <= to; off += 4096) {
		volatile uint64_t *w = (volatile uint64_t *)(void *)(base + off);

		if (!check)
			*w = cr_word(off);
		else if (*w != cr_word(off))
			return -1;
	}
	return 0;
}

/* One step from the segment's size to to: resize, then verify size, pool and pattern.  0, -1
 * when a verification failed, -2 when the resize itself did (s then holds nothing). */
static int cr_step(hpshm_segment *seg, struct check_resize *cr, struct check_resize_step *s, size_t to)
{
	unsigned char *base = hpshm_segment_address(seg);
	hpshm_error err;
	uint64_t t0;
	size_t keep;

	memset(s, 0, sizeof(*s));
	s->from = hpshm_segment_size(seg);
	s->to = to;
	keep = s->from < to ? s->from : to;
	(void)cr_pattern(base, 0, s->from, 0);
	s->pool_before = cr_pool_free(cr);
	t0 = bench_wall_ns();
	if (hpshm_segment_resize(seg, to, &err) < 0) {
		snprintf(cr->fail, sizeof(cr->fail), "resize from %zu to %zu bytes failed: %s%s%s", s->from, to,
			 err.message, err.hint[0] ? "; hint: " : "", err.hint);
		return -2;
	}
	s->ms = tool_ms(bench_wall_ns() - t0);
	s->pool_after = cr_pool_free(cr);
	s->size = hpshm_segment_size(seg);
	s->pages = cr->huge ? (long)((s->from > s->size ? s->from - s->size : s->size - s->from) / cr->page_size) : 0;
	s->moved = s->pool_before < 0 ? 0 : s->from < s->size ? s->pool_before - s->pool_after : s->pool_after - s->pool_before;
	s->kept = cr_pattern(base, 0, keep, 1) == 0;
	if (s->size > s->from) {
		(void)cr_pattern(base, s->from, s->size, 0);
		s->kept = s->kept && cr_pattern(base, s->from, s->size, 1) == 0;
	}
	if (s->size < to || s->size - to >= cr->page_size)
		snprintf(cr->fail, sizeof(cr->fail), "the segment is %zu bytes after a resize to %zu", s->size, to);
	else if (s->pool_before >= 0 && s->moved != s->pages)
		snprintf(cr->fail, sizeof(cr->fail), "the pool's free pages moved by %ld, not the %ld pages of the step "
			 "(another process using the pool now?)", s->moved, s->pages);
	else if (!s->kept)
		snprintf(cr->fail, sizeof(cr->fail), "the memory in use did not keep the pattern written to it");
	return cr->fail[0] ? -1 : 0;
}

int check_resize_run(hpshm_segment *seg, struct check_resize *cr)
{
	const hpshm_report *r = hpshm_segment_report(seg);
	size_t size = hpshm_segment_size(seg);

	cr->max = hpshm_segment_max_size(seg);
	cr->page_size = r->page_size ? r->page_size : r->requested_page_size;
	cr->huge = r->huge;
	snprintf(cr->provider, sizeof(cr->provider), "%s", r->provider);
	cr->nsteps = 0;
	for (int k = 0; k < 2; k++) {
		int rc = cr_step(seg, cr, &cr->steps[cr->nsteps], k ? size : cr->to);

		cr->nsteps += rc != -2;
		if (rc < 0)
			return -1;
	}
	return 0;
}

char *check_resize_providers(char *buf, size_t len)
{
	unsigned caps = 0;
	size_t used = 0;
	const char *name;

	buf[0] = '\0';
	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL && used < len; i++)
		if (caps & HPSHM_CAP_RESIZE)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
	if (!buf[0])
		snprintf(buf, len, "none on this system");
	return buf;
}

void check_resize_text(const struct check_resize *cr)
{
	char a[32], b[32], c[32];

	printf("resize: %s, %s pages, max_size %s\n", cr->provider, hpshm_size_format(cr->page_size, a, sizeof(a)),
	       hpshm_size_format(cr->max, b, sizeof(b)));
	for (unsigned i = 0; i < cr->nsteps; i++) {
		const struct check_resize_step *s = &cr->steps[i];

		printf("  %s %s -> %s: %.3f ms, size %s", i ? "back" : "to", hpshm_size_format(s->from, a, sizeof(a)),
		       hpshm_size_format(s->to, b, sizeof(b)), s->ms, hpshm_size_format(s->size, c, sizeof(c)));
		if (s->pool_before >= 0)
			printf(", pool free %ld -> %ld (%ld pages, expected %ld)", s->pool_before, s->pool_after, s->moved,
			       s->pages);
		else
			printf(", no huge page pool to count");
		printf(", pattern %s\n", s->kept ? "ok" : "LOST");
	}
	if (cr->fail[0])
		printf("resize check failed: %s\n", cr->fail);
}

void check_resize_json(struct json *j, const struct check_resize *cr)
{
	json_key(j, "resize");
	json_object_open(j);
	json_kv_bool(j, "ok", cr->fail[0] == '\0' && cr->nsteps == 2);
	json_kv_string(j, "provider", cr->provider);
	json_kv_uint(j, "page_size", cr->page_size);
	json_kv_uint(j, "max_size", cr->max);
	json_kv_uint(j, "to", cr->to);
	json_kv_string(j, "error", cr->fail);
	json_key(j, "steps");
	json_array_open(j);
	for (unsigned i = 0; i < cr->nsteps; i++) {
		const struct check_resize_step *s = &cr->steps[i];

		json_object_open(j);
		json_kv_uint(j, "from", s->from);
		json_kv_uint(j, "to", s->to);
		json_kv_uint(j, "size", s->size);
		json_kv_double(j, "ms", s->ms, 3);
		if (s->pool_before >= 0) {
			json_kv_int(j, "pool_free_before", s->pool_before);
			json_kv_int(j, "pool_free_after", s->pool_after);
			json_kv_int(j, "pages_expected", s->pages);
			json_kv_int(j, "pages_moved", s->moved);
		} else {
			json_kv_null(j, "pool_free_before");
			json_kv_null(j, "pool_free_after");
			json_kv_null(j, "pages_expected");
			json_kv_null(j, "pages_moved");
		}
		json_kv_bool(j, "pattern_ok", s->kept);
		json_object_close(j);
	}
	json_array_close(j);
	json_object_close(j);
}
