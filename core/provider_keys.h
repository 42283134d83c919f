/* SPDX-License-Identifier: MIT */
/*
 * core/provider_keys.h -- the values of providers' own configuration keys.
 *
 * A provider declares its keys at registration (hpshm_provider.keys); the configuration keeps
 * their values here, beside the core's, and core/config.c hands every key it does not know
 * to core/provider_keys.c.  See doc/architecture.md for the layers.
 */
#ifndef HPSHM_CORE_PROVIDER_KEYS_H
#define HPSHM_CORE_PROVIDER_KEYS_H

#include <stddef.h>

#include "hpshm.h"
#include "hpshm/provider.h"

/* Values of providers' keys one configuration holds (keys set away from their default). */
#define HPSHM__PKEY_VALUES 16

struct hpshm__pkey_value {
	char          key[HPSHM_NAME_MAX];    /* "file.path" */
	char          value[HPSHM_PATH_MAX];  /* as the key's type reads it back */
	unsigned char source;                 /* enum hpshm__source it was set from */
};

/* A configuration's values of providers' keys: copied with it, so fixed in size. */
struct hpshm__pkeys {
	struct hpshm__pkey_value v[HPSHM__PKEY_VALUES]; /* in the order first set */
	unsigned                 n;                     /* entries in v[] */
};

struct hpshm_config;

/* Registration: p's keys are well formed and clash with no other provider's (0, or an error). */
int hpshm__provider_keys_check(const struct hpshm_provider *p, hpshm_error *err);
/* config.c's hook for a key with a '.': set it from source src, after checking it as its
 * declaration says; HPSHM_ENOKEY (err filled) when no registered provider declares it. */
int hpshm__provider_key_set(struct hpshm_config *c, const char *key, const char *value, unsigned src,
			    const char *where, hpshm_error *err);
/* config.c's hook for hpshm_config_get(): the value or its default, snprintf-style, or HPSHM_ENOKEY. */
int hpshm__provider_key_get(const struct hpshm_config *c, const char *key, char *buf, size_t len);
/* config.c's hook for hpshm_config_load_env(): HPSHM_<KEY> ('.' as '_') of every declared key. */
int hpshm__provider_keys_env(struct hpshm_config *c, hpshm_error *err);

#endif /* HPSHM_CORE_PROVIDER_KEYS_H */
