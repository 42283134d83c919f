/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/mounts.c -- finding hugetlbfs mounts, and telling whether a directory is on one.
 *
 * The hugetlbfs provider needs a mounted hugetlbfs of the right page size that this process
 * may create files in; an operator mounts one (`mount -t hugetlbfs -o pagesize=2M none /dir`),
 * or the distribution does (/dev/hugepages by systemd).  memfd and MAP_HUGETLB need none: they
 * use the kernel's internal mounts, which no mount table shows.
 *
 * We read /proc/self/mountinfo rather than /proc/mounts or getmntent(3) because it is this
 * process's own namespace, it separates the per-mount options from the super block options
 * (where pagesize= lives), and its format is fixed (proc(5)):
 *
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - hugetlbfs none rw,pagesize=2M
 *   id pa dev  root  point opts  optional... -  fstype   src  super options
 *
 * Quirks handled:
 *   - The kernel prints the page size in the largest unit that divides it among K and M
 *     only: 1GiB pages show as "pagesize=1024M".  We accept K, M and G, with or without B.
 *     A mount without pagesize= (very old kernels) uses the default huge page size.
 *   - Spaces, tabs, newlines and backslashes in a mount point are escaped as \040, \011,
 *     \012 and \134; we unescape them.
 *   - Lines can be very long (overlayfs lists every lower directory: libhugetlbfs issue #43),
 *     so lines are read into a large buffer and a line that still does not fit is skipped
 *     whole; it cannot be a hugetlbfs line we could use, since our mount path holds 255
 *     bytes.
 *   - A mount point mounted over again later in the table is hidden: only the last mount
 *     at a path counts.
 *   - Mount points are real paths: writability is checked with access(W_OK) on them, not
 *     under the sysroot (which only redirects what we read from /proc and /sys).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/linux.h"

#define MOUNTS_LINE_MAX 8192 /* far beyond any hugetlbfs line; longer lines are skipped */

/* Undo mountinfo's octal escapes in place (\040 is a space). */
static void mounts_unescape(char *s)
{
	char *out = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*out++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* "2M", "1024M", "64K", "1G", "2MB": bytes, or 0 if not a size. */
static size_t mounts_parse_pagesize(const char *s)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || v == 0)
		return 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0' && *end != ',')
		return 0;
	if (v > (SIZE_MAX >> shift))
		return 0;
	return (size_t)v << shift;
}

/*
 * Split a mountinfo line in place: the mount point, the file system type and the super
 * options.  0, or -1 if the line is not in the documented format.
 */
static int mounts_split(char *line, char **point, const char **fstype, const char **super)
{
	char *save = NULL, *tok;
	int i;

	/* id, parent, dev, root, mount point, mount options */
	tok = strtok_r(line, " ", &save);
	for (i = 0; tok != NULL && i < 4; i++)
		tok = strtok_r(NULL, " ", &save);
	if (tok == NULL)
		return -1;
	*point = tok;
	if (strtok_r(NULL, " ", &save) == NULL)
		return -1;
	/* optional fields (shared:N, master:N, ...) up to the lone "-" */
	while ((tok = strtok_r(NULL, " ", &save)) != NULL && strcmp(tok, "-") != 0)
		;
	if (tok == NULL)
		return -1;
	*fstype = strtok_r(NULL, " ", &save);
	if (*fstype == NULL || strtok_r(NULL, " ", &save) == NULL)
		return -1;
	*super = strtok_r(NULL, " ", &save);
	if (*super == NULL)
		*super = "";
	return 0;
}

/* The pagesize= super option in bytes, or 0 if there is none. */
static size_t mounts_option_pagesize(const char *opts)
{
	const char *p = opts;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, "pagesize=", 9) == 0)
			return mounts_parse_pagesize(p + 9);
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return 0;
}

struct hpshm__mount *hpshm__linux_hugetlbfs_mount_list(int *count)
{
	char line[MOUNTS_LINE_MAX];
	const char *fstype, *super;
	char *point;
	size_t defsize = 0, size;
	struct hpshm__mount *out = NULL, *grown;
	int n = 0, cap = 0, i, cut;
	FILE *f;

	*count = 0;
	f = hpshm__linux_sysfile_open("/proc/self/mountinfo");
	if (f == NULL)
		return NULL;

	/* No fixed bound: a host of containers can see dozens of hugetlbfs mounts, and the one
	 * this process may write to can be the last of them. */
	while (hpshm__linux_getline(f, line, sizeof(line), &cut)) {
		if (cut || mounts_split(line, &point, &fstype, &super) < 0)
			continue;
		mounts_unescape(point);

		/* A later mount at the same point hides an earlier one. */
		for (i = 0; i < n; i++) {
			if (strcmp(out[i].path, point) == 0) {
				memmove(&out[i], &out[i + 1], (size_t)(n - i - 1) * sizeof(out[0]));
				n--;
				break;
			}
		}
		if (strcmp(fstype, "hugetlbfs") != 0)
			continue;
		if (strlen(point) >= sizeof(out[0].path))
			continue;   /* a cut path would name another directory */

		size = mounts_option_pagesize(super);
		if (size == 0) {
			if (defsize == 0)
				defsize = hpshm__port_default_huge_page_size();
			size = defsize;
		}
		if (size == 0)
			continue;
		if (n == cap) {
			grown = realloc(out, (size_t)(cap ? 2 * cap : 8) * sizeof(out[0]));
			if (grown == NULL)
				break;  /* out of memory: the mounts found so far */
			out = grown;
			cap = cap ? 2 * cap : 8;
		}
		strcpy(out[n].path, point);
		out[n].page_size = size;
		out[n].writable = access(point, W_OK) == 0;
		n++;
	}
	fclose(f);
	if (n == 0) {
		free(out);
		return NULL;
	}
	*count = n;
	return out;
}

int hpshm__linux_hugetlbfs_mounts(struct hpshm__mount *out, int max)
{
	struct hpshm__mount *all;
	int n;

	if (out == NULL || max <= 0)
		return 0;
	all = hpshm__linux_hugetlbfs_mount_list(&n);
	if (all != NULL)
		memcpy(out, all, (size_t)(n < max ? n : max) * sizeof(out[0]));
	free(all);
	return n;
}

int hpshm__linux_hugetlbfs_dir(const char *dir, size_t *page_size)
{
	struct statfs sfs;

	if (dir == NULL || page_size == NULL) {
		errno = EINVAL;
		return HPSHM_EINVAL;
	}
	if (hpshm__linux_sys.statfs(dir, &sfs) < 0)
		return HPSHM_EUNAVAILABLE;
	/* f_type is a signed word whose width depends on the architecture: compare 32 bits. */
	if ((uint32_t)sfs.f_type != (uint32_t)HUGETLBFS_MAGIC || sfs.f_bsize <= 0) {
		errno = ENOTSUP;  /* a directory, but not on hugetlbfs */
		return HPSHM_EUNAVAILABLE;
	}
	*page_size = (size_t)sfs.f_bsize;
	return 0;
}
