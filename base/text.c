/* SPDX-License-Identifier: MIT */
/*
 * base/text.c -- text helpers every layer uses: a bounded copy, a tokeniser and the one hash of
 * hpshm.
 *
 * FNV-1a (Fowler, Noll, Vo) is used where hpshm needs a short fingerprint of a text that other
 * processes recompute: the check at the end of a re-attach token, and the SysV key of a named
 * segment.  It is not a defence against forgery (the nonce in the segment's header is); it
 * catches a token cut or mangled on its way through an environment or a command line.
 */
#include <string.h>

#include "base/base.h"

void hpshm__strlcpy(char *dst, const char *src, size_t len)
{
	size_t n;

	if (len == 0)
		return;
	n = src ? strlen(src) : 0;
	if (n >= len)
		n = len - 1;
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

uint32_t hpshm__fnv1a32(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u; /* the 32-bit FNV prime */
	}
	return h;
}

/* strtok_r() is POSIX and strtok_s() is the UCRT's (C11's Annex K one takes other arguments),
 * so neither compiles everywhere; strtok() keeps its place in a static and is not reentrant. */
char *hpshm__token_next(char **cursor, const char *delims)
{
	char *start = *cursor, *end;

	if (!start)
		return NULL;
	start += strspn(start, delims);
	if (*start == '\0') {
		*cursor = NULL;
		return NULL;
	}
	end = start + strcspn(start, delims);
	if (*end == '\0') {
		*cursor = NULL;
	} else {
		*end = '\0';
		*cursor = end + 1;
	}
	return start;
}
