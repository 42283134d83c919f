/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_tools.c -- whole features of the tool and the library's logging, end to end:
 * `hpshm run` (the child's status, a missing program, a signal, the segment gone after), `hpshm
 * plan`, `hpshm bench --svg` and `--reserve`, and the log callback and built-in sink.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the hpshm tool"
#endif

#define MIB ((size_t)1 << 20)

TestSuite(paths_tools, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 120);

/* ---- hpshm run ---- */

Test(paths_tools, run_passes_the_token_and_returns_the_childs_status)
{
	struct hpt_run *r;

	r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", "--config", "provider=plain", "--", "/bin/sh", "-c",
		     "case \"$HPSHM_TOKEN\" in hpshm*) exit 7;; *) exit 3;; esac", NULL);
	cr_assert_eq(r->status, 7, "the child did not see a token (3) or run failed: %d: %s", r->status, r->err);
}

Test(paths_tools, run_of_a_program_that_does_not_exist_exits_127)
{
	struct hpt_run *r;

	r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", "--config", "provider=plain", "--",
		     "/nonexistent/hpt-paths-program", NULL);
	cr_assert_eq(r->status, 127, "status %d: %s", r->status, r->err);
	cr_assert(hpt_contains(r->err, "hpt-paths-program"), "%s", r->err);
}

Test(paths_tools, run_of_a_program_that_cannot_be_executed_exits_126)
{
	char path[] = "/tmp/hpt-paths-noexec.XXXXXX";
	struct hpt_run *r;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "not a program\n", 14), 14);
	close(fd);
	cr_assert_eq(chmod(path, 0644), 0);
	r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", "--config", "provider=plain", "--", path, NULL);
	unlink(path);
	/* root may search but not execute a file without an x bit: EACCES */
	cr_assert_eq(r->status, 126, "status %d: %s", r->status, r->err);
}

Test(paths_tools, run_of_a_child_killed_by_a_signal_exits_128_plus_the_signal)
{
	struct hpt_run *r;

	r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", "--config", "provider=plain", "--", "/bin/sh", "-c",
		     "kill -USR1 $$", NULL);
	cr_assert_eq(r->status, 128 + SIGUSR1, "status %d: %s", r->status, r->err);
}

Test(paths_tools, run_destroys_the_named_segment_once_the_child_ended)
{
	char cmd[256], path[128];
	struct hpt_run *r;
	char name[64];

	snprintf(name, sizeof name, "hpt-paths-run-%ld", (long)getpid());
	snprintf(path, sizeof path, "/dev/shm/hpshm.%s", name);
	snprintf(cmd, sizeof cmd, "test -e %s && exit 5; exit 6", path);
	{
		char kv[128];

		snprintf(kv, sizeof kv, "provider=plain,name=%s", name);
		r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", "--config", kv, "--", "/bin/sh", "-c", cmd, NULL);
	}
	cr_assert_eq(r->status, 5, "the named segment was not there while the child ran (6) or run failed: %d: %s",
		     r->status, r->err);
	cr_assert_neq(access(path, F_OK), 0, "%s outlived hpshm run", path);
}

Test(paths_tools, run_without_a_command_is_a_usage_error)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", NULL);

	cr_assert_eq(r->status, 2, "status %d: %s", r->status, r->err);
}

Test(paths_tools, run_that_cannot_create_exits_1_and_starts_nothing)
{
	struct hpt_run *r;
	char flag[] = "/tmp/hpt-paths-ran.XXXXXX";
	char cmd[128];
	int fd = mkstemp(flag);

	cr_assert_geq(fd, 0);
	close(fd);
	unlink(flag);
	snprintf(cmd, sizeof cmd, "touch %s", flag);
	r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", "--config", "provider=nosuch", "--", "/bin/sh", "-c", cmd,
		     NULL);
	cr_assert_neq(r->status, 0);
	cr_assert_neq(access(flag, F_OK), 0, "the command ran although no segment was made");
	unlink(flag);
}

/* ---- hpshm plan ---- */

Test(paths_tools, plan_json_counts_the_pages_of_the_default_size)
{
	size_t ps = hpt_default_huge_page_size();
	struct hpt_run *r;
	char want[64];

	if (ps == 0)
		HPT_SKIP("the kernel offers no huge page size");
	r = hpt_tool(HPSHM_TOOL_PATH, "plan", "64MiB", "--json", NULL);
	cr_assert(r->status == 0 || r->status == 1, "status %d: %s", r->status, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	snprintf(want, sizeof want, "\"pages\": %lu,", hpt_pages(64 * MIB, ps));
	cr_assert(strstr(r->out, want), "no %s in:\n%s", want, r->out);
	snprintf(want, sizeof want, "\"page_size\": %zu,", ps);
	cr_assert(strstr(r->out, want), "no %s in:\n%s", want, r->out);
	/* ready, or a list of what is missing: never both */
	cr_assert(strstr(r->out, "\"ready\": true") ? strstr(r->out, "\"missing\": []") != NULL : 1, "%s", r->out);
}

Test(paths_tools, plan_for_an_unoffered_page_size_is_refused)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "plan", "64MiB", "--huge-page-size", "3MiB", NULL);

	cr_assert_neq(r->status, 0, "%s", r->out);
	cr_assert(hpt_contains(r->err, "3MiB") || hpt_contains(r->out, "3MiB"), "%s%s", r->out, r->err);
}

Test(paths_tools, plan_without_a_size_is_a_usage_error)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "plan", NULL);

	cr_assert_eq(r->status, 2, "status %d: %s", r->status, r->err);
}

/* ---- hpshm bench ---- */

Test(paths_tools, bench_writes_an_svg_chart)
{
	char path[] = "/tmp/hpt-paths-bench.XXXXXX";
	struct hpt_run *r;
	char buf[512] = "";
	FILE *f;
	int fd;

	HPT_SKIP_UNDER_EMULATOR("the bench execs itself");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	r = hpt_tool(HPSHM_TOOL_PATH, "bench", "--size", "8MiB", "--providers", "plain", "--rounds", "1",
		     "--phase-seconds", "0.05", "--quiet", "--svg", path, NULL);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_gt(fread(buf, 1, sizeof buf - 1, f), 0u);
	fclose(f);
	unlink(path);
	cr_assert(strstr(buf, "<svg"), "not an SVG: %.200s", buf);
}

Test(paths_tools, bench_svg_to_an_unwritable_path_is_an_error)
{
	struct hpt_run *r;

	HPT_SKIP_UNDER_EMULATOR("the bench execs itself");
	r = hpt_tool(HPSHM_TOOL_PATH, "bench", "--size", "8MiB", "--providers", "plain", "--rounds", "1",
		     "--phase-seconds", "0.05", "--quiet", "--svg", "/nonexistent/dir/chart.svg", NULL);
	cr_assert_neq(r->status, 0, "writing the chart failed and bench said nothing");
	cr_assert(hpt_contains(r->err, "chart.svg"), "%s", r->err);
}

Test(paths_tools, bench_reserve_raises_the_pool_for_the_run_and_puts_it_back, .timeout = 180)
{
	struct hpt_pool before, after;
	unsigned long from = 0, to = 0;
	struct hpt_run *r;
	const char *note;
	int knobs;

	HPT_SKIP_UNDER_EMULATOR("the bench execs itself");
	if (geteuid() != 0)
		HPT_SKIP("--reserve writes nr_hugepages: needs root");
	knobs = hpt_pool_knobs_lock();
	if (hpt_pool_read(2 * MIB, &before) < 0) {
		hpt_pool_knobs_unlock(knobs);
		HPT_SKIP("the kernel has no 2 MiB pages");
	}
	r = hpt_tool(HPSHM_TOOL_PATH, "bench", "--size", "8MiB", "--page-size", "2MiB", "--providers", "mmap_hugetlb",
		     "--rounds", "1", "--phase-seconds", "0.05", "--quiet", "--json", "--reserve", NULL);
	cr_assert_eq(hpt_pool_read(2 * MIB, &after), 0);
	hpt_pool_knobs_unlock(knobs);
	cr_assert_eq(after.total, before.total, "nr_hugepages %lu before, %lu after --reserve", before.total,
		     after.total);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	note = strstr(r->out, "\"pool\": \"2048 KiB pool ");
	cr_assert_not_null(note, "no note of the reservation in:\n%s", r->out);
	cr_assert_eq(sscanf(note, "\"pool\": \"2048 KiB pool %lu -> %lu pages", &from, &to), 2, "%.120s", note);
	cr_assert_eq(from, before.total, "the pool was %lu, the bench saw %lu", before.total, from);
	cr_assert_gt(to, from, "--reserve added no page: %.120s", note);
}

/* ---- logging ---- */

struct kept {
	int  n;                           /* messages seen */
	int  warnings;                    /* of them at warning level */
	int  above;                       /* of them above the level asked for */
	char last[HPSHM_MESSAGE_MAX];     /* the last one */
};

static void keep(void *user, hpshm_log_level level, const char *msg)
{
	struct kept *k = user;

	k->n++;
	if (level == HPSHM_LOG_WARNING)
		k->warnings++;
	if (level > HPSHM_LOG_WARNING)
		k->above++;
	snprintf(k->last, sizeof k->last, "%s", msg);
}

Test(paths_tools, log_callback_gets_the_fallback_warning_with_its_user_pointer)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	struct kept k;

	memset(&k, 0, sizeof k);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpshm_config_set_log(cfg, keep, &k, HPSHM_LOG_WARNING);
	/* a huge provider that cannot work, then plain: the fallback is logged at warning */
	cr_assert_eq(hpshm_config_parse(cfg, "provider=hugetlbfs,plain,huge_pages=try,hugetlbfs_path=/nonexistent", &err),
		     0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
	cr_assert_geq(k.warnings, 1, "no warning for the fallback to plain (%d messages)", k.n);
	cr_assert_eq(k.above, 0, "messages above the level asked for reached the callback");
}

Test(paths_tools, log_level_off_silences_the_callback)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	struct kept k;

	memset(&k, 0, sizeof k);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpshm_config_set_log(cfg, keep, &k, HPSHM_LOG_OFF);
	cr_assert_eq(hpshm_config_parse(cfg, "provider=hugetlbfs,plain,huge_pages=try,hugetlbfs_path=/nonexistent", &err),
		     0);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
	cr_assert_eq(k.n, 0, "log level off, yet %d messages (last: %s)", k.n, k.last);
}

Test(paths_tools, built_in_sink_writes_to_stderr_at_the_level_of_log_level)
{
	struct hpt_run *r;

	/* the tool uses the built-in sink; debug shows the walk */
	r = hpt_tool(HPSHM_TOOL_PATH, "check", "--size", "4MiB", "--config",
		     "provider=hugetlbfs,plain,huge_pages=try,hugetlbfs_path=/nonexistent,log_level=debug", NULL);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(hpt_contains(r->err, "hpshm"), "nothing on stderr at log_level=debug: %s", r->err);
	r = hpt_tool(HPSHM_TOOL_PATH, "check", "--size", "4MiB", "--config",
		     "provider=hugetlbfs,plain,huge_pages=try,hugetlbfs_path=/nonexistent,log_level=off", NULL);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(!hpt_contains(r->err, "warning"), "log_level=off still wrote: %s", r->err);
}

/* ---- ls and gc on a dead segment ---- */

/* A named plain segment whose creator was killed; its name. */
static const char *dead_segment(char *name, size_t len)
{
	hpshm_config *cfg;
	hpshm_error err;
	char kv[128];

	snprintf(name, len, "hpt-paths-dead-%ld", (long)getpid());
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(kv, sizeof kv, "provider=plain,name=%s", name);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	hpt_crashed_creator(cfg, 4 * MIB, "segment");
	hpshm_config_free(cfg);
	return name;
}

static void unlink_dead(const char *name)
{
	char path[128];

	snprintf(path, sizeof path, "/hpshm.%s", name);
	(void)shm_unlink(path);
}

Test(paths_tools, ls_lists_a_dead_segment_as_dead_with_its_creator)
{
	char name[64], want[128];
	struct hpt_run *r;

	dead_segment(name, sizeof name);
	r = hpt_tool(HPSHM_TOOL_PATH, "ls", NULL);
	unlink_dead(name);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	snprintf(want, sizeof want, " %s ", name);
	{
		const char *row = strstr(r->out, want);
		const char *eol;

		cr_assert_not_null(row, "%s is not listed:\n%s", name, r->out);
		eol = strchr(row, '\n');
		cr_assert(eol && memmem(row, (size_t)(eol - row), "dead", 4), "its row does not say dead: %.200s", row);
	}
}

Test(paths_tools, gc_dry_run_would_remove_a_dead_segment_and_removes_nothing)
{
	char name[64], path[128];
	struct hpt_run *r;
	const char *obj, *action;

	dead_segment(name, sizeof name);
	snprintf(path, sizeof path, "/dev/shm/hpshm.%s", name);
	r = hpt_tool(HPSHM_TOOL_PATH, "gc", "--dry-run", "--json", NULL);
	cr_assert_eq(access(path, F_OK), 0, "gc --dry-run removed %s", path);
	unlink_dead(name);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"dry_run\": true"), "%s", r->out);
	obj = strstr(r->out, name);
	cr_assert_not_null(obj, "%s is not in gc's list:\n%s", name, r->out);
	action = strstr(obj, "\"action\": ");
	cr_assert_not_null(action);
	cr_assert_eq(strncmp(action, "\"action\": \"would remove\"", 24), 0, "%.60s", action);
}

Test(paths_tools, gc_text_dry_run_counts_what_it_would_remove)
{
	char name[64];
	struct hpt_run *r;
	unsigned would = 0;
	const char *sum;

	dead_segment(name, sizeof name);
	r = hpt_tool(HPSHM_TOOL_PATH, "gc", "--dry-run", NULL);
	unlink_dead(name);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(strstr(r->out, name), "%s", r->out);
	sum = strstr(r->out, " would be removed");
	cr_assert_not_null(sum, "%s", r->out);
	while (sum > r->out && sum[-1] >= '0' && sum[-1] <= '9')
		sum--;
	cr_assert_eq(sscanf(sum, "%u would be removed", &would), 1);
	cr_assert_geq(would, 1u, "%s", r->out);
}

Test(paths_tools, ls_and_gc_refuse_unexpected_arguments)
{
	cr_assert_eq(hpt_tool(HPSHM_TOOL_PATH, "ls", "--bogus", NULL)->status, 2);
	cr_assert_eq(hpt_tool(HPSHM_TOOL_PATH, "gc", "--bogus", NULL)->status, 2);
}

/* ---- the tool's own help ---- */

Test(paths_tools, help_and_version_exit_0_and_name_the_commands)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "--help", NULL);
	static const char *const cmds[] = { "probe", "plan", "check", "run", "ls", "gc", "bench" };

	cr_assert_eq(r->status, 0, "%s", r->err);
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		cr_assert(strstr(r->out, cmds[i]) || strstr(r->err, cmds[i]), "--help does not name %s", cmds[i]);
	r = hpt_tool(HPSHM_TOOL_PATH, "--version", NULL);
	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_assert_neq(r->out[0], '\0');
}

Test(paths_tools, help_of_each_command_exits_0)
{
	static const char *const cmds[] = { "probe", "plan", "check", "run", "ls", "gc", "bench", "providers" };

	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, cmds[i], "--help", NULL);

		cr_assert_eq(r->status, 0, "%s --help: %d %s", cmds[i], r->status, r->err);
		cr_assert(strstr(r->out, cmds[i]) || strstr(r->err, cmds[i]), "%s --help does not name it", cmds[i]);
	}
}

/* ---- probe and check in text ---- */

Test(paths_tools, probe_text_names_every_provider_and_plain_is_usable)
{
	static const char *const names[] = { "memfd_hugetlb", "mmap_hugetlb", "sysv_hugetlb", "hugetlbfs", "plain" };
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "probe", "--size", "4MiB", NULL);

	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		cr_assert(strstr(r->out, names[i]), "probe does not name %s:\n%s", names[i], r->out);
}

Test(paths_tools, check_text_reports_the_provider_it_used)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "check", "--size", "4MiB", "--config", "provider=plain", NULL);

	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(strstr(r->out, "plain"), "%s", r->out);
}

/* ---- hpshm run forwards the signals that would otherwise leave the segment behind ---- */

Test(paths_tools, run_forwards_sigterm_to_the_child_and_still_destroys_the_segment, .timeout = 60)
{
	char name[64], kv[128], script[256], flag[] = "/tmp/hpt-paths-runflag.XXXXXX", path[128];
	int fd = mkstemp(flag), status = 0, i;
	pid_t pid;

	cr_assert_geq(fd, 0);
	close(fd);
	unlink(flag);
	snprintf(name, sizeof name, "hpt-paths-runsig-%ld", (long)getpid());
	snprintf(path, sizeof path, "/dev/shm/hpshm.%s", name);
	snprintf(kv, sizeof kv, "provider=plain,name=%s", name);
	snprintf(script, sizeof script, "trap 'exit 9' TERM; touch %s; while :; do sleep 0.05; done", flag);
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execl(HPSHM_TOOL_PATH, "hpshm", "run", "--size", "4MiB", "--config", kv, "--", "/bin/sh", "-c", script,
		      (char *)NULL);
		_exit(126);
	}
	/* Until the child's shell made the flag, or the tool ended: 50 s bounds a hang (the
	 * test's own limit is 60), not the speed of an emulated start beside another lane. */
	for (i = 0; i < 1000 && access(flag, F_OK) != 0; i++) {
		cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "hpshm run ended (status %#x) before its child started",
			     status);
		usleep(50000);
	}
	cr_assert_eq(access(flag, F_OK), 0, "the child did not start in 50 s");
	unlink(flag);
	cr_assert_eq(access(path, F_OK), 0, "the named segment is not there while the child runs");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "hpshm run died of the signal (status %#x) instead of forwarding it", status);
	cr_assert_eq(WEXITSTATUS(status), 9, "run's status is not the child's");
	cr_assert_neq(access(path, F_OK), 0, "%s outlived hpshm run", path);
}

/* ---- hpshm plan when something is missing ---- */

/* More than any pool here holds, and a size the program's size_t can hold (3 GiB on 32-bit). */
#define PLAN_BEYOND (sizeof(size_t) >= 8 ? "64GiB" : "3GiB")

Test(paths_tools, plan_text_for_more_than_the_pool_lists_what_is_missing_and_the_commands)
{
	struct hpt_run *r;

	if (hpt_default_huge_page_size() == 0)
		HPT_SKIP("the kernel offers no huge page size");
	r = hpt_tool(HPSHM_TOOL_PATH, "plan", PLAN_BEYOND, NULL);
	cr_assert(r->status == 0 || r->status == 1, "status %d: %s", r->status, r->err);
	cr_assert(strstr(r->out, "missing now:"), "%s", r->out);
	cr_assert(strstr(r->out, "run now, as root:"), "%s", r->out);
	cr_assert(strstr(r->out, "vm.nr_hugepages"), "%s", r->out);
	cr_assert(strstr(r->out, "to keep it across reboots:"), "%s", r->out);
}

Test(paths_tools, plan_json_for_more_than_the_pool_is_not_ready_and_has_commands)
{
	struct hpt_run *r;

	if (hpt_default_huge_page_size() == 0)
		HPT_SKIP("the kernel offers no huge page size");
	r = hpt_tool(HPSHM_TOOL_PATH, "plan", PLAN_BEYOND, "--json", NULL);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"ready\": false"), "%s", r->out);
	cr_assert(strstr(r->out, "\"what\": \"pool\""), "%s", r->out);
	cr_assert(strstr(r->out, "sysctl -w vm.nr_hugepages="), "%s", r->out);
}

Test(paths_tools, plan_under_huge_pages_off_has_nothing_to_set_up)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "plan", "64MiB", "--config", "huge_pages=off", NULL);

	if (hpt_default_huge_page_size() == 0)
		HPT_SKIP("the kernel offers no huge page size");
	cr_assert_eq(r->status, 0, "status %d: %s%s", r->status, r->out, r->err);
	cr_assert(strstr(r->out, "nothing to set up"), "%s", r->out);
}

Test(paths_tools, the_help_command_explains_one_command_and_refuses_unknown_ones)
{
	struct hpt_run *r;

	cr_assert_eq(hpt_tool(HPSHM_TOOL_PATH, NULL)->status, 2, "no command is a usage error");
	cr_assert_eq(hpt_tool(HPSHM_TOOL_PATH, "help", NULL)->status, 0);
	r = hpt_tool(HPSHM_TOOL_PATH, "help", "gc", NULL);
	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_assert(strstr(r->out, "--dry-run") || strstr(r->err, "--dry-run"), "help gc does not name --dry-run");
	r = hpt_tool(HPSHM_TOOL_PATH, "help", "nosuch", NULL);
	cr_assert_eq(r->status, 2);
	cr_assert(strstr(r->err, "nosuch"), "%s", r->err);
	cr_assert_eq(hpt_tool(HPSHM_TOOL_PATH, "help", "gc", "ls", NULL)->status, 2);
}

Test(paths_tools, run_that_cannot_create_names_every_provider_it_tried)
{
	struct hpt_run *r;

	r = hpt_tool(HPSHM_TOOL_PATH, "run", "--size", "4MiB", "--config",
		     "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=/nonexistent/hpt-paths", "--", "/bin/true", NULL);
	cr_assert_eq(r->status, 1, "status %d: %s", r->status, r->err);
	cr_assert(strstr(r->err, "tried hugetlbfs: HPSHM_EUNAVAILABLE"), "%s", r->err);
}

/* ---- hpshm exec refuses what an interposed program cannot honour ---- */

Test(paths_tools, exec_refuses_keys_an_anonymous_region_cannot_honour)
{
	static const char *const kvs[] = { "name=x", "reattach=exec", "base_address=0x600000000000" };

	for (size_t i = 0; i < sizeof kvs / sizeof kvs[0]; i++) {
		struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "exec", "--config", kvs[i], "--", "/bin/true", NULL);
		char key[32];

		snprintf(key, sizeof key, "%.*s", (int)strcspn(kvs[i], "="), kvs[i]);
		cr_assert_eq(r->status, 2, "%s: status %d: %s", kvs[i], r->status, r->err);
		cr_assert(strstr(r->err, key), "%s: %s", kvs[i], r->err);
	}
}

Test(paths_tools, exec_takes_one_preload_min_size)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "exec", "--config", "preload_min_size=1MiB,2MiB", "--", "/bin/true",
				     NULL);

	cr_assert_eq(r->status, 2, "status %d: %s", r->status, r->err);
	cr_assert(strstr(r->err, "one size"), "%s", r->err);
}

Test(paths_tools, exec_report_that_cannot_be_opened_is_named)
{
	struct hpt_run *r = hpt_tool(HPSHM_TOOL_PATH, "exec", "--report", "/nonexistent/dir/report.txt", "--",
				     "/bin/true", NULL);

	cr_assert_neq(r->status, 0);
	cr_assert(strstr(r->err, "/nonexistent/dir/report.txt"), "%s", r->err);
	r = hpt_tool(HPSHM_TOOL_PATH, "exec", "--report", "", "--", "/bin/true", NULL);
	cr_assert_eq(r->status, 2, "an empty report name: %d %s", r->status, r->err);
}
