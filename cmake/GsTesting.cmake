# gs_discover_tests(): registers a GoogleTest program's tests with CTest, with several labels.
#
#   gs_discover_tests(TARGET test_common PREFIX "common." LABELS common cpu)
#   gs_discover_tests(TARGET test_lesson07_solution PREFIX "lesson07.solution."
#                     LABELS lesson07 solution GPU_TESTS "(^|[./])Gpu|Gpu[.]")
#
# With GPU_TESTS (a regular expression on the GoogleTest name, without the prefix), a suite that
# holds both kinds of test labels each test by where it runs: `gpu` for the names that match,
# `cpu` for the others. So `ctest -L cpu` runs what a machine without a GPU can run, and
# `ctest -L gpu` what needs one.
#
# gtest_discover_tests() alone keeps only the first of several LABELS: its PROPERTIES pass
# through a few layers of CMake list splitting that drop any escaping. So the discovery runs
# without labels and writes the names it found to <TARGET>_TESTS; a second script, included
# by CTest right after the discovery script, puts the labels on exactly those tests.
include(GoogleTest)

function(gs_discover_tests)
  cmake_parse_arguments(ARG "" "TARGET;PREFIX;GPU_TESTS" "LABELS" ${ARGN})
  set(list_variable ${ARG_TARGET}_TESTS)
  gtest_discover_tests(${ARG_TARGET} TEST_PREFIX "${ARG_PREFIX}" TEST_LIST ${list_variable}
    DISCOVERY_MODE PRE_TEST NO_PRETTY_VALUES DISCOVERY_TIMEOUT 60)
  # Each build tree's tests keep their temporary files in a folder of its own (GoogleTest's
  # TempDir() follows TEST_TMPDIR), so that two checkouts tested at once never share a file.
  set(temporary ${PROJECT_BINARY_DIR}/test-tmp)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}_labels.cmake)
  if(NOT ARG_GPU_TESTS)
    file(WRITE ${script}
      "file(MAKE_DIRECTORY \"${temporary}\")\n"
      "set_tests_properties(\${${list_variable}} PROPERTIES LABELS \"${ARG_LABELS}\"\n"
      "  ENVIRONMENT \"TEST_TMPDIR=${temporary}\")\n")
  else()
    # The regular expression goes into the script as a bracket argument: kept as written.
    string(LENGTH "${ARG_PREFIX}" prefix_length)
    file(WRITE ${script}
      "file(MAKE_DIRECTORY \"${temporary}\")\n"
      "set(gs_cpu_tests \"\")\n"
      "set(gs_gpu_tests \"\")\n"
      "foreach(gs_test IN LISTS ${list_variable})\n"
      "  string(SUBSTRING \"\${gs_test}\" ${prefix_length} -1 gs_name)\n"
      "  if(gs_name MATCHES [==[${ARG_GPU_TESTS}]==])\n"
      "    list(APPEND gs_gpu_tests \"\${gs_test}\")\n"
      "  else()\n"
      "    list(APPEND gs_cpu_tests \"\${gs_test}\")\n"
      "  endif()\n"
      "endforeach()\n"
      "foreach(gs_kind cpu gpu)\n"
      "  if(gs_\${gs_kind}_tests)\n"
      "    set_tests_properties(\${gs_\${gs_kind}_tests} PROPERTIES\n"
      "      LABELS \"${ARG_LABELS};\${gs_kind}\" ENVIRONMENT \"TEST_TMPDIR=${temporary}\")\n"
      "  endif()\n"
      "endforeach()\n")
  endif()
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()
