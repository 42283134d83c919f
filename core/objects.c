/* SPDX-License-Identifier: MIT */
/*
 * core/objects.c -- the named objects hpshm left on the machine: `hpshm ls` lists them and
 * says which are alive, `hpshm gc` removes the dead ones that are provably hpshm's.  Layers:
 * doc/architecture.md.  The providers find and classify their objects (scan(), remove());
 * the core decides alive or dead and never removes what no header or mark proves is hpshm's.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

struct objects_walk {
	const struct hpshm_instance *provider; /* whose scan() is running */
	hpshm_object_fn              fn;       /* the caller's callback */
	void                        *user;     /* the caller's pointer */
	int                          count;    /* objects passed to fn */
	int                          stop;     /* fn asked to stop */
};

/*
 * Alive if the provider's mark says some process holds it (flock, shm_nattch) or if the
 * creator still runs: either alone could miss a holder (a creator that mapped and closed its
 * descriptor; children that outlived the creator), so dead means both say so.  Without a
 * header only the provider can tell (for SysV it asks after the creator too).
 */
static int objects_alive(const struct hpshm_found *f)
{
	struct hpshm_header h;

	if (f->alive != 0)
		return 1;
	if (f->has_header != HPSHM_FOUND_HEADER)
		return 0;
	hpshm__header_of(f, &h);
	return hpshm__port_process_alive(h.creator_pid, h.creator_start) != 0;
}

/* What hpshm_objects_list() says f is, with a note for people. */
static hpshm_object_state objects_state(const struct hpshm_found *f, char *note, size_t len)
{
	struct hpshm_header h;

	hpshm__header_of(f, &h);
	switch (f->has_header) {
	case HPSHM_FOUND_HEADER:
		if (objects_alive(f)) {
			snprintf(note, len, "a process holds it, or its creator (pid %lld) runs",
				 (long long)h.creator_pid);
			return HPSHM_OBJECT_ALIVE;
		}
		snprintf(note, len, "no process holds it and its creator (pid %lld) is gone",
			 (long long)h.creator_pid);
		return HPSHM_OBJECT_DEAD;
	case HPSHM_FOUND_MARKED:
		if (objects_alive(f)) {
			snprintf(note, len, "no header yet: being created, or held by a process");
			return HPSHM_OBJECT_ALIVE;
		}
		snprintf(note, len, "no header, but hpshm's creation mark: a create killed before writing it");
		return HPSHM_OBJECT_DEAD;
	case HPSHM_FOUND_BARE:
		if (objects_alive(f)) {
			snprintf(note, len, "no header, and a process holds it or its creator runs");
			return HPSHM_OBJECT_ALIVE;
		}
		if (f->mine == 1)
			snprintf(note, len, "no header or mark proves it is hpshm's: only a forced gc removes it");
		else
			snprintf(note, len, "no header or mark proves it is hpshm's, and another user owns it: only a "
				 "forced gc for all users removes it");
		return HPSHM_OBJECT_DEBRIS;
	case HPSHM_FOUND_FOREIGN_TYPE:
		snprintf(note, len, "not a regular file (a FIFO, socket, device or directory): not hpshm's");
		break;
	case HPSHM_FOUND_FOREIGN_LINK:
		snprintf(note, len, "a symbolic link, never followed: not hpshm's");
		break;
	case HPSHM_FOUND_FOREIGN_BACKING:
		snprintf(note, len, "memory or size hpshm never uses (not hugetlb, or an odd length): not hpshm's");
		break;
	default:
		snprintf(note, len, "its tail is not hpshm's header: not hpshm's");
		break;
	}
	return HPSHM_OBJECT_FOREIGN;
}

static int objects_one(void *user, const struct hpshm_found *f)
{
	struct objects_walk *w = user;
	int headed = f->has_header == HPSHM_FOUND_HEADER;
	struct hpshm_header h;
	hpshm_object o;

	/* Providers report what they find in hpshm's own name space (hpshm.* files, hpshm's SysV
	 * keys): hpshm's segments, debris without a header, and foreign objects, each classified
	 * (objects_state()), so ls shows everything there and gc removes only what is hpshm's. */
	hpshm__header_of(f, &h);
	memset(&o, 0, sizeof(o));
	hpshm__strlcpy(o.provider, w->provider->name, sizeof(o.provider));
	hpshm__strlcpy(o.id, f->id, sizeof(o.id));
	hpshm__strlcpy(o.name, headed && h.name[0] ? h.name : f->name, sizeof(o.name));
	/* Without a header, the object's own size: what gc would give back. */
	o.size = headed ? (size_t)h.usable_size : f->size;
	o.page_size = headed ? (size_t)h.page_size : 0;
	o.creator_pid = headed ? h.creator_pid : 0;
	o.created_unix = headed ? h.created_unix : 0;
	o.state = objects_state(f, o.note, sizeof(o.note));
	o.alive = o.state == HPSHM_OBJECT_FOREIGN ? -1 : o.state == HPSHM_OBJECT_ALIVE;
	o.mine = f->mine == 1;
	w->count++;
	if (w->fn(w->user, &o)) {
		w->stop = 1;
		return 1;
	}
	return 0;
}

int hpshm__objects_list(hpshm_object_fn fn, void *user, hpshm_error *err)
{
	struct objects_walk w;
	struct hpshm__provider_list all;

	if (!fn)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_objects_list: NULL callback");
	memset(&w, 0, sizeof(w));
	w.fn = fn;
	w.user = user;
	hpshm__providers(&all);
	for (unsigned i = 0; i < all.n && !w.stop; i++) {
		const struct hpshm_instance *p = &all.p[i];
		int rc;

		if (!p->ops->scan)
			continue;
		w.provider = p;
		rc = p->ops->scan(p, objects_one, &w);
		if (rc < 0)
			return hpshm_error_set(err, rc, 0, "scan", NULL, "provider %s could not list its segments",
					       p->name);
	}
	return w.count;
}

struct objects_find {
	const hpshm_object *want;  /* what the caller wants removed */
	struct hpshm_found  found; /* its current state */
	int                 hit;   /* found it */
};

static int objects_match(void *user, const struct hpshm_found *f)
{
	struct objects_find *q = user;

	if (strcmp(f->id, q->want->id) != 0)
		return 0;
	q->found = *f;
	q->hit = 1;
	return 1;
}

int hpshm_objects_remove(const hpshm_object *obj, unsigned flags, hpshm_error *err)
{
	struct hpshm_instance inst, *p = &inst;
	struct objects_find q;
	char note[128];
	int rc;

	if (!obj)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_objects_remove: NULL object");
	if (flags & ~(HPSHM_REMOVE_FORCE | HPSHM_REMOVE_ALL_USERS))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "pass 0, HPSHM_REMOVE_FORCE or HPSHM_REMOVE_FORCE | HPSHM_REMOVE_ALL_USERS",
				       "hpshm_objects_remove: unknown flags %#x", flags);
	if (hpshm__provider_find(obj->provider, &inst) < 0 || !p->ops->scan || !p->ops->remove)
		return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, NULL, "provider %s has no named segments",
				       obj->provider);
	/* Look again now: the object may have been recycled or re-attached since it was listed.
	 * What decides is this look, never the state the caller passes in. */
	memset(&q, 0, sizeof(q));
	q.want = obj;
	rc = p->ops->scan(p, objects_match, &q);
	if (rc < 0)
		return hpshm_error_set(err, rc, 0, "scan", NULL, "provider %s could not list its segments", p->name);
	if (!q.hit)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "list the segments again with `hpshm ls`",
				       "segment %s is gone", obj->id);
	switch (objects_state(&q.found, note, sizeof(note))) {
	case HPSHM_OBJECT_ALIVE:
		return hpshm_error_set(err, HPSHM_EEXIST, 0, NULL, "stop the processes using it first",
				       "segment %s is alive: %s", obj->id, note);
	case HPSHM_OBJECT_FOREIGN:
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "remove it yourself if you know nothing needs it",
				       "%s is never removed: %s", obj->id, note);
	case HPSHM_OBJECT_DEBRIS:
		if (!(flags & HPSHM_REMOVE_FORCE))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
					       "if you know it is hpshm's, remove it with `hpshm gc --force` "
					       "(HPSHM_REMOVE_FORCE)",
					       "%s has no hpshm header and nothing else proves it is hpshm's", obj->id);
		/* Root's forced gc must not take another user's objects on its word alone. */
		if (q.found.mine != 1 && !(flags & HPSHM_REMOVE_ALL_USERS))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
					       "if you know it is hpshm's, remove it with `hpshm gc --force --all-users` "
					       "(HPSHM_REMOVE_ALL_USERS), or as its owner",
					       "%s has no hpshm header and belongs to another user: a forced remove takes "
					       "only this user's debris", obj->id);
		break;
	default:
		break;
	}
	return p->ops->remove(p, &q.found, err);
}
