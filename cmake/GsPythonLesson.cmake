# Lesson 10's Python module: finding what it needs (a Python with its headers, pybind11, and
# optionally dlpack.h), and gs_add_python_lesson(), a lesson whose body is a Python extension
# module instead of a program.
#
#   gs_find_python_tools(<reason-variable>)   # sets GS_PYTHON_READY; the reason when not ready
#   gs_add_python_lesson(NUMBER 10 TOPIC python MODULE grayscott BODY module.cpp arrays.cpp
#                        LEARNER from_dlpack.hpp binding.hpp LEARNER_ALONE USES 01 02 06
#                        TESTS test_lesson10.py GROUPS TestFirstCase:cpu TestCupy:gpu ...)
#
# The lesson's programs (the Python the module was built for, with the module first on its path;
# the same running the pytest suite) are course/lesson_python_main.cpp, built around each module.
#
# USES, as gs_add_lesson's (cmake/GsLesson.cmake): the lessons whose solutions' steppers the
# EXERCISE's module holds, each of a lower number (USES NONE: the reference alone), through a
# registry of the lesson's own, lessonNN_registry; so the exercise builds with those lessons and
# no other. The solution's module (what users import) gets the registry its program names
# (gs_python_lesson_program(): every lesson's, gray_scott's). Each module says which lesson
# builds it holds (grayscott.build["lessons"], in the registry's order), and each variant's suite
# compares the module with a gray_scott of the same registry: gray_scott itself for the solution,
# the same program built again against lessonNN_registry for the exercise.
#
#   gs_add_python_point_fixture(NUMBER 10 FIXTURE copies_in_and_out TEST test_... REASON "...")
#
# (from tests/): the lesson's point test against a plausible wrong answer, built as a third module.
#
# Which Python: -DPython_EXECUTABLE=... when given; else Debian's /usr/bin/python3 where it
# exists, as the repository's scripts choose (tools/make_figures.sh); else CMake's FindPython.
# pybind11 comes from its CMake package: Debian's pybind11-dev, or pip's, named by
# -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir). dlpack.h (DLPack, the tensor exchange
# protocol of CuPy, PyTorch and JAX): Debian's libdlpack-dev, CuPy's or PyTorch's copy in the
# chosen Python's site-packages, or the folder named by -DGS_DLPACK_INCLUDE_DIR=...; without it,
# GPU arrays come in through __cuda_array_interface__ only. Nothing is downloaded.
include_guard(GLOBAL)

set(GS_PYTHON AUTO CACHE STRING
    "Build lesson 10's Python module: AUTO (when pybind11 and Python's headers are found), ON, OFF")
set_property(CACHE GS_PYTHON PROPERTY STRINGS AUTO ON OFF)

macro(gs_find_python_tools reason_variable)
  set(GS_PYTHON_READY OFF)
  set(${reason_variable} "")
  if(GS_PYTHON STREQUAL "OFF")
    set(${reason_variable} "GS_PYTHON=OFF")
  else()
    if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
      set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH
          "the Python lesson 10's module is built for (default: Debian's /usr/bin/python3)")
    endif()
    find_package(Python 3.8 COMPONENTS Interpreter Development.Module)
    if(NOT Python_Interpreter_FOUND)
      set(${reason_variable} "no Python 3 interpreter (install python3: bash scripts/setup.sh)")
    elseif(NOT Python_Development.Module_FOUND)
      set(${reason_variable}
          "no Python headers for ${Python_EXECUTABLE} (install python3-dev: bash scripts/setup.sh)")
    else()
      # pybind11's package, found after Python, builds against that Python (its FindPython mode).
      find_package(pybind11 2.6 CONFIG QUIET)
      if(NOT pybind11_FOUND)
        set(${reason_variable} "no pybind11 (install pybind11-dev: bash scripts/setup.sh; or pass -Dpybind11_DIR=\$(python3 -m pybind11 --cmakedir))")
      else()
        set(GS_PYTHON_READY ON)
      endif()
    endif()
  endif()
  if(GS_PYTHON STREQUAL "ON" AND NOT GS_PYTHON_READY)
    message(FATAL_ERROR "GS_PYTHON=ON but lesson 10 cannot be built: ${${reason_variable}}")
  endif()
  if(GS_PYTHON_READY)
    _gs_find_dlpack()
  endif()
endmacro()

# GS_DLPACK_HEADER: dlpack.h, from -DGS_DLPACK_INCLUDE_DIR, the system (libdlpack-dev), or the
# copy that CuPy or PyTorch ship in the chosen Python's site-packages (found without importing
# them). It is copied into the build folder as dlpack/dlpack.h, so that the include path gains
# that one file and not the rest of PyTorch's ATen folder.
function(_gs_find_dlpack)
  set(GS_DLPACK_INCLUDE_DIR "" CACHE PATH "a folder that holds dlpack.h (or dlpack/dlpack.h)")
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c [=[
import importlib.util, os
for package, folder in (("cupy", "_core/include/cupy/_dlpack"), ("torch", "include/ATen")):
    try:
        spec = importlib.util.find_spec(package)
    except Exception:
        continue
    if spec is not None and spec.submodule_search_locations:
        print(os.path.join(list(spec.submodule_search_locations)[0], folder))
]=]
    OUTPUT_VARIABLE site_hints OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  string(REPLACE "\n" ";" site_hints "${site_hints}")
  set(header "")
  foreach(folder ${GS_DLPACK_INCLUDE_DIR} /usr/include /usr/local/include ${site_hints})
    foreach(candidate ${folder}/dlpack.h ${folder}/dlpack/dlpack.h)
      if(NOT header AND EXISTS ${candidate})
        set(header ${candidate})
      endif()
    endforeach()
  endforeach()
  if(header)
    set(GS_DLPACK_COPY ${PROJECT_BINARY_DIR}/generated/dlpack/dlpack/dlpack.h)
    configure_file(${header} ${GS_DLPACK_COPY} COPYONLY)
    file(STRINGS ${header} major REGEX "#define DLPACK_MAJOR_VERSION ")
    file(STRINGS ${header} minor REGEX "#define DLPACK_MINOR_VERSION ")
    file(STRINGS ${header} old REGEX "#define DLPACK_VERSION ")
    if(major)  # DLPack 1.x
      string(REGEX REPLACE "[^0-9]" "" major "${major}")
      string(REGEX REPLACE "[^0-9]" "" minor "${minor}")
      set(version "${major}.${minor}")
    else()  # before 1.0: DLPACK_VERSION 60 is 0.6
      string(REGEX REPLACE "[^0-9]" "" old "${old}")
      math(EXPR tenths "${old} / 10")
      set(version "0.${tenths}")
    endif()
    set(GS_DLPACK_HEADER ${header} PARENT_SCOPE)
    set(GS_DLPACK_VERSION "${version}" PARENT_SCOPE)
  else()
    set(GS_DLPACK_HEADER "" PARENT_SCOPE)
  endif()
endfunction()

# Position-independent code for every static library that @target links, so that they can go
# into a shared object (the Python module): GCC and nvcc compile for an executable otherwise.
function(_gs_position_independent target)
  get_target_property(libraries ${target} LINK_LIBRARIES)
  get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
  foreach(library IN LISTS libraries interface)
    if(NOT TARGET ${library})
      continue()
    endif()
    get_target_property(imported ${library} IMPORTED)
    get_target_property(type ${library} TYPE)
    get_target_property(done ${library} POSITION_INDEPENDENT_CODE)
    if(imported OR done)
      continue()
    endif()
    if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "OBJECT_LIBRARY")
      set_target_properties(${library} PROPERTIES POSITION_INDEPENDENT_CODE ON)
      _gs_position_independent(${library})
    elseif(type STREQUAL "INTERFACE_LIBRARY")
      _gs_position_independent(${library})
    endif()
  endforeach()
endfunction()

# What the module's code and a learner file compiled alone both see: the learner's folder before
# the body's, whether CUDA and dlpack.h are there (and dlpack.h's folder), the course's warnings
# and the CUDA runtime.
function(_gs_python_lesson_code target learner_dir body_dir)
  target_include_directories(${target} PRIVATE ${learner_dir} ${body_dir})
  target_compile_definitions(${target} PRIVATE
    GS_HAVE_CUDA=$<BOOL:${GS_HAVE_CUDA}> GS_HAVE_DLPACK=$<BOOL:${GS_DLPACK_HEADER}>)
  if(GS_DLPACK_HEADER)
    target_include_directories(${target} SYSTEM PRIVATE ${PROJECT_BINARY_DIR}/generated/dlpack)
  endif()
  target_link_libraries(${target} PRIVATE gs_warnings)
  if(GS_HAVE_CUDA)
    target_link_libraries(${target} PRIVATE CUDA::cudart)
  endif()
endfunction()

# A module of a Python lesson, @target (Python's name @module, in @module_dir): the body's
# @sources (in @body_dir) compiled against the learner's files found first in @learner_dirs
# (the exercise's, the solution's, a fixture's), with common/.
function(_gs_python_module target module variant module_dir learner_dirs body_dir sources)
  list(TRANSFORM sources PREPEND ${body_dir}/)
  # NO_EXTRAS: no link-time optimisation and no stripping (the libraries it links have none).
  pybind11_add_module(${target} MODULE NO_EXTRAS ${sources})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${module}
                        LIBRARY_OUTPUT_DIRECTORY ${module_dir})
  _gs_python_lesson_code(${target} "${learner_dirs}" ${body_dir})
  target_compile_definitions(${target} PRIVATE
    GS_MODULE_NAME=${module} GS_MODULE_VARIANT="${variant}")
  target_link_libraries(${target} PRIVATE gs_common)
  # The module keeps its C++ runtime to itself, as Python's extension wheels do: libstdc++
  # linked in (-static-libstdc++) and every symbol of the static libraries it links kept local
  # (--exclude-libs,ALL), so none of them binds to another libstdc++ that the interpreter loaded
  # before (NumPy's, on the course's GPU machine, older than the g++ in /opt/gcc that built the
  # module). Bound to that one, the module's number formatting (std::ostream << double) reached
  # a facet of the other library's locale and crashed (a segmentation fault in codecvt, seen
  # with cuda-gdb). Not under the sanitizers, whose runtime must see every allocation.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT GS_SANITIZE)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc
                        -Wl,--exclude-libs,ALL)
  endif()
endfunction()

# A program that starts the Python a module was built for with @module_dir first on its path:
# @program script.py ..., or, for a program named test_*, the same running the pytest suite
# @tests (@program [pytest flags]): course/lesson_python_main.cpp.
function(_gs_python_launcher program module_target variant module_dir tests)
  add_executable(${program} ${PROJECT_SOURCE_DIR}/course/lesson_python_main.cpp)
  target_compile_definitions(${program} PRIVATE
    GS_PROGRAM_NAME="${program}" GS_PYTHON_EXECUTABLE="${Python_EXECUTABLE}"
    GS_MODULE_DIR="${module_dir}" GS_BUILD_DIR="${PROJECT_BINARY_DIR}"
    GS_LESSON_VARIANT="${variant}" GS_ASAN_RUNTIME="${GS_ASAN_RUNTIME}"
    GS_UBSAN_SUPPRESSIONS="${GS_UBSAN_SUPPRESSIONS}")
  if(program MATCHES "^test_")
    target_compile_definitions(${program} PRIVATE GS_RUN_PYTEST=1 GS_TEST_FILE="${tests}")
  else()
    target_compile_definitions(${program} PRIVATE GS_RUN_PYTEST=0)
  endif()
  target_link_libraries(${program} PRIVATE gs_warnings)
  add_dependencies(${program} ${module_target})
  set_target_properties(${program} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                        ${PROJECT_BINARY_DIR}/bin)
endfunction()

function(gs_add_python_lesson)
  cmake_parse_arguments(ARG "LEARNER_ALONE" "NUMBER;TOPIC;MODULE;TESTS"
                        "BODY;LEARNER;GROUPS;LIBRARIES;USES" ${ARGN})
  set(lesson lesson${ARG_NUMBER})
  set(body_dir ${PROJECT_SOURCE_DIR}/lessons/${ARG_NUMBER}_${ARG_TOPIC})
  set(tests ${PROJECT_SOURCE_DIR}/tests/${ARG_TESTS})
  # The exercise's registry: the solutions of the lessons named in USES, and the reference (a
  # module without USES would need every lesson's, which is what the exercise must not wait for).
  if(NOT DEFINED ARG_USES AND NOT "USES" IN_LIST ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "gs_add_python_lesson(NUMBER ${ARG_NUMBER}): USES is required (the "
                        "lessons whose steppers the exercise's module holds; USES NONE: the "
                        "reference alone)")
  endif()
  set(uses "")
  if(NOT ARG_USES STREQUAL "NONE")
    set(uses ${ARG_USES})
  endif()
  foreach(used IN LISTS uses)
    if(NOT used MATCHES "^[0-9][0-9]$" OR NOT used LESS ARG_NUMBER)
      message(FATAL_ERROR "gs_add_python_lesson(NUMBER ${ARG_NUMBER}): USES ${used}: a lesson "
                          "uses only lessons of a lower number (two digits)")
    endif()
  endforeach()
  set(registry ${lesson}_registry)
  _gs_add_registry(${registry} NUMBERS ${uses} FILE ${registry} FRAME_LOOP ${lesson}_frame_loop)
  set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS
               "${ARG_NUMBER}|${registry}|registry" "${ARG_NUMBER}|${lesson}_frame_loop|registry")
  # The lesson builds it holds, in the registry's order (grayscott.build["lessons"]).
  _gs_registry_order(exercise_builds ONLY NONE ${uses})
  foreach(variant exercise solution)
    if(variant STREQUAL "exercise")
      set(learner_dir ${body_dir})
      set(module_target ${ARG_MODULE}_exercise)
      set(module_dir ${PROJECT_BINARY_DIR}/python-exercise)
    else()
      set(learner_dir ${PROJECT_SOURCE_DIR}/solutions/${ARG_NUMBER}_${ARG_TOPIC})
      set(module_target ${ARG_MODULE})
      set(module_dir ${PROJECT_BINARY_DIR}/python)
    endif()
    _gs_python_module(${module_target} ${ARG_MODULE} ${variant} ${module_dir} "${learner_dir}"
                      ${body_dir} "${ARG_BODY}")
    target_link_libraries(${module_target} PRIVATE ${ARG_LIBRARIES})
    if(variant STREQUAL "exercise")
      # The solution's registry (every lesson's) comes with its program, and the lessons it holds
      # (gs_python_lesson_program()).
      target_link_libraries(${module_target} PRIVATE ${registry})
      string(REPLACE ";" "," builds "${exercise_builds}")
      target_compile_definitions(${module_target} PRIVATE GS_MODULE_LESSONS="${builds}")
    endif()
    set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS "${ARG_NUMBER}|${module_target}|module")
    # LEARNER_ALONE (as gs_add_lesson's, cmake/GsLesson.cmake): each learner file compiled alone
    # in a generated translation unit with the module's include path, definitions and libraries
    # (_gs_python_lesson_code), so that it sees its lesson's interface header and nothing of the
    # body. A DLPack reader (a file whose name says dlpack) is checked only where the module
    # compiles one (dlpack.h).
    if(ARG_LEARNER_ALONE)
      set(alone_sources "")
      foreach(file IN LISTS ARG_LEARNER)
        if(file MATCHES "dlpack" AND NOT GS_DLPACK_HEADER)
          continue()
        endif()
        string(MAKE_C_IDENTIFIER "${file}" file_id)
        set(alone ${CMAKE_CURRENT_BINARY_DIR}/${lesson}_${variant}_alone_${file_id}.cpp)
        file(CONFIGURE OUTPUT ${alone} CONTENT
             "// Generated by cmake/GsPythonLesson.cmake (LEARNER_ALONE).\n#include <${file}>\n")
        list(APPEND alone_sources ${alone})
      endforeach()
      set(alone_target ${lesson}_${variant}_learner_alone)
      add_library(${alone_target} OBJECT ${alone_sources})
      # pybind11's types are hidden, as in the module (pybind11_add_module does the same).
      set_target_properties(${alone_target} PROPERTIES CXX_VISIBILITY_PRESET hidden)
      _gs_python_lesson_code(${alone_target} ${learner_dir} ${body_dir})
      target_link_libraries(${alone_target} PRIVATE pybind11::module gs_common)
      set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS "${ARG_NUMBER}|${alone_target}|library")
    endif()

    # The lesson's two programs: the Python the module was built for, with the module first on
    # its path (lessonNN_<variant> script.py ...), and the same running the pytest suite
    # (test_lessonNN_<variant> [pytest flags]): what gs_add_lesson() names the lesson's program
    # and test suite, so scripts/grade.sh and lessons.tsv treat the lesson as any other.
    foreach(program ${lesson}_${variant} test_${lesson}_${variant})
      _gs_python_launcher(${program} ${module_target} ${variant} ${module_dir} ${tests})
    endforeach()
    # The suite compares the module with a gray_scott of the same registry (its --list, its
    # messages): gs_python_lesson_program() names it (GS_GRAY_SCOTT) and adds the dependency.

    # One CTest test per group of the suite (a test class), labelled as a lesson's tests are.
    foreach(group IN LISTS ARG_GROUPS)
      string(REPLACE ":" ";" parts ${group})
      list(GET parts 0 name)
      list(GET parts 1 device)
      set(test ${lesson}.${variant}.${name})
      add_test(NAME ${test} COMMAND test_${lesson}_${variant} -k ${name})
      set_tests_properties(${test} PROPERTIES LABELS "${lesson};${variant};${device}"
        SKIP_REGULAR_EXPRESSION "GS_TEST_SKIPPED" TIMEOUT 600
        ENVIRONMENT "TEST_TMPDIR=${PROJECT_BINARY_DIR}/test-tmp")
    endforeach()
  endforeach()

  # The test of the tests: the shipped exercise must fail its suite (tests/conftest.py's
  # --gs-expect-failure inverts pytest's verdict and says so).
  add_test(NAME ${lesson}.exercise_fails COMMAND test_${lesson}_exercise --gs-expect-failure)
  set_tests_properties(${lesson}.exercise_fails PROPERTIES LABELS "selftest;${lesson};cpu;gpu"
    SKIP_REGULAR_EXPRESSION "GS_TEST_SKIPPED" TIMEOUT 900)

  set_property(GLOBAL PROPERTY GS_PYTHON_LESSON_${ARG_NUMBER} ${ARG_MODULE} ${ARG_MODULE}_exercise)
  # What a point fixture's module is made of (gs_add_python_point_fixture()).
  string(REPLACE ";" "," body "${ARG_BODY}")
  set_property(GLOBAL PROPERTY GS_PYTHON_LESSON_${ARG_NUMBER}_PARTS
               "${ARG_TOPIC}|${ARG_MODULE}|${body}|${tests}")
  gs_record_lesson_build(NUMBER ${ARG_NUMBER} TOPIC ${ARG_TOPIC} KIND python PROVIDES module
                         LEARNER ${ARG_LEARNER} LABELS cpu gpu)
  # The libraries the module links (common/, and what its program adds: the registry of every
  # solution's steppers), made position-independent once every directory has added its targets.
  set_property(GLOBAL APPEND PROPERTY GS_PYTHON_MODULES ${ARG_MODULE} ${ARG_MODULE}_exercise)
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _gs_python_modules_position_independent)
endfunction()

# The program that completes a Python lesson's modules (lesson 10's, grayscott: the choice among
# every lesson's steppers), from apps/: @sources compiled into both modules (the exercise's and
# the solution's, with their definitions); the solution's module links @libraries (the registry
# of every lesson), the exercise's its lesson's registry (gs_add_python_lesson's USES). PROGRAM
# (a program of the floor above, made from MAIN, that links gs_registry and gs_best_frame_loop)
# is what each suite compares its module with: the solution's suite with PROGRAM itself, the
# exercise's with MAIN built again against the lesson's registry and frame loop
# (lessonNN_exercise_<PROGRAM>), so that the exercise's suite builds without the other lessons.
#   gs_python_lesson_program(NUMBER 10 SOURCES choices.cpp functions.cpp LIBRARIES gs_registry
#                            PROGRAM gray_scott MAIN ../gray_scott.cpp)
function(gs_python_lesson_program)
  cmake_parse_arguments(ARG "" "NUMBER;PROGRAM;MAIN" "SOURCES;LIBRARIES" ${ARGN})
  set(lesson lesson${ARG_NUMBER})
  get_property(modules GLOBAL PROPERTY GS_PYTHON_LESSON_${ARG_NUMBER})
  list(GET modules 0 solution_module)
  list(TRANSFORM ARG_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  foreach(module IN LISTS modules)
    target_sources(${module} PRIVATE ${ARG_SOURCES})
    target_include_directories(${module} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  endforeach()
  target_link_libraries(${solution_module} PRIVATE ${ARG_LIBRARIES})
  # For the modules of the lesson's point fixtures (gs_add_python_point_fixture()).
  set_property(GLOBAL PROPERTY GS_PYTHON_LESSON_${ARG_NUMBER}_PROGRAM
               "${CMAKE_CURRENT_SOURCE_DIR}|${ARG_SOURCES}")
  # Every lesson build of the configuration, in gs_registry's order (gs_write_lesson_files() has
  # run: the programs' floor calls this after it).
  _gs_registry_order(all_builds)
  string(REPLACE ";" "," builds "${all_builds}")
  target_compile_definitions(${solution_module} PRIVATE GS_MODULE_LESSONS="${builds}")

  set(exercise_program ${lesson}_exercise_${ARG_PROGRAM})
  get_filename_component(main ${ARG_MAIN} ABSOLUTE)
  add_executable(${exercise_program} ${main})
  target_link_libraries(${exercise_program} PRIVATE ${lesson}_registry ${lesson}_frame_loop
                        gs_warnings)
  set_target_properties(${exercise_program} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                        ${PROJECT_BINARY_DIR}/bin)
  set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS "${ARG_NUMBER}|${exercise_program}|program")
  foreach(variant exercise solution)
    if(variant STREQUAL "exercise")
      set(program ${exercise_program})
    else()
      set(program ${ARG_PROGRAM})
    endif()
    target_compile_definitions(test_${lesson}_${variant} PRIVATE
                               GS_GRAY_SCOTT="$<TARGET_FILE:${program}>")
    add_dependencies(test_${lesson}_${variant} ${program})
  endforeach()
endfunction()

# A point test of a Python lesson's suite against a plausible wrong answer kept as a fixture
# (tests/fixtures/NN_topic/<what it does>/: some of the learner's files; the solution's stand in
# for the others): a third module, built from the body, the fixture and the program's sources
# with the reference alone (cheap: no lesson's steppers), in <build>/python-fixture/<fixture>,
# run by test_lessonNN_fixture_<fixture>, and the CTest test lessonNN.point_fixture.<fixture>,
# which passes only when the point test (pytest's -k @test) fails it for the lesson's reason
# (REASON, a regular expression its failure prints). Called from tests/, once the program's
# floor has completed the modules (gs_python_lesson_program()).
#   gs_add_python_point_fixture(NUMBER 10 FIXTURE copies_in_and_out TEST test_... REASON "...")
function(gs_add_python_point_fixture)
  cmake_parse_arguments(ARG "" "NUMBER;FIXTURE;TEST;REASON" "" ${ARGN})
  set(lesson lesson${ARG_NUMBER})
  get_property(parts GLOBAL PROPERTY GS_PYTHON_LESSON_${ARG_NUMBER}_PARTS)
  get_property(program GLOBAL PROPERTY GS_PYTHON_LESSON_${ARG_NUMBER}_PROGRAM)
  if(NOT parts OR NOT program)
    return()
  endif()
  # Python's and pybind11's imported targets are the finding directory's: found again here.
  gs_find_python_tools(reason)
  string(REPLACE "|" ";" parts "${parts}")
  list(GET parts 0 topic)
  list(GET parts 1 module)
  list(GET parts 2 body)
  list(GET parts 3 tests)
  string(REPLACE "|" ";" program "${program}")
  list(GET program 0 program_dir)
  list(SUBLIST program 1 -1 program_sources)
  set(folder ${ARG_NUMBER}_${topic})
  set(fixture_dir ${PROJECT_SOURCE_DIR}/tests/fixtures/${folder}/${ARG_FIXTURE})
  set(target ${module}_fixture_${ARG_FIXTURE})
  set(module_dir ${PROJECT_BINARY_DIR}/python-fixture/${ARG_FIXTURE})
  set(registry ${lesson}_fixture_registry)
  if(NOT TARGET ${registry})
    _gs_add_registry(${registry} NUMBERS "" FILE ${registry})
  endif()
  string(REPLACE "," ";" body "${body}")
  _gs_python_module(${target} ${module} fixture ${module_dir}
                    "${fixture_dir};${PROJECT_SOURCE_DIR}/solutions/${folder}"
                    ${PROJECT_SOURCE_DIR}/lessons/${folder} "${body}")
  target_sources(${target} PRIVATE ${program_sources})
  target_include_directories(${target} PRIVATE ${program_dir})
  target_link_libraries(${target} PRIVATE ${registry})
  target_compile_definitions(${target} PRIVATE GS_MODULE_LESSONS="")
  set_property(GLOBAL APPEND PROPERTY GS_PYTHON_MODULES ${target})
  set(runner test_${lesson}_fixture_${ARG_FIXTURE})
  _gs_python_launcher(${runner} ${target} fixture ${module_dir} ${tests})
  add_test(NAME ${lesson}.point_fixture.${ARG_FIXTURE} COMMAND ${runner} -k ${ARG_TEST})
  set_tests_properties(${lesson}.point_fixture.${ARG_FIXTURE} PROPERTIES
    LABELS "${lesson};selftest;cpu" PASS_REGULAR_EXPRESSION "${ARG_REASON}"
    SKIP_REGULAR_EXPRESSION "GS_TEST_SKIPPED" TIMEOUT 300)
endfunction()

function(_gs_python_modules_position_independent)
  get_property(modules GLOBAL PROPERTY GS_PYTHON_MODULES)
  foreach(module IN LISTS modules)
    _gs_position_independent(${module})
  endforeach()
endfunction()

# The sanitized build (GS_SANITIZE with address): a Python module built with AddressSanitizer
# needs its runtime loaded first into the interpreter, which is not built with it; the lesson's
# programs preload it (LD_PRELOAD) before starting Python, and the C++ runtime with it: the
# interpreter does not link libstdc++, and AddressSanitizer finds the functions it intercepts
# (__cxa_throw: every C++ exception) only in the libraries there when it starts.
set(GS_ASAN_RUNTIME "")
if(GS_SANITIZE MATCHES "address")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
                  OUTPUT_VARIABLE cxx_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(GS_ASAN_RUNTIME "${asan_runtime}:${cxx_runtime}")
endif()
