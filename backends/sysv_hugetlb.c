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
 * Named segments (rq->name set) are different on purpose: their key is a hash of the name
 * (FNV-1a 32 of "hpshm:<name>", never IPC_PRIVATE), and they are NOT marked at creation, so
 * `hpshm ls` and `hpshm gc` can find them after a crash (/proc/sysvipc/shm) and the next
 * create() of the name finds its predecessor.  That is PostgreSQL's interlock (it keys on
 * the data directory's inode): shmget(key, IPC_CREAT | IPC_EXCL) failing with EEXIST leads
 * to IPC_STAT of the old segment; attached (shm_nattch > 0) it is in use and create() fails;
 * unattached, we attach it read-only, check the hpshm header at its tail (else it belongs
 * to another program whose key collides with ours: fail, never remove it), check that our
 * own attachment is the only one, mark it for removal while still attached (so its id
 * cannot be reused under us) and try once more.  destroy() marks and detaches a named
 * segment just as it does an unnamed one.
 *
 * Capabilities: HUGE, REATTACH (by shmid), NAMED (the shmid is a name other processes use).
 *
 * Re-attach: identify() gives "shm=<id>"; a child started by exec checks the id with
 * IPC_STAT (its size), calls shmat(id, addr, 0) and compares the address.  An unnamed
 * segment can be attached only while at least one process (normally the creator) keeps it
 * attached, which is also what PostgreSQL's EXEC_BACKEND path assumes.
 *
 * Crash safety: unnamed segments vanish with their last detach.  Named ones stay; scan()
 * reads /proc/sysvipc/shm (Linux), attaches each keyed segment read-only to read the header
 * at its tail, and counts it alive while shm_nattch, less our own look, is above 0.
 * remove() re-checks, under its own read-only attachment, that it is the same segment
 * (header nonce) and that nobody else is attached, then marks it.  A crash between shmget()
 * and the core writing the header leaves a named segment without a header, which neither
 * scan() nor create() will take for ours: the core writes the header right after create().
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"
#include "posix/segment.h"

#define SYSV_DEFAULT_MODE 0600
#define SYSV_NAME_MAX     127 /* what the header's name field holds */
#define SYSV_CREATE_TRIES 3   /* rounds of "key taken, dead, marked, try again" */

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

/* The key of a named segment: FNV-1a 32 of "hpshm:<name>", never IPC_PRIVATE. */
static key_t sysv_key(const char *name)
{
	const char *pre = "hpshm:";
	uint32_t h = 2166136261u;
	const char *c;

	for (c = pre; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	for (c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	if ((key_t)h == IPC_PRIVATE)
		h = 1;
	return (key_t)h;
}

/*
 * Read the header at the tail of segment id (shm_segsz bytes) through a read-only
 * attachment.  1 if it is hpshm's, 0 if not, -1 with errno if the segment cannot be
 * attached.  With at non-NULL, the attachment is left in *at for the caller to shmdt().
 */
static int sysv_read_header(int id, size_t segsz, struct hpshm_header *h, void **at)
{
	void *p;
	int ours;

	memset(h, 0, sizeof(*h));
	p = hpshm__sys.shmat(id, NULL, SHM_RDONLY);
	if (p == (void *)-1)
		return -1;
	/* Only within shm_segsz: the mapping may be longer (rounded to the page), never shorter. */
	ours = 0;
	if (segsz >= HPSHM_HEADER_REGION) {
		memcpy(h, (const char *)p + segsz - HPSHM_HEADER_REGION, sizeof(*h));
		ours = hpshm__header_accept(h);
	}
	if (at)
		*at = p;
	else
		(void)hpshm__sys.shmdt(p);
	return ours;
}

/*
 * The key of name is taken by segment old.  Remove it if it is a dead hpshm segment and
 * return 0 (try again); otherwise HPSHM_EEXIST saying whose it is.
 */
static int sysv_recycle(const struct hpshm_request *rq, key_t key, hpshm_error *err)
{
	struct hpshm_header h;
	struct shmid_ds ds;
	void *at = NULL;
	int old, ours, saved;

	old = hpshm__sys.shmget(key, 0, 0);
	if (old < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* removed meanwhile: try again */
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmget", "choose another name=",
				       "SysV key 0x%08x of name %s is held by a segment this user cannot open",
				       (unsigned)key, rq->name);
	}
	if (hpshm__sys.shmctl(old, IPC_STAT, &ds) < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM) /* Linux says EIDRM for "gone" */
			return 0;
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmctl", "choose another name=",
				       "SysV key 0x%08x of name %s is held by segment %d, which this user cannot inspect",
				       (unsigned)key, rq->name, old);
	}
	if (ds.shm_nattch > 0)
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name= or stop the process using it",
				       "segment %s is in use (SysV id %d, %lu attached, creator pid %ld)", rq->name, old,
				       (unsigned long)ds.shm_nattch, (long)ds.shm_cpid);

	ours = sysv_read_header(old, ds.shm_segsz, &h, &at);
	if (ours < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM)
			return 0;
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmat", "choose another name=",
				       "SysV key 0x%08x of name %s is held by segment %d, which this user cannot read",
				       (unsigned)key, rq->name, old);
	}
	if (!ours) {
		(void)hpshm__sys.shmdt(at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget",
				       "choose another name=, or remove that segment with ipcrm if you know it is stale",
				       "SysV key 0x%08x of name %s is held by a foreign segment (id %d, creator pid %ld)",
				       (unsigned)key, rq->name, old, (long)ds.shm_cpid);
	}
	/* Dead and ours.  Attached now by us alone?  Then mark it while attached: the id stays ours. */
	if (hpshm__sys.shmctl(old, IPC_STAT, &ds) == 0 && ds.shm_nattch > 1) {
		(void)hpshm__sys.shmdt(at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmget", "choose another name= or stop the process using it",
				       "segment %s is in use (SysV id %d, creator pid %lld per its header)", rq->name, old,
				       (long long)h.creator_pid);
	}
	if (hpshm__sys.shmctl(old, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__sys.shmdt(at);
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shmctl",
				       saved == EPERM ? "run as the segment's owner or root, or choose another name=" : NULL,
				       "could not remove the dead segment %s (SysV id %d)", rq->name, old);
	}
	(void)hpshm__sys.shmdt(at);
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
 * uid gid ...".  Only keyed segments can be ours: unnamed ones are IPC_PRIVATE, and a
 * marked segment's key reads 0 too.
 */
static int sysv_scan(hpshm_found_fn fn, void *user)
{
	struct hpshm_header h;
	struct hpshm_found f;
	struct shmid_ds ds;
	char path[512], line[512];
	unsigned long long size, nattch;
	long long key;
	int id, n, ours;
	void *at;
	FILE *in;

	n = snprintf(path, sizeof(path), "%s/proc/sysvipc/shm", hpshm__sysroot());
	if (n < 0 || (size_t)n >= sizeof(path))
		return HPSHM_EIO;
	in = fopen(path, "re");
	if (!in)
		return errno == ENOENT ? 0 : HPSHM_EIO; /* no SysV IPC in this kernel */
	while (fgets(line, sizeof(line), in)) {
		if (sscanf(line, "%lld %d %*o %llu %*d %*d %llu", &key, &id, &size, &nattch) != 4 || key == IPC_PRIVATE)
			continue;
		ours = sysv_read_header(id, (size_t)size, &h, &at);
		if (ours <= 0) {
			if (ours == 0)
				(void)hpshm__sys.shmdt(at);
			continue; /* not ours, gone, or not ours to read */
		}
		memset(&f, 0, sizeof(f));
		f.header = h;
		snprintf(f.id, sizeof(f.id), "shm=%d", id);
		snprintf(f.name, sizeof(f.name), "%s", f.header.name);
		f.size = (size_t)size;
		f.has_header = 1;
		/* Fresh count, less our own look. */
		if (hpshm__sys.shmctl(id, IPC_STAT, &ds) == 0)
			f.alive = ds.shm_nattch > 1;
		else
			f.alive = nattch > 0;
		(void)hpshm__sys.shmdt(at);
		if (fn(user, &f) != 0)
			break;
	}
	fclose(in);
	return 0;
}

static int sysv_remove(const struct hpshm_found *f, hpshm_error *err)
{
	struct hpshm_header h;
	struct shmid_ds ds;
	void *at = NULL;
	int id, ours, saved;

	if (hpshm__id_parse(f->id, "shm=", &id) < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "\"%.64s\" is not shm=<id>", f->id);
	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM)
			return 0; /* someone removed it first */
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl",
				       saved == EACCES ? "run hpshm gc as the segment's owner or root" : NULL,
				       "could not inspect SysV segment %d", id);
	}
	if (ds.shm_nattch > 0)
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmctl", "stop the process using it first",
				       "SysV segment %d is alive: %lu attached", id, (unsigned long)ds.shm_nattch);
	/* Same segment as scan() saw (ids are reused), and still ours: compare the header under our look. */
	ours = sysv_read_header(id, ds.shm_segsz, &h, &at);
	if (ours < 0) {
		saved = errno;
		if (saved == EINVAL || saved == EIDRM)
			return 0;
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmat", NULL, "could not read SysV segment %d", id);
	}
	if (!ours || (f->has_header && h.nonce != f->header.nonce)) {
		(void)hpshm__sys.shmdt(at);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again",
				       "SysV segment %d is no longer the one listed", id);
	}
	if (hpshm__sys.shmctl(id, IPC_STAT, &ds) == 0 && ds.shm_nattch > 1) {
		(void)hpshm__sys.shmdt(at);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmctl", "stop the process using it first",
				       "SysV segment %d is alive: %lu attached", id, (unsigned long)ds.shm_nattch - 1);
	}
	/* Marked while we are attached, so the id cannot be reused before; gone with our shmdt(). */
	if (hpshm__sys.shmctl(id, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM) {
		saved = errno;
		(void)hpshm__sys.shmdt(at);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl",
				       saved == EPERM ? "run hpshm gc as the segment's owner or root" : NULL,
				       "could not remove SysV segment %d", id);
	}
	(void)hpshm__sys.shmdt(at);
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
