/* SPDX-License-Identifier: MIT */
/*
 * tests/fakes.h -- test doubles: a fake /proc and /sys tree for the library, and fake providers.
 *
 * The fake tree (hpshm__linux_set_sysroot) holds one 2 MiB hstate with a pool the test chooses,
 * /proc/meminfo saying "Hugepagesize: 2048 kB", an empty /proc/self/cgroup and
 * /proc/self/mountinfo (no hugetlb cgroup, no hugetlbfs mount), and vm.hugetlb_shm_group set
 * to this process's gid, so the built-in hugetlb probes pass on any machine and a test can
 * then fail one system call through hpshm__posix_sys.  /proc/self/{smaps,maps,status} and the SysV
 * limits are symlinks to the real files, so verification still reads the kernel.
 *
 * A fake HUGE provider cannot get real huge pages without a pool, so when asked it makes the
 * library see its mapping as hugetlb: it replaces the tree's /proc/self/smaps link with a copy
 * of the real smaps in which its own VMA says "KernelPageSize: 2048 kB ... VmFlags: ... ht",
 * and puts the link back when the mapping is destroyed.
 */
#ifndef HPSHM_TESTS_FAKES_H
#define HPSHM_TESTS_FAKES_H

#include <stddef.h>

#include "hpshm.h"
#include "hpshm/provider.h"

#define HPT_MIB ((size_t)1 << 20)

/* Build the fake tree with a 2 MiB pool of nr pages (free as given) and point the library at it;
 * a skip removes it (hpt_fixture_undo_on_skip()), as .fini does with hpt_fakeroot_destroy(). */
void hpt_fakeroot_create(unsigned long nr, unsigned long free_pages);
/* Change the fake pool's counters. */
void hpt_fakeroot_set_pool(unsigned long nr, unsigned long free_pages);
/* Write a file of the fake tree (relative path), creating it. */
void hpt_fakeroot_write(const char *rel, const char *content);
/* Point the library back at "/" and remove the tree. */
void hpt_fakeroot_destroy(void);
/* The tree's directory, "" when none. */
const char *hpt_fakeroot_dir(void);

/* Make the library see [addr, addr+len) as a hugetlb VMA of page_size (see above): in the
 * tree's smaps, and with a maps that is a copy, so that PROCMAP_QUERY is refused there. */
void hpt_fakeroot_smaps_huge(const void *addr, size_t len, size_t page_size);
/* Put the tree's /proc/self/smaps and maps links back to the real files. */
void hpt_fakeroot_smaps_real(void);

/*
 * A directory that passes for a hugetlbfs mount, for suites whose statfs()/fstatfs() hooks
 * dress what the real call returned: hpt_fake_mount_make() makes a fresh one in /tmp and
 * returns its path, which hpt_fake_mount_remove() (and a skip: hpt_fixture_undo_on_skip())
 * removes and empties; hpt_on_fake_mount() says whether fd lies on the file system of dir
 * ("" for none), hpt_as_hugetlbfs() rewrites buf to hugetlbfs of page_size.
 */
struct statfs;
const char *hpt_fake_mount_make(void);
void hpt_fake_mount_remove(void);
int hpt_on_fake_mount(const char *dir, int fd);
void hpt_as_hugetlbfs(struct statfs *buf, size_t page_size);

/* A fake provider with counters.  Up to HPT_FAKES of them exist; all share one implementation and
 * are registered with themselves as the user pointer (hpt_fake_register). */
#define HPT_FAKES 4
struct hpt_fake {
	struct hpshm_provider provider;   /* what is registered; name points at name[] */
	char   name[HPSHM_NAME_MAX];

	int    probe_result;              /* what probe() returns */
	char   probe_reason[HPSHM_TEXT_MAX];
	char   probe_fix[HPSHM_TEXT_MAX];   /* the operator's fix probe() gives with a failure */
	int    create_result;             /* what create() returns (0: map for real) */
	int    create_errno;              /* errno create() reports on failure */
	char   create_call[HPSHM_NAME_MAX];
	char   create_hint[HPSHM_TEXT_MAX];
	int    smaps_huge;                /* make the mapping look hugetlb to the library */

	unsigned probes, creates, destroys; /* calls seen */
	size_t   last_size;               /* rq->size of the last probe or create */
	size_t   last_page_size;          /* rq->page_size of the last probe or create */
	void    *addr;                    /* the live mapping, if any */
	size_t   len;
};

/* Fake number i (0 .. HPT_FAKES-1), reset, named and with caps; create() maps for real. */
struct hpt_fake *hpt_fake_init(int i, const char *name, unsigned caps);
/* Register f under its name with itself as the user pointer; unregister it by name. */
int hpt_fake_register(struct hpt_fake *f, hpshm_error *err);
int hpt_fake_unregister(struct hpt_fake *f);

#endif /* HPSHM_TESTS_FAKES_H */
