/* SPDX-License-Identifier: MIT */
/*
 * backends/winsection.c -- sections backed by the paging file: Windows' provider implementation,
 * and plain on Windows.
 *
 * One implementation, two rows of backends/list.h: plain (base pages, this file's kind and
 * descriptor) and windows_large (backends/winsection_large.c adds the privilege, its errors
 * and its requirements).  Each member takes its row's struct hpshm__winsection_kind from
 * self->user (backends/winsection.h).
 *
 * plain: always works, with 4 KiB pages that may be trimmed from the working set and paged out
 * (not locked, unlike large pages); no operator setup.  The size is charged against the commit
 * limit (physical memory plus the paging files) at creation, so a machine short of it says so
 * then (ERROR_COMMITMENT_LIMIT), never at first touch.  Capabilities REATTACH and NAMED; not
 * FD (a HANDLE, not a descriptor).  It ends every huge_pages=try walk on Windows.
 *
 * Mechanism: CreateFileMappingW(INVALID_HANDLE_VALUE, ..., PAGE_READWRITE | SEC_COMMIT [|
 * SEC_LARGE_PAGES], size, name) and MapViewOfFileEx(FILE_MAP_READ | FILE_MAP_WRITE [|
 * FILE_MAP_LARGE_PAGES], address).  SEC_COMMIT charges the whole size against the commit
 * limit at creation, so a page can never be refused later (Windows' equivalent of a hugetlb
 * reservation: no fault-time failure, nothing like SIGBUS).  MapViewOfFileEx() maps at the
 * address asked or fails with ERROR_INVALID_ADDRESS (487): it never maps over anything, so
 * there is no need for MAP_FIXED_NOREPLACE's caution; the address must be a multiple of the
 * allocation granularity (64 KiB), which every address the core picks is.
 *
 * Names and liveness.  A named section is <Local|Global>\hpshm.<name>.  It is a kernel object
 * that lives exactly as long as some process holds a handle to it or a view of it, so the
 * name itself is the liveness mark: a section that can be opened has a live holder, and a
 * crashed creator leaves nothing behind (there is no debris on Windows, and nothing for gc).
 * That is PostgreSQL's interlock too: CreateFileMappingW() on a name in use returns the
 * existing section with ERROR_ALREADY_EXISTS (183), which is refused here naming the creator
 * from the header at its tail, or saying that the object is not hpshm's.  The section gets a
 * security descriptor whose DACL is the mode key (ports/windows/security.c: by default the
 * current user alone; wine enforces it too), so another user's process can neither open nor
 * squat it unless mode admits it: a name another user holds answers ERROR_ACCESS_DENIED.  A
 * mode Windows cannot express is refused, never approximated.  namespace=local (the default)
 * is Local\, this logon session's namespace; namespace=global is Global\, every session's,
 * where a service and a user's program meet; creating there needs SeCreateGlobalPrivilege
 * (services and administrators hold it), which is enabled first so that its absence is named
 * rather than reported as "access denied".
 *
 * Re-attach: an unnamed section by its handle, which the child inherits (hpshm__port_spawn() lists
 * it in PROC_THREAD_ATTRIBUTE_HANDLE_LIST) under the same value, so its mapping carries
 * HPSHM_MAP_INHERIT; a named one by name, so its mapping does not.  Either
 * way at exactly the creator's address, which hpshm__port_spawn() kept reserved in the child until
 * the core released it just before attach().  Every view gets the backend's view flags:
 * PostgreSQL's children map a large-page section without FILE_MAP_LARGE_PAGES, and on Windows
 * 10 1703 and later such a view is backed by small pages.  Any process of the user opens a
 * named section by its name (hpshm_segment_open()): lookup() opens it read-only, reads the
 * header at its tail, and attach() maps it where the system chooses when given no address.
 */
#include "backends/winsection.h"

#include <stdio.h>
#include <string.h>

#include "base/header.h"
#include "port.h"

#define WINSECTION_LINE_MAX 512 /* a "who holds this range" line */

int hpshm__winsection_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= HPSHM__WINSECTION_NAME_MAX && strchr(name, '\\') == NULL;
}

int hpshm__winsection_path(enum hpshm__winsection_ns ns, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s\\" HPSHM__WINSECTION_PREFIX "%s",
			 ns == HPSHM__WINSECTION_GLOBAL ? "Global" : "Local", name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Can a token carry path as "name=<path>" (no ':' or whitespace)?  1 or 0. */
static int winsection_path_in_token(const char *path)
{
	return path[0] != '\0' && strpbrk(path, ": \t\n") == NULL;
}

static const char *winsection_text(DWORD code, char *buf, size_t len)
{
	return hpshm__win_strerror(code, buf, len);
}

/* A view's address is taken (487): HPSHM_EEXIST naming what holds it. */
static int winsection_taken_range(DWORD code, const struct hpshm_request *rq, int attaching, hpshm_error *err)
{
	char line[WINSECTION_LINE_MAX], sz[32];
	const char *hint = attaching ? "attach first thing in the child's main(), or set base_address to a free range"
				     : "choose another base_address, or auto";

	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (hpshm__port_maps_line(rq->address, rq->size, line, sizeof(line)) == 0)
		return hpshm_error_set(err, HPSHM_EEXIST, (int)code, "MapViewOfFileEx", hint,
				       "the range of %s at %p is taken in this process by: %s", sz, rq->address, line);
	return hpshm_error_set(err, HPSHM_EEXIST, (int)code, "MapViewOfFileEx", hint,
			       "something else is mapped in the range of %s at %p", sz, rq->address);
}

/* MapViewOfFileEx() failed with code. */
static int winsection_map_error(const struct hpshm__winsection_kind *k, DWORD code, const struct hpshm_request *rq,
				int attaching, hpshm_error *err)
{
	char text[256], sz[32];
	int rc;

	rc = k->mechanism_error ? k->mechanism_error(code, "MapViewOfFileEx", rq, err) : 0;
	if (rc != 0)
		return rc;
	if (code == ERROR_INVALID_ADDRESS && rq->address != NULL)
		return winsection_taken_range(code, rq, attaching, err);
	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (code == ERROR_NOT_ENOUGH_MEMORY || code == ERROR_OUTOFMEMORY)
		return hpshm_error_set(err, HPSHM_ENOMEM, (int)code, "MapViewOfFileEx",
				       /* a 64-bit program has nowhere larger to go */
				       sizeof(void *) < 8 ? "ask for less, or run a 64-bit program" : "ask for less",
				       "no room in the address space for %s: %s",
				       sz, winsection_text(code, text, sizeof(text)));
	return hpshm_error_set(err, HPSHM_ESYS, (int)code, "MapViewOfFileEx", NULL, "could not map %s%s: %s", sz,
			       attaching ? " of the segment" : "", winsection_text(code, text, sizeof(text)));
}

/* CreateFileMappingW() failed with code. */
static int winsection_create_error(const struct hpshm__winsection_kind *k, DWORD code, const struct hpshm_request *rq,
				   enum hpshm__winsection_ns ns, const char *path, hpshm_error *err)
{
	char text[256], sz[32];
	int rc;

	rc = k->mechanism_error ? k->mechanism_error(code, "CreateFileMappingW", rq, err) : 0;
	if (rc != 0)
		return rc;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	winsection_text(code, text, sizeof(text));
	switch (code) {
	case ERROR_COMMITMENT_LIMIT:
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return hpshm_error_set(err, HPSHM_ENOMEM, (int)code, "CreateFileMappingW",
				       "enlarge the paging file or free memory, or ask for less",
				       "the system cannot commit %s: %s", sz, text);
	case ERROR_ACCESS_DENIED:
		if (path[0] == '\0')
			break;
		if (ns == HPSHM__WINSECTION_GLOBAL)
			return hpshm_error_set(err, HPSHM_EEXIST, (int)code, "CreateFileMappingW",
					       "choose another name, or make sure no other user's program uses it",
					       "%s belongs to another user, or this process may not create Global\\ "
					       "objects: %s", path, text);
		return hpshm_error_set(err, HPSHM_EEXIST, (int)code, "CreateFileMappingW",
				       "choose another name, or stop the other user's program that holds it",
				       "%s exists and belongs to another user: %s", path, text);
	case ERROR_INVALID_HANDLE:
		if (path[0] == '\0')
			break;
		return hpshm_error_set(err, HPSHM_EEXIST, (int)code, "CreateFileMappingW",
				       "choose another name: another program uses this one",
				       "%s is taken by an object that is not a section (an event, a mutex ...)", path);
	default:
		break;
	}
	return hpshm_error_set(err, HPSHM_ESYS, (int)code, "CreateFileMappingW", NULL, "could not create a section of %s: %s",
			       sz, text);
}

/*
 * Read the header region at the tail of section h into *out (zeros where the view is shorter
 * than a header region) and the view's size into *size.  0, or -1 when no view can be mapped
 * (another user's section, a view the system refuses): GetLastError() says why.
 */
static int winsection_read_tail(const struct hpshm__winsection_kind *k, HANDLE h, struct hpshm_header *out,
				size_t *size)
{
	MEMORY_BASIC_INFORMATION mbi;
	void *view;

	view = hpshm__win_sys.map_view_of_file_ex(h, FILE_MAP_READ | k->view_flags, 0, 0, 0, NULL);
	if (view == NULL && k->view_flags != 0)
		view = hpshm__win_sys.map_view_of_file_ex(h, FILE_MAP_READ, 0, 0, 0, NULL);
	if (view == NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	*size = 0;
	if (hpshm__win_sys.virtual_query(view, &mbi, sizeof(mbi)) == sizeof(mbi)) {
		*size = mbi.RegionSize;
		if (mbi.RegionSize >= HPSHM_HEADER_REGION)
			memcpy(out, (const char *)view + mbi.RegionSize - HPSHM_HEADER_REGION, sizeof(*out));
	}
	(void)hpshm__win_sys.unmap_view_of_file(view);
	out->provider[sizeof(out->provider) - 1] = '\0';
	out->name[sizeof(out->name) - 1] = '\0';
	return 0;
}

/*
 * The name is in use: h is the existing section.  Say whose it is from the header at its tail
 * (the core writes it right after create(), so a section caught before that has none yet).
 */
static int winsection_name_taken(const struct hpshm__winsection_kind *k, HANDLE h, const char *path,
				 hpshm_error *err)
{
	struct hpshm_header copy;
	size_t size;
	const char *hint = "stop the program that uses it, or choose another name";

	if (winsection_read_tail(k, h, &copy, &size) < 0)
		return hpshm_error_set(err, HPSHM_EEXIST, ERROR_ALREADY_EXISTS, "CreateFileMappingW", hint,
				       "%s is in use, and cannot be read to tell whose it is", path);
	if (memcmp(copy.magic, HPSHM_HEADER_MAGIC, sizeof(copy.magic)) == 0)
		return hpshm_error_set(err, HPSHM_EEXIST, ERROR_ALREADY_EXISTS, "CreateFileMappingW", hint,
				       "segment \"%s\" is in use: created by process %lld (provider %s), and still "
				       "held by a process",
				       copy.name, (long long)copy.creator_pid, copy.provider);
	return hpshm_error_set(err, HPSHM_EEXIST, ERROR_ALREADY_EXISTS, "CreateFileMappingW", hint,
			       "%s is in use, and is not an hpshm segment (or its creator is still writing its "
			       "header)",
			       path);
}

/* create() in namespace ns, the section's DACL made from rq->mode (checked already). */
static int winsection_create_in(const struct hpshm__winsection_kind *k, struct hpshm_mapping *m,
				const struct hpshm_request *rq, enum hpshm__winsection_ns ns, hpshm_error *err)
{
	SECURITY_ATTRIBUTES sa, *psa = NULL;
	char path[HPSHM_PATH_MAX] = "", text[256];
	wchar_t wpath[HPSHM_PATH_MAX];
	const char *call = "";
	uint64_t size = (uint64_t)rq->size;
	HANDLE h;
	DWORD code;
	void *p;
	int rc;

	if (rq->name != NULL) {
		if (!hpshm__winsection_name_ok(rq->name))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "use 1 to 200 characters without '\\'",
					       "segment name \"%.64s\" cannot name a section", rq->name);
		if (hpshm__winsection_path(ns, rq->name, path, sizeof(path)) < 0 ||
		    hpshm__win_wide(path, wpath, sizeof(wpath) / sizeof(wpath[0])) < 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "use a shorter name",
					       "segment name \"%.64s\" is too long for a section", rq->name);
		if (ns == HPSHM__WINSECTION_GLOBAL && (code = hpshm__win_global_ready(&call)) != ERROR_SUCCESS) {
			hpshm__strlcpy(err->key, "namespace", sizeof(err->key));
			return hpshm_error_set(err, HPSHM_EACCES, (int)code, call,
					       "run the program as a service (LocalSystem holds the privilege), or grant "
					       "its account \"Create global objects\" (secpol.msc: User Rights "
					       "Assignment) and log on again, or set namespace=local",
					       "cannot create %s: namespace=global needs SeCreateGlobalPrivilege, and this "
					       "process's token %s",
					       path, code == ERROR_NOT_ALL_ASSIGNED ? "does not hold it"
										   : "cannot enable it");
		}
		code = hpshm__win_security_mode(&sa, rq->mode, &call);
		if (code != ERROR_SUCCESS)
			return hpshm_error_set(err, HPSHM_ESYS, (int)code, call, NULL,
					       "cannot build the security descriptor of %s: %s", path,
					       winsection_text(code, text, sizeof(text)));
		psa = &sa;
	}

	SetLastError(ERROR_SUCCESS);
	h = hpshm__win_sys.create_file_mapping(INVALID_HANDLE_VALUE, psa, PAGE_READWRITE | SEC_COMMIT | k->section_flags,
					       (DWORD)(size >> 32), (DWORD)(size & 0xffffffffu),
					       rq->name != NULL ? wpath : NULL);
	code = GetLastError();
	if (psa != NULL)
		hpshm__win_security_free(psa);
	if (h == NULL)
		return winsection_create_error(k, code, rq, ns, path, err);
	if (code == ERROR_ALREADY_EXISTS) {
		rc = winsection_name_taken(k, h, path, err);
		(void)hpshm__win_sys.close_handle(h);
		return rc;
	}

	p = hpshm__win_sys.map_view_of_file_ex(h, FILE_MAP_READ | FILE_MAP_WRITE | k->view_flags, 0, 0, rq->size,
					       rq->address);
	if (p == NULL) {
		code = GetLastError(); /* CloseHandle() below may change it */
		(void)hpshm__win_sys.close_handle(h);
		return winsection_map_error(k, code, rq, 0, err);
	}
	m->addr = p;
	m->size = rq->size;
	m->handle = (intptr_t)h;
	/* An unnamed section reaches a child only by inheritance, and so does a named one whose
	 * name a token cannot carry; any other by its name. */
	m->flags = winsection_path_in_token(path) ? 0 : HPSHM_MAP_INHERIT;
	m->caps = 0;
	hpshm__strlcpy(m->path, path, sizeof(m->path));
	m->priv = NULL;
	return 0;
}

int hpshm__winsection_create(const struct hpshm_instance *self, struct hpshm_mapping *m,
			     const struct hpshm_request *rq, hpshm_error *err)
{
	const struct hpshm__winsection_kind *k = self->user;
	const char *why = hpshm__win_mode_refusal(rq->mode);
	char ns[16] = "";
	int rc;

	/* A mode Windows cannot express is refused, named or not, so that a configuration learns
	 * it at once rather than when it names a segment. */
	if (why != NULL) {
		rc = hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, "on Windows set mode to 0600, 0640, 0644, 0660, 0664 "
				     "or 0666", "mode %04o cannot be a section's access list: %s", rq->mode, why);
		hpshm__strlcpy(err->key, "mode", sizeof(err->key));
		return rc;
	}
	/* The core checked the value: local or global. */
	if (rq->option != NULL)
		(void)rq->option(rq, "namespace", ns, sizeof(ns));
	/* The check again: probe() is advisory, and another thread may have changed the token
	 * (AdjustTokenPrivileges with DisableAllPrivileges) since. */
	if (k->ready != NULL && (rc = k->ready(rq, err)) < 0)
		return rc;
	return winsection_create_in(k, m, rq, strcmp(ns, "global") == 0 ? HPSHM__WINSECTION_GLOBAL
									 : HPSHM__WINSECTION_LOCAL, err);
}

int hpshm__winsection_unmap(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	int rc = 0;

	(void)self;
	if (m->addr != NULL && !hpshm__win_sys.unmap_view_of_file(m->addr))
		rc = HPSHM_ESYS;
	if (m->handle != HPSHM_NO_HANDLE && !hpshm__win_sys.close_handle((HANDLE)m->handle))
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	m->flags = 0;
	return rc;
}

int hpshm__winsection_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id,
			       size_t len)
{
	int n;

	(void)self;
	if (winsection_path_in_token(m->path))
		n = snprintf(id, len, "name=%s", m->path);
	else if (m->handle != HPSHM_NO_HANDLE && (m->flags & HPSHM_MAP_INHERIT))
		n = snprintf(id, len, "handle=%lld", (long long)m->handle);
	else
		return HPSHM_EINVAL;
	return n < 0 || (size_t)n >= len ? HPSHM_EOVERFLOW : n;
}

/* "handle=<n>": n decimal, no sign, no trailing text, at most INT32_MAX.  0, or -1. */
static int winsection_handle_parse(const char *text, int *out)
{
	unsigned long long v = 0;
	const char *p = text + strlen("handle=");

	if (strncmp(text, "handle=", strlen("handle=")) != 0 || *p == '\0')
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
		if (v > INT32_MAX)
			return -1;
	}
	*out = (int)v;
	return 0;
}

/* "name=<Local|Global>\hpshm.<name>" as hpshm__winsection_path() makes it?  1 or 0. */
static int winsection_path_ok(const char *path)
{
	static const char *const spaces[] = { "Local\\" HPSHM__WINSECTION_PREFIX, "Global\\" HPSHM__WINSECTION_PREFIX };

	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++)
		if (strncmp(path, spaces[i], strlen(spaces[i])) == 0)
			return hpshm__winsection_name_ok(path + strlen(spaces[i]));
	return 0;
}

int hpshm__winsection_attach(const struct hpshm_instance *self, struct hpshm_mapping *m,
			     const struct hpshm_request *rq, const char *id, hpshm_error *err)
{
	const struct hpshm__winsection_kind *k = self->user;
	const char *spawn_hint = "start the child with hpshm_child_spawn(), which passes the handle on";
	wchar_t wpath[HPSHM_PATH_MAX];
	char text[256];
	DWORD flags, code;
	HANDLE h;
	void *p;
	int value, named = 0;

	if (strncmp(id, "name=", 5) == 0) {
		if (!winsection_path_ok(id + 5) || hpshm__win_wide(id + 5, wpath, sizeof(wpath) / sizeof(wpath[0])) < 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
					       "\"%.64s\" is not the name of an hpshm section", id + 5);
		h = hpshm__win_sys.open_file_mapping(FILE_MAP_READ | FILE_MAP_WRITE, FALSE, wpath);
		if (h == NULL) {
			code = GetLastError();
			if (code == ERROR_FILE_NOT_FOUND)
				return hpshm_error_set(err, HPSHM_EINVAL, (int)code, "OpenFileMappingW",
						       "get a fresh token from a running creator",
						       "no section %s: its creator and every process attached to it have "
						       "ended",
						       id + 5);
			return hpshm_error_set(err, code == ERROR_ACCESS_DENIED ? HPSHM_EACCES : HPSHM_ESYS, (int)code,
					       "OpenFileMappingW",
					       code == ERROR_ACCESS_DENIED ? "attach as the user who created the segment"
									   : NULL,
					       "cannot open section %s: %s", id + 5,
					       winsection_text(code, text, sizeof(text)));
		}
		named = 1;
	} else if (winsection_handle_parse(id, &value) == 0) {
		h = (HANDLE)(intptr_t)value;
		if (!hpshm__win_sys.get_handle_information(h, &flags))
			return hpshm_error_set(err, HPSHM_EINVAL, (int)GetLastError(), "GetHandleInformation", spawn_hint,
					       "handle %d is not open in this process", value);
	} else {
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is neither handle=<n> nor name=<namespace>\\hpshm.<name>",
				       id);
	}

	/* Over the parent's placeholder when it left one (ports/windows/placeholder.c). */
	p = hpshm__win_map_view_at(h, FILE_MAP_READ | FILE_MAP_WRITE | k->view_flags, rq->size, rq->address);
	if (p == NULL) {
		code = GetLastError();
		if (named)
			(void)hpshm__win_sys.close_handle(h);
		if (code == ERROR_INVALID_HANDLE && !named)
			return hpshm_error_set(err, HPSHM_EINVAL, (int)code, "MapViewOfFileEx", spawn_hint,
					       "handle %d is not a section", value);
		return winsection_map_error(k, code, rq, 1, err);
	}
	/* Ours now: programs this process starts must not inherit it by accident. */
	if (!named)
		(void)hpshm__win_sys.set_handle_information(h, HANDLE_FLAG_INHERIT, 0);
	m->addr = p;
	m->size = rq->size;
	m->handle = (intptr_t)h;
	/* An inherited handle came with the token, not from this attach: the core leaves it open
	 * if it refuses the mapping after all (a forged token must not close another handle). */
	m->flags = named ? 0 : HPSHM_MAP_INHERIT;
	m->caps = 0;
	hpshm__strlcpy(m->path, named ? id + 5 : "", sizeof(m->path));
	m->priv = NULL;
	return 0;
}

/* Is the header region all zeros (a section whose creator has not written it yet)?  1 or 0. */
static int winsection_tail_blank(const struct hpshm_header *h)
{
	const unsigned char *p = (const unsigned char *)h;

	for (size_t i = 0; i < sizeof(*h); i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

int hpshm__winsection_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq,
			     struct hpshm_found *f, hpshm_error *err)
{
	const struct hpshm__winsection_kind *k = self->user;
	static const enum hpshm__winsection_ns spaces[] = { HPSHM__WINSECTION_LOCAL, HPSHM__WINSECTION_GLOBAL };
	char path[HPSHM_PATH_MAX], text[256];
	wchar_t wpath[HPSHM_PATH_MAX];
	struct hpshm_header h;
	size_t size = 0;
	HANDLE sec;
	DWORD code;

	if (!hpshm__winsection_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL, NULL, "\"%.64s\" cannot name a section", rq->name);
	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
		if (hpshm__winsection_path(spaces[i], rq->name, path, sizeof(path)) < 0 ||
		    hpshm__win_wide(path, wpath, sizeof(wpath) / sizeof(wpath[0])) < 0)
			return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL, NULL, "\"%.64s\" is too long to name a section",
					       rq->name);
		sec = hpshm__win_sys.open_file_mapping(FILE_MAP_READ, FALSE, wpath);
		if (sec == NULL) {
			code = GetLastError();
			/* A namespace without the name, or (Global\ where a session has none) at all. */
			if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND)
				continue;
			if (code == ERROR_ACCESS_DENIED)
				return hpshm_error_set(err, HPSHM_EACCES, (int)code, "OpenFileMappingW",
						       "open it as the user whose program created it, or have that "
						       "program set a mode that admits this user (0660, 0666)",
						       "segment %s (%s) belongs to another user, and this user may not "
						       "open it", rq->name, path);
			return hpshm_error_set(err, HPSHM_ESYS, (int)code, "OpenFileMappingW", NULL,
					       "cannot open section %s: %s", path, winsection_text(code, text, sizeof(text)));
		}
		if (winsection_read_tail(k, sec, &h, &size) < 0) {
			code = GetLastError(); /* CloseHandle() below may change it */
			(void)hpshm__win_sys.close_handle(sec);
			return hpshm_error_set(err, HPSHM_ESYS, (int)code, "MapViewOfFileEx", NULL,
					       "cannot read section %s: %s", path, winsection_text(code, text, sizeof(text)));
		}
		(void)hpshm__win_sys.close_handle(sec);
		memset(f, 0, sizeof(*f));
		snprintf(f->id, sizeof(f->id), "name=%s", path);
		snprintf(f->name, sizeof(f->name), "%s", rq->name);
		f->size = size;
		f->alive = 1; /* a section that can be opened has a holder */
		if (memcmp(h.magic, HPSHM_HEADER_MAGIC, sizeof(h.magic)) == 0) {
			f->has_header = HPSHM_FOUND_HEADER;
			hpshm__header_to(f, &h);
		} else {
			f->has_header = winsection_tail_blank(&h) ? HPSHM_FOUND_BARE : HPSHM_FOUND_FOREIGN_HEADER;
		}
		return 0;
	}
	return hpshm_error_set(err, HPSHM_ENOENT, ERROR_FILE_NOT_FOUND, "OpenFileMappingW", NULL,
			       "no section Local\\" HPSHM__WINSECTION_PREFIX "%s or Global\\" HPSHM__WINSECTION_PREFIX "%s",
			       rq->name, rq->name);
}

/* ---- scan() and remove(): `hpshm ls` and `hpshm gc` ---- */

/* One scan(): whose objects it lists, and where they go. */
struct winsection_walk {
	const struct hpshm__winsection_kind *k;    /* the backend scanning */
	enum hpshm__winsection_ns            ns;   /* the namespace being listed */
	hpshm_found_fn                       fn;   /* the core's callback */
	void                                *user; /* its pointer */
	int                                  stop; /* fn asked to stop */
};

/* Does this backend list f?  Each object is listed by one backend only: the one its header
 * names if that is large pages', plain (lists_rest) for every other, and for what has no
 * header. */
static int winsection_lists(const struct hpshm__winsection_kind *k, const struct hpshm_found *f,
			    const struct hpshm_header *h)
{
	int large = f->has_header == HPSHM_FOUND_HEADER && strcmp(h->provider, HPSHM__WINSECTION_LARGE) == 0;

	return k->lists_rest ? !large : large;
}

static int winsection_scan_one(void *user, const wchar_t *wname, const wchar_t *wtype)
{
	static const wchar_t prefix[] = L"" HPSHM__WINSECTION_PREFIX;
	const size_t plen = sizeof(prefix) / sizeof(prefix[0]) - 1;
	struct winsection_walk *w = user;
	struct hpshm_header h;
	struct hpshm_found f;
	wchar_t wpath[HPSHM_PATH_MAX];
	HANDLE sec;
	size_t size = 0;

	if (wcsncmp(wname, prefix, plen) != 0)
		return 0;
	memset(&f, 0, sizeof(f));
	memset(&h, 0, sizeof(h));
	hpshm__win_utf8(wname + plen, f.name, sizeof(f.name));
	if (!hpshm__winsection_name_ok(f.name) ||
	    hpshm__winsection_path(w->ns, f.name, f.id, sizeof(f.id)) < 0 ||
	    hpshm__win_wide(f.id, wpath, sizeof(wpath) / sizeof(wpath[0])) < 0)
		return 0; /* a name hpshm cannot make (too long, not UTF-8 after conversion): not ours */
	/* A section that is listed has a holder: Windows deletes one with its last handle or
	 * view, so nothing found here is ever dead (see hpshm__winsection_scan()). */
	f.alive = 1;
	if (wcscmp(wtype, L"Section") != 0) {
		f.has_header = HPSHM_FOUND_FOREIGN_TYPE; /* an event, a mutex ... under hpshm's prefix */
	} else {
		sec = hpshm__win_sys.open_file_mapping(FILE_MAP_READ, FALSE, wpath);
		if (sec == NULL && GetLastError() == ERROR_FILE_NOT_FOUND)
			return 0; /* its last holder let go since the directory was read */
		if (sec == NULL || winsection_read_tail(w->k, sec, &h, &size) < 0)
			f.has_header = HPSHM_FOUND_BARE; /* another user's: unreadable, so unproven */
		else if (memcmp(h.magic, HPSHM_HEADER_MAGIC, sizeof(h.magic)) == 0)
			f.has_header = HPSHM_FOUND_HEADER;
		else if (winsection_tail_blank(&h))
			f.has_header = HPSHM_FOUND_BARE;
		else
			f.has_header = HPSHM_FOUND_FOREIGN_HEADER;
		if (sec != NULL)
			(void)hpshm__win_sys.close_handle(sec);
	}
	f.size = size;
	if (f.has_header == HPSHM_FOUND_HEADER)
		hpshm__header_to(&f, &h);
	if (!winsection_lists(w->k, &f, &h))
		return 0;
	if (w->fn(w->user, &f) != 0) {
		w->stop = 1;
		return 1;
	}
	return 0;
}

int hpshm__winsection_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	const struct hpshm__winsection_kind *k = self->user;
	static const enum hpshm__winsection_ns spaces[] = { HPSHM__WINSECTION_LOCAL, HPSHM__WINSECTION_GLOBAL };
	struct winsection_walk w;
	const char *call = NULL;
	int same = 0;
	long st;

	memset(&w, 0, sizeof(w));
	w.k = k;
	w.fn = fn;
	w.user = user;
	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]) && !w.stop; i++) {
		w.ns = spaces[i];
		st = hpshm__win_objects_list(spaces[i] == HPSHM__WINSECTION_GLOBAL ? HPSHM__WIN_GLOBAL : HPSHM__WIN_LOCAL,
					     winsection_scan_one, &w, &same, &call);
		if (st != 0)
			return st == (long)0xC0000002L ? HPSHM_ENOTSUP : HPSHM_ESYS;
		/* In session 0 Global\ is Local\: its objects were listed once already. */
		if (same)
			break;
	}
	return 0;
}

int hpshm__winsection_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
{
	wchar_t wpath[HPSHM_PATH_MAX];
	struct hpshm_header h;
	char holder[64] = "";
	HANDLE sec;

	(void)self;
	if (!winsection_path_ok(f->id) || hpshm__win_wide(f->id, wpath, sizeof(wpath) / sizeof(wpath[0])) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "list the segments again with `hpshm ls`",
				       "\"%.64s\" is not the name of an hpshm section", f->id);
	sec = hpshm__win_sys.open_file_mapping(FILE_MAP_READ, FALSE, wpath);
	if (sec == NULL && GetLastError() == ERROR_FILE_NOT_FOUND)
		return 0; /* gone with its last holder: nothing left to remove */
	if (sec != NULL)
		(void)hpshm__win_sys.close_handle(sec);
	if (f->has_header == HPSHM_FOUND_HEADER) {
		hpshm__header_of(f, &h);
		snprintf(holder, sizeof(holder), " (its creator was process %lld)", (long long)h.creator_pid);
	}
	return hpshm_error_set(err, HPSHM_EEXIST, 0, NULL,
			       "stop the processes that use it; it goes when the last one closes it or exits",
			       "section %s is still held by a process%s: Windows deletes a section with its last "
			       "handle and view, and hpshm never closes another process's handles",
			       f->id, holder);
}

/* ---- plain: base pages ---- */

static int plain_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	(void)self;
	(void)rq;
	/* Base pages, always there: no pool to count, nothing for an operator to fix. */
	out->sys_errno = 0;
	out->reason[0] = '\0';
	out->fix[0] = '\0';
	out->nsizes = 1;
	out->sizes[0] = hpshm__port_base_page_size();
	out->page_size = out->sizes[0];
	out->available = HPSHM_PAGES_UNKNOWN;
	out->advice = 0;
	return 0;
}

struct hpshm__winsection_kind hpshm__winsection_plain = {
	.section_flags   = 0,
	.view_flags      = 0,
	.ready           = NULL, /* base pages need nothing */
	.mechanism_error = NULL, /* and have no mechanism of their own to fail */
	.lists_rest      = 1,
};

const struct hpshm_provider hpshm__provider_plain = {
	HPSHM__WINSECTION_OPS,
	.name         = "plain",
	.summary      = "base pages from a section backed by the paging file; always available",
	.caps         = HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED,
	.probe        = plain_probe,
	.requirements = NULL, /* base pages need nothing set up */
};
