/* SPDX-License-Identifier: MIT */
/*
 * core/provider_keys.c -- providers' own configuration keys: declared, checked, listed.
 *
 * A provider lists the keys only it reads in hpshm_provider.keys ("file.path": its name, a
 * dot, a word).  core/config.c knows its own table only and hands every key with a dot here:
 * this file finds the registered provider that declares it, checks the value by the declared
 * type, and keeps it in the configuration (struct hpshm__pkeys) with its source, under the
 * same precedence as the core's keys.  An unset key reads back as its declared default, so
 * rq->option() needs nothing new.  See doc/architecture.md for the layers.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

/* The first provider ABI with hpshm_provider.keys. */
#define PKEYS_SINCE_ABI 5

static const struct hpshm_provider_key *pkeys_of(const struct hpshm_provider *p)
{
	return p->abi_version >= PKEYS_SINCE_ABI ? p->keys : NULL;
}

/* The registered provider that declares key, and its declaration; NULL if none does. */
static const struct hpshm_provider_key *pkeys_find(const char *key, struct hpshm_instance *owner)
{
	struct hpshm__provider_list all;

	hpshm__providers(&all);
	for (unsigned i = 0; i < all.n; i++) {
		const struct hpshm_provider_key *k = pkeys_of(all.p[i].ops);

		for (; k && k->name; k++)
			if (strcmp(k->name, key) == 0) {
				if (owner)
					*owner = all.p[i];
				return k;
			}
	}
	return NULL;
}

static const char *pkeys_accepts(unsigned type)
{
	switch (type) {
	case HPSHM_KEY_TEXT: return "printable text shorter than 256 bytes";
	case HPSHM_KEY_PATH: return "an absolute path, or nothing";
	case HPSHM_KEY_SIZE: return "a size such as 4096, 64KiB or 2MB";
	case HPSHM_KEY_UINT: return "a decimal number from 0 to 4294967295";
	case HPSHM_KEY_BOOL: return "on or off";
	default: return NULL;
	}
}

static int pkeys_printable(const char *v)
{
	for (; *v; v++)
		if (iscntrl((unsigned char)*v))
			return 0;
	return 1;
}

/* A path this OS takes as absolute: "/..." everywhere, "C:\...", "\\server" on Windows. */
static int pkeys_absolute(const char *v)
{
#ifdef _WIN32
	if (v[0] == '\\' || (isalpha((unsigned char)v[0]) && v[1] == ':' && (v[2] == '\\' || v[2] == '/')))
		return 1;
#endif
	return v[0] == '/';
}

/* Is v a value of type?  Its text as the key reads it back in out (HPSHM_PATH_MAX bytes). */
static int pkeys_value_ok(unsigned type, const char *v, char *out)
{
	static const char *const on[] = { "on", "yes", "true", "1", NULL };
	static const char *const off[] = { "off", "no", "false", "0", NULL };
	unsigned long long n;
	size_t size;
	char *end;

	if (strlen(v) >= HPSHM_PATH_MAX || !pkeys_printable(v))
		return 0;
	switch (type) {
	case HPSHM_KEY_TEXT:
		break;
	case HPSHM_KEY_PATH:
		if (v[0] && !pkeys_absolute(v))
			return 0;
		break;
	case HPSHM_KEY_SIZE:
		if (hpshm_size_parse(v, &size) < 0)
			return 0;
		break;
	case HPSHM_KEY_UINT:
		errno = 0;
		n = strtoull(v, &end, 10);
		if (!isdigit((unsigned char)v[0]) || *end || errno || n > 4294967295ULL)
			return 0;
		break;
	case HPSHM_KEY_BOOL:
		for (int i = 0; on[i]; i++) {
			if (strcmp(v, on[i]) == 0)
				v = "on";
			else if (strcmp(v, off[i]) == 0)
				v = "off";
		}
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			return 0;
		break;
	default:
		return 0;
	}
	hpshm__strlcpy(out, v, HPSHM_PATH_MAX);
	return 1;
}

/* A declared name: the provider's name, '.', then one or more of a-z 0-9 _. */
static int pkeys_name_ok(const struct hpshm_provider *p, const char *name)
{
	size_t plen = strlen(p->name);

	if (strlen(name) >= HPSHM_NAME_MAX || strncmp(name, p->name, plen) != 0 || name[plen] != '.' ||
	    name[plen + 1] == '\0')
		return 0;
	for (const char *c = name + plen + 1; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '_')
			return 0;
	return 1;
}

int hpshm__provider_keys_check(const struct hpshm_provider *p, hpshm_error *err)
{
	char canon[HPSHM_PATH_MAX];

	for (const struct hpshm_provider_key *k = pkeys_of(p); k && k->name; k++) {
		struct hpshm_instance owner;
		const struct hpshm_provider_key *other;

		if (!pkeys_name_ok(p, k->name))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
					       "name each key after the provider, a dot and a word of a-z 0-9 _ "
					       "(\"file.path\"), shorter than 32 bytes",
					       "provider %s declares a key named \"%s\"", p->name, k->name);
		if (!pkeys_accepts(k->type) || !k->def || !k->help || !pkeys_value_ok(k->type, k->def, canon))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
					       "give each key an hpshm_key_type, a default valid for it and a help line",
					       "provider %s declares key %s with an unknown type, a bad default or no help",
					       p->name, k->name);
		other = pkeys_find(k->name, &owner);
		if (other && owner.ops != p)
			return hpshm_error_set(err, HPSHM_EEXIST, 0, NULL,
					       "register it under its own name: another implementation declares the key",
					       "provider %s declares key %s, which provider %s declares already", p->name,
					       k->name, owner.name);
	}
	return 0;
}

/* "file.path, file.keep": the keys of owner, for the hint of an undeclared one. */
static void pkeys_list(const struct hpshm_instance *owner, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const struct hpshm_provider_key *k = pkeys_of(owner->ops); k && k->name; k++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", used ? ", " : "", k->name);
	}
}

static int pkeys_unknown(const char *key, const char *where, hpshm_error *err)
{
	struct hpshm_instance owner;
	char prefix[HPSHM_NAME_MAX], known[HPSHM_TEXT_MAX - 64];
	size_t plen = strcspn(key, ".");

	snprintf(prefix, sizeof(prefix), "%.*s", (int)(plen < sizeof(prefix) ? plen : sizeof(prefix) - 1), key);
	if (hpshm__provider_find(prefix, &owner) == 0) {
		pkeys_list(&owner, known, sizeof(known));
		hpshm_error_set(err, HPSHM_ENOKEY, 0, NULL, NULL, "%sunknown configuration key \"%s\"", where, key);
		if (err)
			snprintf(err->hint, sizeof(err->hint), "provider %s declares %s", prefix,
				 known[0] ? known : "no keys");
	} else {
		hpshm_error_set(err, HPSHM_ENOKEY, 0, NULL,
				"register the provider whose key it is first (hpshm_provider_register(), or "
				"HPSHM_PROVIDER_MODULES for the hpshm tool); `hpshm providers` lists their keys",
				"%sunknown configuration key \"%s\": no registered provider declares it", where, key);
	}
	if (err)
		hpshm__strlcpy(err->key, key, sizeof(err->key));
	return HPSHM_ENOKEY;
}

static struct hpshm__pkey_value *pkeys_slot(struct hpshm__pkeys *pk, const char *key)
{
	for (unsigned i = 0; i < pk->n; i++)
		if (strcmp(pk->v[i].key, key) == 0)
			return &pk->v[i];
	return NULL;
}

int hpshm__provider_key_set(struct hpshm_config *c, const char *key, const char *value, unsigned src,
			    const char *where, hpshm_error *err)
{
	struct hpshm_instance owner;
	const struct hpshm_provider_key *k = pkeys_find(key, &owner);
	struct hpshm__pkey_value *slot;
	char canon[HPSHM_PATH_MAX];

	if (!k)
		return pkeys_unknown(key, where, err);
	if (!pkeys_value_ok(k->type, value, canon)) {
		hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, NULL, "%s%s: \"%s\" is not %s (a key of provider %s)",
				where, key, value, pkeys_accepts(k->type), owner.name);
		if (err) {
			snprintf(err->hint, sizeof(err->hint), "set %s to %s: %s", key, pkeys_accepts(k->type),
				 k->help);
			hpshm__strlcpy(err->key, key, sizeof(err->key));
			hpshm__strlcpy(err->provider, owner.name, sizeof(err->provider));
		}
		return HPSHM_EVALUE;
	}
	slot = pkeys_slot(&c->pkeys, key);
	if (!slot) {
		if (c->pkeys.n == HPSHM__PKEY_VALUES)
			return hpshm_error_set(err, HPSHM_EFULL, 0, NULL, "set fewer providers' keys in one configuration",
					       "%s%s: a configuration holds at most %d values of providers' keys", where,
					       key, HPSHM__PKEY_VALUES);
		slot = &c->pkeys.v[c->pkeys.n++];
		memset(slot, 0, sizeof(*slot));
		hpshm__strlcpy(slot->key, key, sizeof(slot->key));
	}
	/* A lower source never overrides a higher one, as for the core's keys. */
	if (slot->source > src)
		return 0;
	memcpy(slot->value, canon, sizeof(slot->value));
	slot->source = (unsigned char)src;
	return 0;
}

int hpshm__provider_key_get(const struct hpshm_config *c, const char *key, char *buf, size_t len)
{
	const struct hpshm_provider_key *k = pkeys_find(key, NULL);
	char canon[HPSHM_PATH_MAX];

	if (!k)
		return HPSHM_ENOKEY;
	for (unsigned i = 0; i < c->pkeys.n; i++)
		if (strcmp(c->pkeys.v[i].key, key) == 0)
			return snprintf(buf, len, "%s", c->pkeys.v[i].value);
	if (!pkeys_value_ok(k->type, k->def, canon))
		canon[0] = '\0'; /* registration checked the default: not reached */
	return snprintf(buf, len, "%s", canon);
}

int hpshm__provider_keys_env(struct hpshm_config *c, hpshm_error *err)
{
	struct hpshm__provider_list all;

	hpshm__providers(&all);
	for (unsigned i = 0; i < all.n; i++) {
		for (const struct hpshm_provider_key *k = pkeys_of(all.p[i].ops); k && k->name; k++) {
			char var[HPSHM_NAME_MAX + 8] = "HPSHM_", where[HPSHM_NAME_MAX + 16];
			const char *v;
			size_t j;
			int rc;

			for (j = 0; k->name[j] && j + 7 < sizeof(var); j++)
				var[6 + j] = k->name[j] == '.' ? '_' : (char)toupper((unsigned char)k->name[j]);
			var[6 + j] = '\0';
			/* The trusted getenv, as for the core's keys. */
			v = hpshm__port_getenv(var);
			if (!v)
				continue;
			snprintf(where, sizeof(where), "%s: ", var);
			rc = hpshm__provider_key_set(c, k->name, v, HPSHM__SRC_ENV, where, err);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

const struct hpshm_provider_key *hpshm_provider_key_at(const char *provider, unsigned index)
{
	struct hpshm_instance p;
	const struct hpshm_provider_key *k;

	if (!provider || hpshm__provider_find(provider, &p) < 0)
		return NULL;
	k = pkeys_of(p.ops);
	for (unsigned i = 0; k && k->name; i++, k++)
		if (i == index)
			return k;
	return NULL;
}
