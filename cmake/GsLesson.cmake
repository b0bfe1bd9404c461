# gs_add_lesson(): everything one lesson needs, from the one call in lessons/NN_topic/CMakeLists.txt.
#
#   gs_add_lesson(NUMBER 01 TOPIC profiling KIND cpu BODY stencil.cpp LEARNER interior.hpp
#                 [PROVIDES implementations|frame_loop|program] [USES NN ... | USES NONE]
#                 [LIBRARIES ...]
#                 [SANITIZER_FILTER gtest-filter] [LEARNER_ALONE | LEARNER_NOT_ALONE reason])
#
# A lesson's body (BODY: kernels, steppers, launches, registration) lives once, in
# lessons/NN_topic/. The part the learner writes (LEARNER: one small file, or a few) exists twice:
# as stubs in lessons/NN_topic/ and completed in solutions/NN_topic/. The body includes it with
# angle brackets (`#include <interior.hpp>`), so the build decides which one: the body is compiled
# once with lessons/NN_topic/ on the include path (the exercise) and once with solutions/NN_topic/
# (the solution).
#
# LEARNER_ALONE: each learner file must compile on its own: it includes what it uses
# (its lesson's small API header, e.g. lessons/11_on_chip/tiles.hpp, or common/'s headers) and so
# sees what the lesson gives it and nothing else, not the body's definitions nor what the body
# includes (the reference, say). The check: for each build and variant, the OBJECT library
# lessonNN_<variant>[_cpu]_learner_alone (part of ALL) compiles a generated translation unit
# holding only `#include <file>`, in the body's language (CUDA for .cu bodies and for CUDA-built
# thrust and hybrid lessons) with the body's include path, definitions, libraries and warnings,
# but not GS_LESSON_NAMESPACE. A learner file that leans on its body breaks the build.
# LEARNER_NOT_ALONE "reason": the check is off, and the configure summary gives the reason. With
# neither, the check is off too and the summary lists the lesson: the default, until every lesson
# says which (lessons whose learner files still lean on their body pass LEARNER_NOT_ALONE).
#
# KIND cpu     C++; tests labelled cpu.
# KIND cuda    CUDA (.cu); built only with CUDA; tests labelled gpu.
# KIND thrust  C++ written against Thrust, built twice: with Thrust's OpenMP backend by the C++
#              compiler (suffix _cpu, tests labelled cpu) and with its CUDA backend by nvcc (tests
#              labelled gpu). The body sees GS_THRUST_CUDA = 1 or 0.
# KIND hybrid  C++ with optional GPU parts: compiled by nvcc when CUDA is there (the body sees
#              GS_HAVE_CUDA = 1), else by the C++ compiler (GS_HAVE_CUDA = 0). Each test is
#              labelled by where it runs: gpu when a part of its GoogleTest name starts with Gpu
#              or its suite's name ends with Gpu (GS_GPU_TEST_NAMES: GpuBatch.*,
#              Lesson07Pipeline.GpuSlowWriter..., Lesson08Gpu.*), cpu otherwise; GPU tests skip
#              without a GPU. Its exercise_fails runs the whole suite and is labelled cpu and gpu.
#
# PROVIDES says what the body defines in namespace GS_LESSON_NAMESPACE (lessonNN, or lessonNN_cpu):
#   implementations  std::vector<gs::Implementation> implementations(): steppers. The lesson's
#                    program is course/lesson_main.cpp; the solutions' steppers go into the registry
#                    that gray_scott and gs_benchmark choose from.
#   frame_loop       gs::FrameLoop frame_loop(): how frames get to the file. The program runs the
#                    registry's steppers through it; the solution's is gray_scott's.
#   program          int program(int argc, char** argv): a program of its own, defined by the body
#                    (lesson 08's program/) or by a program of apps/ that completes the lesson's
#                    programs and suites with gs_lesson_program() (lesson 09's, gs_sweep).
# The programs and suites of a lesson that provides a frame loop or a program run steppers it does
# not define: they link the lesson's own registry, lessonNN[_cpu]_registry (gs::all_implementations:
# the solutions' steppers of the lessons named in USES, each of a lower number, then the
# reference; USES NONE: the reference alone) and lessonNN[_cpu]_frame_loop (gs::best_frame_loop:
# lesson 07's solution when USES names 07, else the synchronous loop). Never gs_registry, the
# programs' registry of every lesson: a lesson's exercise builds with the lessons it names and
# no other (scripts/check_layout.sh checks it, from <build>/lesson_links.tsv). Without USES, every
# lesson of a lower number (the configure summary lists such lessons).
#
# For each build and each variant (exercise, solution) it creates
#   lessonNN_<variant>[_cpu]_impl   the body compiled against that variant's learner file(s)
#   lessonNN_<variant>[_cpu]        the lesson's program
#   test_lessonNN_<variant>[_cpu]   tests/test_lessonNN.cpp against it, CTest labels lessonNN,
#                                   <variant>, and cpu or gpu
# and the CTest test lessonNN[_cpu].exercise_fails (label selftest): the shipped exercise must
# fail its suite (skipped where every test skips: no GPU). Where compute-sanitizer exists, GPU
# builds also get lessonNN.sanitizer.<tool> tests (label sanitizer) on the solution's suite, and
# lessonNN.exercise_sanitizer.<tool> (labels sanitizer and exercise) on the exercise's for grading,
# filtered to small grids (SANITIZER_FILTER, a gtest filter; default: the standard odd grids). Every build is
# recorded in the GLOBAL property GS_LESSON_BUILDS; gs_write_lesson_files() (apps/) writes the
# implementation registry and <build>/lessons.tsv, the list scripts read.
include_guard(GLOBAL)

set_property(GLOBAL PROPERTY GS_LESSON_BUILDS "")
set_property(GLOBAL PROPERTY GS_LESSONS_SKIPPED "")
set_property(GLOBAL PROPERTY GS_LESSON_TARGETS "")
set_property(GLOBAL PROPERTY GS_LESSONS_USING_ALL_BELOW "")
set_property(GLOBAL PROPERTY GS_LEARNERS_NOT_ALONE "")

set(GS_EXPECT_FAILURE_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/GsExpectFailure.cmake)
set(GS_SANITIZE_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/GsSanitize.cmake)
# The GoogleTest names of a hybrid lesson's GPU tests (cmake/GsTesting.cmake, GPU_TESTS).
set(GS_GPU_TEST_NAMES "(^|[./])Gpu|Gpu[.]")
set(GS_DEFAULT_SANITIZER_FILTER "*17x33*:*67x131_random*:*1x7*:*7x1*:*255x257_random*")
find_program(GS_COMPUTE_SANITIZER compute-sanitizer HINTS /usr/local/cuda/bin
             DOC "compute-sanitizer, for the sanitizer tests of the GPU lessons")

# What the compiler needs to build a lesson's code of this kind, on @target: the definitions the
# body sees, Thrust's backend, the CUDA runtime, -march=native (the body, and the learner-alone
# check, which must compile the learner's file as the body does).
function(_gs_lesson_kind_settings target kind)
  if(kind STREQUAL "cpu")
    if(GS_NATIVE)
      target_compile_options(${target} PRIVATE -march=native)
    endif()
  elseif(kind STREQUAL "thrust_cpu")
    target_compile_definitions(${target} PRIVATE GS_THRUST_CUDA=0)
    target_link_libraries(${target} PRIVATE gs_thrust_omp)
  elseif(kind STREQUAL "thrust_cuda")
    target_compile_definitions(${target} PRIVATE GS_THRUST_CUDA=1)
    target_link_libraries(${target} PUBLIC gs_common_cuda)
  elseif(kind STREQUAL "cuda")
    target_link_libraries(${target} PUBLIC gs_common_cuda)
  elseif(kind STREQUAL "hybrid")
    if(GS_HAVE_CUDA)
      target_compile_definitions(${target} PRIVATE GS_HAVE_CUDA=1)
      target_link_libraries(${target} PUBLIC gs_common_cuda)
    else()
      target_compile_definitions(${target} PRIVATE GS_HAVE_CUDA=0)
    endif()
  endif()
endfunction()

function(_gs_lesson_build number topic kind suffix body learner provides libraries
         sanitizer_filter uses learner_alone)
  set(lesson lesson${number})
  set(build_id ${number}${suffix})
  set(namespace ${lesson}${suffix})
  set(body_dir ${PROJECT_SOURCE_DIR}/lessons/${number}_${topic})
  if(kind STREQUAL "cpu" OR kind STREQUAL "thrust_cpu")
    set(labels cpu)
  elseif(kind STREQUAL "hybrid")
    set(labels cpu gpu)
  else()
    set(labels gpu)
  endif()

  set(source ${body_dir}/${body})
  # The body's language: the extension of the file the compiler gets (its own, or the wrapper's).
  get_filename_component(body_extension ${body} LAST_EXT)
  if(kind STREQUAL "thrust_cuda" OR (kind STREQUAL "hybrid" AND GS_HAVE_CUDA))
    # The same C++ file compiled by nvcc: a generated .cu that includes it.
    set(wrapper ${CMAKE_CURRENT_BINARY_DIR}/${lesson}${suffix}_body.cu)
    file(CONFIGURE OUTPUT ${wrapper} CONTENT "#include \"${source}\"\n")
    set(source ${wrapper})
    set(body_extension .cu)
  endif()

  # A lesson that runs steppers it does not define (a frame loop's, a program's) gets a registry of
  # its own: the solutions of the lessons it USES, named, and the reference; never the registry
  # of every lesson (gs_registry, the programs'), so its exercise builds without the rest.
  if(NOT provides STREQUAL "implementations")
    set(registry ${lesson}${suffix}_registry)
    _gs_add_registry(${registry} NUMBERS ${uses} FILE ${registry}
                     FRAME_LOOP ${lesson}${suffix}_frame_loop)
    set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS
                 "${number}|${registry}|registry" "${number}|${lesson}${suffix}_frame_loop|registry")
  endif()

  foreach(variant exercise solution)
    set(target ${lesson}_${variant}${suffix})
    if(variant STREQUAL "exercise")
      set(learner_dir ${body_dir})
    else()
      set(learner_dir ${PROJECT_SOURCE_DIR}/solutions/${number}_${topic})
    endif()

    add_library(${target}_impl STATIC ${source})
    # The learner's file first (the variant's), then the lesson's own headers, which a learner
    # file may include as its lesson's interface (e.g. lesson 11's tiles.hpp).
    target_include_directories(${target}_impl PRIVATE ${learner_dir} ${body_dir})
    target_compile_definitions(${target}_impl PRIVATE GS_LESSON_NAMESPACE=${namespace})
    target_link_libraries(${target}_impl PUBLIC gs_common PRIVATE gs_warnings ${libraries})
    set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS "${number}|${target}_impl|library")
    _gs_lesson_kind_settings(${target}_impl ${kind})

    if(learner_alone)
      # Each learner file alone in a translation unit (LEARNER_ALONE, the header comment): it
      # compiles only if it includes everything it uses.
      set(alone_sources "")
      foreach(file IN LISTS learner)
        string(MAKE_C_IDENTIFIER "${file}" file_id)
        set(alone ${CMAKE_CURRENT_BINARY_DIR}/${target}_alone_${file_id}${body_extension})
        file(CONFIGURE OUTPUT ${alone} CONTENT
             "// Generated by cmake/GsLesson.cmake (LEARNER_ALONE).\n#include <${file}>\n")
        list(APPEND alone_sources ${alone})
      endforeach()
      add_library(${target}_learner_alone OBJECT ${alone_sources})
      target_include_directories(${target}_learner_alone PRIVATE ${learner_dir} ${body_dir})
      target_link_libraries(${target}_learner_alone PRIVATE gs_common gs_warnings ${libraries})
      _gs_lesson_kind_settings(${target}_learner_alone ${kind})
      set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS
                   "${number}|${target}_learner_alone|library")
    endif()

    if(provides STREQUAL "implementations")
      set(main ${PROJECT_SOURCE_DIR}/course/lesson_main.cpp)
    elseif(provides STREQUAL "frame_loop")
      set(main ${PROJECT_SOURCE_DIR}/course/lesson_frame_loop_main.cpp)
    else()
      set(main ${PROJECT_SOURCE_DIR}/course/lesson_program_main.cpp)
    endif()
    add_executable(${target} ${main})
    target_compile_definitions(${target} PRIVATE GS_PROGRAM_NAME="${target}"
                               GS_LESSON_NAMESPACE=${namespace})
    target_link_libraries(${target} PRIVATE ${target}_impl gs_commit gs_warnings)
    if(NOT provides STREQUAL "implementations")
      # The steppers of the lessons it uses, and (a program) the best frame loop among them.
      target_link_libraries(${target} PRIVATE ${registry} ${lesson}${suffix}_frame_loop)
    endif()
    set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS "${number}|${target}|program")
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

    set(test_target test_${target})
    add_executable(${test_target} ${PROJECT_SOURCE_DIR}/tests/test_${lesson}.cpp)
    target_compile_definitions(${test_target} PRIVATE GS_LESSON_NAMESPACE=${namespace}
                               GS_LESSON_PROGRAM="$<TARGET_FILE:${target}>")
    add_dependencies(${test_target} ${target})
    # A suite may include the lesson's own headers and, to test it alone, the learner's file.
    target_include_directories(${test_target} PRIVATE ${learner_dir} ${body_dir})
    target_link_libraries(${test_target} PRIVATE ${target}_impl gs_test_support gs_warnings)
    if(NOT provides STREQUAL "implementations")
      target_link_libraries(${test_target} PRIVATE ${registry} ${lesson}${suffix}_frame_loop)
    endif()
    set_property(GLOBAL APPEND PROPERTY GS_LESSON_TARGETS "${number}|${test_target}|program")
    set_target_properties(${test_target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
      ${PROJECT_BINARY_DIR}/bin)
    if(kind STREQUAL "hybrid")
      gs_discover_tests(TARGET ${test_target} PREFIX "${lesson}${suffix}.${variant}."
                        LABELS ${lesson} ${variant} GPU_TESTS "${GS_GPU_TEST_NAMES}")
    else()
      gs_discover_tests(TARGET ${test_target} PREFIX "${lesson}${suffix}.${variant}."
                        LABELS ${lesson} ${variant} ${labels})
    endif()
  endforeach()

  # The test of the tests: the shipped exercise must fail its suite.
  add_test(NAME ${lesson}${suffix}.exercise_fails
           COMMAND ${CMAKE_COMMAND} -DTEST_PROGRAM=$<TARGET_FILE:test_${lesson}_exercise${suffix}>
                   -P ${GS_EXPECT_FAILURE_SCRIPT})
  set_tests_properties(${lesson}${suffix}.exercise_fails PROPERTIES
    LABELS "selftest;${lesson};${labels}" SKIP_REGULAR_EXPRESSION "GS_TEST_SKIPPED" TIMEOUT 900)

  # compute-sanitizer on the solution's suite (small odd grids), where the tool exists, and the
  # same on the exercise's suite (label exercise, so only scripts/grade.sh runs it: as shipped,
  # the exercise fails); a lesson that passes SANITIZER_FILTER NONE adds its own
  # (gs_add_sanitizer_tests).
  if(GS_COMPUTE_SANITIZER AND "gpu" IN_LIST labels AND NOT sanitizer_filter STREQUAL "NONE")
    foreach(tool memcheck racecheck synccheck)
      add_test(NAME ${lesson}${suffix}.sanitizer.${tool}
               COMMAND ${CMAKE_COMMAND} -DSANITIZER=${GS_COMPUTE_SANITIZER} -DTOOL=${tool}
                       -DTEST_PROGRAM=$<TARGET_FILE:test_${lesson}_solution${suffix}>
                       "-DFILTER=${sanitizer_filter}" -P ${GS_SANITIZE_SCRIPT})
      set_tests_properties(${lesson}${suffix}.sanitizer.${tool} PROPERTIES
        LABELS "sanitizer;${lesson};gpu" SKIP_REGULAR_EXPRESSION "GS_TEST_SKIPPED" TIMEOUT 1800)
      add_test(NAME ${lesson}${suffix}.exercise_sanitizer.${tool}
               COMMAND ${CMAKE_COMMAND} -DSANITIZER=${GS_COMPUTE_SANITIZER} -DTOOL=${tool}
                       -DTEST_PROGRAM=$<TARGET_FILE:test_${lesson}_exercise${suffix}>
                       "-DFILTER=${sanitizer_filter}" -P ${GS_SANITIZE_SCRIPT})
      set_tests_properties(${lesson}${suffix}.exercise_sanitizer.${tool} PROPERTIES
        LABELS "sanitizer;exercise;${lesson};gpu" SKIP_REGULAR_EXPRESSION "GS_TEST_SKIPPED"
        TIMEOUT 1800)
    endforeach()
  endif()

  string(REPLACE ";" " " learner_list "${learner}")
  string(REPLACE ";" "," label_list "${labels}")
  set_property(GLOBAL APPEND PROPERTY GS_LESSON_BUILDS ${build_id})
  set_property(GLOBAL PROPERTY GS_BUILD_${build_id}
    "${number}|${topic}|${suffix}|${namespace}|${kind}|${provides}|${learner_list}|${label_list}")
endfunction()

function(gs_add_lesson)
  cmake_parse_arguments(ARG "LEARNER_ALONE"
                        "NUMBER;TOPIC;KIND;BODY;PROVIDES;SANITIZER_FILTER;LEARNER_NOT_ALONE"
                        "LEARNER;LIBRARIES;USES" ${ARGN})
  foreach(required NUMBER TOPIC KIND BODY LEARNER)
    if(NOT ARG_${required})
      message(FATAL_ERROR "gs_add_lesson: ${required} is required")
    endif()
  endforeach()
  if(NOT ARG_PROVIDES)
    set(ARG_PROVIDES implementations)
  endif()
  if(NOT ARG_PROVIDES MATCHES "^(implementations|frame_loop|program)$")
    message(FATAL_ERROR "gs_add_lesson: PROVIDES must be implementations, frame_loop or program")
  endif()
  set(folder ${ARG_NUMBER}_${ARG_TOPIC})
  foreach(file IN LISTS ARG_LEARNER)
    foreach(dir lessons solutions)
      if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${dir}/${folder}/${file})
        message(FATAL_ERROR "gs_add_lesson: ${dir}/${folder}/${file} is missing (the learner's "
                            "file exists in lessons/ as stubs and in solutions/ completed)")
      endif()
    endforeach()
  endforeach()

  if("LEARNER_NOT_ALONE" IN_LIST ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "gs_add_lesson: LEARNER_NOT_ALONE needs a reason")
  endif()
  if(ARG_LEARNER_ALONE AND DEFINED ARG_LEARNER_NOT_ALONE)
    message(FATAL_ERROR "gs_add_lesson: LEARNER_ALONE and LEARNER_NOT_ALONE exclude each other")
  endif()
  # Lessons whose learner files are not checked alone, with the reason (the configure summary).
  if(DEFINED ARG_LEARNER_NOT_ALONE)
    set_property(GLOBAL APPEND PROPERTY GS_LEARNERS_NOT_ALONE
                 "${ARG_NUMBER}: ${ARG_LEARNER_NOT_ALONE}")
  elseif(NOT ARG_LEARNER_ALONE)
    set_property(GLOBAL APPEND PROPERTY GS_LEARNERS_NOT_ALONE
                 "${ARG_NUMBER}: neither LEARNER_ALONE nor LEARNER_NOT_ALONE given")
  endif()

  if(NOT ARG_SANITIZER_FILTER)
    set(ARG_SANITIZER_FILTER "${GS_DEFAULT_SANITIZER_FILTER}")
  endif()
  # USES: the lessons whose solutions' steppers its registry holds (a frame loop's or a program's
  # lesson); each of a lower number. USES NONE: the reference alone. Without USES, every lesson
  # of a lower number that this build added (the configure summary lists such lessons).
  if(ARG_USES STREQUAL "NONE" OR "USES" IN_LIST ARG_KEYWORDS_MISSING_VALUES)
    set(uses "")
  elseif(DEFINED ARG_USES)
    set(uses ${ARG_USES})
    foreach(used IN LISTS uses)
      if(NOT used MATCHES "^[0-9][0-9]$" OR NOT used LESS ARG_NUMBER)
        message(FATAL_ERROR "gs_add_lesson(NUMBER ${ARG_NUMBER}): USES ${used}: a lesson uses only "
                            "lessons of a lower number (two digits)")
      endif()
    endforeach()
  else()
    set(uses "")
    get_property(builds GLOBAL PROPERTY GS_LESSON_BUILDS)
    foreach(id IN LISTS builds)
      _gs_build_record(${id})
      if(build_number LESS ARG_NUMBER AND NOT build_number IN_LIST uses)
        list(APPEND uses ${build_number})
      endif()
    endforeach()
    if(NOT ARG_PROVIDES STREQUAL "implementations")
      set_property(GLOBAL APPEND PROPERTY GS_LESSONS_USING_ALL_BELOW ${ARG_NUMBER})
    endif()
  endif()
  # A build left out: recorded with the reason and the learner's files (lessons.tsv).
  macro(_gs_skip id reason)
    string(REPLACE ";" " " skipped_learner "${ARG_LEARNER}")
    set_property(GLOBAL APPEND PROPERTY GS_LESSONS_SKIPPED
                 "${id}|${ARG_TOPIC}|${reason}|${skipped_learner}")
  endmacro()
  # One build of the lesson: its kind and its suffix ("" or _cpu).
  macro(_gs_build kind suffix)
    _gs_lesson_build(${ARG_NUMBER} ${ARG_TOPIC} ${kind} "${suffix}" "${ARG_BODY}" "${ARG_LEARNER}"
                     ${ARG_PROVIDES} "${ARG_LIBRARIES}" "${ARG_SANITIZER_FILTER}" "${uses}"
                     ${ARG_LEARNER_ALONE})
  endmacro()
  if(ARG_KIND STREQUAL "cpu" OR ARG_KIND STREQUAL "hybrid")
    _gs_build(${ARG_KIND} "")
  elseif(ARG_KIND STREQUAL "cuda")
    if(GS_HAVE_CUDA)
      _gs_build(cuda "")
    else()
      _gs_skip("${ARG_NUMBER}" "no CUDA compiler")
    endif()
  elseif(ARG_KIND STREQUAL "thrust")
    if(TARGET gs_thrust_omp)
      _gs_build(thrust_cpu _cpu)
    else()
      _gs_skip("${ARG_NUMBER}_cpu" "no Thrust (install libthrust-dev)")
    endif()
    if(GS_HAVE_CUDA)
      _gs_build(thrust_cuda "")
    else()
      _gs_skip("${ARG_NUMBER}" "no CUDA compiler")
    endif()
  else()
    message(FATAL_ERROR "gs_add_lesson: KIND must be cpu, cuda, thrust or hybrid (got '${ARG_KIND}')")
  endif()
endfunction()

# The program that completes a lesson of PROVIDES program whose program() is not in its body but
# in a program of apps/ (lesson 09's, gs_sweep): that program's OBJECT library @library (defining
# GS_LESSON_NAMESPACE::program) goes into the lesson's programs and suites, lessonNN_<variant> and
# test_lessonNN_<variant>. Called from apps/, so that the arrow runs down: the program names the
# lesson, never the lesson the program.
#   gs_lesson_program(NUMBER 09 LIBRARY gs_sweep_program)
function(gs_lesson_program)
  cmake_parse_arguments(ARG "" "NUMBER;LIBRARY" "" ${ARGN})
  foreach(variant exercise solution)
    foreach(target lesson${ARG_NUMBER}_${variant} test_lesson${ARG_NUMBER}_${variant})
      if(TARGET ${target})
        target_link_libraries(${target} PRIVATE ${ARG_LIBRARY})
      endif()
    endforeach()
  endforeach()
endfunction()

# compute-sanitizer's three tools on a program run with ARGS (instead of a test suite), as CTest
# tests NAME.sanitizer.<tool> labelled sanitizer, gpu and LESSON; nothing without the tool.
#   gs_add_sanitizer_tests(NAME lesson08 LESSON lesson08 PROGRAM lesson08_solution ARGS -r 67 ...)
function(gs_add_sanitizer_tests)
  cmake_parse_arguments(ARG "" "NAME;LESSON;PROGRAM;IGNORE_API_ERRORS" "ARGS" ${ARGN})
  if(NOT GS_COMPUTE_SANITIZER OR NOT TARGET ${ARG_PROGRAM})
    return()
  endif()
  foreach(tool memcheck racecheck synccheck)
    add_test(NAME ${ARG_NAME}.sanitizer.${tool}
             COMMAND ${CMAKE_COMMAND} -DSANITIZER=${GS_COMPUTE_SANITIZER} -DTOOL=${tool}
                     -DTEST_PROGRAM=$<TARGET_FILE:${ARG_PROGRAM}> "-DARGS=${ARG_ARGS}"
                     "-DIGNORE_API_ERRORS=${ARG_IGNORE_API_ERRORS}" -P ${GS_SANITIZE_SCRIPT})
    set_tests_properties(${ARG_NAME}.sanitizer.${tool} PROPERTIES
      LABELS "sanitizer;${ARG_LESSON};gpu" SKIP_REGULAR_EXPRESSION "GS_TEST_SKIPPED" TIMEOUT 900)
  endforeach()
endfunction()

# A lesson this build cannot make (a missing package): recorded with the reason, so that the
# configure summary, lessons.tsv and the scripts say why.
#   gs_skip_lesson(NUMBER 08 TOPIC multi_gpu LEARNER halo_exchange.hpp REASON "no MPI ...")
function(gs_skip_lesson)
  cmake_parse_arguments(ARG "" "NUMBER;TOPIC;REASON" "LEARNER" ${ARGN})
  string(REPLACE ";" " " learner "${ARG_LEARNER}")
  set_property(GLOBAL APPEND PROPERTY GS_LESSONS_SKIPPED
               "${ARG_NUMBER}|${ARG_TOPIC}|${ARG_REASON}|${learner}")
endfunction()

# Records a lesson build made by another function than gs_add_lesson() (lesson 10's Python module,
# cmake/GsPythonLesson.cmake), in the record gs_write_lesson_files() reads: its targets must be
# named as gs_add_lesson() names them (lessonNN_<variant>, test_lessonNN_<variant>).
function(gs_record_lesson_build)
  cmake_parse_arguments(ARG "" "NUMBER;TOPIC;KIND;PROVIDES" "LEARNER;LABELS" ${ARGN})
  string(REPLACE ";" " " learner_list "${ARG_LEARNER}")
  string(REPLACE ";" "," label_list "${ARG_LABELS}")
  set_property(GLOBAL APPEND PROPERTY GS_LESSON_BUILDS ${ARG_NUMBER})
  set_property(GLOBAL PROPERTY GS_BUILD_${ARG_NUMBER} "${ARG_NUMBER}|${ARG_TOPIC}||lesson${ARG_NUMBER}|${ARG_KIND}|${ARG_PROVIDES}|${learner_list}|${label_list}")
endfunction()

# Every lesson folder lessons/NN_topic/ with a CMakeLists.txt, in the course's order.
function(gs_add_lesson_folders)
  file(GLOB folders LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/[0-9][0-9]_*)
  list(SORT folders)
  foreach(folder IN LISTS folders)
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/CMakeLists.txt)
      add_subdirectory(${folder})
    endif()
  endforeach()
endfunction()

# The record of lesson build @id (written by gs_add_lesson) as variables in the caller's scope:
# build_number, build_topic, build_suffix, build_namespace, build_kind, build_provides,
# build_learner (space-separated file names) and build_labels.
function(_gs_build_record id)
  get_property(record GLOBAL PROPERTY GS_BUILD_${id})
  string(REPLACE "|" ";" fields "${record}")
  set(index 0)
  foreach(name number topic suffix namespace kind provides learner labels)
    list(GET fields ${index} value)
    set(build_${name} "${value}" PARENT_SCOPE)
    math(EXPR index "${index} + 1")
  endforeach()
endfunction()

# The lesson builds that registered steppers, fastest first: GPU builds by descending lesson
# number, then CPU lessons by descending number, then CPU ports of GPU lessons (Thrust's OpenMP
# backend), which are there to compare backends, not to be the fastest CPU path. With ONLY, the
# builds of those lesson numbers alone (a lesson's registry: the lessons it USES).
function(_gs_registry_order out_var)
  cmake_parse_arguments(ARG "" "" "ONLY" ${ARGN})
  get_property(builds GLOBAL PROPERTY GS_LESSON_BUILDS)
  set(gpu "")
  set(cpu "")
  set(ports "")
  foreach(id IN LISTS builds)
    _gs_build_record(${id})
    if(NOT build_provides STREQUAL "implementations")
      continue()
    endif()
    if(DEFINED ARG_ONLY AND NOT build_number IN_LIST ARG_ONLY)
      continue()
    endif()
    if(build_kind STREQUAL "cuda" OR build_kind STREQUAL "thrust_cuda")
      list(APPEND gpu ${id})
    elseif(build_kind STREQUAL "thrust_cpu")
      list(APPEND ports ${id})
    else()
      list(APPEND cpu ${id})
    endif()
  endforeach()
  foreach(group gpu cpu ports)
    list(SORT ${group})
    list(REVERSE ${group})
  endforeach()
  set(${out_var} ${gpu} ${cpu} ${ports} PARENT_SCOPE)
endfunction()

# The solution library of a lesson build, from its namespace: lesson01 -> lesson01_solution_impl,
# lesson03_cpu -> lesson03_solution_cpu_impl.
function(_gs_solution_library namespace out_var)
  if(namespace MATCHES "^(lesson[0-9]+)_cpu$")
    set(${out_var} ${CMAKE_MATCH_1}_solution_cpu_impl PARENT_SCOPE)
  else()
    set(${out_var} ${namespace}_solution_impl PARENT_SCOPE)
  endif()
endfunction()

# A registry: the library @name defining gs::all_implementations() (the steppers of the solutions
# of @numbers' lessons, fastest first, then the reference) and, with FRAME_LOOP, the library
# @frame_loop_name defining gs::best_frame_loop() (lesson 07's solution when it is among them,
# else common/'s synchronous loop). ALL: every lesson of the build (the programs' gs_registry).
function(_gs_add_registry name)
  cmake_parse_arguments(ARG "ALL" "FRAME_LOOP;FILE" "NUMBERS" ${ARGN})
  if(ARG_ALL)
    _gs_registry_order(ordered)
  else()
    _gs_registry_order(ordered ONLY NONE ${ARG_NUMBERS})
  endif()
  set(declarations "")
  set(calls "")
  set(implementation_libraries "")
  foreach(id IN LISTS ordered)
    _gs_build_record(${id})
    string(APPEND declarations
      "namespace ${build_namespace} {\nstd::vector<gs::Implementation> implementations();\n}\n")
    string(APPEND calls "  add(${build_namespace}::implementations());\n")
    _gs_solution_library(${build_namespace} library)
    list(APPEND implementation_libraries ${library})
  endforeach()
  set(loop_declaration "")
  set(loop_call "  return synchronous_frame_loop();\n")
  set(loop_libraries "")
  get_property(builds GLOBAL PROPERTY GS_LESSON_BUILDS)
  foreach(id IN LISTS builds)
    _gs_build_record(${id})
    if(build_provides STREQUAL "frame_loop" AND (ARG_ALL OR build_number IN_LIST ARG_NUMBERS))
      set(loop_declaration "namespace ${build_namespace} {\ngs::FrameLoop frame_loop();\n}\n")
      set(loop_call "  return ${build_namespace}::frame_loop();\n")
      _gs_solution_library(${build_namespace} loop_libraries)
    endif()
  endforeach()

  set(registry ${PROJECT_BINARY_DIR}/generated/${ARG_FILE}.cpp)
  file(GENERATE OUTPUT ${registry} CONTENT
"// Generated by cmake/GsLesson.cmake (_gs_add_registry) from the lessons of this build.
#include \"gs/registry.hpp\"

${declarations}
namespace gs {

std::vector<Implementation> all_implementations() {
  std::vector<Implementation> all;
  [[maybe_unused]] auto add = [&all](std::vector<Implementation> more) {
    for (Implementation& impl : more) all.push_back(std::move(impl));
  };
${calls}  all.push_back(reference_implementation());
  return all;
}

}  // namespace gs
")
  add_library(${name} STATIC ${registry})
  target_link_libraries(${name} PUBLIC gs_common ${implementation_libraries} PRIVATE gs_warnings)

  if(ARG_FRAME_LOOP)
    set(frame_loop ${PROJECT_BINARY_DIR}/generated/${ARG_FILE}_frame_loop.cpp)
    file(GENERATE OUTPUT ${frame_loop} CONTENT
"// Generated by cmake/GsLesson.cmake (_gs_add_registry) from the lessons of this build.
#include \"gs/registry.hpp\"

${loop_declaration}
namespace gs {

FrameLoop best_frame_loop() {
${loop_call}}

}  // namespace gs
")
    add_library(${ARG_FRAME_LOOP} STATIC ${frame_loop})
    target_link_libraries(${ARG_FRAME_LOOP} PUBLIC gs_common ${loop_libraries} PRIVATE gs_warnings)
  endif()
endfunction()

# Writes, once every lesson is added:
#  - the library gs_registry: gs::all_implementations(), every solution's steppers, fastest
#    first, then the reference; and the library gs_best_frame_loop: gs::best_frame_loop(), lesson
#    07's solution when built, else the synchronous loop of common/ (both by file(GENERATE));
#  - <build>/lessons.tsv: one line per lesson build (and per lesson left out, with the reason),
#    tab-separated, with a header: what scripts/grade.sh, scripts/gpu_check.sh and CI read.
function(gs_write_lesson_files)
  # gs_best_frame_loop is a library of its own, so that lesson 07's exercise program (which
  # links its own frame loop) never sees the solution's.
  _gs_add_registry(gs_registry ALL FILE registry FRAME_LOOP gs_best_frame_loop)
  get_property(builds GLOBAL PROPERTY GS_LESSON_BUILDS)

  # <build>/lesson_links.tsv, once every directory has added its targets.
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _gs_write_lesson_links)

  # lessons.tsv
  set(tsv "lesson\tbuild\ttopic\tkind\tlabels\tprovides\tlearner_files\texercise_program\tsolution_program\texercise_tests\tsolution_tests\tstatus\n")
  foreach(id IN LISTS builds)
    _gs_build_record(${id})
    set(files "")
    string(REPLACE " " ";" learner "${build_learner}")
    foreach(file IN LISTS learner)
      list(APPEND files lessons/${build_number}_${build_topic}/${file})
    endforeach()
    string(REPLACE ";" " " files "${files}")
    set(e lesson${build_number}_exercise${build_suffix})
    set(s lesson${build_number}_solution${build_suffix})
    string(APPEND tsv "${build_number}\t${id}\t${build_topic}\t${build_kind}\t${build_labels}\t"
      "${build_provides}\t${files}\t"
      "$<TARGET_FILE:${e}>\t$<TARGET_FILE:${s}>\t$<TARGET_FILE:test_${e}>\t"
      "$<TARGET_FILE:test_${s}>\tbuilt\n")
  endforeach()
  get_property(skipped GLOBAL PROPERTY GS_LESSONS_SKIPPED)
  foreach(entry IN LISTS skipped)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 id)
    list(GET fields 1 topic)
    list(GET fields 2 reason)
    list(GET fields 3 learner)
    string(SUBSTRING ${id} 0 2 number)
    set(files "")
    string(REPLACE " " ";" learner "${learner}")
    foreach(file IN LISTS learner)
      list(APPEND files lessons/${number}_${topic}/${file})
    endforeach()
    string(REPLACE ";" " " files "${files}")
    string(APPEND tsv "${number}\t${id}\t${topic}\t-\t-\t-\t${files}\t-\t-\t-\t-\tnot built: ${reason}\n")
  endforeach()
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/lessons.tsv CONTENT "${tsv}")
endfunction()

# <build>/lesson_links.tsv: what each lesson's targets link and include, for
# scripts/check_layout.sh (a lesson uses only common/ and lessons of a lower number). One line per
# linked library or include folder: lesson, target, role (library: the lesson's code; program:
# its programs and test suites; registry: its registry), what (link or include), the item, and
# for a linked target of this build the folder that defines it (relative to the source tree).
function(_gs_write_lesson_links)
  get_property(entries GLOBAL PROPERTY GS_LESSON_TARGETS)
  set(tsv "lesson\ttarget\trole\twhat\titem\tfolder\n")
  foreach(entry IN LISTS entries)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 number)
    list(GET fields 1 target)
    list(GET fields 2 role)
    if(NOT TARGET ${target})
      continue()
    endif()
    get_target_property(links ${target} LINK_LIBRARIES)
    get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
    set(items "")
    foreach(item IN LISTS links interface)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
      list(APPEND items "${item}")
    endforeach()
    list(REMOVE_DUPLICATES items)
    foreach(item IN LISTS items)
      if(NOT item)
        continue()
      endif()
      set(folder -)
      if(TARGET ${item})
        get_target_property(imported ${item} IMPORTED)
        if(NOT imported)
          get_target_property(folder ${item} SOURCE_DIR)
          file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${folder})
          if(folder STREQUAL "")
            set(folder .)
          endif()
        endif()
      endif()
      string(APPEND tsv "${number}\t${target}\t${role}\tlink\t${item}\t${folder}\n")
    endforeach()
    get_target_property(includes ${target} INCLUDE_DIRECTORIES)
    list(REMOVE_DUPLICATES includes)
    foreach(item IN LISTS includes)
      # The source tree's folders; not the build folder's (generated), which may lie inside it.
      if(item MATCHES "^${PROJECT_SOURCE_DIR}/" AND NOT item MATCHES "^${PROJECT_BINARY_DIR}/")
        file(RELATIVE_PATH item ${PROJECT_SOURCE_DIR} ${item})
        string(APPEND tsv "${number}\t${target}\t${role}\tinclude\t${item}\t-\n")
      endif()
    endforeach()
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/lesson_links.tsv "${tsv}")
endfunction()

# The lesson's solution suite again under the limits of smaller GPUs (GS_DEVICE_LIMITS, see
# common/include/gs/device_limits.hpp), so that the plans those cards would run are run, and
# checked against the reference, on the course's large GPU:
#   gs_add_small_gpu_tests(NUMBER 09 [FILTER gtest-filter] [PROFILES name=spec ...])
# adds lessonNN.solution.t4 and lessonNN.solution.gtx1650 (and lessonNN.solution.<name> for each
# PROFILES entry, GS_DEVICE_LIMITS=<spec>), each one run of the whole test program (or of the
# tests FILTER selects), labelled gpu, small-gpu, lessonNN and solution. Without a GPU they skip.
function(gs_add_small_gpu_tests)
  cmake_parse_arguments(ARG "" "NUMBER;FILTER" "PROFILES" ${ARGN})
  set(lesson lesson${ARG_NUMBER})
  if(NOT GS_HAVE_CUDA OR NOT TARGET test_${lesson}_solution)
    return()
  endif()
  set(filter "*")
  if(ARG_FILTER)
    set(filter "${ARG_FILTER}")
  endif()
  foreach(profile t4=t4 gtx1650=gtx1650 ${ARG_PROFILES})
    string(FIND "${profile}" "=" at)
    string(SUBSTRING "${profile}" 0 ${at} name)
    math(EXPR after "${at} + 1")
    string(SUBSTRING "${profile}" ${after} -1 spec)
    add_test(NAME ${lesson}.solution.${name}
             COMMAND test_${lesson}_solution "--gtest_filter=${filter}" --gtest_color=no)
    # The skip: what GS_REQUIRE_GPU() says where no GPU answers (tests/support/check.hpp).
    set_tests_properties(${lesson}.solution.${name} PROPERTIES
      LABELS "gpu;small-gpu;${lesson};solution"
      ENVIRONMENT "GS_DEVICE_LIMITS=${spec};TEST_TMPDIR=${PROJECT_BINARY_DIR}/test-tmp"
      SKIP_REGULAR_EXPRESSION "no usable CUDA device|no CUDA device:" TIMEOUT 900)
  endforeach()
endfunction()
