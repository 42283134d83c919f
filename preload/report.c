/* SPDX-License-Identifier: MIT */
/*
 * preload/report.c -- the interposer's words: stderr lines, the JSON report, and the kernel
 * files read for SysV segments.
 *
 * Everything here runs inside someone else's server, often in its postmaster before its
 * logging is set up, so it keeps to what is safe there: no stdio streams (a FILE would
 * allocate and lock, and a server may have replaced stdio's buffering), only open(),
 * read(), write() and close() on stack buffers.  Each stderr line and each report line
 * is one write(), so lines from processes that share the descriptor (a postmaster and its
 * children writing to one log) never interleave.  The report is opened with O_APPEND for
 * every line: several processes append to the same file, and a server that closes every
 * descriptor it does not know after fork (some daemons do) cannot take ours away.
 */
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void preload_report(const char *call, const void *addr, const hpshm_report *r, const hpshm_error *err,
		    const char *extra)
{
	char line[REPORT_LINE_MAX];
	struct jbuf b = { line, 0, sizeof(line) - 1, 0 };
	unsigned n = r->nattempts < HPSHM_MAX_ATTEMPTS ? r->nattempts : HPSHM_MAX_ATTEMPTS;
	int saved = errno, fd;

	if (!preload_cfg.report[0])
		return;
	jb_add(&b, "{\"pid\":%ld,\"call\":", (long)getpid());
	jb_str(&b, call);
	jb_add(&b, ",\"ok\":%s,\"size\":%zu", err ? "false" : "true", r->requested_size);
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
		jb_add(&b, ",\"populate_ms\":%.3f", (double)r->populate_ns / 1e6);
	} else {
		jb_add(&b, ",\"error\":");
		jb_str(&b, hpshm_errname(err->code));
		jb_add(&b, ",\"message\":");
		jb_str(&b, err->message);
		jb_add(&b, ",\"hint\":");
		jb_str(&b, err->hint);
	}
	jb_add(&b, ",\"policy\":");
	jb_str(&b, preload_policy_name(r->policy));
	jb_add(&b, ",\"create_ms\":%.3f,\"fallback\":%s,\"attempts\":[", (double)r->create_ns / 1e6,
	       !err && n > 1 ? "true" : "false");
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
	if (b.full) {
		preload_say("a report line for %s did not fit in %d bytes; it is left out of %s", call,
			    REPORT_LINE_MAX, preload_cfg.report);
		errno = saved;
		return;
	}
	fd = open(preload_cfg.report, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		preload_say("cannot append to the report %s: %s", preload_cfg.report, strerror(errno));
		errno = saved;
		return;
	}
	write_all(fd, line, b.len);
	close(fd);
	errno = saved;
}

/*
 * A line reader over read(): smaps can be long (a server with many libraries has hundreds
 * of VMAs), and only one VMA's lines matter, so lines are taken one at a time from a stack
 * buffer.  A line longer than the buffer (a path name) is skipped whole.
 */
struct lines {
	int    fd;           /* the file */
	char   buf[4096];    /* bytes read, not yet returned */
	size_t start, end;   /* the unread part of buf */
	int    eof;          /* read() returned 0 or failed */
};

static const char *lines_next(struct lines *l)
{
	for (;;) {
		char *nl = memchr(l->buf + l->start, '\n', l->end - l->start);

		if (nl) {
			const char *line = l->buf + l->start;

			*nl = '\0';
			l->start = (size_t)(nl - l->buf) + 1;
			return line;
		}
		if (l->eof)
			return NULL;
		if (l->start == 0 && l->end == sizeof(l->buf) - 1) {
			l->end = 0; /* an overlong line: drop what we have, keep reading to its end */
		} else {
			memmove(l->buf, l->buf + l->start, l->end - l->start);
			l->end -= l->start;
		}
		l->start = 0;
		{
			ssize_t n = read(l->fd, l->buf + l->end, sizeof(l->buf) - 1 - l->end);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				l->eof = 1;
			else
				l->end += (size_t)n;
		}
	}
}

size_t preload_smaps_page_size(const void *addr, int *hugetlb)
{
	struct lines l;
	const char *line;
	uintptr_t a = (uintptr_t)addr;
	int in = 0;
	size_t page = 0;

	*hugetlb = 0;
	l.fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	if (l.fd < 0)
		return 0;
	l.start = l.end = 0;
	l.eof = 0;
	while ((line = lines_next(&l)) != NULL) {
		unsigned long lo, hi;
		char dash;

		/* A VMA header is "start-end perms ...": hex, a dash, hex. */
		if (sscanf(line, "%lx%c%lx", &lo, &dash, &hi) == 3 && dash == '-' && strchr(line, ' ')) {
			if (in)
				break;
			in = a >= lo && a < hi;
			continue;
		}
		if (!in)
			continue;
		if (strncmp(line, "KernelPageSize:", 15) == 0)
			page = (size_t)strtoul(line + 15, NULL, 10) * 1024;
		else if (strncmp(line, "VmFlags:", 8) == 0)
			*hugetlb = strstr(line + 8, " ht") != NULL;
	}
	close(l.fd);
	return page;
}

/* One unsigned number from a small file; -1 if it cannot be read. */
static long read_number(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

long preload_pool_available(size_t page_size)
{
	char path[128];
	long free_pages, resv;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%zukB/free_hugepages", page_size / 1024);
	free_pages = read_number(path);
	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%zukB/resv_hugepages", page_size / 1024);
	resv = read_number(path);
	if (free_pages < 0 || resv < 0)
		return -1;
	return free_pages > resv ? free_pages - resv : 0;
}

size_t preload_default_huge_page_size(void)
{
	struct lines l;
	const char *line;
	size_t size = 0;

	l.fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (l.fd < 0)
		return 0;
	l.start = l.end = 0;
	l.eof = 0;
	while ((line = lines_next(&l)) != NULL)
		if (strncmp(line, "Hugepagesize:", 13) == 0)
			size = (size_t)strtoul(line + 13, NULL, 10) * 1024;
	close(l.fd);
	return size;
}
