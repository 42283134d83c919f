/* SPDX-License-Identifier: MIT */
/*
 * ports/admin.h -- what changes the machine: the size of a huge page pool and the mode of
 * transparent huge pages for shared memory.
 *
 * Internal: not installed.  Only `hpshm plan`, the benchmark (which sizes the pool for its
 * run and puts it back) and the tests include it; the library never changes a setting, and
 * scripts/check-layers.sh refuses this header anywhere else.  Both need root; both say why
 * they failed in words, for a person.  Implemented by ports/<os>/admin.c.
 */
#ifndef HPSHM_PORTS_ADMIN_H
#define HPSHM_PORTS_ADMIN_H

#include <stddef.h>

/* Set the pool of page_size to pages (root only; the OS may give fewer): 0, or -1 with why. */
int hpshm__os_pool_resize(size_t page_size, unsigned long pages, char *why, size_t len);
/* Set the mode of transparent huge pages for shared memory (root only): 0, or -1 with why
 * filled (no such setting here, or the write was refused). */
int hpshm__os_thp_shmem_set(const char *mode, char *why, size_t len);

#endif /* HPSHM_PORTS_ADMIN_H */
