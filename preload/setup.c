/* SPDX-License-Identifier: MIT */
/*
 * preload/setup.c -- the interposer's configuration, read once per process.
 *
 * The set-up runs in the constructor at load, or at the first request that could be taken
 * if that comes first.  It finds the next definitions (next.c), keeps the variables a
 * program this one execs should meet again (inherit.c), and reads HPSHM_PRELOAD_MIN_SIZE
 * (the threshold, default 32 MiB), HPSHM_PRELOAD_REPORT (the report file) and hpshm's own
 * HPSHM_<KEY> configuration, from which it reads the policy (huge_pages) and whether shmget()
 * is taken (provider=); the page size of a SysV segment is the library's choice, asked per
 * request (sysv.c).  The keys name, reattach and base_address make no sense
 * here (each region is an anonymous segment of its own) and are forced to their defaults.
 *
 * A malformed variable turns interposition off for the process, with one line that names
 * it; setuid, setgid and file-capability programs (AT_SECURE) are never set up.  Either way
 * every call then goes to the C library unchanged.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "preload.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

struct preload_config preload_cfg;

/*
 * What set-up has to say (a malformed configuration, a key ignored) waits for the first
 * request that could have been taken: a server is started through shells and control
 * programs that load this library too, and only the process that maps the memory should
 * say it, once.
 */
static char pending[1024];
static atomic_int pending_said;

/*
 * The process this one was forked from, set in the child by the pthread_atfork() handlers;
 * 0 in a process that was not forked since its exec.  A region's holder that is this
 * process's parent and has exited has left the region to this process.
 */
static atomic_long forking_pid; /* written by fork_prepare() in the process that forks */
static atomic_long fork_parent; /* copied from it by fork_child() in the new process */

static atomic_int init_state; /* 0 not started, 1 running, 2 done */
static atomic_long init_pid;  /* the process running the set-up */
static atomic_int enabled;    /* set-up succeeded: requests may be taken */

/* Raised around every call into hpshm: what hpshm calls comes back here and goes on. */
_Thread_local int preload_inside __attribute__((tls_model("initial-exec")));

/* Does the provider text ("auto,-a,-b") leave name out? */
static int provider_leaves_out(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; (p = strstr(p, name)) != NULL; p += n)
		if (p >= text + 1 && p[-1] == '-' && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Keep a line for say_pending(); lines past the room left are dropped. */
static void pend(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

static void pend(const char *fmt, ...)
{
	size_t used = strlen(pending);
	va_list ap;
	int n;

	if (used + 2 >= sizeof(pending))
		return;
	if (used)
		pending[used++] = '\n';
	va_start(ap, fmt);
	n = vsnprintf(pending + used, sizeof(pending) - used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(pending) - used)
		pending[used - (used ? 1 : 0)] = '\0';
}

/* Say what set-up kept, once per process, line by line. */
static void say_pending(void)
{
	char copy[sizeof(pending)];
	char *line, *next;
	int expected = 0;

	if (!pending[0] || !atomic_compare_exchange_strong(&pending_said, &expected, 1))
		return;
	memcpy(copy, pending, sizeof(copy));
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		preload_say("%s", line);
	}
}

/* Force a key every region must have; note it if the environment asked otherwise. */
static void setup_force(const char *key, const char *value)
{
	char was[256];
	hpshm_error err;

	if (hpshm_config_get(preload_cfg.cfg, key, was, sizeof(was)) >= 0 && strcmp(was, value) != 0)
		pend("%s=%s ignored: every intercepted region is an anonymous segment of its own", key, was);
	memset(&err, 0, sizeof(err));
	(void)hpshm_config_set(preload_cfg.cfg, key, value, &err);
}

/* The pthread_atfork() handlers: the child learns which process it was forked from. */
static void fork_prepare(void)
{
	atomic_store_explicit(&forking_pid, (long)getpid(), memory_order_relaxed);
}

static void fork_child(void)
{
	atomic_store_explicit(&fork_parent, atomic_load_explicit(&forking_pid, memory_order_relaxed),
			      memory_order_relaxed);
}

long preload_fork_parent(void)
{
	return atomic_load(&fork_parent);
}

/* The interposer's own variables: the threshold and the report file.  0, or -1 (kept to say). */
static int setup_variables(void)
{
	const char *v;

	preload_cfg.min_size = PRELOAD_DEFAULT_MIN_SIZE;
	v = getenv("HPSHM_PRELOAD_MIN_SIZE");
	if (v && (v[0] < '0' || v[0] > '9' || hpshm_size_parse(v, &preload_cfg.min_size) < 0)) {
		pend("HPSHM_PRELOAD_MIN_SIZE=\"%s\" is not a size (write e.g. 32MiB); interposition is off, every "
		     "call goes to the C library unchanged", v);
		preload_cfg.min_size = PRELOAD_DEFAULT_MIN_SIZE;
		return -1;
	}
	if (preload_cfg.min_size == 0)
		preload_cfg.min_size = 1; /* 0 means every size, as 1 does */
	v = getenv("HPSHM_PRELOAD_REPORT");
	if (v && v[0]) {
		if (strlen(v) >= sizeof(preload_cfg.report)) {
			pend("HPSHM_PRELOAD_REPORT is longer than %zu bytes; interposition is off, every call goes to "
			     "the C library unchanged", sizeof(preload_cfg.report) - 1);
			return -1;
		}
		memcpy(preload_cfg.report, v, strlen(v) + 1);
	}
	return 0;
}

/* hpshm's configuration (HPSHM_<KEY>), and what the interposer decides from it.  0, or -1 (kept to say). */
static int setup_config(void)
{
	hpshm_config *cfg = NULL;
	hpshm_error err;
	char value[256];

	if (hpshm_config_new(&cfg) < 0) {
		pend("out of memory for the configuration; interposition is off");
		return -1;
	}
	memset(&err, 0, sizeof(err));
	if (hpshm_config_load_env(cfg, &err) < 0) {
		pend("%s%s%s; interposition is off, every call goes to the C library unchanged",
		     err.message[0] ? err.message : hpshm_strerror(err.code), err.hint[0] ? "; " : "", err.hint);
		hpshm_config_free(cfg);
		preload_cfg.report[0] = '\0';
		return -1;
	}
	preload_cfg.cfg = cfg;
	setup_force("name", "");
	setup_force("reattach", "off");
	setup_force("base_address", "auto");
	preload_cfg.policy = HPSHM_HUGE_TRY;
	if (hpshm_config_get(cfg, "huge_pages", value, sizeof(value)) >= 0)
		preload_cfg.policy = strcmp(value, "on") == 0 ? HPSHM_HUGE_ON
				     : strcmp(value, "off") == 0 ? HPSHM_HUGE_OFF : HPSHM_HUGE_TRY;
	preload_cfg.sysv = !(hpshm_config_get(cfg, "provider", value, sizeof(value)) >= 0 &&
			     provider_leaves_out(value, "sysv_hugetlb"));
	return 0;
}

static void preload_setup(void)
{
	/* setuid, setgid or file capabilities: the caller's environment must not steer it. */
	if (getauxval(AT_SECURE))
		return;
	next_resolve_all();
	/* Before anything that can turn interposition off: a program this one execs should meet
	 * the same variables, and say the same about them. */
	preload_inherit_setup();
	(void)pthread_atfork(fork_prepare, NULL, fork_child);
	preload_cfg.base_page = (size_t)sysconf(_SC_PAGESIZE);
	if (setup_variables() < 0 || setup_config() < 0)
		return;
	atomic_store_explicit(&enabled, 1, memory_order_release);
}

/*
 * Set up once, on the first request that could be taken or at load, whichever comes first.
 * Returns whether requests may be taken.  A thread that arrives while another sets up waits
 * (set-up is short); a fork()ed child of a process caught mid-set-up never waits for a
 * thread it does not have, and takes nothing.
 */
static int preload_ready(void)
{
	int s = atomic_load_explicit(&init_state, memory_order_acquire);

	if (s != 2) {
		int expected = 0;

		if (atomic_compare_exchange_strong(&init_state, &expected, 1)) {
			atomic_store(&init_pid, (long)getpid());
			preload_inside++;
			preload_setup();
			preload_inside--;
			atomic_store_explicit(&init_state, 2, memory_order_release);
		} else {
			while (atomic_load_explicit(&init_state, memory_order_acquire) != 2) {
				if (atomic_load(&init_pid) != (long)getpid())
					return 0;
				sched_yield();
			}
		}
	}
	return atomic_load_explicit(&enabled, memory_order_acquire);
}

int preload_ready_for(size_t len)
{
	int ok = preload_ready();

	if (len < preload_cfg.min_size || preload_cfg.min_size == 0)
		return 0;
	say_pending();
	return ok;
}

__attribute__((constructor)) static void preload_load(void)
{
	(void)preload_ready();
}
