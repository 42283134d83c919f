/* SPDX-License-Identifier: MIT */
/*
 * tests/reattach_child.c -- the program the re-attach tests start by a real exec.
 *
 * It is always started through hpshm_child_spawn(), so the segment's token is in HPSHM_TOKEN and
 * its descriptor (if any) is inherited.  Its first act in every mode is to attach (or, in
 * "clash" mode, to occupy the segment's range and then attach), before anything else can
 * map memory at the segment's address.  It uses only the public API, and reads the page
 * size from the kernel itself (/proc/self/smaps), never trusting the library's report alone.
 *
 * Modes (numbers in hex with 0x, or decimal):
 *
 *   check ADDR PAGE_SIZE SLOT NSLOTS VALUE
 *       attach; the address must be ADDR; the pattern (reattach_pattern()) must be in every
 *       usable word except the NSLOTS write-back slots; smaps KernelPageSize of the segment's
 *       VMA and the report's verified page size must be PAGE_SIZE; the report must say it was
 *       attached (origin, attach_ns, and "attach=" in its line, not "create="); write VALUE in slot SLOT;
 *       detach (the range must then be unmapped); exit 0.
 *   clash ADDR OFFSET
 *       map an anonymous PROT_NONE page at ADDR + OFFSET with MAP_FIXED_NOREPLACE, then
 *       attach: it must fail with HPSHM_EEXIST, err.message must hold the holder's
 *       /proc/self/maps line (its "start-end" range), and no mapping or descriptor may be
 *       left behind; exit 0.
 *   hold SECONDS SLOT
 *       attach, write this process's pid in slot SLOT (of 64), then sleep up to SECONDS
 *       (the crash test SIGKILLs it, or lets it end), detach, exit 0.
 *   refuse [FD]
 *       the token names another object than its segment (edited, or stale): with FD, first
 *       wait until a byte can be read from descriptor FD (the parent makes the token stale
 *       meanwhile); then attach, which must fail with HPSHM_EINVAL and leave nothing mapped
 *       in the token's range or the granule after it (a header companion's), and no
 *       descriptor; print the error and exit 0.
 *   open NAME KV ADDR PAGE_SIZE VALUE
 *       started without a token and by no hpshm_child_spawn() (HPSHM_TOKEN must be unset):
 *       hpshm_segment_open(NAME) under the configuration KV ("-" for none) as its first act;
 *       ADDR is the creator's address, where the segment must be (relocated 0) when KV says
 *       reattach=exec, and "-" else; the report must say opened (origin, and "open=" in its
 *       line rather than "create="), not the owner, PAGE_SIZE from smaps and the report; the
 *       pattern must be in every usable word but word 0, where VALUE is written; then
 *       hpshm_segment_destroy(), which must only detach (the range unmapped); exit 0.
 *   refuse-open NAME KV CODE
 *       hpshm_segment_open(NAME) under KV must fail with the HPSHM_E* code named CODE
 *       ("HPSHM_EACCES"), with a message and a hint, and leave no mapping or descriptor
 *       behind; print the error and exit 0.
 *   resize-read FD
 *       attach a resizable segment, then loop as test_resize_crash's readers do
 *       (rstorm_read_loop() of resize_read.c: a sync before one loop in RSTORM_SYNC_EVERY, the
 *       size, word 0 of every page), writing the size (a uint64_t) on descriptor FD after each
 *       loop that synced, without blocking (a full pipe skips a record), until that write
 *       fails because the test closed its end (EPIPE); detach, exit 0.  A failed check exits
 *       CHILD_ERESIZE plus its RSTORM_E* code; a read that faults dies of the signal.
 *   fd N open|closed
 *       descriptor N is open in this process (or is not): what a program exec'd by the test
 *       inherited from it; exit 0 if so.
 *
 * Exit codes name the check that failed (CHILD_E* below); the reason goes to stderr, which
 * Criterion shows with the failing test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hpshm.h"
#include "reattach_child.h"
#include "resize_storm.h"

static const char *mode = "?";

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "reattach_child %s [pid %ld]: ", mode, (long)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static int num(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

/* KernelPageSize of the smaps VMA holding addr, in bytes; 0 if none. */
static size_t smaps_page_size(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[1024];
	uintptr_t a = (uintptr_t)addr;
	size_t result = 0;
	int inside = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, kb;
		char *dash = strchr(line, '-'), *space = strchr(line, ' ');

		if (dash && space && dash < space && sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (inside)
				break;
			inside = a >= lo && a < hi;
			continue;
		}
		if (inside && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			result = (size_t)kb * 1024;
	}
	fclose(f);
	return result;
}

/* The mapped size a token carries: its fourth field, in hex (doc/reattach.md).  0, or -1. */
static int token_size(const char *token, unsigned long long *out)
{
	const char *p = token;
	char *end;

	for (int field = 0; field < 3; field++) {
		p = strchr(p, ':');
		if (!p)
			return -1;
		p++;
	}
	*out = strtoull(p, &end, 16);
	return end > p && *end == ':' ? 0 : -1;
}

/* Is any byte of [addr, addr+len) mapped?  The address is as the token carries it: 64 bits. */
static int is_mapped(unsigned long long a, unsigned long long len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo < a + len && hi > a)
			found = 1;
	}
	fclose(f);
	return found;
}

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

/* Shared mappings in /proc/self/maps (a segment's; private ones come and go with malloc). */
static int maps_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024], perms[8];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%*s %7s", perms) == 1 && perms[3] == 's')
			n++;
	fclose(f);
	return n;
}

static int mode_check(int argc, char **argv)
{
	unsigned long long addr, ps, slot, nslots, value;
	hpshm_segment *seg = NULL;
	const hpshm_report *r;
	hpshm_error err;
	uint64_t *w;
	size_t words, kps, i, bad = 0, first_bad = 0;
	int rc;

	/* First act: attach, before the argument parsing can allocate anything. */
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	if (rc < 0)
		return fail(CHILD_EATTACH, "attach: %s: %s (hint: %s)", hpshm_errname(rc), err.message, err.hint);
	if (argc != 7 || num(argv[2], &addr) || num(argv[3], &ps) || num(argv[4], &slot) || num(argv[5], &nslots) ||
	    num(argv[6], &value) || nslots == 0 || slot >= nslots)
		return fail(CHILD_EUSAGE, "usage: check ADDR PAGE_SIZE SLOT NSLOTS VALUE");
	if (hpshm_segment_is_owner(seg) != 0)
		return fail(CHILD_EOWNER, "hpshm_segment_is_owner() says the child created the segment");
	w = hpshm_segment_address(seg);
	if ((uintptr_t)w != addr)
		return fail(CHILD_EADDRESS, "attached at %p, the parent's segment is at %#llx", (void *)w, addr);
	r = hpshm_segment_report(seg);
	/* An attached segment's report leaves the library stamped as a created one's does. */
	if (r->version != HPSHM_REPORT_VERSION)
		return fail(CHILD_EREPORTV, "the report has version %u, want %d", r->version, HPSHM_REPORT_VERSION);
	for (i = 0; i < sizeof r->reserved / sizeof r->reserved[0]; i++)
		if (r->reserved[i] != 0)
			return fail(CHILD_EREPORTV, "reserved[%zu] of the report is %#llx, not 0", i,
				    (unsigned long long)r->reserved[i]);
	/* An attach is no create: the report says which it was, and its own time (version 2). */
	if (r->origin != HPSHM_ORIGIN_ATTACHED || r->create_ns != 0 || r->nattempts != 0 || r->attach_ns == 0 ||
	    r->relocated)
		return fail(CHILD_EREPORTV, "the report says origin %u, create_ns %llu, %u attempts, attach_ns %llu, "
			    "relocated %d: not an attached segment's", r->origin, (unsigned long long)r->create_ns,
			    r->nattempts, (unsigned long long)r->attach_ns, r->relocated);
	{
		char line[1024];

		hpshm_report_format(r, line, sizeof line);
		if (!strstr(line, " attach=") || strstr(line, "create=") || strstr(line, "attempts="))
			return fail(CHILD_EREPORTV, "the report line does not say it was attached: %s", line);
	}
	words = hpshm_segment_size(seg) / sizeof *w;
	if (words < nslots || r->usable_size != hpshm_segment_size(seg))
		return fail(CHILD_EPATTERN, "usable size %zu (report %zu) is too small or inconsistent",
			    hpshm_segment_size(seg), r->usable_size);

	kps = smaps_page_size(w);
	if (kps != ps)
		return fail(CHILD_EKERNELPS, "smaps KernelPageSize of the segment is %zu, the parent's pages are %llu",
			    kps, ps);
	if (!r->verified || r->page_size != ps)
		return fail(CHILD_EREPORTPS, "report says %zu-byte pages (verified=%d by %s), want %llu", r->page_size,
			    r->verified, r->verified_by, ps);

	for (i = 0; i < words; i++) {
		if (reattach_is_slot(i, words, (size_t)nslots))
			continue;
		if (w[i] != reattach_pattern(i)) {
			if (!bad++)
				first_bad = i;
		}
	}
	if (bad)
		return fail(CHILD_EPATTERN, "%zu of %zu words differ from the parent's pattern, the first at word %zu",
			    bad, words, first_bad);

	w[reattach_slot_word((size_t)slot, words, (size_t)nslots)] = value;

	rc = hpshm_segment_destroy(seg);
	if (rc < 0)
		return fail(CHILD_EDETACH, "detach: %s", hpshm_errname(rc));
	if (is_mapped(addr, words * sizeof *w) != 0)
		return fail(CHILD_EDETACH, "the segment is still mapped after hpshm_segment_destroy()");
	return 0;
}

static int mode_clash(int argc, char **argv)
{
	const char *token = getenv("HPSHM_TOKEN");
	unsigned long long addr, off;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char range[64];
	void *hold;
	unsigned long long size;
	int rc, fds0;

	if (argc != 4 || num(argv[2], &addr) || num(argv[3], &off) || !token)
		return fail(CHILD_EUSAGE, "usage: clash ADDR OFFSET, with HPSHM_TOKEN set");
	/* First act: take part of the segment's range, as a library loaded early might. */
	hold = mmap((void *)(uintptr_t)(addr + off), pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		    -1, 0);
	if (hold == MAP_FAILED || (uintptr_t)hold != addr + off)
		return fail(CHILD_EUSAGE, "could not map the holder at %#llx: %s", addr + off, strerror(errno));
	snprintf(range, sizeof range, "%llx-%llx", addr + off, addr + off + pg);
	fds0 = fd_count();

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	if (rc == 0)
		return fail(CHILD_ECLASH, "attach over a taken range succeeded, at %p", hpshm_segment_address(seg));
	if (rc != HPSHM_EEXIST)
		return fail(CHILD_ECLASH, "attach over a taken range: %s, want HPSHM_EEXIST: %s", hpshm_errname(rc),
			    err.message);
	if (err.code != rc || !err.message[0])
		return fail(CHILD_ECLASH, "err.code %d, message \"%s\"", err.code, err.message);
	if (!strstr(err.message, range))
		return fail(CHILD_EHOLDER, "the error does not name the holder %s: \"%s\"", range, err.message);
	if (seg != NULL)
		return fail(CHILD_ECLASH, "*out is not NULL after a failed attach");
	/*
	 * Nothing of the segment may stay mapped: neither below nor above the holder.  (Counting
	 * all of /proc/self/maps would also count what the allocator maps meanwhile, which a
	 * sanitizer runtime does on the error path.)
	 */
	if (fd_count() != fds0)
		return fail(CHILD_ELEAK, "%d descriptors after the failed attach, %d before", fd_count(), fds0);
	if (is_mapped(addr, off) != 0)
		return fail(CHILD_ELEAK, "part of the segment's range below the holder is mapped after the failure");
	if (token_size(token, &size) < 0 || size < off + pg)
		return fail(CHILD_EUSAGE, "cannot read the segment's size from the token %s", token);
	if (is_mapped(addr + off + pg, size - off - pg) != 0)
		return fail(CHILD_ELEAK, "part of the segment's range above the holder is mapped after the failure");
	if (munmap(hold, pg) != 0)
		return fail(CHILD_EUSAGE, "munmap of the holder: %s", strerror(errno));
	return 0;
}

/* The token's address, its sixth field, in hex.  0, or -1. */
static int token_address(const char *token, unsigned long long *out)
{
	const char *p = token;
	char *end;

	for (int field = 0; field < 5; field++) {
		p = strchr(p, ':');
		if (!p)
			return -1;
		p++;
	}
	*out = strtoull(p, &end, 16);
	return end > p && *end == ':' ? 0 : -1;
}

static int mode_refuse(int argc, char **argv)
{
	const char *token = getenv("HPSHM_TOKEN");
	unsigned long long addr, size, fd = 0;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char go;
	int rc, fds0;

	if ((argc != 2 && argc != 3) || (argc == 3 && num(argv[2], &fd)) || !token)
		return fail(CHILD_EUSAGE, "usage: refuse [FD], with HPSHM_TOKEN set");
	if (argc == 3) {
		ssize_t n;

		do
			n = read((int)fd, &go, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			return fail(CHILD_EUSAGE, "no go-ahead on descriptor %llu: %s", fd, n < 0 ? strerror(errno) : "EOF");
		close((int)fd);
	}
	if (token_address(token, &addr) < 0 || token_size(token, &size) < 0)
		return fail(CHILD_EUSAGE, "cannot read the address and size from the token %s", token);
	fds0 = fd_count();
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	if (rc == 0)
		return fail(CHILD_EACCEPTED, "the token %s attached %zu bytes at %p", token, hpshm_segment_size(seg),
			    hpshm_segment_address(seg));
	if (rc != HPSHM_EINVAL)
		return fail(CHILD_EREFUSAL, "refused with %s, want HPSHM_EINVAL: %s", hpshm_errname(rc), err.message);
	if (seg != NULL || err.code != rc || !err.message[0])
		return fail(CHILD_EREFUSAL, "*out %p, err.code %d, message \"%s\"", (void *)seg, err.code, err.message);
	if (fd_count() != fds0)
		return fail(CHILD_ELEAK, "%d descriptors after the refusal, %d before", fd_count(), fds0);
	if (is_mapped(addr, size + 65536) != 0)
		return fail(CHILD_ELEAK, "something is mapped in the token's range or the granule after it after the refusal");
	printf("reattach_child refuse [pid %ld]: refused: %s\n", (long)getpid(), err.message);
	return 0;
}

static int mode_hold(int argc, char **argv)
{
	unsigned long long seconds, slot;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	volatile uint64_t *w;
	struct timespec ts;
	int rc;

	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	if (rc < 0)
		return fail(CHILD_EATTACH, "attach: %s: %s", hpshm_errname(rc), err.message);
	if (argc != 4 || num(argv[2], &seconds) || num(argv[3], &slot) || slot >= 64 ||
	    hpshm_segment_size(seg) < 64 * sizeof(uint64_t))
		return fail(CHILD_EUSAGE, "usage: hold SECONDS SLOT (slot < 64)");
	w = hpshm_segment_address(seg);
	w[slot] = (uint64_t)getpid();
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = 0;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	rc = hpshm_segment_destroy(seg);
	return rc < 0 ? fail(CHILD_EDETACH, "detach: %s", hpshm_errname(rc)) : 0;
}

/* A configuration from KV, or NULL for "-".  NULL with *bad set when KV is refused. */
static hpshm_config *config_of(const char *kv, int *bad)
{
	hpshm_config *cfg = NULL;
	hpshm_error err;

	*bad = 0;
	if (!strcmp(kv, "-"))
		return NULL;
	if (hpshm_config_new(&cfg) < 0 || hpshm_config_parse(cfg, kv, &err) < 0) {
		fail(CHILD_EUSAGE, "configuration \"%s\" refused", kv);
		*bad = 1;
		hpshm_config_free(cfg);
		return NULL;
	}
	return cfg;
}

static int mode_open(int argc, char **argv)
{
	unsigned long long addr = 0, ps, value;
	hpshm_segment *seg = NULL;
	hpshm_config *cfg;
	const hpshm_report *r;
	hpshm_error err;
	char line[1024];
	uint64_t *w;
	size_t words, i, bad = 0, kps;
	int rc, badcfg, exec;

	if (argc != 7 || getenv("HPSHM_TOKEN"))
		return fail(CHILD_EUSAGE, "usage: open NAME KV ADDR PAGE_SIZE VALUE, without HPSHM_TOKEN");
	cfg = config_of(argv[3], &badcfg);
	if (badcfg)
		return CHILD_EUSAGE;
	/* First act: open, before anything else can map memory at the creator's address. */
	rc = hpshm_segment_open(&seg, argv[2], cfg, &err);
	hpshm_config_free(cfg);
	if (rc < 0)
		return fail(CHILD_EATTACH, "open %s: %s: %s (hint: %s)", argv[2], hpshm_errname(rc), err.message, err.hint);
	exec = strstr(argv[3], "reattach=exec") != NULL;
	if ((exec && num(argv[4], &addr)) || num(argv[5], &ps) || num(argv[6], &value))
		return fail(CHILD_EUSAGE, "usage: open NAME KV ADDR PAGE_SIZE VALUE");
	if (hpshm_segment_is_owner(seg) != 0)
		return fail(CHILD_EOWNER, "hpshm_segment_is_owner() says the opener created the segment");
	r = hpshm_segment_report(seg);
	w = hpshm_segment_address(seg);
	if (r->version < 2 || r->origin != HPSHM_ORIGIN_OPENED || r->create_ns != 0 || r->nattempts != 0 ||
	    r->attach_ns == 0)
		return fail(CHILD_EREPORTV, "the report says origin %u, create_ns %llu, %u attempts, attach_ns %llu: not "
			    "an opened segment's", r->origin, (unsigned long long)r->create_ns, r->nattempts,
			    (unsigned long long)r->attach_ns);
	hpshm_report_format(r, line, sizeof line);
	if (!strstr(line, " open=") || strstr(line, "create=") || strstr(line, "attempts="))
		return fail(CHILD_EREPORTV, "the report line does not say it was opened: %s", line);
	if (exec && ((uintptr_t)w != addr || r->relocated))
		return fail(CHILD_EADDRESS, "opened at %p (relocated %d) under reattach=exec, the creator's is %#llx",
			    (void *)w, r->relocated, addr);
	kps = smaps_page_size(w);
	if (kps != ps)
		return fail(CHILD_EKERNELPS, "smaps KernelPageSize of the segment is %zu, the creator's pages are %llu",
			    kps, ps);
	if (!r->verified || r->page_size != ps)
		return fail(CHILD_EREPORTPS, "report says %zu-byte pages (verified=%d), want %llu", r->page_size,
			    r->verified, ps);
	words = hpshm_segment_size(seg) / sizeof *w;
	for (i = 1; i < words; i++)
		bad += w[i] != reattach_pattern(i);
	if (bad)
		return fail(CHILD_EPATTERN, "%zu of %zu words differ from the creator's pattern", bad, words);
	w[0] = value;
	addr = (uintptr_t)w;
	rc = hpshm_segment_destroy(seg);
	if (rc < 0)
		return fail(CHILD_EDETACH, "destroy: %s", hpshm_errname(rc));
	if (is_mapped(addr, words * sizeof *w) != 0)
		return fail(CHILD_EDETACH, "the segment is still mapped after hpshm_segment_destroy()");
	return 0;
}

static int mode_refuse_open(int argc, char **argv)
{
	hpshm_segment *seg = NULL;
	hpshm_config *cfg;
	hpshm_error err;
	int rc, badcfg, fds0;
	char maps0[64];

	if (argc != 5 || getenv("HPSHM_TOKEN"))
		return fail(CHILD_EUSAGE, "usage: refuse-open NAME KV CODE, without HPSHM_TOKEN");
	cfg = config_of(argv[3], &badcfg);
	if (badcfg)
		return CHILD_EUSAGE;
	fds0 = fd_count();
	snprintf(maps0, sizeof maps0, "%d", maps_count());
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_open(&seg, argv[2], cfg, &err);
	hpshm_config_free(cfg);
	if (rc == 0)
		return fail(CHILD_EACCEPTED, "%s was opened (%zu bytes at %p), want %s", argv[2], hpshm_segment_size(seg),
			    hpshm_segment_address(seg), argv[4]);
	if (strcmp(hpshm_errname(rc), argv[4]) != 0 || err.code != rc)
		return fail(CHILD_EREFUSAL, "refused with %s (err.code %d), want %s: %s", hpshm_errname(rc), err.code,
			    argv[4], err.message);
	if (seg != NULL || !err.message[0] || !err.hint[0])
		return fail(CHILD_EREFUSAL, "*out %p, message \"%s\", hint \"%s\"", (void *)seg, err.message, err.hint);
	if (fd_count() != fds0)
		return fail(CHILD_ELEAK, "%d descriptors after the refusal, %d before", fd_count(), fds0);
	if (atoi(maps0) != maps_count())
		return fail(CHILD_ELEAK, "%d shared mappings after the refusal, %s before", maps_count(), maps0);
	printf("reattach_child refuse-open [pid %ld]: %s: %s (hint: %s)\n", (long)getpid(), hpshm_errname(rc),
	       err.message, err.hint);
	return 0;
}

static int mode_fd(int argc, char **argv)
{
	unsigned long long fd;
	char path[64];
	int open_now;

	if (argc != 4 || num(argv[2], &fd) || (strcmp(argv[3], "open") && strcmp(argv[3], "closed")))
		return fail(CHILD_EUSAGE, "usage: fd N open|closed");
	snprintf(path, sizeof path, "/proc/self/fd/%llu", fd);
	open_now = access(path, F_OK) == 0;
	if (open_now != !strcmp(argv[3], "open"))
		return fail(CHILD_EINHERIT, "descriptor %llu is %s in the exec'd program, want %s", fd,
			    open_now ? "open" : "closed", argv[3]);
	return 0;
}

static int mode_resize_read(int argc, char **argv)
{
	unsigned char stamped[RSTORM_MAX_PAGES] = {0}; /* pages seen stamped since its last sync */
	unsigned long long fd;
	unsigned long loop = 0;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	size_t page;
	int rc, bad = -1;

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	if (rc < 0)
		return fail(CHILD_EATTACH, "attach: %s: %s", hpshm_errname(rc), err.message);
	if (argc != 3 || num(argv[2], &fd) || fcntl((int)fd, F_SETFL, O_NONBLOCK) < 0)
		return fail(CHILD_EUSAGE, "usage: resize-read FD (a pipe's write end)");
	(void)signal(SIGPIPE, SIG_IGN); /* the test closing its end is the signal to stop: EPIPE */
	page = hpshm_segment_report(seg)->requested_page_size;
	for (;;) {
		int sync = loop++ % RSTORM_SYNC_EVERY == 0;
		uint64_t size;

		rc = rstorm_read_loop(seg, page, stamped, sync, &bad, &err);
		if (rc != 0)
			return fail(CHILD_ERESIZE + rc, "at %zu bytes of %zu-byte pages: check %d failed (page %d): %s",
				    hpshm_segment_size(seg), page, rc, bad, err.message);
		if (!sync)
			continue;
		size = hpshm_segment_size(seg);
		if (write((int)fd, &size, sizeof size) < 0 && errno == EPIPE)
			break;
	}
	rc = hpshm_segment_detach(seg);
	return rc < 0 ? fail(CHILD_EDETACH, "detach: %s", hpshm_errname(rc)) : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fail(CHILD_EUSAGE, "usage: reattach_child check|clash|hold|refuse|open|refuse-open|fd|resize-read ...");
	mode = argv[1];
	if (!strcmp(argv[1], "check"))
		return mode_check(argc, argv);
	if (!strcmp(argv[1], "clash"))
		return mode_clash(argc, argv);
	if (!strcmp(argv[1], "hold"))
		return mode_hold(argc, argv);
	if (!strcmp(argv[1], "refuse"))
		return mode_refuse(argc, argv);
	if (!strcmp(argv[1], "open"))
		return mode_open(argc, argv);
	if (!strcmp(argv[1], "refuse-open"))
		return mode_refuse_open(argc, argv);
	if (!strcmp(argv[1], "fd"))
		return mode_fd(argc, argv);
	if (!strcmp(argv[1], "resize-read"))
		return mode_resize_read(argc, argv);
	return fail(CHILD_EUSAGE, "unknown mode");
}
