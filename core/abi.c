/* SPDX-License-Identifier: MIT */
/*
 * core/abi.c -- where the public structs leave the library with their version.
 *
 * hpshm.h ("Growing the public structs") promises that every report, child, listed object and
 * requirement the library fills carries the version of its layout and has its reserved space
 * zeroed.  The work is done in core/segment.c, core/attach.c and core/objects.c; the public
 * functions that hand those structs out are these thin wrappers, which stamp them on the way
 * out, so no path through the walk or the re-attach code can forget, and the next version
 * is a change here and in the code that fills its new members.  The core's own files never
 * call these wrappers, only the unstamped functions behind them (core/internal.h), so the
 * calls run one way: abi.c on top.
 * Error records are stamped by hpshm_error_set() (base/errors.c), the one function every
 * layer fills them through.
 */
#include <string.h>

#include "core/internal.h"

static void abi_report(hpshm_report *r)
{
	r->version = HPSHM_REPORT_VERSION;
	memset(r->reserved, 0, sizeof(r->reserved));
	for (unsigned i = 0; i < HPSHM_MAX_ATTEMPTS; i++)
		memset(r->attempts[i].reserved, 0, sizeof(r->attempts[i].reserved));
}

int hpshm_segment_create_ex(hpshm_segment **out, size_t size, const hpshm_config *cfg, hpshm_report *report,
			    hpshm_error *err)
{
	int rc = hpshm__segment_create_ex(out, size, cfg, report, err);

	/* The caller's report is filled on failure too; the segment's own only on success. */
	if (report)
		abi_report(report);
	if (rc == 0)
		abi_report(&(*out)->report);
	return rc;
}

int hpshm_segment_create(hpshm_segment **out, size_t size, const hpshm_config *cfg, hpshm_error *err)
{
	return hpshm_segment_create_ex(out, size, cfg, NULL, err);
}

int hpshm_segment_attach(hpshm_segment **out, const char *token, const hpshm_config *cfg, hpshm_error *err)
{
	int rc = hpshm__segment_attach(out, token, cfg, err);

	if (rc == 0)
		abi_report(&(*out)->report);
	return rc;
}

int hpshm_segment_attach_env(hpshm_segment **out, const hpshm_config *cfg, hpshm_error *err)
{
	int rc = hpshm__segment_attach_env(out, cfg, err);

	if (rc == 0)
		abi_report(&(*out)->report);
	return rc;
}

int hpshm_segment_open(hpshm_segment **out, const char *name, const hpshm_config *cfg, hpshm_error *err)
{
	int rc = hpshm__segment_open(out, name, cfg, err);

	if (rc == 0)
		abi_report(&(*out)->report);
	return rc;
}

int hpshm_child_spawn(const hpshm_segment *seg, const char *path, char *const argv[], char *const envp[],
		      hpshm_child *child, hpshm_error *err)
{
	return hpshm_child_spawn_ex(seg, path, argv, envp, NULL, child, err);
}

int hpshm_child_spawn_ex(const hpshm_segment *seg, const char *path, char *const argv[], char *const envp[],
			 const hpshm_spawn_options *opt, hpshm_child *child, hpshm_error *err)
{
	int rc = hpshm__child_spawn(seg, path, argv, envp, opt, child, err);

	if (rc == 0) {
		child->version = HPSHM_CHILD_VERSION;
		memset(child->reserved, 0, sizeof(child->reserved));
	}
	return rc;
}

int hpshm_child_prepare(const hpshm_segment *seg, void *process, char *buf, size_t len, hpshm_error *err)
{
	return hpshm__child_prepare(seg, process, buf, len, err);
}

/* The caller's callback and pointer, behind the stamping one. */
struct abi_objects {
	hpshm_object_fn fn;
	void           *user;
};

static int abi_object(void *user, const hpshm_object *obj)
{
	const struct abi_objects *a = user;
	hpshm_object o = *obj;

	o.version = HPSHM_OBJECT_VERSION;
	memset(o.reserved, 0, sizeof(o.reserved));
	return a->fn(a->user, &o);
}

int hpshm_objects_list(hpshm_object_fn fn, void *user, hpshm_error *err)
{
	struct abi_objects a;

	if (!fn)
		return hpshm__objects_list(NULL, NULL, err); /* which refuses it, saying so */
	a.fn = fn;
	a.user = user;
	return hpshm__objects_list(abi_object, &a, err);
}

/*
 * A requirement is filled by a provider, which may be the application's own and knows nothing
 * of versions: the copy handed to the caller is stamped here, whatever the provider left in it.
 */
struct abi_requirements {
	hpshm_requirement_fn fn;   /* the caller's callback */
	void                *user; /* its pointer */
};

static int abi_requirement(void *user, const char *provider, const hpshm_requirement *r)
{
	const struct abi_requirements *a = user;
	hpshm_requirement need = *r;

	need.version = HPSHM_REQUIREMENT_VERSION;
	memset(need.reserved, 0, sizeof(need.reserved));
	return a->fn(a->user, provider, &need);
}

int hpshm_requirements(size_t size, size_t page_size, const hpshm_config *cfg, hpshm_requirement_fn fn,
		       void *user, hpshm_error *err)
{
	struct abi_requirements a;

	if (!fn)
		return hpshm__requirements(size, page_size, cfg, NULL, NULL, err); /* which refuses it */
	a.fn = fn;
	a.user = user;
	return hpshm__requirements(size, page_size, cfg, abi_requirement, &a, err);
}
