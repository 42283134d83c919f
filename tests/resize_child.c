/* SPDX-License-Identifier: MIT */
/*
 * tests/resize_child.c -- the process test_resize.c starts by a real exec to attach a
 * resizable segment and do, one command at a time, what a server's worker does with it.
 *
 *     resize_child CMD_FD REPLY_FD
 *
 * It attaches from HPSHM_TOKEN (hpshm_child_spawn_ex() passes the two pipe ends too) as its
 * first act and replies "attached <size> <address>".  Then it reads one command per line
 * from CMD_FD and answers on REPLY_FD:
 *
 *   read OFF LEN   every 8-byte word of [OFF, OFF+LEN) must hold resize_pattern() of its
 *                  offset: "ok", or "bad <offset>"; a word it may not touch kills it (SIGSEGV)
 *   sync           hpshm_segment_sync(): "synced <size>", or "error <name> <message>"
 *   touch OFF      read the byte at OFF, which must be past this process's size: exits with
 *                  RESIZE_CHILD_FAULTED from the SIGSEGV handler, or replies "touched" if the
 *                  read went through (the test's failure)
 *   size           "size <hpshm_segment_size()> <hpshm_segment_max_size()>"
 *   quit           detach, exit 0
 *
 * Exit codes other than 0 and RESIZE_CHILD_FAULTED name the step that failed, with the reason
 * on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpshm.h"
#include "resize_child.h"

static void faulted(int sig)
{
	(void)sig;
	_exit(RESIZE_CHILD_FAULTED);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void reply(FILE *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	fflush(out);
}

static void check_read(FILE *out, const unsigned char *base, size_t off, size_t len)
{
	for (size_t o = off; o + 8 <= off + len; o += 8) {
		uint64_t w;

		memcpy(&w, base + o, sizeof(w));
		if (w != resize_pattern(o)) {
			reply(out, "bad %zu", o);
			return;
		}
	}
	reply(out, "ok");
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	hpshm_segment *seg;
	hpshm_error err;
	char line[256];
	FILE *in, *out;
	size_t a, b;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: resize_child CMD_FD REPLY_FD\n");
		return 2;
	}
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	in = fdopen(atoi(argv[1]), "r");
	out = fdopen(atoi(argv[2]), "w");
	if (!in || !out)
		return 3;
	if (rc < 0) {
		fprintf(stderr, "resize_child: attach: %s: %s\n", hpshm_errname(rc), err.message);
		reply(out, "error %s %s", hpshm_errname(rc), err.message);
		return 4;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = faulted;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	reply(out, "attached %zu %p", hpshm_segment_size(seg), hpshm_segment_address(seg));
	while (fgets(line, sizeof(line), in)) {
		const unsigned char *base = hpshm_segment_address(seg);

		if (sscanf(line, "read %zu %zu", &a, &b) == 2) {
			check_read(out, base, a, b);
		} else if (strncmp(line, "sync", 4) == 0) {
			rc = hpshm_segment_sync(seg, &err);
			if (rc < 0)
				reply(out, "error %s %s", hpshm_errname(rc), err.message);
			else
				reply(out, "synced %zu", hpshm_segment_size(seg));
		} else if (sscanf(line, "touch %zu", &a) == 1) {
			volatile const unsigned char *p = base + a;

			(void)*p;
			reply(out, "touched");
		} else if (strncmp(line, "size", 4) == 0) {
			reply(out, "size %zu %zu", hpshm_segment_size(seg), hpshm_segment_max_size(seg));
		} else if (strncmp(line, "quit", 4) == 0) {
			break;
		} else {
			fprintf(stderr, "resize_child: unknown command %s", line);
			return 5;
		}
	}
	rc = hpshm_segment_detach(seg);
	return rc < 0 ? 6 : 0;
}
