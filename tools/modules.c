/* SPDX-License-Identifier: MIT */
/*
 * tools/modules.c -- the tool's provider modules and the keys of providers.
 *
 * Before any command the tool loads the provider modules HPSHM_PROVIDER_MODULES names, so an
 * out-of-tree provider is listed by `hpshm providers`, probed by `hpshm probe` and usable in
 * every command like a built-in one; and it lists the configuration keys providers declare.
 * See doc/providers.md ("Your own provider") and doc/architecture.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "hpshm/provider.h"
#include "tool.h"

#ifdef _WIN32
#define MODULE_SEPARATOR ";"
#else
#define MODULE_SEPARATOR ":"
#endif

int tool_load_modules(void)
{
	const char *list = getenv("HPSHM_PROVIDER_MODULES");
	char *copy, *cursor, *path;
	int rc = TOOL_EXIT_OK;

	if (!list || !list[0])
		return TOOL_EXIT_OK;
	copy = malloc(strlen(list) + 1);
	if (!copy) {
		fprintf(stderr, "hpshm: error: HPSHM_PROVIDER_MODULES: out of memory\n");
		return TOOL_EXIT_FAIL;
	}
	memcpy(copy, list, strlen(list) + 1);
	cursor = copy;
	while ((path = hpshm__token_next(&cursor, MODULE_SEPARATOR)) != NULL) {
		hpshm_error err;

		memset(&err, 0, sizeof(err));
		if (hpshm_provider_load(path, &err) < 0) {
			fprintf(stderr, "hpshm: error: HPSHM_PROVIDER_MODULES=%s: %s\n", list,
				err.message[0] ? err.message : hpshm_strerror(err.code));
			if (err.hint[0])
				fprintf(stderr, "  hint: %s\n", err.hint);
			if (!err.key[0])
				snprintf(err.key, sizeof(err.key), "HPSHM_PROVIDER_MODULES");
			tool_json_fail(err.code ? err.code : HPSHM_EINVAL, &err);
			rc = TOOL_EXIT_FAIL;
			break;
		}
	}
	free(copy);
	return rc;
}

const char *tool_key_type(unsigned type)
{
	static const char *const words[] = { "?", "text", "path", "size", "number", "on/off" };

	return type < sizeof(words) / sizeof(words[0]) ? words[type] : "?";
}

void tool_print_keys(const char *provider, const char *indent)
{
	const struct hpshm_provider_key *k;

	for (unsigned i = 0; (k = hpshm_provider_key_at(provider, i)) != NULL; i++)
		printf("%s%-20s %-6s default \"%s\": %s\n", indent, k->name, tool_key_type(k->type), k->def, k->help);
}
