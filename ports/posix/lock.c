/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/lock.c -- the address lock and the registry lock (port.h), as POSIX mutexes, and
 * the release fence, as C11's.
 *
 * A statically initialised mutex needs no setup call and no teardown, so the library keeps
 * its "no init function" promise.  A child made by fork() while another thread holds one
 * inherits it held; hpshm__port_spawn()'s children only exec, and a server that forks workers from
 * a thread while another creates a segment must follow POSIX's rule for such children (only
 * async-signal-safe calls until exec), which hpshm's calls are not.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "port.h"

static pthread_mutex_t address_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

void hpshm__port_address_lock(void)
{
	(void)pthread_mutex_lock(&address_lock);
}

void hpshm__port_address_unlock(void)
{
	(void)pthread_mutex_unlock(&address_lock);
}

void hpshm__port_registry_lock(void)
{
	(void)pthread_mutex_lock(&registry_lock);
}

void hpshm__port_registry_unlock(void)
{
	(void)pthread_mutex_unlock(&registry_lock);
}

/* Every compiler of a POSIX system hpshm builds on (GCC, Clang) has C11's atomics. */
void hpshm__port_release_fence(void)
{
	atomic_thread_fence(memory_order_release);
}

/* ---- resizable segments: their list's lock, fork handlers, shared 64-bit words ---- */

static pthread_mutex_t segments_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static int fork_installed; /* fork_lock */

void hpshm__port_segments_lock(void)
{
	(void)pthread_mutex_lock(&segments_lock);
}

void hpshm__port_segments_unlock(void)
{
	(void)pthread_mutex_unlock(&segments_lock);
}

int hpshm__port_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	int rc = 0;

	/* One set of handlers per process, installed by the first call: the core has one list,
	 * and pthread_atfork() cannot take a handler back. */
	(void)pthread_mutex_lock(&fork_lock);
	if (!fork_installed) {
		rc = pthread_atfork(prepare, parent, child);
		fork_installed = rc == 0;
	}
	(void)pthread_mutex_unlock(&fork_lock);
	return rc == 0 ? 0 : HPSHM_ESYS;
}

/* Plain 64-bit words that two processes share: the GCC/Clang builtins, which act on any
 * aligned object (C11's need an _Atomic type, which the header's layout must not depend on). */
uint64_t hpshm__port_load64(const volatile uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

void hpshm__port_store64(volatile uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

int hpshm__port_cas64(volatile uint64_t *p, uint64_t *expected, uint64_t desired)
{
	return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
