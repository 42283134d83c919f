/* SPDX-License-Identifier: MIT */
/*
 * tools/hpshm.c -- the `hpshm` command line tool: the command table, dispatch and help.
 *
 * The tool is what an operator runs before and after configuring a server: `providers`
 * lists the mechanisms built in, `probe` shows every OS fact the library decides from,
 * `plan SIZE` says what is missing for a segment of that size and the exact commands that
 * fix it, and `check` creates a segment the way the server would and prints its verified
 * report.  It links the static library and asks ports/facts.h for the facts `probe` and
 * `plan` show (pools, mounts, cgroups): the very ones the providers read, so the tool and the
 * library cannot disagree about the machine.
 *
 * Usage errors exit 2 and name the argument; failures of the machine exit 1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ports/facts.h"
#include "ports/process.h"
#include "tool.h"

struct tool_cmd {
	const char *name;                 /* the subcommand as typed */
	int (*run)(int argc, char **argv);/* argv[0] is the name */
	const char *synopsis;             /* one usage line, without "hpshm " */
	const char *summary;              /* one line for `hpshm --help` */
	const char *help;                 /* the rest of `hpshm help CMD` */
};

/*
 * The words of the help that name one system's mechanisms: Linux's (and the other POSIX
 * systems', which share its providers) or Windows'.  A Windows operator reads of large pages,
 * sections and SeLockMemoryPrivilege, never of a hugetlbfs mount or CAP_IPC_LOCK that the
 * system does not have (issue 22; tests/test_cli.c greps the Windows tool's texts).
 */
#ifdef _WIN32
#define HELP_PROBE_FACTS                                                                          \
	"then shows the large page size Windows offers (GetLargePageMinimum()) and whether this\n" \
	"process's token holds SeLockMemoryPrivilege, which large pages need, and the effective\n"  \
	"configuration (defaults, then HPSHM_* environment variables, then --config).\n"
#define HELP_PROBE_OFFERS "providers, large pages, the privilege they need"
#define HELP_PROBE_CONFIG "huge_page_size=2MB,huge_pages=on"
#define HELP_PLAN_MISSING "(the privilege large pages need, the large page size this\nprocessor offers)"
#define HELP_CHECK_CONFIG "provider=windows_large,huge_pages=on"
#define HELP_RUN_CONFIG   "huge_pages=on,name=db"
#define HELP_RUN_SIGNALS                                                                          \
	"Ctrl-C reaches CMD from the console as it reaches the tool, which waits for CMD; the\n"     \
	"segment is destroyed after CMD ends, however it ends.\n"
#define HELP_RUN_STATUS   "Exit status: CMD's; 1 if the segment could\n"
#define HELP_EXEC                                                                                 \
	"Not available on Windows: it needs a dynamic loader that takes an interposer into an\n"    \
	"unmodified program.  Link the server with hpshm instead.\n"
#define HELP_LS_OBJECTS   "the sections named hpshm.*\nin this session's Local\\ and in Global\\"
#define HELP_EXEC_SUMMARY "not on Windows: run an unmodified program with its shared memory on huge pages"
#define HELP_BENCH_SUMMARY "measure each provider against plain pages and a raw section"
#define HELP_BENCH_PEERS  "a raw section made without hpshm and plain 4 KiB pages.\n"
#else
#define HELP_PROBE_FACTS                                                                          \
	"then shows each huge page pool (the kernel's figures, in pages),\n"                        \
	"the hugetlbfs mounts, CAP_IPC_LOCK and vm.hugetlb_shm_group, the hugetlb cgroup\n"         \
	"limits per page size and whether a fault-time SIGBUS risk exists, transparent huge\n"      \
	"pages, the SysV limits, the NUMA nodes (memory, CPUs, each node's share of every\n"       \
	"pool), the threads populate_threads gives for SIZE, and the effective configuration\n"    \
	"(defaults, then HPSHM_* environment variables, then --config).\n"
#define HELP_PROBE_OFFERS "providers, pools, mounts, privileges, cgroups"
#define HELP_PROBE_CONFIG "huge_page_size=1G,hugetlbfs_path=/mnt/hp"
#define HELP_PLAN_MISSING                                                                         \
	"(pool pages, the pools of the NUMA nodes numa= names, a hugetlbfs mount, the\n"           \
	"SysV privilege and limits, hugetlb cgroup\n"                                              \
	"limits)"
#define HELP_CHECK_CONFIG "provider=memfd_hugetlb,huge_pages=on"
#define HELP_RUN_CONFIG   "provider=sysv_hugetlb,huge_pages=on,name=db"
#define HELP_RUN_SIGNALS                                                                          \
	"SIGINT, SIGTERM and SIGHUP are passed on to CMD; the segment is destroyed after CMD\n"     \
	"ends, however it ends.\n"
#define HELP_RUN_STATUS   "Exit status: CMD's (128 + the signal if a signal ended it); 1 if the segment could\n"
#define HELP_EXEC                                                                                 \
	"Runs CMD with libhpshm_preload.so preloaded: its mmap(MAP_SHARED|MAP_ANONYMOUS) and\n"     \
	"shmget() requests of SIZE or more (default 32MiB) become huge page segments chosen by\n"   \
	"the configuration (HPSHM_* environment, then --config), as PostgreSQL, nginx or Apache\n"  \
	"make them, with no change to the program.  huge_pages=on makes such a request fail\n"      \
	"with ENOMEM when no huge pages can be had (the reason goes to CMD's stderr); try falls\n"   \
	"back to base pages and says so on stderr.  The tool checks everything first, then\n"      \
	"replaces itself with CMD.  doc/exec.md says what is intercepted and what is not.\n"     \
	"\n"                                                                                        \
	"  --config KV       configuration, e.g. huge_pages=on,huge_page_size=2MB; also takes\n"    \
	"                    preload_min_size=SIZE (name=, reattach= and base_address= do not\n"    \
	"                    apply: each region is an anonymous segment of its own)\n"              \
	"  --report FILE     append one JSON line per segment to FILE: size, provider, page\n"      \
	"                    size read back from the kernel, populate, every provider tried;\n"     \
	"                    and one at its end (unmap, IPC_RMID, exit).  FILE must be a\n"         \
	"                    regular file or not exist: a link, FIFO or device is refused\n"        \
	"  --min-size SIZE   requests below SIZE go to the C library unchanged (default 32MiB)\n"   \
	"  --json            before CMD starts, print the checks' verdict as one JSON document:\n"  \
	"                    the refusal, or what is set for CMD; CMD's own output follows it\n"   \
	"\n"                                                                                        \
	"A huge_page_size= that names a size is checked before CMD starts: the kernel must offer\n" \
	"it and its pool must hold the pages of a request of the threshold, or CMD is not started\n" \
	"(`hpshm plan SIZE --huge-page-size 1G` says how to get them).\n"                         \
	"\n"                                                                                        \
	"Exit status: CMD's; 127 if CMD was not found, 126 if it could not run; 2 if the tool\n"   \
	"refused the command line, 1 if the machine cannot give what the configuration asks\n"    \
	"(CMD is not started in either case).\n"
#define HELP_EXEC_SUMMARY "run an unmodified program with its large shared memory on huge pages"
#define HELP_BENCH_SUMMARY "measure each provider against plain pages, the raw system calls, THP and APR"
#define HELP_BENCH_PEERS  "the raw system calls without hpshm, plain 4 KiB pages, THP, and APR's apr_shm.\n"
#define HELP_LS_OBJECTS   "SysV keys, hugetlbfs files and POSIX shm\nobjects named hpshm.*"
#endif

static const struct tool_cmd tool_cmds[] = {
	{
		.name = "providers",
		.run = cmd_providers,
		.synopsis = "providers [--json]",
		.summary = "list the providers built in, in the order provider=auto tries them",
		.help =
		"One line per provider: its name and its capabilities as words\n"
		"(huge: backed by huge pages; reattach: a child started by exec can attach;\n"
		"named: segments can carry a name; fd: backed by a file descriptor), then one\n"
		"line per configuration key the provider declares.  Providers of modules that\n"
		"HPSHM_PROVIDER_MODULES lists (':'-separated shared objects) come first.\n"
		"\n"
		"  --json    one JSON array of {name, caps, keys}\n",
	},
	{
		.name = "probe",
		.run = cmd_probe,
		.synopsis = "probe [--json] [--size SIZE] [--config KEY=VALUE,...]",
		.summary = "show what this machine offers: " HELP_PROBE_OFFERS,
		.help =
		"Asks every provider whether it could create a segment of SIZE here, and why not;\n"
		HELP_PROBE_FACTS
		"\n"
		"  --size SIZE      segment size to probe for, e.g. 16MiB (default: one huge page)\n"
		"  --config KV      configuration, e.g. " HELP_PROBE_CONFIG "\n"
		"  --json           one JSON object instead of text\n",
	},
	{
		.name = "plan",
		.run = cmd_plan,
		.synopsis = "plan SIZE [--huge-page-size SIZE] [--config KEY=VALUE,...] [--json]",
		.summary = "say what a segment of SIZE needs and the commands that set it up",
		.help =
		"Computes the huge pages a segment of SIZE needs, checks what is missing right now\n"
		HELP_PLAN_MISSING " and prints the exact commands an operator runs, at run time and\n"
		"persistently, and the `hpshm check` command that verifies the result.  Pages are\n"
		"counted as create will map them for the configuration (HPSHM_* environment\n"
		"variables, then --config): a re-attachable or named segment keeps a header at its\n"
		"tail, which takes one more page when SIZE is a multiple of the page size.\n"
		"\n"
		"  --huge-page-size SIZE   page size to plan for (default: huge_page_size of the\n"
		"                          configuration, else the kernel's default huge page\n"
		"                          size).  For a size the kernel does not offer now but\n"
		"                          the processor can have (1G on a kernel booted without\n"
		"                          it) plan prints the kernel command line and the run\n"
		"                          time way to get it; any other size is refused\n"
		"  --config KV             configuration, e.g. reattach=exec or name=db\n"
		"  --json                  one JSON object instead of text\n",
	},
	{
		.name = "check",
		.run = cmd_check,
		.synopsis = "check --size SIZE [--resize-to SIZE] [--config KEY=VALUE,...] [--json]",
		.summary = "create a segment as a server would, print its verified report, destroy it",
		.help =
		"Builds the configuration a server would (HPSHM_* environment variables, then\n"
		"--config, which wins), creates a segment of SIZE, prints the report (provider,\n"
		"sizes, page size read back from the kernel, populate method, time and threads, and\n"
		"with numa= the bytes on each NUMA node, read back) and every provider tried, then\n"
		"destroys it.  Exits 0 only if the segment was created.\n"
		"With --resize-to, the segment is made with max_size = the larger of the two sizes\n"
		"(provider=auto takes the first provider that resizes in place), resized to that\n"
		"size and back, and each step verified: the size, the huge page pool's free pages\n"
		"(moved by exactly the pages of the step), the memory keeping a pattern.\n"
		"\n"
		"  --size SIZE      segment size, e.g. 16MiB, 2MB, 1G (required)\n"
		"  --resize-to SIZE grow (or shrink) the segment in place to SIZE, then back\n"
		"  --config KV      configuration, e.g. " HELP_CHECK_CONFIG "\n"
		"  --json           one JSON object instead of text (also on failure, with \"ok\": false)\n",
	},
	{
		.name = "bench",
		.run = cmd_bench,
		.synopsis = "bench [--size SIZE] [--workers N] [--rounds R] [--providers LIST] [--page-size LIST]\n"
			    "             [--fork | --threads] [--phase-seconds S] [--quick] [--reserve] [--json | --csv] [--svg FILE]",
		.summary = HELP_BENCH_SUMMARY,
		.help =
		"Runs N worker processes over one segment for each configuration and page size:\n"
		"a dependent pointer chase (ns per access), random read-modify-write (accesses/s,\n"
		"all workers), setup (create + populate per GiB, attach per worker), teardown, and\n"
		"page tables per worker with 1, 2 and 4 workers (exact).  Peers in the same rounds:\n"
		HELP_BENCH_PEERS
		"In each round the configurations take short turns, alive together where memory\n"
		"holds them (else one at a time); every figure is the median of the rounds by\n"
		"thread CPU time, with min and max, wall time beside it, and gains over plain and\n"
		"raw as the median [min-max] of per-round ratios (> 1 is better).\n"
		"Progress goes to stderr.  doc/bench.md explains how to read the results.\n"
		"\n"
		"  --size SIZE         region size (default 1GiB; 256MiB with --quick)\n"
		"  --workers N         worker processes in the timed phases (default 2)\n"
		"  --rounds R          rounds (default 5)\n"
		"  --providers LIST    auto, provider names, and the peers raw, thp, apr\n"
		"                      (default auto,plain,raw,thp,apr; plain is always measured)\n"
		"  --page-size LIST    huge page sizes, or all (default: the kernel's default)\n"
		"  --fork              start workers by fork (default: exec + re-attach, hpshm_child_spawn;\n"
		"                      not on Windows)\n"
		"  --threads           workers are threads of the bench itself\n"
		"  --phase-seconds S   CPU seconds per timed phase and worker (default 1; 0.25 quick)\n"
		"  --quick             a short run: 256MiB, 0.25 s phases\n"
		"  --reserve           (root) add the pages the run needs to the pool, restore at exit\n"
		"  --json | --csv      machine-readable output instead of the table\n"
		"  --svg FILE          also write a bar chart of the gains over plain\n"
		"  --quiet             no progress on stderr\n"
		"\n"
		"The bench changes no system setting without --reserve.  Ctrl-C stops it cleanly:\n"
		"workers are killed and reaped, memory released, the pool restored (exit 130).\n",
	},
	{
		.name = "run",
		.run = cmd_run,
		.synopsis = "run --size SIZE [--config KEY=VALUE,...] [--quiet] -- CMD [ARGS...]",
		.summary = "create a re-attachable segment, run CMD with it, wait, destroy it",
		.help =
		"Creates a segment of SIZE as a server would (HPSHM_* environment, then --config),\n"
		"always with reattach=exec (a reattach=off given is overridden, with a note), and\n"
		"prints one line on stderr: provider, size, verified page size, address and token.\n"
		"Then starts CMD with hpshm_child_spawn() (a name without '/' is searched in PATH): CMD\n"
		"finds the token in HPSHM_TOKEN and attaches with hpshm_segment_attach_env().\n"
		HELP_RUN_SIGNALS
		"\n"
		"  --size SIZE      segment size, e.g. 16MiB, 2MB, 1G (required)\n"
		"  --config KV      configuration, e.g. " HELP_RUN_CONFIG "\n"
		"  --quiet          do not print the segment line\n"
		"\n"
		HELP_RUN_STATUS
		"not be created or destroyed; 127 if CMD was not found, 126 if it could not run.\n",
	},
	{
		.name = "exec",
		.run = cmd_exec,
		.synopsis = "exec [--config KEY=VALUE,...] [--report FILE] [--min-size SIZE] [--json] -- CMD [ARGS...]",
		.summary = HELP_EXEC_SUMMARY,
		.help =
		HELP_EXEC,
	},
	{
		.name = "ls",
		.run = cmd_ls,
		.synopsis = "ls [--json]",
		.summary = "list the named hpshm segments on this machine, alive or dead",
		.help =
		"Lists what sits in hpshm's name space (" HELP_LS_OBJECTS
		"): provider, id, name, usable size, page size, creator pid,\n"
		"creation time and state: alive (a process holds it or its creator runs), dead\n"
		"(hpshm's, left behind by a crash: `hpshm gc` removes it), debris (nobody holds it\n"
		"but nothing proves it is hpshm's: only `hpshm gc --force` removes it, and another\n"
		"user's only with --all-users too) or foreign (a FIFO, a symbolic link, another\n"
		"program's segment: never removed).  Names and ids are shown escaped where a\n"
		"terminal would act on them: control and bidirectional characters as \\uXXXX (ESC\n"
		"as \\u001b), bytes that are not UTF-8 as \\xHH, a backslash as \\\\.\n"
		"On Windows: the sections named hpshm.* in this session's Local\\ and in Global\\,\n"
		"all alive (Windows deletes a section with its last holder), and other objects\n"
		"under that prefix as foreign.\n"
		"\n"
		"  --json    one JSON object {ok, objects: [...]}\n",
	},
	{
		.name = "gc",
		.run = cmd_gc,
		.synopsis = "gc [--force [--all-users]] [--dry-run] [--json]",
		.summary = "remove the named segments no live process holds",
		.help =
		"Removes every dead segment `hpshm ls` shows, and never a live or a foreign one:\n"
		"each is looked at again just before its removal.  Prints each segment with what\n"
		"was done (removed, kept, gone, failed) and why.  Exits 1 only if removing a dead\n"
		"segment failed.  On Windows it finds nothing to remove: a section goes with the\n"
		"last process that holds it, and hpshm never closes another process's handles.\n"
		"\n"
		"Dead segments go whoever owns them: their header or mark proves they are hpshm's.\n"
		"\n"
		"  --force      also remove debris that belongs to this user: objects nobody holds\n"
		"               that have no hpshm header or mark (left by an older hpshm, or\n"
		"               another program's); other users' debris is kept, even for root\n"
		"  --all-users  with --force: other users' debris too\n"
		"  --dry-run    say what would be removed, remove nothing\n"
		"  --json       one JSON object {dry_run, force, all_users, objects: [...], counts, ok}\n",
	},
};

#define TOOL_NCMDS (sizeof(tool_cmds) / sizeof(tool_cmds[0]))

static const struct tool_cmd *tool_find(const char *name)
{
	for (size_t i = 0; i < TOOL_NCMDS; i++)
		if (strcmp(tool_cmds[i].name, name) == 0)
			return &tool_cmds[i];
	return NULL;
}

/* "providers, probe, ..., help": the commands of the table, so an error's list cannot drift from it. */
static char *tool_command_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i <= TOOL_NCMDS; i++) {
		const char *name = i < TOOL_NCMDS ? tool_cmds[i].name : "help"; /* help is the tool's own */
		int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);

		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	return buf;
}

const char *tool_command(unsigned index, const char **synopsis, const char **summary, const char **help)
{
	if (index >= TOOL_NCMDS)
		return NULL;
	if (synopsis)
		*synopsis = tool_cmds[index].synopsis;
	if (summary)
		*summary = tool_cmds[index].summary;
	if (help)
		*help = tool_cmds[index].help;
	return tool_cmds[index].name;
}

static void tool_main_help(FILE *out)
{
	fprintf(out,
		"usage: hpshm COMMAND [ARGS]\n"
		"\n"
		"Shared memory with huge pages: probe the machine, plan a setup, check a segment.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < TOOL_NCMDS; i++)
		fprintf(out, "  %-10s %s\n", tool_cmds[i].name, tool_cmds[i].summary);
	fprintf(out,
		"  %-10s %s\n"
		"\n"
		"SIZE is a number of bytes with an optional unit in powers of 1024: 16MiB, 2MB, 1G.\n"
		"HPSHM_PROVIDER_MODULES: provider modules to load first (doc/providers.md).\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n"
		"Run `hpshm help COMMAND` for a command's options.  Library %s.\n",
		"help", "show this text, or a command's help", hpshm_version());
}

int tool_help(const char *cmd)
{
	const struct tool_cmd *c = tool_find(cmd);

	if (!c)
		return -1;
	printf("usage: hpshm %s\n\n%s", c->synopsis, c->help);
	return 0;
}

int tool_usage_error(const char *cmd, const char *fmt, ...)
{
	const struct tool_cmd *c = cmd ? tool_find(cmd) : NULL;
	char msg[HPSHM_MESSAGE_MAX], hint[HPSHM_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c)
		snprintf(hint, sizeof(hint), "usage: hpshm %s; run `hpshm help %s` for details", c->synopsis, c->name);
	else
		snprintf(hint, sizeof(hint), "run `hpshm --help` for the commands");
	fprintf(stderr, "hpshm%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", msg);
	if (c)
		fprintf(stderr, "usage: hpshm %s\nRun `hpshm help %s` for details.\n", c->synopsis, c->name);
	else
		fprintf(stderr, "Run `hpshm --help` for the commands.\n");
	tool_json_usage(msg, hint);
	return TOOL_EXIT_USAGE;
}

int tool_fail(const char *cmd, const char *fmt, ...)
{
	char msg[HPSHM_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hpshm %s: error: %s\n", cmd, msg);
	tool_json_message(HPSHM_EUNAVAILABLE, msg);
	return TOOL_EXIT_FAIL;
}

static int tool_main(int argc, char **argv)
{
	const struct tool_cmd *c;
	char names[256];

	if (argc < 2) {
		tool_main_help(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		tool_main_help(stdout);
		return TOOL_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("hpshm %s\n", hpshm_version());
		return TOOL_EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		if (argc == 2) {
			tool_main_help(stdout);
			return TOOL_EXIT_OK;
		}
		if (argc > 3)
			return tool_usage_error("help", "takes one COMMAND, got '%s' too; usage: hpshm help COMMAND",
						argv[3]);
		if (tool_help(argv[2]) < 0)
			return tool_usage_error(NULL, "help: unknown command '%s'; commands: %s", argv[2],
						tool_command_list(names, sizeof(names)));
		return TOOL_EXIT_OK;
	}
	/* Hidden, for the build: man page parts from the tables, built-in providers only (tools/manual.c). */
	if (strcmp(argv[1], MANUAL_CMD_NAME) == 0)
		return cmd_manual(argc - 1, argv + 1);
	/* JSON or not is decided before the command reads its options, so that a usage error in
	 * front of --json (`check --bogus --json`) or a module that does not load is JSON too
	 * (tools/envelope.c); only for a command whose help offers --json (not run). */
	if ((c = tool_find(argv[1])) != NULL)
		for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
			if (strcmp(argv[i], "--json") == 0 && strstr(c->help, "--json"))
				tool_json_set(c->name);
	/* Out-of-tree providers first, so every command sees them (tools/modules.c). */
	if (tool_load_modules() != TOOL_EXIT_OK)
		return TOOL_EXIT_FAIL;
	/* Hidden, for the shells' completion scripts: after the modules, so it offers theirs (tools/complete.c). */
	if (strcmp(argv[1], COMPLETE_CMD_NAME) == 0)
		return cmd_complete(argc - 1, argv + 1);
	/* The worker `hpshm bench` spawns: not a command for people, so not in the table. */
	if (strcmp(argv[1], BENCH_WORKER_CMD_NAME) == 0)
		return cmd_bench_worker(argc - 1, argv + 1);
	c = tool_find(argv[1]);
	if (!c)
		return tool_usage_error(NULL, "unknown command '%s'; commands: %s", argv[1],
					tool_command_list(names, sizeof(names)));
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			tool_help(c->name);
			return TOOL_EXIT_OK;
		}
	}
	return c->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
#ifdef _WIN32
	/* Everything inside is UTF-8, as the library's text is: the arguments come from the wide
	 * command line, since msvcrt's argv is in the ANSI code page and turns a path with a
	 * character it lacks into '?' (`hpshm run -- C:\dir-<U+6570>\child.exe` could not start). */
	int rc;

	if (hpshm__os_args_utf8(&argc, &argv) < 0) {
		fprintf(stderr, "hpshm: cannot take the command line in UTF-8: malloc: out of memory; free some memory "
			"and run it again\n");
		return TOOL_EXIT_FAIL;
	}
	rc = tool_main(argc, argv);
	free(argv);
	return rc;
#else
	return tool_main(argc, argv);
#endif
}
