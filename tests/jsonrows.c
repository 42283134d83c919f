/* SPDX-License-Identifier: MIT */
/*
 * tests/jsonrows.c -- the rows of the tool's JSON reports, for the bench suites (jsonrows.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrows.h"

int hpt_row_next(const char **cursor, struct hpt_row *r)
{
	const char *p = strstr(*cursor, "\"provider\": ");
	const char *q;

	if (!p)
		return 0;
	q = strstr(p + 1, "\"provider\": ");
	r->start = p;
	r->len = q ? (size_t)(q - p) : strlen(p);
	*cursor = p + 1;
	return 1;
}

/* Where key's value starts in r, or NULL if key is not in r. */
static const char *row_value(const struct hpt_row *r, const char *key, const char *after)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof pat, "\"%s\": %s", key, after);
	p = strstr(r->start, pat);
	if (!p || p >= r->start + r->len)
		return NULL;
	return p + strlen(pat);
}

int hpt_row_str(const struct hpt_row *r, const char *key, char *buf, size_t len)
{
	const char *p = row_value(r, key, "\""), *e;

	if (!p || !(e = strchr(p, '"')))
		return 0;
	snprintf(buf, len, "%.*s", (int)(e - p), p);
	return 1;
}

int hpt_row_num(const struct hpt_row *r, const char *key, double *out)
{
	const char *p = row_value(r, key, "");

	if (!p || strncmp(p, "null", 4) == 0)
		return 0;
	*out = strtod(p, NULL);
	return 1;
}

int hpt_row_null(const struct hpt_row *r, const char *key)
{
	return row_value(r, key, "null") != NULL;
}
