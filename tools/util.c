/* SPDX-License-Identifier: MIT */
/*
 * tools/util.c -- what every command of the tool shares: options and their values, sizes,
 * configurations from --config, and the words and units the commands print.
 *
 * Usage errors go through tool_usage_error() (exit 2, naming the argument); the command table
 * and the dispatch stay in tools/hpshm.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ports/facts.h"
#include "ports/process.h"
#include "tool.h"

int tool_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (strncmp(arg, name, n) != 0)
		return 0;
	if (arg[n] == '=') {
		*value = arg + n + 1;
		return 1;
	}
	if (arg[n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		tool_usage_error(cmd, "%s needs a value", name);
		return -1;
	}
	*i += 1;
	*value = argv[*i];
	return 1;
}

int tool_opt_flag(const char *cmd, const char *arg, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(arg, name, n) != 0)
		return 0;
	if (arg[n] == '\0')
		return 1;
	if (arg[n] == '=') {
		tool_usage_error(cmd, "%s takes no value (got '%s')", name, arg);
		return -1;
	}
	return 0;
}

int tool_parse_size(const char *cmd, const char *what, const char *text, size_t *out)
{
	static const char form[] = "a number of bytes with an optional unit, e.g. 16MiB, 2MB, 1G, 4096";
	int rc;

	/*
	 * A leading sign or blank would be skipped by strtoull-style parsing and turn "-1"
	 * into 16 EiB; insist on a digit so the error names what was typed.
	 */
	if (text[0] < '0' || text[0] > '9')
		return tool_usage_error(cmd, "bad %s '%s': expected %s", what, text, form);
	rc = hpshm_size_parse(text, out);
	if (rc == HPSHM_EOVERFLOW)
		return tool_usage_error(cmd, "bad %s '%s': too large for this machine (more than %zu bytes)",
					what, text, (size_t)SIZE_MAX);
	if (rc < 0)
		return tool_usage_error(cmd, "bad %s '%s': expected %s", what, text, form);
	if (*out == 0)
		return tool_usage_error(cmd, "bad %s '%s': must be more than 0 bytes", what, text);
	return 0;
}

static void tool_print_error(const char *cmd, const char *what, const hpshm_error *err)
{
	fprintf(stderr, "hpshm %s: %s: %s\n", cmd, what, err->message[0] ? err->message : hpshm_strerror(err->code));
	if (err->key[0])
		fprintf(stderr, "  key: %s\n", err->key);
	if (err->hint[0])
		fprintf(stderr, "  hint: %s\n", err->hint);
}

int tool_config(const char *cmd, const char *kv, hpshm_config **out)
{
	hpshm_config *cfg = NULL;
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	rc = hpshm_config_new(&cfg);
	if (rc < 0)
		return tool_fail(cmd, "cannot make a configuration: %s", hpshm_strerror(rc));
	rc = hpshm_config_load_env(cfg, &err);
	if (rc < 0) {
		tool_print_error(cmd, "error in the environment", &err);
		tool_json_fail(rc, &err);
		hpshm_config_free(cfg);
		return TOOL_EXIT_FAIL;
	}
	if (kv) {
		memset(&err, 0, sizeof(err));
		rc = hpshm_config_parse(cfg, kv, &err);
		if (rc < 0) {
			tool_print_error(cmd, "bad --config", &err);
			/* The library's record, with the key at fault, before the usage error's own. */
			tool_json_fail(rc, &err);
			hpshm_config_free(cfg);
			return tool_usage_error(cmd, "bad --config '%s': expected key=value,key=value "
						"(`hpshm probe` lists the keys)", kv);
		}
	}
	*out = cfg;
	return 0;
}

size_t tool_config_page_size(const hpshm_config *cfg)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	char value[64];
	size_t ps;
	int n;

	n = hpshm_huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES);
	if (n > HPSHM__MAX_PAGE_SIZES)
		n = HPSHM__MAX_PAGE_SIZES;
	if (n <= 0)
		return 0;
	if (!cfg || hpshm_config_get(cfg, "huge_page_size", value, sizeof(value)) < 0 ||
	    strcmp(value, "default") == 0 || value[0] == '\0')
		return hpshm__os_default_page_size();
	if (strcmp(value, "largest") == 0)
		return sizes[n - 1];
	if (hpshm_size_parse(value, &ps) < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (sizes[i] == ps)
			return ps;
	return 0;
}

char *tool_caps_words(unsigned caps, char *buf, size_t len)
{
	static const struct { unsigned bit; const char *word; } words[] = {
		{ HPSHM_CAP_HUGE, "huge" },
		{ HPSHM_CAP_REATTACH, "reattach" },
		{ HPSHM_CAP_NAMED, "named" },
		{ HPSHM_CAP_FD, "fd" },
		{ HPSHM_CAP_TAG, "tag" },
		{ HPSHM_CAP_RESIZE, "resize" },
	};
	size_t used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		int w;

		if (!(caps & words[i].bit))
			continue;
		w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", words[i].word);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	if (used == 0)
		snprintf(buf, len, "-");
	return buf;
}

char *tool_kernel_size(size_t size, char *buf, size_t len)
{
	if (size >= (1u << 30) && size % (1u << 30) == 0)
		snprintf(buf, len, "%zuG", size >> 30);
	else if (size >= (1u << 20) && size % (1u << 20) == 0)
		snprintf(buf, len, "%zuM", size >> 20);
	else
		snprintf(buf, len, "%zuK", size >> 10);
	return buf;
}

char *tool_offered_sizes(char *buf, size_t len)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm_huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES);

	return hpshm__size_list(sizes, n < HPSHM__MAX_PAGE_SIZES ? n : HPSHM__MAX_PAGE_SIZES, buf, len);
}

const char *tool_errno_name(int e)
{
#ifdef _WIN32
	/* On Windows the library records GetLastError() (hpshm.h): its names, not errno's. */
	switch (e) {
	case 0:    return "0";
	case 2:    return "ERROR_FILE_NOT_FOUND";
	case 5:    return "ERROR_ACCESS_DENIED";
	case 8:    return "ERROR_NOT_ENOUGH_MEMORY";
	case 50:   return "ERROR_NOT_SUPPORTED";
	case 87:   return "ERROR_INVALID_PARAMETER";
	case 183:  return "ERROR_ALREADY_EXISTS";
	case 487:  return "ERROR_INVALID_ADDRESS";
	case 1300: return "ERROR_NOT_ALL_ASSIGNED";
	case 1314: return "ERROR_PRIVILEGE_NOT_HELD";
	case 1450: return "ERROR_NO_SYSTEM_RESOURCES";
	case 1455: return "ERROR_COMMITMENT_LIMIT";
	default:   return "?";
	}
#else
	/* An if chain, not a switch: some of these share a value on some systems. */
	if (e == 0) return "0";
	if (e == EPERM) return "EPERM";
	if (e == ENOENT) return "ENOENT";
	if (e == EINTR) return "EINTR";
	if (e == EIO) return "EIO";
	if (e == E2BIG) return "E2BIG";
	if (e == EBADF) return "EBADF";
	if (e == EAGAIN) return "EAGAIN";
	if (e == ENOMEM) return "ENOMEM";
	if (e == EACCES) return "EACCES";
	if (e == EFAULT) return "EFAULT";
	if (e == EBUSY) return "EBUSY";
	if (e == EEXIST) return "EEXIST";
	if (e == ENODEV) return "ENODEV";
	if (e == ENOTDIR) return "ENOTDIR";
	if (e == EINVAL) return "EINVAL";
	if (e == ENFILE) return "ENFILE";
	if (e == EMFILE) return "EMFILE";
	if (e == EFBIG) return "EFBIG";
	if (e == ENOSPC) return "ENOSPC";
	if (e == EROFS) return "EROFS";
	if (e == ERANGE) return "ERANGE";
	if (e == ENAMETOOLONG) return "ENAMETOOLONG";
	if (e == ENOSYS) return "ENOSYS";
	if (e == EOVERFLOW) return "EOVERFLOW";
	if (e == EIDRM) return "EIDRM";
	if (e == ENOTSUP) return "ENOTSUP";
	if (e == EOPNOTSUPP) return "EOPNOTSUPP";
	return "?";
#endif
}

int tool_unlimited(uint64_t v)
{
	return v == HPSHM__UNLIMITED || v >= (UINT64_C(1) << 62);
}

char *tool_bytes(uint64_t v, char *buf, size_t len)
{
	if (tool_unlimited(v))
		snprintf(buf, len, "unlimited");
	else if ((uint64_t)(size_t)v != v)
		snprintf(buf, len, "%lluB", (unsigned long long)v);
	else
		hpshm_size_format((size_t)v, buf, len);
	return buf;
}

double tool_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}
