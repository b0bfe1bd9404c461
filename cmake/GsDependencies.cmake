# Every dependency comes from a system package through find_package; nothing is downloaded at
# build time. scripts/setup.sh installs the packages on Debian/Ubuntu.
include(CheckLanguage)
include(FeatureSummary)

find_package(HDF5 REQUIRED COMPONENTS C)
find_package(GTest REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(PNG REQUIRED)
find_package(GIF)  # gs_render's animated GIF (giflib: libgif-dev); without it, no --gif
find_package(Threads REQUIRED)
find_package(Doxygen QUIET)

set(GS_SKIPPED "")  # what was left out of this build, and why (printed at the end)
if(NOT GIF_FOUND)
  list(APPEND GS_SKIPPED "gs_render --gif and its tests: no giflib (install libgif-dev: bash scripts/setup.sh)")
endif()

# CUDA is optional: without it every CPU part builds and the GPU lessons are listed as skipped.
set(GS_HAVE_CUDA OFF)
if(NOT GS_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # A100 and H100 by default; learners with a GPU can pass -DCMAKE_CUDA_ARCHITECTURES=native.
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
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
  message(STATUS "")
endfunction()
