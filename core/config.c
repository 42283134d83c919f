/* SPDX-License-Identifier: MIT */
/*
 * core/config.c -- where configuration values come from, and which source wins.  Layers:
 * doc/architecture.md; the keys themselves, their parsers and the typed setters are
 * core/config_keys.c.
 *
 * Values come from the API (hpshm_config_set, hpshm_config_parse), a file, or the
 * environment (HPSHM_<KEY>).  Each key remembers the source it was last set from, and a
 * lower source never overrides a higher one: default < file < environment < API.  So an
 * application can load the file and the environment in any order and still have its own
 * explicit choices win.  Every multi-key operation works on a copy and commits only when all
 * items are good, so a bad line leaves the configuration as it was.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

int hpshm_config_new(hpshm_config **out)
{
	struct hpshm_config *cfg;

	if (!out)
		return HPSHM_EINVAL;
	cfg = malloc(sizeof(*cfg));
	if (!cfg)
		return HPSHM_ENOMEM;
	hpshm__config_init(cfg);
	*out = cfg;
	return 0;
}

void hpshm_config_free(hpshm_config *cfg)
{
	free(cfg);
}

int hpshm_config_set(hpshm_config *cfg, const char *key, const char *value, hpshm_error *err)
{
	if (!cfg || !key || !value)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_config_set: NULL argument");
	return hpshm__config_set_from(cfg, key, value, HPSHM__SRC_API, "", err);
}

/* Narrow [*p, *end) to what lies between its leading and trailing blanks. */
static void config_blanks(const char **p, const char **end)
{
	while (*p < *end && isspace((unsigned char)**p))
		(*p)++;
	while (*end > *p && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

int hpshm_config_parse(hpshm_config *cfg, const char *kv, hpshm_error *err)
{
	struct hpshm_config tmp;
	char key[HPSHM_NAME_MAX] = "";
	char value[HPSHM_PATH_MAX * 2];
	const char *p;
	int rc;

	if (!cfg || !kv)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_config_parse: NULL argument");
	tmp = *cfg;
	value[0] = '\0';
	/*
	 * Items are split at commas.  An item without '=' continues the previous value, which
	 * is how a provider list rides inside the same string: "provider=a,b,huge_pages=on".
	 * Blanks around keys, values and list items go, as every INI-style reader drops them
	 * ("huge_pages = on, provider = a, b"); blanks inside a value stay.
	 */
	for (p = kv; *p;) {
		const char *next = p + strcspn(p, ","), *end = next;
		const char *eq = memchr(p, '=', (size_t)(end - p));
		size_t len = (size_t)(end - p);

		if (eq) {
			size_t klen = (size_t)(eq - p);

			if (key[0]) {
				rc = hpshm__config_set_from(&tmp, key, value, HPSHM__SRC_API, "", err);
				if (rc < 0)
					return rc;
			}
			while (klen && isspace((unsigned char)p[klen - 1]))
				klen--;
			while (klen && isspace((unsigned char)*p)) {
				p++;
				klen--;
			}
			if (klen == 0 || klen >= sizeof(key))
				return hpshm__config_bad(err, HPSHM_ENOKEY, "", "key=value,key=value",
						  "configuration item \"%.*s\" has no valid key", (int)len, p);
			memcpy(key, p, klen);
			key[klen] = '\0';
			p = eq + 1;
			config_blanks(&p, &end);
			len = (size_t)(end - p);
			if (len >= sizeof(value))
				return hpshm__config_bad(err, HPSHM_EVALUE, key, "a shorter value", "%s: value too long", key);
			memcpy(value, p, len);
			value[len] = '\0';
		} else if (len || *next) {
			size_t used = strlen(value);

			config_blanks(&p, &end);
			len = (size_t)(end - p);
			if (!key[0])
				return hpshm__config_bad(err, HPSHM_ENOKEY, "", "key=value,key=value",
						  "configuration item \"%.*s\" is not key=value", (int)len, p);
			if (used + 1 + len >= sizeof(value))
				return hpshm__config_bad(err, HPSHM_EVALUE, key, "a shorter value", "%s: value too long", key);
			value[used] = ',';
			memcpy(value + used + 1, p, len);
			value[used + 1 + len] = '\0';
		}
		p = *next ? next + 1 : next;
	}
	if (key[0]) {
		rc = hpshm__config_set_from(&tmp, key, value, HPSHM__SRC_API, "", err);
		if (rc < 0)
			return rc;
	}
	*cfg = tmp;
	return 0;
}

static char *config_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Longest line of a config file, its newline included. */
#define CONFIG_LINE_MAX 1023
#define CONFIG_LINE_LONG (-2)

/*
 * The next line of f into buf (CONFIG_LINE_MAX + 1 bytes), newline kept: its length, -1 at
 * the end of the file, or CONFIG_LINE_LONG as soon as the line outgrows the buffer, so a file
 * without newlines (a device, a binary) costs one buffer and is not read to its end.  Bytes
 * are counted as read, not as a C string would see them: *nul says the line holds a NUL
 * byte, which fgets() would have taken for the line's end, ignoring the rest unsaid.
 */
static int config_getline(FILE *f, char *buf, int *nul)
{
	int c, n = 0;

	*nul = 0;
	while ((c = getc(f)) != EOF) {
		if (n == CONFIG_LINE_MAX)
			return CONFIG_LINE_LONG;
		buf[n++] = (char)c;
		if (c == '\0')
			*nul = 1;
		if (c == '\n')
			break;
	}
	if (n == 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int hpshm_config_load_file(hpshm_config *cfg, const char *path, hpshm_error *err)
{
	struct hpshm_config tmp;
	char line[CONFIG_LINE_MAX + 1];
	unsigned lineno = 0;
	int n, nul, rc = 0;
	FILE *f;

	if (!cfg || !path)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_config_load_file: NULL argument");
	f = hpshm__port_fopen(path, "r");
	if (!f) {
		int saved = errno;

		return hpshm_error_set(err, HPSHM_EIO, saved, "fopen", "check the path and its permissions",
				       "cannot open config file %s: %s", path, strerror(saved));
	}
	tmp = *cfg;
	while (rc == 0 && (n = config_getline(f, line, &nul)) != -1) {
		char where[HPSHM_PATH_MAX + 16];
		char *s, *eq;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u: ", path, lineno);
		if (n == CONFIG_LINE_LONG) {
			rc = hpshm__config_bad(err, HPSHM_EVALUE, "", "lines shorter than 1024 bytes", "%sline too long", where);
			break;
		}
		if (nul) {
			rc = hpshm__config_bad(err, HPSHM_EVALUE, "", "text: key = value lines",
					"%sholds a NUL byte: a config file is text", where);
			break;
		}
		s = strchr(line, '#');
		if (s)
			*s = '\0';
		s = config_trim(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			rc = hpshm__config_bad(err, HPSHM_EVALUE, "", "key = value", "%sexpected key = value, got \"%s\"", where,
					s);
			break;
		}
		*eq = '\0';
		rc = hpshm__config_set_from(&tmp, config_trim(s), config_trim(eq + 1), HPSHM__SRC_FILE, where, err);
	}
	if (rc == 0 && ferror(f)) {
		int saved = errno;

		rc = hpshm_error_set(err, HPSHM_EIO, saved, "read", "check the file and the device it is on",
				     "cannot read config file %s after line %u: %s", path, lineno, strerror(saved));
	}
	fclose(f);
	if (rc < 0)
		return rc;
	*cfg = tmp;
	return 0;
}

int hpshm_config_load_env(hpshm_config *cfg, hpshm_error *err)
{
	struct hpshm_config tmp;
	int rc;

	if (!cfg)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_config_load_env: NULL argument");
	tmp = *cfg;
	for (unsigned k = 0; k < HPSHM__NKEYS; k++) {
		const char *name = hpshm_config_key_name(k, NULL, NULL);
		char var[HPSHM_NAME_MAX + 8] = "HPSHM_";
		char where[HPSHM_NAME_MAX + 16];
		const char *v;
		size_t i;

		for (i = 0; name[i] && i + 7 < sizeof(var); i++)
			var[6 + i] = (char)toupper((unsigned char)name[i]);
		var[6 + i] = '\0';
		/* The trusted getenv: a setuid program must not take memory policy from its caller. */
		v = hpshm__port_getenv(var);
		if (!v)
			continue;
		snprintf(where, sizeof(where), "%s: ", var);
		rc = hpshm__config_set_from(&tmp, name, v, HPSHM__SRC_ENV, where, err);
		if (rc < 0)
			return rc;
	}
	rc = hpshm__provider_keys_env(&tmp, err); /* providers' keys: core/provider_keys.c */
	if (rc < 0)
		return rc;
	*cfg = tmp;
	return 0;
}


void hpshm_config_set_log(hpshm_config *cfg, hpshm_log_fn fn, void *user, hpshm_log_level level)
{
	if (!cfg)
		return;
	cfg->log_fn = fn;
	cfg->log_user = user;
	cfg->log_fn_level = level;
}

void hpshm__log(const struct hpshm_config *cfg, hpshm_log_level level, const char *fmt, ...)
{
	char line[HPSHM_MESSAGE_MAX];
	va_list ap;

	if (!cfg || level == HPSHM_LOG_OFF)
		return;
	if (cfg->log_fn ? level > cfg->log_fn_level : level > cfg->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (cfg->log_fn)
		cfg->log_fn(cfg->log_user, level, line);
	else
		fprintf(stderr, "hpshm: %s: %s\n", hpshm__config_level_name(level), line);
}

int hpshm__request_option(const struct hpshm_request *rq, const char *key, char *buf, size_t len)
{
	return hpshm_config_get(rq->config, key, buf, len);
}
