/* SPDX-License-Identifier: MIT */
/*
 * base/errors.c -- error codes, their names and messages, and the caller-owned error record.
 *
 * The record is plain fixed-size storage the caller owns, so a failure path never allocates:
 * a server that fails to get memory must still be able to say why.  It lives in base/ because
 * every layer fills it: the ports (a failed fork), the backends, the core.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "hpshm/provider.h" /* the public declaration of hpshm_error_set(), checked against base.h's */

const char *hpshm_strerror(int code)
{
	switch (code) {
	case HPSHM_OK:
		return "success";
#define HPSHM__ERR_MSG(name, value, msg) \
	case HPSHM_##name:               \
		return msg;
		HPSHM_ERRORS(HPSHM__ERR_MSG)
#undef HPSHM__ERR_MSG
	default:
		return "unknown error";
	}
}

const char *hpshm_errname(int code)
{
	switch (code) {
	case HPSHM_OK:
		return "HPSHM_OK";
#define HPSHM__ERR_NAME(name, value, msg) \
	case HPSHM_##name:                \
		return "HPSHM_" #name;
		HPSHM_ERRORS(HPSHM__ERR_NAME)
#undef HPSHM__ERR_NAME
	default:
		return "HPSHM_E?";
	}
}

const char *hpshm_version(void)
{
#define HPSHM__STR2(x) #x
#define HPSHM__STR(x)  HPSHM__STR2(x)
	return HPSHM__STR(HPSHM_VERSION_MAJOR) "." HPSHM__STR(HPSHM_VERSION_MINOR) "." HPSHM__STR(
		HPSHM_VERSION_PATCH);
}

unsigned hpshm_version_number(void)
{
	return HPSHM_VERSION_NUMBER;
}

int hpshm_error_set(hpshm_error *err, int code, int sys_errno, const char *call, const char *hint,
		    const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	/* The provider and key fields belong to whoever knows them: the core fills the
	 * provider after a provider fails, the config parser the key. Keep them.  Every
	 * record the library fills passes through here, so this is where it gets its version
	 * and its reserved space cleared (hpshm.h, "Growing the public structs"). */
	err->version = HPSHM_ERROR_VERSION;
	memset(err->reserved, 0, sizeof(err->reserved));
	err->code = code;
	err->sys_errno = sys_errno;
	hpshm__strlcpy(err->call, call, sizeof(err->call));
	hpshm__strlcpy(err->hint, hint, sizeof(err->hint));
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return code;
}
