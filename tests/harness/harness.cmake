# SPDX-License-Identifier: MIT
# tests/harness/harness.cmake -- which harness the suites build against (HPSHM_TEST_HARNESS).
#
#   criterion  Debian's Criterion, found through pkg-config; the default where it is found
#              (and the build is not a cross build, where the host's Criterion is no use)
#   builtin    the in-tree harness in this directory, for targets Criterion cannot run on
#              (mingw-w64 under wine, musl, i686, qemu-user); no Criterion is needed
#
# Either way the result is the interface target hpshm_test_harness, which the suites link, and
# tests/harness.h picks the matching header.  The builtin harness also gets its own self-tests.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND AND NOT CMAKE_CROSSCOMPILING)
  pkg_check_modules(CRITERION QUIET criterion)
endif()
if(CRITERION_FOUND)
  set(hpshm_default_harness criterion)
else()
  set(hpshm_default_harness builtin)
endif()
set(HPSHM_TEST_HARNESS "${hpshm_default_harness}" CACHE STRING
    "Test harness for the suites: criterion (Debian's libcriterion-dev) or builtin (tests/harness)")
set_property(CACHE HPSHM_TEST_HARNESS PROPERTY STRINGS criterion builtin)

add_library(hpshm_test_harness INTERFACE)
if(HPSHM_TEST_HARNESS STREQUAL "criterion")
  if(NOT CRITERION_FOUND)
    message(FATAL_ERROR "HPSHM_TEST_HARNESS=criterion, but pkg-config finds no criterion: "
                        "install libcriterion-dev (scripts/deps.sh test) or configure with "
                        "-DHPSHM_TEST_HARNESS=builtin")
  endif()
  target_include_directories(hpshm_test_harness INTERFACE ${CRITERION_INCLUDE_DIRS})
  target_link_libraries(hpshm_test_harness INTERFACE ${CRITERION_LINK_LIBRARIES})
  target_compile_definitions(hpshm_test_harness INTERFACE HPSHM_TEST_CRITERION)
elseif(HPSHM_TEST_HARNESS STREQUAL "builtin")
  # The runner (with main()) is in the library: a suite is its test file and nothing else.
  add_library(hpshm_harness STATIC ${CMAKE_CURRENT_LIST_DIR}/hpt_harness.c)
  target_include_directories(hpshm_harness PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(hpshm_harness PRIVATE hpshm_warnings)
  target_link_libraries(hpshm_test_harness INTERFACE hpshm_harness)

  # Self-tests of the harness: programs that pass, fail, hang, crash and skip on purpose,
  # each judged by check_selftest.cmake from its closing line, exit status and key lines.
  string(REPLACE ";" "|" hpshm_selftest_emulator "${CMAKE_CROSSCOMPILING_EMULATOR}")
  function(hpshm_harness_selftest test prog)
    cmake_parse_arguments(PARSE_ARGV 2 st "" "RC;LAST;ARGS" "EXPECT;REJECT")
    if(NOT TARGET ${prog})
      add_executable(${prog} ${CMAKE_CURRENT_LIST_DIR}/${prog}.c)
      target_link_libraries(${prog} PRIVATE hpshm_harness hpshm_warnings)
    endif()
    set(defs -DPROG=$<TARGET_FILE:${prog}> -DRC=${st_RC} "-DARGS=${st_ARGS}"
             "-DEMULATOR=${hpshm_selftest_emulator}")
    if(DEFINED st_LAST)
      list(APPEND defs "-DLAST=${st_LAST}")
    endif()
    set(i 1)
    foreach(re IN LISTS st_EXPECT)
      list(APPEND defs "-DEXPECT${i}=${re}")
      math(EXPR i "${i} + 1")
    endforeach()
    set(i 1)
    foreach(re IN LISTS st_REJECT)
      list(APPEND defs "-DREJECT${i}=${re}")
      math(EXPR i "${i} + 1")
    endforeach()
    add_test(NAME ${test} COMMAND ${CMAKE_COMMAND} ${defs} -P ${CMAKE_CURRENT_LIST_DIR}/check_selftest.cmake)
    set_tests_properties(${test} PROPERTIES TIMEOUT 60 LABELS "unit;harness"
      ENVIRONMENT "ASAN_OPTIONS=handle_segv=0:detect_leaks=1")
  endfunction()

  hpshm_harness_selftest(harness_passes selftest_pass RC zero
    LAST "11 passed, 0 failed, 2 skipped"
    EXPECT "^\\[PASS\\] selftest::param_gets_its_element\\[2\\]$"
           "^\\[SKIP\\] selftest::skip_is_counted_as_skipped: skipped on purpose: the reason is printed$"
           "^\\[SKIP\\] selftest::disabled_is_skipped: disabled$"
           "^\\[PASS\\] selftest::signal_is_expected$")
  hpshm_harness_selftest(harness_filter selftest_pass RC zero ARGS "--filter|selftest/param_*|--jobs=4"
    LAST "3 passed, 0 failed, 0 skipped")
  hpshm_harness_selftest(harness_list selftest_pass RC zero ARGS "--list"
    LAST "selftest::zz_last_test_passes"
    EXPECT "^selftest::disabled_is_skipped \\(disabled\\)$")
  hpshm_harness_selftest(harness_fails selftest_fail RC nonzero
    LAST "0 passed, 1 failed, 0 skipped"
    EXPECT "^\\[FAIL\\] selftest::fails: the expectation fails first \\(1\\) \\(1 == 2 is false\\) at .*selftest_fail\\.c:[0-9]+ \\(and later failures, above\\)$"
           "then: .*left.* equals string .*right.* is false at .*selftest_fail\\.c:[0-9]+$"
           "fini ran after the failure"
           "went on after the failed expectation"
    REJECT "went on after the failed assertion")
  hpshm_harness_selftest(harness_times_out selftest_hang RC nonzero
    LAST "0 passed, 1 failed, 0 skipped"
    EXPECT "^\\[FAIL\\] selftest::hangs: timed out after 1 s at .*selftest_hang\\.c:[0-9]+$")
  hpshm_harness_selftest(harness_crashes selftest_crash RC nonzero
    LAST "0 passed, 1 failed, 0 skipped"
    EXPECT "^\\[FAIL\\] selftest::crashes: crashed: killed by SIGSEGV \\(signal [0-9]+\\) at .*selftest_crash\\.c:[0-9]+$")
  hpshm_harness_selftest(harness_skips selftest_skip RC zero
    LAST "0 passed, 0 failed, 1 skipped"
    EXPECT "^\\[SKIP\\] selftest::skips: nothing to test here: on purpose$"
    REJECT "fini ran")
  hpshm_harness_selftest(harness_mismatches selftest_mismatch RC nonzero
    LAST "0 passed, 3 failed, 0 skipped"
    EXPECT "^\\[FAIL\\] selftest::exits_with_an_unexpected_status: exited with status 7, expected 0 at "
           "^\\[FAIL\\] selftest::expected_signal_never_comes: exited with status 0, but SIGSEGV \\(signal [0-9]+\\) was expected at "
           "^\\[FAIL\\] selftest::forked_child_fails: the forked child failed on purpose at .*selftest_mismatch\\.c:[0-9]+$")
  hpshm_harness_selftest(harness_rejects_bad_options selftest_pass RC nonzero ARGS "--timeout|0"
    EXPECT "--timeout 0: give the seconds as a number above 0, e.g. --timeout 120$"
    REJECT "passed, ")
else()
  message(FATAL_ERROR "HPSHM_TEST_HARNESS=${HPSHM_TEST_HARNESS}: use criterion or builtin")
endif()
