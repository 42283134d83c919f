/* SPDX-License-Identifier: MIT */
/*
 * tests/win_spawn_child.c -- the programs tests/test_windows_spawn.c starts to see what a
 * server's worker really gets: a prepared child, a worker tied to its server, extra handles.
 *
 *   win_spawn_child stdin-attach ADDR   read a token from standard input, attach it, check it
 *                                       is mapped at ADDR (hex) and holds the parent's word,
 *                                       write the reply, destroy the handle
 *   win_spawn_child pipe H TEXT         write TEXT to the pipe handle H (decimal), inherited
 *   win_spawn_child sleep               sleep a minute: a worker that only lives
 *   win_spawn_child server H KILL       a server: create a segment, start "sleep" with
 *                                       hpshm_child_spawn_ex() (KILL 1: with
 *                                       HPSHM_SPAWN_KILL_WITH_PARENT), write the worker's pid
 *                                       as text to the pipe handle H, then sleep until ended
 *
 * Exit status: WIN_CHILD_OK, WIN_CHILD_MISMATCH (what differed on stderr) or WIN_CHILD_USAGE.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpshm.h"
#include "ports/windows/windows.h"
#include "win_child.h"

#define SPAWN_SLEEP_MS 60000 /* longer than any test waits for a worker to end */

static int mismatch(const char *what)
{
	fprintf(stderr, "win_spawn_child: %s\n", what);
	return WIN_CHILD_MISMATCH;
}

static int child_stdin_attach(const char *addr)
{
	char token[HPSHM_TOKEN_MAX];
	hpshm_segment *seg;
	hpshm_error err;
	volatile uint32_t *word;
	size_t n;

	if (fgets(token, sizeof(token), stdin) == NULL)
		return mismatch("no token on standard input");
	n = strcspn(token, "\r\n");
	token[n] = '\0';
	if (hpshm_segment_attach(&seg, token, NULL, &err) < 0) {
		fprintf(stderr, "win_spawn_child: attach: %s (%s)\n", err.message, err.hint);
		return WIN_CHILD_MISMATCH;
	}
	word = hpshm_segment_address(seg);
	if ((uintptr_t)word != (uintptr_t)strtoull(addr, NULL, 16)) {
		hpshm_segment_destroy(seg);
		return mismatch("the segment is not at the creator's address");
	}
	if (word[0] != WIN_CHILD_MAGIC) {
		hpshm_segment_destroy(seg);
		return mismatch("the segment does not hold the parent's word");
	}
	word[2] = WIN_CHILD_REPLY;
	return hpshm_segment_destroy(seg) < 0 ? mismatch("destroy failed") : WIN_CHILD_OK;
}

static int child_pipe(const char *handle, const char *text)
{
	HANDLE h = (HANDLE)(intptr_t)strtoll(handle, NULL, 10);
	DWORD done = 0;

	if (!WriteFile(h, text, (DWORD)strlen(text), &done, NULL) || done != strlen(text))
		return mismatch("cannot write to the pipe handle: not inherited");
	return WIN_CHILD_OK;
}

/* Start this program's "sleep" with the segment, tied or not to us; tell the test its pid. */
static int child_server(const char *handle, const char *kill)
{
	char self[MAX_PATH * 4], line[32], sleep_arg[] = "sleep";
	wchar_t w[MAX_PATH * 2];
	char *argv[] = { self, sleep_arg, NULL };
	hpshm_spawn_options opt;
	hpshm_config *cfg = NULL;
	hpshm_segment *seg;
	hpshm_child child;
	hpshm_error err;
	DWORD n = GetModuleFileNameW(NULL, w, MAX_PATH * 2), done = 0;

	if (n == 0 || n >= MAX_PATH * 2)
		return mismatch("GetModuleFileNameW failed");
	hpshm__win_utf8(w, self, sizeof(self));
	if (hpshm_config_new(&cfg) < 0 || hpshm_config_parse(cfg, "huge_pages=off,reattach=exec", &err) < 0 ||
	    hpshm_segment_create(&seg, 1 << 20, cfg, &err) < 0)
		return mismatch("cannot create the server's segment");
	memset(&opt, 0, sizeof(opt));
	opt.version = HPSHM_SPAWN_OPTIONS_VERSION;
	opt.flags = strcmp(kill, "1") == 0 ? HPSHM_SPAWN_KILL_WITH_PARENT : 0;
	if (hpshm_child_spawn_ex(seg, self, argv, NULL, &opt, &child, &err) < 0) {
		fprintf(stderr, "win_spawn_child: spawn: %s (%s)\n", err.message, err.hint);
		return WIN_CHILD_MISMATCH;
	}
	snprintf(line, sizeof(line), "%lld\n", child.pid);
	if (!WriteFile((HANDLE)(intptr_t)strtoll(handle, NULL, 10), line, (DWORD)strlen(line), &done, NULL))
		return mismatch("cannot write the worker's pid");
	Sleep(SPAWN_SLEEP_MS);
	return WIN_CHILD_OK;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "stdin-attach") == 0)
		return child_stdin_attach(argv[2]);
	if (argc == 4 && strcmp(argv[1], "pipe") == 0)
		return child_pipe(argv[2], argv[3]);
	if (argc == 2 && strcmp(argv[1], "sleep") == 0) {
		Sleep(SPAWN_SLEEP_MS);
		return WIN_CHILD_OK;
	}
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return child_server(argv[2], argv[3]);
	return WIN_CHILD_USAGE;
}
