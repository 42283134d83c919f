/* SPDX-License-Identifier: MIT */
/*
 * core/walk.c -- the create walk's bookkeeping (core/walk.h): each candidate's outcome in the
 * report, and the one hint the caller is given, for core/segment.c and core/place.c alike.
 */
#include <string.h>

#include "core/walk.h"

void hpshm__walk_attempt(struct hpshm__walk *w, const struct hpshm_instance *p, size_t page_size, int result,
			 int sys_errno, const char *call, const char *reason)
{
	hpshm_attempt *a;

	if (result < 0)
		w->last_code = result;
	if (w->r->nattempts >= HPSHM_MAX_ATTEMPTS)
		return;
	a = &w->r->attempts[w->r->nattempts++];
	memset(a, 0, sizeof(*a));
	hpshm__strlcpy(a->provider, p->name, sizeof(a->provider));
	a->page_size = page_size;
	a->result = result;
	a->sys_errno = sys_errno;
	hpshm__strlcpy(a->call, call, sizeof(a->call));
	hpshm__strlcpy(a->reason, reason, sizeof(a->reason));
	hpshm__log(w->cfg, HPSHM_LOG_DEBUG, "%s: %s%s%s", p->name, result ? hpshm_errname(result) : "ok",
		   reason && reason[0] ? ": " : "", reason ? reason : "");
}

void hpshm__walk_keep_hint(struct hpshm__walk *w, const char *hint)
{
	if (!w->hint[0] && hint && hint[0])
		hpshm__strlcpy(w->hint, hint, sizeof(w->hint));
}

/*
 * A create that failed on the request itself (its name in use, a size no address space or
 * commit limit can hold) has the hint that fits the failure: setting the machine up for an
 * earlier provider (a privilege, a pool) would not make it succeed, so that hint gives way.
 */
void hpshm__walk_request_hint(struct hpshm__walk *w, int rc, const char *hint)
{
	if (w->hint_of_setup && (rc == HPSHM_EEXIST || rc == HPSHM_ENOMEM) && hint && hint[0]) {
		hpshm__strlcpy(w->hint, hint, sizeof(w->hint));
		w->hint_of_setup = 0;
	}
	hpshm__walk_keep_hint(w, hint);
}
