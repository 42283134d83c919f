/* SPDX-License-Identifier: MIT */
/*
 * backends/sysv_named.c -- the SysV provider's name space: named segments' keys, the look at
 * a segment that says whether it is hpshm's and alive, and the lifecycle built on that
 * (create()'s interlock on a name's key, scan(), lookup(), remove()).  The mechanism, the
 * mark and re-attach are in backends/sysv_hugetlb.c; the layers in doc/architecture.md.
 * What the kernel lists of segments, and when their creators started, comes from the
 * Linux port (ports/linux/sysvipc.c).
 *
 * Named segments (rq->name set) are different on purpose: they have a key, and they are NOT
 * marked at creation, so `hpshm ls` and `hpshm gc` can find them after a crash
 * (/proc/sysvipc/shm) and the next create() of the name finds its predecessor.  The key is
 * hpshm's own range: 0x48000000 | (FNV-1a 32 of "hpshm:<name>" & 0x00ffffff), 'H' in the top
 * byte and never IPC_PRIVATE.  That is PostgreSQL's interlock (it keys on the data
 * directory's inode): shmget(key, IPC_CREAT | IPC_EXCL) failing with EEXIST leads to a look
 * at the old segment under a read-only attachment of our own (sysv_see()), and then:
 *   - not hpshm's (not hugetlb memory, a size neither whole pages nor marked, a tail that
 *     holds something other than hpshm's header): create() fails naming it, never removes it;
 *   - attached by anyone else (shm_nattch, less our look, above 0): in use, create() fails;
 *   - an hpshm header at its tail: a dead hpshm segment; it is marked for removal while we
 *     are still attached (so its id cannot be reused under us) and shmget() tried again;
 *   - the mark, no header, and its creator gone: debris of a killed create, removed the
 *     same way.  While the creator runs it may be writing the header right now: in use;
 *   - neither header nor mark: create() fails; `hpshm gc --force` removes it.
 * A foreign program whose key falls in 0x48xxxxxx (ftok() with proj_id 'H', say) can so
 * collide with a name's key and make that name unusable, but its segment is never removed.
 * Keys outside the range are never looked at, but for the unnamed debris below.  destroy()
 * marks and detaches a named segment just as it does an unnamed one.
 *
 * Crash safety: named segments stay after a crash.  scan() reads the kernel's list
 * (/proc/sysvipc/shm, through the port) and reports every segment whose key is in hpshm's
 * range, and every IPC_PRIVATE segment not marked for removal, unattached
 * and of a marked size (an unnamed create killed before its IPC_RMID); any other segment is
 * none of its business and never attached.  Each is classified (HPSHM_FOUND_*): one whose
 * size alone says it is not hpshm's (a 4 KiB segment) is foreign without being attached;
 * the others under a read-only attachment as above.  Alive while shm_nattch, less our own
 * look, is above 0, or, with no header, while its creator may run (the core adds the
 * header's creator for the others).  The creator is gone when kill(cpid, 0) says ESRCH, or
 * when the process that has its pid now started after the segment was created (shm_ctime):
 * a reused pid.  shm_lpid is no help: every look of `hpshm ls` sets it.  remove() looks
 * again under its own attachment: still in the name space, the same segment as listed (its
 * class, the header's nonce; ids are reused), nobody else attached and, without a header,
 * the creator gone; then it marks the segment, which goes with our shmdt().
 */
#include <errno.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"
#include "base/header.h"
#include "backends/sysv_named.h"

#define SYSV_CREATE_TRIES 3   /* rounds of "key taken, dead, marked, try again" */
#define SYSV_KEY_RANGE    0x48000000u /* hpshm's named keys: 'H' in the top byte */
#define SYSV_KEY_MASK     0xff000000u /* the bits that make the range */

/* The key of a named segment: in hpshm's range, the low 24 bits from FNV-1a 32 of "hpshm:<name>". */
/* The hint for a failed shmget(), per errno (ENOMEM: hpshm__reserve_failed() gives the pool hint). */
static const char *sysv_hint(int sys_errno)
{
	switch (sys_errno) {
	case EPERM:
		return "add the user to vm.hugetlb_shm_group or grant CAP_IPC_LOCK";
	case ENOSPC:
		return "kernel.shmall or kernel.shmmni exhausted: raise them, or remove stale segments (ipcs -m)";
	case EINVAL:
		return "size above kernel.shmmax or unsupported page size: raise kernel.shmmax or pick a size in "
		       "/sys/kernel/mm/hugepages";
	default:
		return NULL;
	}
}

/* shmget() of a new segment failed with saved: say why, per errno. */
int hpshm__sysv_shmget_error(const struct hpshm_request *rq, int saved, hpshm_error *err)
{
	char sz[32], psz[32];

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	switch (saved) {
	case EPERM:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "shmget", sysv_hint(saved),
				       "SysV huge pages need CAP_IPC_LOCK or vm.hugetlb_shm_group membership");
	case ENOMEM:
		return hpshm__reserve_failed(err, "shmget", saved, rq, "pool or hugetlb cgroup");
	case ENOSPC:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "shmget", sysv_hint(saved),
				       "no room for a %s SysV segment", sz);
	case EINVAL:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "shmget", sysv_hint(saved),
				       "the kernel refused a %s SysV segment of %s huge pages", sz, psz);
	default:
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmget", NULL, "shmget of %s with %s huge pages failed", sz,
				       psz);
	}
}

static key_t sysv_key(const char *name)
{
	const char *pre = "hpshm:";
	uint32_t h = hpshm__fnv1a32(HPSHM__FNV1A32_INIT, pre, strlen(pre));

	h = hpshm__fnv1a32(h, name, strlen(name));
	return (key_t)(SYSV_KEY_RANGE | (h & ~SYSV_KEY_MASK)); /* never IPC_PRIVATE (0) */
}

/* Is key in hpshm's range, so that a segment with it may be a named hpshm segment or its debris? */
static int sysv_key_ours(long long key)
{
	return ((uint32_t)key & SYSV_KEY_MASK) == SYSV_KEY_RANGE;
}

/* Does a segment of segsz bytes carry hpshm's mark on page_size pages: SYSV_MARK short of a whole page? */
static int sysv_marked(uint64_t segsz, size_t page_size)
{
	return page_size > SYSV_MARK && sysv_mapped(segsz, page_size) - segsz == SYSV_MARK;
}

/* The smallest huge page size the kernel offers, 0 if none: every hpshm segment is a multiple of it. */
static size_t sysv_min_huge(void)
{
	struct hpshm__pool pools[8];
	size_t min = 0;
	int n = hpshm__linux_pools(pools, 8);

	for (int i = 0; i < n && i < 8; i++)
		if (pools[i].page_size != 0 && (min == 0 || pools[i].page_size < min))
			min = pools[i].page_size;
	return min;
}

/*
 * Could a segment of segsz bytes be hpshm's, by its size alone?  hpshm's are a whole number
 * of huge pages, SYSV_MARK short since the mark came in; the page size proper is checked
 * once the segment is attached.
 */
static int sysv_size_plausible(uint64_t segsz, size_t min_huge)
{
	return min_huge != 0 && segsz != 0 && (segsz % min_huge == 0 || sysv_marked(segsz, min_huge));
}

/*
 * Has process pid, which did something to a segment at time since, ended?  1 if kill(pid, 0)
 * says ESRCH, or if the process with that pid now started after since (the pid was reused; a
 * second of slack for the rounding of both clocks).  0 if it may still run, or pid is 0 (a
 * pid namespace we cannot see), so that a segment is never taken for debris on a guess.
 */
static int sysv_pid_gone(pid_t pid, time_t since)
{
	time_t started;

	if (pid <= 0)
		return 0;
	if (hpshm__posix_sys.kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	started = hpshm__linux_process_started(pid);
	return started != 0 && since != 0 && started > since + 1;
}

/* What a look at a segment found (sysv_see()). */
struct sysv_seen {
	struct hpshm_header header;     /* the header at its tail, when cls is HPSHM_FOUND_HEADER */
	int                 cls;        /* HPSHM_FOUND_*: whose it is */
	size_t              page_size;  /* the page size backing it, 0 if not hugetlb */
	uint64_t            mapped;     /* the length shmat() maps */
	unsigned long       others;     /* attachments other than our look */
	pid_t               cpid;       /* its creator (shm_cpid) */
	time_t              ctime;      /* when it was created (shm_ctime) */
	unsigned long       uid;        /* its owner */
	unsigned long       cuid;       /* its creator's user */
	long long           key;        /* its key; IPC_PRIVATE once marked for removal */
	int                 dest;       /* 1 if marked for removal (SHM_DEST) */
	void               *at;         /* our read-only attachment: the caller shmdt()s it */
	const char         *failed;     /* the call that failed when sysv_see() returned -1 */
};

/*
 * Whose is the segment attached at s->at?  Memory that is not hugetlb, or a length that is
 * neither a whole number of its pages nor SYSV_MARK short of one, is not hpshm's; then the
 * tail says: hpshm's header; zeros (the mark makes those a killed create's, else debris);
 * or something else, foreign even with the mark (backends/sysv_hugetlb.c).  The tail is
 * faulted in with MADV_POPULATE_READ first, so a segment made with SHM_NORESERVE (never
 * hpshm's) on an empty pool is an error here, not a SIGBUS.
 */
static int sysv_class(struct sysv_seen *s, uint64_t segsz)
{
	struct hpshm__backing b;
	const char *tail;
	int marked;

	memset(&b, 0, sizeof(b));
	if (hpshm__port_verify_backing(s->at, (size_t)segsz, HPSHM__PORT_NO_HANDLE, &b) < 0 || !b.huge || b.page_size == 0)
		return HPSHM_FOUND_FOREIGN_BACKING;
	s->page_size = b.page_size;
	s->mapped = sysv_mapped(segsz, b.page_size);
	marked = sysv_marked(segsz, b.page_size);
	if (!marked && segsz % b.page_size != 0)
		return HPSHM_FOUND_FOREIGN_BACKING;
	tail = (const char *)s->at + s->mapped - HPSHM_HEADER_REGION;
	/* A tail we cannot read proves nothing, mark or not.  EINVAL: before Linux 5.14. */
	if (hpshm__linux_sys.madvise((void *)(uintptr_t)tail, HPSHM_HEADER_REGION, MADV_POPULATE_READ) < 0 &&
	    errno != EINVAL)
		return HPSHM_FOUND_FOREIGN_HEADER;
	/*
	 * The mark proves a create killed before its header only while the tail is as such a
	 * create leaves it: all zeros (fresh huge pages), or our header torn by the kill.  Data
	 * there that is not hpshm's header is foreign whatever the size says: anyone can ask
	 * shmget() for SYSV_MARK bytes short of a page.
	 */
	switch (hpshm__header_class(tail, HPSHM_HEADER_REGION, "sysv_hugetlb", &s->header)) {
	case HPSHM_FOUND_HEADER:
		return HPSHM_FOUND_HEADER;
	case HPSHM_FOUND_MARKED:
		return HPSHM_FOUND_MARKED;
	case HPSHM_FOUND_BARE:
		return marked ? HPSHM_FOUND_MARKED : HPSHM_FOUND_BARE;
	default:
		return HPSHM_FOUND_FOREIGN_HEADER;
	}
}

/*
 * Attach segment id read-only and see what it is.  0 with s filled and s->at attached, or
 * -1 with errno and s->failed naming the call: EINVAL or EIDRM (gone), EACCES (not ours to
 * look at: IPC_STAT and a read-only shmat() both need read permission), or shmat()'s error.
 * The attachment keeps the id from being reused while the caller decides, and is counted
 * out of s->others.
 */
static int sysv_see(int id, struct sysv_seen *s)
{
	struct shmid_ds ds;
	int saved;

	memset(s, 0, sizeof(*s));
	s->failed = "shmctl";
	if (hpshm__posix_sys.shmctl(id, IPC_STAT, &ds) < 0)
		return -1;
	s->at = hpshm__posix_sys.shmat(id, NULL, SHM_RDONLY);
	if (s->at == (void *)-1) {
		s->failed = "shmat";
		return -1;
	}
	s->cls = sysv_class(s, (uint64_t)ds.shm_segsz);
	/* A fresh count now that we are attached, less our own look. */
	if (hpshm__posix_sys.shmctl(id, IPC_STAT, &ds) < 0) {
		saved = errno; /* shmdt() below may clobber it */
		(void)hpshm__posix_sys.shmdt(s->at);
		errno = saved;
		return -1;
	}
	s->others = ds.shm_nattch > 0 ? (unsigned long)ds.shm_nattch - 1 : 0;
	s->cpid = ds.shm_cpid;
	s->ctime = ds.shm_ctime;
	s->uid = (unsigned long)ds.shm_perm.uid;
	s->cuid = (unsigned long)ds.shm_perm.cuid;
	s->key = (long long)ds.shm_perm.__key;
	s->dest = (ds.shm_perm.mode & SHM_DEST) != 0;
	return 0;
}

/*
 * Is the creator of a segment without a header gone?  Its creator (shm_cpid) must have ended.
 * The last process to attach (shm_lpid) says nothing more: every look of `hpshm ls` is such
 * an attach, and shm_nattch, checked besides, already says whether anyone is attached now.
 */
static int sysv_creator_gone(const struct sysv_seen *s)
{
	return sysv_pid_gone(s->cpid, s->ctime);
}

/* Is a segment in hpshm's name space: a named key, or an unnamed one's (IPC_PRIVATE, not yet marked for removal)? */
static int sysv_space_ours(long long key, int dest)
{
	return sysv_key_ours(key) || (key == IPC_PRIVATE && !dest);
}

/* Alive, for scan(): attached by someone else, or, without a header, its creator may still run. */
static int sysv_alive(const struct sysv_seen *s)
{
	if (s->cls < 0)
		return -1;
	if (s->others > 0)
		return 1;
	return s->cls != HPSHM_FOUND_HEADER && !sysv_creator_gone(s);
}

/*
 * Is a segment the calling user's own: its owner and its creator both?  An owner alone can be
 * given away (IPC_SET), so it says nothing of who made the segment.
 */
static int sysv_mine(const struct sysv_seen *s)
{
	unsigned long me = (unsigned long)geteuid();

	return s->uid == me && s->cuid == me;
}

/* Why a segment is not hpshm's, for messages. */
static const char *sysv_foreign_why(int cls)
{
	return cls == HPSHM_FOUND_FOREIGN_BACKING ? "not hugetlb memory of a size hpshm makes"
						   : "its tail holds something other than hpshm's header";
}

/* "uid 1000 (alice)" for messages about whose a segment is. */
static char *sysv_owner(unsigned long uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char pwbuf[1024];

	if (hpshm__posix_sys.getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(buf, len, "uid %lu (%s)", uid, res->pw_name);
	else
		snprintf(buf, len, "uid %lu", uid);
	return buf;
}

/*
 * The key of name is taken by segment old.  Remove it if it is a dead hpshm segment (its
 * header) or the debris of a killed create (its mark, and its creator gone), and return 0
 * (try again); otherwise HPSHM_EEXIST saying whose it is (top comment).
 */
static int sysv_recycle(const struct hpshm_request *rq, key_t key, hpshm_error *err)
{
	struct sysv_seen s;
	char owner[96], hint[HPSHM_TEXT_MAX];
	int old, saved;

	old = hpshm__posix_sys.shmget(key, 0, 0);
	if (old < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* removed meanwhile: try again */
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmget", "choose another name=",
				       "SysV key 0x%08x of name %s is held by a segment this user cannot open",
				       (unsigned)key, rq->name);
	}
	if (sysv_see(old, &s) < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM) /* Linux says EIDRM for "gone" */
			return 0;
		return hpshm_error_set(err, HPSHM_EEXIST, saved, s.failed, "choose another name=",
				       "SysV key 0x%08x of name %s is held by segment %d, which this user cannot read",
				       (unsigned)key, rq->name, old);
	}
	if (s.cls < 0) {
		(void)hpshm__posix_sys.shmdt(s.at);
		snprintf(hint, sizeof(hint), "choose another name=; remove that segment (ipcrm -m %d) only if you know it is stale",
			 old);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", hint,
				       "SysV key 0x%08x of name %s is held by segment %d, which is not hpshm's (%s)",
				       (unsigned)key, rq->name, old, sysv_foreign_why(s.cls));
	}
	if (s.others > 0) {
		(void)hpshm__posix_sys.shmdt(s.at);
		if (s.cls == HPSHM_FOUND_HEADER)
			return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget",
					       "choose another name= or stop the process using it",
					       "segment %s is in use (SysV id %d, %lu attached, creator pid %lld per its header)",
					       rq->name, old, s.others, (long long)s.header.creator_pid);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name= or stop the process using it",
				       "segment %s is in use (SysV id %d, %lu attached, creator pid %ld, no hpshm header)",
				       rq->name, old, s.others, (long)s.cpid);
	}
	if (s.cls == HPSHM_FOUND_BARE) {
		(void)hpshm__posix_sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget",
				       "if it is hpshm's, `hpshm gc --force` removes it; else choose another name=",
				       "SysV key 0x%08x of name %s is held by segment %d without hpshm's header or mark "
				       "(a create of an older hpshm killed early, or another program's)",
				       (unsigned)key, rq->name, old);
	}
	if (s.cls == HPSHM_FOUND_MARKED && !sysv_creator_gone(&s)) {
		(void)hpshm__posix_sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name= or stop that process",
				       "segment %s is being created by pid %ld (SysV id %d, no header yet)", rq->name,
				       (long)s.cpid, old);
	}
	/* Dead and ours.  Marked while we are attached: the id stays ours until our shmdt(). */
	if (hpshm__posix_sys.shmctl(old, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__posix_sys.shmdt(s.at);
		sysv_owner(s.uid, owner, sizeof(owner));
		snprintf(hint, sizeof(hint), "run `hpshm gc` as %s or as root, or choose another name=", owner);
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmctl", saved == EPERM ? hint : NULL,
				       "could not remove the dead segment %s (SysV id %d) of %s", rq->name, old, owner);
	}
	(void)hpshm__posix_sys.shmdt(s.at);
	return 0;
}

/* shmget() a named segment of segsz bytes with flags, recycling a dead predecessor.  The id, or an error. */
int hpshm__named_sysv_get(const struct hpshm_request *rq, size_t segsz, int flags, hpshm_error *err)
{
	key_t key = sysv_key(rq->name);
	int id, rc, tries;

	for (tries = 0; tries < SYSV_CREATE_TRIES; tries++) {
		id = hpshm__posix_sys.shmget(key, segsz, flags);
		if (id >= 0)
			return id;
		if (errno != EEXIST)
			return hpshm__sysv_shmget_error(rq, errno, err);
		rc = sysv_recycle(rq, key, err);
		if (rc < 0)
			return rc;
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name=",
			       "segment %s keeps being re-created by other processes (SysV key 0x%08x)", rq->name,
			       (unsigned)key);
}

/* What scan() carries along its walk of the kernel's list. */
struct sysv_walk {
	hpshm_found_fn fn;       /* the core's callback */
	void          *user;     /* and its argument */
	size_t         min_huge; /* the smallest huge page size: hpshm's segments are multiples */
};

/*
 * scan()'s look at one listed segment.  hpshm's name space is the keys of its range (named
 * segments) and, for the debris of an unnamed create, IPC_PRIVATE segments not marked for
 * removal, unattached and SYSV_MARK short of a whole number of huge pages; no other segment
 * is looked at.  One whose size alone says it is not hpshm's is reported foreign without
 * being attached.  fn's answer: non-zero stops the walk.
 */
static int sysv_scan_one(void *user, const struct hpshm__linux_shm *e)
{
	struct sysv_walk *w = user;
	struct sysv_seen s;
	struct hpshm_found f;

	if (!sysv_key_ours(e->key) &&
	    !(e->key == IPC_PRIVATE && !(e->perms & SHM_DEST) && e->nattch == 0 && sysv_marked(e->size, w->min_huge)))
		return 0;
	memset(&f, 0, sizeof(f));
	snprintf(f.id, sizeof(f.id), "shm=%d", e->id);
	f.size = (size_t)e->size;
	if (!sysv_size_plausible(e->size, w->min_huge)) {
		f.has_header = HPSHM_FOUND_FOREIGN_BACKING; /* e.g. a 4 KiB segment of another program */
		f.alive = -1;
	} else {
		if (sysv_see(e->id, &s) < 0)
			return 0; /* gone, or not ours to read */
		if (!sysv_space_ours(s.key, s.dest)) {
			(void)hpshm__posix_sys.shmdt(s.at); /* marked, or the id reused, since the line was read */
			return 0;
		}
		if (s.mapped)
			f.size = (size_t)s.mapped;
		f.has_header = s.cls;
		f.mine = sysv_mine(&s);
		hpshm__header_to(&f, &s.header);
		/* The core adds the header's creator; without one, ours is the only word. */
		f.alive = sysv_alive(&s);
		(void)hpshm__posix_sys.shmdt(s.at);
	}
	/* Without a header the name is unknown: the key is a hash of it. */
	snprintf(f.name, sizeof(f.name), "%s", f.has_header == HPSHM_FOUND_HEADER ? s.header.name : "");
	return w->fn(w->user, &f);
}

/* scan(): the segments of hpshm's name space in the kernel's list (the port reads it). */
int hpshm__named_sysv_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	struct sysv_walk w = { .fn = fn, .user = user, .min_huge = sysv_min_huge() };

	(void)self;
	return hpshm__linux_shm_each(sysv_scan_one, &w);
}

/*
 * The owner of SysV segment id, from the kernel's list (readable by anyone, where IPC_STAT
 * needs read permission on the segment): "uid N (name)" in buf, or -1 if it is not listed.
 */
static int sysv_owner_of(int id, char *buf, size_t len)
{
	struct hpshm__linux_shm e;

	if (hpshm__linux_shm_find(id, &e) < 0)
		return -1;
	sysv_owner(e.uid, buf, len);
	return 0;
}

/*
 * lookup(): the segment with the key of rq->name (sysv_key()), looked at under a read-only
 * attachment of our own as scan() looks (sysv_see()): its size, whose it is, its header.  A
 * key is a hash of the name, which another name may share: the core compares the header's
 * name with the one asked for.
 */
int hpshm__named_sysv_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
			     hpshm_error *err)
{
	key_t key;
	struct sysv_seen s;
	char owner[96], hint[HPSHM_TEXT_MAX];
	int id, saved;

	(void)self;
	if (rq->name[0] == '\0' || strlen(rq->name) > SYSV_NAME_MAX)
		return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL, NULL, "\"%.64s\" cannot name a SysV segment", rq->name);
	key = sysv_key(rq->name);
	id = hpshm__posix_sys.shmget(key, 0, 0);
	if (id < 0) {
		saved = errno;
		if (saved == ENOENT)
			return hpshm_error_set(err, HPSHM_ENOENT, saved, "shmget", NULL,
					       "no SysV segment with key 0x%08x (name %s)", (unsigned)key, rq->name);
		return hpshm_error_set(err, saved == EACCES ? HPSHM_EACCES : HPSHM_ESYS, saved, "shmget", NULL,
				       "could not look up the SysV key 0x%08x of name %s", (unsigned)key, rq->name);
	}
	if (sysv_see(id, &s) < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM)
			return hpshm_error_set(err, HPSHM_ENOENT, saved, s.failed, NULL,
					       "SysV segment %d (name %s) went away while it was looked at", id, rq->name);
		if (saved == EACCES || saved == EPERM) {
			if (sysv_owner_of(id, owner, sizeof(owner)) < 0)
				snprintf(owner, sizeof(owner), "another user");
			snprintf(hint, sizeof(hint),
				 "open it as %s, or have its creator give it a mode= that admits this user (mode=0660 "
				 "and a group both are in)", owner);
			return hpshm_error_set(err, HPSHM_EACCES, saved, s.failed, hint,
					       "segment %s (SysV id %d) belongs to %s, and this user may not open it",
					       rq->name, id, owner);
		}
		return hpshm_error_set(err, HPSHM_ESYS, saved, s.failed, NULL, "could not inspect SysV segment %d", id);
	}
	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "shm=%d", id);
	snprintf(f->name, sizeof(f->name), "%s", rq->name);
	f->size = (size_t)s.mapped;
	f->has_header = s.cls;
	if (s.cls == HPSHM_FOUND_HEADER)
		hpshm__header_to(f, &s.header);
	f->alive = sysv_alive(&s);
	(void)hpshm__posix_sys.shmdt(s.at);
	return 0;
}

/* The nonce of the header scan() listed for f. */
static uint64_t sysv_listed_nonce(const struct hpshm_found *f)
{
	struct hpshm_header h;

	hpshm__header_of(f, &h);
	return h.nonce;
}

int hpshm__named_sysv_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
{
	struct sysv_seen s;
	char owner[96], hint[HPSHM_TEXT_MAX];
	int id, saved;

	(void)self;
	if (hpshm__id_parse(f->id, "shm=", &id) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "\"%.64s\" is not shm=<id>", f->id);
	if (f->has_header < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "SysV segment %d is not hpshm's: never removed", id);
	/* Look again under our own attachment, which keeps the id from being reused meanwhile. */
	if (sysv_see(id, &s) < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM)
			return 0; /* someone removed it first */
		return hpshm_error_set(err, HPSHM_ESYS, saved, s.failed,
				       saved == EACCES ? "run hpshm gc as the segment's owner or root" : NULL,
				       "could not inspect SysV segment %d", id);
	}
	if (s.cls < 0) {
		(void)hpshm__posix_sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "SysV segment %d is not hpshm's (%s): never removed",
				       id, sysv_foreign_why(s.cls));
	}
	/* Same segment as scan() saw (ids are reused), still in hpshm's name space, and debris a
	 * forced remove may take because it is the caller's is still the caller's. */
	if (!sysv_space_ours(s.key, s.dest) || s.cls != f->has_header ||
	    (s.cls == HPSHM_FOUND_HEADER && s.header.nonce != sysv_listed_nonce(f)) ||
	    (s.cls == HPSHM_FOUND_BARE && f->mine == 1 && !sysv_mine(&s))) {
		(void)hpshm__posix_sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again",
				       "SysV segment %d is no longer the one listed", id);
	}
	if (s.others > 0) {
		(void)hpshm__posix_sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmctl", "stop the process using it first",
				       "SysV segment %d is alive: %lu attached", id, s.others);
	}
	if (s.cls != HPSHM_FOUND_HEADER && !sysv_creator_gone(&s)) {
		(void)hpshm__posix_sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, 0, NULL, "stop that process first, or let its create finish",
				       "SysV segment %d has no hpshm header yet and its creator pid %ld runs", id,
				       (long)s.cpid);
	}
	/* Marked while we are attached, so the id cannot be reused before; gone with our shmdt(). */
	if (hpshm__posix_sys.shmctl(id, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__posix_sys.shmdt(s.at);
		sysv_owner(s.uid, owner, sizeof(owner));
		snprintf(hint, sizeof(hint), "run hpshm gc as %s or root", owner);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", saved == EPERM ? hint : NULL,
				       "could not remove SysV segment %d of %s", id, owner);
	}
	(void)hpshm__posix_sys.shmdt(s.at);
	return 0;
}
