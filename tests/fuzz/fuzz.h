/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz.h -- what the libFuzzer harnesses share: the entry point's prototype, the
 * input as a C string, and checks that abort (libFuzzer then keeps the input as a crash).
 *
 * A harness asserts the contract, not only "no crash": codes are the documented ones, error
 * records are complete, failed operations change nothing, values print and parse back.
 */
#ifndef HPSHM_TESTS_FUZZ_H
#define HPSHM_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "hpshm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (it ends at its first NUL byte); free() it. */
char *fuzz_text(const uint8_t *data, size_t size);

/* Print what broke and abort. */
void fuzz_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

#define FUZZ_CHECK(cond, ...)                                         \
	do {                                                          \
		if (!(cond))                                          \
			fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);   \
	} while (0)

/* A failed call's record: its code is the one returned, its message terminated and not empty. */
void fuzz_check_error(int rc, const hpshm_error *err, const char *what);

/*
 * The getters of every key, against the snprintf contract (hpshm.h): (NULL, 0) gives the
 * length, every shorter buffer (allocated to its exact size, so ASan sees one byte too many)
 * is filled with a terminated prefix, and each value set back through hpshm_config_set()
 * is accepted and reads back the same.
 */
void fuzz_check_getters(hpshm_config *cfg);

#endif /* HPSHM_TESTS_FUZZ_H */
