# gs_add_lesson(): everything one lesson needs, from one call in lessons/CMakeLists.txt.
#
#   gs_add_lesson(NUMBER 01 TOPIC profiling SOURCE stencil.cpp KIND cpu [LIBRARIES ...])
#
# KIND cpu     the source is C++; tests labelled cpu.
# KIND cuda    the source is CUDA (.cu); built only with CUDA; tests labelled gpu.
# KIND thrust  the source is C++ written against Thrust; built twice, with Thrust's OpenMP
#              backend by the C++ compiler (tests labelled cpu) and with its CUDA backend by
#              nvcc (tests labelled gpu). The source sees GS_THRUST_CUDA = 1 or 0.
#
# For each VARIANT in exercise, solution it creates
#   lessonNN_<variant>_impl   a static library from lessons/ or solutions/NN_TOPIC/SOURCE
#   lessonNN_<variant>        the lesson's program (apps/lesson_main.cpp, the course's flags)
#   test_lessonNN_<variant>   tests/test_lessonNN.cpp against that library, with CTest labels
#                             lessonNN, <variant>, cpu|gpu
# (thrust adds the suffix _cpu to the OpenMP-backend targets).
set(GS_LESSONS_BUILT "" CACHE INTERNAL "")
set(GS_SOLUTION_LIBRARIES "" CACHE INTERNAL "")

function(_gs_lesson_targets number topic variant source kind suffix namespace)
  set(lesson lesson${number})
  set(target ${lesson}_${variant}${suffix})
  if(variant STREQUAL "exercise")
    set(folder ${PROJECT_SOURCE_DIR}/lessons/${number}_${topic})
  else()
    set(folder ${PROJECT_SOURCE_DIR}/solutions/${number}_${topic})
  endif()
  set(file ${folder}/${source})

  if(kind STREQUAL "thrust_cuda")
    # The same C++ file compiled by nvcc: a generated .cu that includes it.
    set(wrapper ${CMAKE_CURRENT_BINARY_DIR}/${target}.cu)
    file(WRITE ${wrapper}.in "#include \"${file}\"\n")
    configure_file(${wrapper}.in ${wrapper} COPYONLY)
    set(file ${wrapper})
  endif()

  add_library(${target}_impl STATIC ${file})
  target_include_directories(${target}_impl PRIVATE ${folder})
  target_link_libraries(${target}_impl PUBLIC gs_common PRIVATE gs_warnings ${ARG_LIBRARIES})
  set(labels ${lesson} ${variant})
  if(kind STREQUAL "cpu")
    list(APPEND labels cpu)
    if(GS_NATIVE)
      target_compile_options(${target}_impl PRIVATE -march=native)
    endif()
  elseif(kind STREQUAL "thrust_cpu")
    list(APPEND labels cpu)
    target_include_directories(${target}_impl SYSTEM PRIVATE ${GS_THRUST_INCLUDE_DIR})
    target_compile_definitions(${target}_impl PRIVATE GS_THRUST_CUDA=0
      THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP)
    target_link_libraries(${target}_impl PRIVATE OpenMP::OpenMP_CXX)
  else()
    list(APPEND labels gpu)
    target_link_libraries(${target}_impl PUBLIC gs_common_cuda)
    if(kind STREQUAL "thrust_cuda")
      target_compile_definitions(${target}_impl PRIVATE GS_THRUST_CUDA=1)
      target_compile_options(${target}_impl PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
    endif()
    set_target_properties(${target}_impl PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
  endif()

  add_executable(${target} ${PROJECT_SOURCE_DIR}/apps/lesson_main.cpp)
  target_compile_definitions(${target} PRIVATE GS_LESSON_NAMESPACE=${namespace}
    GS_PROGRAM_NAME="${target}")
  target_link_libraries(${target} PRIVATE ${target}_impl gs_warnings)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

  set(test_target test_${target})
  add_executable(${test_target} ${PROJECT_SOURCE_DIR}/tests/test_${lesson}.cpp)
  target_compile_definitions(${test_target} PRIVATE GS_LESSON_NAMESPACE=${namespace}
    GS_LESSON_VARIANT="${variant}")
  target_link_libraries(${test_target} PRIVATE ${target}_impl gs_test_support gs_warnings)
  set_target_properties(${test_target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
    ${PROJECT_BINARY_DIR}/bin)
  gs_discover_tests(TARGET ${test_target} PREFIX "${lesson}${suffix}.${variant}." LABELS ${labels})

  if(variant STREQUAL "solution")
    set(GS_SOLUTION_LIBRARIES ${GS_SOLUTION_LIBRARIES} ${target}_impl CACHE INTERNAL "")
  endif()
endfunction()

function(gs_add_lesson)
  cmake_parse_arguments(ARG "" "NUMBER;TOPIC;SOURCE;KIND" "LIBRARIES" ${ARGN})
  set(builds "")
  if(ARG_KIND STREQUAL "cpu")
    list(APPEND builds "cpu;;lesson${ARG_NUMBER}")
  elseif(ARG_KIND STREQUAL "cuda")
    if(GS_HAVE_CUDA)
      list(APPEND builds "cuda;;lesson${ARG_NUMBER}")
    endif()
  elseif(ARG_KIND STREQUAL "thrust")
    if(GS_THRUST_INCLUDE_DIR)
      list(APPEND builds "thrust_cpu;_cpu;lesson${ARG_NUMBER}_cpu")
    endif()
    if(GS_HAVE_CUDA)
      list(APPEND builds "thrust_cuda;;lesson${ARG_NUMBER}")
    endif()
  else()
    message(FATAL_ERROR "gs_add_lesson: KIND must be cpu, cuda or thrust (got '${ARG_KIND}')")
  endif()
  # Each entry is "kind;suffix;namespace" flattened: walk it three at a time.
  list(LENGTH builds count)
  if(count EQUAL 0)
    return()
  endif()
  math(EXPR last "${count} - 1")
  foreach(i RANGE 0 ${last} 3)
    math(EXPR j "${i} + 1")
    math(EXPR k "${i} + 2")
    list(GET builds ${i} kind)
    list(GET builds ${j} suffix)
    list(GET builds ${k} namespace)
    foreach(variant exercise solution)
      _gs_lesson_targets(${ARG_NUMBER} ${ARG_TOPIC} ${variant} ${ARG_SOURCE} ${kind}
                         "${suffix}" ${namespace})
    endforeach()
    set(GS_LESSONS_BUILT ${GS_LESSONS_BUILT} "${ARG_NUMBER}${suffix}" CACHE INTERNAL "")
  endforeach()
endfunction()
