/* SPDX-License-Identifier: MIT */
/*
 * core/config_typed.c -- the typed setters of hpshm.h (hpshm_config_set_huge_pages() and the
 * others): each value made the text of its key and set through the key's one parser
 * (core/config_keys.c), so both forms accept and refuse alike.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

/*
 * The typed setters.  Each turns its value into the text the key's parser reads and sets that
 * as hpshm_config_set() would, so the typed and the text forms accept, refuse (same code, same
 * key, same accepted values) and rank (API precedence) a value alike: there is one parser
 * per key, never two.
 */
static int config_set_typed(hpshm_config *cfg, const char *fn, enum hpshm__key k, const char *text,
			    hpshm_error *err)
{
	if (!cfg)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "%s: NULL configuration", fn);
	/* As hpshm_config_set() with the key's text: the API's source, the key's one parser. */
	return hpshm__config_set_from(cfg, hpshm_config_key_name((unsigned)k, NULL, NULL), text, HPSHM__SRC_API, "", err);
}

/* words[v], or v as a number for a value outside the enum, which the key's parser refuses. */
static const char *config_enum_text(const char *const *words, int v, char *buf, size_t len)
{
	int n = 0;

	while (words[n])
		n++;
	if (v >= 0 && v < n)
		return words[v];
	snprintf(buf, len, "%d", v);
	return buf;
}

int hpshm_config_set_huge_pages(hpshm_config *cfg, hpshm_huge_pages policy, hpshm_error *err)
{
	char buf[16];

	return config_set_typed(cfg, "hpshm_config_set_huge_pages", HPSHM__KEY_HUGE_PAGES,
				config_enum_text(hpshm__huge_words, (int)policy, buf, sizeof(buf)), err);
}

int hpshm_config_set_reattach(hpshm_config *cfg, hpshm_reattach mode, hpshm_error *err)
{
	char buf[16];

	return config_set_typed(cfg, "hpshm_config_set_reattach", HPSHM__KEY_REATTACH,
				config_enum_text(hpshm__reattach_words, (int)mode, buf, sizeof(buf)), err);
}

int hpshm_config_set_huge_page_size(hpshm_config *cfg, size_t bytes, hpshm_error *err)
{
	char buf[32];

	if (bytes == HPSHM_PAGE_SIZE_DEFAULT)
		snprintf(buf, sizeof(buf), "default");
	else if (bytes == HPSHM_PAGE_SIZE_LARGEST)
		snprintf(buf, sizeof(buf), "largest");
	else
		snprintf(buf, sizeof(buf), "%zu", bytes);
	return config_set_typed(cfg, "hpshm_config_set_huge_page_size", HPSHM__KEY_HUGE_PAGE_SIZE, buf, err);
}

int hpshm_config_set_provider(hpshm_config *cfg, const char *const *names, size_t n, hpshm_error *err)
{
	/* Far more than the key takes (16 names of at most 31 bytes): a list that does not fit
	 * is refused, as its text would be. */
	char list[4096];
	size_t used = 0;

	if (!cfg || (n && !names))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_config_set_provider: NULL argument");
	list[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t len;

		if (!names[i])
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass n names, none of them NULL",
					       "hpshm_config_set_provider: names[%zu] is NULL", i);
		/* The text form lets a trailing comma pass; an empty element is a caller's slip. */
		if (!names[i][0])
			return hpshm__config_bad(err, HPSHM_EVALUE, "provider", hpshm__provider_accepted,
					  "provider: names[%zu] is empty", i);
		/* Joined with commas below: a comma inside a name would split it silently. */
		if (strchr(names[i], ','))
			return hpshm__config_bad(err, HPSHM_EVALUE, "provider", "one name, auto or -name per element",
					  "provider: \"%s\" holds a comma: pass each name as its own element",
					  names[i]);
		len = strlen(names[i]);
		if (used + len + 2 > sizeof(list))
			return hpshm__config_bad(err, HPSHM_EVALUE, "provider", "at most 16 names",
					  "provider: a list of %zu names is too long", n);
		if (i)
			list[used++] = ',';
		memcpy(list + used, names[i], len + 1);
		used += len;
	}
	return config_set_typed(cfg, "hpshm_config_set_provider", HPSHM__KEY_PROVIDER, list, err);
}


int hpshm_config_set_populate_threads(hpshm_config *cfg, unsigned threads, hpshm_error *err)
{
	char buf[16];

	if (threads == HPSHM_POPULATE_THREADS_AUTO)
		snprintf(buf, sizeof(buf), "auto");
	else
		snprintf(buf, sizeof(buf), "%u", threads);
	return config_set_typed(cfg, "hpshm_config_set_populate_threads", HPSHM__KEY_POPULATE_THREADS, buf, err);
}

int hpshm_config_set_max_size(hpshm_config *cfg, size_t bytes, hpshm_error *err)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%zu", bytes);
	return config_set_typed(cfg, "hpshm_config_set_max_size", HPSHM__KEY_MAX_SIZE, buf, err);
}
