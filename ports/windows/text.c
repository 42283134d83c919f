/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/text.c -- UTF-8 to UTF-16 and back, and the system's wording of an error code.
 *
 * hpshm's text is UTF-8 everywhere; Windows' wide calls take UTF-16.  A string that is not
 * valid UTF-8 is converted from the ANSI code page instead, because that is what msvcrt puts
 * in argv and _environ of a program whose code page is not UTF-8; ASCII is the same in both.
 *
 * The environment is read wide too (GetEnvironmentStringsW(), GetEnvironmentVariableW()) and
 * handed to hpshm in UTF-8: msvcrt's getenv() and _environ are in the ANSI code page, where
 * "FOO=\u6570\u636e\u00e9" reads "FOO=???", so a child given that copy, or a token carrying a
 * segment's non-ASCII name, would get question marks.
 */
#include "windows/windows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Characters s needs in UTF-16 with its NUL, in the first code page that takes it; 0 if none. */
static int text_wide_len(const char *s, UINT *cp)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);

	if (n > 0) {
		*cp = CP_UTF8;
		return n;
	}
	*cp = CP_ACP;
	return MultiByteToWideChar(CP_ACP, 0, s, -1, NULL, 0);
}

int hpshm__win_wide(const char *s, wchar_t *out, size_t len)
{
	UINT cp;
	int n = text_wide_len(s, &cp);

	if (n <= 0 || (size_t)n > len)
		return -1;
	if (MultiByteToWideChar(cp, cp == CP_UTF8 ? MB_ERR_INVALID_CHARS : 0, s, -1, out, n) != n)
		return -1;
	return n - 1;
}

wchar_t *hpshm__win_wide_dup(const char *s)
{
	UINT cp;
	int n = text_wide_len(s, &cp);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = malloc((size_t)n * sizeof(*w));
	if (w == NULL)
		return NULL;
	if (MultiByteToWideChar(cp, cp == CP_UTF8 ? MB_ERR_INVALID_CHARS : 0, s, -1, w, n) != n) {
		free(w);
		return NULL;
	}
	return w;
}

char *hpshm__win_utf8(const wchar_t *w, char *out, size_t len)
{
	int room = len > INT32_MAX ? INT32_MAX : (int)len;
	int n;

	if (len == 0)
		return out;
	out[0] = '\0';
	n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, room, NULL, NULL);
	if (n > 0)
		return out;
	/* Too long: convert the longest prefix that fits, never splitting a character. */
	for (size_t chars = wcslen(w); chars > 0; chars--) {
		n = WideCharToMultiByte(CP_UTF8, 0, w, (int)chars, out, room - 1, NULL, NULL);
		if (n > 0) {
			out[n] = '\0';
			break;
		}
	}
	return out;
}

char *hpshm__win_strerror(DWORD code, char *buf, size_t len)
{
	wchar_t text[512];
	DWORD n;
	size_t end;

	n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS | FORMAT_MESSAGE_MAX_WIDTH_MASK,
			   NULL, code, MAKELANGID(LANG_NEUTRAL, SUBLANG_DEFAULT), text,
			   (DWORD)(sizeof(text) / sizeof(text[0])), NULL);
	if (n == 0) {
		snprintf(buf, len, "error %lu", (unsigned long)code);
		return buf;
	}
	hpshm__win_utf8(text, buf, len);
	/* The system's text ends in ". " or "\r\n": messages add their own punctuation. */
	end = strlen(buf);
	while (end > 0 && (buf[end - 1] == ' ' || buf[end - 1] == '\r' || buf[end - 1] == '\n' || buf[end - 1] == '.'))
		buf[--end] = '\0';
	return buf;
}

/* ---- the environment in UTF-8 ---- */

/*
 * Text handed out in place of getenv()'s and _environ's, kept for the life of the process.
 * Callers hold these pointers as they would hold getenv()'s, across other calls and in other
 * threads, so none may ever be freed; one copy of each distinct text is kept, and a program
 * whose environment does not change uses one.
 */
struct text_kept {
	struct text_kept *next; /* the one kept before */
	char            **vars; /* an environment: its "NAME=value" strings in text, NULL-terminated;
				 * NULL for one value */
	size_t            len;  /* bytes of text */
	char             *text; /* the value, or the environment's strings each with its NUL: the
				 * same allocation, right after this struct */
};

static struct text_kept *text_kept_list; /* everything kept, newest first */
static SRWLOCK           text_kept_lock = SRWLOCK_INIT;

/* The kept copy of text[0..len) (an environment when env), made if there is none: NULL when out of memory. */
static struct text_kept *text_keep(const char *text, size_t len, int env)
{
	struct text_kept *k;
	size_t n = 0;

	AcquireSRWLockExclusive(&text_kept_lock);
	for (k = text_kept_list; k != NULL; k = k->next)
		if ((k->vars != NULL) == env && k->len == len && memcmp(k->text, text, len) == 0)
			break;
	if (k == NULL && (k = malloc(sizeof(*k) + len)) != NULL) {
		k->text = (char *)(k + 1);
		memcpy(k->text, text, len);
		k->len = len;
		k->vars = NULL;
		for (size_t at = 0; env && at < len; at += strlen(k->text + at) + 1)
			n++;
		if (env && (k->vars = calloc(n + 1, sizeof(*k->vars))) == NULL) {
			free(k);
			k = NULL;
		} else {
			n = 0;
			for (size_t at = 0; env && at < len; at += strlen(k->text + at) + 1)
				k->vars[n++] = k->text + at;
			k->next = text_kept_list;
			text_kept_list = k;
		}
	}
	ReleaseSRWLockExclusive(&text_kept_lock);
	return k;
}

char **hpshm__win_environ_utf8(void)
{
	wchar_t *block = GetEnvironmentStringsW();
	struct text_kept *k = NULL;
	size_t wlen = 0;
	char *text;
	int n;

	if (block == NULL)
		return NULL;
	/* Every "NAME=value" with its NUL, up to the empty string that ends the block. */
	while (block[wlen] != L'\0')
		wlen += wcslen(block + wlen) + 1;
	if (wlen == 0 || wlen > INT32_MAX) {
		(void)FreeEnvironmentStringsW(block);
		return NULL;
	}
	n = WideCharToMultiByte(CP_UTF8, 0, block, (int)wlen, NULL, 0, NULL, NULL);
	text = n > 0 ? malloc((size_t)n) : NULL;
	if (text != NULL && WideCharToMultiByte(CP_UTF8, 0, block, (int)wlen, text, n, NULL, NULL) == n)
		k = text_keep(text, (size_t)n, 1);
	free(text);
	(void)FreeEnvironmentStringsW(block);
	return k != NULL ? k->vars : NULL;
}

const char *hpshm__win_getenv_utf8(const char *name)
{
	wchar_t wname[256], *value;
	const char *narrow = getenv(name), *out = narrow;
	struct text_kept *k;
	DWORD need, got;
	char *text = NULL;
	int n = 0;

	if (hpshm__win_wide(name, wname, sizeof(wname) / sizeof(wname[0])) < 0)
		return narrow;
	need = GetEnvironmentVariableW(wname, NULL, 0);
	if (need == 0)
		return NULL; /* not set (ERROR_ENVVAR_NOT_FOUND) */
	value = malloc((size_t)need * sizeof(*value));
	got = value != NULL ? GetEnvironmentVariableW(wname, value, need) : 0;
	/* Out of memory, or the value grew between the two calls: the C runtime's copy. */
	if (value != NULL && got < need)
		n = WideCharToMultiByte(CP_UTF8, 0, value, -1, NULL, 0, NULL, NULL);
	if (n > 0 && (text = malloc((size_t)n)) != NULL &&
	    WideCharToMultiByte(CP_UTF8, 0, value, -1, text, n, NULL, NULL) == n) {
		/* The C runtime's own copy where it says the same (ASCII, or what its code page holds). */
		if (narrow == NULL || strcmp(narrow, text) != 0)
			out = (k = text_keep(text, (size_t)n, 0)) != NULL ? k->text : narrow;
	}
	free(text);
	free(value);
	return out;
}
