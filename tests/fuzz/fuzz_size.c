/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_size.c -- hpshm_size_parse() on any text, and hpshm_size_format() on what
 * it accepts.
 *
 * Contract: HPSHM_EVALUE or HPSHM_EOVERFLOW with the output untouched, or 0 with a size that
 * hpshm_size_format() prints in exact units and hpshm_size_parse() reads back to the same
 * value; the formatter cuts safely at every buffer length.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char full[64];
	size_t v = 12345, back = 0;
	int rc = hpshm_size_parse(text, &v);

	if (rc < 0) {
		FUZZ_CHECK(rc == HPSHM_EVALUE || rc == HPSHM_EOVERFLOW, "\"%s\": %s", text, hpshm_errname(rc));
		FUZZ_CHECK(v == 12345, "\"%s\": %s, yet the output was written", text, hpshm_errname(rc));
		free(text);
		return 0;
	}
	FUZZ_CHECK(rc == 0, "\"%s\": returned %d", text, rc);
	hpshm_size_format(v, full, sizeof(full));
	rc = hpshm_size_parse(full, &back);
	FUZZ_CHECK(rc == 0 && back == v, "\"%s\" is %zu, printed \"%s\", read back as %zu (%s)", text, v, full, back,
		   hpshm_errname(rc));
	for (size_t len = 1; len <= strlen(full) + 1; len++) {
		char *buf = malloc(len);

		FUZZ_CHECK(buf != NULL, "out of memory");
		hpshm_size_format(v, buf, len);
		FUZZ_CHECK(strlen(buf) == len - 1 || !strcmp(buf, full), "%zu in %zu bytes: \"%s\"", v, len, buf);
		FUZZ_CHECK(strncmp(buf, full, len - 1) == 0, "%zu in %zu bytes: \"%s\" is not a prefix of \"%s\"", v, len,
			   buf, full);
		free(buf);
	}
	free(text);
	return 0;
}
