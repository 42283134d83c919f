/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/windows.h -- the Windows-only facts and helpers behind the neutral port (port.h).
 *
 * Internal: not installed.  Who may include it: the files of ports/windows/, the Windows
 * backends (backends/winsection.c and backends/winsection_large.c).  Everything else asks
 * through port.h, or ports/facts.h, admin.h and process.h for the tool.
 * scripts/check-layers.sh enforces the list.
 *
 * What is here:
 *   - text: hpshm's strings are UTF-8 and Windows' are UTF-16, so every call that takes a
 *     name, a path or a command line converts here.  Text that is not valid UTF-8 is taken
 *     in the ANSI code page instead: what msvcrt hands a program in argv and _environ is in
 *     that code page, and an ASCII string reads the same either way;
 *   - the system's wording of a GetLastError() code, for messages;
 *   - privileges (SeLockMemoryPrivilege for large pages, SeCreateGlobalPrivilege for
 *     Global\ names): whether the token holds one, and enabling it;
 *   - the security descriptor of a named section, from the mode key, and whether this
 *     process may create in Global\.
 *
 * The system calls backends and ports make are in the table of ports/windows/sys.h, so tests
 * can make any of them fail with the GetLastError() code they want.
 *
 * Everything compiles with MSVC as well as mingw-w64: C11, no GNU extension outside
 * __GNUC__ guards, the wide (W) form of every call that takes text.
 */
#ifndef HPSHM_PORTS_WINDOWS_WINDOWS_H
#define HPSHM_PORTS_WINDOWS_WINDOWS_H

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <stddef.h>
#include <wchar.h>

#include "port.h"

/* ---- text ---- */

/*
 * s as UTF-16 in out[0..len): the length in wchar_t without the NUL, or -1 when it does not
 * fit or cannot be converted.  UTF-8 first, then the ANSI code page (see above).
 */
int hpshm__win_wide(const char *s, wchar_t *out, size_t len);
/* The same into a buffer from malloc(), NULL when out of memory or unconvertible. */
wchar_t *hpshm__win_wide_dup(const char *s);
/* w as UTF-8 in out[0..len), truncated at a character boundary if it does not fit.  Returns out. */
char *hpshm__win_utf8(const wchar_t *w, char *out, size_t len);
/*
 * This process's environment in UTF-8, from GetEnvironmentStringsW(): "NAME=value" strings,
 * NULL-terminated, entries such as "=C:=C:\dir" included.  NULL when out of memory.  Kept for
 * the life of the process, one copy per distinct environment: never free it.
 */
char **hpshm__win_environ_utf8(void);
/*
 * The value of the environment variable name in UTF-8 (GetEnvironmentVariableW()), NULL when
 * it is not set: getenv()'s own string when that says the same, else a copy kept for the life
 * of the process (one per distinct value), so it lives as long as getenv()'s would.
 */
const char *hpshm__win_getenv_utf8(const char *name);

/* The system's text for a GetLastError() code, in UTF-8, one line, "error N" if it has none.
 * Returns buf. */
char *hpshm__win_strerror(DWORD code, char *buf, size_t len);

/* ---- privileges ---- */

/*
 * Does this process's token hold the privilege named (SE_LOCK_MEMORY_NAME ...), enabled or
 * not?  1 yes, 0 no, -1 cannot tell (the token cannot be read).
 */
int hpshm__win_privilege_held(const wchar_t *name);

/*
 * Enable the privilege named in this process's token.  0 once enabled; otherwise the
 * GetLastError() code: ERROR_NOT_ALL_ASSIGNED (1300) when the token does not hold it
 * (AdjustTokenPrivileges() returns TRUE then, and only the code tells), or the code of the
 * call that failed, with *call naming it.
 */
DWORD hpshm__win_privilege_enable(const wchar_t *name, const char **call);

/* What an operator must do for one thing a mechanism needs (a provider's requirement, in the
 * port's own terms: the port does not see the provider SDK). */
struct hpshm__win_fix {
	int  met;                         /* 1 if it holds already */
	char detail[HPSHM_TEXT_MAX];      /* what is short, naming the account */
	char now[3][HPSHM_TEXT_MAX];      /* what fixes it (empty strings: none) */
	char persist[3][HPSHM_TEXT_MAX];  /* what makes the fix take effect and last */
};

/*
 * What large pages need of an operator, for windows_large's requirements() and `hpshm plan`:
 * met when this process's token holds SeLockMemoryPrivilege, and otherwise how to grant "Lock
 * pages in memory" to this process's account (named with its SID, which secedit takes) and
 * what makes it take effect (a new logon, an elevated start).
 */
void hpshm__win_lock_memory_fix(struct hpshm__win_fix *f);

/*
 * The one-line hint for a token without SeLockMemoryPrivilege: grant the right and log on
 * again, and start the program elevated only where that helps, in an administrator's token
 * that User Account Control filtered (TokenElevationTypeLimited); never to a plain user, whom
 * elevation would not give the right.
 */
const char *hpshm__win_lock_memory_hint(void);

/* ---- NUMA (ports/windows/numa.c) ---- */

/*
 * The processors a populate's threads run on for policy p (local or preferred: check() refused
 * the others): the node's processors this process may use, in the node's group.  1 with *ga
 * filled; 0 when p places nothing (default); -1 when the node's processors cannot be used,
 * with *code the GetLastError() code (0: the node has none this process may run on) and *call
 * the call that said so.
 */
int hpshm__win_numa_affinity(const struct hpshm__numa *p, GROUP_AFFINITY *ga, DWORD *code, const char **call);

/* ---- a child's program, command line and environment (ports/windows/command.c) ---- */

/*
 * The program's full path in full[0..len): a path with a directory part as it is (".exe" added
 * when the file without it does not exist), a bare name searched as SearchPathW() does.
 * ERROR_SUCCESS, or the Windows error code (ERROR_FILE_NOT_FOUND, ERROR_FILENAME_EXCED_RANGE).
 */
DWORD hpshm__win_program_find(const char *path, wchar_t *full, size_t len);

/* argv (UTF-8, NULL-terminated) as one command line the C runtime parses back into argv, in a
 * malloc()ed UTF-16 string; NULL when out of memory or an argument is not text. */
wchar_t *hpshm__win_command_line(char *const argv[]);

/* envp (UTF-8 "NAME=value", NULL-terminated) as CreateProcessW()'s environment block, sorted
 * by name as Windows requires, the later of two equal names kept; malloc()ed, or NULL. */
wchar_t *hpshm__win_environment_block(char *const envp[]);

/* ---- security (ports/windows/security.c) ---- */

/*
 * Why Windows cannot express the permission bits mode (see security.c: an execute bit, write
 * without read, others beyond the group, bits above 0777), or NULL when it can: 0600, 0640,
 * 0644, 0660, 0664, 0666.  mode always has 0600 (the configuration's rule).
 */
const char *hpshm__win_mode_refusal(unsigned mode);

/*
 * Fill sa (not inheritable) with a security descriptor whose protected DACL is mode: an
 * allowed ACE for the token's user, then its primary group, then Everyone, each for a class
 * with bits, with the rights security.c lists.  0, or the GetLastError() code of the call that
 * failed with *call naming it (ERROR_INVALID_PARAMETER and "mode" for a mode
 * hpshm__win_mode_refusal() refuses).  Release with hpshm__win_security_free().
 */
DWORD hpshm__win_security_mode(SECURITY_ATTRIBUTES *sa, unsigned mode, const char **call);
void hpshm__win_security_free(SECURITY_ATTRIBUTES *sa);

/*
 * May this process create named objects in Global\?  SeCreateGlobalPrivilege enabled in its
 * token, or not needed (session 0).  0, or hpshm__win_privilege_enable()'s code
 * (ERROR_NOT_ALL_ASSIGNED: the token lacks it) with *call naming the call.
 */
DWORD hpshm__win_global_ready(const char **call);

/* ---- named objects ---- */

/* The namespaces a name can be in: Local\ (this session) or Global\ (every session). */
enum hpshm__win_namespace {
	HPSHM__WIN_LOCAL,
	HPSHM__WIN_GLOBAL
};

/*
 * Called for each object in a directory of the object manager: its name and its type name
 * ("Section", "Event", "Mutant" ...), both UTF-16 and NUL-terminated.  Non-zero stops.
 */
typedef int (*hpshm__win_object_fn)(void *user, const wchar_t *name, const wchar_t *type);

/*
 * List the named objects of namespace ns (the session's BaseNamedObjects directory that
 * Local\ names resolve to, or the one of Global\ names), calling fn for each.  0 when the
 * whole directory was listed or fn stopped it; otherwise the NTSTATUS of the call that failed
 * (STATUS_NOT_IMPLEMENTED, 0xC0000002, when ntdll lacks the directory calls), with *call
 * naming it.  *same is set to 1 when ns is Global\ and this session's Local\ directory is
 * the same one (session 0), so a caller that lists both need not list it twice.
 */
long hpshm__win_objects_list(enum hpshm__win_namespace ns, hpshm__win_object_fn fn, void *user, int *same,
			     const char **call);

#endif /* HPSHM_PORTS_WINDOWS_WINDOWS_H */
