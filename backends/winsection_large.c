/* SPDX-License-Identifier: MIT */
/*
 * backends/winsection_large.c -- large pages on Windows: windows_large, a SEC_LARGE_PAGES section.
 *
 * The second row of Windows' one section implementation (backends/winsection.c, whose members
 * it shares, with this file's kind as self->user): here is only what large pages add, the
 * privilege, what their errors mean, probe() and requirements().
 *
 * Mechanism: SeLockMemoryPrivilege enabled in the token, then CreateFileMappingW(
 * INVALID_HANDLE_VALUE, PAGE_READWRITE | SEC_COMMIT | SEC_LARGE_PAGES, size) and every view
 * mapped with FILE_MAP_LARGE_PAGES (backends/winsection.c).  Large pages are nonpaged and
 * allocated, all of them, when the section is created: there is no pool to reserve, no fault
 * later that could fail, and nothing to populate but the first-touch cost.
 *
 * Operator setup: grant the account the "Lock pages in memory" user right (secpol.msc, Local
 * Policies, User Rights Assignment: SeLockMemoryPrivilege), log on again so the token carries
 * it, and start the program elevated: User Account Control gives an administrator's ordinary
 * processes a filtered token without it.  PostgreSQL's pg_ctl keeps exactly this privilege
 * when it drops the others.
 *
 * Quirks, and why each is handled so:
 *   - AdjustTokenPrivileges() returns TRUE when the token lacks the privilege; only
 *     GetLastError() == ERROR_NOT_ALL_ASSIGNED (1300) tells (ports/windows/privilege.c);
 *   - the errors that mean "large pages cannot be had here" make the provider unavailable, so
 *     the core moves on to plain under huge_pages=try and names the fix under on:
 *     ERROR_NOT_ALL_ASSIGNED (1300) and ERROR_PRIVILEGE_NOT_HELD (1314): no privilege;
 *     ERROR_NO_SYSTEM_RESOURCES (1450): not enough contiguous free physical memory, which
 *     fragmentation makes likelier the longer the machine runs (PostgreSQL's only fallback
 *     case); ERROR_INVALID_PARAMETER (87): the system refuses large pages for this section
 *     (no support, a size that is not a multiple of the large page; wine answers it for
 *     VirtualAlloc(MEM_LARGE_PAGES));
 *   - before Windows 10 1703 a view mapped without FILE_MAP_LARGE_PAGES was backed by large
 *     pages anyway; from 1703 on it is not, silently (PostgreSQL BUG #17448).  Every view
 *     here passes the flag, the re-attached ones too, and the core verifies each mapping with
 *     QueryWorkingSetEx()'s LargePage bit (ports/windows/memory.c): a view the kernel does not
 *     back with large pages fails verification instead of passing for one;
 *   - wine creates SEC_LARGE_PAGES sections without the privilege and backs them with 4 KiB
 *     pages: under wine this provider is unavailable at probe (1300), and a section made
 *     anyway fails verification.
 *
 * Capabilities: HUGE, REATTACH, NAMED.  Page size: GetLargePageMinimum() (2 MiB on x86-64),
 * the only size Windows offers, which probe() reports as sizes[] and chooses for the default,
 * the largest or that size asked by name.  There is no pool to count (available is unknown):
 * whether the memory is there only CreateFileMappingW() can tell.
 *
 * Re-attach: as plain on Windows, by inherited handle or by name, every view with
 * FILE_MAP_LARGE_PAGES.  A named section lives while any process holds it (no debris): scan()
 * lists the sections whose header names this provider, and remove() deletes nothing, as for
 * plain (backends/winsection.h says why).
 */
#include <stdio.h>
#include <string.h>

#include "backends/winsection.h"
#include "hpshm/provider.h"
#include "port.h"

/* "start elevated" only where it helps: the port asks the token (ports/windows/privilege.c). */
#define LARGE_SETUP_HINT hpshm__win_lock_memory_hint()

static int large_mechanism_error(DWORD code, const char *call, const struct hpshm_request *rq, hpshm_error *err)
{
	char sz[32], psz[32];

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	switch (code) {
	case ERROR_NOT_ALL_ASSIGNED:
	case ERROR_PRIVILEGE_NOT_HELD:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, (int)code, call, LARGE_SETUP_HINT,
				       "this process's token does not hold SeLockMemoryPrivilege, which large pages need");
	case ERROR_NO_SYSTEM_RESOURCES:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, (int)code, call,
				       "free physical memory, or start the program early after boot, when contiguous "
				       "memory is easier to find",
				       "not enough contiguous free physical memory for %s of %s large pages", sz, psz);
	case ERROR_INVALID_PARAMETER:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, (int)code, call, NULL,
				       "the system refused %s of %s large pages for a section (no large page "
				       "support here)",
				       sz, psz);
	default:
		return 0;
	}
}

/* Large pages exist here, of rq's size (probe's choice), and the token holds the privilege
 * (now enabled)?  0, or the GetLastError() code with *call and *why saying what is missing. */
static DWORD large_ready(const struct hpshm_request *rq, const char **call, const char **why)
{
	size_t large = (size_t)hpshm__win_sys.get_large_page_minimum();
	DWORD code;

	if (large == 0) {
		*call = "GetLargePageMinimum";
		*why = "the processor has no large pages (GetLargePageMinimum() is 0)";
		return ERROR_NOT_SUPPORTED;
	}
	if (rq->page_size != large) {
		*call = "GetLargePageMinimum";
		*why = "Windows offers large pages of one size only, GetLargePageMinimum()";
		return ERROR_INVALID_PARAMETER;
	}
	code = hpshm__win_privilege_enable(SE_LOCK_MEMORY_NAME, call);
	if (code == ERROR_NOT_ALL_ASSIGNED)
		*why = "this process's token does not hold SeLockMemoryPrivilege"; /* the hint: mechanism_error */
	else if (code != ERROR_SUCCESS)
		*why = "SeLockMemoryPrivilege could not be enabled";
	return code;
}

static int large_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	size_t large = (size_t)hpshm__win_sys.get_large_page_minimum();
	char wish[32], lsz[32];
	const char *call = "";
	DWORD code;

	(void)self;
	out->sys_errno = 0;
	out->reason[0] = '\0';
	out->fix[0] = '\0';
	out->nsizes = 0;
	out->page_size = 0;
	out->available = HPSHM_PAGES_UNKNOWN;
	out->advice = 0; /* SEC_COMMIT allocates every large page at creation: no late fault */
	if (large == 0) {
		out->sys_errno = ERROR_NOT_SUPPORTED;
		hpshm__strlcpy(out->reason, "the processor has no large pages (GetLargePageMinimum() is 0)",
			       sizeof(out->reason));
		return HPSHM_EUNAVAILABLE;
	}
	out->nsizes = 1;
	out->sizes[0] = large;
	if (rq->page_size != HPSHM_PAGE_SIZE_DEFAULT && rq->page_size != HPSHM_PAGE_SIZE_LARGEST && rq->page_size != large) {
		hpshm_size_format(rq->page_size, wish, sizeof(wish));
		hpshm_size_format(large, lsz, sizeof(lsz));
		snprintf(out->reason, sizeof(out->reason),
			 "huge_page_size=%s: Windows offers large pages of %s only (GetLargePageMinimum())", wish, lsz);
		snprintf(out->fix, sizeof(out->fix), "set huge_page_size to %s, or default", lsz);
		return HPSHM_EUNAVAILABLE;
	}
	out->page_size = large;
	code = hpshm__win_privilege_enable(SE_LOCK_MEMORY_NAME, &call);
	if (code == ERROR_SUCCESS)
		return 0;
	out->sys_errno = (int)code;
	if (code == ERROR_NOT_ALL_ASSIGNED) {
		hpshm__strlcpy(out->reason, "this process's token does not hold SeLockMemoryPrivilege",
			       sizeof(out->reason));
		hpshm__strlcpy(out->fix, LARGE_SETUP_HINT, sizeof(out->fix));
	} else {
		snprintf(out->reason, sizeof(out->reason), "SeLockMemoryPrivilege could not be enabled (%s failed)",
			 call);
	}
	return HPSHM_EUNAVAILABLE;
}

/* The kind's ready(): the check large_ready() makes, as create()'s error. */
static int large_ready_error(const struct hpshm_request *rq, hpshm_error *err)
{
	const char *call = "", *why = "";
	DWORD code = large_ready(rq, &call, &why);
	int rc;

	if (code == ERROR_SUCCESS)
		return 0;
	rc = large_mechanism_error(code, call, rq, err);
	return rc != 0 ? rc : hpshm_error_set(err, HPSHM_EUNAVAILABLE, (int)code, call, NULL, "%s", why);
}

/*
 * requirements(): the one thing an operator sets up for large pages, the "Lock pages in
 * memory" right (SeLockMemoryPrivilege) for the account, which reaches the token at the next
 * logon and survives User Account Control only in an elevated start.  The port names the
 * account and its SID and writes the secedit commands (ports/windows/privilege.c).  There is
 * no pool to size: Windows finds contiguous memory at creation or fails, hence the note.
 */
static int large_requirements(const struct hpshm_instance *self, const struct hpshm_request *rq,
			      hpshm_need_fn fn, void *user)
{
	struct hpshm_requirement r;
	struct hpshm__win_fix f;

	(void)self;
	(void)rq;
	hpshm__win_lock_memory_fix(&f);
	memset(&r, 0, sizeof(r));
	hpshm__strlcpy(r.what, "privilege", sizeof(r.what));
	r.met = f.met;
	hpshm__strlcpy(r.detail, f.detail, sizeof(r.detail));
	for (int k = 0; k < 3; k++) {
		hpshm__strlcpy(r.now[k], f.now[k], sizeof(r.now[k]));
		hpshm__strlcpy(r.persist[k], f.persist[k], sizeof(r.persist[k]));
	}
	hpshm__strlcpy(r.note,
		       "large pages need physically contiguous free memory: the longer a machine runs, the likelier a "
		       "large segment fails for fragmentation (ERROR_NO_SYSTEM_RESOURCES, 1450); create it early after "
		       "boot, or reboot to get it",
		       sizeof(r.note));
	(void)fn(user, &r);
	return 0;
}

struct hpshm__winsection_kind hpshm__winsection_large = {
	.section_flags   = SEC_LARGE_PAGES,
	.view_flags      = FILE_MAP_LARGE_PAGES,
	.ready           = large_ready_error,
	.mechanism_error = large_mechanism_error,
	.lists_rest      = 0,
};

const struct hpshm_provider hpshm__provider_windows_large = {
	HPSHM__WINSECTION_OPS,
	.name         = HPSHM__WINSECTION_LARGE,
	.summary      = "large pages from a SEC_LARGE_PAGES section; needs \"Lock pages in memory\"",
	.caps         = HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED,
	.probe        = large_probe,
	.requirements = large_requirements,
};
