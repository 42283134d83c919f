/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/objects.c -- listing named kernel objects: what `hpshm ls` reads on Windows.
 *
 * Win32 has no call that lists named sections.  The object manager keeps them in directories
 * of its own namespace, and ntdll's NtOpenDirectoryObject()/NtQueryDirectoryObject() read a
 * directory entry by entry (name and type), which is what WinObj and Sysinternals' handle
 * tools use.  Those calls are documented but come with no import library in every SDK, so
 * they are looked up in ntdll.dll (always loaded in every process) at each call, and a
 * system without them answers STATUS_NOT_IMPLEMENTED, as wine 8 does for the batch mode.
 *
 * Which directory a name is in:
 *   - Local\x is \Sessions\<n>\BaseNamedObjects\x for a process of session n > 0, and
 *     \BaseNamedObjects\x in session 0 (services), where Local\ and Global\ are one directory;
 *   - Global\x is \BaseNamedObjects\x.
 * A process in an AppContainer has a Local\ of its own (AppContainerNamedObjects) that this
 * does not look into: hpshm's named segments there are not listed.
 *
 * Names of more than 1023 characters are skipped (hpshm's are at most 206).
 *
 * NtQueryDirectoryObject() is asked for one entry per call (ReturnSingleEntry): Windows and
 * wine both implement it, while wine 8 answers the batch mode with STATUS_NOT_IMPLEMENTED.
 * The directory can change between calls: an entry may be seen twice or missed when objects
 * come and go meanwhile, which a listing of live objects cannot avoid and the caller (which
 * opens each object by name afterwards) tolerates.
 */
#include "windows/windows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "windows/sys.h"

#define OBJECTS_STATUS_NOT_IMPLEMENTED ((NTSTATUS)0xC0000002L)
#define OBJECTS_STATUS_NO_MEMORY       ((NTSTATUS)0xC0000017L)
#define OBJECTS_STATUS_NO_MORE_ENTRIES ((NTSTATUS)0x8000001AL)
#define OBJECTS_DIRECTORY_QUERY        0x0001
/* An entry's two strings are at most 64 KiB each; the record and its NULs come on top. */
#define OBJECTS_BUFFER                 (2 * 65536 + 256)
#define OBJECTS_PATH_MAX               64
#define OBJECTS_NAME_MAX               1024 /* longer names are skipped: no hpshm name is near it */
#define OBJECTS_TYPE_MAX               64   /* the longest type name is about 30 characters */

/* One entry as NtQueryDirectoryObject() returns it (OBJECT_DIRECTORY_INFORMATION). */
struct objects_entry {
	UNICODE_STRING name; /* the object's name within the directory */
	UNICODE_STRING type; /* its type's name: "Section", "Event" ... */
};

typedef NTSTATUS (NTAPI *objects_open_fn)(PHANDLE, ACCESS_MASK, POBJECT_ATTRIBUTES);
typedef NTSTATUS (NTAPI *objects_query_fn)(HANDLE, PVOID, ULONG, BOOLEAN, BOOLEAN, PULONG, PULONG);

/* ntdll's export name, or NULL.  Through a union, not a cast: ISO C has no conversion between
 * FARPROC and another function pointer type, and MSVC and GCC both warn on one. */
static FARPROC objects_ntdll(const char *name)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");

	return ntdll != NULL ? GetProcAddress(ntdll, name) : NULL;
}

NTSTATUS NTAPI hpshm__win_nt_open_directory(PHANDLE dir, ACCESS_MASK access, POBJECT_ATTRIBUTES attr)
{
	union {
		FARPROC         any;
		objects_open_fn open;
	} f;

	f.any = objects_ntdll("NtOpenDirectoryObject");
	return f.any != NULL ? f.open(dir, access, attr) : OBJECTS_STATUS_NOT_IMPLEMENTED;
}

NTSTATUS NTAPI hpshm__win_nt_query_directory(HANDLE dir, PVOID buf, ULONG len, BOOLEAN single, BOOLEAN restart,
					     PULONG context, PULONG ret_len)
{
	union {
		FARPROC          any;
		objects_query_fn query;
	} f;

	f.any = objects_ntdll("NtQueryDirectoryObject");
	return f.any != NULL ? f.query(dir, buf, len, single, restart, context, ret_len) : OBJECTS_STATUS_NOT_IMPLEMENTED;
}

/* The directory of namespace ns for this process, and whether Global\ is Local\'s. */
static void objects_directory(enum hpshm__win_namespace ns, wchar_t *buf, size_t len, int *same)
{
	DWORD session = 0;

	if (!ProcessIdToSessionId(GetCurrentProcessId(), &session))
		session = 0;
	*same = session == 0;
	if (ns == HPSHM__WIN_LOCAL && session != 0)
		(void)_snwprintf_s(buf, len, _TRUNCATE, L"\\Sessions\\%lu\\BaseNamedObjects", (unsigned long)session);
	else
		(void)_snwprintf_s(buf, len, _TRUNCATE, L"\\BaseNamedObjects");
}

/* A counted string as a NUL-terminated one in out[0..len): 0, or -1 if it does not fit. */
static int objects_copy(const UNICODE_STRING *s, wchar_t *out, size_t len)
{
	size_t n = s->Buffer != NULL ? s->Length / sizeof(wchar_t) : 0;

	if (n >= len)
		return -1;
	if (n > 0)
		memcpy(out, s->Buffer, n * sizeof(wchar_t));
	out[n] = L'\0';
	return 0;
}

long hpshm__win_objects_list(enum hpshm__win_namespace ns, hpshm__win_object_fn fn, void *user, int *same,
			     const char **call)
{
	wchar_t path[OBJECTS_PATH_MAX], name[OBJECTS_NAME_MAX], type[OBJECTS_TYPE_MAX];
	const struct objects_entry *e;
	UNICODE_STRING upath;
	OBJECT_ATTRIBUTES attr;
	ULONG context = 0, got = 0;
	NTSTATUS st;
	HANDLE dir;
	void *buf;

	objects_directory(ns, path, OBJECTS_PATH_MAX, same);
	upath.Buffer = path;
	upath.Length = (USHORT)(wcslen(path) * sizeof(wchar_t));
	upath.MaximumLength = upath.Length;
	InitializeObjectAttributes(&attr, &upath, OBJ_CASE_INSENSITIVE, NULL, NULL);
	*call = "NtOpenDirectoryObject";
	st = hpshm__win_sys.nt_open_directory_object(&dir, OBJECTS_DIRECTORY_QUERY, &attr);
	if (st < 0)
		return (long)st;
	buf = malloc(OBJECTS_BUFFER);
	if (buf == NULL) {
		(void)hpshm__win_sys.close_handle(dir);
		*call = "malloc";
		return (long)OBJECTS_STATUS_NO_MEMORY;
	}
	*call = "NtQueryDirectoryObject";
	for (BOOLEAN restart = TRUE;; restart = FALSE) {
		st = hpshm__win_sys.nt_query_directory_object(dir, buf, OBJECTS_BUFFER, TRUE, restart, &context, &got);
		if (st == OBJECTS_STATUS_NO_MORE_ENTRIES) {
			st = 0;
			break;
		}
		if (st < 0)
			break;
		e = buf;
		if (objects_copy(&e->name, name, OBJECTS_NAME_MAX) < 0 || objects_copy(&e->type, type, OBJECTS_TYPE_MAX) < 0)
			continue;
		if (fn(user, name, type) != 0)
			break;
	}
	free(buf);
	(void)hpshm__win_sys.close_handle(dir);
	return st < 0 ? (long)st : 0;
}
