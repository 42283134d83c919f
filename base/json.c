/* SPDX-License-Identifier: MIT */
/*
 * base/json.c -- the streaming JSON writer behind the --json output of the tool and the benchmark.
 *
 * Commas are written before a member, never after, so closing a container needs no look
 * back.  Misuse (a key in an array, a value where a key is due, closing what was not opened,
 * a second top-level value) sets j->error and is reported by json_end(): the tool then
 * exits with a failure instead of handing a script broken text as if it were fine.
 */
#include "base/json.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>

void json_begin(struct json *j, FILE *out, int pretty)
{
	j->out = out;
	j->pretty = pretty;
	j->depth = 0;
	j->error = 0;
	j->after_key = 0;
	j->top_done = 0;
}

int json_end(struct json *j)
{
	if (j->depth != 0 || j->after_key || !j->top_done)
		j->error = 1;
	fputc('\n', j->out);
	return j->error ? -1 : 0;
}

static void json_indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/*
 * Everything that starts a value goes through here: it writes the comma and indent the
 * position needs, and checks that a value is allowed at all (inside an object only after a
 * key).
 */
static void json_before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth == 0) {
		if (j->top_done)
			j->error = 1;
		return;
	}
	if (j->is_object[j->depth - 1]) {
		j->error = 1;   /* a value in an object needs a key first */
		return;
	}
	if (j->has_items[j->depth - 1])
		fputc(',', j->out);
	j->has_items[j->depth - 1] = 1;
	json_indent(j);
}

/* A scalar or a closed container completes the document when it is at the top. */
static void json_after_value(struct json *j)
{
	if (j->depth == 0)
		j->top_done = 1;
}

static void json_open(struct json *j, int object)
{
	json_before_value(j);
	fputc(object ? '{' : '[', j->out);
	if (j->depth >= JSON_MAX_DEPTH) {
		j->error = 1;
		return;
	}
	j->is_object[j->depth] = (unsigned char)object;
	j->has_items[j->depth] = 0;
	j->depth++;
}

static void json_close(struct json *j, int object)
{
	if (j->depth == 0 || j->after_key || j->is_object[j->depth - 1] != object) {
		j->error = 1;
		fputc(object ? '}' : ']', j->out);
		return;
	}
	j->depth--;
	if (j->has_items[j->depth])
		json_indent(j);
	fputc(object ? '}' : ']', j->out);
	json_after_value(j);
}

void json_object_open(struct json *j)  { json_open(j, 1); }
void json_object_close(struct json *j) { json_close(j, 1); }
void json_array_open(struct json *j)   { json_open(j, 0); }
void json_array_close(struct json *j)  { json_close(j, 0); }

/*
 * Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF), or 0 if the bytes there are not one.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void json_write_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		unsigned char c = *s;
		int n;

		switch (c) {
		case '"':  fputs("\\\"", out); s++; continue;
		case '\\': fputs("\\\\", out); s++; continue;
		case '\b': fputs("\\b", out); s++; continue;
		case '\f': fputs("\\f", out); s++; continue;
		case '\n': fputs("\\n", out); s++; continue;
		case '\r': fputs("\\r", out); s++; continue;
		case '\t': fputs("\\t", out); s++; continue;
		default:   break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", (unsigned)c);
			s++;
			continue;
		}
		n = utf8_len(s);
		if (n == 0) {
			/* Kernel paths and messages are bytes, not text: keep the output valid. */
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)n, out);
		s += n;
	}
	fputc('"', out);
}

void json_key(struct json *j, const char *key)
{
	if (j->depth == 0 || !j->is_object[j->depth - 1] || j->after_key) {
		j->error = 1;
		return;
	}
	if (j->has_items[j->depth - 1])
		fputc(',', j->out);
	j->has_items[j->depth - 1] = 1;
	json_indent(j);
	json_write_string(j->out, key);
	fputs(j->pretty ? ": " : ":", j->out);
	j->after_key = 1;
}

void json_string(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	json_before_value(j);
	json_write_string(j->out, s);
	json_after_value(j);
}

void json_uint(struct json *j, uint64_t v)
{
	json_before_value(j);
	fprintf(j->out, "%" PRIu64, v);
	json_after_value(j);
}

void json_int(struct json *j, int64_t v)
{
	json_before_value(j);
	fprintf(j->out, "%" PRId64, v);
	json_after_value(j);
}

void json_double(struct json *j, double v, int decimals)
{
	/* Not isfinite(): mingw-w64's macro converts to float on one branch, which
	 * -Wfloat-conversion reports.  NaN fails every comparison, and the infinities exceed
	 * DBL_MAX. */
	if (!(fabs(v) <= DBL_MAX)) {
		json_null(j);   /* JSON has no NaN or Infinity */
		return;
	}
	json_before_value(j);
	fprintf(j->out, "%.*f", decimals, v);
	json_after_value(j);
}

void json_bool(struct json *j, int v)
{
	json_before_value(j);
	fputs(v ? "true" : "false", j->out);
	json_after_value(j);
}

void json_null(struct json *j)
{
	json_before_value(j);
	fputs("null", j->out);
	json_after_value(j);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_kv_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_kv_double(struct json *j, const char *key, double v, int decimals)
{
	json_key(j, key);
	json_double(j, v, decimals);
}

void json_kv_bool(struct json *j, const char *key, int v)
{
	json_key(j, key);
	json_bool(j, v);
}

void json_kv_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_null(j);
}
