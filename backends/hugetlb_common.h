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

#endif /* HPSHM_BACKENDS_HUGETLB_COMMON_H */
