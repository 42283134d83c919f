/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/sysinfo.c -- the small facts the core and the backends read from /proc and /sys:
 * huge page sizes, the huge page pools, privileges, SysV limits, transparent huge pages.
 *
 * Every path is read under hpshm__linux_sysroot() ("" normally), so a test can point the library
 * at a fake tree and play any machine: an empty pool, a 1GiB hstate, a container.
 *
 * Kernel facts this file relies on, and why it reads what it reads:
 *   - The huge page sizes are the directories /sys/kernel/mm/hugepages/hugepages-<kB>kB, one
 *     per hstate.  The default size (the one MAP_HUGETLB without size bits gets, and the one
 *     vm.nr_hugepages sizes) is Hugepagesize in /proc/meminfo.  Neither is assumed to be
 *     2MiB: arm64 with 64KiB base pages defaults to 512MiB, ppc64 to 16MiB.
 *   - A pool's pages a new mapping can reserve are free - resv, not free: free_hugepages
 *     counts pages already promised to mappings that have not faulted them yet
 *     (hugetlbfs_reserv.rst).  Overcommit adds nr_overcommit_hugepages - surplus_hugepages.
 *     The counters are read one file at a time, so they can be mutually inconsistent for a
 *     moment; the arithmetic saturates rather than wraps.
 *   - CAP_IPC_LOCK is read from CapEff in /proc/self/status, so no libcap is needed; SysV
 *     SHM_HUGETLB checks it, or membership of vm.hugetlb_shm_group, and nothing else (the
 *     RLIMIT_MEMLOCK fallback of old kernels is gone on current ones).
 *   - Transparent huge page settings show every choice with the current one in brackets:
 *     "always [madvise] never".
 *
 * Nothing here allocates, except hpshm__linux_in_group() when a process has more supplementary
 * groups than fit its stack array.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "linux/linux.h"

#define SYSINFO_HUGEPAGES_DIR "/sys/kernel/mm/hugepages"
#define SYSINFO_CAP_IPC_LOCK  14 /* linux/capability.h */

/* Long enough for any prefix a test uses; a longer one is refused rather than cut. */
static char sysinfo_root[PATH_MAX];

const char *hpshm__linux_sysroot(void)
{
	return sysinfo_root;
}

void hpshm__linux_set_sysroot(const char *root)
{
	size_t n;

	if (root == NULL || (n = strlen(root)) >= sizeof(sysinfo_root)) {
		sysinfo_root[0] = '\0';
		return;
	}
	/* A trailing '/' would double the one every absolute path starts with: harmless, but
	 * it would show in messages. */
	while (n > 1 && root[n - 1] == '/')
		n--;
	memcpy(sysinfo_root, root, n);
	sysinfo_root[n] = '\0';
}

long hpshm__linux_read_file(const char *path, char *buf, size_t len)
{
	char full[PATH_MAX];
	size_t have = 0;
	ssize_t got = 0;
	char extra;
	int fd, n, saved;

	if (path == NULL || buf == NULL || len == 0)
		return HPSHM_EINVAL;
	buf[0] = '\0';
	n = snprintf(full, sizeof(full), "%s%s", sysinfo_root, path);
	if (n < 0 || (size_t)n >= sizeof(full)) {
		errno = ENAMETOOLONG;
		return HPSHM_EIO;
	}
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return HPSHM_EIO;
	/* /proc files report size 0 and may come in several reads: loop until EOF. */
	while (have < len - 1) {
		got = read(fd, buf + have, len - 1 - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
	}
	buf[have] = '\0';
	if (got < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return HPSHM_EIO;
	}
	/* A full buffer may hide more: the caller asked for the whole file, so say it did not
	 * fit rather than hand back a prefix as if it were everything (the prefix stays in buf). */
	if (have == len - 1) {
		do
			got = read(fd, &extra, 1);
		while (got < 0 && errno == EINTR);
		if (got > 0) {
			close(fd);
			errno = EOVERFLOW;
			return HPSHM_EOVERFLOW;
		}
	}
	close(fd);
	return (long)have;
}

/* Parse one unsigned decimal number followed only by white space. */
static int sysinfo_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -1;  /* strtoull would accept "-1" and wrap it */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end != '\0')
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int hpshm__linux_read_u64(const char *path, uint64_t *out)
{
	char buf[64];

	if (hpshm__linux_read_file(path, buf, sizeof(buf)) < 0 || sysinfo_parse_u64(buf, out) < 0)
		return HPSHM_EIO;
	return 0;
}

/* The value of "Key:" in a "Key: value" file such as /proc/meminfo or /proc/self/status. */
static const char *sysinfo_field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return p + klen + 1;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

int hpshm__linux_read_field(const char *path, const char *key, int base, unsigned long long *out)
{
	char buf[8192];
	const char *v;
	char *end;

	if (hpshm__linux_read_file(path, buf, sizeof(buf)) < 0)
		return HPSHM_EIO;
	v = sysinfo_field(buf, key);
	if (v == NULL)
		return HPSHM_EIO;
	errno = 0;
	*out = strtoull(v, &end, base);
	return errno != 0 || end == v ? HPSHM_EIO : 0;
}

size_t hpshm__port_default_huge_page_size(void)
{
	unsigned long long kb;

	if (hpshm__linux_read_field("/proc/meminfo", "Hugepagesize", 10, &kb) < 0 || kb == 0 || kb > SIZE_MAX / 1024)
		return 0;
	return (size_t)kb * 1024;
}

/* One counter of the pool of page_size: 0, or -1 if the file cannot be read. */
static int sysinfo_pool_counter(size_t page_size, const char *file, unsigned long *out)
{
	char path[128];
	uint64_t v;

	snprintf(path, sizeof(path), SYSINFO_HUGEPAGES_DIR "/hugepages-%zukB/%s", page_size / 1024, file);
	if (hpshm__linux_read_u64(path, &v) < 0)
		return -1;
	*out = v > ULONG_MAX ? ULONG_MAX : (unsigned long)v;
	return 0;
}

/* Read the counters of the pool of page_size; 0, or -1 if the kernel has no such pool. */
static int sysinfo_pool_read(size_t page_size, struct hpshm__pool *out)
{
	if (page_size == 0 || page_size % 1024 != 0)
		return -1;
	memset(out, 0, sizeof(*out));
	out->page_size = page_size;
	/* nr_hugepages exists for every hstate: its absence means no such page size.  The other
	 * counters read as 0 when missing, so a fake tree need not hold them all. */
	if (sysinfo_pool_counter(page_size, "nr_hugepages", &out->total) < 0)
		return -1;
	(void)sysinfo_pool_counter(page_size, "free_hugepages", &out->free);
	(void)sysinfo_pool_counter(page_size, "resv_hugepages", &out->resv);
	(void)sysinfo_pool_counter(page_size, "surplus_hugepages", &out->surplus);
	(void)sysinfo_pool_counter(page_size, "nr_overcommit_hugepages", &out->overcommit);
	return 0;
}

int hpshm__linux_pool_get(size_t page_size, struct hpshm__pool *out)
{
	if (out == NULL)
		return HPSHM_EINVAL;
	if (sysinfo_pool_read(page_size, out) < 0)
		return HPSHM_EUNAVAILABLE;
	return 0;
}

int hpshm__linux_pools(struct hpshm__pool *out, int max)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	char dirpath[PATH_MAX];
	struct dirent *de;
	unsigned long long kb;
	int nsizes = 0, n = 0, i, j;
	DIR *d;
	char *end;
	int len;

	if (out == NULL || max <= 0)
		return 0;
	len = snprintf(dirpath, sizeof(dirpath), "%s" SYSINFO_HUGEPAGES_DIR, sysinfo_root);
	if (len < 0 || (size_t)len >= sizeof(dirpath))
		return 0;
	d = opendir(dirpath);
	if (d == NULL)
		return 0;  /* a kernel without hugetlb: no pools */

	/* Keep the smallest sizes, sorted, in case a kernel ever offers more than we have
	 * room for; readdir's order is the file system's, not the size's. */
	while ((de = readdir(d)) != NULL) {
		size_t size;

		if (strncmp(de->d_name, "hugepages-", 10) != 0)
			continue;
		errno = 0;
		kb = strtoull(de->d_name + 10, &end, 10);
		if (errno != 0 || end == de->d_name + 10 || strcmp(end, "kB") != 0 || kb == 0 ||
		    kb > SIZE_MAX / 1024)
			continue;
		size = (size_t)kb * 1024;
		for (i = 0; i < nsizes && sizes[i] < size; i++)
			;
		if (i < nsizes && sizes[i] == size)
			continue;
		if (i == HPSHM__MAX_PAGE_SIZES)
			continue;
		if (nsizes == HPSHM__MAX_PAGE_SIZES)
			nsizes--;  /* drop the largest to make room */
		for (j = nsizes; j > i; j--)
			sizes[j] = sizes[j - 1];
		sizes[i] = size;
		nsizes++;
	}
	closedir(d);

	for (i = 0; i < nsizes && n < max; i++)
		if (sysinfo_pool_read(sizes[i], &out[n]) == 0)
			n++;
	return n;
}

int hpshm__port_huge_page_sizes(size_t *out, int max)
{
	struct hpshm__pool pools[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm__linux_pools(pools, max < HPSHM__MAX_PAGE_SIZES ? max : HPSHM__MAX_PAGE_SIZES);

	for (int i = 0; i < n; i++)
		out[i] = pools[i].page_size;
	return n;
}

char *hpshm__linux_pool_knob(size_t page_size, char *buf, size_t len)
{
	if (page_size == hpshm__port_default_huge_page_size())
		snprintf(buf, len, "vm.nr_hugepages");
	else
		hpshm__linux_pool_file(page_size, buf, len);
	return buf;
}

char *hpshm__linux_pool_file(size_t page_size, char *buf, size_t len)
{
	snprintf(buf, len, SYSINFO_HUGEPAGES_DIR "/hugepages-%zukB/nr_hugepages", page_size / 1024);
	return buf;
}

unsigned long hpshm__linux_pool_available(const struct hpshm__pool *p)
{
	unsigned long avail = p->free > p->resv ? p->free - p->resv : 0;
	unsigned long room = p->overcommit > p->surplus ? p->overcommit - p->surplus : 0;

	return avail > ULONG_MAX - room ? ULONG_MAX : avail + room;
}

int hpshm__linux_has_cap_ipc_lock(void)
{
	unsigned long long caps;

	if (hpshm__linux_read_field("/proc/self/status", "CapEff", 16, &caps) < 0)
		return 0;
	return (int)((caps >> SYSINFO_CAP_IPC_LOCK) & 1);
}

long hpshm__linux_hugetlb_shm_group(void)
{
	uint64_t gid;

	if (hpshm__linux_read_u64("/proc/sys/vm/hugetlb_shm_group", &gid) < 0 || gid > (uint64_t)LONG_MAX)
		return -1;
	return (long)gid;
}

int hpshm__linux_in_group(long gid)
{
	gid_t local[64];
	gid_t *groups = local;
	int n, i, found = 0;

	if (gid < 0 || (unsigned long)gid > (gid_t)-1)
		return 0;
	/* The kernel checks the fsgid, which is the egid unless setfsgid() was called. */
	if (getegid() == (gid_t)gid)
		return 1;
	n = getgroups(0, NULL);
	if (n <= 0)
		return 0;
	if ((size_t)n > sizeof(local) / sizeof(local[0])) {
		groups = malloc((size_t)n * sizeof(*groups));
		if (groups == NULL)
			return 0;
	}
	/* The list can grow between the two calls only through setgroups() in another thread;
	 * then getgroups fails with EINVAL and we answer "no", which probe reports. */
	n = getgroups(n, groups);
	for (i = 0; i < n; i++)
		if (groups[i] == (gid_t)gid)
			found = 1;
	if (groups != local)
		free(groups);
	return found;
}

int hpshm__linux_sysv_limits(struct hpshm__sysv_limits *out)
{
	int nread = 0;

	if (out == NULL)
		return HPSHM_EINVAL;
	memset(out, 0, sizeof(*out));
	nread += hpshm__linux_read_u64("/proc/sys/kernel/shmmax", &out->shmmax) == 0;
	nread += hpshm__linux_read_u64("/proc/sys/kernel/shmall", &out->shmall) == 0;
	nread += hpshm__linux_read_u64("/proc/sys/kernel/shmmni", &out->shmmni) == 0;
	return nread > 0 ? 0 : HPSHM_EIO;
}

/* The [bracketed] choice of a THP setting file into out, "" if absent or unbracketed. */
static void sysinfo_thp_choice(const char *path, char *out, size_t len)
{
	char buf[256];
	const char *open_b, *close_b;
	size_t n;

	out[0] = '\0';
	if (hpshm__linux_read_file(path, buf, sizeof(buf)) < 0)
		return;
	open_b = strchr(buf, '[');
	close_b = open_b != NULL ? strchr(open_b, ']') : NULL;
	if (close_b == NULL)
		return;
	n = (size_t)(close_b - open_b - 1);
	if (n >= len)
		return;
	memcpy(out, open_b + 1, n);
	out[n] = '\0';
}

int hpshm__linux_thp(struct hpshm__thp *out)
{
	if (out == NULL)
		return HPSHM_EINVAL;
	sysinfo_thp_choice("/sys/kernel/mm/transparent_hugepage/enabled", out->enabled, sizeof(out->enabled));
	sysinfo_thp_choice("/sys/kernel/mm/transparent_hugepage/defrag", out->defrag, sizeof(out->defrag));
	sysinfo_thp_choice("/sys/kernel/mm/transparent_hugepage/shmem_enabled", out->shmem_enabled,
			   sizeof(out->shmem_enabled));
	return 0;
}

FILE *hpshm__linux_sysfile_open(const char *path)
{
	char full[PATH_MAX];
	int n = snprintf(full, sizeof(full), "%s%s", hpshm__linux_sysroot(), path);

	if (n < 0 || (size_t)n >= sizeof(full)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return hpshm__port_fopen(full, "r");
}

int hpshm__linux_getline(FILE *f, char *buf, size_t len, int *cut)
{
	size_t n;
	int c;

	if (cut)
		*cut = 0;
	if (fgets(buf, (int)len, f) == NULL)
		return 0;
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n') {
		buf[n - 1] = '\0';
		return 1;
	}
	c = getc(f);
	if (c == EOF || c == '\n')
		return 1;   /* the last line, without a newline, or one that exactly fit */
	if (cut)
		*cut = 1;
	while ((c = getc(f)) != EOF && c != '\n')
		;
	return 1;
}

char *hpshm__linux_hugetlb_cgroup_size(size_t page_size, char *buf, size_t len)
{
	if (page_size >= (size_t)1 << 30)
		snprintf(buf, len, "%zuGB", page_size >> 30);
	else if (page_size >= (size_t)1 << 20)
		snprintf(buf, len, "%zuMB", page_size >> 20);
	else
		snprintf(buf, len, "%zuKB", page_size >> 10);
	return buf;
}
