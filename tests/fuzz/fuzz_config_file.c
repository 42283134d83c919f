/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_config_file.c -- hpshm_config_load_file() on any file, then every getter.
 *
 * The input is written to a memfd and loaded through /proc/self/fd/N, so the loader reads it
 * with its own stdio, NUL bytes and overlong lines included.  Contract: 0, or a documented
 * code with a complete error record and the configuration as it was; then
 * fuzz_check_getters().  A config file is text: one with a NUL byte is never accepted (the
 * rest of its line would be silently ignored), and "line too long" is said only of a line
 * that is (1024 bytes or more with its newline).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/internal.h"
#include "fuzz.h"

/* The longest line of the input, its newline included. */
static size_t longest_line(const uint8_t *data, size_t size)
{
	size_t longest = 0, start = 0;

	for (size_t i = 0; i < size; i++)
		if (data[i] == '\n' || i + 1 == size) {
			if (i + 1 - start > longest)
				longest = i + 1 - start;
			start = i + 1;
		}
	return longest;
}

/* Does s end with suffix?  (The loader's own words end its message; the input's are quoted.) */
static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hpshm_config before;
	hpshm_config *cfg;
	hpshm_error err;
	char path[64];
	int fd, rc;

	fd = memfd_create("hpshm-fuzz-config", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0, "memfd_create");
	FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size, "write");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	FUZZ_CHECK(hpshm_config_new(&cfg) == 0, "hpshm_config_new");

	before = *cfg;
	memset(&err, 0, sizeof(err));
	rc = hpshm_config_load_file(cfg, path, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err, "load_file");
		FUZZ_CHECK(rc == HPSHM_EVALUE || rc == HPSHM_ENOKEY || rc == HPSHM_ENOPROVIDER || rc == HPSHM_EOVERFLOW,
			   "load_file: %s is not a configuration error: %s", hpshm_errname(rc), err.message);
		FUZZ_CHECK(memcmp(&before, cfg, sizeof(*cfg)) == 0, "load_file failed (%s) but changed the configuration",
			   err.message);
		FUZZ_CHECK(!ends_with(err.message, ": line too long") || longest_line(data, size) >= 1024,
			   "\"%s\", yet the longest line is %zu bytes", err.message, longest_line(data, size));
	}
	FUZZ_CHECK(rc < 0 || !memchr(data, '\0', size), "a file with a NUL byte was accepted");

	fuzz_check_getters(cfg);
	hpshm_config_free(cfg);
	close(fd);
	return 0;
}
