/* SPDX-License-Identifier: MIT */
/*
 * tests/fixture.h -- what every suite shares: the pool-leak fixture, the HPSHM_TEST_REQUIRE
 * rule for skips, and readers of kernel facts the tests check on their own (never trusting
 * the library's report alone).
 *
 * The pool-leak fixture judges only what the test made, because a suite runs where servers
 * run: a PostgreSQL that creates and drops /dev/shm segments, or a program that takes and
 * returns huge pages, beside it must not fail a test.  On Linux as root each test runs in a
 * sandbox the fixture makes in its .init (and the test's children inherit):
 *   - its own IPC namespace (its SysV segments are the only ones it sees) and mount namespace,
 *     with a private tmpfs on /dev/shm and a private hugetlbfs instance over every hugetlbfs
 *     mount point (same page size, mode and size limit), so the objects it sees are its own;
 *   - its own hugetlb cgroup (v2 where the v2 hierarchy offers hugetlb, else v1), whose
 *     counters (pages faulted and reserved) see only the test's huge pages, and those of its
 *     children, wherever on the machine others take and return pages.
 * Before the test it snapshots those counters, the SysV segment ids (/proc/sysvipc/shm), the
 * files in every hugetlbfs mount and in /dev/shm; after the test it compares and fails the
 * run if anything differs.  Leaks stay visible (the fixture fails the test), and go with the
 * namespaces when the test's last process ends.  Without root, on another system, or with
 * HPSHM_TEST_NO_SANDBOX set, it says so once and judges the machine-wide pool counters, the
 * SysV segments of hpshm's keys (IPC_PRIVATE and 0x48xxxxxx) and the hpshm.* names of
 * /dev/shm and hugetlbfs: a program using them beside the suite can then fail a test.  It
 * always reads the real /proc and /sys, whatever sysroot a test gave the library.
 *
 * Criterion 2.4.1 does not count a failed cr_assert() in .fini (it prints it and passes the
 * test), so the fixture reports the difference with cr_log_error() and abort()s: the test is
 * then reported as "crashed during its setup or teardown" and the executable exits non-zero.
 * Criterion 2.4.1 also runs no .fini after cr_skip_test(), and tests/harness does the same: what
 * a suite's .init made beyond the fixture (a fake sysroot, a directory in /tmp, replaced system
 * calls) is undone before a skip by the function the .init hands to hpt_fixture_undo_on_skip(),
 * which every skip of this header runs first (HPT_SKIP, HPT_SKIP_UNDER_EMULATOR,
 * hpt_skip_emulated_refusal, HPT_UNAVAILABLE).  A test skips through them, never through a bare
 * cr_skip_test().
 *
 * One test at a time within a suite program: tests that fill the pool, or need most of it,
 * would compete for its pages, and the cgroup of a test is named by its process.  CTest runs
 * every suite with --jobs=1 and RUN_SERIAL, and fixture.c makes every suite program run its
 * tests one by one whatever --jobs or CRITERION_JOBS say (a Criterion report hook sets
 * criterion_options.jobs to 1 before the first worker starts).
 */
#ifndef HPSHM_TESTS_FIXTURE_H
#define HPSHM_TESTS_FIXTURE_H

#include <stddef.h>
#ifndef _WIN32
#include <sys/types.h> /* pid_t, for hpt_fork(): MSVC's <sys/types.h> has none */
#endif

#include "harness.h"
#include "hpshm.h"

/* The pool-leak fixture: TestSuite(name, .init = hpt_fixture_init, .fini = hpt_fixture_fini). */
void hpt_fixture_init(void);
void hpt_fixture_fini(void);

/*
 * What a skip undoes: a suite whose .init makes more than the fixture does (a directory in
 * /tmp, a cgroup) names here, after hpt_fixture_init(), the function its .fini calls to undo
 * that; hpt_fakeroot_create() names hpt_fakeroot_destroy() itself.  hpt_fixture_before_skip()
 * runs them, the last named first, and forgets them; the skips below call it, so a skipped
 * test leaves nothing behind.  Each function undoes what is still there, so one that a test
 * body also calls (to make its setup again) can run again at the skip.
 */
void hpt_fixture_undo_on_skip(void (*undo)(void));
void hpt_fixture_before_skip(void);

/* Skip with the reason, after undoing the suite's .init (hpt_fixture_undo_on_skip()). */
#define HPT_SKIP(...)                              \
	do {                                       \
		hpt_fixture_before_skip();         \
		cr_skip_test(__VA_ARGS__);         \
	} while (0)

/*
 * Does HPSHM_TEST_REQUIRE (a comma list: provider names, page sizes such as "2MiB", words
 * such as "pool" or "cgroup", or "all") name this token?  Page sizes compare by value, so
 * "2MB", "2MiB" and "2048k" are the same token.  NULL tokens are ignored.
 *
 * A page size in the list may carry a page count, "1GiB*2": the run guarantees that many free
 * pages of that size and no more.  A test on pages of that size (a size among its tokens) that
 * needs more pages is then not required, whatever else the list names: it skips and the log
 * says why.  "1GiB*0" says the kernel offers the size but the run has none of its pages.
 * hpt_required() is hpt_required_pages() for a test that needs one page.  A count on a token
 * that is not a size, or a count that is not a number, fails the test that reads it.
 */
int hpt_required(const char *a, const char *b);
int hpt_required_pages(const char *a, const char *b, unsigned long pages);

/* Skip with the reason, or fail with it when the run requires the thing that is missing. */
#define HPT_UNAVAILABLE(tok_a, tok_b, ...) HPT_UNAVAILABLE_PAGES((tok_a), (tok_b), 1, __VA_ARGS__)

/* The same for a test that needs `pages` pages of the page size among its tokens. */
#define HPT_UNAVAILABLE_PAGES(tok_a, tok_b, pages, ...)                                    \
	do {                                                                                \
		if (hpt_required_pages((tok_a), (tok_b), (pages)))                          \
			cr_assert_fail("required by HPSHM_TEST_REQUIRE but unavailable: " __VA_ARGS__); \
		else                                                                        \
			HPT_SKIP(__VA_ARGS__);                                              \
	} while (0)

/*
 * Pages this large come one or two at a time: a kernel that did not reserve them at boot often
 * finds only one or two free gigabytes at run time, and CI asks for two ("1GiB*2" in
 * HPSHM_TEST_REQUIRE).  A test on pages of this size or larger picks a size that needs at most
 * two of them.
 */
#define HPT_LARGE_PAGE ((size_t)1 << 30)

/*
 * The emulator this suite runs under: HPSHM_TEST_EMULATOR, which CTest sets in a cross build
 * whose programs run through one ("qemu-aarch64", "qemu-s390x", "qemu-i386", or the i686
 * loader), else NULL.  What an emulator cannot do (a program exec'ing itself or another of
 * the target's programs without the script tests/CMakeLists.txt makes, prctl calls qemu-user
 * does not implement, the guest address space qemu reserves) is a skip with the reason under
 * it, never a pass.
 */
const char *hpt_emulator(void);

/* Skip, naming the emulator and why, when the suite runs under one. */
#define HPT_SKIP_UNDER_EMULATOR(why)                                       \
	do {                                                                \
		if (hpt_emulator())                                         \
			HPT_SKIP("under %s: %s", hpt_emulator(), (why));     \
	} while (0)

/*
 * After a create that failed: under an emulator, skip when the failure is the emulator's,
 * naming it and the library's message; natively, return and let the test assert.  The
 * emulator's failures: huge pages hpshm cannot verify (err->call "verify": qemu-i386 runs the
 * 32-bit guest at an offset in its own address space, so the /proc/self/smaps it passes
 * through names other addresses, and hpshm refuses pages it cannot verify), and a mapping or
 * SysV attach at an address the emulator will not place (EINVAL, HPSHM_EEXIST, HPSHM_EVALUE),
 * and a large span on a large grid it finds no host range for (ENOMEM).  The refusal itself is the library keeping its contract; only the huge pages go unchecked.
 */
void hpt_skip_emulated_refusal(int rc, const hpshm_error *err);

/*
 * Under an emulator that cannot attach a SysV segment of huge pages at all (qemu-i386 7.2 keeps
 * the guest's 4 GiB reserved and attaches at a base-page boundary of its own choosing, which
 * the kernel refuses for huge pages with EINVAL), or attaches it where its smaps shows base
 * pages (qemu-i386 run with -p 2097152: the smaps it passes through is its own view), why, as
 * a skip reason; natively, or where the emulator can, NULL.  A test that attaches real SysV hugetlb segments, itself or through the
 * library's look at them, asks first, undoes its setup and skips with the reason returned.
 * page_size: the segment's pages.
 */
const char *hpt_emulator_refuses_sysv_hugetlb(size_t page_size);

/*
 * An address where len bytes, aligned to align, are free in this process now, for a test that
 * names an address (base_address, a forged token): where the system places an anonymous
 * mapping, unless /proc/self/maps shows that place taken (an emulator hands out addresses
 * inside a range it shows reserved: qemu-i386 keeps most of the low 1 GiB so), then the lowest
 * gap the maps show free above 256 MiB.  Never a constant: what is free depends on the target.
 */
uintptr_t hpt_free_address(size_t len, size_t align);

/*
 * An address where a SysV segment of len bytes, aligned to align, can be attached: where the
 * system attaches one of that size now (a throw-away segment of base pages, attached at NULL,
 * detached and removed).  Under an emulator that is the only kind of address a SysV attach
 * takes (qemu-i386 refuses an attach at any address it did not choose itself), so a test of
 * SysV segments at a fixed address asks here there; natively any free address would do.
 */
uintptr_t hpt_sysv_address(size_t len, size_t align);

/* Pages of page_size that size bytes take (size rounded up). */
unsigned long hpt_pages(size_t size, size_t page_size);

/*
 * HPSHM_TEST_HUGETLBFS (the hugetlbfs mount a run set up) for a test on page_size pages, or
 * NULL when that variable is unset or names a hugetlbfs mount of another page size: the
 * provider then finds a mount of the right size itself.  A path that is not a hugetlbfs mount
 * at all is returned as it is, so the library says what is wrong with it.
 */
const char *hpt_test_hugetlbfs(size_t page_size);

/*
 * fork() for a test, after flushing stdio.  The child dies with the test (PR_SET_PDEATHSIG,
 * and it exits at once if the test was gone before that was set), so no child outlives a test
 * that failed or timed out.  The child shares the test's connection to the Criterion runner
 * and must make no cr_* call: branch on 0 first, end the child with _exit(), and check for -1
 * in the parent.
 */
#ifndef _WIN32
pid_t hpt_fork(void);

/*
 * Leave a segment as a crash does: a child made by hpt_fork() creates a segment of size bytes
 * under cfg and is killed with SIGKILL once it has.  what names the segment in the failure
 * message when the child could not create it.
 */
void hpt_crashed_creator(const hpshm_config *cfg, size_t size, const char *what);
#endif

/*
 * The test's own hugetlb cgroup directory (see above), or NULL when the fixture could not make
 * one.  A test may make cgroups of its own inside it (beside the "test" leaf on v2, whose
 * subtree_control already offers hugetlb); their pages are then counted as the test's, and the
 * fixture removes what the test leaves.
 */
const char *hpt_test_cgroup(void);

/* The huge pages of one size charged to the test's cgroup: faulted in, and reserved. */
struct hpt_charge {
	unsigned long faulted, reserved;
};

/*
 * Read the test's charge of page_size pages: 0, or -1 when the test has no cgroup of its own
 * (then only the pool's counters, hpt_pool_read(), can say what changed, and anything else on
 * the machine changes them too).
 */
int hpt_charge_read(size_t page_size, struct hpt_charge *out);

/*
 * From now until the test ends, every reservation of page_size pages by this test's processes
 * fails as an empty pool fails (ENOMEM from mmap, shmget), whatever other programs leave free:
 * the limits of its cgroup set to 0.  0, or -1 when the test has no cgroup of its own (then only
 * taking every free page of the real pool does it, and a neighbour that returns pages meanwhile
 * spoils it).  Reservations are limited from Linux 5.10 on; faults are limited on every kernel.
 */
int hpt_refuse_huge_pages(size_t page_size);

/*
 * Limit the page_size pages this test's processes may fault in to bytes (a number, or "max" to
 * lift the limit), leaving reservations alone: the hugetlb cgroup setting under which an mmap
 * succeeds and a later fault is refused.  0, or -1 when the test has no cgroup of its own or
 * the limit cannot be written (errno).
 */
int hpt_limit_huge_faults(size_t page_size, const char *bytes);

/*
 * The pages of page_size the test holds, as one number that returns to its value when the test
 * gives them back: with a cgroup of its own, the pages faulted plus reserved charged to it;
 * without one, the machine's pages in use or promised ((total - free) + resv), which anything
 * else on the machine changes too.  The test fails if neither can be read.
 */
long hpt_pages_held(size_t page_size);

/* One real pool, read from /sys (not the library's sysroot). */
struct hpt_pool {
	size_t        page_size;
	unsigned long total, free, resv, surplus, overcommit;
};

/* Read the real pool of page_size: 0, or -1 if the kernel has no such size. */
int hpt_pool_read(size_t page_size, struct hpt_pool *out);
/* Pages a new mapping could reserve: free - resv + (overcommit - surplus). */
unsigned long hpt_pool_available(const struct hpt_pool *p);
/*
 * The machine-wide lock of the tests that write a pool's knobs (nr_hugepages,
 * nr_overcommit_hugepages) and put them back: two suites side by side (CI's lanes) would
 * otherwise each read the other's raised value as the one to restore.  Exclusive, on a file
 * in /run/lock (else /tmp); its descriptor, which hpt_pool_knobs_unlock() closes.  POSIX only.
 */
int hpt_pool_knobs_lock(void);
void hpt_pool_knobs_unlock(int fd);
/* The kernel's default huge page size from /proc/meminfo, 0 if none. */
size_t hpt_default_huge_page_size(void);

/*
 * The VMA of /proc/self/smaps that holds addr: its KernelPageSize in bytes (0 if no VMA holds
 * addr), and whether its VmFlags say hugetlb ("ht").
 */
size_t hpt_smaps_page_size(const void *addr, int *hugetlb);
/* Is any byte of [addr, addr+len) mapped (mincore, which allocates nothing)?  1, 0, or -1. */
int hpt_is_mapped(const void *addr, size_t len);
/* Entries in /proc/self/fd. */
int hpt_fd_count(void);
/* Mappings of a named object in /proc/self/maps (private anonymous ones are not counted). */
int hpt_maps_count(void);

/* Format a size as the library's config accepts it, e.g. "2MiB" (units of 1024). */
const char *hpt_size_text(size_t size, char *buf, size_t len);

/* Does haystack contain needle, ignoring case? */
int hpt_contains(const char *haystack, const char *needle);

/* Remove every HPSHM_<KEY> variable of the key table from the environment. */
void hpt_clear_config_env(void);

/* Parse the printf-formatted "key=value,..." into cfg, failing the test with the library's
 * message if it is refused: the path suites' set(...). */
/* A create of size bytes under cfg that must fail and leave no segment, with at least one
 * attempt in its report: the error it gave, and the report in *r. */
hpshm_error hpt_create_fails(const hpshm_config *cfg, size_t size, hpshm_report *r);

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void hpt_config_parsef(hpshm_config *cfg, const char *fmt, ...);

#endif /* HPSHM_TESTS_FIXTURE_H */
