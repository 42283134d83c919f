/* SPDX-License-Identifier: MIT */
/*
 * tools/ls.c -- `hpshm ls` and `hpshm gc`: the named segments on this machine, and removing
 * the ones a crash left behind.
 *
 * Named segments (SysV ids, hugetlbfs files, POSIX shm objects) outlive their processes: a
 * creator killed by SIGKILL never reaches hpshm_segment_destroy(), and its huge pages stay
 * taken from the pool until someone removes the object.  The library finds them through
 * each provider's scan() and the header at their tail (hpshm_objects_list()), looking only
 * in hpshm's own namespace (hpshm.* names, hpshm's SysV key ranges), so `gc` cannot touch
 * anything outside it.  Anyone can put things there, though, so each object comes
 * classified (hpshm_object_state):
 *   - alive: hpshm's, and a process holds it (a shared flock on a file, shm_nattch on a
 *     SysV segment) or its creator still runs;
 *   - dead: hpshm's -- its header, or the mark its provider gives an object from the moment
 *     it exists -- and nobody holds it: `gc` removes it;
 *   - debris: nobody holds it, but nothing proves it is hpshm's (no header, no mark: a create
 *     killed early by an older hpshm, or another program's object): only `gc --force`;
 *   - foreign: not hpshm's (a FIFO, a symbolic link, another program's SysV segment, a
 *     header that is not hpshm's): listed so a person sees it, never removed.
 * hpshm_objects_remove() looks again just before removing, so a segment that came back
 * to life (re-attached, or its name recycled) between the listing and the removal is kept.
 * The list is taken first and acted on after, so removals never run inside a provider's
 * scan.
 *
 * `gc --force` takes only the caller's own debris: root's gc must not remove what another
 * user's program left on its word alone.  `--force --all-users` widens it to everyone's.
 *
 * Names come from whoever made the object (a file name, the name in a header), so the text
 * output escapes what a terminal would act on: control bytes (an ESC sequence could repaint
 * the screen, a CR or LF fake a line), the C1 controls, the bidirectional overrides that
 * reorder what is shown, and bytes that are not UTF-8.  The JSON carries them escaped by the
 * JSON writer.
 *
 * `gc` exits 1 only if the removal of a dead object failed (or a provider could not be
 * listed): objects kept are the normal case, not a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "tool.h"

/* ---- text a terminal shows as it is ---- */

/*
 * The length of the UTF-8 sequence that starts p (at most n bytes), with *cp its code point:
 * 1 to 4, or 0 if it is not valid UTF-8 (a stray or missing continuation byte, an overlong
 * form, a surrogate, beyond U+10FFFF).
 */
static size_t ls_utf8(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;
	uint32_t c;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1fu;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		c = p[0] & 0x0fu;
		lo = p[0] == 0xe0 ? 0xa0 : 0x80; /* no overlong form */
		hi = p[0] == 0xed ? 0x9f : 0xbf; /* no surrogate */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		c = p[0] & 0x07u;
		lo = p[0] == 0xf0 ? 0x90 : 0x80; /* no overlong form */
		hi = p[0] == 0xf4 ? 0x8f : 0xbf; /* nothing past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;
		c = (c << 6) | (p[i] & 0x3fu);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = c;
	return len;
}

/* Would a terminal act on code point c rather than show it?  C0 and C1 controls, DEL, and the
 * marks and overrides that change the direction of what follows. */
static int ls_unsafe(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/*
 * in, as a terminal may show it, in out (len bytes): a backslash doubled, \t \n \r for
 * those, \uXXXX for another code point ls_unsafe() names, \xHH for a byte that is not
 * UTF-8; the rest as it is.  Cut short, never inside an escape, when out is too small.  out.
 */
static const char *ls_safe(const char *in, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t n = strlen(in), o = 0;

	while (n > 0) {
		char esc[16];
		uint32_t c = 0;
		size_t k = ls_utf8(p, n, &c), w;

		if (k == 0) {
			snprintf(esc, sizeof(esc), "\\x%02x", p[0]);
			k = 1;
		} else if (c == '\\') {
			snprintf(esc, sizeof(esc), "\\\\");
		} else if (c == '\t' || c == '\n' || c == '\r') {
			snprintf(esc, sizeof(esc), "\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
		} else if (ls_unsafe(c)) {
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)c);
		} else {
			memcpy(esc, p, k);
			esc[k] = '\0';
		}
		w = strlen(esc);
		if (o + w >= len)
			break;
		memcpy(out + o, esc, w);
		o += w;
		p += k;
		n -= k;
	}
	if (len > 0)
		out[o] = '\0';
	return out;
}

/* Room for any text the tool prints escaped: ls_safe() makes at most six bytes of one. */
#define LS_SAFE_MAX(n) ((n) * 6 + 1)

/* The objects found, copied out of the callback. */
struct ls_list {
	hpshm_object *v;   /* the objects */
	size_t        n;   /* used */
	size_t        cap; /* allocated */
	int           oom; /* 1 if an object could not be kept for lack of memory */
	int           code; /* 0, or the HPSHM_E* code of a listing that failed, for --json */
	hpshm_error   err;  /* and its record */
};

static int ls_collect(void *user, const hpshm_object *obj)
{
	struct ls_list *l = user;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		hpshm_object *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->oom = 1;
			return 1;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *obj;
	return 0;
}

/*
 * List everything into l.  0, or the exit code with the error printed; on a listing error
 * l still holds what was found before it, which `gc` may act on (each removal re-checks).
 */
static int ls_load(const char *cmd, struct ls_list *l)
{
	hpshm_error err;
	int rc;

	memset(l, 0, sizeof(*l));
	memset(&err, 0, sizeof(err));
	rc = hpshm_objects_list(ls_collect, l, &err);
	/* On stderr here, not through tool_fail(): with --json the command's own envelope carries
	 * the error next to what was listed before it. */
	if (l->oom) {
		l->code = HPSHM_ENOMEM;
		snprintf(l->err.message, sizeof(l->err.message), "out of memory after %zu segments", l->n);
		fprintf(stderr, "hpshm %s: error: %s\n", cmd, l->err.message);
		return TOOL_EXIT_FAIL;
	}
	if (rc < 0) {
		char msg[LS_SAFE_MAX(HPSHM_MESSAGE_MAX)], hint[LS_SAFE_MAX(HPSHM_TEXT_MAX)];

		l->code = rc;
		l->err = err;
		fprintf(stderr, "hpshm %s: error: cannot list the segments: %s\n", cmd,
			ls_safe(err.message[0] ? err.message : hpshm_strerror(rc), msg, sizeof(msg)));
		if (err.hint[0])
			fprintf(stderr, "  hint: %s\n", ls_safe(err.hint, hint, sizeof(hint)));
		return TOOL_EXIT_FAIL;
	}
	return 0;
}

/* localtime_r() is POSIX; Windows' C runtime has the same call as localtime_s(), arguments
 * swapped and an error code returned.  1 with *tm filled, or 0. */
static int ls_localtime(const time_t *t, struct tm *tm)
{
#ifdef _WIN32
	return localtime_s(tm, t) == 0;
#else
	return localtime_r(t, tm) != NULL;
#endif
}

static char *ls_time(uint64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t == 0 || !ls_localtime(&tt, &tm) || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "-");
	return buf;
}

static const char *const ls_states[] = {
	[HPSHM_OBJECT_ALIVE] = "alive",
	[HPSHM_OBJECT_DEAD] = "dead",
	[HPSHM_OBJECT_DEBRIS] = "debris",
	[HPSHM_OBJECT_FOREIGN] = "foreign",
};

/* The word for an object's state. */
static const char *ls_state(const hpshm_object *o)
{
	if (o->state < 0 || (size_t)o->state >= sizeof(ls_states) / sizeof(ls_states[0]))
		return "unknown";
	return ls_states[o->state];
}

/* The members `ls --json` and `gc --json` share for one object. */
static void ls_json_members(struct json *j, const hpshm_object *o)
{
	char t[32];

	json_kv_string(j, "provider", o->provider);
	json_kv_string(j, "id", o->id);
	json_kv_string(j, "name", o->name);
	json_kv_uint(j, "size", o->size);
	json_kv_uint(j, "page_size", o->page_size);
	json_kv_int(j, "creator_pid", o->creator_pid);
	json_kv_uint(j, "created_unix", o->created_unix);
	json_kv_string(j, "created", ls_time(o->created_unix, t, sizeof(t)));
	json_kv_bool(j, "alive", o->alive == 1);
	json_kv_bool(j, "mine", o->mine == 1);
	json_kv_string(j, "state", ls_state(o));
	json_kv_string(j, "note", o->note);
}

static void ls_text_header(void)
{
	printf("%-14s %-28s %-20s %10s %6s %8s %-19s %s\n", "PROVIDER", "ID", "NAME", "SIZE", "PAGE", "PID",
	       "CREATED", "STATE");
}

static void ls_text_row(const hpshm_object *o)
{
	char s[32], p[32], t[32];
	char prov[LS_SAFE_MAX(sizeof(o->provider))], id[LS_SAFE_MAX(sizeof(o->id))];
	char name[LS_SAFE_MAX(sizeof(o->name))], note[LS_SAFE_MAX(sizeof(o->note))];

	printf("%-14s %-28s %-20s %10s %6s %8lld %-19s %s", ls_safe(o->provider, prov, sizeof(prov)),
	       ls_safe(o->id, id, sizeof(id)), o->name[0] ? ls_safe(o->name, name, sizeof(name)) : "-",
	       hpshm_size_format(o->size, s, sizeof(s)), o->page_size ? hpshm_size_format(o->page_size, p, sizeof(p)) : "-",
	       o->creator_pid, ls_time(o->created_unix, t, sizeof(t)), ls_state(o));
	/* Plain alive and dead segments need no explanation; the other states do. */
	if (o->state == HPSHM_OBJECT_DEBRIS || o->state == HPSHM_OBJECT_FOREIGN || o->creator_pid == 0)
		printf(" (%s)", ls_safe(o->note, note, sizeof(note)));
	printf("\n");
}

int cmd_ls(int argc, char **argv)
{
	struct ls_list l;
	int json = 0, rc;

	for (int i = 1; i < argc; i++) {
		int r;

		if ((r = tool_opt_flag("ls", argv[i], "--json")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			json = 1;
		} else {
			return tool_usage_error("ls", "unexpected argument '%s'", argv[i]);
		}
	}
	rc = ls_load("ls", &l);
	if (json) {
		struct json j;

		tool_json_open(&j, rc == 0);
		json_object_open(&j);
		json_key(&j, "objects");
		json_array_open(&j);
		for (size_t i = 0; i < l.n; i++) {
			json_object_open(&j);
			ls_json_members(&j, &l.v[i]);
			json_object_close(&j);
		}
		json_array_close(&j);
		json_object_close(&j);
		if (tool_json_close(&j, l.code, &l.err) < 0)
			rc = tool_fail("ls", "internal error writing JSON");
	} else if (l.n == 0) {
		if (rc == 0)
			printf("no hpshm segments on this machine\n");
	} else {
		ls_text_header();
		for (size_t i = 0; i < l.n; i++)
			ls_text_row(&l.v[i]);
	}
#if !defined(__linux__) && !defined(_WIN32)
	/* POSIX has no call that lists shm objects; only Linux keeps them as files. */
	if (!json && rc == 0)
		printf("note: named POSIX shm segments (plain%s) cannot be listed on this system%s\n",
#ifdef __FreeBSD__
		       ", freebsd_largepage", "; posixshmcontrol ls shows them"
#else
		       "", ""
#endif
		);
#endif
	free(l.v);
	return rc;
}

/* What gc did with one object. */
enum gc_verdict {
	GC_REMOVED,      /* dead (or debris under --force), removed */
	GC_WOULD_REMOVE, /* the same, --dry-run */
	GC_KEPT_ALIVE,   /* alive when listed or when re-checked: never removed */
	GC_KEPT_DEBRIS,  /* nothing proves it is hpshm's: only --force removes it */
	GC_KEPT_OTHERS,  /* the same, and another user's: only --force --all-users removes it */
	GC_KEPT_FOREIGN, /* not hpshm's: never removed */
	GC_GONE,         /* dead, but someone removed it before us */
	GC_FAILED        /* dead, and the removal failed */
};

static const char *const gc_words[] = {
	[GC_REMOVED] = "removed",
	[GC_WOULD_REMOVE] = "would remove",
	[GC_KEPT_ALIVE] = "kept",
	[GC_KEPT_DEBRIS] = "kept",
	[GC_KEPT_OTHERS] = "kept",
	[GC_KEPT_FOREIGN] = "kept",
	[GC_GONE] = "gone",
	[GC_FAILED] = "failed",
};

/* What `gc` may remove: --force, --all-users. */
struct gc_reach {
	int force;     /* debris too */
	int all_users; /* other users' debris too */
};

static enum gc_verdict gc_one(const hpshm_object *o, int dry_run, const struct gc_reach *reach, char *why,
			      size_t len)
{
	hpshm_error err;
	unsigned flags;
	int rc;

	switch (o->state) {
	case HPSHM_OBJECT_ALIVE:
		snprintf(why, len, "alive: %s", o->note);
		return GC_KEPT_ALIVE;
	case HPSHM_OBJECT_FOREIGN:
		snprintf(why, len, "foreign, never removed: %s", o->note);
		return GC_KEPT_FOREIGN;
	case HPSHM_OBJECT_DEBRIS:
		if (!reach->force) {
			snprintf(why, len, "debris: %s (--force removes it)", o->note);
			return GC_KEPT_DEBRIS;
		}
		if (!o->mine && !reach->all_users) {
			snprintf(why, len, "another user's debris: %s (--force --all-users removes it)", o->note);
			return GC_KEPT_OTHERS;
		}
		break;
	default:
		break;
	}
	if (dry_run) {
		snprintf(why, len, "%s: %s", ls_state(o), o->note);
		return GC_WOULD_REMOVE;
	}
	memset(&err, 0, sizeof(err));
	flags = (reach->force ? HPSHM_REMOVE_FORCE : 0u) | (reach->all_users ? HPSHM_REMOVE_ALL_USERS : 0u);
	rc = hpshm_objects_remove(o, flags, &err);
	if (rc == 0) {
		snprintf(why, len, "%s: %s", ls_state(o), o->note);
		return GC_REMOVED;
	}
	snprintf(why, len, "%s%s%s", err.message[0] ? err.message : hpshm_strerror(rc), err.hint[0] ? "; hint: " : "",
		 err.hint);
	if (rc == HPSHM_EEXIST)
		return GC_KEPT_ALIVE; /* came back to life since the listing */
	if (rc == HPSHM_EINVAL)
		return GC_GONE;       /* vanished or no longer the one listed: nothing of it left to remove */
	return GC_FAILED;
}

/* The summary's clause for other users' debris kept, when there is some: in buf, or "". */
static const char *gc_others(unsigned n, char *buf, size_t len)
{
	if (n == 0)
		return "";
	snprintf(buf, len, ", %u kept (another user's debris: --force --all-users removes it)", n);
	return buf;
}

/* One object's verdict and why, kept until the report. */
struct gc_one_out {
	enum gc_verdict v;
	char            why[HPSHM_MESSAGE_MAX + HPSHM_TEXT_MAX + 64];
};

static int gc_json(const struct ls_list *l, const struct gc_one_out *v, const unsigned *counts, int dry_run,
		   const struct gc_reach *reach, int ok)
{
	hpshm_error err;
	struct json j;

	tool_json_open(&j, ok);
	json_object_open(&j);
	json_kv_bool(&j, "dry_run", dry_run);
	json_kv_bool(&j, "force", reach->force);
	json_kv_bool(&j, "all_users", reach->all_users);
	json_key(&j, "objects");
	json_array_open(&j);
	for (size_t i = 0; i < l->n; i++) {
		json_object_open(&j);
		ls_json_members(&j, &l->v[i]);
		json_kv_string(&j, "action", gc_words[v[i].v]);
		json_kv_string(&j, "reason", v[i].why);
		json_object_close(&j);
	}
	json_array_close(&j);
	json_kv_uint(&j, "removed", counts[GC_REMOVED]);
	json_kv_uint(&j, "would_remove", counts[GC_WOULD_REMOVE]);
	json_kv_uint(&j, "kept", counts[GC_KEPT_ALIVE]);
	json_kv_uint(&j, "kept_debris", counts[GC_KEPT_DEBRIS]);
	json_kv_uint(&j, "kept_other_users", counts[GC_KEPT_OTHERS]);
	json_kv_uint(&j, "kept_foreign", counts[GC_KEPT_FOREIGN]);
	json_kv_uint(&j, "gone", counts[GC_GONE]);
	json_kv_uint(&j, "failed", counts[GC_FAILED]);
	json_object_close(&j);
	if (l->code)
		return tool_json_close(&j, l->code, &l->err);
	if (!ok) {
		/* Each failed removal's reason is in its object; the error sums them up. */
		memset(&err, 0, sizeof(err));
		snprintf(err.message, sizeof(err.message), "%u removal(s) failed: see the objects' \"reason\"",
			 counts[GC_FAILED]);
		return tool_json_close(&j, HPSHM_ESYS, &err);
	}
	return tool_json_close(&j, 0, NULL);
}

static void gc_text(const struct ls_list *l, const struct gc_one_out *v, const unsigned *counts, int dry_run)
{
	char others[96];

	for (size_t i = 0; i < l->n; i++) {
		const hpshm_object *o = &l->v[i];
		char prov[LS_SAFE_MAX(sizeof(o->provider))], id[LS_SAFE_MAX(sizeof(o->id))];
		char name[LS_SAFE_MAX(sizeof(o->name))], safe[LS_SAFE_MAX(sizeof(v[i].why))];

		printf("%-12s %s %s%s%s: %s\n", gc_words[v[i].v], ls_safe(o->provider, prov, sizeof(prov)),
		       ls_safe(o->id, id, sizeof(id)), o->name[0] ? " " : "", ls_safe(o->name, name, sizeof(name)),
		       ls_safe(v[i].why, safe, sizeof(safe)));
	}
	if (dry_run) {
		printf("%u would be removed, %u kept (alive), %u kept (debris: --force removes it), %u kept (foreign)%s\n",
		       counts[GC_WOULD_REMOVE], counts[GC_KEPT_ALIVE], counts[GC_KEPT_DEBRIS], counts[GC_KEPT_FOREIGN],
		       gc_others(counts[GC_KEPT_OTHERS], others, sizeof(others)));
	} else {
		printf("%u removed, %u kept (alive), %u kept (debris: --force removes it), %u kept (foreign), "
		       "%u already gone, %u failed%s\n",
		       counts[GC_REMOVED], counts[GC_KEPT_ALIVE], counts[GC_KEPT_DEBRIS], counts[GC_KEPT_FOREIGN],
		       counts[GC_GONE], counts[GC_FAILED], gc_others(counts[GC_KEPT_OTHERS], others, sizeof(others)));
	}
}

int cmd_gc(int argc, char **argv)
{
	struct ls_list l;
	struct gc_one_out *v;
	struct gc_reach reach = { 0, 0 };
	int json = 0, dry_run = 0, rc, failed = 0;
	unsigned counts[GC_FAILED + 1] = { 0 };

	for (int i = 1; i < argc; i++) {
		int r;

		if ((r = tool_opt_flag("gc", argv[i], "--json")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			json = 1;
		} else if ((r = tool_opt_flag("gc", argv[i], "--dry-run")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			dry_run = 1;
		} else if ((r = tool_opt_flag("gc", argv[i], "--force")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			reach.force = 1;
		} else if ((r = tool_opt_flag("gc", argv[i], "--all-users")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			reach.all_users = 1;
		} else {
			return tool_usage_error("gc", "unexpected argument '%s'", argv[i]);
		}
	}
	/* Without --force, every user's dead segments go already: --all-users alone would promise more. */
	if (reach.all_users && !reach.force)
		return tool_usage_error("gc", "--all-users widens --force to other users' debris: give both");
	rc = ls_load("gc", &l);
	/* Every verdict first, then the report: the JSON envelope says "ok" before the objects. */
	v = calloc(l.n ? l.n : 1, sizeof(*v));
	if (!v) {
		free(l.v);
		return tool_fail("gc", "out of memory for %zu verdicts", l.n);
	}
	for (size_t i = 0; i < l.n; i++) {
		v[i].v = gc_one(&l.v[i], dry_run, &reach, v[i].why, sizeof(v[i].why));
		counts[v[i].v]++;
		if (v[i].v == GC_FAILED)
			failed = 1;
	}
	if (json) {
		if (gc_json(&l, v, counts, dry_run, &reach, rc == 0 && !failed) < 0)
			rc = tool_fail("gc", "internal error writing JSON");
	} else {
		gc_text(&l, v, counts, dry_run);
	}
	free(v);
	free(l.v);
	if (failed && rc == 0)
		rc = TOOL_EXIT_FAIL;
	return rc;
}
