/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/sys.h -- the Windows system calls backends and ports make, through one
 * overridable table.
 *
 * The Windows counterpart of ports/posix/sys.h: backends and ports call
 * hpshm__win_sys.map_view_of_file_ex(...) rather than MapViewOfFileEx(...), so a test can
 * replace one entry with a function that calls SetLastError() with the code it wants and
 * fails, and check what hpshm makes of ERROR_NOT_ALL_ASSIGNED (1300), ERROR_PRIVILEGE_NOT_HELD
 * (1314), ERROR_INVALID_PARAMETER (87), ERROR_NO_SYSTEM_RESOURCES (1450),
 * ERROR_INVALID_ADDRESS (487) or ERROR_ALREADY_EXISTS (183) without a machine that produces
 * them.  The table starts out pointing at the real calls; hpshm__win_sys_reset() puts them
 * back.  Only tests write to it, and only while no segment is being created.
 *
 * The members are named after the calls in lower case with underscores, because several
 * Windows names are macros (QueryWorkingSetEx is K32QueryWorkingSetEx with PSAPI_VERSION 2,
 * and the A/W pairs) that would rename a member spelled the same way.  Every member has the
 * call's exact prototype and calling convention (WINAPI matters on 32-bit x86), so the
 * compiler checks each entry against the SDK's declaration.
 */
#ifndef HPSHM_PORTS_WINDOWS_SYS_H
#define HPSHM_PORTS_WINDOWS_SYS_H

#include <stdio.h>

#include "windows/windows.h"

#include <winternl.h>

struct hpshm__win_syscalls {
	HANDLE (WINAPI *create_file_mapping)(HANDLE file, LPSECURITY_ATTRIBUTES sa, DWORD protect, DWORD size_high,
					     DWORD size_low, LPCWSTR name);
	HANDLE (WINAPI *open_file_mapping)(DWORD access, BOOL inherit, LPCWSTR name);
	LPVOID (WINAPI *map_view_of_file_ex)(HANDLE mapping, DWORD access, DWORD offset_high, DWORD offset_low,
					     SIZE_T len, LPVOID base);
	BOOL   (WINAPI *unmap_view_of_file)(LPCVOID base);
	BOOL   (WINAPI *close_handle)(HANDLE h);
	BOOL   (WINAPI *get_handle_information)(HANDLE h, LPDWORD flags);
	BOOL   (WINAPI *set_handle_information)(HANDLE h, DWORD mask, DWORD flags);
	LPVOID (WINAPI *virtual_alloc)(LPVOID addr, SIZE_T len, DWORD type, DWORD protect);
	BOOL   (WINAPI *virtual_free)(LPVOID addr, SIZE_T len, DWORD type);
	SIZE_T (WINAPI *virtual_query)(LPCVOID addr, PMEMORY_BASIC_INFORMATION info, SIZE_T len);
	LPVOID (WINAPI *virtual_alloc_ex)(HANDLE process, LPVOID addr, SIZE_T len, DWORD type, DWORD protect);
	SIZE_T (WINAPI *get_large_page_minimum)(void);
	BOOL   (WINAPI *open_process_token)(HANDLE process, DWORD access, PHANDLE token);
	BOOL   (WINAPI *get_token_information)(HANDLE token, TOKEN_INFORMATION_CLASS cls, LPVOID info, DWORD len,
					       PDWORD ret_len);
	BOOL   (WINAPI *lookup_privilege_value)(LPCWSTR system, LPCWSTR name, PLUID luid);
	BOOL   (WINAPI *adjust_token_privileges)(HANDLE token, BOOL disable_all, PTOKEN_PRIVILEGES state, DWORD len,
						 PTOKEN_PRIVILEGES previous, PDWORD ret_len);
	BOOL   (WINAPI *query_working_set_ex)(HANDLE process, PVOID info, DWORD len);
	BOOL   (WINAPI *create_process)(LPCWSTR app, LPWSTR cmdline, LPSECURITY_ATTRIBUTES process_sa,
					LPSECURITY_ATTRIBUTES thread_sa, BOOL inherit, DWORD flags, LPVOID env, LPCWSTR dir,
					LPSTARTUPINFOW si, LPPROCESS_INFORMATION pi);
	HANDLE (WINAPI *open_process)(DWORD access, BOOL inherit, DWORD pid);
	BOOL   (WINAPI *get_exit_code_process)(HANDLE process, LPDWORD code);
	BOOL   (WINAPI *get_process_times)(HANDLE process, LPFILETIME creation, LPFILETIME exit, LPFILETIME kernel,
					   LPFILETIME user);
	DWORD  (WINAPI *wait_for_single_object)(HANDLE h, DWORD ms);
	DWORD  (WINAPI *resume_thread)(HANDLE thread);
	BOOL   (WINAPI *terminate_process)(HANDLE process, UINT code);
	/* Windows 10 1803's placeholder calls, found in kernelbase.dll at each call: the real
	 * entries answer ERROR_CALL_NOT_IMPLEMENTED where it lacks them (ports/windows/placeholder.c).
	 * The extended parameters, always NULL here, are declared void * because older SDKs
	 * lack MEM_EXTENDED_PARAMETER. */
	PVOID  (WINAPI *virtual_alloc2)(HANDLE process, PVOID addr, SIZE_T len, ULONG type, ULONG protect, PVOID ext,
					ULONG n);
	PVOID  (WINAPI *map_view_of_file3)(HANDLE mapping, HANDLE process, PVOID addr, ULONG64 offset, SIZE_T len,
					   ULONG type, ULONG protect, PVOID ext, ULONG n);
	FILE  *(*fopen)(const char *path, const char *mode); /* not inherited: see hpshm__port_fopen() */
	/* NUMA (ports/windows/numa.c, populate.c): the nodes, and placing a populate's threads. */
	BOOL   (WINAPI *get_numa_highest_node_number)(PULONG highest);
	BOOL   (WINAPI *get_numa_available_memory_node_ex)(USHORT node, PULONGLONG bytes);
	BOOL   (WINAPI *get_numa_node_processor_mask_ex)(USHORT node, PGROUP_AFFINITY mask);
	BOOL   (WINAPI *get_numa_processor_node_ex)(PPROCESSOR_NUMBER processor, PUSHORT node);
	BOOL   (WINAPI *set_thread_group_affinity)(HANDLE thread, const GROUP_AFFINITY *affinity,
						   PGROUP_AFFINITY previous);
	BOOL   (WINAPI *set_thread_ideal_processor_ex)(HANDLE thread, PPROCESSOR_NUMBER ideal,
						       PPROCESSOR_NUMBER previous);
	/* ntdll's object directory calls, which no SDK import library is sure to have: the real
	 * entries find them in ntdll.dll at each call and answer STATUS_NOT_IMPLEMENTED when it
	 * lacks them (ports/windows/objects.c). */
	NTSTATUS (NTAPI *nt_open_directory_object)(PHANDLE dir, ACCESS_MASK access, POBJECT_ATTRIBUTES attr);
	NTSTATUS (NTAPI *nt_query_directory_object)(HANDLE dir, PVOID buf, ULONG len, BOOLEAN single, BOOLEAN restart,
						    PULONG context, PULONG ret_len);
};

extern struct hpshm__win_syscalls hpshm__win_sys;

/* The real entries for ntdll's directory calls (ports/windows/objects.c). */
NTSTATUS NTAPI hpshm__win_nt_open_directory(PHANDLE dir, ACCESS_MASK access, POBJECT_ATTRIBUTES attr);
NTSTATUS NTAPI hpshm__win_nt_query_directory(HANDLE dir, PVOID buf, ULONG len, BOOLEAN single, BOOLEAN restart,
					     PULONG context, PULONG ret_len);

/* The real entries for the placeholder calls (ports/windows/placeholder.c). */
PVOID WINAPI hpshm__win_virtual_alloc2(HANDLE process, PVOID addr, SIZE_T len, ULONG type, ULONG protect, PVOID ext,
				       ULONG n);
PVOID WINAPI hpshm__win_map_view_of_file3(HANDLE mapping, HANDLE process, PVOID addr, ULONG64 offset, SIZE_T len,
					  ULONG type, ULONG protect, PVOID ext, ULONG n);

/*
 * Reserve [addr, addr+len) in process (a suspended child, or this process): a placeholder
 * where VirtualAlloc2() makes one, else a plain reservation (an older Windows, wine; the
 * first refusal is remembered for the process).  The address reserved, or NULL with
 * GetLastError() set by VirtualAllocEx().
 */
void *hpshm__win_reserve_in(HANDLE process, void *addr, size_t len);
/*
 * In the child, for the exact reservation hpshm__port_reservation_release() found at
 * [addr, addr+len): 1 it is a placeholder, kept for hpshm__win_map_view_at() to replace; 0 it
 * is not (or is one granule long), untouched; -1 it was released (a placeholder whose probe
 * could not be undone).
 */
int hpshm__win_placeholder_keep(void *addr, size_t len);
/*
 * Map len bytes of section at addr (NULL: where the system chooses) with access (FILE_MAP_*):
 * over a placeholder of the parent's at addr when there is one, with no moment in which the
 * range is free, else with MapViewOfFileEx() as before.  The view, or NULL with GetLastError()
 * set.  UnmapViewOfFile() undoes either.
 */
void *hpshm__win_map_view_at(HANDLE section, DWORD access, size_t len, void *addr);
/* Forget that placeholders were refused (tests; hpshm__win_sys_reset() calls it). */
void hpshm__win_placeholder_reset(void);

/* Put every entry back to the real call. */
void hpshm__win_sys_reset(void);

#endif /* HPSHM_PORTS_WINDOWS_SYS_H */
