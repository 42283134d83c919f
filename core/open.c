/* SPDX-License-Identifier: MIT */
/*
 * core/open.c -- opening a named segment by its name, in any process: hpshm_segment_open().
 *
 * A token reaches only the children a creator starts; a server's unrelated processes (a
 * monitoring tool, a second server, a client started by hand) know the segment by the name
 * its creator gave, as they would know a shm_open() name or an APR shm file.  Each provider
 * that names segments knows where its names live and what its objects are (lookup(): a SysV
 * key, a file on a hugetlbfs mount, a POSIX shared memory name, a Windows section name); the
 * core reads no OS fact of its own.  The providers are asked in the order `auto` walks them
 * (or those of provider=), and the first that holds an object under the name decides:
 *
 *   - the object must prove it is hpshm's by the header at its tail (a named segment always
 *     keeps it there, core/internal.h): anything else under an hpshm name (a file without a
 *     header, another program's SysV segment whose key falls in hpshm's range) is refused and
 *     left alone; a header still being written is "not there yet";
 *   - the header must be this provider's and this name's (two Windows providers share one
 *     namespace, and a SysV key is a hash of the name, which another name may share): another
 *     one's lets the walk go on, and is named if nothing else is found;
 *   - its page size, which the creator verified, must be the configuration's huge_page_size
 *     when that names a size;
 *   - then the segment is mapped as a token would map it, through the provider's attach(),
 *     with a token made of what the header said (hpshm__segment_map()): at the creator's
 *     address under reattach=exec, else where the system chooses.  The header in the mapping
 *     is checked again against the one read before mapping, nonce and all, so an object put
 *     under the name between the look and the mapping is refused, never handed over.
 *
 * The opener is not the owner: its hpshm_segment_destroy() only detaches.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

/* The walk's memory, for the error when no provider had the segment. */
struct open_walk {
	char asked[HPSHM_TEXT_MAX]; /* the providers that had no object under the name */
	char other[HPSHM_TEXT_MAX]; /* an object under the name that is another provider's or name's */
};

static void open_append(char *list, size_t len, const char *name)
{
	size_t used = strlen(list);

	if (used < len)
		snprintf(list + used, len - used, "%s%s", used ? ", " : "", name);
}

/* Why an object is not an hpshm segment, by the class its provider found (HPSHM_FOUND_*). */
static const char *open_foreign_why(int cls)
{
	switch (cls) {
	case HPSHM_FOUND_BARE:
		return "it has no hpshm header";
	case HPSHM_FOUND_FOREIGN_TYPE:
		return "it is not a regular file or section (a FIFO, a socket, a directory, another kind of object)";
	case HPSHM_FOUND_FOREIGN_LINK:
		return "it is a symbolic link, which is never followed";
	case HPSHM_FOUND_FOREIGN_BACKING:
		return "it is memory or of a size hpshm never makes";
	default:
		return "its tail holds something other than an hpshm header";
	}
}

/* The object an identifier names, for messages: the path or section name without its key. */
static const char *open_where(const char *id)
{
	return strncmp(id, "path=", 5) == 0 || strncmp(id, "name=", 5) == 0 ? id + 5 : id;
}

/*
 * Is f, found by p under name, an hpshm segment this configuration may open?  0 with *t the
 * token that maps it; 1 when it is another provider's or another name's (the walk goes on,
 * w->other says what it was); or a negative code with err filled.
 */
static int open_check(const struct hpshm_instance *p, const char *name, const struct hpshm_found *f,
		      const struct hpshm_config *cfg, struct hpshm__token *t, struct open_walk *w, hpshm_error *err)
{
	struct hpshm_header h;
	char want[32], have[32], hint[HPSHM_TEXT_MAX];

	if (f->has_header == HPSHM_FOUND_MARKED)
		return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL,
				       "open it once its creator's hpshm_segment_create() has returned; if its creator "
				       "was killed, `hpshm gc` removes what it left",
				       "segment %s (%s) has no header yet: its creator is still creating it, or was "
				       "killed while it did", name, open_where(f->id));
	if (f->has_header != HPSHM_FOUND_HEADER)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "choose another name=; remove that object yourself only if you know nothing "
				       "needs it (hpshm never does)",
				       "%s, found under the name %s by provider %s, is not an hpshm segment: %s",
				       open_where(f->id), name, p->name, open_foreign_why(f->has_header));
	hpshm__header_of(f, &h);
	h.provider[sizeof(h.provider) - 1] = '\0';
	h.name[sizeof(h.name) - 1] = '\0';
	if (strcmp(h.provider, p->name) != 0 || strcmp(h.name, name) != 0) {
		snprintf(w->other, sizeof(w->other), "%.100s holds segment \"%.64s\" of provider %.31s",
			 open_where(f->id), h.name, h.provider);
		return 1;
	}
	/* A provisional header (backends/named_create.c) says whose the object is before the core has
	 * written the segment's own, whose nonce a token or this open can check. */
	if (h.nonce == 0)
		return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL,
				       "open it once its creator's hpshm_segment_create() has returned",
				       "segment %s (%s) is still being created", name, open_where(f->id));
	/* The reading rules of struct hpshm_header: creator_address exists from version 2 on. */
	if (!HPSHM__HEADER_HAS(&h, 2, creator_address))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "create the segment again with the same hpshm as the processes that open it",
				       "segment %s has a version %u header, which records no creator address", name,
				       (unsigned)h.version);
	if (h.page_size < 4096 || (h.page_size & (h.page_size - 1)) || f->size <= HPSHM_HEADER_REGION ||
	    f->size % h.page_size || h.usable_size != f->size - HPSHM_HEADER_REGION)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "choose another name=; `hpshm ls` shows what it is",
				       "%s is not the segment its header describes: %zu bytes, the header says %llu "
				       "usable on %llu-byte pages", open_where(f->id), f->size, (unsigned long long)h.usable_size,
				       (unsigned long long)h.page_size);
	if (cfg->huge_page_size != HPSHM_PAGE_SIZE_DEFAULT && cfg->huge_page_size != HPSHM__LARGEST &&
	    cfg->huge_page_size != h.page_size) {
		hpshm_size_format((size_t)h.page_size, have, sizeof(have));
		hpshm_size_format(cfg->huge_page_size, want, sizeof(want));
		snprintf(hint, sizeof(hint), "set huge_page_size=%s (the segment's) or default, or open another segment",
			 have);
		hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, hint,
				"segment %s has %s pages, and the configuration asks for %s (huge_page_size)", name, have,
				want);
		if (err)
			hpshm__strlcpy(err->key, "huge_page_size", sizeof(err->key));
		return HPSHM_EVALUE;
	}
	memset(t, 0, sizeof(*t));
	hpshm__strlcpy(t->provider, p->name, sizeof(t->provider));
	hpshm__strlcpy(t->id, f->id, sizeof(t->id));
	/* A resizable segment is mapped without taking its pages (core/resize.c). */
	hpshm__strlcpy(t->header, HPSHM__HEADER_HAS(&h, 4, resize_max) && h.resize_max ? "resize" : "tail",
		       sizeof(t->header));
	t->size = f->size;
	t->page_size = h.page_size;
	t->address = h.creator_address;
	t->nonce = h.nonce;
	/* The creator's address is used only under reattach=exec, and must then be one this
	 * process can map at, as a token's must. */
	if (cfg->reattach == HPSHM__REATTACH_EXEC && hpshm__token_check(t, NULL) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "open it without reattach=exec (where the system chooses), or from a program "
				       "built for its creator's word size",
				       "segment %s cannot be mapped at its creator's address 0x%llx here (%llu bytes on "
				       "%llu-byte pages)", name, t->address, t->size, t->page_size);
	return 0;
}

/* The providers hpshm_segment_open() asks, in order.  0, or a negative code with err filled. */
static int open_candidates(const struct hpshm_config *cfg, struct hpshm__provider_list *out, hpshm_error *err)
{
	struct hpshm__provider_list all;

	out->n = 0;
	if (cfg->nproviders == 0) {
		hpshm__providers(&all);
		for (unsigned i = 0; i < all.n; i++) {
			const struct hpshm_instance *p = &all.p[i];
			int left_out = 0;

			for (unsigned j = 0; j < cfg->nexcluded; j++)
				left_out |= strcmp(cfg->excluded[j], p->name) == 0;
			if (!left_out && (p->ops->caps & HPSHM_CAP_NAMED) && p->ops->lookup && p->ops->attach)
				out->p[out->n++] = *p;
		}
		return 0;
	}
	for (unsigned i = 0; i < cfg->nproviders; i++) {
		struct hpshm_instance *p = &out->p[out->n];

		if (hpshm__provider_find(cfg->providers[i], p) < 0)
			return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, "run `hpshm providers` for the list",
					       "provider \"%s\" is not registered", cfg->providers[i]);
		if (!(p->ops->caps & HPSHM_CAP_NAMED) || !p->ops->lookup || !p->ops->attach) {
			hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL,
					"name the provider the segment's creator used, one that names segments "
					"(`hpshm providers` shows NAMED), or leave provider= out",
					"provider %s cannot open segments by name", p->name);
			if (err)
				hpshm__strlcpy(err->key, "provider", sizeof(err->key));
			return HPSHM_ENOTSUP;
		}
		out->n++;
	}
	return 0;
}

int hpshm__segment_open(hpshm_segment **out, const char *name, const hpshm_config *cfg_in, hpshm_error *err)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	struct hpshm__provider_list cand;
	struct hpshm_request rq;
	struct hpshm_found f;
	struct hpshm__token t;
	struct open_walk w;
	uint64_t t0 = hpshm__port_now_ns();
	hpshm_error e;
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !name)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_open: NULL argument");
	*out = NULL;
	if (name[0] == '\0' || strlen(name) >= HPSHM__NAME_LEN)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the name its creator gave with name=",
				       "segment name \"%.64s\" is empty or longer than %d bytes", name, HPSHM__NAME_LEN - 1);
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	rc = open_candidates(cfg, &cand, err);
	if (rc < 0)
		return rc;
	memset(&w, 0, sizeof(w));
	for (unsigned i = 0; i < cand.n; i++) {
		const struct hpshm_instance *p = &cand.p[i];

		memset(&rq, 0, sizeof(rq));
		rq.name = name;
		rq.page_size = HPSHM_PAGE_SIZE_DEFAULT;
		if (p->ops->caps & HPSHM_CAP_HUGE)
			rq.page_size = cfg->huge_page_size == HPSHM__LARGEST ? HPSHM_PAGE_SIZE_LARGEST : cfg->huge_page_size;
		rq.mode = cfg->mode;
		rq.config = cfg;
		rq.option = hpshm__request_option;
		memset(&f, 0, sizeof(f));
		memset(&e, 0, sizeof(e));
		rc = p->ops->lookup(p, &rq, &f, &e);
		if (rc == HPSHM_ENOENT) {
			open_append(w.asked, sizeof(w.asked), p->name);
			continue;
		}
		if (rc == 0) {
			rc = open_check(p, name, &f, cfg, &t, &w, &e);
			if (rc == 1)
				continue;
		}
		if (rc == 0) {
			rc = hpshm__segment_map(out, p, &t, cfg->reattach == HPSHM__REATTACH_EXEC, HPSHM_ORIGIN_OPENED, cfg,
						t0, &e);
			if (rc == 0)
				return 0;
		}
		if (err) {
			*err = e;
			hpshm__strlcpy(err->provider, p->name, sizeof(err->provider));
		}
		hpshm__log(cfg, HPSHM_LOG_ERROR, "open %s (%s): %s", name, p->name, e.message);
		return rc;
	}
	if (cand.n == 0)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL,
				       "leave provider=auto with a provider that names segments (`hpshm providers`)",
				       "no provider here can open a segment by name (provider= leaves none that names "
				       "segments)");
	hpshm_error_set(&e, HPSHM_ENOENT, 0, NULL,
			w.other[0] ? "check name=; a provider= of its creator's finds only that provider's segments"
				   : "create it first (name= in its creator's configuration), or give this process its "
				     "creator's provider= and hugetlbfs_path=; `hpshm ls` lists the named segments",
			"no segment named %s (asked %s)%s%s", name, w.asked[0] ? w.asked : "no provider",
			w.other[0] ? "; " : "", w.other);
	hpshm__log(cfg, HPSHM_LOG_ERROR, "open %s: %s", name, e.message);
	if (err)
		*err = e;
	return HPSHM_ENOENT;
}
