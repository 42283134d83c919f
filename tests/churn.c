/* SPDX-License-Identifier: MIT */
/*
 * tests/churn.c -- a busy neighbour for the suite: takes and returns huge pages in a loop.
 *
 *   hpt_churn PAGES [SECONDS]      (0 seconds, the default: until killed)
 *
 * scripts/busy-machine.sh runs it beside a whole suite pass, so CI shows that the tests judge
 * only what they made themselves (tests/fixture.h).  Each round it maps PAGES default-size huge
 * pages (shared and anonymous, as a server's buffers are), touches every page, and unmaps
 * them; makes and removes a one-page SysV SHM_HUGETLB segment and a /dev/shm file of its own;
 * then sleeps 50 ms (a busy neighbour, not a CPU hog: the suite still has to finish).  It counts rounds and failures (a pool momentarily empty is not
 * an error: the suite's tests take pages too), prints them when it ends, and never dies of
 * SIGBUS: its mappings reserve their pages up front (no MAP_NORESERVE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The kernel's default huge page size, from /proc/meminfo; 0 without one. */
static size_t huge_page_size(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return (size_t)kb * 1024;
}

int main(int argc, char **argv)
{
	unsigned long pages = argc > 1 ? strtoul(argv[1], NULL, 10) : 0, rounds = 0, failed = 0;
	double seconds = argc > 2 ? strtod(argv[2], NULL) : 0;
	size_t ps = huge_page_size(), len;
	struct timespec t0, now, nap = { 0, 50 * 1000 * 1000 };
	char name[64];
	struct sigaction sa;

	if (argc < 2 || argc > 3 || pages == 0 || ps == 0) {
		fprintf(stderr, "usage: %s PAGES [SECONDS]  (needs huge pages: this kernel offers %zu)\n", argv[0], ps);
		return 2;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	len = pages * ps;
	snprintf(name, sizeof name, "/hpt-churn.%ld", (long)getpid());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		int id, fd;

		if (p == MAP_FAILED) {
			failed++;
		} else {
			for (size_t off = 0; off < len; off += ps)
				p[off] = (char)rounds;
			munmap(p, len);
		}
		id = shmget(IPC_PRIVATE, ps, IPC_CREAT | IPC_EXCL | SHM_HUGETLB | 0600);
		if (id < 0)
			failed++;
		else
			shmctl(id, IPC_RMID, NULL);
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0) {
			close(fd);
			shm_unlink(name);
		}
		rounds++;
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds > 0 && (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
	printf("churn: %lu rounds of %lu huge pages, %lu refused (the pool was momentarily short)\n", rounds, pages,
	       failed);
	return 0;
}
