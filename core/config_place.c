/* SPDX-License-Identifier: MIT */
/*
 * core/config_place.c -- the keys that say how a segment's pages are made: populate_threads
 * (how many threads fault them in) and numa (on which nodes they land).
 *
 * Their values are parsed here and kept in the config; core/populate.c applies them.  The
 * key table (core/config_keys.c) points at the parse and format functions below.
 *
 *   populate_threads = auto | N       N from 1 to HPSHM__POPULATE_THREADS_MAX
 *   numa = default | local | interleave | interleave:NODES | bind:NODES | preferred:NODE
 *
 * NODES is a list of node numbers and ranges as numactl writes them: "0", "0,2", "0-3,6".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int hpshm__parse_populate_threads(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	unsigned long n;
	char *end;

	if (strcmp(v, "auto") == 0) {
		c->populate_threads = 0;
		return 0;
	}
	errno = 0;
	n = (v[0] >= '0' && v[0] <= '9') ? strtoul(v, &end, 10) : 0;
	if (n == 0 || errno != 0 || *end != '\0' || n > HPSHM__POPULATE_THREADS_MAX)
		return hpshm__config_bad(err, HPSHM_EVALUE, "populate_threads", "auto, or 1 to 64",
					 "populate_threads: \"%s\" is not auto or a number of threads from 1 to %d", v,
					 HPSHM__POPULATE_THREADS_MAX);
	c->populate_threads = (unsigned)n;
	return 0;
}

int hpshm__format_populate_threads(const struct hpshm_config *c, char *buf, size_t len)
{
	if (c->populate_threads == 0)
		return snprintf(buf, len, "auto");
	return snprintf(buf, len, "%u", c->populate_threads);
}

static const char *const numa_words[] = { "default", "local", "interleave", "bind", "preferred", NULL };
#define NUMA_VALUES "default, local, interleave, interleave:NODES, bind:NODES, preferred:NODE (NODES as 0,2-3)"

/* One node number at *p, advancing *p past it: the number, or -1 when there is none or it is
 * beyond the last node a policy can name. */
static int numa_node_number(const char **p)
{
	unsigned long n;
	char *end;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	n = strtoul(*p, &end, 10);
	if (errno != 0 || n >= HPSHM__MAX_NODES)
		return -1;
	*p = end;
	return (int)n;
}

/* "0,2-3" into a bit set: 0, or -1 for anything else (an empty list among it). */
static int numa_node_list(const char *s, uint64_t *out)
{
	const char *p = s;
	uint64_t set = 0;

	for (;;) {
		int lo = numa_node_number(&p), hi = lo;

		if (lo < 0)
			return -1;
		if (*p == '-') {
			p++;
			hi = numa_node_number(&p);
			if (hi < lo)
				return -1;
		}
		for (int n = lo; n <= hi; n++)
			set |= (uint64_t)1 << n;
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -1;
	}
	*out = set;
	return 0;
}

int hpshm__parse_numa(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	const char *colon = strchr(v, ':');
	size_t wlen = colon ? (size_t)(colon - v) : strlen(v);
	struct hpshm__numa n = { HPSHM__NUMA_DEFAULT, 0 };
	int i;

	for (i = 0; numa_words[i] != NULL; i++)
		if (strlen(numa_words[i]) == wlen && strncmp(v, numa_words[i], wlen) == 0)
			break;
	if (numa_words[i] == NULL)
		return hpshm__config_bad(err, HPSHM_EVALUE, "numa", NUMA_VALUES,
					 "numa: \"%s\" is not default, local, interleave, bind or preferred", v);
	n.mode = i;
	if (colon == NULL) {
		if (n.mode == HPSHM__NUMA_BIND || n.mode == HPSHM__NUMA_PREFERRED)
			return hpshm__config_bad(err, HPSHM_EVALUE, "numa", NUMA_VALUES,
						 "numa: \"%s\" needs its node%s after a colon, e.g. %s:0", v,
						 n.mode == HPSHM__NUMA_BIND ? "s" : "", v);
	} else {
		if (n.mode == HPSHM__NUMA_DEFAULT || n.mode == HPSHM__NUMA_LOCAL)
			return hpshm__config_bad(err, HPSHM_EVALUE, "numa", NUMA_VALUES,
						 "numa: \"%.*s\" takes no nodes (\"%s\")", (int)wlen, v, v);
		if (numa_node_list(colon + 1, &n.nodes) < 0)
			return hpshm__config_bad(err, HPSHM_EVALUE, "numa", NUMA_VALUES,
						 "numa: \"%s\" is not a list of node numbers from 0 to %d such as 0,2-3",
						 colon + 1, HPSHM__MAX_NODES - 1);
		if (n.mode == HPSHM__NUMA_PREFERRED && (n.nodes & (n.nodes - 1)) != 0)
			return hpshm__config_bad(err, HPSHM_EVALUE, "numa", NUMA_VALUES,
						 "numa: preferred takes one node, not \"%s\"", colon + 1);
	}
	c->numa = n;
	return 0;
}

int hpshm__format_numa(const struct hpshm_config *c, char *buf, size_t len)
{
	uint64_t set = c->numa.nodes;
	char sep = ':';
	size_t used;
	int n;

	n = snprintf(buf, len, "%s", numa_words[c->numa.mode]);
	for (int lo = 0; lo < HPSHM__MAX_NODES && n >= 0 && (size_t)n < len; lo++) {
		int hi = lo;

		if (!(set >> lo & 1))
			continue;
		while (hi + 1 < HPSHM__MAX_NODES && (set >> (hi + 1) & 1))
			hi++;
		used = (size_t)n;
		n = hi > lo ? snprintf(buf + used, len - used, "%c%d-%d", sep, lo, hi)
			    : snprintf(buf + used, len - used, "%c%d", sep, lo);
		n = n < 0 ? n : (int)used + n;
		sep = ',';
		lo = hi;
	}
	return n;
}
