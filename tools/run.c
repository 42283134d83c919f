/* SPDX-License-Identifier: MIT */
/*
 * tools/run.c -- `hpshm run --size SIZE [--config KV] -- CMD ARGS`: create a re-attachable
 * segment, run CMD with it, wait, destroy.
 *
 * This is the smallest server there is: it does what a server's postmaster does before it
 * execs a worker, so a program written against hpshm_segment_attach_env() can be tried, and
 * tested, without writing the creating side.  CMD is started by hpshm_child_spawn() (a name
 * without '/' is searched in PATH), which passes the token in HPSHM_TOKEN and keeps the
 * segment's descriptor open across exec where the provider has one.
 *
 * The configuration is built as for `check` (HPSHM_* environment, then --config), and then
 * reattach=exec is forced: a segment the child cannot attach would make the command
 * pointless.  A reattach=off given by the user is overridden with a note, not an error.
 *
 * The segment must be destroyed whatever happens to the child, or a named segment (SysV id,
 * hugetlbfs file, shm name) would keep its pages until `hpshm gc`.  So while waiting, run
 * catches SIGINT, SIGTERM and SIGHUP and forwards them to the child instead of dying, then
 * destroys the segment once the child has ended.  A signal the terminal sent (Ctrl-C:
 * si_code SI_KERNEL) already reached the child, which is in the same process group, so it
 * is not sent a second time.  Only SIGKILL of run itself leaves a segment behind, and that
 * is what `hpshm gc` is for.
 *
 * Windows sends Ctrl-C and Ctrl-Break to every process attached to the console, the child
 * included, and has no other signals to forward: there run only ignores SIGINT and SIGBREAK
 * (the C runtime's console handler maps the two events to them) while the child runs, so it
 * lives to destroy the segment.
 *
 * Exit status: the child's (128 + the signal if a signal ended it); 1 if the segment could
 * not be created or destroyed; 126 or 127 if CMD could not be started (as a shell does:
 * 127 when it was not found); 2 for a usage error.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/types.h> /* pid_t: the POSIX half alone; MSVC's <sys/types.h> has none */
#endif

#include "tool.h"

#define RUN_EXIT_CANNOT_EXEC 126
#define RUN_EXIT_NOT_FOUND   127

#ifdef _WIN32
/* The C runtime's console handler turns CTRL_C_EVENT into SIGINT and CTRL_BREAK_EVENT into
 * SIGBREAK, and answers "handled" for a signal set to SIG_IGN: the same as a
 * SetConsoleCtrlHandler() routine, without a Windows header in the tool. */
static const int run_forwarded[] = { SIGINT, SIGBREAK };
typedef void (*run_saved)(int); /* a handler signal() replaced */
#else
static const int run_forwarded[] = { SIGINT, SIGTERM, SIGHUP };
typedef struct sigaction run_saved;
#endif

/*
 * Shared with the signal handler.  A signal that arrives before the child's pid is known
 * is kept in run_pending and forwarded as soon as it is; the child inherits no blocked mask
 * from us, because hpshm_child_spawn() execs with the mask we have, and a worker must not start
 * with SIGTERM blocked.
 */
static volatile sig_atomic_t run_child_pid; /* 0 until the child runs */
static volatile sig_atomic_t run_pending;   /* a signal caught before that, or 0 */

#ifdef _WIN32
/* Nothing to forward (see above): the signal is only kept from ending us first. */
static int run_install_handlers(run_saved *old)
{
	int rc = 0;

	for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++) {
		old[i] = signal(run_forwarded[i], SIG_IGN);
		rc = old[i] == SIG_ERR ? -1 : rc;
	}
	return rc;
}

static void run_restore_handlers(const run_saved *old)
{
	for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++)
		if (old[i] != SIG_ERR)
			(void)signal(run_forwarded[i], old[i]);
}

static void run_forward(long long pid, int sig)
{
	(void)pid;
	(void)sig;
}
#else
static void run_on_signal(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno; /* kill() may change errno under the interrupted code */

	(void)ctx;
	if (si && si->si_code == SI_KERNEL)
		return; /* sent by the terminal to the whole foreground group: the child has it */
	if (run_child_pid > 0)
		(void)kill((pid_t)run_child_pid, sig);
	else
		run_pending = sig;
	errno = saved;
}

static int run_install_handlers(run_saved *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = run_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++)
		if (sigaction(run_forwarded[i], &sa, &old[i]) < 0)
			return -1;
	return 0;
}

static void run_restore_handlers(const run_saved *old)
{
	for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++)
		(void)sigaction(run_forwarded[i], &old[i], NULL);
}

static void run_forward(long long pid, int sig)
{
	(void)kill((pid_t)pid, sig);
}
#endif

static void run_print_error(const char *what, int code, const hpshm_error *err)
{
	fprintf(stderr, "hpshm run: %s: %s\n", what, err->message[0] ? err->message : hpshm_strerror(code));
	if (err->key[0])
		fprintf(stderr, "  key: %s\n", err->key);
	if (err->hint[0])
		fprintf(stderr, "  hint: %s\n", err->hint);
}

/* Every provider the failed create tried, as `check` prints them, so the reason is on screen. */
static void run_print_attempts(const hpshm_report *r)
{
	unsigned n = r->nattempts < HPSHM_MAX_ATTEMPTS ? r->nattempts : HPSHM_MAX_ATTEMPTS;

	for (unsigned i = 0; i < n; i++) {
		const hpshm_attempt *a = &r->attempts[i];

		fprintf(stderr, "  tried %s: %s%s%s\n", a->provider, a->result == 0 ? "ok" : hpshm_errname(a->result),
			a->reason[0] ? ": " : "", a->reason);
	}
}

/*
 * Did the user ask for reattach=off?  The value alone cannot say (off is also the default),
 * so look where the user could have written it.
 */
static int run_user_said_off(const char *kv)
{
	const char *env = getenv("HPSHM_REATTACH");

	if (env && strcmp(env, "off") == 0)
		return 1;
	return kv && strstr(kv, "reattach=off") != NULL;
}

/* What `hpshm run` was asked. */
struct run_args {
	const char *kv;        /* --config, or NULL */
	size_t      size;      /* --size */
	int         quiet;     /* --quiet */
	int         first_cmd; /* argv index of the command */
};

/* The options: 0, or the exit status of a usage error. */
static int run_parse(int argc, char **argv, struct run_args *o)
{
	const char *size_text = NULL;

	memset(o, 0, sizeof(*o));
	o->first_cmd = -1;
	for (int i = 1; i < argc; i++) {
		int r;

		if (strcmp(argv[i], "--") == 0) {
			o->first_cmd = i + 1;
			break;
		}
		if ((r = tool_opt_flag("run", argv[i], "--quiet")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			o->quiet = 1;
		} else if ((r = tool_opt_value("run", argc, argv, &i, "--size", &size_text)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if ((r = tool_opt_value("run", argc, argv, &i, "--config", &o->kv)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if (argv[i][0] == '-') {
			return tool_usage_error("run", "unexpected option '%s' (put the command after --)", argv[i]);
		} else {
			o->first_cmd = i; /* the command may also follow the options without "--" */
			break;
		}
	}
	if (!size_text)
		return tool_usage_error("run", "missing --size SIZE, e.g. --size 16MiB");
	if (o->first_cmd < 0 || o->first_cmd >= argc)
		return tool_usage_error("run", "missing the command to run after --");
	return tool_parse_size("run", "--size", size_text, &o->size);
}

/* The segment, created with reattach=exec: 0, or the exit status with the reason printed. */
static int run_create(const struct run_args *o, hpshm_segment **seg)
{
	hpshm_config *cfg = NULL;
	hpshm_report rep;
	hpshm_error err;
	char a[32];
	int rc;

	if ((rc = tool_config("run", o->kv, &cfg)) != 0)
		return rc;
	memset(&err, 0, sizeof(err));
	if (run_user_said_off(o->kv))
		fprintf(stderr, "hpshm run: note: reattach=off ignored; run always creates with reattach=exec\n");
	rc = hpshm_config_set(cfg, "reattach", "exec", &err);
	if (rc < 0) {
		run_print_error("cannot set reattach=exec", rc, &err);
		hpshm_config_free(cfg);
		return TOOL_EXIT_FAIL;
	}

	memset(&rep, 0, sizeof(rep));
	memset(&err, 0, sizeof(err));
	rc = hpshm_segment_create_ex(seg, o->size, cfg, &rep, &err);
	hpshm_config_free(cfg);
	if (rc < 0) {
		fprintf(stderr, "hpshm run: cannot create a re-attachable segment of %s\n",
			hpshm_size_format(o->size, a, sizeof(a)));
		run_print_error("error", rc, &err);
		if (strcmp(err.key, "reattach") == 0)
			fprintf(stderr, "  note: run needs a provider a child can re-attach: memfd_hugetlb, sysv_hugetlb, "
				"hugetlbfs or plain\n");
		run_print_attempts(&rep);
		return TOOL_EXIT_FAIL;
	}
	return 0;
}

/* The segment's token checked, and what was made said unless quiet: 0, or the exit status. */
static int run_announce(hpshm_segment *seg, int quiet)
{
	const hpshm_report *rep = hpshm_segment_report(seg);
	char token[HPSHM_TOKEN_MAX], a[32], b[32];
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	rc = hpshm_segment_token(seg, token, sizeof(token), &err);
	if (rc < 0) {
		run_print_error("cannot make the segment's token", rc, &err);
		return TOOL_EXIT_FAIL;
	}
	if (!quiet)
		fprintf(stderr, "hpshm run: %s segment, %s usable, %s pages (%s) at %p, token %s\n", rep->provider,
			hpshm_size_format(hpshm_segment_size(seg), a, sizeof(a)),
			hpshm_size_format(rep->page_size, b, sizeof(b)), rep->verified ? rep->verified_by : "unverified",
			hpshm_segment_address(seg), token);
	return 0;
}

/*
 * Run cmd with the segment and wait for it, forwarding signals meanwhile: 0 with its exit
 * status in *status (TOOL_EXIT_FAIL if it could not be waited for), or the exit status of a
 * command that could not be started.
 */
static int run_child(hpshm_segment *seg, char **cmd, int *status)
{
	run_saved old[sizeof(run_forwarded) / sizeof(run_forwarded[0])];
	hpshm_child child;
	hpshm_error err;
	int rc;

	/* Handlers first, so a signal during the spawn is kept for the child, not fatal to us. */
	run_child_pid = 0;
	run_pending = 0;
	if (run_install_handlers(old) < 0) {
		int saved = errno;

		run_restore_handlers(old);
		return tool_fail("run", "sigaction: %s", strerror(saved));
	}
	fflush(stdout);
	fflush(stderr);
	memset(&err, 0, sizeof(err));
	rc = hpshm_child_spawn(seg, cmd[0], cmd, NULL, &child, &err);
	if (rc < 0) {
		run_restore_handlers(old);
		run_print_error("cannot start the command", rc, &err);
		if (err.sys_errno == ENOENT)
			return RUN_EXIT_NOT_FOUND;
		return err.sys_errno ? RUN_EXIT_CANNOT_EXEC : TOOL_EXIT_FAIL;
	}
	run_child_pid = (sig_atomic_t)child.pid;
	if (run_pending) {
		run_forward(child.pid, run_pending);
		run_pending = 0;
	}

	memset(&err, 0, sizeof(err));
	rc = hpshm_child_wait(&child, status, &err);
	run_child_pid = 0;
	run_restore_handlers(old);
	if (rc < 0) {
		run_print_error("cannot wait for the command", rc, &err);
		*status = TOOL_EXIT_FAIL;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_args o;
	hpshm_segment *seg = NULL;
	int rc, status = 0;

	if ((rc = run_parse(argc, argv, &o)) != 0)
		return rc;
	if ((rc = run_create(&o, &seg)) != 0)
		return rc;
	if ((rc = run_announce(seg, o.quiet)) != 0)
		goto fail;
	if ((rc = run_child(seg, argv + o.first_cmd, &status)) != 0)
		goto fail;

	rc = hpshm_segment_destroy(seg);
	if (rc < 0) {
		fprintf(stderr, "hpshm run: destroying the segment failed: %s; it may still hold pages "
			"(see `hpshm ls`, `ipcs -m`)\n", hpshm_strerror(rc));
		return status ? status : TOOL_EXIT_FAIL;
	}
	return status;

fail:
	(void)hpshm_segment_destroy(seg); /* the segment must not outlive run (top comment) */
	return rc;
}
