/* SPDX-License-Identifier: MIT */
/*
 * tests/fakes.c -- the fake /proc,/sys tree and the fake providers.  See fakes.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "fakes.h"

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"

#include "ports/linux/linux.h"

static char fakeroot[256];

static void must(int ok, const char *what)
{
	if (!ok)
		cr_assert_fail("fake tree: %s: %s", what, strerror(errno));
}

static void mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof path, "%s/%s", fakeroot, rel);
	for (p = path + strlen(fakeroot) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			must(mkdir(path, 0755) == 0 || errno == EEXIST, path);
			*p = '/';
		}
	}
	must(mkdir(path, 0755) == 0 || errno == EEXIST, path);
}

void hpt_fakeroot_write(const char *rel, const char *content)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(dir, sizeof dir, "%s", rel);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(dir);
	}
	snprintf(path, sizeof path, "%s/%s", fakeroot, rel);
	/* Some names of the tree are links to the real /proc or /sys (link_real): writing through
	 * one would change the machine, so the link is replaced by a file of the tree's own. */
	(void)unlink(path);
	f = fopen(path, "w");
	must(f != NULL, path);
	fputs(content, f);
	must(fclose(f) == 0, path);
	chmod(path, 0644);
}

static void link_real(const char *rel, const char *target)
{
	char path[512], dir[512], *slash;

	snprintf(dir, sizeof dir, "%s", rel);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(dir);
	}
	snprintf(path, sizeof path, "%s/%s", fakeroot, rel);
	(void)unlink(path);
	must(symlink(target, path) == 0, path);
}

void hpt_fakeroot_set_pool(unsigned long nr, unsigned long free_pages)
{
	static const char *const dir = "sys/kernel/mm/hugepages/hugepages-2048kB";
	char rel[256], num[32];
	char meminfo[8192], line[256];
	size_t used = 0;
	FILE *f;

	snprintf(num, sizeof num, "%lu\n", nr);
	snprintf(rel, sizeof rel, "%s/nr_hugepages", dir);
	hpt_fakeroot_write(rel, num);
	hpt_fakeroot_write("proc/sys/vm/nr_hugepages", num);
	snprintf(num, sizeof num, "%lu\n", free_pages);
	snprintf(rel, sizeof rel, "%s/free_hugepages", dir);
	hpt_fakeroot_write(rel, num);
	snprintf(rel, sizeof rel, "%s/resv_hugepages", dir);
	hpt_fakeroot_write(rel, "0\n");
	snprintf(rel, sizeof rel, "%s/surplus_hugepages", dir);
	hpt_fakeroot_write(rel, "0\n");
	snprintf(rel, sizeof rel, "%s/nr_overcommit_hugepages", dir);
	hpt_fakeroot_write(rel, "0\n");
	hpt_fakeroot_write("proc/sys/vm/nr_overcommit_hugepages", "0\n");

	/* /proc/meminfo: the real one, with this pool's lines */
	meminfo[0] = '\0';
	f = fopen("/proc/meminfo", "r");
	if (f) {
		while (fgets(line, sizeof line, f))
			if (strncmp(line, "HugePages_", 10) != 0 && strncmp(line, "Hugepagesize", 12) != 0 &&
			    strncmp(line, "Hugetlb", 7) != 0 && used + strlen(line) + 1 < sizeof meminfo) {
				memcpy(meminfo + used, line, strlen(line) + 1);
				used += strlen(line);
			}
		fclose(f);
	}
	snprintf(meminfo + used, sizeof meminfo - used,
		 "HugePages_Total:   %5lu\nHugePages_Free:    %5lu\nHugePages_Rsvd:        0\n"
		 "HugePages_Surp:        0\nHugepagesize:       2048 kB\nHugetlb:        %8lu kB\n",
		 nr, free_pages, nr * 2048);
	hpt_fakeroot_write("proc/meminfo", meminfo);
}

void hpt_fakeroot_create(unsigned long nr, unsigned long free_pages)
{
	char gid[32];

	snprintf(fakeroot, sizeof fakeroot, "/tmp/hpshm-fakeroot-XXXXXX");
	must(mkdtemp(fakeroot) != NULL, "mkdtemp");
	chmod(fakeroot, 0755); /* readable by a test child that dropped privileges */

	hpt_fakeroot_set_pool(nr, free_pages);
	hpt_fakeroot_write("proc/self/cgroup", "");
	hpt_fakeroot_write("proc/self/mountinfo", "");
	hpt_fakeroot_write("proc/self/mounts", "");
	hpt_fakeroot_write("proc/mounts", "");
	link_real("proc/self/smaps", "/proc/self/smaps");
	link_real("proc/self/maps", "/proc/self/maps");
	link_real("proc/self/status", "/proc/self/status");
	link_real("proc/filesystems", "/proc/filesystems");
	link_real("proc/sysvipc", "/proc/sysvipc");
	link_real("proc/sys/kernel/shmmax", "/proc/sys/kernel/shmmax");
	link_real("proc/sys/kernel/shmall", "/proc/sys/kernel/shmall");
	link_real("proc/sys/kernel/shmmni", "/proc/sys/kernel/shmmni");
	link_real("sys/kernel/mm/transparent_hugepage", "/sys/kernel/mm/transparent_hugepage");
	snprintf(gid, sizeof gid, "%ld\n", (long)getgid());
	hpt_fakeroot_write("proc/sys/vm/hugetlb_shm_group", gid);
	mkdirs("sys/fs/cgroup");

	hpshm__linux_set_sysroot(fakeroot);
	hpt_fixture_undo_on_skip(hpt_fakeroot_destroy);
}

/* Remove one entry of the tree, and go on past one that will not go: the rest still can. */
static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	(void)(flag == FTW_DP ? rmdir(path) : unlink(path));
	return 0;
}

void hpt_fakeroot_destroy(void)
{
	hpshm__linux_set_sysroot(NULL);
	if (!fakeroot[0])
		return;
	(void)nftw(fakeroot, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	fakeroot[0] = '\0';
}

const char *hpt_fakeroot_dir(void)
{
	return fakeroot;
}

void hpt_fakeroot_smaps_huge(const void *addr, size_t len, size_t page_size)
{
	uintptr_t lo_want = (uintptr_t)addr, hi_want = lo_want + len;
	char path[512], tmp[512];
	FILE *in, *out;
	char *line = NULL;
	size_t cap = 0;
	int skipping = 0, written = 0;

	if (!fakeroot[0])
		return;
	snprintf(path, sizeof path, "%s/proc/self/smaps", fakeroot);
	snprintf(tmp, sizeof tmp, "%s/proc/self/smaps.tmp", fakeroot);
	in = fopen("/proc/self/smaps", "r");
	out = fopen(tmp, "w");
	must(in && out, "smaps copy");
	while (getline(&line, &cap, in) > 0) {
		unsigned long lo, hi;
		char *dash = strchr(line, '-'), *space = strchr(line, ' ');

		if (dash && space && dash < space && sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (!written && lo >= lo_want) {
				fprintf(out,
					"%lx-%lx rw-s 00000000 00:10 4242                       /anon_hugepage (deleted)\n"
					"Size:           %8zu kB\nKernelPageSize: %8zu kB\nMMUPageSize:    %8zu kB\n"
					"Rss:                   0 kB\nPss:                   0 kB\n"
					"Shared_Clean:          0 kB\nShared_Dirty:          0 kB\n"
					"Private_Clean:         0 kB\nPrivate_Dirty:         0 kB\n"
					"Referenced:            0 kB\nAnonymous:             0 kB\n"
					"AnonHugePages:         0 kB\nShmemPmdMapped:        0 kB\n"
					"Shared_Hugetlb: %8zu kB\nPrivate_Hugetlb:       0 kB\n"
					"Swap:                  0 kB\nSwapPss:               0 kB\n"
					"Locked:                0 kB\nTHPeligible:           0\n"
					"VmFlags: rd wr sh mr mw me ms de ht sd \n",
					(unsigned long)lo_want, (unsigned long)hi_want, len / 1024, page_size / 1024,
					page_size / 1024, len / 1024);
				written = 1;
			}
			skipping = lo < hi_want && hi > lo_want;
		}
		if (!skipping)
			fputs(line, out);
	}
	free(line);
	fclose(in);
	must(fclose(out) == 0, "smaps copy");
	must(rename(tmp, path) == 0, "smaps rename");
	/*
	 * The library asks the kernel with PROCMAP_QUERY first, on the tree's maps, a link to the
	 * real one, which would describe the range as it is.  A copy of it is no proc file: the
	 * query is refused (ENOTTY, as before Linux 6.11) and the library reads the smaps above.
	 */
	snprintf(path, sizeof path, "%s/proc/self/maps", fakeroot);
	snprintf(tmp, sizeof tmp, "%s/proc/self/maps.tmp", fakeroot);
	in = fopen("/proc/self/maps", "r");
	out = fopen(tmp, "w");
	must(in && out, "maps copy");
	for (int c; (c = getc(in)) != EOF;)
		putc(c, out);
	fclose(in);
	must(fclose(out) == 0, "maps copy");
	must(rename(tmp, path) == 0, "maps rename");
}

void hpt_fakeroot_smaps_real(void)
{
	if (fakeroot[0]) {
		link_real("proc/self/smaps", "/proc/self/smaps");
		link_real("proc/self/maps", "/proc/self/maps");
	}
}

/* ---- fake providers ---- */

static struct hpt_fake fakes[HPT_FAKES];

/*
 * One implementation serves every fake: each is registered with its struct hpt_fake as the
 * user pointer, which is what provider ABI 3 gives every member as self->user.
 */
static int fake_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hpt_fake *f = self->user;

	f->probes++;
	f->last_size = rq->size;
	f->last_page_size = rq->page_size;
	/* A huge fake offers the fake tree's one size, 2 MiB; the others base pages. */
	out->nsizes = 1;
	out->sizes[0] = (f->provider.caps & HPSHM_CAP_HUGE) ? 2 * HPT_MIB : hpshm_base_page_size();
	out->page_size = out->sizes[0];
	if ((f->provider.caps & HPSHM_CAP_HUGE) && rq->page_size != HPSHM_PAGE_SIZE_DEFAULT &&
	    rq->page_size != HPSHM_PAGE_SIZE_LARGEST && rq->page_size != 2 * HPT_MIB)
		out->page_size = 0;
	out->available = HPSHM_PAGES_UNKNOWN;
	/* A huge fake advises populate where a hugetlb provider would: a cgroup that limits
	 * faults but not reservations (the same port check backends/hugetlb_common.c uses). */
	if ((f->provider.caps & HPSHM_CAP_HUGE) && out->page_size &&
	    hpshm__linux_hugetlb_fault_risk(rq->size, out->page_size) > 0)
		out->advice |= HPSHM_ADVISE_POPULATE;
	if (f->probe_result) {
		out->sys_errno = 0;
		snprintf(out->reason, sizeof out->reason, "%s", f->probe_reason);
		snprintf(out->fix, sizeof out->fix, "%s", f->probe_fix);
	}
	return f->probe_result;
}

static int fake_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		       hpshm_error *err)
{
	struct hpt_fake *f = self->user;
	size_t align = rq->page_size ? rq->page_size : 4096;
	uint8_t *raw, *base;
	size_t rawlen;

	f->creates++;
	f->last_size = rq->size;
	f->last_page_size = rq->page_size;
	if (f->create_result)
		return hpshm_error_set(err, f->create_result, f->create_errno,
				       f->create_call[0] ? f->create_call : NULL,
				       f->create_hint[0] ? f->create_hint : NULL, "%s: injected create failure",
				       self->name);

	/* map aligned to the page size, as a hugetlb mapping would be */
	rawlen = rq->size + align;
	raw = mmap(NULL, rawlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return hpshm_error_set(err, HPSHM_ESYS, errno, "mmap", NULL, "fake mmap failed");
	base = (uint8_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (raw + rawlen > base + rq->size)
		munmap(base + rq->size, (size_t)(raw + rawlen - (base + rq->size)));

	m->addr = base;
	m->size = rq->size;
	m->handle = HPSHM_NO_HANDLE;
	m->flags = 0;
	m->path[0] = '\0';
	m->priv = f;
	f->addr = base;
	f->len = rq->size;
	if (f->smaps_huge)
		hpt_fakeroot_smaps_huge(base, rq->size, rq->page_size);
	return 0;
}

static int fake_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	struct hpt_fake *f = self->user;

	f->destroys++;
	munmap(m->addr, m->size);
	if (f->smaps_huge)
		hpt_fakeroot_smaps_real();
	f->addr = NULL;
	f->len = 0;
	return 0;
}

struct hpt_fake *hpt_fake_init(int i, const char *name, unsigned caps)
{
	struct hpt_fake *f = &fakes[i];

	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "%s", name);
	f->provider.abi_version = HPSHM_PROVIDER_ABI;
	f->provider.name = f->name;
	f->provider.summary = "test double";
	f->provider.caps = caps;
	f->provider.probe = fake_probe;
	f->provider.create = fake_create;
	f->provider.destroy = fake_destroy;
	return f;
}

int hpt_fake_register(struct hpt_fake *f, hpshm_error *err)
{
	return hpshm_provider_register(&f->provider, f->name, f, err);
}

int hpt_fake_unregister(struct hpt_fake *f)
{
	return hpshm_provider_unregister(f->name);
}

static char fake_mount[64];

void hpt_fake_mount_remove(void)
{
	if (fake_mount[0])
		(void)rmdir(fake_mount);
	fake_mount[0] = '\0';
}

const char *hpt_fake_mount_make(void)
{
	snprintf(fake_mount, sizeof fake_mount, "/tmp/hpt-mnt.XXXXXX");
	must(mkdtemp(fake_mount) != NULL, "mkdtemp");
	hpt_fixture_undo_on_skip(hpt_fake_mount_remove);
	return fake_mount;
}

int hpt_on_fake_mount(const char *dir, int fd)
{
	struct stat a, b;

	return dir[0] && fstat(fd, &a) == 0 && stat(dir, &b) == 0 && a.st_dev == b.st_dev;
}

void hpt_as_hugetlbfs(struct statfs *buf, size_t page_size)
{
	buf->f_type = (__typeof__(buf->f_type))HUGETLBFS_MAGIC;
	buf->f_bsize = (__typeof__(buf->f_bsize))page_size;
}
