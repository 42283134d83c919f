/* SPDX-License-Identifier: MIT */
/*
 * examples/provider/file_demo.c -- an application that registers the file provider itself.
 *
 *   file_demo FILE
 *
 * Registers the provider, names FILE in its key file.path, creates a 1 MiB segment with it,
 * writes through the mapping and reads the same bytes back from FILE with read(), so what
 * backs the segment is the file.  It also shows the configuration checking the provider's
 * keys: a bad value and an undeclared key are refused, naming the key.  Exit 0 when all of
 * that holds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hpshm.h>
#include <hpshm/provider.h>

#include "file_provider.h"

static int fail(const char *what, const hpshm_error *err)
{
	fprintf(stderr, "file_demo: %s: %s\n", what, err->message);
	if (err->hint[0])
		fprintf(stderr, "  hint: %s\n", err->hint);
	return 1;
}

int main(int argc, char **argv)
{
	static const char text[] = "written through the segment";
	char kv[HPSHM_PATH_MAX + 32], back[sizeof(text)];
	hpshm_segment *seg = NULL;
	hpshm_config *cfg = NULL;
	hpshm_error err;
	int fd, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: file_demo FILE (an absolute path to a file that does not exist yet)\n");
		return 2;
	}
	memset(&err, 0, sizeof(err));
	if (hpshm_provider_register(&file_provider, NULL, NULL, &err) < 0)
		return fail("register", &err);
	if (hpshm_config_new(&cfg) < 0)
		return 1;

	/* The provider's keys are checked like the core's. */
	rc = hpshm_config_set(cfg, "file.keep", "maybe", &err);
	if (rc != HPSHM_EVALUE || strcmp(err.key, "file.keep") != 0 || strcmp(err.provider, "file") != 0) {
		fprintf(stderr, "file_demo: file.keep=maybe was not refused as a bad value of provider file\n");
		return 1;
	}
	printf("refused as it should be: %s (hint: %s)\n", err.message, err.hint);
	if (hpshm_config_set(cfg, "file.nope", "1", &err) != HPSHM_ENOKEY) {
		fprintf(stderr, "file_demo: the undeclared key file.nope was accepted\n");
		return 1;
	}

	snprintf(kv, sizeof(kv), "provider=file,file.path=%s", argv[1]);
	if (hpshm_config_parse(cfg, kv, &err) < 0)
		return fail(kv, &err);
	if (hpshm_segment_create(&seg, (size_t)1 << 20, cfg, &err) < 0)
		return fail("create", &err);
	memcpy(hpshm_segment_address(seg), text, sizeof(text));

	fd = open(argv[1], O_RDONLY);
	rc = fd >= 0 && read(fd, back, sizeof(back)) == (ssize_t)sizeof(back) && memcmp(back, text, sizeof(text)) == 0;
	if (fd >= 0)
		close(fd);
	printf("segment of %zu bytes by provider %s in %s: %s\n", hpshm_segment_size(seg),
	       hpshm_segment_report(seg)->provider, argv[1], rc ? "the file holds its bytes" : "the file DIFFERS");
	if (hpshm_segment_destroy(seg) < 0 || access(argv[1], F_OK) == 0) {
		fprintf(stderr, "file_demo: destroy failed or left %s behind\n", argv[1]);
		rc = 0;
	}
	hpshm_config_free(cfg);
	return rc ? 0 : 1;
}
