/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/sysvipc.c -- what the kernel says of SysV segments and their creators only in
 * /proc: the list of segments (/proc/sysvipc/shm) and when a process started, as a time of
 * day (its start in ticks since boot, plus the boot time btime of /proc/stat).
 *
 * The SysV provider (backends/sysv_hugetlb.c) asks here rather than reading /proc itself, so
 * no OS fact sits above the ports (doc/architecture.md).  Every path is read under
 * hpshm__linux_sysroot() and opened through the system call table, so a test can hand the provider
 * a made-up list, or make it unreadable.
 *
 * /proc/sysvipc/shm is readable by anyone, where IPC_STAT needs read permission on the
 * segment: the list is how a user learns whose a segment is that it may not look at.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux.h"

/* A line of the list as the kernel writes it (ipc/shm.c sysvipc_shm_proc_show()): "key
 * shmid perms size cpid lpid nattch uid ..."; the heading, or anything else, is not one. */
static int sysvipc_parse(const char *line, struct hpshm__linux_shm *e)
{
	memset(e, 0, sizeof(*e));
	return sscanf(line, "%lld %d %lo %llu %ld %ld %lu %lu", &e->key, &e->id, &e->perms, &e->size, &e->cpid,
		      &e->lpid, &e->nattch, &e->uid) == 8;
}

int hpshm__linux_shm_each(hpshm__linux_shm_fn fn, void *user)
{
	struct hpshm__linux_shm e;
	char line[512];
	int cut;
	FILE *in = hpshm__linux_sysfile_open("/proc/sysvipc/shm");

	if (!in)
		return errno == ENOENT ? 0 : HPSHM_EIO; /* no SysV IPC in this kernel */
	while (hpshm__linux_getline(in, line, sizeof(line), &cut))
		if (!cut && sysvipc_parse(line, &e) && fn(user, &e) != 0)
			break;
	fclose(in);
	return 0;
}

/* hpshm__linux_shm_find()'s walk: stop at the entry of the id asked for. */
struct sysvipc_find {
	int                     id;    /* the shmid looked for */
	struct hpshm__linux_shm *out;  /* where its entry goes */
	int                     found; /* 1 once it was listed */
};

static int sysvipc_match(void *user, const struct hpshm__linux_shm *e)
{
	struct sysvipc_find *w = user;

	if (e->id != w->id)
		return 0;
	*w->out = *e;
	w->found = 1;
	return 1;
}

int hpshm__linux_shm_find(int id, struct hpshm__linux_shm *out)
{
	struct sysvipc_find w = { .id = id, .out = out, .found = 0 };

	if (hpshm__linux_shm_each(sysvipc_match, &w) < 0 || !w.found)
		return -1;
	return 0;
}

time_t hpshm__linux_boot_time(void)
{
	char line[256];
	unsigned long long btime = 0;
	FILE *f = hpshm__linux_sysfile_open("/proc/stat");

	if (!f)
		return 0;
	while (hpshm__linux_getline(f, line, sizeof(line), NULL))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return (time_t)btime;
}

time_t hpshm__linux_process_started(long long pid)
{
	uint64_t ticks = hpshm__port_process_start(pid);
	long hz = sysconf(_SC_CLK_TCK);
	time_t btime;

	if (ticks == 0 || hz <= 0)
		return 0;
	btime = hpshm__linux_boot_time();
	return btime == 0 ? 0 : (time_t)((uint64_t)btime + ticks / (uint64_t)hz);
}
