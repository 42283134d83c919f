/* SPDX-License-Identifier: MIT */
/*
 * tests/test_resize.c -- segments that grow and shrink in place (max_size, issue 24).
 *
 * The main case, for memfd_hugetlb, hugetlbfs (unnamed and named) and plain: create 64 MiB
 * with max_size=1GiB and reattach=exec, start two children by a real exec (resize_child),
 * grow to 512 MiB and write a pattern past the old end; a child that has not synced still
 * reads its old range and faults past it; after hpshm_segment_sync() each child reads the
 * pattern past the old end, at the same address.  Then shrink to 32 MiB: the pages stay while
 * a child has not synced (it still reads its 512 MiB), and once both have, the owner's sync
 * gives back exactly 240 pages of 2 MiB (the test's own count, pages_taken()).
 *
 * Then the edges: a grow the pool cannot hold fails with HPSHM_ENOMEM and its fix and changes
 * nothing; providers that cannot resize say which can; only the owner resizes; a fork()
 * child counts as a process that has not synced; an unrelated process that opens a named
 * resizable segment by name syncs like a re-attached one; the key and the sizes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "resize_child.h"

#ifndef HPSHM_RESIZE_CHILD
#error "HPSHM_RESIZE_CHILD must name the built resize_child program"
#endif

#define MIB ((size_t)1 << 20)
#define HUGE_2M (2 * MIB)

TestSuite(resize, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

/* ---- a child started by exec, driven one command at a time ---- */

struct kid {
	hpshm_child child;
	FILE       *cmd, *rep;
};

static void kid_start(const hpshm_segment *seg, struct kid *k)
{
	char path[] = HPSHM_RESIZE_CHILD, a[16], b[16];
	char *argv[] = { path, a, b, NULL };
	int cmd[2], rep[2], rc;
	hpshm_spawn_options opt;
	intptr_t handles[2];
	hpshm_error err;

	cr_assert_eq(pipe2(cmd, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(rep, O_CLOEXEC), 0);
	snprintf(a, sizeof a, "%d", cmd[0]);
	snprintf(b, sizeof b, "%d", rep[1]);
	handles[0] = cmd[0];
	handles[1] = rep[1];
	memset(&opt, 0, sizeof opt);
	opt.version = HPSHM_SPAWN_OPTIONS_VERSION;
	opt.handles = handles;
	opt.nhandles = 2;
	/* A test that fails leaves no child behind; where the system cannot promise it, without. */
	opt.flags = HPSHM_SPAWN_KILL_WITH_PARENT;
	rc = hpshm_child_spawn_ex(seg, path, argv, NULL, &opt, &k->child, &err);
	if (rc == HPSHM_ENOTSUP) {
		opt.flags = 0;
		rc = hpshm_child_spawn_ex(seg, path, argv, NULL, &opt, &k->child, &err);
	}
	cr_assert_eq(rc, 0, "hpshm_child_spawn_ex: %s: %s", hpshm_errname(rc), err.message);
	close(cmd[0]);
	close(rep[1]);
	k->cmd = fdopen(cmd[1], "w");
	k->rep = fdopen(rep[0], "r");
	cr_assert(k->cmd && k->rep);
}

/* Send one command (NULL: only read) and read the reply line into buf ("" if the child ended). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static const char *kid_say(struct kid *k, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vfprintf(k->cmd, fmt, ap);
		va_end(ap);
		fputc('\n', k->cmd);
		fflush(k->cmd);
	}
	if (!fgets(buf, (int)len, k->rep))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Tell the child to quit (if quit) and wait: its exit code, or 128 + the signal that ended it. */
static int kid_end(struct kid *k, int quit)
{
	hpshm_error err;
	int status = -1, rc;

	if (quit) {
		fputs("quit\n", k->cmd);
		fflush(k->cmd);
	}
	fclose(k->cmd);
	fclose(k->rep);
	rc = hpshm_child_wait(&k->child, &status, &err);
	cr_assert_eq(rc, 0, "hpshm_child_wait: %s", err.message);
	return status; /* the exit code, or 128 + the signal */
}

/* ---- the owner's side ---- */

static void write_pattern(void *base, size_t from, size_t to)
{
	for (size_t o = from; o + 8 <= to; o += 8) {
		uint64_t w = resize_pattern(o);

		memcpy((char *)base + o, &w, sizeof w);
	}
}

static int pattern_holds(const void *base, size_t from, size_t to)
{
	for (size_t o = from; o + 8 <= to; o += 8) {
		uint64_t w;

		memcpy(&w, (const char *)base + o, sizeof w);
		if (w != resize_pattern(o))
			return 0;
	}
	return 1;
}

/*
 * A resizable segment of size bytes under "provider=P,max_size=MAX,reattach=exec" and extra,
 * or a skip (a failure when the run requires the provider) when P cannot work here.
 */
static hpshm_segment *create_resizable(const char *provider, size_t size, const char *max, const char *extra,
				       unsigned long pages)
{
	const char *mnt = hpt_test_hugetlbfs(HUGE_2M);
	int huge = strcmp(provider, "plain") != 0;
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	struct hpt_pool pool;
	hpshm_error err;
	int rc;

	if (huge && (hpt_pool_read(HUGE_2M, &pool) < 0 || hpt_pool_available(&pool) < pages))
		HPT_UNAVAILABLE_PAGES(provider, "2MiB", pages, "%s: needs %lu free 2MiB pages (vm.nr_hugepages)",
				      provider, pages);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=%s,max_size=%s,reattach=exec%s%s%s%s", provider, max,
			  huge ? ",huge_page_size=2MiB" : "", mnt && strcmp(provider, "hugetlbfs") == 0 ? ",hugetlbfs_path=" : "",
			  mnt && strcmp(provider, "hugetlbfs") == 0 ? mnt : "", extra);
	rc = hpshm_segment_create(&seg, size, cfg, &err);
	hpshm_config_free(cfg);
	if (rc == HPSHM_EUNAVAILABLE || rc == HPSHM_ENOHUGE)
		HPT_UNAVAILABLE(provider, huge ? "2MiB" : NULL, "%s: %s", provider, err.message);
	cr_assert_eq(rc, 0, "create %s: %s: %s (%s)", provider, hpshm_errname(rc), err.message, err.hint);
	return seg;
}

/*
 * The 2 MiB pages the test's pages take from the pool: those faulted in (fallocate counts) and
 * charged to its own cgroup, so a neighbour's pages change nothing; without a cgroup of its
 * own, the pool's pages not free, which a neighbour changes too.
 */
static long pages_taken(void)
{
	struct hpt_charge ch;
	struct hpt_pool pool;

	if (hpt_charge_read(HUGE_2M, &ch) == 0)
		return (long)ch.faulted;
	cr_assert_eq(hpt_pool_read(HUGE_2M, &pool), 0);
	return (long)(pool.total - pool.free);
}

/* Why the cases that count other processes' slots skip under qemu-user. */
#define RESIZE_EMULATED                                                                              \
	"a process under qemu-user reads another start time for itself than its parent reads for it, " \
	"so its slot in the table looks like a dead process's (the native run is the one that counts)"

/* The i686 loader runs the program natively: only qemu-user's fake /proc/self/stat matters. */
static void skip_under_qemu(void)
{
	const char *emu = hpt_emulator();

	if (emu && strstr(emu, "qemu"))
		HPT_SKIP("under %s: %s", emu, RESIZE_EMULATED);
}

/* The acceptance case (the file's comment) for one provider. */
static void grow_and_shrink_with_children(const char *provider, const char *extra)
{
	int huge = strcmp(provider, "plain") != 0;
	struct kid kids[2];
	hpshm_segment *seg;
	hpshm_error err;
	char line[512], want[64];
	long before, held;
	unsigned char *base;

	skip_under_qemu();
	/* 512 MiB and the tail's page at the peak, as 2 MiB pages. */
	seg = create_resizable(provider, 64 * MIB, "1GiB", extra, 257);
	base = hpshm_segment_address(seg);
	cr_assert_eq(hpshm_segment_size(seg), 64 * MIB);
	cr_assert_eq(hpshm_segment_max_size(seg), 1024 * MIB);
	write_pattern(base, 0, 64 * MIB);
	for (int i = 0; i < 2; i++) {
		kid_start(seg, &kids[i]);
		snprintf(want, sizeof want, "attached %zu %p", 64 * MIB, (void *)base);
		cr_assert_str_eq(kid_say(&kids[i], line, sizeof line, NULL), want);
	}

	/* Grow: the owner's new range is there at once, the children's after their sync. */
	cr_assert_eq(hpshm_segment_resize(seg, 512 * MIB, &err), 0, "grow: %s (%s)", err.message, err.hint);
	cr_assert_eq(hpshm_segment_size(seg), 512 * MIB);
	cr_assert_eq(hpshm_segment_address(seg), base, "the address never changes");
	write_pattern(base, 64 * MIB, 512 * MIB);
	cr_assert_str_eq(kid_say(&kids[0], line, sizeof line, "read 0 %zu", 64 * MIB), "ok",
			 "a child that has not synced reads its old range");
	cr_assert_str_eq(kid_say(&kids[0], line, sizeof line, "size"), "size 67108864 1073741824");
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof want, "synced %zu", 512 * MIB);
		cr_assert_str_eq(kid_say(&kids[i], line, sizeof line, "sync"), want);
		cr_assert_str_eq(kid_say(&kids[i], line, sizeof line, "read %zu %zu", 64 * MIB, 448 * MIB), "ok",
				 "child %d reads the pattern past the old end", i);
	}

	/* Shrink: nothing is given back while a child may still touch its 512 MiB. */
	before = huge ? pages_taken() : 0;
	cr_assert_eq(hpshm_segment_resize(seg, 32 * MIB, &err), 0, "shrink: %s", err.message);
	cr_assert_eq(hpshm_segment_size(seg), 32 * MIB);
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0);
	if (huge)
		cr_assert_eq(pages_taken(), before, "pages went back before the children synced");
	cr_assert_str_eq(kid_say(&kids[1], line, sizeof line, "read 0 %zu", 512 * MIB), "ok",
			 "a child that has not synced still reads its old range");
	snprintf(want, sizeof want, "synced %zu", 32 * MIB);
	cr_assert_str_eq(kid_say(&kids[0], line, sizeof line, "sync"), want);
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0);
	if (huge)
		cr_assert_eq(pages_taken(), before, "pages went back while child 1 had not synced");
	cr_assert_str_eq(kid_say(&kids[1], line, sizeof line, "sync"), want);
	cr_assert_str_eq(kid_say(&kids[1], line, sizeof line, "read 0 %zu", 32 * MIB), "ok");
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0, "the owner's sync gives the pages back: %s", err.message);
	if (huge) {
		held = pages_taken();
		cr_assert_eq(before - held, 240, "the shrink gave %ld pages of 2 MiB back to the pool, not 240",
			     before - held);
	}
	cr_assert(pattern_holds(base, 0, 32 * MIB));

	/* Past its size a synced child faults (SIGSEGV), as past any mapping. */
	kid_say(&kids[0], line, sizeof line, "touch %zu", 40 * MIB);
	cr_assert_eq(kid_end(&kids[0], 0), RESIZE_CHILD_FAULTED, "the touch past the size did not fault: %s", line);
	cr_assert_eq(kid_end(&kids[1], 1), 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(resize, memfd_hugetlb_grows_and_shrinks_under_two_children, .timeout = 120)
{
	grow_and_shrink_with_children("memfd_hugetlb", "");
}

Test(resize, hugetlbfs_grows_and_shrinks_under_two_children, .timeout = 120)
{
	grow_and_shrink_with_children("hugetlbfs", "");
}

Test(resize, named_hugetlbfs_grows_and_shrinks_under_two_children, .timeout = 120)
{
	char extra[64];

	snprintf(extra, sizeof extra, ",name=resize-%ld", (long)getpid());
	grow_and_shrink_with_children("hugetlbfs", extra);
}

Test(resize, plain_grows_and_shrinks_under_two_children, .timeout = 120)
{
	grow_and_shrink_with_children("plain", "");
}

/* ---- the edges ---- */

/*
 * A grow the pool cannot hold fails with HPSHM_ENOMEM and the operator's fix, and changes
 * nothing: the size, the bytes, the pages held.  The shortage is the test's own cgroup limit
 * where it has one (no neighbour can spoil it), else the real pool's free pages.
 */
static void grow_beyond_the_pool(const char *threads)
{
	/* An address range the pool cannot fill, which a 32-bit process has room for too. */
	hpshm_segment *seg = create_resizable("memfd_hugetlb", 8 * MIB, sizeof(size_t) >= 8 ? "64GiB" : "1GiB", threads, 8);
	unsigned char *base = hpshm_segment_address(seg);
	struct hpt_pool pool;
	hpshm_error err;
	size_t target;
	char limit[32];
	long held;
	int rc;

	write_pattern(base, 0, 8 * MIB);
	held = pages_taken();
	snprintf(limit, sizeof limit, "%ld", (held + 4) * (long)HUGE_2M);
	if (hpt_limit_huge_faults(HUGE_2M, limit) == 0) {
		target = 64 * MIB; /* 28 pages more, 4 allowed */
	} else {
		cr_assert_eq(hpt_pool_read(HUGE_2M, &pool), 0);
		target = 8 * MIB + (hpt_pool_available(&pool) + 16) * HUGE_2M;
		if (target > hpshm_segment_max_size(seg))
			HPT_SKIP("the pool is larger than the range this test may reserve, and the test has no "
				 "cgroup of its own to limit it");
	}
	rc = hpshm_segment_resize(seg, target, &err);
	cr_assert_eq(rc, HPSHM_ENOMEM, "a grow beyond the pages there are: %s: %s", hpshm_errname(rc), err.message);
	cr_assert(err.hint[0] != '\0', "no fix for %s", err.message);
	cr_assert(hpt_contains(err.hint, "hugetlb") || hpt_contains(err.hint, "nr_hugepages"), "%s", err.hint);
	cr_assert_eq(hpshm_segment_size(seg), 8 * MIB);
	cr_assert(pattern_holds(base, 0, 8 * MIB));
	cr_assert_eq(pages_taken(), held, "the failed grow kept pages");
	/* And what fits still grows. */
	cr_assert_eq(hpshm_segment_resize(seg, 12 * MIB, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	(void)hpt_limit_huge_faults(HUGE_2M, "max");
}

/* Pages taken by fallocate() in the calling thread. */
Test(resize, a_grow_the_pool_cannot_hold_changes_nothing, .timeout = 60)
{
	grow_beyond_the_pool(",populate_threads=1");
}

/* Pages taken by faults split over threads (what populate_threads=auto does for a large grow). */
Test(resize, a_threaded_grow_the_pool_cannot_hold_changes_nothing, .timeout = 60)
{
	grow_beyond_the_pool(",populate_threads=2");
}

Test(resize, sysv_hugetlb_names_the_providers_that_can, .timeout = 60)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	struct hpt_pool pool;
	hpshm_error err;
	int rc;

	if (hpt_pool_read(HUGE_2M, &pool) < 0 || hpt_pool_available(&pool) < 2)
		HPT_UNAVAILABLE_PAGES("sysv_hugetlb", "2MiB", 2, "needs 2 free 2MiB pages (vm.nr_hugepages)");
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=sysv_hugetlb,huge_page_size=2MiB");
	rc = hpshm_segment_create(&seg, 2 * MIB, cfg, &err);
	hpshm_config_free(cfg);
	if (rc == HPSHM_EUNAVAILABLE || rc == HPSHM_ENOHUGE)
		HPT_UNAVAILABLE("sysv_hugetlb", "2MiB", "sysv_hugetlb: %s", err.message);
	cr_assert_eq(rc, 0, "%s", err.message);
	rc = hpshm_segment_resize(seg, 4 * MIB, &err);
	cr_assert_eq(rc, HPSHM_ENOTSUP);
	cr_assert(hpt_contains(err.message, "sysv_hugetlb") && hpt_contains(err.message, "memfd_hugetlb") &&
		  hpt_contains(err.message, "hugetlbfs"), "%s", err.message);
	cr_assert_eq(hpshm_segment_size(seg), 2 * MIB);
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0, "a segment that cannot resize is always in sync");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* Asked of a provider that cannot, max_size is the configuration's contradiction. */
Test(resize, max_size_with_a_provider_that_cannot_is_refused)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=sysv_hugetlb,max_size=1GiB");
	rc = hpshm_segment_create(&seg, 2 * MIB, cfg, &err);
	hpshm_config_free(cfg);
	cr_assert_eq(rc, HPSHM_EVALUE);
	cr_assert_null(seg);
	cr_assert_str_eq(err.key, "max_size");
	cr_assert(hpt_contains(err.message, "memfd_hugetlb") && hpt_contains(err.message, "plain"), "%s", err.message);
}

Test(resize, a_segment_without_max_size_says_how_to_get_one)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_config_parsef(cfg, "provider=plain");
	cr_assert_eq(hpshm_segment_create(&seg, MIB, cfg, &err), 0, "%s", err.message);
	hpshm_config_free(cfg);
	cr_assert_eq(hpshm_segment_max_size(seg), 0);
	cr_assert_eq(hpshm_segment_resize(seg, 2 * MIB, &err), HPSHM_ENOTSUP);
	cr_assert(hpt_contains(err.message, "max_size") && hpt_contains(err.hint, "max_size"), "%s / %s", err.message,
		  err.hint);
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0);
	cr_assert_eq(hpshm_segment_size(seg), MIB);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(resize, sizes_are_whole_pages_within_max_size)
{
	hpshm_segment *seg = create_resizable("plain", MIB, "16MiB", "", 0);
	size_t page = hpshm_base_page_size();
	hpshm_error err;

	cr_assert_eq(hpshm_segment_resize(seg, 0, &err), HPSHM_EVALUE);
	cr_assert_eq(hpshm_segment_resize(seg, 16 * MIB + 1, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "max_size");
	cr_assert(hpt_contains(err.message, "16MiB"), "%s", err.message);
	cr_assert_eq(hpshm_segment_size(seg), MIB, "a refused resize changed the size");
	cr_assert_eq(hpshm_segment_resize(seg, 1, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_size(seg), page);
	cr_assert_eq(hpshm_segment_resize(seg, 16 * MIB, &err), 0, "%s", err.message);
	memset(hpshm_segment_address(seg), 0xa5, 16 * MIB);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(resize, the_key_reads_back_and_bounds_the_create)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char buf[64];

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_gt(hpshm_config_get(cfg, "max_size", buf, sizeof buf), 0);
	cr_assert_str_eq(buf, "off");
	cr_assert_eq(hpshm_config_set(cfg, "max_size", "1GiB", &err), 0);
	hpshm_config_get(cfg, "max_size", buf, sizeof buf);
	cr_assert_str_eq(buf, "1GiB");
	cr_assert_eq(hpshm_config_set(cfg, "max_size", "1000000", &err), 0);
	hpshm_config_get(cfg, "max_size", buf, sizeof buf);
	cr_assert_str_eq(buf, "1000000");
	cr_assert_eq(hpshm_config_set(cfg, "max_size", "lots", &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "max_size");
	cr_assert_eq(hpshm_config_set_max_size(cfg, (size_t)3 << 20, &err), 0);
	hpshm_config_get(cfg, "max_size", buf, sizeof buf);
	cr_assert_str_eq(buf, "3MiB");
	hpt_config_parsef(cfg, "provider=plain");
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), HPSHM_EVALUE, "a size above max_size");
	cr_assert_str_eq(err.key, "max_size");
	cr_assert(hpt_contains(err.message, "smaller than"), "%s", err.message);
	cr_assert_eq(hpshm_config_set(cfg, "max_size", "off", &err), 0);
	hpshm_config_get(cfg, "max_size", buf, sizeof buf);
	cr_assert_str_eq(buf, "off");
	hpshm_config_free(cfg);
}

/* Only the creator resizes: a process it forked is told so, and changes nothing. */
Test(resize, only_the_owner_resizes)
{
	hpshm_segment *seg = create_resizable("plain", MIB, "8MiB", "", 0);
	hpshm_error err;
	int status;
	pid_t pid;

	pid = hpt_fork();
	if (pid == 0) {
		int rc = hpshm_segment_resize(seg, 4 * MIB, &err);

		_exit(rc == HPSHM_EACCES && strstr(err.hint, "hpshm_segment_sync") ? 0 : 1);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child could resize, or was not told why");
	cr_assert_eq(hpshm_segment_size(seg), MIB);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/*
 * A process made by fork() maps what its parent mapped: until it syncs, a shrink's pages stay
 * for it (the fork handlers gave it a slot).  Punched pages of a memfd would read back as
 * zeros, so the child's pattern check tells whether they went.
 */
Test(resize, a_fork_child_keeps_its_range_until_it_syncs, .timeout = 60)
{
	skip_under_qemu();
	hpshm_segment *seg = create_resizable("plain", 64 * MIB, "256MiB", "", 0);
	unsigned char *base = hpshm_segment_address(seg);
	int go[2], done[2], status;
	hpshm_error err;
	char c = 0;
	pid_t pid;

	write_pattern(base, 0, 64 * MIB);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(done), 0);
	pid = hpt_fork();
	if (pid == 0) {
		int rc = 0;

		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (!pattern_holds(base, 0, 64 * MIB))
			rc = 3;
		else if (hpshm_segment_sync(seg, &err) < 0 || hpshm_segment_size(seg) != 16 * MIB)
			rc = 4;
		if (write(done[1], &c, 1) != 1)
			_exit(5);
		if (read(go[0], &c, 1) != 1)
			_exit(6);
		_exit(rc);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(hpshm_segment_resize(seg, 16 * MIB, &err), 0, "%s", err.message);
	cr_assert_eq(write(go[1], &c, 1), 1);
	cr_assert_eq(read(done[0], &c, 1), 1);
	/* Synced and alive: the owner may give the pages back now. */
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0, "%s", err.message);
	cr_assert_eq(write(go[1], &c, 1), 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the child died of signal %d", WTERMSIG(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "child step %d failed (3: the shrink's pages went before it synced)",
		     WEXITSTATUS(status));
	cr_assert(pattern_holds(base, 0, 16 * MIB));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* A process that opens a named resizable segment by name syncs like one that attached. */
Test(resize, a_segment_opened_by_name_follows_its_owner, .timeout = 60)
{
	char extra[64], name[48];
	hpshm_segment *seg;
	hpshm_error err;
	int go[2], ready[2], status;
	char c = 0;
	pid_t pid;

	snprintf(name, sizeof name, "resize-open-%ld", (long)getpid());
	snprintf(extra, sizeof extra, ",name=%s", name);
	seg = create_resizable("plain", 8 * MIB, "64MiB", extra, 0);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(ready), 0);
	pid = hpt_fork();
	if (pid == 0) {
		hpshm_segment *mine = NULL;
		hpshm_config *cfg = NULL;
		int rc = 0;

		if (hpshm_config_new(&cfg) < 0 || hpshm_config_set(cfg, "provider", "plain", &err) < 0 ||
		    hpshm_segment_open(&mine, name, cfg, &err) < 0)
			_exit(2);
		if (hpshm_segment_size(mine) != 8 * MIB || hpshm_segment_max_size(mine) != 64 * MIB)
			_exit(3);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(4);
		if (hpshm_segment_sync(mine, &err) < 0 || hpshm_segment_size(mine) != 32 * MIB)
			rc = 5;
		else if (!pattern_holds(hpshm_segment_address(mine), 0, 32 * MIB))
			rc = 6;
		hpshm_segment_detach(mine);
		_exit(rc);
	}
	cr_assert_gt(pid, 0);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		cr_assert_fail("the opener failed at step %d", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	cr_assert_eq(hpshm_segment_resize(seg, 32 * MIB, &err), 0, "%s", err.message);
	write_pattern(hpshm_segment_address(seg), 0, 32 * MIB);
	cr_assert_eq(write(go[1], &c, 1), 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the opener failed at step %d",
		  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}
