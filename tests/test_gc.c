/* SPDX-License-Identifier: MIT */
/*
 * tests/test_gc.c -- `hpshm ls`, `hpshm gc` and named creates against what others put in
 * hpshm's name space, and against creators killed at the worst moments.
 *
 * Anyone can put something under an hpshm name: a FIFO or a symbolic link in /dev/shm or a
 * hugetlbfs mount, a SysV segment whose key falls in hpshm's range.  None of it may hang the
 * tools, be followed, or be removed; only what proves it is hpshm's (its header, or the mark
 * a provider gives an object from the moment it exists) is removed by default, and
 * headerless debris only with --force (HPSHM_REMOVE_FORCE).  The other side of that rule: a
 * create killed at any moment must leave nothing that gc cannot prove is hpshm's, so kills
 * are placed exactly (a system call table entry that SIGKILLs its own process in a forked
 * child) and at random (SIGKILL of `hpshm run`), and the huge page pool must come back.
 *
 * Every file a test makes is named hpshm.gc<pid>-*, and every SysV segment is remembered by
 * id or by the pid that created it; a test removes what it made, and the suite's .fini removes
 * whatever a failed one left before the pool-leak fixture compares the machine.  The tool is
 * always run with an alarm that kills it after TOOL_LIMIT seconds: a tool blocked on a FIFO
 * fails the test instead of hanging the suite.  Root only (other users' objects,
 * SysV hugetlb); the hugetlb tests want a few free huge pages and skip without them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "base/header.h"
#include "fixture.h"
#include "hpshm.h"
#include "posix/sys.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

#define TOOL_LIMIT   20      /* seconds a tool run may take before SIGALRM ends it: a bound on a
			      * run blocked on a FIFO, not a judge of speed (under qemu-user,
			      * beside another lane of CI, one run can take seconds) */
#define NOBODY_A     65533   /* two unprivileged users for the sticky /dev/shm tests */
#define NOBODY_B     65534
#define RUN_KILLS     200    /* random SIGKILLs of `hpshm run` in the pool test */
#define RUN_KILLS_MAX 5000   /* the most HPSHM_TEST_RUN_KILLS may ask for */
#define FOREIGN_DATA "NOT-AN-HPSHM-HEADER: another program's data"

/* ---- names, paths, and what a test leaves if it fails ---- */

static char prefix[32];
static int made_ids[64];      /* SysV segments a test made or had made */
static int nmade;
static pid_t made_by[RUN_KILLS_MAX + 8]; /* processes whose SysV segments are the test's */
static int nmade_by;

static void names_init(void)
{
	snprintf(prefix, sizeof prefix, "gc%ld-", (long)getpid());
}

static void remember_id(int id)
{
	if (id >= 0 && nmade < (int)(sizeof made_ids / sizeof made_ids[0]))
		made_ids[nmade++] = id;
}

static void remember_creator(pid_t pid)
{
	if (nmade_by < (int)(sizeof made_by / sizeof made_by[0]))
		made_by[nmade_by++] = pid;
}

/* Remove hpshm.<prefix>* from dir, without hpshm: after a failure the library is suspect. */
static void sweep_dir(const char *dir)
{
	char pat[64], path[600];
	struct dirent *e;
	DIR *d;

	if (!dir || !(d = opendir(dir)))
		return;
	snprintf(pat, sizeof pat, "hpshm.%s", prefix);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, pat, strlen(pat)) == 0) {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			(void)unlink(path);
		}
	closedir(d);
}

static int sysv_by_creators(const pid_t *pids, int npids, int *ids, int max);
static const char *test_mount(void);

static time_t test_started; /* a segment made before it is never the test's, whatever its creator pid */

static void gc_init(void)
{
	names_init();
	nmade = nmade_by = 0;
	test_started = time(NULL);
	hpt_fixture_init();
}

/* Whatever a failed test left of its own goes before the fixture compares the machine. */
static void gc_fini(void)
{
	int ids[64], n = sysv_by_creators(made_by, nmade_by, ids, 64);

	for (int i = 0; i < n; i++)
		(void)shmctl(ids[i], IPC_RMID, NULL);
	for (int i = 0; i < nmade; i++)
		(void)shmctl(made_ids[i], IPC_RMID, NULL);
	sweep_dir("/dev/shm");
	sweep_dir(test_mount());
	hpt_fixture_fini();
}

TestSuite(gc, .init = gc_init, .fini = gc_fini);

/* ---- machine facts ---- */

/* /dev/shm/hpshm.<prefix><name>, or the same in dir. */
static const char *obj_path(const char *dir, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/hpshm.%s%s", dir ? dir : "/dev/shm", prefix, name);
	return buf;
}

static void need_root(void)
{
	if (geteuid() != 0)
		HPT_UNAVAILABLE("root", NULL, "these tests need root (other users' objects, SysV hugetlb)");
}

static const char *test_mount(void)
{
	const char *m = getenv("HPSHM_TEST_HUGETLBFS");

	return m && *m ? m : NULL;
}

/*
 * Under an emulator, can a SysV hugetlb segment be made, attached and seen as hugetlb memory?
 * The tests built on SysV debris need all three, since `hpshm ls` and `gc` prove a segment is
 * hpshm's by its hugetlb backing in /proc/self/smaps.  qemu-i386 keeps the 32-bit guest at an
 * offset in its own address space (2MiB with -p 2097152) and passes the host's smaps through
 * unchanged, so no guest address there names the segment: the tests then skip, saying so.
 */
static void need_sysv_hugetlb(size_t ps)
{
	void *at;
	size_t seen = 0;
	int id, e, ht = 0;

	if (!hpt_emulator())
		return;
	id = shmget(IPC_PRIVATE, ps, IPC_CREAT | SHM_HUGETLB | 0600);
	if (id < 0) {
		e = errno;
		if (e == EINVAL)
			HPT_SKIP("under %s shmget() of a hugetlb segment answers EINVAL", hpt_emulator());
		return;
	}
	at = shmat(id, NULL, 0);
	e = errno;
	if (at != (void *)-1) {
		seen = hpt_smaps_page_size(at, &ht);
		(void)shmdt(at);
	}
	(void)shmctl(id, IPC_RMID, NULL);
	if (at == (void *)-1)
		HPT_SKIP("under %s a SysV hugetlb segment cannot be attached (shmat: %s)", hpt_emulator(), strerror(e));
	if (seen != ps || !ht)
		HPT_SKIP("under %s /proc/self/smaps does not show a SysV hugetlb segment at the address the program "
			 "sees, so hpshm cannot prove such a segment is its own", hpt_emulator());
}

/* The default huge page size, with at least pages free beyond what is reserved, or skip. */
static size_t need_pool(unsigned long pages)
{
	size_t ps = hpt_default_huge_page_size();
	struct hpt_pool p;

	if (ps == 0 || hpt_pool_read(ps, &p) < 0 || hpt_pool_available(&p) < pages)
		HPT_UNAVAILABLE("pool", NULL, "needs %lu free huge pages of the default size", pages);
	return ps;
}

/* need_pool() for a test on SysV hugetlb segments, which must also be seen as such. */
static size_t need_sysv_pool(unsigned long pages)
{
	size_t ps = need_pool(pages);

	need_sysv_hugetlb(ps);
	return ps;
}

static int exists_as(const char *path, mode_t type)
{
	struct stat st;

	return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

static int sysv_exists(int id)
{
	struct shmid_ds ds;

	return shmctl(id, IPC_STAT, &ds) == 0;
}

/* ---- the tool, with a time limit ---- */

struct tool_run {
	int    status;       /* exit code, 128 + signal */
	double seconds;      /* how long it ran */
	char   out[131072];  /* standard output and error, NUL-terminated */
};

static struct tool_run run;

/* Run the tool with args (NULL-terminated), killed by SIGALRM after TOOL_LIMIT seconds. */
static struct tool_run *tool(const char *a0, ...)
{
	static char args[16][256];
	char *argv[16];
	struct timespec t0, t1;
	size_t n = 0;
	int argc = 1, fds[2], status;
	va_list ap;
	pid_t pid;

	snprintf(args[0], sizeof args[0], "%s", HPSHM_TOOL_PATH);
	argv[0] = args[0];
	va_start(ap, a0);
	for (const char *a = a0; a && argc < 15; a = va_arg(ap, const char *), argc++) {
		snprintf(args[argc], sizeof args[argc], "%s", a);
		argv[argc] = args[argc];
	}
	va_end(ap);
	argv[argc] = NULL;
	memset(&run, 0, sizeof run);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fflush(NULL);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		alarm(TOOL_LIMIT); /* survives exec: a blocked tool dies of SIGALRM */
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t r = read(fds[0], run.out + n, sizeof run.out - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof run.out - 1)
			break;
	}
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	run.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return &run;
}

/* The tool ran to its end: not blocked, not killed by the alarm. */
static void assert_finished(const struct tool_run *r, const char *what)
{
	cr_assert_neq(r->status, 128 + SIGALRM, "`hpshm %s` was still running after %d s (blocked?), %.1f s in "
		      "all:\n%s", what, TOOL_LIMIT, r->seconds, r->out);
	cr_assert_eq(r->status, 0, "`hpshm %s` exited %d:\n%s", what, r->status, r->out);
}

/* ---- the library's list ---- */

struct want {
	const char  *id;    /* the object's id */
	int          hit;   /* found */
	hpshm_object obj;   /* as listed */
};

static int want_one(void *user, const hpshm_object *o)
{
	struct want *w = user;

	if (strcmp(o->id, w->id) != 0)
		return 0;
	w->hit = 1;
	w->obj = *o;
	return 1;
}

/* Is id listed?  1 with *out filled, or 0. */
static int listed(const char *id, hpshm_object *out)
{
	struct want w;
	hpshm_error err;
	int rc;

	memset(&w, 0, sizeof w);
	w.id = id;
	memset(&err, 0, sizeof err);
	rc = hpshm_objects_list(want_one, &w, &err);
	cr_assert_geq(rc, 0, "hpshm_objects_list: %s: %s", hpshm_errname(rc), err.message);
	if (w.hit && out)
		*out = w.obj;
	return w.hit;
}

/* ---- segments made the way the tests need them ---- */

static hpshm_config *config(const char *kv)
{
	hpshm_config *cfg;
	hpshm_error err;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
	return cfg;
}

static int sysv_made_by_a_dead_process_at(key_t key, size_t size, int huge, const char *tail, size_t tail_at,
					   uid_t owner);

/*
 * In a child that then exits (so the creator is dead): shmget(key, size) with SHM_HUGETLB if
 * huge, and when tail is set, tail written at the start of the last 4 KiB.  The id, or -1 with
 * the child's errno.
 */
static int sysv_made_by_a_dead_process(key_t key, size_t size, int huge, const char *tail)
{
	return sysv_made_by_a_dead_process_at(key, size, huge, tail, size - 4096, 0);
}

/* The same with tail written at byte tail_at of the mapping, and the owner (IPC_SET) uid
 * owner unless it is 0. */
static int sysv_made_by_a_dead_process_at(key_t key, size_t size, int huge, const char *tail, size_t tail_at,
					   uid_t owner)
{
	int fds[2], id = -1, status;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int v = shmget(key, size, IPC_CREAT | IPC_EXCL | 0600 | (huge ? SHM_HUGETLB : 0));

		if (v >= 0 && tail) {
			char *p = shmat(v, NULL, 0);

			if (p == (void *)-1)
				v = -errno;
			else {
				memcpy(p + tail_at, tail, strlen(tail));
				shmdt(p);
			}
		} else if (v < 0) {
			v = -errno;
		}
		if (v >= 0 && owner != 0) {
			struct shmid_ds ds;

			if (shmctl(v, IPC_STAT, &ds) < 0)
				v = -errno;
			else {
				ds.shm_perm.uid = owner;
				if (shmctl(v, IPC_SET, &ds) < 0)
					v = -errno;
			}
		}
		(void)!write(fds[1], &v, sizeof v);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &id, sizeof id), (ssize_t)sizeof id);
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (id < 0) {
		errno = -id;
		return -1;
	}
	remember_id(id);
	return id;
}

/* A key in hpshm's named range for this run: never one a name of this run hashes to, by luck only. */
static key_t foreign_key(int n)
{
	return (key_t)(0x48000000u | (((unsigned)getpid() * 16u + (unsigned)n) & 0x00ffffffu));
}

/* ---- a FIFO or a symbolic link under an hpshm name ---- */

/* ls and gc finish at once, list the object as foreign and leave it where it was. */
static void foreign_file_is_listed_and_kept(const char *path, mode_t type, const char *shm_id)
{
	hpshm_object o;
	struct tool_run *r;
	char needle[300];

	r = tool("ls", NULL);
	assert_finished(r, "ls");
	cr_assert(hpt_contains(r->out, shm_id), "`hpshm ls` does not name %s:\n%s", shm_id, r->out);
	r = tool("ls", "--json", NULL);
	assert_finished(r, "ls --json");
	snprintf(needle, sizeof needle, "\"id\": \"%s\"", shm_id);
	cr_assert(hpt_contains(r->out, needle), "`hpshm ls --json` does not list %s:\n%s", shm_id, r->out);
	cr_assert(hpt_contains(r->out, "\"state\": \"foreign\""), "`hpshm ls --json` shows no foreign object:\n%s",
		  r->out);
	r = tool("gc", NULL);
	assert_finished(r, "gc");
	cr_assert(exists_as(path, type), "`hpshm gc` removed or changed %s:\n%s", path, r->out);
	r = tool("gc", "--force", NULL);
	assert_finished(r, "gc --force");
	cr_assert(exists_as(path, type), "`hpshm gc --force` removed or changed %s:\n%s", path, r->out);

	cr_assert(listed(shm_id, &o), "%s is not listed", shm_id);
	cr_assert_eq(o.state, HPSHM_OBJECT_FOREIGN, "%s is listed as state %d, not foreign (%s)", shm_id, o.state,
		     o.note);
	cr_assert_neq(hpshm_objects_remove(&o, HPSHM_REMOVE_FORCE, NULL), 0);
	cr_assert(exists_as(path, type), "a forced remove took %s", path);
}

/* A named create over path fails at once, with HPSHM_EEXIST saying what is there, and leaves it. */
static void create_over_is_refused(const char *kv, size_t size, const char *path, mode_t type, const char *word)
{
	hpshm_config *cfg = config(kv);
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	alarm(TOOL_LIMIT); /* a create blocked on a FIFO dies of SIGALRM: the test fails, the suite goes on */
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, size, cfg, &err);
	alarm(0);
	if (rc == 0)
		hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
	cr_assert_eq(rc, HPSHM_EEXIST, "create over %s: %s, want HPSHM_EEXIST: %s", path, hpshm_errname(rc), err.message);
	cr_assert(hpt_contains(err.message, word), "the message does not say \"%s\": %s", word, err.message);
	cr_assert(err.hint[0] != '\0', "no hint with: %s", err.message);
	cr_assert(exists_as(path, type), "the create removed or changed %s", path);
}

Test(gc, a_fifo_in_dev_shm_is_foreign_to_ls_and_gc_and_blocks_nothing, .timeout = 60)
{
	char path[256], id[256], kv[256];

	need_root();
	obj_path(NULL, "fifo", path, sizeof path);
	snprintf(id, sizeof id, "/hpshm.%sfifo", prefix);
	cr_assert_eq(mkfifo(path, 0644), 0, "mkfifo %s: %s", path, strerror(errno));
	foreign_file_is_listed_and_kept(path, S_IFIFO, id);
	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,name=%sfifo", prefix);
	create_over_is_refused(kv, 65536, path, S_IFIFO, "FIFO");
	cr_assert_eq(unlink(path), 0);
}

Test(gc, a_symbolic_link_in_dev_shm_is_foreign_never_followed_and_kept, .timeout = 60)
{
	char path[256], id[256], kv[256], target[] = "/tmp/hpshm-gc-target.XXXXXX";
	struct stat st;
	int fd;

	need_root();
	/* The link points at a file that looks like a dead hpshm segment: following it would be wrong. */
	fd = mkstemp(target);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 65536), 0);
	close(fd);
	obj_path(NULL, "link", path, sizeof path);
	snprintf(id, sizeof id, "/hpshm.%slink", prefix);
	cr_assert_eq(symlink(target, path), 0, "symlink %s: %s", path, strerror(errno));
	foreign_file_is_listed_and_kept(path, S_IFLNK, id);
	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,name=%slink", prefix);
	create_over_is_refused(kv, 65536, path, S_IFLNK, "symbolic link");
	cr_assert_eq(stat(target, &st), 0, "the link's target is gone");
	cr_assert_eq(st.st_size, 65536, "the link's target was changed");
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(unlink(target), 0);
}

Test(gc, a_fifo_and_a_link_on_the_hugetlbfs_mount_are_foreign_and_kept, .timeout = 90)
{
	char fifo[512], link[512], kv[768], psz[32];
	size_t ps;

	need_root();
	if (!test_mount())
		HPT_UNAVAILABLE("hugetlbfs", NULL, "HPSHM_TEST_HUGETLBFS names no hugetlbfs mount");
	ps = need_pool(2);
	obj_path(test_mount(), "fifo", fifo, sizeof fifo);
	obj_path(test_mount(), "link", link, sizeof link);
	cr_assert_eq(mkfifo(fifo, 0644), 0, "mkfifo %s: %s", fifo, strerror(errno));
	foreign_file_is_listed_and_kept(fifo, S_IFIFO, fifo);
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,huge_page_size=%s,hugetlbfs_path=%s,name=%sfifo",
		 hpt_size_text(ps, psz, sizeof psz), test_mount(), prefix);
	create_over_is_refused(kv, ps, fifo, S_IFIFO, "FIFO");
	cr_assert_eq(unlink(fifo), 0);
	/* Some kernels' hugetlbfs has no symbolic links at all (EINVAL): then none can be put there. */
	if (symlink("/etc/hostname", link) < 0) {
		cr_log_info("no symbolic link on %s: %s", test_mount(), strerror(errno));
		return;
	}
	foreign_file_is_listed_and_kept(link, S_IFLNK, link);
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,huge_page_size=%s,hugetlbfs_path=%s,name=%slink",
		 hpt_size_text(ps, psz, sizeof psz), test_mount(), prefix);
	create_over_is_refused(kv, ps, link, S_IFLNK, "symbolic link");
	cr_assert_eq(unlink(link), 0);
}

/* ---- files without hpshm's header ---- */

/* A file of size bytes at path: zeros, or data at the start of its last 4 KiB. */
static void make_file(const char *path, size_t size, const char *tail)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	if (tail)
		cr_assert_eq(pwrite(fd, tail, strlen(tail), (off_t)size - 4096), (ssize_t)strlen(tail));
	close(fd);
}

Test(gc, a_headerless_file_is_debris_that_only_a_forced_gc_removes)
{
	char path[256], id[256];
	hpshm_object o;
	hpshm_error err;

	need_root();
	obj_path(NULL, "bare", path, sizeof path);
	snprintf(id, sizeof id, "/hpshm.%sbare", prefix);
	make_file(path, 65536, NULL);
	cr_assert(listed(id, &o), "%s is not listed", id);
	cr_assert_eq(o.state, HPSHM_OBJECT_DEBRIS, "%s is state %d (%s), not debris", id, o.state, o.note);
	cr_assert_eq(o.alive, 0);
	assert_finished(tool("gc", NULL), "gc");
	cr_assert(exists_as(path, S_IFREG), "`hpshm gc` without --force removed the headerless %s:\n%s", path, run.out);
	cr_assert_eq(hpshm_objects_remove(&o, 0, &err), HPSHM_EINVAL, "remove of debris without force");
	cr_assert(exists_as(path, S_IFREG));
	cr_assert_eq(hpshm_objects_remove(&o, HPSHM_REMOVE_FORCE, &err), 0, "forced remove: %s", err.message);
	cr_assert(!exists_as(path, S_IFREG), "the forced remove left %s", path);
}

Test(gc, a_file_whose_tail_is_not_hpshms_header_is_foreign_even_to_a_forced_gc)
{
	char path[256], id[256];
	hpshm_object o;

	need_root();
	obj_path(NULL, "junk", path, sizeof path);
	snprintf(id, sizeof id, "/hpshm.%sjunk", prefix);
	make_file(path, 65536, FOREIGN_DATA);
	cr_assert(listed(id, &o), "%s is not listed", id);
	cr_assert_eq(o.state, HPSHM_OBJECT_FOREIGN, "%s is state %d (%s), not foreign", id, o.state, o.note);
	assert_finished(tool("gc", "--force", NULL), "gc --force");
	cr_assert(exists_as(path, S_IFREG), "`hpshm gc --force` removed %s", path);
	cr_assert_eq(unlink(path), 0);
}

/* ---- SysV segments in hpshm's key range that are not hpshm's ---- */

Test(gc, another_programs_4k_segment_in_the_key_range_survives_gc)
{
	hpshm_object o;
	char id[32];
	int shm;

	need_root();
	shm = sysv_made_by_a_dead_process(foreign_key(1), 4096, 0, NULL);
	cr_assert_geq(shm, 0, "shmget: %s", strerror(errno));
	snprintf(id, sizeof id, "shm=%d", shm);
	assert_finished(tool("gc", NULL), "gc");
	{
		int survived = sysv_exists(shm), foreign = listed(id, &o) && o.state == HPSHM_OBJECT_FOREIGN;

		assert_finished(tool("gc", "--force", NULL), "gc --force");
		survived = survived && sysv_exists(shm);
		(void)shmctl(shm, IPC_RMID, NULL);
		cr_assert(survived, "`hpshm gc` removed another program's 4 KiB segment %d", shm);
		cr_assert(foreign, "segment %d is not listed as foreign", shm);
	}
}

Test(gc, a_hugetlb_segment_with_a_foreign_header_survives_even_a_forced_gc)
{
	hpshm_object o;
	hpshm_error err;
	size_t ps;
	char id[32];
	int shm, survived, state = -1, rc;

	need_root();
	ps = need_sysv_pool(2);
	shm = sysv_made_by_a_dead_process(foreign_key(2), ps, 1, FOREIGN_DATA);
	cr_assert_geq(shm, 0, "shmget: %s", strerror(errno));
	snprintf(id, sizeof id, "shm=%d", shm);
	if (listed(id, &o))
		state = o.state;
	rc = hpshm_objects_remove(&o, HPSHM_REMOVE_FORCE, &err);
	survived = sysv_exists(shm);
	(void)shmctl(shm, IPC_RMID, NULL);
	cr_assert_eq(state, HPSHM_OBJECT_FOREIGN, "segment %d is state %d, not foreign", shm, state);
	cr_assert(survived && rc != 0, "a forced remove took segment %d with a foreign header", shm);
}

Test(gc, a_headerless_hugetlb_segment_survives_gc_and_goes_only_with_force)
{
	hpshm_object o;
	hpshm_error err;
	size_t ps;
	long before;
	char id[32];
	int shm, survived, listed_debris, rc;

	need_root();
	ps = need_sysv_pool(2);
	before = hpt_pages_held(ps);
	shm = sysv_made_by_a_dead_process(foreign_key(3), ps, 1, NULL);
	cr_assert_geq(shm, 0, "shmget: %s", strerror(errno));
	snprintf(id, sizeof id, "shm=%d", shm);
	listed_debris = listed(id, &o) && o.state == HPSHM_OBJECT_DEBRIS;
	assert_finished(tool("gc", NULL), "gc");
	survived = sysv_exists(shm);
	memset(&err, 0, sizeof err);
	rc = hpshm_objects_remove(&o, HPSHM_REMOVE_FORCE, &err);
	if (sysv_exists(shm)) {
		(void)shmctl(shm, IPC_RMID, NULL);
		cr_assert_fail("a forced remove left the headerless segment %d: %s: %s", shm, hpshm_errname(rc), err.message);
	}
	cr_assert(listed_debris, "segment %d is not listed as debris", shm);
	cr_assert(survived, "`hpshm gc` without --force removed the headerless segment %d", shm);
	cr_assert_eq(rc, 0);
	cr_assert_eq(hpt_pages_held(ps), before, "the pool did not come back");
}

/*
 * A segment SYSV_MARK (0x48) bytes short of a whole huge page, hpshm's creation mark, with
 * another program's data in its tail: the size alone proves nothing (anyone may ask for it),
 * and the data says it is not a create of hpshm's killed before its header.  Foreign: listed
 * so, and kept by gc and by a forced gc.
 */
static void marked_size_with_data_is_foreign(key_t key)
{
	hpshm_object o;
	hpshm_error err;
	size_t ps;
	char id[32];
	int shm, state = -1, after_gc, after_force, rc;

	need_root();
	ps = need_sysv_pool(2);
	/* The tail is the last 4 KiB of the page the kernel maps, whatever shmget() was asked. */
	shm = sysv_made_by_a_dead_process_at(key, ps - 0x48, 1, FOREIGN_DATA, ps - 4096, NOBODY_A);
	cr_assert_geq(shm, 0, "shmget: %s", strerror(errno));
	snprintf(id, sizeof id, "shm=%d", shm);
	memset(&o, 0, sizeof o);
	if (listed(id, &o))
		state = o.state;
	assert_finished(tool("gc", NULL), "gc");
	after_gc = sysv_exists(shm);
	assert_finished(tool("gc", "--force", NULL), "gc --force");
	after_force = sysv_exists(shm);
	memset(&err, 0, sizeof err);
	rc = o.state == HPSHM_OBJECT_FOREIGN ? hpshm_objects_remove(&o, HPSHM_REMOVE_FORCE, &err) : -1;
	(void)shmctl(shm, IPC_RMID, NULL);
	cr_assert_eq(state, HPSHM_OBJECT_FOREIGN, "segment %d is state %d (%s), not foreign", shm, state, o.note);
	cr_assert(after_gc, "`hpshm gc` removed segment %d, whose tail holds another program's data", shm);
	cr_assert(after_force, "`hpshm gc --force` removed segment %d, whose tail holds another program's data", shm);
	cr_assert_neq(rc, 0, "a forced remove took segment %d", shm);
}

Test(gc, another_users_marked_size_segment_in_the_key_range_with_data_in_its_tail_is_foreign_and_kept)
{
	marked_size_with_data_is_foreign(foreign_key(4));
}

Test(gc, another_users_unnamed_marked_size_segment_with_data_in_its_tail_is_foreign_and_kept)
{
	marked_size_with_data_is_foreign(IPC_PRIVATE);
}

/* ---- creates killed at the worst moment ---- */

static struct hpshm__syscalls real;

static int shmget_then_die(key_t key, size_t size, int flags)
{
	int id = real.shmget(key, size, flags);

	if (id >= 0 && (flags & SHM_HUGETLB))
		raise(SIGKILL);
	return id;
}

static int ftruncate_then_die(int fd, off_t len)
{
	int rc = real.ftruncate(fd, len);

	raise(SIGKILL);
	return rc;
}

static void *mmap_then_die(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = real.mmap(addr, len, prot, flags, fd, off);

	if (fd >= 0 && (flags & MAP_SHARED))
		raise(SIGKILL);
	return p;
}

enum death { DIE_AFTER_SHMGET, DIE_AFTER_FTRUNCATE, DIE_AFTER_MMAP };

/* In a child, create as kv says and die of SIGKILL right after the call death names.  Its pid. */
static pid_t create_killed(const char *kv, size_t size, enum death death)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_config *cfg;
		hpshm_segment *seg;

		real = hpshm__posix_sys;
		if (death == DIE_AFTER_SHMGET)
			hpshm__posix_sys.shmget = shmget_then_die;
		else if (death == DIE_AFTER_FTRUNCATE)
			hpshm__posix_sys.ftruncate = ftruncate_then_die;
		else
			hpshm__posix_sys.mmap = mmap_then_die;
		if (hpshm_config_new(&cfg) < 0 || hpshm_config_parse(cfg, kv, NULL) < 0)
			_exit(2);
		(void)hpshm_segment_create(&seg, size, cfg, NULL);
		_exit(3); /* the kill did not come */
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	remember_creator(pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the creator was not killed in the window (status %#x)",
		  status);
	return pid;
}

/* SysV segments made since the test began whose creator (shm_cpid) is one of pids[0, npids): their ids, at most max. */
static int sysv_by_creators(const pid_t *pids, int npids, int *ids, int max)
{
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		long key, id, cp, lp, nattch, uid, gid, cuid, cgid;
		long long atime, dtime, changed;
		unsigned long perms, size;

		/* Pids are reused: a segment made before this test began is another program's, even
		 * when its creator had a pid one of the test's processes has now. */
		if (sscanf(line, "%ld %ld %lo %lu %ld %ld %ld %ld %ld %ld %ld %lld %lld %lld", &key, &id, &perms, &size, &cp,
			   &lp, &nattch, &uid, &gid, &cuid, &cgid, &atime, &dtime, &changed) != 14 ||
		    changed < (long long)test_started)
			continue;
		for (int i = 0; i < npids && n < max; i++)
			if (pids[i] == (pid_t)cp) {
				ids[n++] = (int)id;
				break;
			}
	}
	fclose(f);
	return n;
}

Test(gc, an_unnamed_sysv_create_killed_before_rmid_is_listed_dead_and_removed_by_gc)
{
	char kv[128], psz[32], id[32] = "";
	hpshm_object o;
	size_t ps;
	long before, during;
	pid_t creator;
	int ids[8], n, state = -1, left;

	need_root();
	ps = need_sysv_pool(4);
	before = hpt_pages_held(ps);
	snprintf(kv, sizeof kv, "provider=sysv_hugetlb,huge_pages=on,huge_page_size=%s", hpt_size_text(ps, psz, sizeof psz));
	creator = create_killed(kv, 2 * ps, DIE_AFTER_SHMGET);
	during = hpt_pages_held(ps);
	n = sysv_by_creators(&creator, 1, ids, 8);
	if (n == 1) {
		snprintf(id, sizeof id, "shm=%d", ids[0]);
		if (listed(id, &o))
			state = o.state;
	}
	assert_finished(tool("gc", NULL), "gc");
	left = n == 1 && sysv_exists(ids[0]);
	for (int i = 0; i < n; i++)
		(void)shmctl(ids[i], IPC_RMID, NULL);
	cr_assert_eq(n, 1, "the killed create left %d segments, not 1", n);
	cr_assert_gt(during, before, "the killed create reserved no pages: was it killed in the window?");
	cr_assert_eq(state, HPSHM_OBJECT_DEAD, "the unnamed debris is state %d, not dead", state);
	cr_assert(!left, "`hpshm gc` left the unnamed debris %s:\n%s", id, run.out);
	cr_assert_eq(hpt_pages_held(ps), before, "the pool did not come back");
}

Test(gc, a_named_sysv_create_killed_before_its_header_is_dead_removed_by_gc_and_recycled)
{
	char kv[256], psz[32], id[32] = "";
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_object o;
	hpshm_error err;
	size_t ps;
	long before;
	pid_t creators[2];
	int ids[8], n, state = -1, rc;

	need_root();
	ps = need_sysv_pool(4);
	before = hpt_pages_held(ps);
	snprintf(kv, sizeof kv, "provider=sysv_hugetlb,huge_pages=on,huge_page_size=%s,name=%skilled",
		 hpt_size_text(ps, psz, sizeof psz), prefix);
	/* Killed twice: the create between must recycle the first one's debris, gc the second's. */
	creators[0] = create_killed(kv, ps, DIE_AFTER_SHMGET);
	cfg = config(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, ps, cfg, &err);
	hpshm_config_free(cfg);
	if (rc == 0)
		hpshm_segment_destroy(seg);
	creators[1] = create_killed(kv, ps, DIE_AFTER_SHMGET);
	n = sysv_by_creators(creators, 2, ids, 8);
	if (n == 1) {
		snprintf(id, sizeof id, "shm=%d", ids[0]);
		if (listed(id, &o))
			state = o.state;
	}
	assert_finished(tool("gc", NULL), "gc");
	for (int i = 0; i < n; i++)
		if (sysv_exists(ids[i])) {
			for (int k = 0; k < n; k++)
				(void)shmctl(ids[k], IPC_RMID, NULL);
			cr_assert_fail("`hpshm gc` left the named debris shm=%d:\n%s", ids[i], run.out);
		}
	cr_assert_eq(rc, 0, "the create after a killed one did not recycle its debris: %s: %s", hpshm_errname(rc),
		     err.message);
	cr_assert_eq(n, 1, "the killed creates left %d segments, not 1", n);
	cr_assert_eq(state, HPSHM_OBJECT_DEAD, "the named debris is state %d, not dead", state);
	cr_assert_eq(hpt_pages_held(ps), before, "the pool did not come back");
}

/* A named file create killed mid-way leaves no file under its name, and no pages taken. */
static void file_create_killed_leaves_nothing(const char *kv, size_t size, const char *path, size_t ps)
{
	long before = ps ? hpt_pages_held(ps) : 0;
	int left;

	create_killed(kv, size, DIE_AFTER_FTRUNCATE);
	left = exists_as(path, S_IFREG);
	create_killed(kv, size, DIE_AFTER_MMAP);
	left |= exists_as(path, S_IFREG) << 1;
	(void)unlink(path);
	cr_assert(!(left & 1), "a create killed after ftruncate() left %s, which nothing proves is hpshm's", path);
	cr_assert(!(left & 2), "a create killed after mmap() left %s, which nothing proves is hpshm's", path);
	if (ps)
		cr_assert_eq(hpt_pages_held(ps), before, "the pool did not come back");
}

Test(gc, a_plain_named_create_killed_before_its_header_leaves_nothing_behind)
{
	char kv[256], path[256];

	need_root();
	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,name=%sfile", prefix);
	file_create_killed_leaves_nothing(kv, 65536, obj_path(NULL, "file", path, sizeof path), 0);
}

Test(gc, a_hugetlbfs_named_create_killed_before_its_header_leaves_nothing_behind)
{
	char kv[768], path[512], psz[32];
	size_t ps;

	need_root();
	if (!test_mount())
		HPT_UNAVAILABLE("hugetlbfs", NULL, "HPSHM_TEST_HUGETLBFS names no hugetlbfs mount");
	ps = need_pool(4);
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,huge_page_size=%s,hugetlbfs_path=%s,name=%sfile",
		 hpt_size_text(ps, psz, sizeof psz), test_mount(), prefix);
	file_create_killed_leaves_nothing(kv, 2 * ps, obj_path(test_mount(), "file", path, sizeof path), ps);
}

/*
 * SIGKILL `hpshm run` at random moments 0-3 ms in, RUN_KILLS times (HPSHM_TEST_RUN_KILLS
 * overrides, up to RUN_KILLS_MAX, for a longer run by hand), then gc: the pool's free minus
 * reserved pages must be as before.  Unnamed SysV segments are marked for removal right
 * after their first attach; a kill between shmget() and that mark is what this looks for.
 */
Test(gc, random_kills_of_hpshm_run_on_sysv_then_gc_give_the_pool_back, .timeout = 240)
{
	static char tool_path[] = HPSHM_TOOL_PATH, a1[] = "run", a2[] = "--quiet", a3[] = "--size", a4[] = "4MiB",
		    a5[] = "--config", a6[] = "provider=sysv_hugetlb,huge_pages=on", a7[] = "--", a8[] = "true";
	char *argv[] = {tool_path, a1, a2, a3, a4, a5, a6, a7, a8, NULL};
	static pid_t runs[RUN_KILLS_MAX];
	const char *env = getenv("HPSHM_TEST_RUN_KILLS");
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	long before, after;
	size_t ps;
	int ids[64], n, kills = RUN_KILLS, killed = 0, finished = 0, subreaper = 0;

	need_root();
	ps = need_sysv_pool(8);
	if (ps != 2u << 20)
		HPT_UNAVAILABLE("2MiB", NULL, "the run uses 4MiB segments of the default 2 MiB pages");
	if (env && atoi(env) > 0)
		kills = atoi(env) < RUN_KILLS_MAX ? atoi(env) : RUN_KILLS_MAX;
#ifdef PR_SET_CHILD_SUBREAPER
	/* A killed run's child (it execs `true`) becomes this process's, to wait for. */
	subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
#endif
	before = hpt_pages_held(ps);
	for (int i = 0; i < kills; i++) {
		int status, devnull;
		pid_t pid;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		fflush(NULL);
		pid = fork();
		cr_assert_neq(pid, -1);
		if (pid == 0) {
			devnull = open("/dev/null", O_WRONLY);
			dup2(devnull, 1);
			dup2(devnull, 2);
			execv(tool_path, argv);
			_exit(127);
		}
		runs[i] = pid;
		usleep((useconds_t)(rng % 3000));
		kill(pid, SIGKILL);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			killed++;
		else
			finished++;
	}
	/* The children of killed runs hold their segment until they exec `true`: gc must look
	 * after they ended, which the subreaper sees (elsewhere a pause stands in for it). */
	if (subreaper)
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
	else
		usleep(100000);
	assert_finished(tool("gc", NULL), "gc");
	after = hpt_pages_held(ps);
	n = sysv_by_creators(runs, kills, ids, 64);
	for (int i = 0; i < n; i++)
		(void)shmctl(ids[i], IPC_RMID, NULL);
	{
		const char *sum = strstr(run.out, " removed, ");

		while (sum && sum > run.out && sum[-1] != '\n')
			sum--;
		cr_log_info("%d runs of `hpshm run`: %d SIGKILLed 0-3 ms in, %d finished first; huge pages held "
			    "%ld before, %ld after gc (%d segments left); gc said: %.160s", kills, killed, finished, before,
			    after, n, sum ? sum : "?");
	}
	cr_assert_eq(n, 0, "gc left %d segments of killed runs", n);
	cr_assert_eq(after, before, "huge pages held: %ld before, %ld after gc", before, after);
}

/* ---- a name swapped onto a live segment while gc removes a dead one ---- */

#define SWAP_ROUNDS 1000 /* dead segments removed (or refused) while the names swap */

/* renameat2(a, b, RENAME_EXCHANGE) by the system call: not every C library wraps it. */
static int exchange_names(const char *a, const char *b)
{
#ifdef SYS_renameat2
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */);
#else
	(void)a;
	(void)b;
	errno = ENOSYS;
	return -1;
#endif
}

/* remove()'s private directories of this process left in dir: how many. */
static int private_dirs_left(const char *dir)
{
	char pat[64];
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	snprintf(pat, sizeof pat, ".hpshm-gc-%ld-", (long)getpid());
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, pat, strlen(pat)) == 0)
			n++;
	closedir(d);
	return n;
}

/* The object listed under one of the two ids in state want, in *out: 1, or 0 if neither is. */
static int listed_either(const char *a, const char *b, int want, hpshm_object *out)
{
	hpshm_object o;

	if (listed(a, &o) && o.state == want) {
		*out = o;
		return 1;
	}
	if (listed(b, &o) && o.state == want) {
		*out = o;
		return 1;
	}
	return 0;
}

/*
 * A user who may write the directory swaps a live segment's name with a dead one's
 * (renameat2(RENAME_EXCHANGE)) in a loop while gc removes the dead one: the live one must
 * keep its name, round after round, whatever the name held when gc looked and when it
 * removed.  kv_live and kv_dead make the two segments in dir, size bytes each.
 */
static void swap_race(const char *dir, const char *kv_live, const char *kv_dead, size_t size)
{
	char live[512], dead[512], live_id[512], dead_id[512];
	hpshm_config *cfg_live = config(kv_live), *cfg_dead = config(kv_dead);
	hpshm_segment *seg = NULL;
	hpshm_error err;
	struct stat ls, a, b;
	int watch, rc, removed = 0, refused = 0, lost = -1, misplaced = -1, status;
	pid_t swapper;

	obj_path(dir, "swap-live", live, sizeof live);
	obj_path(dir, "swap-dead", dead, sizeof dead);
	/* scan() ids: a file's path, or the shm name of a /dev/shm object */
	snprintf(live_id, sizeof live_id, "%s", live);
	snprintf(dead_id, sizeof dead_id, "%s", dead);
	if (!dir) {
		snprintf(live_id, sizeof live_id, "/hpshm.%sswap-live", prefix);
		snprintf(dead_id, sizeof dead_id, "/hpshm.%sswap-dead", prefix);
	}
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, size, cfg_live, &err);
	if (rc < 0) {
		hpshm_config_free(cfg_live);
		hpshm_config_free(cfg_dead);
		hpt_skip_emulated_refusal(rc, &err);
	}
	cr_assert_eq(rc, 0, "the live segment: %s: %s", hpshm_errname(rc), err.message);
	watch = open(live, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(watch, 0, "%s: %s", live, strerror(errno));
	cr_assert_eq(fstat(watch, &ls), 0);
	hpt_crashed_creator(cfg_dead, size, "the dead segment");
	if (exchange_names(live, dead) < 0) {
		int e = errno;

		close(watch);
		hpshm_segment_destroy(seg);
		(void)unlink(dead);
		hpshm_config_free(cfg_live);
		hpshm_config_free(cfg_dead);
		HPT_UNAVAILABLE("renameat2", NULL, "renameat2(RENAME_EXCHANGE) on %s: %s", live, strerror(e));
	}

	swapper = hpt_fork();
	cr_assert_neq(swapper, -1);
	if (swapper == 0) {
		for (;;)
			(void)exchange_names(live, dead);
	}
	for (int r = 0; r < SWAP_ROUNDS && lost < 0 && misplaced < 0; r++) {
		hpshm_object o;
		int tries;

		/* The dead one, as gc lists it: under whichever name it has at that moment. */
		for (tries = 0; tries < 100 && !listed_either(live_id, dead_id, HPSHM_OBJECT_DEAD, &o); tries++)
			;
		cr_assert_lt(tries, 100, "round %d: the dead segment is not listed dead", r);
		memset(&err, 0, sizeof err);
		rc = hpshm_objects_remove(&o, 0, &err);
		if (rc == 0)
			removed++;
		else
			refused++;
		kill(swapper, SIGSTOP);
		(void)waitpid(swapper, &status, WUNTRACED);
		if (fstat(watch, &a) < 0 || a.st_nlink == 0)
			lost = r;
		else if (!((stat(live, &a) == 0 && a.st_ino == ls.st_ino) || (stat(dead, &b) == 0 && b.st_ino == ls.st_ino)))
			misplaced = r;
		/* The next round's dead segment, unless the last one is still there (refused); its
		 * name must be free, so the live one goes back under its own first. */
		if (lost < 0 && misplaced < 0 && rc == 0) {
			if ((stat(live, &a) < 0 || a.st_ino != ls.st_ino) && stat(dead, &b) == 0 && b.st_ino == ls.st_ino)
				cr_assert_eq(rename(dead, live), 0, "rename %s %s: %s", dead, live, strerror(errno));
			hpt_crashed_creator(cfg_dead, size, "the dead segment");
		}
		kill(swapper, SIGCONT);
	}
	kill(swapper, SIGKILL);
	(void)waitpid(swapper, &status, 0);
	close(watch);
	hpshm_segment_destroy(seg);
	(void)unlink(live);
	(void)unlink(dead);
	hpshm_config_free(cfg_live);
	hpshm_config_free(cfg_dead);
	cr_log_info("%s: %d dead segments removed and %d removals refused while the names swapped", dir ? dir : "/dev/shm",
		    removed, refused);
	cr_assert_lt(lost, 0, "round %d: gc unlinked the live segment's name (%d removed before)", lost, removed);
	cr_assert_lt(misplaced, 0, "round %d: the live segment is under neither of its names", misplaced);
	cr_assert_eq(private_dirs_left(dir ? dir : "/dev/shm"), 0, "gc left a private directory in %s",
		     dir ? dir : "/dev/shm");
	cr_assert_gt(removed, 0, "no dead segment was removed in %d rounds", SWAP_ROUNDS);
}

Test(gc, a_name_swapped_onto_a_live_posix_segment_while_gc_removes_never_loses_it, .timeout = 120)
{
	char live[256], dead[256];

	snprintf(live, sizeof live, "provider=plain,huge_pages=off,name=%sswap-live", prefix);
	snprintf(dead, sizeof dead, "provider=plain,huge_pages=off,name=%sswap-dead", prefix);
	swap_race(NULL, live, dead, 65536);
}

Test(gc, a_name_swapped_onto_a_live_hugetlbfs_file_while_gc_removes_never_loses_it, .timeout = 120)
{
	char live[768], dead[768], psz[32];
	size_t ps;

	need_root();
	if (!test_mount())
		HPT_UNAVAILABLE("hugetlbfs", NULL, "HPSHM_TEST_HUGETLBFS names no hugetlbfs mount");
	ps = need_pool(4);
	snprintf(live, sizeof live, "provider=hugetlbfs,huge_pages=on,huge_page_size=%s,hugetlbfs_path=%s,name=%sswap-live",
		 hpt_size_text(ps, psz, sizeof psz), test_mount(), prefix);
	snprintf(dead, sizeof dead, "provider=hugetlbfs,huge_pages=on,huge_page_size=%s,hugetlbfs_path=%s,name=%sswap-dead",
		 hpt_size_text(ps, psz, sizeof psz), test_mount(), prefix);
	swap_race(test_mount(), live, dead, ps);
}

/* ---- names that would drive a terminal ---- */

/* What a terminal acts on, in raw output: a control byte (other than the line ends the tool
 * writes), DEL, a C1 control in UTF-8, a direction override, a byte that is not UTF-8 here. */
static const char *raw_terminal_bytes(const char *out)
{
	for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f || *p == 0xff)
			return (const char *)p;
		if ((p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) || (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xae))
			return (const char *)p;
	}
	return NULL;
}

/* r's output shows no raw terminal bytes, no line made by a name, and the escaped texts. */
static void assert_escaped(const struct tool_run *r, const char *what, const char *esc_file, const char *esc_header)
{
	const char *raw = raw_terminal_bytes(r->out);

	cr_assert_null(raw, "`hpshm %s` printed byte %#x raw at offset %zu:\n%s", what, raw ? (unsigned char)raw[0] : 0u,
		       raw ? (size_t)(raw - r->out) : 0, r->out);
	cr_assert(!hpt_contains(r->out, "\nhpshm-fake-line"), "`hpshm %s` let a name start a line:\n%s", what, r->out);
	cr_assert(hpt_contains(r->out, esc_file), "`hpshm %s` does not show the file name as %s:\n%s", what, esc_file,
		  r->out);
	cr_assert(hpt_contains(r->out, esc_header), "`hpshm %s` does not show the header's name as %s:\n%s", what,
		  esc_header, r->out);
}

/*
 * Names come from whoever made the object: a file name, or the name in a header.  One with
 * an ESC sequence, CR and LF, an OSC that sets the terminal's title, a right-to-left
 * override and a byte that is not UTF-8 is shown escaped by `hpshm ls` and `hpshm gc`, and as
 * JSON escapes by `hpshm ls --json`.
 */
Test(gc, ls_and_gc_show_names_with_terminal_sequences_escaped)
{
	static const char forged[] = "\x1b]0;owned\x07\x1b[2J\xe2\x80\xae" "evil\xff";
	char file[256], dead[256], kv[256], esc_file[256], esc_header[128], json_header[128];
	struct tool_run *r;
	hpshm_config *cfg;
	struct stat st;
	int fd;

	need_root();
	/* A headerless file whose name carries the sequences: debris, listed by its file name. */
	snprintf(file, sizeof file, "/dev/shm/hpshm.%sesc\x1b[31mRED\rX\nhpshm-fake-line", prefix);
	make_file(file, 65536, NULL);
	snprintf(esc_file, sizeof esc_file, "/hpshm.%sesc\\u001b[31mRED\\rX\\nhpshm-fake-line", prefix);
	/* A dead segment of a clean name whose header names it with the sequences. */
	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,name=%shdr", prefix);
	cfg = config(kv);
	hpt_crashed_creator(cfg, 65536, "segment");
	hpshm_config_free(cfg);
	obj_path(NULL, "hdr", dead, sizeof dead);
	fd = open(dead, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", dead, strerror(errno));
	cr_assert_eq(fstat(fd, &st), 0);
	/* The header sits at the start of the file's last 4 KiB. */
	cr_assert_eq(pwrite(fd, forged, sizeof forged, st.st_size - 4096 + (off_t)offsetof(struct hpshm_header, name)),
		     (ssize_t)sizeof forged);
	close(fd);
	snprintf(esc_header, sizeof esc_header, "\\u001b]0;owned\\u0007\\u001b[2J\\u202eevil\\xff");
	snprintf(json_header, sizeof json_header, "\\u001b]0;owned\\u0007\\u001b[2J");

	r = tool("ls", NULL);
	assert_finished(r, "ls");
	assert_escaped(r, "ls", esc_file, esc_header);
	r = tool("ls", "--json", NULL);
	assert_finished(r, "ls --json");
	cr_assert(hpt_json_ok(r->out), "`hpshm ls --json` is not one JSON value:\n%s", r->out);
	cr_assert(hpt_contains(r->out, json_header), "`hpshm ls --json` does not escape the header's name:\n%s", r->out);
	r = tool("gc", NULL);
	assert_finished(r, "gc");
	assert_escaped(r, "gc", esc_file, esc_header);
	cr_assert(!exists_as(dead, S_IFREG), "`hpshm gc` left the dead %s:\n%s", dead, r->out);
	cr_assert_eq(unlink(file), 0);
}

/* ---- a forced gc and other users' debris ---- */

/*
 * Debris (no header, no mark, nobody holds it) of this user and of another: `gc --force`,
 * run by root, takes this user's only, and hpshm_objects_remove() with HPSHM_REMOVE_FORCE
 * refuses the other's; `gc --force --all-users` takes both.  A headerless file is made, then
 * given to another user.
 */
Test(gc, a_forced_gc_keeps_another_users_headerless_file_unless_told_all_users)
{
	char own[256], other[256], own_id[256], other_id[256];
	hpshm_object o;
	hpshm_error err;
	int own_state, other_state, other_mine, own_mine, own_after, other_after, rc;

	need_root();
	obj_path(NULL, "own-bare", own, sizeof own);
	obj_path(NULL, "other-bare", other, sizeof other);
	snprintf(own_id, sizeof own_id, "/hpshm.%sown-bare", prefix);
	snprintf(other_id, sizeof other_id, "/hpshm.%sother-bare", prefix);
	make_file(own, 65536, NULL);
	make_file(other, 65536, NULL);
	cr_assert_eq(chown(other, NOBODY_A, NOBODY_A), 0, "chown %s: %s", other, strerror(errno));
	cr_assert(listed(own_id, &o), "%s is not listed", own_id);
	own_state = o.state;
	own_mine = o.mine;
	cr_assert(listed(other_id, &o), "%s is not listed", other_id);
	other_state = o.state;
	other_mine = o.mine;

	assert_finished(tool("gc", "--force", NULL), "gc --force");
	own_after = exists_as(own, S_IFREG);
	other_after = exists_as(other, S_IFREG);
	memset(&err, 0, sizeof err);
	rc = other_after ? hpshm_objects_remove(&o, HPSHM_REMOVE_FORCE, &err) : 0;
	if (!other_after || !exists_as(other, S_IFREG)) {
		(void)unlink(own);
		cr_assert_fail("a forced gc run by root removed uid %d's headerless %s:\n%s", NOBODY_A, other, run.out);
	}
	cr_assert_eq(own_state, HPSHM_OBJECT_DEBRIS, "%s is state %d, not debris", own, own_state);
	cr_assert_eq(other_state, HPSHM_OBJECT_DEBRIS, "%s is state %d, not debris", other, other_state);
	cr_assert_eq(own_mine, 1, "root's own %s is not listed as its own", own);
	cr_assert_eq(other_mine, 0, "uid %d's %s is listed as root's own", NOBODY_A, other);
	cr_assert(!own_after, "`hpshm gc --force` left root's own headerless %s:\n%s", own, run.out);
	cr_assert_eq(rc, HPSHM_EINVAL, "a forced remove of another user's debris: %s: %s", hpshm_errname(rc), err.message);
	cr_assert(err.hint[0] != '\0', "no hint with: %s", err.message);

	assert_finished(tool("gc", "--force", "--all-users", NULL), "gc --force --all-users");
	cr_assert(!exists_as(other, S_IFREG), "`hpshm gc --force --all-users` left uid %d's %s:\n%s", NOBODY_A, other,
		  run.out);
}

/* The same for a headerless SysV hugetlb segment in hpshm's key range whose owner is another user. */
Test(gc, a_forced_gc_keeps_another_users_headerless_sysv_segment_unless_told_all_users)
{
	hpshm_object o;
	hpshm_error err;
	size_t ps;
	char id[32];
	int shm, state = -1, mine = -1, after_force, after_api, rc = 0;

	need_root();
	ps = need_sysv_pool(2);
	shm = sysv_made_by_a_dead_process_at(foreign_key(5), ps, 1, NULL, 0, NOBODY_A);
	cr_assert_geq(shm, 0, "shmget: %s", strerror(errno));
	snprintf(id, sizeof id, "shm=%d", shm);
	memset(&o, 0, sizeof o);
	if (listed(id, &o)) {
		state = o.state;
		mine = o.mine;
	}
	assert_finished(tool("gc", "--force", NULL), "gc --force");
	after_force = sysv_exists(shm);
	memset(&err, 0, sizeof err);
	if (after_force && state == HPSHM_OBJECT_DEBRIS)
		rc = hpshm_objects_remove(&o, HPSHM_REMOVE_FORCE, &err);
	after_api = sysv_exists(shm);
	if (!after_force || !after_api)
		cr_assert_fail("a forced %s run by root removed segment %d of uid %d, which has no header",
			       after_force ? "hpshm_objects_remove()" : "`hpshm gc`", shm, NOBODY_A);
	cr_assert_eq(state, HPSHM_OBJECT_DEBRIS, "segment %d is state %d (%s), not debris", shm, state, o.note);
	cr_assert_eq(mine, 0, "segment %d of uid %d is listed as root's own", shm, NOBODY_A);
	cr_assert_eq(rc, HPSHM_EINVAL, "a forced remove of another user's debris: %s: %s", hpshm_errname(rc), err.message);
	assert_finished(tool("gc", "--force", "--all-users", NULL), "gc --force --all-users");
	if (sysv_exists(shm)) {
		(void)shmctl(shm, IPC_RMID, NULL);
		cr_assert_fail("`hpshm gc --force --all-users` left segment %d:\n%s", shm, run.out);
	}
}

/* ---- modes and other users ---- */

Test(gc, mode_0666_is_applied_exactly_whatever_the_umask)
{
	char kv[256], path[256];
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	struct stat st;
	mode_t old;
	int rc, got;

	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,mode=0666,name=%smode", prefix);
	cfg = config(kv);
	old = umask(022);
	rc = hpshm_segment_create(&seg, 65536, cfg, &err);
	umask(old);
	hpshm_config_free(cfg);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	got = stat(obj_path(NULL, "mode", path, sizeof path), &st) == 0 ? (int)(st.st_mode & 07777) : -1;
	hpshm_segment_destroy(seg);
	cr_assert_eq(got, 0666, "%s has mode %04o, not 0666", path, (unsigned)got);
}

/* In a child as uid, create kv's segment and either keep it dead (exit without destroy) or report. */
struct as_user {
	int  rc;
	char message[HPSHM_MESSAGE_MAX];
	char hint[HPSHM_TEXT_MAX];
};

static struct as_user create_as(uid_t uid, const char *kv)
{
	struct as_user r;
	int fds[2], status;
	pid_t pid;

	memset(&r, 0, sizeof r);
	cr_assert_eq(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_config *cfg;
		hpshm_segment *seg;
		hpshm_error err;

		memset(&err, 0, sizeof err);
		if (setgid(uid) < 0 || setuid(uid) < 0)
			r.rc = -1000;
		else if (hpshm_config_new(&cfg) < 0 || hpshm_config_parse(cfg, kv, &err) < 0)
			r.rc = -1001;
		else
			r.rc = hpshm_segment_create(&seg, 65536, cfg, &err);
		snprintf(r.message, sizeof r.message, "%s", err.message);
		snprintf(r.hint, sizeof r.hint, "%s", err.hint);
		(void)!write(fds[1], &r, sizeof r);
		_exit(0); /* without destroy: a segment made here is left dead */
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &r, sizeof r), (ssize_t)sizeof r);
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return r;
}

/* Another user's dead segment in sticky /dev/shm: the create says whose it is and what to do. */
static void other_users_dead_segment(const char *mode, const char *what)
{
	char kv[256], path[256], owner[32];
	struct as_user a, b;
	struct stat st;

	need_root();
	if (stat("/dev/shm", &st) < 0 || !(st.st_mode & S_ISVTX))
		HPT_UNAVAILABLE("sticky", NULL, "/dev/shm is not a sticky directory here");
	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,mode=%s,name=%s%s", mode, prefix, what);
	obj_path(NULL, what, path, sizeof path);
	a = create_as(NOBODY_A, kv);
	b = a.rc == 0 ? create_as(NOBODY_B, kv) : a;
	(void)unlink(path);
	cr_assert_eq(a.rc, 0, "uid %d could not create %s: %d %s", NOBODY_A, path, a.rc, a.message);
	cr_assert_eq(b.rc, HPSHM_EEXIST, "uid %d's create over uid %d's dead segment: %s (%s)", NOBODY_B, NOBODY_A,
		     hpshm_errname(b.rc), b.message);
	snprintf(owner, sizeof owner, "uid %d", NOBODY_A);
	cr_assert(hpt_contains(b.message, owner) || hpt_contains(b.hint, owner), "the error does not name the owner: %s (%s)",
		  b.message, b.hint);
	cr_assert(!hpt_contains(b.message, "re-created"), "the error blames other processes: %s", b.message);
}

Test(gc, another_users_dead_readable_segment_in_sticky_dev_shm_is_named_with_its_owner)
{
	other_users_dead_segment("0644", "sticky644");
}

Test(gc, another_users_dead_private_segment_in_sticky_dev_shm_is_named_with_its_owner)
{
	other_users_dead_segment("0600", "sticky600");
}
