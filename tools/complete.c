/* SPDX-License-Identifier: MIT */
/*
 * tools/complete.c -- `hpshm __complete`: what the shells' completion scripts offer.
 *
 * The scripts (tools/completion/hpshm.bash, _hpshm) know nothing themselves: they pass the
 * words typed so far and print what this answers.  So the commands come from the command
 * table, each command's options from its help (tool_options()), the keys and their values
 * from the library's key table (hpshm_config_key_name()) and the providers from
 * hpshm_provider_name(), the modules HPSHM_PROVIDER_MODULES names included: the completion
 * cannot offer what the tool would refuse, nor miss what it accepts.
 *
 *   hpshm __complete PROGRAM WORD... CURRENT
 *
 * prints one candidate per line, each a whole word that starts with CURRENT (the scripts cut
 * what their shell already took as earlier words, e.g. "huge_pages=" before "on").  Two
 * lines ask the shell instead: "::files" (a file name) and "::command" (a program to run).
 * A candidate that ends with '=' or ':' wants more typed after it, with no space between.
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

size_t tool_option_tag(const char *line, size_t len)
{
	size_t tag = 0, i = 0;

	/* Words that start with '-', placeholders in capitals (SIZE, KEY=VALUE,...) and '|'. */
	while (i < len) {
		size_t w = i + strspn(line + i, " ");
		size_t e = w + strcspn(line + w, " ");

		if (e > len)
			e = len;
		if (w == e || !(line[w] == '-' || line[w] == '|' || (line[w] >= 'A' && line[w] <= 'Z')))
			break;
		for (size_t k = w; k < e; k++)
			if (line[k] >= 'a' && line[k] <= 'z' && line[w] != '-')
				return tag; /* a word of the description, "Exits ..." */
		tag = e;
		i = e;
	}
	return tag;
}

int tool_options(const char *help, struct tool_opt *out, int max)
{
	int n = 0;

	for (const char *line = help; line && *line;) {
		const char *end = line + strcspn(line, "\n");
		const char *p = line + 2;

		/* An option line: two spaces, then the option and its placeholder, then what it does. */
		if (strncmp(line, "  -", 3) == 0) {
			const char *tag_end = p + tool_option_tag(p, (size_t)(end - p));

			while (p < tag_end) {
				const char *piece = p + strcspn(p, "|");
				char word[2][32] = { "", "" };
				int w = 0;

				if (piece > tag_end)
					piece = tag_end;
				for (const char *q = p; q < piece && w < 2;) {
					size_t len;

					q += strspn(q, " ");
					len = strcspn(q, " |");
					if (q + len > piece)
						len = (size_t)(piece - q);
					if (len && len < sizeof(word[0]))
						snprintf(word[w++], sizeof(word[0]), "%.*s", (int)len, q);
					q += len;
				}
				if (word[0][0] == '-') {
					if (n < max) {
						snprintf(out[n].name, sizeof(out[n].name), "%s", word[0]);
						snprintf(out[n].arg, sizeof(out[n].arg), "%s", word[1]);
					}
					n++;
				}
				p = piece < tag_end ? piece + 1 : tag_end;
			}
		}
		line = *end ? end + 1 : end;
	}
	return n;
}

/* What goes in front of every candidate: "--config=" when the value was typed in one word with its option. */
static char complete_lead[40];

/* Offer prefix + word if it continues cur, the text typed after complete_lead. */
static void complete_offer(const char *cur, const char *prefix, const char *word)
{
	size_t np = strlen(prefix);

	if (strncmp(prefix, cur, strlen(cur) < np ? strlen(cur) : np) != 0)
		return;
	if (strlen(cur) > np && strncmp(word, cur + np, strlen(cur) - np) != 0)
		return;
	printf("%s%s%s\n", complete_lead, prefix, word);
}

/*
 * The values a key's table text names that a configuration takes as they are ("off", "try",
 * "on"; "auto" of "auto, or 1 to 64"), and the stems of forms with a placeholder ("bind:" of
 * "bind:NODES").  Each word is tried on a scratch configuration, so only what parses is offered.
 */
static void complete_key_values(const char *key, const char *values, const char *cur, const char *prefix)
{
	hpshm_config *cfg = NULL;

	if (hpshm_config_new(&cfg) < 0)
		return;
	for (const char *p = values; *p;) {
		size_t len = strcspn(p, ",");
		char item[64], word[64];
		const char *w = item;
		const char *rest;
		size_t wl;

		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		p += len + (p[len] == ',');
		w += strspn(w, " ");
		if (strncmp(w, "or ", 3) == 0)
			w += 3;
		wl = strspn(w, "abcdefghijklmnopqrstuvwxyz0123456789_");
		rest = w + wl;
		if (wl == 0 || wl >= sizeof(word) - 1 || (*rest && *rest != ':' && *rest != '['))
			continue; /* prose ("a size such as 2MB"), not a value */
		if (rest[strspn(rest, ":[]ABCDEFGHIJKLMNOPQRSTUVWXYZ")] != '\0')
			continue;
		snprintf(word, sizeof(word), "%.*s%s", (int)wl, w, *rest == ':' ? ":" : "");
		/* A whole word must parse; "bind:" is a stem that wants its NODES typed after it. */
		if (*rest != ':' && hpshm_config_set(cfg, key, word, NULL) < 0)
			continue;
		complete_offer(cur, prefix, word);
	}
	hpshm_config_free(cfg);
}

static void complete_providers(const char *cur, const char *prefix)
{
	const char *name;

	for (unsigned i = 0; (name = hpshm_provider_name(i, NULL)) != NULL; i++)
		complete_offer(cur, prefix, name);
}

/* --config's text: items separated by commas; an item without '=' continues the key before. */
static void complete_config(const char *cur)
{
	const char *item = strrchr(cur, ',');
	const char *eq;
	const char *key;
	char prefix[512], last_key[64] = "";

	item = item ? item + 1 : cur;
	for (const char *p = cur; p < item;) {
		size_t len = strcspn(p, ",");
		const char *e = memchr(p, '=', len);

		if (e)
			snprintf(last_key, sizeof(last_key), "%.*s", (int)(e - p), p);
		p += len + 1;
	}
	eq = strchr(item, '=');
	if (eq) {
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(eq + 1 - cur), cur);
		snprintf(last_key, sizeof(last_key), "%.*s", (int)(eq - item), item);
	} else {
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(item - cur), cur);
	}
	if (strcmp(last_key, "provider") == 0)
		complete_providers(cur, prefix);
	for (unsigned k = 0; (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
		const char *values;

		if (!eq) {
			char with_eq[80];

			snprintf(with_eq, sizeof(with_eq), "%s=", key);
			complete_offer(cur, prefix, with_eq);
		} else if (strcmp(key, last_key) == 0) {
			hpshm_config_key_name(k, NULL, &values);
			complete_key_values(key, values, cur, prefix);
		}
	}
}

/* The value of option o, typed so far as cur. */
static void complete_value(const struct tool_opt *o, const char *cur)
{
	if (strcmp(o->arg, "KV") == 0 || strncmp(o->arg, "KEY=", 4) == 0)
		complete_config(cur);
	else if (strcmp(o->arg, "FILE") == 0)
		printf("::files\n");
	else if (strcmp(o->name, "--providers") == 0) {
		const char *comma = strrchr(cur, ',');
		char prefix[256];

		snprintf(prefix, sizeof(prefix), "%.*s", comma ? (int)(comma + 1 - cur) : 0, cur);
		complete_offer(cur, prefix, "auto");
		complete_providers(cur, prefix);
	}
}

static const struct tool_opt *complete_find(const struct tool_opt *opts, int n, const char *name, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

/* words[0] is the command, words[n - 1] the word being typed. */
static void complete_command(const char *help, char **words, int n)
{
	struct tool_opt opts[32];
	int nopts = tool_options(help, opts, 32);
	const char *cur = words[n - 1];
	const char *eq = strchr(cur, '=');
	const struct tool_opt *o;

	if (nopts > 32)
		nopts = 32;
	for (int i = 1; i < n - 1; i++) {
		if (strcmp(words[i], "--") == 0) {
			printf("%s\n", i == n - 2 ? "::command" : "::files");
			return;
		}
	}
	if (n >= 3 && (o = complete_find(opts, nopts, words[n - 2], strlen(words[n - 2]))) && o->arg[0]) {
		complete_value(o, cur);
		return;
	}
	if (cur[0] == '-' && eq && (o = complete_find(opts, nopts, cur, (size_t)(eq - cur))) && o->arg[0]) {
		/* "--config=huge_pages=": the candidates keep "--config=" in front. */
		snprintf(complete_lead, sizeof(complete_lead), "%.*s", (int)(eq + 1 - cur), cur);
		complete_value(o, eq + 1);
		return;
	}
	if (cur[0] == '-') {
		for (int i = 0; i < nopts; i++)
			complete_offer(cur, "", opts[i].name);
		complete_offer(cur, "", "--help");
	}
}

int cmd_complete(int argc, char **argv)
{
	const char *name, *help;
	const char *cur;

	/* argv: __complete PROGRAM [COMMAND WORD...] CURRENT */
	if (argc < 3)
		return TOOL_EXIT_USAGE;
	cur = argv[argc - 1];
	if (argc == 3 || (argc == 4 && strcmp(argv[2], "help") == 0)) {
		for (unsigned i = 0; (name = tool_command(i, NULL, NULL, NULL)) != NULL; i++)
			complete_offer(cur, "", name);
		if (argc == 3) {
			complete_offer(cur, "", "help");
			complete_offer(cur, "", "--help");
			complete_offer(cur, "", "--version");
		}
		return TOOL_EXIT_OK;
	}
	for (unsigned i = 0; (name = tool_command(i, NULL, NULL, &help)) != NULL; i++) {
		if (strcmp(name, argv[2]) == 0) {
			complete_command(help, argv + 2, argc - 2);
			break;
		}
	}
	return TOOL_EXIT_OK;
}
