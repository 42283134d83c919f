/* SPDX-License-Identifier: MIT */
/*
 * apr/status.c -- hpshm's error codes as apr_status_t and back (doc/apr.md, "Statuses").
 *
 * The six codes APR has a name for become that name, so a module's usual tests
 * (APR_STATUS_IS_ENOENT) work; every other code gets a status of its own in hpshm's range
 * past APR_OS_START_USERERR, so nothing is folded into a vaguer one and the inverse is exact.
 */
#include <apr_strings.h>

#include "hpshm/apr.h"

/* The codes APR names itself. */
static const struct {
	int          code;
	apr_status_t st;
} apr_named[] = {
	{ HPSHM_ENOMEM, APR_ENOMEM }, { HPSHM_EACCES, APR_EACCES }, { HPSHM_ENOENT, APR_ENOENT },
	{ HPSHM_EEXIST, APR_EEXIST }, { HPSHM_EINVAL, APR_EINVAL }, { HPSHM_ENOTSUP, APR_ENOTIMPL },
};
#define APR_NAMED (sizeof(apr_named) / sizeof(apr_named[0]))

apr_status_t hpshm_apr_status(int hpshm_code)
{
	size_t i;

	if (hpshm_code == 0)
		return APR_SUCCESS;
	for (i = 0; i < APR_NAMED; i++)
		if (apr_named[i].code == hpshm_code)
			return apr_named[i].st;
	/* A code past the range (none is today: hpshm's go to -16), or a positive one, gets the
	 * range's last status: never APR_SUCCESS, never another code's. */
	if (hpshm_code > 0 || -hpshm_code >= HPSHM_APR_ERRSPACE_SIZE - 1)
		return HPSHM_APR_START_ERROR + HPSHM_APR_ERRSPACE_SIZE - 1;
	return (apr_status_t)(HPSHM_APR_START_ERROR - hpshm_code);
}

int hpshm_apr_code(apr_status_t st)
{
	size_t i;

	if (st == APR_SUCCESS)
		return 0;
	if (st > HPSHM_APR_START_ERROR && st < HPSHM_APR_START_ERROR + HPSHM_APR_ERRSPACE_SIZE - 1)
		return -(int)(st - HPSHM_APR_START_ERROR);
	for (i = 0; i < APR_NAMED; i++)
		if (apr_named[i].st == st)
			return apr_named[i].code;
	return HPSHM_ESYS;
}

char *hpshm_apr_strerror(apr_status_t st, char *buf, apr_size_t len)
{
	if (len == 0)
		return buf;
	if (st > HPSHM_APR_START_ERROR && st < HPSHM_APR_START_ERROR + HPSHM_APR_ERRSPACE_SIZE) {
		if (st == HPSHM_APR_START_ERROR + HPSHM_APR_ERRSPACE_SIZE - 1)
			apr_cpystrn(buf, "hpshm: unknown error", len);
		else
			apr_cpystrn(buf, hpshm_strerror(hpshm_apr_code(st)), len);
		return buf;
	}
	return apr_strerror(st, buf, len);
}
