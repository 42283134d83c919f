/* SPDX-License-Identifier: MIT */
/*
 * httpd/store.h -- the small-object store of mod_socache_hpshm, on any shared memory.
 *
 * The store knows nothing of httpd or of hpshm: it formats a block of memory it is given
 * (the module gives it an hpshm segment; the tests give it plain or hpshm memory) and is then
 * used by every process and thread that maps that block, at any address (it holds offsets,
 * never pointers).
 *
 * Shape (mod_socache_shmcb's, which has served TLS session caches for two decades): the
 * block is split into N subcaches, N a power of two, an object going to the subcache its id
 * hashes to.  Each subcache has its own lock, a cyclic index of entries in the order they
 * were stored, and a cyclic data area where each entry's id and data lie side by side.  A
 * store that lacks room drops the oldest entries; expired entries are dropped when a lookup
 * meets them, or when they reach the front.  An object up to one subcache's data area fits.
 *
 * Locks: a word per subcache holding the holder's process id (C11 atomics: spin, then
 * yield).  A waiter that has waited long asks the OS whether the holder still lives; if it
 * died (a worker SIGKILLed inside a store) the waiter takes the lock over, and if the dead
 * holder was modifying the subcache (its dirty flag) the subcache is emptied, so a killed
 * process neither deadlocks the cache nor leaves it corrupt.  Threads of one process share
 * the id: for them the word is an ordinary spin lock.
 *
 * Time is the caller's: every call that may meet expired entries takes `now`, in the same
 * unit as the expiry given to hstore_put() (the module passes APR's microseconds).
 */
#ifndef HPSHM_HTTPD_STORE_H
#define HPSHM_HTTPD_STORE_H

#include <stddef.h>
#include <stdint.h>

/** What the calls return. */
enum hstore_result {
	HSTORE_OK = 0,        /**< done */
	HSTORE_NOTFOUND = -1, /**< no such id (or expired, or larger than the caller's buffer) */
	HSTORE_TOOBIG = -2,   /**< id and data together exceed a subcache's data area */
	HSTORE_BADSIZE = -3   /**< the block is too small for one subcache with one entry */
};

/** The counters and geometry the status page shows. */
struct hstore_stats {
	unsigned subcaches;   /**< number of subcaches */
	unsigned index_per;   /**< index entries per subcache */
	size_t   data_per;    /**< data bytes per subcache: the largest object (with its id) */
	uint64_t entries;     /**< live entries now (expired ones not yet met included) */
	uint64_t data_used;   /**< bytes of the data areas in use */
	uint64_t stores;      /**< successful hstore_put() calls */
	uint64_t hits;        /**< hstore_get() calls that found their object */
	uint64_t misses;      /**< hstore_get() calls that did not */
	uint64_t evictions;   /**< live entries dropped to make room */
	uint64_t expired;     /**< entries dropped because they expired */
	uint64_t removes;     /**< hstore_remove() calls that removed an entry */
	uint64_t takeovers;   /**< locks taken over from a process that died holding them */
	uint64_t resets;      /**< subcaches emptied because their holder died modifying them */
};

/** An opened store: the block's address, as this process maps it. */
typedef struct hstore hstore;

/**
 * The callback of hstore_iterate(): one live, unexpired entry.  Return 0 to go on, anything
 * else to stop (hstore_iterate() then returns it).  It runs with no lock held, so it may call
 * the store itself.
 */
typedef int (*hstore_iter_fn)(void *user, const unsigned char *id, unsigned idlen, const unsigned char *data,
			      unsigned datalen, int64_t expiry);

/**
 * Format a block as an empty store.
 * @param mem       the block, aligned to 64 bytes (a page is)
 * @param bytes     its size
 * @param subcaches a power of two, or 0 to choose from the size (more subcaches, fewer waits)
 * @param avg_entry expected id plus data bytes of an entry (sizes the index), 0 for 180
 * @return HSTORE_OK, or HSTORE_BADSIZE
 */
int hstore_format(void *mem, size_t bytes, unsigned subcaches, size_t avg_entry);

/**
 * The store formatted in a block, or NULL if the block holds none (no magic, another layout
 * version, or a geometry larger than bytes).
 */
hstore *hstore_open(void *mem, size_t bytes);

/**
 * Store an object, replacing one with the same id; drops the oldest entries of its subcache
 * as needed.  Entries whose expiry is at or before now are expired.
 */
int hstore_put(hstore *st, const unsigned char *id, unsigned idlen, int64_t expiry, const unsigned char *data,
	       unsigned datalen, int64_t now);

/**
 * Copy an object out.  On entry *len is the buffer's size; on HSTORE_OK it is the object's.
 * An object larger than the buffer is not found (as shmcb does).
 */
int hstore_get(hstore *st, const unsigned char *id, unsigned idlen, unsigned char *buf, unsigned *len,
	       int64_t now);

/** Remove an object: HSTORE_OK, or HSTORE_NOTFOUND. */
int hstore_remove(hstore *st, const unsigned char *id, unsigned idlen, int64_t now);

/** Sum the counters of every subcache (each read under its lock). */
void hstore_stats_get(hstore *st, struct hstore_stats *out);

/** Bytes of scratch memory hstore_iterate() needs: one subcache's index and data. */
size_t hstore_scratch_size(const hstore *st);

/**
 * Call fn for every live, unexpired entry.  Each subcache is copied into scratch under its
 * lock, then walked without it.
 * @return 0, or the first non-zero value fn returned
 */
int hstore_iterate(hstore *st, int64_t now, void *scratch, hstore_iter_fn fn, void *user);

#endif
