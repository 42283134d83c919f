/* SPDX-License-Identifier: MIT */
/*
 * base/json.h -- a small streaming JSON writer, for the tool's and the benchmark's --json output.
 *
 * It sits in base/ because both tools/ and bench/ write JSON and bench/ sits below tools/.
 * The output is read by scripts and CI, so it must always be valid JSON even
 * when a string comes from the kernel (a mount path) or from a failed call (an error
 * message): strings are escaped, bytes that are not UTF-8 become U+FFFD, and numbers that
 * JSON cannot carry (NaN, infinities) become null.  The writer keeps track of commas and
 * nesting, so callers only say what comes next; json_end() reports a misuse (unbalanced
 * nesting, a key outside an object) instead of writing broken text silently.
 *
 * No allocation, no external dependency: one struct on the caller's stack.
 */
#ifndef HPSHM_BASE_JSON_H
#define HPSHM_BASE_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE         *out;                        /* where the text goes */
	int           pretty;                     /* 1: newlines and two-space indents */
	int           depth;                      /* open objects and arrays */
	int           error;                      /* 1 once the caller misused the writer */
	int           after_key;                  /* 1 between a key and its value */
	int           top_done;                   /* 1 once the top-level value is complete */
	unsigned char is_object[JSON_MAX_DEPTH];  /* per level: 1 object, 0 array */
	unsigned char has_items[JSON_MAX_DEPTH];  /* per level: 1 once a member was written */
};

void json_begin(struct json *j, FILE *out, int pretty);
/* Finish the document with a newline.  0, or -1 if the nesting was misused. */
int  json_end(struct json *j);

void json_object_open(struct json *j);
void json_object_close(struct json *j);
void json_array_open(struct json *j);
void json_array_close(struct json *j);

/* A member name; the next call writes its value.  Only inside an object. */
void json_key(struct json *j, const char *key);

void json_string(struct json *j, const char *s);   /* NULL writes null */
void json_uint(struct json *j, uint64_t v);
void json_int(struct json *j, int64_t v);
void json_double(struct json *j, double v, int decimals);
void json_bool(struct json *j, int v);
void json_null(struct json *j);

/* key + value in one call, for the common case. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_double(struct json *j, const char *key, double v, int decimals);
void json_kv_bool(struct json *j, const char *key, int v);
void json_kv_null(struct json *j, const char *key);

#endif /* HPSHM_BASE_JSON_H */
