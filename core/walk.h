/* SPDX-License-Identifier: MIT */
/*
 * core/walk.h -- the create walk's state, shared by core/segment.c (the walk and each
 * candidate's phases) and core/place.c (where a candidate's segment goes); its bookkeeping is
 * core/walk.c.  Internal to core/.
 */
#ifndef HPSHM_CORE_WALK_H
#define HPSHM_CORE_WALK_H

#include "core/internal.h"

/* The walk over candidates: what the caller is told at the end. */
struct hpshm__walk {
	const struct hpshm_config *cfg;
	hpshm_report              *r;
	char                       hint[HPSHM_TEXT_MAX]; /* the first actionable hint seen */
	char                       key[HPSHM_NAME_MAX];  /* the config key at fault, if any */
	int                        last_code;            /* the last candidate's error */
	int                        bad_address;          /* base_address lies outside the user range */
	int                        stop;                 /* a configuration error every candidate would meet */
	int                        hint_of_setup;        /* hint is a probe's fix for the machine's setup */
};

/* Record a candidate's outcome in the report (result 0: it made the segment), and log it. */
void hpshm__walk_attempt(struct hpshm__walk *w, const struct hpshm_instance *p, size_t page_size, int result,
			 int sys_errno, const char *call, const char *reason);
/* Keep hint as the walk's hint if it has none yet. */
void hpshm__walk_keep_hint(struct hpshm__walk *w, const char *hint);
/* A create that failed on the request itself (its name in use, a size no address space or
 * commit limit can hold): its hint wins over a setup hint seen before. */
void hpshm__walk_request_hint(struct hpshm__walk *w, int rc, const char *hint);

/*
 * core/place.c: place the segment at an address a token can name (with its header's
 * companion) and have p create it there, retrying a range the core chose when something else
 * took it first.  *placed says whether it was placed (a placement failure has its attempt
 * recorded); the return is create()'s code, with perr filled on failure.
 */
int hpshm__walk_map(struct hpshm__walk *w, const struct hpshm_instance *p, size_t size, struct hpshm_request *rq,
		    enum hpshm__header_place *place, struct hpshm__companion *companion, struct hpshm_header *held,
		    char *tag, struct hpshm_mapping *m, hpshm_error *perr, int *placed);
/* A fixed address the kernel refused (sys_errno) where the segment would end past the top of
 * the user range: 1 with why filled, else 0. */
int hpshm__walk_address_outside(const struct hpshm_request *rq, int sys_errno, char *why, size_t len);

#endif /* HPSHM_CORE_WALK_H */
