/* SPDX-License-Identifier: MIT */
/*
 * core/internal.h -- what the core's files share: the configuration's layout, the provider
 * registry and logging.  Not installed; no OS header is included here.  The helpers below
 * the core (strings, rounding, the hash) come from base/base.h.
 */
#ifndef HPSHM_CORE_INTERNAL_H
#define HPSHM_CORE_INTERNAL_H

/* The core's own header: backends reach the core only through hpshm/provider.h, and the layers
 * above it through hpshm.h (doc/architecture.md).  The build says each source's layer
 * (cmake/layers.cmake), so a wrong include fails here and not in a review. */
#if !defined(HPSHM_LAYER_CORE) && !defined(HPSHM_LAYER_TESTS)
#error "core/internal.h is private to core/: a backend uses hpshm/provider.h, a tool or program hpshm.h (doc/architecture.md, the layers)"
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "hpshm.h"
#include "base/header.h"
#include "hpshm/provider.h"
#include "core/provider_keys.h"
#include "port.h"

#define HPSHM__MAX_PROVIDERS   16   /* registered plus built-in; also the longest provider= list */
#define HPSHM__NAME_LEN        128  /* longest segment name */
#define HPSHM__LARGEST         HPSHM_PAGE_SIZE_LARGEST /* huge_page_size=largest (SIZE_MAX) */

enum hpshm__populate_mode { HPSHM__POPULATE_AUTO, HPSHM__POPULATE_ON, HPSHM__POPULATE_OFF };
enum hpshm__namespace { HPSHM__NAMESPACE_LOCAL, HPSHM__NAMESPACE_GLOBAL };
enum hpshm__reattach_mode { HPSHM__REATTACH_OFF = HPSHM_REATTACH_OFF, HPSHM__REATTACH_EXEC = HPSHM_REATTACH_EXEC };

/* Where a key's value came from; a source never overrides a higher one. */
enum hpshm__source { HPSHM__SRC_DEFAULT, HPSHM__SRC_FILE, HPSHM__SRC_ENV, HPSHM__SRC_API };

/* Index of each key in the key table (core/config_keys.c); the two must change together. */
enum hpshm__key {
	HPSHM__KEY_PROVIDER,
	HPSHM__KEY_HUGE_PAGES,
	HPSHM__KEY_HUGE_PAGE_SIZE,
	HPSHM__KEY_REATTACH,
	HPSHM__KEY_POPULATE,
	HPSHM__KEY_HUGETLBFS_PATH,
	HPSHM__KEY_NAME,
	HPSHM__KEY_MODE,
	HPSHM__KEY_BASE_ADDRESS,
	HPSHM__KEY_LOG_LEVEL,
	HPSHM__KEY_NAMESPACE, /* new keys go last, so the indices hpshm_config_key_name() gave before stay */
	HPSHM__KEY_POPULATE_THREADS,
	HPSHM__KEY_NUMA,
	HPSHM__KEY_MAX_SIZE,
	HPSHM__NKEYS
};

struct hpshm_config {
	char             providers[HPSHM__MAX_PROVIDERS][HPSHM_NAME_MAX]; /* provider= list */
	unsigned         nproviders;      /* 0 means auto */
	char             excluded[HPSHM__MAX_PROVIDERS][HPSHM_NAME_MAX]; /* provider=auto,-name: left out of auto */
	unsigned         nexcluded;       /* entries in excluded[] */
	hpshm_huge_pages huge_pages;      /* huge_pages= */
	size_t           huge_page_size;  /* 0 default, HPSHM__LARGEST, or bytes */
	int              reattach;        /* enum hpshm__reattach_mode */
	int              populate;        /* enum hpshm__populate_mode */
	unsigned         populate_threads; /* threads that populate; 0 means auto */
	struct hpshm__numa numa;          /* numa=: where the pages go */
	size_t           max_size;        /* max_size=: what a segment may grow to; 0: fixed size */
	char             hugetlbfs_path[HPSHM_PATH_MAX]; /* "" means discover */
	char             name[HPSHM__NAME_LEN];          /* "" means anonymous */
	unsigned         mode;            /* permissions of named objects */
	int              name_space;      /* enum hpshm__namespace: where a named object is (Windows) */
	uintptr_t        base_address;    /* 0 means auto */
	hpshm_log_level  log_level;       /* level of the built-in stderr sink */
	hpshm_log_fn     log_fn;          /* application's sink, or NULL */
	void            *log_user;        /* passed to log_fn */
	hpshm_log_level  log_fn_level;    /* most detailed level passed to log_fn */
	unsigned char    source[HPSHM__NKEYS]; /* enum hpshm__source of each key */
	struct hpshm__pkeys pkeys;        /* values of providers' own keys (core/provider_keys.c) */
};

/*
 * Where a segment's header lives (hpshm__header_place()).  At the tail it costs the segment
 * a header region, which is a whole extra page when the size is an exact multiple of the
 * page size: a 1 GiB segment on 1 GiB pages would take two.  So an unnamed re-attachable
 * segment on huge pages keeps it in a companion: a small object of base pages made by the
 * plain provider, mapped in the granule right after the segment and handed to the child
 * beside it, unless its provider can label the object where the kernel keeps it
 * (HPSHM_CAP_TAG): then the label, made of the header's nonce and address, proves the
 * object to a child, and the header lives only in the handles, so the segment is
 * one object, as cheap to make and release as the raw calls.  A named segment keeps its
 * header at its tail whatever it costs: the proof of whose an object is must be in the
 * object, where `hpshm gc` reads it after a crash.
 */
enum hpshm__header_place {
	HPSHM__HEADER_NONE,      /* no header: neither named nor re-attachable */
	HPSHM__HEADER_TAIL,      /* in the last HPSHM_HEADER_REGION bytes of the mapping */
	HPSHM__HEADER_COMPANION, /* in a companion object at addr + mapped length */
	HPSHM__HEADER_TAG        /* in the handle only: the object carries the provider's label
	                          * (HPSHM_CAP_TAG) of the header's nonce and address instead */
};

/* The companion that holds a segment's header (HPSHM__HEADER_COMPANION). */
struct hpshm__companion {
	struct hpshm_instance inst; /* the plain provider that made or attached it */
	struct hpshm_mapping  map;  /* its mapping; map.addr is NULL when there is none */
};

/*
 * A resizable segment's state in one process (core/resize.c); max is 0 for a segment whose
 * size is fixed.  The published size and generation are one word in the header:
 * HPSHM__RESIZE_WORD(generation, size).
 */
struct hpshm__resize {
	size_t                    max;     /* bytes it may grow to: the reservation, header area excluded */
	size_t                    page;    /* the unit of a resize: the segment's page size */
	uint64_t                  seen;    /* the header's word as this process last applied it */
	struct hpshm_resize_slot *slots;   /* the table of processes at the tail */
	unsigned                  nslots;  /* its entries */
	int                       slot;    /* this handle's entry, -1 for none (the owner needs none) */
	long long                 slot_pid; /* the process the entry was taken for: a fork() child takes its own */
	int                       pending; /* the owner: a shrink whose pages are not given back yet */
	struct hpshm_segment     *next;    /* the process's list of resizable handles (for fork()) */
};

#define HPSHM__RESIZE_SIZE_SHIFT 12 /* sizes are whole pages, so at least 4 KiB multiples */
#define HPSHM__RESIZE_SIZE_BITS  40 /* up to 4 PiB */
#define HPSHM__RESIZE_WORD(gen, size) \
	(((uint64_t)(gen) << HPSHM__RESIZE_SIZE_BITS) | ((uint64_t)(size) >> HPSHM__RESIZE_SIZE_SHIFT))
#define HPSHM__RESIZE_WORD_SIZE(w) \
	((size_t)(((w) & ((UINT64_C(1) << HPSHM__RESIZE_SIZE_BITS) - 1)) << HPSHM__RESIZE_SIZE_SHIFT))
#define HPSHM__RESIZE_WORD_GEN(w) ((w) >> HPSHM__RESIZE_SIZE_BITS)

struct hpshm_segment {
	struct hpshm_instance        inst;     /* who made it, and who destroys or detaches it */
	struct hpshm_mapping         map;      /* what the provider made or attached */
	size_t                       usable;   /* bytes for the caller, before any header region */
	long long                    creator_pid;   /* the process that created it; 0 when attached or opened */
	uint64_t                     creator_start; /* that process's start time (hpshm__port_process_start()), 0 if unknown */
	struct hpshm_header         *header;   /* at addr + usable, in the companion or at held; NULL if none */
	struct hpshm_header          held;     /* the header when no object holds it (HPSHM__HEADER_TAG) */
	struct hpshm__companion      companion; /* the header's object, when it is not at the tail */
	hpshm_report                 report;   /* what it is */
	struct hpshm_config          cfg;      /* for logging at destroy */
	struct hpshm__resize         rs;       /* max_size: growing and shrinking in place */
};

/* What a mapping can do: its own capabilities when the provider narrowed them (a plain
 * segment on anonymous memory cannot be re-attached; HPSHM_MAP_CAPS says so even of none),
 * else the provider's. */
static inline unsigned hpshm__mapping_caps(const struct hpshm_mapping *m, const struct hpshm_provider *p)
{
	return (m->flags & HPSHM_MAP_CAPS) || m->caps ? m->caps : p->caps;
}

/* What this segment can do (hpshm__mapping_caps()). */
static inline unsigned hpshm__segment_caps(const struct hpshm_segment *seg)
{
	return hpshm__mapping_caps(&seg->map, seg->inst.ops);
}

/*
 * Is the calling process the one that created seg (its pid and start time), and so the owner,
 * whose hpshm_segment_destroy() removes the object?  A handle copied by fork() says the
 * creator's pid, which is not the child's; a pid the kernel gave again to a descendant is told
 * apart by its start time.  The one test of ownership: destroy, hpshm_segment_is_owner() and
 * the companion's header (hpshm__companion_release()) all go by it.  1 or 0.
 */
int hpshm__segment_owned(const struct hpshm_segment *seg);

/* rq->option of every request the core makes: hpshm_config_get() on rq->config. */
int hpshm__request_option(const struct hpshm_request *rq, const char *key, char *buf, size_t len);

/* Does this configuration give segments a header (and so re-attach or a name)? */
int hpshm__wants_header(const struct hpshm_config *cfg);
/* Where the header of a segment of size bytes on page_size pages goes under cfg. */
enum hpshm__header_place hpshm__header_place(const struct hpshm_config *cfg, size_t size, size_t page_size);
/*
 * The header a handle holds for a labelled segment (HPSHM__HEADER_TAG): what its token
 * carries.  Who created it and in which boot are left out: they tell `hpshm gc` and a stale
 * token after a reboot about objects that can outlive their creator, and a labelled one cannot.
 */
void hpshm__header_hold(struct hpshm_header *h, size_t usable, uint64_t nonce, uint64_t at, const char *provider,
			size_t page_size);
/*
 * The label of a segment whose header is held (HPSHM__HEADER_TAG): its nonce and creator
 * address, for hpshm_request.tag; buf has HPSHM_TAG_MAX bytes.  Returns buf.
 */
const char *hpshm__header_tag(uint64_t nonce, uint64_t address, char *buf);
/* Bytes after a segment of that place that the companion's granule takes (0 unless companion). */
size_t hpshm__header_extent(enum hpshm__header_place place);
/*
 * Fill and write a fresh header at dst, for a segment of usable bytes created at address at
 * with page_size pages, whose object is the provider's hpshm_mapping.object text (empty if it
 * gave none); returns dst.
 */
struct hpshm_header *hpshm__header_write(void *dst, size_t usable, const void *at, const char *provider,
					 const char *name, size_t page_size, const char *object);
/* hpshm__header_write() for a resizable segment (max_size): max usable bytes, initial of them
 * published, nslots entries in the table of processes before the header region. */
struct hpshm_header *hpshm__header_write_resizable(void *dst, size_t usable, const void *at, const char *provider,
						   const char *name, size_t page_size, const char *object,
						   size_t max, size_t initial, unsigned nslots);

/* ---- resizable segments (core/resize.c) ---- */

/* Is the token's <header> field one for a header at the tail ("tail", or "resize": a
 * resizable segment's, whose reservation is mapped without taking its pages)? */
static inline int hpshm__token_tail(const char *header)
{
	return strcmp(header, "tail") == 0 || strcmp(header, "resize") == 0;
}
/* Entries in a resizable segment's table of processes: what fits in HPSHM_RESIZE_AREA before
 * the header region, whatever the page size (a larger tail page is not scanned whole). */
#define HPSHM__RESIZE_SLOTS ((HPSHM_RESIZE_AREA - HPSHM_HEADER_REGION) / sizeof(struct hpshm_resize_slot))
/* The bytes at a resizable segment's tail for its header and table, on page_size pages;
 * 0 if that overflows. */
size_t hpshm__resize_area(size_t page_size);
/*
 * The sizes of a resizable segment of size bytes that may grow to max_size, on page_size
 * pages: *mapped the whole reservation (header area included), *initial the first size,
 * *max the largest one, both whole pages.  0, HPSHM_EVALUE (max_size below size) or
 * HPSHM_EOVERFLOW, with err filled.
 */
int hpshm__resize_layout(size_t size, size_t max_size, size_t page_size, size_t *mapped, size_t *initial,
			 size_t *max, hpshm_error *err);
/* Give a created reservation its first pages and close the rest: [0, initial) allocated,
 * [initial, max) inaccessible.  0, or a code with err filled (the caller destroys m). */
int hpshm__resize_prepare(const struct hpshm_mapping *m, size_t initial, size_t max, size_t page_size,
			  hpshm_error *err);
/*
 * Make seg, created or attached with its header in place, a resizable handle: the state from
 * the header (checked: a forged one is refused), the tail past the published size closed in
 * an attach, a slot in the table for a process that is not the owner, and the handle on the
 * process's list so a fork() child takes a slot of its own.  0, or a code with err filled.
 */
int hpshm__resize_adopt(struct hpshm_segment *seg, int owner, hpshm_error *err);
/* Take seg off the table and the list, before it is unmapped. */
void hpshm__resize_leave(struct hpshm_segment *seg);
/* The words of the enum keys, in their enums' order, NULL-terminated (core/config_keys.c). */
extern const char *const hpshm__huge_words[];
extern const char *const hpshm__reattach_words[];
/* What provider= accepts, for the errors of the key and of hpshm_config_set_provider(). */
extern const char hpshm__provider_accepted[];
/* The max_size key, for the key table. */
int hpshm__parse_max_size(struct hpshm_config *c, const char *v, hpshm_error *err);
int hpshm__format_max_size(const struct hpshm_config *c, char *buf, size_t len);
/* The providers registered here that can resize, as "a, b or c"; buf returned. */
const char *hpshm__resize_providers(char *buf, size_t len);

/*
 * Make the companion for a segment that will be mapped at seg_at with mapped bytes: a plain
 * object of base pages at seg_at + mapped, that a child can re-attach.  0, or a negative code
 * (no plain provider that can re-attach here, the range is taken): the caller then keeps the
 * header at the tail instead.
 */
int hpshm__companion_create(struct hpshm__companion *c, void *seg_at, size_t mapped, const struct hpshm_config *cfg,
			    hpshm_error *err);
/* The request for a companion at addr: base pages enough for the header region.  0, or
 * HPSHM_EOVERFLOW when base pages this large do not fit the companion's granule. */
int hpshm__companion_request(struct hpshm_request *rq, void *addr, const struct hpshm_config *cfg);
/*
 * Destroy (remove: the owner's destroy, hpshm__segment_owned()) or detach a companion;
 * nothing if it has no mapping.  The owner's destroy first clears the magic of the header it
 * holds, so a child that inherited the companion and attaches later learns that the segment
 * is gone, even when a new object took its id.
 */
void hpshm__companion_release(struct hpshm__companion *c, int remove);

/*
 * What create maps for a segment of size bytes on pages of page_size under this
 * configuration: the length of the mapping (rounded up, with the header region when the
 * configuration wants one) and the bytes of it the caller gets.  `hpshm plan` counts pages
 * with it, so the plan and the segment cannot disagree.  usable may be NULL.  0, or
 * HPSHM_EOVERFLOW (then *mapped and *usable are unset).
 */
int hpshm__segment_sizes(const struct hpshm_config *cfg, size_t size, size_t page_size, size_t *mapped,
			 size_t *usable);
/* The same for a header place already chosen (create falls back to the tail). */
int hpshm__segment_sizes_at(enum hpshm__header_place place, size_t size, size_t page_size, size_t *mapped,
			    size_t *usable);

/*
 * What a provider is asked for a segment of size bytes under cfg (core/request.c): create,
 * `hpshm probe` and `hpshm plan` all ask with this request, so they cannot disagree.
 */
void hpshm__segment_request(struct hpshm_request *rq, const struct hpshm_config *cfg, const struct hpshm_instance *p,
			    size_t size);
/* Does probe's answer keep the contract (a page size that is a power of two)?  NULL, or why not. */
const char *hpshm__probe_broken(const struct hpshm_probe *pr);
/* Is provider p a candidate under this configuration?  NULL if yes, else why not. */
const char *hpshm__segment_excluded(const struct hpshm_config *cfg, const struct hpshm_instance *p);

/* A re-attach token, parsed (core/token.c has the format). */
struct hpshm__token {
	char               provider[HPSHM_NAME_MAX]; /* the provider's name */
	char               id[HPSHM_PATH_MAX];       /* its identify() text: "fd=5", "shm=32769", "path=..." */
	char               header[HPSHM_PATH_MAX];   /* "tail", or the companion's plain identify() text */
	unsigned long long size;                     /* mapped length, header region included */
	unsigned long long page_size;                /* a power of two, at least 4KiB */
	unsigned long long address;                  /* the creator's address */
	unsigned long long nonce;                    /* the header's nonce */
};

/*
 * Parse a token strictly, as hpshm_segment_attach() does before mapping anything: 0 with *t
 * filled, or HPSHM_EINVAL naming the rule the text broke.  Shared with the fuzz harness.
 */
int hpshm__token_parse(const char *text, struct hpshm__token *t, hpshm_error *err);
/* The checks of its numbers alone (page size, size, address): what hpshm__token_parse() does
 * after reading the fields, and hpshm_segment_open() with the header's.  0, or HPSHM_EINVAL. */
int hpshm__token_check(const struct hpshm__token *t, hpshm_error *err);

/*
 * Map the segment t describes through provider p, check its header and pages, and make the
 * handle, as hpshm_segment_attach() does with a parsed token: at t->address, or where the
 * system chooses when at_creator is 0 (hpshm_segment_open() without reattach=exec).  origin
 * (HPSHM_ORIGIN_ATTACHED or _OPENED) and the time since t0 go in the report.  0, or a
 * negative code with nothing left mapped.
 */
int hpshm__segment_map(hpshm_segment **out, const struct hpshm_instance *p, const struct hpshm__token *t,
		       int at_creator, unsigned origin, const struct hpshm_config *cfg, uint64_t t0, hpshm_error *err);
/* hpshm_segment_open() (core/open.c). */
int hpshm__segment_open(hpshm_segment **out, const char *name, const hpshm_config *cfg, hpshm_error *err);

/*
 * The work behind six public functions whose structs core/abi.c stamps with their version on
 * the way out (hpshm.h, "Growing the public structs"): same arguments, same results, but the
 * report, child and objects they fill are not yet stamped.
 */
int hpshm__segment_create_ex(hpshm_segment **out, size_t size, const hpshm_config *cfg, hpshm_report *report,
			     hpshm_error *err);
int hpshm__segment_attach(hpshm_segment **out, const char *token, const hpshm_config *cfg, hpshm_error *err);
int hpshm__segment_attach_env(hpshm_segment **out, const hpshm_config *cfg, hpshm_error *err);
int hpshm__child_spawn(const hpshm_segment *seg, const char *path, char *const argv[], char *const envp[],
		       const hpshm_spawn_options *opt, hpshm_child *child, hpshm_error *err);
int hpshm__child_prepare(const hpshm_segment *seg, void *process, char *buf, size_t len, hpshm_error *err);
/*
 * hpshm_segment_token() with the segment's handle and its companion's given as handles[0] and
 * handles[1] (the values a prepared child holds them under), or the segment's own (NULL).
 */
int hpshm__segment_token_as(const hpshm_segment *seg, const intptr_t *handles, char *buf, size_t len,
			    hpshm_error *err);
int hpshm__objects_list(hpshm_object_fn fn, void *user, hpshm_error *err);
int hpshm__requirements(size_t size, size_t page_size, const hpshm_config *cfg, hpshm_requirement_fn fn,
			void *user, hpshm_error *err);

/* Hands a provider's requirements() on to the public callback, with the provider's name. */
struct hpshm__requirement_relay {
	hpshm_requirement_fn fn;       /* the caller's callback */
	void                *user;     /* its pointer */
	const char          *provider; /* the name the provider is registered under */
};
int hpshm__requirement_relay(void *user, const struct hpshm_requirement *r);

/* The defaults, as a config: used when the caller passes NULL. */
void hpshm__config_init(struct hpshm_config *cfg);

/* ---- the configuration: its key table (core/config_keys.c) and its sources (core/config.c) ---- */

/*
 * Length of the UTF-8 character at s if it is one a segment's name may hold beyond ASCII
 * (core/config_keys.c): well formed (RFC 3629: no overlong form, no surrogate, nothing above
 * U+10FFFF) and above U+00A0, so no C1 control and no no-break space; else 0.  The name key
 * and the token's identifier, which carries the name, take the same characters.
 */
size_t hpshm__name_utf8_len(const unsigned char *s);

/*
 * core/populate.c: the threads a populate of len bytes on pages of page_size uses under cfg;
 * the NUMA check a candidate passes before it creates anything (0, or a code with err
 * filled); and the placement and populate of a new mapping (want: populate at all), which
 * fills r's populate members and node_bytes.  0, or a code with err filled.
 */
unsigned hpshm__populate_threads(const struct hpshm_config *cfg, size_t len, size_t page_size);
int hpshm__placement_check(const struct hpshm_config *cfg, size_t len, size_t page_size, hpshm_error *err);
int hpshm__populate(const struct hpshm_config *cfg, void *addr, size_t len, size_t page_size,
		    struct hpshm__port_handle h, int want, hpshm_report *r, hpshm_error *err);

/* The keys of core/config_place.c, for the key table. */
int hpshm__parse_populate_threads(struct hpshm_config *c, const char *v, hpshm_error *err);
int hpshm__format_populate_threads(const struct hpshm_config *c, char *buf, size_t len);
int hpshm__parse_numa(struct hpshm_config *c, const char *v, hpshm_error *err);
int hpshm__format_numa(const struct hpshm_config *c, char *buf, size_t len);

/*
 * Fill err for a value or item a source refuses: code, the message, key (err->key; "" for
 * no key) and the hint "<key> accepts: <values>".  Returns code; nothing when err is NULL.
 */
int hpshm__config_bad(hpshm_error *err, int code, const char *key, const char *values, const char *fmt, ...)
	HPSHM__PRINTF(5, 6)
	;

/*
 * Look key up and parse value into cfg: the one place where a key is found and its value
 * checked, whatever the source.  cfg is a copy the caller commits only on success (a parser
 * may have changed it before it refused).  Returns the key's index (enum hpshm__key), or a
 * negative code with err filled: HPSHM_ENOKEY when no key has that name (the hint lists the
 * keys), else the parser's; where ("path:line: ", "HPSHM_KEY: " or "") opens the message.
 */
int hpshm__config_key_parse(struct hpshm_config *cfg, const char *key, const char *value, const char *where,
			    hpshm_error *err);

/* Set key from source src, ranked against the sources that set it before (config_keys.c):
 * a key with a dot is a provider's (core/provider_keys.c); where opens the message. */
int hpshm__config_set_from(struct hpshm_config *cfg, const char *key, const char *value, enum hpshm__source src,
			   const char *where, hpshm_error *err);

/* "off", "error", "warning", "info" or "debug": log_level's words, for the stderr sink. */
const char *hpshm__config_level_name(hpshm_log_level level);

/* Store a provider hpshm_provider_register() admitted (core/register.c) under name, len bytes
 * long: 0, HPSHM_EEXIST for a name taken, HPSHM_EFULL for a full table. */
int hpshm__registry_add(const struct hpshm_provider *p, const char *name, size_t len, void *user,
			hpshm_error *err);

/* A consistent copy of the provider table, in auto order: registered ones, then the built-in
 * table.  Walks iterate a copy, so concurrent (un)registration cannot shift it under them. */
struct hpshm__provider_list {
	unsigned                     n;                        /* entries in p[] */
	struct hpshm_instance        p[HPSHM__MAX_PROVIDERS];  /* in walk order */
};
void hpshm__providers(struct hpshm__provider_list *out);
/* Is name one of the provider names hpshm defines on some OS (built here or not)? */
int hpshm__provider_name_known(const char *name);
/* The provider registered under name: 0 with *out a copy of its registration, or HPSHM_ENOPROVIDER. */
int hpshm__provider_find(const char *name, struct hpshm_instance *out);

/* One log line through the config's sink; cfg may be NULL (then nothing is logged). */
void hpshm__log(const struct hpshm_config *cfg, hpshm_log_level level, const char *fmt, ...)
	HPSHM__PRINTF(3, 4)
	;

#endif /* HPSHM_CORE_INTERNAL_H */
