/* SPDX-License-Identifier: MIT */
/*
 * core/config.h -- what the two halves of the configuration share: the key table's checks
 * (core/config_keys.c) and the sources that feed it (core/config.c).  Internal; layers:
 * doc/architecture.md.
 */
#ifndef HPSHM_CORE_CONFIG_H
#define HPSHM_CORE_CONFIG_H

#include "core/internal.h"

/*
 * Fill err for a value or item a source refuses: code, the message, key (err->key; "" for
 * no key) and the hint "<key> accepts: <values>".  Returns code; nothing when err is NULL.
 */
int hpshm__config_bad(hpshm_error *err, int code, const char *key, const char *values, const char *fmt, ...)
	HPSHM__PRINTF(5, 6)
	;

/*
 * Look key up and parse value into cfg: the one place where a key is found and its value
 * checked, whatever the source.  cfg is a copy the caller commits only on success (a parser
 * may have changed it before it refused).  Returns the key's index (enum hpshm__key), or a
 * negative code with err filled: HPSHM_ENOKEY when no key has that name (the hint lists the
 * keys), else the parser's; where ("path:line: ", "HPSHM_KEY: " or "") opens the message.
 */
int hpshm__config_key_parse(struct hpshm_config *cfg, const char *key, const char *value, const char *where,
			    hpshm_error *err);

/* "off", "error", "warning", "info" or "debug": log_level's words, for the stderr sink. */
const char *hpshm__config_level_name(hpshm_log_level level);

#endif /* HPSHM_CORE_CONFIG_H */
