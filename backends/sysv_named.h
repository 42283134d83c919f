/* SPDX-License-Identifier: MIT */
/*
 * backends/sysv_named.h -- what the two files of the SysV provider share: the mechanism
 * (backends/sysv_hugetlb.c) and its name space (backends/sysv_named.c).  Internal to that
 * provider; no other backend includes it (doc/architecture.md).
 *
 * Every function returns 0 (or an id) or a negative HPSHM_E* code with err filled.
 */
#ifndef HPSHM_BACKENDS_SYSV_NAMED_H
#define HPSHM_BACKENDS_SYSV_NAMED_H

#include <stddef.h>
#include <stdint.h>

#include "hpshm/provider.h"

#define SYSV_NAME_MAX 127   /* what the header's name field holds */
#define SYSV_MARK     0x48u /* bytes hpshm asks shmget() for less than it maps: its mark */

/* The length shmat() maps for a segment of segsz bytes on page_size pages: rounded up. */
static inline uint64_t sysv_mapped(uint64_t segsz, size_t page_size)
{
	return (segsz + page_size - 1) / page_size * page_size;
}

/* shmget() of a new segment failed with saved: say why, per errno (sysv_named.c). */
int hpshm__sysv_shmget_error(const struct hpshm_request *rq, int saved, hpshm_error *err);

/* shmget() a named segment of segsz bytes with flags, recycling a dead predecessor: the id. */
int hpshm__named_sysv_get(const struct hpshm_request *rq, size_t segsz, int flags, hpshm_error *err);

/* The provider's scan(), lookup() and remove() (sysv_named.c). */
int hpshm__named_sysv_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user);
int hpshm__named_sysv_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq,
			     struct hpshm_found *f, hpshm_error *err);
int hpshm__named_sysv_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err);

#endif /* HPSHM_BACKENDS_SYSV_NAMED_H */
