/* SPDX-License-Identifier: MIT */
/*
 * httpd/store.c -- the subcaches, their cyclic index and data areas, and the lock that
 * survives a holder's death (store.h says what and why).
 *
 * Layout of the block: the header, then `nsub` subcaches of `stride` bytes each, every
 * subcache being its control block, `nidx` index entries, and `data_size` bytes of data.
 * Everything is an offset from the block or the subcache, so each process may map the
 * block at its own address.
 *
 * Invariants of a subcache, under its lock: the index holds idx_used entries from idx_pos
 * on (cyclic), oldest first; entry k's id and data start at data_pos plus the lengths of the
 * entries before it (cyclic), so the oldest entry always starts at data_pos and the data in
 * use is exactly data_used bytes.  A removed or expired entry in the middle keeps its bytes
 * (marked dead) until it reaches the front: dropping from the front is the only way bytes
 * are freed, which keeps both rings contiguous.
 */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HSTORE_MAGIC 0x68707363u /* "hpsc" */
#define HSTORE_LAYOUT 1u         /* changes with any change of the structs below */
#define HSTORE_ALIGN 64u         /* a cache line: two subcaches' locks never share one */
#define HSTORE_AVG_ENTRY 180u    /* shmcb's defaults: 150 bytes of object, 30 of id */
#define HSTORE_MIN_SUB ((size_t)512 * 1024) /* a subcache's smallest size when choosing N */
#define HSTORE_MAX_SUBS 64u
/* Spins before each yield, and how long a waiter waits before it asks whether the holder
 * lives: long enough that a holder merely descheduled on a busy machine is not suspected,
 * short enough that a dead one costs a request a fraction of a second once. */
#define HSTORE_SPINS 100
#define HSTORE_SUSPECT_NS 200000000LL

struct hstore_entry {
	uint32_t hash;     /* the id's hash: compared before the id itself */
	uint32_t offset;   /* where the id starts in the data area; the data follows it */
	uint32_t id_len;   /* bytes of id */
	uint32_t data_len; /* bytes of data */
	int64_t  expiry;   /* the caller's time at which it expires */
	uint32_t dead;     /* 1 once removed, replaced or expired: its bytes wait for the front */
	uint32_t pad;      /* keeps the entry 8-byte aligned */
};

struct hstore_sub {
	atomic_int lock;      /* the holder's process id, 0 when free */
	uint32_t dirty;       /* 1 while the holder changes the rings: a taker must reset them */
	uint32_t idx_pos;     /* the oldest entry's slot */
	uint32_t idx_used;    /* entries in the index, dead ones included */
	uint32_t data_pos;    /* the oldest entry's first byte */
	uint32_t data_used;   /* bytes in use from data_pos on */
	uint64_t live;        /* entries not dead */
	uint64_t stores;      /* counters: struct hstore_stats says what each counts */
	uint64_t hits;
	uint64_t misses;
	uint64_t evictions;
	uint64_t expired;
	uint64_t removes;
	uint64_t takeovers;
	uint64_t resets;
};

struct hstore {
	uint32_t magic;     /* HSTORE_MAGIC once formatted */
	uint32_t layout;    /* HSTORE_LAYOUT */
	uint32_t nsub;      /* subcaches: a power of two */
	uint32_t nidx;      /* index entries per subcache */
	uint64_t data_size; /* data bytes per subcache */
	uint64_t stride;    /* bytes from one subcache to the next */
	uint64_t bytes;     /* bytes of the whole layout */
};

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static size_t header_size(void)
{
	return round_up(sizeof(struct hstore), HSTORE_ALIGN);
}

static struct hstore_sub *sub_at(hstore *st, uint32_t i)
{
	return (struct hstore_sub *)((unsigned char *)st + header_size() + (size_t)i * st->stride);
}

static struct hstore_entry *entries(struct hstore_sub *sb)
{
	return (struct hstore_entry *)((unsigned char *)sb + round_up(sizeof(*sb), HSTORE_ALIGN));
}

static unsigned char *data_area(const hstore *st, struct hstore_sub *sb)
{
	return (unsigned char *)entries(sb) + (size_t)st->nidx * sizeof(struct hstore_entry);
}

/* FNV-1a: short ids (session ids, URLs) spread well over a power-of-two table. */
static uint32_t hash_id(const unsigned char *id, unsigned len)
{
	uint32_t h = 2166136261u;

	for (unsigned i = 0; i < len; i++)
		h = (h ^ id[i]) * 16777619u;
	return h;
}

int hstore_format(void *mem, size_t bytes, unsigned subcaches, size_t avg_entry)
{
	hstore *st = mem;
	size_t ctl = round_up(sizeof(struct hstore_sub), HSTORE_ALIGN), stride, nidx;

	if (avg_entry == 0)
		avg_entry = HSTORE_AVG_ENTRY;
	if (subcaches == 0) {
		subcaches = HSTORE_MAX_SUBS;
		while (subcaches > 1 && bytes / subcaches < HSTORE_MIN_SUB)
			subcaches /= 2;
	}
	if (bytes < header_size() || (subcaches & (subcaches - 1)) != 0)
		return HSTORE_BADSIZE;
	stride = (bytes - header_size()) / subcaches / HSTORE_ALIGN * HSTORE_ALIGN;
	/* The data area holds offsets of 32 bits: a subcache beyond 4 GiB gains nothing. */
	if (stride > UINT32_MAX)
		stride = (size_t)UINT32_MAX / HSTORE_ALIGN * HSTORE_ALIGN;
	if (stride <= ctl + sizeof(struct hstore_entry))
		return HSTORE_BADSIZE;
	nidx = (stride - ctl) / (sizeof(struct hstore_entry) + avg_entry);
	if (nidx == 0)
		nidx = 1;
	memset(st, 0, header_size());
	st->nsub = subcaches;
	st->nidx = (uint32_t)nidx;
	st->data_size = stride - ctl - nidx * sizeof(struct hstore_entry);
	st->stride = stride;
	st->bytes = header_size() + stride * subcaches;
	for (uint32_t i = 0; i < subcaches; i++) {
		memset(sub_at(st, i), 0, ctl);
		atomic_init(&sub_at(st, i)->lock, 0);
	}
	st->layout = HSTORE_LAYOUT;
	st->magic = HSTORE_MAGIC;
	return HSTORE_OK;
}

hstore *hstore_open(void *mem, size_t bytes)
{
	hstore *st = mem;

	if (bytes < header_size() || st->magic != HSTORE_MAGIC || st->layout != HSTORE_LAYOUT || st->bytes > bytes)
		return NULL;
	return st;
}

/* ---- the lock ---------------------------------------------------------------------------- */

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* An emptied subcache: what a taker does when the dead holder left the rings half changed. */
static void sub_reset(struct hstore_sub *sb)
{
	sb->idx_pos = sb->idx_used = 0;
	sb->data_pos = sb->data_used = 0;
	sb->live = 0;
	sb->dirty = 0;
	sb->resets++;
}

/* Take the word from a holder that no longer exists.  kill(pid, 0) failing with ESRCH is the
 * only proof of death; EPERM (another user's process) means it lives.  The compare-exchange
 * lets one waiter win when several suspect the same corpse. */
static int take_over(struct hstore_sub *sb, int me)
{
	int holder = atomic_load_explicit(&sb->lock, memory_order_relaxed);

	if (holder == 0 || holder == me || kill((pid_t)holder, 0) == 0 || errno != ESRCH)
		return 0;
	if (!atomic_compare_exchange_strong_explicit(&sb->lock, &holder, me, memory_order_acquire,
						     memory_order_relaxed))
		return 0;
	if (sb->dirty)
		sub_reset(sb);
	sb->takeovers++;
	return 1;
}

/* This process's id, read once and again after each fork: getpid() is a system call, and a
 * lock taken twice per request must not cost one (it made the store 1.5 times slower than
 * shmcb under its mutex).  glibc drops the fork handler when httpd unloads the module at a
 * restart (dlclose), and musl never unloads. */
static atomic_int self_pid;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_refresh(void)
{
	atomic_store_explicit(&self_pid, (int)getpid(), memory_order_relaxed);
}

static void self_init(void)
{
	self_refresh();
	(void)pthread_atfork(NULL, NULL, self_refresh);
}

static int self(void)
{
	(void)pthread_once(&self_once, self_init);
	return atomic_load_explicit(&self_pid, memory_order_relaxed);
}

static void sub_lock(struct hstore_sub *sb)
{
	int me = self(), expected = 0;
	int64_t since = 0;

	if (atomic_compare_exchange_weak_explicit(&sb->lock, &expected, me, memory_order_acquire,
						  memory_order_relaxed))
		return;
	for (;;) {
		for (int i = 0; i < HSTORE_SPINS; i++) {
			expected = 0;
			if (atomic_load_explicit(&sb->lock, memory_order_relaxed) == 0 &&
			    atomic_compare_exchange_weak_explicit(&sb->lock, &expected, me, memory_order_acquire,
								  memory_order_relaxed))
				return;
		}
		sched_yield();
		if (since == 0)
			since = monotonic_ns();
		else if (monotonic_ns() - since > HSTORE_SUSPECT_NS) {
			if (take_over(sb, me))
				return;
			since = monotonic_ns();
		}
	}
}

static void sub_unlock(struct hstore_sub *sb)
{
	atomic_store_explicit(&sb->lock, 0, memory_order_release);
}

/* ---- the rings ------------------------------------------------------------------------- */

static void ring_write(const hstore *st, struct hstore_sub *sb, size_t at, const unsigned char *src, size_t n)
{
	unsigned char *area = data_area(st, sb);
	size_t first = st->data_size - at < n ? st->data_size - at : n;

	memcpy(area + at, src, first);
	memcpy(area, src + first, n - first);
}

static void ring_read(const hstore *st, struct hstore_sub *sb, size_t at, unsigned char *dst, size_t n)
{
	unsigned char *area = data_area(st, sb);
	size_t first = st->data_size - at < n ? st->data_size - at : n;

	memcpy(dst, area + at, first);
	memcpy(dst + first, area, n - first);
}

static int ring_equal(const hstore *st, struct hstore_sub *sb, size_t at, const unsigned char *id, size_t n)
{
	unsigned char *area = data_area(st, sb);
	size_t first = st->data_size - at < n ? st->data_size - at : n;

	return memcmp(area + at, id, first) == 0 && memcmp(area, id + first, n - first) == 0;
}

static struct hstore_entry *entry_at(const hstore *st, struct hstore_sub *sb, uint32_t k)
{
	return &entries(sb)[(sb->idx_pos + k) % st->nidx];
}

/* Drop the oldest entry, freeing its bytes. */
static void drop_front(const hstore *st, struct hstore_sub *sb, int64_t now)
{
	struct hstore_entry *e = entry_at(st, sb, 0);
	uint32_t len = e->id_len + e->data_len;

	if (!e->dead) {
		sb->live--;
		if (e->expiry <= now)
			sb->expired++;
		else
			sb->evictions++;
	}
	sb->data_pos = (uint32_t)((sb->data_pos + len) % st->data_size);
	sb->data_used -= len;
	sb->idx_pos = (sb->idx_pos + 1) % st->nidx;
	sb->idx_used--;
}

static void mark_dead(struct hstore_sub *sb, struct hstore_entry *e)
{
	e->dead = 1;
	sb->live--;
}

/* The live entry with this id, or NULL. */
static struct hstore_entry *find(const hstore *st, struct hstore_sub *sb, uint32_t h, const unsigned char *id,
				 unsigned idlen)
{
	for (uint32_t k = 0; k < sb->idx_used; k++) {
		struct hstore_entry *e = entry_at(st, sb, k);

		if (!e->dead && e->hash == h && e->id_len == idlen && ring_equal(st, sb, e->offset, id, idlen))
			return e;
	}
	return NULL;
}

static struct hstore_sub *sub_for(hstore *st, uint32_t h)
{
	return sub_at(st, h & (st->nsub - 1));
}

int hstore_put(hstore *st, const unsigned char *id, unsigned idlen, int64_t expiry, const unsigned char *data,
	       unsigned datalen, int64_t now)
{
	uint32_t h = hash_id(id, idlen);
	struct hstore_sub *sb = sub_for(st, h);
	struct hstore_entry *e;
	uint64_t need = (uint64_t)idlen + datalen;

	if (need > st->data_size || need == 0)
		return HSTORE_TOOBIG;
	sub_lock(sb);
	sb->dirty = 1;
	while (sb->idx_used > 0 && (entry_at(st, sb, 0)->dead || entry_at(st, sb, 0)->expiry <= now))
		drop_front(st, sb, now);
	e = find(st, sb, h, id, idlen);
	if (e)
		mark_dead(sb, e);
	while (sb->idx_used == st->nidx || st->data_size - sb->data_used < need)
		drop_front(st, sb, now);
	e = entry_at(st, sb, sb->idx_used);
	e->hash = h;
	e->offset = (uint32_t)((sb->data_pos + sb->data_used) % st->data_size);
	e->id_len = idlen;
	e->data_len = datalen;
	e->expiry = expiry;
	e->dead = 0;
	ring_write(st, sb, e->offset, id, idlen);
	ring_write(st, sb, (e->offset + idlen) % st->data_size, data, datalen);
	sb->idx_used++;
	sb->data_used += (uint32_t)need;
	sb->live++;
	sb->stores++;
	sb->dirty = 0;
	sub_unlock(sb);
	return HSTORE_OK;
}

int hstore_get(hstore *st, const unsigned char *id, unsigned idlen, unsigned char *buf, unsigned *len,
	       int64_t now)
{
	uint32_t h = hash_id(id, idlen);
	struct hstore_sub *sb = sub_for(st, h);
	struct hstore_entry *e;
	int rc = HSTORE_NOTFOUND;

	sub_lock(sb);
	e = find(st, sb, h, id, idlen);
	if (e && e->expiry <= now) {
		mark_dead(sb, e); /* one word: no ring changes, so no dirty flag */
		sb->expired++;
	} else if (e && e->data_len <= *len) {
		ring_read(st, sb, (e->offset + idlen) % st->data_size, buf, e->data_len);
		*len = e->data_len;
		rc = HSTORE_OK;
	}
	if (rc == HSTORE_OK)
		sb->hits++;
	else
		sb->misses++;
	sub_unlock(sb);
	return rc;
}

int hstore_remove(hstore *st, const unsigned char *id, unsigned idlen, int64_t now)
{
	uint32_t h = hash_id(id, idlen);
	struct hstore_sub *sb = sub_for(st, h);
	struct hstore_entry *e;

	(void)now;
	sub_lock(sb);
	e = find(st, sb, h, id, idlen);
	if (e) {
		mark_dead(sb, e);
		sb->removes++;
	}
	sub_unlock(sb);
	return e ? HSTORE_OK : HSTORE_NOTFOUND;
}

void hstore_stats_get(hstore *st, struct hstore_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->subcaches = st->nsub;
	out->index_per = st->nidx;
	out->data_per = (size_t)st->data_size;
	for (uint32_t i = 0; i < st->nsub; i++) {
		struct hstore_sub *sb = sub_at(st, i);

		sub_lock(sb);
		out->entries += sb->live;
		out->data_used += sb->data_used;
		out->stores += sb->stores;
		out->hits += sb->hits;
		out->misses += sb->misses;
		out->evictions += sb->evictions;
		out->expired += sb->expired;
		out->removes += sb->removes;
		out->takeovers += sb->takeovers;
		out->resets += sb->resets;
		sub_unlock(sb);
	}
}

size_t hstore_scratch_size(const hstore *st)
{
	return (size_t)st->nidx * sizeof(struct hstore_entry) + (size_t)st->data_size;
}

/* Copy a subcache's live, unexpired entries (compacted) into scratch; return how many. */
static uint32_t snapshot(hstore *st, struct hstore_sub *sb, int64_t now, unsigned char *scratch)
{
	struct hstore_entry *copy = (struct hstore_entry *)scratch;
	unsigned char *bytes = scratch + (size_t)st->nidx * sizeof(struct hstore_entry);
	uint32_t n = 0, at = 0;

	sub_lock(sb);
	for (uint32_t k = 0; k < sb->idx_used; k++) {
		struct hstore_entry *e = entry_at(st, sb, k);
		uint32_t len = e->id_len + e->data_len;

		if (e->dead || e->expiry <= now)
			continue;
		copy[n] = *e;
		copy[n].offset = at;
		ring_read(st, sb, e->offset, bytes + at, len);
		at += len;
		n++;
	}
	sub_unlock(sb);
	return n;
}

int hstore_iterate(hstore *st, int64_t now, void *scratch, hstore_iter_fn fn, void *user)
{
	const struct hstore_entry *copy = scratch;
	const unsigned char *bytes = (unsigned char *)scratch + (size_t)st->nidx * sizeof(struct hstore_entry);

	for (uint32_t i = 0; i < st->nsub; i++) {
		uint32_t n = snapshot(st, sub_at(st, i), now, scratch);

		for (uint32_t k = 0; k < n; k++) {
			const struct hstore_entry *e = &copy[k];
			int rc = fn(user, bytes + e->offset, e->id_len, bytes + e->offset + e->id_len, e->data_len,
				    e->expiry);

			if (rc != 0)
				return rc;
		}
	}
	return 0;
}
