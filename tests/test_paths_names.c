/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_names.c -- who is alive, and what attach refuses: the creator's liveness by pid
 * and start time (what keeps gc off the segments of running creators, and what tells a
 * recycled pid from the creator), the boot id and page size checks of attach, and spawn's
 * failures.
 *
 * Liveness reads /proc/<pid>/stat and attach reads /proc/sys/kernel/random/boot_id under the
 * sysroot, so a fake tree (fakes.h) makes a dead creator's pid look recycled or still running,
 * and the machine look rebooted, on demand.  Everything else is real: named plain segments in
 * /dev/shm, a creator that is really killed, a child that really attaches.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/port.h"
#include "ports/posix/sys.h"

#define MIB HPT_MIB

static hpshm_config *cfg;
static char shm_name[64];   /* this test's segment name */

static void names_init(void)
{
	hpt_fixture_init();
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(shm_name, sizeof shm_name, "hpt-paths-%ld-%u", (long)getpid(), (unsigned)rand());
}

static void names_fini(void)
{
	char path[128];

	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	hpshm_config_free(cfg);
	if (hpt_fakeroot_dir()[0])
		hpt_fakeroot_destroy();
	snprintf(path, sizeof path, "/dev/shm/hpshm.%s", shm_name);
	(void)unlink(path);
	hpt_fixture_fini();
}

TestSuite(paths_names, .init = names_init, .fini = names_fini, .timeout = 60);

static void set(const char *kv)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

/* ---- liveness: pid and start time ---- */

Test(paths_names, liveness_says_a_running_creator_runs)
{
	long long me = hpshm__port_getpid();
	uint64_t start = hpshm__port_process_start(me);

	cr_assert_neq(start, 0u, "no start time for this process");
	cr_assert_eq(hpshm__port_process_alive(me, start), 1);
}

Test(paths_names, liveness_tells_a_recycled_pid_by_its_start_time)
{
	long long me = hpshm__port_getpid();
	uint64_t start = hpshm__port_process_start(me);

	cr_assert_eq(hpshm__port_process_alive(me, start + 1), 0, "another start time is another process");
}

Test(paths_names, liveness_without_a_start_time_cannot_tell)
{
	cr_assert_eq(hpshm__port_process_alive(hpshm__port_getpid(), 0), -1);
}

Test(paths_names, liveness_of_a_reaped_child_is_dead)
{
	uint64_t start;
	int status;
	pid_t pid = hpt_fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	start = hpshm__port_process_start(pid);
	cr_assert_neq(start, 0u);
	cr_assert_eq(hpshm__port_process_alive(pid, start), 1);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_eq(hpshm__port_process_alive(pid, start), 0);
	cr_assert_eq(hpshm__port_process_alive(0, start), 0, "pid 0 is nobody's");
}

Test(paths_names, liveness_reads_the_start_time_after_a_command_name_with_spaces_and_parentheses)
{
	hpt_fakeroot_create(0, 0);
	hpt_fakeroot_write("proc/4242/stat",
			   "4242 (a b) (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10\n");
	cr_assert_eq(hpshm__port_process_start(4242), 987654u);
	hpt_fakeroot_write("proc/4243/stat", "4243 (truncated S 1\n");
	cr_assert_eq(hpshm__port_process_start(4243), 0u, "a line without ')' has no start time");
}

/* A named plain segment made by a child that is then killed: its creator's pid and start. */
static void dead_creator(long long *pid_out, uint64_t *start_out)
{
	int fds[2], status;
	char c;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_segment *seg;
		hpshm_error err;

		close(fds[0]);
		if (hpshm_segment_create(&seg, 4 * MIB, cfg, &err) != 0)
			_exit(1);
		if (write(fds[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &c, 1), 1, "the creator could not create its segment");
	close(fds[0]);
	*pid_out = pid;
	*start_out = hpshm__port_process_start(pid);
	cr_assert_neq(*start_out, 0u);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
}

struct find {
	const char  *name;   /* the name looked for */
	hpshm_object obj;    /* what was listed under it */
	int          found;  /* listed? */
};

static int find_one(void *user, const hpshm_object *o)
{
	struct find *f = user;

	if (strcmp(o->name, f->name) == 0) {
		f->obj = *o;
		f->found = 1;
	}
	return 0;
}

static struct find list_ours(void)
{
	struct find f;
	hpshm_error err;

	memset(&f, 0, sizeof f);
	f.name = shm_name;
	cr_assert_geq(hpshm_objects_list(find_one, &f, &err), 0, "%s", err.message);
	cr_assert(f.found, "segment %s was not listed", shm_name);
	return f;
}

static void fake_stat(long long pid, uint64_t start)
{
	char rel[64], text[256];

	snprintf(rel, sizeof rel, "proc/%lld/stat", pid);
	snprintf(text, sizeof text, "%lld (creator) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n", pid,
		 (unsigned long long)start);
	hpt_fakeroot_write(rel, text);
}

Test(paths_names, gc_keeps_the_segment_of_a_creator_that_still_runs)
{
	struct find f;
	hpshm_error err;
	long long pid;
	uint64_t start;
	char kv[128];

	HPT_SKIP_UNDER_EMULATOR("the creator forked under qemu-user is not found running by its start time, as "
				"it is natively (seen on aarch64 and s390x; the native run is the one that counts)");
	snprintf(kv, sizeof kv, "provider=plain,name=%s", shm_name);
	set(kv);
	dead_creator(&pid, &start);
	f = list_ours();
	cr_assert_eq(f.obj.creator_pid, pid);

	/* Nobody holds it any more, but its creator (same pid, same start time) runs: alive. */
	hpt_fakeroot_create(0, 0);
	fake_stat(pid, start);
	f = list_ours();
	cr_assert_eq(f.obj.state, HPSHM_OBJECT_ALIVE, "state %d: %s", f.obj.state, f.obj.note);
	cr_assert_eq(hpshm_objects_remove(&f.obj, 0, &err), HPSHM_EEXIST, "gc removed a running creator's segment");
	cr_assert_eq(hpshm_objects_remove(&f.obj, HPSHM_REMOVE_FORCE, &err), HPSHM_EEXIST,
		     "even a forced gc must keep it");
	f = list_ours();   /* still there */
	hpt_fakeroot_destroy();
	cr_assert_eq(hpshm_objects_remove(&f.obj, 0, &err), 0, "%s", err.message);
}

Test(paths_names, gc_removes_the_segment_of_a_creator_whose_pid_was_recycled)
{
	struct find f;
	hpshm_error err;
	long long pid;
	uint64_t start;
	char kv[128], path[128];

	snprintf(kv, sizeof kv, "provider=plain,name=%s", shm_name);
	set(kv);
	dead_creator(&pid, &start);

	/* The pid runs again, started later: another process, so the segment is dead. */
	hpt_fakeroot_create(0, 0);
	fake_stat(pid, start + 100);
	f = list_ours();
	cr_assert_eq(f.obj.state, HPSHM_OBJECT_DEAD, "state %d: %s", f.obj.state, f.obj.note);
	cr_assert_eq(hpshm_objects_remove(&f.obj, 0, &err), 0, "%s", err.message);
	snprintf(path, sizeof path, "/dev/shm/hpshm.%s", shm_name);
	cr_assert_neq(access(path, F_OK), 0, "%s was not removed", path);
	/* removing it again: gone */
	cr_assert_neq(hpshm_objects_remove(&f.obj, 0, &err), 0);
}

Test(paths_names, a_second_create_of_a_live_name_is_eexist)
{
	hpshm_segment *a = NULL, *b = NULL;
	hpshm_error err;
	char kv[128];

	snprintf(kv, sizeof kv, "provider=plain,name=%s", shm_name);
	set(kv);
	cr_assert_eq(hpshm_segment_create(&a, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&b, 4 * MIB, cfg, &err), HPSHM_EEXIST, "%s", err.message);
	cr_assert_null(b);
	cr_assert_eq(hpshm_segment_destroy(a), 0);
	/* once destroyed, the name is free */
	cr_assert_eq(hpshm_segment_create(&b, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(b), 0);
}

Test(paths_names, a_create_recycles_the_name_of_a_dead_creator)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	long long pid;
	uint64_t start;
	char kv[128];

	snprintf(kv, sizeof kv, "provider=plain,name=%s", shm_name);
	set(kv);
	dead_creator(&pid, &start);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* ---- attach: boot id, page size ---- */

/*
 * Attach token in a child after it unmapped the creator's copy of seg: 0 if the attach was
 * accepted, else its code, and then the refusal must say want_text.
 */
static int attach_in_child(const hpshm_segment *seg, const char *token, const char *want_text)
{
	const hpshm_report *r = hpshm_segment_report(seg);
	int status;
	pid_t pid = hpt_fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_segment *child = NULL;
		hpshm_error err;
		int rc;

		if (munmap(hpshm_segment_address(seg), r->mapped_size) != 0)
			_exit(100);
		memset(&err, 0, sizeof err);
		rc = hpshm_segment_attach(&child, token, NULL, &err);
		if (rc == 0)
			_exit(hpshm_segment_destroy(child) == 0 ? 0 : 103);
		if (want_text && !hpt_contains(err.message, want_text))
			_exit(102);
		_exit(-rc);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "status %#x", status);
	cr_assert_neq(WEXITSTATUS(status), 100, "the child could not unmap the creator's mapping");
	cr_assert_neq(WEXITSTATUS(status), 102, "the refusal does not say \"%s\"", want_text);
	cr_assert_neq(WEXITSTATUS(status), 103, "the attached segment could not be detached");
	return -WEXITSTATUS(status);
}

Test(paths_names, attach_after_a_reboot_is_refused_as_stale)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX], kv[160];
	hpshm_error err;
	int rc;

	snprintf(kv, sizeof kv, "provider=plain,name=%s,reattach=exec", shm_name);
	set(kv);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof token, &err), 0, "%s", err.message);

	/* In the same boot a child attaches ... */
	rc = attach_in_child(seg, token, NULL);
	cr_assert_eq(rc, 0, "the attach in the same boot failed: %s", hpshm_errname(rc));
	/* ... after a reboot (another boot id) the header is stale. */
	hpt_fakeroot_create(0, 0);
	hpt_fakeroot_write("proc/sys/kernel/random/boot_id", "00000000-0000-4000-8000-000000000000\n");
	rc = attach_in_child(seg, token, "reboot");
	cr_assert_eq(rc, HPSHM_EINVAL, "got %s", hpshm_errname(rc));
	hpt_fakeroot_destroy();
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* ---- spawn ---- */

Test(paths_names, spawn_of_a_missing_program_is_an_error_with_enoent_not_a_child)
{
	hpshm_segment *seg = NULL;
	hpshm_child child;
	hpshm_error err;
	char prog[] = "hpt-paths-nosuch-program";
	char *argv[] = { prog, NULL };
	int rc;

	set("provider=plain,reattach=exec");
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	memset(&err, 0, sizeof err);
	rc = hpshm_child_spawn(seg, "hpt-paths-nosuch-program", argv, NULL, &child, &err);
	cr_assert_lt(rc, 0, "a program that is not in PATH was started");
	cr_assert_eq(err.sys_errno, ENOENT, "errno %d: %s", err.sys_errno, err.message);
	memset(&err, 0, sizeof err);
	rc = hpshm_child_spawn(seg, "/nonexistent/hpt-paths-prog", argv, NULL, &child, &err);
	cr_assert_lt(rc, 0);
	cr_assert_eq(err.sys_errno, ENOENT, "errno %d: %s", err.sys_errno, err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(paths_names, spawn_of_a_file_that_is_not_a_program_is_an_error_naming_exec)
{
	hpshm_segment *seg = NULL;
	hpshm_child child;
	hpshm_error err;
	char path[] = "/tmp/hpt-paths-notprog.XXXXXX";
	char *argv[] = { path, NULL };
	int fd = mkstemp(path), rc;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "\x7f" "ELF garbage", 12), 12);
	close(fd);
	cr_assert_eq(chmod(path, 0755), 0);
	set("provider=plain,reattach=exec");
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	memset(&err, 0, sizeof err);
	rc = hpshm_child_spawn(seg, path, argv, NULL, &child, &err);
	unlink(path);
	cr_assert_lt(rc, 0, "a file that is not a program was started");
	cr_assert_str_eq(err.call, "execve");
	cr_assert_eq(err.sys_errno, ENOEXEC, "errno %d: %s", err.sys_errno, err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(paths_names, wait_for_a_child_already_reaped_is_a_waitpid_error)
{
	hpshm_segment *seg = NULL;
	hpshm_child child;
	hpshm_error err;
	char prog[] = "/bin/true";
	char *argv[] = { prog, NULL };
	int status = -1;

	set("provider=plain,reattach=exec");
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_child_spawn(seg, "/bin/true", argv, NULL, &child, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, 0);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), HPSHM_ESYS);
	cr_assert_str_eq(err.call, "waitpid");
	cr_assert_eq(err.sys_errno, ECHILD);
	child.pid = 0;
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* A directory of its own with one file, name, of the given mode and text. */
static void one_file_dir(char *dir, const char *name, mode_t mode, const char *text)
{
	char path[256];
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
}

static void one_file_dir_remove(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	(void)unlink(path);
	(void)rmdir(dir);
}

Test(paths_names, spawn_searches_path_past_a_file_that_cannot_run_as_execvp_does)
{
	char a[] = "/tmp/hpt-paths-pathA.XXXXXX", b[] = "/tmp/hpt-paths-pathB.XXXXXX", path[128], prog[] = "hpt-prog";
	char *argv[] = { prog, NULL };
	hpshm_segment *seg = NULL;
	hpshm_child child;
	hpshm_error err;
	int status = -1, rc;
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	one_file_dir(a, prog, 0644, "not runnable\n");
	one_file_dir(b, prog, 0755, "#!/bin/sh\nexit 5\n");
	set("provider=plain,reattach=exec");
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);

	/* A's file cannot run, the empty entry (this directory) has none, B's runs. */
	snprintf(path, sizeof path, "%s::%s", a, b);
	setenv("PATH", path, 1);
	rc = hpshm_child_spawn(seg, prog, argv, NULL, &child, &err);
	if (rc == 0)
		rc = hpshm_child_wait(&child, &status, &err);
	cr_assert_eq(rc, 0, "%s", err.message);
	cr_assert_eq(status, 5, "B's program did not run (status %d)", status);

	/* Only A: found, but not runnable, is EACCES rather than ENOENT. */
	setenv("PATH", a, 1);
	memset(&err, 0, sizeof err);
	rc = hpshm_child_spawn(seg, prog, argv, NULL, &child, &err);
	cr_assert_lt(rc, 0);
	cr_assert_eq(err.sys_errno, EACCES, "errno %d: %s", err.sys_errno, err.message);

	/* No PATH at all: the system's default path finds sh. */
	unsetenv("PATH");
	{
		char sh[] = "sh", c[] = "-c", code[] = "exit 3";
		char *sh_argv[] = { sh, c, code, NULL };

		rc = hpshm_child_spawn(seg, "sh", sh_argv, NULL, &child, &err);
		if (rc == 0)
			rc = hpshm_child_wait(&child, &status, &err);
	}
	if (old) {
		setenv("PATH", old, 1);
		free(old);
	}
	cr_assert_eq(rc, 0, "%s", err.message);
	cr_assert_eq(status, 3);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	one_file_dir_remove(a, prog);
	one_file_dir_remove(b, prog);
}

/* ---- attach to a SysV segment: what it refuses (needs a pool) ---- */

/* A re-attachable SysV segment and its token, or a skip without a pool. */
static hpshm_segment *sysv_with_token(char *token, size_t len)
{
	struct hpt_pool p;
	hpshm_segment *seg = NULL;
	hpshm_error err;

	const char *emu = hpt_emulator_refuses_sysv_hugetlb(2 * MIB);

	if (emu) {
		hpshm_config_free(cfg);
		HPT_SKIP("%s", emu);
	}
	if (hpt_pool_read(2 * MIB, &p) < 0 || hpt_pool_available(&p) < 3) {
		hpshm_config_free(cfg);
		HPT_UNAVAILABLE_PAGES("sysv_hugetlb", "2MiB", 3, "needs 3 free 2MiB pages for a SysV segment");
	}
	set("provider=sysv_hugetlb,huge_pages=on,reattach=exec");
	/* Under an emulator a SysV attach lands only where the emulator would put one. */
	if (hpt_emulator())
		hpt_config_parsef(cfg, "base_address=%#lx", (unsigned long)hpt_sysv_address(8 * MIB, 2 * MIB));
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, len, &err), 0, "%s", err.message);
	return seg;
}

Test(paths_names, sysv_attach_after_the_creator_destroyed_it_is_einval)
{
	char token[HPSHM_TOKEN_MAX];
	hpshm_segment *seg = sysv_with_token(token, sizeof token), *other = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_attach(&other, token, NULL, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert(hpt_contains(err.message, "does not exist"), "%s", err.message);
}
