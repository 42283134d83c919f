/* SPDX-License-Identifier: MIT */
/*
 * tests/harness/hpt_harness.h -- the in-tree test harness: the part of Criterion's API that
 * hpshm's suites use, for the targets where Criterion cannot run (Windows under wine, musl,
 * i686, aarch64 and s390x under qemu-user).  tests/harness.h picks this header or Criterion.
 *
 * What it offers, with Criterion's spelling so that one test source builds against either:
 *   Test(suite, name, .init, .fini, .timeout, .disabled, .exit_code, .signal, .description)
 *   TestSuite(suite, .init, .fini, .timeout)
 *   ParameterizedTestParameters(suite, name) returning cr_make_param_array(Type, array, len)
 *   ParameterizedTest(Type *p, suite, name, options...)
 *   cr_assert / cr_expect and their _eq _neq _lt _leq _gt _geq _null _not_null _str_eq
 *   _str_neq forms, each with an optional printf-style message; cr_assert_fail, cr_skip_test,
 *   cr_log_info, cr_log_warn, cr_log_error.
 *
 * How it behaves (hpt_harness.c implements it; the comments there say why):
 *   - every test runs in a process of its own: fork() on POSIX, a re-launch of the program
 *     with the test's name as an argument on Windows;
 *   - the suite's .init then the test's .init run in that process before the test, the test's
 *     .fini then the suite's .fini after it, also after a failed cr_assert; like Criterion
 *     2.4.1, no .fini runs after cr_skip_test(), so a test that skips undoes its own setup;
 *   - a failed cr_assert ends the test, a failed cr_expect marks it failed and lets it go on;
 *   - a test that outlives its timeout (the test's, else the suite's, else --timeout, else
 *     60 s) is killed and counted failed; a test killed by a signal is failed unless .signal
 *     names that signal; a test must end with .exit_code (default 0);
 *   - the runner prints "[PASS] suite::name", "[FAIL] suite::name: reason at file:line" or
 *     "[SKIP] suite::name: reason" per test (parameterised ones as suite::name[i]) and then
 *     the line "N passed, N failed, N skipped"; it exits 0 only if nothing failed.
 *
 * Operands are evaluated exactly once, as with Criterion: cr_assert_eq(f(), 0) calls f()
 * once.  Messages are printf formats and are checked as such by GCC and Clang.
 */
#ifndef HPSHM_TESTS_HPT_HARNESS_H
#define HPSHM_TESTS_HPT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The harness formats with C99 printf (on mingw-w64 it asks for the C99 implementation, not
 * msvcrt's), so "%zu" in a message is right everywhere and is checked as such.
 */
#if defined(__MINGW32__)
#define HPT__PRINTF(fmt, first) __attribute__((format(gnu_printf, fmt, first)))
#elif defined(__GNUC__) || defined(__clang__)
#define HPT__PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define HPT__PRINTF(fmt, first)
#endif

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define HPT__NORETURN _Noreturn
#elif defined(_MSC_VER)
#define HPT__NORETURN __declspec(noreturn)
#else
#define HPT__NORETURN
#endif

/* What Test() and TestSuite() accept as designated initializers (Criterion's names). */
struct hpt_options {
	void (*init)(void);       /* runs in the test's process before the test */
	void (*fini)(void);       /* runs in the test's process after it, also after a failure */
	double      timeout;      /* seconds; 0 means "ask the suite, then --timeout" */
	bool        disabled;     /* counted as skipped, never run */
	int         exit_code;    /* the status the test's process must end with */
	int         signal;       /* the signal that must end it, 0 for none */
	const char *description;  /* accepted for Criterion's sake; not printed */
	int         hpt_end_;     /* the macros always set this, so options may be left out */
};

/* What a parameter generator returns: len elements of size bytes at array. */
struct hpt_params {
	size_t      size;                            /* sizeof one element */
	const void *array;                           /* the first element */
	size_t      length;                          /* number of elements */
	void (*cleanup)(struct hpt_params *params);  /* called once when the run ends, or NULL */
};

/* One Test() or ParameterizedTest(); the macros define one per test, registration links them. */
struct hpt_test {
	const char *suite;                       /* suite name as written */
	const char *name;                        /* test name as written */
	const char *file;                        /* where the test is defined */
	int         line;                        /* ditto */
	void (*body)(void);                      /* a plain test */
	void (*param_body)(void *param);         /* a parameterised test, given one element */
	struct hpt_params (*params)(void);       /* its parameter generator */
	struct hpt_options opts;                 /* the options given to the macro */
	struct hpt_test   *next;                 /* registration list */
};

/* One TestSuite(). */
struct hpt_suite {
	const char        *name;  /* suite name as written */
	struct hpt_options opts;  /* .init, .fini and .timeout apply to every test of the suite */
	struct hpt_suite  *next;  /* registration list */
};

void hpt__register_test(struct hpt_test *t);
void hpt__register_suite(struct hpt_suite *s);

HPT__NORETURN void hpt__assert_failed(const char *file, int line, const char *expr);
HPT__NORETURN void hpt__assert_failedf(const char *file, int line, const char *expr, const char *fmt, ...)
	HPT__PRINTF(4, 5);
void hpt__expect_failed(const char *file, int line, const char *expr);
void hpt__expect_failedf(const char *file, int line, const char *expr, const char *fmt, ...) HPT__PRINTF(4, 5);
HPT__NORETURN void hpt__skip(const char *file, int line, const char *fmt, ...) HPT__PRINTF(3, 4);
void hpt__log(const char *tag, const char *fmt, ...) HPT__PRINTF(2, 3);
int hpt__str_eq(const char *a, const char *b);

/*
 * Registration.  GCC and Clang run constructor functions before main(); MSVC has no such
 * attribute but runs every function pointer placed in the .CRT$XCU section during CRT start
 * up, so the pointer goes there, and a /include directive keeps the linker from dropping it
 * as unreferenced (x86 decorates C names with a leading underscore, x64 does not).  The MSVC
 * branch is written to that documented scheme but has not been built on this project's CI.
 */
#define HPT__CAT2_(a, b) a##b
#define HPT__CAT_(a, b)  HPT__CAT2_(a, b)
#define HPT__STR2_(a)    #a
#define HPT__STR_(a)     HPT__STR2_(a)
#define HPT__EXPAND_(x)  x

#if defined(_MSC_VER)
#pragma section(".CRT$XCU", read)
#if defined(_M_IX86)
#define HPT__SYM_PREFIX_ "_"
#else
#define HPT__SYM_PREFIX_ ""
#endif
#define HPT__CONSTRUCTOR_(fn) HPT__CONSTRUCTOR2_(fn)
#define HPT__CONSTRUCTOR2_(fn)                                                               \
	static void fn(void);                                                                \
	__declspec(allocate(".CRT$XCU")) void (*const fn##_ptr_)(void) = fn;                 \
	__pragma(comment(linker, "/include:" HPT__SYM_PREFIX_ HPT__STR_(fn##_ptr_)))         \
	static void fn(void)
#elif defined(__GNUC__) || defined(__clang__)
#define HPT__CONSTRUCTOR_(fn) \
	static void fn(void) __attribute__((constructor)); \
	static void fn(void)
#else
#error "hpt_harness.h: this compiler has no known way to run registration code before main()"
#endif

/*
 * Test(suite, name, options...).  The trailing ".hpt_end_ = 0" means the initializer list is
 * never empty and the variadic part never lacks an argument, which ISO C11 requires.
 */
#define Test(...) HPT__EXPAND_(HPT__TEST_(__VA_ARGS__, .hpt_end_ = 0))
#define HPT__TEST_(suite, name, ...)                                                            \
	static void HPT__CAT_(hpt__body_, HPT__CAT_(suite, HPT__CAT_(_, name)))(void);           \
	static struct hpt_test HPT__CAT_(hpt__test_, HPT__CAT_(suite, HPT__CAT_(_, name))) = {  \
		#suite, #name, __FILE__, __LINE__,                                               \
		HPT__CAT_(hpt__body_, HPT__CAT_(suite, HPT__CAT_(_, name))), NULL, NULL,         \
		{ __VA_ARGS__ }, NULL};                                                          \
	HPT__CONSTRUCTOR_(HPT__CAT_(hpt__reg_, HPT__CAT_(suite, HPT__CAT_(_, name))))            \
	{                                                                                        \
		hpt__register_test(&HPT__CAT_(hpt__test_, HPT__CAT_(suite, HPT__CAT_(_, name)))); \
	}                                                                                        \
	static void HPT__CAT_(hpt__body_, HPT__CAT_(suite, HPT__CAT_(_, name)))(void)

#define TestSuite(...) HPT__EXPAND_(HPT__SUITE_(__VA_ARGS__, .hpt_end_ = 0))
#define HPT__SUITE_(suite, ...)                                                      \
	static struct hpt_suite HPT__CAT_(hpt__suite_, suite) = {#suite, {__VA_ARGS__}, NULL}; \
	HPT__CONSTRUCTOR_(HPT__CAT_(hpt__sreg_, suite))                              \
	{                                                                            \
		hpt__register_suite(&HPT__CAT_(hpt__suite_, suite));                 \
	}                                                                            \
	extern int HPT__CAT_(hpt__suite_semicolon_, suite)

/*
 * ParameterizedTestParameters(suite, name) { return cr_make_param_array(T, arr, n); } runs
 * in the runner before the tests; ParameterizedTest(T *p, suite, name, options...) then runs
 * once per element, each time in a process of its own, with p pointing at the element.
 */
#define ParameterizedTestParameters(suite, name) \
	static struct hpt_params HPT__CAT_(hpt__params_, HPT__CAT_(suite, HPT__CAT_(_, name)))(void)

#define ParameterizedTest(...) HPT__EXPAND_(HPT__PTEST_(__VA_ARGS__, .hpt_end_ = 0))
#define HPT__PTEST_(param, suite, name, ...)                                                     \
	static struct hpt_params HPT__CAT_(hpt__params_, HPT__CAT_(suite, HPT__CAT_(_, name)))(void); \
	static void HPT__CAT_(hpt__pbody_, HPT__CAT_(suite, HPT__CAT_(_, name)))(param);          \
	static void HPT__CAT_(hpt__ptramp_, HPT__CAT_(suite, HPT__CAT_(_, name)))(void *p)        \
	{                                                                                         \
		HPT__CAT_(hpt__pbody_, HPT__CAT_(suite, HPT__CAT_(_, name)))(p);                  \
	}                                                                                         \
	static struct hpt_test HPT__CAT_(hpt__test_, HPT__CAT_(suite, HPT__CAT_(_, name))) = {   \
		#suite, #name, __FILE__, __LINE__, NULL,                                          \
		HPT__CAT_(hpt__ptramp_, HPT__CAT_(suite, HPT__CAT_(_, name))),                    \
		HPT__CAT_(hpt__params_, HPT__CAT_(suite, HPT__CAT_(_, name))),                    \
		{ __VA_ARGS__ }, NULL};                                                           \
	HPT__CONSTRUCTOR_(HPT__CAT_(hpt__reg_, HPT__CAT_(suite, HPT__CAT_(_, name))))             \
	{                                                                                         \
		hpt__register_test(&HPT__CAT_(hpt__test_, HPT__CAT_(suite, HPT__CAT_(_, name))));  \
	}                                                                                         \
	static void HPT__CAT_(hpt__pbody_, HPT__CAT_(suite, HPT__CAT_(_, name)))(param)

/* cr_make_param_array(Type, array, length[, cleanup]) */
#define cr_make_param_array(...) HPT__EXPAND_(HPT__PARAMS_(__VA_ARGS__, NULL, ~))
#define HPT__PARAMS_(type, array, length, cleanup, ...) \
	((struct hpt_params){sizeof(type), (const void *)(array), (size_t)(length), (cleanup)})

/*
 * Assertions with an optional message.  HPT__MSGn_ picks the suffix _M_ when the call has
 * more than n arguments (a message follows the operands) and _0_ otherwise, so the message
 * keeps its printf checking and a call without one needs no empty format string.
 */
#define HPT__PICK_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, \
		   a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, x, ...) x
#define HPT__MSG1_(...)                                                                            \
	HPT__EXPAND_(HPT__PICK_(__VA_ARGS__, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, \
				M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, 0_, ~))
#define HPT__MSG2_(...)                                                                            \
	HPT__EXPAND_(HPT__PICK_(__VA_ARGS__, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, \
				M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, 0_, 0_, ~))

/*
 * One operand: cr_assert(cond[, fmt, ...]) and the _null forms.  `test` is the check and
 * `text` what the failure says after the operand ("" or " == NULL").
 */
#define HPT__CHECK1_(how, test, text, ...) \
	HPT__EXPAND_(HPT__CAT_(HPT__CHECK1, HPT__MSG1_(__VA_ARGS__))(how, test, text, __VA_ARGS__))
#define HPT__CHECK10_(how, test, text, a)                                 \
	do {                                                              \
		if (!(test(a)))                                           \
			hpt__##how##_failed(__FILE__, __LINE__, #a text); \
	} while (0)
#define HPT__CHECK1M_(how, test, text, a, ...)                                         \
	do {                                                                           \
		if (!(test(a)))                                                        \
			hpt__##how##_failedf(__FILE__, __LINE__, #a text, __VA_ARGS__); \
	} while (0)

/* Two operands: cr_assert_eq(a, b[, fmt, ...]) and the other comparisons; `op` goes between. */
#define HPT__CHECK2_(how, test, op, ...) \
	HPT__EXPAND_(HPT__CAT_(HPT__CHECK2, HPT__MSG2_(__VA_ARGS__))(how, test, op, __VA_ARGS__))
#define HPT__CHECK20_(how, test, op, a, b)                                     \
	do {                                                                   \
		if (!(test(a, b)))                                             \
			hpt__##how##_failed(__FILE__, __LINE__, #a op #b);     \
	} while (0)
#define HPT__CHECK2M_(how, test, op, a, b, ...)                                             \
	do {                                                                                \
		if (!(test(a, b)))                                                          \
			hpt__##how##_failedf(__FILE__, __LINE__, #a op #b, __VA_ARGS__);    \
	} while (0)

/* Each operand is named once in the expansion, so it is evaluated once. */
#define HPT__TRUE_(a)        (a)
#define HPT__NULL_(a)        ((a) == NULL)
#define HPT__NOT_NULL_(a)    ((a) != NULL)
#define HPT__EQ_(a, b)       ((a) == (b))
#define HPT__NEQ_(a, b)      ((a) != (b))
#define HPT__LT_(a, b)       ((a) < (b))
#define HPT__LEQ_(a, b)      ((a) <= (b))
#define HPT__GT_(a, b)       ((a) > (b))
#define HPT__GEQ_(a, b)      ((a) >= (b))
#define HPT__STR_EQ_(a, b)   (hpt__str_eq((a), (b)))
#define HPT__STR_NEQ_(a, b)  (!hpt__str_eq((a), (b)))

#define cr_assert(...)          HPT__CHECK1_(assert, HPT__TRUE_, "", __VA_ARGS__)
#define cr_assert_null(...)     HPT__CHECK1_(assert, HPT__NULL_, " == NULL", __VA_ARGS__)
#define cr_assert_not_null(...) HPT__CHECK1_(assert, HPT__NOT_NULL_, " != NULL", __VA_ARGS__)
#define cr_assert_eq(...)       HPT__CHECK2_(assert, HPT__EQ_, " == ", __VA_ARGS__)
#define cr_assert_neq(...)      HPT__CHECK2_(assert, HPT__NEQ_, " != ", __VA_ARGS__)
#define cr_assert_lt(...)       HPT__CHECK2_(assert, HPT__LT_, " < ", __VA_ARGS__)
#define cr_assert_leq(...)      HPT__CHECK2_(assert, HPT__LEQ_, " <= ", __VA_ARGS__)
#define cr_assert_gt(...)       HPT__CHECK2_(assert, HPT__GT_, " > ", __VA_ARGS__)
#define cr_assert_geq(...)      HPT__CHECK2_(assert, HPT__GEQ_, " >= ", __VA_ARGS__)
#define cr_assert_str_eq(...)   HPT__CHECK2_(assert, HPT__STR_EQ_, " equals string ", __VA_ARGS__)
#define cr_assert_str_neq(...)  HPT__CHECK2_(assert, HPT__STR_NEQ_, " differs from string ", __VA_ARGS__)

#define cr_expect(...)          HPT__CHECK1_(expect, HPT__TRUE_, "", __VA_ARGS__)
#define cr_expect_null(...)     HPT__CHECK1_(expect, HPT__NULL_, " == NULL", __VA_ARGS__)
#define cr_expect_not_null(...) HPT__CHECK1_(expect, HPT__NOT_NULL_, " != NULL", __VA_ARGS__)
#define cr_expect_eq(...)       HPT__CHECK2_(expect, HPT__EQ_, " == ", __VA_ARGS__)
#define cr_expect_neq(...)      HPT__CHECK2_(expect, HPT__NEQ_, " != ", __VA_ARGS__)
#define cr_expect_lt(...)       HPT__CHECK2_(expect, HPT__LT_, " < ", __VA_ARGS__)
#define cr_expect_leq(...)      HPT__CHECK2_(expect, HPT__LEQ_, " <= ", __VA_ARGS__)
#define cr_expect_gt(...)       HPT__CHECK2_(expect, HPT__GT_, " > ", __VA_ARGS__)
#define cr_expect_geq(...)      HPT__CHECK2_(expect, HPT__GEQ_, " >= ", __VA_ARGS__)
#define cr_expect_str_eq(...)   HPT__CHECK2_(expect, HPT__STR_EQ_, " equals string ", __VA_ARGS__)
#define cr_expect_str_neq(...)  HPT__CHECK2_(expect, HPT__STR_NEQ_, " differs from string ", __VA_ARGS__)

/* cr_assert_fail(fmt, ...) and cr_skip_test(fmt, ...): the suites always give a reason. */
#define cr_assert_fail(...) hpt__assert_failedf(__FILE__, __LINE__, NULL, __VA_ARGS__)
#define cr_expect_fail(...) hpt__expect_failedf(__FILE__, __LINE__, NULL, __VA_ARGS__)
#define cr_skip_test(...)   hpt__skip(__FILE__, __LINE__, __VA_ARGS__)

#define cr_log_info(...)  hpt__log("[----] ", __VA_ARGS__)
#define cr_log_warn(...)  hpt__log("[WARN] ", __VA_ARGS__)
#define cr_log_error(...) hpt__log("[ERR ] ", __VA_ARGS__)

#endif /* HPSHM_TESTS_HPT_HARNESS_H */
