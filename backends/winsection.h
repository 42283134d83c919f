/* SPDX-License-Identifier: MIT */
/*
 * backends/winsection.h -- Windows' one provider implementation: a section backed by the paging
 * file, its views at an exact address, its name, and re-attach by inherited handle or by name.
 *
 * Internal: included by backends/winsection.c, which implements it and is plain on Windows, and
 * backends/winsection_large.c, which adds what large pages need.  The two rows of
 * backends/list.h differ in a struct hpshm__winsection_kind, their user pointer: two flags
 * (SEC_LARGE_PAGES on the section, FILE_MAP_LARGE_PAGES on every view), a check before create
 * (the privilege) and what an error means (a large page failure makes the provider
 * unavailable, and the core moves on).  Their descriptors share every member but probe and
 * requirements (HPSHM__WINSECTION_OPS); they are two because the capabilities differ (HUGE).
 *
 * The section's HANDLE is m->handle (HPSHM_NO_HANDLE: none).  An unnamed section's mapping has
 * HPSHM_MAP_INHERIT, so hpshm_child_spawn() hands the handle to the child and the core leaves
 * an inherited one open when it refuses an attach; a named section is opened by name and has
 * no flag.  Windows handles are 32-bit values in every process (so 32- and 64-bit processes
 * can share them), which is why a token's "handle=<n>" is at most INT32_MAX.
 */
#ifndef HPSHM_BACKENDS_WINSECTION_H
#define HPSHM_BACKENDS_WINSECTION_H

#include "hpshm/provider.h"
#include "windows/sys.h"

#define HPSHM__WINSECTION_NAME_MAX 200       /* longest segment name */
#define HPSHM__WINSECTION_PREFIX   "hpshm."  /* every named section is <namespace>\hpshm.<name> */
#define HPSHM__WINSECTION_LARGE    "windows_large" /* the large-page provider, as headers name it */

/* The namespace of a named section. */
enum hpshm__winsection_ns {
	HPSHM__WINSECTION_LOCAL,  /* Local\: this logon session only; anyone may create (namespace=local) */
	HPSHM__WINSECTION_GLOBAL  /* Global\: every session; creating needs SeCreateGlobalPrivilege (namespace=global) */
};

/* What one row's sections are: its self->user. */
struct hpshm__winsection_kind {
	DWORD       section_flags;/* added to PAGE_READWRITE | SEC_COMMIT: 0 or SEC_LARGE_PAGES */
	DWORD       view_flags;   /* added to FILE_MAP_READ | FILE_MAP_WRITE: 0 or FILE_MAP_LARGE_PAGES */
	/* Before create(): can the mechanism work now (the privilege, enabled)?  0, or a negative
	 * HPSHM_E* code with err filled.  NULL: nothing to check. */
	int (*ready)(const struct hpshm_request *rq, hpshm_error *err);
	/* CreateFileMappingW() or MapViewOfFileEx() failed with code for a reason of the mechanism
	 * (no privilege, no contiguous memory): fill err and return the code to give, or 0 to
	 * leave the error to the shared code.  NULL: the mechanism has no failure of its own. */
	int (*mechanism_error)(DWORD code, const char *call, const struct hpshm_request *rq, hpshm_error *err);
	/* scan() lists, besides the sections whose header names this provider, every other
	 * section and object under hpshm's prefix (1: plain), or only its own (0: large pages),
	 * so each object is listed once. */
	int         lists_rest;
};

/* The two rows' user pointers (backends/list.h): base pages, and large pages. */
extern struct hpshm__winsection_kind hpshm__winsection_plain;
extern struct hpshm__winsection_kind hpshm__winsection_large;

/* Is name usable for a section: 1 to HPSHM__WINSECTION_NAME_MAX characters, no '\'?  1 or 0. */
int hpshm__winsection_name_ok(const char *name);

/* "<Local|Global>\hpshm.<name>" into buf (UTF-8).  0, or -1 if it does not fit. */
int hpshm__winsection_path(enum hpshm__winsection_ns ns, const char *name, char *buf, size_t len);

/*
 * The members both rows share; each takes its kind from self->user.
 *
 * create(): rq->mode checked (HPSHM_EVALUE, err->key "mode", for one Windows cannot express),
 * self's ready(), then a section of rq->size bytes, named <Local|Global>\hpshm.<rq->name> when
 * named (the namespace key; Global\ needs SeCreateGlobalPrivilege outside session 0, else
 * HPSHM_EACCES naming it) with the DACL rq->mode gives (ports/windows/security.c), mapped
 * read-write at rq->address or where the system chooses, m filled.  A name in use is
 * HPSHM_EEXIST naming the creator from its header, or saying the object is not hpshm's.
 * Everything is undone on failure.
 */
int hpshm__winsection_create(const struct hpshm_instance *self, struct hpshm_mapping *m,
			     const struct hpshm_request *rq, hpshm_error *err);

/* destroy() and detach(): unmap, and close m->handle if it holds one.  The section goes
 * when its last handle and view go, in whichever process that is. */
int hpshm__winsection_unmap(const struct hpshm_instance *self, struct hpshm_mapping *m);

/* identify(): "name=<m->path>" for a named section a token can carry, else "handle=<n>" for
 * an inherited one. */
int hpshm__winsection_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id,
			       size_t len);

/*
 * attach(): map the section id names ("handle=<n>", inherited; "name=<Local|Global>\hpshm.x")
 * at exactly rq->address (where the system chooses when it is NULL) with length rq->size.  An
 * inherited handle becomes this process's own (no longer inheritable by programs it starts)
 * on success only.
 */
int hpshm__winsection_attach(const struct hpshm_instance *self, struct hpshm_mapping *m,
			     const struct hpshm_request *rq, const char *id, hpshm_error *err);

/*
 * lookup(): the section <Local|Global>\hpshm.<rq->name>, Local first: f as scan() fills it for
 * that section (its size, and its header when it is hpshm's), with f->id "name=<path>", the
 * identifier attach() takes.  HPSHM_ENOENT when neither namespace has it; HPSHM_EACCES when it
 * is another user's and its DACL (its creator's mode) does not admit this one; HPSHM_ESYS
 * otherwise.
 */
int hpshm__winsection_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq,
			     struct hpshm_found *f, hpshm_error *err);

/*
 * scan(): every object named <Local|Global>\hpshm.* in this session's namespaces (the object
 * manager's directories, ports/windows/objects.c), with its header when it is a section this
 * user may read.  Liveness on Windows is simple: a named section exists exactly as long as some
 * process holds a handle to it or a view of it, so every section found is alive (alive = 1)
 * and a crash leaves nothing behind; the core still names the creator from the header, and
 * says whether it runs (its pid and process creation time).  Objects of another type under the
 * prefix are foreign; a section whose tail is neither hpshm's header nor zeros is foreign; one
 * another user holds cannot be read and is listed without a header.  HPSHM_ENOTSUP when the
 * system cannot list the directories, HPSHM_ESYS for another failure of those calls.
 */
int hpshm__winsection_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user);

/*
 * remove(): hpshm cannot delete a section -- Windows does, when its last handle and view go --
 * and never closes another process's handles.  So: 0 when the section is gone already, else
 * HPSHM_EEXIST saying it is still held and by whose processes.  The core never asks for a
 * live object's removal, so the second answer is for one that came back (a name reused).
 */
int hpshm__winsection_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err);

/* The members of a descriptor both rows share, for its designated initializer. */
#define HPSHM__WINSECTION_OPS                          \
	.abi_version = HPSHM_PROVIDER_ABI,             \
	.create      = hpshm__winsection_create,       \
	.destroy     = hpshm__winsection_unmap,        \
	.identify    = hpshm__winsection_identify,     \
	.attach      = hpshm__winsection_attach,       \
	.detach      = hpshm__winsection_unmap,        \
	.scan        = hpshm__winsection_scan,         \
	.remove      = hpshm__winsection_remove,       \
	.lookup      = hpshm__winsection_lookup

#endif /* HPSHM_BACKENDS_WINSECTION_H */
