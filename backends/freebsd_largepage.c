/* SPDX-License-Identifier: MIT */
/*
 * backends/freebsd_largepage.c -- shared memory in FreeBSD's large pages (superpages), from a
 * largepage POSIX shm object.
 *
 * Mechanism: shm_create_largepage(path, O_RDWR, psind, SHM_LARGEPAGE_ALLOC_DEFAULT, mode),
 * ftruncate(), mmap(MAP_SHARED).  path is SHM_ANON for an unnamed segment and
 * "/hpshm.<name>" (with O_EXCL) for a named one, the names plain gives its objects.  psind
 * is the index of the page size in the array getpagesizes() fills: index 0 is the base page,
 * 1 and up the sizes the pmap offers (amd64: 2MiB, 1GiB; arm64: 2MiB, 1GiB and more).
 *
 * Operator setup: none beyond superpages being on (vm.pmap.pg_ps_enabled=1, the default on
 * amd64 and arm64).  There is no pool: the pages come from free, physically contiguous memory
 * when the object is sized.
 *
 * Kernel facts, and what we do about them:
 *   - The memory is allocated by ftruncate(), not by the first touch: with
 *     SHM_LARGEPAGE_ALLOC_DEFAULT the kernel defragments once and then fails with ENOMEM if
 *     it still finds too little contiguous memory.  That ENOMEM is "unavailable" (the walk
 *     moves on), and no late fault can raise SIGBUS for want of memory: no populate advice.
 *   - ENOTTY from shm_create_largepage(): the kernel has no large page objects on this
 *     platform.  ENOSYS: a kernel older than FreeBSD 13.  Both are unavailable.
 *   - A mapping's address and length must be multiples of the large page (EINVAL otherwise);
 *     the core hands both so.  The kernel aligns a mapping whose address it chooses.
 *   - A fixed address is asked for with MAP_FIXED | MAP_EXCL, which fails (EINVAL) rather than
 *     replace what is mapped there (hpshm__map_at() in backends/fixmap.c).
 *   - The object records its psind: FIOGSHMLPGCNF on the descriptor reads it back, which is
 *     how attach() checks an inherited descriptor and how the port verifies the page size
 *     (ports/freebsd/pages.c, with mincore()'s MINCORE_PSIND for the mapping itself).
 *
 * Capabilities: HUGE, REATTACH, NAMED, FD.
 *
 * Re-attach: an unnamed segment by its inherited descriptor ("fd=<n>", FD_CLOEXEC cleared
 * just before exec by the spawn helper); a named one by name ("path=/hpshm.<name>").  Either
 * is mapped at the creator's address with MAP_FIXED | MAP_EXCL.  Named segments share plain's
 * interlock (backends/named.c): the creator and every attacher hold flock(LOCK_SH), and a
 * dead hpshm object under the name is removed by the next create.  FreeBSD keeps shm objects
 * in the kernel, where no POSIX call lists them: scan() lists none, and `hpshm ls` says so
 * (posixshmcontrol(1) lists them for an operator).
 *
 * What is FreeBSD's own here is the few lines under __FreeBSD__ below.  Elsewhere the file is
 * still compiled (CI does so on Linux, into an object nothing links), with those calls
 * answering as a kernel without large page objects would, so the rest keeps building.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __FreeBSD__
#include <sys/filio.h> /* FIOGSHMLPGCNF */
#include <sys/ioctl.h>
#endif

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"
#include "backends/named.h"

#define LP_DEFAULT_MODE 0600
#define LP_MAX_SIZES    8 /* getpagesizes() entries we read: FreeBSD's MAXPAGESIZES is 3 or 4 */

/* ---- the calls only FreeBSD has ---- */

#ifdef __FreeBSD__
/* The page sizes, index = psind (0: the base page).  The count, or -1 with errno. */
static int lp_pagesizes(size_t *out, int max)
{
	return getpagesizes(out, max);
}

/* A new largepage object: path SHM_ANON (NULL here) or a name made with O_EXCL.  fd or -1. */
static int lp_open(const char *path, int psind, mode_t mode)
{
	return shm_create_largepage(path ? path : SHM_ANON, O_RDWR | (path ? O_EXCL : 0), psind,
				    SHM_LARGEPAGE_ALLOC_DEFAULT, mode);
}

/* The psind a largepage object was made with: > 0, or -1 with errno (ENOTTY: not one). */
static int lp_psind_of(int fd)
{
	struct shm_largepage_conf conf;

	if (ioctl(fd, FIOGSHMLPGCNF, &conf) < 0)
		return -1;
	return conf.psind;
}
#else
static int lp_pagesizes(size_t *out, int max)
{
	if (max < 1)
		return 0;
	out[0] = hpshm__port_base_page_size(); /* the base page alone: no large page objects here */
	return 1;
}

static int lp_open(const char *path, int psind, mode_t mode)
{
	(void)path;
	(void)psind;
	(void)mode;
	errno = ENOTTY; /* what FreeBSD answers where its kernel has no large page objects */
	return -1;
}

static int lp_psind_of(int fd)
{
	(void)fd;
	errno = ENOTTY;
	return -1;
}
#endif

/* ---- page sizes ---- */

/* The psind of page_size (> 0), or -1 if it is not a large page size offered here. */
static int lp_psind(size_t page_size)
{
	size_t sizes[LP_MAX_SIZES];
	int n = lp_pagesizes(sizes, LP_MAX_SIZES);

	for (int i = 1; i < n && i < LP_MAX_SIZES; i++)
		if (sizes[i] == page_size)
			return i;
	return -1;
}

/* The large page sizes offered, psind 1 and up, into out->sizes.  Their count. */
static unsigned lp_offered(struct hpshm_probe *out)
{
	size_t sizes[LP_MAX_SIZES];
	int n = lp_pagesizes(sizes, LP_MAX_SIZES);

	out->nsizes = 0;
	for (int i = 1; i < n && i < LP_MAX_SIZES && out->nsizes < HPSHM_PROBE_SIZES; i++)
		if (sizes[i] != 0)
			out->sizes[out->nsizes++] = sizes[i];
	return out->nsizes;
}

/* Why a largepage object cannot be made (errno of shm_create_largepage()), or NULL. */
static const char *lp_unavailable(int sys_errno)
{
	switch (sys_errno) {
	case ENOTTY:
		return "this kernel has no large page shared memory objects on this platform";
	case ENOSYS:
		return "shm_create_largepage() needs FreeBSD 13.0 or later";
	case EINVAL:
		return "the kernel refused a large page object of this page size";
	default:
		return NULL;
	}
}

static int lp_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	char psz[32], list[96];
	size_t n;
	int psind, fd;

	(void)self;
	out->sys_errno = 0;
	out->reason[0] = '\0';
	out->fix[0] = '\0';
	out->page_size = 0;
	out->available = HPSHM_PAGES_UNKNOWN; /* no pool: free contiguous memory decides at create */
	out->advice = 0;
	if (lp_offered(out) == 0) {
		snprintf(out->reason, sizeof(out->reason),
			 "this system offers no page size above the base page (getpagesizes() lists one)");
		snprintf(out->fix, sizeof(out->fix),
			 "turn superpages on: vm.pmap.pg_ps_enabled=1 in /boot/loader.conf, then reboot");
		return HPSHM_EUNAVAILABLE;
	}
	if (rq->page_size == HPSHM_PAGE_SIZE_DEFAULT)
		out->page_size = out->sizes[0];
	else if (rq->page_size == HPSHM_PAGE_SIZE_LARGEST)
		out->page_size = out->sizes[out->nsizes - 1];
	else
		for (unsigned i = 0; i < out->nsizes; i++)
			if (out->sizes[i] == rq->page_size)
				out->page_size = rq->page_size;
	if (out->page_size == 0) {
		list[0] = '\0';
		for (unsigned i = 0; i < out->nsizes; i++) {
			n = strlen(list);
			snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				 hpshm_size_format(out->sizes[i], psz, sizeof(psz)));
		}
		snprintf(out->reason, sizeof(out->reason), "no %s pages here (large page sizes: %s)",
			 hpshm_size_format(rq->page_size, psz, sizeof(psz)), list);
		snprintf(out->fix, sizeof(out->fix), "set huge_page_size= to one of %s", list);
		return HPSHM_EUNAVAILABLE;
	}

	/* The one way to learn whether the kernel makes such objects: an empty unnamed one,
	 * which allocates nothing until it is sized. */
	psind = lp_psind(out->page_size);
	fd = lp_open(NULL, psind, LP_DEFAULT_MODE);
	if (fd < 0) {
		out->sys_errno = errno;
		snprintf(out->reason, sizeof(out->reason), "%s",
			 lp_unavailable(out->sys_errno) ? lp_unavailable(out->sys_errno)
							: "shm_create_largepage() failed");
		snprintf(out->fix, sizeof(out->fix), "use the plain provider, or FreeBSD 13 or later on amd64 or arm64");
		return HPSHM_EUNAVAILABLE;
	}
	(void)hpshm__posix_sys.close(fd);
	return 0;
}

/* ---- named objects ---- */

/* hpshm__named_create() makes our names with this instead of shm_open(). */
static int lp_named_open(const struct hpshm_request *rq, const char *path, mode_t mode)
{
	return lp_open(path, lp_psind(rq->page_size), mode);
}

static int lp_create_error(int sys_errno, const char *path, hpshm_error *err)
{
	const char *why = lp_unavailable(sys_errno);

	if (why)
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, sys_errno, "shm_create_largepage",
				       "use the plain provider", "could not create %s: %s", path, why);
	return hpshm_error_set(err, HPSHM_ESYS, sys_errno, "shm_create_largepage",
			       sys_errno == EACCES ? "check the user's rights on POSIX shared memory" : NULL,
			       "could not create the large page object %s", path);
}

/* What backends/named.c needs to know about our named objects: shm names in the kernel. */
static const struct hpshm__names lp_names = {
	.shm_names    = 1,
	.shm_dir      = NULL, /* FreeBSD keeps them in the kernel, not as files */
	.fs_magic     = 0,
	.fs_name      = NULL,
	.noun         = "large page shared memory",
	.owner        = "the object's owner",
	.provider     = "freebsd_largepage",
	.create_error = lp_create_error,
	.shm_create   = lp_named_open,
};

/* ---- create, destroy ---- */

static int lp_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		     hpshm_error *err)
{
	char path[HPSHM_PATH_MAX];
	char sz[32], psz[32];
	int fd, linked = 0, psind, saved, rc;
	void *p;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (rq->name && !hpshm__shm_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "use 1 to 200 characters without '/', other than \".\" and \"..\"",
				       "segment name \"%.64s\" cannot be a POSIX shared memory name", rq->name);
	if (!hpshm__size_fits_off_t(rq->size))
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, NULL, "%s does not fit in off_t", sz);
	psind = lp_psind(rq->page_size);
	if (psind < 0)
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, 0, "getpagesizes", "set huge_page_size= to a size probe lists",
				       "%s is not a large page size of this system", psz);

	path[0] = '\0';
	if (rq->name) {
		snprintf(path, sizeof(path), HPSHM__SHM_PREFIX "%s", rq->name);
		fd = hpshm__named_create(&lp_names, rq, path, rq->mode ? rq->mode & 0777 : LP_DEFAULT_MODE, &linked, err);
		if (fd < 0)
			return fd;
	} else {
		fd = lp_open(NULL, psind, LP_DEFAULT_MODE);
		if (fd < 0)
			return lp_create_error(errno, "an unnamed object", err);
	}

	/* The pages are allocated here, physically contiguous. */
	if (hpshm__posix_sys.ftruncate(fd, (off_t)rq->size) < 0) {
		saved = errno;
		if (linked)
			(void)hpshm__posix_sys.shm_unlink(path); /* still locked: nobody replaced it */
		(void)hpshm__posix_sys.close(fd);
		if (saved == ENOMEM)
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "ftruncate",
					       "free memory, create the segment earlier (before memory is fragmented), or use "
					       "smaller pages (huge_page_size=)",
					       "not enough free contiguous memory for %s of %s pages", sz, psz);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "ftruncate", NULL,
				       "could not size the large page object to %s", sz);
	}

	p = hpshm__map_at(rq, MAP_SHARED, fd);
	if (p == MAP_FAILED) {
		saved = errno; /* shm_unlink() and close() below may clobber it */
		if (linked)
			(void)hpshm__posix_sys.shm_unlink(path);
		(void)hpshm__posix_sys.close(fd);
		switch (saved) {
		case ENOMEM:
			return hpshm_error_set(err, HPSHM_ENOMEM, saved, "mmap", "check ulimit -v, or ask for less",
					       "no room to map %s", sz);
		case EEXIST:
			return hpshm__map_taken(err, "mmap", saved, rq, HPSHM__MAP_CREATE);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL, "could not map %s of %s pages",
					       sz, psz);
		}
	}

	if (rq->name) {
		rc = hpshm__named_publish(&lp_names, rq, path, fd, linked, (char *)p + rq->size - HPSHM_HEADER_REGION,
					  err);
		if (rc < 0) {
			(void)hpshm__posix_sys.munmap(p, rq->size);
			if (linked)
				(void)hpshm__posix_sys.shm_unlink(path);
			(void)hpshm__posix_sys.close(fd);
			return rc;
		}
	}
	hpshm__mapping_fill(m, p, rq->size, fd, -1, path);
	return 0;
}

static int lp_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	return hpshm__named_destroy(&lp_names, m);
}

/* ---- re-attach ---- */

static int lp_attach(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		     const char *id, hpshm_error *err)
{
	const char *spawn_hint = "start the child with hpshm_child_spawn(), which keeps the descriptor open across exec";
	char what[HPSHM_PATH_MAX + 32];
	char sz[32], psz[32], have[32];
	struct stat st;
	int fd = -1, named = 0, psind, saved;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (strncmp(id, "path=", 5) == 0) {
		if (!hpshm__shm_path_ok(id + 5))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
					       "\"%.64s\" is not the name of an hpshm shared memory object", id + 5);
		snprintf(what, sizeof(what), "large page shared memory %s", id + 5);
		named = 1;
		fd = hpshm__named_attach(&lp_names, id + 5, err); /* takes LOCK_SH */
		if (fd < 0)
			return fd;
	} else if (hpshm__id_parse(id, "fd=", &fd) == 0) {
		snprintf(what, sizeof(what), "descriptor %d", fd);
	} else {
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is neither fd=<descriptor> nor path=/hpshm.<name>", id);
	}

	/* A stray descriptor number must not map some other object: a largepage object of the
	 * segment's page size, exactly as long as the segment (an edited size must not map part
	 * of it). */
	if (hpshm__posix_sys.fstat(fd, &st) < 0) {
		saved = errno;
		if (named)
			(void)hpshm__posix_sys.close(fd);
		if (saved == EBADF)
			return hpshm_error_set(err, HPSHM_EINVAL, saved, "fstat", spawn_hint,
					       "descriptor %d is not open in this process", fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fstat", NULL, "could not inspect %s", what);
	}
	psind = lp_psind_of(fd);
	if (psind <= 0 || lp_psind(rq->page_size) != psind || st.st_size < 0 || (uint64_t)st.st_size != (uint64_t)rq->size) {
		saved = psind < 0 ? errno : 0;
		if (named)
			(void)hpshm__posix_sys.close(fd);
		hpshm_size_format(st.st_size > 0 ? (size_t)st.st_size : 0, have, sizeof(have));
		return hpshm_error_set(err, HPSHM_EINVAL, saved, psind < 0 ? "ioctl" : NULL,
				       named ? "pass the creator's token unchanged" : spawn_hint,
				       "%s is not the segment's object (%s of %s pages, %s long)", what,
				       psind < 0 ? "not a large page object" : "a large page object", psz, have);
	}
	/* The name stays its creator's: detach never unlinks it. */
	return hpshm__fd_attach_map(m, rq, fd, named ? id + 5 : NULL, what, err);
}

/* ---- named objects on the machine ---- */

/*
 * FreeBSD keeps POSIX shm objects in the kernel, and no POSIX call lists them: nothing to
 * list, by design rather than by failure, as for plain there (an error would make `hpshm ls`
 * useless for every other provider); `hpshm ls` says these are not shown.
 */
static int lp_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	(void)self;
	(void)fn;
	(void)user;
	return 0;
}

/* lookup(): the shm name "/hpshm.<name>", opened by name as attach() opens it. */
static int lp_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
		     hpshm_error *err)
{
	char path[HPSHM_PATH_MAX];

	(void)self;
	if (!hpshm__shm_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL, NULL,
				       "\"%.64s\" cannot be a POSIX shared memory name", rq->name);
	snprintf(path, sizeof(path), HPSHM__SHM_PREFIX "%s", rq->name);
	return hpshm__named_lookup(&lp_names, path, rq->name, f, err);
}

static int lp_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
{
	(void)self;
	if (!hpshm__shm_path_ok(f->id))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
				       "\"%.64s\" is not the name of an hpshm shared memory object", f->id);
	return hpshm__named_remove(&lp_names, f, err);
}

const struct hpshm_provider hpshm__provider_freebsd_largepage = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "freebsd_largepage",
	.summary     = "FreeBSD large pages from a largepage POSIX shm object (shm_create_largepage)",
	.caps        = HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED | HPSHM_CAP_FD,
	.probe       = lp_probe,
	.create      = lp_create,
	.destroy     = lp_destroy,
	.identify    = hpshm__fd_identify,
	.attach      = lp_attach,
	.detach      = hpshm__fd_unmap, /* unmap and close (dropping our lock); the creator owns the name */
	.scan        = lp_scan,
	.remove      = lp_remove,
	.lookup      = lp_lookup,
};
