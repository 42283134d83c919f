/* SPDX-License-Identifier: MIT */
/*
 * tests/resize_storm.c -- the processes of test_resize_crash's kill storms: a creator that
 * grows and shrinks a named resizable segment until it is killed (or kills itself at a
 * chosen step), and a reader that keeps it open, syncs and reads it meanwhile (its loop is
 * resize_read.c's, which reattach_child shares), and the test's small helpers around them
 * (the kinds of segment, the shared log, object paths).  The creator and the reader run in
 * children forked by the test (hpt_fork()): they make no cr_* call and end by _exit() or a
 * signal, and tell the test what they did through the shared log (resize_storm.h).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "linux/linux.h"
#include "resize_storm.h"

struct rstorm_log *rlog;

hpshm_config *rstorm_config(const struct rstorm_kind *k, const char *name, unsigned flags)
{
	char kv[512], psz[32], msz[32];
	hpshm_config *cfg;
	const char *mnt = hpt_test_hugetlbfs(k->page);

	if (hpshm_config_new(&cfg) < 0)
		return NULL;
	if (strcmp(k->provider, "plain") == 0)
		snprintf(kv, sizeof kv, "provider=plain,name=%s,huge_pages=off", name);
	else
		snprintf(kv, sizeof kv, "provider=hugetlbfs,name=%s,huge_pages=on,huge_page_size=%s", name,
			 hpt_size_text(k->page, psz, sizeof psz));
	if (hpshm_config_parse(cfg, kv, NULL) < 0 ||
	    ((flags & RSTORM_CFG_EXEC) && hpshm_config_set(cfg, "reattach", "exec", NULL) < 0) ||
	    ((flags & RSTORM_CFG_MAX) &&
	     hpshm_config_set(cfg, "max_size", hpt_size_text(k->max_pages * k->page, msz, sizeof msz), NULL) < 0) ||
	    (mnt && strcmp(k->provider, "hugetlbfs") == 0 && hpshm_config_set(cfg, "hugetlbfs_path", mnt, NULL) < 0)) {
		hpshm_config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* ---- the kinds ---- */

struct rstorm_kind rstorm_plain(void)
{
	struct rstorm_kind k = {"plain", 0, 64};

	k.page = hpshm_base_page_size();
	return k;
}

/* hugetlbfs on 2 MiB pages, or a skip (a failure under HPSHM_TEST_REQUIRE) with the reason. */
struct rstorm_kind rstorm_huge(void)
{
	struct rstorm_kind k = {"hugetlbfs", (size_t)2 << 20, 8};
	char reason[HPSHM_TEXT_MAX] = "";
	struct hpt_pool pool;
	hpshm_config *cfg;
	int rc;

	if (hpt_pool_read(k.page, &pool) < 0)
		HPT_UNAVAILABLE("hugetlbfs", "2MiB", "the kernel offers no 2 MiB huge pages");
	/* the creator's largest size, its tail, and the reader's nothing more (same object) */
	if (hpt_pool_available(&pool) < k.max_pages + 1)
		HPT_UNAVAILABLE_PAGES("hugetlbfs", "2MiB", k.max_pages + 1, "%lu free 2 MiB pages, %u needed",
				      hpt_pool_available(&pool), k.max_pages + 1);
	cfg = rstorm_config(&k, "probe", RSTORM_CFG_MAX);
	cr_assert_not_null(cfg);
	rc = hpshm_provider_probe("hugetlbfs", k.page, cfg, NULL, reason, sizeof reason);
	hpshm_config_free(cfg);
	if (rc < 0)
		HPT_UNAVAILABLE("hugetlbfs", "2MiB", "hugetlbfs: %s", reason);
	return k;
}

/* ---- the test's side ---- */

/* The log: mapped shared once, zeroed for each round. */
void rstorm_log_reset(void)
{
	if (!rlog) {
		rlog = mmap(NULL, sizeof *rlog, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		cr_assert_neq(rlog, MAP_FAILED, "mmap: %s", strerror(errno));
	}
	memset((void *)rlog, 0, sizeof *rlog);
	rlog->died_mode = -1;
	rlog->spawn_fd = -1;
}

/* Where the object's file is: plain's ids are shm_open() names, under /dev/shm on Linux. */
const char *rstorm_object_path(const hpshm_object *o, char *buf, size_t len)
{
	if (strcmp(o->provider, "plain") == 0 && strchr(o->id + 1, '/') == NULL)
		snprintf(buf, len, "/dev/shm%s", o->id);
	else
		snprintf(buf, len, "%s", o->id);
	return buf;
}

/* The next size the exec'd reader wrote on fd: 1, or 0 at EOF or after RSTORM_PATIENCE_S. */
int rstorm_next_size(int fd, uint64_t *size)
{
	struct pollfd p = {fd, POLLIN, 0};

	return poll(&p, 1, RSTORM_PATIENCE_S * 1000) == 1 && read(fd, size, sizeof *size) == (ssize_t)sizeof *size;
}

/* ---- the creator ---- */

/* Where this creator dies (a child's copy: each creator sets its own). */
static enum rstorm_point die_point;
static unsigned die_at, fallocates; /* die at this fallocate; those made since the segment was created */
static int (*real_fallocate)(int fd, int mode, off_t off, off_t len);

static int fallocate_and_die(int fd, int mode, off_t off, off_t len)
{
	int rc;

	if (++fallocates == die_at && die_point == RSTORM_BEFORE_FALLOCATE) {
		rlog->died_mode = mode;
		raise(SIGKILL);
	}
	rc = real_fallocate(fd, mode, off, len);
	if (fallocates == die_at && die_point == RSTORM_AFTER_FALLOCATE) {
		rlog->died_mode = mode;
		raise(SIGKILL);
	}
	return rc;
}

/* Stamped atomically: on a 32-bit system a plain 64-bit store is two, and a kill between them
 * would leave half a stamp that no check could tell from a lost page. */
static void stamp(volatile uint64_t *base, size_t from, size_t to, size_t page)
{
	for (size_t off = from; off < to; off += page)
		__atomic_store_n(&base[off / sizeof(uint64_t)], RSTORM_STAMP(off / page), __ATOMIC_RELAXED);
}

static void child_failed(int rc, const hpshm_error *err, int status)
{
	size_t n = strnlen(err->message, sizeof rlog->msg - 1);

	memcpy(rlog->msg, err->message, n);
	rlog->msg[n] = '\0';
	rlog->rc = rc;
	_exit(status);
}

/*
 * The creator's library log, at its most detailed: the lines about the table of processes
 * (which slot it freed, and why) go to the log's table, the oldest dropped when it is full,
 * for the message of a round whose reader lost a page; warnings and errors to stderr, as
 * without a callback.
 */
static void creator_log(void *user, hpshm_log_level level, const char *msg)
{
	size_t have = strnlen(rlog->table, sizeof rlog->table), n = strlen(msg) + 2; /* "; " */
	char *next;

	(void)user;
	if (level <= HPSHM_LOG_WARNING)
		fprintf(stderr, "hpshm: %s\n", msg);
	if (!strstr(msg, " slot ") || n >= sizeof rlog->table)
		return;
	/* Drop the oldest lines, whole, until this one fits. */
	while (have + n >= sizeof rlog->table && (next = strstr(rlog->table, "; ")) != NULL) {
		have -= (size_t)(next + 2 - rlog->table);
		memmove(rlog->table, next + 2, have + 1);
	}
	snprintf(rlog->table + have, sizeof rlog->table - have, "%s; ", msg);
}

/* Create, stamp, then resize to random sizes: steps times (then die), or until killed. */
#ifdef HPSHM_REATTACH_CHILD
/* Start reattach_child resize-read by exec, writing on the log's spawn_fd. */
static void spawn_reader(hpshm_segment *seg)
{
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "resize-read", fd[16];
	char *argv[] = {path, mode, fd, NULL};
	hpshm_child kid;
	hpshm_error err;
	int rc;

	snprintf(fd, sizeof fd, "%d", rlog->spawn_fd);
	rc = hpshm_child_spawn(seg, path, argv, NULL, &kid, &err);
	if (rc < 0)
		child_failed(rc, &err, 4);
	rlog->kid = (long)kid.pid;
}
#else
static void spawn_reader(hpshm_segment *seg)
{
	(void)seg;
	_exit(96);
}
#endif

void rstorm_creator(const struct rstorm_kind *k, const char *name, uint64_t seed, unsigned steps,
		    enum rstorm_point point, unsigned at)
{
	hpshm_config *cfg = rstorm_config(k, name, RSTORM_CFG_MAX | (rlog->spawn_fd >= 0 ? RSTORM_CFG_EXEC : 0));
	hpshm_segment *seg;
	hpshm_error err;
	volatile uint64_t *base;
	int rc;

	if (!cfg)
		_exit(98);
	hpshm_config_set_log(cfg, creator_log, NULL, HPSHM_LOG_DEBUG);
	die_point = point;
	die_at = at;
	rc = hpshm_segment_create(&seg, (size_t)(1 + rstorm_rnd(&seed) % k->max_pages) * k->page, cfg, &err);
	if (rc < 0)
		child_failed(rc, &err, 2);
	base = hpshm_segment_address(seg);
	stamp(base, 0, hpshm_segment_size(seg), k->page);
	rlog->done = rlog->target = hpshm_segment_size(seg);
	if (rlog->spawn_fd >= 0)
		spawn_reader(seg);
	rlog->created = 1;
	if (die_point == RSTORM_BEFORE_FALLOCATE || die_point == RSTORM_AFTER_FALLOCATE) {
		real_fallocate = hpshm__linux_sys.fallocate;
		hpshm__linux_sys.fallocate = fallocate_and_die;
	}
	for (unsigned i = 0; steps == 0 || i < steps; i++) {
		size_t want = (size_t)(1 + rstorm_rnd(&seed) % k->max_pages) * k->page, old = (size_t)rlog->done;

		rlog->target = want;
		rc = hpshm_segment_resize(seg, want, &err);
		if (rc < 0)
			child_failed(rc, &err, 3);
		if (want > old)
			stamp(base, old, want, k->page);
		rlog->done = want;
		rlog->resizes++;
		if (die_point == RSTORM_AFTER_RESIZE && i + 1 == die_at)
			raise(SIGKILL);
	}
	raise(SIGKILL); /* the points storm: killed after its last step, if not before */
	_exit(97);
}

/* ---- reading a segment: every page, word 0 a stamp or zero ---- */

static sigjmp_buf guard_jmp;
static void *volatile guard_addr;
static volatile sig_atomic_t guard_sig;

static void guard_handler(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	guard_sig = sig;
	guard_addr = si->si_addr;
	siglongjmp(guard_jmp, 1);
}

/* rstorm_check_pages() under a guard: 0, or -1 with why (a fault names its signal and offset). */
int rstorm_guarded_check(const volatile uint64_t *base, size_t size, size_t page, char *why, size_t len)
{
	struct sigaction sa, old_segv, old_bus;
	size_t bad;
	volatile int rc = 0; /* set on both sides of the siglongjmp() */

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (sigsetjmp(guard_jmp, 1) == 0) {
		bad = rstorm_check_pages(base, size, page);
		if (bad) {
			snprintf(why, len, "the page at offset %zu holds %#llx, neither 0 nor its stamp", bad - 1,
				 (unsigned long long)base[(bad - 1) / sizeof(uint64_t)]);
			rc = -1;
		}
	} else {
		snprintf(why, len, "%s reading offset %td of the published %zu bytes", guard_sig == SIGBUS ? "SIGBUS" : "SIGSEGV",
			 (const char *)guard_addr - (const volatile char *)base, size);
		rc = -1;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return rc;
}

/*
 * ---- the reader, in a forked child: open, then sync and read until told to stop ----
 * It exits 4 for a size that is not whole pages up to max_size, 5 for a page neither zero nor
 * its stamp, 6 for a stamped page found zero (given back while it may touch it: rlog->rc is
 * the page), and dies of the signal if a read faults.
 */

void rstorm_reader(const struct rstorm_kind *k, const char *name)
{
	hpshm_config *cfg = rstorm_config(k, name, 0);
	unsigned char stamped[RSTORM_MAX_PAGES] = {0}; /* pages seen stamped since its last sync */
	unsigned long loop = 0;
	hpshm_segment *seg;
	hpshm_error err;
	int rc, bad = -1;

	if (!cfg || k->max_pages > RSTORM_MAX_PAGES)
		_exit(98);
	rc = hpshm_segment_open(&seg, name, cfg, &err);
	if (rc < 0)
		child_failed(rc, &err, RSTORM_EOPEN);
	rlog->reader_open = 1;
	while (!rlog->reader_stop) {
		int sync = loop++ % RSTORM_SYNC_EVERY == 0;

		rc = rstorm_read_loop(seg, k->page, stamped, sync, &bad, &err);
		if (rc == RSTORM_ESYNC)
			child_failed(err.code, &err, rc);
		if (rc != 0) {
			rlog->rc = bad;
			_exit(rc);
		}
		if (sync) {
			rlog->reader_size = hpshm_segment_size(seg);
			rlog->reads++;
		}
	}
	(void)hpshm_segment_detach(seg);
	_exit(0);
}
