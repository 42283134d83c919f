/* SPDX-License-Identifier: MIT */
/*
 * tests/test_resize_crash.c -- SIGKILL in the middle of grow/shrink cycles (issue 24): a
 * resizable named segment whose creator is killed at any point of a resize opens at its last
 * published size, every page of that size is there and readable, a process that stays
 * attached keeps a consistent size and never faults, and gc gives everything back.
 *
 * Each round forks a creator (hpt_fork(); the creator and the reader are in resize_storm.c)
 * that creates a named segment with max_size (plain through /dev/shm on 4 KiB pages always;
 * hugetlbfs on 2 MiB pages when the pool and a mount allow, else a skip with the reason),
 * stamps the first word of every page it gains (RSTORM_STAMP(i)), and resizes to random sizes
 * until it dies.  It records in a shared log the size its last resize returned with and the
 * size of the resize in progress, so the test knows which sizes a kill may leave published:
 * one of those two, never another.  Four storms:
 *   random  the test kills the creator 0-3 ms into its loop (kills land inside the calls);
 *   points  the creator kills itself right before or after its k-th fallocate (a grow's
 *           commit, a shrink's PUNCH_HOLE: the published size must then be the old size, or
 *           the new one, exactly) or right after its k-th resize returns;
 *   reader  a second process opens the segment and loops (a sync before one loop in
 *           RSTORM_SYNC_EVERY, the size, every page read) while the creator is killed: it
 *           must never fault, never find a page it saw stamped since its last sync given
 *           back under it (across a sync the pages past the smallest size it applied may be
 *           new ones: resize_read.c), and end up at the size the object publishes;
 *   exec    the same reader started by the creator by a real exec (hpshm_child_spawn(),
 *           reattach_child resize-read), which attaches with the token while the creator
 *           resizes, outlives it (the test is its subreaper) and writes each size it synced to
 *           on a pipe: the re-attach storms, extended to resize.
 * After each kill the test opens the segment by name, checks the size (whole pages, at most
 * max_size, one of the two the log allows), reads every page under a SIGSEGV/SIGBUS guard
 * (a fault is a failure that names the offset, not a crash of the test), checks that the
 * read allocated nothing (st_blocks: every page of the published size was taken before it
 * was published; the mapping is MAP_NORESERVE, so a read of a hole would take a page
 * silently), detaches, and removes the dead object with the gc logic
 * (hpshm_objects_remove(); in the fixture's sandbox, which shows it only the test's objects,
 * the real `hpshm gc` every GC_TOOL_EVERY rounds).  The huge pages the test holds (its
 * cgroup's count: fixture.h) must be back where they were after every round, and nothing
 * named with the test's prefix may remain.  1,000 kills take about 7 s on two cores.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "reattach_child.h"
#include "resize_storm.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif
#ifndef HPSHM_REATTACH_CHILD
#error "HPSHM_REATTACH_CHILD must name the built reattach_child program"
#endif

/* Kills per storm and kind; 1,000 in all with a pool (issue 24's acceptance). */
#define RANDOM_PLAIN   250
#define RANDOM_HUGE    200
#define POINTS_PLAIN   100
#define POINTS_HUGE    150
#define READER_PLAIN   100
#define READER_HUGE    100
#define EXEC_PLAIN     50
#define EXEC_HUGE      50
#define POINT_STEPS    8     /* resizes a creator of the points storm makes */
#define GC_TOOL_EVERY  50    /* every so many rounds the real `hpshm gc` removes the dead object */
#define SEED           0x24c0ffeeULL

TestSuite(resize_crash, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

/* ---- the kinds of segment ---- */

/* ---- the PRNG, and the log the creator and reader keep for the test ---- */

static uint64_t rng = SEED;

/* ---- the storm's counts ---- */

static long held_before;   /* the test's huge pages before its storm, -1 when only the machine's count exists */
static int  use_tool;      /* the real `hpshm gc` may run: the fixture's sandbox shows it only the test's objects */
static unsigned long kills, mid_resize, total_resizes, tool_runs;

/* ---- failures, recorded so the test cleans up before it fails ---- */

static char first_failure[2048];
static char prefix[64];

static void failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void failed(const char *fmt, ...)
{
	va_list ap;

	if (first_failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(first_failure, sizeof first_failure, fmt, ap);
	va_end(ap);
}

#define CHECK(cond, ...)                     \
	do {                                 \
		if (!(cond)) {               \
			failed(__VA_ARGS__); \
			return -1;           \
		}                            \
	} while (0)

/* ---- this test's objects, and gc ---- */

struct found {
	const char  *name;  /* the one wanted, or NULL for every one of this test's */
	hpshm_object obj;   /* the (last) one found */
	int          n;     /* how many */
};

static int collect(void *user, const hpshm_object *o)
{
	struct found *f = user;

	if (f->name ? strcmp(o->name, f->name) == 0 : strncmp(o->name, prefix, strlen(prefix)) == 0) {
		f->obj = *o;
		f->n++;
	}
	return 0;
}

static int find(const char *name, struct found *f)
{
	hpshm_error err;
	int rc;

	memset(f, 0, sizeof *f);
	f->name = name;
	rc = hpshm_objects_list(collect, f, &err);
	if (rc < 0)
		failed("hpshm_objects_list: %s: %s", hpshm_errname(rc), err.message);
	return f->n;
}

/* `hpshm gc`, the tool: 0 or 1 (something not ours could not be removed) is fine. */
static int tool_gc(void)
{
	char tool[] = HPSHM_TOOL_PATH, gc[] = "gc";
	char *argv[] = {tool, gc, NULL};
	int status;
	pid_t pid = hpt_fork();

	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, 1);
		execv(tool, argv);
		_exit(127);
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) <= 1,
	      "`hpshm gc` failed (status %#x)", status);
	return 0;
}

/* Remove the dead object o as gc does (the tool when tool is set), and check it is gone. */
static int gc_dead(const hpshm_object *o, int tool)
{
	char path[300];
	hpshm_error err;
	struct stat st;
	int rc;

	if (tool) {
		if (tool_gc() < 0)
			return -1;
		tool_runs++;
	} else {
		rc = hpshm_objects_remove(o, 0, &err);
		CHECK(rc == 0, "remove of the dead %s: %s: %s", o->id, hpshm_errname(rc), err.message);
	}
	CHECK(stat(rstorm_object_path(o, path, sizeof path), &st) < 0 && errno == ENOENT, "%s is still there after %s", path,
	      tool ? "`hpshm gc`" : "hpshm_objects_remove()");
	return 0;
}

/* The round's creator and reader while they run: a failed round leaves them to cleanup(). */
static pid_t running[2];

/* Kill what is left of the round's children, and remove what the rounds left. */
static void cleanup(void)
{
	struct found f;

	for (int i = 0; i < 2; i++)
		if (running[i] > 0) {
			(void)kill(running[i], SIGKILL); /* ours, not yet reaped */
			(void)waitpid(running[i], NULL, 0);
			running[i] = 0;
		}
	for (int i = 0; i < 8 && find(NULL, &f) > 0; i++) {
		char path[300];

		(void)hpshm_objects_remove(&f.obj, HPSHM_REMOVE_FORCE, NULL);
		(void)unlink(rstorm_object_path(&f.obj, path, sizeof path));
	}
}

/* ---- one round's checks ---- */

/* The segment a killed creator left: opens at a size the log allows, every page there. */
static int check_left(const struct rstorm_kind *k, const char *name, const char *path, int round, size_t *size_out)
{
	hpshm_config *cfg = rstorm_config(k, name, 0);
	hpshm_segment *seg = NULL;
	struct stat before, after;
	char why[256];
	hpshm_error err;
	size_t size, max;
	int rc;

	CHECK(cfg, "round %d: no configuration", round);
	rc = hpshm_segment_open(&seg, name, cfg, &err);
	hpshm_config_free(cfg);
	CHECK(rc == 0, "round %d: open of %s after its creator was killed: %s: %s", round, name, hpshm_errname(rc),
	      err.message);
	size = hpshm_segment_size(seg);
	max = hpshm_segment_max_size(seg);
	*size_out = size;
	rc = -1;
	if (max != k->max_pages * k->page)
		failed("round %d: %s opens with max_size %zu, created with %zu", round, name, max, k->max_pages * k->page);
	else if (size == 0 || size % k->page != 0 || size > max)
		failed("round %d: %s opens at %zu bytes: not whole %zu-byte pages up to %zu", round, name, size, k->page,
		       max);
	else if (size != rlog->done && size != rlog->target)
		failed("round %d: %s opens at %zu bytes; its creator was killed between %zu (last resize returned) and "
		       "%zu (the resize in progress)", round, name, size, rlog->done, rlog->target);
	else if (stat(path, &before) < 0)
		failed("round %d: %s: %s", round, path, strerror(errno));
	else if (rstorm_guarded_check(hpshm_segment_address(seg), size, k->page, why, sizeof why) < 0)
		failed("round %d: %s at %zu bytes (creator between %zu and %zu): %s", round, name, size, rlog->done,
		       rlog->target, why);
	else if (stat(path, &after) < 0 || after.st_blocks != before.st_blocks)
		failed("round %d: reading the published %zu bytes of %s took pages (%lld -> %lld blocks): published before "
		       "its pages were there", round, size, name, (long long)before.st_blocks, (long long)after.st_blocks);
	else
		rc = 0;
	(void)hpshm_segment_detach(seg);
	return rc;
}

/* ---- rounds ---- */


/* Fork a creator and wait until its segment exists: its pid, or -1 (the failure recorded). */
static pid_t start_creator(const struct rstorm_kind *k, const char *name, enum rstorm_point point, unsigned at,
			   unsigned steps, int spawn_fd, int round)
{
	uint64_t seed = rstorm_rnd(&rng) | 1;
	int status;
	pid_t c;

	rstorm_log_reset();
	rlog->spawn_fd = spawn_fd;
	c = hpt_fork();
	if (c == 0)
		rstorm_creator(k, name, seed, steps, point, at);
	running[0] = c;
	if (c < 0) {
		failed("round %d: fork: %s", round, strerror(errno));
		return -1;
	}
	for (int t = 0; !rlog->created; t++) {
		siginfo_t si;

		/* Ended?  Asked without reaping it: a creator may make its segment, run its steps and
		 * kill itself between two looks (a busy machine), and then end_creator() reaps it. */
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)c, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == c) {
			if (rlog->created)
				break;
			(void)waitpid(c, &status, 0);
			running[0] = 0;
			/* qemu-i386 passes its own smaps through, which shows base pages: hpshm refuses. */
			if (hpt_emulator() && rlog->rc == HPSHM_ENOHUGE && strstr(rlog->msg, "(smaps) reports"))
				HPT_SKIP("under %s huge pages cannot be verified (the smaps it passes through is its "
					 "own): the creator was refused cleanly: %s", hpt_emulator(), rlog->msg);
			failed("round %d: the creator of %s ended before its segment existed (status %#x): %s: %s", round,
			       name, status, hpshm_errname(rlog->rc), rlog->msg);
			return -1;
		}
		if (t == RSTORM_PATIENCE_S * 10000) {
			failed("round %d: the creator of %s did not create it in %d s", round, name, RSTORM_PATIENCE_S);
			return -1;
		}
		usleep(100);
	}
	return c;
}

/* SIGKILL the creator, or (self) wait for it to kill itself, and see it die of it. */
static int end_creator(pid_t c, const char *name, int round, int self)
{
	int status;

	if (!self)
		(void)kill(c, SIGKILL); /* ours: the round forked it and has not reaped it */
	CHECK(waitpid(c, &status, 0) == c, "round %d: waitpid: %s", round, strerror(errno));
	running[0] = 0;
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "round %d: the creator of %s ended with status %#x instead of a SIGKILL: %s: %s", round, name, status,
	      hpshm_errname(rlog->rc), rlog->msg);
	kills++;
	total_resizes += rlog->resizes;
	mid_resize += rlog->done != rlog->target;
	return 0;
}

/* After the kill: the object is listed dead, opens as check_left() wants, gc takes it all back. */
static int after_kill(const struct rstorm_kind *k, const char *name, int round, size_t *size)
{
	char path[300];
	struct found f;

	CHECK(find(name, &f) == 1, "round %d: %s listed %d times after its creator was killed", round, name, f.n);
	CHECK(f.obj.alive == 0, "round %d: %s listed %s after its creator was killed (%s)", round, name,
	      f.obj.alive > 0 ? "alive" : "foreign", f.obj.note);
	if (check_left(k, name, rstorm_object_path(&f.obj, path, sizeof path), round, size) < 0)
		return -1;
	if (gc_dead(&f.obj, use_tool && round % GC_TOOL_EVERY == GC_TOOL_EVERY - 1) < 0)
		return -1;
	if (held_before >= 0 && k->page != hpshm_base_page_size())
		CHECK(hpt_pages_held(k->page) == held_before,
		      "round %d: %ld huge pages held after gc removed %s, %ld before the storm (creator killed between "
		      "%zu and %zu bytes)", round, hpt_pages_held(k->page), name, held_before, rlog->done, rlog->target);
	return 0;
}

static void storm_begin(const struct rstorm_kind *k)
{
	struct hpt_charge ch;

	snprintf(prefix, sizeof prefix, "rcrash%ld-", (long)getpid());
	first_failure[0] = '\0';
	rng = SEED;
	kills = mid_resize = total_resizes = tool_runs = 0;
	/* The sandbox's namespaces come with its cgroup, or neither (fixture.c): without them the
	 * tool would remove other programs' dead segments, so the test removes its own alone. */
	use_tool = hpt_test_cgroup() != NULL;
	held_before = k->page != hpshm_base_page_size() && hpt_charge_read(k->page, &ch) == 0 ? hpt_pages_held(k->page) : -1;
	if (k->page != hpshm_base_page_size() && held_before < 0)
		cr_log_info("no hugetlb cgroup of the test's own: the pool is judged by the fixture at the end only");
}

static void storm_end(const struct rstorm_kind *k, const char *storm, int want)
{
	struct found f;

	cleanup();
	if (first_failure[0])
		cr_assert_fail("%s (%s, %zu-byte pages)", first_failure, k->provider, k->page);
	cr_assert_eq(find(NULL, &f), 0, "%d objects named %s* are left (%s)", f.n, prefix, f.obj.id);
	if (held_before >= 0)
		cr_assert_eq(hpt_pages_held(k->page), held_before, "huge pages held after the storm");
	cr_assert_eq(kills, (unsigned long)want);
	cr_log_info("%s storm on %s: %lu creators killed, %lu of them inside a resize or the stamping after it, %lu "
		    "resizes in all, %lu dead segments removed by `hpshm gc`", storm, k->provider, kills, mid_resize,
		    total_resizes, tool_runs);
}

/* The test kills the creator 0-3 ms into its grow/shrink loop. */
static void random_storm(const struct rstorm_kind *k, int rounds)
{
	storm_begin(k);
	for (int r = 0; r < rounds && !first_failure[0]; r++) {
		char name[96];
		size_t size;
		pid_t c;

		snprintf(name, sizeof name, "%s%c%d", prefix, k->provider[0], r);
		c = start_creator(k, name, RSTORM_NONE, 0, 0, -1, r);
		if (c < 0)
			break;
		usleep((useconds_t)(rstorm_rnd(&rng) % (rstorm_rnd(&rng) % 2 ? 300 : 3000)));
		if (end_creator(c, name, r, 0) < 0 || after_kill(k, name, r, &size) < 0)
			break;
	}
	storm_end(k, "random", rounds);
}

/* The creator kills itself right before or after its k-th fallocate, or after its k-th resize. */
static void points_storm(const struct rstorm_kind *k, int rounds)
{
	storm_begin(k);
	for (int r = 0; r < rounds && !first_failure[0]; r++) {
		enum rstorm_point point = (enum rstorm_point)(1 + r % 3);
		unsigned at = 1 + (unsigned)(rstorm_rnd(&rng) % POINT_STEPS);
		char name[96];
		size_t size;
		pid_t c;

		snprintf(name, sizeof name, "%s%c%d", prefix, k->provider[0], r);
		c = start_creator(k, name, point, at, POINT_STEPS, -1, r);
		if (c < 0 || end_creator(c, name, r, 1) < 0 || after_kill(k, name, r, &size) < 0)
			break;
		/* A grow's commit comes before its publish, a shrink's PUNCH_HOLE after it. */
		if (rlog->died_mode >= 0 && size != ((rlog->died_mode & 0x2) ? rlog->target : rlog->done))
			failed("round %d: killed %s a fallocate(mode %#x) of a resize from %zu to %zu, %s opens at %zu bytes",
			       r, point == RSTORM_BEFORE_FALLOCATE ? "before" : "after", rlog->died_mode, rlog->done, rlog->target,
			       name, size);
	}
	storm_end(k, "points", rounds);
}

/* Why the reader ended before it was told to (its exit codes: resize_storm.h). */
static void reader_failed(int status, int round)
{
	static const char *const why[] = {
		[RSTORM_EOPEN] = "its open failed", [RSTORM_ESYNC] = "its sync failed",
		[RSTORM_ESIZE] = "its size is not whole pages up to max_size",
		[RSTORM_ESTAMP] = "a page holds neither zero nor its stamp",
		[RSTORM_ELOST] = "a page it had seen stamped reads zero: given back while it could still touch it",
	};
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;

	if (WIFSIGNALED(status))
		failed("round %d: the attached reader died of signal %d (%s) at size %zu", round, WTERMSIG(status),
		       strsignal(WTERMSIG(status)), rlog->reader_size);
	else if (code == RSTORM_ELOST)
		failed("round %d: the attached reader at size %zu: %s (page %d; the creator's table: %s)", round,
		       rlog->reader_size, why[code], rlog->rc, rlog->table[0] ? rlog->table : "no slot freed");
	else
		failed("round %d: the attached reader exited %d at size %zu: %s (%s: %s)", round, code, rlog->reader_size,
		       code <= RSTORM_ELOST && why[code] ? why[code] : "?", hpshm_errname(rlog->rc), rlog->msg);
}

/* Wait until the reader finished n loops; 0, or -1 (it ended, or RSTORM_PATIENCE_S passed: recorded). */
static int reader_wait(pid_t rd, unsigned long n, int round)
{
	int status;

	for (int t = 0; rlog->reads < n; t++) {
		if (waitpid(rd, &status, WNOHANG) == rd) {
			running[1] = 0;
			reader_failed(status, round);
			return -1;
		}
		CHECK(t < RSTORM_PATIENCE_S * 10000, "round %d: the attached reader made no progress in %d s", round,
		      RSTORM_PATIENCE_S);
		usleep(100);
	}
	return 0;
}

/* The attached reader survives the kill, then ends at the size the object publishes. */
static int reader_round(const struct rstorm_kind *k, const char *name, int round)
{
	useconds_t delay = (useconds_t)(rstorm_rnd(&rng) % (rstorm_rnd(&rng) % 2 ? 300 : 3000));
	struct found f;
	hpshm_error err;
	size_t size;
	int status, rc;
	pid_t c, rd;

	c = start_creator(k, name, RSTORM_NONE, 0, 0, -1, round);
	if (c < 0)
		return -1;
	rd = hpt_fork();
	if (rd == 0)
		rstorm_reader(k, name);
	running[1] = rd;
	CHECK(rd > 0, "round %d: fork: %s", round, strerror(errno));
	if (reader_wait(rd, 1, round) < 0)
		return -1;
	usleep(delay);
	if (end_creator(c, name, round, 0) < 0 || reader_wait(rd, rlog->reads + 2, round) < 0)
		return -1;
	/* held by the reader: listed alive, and gc keeps it */
	CHECK(find(name, &f) == 1 && f.obj.alive == 1, "round %d: %s not listed alive while the reader holds it", round,
	      name);
	rc = hpshm_objects_remove(&f.obj, 0, &err);
	CHECK(rc == HPSHM_EEXIST, "round %d: remove of %s held by the reader: %s", round, name, hpshm_errname(rc));
	rlog->reader_stop = 1;
	rc = (int)waitpid(rd, &status, 0);
	running[1] = 0;
	if (rc != rd || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		reader_failed(status, round);
		return -1;
	}
	if (after_kill(k, name, round, &size) < 0)
		return -1;
	CHECK(rlog->reader_size == size, "round %d: the reader synced to %zu bytes after the creator was killed, %s "
	      "publishes %zu", round, rlog->reader_size, name, size);
	return 0;
}

static void reader_storm(const struct rstorm_kind *k, int rounds)
{
	const char *emu = hpt_emulator();

	/* The i686 loader runs the reader natively; qemu-user fakes /proc/self/stat. */
	if (emu && strstr(emu, "qemu"))
		HPT_SKIP("under %s: the forked reader reads another start time for itself than the creator "
			 "reads for it, so its slot looks like a dead process's (the native run is the one that "
			 "counts)", emu);
	storm_begin(k);
	for (int r = 0; r < rounds && !first_failure[0]; r++) {
		char name[96];

		snprintf(name, sizeof name, "%s%c%d", prefix, k->provider[0], r);
		if (reader_round(k, name, r) < 0)
			break;
	}
	storm_end(k, "reader", rounds);
}

/* ---- the reader started by exec from the creator, with its token (the re-attach storms) ---- */

/* The exec'd reader's end: it must exit 0 once the test closed its pipe. */
static int exec_reader_end(pid_t kid, int round)
{
	int status;

	CHECK(waitpid(kid, &status, 0) == kid, "round %d: waitpid of the exec'd reader %ld: %s", round, (long)kid,
	      strerror(errno));
	running[1] = 0;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "round %d: the exec'd reader %ld %s %d (reattach_child: %d is CHILD_ERESIZE + resize_storm.h's RSTORM_E*; "
	      "its stderr says why; the creator's table: %s)", round, (long)kid,
	      WIFSIGNALED(status) ? "died of signal" : "exited", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
	      CHILD_ERESIZE, rlog->table[0] ? rlog->table : "no slot freed");
	return 0;
}

/*
 * The creator starts a reader by exec (hpshm_child_spawn(), reattach_child resize-read),
 * which attaches with the token while the creator resizes; the creator is killed, the reader
 * must go on and end at the size the object publishes.
 */
static int exec_round(const struct rstorm_kind *k, const char *name, int round)
{
	useconds_t delay = (useconds_t)(rstorm_rnd(&rng) % (rstorm_rnd(&rng) % 2 ? 300 : 3000));
	uint64_t last = 0;
	struct found f;
	size_t size;
	int fds[2], got = 0;
	pid_t c;

	CHECK(pipe2(fds, O_CLOEXEC) == 0, "round %d: pipe2: %s", round, strerror(errno));
	(void)fcntl(fds[1], F_SETFD, 0); /* the write end crosses the creator's fork and its child's exec */
	c = start_creator(k, name, RSTORM_NONE, 0, 0, fds[1], round);
	close(fds[1]);
	if (c < 0) {
		close(fds[0]);
		return -1;
	}
	running[1] = (pid_t)rlog->kid;
	if (!rstorm_next_size(fds[0], &last)) {
		close(fds[0]);
		failed("round %d: the exec'd reader of %s wrote nothing in %d s", round, name, RSTORM_PATIENCE_S);
		return -1;
	}
	usleep(delay);
	if (end_creator(c, name, round, 0) < 0) {
		close(fds[0]);
		return -1;
	}
	/* What it wrote before the kill, then two sizes it synced to after it. */
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	while (read(fds[0], &last, sizeof last) == (ssize_t)sizeof last)
		;
	(void)fcntl(fds[0], F_SETFL, 0);
	while (got < 2 && rstorm_next_size(fds[0], &last))
		got++;
	if (got == 2 && (find(name, &f) != 1 || f.obj.alive != 1))
		failed("round %d: %s not listed alive while the exec'd reader holds it", round, name);
	close(fds[0]); /* the reader's next write fails (EPIPE): it detaches and exits */
	/* Its end first: a reader that stopped early says why by its exit status. */
	if (exec_reader_end((pid_t)rlog->kid, round) < 0 || first_failure[0])
		return -1;
	CHECK(got == 2, "round %d: the exec'd reader of %s stopped writing after its creator was killed", round, name);
	if (after_kill(k, name, round, &size) < 0)
		return -1;
	CHECK(last == size, "round %d: the exec'd reader synced to %llu bytes after the creator was killed, %s publishes "
	      "%zu", round, (unsigned long long)last, name, size);
	return 0;
}

static void exec_storm(const struct rstorm_kind *k, int rounds)
{
	int rc = prctl(PR_SET_CHILD_SUBREAPER, 1);

	/* The creator's exec'd child outlives it: it becomes the test's, to reap. */
	if (rc != 0 && errno == EINVAL)
		HPT_SKIP_UNDER_EMULATOR("prctl(PR_SET_CHILD_SUBREAPER) is not implemented (EINVAL), and the storm must "
					"reap the readers of the creators it kills");
	cr_assert_eq(rc, 0, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	storm_begin(k);
	for (int r = 0; r < rounds && !first_failure[0]; r++) {
		char name[96];

		snprintf(name, sizeof name, "%s%c%d", prefix, k->provider[0], r);
		if (exec_round(k, name, r) < 0)
			break;
	}
	storm_end(k, "exec", rounds);
}

/* ---- the tests ---- */

Test(resize_crash, random_kills_of_a_plain_creator_leave_its_last_published_size, .timeout = 120)
{
	struct rstorm_kind k = rstorm_plain();

	random_storm(&k, RANDOM_PLAIN);
}

Test(resize_crash, random_kills_of_a_hugetlbfs_creator_leave_its_last_published_size, .timeout = 120)
{
	struct rstorm_kind k = rstorm_huge();

	random_storm(&k, RANDOM_HUGE);
}

Test(resize_crash, a_plain_creator_killed_at_each_step_of_a_resize_leaves_the_size_it_published, .timeout = 120)
{
	struct rstorm_kind k = rstorm_plain();

	points_storm(&k, POINTS_PLAIN);
}

Test(resize_crash, a_hugetlbfs_creator_killed_at_each_step_of_a_resize_leaves_the_size_it_published, .timeout = 120)
{
	struct rstorm_kind k = rstorm_huge();

	points_storm(&k, POINTS_HUGE);
}

Test(resize_crash, an_attached_plain_reader_keeps_a_consistent_size_through_the_kills, .timeout = 120)
{
	struct rstorm_kind k = rstorm_plain();

	reader_storm(&k, READER_PLAIN);
}

Test(resize_crash, an_attached_hugetlbfs_reader_keeps_a_consistent_size_through_the_kills, .timeout = 120)
{
	struct rstorm_kind k = rstorm_huge();

	reader_storm(&k, READER_HUGE);
}

Test(resize_crash, a_plain_reader_started_by_exec_keeps_a_consistent_size_through_the_kills, .timeout = 120)
{
	struct rstorm_kind k = rstorm_plain();

	exec_storm(&k, EXEC_PLAIN);
}

Test(resize_crash, a_hugetlbfs_reader_started_by_exec_keeps_a_consistent_size_through_the_kills, .timeout = 120)
{
	struct rstorm_kind k = rstorm_huge();

	exec_storm(&k, EXEC_HUGE);
}

/*
 * A child the owner made by fork() that exec'd a program which maps nothing of the segment
 * must not keep a shrink's pages: its fork slot is freed once it no longer maps the segment
 * (7f3de89; found here too, before that landed).  hpshm_child_spawn() forks, so otherwise
 * every worker a server starts by exec would pin the size it had at the fork.
 */
Test(resize_crash, a_shrink_gives_its_pages_back_while_a_child_that_exec_d_lives, .timeout = 60)
{
	struct rstorm_kind k = rstorm_plain();
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	struct stat pinned, freed;
	char name[96], path[200];
	int exec_done[2], errno_at_exec = 0;
	ssize_t got;
	pid_t kid;

	snprintf(name, sizeof name, "rcrash%ld-exec", (long)getpid());
	snprintf(path, sizeof path, "/dev/shm/hpshm.%s", name);
	cfg = rstorm_config(&k, name, RSTORM_CFG_MAX);
	cr_assert_not_null(cfg);
	cr_assert_eq(hpshm_segment_create(&seg, k.max_pages * k.page, cfg, &err), 0, "%s", err.message);
	hpshm_config_free(cfg);
	/* The pipe's write end closes in the child at its exec: EOF says it no longer maps the
	 * segment (a sleep of a fixed time said so only on a quiet machine). */
	cr_assert_eq(pipe2(exec_done, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	kid = hpt_fork();
	if (kid == 0) {
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
		errno_at_exec = errno;
		(void)!write(exec_done[1], &errno_at_exec, sizeof errno_at_exec);
		_exit(127);
	}
	cr_assert_gt(kid, 0);
	close(exec_done[1]);
	got = read(exec_done[0], &errno_at_exec, sizeof errno_at_exec);
	close(exec_done[0]);
	cr_assert_eq(got, 0, "the child could not exec /bin/sleep: %s", got > 0 ? strerror(errno_at_exec) : "read failed");
	cr_assert_eq(hpshm_segment_resize(seg, k.page, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0, "%s", err.message);
	cr_assert_eq(stat(path, &pinned), 0);
	(void)kill(kid, SIGKILL);
	(void)waitpid(kid, NULL, 0);
	cr_assert_eq(hpshm_segment_sync(seg, &err), 0, "%s", err.message);
	cr_assert_eq(stat(path, &freed), 0);
	(void)hpshm_segment_destroy(seg);
	cr_assert_eq(pinned.st_blocks, freed.st_blocks,
		     "a shrink to 1 page left %lld bytes taken while a child that exec'd /bin/sleep lived, %lld once it "
		     "was gone", (long long)pinned.st_blocks * 512, (long long)freed.st_blocks * 512);
}
