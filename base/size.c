/* SPDX-License-Identifier: MIT */
/*
 * base/size.c -- sizes as people write them, lists of page sizes, and overflow-checked rounding.
 *
 * Units are powers of 1024 whatever the spelling ("2MB", "2M", "2MiB" are all 2097152),
 * because that is how every kernel and every operator names huge page sizes; a decimal
 * reading of "2MB" would name a page size that exists nowhere.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

int hpshm_size_parse(const char *text, size_t *out)
{
	static const char units[] = "kmgtpe";
	const char *p = text;
	unsigned long long value = 0;
	unsigned shift = 0;

	if (!text || !out)
		return HPSHM_EINVAL;
	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return HPSHM_EVALUE;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (value > (~0ULL - d) / 10)
			return HPSHM_EOVERFLOW;
		value = value * 10 + d;
	}
	while (*p == ' ')
		p++;
	if (*p) {
		const char *u = strchr(units, tolower((unsigned char)*p));

		if (u) {
			shift = 10u * (unsigned)(u - units + 1);
			p++;
			if (*p == 'i' || *p == 'I') {
				p++;
				if (*p != 'b' && *p != 'B')
					return HPSHM_EVALUE;
			}
			if (*p == 'b' || *p == 'B')
				p++;
		} else if (*p == 'b' || *p == 'B') {
			p++;
		} else {
			return HPSHM_EVALUE;
		}
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return HPSHM_EVALUE;
	if (shift && value > (~0ULL >> shift))
		return HPSHM_EOVERFLOW;
	value <<= shift;
	if (value > SIZE_MAX)
		return HPSHM_EOVERFLOW;
	*out = (size_t)value;
	return 0;
}

char *hpshm_size_format(size_t size, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;
	size_t v = size;

	/* Exact units only: a huge page size printed as "1.5MiB" would be a lie. */
	while (v && v % 1024 == 0 && u < 6) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%zu%s", v, units[u]);
	return buf;
}

int hpshm__round_up(size_t size, size_t align, size_t *out)
{
	if (align == 0 || (align & (align - 1)))
		return HPSHM_EINVAL;
	if (size > SIZE_MAX - (align - 1))
		return HPSHM_EOVERFLOW;
	*out = (size + align - 1) & ~(align - 1);
	return 0;
}

char *hpshm__size_list(const size_t *sizes, int n, char *buf, size_t len)
{
	size_t used = 0;

	if (buf == NULL || len == 0)
		return buf;
	buf[0] = '\0';
	if (n <= 0) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (int i = 0; i < n; i++) {
		char one[32];
		int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 hpshm_size_format(sizes[i], one, sizeof(one)));

		if (w < 0 || (size_t)w >= len - used) {
			buf[used] = '\0'; /* drop the size that did not fit rather than cut it */
			break;
		}
		used += (size_t)w;
	}
	return buf;
}
