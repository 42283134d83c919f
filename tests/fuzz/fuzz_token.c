/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_token.c -- the re-attach token parser, hpshm__token_parse(), on any text.
 *
 * It is what hpshm_segment_attach() runs before it maps anything, so everything it accepts
 * goes on to a provider.  Contract: HPSHM_EINVAL with a complete error record, or 0 with
 * fields that keep every rule of the format (doc/reattach.md): printable text without ':' in
 * the provider and identifier, a power-of-two page size of at least 4KiB, a size above the
 * header region and a multiple of the page size, an address of at least 64KiB on the 64KiB
 * and page grid that does not wrap.  The canonical token made from those fields parses to
 * the same fields.
 *
 * The check digits would stop almost every mutation at the first rule, so each input is
 * parsed twice: as it is, and with the digits after its last ':' replaced by the right check,
 * which lets the mutations reach every later rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "fuzz.h"

/* FNV-1a 32, the token's check (doc/reattach.md). */
static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* A field as the parser may hand it on: printable ASCII without ':', and where utf8 is set
 * (the identifier, which carries a segment's name) the UTF-8 characters a name may hold. */
static void check_text(const char *what, const char *s, size_t cap, int utf8)
{
	FUZZ_CHECK(memchr(s, '\0', cap) != NULL, "%s not terminated", what);
	FUZZ_CHECK(s[0] != '\0', "%s empty", what);
	for (const char *p = s; *p; p++) {
		int n = utf8 && (unsigned char)*p >= 0x80 ? (int)hpshm__name_utf8_len((const unsigned char *)p) : 1;

		FUZZ_CHECK(n > 1 || (*p > ' ' && *p <= '~' && *p != ':'), "%s \"%s\" holds byte 0x%02x", what, s,
			   (unsigned char)*p);
		p += n - 1;
	}
}

static void check_one(const char *text)
{
	struct hpshm__token t, again;
	hpshm_error err;
	char canon[HPSHM_TOKEN_MAX + 64];
	int rc, n;

	memset(&t, 0, sizeof(t));
	memset(&err, 0, sizeof(err));
	rc = hpshm__token_parse(text, &t, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err, "token");
		FUZZ_CHECK(rc == HPSHM_EINVAL, "%s, want HPSHM_EINVAL", hpshm_errname(rc));
		return;
	}
	FUZZ_CHECK(rc == 0, "returned %d", rc);
	check_text("provider", t.provider, sizeof(t.provider), 0);
	check_text("identifier", t.id, sizeof(t.id), 1);
	check_text("header", t.header, sizeof(t.header), 0);
	FUZZ_CHECK(t.page_size >= 4096 && (t.page_size & (t.page_size - 1)) == 0, "page size %llx", t.page_size);
	FUZZ_CHECK(t.size >= t.page_size && t.size % t.page_size == 0 && t.size <= SIZE_MAX, "size %llx", t.size);
	FUZZ_CHECK(strcmp(t.header, "tail") != 0 || t.size > HPSHM_HEADER_REGION, "size %llx leaves no tail header",
		   t.size);
	FUZZ_CHECK(t.address >= 65536 && t.address % 65536 == 0 && t.address % t.page_size == 0, "address %llx",
		   t.address);
	FUZZ_CHECK(t.address <= UINTPTR_MAX - t.size, "address %llx + size %llx wraps", t.address, t.size);

	n = snprintf(canon, sizeof(canon), "hpshm2:%s:%s:%llx:%llx:%llx:%016llx:%s:", t.provider, t.id, t.size,
		     t.page_size, t.address, t.nonce, t.header);
	FUZZ_CHECK(n > 0 && (size_t)n + 9 <= sizeof(canon), "canonical token too long");
	snprintf(canon + n, sizeof(canon) - (size_t)n, "%08x", fnv1a(canon, (size_t)n));
	/* The input may have written the nonce with fewer digits than the canonical 16, so near
	 * the length limit the canonical form can be too long to be a token: nothing to compare. */
	if (strlen(canon) >= HPSHM_TOKEN_MAX)
		return;
	memset(&again, 0, sizeof(again));
	rc = hpshm__token_parse(canon, &again, &err);
	FUZZ_CHECK(rc == 0 && memcmp(&t, &again, sizeof(t)) == 0, "\"%s\" parsed, its canonical form \"%s\" %s",
		   text, canon, rc == 0 ? "parses to other fields" : err.message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *last = strrchr(text, ':');

	check_one(text);
	if (last) {
		size_t body = (size_t)(last - text) + 1;
		char *fixed = malloc(body + 9);

		FUZZ_CHECK(fixed != NULL, "out of memory");
		memcpy(fixed, text, body);
		snprintf(fixed + body, 9, "%08x", fnv1a(text, body));
		check_one(fixed);
		free(fixed);
	}
	free(text);
	return 0;
}
