/*
 * backends/sysv_hugetlb.c -- System V shared memory with SHM_HUGETLB.
 *
 * Mechanism: shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | SHM_HUGETLB | size bits | mode),
 * then shmat().  The segment is a file on the kernel's internal hugetlbfs mount; the shmid
 * names it to any process allowed to attach it.
 *
 * Operator setup:
 *   - pages in the pool of the requested size (vm.nr_hugepages or the sysfs file);
 *   - the privilege: CAP_IPC_LOCK, or membership in the single group vm.hugetlb_shm_group.
 *     Kernels before 5.x fell back to RLIMIT_MEMLOCK with a "deprecated" warning; 6.x
 *     returns EPERM even with a generous limit, so we do not count on that fallback;
 *   - kernel.shmmax at least the segment size, and room in kernel.shmall / kernel.shmmni.
 *     A container usually has its own IPC namespace with its own limits.
 *
 * Kernel quirks, and what we do about them:
 *   - The segment is marked for removal (IPC_RMID) right after the first shmat().  A SysV
 *     segment otherwise outlives a crash and keeps its huge pages until someone removes it
 *     by hand; marked, it disappears with its last detach, crash or not.  Linux (unlike
 *     other Unixes, see shmctl(2)) still lets a process shmat() a marked segment by its id
 *     for as long as the segment has attachments: the kernel only refuses once the segment
 *     is actually destroyed.  The re-attach work relies on exactly that: the creator stays
 *     attached while its exec'd children attach by id.  IPC_PRIVATE plus marking also means
 *     no key can collide with another program's.
 *   - shmat() is never given SHM_REMAP: with an address, a clash must fail (EINVAL), not
 *     silently replace another mapping.  An address not aligned to the huge page is refused
 *     up front, so an EINVAL from shmat() at an aligned address means a clash, reported like
 *     any backend's (hpshm__map_taken() in ports/posix/segment.c names the holder).
 *   - SHM_NORESERVE is never passed: the reservation at shmget() time is what keeps a
 *     later fault from raising SIGBUS.
 *   - shm_segsz reports the requested size while the kernel rounds the file up to the huge
 *     page; the core asks for a multiple of the page size, so the two agree.
 *
 * Named segments (rq->name set) are different on purpose: they have a key, and they are NOT
 * marked at creation, so `hpshm ls` and `hpshm gc` can find them after a crash
 * (/proc/sysvipc/shm) and the next create() of the name finds its predecessor.  The key is
 * hpshm's own range: 0x48000000 | (FNV-1a 32 of "hpshm:<name>" & 0x00ffffff), 'H' in the top
 * byte and never IPC_PRIVATE, so a segment can be known for hpshm's by its key alone, even
 * one whose creator was killed before the core wrote the header at its tail.  That is
 * PostgreSQL's interlock (it keys on the data directory's inode): shmget(key, IPC_CREAT |
 * IPC_EXCL) failing with EEXIST leads to a look at the old segment under a read-only
 * attachment of our own (sysv_see()), and then:
 *   - attached by anyone else (shm_nattch, less our look, above 0): in use, create() fails;
 *   - an hpshm header at its tail: a dead hpshm segment; it is marked for removal while we
 *     are still attached (so its id cannot be reused under us) and shmget() tried again;
 *   - no header, and its creator (shm_cpid) is no running process (kill(cpid, 0) says
 *     ESRCH): debris of a create killed between shmget() and the header, removed the same
 *     way.  While the creator runs it may be writing the header right now: in use.
 * A foreign program whose key falls in 0x48xxxxxx (ftok() with proj_id 'H', say) can
 * collide with a name's key.  hpshm still never removes a segment someone has attached, nor
 * one whose creator runs, and calls one with a valid header "ours" only by the header's
 * magic; but an unattached foreign segment of a dead creator, without an hpshm header, in
 * the range, is taken for debris.  Keys outside the range are never looked at.  destroy()
 * marks and detaches a named segment just as it does an unnamed one.
 *
 * Capabilities: HUGE, REATTACH (by shmid), NAMED (the shmid is a name other processes use).
 *
 * Re-attach: identify() gives "shm=<id>"; a child started by exec checks the id with
 * IPC_STAT (its size), calls shmat(id, addr, 0) and compares the address.  An unnamed
 * segment can be attached only while at least one process (normally the creator) keeps it
 * attached, which is also what PostgreSQL's EXEC_BACKEND path assumes.
 *
 * Crash safety: unnamed segments vanish with their last detach.  Named ones stay; scan()
 * reads /proc/sysvipc/shm (Linux) and reports every segment whose key is in hpshm's range,
 * with or without a header: alive while shm_nattch, less our own look, is above 0, or, with
 * no header, while its creator runs (the core adds the header's creator for the others).
 * remove() looks again under its own read-only attachment: the key still in the range, the
 * same segment as listed (header nonce, or still no header; ids are reused), nobody else
 * attached and, without a header, the creator gone; then it marks the segment, which goes
 * with our shmdt().  A creator's pid can be reused by an unrelated process: such debris is
 * kept (taken for alive) until that process ends, never removed too early.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/hugetlb_common.h"
#include "base/base.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "posix/segment.h"

#define SYSV_DEFAULT_MODE 0600
#define SYSV_NAME_MAX     127 /* what the header's name field holds */
#define SYSV_CREATE_TRIES 3   /* rounds of "key taken, dead, marked, try again" */
#define SYSV_KEY_RANGE    0x48000000u /* hpshm's named keys: 'H' in the top byte */
#define SYSV_KEY_MASK     0xff000000u /* the bits that make the range */

static int sysv_probe(const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hpshm__sysv_limits lim;
	char sz[32], max[32];
	long gid;
	int rc;

	out->sys_errno = 0;
	out->reason[0] = '\0';
	rc = hpshm__hugetlb_probe(rq, out);
	if (rc < 0)
		return rc;

	if (!hpshm__has_cap_ipc_lock()) {
		gid = hpshm__hugetlb_shm_group();
		if (gid < 0) {
			snprintf(out->reason, sizeof(out->reason),
				 "cannot read vm.hugetlb_shm_group and no CAP_IPC_LOCK: grant CAP_IPC_LOCK");
			return HPSHM_EUNAVAILABLE;
		}
		if (!hpshm__in_group(gid)) {
			out->sys_errno = EPERM;
			snprintf(out->reason, sizeof(out->reason),
				 "not in vm.hugetlb_shm_group (gid %ld) and no CAP_IPC_LOCK: add the user to "
				 "that group or grant CAP_IPC_LOCK", gid);
			return HPSHM_EUNAVAILABLE;
		}
	}

	/* Limits the OS does not report read as 0: nothing to check then. */
	memset(&lim, 0, sizeof(lim));
	if (hpshm__sysv_limits(&lim) == 0) {
		if (lim.shmmax != 0 && rq->size > lim.shmmax) {
			out->sys_errno = EINVAL;
			snprintf(out->reason, sizeof(out->reason), "kernel.shmmax is %s, below %s: raise kernel.shmmax",
				 hpshm_size_format((size_t)lim.shmmax, max, sizeof(max)),
				 hpshm_size_format(rq->size, sz, sizeof(sz)));
			return HPSHM_EUNAVAILABLE;
		}
		if (lim.shmall != 0 && rq->size / hpshm__base_page_size() > lim.shmall) {
			out->sys_errno = ENOSPC;
			snprintf(out->reason, sizeof(out->reason),
				 "kernel.shmall allows %llu pages in all, below %s: raise kernel.shmall",
				 (unsigned long long)lim.shmall, hpshm_size_format(rq->size, sz, sizeof(sz)));
			return HPSHM_EUNAVAILABLE;
		}
	}
	return 0;
}

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
static int sysv_shmget_error(const struct hpshm_request *rq, int saved, hpshm_error *err)
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

/* The key of a named segment: in hpshm's range, the low 24 bits from FNV-1a 32 of "hpshm:<name>". */
static key_t sysv_key(const char *name)
{
	const char *pre = "hpshm:";
	uint32_t h = hpshm__fnv1a32(HPSHM__FNV1A32_INIT, pre, strlen(pre));

	h = hpshm__fnv1a32(h, name, strlen(name));
	return (key_t)(SYSV_KEY_RANGE | (h & ~SYSV_KEY_MASK)); /* never IPC_PRIVATE (0) */
}

/* Is key in hpshm's range, so that a segment with it is a named hpshm segment or its debris? */
static int sysv_key_ours(long long key)
{
	return ((uint32_t)key & SYSV_KEY_MASK) == SYSV_KEY_RANGE;
}

/*
 * Has the process that created a segment (shm_cpid) ended?  1 if kill(cpid, 0) says ESRCH;
 * 0 if it runs (EPERM too: it exists), or cpid is 0 (created in a pid namespace we cannot
 * see), so that a segment is never taken for debris on a guess.
 */
static int sysv_creator_gone(pid_t cpid)
{
	if (cpid <= 0)
		return 0;
	if (hpshm__sys.kill(cpid, 0) == 0)
		return 0;
	return errno == ESRCH;
}

/* What a look at a segment in hpshm's key range found (sysv_see()). */
struct sysv_seen {
	struct hpshm_header header;     /* the header at its tail, when has_header */
	int                 has_header; /* 1 if the tail holds hpshm's header */
	unsigned long       others;     /* attachments other than our look */
	pid_t               cpid;       /* its creator (shm_cpid) */
	long long           key;        /* its key; IPC_PRIVATE once marked for removal */
	void               *at;         /* our read-only attachment: the caller shmdt()s it */
};

/*
 * Attach segment id read-only and see what it is.  0 with s filled and s->at attached, or
 * -1 with errno: EINVAL or EIDRM (gone), EACCES (not ours to look at), or shmat()'s error.
 * The attachment keeps the id from being reused while the caller decides, and is counted
 * out of s->others.
 */
static int sysv_see(int id, struct sysv_seen *s)
{
	struct shmid_ds ds;
	int saved;

	memset(s, 0, sizeof(*s));
	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0)
		return -1;
	s->at = hpshm__sys.shmat(id, NULL, SHM_RDONLY);
	if (s->at == (void *)-1)
		return -1;
	/* Only within shm_segsz: the mapping may be longer (rounded to the page), never shorter. */
	if (ds.shm_segsz >= HPSHM_HEADER_REGION) {
		memcpy(&s->header, (const char *)s->at + ds.shm_segsz - HPSHM_HEADER_REGION, sizeof(s->header));
		s->has_header = hpshm__header_accept(&s->header);
	}
	if (!s->has_header)
		memset(&s->header, 0, sizeof(s->header));
	/* A fresh count now that we are attached, less our own look. */
	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0) {
		saved = errno; /* shmdt() below may clobber it */
		(void)hpshm__sys.shmdt(s->at);
		errno = saved;
		return -1;
	}
	s->others = ds.shm_nattch > 0 ? (unsigned long)ds.shm_nattch - 1 : 0;
	s->cpid = ds.shm_cpid;
	s->key = (long long)ds.shm_perm.__key;
	return 0;
}

/* Debris of a create killed before the header: no header, nobody attached, creator gone. */
static int sysv_debris(const struct sysv_seen *s)
{
	return !s->has_header && s->others == 0 && sysv_creator_gone(s->cpid);
}

/*
 * The key of name is taken by segment old.  Remove it if it is a dead hpshm segment or the
 * debris of a killed create, and return 0 (try again); otherwise HPSHM_EEXIST saying whose
 * it is (top comment).
 */
static int sysv_recycle(const struct hpshm_request *rq, key_t key, hpshm_error *err)
{
	struct sysv_seen s;
	int old, saved;

	old = hpshm__sys.shmget(key, 0, 0);
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
		return hpshm_error_set(err, HPSHM_EEXIST, saved, saved == EACCES ? "shmctl" : "shmat", "choose another name=",
				       "SysV key 0x%08x of name %s is held by segment %d, which this user cannot read",
				       (unsigned)key, rq->name, old);
	}
	if (s.others > 0) {
		(void)hpshm__sys.shmdt(s.at);
		if (s.has_header)
			return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget",
					       "choose another name= or stop the process using it",
					       "segment %s is in use (SysV id %d, %lu attached, creator pid %lld per its header)",
					       rq->name, old, s.others, (long long)s.header.creator_pid);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name= or stop the process using it",
				       "segment %s is in use (SysV id %d, %lu attached, creator pid %ld, no hpshm header)",
				       rq->name, old, s.others, (long)s.cpid);
	}
	if (!s.has_header && !sysv_debris(&s)) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget",
				       "choose another name=, or stop that process; with ipcrm only if you know the segment is stale",
				       "SysV key 0x%08x of name %s is held by segment %d without an hpshm header whose creator "
				       "pid %ld runs: being created now, or another program's segment",
				       (unsigned)key, rq->name, old, (long)s.cpid);
	}
	/* Dead and ours, or debris.  Marked while we are attached: the id stays ours until our shmdt(). */
	if (hpshm__sys.shmctl(old, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmctl",
				       saved == EPERM ? "run as the segment's owner or root, or choose another name=" : NULL,
				       "could not remove the dead segment %s (SysV id %d)", rq->name, old);
	}
	(void)hpshm__sys.shmdt(s.at);
	return 0;
}

/* shmget() a named segment with flags, recycling a dead predecessor.  The id, or an error. */
static int sysv_get_named(const struct hpshm_request *rq, int flags, hpshm_error *err)
{
	key_t key = sysv_key(rq->name);
	int id, rc, tries;

	for (tries = 0; tries < SYSV_CREATE_TRIES; tries++) {
		id = hpshm__sys.shmget(key, rq->size, flags);
		if (id >= 0)
			return id;
		if (errno != EEXIST)
			return sysv_shmget_error(rq, errno, err);
		rc = sysv_recycle(rq, key, err);
		if (rc < 0)
			return rc;
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name=",
			       "segment %s keeps being re-created by other processes (SysV key 0x%08x)", rq->name,
			       (unsigned)key);
}

static int sysv_create(struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char sz[32];
	unsigned bits = hpshm__huge_bits(rq->page_size);
	unsigned mode = rq->mode ? rq->mode & 0777 : SYSV_DEFAULT_MODE;
	void *p;
	int id, saved, rc;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (bits == 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "page size %zu is not a power of two",
				       rq->page_size);
	rc = hpshm__address_check(rq, HPSHM__MAP_CREATE, err);
	if (rc < 0)
		return rc;
	if (rq->name && (rq->name[0] == '\0' || strlen(rq->name) > SYSV_NAME_MAX))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "use 1 to 127 characters",
				       "segment name \"%.64s\" is empty or too long", rq->name);

	if (rq->name) {
		id = sysv_get_named(rq, (int)(IPC_CREAT | IPC_EXCL | SHM_HUGETLB | bits | mode), err);
		if (id < 0)
			return id;
	} else {
		id = hpshm__sys.shmget(IPC_PRIVATE, rq->size, (int)(IPC_CREAT | IPC_EXCL | SHM_HUGETLB | bits | mode));
		if (id < 0)
			return sysv_shmget_error(rq, errno, err);
	}

	p = hpshm__sys.shmat(id, rq->address, 0);
	if (p == (void *)-1) {
		saved = errno;                                 /* shmctl() below may clobber it */
		(void)hpshm__sys.shmctl(id, IPC_RMID, NULL);   /* back out the segment */
		if (rq->address && saved == EINVAL)            /* aligned, so EINVAL means a clash */
			return hpshm__map_taken(err, "shmat", saved, rq, HPSHM__MAP_CREATE);
		/* The pages were reserved by shmget(): ENOMEM here is address space, not the pool. */
		return hpshm_error_set(err, saved == ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS, saved, "shmat",
				       saved == ENOMEM ? "check ulimit -v, or ask for less" : NULL,
				       "could not attach the %s SysV segment %d", sz, id);
	}

	/* Mark an unnamed one now, so a crash from here on leaves nothing behind (top comment). */
	if (!rq->name && hpshm__sys.shmctl(id, IPC_RMID, NULL) < 0) {
		saved = errno;
		(void)hpshm__sys.shmdt(p);
		(void)hpshm__sys.shmctl(id, IPC_RMID, NULL);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", NULL,
				       "could not mark SysV segment %d for removal", id);
	}
	if (rq->address && p != rq->address) {
		/* shmat() with an address maps there or fails; a mismatch means a broken kernel or shim. */
		if (rq->name)
			(void)hpshm__sys.shmctl(id, IPC_RMID, NULL);
		(void)hpshm__sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmat", "choose another base_address",
				       "the kernel attached at %p, not at base_address %p", p, rq->address);
	}

	hpshm__mapping_fill(m, p, rq->size, -1, id, NULL);
	return 0;
}

static int sysv_destroy(struct hpshm_mapping *m)
{
	struct shmid_ds ds;
	int rc = 0;

	/*
	 * A segment created here is already marked; one attached some other way may not be.
	 * Mark it while still attached, so the id cannot have been reused by someone else;
	 * EINVAL/EIDRM mean it is gone already.
	 */
	if (m->id >= 0 && hpshm__sys.shmctl((int)m->id, IPC_STAT, &ds) == 0 && !(ds.shm_perm.mode & SHM_DEST)) {
		if (hpshm__sys.shmctl((int)m->id, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM)
			rc = HPSHM_ESYS;
	}
	if (hpshm__sys.shmdt(m->addr) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->id = -1;
	return rc;
}

static int sysv_identify(const struct hpshm_mapping *m, char *id, size_t len)
{
	int n;

	if (m->id < 0)
		return HPSHM_EINVAL;
	n = snprintf(id, len, "shm=%ld", m->id);
	return n < 0 || (size_t)n >= len ? HPSHM_EOVERFLOW : n;
}

static int sysv_attach(struct hpshm_mapping *m, const struct hpshm_request *rq, const char *text, hpshm_error *err)
{
	struct shmid_ds ds;
	char sz[32], have[32];
	int id, saved, rc;
	void *p;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (hpshm__id_parse(text, "shm=", &id) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is not shm=<id>", text);
	rc = hpshm__address_check(rq, HPSHM__MAP_ATTACH, err);
	if (rc < 0)
		return rc;

	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0) {
		saved = errno;
		if (saved == EACCES)
			return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl",
					       "run the child as the creator's user, or create with a wider mode=",
					       "this user may not read SysV segment %d", id);
		/* EINVAL, or EIDRM (Linux's answer for a segment destroyed meanwhile). */
		return hpshm_error_set(err, HPSHM_EINVAL, saved, "shmctl",
				       "start the child while the creator still holds the segment",
				       "SysV segment %d does not exist (its creator detached or died)", id);
	}
	if ((uint64_t)ds.shm_segsz < (uint64_t)rq->size)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "SysV segment %d is %s, not the segment's %s", id,
				       hpshm_size_format(ds.shm_segsz, have, sizeof(have)), sz);

	/* Never SHM_REMAP: a taken range must fail, not be replaced. */
	p = hpshm__sys.shmat(id, rq->address, 0);
	if (p == (void *)-1) {
		saved = errno;
		if (saved == EACCES)
			return hpshm_error_set(err, HPSHM_ESYS, saved, "shmat",
					       "run the child as the creator's user, or create with a wider mode=",
					       "this user may not attach SysV segment %d", id);
		if (saved == EINVAL || saved == EIDRM) {
			/* EINVAL is both "range taken" and "segment gone": ask which. */
			if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0)
				return hpshm_error_set(err, HPSHM_EINVAL, saved, "shmat",
						       "start the child while the creator still holds the segment",
						       "SysV segment %d went away while attaching", id);
			return hpshm__map_taken(err, "shmat", saved, rq, HPSHM__MAP_ATTACH);
		}
		return hpshm_error_set(err, saved == ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS, saved, "shmat",
				       saved == ENOMEM ? "check ulimit -v" : NULL, "could not attach SysV segment %d at %p", id,
				       rq->address);
	}
	if (p != rq->address) {
		/* shmat() with an address maps there or fails; a mismatch means a broken kernel or shim. */
		(void)hpshm__sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmat",
				       "attach earlier in the child's start-up, or set base_address to a free range",
				       "the kernel attached SysV segment %d at %p, not at %p", id, p, rq->address);
	}

	hpshm__mapping_fill(m, p, rq->size, -1, id, NULL);
	return 0;
}

/* Undo attach(): detach only; the segment belongs to its creator. */
static int sysv_detach(struct hpshm_mapping *m)
{
	int rc = hpshm__sys.shmdt(m->addr) < 0 ? HPSHM_ESYS : 0;

	m->addr = NULL;
	m->id = -1;
	return rc;
}

/*
 * /proc/sysvipc/shm: a heading, then per segment "key shmid perms size cpid lpid nattch
 * uid gid ...".  Only keys in hpshm's range can be ours: unnamed segments are IPC_PRIVATE,
 * and a marked segment's key reads 0 too.
 */
static int sysv_scan(hpshm_found_fn fn, void *user)
{
	struct sysv_seen s;
	struct hpshm_found f;
	char path[512], line[512];
	unsigned long long size;
	long long key;
	int id, n, stop;
	FILE *in;

	n = snprintf(path, sizeof(path), "%s/proc/sysvipc/shm", hpshm__sysroot());
	if (n < 0 || (size_t)n >= sizeof(path))
		return HPSHM_EIO;
	in = hpshm__fopen(path, "r");
	if (!in)
		return errno == ENOENT ? 0 : HPSHM_EIO; /* no SysV IPC in this kernel */
	while (fgets(line, sizeof(line), in)) {
		if (sscanf(line, "%lld %d %*o %llu", &key, &id, &size) != 3 || !sysv_key_ours(key))
			continue;
		if (sysv_see(id, &s) < 0)
			continue; /* gone, or not ours to read */
		if (!sysv_key_ours(s.key)) {
			(void)hpshm__sys.shmdt(s.at); /* marked, or the id reused, since the line was read */
			continue;
		}
		memset(&f, 0, sizeof(f));
		snprintf(f.id, sizeof(f.id), "shm=%d", id);
		f.size = (size_t)size;
		f.has_header = s.has_header;
		f.header = s.header;
		/* Without a header the name is unknown: the key is a hash of it. */
		snprintf(f.name, sizeof(f.name), "%s", s.has_header ? s.header.name : "");
		/* The core adds the header's creator; without one, ours is the only word. */
		f.alive = s.others > 0 || (!s.has_header && !sysv_creator_gone(s.cpid));
		(void)hpshm__sys.shmdt(s.at);
		stop = fn(user, &f);
		if (stop != 0)
			break;
	}
	fclose(in);
	return 0;
}

static int sysv_remove(const struct hpshm_found *f, hpshm_error *err)
{
	struct sysv_seen s;
	int id, saved;

	if (hpshm__id_parse(f->id, "shm=", &id) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "\"%.64s\" is not shm=<id>", f->id);
	/* Look again under our own attachment, which keeps the id from being reused meanwhile. */
	if (sysv_see(id, &s) < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM)
			return 0; /* someone removed it first */
		return hpshm_error_set(err, HPSHM_ESYS, saved, saved == EACCES ? "shmctl" : "shmat",
				       saved == EACCES ? "run hpshm gc as the segment's owner or root" : NULL,
				       "could not inspect SysV segment %d", id);
	}
	/* Same segment as scan() saw (ids are reused), and still in hpshm's range. */
	if (!sysv_key_ours(s.key) || s.has_header != f->has_header ||
	    (s.has_header && s.header.nonce != f->header.nonce)) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again",
				       "SysV segment %d is no longer the one listed", id);
	}
	if (s.others > 0) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmctl", "stop the process using it first",
				       "SysV segment %d is alive: %lu attached", id, s.others);
	}
	if (!s.has_header && !sysv_debris(&s)) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, 0, NULL, "stop that process first, or let its create finish",
				       "SysV segment %d has no hpshm header yet and its creator pid %ld runs", id,
				       (long)s.cpid);
	}
	/* Marked while we are attached, so the id cannot be reused before; gone with our shmdt(). */
	if (hpshm__sys.shmctl(id, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl",
				       saved == EPERM ? "run hpshm gc as the segment's owner or root" : NULL,
				       "could not remove SysV segment %d", id);
	}
	(void)hpshm__sys.shmdt(s.at);
	return 0;
}

const struct hpshm_provider hpshm__provider_sysv_hugetlb = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "sysv_hugetlb",
	.summary     = "SysV shmget(SHM_HUGETLB) segment, re-attachable by shmid",
	.caps        = HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED,
	.probe       = sysv_probe,
	.create      = sysv_create,
	.destroy     = sysv_destroy,
	.identify    = sysv_identify,
	.attach      = sysv_attach,
	.detach      = sysv_detach,
	.scan        = sysv_scan,
	.remove      = sysv_remove,
};
