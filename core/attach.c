/* SPDX-License-Identifier: MIT */
/*
 * core/attach.c -- mapping a segment a token names, in a child, and starting that child.
 * Layers: doc/architecture.md; the token's format is in core/token.c.
 *
 * A forged or stale token either fails to parse, fails to map (no such object, range
 * taken), or maps an object whose header does not match, which is unmapped again before the
 * error is returned: the caller never gets the wrong object, nor the right one in the wrong
 * place.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

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
	    h.usable_size != t->size - (hpshm__token_tail(t->header) ? HPSHM_HEADER_REGION : 0) ||
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
	if (hpshm__port_boot_id(boot, sizeof(boot)) == 0 && h.boot_id[0] && strcmp(boot, h.boot_id) != 0)
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
	if ((rc = hpshm__companion_request(&rq, addr, cfg)) < 0)
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

/* What an attach holds while it checks what a token named, so one clean-up path can undo it. */
struct attach_state {
	const struct hpshm_instance *p;         /* the provider the token names */
	struct hpshm__token          t;         /* the token, parsed */
	struct hpshm_request         rq;        /* what the provider is asked to attach */
	struct hpshm_mapping         m;         /* its mapping; m.addr is NULL until attached */
	struct hpshm__companion      comp;      /* the header's companion; comp.map.addr NULL if none */
	struct hpshm_header         *header;    /* where the header is read; NULL for a labelled object */
	struct hpshm__backing        b;         /* what the kernel says backs the mapping */
	char                         tag[HPSHM_TAG_MAX]; /* the label a labelled object must carry */
	int                          companion; /* the token's header is in a companion */
	int                          tagged;    /* the token's object carries the provider's label */
	int                          resizable; /* the token's segment was made with max_size */
};

/* The request for the token's object, and what its header place needs here.  Maps nothing:
 * 0, or an error that leaves nothing to undo. */
static int attach_prepare(struct attach_state *s, const struct hpshm_instance *p, const struct hpshm__token *tp,
			  int at_creator, const struct hpshm_config *cfg, hpshm_error *err)
{
	memset(s, 0, sizeof(*s));
	s->p = p;
	s->t = *tp;
	s->rq.size = (size_t)s->t.size;
	s->rq.page_size = (size_t)s->t.page_size;
	s->rq.address = at_creator ? (void *)(uintptr_t)s->t.address : NULL;
	s->rq.mode = cfg->mode;
	s->rq.flags = HPSHM_REQ_REATTACH;
	s->rq.config = cfg;
	s->rq.option = hpshm__request_option;
	s->m.handle = HPSHM_NO_HANDLE;
	s->tagged = strcmp(s->t.header, "tag") == 0;
	s->resizable = strcmp(s->t.header, "resize") == 0;
	s->companion = !s->tagged && !hpshm__token_tail(s->t.header);
	if (s->resizable && !(p->ops->caps & HPSHM_CAP_RESIZE))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the token exactly as hpshm_segment_token() made it",
				       "the token says the segment can resize, and provider %s cannot", p->name);
	if (s->resizable)
		s->rq.flags |= HPSHM_REQ_RESERVE; /* the reservation is mapped without taking its pages */
	if (s->tagged && !(p->ops->caps & HPSHM_CAP_TAG))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the token exactly as hpshm_segment_token() made it",
				       "the token says provider %s labelled the segment, and %s labels no object",
				       p->name, p->name);
	if (s->tagged)
		s->rq.tag = hpshm__header_tag(s->t.nonce, s->t.address, s->tag);
	if (s->companion && hpshm__provider_find("plain", &s->comp.inst) < 0)
		return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, "use the same hpshm build in parent and child",
				       "the token's header is in a plain companion, and this process has no plain provider");
	return 0;
}

/* Have the provider attach the token's object.  0, or its error with nothing mapped. */
static int attach_provider(struct attach_state *s, const struct hpshm_config *cfg, hpshm_error *err)
{
	const struct hpshm_instance *p = s->p;
	hpshm_error e;
	int rc;

	/* A parent on Windows reserved the range in this process before it ran (hpshm__port_spawn()),
	 * the companion's granule included; give it back now, just before the providers map there. */
	if (s->rq.address)
		(void)hpshm__port_reservation_release(s->rq.address,
						 s->rq.size + (s->companion ? HPSHM__ADDRESS_GRANULE : 0));
	memset(&e, 0, sizeof(e));
	rc = p->ops->attach(p, &s->m, &s->rq, s->t.id, &e);
	if (rc < 0) {
		s->m.addr = NULL;
		if (err) {
			*err = e;
			hpshm__strlcpy(err->provider, p->name, sizeof(err->provider));
		}
		hpshm__log(cfg, HPSHM_LOG_ERROR, "attach %s %s: %s", p->name, s->t.id, e.message);
	}
	return rc;
}

/*
 * Is the attached object the token's: the length and address asked for, its header (in the
 * tail or the companion, which is attached here) the token's, and its pages what the creator
 * had?  0, or an error; what was attached stays for the caller to undo.
 */
static int attach_check(struct attach_state *s, const struct hpshm_config *cfg, hpshm_error *err)
{
	const struct hpshm_instance *p = s->p;
	struct hpshm_mapping *m = &s->m;
	char want[32], got[32];
	int rc;

	if ((s->rq.address && m->addr != s->rq.address) || m->size != s->rq.size)
		return hpshm_error_set(err, HPSHM_ESYS, 0, NULL, NULL, "provider %s attached %zu bytes at %p, not %zu at %p",
				       p->name, m->size, m->addr, s->rq.size, s->rq.address);
	s->header = s->tagged ? NULL : (struct hpshm_header *)((char *)m->addr + m->size - HPSHM_HEADER_REGION);
	if (s->companion) {
		rc = companion_attach(&s->comp, (char *)m->addr + m->size, s->t.header, cfg, err);
		if (rc < 0)
			return rc;
		s->header = s->comp.map.addr;
	}
	/* A labelled object was checked by the provider's attach: its label is the nonce and
	 * the address, and a descriptor cannot outlive a boot. */
	rc = s->tagged ? 0 : attach_check_header(s->header, &s->t, s->companion, err);
	/* Mapped without its pages, a fixed-size segment could fault where nothing was taken;
	 * with them, a resizable one would take max_size from the pool: the header decides. */
	if (rc == 0 && !s->tagged && !s->companion &&
	    (HPSHM__HEADER_HAS(s->header, 4, resize_max) && s->header->resize_max != 0) != s->resizable)
		rc = hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the token exactly as hpshm_segment_token() made it",
				     "the token says segment %s is %sresizable, and its header says otherwise", s->t.id,
				     s->resizable ? "" : "not ");
	if (rc == 0 && s->companion)
		rc = attach_check_object(s->header, m, &s->t, p->name, err);
	if (rc < 0)
		return rc;
	/* The child checks the backing too: the kernel, not the token, says what it got. */
	if (hpshm__port_verify_backing(m->addr, m->size, hpshm__port_handle_of(m->handle, m->flags & HPSHM_MAP_DESCRIPTOR),
				  &s->b) == 0 &&
	    s->b.page_size && s->b.page_size != s->rq.page_size)
		return hpshm_error_set(err, HPSHM_ENOHUGE, 0, "verify", NULL,
				       "attached segment is backed by %s pages, the creator's by %s",
				       hpshm_size_format(s->b.page_size, got, sizeof(got)),
				       hpshm_size_format(s->rq.page_size, want, sizeof(want)));
	return 0;
}

/* The handle of a checked attach, with its report.  0, or HPSHM_ENOMEM. */
static int attach_handle(struct attach_state *s, hpshm_segment **out, unsigned origin,
			 const struct hpshm_config *cfg, uint64_t t0, hpshm_error *err)
{
	const struct hpshm_instance *p = s->p;
	const struct hpshm_mapping *m = &s->m;
	const struct hpshm__backing *b = &s->b;
	struct hpshm_segment *seg;

	seg = calloc(1, sizeof(*seg));
	if (!seg)
		return hpshm_error_set(err, HPSHM_ENOMEM, 0, "malloc", NULL, "out of memory for the segment handle");
	seg->inst = *p;
	seg->map = *m;
	seg->creator_pid = 0; /* attached or opened: never the owner (hpshm__segment_owned()) */
	seg->usable = s->companion || s->tagged ? m->size : m->size - HPSHM_HEADER_REGION;
	seg->header = s->header;
	if (s->tagged) {
		hpshm__header_hold(&seg->held, m->size, s->t.nonce, s->t.address, p->name, (size_t)s->t.page_size);
		seg->header = &seg->held;
	}
	seg->companion = s->comp;
	seg->cfg = *cfg;
	hpshm__strlcpy(seg->cfg.name, seg->header->name, sizeof(seg->cfg.name));
	hpshm__strlcpy(seg->report.provider, p->name, sizeof(seg->report.provider));
	seg->report.requested_size = seg->usable;
	seg->report.mapped_size = m->size;
	seg->report.usable_size = seg->usable;
	seg->report.requested_page_size = s->rq.page_size;
	seg->report.page_size = b->page_size ? b->page_size : s->rq.page_size;
	seg->report.verified = b->page_size != 0;
	hpshm__strlcpy(seg->report.verified_by, b->page_size ? b->source : "unverified", sizeof(seg->report.verified_by));
	seg->report.huge = b->page_size ? b->huge : (p->ops->caps & HPSHM_CAP_HUGE) != 0;
	seg->report.policy = cfg->huge_pages;
	/* An attach is no create: its time and its kind have their own members (version 2). */
	seg->report.origin = origin;
	seg->report.relocated = (uintptr_t)m->addr != (uintptr_t)s->t.address;
	seg->report.attach_ns = hpshm__port_now_ns() - t0;
	seg->rs.slot = -1;
	if (s->resizable) {
		int rc = hpshm__resize_adopt(seg, 0, err);

		if (rc < 0) {
			free(seg);
			return rc;
		}
		seg->report.requested_size = seg->usable;
		seg->report.usable_size = seg->usable;
	}
	hpshm__log(cfg, HPSHM_LOG_INFO, "%s %s segment %s at %p%s", origin == HPSHM_ORIGIN_OPENED ? "opened" : "attached",
		   p->name, s->t.id, m->addr, seg->report.relocated ? " (not the creator's address)" : "");
	*out = seg;
	return 0;
}

int hpshm__segment_map(hpshm_segment **out, const struct hpshm_instance *p, const struct hpshm__token *tp,
		       int at_creator, unsigned origin, const struct hpshm_config *cfg, uint64_t t0, hpshm_error *err)
{
	struct attach_state s;
	int rc;

	rc = attach_prepare(&s, p, tp, at_creator, cfg, err);
	if (rc == 0)
		rc = attach_provider(&s, cfg, err);
	if (rc < 0)
		return rc;
	/*
	 * From here a failure means the token named the wrong object.  Undo the mapping but leave
	 * an inherited descriptor open: the token only named it, and a forged token must not
	 * close some other descriptor of this process.  It becomes ours only on success.  The
	 * provider says which handles came by inheritance (HPSHM_MAP_INHERIT).
	 */
	rc = attach_check(&s, cfg, err);
	if (rc < 0)
		goto fail;
	rc = attach_handle(&s, out, origin, cfg, t0, err);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	if (s.comp.map.addr)
		attach_undo(&s.comp.inst, &s.comp.map);
	attach_undo(p, &s.m);
	return rc;
}

int hpshm__segment_attach(hpshm_segment **out, const char *token, const hpshm_config *cfg_in, hpshm_error *err)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	struct hpshm_instance inst, *p = &inst;
	struct hpshm__token t;
	uint64_t t0 = hpshm__port_now_ns();
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
	const char *token = hpshm__port_getenv("HPSHM_TOKEN");

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

/* The extra handles the child keeps: with the segment's two, a Windows handle list holds 64. */
#define CHILD_HANDLES_MAX 62

/* Is opt what this library can do?  0, or HPSHM_EINVAL naming what is not. */
static int child_options_check(const hpshm_spawn_options *opt, hpshm_error *err)
{
	if (opt == NULL)
		return 0;
	if (opt->version != HPSHM_SPAWN_OPTIONS_VERSION)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "set version to HPSHM_SPAWN_OPTIONS_VERSION",
				       "hpshm_child_spawn_ex: options version %u, this library knows %u", opt->version,
				       HPSHM_SPAWN_OPTIONS_VERSION);
	if (opt->flags & ~(unsigned)HPSHM_SPAWN_KILL_WITH_PARENT)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass only hpshm_spawn_flag bits",
				       "hpshm_child_spawn_ex: unknown flags 0x%x", opt->flags);
	for (size_t i = 0; i < sizeof(opt->reserved) / sizeof(opt->reserved[0]); i++)
		if (opt->reserved[i] != 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "zero the options before setting them",
					       "hpshm_child_spawn_ex: reserved member %zu is not zero", i);
	if (opt->nhandles > CHILD_HANDLES_MAX || (opt->nhandles > 0 && opt->handles == NULL))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
				       "hpshm_child_spawn_ex: %zu handles%s: a child takes 0 to %d", opt->nhandles,
				       opt->handles == NULL ? " and no array" : "", CHILD_HANDLES_MAX);
	return 0;
}

/* The handles a child of seg needs: the segment's and its companion's, where the provider says
 * attach takes them by inheritance.  Their number. */
static int child_handles(const hpshm_segment *seg, intptr_t *out)
{
	int n = 0;

	/* A segment found by path or SysV id needs none, and a stray one would outlive detach. */
	if (seg->map.flags & HPSHM_MAP_INHERIT)
		out[n++] = seg->map.handle;
	if (seg->companion.map.addr && (seg->companion.map.flags & HPSHM_MAP_INHERIT))
		out[n++] = seg->companion.map.handle;
	return n;
}

/* The range a child must find free: the segment and its companion's granule. */
static size_t child_reserve_len(const hpshm_segment *seg)
{
	return seg->map.size + (seg->companion.map.addr ? HPSHM__ADDRESS_GRANULE : 0);
}

int hpshm__child_spawn(const hpshm_segment *seg, const char *path, char *const argv[], char *const envp[],
		       const hpshm_spawn_options *opt, hpshm_child *child, hpshm_error *err)
{
	char *const *src = envp ? envp : hpshm__port_environ();
	char tokvar[HPSHM_TOKEN_MAX + 16] = "HPSHM_TOKEN=";
	char **env;
	size_t n = 0, k = 0;
	struct hpshm__process proc;
	intptr_t inherit[2 + CHILD_HANDLES_MAX];
	int rc, ninherit;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!seg || !path || !argv || !child)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_child_spawn: NULL argument");
	if ((rc = child_options_check(opt, err)) < 0)
		return rc;
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
	/* The child inherits the segment's handles and the caller's extra ones, and finds the
	 * segment's range reserved where the OS allows it. */
	ninherit = child_handles(seg, inherit);
	for (size_t i = 0; opt != NULL && i < opt->nhandles; i++)
		inherit[ninherit++] = opt->handles[i];
	rc = hpshm__port_spawn_ex(path, argv, env, inherit, ninherit, seg->map.addr, child_reserve_len(seg),
				  opt != NULL && (opt->flags & HPSHM_SPAWN_KILL_WITH_PARENT) ? HPSHM__SPAWN_KILL_WITH_PARENT
											   : 0,
				  &proc, err);
	free(env);
	if (rc < 0)
		return rc;
	child->pid = proc.pid;
	child->handle = (void *)proc.handle;
	return 0;
}

int hpshm__child_prepare(const hpshm_segment *seg, void *process, char *buf, size_t len, hpshm_error *err)
{
	char tok[HPSHM_TOKEN_MAX];
	intptr_t ours[2], got[2], theirs[2];
	int n, rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!seg || !process || !buf)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_child_prepare: NULL argument");
	/* The token first: a segment that cannot be re-attached says so before the child is touched. */
	rc = hpshm_segment_token(seg, tok, sizeof(tok), err);
	if (rc < 0)
		return rc;
	n = child_handles(seg, ours);
	rc = hpshm__port_child_prepare((intptr_t)process, seg->map.addr, child_reserve_len(seg), ours, n, got, err);
	if (rc < 0)
		return rc;
	/* The token names each handle the child got by its value there; child_handles() listed the
	 * segment's first, and the companion's only when it has one to pass. */
	theirs[0] = seg->map.handle;
	theirs[1] = seg->companion.map.handle;
	for (int i = 0, k = 0; i < 2 && k < n; i++)
		if (ours[k] == theirs[i])
			theirs[i] = got[k++];
	rc = hpshm__segment_token_as(seg, theirs, buf, len, err);
	if (rc < 0)
		hpshm__port_child_unprepare((intptr_t)process, seg->map.addr, child_reserve_len(seg), got, n);
	return rc;
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
	if ((seg->map.flags & HPSHM_MAP_INHERIT) && (rc = hpshm__port_handle_inheritable(seg->map.handle, err)) < 0)
		return rc;
	if (seg->companion.map.addr && (seg->companion.map.flags & HPSHM_MAP_INHERIT) &&
	    (rc = hpshm__port_handle_inheritable(seg->companion.map.handle, err)) < 0)
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
	rc = (seg->map.flags & HPSHM_MAP_INHERIT) ? hpshm__port_handle_private(seg->map.handle, err) : 0;
	if (seg->companion.map.addr && (seg->companion.map.flags & HPSHM_MAP_INHERIT))
		rc2 = hpshm__port_handle_private(seg->companion.map.handle, rc < 0 ? NULL : err);
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
	rc = hpshm__port_wait(&proc, status, err);
	child->handle = (void *)proc.handle;
	return rc;
}
