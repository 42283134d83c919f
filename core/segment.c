/*
 * core/segment.c -- creating a segment: choosing providers, the huge_pages policy, rounding,
 * verifying from the kernel, populating, and recording every decision.
 *
 * The walk is one loop over candidates.  Each candidate is probed, then created; the result
 * is verified from the kernel (a huge provider whose mapping the kernel does not report as
 * huge has failed, whatever the flags said), then populated if asked or if a hugetlb cgroup
 * could refuse pages at fault time.  Every candidate leaves one line in the report, in order,
 * whether it was ruled out by configuration, by probe, by create, by verification or by
 * populate.  Policy (PostgreSQL's, made loud):
 *   on   only huge providers are candidates; if none works, the error names each one's
 *        reason and carries one actionable hint;
 *   try  huge providers first, plain last; falling back is logged once at warning level;
 *   off  only plain.
 * Sizes are rounded up per candidate to the page size it uses, so a fallback gets the
 * original size rounded to base pages, and map and unmap lengths are always the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"
/*
 * The one exception to "the core never sees an OS": until provider ABI 3 lets probe() report
 * the page sizes, pools and the operator's fix, this file reads the Linux pools (huge_page_size
 * =largest, the pool hint) and the hugetlb cgroup's fault risk (populate=auto) from the Linux
 * port.  No other core file may include linux.h (scripts/check-layers.sh).
 */
#if defined(__linux__)
#include "linux/linux.h"
#else
/*
 * Elsewhere there are no hstate pools to read: the same facts, as far as the neutral port
 * knows them.  Each size the OS offers is a pool of unknown fill (available is taken as
 * enough, so huge_page_size=largest takes the largest size and the provider's own create
 * says whether its pages exist), there is no pool hint to give, and no cgroup can refuse a
 * fault.  These stand-ins go with the Linux include when provider ABI 3 lands.
 */
#include <limits.h>

struct hpshm__pool {
	size_t page_size; /* bytes */
};

static int hpshm__pools(struct hpshm__pool *out, int max)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm__huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES);

	for (int i = 0; i < n && i < max && i < HPSHM__MAX_PAGE_SIZES; i++)
		out[i].page_size = sizes[i];
	return n;
}

static unsigned long hpshm__pool_available(const struct hpshm__pool *p)
{
	(void)p;
	return ULONG_MAX;
}

static int hpshm__pool_get(size_t page_size, struct hpshm__pool *out)
{
	(void)page_size;
	(void)out;
	return HPSHM_EUNAVAILABLE;
}

static char *hpshm__hugetlb_hint(size_t size, size_t page_size, char *buf, size_t len)
{
	(void)size;
	(void)page_size;
	if (len > 0)
		buf[0] = '\0';
	return buf;
}

static int hpshm__hugetlb_fault_risk(size_t size, size_t page_size)
{
	(void)size;
	(void)page_size;
	return 0;
}
#endif

/* A candidate's outcome, while walking. */
struct segment_walk {
	const struct hpshm_config *cfg;
	hpshm_report              *r;
	char                       hint[HPSHM_TEXT_MAX]; /* the first actionable hint seen */
	char                       key[HPSHM_NAME_MAX];  /* the config key at fault, if any */
	int                        last_code;            /* the last candidate's error */
	int                        bad_address;          /* base_address lies outside the user range */
};

int hpshm_huge_page_sizes(size_t *sizes, int max)
{
	size_t offered[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm__huge_page_sizes(offered, HPSHM__MAX_PAGE_SIZES);

	for (int i = 0; i < n && i < max; i++)
		sizes[i] = offered[i];
	return n;
}

size_t hpshm_base_page_size(void)
{
	return hpshm__base_page_size();
}

static void segment_list_sizes(char *buf, size_t len)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm_huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES);

	hpshm__size_list(sizes, n < HPSHM__MAX_PAGE_SIZES ? n : HPSHM__MAX_PAGE_SIZES, buf, len);
}

/*
 * The huge page size this configuration asks for, checked against what the kernel offers.
 * 0 with why filled when there is none to use.  "largest" takes the largest size whose pool
 * can hold the segment now, else the largest offered: a 1 GiB pool is rarely filled at run
 * time, and an operator who wrote "largest" wants the best that works.
 */
static size_t segment_huge_page_size(const struct hpshm_config *cfg, size_t size, char *why, size_t len)
{
	struct hpshm__pool pools[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm__pools(pools, HPSHM__MAX_PAGE_SIZES);
	char s[32], offered[128];

	if (n <= 0) {
		snprintf(why, len, "the kernel offers no huge pages");
		return 0;
	}
	if (n > HPSHM__MAX_PAGE_SIZES)
		n = HPSHM__MAX_PAGE_SIZES;
	if (cfg->huge_page_size == 0) {
		size_t d = hpshm__default_huge_page_size();

		return d ? d : pools[0].page_size;
	}
	if (cfg->huge_page_size == HPSHM__LARGEST) {
		for (int i = n - 1; i >= 0; i--) {
			size_t pages = size / pools[i].page_size + (size % pools[i].page_size != 0);

			if (hpshm__pool_available(&pools[i]) >= pages)
				return pools[i].page_size;
		}
		return pools[n - 1].page_size;
	}
	for (int i = 0; i < n; i++)
		if (pools[i].page_size == cfg->huge_page_size)
			return cfg->huge_page_size;
	segment_list_sizes(offered, sizeof(offered));
	snprintf(why, len, "huge_page_size=%s: the kernel offers no such huge pages (offered: %s)",
		 hpshm_size_format(cfg->huge_page_size, s, sizeof(s)), offered);
	return 0;
}

int hpshm__segment_sizes(const struct hpshm_config *cfg, size_t size, size_t page_size, size_t *mapped,
			 size_t *usable)
{
	size_t header = hpshm__wants_header(cfg) ? HPSHM_HEADER_REGION : 0;
	int rc;

	/* A segment with a header gets one more region at its tail, so the caller's pointer is
	 * the mapping's first byte and the header never sits in front of it.  When size is an
	 * exact multiple of the page size, that region costs one more page. */
	if (size > SIZE_MAX - header)
		return HPSHM_EOVERFLOW;
	rc = hpshm__round_up(size + header, page_size, mapped);
	if (rc < 0)
		return rc;
	if (usable)
		*usable = *mapped - header;
	return 0;
}

int hpshm_segment_footprint(size_t size, size_t page_size, const hpshm_config *cfg_in, size_t *mapped,
			    size_t *usable)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;

	if (size == 0 || page_size == 0 || (page_size & (page_size - 1)) || !mapped)
		return HPSHM_EINVAL;
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	return hpshm__segment_sizes(cfg, size, page_size, mapped, usable);
}

static void segment_request(struct hpshm_request *rq, const struct hpshm_config *cfg)
{
	memset(rq, 0, sizeof(*rq));
	rq->name = cfg->name[0] ? cfg->name : NULL;
	rq->mode = cfg->mode;
	rq->address = (void *)cfg->base_address;
	rq->hugetlbfs_path = cfg->hugetlbfs_path[0] ? cfg->hugetlbfs_path : NULL;
}

static void segment_attempt(struct segment_walk *w, const struct hpshm_provider *p, size_t page_size, int result,
			    int sys_errno, const char *call, const char *reason)
{
	hpshm_attempt *a;

	if (result < 0)
		w->last_code = result;
	if (w->r->nattempts >= HPSHM_MAX_ATTEMPTS)
		return;
	a = &w->r->attempts[w->r->nattempts++];
	memset(a, 0, sizeof(*a));
	hpshm__strlcpy(a->provider, p->name, sizeof(a->provider));
	a->page_size = page_size;
	a->result = result;
	a->sys_errno = sys_errno;
	hpshm__strlcpy(a->call, call, sizeof(a->call));
	hpshm__strlcpy(a->reason, reason, sizeof(a->reason));
	hpshm__log(w->cfg, HPSHM_LOG_DEBUG, "%s: %s%s%s", p->name, result ? hpshm_errname(result) : "ok",
		   reason && reason[0] ? ": " : "", reason ? reason : "");
}

static void segment_keep_hint(struct segment_walk *w, const char *hint)
{
	if (!w->hint[0] && hint && hint[0])
		hpshm__strlcpy(w->hint, hint, sizeof(w->hint));
}

/* Is provider p a candidate under this configuration?  NULL if yes, else why not. */
static const char *segment_excluded(const struct hpshm_config *cfg, const struct hpshm_provider *p)
{
	for (unsigned i = 0; i < cfg->nexcluded; i++)
		if (strcmp(cfg->excluded[i], p->name) == 0)
			return "left out by provider=auto,-name";
	if (cfg->huge_pages == HPSHM_HUGE_ON && !(p->caps & HPSHM_CAP_HUGE))
		return "huge_pages=on admits only huge page providers";
	if (cfg->huge_pages == HPSHM_HUGE_OFF && (p->caps & HPSHM_CAP_HUGE))
		return "huge_pages=off admits only plain pages";
	if (cfg->reattach == HPSHM__REATTACH_EXEC && !(p->caps & HPSHM_CAP_REATTACH))
		return "reattach=exec: a child started by exec cannot re-attach this provider's segments";
	return NULL;
}

/* Make sure the mapping is what the provider promised; fills the report's page facts. */
static int segment_verify(struct segment_walk *w, const struct hpshm_provider *p, const struct hpshm_request *rq,
			  const struct hpshm_mapping *m)
{
	struct hpshm__backing b;
	hpshm_report *r = w->r;
	char want[32], got[32], why[HPSHM_TEXT_MAX];

	memset(&b, 0, sizeof(b));
	if (hpshm__verify_backing(m->addr, m->size, m->fd, &b) < 0 || b.page_size == 0) {
		/* Nothing to read the truth from (not Linux, or /proc hidden): say so. */
		r->page_size = rq->page_size;
		r->verified = 0;
		r->huge = (p->caps & HPSHM_CAP_HUGE) != 0;
		hpshm__strlcpy(r->verified_by, "unverified", sizeof(r->verified_by));
		return 0;
	}
	r->page_size = b.page_size;
	r->verified = 1;
	r->huge = b.huge;
	hpshm__strlcpy(r->verified_by, b.source, sizeof(r->verified_by));
	if ((p->caps & HPSHM_CAP_HUGE) && (!b.huge || b.page_size != rq->page_size)) {
		snprintf(why, sizeof(why), "asked for %s pages, the kernel (%s) reports %s%s pages",
			 hpshm_size_format(rq->page_size, want, sizeof(want)), b.source,
			 hpshm_size_format(b.page_size, got, sizeof(got)), b.huge ? " huge" : "");
		segment_attempt(w, p, rq->page_size, HPSHM_ENOHUGE, 0, "verify", why);
		return HPSHM_ENOHUGE;
	}
	return 0;
}

static int segment_want_populate(const struct hpshm_config *cfg, const struct hpshm_provider *p,
				 const struct hpshm_request *rq)
{
	if (cfg->populate == HPSHM__POPULATE_ON)
		return 1;
	if (cfg->populate == HPSHM__POPULATE_OFF || !(p->caps & HPSHM_CAP_HUGE))
		return 0;
	/* A fault-time cgroup limit without a reservation limit turns a late fault into SIGBUS:
	 * take every page now, when a failure is still an error code. */
	return hpshm__hugetlb_fault_risk(rq->size, rq->page_size);
}

/*
 * The top of the user address range on this architecture, as the kernel sets it by default
 * (TASK_SIZE): 47 bits on x86-64 and most 64-bit ports, 48 on arm64 with 4 KiB pages.  It is
 * only used to explain a failure the kernel already reported, never to refuse an address up
 * front: a kernel with a wider range (x86-64 with 5-level paging) maps higher addresses on
 * request, and then there is no failure to explain.
 */
static uintptr_t segment_user_top(void)
{
#if defined(__aarch64__)
	return (uintptr_t)1 << 48;
#elif defined(__x86_64__) && !defined(__ILP32__)
	return ((uintptr_t)1 << 47) - 4096;   /* the last page below 2^47 is never mapped */
#elif UINTPTR_MAX > 0xffffffffu
	return (uintptr_t)1 << 47;
#else
	return (uintptr_t)0xc0000000u;   /* the common 3 GiB / 1 GiB split */
#endif
}

/*
 * A fixed address the kernel refused with ENOMEM or EINVAL, where the segment would end past
 * the top of the user range, is a bad base_address, not a shortage of memory: say which
 * address and where the range ends.  1 if so (why filled), else 0.
 */
static int segment_address_outside(const struct hpshm_request *rq, int sys_errno, char *why, size_t len)
{
	uintptr_t at = (uintptr_t)rq->address, top = segment_user_top();

	if (!at || (sys_errno != ENOMEM && sys_errno != EINVAL))
		return 0;
	if (at < top && rq->size <= top - at)
		return 0;
	snprintf(why, len, "base_address %#llx is outside the user address range (top %#llx)%s",
		 (unsigned long long)at, (unsigned long long)top, at < top ? " for a segment that long" : "");
	return 1;
}

/* Try one candidate.  0 with *seg made, or a negative code (recorded) to move on. */
static int segment_try(struct segment_walk *w, const struct hpshm_provider *p, size_t size, size_t huge_ps,
		       const char *huge_why, struct hpshm_segment **seg)
{
	const struct hpshm_config *cfg = w->cfg;
	struct hpshm_request rq;
	struct hpshm_probe pr;
	struct hpshm_mapping m;
	struct hpshm_header *header;
	hpshm_error perr;
	const char *why;
	char why_address[HPSHM_TEXT_MAX];
	uint64_t t0;
	int rc;

	segment_request(&rq, cfg);
	why = segment_excluded(cfg, p);
	if (why) {
		segment_attempt(w, p, 0, HPSHM_EUNAVAILABLE, 0, "config", why);
		return HPSHM_EUNAVAILABLE;
	}
	if (p->caps & HPSHM_CAP_HUGE) {
		if (huge_ps == 0) {
			if (cfg->huge_page_size && cfg->huge_page_size != HPSHM__LARGEST)
				hpshm__strlcpy(w->key, "huge_page_size", sizeof(w->key));
			segment_attempt(w, p, cfg->huge_page_size == HPSHM__LARGEST ? 0 : cfg->huge_page_size,
					HPSHM_EUNAVAILABLE, 0, "config", huge_why);
			return HPSHM_EUNAVAILABLE;
		}
		rq.page_size = huge_ps;
	} else {
		rq.page_size = hpshm__base_page_size();
	}
	rc = hpshm__segment_sizes(cfg, size, rq.page_size, &rq.size, NULL);
	if (rc < 0) {
		segment_attempt(w, p, rq.page_size, HPSHM_EOVERFLOW, 0, "round", "size overflows when rounded to the page size");
		return HPSHM_EOVERFLOW;
	}
	if (cfg->reattach == HPSHM__REATTACH_EXEC && !rq.address) {
		void *at;
		/* 64 KiB at least: Windows' granularity, so the same addresses work everywhere. */
		size_t align = rq.page_size > 65536 ? rq.page_size : 65536;

		rc = hpshm__pick_address(rq.size, align, &at);
		if (rc < 0) {
			segment_attempt(w, p, rq.page_size, rc, 0, "mmap", "no free address range for the segment");
			return rc;
		}
		rq.address = at;
	}

	memset(&pr, 0, sizeof(pr));
	rc = p->probe(&rq, &pr);
	if (rc < 0) {
		if (p->caps & HPSHM_CAP_HUGE) {
			char hint[HPSHM_TEXT_MAX];
			struct hpshm__pool pool;

			/* Pool too small is the usual cause; name the sysctl and the page count. */
			if (hpshm__pool_get(rq.page_size, &pool) == 0 &&
			    hpshm__pool_available(&pool) < rq.size / rq.page_size)
				segment_keep_hint(w, hpshm__hugetlb_hint(rq.size, rq.page_size, hint, sizeof(hint)));
		}
		segment_attempt(w, p, rq.page_size, rc, pr.sys_errno, "probe", pr.reason[0] ? pr.reason : "unavailable");
		return rc;
	}

	memset(&m, 0, sizeof(m));
	m.fd = -1;
	m.id = -1;
	memset(&perr, 0, sizeof(perr));
	rc = p->create(&m, &rq, &perr);
	if (rc < 0 && segment_address_outside(&rq, perr.sys_errno, why_address, sizeof(why_address))) {
		/* Every provider will fail the same way: this hint replaces any earlier one. */
		w->bad_address = 1;
		hpshm__strlcpy(w->key, "base_address", sizeof(w->key));
		hpshm__strlcpy(w->hint, "choose a lower base_address, or auto", sizeof(w->hint));
		segment_attempt(w, p, rq.page_size, HPSHM_EVALUE, perr.sys_errno, perr.call[0] ? perr.call : "create",
				why_address);
		return HPSHM_EVALUE;
	}
	if (rc < 0) {
		segment_keep_hint(w, perr.hint);
		segment_attempt(w, p, rq.page_size, rc, perr.sys_errno, perr.call[0] ? perr.call : "create",
				perr.message);
		return rc;
	}

	/* The header goes in first of all: a named object that a crash leaves behind must
	 * already say whose it is, or `hpshm gc` could never tell it from a foreign one. */
	header = hpshm__wants_header(cfg) ? hpshm__header_write(&m, p->name, cfg->name, rq.page_size) : NULL;

	rc = segment_verify(w, p, &rq, &m);
	if (rc < 0) {
		(void)p->destroy(&m);
		return rc;
	}

	w->r->populate = HPSHM_POPULATE_NONE;
	w->r->populate_ns = 0;
	if (segment_want_populate(cfg, p, &rq)) {
		t0 = hpshm__now_ns();
		memset(&perr, 0, sizeof(perr));
		rc = hpshm__populate(m.addr, m.size, rq.page_size, m.fd, &w->r->populate, &perr);
		w->r->populate_ns = hpshm__now_ns() - t0;
		if (rc < 0) {
			(void)p->destroy(&m);
			segment_keep_hint(w, perr.hint);
			segment_attempt(w, p, rq.page_size, HPSHM_EPOPULATE, perr.sys_errno,
					perr.call[0] ? perr.call : "populate", perr.message);
			return HPSHM_EPOPULATE;
		}
	}

	*seg = calloc(1, sizeof(**seg));
	if (!*seg) {
		(void)p->destroy(&m);
		segment_attempt(w, p, rq.page_size, HPSHM_ENOMEM, 0, "malloc", "out of memory for the segment handle");
		return HPSHM_ENOMEM;
	}
	(*seg)->provider = p;
	(*seg)->map = m;
	(*seg)->owner = 1;
	(*seg)->header = header;
	(*seg)->usable = header ? m.size - HPSHM_HEADER_REGION : m.size;
	hpshm__strlcpy(w->r->provider, p->name, sizeof(w->r->provider));
	w->r->mapped_size = m.size;
	w->r->usable_size = (*seg)->usable;
	w->r->requested_page_size = rq.page_size;
	segment_attempt(w, p, rq.page_size, 0, 0, "", "");
	return 0;
}

/* The whole failure, for the caller: every reason, one hint. */
static int segment_fail(struct segment_walk *w, size_t size, hpshm_error *err)
{
	const hpshm_report *r = w->r;
	const hpshm_attempt *cause = NULL;
	int code = w->cfg->huge_pages == HPSHM_HUGE_ON ? HPSHM_ENOHUGE : w->last_code;
	char msg[HPSHM_MESSAGE_MAX], s[32];
	size_t used;

	/* A name in use is the caller's conflict, not a shortage of huge pages: say so.  So is
	 * an address no process can map at. */
	for (unsigned i = 0; i < r->nattempts; i++)
		if (r->attempts[i].result == HPSHM_EEXIST)
			code = HPSHM_EEXIST;
	if (w->bad_address)
		code = HPSHM_EVALUE;
	if (code == 0)
		code = HPSHM_EUNAVAILABLE;
	used = (size_t)snprintf(msg, sizeof(msg), "no provider could create a %s segment%s",
				hpshm_size_format(size, s, sizeof(s)),
				w->cfg->huge_pages == HPSHM_HUGE_ON ? " with huge pages (huge_pages=on)" : "");
	for (unsigned i = 0; i < r->nattempts && used < sizeof(msg); i++)
		used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s %s: %s", i ? ";" : ":",
					 r->attempts[i].provider, r->attempts[i].reason);
	/* The errno and call worth showing: the first real system failure, not a config exclusion. */
	for (unsigned i = 0; i < r->nattempts; i++) {
		if (strcmp(r->attempts[i].call, "config") == 0)
			continue;
		if (!cause || (!cause->sys_errno && r->attempts[i].sys_errno))
			cause = &r->attempts[i];
	}
	hpshm_error_set(err, code, cause ? cause->sys_errno : 0, cause ? cause->call : NULL,
			w->hint[0] ? w->hint : "run `hpshm probe` to see what this machine offers", "%s", msg);
	if (err) {
		err->provider[0] = '\0';
		hpshm__strlcpy(err->key, w->key, sizeof(err->key));
	}
	hpshm__log(w->cfg, HPSHM_LOG_ERROR, "%s (hint: %s)", msg, w->hint[0] ? w->hint : "run `hpshm probe`");
	return code;
}

/* A caller error in the configuration itself (not a machine limitation). */
static int segment_config_error(hpshm_error *err, const char *key, const char *name, const char *conflict)
{
	hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, "change provider= or the other key so they agree",
			"provider %s %s", name, conflict);
	if (err)
		hpshm__strlcpy(err->key, key, sizeof(err->key));
	return HPSHM_EVALUE;
}

int hpshm_segment_create_ex(hpshm_segment **out, size_t size, const hpshm_config *cfg_in, hpshm_report *report,
			    hpshm_error *err)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	const struct hpshm_provider *p;
	struct segment_walk w;
	struct hpshm_segment *seg = NULL;
	hpshm_report r;
	size_t huge_ps, rounded;
	char huge_why[HPSHM_TEXT_MAX] = "";
	uint64_t t0 = hpshm__now_ns();
	int rc = HPSHM_EUNAVAILABLE;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	memset(&r, 0, sizeof(r));
	r.requested_size = size;
	r.policy = cfg->huge_pages;
	if (report)
		*report = r;
	if (!out)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_create: out is NULL");
	*out = NULL;
	if (size == 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "ask for at least one byte",
				       "segment size must be greater than 0");
	if (hpshm__round_up(size, hpshm__base_page_size(), &rounded) < 0)
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, "ask for a size the address space can hold",
				       "segment size %zu overflows when rounded to the page size", size);

	memset(&w, 0, sizeof(w));
	w.cfg = cfg;
	w.r = &r;
	huge_ps = segment_huge_page_size(cfg, size, huge_why, sizeof(huge_why));

	if (cfg->nproviders == 0) {
		struct hpshm__provider_list all;

		/* Providers the policy excludes are recorded too: the report lists every one. */
		hpshm__providers(&all);
		for (unsigned i = 0; i < all.n; i++) {
			rc = segment_try(&w, all.p[i], size, huge_ps, huge_why, &seg);
			if (rc == 0)
				break;
		}
	} else {
		for (unsigned i = 0; i < cfg->nproviders; i++) {
			p = hpshm__provider_find(cfg->providers[i]);
			if (!p) {
				hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, "run `hpshm providers` for the list",
						"provider \"%s\" is not registered", cfg->providers[i]);
				if (err)
					hpshm__strlcpy(err->key, "provider", sizeof(err->key));
				return HPSHM_ENOPROVIDER;
			}
			/* Naming a provider the policy excludes is a contradiction in the config. */
			if (cfg->huge_pages == HPSHM_HUGE_OFF && (p->caps & HPSHM_CAP_HUGE))
				return segment_config_error(err, "huge_pages",
							    p->name, "uses huge pages but huge_pages=off");
			if (cfg->huge_pages == HPSHM_HUGE_ON && !(p->caps & HPSHM_CAP_HUGE))
				return segment_config_error(err, "huge_pages",
							    p->name, "cannot give huge pages but huge_pages=on");
			if (cfg->reattach == HPSHM__REATTACH_EXEC && !(p->caps & HPSHM_CAP_REATTACH))
				return segment_config_error(err, "reattach",
							    p->name, "cannot be re-attached after exec but reattach=exec");
		}
		for (unsigned i = 0; i < cfg->nproviders; i++) {
			rc = segment_try(&w, hpshm__provider_find(cfg->providers[i]), size, huge_ps, huge_why, &seg);
			if (rc == 0)
				break;
		}
	}
	r.create_ns = hpshm__now_ns() - t0;

	if (!seg) {
		if (report)
			*report = r;
		return segment_fail(&w, size, err);
	}

	seg->report = r;
	seg->cfg = *cfg;
	if (report)
		*report = r;
	if (r.nattempts > 1 && !r.huge && cfg->huge_pages == HPSHM_HUGE_TRY)
		hpshm__log(cfg, HPSHM_LOG_WARNING, "huge pages not used, fell back to %s: %s: %s", r.provider,
			   r.attempts[0].provider, r.attempts[0].reason);
	{
		char line[HPSHM_MESSAGE_MAX];

		hpshm_report_format(&seg->report, line, sizeof(line));
		hpshm__log(cfg, HPSHM_LOG_INFO, "created %s", line);
	}
	*out = seg;
	return 0;
}

int hpshm_segment_create(hpshm_segment **out, size_t size, const hpshm_config *cfg, hpshm_error *err)
{
	return hpshm_segment_create_ex(out, size, cfg, NULL, err);
}

int hpshm_segment_destroy(hpshm_segment *seg)
{
	/* The provider clears the mapping as it releases it: log what it was. */
	void *addr = seg ? seg->map.addr : NULL;
	size_t size = seg ? seg->map.size : 0;
	int rc;

	if (!seg)
		return 0;
	if (seg->owner)
		rc = seg->provider->destroy(&seg->map);
	else
		rc = seg->provider->detach(&seg->map);
	hpshm__log(&seg->cfg, HPSHM_LOG_INFO, "%s %s segment at %p (%zu bytes)%s", seg->owner ? "destroyed" : "detached",
		   seg->provider->name, addr, size, rc < 0 ? ": the OS refused to release it" : "");
	free(seg);
	return rc;
}

void *hpshm_segment_address(const hpshm_segment *seg)
{
	return seg ? seg->map.addr : NULL;
}

size_t hpshm_segment_size(const hpshm_segment *seg)
{
	return seg ? seg->usable : 0;
}

int hpshm_segment_is_owner(const hpshm_segment *seg)
{
	return seg ? seg->owner : 0;
}

const hpshm_report *hpshm_segment_report(const hpshm_segment *seg)
{
	return seg ? &seg->report : NULL;
}

const char *hpshm_populate_name(unsigned methods)
{
	static const char *const names[] = {
		"none", "fallocate", "madvise", "fallocate+madvise",
		"touch", "fallocate+touch", "madvise+touch", "fallocate+madvise+touch",
	};

	return names[methods & 7];
}

int hpshm_report_format(const hpshm_report *r, char *buf, size_t len)
{
	char req[32], mapped[32], ps[32];

	if (!r || (!buf && len))
		return HPSHM_EINVAL;
	return snprintf(buf, len,
			"provider=%s size=%s mapped=%s page_size=%s (%s) huge=%s populate=%s (%.1f ms) "
			"create=%.1f ms attempts=%u",
			r->provider[0] ? r->provider : "none", hpshm_size_format(r->requested_size, req, sizeof(req)),
			hpshm_size_format(r->mapped_size, mapped, sizeof(mapped)),
			hpshm_size_format(r->page_size, ps, sizeof(ps)), r->verified ? r->verified_by : "unverified",
			r->huge ? "yes" : "no", hpshm_populate_name(r->populate), (double)r->populate_ns / 1e6,
			(double)r->create_ns / 1e6, r->nattempts);
}

int hpshm_provider_probe(const char *name, size_t size, const hpshm_config *cfg_in, size_t *page_size, char *reason,
			 size_t len)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	const struct hpshm_provider *p;
	struct hpshm_request rq;
	struct hpshm_probe pr;
	char why[HPSHM_TEXT_MAX] = "";
	int rc;

	if (reason && len)
		reason[0] = '\0';
	if (!name)
		return HPSHM_EINVAL;
	p = hpshm__provider_find(name);
	if (!p)
		return HPSHM_ENOPROVIDER;
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	segment_request(&rq, cfg);
	if (p->caps & HPSHM_CAP_HUGE) {
		rq.page_size = segment_huge_page_size(cfg, size ? size : 1, why, sizeof(why));
		if (rq.page_size == 0) {
			if (reason)
				hpshm__strlcpy(reason, why, len);
			return HPSHM_EUNAVAILABLE;
		}
	} else {
		rq.page_size = hpshm__base_page_size();
	}
	if (hpshm__round_up(size ? size : 1, rq.page_size, &rq.size) < 0) {
		if (reason)
			hpshm__strlcpy(reason, "size overflows when rounded to the page size", len);
		return HPSHM_EOVERFLOW;
	}
	if (page_size)
		*page_size = rq.page_size;
	memset(&pr, 0, sizeof(pr));
	rc = p->probe(&rq, &pr);
	if (rc < 0 && reason)
		hpshm__strlcpy(reason, pr.reason[0] ? pr.reason : "unavailable", len);
	return rc;
}
