/* SPDX-License-Identifier: MIT */
/*
 * tools/manual.c -- `hpshm __manual PART`: the parts of the man pages that would drift if
 * they were written by hand, in roff, for man/generate.cmake to put into the templates in man/.
 *
 *   commands     a subsection per command of the table: usage, help text, options
 *   synopsis     the usage line of every command
 *   keys         every configuration key: values, default, description, its variable
 *   environment  the HPSHM_<KEY> variable of every key
 *   providers    the providers built in, with their capabilities
 *
 * The help texts are written for a terminal (tools/hpshm.c): paragraphs separated by blank
 * lines, and option lines "  --size SIZE   what it does" whose description may go on on
 * deeper-indented lines.  This turns paragraphs into .PP and options into .TP, so man
 * refills the text for its own width.  Run before the provider modules load: the pages
 * describe the build, not the builder's environment; defaults come from a configuration
 * that has read nothing (hpshm_config_new()).
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

/*
 * Text for roff: a backslash is written \e, a minus \- (so an option copied from the page is
 * ASCII), a `quoted command` bold, and a line never starts with a control character.
 */
static void roff_text(const char *s, size_t len, int line_start)
{
	int bold = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (line_start && (c == '.' || c == '\''))
			fputs("\\&", stdout);
		line_start = 0;
		if (c == '\\')
			fputs("\\e", stdout);
		else if (c == '-')
			fputs("\\-", stdout);
		else if (c == '`') {
			fputs(bold ? "\\fR" : "\\fB", stdout);
			bold = !bold;
		} else
			putchar(c);
	}
	if (bold)
		fputs("\\fR", stdout);
}

/* A usage or option tag: options bold, placeholders (SIZE, CMD) italic, the rest roman. */
static void roff_usage(const char *s)
{
	while (*s) {
		size_t sep = strspn(s, " \n[]|.,");
		size_t len;

		if (sep) {
			int space = 0;

			for (size_t i = 0; i < sep; i++) {
				if (s[i] == ' ' || s[i] == '\n') {
					if (!space)
						putchar(' ');
					space = 1;
				} else {
					putchar(s[i]);
					space = 0;
				}
			}
			s += sep;
			continue;
		}
		len = strcspn(s, " \n[]|");
		fputs(s[0] == '-' || (s[0] >= 'a' && s[0] <= 'z') ? "\\fB" : "\\fI", stdout);
		roff_text(s, len, 0);
		fputs("\\fR", stdout);
		s += len;
	}
}

/* The help text: paragraphs and option lists. */
static void roff_help(const char *help)
{
	int in_list = 0;

	for (const char *line = help; *line;) {
		const char *end = line + strcspn(line, "\n");
		size_t len = (size_t)(end - line);
		size_t indent = strspn(line, " ");

		if (len == 0) {
			in_list = 0;
			printf(".PP\n");
		} else if (strncmp(line, "  -", 3) == 0) {
			const char *gap = line + 2 + tool_option_tag(line + 2, len - 2);
			char tag[128];

			snprintf(tag, sizeof(tag), "%.*s", (int)(gap - line - 2), line + 2);
			printf(".TP\n");
			roff_usage(tag);
			putchar('\n');
			gap += strspn(gap, " ");
			if (gap < end) {
				roff_text(gap, (size_t)(end - gap), 1);
				putchar('\n');
			}
			in_list = 1;
		} else {
			if (in_list && indent < 4) {
				printf(".PP\n");
				in_list = 0;
			}
			roff_text(line + indent, len - indent, 1);
			putchar('\n');
		}
		line = *end ? end + 1 : end;
	}
}

static void manual_commands(void)
{
	const char *name, *synopsis, *summary, *help;

	for (unsigned i = 0; (name = tool_command(i, &synopsis, &summary, &help)) != NULL; i++) {
		printf(".SS \"hpshm %s\"\n.SY hpshm\n", name);
		roff_usage(synopsis);
		printf("\n.YS\n.PP\n");
		/* The summary as a sentence: it is written to follow the command's name in a list. */
		putchar(summary[0] >= 'a' && summary[0] <= 'z' ? summary[0] - 'a' + 'A' : summary[0]);
		roff_text(summary + 1, strlen(summary + 1), 0);
		printf(".\n.PP\n");
		roff_help(help);
	}
}

static void manual_synopsis(void)
{
	const char *name, *synopsis;

	for (unsigned i = 0; (name = tool_command(i, &synopsis, NULL, NULL)) != NULL; i++) {
		printf(".SY hpshm\n");
		roff_usage(synopsis);
		printf("\n.YS\n");
	}
}

/* HPSHM_HUGE_PAGES for huge_pages. */
static void manual_variable(const char *key, char *buf, size_t len)
{
	size_t i = 0;

	snprintf(buf, len, "HPSHM_");
	for (i = 0; key[i] && 6 + i + 1 < len; i++)
		buf[6 + i] = (char)(key[i] >= 'a' && key[i] <= 'z' ? key[i] - 'a' + 'A' : key[i]);
	buf[6 + i] = '\0';
}

static int manual_keys(int environment)
{
	hpshm_config *cfg = NULL;
	const char *key, *description, *values;

	if (hpshm_config_new(&cfg) < 0)
		return tool_fail(MANUAL_CMD_NAME, "cannot make a configuration");
	for (unsigned k = 0; (key = hpshm_config_key_name(k, &description, &values)) != NULL; k++) {
		char def[256], var[80];

		manual_variable(key, var, sizeof(var));
		if (hpshm_config_get(cfg, key, def, sizeof(def)) < 0)
			def[0] = '\0';
		if (environment) {
			printf(".TP\n.B %s\n", var);
			printf("sets \\fB%s\\fR (", key);
			roff_text(values, strlen(values), 0);
			printf("), as in \\fBhpshm\\-config\\fR(5).\n");
			continue;
		}
		printf(".TP\n.B %s\n", key);
		putchar(description[0] >= 'a' && description[0] <= 'z' ? description[0] - 'a' + 'A' : description[0]);
		roff_text(description + 1, strlen(description + 1), 0);
		printf(".\n.br\nValues: ");
		roff_text(values, strlen(values), 0);
		printf(".\n.br\nDefault: ");
		if (def[0]) {
			printf("\\fB");
			roff_text(def, strlen(def), 0);
			printf("\\fR");
		} else {
			printf("empty");
		}
		printf(".\n.br\nEnvironment: \\fB%s\\fR.\n", var);
	}
	hpshm_config_free(cfg);
	return TOOL_EXIT_OK;
}

static void manual_providers(void)
{
	const char *name;
	unsigned caps;

	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++) {
		char words[128];

		tool_caps_words(caps, words, sizeof(words)); /* before strlen(words): argument order is unspecified */
		printf(".TP\n.B %s\n", name);
		roff_text(words, strlen(words), 1);
		putchar('\n');
	}
}

int cmd_manual(int argc, char **argv)
{
	const char *part = argc == 2 ? argv[1] : "";

	if (strcmp(part, "commands") == 0)
		manual_commands();
	else if (strcmp(part, "synopsis") == 0)
		manual_synopsis();
	else if (strcmp(part, "keys") == 0)
		return manual_keys(0);
	else if (strcmp(part, "environment") == 0)
		return manual_keys(1);
	else if (strcmp(part, "providers") == 0)
		manual_providers();
	else
		return tool_usage_error(NULL, "%s takes one of commands, synopsis, keys, environment, providers",
					MANUAL_CMD_NAME);
	return TOOL_EXIT_OK;
}
