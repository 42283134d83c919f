/* SPDX-License-Identifier: MIT */
/*
 * preload/interpose.c -- libhpshm_preload.so: huge pages for a server nobody can change.
 *
 * Loaded with LD_PRELOAD (`hpshm exec` sets it up), this library defines mmap, mmap64,
 * munmap, mremap, shmget, shmat and shmctl ahead of the C library.  What it takes:
 *
 *   mmap(MAP_SHARED | MAP_ANONYMOUS, PROT_READ | PROT_WRITE) of at least the threshold
 *   (HPSHM_PRELOAD_MIN_SIZE, default 32 MiB), which is how PostgreSQL (9.3 on) makes its
 *   main segment, nginx its shared zones and APR (Apache's scoreboard) its anonymous shm.
 *   Each becomes an hpshm segment chosen by the usual configuration (HPSHM_<KEY>
 *   variables: provider, huge_pages, huge_page_size, populate, ...), so the caller gets
 *   the same walk, verification, populate and fallback record as a program written for
 *   hpshm.  The semantics the caller relies on hold because every provider maps
 *   MAP_SHARED: a fork()ed child shares the memory; it starts zeroed; munmap() of the whole
 *   region ends it.  Not taken, and passed on unchanged: private or file-backed mappings,
 *   MAP_FIXED and MAP_FIXED_NOREPLACE (the caller owns that range), MAP_HUGETLB (the caller
 *   already chose), MAP_NORESERVE (a sparse reservation must not become a full hugetlb
 *   reservation), other protections, and anything below the threshold.
 *
 *   munmap() and mremap() look up the regions taken.  Unmapping a whole region (its start,
 *   and at least the length the caller asked for) destroys the segment, slack included;
 *   unmapping part of one is refused with EINVAL, as hugetlb itself refuses unaligned
 *   cuts; a range that also covers other mappings has those unmapped too.  mremap() of a
 *   whole region may resize it within the mapping it already has (the slack of the last
 *   huge page) and fails with ENOMEM beyond that: moving it would break the sharing with
 *   children that already hold it.  MAP_FIXED or MREMAP_FIXED onto a region fails with
 *   EINVAL rather than silently replace part of a huge page mapping.
 *
 *   shmget(IPC_CREAT) of at least the threshold is a different case.  SysV callers rely
 *   on the key, IPC_PRIVATE, IPC_EXCL, shm_nattch (PostgreSQL's interlock reads it), the
 *   id being usable by other processes, and IPC_RMID; only a real SysV segment keeps all
 *   of that.  So the request goes to the kernel with SHM_HUGETLB (and the size bits of the
 *   configured huge page size) added, and every SysV semantic stays the kernel's.  hpshm's
 *   policy still decides: with huge_pages=try an ENOMEM or EPERM from the huge request is
 *   retried as asked, without SHM_HUGETLB; with on the call fails with the kernel's errno
 *   (ENOMEM: the pool; EPERM: not in vm.hugetlb_shm_group), and with ENOMEM when the
 *   kernel offers no huge pages at all.  SHM_NORESERVE requests are passed on unchanged,
 *   as MAP_NORESERVE ones are: SHM_HUGETLB with SHM_NORESERVE reserves no huge page, so
 *   an empty pool would not refuse the segment but kill the writer with SIGBUS at its
 *   first fault.  The page size is verified from smaps at the first shmat() in this
 *   process, which is when the report line is written.  shmdt() needs nothing;
 *   shmctl(IPC_RMID) drops the record and reports the removal.
 *   provider=auto,-sysv_hugetlb leaves shmget() alone.
 *
 *   execve() and the rest of the exec family, fexecve() and posix_spawn() are wrapped by
 *   inherit.c: a program that execs another with an environment of its own making (nginx's
 *   binary upgrade keeps only the variables its env directive names) would otherwise start
 *   it without the interposer, silently.
 *
 * The report (HPSHM_PRELOAD_REPORT) has a line for every segment made, and one for its end
 * in the process that holds it: munmap() of the whole region, shmctl(IPC_RMID), or the
 * process's exit with the region still mapped.  The holder is the process that made the
 * region until it exits while a child it forked maps it still (a daemon's first process,
 * which forks the server and exits): its exit line hands the region over and names the
 * children, and the child it forked then holds it.  A process that inherited a region from a
 * holder still alive (a worker) writes nothing for it.
 *
 * The policy's failures: with huge_pages=on, a request that gets no huge pages fails with
 * ENOMEM, the error the server already handles, and the reason goes to stderr (a
 * PostgreSQL log then shows hpshm's reason right above its own FATAL).  With try, a
 * fallback is said on stderr too, once per region: PostgreSQL's silent fallback is what
 * its users complain about.
 *
 * Safety inside someone else's process:
 *   - No locks.  The tables are fixed arrays of slots whose state moves FREE -> BUSY ->
 *     LIVE by compare-and-swap, so a fork() or a signal at any point finds no lock held.
 *     A child inherits the table with the memory: its copies of the handles are its own,
 *     and destroying one there only ends the child's mapping and descriptor (segments are
 *     unnamed: nothing is removed that the parent still uses).  The only allocation is
 *     in hpshm itself, on the paths that create or destroy a region; mmap, munmap and
 *     shmget are not async-signal-safe functions to begin with, and the pass-through
 *     paths allocate nothing.
 *   - No recursion.  hpshm calls mmap, munmap and shmget itself, and those calls come
 *     back here (the library's references bind to the first definition, ours).  A
 *     thread-local "inside" count (preload_inside), raised around every call into hpshm,
 *     sends them straight on.  It uses the initial-exec TLS model, which never allocates.
 *   - The next definitions are found with dlsym(RTLD_NEXT) once, at load.  Until then, and
 *     for mmap/munmap/mremap always as a fallback, the system call is made directly:
 *     dlsym may allocate, and malloc may call mmap.
 *   - A malformed configuration turns interposition off for the process with one line on
 *     stderr naming the variable; every call then goes to the C library unchanged.
 *   - setuid, setgid and file-capability programs (AT_SECURE) are left alone: their
 *     caller's environment must not steer them.  (The dynamic loader also ignores an
 *     LD_PRELOAD path with a slash for them.)
 *
 * The configuration keys name, reattach and base_address make no sense here (each region
 * is an anonymous segment of its own) and are forced to their defaults.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ports/linux/flags.h"

#define PRELOAD_MAX_REGIONS 256 /* intercepted mmap regions alive at once, per process */
#define PRELOAD_MAX_SHM     64  /* intercepted SysV ids remembered for their report */

enum slot_state { SLOT_FREE = 0, SLOT_BUSY = 1, SLOT_LIVE = 2 };

/* One region mmap() gave out from an hpshm segment. */
struct region {
	atomic_int     state;  /* enum slot_state: only the thread that moved it to BUSY writes */
	uintptr_t      start;  /* the segment's first byte: the address the caller got */
	size_t         length; /* the caller's length, rounded up to base pages */
	size_t         asked;  /* the caller's length as asked, for the report */
	size_t         mapped; /* the whole mapping, a multiple of its page size */
	hpshm_segment *seg;    /* the handle; a forked child holds its own copy */
	long           maker;  /* the process that made it */
	atomic_long    holder; /* the process that holds it for the server (region_held_here()) */
};

/* One SysV segment shmget() made, until its report line is written or it is removed. */
struct shm_rec {
	atomic_int state;                /* enum slot_state */
	atomic_int reported;             /* 1 once its line is written */
	int        id;                   /* the shmid */
	long       key;                  /* its key, for the report */
	size_t     size;                 /* bytes asked for */
	size_t     page_size;            /* huge page size asked for; 0 if base pages */
	int        huge_errno;           /* errno of the SHM_HUGETLB attempt that failed, or 0 */
	long       maker;                /* the process whose shmget() made it */
	char       why[HPSHM_TEXT_MAX];  /* why huge pages were not used; empty if they were */
};

struct preload_config preload_cfg;

static struct region regions[PRELOAD_MAX_REGIONS];
static atomic_int nregions; /* slots LIVE or BUSY: 0 lets munmap() skip the scan */
static struct shm_rec shms[PRELOAD_MAX_SHM];
static atomic_int nshms;

/*
 * What set-up has to say (a malformed configuration, a key ignored) waits for the first
 * request that could have been taken: a server is started through shells and control
 * programs that load this library too, and only the process that maps the memory should
 * say it, once.
 */
static char pending[1024];
static atomic_int pending_said;

/*
 * The process this one was forked from, set in the child by the pthread_atfork() handlers;
 * 0 in a process that was not forked since its exec.  A region's holder that is this
 * process's parent and has exited has left the region to this process.
 */
static atomic_long forking_pid; /* written by fork_prepare() in the process that forks */
static atomic_long fork_parent; /* copied from it by fork_child() in the new process */

static atomic_int init_state; /* 0 not started, 1 running, 2 done */
static atomic_long init_pid;  /* the process running the set-up */
static atomic_int enabled;    /* set-up succeeded: requests may be taken */

/* Raised around every call into hpshm: what hpshm calls comes back here and goes on. */
_Thread_local int preload_inside __attribute__((tls_model("initial-exec")));

/* ---- the next definitions ---- */

enum next_sym { NEXT_MMAP, NEXT_MUNMAP, NEXT_MREMAP, NEXT_SHMGET, NEXT_SHMAT, NEXT_SHMCTL, NEXT_COUNT };

static const char *const next_names[NEXT_COUNT] = { "mmap", "munmap", "mremap", "shmget", "shmat", "shmctl" };
static _Atomic(void *) next_syms[NEXT_COUNT];

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*shmget_fn)(key_t, size_t, int);
typedef void *(*shmat_fn)(int, const void *, int);
typedef int (*shmctl_fn)(int, int, struct shmid_ds *);

/* The next definition, or NULL.  resolve: look it up now if not yet known. */
static void *next_sym(enum next_sym which, int resolve)
{
	void *p = atomic_load_explicit(&next_syms[which], memory_order_acquire);

	if (!p && resolve) {
		preload_inside++; /* dlsym may allocate, and the allocator may map */
		p = dlsym(RTLD_NEXT, next_names[which]);
		preload_inside--;
		atomic_store_explicit(&next_syms[which], p, memory_order_release);
	}
	return p;
}

static void *next_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *sym = next_sym(NEXT_MMAP, 0);
	mmap_fn f;

	if (sym) {
		memcpy(&f, &sym, sizeof(f));
		return f(addr, len, prot, flags, fd, off);
	}
#if defined(SYS_mmap2)
	/* 32-bit kernels take the offset in 4 KiB units. */
	if (off & 4095) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	return (void *)(intptr_t)syscall(SYS_mmap2, addr, len, prot, flags, fd, (long)(off >> 12));
#else
	return (void *)(intptr_t)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
#endif
}

static int next_munmap(void *addr, size_t len)
{
	void *sym = next_sym(NEXT_MUNMAP, 0);
	munmap_fn f;

	if (sym) {
		memcpy(&f, &sym, sizeof(f));
		return f(addr, len);
	}
	return (int)syscall(SYS_munmap, addr, len);
}

static void *next_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr)
{
	void *sym = next_sym(NEXT_MREMAP, 0);
	mremap_fn f;

	if (sym) {
		memcpy(&f, &sym, sizeof(f));
		return f(old, old_size, new_size, flags, new_addr);
	}
	return (void *)(intptr_t)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
}

static int next_shmget(key_t key, size_t size, int flags)
{
	void *sym = next_sym(NEXT_SHMGET, 1);
	shmget_fn f;

	if (!sym) {
		errno = ENOSYS;
		return -1;
	}
	memcpy(&f, &sym, sizeof(f));
	return f(key, size, flags);
}

static void *next_shmat(int id, const void *addr, int flags)
{
	void *sym = next_sym(NEXT_SHMAT, 1);
	shmat_fn f;

	if (!sym) {
		errno = ENOSYS;
		return (void *)-1;
	}
	memcpy(&f, &sym, sizeof(f));
	return f(id, addr, flags);
}

static int next_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	void *sym = next_sym(NEXT_SHMCTL, 1);
	shmctl_fn f;

	if (!sym) {
		errno = ENOSYS;
		return -1;
	}
	memcpy(&f, &sym, sizeof(f));
	return f(id, cmd, buf);
}

/* ---- set-up ---- */

static size_t round_base(size_t len)
{
	size_t b = preload_cfg.base_page;

	return len > SIZE_MAX - (b - 1) ? 0 : (len + b - 1) / b * b;
}

/* Does the provider text ("auto,-a,-b") leave name out? */
static int provider_leaves_out(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; (p = strstr(p, name)) != NULL; p += n)
		if (p >= text + 1 && p[-1] == '-' && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* The page size SHM_HUGETLB requests ask for, from huge_page_size; 0 with sysv_why set. */
static size_t setup_sysv_page_size(void)
{
	size_t sizes[16], want = 0;
	char value[64];
	int n = hpshm_huge_page_sizes(sizes, 16);

	if (n > 16)
		n = 16;
	if (n <= 0) {
		snprintf(preload_cfg.sysv_why, sizeof(preload_cfg.sysv_why),
			 "the kernel offers no huge pages (no /sys/kernel/mm/hugepages)");
		return 0;
	}
	if (hpshm_config_get(preload_cfg.cfg, "huge_page_size", value, sizeof(value)) < 0 ||
	    strcmp(value, "default") == 0 || value[0] == '\0') {
		want = preload_default_huge_page_size();
		return want ? want : sizes[0];
	}
	if (strcmp(value, "largest") == 0)
		return sizes[n - 1];
	if (hpshm_size_parse(value, &want) == 0)
		for (int i = 0; i < n; i++)
			if (sizes[i] == want)
				return want;
	snprintf(preload_cfg.sysv_why, sizeof(preload_cfg.sysv_why),
		 "huge_page_size=%s: the kernel offers no such huge pages", value);
	return 0;
}

/* Keep a line for say_pending(); lines past the room left are dropped. */
static void pend(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

static void pend(const char *fmt, ...)
{
	size_t used = strlen(pending);
	va_list ap;
	int n;

	if (used + 2 >= sizeof(pending))
		return;
	if (used)
		pending[used++] = '\n';
	va_start(ap, fmt);
	n = vsnprintf(pending + used, sizeof(pending) - used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(pending) - used)
		pending[used - (used ? 1 : 0)] = '\0';
}

/* Say what set-up kept, once per process, line by line. */
static void say_pending(void)
{
	char copy[sizeof(pending)];
	char *line, *next;
	int expected = 0;

	if (!pending[0] || !atomic_compare_exchange_strong(&pending_said, &expected, 1))
		return;
	memcpy(copy, pending, sizeof(copy));
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		preload_say("%s", line);
	}
}

/* Force a key every region must have; note it if the environment asked otherwise. */
static void setup_force(const char *key, const char *value)
{
	char was[256];
	hpshm_error err;

	if (hpshm_config_get(preload_cfg.cfg, key, was, sizeof(was)) >= 0 && strcmp(was, value) != 0)
		pend("%s=%s ignored: every intercepted region is an anonymous segment of its own", key, was);
	memset(&err, 0, sizeof(err));
	(void)hpshm_config_set(preload_cfg.cfg, key, value, &err);
}

/* The pthread_atfork() handlers: the child learns which process it was forked from. */
static void fork_prepare(void)
{
	atomic_store_explicit(&forking_pid, (long)getpid(), memory_order_relaxed);
}

static void fork_child(void)
{
	atomic_store_explicit(&fork_parent, atomic_load_explicit(&forking_pid, memory_order_relaxed),
			      memory_order_relaxed);
}

static void preload_setup(void)
{
	hpshm_config *cfg = NULL;
	hpshm_error err;
	const char *v;
	char value[256];

	/* setuid, setgid or file capabilities: the caller's environment must not steer it. */
	if (getauxval(AT_SECURE))
		return;
	for (int i = NEXT_MMAP; i < NEXT_COUNT; i++)
		(void)next_sym((enum next_sym)i, 1);
	/* Before anything that can turn interposition off: a program this one execs should meet
	 * the same variables, and say the same about them. */
	preload_inherit_setup();
	(void)pthread_atfork(fork_prepare, NULL, fork_child);
	preload_cfg.base_page = (size_t)sysconf(_SC_PAGESIZE);
	preload_cfg.min_size = PRELOAD_DEFAULT_MIN_SIZE;
	v = getenv("HPSHM_PRELOAD_MIN_SIZE");
	if (v && (v[0] < '0' || v[0] > '9' || hpshm_size_parse(v, &preload_cfg.min_size) < 0)) {
		pend("HPSHM_PRELOAD_MIN_SIZE=\"%s\" is not a size (write e.g. 32MiB); interposition is off, every "
		     "call goes to the C library unchanged", v);
		preload_cfg.min_size = PRELOAD_DEFAULT_MIN_SIZE;
		return;
	}
	if (preload_cfg.min_size == 0)
		preload_cfg.min_size = 1; /* 0 means every size, as 1 does */
	v = getenv("HPSHM_PRELOAD_REPORT");
	if (v && v[0]) {
		if (strlen(v) >= sizeof(preload_cfg.report)) {
			pend("HPSHM_PRELOAD_REPORT is longer than %zu bytes; interposition is off, every call goes to "
			     "the C library unchanged", sizeof(preload_cfg.report) - 1);
			return;
		}
		memcpy(preload_cfg.report, v, strlen(v) + 1);
	}
	if (hpshm_config_new(&cfg) < 0) {
		pend("out of memory for the configuration; interposition is off");
		return;
	}
	memset(&err, 0, sizeof(err));
	if (hpshm_config_load_env(cfg, &err) < 0) {
		pend("%s%s%s; interposition is off, every call goes to the C library unchanged",
		     err.message[0] ? err.message : hpshm_strerror(err.code), err.hint[0] ? "; " : "", err.hint);
		hpshm_config_free(cfg);
		preload_cfg.report[0] = '\0';
		return;
	}
	preload_cfg.cfg = cfg;
	setup_force("name", "");
	setup_force("reattach", "off");
	setup_force("base_address", "auto");
	preload_cfg.policy = HPSHM_HUGE_TRY;
	if (hpshm_config_get(cfg, "huge_pages", value, sizeof(value)) >= 0)
		preload_cfg.policy = strcmp(value, "on") == 0 ? HPSHM_HUGE_ON
				     : strcmp(value, "off") == 0 ? HPSHM_HUGE_OFF : HPSHM_HUGE_TRY;
	preload_cfg.sysv = !(hpshm_config_get(cfg, "provider", value, sizeof(value)) >= 0 &&
			     provider_leaves_out(value, "sysv_hugetlb"));
	preload_cfg.sysv_page_size = setup_sysv_page_size();
	atomic_store_explicit(&enabled, 1, memory_order_release);
}

/*
 * Set up once, on the first request that could be taken or at load, whichever comes first.
 * Returns whether requests may be taken.  A thread that arrives while another sets up waits
 * (set-up is short); a fork()ed child of a process caught mid-set-up never waits for a
 * thread it does not have, and takes nothing.
 */
static int preload_ready(void)
{
	int s = atomic_load_explicit(&init_state, memory_order_acquire);

	if (s != 2) {
		int expected = 0;

		if (atomic_compare_exchange_strong(&init_state, &expected, 1)) {
			atomic_store(&init_pid, (long)getpid());
			preload_inside++;
			preload_setup();
			preload_inside--;
			atomic_store_explicit(&init_state, 2, memory_order_release);
		} else {
			while (atomic_load_explicit(&init_state, memory_order_acquire) != 2) {
				if (atomic_load(&init_pid) != (long)getpid())
					return 0;
				sched_yield();
			}
		}
	}
	return atomic_load_explicit(&enabled, memory_order_acquire);
}

/* May a request of len bytes be taken?  The first one at or above the threshold says what set-up kept. */
static int ready_for(size_t len)
{
	int ok = preload_ready();

	if (len < preload_cfg.min_size || preload_cfg.min_size == 0)
		return 0;
	say_pending();
	return ok;
}

__attribute__((constructor)) static void preload_load(void)
{
	(void)preload_ready();
}

static void region_report_end(struct region *r, const char *call);

/*
 * At exit (exit(), or a return from main), the regions this process holds end with it, or
 * live on in the children that map them: the report says which.  A process killed by a
 * signal, or ended by _exit(), runs no destructor and its regions get no end line.
 */
__attribute__((destructor)) static void preload_unload(void)
{
	if (!preload_cfg.report[0] || atomic_load_explicit(&nregions, memory_order_acquire) == 0)
		return;
	preload_inside++;
	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		struct region *r = &regions[i];
		int expected = SLOT_LIVE;

		if (!atomic_compare_exchange_strong(&r->state, &expected, SLOT_BUSY))
			continue;
		region_report_end(r, "exit");
		atomic_store_explicit(&r->state, SLOT_LIVE, memory_order_release);
	}
	preload_inside--;
}

/* ---- the region table ---- */

static int region_insert(hpshm_segment *seg, size_t asked, size_t length, size_t mapped)
{
	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		int expected = SLOT_FREE;

		if (!atomic_compare_exchange_strong(&regions[i].state, &expected, SLOT_BUSY))
			continue;
		atomic_fetch_add(&nregions, 1);
		regions[i].start = (uintptr_t)hpshm_segment_address(seg);
		regions[i].length = length;
		regions[i].asked = asked;
		regions[i].mapped = mapped;
		regions[i].seg = seg;
		regions[i].maker = (long)getpid();
		atomic_store(&regions[i].holder, regions[i].maker);
		atomic_store_explicit(&regions[i].state, SLOT_LIVE, memory_order_release);
		return 0;
	}
	return -1;
}

static void region_free(struct region *r)
{
	r->seg = NULL;
	atomic_store_explicit(&r->state, SLOT_FREE, memory_order_release);
	atomic_fetch_sub(&nregions, 1);
}

/*
 * Does this process hold r for the server?  It does when it made r, or when the holder was
 * the process it was forked from and that process has exited (the kernel gave this one a new
 * parent): a daemon's first process maps the server's memory, forks the server and exits.
 * A child of a holder that still runs (a worker) does not.
 */
static int region_held_here(struct region *r)
{
	long me = (long)getpid(), holder = atomic_load(&r->holder), parent = atomic_load(&fork_parent);

	if (holder == me)
		return 1;
	if (holder != parent || parent == 0 || (long)getppid() == parent)
		return 0;
	atomic_store(&r->holder, me);
	return 1;
}

/* Record r's end in the report, when this process holds it. */
static void region_report_end(struct region *r, const char *call)
{
	struct preload_end e;
	long children[32];

	if (!preload_cfg.report[0] || !region_held_here(r))
		return;
	memset(&e, 0, sizeof(e));
	e.call = call;
	e.event = "destroy";
	e.addr = (const void *)r->start;
	e.size = r->asked;
	e.mapped = r->mapped;
	e.provider = hpshm_segment_report(r->seg)->provider;
	e.created_by = r->maker;
	if (strcmp(call, "exit") == 0) {
		/* Children that map it keep it after this process; they are named, and hold it. */
		e.nheld = preload_children_mapping(e.addr, children, (int)(sizeof(children) / sizeof(children[0])));
		e.held_by = children;
		if (e.nheld > 0)
			e.event = "handover";
	}
	preload_report_end(&e);
}

/* The live region whose mapping overlaps [lo, hi), or NULL. */
static struct region *region_overlapping(uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		struct region *r = &regions[i];

		if (atomic_load_explicit(&r->state, memory_order_acquire) != SLOT_LIVE)
			continue;
		if (hi > r->start && lo < r->start + r->mapped)
			return r;
	}
	return NULL;
}

/* Would a fixed mapping at [addr, addr+len) land on a region?  Says so if it would. */
static int fixed_clash(const char *call, void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr;
	struct region *r;

	if (atomic_load_explicit(&nregions, memory_order_acquire) == 0 || len == 0 || lo > UINTPTR_MAX - len)
		return 0;
	r = region_overlapping(lo, lo + len);
	if (!r)
		return 0;
	preload_say("%s at %p (%zu bytes) would replace part of the hpshm segment at %p (%zu bytes mapped): "
		    "refused with EINVAL; unmap the region first", call, addr, len, (void *)r->start, r->mapped);
	return 1;
}

/* ---- mmap ---- */

static int mmap_wanted(size_t len, int prot, int flags)
{
	return (flags & MAP_TYPE) == MAP_SHARED && (flags & MAP_ANONYMOUS) &&
	       !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_HUGETLB | MAP_NORESERVE)) &&
	       prot == (PROT_READ | PROT_WRITE) && len > 0;
}

/*
 * Why a walk found no provider, each reason said once: "memfd_hugetlb, mmap_hugetlb,
 * sysv_hugetlb, hugetlbfs: only 0 huge pages of 2MiB available (need 138)...".  The core's
 * message repeats a pool's reason for every provider that draws on the pool, which makes a
 * server's log line of a kilobyte; providers the configuration left out (huge_pages=on leaves
 * out plain) are no reason at all.  Empty when the report has no reason to give.
 */
static int attempt_failed(const hpshm_attempt *a)
{
	return a->result != 0 && a->reason[0] && !(a->page_size == 0 && strcmp(a->call, "config") == 0);
}

static void why_refused(const hpshm_report *r, char *buf, size_t len)
{
	unsigned n = r->nattempts < HPSHM_MAX_ATTEMPTS ? r->nattempts : HPSHM_MAX_ATTEMPTS;
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && used < len; i++) {
		const hpshm_attempt *a = &r->attempts[i];
		int said = 0;

		if (!attempt_failed(a))
			continue;
		for (unsigned j = 0; j < i && !said; j++)
			said = attempt_failed(&r->attempts[j]) && strcmp(r->attempts[j].reason, a->reason) == 0;
		if (said)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "; " : "", a->provider);
		for (unsigned j = i + 1; j < n && used < len; j++)
			if (attempt_failed(&r->attempts[j]) && strcmp(r->attempts[j].reason, a->reason) == 0)
				used += (size_t)snprintf(buf + used, len - used, ", %s", r->attempts[j].provider);
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, ": %s", a->reason);
	}
}

/* The hint, unless the reasons already end with it ("...: raise vm.nr_hugepages to at least 138"). */
static const char *hint_unsaid(const char *why, const char *hint)
{
	char head[HPSHM_TEXT_MAX];
	size_t n = strcspn(hint, "(");

	while (n > 0 && hint[n - 1] == ' ')
		n--;
	if (n == 0 || n >= sizeof(head))
		return hint;
	memcpy(head, hint, n);
	head[n] = '\0';
	return strstr(why, head) ? "" : hint;
}

/* Make the region from an hpshm segment.  1 with *out set (maybe MAP_FAILED), or 0 to pass on. */
static int take_mmap(size_t len, void **out)
{
	hpshm_segment *seg = NULL;
	hpshm_report rep;
	hpshm_error err;
	char s[32], why[HPSHM_MESSAGE_MAX];
	const char *hint;
	int rc;

	if (!ready_for(len) || round_base(len) == 0)
		return 0;
	preload_size_text(len, s, sizeof(s));
	preload_inside++;
	memset(&rep, 0, sizeof(rep));
	memset(&err, 0, sizeof(err));
	rc = hpshm_segment_create_ex(&seg, len, preload_cfg.cfg, &rep, &err);
	if (rc == 0 && hpshm_segment_size(seg) < len) {
		/* Not the library's contract: never hand out a region shorter than asked. */
		(void)hpshm_segment_destroy(seg);
		seg = NULL;
		rc = HPSHM_EINVAL;
		snprintf(err.message, sizeof(err.message), "the segment is shorter than the %s asked for", s);
		err.code = rc;
	}
	if (rc < 0) {
		why_refused(&rep, why, sizeof(why));
		if (!why[0])
			snprintf(why, sizeof(why), "%s", err.message[0] ? err.message : hpshm_strerror(rc));
		hint = hint_unsaid(why, err.hint);
		snprintf(err.message, sizeof(err.message), "%s", why);
		preload_report("mmap", NULL, &rep, &err, NULL);
		preload_inside--;
		if (preload_cfg.policy == HPSHM_HUGE_ON) {
			preload_say("mmap of %s refused (huge_pages=on): %s%s%s; the call fails with ENOMEM", s, why,
				    hint[0] ? "; hint: " : "", hint);
			errno = ENOMEM;
			*out = MAP_FAILED;
			return 1;
		}
		preload_say("mmap of %s: hpshm could not make a segment (%s); the C library maps it instead", s, why);
		return 0;
	}
	rep = *hpshm_segment_report(seg);
	if (region_insert(seg, len, round_base(len), rep.mapped_size) < 0) {
		(void)hpshm_segment_destroy(seg);
		preload_inside--;
		if (preload_cfg.policy == HPSHM_HUGE_ON) {
			preload_say("mmap of %s refused: %d intercepted regions are already alive, the most one process "
				    "may hold; the call fails with ENOMEM", s, PRELOAD_MAX_REGIONS);
			errno = ENOMEM;
			*out = MAP_FAILED;
			return 1;
		}
		preload_say("mmap of %s: %d intercepted regions are already alive; the C library maps it instead", s,
			    PRELOAD_MAX_REGIONS);
		return 0;
	}
	preload_report("mmap", hpshm_segment_address(seg), &rep, NULL, NULL);
	why_refused(&rep, why, sizeof(why));
	if (preload_cfg.policy == HPSHM_HUGE_TRY && !rep.huge && why[0])
		preload_say("mmap of %s: huge pages not used, fell back to %s (%s)", s, rep.provider, why);
	preload_inside--;
	*out = hpshm_segment_address(seg);
	return 1;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!preload_inside) {
		void *p;

		if (mmap_wanted(len, prot, flags) && take_mmap(len, &p))
			return p;
		if ((flags & MAP_FIXED) && fixed_clash("mmap(MAP_FIXED)", addr, len)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
	}
	return next_mmap(addr, len, prot, flags, fd, off);
}

/*
 * On 64-bit systems mmap64 is the same call; on 32-bit ones off_t is the narrower type.  musl
 * has no mmap64 of its own: its header makes the name a macro for mmap (which is defined
 * above), so there is nothing more to interpose.
 */
#ifndef mmap64
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if (sizeof(off_t) < sizeof(off64_t) && (off64_t)(off_t)off != off) {
		/* Only file mappings have offsets, and those are never taken: pass the call on whole. */
		void *sym = dlsym(RTLD_NEXT, "mmap64");
		void *(*f)(void *, size_t, int, int, int, off64_t);

		if (!sym) {
			errno = EOVERFLOW;
			return MAP_FAILED;
		}
		memcpy(&f, &sym, sizeof(f));
		return f(addr, len, prot, flags, fd, off);
	}
	return mmap(addr, len, prot, flags, fd, (off_t)off);
}
#endif

/* ---- munmap ---- */

/*
 * munmap() over regions.  1 with *rc set when it touched one (whole: destroyed; part:
 * refused), 0 when no region is in the range and the call goes on unchanged.
 */
static int unmap_regions(void *addr, size_t len, int *rc)
{
	uintptr_t lo = (uintptr_t)addr, hi, cur;
	struct region *hit[PRELOAD_MAX_REGIONS];
	size_t rounded = round_base(len);
	int n = 0;

	/* Bad arguments are the kernel's to refuse, with its own errno. */
	if (len == 0 || rounded == 0 || lo % preload_cfg.base_page != 0 || lo > UINTPTR_MAX - rounded)
		return 0;
	hi = lo + rounded;
	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		struct region *r = &regions[i];

		if (atomic_load_explicit(&r->state, memory_order_acquire) != SLOT_LIVE)
			continue;
		if (hi <= r->start || lo >= r->start + r->mapped)
			continue;
		if (lo > r->start || hi < r->start + r->length) {
			preload_say("munmap(%p, %zu) covers part of the hpshm segment at %p (%zu bytes asked, %zu mapped): "
				    "refused with EINVAL; unmap the whole region", addr, len, (void *)r->start, r->length,
				    r->mapped);
			errno = EINVAL;
			*rc = -1;
			return 1;
		}
		hit[n++] = r;
	}
	if (n == 0)
		return 0;

	preload_inside++;
	*rc = 0;
	/* Claim each; a region another thread is unmapping right now is theirs to finish. */
	for (int i = 0, kept = 0, all = n; i < all; i++) {
		int expected = SLOT_LIVE;

		if (atomic_compare_exchange_strong(&hit[i]->state, &expected, SLOT_BUSY))
			hit[kept++] = hit[i];
		n = kept;
	}
	/* Sorted by address, so the gaps between them can be unmapped in one pass. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && hit[j - 1]->start > hit[j]->start; j--) {
			struct region *t = hit[j];

			hit[j] = hit[j - 1];
			hit[j - 1] = t;
		}
	cur = lo;
	for (int i = 0; i < n; i++) {
		struct region *r = hit[i];
		void *start = (void *)r->start;
		size_t mapped = r->mapped;

		if (r->start > cur && next_munmap((void *)cur, r->start - cur) < 0)
			*rc = -1;
		region_report_end(r, "munmap");
		if (hpshm_segment_destroy(r->seg) < 0)
			preload_say("munmap(%p, %zu): the OS refused to release the hpshm segment at %p (%zu bytes)", addr,
				    len, start, mapped);
		cur = r->start + mapped > cur ? r->start + mapped : cur;
		region_free(r);
	}
	if (cur < hi && next_munmap((void *)cur, hi - cur) < 0)
		*rc = -1;
	preload_inside--;
	return 1;
}

int munmap(void *addr, size_t len)
{
	int rc;

	if (!preload_inside && atomic_load_explicit(&nregions, memory_order_acquire) > 0 &&
	    unmap_regions(addr, len, &rc))
		return rc;
	return next_munmap(addr, len);
}

/* ---- mremap ---- */

/* mremap() of a region.  1 with *out set, or 0 when no region is involved. */
static int remap_region(void *old, size_t old_size, size_t new_size, int flags, void **out)
{
	uintptr_t lo = (uintptr_t)old;
	size_t old_r = round_base(old_size ? old_size : 1), new_r = round_base(new_size);
	struct region *r;
	int expected = SLOT_LIVE;

	if (lo > UINTPTR_MAX - old_r)
		return 0;
	r = region_overlapping(lo, lo + old_r);
	if (!r)
		return 0;
	*out = MAP_FAILED;
	if (lo != r->start || old_size == 0 || old_r < r->length || old_r > r->mapped ||
	    (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) || new_r == 0) {
		preload_say("mremap(%p, %zu, %zu, %#x) of the hpshm segment at %p (%zu bytes asked, %zu mapped) is "
			    "refused with EINVAL: only the whole region may be resized, in place", old, old_size,
			    new_size, (unsigned)flags, (void *)r->start, r->length, r->mapped);
		errno = EINVAL;
		return 1;
	}
	if (new_r > r->mapped) {
		preload_say("mremap(%p, %zu, %zu): the hpshm segment has %zu bytes mapped and cannot grow or move "
			    "(its children share it); the call fails with ENOMEM", old, old_size, new_size, r->mapped);
		errno = ENOMEM;
		return 1;
	}
	if (!atomic_compare_exchange_strong(&r->state, &expected, SLOT_BUSY)) {
		errno = EINVAL; /* unmapped by another thread at this moment */
		return 1;
	}
	r->length = new_r;
	atomic_store_explicit(&r->state, SLOT_LIVE, memory_order_release);
	*out = old;
	return 1;
}

void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	void *new_addr = NULL, *p;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!preload_inside && atomic_load_explicit(&nregions, memory_order_acquire) > 0) {
		if (remap_region(old, old_size, new_size, flags, &p))
			return p;
		if ((flags & MREMAP_FIXED) && fixed_clash("mremap(MREMAP_FIXED)", new_addr, new_size)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
	}
	return next_mremap(old, old_size, new_size, flags, new_addr);
}

/* ---- SysV ---- */

static struct shm_rec *shm_find(int id)
{
	for (int i = 0; i < PRELOAD_MAX_SHM; i++)
		if (atomic_load_explicit(&shms[i].state, memory_order_acquire) == SLOT_LIVE && shms[i].id == id)
			return &shms[i];
	return NULL;
}

/* Remember a segment shmget() made; a full table only costs its report line. */
static void shm_remember(int id, key_t key, size_t size, size_t page_size, int huge_errno, const char *why)
{
	struct shm_rec *s = shm_find(id);
	int expected = SLOT_LIVE;

	/* An id seen before was removed behind our back and reused: the new segment replaces it. */
	if (s && atomic_compare_exchange_strong(&s->state, &expected, SLOT_BUSY))
		atomic_fetch_sub(&nshms, 1);
	else
		s = NULL;
	for (int i = 0; !s && i < PRELOAD_MAX_SHM; i++) {
		expected = SLOT_FREE;
		if (atomic_compare_exchange_strong(&shms[i].state, &expected, SLOT_BUSY))
			s = &shms[i];
	}
	if (!s)
		return;
	s->id = id;
	s->key = (long)key;
	s->size = size;
	s->page_size = page_size;
	s->huge_errno = huge_errno;
	s->maker = (long)getpid();
	snprintf(s->why, sizeof(s->why), "%s", why ? why : "");
	atomic_store(&s->reported, 0);
	atomic_fetch_add(&nshms, 1);
	atomic_store_explicit(&s->state, SLOT_LIVE, memory_order_release);
}

/* The report of a SysV segment, in hpshm's terms. */
static void shm_fill_report(const struct shm_rec *s, hpshm_report *r)
{
	hpshm_attempt *a;

	memset(r, 0, sizeof(*r));
	r->version = HPSHM_REPORT_VERSION;
	r->requested_size = s->size;
	r->policy = preload_cfg.policy;
	if (preload_cfg.policy != HPSHM_HUGE_OFF) {
		a = &r->attempts[r->nattempts++];
		snprintf(a->provider, sizeof(a->provider), "sysv_hugetlb");
		a->page_size = preload_cfg.sysv_page_size;
		a->result = s->why[0] ? HPSHM_EUNAVAILABLE : 0;
		a->sys_errno = s->huge_errno;
		/* No huge page size to ask for is the machine's answer (a probe's), not a provider the
		 * configuration left out: the fallback it causes is a real one. */
		snprintf(a->call, sizeof(a->call), "%s", s->huge_errno ? "shmget" : s->why[0] ? "probe" : "");
		snprintf(a->reason, sizeof(a->reason), "%s", s->why);
	}
	if (s->why[0] || preload_cfg.policy == HPSHM_HUGE_OFF) {
		a = &r->attempts[r->nattempts++];
		snprintf(a->provider, sizeof(a->provider), "sysv");
		a->page_size = preload_cfg.base_page;
	}
	snprintf(r->provider, sizeof(r->provider), "%s", s->page_size ? "sysv_hugetlb" : "sysv");
	r->requested_page_size = s->page_size ? s->page_size : preload_cfg.base_page;
	r->page_size = r->requested_page_size;
	r->mapped_size = s->size / r->page_size * r->page_size + (s->size % r->page_size ? r->page_size : 0);
	r->usable_size = s->size;
	r->huge = s->page_size != 0;
}

/* Write the segment's line once: at its first attach here (verified), or at its removal. */
static void shm_report(struct shm_rec *s, const void *addr)
{
	hpshm_report r;
	char extra[96];
	int expected = 0;

	if (!atomic_compare_exchange_strong(&s->reported, &expected, 1))
		return;
	shm_fill_report(s, &r);
	if (addr) {
		int hugetlb = 0;
		size_t ps = preload_smaps_page_size(addr, &hugetlb);

		if (ps) {
			r.page_size = ps;
			r.huge = hugetlb;
			r.verified = 1;
			snprintf(r.verified_by, sizeof(r.verified_by), "smaps");
		}
	}
	snprintf(extra, sizeof(extra), "\"shmid\":%d,\"key\":%ld", s->id, s->key);
	preload_report("shmget", addr, &r, NULL, extra);
}

/* The removal of a SysV segment, in the process that removed it. */
static void shm_report_end(const struct shm_rec *s)
{
	struct preload_end e;
	char extra[96];

	memset(&e, 0, sizeof(e));
	snprintf(extra, sizeof(extra), "\"shmid\":%d,\"key\":%ld", s->id, s->key);
	e.call = "shmctl";
	e.event = "destroy";
	e.size = s->size;
	e.provider = s->page_size ? "sysv_hugetlb" : "sysv";
	e.created_by = s->maker;
	e.extra = extra;
	preload_report_end(&e);
}

/* Why the SHM_HUGETLB request failed with e, in words an operator can act on. */
static void shm_why(int e, size_t size, char *why, size_t len)
{
	size_t ps = preload_cfg.sysv_page_size;
	char s[32];

	if (e == EPERM) {
		snprintf(why, len, "shmget(SHM_HUGETLB) failed with EPERM: not in vm.hugetlb_shm_group and no "
			 "CAP_IPC_LOCK (set vm.hugetlb_shm_group to the server's group id)");
		return;
	}
	snprintf(why, len, "shmget(SHM_HUGETLB) failed with ENOMEM: the pool of %s pages has %ld available, the "
		 "segment needs %zu (raise vm.nr_hugepages)", hpshm_size_format(ps, s, sizeof(s)),
		 preload_pool_available(ps), size / ps + (size % ps != 0));
}

/* shmget(IPC_CREAT) at or above the threshold.  1 with *out set, or 0 to pass on. */
static int take_shmget(key_t key, size_t size, int flags, int *out)
{
	size_t ps = preload_cfg.sysv_page_size;
	char why[HPSHM_TEXT_MAX], s[32];
	int id, e;

	if (!ready_for(size) || !preload_cfg.sysv)
		return 0;
	preload_size_text(size, s, sizeof(s));
	if (preload_cfg.policy == HPSHM_HUGE_OFF) {
		id = next_shmget(key, size, flags);
		if (id >= 0)
			shm_remember(id, key, size, 0, 0, "");
		*out = id;
		return 1;
	}
	if (ps) {
		id = next_shmget(key, size, flags | SHM_HUGETLB | (int)hpshm__huge_bits(ps));
		if (id >= 0) {
			shm_remember(id, key, size, ps, 0, NULL);
			*out = id;
			return 1;
		}
		e = errno;
		if (e != ENOMEM && e != EPERM) {
			/* EEXIST, EACCES, ENOENT, EINVAL, ENOSPC: the caller's answer, as for any shmget. */
			*out = -1;
			errno = e;
			return 1;
		}
		shm_why(e, size, why, sizeof(why));
	} else {
		e = 0;
		snprintf(why, sizeof(why), "%s", preload_cfg.sysv_why);
	}
	if (preload_cfg.policy == HPSHM_HUGE_ON) {
		hpshm_report r;
		hpshm_error err;
		struct shm_rec tmp;

		memset(&tmp, 0, sizeof(tmp));
		tmp.size = size;
		tmp.huge_errno = e;
		snprintf(tmp.why, sizeof(tmp.why), "%s", why);
		shm_fill_report(&tmp, &r);
		r.nattempts = 1;
		memset(&err, 0, sizeof(err));
		err.code = HPSHM_ENOHUGE;
		err.sys_errno = e;
		snprintf(err.message, sizeof(err.message), "%s", why);
		preload_report("shmget", NULL, &r, &err, NULL);
		/* The kernel's errno where it gave one: EPERM blamed on the pool would send the
		 * operator to vm.nr_hugepages (and PostgreSQL's hint to SHMALL) for a group setting. */
		e = e ? e : ENOMEM;
		preload_say("shmget of %s refused (huge_pages=on): %s; the call fails with %s", s, why,
			    e == EPERM ? "EPERM" : "ENOMEM");
		*out = -1;
		errno = e;
		return 1;
	}
	id = next_shmget(key, size, flags);
	if (id < 0)
		e = errno;
	else
		shm_remember(id, key, size, 0, e, why);
	if (id >= 0)
		preload_say("shmget of %s: huge pages not used, fell back to base pages (%s)", s, why);
	*out = id;
	if (id < 0)
		errno = e;
	return 1;
}

int shmget(key_t key, size_t size, int flags)
{
	int id;

	/* SHM_NORESERVE goes on as asked: see the file's comment. */
	if (!preload_inside && (flags & IPC_CREAT) && !(flags & (SHM_HUGETLB | SHM_NORESERVE)) &&
	    take_shmget(key, size, flags, &id))
		return id;
	return next_shmget(key, size, flags);
}

void *shmat(int id, const void *addr, int flags)
{
	void *p = next_shmat(id, addr, flags);

	if (p != (void *)-1 && !preload_inside && atomic_load_explicit(&nshms, memory_order_acquire) > 0) {
		int saved = errno;
		struct shm_rec *s = shm_find(id);

		if (s) {
			preload_inside++;
			shm_report(s, p);
			preload_inside--;
		}
		errno = saved;
	}
	return p;
}

int shmctl(int id, int cmd, struct shmid_ds *buf)
{
	int rc = next_shmctl(id, cmd, buf);

	if (rc == 0 && cmd == IPC_RMID && !preload_inside && atomic_load_explicit(&nshms, memory_order_acquire) > 0) {
		int saved = errno;
		struct shm_rec *s = shm_find(id);
		int expected = SLOT_LIVE;

		if (s && atomic_compare_exchange_strong(&s->state, &expected, SLOT_BUSY)) {
			preload_inside++;
			shm_report(s, NULL); /* never attached here: the line says unverified */
			shm_report_end(s);
			preload_inside--;
			atomic_fetch_sub(&nshms, 1);
			atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
		}
		errno = saved;
	}
	return rc;
}
