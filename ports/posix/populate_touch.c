/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/populate_touch.c -- populate with POSIX alone: a touch of every page, guarded
 * against SIGBUS (posix/touch.c), since POSIX has no call that faults a range in and fails
 * cleanly.  With populate_threads above 1 the segment is split into one contiguous range per
 * thread, all touched under the one guard; the first SIGBUS stops the other threads.
 *
 * A per-concern fallback CMake picks where no OS folder populates its own way
 * (ports/linux/populate.c; doc/architecture.md).
 */
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"
#include "posix/posix.h"

struct touch_job {
	char       *addr;
	size_t      len, page_size;
	unsigned    n;
	atomic_int  stop;
	size_t      bad[HPSHM__POPULATE_THREADS_MAX];    /* where a part met SIGBUS */
	int         failed[HPSHM__POPULATE_THREADS_MAX]; /* 1: it did */
};

static void touch_part(void *arg, unsigned i)
{
	struct touch_job *job = arg;
	size_t off, len, bad = 0;

	hpshm__posix_split(job->len, job->page_size, job->n, i, &off, &len);
	if (len == 0)
		return;
	if (hpshm__posix_touch_range(job->addr + off, len, job->page_size, &job->stop, &bad) > 0) {
		job->failed[i] = 1;
		job->bad[i] = off + bad;
		atomic_store_explicit(&job->stop, 1, memory_order_relaxed);
	}
}

int hpshm__port_populate(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h,
			 const struct hpshm__populate_how *how, unsigned *methods, hpshm_error *err)
{
	struct touch_job *job;
	char sz[32];
	size_t bad = 0;
	int e, failed = 0;

	(void)h; /* POSIX cannot allocate a file's pages without writing them */
	assert(addr != NULL && len > 0 && page_size > 0 && how != NULL && how->threads > 0 && methods != NULL);
	*methods = HPSHM_POPULATE_TOUCH;
	hpshm_size_format(len, sz, sizeof(sz));
	job = calloc(1, sizeof(*job));
	if (job == NULL)
		return hpshm_error_set(err, HPSHM_ENOMEM, ENOMEM, "malloc", NULL, "out of memory to start the populate");
	job->addr = addr;
	job->len = len;
	job->page_size = page_size;
	job->n = how->threads;
	atomic_init(&job->stop, 0);
	if (hpshm__posix_touch_begin() < 0) {
		e = errno;
		free(job);
		return hpshm_error_set(err, HPSHM_EPOPULATE, e, "sigaction", NULL,
				       "cannot guard the touch of %s against SIGBUS: %s", sz, strerror(e));
	}
	hpshm__posix_parallel(job->n, touch_part, job);
	hpshm__posix_touch_end();
	for (unsigned i = 0; i < job->n && !failed; i++)
		if (job->failed[i]) {
			failed = 1;
			bad = job->bad[i];
		}
	free(job);
	if (failed)
		return hpshm_error_set(err, HPSHM_EPOPULATE, 0, "touch", "free memory, or raise this process's memory limit",
				       "the system could not supply the page at offset %zu of %s at %p (SIGBUS on touch)",
				       bad, sz, addr);
	return 0;
}

/* This port populates by the guarded touch alone (above): other bits are not its methods. */
const char *hpshm__port_populate_name(unsigned methods)
{
	if (methods == HPSHM_POPULATE_NONE)
		return "none";
	return methods == HPSHM_POPULATE_TOUCH ? "touch" : "unknown";
}
