/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_config.c -- hpshm_config_parse() and hpshm_config_set() on any text, then
 * every getter.
 *
 * The input goes whole to hpshm_config_parse() ("key=value,key=value"), then split at its
 * first '=' to hpshm_config_set(key, value).  Contract: 0, or a documented code with a
 * complete error record and the configuration byte for byte as it was (a multi-key operation
 * commits only when every item is good); then fuzz_check_getters().
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "fuzz.h"

static void check_failed(int rc, const hpshm_error *err, const struct hpshm_config *before,
			 const struct hpshm_config *cfg, const char *what, const char *text)
{
	fuzz_check_error(rc, err, what);
	FUZZ_CHECK(rc == HPSHM_EVALUE || rc == HPSHM_ENOKEY || rc == HPSHM_ENOPROVIDER || rc == HPSHM_EOVERFLOW,
		   "%s \"%s\": %s is not a configuration error", what, text, hpshm_errname(rc));
	FUZZ_CHECK(memcmp(before, cfg, sizeof(*cfg)) == 0, "%s \"%s\" failed (%s) but changed the configuration", what,
		   text, err->message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *eq = strchr(text, '=');
	struct hpshm_config before;
	hpshm_config *cfg;
	hpshm_error err;
	int rc;

	FUZZ_CHECK(hpshm_config_new(&cfg) == 0, "hpshm_config_new");

	before = *cfg;
	memset(&err, 0, sizeof(err));
	rc = hpshm_config_parse(cfg, text, &err);
	if (rc < 0)
		check_failed(rc, &err, &before, cfg, "parse", text);

	if (eq) {
		*eq = '\0';
		before = *cfg;
		memset(&err, 0, sizeof(err));
		rc = hpshm_config_set(cfg, text, eq + 1, &err);
		if (rc < 0)
			check_failed(rc, &err, &before, cfg, "set", text);
	}

	fuzz_check_getters(cfg);
	hpshm_config_free(cfg);
	free(text);
	return 0;
}
