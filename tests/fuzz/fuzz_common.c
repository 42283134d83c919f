/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_common.c -- the checks the harnesses share (fuzz.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: contract broken: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void fuzz_check_error(int rc, const hpshm_error *err, const char *what)
{
	FUZZ_CHECK(rc < 0, "%s: %d is not a negative HPSHM_E* code", what, rc);
	FUZZ_CHECK(err->code == rc, "%s: err.code %d, returned %d", what, err->code, rc);
	FUZZ_CHECK(memchr(err->message, '\0', sizeof(err->message)) != NULL, "%s: message not terminated", what);
	FUZZ_CHECK(err->message[0] != '\0', "%s: %s with an empty message", what, hpshm_errname(rc));
	FUZZ_CHECK(memchr(err->hint, '\0', sizeof(err->hint)) != NULL, "%s: hint not terminated", what);
	FUZZ_CHECK(memchr(err->key, '\0', sizeof(err->key)) != NULL, "%s: key not terminated", what);
}

/* hpshm_config_get(key) into a heap buffer of exactly len bytes (len 0: a non-NULL one). */
static void get_into(const hpshm_config *cfg, const char *key, const char *full, size_t len)
{
	size_t n = strlen(full), want = len ? (n < len ? n : len - 1) : 0;
	char *buf = malloc(len ? len : 1);
	int rc;

	FUZZ_CHECK(buf != NULL, "out of memory");
	buf[0] = 'x';
	rc = hpshm_config_get(cfg, key, buf, len);
	FUZZ_CHECK(rc >= 0 && (size_t)rc == n, "%s, len %zu: returned %d, the value \"%s\" is %zu long", key, len, rc,
		   full, n);
	if (len) {
		FUZZ_CHECK(memcmp(buf, full, want) == 0 && buf[want] == '\0',
			   "%s, len %zu: not a terminated prefix of \"%s\"", key, len, full);
	} else {
		FUZZ_CHECK(buf[0] == 'x', "%s: len 0 wrote into the buffer", key);
	}
	free(buf);
}

void fuzz_check_getters(hpshm_config *cfg)
{
	const char *key;

	for (unsigned k = 0; (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
		int n = hpshm_config_get(cfg, key, NULL, 0), again;
		char *full, *back;
		hpshm_error err;

		FUZZ_CHECK(n >= 0, "%s: hpshm_config_get(NULL, 0) = %s", key, hpshm_errname(n));
		full = malloc((size_t)n + 1);
		back = malloc((size_t)n + 1);
		FUZZ_CHECK(full && back, "out of memory");
		again = hpshm_config_get(cfg, key, full, (size_t)n + 1);
		FUZZ_CHECK(again == n && strlen(full) == (size_t)n, "%s: %d with a buffer, %d without", key, again, n);
		{
			const size_t lens[] = {0, 1, 2, (size_t)n / 2, (size_t)n};

			for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
				get_into(cfg, key, full, lens[i]);
		}
		/* What the getter prints, the setter takes, and the value stays the same. */
		memset(&err, 0, sizeof(err));
		again = hpshm_config_set(cfg, key, full, &err);
		FUZZ_CHECK(again == 0, "%s: its own value \"%s\" is refused: %s: %s", key, full, hpshm_errname(again),
			   err.message);
		again = hpshm_config_get(cfg, key, back, (size_t)n + 1);
		FUZZ_CHECK(again == n && strcmp(full, back) == 0, "%s: \"%s\" set back reads \"%s\"", key, full, back);
		free(back);
		free(full);
	}
}
