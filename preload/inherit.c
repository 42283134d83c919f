/* SPDX-License-Identifier: MIT */
/*
 * preload/inherit.c -- the interposer stays in the programs a server execs.
 *
 * `hpshm exec` hands the interposer to a server through its environment: LD_PRELOAD names
 * this library, and HPSHM_* variables carry the configuration, the threshold and the report
 * file.  Whatever the server execs with its own environment inherits them.  Some servers build
 * a new environment for the programs they exec, and then the interposer is silently gone:
 * nginx's binary upgrade (SIGUSR2) execs the new master with only TZ, the variables its `env`
 * directive names and its listening sockets, so the new master ran on 4 KiB pages with no
 * report and no message.
 *
 * So this file wraps the calls that start a program with an environment: execve, execv,
 * execvp, execvpe, execl, execle, execlp, fexecve, posix_spawn and posix_spawnp.  The C
 * library's own versions of the ones that take no environment call its internal execve, not
 * ours, so each is wrapped.  At load (set-up, in the constructor) it keeps the process's
 * LD_PRELOAD entry for this library and every HPSHM_* variable the interposer reads
 * (HPSHM_PRELOAD_MIN_SIZE, HPSHM_PRELOAD_REPORT, HPSHM_<KEY> of the library's key table) as
 * the process was started with them.  At an exec, the new environment gets what it lacks:
 *   - LD_PRELOAD naming this library, when the new environment has no LD_PRELOAD at all and
 *     the process was started with this library in its LD_PRELOAD;
 *   - each kept HPSHM_* variable the new environment does not set.
 * A new environment that sets LD_PRELOAD itself without this library, even to nothing
 * (`env LD_PRELOAD= cmd`), made its choice: it goes to the kernel as it is, with nothing
 * added.  A variable it sets keeps its value.  Nothing else of the process's environment is
 * put back: only what `hpshm exec` set, and only in processes that loaded the interposer.
 *
 * An exec may come from a vfork() child, or from a fork() child of a threaded program, where
 * only async-signal-safe functions may run.  So these wrappers allocate nothing and take no
 * lock: the kept variables are static, written once before `kept_ready` is published; a new
 * environment is assembled in an array on the stack, of at most INHERIT_ENV_MAX entries (a
 * larger environment that lacks the variables goes unchanged, and stderr says so); the next
 * definitions were looked up at load.  setuid, setgid and file-capability programs keep
 * nothing (the set-up stops before this), so they add nothing to what they exec.
 *
 * Not covered: system() and popen() (the C library starts the shell through its internal
 * spawn, with the process's own environ: only a program that emptied its own environ loses
 * the interposer there), execveat(), and programs that make the execve system call
 * themselves.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INHERIT_MAX_VARS 48   /* HPSHM_* variables kept: the key table has about 20 */
#define INHERIT_TEXT_MAX 8192 /* their "NAME=value" text, all together */
#define INHERIT_ENV_MAX  1024 /* entries of a new environment assembled on the stack */
#define INHERIT_ARGS_MAX 1024 /* arguments of an execl*() call */

static const char preload_var[] = "LD_PRELOAD=";

/* What the process was started with, kept by preload_inherit_setup(). */
static char kept_text[INHERIT_TEXT_MAX];   /* the HPSHM_* entries, each "NAME=value" and a NUL */
static char *kept[INHERIT_MAX_VARS];       /* each entry, in kept_text */
static size_t kept_name[INHERIT_MAX_VARS]; /* the length of each entry's name with its '=' */
static int nkept;                          /* entries in kept */
static char kept_preload[4096 + sizeof(preload_var)]; /* "LD_PRELOAD=" + this library; empty: none */
static const char *lib_path;               /* this library's path, in kept_preload */
static const char *lib_base;               /* its last component */
static atomic_int kept_ready;              /* 1 once the above are written */
static atomic_int too_big_said;            /* an environment too large was said once */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			char *const[], char *const[]);

/* The next definitions, looked up at load: an exec may come where dlsym() must not run. */
static execve_fn next_execve_fn;
static execve_fn next_execvpe_fn;
static fexecve_fn next_fexecve_fn;
static spawn_fn next_spawn_fn;
static spawn_fn next_spawnp_fn;

/* dlsym(RTLD_NEXT, name) into a function pointer of any type (ISO C has no direct cast). */
static void next_lookup(const char *name, void *fn, size_t size)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (sym)
		memcpy(fn, &sym, size);
}

/* Is v (the part of "LD_PRELOAD=v" after '=') a list that names this library? */
static int lists_this_library(const char *v)
{
	size_t base_len = strlen(lib_base), path_len = strlen(lib_path);

	/* The loader splits LD_PRELOAD on spaces and colons. */
	while (*v) {
		size_t n = strcspn(v, ": ");
		const char *slash = NULL;

		for (size_t i = 0; i < n; i++)
			if (v[i] == '/')
				slash = v + i;
		/* The same path, or the same file name (a bare name the loader searched for). */
		if ((n == path_len && memcmp(v, lib_path, n) == 0) ||
		    (n - (size_t)(slash ? slash + 1 - v : 0) == base_len &&
		     memcmp(slash ? slash + 1 : v, lib_base, base_len) == 0))
			return 1;
		v += n;
		while (*v == ':' || *v == ' ')
			v++;
	}
	return 0;
}

/* Is entry ("NAME=value") one of the variables the interposer reads? */
static int is_ours(const char *entry, size_t name_len)
{
	static const char *const preload_vars[] = { "HPSHM_PRELOAD_MIN_SIZE", "HPSHM_PRELOAD_REPORT" };
	const char *key;

	if (name_len <= 6 || strncmp(entry, "HPSHM_", 6) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(preload_vars) / sizeof(preload_vars[0]); i++)
		if (strlen(preload_vars[i]) == name_len && memcmp(entry, preload_vars[i], name_len) == 0)
			return 1;
	for (unsigned k = 0; (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
		size_t i = 0;

		for (; key[i] && 6 + i < name_len; i++)
			if (entry[6 + i] != (key[i] >= 'a' && key[i] <= 'z' ? key[i] - 'a' + 'A' : key[i]))
				break;
		if (key[i] == '\0' && 6 + i == name_len)
			return 1;
	}
	return 0;
}

void preload_inherit_setup(void)
{
	const char *ld = getenv("LD_PRELOAD");
	size_t used = 0;
	Dl_info info;

	preload_inside++; /* dlsym and dladdr may allocate, and the allocator may map */
	next_lookup("execve", &next_execve_fn, sizeof(next_execve_fn));
	next_lookup("execvpe", &next_execvpe_fn, sizeof(next_execvpe_fn));
	next_lookup("fexecve", &next_fexecve_fn, sizeof(next_fexecve_fn));
	next_lookup("posix_spawn", &next_spawn_fn, sizeof(next_spawn_fn));
	next_lookup("posix_spawnp", &next_spawnp_fn, sizeof(next_spawnp_fn));

	/* This library's path as the loader opened it: what LD_PRELOAD gets back. */
	memset(&info, 0, sizeof(info));
	if (dladdr(&nkept, &info) && info.dli_fname && info.dli_fname[0] &&
	    strlen(info.dli_fname) < sizeof(kept_preload) - sizeof(preload_var)) {
		snprintf(kept_preload, sizeof(kept_preload), "%s%s", preload_var, info.dli_fname);
		lib_path = kept_preload + sizeof(preload_var) - 1;
		lib_base = strrchr(lib_path, '/') ? strrchr(lib_path, '/') + 1 : lib_path;
		/* Loaded some other way (/etc/ld.so.preload, a dependency): LD_PRELOAD is not ours to set. */
		if (!ld || !lists_this_library(ld))
			kept_preload[0] = '\0';
	}
	preload_inside--;

	for (char **e = environ; e && *e && nkept < INHERIT_MAX_VARS; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = strlen(*e) + 1;

		if (!eq || !is_ours(*e, (size_t)(eq - *e)))
			continue;
		if (used + len > sizeof(kept_text)) {
			preload_say("%.*s is not kept for the programs this one execs: the HPSHM_* variables exceed %d "
				    "bytes", (int)(eq - *e), *e, INHERIT_TEXT_MAX);
			continue;
		}
		memcpy(kept_text + used, *e, len);
		kept[nkept] = kept_text + used;
		kept_name[nkept++] = (size_t)(eq - *e) + 1;
		used += len;
	}
	atomic_store_explicit(&kept_ready, 1, memory_order_release);
}

/*
 * The environment an exec should get: envp itself when it lacks nothing (or made its own
 * choice of LD_PRELOAD), else envp with the kept variables added, assembled in out (room
 * for cap entries).  Allocates nothing.
 */
static char *const *inherit_env(char *const *envp, char **out, size_t cap)
{
	static char *const empty[] = { NULL };
	uint64_t present = 0;
	int need_preload = 0, missing = 0;
	size_t n = 0;

	if (!atomic_load_explicit(&kept_ready, memory_order_acquire) || preload_inside ||
	    (!kept_preload[0] && nkept == 0))
		return envp;
	if (!envp)
		envp = empty; /* Linux takes a NULL environment as an empty one */
	for (; envp[n]; n++) {
		const char *e = envp[n];

		if (strncmp(e, preload_var, sizeof(preload_var) - 1) == 0) {
			if (!lib_path || !lists_this_library(e + sizeof(preload_var) - 1))
				return envp; /* the program's own LD_PRELOAD: its choice */
			need_preload = -1;
			continue;
		}
		if (e[0] != 'H')
			continue;
		for (int k = 0; k < nkept; k++)
			if (strncmp(e, kept[k], kept_name[k]) == 0)
				present |= (uint64_t)1 << k;
	}
	need_preload = need_preload == 0 && kept_preload[0];
	for (int k = 0; k < nkept; k++)
		missing += !(present & ((uint64_t)1 << k));
	if (!need_preload && missing == 0)
		return envp;
	if (n + (size_t)missing + 2 > cap) {
		int expected = 0;

		if (atomic_compare_exchange_strong(&too_big_said, &expected, 1))
			preload_say("an exec with an environment of %zu variables lacks the interposer's "
				    "(LD_PRELOAD, HPSHM_*); more than %d cannot be completed here, so the program "
				    "starts without them", n, INHERIT_ENV_MAX);
		return envp;
	}
	memcpy(out, envp, n * sizeof(*out));
	if (need_preload)
		out[n++] = kept_preload;
	for (int k = 0; k < nkept; k++)
		if (!(present & ((uint64_t)1 << k)))
			out[n++] = kept[k];
	out[n] = NULL;
	return out;
}

static int inherit_execve(const char *path, char *const argv[], char *const envp[])
{
	char *fixed[INHERIT_ENV_MAX];

	envp = inherit_env(envp, fixed, INHERIT_ENV_MAX);
	if (next_execve_fn)
		return next_execve_fn(path, argv, envp);
	return (int)syscall(SYS_execve, path, argv, envp);
}

static int inherit_execvpe(const char *file, char *const argv[], char *const envp[])
{
	char *fixed[INHERIT_ENV_MAX];

	if (!next_execvpe_fn) {
		errno = ENOSYS;
		return -1;
	}
	return next_execvpe_fn(file, argv, inherit_env(envp, fixed, INHERIT_ENV_MAX));
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	return inherit_execve(path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
	return inherit_execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return inherit_execvpe(file, argv, envp);
}

int execvp(const char *file, char *const argv[])
{
	return inherit_execvpe(file, argv, environ);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	char *fixed[INHERIT_ENV_MAX];

	if (!next_fexecve_fn) {
		errno = ENOSYS;
		return -1;
	}
	return next_fexecve_fn(fd, argv, inherit_env(envp, fixed, INHERIT_ENV_MAX));
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char *fixed[INHERIT_ENV_MAX];

	if (!next_spawn_fn)
		return ENOSYS;
	return next_spawn_fn(pid, path, actions, attr, argv, inherit_env(envp, fixed, INHERIT_ENV_MAX));
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char *fixed[INHERIT_ENV_MAX];

	if (!next_spawnp_fn)
		return ENOSYS;
	return next_spawnp_fn(pid, file, actions, attr, argv, inherit_env(envp, fixed, INHERIT_ENV_MAX));
}

/*
 * The execl family: the arguments up to the NULL into an array (and, for execle, the
 * environment after it).  More than INHERIT_ARGS_MAX is refused with E2BIG: these calls take
 * their arguments written out in the program's source.
 */
static int collect_args(const char *arg, va_list ap, char **argv, char ***envp)
{
	size_t n = 0;

	for (const char *a = arg; a; a = va_arg(ap, const char *)) {
		if (n + 1 >= INHERIT_ARGS_MAX) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = (char *)(uintptr_t)a;
	}
	argv[n] = NULL;
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

int execl(const char *path, const char *arg, ...)
{
	char *argv[INHERIT_ARGS_MAX];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, NULL);
	va_end(ap);
	return rc < 0 ? rc : inherit_execve(path, argv, environ);
}

int execle(const char *path, const char *arg, ...)
{
	char *argv[INHERIT_ARGS_MAX], **envp = NULL;
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, &envp);
	va_end(ap);
	return rc < 0 ? rc : inherit_execve(path, argv, envp);
}

int execlp(const char *file, const char *arg, ...)
{
	char *argv[INHERIT_ARGS_MAX];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, NULL);
	va_end(ap);
	return rc < 0 ? rc : inherit_execvpe(file, argv, environ);
}
