/* SPDX-License-Identifier: MIT */
/*
 * core/config_keys.c -- the configuration keys: one table, a parser and a formatter each.
 * Layers: doc/architecture.md; where values come from (API, file, environment) and which
 * source wins is core/config.c.
 *
 * Every key is defined once in keys[] below (name, accepted values, default, description,
 * parser, formatter).  The parser, the error that lists valid values, `hpshm probe` and the
 * docs all read that table, so a key cannot be accepted in one place and unknown in another.
 * A key is found by config_key_find() and checked by hpshm__config_key_parse(), whatever
 * the source: the one place to look a key up and validate its value.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

struct hpshm__keydef {
	const char *name;        /* the key, as written in every source */
	const char *values;      /* accepted values, for errors and docs */
	const char *def;         /* default, as text */
	const char *description; /* one line */
	int (*parse)(struct hpshm_config *c, const char *v, hpshm_error *err); /* text to c: 0, or an error */
	int (*format)(const struct hpshm_config *c, char *buf, size_t len); /* c to text, as snprintf */
};

int hpshm__config_bad(hpshm_error *err, int code, const char *key, const char *values, const char *fmt, ...)
{
	va_list ap;
	char msg[HPSHM_MESSAGE_MAX];
	char hint[HPSHM_TEXT_MAX];

	if (!err)
		return code;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(hint, sizeof(hint), "%s accepts: %s", key, values);
	hpshm_error_set(err, code, 0, NULL, hint, "%s", msg);
	hpshm__strlcpy(err->key, key, sizeof(err->key));
	err->provider[0] = '\0';
	return code;
}

/* Word values: the index of v in words (NULL-terminated), or -1. */
static int config_word(const char *v, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(v, words[i]) == 0)
			return i;
	return -1;
}

/* "auto, memfd_hugetlb, ..." for messages that list what provider= accepts. */
static void provider_known(char *buf, size_t len)
{
	struct hpshm__provider_list all;

	snprintf(buf, len, "auto");
	hpshm__providers(&all);
	for (unsigned i = 0; i < all.n; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, ", %s", all.p[i].name);
	}
}

/*
 * provider=auto walks the table; provider=a,b names the providers to try, in order;
 * provider=auto,-a,-b (or -a,-b: auto is implied) walks the table without a and b, which is
 * how an operator switches a backend off at run time.  An exclusion may name a provider this
 * build lacks (the same config file serves every build and OS); a name to use may not.
 */
/* What provider= accepts, for the errors of the key and of hpshm_config_set_provider(). */
const char hpshm__provider_accepted[] = "auto, provider names separated by commas, or auto,-name to leave one out";

static int parse_provider(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	char names[HPSHM__MAX_PROVIDERS][HPSHM_NAME_MAX], excluded[HPSHM__MAX_PROVIDERS][HPSHM_NAME_MAX];
	unsigned n = 0, nx = 0, nauto = 0, item = 0;
	struct hpshm_instance found;
	const char *p = v;

	while (*p) {
		const char *end = p + strcspn(p, ",");
		const char *q = end;
		char name[HPSHM_NAME_MAX];
		int minus;
		size_t len;

		while (p < q && isspace((unsigned char)*p))
			p++;
		while (q > p && isspace((unsigned char)q[-1]))
			q--;
		minus = p < q && *p == '-';
		if (minus)
			p++;
		len = (size_t)(q - p);
		if (len == 0 || len >= HPSHM_NAME_MAX)
			return hpshm__config_bad(err, HPSHM_EVALUE, "provider", hpshm__provider_accepted,
					  "provider: empty or overlong name in \"%s\"", v);
		if (n + nx == HPSHM__MAX_PROVIDERS)
			return hpshm__config_bad(err, HPSHM_EVALUE, "provider", "at most 16 names",
					  "provider: too many names in \"%s\"", v);
		memcpy(name, p, len);
		name[len] = '\0';
		if (strcmp(name, "auto") == 0) {
			if (minus || item != 0)
				return hpshm__config_bad(err, HPSHM_EVALUE, "provider", hpshm__provider_accepted,
						  "provider: auto can only come first, as in auto,-sysv_hugetlb");
			nauto = 1;
		} else if (minus) {
			if (hpshm__provider_find(name, &found) < 0 && !hpshm__provider_name_known(name)) {
				char known[HPSHM_TEXT_MAX];

				provider_known(known, sizeof(known));
				hpshm__config_bad(err, HPSHM_ENOPROVIDER, "provider", known,
					   "provider: cannot leave out unknown provider \"%s\"", name);
				return HPSHM_ENOPROVIDER;
			}
			memcpy(excluded[nx++], name, len + 1);
		} else {
			if (hpshm__provider_find(name, &found) < 0) {
				char known[HPSHM_TEXT_MAX];

				provider_known(known, sizeof(known));
				hpshm__config_bad(err, HPSHM_ENOPROVIDER, "provider", known, "provider: unknown provider \"%s\"",
					   name);
				return HPSHM_ENOPROVIDER;
			}
			memcpy(names[n++], name, len + 1);
		}
		item++;
		p = *end ? end + 1 : end;
	}
	if (item == 0)
		return hpshm__config_bad(err, HPSHM_EVALUE, "provider", hpshm__provider_accepted, "provider: empty value");
	if (n && (nauto || nx))
		return hpshm__config_bad(err, HPSHM_EVALUE, "provider", hpshm__provider_accepted,
				  "provider: \"%s\" mixes a list of providers with auto or -name; use one or the other", v);
	memcpy(c->providers, names, sizeof(names[0]) * n);
	c->nproviders = n;
	memcpy(c->excluded, excluded, sizeof(excluded[0]) * nx);
	c->nexcluded = nx;
	return 0;
}

static int format_provider(const struct hpshm_config *c, char *buf, size_t len)
{
	/* Built whole first, so a short or absent buffer is only ever written by snprintf. */
	char all[HPSHM__MAX_PROVIDERS * (HPSHM_NAME_MAX + 2) + 8];
	size_t used;

	if (c->nproviders == 0) {
		snprintf(all, sizeof(all), "auto");
		for (unsigned i = 0; i < c->nexcluded; i++) {
			used = strlen(all);
			snprintf(all + used, sizeof(all) - used, ",-%s", c->excluded[i]);
		}
	} else {
		all[0] = '\0';
		for (unsigned i = 0; i < c->nproviders; i++) {
			used = strlen(all);
			snprintf(all + used, sizeof(all) - used, "%s%s", i ? "," : "", c->providers[i]);
		}
	}
	return snprintf(buf, len, "%s", all);
}

const char *const hpshm__huge_words[] = { "off", "try", "on", NULL };

static int parse_huge_pages(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	/* PostgreSQL's hidden aliases, so its users' habits carry over. */
	static const char *const off_words[] = { "false", "no", "0", NULL };
	static const char *const on_words[] = { "true", "yes", "1", NULL };
	int i = config_word(v, hpshm__huge_words);

	if (i >= 0)
		c->huge_pages = (hpshm_huge_pages)i;
	else if (config_word(v, off_words) >= 0)
		c->huge_pages = HPSHM_HUGE_OFF;
	else if (config_word(v, on_words) >= 0)
		c->huge_pages = HPSHM_HUGE_ON;
	else
		return hpshm__config_bad(err, HPSHM_EVALUE, "huge_pages", "off, try, on",
				  "huge_pages: \"%s\" is not off, try or on", v);
	return 0;
}

static int format_huge_pages(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", hpshm__huge_words[c->huge_pages]);
}

static int parse_huge_page_size(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	static const char values[] = "default, largest, or a power-of-two size such as 2MB or 1GB";
	size_t size;
	int rc;

	if (strcmp(v, "default") == 0 || strcmp(v, "0") == 0) {
		c->huge_page_size = 0;
		return 0;
	}
	if (strcmp(v, "largest") == 0) {
		c->huge_page_size = HPSHM__LARGEST;
		return 0;
	}
	rc = hpshm_size_parse(v, &size);
	if (rc < 0)
		return hpshm__config_bad(err, rc == HPSHM_EOVERFLOW ? HPSHM_EOVERFLOW : HPSHM_EVALUE, "huge_page_size",
				  values, "huge_page_size: \"%s\" is not a size", v);
	if (size & (size - 1))
		return hpshm__config_bad(err, HPSHM_EVALUE, "huge_page_size", values,
				  "huge_page_size: %s is not a power of two, so no kernel offers it", v);
	c->huge_page_size = size;
	return 0;
}

static int format_huge_page_size(const struct hpshm_config *c, char *buf, size_t len)
{
	char s[32];

	if (c->huge_page_size == 0)
		return snprintf(buf, len, "default");
	if (c->huge_page_size == HPSHM__LARGEST)
		return snprintf(buf, len, "largest");
	return snprintf(buf, len, "%s", hpshm_size_format(c->huge_page_size, s, sizeof(s)));
}

const char *const hpshm__reattach_words[] = { "off", "exec", NULL };

static int parse_reattach(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	int i = config_word(v, hpshm__reattach_words);

	if (i < 0)
		return hpshm__config_bad(err, HPSHM_EVALUE, "reattach", "off, exec", "reattach: \"%s\" is not off or exec", v);
	c->reattach = i;
	return 0;
}

static int format_reattach(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", hpshm__reattach_words[c->reattach]);
}

static const char *const populate_words[] = { "auto", "on", "off", NULL };

static int parse_populate(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	int i = config_word(v, populate_words);

	if (i < 0)
		return hpshm__config_bad(err, HPSHM_EVALUE, "populate", "auto, on, off",
				  "populate: \"%s\" is not auto, on or off", v);
	c->populate = i;
	return 0;
}

static int format_populate(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", populate_words[c->populate]);
}

static int parse_hugetlbfs_path(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	if (v[0] != '\0' && v[0] != '/')
		return hpshm__config_bad(err, HPSHM_EVALUE, "hugetlbfs_path", "an absolute directory path",
				  "hugetlbfs_path: \"%s\" is not an absolute path", v);
	if (strlen(v) >= sizeof(c->hugetlbfs_path))
		return hpshm__config_bad(err, HPSHM_EVALUE, "hugetlbfs_path", "a path shorter than 256 bytes",
				  "hugetlbfs_path: path too long");
	hpshm__strlcpy(c->hugetlbfs_path, v, sizeof(c->hugetlbfs_path));
	return 0;
}

static int format_hugetlbfs_path(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", c->hugetlbfs_path);
}

size_t hpshm__name_utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4   ? 4
		   : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		   : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
						  : 0;
	unsigned lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
	unsigned hi = s[0] == 0xed ? 0x9f : s[0] == 0xf4 ? 0x8f : 0xbf;

	if (n == 0 || s[1] < lo || s[1] > hi || (s[0] == 0xc2 && s[1] <= 0xa0))
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static int parse_name(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	static const char values[] = "1 to 127 bytes of A-Z a-z 0-9 . _ - and UTF-8 characters above U+00A0, "
				     "not starting with '.'";
	size_t len = strlen(v), n;

	/* Names become file names, shm and section names and token fields: keep them to a safe
	 * set, which holds the letters of every script in UTF-8 (the API's text) but no control,
	 * blank, separator or quote of ASCII. */
	if (len >= sizeof(c->name) || v[0] == '.')
		return hpshm__config_bad(err, HPSHM_EVALUE, "name", values, "name: \"%s\" is not a valid segment name", v);
	for (size_t i = 0; i < len; i += n) {
		n = (unsigned char)v[i] >= 0x80 ? hpshm__name_utf8_len((const unsigned char *)v + i) : 1;
		if (n == 0 || (n == 1 && !isalnum((unsigned char)v[i]) && !strchr("._-", v[i])))
			return hpshm__config_bad(err, HPSHM_EVALUE, "name", values,
						 "name: \"%s\" has a character outside A-Z a-z 0-9 . _ - and UTF-8 "
						 "above U+00A0", v);
	}
	memcpy(c->name, v, len + 1);
	return 0;
}

static int format_name(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", c->name);
}

static int parse_mode(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	static const char values[] = "an octal permission up to 0777 with at least the owner's read and write "
				     "bits (0600), e.g. 0600, 0640, 0660";
	char *end;
	unsigned long m;

	errno = 0;
	m = strtoul(v, &end, 8);
	if (!isdigit((unsigned char)v[0]) || *end || errno || m > 0777)
		return hpshm__config_bad(err, HPSHM_EVALUE, "mode", values, "mode: \"%s\" is not an octal permission", v);
	/* The creator maps its own object read-write, and a re-attaching child opens it again:
	 * without the owner's read and write bits neither could.  0 once meant "the default"
	 * to the providers; say so instead of guessing. */
	if ((m & 0600) != 0600)
		return hpshm__config_bad(err, HPSHM_EVALUE, "mode", values,
				  "mode: \"%s\" does not let the owner read and write the segment", v);
	c->mode = (unsigned)m;
	return 0;
}

static int format_mode(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "0%03o", c->mode);
}

static int parse_base_address(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	static const char values[] = "auto, or a hexadecimal address aligned to 64KiB such as 0x7e0000000000";
	char *end;
	unsigned long long a;

	if (strcmp(v, "auto") == 0) {
		c->base_address = 0;
		return 0;
	}
	errno = 0;
	a = strtoull(v, &end, 16);
	if (strncmp(v, "0x", 2) != 0 || *end || errno || a == 0 || a > UINTPTR_MAX)
		return hpshm__config_bad(err, HPSHM_EVALUE, "base_address", values, "base_address: \"%s\" is not an address", v);
	/* 64 KiB: Windows' allocation granularity, and a multiple of every base page size. */
	if (a % 65536)
		return hpshm__config_bad(err, HPSHM_EVALUE, "base_address", values,
				  "base_address: %s is not aligned to 64KiB", v);
	c->base_address = (uintptr_t)a;
	return 0;
}

static int format_base_address(const struct hpshm_config *c, char *buf, size_t len)
{
	if (c->base_address == 0)
		return snprintf(buf, len, "auto");
	return snprintf(buf, len, "0x%llx", (unsigned long long)c->base_address);
}

static const char *const level_words[] = { "off", "error", "warning", "info", "debug", NULL };

static int parse_log_level(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	int i = config_word(v, level_words);

	if (i < 0)
		return hpshm__config_bad(err, HPSHM_EVALUE, "log_level", "off, error, warning, info, debug",
				  "log_level: \"%s\" is not a log level", v);
	c->log_level = (hpshm_log_level)i;
	return 0;
}

static int format_log_level(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", level_words[c->log_level]);
}

/*
 * Where a named object lives.  Only Windows has a choice: Local\ (this logon session) or
 * Global\ (every session, which a service needs to share with a user's program).  A POSIX
 * system has one namespace per machine (per IPC namespace in a container), which any session
 * and account reaches as mode allows, so both words are accepted there and change nothing:
 * one configuration file then serves a service's Windows and Linux builds alike.
 */
static const char *const namespace_words[] = { "local", "global", NULL };

static int parse_namespace(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	int i = config_word(v, namespace_words);

	if (i < 0)
		return hpshm__config_bad(err, HPSHM_EVALUE, "namespace", "local, global",
				  "namespace: \"%s\" is not local or global", v);
	c->name_space = i;
	return 0;
}

static int format_namespace(const struct hpshm_config *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", namespace_words[c->name_space]);
}

/* What populate guards against, in the terms of the system (a key's text reaches `hpshm probe`). */
#ifdef _WIN32
#define POPULATE_DESCRIPTION                                                                      \
	"fault every page in at create time; auto does it when the provider says a page could be " \
	"refused at first touch"
#else
#define POPULATE_DESCRIPTION                                                                      \
	"fault every page in at create time without risking SIGBUS; auto does it when a hugetlb " \
	"cgroup could refuse pages at fault time"
#endif

/* In enum hpshm__key order (core/internal.h). */
static const struct hpshm__keydef keys[HPSHM__NKEYS] = {
	[HPSHM__KEY_PROVIDER] = { "provider", "auto, or provider names separated by commas", "auto",
				  "which providers to try, in order; auto walks the built-in table",
				  parse_provider, format_provider },
	[HPSHM__KEY_HUGE_PAGES] = { "huge_pages", "off, try, on", "try",
				    "on fails rather than fall back; try falls back and records why; off uses plain pages",
				    parse_huge_pages, format_huge_pages },
	[HPSHM__KEY_HUGE_PAGE_SIZE] = { "huge_page_size", "default, largest, or a size such as 2MB or 1GB", "default",
					"huge page size; checked against the sizes the kernel offers",
					parse_huge_page_size, format_huge_page_size },
	[HPSHM__KEY_REATTACH] = { "reattach", "off, exec", "off",
				  "exec admits only providers a child started by exec can re-attach", parse_reattach,
				  format_reattach },
	[HPSHM__KEY_POPULATE] = { "populate", "auto, on, off", "auto",
				  POPULATE_DESCRIPTION,
				  parse_populate, format_populate },
	[HPSHM__KEY_HUGETLBFS_PATH] = { "hugetlbfs_path", "an absolute directory on hugetlbfs", "",
					"hugetlbfs directory to use instead of discovering mounts",
					parse_hugetlbfs_path, format_hugetlbfs_path },
	[HPSHM__KEY_NAME] = { "name", "1 to 127 bytes of A-Z a-z 0-9 . _ - and UTF-8 above U+00A0", "",
			      "names the segment where the provider supports names", parse_name, format_name },
	[HPSHM__KEY_MODE] = { "mode", "octal, e.g. 0600", "0600", "permissions of named objects", parse_mode,
			      format_mode },
	[HPSHM__KEY_BASE_ADDRESS] = { "base_address", "auto, or a hex address aligned to 64KiB", "auto",
				      "where reattachable segments are mapped", parse_base_address,
				      format_base_address },
	[HPSHM__KEY_LOG_LEVEL] = { "log_level", "off, error, warning, info, debug", "off",
				   "level of the built-in stderr log sink", parse_log_level, format_log_level },
	[HPSHM__KEY_NAMESPACE] = { "namespace", "local, global", "local",
				   "where named objects live on Windows: this session (Local\\) or every session "
				   "(Global\\, needs SeCreateGlobalPrivilege); no effect elsewhere",
				   parse_namespace, format_namespace },
	[HPSHM__KEY_POPULATE_THREADS] = { "populate_threads", "auto, or 1 to 64", "auto",
					  "threads that fault the segment in when it is populated; auto uses the "
					  "CPUs this process may run on, one per 64MiB at most",
					  hpshm__parse_populate_threads, hpshm__format_populate_threads },
	[HPSHM__KEY_NUMA] = { "numa", "default, local, interleave[:NODES], bind:NODES, preferred:NODE", "default",
			      "NUMA nodes the segment's pages come from, applied before populate; NODES as 0,2-3",
			      hpshm__parse_numa, hpshm__format_numa },
	[HPSHM__KEY_MAX_SIZE] = { "max_size", "off, or a size such as 1GiB", "off",
				  "the size a segment may grow to in place (hpshm_segment_resize()); its address "
				  "range is reserved in every process that maps it",
				  hpshm__parse_max_size, hpshm__format_max_size },
};

void hpshm__config_init(struct hpshm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (unsigned k = 0; k < HPSHM__NKEYS; k++) {
		int rc = keys[k].parse(cfg, keys[k].def, NULL);

		(void)rc; /* the defaults parse; tests/test_config.c checks each one */
	}
}

/*
 * The key named key, or NULL: the one lookup behind every source, hpshm_config_get() and
 * hpshm__config_key_parse().  A key another part of the library declares would be found here.
 */
static const struct hpshm__keydef *config_key_find(const char *key)
{
	for (unsigned k = 0; k < HPSHM__NKEYS; k++)
		if (strcmp(key, keys[k].name) == 0)
			return &keys[k];
	return NULL;
}

static int config_unknown(hpshm_error *err, const char *key, const char *where)
{
	char known[HPSHM_TEXT_MAX - 16] = "";

	for (unsigned k = 0; k < HPSHM__NKEYS; k++) {
		size_t used = strlen(known);

		snprintf(known + used, sizeof(known) - used, "%s%s", k ? ", " : "", keys[k].name);
	}
	hpshm__config_bad(err, HPSHM_ENOKEY, key, known, "%sunknown configuration key \"%s\"", where, key);
	if (err) {
		/* The hint names the keys that exist, not what "key" accepts. */
		snprintf(err->hint, sizeof(err->hint), "known keys: %s", known);
	}
	return HPSHM_ENOKEY;
}


int hpshm__config_key_parse(struct hpshm_config *cfg, const char *key, const char *value, const char *where,
			    hpshm_error *err)
{
	const struct hpshm__keydef *kd = config_key_find(key);
	int rc;

	if (!kd)
		return config_unknown(err, key, where);
	rc = kd->parse(cfg, value, err);
	if (rc < 0) {
		if (err && where[0]) {
			char msg[HPSHM_MESSAGE_MAX];

			snprintf(msg, sizeof(msg), "%s%s", where, err->message);
			hpshm__strlcpy(err->message, msg, sizeof(err->message));
		}
		return rc;
	}
	return (int)(kd - keys);
}

/* Set one key from a source (every source comes here); a lower source never overrides a
 * higher one. */
int hpshm__config_set_from(struct hpshm_config *cfg, const char *key, const char *value, enum hpshm__source src,
			   const char *where, hpshm_error *err)
{
	struct hpshm_config tmp = *cfg;
	int k;

	if (strchr(key, '.')) /* a provider's key (the core's have no dot): core/provider_keys.c */
		return hpshm__provider_key_set(cfg, key, value, src, where, err);
	k = hpshm__config_key_parse(&tmp, key, value, where, err);
	if (k < 0)
		return k;
	if (cfg->source[k] > src)
		return 0;
	tmp.source[k] = (unsigned char)src;
	*cfg = tmp;
	return 0;
}

int hpshm_config_get(const hpshm_config *cfg, const char *key, char *buf, size_t len)
{
	const struct hpshm__keydef *kd;

	if (!cfg || !key || (!buf && len))
		return HPSHM_EINVAL;
	kd = config_key_find(key);
	if (!kd) /* a provider's key, or none: core/provider_keys.c */
		return hpshm__provider_key_get(cfg, key, buf, len);
	return kd->format(cfg, buf, len);
}

const char *hpshm_config_key_name(unsigned index, const char **description, const char **values)
{
	if (index >= HPSHM__NKEYS)
		return NULL;
	if (description)
		*description = keys[index].description;
	if (values)
		*values = keys[index].values;
	return keys[index].name;
}

const char *hpshm__config_level_name(hpshm_log_level level)
{
	return level_words[level];
}
