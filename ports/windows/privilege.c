/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/privilege.c -- privileges in this process's token (the security descriptor
 * of hpshm's named sections is ports/windows/security.c).
 *
 * Large pages need SeLockMemoryPrivilege ("Lock pages in memory", granted by an administrator
 * in the local security policy, and effective at the next logon), enabled in the token before
 * the section is created; Global\ names need SeCreateGlobalPrivilege.  A privilege the token
 * holds is usually disabled, so it is enabled first.  AdjustTokenPrivileges() returns TRUE
 * even when the token does not hold the privilege at all: only GetLastError() ==
 * ERROR_NOT_ALL_ASSIGNED (1300) says so, and missing that check makes large pages look
 * available until CreateFileMapping() fails with ERROR_PRIVILEGE_NOT_HELD (1314).  A
 * non-elevated process of an administrator runs with a filtered token that lacks the
 * privilege even when the policy grants it (UAC), which is the usual surprise.
 *
 * Every call goes through hpshm__win_sys, so tests can play a token without the privilege.
 */
#include "windows/windows.h"

#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "windows/sys.h"

int hpshm__win_privilege_held(const wchar_t *name)
{
	TOKEN_PRIVILEGES *tp = NULL;
	HANDLE token;
	DWORD need = 0;
	LUID luid;
	int held = -1;

	if (!hpshm__win_sys.lookup_privilege_value(NULL, name, &luid))
		return -1;
	if (!hpshm__win_sys.open_process_token(GetCurrentProcess(), TOKEN_QUERY, &token))
		return -1;
	(void)hpshm__win_sys.get_token_information(token, TokenPrivileges, NULL, 0, &need);
	if (need > 0)
		tp = malloc(need);
	if (tp != NULL && hpshm__win_sys.get_token_information(token, TokenPrivileges, tp, need, &need)) {
		held = 0;
		for (DWORD i = 0; i < tp->PrivilegeCount; i++)
			if (tp->Privileges[i].Luid.LowPart == luid.LowPart &&
			    tp->Privileges[i].Luid.HighPart == luid.HighPart)
				held = 1;
	}
	free(tp);
	(void)hpshm__win_sys.close_handle(token);
	return held;
}

DWORD hpshm__win_privilege_enable(const wchar_t *name, const char **call)
{
	TOKEN_PRIVILEGES tp;
	HANDLE token;
	DWORD code;

	if (!hpshm__win_sys.open_process_token(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY, &token)) {
		*call = "OpenProcessToken";
		return GetLastError();
	}
	memset(&tp, 0, sizeof(tp));
	tp.PrivilegeCount = 1;
	tp.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
	if (!hpshm__win_sys.lookup_privilege_value(NULL, name, &tp.Privileges[0].Luid)) {
		code = GetLastError();
		(void)hpshm__win_sys.close_handle(token);
		*call = "LookupPrivilegeValueW";
		return code;
	}
	SetLastError(ERROR_SUCCESS);
	if (!hpshm__win_sys.adjust_token_privileges(token, FALSE, &tp, 0, NULL, NULL))
		code = GetLastError();
	else
		code = GetLastError(); /* ERROR_SUCCESS, or ERROR_NOT_ALL_ASSIGNED: see the file's comment */
	(void)hpshm__win_sys.close_handle(token);
	*call = "AdjustTokenPrivileges";
	return code;
}

/* This process's account as "DOMAIN\user" and its SID as "S-1-5-...".  0, or -1 (the token or
 * the account cannot be read: both strings are then empty). */
static int privilege_account(char *name, size_t nlen, char *sid, size_t slen)
{
	wchar_t user[256], domain[256], full[520], *ssid = NULL;
	DWORD ulen = 256, dlen = 256, need = 0;
	SID_NAME_USE use;
	TOKEN_USER *tu = NULL;
	HANDLE token;
	int rc = -1;

	name[0] = sid[0] = '\0';
	if (!hpshm__win_sys.open_process_token(GetCurrentProcess(), TOKEN_QUERY, &token))
		return -1;
	(void)hpshm__win_sys.get_token_information(token, TokenUser, NULL, 0, &need);
	if (need > 0)
		tu = malloc(need);
	if (tu != NULL && hpshm__win_sys.get_token_information(token, TokenUser, tu, need, &need) &&
	    ConvertSidToStringSidW(tu->User.Sid, &ssid)) {
		hpshm__win_utf8(ssid, sid, slen);
		LocalFree(ssid);
		if (LookupAccountSidW(NULL, tu->User.Sid, user, &ulen, domain, &dlen, &use)) {
			(void)_snwprintf_s(full, sizeof(full) / sizeof(full[0]), _TRUNCATE, L"%ls%ls%ls", domain,
					   domain[0] ? L"\\" : L"", user);
			hpshm__win_utf8(full, name, nlen);
		}
		rc = 0;
	}
	free(tu);
	(void)hpshm__win_sys.close_handle(token);
	return rc;
}

void hpshm__win_lock_memory_fix(struct hpshm__win_fix *r)
{
	char name[256], sid[128], who[400];

	memset(r, 0, sizeof(*r));
	r->met = hpshm__win_privilege_held(SE_LOCK_MEMORY_NAME) == 1;
	if (privilege_account(name, sizeof(name), sid, sizeof(sid)) < 0)
		hpshm__strlcpy(sid, "<the account's SID: whoami /user>", sizeof(sid));
	snprintf(who, sizeof(who), "%s%s(%s)", name, name[0] ? " " : "", sid);
	if (r->met) {
		snprintf(r->detail, sizeof(r->detail),
			 "the account %s holds \"Lock pages in memory\" (SeLockMemoryPrivilege) in this process's token",
			 who);
		return;
	}
	snprintf(r->detail, sizeof(r->detail),
		 "this process's token lacks \"Lock pages in memory\" (SeLockMemoryPrivilege), which large pages "
		 "need: grant it to %s with secedit, or in secpol.msc (User Rights Assignment)",
		 who);
	/* secedit is on every Windows edition (secpol.msc is not on Home); exporting the rights,
	 * changing one line and applying the file with /areas USER_RIGHTS leaves every other right
	 * as it was. */
	hpshm__strlcpy(r->now[0], "secedit /export /areas USER_RIGHTS /cfg hpshm-rights.inf", sizeof(r->now[0]));
	snprintf(r->now[1], sizeof(r->now[1]),
		 "in hpshm-rights.inf, [Privilege Rights]: append \",*%s\" to the line \"SeLockMemoryPrivilege = "
		 "...\", or add the line \"SeLockMemoryPrivilege = *%s\"",
		 sid, sid);
	hpshm__strlcpy(r->now[2],
		       "secedit /configure /db hpshm-rights.sdb /cfg hpshm-rights.inf /areas USER_RIGHTS   "
		       "(from an elevated prompt)",
		       sizeof(r->now[2]));
	hpshm__strlcpy(r->persist[0],
		       "the local security policy keeps the right across reboots; it reaches a program at the "
		       "account's next logon: sign out and in again",
		       sizeof(r->persist[0]));
	hpshm__strlcpy(r->persist[1],
		       "start the program elevated if the account is an administrator: User Account Control takes the "
		       "right out of a non-elevated administrator's token",
		       sizeof(r->persist[1]));
}

/* Is this process's token an administrator's, filtered by User Account Control? */
static int privilege_token_filtered(void)
{
	TOKEN_ELEVATION_TYPE type = TokenElevationTypeDefault;
	HANDLE token;
	DWORD len = 0;
	int filtered = 0;

	if (!hpshm__win_sys.open_process_token(GetCurrentProcess(), TOKEN_QUERY, &token))
		return 0;
	if (hpshm__win_sys.get_token_information(token, TokenElevationType, &type, sizeof(type), &len))
		filtered = type == TokenElevationTypeLimited;
	(void)hpshm__win_sys.close_handle(token);
	return filtered;
}

const char *hpshm__win_lock_memory_hint(void)
{
	if (privilege_token_filtered())
		return "grant the account \"Lock pages in memory\" (secpol.msc: User Rights Assignment), log on "
		       "again, and start the program elevated: User Account Control filters this administrator's token";
	return "grant the account \"Lock pages in memory\" (secpol.msc: User Rights Assignment), and log on again";
}
