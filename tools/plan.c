/* SPDX-License-Identifier: MIT */
/*
 * tools/plan.c -- `hpshm plan SIZE`: what a segment of SIZE needs, and how to get it.
 *
 * An operator wants the commands, not a lecture: plan asks every huge page provider the
 * configuration allows what it needs (hpshm_requirements(): the pool, a hugetlbfs mount, the
 * SysV privilege and limits, the hugetlb cgroup on Linux; the "Lock pages in memory" right on
 * Windows) and prints, for each need that falls short, the exact command that fixes it now
 * and the line that keeps it across a reboot, then the `hpshm check` that proves the result.
 * The providers know their mechanism's facts (backends/hugetlb_common.c, hugetlbfs.c,
 * sysv_hugetlb.c); plan only merges what several of them share and shows the pool.
 *
 * The page count is what create will map for the configuration given (--config and the
 * HPSHM_* environment, as a server started here would have it), computed by the same core
 * function create uses: a named segment keeps a header region at its tail, which costs one
 * more page when SIZE is an exact multiple of the page size (an unnamed re-attachable one
 * keeps it in its provider's label of the object, or in a companion of base pages).
 *
 * A page size the kernel does not offer now but the processor can have (1 GiB pages on a
 * kernel booted without them) is planned too, exit 0: plan says how to get the size, at boot
 * and at run time with the run time way's caveat (tools/pagesize.c), instead of refusing what
 * a reboot fixes.  Only a size no processor of this architecture maps is refused.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "base/base.h"
#include "base/json.h"
#include "ports/facts.h"
#include "tool.h"

#define PLAN_MAX_ITEMS 8
#define PLAN_MAX_CMDS  3
#define PLAN_LINE      640

/* One thing missing now, with what fixes it. */
struct plan_item {
	char        what[HPSHM_NAME_MAX];        /* "pool", "mount", "sysv_privilege", "sysv_limits", "cgroup" */
	char        affects[160];                /* the providers it stops */
	int         nproviders;                  /* how many */
	char        detail[PLAN_LINE];           /* what is short, with the figures */
	int         nnow;                        /* entries in now[] */
	char        now[PLAN_MAX_CMDS][PLAN_LINE];     /* commands that fix it at run time */
	int         npersist;                    /* entries in persist[] */
	char        persist[PLAN_MAX_CMDS][PLAN_LINE]; /* what keeps it across a reboot */
};

struct plan {
	size_t             size;                 /* bytes asked for */
	size_t             page_size;            /* huge page size planned for */
	int                is_default;           /* 1 if page_size is the kernel's default */
	int                unoffered;            /* 1 if the kernel does not offer page_size now */
	int                noffered;             /* entries in offered[] */
	size_t             offered[HPSHM__MAX_PAGE_SIZES]; /* the sizes it offers */
	struct tool_pages_fix fix;               /* how to get page_size, when unoffered */
	size_t             pages;                /* mapped / page_size */
	size_t             mapped;               /* what create maps: size rounded up, with any header */
	size_t             usable;               /* the part of mapped the caller gets */
	int                has_pool;             /* 1 if the OS keeps a pool of huge pages (Linux) */
	struct hpshm__pool pool;              /* the pool of page_size now */
	int                nitems;               /* entries in items[] */
	struct plan_item   items[PLAN_MAX_ITEMS];/* what is missing */
	int                nproviders;           /* providers asked */
	int                nnotes;               /* entries in notes[] */
	char               notes[6][PLAN_LINE];  /* advice that is not a shortfall */
	char               verify[PLAN_LINE];    /* the check command to run afterwards */
	unsigned           populate_threads;     /* threads a populate of the segment uses */
	char               numa[64];             /* the numa= policy ("default", "bind:1") */
	int                nnodes;               /* entries in nodes[] */
	struct tool_node_need nodes[PLAN_MAX_ITEMS]; /* what each node of the policy needs */
};

static void plan_note(struct plan *p, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;
static void plan_note(struct plan *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nnotes >= (int)(sizeof(p->notes) / sizeof(p->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->nnotes++], PLAN_LINE, fmt, ap);
	va_end(ap);
}

/* One provider's need, as hpshm_requirements() hands it over: merged with the same need of
 * other providers (same what, same figures), a note kept once. */
static int plan_need(void *user, const char *provider, const hpshm_requirement *r)
{
	struct plan *p = user;
	struct plan_item *it = NULL;
	size_t used;

	if (r->note[0]) {
		int seen = 0;

		for (int i = 0; i < p->nnotes; i++)
			seen |= strcmp(p->notes[i], r->note) == 0;
		if (!seen)
			plan_note(p, "%s", r->note);
	}
	if (r->met)
		return 0;
	for (int i = 0; i < p->nitems && !it; i++)
		if (strcmp(p->items[i].what, r->what) == 0 && strcmp(p->items[i].detail, r->detail) == 0)
			it = &p->items[i];
	if (!it) {
		if (p->nitems == PLAN_MAX_ITEMS)
			return 0;
		it = &p->items[p->nitems++];
		memset(it, 0, sizeof(*it));
		snprintf(it->what, sizeof(it->what), "%s", r->what);
		snprintf(it->detail, sizeof(it->detail), "%s", r->detail);
		for (int k = 0; k < PLAN_MAX_CMDS; k++) {
			if (r->now[k][0])
				snprintf(it->now[it->nnow++], PLAN_LINE, "%s", r->now[k]);
			if (r->persist[k][0])
				snprintf(it->persist[it->npersist++], PLAN_LINE, "%s", r->persist[k]);
		}
	}
	used = strlen(it->affects);
	snprintf(it->affects + used, sizeof(it->affects) - used, "%s%s", used ? ", " : "", provider);
	it->nproviders++;
	return 0;
}

/* Ask the providers what the segment needs.  0, or the exit code with the error printed. */
static int plan_needs(struct plan *p, const hpshm_config *cfg)
{
	hpshm_error err;
	int asked = hpshm_requirements(p->size, p->page_size, cfg, plan_need, p, &err);

	if (asked < 0)
		return tool_fail("plan", "%s", err.message);
	/* A need every provider asked shares reads as one line. */
	for (int i = 0; i < p->nitems; i++)
		if (asked > 1 && p->items[i].nproviders == asked)
			snprintf(p->items[i].affects, sizeof(p->items[i].affects), "every huge page provider");
	p->nproviders = asked;
	return 0;
}

/*
 * The per-node needs of the numa= policy, as plan items: a node the machine lacks (the create
 * is refused: change numa=), and a node whose pool cannot hold its share (bind: the create is
 * refused; preferred and interleave: the rest of the pages land on other nodes), with the
 * per-node file to write now and the kernel command line that keeps it (node-specific
 * hugepages=, Linux 5.15).
 */
static void plan_numa(struct plan *p, const hpshm_config *cfg)
{
	char ps[32], ks[32];

	p->nnodes = tool_numa_needs(cfg, p->pages, p->page_size, p->nodes, PLAN_MAX_ITEMS, p->numa, sizeof(p->numa));
	hpshm_size_format(p->page_size, ps, sizeof(ps));
	for (int i = 0; i < p->nnodes && p->nitems < PLAN_MAX_ITEMS; i++) {
		const struct tool_node_need *nd = &p->nodes[i];
		struct plan_item *it;

		if (nd->present && nd->free >= nd->share)
			continue;
		it = &p->items[p->nitems++];
		memset(it, 0, sizeof(*it));
		snprintf(it->affects, sizeof(it->affects), "numa=%s", p->numa);
		it->nproviders = 1;
		if (!nd->present) {
			snprintf(it->what, sizeof(it->what), "numa_node");
			snprintf(it->detail, sizeof(it->detail), "this machine has no node %d with memory: every create "
				 "with numa=%s is refused; name nodes `hpshm probe` lists", nd->node, p->numa);
			continue;
		}
		snprintf(it->what, sizeof(it->what), "node_pool");
		snprintf(it->detail, sizeof(it->detail), "node %d has %lu free %s pages (of %lu), its share of the "
			 "segment is %lu%s", nd->node, nd->free, ps, nd->total, nd->share,
			 nd->strict ? ": a bind without them is refused (its faults would fail: huge pages are "
				      "reserved for the whole machine, not per node)"
				    : ": the rest of its share lands on other nodes");
		if (nd->file[0]) {
			snprintf(it->now[it->nnow++], PLAN_LINE, "echo %lu > %s", nd->target, nd->file);
			snprintf(it->persist[it->npersist++], PLAN_LINE,
				 "kernel command line: hugepagesz=%s hugepages=%d:%lu (per node, Linux 5.15+)",
				 tool_kernel_size(p->page_size, ks, sizeof(ks)), nd->node, nd->target);
		}
	}
}

/*
 * A page size the kernel does not offer now: the one thing missing, what keeps it across a
 * reboot, and how to get it (p->fix).  The providers' own needs (a mount, a privilege, cgroup
 * limits) can be asked only of a size the kernel offers: the plan run again then shows them.
 */
static void plan_unoffered(struct plan *p)
{
	struct plan_item *it = &p->items[p->nitems++];
	char psz[32], list[128];

	tool_pages_fix(p->page_size, p->pages, &p->fix);
	hpshm_size_format(p->page_size, psz, sizeof(psz));
	memset(it, 0, sizeof(*it));
	snprintf(it->what, sizeof(it->what), "page_size");
	snprintf(it->affects, sizeof(it->affects), "every huge page provider");
	it->nproviders = 1;
	snprintf(it->detail, sizeof(it->detail), "this kernel offers no %s pages now (it offers %s): no provider "
		 "can map them until it does", psz, hpshm__size_list(p->offered, p->noffered, list, sizeof(list)));
	snprintf(it->persist[it->npersist++], PLAN_LINE, "kernel command line: %s", p->fix.boot);
	plan_note(p, "once the kernel offers %s pages, run this plan again: it then shows their pool and anything "
		  "else a provider needs (a hugetlbfs mount, a privilege, hugetlb cgroup limits)", psz);
}

/* "get_page_size": how to get a page size the kernel does not offer, null when it does. */
static void plan_json_fix(struct json *j, const struct plan *p)
{
	const struct tool_pages_fix *f = &p->fix;

	json_key(j, "get_page_size");
	if (!p->unoffered) {
		json_null(j);
		return;
	}
	json_object_open(j);
	json_kv_string(j, "boot", f->boot);
	json_kv_string(j, "boot_default", f->boot_default);
	json_kv_string(j, "boot_how", f->boot_how);
	json_kv_string(j, "runtime", f->runtime);
	json_kv_string(j, "runtime_node", f->runtime_node);
	json_kv_string(j, "runtime_caveat", f->caveat);
	json_key(j, "check");
	json_array_open(j);
	if (f->cpu_check[0])
		json_string(j, f->cpu_check);
	json_string(j, f->offered_check);
	json_array_close(j);
	json_object_close(j);
}

static int plan_json(const struct plan *p)
{
	struct json j;

	tool_json_open(&j, 1);
	json_object_open(&j);
	json_kv_uint(&j, "size", p->size);
	json_kv_uint(&j, "page_size", p->page_size);
	json_kv_bool(&j, "default_page_size", p->is_default);
	json_kv_uint(&j, "pages", p->pages);
	json_kv_uint(&j, "mapped_size", p->mapped);
	json_kv_uint(&j, "usable_size", p->usable);
	json_kv_bool(&j, "page_size_offered", !p->unoffered);
	json_key(&j, "offered_page_sizes");
	json_array_open(&j);
	for (int i = 0; i < p->noffered; i++)
		json_uint(&j, p->offered[i]);
	json_array_close(&j);
	plan_json_fix(&j, p);
	json_key(&j, "pool");
	if (p->has_pool && !p->unoffered) {
		json_object_open(&j);
		json_kv_uint(&j, "total", p->pool.total);
		json_kv_uint(&j, "free", p->pool.free);
		json_kv_uint(&j, "reserved", p->pool.resv);
		json_kv_uint(&j, "surplus", p->pool.surplus);
		json_kv_uint(&j, "overcommit", p->pool.overcommit);
		json_kv_uint(&j, "available", hpshm__os_pool_available(&p->pool));
		json_object_close(&j);
	} else {
		json_null(&j);
	}
	json_kv_uint(&j, "providers_asked", (uint64_t)p->nproviders);
	json_kv_uint(&j, "populate_threads", p->populate_threads);
	json_key(&j, "numa");
	json_object_open(&j);
	json_kv_string(&j, "policy", p->numa);
	json_key(&j, "nodes");
	json_array_open(&j);
	for (int i = 0; i < p->nnodes; i++) {
		json_object_open(&j);
		json_kv_uint(&j, "node", (uint64_t)p->nodes[i].node);
		json_kv_bool(&j, "present", p->nodes[i].present);
		json_kv_bool(&j, "strict", p->nodes[i].strict);
		json_kv_uint(&j, "share", p->nodes[i].share);
		json_kv_uint(&j, "free", p->nodes[i].free);
		json_kv_uint(&j, "total", p->nodes[i].total);
		json_object_close(&j);
	}
	json_array_close(&j);
	json_object_close(&j);
	json_kv_bool(&j, "ready", p->nitems == 0);

	json_key(&j, "missing");
	json_array_open(&j);
	for (int i = 0; i < p->nitems; i++) {
		const struct plan_item *it = &p->items[i];

		json_object_open(&j);
		json_kv_string(&j, "what", it->what);
		json_kv_string(&j, "affects", it->affects);
		json_kv_string(&j, "detail", it->detail);
		json_key(&j, "commands");
		json_array_open(&j);
		for (int k = 0; k < it->nnow; k++)
			json_string(&j, it->now[k]);
		json_array_close(&j);
		json_key(&j, "persistent");
		json_array_open(&j);
		for (int k = 0; k < it->npersist; k++)
			json_string(&j, it->persist[k]);
		json_array_close(&j);
		json_object_close(&j);
	}
	json_array_close(&j);

	json_key(&j, "commands");
	json_array_open(&j);
	for (int i = 0; i < p->nitems; i++)
		for (int k = 0; k < p->items[i].nnow; k++)
			json_string(&j, p->items[i].now[k]);
	json_array_close(&j);
	json_key(&j, "persistent");
	json_array_open(&j);
	for (int i = 0; i < p->nitems; i++)
		for (int k = 0; k < p->items[i].npersist; k++)
			json_string(&j, p->items[i].persist[k]);
	json_array_close(&j);
	json_key(&j, "notes");
	json_array_open(&j);
	for (int i = 0; i < p->nnotes; i++)
		json_string(&j, p->notes[i]);
	json_array_close(&j);
	json_kv_string(&j, "verify", p->verify);
	json_object_close(&j);
	if (tool_json_close(&j, 0, NULL) < 0)
		return tool_fail("plan", "internal error writing JSON");
	return TOOL_EXIT_OK;
}

/* How to get pages of a size the kernel does not offer now (psz: the size, for people). */
static void plan_text_unoffered(const struct plan *p, const char *psz)
{
	const struct tool_pages_fix *f = &p->fix;

	printf("\nmissing now:\n");
	for (int i = 0; i < p->nitems; i++)
		printf("  - %s (stops %s): %s\n", p->items[i].what, p->items[i].affects, p->items[i].detail);
	printf("\nat boot, the dependable way (kernel command line, then reboot):\n  %s\n  or, %s the default "
	       "size too:  %s %s\n  %s\n", f->boot, psz, f->boot_default, f->boot, f->boot_how);
	printf("\nor at run time, as root, once the kernel offers %s pages:\n  %s\n", psz, f->runtime);
	if (f->runtime_node[0])
		printf("  %s\n", f->runtime_node);
	printf("  caveat: %s\n", f->caveat);
	printf("\ncheck:\n");
	if (f->cpu_check[0])
		printf("  %s\n", f->cpu_check);
	printf("  %s\n", f->offered_check);
}

static void plan_text(const struct plan *p)
{
	char a[32], b[32], c[128], d[32];
	int any;

	printf("a segment of %s needs %zu huge page%s of %s (%s mapped", hpshm_size_format(p->size, a, sizeof(a)),
	       p->pages, p->pages == 1 ? "" : "s", hpshm_size_format(p->page_size, b, sizeof(b)),
	       hpshm_size_format(p->mapped, c, sizeof(c)));
	if (p->mapped > p->usable)
		printf(", %s of it for the segment's header", hpshm_size_format(p->mapped - p->usable, d, sizeof(d)));
	printf(")\n");
	if (p->unoffered)
		printf("this kernel offers no %s pages now (it offers %s): there is no %s pool to reserve yet\n", b,
		       hpshm__size_list(p->offered, p->noffered, c, sizeof(c)), b);
	else if (!p->has_pool)
		printf("no pool to reserve: %s pages come from free physical memory when a segment is created\n", b);
	else
		printf("the %s pool now: %lu total, %lu free, %lu reserved, %lu surplus, %lu overcommit, %lu available\n",
		       b, p->pool.total, p->pool.free, p->pool.resv, p->pool.surplus, p->pool.overcommit,
		       hpshm__os_pool_available(&p->pool));
	printf("populate: %u thread%s\n", p->populate_threads, p->populate_threads == 1 ? "" : "s");
	for (int i = 0; i < p->nnodes; i++)
		if (!p->nodes[i].present)
			printf("numa=%s: node %d: not on this machine, or without memory\n", p->numa, p->nodes[i].node);
		else
			printf("numa=%s: node %d: its share %lu pages, %lu free of its pool of %lu\n", p->numa,
			       p->nodes[i].node, p->nodes[i].share, p->nodes[i].free, p->nodes[i].total);

	if (p->unoffered) {
		plan_text_unoffered(p, b);
	} else if (p->nproviders == 0) {
		printf("\nno huge page provider the configuration allows offers %s pages: nothing to set up for them\n",
		       b);
	} else if (p->nitems == 0) {
		printf("\nnothing is missing: each of the %d huge page provider%s the configuration allows has what "
		       "it needs now\n", p->nproviders, p->nproviders == 1 ? "" : "s");
	} else {
		printf("\nmissing now:\n");
		for (int i = 0; i < p->nitems; i++)
			printf("  - %s (stops %s): %s\n", p->items[i].what, p->items[i].affects, p->items[i].detail);
		printf(p->has_pool ? "\nrun now, as root:\n" : "\nrun now, as an administrator:\n");
		for (int i = 0; i < p->nitems; i++)
			for (int k = 0; k < p->items[i].nnow; k++)
				printf("  %s\n", p->items[i].now[k]);
		any = 0;
		for (int i = 0; i < p->nitems; i++)
			any |= p->items[i].npersist > 0;
		if (any) {
			printf("\nto keep it across reboots:\n");
			for (int i = 0; i < p->nitems; i++)
				for (int k = 0; k < p->items[i].npersist; k++)
					printf("  %s\n", p->items[i].persist[k]);
		}
	}
	if (p->nnotes) {
		printf("\nnotes:\n");
		for (int i = 0; i < p->nnotes; i++)
			printf("  %s\n", p->notes[i]);
	}
	printf("\nthen verify:\n  %s\n", p->verify);
}

/*
 * The page size the configuration names (huge_page_size=1G), whether the kernel offers it or
 * not: 0 for default, largest and what cannot be read; those resolve against what it offers.
 */
static size_t plan_config_page_size(const hpshm_config *cfg)
{
	char value[64];
	size_t ps;

	if (hpshm_config_get(cfg, "huge_page_size", value, sizeof(value)) < 0 || strcmp(value, "default") == 0 ||
	    strcmp(value, "largest") == 0 || hpshm_size_parse(value, &ps) < 0)
		return 0;
	return ps;
}

/*
 * The page size to plan for (--huge-page-size, else the configuration's huge_page_size,
 * else the kernel's default), and what create maps for SIZE on it under cfg.  A size the
 * kernel does not offer is planned (p->unoffered) where it keeps a pool (Linux: a boot
 * parameter or a sysfs write adds the size) and the processor can map it.  0, or the exit
 * code with the error printed.
 */
static int plan_sizes(struct plan *p, const hpshm_config *cfg, const char *size_text, const char *ps_text)
{
	char offered[128], s[32], why[192], what[96] = "";
	int n, found;

	n = hpshm_huge_page_sizes(p->offered, HPSHM__MAX_PAGE_SIZES);
	if (n > HPSHM__MAX_PAGE_SIZES)
		n = HPSHM__MAX_PAGE_SIZES;
	if (n <= 0 && hpshm__os_pool_source()[0])
		return tool_fail("plan", "this kernel offers no huge pages (nothing in %s): "
				 "build it with CONFIG_HUGETLBFS", hpshm__os_pool_source());
	if (n <= 0)
		return tool_fail("plan", "this system offers hpshm no huge page size: there are no huge pages to plan");
	p->noffered = n;
	if (ps_text)
		snprintf(what, sizeof(what), "bad --huge-page-size '%s'", ps_text);
	if (p->page_size == 0 && (p->page_size = plan_config_page_size(cfg)) != 0)
		snprintf(what, sizeof(what), "huge_page_size=%s", hpshm_size_format(p->page_size, s, sizeof(s)));
	if (p->page_size == 0)
		p->page_size = tool_config_page_size(cfg);
	if (p->page_size == 0)
		p->page_size = p->offered[0];
	found = 0;
	for (int i = 0; i < n; i++)
		found |= p->offered[i] == p->page_size;
	hpshm_size_format(p->page_size, s, sizeof(s));
	if (!found && !p->has_pool)
		return tool_fail("plan", "%s: this system offers no %s pages; it offers %s", what, s,
				 tool_offered_sizes(offered, sizeof(offered)));
	if (!found && !tool_page_size_possible(p->page_size, why, sizeof(why)))
		return tool_fail("plan", "%s: no processor of this kind maps %s pages: %s; this kernel offers %s", what, s,
				 why, tool_offered_sizes(offered, sizeof(offered)));
	p->unoffered = !found;
	p->is_default = p->page_size == hpshm__os_default_page_size();

	if (hpshm_segment_footprint(p->size, p->page_size, cfg, &p->mapped, &p->usable) < 0)
		return tool_usage_error("plan", "bad SIZE '%s': rounded up to whole %s pages it exceeds %zu bytes",
					size_text, hpshm_size_format(p->page_size, s, sizeof(s)), (size_t)SIZE_MAX);
	p->pages = p->mapped / p->page_size;
	/* The header alone took a page: say how to keep it within the pages SIZE needs. */
	if (p->mapped > p->usable && p->mapped - p->page_size >= p->size)
		plan_note(p, "the header of a named segment (%zu bytes at its tail, where `hpshm gc` reads it) takes "
			  "one more page when SIZE is a multiple of the page size: %zu bytes or less fit in %zu pages",
			  p->mapped - p->usable, p->mapped - p->page_size - (p->mapped - p->usable), p->pages - 1);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	const char *size_text = NULL, *ps_text = NULL, *kv = NULL;
	static struct plan p;   /* a few tens of KiB of text: keep it off the stack */
	hpshm_config *cfg = NULL;
	char ks[32];
	int json = 0, named, rc;

	for (int i = 1; i < argc; i++) {
		int r;

		if ((r = tool_opt_flag("plan", argv[i], "--json")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			json = 1;
		} else if ((r = tool_opt_value("plan", argc, argv, &i, "--huge-page-size", &ps_text)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if ((r = tool_opt_value("plan", argc, argv, &i, "--config", &kv)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0' && (argv[i][1] < '0' || argv[i][1] > '9')) {
			return tool_usage_error("plan", "unknown option '%s'", argv[i]);
		} else if (size_text) {
			return tool_usage_error("plan", "unexpected argument '%s': SIZE was already given as '%s'",
						argv[i], size_text);
		} else {
			size_text = argv[i];
		}
	}
	if (!size_text)
		return tool_usage_error("plan", "missing SIZE, e.g. `hpshm plan 64MiB`");

	memset(&p, 0, sizeof(p));
	if ((rc = tool_parse_size("plan", "SIZE", size_text, &p.size)) != 0)
		return rc;
	if (ps_text && (rc = tool_parse_size("plan", "--huge-page-size", ps_text, &p.page_size)) != 0)
		return rc;
	if ((rc = tool_config("plan", kv, &cfg)) != 0)
		return rc;
	/* Windows keeps no pool: its large pages are found at creation, and plan says what to grant. */
	p.has_pool = hpshm__os_pool_source()[0] != '\0';
	rc = plan_sizes(&p, cfg, size_text, ps_text);
	if (rc == 0 && p.has_pool && !p.unoffered && hpshm__os_pool(p.page_size, &p.pool) < 0)
		rc = tool_fail("plan", "cannot read the pool of %zu-byte pages under %s", p.page_size,
			       hpshm__os_pool_source());
	if (rc != 0) {
		hpshm_config_free(cfg);
		return rc;
	}

	if (p.unoffered) {
		struct hpshm__numa pol;

		(void)tool_numa_policy(cfg, &pol, p.numa, sizeof(p.numa));
		plan_unoffered(&p);
	} else if ((rc = plan_needs(&p, cfg)) != 0) {
		hpshm_config_free(cfg);
		return rc;
	} else {
		plan_numa(&p, cfg);
	}
	p.populate_threads = hpshm_populate_threads(p.mapped, p.page_size, cfg);
	hpshm_config_free(cfg);

	/* The check repeats the configuration planned for, then insists on these huge pages (and
	 * names their size, unless the configuration does). */
	named = p.is_default || (kv && strstr(kv, "huge_page_size=") && !ps_text);
	snprintf(p.verify, sizeof(p.verify), "hpshm check --size %s --config %s%shuge_pages=on%s%s", size_text,
		 kv ? kv : "", kv && kv[0] ? "," : "", named ? "" : ",huge_page_size=",
		 named ? "" : tool_kernel_size(p.page_size, ks, sizeof(ks)));

	if (json)
		return plan_json(&p);
	plan_text(&p);
	return TOOL_EXIT_OK;
}
