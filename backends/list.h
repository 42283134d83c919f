/* SPDX-License-Identifier: MIT */
/*
 * backends/list.h -- the built-in backends, written once.
 *
 * One row per registration, best first: the order is provider=auto's (core/registry.c says
 * why each stands where it does), with plain last.  Everything else is made from these rows:
 * core/registry.c's declarations, its table and the names a configuration may leave out, and
 * CMakeLists.txt's sources and its HPSHM_WITH_<KEY> options (it reads this file with
 * file(STRINGS), so keep one row per line, exactly in the shape below).  A new backend is its
 * file in backends/ and one row here (doc/architecture.md, "Adding a backend").
 *
 * The columns:
 *   name    what the provider is called in configurations, tokens, headers and logs;
 *   KEY     CMake defines HPSHM_WITH_<KEY> to 1 when the row is built here, else to 0;
 *   os      where it can be built: linux (HPSHM_PORT=linux), freebsd, windows, or posix (every
 *           build but Windows);
 *   build   option: an HPSHM_WITH_<KEY> option, on by default, lets a build leave it out;
 *           always: built wherever its os is (plain, which ends every walk);
 *   source  backends/<source>.c, which defines ops (two rows may share it);
 *   ops     the struct hpshm_provider it is;
 *   user    what its members receive as self->user: HPSHM_NO_USER, or
 *           HPSHM_USER(struct tag, object) for &object, so one implementation can be two rows.
 *
 * The includer defines HPSHM_BACKEND (and HPSHM_USER and HPSHM_NO_USER) before each
 * inclusion; this file has no guard on purpose.
 */
/*            name               KEY                os       build   source             ops                                 user */
HPSHM_BACKEND(memfd_hugetlb,     MEMFD_HUGETLB,     linux,   option, memfd_hugetlb,     hpshm__provider_memfd_hugetlb,     HPSHM_NO_USER)
HPSHM_BACKEND(mmap_hugetlb,      MMAP_HUGETLB,      linux,   option, mmap_hugetlb,      hpshm__provider_mmap_hugetlb,      HPSHM_NO_USER)
HPSHM_BACKEND(sysv_hugetlb,      SYSV_HUGETLB,      linux,   option, sysv_hugetlb,      hpshm__provider_sysv_hugetlb,      HPSHM_NO_USER)
HPSHM_BACKEND(hugetlbfs,         HUGETLBFS,         linux,   option, hugetlbfs,         hpshm__provider_hugetlbfs,         HPSHM_NO_USER)
HPSHM_BACKEND(windows_large,     WINDOWS_LARGE,     windows, option, winsection_large,  hpshm__provider_windows_large,     HPSHM_USER(hpshm__winsection_kind, hpshm__winsection_large))
HPSHM_BACKEND(freebsd_largepage, FREEBSD_LARGEPAGE, freebsd, option, freebsd_largepage, hpshm__provider_freebsd_largepage, HPSHM_NO_USER)
HPSHM_BACKEND(plain,             PLAIN_POSIX,       posix,   always, plain_posix,       hpshm__provider_plain,             HPSHM_NO_USER)
HPSHM_BACKEND(plain,             PLAIN_WINDOWS,     windows, always, winsection,        hpshm__provider_plain,             HPSHM_USER(hpshm__winsection_kind, hpshm__winsection_plain))
