/* SPDX-License-Identifier: MIT */
/*
 * backends/sysv_hugetlb.c -- System V shared memory with SHM_HUGETLB.
 *
 * Mechanism: shmget(IPC_PRIVATE, size - SYSV_MARK, IPC_CREAT | IPC_EXCL | SHM_HUGETLB | size
 * bits | mode), then shmat().  The segment is a file on the kernel's internal hugetlbfs
 * mount; the shmid names it to any process allowed to attach it.
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
 *     any backend's (hpshm__map_taken() in backends/fixmap.c names the holder).
 *   - SHM_NORESERVE is never passed: the reservation at shmget() time is what keeps a
 *     later fault from raising SIGBUS.
 *   - shm_segsz reports the requested size while the kernel rounds the file up to the huge
 *     page, and shmat() maps the rounded length.  hpshm uses that for its mark (below).
 *   - IPC_STAT does not show SHM_HUGETLB (such a segment reads mode 600 like any other), so
 *     whether a segment is hugetlb memory is read from the smaps of a read-only attachment.
 *
 * The mark.  A process can be killed between shmget() and the moment the segment proves it
 * is hpshm's: for an unnamed one, before the IPC_RMID (the segment then stays, key
 * IPC_PRIVATE, with its reserved pages, for good); for a named one, before the core writes
 * the header at its tail.  So every segment is asked for SYSV_MARK (0x48, 'H') bytes less
 * than the whole pages it maps: shm_segsz is then SYSV_MARK short of a multiple of its huge
 * page size from the instant shmget() returns, which no other program has a reason to ask
 * for.  With the mark, hugetlb backing, nobody attached and a tail as such a create leaves
 * it (all zeros, or our header torn by the kill), a segment whose creator is gone is
 * provably debris of an hpshm create and removed like a dead segment; anything else in the
 * tail makes it foreign, mark or not, since anyone can ask for that size.  Without the mark
 * and with a zero tail, a segment is only debris for `gc --force` (an older hpshm's, or
 * another program's).
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
 * Capabilities: HUGE, REATTACH (by shmid), NAMED (the shmid is a name other processes use).
 *
 * Re-attach: identify() gives "shm=<id>"; a child started by exec checks the id with
 * IPC_STAT (its size, rounded to the page, must be the token's), calls shmat(id, addr, 0)
 * and compares the address.  The segment's object (sysv_object(): id, creator pid, creation
 * time, size) is read at create and again in the child once attached: an unnamed segment
 * that fills its pages keeps its header in a companion (core/reattach.c), which records the
 * creator's, so a token edited to another id, or a stale one whose id a new segment got,
 * is refused.  A named segment is found by any process from its name (hpshm_segment_open()):
 * lookup() asks shmget() for the name's key and looks at the segment as scan() does; the
 * core compares the header's name, since another name may hash to the same key.  An
 * unnamed segment can be attached only while at least one process (normally
 * the creator) keeps it attached, which is also what PostgreSQL's EXEC_BACKEND path assumes.
 *
 * Crash safety: unnamed segments vanish with their last detach once marked for removal.
 * Named ones stay.  scan() reads /proc/sysvipc/shm (Linux) and reports every segment whose
 * key is in hpshm's range, and every IPC_PRIVATE segment not marked for removal, unattached
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
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/hugetlb_common.h"
#include "base/base.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"
#include "base/header.h"

#define SYSV_DEFAULT_MODE 0600
#define SYSV_NAME_MAX     127 /* what the header's name field holds */
#define SYSV_CREATE_TRIES 3   /* rounds of "key taken, dead, marked, try again" */
#define SYSV_KEY_RANGE    0x48000000u /* hpshm's named keys: 'H' in the top byte */
#define SYSV_KEY_MASK     0xff000000u /* the bits that make the range */
#define SYSV_MARK         0x48u       /* bytes hpshm asks shmget() for less than it maps: its mark */

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

static int sysv_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hpshm__sysv_limits lim;
	struct hpshm_request at;
	char sz[32], max[32];
	long gid;
	int rc;

	(void)self;
	rc = hpshm__hugetlb_probe(rq, out, &at);
	if (rc < 0)
		return rc;
	rq = &at; /* the segment as create() will be asked for it: whole pages */

	if (!hpshm__has_cap_ipc_lock()) {
		gid = hpshm__hugetlb_shm_group();
		if (gid < 0) {
			snprintf(out->reason, sizeof(out->reason),
				 "cannot read vm.hugetlb_shm_group and no CAP_IPC_LOCK: grant CAP_IPC_LOCK");
			snprintf(out->fix, sizeof(out->fix), "grant the server CAP_IPC_LOCK");
			return HPSHM_EUNAVAILABLE;
		}
		if (!hpshm__in_group(gid)) {
			out->sys_errno = EPERM;
			snprintf(out->reason, sizeof(out->reason),
				 "not in vm.hugetlb_shm_group (gid %ld) and no CAP_IPC_LOCK: add the user to "
				 "that group or grant CAP_IPC_LOCK", gid);
			snprintf(out->fix, sizeof(out->fix),
				 "add the server's user to group %ld (vm.hugetlb_shm_group), or grant it CAP_IPC_LOCK", gid);
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
			snprintf(out->fix, sizeof(out->fix), "sysctl -w kernel.shmmax=%zu", rq->size);
			return HPSHM_EUNAVAILABLE;
		}
		if (lim.shmall != 0 && rq->size / hpshm__base_page_size() > lim.shmall) {
			out->sys_errno = ENOSPC;
			snprintf(out->reason, sizeof(out->reason),
				 "kernel.shmall allows %llu pages in all, below %s: raise kernel.shmall",
				 (unsigned long long)lim.shmall, hpshm_size_format(rq->size, sz, sizeof(sz)));
			snprintf(out->fix, sizeof(out->fix), "raise kernel.shmall to at least %zu pages",
				 rq->size / hpshm__base_page_size());
			return HPSHM_EUNAVAILABLE;
		}
	}
	return 0;
}

/*
 * requirements(): the pool and cgroup every hugetlb provider needs, then what shmget()
 * itself checks.  SHM_HUGETLB needs CAP_IPC_LOCK or membership of vm.hugetlb_shm_group (the
 * commands name this process's group: an operator gives the server's); the segment must fit
 * kernel.shmmax (bytes) and kernel.shmall (base pages of all segments together: this one
 * alone must fit).
 */
static int sysv_needs(const struct hpshm_request *rq, hpshm_need_fn fn, void *user)
{
	struct hpshm__sysv_limits lim;
	struct hpshm_requirement r;
	long group = hpshm__hugetlb_shm_group(), gid = (long)getegid();
	size_t base_pages = rq->size / hpshm__base_page_size();
	int rc;

	if ((rc = hpshm__hugetlb_requirements(rq, fn, user)) != 0)
		return rc;

	hpshm__requirement_init(&r, "sysv_privilege");
	r.met = hpshm__has_cap_ipc_lock() || (group >= 0 && hpshm__in_group(group) > 0);
	if (!r.met) {
		hpshm__requirement_text(r.detail,
			 "no CAP_IPC_LOCK and not in vm.hugetlb_shm_group (%ld): shmget(SHM_HUGETLB) fails with EPERM; "
			 "the commands use this process's group %ld, give the server's", group, gid);
		hpshm__requirement_add(r.now, "sysctl -w vm.hugetlb_shm_group=%ld", gid);
		hpshm__requirement_add(r.persist, "echo 'vm.hugetlb_shm_group = %ld' >> /etc/sysctl.d/60-hpshm.conf", gid);
	}
	if ((rc = fn(user, &r)) != 0)
		return rc;

	memset(&lim, 0, sizeof(lim));
	if (hpshm__sysv_limits(&lim) < 0)
		return 0;
	hpshm__requirement_init(&r, "sysv_limits");
	r.met = 1;
	if (lim.shmmax != 0 && lim.shmmax < rq->size) {
		r.met = 0;
		hpshm__requirement_text(r.detail, "kernel.shmmax is %llu bytes, below the %zu bytes of the segment",
			 (unsigned long long)lim.shmmax, rq->size);
		hpshm__requirement_add(r.now, "sysctl -w kernel.shmmax=%zu", rq->size);
		hpshm__requirement_add(r.persist, "echo 'kernel.shmmax = %zu' >> /etc/sysctl.d/60-hpshm.conf", rq->size);
		if ((rc = fn(user, &r)) != 0)
			return rc;
		hpshm__requirement_init(&r, "sysv_limits");
		r.met = 1;
	}
	if (lim.shmall != 0 && lim.shmall < base_pages) {
		r.met = 0;
		hpshm__requirement_text(r.detail, "kernel.shmall is %llu pages, below the %zu base pages of the segment",
			 (unsigned long long)lim.shmall, base_pages);
		hpshm__requirement_add(r.now, "sysctl -w kernel.shmall=%zu", base_pages);
		hpshm__requirement_add(r.persist, "echo 'kernel.shmall = %zu' >> /etc/sysctl.d/60-hpshm.conf", base_pages);
	}
	return fn(user, &r);
}

static int sysv_requirements(const struct hpshm_instance *self, const struct hpshm_request *rq,
			     hpshm_need_fn fn, void *user)
{
	(void)self;
	(void)sysv_needs(rq, fn, user); /* non-zero: fn asked to stop */
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

/* Is key in hpshm's range, so that a segment with it may be a named hpshm segment or its debris? */
static int sysv_key_ours(long long key)
{
	return ((uint32_t)key & SYSV_KEY_MASK) == SYSV_KEY_RANGE;
}

/* The length shmat() maps for a segment of segsz bytes on page_size pages: rounded up. */
static uint64_t sysv_mapped(uint64_t segsz, size_t page_size)
{
	return (segsz + page_size - 1) / page_size * page_size;
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
	int n = hpshm__pools(pools, 8);

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

/* The Unix time at which the process pid started, 0 if unknown (/proc/<pid>/stat and btime). */
static time_t sysv_started(pid_t pid)
{
	char line[256];
	unsigned long long btime = 0;
	uint64_t ticks = hpshm__process_start(pid);
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;

	if (ticks == 0 || hz <= 0)
		return 0;
	f = hpshm__sysfile_open("/proc/stat");
	if (!f)
		return 0;
	while (hpshm__getline(f, line, sizeof(line), NULL))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return btime == 0 ? 0 : (time_t)(btime + ticks / (uint64_t)hz);
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
	if (hpshm__sys.kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	started = sysv_started(pid);
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
 * or something else, foreign even with the mark (top comment).  The tail is
 * faulted in with MADV_POPULATE_READ first, so a segment made with SHM_NORESERVE (never
 * hpshm's) on an empty pool is an error here, not a SIGBUS.
 */
static int sysv_class(struct sysv_seen *s, uint64_t segsz)
{
	struct hpshm__backing b;
	const char *tail;
	int marked;

	memset(&b, 0, sizeof(b));
	if (hpshm__verify_backing(s->at, (size_t)segsz, HPSHM__PORT_NO_HANDLE, &b) < 0 || !b.huge || b.page_size == 0)
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
	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0)
		return -1;
	s->at = hpshm__sys.shmat(id, NULL, SHM_RDONLY);
	if (s->at == (void *)-1) {
		s->failed = "shmat";
		return -1;
	}
	s->cls = sysv_class(s, (uint64_t)ds.shm_segsz);
	/* A fresh count now that we are attached, less our own look. */
	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0) {
		saved = errno; /* shmdt() below may clobber it */
		(void)hpshm__sys.shmdt(s->at);
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

	if (hpshm__sys.getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
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
		return hpshm_error_set(err, HPSHM_EEXIST, saved, s.failed, "choose another name=",
				       "SysV key 0x%08x of name %s is held by segment %d, which this user cannot read",
				       (unsigned)key, rq->name, old);
	}
	if (s.cls < 0) {
		(void)hpshm__sys.shmdt(s.at);
		snprintf(hint, sizeof(hint), "choose another name=; remove that segment (ipcrm -m %d) only if you know it is stale",
			 old);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", hint,
				       "SysV key 0x%08x of name %s is held by segment %d, which is not hpshm's (%s)",
				       (unsigned)key, rq->name, old, sysv_foreign_why(s.cls));
	}
	if (s.others > 0) {
		(void)hpshm__sys.shmdt(s.at);
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
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget",
				       "if it is hpshm's, `hpshm gc --force` removes it; else choose another name=",
				       "SysV key 0x%08x of name %s is held by segment %d without hpshm's header or mark "
				       "(a create of an older hpshm killed early, or another program's)",
				       (unsigned)key, rq->name, old);
	}
	if (s.cls == HPSHM_FOUND_MARKED && !sysv_creator_gone(&s)) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name= or stop that process",
				       "segment %s is being created by pid %ld (SysV id %d, no header yet)", rq->name,
				       (long)s.cpid, old);
	}
	/* Dead and ours.  Marked while we are attached: the id stays ours until our shmdt(). */
	if (hpshm__sys.shmctl(old, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__sys.shmdt(s.at);
		sysv_owner(s.uid, owner, sizeof(owner));
		snprintf(hint, sizeof(hint), "run `hpshm gc` as %s or as root, or choose another name=", owner);
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmctl", saved == EPERM ? hint : NULL,
				       "could not remove the dead segment %s (SysV id %d) of %s", rq->name, old, owner);
	}
	(void)hpshm__sys.shmdt(s.at);
	return 0;
}

/* shmget() a named segment of segsz bytes with flags, recycling a dead predecessor.  The id, or an error. */
static int sysv_get_named(const struct hpshm_request *rq, size_t segsz, int flags, hpshm_error *err)
{
	key_t key = sysv_key(rq->name);
	int id, rc, tries;

	for (tries = 0; tries < SYSV_CREATE_TRIES; tries++) {
		id = hpshm__sys.shmget(key, segsz, flags);
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

/*
 * m->object of SysV segment id, read while this process is attached (so the id cannot pass
 * to another segment meanwhile): its id, creator, creation time and size.  The id alone is
 * not enough: Linux gives an id again once its slot's 16-bit sequence wraps, or at once when
 * kernel.shm_next_id asks for it (checkpoint/restore), and the new segment may be another
 * process's, made in another second, or of another size.  A creator pid this process cannot
 * see (another PID namespace) reads 0 and is left out.  shm_ctime changes only with IPC_SET,
 * which hpshm never does.  0, or -1 with errno.
 */
static int sysv_object(struct hpshm_mapping *m, int id)
{
	struct shmid_ds ds;

	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0)
		return -1;
	if (ds.shm_cpid > 0)
		snprintf(m->object, sizeof(m->object), "id=%d cpid=%ld ctime=%lld segsz=%llu", id, (long)ds.shm_cpid,
			 (long long)ds.shm_ctime, (unsigned long long)ds.shm_segsz);
	else
		snprintf(m->object, sizeof(m->object), "id=%d ctime=%lld segsz=%llu", id, (long long)ds.shm_ctime,
			 (unsigned long long)ds.shm_segsz);
	return 0;
}

static int sysv_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char sz[32];
	unsigned bits = hpshm__huge_bits(rq->page_size);
	unsigned mode = rq->mode ? rq->mode & 0777 : SYSV_DEFAULT_MODE;
	void *p;
	int id, saved;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (rq->name && (rq->name[0] == '\0' || strlen(rq->name) > SYSV_NAME_MAX))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "use 1 to 127 characters",
				       "segment name \"%.64s\" is empty or too long", rq->name);

	/* SYSV_MARK bytes short: the kernel maps the whole page all the same, and the mark is there from shmget() on. */
	if (rq->name) {
		id = sysv_get_named(rq, rq->size - SYSV_MARK, (int)(IPC_CREAT | IPC_EXCL | SHM_HUGETLB | bits | mode), err);
		if (id < 0)
			return id;
	} else {
		id = hpshm__sys.shmget(IPC_PRIVATE, rq->size - SYSV_MARK,
				       (int)(IPC_CREAT | IPC_EXCL | SHM_HUGETLB | bits | mode));
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
	/* A child's attach() must find this very segment, not the next one to get its id. */
	if ((rq->flags & HPSHM_REQ_REATTACH) && sysv_object(m, id) < 0) {
		saved = errno;
		if (rq->name)
			(void)hpshm__sys.shmctl(id, IPC_RMID, NULL);
		(void)hpshm__sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", NULL, "could not read back SysV segment %d", id);
	}
	return 0;
}

static int sysv_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	struct shmid_ds ds;
	int rc = 0;

	(void)self;
	/*
	 * A segment created here is already marked; one attached some other way may not be.
	 * Mark it while still attached, so the id cannot have been reused by someone else;
	 * EINVAL/EIDRM mean it is gone already.
	 */
	if (m->handle >= 0 && hpshm__sys.shmctl((int)m->handle, IPC_STAT, &ds) == 0 && !(ds.shm_perm.mode & SHM_DEST)) {
		if (hpshm__sys.shmctl((int)m->handle, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM)
			rc = HPSHM_ESYS;
	}
	if (hpshm__sys.shmdt(m->addr) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	return rc;
}

static int sysv_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len)
{
	int n;

	(void)self;
	n = snprintf(id, len, "shm=%ld", (long)m->handle); /* the shmid: create() and attach() always set one */
	return n < 0 || (size_t)n >= len ? HPSHM_EOVERFLOW : n;
}

static int sysv_attach(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, const char *text, hpshm_error *err)
{
	struct shmid_ds ds;
	char sz[32], have[32];
	int id, saved;
	void *p;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (hpshm__id_parse(text, "shm=", &id) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is not shm=<id>", text);

	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0) {
		saved = errno;
		if (saved == EACCES)
			return hpshm_error_set(err, HPSHM_EACCES, saved, "shmctl",
					       "run this process as the creator's user, or have the creator give the "
					       "segment a mode= that admits this user (mode=0660 and a group both are in)",
					       "this user may not read SysV segment %d", id);
		/* EINVAL, or EIDRM (Linux's answer for a segment destroyed meanwhile). */
		return hpshm_error_set(err, HPSHM_EINVAL, saved, "shmctl",
				       "start the child while the creator still holds the segment",
				       "SysV segment %d does not exist (its creator detached or died)", id);
	}
	/* shm_segsz is what shmget() was asked for (SYSV_MARK short); shmat() maps whole pages,
	 * which must be exactly the token's: shmat() maps the whole segment whatever it is told. */
	if (sysv_mapped((uint64_t)ds.shm_segsz, rq->page_size) != (uint64_t)rq->size)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "SysV segment %d maps %s, the token says %s", id,
				       hpshm_size_format((size_t)sysv_mapped((uint64_t)ds.shm_segsz, rq->page_size), have,
							 sizeof(have)),
				       sz);

	/* Never SHM_REMAP: a taken range must fail, not be replaced. */
	p = hpshm__sys.shmat(id, rq->address, 0);
	if (p == (void *)-1) {
		saved = errno;
		if (saved == EACCES)
			return hpshm_error_set(err, HPSHM_EACCES, saved, "shmat",
					       "run this process as the creator's user, or have the creator give the "
					       "segment a mode= that admits this user (mode=0660 and a group both are in)",
					       "this user may not attach SysV segment %d for reading and writing", id);
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
	if (rq->address && p != rq->address) {
		/* shmat() with an address maps there or fails; a mismatch means a broken kernel or shim. */
		(void)hpshm__sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmat",
				       "attach earlier in the child's start-up, or set base_address to a free range",
				       "the kernel attached SysV segment %d at %p, not at %p", id, p, rq->address);
	}

	hpshm__mapping_fill(m, p, rq->size, -1, id, NULL);
	/* Read again now that we hold it: the segment attached is the one the object names. */
	if (sysv_object(m, id) < 0) {
		saved = errno;
		(void)hpshm__sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", NULL, "could not read back SysV segment %d", id);
	}
	return 0;
}

/* Undo attach(): detach only; the segment belongs to its creator. */
static int sysv_detach(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	int rc = hpshm__sys.shmdt(m->addr) < 0 ? HPSHM_ESYS : 0;

	(void)self;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	return rc;
}

/*
 * /proc/sysvipc/shm: a heading, then per segment "key shmid perms size cpid lpid nattch
 * uid gid ...".  hpshm's name space is the keys of its range (named segments) and, for the
 * debris of an unnamed create, IPC_PRIVATE segments not marked for removal, unattached and
 * SYSV_MARK short of a whole number of huge pages; no other segment is looked at.  One whose
 * size alone says it is not hpshm's is reported foreign without being attached.
 */
static int sysv_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	struct sysv_seen s;
	struct hpshm_found f;
	char path[512], line[512];
	unsigned long long size;
	unsigned long perms, nattch;
	size_t min_huge = sysv_min_huge();
	long long key;
	long cpid, lpid;
	int id, n, stop;
	FILE *in;

	(void)self;
	n = snprintf(path, sizeof(path), "%s/proc/sysvipc/shm", hpshm__sysroot());
	if (n < 0 || (size_t)n >= sizeof(path))
		return HPSHM_EIO;
	in = hpshm__fopen(path, "r");
	if (!in)
		return errno == ENOENT ? 0 : HPSHM_EIO; /* no SysV IPC in this kernel */
	while (fgets(line, sizeof(line), in)) {
		if (sscanf(line, "%lld %d %lo %llu %ld %ld %lu", &key, &id, &perms, &size, &cpid, &lpid, &nattch) != 7)
			continue;
		if (!sysv_key_ours(key) &&
		    !(key == IPC_PRIVATE && !(perms & SHM_DEST) && nattch == 0 && sysv_marked(size, min_huge)))
			continue;
		memset(&f, 0, sizeof(f));
		snprintf(f.id, sizeof(f.id), "shm=%d", id);
		f.size = (size_t)size;
		if (!sysv_size_plausible(size, min_huge)) {
			f.has_header = HPSHM_FOUND_FOREIGN_BACKING; /* e.g. a 4 KiB segment of another program */
			f.alive = -1;
		} else {
			if (sysv_see(id, &s) < 0)
				continue; /* gone, or not ours to read */
			if (!sysv_space_ours(s.key, s.dest)) {
				(void)hpshm__sys.shmdt(s.at); /* marked, or the id reused, since the line was read */
				continue;
			}
			if (s.mapped)
				f.size = (size_t)s.mapped;
			f.has_header = s.cls;
			f.mine = sysv_mine(&s);
			hpshm__header_to(&f, &s.header);
			/* The core adds the header's creator; without one, ours is the only word. */
			f.alive = sysv_alive(&s);
			(void)hpshm__sys.shmdt(s.at);
		}
		/* Without a header the name is unknown: the key is a hash of it. */
		snprintf(f.name, sizeof(f.name), "%s", f.has_header == HPSHM_FOUND_HEADER ? s.header.name : "");
		stop = fn(user, &f);
		if (stop != 0)
			break;
	}
	fclose(in);
	return 0;
}

/*
 * The owner of SysV segment id, from /proc/sysvipc/shm (readable by anyone, where IPC_STAT
 * needs read permission on the segment): "uid N (name)" in buf, or -1 if it is not listed.
 */
static int sysv_owner_of(int id, char *buf, size_t len)
{
	char path[512], line[512];
	unsigned long long size;
	unsigned long perms, nattch, uid;
	long long key;
	long cpid, lpid;
	int got, n, found = -1;
	FILE *in;

	n = snprintf(path, sizeof(path), "%s/proc/sysvipc/shm", hpshm__sysroot());
	if (n < 0 || (size_t)n >= sizeof(path) || (in = hpshm__fopen(path, "r")) == NULL)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), in))
		if (sscanf(line, "%lld %d %lo %llu %ld %ld %lu %lu", &key, &got, &perms, &size, &cpid, &lpid, &nattch,
			   &uid) == 8 && got == id) {
			sysv_owner(uid, buf, len);
			found = 0;
		}
	fclose(in);
	return found;
}

/*
 * lookup(): the segment with the key of rq->name (sysv_key()), looked at under a read-only
 * attachment of our own as scan() looks (sysv_see()): its size, whose it is, its header.  A
 * key is a hash of the name, which another name may share: the core compares the header's
 * name with the one asked for.
 */
static int sysv_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
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
	id = hpshm__sys.shmget(key, 0, 0);
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
	(void)hpshm__sys.shmdt(s.at);
	return 0;
}

/* The nonce of the header scan() listed for f. */
static uint64_t sysv_listed_nonce(const struct hpshm_found *f)
{
	struct hpshm_header h;

	hpshm__header_of(f, &h);
	return h.nonce;
}

static int sysv_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
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
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "SysV segment %d is not hpshm's (%s): never removed",
				       id, sysv_foreign_why(s.cls));
	}
	/* Same segment as scan() saw (ids are reused), still in hpshm's name space, and debris a
	 * forced remove may take because it is the caller's is still the caller's. */
	if (!sysv_space_ours(s.key, s.dest) || s.cls != f->has_header ||
	    (s.cls == HPSHM_FOUND_HEADER && s.header.nonce != sysv_listed_nonce(f)) ||
	    (s.cls == HPSHM_FOUND_BARE && f->mine == 1 && !sysv_mine(&s))) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again",
				       "SysV segment %d is no longer the one listed", id);
	}
	if (s.others > 0) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmctl", "stop the process using it first",
				       "SysV segment %d is alive: %lu attached", id, s.others);
	}
	if (s.cls != HPSHM_FOUND_HEADER && !sysv_creator_gone(&s)) {
		(void)hpshm__sys.shmdt(s.at);
		return hpshm_error_set(err, HPSHM_EEXIST, 0, NULL, "stop that process first, or let its create finish",
				       "SysV segment %d has no hpshm header yet and its creator pid %ld runs", id,
				       (long)s.cpid);
	}
	/* Marked while we are attached, so the id cannot be reused before; gone with our shmdt(). */
	if (hpshm__sys.shmctl(id, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__sys.shmdt(s.at);
		sysv_owner(s.uid, owner, sizeof(owner));
		snprintf(hint, sizeof(hint), "run hpshm gc as %s or root", owner);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", saved == EPERM ? hint : NULL,
				       "could not remove SysV segment %d of %s", id, owner);
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
	.requirements = sysv_requirements,
	.create      = sysv_create,
	.destroy     = sysv_destroy,
	.identify    = sysv_identify,
	.attach      = sysv_attach,
	.detach      = sysv_detach,
	.scan        = sysv_scan,
	.remove      = sysv_remove,
	.lookup      = sysv_lookup,
};
