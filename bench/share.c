/* SPDX-License-Identifier: MIT */
/*
 * bench/share.c -- what every file of the controller uses: the stop flag, progress lines,
 * notes and reasons, sizes in words, the round's seed, the time since the run began.  It calls
 * none of them, so the top level (run.c) and its phases (plan.c, fit.c, group.c, member.c,
 * latency.c, pool.c) all sit above it; run.h lists the files (doc/architecture.md).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "run.h"

volatile sig_atomic_t bench_stop;

void bench_progress(const struct bench_options *opt, const char *fmt, ...)
{
	va_list ap;

	if (opt && opt->quiet)
		return;
	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void run_unusable(struct bench_config *c, const char *fmt, ...)
{
	va_list ap;

	c->usable = 0;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

void run_note_add(char *note, size_t size, const char *fmt, ...)
{
	size_t used = strlen(note);
	va_list ap;

	if (used + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(note + used, size - used, fmt, ap);
	va_end(ap);
}

const char *run_short_size(size_t v, char *buf, size_t len)
{
	return v ? hpshm_size_format(v, buf, len) : "4KiB";
}

/*
 * A byte count of the machine (MemAvailable, the sum of live regions) for a message.  It is
 * 64 bits wide because a 32-bit build runs on machines with more memory than size_t counts;
 * hpshm_size_format() takes a size_t, so a count beyond it is written in GiB here instead of
 * being cut.
 */
char *run_bytes(uint64_t v, char *buf, size_t len)
{
	if (v <= SIZE_MAX)
		return hpshm_size_format((size_t)v, buf, len);
	snprintf(buf, len, "%.1fGiB", (double)v / (1024.0 * 1024.0 * 1024.0));
	return buf;
}

uint64_t run_round_seed(unsigned r)
{
	return 0x243f6a8885a308d3u * (r + 1) ^ 0x13198a2e03707344u;
}

double run_elapsed(const struct run *run)
{
	return (double)(bench_wall_ns() - run->t0) / 1e9;
}
