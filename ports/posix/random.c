/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/random.c -- nonces the POSIX way: /dev/urandom, or the clock when it cannot be read.
 *
 * The nonce in a segment's header tells a re-attaching child that the segment at the token's
 * address is the one the token was made for, not a successor that took the same id.  It needs
 * to be unlikely to repeat, not secret, so a clock-and-pid mix is an acceptable last resort
 * where /dev/urandom is missing (a bare chroot) or closed to us (a sandbox).  A count of the
 * calls goes into the mix as well: a coarse clock (jiffies, some VMs) reads the same for
 * several calls in a row, and two segments created in one tick must not share a nonce.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "posix/posix.h"

static atomic_uint random_clock_calls; /* calls that fell back to the clock */

uint64_t hpshm__posix_random64(void)
{
	unsigned char *p;
	struct timespec ts;
	uint64_t v = 0;
	size_t have = 0;
	ssize_t got;
	int fd;

	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		p = (unsigned char *)&v;
		while (have < sizeof(v)) {
			got = read(fd, p + have, sizeof(v) - have);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				break;
			have += (size_t)got;
		}
		(void)close(fd);
		if (have == sizeof(v))
			return v;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	v = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	v += (uint64_t)atomic_fetch_add_explicit(&random_clock_calls, 1u, memory_order_relaxed) * 0x9e3779b97f4a7c15ULL;
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL; /* the finaliser of MurmurHash3: spreads every bit */
	v ^= v >> 33;
	return v;
}
