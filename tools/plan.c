/*
 * tools/plan.c -- `hpshm plan SIZE`: what a segment of SIZE needs, and how to get it.
 *
 * An operator wants the commands, not a lecture: plan checks the same facts the providers
 * check (pool, mount, SysV privilege and limits, hugetlb cgroup) and prints, for each one
 * that falls short, the exact command that fixes it now and the line that keeps it across a
 * reboot, then the `hpshm check` that proves the result.
 *
 * Kernel facts behind the commands:
 *  - vm.nr_hugepages is the default size's pool; other sizes have only their sysfs file.
 *    Writing a larger count first turns surplus pages into persistent ones, so "current
 *    nr_hugepages + shortfall" (nr_hugepages counting surplus) always covers the shortfall.
 *  - The kernel may allocate fewer pages than asked when memory is fragmented, which is
 *    why 1 GiB pages are reserved on the kernel command line (hugepagesz=1G hugepages=N).
 *  - hugetlbfs takes pagesize= in its own form (2M, 1G); the cgroup files are named
 *    hugetlb.2MB.*, hugetlb.1GB.* (the kernel's mem_fmt()).
 *  - shmget(SHM_HUGETLB) needs CAP_IPC_LOCK or membership of vm.hugetlb_shm_group, and the
 *    segment must fit kernel.shmmax (bytes) and kernel.shmall (base pages).
 *
 * The page count is what create will map for the configuration given (--config and the
 * HPSHM_* environment, as a server started here would have it), computed by the same core
 * function create uses: a re-attachable or named segment keeps a header region at its tail,
 * which costs one more page when SIZE is an exact multiple of the page size.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "ports/introspect.h"
#include "tool.h"

/* The group a hugetlbfs mount or SysV huge pages are handed to.  Windows has neither, and
 * no pool to plan for (cmd_plan() stops before). */
static long plan_group(void)
{
#ifdef _WIN32
	return -1;
#else
	return (long)getegid();
#endif
}

#define PLAN_MAX_ITEMS 8
#define PLAN_MAX_CMDS  3
#define PLAN_LINE      640

/* One thing missing now, with what fixes it. */
struct plan_item {
	const char *what;                        /* "pool", "mount", "sysv_privilege", "sysv_limits", "cgroup" */
	const char *affects;                     /* the providers it stops */
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
	size_t             pages;                /* mapped / page_size */
	size_t             mapped;               /* what create maps: size rounded up, with any header */
	size_t             usable;               /* the part of mapped the caller gets */
	struct hpshm__os_pool pool;              /* the pool of page_size now */
	int                nitems;               /* entries in items[] */
	struct plan_item   items[PLAN_MAX_ITEMS];/* what is missing */
	int                nnotes;               /* entries in notes[] */
	char               notes[4][PLAN_LINE];  /* advice that is not a shortfall */
	char               verify[PLAN_LINE];    /* the check command to run afterwards */
};

static void plan_vformat(char *buf, const char *fmt, va_list ap)
	HPSHM__PRINTF(2, 0)
	;
static void plan_vformat(char *buf, const char *fmt, va_list ap)
{
	if (vsnprintf(buf, PLAN_LINE, fmt, ap) >= PLAN_LINE)
		snprintf(buf + PLAN_LINE - 5, 5, "...");
}

static struct plan_item *plan_item(struct plan *p, const char *what, const char *affects, const char *fmt, ...)
	HPSHM__PRINTF(4, 5)
	;
static struct plan_item *plan_item(struct plan *p, const char *what, const char *affects, const char *fmt, ...)
{
	static struct plan_item overflow;   /* absorbs items past the table; cannot happen today */
	struct plan_item *it = p->nitems < PLAN_MAX_ITEMS ? &p->items[p->nitems++] : &overflow;
	va_list ap;

	memset(it, 0, sizeof(*it));
	it->what = what;
	it->affects = affects;
	va_start(ap, fmt);
	plan_vformat(it->detail, fmt, ap);
	va_end(ap);
	return it;
}

static void plan_now(struct plan_item *it, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;
static void plan_now(struct plan_item *it, const char *fmt, ...)
{
	va_list ap;

	if (it->nnow >= PLAN_MAX_CMDS)
		return;
	va_start(ap, fmt);
	plan_vformat(it->now[it->nnow++], fmt, ap);
	va_end(ap);
}

static void plan_persist(struct plan_item *it, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;
static void plan_persist(struct plan_item *it, const char *fmt, ...)
{
	va_list ap;

	if (it->npersist >= PLAN_MAX_CMDS)
		return;
	va_start(ap, fmt);
	plan_vformat(it->persist[it->npersist++], fmt, ap);
	va_end(ap);
}

static void plan_note(struct plan *p, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;
static void plan_note(struct plan *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nnotes >= 4)
		return;
	va_start(ap, fmt);
	plan_vformat(p->notes[p->nnotes++], fmt, ap);
	va_end(ap);
}

static void plan_pool(struct plan *p)
{
	unsigned long avail = hpshm__os_pool_available(&p->pool);
	unsigned long short_by, target;
	char ps[32], ks[32], knob[96];

	if (p->pages <= avail)
		return;
	short_by = (unsigned long)(p->pages - avail);
	target = p->pool.total + short_by;
	hpshm_size_format(p->page_size, ps, sizeof(ps));
	tool_kernel_size(p->page_size, ks, sizeof(ks));

	struct plan_item *it = plan_item(p, "pool", "every huge page provider",
		"the %s pool has %lu pages available (%lu total, %lu free, %lu reserved), %zu needed: short by %lu",
		ps, avail, p->pool.total, p->pool.free, p->pool.resv, p->pages, short_by);
	/* The knob the library's hints name: the sysctl for the default size, else its file. */
	hpshm__os_pool_knob(p->page_size, knob, sizeof(knob));
	if (p->is_default) {
		plan_now(it, "sysctl -w %s=%lu", knob, target);
		plan_persist(it, "echo '%s = %lu' >> /etc/sysctl.d/60-hpshm.conf", knob, target);
	} else {
		plan_now(it, "echo %lu > %s", target, knob);
	}
	/*
	 * Pages that size need physically contiguous memory the kernel rarely still has after
	 * boot, and sizes other than the default have no sysctl: reserve them at boot.
	 */
	if (!p->is_default)
		plan_persist(it, "kernel command line: hugepagesz=%s hugepages=%lu", ks, target);
	else if (p->page_size >= ((size_t)1 << 30))
		plan_persist(it, "kernel command line: default_hugepagesz=%s hugepagesz=%s hugepages=%lu", ks, ks,
			     target);
	if (p->page_size >= ((size_t)1 << 30))
		plan_note(p, "%s pages rarely allocate at run time once memory is fragmented: prefer the kernel "
			  "command line and reboot", ps);
	plan_note(p, "the kernel may allocate fewer pages than asked; `hpshm probe` shows the pool it got");
}

static void plan_mount(struct plan *p, const struct hpshm__os_mount *mounts, int nmounts)
{
	const struct hpshm__os_mount *readonly = NULL;
	char ps[32], ks[32], dir[64];

	for (int i = 0; i < nmounts; i++) {
		if (mounts[i].page_size != p->page_size)
			continue;
		if (mounts[i].writable)
			return;
		if (!readonly)
			readonly = &mounts[i];
	}
	hpshm_size_format(p->page_size, ps, sizeof(ps));
	tool_kernel_size(p->page_size, ks, sizeof(ks));
	if (readonly) {
		struct plan_item *it = plan_item(p, "mount", "hugetlbfs",
			"the hugetlbfs mount %s (%s pages) is not writable by this process", readonly->path, ps);

		plan_now(it, "chgrp %ld %s && chmod 1770 %s", plan_group(), readonly->path, readonly->path);
		return;
	}
	/* /dev/hugepages is where systemd mounts the default size; keep other sizes apart. */
	if (p->is_default)
		snprintf(dir, sizeof(dir), "/dev/hugepages");
	else
		snprintf(dir, sizeof(dir), "/dev/hugepages-%s", ks);
	struct plan_item *it = plan_item(p, "mount", "hugetlbfs", "no hugetlbfs mount for %s pages", ps);
	plan_now(it, "mkdir -p %s && mount -t hugetlbfs -o pagesize=%s,mode=1770 none %s", dir, ks, dir);
	plan_persist(it, "echo 'none %s hugetlbfs pagesize=%s,mode=1770 0 0' >> /etc/fstab", dir, ks);
}

static void plan_sysv(struct plan *p)
{
	struct hpshm__os_sysv_limits lim;
	long group = hpshm__os_huge_group();
	long gid = plan_group();

	if (hpshm__os_lock_privilege() <= 0 && !(group >= 0 && hpshm__os_in_group(group) > 0)) {
		struct plan_item *it = plan_item(p, "sysv_privilege", "sysv_hugetlb",
			"no CAP_IPC_LOCK and not in vm.hugetlb_shm_group (%ld): shmget(SHM_HUGETLB) fails with EPERM; "
			"the commands use this process's group %ld, give the server's",
			group, gid);

		plan_now(it, "sysctl -w vm.hugetlb_shm_group=%ld", gid);
		plan_persist(it, "echo 'vm.hugetlb_shm_group = %ld' >> /etc/sysctl.d/60-hpshm.conf", gid);
	}

	if (hpshm__os_sysv_limits(&lim) < 0)
		return;
	if (lim.shmmax != 0 && lim.shmmax < p->mapped) {
		struct plan_item *it = plan_item(p, "sysv_limits", "sysv_hugetlb",
			"kernel.shmmax is %llu bytes, below the %zu bytes of the segment",
			(unsigned long long)lim.shmmax, p->mapped);

		plan_now(it, "sysctl -w kernel.shmmax=%zu", p->mapped);
		plan_persist(it, "echo 'kernel.shmmax = %zu' >> /etc/sysctl.d/60-hpshm.conf", p->mapped);
	}
	if (lim.shmall != 0) {
		/* shmall counts base pages of every segment together; this one alone must fit. */
		size_t need = p->mapped / hpshm_base_page_size();

		if (lim.shmall < need) {
			struct plan_item *it = plan_item(p, "sysv_limits", "sysv_hugetlb",
				"kernel.shmall is %llu pages, below the %zu base pages of the segment",
				(unsigned long long)lim.shmall, need);

			plan_now(it, "sysctl -w kernel.shmall=%zu", need);
			plan_persist(it, "echo 'kernel.shmall = %zu' >> /etc/sysctl.d/60-hpshm.conf", need);
		}
	}
}

/* Room left under a limit; a limit below usage leaves none. */
static uint64_t plan_room(uint64_t limit, uint64_t usage)
{
	return limit > usage ? limit - usage : 0;
}

static void plan_cgroup(struct plan *p, size_t size)
{
	struct hpshm__os_limit cg;
	char ps[32], cs[32], a[32], b[32], m[32];
	int v1;

	if (hpshm__os_limit(p->page_size, &cg) < 0 || cg.version == 0)
		return;
	v1 = cg.version == 1;
	hpshm_size_format(p->page_size, ps, sizeof(ps));
	hpshm__os_limit_size_name(p->page_size, cs, sizeof(cs));

	if (!tool_unlimited(cg.limit) && plan_room(cg.limit, cg.usage) < p->mapped) {
		uint64_t want = cg.usage + p->mapped;
		struct plan_item *it = plan_item(p, "cgroup", "every huge page provider",
			"hugetlb cgroup %s allows %s more of %s pages at fault time (limit %s), below %s",
			cg.path, tool_bytes(plan_room(cg.limit, cg.usage), a, sizeof(a)), ps,
			tool_bytes(cg.limit, b, sizeof(b)), hpshm_size_format(p->mapped, m, sizeof(m)));

		plan_now(it, "echo %llu > %s/hugetlb.%s.%s", (unsigned long long)want, cg.path, cs,
			 v1 ? "limit_in_bytes" : "max");
		plan_persist(it, "set the same hugetlb limit where the cgroup is made (systemd unit, container runtime)");
	}
	if (!tool_unlimited(cg.rsvd_limit) && plan_room(cg.rsvd_limit, cg.rsvd_usage) < p->mapped) {
		uint64_t want = cg.rsvd_usage + p->mapped;
		struct plan_item *it = plan_item(p, "cgroup", "every huge page provider",
			"hugetlb cgroup %s allows %s more %s pages to be reserved (rsvd limit %s), below %s",
			cg.path, tool_bytes(plan_room(cg.rsvd_limit, cg.rsvd_usage), a, sizeof(a)), ps,
			tool_bytes(cg.rsvd_limit, b, sizeof(b)), hpshm_size_format(p->mapped, m, sizeof(m)));

		plan_now(it, "echo %llu > %s/hugetlb.%s.rsvd.%s", (unsigned long long)want, cg.path, cs,
			 v1 ? "limit_in_bytes" : "max");
		plan_persist(it, "set the same hugetlb limit where the cgroup is made (systemd unit, container runtime)");
	}
	if (hpshm__os_fault_risk(size, p->page_size) > 0)
		plan_note(p, "hugetlb cgroup %s limits %s pages at fault time but not reservations: a fault could "
			  "SIGBUS, so hpshm populates at create time; setting hugetlb.%s.rsvd.%s to the same "
			  "limit makes the reservation itself fail instead", cg.path, ps, cs,
			  v1 ? "limit_in_bytes" : "max");
}

static int plan_json(const struct plan *p)
{
	struct json j;

	json_begin(&j, stdout, 1);
	json_object_open(&j);
	json_kv_uint(&j, "size", p->size);
	json_kv_uint(&j, "page_size", p->page_size);
	json_kv_bool(&j, "default_page_size", p->is_default);
	json_kv_uint(&j, "pages", p->pages);
	json_kv_uint(&j, "mapped_size", p->mapped);
	json_kv_uint(&j, "usable_size", p->usable);
	json_key(&j, "pool");
	json_object_open(&j);
	json_kv_uint(&j, "total", p->pool.total);
	json_kv_uint(&j, "free", p->pool.free);
	json_kv_uint(&j, "reserved", p->pool.resv);
	json_kv_uint(&j, "surplus", p->pool.surplus);
	json_kv_uint(&j, "overcommit", p->pool.overcommit);
	json_kv_uint(&j, "available", hpshm__os_pool_available(&p->pool));
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
	if (json_end(&j) < 0)
		return tool_fail("plan", "internal error writing JSON");
	return TOOL_EXIT_OK;
}

static void plan_text(const struct plan *p)
{
	char a[32], b[32], c[32], d[32];
	int any;

	printf("a segment of %s needs %zu huge page%s of %s (%s mapped", hpshm_size_format(p->size, a, sizeof(a)),
	       p->pages, p->pages == 1 ? "" : "s", hpshm_size_format(p->page_size, b, sizeof(b)),
	       hpshm_size_format(p->mapped, c, sizeof(c)));
	if (p->mapped > p->usable)
		printf(", %s of it for the segment's header", hpshm_size_format(p->mapped - p->usable, d, sizeof(d)));
	printf(")\n");
	printf("the %s pool now: %lu total, %lu free, %lu reserved, %lu surplus, %lu overcommit, %lu available\n",
	       b, p->pool.total, p->pool.free, p->pool.resv, p->pool.surplus, p->pool.overcommit,
	       hpshm__os_pool_available(&p->pool));

	if (p->nitems == 0) {
		printf("\nnothing is missing: the pool, a hugetlbfs mount, the SysV privilege and limits and the "
		       "cgroup limits all allow it now\n");
	} else {
		printf("\nmissing now:\n");
		for (int i = 0; i < p->nitems; i++)
			printf("  - %s (stops %s): %s\n", p->items[i].what, p->items[i].affects, p->items[i].detail);
		printf("\nrun now, as root:\n");
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
 * The page size to plan for (--huge-page-size, else the configuration's huge_page_size,
 * else the kernel's default), and what create maps for SIZE on it under cfg.  0, or the exit
 * code with the error printed.
 */
static int plan_sizes(struct plan *p, const hpshm_config *cfg, const char *size_text, const char *ps_text)
{
	size_t sizes[HPSHM__OS_MAX_SIZES];
	char offered[128], s[32], value[64];
	int n, found;

	n = hpshm_huge_page_sizes(sizes, HPSHM__OS_MAX_SIZES);
	if (n > HPSHM__OS_MAX_SIZES)
		n = HPSHM__OS_MAX_SIZES;
	if (n <= 0 && hpshm__os_pool_source()[0])
		return tool_fail("plan", "this kernel offers no huge pages (nothing in %s): "
				 "build it with CONFIG_HUGETLBFS", hpshm__os_pool_source());
	if (n <= 0)
		return tool_fail("plan", "this system offers hpshm no huge page size: there are no huge pages to plan");
	if (p->page_size == 0) {
		p->page_size = tool_config_page_size(cfg);
		if (p->page_size == 0 && hpshm_config_get(cfg, "huge_page_size", value, sizeof(value)) >= 0 &&
		    strcmp(value, "default") != 0)
			return tool_fail("plan", "huge_page_size=%s: this kernel offers no such pages; it offers %s",
					 value, tool_offered_sizes(offered, sizeof(offered)));
		if (p->page_size == 0)
			p->page_size = sizes[0];
	}
	found = 0;
	for (int i = 0; i < n; i++)
		found |= sizes[i] == p->page_size;
	if (!found)
		return tool_fail("plan", "bad --huge-page-size '%s': this kernel offers no %s pages; it offers %s",
				 ps_text ? ps_text : "", hpshm_size_format(p->page_size, s, sizeof(s)),
				 tool_offered_sizes(offered, sizeof(offered)));
	p->is_default = p->page_size == hpshm__os_default_page_size();

	if (hpshm_segment_footprint(p->size, p->page_size, cfg, &p->mapped, &p->usable) < 0)
		return tool_usage_error("plan", "bad SIZE '%s': rounded up to whole %s pages it exceeds %zu bytes",
					size_text, hpshm_size_format(p->page_size, s, sizeof(s)), (size_t)SIZE_MAX);
	p->pages = p->mapped / p->page_size;
	/* The header alone took a page: say how to keep it within the pages SIZE needs. */
	if (p->mapped > p->usable && p->mapped - p->page_size >= p->size)
		plan_note(p, "the header of a re-attachable or named segment (%zu bytes at its tail) takes one more "
			  "page when SIZE is a multiple of the page size: %zu bytes or less fit in %zu pages",
			  p->mapped - p->usable, p->mapped - p->page_size - (p->mapped - p->usable), p->pages - 1);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	const char *size_text = NULL, *ps_text = NULL, *kv = NULL;
	struct hpshm__os_mount mounts[HPSHM__OS_MAX_MOUNTS];
	static struct plan p;   /* a few tens of KiB of text: keep it off the stack */
	hpshm_config *cfg = NULL;
	char ks[32];
	int json = 0, rc, nmounts;

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
	rc = plan_sizes(&p, cfg, size_text, ps_text);
	hpshm_config_free(cfg);
	if (rc != 0)
		return rc;

	if (hpshm__os_pool_source()[0] == '\0')
		return tool_fail("plan", "this system keeps no huge page pool to plan for; `hpshm probe` shows "
				 "what its huge pages need");
	if (hpshm__os_pool(p.page_size, &p.pool) < 0)
		return tool_fail("plan", "cannot read the pool of %zu-byte pages under %s",
				 p.page_size, hpshm__os_pool_source());

	nmounts = hpshm__os_mounts(mounts, HPSHM__OS_MAX_MOUNTS);
	if (nmounts > HPSHM__OS_MAX_MOUNTS)
		nmounts = HPSHM__OS_MAX_MOUNTS;
	plan_pool(&p);
	plan_mount(&p, mounts, nmounts < 0 ? 0 : nmounts);
	plan_sysv(&p);
	plan_cgroup(&p, p.mapped);

	/* The check repeats the configuration planned for, then insists on these huge pages. */
	snprintf(p.verify, sizeof(p.verify), "hpshm check --size %s --config %s%shuge_pages=on%s%s", size_text,
		 kv ? kv : "", kv && kv[0] ? "," : "", p.is_default ? "" : ",huge_page_size=",
		 p.is_default ? "" : tool_kernel_size(p.page_size, ks, sizeof(ks)));

	if (json)
		return plan_json(&p);
	plan_text(&p);
	return TOOL_EXIT_OK;
}
