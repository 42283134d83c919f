/* SPDX-License-Identifier: MIT */
/*
 * bench/workload.c -- the access code every configuration runs, and the clocks that time it.
 *
 * hpshm, the raw system calls and the peers all run these same functions on memory of the
 * same size: a difference between two rows is then the memory's, never the code's.  The
 * clocks are the system's (os.h); the fault counter that goes with the page-table figures
 * is ports/facts.h's.
 *
 * The region is an array of 64-byte slots (one cache line each).  Word 0 of a slot holds the
 * chase: the byte offset of the next slot on one random cycle through every slot, so a
 * chase from anywhere visits the whole region before repeating and each read depends on the
 * one before (latency, one TLB lookup per access).  Word 1 is the counter the random
 * read-modify-write increments: its accesses are independent, so the CPU overlaps them
 * (throughput, as a hash table or buffer pool probe).
 *
 * The cycle comes from a computed bijection P on [0, 2^k): three rounds of xor with a key,
 * multiply by an odd constant and xor-shift, each invertible.  Slot s points to
 * P(P^-1(s) + 1), so building the chase is one sequential write pass with no table: building
 * it for 4 GiB costs about a second, and a random write pass would cost ten.  When the slot
 * count n is not a power of two, P is restricted to [0, n) by cycle walking (apply P again
 * until the value is below n: fewer than two steps on average, and still a bijection).
 *
 * Timed loops run in batches and read the thread's CPU clock between batches; a batch is a
 * fraction of a millisecond, so the clock read (a system call for the thread CPU clock)
 * costs well under 1 %.  Windows' thread CPU clock (GetThreadTimes()) moves in scheduler
 * ticks, so there a phase overshoots its budget by up to one tick; the figures divide by
 * the time the clock says was used, so they stay right, only a phase is a little longer.  A loop ends when this thread used its CPU budget, when four times
 * the budget passed on the wall clock (a starved worker must not stall the run), or when
 * the run is being stopped.
 */
#include "bench.h"
#include "ports/facts.h"

#define CHASE_BATCH 1024u    /* dependent reads between clock reads: ~0.3-0.5 ms */
#define RMW_BATCH   16384u   /* independent increments between clock reads: ~0.3-1 ms */
#define WALL_CAP    4u       /* a phase ends after this many budgets of wall time */

volatile uint64_t bench_sink;

/* The bijection on [0, 2^bits): its keys and the inverses of its multipliers. */
struct perm {
	uint64_t mask;     /* 2^bits - 1 */
	unsigned shift;    /* xor-shift distance: half the bits, rounded up */
	uint64_t key[3];   /* xored in each round */
	uint64_t mul[3];   /* odd multipliers */
	uint64_t inv[3];   /* their inverses mod 2^64 */
	uint64_t n;        /* the domain actually used, <= mask + 1 */
};

uint64_t bench_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Inverse of an odd number mod 2^64 by Newton's iteration: each step doubles the bits. */
static uint64_t odd_inverse(uint64_t m)
{
	uint64_t x = m;   /* right to 3 bits, since m * m == 1 mod 8 for odd m */

	for (int i = 0; i < 5; i++)
		x *= 2 - m * x;
	return x;
}

static void perm_init(struct perm *p, uint64_t n, uint64_t seed)
{
	unsigned bits = 1;

	while (bits < 63 && ((uint64_t)1 << bits) < n)
		bits++;
	p->mask = ((uint64_t)1 << bits) - 1;
	p->shift = (bits + 1) / 2;
	p->n = n;
	for (int i = 0; i < 3; i++) {
		p->key[i] = bench_splitmix(&seed) & p->mask;
		p->mul[i] = bench_splitmix(&seed) | 1;
		p->inv[i] = odd_inverse(p->mul[i]);
	}
}

static uint64_t perm_fwd1(const struct perm *p, uint64_t x)
{
	for (int i = 0; i < 3; i++) {
		x ^= p->key[i];
		x = (x * p->mul[i]) & p->mask;
		x ^= x >> p->shift;
	}
	return x;
}

static uint64_t perm_inv1(const struct perm *p, uint64_t x)
{
	for (int i = 2; i >= 0; i--) {
		/* x ^= x >> s is undone by xoring in every further shift of the result. */
		uint64_t y = x;

		for (unsigned s = p->shift; s <= 63 && (y >> s) != 0; s += p->shift)
			x ^= y >> s;
		x = (x * p->inv[i]) & p->mask;
		x ^= p->key[i];
	}
	return x;
}

static uint64_t perm_fwd(const struct perm *p, uint64_t x)
{
	do
		x = perm_fwd1(p, x);
	while (x >= p->n);
	return x;
}

static uint64_t perm_inv(const struct perm *p, uint64_t x)
{
	do
		x = perm_inv1(p, x);
	while (x >= p->n);
	return x;
}

BENCH_UNINSTRUMENTED
void bench_chase_build(void *base, size_t size, uint64_t key)
{
	uint64_t n = size / BENCH_LINE;
	uint64_t *slot = base;
	struct perm p;

	if (n == 0)
		return;
	perm_init(&p, n, key);
	for (uint64_t s = 0; s < n; s++) {
		uint64_t pos = perm_inv(&p, s) + 1;

		slot[s * (BENCH_LINE / 8)] = perm_fwd(&p, pos == n ? 0 : pos) * BENCH_LINE;
	}
}

static int phase_over(uint64_t cpu0, uint64_t wall0, uint64_t budget_ns, struct bench_timing *t)
{
	t->cpu_ns = bench_cpu_ns() - cpu0;
	t->wall_ns = bench_wall_ns() - wall0;
	return t->cpu_ns >= budget_ns || t->wall_ns >= WALL_CAP * budget_ns || bench_stop;
}

BENCH_UNINSTRUMENTED
void bench_chase_run(const void *base, size_t size, uint64_t start, uint64_t budget_ns, struct bench_timing *t)
{
	const unsigned char *b = base;
	uint64_t n = size / BENCH_LINE;
	uint64_t off = (n ? start % n : 0) * BENCH_LINE;
	uint64_t cpu0 = bench_cpu_ns(), wall0 = bench_wall_ns();

	t->ops = 0;
	if (n == 0)
		return;
	do {
		for (unsigned i = 0; i < CHASE_BATCH; i++)
			off = *(const volatile uint64_t *)(const void *)(b + off);
		t->ops += CHASE_BATCH;
	} while (!phase_over(cpu0, wall0, budget_ns, t));
	bench_sink = off;
}

/*
 * A slot index from 32 random bits: (r * n) >> 32 maps them evenly onto [0, n) without a
 * division.  Regions of more than 2^32 slots (256 GiB) take the slower modulo.
 */
static inline uint64_t rmw_index(uint64_t r, uint64_t n)
{
	return n <= ((uint64_t)1 << 32) ? ((r >> 32) * n) >> 32 : (r >> 1) % n;
}

BENCH_UNINSTRUMENTED
void bench_rmw_run(void *base, size_t size, uint64_t seed, uint64_t budget_ns, struct bench_timing *t)
{
	uint64_t *w = base;
	uint64_t n = size / BENCH_LINE;
	uint64_t x = seed | 1;
	uint64_t cpu0 = bench_cpu_ns(), wall0 = bench_wall_ns();

	t->ops = 0;
	if (n == 0)
		return;
	do {
		for (unsigned i = 0; i < RMW_BATCH; i++) {
			/* Knuth's MMIX LCG: its high half is random enough to pick slots. */
			x = x * 6364136223846793005u + 1442695040888963407u;
			w[rmw_index(x, n) * (BENCH_LINE / 8) + 1]++;
		}
		t->ops += RMW_BATCH;
	} while (!phase_over(cpu0, wall0, budget_ns, t));
}

BENCH_UNINSTRUMENTED
void bench_touch(const void *base, size_t len, size_t stride, struct bench_timing *t)
{
	const unsigned char *b = base;
	uint64_t cpu0 = bench_cpu_ns(), wall0 = bench_wall_ns();
	uint64_t sum = 0;

	for (size_t off = 0; off + sizeof(uint64_t) <= len; off += stride)
		sum += *(const volatile uint64_t *)(const void *)(b + off);
	bench_sink = sum;
	t->ops = len;
	t->cpu_ns = bench_cpu_ns() - cpu0;
	t->wall_ns = bench_wall_ns() - wall0;
}

uint64_t bench_minflt(void)
{
	return hpshm__os_page_faults();
}
