# Run by CTest (cmake -P): compute-sanitizer (TOOL: memcheck, racecheck or synccheck) over a GPU
# solution's test suite (TEST_PROGRAM), on the small grids that FILTER selects; or, with ARGS
# (a ;-list), over the program TEST_PROGRAM run with those arguments (a lesson whose suite starts
# other processes, such as lesson 08's mpirun, has its program checked directly). Prints
# "GS_TEST_SKIPPED" (a skip, through the test's SKIP_REGULAR_EXPRESSION) where no GPU answers.
# IGNORE_API_ERRORS (a regex): CUDA API errors whose report (the "Program hit" line and its host
# backtrace) matches it are listed but not counted. Lesson 08 names one: NCCL's communicator setup
# asks cudaFuncGetAttributes about every kernel it carries, including those built for other GPUs,
# and ignores the "no kernel image" answers itself (NVIDIA/nccl pull request 1864); memcheck
# reports each one. Every other error, memory errors included, still fails the test.
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
if(status EQUAL 9 AND IGNORE_API_ERRORS AND summary MATCHES "ERROR SUMMARY: ([0-9]+) error")
  set(errors ${CMAKE_MATCH_1})
  string(REPLACE ";" "," listable "${output}")
  # One API error: its "Program hit ..." line and the indented backtrace lines under it.
  string(REGEX MATCHALL "Program hit [^\n]*\n(=========  +[^\n]*\n)*" api_errors "${listable}")
  set(ignored 0)
  foreach(api_error IN LISTS api_errors)
    if(api_error MATCHES "${IGNORE_API_ERRORS}")
      math(EXPR ignored "${ignored} + 1")
    endif()
  endforeach()
  if(ignored EQUAL errors)
    message("${output}")
    message("${TOOL}: ${summary}, each of them a CUDA API error matching '${IGNORE_API_ERRORS}' "
            "(listed above), which the library that made the call handles itself: none left")
    return()
  endif()
  string(APPEND summary " (${ignored} of them matching '${IGNORE_API_ERRORS}')")
endif()
if(NOT status EQUAL 0)
  message(FATAL_ERROR "compute-sanitizer --tool ${TOOL} failed (${status}): ${summary}\n${output}")
endif()
if(NOT ARGS AND NOT output MATCHES "\\[  PASSED  \\] [1-9]")
  message(FATAL_ERROR "the filter '${FILTER}' selected no test: nothing was checked\n${output}")
endif()
message("${TOOL}: ${summary}")
