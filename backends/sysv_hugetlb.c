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
 * Named segments (rq->name set) have a key in hpshm's range and are not marked at creation:
 * their keys, the look at a segment whose key is taken, and scan(), lookup() and remove()
 * are in backends/sysv_named.c, which its opener describes.
 *
 * Capabilities: HUGE, REATTACH (by shmid), NAMED (the shmid is a name other processes use).
 *
 * Re-attach: identify() gives "shm=<id>"; a child started by exec checks the id with
 * IPC_STAT (its size, rounded to the page, must be the token's), calls shmat(id, addr, 0)
 * and compares the address.  The segment's object (sysv_object(): id, creator pid, creation
 * time, size) is read at create and again in the child once attached: an unnamed segment
 * that fills its pages keeps its header in a companion (core/header.c), which records the
 * creator's, so a token edited to another id, or a stale one whose id a new segment got,
 * is refused.  A named segment is found by any process from its name (hpshm_segment_open()):
 * lookup() asks shmget() for the name's key and looks at the segment as scan() does; the
 * core compares the header's name, since another name may hash to the same key.  An
 * unnamed segment can be attached only while at least one process (normally
 * the creator) keeps it attached, which is also what PostgreSQL's EXEC_BACKEND path assumes.
 *
 * Crash safety: unnamed segments vanish with their last detach once marked for removal.
 * Named ones stay: backends/sysv_named.c says how scan() finds them and remove() takes them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backends/hugetlb_common.h"
#include "base/base.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"
#include "backends/sysv_named.h"
#include "base/header.h"

#define SYSV_DEFAULT_MODE 0600

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

	if (!hpshm__linux_has_cap_ipc_lock()) {
		gid = hpshm__linux_hugetlb_shm_group();
		if (gid < 0) {
			snprintf(out->reason, sizeof(out->reason),
				 "cannot read vm.hugetlb_shm_group and no CAP_IPC_LOCK: grant CAP_IPC_LOCK");
			snprintf(out->fix, sizeof(out->fix), "grant the server CAP_IPC_LOCK");
			return HPSHM_EUNAVAILABLE;
		}
		if (!hpshm__linux_in_group(gid)) {
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
	if (hpshm__linux_sysv_limits(&lim) == 0) {
		if (lim.shmmax != 0 && rq->size > lim.shmmax) {
			out->sys_errno = EINVAL;
			snprintf(out->reason, sizeof(out->reason), "kernel.shmmax is %s, below %s: raise kernel.shmmax",
				 hpshm_size_format((size_t)lim.shmmax, max, sizeof(max)),
				 hpshm_size_format(rq->size, sz, sizeof(sz)));
			snprintf(out->fix, sizeof(out->fix), "sysctl -w kernel.shmmax=%zu", rq->size);
			return HPSHM_EUNAVAILABLE;
		}
		if (lim.shmall != 0 && rq->size / hpshm__port_base_page_size() > lim.shmall) {
			out->sys_errno = ENOSPC;
			snprintf(out->reason, sizeof(out->reason),
				 "kernel.shmall allows %llu pages in all, below %s: raise kernel.shmall",
				 (unsigned long long)lim.shmall, hpshm_size_format(rq->size, sz, sizeof(sz)));
			snprintf(out->fix, sizeof(out->fix), "raise kernel.shmall to at least %zu pages",
				 rq->size / hpshm__port_base_page_size());
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
	long group = hpshm__linux_hugetlb_shm_group(), gid = (long)getegid();
	size_t base_pages = rq->size / hpshm__port_base_page_size();
	int rc;

	if ((rc = hpshm__hugetlb_requirements(rq, fn, user)) != 0)
		return rc;

	hpshm__requirement_init(&r, "sysv_privilege");
	r.met = hpshm__linux_has_cap_ipc_lock() || (group >= 0 && hpshm__linux_in_group(group) > 0);
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
	if (hpshm__linux_sysv_limits(&lim) < 0)
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

	if (hpshm__posix_sys.shmctl(id, IPC_STAT, &ds) < 0)
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
	unsigned bits = hpshm__linux_huge_bits(rq->page_size);
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
		id = hpshm__named_sysv_get(rq, rq->size - SYSV_MARK, (int)(IPC_CREAT | IPC_EXCL | SHM_HUGETLB | bits | mode),
					   err);
		if (id < 0)
			return id;
	} else {
		id = hpshm__posix_sys.shmget(IPC_PRIVATE, rq->size - SYSV_MARK,
				       (int)(IPC_CREAT | IPC_EXCL | SHM_HUGETLB | bits | mode));
		if (id < 0)
			return hpshm__sysv_shmget_error(rq, errno, err);
	}

	p = hpshm__posix_sys.shmat(id, rq->address, 0);
	if (p == (void *)-1) {
		saved = errno;                                 /* shmctl() below may clobber it */
		(void)hpshm__posix_sys.shmctl(id, IPC_RMID, NULL);   /* back out the segment */
		if (rq->address && saved == EINVAL)            /* aligned, so EINVAL means a clash */
			return hpshm__map_taken(err, "shmat", saved, rq, HPSHM__MAP_CREATE);
		/* The pages were reserved by shmget(): ENOMEM here is address space, not the pool. */
		return hpshm_error_set(err, saved == ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS, saved, "shmat",
				       saved == ENOMEM ? "check ulimit -v, or ask for less" : NULL,
				       "could not attach the %s SysV segment %d", sz, id);
	}

	/* Mark an unnamed one now, so a crash from here on leaves nothing behind (top comment). */
	if (!rq->name && hpshm__posix_sys.shmctl(id, IPC_RMID, NULL) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.shmdt(p);
		(void)hpshm__posix_sys.shmctl(id, IPC_RMID, NULL);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", NULL,
				       "could not mark SysV segment %d for removal", id);
	}
	if (rq->address && p != rq->address) {
		/* shmat() with an address maps there or fails; a mismatch means a broken kernel or shim. */
		if (rq->name)
			(void)hpshm__posix_sys.shmctl(id, IPC_RMID, NULL);
		(void)hpshm__posix_sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmat", "choose another base_address",
				       "the kernel attached at %p, not at base_address %p", p, rq->address);
	}

	hpshm__mapping_fill(m, p, rq->size, -1, id, NULL);
	/* A child's attach() must find this very segment, not the next one to get its id. */
	if ((rq->flags & HPSHM_REQ_REATTACH) && sysv_object(m, id) < 0) {
		saved = errno;
		if (rq->name)
			(void)hpshm__posix_sys.shmctl(id, IPC_RMID, NULL);
		(void)hpshm__posix_sys.shmdt(p);
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
	if (m->handle >= 0 && hpshm__posix_sys.shmctl((int)m->handle, IPC_STAT, &ds) == 0 && !(ds.shm_perm.mode & SHM_DEST)) {
		if (hpshm__posix_sys.shmctl((int)m->handle, IPC_RMID, NULL) < 0 && errno != EINVAL && errno != EIDRM)
			rc = HPSHM_ESYS;
	}
	if (hpshm__posix_sys.shmdt(m->addr) < 0)
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

	if (hpshm__posix_sys.shmctl(id, IPC_STAT, &ds) < 0) {
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
	p = hpshm__posix_sys.shmat(id, rq->address, 0);
	if (p == (void *)-1) {
		saved = errno;
		if (saved == EACCES)
			return hpshm_error_set(err, HPSHM_EACCES, saved, "shmat",
					       "run this process as the creator's user, or have the creator give the "
					       "segment a mode= that admits this user (mode=0660 and a group both are in)",
					       "this user may not attach SysV segment %d for reading and writing", id);
		if (saved == EINVAL || saved == EIDRM) {
			/* EINVAL is both "range taken" and "segment gone": ask which. */
			if (hpshm__posix_sys.shmctl(id, IPC_STAT, &ds) < 0)
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
		(void)hpshm__posix_sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shmat",
				       "attach earlier in the child's start-up, or set base_address to a free range",
				       "the kernel attached SysV segment %d at %p, not at %p", id, p, rq->address);
	}

	hpshm__mapping_fill(m, p, rq->size, -1, id, NULL);
	/* Read again now that we hold it: the segment attached is the one the object names. */
	if (sysv_object(m, id) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.shmdt(p);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shmctl", NULL, "could not read back SysV segment %d", id);
	}
	return 0;
}

/* Undo attach(): detach only; the segment belongs to its creator. */
static int sysv_detach(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	int rc = hpshm__posix_sys.shmdt(m->addr) < 0 ? HPSHM_ESYS : 0;

	(void)self;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	return rc;
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
	.scan        = hpshm__named_sysv_scan,
	.remove      = hpshm__named_sysv_remove,
	.lookup      = hpshm__named_sysv_lookup,
};
