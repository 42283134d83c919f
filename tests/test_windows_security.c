/* SPDX-License-Identifier: MIT */
/*
 * tests/test_windows_security.c -- who may open a named section on Windows: the namespace key
 * (Local\ or Global\) and the mode key as the section's DACL, on Windows or under wine.
 *
 * Each DACL is read back from the section itself (GetSecurityInfo on a handle opened by its
 * name) and checked ACE by ACE, SID and access mask, against the table doc/configuration.md
 * gives; the namespace against the object manager (OpenFileMappingW by the full name, and
 * hpshm_objects_list()).  Wine stores a DACL as given and enforces it, and its token holds
 * SeCreateGlobalPrivilege, so every test runs there; a token without the privilege is played
 * through the port's call table (AdjustTokenPrivileges answering ERROR_NOT_ALL_ASSIGNED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpshm.h"
#include "ports/windows/sys.h"
#include "ports/windows/windows.h"

#include <aclapi.h>

#define MiB ((size_t)1 << 20)

/* The rights doc/configuration.md names for each class of a mode. */
#define ACCESS_R     (SECTION_QUERY | SECTION_MAP_READ | READ_CONTROL)
#define ACCESS_RW    (ACCESS_R | SECTION_MAP_WRITE)
#define ACCESS_OWNER (ACCESS_RW | DELETE | WRITE_DAC | WRITE_OWNER)

static void reset_table(void)
{
	hpshm__win_sys_reset();
}

TestSuite(winsec, .fini = reset_table);

static hpshm_config *config(const char *kv)
{
	hpshm_config *cfg;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s: %s", kv, err.message);
	return cfg;
}

/* Is the section name (UTF-16, with its namespace) there?  0, or the code OpenFileMappingW() gave. */
static DWORD section_open_code(const wchar_t *name)
{
	HANDLE h = OpenFileMappingW(FILE_MAP_READ, FALSE, name);
	DWORD code = h == NULL ? GetLastError() : 0;

	if (h != NULL)
		CloseHandle(h);
	return code;
}

static DWORD this_session(void)
{
	DWORD session = 0;

	cr_assert(ProcessIdToSessionId(GetCurrentProcessId(), &session));
	return session;
}

/* ---- namespace ---- */

struct seen {
	const char  *id;    /* the object's id to look for */
	int          times; /* how often it was listed */
	hpshm_object obj;   /* as it was */
};

static int seen_one(void *user, const hpshm_object *o)
{
	struct seen *s = user;

	if (strcmp(o->id, s->id) == 0) {
		s->times++;
		s->obj = *o;
	}
	return 0;
}

Test(winsec, namespace_global_creates_the_section_in_global)
{
	hpshm_config *cfg = config("huge_pages=off,namespace=global,name=hpt-ns-global");
	struct seen s = { .id = "Global\\hpshm.hpt-ns-global" };
	hpshm_segment *seg, *opened;
	hpshm_error err;
	int rc = hpshm_segment_create(&seg, MiB, cfg, &err);

	if (rc == HPSHM_EACCES) {
		/* The acceptance's other outcome: a token without the privilege, named. */
		cr_assert_eq(err.sys_errno, ERROR_NOT_ALL_ASSIGNED, "%s", err.message);
		cr_assert_str_eq(err.key, "namespace");
		cr_assert(strstr(err.message, "SeCreateGlobalPrivilege") != NULL, "%s", err.message);
		hpshm_config_free(cfg);
		cr_skip_test("this process may not create Global\\ objects (no SeCreateGlobalPrivilege): refused, named");
	}
	cr_assert_eq(rc, 0, "%s", err.message);
	cr_assert_eq(section_open_code(L"Global\\hpshm.hpt-ns-global"), 0, "no Global\\ section");
	/* In session 0 Global\ and Local\ are one directory; elsewhere Local\ must not have it. */
	if (this_session() != 0)
		cr_assert_eq(section_open_code(L"Local\\hpshm.hpt-ns-global"), ERROR_FILE_NOT_FOUND,
			     "the section is in Local\\ too");
	cr_assert_geq(hpshm_objects_list(seen_one, &s, &err), 0, "%s", err.message);
	cr_assert_eq(s.times, 1, "%s listed %d times", s.id, s.times);
	cr_assert_eq(s.obj.state, HPSHM_OBJECT_ALIVE, "%s", s.obj.note);
	cr_assert_eq(s.obj.creator_pid, (long long)GetCurrentProcessId());
	/* Opening by name looks in Global\ too, and finds the same memory. */
	((volatile unsigned char *)hpshm_segment_address(seg))[0] = 0x5a;
	cr_assert_eq(hpshm_segment_open(&opened, "hpt-ns-global", NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((volatile unsigned char *)hpshm_segment_address(opened))[0], 0x5a);
	hpshm_segment_destroy(opened);
	hpshm_segment_destroy(seg);
	cr_assert_eq(section_open_code(L"Global\\hpshm.hpt-ns-global"), ERROR_FILE_NOT_FOUND, "the section outlived");
	hpshm_config_free(cfg);
}

Test(winsec, namespace_local_is_the_default_and_stays_in_local)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-ns-local");
	hpshm_segment *seg;
	hpshm_error err;
	char v[16];

	cr_assert_gt(hpshm_config_get(cfg, "namespace", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "local");
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(section_open_code(L"Local\\hpshm.hpt-ns-local"), 0);
	if (this_session() != 0)
		cr_assert_eq(section_open_code(L"Global\\hpshm.hpt-ns-local"), ERROR_FILE_NOT_FOUND);
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

static BOOL WINAPI fake_adjust_not_all_assigned(HANDLE token, BOOL disable_all, PTOKEN_PRIVILEGES state, DWORD len,
						PTOKEN_PRIVILEGES previous, PDWORD ret_len)
{
	(void)token, (void)disable_all, (void)state, (void)len, (void)previous, (void)ret_len;
	SetLastError(ERROR_NOT_ALL_ASSIGNED); /* what a token without the privilege answers */
	return TRUE;
}

Test(winsec, namespace_global_without_the_privilege_is_refused_naming_it)
{
	hpshm_config *cfg = config("huge_pages=off,namespace=global,name=hpt-ns-noglobal");
	hpshm_segment *seg = NULL;
	hpshm_error err;

	if (this_session() == 0)
		cr_skip_test("session 0 creates in Global\\ without the privilege");
	hpshm__win_sys.adjust_token_privileges = fake_adjust_not_all_assigned;
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), HPSHM_EACCES, "%s", err.message);
	cr_assert_null(seg);
	cr_assert_eq(err.sys_errno, ERROR_NOT_ALL_ASSIGNED);
	cr_assert_str_eq(err.key, "namespace");
	cr_assert(strstr(err.message, "SeCreateGlobalPrivilege") != NULL, "%s", err.message);
	cr_assert(strstr(err.hint, "Create global objects") != NULL, "no operator's fix: %s", err.hint);
	/* Refused before anything was made, in either namespace. */
	cr_assert_eq(section_open_code(L"Global\\hpshm.hpt-ns-noglobal"), ERROR_FILE_NOT_FOUND);
	cr_assert_eq(section_open_code(L"Local\\hpshm.hpt-ns-noglobal"), ERROR_FILE_NOT_FOUND);
	hpshm_config_free(cfg);
}

Test(winsec, namespace_bogus_is_refused_naming_the_key)
{
	hpshm_config *cfg = config("huge_pages=off");
	hpshm_error err;
	char v[16];

	cr_assert_eq(hpshm_config_set(cfg, "namespace", "bogus", &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "namespace");
	cr_assert(strstr(err.hint, "local") != NULL && strstr(err.hint, "global") != NULL, "%s", err.hint);
	cr_assert_gt(hpshm_config_get(cfg, "namespace", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "local", "the refused value was kept");
	hpshm_config_free(cfg);
}

/* ---- mode as a DACL ---- */

/* One expected ACE: whose (0 the token's user, 1 its primary group, 2 Everyone) and its rights. */
struct ace_want {
	int   who;
	DWORD mask;
};

/* The token's user, primary group and Everyone, copied into sids[3] (each SECURITY_MAX_SID_SIZE). */
static void three_sids(BYTE sids[3][SECURITY_MAX_SID_SIZE])
{
	BYTE buf[512];
	HANDLE token;
	DWORD len, n = SECURITY_MAX_SID_SIZE;

	cr_assert(OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token));
	cr_assert(GetTokenInformation(token, TokenUser, buf, sizeof(buf), &len));
	cr_assert(CopySid(SECURITY_MAX_SID_SIZE, sids[0], ((TOKEN_USER *)buf)->User.Sid));
	cr_assert(GetTokenInformation(token, TokenPrimaryGroup, buf, sizeof(buf), &len));
	cr_assert(CopySid(SECURITY_MAX_SID_SIZE, sids[1], ((TOKEN_PRIMARY_GROUP *)buf)->PrimaryGroup));
	cr_assert(CreateWellKnownSid(WinWorldSid, NULL, sids[2], &n));
	CloseHandle(token);
}

/* Create a named segment with mode, read its DACL back, and compare ACE by ACE with want[n]. */
static void dacl_is(const char *mode, const struct ace_want *want, DWORD n)
{
	char kv[128];
	hpshm_config *cfg;
	BYTE sids[3][SECURITY_MAX_SID_SIZE];
	PSECURITY_DESCRIPTOR sd = NULL;
	SECURITY_DESCRIPTOR_CONTROL control;
	ACCESS_ALLOWED_ACE *ace;
	PACL dacl = NULL;
	hpshm_segment *seg;
	hpshm_error err;
	DWORD revision;
	HANDLE h;

	snprintf(kv, sizeof(kv), "huge_pages=off,name=hpt-mode-%s,mode=%s", mode, mode);
	cfg = config(kv);
	three_sids(sids);
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "mode=%s: %s", mode, err.message);
	snprintf(kv, sizeof(kv), "Local\\hpshm.hpt-mode-%s", mode);
	{
		wchar_t wname[64];

		cr_assert_gt(MultiByteToWideChar(CP_UTF8, 0, kv, -1, wname, 64), 0);
		h = OpenFileMappingW(READ_CONTROL, FALSE, wname);
	}
	cr_assert_not_null(h, "OpenFileMappingW(%s): %lu", kv, (unsigned long)GetLastError());
	cr_assert_eq(GetSecurityInfo(h, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &dacl, NULL, &sd),
		     ERROR_SUCCESS);
	cr_assert_not_null(dacl, "mode=%s: no DACL, so everyone is admitted", mode);
	cr_assert(GetSecurityDescriptorControl(sd, &control, &revision));
	cr_assert(control & SE_DACL_PROTECTED, "mode=%s: the DACL inherits from the directory", mode);
	cr_assert_eq(dacl->AceCount, n, "mode=%s: %u ACEs, want %lu", mode, dacl->AceCount, (unsigned long)n);
	for (DWORD i = 0; i < n; i++) {
		cr_assert(GetAce(dacl, i, (void **)&ace));
		cr_assert_eq(ace->Header.AceType, ACCESS_ALLOWED_ACE_TYPE, "mode=%s ACE %lu", mode, (unsigned long)i);
		cr_assert(EqualSid((PSID)&ace->SidStart, (PSID)sids[want[i].who]), "mode=%s: ACE %lu is not for %s",
			  mode, (unsigned long)i, want[i].who == 0 ? "the user" : want[i].who == 1 ? "the group" : "Everyone");
		cr_assert_eq(ace->Mask, want[i].mask, "mode=%s: ACE %lu grants 0x%08lx, want 0x%08lx", mode,
			     (unsigned long)i, (unsigned long)ace->Mask, (unsigned long)want[i].mask);
	}
	LocalFree(sd);
	CloseHandle(h);
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

Test(winsec, mode_0600_admits_the_user_alone)
{
	static const struct ace_want want[] = { { 0, ACCESS_OWNER } };

	dacl_is("0600", want, 1);
}

Test(winsec, mode_0640_adds_the_group_reading)
{
	static const struct ace_want want[] = { { 0, ACCESS_OWNER }, { 1, ACCESS_R } };

	dacl_is("0640", want, 2);
}

Test(winsec, mode_0660_adds_the_group_reading_and_writing)
{
	static const struct ace_want want[] = { { 0, ACCESS_OWNER }, { 1, ACCESS_RW } };

	dacl_is("0660", want, 2);
}

Test(winsec, mode_0644_and_0664_add_everyone_reading)
{
	static const struct ace_want r[] = { { 0, ACCESS_OWNER }, { 1, ACCESS_R }, { 2, ACCESS_R } };
	static const struct ace_want rw[] = { { 0, ACCESS_OWNER }, { 1, ACCESS_RW }, { 2, ACCESS_R } };

	dacl_is("0644", r, 3);
	dacl_is("0664", rw, 3);
}

Test(winsec, mode_0666_admits_everyone_reading_and_writing)
{
	static const struct ace_want want[] = { { 0, ACCESS_OWNER }, { 1, ACCESS_RW }, { 2, ACCESS_RW } };

	dacl_is("0666", want, 3);
}

/* Is the user's SID deny-only in token (as CreateRestrictedToken() makes it on Windows)?  1 or 0. */
static int user_is_deny_only(HANDLE token)
{
	BYTE buf[512];
	DWORD len;

	cr_assert(GetTokenInformation(token, TokenUser, buf, sizeof(buf), &len));
	return (((TOKEN_USER *)buf)->User.Attributes & SE_GROUP_USE_FOR_DENY_ONLY) != 0;
}

/* The DACL is enforced, not only stored: a section everyone may read but only its user write
 * opens for reading and refuses writing to a token that is not the user (the user's SID made
 * deny-only in a restricted token, Everyone left). */
Test(winsec, mode_0644_lets_others_read_and_not_write)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-mode-enforced,mode=0644");
	BYTE sids[3][SECURITY_MAX_SID_SIZE];
	SID_AND_ATTRIBUTES deny[2];
	HANDLE token, restricted, h;
	hpshm_segment *seg;
	hpshm_error err;

	three_sids(sids);
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	deny[0].Sid = (PSID)sids[0];
	deny[0].Attributes = 0;
	deny[1].Sid = (PSID)sids[1];
	deny[1].Attributes = 0;
	cr_assert(OpenProcessToken(GetCurrentProcess(), TOKEN_ALL_ACCESS, &token));
	cr_assert(CreateRestrictedToken(token, 0, 2, deny, 0, NULL, 0, NULL, &restricted), "%lu",
		  (unsigned long)GetLastError());
	/* Wine (8.0) leaves the user's SID usable in a restricted token, so the token is still
	 * the user's and another user cannot be played there: said, not passed. */
	if (!user_is_deny_only(restricted)) {
		CloseHandle(restricted);
		CloseHandle(token);
		hpshm_segment_destroy(seg);
		hpshm_config_free(cfg);
		cr_skip_test("CreateRestrictedToken() left the user's SID usable (wine does): no other user to play");
	}
	cr_assert(ImpersonateLoggedOnUser(restricted), "%lu", (unsigned long)GetLastError());
	h = OpenFileMappingW(FILE_MAP_READ, FALSE, L"Local\\hpshm.hpt-mode-enforced");
	cr_assert_not_null(h, "Everyone may read: %lu", (unsigned long)GetLastError());
	CloseHandle(h);
	h = OpenFileMappingW(FILE_MAP_WRITE, FALSE, L"Local\\hpshm.hpt-mode-enforced");
	cr_assert_null(h, "only the user may write");
	cr_assert_eq(GetLastError(), ERROR_ACCESS_DENIED);
	cr_assert(RevertToSelf());
	CloseHandle(restricted);
	CloseHandle(token);
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

Test(winsec, a_mode_windows_cannot_express_is_refused_naming_the_key)
{
	/* An execute bit; write without read (group, others); others beyond the group. */
	static const char *const modes[] = { "0700", "0670", "0601", "0620", "0662", "0604", "0646", "0606" };
	char kv[128];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(kv, sizeof(kv), "huge_pages=off,name=hpt-mode-bad,mode=%s", modes[i]);
		cfg = config(kv);
		seg = NULL;
		cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), HPSHM_EVALUE, "mode=%s: %s", modes[i],
			     err.message);
		cr_assert_null(seg);
		cr_assert_str_eq(err.key, "mode", "mode=%s", modes[i]);
		cr_assert_eq(section_open_code(L"Local\\hpshm.hpt-mode-bad"), ERROR_FILE_NOT_FOUND,
			     "mode=%s made a section", modes[i]);
		/* Unnamed too: the configuration hears it at once, not when it names a segment. */
		cr_assert_eq(hpshm_config_set(cfg, "name", "", &err), 0);
		cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), HPSHM_EVALUE, "mode=%s unnamed", modes[i]);
		hpshm_config_free(cfg);
	}
}
