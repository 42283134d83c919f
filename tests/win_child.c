/* SPDX-License-Identifier: MIT */
/*
 * tests/win_child.c -- the child tests/test_windows.c starts with hpshm__port_spawn() and
 * hpshm_child_spawn(), to see from inside what the child really got.
 *
 *   win_child exit N                  exit with status N
 *   win_child crash                   die of an access violation
 *   win_child handle H NAME           H (decimal) is the manual-reset event NAME  (inherited)
 *   win_child nohandle H NAME         H is not that event                         (not inherited)
 *   win_child reserved ADDR LEN       [ADDR, ADDR+LEN) (hex) is the reservation the parent
 *                                     made, and hpshm__port_reservation_release() frees it
 *   win_child args ARG...             ARG... are exactly win_child_args (tests/win_child.h)
 *   win_child utf8 TEXT               TEXT, as the UTF-16 command line has it, is WIN_CHILD_UTF8
 *   win_child env NAME VALUE          NAME is VALUE in this environment
 *   win_child attach                  attach the segment of HPSHM_TOKEN, check the word the
 *                                     parent wrote, write the reply, destroy its handle
 *   win_child open NAME ADDR          started with no token: open the named segment NAME, at
 *                                     ADDR (hex, reattach=exec) or where the system chooses
 *                                     (ADDR "-"); the report must say opened; check the word,
 *                                     write the reply, destroy its handle (which only detaches)
 *
 * Exit status: WIN_CHILD_OK, WIN_CHILD_MISMATCH (with what differed on stderr) or
 * WIN_CHILD_USAGE.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpshm.h"
#include "ports/windows/windows.h"

#include <shellapi.h>
#include "win_child.h"

static int mismatch(const char *what)
{
	fprintf(stderr, "win_child: %s\n", what);
	return WIN_CHILD_MISMATCH;
}

/*
 * Is h the manual-reset event called name?  A handle value alone proves nothing: the child's
 * own handles are numbered from the same small values.  So the event is opened by name, and
 * h must see it change: 1 yes, 0 no, -1 the event cannot be opened.
 */
static int child_same_event(HANDLE h, const char *name)
{
	wchar_t wname[256];
	HANDLE ev;
	DWORD flags;
	int same;

	if (hpshm__win_wide(name, wname, 256) < 0)
		return -1;
	ev = OpenEventW(EVENT_MODIFY_STATE | SYNCHRONIZE, FALSE, wname);
	if (ev == NULL)
		return -1;
	if (!GetHandleInformation(h, &flags)) {
		CloseHandle(ev);
		return 0;
	}
	ResetEvent(ev);
	same = WaitForSingleObject(h, 0) == WAIT_TIMEOUT;
	SetEvent(ev);
	same = same && WaitForSingleObject(h, 0) == WAIT_OBJECT_0;
	ResetEvent(ev);
	CloseHandle(ev);
	return same;
}

static int child_reserved(const char *addr_text, const char *len_text)
{
	MEMORY_BASIC_INFORMATION mbi;
	void *addr = (void *)(uintptr_t)strtoull(addr_text, NULL, 16);
	size_t len = (size_t)strtoull(len_text, NULL, 16);

	if (VirtualQuery(addr, &mbi, sizeof(mbi)) != sizeof(mbi))
		return mismatch("VirtualQuery failed");
	if (mbi.State != MEM_RESERVE || mbi.AllocationBase != addr || mbi.RegionSize != len)
		return mismatch("the range is not reserved as the parent asked");
	if (hpshm__port_reservation_release(addr, len) != 1)
		return mismatch("hpshm__port_reservation_release() did not release the parent's reservation");
	if (VirtualQuery(addr, &mbi, sizeof(mbi)) != sizeof(mbi) || mbi.State != MEM_FREE)
		return mismatch("the range is not free after the release");
	return WIN_CHILD_OK;
}

static int child_attach(void)
{
	hpshm_segment *seg;
	hpshm_error err;
	volatile uint32_t *word;

	if (hpshm_segment_attach_env(&seg, NULL, &err) < 0) {
		fprintf(stderr, "win_child: attach: %s (%s)\n", err.message, err.hint);
		return WIN_CHILD_MISMATCH;
	}
	word = hpshm_segment_address(seg);
	if (word[0] != WIN_CHILD_MAGIC) {
		hpshm_segment_destroy(seg);
		return mismatch("the segment does not hold the parent's word");
	}
	word[2] = WIN_CHILD_REPLY;
	hpshm_segment_destroy(seg);
	return WIN_CHILD_OK;
}

static int child_open(const char *name, const char *addr)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg;
	hpshm_error err;
	const hpshm_report *r;
	volatile uint32_t *word;
	int exec = strcmp(addr, "-") != 0;

	if (getenv("HPSHM_TOKEN") != NULL)
		return mismatch("started with a token: not a process apart");
	if (hpshm_config_new(&cfg) < 0 || (exec && hpshm_config_parse(cfg, "reattach=exec", &err) < 0))
		return WIN_CHILD_USAGE;
	if (hpshm_segment_open(&seg, name, cfg, &err) < 0) {
		fprintf(stderr, "win_child: open %s: %s: %s (%s)\n", name, hpshm_errname(err.code), err.message, err.hint);
		hpshm_config_free(cfg);
		return WIN_CHILD_MISMATCH;
	}
	hpshm_config_free(cfg);
	word = hpshm_segment_address(seg);
	r = hpshm_segment_report(seg);
	if (r->origin != HPSHM_ORIGIN_OPENED || hpshm_segment_is_owner(seg) != 0) {
		hpshm_segment_destroy(seg);
		return mismatch("the report does not say opened, or the opener is the owner");
	}
	if (exec && ((uintptr_t)word != (uintptr_t)strtoull(addr, NULL, 16) || r->relocated)) {
		hpshm_segment_destroy(seg);
		return mismatch("not opened at the creator's address under reattach=exec");
	}
	if (word[0] != WIN_CHILD_MAGIC) {
		hpshm_segment_destroy(seg);
		return mismatch("the segment does not hold the parent's word");
	}
	word[2] = WIN_CHILD_REPLY;
	return hpshm_segment_destroy(seg) < 0 ? mismatch("destroy failed") : WIN_CHILD_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return WIN_CHILD_USAGE;
	if (strcmp(argv[1], "exit") == 0 && argc == 3)
		return atoi(argv[2]);
	if (strcmp(argv[1], "crash") == 0) {
		volatile uintptr_t address = 0; /* volatile: the compiler cannot see that it is NULL */

		*(volatile int *)address = 1;
		return WIN_CHILD_MISMATCH;
	}
	if ((strcmp(argv[1], "handle") == 0 || strcmp(argv[1], "nohandle") == 0) && argc == 4) {
		int same = child_same_event((HANDLE)(intptr_t)strtoll(argv[2], NULL, 10), argv[3]);

		if (same < 0)
			return mismatch("the named event cannot be opened");
		return same == (strcmp(argv[1], "handle") == 0) ? WIN_CHILD_OK
								  : mismatch(same ? "the handle is the parent's event"
										  : "the handle is not the parent's event");
	}
	if (strcmp(argv[1], "reserved") == 0 && argc == 4)
		return child_reserved(argv[2], argv[3]);
	if (strcmp(argv[1], "args") == 0) {
		if ((size_t)(argc - 2) != WIN_CHILD_NARGS)
			return mismatch("the number of arguments differs");
		for (size_t i = 0; i < WIN_CHILD_NARGS; i++)
			if (strcmp(argv[2 + i], win_child_args[i]) != 0) {
				fprintf(stderr, "win_child: argument %zu is [%s], not [%s]\n", i, argv[2 + i],
					win_child_args[i]);
				return WIN_CHILD_MISMATCH;
			}
		return WIN_CHILD_OK;
	}
	if (strcmp(argv[1], "utf8") == 0 && argc == 3) {
		char text[64];
		int n = 0;
		wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &n);

		if (wargv == NULL || n != 3)
			return mismatch("the UTF-16 command line does not have 3 arguments");
		hpshm__win_utf8(wargv[2], text, sizeof(text));
		LocalFree(wargv);
		return strcmp(text, WIN_CHILD_UTF8) == 0 ? WIN_CHILD_OK : mismatch("the UTF-8 argument differs");
	}
	if (strcmp(argv[1], "env") == 0 && argc == 4) {
		const char *v = getenv(argv[2]);

		return v != NULL && strcmp(v, argv[3]) == 0 ? WIN_CHILD_OK : mismatch("the variable differs");
	}
	if (strcmp(argv[1], "attach") == 0)
		return child_attach();
	if (strcmp(argv[1], "open") == 0 && argc == 4)
		return child_open(argv[2], argv[3]);
	return WIN_CHILD_USAGE;
}
