/* SPDX-License-Identifier: MIT */
/*
 * backends/hugetlb_common.h -- what the Linux hugetlb backends share (mmap_hugetlb,
 * sysv_hugetlb, hugetlbfs, memfd_hugetlb).
 *
 * Internal: included by those backends only.  Backends never include one another, so code
 * they share lives in a helper of the backend layer; the OS facts it reads come from
 * ports/linux/linux.h.
 */
#ifndef HPSHM_BACKENDS_HUGETLB_COMMON_H
#define HPSHM_BACKENDS_HUGETLB_COMMON_H

#include "hpshm/provider.h"

/*
 * The probe every hugetlb provider starts with: the sizes the kernel offers (out->sizes), the
 * one for the wish in rq->page_size (out->page_size), the pages its pool has available, the
 * populate advice of a hugetlb cgroup that limits faults but not reservations, and whether
 * the pool and the cgroups leave room for rq->size.  *at is rq with the chosen page size and
 * the size rounded up to it, for the backend's own checks.  0, or HPSHM_EUNAVAILABLE with
 * out->reason one sentence such as "vm.nr_hugepages is 0 for 2MiB pages (need 8): raise it
 * to at least 8" and out->fix the operator's command.
 */
int hpshm__hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out, struct hpshm_request *at);

/*
 * The needs every hugetlb provider shares, for requirements(): the pool of rq->page_size
 * pages ("pool") and the hugetlb cgroup's two limits ("cgroup"), each with the commands that
 * meet it and the line that keeps it across a reboot.  rq->size is the mapped length.
 * Returns 0, or fn's non-zero answer when it asked to stop (the caller stops too).
 */
int hpshm__hugetlb_requirements(const struct hpshm_request *rq, hpshm_need_fn fn, void *user);
/* The same, as the requirements() member of a provider that needs nothing else. */
int hpshm__hugetlb_requirements_member(const struct hpshm_instance *self, const struct hpshm_request *rq,
				       hpshm_need_fn fn, void *user);

/* A requirement with every text empty, met = 0. */
void hpshm__requirement_init(struct hpshm_requirement *r, const char *what);
/* Format one of a requirement's texts (detail, note), cut to HPSHM_REQUIREMENT_TEXT. */
void hpshm__requirement_text(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Fill the first empty one of three command slots (r.now or r.persist) with a formatted line. */
void hpshm__requirement_add(char (*slots)[HPSHM_REQUIREMENT_TEXT], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A page size as hugetlbfs' pagesize= and the kernel command line write it: "2M", "1G". */
char *hpshm__hugetlbfs_size(size_t page_size, char *buf, size_t len);

#endif /* HPSHM_BACKENDS_HUGETLB_COMMON_H */
