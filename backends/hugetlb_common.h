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
 * The checks every hugetlb provider shares, for probe(): the kernel offers rq->page_size,
 * the pool has rq->size / rq->page_size pages available (free - resv + overcommit room), and
 * no hugetlb cgroup limit leaves less than rq->size.  0, or HPSHM_EUNAVAILABLE with
 * out->reason one sentence such as "vm.nr_hugepages is 0 for 2MiB pages: raise it to at
 * least 8" or "hugetlb cgroup /x allows 4MiB of 2MiB pages at fault time, below 32MiB".
 */
int hpshm__hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out);

#endif /* HPSHM_BACKENDS_HUGETLB_COMMON_H */
