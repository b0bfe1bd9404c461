# gs_discover_tests(): registers a GoogleTest program's tests with CTest, with several labels.
#
#   gs_discover_tests(TARGET test_common PREFIX "common." LABELS common cpu)
#
# gtest_discover_tests() alone keeps only the first of several LABELS: its PROPERTIES pass
# through a few layers of CMake list splitting that drop any escaping. So the discovery runs
# without labels and writes the names it found to <TARGET>_TESTS; a second script, included
# by CTest right after the discovery script, puts the labels on exactly those tests.
include(GoogleTest)

function(gs_discover_tests)
  cmake_parse_arguments(ARG "" "TARGET;PREFIX" "LABELS" ${ARGN})
  set(list_variable ${ARG_TARGET}_TESTS)
  gtest_discover_tests(${ARG_TARGET} TEST_PREFIX "${ARG_PREFIX}" TEST_LIST ${list_variable}
    DISCOVERY_MODE PRE_TEST NO_PRETTY_VALUES DISCOVERY_TIMEOUT 60)
  # Each build tree's tests keep their temporary files in a folder of its own (GoogleTest's
  # TempDir() follows TEST_TMPDIR), so that two checkouts tested at once never share a file.
  set(temporary ${PROJECT_BINARY_DIR}/test-tmp)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}_labels.cmake)
  file(WRITE ${script}
    "file(MAKE_DIRECTORY \"${temporary}\")\n"
    "set_tests_properties(\${${list_variable}} PROPERTIES LABELS \"${ARG_LABELS}\"\n"
    "  ENVIRONMENT \"TEST_TMPDIR=${temporary}\")\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()
