/* SPDX-License-Identifier: MIT */
/*
 * core/token.c -- the re-attach token: making it from a segment, parsing it strictly.
 * Layers: doc/architecture.md.
 *
 * Servers whose workers are started by exec (always on Windows; on POSIX when a server
 * re-execs itself) need the child to see the segment at the creator's address, because the
 * shared structures hold raw pointers.  The creator exports a token:
 *
 *     hpshm2:<provider>:<id>:<mapped size>:<page size>:<address>:<nonce>:<header>:<check>
 *
 * numbers in lower-case hex, <id> the provider's identify() text ("fd=5", "shm=32769",
 * "path=/dev/hugepages/hpshm.db", a name in UTF-8), <header> "tail", "resize" (at the tail of a
 * segment made with max_size, whose reservation is mapped without its pages), "tag" (the object carries the provider's
 * label, core/header.c) or the plain provider's identify() text of the header's companion
 * ("fd=6"), <check> FNV-1a-32 of everything before it.  The check catches truncation and
 * typos; it is not a secret.  What proves the token names *this* segment is the nonce: 64
 * random bits also written in the header, compared after mapping (core/attach.c).  The header
 * also records where the creator mapped the segment, and the token's address must be that
 * one: pointers the creator stored in the segment are only right there, so a token edited to
 * another free address (check digits recomputed) would otherwise attach, and hand the child a
 * segment whose pointers lead elsewhere.  Version 1 tokens had no <header>.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

#define TOKEN_PREFIX "hpshm2:"
/* The token's fields, in order. */
enum { TF_VERSION, TF_PROVIDER, TF_ID, TF_SIZE, TF_PAGE_SIZE, TF_ADDRESS, TF_NONCE, TF_HEADER, TF_CHECK, TOKEN_FIELDS };

static uint32_t token_check(const char *s, size_t len)
{
	return hpshm__fnv1a32(HPSHM__FNV1A32_INIT, s, len);
}

/*
 * The hint for a segment that cannot be re-attached: reattach=exec, and the providers that
 * can do it here, from the registry (an application's own among them), in auto order.
 */
static const char *token_reattach_hint(char *buf, size_t len)
{
	struct hpshm__provider_list all;
	unsigned n = 0, k = 0;
	int used;

	hpshm__providers(&all);
	for (unsigned i = 0; i < all.n; i++)
		n += (all.p[i].ops->caps & HPSHM_CAP_REATTACH) != 0;
	used = snprintf(buf, len, "create the segment with reattach=exec");
	for (unsigned i = 0; i < all.n && used > 0 && (size_t)used < len; i++) {
		if (!(all.p[i].ops->caps & HPSHM_CAP_REATTACH))
			continue;
		used += snprintf(buf + used, len - (size_t)used, "%s%s%s", k == 0 ? " (provider " : k + 1 == n ? " or " : ", ",
				 all.p[i].name, k + 1 == n ? ")" : "");
		k++;
	}
	return buf;
}

int hpshm_segment_token(const hpshm_segment *seg, char *buf, size_t len, hpshm_error *err)
{
	return hpshm__segment_token_as(seg, NULL, buf, len, err);
}

int hpshm__segment_token_as(const hpshm_segment *seg, const intptr_t *handles, char *buf, size_t len,
			    hpshm_error *err)
{
	char id[HPSHM_PATH_MAX], hdr[HPSHM_PATH_MAX], tok[HPSHM_TOKEN_MAX], hint[HPSHM_TEXT_MAX];
	struct hpshm_mapping map, comp;
	int n;

	if (!seg || !buf)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_token: NULL argument");
	if (!seg->header || !(hpshm__segment_caps(seg) & HPSHM_CAP_REATTACH) || !seg->inst.ops->identify)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, token_reattach_hint(hint, sizeof(hint)),
				       "segment from %s cannot be re-attached: it was not created with reattach=exec",
				       seg->inst.name);
	/* A token names the creator's address, which every attach checks against the header:
	 * a segment this process opened elsewhere cannot hand its children that address. */
	if (seg->report.relocated)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL,
				       "open the segment with reattach=exec, which maps it at its creator's address",
				       "segment from %s was opened at %p, not at its creator's address: a child could "
				       "not map it where its pointers lead", seg->inst.name, seg->map.addr);
	/* A prepared child holds the handles under other values (hpshm__child_prepare()). */
	map = seg->map;
	comp = seg->companion.map;
	if (handles != NULL) {
		map.handle = handles[0];
		comp.handle = handles[1];
	}
	n = seg->inst.ops->identify(&seg->inst, &map, id, sizeof(id));
	if (n < 0 || (size_t)n >= sizeof(id) || strpbrk(id, ": \t\n"))
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL, "provider %s cannot name this segment",
				       seg->inst.name);
	strcpy(hdr, seg->header == &seg->held ? "tag" : seg->rs.max ? "resize" : "tail");
	if (seg->companion.map.addr) {
		n = seg->companion.inst.ops->identify(&seg->companion.inst, &comp, hdr, sizeof(hdr));
		if (n < 0 || (size_t)n >= sizeof(hdr) || strpbrk(hdr, ": \t\n") || hpshm__token_tail(hdr) ||
		    strcmp(hdr, "tag") == 0)
			return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
					       "provider %s cannot name this segment's header companion",
					       seg->companion.inst.name);
	}
	n = snprintf(tok, sizeof(tok), TOKEN_PREFIX "%s:%s:%zx:%llx:%llx:%016llx:%s:", seg->inst.name, id,
		     seg->map.size, (unsigned long long)seg->header->page_size,
		     (unsigned long long)(uintptr_t)seg->map.addr, (unsigned long long)seg->header->nonce, hdr);
	if (n < 0 || (size_t)n + 9 >= sizeof(tok))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "token too long");
	snprintf(tok + n, sizeof(tok) - (size_t)n, "%08x", token_check(tok, (size_t)n));
	if (strlen(tok) >= len)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass a buffer of HPSHM_TOKEN_MAX bytes",
				       "token buffer too small");
	memcpy(buf, tok, strlen(tok) + 1);
	return (int)strlen(tok);
}

/* Strict lower-case hex, 1..16 digits, the whole field. */
static int token_hex(const char *s, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;

	if (len == 0 || len > 16)
		return -1;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static int token_bad(hpshm_error *err, const char *what)
{
	return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
			       "pass the token exactly as hpshm_segment_token() made it, from a live creator",
			       "malformed re-attach token: %s", what);
}

int hpshm__token_parse(const char *text, struct hpshm__token *t, hpshm_error *err)
{
	const char *f[TOKEN_FIELDS];
	size_t flen[TOKEN_FIELDS];
	const char *p;
	size_t len;
	unsigned i;
	unsigned long long check;

	len = strnlen(text, HPSHM_TOKEN_MAX);
	if (len == HPSHM_TOKEN_MAX)
		return token_bad(err, "longer than any token");
	if (strncmp(text, TOKEN_PREFIX, strlen(TOKEN_PREFIX)) != 0)
		return token_bad(err, "it does not start with \"" TOKEN_PREFIX "\" (another version, or not a token)");
	for (i = 0, p = text; i < TOKEN_FIELDS; i++) {
		const char *end = strchr(p, ':');

		if (!end)
			end = p + strlen(p);
		f[i] = p;
		flen[i] = (size_t)(end - p);
		if (*end == '\0') {
			i++;
			break;
		}
		p = end + 1;
	}
	if (i != TOKEN_FIELDS || f[TOKEN_FIELDS - 1][flen[TOKEN_FIELDS - 1]] != '\0')
		return token_bad(err, "wrong number of fields (truncated?)");
	/* Printable ASCII, and in the identifier the UTF-8 of a segment's name as well
	 * (name=Local\hpshm.<name> on Windows): nothing else a provider writes needs more. */
	for (i = 0; i < len; i++) {
		const unsigned char *c = (const unsigned char *)text + i;
		int n;

		if (*c <= ' ' || *c == 0x7f)
			return token_bad(err, "it holds a control character or a space");
		if (*c < 0x80)
			continue;
		n = (int)hpshm__name_utf8_len(c);
		if (n == 0 || text + i < f[TF_ID] || text + i + n > f[TF_ID] + flen[TF_ID])
			return token_bad(err, "it holds bytes that are not a name's UTF-8");
		i += (unsigned)n - 1;
	}
	if (flen[TF_CHECK] != 8 || token_hex(f[TF_CHECK], flen[TF_CHECK], &check) < 0 ||
	    check != token_check(text, (size_t)(f[TF_CHECK] - text)))
		return token_bad(err, "its check digits do not match (corrupted or edited)");
	if (flen[TF_PROVIDER] == 0 || flen[TF_PROVIDER] >= sizeof(t->provider) || flen[TF_ID] == 0 ||
	    flen[TF_ID] >= sizeof(t->id) || flen[TF_HEADER] == 0 || flen[TF_HEADER] >= sizeof(t->header))
		return token_bad(err, "empty or overlong provider, identifier or header");
	memcpy(t->provider, f[TF_PROVIDER], flen[TF_PROVIDER]);
	t->provider[flen[TF_PROVIDER]] = '\0';
	memcpy(t->id, f[TF_ID], flen[TF_ID]);
	t->id[flen[TF_ID]] = '\0';
	memcpy(t->header, f[TF_HEADER], flen[TF_HEADER]);
	t->header[flen[TF_HEADER]] = '\0';
	if (token_hex(f[TF_SIZE], flen[TF_SIZE], &t->size) < 0 ||
	    token_hex(f[TF_PAGE_SIZE], flen[TF_PAGE_SIZE], &t->page_size) < 0 ||
	    token_hex(f[TF_ADDRESS], flen[TF_ADDRESS], &t->address) < 0 ||
	    token_hex(f[TF_NONCE], flen[TF_NONCE], &t->nonce) < 0)
		return token_bad(err, "a number is not lower-case hex");
	return hpshm__token_check(t, err);
}

int hpshm__token_check(const struct hpshm__token *t, hpshm_error *err)
{
	if (t->page_size < 4096 || (t->page_size & (t->page_size - 1)))
		return token_bad(err, "page size is not a power of two of at least 4KiB");
	if (t->size == 0 || t->size % t->page_size || (hpshm__token_tail(t->header) && t->size <= HPSHM_HEADER_REGION))
		return token_bad(err, "size is not a multiple of the page size");
	/* No creator maps below the granule or off it (base_address and the automatic choice
	 * both keep to it), so such an address is an edit, refused before anything is mapped. */
	if (t->address < HPSHM__ADDRESS_GRANULE)
		return token_bad(err, "address is below 64KiB, where no segment is ever mapped");
	if (t->address % HPSHM__ADDRESS_GRANULE || t->address % t->page_size)
		return token_bad(err, "address is not aligned to 64KiB and the page size");
	/*
	 * The numbers are 64 bits wide whatever the process, so a 64-bit creator's token reaches
	 * a 32-bit child whole: a segment that does not fit its address space is refused here,
	 * never cut to the low 32 bits and mapped somewhere else.
	 */
	if (t->size > SIZE_MAX - HPSHM__ADDRESS_GRANULE || t->address > UINTPTR_MAX - t->size - HPSHM__ADDRESS_GRANULE)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "attach from a program built for the creator's word size (a 64-bit build)",
				       "the token's segment (0x%llx bytes at 0x%llx) lies beyond this process's "
				       "%u-bit address space",
				       t->size, t->address, (unsigned)(sizeof(void *) * 8));
	return 0;
}
