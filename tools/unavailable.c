/*
 * tools/unavailable.c -- the subcommands a system cannot run yet, each saying why.
 *
 * Built instead of bench.c and exec.c where they cannot work (Windows): `hpshm exec` is an
 * LD_PRELOAD interposer around a program that knows nothing of hpshm, which Windows has no
 * counterpart for; `hpshm bench` starts its workers as POSIX processes (fork, socketpair,
 * POSIX threads) and has not been ported.  The commands stay in the table, so `hpshm help`
 * lists what the tool can do elsewhere, and running one says that it cannot here rather than
 * "unknown command".
 */
#include <stdio.h>

#include "tool.h"

int cmd_bench(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tool_fail("bench", "not available on this system yet: its workers are POSIX processes "
			 "(fork, socketpair, POSIX threads)");
}

int cmd_bench_worker(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tool_fail(BENCH_WORKER_CMD_NAME, "not available on this system yet");
}

int cmd_exec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tool_fail("exec", "not available on this system: it needs the dynamic loader's LD_PRELOAD, "
			 "which only Linux offers; link the server with hpshm instead");
}
