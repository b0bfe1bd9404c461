# Run by CTest (cmake -P): the test of the tests. TEST_PROGRAM, a lesson's test suite built
# against the shipped exercise, must FAIL: a suite that passes an unsolved exercise cannot grade.
#   passes (exit 0)      the suite failed at least one test, as it must
#   fails                the suite passed, or crashed without a verdict
#   skipped              every test skipped (a GPU suite on a machine without a GPU): prints
#                        "GS_TEST_SKIPPED", which the test's SKIP_REGULAR_EXPRESSION turns into
#                        a skip (a -P script cannot choose its exit code before CMake 3.29)
if(NOT TEST_PROGRAM)
  message(FATAL_ERROR "GsExpectFailure.cmake: pass -DTEST_PROGRAM=...")
endif()
execute_process(COMMAND "${TEST_PROGRAM}" --gtest_color=no
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
get_filename_component(name "${TEST_PROGRAM}" NAME)
set(passed 0)
set(failed 0)
set(skipped 0)
if(output MATCHES "\\[  PASSED  \\] ([0-9]+) test")
  set(passed ${CMAKE_MATCH_1})
endif()
if(output MATCHES "\\[  FAILED  \\] ([0-9]+) test")
  set(failed ${CMAKE_MATCH_1})
endif()
if(output MATCHES "\\[  SKIPPED \\] ([0-9]+) test")
  set(skipped ${CMAKE_MATCH_1})
endif()
if(NOT status EQUAL 0 AND failed GREATER 0)
  message("ok: ${name} fails ${failed} test(s) as shipped (${passed} pass, ${skipped} skipped)")
elseif(status EQUAL 0 AND passed EQUAL 0 AND skipped GREATER 0)
  message("GS_TEST_SKIPPED: every one of the ${skipped} tests of ${name} skipped here (no GPU)")
elseif(NOT status EQUAL 0)
  string(LENGTH "${output}" length)
  math(EXPR start "${length} - 2000")
  if(start LESS 0)
    set(start 0)
  endif()
  string(SUBSTRING "${output}" ${start} -1 tail)
  message(FATAL_ERROR "${name} ended with '${status}' before its verdict: a shipped exercise must "
                      "run and fail its tests, not crash.\n...${tail}")
else()
  message(FATAL_ERROR "${name} PASSES as shipped (${passed} passed, ${failed} failed): its tests "
                      "cannot tell an unsolved exercise from a solved one")
endif()
