# Run by CTest (cmake -P): compute-sanitizer (TOOL: memcheck, racecheck or synccheck) over a GPU
# solution's test suite (TEST_PROGRAM), on the small grids that FILTER selects; or, with ARGS
# (a ;-list), over the program TEST_PROGRAM run with those arguments (a lesson whose suite starts
# other processes, such as lesson 08's mpirun, has its program checked directly). Prints
# "GS_TEST_SKIPPED" (a skip, through the test's SKIP_REGULAR_EXPRESSION) where no GPU answers.
if(ARGS)
  set(FILTER none)
endif()
foreach(required SANITIZER TOOL TEST_PROGRAM FILTER)
  if(NOT ${required})
    message(FATAL_ERROR "GsSanitize.cmake: pass -D${required}=...")
  endif()
endforeach()
execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE no_gpu OUTPUT_QUIET ERROR_QUIET)
if(NOT no_gpu EQUAL 0)
  message("GS_TEST_SKIPPED: no GPU answers nvidia-smi -L; compute-sanitizer needs one")
  return()
endif()
if(ARGS)
  execute_process(COMMAND "${SANITIZER}" --tool ${TOOL} --error-exitcode 9 "${TEST_PROGRAM}" ${ARGS}
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
else()
  execute_process(COMMAND "${SANITIZER}" --tool ${TOOL} --error-exitcode 9 "${TEST_PROGRAM}"
                          "--gtest_filter=${FILTER}" --gtest_brief=1 --gtest_color=no
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
endif()
string(REGEX MATCH "(ERROR|RACECHECK) SUMMARY[^\n]*" summary "${output}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "compute-sanitizer --tool ${TOOL} failed (${status}): ${summary}\n${output}")
endif()
if(NOT ARGS AND NOT output MATCHES "\\[  PASSED  \\] [1-9]")
  message(FATAL_ERROR "the filter '${FILTER}' selected no test: nothing was checked\n${output}")
endif()
message("${TOOL}: ${summary}")
