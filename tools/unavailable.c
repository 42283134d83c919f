/* SPDX-License-Identifier: MIT */
/*
 * tools/unavailable.c -- the subcommands a system cannot run, each saying why.
 *
 * Built instead of exec.c where it cannot work (Windows): `hpshm exec` is an LD_PRELOAD
 * interposer around a program that knows nothing of hpshm, which Windows has no counterpart
 * for.  The command stays in the table, so `hpshm help` lists what the tool can do
 * elsewhere, and running it says that it cannot here rather than "unknown command".
 */
#include <stdio.h>

#include "tool.h"

int cmd_exec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tool_fail("exec", "not available on this system: it needs the dynamic loader's LD_PRELOAD, "
			 "which only Linux offers; link the server with hpshm instead");
}
