/* SPDX-License-Identifier: MIT */
/*
 * tests/test_crash.c -- SIGKILL at random moments, then gc: the machine ends as it began, and
 * no live segment is ever removed.
 *
 * Each round forks a creator that makes a named segment (name=crash<run>-<n>) with one of the
 * named providers that work here (plain through /dev/shm always; hugetlbfs and sysv_hugetlb
 * when the pool and mount allow, else the reason is logged), then starts 1-3 children by a
 * real exec (hpshm_child_spawn(), reattach_child "hold": attach, write its pid, sleep).  The test
 * SIGKILLs the creator and/or the children after a random delay (fixed seed), kills whatever
 * is left, and runs the gc logic (hpshm_objects_list() + hpshm_objects_remove() of the dead
 * objects of this run; once the real `hpshm gc` tool when it is built).  Rounds come in
 * pairs sharing a name, and gc runs after the second only: the second creator must recycle
 * whatever the first left dead.
 *
 * Every fourth round keeps a live holder: the creator is killed once its child attached, and
 * the object must then be listed alive, hpshm_objects_remove() must refuse it with
 * HPSHM_EEXIST and gc must keep it; once the holder is gone, gc removes it.
 *
 * At the end what this run made must be gone: the huge pages it holds (by its own
 * accounting), its SysV segments (by the keys of its names), its files in the hugetlbfs mount
 * and /dev/shm (by its name prefix), and gc's private directories.  Only this run's objects
 * are judged, never the machine: other programs (a PostgreSQL, another suite) make and
 * remove segments beside it, and pids are reused, so a segment is this run's by its key,
 * never by its creator's pid (a neighbour that got the pid of one of this run's dead
 * creators is made on purpose, and must be neither judged nor removed).  The test process
 * is a child subreaper, so the children of a killed creator become its own and none is left
 * running.  Root only (SysV hugetlb and other users' objects).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "base/base.h"
#include "fixture.h"
#include "hpshm.h"
#include "reattach_child.h"

#ifndef HPSHM_REATTACH_CHILD
#error "HPSHM_REATTACH_CHILD must name the built reattach_child program"
#endif

#define ROUNDS 200
#define SEED   0xc4a5bULL

TestSuite(crash, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

/*
 * Failures in the rounds are recorded, not asserted at once: the test must first kill its
 * processes and remove what the rounds left (else the machine-wide fixture fails every later
 * test, and huge pages stay taken), then fail with the first problem.
 */
static char first_failure[2048];
static pid_t creators[256];
static int ncreators;
static char run_names[256][96]; /* every segment name this run used */
static int nnames;

static void failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void failed(const char *fmt, ...)
{
	va_list ap;

	if (first_failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(first_failure, sizeof first_failure, fmt, ap);
	va_end(ap);
}

#define CHECK(cond, ...)                 \
	do {                             \
		if (!(cond)) {           \
			failed(__VA_ARGS__); \
			goto done;       \
		}                        \
	} while (0)

/* ---- a fixed-seed PRNG ---- */

static uint64_t rng = SEED;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

/* ---- the named providers that work here ---- */

struct named {
	char   provider[HPSHM_NAME_MAX];
	size_t page_size; /* the huge page size, or the base size for plain */
	int    huge;
};

static const char *test_mount(void)
{
	const char *m = getenv("HPSHM_TEST_HUGETLBFS");

	return m && *m ? m : NULL;
}

static hpshm_config *named_config(const struct named *p, const char *name, size_t size)
{
	hpshm_config *cfg;
	char kv[512], psz[32];
	hpshm_error err;

	(void)size;
	if (hpshm_config_new(&cfg) < 0)
		return NULL;
	if (p->huge)
		snprintf(kv, sizeof kv, "provider=%s,name=%s,reattach=exec,huge_pages=on,huge_page_size=%s", p->provider,
			 name, hpt_size_text(p->page_size, psz, sizeof psz));
	else
		snprintf(kv, sizeof kv, "provider=%s,name=%s,reattach=exec,huge_pages=off", p->provider, name);
	if (hpshm_config_parse(cfg, kv, &err) < 0 ||
	    (!strcmp(p->provider, "hugetlbfs") && test_mount() &&
	     hpshm_config_set(cfg, "hugetlbfs_path", test_mount(), &err) < 0)) {
		hpshm_config_free(cfg);
		return NULL;
	}
	return cfg;
}

static size_t named_size(const struct named *p)
{
	return p->huge ? p->page_size : 16 * p->page_size;
}

/* plain always; hugetlbfs and sysv_hugetlb when their probe says yes (else log why). */
static int named_providers(struct named *out, int max)
{
	static const char *const want[] = {"plain", "hugetlbfs", "sysv_hugetlb"};
	size_t dps = hpt_default_huge_page_size();
	int n = 0;

	for (size_t i = 0; i < sizeof want / sizeof want[0] && n < max; i++) {
		struct named p;
		char reason[HPSHM_TEXT_MAX] = "", psz[32];
		hpshm_config *cfg;
		unsigned caps = 0;
		const char *name;
		int found = 0, rc;

		for (unsigned k = 0; (name = hpshm_provider_name(k, &caps)) != NULL; k++)
			if (!strcmp(name, want[i])) {
				found = 1;
				break;
			}
		if (!found || !(caps & HPSHM_CAP_NAMED)) {
			cr_log_info("crash rounds without %s: not built in or has no named segments", want[i]);
			continue;
		}
		memset(&p, 0, sizeof p);
		snprintf(p.provider, sizeof p.provider, "%s", want[i]);
		p.huge = (caps & HPSHM_CAP_HUGE) != 0;
		p.page_size = p.huge ? dps : hpshm_base_page_size();
		if (p.huge && !dps) {
			cr_log_info("crash rounds without %s: the kernel offers no huge page size", want[i]);
			cr_assert(!hpt_required(want[i], NULL), "%s required but the kernel has no huge pages", want[i]);
			continue;
		}
		cfg = named_config(&p, "probe", named_size(&p));
		cr_assert_not_null(cfg);
		rc = hpshm_provider_probe(p.provider, named_size(&p) + 4096, cfg, NULL, reason, sizeof reason);
		hpshm_config_free(cfg);
		if (rc < 0) {
			cr_log_info("crash rounds without %s: %s", want[i], reason);
			cr_assert(!hpt_required(want[i], p.huge ? hpt_size_text(p.page_size, psz, sizeof psz) : NULL),
				  "required by HPSHM_TEST_REQUIRE but unavailable: %s: %s", want[i], reason);
			continue;
		}
		out[n++] = p;
	}
	return n;
}

/* ---- what this run made ---- */

/* Remember a segment name of this run, once. */
static void name_used(const char *name)
{
	for (int i = 0; i < nnames; i++)
		if (strcmp(run_names[i], name) == 0)
			return;
	if (nnames < (int)(sizeof run_names / sizeof run_names[0]))
		snprintf(run_names[nnames++], sizeof run_names[0], "%s", name);
}

/* The SysV key of a named segment (sysv_hugetlb: hpshm's range, FNV-1a 32 of "hpshm:<name>"). */
static long run_key_of(const char *name)
{
	uint32_t h = hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "hpshm:", 6);

	h = hpshm__fnv1a32(h, name, strlen(name));
	return (long)(0x48000000u | (h & 0x00ffffffu));
}

/* Is key the key of one of this run's names? */
static int run_key(long key)
{
	for (int i = 0; i < nnames; i++)
		if (run_key_of(run_names[i]) == key)
			return 1;
	return 0;
}

/* ---- this run's objects, as this test compares them ---- */

struct state {
	char text[65536];
};

static void state_add(struct state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void state_add(struct state *s, const char *fmt, ...)
{
	size_t n = strlen(s->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->text + n, sizeof s->text - n, fmt, ap);
	va_end(ap);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Is a name in a directory this run's: hpshm.<prefix>*, or a private directory of gc's
 * (".hpshm-gc-<pid>-...") made by this process or by tool (the `hpshm gc` it ran, or 0)?
 */
static int run_entry(const char *name, const char *prefix, pid_t tool)
{
	char pat[96];

	snprintf(pat, sizeof pat, "hpshm.%s", prefix);
	if (strncmp(name, pat, strlen(pat)) == 0)
		return 1;
	snprintf(pat, sizeof pat, ".hpshm-gc-%ld-", (long)getpid());
	if (strncmp(name, pat, strlen(pat)) == 0)
		return 1;
	snprintf(pat, sizeof pat, ".hpshm-gc-%ld-", (long)tool);
	return tool > 0 && strncmp(name, pat, strlen(pat)) == 0;
}

static pid_t tool_pid; /* the `hpshm gc` this run started, 0 before */

static void state_dir(struct state *s, const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[1024];
	size_t n = 0;

	if (!d) {
		state_add(s, "%s: unreadable\n", dir);
		return;
	}
	while ((e = readdir(d)) != NULL && n < 1024)
		if (run_entry(e->d_name, prefix, tool_pid))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		state_add(s, "%s/%s\n", dir, names[i]);
		free(names[i]);
	}
}

/* The pages this run holds, its SysV segments (by their keys) and files (by prefix), one line each. */
static void state_take(struct state *s, const char *prefix)
{
	size_t sizes[16];
	int ns = hpshm_huge_page_sizes(sizes, 16);
	FILE *f;
	char line[512];

	s->text[0] = '\0';
	/* The pages this test holds (its cgroup's, or the machine's without one: fixture.h). */
	for (int i = 0; i < ns && i < 16; i++)
		state_add(s, "pool %zukB held=%ld\n", sizes[i] / 1024, hpt_pages_held(sizes[i]));
	f = fopen("/proc/sysvipc/shm", "r");
	if (f) {
		while (fgets(line, sizeof line, f)) {
			long key, id;

			if (sscanf(line, "%ld %ld", &key, &id) == 2 && run_key(key))
				state_add(s, "sysv shmid=%ld key=%ld\n", id, key);
		}
		fclose(f);
	}
	if (test_mount())
		state_dir(s, test_mount(), prefix);
	state_dir(s, "/dev/shm", prefix);
}

/* ---- processes ---- */

/* SIGKILL every child of this process (a subreaper: orphans of killed creators too), reap all. */
static void kill_and_reap_all(void)
{
	for (int pass = 0; pass < 1000; pass++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		int any = 0;

		cr_assert_not_null(d);
		while ((e = readdir(d)) != NULL) {
			char path[300], buf[1024], *p;
			long ppid;
			FILE *f;

			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			buf[0] = '\0';
			if (!fgets(buf, sizeof buf, f))
				buf[0] = '\0';
			fclose(f);
			p = strrchr(buf, ')');
			if (p && sscanf(p + 2, "%*c %ld", &ppid) == 1 && ppid == (long)getpid()) {
				kill((pid_t)atol(e->d_name), SIGKILL);
				any = 1;
			}
		}
		closedir(d);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			any = 1;
		if (!any && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
		usleep(1000);
	}
	cr_assert_fail("children of the test would not die");
}

/* What a creator tells the test, through a pipe. */
struct msg {
	int32_t kind; /* MSG_* */
	int32_t pad;
	int64_t val;
};
enum { MSG_CREATED = 1, MSG_CHILD = 2, MSG_READY = 3, MSG_SPAWN_FAILED = 4 };

static void say(int fd, int kind, int64_t val)
{
	struct msg m = {kind, 0, val};

	if (write(fd, &m, sizeof m) != (ssize_t)sizeof m)
		_exit(99);
}

/*
 * The creator, in a forked process: create, spawn nchildren holders, report, and wait.  It
 * ends by _exit() only (no Criterion teardown in a forked copy of the test).
 */
static void creator(int fd, const struct named *p, const char *name, int nchildren, int hold_seconds, int holder)
{
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "hold", secs[16], slot[4][8];
	hpshm_child kids[4];
	hpshm_segment *seg = NULL;
	hpshm_config *cfg = named_config(p, name, named_size(p));
	hpshm_error err;
	volatile uint64_t *w;
	int rc;

	if (!cfg)
		_exit(98);
	rc = hpshm_segment_create(&seg, named_size(p), cfg, &err);
	say(fd, MSG_CREATED, rc);
	if (rc < 0) {
		fprintf(stderr, "creator %s %s: %s: %s\n", p->provider, name, hpshm_errname(rc), err.message);
		_exit(2);
	}
	w = hpshm_segment_address(seg);
	snprintf(secs, sizeof secs, "%d", hold_seconds);
	for (int i = 0; i < nchildren; i++) {
		char *argv[] = {path, mode, secs, slot[i], NULL};

		snprintf(slot[i], sizeof slot[i], "%d", i);
		rc = hpshm_child_spawn(seg, path, argv, NULL, &kids[i], &err);
		if (rc < 0) {
			say(fd, MSG_SPAWN_FAILED, rc);
			fprintf(stderr, "creator: spawn: %s\n", err.message);
			_exit(3);
		}
		say(fd, MSG_CHILD, kids[i].pid);
	}
	if (holder) {
		/* ready once child 0 has attached and written its pid (30 s bounds a hang) */
		for (int t = 0; t < 30000 && w[0] != (uint64_t)kids[0].pid; t++)
			usleep(1000);
		say(fd, MSG_READY, w[0] == (uint64_t)kids[0].pid);
	}
	for (int i = 0; i < nchildren; i++)
		(void)hpshm_child_wait(&kids[i], NULL, &err);
	(void)hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
	_exit(0);
}

/* ---- gc ---- */

struct found_list {
	const char  *prefix; /* names of this run */
	hpshm_object obj[64];
	int          n;
};

/*
 * Is o one of this run's objects?  By its name; but a SysV segment whose creator was killed
 * before the header was written is listed without one, so then by its key, the hash of one
 * of this run's names.  Never by its creator's pid: pids are reused, and a segment another
 * program made under a pid one of this run's dead creators had is not this run's.
 */
static int of_this_run(const char *prefix, const hpshm_object *o)
{
	struct shmid_ds ds;

	if (strncmp(o->name, prefix, strlen(prefix)) == 0)
		return 1;
	if (o->name[0] != '\0' || strncmp(o->id, "shm=", 4) != 0 || shmctl(atoi(o->id + 4), IPC_STAT, &ds) != 0)
		return 0;
	return run_key((long)ds.shm_perm.__key);
}

static int collect(void *user, const hpshm_object *o)
{
	struct found_list *l = user;

	if (of_this_run(l->prefix, o) && l->n < 64)
		l->obj[l->n++] = *o;
	return 0;
}

static void list_ours(const char *prefix, struct found_list *l)
{
	hpshm_error err;
	int rc;

	memset(l, 0, sizeof *l);
	l->prefix = prefix;
	rc = hpshm_objects_list(collect, l, &err);
	if (rc < 0)
		failed("hpshm_objects_list: %s: %s", hpshm_errname(rc), err.message);
}

/* The gc logic on this run's objects: remove the dead ones.  Returns how many were alive. */
static int gc_ours(const char *prefix, int *removed)
{
	struct found_list l;
	int alive = 0;

	list_ours(prefix, &l);
	for (int i = 0; i < l.n; i++) {
		hpshm_error err;
		int rc;

		if (l.obj[i].alive) {
			alive++;
			continue;
		}
		rc = hpshm_objects_remove(&l.obj[i], 0, &err);
		if (rc < 0)
			failed("remove of the dead %s %s (%s): %s: %s", l.obj[i].provider, l.obj[i].id, l.obj[i].name,
			       hpshm_errname(rc), err.message);
		else if (removed)
			(*removed)++;
	}
	return alive;
}

static int object_present(const char *prefix, const char *name, hpshm_object *out)
{
	struct found_list l;

	list_ours(prefix, &l);
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.obj[i].name, name)) {
			if (out)
				*out = l.obj[i];
			return 1;
		}
	return 0;
}

/*
 * After a failure, or to report a leak: remove by hand what this run left and the gc logic
 * did not (it must list and remove objects without a header too).  Files named
 * hpshm.<prefix>* in /dev/shm and the test's hugetlbfs mount; SysV segments under the key of
 * one of this run's names.  Returns how many it removed and names them in buf.
 */
static int remove_leftovers(const char *prefix, char *buf, size_t len)
{
	const char *dirs[] = {"/dev/shm", test_mount()};
	char pat[128];
	int n = 0;
	FILE *f;

	buf[0] = '\0';
	snprintf(pat, sizeof pat, "hpshm.%s", prefix);
	for (size_t i = 0; i < 2; i++) {
		DIR *d = dirs[i] ? opendir(dirs[i]) : NULL;
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d)) != NULL) {
			char path[600];

			if (strncmp(e->d_name, pat, strlen(pat)) != 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
			if (unlink(path) == 0) {
				n++;
				snprintf(buf + strlen(buf), len - strlen(buf), " %s", path);
			}
		}
		closedir(d);
	}
	f = fopen("/proc/sysvipc/shm", "r");
	if (f) {
		char line[512];

		while (fgets(line, sizeof line, f)) {
			long key, id, size, cpid;
			unsigned long perms;

			if (sscanf(line, "%ld %ld %lo %ld %ld", &key, &id, &perms, &size, &cpid) != 5)
				continue;
			if (run_key(key) && shmctl((int)id, IPC_RMID, NULL) == 0) {
				n++;
				snprintf(buf + strlen(buf), len - strlen(buf), " shmid=%ld(key %#lx, cpid %ld)", id, key, cpid);
			}
		}
		fclose(f);
	}
	return n;
}

#ifdef HPSHM_TOOL_PATH
static void run_tool_gc(void)
{
	char tool[] = HPSHM_TOOL_PATH, gc[] = "gc";
	char *argv[] = {tool, gc, NULL};
	int status;
	pid_t pid;

	pid = hpt_fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, 1);
		execv(tool, argv);
		_exit(127);
	}
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	tool_pid = pid;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		failed("`hpshm gc` did not exit normally (status %#x)", status);
	else if (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)
		failed("`hpshm gc` exited %d", WEXITSTATUS(status));
	/*
	 * 1 says some object could not be removed or some provider could not be listed (its
	 * stderr, above, says which): that may be another user's object or a mechanism this
	 * machine lacks, and is no failure of this test.  Whether gc removed this run's objects
	 * is checked by the caller, object by object.
	 */
	else if (WEXITSTATUS(status))
		cr_log_info("`hpshm gc` exited 1: something outside this run was not removed or listed");
}
#endif

/* ---- a neighbour that got a dead creator's pid ---- */

/* struct clone_args up to set_tid_size (CLONE_ARGS_SIZE_VER1, Linux 5.5), as clone3() takes it. */
struct neighbour_clone_args {
	uint64_t flags;        /* none: a copy of this process, as fork() makes */
	uint64_t pidfd;        /* unused */
	uint64_t child_tid;    /* unused */
	uint64_t parent_tid;   /* unused */
	uint64_t exit_signal;  /* SIGCHLD, so waitpid() reaps it */
	uint64_t stack;        /* unused: the child runs on a copy of this stack */
	uint64_t stack_size;   /* unused */
	uint64_t tls;          /* unused */
	uint64_t set_tid;      /* the pid the child must get */
	uint64_t set_tid_size; /* 1: in this pid namespace only */
};

/*
 * Another program's process that got the pid one of this run's dead creators had (a busy
 * machine wraps pid_max often, and pids are reused), and left a SysV segment of its own: a
 * 4 KiB IPC_PRIVATE one, which no scan of hpshm's looks at.  clone3() with set_tid gives the
 * process exactly that pid (root, Linux 5.5).  The segment's id, or -1 where no such process
 * can be made (logged: the rounds run without it).
 */
static int neighbour_with_a_creators_pid(void)
{
#ifdef SYS_clone3
	for (int k = 0; k < ncreators; k++) {
		struct neighbour_clone_args a;
		pid_t want = creators[k], got;
		int fds[2], id = -1, e;

		if (kill(want, 0) == 0 || errno != ESRCH)
			continue; /* the pid is in use again */
		cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
		memset(&a, 0, sizeof a);
		a.exit_signal = SIGCHLD;
		a.set_tid = (uint64_t)(uintptr_t)&want;
		a.set_tid_size = 1;
		fflush(NULL);
		got = (pid_t)syscall(SYS_clone3, &a, sizeof a);
		if (got == 0) {
			int v = shmget(IPC_PRIVATE, 4096, IPC_CREAT | IPC_EXCL | 0600);

			(void)!write(fds[1], &v, sizeof v);
			_exit(0);
		}
		e = errno;
		close(fds[1]);
		if (got < 0) {
			close(fds[0]);
			if (e == EEXIST)
				continue; /* taken again meanwhile */
			cr_log_info("the rounds run without a neighbour that reuses a creator's pid: clone3(set_tid): %s",
				    strerror(e));
			return -1;
		}
		if (read(fds[0], &id, sizeof id) != (ssize_t)sizeof id)
			id = -1;
		close(fds[0]);
		cr_assert_eq(waitpid(got, NULL, 0), got);
		if (id < 0)
			cr_log_info("the neighbour with pid %ld could not make its segment", (long)got);
		else
			cr_log_info("a neighbour got pid %ld, a dead creator's, and made SysV segment %d", (long)got, id);
		return id;
	}
	cr_log_info("the rounds run without a neighbour that reuses a creator's pid: every pid is taken again");
#else
	cr_log_info("the rounds run without a neighbour that reuses a creator's pid: no clone3() here");
#endif
	return -1;
}

/* Read the creator's messages until EOF (every writer dead) or, with wait_ready, READY. */
struct round_news {
	int     created;       /* MSG_CREATED seen */
	int64_t create_rc;     /* its result */
	int     children;      /* MSG_CHILD seen */
	int     ready;         /* MSG_READY with success */
	int     spawn_failed;  /* MSG_SPAWN_FAILED seen */
	int64_t spawn_rc;
};

static void read_news(int fd, struct round_news *n, int until_ready)
{
	struct msg m;

	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t r;

		if (poll(&pfd, 1, 20000) <= 0)
			cr_assert_fail("the creator said nothing for 20 s");
		r = read(fd, &m, sizeof m);
		if (r == 0)
			return;
		cr_assert_eq(r, (ssize_t)sizeof m, "short message from the creator");
		switch (m.kind) {
		case MSG_CREATED: n->created = 1; n->create_rc = m.val; break;
		case MSG_CHILD: n->children++; break;
		case MSG_READY: n->ready = m.val != 0; break;
		case MSG_SPAWN_FAILED: n->spawn_failed = 1; n->spawn_rc = m.val; break;
		default: cr_assert_fail("unknown message %d", m.kind);
		}
		if (until_ready && (m.kind == MSG_READY || (m.kind == MSG_CREATED && m.val < 0)))
			return;
	}
}

static void check_root(void)
{
	if (geteuid() != 0)
		HPT_UNAVAILABLE("root", NULL, "the crash rounds need root (SysV hugetlb, other users' objects)");
}

/*
 * Killed creators are reparented to this test, so it can reap them and see them die.
 * qemu-user does not implement PR_SET_CHILD_SUBREAPER (EINVAL): that is a skip under it.
 */
static void subreaper(void)
{
	int rc = prctl(PR_SET_CHILD_SUBREAPER, 1);

	if (rc != 0 && errno == EINVAL)
		HPT_SKIP_UNDER_EMULATOR("prctl(PR_SET_CHILD_SUBREAPER) is not implemented (EINVAL), and the rounds "
					"must reap the creators they kill");
	cr_assert_eq(rc, 0, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
}

Test(crash, sigkill_rounds_then_gc_leave_the_machine_as_it_began, .timeout = 600)
{
	static struct state before, after;
	struct named provs[4];
	int nprov, tool_used = 0, removed = 0, kept_alive = 0, created = 0, recycled_rounds = 0, neighbour = -1;
	char prefix[64];

	check_root();
	nprov = named_providers(provs, 4);
	cr_assert_gt(nprov, 0, "not even plain has named segments");
	for (int i = 0; i < nprov; i++)
		cr_log_info("crash rounds use %s (%zu-byte pages)", provs[i].provider, provs[i].page_size);
	subreaper();
	snprintf(prefix, sizeof prefix, "crash%ld-", (long)getpid());
	for (int r = 0; r < ROUNDS; r += 2) {
		char name[96];

		snprintf(name, sizeof name, "%s%d", prefix, r / 2);
		name_used(name);
	}
	state_take(&before, prefix);
	rng = SEED;

	for (int r = 0; r < ROUNDS; r++) {
		const struct named *p = &provs[(r / 2) % nprov];
		int holder = r % 4 == 3, second = r % 2 == 1;
		int nchildren = 1 + (int)(rnd() % 3);
		int how = (int)(rnd() % 4); /* 0 creator first, 1 children first, 2 both at once, 3 no kill */
		useconds_t delay = (useconds_t)(rnd() % (rnd() % 2 ? 3000 : 15000));
		char name[96];
		struct round_news news;
		int fds[2];
		pid_t c;

		snprintf(name, sizeof name, "%s%d", prefix, r / 2);
		memset(&news, 0, sizeof news);
		cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
		c = hpt_fork();
		if (c == 0) {
			close(fds[0]);
			creator(fds[1], p, name, nchildren, how == 3 && !holder ? 0 : 30, holder);
		}
		cr_assert_neq(c, -1, "fork: %s", strerror(errno));
		close(fds[1]);
		if (ncreators < (int)(sizeof creators / sizeof creators[0]))
			creators[ncreators++] = c;

		if (holder) {
			hpshm_object o;
			hpshm_error err;
			int rc, alive;

			read_news(fds[0], &news, 1);
			CHECK(news.created && news.create_rc == 0, "round %d: %s create %s failed: %s", r, p->provider, name, hpshm_errname((int)news.create_rc));
			CHECK(news.ready, "round %d: the holder never attached", r);
			/* creator alive and holder alive: the object is alive and stays */
			CHECK(object_present(prefix, name, &o), "round %d: %s not listed", r, name);
			CHECK((o.alive) == (1), "round %d: %s listed dead while its creator runs", r, name);
			rc = hpshm_objects_remove(&o, 0, &err);
			CHECK((rc) == (HPSHM_EEXIST), "round %d: remove of a live %s: %s", r, name, hpshm_errname(rc));
			/* creator killed, holder still attached */
			kill(c, SIGKILL);
			CHECK((waitpid(c, NULL, 0)) == (c), "(waitpid(c, NULL, 0)) == (c)");
			CHECK(object_present(prefix, name, &o), "round %d: %s gone after its creator died", r, name);
			CHECK((o.alive) == (1), "round %d: %s listed dead while a child holds it", r, name);
			rc = hpshm_objects_remove(&o, 0, &err);
			CHECK((rc) == (HPSHM_EEXIST), "round %d: hpshm_objects_remove of a held %s: %s", r, name,
			      hpshm_errname(rc));
			CHECK((err.message[0]) != ('\0'), "(err.message[0]) != ('\\0')");
			alive = gc_ours(prefix, &removed);
			CHECK((alive) >= (1), "round %d: gc found nothing alive", r);
			CHECK(object_present(prefix, name, NULL), "round %d: gc removed the held %s", r, name);
			kept_alive++;
		} else {
			usleep(delay);
			if (how == 0 || how == 2)
				kill(c, SIGKILL);
			if (how == 1 || how == 2) {
				/* the children the creator has reported so far */
				char buf[sizeof(struct msg) * 8];
				struct pollfd pfd = {fds[0], POLLIN, 0};

				while (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN)) {
					ssize_t n = read(fds[0], buf, sizeof(struct msg));
					struct msg *m = (struct msg *)buf;

					if (n != (ssize_t)sizeof(struct msg))
						break;
					if (m->kind == MSG_CREATED) {
						news.created = 1;
						news.create_rc = m->val;
					} else if (m->kind == MSG_CHILD) {
						news.children++;
						kill((pid_t)m->val, SIGKILL);
					}
				}
			}
			if (how == 3)
				usleep(2000);
		}
		kill_and_reap_all();
		read_news(fds[0], &news, 0);
		close(fds[0]);
		/* Round 0's creator is dead: its pid is free for another program from here on. */
		if (r == 0)
			neighbour = neighbour_with_a_creators_pid();
		if (news.created) {
			CHECK((news.create_rc) == (0), "round %d: %s create of %s failed: %s%s", r, p->provider, name, hpshm_errname((int)news.create_rc), second ? " (the first round of the pair left it dead: it should be recycled)" : "");
			created++;
			if (second)
				recycled_rounds++;
		}
		CHECK(!news.spawn_failed, "round %d: hpshm_child_spawn failed: %s", r,
		      hpshm_errname((int)news.spawn_rc));

		if (!second)
			continue;
		/* everything of this run is dead now: gc must leave nothing of ours */
#ifdef HPSHM_TOOL_PATH
		if (!tool_used && object_present(prefix, name, NULL)) {
			run_tool_gc();
			tool_used = 1;
			CHECK(!object_present(prefix, name, NULL), "round %d: `hpshm gc` left the dead %s", r, name);
		}
#endif
		CHECK((gc_ours(prefix, &removed)) == (0), "round %d: an object of this run is alive after every process died", r);
		{
			struct found_list l;

			list_ours(prefix, &l);
			CHECK((l.n) == (0), "round %d: gc left %d objects (first %s)", r, l.n, l.n ? l.obj[0].id : "");
		}
		if (first_failure[0])
			goto done;
		{
			/* what the library cannot list (no header) is a leak too */
			char left[1024];

			CHECK(remove_leftovers(prefix, left, sizeof left) == 0,
			      "round %d (%s): gc cannot see what a killed creator left:%s", r, p->provider, left);
		}
	}
	cr_log_info("%d rounds on %d providers: %d creates, %d in rounds after a crash, %d dead removed by the gc logic, "
		    "%d live holders kept, hpshm gc tool %s",
		    ROUNDS, nprov, created, recycled_rounds, removed, kept_alive, tool_used ? "used" : "not built or not needed");
done:
	kill_and_reap_all();
	if (neighbour >= 0) {
		struct shmid_ds ds;
		int kept = shmctl(neighbour, IPC_STAT, &ds) == 0;

		(void)shmctl(neighbour, IPC_RMID, NULL); /* the test made it: the test removes it */
		if (!kept)
			failed("the neighbour's SysV segment %d, made under a dead creator's pid, was removed", neighbour);
	}
	if (first_failure[0]) {
		char left[1024];
		int alive = gc_ours(prefix, NULL), n = remove_leftovers(prefix, left, sizeof left);

		cr_assert_fail("%s\n(cleanup: %d objects of this run still alive, %d leftovers removed by hand:%s)",
			       first_failure, alive, n, left);
	}
	cr_assert_geq(kept_alive, ROUNDS / 4);
#ifdef HPSHM_TOOL_PATH
	cr_assert(tool_used, "no round left a dead object for the `hpshm gc` tool");
#endif
	state_take(&after, prefix);
	cr_assert_str_eq(after.text, before.text, "this run left objects behind:\n--- before\n%s--- after\n%s",
			 before.text, after.text);
}

/* A named segment whose creator runs cannot be created again; once it is killed, it can. */
static void owner_interlock(const struct named *p, const char *prefix)
{
	char name[96], pidtext[32];
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_object o;
	struct found_list l;
	hpshm_error err;
	int fds[2], rc;
	struct msg m;
	pid_t c;

	snprintf(name, sizeof name, "%sowner-%s", prefix, p->provider);
	name_used(name);
	cfg = named_config(p, name, named_size(p));
	cr_assert_not_null(cfg);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	c = hpt_fork();
	if (c == 0) {
		close(fds[0]);
		rc = hpshm_segment_create(&seg, named_size(p), cfg, &err);
		say(fds[1], MSG_CREATED, rc);
		if (rc < 0)
			_exit(2);
		pause();
		_exit(0);
	}
	cr_assert_neq(c, -1, "fork: %s", strerror(errno));
	creators[ncreators++] = c;
	close(fds[1]);
	rc = (int)read(fds[0], &m, sizeof m);
	close(fds[0]);
	CHECK(rc == (int)sizeof m && m.val == 0, "%s: the owner's create failed: %s", p->provider,
	      rc == (int)sizeof m ? hpshm_errname((int)m.val) : "no answer");

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, named_size(p), cfg, &err);
	CHECK(rc == HPSHM_EEXIST, "%s: create of %s while its owner runs: %s, want HPSHM_EEXIST: %s", p->provider, name,
	      hpshm_errname(rc), err.message);
	snprintf(pidtext, sizeof pidtext, "%ld", (long)c);
	CHECK(hpt_contains(err.message, name) || hpt_contains(err.message, pidtext),
	      "%s: the message names neither the segment nor its owner (pid %ld): %s", p->provider, (long)c, err.message);
	CHECK(err.hint[0] != '\0', "%s: no hint with the HPSHM_EEXIST", p->provider);
	cr_log_info("%s: owner alive: %s (%s)", p->provider, err.message, err.hint);

	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	rc = hpshm_segment_create(&seg, named_size(p), cfg, &err);
	CHECK(rc == 0, "%s: create of %s after its owner was killed: %s: %s", p->provider, name, hpshm_errname(rc),
	      err.message);
	CHECK(hpshm_segment_report(seg)->page_size == p->page_size, "%s: recycled with %zu-byte pages", p->provider,
	      hpshm_segment_report(seg)->page_size);
	CHECK(object_present(prefix, name, &o), "%s: the recycled %s is not listed", p->provider, name);
	CHECK(o.alive == 1, "%s: the recycled %s is listed dead", p->provider, name);
	CHECK(o.creator_pid == (long long)getpid(), "%s: the listed creator is %lld, not this process", p->provider,
	      o.creator_pid);
	rc = hpshm_objects_remove(&o, 0, &err);
	CHECK(rc == HPSHM_EEXIST, "%s: hpshm_objects_remove of a live segment: %s", p->provider, hpshm_errname(rc));
	CHECK(object_present(prefix, name, NULL), "%s: the live %s is gone after a refused remove", p->provider, name);
	rc = hpshm_segment_destroy(seg);
	seg = NULL;
	CHECK(rc == 0, "%s: destroy: %s", p->provider, hpshm_errname(rc));
	list_ours(prefix, &l);
	CHECK(l.n == 0, "%s: %s still listed after destroy", p->provider, name);
done:
	if (seg)
		hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
	kill_and_reap_all();
}

Test(crash, named_create_fails_while_the_owner_lives_and_recycles_after_it_died, .timeout = 120)
{
	struct named provs[4];
	char prefix[64], left[1024];
	int nprov, n;

	check_root();
	nprov = named_providers(provs, 4);
	subreaper();
	snprintf(prefix, sizeof prefix, "crash%ld-", (long)getpid());
	for (int i = 0; i < nprov && !first_failure[0]; i++)
		owner_interlock(&provs[i], prefix);
	(void)gc_ours(prefix, NULL);
	n = remove_leftovers(prefix, left, sizeof left);
	cr_assert(!first_failure[0], "%s", first_failure);
	cr_assert_eq(n, 0, "left behind:%s", left);
}
