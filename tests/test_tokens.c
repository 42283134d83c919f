/* SPDX-License-Identifier: MIT */
/*
 * tests/test_tokens.c -- 10,000 bad tokens: each one rejected with a clear error, no crash,
 * no mapping and no descriptor left behind.
 *
 * The tokens start from a real token of a live segment (reattach=exec) and are truncated,
 * byte-flipped, given other fields (with the check digits recomputed, so the mutation gets
 * past the parser to the providers and to the header check), pointed at unrelated objects
 * (/dev/null, a regular file of the segment's size, a closed descriptor, a SysV segment that
 * is not hpshm's, ids that do not exist), or replaced by random junk.  A token moved to a
 * free address maps there and must fail at the header check, which names both addresses
 * (the segment's pointers are only right where its creator mapped it); the same token with
 * a changed nonce must fail there too, as stale or forged.  Addresses below 64KiB are
 * refused before anything is mapped.  hpshm_segment_attach_env() reads HPSHM_TOKEN through
 * the trusted getenv, so a process that may not trust its environment ignores it.
 *
 * The format (core/token.c), nine fields: hpshm2:<provider>:<id>:<size>:<page size>:<address>:<nonce>:
 * <header>:<check>, lower-case hex numbers, <check> the FNV-1a-32 of everything before it.
 *
 * A crash is a failed test: Criterion runs each test in its own process and reports a signal.
 * The random tokens come from a fixed seed, so a failure is reproducible; each failure
 * prints the token.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "base/header.h"
#include "hpshm/provider.h"
#include "ports/linux/linux.h"
#include "ports/posix/sys.h"

#define NTOKENS 10000
#define SEED    0x7e57c0de5eedULL
#define NFIELDS 9

TestSuite(tokens, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

/* ---- the token format, as the tests need it ---- */

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

struct fields {
	char f[NFIELDS][HPSHM_TOKEN_MAX];
};

static void split(const char *tok, struct fields *out)
{
	const char *p = tok;

	memset(out, 0, sizeof *out);
	for (int i = 0; i < NFIELDS; i++) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		cr_assert(i == NFIELDS - 1 ? e == NULL : e != NULL, "token \"%s\" does not have %d fields", tok, NFIELDS);
		memcpy(out->f[i], p, n);
		out->f[i][n] = '\0';
		p = e ? e + 1 : p + n;
	}
}

/* Join every field but the check, and append a correct check: a token the parser's checksum accepts. */
static void join_checked(const struct fields *in, char *buf, size_t len)
{
	int n = 0;

	for (int i = 0; i < NFIELDS - 1 && n >= 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, "%s:", in->f[i]);
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%08x", fnv1a(buf, (size_t)n));
}

/* The descriptor of a token's "fd=N" field (2: the identifier, 7: the header), or -1. */
static int token_fd(const char *tok, int field)
{
	const char *p = tok;

	for (int i = 0; i < field && p; i++) {
		p = strchr(p, ':');
		if (p)
			p++;
	}
	return p && !strncmp(p, "fd=", 3) ? atoi(p + 3) : -1;
}

/* ---- the PRNG: xorshift64*, fixed seed ---- */

static uint64_t rng_state = SEED;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static size_t rnd_below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

/* ---- the check every bad token goes through ----
 *
 * Failures are recorded, not asserted at once: a test must first destroy its live segment
 * and its foreign objects (a named segment or a SysV segment left behind would fail the
 * machine-wide fixture for every later test), then fail with what went wrong.  The first
 * token of each kind of failure is kept, so a report names every distinct problem.
 */

static unsigned tried, failures;
static char failed_kinds[10][1024];
static unsigned nkinds;

static void failed(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void failed(const char *what, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	unsigned k;

	failures++;
	for (k = 0; k < nkinds; k++)
		if (!strncmp(failed_kinds[k], what, strlen(what)) && failed_kinds[k][strlen(what)] == ':')
			return;
	if (nkinds == sizeof failed_kinds / sizeof failed_kinds[0])
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(failed_kinds[nkinds++], sizeof failed_kinds[0], "%.100s: %s", what, msg);
}

#define CHECK(cond, what, ...)                     \
	do {                                       \
		if (!(cond))                       \
			failed((what), __VA_ARGS__); \
	} while (0)

static void failures_reset(void)
{
	tried = failures = nkinds = 0;
}

/* After cleaning up: fail with every distinct problem, if any. */
static void failures_assert(void)
{
	char all[sizeof failed_kinds + 64] = "";

	for (unsigned k = 0; k < nkinds; k++) {
		strcat(all, "\n  ");
		strcat(all, failed_kinds[k]);
	}
	cr_assert_eq(failures, 0, "%u of %u tokens went wrong; the first of each kind:%s", failures, tried, all);
}

/* Attach tok, which must fail cleanly; *errp (if not NULL) gets the error record. */
static int reject_err(const char *tok, const char *what, hpshm_error *errp)
{
	hpshm_segment *seg = (hpshm_segment *)&seg;
	hpshm_error scratch, *e = errp ? errp : &scratch;
	int maps0 = hpt_maps_count(), fds0 = hpt_fd_count(), rc, maps1, fds1;

	memset(e, 0x5a, sizeof *e);
	rc = hpshm_segment_attach(&seg, tok, NULL, e);
	maps1 = hpt_maps_count();
	fds1 = hpt_fd_count();
	tried++;
	if (rc == 0) {
		failed(what, "token \"%.300s\" attached at %p", tok, hpshm_segment_address(seg));
		hpshm_segment_destroy(seg);
		memset(e, 0, sizeof *e);
		return 0;
	}
	CHECK(rc < 0, what, "attach returned %d for \"%.300s\"", rc, tok);
	CHECK(seg == NULL, what, "*out not NULL after failure for \"%.300s\"", tok);
	CHECK(e->code == rc, what, "err.code %d, returned %d for \"%.300s\"", e->code, rc, tok);
	if (!memchr(e->message, '\0', sizeof e->message)) {
		failed(what, "message not terminated for \"%.300s\"", tok);
		memset(e, 0, sizeof *e);
		return rc;
	}
	CHECK(e->message[0] != '\0', what, "%s with an empty message for \"%.300s\"", hpshm_errname(rc), tok);
	CHECK(maps1 == maps0, what, "/proc/self/maps went from %d to %d lines with \"%.300s\" (%s: %s)", maps0, maps1,
	      tok, hpshm_errname(rc), e->message);
	CHECK(fds1 == fds0, what, "/proc/self/fd went from %d to %d entries with \"%.300s\" (%s: %s)", fds0, fds1, tok,
	      hpshm_errname(rc), e->message);
	return rc;
}

static int reject_one(const char *tok, const char *what)
{
	return reject_err(tok, what, NULL);
}

/* ---- a live segment to take the real token from ---- */

struct live {
	hpshm_segment *seg;
	hpshm_config  *cfg;
	char           tok[HPSHM_TOKEN_MAX];
	struct fields  f;
	size_t         page_size;
};

static int live_make(struct live *l, const char *kv, size_t size)
{
	const char *mnt = getenv("HPSHM_TEST_HUGETLBFS");
	hpshm_error err;
	int rc;

	memset(l, 0, sizeof *l);
	cr_assert_eq(hpshm_config_new(&l->cfg), 0);
	cr_assert_eq(hpshm_config_parse(l->cfg, kv, &err), 0, "%s: %s", kv, err.message);
	if (mnt && *mnt)
		cr_assert_eq(hpshm_config_set(l->cfg, "hugetlbfs_path", mnt, &err), 0, "%s", err.message);
	rc = hpshm_segment_create(&l->seg, size, l->cfg, &err);
	if (rc < 0) {
		hpshm_config_free(l->cfg);
		hpt_skip_emulated_refusal(rc, &err);
		return rc;
	}
	rc = hpshm_segment_token(l->seg, l->tok, sizeof l->tok, &err);
	cr_assert_gt(rc, 0, "token of %s: %s: %s", kv, hpshm_errname(rc), err.message);
	split(l->tok, &l->f);
	l->page_size = hpshm_segment_report(l->seg)->page_size;
	cr_log_info("live token %s", l->tok);
	return 0;
}

static void live_free(struct live *l)
{
	int rc = hpshm_segment_destroy(l->seg);

	CHECK(rc == 0, "live segment", "its destroy failed: %s (did a bad token close its descriptor?)",
	      hpshm_errname(rc));
	hpshm_config_free(l->cfg);
}

/*
 * The page size provider would use under kv (and HPSHM_TEST_HUGETLBFS), or the test skips
 * (fails under HPSHM_TEST_REQUIRE) with the probe's reason.
 */
static size_t probe_or_skip(const char *provider, int huge, const char *kv)
{
	char reason[HPSHM_TEXT_MAX], psz[32];
	hpshm_config *cfg;
	size_t ps = 0;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, kv, NULL), 0);
	if (getenv("HPSHM_TEST_HUGETLBFS") && *getenv("HPSHM_TEST_HUGETLBFS"))
		(void)hpshm_config_set(cfg, "hugetlbfs_path", getenv("HPSHM_TEST_HUGETLBFS"), NULL);
	rc = hpshm_provider_probe(provider, 0, cfg, &ps, reason, sizeof reason);
	hpshm_config_free(cfg);
	if (rc < 0)
		HPT_UNAVAILABLE(provider, huge ? hpt_size_text(hpt_default_huge_page_size(), psz, sizeof psz) : NULL,
				"%s: %s", provider, reason);
	return ps;
}

/* A free range of len bytes aligned to align (the mapping made to find it is gone again). */
static uintptr_t free_aligned(size_t len, size_t align)
{
	void *p = mmap((void *)(uintptr_t)0x2b0000000000ULL, len + align, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a;

	cr_assert_neq(p, MAP_FAILED);
	a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	munmap(p, len + align);
	return a;
}

/* Field i of the live token replaced by v, check recomputed. */
static void with_field(const struct live *l, int i, const char *v, char *buf, size_t len)
{
	struct fields f = l->f;

	snprintf(f.f[i], sizeof f.f[i], "%s", v);
	join_checked(&f, buf, len);
}

/*
 * Both addresses named: "token says 0x<token's>, the segment was created at 0x<creator's>"
 * from the header check, or both inside the two labels a labelled memfd's check quotes
 * (HPSHM_CAP_TAG: "<nonce>@0x<address>").
 */
static void names_both_addresses(const char *what, const hpshm_error *err, unsigned long long token_at,
				 unsigned long long created_at)
{
	char says[64], created[64];

	snprintf(says, sizeof says, "0x%llx", token_at);
	snprintf(created, sizeof created, "0x%llx", created_at);
	CHECK(hpt_contains(err->message, says) && hpt_contains(err->message, created), what,
	      "%s: the message does not name both addresses (\"%s\", \"%s\"): %s", hpshm_errname(err->code), says,
	      created, err->message);
	CHECK(err->hint[0] != '\0', what, "no hint for a token with another address");
}

/*
 * The header check, reached from a free address (the live segment holds its own): the live
 * token moved there maps the object, and must be refused because the header says the creator
 * mapped it elsewhere; the error names both addresses.  That error can only come from the
 * header, so it also proves that the nonce mutations below reach it: with a changed nonce the
 * token must be refused as stale or forged.  Each time the object is unmapped again.
 */
static void header_is_checked(const struct live *l)
{
	size_t len = (size_t)strtoull(l->f.f[3], NULL, 16); /* this process made it: it fits */
	size_t align = l->page_size > 65536 ? l->page_size : 65536;
	uintptr_t at = free_aligned(len, align);
	unsigned long long created = strtoull(l->f.f[5], NULL, 16);
	struct fields f = l->f;
	char tok[HPSHM_TOKEN_MAX];
	hpshm_error err;
	int rc, byfd = !strncmp(l->f.f[2], "fd=", 3), dupfd = -1;

	snprintf(f.f[5], sizeof f.f[5], "%" PRIxPTR, at);
	/* Were the check missing, the attached segment would own its descriptor and close it on
	 * detach: give it a copy, so the live segment keeps its own whatever happens. */
	if (byfd) {
		dupfd = fcntl(atoi(l->f.f[2] + 3), F_DUPFD_CLOEXEC, 0);
		cr_assert_geq(dupfd, 0);
		snprintf(f.f[2], sizeof f.f[2], "fd=%d", dupfd);
	}
	join_checked(&f, tok, sizeof tok);
	rc = reject_err(tok, "moved address", &err);
	CHECK(rc == HPSHM_EINVAL, "moved address", "%s, want HPSHM_EINVAL from the header check: %s", hpshm_errname(rc),
	      err.message);
	if (rc == HPSHM_EINVAL)
		names_both_addresses("moved address", &err, (unsigned long long)at, created);
	CHECK(hpt_is_mapped((void *)at, len) == 0, "moved address", "the object stayed mapped at %#" PRIxPTR, at);
	if (byfd)
		CHECK(fcntl(dupfd, F_GETFD) >= 0, "moved address", "the refused attach closed the descriptor it was given");

	for (int k = 0; k < 16; k++) {
		unsigned long long nonce = strtoull(l->f.f[6], NULL, 16);

		nonce ^= k < 8 ? 1ULL << (k * 8) : rnd() | 1;
		snprintf(f.f[6], sizeof f.f[6], "%016llx", nonce);
		join_checked(&f, tok, sizeof tok);
		rc = reject_err(tok, "changed nonce", &err);
		CHECK(rc == HPSHM_EINVAL, "changed nonce", "%s, want HPSHM_EINVAL from the header check", hpshm_errname(rc));
		CHECK(hpt_is_mapped((void *)at, len) == 0, "changed nonce", "the object stayed mapped");
	}
	CHECK(hpt_contains(err.message, "does not match") || hpt_contains(err.message, "nonce"), "changed nonce",
	      "the header check's message does not say the token does not match: %s", err.message);
	CHECK(err.hint[0] != '\0', "changed nonce", "no hint for a stale or forged token");
	if (dupfd >= 0 && fcntl(dupfd, F_GETFD) >= 0)
		close(dupfd);
}

/* Every field of the live token given bad values, check recomputed: each must be refused. */
static void fields_are_checked(const struct live *l)
{
	static const char *const any[] = {"", "0", "-1", "+1", " 1", "1 ", "0x10", "1e3", "ABC", "zz", "g",
					  "ffffffffffffffff", "10000000000000000", "%s%s%n", "\\", "..", "/"};
	char tok[HPSHM_TOKEN_MAX], v[HPSHM_TOKEN_MAX];
	unsigned long long size = strtoull(l->f.f[3], NULL, 16), ps = strtoull(l->f.f[4], NULL, 16);
	unsigned long long addr = strtoull(l->f.f[5], NULL, 16);

	for (int i = 0; i < NFIELDS - 1; i++) {
		for (size_t k = 0; k < sizeof any / sizeof any[0]; k++) {
			with_field(l, i, any[k], tok, sizeof tok);
			reject_one(tok, "field replaced");
		}
		memset(v, 'a', 300);
		v[300] = '\0';
		with_field(l, i, v, tok, sizeof tok);
		reject_one(tok, "field made very long");
	}
	/* field 0: other versions */
	for (const char *const *p = (const char *const[]){"hpshm0", "hpshm1", "hpshm3", "HPSHM2", "hpshm", "hpshm20", NULL}; *p;
	     p++) {
		with_field(l, 0, *p, tok, sizeof tok);
		reject_one(tok, "version");
	}
	/* field 1: other and unknown providers (the identifier then means nothing to them) */
	for (const char *const *p = (const char *const[]){"mmap_hugetlb", "sysv_hugetlb", "hugetlbfs", "memfd_hugetlb",
							  "plain", "windows_large", "freebsd_largepage", "PLAIN",
							  "plain ", "nonexistent", NULL};
	     *p; p++) {
		if (!strcmp(*p, l->f.f[1]))
			continue;
		with_field(l, 1, *p, tok, sizeof tok);
		reject_one(tok, "provider");
	}
	/* field 2: identifiers that name nothing, or something else */
	for (const char *const *p = (const char *const[]){"fd=", "fd=-1", "fd=x", "fd=99999", "fd=2147483648",
							  "fd=0", "fd=1", "fd=2", "shm=", "shm=-1", "shm=x",
							  "shm=2147483647", "shm=99999999", "path=", "path=/",
							  "path=/etc/passwd", "path=/dev/zero", "path=/hpshm.nonexistent",
							  "path=/hpshm./../../etc/passwd", "path=/dev/shm/hpshm.x",
							  "path=/tmp", "path=relative", "name=x", "x", NULL};
	     *p; p++) {
		with_field(l, 2, *p, tok, sizeof tok);
		reject_one(tok, "identifier");
	}
	/* field 3: sizes the header does not hold */
	{
		unsigned long long sizes[] = {0, 1, 4096, size - ps, size + ps, size * 2, size + 1, size - 1,
					      1ULL << 47, ~0ULL, ~0ULL - ps + 1};

		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			snprintf(v, sizeof v, "%llx", sizes[k]);
			with_field(l, 3, v, tok, sizeof tok);
			reject_one(tok, "size");
		}
	}
	/* field 4: page sizes */
	{
		unsigned long long pss[] = {0, 1, 4095, 3000, 4096, 8192, 65536, 2097152, 1ULL << 30, ps * 2, ps / 2,
					    1ULL << 63};

		for (size_t k = 0; k < sizeof pss / sizeof pss[0]; k++) {
			if (pss[k] == ps)
				continue;
			snprintf(v, sizeof v, "%llx", pss[k]);
			with_field(l, 4, v, tok, sizeof tok);
			reject_one(tok, "page size");
		}
	}
	/* field 5: addresses that are taken, unaligned, outside user space, or wrap */
	{
		uintptr_t stack = (uintptr_t)&v & ~(uintptr_t)(ps - 1);
		unsigned long long addrs[] = {0, 1, addr + 1, addr + 4096 == addr + ps ? addr + 1 : addr + 4096,
					      addr, addr + ps, stack, 0xffff800000000000ULL, ~0ULL & ~(ps - 1),
					      (~0ULL - size) & ~(ps - 1), (uintptr_t)&reject_one & ~(uintptr_t)(ps - 1)};

		for (size_t k = 0; k < sizeof addrs / sizeof addrs[0]; k++) {
			snprintf(v, sizeof v, "%llx", addrs[k]);
			with_field(l, 5, v, tok, sizeof tok);
			reject_one(tok, "address");
		}
	}
	/* field 8: wrong check digits */
	for (int k = 0; k < 8; k++) {
		struct fields f = l->f;
		char ch = f.f[8][k];

		f.f[8][k] = ch == '0' ? '1' : '0';
		join_checked(&f, tok, sizeof tok);
		memcpy(tok + strlen(tok) - 8, f.f[8], 8);
		reject_one(tok, "check digit");
	}
}

/* The identifier pointed at objects that are not the segment. */
static void foreign_objects_are_refused(const struct live *l)
{
	size_t size = (size_t)strtoull(l->f.f[3], NULL, 16);
	size_t align = l->page_size > 65536 ? l->page_size : 65536;
	char tmpl[] = "/tmp/hpshm-token-test.XXXXXX";
	char tok[HPSHM_TOKEN_MAX], id[64], addr[32];
	const char *const provs[] = {"plain", "memfd_hugetlb", "hugetlbfs", "sysv_hugetlb"};
	struct fields f;
	int devnull, tmp, closed, shmid, foreign;
	void *shm;
	struct shmid_ds ds;

	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	cr_assert_geq(devnull, 0);
	tmp = mkostemp(tmpl, O_CLOEXEC);
	cr_assert_geq(tmp, 0);
	unlink(tmpl);
	cr_assert_eq(ftruncate(tmp, (off_t)size), 0);
	closed = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(closed, 0);
	close(closed);
	/* A SysV segment that is not hpshm's, removed when this process ends (IPC_RMID while attached). */
	shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	cr_assert_geq(shmid, 0, "shmget: %s", strerror(errno));
	shm = shmat(shmid, NULL, 0);
	cr_assert_neq(shm, (void *)-1);
	cr_assert_eq(shmctl(shmid, IPC_RMID, NULL), 0);
	memset(shm, 0, size);
	/* An id no segment has: one above every id in use. */
	int nosuch = shmctl(0, SHM_INFO, &ds) + 1 + 12345;

	/* A hugetlb memfd that is not hpshm's.  For a huge segment, of its page size and length:
	 * every check of what the descriptor is passes, and only the header (or a labelled
	 * memfd's name) can tell.  For a segment on base pages, one huge page of the default
	 * size: the kernel maps it in whole huge pages, more than the token's length, and the
	 * free address below is aligned to them, so a provider that mapped it would leave a
	 * mapping behind that the maps count of every refusal sees. */
	foreign = -1;
	if (l->page_size > 4096 || hpt_default_huge_page_size() > 0) {
		size_t hps = l->page_size > 4096 ? l->page_size : hpt_default_huge_page_size();

		foreign = hpshm__linux_sys.memfd_create("not-hpshm", MFD_CLOEXEC | MFD_HUGETLB | hpshm__linux_huge_bits(hps));
		if (foreign >= 0)
			cr_assert_eq(ftruncate(foreign, (off_t)((size + hps - 1) / hps * hps)), 0);
		if (hps > align)
			align = hps;
	}
	snprintf(addr, sizeof addr, "%" PRIxPTR, free_aligned(size > align ? size : align, align));
	for (size_t pi = 0; pi < sizeof provs / sizeof provs[0]; pi++) {
		const int ids[] = {devnull, tmp, closed};

		for (int at = 0; at < 2 && foreign >= 0; at++) {
			f = l->f;
			snprintf(f.f[1], sizeof f.f[1], "%s", provs[pi]);
			if (at)
				snprintf(f.f[5], sizeof f.f[5], "%s", addr);
			snprintf(f.f[2], sizeof f.f[2], "fd=%d", foreign);
			join_checked(&f, tok, sizeof tok);
			reject_one(tok, "fd of a hugetlb memfd that is not hpshm's");
		}

		for (int at = 0; at < 2; at++) {
			f = l->f;
			snprintf(f.f[1], sizeof f.f[1], "%s", provs[pi]);
			if (at)
				snprintf(f.f[5], sizeof f.f[5], "%s", addr); /* free: the header decides */
			for (size_t k = 0; k < 3; k++) {
				snprintf(id, sizeof id, "fd=%d", ids[k]);
				snprintf(f.f[2], sizeof f.f[2], "%s", id);
				join_checked(&f, tok, sizeof tok);
				reject_one(tok, k == 0 ? "fd of /dev/null" : k == 1 ? "fd of a regular file" : "closed fd");
			}
			snprintf(f.f[2], sizeof f.f[2], "shm=%d", shmid);
			join_checked(&f, tok, sizeof tok);
			reject_one(tok, "shm= of a SysV segment that is not hpshm's");
			snprintf(f.f[2], sizeof f.f[2], "shm=%d", nosuch);
			join_checked(&f, tok, sizeof tok);
			reject_one(tok, "shm= of a non-existent id");
			snprintf(f.f[2], sizeof f.f[2], "path=%s", tmpl);
			join_checked(&f, tok, sizeof tok);
			reject_one(tok, "path= of a removed temp file");
		}
	}
	/* the unrelated SysV segment was not touched */
	for (size_t i = 0; i < size; i++)
		if (((unsigned char *)shm)[i]) {
			failed("foreign SysV segment", "written at byte %zu", i);
			break;
		}
	shmdt(shm);
	if (foreign >= 0)
		CHECK(close(foreign) == 0, "foreign memfd", "a refused token closed its descriptor");
	close(tmp);
	close(devnull);
}

static void truncations_and_flips(const struct live *l)
{
	static const unsigned char repl[] = {0x01, 0x20, 0x80, 0xff, ':', ' ', '\n', 'A', '0', 'g'};
	size_t len = strlen(l->tok);
	char tok[HPSHM_TOKEN_MAX + 2]; /* room for a token of the longest length plus a byte more */

	for (size_t n = 0; n < len; n++) {
		memcpy(tok, l->tok, n);
		tok[n] = '\0';
		reject_one(tok, "truncated");
	}
	for (size_t i = 0; i < len; i++) {
		for (size_t k = 0; k < sizeof repl; k++) {
			memcpy(tok, l->tok, len + 1);
			if (k < 4)
				tok[i] = (char)(tok[i] ^ repl[k]);
			else if (tok[i] != (char)repl[k])
				tok[i] = (char)repl[k];
			else
				continue;
			reject_one(tok, "byte changed");
		}
	}
	/* extra bytes */
	snprintf(tok, sizeof tok, "%s:", l->tok);
	reject_one(tok, "trailing ':'");
	snprintf(tok, sizeof tok, "%s0", l->tok);
	reject_one(tok, "trailing digit");
	snprintf(tok, sizeof tok, " %s", l->tok);
	reject_one(tok, "leading space");
	snprintf(tok, sizeof tok, "%s\n", l->tok);
	reject_one(tok, "trailing newline");
}

static void random_tokens(const struct live *l, unsigned until)
{
	static const char *const provs[] = {"plain", "memfd_hugetlb", "hugetlbfs", "sysv_hugetlb", "mmap_hugetlb", "x"};
	char *buf = malloc(HPSHM_TOKEN_MAX * 4);
	size_t len = strlen(l->tok);

	cr_assert_not_null(buf);
	while (tried < until) {
		unsigned kind = (unsigned)rnd_below(10);

		if (kind < 3) {
			/* random printable junk, sometimes behind the right prefix */
			size_t n = rnd_below(kind == 2 ? HPSHM_TOKEN_MAX * 3 : 120), off = 0;

			if (rnd_below(2))
				off = (size_t)snprintf(buf, 16, "hpshm2:");
			for (size_t i = off; i < n; i++)
				buf[i] = (char)(0x21 + rnd_below(0x7e - 0x21 + 1));
			buf[n > off ? n : off] = '\0';
			reject_one(buf, "random junk");
		} else if (kind < 6) {
			/* structurally valid: random fields, correct check digits */
			struct fields f;
			static const char *const idk[] = {"fd=", "shm=", "path=/hpshm.", "fd=-"};

			memset(&f, 0, sizeof f);
			strcpy(f.f[0], "hpshm2");
			snprintf(f.f[1], sizeof f.f[1], "%s", provs[rnd_below(6)]);
			snprintf(f.f[2], sizeof f.f[2], "%s%llu", idk[rnd_below(4)],
				 (unsigned long long)rnd_below(rnd_below(2) ? 64 : 1u << 20));
			snprintf(f.f[3], sizeof f.f[3], "%llx",
				 rnd_below(2) ? (unsigned long long)(rnd_below(64) + 1) << 12 : (unsigned long long)rnd());
			snprintf(f.f[4], sizeof f.f[4], "%llx", 1ULL << (12 + rnd_below(20)));
			snprintf(f.f[5], sizeof f.f[5], "%llx",
				 rnd_below(2) ? (unsigned long long)(rnd() & 0x7fffffe00000ULL) : (unsigned long long)rnd());
			snprintf(f.f[6], sizeof f.f[6], "%016llx", (unsigned long long)rnd());
			if (rnd_below(2))
				snprintf(f.f[7], sizeof f.f[7], "tail");
			else
				snprintf(f.f[7], sizeof f.f[7], "%s%llu", idk[rnd_below(4)], (unsigned long long)rnd_below(64));
			join_checked(&f, buf, HPSHM_TOKEN_MAX);
			reject_one(buf, "random fields");
		} else {
			/* the live token with 1..4 random bytes changed, check recomputed half the time */
			struct fields f;
			int changes = 1 + (int)rnd_below(4), fix = (int)rnd_below(2);

			memcpy(buf, l->tok, len + 1);
			for (int c = 0; c < changes; c++) {
				size_t i = rnd_below(len);

				buf[i] = (char)(buf[i] == '0' ? '1' : 0x21 + rnd_below(0x7e - 0x21 + 1));
			}
			if (!strcmp(buf, l->tok))
				continue;
			if (fix && strchr(buf, ':')) {
				/* only when it still has nine fields: recompute the check */
				int colons = 0;

				for (size_t i = 0; buf[i]; i++)
					colons += buf[i] == ':';
				if (colons == NFIELDS - 1) {
					/* A changed address alone is refused too: the header holds the
					 * creator's address. */
					split(buf, &f);
					join_checked(&f, buf, HPSHM_TOKEN_MAX);
				}
			}
			reject_one(buf, "mutated");
		}
	}
	free(buf);
}

static void very_long_and_empty(void)
{
	size_t big = 100000;
	char *s = malloc(big + 1);

	cr_assert_not_null(s);
	reject_one("", "empty string");
	reject_one(":", "one colon");
	reject_one("hpshm2:", "prefix only");
	reject_one("hpshm2::::::::::", "empty fields");
	for (size_t n = HPSHM_TOKEN_MAX - 2; n <= HPSHM_TOKEN_MAX + 2; n++) {
		memset(s, 'a', n);
		memcpy(s, "hpshm2:", 7);
		s[n] = '\0';
		reject_one(s, "long string");
	}
	memset(s, 'f', big);
	memcpy(s, "hpshm2:plain:fd=3:", 18);
	s[big] = '\0';
	reject_one(s, "100000 bytes");
	memset(s, ':', big);
	reject_one(s, "100000 colons");
	free(s);
}

/* ---- tokens tried in a child started by a real exec ----
 *
 * In the creator the segment's own range is taken, so an edited token that keeps the address
 * never gets past the mapping there.  A child started by exec has that range free, as the
 * segment's real children do, and there an edited token gets as far as it can.
 */

extern char **environ;

/*
 * Run reattach_child with argv[1..] = args (NULL-terminated, at most 3) and HPSHM_TOKEN=tok,
 * inheriting the descriptors tok names (its identifier's and its header companion's), and
 * wait: its exit status, or 128 + the signal that killed it.
 */
static int child_run(const char *tok, const char *const *args)
{
	char path[] = HPSHM_REATTACH_CHILD, tokvar[HPSHM_TOKEN_MAX + 16], arg[3][64];
	char *argv[5] = {path, NULL, NULL, NULL, NULL};
	char **envp;
	int fds[2] = {token_fd(tok, 2), token_fd(tok, 7)}, status;
	size_t n = 0, k = 0;
	pid_t pid;

	for (int i = 0; i < 3 && args[i]; i++) {
		snprintf(arg[i], sizeof arg[i], "%s", args[i]);
		argv[i + 1] = arg[i];
	}
	snprintf(tokvar, sizeof tokvar, "HPSHM_TOKEN=%s", tok);
	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof *envp);
	cr_assert_not_null(envp);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "HPSHM_TOKEN=", 12) != 0)
			envp[k++] = environ[i];
	envp[k] = tokvar;
	pid = hpt_fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				(void)fcntl(fds[i], F_SETFD, 0);
		execve(path, argv, envp);
		_exit(126);
	}
	free(envp);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A child given tok must refuse it with HPSHM_EINVAL and leave nothing mapped (reattach_child refuse). */
static void refused_in_a_child(const char *tok, const char *what)
{
	static const char *const refuse[] = {"refuse", NULL};
	int st = child_run(tok, refuse);

	tried++;
	CHECK(st == 0, what, "the exec'd child exited %d (%s) with \"%.300s\"", st,
	      st == 23 ? "the token attached" : st == 24 ? "refused, but not with HPSHM_EINVAL" :
	      st == 22 ? "the refusal left a mapping or a descriptor" : "see its stderr", tok);
}

/*
 * The live token attaches in a child (so what follows is refused for its edit alone).  Then,
 * check digits recomputed each time: with the identifier of another live segment made the
 * same way, it must be refused, even for an unnamed segment that fills its huge pages, whose
 * header is in a companion the token names apart and which knows nothing of the edit; with a
 * smaller size it must be refused too, even for a labelled memfd, which keeps no header that
 * holds the size.  other_kv makes the other segment (another name, where there is one).
 */
static void edited_tokens_are_refused_in_a_child(const struct live *l, const char *other_kv, size_t size)
{
	static const char *const hold[] = {"hold", "0", "0", NULL};
	unsigned long long len = strtoull(l->f.f[3], NULL, 16), ps = strtoull(l->f.f[4], NULL, 16);
	char tok[HPSHM_TOKEN_MAX], v[32];
	struct live o;
	int st, rc;

	st = child_run(l->tok, hold);
	CHECK(st == 0, "live token in a child", "the exec'd child exited %d with the live token %s", st, l->tok);

	rc = live_make(&o, other_kv, size);
	cr_assert_eq(rc, 0, "%s, a second segment: %s", other_kv, hpshm_errname(rc));
	with_field(l, 2, o.f.f[2], tok, sizeof tok);
	refused_in_a_child(tok, "another segment's identifier");
	live_free(&o);

	for (unsigned long long less = ps; less < len; less *= 2) {
		snprintf(v, sizeof v, "%llx", len - less);
		with_field(l, 3, v, tok, sizeof tok);
		refused_in_a_child(tok, "smaller size");
	}
}

Test(tokens, ten_thousand_bad_tokens_are_rejected, .timeout = 120)
{
	struct live l;
	hpshm_error err;
	int rc;

	rc = live_make(&l, "provider=plain,huge_pages=off,reattach=exec", 3 * 4096);
	cr_assert_eq(rc, 0, "plain with reattach=exec: %s", hpshm_errname(rc));
	cr_assert_eq(hpshm_segment_attach(NULL, l.tok, NULL, &err), HPSHM_EINVAL);
	{
		hpshm_segment *s = NULL;

		cr_assert_lt(hpshm_segment_attach(&s, NULL, NULL, &err), 0);
		cr_assert_null(s);
	}
	rng_state = SEED;
	failures_reset();
	very_long_and_empty();
	truncations_and_flips(&l);
	fields_are_checked(&l);
	foreign_objects_are_refused(&l);
	header_is_checked(&l);
	cr_log_info("%u tokens from the live one, then random ones up to %d", tried, NTOKENS);
	random_tokens(&l, NTOKENS);
	/* the live segment is untouched */
	{
		hpshm_segment *s = NULL;

		rc = hpshm_segment_attach(&s, l.tok, NULL, &err);
		CHECK(rc == HPSHM_EEXIST, "live token", "in its creator: %s, want HPSHM_EEXIST (range taken)",
		      hpshm_errname(rc));
		if (rc == 0)
			hpshm_segment_destroy(s);
	}
	live_free(&l);
	cr_log_info("%u tokens tried", tried);
	failures_assert();
	cr_assert_geq(tried, NTOKENS);
}

/* A live plain segment, for the tests of one rule each. */
static void live_plain(struct live *l)
{
	int rc = live_make(l, "provider=plain,huge_pages=off,reattach=exec", 3 * 4096);

	cr_assert_eq(rc, 0, "plain with reattach=exec: %s", hpshm_errname(rc));
}

/*
 * The child's case: a token edited to another address (check digits recomputed) maps the
 * object there, where the pointers the creator stored in it are wrong.  0x10000 is free in
 * almost every process; a range far from the segment is too.  Each must be refused naming
 * both addresses, and leave nothing mapped.
 */
Test(tokens, edited_address_is_refused_naming_both_addresses)
{
	struct live l;
	size_t len;
	unsigned long long created;
	uintptr_t at[2];
	hpshm_error err;

	live_plain(&l);
	len = (size_t)strtoull(l.f.f[3], NULL, 16);
	created = strtoull(l.f.f[5], NULL, 16);
	at[0] = 0x10000;
	at[1] = free_aligned(len, 65536);
	failures_reset();
	for (int i = 0; i < 2; i++) {
		char tok[HPSHM_TOKEN_MAX], v[32];
		int rc, dupfd;
		struct fields f = l.f;

		if (hpt_is_mapped((void *)at[i], len)) {
			cr_log_info("%#" PRIxPTR " is taken in this process: not tried", at[i]);
			continue;
		}
		/* A copy of the descriptor, so a wrong success cannot close the live segment's. */
		dupfd = fcntl(atoi(l.f.f[2] + 3), F_DUPFD_CLOEXEC, 0);
		cr_assert_geq(dupfd, 0);
		snprintf(f.f[2], sizeof f.f[2], "fd=%d", dupfd);
		snprintf(v, sizeof v, "%" PRIxPTR, at[i]);
		snprintf(f.f[5], sizeof f.f[5], "%s", v);
		join_checked(&f, tok, sizeof tok);
		rc = reject_err(tok, "edited address", &err);
		if (rc == HPSHM_EEXIST && hpt_emulator() && at[i] % ((uintptr_t)2 << 20) != 0) {
			/* qemu runs with a 2MiB host page (-p 2097152) and maps nothing off that grid. */
			CHECK(hpt_is_mapped((void *)at[i], len) == 0, "edited address", "%#" PRIxPTR " stayed mapped",
			      at[i]);
			cr_log_info("%#" PRIxPTR ": under %s nothing can be mapped off the 2MiB grid: not tried", at[i],
				    hpt_emulator());
			if (fcntl(dupfd, F_GETFD) >= 0)
				close(dupfd);
			continue;
		}
		CHECK(rc == HPSHM_EINVAL, "edited address", "%#" PRIxPTR ": %s, want HPSHM_EINVAL: %s", at[i],
		      hpshm_errname(rc), err.message);
		if (rc == HPSHM_EINVAL)
			names_both_addresses("edited address", &err, (unsigned long long)at[i], created);
		CHECK(hpt_is_mapped((void *)at[i], len) == 0, "edited address", "%#" PRIxPTR " stayed mapped", at[i]);
		cr_log_info("%s: %s", tok, err.message);
		if (fcntl(dupfd, F_GETFD) >= 0)
			close(dupfd);
	}
	live_free(&l);
	failures_assert();
}

/*
 * A segment whose header an older hpshm wrote (version 1: no creator address) cannot be
 * checked, so attach refuses it and names the version.  The live segment's header is made to
 * look like one, and the token moved to a free address so that it maps.
 */
Test(tokens, version_1_header_is_refused_naming_the_version)
{
	struct live l;
	struct hpshm_header *h;
	char tok[HPSHM_TOKEN_MAX];
	struct fields f;
	size_t len;
	hpshm_error err;
	int rc, dupfd;

	live_plain(&l);
	failures_reset();
	len = (size_t)strtoull(l.f.f[3], NULL, 16);
	h = (struct hpshm_header *)((char *)hpshm_segment_address(l.seg) + len - HPSHM_HEADER_REGION);
	cr_assert_eq(h->version, HPSHM_HEADER_VERSION);
	cr_assert_eq(h->creator_address, (uint64_t)(uintptr_t)hpshm_segment_address(l.seg));
	f = l.f;
	dupfd = fcntl(atoi(l.f.f[2] + 3), F_DUPFD_CLOEXEC, 0);
	cr_assert_geq(dupfd, 0);
	snprintf(f.f[2], sizeof f.f[2], "fd=%d", dupfd);
	snprintf(f.f[5], sizeof f.f[5], "%" PRIxPTR, free_aligned(len, 65536));
	join_checked(&f, tok, sizeof tok);
	h->version = 1;
	rc = reject_err(tok, "version 1 header", &err);
	h->version = HPSHM_HEADER_VERSION;
	CHECK(rc == HPSHM_EINVAL, "version 1 header", "%s, want HPSHM_EINVAL", hpshm_errname(rc));
	CHECK(hpt_contains(err.message, "version 1"), "version 1 header", "the message does not name it: %s",
	      err.message);
	if (fcntl(dupfd, F_GETFD) >= 0)
		close(dupfd);
	live_free(&l);
	failures_assert();
}

/*
 * A header kept in a companion must say which object it describes (version 3): one an older
 * hpshm wrote (version 2) cannot be bound to its segment, so attach refuses it and names the
 * version.  The live SysV segment's companion header is made to look like one, and the token
 * moved, with the header's creator address, to a free range so that it maps; the same token
 * with the header as it was attaches there, so the refusal was the version's alone.
 */
Test(tokens, version_2_companion_header_is_refused_naming_the_version)
{
	const char *kv = "provider=sysv_hugetlb,reattach=exec,huge_pages=on";
	size_t ps = probe_or_skip("sysv_hugetlb", 1, kv);
	struct hpshm_header *h;
	hpshm_segment *seg = NULL;
	char tok[HPSHM_TOKEN_MAX];
	uintptr_t at;
	uint64_t created;
	struct fields f;
	struct live l;
	hpshm_error err;
	int rc, dupfd;

	rc = live_make(&l, kv, ps);
	cr_assert_eq(rc, 0, "%s after a good probe: %s", kv, hpshm_errname(rc));
	cr_assert_eq(token_fd(l.tok, 7) >= 0, 1, "token %s: one whole page keeps its header in a companion", l.tok);
	failures_reset();
	h = (struct hpshm_header *)((char *)hpshm_segment_address(l.seg) + ps);
	cr_assert_eq(h->version, HPSHM_HEADER_VERSION);
	cr_assert_neq(h->object[0], '\0', "the companion's header records no object");
	at = free_aligned(ps + 65536, ps);
	dupfd = fcntl(token_fd(l.tok, 7), F_DUPFD_CLOEXEC, 0);
	cr_assert_geq(dupfd, 0);
	f = l.f;
	snprintf(f.f[5], sizeof f.f[5], "%" PRIxPTR, at);
	snprintf(f.f[7], sizeof f.f[7], "fd=%d", dupfd);
	join_checked(&f, tok, sizeof tok);
	created = h->creator_address;
	h->creator_address = at;
	h->version = 2;
	rc = reject_err(tok, "version 2 companion header", &err);
	h->version = HPSHM_HEADER_VERSION;
	CHECK(rc == HPSHM_EINVAL, "version 2 companion header", "%s, want HPSHM_EINVAL", hpshm_errname(rc));
	CHECK(hpt_contains(err.message, "version 2"), "version 2 companion header", "the message does not name it: %s",
	      err.message);
	CHECK(hpt_is_mapped((void *)at, ps + 65536) == 0, "version 2 companion header", "something stayed mapped");
	rc = hpshm_segment_attach(&seg, tok, NULL, &err);
	h->creator_address = created;
	CHECK(rc == 0, "version 3 companion header", "%s: %s", hpshm_errname(rc), err.message);
	if (rc == 0)
		hpshm_segment_destroy(seg); /* closes dupfd, which it took as its own */
	else if (fcntl(dupfd, F_GETFD) >= 0)
		close(dupfd);
	live_free(&l);
	failures_assert();
}

/* Below 64KiB, or off the 64KiB grid, no creator maps: the parser refuses, nothing is mapped. */
Test(tokens, address_below_64KiB_or_off_its_grid_is_refused_before_mapping)
{
	static const unsigned long long addrs[] = {0x1000, 0x8000, 0xf000, 0x11000, 0x7e0000001000ULL};
	struct live l;
	size_t len;
	hpshm_error err;

	live_plain(&l);
	len = (size_t)strtoull(l.f.f[3], NULL, 16);
	failures_reset();
	for (size_t i = 0; i < sizeof addrs / sizeof addrs[0]; i++) {
		char tok[HPSHM_TOKEN_MAX], v[32];
		int rc, dupfd, mapped0 = hpt_is_mapped((void *)(uintptr_t)addrs[i], len);
		struct fields f = l.f;

		dupfd = fcntl(atoi(l.f.f[2] + 3), F_DUPFD_CLOEXEC, 0);
		cr_assert_geq(dupfd, 0);
		snprintf(f.f[2], sizeof f.f[2], "fd=%d", dupfd);
		snprintf(v, sizeof v, "%llx", addrs[i]);
		snprintf(f.f[5], sizeof f.f[5], "%s", v);
		join_checked(&f, tok, sizeof tok);
		rc = reject_err(tok, "low or unaligned address", &err);
		CHECK(rc == HPSHM_EINVAL, "low or unaligned address", "%#llx: %s, want HPSHM_EINVAL", addrs[i],
		      hpshm_errname(rc));
		CHECK(hpt_contains(err.message, "malformed") && hpt_contains(err.message, "64KiB"),
		      "low or unaligned address", "%#llx: the parser did not refuse it naming 64KiB: %s", addrs[i],
		      err.message);
		CHECK(hpt_is_mapped((void *)(uintptr_t)addrs[i], len) == mapped0, "low or unaligned address",
		      "%#llx: the range's mappings changed", addrs[i]);
		if (fcntl(dupfd, F_GETFD) >= 0)
			close(dupfd);
	}
	live_free(&l);
	failures_assert();
}

static ssize_t no_proc_readlink(const char *path, char *buf, size_t len)
{
	(void)path;
	(void)buf;
	(void)len;
	errno = ENOENT;
	return -1;
}

/*
 * A memfd_hugetlb segment that fills its pages keeps no header object: its memfd's name is
 * the proof, read from /proc/self/fd.  A child that cannot read it (no /proc) is refused with
 * the failed call and the fix, maps nothing, and keeps the descriptor it was given.
 */
Test(tokens, a_labelled_memfd_whose_name_cannot_be_read_is_refused_naming_proc)
{
	const char *kv = "provider=memfd_hugetlb,reattach=exec,huge_pages=on";
	char tok[HPSHM_TOKEN_MAX];
	hpshm_segment *seg = NULL;
	hpshm_error err;
	struct fields f;
	struct live l;
	size_t ps = probe_or_skip("memfd_hugetlb", 1, kv);
	int rc, dupfd;

	rc = live_make(&l, kv, ps);
	cr_assert_eq(rc, 0, "%s after a good probe: %s", kv, hpshm_errname(rc));
	f = l.f;
	cr_assert_str_eq(f.f[7], "tag", "token %s: a segment of one whole page keeps its header in the label", l.tok);
	dupfd = fcntl(atoi(f.f[2] + 3), F_DUPFD_CLOEXEC, 0);
	cr_assert_geq(dupfd, 0);
	snprintf(f.f[2], sizeof f.f[2], "fd=%d", dupfd);
	join_checked(&f, tok, sizeof tok);
	hpshm__posix_sys.readlink = no_proc_readlink;
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_attach(&seg, tok, NULL, &err);
	hpshm__posix_sys_reset();
	cr_assert_eq(rc, HPSHM_ESYS, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	cr_assert_str_eq(err.call, "readlink");
	cr_assert_eq(err.sys_errno, ENOENT);
	cr_assert(hpt_contains(err.hint, "/proc"), "the hint does not say to mount /proc: %s", err.hint);
	cr_assert_geq(fcntl(dupfd, F_GETFD), 0, "the refused attach closed the descriptor it was given");
	/* With its name readable the same token passes the check and goes on to map, where the
	 * live segment holds the range: the refusal was the name's alone. */
	rc = hpshm_segment_attach(&seg, tok, NULL, &err);
	cr_assert_eq(rc, HPSHM_EEXIST, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(close(dupfd), 0);
	live_free(&l);
}

/* ---- plain and hugetlb memory ---- */

static int hugetlb_fd = -1;       /* the hugetlb memfd the tokens below name */
static unsigned hugetlb_maps;     /* mmap() calls the library made of it */
static unsigned hugetlb_fs_looks; /* fstatfs() calls that asked about it */
static unsigned hugetlb_looks;    /* fstat() calls that asked about it */
static int (*real_fstatfs)(int, struct statfs *);
static int (*real_fstat)(int, struct stat *);

static void *counting_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fd >= 0 && fd == hugetlb_fd)
		hugetlb_maps++;
	return mmap(addr, len, prot, flags, fd, off);
}

/* The first look at hugetlb_fd's file system says tmpfs, the rest the truth. */
static int fooled_fstatfs(int fd, struct statfs *buf)
{
	int rc = real_fstatfs(fd, buf);

	if (rc == 0 && fd == hugetlb_fd && hugetlb_fs_looks++ == 0)
		buf->f_type = 0x01021994; /* TMPFS_MAGIC */
	return rc;
}

/* The first look at hugetlb_fd says it is 64KiB long, the rest the truth. */
static int fooled_fstat(int fd, struct stat *buf)
{
	int rc = real_fstat(fd, buf);

	if (rc == 0 && fd == hugetlb_fd && hugetlb_looks++ == 0)
		buf->st_size = 65536;
	return rc;
}

/*
 * A live plain segment whose mapped length is 64KiB, a hugetlb memfd of one huge page, and a
 * free range for both: [at, at + 64KiB) for the segment and a huge page after it, huge-page
 * aligned, where a companion would go.  Skips without a pool.
 */
static size_t plain_and_hugetlb(struct live *l, uintptr_t *at)
{
	size_t hps = probe_or_skip("memfd_hugetlb", 1, "provider=memfd_hugetlb,huge_pages=on");
	int rc = live_make(l, "provider=plain,huge_pages=off,reattach=exec", 65536 - HPSHM_HEADER_REGION);

	cr_assert_eq(rc, 0, "plain with reattach=exec: %s", hpshm_errname(rc));
	cr_assert_eq(strtoull(l->f.f[3], NULL, 16), 65536ULL, "token %s", l->tok);
	hugetlb_fd = hpshm__linux_sys.memfd_create("not-plain", MFD_CLOEXEC | MFD_HUGETLB | hpshm__linux_huge_bits(hps));
	cr_assert_geq(hugetlb_fd, 0, "memfd_create(MFD_HUGETLB): %s", strerror(errno));
	cr_assert_eq(ftruncate(hugetlb_fd, (off_t)hps), 0);
	*at = free_aligned(3 * hps, hps) + hps - 65536;
	return hps;
}

/*
 * tok must be refused with HPSHM_EINVAL, and nothing mapped from at for len bytes.  A token
 * whose segment is off the 2MiB grid maps nothing under qemu, which runs with a 2MiB host page
 * (-p 2097152): HPSHM_EEXIST there, and the token is not tried.
 */
static void refused_leaving_nothing(const char *tok, const char *what, uintptr_t at, size_t len, uintptr_t segment)
{
	hpshm_error err;
	int rc = reject_err(tok, what, &err);

	if (rc == HPSHM_EEXIST && hpt_emulator() && segment % ((uintptr_t)2 << 20) != 0) {
		CHECK(hpt_is_mapped((void *)at, len) == 0, what, "something is left mapped after \"%s\"", tok);
		cr_log_info("%s: under %s nothing can be mapped off the 2MiB grid: not tried", what, hpt_emulator());
		return;
	}
	CHECK(rc == HPSHM_EINVAL, what, "%s, want HPSHM_EINVAL: %s", hpshm_errname(rc), err.message);
	CHECK(hpt_is_mapped((void *)at, len) == 0, what, "something is left mapped in %#" PRIxPTR "+%#zx after \"%s\"",
	      at, len, tok);
	cr_log_info("%s: %s", what, err.message);
}

/*
 * plain makes base-page memory only.  A token that names a hugetlb memfd for it, as the
 * segment or as its header's companion (check digits recomputed), is refused before that
 * memfd is mapped at all: the kernel would map whole huge pages of it, more than the token's
 * length.  Nothing is left mapped.
 */
Test(tokens, plain_refuses_hugetlb_memory_before_mapping_it)
{
	char tok[HPSHM_TOKEN_MAX], v[64];
	struct fields f;
	struct live l;
	uintptr_t at;
	size_t hps = plain_and_hugetlb(&l, &at);
	int dupfd = fcntl(atoi(l.f.f[2] + 3), F_DUPFD_CLOEXEC, 0);

	cr_assert_geq(dupfd, 0);
	failures_reset();
	hpshm__posix_sys.mmap = counting_mmap;
	hugetlb_maps = 0;

	/* The segment: at is 64KiB below a huge page boundary, at + 64KiB on it. */
	f = l.f;
	snprintf(f.f[2], sizeof f.f[2], "fd=%d", hugetlb_fd);
	snprintf(f.f[5], sizeof f.f[5], "%" PRIxPTR, at + 65536);
	join_checked(&f, tok, sizeof tok);
	refused_leaving_nothing(tok, "plain segment on hugetlb memory", at, 65536 + 2 * hps, at + 65536);

	/* The header's companion, after a plain segment that is the live one's. */
	f = l.f;
	snprintf(f.f[2], sizeof f.f[2], "fd=%d", dupfd);
	snprintf(f.f[5], sizeof f.f[5], "%" PRIxPTR, at);
	snprintf(v, sizeof v, "fd=%d", hugetlb_fd);
	snprintf(f.f[7], sizeof f.f[7], "%s", v);
	join_checked(&f, tok, sizeof tok);
	refused_leaving_nothing(tok, "plain companion on hugetlb memory", at, 65536 + 2 * hps, at);

	/* The segment again, with the memfd's own length: only what the memory is can tell. */
	f = l.f;
	snprintf(f.f[2], sizeof f.f[2], "fd=%d", hugetlb_fd);
	snprintf(f.f[3], sizeof f.f[3], "%zx", hps);
	snprintf(f.f[5], sizeof f.f[5], "%" PRIxPTR, at + 65536);
	join_checked(&f, tok, sizeof tok);
	refused_leaving_nothing(tok, "plain segment on hugetlb memory of its length", at, 65536 + 2 * hps,
				at + 65536);

	hpshm__posix_sys_reset();
	CHECK(hugetlb_maps == 0, "hugetlb memory mapped", "plain mapped the hugetlb memfd %u times", hugetlb_maps);
	CHECK(fcntl(dupfd, F_GETFD) >= 0, "descriptor", "a refused attach closed the descriptor it was given");
	close(dupfd);
	close(hugetlb_fd);
	hugetlb_fd = -1;
	live_free(&l);
	failures_assert();
}

/*
 * Should a provider's checks of what it maps ever be fooled (here plain's, told once that the
 * hugetlb memfd is tmpfs and 64KiB long), the kernel maps whole huge pages of a hugetlb file,
 * more than the token's length.  The mapping then says what the kernel really mapped, the
 * core refuses a mapping longer than the token's, and the undo unmaps all of it: nothing is
 * left behind (an unmap of the token's length fails for a hugetlb mapping, and left it all).
 */
Test(tokens, an_undone_attach_unmaps_all_the_kernel_mapped)
{
	char tok[HPSHM_TOKEN_MAX];
	struct fields f;
	struct live l;
	uintptr_t at;
	size_t hps = plain_and_hugetlb(&l, &at);

	failures_reset();
	f = l.f;
	snprintf(f.f[2], sizeof f.f[2], "fd=%d", hugetlb_fd);
	snprintf(f.f[5], sizeof f.f[5], "%" PRIxPTR, at + 65536);
	join_checked(&f, tok, sizeof tok);
	real_fstatfs = hpshm__linux_sys.fstatfs;
	hpshm__linux_sys.fstatfs = fooled_fstatfs;
	real_fstat = hpshm__posix_sys.fstat;
	hpshm__posix_sys.fstat = fooled_fstat;
	hpshm__posix_sys.mmap = counting_mmap;
	hugetlb_fs_looks = hugetlb_looks = hugetlb_maps = 0;
	{
		hpshm_error err;
		int rc = reject_err(tok, "a fooled check", &err);

		CHECK(rc < 0, "a fooled check", "attached");
		cr_log_info("%s: %s", hpshm_errname(rc), err.message);
	}
	hpshm__linux_sys_reset();
	hpshm__posix_sys_reset();
	cr_log_info("the hugetlb memfd was looked at %u + %u times and mapped %u times", hugetlb_looks, hugetlb_fs_looks,
		    hugetlb_maps);
	CHECK(hugetlb_maps == 1, "a fooled check", "the fooled check did not lead to a mapping (%u): the test proves nothing",
	      hugetlb_maps);
	CHECK(hpt_is_mapped((void *)(at + 65536), hps) == 0, "a fooled check",
	      "the huge page mapped at %#" PRIxPTR " was left behind", at + 65536);
	close(hugetlb_fd);
	hugetlb_fd = -1;
	live_free(&l);
	failures_assert();
}

/* What the fake secure_getenv was asked, and whether it plays a setuid process. */
static char asked[64];
static int untrusted;

static char *fake_secure_getenv(const char *name)
{
	snprintf(asked, sizeof asked, "%s", name);
	return untrusted ? NULL : getenv(name);
}

/*
 * hpshm_segment_attach_env() reads HPSHM_TOKEN through the trusted getenv, the one the config
 * uses: in a process that may not trust its environment (glibc's secure_getenv answers NULL
 * there) the token is not taken, even when it is set and good.
 */
Test(tokens, attach_env_reads_the_token_through_the_trusted_getenv)
{
	struct live l;
	hpshm_segment *seg = (hpshm_segment *)&seg;
	hpshm_error err;
	int rc;

	live_plain(&l);
	failures_reset();
	cr_assert_eq(setenv("HPSHM_TOKEN", l.tok, 1), 0);
	hpshm__linux_sys.secure_getenv = fake_secure_getenv;

	/* Trusted: the token is read (and, in its creator, finds the range taken). */
	untrusted = 0;
	asked[0] = '\0';
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	if (rc == 0)
		hpshm_segment_destroy(seg);
	cr_expect_eq(rc, HPSHM_EEXIST, "trusted: %s, want HPSHM_EEXIST (the token was read): %s", hpshm_errname(rc),
		     err.message);
	cr_expect_str_eq(asked, "HPSHM_TOKEN", "attach_env did not ask the trusted getenv (asked \"%s\")", asked);

	/* Not trusted: as if HPSHM_TOKEN were not set. */
	untrusted = 1;
	asked[0] = '\0';
	seg = (hpshm_segment *)&seg;
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	if (rc == 0)
		hpshm_segment_destroy(seg);
	cr_expect_eq(rc, HPSHM_EINVAL, "untrusted environment: %s, want HPSHM_EINVAL: %s", hpshm_errname(rc),
		     err.message);
	cr_expect_null(seg);
	cr_expect(hpt_contains(err.message, "HPSHM_TOKEN"), "%s", err.message);
	cr_expect_str_eq(asked, "HPSHM_TOKEN", "attach_env did not ask the trusted getenv (asked \"%s\")", asked);

	hpshm__linux_sys_reset();
	unsetenv("HPSHM_TOKEN");
	live_free(&l);
	failures_assert();
}

/* The same mutations against each reattachable provider that works here. */
struct prov_case {
	char   provider[HPSHM_NAME_MAX];
	int    huge;
	int    named;
};

static struct prov_case prov_cases[16];

ParameterizedTestParameters(tokens, every_provider_checks_its_tokens)
{
	const char *name;
	unsigned caps;
	size_t n = 0;

	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL && n < 14; i++) {
		if (!(caps & HPSHM_CAP_REATTACH))
			continue;
		memset(&prov_cases[n], 0, sizeof prov_cases[n]);
		snprintf(prov_cases[n].provider, sizeof prov_cases[n].provider, "%s", name);
		prov_cases[n].huge = (caps & HPSHM_CAP_HUGE) != 0;
		n++;
		if (caps & HPSHM_CAP_NAMED) {
			prov_cases[n] = prov_cases[n - 1];
			prov_cases[n].named = 1;
			n++;
		}
	}
	return cr_make_param_array(struct prov_case, prov_cases, n);
}

ParameterizedTest(struct prov_case *c, tokens, every_provider_checks_its_tokens, .timeout = 120)
{
	char kv[256], other_kv[256 + 16];
	size_t ps, size;
	struct live l;
	int rc;

	snprintf(kv, sizeof kv, "provider=%s,reattach=exec,huge_pages=%s%s", c->provider, c->huge ? "on" : "off",
		 c->named ? ",name=tokentest" : "");
	snprintf(other_kv, sizeof other_kv, "%s%s", kv, c->named ? "-other" : "");
	cr_log_info("%s", kv);
	ps = probe_or_skip(c->provider, c->huge, kv);
	size = ps ? 2 * ps : 2 * 4096;
	rc = live_make(&l, kv, size);
	cr_assert_eq(rc, 0, "%s after a good probe: %s", kv, hpshm_errname(rc));
	rng_state = SEED ^ (uint64_t)strlen(kv);
	failures_reset();
	truncations_and_flips(&l);
	fields_are_checked(&l);
	foreign_objects_are_refused(&l);
	header_is_checked(&l);
	edited_tokens_are_refused_in_a_child(&l, other_kv, size);
	cr_log_info("%s: %u tokens tried", kv, tried);
	live_free(&l);
	failures_assert();
}
