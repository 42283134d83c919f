/* SPDX-License-Identifier: MIT */
/*
 * tools/check.c -- `hpshm check --size SIZE`: create a segment as a server would, and show
 * what the kernel really gave.
 *
 * The configuration is built in the server's order (defaults, HPSHM_* environment, then
 * --config with API precedence), so `check` answers "what will my server get with these
 * settings on this machine".  The report printed is the library's own, verified from the
 * kernel (PROCMAP_QUERY, smaps or fstatfs), never inferred from the flags passed.  The segment is always
 * destroyed before exit: a check must not leave pool pages or SysV ids behind.
 *
 * With --json the object is printed on failure too ("ok": false, the error record and every
 * provider tried), because a script wants the reasons as data, not just an exit code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tool.h"

static const char *check_policy_name(hpshm_huge_pages policy)
{
	switch (policy) {
	case HPSHM_HUGE_OFF: return "off";
	case HPSHM_HUGE_TRY: return "try";
	case HPSHM_HUGE_ON:  return "on";
	}
	return "?";
}

static unsigned check_nattempts(const hpshm_report *r)
{
	return r->nattempts < HPSHM_MAX_ATTEMPTS ? r->nattempts : HPSHM_MAX_ATTEMPTS;
}

static void check_json_attempts(struct json *j, const hpshm_report *r)
{
	json_key(j, "attempts");
	json_array_open(j);
	for (unsigned i = 0; i < check_nattempts(r); i++) {
		const hpshm_attempt *a = &r->attempts[i];

		json_object_open(j);
		json_kv_string(j, "provider", a->provider);
		json_kv_uint(j, "page_size", a->page_size);
		json_kv_string(j, "result", a->result == 0 ? "ok" : hpshm_errname(a->result));
		json_kv_int(j, "code", a->result);
		json_kv_int(j, "errno", a->sys_errno);
		json_kv_string(j, "call", a->call);
		json_kv_string(j, "reason", a->reason);
		json_object_close(j);
	}
	json_array_close(j);
}

static void check_text_attempts(FILE *out, const hpshm_report *r)
{
	unsigned n = check_nattempts(r);

	fprintf(out, "attempts (%u):\n", n);
	for (unsigned i = 0; i < n; i++) {
		const hpshm_attempt *a = &r->attempts[i];
		char ps[32];

		fprintf(out, "  %u. %-16s %-8s %-20s", i + 1, a->provider,
			a->page_size ? hpshm_size_format(a->page_size, ps, sizeof(ps)) : "-",
			a->result == 0 ? "ok" : hpshm_errname(a->result));
		if (a->sys_errno)
			fprintf(out, " %s", tool_errno_name(a->sys_errno));
		if (a->call[0])
			fprintf(out, " %s", a->call);
		if (a->reason[0])
			fprintf(out, ": %s", a->reason);
		fputc('\n', out);
	}
}

/* The library's one-line summary, whatever its length. */
static void check_print_summary(const hpshm_report *r)
{
	char small[512];
	int need = hpshm_report_format(r, small, sizeof(small));

	if (need < 0)
		return;
	if ((size_t)need < sizeof(small)) {
		printf("%s\n", small);
		return;
	}
	char *big = malloc((size_t)need + 1);

	if (!big) {
		printf("%s\n", small);
		return;
	}
	hpshm_report_format(r, big, (size_t)need + 1);
	printf("%s\n", big);
	free(big);
}

/* The segment was made; ok unless destroying it (drc) or the resize check failed. */
static int check_json_ok(const hpshm_report *r, size_t size, int drc, const struct check_resize *cr)
{
	hpshm_error err;
	struct json j;
	int code = 0;

	memset(&err, 0, sizeof(err));
	if (drc < 0) {
		code = drc;
		snprintf(err.message, sizeof(err.message), "the segment was created but destroying it failed: %s",
			 hpshm_strerror(drc));
		snprintf(err.hint, sizeof(err.hint), "it may still hold pages: see `ipcs -m`, the hugetlbfs mounts "
			 "and `hpshm gc`");
	} else if (cr && cr->fail[0]) {
		code = HPSHM_EUNAVAILABLE;
		snprintf(err.message, sizeof(err.message), "--resize-to: %.900s", cr->fail);
	}
	tool_json_open(&j, code == 0);
	json_object_open(&j);
	json_kv_string(&j, "provider", r->provider);
	json_kv_uint(&j, "size", size);
	json_kv_uint(&j, "mapped_size", r->mapped_size);
	json_kv_uint(&j, "page_size", r->page_size);
	json_kv_uint(&j, "requested_page_size", r->requested_page_size);
	json_kv_bool(&j, "verified", r->verified);
	json_kv_string(&j, "verified_by", r->verified_by);
	json_kv_bool(&j, "huge", r->huge);
	json_kv_string(&j, "policy", check_policy_name(r->policy));
	json_kv_string(&j, "populate", hpshm_populate_name(r->populate));
	json_kv_double(&j, "populate_ms", tool_ms(r->populate_ns), 3);
	json_kv_double(&j, "create_ms", tool_ms(r->create_ns), 3);
	json_kv_bool(&j, "destroyed", drc == 0);
	if (cr)
		check_resize_json(&j, cr);
	tool_numa_report_json(&j, r);
	check_json_attempts(&j, r);
	json_object_close(&j);
	return tool_json_close(&j, code, &err);
}

static int check_json_fail(const hpshm_report *r, size_t size, int code, const hpshm_error *err)
{
	struct json j;

	tool_json_open(&j, 0);
	json_object_open(&j);
	json_kv_uint(&j, "size", size);
	check_json_attempts(&j, r);
	json_object_close(&j);
	return tool_json_close(&j, code, err);
}

int cmd_check(int argc, char **argv)
{
	const char *size_text = NULL, *kv = NULL, *to_text = NULL;
	struct check_resize cr;
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_report rep;
	hpshm_error err;
	size_t size = 0;
	int json = 0, rc, drc, rrc;
	char a[32], a2[128];

	for (int i = 1; i < argc; i++) {
		int r;

		if ((r = tool_opt_flag("check", argv[i], "--json")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			json = 1;
		} else if ((r = tool_opt_value("check", argc, argv, &i, "--size", &size_text)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if ((r = tool_opt_value("check", argc, argv, &i, "--resize-to", &to_text)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if ((r = tool_opt_value("check", argc, argv, &i, "--config", &kv)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else {
			return tool_usage_error("check", "unexpected argument '%s'", argv[i]);
		}
	}
	if (!size_text)
		return tool_usage_error("check", "missing --size SIZE, e.g. --size 16MiB");
	if ((rc = tool_parse_size("check", "--size", size_text, &size)) != 0)
		return rc;
	memset(&cr, 0, sizeof(cr));
	if (to_text && (rc = tool_parse_size("check", "--resize-to", to_text, &cr.to)) != 0)
		return rc;
	if ((rc = tool_config("check", kv, &cfg)) != 0)
		return rc;
	/* Room to grow to --resize-to; the library then takes only providers that can. */
	if (to_text && hpshm_config_set_max_size(cfg, cr.to > size ? cr.to : size, &err) < 0) {
		hpshm_config_free(cfg);
		return tool_fail("check", "--resize-to %s: %s (hint: %s)", to_text, err.message, err.hint);
	}

	memset(&rep, 0, sizeof(rep));
	memset(&err, 0, sizeof(err));
	rc = hpshm_segment_create_ex(&seg, size, cfg, &rep, &err);
	hpshm_config_free(cfg);

	if (rc < 0) {
		fprintf(stderr, "hpshm check: cannot create a segment of %s: %s\n", hpshm_size_format(size, a, sizeof(a)),
			err.message[0] ? err.message : hpshm_strerror(rc));
		if (err.key[0])
			fprintf(stderr, "  key: %s\n", err.key);
		if (err.hint[0])
			fprintf(stderr, "  hint: %s\n", err.hint);
		if (to_text && strcmp(err.key, "max_size") == 0)
			fprintf(stderr, "  fix: --resize-to needs a provider that resizes in place: provider=auto, or one of "
				"%s (with a max_size this address space holds)\n", check_resize_providers(a2, sizeof(a2)));
		if (json)
			check_json_fail(&rep, size, rc, &err);
		else
			check_text_attempts(stdout, &rep);
		return TOOL_EXIT_FAIL;
	}

	/* The report lives in the segment; take it before destroy, in case create_ex left ours short. */
	if (rep.provider[0] == '\0')
		rep = *hpshm_segment_report(seg);
	rrc = to_text ? check_resize_run(seg, &cr) : 0;
	drc = hpshm_segment_destroy(seg);

	if (json) {
		if (check_json_ok(&rep, size, drc, to_text ? &cr : NULL) < 0)
			return tool_fail("check", "internal error writing JSON");
	} else {
		check_print_summary(&rep);
		printf("verified page size: %s (%s, %s)\n",
		       rep.page_size ? hpshm_size_format(rep.page_size, a, sizeof(a)) : "unknown",
		       rep.verified ? rep.verified_by : "unverified", rep.huge ? "huge pages" : "not huge pages");
		tool_numa_report_text(&rep);
		check_text_attempts(stdout, &rep);
		if (to_text)
			check_resize_text(&cr);
	}
	if (drc < 0)
		return tool_fail("check", "the segment was created but destroying it failed: %s; it may still hold "
				 "pages (see `ipcs -m` and the hugetlbfs mounts)", hpshm_strerror(drc));
	if (rrc < 0)
		return tool_fail("check", "--resize-to %s: %s", to_text, cr.fail);
	return TOOL_EXIT_OK;
}
