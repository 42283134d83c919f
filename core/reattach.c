/* SPDX-License-Identifier: MIT */
/*
 * core/reattach.c -- re-attaching a segment after exec: the header, the token, attach, spawn.
 *
 * Servers whose workers are started by exec (always on Windows; on POSIX when a server
 * re-execs itself) need the child to see the segment at the creator's address, because the
 * shared structures hold raw pointers.  The creator exports a token:
 *
 *     hpshm2:<provider>:<id>:<mapped size>:<page size>:<address>:<nonce>:<header>:<check>
 *
 * numbers in lower-case hex, <id> the provider's identify() text ("fd=5", "shm=32769",
 * "path=/dev/hugepages/hpshm.db"), <header> "tail", "tag" (the object carries the provider's
 * label, below) or the plain provider's identify() text of the header's companion ("fd=6"),
 * <check> FNV-1a-32 of everything before it.  The check
 * catches truncation and typos; it is not a secret.  What proves the token names *this*
 * segment is the nonce: 64 random bits also written in the header at the segment's tail,
 * compared after mapping.  The header also records where the creator mapped the segment, and
 * the token's address must be that one: pointers the creator stored in the segment are only
 * right there, so a token edited to another free address (check digits recomputed) would
 * otherwise attach, and hand the child a segment whose pointers lead elsewhere.  A forged or
 * stale token therefore either fails to parse, fails to map (no such object, range taken),
 * or maps an object whose header does not match, which is unmapped again before the error is
 * returned: the caller never gets the wrong object, nor the right one in the wrong place.
 *
 * The header lives in the last HPSHM_HEADER_REGION bytes of the mapping, after the caller's
 * usable bytes, so the caller's pointer is the mapping's first byte (huge-page aligned); or,
 * when that would cost a huge page, in a companion of base pages mapped right after the
 * segment (core/internal.h, enum hpshm__header_place).  A provider that can label its object
 * where the kernel keeps it (HPSHM_CAP_TAG: memfd_hugetlb names the memfd) needs neither:
 * the label is "<nonce>@0x<address>" (hpshm__header_tag()), given at create, and its attach()
 * maps only an object that carries the label the token's nonce and address make, so the
 * label does what the header's nonce and creator_address do, and the header itself is kept
 * in the handles.  Version 1 tokens had no <header>.
 *
 * A companion is a second object, which the token names apart from the segment, so finding
 * the nonce in it proves nothing about the object the <id> names: a token edited to another
 * segment's id (check digits recomputed), or a stale one whose id was given to a new segment,
 * would pair the old companion with another object.  So the companion's header records which
 * object the segment is (the provider's hpshm_mapping.object: a SysV segment's id, creator
 * and creation time, a file's device and inode), and attach compares it with what the
 * provider attached (attach_check_object()).  The creator's destroy also clears the magic of
 * the companion's header, which a child holds as long as it holds the descriptor, so a child
 * that attaches after the creator destroyed the segment is told the token is stale, even
 * when the new object was made by the same process in the same second.  And every mapping
 * says how long it really is (a hugetlb file is mapped in whole huge pages): one longer than
 * the token's is refused, and the undo unmaps all of it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "port.h"

#define TOKEN_PREFIX "hpshm2:"
/* The token's fields, in order. */
enum { TF_VERSION, TF_PROVIDER, TF_ID, TF_SIZE, TF_PAGE_SIZE, TF_ADDRESS, TF_NONCE, TF_HEADER, TF_CHECK, TOKEN_FIELDS };

int hpshm__wants_header(const struct hpshm_config *cfg)
{
	return cfg->reattach == HPSHM__REATTACH_EXEC || cfg->name[0] != '\0';
}

enum hpshm__header_place hpshm__header_place(const struct hpshm_config *cfg, size_t size, size_t page_size)
{
	size_t bare, with_tail;

	if (!hpshm__wants_header(cfg))
		return HPSHM__HEADER_NONE;
	/* Named: the header must be in the object.  Base pages: the tail costs a base page,
	 * which is what a companion would cost too. */
	if (cfg->name[0] || page_size <= hpshm__base_page_size())
		return HPSHM__HEADER_TAIL;
	/* The tail is free when the last page has a header region to spare. */
	if (size <= SIZE_MAX - HPSHM_HEADER_REGION && hpshm__round_up(size, page_size, &bare) == 0 &&
	    hpshm__round_up(size + HPSHM_HEADER_REGION, page_size, &with_tail) == 0 && bare == with_tail)
		return HPSHM__HEADER_TAIL;
	return HPSHM__HEADER_COMPANION;
}

size_t hpshm__header_extent(enum hpshm__header_place place)
{
	/* The companion is mapped in the address granule after the segment: every base page
	 * size hpshm runs on divides HPSHM__ADDRESS_GRANULE, so its pages fit in one. */
	return place == HPSHM__HEADER_COMPANION ? HPSHM__ADDRESS_GRANULE : 0;
}

const char *hpshm__header_tag(uint64_t nonce, uint64_t address, char *buf)
{
	snprintf(buf, HPSHM_TAG_MAX, "%016llx@0x%llx", (unsigned long long)nonce, (unsigned long long)address);
	return buf;
}

void hpshm__header_hold(struct hpshm_header *h, size_t usable, uint64_t nonce, uint64_t at, const char *provider,
			size_t page_size)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HPSHM_HEADER_MAGIC, sizeof(h->magic));
	h->version = HPSHM_HEADER_VERSION;
	h->header_size = (uint32_t)sizeof(*h);
	h->usable_size = usable;
	h->page_size = page_size;
	h->nonce = nonce;
	h->creator_address = at;
	hpshm__strlcpy(h->provider, provider, sizeof(h->provider));
}

struct hpshm_header *hpshm__header_write(void *dst_region, size_t usable, const void *at, const char *provider,
					 const char *name, size_t page_size, const char *object)
{
	struct hpshm_header *dst = dst_region;
	struct hpshm_header h;

	/* What a token carries, then who made it and in which boot, for an object that can
	 * outlive its creator (hpshm gc, a stale token after a reboot). */
	hpshm__header_hold(&h, usable, hpshm__random64(), (uint64_t)(uintptr_t)at, provider, page_size);
	memset(h.magic, 0, sizeof(h.magic));
	h.creator_pid = hpshm__self(&h.creator_start);
	h.created_unix = (uint64_t)time(NULL);
	if (hpshm__boot_id(h.boot_id, sizeof(h.boot_id)) < 0)
		h.boot_id[0] = '\0';
	hpshm__strlcpy(h.name, name, sizeof(h.name));
	/* The provider's text may fill its field: copied up to the last byte, which stays NUL. */
	memcpy(h.object, object, strnlen(object, sizeof(h.object) - 1));
	/* Magic last: a reader that sees it sees a complete header (PostgreSQL's rule too). */
	*dst = h;
	atomic_thread_fence(memory_order_release);
	memcpy(dst->magic, HPSHM_HEADER_MAGIC, sizeof(dst->magic));
	return dst;
}

/* ---- the companion that holds the header of an unnamed huge segment ---- */

/* The request for a companion at addr: base pages enough for the header region. */
static int companion_request(struct hpshm_request *rq, void *addr, const struct hpshm_config *cfg)
{
	memset(rq, 0, sizeof(*rq));
	if (hpshm__round_up(HPSHM_HEADER_REGION, hpshm__base_page_size(), &rq->size) < 0 ||
	    rq->size > HPSHM__ADDRESS_GRANULE)
		return HPSHM_EOVERFLOW;
	rq->page_size = hpshm__base_page_size();
	rq->address = addr;
	rq->mode = cfg->mode;
	rq->flags = HPSHM_REQ_REATTACH;
	rq->config = cfg;
	rq->option = hpshm__request_option;
	return 0;
}

int hpshm__companion_create(struct hpshm__companion *c, void *seg_at, size_t mapped, const struct hpshm_config *cfg,
			    hpshm_error *err)
{
	struct hpshm_request rq;
	struct hpshm_probe pr;
	unsigned caps;
	int rc;

	memset(c, 0, sizeof(*c));
	c->map.handle = HPSHM_NO_HANDLE;
	if (hpshm__provider_find("plain", &c->inst) < 0 || !(c->inst.ops->caps & HPSHM_CAP_REATTACH))
		return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, NULL,
				       "no plain provider that can re-attach to keep the header in");
	rc = companion_request(&rq, (char *)seg_at + mapped, cfg);
	if (rc < 0)
		return hpshm_error_set(err, rc, 0, NULL, NULL, "base pages too large for a header companion");
	memset(&pr, 0, sizeof(pr));
	rc = c->inst.ops->probe(&c->inst, &rq, &pr);
	if (rc < 0)
		return hpshm_error_set(err, rc, pr.sys_errno, "probe", NULL, "plain: %s", pr.reason);
	rc = c->inst.ops->create(&c->inst, &c->map, &rq, err);
	if (rc < 0) {
		c->map.addr = NULL;
		return rc;
	}
	caps = hpshm__mapping_caps(&c->map, c->inst.ops);
	if (c->map.addr != rq.address || !(caps & HPSHM_CAP_REATTACH)) {
		(void)c->inst.ops->destroy(&c->inst, &c->map);
		c->map.addr = NULL;
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
				       "plain gave a header companion a child cannot re-attach");
	}
	return 0;
}

void hpshm__companion_release(struct hpshm__companion *c, int remove)
{
	struct hpshm_header *h = c->map.addr;

	if (!c->map.addr)
		return;
	/*
	 * A child that inherited the companion keeps it, and the header in it, after the
	 * creator is gone.  Were the header left whole, a child attaching later would find the
	 * segment's nonce there and take whatever object has the segment's id by then for it (a
	 * SysV id given to a new segment, by the same creator in the same second).  So the
	 * owner's destroy clears the magic, which every attach checks first; the rest stays, for
	 * the message.  Only the owner's: a process it forked shares the companion's pages, and
	 * its clean-up must not retire the creator's segment.  The caller says which it is by
	 * hpshm__segment_owned(), the one test of ownership, so a forked child that calls
	 * hpshm_segment_destroy() detaches here as it does from the segment.
	 */
	if (remove && memcmp(h->magic, HPSHM_HEADER_MAGIC, sizeof(h->magic)) == 0)
		memset(h->magic, 0, sizeof(h->magic));
	if (remove)
		(void)c->inst.ops->destroy(&c->inst, &c->map);
	else
		(void)c->inst.ops->detach(&c->inst, &c->map);
	c->map.addr = NULL;
}

static uint32_t token_check(const char *s, size_t len)
{
	return hpshm__fnv1a32(HPSHM__FNV1A32_INIT, s, len);
}

int hpshm_segment_token(const hpshm_segment *seg, char *buf, size_t len, hpshm_error *err)
{
	char id[HPSHM_PATH_MAX], hdr[HPSHM_PATH_MAX], tok[HPSHM_TOKEN_MAX];
	int n;

	if (!seg || !buf)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_token: NULL argument");
	if (!seg->header || !(hpshm__segment_caps(seg) & HPSHM_CAP_REATTACH) || !seg->inst.ops->identify)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL,
				       "create the segment with reattach=exec (provider memfd_hugetlb, sysv_hugetlb, "
				       "hugetlbfs or plain)",
				       "segment from %s cannot be re-attached: it was not created with reattach=exec",
				       seg->inst.name);
	/* A token names the creator's address, which every attach checks against the header:
	 * a segment this process opened elsewhere cannot hand its children that address. */
	if (seg->report.relocated)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL,
				       "open the segment with reattach=exec, which maps it at its creator's address",
				       "segment from %s was opened at %p, not at its creator's address: a child could "
				       "not map it where its pointers lead", seg->inst.name, seg->map.addr);
	n = seg->inst.ops->identify(&seg->inst, &seg->map, id, sizeof(id));
	if (n < 0 || (size_t)n >= sizeof(id) || strpbrk(id, ": \t\n"))
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL, "provider %s cannot name this segment",
				       seg->inst.name);
	strcpy(hdr, seg->header == &seg->held ? "tag" : "tail");
	if (seg->companion.map.addr) {
		n = seg->companion.inst.ops->identify(&seg->companion.inst, &seg->companion.map, hdr, sizeof(hdr));
		if (n < 0 || (size_t)n >= sizeof(hdr) || strpbrk(hdr, ": \t\n") || strcmp(hdr, "tail") == 0 ||
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
	for (i = 0; i < len; i++)
		if (text[i] <= ' ' || text[i] > '~')
			return token_bad(err, "it holds a non-printable character or a space");
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
	if (t->size == 0 || t->size % t->page_size || (strcmp(t->header, "tail") == 0 && t->size <= HPSHM_HEADER_REGION))
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

/*
 * Does the header say this is the token's segment, created at the token's address, in this
 * boot?  The nonce goes first: when it differs the header is another segment's, and its
 * other fields say nothing about this token.  hp is shared memory; the checks read a copy.
 */
static int attach_check_header(const struct hpshm_header *hp, const struct hpshm__token *t, int companion,
			       hpshm_error *err)
{
	static const char no_magic[sizeof(hp->magic)];
	struct hpshm_header h = *hp;
	char boot[40];

	if (memcmp(h.magic, HPSHM_HEADER_MAGIC, sizeof(h.magic)) != 0) {
		/* The creator's destroy clears a companion header's magic and nothing else
		 * (hpshm__companion_release()): the rest still names the token's segment. */
		if (companion && memcmp(h.magic, no_magic, sizeof(h.magic)) == 0 && h.version >= 2 &&
		    h.nonce == t->nonce)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
					       "start the child while the creator still holds the segment, with a fresh "
					       "token",
					       "segment %s was destroyed by its creator: the token is stale (whatever has "
					       "that identifier now is another object)", t->id);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "the token is forged or for another object",
				       "object %s is not an hpshm segment (no header)", t->id);
	}
	/* The reading rules of struct hpshm_header: creator_address exists from version 2 on. */
	if (!HPSHM__HEADER_HAS(&h, 2, creator_address))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "create the segment again with the same hpshm as the processes that attach it",
				       "segment %s has a version %u header, which records no creator address", t->id,
				       (unsigned)h.version);
	if (h.nonce != t->nonce || h.page_size != t->page_size ||
	    h.usable_size != t->size - (strcmp(t->header, "tail") == 0 ? HPSHM_HEADER_REGION : 0) ||
	    strncmp(h.provider, t->provider, sizeof(h.provider)))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "the token is stale (the segment was recreated) or forged; get a fresh one",
				       "segment %s does not match the token (nonce, size or provider differ)", t->id);
	if (h.creator_address != t->address)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "pass the token exactly as hpshm_segment_token() made it: pointers in the segment "
				       "are only right at the creator's address",
				       "the token for %s has the wrong address: token says 0x%llx, the segment was "
				       "created at 0x%llx",
				       t->id, t->address, (unsigned long long)h.creator_address);
	h.boot_id[sizeof(h.boot_id) - 1] = '\0';
	if (hpshm__boot_id(boot, sizeof(boot)) == 0 && h.boot_id[0] && strcmp(boot, h.boot_id) != 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "the token is stale; get a fresh one",
				       "segment %s was made before the last reboot", t->id);
	return 0;
}

/* The value of fact key (klen bytes) in an object text ("k=v k=v"), *vlen its length; NULL if absent. */
static const char *object_fact(const char *text, const char *key, size_t klen, size_t *vlen)
{
	const char *p = text;

	while (*p) {
		const char *end = p + strcspn(p, " ");
		const char *eq = memchr(p, '=', (size_t)(end - p));

		if (eq && (size_t)(eq - p) == klen && memcmp(p, key, klen) == 0) {
			*vlen = (size_t)(end - eq - 1);
			return eq + 1;
		}
		p = *end ? end + 1 : end;
	}
	return NULL;
}

/*
 * A header kept outside its segment (a companion) proves nothing by being found: the token
 * names the segment and its companion apart, and an edited token pairs one segment's
 * companion, nonce and all, with another object, as a stale one does once the segment's id
 * is given to a new object.  So the header records the provider's hpshm_mapping.object at
 * create, and the object the provider attached now must agree with it in every fact both
 * texts hold; the error names each fact that differs.  A header that records none (a
 * provider that cannot tell) is not checked, as before such records existed.
 */
static int attach_check_object(const struct hpshm_header *hp, const struct hpshm_mapping *m,
			       const struct hpshm__token *t, const char *provider, hpshm_error *err)
{
	const char *hint = "the token is stale (its segment was destroyed and its identifier given to another "
			   "object) or was edited to name another object; get a fresh one from the creator";
	char was[HPSHM_OBJECT_MAX], now[HPSHM_OBJECT_MAX], diff[HPSHM_TEXT_MAX];
	size_t used = 0, common = 0;
	const char *p;

	if (!HPSHM__HEADER_HAS(hp, 3, object))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "create the segment again with the same hpshm as the processes that attach it",
				       "segment %s has a version %u header in its companion, which does not say which "
				       "object it describes", t->id, (unsigned)hp->version);
	memcpy(was, hp->object, sizeof(was));
	was[sizeof(was) - 1] = '\0';
	if (was[0] == '\0')
		return 0;
	memcpy(now, m->object, sizeof(now));
	now[sizeof(now) - 1] = '\0';
	diff[0] = '\0';
	for (p = was; *p;) {
		const char *end = p + strcspn(p, " ");
		const char *eq = memchr(p, '=', (size_t)(end - p));
		const char *v;
		size_t vlen;

		if (eq && (v = object_fact(now, p, (size_t)(eq - p), &vlen)) != NULL) {
			common++;
			if (vlen != (size_t)(end - eq - 1) || memcmp(v, eq + 1, vlen) != 0) {
				int n = snprintf(diff + used, sizeof(diff) - used, "%s%.*s is %.*s, the header's %.*s",
						 used ? "; " : "", (int)(eq - p), p, (int)vlen, v, (int)(end - eq - 1),
						 eq + 1);

				if (n > 0)
					used = (size_t)n >= sizeof(diff) - used ? sizeof(diff) - 1 : used + (size_t)n;
			}
		}
		p = *end ? end + 1 : end;
	}
	if (common == 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, hint,
				       "provider %s cannot say which object %s is (\"%s\"), and the segment's header "
				       "describes %s", provider, t->id, now, was);
	if (diff[0])
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, hint,
				       "%s is not the object the segment's header describes: %s", t->id, diff);
	return 0;
}

/* Undo a provider's attach, keeping open a handle the process inherited. */
static void attach_undo(const struct hpshm_instance *p, struct hpshm_mapping *m)
{
	if (m->flags & HPSHM_MAP_INHERIT) {
		m->handle = HPSHM_NO_HANDLE;
		m->flags = 0;
	}
	(void)p->ops->detach(p, m);
}

/* In a child, map the header's companion the token names at addr.  0, or an error. */
static int companion_attach(struct hpshm__companion *c, void *addr, const char *id, const struct hpshm_config *cfg,
			    hpshm_error *err)
{
	struct hpshm_request rq;
	hpshm_error e;
	int rc;

	c->map.handle = HPSHM_NO_HANDLE;
	if ((rc = companion_request(&rq, addr, cfg)) < 0)
		return hpshm_error_set(err, rc, 0, NULL, NULL, "base pages too large for a header companion");
	memset(&e, 0, sizeof(e));
	rc = c->inst.ops->attach(&c->inst, &c->map, &rq, id, &e);
	if (rc < 0) {
		c->map.addr = NULL;
		return hpshm_error_set(err, rc, e.sys_errno, e.call[0] ? e.call : NULL, e.hint[0] ? e.hint : NULL,
				       "the segment's header companion %s: %s", id, e.message);
	}
	if (c->map.addr != addr || c->map.size != rq.size) {
		void *got = c->map.addr;
		size_t len = c->map.size;

		attach_undo(&c->inst, &c->map);
		c->map.addr = NULL;
		return hpshm_error_set(err, HPSHM_ESYS, 0, NULL, NULL,
				       "the header companion was attached with %zu bytes at %p, not %zu at %p", len, got,
				       rq.size, addr);
	}
	return 0;
}

int hpshm__segment_map(hpshm_segment **out, const struct hpshm_instance *p, const struct hpshm__token *tp,
		       int at_creator, unsigned origin, const struct hpshm_config *cfg, uint64_t t0, hpshm_error *err)
{
	const struct hpshm__token t = *tp;
	struct hpshm_request rq;
	struct hpshm_mapping m;
	struct hpshm__backing b;
	struct hpshm_segment *seg;
	struct hpshm__companion comp;
	struct hpshm_header *header;
	hpshm_error e;
	char tag[HPSHM_TAG_MAX];
	int rc, companion, tagged;

	memset(&rq, 0, sizeof(rq));
	rq.size = (size_t)t.size;
	rq.page_size = (size_t)t.page_size;
	rq.address = at_creator ? (void *)(uintptr_t)t.address : NULL;
	rq.mode = cfg->mode;
	rq.flags = HPSHM_REQ_REATTACH;
	rq.config = cfg;
	rq.option = hpshm__request_option;
	memset(&m, 0, sizeof(m));
	m.handle = HPSHM_NO_HANDLE;
	memset(&e, 0, sizeof(e));
	tagged = strcmp(t.header, "tag") == 0;
	companion = !tagged && strcmp(t.header, "tail") != 0;
	if (tagged && !(p->ops->caps & HPSHM_CAP_TAG))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the token exactly as hpshm_segment_token() made it",
				       "the token says provider %s labelled the segment, and %s labels no object",
				       p->name, p->name);
	if (tagged)
		rq.tag = hpshm__header_tag(t.nonce, t.address, tag);
	memset(&comp, 0, sizeof(comp));
	if (companion && hpshm__provider_find("plain", &comp.inst) < 0)
		return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, "use the same hpshm build in parent and child",
				       "the token's header is in a plain companion, and this process has no plain provider");
	/* A parent on Windows reserved the range in this process before it ran (hpshm__spawn()),
	 * the companion's granule included; give it back now, just before the providers map there. */
	if (rq.address)
		(void)hpshm__reservation_release(rq.address, rq.size + (companion ? HPSHM__ADDRESS_GRANULE : 0));
	rc = p->ops->attach(p, &m, &rq, t.id, &e);
	if (rc < 0) {
		if (err) {
			*err = e;
			hpshm__strlcpy(err->provider, p->name, sizeof(err->provider));
		}
		hpshm__log(cfg, HPSHM_LOG_ERROR, "attach %s %s: %s", p->name, t.id, e.message);
		return rc;
	}
	/*
	 * From here a failure means the token named the wrong object.  Undo the mapping but leave
	 * an inherited descriptor open: the token only named it, and a forged token must not
	 * close some other descriptor of this process.  It becomes ours only on success.  The
	 * provider says which handles came by inheritance (HPSHM_MAP_INHERIT).
	 */
	if ((rq.address && m.addr != rq.address) || m.size != rq.size) {
		void *got = m.addr;
		size_t len = m.size;

		attach_undo(p, &m);
		return hpshm_error_set(err, HPSHM_ESYS, 0, NULL, NULL, "provider %s attached %zu bytes at %p, not %zu at %p",
				       p->name, len, got, rq.size, rq.address);
	}
	header = tagged ? NULL : (struct hpshm_header *)((char *)m.addr + m.size - HPSHM_HEADER_REGION);
	if (companion) {
		rc = companion_attach(&comp, (char *)m.addr + m.size, t.header, cfg, err);
		if (rc < 0) {
			attach_undo(p, &m);
			return rc;
		}
		header = comp.map.addr;
	}
	/* A labelled object was checked by the provider's attach: its label is the nonce and
	 * the address, and a descriptor cannot outlive a boot. */
	rc = tagged ? 0 : attach_check_header(header, &t, companion, err);
	if (rc == 0 && companion)
		rc = attach_check_object(header, &m, &t, p->name, err);
	if (rc < 0) {
		if (companion)
			attach_undo(&comp.inst, &comp.map);
		attach_undo(p, &m);
		return rc;
	}
	/* The child checks the backing too: the kernel, not the token, says what it got. */
	memset(&b, 0, sizeof(b));
	if (hpshm__verify_backing(m.addr, m.size, hpshm__port_handle_of(m.handle, m.flags & HPSHM_MAP_DESCRIPTOR), &b) == 0 &&
	    b.page_size && b.page_size != rq.page_size) {
		char want[32], got[32];

		if (companion)
			attach_undo(&comp.inst, &comp.map);
		attach_undo(p, &m);
		return hpshm_error_set(err, HPSHM_ENOHUGE, 0, "verify", NULL,
				       "attached segment is backed by %s pages, the creator's by %s",
				       hpshm_size_format(b.page_size, got, sizeof(got)),
				       hpshm_size_format(rq.page_size, want, sizeof(want)));
	}
	seg = calloc(1, sizeof(*seg));
	if (!seg) {
		if (companion)
			attach_undo(&comp.inst, &comp.map);
		attach_undo(p, &m);
		return hpshm_error_set(err, HPSHM_ENOMEM, 0, "malloc", NULL, "out of memory for the segment handle");
	}
	seg->inst = *p;
	seg->map = m;
	seg->creator_pid = 0; /* attached or opened: never the owner (hpshm__segment_owned()) */
	seg->usable = companion || tagged ? m.size : m.size - HPSHM_HEADER_REGION;
	seg->header = header;
	if (tagged) {
		hpshm__header_hold(&seg->held, m.size, t.nonce, t.address, p->name, (size_t)t.page_size);
		seg->header = &seg->held;
	}
	seg->companion = comp;
	seg->cfg = *cfg;
	hpshm__strlcpy(seg->cfg.name, seg->header->name, sizeof(seg->cfg.name));
	hpshm__strlcpy(seg->report.provider, p->name, sizeof(seg->report.provider));
	seg->report.requested_size = seg->usable;
	seg->report.mapped_size = m.size;
	seg->report.usable_size = seg->usable;
	seg->report.requested_page_size = rq.page_size;
	seg->report.page_size = b.page_size ? b.page_size : rq.page_size;
	seg->report.verified = b.page_size != 0;
	hpshm__strlcpy(seg->report.verified_by, b.page_size ? b.source : "unverified", sizeof(seg->report.verified_by));
	seg->report.huge = b.page_size ? b.huge : (p->ops->caps & HPSHM_CAP_HUGE) != 0;
	seg->report.policy = cfg->huge_pages;
	/* An attach is no create: its time and its kind have their own members (version 2). */
	seg->report.origin = origin;
	seg->report.relocated = (uintptr_t)m.addr != (uintptr_t)t.address;
	seg->report.attach_ns = hpshm__now_ns() - t0;
	hpshm__log(cfg, HPSHM_LOG_INFO, "%s %s segment %s at %p%s", origin == HPSHM_ORIGIN_OPENED ? "opened" : "attached",
		   p->name, t.id, m.addr, seg->report.relocated ? " (not the creator's address)" : "");
	*out = seg;
	return 0;
}

int hpshm__segment_attach(hpshm_segment **out, const char *token, const hpshm_config *cfg_in, hpshm_error *err)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	struct hpshm_instance inst, *p = &inst;
	struct hpshm__token t;
	uint64_t t0 = hpshm__now_ns();
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !token)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_attach: NULL argument");
	*out = NULL;
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	memset(&t, 0, sizeof(t));
	rc = hpshm__token_parse(token, &t, err);
	if (rc < 0)
		return rc;
	if (hpshm__provider_find(t.provider, &inst) < 0)
		return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, "use the same hpshm build in parent and child",
				       "token names provider \"%s\", which this process does not have", t.provider);
	if (!(p->ops->caps & HPSHM_CAP_REATTACH))
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL, "provider %s cannot re-attach segments",
				       p->name);
	return hpshm__segment_map(out, p, &t, 1, HPSHM_ORIGIN_ATTACHED, cfg, t0, err);
}

int hpshm__segment_attach_env(hpshm_segment **out, const hpshm_config *cfg, hpshm_error *err)
{
	/* The config's trusted getenv: a setuid program must not map what its caller names. */
	const char *token = hpshm__getenv("HPSHM_TOKEN");

	if (!token) {
		if (err)
			memset(err, 0, sizeof(*err));
		if (out)
			*out = NULL;
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "start this program with hpshm_child_spawn() or `hpshm run`; a setuid or setgid "
				       "program ignores its environment, so pass it the token with "
				       "hpshm_segment_attach() instead",
				       "HPSHM_TOKEN is not set (or this process may not trust its environment): it "
				       "was not started to attach a segment");
	}
	return hpshm__segment_attach(out, token, cfg, err);
}

int hpshm__child_spawn(const hpshm_segment *seg, const char *path, char *const argv[], char *const envp[],
		       hpshm_child *child, hpshm_error *err)
{
	char *const *src = envp ? envp : hpshm__environ();
	char tokvar[HPSHM_TOKEN_MAX + 16] = "HPSHM_TOKEN=";
	char **env;
	size_t n = 0, k = 0;
	struct hpshm__process proc;
	intptr_t inherit[2];
	int rc, ninherit = 0;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!seg || !path || !argv || !child)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_child_spawn: NULL argument");
	rc = hpshm_segment_token(seg, tokvar + strlen(tokvar), sizeof(tokvar) - strlen(tokvar), err);
	if (rc < 0)
		return rc;
	while (src[n])
		n++;
	env = malloc((n + 2) * sizeof(*env));
	if (!env)
		return hpshm_error_set(err, HPSHM_ENOMEM, 0, "malloc", NULL, "out of memory for the child's environment");
	for (size_t i = 0; i < n; i++)
		if (strncmp(src[i], "HPSHM_TOKEN=", 12) != 0)
			env[k++] = src[i];
	env[k++] = tokvar;
	env[k] = NULL;
	/* The child inherits the segment's handle (a descriptor, a section HANDLE) only when the
	 * provider says attach needs it; a segment found by path or SysV id needs none, and a stray
	 * one would outlive detach.  The segment's range is reserved in the child where the OS
	 * allows it. */
	if (seg->map.flags & HPSHM_MAP_INHERIT)
		inherit[ninherit++] = seg->map.handle;
	if (seg->companion.map.addr && (seg->companion.map.flags & HPSHM_MAP_INHERIT))
		inherit[ninherit++] = seg->companion.map.handle;
	rc = hpshm__spawn(path, argv, env, inherit, ninherit, seg->map.addr,
			  seg->map.size + (seg->companion.map.addr ? HPSHM__ADDRESS_GRANULE : 0), &proc, err);
	free(env);
	if (rc < 0)
		return rc;
	child->pid = proc.pid;
	child->handle = (void *)proc.handle;
	return 0;
}

int hpshm_segment_inherit(const hpshm_segment *seg, char *buf, size_t len, hpshm_error *err)
{
	int n, rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!seg || !buf)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_inherit: NULL argument");
	/* The token first: a segment that cannot be re-attached says so before anything changes. */
	n = hpshm_segment_token(seg, buf, len, err);
	if (n < 0)
		return n;
	if ((seg->map.flags & HPSHM_MAP_INHERIT) && (rc = hpshm__handle_inheritable(seg->map.handle, err)) < 0)
		return rc;
	if (seg->companion.map.addr && (seg->companion.map.flags & HPSHM_MAP_INHERIT) &&
	    (rc = hpshm__handle_inheritable(seg->companion.map.handle, err)) < 0)
		return rc;
	return n;
}

int hpshm_segment_uninherit(const hpshm_segment *seg, hpshm_error *err)
{
	int rc, rc2 = 0;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!seg)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_uninherit: NULL argument");
	/* Both handles are tried, so one the OS refuses does not leave the other inheritable. */
	rc = (seg->map.flags & HPSHM_MAP_INHERIT) ? hpshm__handle_private(seg->map.handle, err) : 0;
	if (seg->companion.map.addr && (seg->companion.map.flags & HPSHM_MAP_INHERIT))
		rc2 = hpshm__handle_private(seg->companion.map.handle, rc < 0 ? NULL : err);
	return rc < 0 ? rc : rc2;
}

int hpshm_child_wait(hpshm_child *child, int *status, hpshm_error *err)
{
	struct hpshm__process proc;
	int rc;

	if (!child || child->pid <= 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_child_wait: no such child");
	proc.pid = child->pid;
	proc.handle = (intptr_t)child->handle;
	rc = hpshm__wait(&proc, status, err);
	child->handle = (void *)proc.handle;
	return rc;
}

/* ---- named objects: `hpshm ls` and `hpshm gc` ---- */

struct objects_walk {
	const struct hpshm_instance *provider; /* whose scan() is running */
	hpshm_object_fn              fn;       /* the caller's callback */
	void                        *user;     /* the caller's pointer */
	int                          count;    /* objects passed to fn */
	int                          stop;     /* fn asked to stop */
};

/*
 * Alive if the provider's mark says some process holds it (flock, shm_nattch) or if the
 * creator still runs: either alone could miss a holder (a creator that mapped and closed its
 * descriptor; children that outlived the creator), so dead means both say so.  Without a
 * header only the provider can tell (for SysV it asks after the creator too).
 */
static int objects_alive(const struct hpshm_found *f)
{
	struct hpshm_header h;

	if (f->alive != 0)
		return 1;
	if (f->has_header != HPSHM_FOUND_HEADER)
		return 0;
	hpshm__header_of(f, &h);
	return hpshm__process_alive(h.creator_pid, h.creator_start) != 0;
}

/* What hpshm_objects_list() says f is, with a note for people. */
static hpshm_object_state objects_state(const struct hpshm_found *f, char *note, size_t len)
{
	struct hpshm_header h;

	hpshm__header_of(f, &h);
	switch (f->has_header) {
	case HPSHM_FOUND_HEADER:
		if (objects_alive(f)) {
			snprintf(note, len, "a process holds it, or its creator (pid %lld) runs",
				 (long long)h.creator_pid);
			return HPSHM_OBJECT_ALIVE;
		}
		snprintf(note, len, "no process holds it and its creator (pid %lld) is gone",
			 (long long)h.creator_pid);
		return HPSHM_OBJECT_DEAD;
	case HPSHM_FOUND_MARKED:
		if (objects_alive(f)) {
			snprintf(note, len, "no header yet: being created, or held by a process");
			return HPSHM_OBJECT_ALIVE;
		}
		snprintf(note, len, "no header, but hpshm's creation mark: a create killed before writing it");
		return HPSHM_OBJECT_DEAD;
	case HPSHM_FOUND_BARE:
		if (objects_alive(f)) {
			snprintf(note, len, "no header, and a process holds it or its creator runs");
			return HPSHM_OBJECT_ALIVE;
		}
		if (f->mine == 1)
			snprintf(note, len, "no header or mark proves it is hpshm's: only a forced gc removes it");
		else
			snprintf(note, len, "no header or mark proves it is hpshm's, and another user owns it: only a "
				 "forced gc for all users removes it");
		return HPSHM_OBJECT_DEBRIS;
	case HPSHM_FOUND_FOREIGN_TYPE:
		snprintf(note, len, "not a regular file (a FIFO, socket, device or directory): not hpshm's");
		break;
	case HPSHM_FOUND_FOREIGN_LINK:
		snprintf(note, len, "a symbolic link, never followed: not hpshm's");
		break;
	case HPSHM_FOUND_FOREIGN_BACKING:
		snprintf(note, len, "memory or size hpshm never uses (not hugetlb, or an odd length): not hpshm's");
		break;
	default:
		snprintf(note, len, "its tail is not hpshm's header: not hpshm's");
		break;
	}
	return HPSHM_OBJECT_FOREIGN;
}

static int objects_one(void *user, const struct hpshm_found *f)
{
	struct objects_walk *w = user;
	int headed = f->has_header == HPSHM_FOUND_HEADER;
	struct hpshm_header h;
	hpshm_object o;

	/* Providers report what they find in hpshm's own name space (hpshm.* files, hpshm's SysV
	 * keys): hpshm's segments, debris without a header, and foreign objects, each classified
	 * (objects_state()), so ls shows everything there and gc removes only what is hpshm's. */
	hpshm__header_of(f, &h);
	memset(&o, 0, sizeof(o));
	hpshm__strlcpy(o.provider, w->provider->name, sizeof(o.provider));
	hpshm__strlcpy(o.id, f->id, sizeof(o.id));
	hpshm__strlcpy(o.name, headed && h.name[0] ? h.name : f->name, sizeof(o.name));
	/* Without a header, the object's own size: what gc would give back. */
	o.size = headed ? (size_t)h.usable_size : f->size;
	o.page_size = headed ? (size_t)h.page_size : 0;
	o.creator_pid = headed ? h.creator_pid : 0;
	o.created_unix = headed ? h.created_unix : 0;
	o.state = objects_state(f, o.note, sizeof(o.note));
	o.alive = o.state == HPSHM_OBJECT_FOREIGN ? -1 : o.state == HPSHM_OBJECT_ALIVE;
	o.mine = f->mine == 1;
	w->count++;
	if (w->fn(w->user, &o)) {
		w->stop = 1;
		return 1;
	}
	return 0;
}

int hpshm__objects_list(hpshm_object_fn fn, void *user, hpshm_error *err)
{
	struct objects_walk w;
	struct hpshm__provider_list all;

	if (!fn)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_objects_list: NULL callback");
	memset(&w, 0, sizeof(w));
	w.fn = fn;
	w.user = user;
	hpshm__providers(&all);
	for (unsigned i = 0; i < all.n && !w.stop; i++) {
		const struct hpshm_instance *p = &all.p[i];
		int rc;

		if (!p->ops->scan)
			continue;
		w.provider = p;
		rc = p->ops->scan(p, objects_one, &w);
		if (rc < 0)
			return hpshm_error_set(err, rc, 0, "scan", NULL, "provider %s could not list its segments",
					       p->name);
	}
	return w.count;
}

struct objects_find {
	const hpshm_object *want;  /* what the caller wants removed */
	struct hpshm_found  found; /* its current state */
	int                 hit;   /* found it */
};

static int objects_match(void *user, const struct hpshm_found *f)
{
	struct objects_find *q = user;

	if (strcmp(f->id, q->want->id) != 0)
		return 0;
	q->found = *f;
	q->hit = 1;
	return 1;
}

int hpshm_objects_remove(const hpshm_object *obj, unsigned flags, hpshm_error *err)
{
	struct hpshm_instance inst, *p = &inst;
	struct objects_find q;
	char note[128];
	int rc;

	if (!obj)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_objects_remove: NULL object");
	if (flags & ~(HPSHM_REMOVE_FORCE | HPSHM_REMOVE_ALL_USERS))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "pass 0, HPSHM_REMOVE_FORCE or HPSHM_REMOVE_FORCE | HPSHM_REMOVE_ALL_USERS",
				       "hpshm_objects_remove: unknown flags %#x", flags);
	if (hpshm__provider_find(obj->provider, &inst) < 0 || !p->ops->scan || !p->ops->remove)
		return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, NULL, "provider %s has no named segments",
				       obj->provider);
	/* Look again now: the object may have been recycled or re-attached since it was listed.
	 * What decides is this look, never the state the caller passes in. */
	memset(&q, 0, sizeof(q));
	q.want = obj;
	rc = p->ops->scan(p, objects_match, &q);
	if (rc < 0)
		return hpshm_error_set(err, rc, 0, "scan", NULL, "provider %s could not list its segments", p->name);
	if (!q.hit)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "list the segments again with `hpshm ls`",
				       "segment %s is gone", obj->id);
	switch (objects_state(&q.found, note, sizeof(note))) {
	case HPSHM_OBJECT_ALIVE:
		return hpshm_error_set(err, HPSHM_EEXIST, 0, NULL, "stop the processes using it first",
				       "segment %s is alive: %s", obj->id, note);
	case HPSHM_OBJECT_FOREIGN:
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "remove it yourself if you know nothing needs it",
				       "%s is never removed: %s", obj->id, note);
	case HPSHM_OBJECT_DEBRIS:
		if (!(flags & HPSHM_REMOVE_FORCE))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
					       "if you know it is hpshm's, remove it with `hpshm gc --force` "
					       "(HPSHM_REMOVE_FORCE)",
					       "%s has no hpshm header and nothing else proves it is hpshm's", obj->id);
		/* Root's forced gc must not take another user's objects on its word alone. */
		if (q.found.mine != 1 && !(flags & HPSHM_REMOVE_ALL_USERS))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
					       "if you know it is hpshm's, remove it with `hpshm gc --force --all-users` "
					       "(HPSHM_REMOVE_ALL_USERS), or as its owner",
					       "%s has no hpshm header and belongs to another user: a forced remove takes "
					       "only this user's debris", obj->id);
		break;
	default:
		break;
	}
	return p->ops->remove(p, &q.found, err);
}
