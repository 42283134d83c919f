/* SPDX-License-Identifier: MIT */
/*
 * tests/test_httpd_store.c -- the store of mod_socache_hpshm (httpd/store.h), without httpd:
 * store, retrieve, expiry, the oldest entries giving way, remove, the size limit, iterate,
 * and a process SIGKILLed while it holds a subcache's lock, on an hpshm segment shared with
 * forked children as httpd's workers share it.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "store.h"

#define MIB ((size_t)1 << 20)
#define NOW 1000000

TestSuite(httpd_store, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 120);

static hpshm_segment *seg;

/* A store on a fresh segment (huge pages where the pool has them: the store does not care). */
static hstore *make_store(size_t size, unsigned subcaches, size_t avg)
{
	hpshm_config *cfg;
	hpshm_error err;
	hstore *st;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, "huge_pages=try", &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&seg, size, cfg, &err), 0, "%s", err.message);
	hpshm_config_free(cfg);
	cr_assert_eq(hstore_format(hpshm_segment_address(seg), hpshm_segment_size(seg), subcaches, avg), HSTORE_OK);
	st = hstore_open(hpshm_segment_address(seg), hpshm_segment_size(seg));
	cr_assert_not_null(st);
	return st;
}

static void drop_store(void)
{
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	seg = NULL;
}

static int put_str(hstore *st, const char *id, const char *data, int64_t expiry, int64_t now)
{
	return hstore_put(st, (const unsigned char *)id, (unsigned)strlen(id), expiry, (const unsigned char *)data,
			  (unsigned)strlen(data), now);
}

static int get_str(hstore *st, const char *id, char *buf, unsigned size, int64_t now)
{
	unsigned len = size - 1;
	int rc = hstore_get(st, (const unsigned char *)id, (unsigned)strlen(id), (unsigned char *)buf, &len, now);

	buf[rc == HSTORE_OK ? len : 0] = '\0';
	return rc;
}

Test(httpd_store, stores_retrieves_and_replaces)
{
	hstore *st = make_store(4 * MIB, 0, 0);
	char buf[64];
	struct hstore_stats s;

	cr_assert_eq(put_str(st, "session-a", "first", NOW + 100, NOW), HSTORE_OK);
	cr_assert_eq(get_str(st, "session-a", buf, sizeof(buf), NOW), HSTORE_OK);
	cr_assert_str_eq(buf, "first");
	cr_assert_eq(put_str(st, "session-a", "second value", NOW + 100, NOW), HSTORE_OK);
	cr_assert_eq(get_str(st, "session-a", buf, sizeof(buf), NOW), HSTORE_OK);
	cr_assert_str_eq(buf, "second value");
	cr_assert_eq(get_str(st, "session-b", buf, sizeof(buf), NOW), HSTORE_NOTFOUND);
	hstore_stats_get(st, &s);
	cr_assert_eq(s.entries, 1, "a replaced entry is not counted twice");
	cr_assert_eq(s.stores, 2);
	cr_assert_eq(s.hits, 2);
	cr_assert_eq(s.misses, 1);
	drop_store();
}

Test(httpd_store, an_object_past_its_expiry_is_not_found)
{
	hstore *st = make_store(4 * MIB, 0, 0);
	char buf[64];
	struct hstore_stats s;

	cr_assert_eq(put_str(st, "k", "v", NOW + 10, NOW), HSTORE_OK);
	cr_assert_eq(get_str(st, "k", buf, sizeof(buf), NOW + 9), HSTORE_OK);
	cr_assert_eq(get_str(st, "k", buf, sizeof(buf), NOW + 10), HSTORE_NOTFOUND);
	cr_assert_eq(get_str(st, "k", buf, sizeof(buf), NOW + 9), HSTORE_NOTFOUND, "removed when met, for good");
	hstore_stats_get(st, &s);
	cr_assert_eq(s.expired, 1);
	cr_assert_eq(s.entries, 0);
	drop_store();
}

Test(httpd_store, the_oldest_entries_give_way_when_full)
{
	/* One subcache: every key competes for the same data area. */
	hstore *st = make_store(2 * MIB, 1, 4096);
	struct hstore_stats s;
	static unsigned char obj[64 * 1024];
	unsigned char out[64 * 1024];
	unsigned len, n;

	hstore_stats_get(st, &s);
	n = (unsigned)(s.data_per / (sizeof(obj) + 8)) + 8; /* more objects than fit */
	for (unsigned i = 0; i < n; i++) {
		char id[16];

		snprintf(id, sizeof(id), "o%05u", i % 100000);
		memset(obj, (int)i, sizeof(obj));
		cr_assert_eq(hstore_put(st, (unsigned char *)id, 6, NOW + 100, obj, sizeof(obj), NOW), HSTORE_OK);
	}
	len = sizeof(out);
	cr_assert_eq(hstore_get(st, (const unsigned char *)"o00000", 6, out, &len, NOW), HSTORE_NOTFOUND,
		     "the first object gave way");
	len = sizeof(out);
	cr_assert_eq(hstore_get(st, (const unsigned char *)"o00000", 6, out, &len, NOW), HSTORE_NOTFOUND);
	{
		char id[16];

		snprintf(id, sizeof(id), "o%05u", (n - 1) % 100000);
		len = sizeof(out);
		cr_assert_eq(hstore_get(st, (unsigned char *)id, 6, out, &len, NOW), HSTORE_OK, "the newest stays");
		cr_assert_eq(len, sizeof(obj));
		cr_assert_eq(out[0], (unsigned char)(n - 1));
		cr_assert_eq(out[sizeof(out) - 1], (unsigned char)(n - 1), "wrapped around the ring intact");
	}
	hstore_stats_get(st, &s);
	cr_assert_geq(s.evictions, 8);
	cr_assert_eq(s.entries + s.evictions, n);
	drop_store();
}

Test(httpd_store, remove_takes_an_object_out)
{
	hstore *st = make_store(4 * MIB, 0, 0);
	char buf[64];

	cr_assert_eq(put_str(st, "gone", "x", NOW + 100, NOW), HSTORE_OK);
	cr_assert_eq(put_str(st, "kept", "y", NOW + 100, NOW), HSTORE_OK);
	cr_assert_eq(hstore_remove(st, (const unsigned char *)"gone", 4, NOW), HSTORE_OK);
	cr_assert_eq(hstore_remove(st, (const unsigned char *)"gone", 4, NOW), HSTORE_NOTFOUND);
	cr_assert_eq(get_str(st, "gone", buf, sizeof(buf), NOW), HSTORE_NOTFOUND);
	cr_assert_eq(get_str(st, "kept", buf, sizeof(buf), NOW), HSTORE_OK);
	drop_store();
}

Test(httpd_store, an_object_larger_than_a_subcache_is_refused)
{
	hstore *st = make_store(4 * MIB, 4, 0);
	struct hstore_stats s;
	unsigned char *big;
	unsigned len;

	hstore_stats_get(st, &s);
	big = calloc(1, s.data_per + 1);
	cr_assert_not_null(big);
	cr_assert_eq(hstore_put(st, (const unsigned char *)"b", 1, NOW + 100, big, (unsigned)s.data_per, NOW),
		     HSTORE_TOOBIG, "id and data together exceed the data area");
	cr_assert_eq(hstore_put(st, (const unsigned char *)"b", 1, NOW + 100, big, (unsigned)s.data_per - 1, NOW),
		     HSTORE_OK, "exactly the data area fits");
	len = 10;
	cr_assert_eq(hstore_get(st, (const unsigned char *)"b", 1, big, &len, NOW), HSTORE_NOTFOUND,
		     "larger than the caller's buffer: not found, as shmcb does");
	free(big);
	drop_store();
}

struct seen {
	unsigned count; /* entries the callback was given */
	unsigned bad;   /* entries whose data did not match their id */
};

static int count_entry(void *user, const unsigned char *id, unsigned idlen, const unsigned char *data,
		       unsigned datalen, int64_t expiry)
{
	struct seen *s = user;

	(void)expiry;
	s->count++;
	if (idlen < 2 || datalen != 1 || data[0] != id[1])
		s->bad++;
	return 0;
}

Test(httpd_store, iterate_gives_every_live_entry_once)
{
	hstore *st = make_store(4 * MIB, 0, 0);
	struct seen seen = { 0, 0 };
	void *scratch;

	for (char c = 'a'; c <= 'z'; c++) {
		char id[3] = { 'i', c, 0 }, data[2] = { c, 0 };

		cr_assert_eq(put_str(st, id, data, c == 'z' ? NOW + 1 : NOW + 100, NOW), HSTORE_OK);
	}
	cr_assert_eq(hstore_remove(st, (const unsigned char *)"ia", 2, NOW), HSTORE_OK);
	scratch = malloc(hstore_scratch_size(st));
	cr_assert_not_null(scratch);
	cr_assert_eq(hstore_iterate(st, NOW + 2, scratch, count_entry, &seen), 0);
	cr_assert_eq(seen.count, 24, "26 stored, one removed, one expired: %u seen", seen.count);
	cr_assert_eq(seen.bad, 0);
	free(scratch);
	drop_store();
}

/*
 * The crash a server meets: a worker SIGKILLed inside a store.  The child stores in a loop,
 * so it spends nearly all its time holding the subcache's lock (one subcache: every key meets
 * the same lock); the parent kills it at a different moment each round, once the child said
 * it stored its first object (a fork alone proves nothing ran yet on a busy machine), and
 * must then store and retrieve, and find what it stored.  A takeover that never comes hangs
 * the test until its time limit: that is the deadlock's failure.
 */
Test(httpd_store, a_holder_killed_mid_store_neither_deadlocks_nor_corrupts)
{
	hstore *st = make_store(2 * MIB, 1, 200);
	static unsigned char obj[4000];
	unsigned char out[4000];
	unsigned len = sizeof(out);
	struct hstore_stats s;
	int status, started[2];
	char c;
	pid_t pid;

	for (int round = 0; round < 20; round++) {
		cr_assert_eq(pipe(started), 0);
		pid = hpt_fork();
		cr_assert_neq(pid, -1);
		if (pid == 0) {
			close(started[0]);
			for (unsigned i = 0;; i++) {
				hstore_put(st, (unsigned char *)&i, sizeof(i), NOW + 100, obj, sizeof(obj), NOW);
				if (i == 0 && write(started[1], "s", 1) != 1)
					_exit(1);
			}
		}
		close(started[1]);
		cr_assert_eq(read(started[0], &c, 1), 1, "the storing child ended before its first store");
		close(started[0]);
		usleep(200 + (useconds_t)(round * 250));
		cr_assert_eq(kill(pid, SIGKILL), 0);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert_eq(hstore_put(st, (const unsigned char *)"after", 5, NOW + 100, obj, sizeof(obj), NOW), HSTORE_OK);
		len = sizeof(out);
		cr_assert_eq(hstore_get(st, (const unsigned char *)"after", 5, out, &len, NOW), HSTORE_OK);
		cr_assert_eq(len, sizeof(obj));
	}
	hstore_stats_get(st, &s);
	/* The child spends nearly all its time inside the lock: some kill must have landed there. */
	cr_assert_geq(s.takeovers, 1, "20 kills, none inside the lock");
	cr_assert_leq(s.resets, s.takeovers, "a subcache is emptied only by a taker");
	drop_store();
}
