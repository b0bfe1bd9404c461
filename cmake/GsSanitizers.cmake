# GS_SANITIZE: the CPU parts of the course built with GCC's or Clang's sanitizers, e.g.
#   cmake --preset asan     (GS_SANITIZE=address,undefined, GS_CUDA=OFF, build-asan/)
# Every C++ file is compiled and linked with -fsanitize=${GS_SANITIZE}; every program of the build
# (tests, lesson programs, apps; those no test runs only on request) gets its sanitizer options
# compiled in (sanitizers/options.cpp.in),
# so a test run by hand behaves as under CTest: UndefinedBehaviorSanitizer stops at the first
# report (halt_on_error) instead of printing and going on, and reads the suppression file
# sanitizers/ubsan.supp, which silences reports inside third-party headers only (Thrust's), and
# LeakSanitizer reads sanitizers/lsan.supp (Open MPI's libraries only): never the course's code. GPU code is checked by compute-sanitizer instead (the
# lessonNN.sanitizer.* tests): the CUDA runtime and AddressSanitizer's shadow memory do not mix,
# so GS_SANITIZE requires GS_CUDA=OFF. The asan preset compiles with -O1 -g1 (fast enough to run,
# line numbers in reports, half the compile time of -O2 -g), and its test preset leaves out the
# selftests, which the plain build runs. It leaves warnings as warnings: GCC's manual
# advises against -Werror with sanitizers, whose instrumentation makes false -Wmaybe-uninitialized
# reports (GCC 12 does, in libstdc++'s <regex>); the ci preset is where warnings are errors.
include_guard(GLOBAL)

set(GS_SANITIZE "" CACHE STRING
    "Sanitizers for the CPU build, e.g. address,undefined (needs GS_CUDA=OFF); empty: none")

if(GS_SANITIZE)
  if(GS_HAVE_CUDA)
    message(FATAL_ERROR "GS_SANITIZE=${GS_SANITIZE} needs GS_CUDA=OFF: AddressSanitizer and the "
                        "CUDA runtime do not mix (GPU code is checked by compute-sanitizer)")
  endif()
  set(GS_SANITIZER_FLAGS -fsanitize=${GS_SANITIZE} -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${GS_SANITIZER_FLAGS}>")
  add_link_options(${GS_SANITIZER_FLAGS})
  set(GS_UBSAN_SUPPRESSIONS ${CMAKE_CURRENT_LIST_DIR}/sanitizers/ubsan.supp)
  set(GS_LSAN_SUPPRESSIONS ${CMAKE_CURRENT_LIST_DIR}/sanitizers/lsan.supp)
  set(GS_SANITIZER_OPTIONS ${CMAKE_BINARY_DIR}/generated/sanitizer_options.cpp)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/sanitizers/options.cpp.in ${GS_SANITIZER_OPTIONS} @ONLY)

  # The options every program of the build carries: sanitizers/options.cpp, compiled into each
  # executable once every directory is processed (a static library's copy would never be linked:
  # nothing refers to these hooks).
  function(_gs_sanitize_programs directory)
    get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "EXECUTABLE")
        target_sources(${target} PRIVATE ${GS_SANITIZER_OPTIONS})
        # The sanitized build is for the tests: a program no test runs (the lesson programs) is
        # built only when asked for; the ones tests run are built as their dependencies.
        if(NOT target MATCHES "^test_")
          set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL ON)
        endif()
      endif()
    endforeach()
    get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
    foreach(subdirectory IN LISTS subdirectories)
      _gs_sanitize_programs(${subdirectory})
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _gs_sanitize_programs
                 ${CMAKE_SOURCE_DIR})
endif()
