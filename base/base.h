/* SPDX-License-Identifier: MIT */
/*
 * base/base.h -- the helpers every layer of hpshm shares: bounded string copies, overflow-checked
 * rounding, one hash, and the list of page sizes as people read it.
 *
 * Internal: not installed.  base/ is the bottom layer: it includes only the C standard library
 * and the public headers, never an OS header, so the ports, the backends, the core and the
 * tools can all call it and no call runs back up (DESIGN.md, "Layout").  What the public API
 * already declares (hpshm_error_set(), hpshm_size_format(), hpshm_size_parse(),
 * hpshm_strerror()) is defined here too, in errors.c and size.c.
 */
#ifndef HPSHM_BASE_BASE_H
#define HPSHM_BASE_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "hpshm.h"

/*
 * hpshm_error_set() belongs to the provider SDK (include/hpshm/provider.h), where providers
 * find it.  The ports fill errors with it too but must not see the provider interface, so it
 * is declared again here; base/errors.c includes both headers, so the compiler checks that
 * the two declarations agree.
 */
HPSHM_API int hpshm_error_set(hpshm_error *err, int code, int sys_errno, const char *call, const char *hint,
			      const char *fmt, ...)
	HPSHM__PRINTF(6, 7)
	;

/* Copy a string into a fixed buffer, always terminated, truncating.  src NULL copies "". */
void hpshm__strlcpy(char *dst, const char *src, size_t len);

/*
 * The next token of the text at *cursor: skips the characters of delims, ends the token at
 * the next one by writing a NUL there, and moves *cursor past it; NULL once no token is left
 * (as strtok_r() does: empty tokens are skipped).  Start with *cursor at a writable text.
 */
char *hpshm__token_next(char **cursor, const char *delims);

/* Round size up to a multiple of align (a power of two): 0, HPSHM_EINVAL for a bad align,
 * or HPSHM_EOVERFLOW. */
int hpshm__round_up(size_t size, size_t align, size_t *out);

/*
 * FNV-1a, 32 bits, over len bytes, continuing from h: start with HPSHM__FNV1A32_INIT, and
 * feed the parts of a text one after the other to hash their concatenation.  Tokens carry it
 * as their check, and SysV keys of named segments are made from it: the value is part of
 * what a token or a key means, so it must never change.
 */
#define HPSHM__FNV1A32_INIT 2166136261u
uint32_t hpshm__fnv1a32(uint32_t h, const void *data, size_t len);

/*
 * The page sizes sizes[0..n) as one list for messages, "2MiB, 1GiB", or "none" when n <= 0.
 * A size that does not fit whole is left out with the rest, never cut.  Returns buf.
 */
char *hpshm__size_list(const size_t *sizes, int n, char *buf, size_t len);

#endif /* HPSHM_BASE_BASE_H */
