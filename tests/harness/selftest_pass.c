/* SPDX-License-Identifier: MIT */
/*
 * selftest_pass.c -- what the built-in harness must get right when tests pass: every assertion
 * form the suites use, operands evaluated once, .init/.fini order, one process per test,
 * parameterised tests, .exit_code and .signal, and disabled or skipped tests counted as
 * skipped.  check_selftest.cmake runs it and expects "11 passed, 0 failed, 2 skipped".
 */
#include <signal.h>
#include <stdlib.h>

#include "hpt_harness.h"

static int suite_inits, test_inits, order_ok;
static int calls;

static int count_call(int v)
{
	calls++;
	return v;
}

static void suite_init(void)
{
	suite_inits++;
}

static void test_init(void)
{
	/* The suite's .init has run first. */
	order_ok = suite_inits == 1;
	test_inits++;
}

TestSuite(selftest, .init = suite_init, .timeout = 30);

Test(selftest, every_assertion_form_passes)
{
	const char *s = "abc";
	char buf[] = "abc";
	int *none = NULL;

	cr_assert(1);
	cr_assert(s, "with a message %d", 1);
	cr_assert_eq(2, 2);
	cr_assert_eq(2, 2, "%s", "with a message");
	cr_assert_neq(1, 2);
	cr_assert_lt(1, 2);
	cr_assert_leq(2, 2);
	cr_assert_gt(3, 2);
	cr_assert_geq(3, 3);
	cr_assert_null(none);
	cr_assert_not_null(s);
	cr_assert_str_eq(s, buf);
	cr_assert_str_neq(s, "abd", "%s", s);
	cr_expect(1);
	cr_expect_eq(1, 1, "x");
	cr_expect_geq(2, 1);
	cr_expect_gt(2, 1);
	cr_log_info("info %d", 1);
	cr_log_warn("warn %d", 2);
	cr_log_error("error %d", 3);
}

Test(selftest, operands_are_evaluated_once)
{
	cr_assert_eq(count_call(1), 1);
	cr_assert_lt(count_call(1), count_call(2));
	cr_expect(count_call(1));
	cr_assert_eq(calls, 4, "calls = %d", calls);
}

Test(selftest, init_runs_in_the_tests_process_suite_first, .init = test_init)
{
	cr_assert_eq(suite_inits, 1);
	cr_assert_eq(test_inits, 1);
	cr_assert(order_ok);
}

/* The two tests run in this order (by name); the second must not see what the first did. */
Test(selftest, isolation_a_writes_a_global)
{
	calls = 100;
	cr_assert_eq(calls, 100);
}

Test(selftest, isolation_b_sees_it_pristine)
{
	cr_assert_eq(calls, 0);
}

Test(selftest, exit_code_is_expected, .exit_code = 3)
{
	exit(3);
}

Test(selftest, signal_is_expected, .signal = SIGABRT)
{
	abort();
}

Test(selftest, disabled_is_skipped, .disabled = true)
{
	cr_assert_fail("a disabled test ran");
}

Test(selftest, skip_is_counted_as_skipped)
{
	cr_skip_test("skipped on purpose: %s", "the reason is printed");
}

struct elem {
	int index;
	int square;
};

static struct elem elems[3];

ParameterizedTestParameters(selftest, param_gets_its_element)
{
	for (int i = 0; i < 3; i++) {
		elems[i].index = i;
		elems[i].square = i * i;
	}
	return cr_make_param_array(struct elem, elems, 3);
}

ParameterizedTest(struct elem *e, selftest, param_gets_its_element, .timeout = 20)
{
	cr_assert_eq(e->square, e->index * e->index);
	cr_log_info("element %d", e->index);
}

ParameterizedTestParameters(selftest, param_empty_runs_nothing)
{
	return cr_make_param_array(struct elem, elems, 0);
}

ParameterizedTest(struct elem *e, selftest, param_empty_runs_nothing)
{
	cr_assert_fail("element %d of an empty array ran", e->index);
}

Test(selftest, zz_last_test_passes)
{
}
