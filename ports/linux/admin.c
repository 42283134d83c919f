/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/admin.c -- ports/admin.h on Linux: resizing a huge page pool and setting the
 * mode of transparent huge pages for shared memory, for `hpshm plan`, the benchmark and the
 * tests.
 *
 * The pool is resized through the size's sysfs nr_hugepages file, which exists for every
 * size, unlike the sysctl (the default size only).  Both files are written under the sysroot,
 * like every path of the Linux port, so the tests change a fake tree, not the machine.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "linux/linux.h"

int hpshm__os_pool_resize(size_t page_size, unsigned long pages, char *why, size_t len)
{
	char file[128], path[PATH_MAX];
	FILE *f;
	int bad, n;

	hpshm__linux_pool_file(page_size, file, sizeof(file));
	n = snprintf(path, sizeof(path), "%s%s", hpshm__linux_sysroot(), file);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, len, "the path of %s is too long under the sysroot", file);
		return -1;
	}
	f = hpshm__port_fopen(path, "w");
	if (f == NULL) {
		snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	bad = fprintf(f, "%lu\n", pages) < 0;
	bad |= fclose(f) != 0;
	if (bad) {
		snprintf(why, len, "cannot write %lu to %s: %s", pages, path, strerror(errno));
		return -1;
	}
	return 0;
}

int hpshm__os_thp_shmem_set(const char *mode, char *why, size_t len)
{
	static const char knob[] = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
	char path[PATH_MAX];
	FILE *f;
	int bad, n;

	n = snprintf(path, sizeof(path), "%s%s", hpshm__linux_sysroot(), knob);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, len, "the path of %s is too long under the sysroot", knob);
		return -1;
	}
	f = hpshm__port_fopen(path, "w");
	if (f == NULL) {
		snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	bad = fputs(mode, f) < 0;
	bad |= fclose(f) != 0;
	if (bad) {
		snprintf(why, len, "cannot write %s to %s: %s", mode, path, strerror(errno));
		return -1;
	}
	return 0;
}
