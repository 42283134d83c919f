/* SPDX-License-Identifier: MIT */
/*
 * tools/probe.c -- `hpshm providers` and `hpshm probe`: what this machine offers.
 *
 * Every figure comes, through ports/facts.h, from the port functions the providers
 * themselves decide from (the pools from /sys/kernel/mm/hugepages, mounts from
 * /proc/self/mountinfo, cgroup files), so what `probe` shows is what a create would see,
 * and it agrees with /proc/meminfo.
 * The pool counts are pages, as the kernel keeps them; "available" is what a new mapping
 * can reserve now (free - reserved + overcommit room), the figure a create depends on.
 *
 * probe never creates anything: it is safe on a production machine.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "hpshm/provider.h"
#include "ports/facts.h"
#include "tool.h"

/* Everything probe gathers, read once so the text and JSON outputs show the same facts. */
struct probe_facts {
	size_t                    size;                              /* size providers were probed for */
	size_t                    default_page_size;                 /* kernel default, 0 if none */
	int                       npools;                            /* entries in pools[] */
	struct hpshm__pool        pools[HPSHM__MAX_PAGE_SIZES];      /* one per huge page size */
	int                       cg_rc[HPSHM__MAX_PAGE_SIZES];      /* hpshm__os_limit() result per pool */
	struct hpshm__limit       cg[HPSHM__MAX_PAGE_SIZES];         /* hugetlb cgroup per pool */
	int                       risk[HPSHM__MAX_PAGE_SIZES];       /* fault-time SIGBUS risk per pool */
	int                       nmounts;                           /* entries in mounts[] */
	struct hpshm__mount       mounts[HPSHM__MAX_MOUNTS];         /* hugetlbfs mounts */
	int                       lock_privilege;                    /* 1 if the privilege huge pages need is held */
	long                      shm_group;                         /* vm.hugetlb_shm_group, -1 unreadable */
	int                       in_shm_group;                      /* 1 if this process is in it */
	int                       thp_rc;                            /* hpshm__os_thp() result */
	struct hpshm__thp         thp;                               /* THP modes */
	int                       sysv_rc;                           /* hpshm__os_sysv_limits() result */
	struct hpshm__sysv_limits sysv;                              /* SysV limits */
};

static void probe_gather(struct probe_facts *f, size_t size)
{
	memset(f, 0, sizeof(*f));
	f->size = size;
	f->default_page_size = hpshm__os_default_page_size();
	f->npools = hpshm__os_pools(f->pools, HPSHM__MAX_PAGE_SIZES);
	if (f->npools < 0)
		f->npools = 0;
	if (f->npools > HPSHM__MAX_PAGE_SIZES)
		f->npools = HPSHM__MAX_PAGE_SIZES;
	for (int i = 0; i < f->npools; i++) {
		f->cg_rc[i] = hpshm__os_limit(f->pools[i].page_size, &f->cg[i]);
		f->risk[i] = hpshm__os_fault_risk(size, f->pools[i].page_size);
	}
	f->nmounts = hpshm__os_mounts(f->mounts, HPSHM__MAX_MOUNTS);
	if (f->nmounts < 0)
		f->nmounts = 0;
	if (f->nmounts > HPSHM__MAX_MOUNTS)
		f->nmounts = HPSHM__MAX_MOUNTS;
	f->lock_privilege = hpshm__os_lock_privilege() > 0;
	f->shm_group = hpshm__os_huge_group();
	f->in_shm_group = f->shm_group >= 0 && hpshm__os_in_group(f->shm_group) > 0;
	f->thp_rc = hpshm__os_thp(&f->thp);
	f->sysv_rc = hpshm__os_sysv_limits(&f->sysv);
}

/* JSON for a limit: null means no limit. */
static void probe_json_limit(struct json *j, const char *key, uint64_t v)
{
	if (tool_unlimited(v))
		json_kv_null(j, key);
	else
		json_kv_uint(j, key, v);
}

static void probe_json_caps(struct json *j, unsigned caps)
{
	char words[64];
	char *w, *cursor = words;

	json_array_open(j);
	tool_caps_words(caps, words, sizeof(words));
	while ((w = hpshm__token_next(&cursor, " ")) != NULL)
		if (strcmp(w, "-") != 0)
			json_string(j, w);
	json_array_close(j);
}

/* "keys": the configuration keys a provider declares (hpshm_provider.keys), [] for none. */
static void probe_json_keys(struct json *j, const char *provider)
{
	const struct hpshm_provider_key *k;

	json_key(j, "keys");
	json_array_open(j);
	for (unsigned i = 0; (k = hpshm_provider_key_at(provider, i)) != NULL; i++) {
		json_object_open(j);
		json_kv_string(j, "name", k->name);
		json_kv_string(j, "type", tool_key_type(k->type));
		json_kv_string(j, "default", k->def);
		json_kv_string(j, "help", k->help);
		json_object_close(j);
	}
	json_array_close(j);
}

int cmd_providers(int argc, char **argv)
{
	const char *name;
	unsigned caps;
	int json = 0;

	for (int i = 1; i < argc; i++) {
		int r = tool_opt_flag("providers", argv[i], "--json");

		if (r < 0)
			return TOOL_EXIT_USAGE;
		if (r > 0) {
			json = 1;
			continue;
		}
		return tool_usage_error("providers", "unexpected argument '%s'", argv[i]);
	}

	if (json) {
		struct json j;

		tool_json_open(&j, 1);
		json_object_open(&j);
		json_key(&j, "providers");
		json_array_open(&j);
		for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++) {
			json_object_open(&j);
			json_kv_string(&j, "name", name);
			json_key(&j, "caps");
			probe_json_caps(&j, caps);
			probe_json_keys(&j, name);
			json_object_close(&j);
		}
		json_array_close(&j);
		json_object_close(&j);
		return tool_json_close(&j, 0, NULL) == 0 ? TOOL_EXIT_OK
							 : tool_fail("providers", "internal error writing JSON");
	}
	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++) {
		char words[64];

		printf("%-20s %s\n", name, tool_caps_words(caps, words, sizeof(words)));
		tool_print_keys(name, "    key ");
	}
	return TOOL_EXIT_OK;
}

/* One provider's verdict. */
struct probe_verdict {
	const char *name;                   /* provider name */
	unsigned    caps;                   /* its capabilities */
	int         rc;                     /* hpshm_provider_probe() result */
	size_t      page_size;              /* the page size it would use */
	char        reason[HPSHM_TEXT_MAX]; /* why not, or empty */
};

static void probe_provider(struct probe_verdict *v, const char *name, unsigned caps, size_t size,
			   const hpshm_config *cfg)
{
	v->name = name;
	v->caps = caps;
	v->page_size = 0;
	v->reason[0] = '\0';
	v->rc = hpshm_provider_probe(name, size, cfg, &v->page_size, v->reason, sizeof(v->reason));
	if (v->rc < 0 && v->reason[0] == '\0')
		snprintf(v->reason, sizeof(v->reason), "%s", hpshm_strerror(v->rc));
}

/* The keys registered providers declare, with their values: as JSON members into j, or as
 * probe_text's lines when j is NULL. */
static void probe_each_provider_key(const hpshm_config *cfg, struct json *j)
{
	const struct hpshm_provider_key *k;
	const char *name;

	for (unsigned i = 0; (name = hpshm_provider_name(i, NULL)) != NULL; i++)
		for (unsigned n = 0; (k = hpshm_provider_key_at(name, n)) != NULL; n++) {
			char value[HPSHM_TEXT_MAX];
			int rc = hpshm_config_get(cfg, k->name, value, sizeof(value));

			if (j)
				json_kv_string(j, k->name, rc < 0 ? "" : value);
			else
				printf("  %-16s = %-16s # %s (provider %s)\n", k->name, rc < 0 ? "?" : value, k->help,
				       name);
		}
}

/* "providers": each provider's verdict on a segment of f->size. */
static void probe_json_providers(struct json *j, const struct probe_facts *f, const hpshm_config *cfg)
{
	const char *name;
	unsigned caps;

	json_key(j, "providers");
	json_array_open(j);
	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++) {
		struct probe_verdict v;

		probe_provider(&v, name, caps, f->size, cfg);
		json_object_open(j);
		json_kv_string(j, "name", v.name);
		json_key(j, "caps");
		probe_json_caps(j, v.caps);
		json_kv_bool(j, "usable", v.rc == 0);
		json_kv_string(j, "reason", v.rc == 0 ? "" : v.reason);
		if (v.page_size)
			json_kv_uint(j, "page_size", v.page_size);
		else
			json_kv_null(j, "page_size");
		json_object_close(j);
	}
	json_array_close(j);
}

/* "page_sizes" (the pools) and, where there are pools, "hugetlbfs_mounts". */
static void probe_json_pools(struct json *j, const struct probe_facts *f, int pools)
{
	json_key(j, "page_sizes");
	json_array_open(j);
	for (int i = 0; i < f->npools; i++) {
		const struct hpshm__pool *p = &f->pools[i];

		json_object_open(j);
		json_kv_uint(j, "page_size", p->page_size);
		json_kv_bool(j, "default", p->page_size == f->default_page_size);
		json_kv_uint(j, "total", p->total);
		json_kv_uint(j, "free", p->free);
		json_kv_uint(j, "reserved", p->resv);
		json_kv_uint(j, "surplus", p->surplus);
		json_kv_uint(j, "overcommit", p->overcommit);
		json_kv_uint(j, "available", hpshm__os_pool_available(p));
		json_object_close(j);
	}
	json_array_close(j);
	if (!pools)
		return;

	json_key(j, "hugetlbfs_mounts");
	json_array_open(j);
	for (int i = 0; i < f->nmounts; i++) {
		json_object_open(j);
		json_kv_string(j, "path", f->mounts[i].path);
		json_kv_uint(j, "page_size", f->mounts[i].page_size);
		json_kv_bool(j, "writable", f->mounts[i].writable);
		json_object_close(j);
	}
	json_array_close(j);
}

/* "privileges": what huge pages need, and whether this process holds it. */
static void probe_json_privileges(struct json *j, const struct probe_facts *f)
{
	/*
	 * Each OS's own keys, so no key names another OS's privilege (cap_ipc_lock and the SysV
	 * group on Linux and other POSIX systems, as always; se_lock_memory_privilege on
	 * Windows), and beside them the same two keys everywhere: the privilege huge pages need
	 * as the OS names it, and whether this process holds it.
	 */
	json_key(j, "privileges");
	json_object_open(j);
	json_kv_string(j, "lock_privilege", hpshm__os_lock_privilege_name());
	json_kv_bool(j, "lock_privilege_held", f->lock_privilege);
#ifdef _WIN32
	json_kv_bool(j, "se_lock_memory_privilege", f->lock_privilege);
#else
	json_kv_bool(j, "cap_ipc_lock", f->lock_privilege);
	if (f->shm_group >= 0)
		json_kv_int(j, "hugetlb_shm_group", f->shm_group);
	else
		json_kv_null(j, "hugetlb_shm_group");
	json_kv_bool(j, "in_hugetlb_shm_group", f->in_shm_group);
#endif
	json_object_close(j);
}

/* "cgroups": the hugetlb cgroup limits of each page size. */
static void probe_json_cgroups(struct json *j, const struct probe_facts *f)
{
	json_key(j, "cgroups");
	json_array_open(j);
	for (int i = 0; i < f->npools; i++) {
		const struct hpshm__limit *cg = &f->cg[i];
		int applies = f->cg_rc[i] == 0 && cg->version != 0;

		json_object_open(j);
		json_kv_uint(j, "page_size", f->pools[i].page_size);
		if (f->cg_rc[i] < 0)
			json_kv_string(j, "error", hpshm_strerror(f->cg_rc[i]));
		json_kv_string(j, "controller", applies ? "hugetlb" : "none");
		json_kv_uint(j, "version", applies ? (uint64_t)cg->version : 0);
		if (applies) {
			json_kv_string(j, "path", cg->path);
			probe_json_limit(j, "limit", cg->limit);
			json_kv_uint(j, "usage", cg->usage);
			probe_json_limit(j, "rsvd_limit", cg->rsvd_limit);
			json_kv_uint(j, "rsvd_usage", cg->rsvd_usage);
		} else {
			json_kv_string(j, "path", "");
			json_kv_null(j, "limit");
			json_kv_null(j, "usage");
			json_kv_null(j, "rsvd_limit");
			json_kv_null(j, "rsvd_usage");
		}
		json_kv_bool(j, "fault_risk", f->risk[i] > 0);
		json_object_close(j);
	}
	json_array_close(j);
}

/* "thp" and "sysv": the kernel's transparent huge page settings and SysV limits, or null. */
static void probe_json_kernel(struct json *j, const struct probe_facts *f)
{
	json_key(j, "thp");
	if (f->thp_rc < 0) {
		json_null(j);
	} else {
		json_object_open(j);
		json_kv_string(j, "enabled", f->thp.enabled);
		json_kv_string(j, "defrag", f->thp.defrag);
		json_kv_string(j, "shmem_enabled", f->thp.shmem_enabled);
		json_object_close(j);
	}

	json_key(j, "sysv");
	if (f->sysv_rc < 0) {
		json_null(j);
	} else {
		/* Exact integers even above 2^53: JSON numbers have no size limit. */
		json_object_open(j);
		json_kv_uint(j, "shmmax", f->sysv.shmmax);
		json_kv_uint(j, "shmall", f->sysv.shmall);
		json_kv_uint(j, "shmmni", f->sysv.shmmni);
		json_object_close(j);
	}
}

/*
 * Does the core's key name apply on this system?  hugetlbfs_path only where a provider that
 * reads it is built in (Windows and the POSIX fallbacks have no hugetlbfs), so probe lists
 * no key the operator cannot use here.
 */
static int probe_key_applies(const char *name)
{
	struct hpshm_instance p;

	if (strcmp(name, "hugetlbfs_path") == 0)
		return hpshm_provider_find("hugetlbfs", &p) == 0;
	return 1;
}

/* "config": every key's value as cfg has it, null when unset. */
static void probe_json_config(struct json *j, const hpshm_config *cfg)
{
	const char *name, *desc;

	json_key(j, "config");
	json_object_open(j);
	for (unsigned i = 0; (name = hpshm_config_key_name(i, &desc, NULL)) != NULL; i++) {
		char value[HPSHM_TEXT_MAX];

		if (!probe_key_applies(name))
			continue;
		json_kv_string(j, name, hpshm_config_get(cfg, name, value, sizeof(value)) < 0 ? "" : value);
	}
	probe_each_provider_key(cfg, j);
	json_object_close(j);
}

static int probe_json(const struct probe_facts *f, const hpshm_config *cfg)
{
	struct json j;

	tool_json_open(&j, 1);
	json_object_open(&j);
	json_kv_uint(&j, "size", f->size);
	probe_json_providers(&j, f, cfg);
	/* Why the system has no huge pages for shared memory at all (macOS), or "". */
	json_kv_string(&j, "huge_pages_absent", hpshm__os_huge_absent());

	/* A system that keeps no huge page pool (Windows) has no mounts, control groups, THP or
	 * SysV limits either: its own keys alone, as for the privileges. */
	probe_json_pools(&j, f, hpshm__os_pool_source()[0] != '\0');
	probe_json_privileges(&j, f);
	tool_numa_probe_json(&j, f->size, cfg, f->pools, f->npools);
	if (hpshm__os_pool_source()[0] != '\0') {
		probe_json_cgroups(&j, f);
		probe_json_kernel(&j, f);
	}
	probe_json_config(&j, cfg);
	json_object_close(&j);
	if (tool_json_close(&j, 0, NULL) < 0)
		return tool_fail("probe", "internal error writing JSON");
	return TOOL_EXIT_OK;
}

/*
 * A system that keeps no huge page pool (Windows: large pages come from free memory when a
 * segment is made) has none of Linux's pools, mounts, cgroups, THP or SysV limits to show:
 * the sizes it offers and the privilege they need are all there is.
 */
static void probe_text_poolless(const struct probe_facts *f)
{
	const char *priv = hpshm__os_lock_privilege_name();
	char a[32];

	printf("\nhuge pages:\n");
	if (f->default_page_size == 0)
		printf("  none: %s\n", hpshm__os_huge_absent()[0] ? hpshm__os_huge_absent()
								 : "this system offers no huge pages");
	else
		printf("  %s pages, taken from free memory when a segment is created (no pool to reserve)\n",
		       hpshm_size_format(f->default_page_size, a, sizeof(a)));
	if (priv[0] != '\0')
		printf("\nprivileges (huge pages need it):\n  %s: %s\n", priv, f->lock_privilege ? "yes" : "no");
}

/* Linux's facts: the pools, hugetlbfs mounts, SysV privileges, cgroup limits, THP, SysV limits. */
static void probe_text_pools(const struct probe_facts *f)
{
	char a[32], b[32], c[32], d[32];

	printf("\nhuge page pools (pages; %s):\n", hpshm__os_pool_source());
	if (f->npools == 0) {
		printf("  none: this kernel offers no huge pages\n");
	} else {
		printf("  %-8s %-8s %8s %8s %9s %8s %11s %10s\n", "size", "default", "total", "free", "reserved",
		       "surplus", "overcommit", "available");
		for (int i = 0; i < f->npools; i++) {
			const struct hpshm__pool *p = &f->pools[i];

			printf("  %-8s %-8s %8lu %8lu %9lu %8lu %11lu %10lu\n",
			       hpshm_size_format(p->page_size, a, sizeof(a)),
			       p->page_size == f->default_page_size ? "yes" : "", p->total, p->free, p->resv,
			       p->surplus, p->overcommit, hpshm__os_pool_available(p));
		}
	}

	printf("\nhugetlbfs mounts:\n");
	if (f->nmounts == 0)
		printf("  none\n");
	for (int i = 0; i < f->nmounts; i++)
		printf("  %-30s %-8s %s\n", f->mounts[i].path, hpshm_size_format(f->mounts[i].page_size, a, sizeof(a)),
		       f->mounts[i].writable ? "writable" : "not writable by this process");

	printf("\nprivileges (SysV hugetlb needs one of them):\n");
	printf("  CAP_IPC_LOCK:         %s\n", f->lock_privilege ? "yes" : "no");
	if (f->shm_group >= 0)
		printf("  vm.hugetlb_shm_group: %ld (this process is %sin it)\n", f->shm_group,
		       f->in_shm_group ? "" : "not ");
	else
		printf("  vm.hugetlb_shm_group: unreadable\n");

	printf("\nhugetlb cgroup limits (probed for %s):\n", hpshm_size_format(f->size, a, sizeof(a)));
	if (f->npools == 0)
		printf("  none\n");
	for (int i = 0; i < f->npools; i++) {
		const struct hpshm__limit *cg = &f->cg[i];

		printf("  %-8s ", hpshm_size_format(f->pools[i].page_size, a, sizeof(a)));
		if (f->cg_rc[i] < 0)
			printf("unreadable (%s)", hpshm_strerror(f->cg_rc[i]));
		else if (cg->version == 0)
			printf("none");
		else
			printf("v%d %s: limit %s, usage %s, rsvd limit %s, rsvd usage %s", cg->version, cg->path,
			       tool_bytes(cg->limit, a, sizeof(a)), tool_bytes(cg->usage, b, sizeof(b)),
			       tool_bytes(cg->rsvd_limit, c, sizeof(c)), tool_bytes(cg->rsvd_usage, d, sizeof(d)));
		printf("; fault-time SIGBUS risk: %s\n",
		       f->risk[i] > 0 ? "yes (a fault-time limit without a reservation limit: "
					"hpshm populates at create time)" : "no");
	}

	printf("\ntransparent huge pages:\n");
	if (f->thp_rc < 0)
		printf("  unreadable\n");
	else
		printf("  enabled: %s, defrag: %s, shmem_enabled: %s\n", f->thp.enabled[0] ? f->thp.enabled : "absent",
		       f->thp.defrag[0] ? f->thp.defrag : "absent",
		       f->thp.shmem_enabled[0] ? f->thp.shmem_enabled : "absent");

	printf("\nSysV limits:\n");
	if (f->sysv_rc < 0)
		printf("  unreadable\n");
	else
		printf("  shmmax %llu bytes, shmall %llu pages, shmmni %llu segments\n",
		       (unsigned long long)f->sysv.shmmax, (unsigned long long)f->sysv.shmall,
		       (unsigned long long)f->sysv.shmmni);
}

static void probe_text(const struct probe_facts *f, const hpshm_config *cfg)
{
	const char *name, *desc;
	unsigned caps;
	char a[32];

	printf("providers, in the order provider=auto tries them (probed for %s):\n",
	       hpshm_size_format(f->size, a, sizeof(a)));
	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++) {
		struct probe_verdict v;
		char words[64];

		probe_provider(&v, name, caps, f->size, cfg);
		printf("  %-18s %-22s ", v.name, tool_caps_words(v.caps, words, sizeof(words)));
		if (v.rc == 0)
			printf("usable (page size %s)\n",
			       v.page_size ? hpshm_size_format(v.page_size, a, sizeof(a)) : "unknown");
		else
			printf("not usable: %s\n", v.reason);
	}

	if (hpshm__os_pool_source()[0] == '\0')
		probe_text_poolless(f);
	else
		probe_text_pools(f);
	tool_numa_probe_text(f->size, cfg, f->pools, f->npools);

	printf("\nconfiguration (defaults < HPSHM_* environment < --config):\n");
	for (unsigned i = 0; (name = hpshm_config_key_name(i, &desc, NULL)) != NULL; i++) {
		char value[HPSHM_TEXT_MAX];

		if (!probe_key_applies(name))
			continue;
		if (hpshm_config_get(cfg, name, value, sizeof(value)) < 0)
			snprintf(value, sizeof(value), "?");
		printf("  %-16s = %-16s # %s\n", name, value, desc ? desc : "");
	}
	probe_each_provider_key(cfg, NULL);
}

int cmd_probe(int argc, char **argv)
{
	const char *size_text = NULL, *kv = NULL;
	struct probe_facts facts;
	hpshm_config *cfg = NULL;
	size_t size = 0;
	int json = 0, rc;

	for (int i = 1; i < argc; i++) {
		int r;

		if ((r = tool_opt_flag("probe", argv[i], "--json")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			json = 1;
		} else if ((r = tool_opt_value("probe", argc, argv, &i, "--size", &size_text)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if ((r = tool_opt_value("probe", argc, argv, &i, "--config", &kv)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else {
			return tool_usage_error("probe", "unexpected argument '%s'", argv[i]);
		}
	}
	if (size_text && (rc = tool_parse_size("probe", "--size", size_text, &size)) != 0)
		return rc;
	if ((rc = tool_config("probe", kv, &cfg)) != 0)
		return rc;
	if (!size_text) {
		/* One page of the size the configuration would use: the smallest useful segment. */
		size = tool_config_page_size(cfg);
		if (size == 0)
			size = (size_t)2 << 20;
	}

	probe_gather(&facts, size);
	rc = TOOL_EXIT_OK;
	if (json)
		rc = probe_json(&facts, cfg);
	else
		probe_text(&facts, cfg);
	hpshm_config_free(cfg);
	return rc;
}
