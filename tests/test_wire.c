/* SPDX-License-Identifier: MIT */
/*
 * tests/test_wire.c -- what hpshm writes for other processes means the same on every target:
 * tokens, the segment header and the tool's JSON, on 32-bit (i686) and big-endian (s390x)
 * builds as on x86_64.
 *
 * Tokens cross from one program to another, and a 64-bit creator's token may reach a child
 * built for 32 bits.  The tokens below were made by hpshm_segment_token() on x86_64 and are
 * checked in as text: every target must parse them to the same fields, and a 32-bit one must
 * refuse, with a clear error and before mapping anything, a segment that does not fit its
 * address space, never cut the numbers to 32 bits.  The header is written and read only on
 * one machine, in its byte order, but by programs of either word size: its layout is fixed
 * (the offsets below), and a segment's header holds what its creator was told.  The JSON of
 * `hpshm probe --json` and `hpshm bench --json` is read by scripts: 64-bit numbers, negative
 * ones, fractions and escapes come out as the same text everywhere.
 *
 * A portable suite: it uses the public API, core/internal.h's token parser, base/json.h and
 * base/base.h's tokeniser only, and plain (named) segments, so it runs on every target CI
 * builds, posix-generic included.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#include "base/base.h"
#include "base/json.h"
#include "core/internal.h"
#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "port.h"

TestSuite(wire, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

/* A token and the fields it holds, as hpshm_segment_token() wrote it on x86_64. */
struct made_on_x86_64 {
	const char        *token;     /* the text, checked in */
	const char        *provider;  /* its fields */
	const char        *id;
	unsigned long long size;
	unsigned long long page_size;
	unsigned long long address;
	unsigned long long nonce;
};

/*
 * Made on x86_64 with provider=plain and reattach=exec: a named segment and an unnamed one at
 * the automatic address (above 4GiB), a named one at base_address=0x40000000 (within 32
 * bits), and an 8GiB one (populate=off), whose size alone does not fit 32 bits.  Token version
 * 2 added the header field: plain keeps its header at the tail ("tail").
 */
static const struct made_on_x86_64 made[] = {
	{"hpshm2:plain:path=/hpshm.wire:301000:1000:600000000000:fe2ca8b52d96b07b:tail:6f2fc1ee", "plain",
	 "path=/hpshm.wire", 0x301000, 0x1000, 0x600000000000ULL, 0xfe2ca8b52d96b07bULL},
	{"hpshm2:plain:fd=3:301000:1000:600000000000:0f51acefe0207683:tail:1529b0be", "plain", "fd=3", 0x301000, 0x1000,
	 0x600000000000ULL, 0x0f51acefe0207683ULL},
	{"hpshm2:plain:path=/hpshm.wire32:301000:1000:40000000:a3987deda50f064e:tail:c294f62b", "plain",
	 "path=/hpshm.wire32", 0x301000, 0x1000, 0x40000000ULL, 0xa3987deda50f064eULL},
	{"hpshm2:plain:path=/hpshm.wide:200001000:1000:600000000000:b55446535ed00cac:tail:8fea7b38", "plain",
	 "path=/hpshm.wide", 0x200001000ULL, 0x1000, 0x600000000000ULL, 0xb55446535ed00cacULL},
};

/* Does a segment of size bytes at address fit this process's address space? */
static int fits_here(unsigned long long size, unsigned long long address)
{
	return size <= SIZE_MAX && address <= UINTPTR_MAX - size;
}

Test(wire, tokens_made_on_x86_64_parse_to_the_same_fields)
{
	for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
		const struct made_on_x86_64 *m = &made[i];
		struct hpshm__token t;
		hpshm_error err;
		int rc;

		if (!fits_here(m->size, m->address))
			continue; /* the next test */
		memset(&t, 0, sizeof t);
		memset(&err, 0, sizeof err);
		rc = hpshm__token_parse(m->token, &t, &err);
		cr_assert_eq(rc, 0, "%s: %s", m->token, err.message);
		cr_expect_str_eq(t.provider, m->provider, "%s", m->token);
		cr_expect_str_eq(t.id, m->id, "%s", m->token);
		cr_expect_eq(t.size, m->size, "%s: size 0x%llx", m->token, t.size);
		cr_expect_eq(t.page_size, m->page_size, "%s: page size 0x%llx", m->token, t.page_size);
		cr_expect_eq(t.address, m->address, "%s: address 0x%llx", m->token, t.address);
		cr_expect_eq(t.nonce, m->nonce, "%s: nonce 0x%llx", m->token, t.nonce);
	}
}

/*
 * On a 32-bit target the tokens of segments above 4GiB, or larger than 4GiB, are refused by
 * the parser, naming the address space, before any provider maps anything.  On a 64-bit one
 * every token above parses, and this test checks that it does.
 */
Test(wire, tokens_beyond_this_address_space_are_refused_not_cut)
{
	size_t refused = 0;

	for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
		const struct made_on_x86_64 *m = &made[i];
		struct hpshm__token t;
		hpshm_segment *seg = NULL;
		hpshm_error err;
		int rc;

		memset(&err, 0, sizeof err);
		rc = hpshm__token_parse(m->token, &t, &err);
		if (fits_here(m->size, m->address)) {
			cr_assert_eq(rc, 0, "%s: %s", m->token, err.message);
			continue;
		}
		refused++;
		cr_assert_eq(rc, HPSHM_EINVAL, "%s: %s, want HPSHM_EINVAL", m->token, hpshm_errname(rc));
		cr_assert(hpt_contains(err.message, "address space"), "%s: %s", m->token, err.message);
		cr_assert(hpt_contains(err.hint, "64-bit"), "%s: hint %s", m->token, err.hint);

		/* hpshm_segment_attach() parses first: the same refusal, and nothing is mapped. */
		memset(&err, 0, sizeof err);
		rc = hpshm_segment_attach(&seg, m->token, NULL, &err);
		cr_assert_eq(rc, HPSHM_EINVAL, "attach %s: %s", m->token, hpshm_errname(rc));
		cr_assert_null(seg);
		cr_assert(hpt_contains(err.message, "address space"), "attach %s: %s", m->token, err.message);
	}
	if (sizeof(void *) < 8)
		cr_assert_eq(refused, (size_t)3, "a 32-bit process must refuse the three tokens above 4GiB");
	else
		cr_assert_eq(refused, (size_t)0);
}

/* The check digits are FNV-1a over bytes, so one flipped digit is caught on every target. */
Test(wire, an_edited_token_made_on_x86_64_is_refused_everywhere)
{
	char edited[HPSHM_TOKEN_MAX];
	struct hpshm__token t;
	hpshm_error err;

	snprintf(edited, sizeof edited, "%s", made[2].token);
	edited[strlen("hpshm2:plain:path=/hpshm.wire32:30")] = '2'; /* 0x301000 -> 0x302000 */
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__token_parse(edited, &t, &err), HPSHM_EINVAL, "%s", edited);
	cr_assert(hpt_contains(err.message, "check digits"), "%s", err.message);
}

/* A token whose fields are these, with the check digits the creator would write. */
static int wire_token(char *buf, size_t len, const char *provider, const char *id, const char *header)
{
	int n = snprintf(buf, len, "hpshm2:%s:%s:400000:1000:40000000:0123456789abcdef:%s:", provider, id, header);
	struct hpshm__token t;
	hpshm_error err;

	snprintf(buf + n, len - (size_t)n, "%08x", (unsigned)hpshm__fnv1a32(HPSHM__FNV1A32_INIT, buf, (size_t)n));
	memset(&err, 0, sizeof err);
	return hpshm__token_parse(buf, &t, &err);
}

/*
 * A segment named in UTF-8 has a token whose identifier carries the name's bytes; no other
 * field holds anything but printable ASCII, and the identifier holds only whole, well-formed
 * UTF-8 (a byte 0xff, an overlong '/', a lone continuation byte are refused).
 */
Test(wire, only_the_identifier_carries_utf8_and_only_well_formed)
{
	char tok[HPSHM_TOKEN_MAX];

	cr_expect_eq(wire_token(tok, sizeof tok, "winsection", "name=Local\\hpshm.\xe6\x95\xb0\xc3\xa9", "tag"), 0,
		     "%s", tok);
	cr_expect_eq(wire_token(tok, sizeof tok, "plain", "path=/hpshm.\xf0\x9f\x98\x80", "tag"), 0, "%s", tok);
	cr_expect_eq(wire_token(tok, sizeof tok, "p\xff\xfflain", "fd=5", "tag"), HPSHM_EINVAL, "0xff in the provider");
	cr_expect_eq(wire_token(tok, sizeof tok, "pl\xc3\xa9in", "fd=5", "tag"), HPSHM_EINVAL, "UTF-8 in the provider");
	cr_expect_eq(wire_token(tok, sizeof tok, "plain", "fd=5", "t\xc3\xa9g"), HPSHM_EINVAL, "UTF-8 in the header");
	cr_expect_eq(wire_token(tok, sizeof tok, "plain", "path=/hpshm.\xff", "tag"), HPSHM_EINVAL, "0xff in the name");
	cr_expect_eq(wire_token(tok, sizeof tok, "plain", "path=/hpshm.\xc0\xaf", "tag"), HPSHM_EINVAL, "an overlong");
	cr_expect_eq(wire_token(tok, sizeof tok, "plain", "path=/hpshm.\x80x", "tag"), HPSHM_EINVAL, "a continuation");
	cr_expect_eq(wire_token(tok, sizeof tok, "plain", "path=/hpshm.\xe6\x95", "tag"), HPSHM_EINVAL, "a cut character");
}

/*
 * The header's layout, the same for 32-bit and 64-bit programs: a 32-bit child attaching a
 * 64-bit creator's segment reads the same fields at the same places (i686 aligns 64-bit
 * members to 4 bytes, so a layout that needed padding on x86_64 would differ there).
 */
Test(wire, header_layout_is_the_same_for_every_word_size)
{
	cr_expect_eq(offsetof(struct hpshm_header, magic), (size_t)0);
	cr_expect_eq(offsetof(struct hpshm_header, version), (size_t)8);
	cr_expect_eq(offsetof(struct hpshm_header, header_size), (size_t)12);
	cr_expect_eq(offsetof(struct hpshm_header, usable_size), (size_t)16);
	cr_expect_eq(offsetof(struct hpshm_header, page_size), (size_t)24);
	cr_expect_eq(offsetof(struct hpshm_header, nonce), (size_t)32);
	cr_expect_eq(offsetof(struct hpshm_header, creator_pid), (size_t)40);
	cr_expect_eq(offsetof(struct hpshm_header, creator_start), (size_t)48);
	cr_expect_eq(offsetof(struct hpshm_header, created_unix), (size_t)56);
	cr_expect_eq(offsetof(struct hpshm_header, boot_id), (size_t)64);
	cr_expect_eq(offsetof(struct hpshm_header, provider), (size_t)104);
	cr_expect_eq(offsetof(struct hpshm_header, name), (size_t)136);
	cr_expect_eq(offsetof(struct hpshm_header, creator_address), (size_t)264);
	cr_expect_eq(offsetof(struct hpshm_header, object), (size_t)272);
	cr_expect_eq(offsetof(struct hpshm_header, resize_max), (size_t)400);
	cr_expect_eq(offsetof(struct hpshm_header, resize_word), (size_t)408);
	cr_expect_eq(offsetof(struct hpshm_header, resize_backed), (size_t)416);
	cr_expect_eq(offsetof(struct hpshm_header, resize_slots), (size_t)424);
	cr_expect_eq(offsetof(struct hpshm_header, resize_spare), (size_t)428);
	cr_expect_eq(sizeof(struct hpshm_header), (size_t)432);
	cr_expect_eq(sizeof(struct hpshm_resize_slot), (size_t)32);
	cr_assert_leq(sizeof(struct hpshm_header), (size_t)HPSHM_HEADER_REGION);
}

/*
 * A segment's header holds what its creator was told, and its token agrees with it: written
 * by the core at create, read back here field by field, in this machine's byte order.  The
 * segment is named and re-attachable, at the address the port picks; a port that picks none
 * (ports/posix/address.c) gets base_address=0x40000000, an address on every target.
 */
Test(wire, header_and_token_of_a_segment_round_trip)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	const struct hpshm_header *h;
	const hpshm_report *r;
	struct hpshm__token t;
	char name[64], tok[HPSHM_TOKEN_MAX];
	hpshm_error err;
	uint32_t version = HPSHM_HEADER_VERSION;
	void *at = NULL;
	int rc;

	snprintf(name, sizeof name, "wire-%ld", (long)hpshm__port_getpid());
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set(cfg, "provider", "plain", &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_set(cfg, "name", name, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_set(cfg, "reattach", "exec", &err), 0, "%s", err.message);
	if (hpshm__port_pick_address(4 * 1024 * 1024, HPSHM__ADDRESS_GRANULE, &at) == HPSHM_ENOTSUP)
		cr_assert_eq(hpshm_config_set(cfg, "base_address", "0x40000000", &err), 0, "%s", err.message);
	rc = hpshm_segment_create(&seg, 3 * 1024 * 1024, cfg, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	r = hpshm_segment_report(seg);

	h = (const struct hpshm_header *)((const char *)hpshm_segment_address(seg) + hpshm_segment_size(seg));
	cr_expect_eq(memcmp(h->magic, HPSHM_HEADER_MAGIC, sizeof h->magic), 0);
	cr_expect_eq(h->version, (uint32_t)HPSHM_HEADER_VERSION);
	cr_expect_eq(memcmp((const char *)h + 8, &version, sizeof version), 0, "the version is in this machine's byte order");
	cr_expect_eq(h->header_size, (uint32_t)sizeof(struct hpshm_header));
	cr_expect_eq(h->usable_size, (uint64_t)hpshm_segment_size(seg));
	cr_expect_eq(h->page_size, (uint64_t)r->page_size);
	cr_expect_eq(h->creator_pid, (int64_t)hpshm__port_getpid());
	cr_expect_eq(h->creator_address, (uint64_t)(uintptr_t)hpshm_segment_address(seg));
	cr_expect_neq(h->created_unix, (uint64_t)0);
	cr_expect_str_eq(h->provider, "plain");
	cr_expect_str_eq(h->name, name);

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_token(seg, tok, sizeof tok, &err);
	cr_assert_gt(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	memset(&t, 0, sizeof t);
	cr_assert_eq(hpshm__token_parse(tok, &t, &err), 0, "%s: %s", tok, err.message);
	cr_expect_str_eq(t.provider, "plain");
	cr_expect_eq(t.nonce, h->nonce, "%s", tok);
	cr_expect_eq(t.address, h->creator_address, "%s", tok);
	cr_expect_eq(t.page_size, h->page_size, "%s", tok);
	cr_expect_eq(t.size, h->usable_size + HPSHM_HEADER_REGION, "%s", tok);

	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

/* Run the JSON writer into a buffer: what the tool and the bench print. */
static void json_text(void (*write)(struct json *j), char *buf, size_t len)
{
	FILE *f = tmpfile();
	struct json j;
	size_t n;

	cr_assert_not_null(f, "tmpfile");
	json_begin(&j, f, 0);
	write(&j);
	cr_assert_eq(json_end(&j), 0, "the writer was misused");
	cr_assert_eq(fflush(f), 0);
	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void json_numbers(struct json *j)
{
	json_object_open(j);
	json_kv_uint(j, "size", 0x200001000ULL);
	json_kv_uint(j, "max", UINT64_MAX);
	json_kv_int(j, "pid", -1);
	json_kv_int(j, "min", INT64_MIN);
	json_kv_double(j, "ratio", 0.125, 3);
	json_kv_double(j, "ns", 1234567.5, 1);
	json_kv_bool(j, "huge", 1);
	json_kv_null(j, "hint");
	json_key(j, "sizes");
	json_array_open(j);
	json_uint(j, 4096);
	json_uint(j, 2097152);
	json_uint(j, 1073741824);
	json_array_close(j);
	json_kv_string(j, "path", "/dev/hugepages/a\"b\\c\td\x01\xc3\xa9\xff");
	json_object_close(j);
}

/* The text made on x86_64; 64-bit numbers, negatives, fractions and escapes alike. */
Test(wire, json_is_the_same_text_on_every_target)
{
	char buf[1024];

	json_text(json_numbers, buf, sizeof buf);
	cr_assert_str_eq(buf, "{\"size\":8589938688,\"max\":18446744073709551615,\"pid\":-1,"
			      "\"min\":-9223372036854775808,\"ratio\":0.125,\"ns\":1234567.5,\"huge\":true,"
			      "\"hint\":null,\"sizes\":[4096,2097152,1073741824],"
			      "\"path\":\"/dev/hugepages/a\\\"b\\\\c\\td\\u0001\xc3\xa9\\ufffd\"}\n",
			 "got %s", buf);
}

/*
 * hpshm__token_next() replaces strtok_r(), which MSVC lacks (scripts/check-portable-c.sh): it
 * must split as strtok_r() does (runs of separators are one, none at either end count), and
 * two texts split at once must not disturb each other, as they would with strtok().
 */
Test(wire, the_tokeniser_splits_as_strtok_r_does_and_is_reentrant)
{
	char a[] = ";;C:\\one.dll;;D:\\two.dll;", b[] = " memfd  fixed ", empty[] = ";;;";
	char *ca = a, *cb = b, *ce = empty;

	cr_assert_str_eq(hpshm__token_next(&ca, ";"), "C:\\one.dll");
	cr_assert_str_eq(hpshm__token_next(&cb, " "), "memfd");
	cr_assert_str_eq(hpshm__token_next(&ca, ";"), "D:\\two.dll");
	cr_assert_str_eq(hpshm__token_next(&cb, " "), "fixed");
	cr_assert_null(hpshm__token_next(&ca, ";"));
	cr_assert_null(hpshm__token_next(&ca, ";"), "a finished cursor stays finished");
	cr_assert_null(hpshm__token_next(&cb, " "));
	cr_assert_null(hpshm__token_next(&ce, ";"), "a text of separators alone has no token");
}
