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
