/* SPDX-License-Identifier: MIT */
/*
 * tests/jsonrows.h -- reading the rows of a JSON report the tool printed, in the suites that
 * check `hpshm bench --json` (test_bench on Linux, test_bench_windows on Windows).
 *
 * A row is the text from one "provider" key to the next: the report is the tool's own
 * (base/json.c), one key and value a line, so a substring search within a row is exact
 * enough, and a test needs no JSON parser to read the figures it checks.
 */
#ifndef HPSHM_TESTS_JSONROWS_H
#define HPSHM_TESTS_JSONROWS_H

#include <stddef.h>

struct hpt_row {
	const char *start; /* its "provider" key */
	size_t      len;   /* up to the next row's */
};

/* The next row at or after *cursor into r, moving *cursor past its start: 1, or 0 at the end. */
int hpt_row_next(const char **cursor, struct hpt_row *r);
/* The text value of key in r, into buf: 1, or 0 if absent or not text. */
int hpt_row_str(const struct hpt_row *r, const char *key, char *buf, size_t len);
/* The number value of key in r: 1, or 0 if absent or null. */
int hpt_row_num(const struct hpt_row *r, const char *key, double *out);
/* Is key present in r with the value null?  1 or 0. */
int hpt_row_null(const struct hpt_row *r, const char *key);

#endif /* HPSHM_TESTS_JSONROWS_H */
