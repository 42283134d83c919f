/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/sys.c -- the Windows system call table backends and ports call through
 * (hpshm__win_sys), and the file open hpshm uses for its own files.
 *
 * Every entry starts out as the real call; a test replaces one entry to make it fail with the
 * GetLastError() code it wants and hpshm__win_sys_reset() puts the real calls back.
 *
 * fopen() is wrapped: a file hpshm reads (a configuration file) must not be inherited by a
 * program the server starts.  msvcrt's fopen() makes an inheritable handle, and the "N" mode
 * letter that prevents it is not in every C runtime, so the wrapper opens the file with
 * CreateFileW() and a NULL security descriptor (not inheritable), and turns the handle into a
 * stream with _open_osfhandle() and _fdopen().  The path is UTF-8 (ports/windows/windows.h).
 */
#include "windows/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <psapi.h>
#include <string.h>

static FILE *sys_fopen(const char *path, const char *mode)
{
	wchar_t wpath[MAX_PATH * 4];
	DWORD access, disposition;
	HANDLE h;
	int flags, fd;
	FILE *f;

	switch (mode[0]) {
	case 'r':
		access = GENERIC_READ | (strchr(mode, '+') ? GENERIC_WRITE : 0);
		disposition = OPEN_EXISTING;
		flags = strchr(mode, '+') ? _O_RDWR : _O_RDONLY;
		break;
	case 'w':
		access = GENERIC_WRITE | (strchr(mode, '+') ? GENERIC_READ : 0);
		disposition = CREATE_ALWAYS;
		flags = strchr(mode, '+') ? _O_RDWR : _O_WRONLY;
		break;
	case 'a':
		access = GENERIC_WRITE | (strchr(mode, '+') ? GENERIC_READ : 0);
		disposition = OPEN_ALWAYS;
		flags = (strchr(mode, '+') ? _O_RDWR : _O_WRONLY) | _O_APPEND;
		break;
	default:
		errno = EINVAL;
		return NULL;
	}
	flags |= strchr(mode, 'b') ? _O_BINARY : _O_TEXT;
	if (hpshm__win_wide(path, wpath, sizeof(wpath) / sizeof(wpath[0])) < 0) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	h = CreateFileW(wpath, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, disposition,
			FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		switch (GetLastError()) {
		case ERROR_FILE_NOT_FOUND:
		case ERROR_PATH_NOT_FOUND:
			errno = ENOENT;
			break;
		case ERROR_ACCESS_DENIED:
		case ERROR_SHARING_VIOLATION:
			errno = EACCES;
			break;
		default:
			errno = EIO;
			break;
		}
		return NULL;
	}
	fd = _open_osfhandle((intptr_t)h, flags);
	if (fd < 0) {
		CloseHandle(h);
		errno = EMFILE;
		return NULL;
	}
	f = _fdopen(fd, mode);
	if (f == NULL) {
		int saved = errno;

		_close(fd); /* closes the handle too */
		errno = saved;
	}
	return f;
}

/*
 * The real calls, written once: the table is initialised from this list and reset to it, so
 * the two can never disagree.  QueryWorkingSetEx is K32QueryWorkingSetEx in kernel32 (psapi.h
 * with PSAPI_VERSION 2, Windows 7 and later), so no psapi.dll is needed.
 */
#define WIN_SYS_REAL_CALLS                                         \
	{                                                          \
		.create_file_mapping     = CreateFileMappingW,     \
		.open_file_mapping       = OpenFileMappingW,       \
		.map_view_of_file_ex     = MapViewOfFileEx,        \
		.unmap_view_of_file      = UnmapViewOfFile,        \
		.close_handle            = CloseHandle,            \
		.get_handle_information  = GetHandleInformation,   \
		.set_handle_information  = SetHandleInformation,   \
		.virtual_alloc           = VirtualAlloc,           \
		.virtual_free            = VirtualFree,            \
		.virtual_query           = VirtualQuery,           \
		.virtual_alloc_ex        = VirtualAllocEx,         \
		.get_large_page_minimum  = GetLargePageMinimum,    \
		.open_process_token      = OpenProcessToken,       \
		.get_token_information   = GetTokenInformation,    \
		.lookup_privilege_value  = LookupPrivilegeValueW,  \
		.adjust_token_privileges = AdjustTokenPrivileges,  \
		.query_working_set_ex    = QueryWorkingSetEx,      \
		.create_process          = CreateProcessW,         \
		.open_process            = OpenProcess,            \
		.get_exit_code_process   = GetExitCodeProcess,     \
		.get_process_times       = GetProcessTimes,        \
		.wait_for_single_object  = WaitForSingleObject,    \
		.resume_thread           = ResumeThread,           \
		.terminate_process       = TerminateProcess,       \
		.virtual_alloc2          = hpshm__win_virtual_alloc2,    \
		.map_view_of_file3       = hpshm__win_map_view_of_file3, \
		.fopen                   = sys_fopen,              \
		.get_numa_highest_node_number      = GetNumaHighestNodeNumber,     \
		.get_numa_available_memory_node_ex = GetNumaAvailableMemoryNodeEx, \
		.get_numa_node_processor_mask_ex   = GetNumaNodeProcessorMaskEx,   \
		.get_numa_processor_node_ex        = GetNumaProcessorNodeEx,       \
		.set_thread_group_affinity         = SetThreadGroupAffinity,       \
		.set_thread_ideal_processor_ex     = SetThreadIdealProcessorEx,    \
		.nt_open_directory_object  = hpshm__win_nt_open_directory,  \
		.nt_query_directory_object = hpshm__win_nt_query_directory, \
	}

struct hpshm__win_syscalls hpshm__win_sys = WIN_SYS_REAL_CALLS;

void hpshm__win_sys_reset(void)
{
	static const struct hpshm__win_syscalls real = WIN_SYS_REAL_CALLS;

	hpshm__win_sys = real;
	hpshm__win_placeholder_reset();
}

FILE *hpshm__port_fopen(const char *path, const char *mode)
{
	return hpshm__win_sys.fopen(path, mode);
}
