/*
 * hpshm/provider.h -- what every provider implements.
 *
 * A provider wraps one mechanism for shared memory (MAP_HUGETLB, SysV SHM_HUGETLB, a
 * hugetlbfs file, a memfd, Windows SEC_LARGE_PAGES, a plain mapping, or an application's own).
 * The built-in providers sit in one ordered table in core/; an application adds its own with
 * hpshm_provider_register().
 *
 * The core guarantees on every call:
 *   - pointers are non-NULL, except rq->name, rq->hugetlbfs_path and rq->address, which may be;
 *   - rq->size is > 0 and a multiple of rq->page_size;
 *   - rq->page_size is one the kernel offers (a huge size for HPSHM_CAP_HUGE providers, the
 *     base page size for the others);
 *   - err is non-NULL, and the core records it in the segment's report.
 *
 * Every int-returning member returns 0 or a negative HPSHM_E* code.  probe() and create()
 * return HPSHM_EUNAVAILABLE, and log nothing, when the mechanism cannot work here (empty pool,
 * missing mount, missing privilege): the core then tries the next provider.  Any other code
 * is a real failure, which under huge_pages=try still moves on, recorded.
 *
 * A provider never populates: the core faults pages in after create() when populate says so,
 * using m->fd where there is one.  A provider never passes MAP_NORESERVE/SHM_NORESERVE for
 * huge pages: a reservation taken at create time is what keeps SIGBUS away.
 *
 * ABI: the first member is abi_version; members are only ever appended, and the core reads a
 * member only when abi_version says the provider has it.  ABI 1 is probe/create/destroy; ABI 2
 * adds re-attach after exec (identify/attach/detach) and named-object housekeeping
 * (scan/remove).  A provider without HPSHM_CAP_REATTACH leaves the ABI 2 members NULL.
 *
 * Re-attach: the core chooses the address, maps the segment one header region larger than
 * asked (struct hpshm_header at the tail, never in front of the caller's pointer), and passes
 * the child a token holding identify()'s text.  In the child attach() must map exactly at
 * rq->address or fail: never elsewhere, never over an existing mapping (MAP_FIXED_NOREPLACE,
 * shmat without SHM_REMAP).  The core then checks the header and the page size.
 *
 * Liveness of named objects: every process that maps a named file-backed segment holds a
 * shared flock() on its descriptor; a SysV segment counts its attachments (shm_nattch).  So
 * scan() can tell a segment whose processes all died (dead: safe to remove) from a live one.
 */
#ifndef HPSHM_PROVIDER_H
#define HPSHM_PROVIDER_H

#include "../hpshm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @file hpshm/provider.h
 *  @brief The provider SDK: the versioned interface a backend implements. */

/** The provider ABI this header describes. */
#define HPSHM_PROVIDER_ABI 2

/** Longest path a mapping records, with its NUL. */
#define HPSHM_PATH_MAX 256

/** What the core asks a provider for. */
struct hpshm_request {
	size_t      size;           /**< bytes, > 0, a multiple of page_size */
	size_t      page_size;      /**< the page size to use */
	const char *name;           /**< the segment's name (config key name), or NULL */
	unsigned    mode;           /**< permissions of named objects (config key mode) */
	void       *address;        /**< where to map (config key base_address), or NULL */
	const char *hugetlbfs_path; /**< directory overriding mount discovery, or NULL */
};

/** A provider's answer to probe(). */
struct hpshm_probe {
	int  sys_errno;              /**< errno behind the verdict, 0 if none */
	char reason[HPSHM_TEXT_MAX]; /**< why it cannot work here; empty when it can */
};

/** The header magic, at the start of struct hpshm_header. */
#define HPSHM_HEADER_MAGIC "HPSHMSEG"
/** The header's format version: 2 added creator_address. */
#define HPSHM_HEADER_VERSION 2
/** Bytes the core reserves at the tail of a re-attachable or named segment for its header. */
#define HPSHM_HEADER_REGION 4096

/**
 * What the core writes at the tail of a re-attachable or named segment, so an attaching
 * process, `hpshm ls` and `hpshm gc` can tell what an object is and whose.  Fixed-width,
 * little-endian as the machine is: only processes on this machine read it.
 *
 * Reading rules: the magic says the object is hpshm's, whatever the version.  Members are
 * only ever appended, so those of version 1 (up to name) are at the same place in every
 * version and a reader that needs only them (scan(), `hpshm ls`, `hpshm gc`) checks the
 * magic alone.  A member appended in version N may be read only when version >= N and
 * header_size covers it; attach needs creator_address, so it refuses a version 1 header,
 * naming the version.  A layout that cannot keep these rules gets another magic.
 */
struct hpshm_header {
	char     magic[8];                 /**< HPSHM_HEADER_MAGIC, not NUL-terminated */
	uint32_t version;                  /**< HPSHM_HEADER_VERSION */
	uint32_t header_size;              /**< sizeof(struct hpshm_header) when written */
	uint64_t usable_size;              /**< bytes before the header region */
	uint64_t page_size;                /**< page size the creator verified */
	uint64_t nonce;                    /**< random; the token carries the same value */
	int64_t  creator_pid;              /**< the creating process */
	uint64_t creator_start;            /**< its start time (clock ticks since boot on Linux) */
	uint64_t created_unix;             /**< creation time, seconds since the epoch */
	char     boot_id[40];              /**< the boot it was created in (NUL-terminated) */
	char     provider[HPSHM_NAME_MAX]; /**< provider name (NUL-terminated) */
	char     name[128];                /**< segment name, or empty (NUL-terminated) */
	/* ---- version 2 ---- */
	uint64_t creator_address;          /**< where the creator mapped the segment: a child must map it there too */
};

/**
 * @name What says whose an object is (hpshm_found.has_header)
 * Only an object that proves it is hpshm's is removed by default: one with hpshm's header, or
 * one that carries the mark a provider gives its objects from the moment they exist.  One with
 * neither is removed only when the caller forces it; a foreign one never.
 * @{
 */
#define HPSHM_FOUND_HEADER          1    /**< hpshm's header is at its tail */
#define HPSHM_FOUND_MARKED          2    /**< no header yet, but the provider's creation mark: a create killed early */
#define HPSHM_FOUND_BARE            0    /**< no header and no mark (tail all zeros): removed only by force */
#define HPSHM_FOUND_FOREIGN_TYPE    (-1) /**< not a regular file (a FIFO, socket, device or directory) */
#define HPSHM_FOUND_FOREIGN_LINK    (-2) /**< a symbolic link, which is never followed */
#define HPSHM_FOUND_FOREIGN_BACKING (-3) /**< memory or size hpshm never uses (not hugetlb, odd length) */
#define HPSHM_FOUND_FOREIGN_HEADER  (-4) /**< its tail holds data that is not hpshm's header */
/** @} */

/** A named object a provider found on the machine (scan()). */
struct hpshm_found {
	char   id[HPSHM_PATH_MAX];  /**< what remove() needs: a path, or "shm=<id>" */
	char   name[128];           /**< the segment's name */
	size_t size;                /**< the object's size in bytes */
	int    alive;               /**< 1 if some process still maps it, 0 if none does, -1 unknown */
	int    has_header;          /**< HPSHM_FOUND_*: 1 hpshm's header, 2 its mark, 0 neither, < 0 foreign */
	struct hpshm_header header; /**< the header, when has_header is HPSHM_FOUND_HEADER */
};

/** Called by scan() for each object; return non-zero to stop. */
typedef int (*hpshm_found_fn)(void *user, const struct hpshm_found *f);

/** A live mapping, filled by create() and handed back to destroy(). */
struct hpshm_mapping {
	void  *addr;                 /**< first byte */
	size_t size;                 /**< mapped length: what munmap or shmdt must be given */
	int    fd;                   /**< backing descriptor, or -1 */
	long   id;                   /**< provider's object id (a SysV shmid), or -1 */
	char   path[HPSHM_PATH_MAX]; /**< backing file's path if it has one, else empty */
	void  *priv;                 /**< the provider's own state */
};

/** The interface every provider implements. */
struct hpshm_provider {
	unsigned    abi_version; /**< HPSHM_PROVIDER_ABI; members are only ever appended */
	const char *name;        /**< stable: used in config values, tokens and logs */
	const char *summary;     /**< one line for `hpshm providers` */
	unsigned    caps;        /**< HPSHM_CAP_* bits */

	/**
	 * Can the mechanism work here for this request?  Cheap, side-effect free, advisory:
	 * pages can vanish between probe() and create().
	 * @return 0, or HPSHM_EUNAVAILABLE with out->reason set
	 */
	int (*probe)(const struct hpshm_request *rq, struct hpshm_probe *out);

	/**
	 * Create and map a segment as rq says.  On failure, everything done so far is undone.
	 * @return 0 with m filled, or a negative HPSHM_E* code with err filled
	 */
	int (*create)(struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err);

	/**
	 * Unmap and release what create() made.  Called once per successful create().
	 * @return 0, or a negative HPSHM_E* code (the core frees its handle anyway)
	 */
	int (*destroy)(struct hpshm_mapping *m);

	/* ---- ABI 2 ---- */

	/**
	 * The text a child needs to find m again: "fd=<n>" for an inherited descriptor,
	 * "shm=<id>" for a SysV id, "path=<path>" for a named file.  No ':' or whitespace.
	 * @return its length, or a negative HPSHM_E* code
	 */
	int (*identify)(const struct hpshm_mapping *m, char *id, size_t len);

	/**
	 * In another process, map the object id names at exactly rq->address with length rq->size
	 * (the creator's mapped length).  Fails with HPSHM_EEXIST if the range is taken.
	 * @return 0 with m filled, or a negative HPSHM_E* code with err filled
	 */
	int (*attach)(struct hpshm_mapping *m, const struct hpshm_request *rq, const char *id, hpshm_error *err);

	/**
	 * Undo attach(): unmap, close, never remove the object.
	 * @return 0 or a negative HPSHM_E* code
	 */
	int (*detach)(struct hpshm_mapping *m);

	/**
	 * Call fn for each named object of this provider on the machine, with its liveness and
	 * header.  Only objects in hpshm's own namespace (hpshm.* names, hpshm's SysV key range),
	 * including those without a header (a creator killed before writing it leaves such
	 * debris) and foreign ones found there, each with has_header saying which it is.  Never
	 * blocks on what it finds (a FIFO), never follows a symbolic link.  NULL if the provider
	 * has no named objects.
	 * @return 0 or a negative HPSHM_E* code
	 */
	int (*scan)(hpshm_found_fn fn, void *user);

	/**
	 * Remove a named object scan() found.  The core calls it only for dead objects that are
	 * hpshm's (HPSHM_FOUND_BARE ones only when the caller forces it), and the provider
	 * re-checks liveness and has_header itself, so a live or foreign one is never removed.
	 * @return 0, HPSHM_EEXIST if it turned out to be alive, or another negative code
	 */
	int (*remove)(const struct hpshm_found *f, hpshm_error *err);
};

/**
 * Add an application's provider.  Registered providers come before the built-in ones when
 * provider=auto, and can be named in provider= like any other.
 * @param p   the provider; it must stay valid until unregistered
 * @param err filled on failure, may be NULL
 * @return 0, HPSHM_EINVAL (bad ABI or missing member), HPSHM_EEXIST (name taken) or HPSHM_EFULL
 */
HPSHM_API int hpshm_provider_register(const struct hpshm_provider *p, hpshm_error *err);

/**
 * Remove a provider added with hpshm_provider_register().
 * @param p the provider
 * @return 0, or HPSHM_ENOPROVIDER if it was not registered
 */
HPSHM_API int hpshm_provider_unregister(const struct hpshm_provider *p);

/**
 * Fill an error record.  For providers: the core adds the provider's name.
 * @param err       the record (NULL is allowed: nothing happens)
 * @param code      an HPSHM_E* code
 * @param sys_errno the errno of the failed call, or 0
 * @param call      the failed call, or NULL
 * @param hint      one sentence a person can act on, or NULL
 * @param fmt       printf format of the message
 * @return code, so a provider can write `return hpshm_error_set(err, ...)`
 */
HPSHM_API int hpshm_error_set(hpshm_error *err, int code, int sys_errno, const char *call, const char *hint,
			      const char *fmt, ...)
	HPSHM__PRINTF(6, 7)
	;

#ifdef __cplusplus
}
#endif
#endif /* HPSHM_PROVIDER_H */
