/* SPDX-License-Identifier: MIT */
/*
 * tools/envelope.c -- the one shape every `--json` output has (doc/schema/envelope.json):
 *
 *   {"ok": true|false, "version": "0.2.0", "command": "check", "result": {...} | null,
 *    "error": null | {"code": -N, "name": "HPSHM_E...", "message": "...", "hint": "...",
 *                     "key": "...", "call": "...", "provider": "...", "errno": N}}
 *
 * The error record has the fields of the library's hpshm_error, so a script reads a refusal
 * of the tool and one of the library alike.  A usage error or a bad configuration prints the
 * envelope too (result null), which is why the dispatch decides "JSON or not" before the
 * command parses its options (tool_json_set): `hpshm check --bogus --json` must not print
 * prose on stdout to a script waiting for JSON.  Exactly one document is printed per run:
 * after the first, later failures only speak on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "tool.h"

static const char *json_cmd;   /* the command printing JSON, NULL when it prints text */
static int json_printed;        /* 1 once its one document is out */

void tool_json_set(const char *cmd)
{
	json_cmd = cmd;
	json_printed = 0;
}

int tool_json_on(void)
{
	return json_cmd != NULL;
}

void tool_json_open(struct json *j, int ok)
{
	json_begin(j, stdout, 1);
	json_object_open(j);
	json_kv_bool(j, "ok", ok);
	json_kv_string(j, "version", hpshm_version());
	json_kv_string(j, "command", json_cmd ? json_cmd : "");
	json_key(j, "result");
}

void tool_json_error_record(struct json *j, int code, const hpshm_error *err)
{
	json_object_open(j);
	json_kv_int(j, "code", code);
	json_kv_string(j, "name", hpshm_errname(code));
	json_kv_string(j, "message", err && err->message[0] ? err->message : hpshm_strerror(code));
	json_kv_string(j, "hint", err ? err->hint : "");
	json_kv_string(j, "key", err ? err->key : "");
	json_kv_string(j, "call", err ? err->call : "");
	json_kv_string(j, "provider", err ? err->provider : "");
	json_kv_int(j, "errno", err ? err->sys_errno : 0);
	json_object_close(j);
}

int tool_json_close(struct json *j, int code, const hpshm_error *err)
{
	json_key(j, "error");
	if (code == 0)
		json_null(j);
	else
		tool_json_error_record(j, code, err);
	json_object_close(j);
	json_printed = 1;
	return json_end(j);
}

void tool_json_fail(int code, const hpshm_error *err)
{
	struct json j;

	if (!json_cmd || json_printed)
		return;
	tool_json_open(&j, 0);
	json_null(&j);
	tool_json_close(&j, code ? code : HPSHM_EINVAL, err);
	fflush(stdout);
}

/*
 * The option or key a failure message starts with, for the error's key: "bad --huge-page-size
 * '16GiB': ..." and "--resize-to 1G: ..." name the option, "huge_page_size=1G: ..." the
 * configuration key; "" otherwise (the message is prose about the machine).
 */
static void fail_key(const char *msg, char *key, size_t len)
{
	static const char word[] = "abcdefghijklmnopqrstuvwxyz0123456789_.-";
	size_t n;

	key[0] = '\0';
	if (strncmp(msg, "bad --", 6) == 0)
		msg += 4;
	n = strspn(msg, word);
	if (n > 2 && (strncmp(msg, "--", 2) == 0 || msg[n] == '='))
		snprintf(key, len, "%.*s", (int)n, msg);
}

/*
 * The option a usage message is about, for the error's key: the option or key it starts with
 * (fail_key), else its first "--word" (the option named or the one missing its value), else
 * the first quoted argument ('bogus'); "" if none.
 */
static void usage_key(const char *msg, char *key, size_t len)
{
	const char *p = strstr(msg, "--"), *q;
	size_t n;

	fail_key(msg, key, len);
	if (key[0])
		return;
	if (p) {
		n = strspn(p, "-abcdefghijklmnopqrstuvwxyz0123456789");
	} else if ((p = strchr(msg, '\'')) != NULL && (q = strchr(p + 1, '\'')) != NULL) {
		p++;
		n = (size_t)(q - p);
	} else {
		return;
	}
	snprintf(key, len, "%.*s", (int)n, p);
}

/* The error record of a failure the tool found itself: msg, hint, and the key key() reads in msg. */
static void json_error(int code, const char *msg, const char *hint, void (*key)(const char *, char *, size_t))
{
	hpshm_error err;

	if (!json_cmd || json_printed)
		return;
	memset(&err, 0, sizeof(err));
	err.code = code;
	snprintf(err.message, sizeof(err.message), "%s", msg);
	if (hint)
		snprintf(err.hint, sizeof(err.hint), "%s", hint);
	key(msg, err.key, sizeof(err.key));
	tool_json_fail(code, &err);
}

void tool_json_usage(const char *msg, const char *hint)
{
	json_error(HPSHM_EINVAL, msg, hint, usage_key);
}

void tool_json_message(int code, const char *msg)
{
	json_error(code, msg, NULL, fail_key);
}
