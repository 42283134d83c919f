/* SPDX-License-Identifier: MIT */
/*
 * tools/exec.c -- `hpshm exec [--config KV] [--report FILE] [--min-size SIZE] -- CMD ARGS`:
 * run a program nobody can change with its large shared memory on huge pages.
 *
 * exec sets up the environment the interposer (libhpshm_preload.so, preload/) reads, and
 * then replaces itself with CMD: no process stays between a server and its init system,
 * signals reach the server directly, and the exit status is the server's own.  What it
 * sets:
 *   LD_PRELOAD              the interposer's absolute path, in front of what was there;
 *   HPSHM_<KEY>             every key whose effective value (environment, then --config)
 *                           differs from its default, and no variable for the others, so
 *                           the interposer builds exactly the configuration checked here;
 *   HPSHM_PRELOAD_MIN_SIZE  the threshold (--min-size, or preload_min_size= in --config);
 *   HPSHM_PRELOAD_REPORT    the report file, made absolute: servers chdir (PostgreSQL to
 *                           its data directory) before they map their memory.
 * Everything is checked before the exec, so a mistake is an error here (exit 2 for the
 * command line, 1 for the machine), not a line in a server's log: a bad key or value, a bad
 * size, name= / reattach=exec / base_address= (each intercepted region is an anonymous
 * segment of its own), an option whose value is missing (`--report -- cmd` must not make a
 * report file named "--"), a report path that is not a regular file or cannot be opened for
 * appending, a huge_page_size= the machine cannot give (not offered by the kernel, or a pool
 * without the pages of even the smallest request taken).  The report is only ever a regular file: a symbolic link, a FIFO, a directory
 * or a device at the path is refused, here and by the interposer, which opens it again for
 * every line (O_NOFOLLOW, O_NONBLOCK, then fstat): a server run as root must not append
 * where a link planted in a shared directory points, nor hang on a FIFO.
 *
 * --json prints one envelope (tools/envelope.c) before the exec: a refusal (ok false, CMD not
 * started), or ok true with what was set for CMD, flushed before CMD replaces the tool, so
 * CMD's own output follows the document.  CMD is looked up first (exec_lookup) so that the
 * document does not say ok for a program that is not there.
 *
 * The interposer keeps these variables in what the server execs, even with an environment
 * of the server's own making (preload/inherit.c): nginx's binary upgrade stays interposed.
 *
 * The interposer is looked for beside the tool: in the build tree (tools/hpshm next to
 * preload/libhpshm_preload.so) and in an installed tree (bin/hpshm next to the library
 * directory); CMake gives both relative paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "ports/facts.h"
#include "ports/process.h"
#include "tool.h"

#ifndef HPSHM_PRELOAD_BUILT
#define HPSHM_PRELOAD_BUILT 0
#endif
#ifndef HPSHM_PRELOAD_BUILD_REL
#define HPSHM_PRELOAD_BUILD_REL "../preload"
#endif
#ifndef HPSHM_PRELOAD_INSTALL_REL
#define HPSHM_PRELOAD_INSTALL_REL "../lib/hpshm"
#endif
#define EXEC_PRELOAD_NAME "libhpshm_preload.so"

/* preload/preload.h PRELOAD_DEFAULT_MIN_SIZE: what the interposer takes without a threshold. */
#define EXEC_DEFAULT_MIN_SIZE ((size_t)32 << 20)

#define EXEC_EXIT_CANNOT_EXEC 126
#define EXEC_EXIT_NOT_FOUND   127

/* The threshold key rides in --config but is not a library key: take it out. */
static const char exec_min_key[] = "preload_min_size";

/*
 * Split --config: preload_min_size=SIZE goes to *min (NULL if absent), every other item to
 * rest.  0, or the usage error already printed.
 */
static int exec_split_config(const char *kv, char *rest, size_t rest_len, char *min, size_t min_len,
			     int *have_min)
{
	size_t used = 0, klen = sizeof(exec_min_key) - 1;
	int in_min = 0;

	rest[0] = '\0';
	*have_min = 0;
	for (const char *p = kv; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);

		if (eq && (size_t)(eq - p) == klen && strncmp(p, exec_min_key, klen) == 0) {
			if ((size_t)(len - klen - 1) >= min_len)
				return tool_usage_error("exec", "preload_min_size: value too long");
			memcpy(min, eq + 1, len - klen - 1);
			min[len - klen - 1] = '\0';
			*have_min = 1;
			in_min = 1;
		} else if (!eq && in_min && len > 0) {
			return tool_usage_error("exec", "preload_min_size takes one size, not a list (got '%.*s' after it)",
						(int)len, p);
		} else {
			if (eq)
				in_min = 0;
			if (used + len + 2 > rest_len)
				return tool_usage_error("exec", "--config is too long");
			if (used)
				rest[used++] = ',';
			memcpy(rest + used, p, len);
			used += len;
			rest[used] = '\0';
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* "HPSHM_" + the key in upper case. */
static void exec_var_name(const char *key, char *buf, size_t len)
{
	size_t i = 0;

	snprintf(buf, len, "HPSHM_");
	for (; key[i] && 6 + i + 1 < len; i++)
		buf[6 + i] = (char)(key[i] >= 'a' && key[i] <= 'z' ? key[i] - 'a' + 'A' : key[i]);
	buf[6 + i] = '\0';
}

/*
 * Refuse the keys an anonymous region cannot honour, then put every key whose value is not
 * the default in the environment and take the others out.
 */
static int exec_export_config(const hpshm_config *cfg)
{
	static const struct { const char *key, *def, *why; } refused[] = {
		{ "name", "", "each intercepted region is an anonymous segment of its own, so none can carry a name" },
		{ "reattach", "off", "the program's children inherit its regions by fork; nothing re-attaches after exec" },
		{ "base_address", "auto", "regions go where the kernel puts them, as the program's own mmap() would" },
	};
	hpshm_config *defaults = NULL;
	const char *key;
	char value[1024], def[1024], var[64];
	int rc = 0;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (hpshm_config_get(cfg, refused[i].key, value, sizeof(value)) >= 0 &&
		    strcmp(value, refused[i].def) != 0)
			return tool_usage_error("exec", "%s=%s cannot apply: %s", refused[i].key, value, refused[i].why);
	if (hpshm_config_new(&defaults) < 0)
		return tool_fail("exec", "out of memory");
	for (unsigned k = 0; rc == 0 && (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
		if (hpshm_config_get(cfg, key, value, sizeof(value)) < 0 ||
		    hpshm_config_get(defaults, key, def, sizeof(def)) < 0)
			continue;
		exec_var_name(key, var, sizeof(var));
		if (strcmp(value, def) != 0 ? setenv(var, value, 1) : unsetenv(var))
			rc = tool_fail("exec", "cannot set %s: %s", var, strerror(errno));
	}
	hpshm_config_free(defaults);
	return rc;
}

/*
 * The page size the configuration names (huge_page_size=1G), checked before CMD starts: the
 * kernel must offer it, and its pool must hold the pages of the smallest request the
 * interposer takes (min_size), or every request would fail (on) or fall back to base pages
 * (try) inside a server that was told otherwise.  default and largest follow what the kernel
 * offers, as the library resolves them, and keep today's contract: on fails a request with
 * ENOMEM and says why, try falls back and says so.  huge_pages=off asks for no huge page.
 * 0, or TOOL_EXIT_FAIL with the size and the fix (`hpshm plan`) printed.
 */
static int exec_check_page_size(const hpshm_config *cfg, size_t min_size)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES], ps, need;
	struct hpshm__pool pool;
	char value[64], psz[32], ks[32], list[128], mins[32];
	unsigned long avail;
	int n, offered = 0;

	if (hpshm_config_get(cfg, "huge_pages", value, sizeof(value)) >= 0 && strcmp(value, "off") == 0)
		return 0;
	if (hpshm_config_get(cfg, "huge_page_size", value, sizeof(value)) < 0 || hpshm_size_parse(value, &ps) < 0)
		return 0; /* default or largest */
	n = hpshm_huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES);
	if (n > HPSHM__MAX_PAGE_SIZES)
		n = HPSHM__MAX_PAGE_SIZES;
	for (int i = 0; i < n; i++)
		offered |= sizes[i] == ps;
	hpshm_size_format(ps, psz, sizeof(psz));
	tool_kernel_size(ps, ks, sizeof(ks));
	if (!offered)
		return tool_fail("exec", "huge_page_size=%s: this kernel offers no %s pages (it offers %s), so no request "
				 "of the program could have them; it was not started.  `hpshm plan SIZE --huge-page-size "
				 "%s` (SIZE: the shared memory the program maps) says how to get them: a kernel command "
				 "line, or at run time", value, psz, hpshm__size_list(sizes, n, list, sizeof(list)), ks);
	if (!hpshm__os_pool_source()[0] || hpshm__os_pool(ps, &pool) < 0)
		return 0; /* no pool to read: the pages are found when a request is made */
	need = min_size / ps + (min_size % ps != 0);
	avail = hpshm__os_pool_available(&pool);
	if (avail >= need)
		return 0;
	return tool_fail("exec", "huge_page_size=%s: the pool of %s pages has %lu available (%lu total, %lu free, %lu "
			 "reserved), and the smallest request hpshm exec hands to huge pages (%s, the threshold) needs "
			 "%zu; it was not started.  `hpshm plan SIZE --huge-page-size %s` (SIZE: the shared memory the "
			 "program maps) prints the commands that reserve them", value, psz, avail, pool.total,
			 pool.free, pool.resv, hpshm_size_format(min_size, mins, sizeof(mins)), need, ks);
}

/* What a file type is called in a refusal (preload/report.c says the same). */
static const char *exec_file_kind(mode_t mode)
{
	return S_ISLNK(mode)  ? "a symbolic link"
	       : S_ISDIR(mode)  ? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)  ? "a character device"
	       : S_ISBLK(mode)  ? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a regular file";
}

/*
 * Open the report for appending as the interposer will (no link followed, no blocking, a
 * regular file or nothing yet), so that what it would refuse is refused here, before the
 * server starts.  0, or the error printed.
 */
static int exec_check_report(const char *abs)
{
	struct stat st;
	int fd, e;

	if (lstat(abs, &st) == 0 && !S_ISREG(st.st_mode))
		return tool_fail("exec", "the report %s is %s: reports are written only into regular files; give --report "
				 "the path of a regular file, or of one that does not exist yet", abs,
				 exec_file_kind(st.st_mode));
	fd = open(abs, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			return tool_fail("exec", "the report %s is a symbolic link: reports are written only into regular "
					 "files; give --report the path of a regular file", abs);
		return tool_fail("exec", "cannot open the report %s for appending: %s", abs, strerror(e));
	}
	e = fstat(fd, &st) < 0 ? errno : 0;
	if (e || !S_ISREG(st.st_mode)) {
		close(fd);
		return tool_fail("exec", "the report %s is %s: reports are written only into regular files; give --report "
				 "the path of a regular file", abs, e ? strerror(e) : exec_file_kind(st.st_mode));
	}
	close(fd);
	return 0;
}

/* The report path, absolute and openable for appending, in the environment. */
static int exec_export_report(const char *path)
{
	char cwd[PATH_MAX], abs[PATH_MAX + 1];
	int rc;

	if (path[0] == '\0')
		return tool_usage_error("exec", "--report needs a file name");
	if (path[0] == '/') {
		if (strlen(path) >= sizeof(abs))
			return tool_usage_error("exec", "--report path is too long");
		snprintf(abs, sizeof(abs), "%s", path);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return tool_fail("exec", "getcwd: %s", strerror(errno));
		if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= sizeof(abs))
			return tool_usage_error("exec", "--report path is too long");
	}
	if (strlen(abs) >= 1024)
		return tool_usage_error("exec", "--report path '%s' is longer than 1023 bytes", abs);
	if ((rc = exec_check_report(abs)) != 0)
		return rc;
	if (setenv("HPSHM_PRELOAD_REPORT", abs, 1) < 0)
		return tool_fail("exec", "cannot set HPSHM_PRELOAD_REPORT: %s", strerror(errno));
	return 0;
}

/*
 * Find the interposer beside the tool; 0 with path filled, or the error printed.  The tool's
 * directory comes from the kernel (/proc/self/exe), and also from the name it was started by:
 * started through the dynamic loader (ld-linux.so.2 /path/to/hpshm, as a 32-bit build on a
 * 64-bit system is run), the kernel names the loader, and only argv[0] names the tool.
 */
static int exec_find_preload(char *path, size_t len)
{
	static const char *const rel[] = { HPSHM_PRELOAD_BUILD_REL, HPSHM_PRELOAD_INSTALL_REL };
	char dirs[2][PATH_MAX], tried[4 * PATH_MAX + 16] = "";
	char cand[PATH_MAX + 64];
	char *slash;
	int ndirs = 0;

	if (!HPSHM_PRELOAD_BUILT)
		return tool_fail("exec", "this hpshm was built without the interposer (-DHPSHM_BUILD_PRELOAD=OFF)");
	if (hpshm__os_program_path(dirs[0], sizeof(dirs[0])) == 0)
		ndirs++;
	if (strchr(program_invocation_name, '/') && realpath(program_invocation_name, dirs[ndirs]))
		ndirs++;
	if (ndirs == 0)
		return tool_fail("exec", "cannot find the tool's own path: %s", strerror(errno));
	for (int d = 0; d < ndirs; d++) {
		slash = strrchr(dirs[d], '/');
		if (slash)
			*slash = '\0';
		if (d > 0 && strcmp(dirs[d], dirs[0]) == 0)
			break;
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			size_t used = strlen(tried);

			int n = snprintf(cand, sizeof(cand), "%s/%s/%s", dirs[d], rel[i], EXEC_PRELOAD_NAME);

			if (n < 0 || (size_t)n >= sizeof(cand))
				continue; /* a cut path would name another file */
			if (access(cand, R_OK) == 0 && realpath(cand, path) && strlen(path) < len)
				return 0;
			snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? ", " : "", cand);
		}
	}
	return tool_fail("exec", "cannot find %s (looked at %s); build it (HPSHM_BUILD_PRELOAD) or install it beside "
			 "the tool", EXEC_PRELOAD_NAME, tried);
}

static int exec_export_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *value;
	size_t len;
	int rc;

	if (old && strstr(old, lib))
		return 0; /* already there: loading it twice would interpose twice */
	len = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
	value = malloc(len);
	if (!value)
		return tool_fail("exec", "out of memory");
	snprintf(value, len, "%s%s%s", lib, old && old[0] ? ":" : "", old ? old : "");
	rc = setenv("LD_PRELOAD", value, 1);
	free(value);
	if (rc < 0)
		return tool_fail("exec", "cannot set LD_PRELOAD: %s", strerror(errno));
	return 0;
}

/*
 * tool_opt_value(), and a value that is missing even though an argument follows: "--" (the
 * end of the options) or another option, as in `--report -- cmd` or `--report --min-size 1`.
 * Taking it would make a report file named "--" and run the rest as something else.  A name
 * that starts with "--" can still be given as --report=--name.
 */
static int exec_opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	int at = *i, r = tool_opt_value("exec", argc, argv, i, name, value);

	if (r == 1 && *i != at && strncmp(*value, "--", 2) == 0) {
		tool_usage_error("exec", "%s needs a value before '%s' (write %s=VALUE for a value that starts with --)",
				 name, *value, name);
		return -1;
	}
	return r;
}

/*
 * Can CMD be run?  0, or the errno execvp() would fail with (ENOENT, EACCES): the lookup
 * execvp() makes, through PATH when the name has no slash.
 */
static int exec_lookup(const char *cmd)
{
	const char *path = getenv("PATH"), *p, *end;
	char full[PATH_MAX];
	int e = ENOENT;

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0 ? 0 : errno;
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; ; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		/* An empty PATH element is the current directory. */
		if (snprintf(full, sizeof(full), "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", cmd) <
		    (int)sizeof(full)) {
			if (access(full, X_OK) == 0)
				return 0;
			if (errno == EACCES)
				e = EACCES;
		}
		if (*end == '\0')
			return e;
	}
}

/* --json's verdict when every check passed: what CMD will run with. */
static void exec_json_ok(char **cmd, const char *lib, size_t min_size)
{
	const char *key, *v;
	char var[64];
	struct json j;

	tool_json_open(&j, 1);
	json_object_open(&j);
	json_key(&j, "argv");
	json_array_open(&j);
	for (int i = 0; cmd[i]; i++)
		json_string(&j, cmd[i]);
	json_array_close(&j);
	json_kv_string(&j, "preload", lib);
	json_kv_uint(&j, "min_size", min_size);
	v = getenv("HPSHM_PRELOAD_REPORT");
	json_kv_string(&j, "report", v ? v : "");
	/* The configuration's variables exec set: the keys that differ from their defaults. */
	json_key(&j, "environment");
	json_object_open(&j);
	for (unsigned k = 0; (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
		exec_var_name(key, var, sizeof(var));
		if ((v = getenv(var)) != NULL)
			json_kv_string(&j, var, v);
	}
	json_object_close(&j);
	json_object_close(&j);
	tool_json_close(&j, 0, NULL);
}

int cmd_exec(int argc, char **argv)
{
	const char *kv = NULL, *report = NULL, *min_text = NULL, *min_what = "--min-size";
	char rest[4096], min_buf[64], lib[PATH_MAX];
	hpshm_config *cfg = NULL;
	size_t min_size = EXEC_DEFAULT_MIN_SIZE;
	int first_cmd = -1, have_min = 0, rc;

	for (int i = 1; i < argc; i++) {
		int r;

		if (strcmp(argv[i], "--") == 0) {
			first_cmd = i + 1;
			break;
		}
		if ((r = tool_opt_flag("exec", argv[i], "--json")) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
			continue; /* the dispatch saw it already (tool_json_set) */
		}
		if ((r = exec_opt_value(argc, argv, &i, "--config", &kv)) != 0 ||
		    (r = exec_opt_value(argc, argv, &i, "--report", &report)) != 0 ||
		    (r = exec_opt_value(argc, argv, &i, "--min-size", &min_text)) != 0) {
			if (r < 0)
				return TOOL_EXIT_USAGE;
		} else if (argv[i][0] == '-') {
			return tool_usage_error("exec", "unexpected option '%s' (put the command after --)", argv[i]);
		} else {
			first_cmd = i; /* the command may also follow the options without "--" */
			break;
		}
	}
	if (first_cmd < 0 || first_cmd >= argc)
		return tool_usage_error("exec", "missing the command to run after --");

	if (kv) {
		if ((rc = exec_split_config(kv, rest, sizeof(rest), min_buf, sizeof(min_buf), &have_min)) != 0)
			return rc;
		if (have_min && min_text)
			return tool_usage_error("exec", "the threshold is given twice (--min-size and preload_min_size=)");
		if (have_min) {
			min_text = min_buf;
			min_what = exec_min_key;
		}
	}
	if (!min_text && (min_text = getenv("HPSHM_PRELOAD_MIN_SIZE")) != NULL)
		min_what = "HPSHM_PRELOAD_MIN_SIZE";
	if (min_text && (rc = tool_parse_size("exec", min_what, min_text, &min_size)) != 0)
		return rc;
	if ((rc = tool_config("exec", kv && rest[0] ? rest : NULL, &cfg)) != 0)
		return rc;
	rc = exec_export_config(cfg);
	if (rc == 0)
		rc = exec_check_page_size(cfg, min_size);
	hpshm_config_free(cfg);
	if (rc != 0)
		return rc;
	if (min_text && setenv("HPSHM_PRELOAD_MIN_SIZE", min_text, 1) < 0)
		return tool_fail("exec", "cannot set HPSHM_PRELOAD_MIN_SIZE: %s", strerror(errno));
	if (report && (rc = exec_export_report(report)) != 0)
		return rc;
	if ((rc = exec_find_preload(lib, sizeof(lib))) != 0 || (rc = exec_export_preload(lib)) != 0)
		return rc;

	if (tool_json_on()) {
		if ((rc = exec_lookup(argv[first_cmd])) != 0) {
			hpshm_error err;

			memset(&err, 0, sizeof(err));
			err.sys_errno = rc;
			snprintf(err.call, sizeof(err.call), "execvp");
			snprintf(err.message, sizeof(err.message), "cannot run %.900s: %s", argv[first_cmd], strerror(rc));
			snprintf(err.hint, sizeof(err.hint), "give CMD's path, or a name found in PATH");
			tool_json_fail(HPSHM_ESYS, &err);
			tool_fail("exec", "%s", err.message);
			return rc == ENOENT ? EXEC_EXIT_NOT_FOUND : EXEC_EXIT_CANNOT_EXEC;
		}
		exec_json_ok(argv + first_cmd, lib, min_size);
	}
	fflush(stdout);
	fflush(stderr);
	execvp(argv[first_cmd], argv + first_cmd);
	rc = errno;
	tool_fail("exec", "cannot run %s: %s", argv[first_cmd], strerror(rc));
	return rc == ENOENT ? EXEC_EXIT_NOT_FOUND : EXEC_EXIT_CANNOT_EXEC;
}
