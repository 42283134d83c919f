/* SPDX-License-Identifier: MIT */
/*
 * tests/test_sysbus.c -- hugetlb cgroup limits and SysV privileges, on the real kernel.
 *
 * Root only: each test skips with the reason otherwise, and fails instead when
 * HPSHM_TEST_REQUIRE contains "cgroup" (or "all").
 *
 * cgroup: a v1 hugetlb hierarchy is mounted in a temporary directory, a child cgroup gets a
 * fault-time limit of 4 MiB (hugetlb.<size>.limit_in_bytes) and no reservation limit --
 * the container setup in which an mmap succeeds and the first touch dies of SIGBUS.  A
 * forked child moved into it creates 32 MiB: under try it must end on a non-huge provider
 * and survive touching every byte; under on it must fail with HPSHM_ENOHUGE.  Everything is
 * undone (child cgroup removed, hierarchy unmounted) before any assertion.
 *
 * privilege: a forked child drops to nobody (no CAP_IPC_LOCK, not in vm.hugetlb_shm_group);
 * sysv_hugetlb's probe must say why, and auto under try must still succeed elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"

TestSuite(sysbus, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

#define MIB ((size_t)1 << 20)

/* Child exit codes. */
enum {
	CHILD_OK = 0,
	CHILD_CREATE_FAILED = 10,   /* try: no segment at all */
	CHILD_GOT_HUGE = 11,        /* try: a huge segment despite a 4 MiB limit */
	CHILD_CREATED_UNDER_ON = 12,/* on: a segment although no huge one can be faulted */
	CHILD_WRONG_CODE = 13,      /* on: failed with another code than ENOHUGE */
	CHILD_PROBE_BLIND = 14,     /* a hugetlb provider's probe did not see the cgroup limit */
	CHILD_SYNC = 15,            /* could not wait for the parent */
	CHILD_DROP = 16,            /* could not drop privileges */
	CHILD_SYSV_AVAILABLE = 17,  /* sysv_hugetlb probe passed for nobody */
	CHILD_SYSV_REASON = 18,     /* its reason does not name the group and the capability */
	CHILD_NO_FALLBACK = 19,     /* auto/try failed or picked sysv_hugetlb */
	CHILD_SYSV_NOT_RECORDED = 20
};

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

static int child_cgroup(const char *policy)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[64], reason[HPSHM_TEXT_MAX];
	int rc;

	if (hpshm_config_new(&cfg) < 0)
		return CHILD_CREATE_FAILED;
	snprintf(kv, sizeof kv, "huge_pages=%s", policy);
	if (hpshm_config_parse(cfg, kv, &err) < 0)
		return CHILD_CREATE_FAILED;

	rc = hpshm_provider_probe("mmap_hugetlb", 32 * MIB, cfg, NULL, reason, sizeof reason);
	fprintf(stderr, "child (%s): mmap_hugetlb probe: %s: %s\n", policy, hpshm_errname(rc), reason);
	if (rc != HPSHM_EUNAVAILABLE || !hpt_contains(reason, "cgroup"))
		return CHILD_PROBE_BLIND;

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 32 * MIB, cfg, &r, &err);
	if (!strcmp(policy, "on")) {
		fprintf(stderr, "child (on): %s: %s (hint: %s)\n", hpshm_errname(rc), err.message, err.hint);
		if (rc == 0) {
			/* touching it is what would SIGBUS: let the parent see that too */
			memset(hpshm_segment_address(seg), 1, hpshm_segment_size(seg));
			return CHILD_CREATED_UNDER_ON;
		}
		return rc == HPSHM_ENOHUGE ? CHILD_OK : CHILD_WRONG_CODE;
	}
	if (rc < 0) {
		fprintf(stderr, "child (try): %s: %s\n", hpshm_errname(rc), err.message);
		return CHILD_CREATE_FAILED;
	}
	fprintf(stderr, "child (try): provider %s, huge %d\n", r.provider, r.huge);
	memset(hpshm_segment_address(seg), 1, hpshm_segment_size(seg)); /* SIGBUS here is the bug */
	if (r.huge)
		return CHILD_GOT_HUGE;
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
	return CHILD_OK;
}

/* Fork a child, move it into the cgroup, let it run child_cgroup(policy); its wait status. */
static int run_in_cgroup(const char *procs, const char *policy, int *status)
{
	int go[2];
	pid_t pid;
	char num[32];
	int rc;

	if (pipe(go) < 0)
		return -errno;
	pid = hpt_fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(CHILD_SYNC);
		_exit(child_cgroup(policy));
	}
	close(go[0]);
	snprintf(num, sizeof num, "%ld\n", (long)pid);
	rc = write_file(procs, num);
	if (write(go[1], rc == 0 ? "g" : "", rc == 0 ? 1 : 0) < 0)
		rc = rc ? rc : -errno;
	close(go[1]);
	waitpid(pid, status, 0);
	return rc;
}

static const char *cgroup_size_name(size_t ps, char *buf, size_t len)
{
	if (ps >= (size_t)1 << 30)
		snprintf(buf, len, "%zuGB", ps >> 30);
	else if (ps >= MIB)
		snprintf(buf, len, "%zuMB", ps >> 20);
	else
		snprintf(buf, len, "%zuKB", ps >> 10);
	return buf;
}

/*
 * The limit cgroup: inside the test's own cgroup where the fixture made one (its pages are then
 * counted as the test's, and v2 has no other place the hugetlb controller may be bound), else in
 * a v1 hugetlb hierarchy the test mounts in a temporary directory.  Fills cg and the limit
 * file's path, and *mounted_at when it mounted one; 0, or a skip/fail with the reason.
 */
static void limit_cgroup(size_t ps, char *cg, size_t cglen, char *limit, size_t llen, char *dir)
{
	const char *own = hpt_test_cgroup();
	char sz[16], probe[1300];
	int e;

	cgroup_size_name(ps, sz, sizeof sz);
	if (own) {
		snprintf(probe, sizeof probe, "%s/cgroup.subtree_control", own);
		snprintf(cg, cglen, "%s/limit", own);
		cr_assert_eq(mkdir(cg, 0755), 0, "mkdir %s: %s", cg, strerror(errno));
		/* v2 says "max" for the fault limit; v1 "limit_in_bytes". */
		snprintf(limit, llen, "%s/hugetlb.%s.%s", cg, sz, access(probe, F_OK) == 0 ? "max" : "limit_in_bytes");
		return;
	}
	cr_assert_not_null(mkdtemp(dir));
	if (mount("none", dir, "cgroup", 0, "hugetlb") < 0) {
		e = errno;
		rmdir(dir);
		dir[0] = '\0';
		HPT_UNAVAILABLE("cgroup", NULL, "mount -t cgroup -o hugetlb: %s (controller in use elsewhere?)",
				strerror(e));
	}
	snprintf(cg, cglen, "%s/hpshm-test", dir);
	cr_assert_eq(mkdir(cg, 0755), 0, "mkdir %s: %s", cg, strerror(errno));
	snprintf(limit, llen, "%s/hugetlb.%s.limit_in_bytes", cg, sz);
}

Test(sysbus, cgroup_fault_limit_never_sigbus, .timeout = 120)
{
	size_t ps = hpt_default_huge_page_size();
	struct hpt_pool pool;
	char dir[64] = "/tmp/hpshm-cgroup-XXXXXX", cg[1300], file[1400], procs[1400];
	int st_try = 0, st_on = 0, rc_try, rc_on;

	if (geteuid() != 0)
		HPT_UNAVAILABLE("cgroup", NULL, "making a hugetlb cgroup needs root");
	if (ps == 0 || hpt_pool_read(ps, &pool) < 0 || hpt_pool_available(&pool) < 16)
		HPT_UNAVAILABLE("cgroup", "pool", "needs 16 free default-size huge pages (vm.nr_hugepages >= 16), has %lu",
				ps ? hpt_pool_available(&pool) : 0);
	if (hpt_test_cgroup())
		dir[0] = '\0';
	limit_cgroup(ps, cg, sizeof cg, file, sizeof file, dir);
	snprintf(procs, sizeof procs, "%s/cgroup.procs", cg);

	rc_try = write_file(file, "4194304\n");
	if (rc_try == 0) {
		rc_try = run_in_cgroup(procs, "try", &st_try);
		rc_on = run_in_cgroup(procs, "on", &st_on);
	} else {
		rc_on = rc_try;
	}

	/* undo everything before asserting */
	for (int i = 0; i < 50 && rmdir(cg) < 0 && errno == EBUSY; i++)
		usleep(20000);
	if (dir[0]) {
		if (umount2(dir, 0) < 0)
			cr_log_error("umount %s: %s", dir, strerror(errno));
		rmdir(dir);
	}

	cr_assert_eq(rc_try, 0, "setting up the cgroup (%s): %s", file, strerror(-rc_try));
	cr_assert_eq(rc_on, 0, "moving the child: %s", strerror(-rc_on));
	cr_assert(WIFEXITED(st_try), "under try the child died of signal %d (SIGBUS is %d)",
		  WIFSIGNALED(st_try) ? WTERMSIG(st_try) : 0, SIGBUS);
	cr_assert_eq(WEXITSTATUS(st_try), CHILD_OK, "under try: child exit %d", WEXITSTATUS(st_try));
	cr_assert(WIFEXITED(st_on), "under on the child died of signal %d (SIGBUS is %d)",
		  WIFSIGNALED(st_on) ? WTERMSIG(st_on) : 0, SIGBUS);
	cr_assert_eq(WEXITSTATUS(st_on), CHILD_OK, "under on: child exit %d", WEXITSTATUS(st_on));
}

static int child_nobody(void)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char reason[HPSHM_TEXT_MAX];
	unsigned i;
	int rc, recorded = 0;

	if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		return CHILD_DROP;
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* keep /proc/self readable as before */

	rc = hpshm_provider_probe("sysv_hugetlb", 4 * MIB, NULL, NULL, reason, sizeof reason);
	fprintf(stderr, "child (nobody): sysv_hugetlb probe: %s: %s\n", hpshm_errname(rc), reason);
	if (rc != HPSHM_EUNAVAILABLE)
		return CHILD_SYSV_AVAILABLE;
	if (!hpt_contains(reason, "hugetlb_shm_group") || !hpt_contains(reason, "CAP_IPC_LOCK"))
		return CHILD_SYSV_REASON;

	/* auto under try: some other provider */
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, NULL, &r, &err);
	if (rc < 0 || !strcmp(r.provider, "sysv_hugetlb")) {
		fprintf(stderr, "child (nobody): %s: %s\n", hpshm_errname(rc), rc < 0 ? err.message : r.provider);
		return CHILD_NO_FALLBACK;
	}
	memset(hpshm_segment_address(seg), 2, hpshm_segment_size(seg));
	hpshm_segment_destroy(seg);

	/* sysv_hugetlb first under try: ruled out by probe, recorded, then plain */
	if (hpshm_config_new(&cfg) < 0 || hpshm_config_parse(cfg, "provider=sysv_hugetlb,plain", &err) < 0)
		return CHILD_NO_FALLBACK;
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	hpshm_config_free(cfg);
	if (rc < 0 || strcmp(r.provider, "plain") != 0) {
		fprintf(stderr, "child (nobody): %s: %s\n", hpshm_errname(rc), rc < 0 ? err.message : r.provider);
		return CHILD_NO_FALLBACK;
	}
	for (i = 0; i < r.nattempts; i++)
		if (!strcmp(r.attempts[i].provider, "sysv_hugetlb") && !strcmp(r.attempts[i].call, "probe") &&
		    hpt_contains(r.attempts[i].reason, "hugetlb_shm_group"))
			recorded = 1;
	hpshm_segment_destroy(seg);
	return recorded ? CHILD_OK : CHILD_SYSV_NOT_RECORDED;
}

Test(sysbus, sysv_without_privilege_is_unavailable_with_the_reason)
{
	int status = 0;
	pid_t pid;

	if (geteuid() != 0)
		HPT_UNAVAILABLE("cgroup", "privilege", "dropping to another user needs root");
	/* A pool on paper, so the probe gets past the pool check to the privilege check;
	 * vm.hugetlb_shm_group there is root's group, which nobody is not in. */
	hpt_fakeroot_create(64, 64);
	pid = hpt_fork();
	if (pid == 0)
		_exit(child_nobody());
	if (pid > 0)
		waitpid(pid, &status, 0);
	hpt_fakeroot_destroy();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	cr_assert(WIFEXITED(status), "the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (WEXITSTATUS(status) == CHILD_SYSV_AVAILABLE)
		HPT_SKIP_UNDER_EMULATOR("the child that dropped to nobody still passes the SysV privilege probe: what "
					"the emulator makes of setuid() is not what the kernel does");
	cr_assert_eq(WEXITSTATUS(status), CHILD_OK, "child exit %d", WEXITSTATUS(status));
}
