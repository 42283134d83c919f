/* SPDX-License-Identifier: MIT */
/*
 * tests/test_api.c -- the public structs as a program built against an older header sees
 * them (include/hpshm.h, "Growing the public structs").
 *
 * hpshm_error, hpshm_report (with its hpshm_attempt entries), hpshm_object and hpshm_child
 * open with a version the library sets and close with reserved space it zeroes; a later
 * version takes its new members out of the reserved space, so the structs never change size.
 * The layouts below are those of the 0.2.0 header, written out as a program compiled against
 * it holds them.  The suite checks that the current header still has exactly that layout, and
 * that every function filling one of these structs, given one of that size with guard bytes
 * after it, stamps the version, zeroes the reserved space and writes nothing past its end.
 *
 * Plain pages only (provider=plain): nothing here needs a huge page pool.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "base/header.h"
#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "port.h"

/* ---- the 0.2.0 layouts, frozen: never edit these, add a v2 beside them ---- */

struct error_v1 {
	unsigned version;
	int      code;
	int      sys_errno;
	char     call[32];
	char     provider[32];
	char     key[32];
	char     message[1024];
	char     hint[256];
	uint64_t reserved[8];
};

struct attempt_v1 {
	char     provider[32];
	size_t   page_size;
	int      result;
	int      sys_errno;
	char     call[32];
	char     reason[256];
	uint64_t reserved[4];
};

struct report_v1 {
	unsigned          version;
	char              provider[32];
	size_t            requested_size;
	size_t            mapped_size;
	size_t            usable_size;
	size_t            requested_page_size;
	size_t            page_size;
	int               verified;
	char              verified_by[32];
	int               huge;
	hpshm_huge_pages  policy;
	unsigned          populate;
	uint64_t          populate_ns;
	uint64_t          create_ns;
	unsigned          nattempts;
	struct attempt_v1 attempts[16];
	uint64_t          reserved[32];
};

struct object_v1 {
	unsigned  version;
	char      provider[32];
	char      id[256];
	char      name[128];
	size_t    size;
	size_t    page_size;
	long long creator_pid;
	uint64_t  created_unix;
	int       alive;
	int       state;
	char      note[128];
	int       mine;
	int       spare;
	uint64_t  reserved[15];
};

struct child_v1 {
	unsigned  version;
	long long pid;
	void     *handle;
	uint64_t  reserved[4];
};

/* A struct as an older program passes it, with guard bytes the library must never touch. */
#define GUARD      0xa5
#define GUARD_SIZE 64

struct guarded_error {
	struct error_v1 s;
	unsigned char   after[GUARD_SIZE];
};

struct guarded_report {
	struct report_v1 s;
	unsigned char    after[GUARD_SIZE];
};

struct guarded_child {
	struct child_v1 s;
	unsigned char   after[GUARD_SIZE];
};

TestSuite(api, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

/* A program that exits 0 at once, and its arguments: /bin/true, or cmd.exe /c "exit 0" on
 * Windows (in %SystemRoot%\System32). */
static const char *true_program(char ***argv)
{
#ifdef _WIN32
	static char path[512], a0[] = "cmd", a1[] = "/c", a2[] = "exit 0";
	static char *args[] = { a0, a1, a2, NULL };
	const char *root = getenv("SystemRoot");

	snprintf(path, sizeof path, "%s\\System32\\cmd.exe", root && root[0] ? root : "C:\\Windows");
#else
	static char path[] = "/bin/true", a0[] = "true";
	static char *args[] = { a0, NULL };
#endif
	*argv = args;
	return path;
}

static void assert_guard(const unsigned char *after, const char *what)
{
	for (size_t i = 0; i < GUARD_SIZE; i++)
		cr_assert_eq(after[i], GUARD, "%s: the library wrote byte %zu past the end of the struct", what, i);
}

static void assert_zero(const uint64_t *reserved, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(reserved[i], 0, "%s: reserved[%zu] is %#llx, not 0", what, i,
			     (unsigned long long)reserved[i]);
}

#define ZERO(what, array) assert_zero((array), sizeof(array) / sizeof((array)[0]), (what))

/* A member at the same place in the current struct as in the frozen one. */
#define SAME(type, v1, member)                                                                          \
	cr_expect_eq(offsetof(type, member), offsetof(struct v1, member),                               \
		     #type "." #member " is at byte %zu, the 0.2.0 header put it at %zu", offsetof(type, member), \
		     offsetof(struct v1, member))

#define SAME_SIZE(type, v1)                                                                               \
	cr_assert_eq(sizeof(type), sizeof(struct v1), "sizeof(" #type ") is %zu, the 0.2.0 header's is %zu: "    \
		     "take new members out of reserved[] instead", sizeof(type), sizeof(struct v1))

Test(api, public_structs_keep_the_0_2_0_layout)
{
	SAME(hpshm_error, error_v1, version);
	SAME(hpshm_error, error_v1, code);
	SAME(hpshm_error, error_v1, sys_errno);
	SAME(hpshm_error, error_v1, call);
	SAME(hpshm_error, error_v1, provider);
	SAME(hpshm_error, error_v1, key);
	SAME(hpshm_error, error_v1, message);
	SAME(hpshm_error, error_v1, hint);
	SAME(hpshm_error, error_v1, reserved);
	SAME_SIZE(hpshm_error, error_v1);

	SAME(hpshm_attempt, attempt_v1, provider);
	SAME(hpshm_attempt, attempt_v1, page_size);
	SAME(hpshm_attempt, attempt_v1, result);
	SAME(hpshm_attempt, attempt_v1, sys_errno);
	SAME(hpshm_attempt, attempt_v1, call);
	SAME(hpshm_attempt, attempt_v1, reason);
	SAME(hpshm_attempt, attempt_v1, reserved);
	SAME_SIZE(hpshm_attempt, attempt_v1);

	SAME(hpshm_report, report_v1, version);
	SAME(hpshm_report, report_v1, provider);
	SAME(hpshm_report, report_v1, requested_size);
	SAME(hpshm_report, report_v1, mapped_size);
	SAME(hpshm_report, report_v1, usable_size);
	SAME(hpshm_report, report_v1, requested_page_size);
	SAME(hpshm_report, report_v1, page_size);
	SAME(hpshm_report, report_v1, verified);
	SAME(hpshm_report, report_v1, verified_by);
	SAME(hpshm_report, report_v1, huge);
	SAME(hpshm_report, report_v1, policy);
	SAME(hpshm_report, report_v1, populate);
	SAME(hpshm_report, report_v1, populate_ns);
	SAME(hpshm_report, report_v1, create_ns);
	SAME(hpshm_report, report_v1, nattempts);
	SAME(hpshm_report, report_v1, attempts);
	/* Version 2 took origin, relocated and attach_ns out of the reserved space: they start
	 * where it did, and what is left of it ends where it did. */
	cr_expect_eq(offsetof(hpshm_report, origin), offsetof(struct report_v1, reserved),
		     "hpshm_report.origin is not where the 0.2.0 reserved space began");
	cr_expect_eq(offsetof(hpshm_report, reserved) + sizeof(((hpshm_report *)0)->reserved),
		     offsetof(struct report_v1, reserved) + sizeof(((struct report_v1 *)0)->reserved),
		     "hpshm_report.reserved no longer ends where the 0.2.0 one did");
	SAME_SIZE(hpshm_report, report_v1);

	SAME(hpshm_object, object_v1, version);
	SAME(hpshm_object, object_v1, provider);
	SAME(hpshm_object, object_v1, id);
	SAME(hpshm_object, object_v1, name);
	SAME(hpshm_object, object_v1, size);
	SAME(hpshm_object, object_v1, page_size);
	SAME(hpshm_object, object_v1, creator_pid);
	SAME(hpshm_object, object_v1, created_unix);
	SAME(hpshm_object, object_v1, alive);
	SAME(hpshm_object, object_v1, state);
	SAME(hpshm_object, object_v1, note);
	SAME(hpshm_object, object_v1, mine);
	SAME(hpshm_object, object_v1, spare);
	SAME(hpshm_object, object_v1, reserved);
	SAME_SIZE(hpshm_object, object_v1);

	SAME(hpshm_child, child_v1, version);
	SAME(hpshm_child, child_v1, pid);
	SAME(hpshm_child, child_v1, handle);
	SAME(hpshm_child, child_v1, reserved);
	SAME_SIZE(hpshm_child, child_v1);
}

static hpshm_config *plain_config(const char *extra)
{
	hpshm_config *cfg;
	hpshm_error err;
	char kv[256];
	int rc;

	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off%s%s", *extra ? "," : "", extra);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s", kv, err.message);
	return cfg;
}

/* An older program's error record after a failure: stamped, cleared, nothing written past it. */
static void assert_error_v1(const struct guarded_error *g, int rc, const char *what)
{
	cr_assert_lt(rc, 0, "%s did not fail", what);
	cr_assert_eq(g->s.version, HPSHM_ERROR_VERSION, "%s: error version %u, want %d", what, g->s.version,
		     HPSHM_ERROR_VERSION);
	cr_assert_eq(g->s.code, rc, "%s: err.code %d, returned %d", what, g->s.code, rc);
	cr_assert(memchr(g->s.message, '\0', sizeof g->s.message) && g->s.message[0], "%s: no message", what);
	ZERO(what, g->s.reserved);
	assert_guard(g->after, what);
}

Test(api, error_records_of_an_older_program_are_filled_within_their_size)
{
	struct guarded_error g;
	hpshm_config *cfg = plain_config("");
	hpshm_segment *seg = NULL;
	hpshm_child kid;
	char **argv;
	const char *program = true_program(&argv);
	int rc;

	memset(&g, GUARD, sizeof g);
	rc = hpshm_config_set(cfg, "no_such_key", "1", (hpshm_error *)&g.s);
	assert_error_v1(&g, rc, "hpshm_config_set");

	memset(&g, GUARD, sizeof g);
	rc = hpshm_config_set_huge_pages(cfg, (hpshm_huge_pages)9, (hpshm_error *)&g.s);
	assert_error_v1(&g, rc, "hpshm_config_set_huge_pages");

	memset(&g, GUARD, sizeof g);
	rc = hpshm_segment_create(&seg, 0, cfg, (hpshm_error *)&g.s);
	assert_error_v1(&g, rc, "hpshm_segment_create");

	memset(&g, GUARD, sizeof g);
	rc = hpshm_segment_attach(&seg, "not a token", NULL, (hpshm_error *)&g.s);
	assert_error_v1(&g, rc, "hpshm_segment_attach");

	memset(&g, GUARD, sizeof g);
	rc = hpshm_child_spawn(NULL, program, argv, NULL, &kid, (hpshm_error *)&g.s);
	assert_error_v1(&g, rc, "hpshm_child_spawn");

	memset(&g, GUARD, sizeof g);
	rc = hpshm_objects_remove(NULL, 0, (hpshm_error *)&g.s);
	assert_error_v1(&g, rc, "hpshm_objects_remove");

	memset(&g, GUARD, sizeof g);
	rc = hpshm_objects_list(NULL, NULL, (hpshm_error *)&g.s);
	assert_error_v1(&g, rc, "hpshm_objects_list");
	hpshm_config_free(cfg);
}

/* An older program's report: stamped, every reserved word zero (the attempts' too), nothing past it. */
static void assert_report_v1(const struct report_v1 *r, const char *what)
{
	char name[64];

	cr_assert_eq(r->version, HPSHM_REPORT_VERSION, "%s: report version %u, want %d", what, r->version,
		     HPSHM_REPORT_VERSION);
	ZERO(what, r->reserved);
	for (size_t i = 0; i < 16; i++) {
		snprintf(name, sizeof name, "%s, attempts[%zu]", what, i);
		ZERO(name, r->attempts[i].reserved);
	}
}

Test(api, reports_of_an_older_program_are_filled_within_their_size)
{
	struct guarded_report g;
	hpshm_config *cfg = plain_config("");
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	memset(&g, GUARD, sizeof g);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, (size_t)1 << 20, cfg, (hpshm_report *)&g.s, &err);
	cr_assert_eq(rc, 0, "plain segment: %s: %s", hpshm_errname(rc), err.message);
	assert_report_v1(&g.s, "hpshm_segment_create_ex");
	cr_assert_str_eq(g.s.provider, "plain");
	cr_assert_geq(g.s.nattempts, 1);
	assert_guard(g.after, "hpshm_segment_create_ex");
	/* The segment's own report, which the caller reads in place. */
	assert_report_v1((const struct report_v1 *)(const void *)hpshm_segment_report(seg), "hpshm_segment_report");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);

	/* A failed create fills the report too. */
	memset(&g, GUARD, sizeof g);
	rc = hpshm_segment_create_ex(&seg, 0, cfg, (hpshm_report *)&g.s, &err);
	cr_assert_eq(rc, HPSHM_EINVAL);
	assert_report_v1(&g.s, "a failed hpshm_segment_create_ex");
	assert_guard(g.after, "a failed hpshm_segment_create_ex");
	hpshm_config_free(cfg);
}

/* ---- lifetimes the header states ---- */

/* A log sink's user data, which must outlive the configuration (hpshm_config_set_log()). */
struct log_seen {
	int  destroyed; /* lines saying the segment was destroyed */
	int  opened;    /* lines saying a segment was opened */
	char last[HPSHM_MESSAGE_MAX];
};

static void log_sink(void *user, hpshm_log_level level, const char *msg)
{
	struct log_seen *l = user;

	(void)level;
	snprintf(l->last, sizeof l->last, "%s", msg);
	l->destroyed += strncmp(msg, "destroyed ", 10) == 0;
	l->opened += strncmp(msg, "opened ", 7) == 0;
}

Test(api, a_segment_outlives_its_configuration_and_logs_through_its_copy)
{
	struct log_seen l;
	hpshm_config *cfg = plain_config("");
	hpshm_segment *seg = NULL;
	hpshm_error err;

	memset(&l, 0, sizeof l);
	hpshm_config_set_log(cfg, log_sink, &l, HPSHM_LOG_INFO);
	cr_assert_eq(hpshm_segment_create(&seg, (size_t)1 << 16, cfg, &err), 0, "%s", err.message);
	/* Freed, and its memory reused: the segment holds a copy, not the configuration. */
	hpshm_config_free(cfg);
	cfg = plain_config("huge_pages=off");
	hpshm_config_set_log(cfg, NULL, NULL, HPSHM_LOG_OFF);
	memset(hpshm_segment_address(seg), 0x11, 4096);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(l.destroyed, 1, "the destroy did not log through the freed configuration's sink: last line \"%s\"",
		     l.last);
	hpshm_config_free(cfg);
}

Test(api, an_opened_segments_report_says_open_and_its_own_time)
{
	char name[64], extra[96], line[HPSHM_MESSAGE_MAX];
	struct log_seen l;
	hpshm_config *cfg, *ocfg;
	hpshm_segment *seg = NULL, *opened = NULL;
	const hpshm_report *r;
	hpshm_error err;
	int rc;

	snprintf(name, sizeof name, "hpt-api-open-%ld", (long)hpshm__port_getpid());
	snprintf(extra, sizeof extra, "name=%s", name);
	cfg = plain_config(extra);
	cr_assert_eq(hpshm_segment_create(&seg, (size_t)1 << 16, cfg, &err), 0, "%s", err.message);
	r = hpshm_segment_report(seg);
	cr_assert_eq(r->origin, HPSHM_ORIGIN_CREATED);
	cr_assert_gt(r->nattempts, 0);
	cr_assert_eq(r->attach_ns, 0);
	hpshm_report_format(r, line, sizeof line);
	cr_assert(strstr(line, " create=") && strstr(line, " attempts="), "a created segment's line: %s", line);

	memset(&l, 0, sizeof l);
	ocfg = plain_config("");
	hpshm_config_set_log(ocfg, log_sink, &l, HPSHM_LOG_INFO);
	rc = hpshm_segment_open(&opened, name, ocfg, &err);
	cr_assert_eq(rc, 0, "open %s: %s: %s", name, hpshm_errname(rc), err.message);
	hpshm_config_free(ocfg);
	r = hpshm_segment_report(opened);
	cr_assert_eq(r->version, HPSHM_REPORT_VERSION);
	cr_assert_eq(r->origin, HPSHM_ORIGIN_OPENED);
	cr_assert_eq(r->create_ns, 0, "an open took no create");
	cr_assert_eq(r->nattempts, 0, "an open tried no provider to create");
	cr_assert_gt(r->attach_ns, 0);
	cr_assert_eq(r->relocated, 1, "opened in its creator, it cannot be at the creator's address");
	cr_assert_eq(hpshm_segment_is_owner(opened), 0);
	hpshm_report_format(r, line, sizeof line);
	cr_assert(strstr(line, " open=") && strstr(line, "address=elsewhere"), "an opened segment's line: %s", line);
	cr_assert(!strstr(line, "create=") && !strstr(line, "attempts="), "an opened segment's line: %s", line);
	cr_assert_eq(l.opened, 1, "last line \"%s\"", l.last);
	cr_assert_eq(hpshm_segment_destroy(opened), 0);
	/* The opener's destroy only detached: the creator's name still opens. */
	cr_assert_eq(hpshm_segment_open(&opened, name, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(opened), 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(hpshm_segment_open(&opened, name, NULL, &err), HPSHM_ENOENT, "the owner's destroy left it: %s",
		     err.message);
	hpshm_config_free(cfg);
}

struct find_object {
	const char *name;    /* the segment's name */
	int         seen;    /* listed */
	unsigned    version; /* its version */
	int         zeroed;  /* its reserved space was all zero */
};

static int find_object(void *user, const hpshm_object *o)
{
	struct find_object *f = user;
	const struct object_v1 *v1 = (const struct object_v1 *)(const void *)o;

	if (strcmp(o->name, f->name) != 0)
		return 0;
	f->seen = 1;
	f->version = v1->version;
	f->zeroed = v1->spare == 0;
	for (size_t i = 0; i < sizeof v1->reserved / sizeof v1->reserved[0]; i++)
		if (v1->reserved[i])
			f->zeroed = 0;
	return 1;
}

Test(api, a_segment_named_in_utf8_is_created_listed_and_opened)
{
	char name[64], extra[96];
	struct find_object f;
	hpshm_config *cfg;
	hpshm_segment *seg = NULL, *opened = NULL;
	hpshm_error err;

	/* U+6570 U+636E U+00E9: names are UTF-8 in the API, whatever the system calls them. */
	snprintf(name, sizeof name, "hpt-api-\xe6\x95\xb0\xe6\x8d\xae\xc3\xa9-%ld", (long)hpshm__port_getpid());
	snprintf(extra, sizeof extra, "name=%s", name);
	cfg = plain_config(extra);
	cr_assert_eq(hpshm_segment_create(&seg, (size_t)1 << 16, cfg, &err), 0, "%s", err.message);
	memset(&f, 0, sizeof f);
	f.name = name;
	cr_assert_geq(hpshm_objects_list(find_object, &f, &err), 0, "%s", err.message);
	cr_assert(f.seen, "%s is not listed", name);
	cr_assert_eq(hpshm_segment_open(&opened, name, NULL, &err), 0, "open %s: %s", name, err.message);
	cr_assert_eq(hpshm_segment_destroy(opened), 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(api, listed_objects_carry_their_version)
{
	struct find_object f;
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char name[64], extra[96];
	int rc;

	snprintf(name, sizeof name, "api%ld-listed", (long)hpshm__port_getpid());
	snprintf(extra, sizeof extra, "name=%s", name);
	cfg = plain_config(extra);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, (size_t)1 << 20, cfg, &err);
	cr_assert_eq(rc, 0, "named plain segment: %s: %s", hpshm_errname(rc), err.message);
	memset(&f, 0, sizeof f);
	f.name = name;
	rc = hpshm_objects_list(find_object, &f, &err);
	cr_expect_geq(rc, 1, "hpshm_objects_list: %s: %s", hpshm_errname(rc), err.message);
	cr_expect(f.seen, "segment %s was not listed", name);
	cr_expect_eq(f.version, HPSHM_OBJECT_VERSION, "object version %u, want %d", f.version, HPSHM_OBJECT_VERSION);
	cr_expect(f.zeroed, "the listed object's reserved space is not zero");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(api, children_of_an_older_program_are_filled_within_their_size)
{
	struct guarded_child g;
	hpshm_config *cfg = plain_config("reattach=exec");
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char **argv;
	const char *program = true_program(&argv);
	int rc, status = -1;

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, (size_t)1 << 20, cfg, &err);
	cr_assert_eq(rc, 0, "plain reattach=exec segment: %s: %s", hpshm_errname(rc), err.message);
	memset(&g, GUARD, sizeof g);
	fflush(NULL);
	rc = hpshm_child_spawn(seg, program, argv, NULL, (hpshm_child *)&g.s, &err);
	cr_assert_eq(rc, 0, "hpshm_child_spawn %s: %s: %s", program, hpshm_errname(rc), err.message);
	cr_assert_eq(g.s.version, HPSHM_CHILD_VERSION, "child version %u, want %d", g.s.version, HPSHM_CHILD_VERSION);
	cr_assert_gt(g.s.pid, 0);
	ZERO("hpshm_child_spawn", g.s.reserved);
	assert_guard(g.after, "hpshm_child_spawn");
	rc = hpshm_child_wait((hpshm_child *)&g.s, &status, &err);
	cr_assert_eq(rc, 0, "hpshm_child_wait: %s", err.message);
	cr_assert_eq(status, 0, "%s exited %d", program, status);
	assert_guard(g.after, "hpshm_child_wait");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

/* ---- hpshm_header_classify(): whose an object is, from its header region's bytes ---- */

/* A named plain segment of this test's own, and a copy of its header region. */
struct classified {
	hpshm_config  *cfg;                        /* its configuration */
	hpshm_segment *seg;                        /* the segment */
	char           name[64];                   /* its name */
	unsigned char  region[HPSHM_HEADER_REGION]; /* its header region as the core wrote it */
};

static void classified_make(struct classified *c, const char *what)
{
	char extra[96];
	hpshm_error err;
	int rc;

	snprintf(c->name, sizeof c->name, "api%ld-%s", (long)hpshm__port_getpid(), what);
	snprintf(extra, sizeof extra, "name=%s", c->name);
	c->cfg = plain_config(extra);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&c->seg, (size_t)1 << 16, c->cfg, &err);
	cr_assert_eq(rc, 0, "named plain segment: %s: %s", hpshm_errname(rc), err.message);
	/* A named segment's header is at its tail, right after the bytes the caller may use. */
	memcpy(c->region, (const char *)hpshm_segment_address(c->seg) + hpshm_segment_size(c->seg), sizeof c->region);
}

static void classified_free(struct classified *c)
{
	cr_assert_eq(hpshm_segment_destroy(c->seg), 0);
	hpshm_config_free(c->cfg);
}

/* The facts of anything but hpshm's header: the version, and nothing else. */
static void assert_no_facts(const struct hpshm_header_facts *facts, const char *what)
{
	struct hpshm_header_facts zero;

	memset(&zero, 0, sizeof zero);
	zero.version = HPSHM_HEADER_FACTS_VERSION;
	cr_assert_eq(memcmp(facts, &zero, sizeof zero), 0, "%s: facts other than the version were filled", what);
}

Test(api, header_classify_takes_a_real_segments_header_for_hpshms)
{
	struct {
		struct hpshm_header_facts s;
		unsigned char             after[64];
	} g;
	struct hpshm_header_facts again;
	struct hpshm_found f;
	struct classified c;
	int rc;

	classified_make(&c, "classify");
	memset(&f, 0x5a, sizeof f);
	memset(&g, 0xa5, sizeof g);
	rc = hpshm_header_classify(c.region, sizeof c.region, "plain", &f, &g.s);
	cr_assert_eq(rc, HPSHM_FOUND_HEADER, "the segment's own header classified as %d", rc);
	cr_assert_eq(f.has_header, HPSHM_FOUND_HEADER);
	cr_assert_eq(memcmp(f.header, HPSHM_HEADER_MAGIC, 8), 0, "f.header does not hold the header read");
	memset(&again, 0x5a, sizeof again);
	cr_assert(memcmp(f.id, &again, sizeof f.id < sizeof again ? sizeof f.id : sizeof again) == 0 &&
		  memcmp(&f.alive, &again, sizeof f.alive) == 0 && memcmp(&f.mine, &again, sizeof f.mine) == 0,
		  "hpshm_header_classify() wrote members of f that are the provider's");
	cr_assert_eq(g.s.version, HPSHM_HEADER_FACTS_VERSION);
	cr_assert_eq(g.s.other_boot, 0, "a header written in this boot is not another boot's");
	cr_assert_neq(g.s.nonce, 0, "the core's header carries the segment's nonce");
	cr_assert_eq(g.s.creator_pid, hpshm__port_getpid());
	cr_assert_str_eq(g.s.provider, "plain");
	cr_assert_str_eq(g.s.name, c.name);
	assert_zero(g.s.reserved, sizeof g.s.reserved / sizeof g.s.reserved[0], "hpshm_header_classify");
	assert_guard(g.after, "hpshm_header_classify");
	/* remove()'s check: what scan() handed over classifies again to the same segment. */
	rc = hpshm_header_classify(f.header, sizeof f.header, "plain", NULL, &again);
	cr_assert_eq(rc, HPSHM_FOUND_HEADER);
	cr_assert_eq(again.nonce, g.s.nonce, "f.header names another segment than the region read");
	classified_free(&c);
}

Test(api, header_classify_finds_a_forged_magic_foreign)
{
	struct hpshm_header_facts facts;
	struct hpshm_found f;
	struct classified c;
	int rc;

	classified_make(&c, "forged");
	c.region[3] ^= 0x20; /* "HPShMSEG": every other byte still hpshm's */
	memset(&f, 0x5a, sizeof f);
	rc = hpshm_header_classify(c.region, sizeof c.region, "plain", &f, &facts);
	cr_assert_eq(rc, HPSHM_FOUND_FOREIGN_HEADER, "a forged magic classified as %d", rc);
	cr_assert_eq(f.has_header, HPSHM_FOUND_FOREIGN_HEADER);
	for (size_t i = 0; i < sizeof f.header; i++)
		cr_assert_eq(f.header[i], 0, "f.header[%zu] of a foreign object is not zero", i);
	assert_no_facts(&facts, "a forged magic");
	classified_free(&c);
}

Test(api, header_classify_proves_nothing_from_a_truncated_region)
{
	unsigned char zeros[64];
	struct hpshm_header_facts facts;
	struct classified c;

	classified_make(&c, "truncated");
	cr_assert_eq(hpshm_header_classify(c.region, sizeof(struct hpshm_header) - 1, "plain", NULL, &facts),
		     HPSHM_FOUND_FOREIGN_HEADER, "a header cut short is not a header");
	assert_no_facts(&facts, "a header cut short");
	cr_assert_eq(hpshm_header_classify(c.region, sizeof(struct hpshm_header), "plain", NULL, NULL),
		     HPSHM_FOUND_HEADER, "a whole header read alone is one");
	cr_assert_eq(hpshm_header_classify(c.region, 0, "plain", NULL, NULL), HPSHM_FOUND_FOREIGN_HEADER,
		     "nothing read");
	cr_assert_eq(hpshm_header_classify(NULL, sizeof c.region, "plain", NULL, NULL), HPSHM_FOUND_FOREIGN_HEADER,
		     "no bytes");
	memset(zeros, 0, sizeof zeros);
	cr_assert_eq(hpshm_header_classify(zeros, sizeof zeros, "plain", NULL, NULL), HPSHM_FOUND_BARE,
		     "zeros prove nothing either way");
	classified_free(&c);
}

Test(api, header_classify_tells_another_boots_header)
{
	struct hpshm_header_facts facts;
	struct classified c;
	char *boot;
	int rc;

	classified_make(&c, "boot");
	boot = (char *)c.region + offsetof(struct hpshm_header, boot_id);
	if (boot[0] == '\0') {
		classified_free(&c);
		HPT_SKIP("this system names no boot (an empty boot_id in the header): nothing to tell apart");
	}
	boot[0] = boot[0] == 'x' ? 'y' : 'x';
	rc = hpshm_header_classify(c.region, sizeof c.region, "plain", NULL, &facts);
	cr_assert_eq(rc, HPSHM_FOUND_HEADER, "another boot's header is still hpshm's: %d", rc);
	cr_assert_eq(facts.other_boot, 1, "a header of another boot was not told stale");
	memset(boot, 0, sizeof(((struct hpshm_header *)0)->boot_id));
	rc = hpshm_header_classify(c.region, sizeof c.region, "plain", NULL, &facts);
	cr_assert_eq(rc, HPSHM_FOUND_HEADER);
	cr_assert_eq(facts.other_boot, 0, "a header that names no boot is not known to be another boot's");
	classified_free(&c);
}

Test(api, header_classify_takes_a_torn_header_for_its_providers_mark_only)
{
	struct classified c;

	classified_make(&c, "torn");
	memset(c.region, 0, 8); /* killed before the magic, which is written last */
	cr_assert_eq(hpshm_header_classify(c.region, sizeof c.region, "plain", NULL, NULL), HPSHM_FOUND_MARKED);
	cr_assert_eq(hpshm_header_classify(c.region, sizeof c.region, "hugetlbfs", NULL, NULL),
		     HPSHM_FOUND_FOREIGN_HEADER, "another provider's torn header is not this one's mark");
	cr_assert_eq(hpshm_header_classify(c.region, sizeof c.region, NULL, NULL, NULL), HPSHM_FOUND_FOREIGN_HEADER);
	classified_free(&c);
}
