/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_populate.c -- the populate fallbacks of ports/linux/populate.c and the guarded
 * touch of ports/posix/touch.c, on real SIGBUS conditions.
 *
 * A page the kernel cannot supply is made on demand without huge pages: a shared mapping of a
 * memfd that reaches past the end of the file.  Touching a page past the end raises a real
 * SIGBUS, and MADV_POPULATE_WRITE over it fails with EFAULT, exactly as a hugetlb page refused
 * at fault time does.  The populate methods a kernel lacks (fallocate on a file system without
 * it, MADV_POPULATE_WRITE before 5.14) are taken away through hpshm__linux_sys.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/posix/posix.h"
#include "ports/posix/sys.h"

/* A populate in the calling thread alone, as every populate was before populate_threads. */
#define HPT_ONE_THREAD ((struct hpshm__populate_how){ 1, NULL })

/* A descriptor handed to the port as the file of a mapping's pages (port.h). */
#define FILE_HANDLE(fd) ((struct hpshm__port_handle){ (fd), HPSHM__PORT_FILE })

static struct hpshm__linux_syscalls real_linux;

static struct {
	int madvise_errno;     /* fail madvise(MADV_POPULATE_WRITE) with this */
	int fallocate_errno;   /* fail fallocate with this */
	unsigned madvise_calls; /* MADV_POPULATE_WRITE calls seen */
	unsigned fallocate_calls; /* fallocate calls seen */
	struct {
		char  *addr;
		size_t len;
	} call[8];              /* the first MADV_POPULATE_WRITE calls' ranges */
} inj;
static pthread_mutex_t inj_lock = PTHREAD_MUTEX_INITIALIZER;   /* populate threads call at once */

static int inj_madvise(void *addr, size_t len, int advice)
{
	if (advice == MADV_POPULATE_WRITE) {
		pthread_mutex_lock(&inj_lock);
		if (inj.madvise_calls < sizeof(inj.call) / sizeof(inj.call[0])) {
			inj.call[inj.madvise_calls].addr = addr;
			inj.call[inj.madvise_calls].len = len;
		}
		inj.madvise_calls++;
		pthread_mutex_unlock(&inj_lock);
		if (inj.madvise_errno) {
			errno = inj.madvise_errno;
			return -1;
		}
	}
	return real_linux.madvise(addr, len, advice);
}

static int inj_fallocate(int fd, int mode, off_t off, off_t len)
{
	inj.fallocate_calls++;
	if (inj.fallocate_errno) {
		errno = inj.fallocate_errno;
		return -1;
	}
	return real_linux.fallocate(fd, mode, off, len);
}

static void populate_init(void)
{
	/* Before anything is set up: a skip runs no .fini. */
	HPT_SKIP_UNDER_EMULATOR("qemu-user maps guest memory with a 2MiB host page (-p 2097152), so a shared "
				"mapping past the end of a file does not fault page by page as the kernel does, "
				"and the SIGBUS these tests need never comes");
	hpt_fixture_init();
	hpshm__linux_sys_reset();
	real_linux = hpshm__linux_sys;
	memset(&inj, 0, sizeof inj);
	hpshm__linux_sys.madvise = inj_madvise;
	hpshm__linux_sys.fallocate = inj_fallocate;
}

static void populate_fini(void)
{
	hpshm__linux_sys_reset();
	hpt_fixture_fini();
}

TestSuite(paths_populate, .init = populate_init, .fini = populate_fini);

/* A shared mapping of `pages` pages over a memfd that holds only the first `filled`. */
struct short_map {
	int    fd;     /* the memfd */
	char  *addr;   /* the mapping */
	size_t len;    /* its length */
	size_t page;   /* the base page size */
};

static void short_map_make(struct short_map *m, size_t pages, size_t filled)
{
	m->page = (size_t)sysconf(_SC_PAGESIZE);
	m->len = pages * m->page;
	m->fd = memfd_create("hpshm-test-short", MFD_CLOEXEC);
	cr_assert_geq(m->fd, 0, "memfd_create: %s", strerror(errno));
	cr_assert_eq(ftruncate(m->fd, (off_t)(filled * m->page)), 0);
	m->addr = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	cr_assert_neq(m->addr, MAP_FAILED, "mmap: %s", strerror(errno));
}

static void short_map_free(struct short_map *m)
{
	cr_assert_eq(munmap(m->addr, m->len), 0);
	cr_assert_eq(close(m->fd), 0);
}

/* The SIGBUS handler a program had before hpshm's touch: counts what reaches it. */
static atomic_int prior_calls;       /* calls of either prior handler */
static atomic_int prior_saw_touch;   /* the touch's handler was installed when it ran */

static void prior_sigaction(int sig, siginfo_t *info, void *ctx)
{
	struct sigaction cur;

	(void)sig;
	(void)info;
	(void)ctx;
	if (sigaction(SIGBUS, NULL, &cur) == 0 && cur.sa_sigaction != prior_sigaction)
		atomic_store(&prior_saw_touch, 1);
	atomic_fetch_add(&prior_calls, 1);
}

static void prior_handler(int sig)
{
	struct sigaction cur;

	(void)sig;
	if (sigaction(SIGBUS, NULL, &cur) == 0 && cur.sa_handler != prior_handler)
		atomic_store(&prior_saw_touch, 1);
	atomic_fetch_add(&prior_calls, 1);
}

/* ---- the touch itself ---- */

Test(paths_populate, populate_recovers_from_sigbus_by_jumping_out_of_the_touch)
{
	struct short_map m;
	size_t bad = 12345;
	int rc;

	short_map_make(&m, 8, 3);
	rc = hpshm__posix_touch(m.addr, m.len, m.page, &bad);
	cr_assert_eq(rc, 1, "a touch past the end of the file must report the SIGBUS, got %d", rc);
	cr_assert_eq(bad, 3 * m.page, "the first page past the end is at %zu, touch said %zu", 3 * m.page, bad);
	short_map_free(&m);
}

Test(paths_populate, populate_touch_keeps_the_bytes_it_rewrites)
{
	struct short_map m;
	size_t bad = 0, i;

	short_map_make(&m, 4, 4);
	for (i = 0; i < 4; i++)
		m.addr[i * m.page] = (char)(0x40 + i);
	cr_assert_eq(hpshm__posix_touch(m.addr, m.len, m.page, &bad), 0);
	for (i = 0; i < 4; i++)
		cr_assert_eq(m.addr[i * m.page], (char)(0x40 + i), "page %zu was changed by the touch", i);
	cr_assert_eq(bad, m.len, "a touch that ran through reports the end as its offset");
	short_map_free(&m);
}

Test(paths_populate, populate_touch_puts_back_the_sigbus_action_it_replaced)
{
	struct sigaction mine, after;
	struct short_map m;
	size_t bad;

	memset(&mine, 0, sizeof mine);
	mine.sa_sigaction = prior_sigaction;
	mine.sa_flags = SA_SIGINFO;
	sigemptyset(&mine.sa_mask);
	cr_assert_eq(sigaction(SIGBUS, &mine, NULL), 0);

	short_map_make(&m, 4, 1);
	cr_assert_eq(hpshm__posix_touch(m.addr, m.len, m.page, &bad), 1);
	cr_assert_eq(sigaction(SIGBUS, NULL, &after), 0);
	cr_assert(after.sa_sigaction == prior_sigaction, "the program's SIGBUS handler was not put back");
	cr_assert_eq(atomic_load(&prior_calls), 0, "the touch's own SIGBUS reached the program's handler");
	short_map_free(&m);
	signal(SIGBUS, SIG_DFL);
}

Test(paths_populate, populate_touch_unblocks_sigbus_and_restores_the_mask)
{
	sigset_t bus, now;
	struct short_map m;
	size_t bad;

	/* A blocked SIGBUS raised by a fault kills the process whatever the handler: the touch
	 * must unblock it, or this test dies instead of failing cleanly. */
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, &bus, NULL), 0);
	short_map_make(&m, 2, 1);
	cr_assert_eq(hpshm__posix_touch(m.addr, m.len, m.page, &bad), 1);
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
	cr_assert(sigismember(&now, SIGBUS), "the caller's blocked SIGBUS was not blocked again");
	cr_assert_eq(pthread_sigmask(SIG_UNBLOCK, &bus, NULL), 0);
	short_map_free(&m);
}

/*
 * A SIGBUS in another thread while one thread touches: the touch's handler is process-wide,
 * but only the touching thread is armed, so the other's signal must go to the handler the
 * program had.  The other thread raises its SIGBUS as soon as it sees the touch's handler
 * installed; a long touch (every byte of 64 MiB) leaves time for that.
 */
struct chain_run {
	struct short_map m;        /* what the touching thread touches */
	atomic_int       touching; /* the touch has started */
	atomic_int       done;     /* the touch has returned */
	void (*prior)(int);        /* the prior handler in sa_handler form, or NULL */
};

static void *chain_other(void *arg)
{
	struct chain_run *run = arg;
	struct sigaction cur;

	for (;;) {
		if (atomic_load(&run->done))
			return NULL;
		if (sigaction(SIGBUS, NULL, &cur) == 0 && cur.sa_sigaction != prior_sigaction &&
		    cur.sa_handler != prior_handler && cur.sa_handler != SIG_DFL) {
			pthread_kill(pthread_self(), SIGBUS);
			return NULL;
		}
	}
}

static void *chain_touch(void *arg)
{
	struct chain_run *run = arg;
	size_t bad;

	atomic_store(&run->touching, 1);
	(void)hpshm__posix_touch(run->m.addr, run->m.len, 1, &bad);
	atomic_store(&run->done, 1);
	return NULL;
}

static void chain_check(int siginfo)
{
	struct sigaction mine;
	int tries;

	memset(&mine, 0, sizeof mine);
	if (siginfo) {
		mine.sa_sigaction = prior_sigaction;
		mine.sa_flags = SA_SIGINFO;
	} else {
		mine.sa_handler = prior_handler;
	}
	sigemptyset(&mine.sa_mask);
	cr_assert_eq(sigaction(SIGBUS, &mine, NULL), 0);

	for (tries = 0; tries < 10 && !atomic_load(&prior_saw_touch); tries++) {
		struct chain_run run;
		pthread_t a, b;

		memset(&run, 0, sizeof run);
		run.m.page = (size_t)sysconf(_SC_PAGESIZE);
		run.m.len = 64u << 20;
		run.m.fd = -1;
		run.m.addr = mmap(NULL, run.m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		cr_assert_neq(run.m.addr, MAP_FAILED);
		cr_assert_eq(pthread_create(&b, NULL, chain_other, &run), 0);
		cr_assert_eq(pthread_create(&a, NULL, chain_touch, &run), 0);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		cr_assert_eq(munmap(run.m.addr, run.m.len), 0);
	}
	cr_assert(atomic_load(&prior_saw_touch),
		  "in 10 tries no SIGBUS of another thread reached the program's handler while the touch ran "
		  "(%d calls)", atomic_load(&prior_calls));
	signal(SIGBUS, SIG_DFL);
}

Test(paths_populate, populate_touch_chains_another_threads_sigbus_to_the_prior_siginfo_handler, .timeout = 60)
{
	chain_check(1);
}

Test(paths_populate, populate_touch_chains_another_threads_sigbus_to_the_prior_plain_handler, .timeout = 60)
{
	chain_check(0);
}

/*
 * With no handler before it, a real fault in another thread must still kill the process with
 * SIGBUS (the default acts again once the touch's handler steps aside), not be swallowed:
 * swallowed, the faulting instruction runs again for ever and the child hangs.
 */
struct default_run {
	struct short_map m;    /* the long touch */
	struct short_map past; /* a page past the end of its file, for the other thread */
};

static void *default_other(void *arg)
{
	struct default_run *run = arg;
	struct sigaction cur;

	for (;;) {
		if (sigaction(SIGBUS, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL) {
			run->past.addr[0] = 1;   /* a real fault: SIGBUS */
			return NULL;
		}
	}
}

Test(paths_populate, populate_touch_lets_another_threads_fault_die_of_the_default_sigbus, .timeout = 60)
{
	int status = 0, tries;

	for (tries = 0; tries < 5; tries++) {
		pid_t pid = hpt_fork();

		cr_assert_neq(pid, -1);
		if (pid == 0) {
			struct default_run run;
			pthread_t b;
			size_t bad;
			int i;

			signal(SIGBUS, SIG_DFL);
			run.m.len = 64u << 20;
			run.m.addr = mmap(NULL, run.m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			run.past.fd = memfd_create("hpshm-test-past", MFD_CLOEXEC);
			run.past.addr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, run.past.fd, 0);
			if (run.m.addr == MAP_FAILED || run.past.fd < 0 || run.past.addr == MAP_FAILED)
				_exit(3);
			if (pthread_create(&b, NULL, default_other, &run) != 0)
				_exit(3);
			for (i = 0; i < 20; i++)
				(void)hpshm__posix_touch(run.m.addr, run.m.len, 1, &bad);
			_exit(4);   /* the other thread's fault never came while a touch ran */
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 4))
			break;
	}
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
		  "the child should have died of SIGBUS; status %#x", status);
}

/* ---- the order of methods in hpshm__port_populate ---- */

Test(paths_populate, populate_without_madvise_falls_back_to_the_touch_and_reports_sigbus_as_epopulate)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 99;
	int rc;

	memset(&err, 0, sizeof err);
	inj.madvise_errno = EINVAL;   /* a kernel before 5.14 */
	short_map_make(&m, 6, 2);
	rc = hpshm__port_populate(m.addr, m.len, m.page, HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(err.code, HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "touch");
	cr_assert_eq(methods, (unsigned)HPSHM_POPULATE_TOUCH);
	cr_assert_eq(inj.madvise_calls, 1u);
	cr_assert_neq(err.hint[0], '\0', "a populate failure comes with a hint");
	short_map_free(&m);
}

Test(paths_populate, populate_turns_a_real_madvise_efault_into_epopulate)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 0;
	int rc;

	memset(&err, 0, sizeof err);
	short_map_make(&m, 4, 1);
	rc = hpshm__port_populate(m.addr, m.len, m.page, HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err);
	if (rc == HPSHM_EPOPULATE && strcmp(err.call, "touch") == 0) {
		short_map_free(&m);
		hpshm__linux_sys_reset();
		HPT_SKIP("this kernel has no MADV_POPULATE_WRITE (before 5.14): the touch answered");
	}
	cr_assert_eq(rc, HPSHM_EPOPULATE, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(err.call, "madvise");
	cr_assert_eq(err.sys_errno, EFAULT, "errno %d", err.sys_errno);
	cr_assert_eq(methods, (unsigned)HPSHM_POPULATE_NONE);
	short_map_free(&m);
}

Test(paths_populate, populate_uses_fallocate_then_madvise_on_a_descriptor)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 0;
	int rc;

	memset(&err, 0, sizeof err);
	short_map_make(&m, 4, 0);
	rc = hpshm__port_populate(m.addr, m.len, m.page, FILE_HANDLE(m.fd), &HPT_ONE_THREAD, &methods, &err);
	cr_assert_eq(rc, 0, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(methods, (unsigned)(HPSHM_POPULATE_FALLOCATE | HPSHM_POPULATE_MADVISE));
	cr_assert_eq(inj.fallocate_calls, 1u);
	/* fallocate grew the file: every page is there now */
	m.addr[m.len - 1] = 1;
	short_map_free(&m);
}

Test(paths_populate, populate_goes_on_to_madvise_when_fallocate_is_not_supported)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 0;

	memset(&err, 0, sizeof err);
	inj.fallocate_errno = EOPNOTSUPP;
	short_map_make(&m, 4, 4);
	cr_assert_eq(hpshm__port_populate(m.addr, m.len, m.page, FILE_HANDLE(m.fd), &HPT_ONE_THREAD, &methods, &err), 0, "%s", err.message);
	cr_assert_eq(methods, (unsigned)HPSHM_POPULATE_MADVISE);
	inj.fallocate_errno = ENOSYS;
	cr_assert_eq(hpshm__port_populate(m.addr, m.len, m.page, FILE_HANDLE(m.fd), &HPT_ONE_THREAD, &methods, &err), 0, "%s", err.message);
	cr_assert_eq(methods, (unsigned)HPSHM_POPULATE_MADVISE);
	cr_assert_eq(inj.madvise_calls, 2u);
	short_map_free(&m);
}

Test(paths_populate, populate_fails_on_an_unexpected_fallocate_error_without_trying_madvise)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 0;
	int rc;

	memset(&err, 0, sizeof err);
	inj.fallocate_errno = EIO;
	short_map_make(&m, 2, 2);
	rc = hpshm__port_populate(m.addr, m.len, m.page, FILE_HANDLE(m.fd), &HPT_ONE_THREAD, &methods, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "fallocate");
	cr_assert_eq(err.sys_errno, EIO);
	cr_assert_eq(inj.madvise_calls, 0u);
	short_map_free(&m);
}

Test(paths_populate, populate_fallocate_enospc_is_epopulate_with_a_hint)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 0;
	int rc;

	memset(&err, 0, sizeof err);
	inj.fallocate_errno = ENOSPC;
	short_map_make(&m, 2, 2);
	rc = hpshm__port_populate(m.addr, m.len, m.page, FILE_HANDLE(m.fd), &HPT_ONE_THREAD, &methods, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "fallocate");
	cr_assert_eq(err.sys_errno, ENOSPC);
	cr_assert_neq(err.hint[0], '\0');
	short_map_free(&m);
}

/*
 * Pages larger than the base page are faulted in at their last base page, one call per page
 * (so the kernel clears each in ascending order), then once over the whole range, with no
 * fallocate even on a file.  The mapping here is of base pages, so the closing call is what
 * faults the rest of them in, as it would on a mapping that is not what its page size says.
 */
static void tail_first(unsigned threads)
{
	struct short_map m;
	struct hpshm__populate_how how = { threads, NULL };
	size_t big;
	hpshm_error err;
	unsigned methods = 0;
	int rc;

	memset(&err, 0, sizeof err);
	short_map_make(&m, 8, 8);
	big = 4 * m.page;   /* a "huge" page of four base pages: two of them */
	rc = hpshm__port_populate(m.addr, m.len, big, FILE_HANDLE(m.fd), &how, &methods, &err);
	cr_assert_eq(rc, 0, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(methods, (unsigned)HPSHM_POPULATE_MADVISE);
	cr_assert_eq(inj.fallocate_calls, 0u, "huge pages are faulted in by madvise alone");
	if (threads == 1) {
		cr_assert_eq(inj.madvise_calls, 3u);
		cr_assert(inj.call[0].addr == m.addr + big - m.page && inj.call[0].len == m.page,
			  "the first page's call is at its last base page: %p+%zu", (void *)inj.call[0].addr,
			  inj.call[0].len);
		cr_assert(inj.call[1].addr == m.addr + 2 * big - m.page && inj.call[1].len == m.page);
		cr_assert(inj.call[2].addr == m.addr && inj.call[2].len == m.len, "then the whole range");
	} else {
		/* Each page's first call is at its tail; every page was asked for. */
		unsigned tails = 0;

		for (unsigned i = 0; i < inj.madvise_calls && i < 8; i++)
			tails += inj.call[i].len == m.page && (size_t)(inj.call[i].addr - m.addr) % big == big - m.page;
		cr_assert_geq(tails, 2u, "%u calls, %u at a page's tail", inj.madvise_calls, tails);
	}
	/* Every base page is there now. */
	for (size_t off = 0; off < m.len; off += m.page)
		m.addr[off] = 1;
	short_map_free(&m);
}

Test(paths_populate, huge_pages_are_faulted_in_tail_first_then_as_a_whole)
{
	tail_first(1);
}

Test(paths_populate, huge_pages_are_faulted_in_tail_first_by_each_thread)
{
	tail_first(2);
}

Test(paths_populate, populate_names_a_hardware_poisoned_page)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 0;
	int rc;

	memset(&err, 0, sizeof err);
	inj.madvise_errno = 133;   /* EHWPOISON */
	short_map_make(&m, 2, 2);
	rc = hpshm__port_populate(m.addr, m.len, m.page, HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "madvise");
	cr_assert_eq(err.sys_errno, 133);
	cr_assert(hpt_contains(err.message, "poison"), "%s", err.message);
	short_map_free(&m);
}

Test(paths_populate, populate_fails_on_an_unexpected_madvise_error_without_touching)
{
	struct short_map m;
	hpshm_error err;
	unsigned methods = 0;
	int rc;

	memset(&err, 0, sizeof err);
	inj.madvise_errno = EPERM;
	short_map_make(&m, 3, 1);   /* a touch would raise SIGBUS: it must not run */
	rc = hpshm__port_populate(m.addr, m.len, m.page, HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "madvise");
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert_eq(methods, (unsigned)HPSHM_POPULATE_NONE);
	short_map_free(&m);
}

/*
 * A SIGBUS another thread is sent (kill, pthread_kill: not a fault) while a touch runs: the
 * touch's handler must act as the program's action would.  Under the default action the
 * process ends with SIGBUS; returning from the handler would swallow a signal that is not
 * raised again, as a fault is.
 */
struct sent_run {
	struct short_map m;   /* what the touching thread touches */
};

/* Set by sent_other() just before it sends the signal; set by the test when it stops touching. */
static atomic_int sent, touching_done;

/* Until the touch's handler is in place, then send this thread SIGBUS; or until told to stop. */
static void *sent_other(void *arg)
{
	struct sigaction cur;

	(void)arg;
	while (!atomic_load(&touching_done)) {
		if (sigaction(SIGBUS, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN) {
			atomic_store(&sent, 1);
			pthread_kill(pthread_self(), SIGBUS);
			return NULL;
		}
	}
	return NULL;
}

/* Touches until the other thread sent its signal: a touch of fresh pages lasts tens of ms,
 * and on a busy machine the other thread may not run inside one, so the touch is repeated on
 * pages given back each time, up to this many. */
#define SENT_TOUCHES 500
/* The child's exit when the two never overlapped: the test skips, it proved nothing. */
#define SENT_NO_OVERLAP 6

static void sent_skip_without_overlap(int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == SENT_NO_OVERLAP)
		HPT_SKIP("the other thread never ran while one of %d touches did (a busy machine): nothing was sent",
			 SENT_TOUCHES);
}

Test(paths_populate, populate_touch_does_not_swallow_a_sent_sigbus_under_the_default_action, .timeout = 60)
{
	int status = 0;
	pid_t pid = hpt_fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		struct short_map m;
		pthread_t b;
		size_t bad;
		int i;

		signal(SIGBUS, SIG_DFL);
		m.len = 64u << 20;
		m.addr = mmap(NULL, m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m.addr == MAP_FAILED || pthread_create(&b, NULL, sent_other, NULL) != 0)
			_exit(3);
		for (i = 0; i < SENT_TOUCHES && !atomic_load(&sent); i++) {
			(void)hpshm__posix_touch(m.addr, m.len, 1, &bad);
			(void)madvise(m.addr, m.len, MADV_DONTNEED); /* fresh pages: the next touch is as long */
		}
		atomic_store(&touching_done, 1);
		pthread_join(b, NULL); /* the signal, if sent, was handled in that thread by then */
		_exit(atomic_load(&sent) ? 4 : SENT_NO_OVERLAP);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_neq(status, 3 << 8, "the child could not set up");
	sent_skip_without_overlap(status);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
		  "a SIGBUS sent under the default action must end the process; status %#x%s", status,
		  WIFEXITED(status) && WEXITSTATUS(status) == 4 ? " (the signal was swallowed)" : "");
}

/*
 * The same signal under SIG_IGN is ignored, and the touch that was running keeps its guard: a
 * page past the end of its file later in the same touch is still reported, not fatal.
 */
Test(paths_populate, populate_touch_keeps_its_guard_when_a_sent_sigbus_is_ignored, .timeout = 60)
{
	int status = 0;
	pid_t pid = hpt_fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		struct short_map m;
		pthread_t b;
		size_t bad = 0;
		int rc;

		signal(SIGBUS, SIG_IGN);
		m.page = (size_t)sysconf(_SC_PAGESIZE);
		m.len = 64u << 20;
		m.fd = memfd_create("hpshm-test-ign", MFD_CLOEXEC);
		if (m.fd < 0 || ftruncate(m.fd, (off_t)(m.len - m.page)) != 0)
			_exit(3);
		m.addr = mmap(NULL, m.len, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
		if (m.addr == MAP_FAILED || pthread_create(&b, NULL, sent_other, NULL) != 0)
			_exit(3);
		/* Each touch must report the page past the file's end; the one the signal came
		 * during is the one that counts. */
		for (int i = 0; i < SENT_TOUCHES && !atomic_load(&sent); i++) {
			bad = 0;
			rc = hpshm__posix_touch(m.addr, m.len, 1, &bad);
			if (rc != 1 || bad != m.len - m.page)
				_exit(5);
			(void)madvise(m.addr, m.len - m.page, MADV_REMOVE); /* fresh pages for the next one */
		}
		atomic_store(&touching_done, 1);
		pthread_join(b, NULL);
		_exit(atomic_load(&sent) ? 0 : SENT_NO_OVERLAP);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	sent_skip_without_overlap(status);
	cr_assert(WIFEXITED(status), "the child died (status %#x): the touch lost its guard", status);
	cr_assert_eq(WEXITSTATUS(status), 0, "exit %d (3 setup, 5 the touch did not report the missing page)",
		     WEXITSTATUS(status));
}
