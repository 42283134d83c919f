/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/populate_touch.c -- populate with POSIX alone: a touch of every page, guarded
 * against SIGBUS (posix/touch.c), since POSIX has no call that faults a range in and fails
 * cleanly.
 *
 * A per-concern fallback CMake picks where no OS folder populates its own way
 * (ports/linux/populate.c; doc/architecture.md).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "port.h"
#include "posix/posix.h"

int hpshm__port_populate(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h, unsigned *methods,
		    hpshm_error *err)
{
	char sz[32];
	size_t bad = 0;
	int rc, e;

	(void)h; /* POSIX cannot allocate a file's pages without writing them */
	assert(addr != NULL && len > 0 && page_size > 0 && methods != NULL);
	*methods = HPSHM_POPULATE_TOUCH;
	rc = hpshm__posix_touch(addr, len, page_size, &bad);
	hpshm_size_format(len, sz, sizeof(sz));
	if (rc < 0) {
		e = errno;
		return hpshm_error_set(err, HPSHM_EPOPULATE, e, "sigaction", NULL,
				       "cannot guard the touch of %s against SIGBUS: %s", sz, strerror(e));
	}
	if (rc > 0)
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
