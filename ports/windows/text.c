/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/text.c -- UTF-8 to UTF-16 and back, and the system's wording of an error code.
 *
 * hpshm's text is UTF-8 everywhere; Windows' wide calls take UTF-16.  A string that is not
 * valid UTF-8 is converted from the ANSI code page instead, because that is what msvcrt puts
 * in argv and _environ of a program whose code page is not UTF-8; ASCII is the same in both.
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
