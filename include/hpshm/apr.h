/* SPDX-License-Identifier: MIT */
/**
 * @file hpshm/apr.h
 * @brief libhpshm_apr: pools, apr_status_t and apr_shm's calls on hpshm segments.
 *
 * hpshm/apr.h -- hpshm for programs written on the Apache Portable Runtime (libhpshm_apr).
 *
 * A layer on hpshm's public API (hpshm.h, hpshm/provider.h) and APR, built only where APR
 * is found; the core never depends on APR.  Four parts (doc/apr.md):
 *   - segments whose lifetime follows an apr_pool_t (the core's owner rule holds: a pool
 *     cleared in a forked child only detaches);
 *   - hpshm's error codes as apr_status_t, both ways, with hpshm's texts;
 *   - configurations from a string or an apr_table_t, freed with a pool;
 *   - hpshm_apr_shm_*, apr_shm's calls on hpshm segments, so a module switches in a few lines;
 * and the `apr` provider: plain shared memory through apr_shm, for systems hpshm has no port
 * for but APR runs on.
 */
#ifndef HPSHM_APR_H
#define HPSHM_APR_H

#include <apr_errno.h>
#include <apr_pools.h>
#include <apr_tables.h>

#include "../hpshm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @addtogroup grp_apr
 *  @{ */

/** Marks libhpshm_apr's public functions (exported from a library built with hidden visibility). */
#if defined(__GNUC__) && !defined(_WIN32)
#define HPSHM_APR_API __attribute__((visibility("default")))
#else
#define HPSHM_APR_API
#endif

/**
 * Where hpshm's own statuses start: APR_OS_START_USERERR + 4200.  hpshm_apr_status() gives
 * HPSHM_APR_START_ERROR - code for every code without an APR equivalent, so codes -1 to -16
 * are HPSHM_APR_START_ERROR + 1 to + 16.  The range reserved is + 0 to + 99 past it (APR's
 * list of known ranges: httpd takes + 2000 to + 2999, Subversion + 5000 and up).
 */
#define HPSHM_APR_START_ERROR (APR_OS_START_USERERR + 4200)
/** How many statuses from HPSHM_APR_START_ERROR on are hpshm's. */
#define HPSHM_APR_ERRSPACE_SIZE 100

/**
 * An hpshm code as an apr_status_t.  0 is APR_SUCCESS; the codes APR has a name for map to
 * it (HPSHM_ENOMEM: APR_ENOMEM, HPSHM_EACCES: APR_EACCES, HPSHM_ENOENT: APR_ENOENT,
 * HPSHM_EEXIST: APR_EEXIST, HPSHM_EINVAL: APR_EINVAL, HPSHM_ENOTSUP: APR_ENOTIMPL); every
 * other one to HPSHM_APR_START_ERROR - code, so hpshm_apr_code() gives it back.
 * @param hpshm_code 0 or a negative HPSHM_E* code
 * @return the status; a positive code, or one past the range (hpshm's go to -16), is
 *         HPSHM_APR_START_ERROR + HPSHM_APR_ERRSPACE_SIZE - 1, never APR_SUCCESS
 */
HPSHM_APR_API apr_status_t hpshm_apr_status(int hpshm_code);

/**
 * An apr_status_t as an hpshm code: the inverse of hpshm_apr_status() for every code it gives.
 * @param st a status
 * @return 0 for APR_SUCCESS; the HPSHM_E* code of a status of hpshm's range or of the six
 *         APR statuses hpshm_apr_status() uses; HPSHM_ESYS for any other status
 */
HPSHM_APR_API int hpshm_apr_code(apr_status_t st);

/**
 * The text of a status: hpshm's (hpshm_strerror()) for the statuses of hpshm's range,
 * apr_strerror()'s for every other one.
 * @param st  the status
 * @param buf where to write it, NUL-terminated
 * @param len size of buf
 * @return buf
 */
HPSHM_APR_API char *hpshm_apr_strerror(apr_status_t st, char *buf, apr_size_t len);

/**
 * Create a segment (hpshm_segment_create()) that lives as long as pool: clearing or
 * destroying the pool runs hpshm_segment_destroy(), which removes the segment in its owner
 * and only detaches in a process that inherited it by fork() (doc/lifecycle.md).  A child
 * started by apr_proc_create() detaches it before exec (the pool's child cleanup), never
 * removing it.
 * @param[out] out the segment
 * @param size bytes wanted (> 0)
 * @param cfg  the configuration, or NULL for the defaults
 * @param pool the pool whose cleanup releases the segment
 * @param err  filled on failure (message and hint), may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure
 */
HPSHM_APR_API apr_status_t hpshm_apr_segment_create(hpshm_segment **out, apr_size_t size, const hpshm_config *cfg,
						  apr_pool_t *pool, hpshm_error *err);

/**
 * Open a named segment (hpshm_segment_open()) for as long as pool lives: its cleanup
 * detaches (this process is not the owner), as does the child cleanup.
 * @param[out] out the segment
 * @param name the segment's name
 * @param cfg  the configuration, or NULL
 * @param pool the pool whose cleanup detaches the segment
 * @param err  filled on failure, may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure (APR_ENOENT: no such segment)
 */
HPSHM_APR_API apr_status_t hpshm_apr_segment_open(hpshm_segment **out, const char *name, const hpshm_config *cfg,
						apr_pool_t *pool, hpshm_error *err);

/**
 * Attach a segment by token (hpshm_segment_attach()) for as long as pool lives: its cleanup
 * detaches, as does the child cleanup.
 * @param[out] out the segment
 * @param token the creator's token
 * @param cfg   the configuration, or NULL
 * @param pool  the pool whose cleanup detaches the segment
 * @param err   filled on failure, may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure
 */
HPSHM_APR_API apr_status_t hpshm_apr_segment_attach(hpshm_segment **out, const char *token,
						  const hpshm_config *cfg, apr_pool_t *pool, hpshm_error *err);

/**
 * Destroy a segment of pool now (hpshm_segment_destroy()) and take its cleanups off pool.
 * @param seg  a segment from hpshm_apr_segment_create(), _open() or _attach()
 * @param pool the pool it was given
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure (the handle is freed anyway)
 */
HPSHM_APR_API apr_status_t hpshm_apr_segment_destroy(hpshm_segment *seg, apr_pool_t *pool);

/**
 * Detach a segment of pool now (hpshm_segment_detach(): the object stays, even in its owner)
 * and take its cleanups off pool.
 * @param seg  a segment from hpshm_apr_segment_create(), _open() or _attach()
 * @param pool the pool it was given
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure (the handle is freed anyway)
 */
HPSHM_APR_API apr_status_t hpshm_apr_segment_detach(hpshm_segment *seg, apr_pool_t *pool);

/**
 * A configuration from "key=value,key=value" text (hpshm_config_parse()), freed when pool
 * is cleared or destroyed.
 * @param[out] out the configuration; NULL on failure
 * @param text the text (NULL or empty: the defaults)
 * @param pool the pool whose cleanup frees it
 * @param err  filled on failure (err->key names the key at fault), may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure
 */
HPSHM_APR_API apr_status_t hpshm_apr_config_parse(hpshm_config **out, const char *text, apr_pool_t *pool,
						hpshm_error *err);

/**
 * A configuration from an apr_table_t (an httpd directive's arguments, say): each key and
 * value in the table's order through hpshm_config_set(), freed when pool is cleared or
 * destroyed.
 * @param[out] out the configuration; NULL on failure
 * @param table the keys and values (NULL: the defaults)
 * @param pool  the pool whose cleanup frees it
 * @param err   filled on failure: an unknown key or a bad value is named in err->key and
 *              err->message; may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure
 */
HPSHM_APR_API apr_status_t hpshm_apr_config_table(hpshm_config **out, const apr_table_t *table, apr_pool_t *pool,
						hpshm_error *err);

/** apr_shm_t's counterpart: an hpshm segment behind apr_shm's calls. */
typedef struct hpshm_apr_shm_t hpshm_apr_shm_t;

/**
 * The hpshm name an APR filename maps to: "apr-" then the filename's last component with
 * every byte outside A-Z a-z 0-9 . _ - turned into '_' (at most 64 bytes), then '-' and 16
 * hex digits of a 64-bit FNV-1a hash of the whole filename.  The same filename text gives
 * the same name in every process; two texts that name one file ("x.shm", "./x.shm") give two.
 * @param filename the APR filename
 * @param buf      where to write the name
 * @param len      size of buf (HPSHM_APR_SHM_NAME_MAX is enough)
 * @return buf, or NULL if filename is NULL or buf too short
 */
HPSHM_APR_API char *hpshm_apr_shm_name(const char *filename, char *buf, apr_size_t len);

/** Size of a buffer that holds any name hpshm_apr_shm_name() makes, with its NUL. */
#define HPSHM_APR_SHM_NAME_MAX 96

/**
 * apr_shm_create() on hpshm: a segment of at least reqsize bytes, named after filename
 * (hpshm_apr_shm_name()) or unnamed when filename is NULL (shared with children made by
 * fork() only, as APR's anonymous memory is).  The configuration is hpshm's defaults with
 * the environment's HPSHM_<KEY> variables over them.  Destroyed (the name removed) when pool
 * is cleared in the creator; a forked child's clear only detaches.
 * @param[out] m the segment
 * @param reqsize  bytes wanted (> 0)
 * @param filename the name to give it, or NULL
 * @param pool     the pool whose cleanup destroys it
 * @return APR_SUCCESS, APR_EEXIST (the name is taken), or another status
 */
HPSHM_APR_API apr_status_t hpshm_apr_shm_create(hpshm_apr_shm_t **m, apr_size_t reqsize, const char *filename,
					      apr_pool_t *pool);

/**
 * hpshm_apr_shm_create() with a configuration over the defaults and the environment, and the
 * error record.
 * @param[out] m the segment
 * @param reqsize  bytes wanted (> 0)
 * @param filename the name to give it, or NULL
 * @param pool     the pool whose cleanup destroys it
 * @param config   "key=value,..." (hpshm_config_parse()) applied last, or NULL
 * @param err      filled on failure, may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure
 */
HPSHM_APR_API apr_status_t hpshm_apr_shm_create_ex(hpshm_apr_shm_t **m, apr_size_t reqsize, const char *filename,
						 apr_pool_t *pool, const char *config, hpshm_error *err);

/**
 * apr_shm_attach() on hpshm: open the segment another process created with filename
 * (hpshm_segment_open() of hpshm_apr_shm_name()), detached when pool is cleared.
 * @param[out] m the segment
 * @param filename the creator's filename
 * @param pool     the pool whose cleanup detaches it
 * @return APR_SUCCESS, APR_ENOENT (no such segment), or another status
 */
HPSHM_APR_API apr_status_t hpshm_apr_shm_attach(hpshm_apr_shm_t **m, const char *filename, apr_pool_t *pool);

/**
 * hpshm_apr_shm_attach() with a configuration and the error record.
 * @param[out] m the segment
 * @param filename the creator's filename
 * @param pool     the pool whose cleanup detaches it
 * @param config   "key=value,..." applied over the defaults and the environment, or NULL
 * @param err      filled on failure, may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure
 */
HPSHM_APR_API apr_status_t hpshm_apr_shm_attach_ex(hpshm_apr_shm_t **m, const char *filename, apr_pool_t *pool,
						 const char *config, hpshm_error *err);

/**
 * apr_shm_destroy(): in the creator, unmap the segment and remove its name; elsewhere only
 * detach (hpshm's owner rule; apr_shm would remove the name from any process).
 * @param m the segment; invalid afterwards
 * @return APR_SUCCESS, or another status
 */
HPSHM_APR_API apr_status_t hpshm_apr_shm_destroy(hpshm_apr_shm_t *m);

/**
 * apr_shm_detach(): unmap the segment in this process; the name stays.
 * @param m the segment; invalid afterwards
 * @return APR_SUCCESS, or another status
 */
HPSHM_APR_API apr_status_t hpshm_apr_shm_detach(hpshm_apr_shm_t *m);

/**
 * apr_shm_baseaddr_get(): the segment's first usable byte, aligned to its page size.
 * @param m the segment
 * @return the address
 */
HPSHM_APR_API void *hpshm_apr_shm_baseaddr_get(const hpshm_apr_shm_t *m);

/**
 * apr_shm_size_get(): the usable size, hpshm_segment_size(): at least the creator's reqsize,
 * rounded up to whole pages (apr_shm gives reqsize exactly).
 * @param m the segment
 * @return bytes
 */
HPSHM_APR_API apr_size_t hpshm_apr_shm_size_get(const hpshm_apr_shm_t *m);

/**
 * The hpshm segment behind m, for hpshm's other calls (hpshm_segment_report(), a token).
 * @param m the segment
 * @return the segment; m keeps owning it
 */
HPSHM_APR_API hpshm_segment *hpshm_apr_shm_segment(const hpshm_apr_shm_t *m);

/**
 * Register the `apr` provider: plain shared memory through apr_shm_create() (anonymous,
 * base pages, no name, no re-attach), for systems where hpshm has no port but APR runs.
 * Initializes APR (apr_initialize(), never undone: the provider stays registered).  The same
 * library is also a provider module: HPSHM_PROVIDER_MODULES=/path/libhpshm_apr.so.  Like every
 * registered provider it comes first in provider=auto, before the huge page providers: register
 * it where it is meant to be used, or leave it out with provider=auto,-apr (doc/apr.md).
 * @param err filled on failure, may be NULL
 * @return APR_SUCCESS, or hpshm_apr_status() of the failure (APR_EEXIST: already registered)
 */
HPSHM_APR_API apr_status_t hpshm_apr_provider_register(hpshm_error *err);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* HPSHM_APR_H */
