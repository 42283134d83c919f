/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/security.c -- who may open a named section: the mode key as a DACL, and the
 * right to create in Global\.
 *
 * mode is POSIX's permission bits; Windows has an access control list instead.  The three
 * classes map to three SIDs taken from this process's token: the owner to its user
 * (TokenUser), the group to its primary group (TokenPrimaryGroup), the others to Everyone
 * (S-1-1-0).  Each class with a bit set gets one ACCESS_ALLOWED ACE, in that order, with the
 * rights below; a class without bits gets none, so 0600 is the user's ACE alone.  The
 * descriptor is protected (SE_DACL_PROTECTED): nothing is inherited from the directory.
 *
 *   r   SECTION_QUERY | SECTION_MAP_READ | READ_CONTROL              (0x00020005)
 *   rw  the same | SECTION_MAP_WRITE                                  (0x00020007)
 *   the owner's rw also DELETE | WRITE_DAC | WRITE_OWNER              (0x000F0007)
 *
 * The rights are specific, never GENERIC_*: Windows would map a generic right to the
 * section's own when it stores the DACL and wine stores it as given, so a DACL read back
 * would differ between the two.
 *
 * What the bits cannot say on Windows is refused rather than approximated:
 *   - an execute bit: hpshm maps no section executable, and granting SECTION_MAP_EXECUTE
 *     would let another program do it;
 *   - write without read: Windows has no write-only view (PAGE_READWRITE is the least a
 *     writer maps);
 *   - others with a right the group lacks (0604, 0646): POSIX denies the group what others
 *     get, but allowed ACEs add up and Everyone includes the group, so that takes a deny ACE
 *     and a group that is often every local account ("None", S-1-5-21-...-513) or every
 *     domain user ("Domain Users"): a mode that surprising is better refused.
 * The owner always has rw (the configuration refuses a mode without 0600) and setuid, setgid
 * and sticky bits never get here (it refuses more than 0777), so Windows takes exactly 0600,
 * 0640, 0644, 0660, 0664 and 0666.
 *
 * Global\: creating a named object there needs SeCreateGlobalPrivilege outside session 0
 * (services, LocalSystem and administrators hold it; a user's program does not).  It is
 * enabled first, so that a token without it is named rather than left to an "access denied"
 * from CreateFileMappingW() that could as well mean another user's object.
 */
#include "windows/windows.h"

#include <stdlib.h>
#include <string.h>

#include "windows/sys.h"

#define SECURITY_READ   (SECTION_QUERY | SECTION_MAP_READ | READ_CONTROL)
#define SECURITY_WRITE  (SECURITY_READ | SECTION_MAP_WRITE)
#define SECURITY_OWNER  (SECURITY_WRITE | DELETE | WRITE_DAC | WRITE_OWNER)

const char *hpshm__win_mode_refusal(unsigned mode)
{
	unsigned group = (mode >> 3) & 7, other = mode & 7;

	if (mode & ~0777u)
		return "Windows has no setuid, setgid or sticky bit";
	if (mode & 0111)
		return "Windows maps no hpshm section executable, and an execute bit would let another program do "
		       "it";
	if (((group & 2) && !(group & 4)) || ((other & 2) && !(other & 4)))
		return "Windows has no write-only view: a class that may write must also read";
	if ((other & ~group) != 0)
		return "Everyone includes the group on Windows, so others cannot have a right the group lacks";
	return NULL;
}

/* The rights of one class's bits (rwx, the owner's when owner is 1). */
static DWORD security_access(unsigned bits, int owner)
{
	if (owner)
		return SECURITY_OWNER;
	return (bits & 2) ? SECURITY_WRITE : (bits & 4) ? SECURITY_READ : 0;
}

/* The descriptor and its DACL, in one allocation that hpshm__win_security_free() releases. */
struct security_block {
	SECURITY_DESCRIPTOR sd;      /* absolute form, pointing at acl */
	union {
		ACL   acl;           /* the DACL: up to three ACEs */
		BYTE  bytes[1024];   /* room for them: an ACE is at most 8 + 68 bytes (SID_MAX_SUB_AUTHORITIES) */
	} dacl;
};

/* The token's answer for cls, from malloc(); NULL with *code set. */
static void *security_token_info(HANDLE token, TOKEN_INFORMATION_CLASS cls, DWORD *code)
{
	DWORD need = 0;
	void *info = NULL;

	(void)hpshm__win_sys.get_token_information(token, cls, NULL, 0, &need);
	if (need > 0)
		info = malloc(need);
	if (info == NULL) {
		*code = ERROR_NOT_ENOUGH_MEMORY;
		return NULL;
	}
	if (!hpshm__win_sys.get_token_information(token, cls, info, need, &need)) {
		*code = GetLastError();
		free(info);
		return NULL;
	}
	return info;
}

/* The three ACEs of mode into b's DACL, and b's descriptor around it.  0 or the code, *call naming it. */
static DWORD security_fill(struct security_block *b, unsigned mode, PSID user, PSID group, const char **call)
{
	SID_IDENTIFIER_AUTHORITY world_auth = { SECURITY_WORLD_SID_AUTHORITY };
	BYTE world_buf[SECURITY_MAX_SID_SIZE];
	PSID world = (PSID)world_buf;
	PSID sids[3];
	DWORD code = ERROR_SUCCESS;

	sids[0] = user;
	sids[1] = group;
	sids[2] = world;

	if (!InitializeSid(world, &world_auth, 1)) {
		*call = "InitializeSid";
		return GetLastError();
	}
	*GetSidSubAuthority(world, 0) = SECURITY_WORLD_RID;
	if (!InitializeAcl(&b->dacl.acl, (DWORD)sizeof(b->dacl), ACL_REVISION)) {
		*call = "InitializeAcl";
		return GetLastError();
	}
	for (int k = 0; k < 3 && code == ERROR_SUCCESS; k++) {
		DWORD access = security_access((mode >> (6 - 3 * k)) & 7, k == 0);

		if (access != 0 && !AddAccessAllowedAce(&b->dacl.acl, ACL_REVISION, access, sids[k])) {
			*call = "AddAccessAllowedAce";
			code = GetLastError();
		}
	}
	if (code == ERROR_SUCCESS && (!InitializeSecurityDescriptor(&b->sd, SECURITY_DESCRIPTOR_REVISION) ||
				      !SetSecurityDescriptorDacl(&b->sd, TRUE, &b->dacl.acl, FALSE) ||
				      !SetSecurityDescriptorControl(&b->sd, SE_DACL_PROTECTED, SE_DACL_PROTECTED))) {
		*call = "SetSecurityDescriptorDacl";
		code = GetLastError();
	}
	return code;
}

DWORD hpshm__win_security_mode(SECURITY_ATTRIBUTES *sa, unsigned mode, const char **call)
{
	struct security_block *b = NULL;
	TOKEN_USER *user = NULL;
	TOKEN_PRIMARY_GROUP *group = NULL;
	HANDLE token;
	DWORD code = ERROR_SUCCESS;

	memset(sa, 0, sizeof(*sa));
	if (hpshm__win_mode_refusal(mode) != NULL) {
		*call = "mode";
		return ERROR_INVALID_PARAMETER;
	}
	if (!hpshm__win_sys.open_process_token(GetCurrentProcess(), TOKEN_QUERY, &token)) {
		*call = "OpenProcessToken";
		return GetLastError();
	}
	*call = "GetTokenInformation";
	user = security_token_info(token, TokenUser, &code);
	if (user != NULL)
		group = security_token_info(token, TokenPrimaryGroup, &code);
	if (group != NULL && (b = calloc(1, sizeof(*b))) == NULL) {
		*call = "malloc";
		code = ERROR_NOT_ENOUGH_MEMORY;
	}
	if (b != NULL)
		code = security_fill(b, mode, user->User.Sid, group->PrimaryGroup, call);
	/* The ACEs hold copies of the SIDs, so the token's answers can go now. */
	free(user);
	free(group);
	(void)hpshm__win_sys.close_handle(token);
	if (code != ERROR_SUCCESS) {
		free(b);
		return code;
	}
	sa->nLength = sizeof(*sa);
	sa->lpSecurityDescriptor = &b->sd;
	sa->bInheritHandle = FALSE;
	return ERROR_SUCCESS;
}

void hpshm__win_security_free(SECURITY_ATTRIBUTES *sa)
{
	/* sd is the block's first member, so its address is the block's. */
	free(sa->lpSecurityDescriptor);
	sa->lpSecurityDescriptor = NULL;
}

DWORD hpshm__win_global_ready(const char **call)
{
	DWORD code = hpshm__win_privilege_enable(SE_CREATE_GLOBAL_NAME, call);
	DWORD session = 1;

	/* In session 0 Global\ is the session's own namespace, which needs no privilege. */
	if (code == ERROR_NOT_ALL_ASSIGNED && ProcessIdToSessionId(GetCurrentProcessId(), &session) && session == 0)
		return ERROR_SUCCESS;
	return code;
}
