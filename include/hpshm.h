/* SPDX-License-Identifier: MIT */
/**
 * @file hpshm.h
 * @brief The public API: configuration, segments, reports, errors and logging.
 *
 * hpshm.h -- fast shared memory on every OS, with huge pages where the machine allows.
 *
 * A server creates one large segment, shares it with its workers, and asks hpshm what it
 * really got.  Everything here is opaque or plain data: no OS type appears in this header.
 *
 * Typical use:
 *
 *     hpshm_config *cfg;
 *     hpshm_segment *seg;
 *     hpshm_error err;
 *
 *     hpshm_config_new(&cfg);
 *     hpshm_config_parse(cfg, "huge_pages=try,populate=on", &err);
 *     if (hpshm_segment_create(&seg, 1u << 30, cfg, &err) < 0)
 *             die(err.message, err.hint);
 *     use(hpshm_segment_address(seg), hpshm_segment_size(seg));
 *     hpshm_segment_destroy(seg);
 *     hpshm_config_free(cfg);
 *
 * Every int-returning function returns 0 (or a count) on success and a negative HPSHM_E*
 * code on failure.  Functions that take an hpshm_error pointer fill it on failure when it is
 * not NULL; the record is owned by the caller and nothing is allocated on a failure path.
 * The codes, what each means and what to do about it: doc/errors.md (@ref md_doc_errors
 * "Error codes").
 *
 * Threads.  The library needs no initialisation and starts no thread; what may run at once,
 * by function group (doc/threads.md has the reasons and the proof: tests/test_threads.c under
 * ThreadSanitizer):
 *   - Any thread, any time: hpshm_strerror(), hpshm_errname(), hpshm_version(),
 *     hpshm_version_number(), hpshm_size_parse(), hpshm_size_format(), hpshm_config_key_name(),
 *     hpshm_populate_name(), hpshm_base_page_size(), hpshm_huge_page_sizes(),
 *     hpshm_provider_name().  An hpshm_error record is the caller's: one per call in flight.
 *   - Configurations: a configuration is not locked.  Any number of threads may use one at
 *     once for what only reads it (hpshm_segment_create(), _create_ex(), _attach(),
 *     _attach_env(), hpshm_segment_footprint(), hpshm_requirements(), hpshm_provider_probe(),
 *     hpshm_config_get()) while no thread changes it; the setters, hpshm_config_parse(),
 *     _load_file(), _load_env(), _set_log() and hpshm_config_free() need it to themselves.
 *     A segment keeps a copy: a configuration may change or go once its creates returned.
 *   - Segments: creating, attaching and destroying different segments from different threads
 *     at once is safe, whatever their providers (the address a re-attachable or named
 *     segment gets is chosen and mapped under a lock of the library's, so two threads are
 *     never handed one range).  On one segment, the calls that only read it may run at once:
 *     hpshm_segment_address(), _size(), _report(), _is_owner(), _token(), _inherit(),
 *     hpshm_child_spawn(), and hpshm_report_format() of its report.  hpshm_segment_destroy()
 *     must be the last call on it, after every other thread is done with it.  The memory
 *     itself is the application's to synchronise.
 *   - Children: hpshm_child_wait() once per child, from one thread.
 *   - Named objects: hpshm_objects_list() and hpshm_objects_remove() may run beside creates
 *     and destroys, in this process and in others: an object that comes or goes meanwhile
 *     may be listed or not, and one being created is never removed as dead.
 *   - Providers: hpshm_provider_register() and _unregister() may run beside each other and
 *     beside creates (the table is locked); unregister a provider only when no thread is
 *     creating with it and none of its segments remains (hpshm/provider.h).
 *   - Logging: a log callback runs in the thread that made the call, so several at once when
 *     several threads create or destroy with it: it must be thread-safe itself.
 *   - What the process shares: the library reads the environment (a variable per key, such
 *     as HPSHM_HUGE_PAGES, and HPSHM_TOKEN) and may replace SIGBUS's action for the length of
 *     a guarded touch (populate's last resort, one touch at a time): do not change either in
 *     another thread meanwhile.  A thread that calls fork() while another is inside the
 *     library leaves a child that may call only async-signal-safe functions until it execs,
 *     as POSIX says for any multi-threaded fork.
 */
#ifndef HPSHM_H
#define HPSHM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @addtogroup grp_basics
 *  @{ */

/** Major version of the library; from 1 on, changes when the API or ABI breaks. */
#define HPSHM_VERSION_MAJOR 0
/** Minor version of the library; changes when features are added, and while the major version
 *  is 0 also when the API or ABI breaks (CHANGES.md lists what to change). */
#define HPSHM_VERSION_MINOR 2
/** Patch version of the library. */
#define HPSHM_VERSION_PATCH 0
/**
 * The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH (0.2.0 is 200), for
 * comparing in the preprocessor: `#if HPSHM_VERSION_NUMBER >= 300`.  hpshm_version_number()
 * is the library's own at run time, which may be newer than the header a program was built
 * with (a patch release) but, the soname being what it is, never of another minor in 0.x.
 */
#define HPSHM_VERSION_NUMBER (HPSHM_VERSION_MAJOR * 10000 + HPSHM_VERSION_MINOR * 100 + HPSHM_VERSION_PATCH)

/*
 * Exports.  On Windows a function of a DLL is exported by __declspec(dllexport) where it is
 * compiled and reached through __declspec(dllimport) where it is called, while a static
 * library wants neither: hpshm's build defines HPSHM_BUILDING for its own objects, a program
 * using hpshm.dll defines nothing, and a program linking the static library defines
 * HPSHM_STATIC (CMake's hpshm::hpshm_static and `pkg-config --static --cflags hpshm` under
 * pkgconf pass it on; freedesktop's pkg-config ignores Cflags.private, so its users add
 * -DHPSHM_STATIC themselves).  Elsewhere the library is compiled with hidden visibility, and
 * HPSHM_API gives its public functions the default one back.
 */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(HPSHM_BUILDING)
#define HPSHM_API __declspec(dllexport)
#elif defined(HPSHM_STATIC)
#define HPSHM_API
#else
#define HPSHM_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define HPSHM_API __attribute__((visibility("default")))
#else
/**
 * Marks a function the library exports: __declspec(dllexport) while hpshm itself is built
 * (HPSHM_BUILDING) and __declspec(dllimport) in a program using hpshm.dll on Windows, nothing
 * in a program that defines HPSHM_STATIC to link the static library there, and default
 * visibility on ELF and Mach-O systems.
 */
#define HPSHM_API
#endif

/*
 * printf format checking of the library's own formatting functions.  They format with C99's
 * printf ("%zu"); mingw-w64's GCC takes the archetype "printf" to mean the Microsoft
 * runtime's, which lacks it, and names C99's gnu_printf.  Clang targeting mingw-w64 knows no
 * gnu_printf (it warns) and checks "printf" against C99 already.
 */
#if defined(__MINGW32__) && !defined(__clang__)
#define HPSHM__PRINTF(fmt, first) __attribute__((format(gnu_printf, fmt, first)))
#elif defined(__GNUC__)
#define HPSHM__PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define HPSHM__PRINTF(fmt, first)
#endif

/**
 * The error codes: X(name, value, message).  One list makes the enum, the names and the
 * messages, so they cannot drift apart.
 */
#define HPSHM_ERRORS(X)                                                                     \
	X(EINVAL, -1, "invalid argument")                                                    \
	X(ENOKEY, -2, "unknown configuration key")                                           \
	X(EVALUE, -3, "bad configuration value")                                             \
	X(ENOPROVIDER, -4, "unknown provider")                                               \
	X(EUNAVAILABLE, -5, "mechanism unavailable on this machine")                         \
	X(ENOMEM, -6, "out of memory")                                                       \
	X(ESYS, -7, "system call failed")                                                    \
	X(EPOPULATE, -8, "could not fault the segment in")                                   \
	X(ENOHUGE, -9, "huge pages were required and could not be had")                      \
	X(EOVERFLOW, -10, "size too large")                                                  \
	X(ENOTSUP, -11, "not supported")                                                     \
	X(EIO, -12, "could not read a system file or config file")                           \
	X(EEXIST, -13, "already exists")                                                     \
	X(EFULL, -14, "table full")                                                          \
	X(ENOENT, -15, "no such segment")                                                    \
	X(EACCES, -16, "permission denied")

/** Error codes returned (negated) by every int-returning function; what each means and what to
 *  do about it: doc/errors.md (@ref md_doc_errors "Error codes"). */
enum hpshm_errcode {
	HPSHM_OK = 0, /**< success */
#define HPSHM__ERR_ENUM(name, value, msg) HPSHM_##name = (value),
	HPSHM_ERRORS(HPSHM__ERR_ENUM)
#undef HPSHM__ERR_ENUM
};

/** Longest provider name, with its terminating NUL. */
#define HPSHM_NAME_MAX 32
/** Longest reason or hint text, with its terminating NUL. */
#define HPSHM_TEXT_MAX 256
/** Longest error message, with its terminating NUL: room for every provider's reason. */
#define HPSHM_MESSAGE_MAX 1024
/** NUMA nodes whose share of a segment the report holds (hpshm_report.node_bytes). */
#define HPSHM_REPORT_NODES 8
/** Most attempts a report records (every provider considered). */
#define HPSHM_MAX_ATTEMPTS 16

/** @} */

/* Outside the group: a @file block inside it would make the whole file a member. */
/**
 * @file hpshm.h
 * @par Growing the public structs
 * The structs the library fills for a caller (hpshm_error, hpshm_report with its
 * hpshm_attempt entries, hpshm_object, hpshm_child, hpshm_requirement) open with a `version`
 * the library sets to the layout it filled, and close with reserved space it zeroes.
 * A later version carves its new members out of the reserved space, so a struct never changes
 * size or moves a member: a program built against an older header hands the library exactly
 * as many bytes as the library writes, copies and arrays of the structs stay valid, and a
 * program built against a newer header reads a new member only when version says the library
 * filled it (an older library leaves it zero).
 *
 * The other common pattern, a size the caller sets before each call (Windows' cbSize), was
 * weighed and not taken: these structs are outputs, declared on the stack and passed by
 * address, and every such declaration would have to set the size first, one that forgot
 * handing the library garbage to trust; hpshm_object and the report of hpshm_segment_report()
 * live in the library's own storage, which no caller could size; and one pattern must serve
 * all of them.  The filler stating its version is also how the provider interface works
 * (abi_version, after SQLite's iVersion).
 */

/** @addtogroup grp_basics
 *  @{ */

/** hpshm_error.version of the records this library fills. */
#define HPSHM_ERROR_VERSION 1
/** hpshm_report.version of the reports this library fills (it covers the hpshm_attempt entries too);
 *  2 added origin, relocated and attach_ns; 3 added populate_threads, nnodes and node_bytes. */
#define HPSHM_REPORT_VERSION 3
/** hpshm_object.version of the objects this library lists. */
#define HPSHM_OBJECT_VERSION 1
/** hpshm_child.version of the children this library starts. */
#define HPSHM_CHILD_VERSION 1
/** hpshm_requirement.version of the needs this library hands to hpshm_requirements()'s callback. */
#define HPSHM_REQUIREMENT_VERSION 1

/**
 * A caller-owned error record.  Every field is filled on failure; text fields are
 * NUL-terminated and empty when they do not apply.
 */
typedef struct hpshm_error {
	unsigned version;               /**< HPSHM_ERROR_VERSION once the library filled the record, 0 before */
	int  code;                      /**< HPSHM_E* code */
	int  sys_errno;                 /**< errno (or GetLastError) of the failed call, 0 if none */
	char call[HPSHM_NAME_MAX];      /**< the failed system call, e.g. "shmget" */
	char provider[HPSHM_NAME_MAX];  /**< the provider that failed, if any */
	char key[HPSHM_NAME_MAX];       /**< the configuration key at fault, if any */
	char message[HPSHM_MESSAGE_MAX];/**< what went wrong; after a failed create, every provider's reason */
	char hint[HPSHM_TEXT_MAX];      /**< one thing a person can do about it */
	uint64_t reserved[8];           /**< zeroed by the library: room for the members of later versions */
} hpshm_error;

/** @} */

/** @addtogroup grp_config
 *  @{ */

/** The huge_pages policy (PostgreSQL's semantics). */
typedef enum hpshm_huge_pages {
	HPSHM_HUGE_OFF = 0, /**< plain pages only */
	HPSHM_HUGE_TRY = 1, /**< huge pages if possible, else fall back and record why */
	HPSHM_HUGE_ON  = 2  /**< huge pages or an error */
} hpshm_huge_pages;

/** The reattach key: may a child started by exec attach the segment? */
typedef enum hpshm_reattach {
	HPSHM_REATTACH_OFF  = 0, /**< no: any provider will do */
	HPSHM_REATTACH_EXEC = 1  /**< yes: only providers a child started by exec can re-attach */
} hpshm_reattach;

/** hpshm_config_set_huge_page_size(): the kernel's default huge page size ("default"). */
#define HPSHM_PAGE_SIZE_DEFAULT ((size_t)0)
/** hpshm_config_set_huge_page_size(): the largest size whose pool can hold the segment ("largest"). */
#define HPSHM_PAGE_SIZE_LARGEST ((size_t)-1)

/** @} */

/** @addtogroup grp_segments
 *  @{ */

/** Populate methods, as bits: what faulted the segment in at create time. */
enum hpshm_populate_method {
	HPSHM_POPULATE_NONE      = 0, /**< not populated: pages fault in on first touch */
	HPSHM_POPULATE_FALLOCATE = 1, /**< fallocate() on the backing descriptor */
	HPSHM_POPULATE_MADVISE   = 2, /**< madvise(MADV_POPULATE_WRITE) */
	HPSHM_POPULATE_TOUCH     = 4  /**< a write per page under a SIGBUS guard */
};

/** @} */

/** @addtogroup grp_providers
 *  @{ */

/** Provider capabilities, as bits. */
enum hpshm_cap {
	HPSHM_CAP_HUGE     = 1, /**< backs segments with huge pages */
	HPSHM_CAP_REATTACH = 2, /**< a child started by exec can attach the segment */
	HPSHM_CAP_NAMED    = 4, /**< segments can carry a name others open */
	HPSHM_CAP_FD       = 8, /**< segments are backed by a file descriptor */
	HPSHM_CAP_TAG      = 16, /**< the kernel keeps a label with each segment (hpshm_request.tag) */
	HPSHM_CAP_RESIZE   = 32  /**< a segment created with max_size grows and shrinks in place (hpshm_segment_resize()) */
};

/** @} */

/** @addtogroup grp_config
 *  @{ */

/** Log levels for the log callback and the built-in stderr sink. */
typedef enum hpshm_log_level {
	HPSHM_LOG_OFF = 0,     /**< nothing */
	HPSHM_LOG_ERROR = 1,   /**< failures returned to the caller */
	HPSHM_LOG_WARNING = 2, /**< fallbacks and risks */
	HPSHM_LOG_INFO = 3,    /**< one line per segment created or destroyed */
	HPSHM_LOG_DEBUG = 4    /**< one line per decision */
} hpshm_log_level;

/**
 * A log sink.
 * @param user  the pointer given to hpshm_config_set_log()
 * @param level the message's level
 * @param msg   one line, without a trailing newline
 */
typedef void (*hpshm_log_fn)(void *user, hpshm_log_level level, const char *msg);

/** @} */

/** @addtogroup grp_segments
 *  @{ */

/** One provider considered while creating a segment. */
typedef struct hpshm_attempt {
	char   provider[HPSHM_NAME_MAX]; /**< provider name */
	size_t page_size;                /**< page size it was asked for, bytes */
	int    result;                   /**< 0 if it created the segment, else an HPSHM_E* code */
	int    sys_errno;                /**< errno of the failed call, 0 if none */
	char   call[HPSHM_NAME_MAX];     /**< the failed call, or "probe" if probe ruled it out */
	char   reason[HPSHM_TEXT_MAX];   /**< why it failed or was skipped; empty on success */
	uint64_t reserved[4];            /**< zeroed by the library: room for later versions of the report */
} hpshm_attempt;

/** How the process that holds a segment got it (hpshm_report.origin). */
typedef enum hpshm_origin {
	HPSHM_ORIGIN_CREATED  = 0, /**< hpshm_segment_create() (in this process, or one it was forked from) */
	HPSHM_ORIGIN_ATTACHED = 1, /**< hpshm_segment_attach() or _attach_env(), with the creator's token */
	HPSHM_ORIGIN_OPENED   = 2  /**< hpshm_segment_open(), by name */
} hpshm_origin;

/** What a segment really is, verified from the kernel where the OS allows. */
typedef struct hpshm_report {
	unsigned version;                    /**< HPSHM_REPORT_VERSION once the library filled the report */
	char     provider[HPSHM_NAME_MAX];   /**< provider that created the segment */
	size_t   requested_size;             /**< size asked for, bytes */
	size_t   mapped_size;                /**< mapping length (a multiple of page_size), bytes */
	size_t   usable_size;                /**< bytes the caller may use: mapped_size less the header
						  region of re-attachable or named segments */
	size_t   requested_page_size;        /**< page size asked for (0: none, plain pages) */
	size_t   page_size;                  /**< page size read back from the kernel, bytes */
	int      verified;                   /**< 1 if page_size was read from the kernel */
	char     verified_by[HPSHM_NAME_MAX];/**< where it was read: "PROCMAP_QUERY", "smaps", "fstatfs", ... */
	int      huge;                       /**< 1 if backed by huge pages (verified) */
	hpshm_huge_pages policy;             /**< the huge_pages policy in force */
	unsigned populate;                   /**< hpshm_populate_method bits used */
	uint64_t populate_ns;                /**< time spent populating, nanoseconds */
	uint64_t create_ns;                  /**< time for the whole create, nanoseconds; 0 when attached or opened
						  (attach_ns) */
	unsigned nattempts;                  /**< entries used in attempts[]; 0 when attached or opened */
	hpshm_attempt attempts[HPSHM_MAX_ATTEMPTS]; /**< providers considered, in order */
	/* ---- version 2: taken out of the reserved space, which kept the struct's size ---- */
	unsigned origin;                     /**< an hpshm_origin: created, attached or opened */
	int      relocated;                  /**< 1 if this process mapped the segment elsewhere than its creator did
						  (hpshm_segment_open() without reattach=exec); 0 at the creator's address */
	uint64_t attach_ns;                  /**< time hpshm_segment_attach() or _open() took, nanoseconds; 0 when
						  created */
	/* ---- version 3 ---- */
	unsigned populate_threads;           /**< threads that populated the segment; 0 when it was not populated */
	unsigned nnodes;                     /**< entries of node_bytes filled: the highest NUMA node holding pages,
						  plus 1; 0 when not read (numa=default, or the OS cannot say) */
	uint64_t node_bytes[HPSHM_REPORT_NODES]; /**< bytes of the segment on each NUMA node after create, read back
						      from the kernel (Linux: move_pages); hpshm_segment_nodes()
						      reads any number of nodes, now */
	uint64_t reserved[30 - 1 - HPSHM_REPORT_NODES];               /**< zeroed by the library: room for the members of later versions */
} hpshm_report;

/** Opaque configuration: a set of key values with their sources.
 *  @ingroup grp_config */
typedef struct hpshm_config hpshm_config;
/** Opaque shared memory segment. */
typedef struct hpshm_segment hpshm_segment;

/** @} */

/** @addtogroup grp_basics
 *  @{ */

/**
 * The short message of an error code.
 * @param code an HPSHM_E* code (or 0)
 * @return a static string, never NULL
 */
HPSHM_API const char *hpshm_strerror(int code);

/**
 * The symbolic name of an error code, e.g. "HPSHM_EUNAVAILABLE".
 * @param code an HPSHM_E* code (or 0)
 * @return a static string, never NULL
 */
HPSHM_API const char *hpshm_errname(int code);

/**
 * The library version as "major.minor.patch".
 * @return a static string
 */
HPSHM_API const char *hpshm_version(void);

/**
 * The library version as a number, as HPSHM_VERSION_NUMBER computes it: that of the library
 * loaded at run time, where the macro is that of the header a program was built with.
 * @return MAJOR * 10000 + MINOR * 100 + PATCH
 */
HPSHM_API unsigned hpshm_version_number(void);

/** @} */

/** @addtogroup grp_config
 *  @{ */

/**
 * Make a configuration holding every key's default.
 * @param[out] out the new configuration
 * @return 0, or HPSHM_ENOMEM
 */
HPSHM_API int hpshm_config_new(hpshm_config **out);

/**
 * Free a configuration.  NULL is allowed.  A segment keeps its own copy of the configuration it
 * was created, attached or opened with (its log callback and user pointer included), so cfg may
 * be freed, or changed, as soon as those calls have returned.
 * @param cfg the configuration
 */
HPSHM_API void hpshm_config_free(hpshm_config *cfg);

/**
 * Set one key from the API: this source wins over file and environment.
 * @param cfg   the configuration
 * @param key   a key of the key table (hpshm_config_key_name())
 * @param value its value as text
 * @param err   filled on failure, may be NULL
 * @return 0, HPSHM_ENOKEY (unknown key) or HPSHM_EVALUE (bad value); err names the key and
 *         the accepted values
 */
HPSHM_API int hpshm_config_set(hpshm_config *cfg, const char *key, const char *value, hpshm_error *err);

/*
 * Typed setters for the keys programs set most.  Each one turns its value into the key's text
 * and goes through the same parser as hpshm_config_set(), so a value is accepted, refused
 * (with the same code, err->key and accepted values) and ranked (API precedence) exactly as
 * the text would be.
 */

/**
 * Set huge_pages from the API.
 * @param cfg    the configuration
 * @param policy HPSHM_HUGE_OFF, HPSHM_HUGE_TRY or HPSHM_HUGE_ON
 * @param err    filled on failure, may be NULL
 * @return 0, HPSHM_EVALUE (not one of the three; err->key is "huge_pages") or HPSHM_EINVAL
 *         (cfg is NULL)
 */
HPSHM_API int hpshm_config_set_huge_pages(hpshm_config *cfg, hpshm_huge_pages policy, hpshm_error *err);

/**
 * Set provider from the API: the providers to try, in order.  The names come as an array
 * rather than one comma-separated string because a program holds them as separate strings
 * (from its own list, or from argv) and should not have to join them; a name holding a comma
 * is refused rather than split.  Each element is one item of the provider key: a provider
 * name, "auto" first, or "-name" after auto to leave a provider out, so {"auto",
 * "-sysv_hugetlb"} is provider=auto,-sysv_hugetlb.
 * @param cfg   the configuration
 * @param names the items, n of them
 * @param n     how many (0 is an empty value, refused as provider= is)
 * @param err   filled on failure, may be NULL
 * @return 0, HPSHM_ENOPROVIDER (a name this build lacks), HPSHM_EVALUE (a bad list; err->key
 *         is "provider") or HPSHM_EINVAL (cfg NULL, or names or one of its elements NULL)
 */
HPSHM_API int hpshm_config_set_provider(hpshm_config *cfg, const char *const *names, size_t n, hpshm_error *err);

/**
 * Set huge_page_size from the API.
 * @param cfg   the configuration
 * @param bytes a power of two, HPSHM_PAGE_SIZE_DEFAULT or HPSHM_PAGE_SIZE_LARGEST
 * @param err   filled on failure, may be NULL
 * @return 0, HPSHM_EVALUE (not a power of two; err->key is "huge_page_size") or HPSHM_EINVAL
 *         (cfg is NULL)
 */
HPSHM_API int hpshm_config_set_huge_page_size(hpshm_config *cfg, size_t bytes, hpshm_error *err);

/**
 * Set reattach from the API.
 * @param cfg  the configuration
 * @param mode HPSHM_REATTACH_OFF or HPSHM_REATTACH_EXEC
 * @param err  filled on failure, may be NULL
 * @return 0, HPSHM_EVALUE (neither; err->key is "reattach") or HPSHM_EINVAL (cfg is NULL)
 */
HPSHM_API int hpshm_config_set_reattach(hpshm_config *cfg, hpshm_reattach mode, hpshm_error *err);

/** hpshm_config_set_populate_threads(): as many as the CPUs this process may run on allow ("auto"). */
#define HPSHM_POPULATE_THREADS_AUTO 0u

/**
 * Set populate_threads from the API: how many threads fault a segment in when it is
 * populated, each one contiguous range.  Auto uses the CPUs this process may run on (its
 * affinity mask and its cgroup's CPU quota) and gives no thread less than 64 MiB, so a small
 * segment is populated by the calling thread alone.
 * @param cfg     the configuration
 * @param threads HPSHM_POPULATE_THREADS_AUTO, or 1 to 64
 * @param err     filled on failure, may be NULL
 * @return 0, HPSHM_EVALUE (out of range; err->key is "populate_threads") or HPSHM_EINVAL (cfg is NULL)
 */
HPSHM_API int hpshm_config_set_populate_threads(hpshm_config *cfg, unsigned threads, hpshm_error *err);

/**
 * Set max_size from the API: the size a segment may grow to with hpshm_segment_resize().  The
 * address range for it is reserved at create, and in every process that attaches, opens or
 * inherits the segment, so the segment grows and shrinks at the same address everywhere;
 * pages are taken only for the size in use.  0 ("off", the default) makes segments that
 * cannot change size.  Only providers with HPSHM_CAP_RESIZE take such a segment
 * (memfd_hugetlb, hugetlbfs and plain on Linux); it keeps its header at the tail, which
 * costs one page (64 KiB at least) after max_size.
 * @param cfg   the configuration
 * @param bytes the largest size, or 0 for none; a create with a larger size fails
 * @param err   filled on failure, may be NULL
 * @return 0, HPSHM_EOVERFLOW (too large for this address space) or HPSHM_EINVAL (cfg is NULL)
 */
HPSHM_API int hpshm_config_set_max_size(hpshm_config *cfg, size_t bytes, hpshm_error *err);

/**
 * How many threads a populate of a segment of size bytes on pages of page_size would use
 * under cfg, with auto resolved for this process now (its CPUs, its cgroup's quota), as
 * `hpshm plan` and `hpshm probe` print it.
 * @param size      the segment's size, bytes
 * @param page_size its page size, bytes (0: the base page size)
 * @param cfg       the configuration, or NULL for the defaults
 * @return 1 or more
 */
HPSHM_API unsigned hpshm_populate_threads(size_t size, size_t page_size, const hpshm_config *cfg);

/**
 * Set keys from a "key=value,key=value" string, with API precedence.  A comma-separated item
 * without '=' continues the previous value, so "provider=memfd_hugetlb,hugetlbfs,huge_pages=on"
 * sets a two-provider list.  Nothing is changed if any item is bad.
 * @param cfg the configuration
 * @param kv  the string
 * @param err filled on failure, may be NULL
 * @return 0 or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_config_parse(hpshm_config *cfg, const char *kv, hpshm_error *err);

/**
 * Set keys from a file: one "key = value" per line, '#' starts a comment.  A line is at most
 * 1023 bytes with its newline; a NUL byte is an error.  File values lose to the environment
 * and to the API.  Nothing is changed if any line is bad or the file cannot be read.
 * @param cfg  the configuration
 * @param path the file
 * @param err  filled on failure (err->message names the line), may be NULL
 * @return 0, HPSHM_EIO, HPSHM_ENOKEY or HPSHM_EVALUE
 */
HPSHM_API int hpshm_config_load_file(hpshm_config *cfg, const char *path, hpshm_error *err);

/**
 * Set keys from the environment: HPSHM_<KEY> in upper case (HPSHM_HUGE_PAGES=on).  Ignored,
 * returning 0, in a setuid or setgid program.  Environment values lose to the API.
 * @param cfg the configuration
 * @param err filled on failure, may be NULL
 * @return 0 or a negative HPSHM_E* code naming the variable
 */
HPSHM_API int hpshm_config_load_env(hpshm_config *cfg, hpshm_error *err);

/**
 * Read a key's current value as text, e.g. for printing the effective configuration.  Like
 * snprintf(): the value is cut to fit len - 1 bytes and always terminated when len > 0,
 * nothing is written when len is 0, and the return value is the length of the whole value,
 * so hpshm_config_get(cfg, key, NULL, 0) + 1 is the buffer size it needs and a result >= len
 * means the value was cut.
 * @param cfg   the configuration
 * @param key   the key
 * @param buf   where to write the value; may be NULL when len is 0
 * @param len   size of buf
 * @return the length of the whole value, HPSHM_ENOKEY, or HPSHM_EINVAL (NULL cfg or key, or
 *         NULL buf with len > 0)
 */
HPSHM_API int hpshm_config_get(const hpshm_config *cfg, const char *key, char *buf, size_t len);

/**
 * Name a key of the key table, for listing them.
 * @param index 0, 1, ... 
 * @param[out] description a one-line description (may be NULL)
 * @param[out] values the accepted values as text (may be NULL)
 * @return the key name, or NULL past the last key
 */
HPSHM_API const char *hpshm_config_key_name(unsigned index, const char **description, const char **values);

/**
 * Send the library's log lines to a callback instead of the built-in stderr sink.
 *
 * Lifetime: every segment created, attached or opened with cfg keeps a copy of fn and user
 * and logs through them until it is destroyed or detached (the line that says so included),
 * after cfg itself may have been freed.  So user, and whatever fn needs, must stay valid as
 * long as cfg or any of those segments lives.  fn runs in the thread that made the call.
 * @param cfg  the configuration segments will be created with
 * @param fn   the callback, or NULL for the built-in sink (controlled by log_level)
 * @param user passed back to fn
 * @param level the most detailed level passed to fn
 */
HPSHM_API void hpshm_config_set_log(hpshm_config *cfg, hpshm_log_fn fn, void *user, hpshm_log_level level);

/** @} */

/** @addtogroup grp_basics
 *  @{ */

/**
 * Parse a size such as "16MiB", "2MB", "1g", "4096".  Units are powers of 1024 (k, M, G, T,
 * with or without "B" or "iB"), as for huge page sizes everywhere.
 * @param text the text
 * @param[out] out the size in bytes
 * @return 0, HPSHM_EVALUE (not a size) or HPSHM_EOVERFLOW
 */
HPSHM_API int hpshm_size_parse(const char *text, size_t *out);

/**
 * Format a size for people: "2MiB", "1GiB", "3000B".
 * @param size the size
 * @param buf  where to write it
 * @param len  size of buf
 * @return buf
 */
HPSHM_API char *hpshm_size_format(size_t size, char *buf, size_t len);

/** @} */

/** @addtogroup grp_segments
 *  @{ */

/**
 * What a segment of size bytes on pages of page_size would take under cfg, without creating
 * it: the length of the mapping (a multiple of page_size) and the bytes of it the caller gets
 * (hpshm_segment_size(): the header of a named segment takes 4 KiB at its tail, which is one
 * more page when size fills whole pages; an unnamed re-attachable segment's header costs no
 * huge page).
 * An operator sizes the pool with it (`hpshm plan`), as PostgreSQL's
 * shared_memory_size_in_huge_pages does.
 * @param size      bytes wanted (> 0)
 * @param page_size the page size (a power of two)
 * @param cfg       the configuration (reattach, name), or NULL for the defaults
 * @param[out] mapped what create would map, bytes
 * @param[out] usable what the caller would get, bytes (may be NULL)
 * @return 0, HPSHM_EINVAL (size 0, page_size not a power of two) or HPSHM_EOVERFLOW
 */
HPSHM_API int hpshm_segment_footprint(size_t size, size_t page_size, const hpshm_config *cfg, size_t *mapped,
				      size_t *usable);

/**
 * Create a shared segment of at least size bytes, choosing the provider as cfg says.  This
 * process is then the segment's owner (hpshm_segment_is_owner()).
 * @param[out] out the segment
 * @param size bytes wanted (> 0); the usable size may be larger (hpshm_segment_size())
 * @param cfg  the configuration, or NULL for the defaults; the segment keeps a copy, so it
 *             may be freed once the call returned (see hpshm_config_set_log() for the log's
 *             user pointer)
 * @param err  filled on failure with every provider's reason and one hint, may be NULL
 * @return 0 or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_segment_create(hpshm_segment **out, size_t size, const hpshm_config *cfg, hpshm_error *err);

/**
 * hpshm_segment_create(), also filling a report whether it succeeds or fails, so a caller can
 * show every provider tried and why it failed.
 * @param[out] out the segment
 * @param size bytes wanted (> 0)
 * @param cfg  the configuration, or NULL for the defaults
 * @param[out] report filled on success and on failure (may be NULL)
 * @param err  filled on failure, may be NULL
 * @return 0 or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_segment_create_ex(hpshm_segment **out, size_t size, const hpshm_config *cfg,
				      hpshm_report *report, hpshm_error *err);

/**
 * Release a segment: in its owner, unmap it and remove the object (a named segment's name, a
 * SysV segment's id), so no process can attach or open it any more; anywhere else, only
 * hpshm_segment_detach().  The owner is the process that created the segment, known by its
 * process id and start time, not by the handle: a worker made by fork() holds a copy of the
 * creator's handle, and its destroy (clean-up code that runs in every process, an atexit
 * handler) only detaches, as does the destroy of a process that attached or opened the
 * segment.  Memory the segment's processes share goes when the last of them lets go of it:
 * an unnamed segment's at once, a named one's once its owner removed it.  NULL is allowed.
 * @param seg the segment; the handle is freed
 * @return 0, or a negative HPSHM_E* code if the OS refused (the handle is freed anyway)
 */
HPSHM_API int hpshm_segment_destroy(hpshm_segment *seg);

/**
 * Unmap a segment in this process and free the handle, leaving the object: even in its owner,
 * the name or SysV id stays, and other processes can go on attaching or opening it (a named
 * segment nobody maps then is dead to `hpshm gc`, which removes it; an unnamed one goes with
 * the last process that maps it).  A server that hands its segment to a successor calls this
 * rather than hpshm_segment_destroy().  NULL is allowed.
 * @param seg the segment; the handle is freed
 * @return 0, or a negative HPSHM_E* code if the OS refused (the handle is freed anyway)
 */
HPSHM_API int hpshm_segment_detach(hpshm_segment *seg);

/**
 * The segment's first byte.
 * @param seg the segment
 * @return its address
 */
HPSHM_API void *hpshm_segment_address(const hpshm_segment *seg);

/**
 * The usable size: for a segment made with max_size, the size this process mapped at its
 * last hpshm_segment_sync() (or resize, create, attach); else the requested size rounded up to whole pages of the size actually used,
 * less the 4 KiB header region when a named or re-attachable segment keeps its header at its
 * tail (an unnamed re-attachable segment on huge pages keeps it in a companion of base pages
 * when the tail has no room, and then all of the mapping is usable).  The report's
 * mapped_size is the length mapped; hpshm_segment_footprint() gives both before create.
 * @param seg the segment
 * @return bytes
 */
HPSHM_API size_t hpshm_segment_size(const hpshm_segment *seg);

/**
 * The size a resizable segment may grow to (its max_size rounded up to whole pages), or 0 if
 * it was created without max_size and cannot change size.
 * @param seg the segment
 * @return bytes, or 0
 */
HPSHM_API size_t hpshm_segment_max_size(const hpshm_segment *seg);

/**
 * Grow or shrink a segment created with max_size, in place, by its owner (the creating
 * process).  new_size is rounded up to whole pages.
 *
 * A grow first takes the new pages from the pool or the file system, so a grow that cannot
 * be had fails with HPSHM_ENOMEM and the operator's fix and changes nothing (size, content,
 * pool); then it makes the range accessible here and publishes the new size in the segment's
 * header, with a new generation.  Pages a grow adds are zero, unless they come back from a
 * shrink whose pages were not yet given back, which keep what they held.
 *
 * A shrink makes the tail inaccessible here and publishes the smaller size; the tail's pages
 * go back to the system once every process attached to the segment has called
 * hpshm_segment_sync() since: at once when none is behind, else at the owner's next
 * hpshm_segment_resize() or hpshm_segment_sync() after the last one did.  Until a process
 * syncs, the size it had stays valid for it.
 *
 * Not to be called concurrently with itself or hpshm_segment_sync() on the same handle
 * (doc/threads.md); other threads may use the bytes below the smaller size, and fork().
 * @param seg      the segment
 * @param new_size the new size, 1 byte to hpshm_segment_max_size()
 * @param err      filled on failure, may be NULL
 * @return 0; HPSHM_ENOTSUP (no max_size at create, or a provider without HPSHM_CAP_RESIZE: err
 *         names the providers that can), HPSHM_EACCES (not the owner), HPSHM_EVALUE (0 or
 *         beyond max_size), HPSHM_ENOMEM (no pages for the growth), or HPSHM_ESYS
 */
HPSHM_API int hpshm_segment_resize(hpshm_segment *seg, size_t new_size, hpshm_error *err);

/**
 * Bring this process's mapping of a resizable segment to the size its owner published, and
 * say so in the segment's header, so the owner may give the pages of a shrink back.  Call it
 * at the points where the process holds no pointer into the segment past the size it may
 * shrink to (between requests, as PostgreSQL's backends process a barrier).  When nothing
 * changed it is one read of the header's generation (well under a microsecond).
 *
 * Until it syncs, a process may touch the size it had at its last sync (or at attach): a
 * grow is not visible to it (a touch past that size faults: SIGSEGV, as past any mapping),
 * and the pages of a shrink stay for it.  After it syncs, hpshm_segment_size() is the
 * published size.  A segment that cannot change size is always in sync: 0 at once.
 * @param seg the segment
 * @param err filled on failure, may be NULL
 * @return 0, or HPSHM_ESYS (the OS refused to change the mapping)
 */
HPSHM_API int hpshm_segment_sync(hpshm_segment *seg, hpshm_error *err);

/**
 * What the segment is: provider, sizes, verified page size, populate, attempts, and how this
 * process got it (origin: created, attached or opened; relocated when it is mapped elsewhere
 * than its creator mapped it; attach_ns).
 * @param seg the segment
 * @return the report, valid until the segment is destroyed
 */
HPSHM_API const hpshm_report *hpshm_segment_report(const hpshm_segment *seg);

/**
 * The report as one line for people.  A created segment's line gives create= (the whole
 * create) and attempts=; an attached or opened one's says so instead, with attach= or open=
 * (the time that took) and whether it is at the creator's address.
 * @param r   the report
 * @param buf where to write it
 * @param len size of buf
 * @return the length the line needed (as snprintf)
 */
HPSHM_API int hpshm_report_format(const hpshm_report *r, char *buf, size_t len);

/**
 * Where the segment's pages are now, per NUMA node, read from the kernel (Linux: move_pages
 * with no target, as `numastat -p` does); pages not yet faulted in are not counted.  It reads
 * every page: about a millisecond per GiB of 2 MiB pages, more for 4 KiB ones.
 * @param seg   the segment
 * @param bytes bytes[n] gets the bytes on node n, for n < max
 * @param max   entries of bytes
 * @param err   filled on failure, may be NULL
 * @return the number of nodes counted (the highest node holding pages, plus 1; at most max),
 *         HPSHM_ENOTSUP where the OS cannot say, or HPSHM_EINVAL
 */
HPSHM_API int hpshm_segment_nodes(const hpshm_segment *seg, uint64_t *bytes, unsigned max, hpshm_error *err);

/**
 * Name of a populate method set, e.g. "fallocate+madvise" or "none".
 * @param methods hpshm_populate_method bits
 * @return a static string
 */
HPSHM_API const char *hpshm_populate_name(unsigned methods);

/** @} */

/** @addtogroup grp_reattach
 *  @{ */

/** Longest re-attach token, with its terminating NUL. */
#define HPSHM_TOKEN_MAX 512

/**
 * Export the token a child started by exec passes to hpshm_segment_attach().  The segment must
 * have been created with reattach=exec (or a name) by a provider that can re-attach.
 * @param seg the segment
 * @param buf where to write the token (printable ASCII, no spaces)
 * @param len size of buf; HPSHM_TOKEN_MAX is always enough
 * @param err filled on failure, may be NULL
 * @return the token's length, or HPSHM_ENOTSUP / HPSHM_EINVAL
 */
HPSHM_API int hpshm_segment_token(const hpshm_segment *seg, char *buf, size_t len, hpshm_error *err);

/**
 * Attach, in another process, the segment a token names, at the creator's address.  The
 * mapping is refused if the address range is taken (err names what holds it), if the
 * segment's header does not match the token (its nonce, sizes, provider, or the address the
 * creator mapped it at), or if the kernel reports another page size.
 * hpshm_segment_destroy() on an attached segment only detaches it.
 * @param[out] out the attached segment
 * @param token the creator's token
 * @param cfg   configuration (log sink), or NULL
 * @param err   filled on failure, may be NULL
 * @return 0 or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_segment_attach(hpshm_segment **out, const char *token, const hpshm_config *cfg,
				   hpshm_error *err);

/**
 * hpshm_segment_attach() with the token from the HPSHM_TOKEN environment variable, as set by
 * hpshm_child_spawn().  Like the HPSHM_<KEY> variables, it is ignored in a setuid or setgid
 * program, which must not map what its caller names: such a program calls
 * hpshm_segment_attach().
 * @param[out] out the attached segment
 * @param cfg configuration, or NULL
 * @param err filled on failure, may be NULL
 * @return 0, HPSHM_EINVAL if HPSHM_TOKEN is not set, or another negative HPSHM_E* code
 */
HPSHM_API int hpshm_segment_attach_env(hpshm_segment **out, const hpshm_config *cfg, hpshm_error *err);

/**
 * Open, in any process (not only a child of the creator, and without a token), the segment
 * another process created with name= set, as shm_open() or APR's apr_shm_attach() do.  The
 * object is found by its name: with provider= set in cfg only by those providers, else by
 * every provider that names segments (HPSHM_CAP_NAMED), in the order `auto` walks them
 * (SysV keys, hugetlbfs files, POSIX shared memory names, Windows named sections).  hugetlbfs
 * looks in hugetlbfs_path when cfg sets it, else in every hugetlbfs mount.  The object must
 * prove it is an hpshm segment by the header its creator wrote, and is mapped at the
 * creator's address when cfg says reattach=exec (pointers stored in the segment are then
 * right here too; a taken range is HPSHM_EEXIST naming what holds it), else where the system
 * chooses.  The kernel's page size must be the one the creator verified, and
 * cfg's huge_page_size when it names one.  The report says so: origin HPSHM_ORIGIN_OPENED,
 * the provider, the verified page size, relocated when not at the creator's address.
 * huge_pages and populate do not apply (the segment exists).  This process is not the
 * owner: hpshm_segment_destroy() only detaches.
 * @param[out] out the opened segment
 * @param name the segment's name, as its creator's name= had it
 * @param cfg  configuration (provider, hugetlbfs_path, huge_page_size, reattach, log sink),
 *             or NULL; the segment keeps a copy
 * @param err  filled on failure, may be NULL
 * @return 0; HPSHM_ENOENT (no such segment, or one whose creator has not finished creating
 *         it); HPSHM_EACCES (another user's segment this user may not open; err names the
 *         owner); HPSHM_EINVAL (the object under that name is not an hpshm segment);
 *         HPSHM_EVALUE (its page size is not cfg's huge_page_size; err->key says which key);
 *         HPSHM_EEXIST (reattach=exec and the creator's range is taken here); or another
 *         negative HPSHM_E* code
 */
HPSHM_API int hpshm_segment_open(hpshm_segment **out, const char *name, const hpshm_config *cfg, hpshm_error *err);

/**
 * Is the calling process the segment's owner: did it create the segment (1), or did it attach
 * or open it, or inherit the handle from the creator by fork() (0)?  Asked of the calling
 * process each time, by its process id and start time: in a worker forked from the creator
 * the answer is 0, and there hpshm_segment_destroy() only detaches.
 * @param seg the segment
 * @return 1 or 0
 */
HPSHM_API int hpshm_segment_is_owner(const hpshm_segment *seg);

/** A child process started by hpshm_child_spawn(). */
typedef struct hpshm_child {
	unsigned  version;     /**< HPSHM_CHILD_VERSION once the library started the child */
	long long pid;         /**< process id */
	void     *handle;      /**< OS handle where the OS has one (Windows), else NULL */
	uint64_t  reserved[4]; /**< zeroed by the library: room for the members of later versions */
} hpshm_child;

/**
 * Start a program by exec with everything it needs to attach seg: the segment's descriptor
 * kept open across exec where the provider has one, and the token in HPSHM_TOKEN.  On
 * Windows the child is created suspended and the segment's range reserved in it first.
 * @param seg  the segment (created with reattach=exec)
 * @param path the program
 * @param argv its arguments, NULL-terminated (argv[0] included)
 * @param envp its environment, NULL-terminated, or NULL for this process's
 * @param[out] child the started child
 * @param err  filled on failure, may be NULL
 * @return 0 or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_child_spawn(const hpshm_segment *seg, const char *path, char *const argv[], char *const envp[],
				hpshm_child *child, hpshm_error *err);

/** hpshm_spawn_options.version this library knows. */
#define HPSHM_SPAWN_OPTIONS_VERSION 1

/** hpshm_spawn_options.flags. */
typedef enum hpshm_spawn_flag {
	/** End the child when this process ends, however it ends (a crash, TerminateProcess, SIGKILL).
	 *  Windows: the child is put, before it runs, in a job object this library keeps for the
	 *  process with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE; the job's last handle closes when this
	 *  process ends, and Windows ends every process in it, the child's own children included.
	 *  Linux: prctl(PR_SET_PDEATHSIG, SIGKILL) in the child before exec, which the kernel ties
	 *  to the thread that spawned it: call from a thread that lives as long as the child should.
	 *  Other systems have no such mechanism: HPSHM_ENOTSUP, and no child is started. */
	HPSHM_SPAWN_KILL_WITH_PARENT = 1
} hpshm_spawn_flag;

/**
 * What hpshm_child_spawn_ex() does beyond hpshm_child_spawn().  Zero it, set version, then
 * the members wanted; a library reads only the members of the version it is given, and
 * refuses a non-zero reserved tail (HPSHM_EINVAL), so a program built for a later version is
 * told rather than half served.
 */
typedef struct hpshm_spawn_options {
	unsigned        version;     /**< HPSHM_SPAWN_OPTIONS_VERSION */
	unsigned        flags;       /**< hpshm_spawn_flag bits */
	const intptr_t *handles;     /**< more objects the child keeps, under the same value: descriptors
	                                  (POSIX) or HANDLEs (Windows: sockets, pipe ends); NULL if none */
	size_t          nhandles;    /**< how many handles, at most 62 */
	uint64_t        reserved[6]; /**< zero: room for the members of later versions */
} hpshm_spawn_options;

/**
 * hpshm_child_spawn() with options: extra handles the child keeps (its other end of a pipe, a
 * listening socket), passed to that child only, as the segment's are (POSIX: their
 * close-on-exec flag cleared in the child between fork and exec; Windows: added to the
 * child's PROC_THREAD_ATTRIBUTE_HANDLE_LIST, made inheritable just for its CreateProcessW()
 * if they were not), and HPSHM_SPAWN_KILL_WITH_PARENT.  opt NULL is hpshm_child_spawn().
 * @param seg  the segment (created with reattach=exec)
 * @param path the program
 * @param argv its arguments, NULL-terminated (argv[0] included)
 * @param envp its environment, NULL-terminated, or NULL for this process's
 * @param opt  the options, or NULL
 * @param[out] child the started child
 * @param err  filled on failure, may be NULL
 * @return 0, HPSHM_EINVAL (an unknown version, flag or a non-zero reserved member, too many
 *         handles, a handle not open here), HPSHM_ENOTSUP (HPSHM_SPAWN_KILL_WITH_PARENT where
 *         the system has no way to do it), or another negative HPSHM_E* code
 */
HPSHM_API int hpshm_child_spawn_ex(const hpshm_segment *seg, const char *path, char *const argv[],
				   char *const envp[], const hpshm_spawn_options *opt, hpshm_child *child,
				   hpshm_error *err);

/**
 * Windows: prepare a child that a server created itself, suspended (CREATE_SUSPENDED), to
 * attach seg: the segment's range is reserved in it (as hpshm_child_spawn() does, so that
 * neither its DLLs nor its heaps take the address before it attaches), the segment's handles
 * are duplicated into that process alone (nothing of this process becomes inheritable), and
 * the token the child passes to hpshm_segment_attach() is written to buf, with the handle
 * values the child has.  The server then hands the child the token through a channel the
 * child reads once it runs (its standard input, a pipe, a parameter block in shared memory as
 * PostgreSQL passes its backends' handles: the command line and environment are fixed once
 * CreateProcess() returned), and resumes it.  If the server ends the child instead, the
 * handles and the reservation go with it.  Call it once per child.
 * POSIX has no suspended child to prepare (exec replaces the address space): HPSHM_ENOTSUP;
 * there hpshm_segment_inherit() in the forked child, before its exec, does the same.
 * @param seg     the segment, created with reattach=exec
 * @param process the child's process HANDLE, with PROCESS_VM_OPERATION and PROCESS_DUP_HANDLE
 *                access (CreateProcess()'s hProcess has all access)
 * @param buf     where to write the token; HPSHM_TOKEN_MAX bytes are always enough
 * @param len     size of buf
 * @param err     filled on failure, may be NULL
 * @return the token's length; or HPSHM_ENOTSUP (not re-attachable, or not Windows), HPSHM_EEXIST
 *         (the range is taken in the child: err names it), HPSHM_EINVAL, HPSHM_ESYS; on failure
 *         nothing is left in the child
 */
HPSHM_API int hpshm_child_prepare(const hpshm_segment *seg, void *process, char *buf, size_t len,
				  hpshm_error *err);

/**
 * Wait for a child started by hpshm_child_spawn().
 * @param child the child
 * @param[out] status its exit code, or 128 + the signal that ended it (may be NULL)
 * @param err filled on failure, may be NULL
 * @return 0 or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_child_wait(hpshm_child *child, int *status, hpshm_error *err);

/**
 * Keep a re-attachable segment across an exec this process does itself, for a server with
 * its own process manager (hpshm_child_spawn() does all of this for its children): the
 * handles a child needs (the segment's descriptor or HANDLE, and its header companion's)
 * are left inheritable in this process, and the token to hand the new program (in its
 * environment as HPSHM_TOKEN, or on its command line) is written to buf.  The new program
 * calls hpshm_segment_attach() or hpshm_segment_attach_env().  On Windows the program must be
 * started with handle inheritance (bInheritHandles); the range is not reserved in it, so an
 * attach that finds it taken fails and names the holder.  A segment found by name or SysV id
 * needs no handle.  The handles stay inheritable, for every program this process starts
 * (CGI scripts, loggers), until hpshm_segment_uninherit() or the segment is destroyed.
 *
 * Which to use when:
 *   - hpshm_child_spawn(): hands the segment to that one child only: the handles are passed
 *     to it alone (POSIX: cleared of close-on-exec in the child between fork and exec;
 *     Windows: the child's handle list) and stay private in this process, so nothing else
 *     this process or its other threads start gets them.  Prefer it.
 *   - hpshm_segment_inherit() then hpshm_segment_uninherit(): for a process manager that
 *     starts its workers itself: call inherit just before its fork-and-exec, posix_spawn or
 *     CreateProcess, and uninherit as soon as it returned, so children started later do not
 *     get the handle.  Another thread of this process that starts a program in between still
 *     hands it the handles: serialise process starts with it, or use hpshm_child_spawn().
 *   - A process manager that fork()s and then execs can also call hpshm_segment_inherit() in
 *     the forked child, before its exec: only that child's descriptor changes.
 *   - hpshm_child_spawn_ex(): hpshm_child_spawn() with more handles for the child (pipes,
 *     sockets) and HPSHM_SPAWN_KILL_WITH_PARENT for workers that must not outlive the server.
 *   - hpshm_child_prepare() (Windows): for a server that calls CreateProcess() itself: create
 *     the worker suspended, prepare it, give it the token, resume it.  Only that child gets
 *     the handles, and its range is kept free, with no window for other threads.
 * @param seg the segment, created with reattach=exec
 * @param buf where to write the token; HPSHM_TOKEN_MAX bytes are always enough
 * @param len size of buf
 * @param err filled on failure, may be NULL
 * @return the token's length, or a negative HPSHM_E* code (HPSHM_ENOTSUP: not re-attachable)
 */
HPSHM_API int hpshm_segment_inherit(const hpshm_segment *seg, char *buf, size_t len, hpshm_error *err);

/**
 * Undo hpshm_segment_inherit(): the segment's handles (and its header companion's) are
 * private to this process again (close-on-exec; Windows: not inheritable), so programs this
 * process starts from now on do not get them.  A child started before keeps what it
 * inherited.  Harmless on a segment whose handles were never made inheritable, and on one that
 * has none (found by name or SysV id).  See hpshm_segment_inherit() for which call to use when.
 * @param seg the segment
 * @param err filled on failure, may be NULL
 * @return 0, or a negative HPSHM_E* code (HPSHM_ESYS: the OS refused; the handles may then be
 *         left inheritable)
 */
HPSHM_API int hpshm_segment_uninherit(const hpshm_segment *seg, hpshm_error *err);

/** @} */

/** @addtogroup grp_objects
 *  @{ */

/** What hpshm_objects_list() found an object to be (hpshm_object.state). */
typedef enum hpshm_object_state {
	HPSHM_OBJECT_ALIVE   = 0, /**< hpshm's, and a process holds it or its creator runs: never removed */
	HPSHM_OBJECT_DEAD    = 1, /**< hpshm's (its header, or its provider's creation mark), and nobody holds it */
	HPSHM_OBJECT_DEBRIS  = 2, /**< nobody holds it, and nothing proves it is hpshm's (no header, no mark):
	                               removed only with HPSHM_REMOVE_FORCE (another user's: and
	                               HPSHM_REMOVE_ALL_USERS) */
	HPSHM_OBJECT_FOREIGN = 3  /**< not hpshm's (a FIFO, a symbolic link, another program's segment): never removed */
} hpshm_object_state;

/** A named segment found on the machine by hpshm_objects_list(). */
typedef struct hpshm_object {
	unsigned  version;                  /**< HPSHM_OBJECT_VERSION once the library listed the object */
	char      provider[HPSHM_NAME_MAX]; /**< provider that made it */
	char      id[256];                  /**< where it is: a file path, or "shm=<id>" */
	char      name[128];                /**< the segment's name */
	size_t    size;                     /**< bytes the caller could use; the object's size if no header */
	size_t    page_size;                /**< page size its creator verified */
	long long creator_pid;              /**< the creating process, 0 if it has no header */
	uint64_t  created_unix;             /**< creation time, seconds since the epoch */
	int       alive;                    /**< 1 if a process still holds it, 0 if none does, -1 foreign */
	int       state;                    /**< an hpshm_object_state */
	char      note[128];                /**< why it is in that state, for people */
	int       mine;                     /**< 1 if the calling user owns it (a SysV segment: as owner and creator),
	                                         0 if another user does or the system cannot tell */
	int       spare;                    /**< zeroed by the library: room for a member of a later version */
	uint64_t  reserved[15];             /**< zeroed by the library: room for the members of later versions */
} hpshm_object;

/**
 * Called by hpshm_objects_list() for each object.
 * @param user the pointer given to hpshm_objects_list()
 * @param obj  the object
 * @return 0 to go on, non-zero to stop
 */
typedef int (*hpshm_object_fn)(void *user, const hpshm_object *obj);

/**
 * List the named hpshm segments on this machine (SysV segments, hugetlbfs files, POSIX shm
 * objects), with whether any process still holds each.  Only hpshm's namespace is looked at
 * (hpshm.* names, hpshm's SysV key ranges), and what is found there is classified (state):
 * alive, dead (hpshm's and held by nobody), debris (held by nobody, but without the header or
 * mark that would prove it hpshm's) and foreign (a FIFO, a symbolic link, a SysV segment
 * that is not hugetlb memory of an hpshm size, or a header that is not hpshm's).  Looking
 * never blocks on a FIFO and never follows a symbolic link.  An object without a header is
 * listed with creator_pid 0 and, for SysV, an empty name.  Where the system gives no way at
 * all to list a provider's objects (POSIX shared memory objects outside Linux, which are not
 * files), that provider lists none; `hpshm ls` says so there.
 * @param fn   called for each object
 * @param user passed to fn
 * @param err  filled on failure, may be NULL
 * @return the number of objects listed, or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_objects_list(hpshm_object_fn fn, void *user, hpshm_error *err);

/** hpshm_objects_remove(): also remove debris (HPSHM_OBJECT_DEBRIS), which nothing proves is
 *  hpshm's, when it belongs to the calling user (its effective uid). */
#define HPSHM_REMOVE_FORCE 0x1u
/** hpshm_objects_remove(), with HPSHM_REMOVE_FORCE: remove other users' debris too.  Alone it
 *  changes nothing, since dead hpshm segments are removed whoever owns them. */
#define HPSHM_REMOVE_ALL_USERS 0x2u

/**
 * Remove an object found by hpshm_objects_list(): with no flags, a dead hpshm segment only,
 * whoever owns it (the header or mark proves it is hpshm's, and nobody holds it).  The object
 * is looked at again first, so a segment some process holds is never removed, nor a foreign
 * object; debris only with HPSHM_REMOVE_FORCE, and another user's debris only with
 * HPSHM_REMOVE_FORCE | HPSHM_REMOVE_ALL_USERS: root's forced gc must not take what another
 * user's program left, which nothing proves is hpshm's.  Only the object that was looked at
 * is removed: if its name comes to hold another object meanwhile, that one is kept.
 * @param obj   the object, as listed (only its provider and id are read)
 * @param flags 0, HPSHM_REMOVE_FORCE, or HPSHM_REMOVE_FORCE | HPSHM_REMOVE_ALL_USERS
 * @param err   filled on failure, may be NULL
 * @return 0; HPSHM_EEXIST if it is alive; HPSHM_EINVAL if it is foreign, debris without
 *         HPSHM_REMOVE_FORCE, another user's debris without HPSHM_REMOVE_ALL_USERS, gone or no
 *         longer the object listed; or another negative code
 */
HPSHM_API int hpshm_objects_remove(const hpshm_object *obj, unsigned flags, hpshm_error *err);

/** @} */

/** @addtogroup grp_tools
 *  @{ */

/**
 * Ask one provider whether it could create a segment here, and if not, why not.
 * @param name   the provider's name
 * @param size   the segment size to ask about (0: any)
 * @param cfg    configuration (page size, paths), or NULL for the defaults
 * @param[out] page_size the page size it would use (may be NULL)
 * @param reason where to write the reason it cannot (may be NULL)
 * @param len    size of reason
 * @return 0 if usable, HPSHM_EUNAVAILABLE if not, HPSHM_ENOPROVIDER if no such provider
 */
HPSHM_API int hpshm_provider_probe(const char *name, size_t size, const hpshm_config *cfg, size_t *page_size,
				   char *reason, size_t len);

/** Longest text of a requirement (hpshm_requirement): a command line with a path in it. */
#define HPSHM_REQUIREMENT_TEXT 512

/**
 * One thing an operator must set up for a provider to work: filled by the provider
 * (hpshm_provider.requirements), read by hpshm_requirements()'s callback and `hpshm plan`.
 * The words in `what` are shared by providers with the same need: "pool" (huge pages
 * reserved), "mount" (a hugetlbfs mount), "sysv_privilege", "sysv_limits", "cgroup" (a
 * hugetlb cgroup limit), "privilege" (a user right such as Windows' "Lock pages in memory").
 */
typedef struct hpshm_requirement {
	unsigned version;                              /**< HPSHM_REQUIREMENT_VERSION, set by the library as it hands the
							    need to the callback (a provider leaves it 0) */
	char what[HPSHM_NAME_MAX];                     /**< the need, one of the words above */
	int  met;                                      /**< 1 if it holds already */
	char detail[HPSHM_REQUIREMENT_TEXT];           /**< what is short, with the figures; empty when met */
	char now[3][HPSHM_REQUIREMENT_TEXT];           /**< commands that fix it at once (empty strings: none) */
	char persist[3][HPSHM_REQUIREMENT_TEXT];       /**< what keeps the fix across a reboot (empty: none) */
	char note[HPSHM_REQUIREMENT_TEXT];             /**< advice that goes with it, shortfall or not (empty: none) */
	uint64_t reserved[8];                          /**< zeroed by the library: room for the members of later versions */
} hpshm_requirement;

/**
 * Called by hpshm_requirements() for each need of each provider.
 * @param user     the pointer given to hpshm_requirements()
 * @param provider the provider's name
 * @param r        the need
 * @return 0 to go on, non-zero to stop
 */
typedef int (*hpshm_requirement_fn)(void *user, const char *provider, const hpshm_requirement *r);

/**
 * What an operator must set up so that a segment of size bytes on page_size pages can be
 * made under cfg: asks every huge page provider cfg allows (provider=, huge_pages=off
 * allows none) that offers page_size, with the segment's mapped length as create() would
 * map it (hpshm_segment_footprint()).  This is what `hpshm plan` prints as commands.
 * @param size      the segment size
 * @param page_size the huge page size to plan for, or 0 for each provider's default
 * @param cfg       configuration, or NULL for the defaults
 * @param fn        called for each need, met or not
 * @param user      passed to fn
 * @param err       filled on failure, may be NULL
 * @return the number of providers asked (0: none offers page_size), or a negative HPSHM_E* code
 */
HPSHM_API int hpshm_requirements(size_t size, size_t page_size, const hpshm_config *cfg, hpshm_requirement_fn fn,
				 void *user, hpshm_error *err);

/**
 * Name the providers in the order `auto` walks them.
 * @param index 0, 1, ...
 * @param[out] caps the provider's HPSHM_CAP_* bits (may be NULL)
 * @return the name, or NULL past the last
 */
HPSHM_API const char *hpshm_provider_name(unsigned index, unsigned *caps);

/**
 * The huge page sizes the kernel offers, in ascending order.
 * @param sizes where to write them
 * @param max   room in sizes
 * @return how many there are (may exceed max), 0 if none
 */
HPSHM_API int hpshm_huge_page_sizes(size_t *sizes, int max);

/**
 * The base (smallest) page size.
 * @return bytes
 */
HPSHM_API size_t hpshm_base_page_size(void);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* HPSHM_H */
