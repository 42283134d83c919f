/* SPDX-License-Identifier: MIT */
/*
 * tests/test_windows_unicode.c -- text outside ASCII from end to end on Windows (natively or
 * under wine): the environment a child inherits, a program in a directory whose name the
 * ANSI code page lacks, a segment named in another script (issue 22, point 2).
 *
 * hpshm's text is UTF-8 and Windows' is UTF-16; msvcrt's argv, getenv() and _environ are in
 * the ANSI code page, where U+6570 becomes '?'.  So every check reads what arrived the way
 * Windows holds it: the child (tests/win_unicode_child.c) calls GetEnvironmentVariableW(),
 * GetEnvironmentStringsW() and reads its UTF-16 command line, and reports by its exit code.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "ports/windows/sys.h"
#include "ports/windows/windows.h"
#include "toolrun.h"
#include "win_unicode.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

#define MiB ((size_t)1 << 20)

static void fini(void)
{
	hpshm__win_sys_reset(); /* the sorting test replaces CreateProcessW */
	hpt_fixture_fini();
}

TestSuite(winunicode, .init = hpt_fixture_init, .fini = fini, .timeout = 120);

/* ---- helpers ---- */

/* The directory of this program, with its trailing backslash, in UTF-16. */
static void own_dir(wchar_t *dir, size_t len)
{
	DWORD n = GetModuleFileNameW(NULL, dir, (DWORD)len);
	wchar_t *slash;

	cr_assert(n > 0 && n < len, "GetModuleFileNameW: %lu", (unsigned long)GetLastError());
	slash = wcsrchr(dir, L'\\');
	cr_assert_not_null(slash);
	slash[1] = L'\0';
}

/* win_unicode_child.exe beside this program, in UTF-8. */
static const char *child_path(void)
{
	static char path[MAX_PATH * 4];
	wchar_t w[MAX_PATH];

	own_dir(w, MAX_PATH - 32);
	wcscat(w, L"win_unicode_child.exe");
	return hpshm__win_utf8(w, path, sizeof(path));
}

/* A 1 MiB segment a child can re-attach, named name (NULL: unnamed), word 0 set to UNI_MAGIC. */
static hpshm_segment *segment(const char *name)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_set(cfg, "huge_pages", "off", &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_set(cfg, "reattach", "exec", &err), 0, "%s", err.message);
	if (name != NULL)
		cr_assert_eq(hpshm_config_set(cfg, "name", name, &err), 0, "name %s: %s", name, err.message);
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s (%s)", err.message, err.hint);
	hpshm_config_free(cfg);
	((volatile uint32_t *)hpshm_segment_address(seg))[0] = UNI_MAGIC;
	return seg;
}

/* Run the child in mode (with arg, or NULL) through hpshm_child_spawn(): its exit status. */
static int spawn(const hpshm_segment *seg, const char *mode, const char *arg, char *const envp[])
{
	char *argv[4] = { (char *)(uintptr_t)child_path(), (char *)(uintptr_t)mode, (char *)(uintptr_t)arg, NULL };
	hpshm_child child;
	hpshm_error err;
	int status = -1;

	cr_assert_eq(hpshm_child_spawn(seg, argv[0], argv, envp, &child, &err), 0, "%s (%s)", err.message, err.hint);
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), 0, "%s", err.message);
	return status;
}

/* ---- the environment a child gets ---- */

Test(winunicode, a_child_spawned_with_our_environment_sees_a_non_ascii_value_unchanged)
{
	hpshm_segment *seg = segment(NULL);

	/* _wputenv_s sets it in the process (what a child inherits) and in msvcrt's copies. */
	cr_assert_eq(_wputenv_s(L"" UNI_VAR, UNI_VALUE_WIDE), 0);
	cr_assert_eq(spawn(seg, "env", NULL, NULL), UNI_OK, "the child saw another " UNI_VAR);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(_wputenv_s(L"" UNI_VAR, L""), 0);
}

Test(winunicode, a_variable_set_only_in_the_process_reaches_the_child)
{
	hpshm_segment *seg = segment(NULL);

	/* SetEnvironmentVariableW() leaves msvcrt's copy as it was: a child must still see it. */
	cr_assert(SetEnvironmentVariableW(L"" UNI_VAR, UNI_VALUE_WIDE));
	cr_assert_eq(spawn(seg, "env", NULL, NULL), UNI_OK, "the child saw another " UNI_VAR);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(SetEnvironmentVariableW(L"" UNI_VAR, NULL));
}

Test(winunicode, a_given_environment_reaches_the_child_as_the_same_characters)
{
	hpshm_segment *seg = segment(NULL);
	char root[MAX_PATH * 4] = "SystemRoot=", *envp[3];
	wchar_t w[MAX_PATH];

	cr_assert(GetEnvironmentVariableW(L"SystemRoot", w, MAX_PATH) > 0);
	hpshm__win_utf8(w, root + strlen(root), sizeof(root) - strlen(root));
	envp[0] = (char *)(uintptr_t)(UNI_VAR "=" UNI_VALUE_UTF8);
	envp[1] = root;
	envp[2] = NULL;
	cr_assert_eq(spawn(seg, "env", NULL, envp), UNI_OK, "the child saw another " UNI_VAR);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* The environment block hpshm_child_spawn() gave CreateProcessW(), copied by capture_create(). */
static wchar_t *captured;
static size_t   captured_len;

/* hpshm__win_sys.create_process: keep a copy of the block, then start the child for real.  (The
 * child's own block cannot show it: wine appends its WINE* variables to every new process's.) */
static BOOL WINAPI capture_create(LPCWSTR app, LPWSTR cmdline, LPSECURITY_ATTRIBUTES process_sa,
				  LPSECURITY_ATTRIBUTES thread_sa, BOOL inherit, DWORD flags, LPVOID env, LPCWSTR dir,
				  LPSTARTUPINFOW si, LPPROCESS_INFORMATION pi)
{
	const wchar_t *block = env;
	size_t len = 0;

	if (block != NULL && (flags & CREATE_UNICODE_ENVIRONMENT)) {
		while (block[len] != L'\0')
			len += wcslen(block + len) + 1;
		free(captured);
		captured = malloc((len + 1) * sizeof(*captured));
		if (captured != NULL)
			memcpy(captured, block, (len + 1) * sizeof(*captured));
		captured_len = len;
	}
	return CreateProcessW(app, cmdline, process_sa, thread_sa, inherit, flags, env, dir, si, pi);
}

/* Characters of the name of "NAME=value": up to the first '=' after the first character. */
static int name_len(const wchar_t *s)
{
	const wchar_t *eq = s[0] != L'\0' ? wcschr(s + 1, L'=') : NULL;

	return (int)(eq != NULL ? (size_t)(eq - s) : wcslen(s));
}

Test(winunicode, the_environment_block_is_sorted_by_name_as_windows_requires)
{
	hpshm_segment *seg = segment(NULL);
	const wchar_t *prev = NULL;
	char a[256], b[256];
	int tokens = 0;

	/* A name after HPSHM_TOKEN, and (hpt_zz_last) one in lower case. */
	cr_assert_eq(_putenv_s("hpt_zz_last", "1"), 0);
	hpshm__win_sys.create_process = capture_create;
	(void)spawn(seg, "env", NULL, NULL); /* what the child finds does not matter here */
	hpshm__win_sys_reset();
	cr_assert_eq(_putenv_s("hpt_zz_last", ""), 0);
	cr_assert_not_null(captured, "no environment block was given to CreateProcessW");
	for (const wchar_t *s = captured; *s != L'\0'; s += wcslen(s) + 1) {
		cr_expect(prev == NULL || CompareStringOrdinal(prev, name_len(prev), s, name_len(s), TRUE) == CSTR_LESS_THAN,
			  "[%s] comes before [%s]", hpshm__win_utf8(prev, a, sizeof(a)), hpshm__win_utf8(s, b, sizeof(b)));
		tokens += CompareStringOrdinal(s, name_len(s), L"HPSHM_TOKEN", -1, TRUE) == CSTR_EQUAL;
		prev = s;
	}
	cr_expect_eq(tokens, 1, "HPSHM_TOKEN is in the block %d times", tokens);
	free(captured);
	captured = NULL;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(winunicode, a_stale_token_under_another_case_is_replaced_by_the_segments)
{
	hpshm_segment *seg = segment(NULL);
	char *envp[] = { (char *)(uintptr_t)"hpshm_token=hpshm2:plain:stale", (char *)(uintptr_t)"HPT_A=1", NULL };

	/* Windows' names ignore case: the child must find the segment's token, not this one. */
	cr_assert_eq(spawn(seg, "attach", NULL, envp), UNI_OK, "the child did not attach the segment");
	cr_assert_eq(((volatile uint32_t *)hpshm_segment_address(seg))[2], UNI_REPLY);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* ---- the tool ---- */

/* Copy name from this program's directory into dir. */
static void copy_beside(const wchar_t *dir, const wchar_t *name)
{
	wchar_t from[MAX_PATH], to[MAX_PATH];

	own_dir(from, MAX_PATH - 64);
	wcscat(from, name);
	cr_assert_lt(wcslen(dir) + wcslen(name), MAX_PATH - 1);
	wcscpy(to, dir);
	wcscat(to, name);
	cr_assert(CopyFileW(from, to, FALSE), "CopyFileW %ls: %lu", name, (unsigned long)GetLastError());
}

#ifdef HPT_ATTACH_CHILD
Test(winunicode, hpshm_run_starts_a_program_in_a_directory_named_outside_the_code_page)
{
	static const wchar_t *const files[] = { L"" HPT_ATTACH_CHILD, L"" HPT_LIBRARY_DLL };
	wchar_t dir[MAX_PATH], file[MAX_PATH];
	char path[MAX_PATH * 4];
	struct hpt_run *r;
	size_t used;
	int status;

	cr_assert(GetTempPathW(MAX_PATH - 64, dir) > 0, "GetTempPathW: %lu", (unsigned long)GetLastError());
	hpshm__win_utf8(dir, path, sizeof(path));
	used = strlen(path);
	snprintf(path + used, sizeof(path) - used, "hpt-" UNI_LETTERS_UTF8 "-%lu", (unsigned long)GetCurrentProcessId());
	cr_assert_geq(hpshm__win_wide(path, dir, MAX_PATH - 64), 0, "%s", path);
	cr_assert(CreateDirectoryW(dir, NULL), "CreateDirectoryW: %lu", (unsigned long)GetLastError());
	wcscat(dir, L"\\");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		copy_beside(dir, files[i]);
	wcscpy(file, dir);
	wcscat(file, files[0]);
	hpshm__win_utf8(file, path, sizeof(path));
	r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "1MiB", "--config", "huge_pages=off", "--", path, "--quiet",
		     NULL);
	status = r->status;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		wcscpy(file, dir);
		wcscat(file, files[i]);
		DeleteFileW(file);
	}
	cr_assert(RemoveDirectoryW(dir), "RemoveDirectoryW: %lu", (unsigned long)GetLastError());
	cr_assert_eq(status, 0, "hpshm run -- %s: exit %d\n%s", path, status, r->err);
}
#else
Test(winunicode, hpshm_run_starts_a_program_in_a_directory_named_outside_the_code_page)
{
	HPT_SKIP("built without the examples (HPSHM_BUILD_EXAMPLES=OFF): no attach_child to start");
}
#endif

/* ---- a segment named in another script ---- */

struct seen {
	const char *name;  /* the name looked for */
	int         times; /* how often hpshm_objects_list() gave it */
	int         alive; /* its state */
};

static int seen_one(void *user, const hpshm_object *obj)
{
	struct seen *s = user;

	if (strcmp(obj->name, s->name) == 0) {
		s->times++;
		s->alive = obj->state == HPSHM_OBJECT_ALIVE;
	}
	return 0;
}

Test(winunicode, a_segment_named_outside_ascii_is_created_listed_and_re_attached)
{
	char name[64];
	struct seen s = { name, 0, 0 };
	volatile uint32_t *word;
	struct hpt_run *r;
	hpshm_segment *seg;
	hpshm_error err;

	snprintf(name, sizeof(name), "hpt-" UNI_LETTERS_UTF8 "-%lu", (unsigned long)GetCurrentProcessId());
	seg = segment(name);
	word = hpshm_segment_address(seg);
	cr_assert_geq(hpshm_objects_list(seen_one, &s, &err), 0, "%s", err.message);
	cr_assert_eq(s.times, 1, "hpshm_objects_list() gave %s %d times", name, s.times);
	cr_assert(s.alive);
	r = hpt_tool(HPSHM_TOOL_PATH, "ls", NULL);
	cr_assert_eq(r->status, 0, "hpshm ls: %s", r->err);
	cr_assert_not_null(strstr(r->out, name), "hpshm ls does not show %s:\n%s", name, r->out);
	/* A child started with the token re-attaches it, the name travelling in HPSHM_TOKEN. */
	cr_assert_eq(spawn(seg, "attach", NULL, NULL), UNI_OK, "the child did not re-attach %s", name);
	cr_assert_eq(word[2], UNI_REPLY);
	/* A process apart opens it by the name, given on its command line. */
	word[2] = 0;
	cr_assert_eq(spawn(seg, "open", name, NULL), UNI_OK, "the child did not open %s", name);
	cr_assert_eq(word[2], UNI_REPLY);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(winunicode, a_name_takes_utf8_letters_and_refuses_what_is_not_utf8)
{
	static const char *const good[] = { "hpt-" UNI_LETTERS_UTF8, "caf\xc3\xa9", "\xf0\x9f\x90\x8d" };
	static const char *const bad[] = {
		"hpt-\xe6\x95",     /* cut inside a character */
		"hpt-\xc0\xaf",     /* an overlong '/' */
		"hpt-\xed\xa0\x80", /* a surrogate */
		"hpt-\xc2\x85",     /* a C1 control (NEL) */
		"hpt-\xc2\xa0",     /* a no-break space */
		"hpt-\xff",         /* never in UTF-8 */
	};
	hpshm_config *cfg = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_eq(hpshm_config_set(cfg, "name", good[i], &err), 0, "good name %zu refused: %s", i, err.message);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(hpshm_config_set(cfg, "name", bad[i], &err), HPSHM_EVALUE, "bad name %zu accepted", i);
	hpshm_config_free(cfg);
}
