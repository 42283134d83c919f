/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cli_complete.c -- the tool's hidden commands for the shells and the man pages:
 * `hpshm __complete` offers what the tables hold (commands, options, keys, their values,
 * providers) and `hpshm __manual` writes every command and key into the pages.  Each is
 * checked against the source it must follow: `hpshm --help`'s list of commands, the library's
 * hpshm_config_key_name() and hpshm_provider_name(), so neither can drift from them.
 * Creates no segment.  scripts/check-man.sh renders the pages and drives the bash script.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

#define tool(...) hpt_tool(HPSHM_TOOL_PATH, __VA_ARGS__)

TestSuite(cli_complete, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 60);

/* Is word one whole line of text? */
static int has_line(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = text; (p = strstr(p, word)) != NULL; p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}

/* The commands `hpshm --help` lists, each followed by '\n', in buf. */
static void help_commands(char *buf, size_t len)
{
	struct hpt_run *r = tool("--help", NULL);
	const char *p = strstr(r->out, "commands:\n");
	size_t used = 0;

	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_assert(p, "no commands: in %s", r->out);
	buf[0] = '\0';
	for (p = strchr(p, '\n') + 1; strncmp(p, "  ", 2) == 0 && p[2] != ' '; p = strchr(p, '\n') + 1) {
		size_t w = strcspn(p + 2, " \n");

		used += (size_t)snprintf(buf + used, len - used, "%.*s\n", (int)w, p + 2);
	}
}

Test(cli_complete, offers_every_command_help_lists)
{
	char cmds[512];
	struct hpt_run *r;

	help_commands(cmds, sizeof cmds);
	cr_assert_geq(count_lines(cmds), 9, "%s", cmds);
	r = tool("__complete", "hpshm", "", NULL);
	cr_assert_eq(r->status, 0, "%s", r->err);
	for (char *c = cmds, *nl; (nl = strchr(c, '\n')) != NULL; c = nl + 1) {
		*nl = '\0';
		cr_expect(has_line(r->out, c), "'hpshm <TAB>' does not offer %s:\n%s", c, r->out);
	}
	r = tool("__complete", "hpshm", "pr", NULL);
	cr_expect(has_line(r->out, "probe") && has_line(r->out, "providers") && count_lines(r->out) == 2, "%s",
		  r->out);
}

Test(cli_complete, offers_the_values_of_huge_pages)
{
	struct hpt_run *r = tool("__complete", "hpshm", "check", "--config", "huge_pages=", NULL);

	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_expect_str_eq(r->out, "huge_pages=off\nhuge_pages=try\nhuge_pages=on\n");
	r = tool("__complete", "hpshm", "check", "--config=huge_pages=o", NULL);
	cr_expect_str_eq(r->out, "--config=huge_pages=off\n--config=huge_pages=on\n");
}

Test(cli_complete, offers_every_key_and_only_values_the_key_takes)
{
	const char *key;
	hpshm_config *cfg = NULL;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	for (unsigned k = 0; (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
		char word[80];
		struct hpt_run *r = tool("__complete", "hpshm", "probe", "--config", "", NULL);

		snprintf(word, sizeof word, "%s=", key);
		cr_expect(has_line(r->out, word), "--config <TAB> does not offer %s:\n%s", word, r->out);
		r = tool("__complete", "hpshm", "probe", "--config", word, NULL);
		for (char *v = r->out, *nl; (nl = strchr(v, '\n')) != NULL; v = nl + 1) {
			*nl = '\0';
			cr_assert(strncmp(v, word, strlen(word)) == 0, "%s offered for %s", v, word);
			if (nl[-1] != ':') /* a stem such as numa=bind: wants its nodes */
				cr_expect_eq(hpshm_config_set(cfg, key, v + strlen(word), NULL), 0, "%s is offered but refused",
					     v);
		}
	}
	hpshm_config_free(cfg);
}

Test(cli_complete, offers_every_provider_after_provider_and_after_a_comma)
{
	const char *name;
	struct hpt_run *r = tool("__complete", "hpshm", "check", "--config", "provider=", NULL);
	char want[128];

	cr_expect(has_line(r->out, "provider=auto"), "%s", r->out);
	for (unsigned i = 0; (name = hpshm_provider_name(i, NULL)) != NULL; i++) {
		snprintf(want, sizeof want, "provider=%s", name);
		cr_expect(has_line(r->out, want), "no %s:\n%s", want, r->out);
	}
	r = tool("__complete", "hpshm", "check", "--config", "provider=plain,", NULL);
	snprintf(want, sizeof want, "provider=plain,%s", hpshm_provider_name(0, NULL));
	cr_expect(has_line(r->out, want), "no %s:\n%s", want, r->out);
	cr_expect(has_line(r->out, "provider=plain,huge_pages="), "a key may follow too:\n%s", r->out);
}

Test(cli_complete, offers_the_options_its_help_lists_and_asks_the_shell_for_files_and_commands)
{
	struct hpt_run *r = tool("__complete", "hpshm", "check", "--", NULL);

	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_expect(has_line(r->out, "--size") && has_line(r->out, "--resize-to") && has_line(r->out, "--config") &&
		  has_line(r->out, "--json") && has_line(r->out, "--help"), "%s", r->out);
	r = tool("__complete", "hpshm", "bench", "--js", NULL);
	cr_expect_str_eq(r->out, "--json\n", "--json | --csv is two options");
	r = tool("__complete", "hpshm", "exec", "--report", "", NULL);
	cr_expect_str_eq(r->out, "::files\n");
	r = tool("__complete", "hpshm", "run", "--size", "1G", "--", "", NULL);
	cr_expect_str_eq(r->out, "::command\n");
	r = tool("__complete", "hpshm", "run", "--size", "1G", "--", "env", "", NULL);
	cr_expect_str_eq(r->out, "::files\n");
}

Test(cli_complete, manual_has_a_section_per_command_and_an_entry_per_key)
{
	char cmds[512], want[600];
	const char *key;
	struct hpt_run *r;

	help_commands(cmds, sizeof cmds);
	r = tool("__manual", "commands", NULL);
	cr_assert_eq(r->status, 0, "%s", r->err);
	for (char *c = cmds, *nl; (nl = strchr(c, '\n')) != NULL; c = nl + 1) {
		*nl = '\0';
		snprintf(want, sizeof want, ".SS \"hpshm %s\"", c);
		if (strcmp(c, "help") != 0) /* help is not in the table: man/hpshm.1.in has its section */
			cr_expect(has_line(r->out, want), "no %s", want);
	}
	r = tool("__manual", "keys", NULL);
	cr_assert_eq(r->status, 0, "%s", r->err);
	for (unsigned k = 0; (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
		snprintf(want, sizeof want, ".B %s", key);
		cr_expect(has_line(r->out, want), "no %s in:\n%s", want, r->out);
	}
	cr_expect(strstr(r->out, ".B huge_pages\n") && strstr(r->out, "Default: \\fBtry\\fR"), "%s", r->out);
	r = tool("__manual", "nosuch", NULL);
	cr_expect_eq(r->status, 2, "an unknown part is a usage error");
}

Test(cli_complete, manual_lists_each_provider_with_the_capabilities_providers_shows)
{
	static char list[8192];
	struct hpt_run *r = tool("providers", NULL);

	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_assert_lt(strlen(r->out), sizeof list, "%s", r->out);
	memcpy(list, r->out, strlen(r->out) + 1);
	r = tool("__manual", "providers", NULL);
	cr_assert_eq(r->status, 0, "%s", r->err);
	for (char *line = list, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		char want[300];
		size_t w = strcspn(line, " ");
		const char *caps = line + w + strspn(line + w, " ");

		*nl = '\0';
		if (line[0] == ' ' || w == 0) /* a provider's key, indented under it */
			continue;
		snprintf(want, sizeof want, ".B %.*s\n%s\n", (int)w, line, caps);
		cr_expect(strstr(r->out, want), "no\n%s\nin:\n%s", want, r->out);
	}
}
