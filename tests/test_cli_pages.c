/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cli_pages.c -- the tool where the kernel does not give the page size asked for
 * (issue 26): `hpshm plan` of 1 GiB pages the kernel does not offer says how to get them and
 * exits 0, a size no processor maps is refused naming the sizes that exist, and `hpshm exec`
 * refuses a huge_page_size= the machine cannot give before the program starts.
 *
 * This machine may offer 1 GiB pages or not, and its pools belong to whoever runs here, so
 * each test makes the situation it needs: the tool runs in a mount namespace of its own
 * (unshare -m as root, unshare -Urm otherwise) where a made-up directory is bind-mounted on
 * /sys/kernel/mm/hugepages, the one place the kernel lists its page sizes and pools.  Nothing
 * outside that namespace sees it.  Where no namespace can be made the tests skip, saying why.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the hpshm tool"
#endif

#define KB_2M 2048UL
#define KB_1G 1048576UL

/* Made up in the test's own /tmp directory; removed after each test, however it ended: by .fini,
 * or before a skip (hpt_fixture_undo_on_skip()). */
static char fake_dir[64];

static void pages_cleanup(void)
{
	char cmd[128];

	if (!fake_dir[0])
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fake_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_cli_pages: could not remove %s\n", fake_dir);
	fake_dir[0] = '\0';
}

static void pages_fini(void)
{
	pages_cleanup();
	hpt_fixture_fini();
}

TestSuite(cli_pages, .init = hpt_fixture_init, .fini = pages_fini, .timeout = 60);

/* One page size of the made-up tree: its pool of nr pages, free of them free. */
static void fake_pool(unsigned long kb, unsigned long nr, unsigned long free_pages)
{
	static const char *const files[] = { "nr_hugepages", "free_hugepages", "resv_hugepages", "surplus_hugepages",
					     "nr_overcommit_hugepages" };
	char path[160];

	snprintf(path, sizeof path, "%s/hugepages-%lukB", fake_dir, kb);
	cr_assert(mkdir(path, 0755) == 0, "mkdir %s", path);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		FILE *f;

		snprintf(path, sizeof path, "%s/hugepages-%lukB/%s", fake_dir, kb, files[i]);
		f = fopen(path, "w");
		cr_assert_not_null(f, "%s", path);
		fprintf(f, "%lu\n", i == 0 ? nr : i == 1 ? free_pages : 0);
		cr_assert_eq(fclose(f), 0);
	}
}

/* A made-up /sys/kernel/mm/hugepages with a 2 MiB size (the kernel's default here, as
 * /proc/meminfo says on x86) and an empty pool; fake_pool() adds others. */
static void fake_tree(void)
{
	snprintf(fake_dir, sizeof fake_dir, "/tmp/hpt-cli-pages-XXXXXX");
	cr_assert_not_null(mkdtemp(fake_dir));
	hpt_fixture_undo_on_skip(pages_cleanup); /* a skip (no interposer in a static build) removes it too */
	chmod(fake_dir, 0755);
	fake_pool(KB_2M, 0, 0);
}

/* unshare's options for a mount namespace this process may make: root's own, or a user
 * namespace's; NULL (the reason in why) where none works. */
static const char *ns_option(char *why, size_t len)
{
	static const char *const opts[] = { "-m", "-Urm" };
	static const char script[] = "mount --bind \"$0\" /sys/kernel/mm/hugepages && ls /sys/kernel/mm/hugepages";

	if (access("/usr/bin/unshare", X_OK) != 0) {
		snprintf(why, len, "no /usr/bin/unshare (util-linux) to make a mount namespace with");
		return NULL;
	}
	for (size_t i = geteuid() == 0 ? 0 : 1; i < sizeof opts / sizeof opts[0]; i++) {
		struct hpt_run *r = hpt_tool("/usr/bin/unshare", opts[i], "/bin/sh", "-c", script, fake_dir, NULL);

		if (r->status == 0 && strstr(r->out, "hugepages-2048kB"))
			return opts[i];
		snprintf(why, len, "unshare %s cannot bind a made-up tree on /sys/kernel/mm/hugepages: %.300s", opts[i],
			 r->err);
	}
	return NULL;
}

/* Run the tool with the made-up tree as the kernel's page sizes (NULL-terminated arguments). */
static struct hpt_run *tool_in_tree(const char *a0, ...)
{
	static const char script[] = "mount --bind \"$0\" /sys/kernel/mm/hugepages && exec \"$@\"";
	static char args[32][256];
	char *argv[33], why[512];
	const char *opt = ns_option(why, sizeof why), *pre[6];
	int n = 0;
	va_list ap;

	if (!opt)
		HPT_SKIP("%s", why);
	pre[0] = opt;
	pre[1] = "/bin/sh";
	pre[2] = "-c";
	pre[3] = script;
	pre[4] = fake_dir;
	pre[5] = HPSHM_TOOL_PATH;
	for (; n < 6; n++) {
		snprintf(args[n], sizeof args[n], "%s", pre[n]);
		argv[n] = args[n];
	}
	va_start(ap, a0);
	for (const char *a = a0; a && n < 32; a = va_arg(ap, const char *), n++) {
		snprintf(args[n], sizeof args[n], "%s", a);
		argv[n] = args[n];
	}
	va_end(ap);
	argv[n] = NULL;
	return hpt_tool_argv("/usr/bin/unshare", argv, NULL);
}

/* Where this architecture's processors can have 1 GiB pages (tools/pagesize.c's table). */
static void need_1g_architecture(void)
{
#if !(defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__powerpc64__) || \
      (defined(__riscv) && __riscv_xlen == 64))
	HPT_SKIP("the processors of this architecture map no 1 GiB pages");
#endif
}

static void expect_in(const char *text, const char *want)
{
	cr_expect(strstr(text, want), "no \"%s\" in:\n%s", want, text);
}

/* ---- plan ---- */

Test(cli_pages, plan_of_1g_pages_the_kernel_does_not_offer_says_how_to_get_them)
{
	struct hpt_run *r;

	need_1g_architecture();
	fake_tree();
	r = tool_in_tree("plan", "3GiB", "--huge-page-size", "1G", NULL);
	cr_assert_eq(r->status, 0, "a plan exits 0 (status %d): %s%s", r->status, r->out, r->err);
	expect_in(r->out, "this kernel offers no 1GiB pages now (it offers 2MiB)");
	expect_in(r->out, "hugepagesz=1G hugepages=3");
	expect_in(r->out, "default_hugepagesz=1G hugepagesz=1G hugepages=3");
	expect_in(r->out, "echo 3 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages");
	expect_in(r->out, "physically contiguous");
	expect_in(r->out, "ls /sys/kernel/mm/hugepages");
	expect_in(r->out, "hpshm check --size 3GiB --config huge_pages=on,huge_page_size=1G");
#if defined(__x86_64__) || defined(__i386__)
	expect_in(r->out, "pdpe1gb");
#endif
}

Test(cli_pages, plan_json_of_1g_pages_the_kernel_does_not_offer_has_the_same_as_fields)
{
	struct hpt_run *r;

	need_1g_architecture();
	fake_tree();
	/* named by the configuration this time, as a server's would */
	r = tool_in_tree("plan", "3GiB", "--config", "huge_page_size=1G", "--json", NULL);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	expect_in(r->out, "\"page_size\": 1073741824,");
	expect_in(r->out, "\"page_size_offered\": false");
	expect_in(r->out, "\"boot\": \"hugepagesz=1G hugepages=3\"");
	expect_in(r->out, "\"boot_default\": \"default_hugepagesz=1G\"");
	expect_in(r->out, "\"runtime\": \"echo 3 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages\"");
	expect_in(r->out, "\"runtime_caveat\": ");
	expect_in(r->out, "\"pool\": null");
	expect_in(r->out, "\"ready\": false");
	expect_in(r->out, "\"what\": \"page_size\"");
}

Test(cli_pages, plan_of_1g_pages_the_kernel_offers_keeps_showing_their_pool)
{
	struct hpt_run *r;

	need_1g_architecture();
	fake_tree();
	fake_pool(KB_1G, 1, 1);
	r = tool_in_tree("plan", "3GiB", "--huge-page-size", "1G", "--json", NULL);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	expect_in(r->out, "\"page_size_offered\": true");
	expect_in(r->out, "\"get_page_size\": null");
	expect_in(r->out, "\"total\": 1,");
	expect_in(r->out, "\"what\": \"pool\"");
	r = tool_in_tree("plan", "3GiB", "--huge-page-size", "1G", NULL);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	expect_in(r->out, "the 1GiB pool now: 1 total, 1 free");
	cr_expect_null(strstr(r->out, "offers no 1GiB pages"), "%s", r->out);
}

Test(cli_pages, plan_of_a_size_no_processor_maps_names_the_sizes_that_exist)
{
	struct hpt_run *r;

	fake_tree();
	r = tool_in_tree("plan", "64MiB", "--huge-page-size", "3M", NULL);
	cr_assert_eq(r->status, 1, "status %d: %s%s", r->status, r->out, r->err);
	expect_in(r->err, "3MiB");
	expect_in(r->err, "this kernel offers 2MiB");
#if defined(__x86_64__)
	expect_in(r->err, "x86-64 processors have huge pages of 2MiB, 1GiB only");
#endif
}

/* ---- exec ---- */

/* A path for the program under exec to create, which must not exist yet. */
static void marker_path(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/hpt-cli-pages-ran.XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(path);
}

/* exec --config kv [--min-size min] -- a program that creates marker; whether it ran. */
static int exec_ran(const char *kv, const char *min, struct hpt_run **out)
{
	char marker[64], script[128];
	int ran;

	marker_path(marker, sizeof marker);
#ifdef HPSHM_PRELOAD_CHILD
	/* A program of this build: the interposer loads into it whatever the build (a sanitizer's
	 * runtime, musl), where /bin/sh, of the system's C library, could not take it. */
	(void)script;
	if (min)
		*out = tool_in_tree("exec", "--config", kv, "--min-size", min, "--", HPSHM_PRELOAD_CHILD, "touch",
				    marker, NULL);
	else
		*out = tool_in_tree("exec", "--config", kv, "--", HPSHM_PRELOAD_CHILD, "touch", marker, NULL);
#else
	snprintf(script, sizeof script, ": > '%s'", marker);
	if (min)
		*out = tool_in_tree("exec", "--config", kv, "--min-size", min, "--", "/bin/sh", "-c", script, NULL);
	else
		*out = tool_in_tree("exec", "--config", kv, "--", "/bin/sh", "-c", script, NULL);
#endif
	ran = access(marker, F_OK) == 0;
	unlink(marker);
	return ran;
}

/* The control: exec starts the program when the pool can give the pages (else the refusals
 * below could be a test that never starts anything). */
static void expect_started_with_a_pool(void)
{
	struct hpt_run *r;

	if (!exec_ran("huge_page_size=1G", NULL, &r)) {
		if (strstr(r->err, "without the interposer") || strstr(r->err, "cannot find libhpshm_preload"))
			HPT_SKIP("hpshm exec has no interposer in this build: %s", r->err);
		cr_assert_fail("with 2 free 1GiB pages the program was not started (status %d): %s", r->status, r->err);
	}
	cr_assert_eq(r->status, 0, "%s", r->err);
}

Test(cli_pages, exec_of_1g_pages_the_kernel_does_not_offer_starts_nothing)
{
	struct hpt_run *r;

	fake_tree();
	cr_expect(!exec_ran("huge_page_size=1G", NULL, &r), "the program ran");
	cr_expect_eq(r->status, 1, "status %d: %s", r->status, r->err);
	expect_in(r->err, "huge_page_size=1GiB");
	expect_in(r->err, "offers no 1GiB pages");
	expect_in(r->err, "hpshm plan SIZE --huge-page-size 1G");
	expect_in(r->err, "not started");
	/* huge_pages=off asks for no huge page: nothing to refuse */
	cr_expect(exec_ran("huge_pages=off,huge_page_size=1G", NULL, &r) || strstr(r->err, "interposer"),
		  "huge_pages=off was refused (status %d): %s", r->status, r->err);
	fake_pool(KB_1G, 2, 2);
	expect_started_with_a_pool();
}

Test(cli_pages, exec_of_1g_pages_the_pool_cannot_give_starts_nothing)
{
	struct hpt_run *r;

	fake_tree();
	fake_pool(KB_1G, 0, 0);
	cr_expect(!exec_ran("huge_pages=on,huge_page_size=1G", NULL, &r), "the program ran");
	cr_expect_eq(r->status, 1, "status %d: %s", r->status, r->err);
	expect_in(r->err, "the pool of 1GiB pages has 0 available");
	expect_in(r->err, "hpshm plan SIZE --huge-page-size 1G");
	/* try as well: the size was named, and a server told 1G must not quietly run on 4 KiB */
	cr_expect(!exec_ran("huge_pages=try,huge_page_size=1G", NULL, &r), "the program ran under try");
	cr_expect_eq(r->status, 1, "status %d: %s", r->status, r->err);
}

Test(cli_pages, exec_counts_the_pages_of_the_threshold)
{
	struct hpt_run *r;

	fake_tree();
	fake_pool(KB_1G, 2, 2);
	/* a request of 3GiB or more takes 3 pages, and 2 are free */
	cr_expect(!exec_ran("huge_page_size=1G", "3GiB", &r), "the program ran");
	cr_expect_eq(r->status, 1, "status %d: %s", r->status, r->err);
	expect_in(r->err, "needs 3");
	expect_started_with_a_pool();
}
