/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/command.c -- what a child is started with: its program found as CreateProcessW()
 * wants it, its command line quoted for the C runtime's parser, and its environment block.
 *
 * ports/windows/process.c starts the child (doc/architecture.md, ports/); this file only turns
 * hpshm's UTF-8 arguments into the UTF-16 texts of that call.  Everything it returns is
 * malloc()ed and the caller's to free.
 */
#include "windows/windows.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A growing wide string. */
struct command_text {
	wchar_t *p;   /* the text, NUL-terminated once anything was added */
	size_t   len; /* wchar_t used, without the NUL */
	size_t   cap; /* wchar_t allocated */
	int      bad; /* out of memory or unconvertible text: the text is unusable */
};

static void text_add(struct command_text *t, const wchar_t *s, size_t n)
{
	if (t->bad)
		return;
	if (t->len + n + 2 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		wchar_t *p;

		while (t->len + n + 2 > cap)
			cap *= 2;
		p = realloc(t->p, cap * sizeof(*p));
		if (p == NULL) {
			t->bad = 1;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n * sizeof(*s));
	t->len += n;
	t->p[t->len] = L'\0';
}

static void text_char(struct command_text *t, wchar_t c, size_t times)
{
	while (times-- > 0)
		text_add(t, &c, 1);
}

/*
 * Append one argument as the C runtime's command-line parser will give it back: as it is
 * when it has no blank and no quote, else in quotes, a quote escaped with a backslash, and
 * backslashes doubled only where a quote (an escaped one, or the closing one) follows them.
 */
static void command_quote(struct command_text *t, const char *arg)
{
	wchar_t *w = hpshm__win_wide_dup(arg);
	size_t slashes = 0;

	if (w == NULL) {
		t->bad = 1;
		return;
	}
	if (w[0] != L'\0' && wcspbrk(w, L" \t\n\v\"") == NULL) {
		text_add(t, w, wcslen(w));
		free(w);
		return;
	}
	text_char(t, L'"', 1);
	for (const wchar_t *c = w; *c; c++) {
		if (*c == L'\\') {
			slashes++;
			continue;
		}
		if (*c == L'"') {
			text_char(t, L'\\', slashes * 2 + 1);
			text_char(t, L'"', 1);
		} else {
			text_char(t, L'\\', slashes);
			text_char(t, *c, 1);
		}
		slashes = 0;
	}
	text_char(t, L'\\', slashes * 2);
	text_char(t, L'"', 1);
	free(w);
}

/* Does the file exist (and is it not a directory)? */
static int command_is_file(const wchar_t *path)
{
	DWORD a = GetFileAttributesW(path);

	return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

/*
 * The program's full path in full[0..len): a name with a directory part as it is (or with
 * ".exe" added, as CreateProcess would for a command line), a bare name through SearchPathW().
 * 0, or the GetLastError() code (ERROR_FILE_NOT_FOUND).
 */
DWORD hpshm__win_program_find(const char *path, wchar_t *full, size_t len)
{
	wchar_t *name = hpshm__win_wide_dup(path);
	DWORD n, code = ERROR_SUCCESS;

	if (name == NULL)
		return ERROR_INVALID_NAME;
	if (wcspbrk(name, L"\\/:") != NULL) {
		if (wcslen(name) + 5 > len) {
			code = ERROR_FILENAME_EXCED_RANGE;
		} else {
			wcscpy(full, name);
			if (!command_is_file(full)) {
				wcscat(full, L".exe");
				if (!command_is_file(full))
					code = ERROR_FILE_NOT_FOUND;
			}
		}
	} else {
		n = SearchPathW(NULL, name, L".exe", (DWORD)len, full, NULL);
		if (n == 0 || n >= len)
			code = n == 0 ? ERROR_FILE_NOT_FOUND : ERROR_FILENAME_EXCED_RANGE;
	}
	free(name);
	return code;
}

/* One "NAME=value" of a child's environment, for sorting. */
struct command_var {
	wchar_t *text;  /* "NAME=value" in UTF-16 */
	int      name;  /* characters of NAME: up to the first '=' after the first character, so
			 * that "=C:" of "=C:=C:\\dir" is a name */
	size_t   order; /* its place in envp: of two with the same name, the later is kept */
};

/* Windows' order of an environment block: by name, case-insensitively, in Unicode order
 * without regard to locale (CompareStringOrdinal); the same name by place in envp. */
static int command_var_order(const void *a, const void *b)
{
	const struct command_var *x = a, *y = b;
	int c = CompareStringOrdinal(x->text, x->name, y->text, y->name, TRUE);

	if (c != CSTR_EQUAL)
		return c == CSTR_LESS_THAN ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * The environment block of CreateProcessW(): every "NAME=value" converted from UTF-8, each
 * ending in a NUL, and one more NUL at the end.  Windows asks for a block sorted by name,
 * case-insensitively ("Changing Environment Variables" in its documentation), and names are
 * case-insensitive: of two entries with the same name only the later one goes in, as the
 * core appends HPSHM_TOKEN after the entries it copies.
 */
wchar_t *hpshm__win_environment_block(char *const envp[])
{
	struct command_text t = { NULL, 0, 0, 0 };
	static const wchar_t nul = L'\0';
	struct command_var *vars;
	size_t n = 0, k = 0;

	while (envp[n] != NULL)
		n++;
	vars = calloc(n + 1, sizeof(*vars));
	if (vars == NULL)
		return NULL;
	for (size_t i = 0; i < n && !t.bad; i++) {
		wchar_t *w = hpshm__win_wide_dup(envp[i]), *eq;

		if (w == NULL || wcslen(w) > INT32_MAX) {
			free(w);
			t.bad = 1;
		} else if (w[0] == L'\0') {
			free(w); /* an empty entry would end the block early */
		} else {
			eq = wcschr(w + 1, L'=');
			vars[k].text = w;
			vars[k].name = (int)(eq != NULL ? (size_t)(eq - w) : wcslen(w));
			vars[k].order = i;
			k++;
		}
	}
	if (!t.bad)
		qsort(vars, k, sizeof(*vars), command_var_order);
	for (size_t i = 0; i < k; i++) {
		if (i + 1 == k || CompareStringOrdinal(vars[i].text, vars[i].name, vars[i + 1].text, vars[i + 1].name,
						       TRUE) != CSTR_EQUAL)
			text_add(&t, vars[i].text, wcslen(vars[i].text) + 1);
		free(vars[i].text);
	}
	free(vars);
	text_add(&t, &nul, 1);
	text_add(&t, &nul, 1); /* an empty environment is two NULs */
	if (t.bad) {
		free(t.p);
		return NULL;
	}
	return t.p;
}

wchar_t *hpshm__win_command_line(char *const argv[])
{
	struct command_text t = { NULL, 0, 0, 0 };

	for (size_t i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			text_char(&t, L' ', 1);
		command_quote(&t, argv[i]);
	}
	if (t.bad || t.p == NULL) {
		free(t.p);
		return NULL;
	}
	return t.p;
}
