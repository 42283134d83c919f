/* SPDX-License-Identifier: MIT */
/*
 * tests/preload_child.c -- the "unmodified server" the interposer tests run under `hpshm exec`.
 *
 * It knows nothing of hpshm: it links only the C library and makes its shared memory the
 * way servers do (mmap(MAP_SHARED|MAP_ANONYMOUS), shmget), forks workers that check each
 * other's writes, and reads what it got back from the kernel itself (/proc/self/smaps).
 * test_preload.c decides from its output and exit code whether the interposer kept every
 * semantic the program relies on.
 *
 * Modes (SIZE in bytes, or with a k/M/G suffix):
 *
 *   share SIZE WORKERS   mmap a shared region; it must read as zeros; WORKERS forked workers
 *                        each write their share of the pages, meet at a barrier, check every
 *                        page (their own and the others'), unmap the region in themselves
 *                        (it must be gone there) and exit; then the parent checks every page
 *                        too, unmaps, and checks the range is unmapped and no descriptor is
 *                        left open.
 *   small SIZE           mmap a shared region, say what backs it, unmap.
 *   touch PATH           create PATH (which must not exist) and exit 0: proof that it ran.
 *   shm SIZE WORKERS     the same as share with shmget(IPC_PRIVATE) and shmat; every worker
 *                        also checks shm_nattch (1 + WORKERS while all are attached); the
 *                        parent detaches and removes the id.
 *   shmkey SIZE          a keyed segment: IPC_EXCL on a used key gives EEXIST, the key finds
 *                        the same id, IPC_RMID removes it (the key is then unknown).
 *   fail SIZE            mmap and shmget of SIZE must both fail with ENOMEM.
 *   edges SIZE           partial munmap and a MAP_FIXED mapping onto the region fail with
 *                        EINVAL and leave it intact; mremap may shrink and regrow it in place
 *                        and fails with ENOMEM beyond its mapping; mmap64 works as mmap; the
 *                        whole region unmaps.
 *   threads SIZE N       N threads each map, fill, fork a child that checks and unmaps its
 *                        copy, and unmap, eight times over, all at once.
 *   hold SIZE SECONDS    a shared region and a SysV segment (marked for removal once
 *                        attached), written; prints "ready", sleeps, exits without unmapping.
 *   noreserve SIZE       shmget(IPC_PRIVATE, SIZE, IPC_CREAT|SHM_NORESERVE|0600), shmat (the
 *                        id marked for removal at once), then a write to every page: a
 *                        segment the kernel cannot back kills it with SIGBUS here.
 *   eperm SIZE           as root: gives up what lets it have SysV huge pages (the groups, so
 *                        none is vm.hugetlb_shm_group; CAP_IPC_LOCK; RLIMIT_MEMLOCK, the
 *                        kernel's last resort), then shmget(SIZE) must fail with EPERM.
 *   reexec HOW SIZE      execs itself ("mapped SIZE") with an environment emptied the way HOW
 *                        says: execve, execvpe, execle, fexecve, posix_spawn, posix_spawnp
 *                        with an empty environment of their own; execv, execvp, execl,
 *                        execlp after clearenv(); optout: execve with only "LD_PRELOAD=".
 *                        The posix_spawn ones wait for the child and exit with its status.
 *   mapped SIZE          prints "pid N", maps a shared region, describes it, unmaps it.
 *   daemon SIZE          maps a shared region and forks, as a daemon does: the parent exit()s
 *                        (holding it), the child waits until its parent is gone, prints
 *                        "holder N" and exit()s without unmapping.
 *
 * Every region it maps is described on stdout as one line:
 *   region page_size=N hugetlb=0|1 backing=NAME
 * where NAME is the mapping's path in smaps ("/memfd:hpshm:..." when hpshm made it,
 * "/dev/zero" for the C library's shared anonymous memory, "SYSV..." for SysV).
 * Exit 0 when every check held; otherwise the failed check is on stderr and the exit code
 * is non-zero.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <grp.h>
#include <spawn.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SHM_NORESERVE
#define SHM_NORESERVE 010000
#endif

/* capget/capset's structs, from linux/capability.h, which musl-gcc's headers do not have. */
struct cap_header {
	uint32_t version; /* _LINUX_CAPABILITY_VERSION_3 */
	int      pid;     /* 0: this process */
};
struct cap_data {
	uint32_t effective;   /* capabilities in force */
	uint32_t permitted;   /* capabilities that may be put in force */
	uint32_t inheritable; /* capabilities kept across exec */
};
#define CAP_VERSION_3 0x20080522
#define CAP_IPC_LOCK_BIT 14

#define PAGE 4096u
#define BARRIER_SECONDS 30

static const char *mode = "?";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "preload_child %s [pid %ld]: ", mode, (long)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': v <<= 10; break;
	case 'm': case 'M': v <<= 20; break;
	case 'g': case 'G': v <<= 30; break;
	default: break;
	}
	return (size_t)v;
}

/* The VMA of /proc/self/smaps holding addr: page size, hugetlb flag and path name. */
struct vma {
	size_t page_size; /* KernelPageSize, bytes; 0 if no VMA holds addr */
	int    hugetlb;   /* VmFlags has "ht" */
	char   name[256]; /* the path column, or "anon" */
};

static void vma_of(const void *addr, struct vma *v)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[1024];
	uintptr_t a = (uintptr_t)addr;
	int in = 0;

	memset(v, 0, sizeof(*v));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int off = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) == 2 && off > 0) {
			if (in)
				break;
			in = a >= lo && a < hi;
			if (in) {
				char *nl = strchr(line + off, '\n');

				if (nl)
					*nl = '\0';
				snprintf(v->name, sizeof(v->name), "%s", line[off] ? line + off : "anon");
			}
			continue;
		}
		if (!in)
			continue;
		if (strncmp(line, "KernelPageSize:", 15) == 0)
			v->page_size = (size_t)strtoul(line + 15, NULL, 10) * 1024;
		else if (strncmp(line, "VmFlags:", 8) == 0)
			v->hugetlb = strstr(line, " ht") != NULL;
	}
	fclose(f);
}

static void describe(const void *addr)
{
	struct vma v;

	vma_of(addr, &v);
	printf("region page_size=%zu hugetlb=%d backing=%s\n", v.page_size, v.hugetlb, v.name);
	fflush(stdout);
}

/* Is any byte of [addr, addr+len) mapped?  1, 0, or -1 if mincore() fails otherwise. */
static int is_mapped(const void *addr, size_t len)
{
	/* mincore() page by page, allocating nothing: stdio's buffer for /proc/self/maps could
	 * be placed by musl's malloc in the range just unmapped (tests/fixture.c says more). */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(page - 1), z = (uintptr_t)addr + len;
	unsigned char vec[1];

	for (; a < z; a += page) {
		if (mincore((void *)a, page, vec) == 0)
			return 1;
		if (errno != ENOMEM)
			return -1;
	}
	return 0;
}

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/* What worker w (1-based) writes in page p. */
static uint64_t tag(unsigned w, size_t p)
{
	return ((uint64_t)w << 40) | (uint64_t)p;
}

/* The first page of a region is its control block: two barrier counters. */
struct control {
	atomic_uint arrived; /* workers done writing */
	atomic_uint checked; /* workers done checking shm_nattch */
};

static int wait_for(atomic_uint *counter, unsigned n)
{
	time_t end = time(NULL) + BARRIER_SECONDS;

	while (atomic_load(counter) < n) {
		if (time(NULL) > end)
			return -1;
		sched_yield();
	}
	return 0;
}

/* Check every data page holds the tag of the worker that owns it. */
static int check_tags(const char *base, size_t size, unsigned workers)
{
	for (size_t p = 1; p < size / PAGE; p++) {
		uint64_t got;

		memcpy(&got, base + p * PAGE, sizeof(got));
		if (got != tag((unsigned)(p % workers) + 1, p))
			return fail("page %zu holds %#" PRIx64 ", expected %#" PRIx64 " from worker %u", p, got,
				    tag((unsigned)(p % workers) + 1, p), (unsigned)(p % workers) + 1);
	}
	return 0;
}

/* A worker's life: write its pages, meet the others, check everything.  Runs in the child. */
static int worker(char *base, size_t size, unsigned w, unsigned workers, int shmid)
{
	struct control *c = (struct control *)(void *)base;

	for (size_t p = 1; p < size / PAGE; p++)
		if (p % workers == w - 1) {
			uint64_t t = tag(w, p);

			memcpy(base + p * PAGE, &t, sizeof(t));
		}
	atomic_fetch_add(&c->arrived, 1);
	if (wait_for(&c->arrived, workers) < 0)
		return fail("worker %u: the others did not arrive in %d s (is the memory shared?)", w, BARRIER_SECONDS);
	if (check_tags(base, size, workers))
		return 1;
	if (shmid >= 0) {
		struct shmid_ds ds;

		if (shmctl(shmid, IPC_STAT, &ds) < 0)
			return fail("worker %u: IPC_STAT: %s", w, strerror(errno));
		if (ds.shm_nattch != workers + 1)
			return fail("worker %u: shm_nattch is %lu, expected %u (parent + workers)", w,
				    (unsigned long)ds.shm_nattch, workers + 1);
		atomic_fetch_add(&c->checked, 1);
		if (wait_for(&c->checked, workers) < 0)
			return fail("worker %u: the others did not check shm_nattch in time", w);
		if (shmdt(base) < 0)
			return fail("worker %u: shmdt: %s", w, strerror(errno));
	} else {
		/* The child's copy of the region is its own to unmap; the parent's must survive. */
		if (munmap(base, size) < 0)
			return fail("worker %u: munmap of its copy: %s", w, strerror(errno));
		if (is_mapped(base, size))
			return fail("worker %u: the region is still mapped after munmap", w);
	}
	return 0;
}

static int run_workers(char *base, size_t size, unsigned workers, int shmid)
{
	pid_t pids[64];
	int rc = 0;

	if (workers == 0 || workers > 64)
		return fail("1 to 64 workers, not %u", workers);
	fflush(NULL);
	for (unsigned w = 1; w <= workers; w++) {
		pids[w - 1] = fork();
		if (pids[w - 1] < 0)
			return fail("fork: %s", strerror(errno));
		if (pids[w - 1] == 0)
			_exit(worker(base, size, w, workers, shmid));
	}
	for (unsigned w = 0; w < workers; w++) {
		int st;

		if (waitpid(pids[w], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = fail("worker %u failed (status %#x)", w + 1, st);
	}
	if (rc == 0)
		rc = check_tags(base, size, workers); /* the parent sees what its children wrote */
	return rc;
}

static int zeros(const char *base, size_t size)
{
	for (size_t off = 0; off < size; off += PAGE) {
		uint64_t v;

		memcpy(&v, base + off, sizeof(v));
		if (v != 0)
			return fail("byte %zu of the new region is not zero", off);
	}
	if (base[size - 1] != 0)
		return fail("the last byte of the new region is not zero");
	return 0;
}

static void *map_shared(size_t size)
{
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

static int mode_share(size_t size, unsigned workers)
{
	int fds = fd_count();
	char *p = map_shared(size);

	if (p == MAP_FAILED)
		return fail("mmap(%zu): %s", size, strerror(errno));
	describe(p);
	if (zeros(p, size) || run_workers(p, size, workers, -1))
		return 1;
	if (munmap(p, size) < 0)
		return fail("munmap(%p, %zu): %s", (void *)p, size, strerror(errno));
	if (is_mapped(p, size))
		return fail("the region is still mapped after munmap");
	if (fd_count() != fds)
		return fail("%d descriptors open after munmap, %d before mmap", fd_count(), fds);
	return 0;
}

static int mode_small(size_t size)
{
	char *p = map_shared(size);

	if (p == MAP_FAILED)
		return fail("mmap(%zu): %s", size, strerror(errno));
	describe(p);
	p[0] = 1;
	if (munmap(p, size) < 0)
		return fail("munmap: %s", strerror(errno));
	return 0;
}

static int mode_shm(size_t size, unsigned workers)
{
	struct shmid_ds ds;
	char *p;
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600), rc;

	if (id < 0)
		return fail("shmget(%zu): %s", size, strerror(errno));
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		rc = fail("shmat: %s", strerror(errno));
		shmctl(id, IPC_RMID, NULL);
		return rc;
	}
	describe(p);
	rc = zeros(p, size);
	if (!rc && (shmctl(id, IPC_STAT, &ds) < 0 || ds.shm_nattch != 1 || ds.shm_segsz != size))
		rc = fail("IPC_STAT after shmat: nattch %lu (want 1), segsz %zu (want %zu)", (unsigned long)ds.shm_nattch,
			  (size_t)ds.shm_segsz, size);
	if (!rc)
		rc = run_workers(p, size, workers, id);
	if (shmdt(p) < 0)
		rc = fail("shmdt: %s", strerror(errno));
	if (!rc && (shmctl(id, IPC_STAT, &ds) < 0 || ds.shm_nattch != 0))
		rc = fail("shm_nattch %lu after every process detached", (unsigned long)ds.shm_nattch);
	if (shmctl(id, IPC_RMID, NULL) < 0)
		rc = fail("IPC_RMID: %s", strerror(errno));
	return rc;
}

static int mode_shmkey(size_t size)
{
	key_t key = (key_t)(0x50000000 | (getpid() & 0xffffff)); /* 'P' + pid: this test's own */
	int id, again, rc = 0;
	char *p;

	id = shmget(key, size, IPC_CREAT | IPC_EXCL | 0600);
	if (id < 0)
		return fail("shmget(key %#x, IPC_CREAT|IPC_EXCL): %s", (unsigned)key, strerror(errno));
	again = shmget(key, size, IPC_CREAT | IPC_EXCL | 0600);
	if (again >= 0 || errno != EEXIST)
		rc = fail("a second IPC_EXCL create of the key gave %d (%s), expected EEXIST", again, strerror(errno));
	if (!rc && (again = shmget(key, 0, 0)) != id)
		rc = fail("shmget(key, 0, 0) gave %d, expected id %d", again, id);
	if (!rc && (again = shmget(key, size, IPC_CREAT | 0600)) != id)
		rc = fail("shmget(key, IPC_CREAT) of an existing key gave %d, expected id %d", again, id);
	if (!rc) {
		p = shmat(id, NULL, 0);
		if (p == (void *)-1) {
			rc = fail("shmat: %s", strerror(errno));
		} else {
			describe(p);
			rc = zeros(p, size);
			shmdt(p);
		}
	}
	if (shmctl(id, IPC_RMID, NULL) < 0)
		return fail("IPC_RMID: %s", strerror(errno));
	if (!rc && (shmget(key, 0, 0) >= 0 || errno != ENOENT))
		rc = fail("the key is still known after IPC_RMID");
	return rc;
}

static int mode_fail(size_t size)
{
	void *p = map_shared(size);
	int id;

	if (p != MAP_FAILED) {
		describe(p);
		munmap(p, size);
		return fail("mmap(%zu) succeeded; huge_pages=on without the pages must fail", size);
	}
	if (errno != ENOMEM)
		return fail("mmap failed with %s, expected ENOMEM", strerror(errno));
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id >= 0) {
		shmctl(id, IPC_RMID, NULL);
		return fail("shmget(%zu) succeeded; huge_pages=on without the pages must fail", size);
	}
	if (errno != ENOMEM)
		return fail("shmget failed with %s, expected ENOMEM", strerror(errno));
	return 0;
}

static int mode_edges(size_t size)
{
	char *p = map_shared(size), *q;
	void *r;

	if (p == MAP_FAILED)
		return fail("mmap(%zu): %s", size, strerror(errno));
	describe(p);
	p[0] = 'a';
	p[size - 1] = 'z';
	if (munmap(p, PAGE) == 0 || errno != EINVAL)
		return fail("munmap of the first page: %s, expected EINVAL", strerror(errno));
	if (munmap(p + size / 2 / PAGE * PAGE, PAGE) == 0 || errno != EINVAL)
		return fail("munmap of a middle page: %s, expected EINVAL", strerror(errno));
	r = mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r != MAP_FAILED || errno != EINVAL)
		return fail("MAP_FIXED onto the region: %p (%s), expected EINVAL", r, strerror(errno));
	r = mremap(p, size, size * 4, MREMAP_MAYMOVE);
	if (r != MAP_FAILED || errno != ENOMEM)
		return fail("mremap growing the region 4x: %p (%s), expected ENOMEM", r, strerror(errno));
	r = mremap(p, size, size - PAGE, 0);
	if (r != p)
		return fail("mremap shrinking the region in place: %p (%s), expected %p", r, strerror(errno), (void *)p);
	r = mremap(p, size - PAGE, size, 0);
	if (r != p)
		return fail("mremap regrowing the region in place: %p (%s), expected %p", r, strerror(errno), (void *)p);
	if (p[0] != 'a' || p[size - 1] != 'z')
		return fail("the region lost its contents");
	if (munmap(p, size) < 0)
		return fail("munmap of the whole region: %s", strerror(errno));
	if (is_mapped(p, size))
		return fail("the region is still mapped after munmap");
	q = mmap64(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return fail("mmap64(%zu): %s", size, strerror(errno));
	describe(q);
	if (zeros(q, size) || munmap(q, size) < 0)
		return fail("mmap64 region: not zero, or munmap failed (%s)", strerror(errno));
	return 0;
}

struct thread_arg {
	size_t size;   /* region size */
	unsigned id;   /* thread number */
	int    failed; /* set by the thread */
};

static void *thread_main(void *v)
{
	struct thread_arg *a = v;

	for (int round = 0; round < 8 && !a->failed; round++) {
		char *p = map_shared(a->size);
		pid_t pid;
		int st;

		if (p == MAP_FAILED) {
			a->failed = fail("thread %u: mmap: %s", a->id, strerror(errno));
			break;
		}
		if (p[0] != 0 || p[a->size - 1] != 0)
			a->failed = fail("thread %u: a new region is not zero", a->id);
		memset(p, (int)(a->id + 1), PAGE);
		p[a->size - 1] = (char)(a->id + 1);
		pid = fork();
		if (pid == 0) {
			int bad = p[0] != (char)(a->id + 1) || p[a->size - 1] != (char)(a->id + 1);

			p[1] = 'c'; /* the parent must see it */
			_exit(bad || munmap(p, a->size) != 0 || is_mapped(p, a->size) ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			a->failed = fail("thread %u: the forked child saw other contents or could not unmap", a->id);
		else if (p[1] != 'c')
			a->failed = fail("thread %u: the child's write is not in the parent's region", a->id);
		if (munmap(p, a->size) < 0)
			a->failed = fail("thread %u: munmap: %s", a->id, strerror(errno));
	}
	return NULL;
}

static int mode_threads(size_t size, unsigned n)
{
	pthread_t t[16];
	struct thread_arg args[16];
	int rc = 0;

	if (n == 0 || n > 16)
		return fail("1 to 16 threads, not %u", n);
	for (unsigned i = 0; i < n; i++) {
		args[i].size = size;
		args[i].id = i;
		args[i].failed = 0;
		if (pthread_create(&t[i], NULL, thread_main, &args[i]) != 0)
			return fail("pthread_create failed");
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		rc |= args[i].failed;
	}
	return rc;
}

static int mode_hold(size_t size, unsigned seconds)
{
	char *p = map_shared(size), *q;
	int id;

	if (p == MAP_FAILED)
		return fail("mmap(%zu): %s", size, strerror(errno));
	describe(p);
	memset(p, 1, size);
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id < 0)
		return fail("shmget(%zu): %s", size, strerror(errno));
	q = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL); /* gone with the last detach, or with this process */
	if (q == (void *)-1)
		return fail("shmat: %s", strerror(errno));
	describe(q);
	memset(q, 2, size);
	printf("ready\n");
	fflush(stdout);
	sleep(seconds);
	return 0;
}

static int mode_noreserve(size_t size)
{
	char *p;
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | SHM_NORESERVE | 0600);

	if (id < 0)
		return fail("shmget(%zu, SHM_NORESERVE): %s", size, strerror(errno));
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL); /* gone with this process, however it ends */
	if (p == (void *)-1)
		return fail("shmat: %s", strerror(errno));
	describe(p);
	memset(p, 1, size); /* every page faulted in: SIGBUS here if nothing backs them */
	if (p[0] != 1 || p[size - 1] != 1)
		return fail("the segment does not hold what was written");
	shmdt(p);
	return 0;
}

/* Give up the right to SysV huge pages: no group may be vm.hugetlb_shm_group, no CAP_IPC_LOCK. */
static int drop_hugetlb_right(void)
{
	struct cap_header h = { CAP_VERSION_3, 0 };
	struct cap_data d[2];
	struct rlimit none = { 0, 0 };
	FILE *f = fopen("/proc/sys/vm/hugetlb_shm_group", "r");
	long group = 0;
	gid_t gid;

	if (f) {
		if (fscanf(f, "%ld", &group) != 1)
			group = 0;
		fclose(f);
	}
	gid = group == 65534 ? 65533 : 65534;
	if (setrlimit(RLIMIT_MEMLOCK, &none) < 0 || setgroups(0, NULL) < 0 || setgid(gid) < 0)
		return fail("setrlimit, setgroups or setgid: %s", strerror(errno));
	if (syscall(SYS_capget, &h, d) < 0)
		return fail("capget: %s", strerror(errno));
	d[CAP_IPC_LOCK_BIT / 32].effective &= ~(1u << (CAP_IPC_LOCK_BIT % 32));
	d[CAP_IPC_LOCK_BIT / 32].permitted &= ~(1u << (CAP_IPC_LOCK_BIT % 32));
	if (syscall(SYS_capset, &h, d) < 0)
		return fail("capset: %s", strerror(errno));
	return 0;
}

static int mode_eperm(size_t size)
{
	int id;

	if (geteuid() == 0 && drop_hugetlb_right())
		return 1;
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id >= 0) {
		shmctl(id, IPC_RMID, NULL);
		return fail("shmget(%zu) succeeded; huge_pages=on without the right to huge pages must fail", size);
	}
	if (errno != EPERM)
		return fail("shmget failed with %s, expected EPERM", strerror(errno));
	return 0;
}

static int mode_mapped(size_t size)
{
	char *p;

	printf("pid %ld\n", (long)getpid());
	p = map_shared(size);
	if (p == MAP_FAILED)
		return fail("mmap(%zu): %s", size, strerror(errno));
	describe(p);
	p[0] = 1;
	if (munmap(p, size) < 0)
		return fail("munmap: %s", strerror(errno));
	return 0;
}

/* Exec this program as "mapped SIZE" the way how says, with its environment emptied. */
static int mode_reexec(const char *self, const char *how, const char *size)
{
	char mapped[] = "mapped", *argv[] = { (char *)(uintptr_t)self, mapped, (char *)(uintptr_t)size, NULL };
	char optout[] = "LD_PRELOAD=", *none[] = { NULL }, *chosen[] = { optout, NULL };
	pid_t pid = -1;
	int rc = -1, st = 0;

	fflush(NULL);
	if (!strcmp(how, "execve"))
		execve(self, argv, none);
	else if (!strcmp(how, "execvpe"))
		execvpe(self, argv, none);
	else if (!strcmp(how, "execle"))
		execle(self, self, mapped, size, (char *)NULL, none);
	else if (!strcmp(how, "fexecve")) {
		int fd = open(self, O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			fexecve(fd, argv, none);
	} else if (!strcmp(how, "optout"))
		execve(self, argv, chosen);
	else if (!strcmp(how, "posix_spawn"))
		rc = posix_spawn(&pid, self, NULL, NULL, argv, none);
	else if (!strcmp(how, "posix_spawnp"))
		rc = posix_spawnp(&pid, self, NULL, NULL, argv, none);
	else if (clearenv() != 0)
		return fail("clearenv failed");
	else if (!strcmp(how, "execv"))
		execv(self, argv);
	else if (!strcmp(how, "execvp"))
		execvp(self, argv);
	else if (!strcmp(how, "execl"))
		execl(self, self, mapped, size, (char *)NULL);
	else if (!strcmp(how, "execlp"))
		execlp(self, self, mapped, size, (char *)NULL);
	else
		return fail("unknown way to exec: %s", how);
	if (pid < 0)
		return fail("%s of %s: %s", how, self, strerror(rc > 0 ? rc : errno));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return fail("the %s child did not exit (status %#x)", how, st);
	return WEXITSTATUS(st);
}

static int mode_daemon(size_t size)
{
	char *p = map_shared(size);
	pid_t parent = getpid(), pid;

	if (p == MAP_FAILED)
		return fail("mmap(%zu): %s", size, strerror(errno));
	describe(p);
	memset(p, 3, PAGE);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return fail("fork: %s", strerror(errno));
	if (pid > 0)
		exit(0); /* as a daemon's first process does: exit(), so its destructors run */
	/* 50 s bounds a parent that never exits, not a slow one (emulated, beside another lane). */
	for (int i = 0; i < 5000 && getppid() == parent; i++)
		usleep(10000);
	if (getppid() == parent)
		return fail("the parent did not exit in 50 s");
	if (p[0] != 3)
		return fail("the region lost its contents");
	printf("holder %ld\n", (long)getpid());
	fflush(stdout);
	exit(0); /* still holding the region */
}

int main(int argc, char **argv)
{
	size_t size;

	if (argc < 3) {
		fprintf(stderr, "usage: preload_child share|small|shm|shmkey|fail|edges|threads|hold|noreserve|eperm|mapped|"
			"daemon SIZE [N] | reexec HOW SIZE | touch PATH\n");
		return 2;
	}
	mode = argv[1];
	/* touch PATH: create PATH and exit 0, for tests that only ask whether exec started it. */
	if (!strcmp(mode, "touch") && argc == 3) {
		FILE *f = fopen(argv[2], "wx");

		return f && fclose(f) == 0 ? 0 : fail("touch: cannot create the file");
	}
	if (!strcmp(mode, "reexec") && argc == 4)
		return mode_reexec(argv[0], argv[2], argv[3]);
	size = parse_size(argv[2]);
	if (size < 2 * PAGE)
		return fail("SIZE must be at least two pages");
	if (!strcmp(mode, "share") && argc == 4)
		return mode_share(size, (unsigned)atoi(argv[3]));
	if (!strcmp(mode, "small"))
		return mode_small(size);
	if (!strcmp(mode, "shm") && argc == 4)
		return mode_shm(size, (unsigned)atoi(argv[3]));
	if (!strcmp(mode, "shmkey"))
		return mode_shmkey(size);
	if (!strcmp(mode, "fail"))
		return mode_fail(size);
	if (!strcmp(mode, "edges"))
		return mode_edges(size);
	if (!strcmp(mode, "threads") && argc == 4)
		return mode_threads(size, (unsigned)atoi(argv[3]));
	if (!strcmp(mode, "hold") && argc == 4)
		return mode_hold(size, (unsigned)atoi(argv[3]));
	if (!strcmp(mode, "noreserve"))
		return mode_noreserve(size);
	if (!strcmp(mode, "eperm"))
		return mode_eperm(size);
	if (!strcmp(mode, "mapped"))
		return mode_mapped(size);
	if (!strcmp(mode, "daemon"))
		return mode_daemon(size);
	return fail("unknown mode or wrong arguments");
}
