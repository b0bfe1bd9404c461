# Every dependency comes from a system package through find_package; nothing is downloaded at
# build time. scripts/setup.sh installs the packages on Debian/Ubuntu.
include(CheckLanguage)
include(FeatureSummary)

find_package(HDF5 REQUIRED COMPONENTS C)
find_package(GTest REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)  # the --json report line (nlohmann-json3-dev)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(PNG REQUIRED)
find_package(GIF)  # gs_render's animated GIF (giflib: libgif-dev); without it, no --gif
find_package(Threads REQUIRED)
find_package(Doxygen QUIET)

set(GS_SKIPPED "")  # what was left out of this build, and why (printed at the end)
if(NOT GIF_FOUND)
  list(APPEND GS_SKIPPED "gs_render --gif and its tests: no giflib (install libgif-dev: bash scripts/setup.sh)")
endif()

# The GPU code the build compiles, where the configuration does not name it
# (-DCMAKE_CUDA_ARCHITECTURES, a preset, or the CUDAARCHS environment variable, which always win):
# the GPUs of this machine when nvidia-smi lists some that this nvcc compiles for, else 75, 80 and
# 90 as machine code with 90's PTX beside it, which the driver compiles at the first launch for
# a newer GPU. So a T4, a GTX 16xx, every GeForce RTX and the newest cards run the default
# build. Sets CMAKE_CUDA_ARCHITECTURES (not cached: a later configure chooses again) and
# GS_CUDA_ARCHITECTURES_WHY, the summary's reason.
set(GS_CUDA_ARCHITECTURES_PORTABLE 75-real 80-real 90)
macro(gs_choose_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    set(GS_CUDA_ARCHITECTURES_WHY "as configured (-DCMAKE_CUDA_ARCHITECTURES, a preset or CUDAARCHS)")
  else()
    set(CMAKE_CUDA_ARCHITECTURES ${GS_CUDA_ARCHITECTURES_PORTABLE})
    set(GS_CUDA_ARCHITECTURES_WHY "75, 80, 90 + PTX: no GPU visible (Turing 7.5 and every newer GPU run it)")
    _gs_visible_gpus(_gs_gpu_names _gs_gpu_capabilities)
    if(_gs_gpu_names)
      _gs_nvcc_architectures(_gs_nvcc_architectures)
      set(_gs_native "")
      set(_gs_unsupported "")
      foreach(_gs_capability IN LISTS _gs_gpu_capabilities)
        if(NOT _gs_nvcc_architectures OR _gs_capability IN_LIST _gs_nvcc_architectures)
          list(APPEND _gs_native ${_gs_capability})
        else()
          list(APPEND _gs_unsupported ${_gs_capability})
        endif()
      endforeach()
      if(NOT _gs_gpu_capabilities)
        # A driver too old to report it is also too old for CUDA 12 (525 and newer).
        set(GS_CUDA_ARCHITECTURES_WHY "75, 80, 90 + PTX: nvidia-smi lists ${_gs_gpu_names} but \
not its compute capability (a driver older than CUDA 12 needs)")
      elseif(_gs_unsupported)
        # A card newer than this nvcc runs the PTX; an older one runs nothing it builds.
        list(GET _gs_nvcc_architectures 0 _gs_oldest)
        list(GET _gs_unsupported 0 _gs_capability)
        string(REGEX REPLACE "([0-9])$" ".\\1" _gs_oldest_text "${_gs_oldest}")  # 75 -> 7.5
        if(_gs_capability LESS _gs_oldest)
          set(GS_CUDA_ARCHITECTURES_WHY "75, 80, 90 + PTX: ${_gs_gpu_names} is older than this \
nvcc compiles for (compute capability ${_gs_oldest_text} and newer)")
          message(WARNING "The GPU of this machine, ${_gs_gpu_names}, is older than this CUDA "
                          "toolkit compiles for: the GPU lessons will not run on it (README.md, "
                          "Troubleshooting, \"An older card\").")
        else()
          set(GS_CUDA_ARCHITECTURES_WHY "75, 80, 90 + PTX: ${_gs_gpu_names} is newer than this \
nvcc compiles for; it runs the PTX")
        endif()
      elseif(_gs_native)
        list(REMOVE_DUPLICATES _gs_native)
        list(TRANSFORM _gs_native APPEND "-real" OUTPUT_VARIABLE CMAKE_CUDA_ARCHITECTURES)
        set(GS_CUDA_ARCHITECTURES_WHY "native: the GPU of this machine, ${_gs_gpu_names}")
      endif()
    endif()
  endif()
endmacro()

# The GPUs nvidia-smi lists: NAMES ("Tesla T4 (7.5)", one per distinct model) and CAPABILITIES
# (75; none where the driver is too old to report them). Both empty without nvidia-smi or a GPU.
function(_gs_visible_gpus names capabilities)
  set(found_names "")
  set(found_capabilities "")
  execute_process(COMMAND nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_QUIET TIMEOUT 30
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT result STREQUAL "0")
    execute_process(COMMAND nvidia-smi --query-gpu=name --format=csv,noheader
                    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_QUIET TIMEOUT 30
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  if(result STREQUAL "0")
    string(REPLACE "\n" ";" lines "${output}")
    foreach(line IN LISTS lines)
      if(line MATCHES "^(.+), ([0-9]+)\\.([0-9]+)$")
        list(APPEND found_names "${CMAKE_MATCH_1} (${CMAKE_MATCH_2}.${CMAKE_MATCH_3})")
        list(APPEND found_capabilities "${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
      elseif(line MATCHES "[A-Za-z]")
        list(APPEND found_names "${line}")
      endif()
    endforeach()
  endif()
  list(REMOVE_DUPLICATES found_names)
  string(REPLACE ";" " and " found_names "${found_names}")
  set(${names} "${found_names}" PARENT_SCOPE)
  set(${capabilities} "${found_capabilities}" PARENT_SCOPE)
endfunction()

# The compute capabilities this nvcc compiles for (75 80 86 ...), oldest first; empty if it does
# not say (--list-gpu-arch is CUDA 11 and newer).
function(_gs_nvcc_architectures architectures)
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-arch
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_QUIET TIMEOUT 30)
  set(found "")
  if(result STREQUAL "0")
    string(REGEX MATCHALL "compute_[0-9]+" found "${output}")
    list(TRANSFORM found REPLACE "compute_" "")
    list(SORT found COMPARE NATURAL)
  endif()
  set(${architectures} "${found}" PARENT_SCOPE)
endfunction()

# CUDA is optional: without it every CPU part builds and the GPU lessons are listed as skipped.
set(GS_HAVE_CUDA OFF)
if(NOT GS_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    gs_choose_cuda_architectures()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(GS_HAVE_CUDA ON)
  elseif(GS_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GS_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  else()
    list(APPEND GS_SKIPPED "GPU lessons and GPU tests: no CUDA compiler found (nvcc)")
  endif()
else()
  list(APPEND GS_SKIPPED "GPU lessons and GPU tests: GS_CUDA=OFF")
endif()

# Thrust for the CPU (OpenMP) build of lesson 03, through the CMake package Thrust ships: the
# CUDA toolkit's copy when there is one, else Debian's libthrust-dev. thrust_create_target()
# makes the target that selects the OpenMP device system and links OpenMP. Should the package be
# there but not load (seen once with another CMake and toolkit), the headers alone still serve:
# the target is then made by hand, with the one definition thrust_create_target() would set.
find_package(Thrust CONFIG QUIET
             HINTS ${CUDAToolkit_LIBRARY_ROOT}/lib/cmake/thrust ${CUDAToolkit_LIBRARY_DIR}/cmake/thrust
                   /usr/local/cuda/lib/cmake/thrust /usr/local/cuda/lib64/cmake/thrust
                   /usr/share/cmake/thrust)
if(Thrust_FOUND)
  thrust_create_target(gs_thrust_omp HOST CPP DEVICE OMP)
else()
  find_path(GS_THRUST_INCLUDE_DIR thrust/version.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS}/cccl ${CUDAToolkit_INCLUDE_DIRS}
                  /usr/local/cuda/include/cccl /usr/local/cuda/include)
  if(GS_THRUST_INCLUDE_DIR)
    message(STATUS "Thrust's CMake package did not load; using its headers in ${GS_THRUST_INCLUDE_DIR}")
    add_library(gs_thrust_omp INTERFACE)
    target_include_directories(gs_thrust_omp SYSTEM INTERFACE ${GS_THRUST_INCLUDE_DIR})
    target_compile_definitions(gs_thrust_omp INTERFACE
                               THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP)
    target_link_libraries(gs_thrust_omp INTERFACE OpenMP::OpenMP_CXX)
  else()
    list(APPEND GS_SKIPPED "lesson 03 CPU backend: no Thrust (install libthrust-dev)")
  endif()
endif()

function(gs_print_summary)
  message(STATUS "")
  message(STATUS "Gray-Scott School build summary")
  message(STATUS "  build type      ${CMAKE_BUILD_TYPE}")
  message(STATUS "  C++ compiler    ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  if(GS_HAVE_CUDA)
    message(STATUS "  CUDA compiler   ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
    message(STATUS "  GPU code for    ${GS_CUDA_ARCHITECTURES_WHY}")
    if(GS_PTXAS_VERBOSE)
      message(STATUS "  ptxas -v        on: registers, shared memory and spills of every kernel in the build output")
    else()
      message(STATUS "  ptxas -v        off (-DGS_PTXAS_VERBOSE=ON prints registers and spills per kernel)")
    endif()
  endif()
  message(STATUS "  HDF5            ${HDF5_VERSION}")
  if(Thrust_FOUND)
    message(STATUS "  Thrust          ${Thrust_VERSION} (${Thrust_DIR})")
  endif()
  get_property(builds GLOBAL PROPERTY GS_LESSON_BUILDS)
  string(REPLACE ";" " " builds "${builds}")
  message(STATUS "  lessons built   ${builds}")
  get_property(lessons_skipped GLOBAL PROPERTY GS_LESSONS_SKIPPED)
  foreach(entry IN LISTS lessons_skipped)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 id)
    list(GET fields 2 reason)
    list(APPEND GS_SKIPPED "lesson ${id}: ${reason}")
  endforeach()
  foreach(item IN LISTS GS_SKIPPED)
    message(STATUS "  skipped         ${item}")
  endforeach()
  # gs_add_lesson(LEARNER_ALONE): the lessons whose learner files are not compiled alone.
  get_property(not_alone GLOBAL PROPERTY GS_LEARNERS_NOT_ALONE)
  foreach(item IN LISTS not_alone)
    message(STATUS "  not alone       lesson ${item}")
  endforeach()
  # gs_add_lesson(USES): the lessons whose registry holds every lesson below them, unnamed.
  get_property(all_below GLOBAL PROPERTY GS_LESSONS_USING_ALL_BELOW)
  foreach(item IN LISTS all_below)
    message(STATUS "  uses unnamed    lesson ${item}: every lesson below it (gs_add_lesson: USES)")
  endforeach()
  message(STATUS "")
endfunction()
