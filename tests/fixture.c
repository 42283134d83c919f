/* SPDX-License-Identifier: MIT */
/*
 * tests/fixture.c -- the pool-leak fixture and the kernel readers the suites share.
 * See fixture.h.
 *
 * On Windows (the portable suites under wine, scripts/test-windows.sh) there are no pools,
 * SysV segments or shm directories: what a test can leave behind there is a named object
 * under hpshm's prefix, which lives as long as a handle to it is open, so the snapshot is
 * the list of hpshm.* objects in the session's Local\ and the Global\ namespace, read from
 * the object manager's directories as `hpshm ls` reads them.  The readers of /proc and /sys
 * find nothing there and report nothing, as on any system without them.
 */
#include "fixture.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <dirent.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/vfs.h>
#endif
#include <time.h>

#include "harness.h"
#ifdef HPSHM_TEST_CRITERION
#include <criterion/hooks.h>
#include <criterion/options.h>
#endif

#include "hpshm.h"
/*
 * The Linux port's tables and sysroot, which the tests change and the fixture resets; also
 * HUGETLBFS_MAGIC, which musl-gcc cannot take from <linux/magic.h>.  Elsewhere (the POSIX
 * port, posix-generic included) there is neither, and the readers below of /proc and /sys
 * find nothing and report nothing.
 */
#ifdef __linux__
#include "ports/linux/linux.h"
#endif
#ifdef _WIN32
#include "ports/windows/sys.h"

#include <psapi.h>
#define strncasecmp _strnicmp
#else
#include "ports/posix/sys.h"
#endif

/* A growing text buffer: the snapshot is a list of lines, compared as one string. */
struct hpt_buf {
	char  *p;
	size_t len, cap;
};

static void buf_add(struct hpt_buf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (b->len + n + 1 > cap)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			abort();
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static int read_ulong(const char *path, unsigned long *out)
{
	char buf[64];

	if (read_text(path, buf, sizeof buf) < 0)
		return -1;
	*out = strtoul(buf, NULL, 10);
	return 0;
}

#ifdef _WIN32
/* The hpshm.* objects of one namespace, as "<ns> <name> (<type>)" lines. */
struct snap_objects {
	const char *ns;       /* "Local" or "Global" */
	char      **names;    /* the lines */
	size_t      n, cap;
};

static int snap_object(void *user, const wchar_t *name, const wchar_t *type)
{
	struct snap_objects *o = user;
	char n8[512], t8[64], line[640];

	if (wcsncmp(name, L"hpshm.", 6) != 0)
		return 0;
	hpshm__win_utf8(name, n8, sizeof n8);
	hpshm__win_utf8(type, t8, sizeof t8);
	snprintf(line, sizeof line, "%s\\%s (%s)\n", o->ns, n8, t8);
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 16;
		o->names = realloc(o->names, o->cap * sizeof *o->names);
		if (!o->names)
			abort();
	}
	o->names[o->n] = _strdup(line);
	if (!o->names[o->n++])
		abort();
	return 0;
}

static void take_snapshot(struct hpt_buf *b)
{
	static const char *const spaces[] = { "Local", "Global" };
	const char *call = "";
	int same = 0;

	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	buf_add(b, "");
	for (int i = 0; i < 2 && !same; i++) {
		struct snap_objects o = { spaces[i], NULL, 0, 0 };
		char line[128];
		long st = hpshm__win_objects_list(i ? HPSHM__WIN_GLOBAL : HPSHM__WIN_LOCAL, snap_object, &o, &same,
						  &call);

		if (st != 0) {
			snprintf(line, sizeof line, "%s: %s failed, NTSTATUS %#lx\n", spaces[i], call, (unsigned long)st);
			buf_add(b, line);
		}
		if (o.n)
			qsort(o.names, o.n, sizeof *o.names, cmp_str);
		for (size_t k = 0; k < o.n; k++) {
			buf_add(b, o.names[k]);
			free(o.names[k]);
		}
		free(o.names);
	}
}
#else
/* Append "<prefix><name>\n" for every entry of dir, sorted, skipping . and .. */
static void snap_dir(struct hpt_buf *b, const char *prefix, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	char line[1024];

	if (!d) {
		snprintf(line, sizeof line, "%s<unreadable: %s>\n", prefix, strerror(errno));
		buf_add(b, line);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap ? cap * 2 : 16) * sizeof *names);

			if (!p)
				abort();
			names = p;
			cap = cap ? cap * 2 : 16;
		}
		names[n] = strdup(e->d_name);
		if (!names[n])
			abort();
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof line, "%s%s\n", prefix, names[i]);
		buf_add(b, line);
		free(names[i]);
	}
	free(names);
}

static void snap_pools(struct hpt_buf *b)
{
	static const char *const counters[] = {"nr_hugepages", "free_hugepages", "resv_hugepages",
					       "surplus_hugepages"};
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;
	char path[512], line[512];
	unsigned long v;
	size_t i;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "hugepages-", 10) != 0)
			continue;
		for (i = 0; i < sizeof counters / sizeof counters[0]; i++) {
			snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/%s/%s", e->d_name, counters[i]);
			if (read_ulong(path, &v) < 0)
				continue;
			snprintf(line, sizeof line, "pool %s %s=%lu\n", e->d_name, counters[i], v);
			buf_add(b, line);
		}
	}
	closedir(d);
}

static void snap_sysv(struct hpt_buf *b)
{
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	char line[1024], out[128];
	long key, id;

	if (!f)
		return;
	if (!fgets(line, sizeof line, f)) { /* header */
		fclose(f);
		return;
	}
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%ld %ld", &key, &id) == 2) {
			snprintf(out, sizeof out, "sysv shmid=%ld key=%ld\n", id, key);
			buf_add(b, out);
		}
	}
	fclose(f);
}

/* Mount points of every hugetlbfs in /proc/self/mountinfo, with octal escapes decoded. */
static void snap_hugetlbfs(struct hpt_buf *b)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - ");
		char mnt[512], fstype[64], prefix[600];
		char *p, *q;
		int field = 0;

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "hugetlbfs") != 0)
			continue;
		/* field 5 (1-based) is the mount point */
		p = line;
		while (field < 4 && (p = strchr(p, ' ')) != NULL) {
			p++;
			field++;
		}
		if (!p)
			continue;
		q = mnt;
		while (*p && *p != ' ' && q < mnt + sizeof mnt - 1) {
			if (p[0] == '\\' && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
			    isdigit((unsigned char)p[3])) {
				*q++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
				p += 4;
			} else {
				*q++ = *p++;
			}
		}
		*q = '\0';
		snprintf(prefix, sizeof prefix, "hugetlbfs %s/", mnt);
		snap_dir(b, prefix, mnt);
	}
	free(line);
	fclose(f);
}

static void take_snapshot(struct hpt_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	buf_add(b, "");
	snap_pools(b);
	snap_sysv(b);
	snap_hugetlbfs(b);
	snap_dir(b, "/dev/shm/", "/dev/shm");
}
#endif

static struct hpt_buf snapshot_before;

void hpt_fixture_init(void)
{
	take_snapshot(&snapshot_before);
}

void hpt_fixture_fini(void)
{
	struct hpt_buf after = {0};

	/* Whatever a test injected, the library goes back to the real machine. */
#ifdef _WIN32
	hpshm__win_sys_reset();
#else
	hpshm__sys_reset();
#endif
#ifdef __linux__
	hpshm__linux_sys_reset();
	hpshm__set_sysroot(NULL);
#endif

	/*
	 * A child the test reaped has released its memory, but a process that outlives the test
	 * briefly (a sanitizer's helper, a grandchild on its way out) may still hold a segment
	 * for a moment.  Look again for up to two seconds before calling it a leak: what is
	 * still there then was left behind.
	 */
	take_snapshot(&after);
	for (int tries = 0; tries < 20 && strcmp(after.p, snapshot_before.p) != 0; tries++) {
#ifdef _WIN32
		Sleep(100);
#else
		struct timespec pause = { 0, 100 * 1000 * 1000 };

		nanosleep(&pause, NULL);
#endif
		free(after.p);
		memset(&after, 0, sizeof(after));
		take_snapshot(&after);
	}
	if (strcmp(after.p, snapshot_before.p) != 0) {
		cr_log_error("pool-leak fixture: the machine changed during the test\n"
			     "--- before\n%s--- after\n%s", snapshot_before.p, after.p);
		fflush(NULL);
		abort(); /* a failed cr_assert in .fini does not fail the test in Criterion 2.4.1 */
	}
	free(after.p);
	free(snapshot_before.p);
	snapshot_before.p = NULL;
	snapshot_before.len = snapshot_before.cap = 0;
}

#ifdef HPSHM_TEST_CRITERION
/*
 * Every suite program runs its tests one at a time (see fixture.h): the runner calls this
 * before it starts its first worker, and reads criterion_options.jobs only after.  Without it
 * Criterion 2.4.1 runs as many tests at once as there are processors.  The in-tree harness
 * always runs them one at a time.
 */
ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	if (criterion_options.jobs > 1)
		fprintf(stderr, "[----] hpshm tests run one at a time, not %zu: the pool-leak fixture compares "
			"machine-wide state before and after each test\n", criterion_options.jobs);
	criterion_options.jobs = 1;
}
#endif

/*
 * Parse "2MiB", "2MB", "2048k", "2M" as bytes (units of 1024); 0 if not a size, or if it is
 * more than size_t holds (a 1 TiB page on a 32-bit build), which no page of this process is.
 */
static size_t token_size(const char *s, size_t n)
{
	char buf[64], *end;
	unsigned long long v, mult = 1;

	if (n == 0 || n >= sizeof buf || !isdigit((unsigned char)s[0]))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtoull(buf, &end, 10);
	switch (tolower((unsigned char)*end)) {
	case 'k': mult = 1ULL << 10; end++; break;
	case 'm': mult = 1ULL << 20; end++; break;
	case 'g': mult = 1ULL << 30; end++; break;
	case 't': mult = 1ULL << 40; end++; break;
	default: break;
	}
	if (tolower((unsigned char)*end) == 'i')
		end++;
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end != '\0' || v > SIZE_MAX / mult)
		return 0;
	return (size_t)(v * mult);
}

/*
 * One item of HPSHM_TEST_REQUIRE, p[0..n): its text without the page count in *name_len, and
 * the count after '*' in *count (-1 when there is none).
 */
static void require_item(const char *p, size_t n, size_t *name_len, long *count)
{
	const char *star = memchr(p, '*', n);
	char digits[32], *end;
	size_t dn;

	*name_len = n;
	*count = -1;
	if (!star)
		return;
	*name_len = (size_t)(star - p);
	dn = n - *name_len - 1;
	if (!token_size(p, *name_len))
		cr_assert_fail("HPSHM_TEST_REQUIRE item \"%.*s\": only a page size takes a page count, as in 1GiB*2",
			       (int)n, p);
	if (dn == 0 || dn >= sizeof digits || !isdigit((unsigned char)star[1]))
		cr_assert_fail("HPSHM_TEST_REQUIRE item \"%.*s\": the page count after '*' must be a number, "
			       "as in 1GiB*2", (int)n, p);
	memcpy(digits, star + 1, dn);
	digits[dn] = '\0';
	errno = 0;
	*count = strtol(digits, &end, 10);
	if (*end != '\0' || errno)
		cr_assert_fail("HPSHM_TEST_REQUIRE item \"%.*s\": the page count after '*' must be a number, "
			       "as in 1GiB*2", (int)n, p);
}

/*
 * Walk the list: is tok named (or "all")?  When tok is a page size that the list gives a page
 * count, *count is the smallest such count; it is left alone otherwise.
 */
static int required_one(const char *list, const char *tok, long *count)
{
	const char *p = list;
	size_t tn = strlen(tok), tsize = token_size(tok, tn);
	int named = 0;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p), name_len;
		long c;

		while (n && isspace((unsigned char)*p)) {
			p++;
			n--;
		}
		while (n && isspace((unsigned char)p[n - 1]))
			n--;
		require_item(p, n, &name_len, &c);
		if ((name_len == 3 && !strncasecmp(p, "all", 3)) || (name_len == tn && !strncasecmp(p, tok, tn)))
			named = 1;
		if (tsize && token_size(p, name_len) == tsize) {
			named = 1;
			if (c >= 0 && (*count < 0 || c < *count))
				*count = c;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return named;
}

int hpt_required_pages(const char *a, const char *b, unsigned long pages)
{
	const char *list = getenv("HPSHM_TEST_REQUIRE");
	long count = -1;
	int named;

	if (!list || !*list)
		return 0;
	named = a ? required_one(list, a, &count) : 0;
	named |= b ? required_one(list, b, &count) : 0;
	if (count >= 0 && pages > (unsigned long)count) {
		cr_log_info("not required: HPSHM_TEST_REQUIRE=%s guarantees %ld page%s of this size, the test needs %lu",
			    list, count, count == 1 ? "" : "s", pages);
		return 0;
	}
	return named;
}

int hpt_required(const char *a, const char *b)
{
	return hpt_required_pages(a, b, 1);
}

unsigned long hpt_pages(size_t size, size_t page_size)
{
	return page_size ? (unsigned long)(size / page_size + (size % page_size != 0)) : 0;
}

const char *hpt_test_hugetlbfs(size_t page_size)
{
	const char *mnt = getenv("HPSHM_TEST_HUGETLBFS");
#ifdef __linux__
	struct statfs sfs;
#endif

	if (!mnt || !*mnt)
		return NULL;
#ifdef __linux__
	if (statfs(mnt, &sfs) == 0 && (uint32_t)sfs.f_type == (uint32_t)HUGETLBFS_MAGIC &&
	    (size_t)sfs.f_bsize != page_size)
		return NULL;
#else
	(void)page_size;
#endif
	return mnt;
}

const char *hpt_emulator(void)
{
	const char *e = getenv("HPSHM_TEST_EMULATOR");

	return e && e[0] ? e : NULL;
}

void hpt_skip_emulated_refusal(int rc, const hpshm_error *err)
{
	const char *emu = hpt_emulator();

	if (!emu || rc >= 0 || !err)
		return;
	if (strcmp(err->call, "verify") == 0)
		cr_skip_test("under %s huge pages cannot be verified (the smaps it passes through is the host's): "
			     "hpshm refused them cleanly: %s", emu, err->message);
	if (err->sys_errno == EINVAL || rc == HPSHM_EEXIST || rc == HPSHM_EVALUE)
		cr_skip_test("under %s the mapping or attach at that address was refused (%s), as the kernel would "
			     "not: %s", emu, hpshm_errname(rc), err->message);
	/* qemu-user places guest mappings in a host range of its own, and finds none for a large
	 * span on a large grid (2 GiB on the 1 GiB grid) where the kernel would. */
	if (err->sys_errno == ENOMEM)
		cr_skip_test("under %s the mapping was refused for want of address space (ENOMEM), where the "
			     "kernel would have given it: %s", emu, err->message);
}

#ifndef _WIN32
pid_t hpt_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* A test that dies (a failed assert, a timeout) takes its children with it; if it
		 * died before the signal was set, this child is already an orphan and goes too. */
#ifdef __linux__
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
		if (getppid() != parent)
			_exit(127);
	}
	return pid;
}

void hpt_crashed_creator(const hpshm_config *cfg, size_t size, const char *what)
{
	int fds[2], status;
	pid_t pid;
	char c;

	cr_assert_eq(pipe(fds), 0);
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_segment *seg;
		hpshm_error err;

		close(fds[0]);
		if (hpshm_segment_create(&seg, size, cfg, &err) != 0 || write(fds[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &c, 1), 1, "the creator could not create its %s", what);
	close(fds[0]);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
}
#endif

int hpt_pool_read(size_t page_size, struct hpt_pool *out)
{
	char dir[128], path[256];

	memset(out, 0, sizeof *out);
	snprintf(dir, sizeof dir, "/sys/kernel/mm/hugepages/hugepages-%zukB", page_size / 1024);
	out->page_size = page_size;
	snprintf(path, sizeof path, "%s/nr_hugepages", dir);
	if (read_ulong(path, &out->total) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/free_hugepages", dir);
	(void)read_ulong(path, &out->free);
	snprintf(path, sizeof path, "%s/resv_hugepages", dir);
	(void)read_ulong(path, &out->resv);
	snprintf(path, sizeof path, "%s/surplus_hugepages", dir);
	(void)read_ulong(path, &out->surplus);
	snprintf(path, sizeof path, "%s/nr_overcommit_hugepages", dir);
	(void)read_ulong(path, &out->overcommit);
	return 0;
}

unsigned long hpt_pool_available(const struct hpt_pool *p)
{
	unsigned long avail = p->free > p->resv ? p->free - p->resv : 0;

	if (p->overcommit > p->surplus)
		avail += p->overcommit - p->surplus;
	return avail;
}

#ifdef _WIN32
/*
 * Windows has one large page size and no /proc: the readers ask the system.  A page's size
 * comes from QueryWorkingSetEx() (its LargePage bit), the way ports/windows/memory.c verifies,
 * but called here directly so the test does not take the library's word.
 */
size_t hpt_default_huge_page_size(void)
{
	return GetLargePageMinimum();
}

size_t hpt_smaps_page_size(const void *addr, int *hugetlb)
{
	PSAPI_WORKING_SET_EX_INFORMATION ws;
	MEMORY_BASIC_INFORMATION mbi;
	SYSTEM_INFO si;

	if (hugetlb)
		*hugetlb = 0;
	if (VirtualQuery(addr, &mbi, sizeof mbi) != sizeof mbi || mbi.State != MEM_COMMIT)
		return 0;
	memset(&ws, 0, sizeof ws);
	ws.VirtualAddress = (void *)(uintptr_t)addr;
	if (!QueryWorkingSetEx(GetCurrentProcess(), &ws, sizeof ws) || !ws.VirtualAttributes.Valid) {
		GetSystemInfo(&si);
		return si.dwPageSize; /* not in the working set: a page of the default size, untouched */
	}
	if (ws.VirtualAttributes.LargePage) {
		if (hugetlb)
			*hugetlb = 1;
		return GetLargePageMinimum();
	}
	GetSystemInfo(&si);
	return si.dwPageSize;
}

int hpt_is_mapped(const void *addr, size_t len)
{
	MEMORY_BASIC_INFORMATION mbi;
	uintptr_t at = (uintptr_t)addr, end = at + len;

	while (at < end) {
		if (VirtualQuery((const void *)at, &mbi, sizeof mbi) != sizeof mbi)
			return -1;
		if (mbi.State != MEM_FREE)
			return 1;
		at = (uintptr_t)mbi.BaseAddress + mbi.RegionSize;
	}
	return 0;
}

int hpt_fd_count(void)
{
	DWORD n = 0;

	/* Windows counts handles, not descriptors: what a test compares before and after. */
	return GetProcessHandleCount(GetCurrentProcess(), &n) ? (int)n : -1;
}

int hpt_maps_count(void)
{
	return -1; /* Windows lists no mappings by the object behind them */
}
#else
size_t hpt_default_huge_page_size(void)
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

size_t hpt_smaps_page_size(const void *addr, int *hugetlb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char *line = NULL;
	size_t cap = 0, result = 0;
	uintptr_t a = (uintptr_t)addr;
	int inside = 0, done = 0;

	if (hugetlb)
		*hugetlb = 0;
	if (!f)
		return 0;
	while (!done && getline(&line, &cap, f) > 0) {
		unsigned long lo, hi, kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (inside)
				done = 1;
			inside = a >= lo && a < hi;
			continue;
		}
		if (!inside)
			continue;
		if (sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			result = (size_t)kb * 1024;
		else if (!strncmp(line, "VmFlags:", 8) && hugetlb)
			*hugetlb = strstr(line, " ht") != NULL;
	}
	free(line);
	fclose(f);
	return result;
}

int hpt_is_mapped(const void *addr, size_t len)
{
	/*
	 * mincore() page by page: it fails with ENOMEM for a page nothing maps.  Nothing is
	 * allocated here on purpose.  Reading /proc/self/maps through stdio would allocate its
	 * buffer, and a C library whose malloc takes fresh pages from mmap() for it (musl) can be
	 * handed the very range that was just unmapped: the check would then find its own buffer
	 * there and report a leak that is not one.
	 */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(page - 1), z = (uintptr_t)addr + len;
	unsigned char vec[1];

	for (; a < z; a += page) {
		/* vec is char * on FreeBSD and macOS, unsigned char * elsewhere: pass it untyped. */
		if (mincore((void *)a, page, (void *)vec) == 0)
			return 1;
		if (errno != ENOMEM)
			return -1;
	}
	return 0;
}

int hpt_fd_count(void)
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
	return n - 1; /* the descriptor opendir itself holds */
}

int hpt_maps_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int n = 0;

	if (!f)
		return -1;
	/*
	 * Only mappings of an object count: every segment hpshm makes has a name in maps
	 * (/memfd:..., /SYSV..., a hugetlbfs path, /dev/shm/..., /anon_hugepage, /dev/zero for
	 * shared anonymous memory).  Private anonymous mappings have none, and an allocator (a
	 * sanitizer's above all) makes and drops those at any time.
	 */
	while (fgets(line, sizeof line, f)) {
		char *path = NULL;
		int field = 0;

		if (!strchr(line, '\n'))
			continue;
		for (char *p = line; *p && field < 5; p++)
			if (*p == ' ' && p[1] != ' ')
				if (++field == 5)
					path = p + 1;
		while (path && *path == ' ')
			path++;
		if (path && *path && *path != '\n' && *path != '[')
			n++;
	}
	fclose(f);
	return n;
}

#endif

const char *hpt_size_text(size_t size, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;

	while (u < 4 && size >= 1024 && size % 1024 == 0) {
		size /= 1024;
		u++;
	}
	snprintf(buf, len, "%zu%s", size, units[u]);
	return buf;
}

int hpt_contains(const char *haystack, const char *needle)
{
	size_t n;

	if (!haystack || !needle)
		return 0;
	n = strlen(needle);
	for (; *haystack; haystack++)
		if (strncasecmp(haystack, needle, n) == 0)
			return 1;
	return n == 0;
}

void hpt_clear_config_env(void)
{
	const char *key;
	unsigned i;

	for (i = 0; (key = hpshm_config_key_name(i, NULL, NULL)) != NULL; i++) {
		char var[96];
		size_t j;

		snprintf(var, sizeof var, "HPSHM_%s", key);
		for (j = 0; var[j]; j++)
			var[j] = (char)toupper((unsigned char)var[j]);
#ifdef _WIN32
		(void)_putenv_s(var, "");
#else
		unsetenv(var);
#endif
	}
}

void hpt_config_parsef(hpshm_config *cfg, const char *fmt, ...)
{
	char kv[320];
	hpshm_error err;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(kv, sizeof kv, fmt, ap);
	va_end(ap);
	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

hpshm_error hpt_create_fails(const hpshm_config *cfg, size_t size, hpshm_report *r)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	memset(r, 0, sizeof *r);
	rc = hpshm_segment_create_ex(&seg, size, cfg, r, &err);
	cr_assert_lt(rc, 0, "the create succeeded");
	cr_assert_null(seg);
	cr_assert_eq(err.code, rc, "the error says %s, the call returned %s", hpshm_errname(err.code), hpshm_errname(rc));
	cr_assert_geq(r->nattempts, 1u);
	return err;
}
