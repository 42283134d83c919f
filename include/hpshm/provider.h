/* SPDX-License-Identifier: MIT */
/**
 * @file hpshm/provider.h
 * @brief The provider SDK: the versioned interface a backend implements.
 *
 * hpshm/provider.h -- what every provider implements (provider ABI 5).
 *
 * A provider wraps one mechanism for shared memory (MAP_HUGETLB, SysV SHM_HUGETLB, a
 * hugetlbfs file, a memfd, Windows SEC_LARGE_PAGES, FreeBSD largepage shm, a plain mapping,
 * or an application's own).  The built-in providers are the rows of one ordered list,
 * backends/list.h; an application adds its own with hpshm_provider_register().  A new
 * backend is one file that ends with its `const struct hpshm_provider` and one row in that
 * list.
 *
 * One implementation, several registrations.  Every member receives `self`, the registration
 * it is called through: self->name is the name it was registered under and self->user the
 * pointer given at registration (SQLite's pAppData), so the same code registered twice with
 * two settings gives two providers (a built-in row has a user pointer too: Windows' plain and
 * windows_large are one section implementation).  A provider may wrap another, a built-in one
 * too: hpshm_provider_find() gives the registration to call through (a shim that logs,
 * limits or injects faults).  Options only one provider understands are read from the
 * configuration by key through the request (rq->option(rq, "hugetlbfs_path", ...)), never
 * added to the generic request as members.
 *
 * The core guarantees on every call, so providers do not check again:
 *   - pointers are non-NULL, except rq->name and rq->address, which may be NULL;
 *   - probe(): rq->size > 0 is the size asked for, not rounded; rq->page_size is the wish
 *     (HPSHM_PAGE_SIZE_DEFAULT: the mechanism's default huge page size;
 *     HPSHM_PAGE_SIZE_LARGEST: the largest size that holds rq->size now, else the largest
 *     offered; or a size in bytes);
 *   - create() and attach(): rq->page_size is the one probe() chose, a power of two;
 *     rq->size > 0 is a multiple of it; rq->address, when set, is a multiple of it and of
 *     64 KiB, and at least HPSHM_MIN_ADDRESS; attach() gets no address (NULL) only for
 *     hpshm_segment_open() without reattach=exec, and then maps where the system chooses;
 *   - rq->mode is never 0 (the configuration refuses it);
 *   - err is non-NULL, and the core records it in the segment's report.
 *
 * Every int-returning member returns 0 or a negative HPSHM_E* code.  probe() and create()
 * return HPSHM_EUNAVAILABLE, and log nothing, when the mechanism cannot work here (empty
 * pool, missing mount, missing privilege): the core then tries the next provider.  Any other
 * code is a real failure, which under huge_pages=try still moves on, recorded.  The reason
 * and the operator's fix come from the provider (probe's reason and fix, err's message and
 * hint): the core builds no hint of its own and reads no OS facts.
 *
 * A provider never populates: the core faults pages in after create() when populate says so
 * or probe() advised it, through the port, which may use m->handle as HPSHM_MAP_DESCRIPTOR
 * allows when m->flags has it.  A provider never passes MAP_NORESERVE/SHM_NORESERVE for huge pages:
 * a reservation taken at create time is what keeps SIGBUS away.  The one exception is a
 * request with HPSHM_REQ_RESERVE (a resizable segment, max_size): there the pages are taken
 * by the core through the port (fallocate) before anything touches them, range by range.
 *
 * Re-attach after exec: the core chooses the address, keeps a header that says what the
 * segment is (in the last HPSHM_HEADER_REGION bytes of the mapping, and then create() is asked
 * for that much more; or, for an unnamed segment whose size fills its huge pages, in the
 * label a provider with HPSHM_CAP_TAG gives the object (rq->tag), else in a companion the
 * core makes with the plain provider after the segment), and passes the child a token
 * holding identify()'s text.  A companion's header records the segment's m->object, so a
 * child that attached some other object is refused.  A child started through
 * hpshm_child_spawn() inherits m->handle when m->flags has HPSHM_MAP_INHERIT.  In the child
 * attach() must map exactly at rq->address or fail: never elsewhere, never over an existing
 * mapping (MAP_FIXED_NOREPLACE, shmat without SHM_REMAP, MapViewOfFileEx).  The core then
 * checks the header and the page size.
 *
 * Liveness of named objects: every process that maps a named file-backed segment holds a
 * shared flock() on its descriptor; a SysV segment counts its attachments (shm_nattch).  So
 * scan() can tell a segment whose processes all died (dead) from a live one.
 *
 * ABI history.  The first member is abi_version; members are only ever appended.
 *   1  probe, create, destroy.
 *   2  adds identify, attach, detach (re-attach after exec) and scan, remove (named objects).
 *   3  every member receives self; probe reports the page sizes offered, the one it would
 *      use, the pages available, the operator's fix and populate advice, so the core stops
 *      reading OS pools; requirements feeds `hpshm plan`; the mapping holds an OS-neutral
 *      handle and says whether a child must inherit it; capabilities may be narrowed per
 *      segment; the header's layout became the core's (base/header.h): scan() hands its raw
 *      bytes over.  Later in 0.x, appended: hpshm_request.tag and HPSHM_CAP_TAG (a provider
 *      without the cap never sees a tag, so one built before them works unchanged); then
 *      hpshm_mapping.object (the core zeroes it before every call, so a provider built
 *      before it leaves it empty, and the headers of its segments are not bound to their
 *      objects, as before).  In 0.2.0 the page-size wishes took hpshm.h's names
 *      (HPSHM_PAGE_SIZE_DEFAULT and _LARGEST), requirements()' callback type became
 *      hpshm_need_fn, and hpshm_requirement gained its version and reserved space.
 *   4  appends lookup (hpshm_segment_open(): NULL, and the provider's segments cannot be
 *      opened by name), and detach() becomes the release of this process's mapping of any
 *      segment, not only an attached one (hpshm_segment_detach(), and the destroy of a
 *      process that is not the segment's owner: a worker made by fork()), so a provider with
 *      HPSHM_CAP_NAMED must have it.  A provider struct of ABI 3 ends before lookup, so the
 *      core could not read it: ABI 3 providers are refused and must be rebuilt.  Also in 4:
 *      hpshm_found.mine, whose an object is, so that a forced gc keeps to the caller's own
 *      debris (scan() fills it; remove() checks it again).
 *   5  appends HPSHM_MAP_CAPS, so a segment can be narrowed to no capabilities at all
 *      (m->caps 0 alone still means "not narrowed", as before); keys, the configuration
 *      keys only the provider reads, which the configuration checks and `hpshm probe` lists; and
 *      hpshm_provider_find(), so a provider can wrap a registered or built-in one.  Built-in
 *      rows take a user pointer (backends/list.h).  And hpshm_header_classify(), so a provider
 *      outside the tree can write scan() and remove().
 * Versions are SQLite's iVersion: hpshm_provider_register() accepts a provider built for any
 * ABI from HPSHM_PROVIDER_ABI_MIN to HPSHM_PROVIDER_ABI, and the core reads a member appended
 * after HPSHM_PROVIDER_ABI_MIN only when the provider's version has it (HPSHM_PROVIDER_HAS);
 * one built for a newer ABI than the library's is refused, naming both.  ABI 3 and older are
 * refused (detach() changed its meaning in 4).  A new ABI appends its members, bumps
 * HPSHM_PROVIDER_ABI, and adds the size of the previous one to HPSHM_PROVIDER_HAS.
 */
#ifndef HPSHM_PROVIDER_H
#define HPSHM_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "../hpshm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @addtogroup grp_providers
 *  @{ */

/** The provider ABI this header describes (see the history above). */
#define HPSHM_PROVIDER_ABI 5
/** The oldest provider ABI the library still serves (hpshm_provider_register()). */
#define HPSHM_PROVIDER_ABI_MIN 4

/** Longest path a mapping records, with its NUL. */
#define HPSHM_PATH_MAX 256

/** Page sizes one probe() can report. */
#define HPSHM_PROBE_SIZES 8

/** hpshm_probe.available when the mechanism cannot tell (or has no pool: base pages). */
#define HPSHM_PAGES_UNKNOWN UINT64_MAX
/** hpshm_mapping.handle when the segment has none. */
#define HPSHM_NO_HANDLE ((intptr_t)-1)
/** The lowest address the core passes in rq->address (Windows' allocation granularity). */
#define HPSHM_MIN_ADDRESS ((uintptr_t)65536)

/** hpshm_request.flags */
enum hpshm_request_flag {
	HPSHM_REQ_REATTACH = 1, /**< a child started by exec will attach the segment (reattach=exec) */
	/**
	 * rq->size is an address range the segment may grow within (max_size), not pages to take:
	 * map all of it, on a file descriptor (HPSHM_MAP_DESCRIPTOR), without reserving or
	 * committing its pages (Linux: MAP_NORESERVE), except the last HPSHM_RESIZE_AREA bytes
	 * rounded up to the page size (the header and its table), which create() allocates
	 * before it writes there.  The core allocates and frees the rest through the port.  Only
	 * a provider with HPSHM_CAP_RESIZE is asked, in create() and attach(); one whose
	 * segment cannot do it (no descriptor) leaves HPSHM_CAP_RESIZE out of m->caps.
	 */
	HPSHM_REQ_RESERVE  = 2
};

/** Bytes at the tail of a resizable segment, at least, for its header and the table of the
 * processes that map it (one page if pages are larger). */
#define HPSHM_RESIZE_AREA 65536

/** hpshm_mapping.flags */
enum hpshm_mapping_flag {
	/** handle is an open descriptor of the mapped object, which the provider keeps owning: the
	 *  port may ask the system through it what backs the mapping, and have the object's pages
	 *  allocated through it for its first m->size bytes when it populates; it never closes,
	 *  maps, resizes or locks it, nor reads or writes its bytes. */
	HPSHM_MAP_DESCRIPTOR = 1,
	HPSHM_MAP_INHERIT    = 2, /**< a child must inherit handle to attach (a descriptor, a section HANDLE) */
	HPSHM_MAP_CAPS       = 4  /**< caps is this segment's set even when it is 0 (ABI 5): it can do none of them */
};

/** hpshm_probe.advice */
enum hpshm_probe_advice {
	HPSHM_ADVISE_POPULATE = 1 /**< a late fault could be refused (SIGBUS): the core populates at create */
};

struct hpshm_provider;

/**
 * A provider as registered: what every member receives as self.  One implementation (ops)
 * may be registered several times, each under its own name and with its own user pointer.
 * Valid for the duration of the call only: a provider keeps in its mapping what it needs later.
 */
struct hpshm_instance {
	const struct hpshm_provider *ops;                /**< the implementation */
	char                         name[HPSHM_NAME_MAX]; /**< the name it is registered under */
	void                        *user;               /**< the pointer given at registration */
};

/** What the core asks a provider for (see the guarantees above for what each member holds when). */
struct hpshm_request {
	size_t              size;      /**< probe(): the bytes asked for; create()/attach(): a multiple of page_size */
	size_t              page_size; /**< probe(): the wish (HPSHM_PAGE_SIZE_DEFAULT, _LARGEST or bytes); then probe's choice */
	const char         *name;      /**< the segment's name (config key name), or NULL */
	unsigned            mode;      /**< permissions of named objects (config key mode), never 0 */
	void               *address;   /**< where to map (base_address, or the core's choice), or NULL */
	unsigned            flags;     /**< hpshm_request_flag bits */
	const hpshm_config *config;    /**< the configuration, opaque: pass it to option() */
	/**
	 * A configuration value by key, for the keys only this provider reads ("hugetlbfs_path"):
	 * the core hands the lookup down with the request, so a provider needs nothing above it.
	 * snprintf-style: the value's length (buf NUL-terminated when len > 0), or HPSHM_ENOKEY.
	 */
	int (*option)(const struct hpshm_request *rq, const char *key, char *buf, size_t len);
	/**
	 * For a provider with HPSHM_CAP_TAG, else NULL: create() labels the object with this text
	 * where the kernel keeps it with the object (a memfd's name), and attach() refuses an
	 * object that does not carry exactly this label.  Printable, no '/', at most
	 * HPSHM_TAG_MAX - 1 bytes.  NULL: no label to give or check.
	 */
	const char         *tag;
};

/** Longest label the core puts in hpshm_request.tag, with its NUL. */
#define HPSHM_TAG_MAX 64

/** A provider's answer to probe(). */
struct hpshm_probe {
	int      sys_errno;                /**< errno behind the verdict, 0 if none */
	char     reason[HPSHM_TEXT_MAX];   /**< why it cannot work here; empty when it can */
	char     fix[HPSHM_TEXT_MAX];      /**< what an operator can do about it, one sentence; empty if nothing */
	unsigned nsizes;                   /**< entries in sizes[] */
	size_t   sizes[HPSHM_PROBE_SIZES]; /**< the page sizes the mechanism offers here, ascending */
	size_t   page_size;                /**< the one it would use for this request; 0 if none fits the wish */
	uint64_t available;                /**< pages of page_size it could take now, or HPSHM_PAGES_UNKNOWN */
	unsigned advice;                   /**< hpshm_probe_advice bits */
};

/** Bytes of a named object's header region a provider hands the core in hpshm_found.header. */
#define HPSHM_HEADER_BYTES 512
/** Bytes the core reserves at the tail of a named segment for its header. */
#define HPSHM_HEADER_REGION 4096

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
	char          id[HPSHM_PATH_MAX];         /**< what remove() needs: a path, or "shm=<id>" */
	char          name[128];                  /**< the segment's name */
	size_t        size;                       /**< the object's size in bytes */
	int           alive;                      /**< 1 if some process still maps it, 0 if none does, -1 unknown */
	int           has_header;                 /**< HPSHM_FOUND_*: 1 hpshm's header, 2 its mark, 0 neither, < 0 foreign */
	unsigned char header[HPSHM_HEADER_BYTES]; /**< the start of its header region as read, for the core to decode */
	int           mine;                       /**< 1 if the calling user owns it (a SysV segment: as owner and
	                                               creator), 0 if another user does or the system cannot tell */
};

/** hpshm_header_facts.version of the facts this library fills. */
#define HPSHM_HEADER_FACTS_VERSION 1

/**
 * What hpshm_header_classify() read from hpshm's header, for the provider's own decisions (the
 * header's layout stays the core's).  All zero but version unless the class is
 * HPSHM_FOUND_HEADER; text members are NUL-terminated.
 */
struct hpshm_header_facts {
	unsigned  version;                  /**< HPSHM_HEADER_FACTS_VERSION once filled */
	int       other_boot;               /**< 1: written in another boot of this system, so stale: its creator
	                                         and every process that mapped it are gone; 0: this boot, or unknown */
	uint64_t  nonce;                    /**< the segment's identity (0: the provisional header a create writes
	                                         before the core's): remove() checks it is still scan()'s */
	long long creator_pid;              /**< the creating process, in the boot that wrote the header */
	char      provider[HPSHM_NAME_MAX]; /**< the provider the header names */
	char      name[128];                /**< the segment's name, or empty */
	uint64_t  reserved[8];              /**< zeroed by the library: room for the members of later versions */
};

/**
 * Whose is a named object, from the bytes of its header region?  The core writes a named
 * segment's header in the last HPSHM_HEADER_REGION bytes of the object; a provider reads those
 * (or as many of their first bytes as it can, at least HPSHM_HEADER_BYTES) and asks here,
 * needing nothing of the layout.  Pure but for reading this boot's identity; any thread.
 *
 * scan(): `f.has_header = hpshm_header_classify(tail, n, self->name, &f, &facts)` fills
 * f.has_header and f.header as the core wants them; the provider adds id, name, size, mine
 * and alive (a header of another boot, facts.other_boot, is dead whatever the provider cannot
 * tell).  remove(): with the object held so that nobody can start using it, read and classify
 * the tail again, classify the listed f->header (which gives the listed nonce), and remove
 * only when the class is still f->has_header and, for HPSHM_FOUND_HEADER, the nonce is the
 * same: a name that came to hold a new object is then left alone.
 *
 * @param bytes    the header region as read
 * @param len      bytes read: fewer than a header, unless all zero, proves nothing
 * @param provider the name this provider's headers carry (self->name), or NULL: a header torn by
 *                 a kill (everything but the magic written) is then not taken for its mark
 * @param f        if not NULL: has_header set to the result; header set to the header read for
 *                 HPSHM_FOUND_HEADER, else zeroed; nothing else is touched
 * @param facts    if not NULL: filled (version set, reserved zeroed)
 * @return HPSHM_FOUND_HEADER (hpshm's header), HPSHM_FOUND_MARKED (a header of provider torn
 *         by a kill while it was written), HPSHM_FOUND_BARE (all zeros: nothing proves whose
 *         it is), or HPSHM_FOUND_FOREIGN_HEADER (anything else: another program's data, a
 *         forged or partial header, nothing read, bytes NULL)
 */
HPSHM_API int hpshm_header_classify(const void *bytes, size_t len, const char *provider, struct hpshm_found *f,
				    struct hpshm_header_facts *facts);

/** Called by scan() for each object; return non-zero to stop. */
typedef int (*hpshm_found_fn)(void *user, const struct hpshm_found *f);

/** Called by requirements() for each need (struct hpshm_requirement, in hpshm.h); return
 *  non-zero to stop.  The core hands each on to hpshm_requirements()'s hpshm_requirement_fn
 *  with the provider's name, its version set and its reserved space zeroed. */
typedef int (*hpshm_need_fn)(void *user, const struct hpshm_requirement *r);

/** Longest hpshm_mapping.object, with its NUL. */
#define HPSHM_OBJECT_MAX 128

/** A live mapping, filled by create() or attach() and handed back to destroy() or detach(). */
struct hpshm_mapping {
	void    *addr;                 /**< first byte */
	size_t   size;                 /**< mapped length: what munmap or shmdt must be given, which is what the
	                                *   kernel really mapped (a hugetlb file's mapping is whole huge pages) */
	intptr_t handle;               /**< a descriptor, a SysV id, a Windows HANDLE; HPSHM_NO_HANDLE if none */
	unsigned flags;                /**< hpshm_mapping_flag bits */
	unsigned caps;                 /**< this segment's capabilities when narrower than the provider's, else 0;
	                                *   with HPSHM_MAP_CAPS in flags always this segment's, 0 included */
	char     path[HPSHM_PATH_MAX]; /**< backing file's path if it has one, else empty */
	void    *priv;                 /**< the provider's own state */
	/**
	 * Which object is mapped, told apart from every other object on the machine, now or
	 * later: space-separated key=value facts the OS keeps with the object and does not give
	 * another one while it lives ("id=32769 cpid=4242 ctime=1700000000 segsz=2097080" for a
	 * SysV segment, "dev=0x2d ino=81234" for a file), at most HPSHM_OBJECT_MAX - 1 bytes.
	 * Filled by create() when rq->flags has HPSHM_REQ_REATTACH and by attach(), with the same
	 * text for the same object in every process (a fact this process cannot see, such as a
	 * creator pid outside its PID namespace, is left out).  The core records it in a header
	 * it keeps outside the object (a companion) and refuses an attach whose object differs
	 * in a fact both texts hold, so a token edited to name another object, or a stale one
	 * whose id was given to a new object, maps nothing.  Empty: the provider cannot tell
	 * (appended in 0.x; the core zeroes it before every call).
	 */
	char     object[HPSHM_OBJECT_MAX];
};

/** hpshm_provider_key.type: what a provider's configuration key accepts. */
enum hpshm_key_type {
	HPSHM_KEY_TEXT = 1, /**< printable text (no control characters), shorter than HPSHM_PATH_MAX */
	HPSHM_KEY_PATH,     /**< an absolute path, or empty for none */
	HPSHM_KEY_SIZE,     /**< a size as hpshm_size_parse() reads it: 4096, 64KiB, 2MB */
	HPSHM_KEY_UINT,     /**< a decimal number from 0 to UINT32_MAX */
	HPSHM_KEY_BOOL      /**< on or off (also yes/no, true/false, 1/0); read back as on or off */
};

/** One configuration key a provider declares (hpshm_provider.keys). */
struct hpshm_provider_key {
	const char *name; /**< "<provider>.<word>": the provider's name, '.', then a-z 0-9 _; shorter than HPSHM_NAME_MAX */
	unsigned    type; /**< an hpshm_key_type */
	const char *def;  /**< the default, as text, valid for type ("" for an unset TEXT or PATH) */
	const char *help; /**< one line for `hpshm probe` and `hpshm providers` */
};

/** The interface every provider implements. */
struct hpshm_provider {
	unsigned    abi_version; /**< HPSHM_PROVIDER_ABI as built; members are only ever appended */
	const char *name;        /**< its usual name: used in config values, tokens and logs */
	const char *summary;     /**< one line for `hpshm providers` */
	unsigned    caps;        /**< HPSHM_CAP_* bits */

	/**
	 * Can the mechanism work here for this request, and with which pages?  Cheap,
	 * side-effect free, advisory: pages can vanish between probe() and create().  Fills
	 * out->sizes, out->page_size (the one create() will be given) and out->available even
	 * when it answers no, so `hpshm probe` can show them.
	 * @return 0, or HPSHM_EUNAVAILABLE with out->reason (and out->fix when there is one)
	 */
	int (*probe)(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out);

	/**
	 * Create and map a segment as rq says.  On failure, everything done so far is undone.
	 * @return 0 with m filled, or a negative HPSHM_E* code with err filled (err->hint: the fix)
	 */
	int (*create)(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		      hpshm_error *err);

	/**
	 * Unmap and release what create() made.  Called once per successful create().
	 * @return 0, or a negative HPSHM_E* code (the core frees its handle anyway)
	 */
	int (*destroy)(const struct hpshm_instance *self, struct hpshm_mapping *m);

	/**
	 * The text a child needs to find m again: "fd=<n>" for an inherited descriptor,
	 * "shm=<id>" for a SysV id, "path=<path>" for a named file.  No ':' or whitespace.
	 * NULL without HPSHM_CAP_REATTACH.
	 * @return its length, or a negative HPSHM_E* code
	 */
	int (*identify)(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len);

	/**
	 * In another process, map the object id names at exactly rq->address with length rq->size
	 * (the creator's mapped length), or where the system chooses when rq->address is NULL
	 * (hpshm_segment_open() without reattach=exec).  Fails with HPSHM_EEXIST if the range is
	 * taken, with HPSHM_EACCES if this user may not map the object, and with
	 * HPSHM_EINVAL, before mapping anything, for an object that is not exactly rq->size long
	 * or is memory this provider never makes (a hugetlb file for a base-page provider): a
	 * token edited to another size or object must not map part of one, nor more than asked.
	 * Fills m->object.
	 * @return 0 with m filled, or a negative HPSHM_E* code with err filled
	 */
	int (*attach)(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		      const char *id, hpshm_error *err);

	/**
	 * Release this process's mapping and handles, never the object: undo attach(), and also
	 * end a mapping create() made where the object must stay (hpshm_segment_detach(); the
	 * destroy of a process that inherited the creator's mapping by fork(), whose mapping and
	 * descriptors are copies).  Required with HPSHM_CAP_REATTACH or HPSHM_CAP_NAMED; a
	 * provider with neither may leave it NULL, and its destroy() is then called in every
	 * process, so it must remove nothing another process could still use.
	 * @return 0 or a negative HPSHM_E* code
	 */
	int (*detach)(const struct hpshm_instance *self, struct hpshm_mapping *m);

	/**
	 * Call fn for each named object of this provider on the machine, with its liveness and
	 * header.  Only objects in hpshm's own namespace (hpshm.* names, hpshm's SysV key range),
	 * including those without a header (a creator killed before writing it leaves such
	 * debris) and foreign ones found there, each with has_header saying which it is.  Never
	 * blocks on what it finds (a FIFO), never follows a symbolic link.  NULL if the provider
	 * has no named objects.
	 * @return 0 or a negative HPSHM_E* code
	 */
	int (*scan)(const struct hpshm_instance *self, hpshm_found_fn fn, void *user);

	/**
	 * Remove a named object scan() found.  The core calls it only for dead objects that are
	 * hpshm's (HPSHM_FOUND_BARE ones only when the caller forces it, and only the caller's
	 * own, f->mine 1, unless it asks for all users' too), and the provider re-checks
	 * liveness, has_header and mine itself, so a live or foreign one is never removed, nor
	 * anything but the object that was looked at: a name that comes to hold another object
	 * meanwhile keeps it.
	 * @return 0, HPSHM_EEXIST if it turned out to be alive, or another negative code
	 */
	int (*remove)(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err);

	/**
	 * What an operator must set up for a segment of rq->size bytes (the mapped length:
	 * already rounded, header included) on rq->page_size pages (probe's choice), for
	 * `hpshm plan` and hpshm_requirements().  Call fn once per need, met or not, and with
	 * met = 1 and only a note for advice that is no shortfall; stop when fn returns
	 * non-zero.  Needs that several providers share use the same `what` and the same
	 * words, so the plan shows each once.  NULL if the mechanism needs nothing.
	 * @return 0 or a negative HPSHM_E* code
	 */
	int (*requirements)(const struct hpshm_instance *self, const struct hpshm_request *rq,
			    hpshm_need_fn fn, void *user);

	/**
	 * Find the named object a create() with rq->name made, for hpshm_segment_open() in any
	 * process, without mapping it: fill f as scan() would for it (size: the length attach()
	 * maps; has_header and header: whose it is, read from the object), except that f->id is
	 * the identifier attach() takes ("path=<file>", "shm=<id>", "name=<section>").  rq->name
	 * is set and rq->size is 0 (unknown); rq->page_size is the configuration's wish
	 * (HPSHM_PAGE_SIZE_DEFAULT, HPSHM_PAGE_SIZE_LARGEST or bytes), which may order where to look and
	 * never hides an object of another page size (the core refuses that one, saying so).
	 * The core then checks the header and calls attach() with f->id, the header's page size
	 * and at rq->address either the creator's address or NULL (map where the system
	 * chooses).  NULL: segments of this provider cannot be opened by name (appended in 0.x).
	 * @return 0 with f filled; HPSHM_ENOENT (no object of that name: the core asks the next
	 *         provider); HPSHM_EACCES (this user may not read it: err names its owner and
	 *         the fix); or another negative HPSHM_E* code with err filled
	 */
	int (*lookup)(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
		      hpshm_error *err);

	/**
	 * The configuration keys only this provider reads, or NULL: an array ended by an entry
	 * whose name is NULL.  The configuration then accepts them from every source (the API,
	 * a file, HPSHM_<KEY> with the dot as '_'), refuses a value its type does not admit
	 * naming the key, the provider and what it accepts, `hpshm probe` and `hpshm providers`
	 * list them, and rq->option() returns the value or the default.  Each name is the
	 * provider's usual name, a dot and a word ("file.path"), so that it can never clash with
	 * the core's keys nor another provider's.  A value can be set only while a provider that
	 * declares the key is registered: register first, configure after.  The array must stay
	 * valid as long as the provider does.  Read only when abi_version is 5 or more.
	 */
	const struct hpshm_provider_key *keys;
};

/** Bytes of struct hpshm_provider that a provider built for ABI 4 has: up to lookup, with it. */
#define HPSHM_PROVIDER_SIZE_4 \
	(offsetof(struct hpshm_provider, lookup) + sizeof(((const struct hpshm_provider *)0)->lookup))

/**
 * Does provider p, built for p->abi_version, have member?  The core asks before it reads a
 * member appended after HPSHM_PROVIDER_ABI_MIN, and so must a provider that calls through
 * another one (hpshm_provider_find()), which may be older: `if (HPSHM_PROVIDER_HAS(p, options))`.
 */
#define HPSHM_PROVIDER_HAS(p, member) \
	((p)->abi_version >= HPSHM_PROVIDER_ABI || offsetof(struct hpshm_provider, member) < HPSHM_PROVIDER_SIZE_4)

/**
 * Add an application's provider.  Registered providers come before the built-in ones when
 * provider=auto, and can be named in provider= like any other.  The same implementation may
 * be registered again under another name with another user pointer.
 * @param p    the provider; it must stay valid until unregistered and its segments destroyed
 * @param name the name to register it under, or NULL for p->name
 * @param user passed to every member as self->user
 * @param err  filled on failure, may be NULL
 * @return 0, HPSHM_EINVAL (an ABI before HPSHM_PROVIDER_ABI_MIN or after HPSHM_PROVIDER_ABI, a
 *         missing member, an unusable name), HPSHM_EEXIST
 *         (name taken) or HPSHM_EFULL
 */
HPSHM_API int hpshm_provider_register(const struct hpshm_provider *p, const char *name, void *user,
				      hpshm_error *err);

/**
 * Remove a provider added with hpshm_provider_register().
 * @param name the name it was registered under
 * @return 0, or HPSHM_ENOPROVIDER if no application provider has that name
 */
HPSHM_API int hpshm_provider_unregister(const char *name);

/**
 * Find a provider by name, an application's or a built-in one, so that a provider can wrap it:
 * a shim that logs, limits or injects faults registers its own struct hpshm_provider and calls
 * the wrapped one's members with out as their self.  A member appended after
 * HPSHM_PROVIDER_ABI_MIN may be called only when HPSHM_PROVIDER_HAS(out->ops, member).
 * @param name the name it is registered under ("plain", or an application's)
 * @param out  filled with its registration: implementation, name and user pointer.  The
 *             implementation stays valid while the provider is registered (a built-in one:
 *             always)
 * @return 0, HPSHM_ENOPROVIDER if no provider has that name, HPSHM_EINVAL if an argument is NULL
 */
HPSHM_API int hpshm_provider_find(const char *name, struct hpshm_instance *out);

/**
 * A configuration key a registered provider declares, for listings (`hpshm providers`).
 * @param provider the name it is registered under
 * @param index    0, 1, ... until NULL
 * @return the key (valid while the provider stays registered), or NULL past the last one or
 *         for a provider that is not registered or declares no keys
 */
HPSHM_API const struct hpshm_provider_key *hpshm_provider_key_at(const char *provider, unsigned index);

/** The entry point a provider module exports (hpshm_provider_load()). */
#define HPSHM_PROVIDER_MODULE_ENTRY "hpshm_provider_module"

/**
 * What a provider module's entry point is: it registers the module's providers with
 * hpshm_provider_register() and returns 0, or a negative HPSHM_E* code with err filled.
 */
typedef int (*hpshm_provider_module_fn)(hpshm_error *err);

/**
 * Load a provider module: a shared object (a DLL on Windows) that exports
 * HPSHM_PROVIDER_MODULE_ENTRY, then call that entry point, which registers the module's
 * providers.  The module stays loaded for the life of the process (its providers must stay
 * valid).  The `hpshm` tool loads the modules HPSHM_PROVIDER_MODULES lists (':'-separated,
 * ';' on Windows) this way.  The module must resolve hpshm's functions to the process's own
 * copy of the library (doc/providers.md).
 * @param path the module's file (a path with a '/' is used as is; a bare name is searched
 *             as the system loader searches)
 * @param err  filled on failure (the file, the loader's reason and the fix), may be NULL
 * @return 0, HPSHM_EINVAL (no file, no entry point), or the entry point's error
 */
HPSHM_API int hpshm_provider_load(const char *path, hpshm_error *err);

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

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* HPSHM_PROVIDER_H */
