/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/touch.c -- faulting pages in by touching them, without dying of SIGBUS.
 *
 * A mapping can succeed and still fail at fault time (Linux: a hugetlb cgroup limit charged
 * at fault, MAP_NORESERVE, a NUMA policy; anywhere: a full tmpfs).  A plain loop over the
 * pages then raises SIGBUS and kills a server that thought its memory was in hand.  So the
 * touch runs under a SIGBUS handler that longjmps out: one read-then-write per page (the
 * byte is written back unchanged, so data already in a re-attached segment is kept).  The
 * byte is the page's last: Linux clears a new huge page in ascending order when the fault is
 * at its end, twice as fast as the descending order a fault at its start gets
 * (ports/linux/populate.c).  The
 * handler is process-wide, so one touch runs at a time, though it may be spread over threads
 * (each arms its own jump: hpshm__posix_touch_begin/_range/_end); a SIGBUS another thread takes
 * meanwhile is passed to the handler that was installed before, or, if that was the default
 * or SIG_IGN, gets that action: a fault runs again under it, a sent signal is raised again
 * under the default or dropped when ignored (so an ignored one leaves the touch guarded).
 *
 * It is the last resort: an OS with a populate call that returns an error instead of a
 * signal (ports/linux/populate.c) uses that, and touches only where the kernel has none.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "posix/posix.h"

static atomic_flag touch_lock = ATOMIC_FLAG_INIT;   /* one guarded touch at a time */
static struct sigaction touch_old;                  /* the SIGBUS action we replaced */
static _Thread_local sigjmp_buf touch_jmp;          /* where a SIGBUS in a touch lands */
static _Thread_local volatile sig_atomic_t touch_armed; /* this thread is touching */

static void touch_on_sigbus(int sig, siginfo_t *info, void *ctx)
{
	if (touch_armed) {
		touch_armed = 0;
		siglongjmp(touch_jmp, 1);
	}
	/* Not ours: hand it to the previous handler, or act as its action would. */
	if ((touch_old.sa_flags & SA_SIGINFO) && touch_old.sa_sigaction != NULL) {
		touch_old.sa_sigaction(sig, info, ctx);
	} else if (touch_old.sa_handler != SIG_DFL && touch_old.sa_handler != SIG_IGN &&
		   touch_old.sa_handler != NULL) {
		touch_old.sa_handler(sig);
	} else if (info != NULL && info->si_code <= 0) {
		/* Sent (kill, sigqueue, pthread_kill), not a fault: nothing raises it again when we
		 * return.  Ignored, it is dropped and the touch keeps its guard; under the default
		 * it is raised again under the default, and ends the process once we return. */
		if (touch_old.sa_handler != SIG_IGN) {
			(void)sigaction(SIGBUS, &touch_old, NULL);
			(void)raise(sig);
		}
	} else {
		/* A fault: restore the action and return, so that the faulting instruction runs
		 * again and the default acts on it (the kernel forces a fault's SIGBUS through
		 * SIG_IGN). */
		(void)sigaction(SIGBUS, &touch_old, NULL);
	}
}

int hpshm__posix_touch_begin(void)
{
	struct sigaction sa;

	while (atomic_flag_test_and_set_explicit(&touch_lock, memory_order_acquire))
		sched_yield();

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = touch_on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* The action we replace is read before ours goes in, not by the same call: the kernel
	 * installs the new action before it writes the old one out, and a SIGBUS another thread
	 * takes in between would find touch_old not yet written (the default, the first time)
	 * and end the process under it. */
	if (sigaction(SIGBUS, NULL, &touch_old) < 0 || sigaction(SIGBUS, &sa, NULL) < 0) {
		atomic_flag_clear_explicit(&touch_lock, memory_order_release);
		return -1;
	}
	return 0;
}

void hpshm__posix_touch_end(void)
{
	(void)sigaction(SIGBUS, &touch_old, NULL);
	atomic_flag_clear_explicit(&touch_lock, memory_order_release);
}

int hpshm__posix_touch_range(void *addr, size_t len, size_t step, atomic_int *stop, size_t *bad)
{
	sigset_t bus, oldmask;
	volatile char *base = addr;
	volatile size_t off = 0;
	volatile int failed = 0;

	/* A blocked SIGBUS raised by a fault kills the process regardless of the handler; the
	 * mask is this thread's. */
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	(void)pthread_sigmask(SIG_UNBLOCK, &bus, &oldmask);

	if (sigsetjmp(touch_jmp, 1) == 0) {
		touch_armed = 1;
		for (off = 0; off < len; off += step) {
			size_t last = (len - off < step ? len : off + step) - 1;
			char v = base[last];

			base[last] = v;
			/* Another thread's failure ends this one's work at the next page. */
			if (stop && atomic_load_explicit(stop, memory_order_relaxed))
				break;
		}
		touch_armed = 0;
	} else {
		failed = 1;
	}

	(void)pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	*bad = off;
	return failed;
}

int hpshm__posix_touch(void *addr, size_t len, size_t step, size_t *bad)
{
	int rc;

	if (hpshm__posix_touch_begin() < 0)
		return -1;
	rc = hpshm__posix_touch_range(addr, len, step, NULL, bad);
	hpshm__posix_touch_end();
	return rc;
}
