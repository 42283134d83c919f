/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.h -- the stress benchmark behind `hpshm bench`: what its files share.
 *
 * A run compares configurations: hpshm providers at each huge page size, hpshm's plain
 * 4 KiB pages, and the peers (the same system calls without hpshm, THP, APR).  They run in
 * groups whose members take turns, and every ratio the output reports is taken between
 * members of one group, within one round or setup cycle, at most seconds apart.  A group first
 * cycles each member through a fresh create, attach and teardown BENCH_SETUP_CYCLES times,
 * BENCH_POOL_CYCLES on a huge page pool (the setup samples, and page tables once); the
 * setup-only members (the raw calls with one populate thread, and the limit: the zeroing
 * bandwidth of the machine) take part in these cycles alone.  Then come the rounds.  Where
 * memory holds the group's members at once, every round creates them all, times them in
 * short turns of chase and rmw (tens of milliseconds, A B then B A), and tears them down,
 * the members swapping memory from one round to the next.  Else each member in turn is
 * created, its chase built, its workers attached and warmed up, its chase and rmw timed,
 * and it is torn down before the next member is created (the order reversed every other
 * round), so each member runs on the pages the one before it has just freed (hugetlb hands
 * its pool's pages back last in, first out, and the page allocator its free lists).
 * group.c says why.  A group's memory check is of its largest member, against MemAvailable
 * and the huge page pools; the rounds live together only where all of them fit.
 * Files, one concern each:
 *   workload.c  the access code every configuration runs
 *   memory.c    how each configuration gets its memory (hpshm; the peers through os.h)
 *   apr.c       the APR peer (built only when pkg-config finds apr-1)
 *   worker.c    the workers' protocol, and the loop a worker serves
 *   os.h        the seam to the system: worker_posix.c + memory_posix.c (processes, sockets,
 *               threads, signals, mmap, memfd, THP) or worker_windows.c + memory_windows.c
 *               (CreateProcessW, named pipes, threads, sections); nothing above it includes
 *               a system header beyond the C library
 *   pool.c      --reserve: size the huge page pool for the run, put it back after
 *   run.c       the controller's top level; its rooms (run.h): plan.c the configurations
 *               and groups wanted, fit.c what memory holds at once, group.c a group's
 *               cycles and rounds in alternating order, member.c one member, place.c the
 *               address slots, latency.c the latencies; stopping on a signal
 *   stats.c     medians and per-round ratios
 *   output.c    the table, CSV and JSON;  svg.c  the chart
 *
 * Timing rule (reference/performance-anchor.md): every timed phase runs until each worker
 * has used its budget of its own thread CPU time (CLOCK_THREAD_CPUTIME_ID on POSIX,
 * GetThreadTimes() on Windows), capped at four
 * times that in wall time; rates and latencies are per CPU second, wall figures are kept
 * beside them.  On a shared VM wall clock rates lose the page size effect in the noise.
 * The one exception is the create (setup): timed by the wall clock, since a populate split
 * over threads works outside the controller's thread, and a server waits for it by the wall
 * clock (member.c); the controller's CPU time is kept beside it.
 *
 * What the kernel says about the process (page-table memory, THP coverage, MemAvailable,
 * what backs a mapping) comes from ports/facts.h, the one door of bench/ and tools/ to
 * the OS beyond the public API.  bench/ sits below tools/ and includes nothing from there.
 */
#ifndef HPSHM_BENCH_BENCH_H
#define HPSHM_BENCH_BENCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hpshm.h"

#define BENCH_MAX_WORKERS   64
#define BENCH_PT_WORKERS    4    /* page tables are sampled with 1, 2 and 4 workers */
#define BENCH_MAX_CONFIGS   24
#define BENCH_MAX_ROUNDS    64
#define BENCH_MAX_SAMPLES   512  /* per configuration and workload: rounds x the groups it is in */
#define BENCH_GROUP_MAX     8    /* members of one group, the reference included */
#define BENCH_MAX_SIZES     4    /* huge page sizes in one run */
#define BENCH_SETUP_CYCLES  7    /* timed fresh create, attach, teardown of every member, per group */
#define BENCH_POOL_CYCLES   21   /* as many in all for the members on a huge page pool (group.c) */
#define BENCH_PASSES        3    /* turns of every member per round, each a third of a phase (group.c) */
#define BENCH_SLICES        200  /* most turns per round and workload when members live together (group.c) */
#define BENCH_RMW_TURN_NS   10000000ull /* an rmw turn is at least this long (group.c) */
#define BENCH_MAX_BLOCKS    2048 /* blocks of turns kept per configuration and access workload (group.c) */
#define BENCH_LINE          64   /* the chase and rmw work on cache-line slots */
#define BENCH_WHY_MAX       512  /* why a configuration could not run */
#define BENCH_WORKER_CMD    "__bench-worker" /* the hidden subcommand a spawned worker runs */
#define BENCH_OS_NONE       ((intptr_t)-1) /* no channel, descriptor or handle (os.h) */
#define BENCH_PTE_UNKNOWN   INT64_MIN    /* a reply's vmpte_kib where the OS offers no figure */
#define BENCH_FAULTS_UNKNOWN UINT64_MAX  /* a reply's minflt where the OS keeps no count */
#define BENCH_RAW_LARGE     1u           /* a raw view is mapped with FILE_MAP_LARGE_PAGES */
#define BENCH_RAW_SHMID     2u           /* the raw handle is a SysV shmid to shmat(), not a descriptor */

/* Exit codes of bench_run(): the tool's, plus one for an interrupted run. */
#define BENCH_OK            0
#define BENCH_FAIL          1
#define BENCH_INTERRUPTED   130

/* Set by SIGINT/SIGTERM/SIGHUP (Ctrl-C and Ctrl-Break on Windows); every loop that can last
 * long checks it. */
extern volatile sig_atomic_t bench_stop;

/* ---- workload.c: the access code, identical for every configuration ---------------------- */

/* Thread CPU time and monotonic wall time, nanoseconds (the system's clocks: os.h's files). */
uint64_t bench_cpu_ns(void);
uint64_t bench_wall_ns(void);
/* The shortest turn the thread CPU clock times well: 5 ms where it counts nanoseconds, 20 ms
 * where it ticks (Windows: 15.6 ms), so that no turn can read no CPU time at all. */
uint64_t bench_cpu_turn_ns(void);
/* What the thread CPU clock is, for the output ("CLOCK_THREAD_CPUTIME_ID"). */
const char *bench_cpu_clock_name(void);

/* Where loads whose values are otherwise unused go, so the compiler keeps them. */
extern volatile uint64_t bench_sink;

/* What one timed loop did. */
struct bench_timing {
	uint64_t ops;      /* accesses (chase, rmw) or bytes touched (touch) */
	uint64_t cpu_ns;   /* this thread's CPU time */
	uint64_t wall_ns;  /* wall time */
};

/*
 * Write the chase into [base, base + size): size / 64 slots, each holding at offset 0 the
 * byte offset of the next slot on one random cycle through every slot.  One sequential
 * pass (the permutation is computed, not stored), so building 4 GiB costs about a second.
 */
/*
 * The loops that touch the region measure memory, not a sanitizer: in an ASan build each of
 * their accesses would also touch shadow memory, whose page tables and misses would then be
 * counted as the region's.  So they are never instrumented.
 */
#if defined(__GNUC__) || defined(__clang__)
#define BENCH_UNINSTRUMENTED __attribute__((no_sanitize_address))
#else
#define BENCH_UNINSTRUMENTED
#endif

void bench_chase_build(void *base, size_t size, uint64_t key);
/* The next number of SplitMix64 from *state (any value, 0 included). */
uint64_t bench_splitmix(uint64_t *state);
/* Follow the chase from slot start until the budget; dependent reads, one per slot. */
void bench_chase_run(const void *base, size_t size, uint64_t start, uint64_t budget_ns,
		     struct bench_timing *t);
/* Independent random increments of word 1 of a slot (the chase lives in word 0). */
void bench_rmw_run(void *base, size_t size, uint64_t seed, uint64_t budget_ns, struct bench_timing *t);
/* Read one word per base page of [base, base + len): fault the whole mapping in. */
void bench_touch(const void *base, size_t len, size_t stride, struct bench_timing *t);
/* Page faults this process took so far (ports/facts.h), 0 if the OS keeps no count. */
uint64_t bench_minflt(void);

/* ---- memory.c: one configuration's memory ---------------------------------------------- */

enum bench_kind {
	BENCH_HPSHM,      /* hpshm_segment_create() with one named provider */
	BENCH_RAW_MEMFD,  /* memfd_create([MFD_HUGETLB]) + ftruncate + mmap + the same populate */
	BENCH_RAW_ANON,   /* mmap(MAP_SHARED | MAP_ANONYMOUS [| MAP_HUGETLB]): fork only */
	BENCH_RAW_FILE,   /* open + unlink of a file on a hugetlbfs mount, then as memfd */
	BENCH_RAW_SHM,    /* shmget(IPC_PRIVATE, SHM_HUGETLB) + shmat + IPC_RMID + the same populate */
	BENCH_RAW_SECTION, /* Windows: CreateFileMappingW([SEC_LARGE_PAGES]) + MapViewOfFileEx */
	BENCH_THP,        /* transparent huge pages: shared shmem, or private anonymous */
	BENCH_APR,        /* apr_shm_create(), anonymous: fork only */
	BENCH_LIMIT       /* the zeroing limit: threads clear a populated raw region (memory.c) */
};

/* How workers reach the memory. */
enum bench_start {
	BENCH_START_SPAWN,  /* exec of this tool, re-attaching (hpshm_child_spawn for hpshm) */
	BENCH_START_FORK,   /* fork(): the mapping is inherited */
	BENCH_START_THREAD  /* threads of this process: for private memory (THP) */
};

/* The live memory of one configuration. */
struct bench_region {
	void          *addr;        /* first byte */
	size_t         size;        /* bytes the workloads use: the --size asked for */
	size_t         len;         /* bytes mapped (touched by attach), >= size */
	intptr_t       handle;      /* raw memfd or section to hand to workers, BENCH_OS_NONE if none */
	unsigned       raw_flags;   /* how a worker maps the raw handle: BENCH_RAW_LARGE, BENCH_RAW_SHMID, or 0 */
	hpshm_segment *seg;         /* hpshm's segment, or NULL */
	void          *apr;         /* APR's pool and shm (apr.c), or NULL */
	size_t         page_size;   /* verified: read back from the kernel */
	int            huge;        /* 1 if the kernel reports huge pages */
	char           verified_by[HPSHM_NAME_MAX]; /* "smaps", "fstatfs", "AnonHugePages" ... */
	double         populate_s;  /* wall s of the create spent faulting in (fallocate + madvise), NAN unknown */
	double         rest_s;      /* wall s of the rest of the create (map, probe, verify, header), NAN unknown */
	unsigned       threads;     /* threads that populated it (hpshm's report; what the raw calls used) */
};

struct bench_config;

/*
 * Create and populate the configuration's memory at addr (or where the kernel likes when
 * addr is NULL or the mechanism cannot choose).  0, or -1 with why (one sentence, for the
 * "could not use" list) filled.
 */
int  bench_region_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r,
			 char *why, size_t len);
/* Release it; the last reference, so this frees the memory.  0, or -1 if the OS refused. */
int  bench_region_destroy(struct bench_region *r);
/* Where THP could be used, and how ("shmem" or "private"), else NULL with why filled (os.h's files). */
const char *bench_thp_mode(char *why, size_t len);

/* apr.c */
int  bench_apr_available(char *why, size_t len);
int  bench_apr_create(size_t size, struct bench_region *r, char *why, size_t len);
int  bench_apr_destroy(struct bench_region *r);

/* ---- worker.c ---------------------------------------------------------------------------- */

enum bench_op { BENCH_OP_ATTACH = 1, BENCH_OP_CHASE, BENCH_OP_RMW, BENCH_OP_EXIT };

/* What a worker reports for one operation. */
struct bench_reply {
	int32_t  rc;           /* 0, or -1 with msg */
	uint32_t reserved;     /* zero */
	struct bench_timing t; /* the operation's work and time */
	int64_t  vmpte_kib;    /* ATTACH: growth of VmPTE across map + touch; BENCH_PTE_UNKNOWN if none */
	uint64_t minflt;       /* ATTACH: page faults taken by map + touch; BENCH_FAULTS_UNKNOWN if none */
	char     msg[256];     /* what went wrong */
};

/* A started worker, seen from the controller. */
struct bench_worker {
	intptr_t     chan;     /* our end of its channel (os.h), BENCH_OS_NONE if none */
	long long    pid;      /* process id, 0 for a thread */
	hpshm_child  child;    /* for hpshm_child_wait() when spawned by hpshm */
	int          spawned;  /* 1 if hpshm_child_spawn() started it */
	void        *thread;   /* the thread, for BENCH_START_THREAD */
	void        *process;  /* the process handle of a raw worker, where the OS has one */
};

/* Start one worker over r.  0, or -1 with why filled. */
int  bench_worker_start(struct bench_worker *w, const struct bench_config *c, const struct bench_region *r,
			const char *self_exe, char *why, size_t len);
/* Send op to workers [0, n) at once, then collect one reply from each.  0, or -1 with why. */
int  bench_workers_run(struct bench_worker *w, unsigned n, enum bench_op op, uint64_t budget_ns,
		       uint64_t round_seed, struct bench_reply *replies, char *why, size_t len);
/* Stop workers [0, n): ask them to exit, then kill what is left, reap everything. */
void bench_workers_stop(struct bench_worker *w, unsigned n);
/* The spawned worker's side: `hpshm __bench-worker ...`.  Returns the exit code. */
int  bench_worker_main(int argc, char **argv);

/* ---- pool.c ------------------------------------------------------------------------------ */

struct bench_pool {
	size_t        page_size;   /* the pool's page size */
	unsigned long before;      /* nr_hugepages found */
	unsigned long set;         /* nr_hugepages we wrote */
	int           changed;     /* 1 if we wrote, so restore must write back */
};

/* Add pages to the pool of page_size for the run.  0, or -1 with why. */
int  bench_pool_reserve(struct bench_pool *p, size_t page_size, unsigned long pages, char *why, size_t len);
/* Put back what bench_pool_reserve() changed.  0, or -1 with why. */
int  bench_pool_restore(struct bench_pool *p, char *why, size_t len);

/*
 * NaN and the infinities, without <math.h>'s isnan()/isinf(): mingw-w64's macros convert to
 * float on one branch, which -Wfloat-conversion reports.  NaN is the one value unequal to
 * itself; an infinity is the one other value beyond DBL_MAX.
 */
static inline int bench_isnan(double v) { return v != v; }
static inline int bench_isinf(double v) { return v == v && (v > 1.7976931348623157e308 || v < -1.7976931348623157e308); }

/* ---- stats.c ----------------------------------------------------------------------------- */

/* n samples' median, min and max (NAN for none; the values are not changed); blocks > 0: the
 * median is instead bench_placed_median() of this many blocks of turns pooled over the
 * rounds, min and max still the rounds' (output.c, access_ratios()). */
struct bench_summary { double median, min, max; unsigned n, blocks; };
void bench_summarize(const double *v, unsigned n, struct bench_summary *s);

/* The geometric mean, over the places the gains were measured in, of each place's median:
 * every place weighs alike however many rounds it had.  NAN for no gains. */
struct bench_block_gains;
double bench_placed_median(const struct bench_block_gains *b);

/* ---- run.c and its rooms (run.h): configurations, rounds, samples ------------------------ */

/*
 * BENCH_W_POPULATE and BENCH_W_SETUP_REST split a create (BENCH_W_SETUP) in two by wall time:
 * faulting the memory in, and everything else the create does (map, probe, verify, header).
 */
enum bench_workload { BENCH_W_CHASE, BENCH_W_RMW, BENCH_W_SETUP, BENCH_W_ATTACH, BENCH_W_TEARDOWN,
		      BENCH_W_PAGETABLES, BENCH_W_POPULATE, BENCH_W_SETUP_REST, BENCH_NW };

struct bench_options {
	size_t       size;                      /* --size */
	unsigned     workers;                   /* --workers */
	unsigned     rounds;                    /* --rounds */
	double       phase_seconds;             /* --phase-seconds: CPU budget per timed phase */
	int          fork_mode;                 /* --fork */
	int          thread_mode;               /* --threads: every worker a thread of the controller */
	int          reserve;                   /* --reserve */
	int          quiet;                     /* --quiet: no progress on stderr */
	const char  *providers;                 /* --providers list, NULL: auto */
	size_t       page_sizes[BENCH_MAX_SIZES]; /* --page-size list, resolved */
	unsigned     npage_sizes;               /* entries in page_sizes */
	const char  *self_exe;                  /* this program, for spawned workers */
};

/*
 * The samples of one workload: one per round for chase and rmw, one per setup cycle for
 * setup, attach and teardown.  The gains are taken when the
 * sample is, against the reference in the same group and round (or cycle); a gain over
 * a reference that never shared a group with this configuration is not measured.
 */
struct bench_series {
	double   cpu[BENCH_MAX_SAMPLES];      /* the figure by thread CPU time */
	double   wall[BENCH_MAX_SAMPLES];     /* the same by wall time */
	unsigned n;                           /* samples in cpu and wall */
	double   vs_plain[BENCH_MAX_SAMPLES]; /* gains over plain (> 1 is better), same round */
	unsigned n_plain;                     /* entries in vs_plain */
	double   vs_raw[BENCH_MAX_SAMPLES];   /* gains over the raw peer, same round */
	unsigned n_raw;                       /* entries in vs_raw */
	double   vs_raw1[BENCH_MAX_SAMPLES];  /* setup: gains over the raw calls with one populate thread */
	unsigned n_raw1;                      /* entries in vs_raw1 */
	double   of_limit[BENCH_MAX_SAMPLES]; /* setup: the limit's time / this one's, same cycle (<= 1 mostly) */
	unsigned n_limit;                     /* entries in of_limit */
};

/*
 * The gains of one access workload (chase or rmw) block by block, pooled over the run: a
 * block is as many turns in a row as its round has members, so each member ran once in
 * every place of the rotation (group.c, "Blocks").  Only rounds with the members alive
 * together have blocks; the row's figure is their median, and its range the rounds'.
 */
/* One member's gains over one peer, a gain per block of turns, each with its round's place
 * in the creation rotation (group.c, "Places"): bench_placed_median() weighs the places alike. */
struct bench_block_gains {
	double        g[BENCH_MAX_BLOCKS];      /* the gains, in the order measured */
	unsigned char place[BENCH_MAX_BLOCKS];  /* the round's place: its number modulo the members */
	unsigned      n;                        /* entries in g and place */
};

struct bench_blocks {
	struct bench_block_gains vs_plain;   /* gains over plain */
	struct bench_block_gains vs_raw;     /* gains over the raw peer */
};

struct bench_config {
	enum bench_kind  kind;                 /* how its memory is made */
	enum bench_start start;                /* how its workers reach it */
	char             provider[HPSHM_NAME_MAX]; /* hpshm provider, or the peer's name */
	char             label[64];            /* the row's name: "memfd_hugetlb", "raw memfd", ... */
	char             note[96];             /* how it ran, when it matters: "private, threads" */
	size_t           page_size;            /* huge page size asked for, 0 for base pages */
	int              plain_ref;            /* config hpshm plain, for ratio_vs_plain; -1 none */
	int              raw_ref;              /* config of the raw peer, for ratio_vs_raw; -1 none */
	int              raw1_ref;             /* the raw calls with one populate thread, for ratio_vs_raw1; -1 */
	int              limit_ref;            /* the limit of its page size, for share_of_limit; -1 none */
	int              setup_only;           /* 1: setup cycles only (raw x1, the limit), no workers, no rounds */
	int              by_hand;              /* raw x1: populate as a program writes it, not as hpshm does */
	unsigned         threads;              /* populate threads: asked of the raw calls, reported by hpshm */
	int              usable;               /* 0 once it could not run */
	char             why[BENCH_WHY_MAX];   /* why not */
	size_t           verified_page_size;   /* from the report or smaps, first create */
	int              huge;                 /* verified huge */
	char             verified_by[HPSHM_NAME_MAX]; /* where it was read */
	size_t           map_len;              /* bytes mapped, from its first create */
	unsigned         workers;              /* workers in the timed phases */
	struct bench_series s[BENCH_NW];       /* per workload, per round */
	struct bench_blocks blk[2];            /* chase and rmw, per block of turns */
	int              pt_done;              /* page tables sampled */
	double           pt_kib[3];            /* VmPTE per worker with 1, 2, 4 workers */
	double           pt_faults[3];         /* minor faults per worker, same */
	unsigned         pt_sampled;           /* bit k: the count k was sampled (its figures may be NAN) */
};

#define BENCH_LAT_RUNS      15   /* create + destroy (or probe) repetitions per latency figure */
#define BENCH_MAX_LAT       16   /* latency figures in one run */

/*
 * One latency figure: the wall time of a whole create + verify + destroy of a segment (or of
 * a probe), median over BENCH_LAT_RUNS, alternated with the raw calls' when there are any.
 */
struct bench_latency {
	char                 label[64];        /* "memfd_hugetlb", or "probe memfd_hugetlb" */
	char                 raw_label[64];    /* the raw peer timed beside it, "" if none */
	size_t               page_size;        /* huge page size asked for */
	size_t               size;             /* segment size */
	struct bench_summary us;               /* microseconds */
	struct bench_summary raw_us;           /* the raw peer's, n = 0 if none */
	struct bench_summary vs_raw;           /* gain over the raw peer per repetition: > 1 is better */
};

#define BENCH_RS_RUNS       9    /* grow + shrink cycles of each resize member, alternated */
#define BENCH_RS_SYNC_BATCHES 7  /* sync figures: batches of BENCH_RS_SYNC_CALLS calls each */
#define BENCH_RS_SYNC_CALLS 200000u
#define BENCH_MAX_RS        3    /* grow, shrink, sync */

/*
 * One resize row (resize.c): hpshm_segment_resize() from one size to another, wall time per
 * call, alternated with the raw calls doing the same and (grow) with what a server does
 * without resize: a new segment of the new size and a copy of the old contents; or the ns
 * per hpshm_segment_sync() call with nothing to do, in a process that attached by fork().
 * The ratios are hpshm's time over the other's, per cycle: costs, < 1 is hpshm faster.
 */
struct bench_resize {
	char                 what[16];         /* "grow", "shrink", "sync" */
	char                 provider[HPSHM_NAME_MAX]; /* the hpshm provider */
	char                 raw_label[64];    /* the raw calls' row, "" if none */
	char                 unit[16];         /* "ms" or "ns/call" */
	size_t               page_size;        /* verified */
	size_t               from, to;         /* bytes: resized from, to (sync: its size twice) */
	struct bench_summary v;                /* hpshm's */
	struct bench_summary raw;              /* the raw calls', n = 0 if none */
	struct bench_summary copy;             /* grow: new segment + copy, n = 0 if none */
	struct bench_summary over_raw;         /* hpshm / raw per cycle */
	struct bench_summary over_copy;        /* hpshm / copy per cycle */
};

struct bench_result {
	struct bench_options opt;              /* as run */
	struct bench_config  cfg[BENCH_MAX_CONFIGS]; /* every configuration, usable or not */
	unsigned             ncfg;             /* entries in cfg */
	unsigned             rounds_done;      /* rounds completed by every group that ran */
	unsigned             groups;           /* groups run (or started) */
	char                 groups_note[BENCH_WHY_MAX]; /* who took turns with whom: "{a, b, plain} ..." */
	char                 split_note[BENCH_WHY_MAX];  /* what memory kept apart, and which gains it cost */
	double               seconds;          /* the whole run, wall */
	char                 thp_why[BENCH_WHY_MAX]; /* why THP was not compared, if not */
	char                 apr_why[BENCH_WHY_MAX]; /* why APR was not compared, if not */
	char                 pool_note[BENCH_WHY_MAX]; /* what --reserve did */
	const char          *left_out;         /* what this system cannot run at all, "" if nothing */
	const char          *pt_absent;        /* why page tables are not measured here, "" if they are */
	const char          *populate_how;     /* what populate does on this system, for its table's title */
	const char          *caveat;           /* why this system's ratios mislead (an emulator), "" if not */
	struct bench_latency lat[BENCH_MAX_LAT]; /* create and probe latencies */
	unsigned             nlat;             /* entries in lat */
	struct bench_resize  rs[BENCH_MAX_RS]; /* the resize rows */
	unsigned             nrs;              /* entries in rs */
	char                 rs_note[BENCH_WHY_MAX]; /* why they are absent, or at what size and pages they ran */
};

/*
 * Parse a --providers list against the providers built in and the peers.  0, or -1 with why.
 * Run everything; the result is filled as far as the run got (also when interrupted).
 * Returns BENCH_OK, BENCH_FAIL or BENCH_INTERRUPTED; why says what failed.
 */
int bench_check_providers(const char *list, int fork_mode, char *why, size_t len);
/* --fork and --threads: 0, or -1 with why (both given, or no fork on this system). */
int bench_check_start(int fork_mode, int thread_mode, char *why, size_t len);
int bench_run(const struct bench_options *opt, struct bench_result *res, char *why, size_t len);
/* The gain of v over ref for workload w, oriented so that > 1 is better (stats.c). */
int    bench_higher_is_better(enum bench_workload w);
double bench_gain(enum bench_workload w, double v, double ref);
/* Printed from the controller's progress lines; NULL-safe. */
void bench_progress(const struct bench_options *opt, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;

/* ---- output.c, svg.c --------------------------------------------------------------------- */

/* One output row: a configuration's figure for one workload and worker count. */
struct bench_row {
	const struct bench_config *c;     /* whose */
	const char  *workload;            /* "chase", "rmw", "setup", "teardown", "pagetables" */
	const char  *metric;              /* "create" or "attach" for setup, else = workload */
	unsigned     workers;             /* workers the figure is for */
	const char  *unit;                /* "ns/access", "accesses/s", "s/GiB", "s", "KiB/worker" */
	int          higher_is_better;    /* 1 for rates */
	int          deterministic;       /* 1 for page tables */
	int          per_group;           /* 1 for setup and teardown: one sample per group, not per round */
	struct bench_summary v;           /* by CPU time (or exact, for page tables) */
	double       wall_median;         /* by wall time; NAN where it does not apply */
	int          has_plain, has_raw;  /* ratios measured */
	struct bench_summary vs_plain;    /* per-round gain over plain: > 1 is better */
	struct bench_summary vs_raw;      /* per-round gain over the raw peer */
	int          has_raw1, has_limit; /* setup rows: measured against raw x1, and the limit */
	struct bench_summary vs_raw1;     /* per-cycle gain over the raw calls with one populate thread */
	struct bench_summary of_limit;    /* per-cycle share of the limit: its time / this row's */
	double       faults;              /* page tables: minor faults per worker; NAN else */
};

/* Every row of a result, in table order.  Returns the count (at most max). */
unsigned bench_rows(const struct bench_result *res, struct bench_row *rows, unsigned max);

void bench_print_text(FILE *out, const struct bench_result *res);
void bench_print_csv(FILE *out, const struct bench_result *res);
/* The report as one JSON object, the "result" of the tool's envelope (tools/envelope.c). */
struct json;
void bench_json_result(struct json *j, const struct bench_result *res);
/* resize_out.c: the resize rows in the table, and as JSON's "resize" and "resize_note". */
struct json;
void bench_print_resize(FILE *out, const struct bench_result *res);
void bench_json_resize(struct json *j, const struct bench_result *res);
int  bench_write_svg(const char *path, const struct bench_result *res, char *why, size_t len);

#endif /* HPSHM_BENCH_BENCH_H */
