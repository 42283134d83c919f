/* SPDX-License-Identifier: MIT */
/*
 * core/resize.c -- segments that grow and shrink in place (max_size): the reservation, the
 * published size, the table of processes, and giving pages back only when no process may
 * touch them.  Layers: doc/architecture.md; the user's side is doc/resize.md.
 *
 * The object is made max_size long (plus its tail) and mapped whole in every process, at the
 * same address, without taking its pages (HPSHM_REQ_RESERVE); the port allocates the pages
 * of the size in use (fallocate: a short pool is an error code, never a SIGBUS) and the part
 * past it is inaccessible (PROT_NONE).  The header at the tail holds:
 *
 *   resize_word    the published size and a generation, in one 64-bit word: the owner
 *                  writes it after the pages are there (grow) or after its own tail is
 *                  closed (shrink); a kill between two steps leaves the last published size;
 *   resize_backed  how far from the start the object holds pages, the owner's account of
 *                  what a shrink may give back;
 *   the table      one slot per process that maps the segment and is not its owner: its
 *                  pid and start time, the word it applied last, the bytes it may touch.
 *
 * hpshm_segment_sync() compares the word with the one it applied (the whole cost when
 * nothing changed), opens or closes its tail, writes its slot, and reads the word again: the
 * owner writes the word before it reads the slots, a process its slot before it reads the
 * word again, both sequentially consistent, so the owner never misses a process that may
 * still touch what it gives back, and a process never leaves sync with a size the owner
 * already took back.  The owner gives back [max(published, every live slot's bytes),
 * backed): at once when it can, else at its next resize or sync.  A slot whose process is
 * gone (pid and start time), or no longer maps the segment's object (it exec'd:
 * /proc/<pid>/maps on Linux), is freed then.
 *
 * fork(): a child maps what its parent mapped but has no slot.  The prepare handler takes a
 * slot for the child in the parent (marked as a fork in progress, with the parent's pid and
 * the time), and the child's handler makes it its own before fork() returns there; a mark no
 * child took within RESIZE_FORK_NS (the fork failed, or the child was killed at once) is
 * freed like a dead process's slot.
 *
 * A slot changes hands by compare-and-swap on its pid, first to a claim (the taker's pid,
 * marked), then, once its start time and size are written, to its holder's pid: the others
 * judge a slot by its pid and start time together, and a claim tells them the start time is
 * not written yet.  A process judged dead loses its slot; one that cannot be judged (its
 * /proc unreadable) keeps it, and its pages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

/* A slot taken by a parent for the child it is forking: the parent's pid with this bit. */
#define RESIZE_FORKING    (UINT64_C(1) << 63)
/* The child's once it made it its own: its pid with this bit, until it exec's (resize_stale()). */
#define RESIZE_INHERITED  (UINT64_C(1) << 62)
/* A slot its taker (this pid) is still filling in: its start time may be a former holder's. */
#define RESIZE_CLAIMING   (UINT64_C(1) << 61)
#define RESIZE_PID(v)     ((long long)((v) & ~(RESIZE_FORKING | RESIZE_INHERITED | RESIZE_CLAIMING)))
/* How long a fork's mark may wait for its child. */
#define RESIZE_FORK_NS    (UINT64_C(5) * 1000000000u)

static struct hpshm_segment *resize_list; /* this process's resizable handles (segments lock) */

size_t hpshm__resize_area(size_t page_size)
{
	size_t area;

	return hpshm__round_up(HPSHM_RESIZE_AREA, page_size, &area) < 0 ? 0 : area;
}

int hpshm__resize_layout(size_t size, size_t max_size, size_t page_size, size_t *mapped, size_t *initial,
			 size_t *max, hpshm_error *err)
{
	size_t area = hpshm__resize_area(page_size);
	char s[32], m[32];

	if (size > max_size)
		return hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, "give a max_size at least the size, or none",
				       "max_size %s is smaller than the segment's size %s",
				       hpshm_size_format(max_size, m, sizeof(m)), hpshm_size_format(size, s, sizeof(s)));
	if (area == 0 || hpshm__round_up(size, page_size, initial) < 0 || hpshm__round_up(max_size, page_size, max) < 0 ||
	    *max > SIZE_MAX - area || (uint64_t)*max >> (HPSHM__RESIZE_SIZE_SHIFT + HPSHM__RESIZE_SIZE_BITS) != 0)
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, "ask for a smaller max_size",
				       "max_size %s is too large for this address space",
				       hpshm_size_format(max_size, m, sizeof(m)));
	*mapped = *max + area;
	return 0;
}

/* ---- the key ---- */

/* max_size: off (0), or the size a segment may grow to.  A max_size below the size asked
 * at create is that create's error: the key alone cannot know it. */
int hpshm__parse_max_size(struct hpshm_config *c, const char *v, hpshm_error *err)
{
	static const char values[] = "off, or a size such as 1GiB";
	size_t size;
	int rc;

	if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) {
		c->max_size = 0;
		return 0;
	}
	rc = hpshm_size_parse(v, &size);
	if (rc < 0)
		return hpshm__config_bad(err, rc == HPSHM_EOVERFLOW ? HPSHM_EOVERFLOW : HPSHM_EVALUE, "max_size", values,
					 "max_size: \"%s\" is not a size", v);
	c->max_size = size;
	return 0;
}

/* The size back as text that parses to the same bytes: the largest binary unit that divides it. */
int hpshm__format_max_size(const struct hpshm_config *c, char *buf, size_t len)
{
	static const char *const units[] = { "", "KiB", "MiB", "GiB", "TiB" };
	size_t v = c->max_size;
	unsigned u = 0;

	if (v == 0)
		return snprintf(buf, len, "off");
	while (u + 1 < sizeof(units) / sizeof(units[0]) && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	return snprintf(buf, len, "%zu%s", v, units[u]);
}

/* ---- create ---- */

static struct hpshm__port_handle resize_handle(const struct hpshm_mapping *m)
{
	return hpshm__port_handle_of(m->handle, m->flags & HPSHM_MAP_DESCRIPTOR);
}

int hpshm__resize_prepare(const struct hpshm_mapping *m, size_t initial, size_t max, size_t page_size,
			  hpshm_error *err)
{
	int rc;

	rc = hpshm__port_commit(resize_handle(m), 0, initial, page_size, err);
	if (rc == 0 && max > initial)
		rc = hpshm__port_protect((char *)m->addr + initial, max - initial, 0, err);
	return rc;
}

const char *hpshm__resize_providers(char *buf, size_t len)
{
	struct hpshm__provider_list all;
	unsigned n = 0, k = 0;
	size_t used = 0;

	hpshm__providers(&all);
	for (unsigned i = 0; i < all.n; i++)
		n += (all.p[i].ops->caps & HPSHM_CAP_RESIZE) != 0;
	buf[0] = '\0';
	if (n == 0) {
		snprintf(buf, len, "none on this system");
		return buf;
	}
	for (unsigned i = 0; i < all.n && used < len; i++) {
		if (!(all.p[i].ops->caps & HPSHM_CAP_RESIZE))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", k == 0 ? "" : k + 1 == n ? " or " : ", ",
					 all.p[i].name);
		k++;
	}
	return buf;
}

/* ---- the table of processes ---- */

/* May the process in slot s still touch what it mapped?  Frees the slot of one that cannot. */
static int slot_live(struct hpshm_resize_slot *s, uint64_t pid)
{
	uint64_t start = hpshm__port_load64(&s->start);
	int alive;

	if (pid & RESIZE_CLAIMING)
		alive = hpshm__port_process_alive(RESIZE_PID(pid), 0) != 0; /* no start to compare: -1 while it runs */
	else if (pid & RESIZE_FORKING)
		alive = hpshm__port_now_ns() - start < RESIZE_FORK_NS && hpshm__port_process_alive(RESIZE_PID(pid), 0) != 0;
	else
		alive = hpshm__port_process_alive(RESIZE_PID(pid), start) != 0; /* -1, cannot tell: live */
	if (!alive)
		(void)hpshm__port_cas64(&s->pid, &pid, 0);
	return alive;
}

/*
 * Make the slot s, held as claim, pid's: fill in its start, word and bytes, then its pid.
 * Claimed, not yet pid's, because a slot freed by a compare-and-swap keeps its former
 * holder's start time: another process judging the slot between the two stores would have
 * compared pid with that start, called it dead and freed the slot under it.  1, or 0 when
 * the slot was taken from the claim meanwhile (only if the claimer looked dead).
 */
static int slot_fill(struct hpshm_resize_slot *s, uint64_t claim, uint64_t pid, uint64_t start, size_t mapped,
		     uint64_t word)
{
	hpshm__port_store64(&s->start, start);
	hpshm__port_store64(&s->word, word);
	hpshm__port_store64(&s->mapped, mapped);
	return hpshm__port_cas64(&s->pid, &claim, pid);
}

/* Take a free slot for pid, and in a second pass (passes 2) a dead process's: its index, or
 * -1 when the table is full.  One pass reads no /proc: a fork() child's handler may call it. */
static int slot_take(struct hpshm__resize *rs, uint64_t pid, uint64_t start, size_t mapped, uint64_t word, int passes)
{
	uint64_t claim = RESIZE_CLAIMING | (uint64_t)hpshm__port_getpid();

	for (int pass = 0; pass < passes; pass++) {
		for (unsigned i = 0; i < rs->nslots; i++) {
			struct hpshm_resize_slot *s = &rs->slots[i];
			uint64_t seen = hpshm__port_load64(&s->pid);

			/* The second pass frees the slots of processes that are gone, and retries. */
			if (seen != 0 && (pass == 0 || slot_live(s, seen)))
				continue;
			seen = 0;
			if (!hpshm__port_cas64(&s->pid, &seen, claim))
				continue;
			if (slot_fill(s, claim, pid, start, mapped, word))
				return (int)i;
		}
	}
	return -1;
}

static void slot_free(struct hpshm__resize *rs)
{
	if (rs->slot < 0)
		return;
	hpshm__port_store64(&rs->slots[rs->slot].mapped, 0);
	hpshm__port_store64(&rs->slots[rs->slot].pid, 0);
	rs->slot = -1;
}

/* ---- the process's list, and fork() ---- */

static void list_add(struct hpshm_segment *seg)
{
	hpshm__port_segments_lock();
	seg->rs.next = resize_list;
	resize_list = seg;
	hpshm__port_segments_unlock();
}

static void list_remove(struct hpshm_segment *seg)
{
	hpshm__port_segments_lock();
	for (struct hpshm_segment **p = &resize_list; *p; p = &(*p)->rs.next)
		if (*p == seg) {
			*p = seg->rs.next;
			break;
		}
	hpshm__port_segments_unlock();
}

/*
 * The slots taken in the parent for the child of the fork in progress, in list order, and
 * their count: written and read only between prepare and the handlers that follow, under
 * the segments lock, which prepare takes and they release.
 */
#define RESIZE_FORK_MAX 64
static int fork_slots[RESIZE_FORK_MAX];
static unsigned fork_n;
static uint64_t fork_mark; /* what prepare wrote in them: RESIZE_FORKING and the parent's pid */

static void resize_prepare_fork(void)
{
	uint64_t start;
	long long self;
	unsigned i = 0;

	hpshm__port_segments_lock();
	self = hpshm__port_self(&start);
	(void)start;
	fork_mark = RESIZE_FORKING | (uint64_t)self;
	for (struct hpshm_segment *seg = resize_list; seg && i < RESIZE_FORK_MAX; seg = seg->rs.next, i++)
		fork_slots[i] = slot_take(&seg->rs, fork_mark, hpshm__port_now_ns(), seg->usable, seg->rs.seen, 2);
	fork_n = i;
}

static void resize_parent_fork(void)
{
	/* The marks are the child's now; one nobody takes expires (slot_live()). */
	fork_n = 0;
	hpshm__port_segments_unlock();
}

static void resize_child_fork(void)
{
	uint64_t start;
	long long self = hpshm__port_self(&start);
	unsigned i = 0;

	for (struct hpshm_segment *seg = resize_list; seg; seg = seg->rs.next, i++) {
		struct hpshm__resize *rs = &seg->rs;
		uint64_t mark = fork_mark, claim = RESIZE_CLAIMING | (uint64_t)self;
		struct hpshm_resize_slot *s;

		/* Past the marks prepare could take: no slot, so nothing of the parent's is written. */
		rs->slot = i < fork_n ? fork_slots[i] : -1;
		rs->slot_pid = self;
		if (rs->slot < 0)
			continue;
		/* The mark becomes this child's through a claim, as slot_take() fills a slot: the
		 * mark's start is a time, not this process's start. */
		s = &rs->slots[rs->slot];
		if (hpshm__port_cas64(&s->pid, &mark, claim) &&
		    slot_fill(s, claim, RESIZE_INHERITED | (uint64_t)self, start, seg->usable, rs->seen))
			continue;
		/* The mark expired before this child ran (RESIZE_FORK_NS): a slot of its own, if any is left. */
		rs->slot = slot_take(rs, RESIZE_INHERITED | (uint64_t)self, start, seg->usable, rs->seen, 1);
	}
	fork_n = 0;
	hpshm__port_segments_unlock();
}

/* ---- adopting a handle ---- */

/*
 * Free the slots this process inherited by fork() that no handle of it holds any more: it
 * exec'd since, and the program it runs now maps the segment afresh (an attach at the same
 * address, which /proc/<pid>/maps cannot tell from the inherited mapping).
 */
static void resize_stale(struct hpshm__resize *rs, long long self)
{
	uint64_t mine = RESIZE_INHERITED | (uint64_t)self;

	hpshm__port_segments_lock();
	for (unsigned i = 0; i < rs->nslots; i++) {
		uint64_t pid = hpshm__port_load64(&rs->slots[i].pid);
		int held = 0;

		if (pid != mine)
			continue;
		for (struct hpshm_segment *seg = resize_list; seg && !held; seg = seg->rs.next)
			held = seg->rs.slots == rs->slots && seg->rs.slot == (int)i;
		if (!held)
			(void)hpshm__port_cas64(&rs->slots[i].pid, &pid, 0);
	}
	hpshm__port_segments_unlock();
}

int hpshm__resize_adopt(struct hpshm_segment *seg, int owner, hpshm_error *err)
{
	struct hpshm__resize *rs = &seg->rs;
	struct hpshm_header *h = seg->header;
	size_t page = seg->report.requested_page_size, area = hpshm__resize_area(page), size;
	uint64_t word, start;
	long long self;
	int rc;

	memset(rs, 0, sizeof(*rs));
	rs->slot = -1;
	/* What a header may say is checked against the mapping, so a forged one reaches
	 * nothing outside it. */
	if (!h || !HPSHM__HEADER_HAS(h, 4, resize_spare) || h->resize_max == 0 || area == 0 ||
	    h->resize_max % page != 0 || h->resize_max + area != seg->map.size ||
	    h->resize_slots != HPSHM__RESIZE_SLOTS)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "the token or the object is not hpshm's as made",
				       "the segment's header does not describe a resizable segment of %zu bytes",
				       seg->map.size);
	word = hpshm__port_load64(&h->resize_word);
	size = HPSHM__RESIZE_WORD_SIZE(word);
	if (size == 0 || size > h->resize_max || size % page != 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
				       "the segment's header publishes a size of %zu bytes, outside its %llu", size,
				       (unsigned long long)h->resize_max);
	rs->max = (size_t)h->resize_max;
	rs->page = page;
	rs->slots = (struct hpshm_resize_slot *)((char *)seg->map.addr + seg->map.size - HPSHM_HEADER_REGION) -
		    HPSHM__RESIZE_SLOTS;
	rs->nslots = h->resize_slots;
	rs->seen = word;
	seg->usable = size;
	if (!owner) {
		/* The provider mapped the whole reservation: close what is past the published size
		 * (nothing at max_size: an empty mprotect() is ENOMEM under qemu-user). */
		rc = size < rs->max ? hpshm__port_protect((char *)seg->map.addr + size, rs->max - size, 0, err) : 0;
		if (rc < 0)
			return rc;
		self = hpshm__port_self(&start);
		resize_stale(rs, self);
		rs->slot = slot_take(rs, (uint64_t)self, start, size, word, 2);
		rs->slot_pid = self;
		if (rs->slot < 0)
			return hpshm_error_set(err, HPSHM_EFULL, 0, NULL, "detach processes that no longer use the segment",
					       "all %u slots of the resizable segment's table of processes are taken",
					       rs->nslots);
		/* The owner may have published since the word was read: catch up before returning. */
		rc = hpshm_segment_sync(seg, err);
		if (rc < 0) {
			slot_free(rs);
			return rc;
		}
	}
	if (hpshm__port_at_fork(resize_prepare_fork, resize_parent_fork, resize_child_fork) < 0)
		hpshm__log(&seg->cfg, HPSHM_LOG_WARNING,
			   "could not install the fork handlers: a child made by fork() must sync before the owner shrinks");
	list_add(seg);
	return 0;
}

void hpshm__resize_leave(struct hpshm_segment *seg)
{
	if (seg->rs.max == 0)
		return;
	list_remove(seg);
	/* A fork() child that never synced holds the slot its parent took for it. */
	if (seg->rs.slot >= 0 && seg->rs.slot_pid == hpshm__port_getpid())
		slot_free(&seg->rs);
	seg->rs.max = 0;
}

/* ---- resize and sync ---- */

/* Give back what no process may touch any more: [max(published, every live slot), backed). */
static int resize_release(struct hpshm_segment *seg, hpshm_error *err)
{
	struct hpshm__resize *rs = &seg->rs;
	struct hpshm_header *h = seg->header;
	/* Only the owner publishes, and this is the owner: the word read once is the word. */
	size_t published = HPSHM__RESIZE_WORD_SIZE(hpshm__port_load64(&h->resize_word)), target = published;
	uint64_t backed = hpshm__port_load64(&h->resize_backed);
	int rc;

	for (unsigned i = 0; i < rs->nslots; i++) {
		struct hpshm_resize_slot *s = &rs->slots[i];
		uint64_t pid = hpshm__port_load64(&s->pid), mapped;

		/* Whether its process lives (a /proc read) matters only for a slot that holds pages. */
		if (pid == 0)
			continue;
		mapped = hpshm__port_load64(&s->mapped);
		if (mapped <= target)
			continue;
		if (!slot_live(s, pid)) {
			hpshm__log(&seg->cfg, HPSHM_LOG_DEBUG, "%s segment at %p: process %lld is gone, its slot %u is freed",
				   seg->inst.name, seg->map.addr, RESIZE_PID(pid), i);
			continue;
		}
		/* A process that exec'd since (a fork() child of a server that starts another
		 * program) maps nothing of it any more: its slot is freed. */
		if (hpshm__port_process_maps(RESIZE_PID(pid), resize_handle(&seg->map)) == 0) {
			(void)hpshm__port_cas64(&s->pid, &pid, 0);
			hpshm__log(&seg->cfg, HPSHM_LOG_DEBUG,
				   "%s segment at %p: process %lld maps it no more, its slot %u is freed", seg->inst.name,
				   seg->map.addr, RESIZE_PID(pid), i);
			continue;
		}
		target = mapped > rs->max ? rs->max : (size_t)mapped;
	}
	rs->pending = target > published;
	if (target >= backed)
		return 0;
	rc = hpshm__port_decommit(resize_handle(&seg->map), target, (size_t)backed - target, err);
	if (rc < 0)
		return rc;
	hpshm__port_store64(&h->resize_backed, target);
	hpshm__log(&seg->cfg, HPSHM_LOG_DEBUG, "%s segment at %p gave back %llu bytes", seg->inst.name, seg->map.addr,
		   (unsigned long long)(backed - target));
	return 0;
}

/* The error for a segment that cannot resize: what it lacks, and the providers that can. */
static int resize_unable(const struct hpshm_segment *seg, hpshm_error *err)
{
	char names[128], hint[HPSHM_TEXT_MAX];

	hpshm__resize_providers(names, sizeof(names));
	if (!(hpshm__segment_caps(seg) & HPSHM_CAP_RESIZE)) {
		snprintf(hint, sizeof(hint), "create it with a provider that can (%s) and max_size", names);
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, hint,
				       "provider %s cannot resize a segment in place; the providers that can: %s",
				       seg->inst.name, names);
	}
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "create it with max_size=<the largest size it may need>",
			       "the segment was created without max_size, so it has no room to grow or shrink in place");
}

size_t hpshm_segment_max_size(const hpshm_segment *seg)
{
	return seg ? seg->rs.max : 0;
}

/* Publish size as the next generation. */
static void resize_publish(struct hpshm_segment *seg, size_t size)
{
	struct hpshm__resize *rs = &seg->rs;
	uint64_t word = HPSHM__RESIZE_WORD(HPSHM__RESIZE_WORD_GEN(rs->seen) + 1, size);

	/* Generation 0 is never published: after 2^24 resizes it wraps to 1. */
	if (HPSHM__RESIZE_WORD_GEN(word) == 0)
		word = HPSHM__RESIZE_WORD(1, size);
	hpshm__port_store64(&seg->header->resize_word, word);
	rs->seen = word;
	seg->usable = size;
	seg->report.usable_size = size;
}

/*
 * Take the pages of [from, to) of the object: for huge pages by faulting the range in from as
 * many threads as populate_threads gives it (the kernel clears each new page; fallocate()
 * would clear them all in this thread under the file's lock, and from each page's last base
 * page down, which the port's populate avoids: ports/linux/populate.c), for base pages by
 * fallocate().  Either fails cleanly when the pool or a cgroup is short, never with SIGBUS,
 * and then gives back what it took: HPSHM_ENOMEM with the fix, and nothing changed.
 */
static int resize_take(struct hpshm_segment *seg, size_t from, size_t to, hpshm_error *err)
{
	struct hpshm__populate_how how;
	unsigned methods;
	int rc;

	how.threads = hpshm__populate_threads(&seg->cfg, to - from, seg->rs.page);
	how.numa = seg->cfg.numa.mode != HPSHM__NUMA_DEFAULT ? &seg->cfg.numa : NULL;
	/* Base pages: a fault per 4 KiB costs more than clearing it, and the pages would be
	 * mapped here as well (and taken down again at a shrink): fallocate() is cheaper. */
	if (seg->rs.page <= hpshm__port_base_page_size())
		return hpshm__port_commit(resize_handle(&seg->map), from, to - from, seg->rs.page, err);
	rc = hpshm__port_populate((char *)seg->map.addr + from, to - from, seg->rs.page, HPSHM__PORT_NO_HANDLE, &how,
				  &methods, err);
	/* Then fallocate() over the range: it only looks up the pages the threads took, and
	 * takes any a populate that did nothing left out (qemu-user ignores the advice). */
	if (rc == 0)
		rc = hpshm__port_commit(resize_handle(&seg->map), from, to - from, seg->rs.page, err);
	if (rc < 0) {
		(void)hpshm__port_decommit(resize_handle(&seg->map), from, to - from, NULL);
		if (rc == HPSHM_EPOPULATE) {
			rc = HPSHM_ENOMEM;
			if (err)
				err->code = rc;
		}
	}
	return rc;
}

static int resize_grow(struct hpshm_segment *seg, size_t size, hpshm_error *err)
{
	struct hpshm__resize *rs = &seg->rs;
	struct hpshm_header *h = seg->header;
	size_t cur = seg->usable;
	uint64_t backed = hpshm__port_load64(&h->resize_backed);
	char *base = seg->map.addr;
	int rc;

	rc = hpshm__port_protect(base + cur, size - cur, 1, err);
	if (rc < 0)
		return rc;
	/* The NUMA policy before the pages exist: they are taken where it says. */
	if (seg->cfg.numa.mode != HPSHM__NUMA_DEFAULT)
		rc = hpshm__port_numa_apply(base + cur, size - cur, &seg->cfg.numa, err);
	if (rc == 0 && size > backed) {
		/* Accounted first: a kill after this leaves pages the header names, which the
		 * object's end (destroy, gc) gives back with the rest. */
		hpshm__port_store64(&h->resize_backed, size);
		rc = resize_take(seg, (size_t)backed, size, err);
		if (rc < 0)
			hpshm__port_store64(&h->resize_backed, backed);
	}
	if (rc == 0 && seg->cfg.populate == HPSHM__POPULATE_ON) {
		hpshm_report r = seg->report;

		/* The pages are there: this only maps them, as a populate at create would. */
		rc = hpshm__populate(&seg->cfg, base + cur, size - cur, rs->page, HPSHM__PORT_NO_HANDLE, 1, &r, err);
	}
	if (rc < 0) {
		(void)hpshm__port_protect(base + cur, size - cur, 0, NULL);
		return rc;
	}
	resize_publish(seg, size);
	return 0;
}

int hpshm_segment_resize(hpshm_segment *seg, size_t new_size, hpshm_error *err)
{
	char want[32], max[32];
	size_t size;
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!seg)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_resize: seg is NULL");
	if (seg->rs.max == 0)
		return resize_unable(seg, err);
	if (!hpshm__segment_owned(seg))
		return hpshm_error_set(err, HPSHM_EACCES, 0, NULL,
				       "resize in the process that created the segment; others call hpshm_segment_sync()",
				       "only the segment's owner (pid %lld) resizes it", (long long)seg->header->creator_pid);
	if (new_size == 0 || hpshm__round_up(new_size, seg->rs.page, &size) < 0 || size > seg->rs.max) {
		rc = hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, "create the segment with a larger max_size",
				     "new size %s is %s max_size %s", hpshm_size_format(new_size, want, sizeof(want)),
				     new_size == 0 ? "0, below" : "beyond", hpshm_size_format(seg->rs.max, max, sizeof(max)));
		if (err)
			hpshm__strlcpy(err->key, "max_size", sizeof(err->key));
		return rc;
	}
	/* Under the list's lock: a fork() in another thread takes its child's slot with this
	 * process's size, which must not change (nor its pages go) meanwhile. */
	hpshm__port_segments_lock();
	if (size > seg->usable) {
		rc = resize_grow(seg, size, err);
	} else if (size < seg->usable) {
		rc = hpshm__port_protect((char *)seg->map.addr + size, seg->usable - size, 0, err);
		if (rc == 0) {
			resize_publish(seg, size);
			rc = resize_release(seg, err);
		}
	} else {
		rc = seg->rs.pending ? resize_release(seg, err) : 0;
	}
	hpshm__port_segments_unlock();
	if (rc == 0)
		hpshm__log(&seg->cfg, HPSHM_LOG_INFO, "%s segment at %p resized to %s", seg->inst.name, seg->map.addr,
			   hpshm_size_format(size, want, sizeof(want)));
	if (rc < 0 && err)
		hpshm__strlcpy(err->provider, seg->inst.name, sizeof(err->provider));
	return rc;
}

/* Apply the published words from word on, until the header holds the one applied last. */
static int sync_apply(struct hpshm_segment *seg, uint64_t word, hpshm_error *err)
{
	struct hpshm__resize *rs = &seg->rs;
	size_t size;
	int rc;

	while (word != rs->seen) {
		size = HPSHM__RESIZE_WORD_SIZE(word);
		if (size == 0 || size > rs->max || size % rs->page != 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
					       "the segment's header publishes a size of %zu bytes, outside its %zu", size,
					       rs->max);
		if (size > seg->usable)
			rc = hpshm__port_protect((char *)seg->map.addr + seg->usable, size - seg->usable, 1, err);
		else if (size < seg->usable)
			rc = hpshm__port_protect((char *)seg->map.addr + size, seg->usable - size, 0, err);
		else
			rc = 0;
		if (rc < 0)
			return rc;
		seg->usable = size;
		seg->report.usable_size = size;
		rs->seen = word;
		if (rs->slot >= 0) {
			hpshm__port_store64(&rs->slots[rs->slot].mapped, size);
			hpshm__port_store64(&rs->slots[rs->slot].word, word);
		}
		/* Read again after the slot is written: a shrink published meanwhile is applied
		 * before this returns (the file's comment). */
		word = hpshm__port_load64(&seg->header->resize_word);
	}
	return 0;
}

int hpshm_segment_sync(hpshm_segment *seg, hpshm_error *err)
{
	struct hpshm__resize *rs;
	uint64_t word;
	int rc = 0;

	if (!seg || seg->rs.max == 0)
		return seg ? 0 : hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_sync: seg is NULL");
	rs = &seg->rs;
	word = hpshm__port_load64(&seg->header->resize_word);
	if (word == rs->seen && !rs->pending)
		return 0;
	/* Under the list's lock, as a resize: a fork() in another thread copies this size. */
	hpshm__port_segments_lock();
	rc = sync_apply(seg, word, err);
	if (rc == 0 && rs->pending && hpshm__segment_owned(seg))
		rc = resize_release(seg, err);
	hpshm__port_segments_unlock();
	return rc;
}
