/* SPDX-License-Identifier: MIT */
/*
 * preload/report.c -- the interposer's words: stderr lines and the JSON report.  The OS facts
 * it reports (what backs a SysV segment, the pool, a process's children) are read through
 * ports/facts.h, as the library reads them (doc/architecture.md).
 *
 * Everything here runs inside someone else's server, often in its postmaster before its
 * logging is set up, so it keeps to what is safe there: no stdio streams (a FILE would
 * allocate and lock, and a server may have replaced stdio's buffering), only open(),
 * write() and close() on stack buffers.  Each stderr line and each report line
 * is one write(), so lines from processes that share the descriptor (a postmaster and its
 * children writing to one log) never interleave.  The report is opened with O_APPEND for
 * every line: several processes append to the same file, and a server that closes every
 * descriptor it does not know after fork (some daemons do) cannot take ours away.
 *
 * The report is written only into a regular file: it is opened without following a symbolic
 * link in its last component and without blocking (a FIFO with no reader would hang the
 * server), and anything but a regular file is refused with one line on stderr.  A server runs
 * as root more often than not, and a report path in a directory others can write must not
 * let them point root's appends at a file of their choice.
 */
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0400000
#endif

/* A report line: the longest has 16 attempts with 256-byte reasons, escaped. */
#define REPORT_LINE_MAX 16384

/* A bounded text buffer; once full it stays full, and the line is dropped, never cut. */
struct jbuf {
	char  *p;     /* the buffer */
	size_t len;   /* bytes used, without the NUL */
	size_t cap;   /* its size */
	int    full;  /* something did not fit */
};

static void jb_add(struct jbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static void jb_add(struct jbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		b->full = 1;
		return;
	}
	b->len += (size_t)n;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void jb_str(struct jbuf *b, const char *s)
{
	jb_add(b, "\"");
	for (; s && *s && !b->full; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			jb_add(b, "\\%c", c);
		else if (c == '\n')
			jb_add(b, "\\n");
		else if (c < 0x20)
			jb_add(b, "\\u%04x", c);
		else
			jb_add(b, "%c", c);
	}
	jb_add(b, "\"");
}

static void write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

void preload_say(const char *fmt, ...)
{
	char line[2048];
	int saved = errno; /* a message must not change what the caller sees in errno */
	int n, m;
	va_list ap;

	n = snprintf(line, sizeof(line), "hpshm preload: pid %ld: ", (long)getpid());
	if (n < 0)
		n = 0;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	if ((size_t)(n + m) > sizeof(line) - 2)
		m = (int)(sizeof(line) - 2) - n; /* cut: the start says what happened */
	line[n + m] = '\n';
	write_all(2, line, (size_t)(n + m + 1));
	errno = saved;
}

const char *preload_policy_name(hpshm_huge_pages policy)
{
	return policy == HPSHM_HUGE_ON ? "on" : policy == HPSHM_HUGE_OFF ? "off" : "try";
}

char *preload_size_text(size_t size, char *buf, size_t len)
{
	const size_t kib = 1024, mib = kib << 10, gib = mib << 10;

	/* Whole units as the library writes them; anything else rounded, never as "1095400KiB". */
	if (size >= gib && size % gib == 0)
		snprintf(buf, len, "%zuGiB", size / gib);
	else if (size >= mib && size % mib == 0)
		snprintf(buf, len, "%zuMiB", size / mib);
	else if (size >= gib)
		snprintf(buf, len, "%.2fGiB", (double)size / (double)gib);
	else if (size >= mib)
		snprintf(buf, len, "%.1fMiB", (double)size / (double)mib);
	else if (size >= kib && size % kib == 0)
		snprintf(buf, len, "%zuKiB", size / kib);
	else
		snprintf(buf, len, "%zu bytes", size);
	return buf;
}

/* What a file type is called in a refusal. */
static const char *file_kind(mode_t mode)
{
	return S_ISLNK(mode)  ? "a symbolic link"
	       : S_ISDIR(mode)  ? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)  ? "a character device"
	       : S_ISBLK(mode)  ? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a regular file";
}

/* Said once per process: a refused report file would otherwise be said at every line. */
static atomic_int report_refused_said;

/*
 * The report, opened for one append: a descriptor, or -1 with the reason said (once).  The
 * lstat() names what the path is; the open (no link followed, no blocking) and the fstat() of
 * what was opened decide, so a path swapped between the two is refused as well.
 */
static int report_open(void)
{
	struct stat st;
	int fd, e;

	if (lstat(preload_cfg.report, &st) == 0 && !S_ISREG(st.st_mode)) {
		fd = -1;
		e = 0;
	} else {
		fd = open(preload_cfg.report,
			  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
		e = errno;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			return fd;
		if (fd >= 0) {
			close(fd);
			fd = -1;
			e = 0;
		} else if (e == ELOOP) {
			st.st_mode = S_IFLNK;
			e = 0;
		}
	}
	if (atomic_exchange(&report_refused_said, 1))
		return -1;
	if (e)
		preload_say("cannot append to the report %s: %s; its lines are left out", preload_cfg.report,
			    strerror(e));
	else
		preload_say("the report %s is %s, and hpshm writes reports only into regular files: its lines are "
			    "left out (give hpshm exec --report the path of a regular file, or of none yet)",
			    preload_cfg.report, file_kind(st.st_mode));
	return -1;
}

/* Write a finished line, or say why it is left out. */
static void report_write(const struct jbuf *b, const char *what)
{
	int fd;

	if (b->full) {
		preload_say("a report line for %s did not fit in %d bytes; it is left out of %s", what, REPORT_LINE_MAX,
			    preload_cfg.report);
		return;
	}
	fd = report_open();
	if (fd < 0)
		return;
	write_all(fd, b->p, b->len);
	close(fd);
}

/*
 * Did the walk fall back?  Only when huge pages were wanted and a provider before the one
 * used failed.  A provider the configuration left out (huge_pages=off leaves out every huge
 * page provider; provider= may leave out others) was never tried: the core records it with
 * the call "config" and no page size.
 */
static int report_fell_back(const hpshm_report *r, unsigned n)
{
	if (r->policy == HPSHM_HUGE_OFF)
		return 0;
	for (unsigned i = 0; i + 1 < n; i++) {
		const hpshm_attempt *a = &r->attempts[i];

		if (a->result != 0 && !(a->page_size == 0 && strcmp(a->call, "config") == 0))
			return 1;
	}
	return 0;
}

void preload_report(const char *call, const void *addr, const hpshm_report *r, const hpshm_error *err,
		    const char *extra)
{
	char line[REPORT_LINE_MAX];
	struct jbuf b = { line, 0, sizeof(line) - 1, 0 };
	unsigned n = r->nattempts < HPSHM_MAX_ATTEMPTS ? r->nattempts : HPSHM_MAX_ATTEMPTS;
	int saved = errno;

	if (!preload_cfg.report[0])
		return;
	jb_add(&b, "{\"pid\":%ld,\"call\":", (long)getpid());
	jb_str(&b, call);
	jb_add(&b, ",\"event\":\"create\",\"ok\":%s,\"size\":%zu", err ? "false" : "true", r->requested_size);
	if (extra)
		jb_add(&b, ",%s", extra);
	if (!err) {
		if (addr)
			jb_add(&b, ",\"address\":\"%p\"", addr);
		else
			jb_add(&b, ",\"address\":null"); /* a SysV segment removed before any attach here */
		jb_add(&b, ",\"mapped\":%zu,\"provider\":", r->mapped_size);
		jb_str(&b, r->provider);
		jb_add(&b, ",\"page_size\":%zu,\"verified\":%s,\"verified_by\":", r->page_size,
		       r->verified ? "true" : "false");
		jb_str(&b, r->verified ? r->verified_by : "unverified");
		jb_add(&b, ",\"huge\":%s,\"populate\":", r->huge ? "true" : "false");
		jb_str(&b, hpshm_populate_name(r->populate));
		jb_add(&b, ",\"populate_ms\":%.3f,\"populate_threads\":%u", (double)r->populate_ns / 1e6,
		       r->populate_threads);
	} else {
		jb_add(&b, ",\"error\":");
		jb_str(&b, hpshm_errname(err->code));
		jb_add(&b, ",\"errno\":%d,\"message\":", err->sys_errno);
		jb_str(&b, err->message);
		jb_add(&b, ",\"hint\":");
		jb_str(&b, err->hint);
	}
	jb_add(&b, ",\"policy\":");
	jb_str(&b, preload_policy_name(r->policy));
	jb_add(&b, ",\"create_ms\":%.3f,\"fallback\":%s,\"attempts\":[", (double)r->create_ns / 1e6,
	       !err && report_fell_back(r, n) ? "true" : "false");
	for (unsigned i = 0; i < n; i++) {
		const hpshm_attempt *a = &r->attempts[i];

		jb_add(&b, "%s{\"provider\":", i ? "," : "");
		jb_str(&b, a->provider);
		jb_add(&b, ",\"page_size\":%zu,\"result\":", a->page_size);
		jb_str(&b, a->result == 0 ? "ok" : hpshm_errname(a->result));
		jb_add(&b, ",\"errno\":%d,\"call\":", a->sys_errno);
		jb_str(&b, a->call);
		jb_add(&b, ",\"reason\":");
		jb_str(&b, a->reason);
		jb_add(&b, "}");
	}
	jb_add(&b, "]}\n");
	report_write(&b, call);
	errno = saved;
}

void preload_report_end(const struct preload_end *e)
{
	char line[4096];
	struct jbuf b = { line, 0, sizeof(line) - 1, 0 };
	int saved = errno;

	if (!preload_cfg.report[0])
		return;
	jb_add(&b, "{\"pid\":%ld,\"call\":", (long)getpid());
	jb_str(&b, e->call);
	jb_add(&b, ",\"event\":");
	jb_str(&b, e->event);
	jb_add(&b, ",\"ok\":true,\"size\":%zu", e->size);
	if (e->extra)
		jb_add(&b, ",%s", e->extra);
	if (e->addr)
		jb_add(&b, ",\"address\":\"%p\",\"mapped\":%zu", e->addr, e->mapped);
	jb_add(&b, ",\"provider\":");
	jb_str(&b, e->provider);
	jb_add(&b, ",\"created_by\":%ld", e->created_by);
	if (strcmp(e->event, "handover") == 0) {
		jb_add(&b, ",\"held_by\":[");
		for (int i = 0; i < e->nheld; i++)
			jb_add(&b, "%s%ld", i ? "," : "", e->held_by[i]);
		jb_add(&b, "]");
	}
	jb_add(&b, "}\n");
	report_write(&b, e->call);
	errno = saved;
}
