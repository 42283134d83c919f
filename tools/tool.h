/* SPDX-License-Identifier: MIT */
/*
 * tools/tool.h -- what the subcommands of the `hpshm` tool share.
 *
 * Exit codes are part of the interface scripts rely on: 0 success, 1 the machine said no
 * (or a system file could not be read), 2 the command line was wrong.  A usage error always
 * names the bad argument and shows the accepted form, so nobody has to read the source.
 */
#ifndef HPSHM_TOOLS_TOOL_H
#define HPSHM_TOOLS_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "hpshm.h"

#define TOOL_EXIT_OK    0
#define TOOL_EXIT_FAIL  1
#define TOOL_EXIT_USAGE 2

/* The subcommands: argv[0] is the subcommand's name. */
int cmd_providers(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_bench_worker(int argc, char **argv);   /* hidden: the worker `hpshm bench` spawns */
#define BENCH_WORKER_CMD_NAME "__bench-worker"      /* bench/bench.h BENCH_WORKER_CMD */
int cmd_run(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_gc(int argc, char **argv);

int cmd_manual(int argc, char **argv);         /* hidden: man page parts for the build (tools/manual.c) */
#define MANUAL_CMD_NAME "__manual"
int cmd_complete(int argc, char **argv);       /* hidden: candidates for the shells' completion (tools/complete.c) */
#define COMPLETE_CMD_NAME "__complete"

/* The command table, for listings: the name of command index (0, 1, ...) with its usage line
 * (without "hpshm "), its one-line summary and the rest of its help; NULL past the last. */
const char *tool_command(unsigned index, const char **synopsis, const char **summary, const char **help);

/*
 * The options of a command as its help lists them ("  --size SIZE   ..."): name ("--size")
 * and argument word ("SIZE", "" for a flag); "--json | --csv" gives two.  Returns how many
 * there are (may exceed max).  The completion offers what `hpshm help CMD` lists, and the man
 * page shows the same lines (tools/manual.c), so neither can say other than the help.
 */
struct tool_opt {
	char name[32];  /* "--size" */
	char arg[32];   /* "SIZE", "KV", "FILE"; "" for a flag */
};
int tool_options(const char *help, struct tool_opt *out, int max);
/* How much of an option line (after its indent) names the option: "--size SIZE", "--json |
 * --csv"; the rest is what it does. */
size_t tool_option_tag(const char *line, size_t len);

/* "hpshm CMD: " + message on stderr, then "usage: ..." for cmd and a pointer to help. */
int tool_usage_error(const char *cmd, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;
/* "hpshm CMD: error: " + message on stderr.  Returns TOOL_EXIT_FAIL. */
int tool_fail(const char *cmd, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;

/*
 * --json (tools/envelope.c): every command prints one envelope, {"ok", "version", "command",
 * "result", "error"}, the error in hpshm_error's fields (doc/schema/envelope.json).
 * tool_json_set() is the dispatch's: the command named printing JSON.  A command writes
 * tool_json_open(), its result value, tool_json_close() (code 0: "error" is null).
 * tool_json_fail() prints the whole envelope with result null and the error; the usage and
 * failure helpers above call tool_json_usage()/tool_json_message() themselves.  One document
 * per run: each does nothing once one was printed, or when the command prints text.
 */
struct json;
void tool_json_set(const char *cmd);
int  tool_json_on(void);
void tool_json_open(struct json *j, int ok);
int  tool_json_close(struct json *j, int code, const hpshm_error *err);
void tool_json_error_record(struct json *j, int code, const hpshm_error *err);
void tool_json_fail(int code, const hpshm_error *err);
void tool_json_usage(const char *msg, const char *hint);
void tool_json_message(int code, const char *msg);

/* Load the provider modules HPSHM_PROVIDER_MODULES names (tools/modules.c): TOOL_EXIT_OK, or
 * TOOL_EXIT_FAIL with the module, the loader's reason and the fix on stderr. */
int tool_load_modules(void);
/* A provider key's type as a word ("path"), and its keys, one per line, for listings. */
const char *tool_key_type(unsigned type);
void tool_print_keys(const char *provider, const char *indent);

/* Print the help of one subcommand on stdout; -1 if there is no such subcommand. */
int tool_help(const char *cmd);

/*
 * Option scanning shared by every subcommand: "--name VALUE" and "--name=VALUE".
 * tool_opt_value() returns 1 and sets *value when argv[*i] is that option (advancing *i
 * past a separate value), 0 when it is another argument, -1 (usage error already printed)
 * when the value is missing.
 */
int tool_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value);
/* 1 when argv[i] is the flag "--name" exactly; "--name=..." is a usage error (-1). */
int tool_opt_flag(const char *cmd, const char *arg, const char *name);

/*
 * A size argument: hpshm_size_parse, and also > 0.  0, or TOOL_EXIT_USAGE with the error
 * (naming what, e.g. "--size", and the text) already printed.
 */
int tool_parse_size(const char *cmd, const char *what, const char *text, size_t *out);

/*
 * A configuration as the library would build it for a server started here: the
 * environment (HPSHM_*), then the --config text with API precedence.  Returns 0, or the
 * exit code with the error already printed (2 for a bad --config, 1 for a bad variable).
 */
int tool_config(const char *cmd, const char *kv, hpshm_config **out);

/*
 * The huge page size the configuration asks for: its huge_page_size key resolved against
 * what the kernel offers ("default", "largest" or a size).  0 when the kernel has no huge
 * pages or the value names a size the kernel lacks.
 */
size_t tool_config_page_size(const hpshm_config *cfg);

/* Capabilities as words, "huge reattach named fd" (or "-" when none). */
char *tool_caps_words(unsigned caps, char *buf, size_t len);

/* A page size in the kernel's form for pagesize= and hugepagesz=: "2M", "1G", "64K". */
char *tool_kernel_size(size_t size, char *buf, size_t len);

/* The comma list of the sizes the kernel offers, for error messages ("2MiB, 1GiB"). */
char *tool_offered_sizes(char *buf, size_t len);

/* ---- page sizes the kernel does not offer now (tools/pagesize.c) ---- */

/* The huge page sizes the processors of this architecture can map, ascending: the count (0
 * where the tool has no table for the processor); *arch names it ("x86-64"). */
int tool_possible_page_sizes(size_t *out, int max, const char **arch);
/* 1 if some processor of this architecture (with a kernel told to) could give pages of ps;
 * why gets the sizes that exist, for a refusal. */
int tool_page_size_possible(size_t ps, char *why, size_t len);

/* How an operator gets pages of a size the kernel does not offer now: each an empty string
 * where it does not apply. */
struct tool_pages_fix {
	char boot[96];           /* kernel command line: "hugepagesz=1G hugepages=8" */
	char boot_default[64];   /* and, to make it the default size: "default_hugepagesz=1G" */
	char boot_how[512];      /* where the line goes, and when to add boot_default */
	char runtime[256];       /* at run time: "echo 8 > /sys/kernel/mm/hugepages/.../nr_hugepages" */
	char runtime_node[256];  /* the same on one NUMA node */
	char caveat[512];        /* why the run time way often fails */
	char cpu_check[256];     /* the command that shows whether the processor maps them */
	char offered_check[256]; /* the command that shows whether the kernel offers them */
};
/* Fill fix for pages pages of ps. */
void tool_pages_fix(size_t ps, size_t pages, struct tool_pages_fix *fix);

/* The name of an errno ("ENOMEM"), or on Windows of a GetLastError() code
 * ("ERROR_PRIVILEGE_NOT_HELD"); "0" for 0, "?" when unknown.  For text output. */
const char *tool_errno_name(int e);

/*
 * Is a cgroup or SysV limit "no limit"?  The port says HPSHM__UNLIMITED, but cgroup v1
 * writes its unlimited as the largest page-aligned counter (0x7ffffffffffff000 or a value
 * rounded to the huge page size), so anything at or above 2^62 bytes counts as unlimited:
 * no machine has that much memory.
 */
int tool_unlimited(uint64_t v);

/* A byte count for people, "unlimited" for tool_unlimited() values. */
char *tool_bytes(uint64_t v, char *buf, size_t len);

/* Nanoseconds as milliseconds, for reports. */
double tool_ms(uint64_t ns);

/* ---- NUMA (tools/numa.c) ---- */

struct hpshm__numa;
struct hpshm__pool;
struct json;

/* What one node of the configuration's numa= policy needs for a segment. */
struct tool_node_need {
	int           node;       /* the node's number */
	int           present;    /* 1 if the machine has it, with memory of its own */
	int           strict;     /* 1 for bind: a shortfall fails the create; 0: pages go elsewhere */
	unsigned long share;      /* pages of the segment meant for it */
	unsigned long free;       /* free pages of its pool now */
	unsigned long total;      /* its pool's size now */
	unsigned long target;     /* the pool size that leaves its share free (total if it has it) */
	char          file[160];  /* the file that sizes its pool, "" if none */
};

/* cfg's numa= as a policy (mode and nodes) and its text ("bind:0-1") in text.  Returns the mode. */
int tool_numa_policy(const hpshm_config *cfg, struct hpshm__numa *out, char *text, size_t len);
/* Per node of cfg's policy (interleave without nodes: every node with memory), what a segment
 * of pages pages of page_size needs: the count filled, 0 when the policy names no node
 * (default, local).  policy gets the policy's text. */
int tool_numa_needs(const hpshm_config *cfg, size_t pages, size_t page_size, struct tool_node_need *out, int max,
		    char *policy, size_t plen);
/* probe's nodes (each with its share of the pools) and what populate_threads gives for size. */
void tool_numa_probe_text(size_t size, const hpshm_config *cfg, const struct hpshm__pool *pools, int npools);
void tool_numa_probe_json(struct json *j, size_t size, const hpshm_config *cfg, const struct hpshm__pool *pools,
			  int npools);
/* check's lines: "populate_threads" and "nodes" ({"0": bytes, ...}, null when not read), and
 * the text line of where the pages landed (nothing when not read). */
void tool_numa_report_json(struct json *j, const hpshm_report *r);
void tool_numa_report_text(const hpshm_report *r);

/* ---- check --resize-to (tools/check_resize.c) ---- */

/* One step of the check: a resize from one size to another, and what was seen after it. */
struct check_resize_step {
	size_t from, to, size;      /* bytes: before, asked, hpshm_segment_size() after */
	double ms;                  /* the resize call, wall */
	long   pool_before;         /* the pool's free pages before, -1 without a huge page pool */
	long   pool_after;          /* after */
	long   pages;               /* pages the step should take or give back */
	long   moved;               /* pages the pool's free count moved by, that way */
	int    kept;                /* the pattern survived, and a grow's new pages took one */
};

struct check_resize {
	size_t   to;                   /* --resize-to */
	size_t   max;                  /* the segment's max_size */
	size_t   page_size;            /* its page size, verified */
	int      huge;                 /* on a huge page pool */
	char     provider[HPSHM_NAME_MAX];
	struct check_resize_step steps[2]; /* to TO, then back */
	unsigned nsteps;
	char     fail[HPSHM_MESSAGE_MAX + HPSHM_TEXT_MAX + 128]; /* what went wrong, "" if nothing */
};

/* Resize seg to cr->to and back, verifying each step.  0, or -1 with cr->fail said. */
int  check_resize_run(hpshm_segment *seg, struct check_resize *cr);
void check_resize_text(const struct check_resize *cr);
void check_resize_json(struct json *j, const struct check_resize *cr);
/* The providers that resize in place, "memfd_hugetlb, hugetlbfs, plain", for a fix. */
char *check_resize_providers(char *buf, size_t len);

#endif /* HPSHM_TOOLS_TOOL_H */
