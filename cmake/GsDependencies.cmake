# Every dependency comes from a system package through find_package; nothing is downloaded at
# build time. scripts/setup.sh installs the packages on Debian/Ubuntu.
include(CheckLanguage)
include(FeatureSummary)

find_package(HDF5 REQUIRED COMPONENTS C)
find_package(GTest REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(PNG REQUIRED)
find_package(Threads REQUIRED)
find_package(MPI COMPONENTS CXX QUIET)
find_package(Doxygen QUIET)

set(GS_SKIPPED "")  # what was left out of this build, and why (printed at the end)

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

# Thrust headers for the CPU (OpenMP) build of lesson 03: the CUDA toolkit's CCCL copy when
# there is one, else Debian's libthrust-dev.
find_path(GS_THRUST_INCLUDE_DIR thrust/version.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS}/cccl ${CUDAToolkit_INCLUDE_DIRS}
                /usr/local/cuda/include/cccl /usr/local/cuda/include)
if(NOT GS_THRUST_INCLUDE_DIR)
  list(APPEND GS_SKIPPED "lesson 03 CPU backend: no Thrust headers (install libthrust-dev)")
endif()

if(NOT MPI_FOUND)
  list(APPEND GS_SKIPPED "MPI parts (lesson 08): no MPI found")
endif()

function(gs_print_summary)
  message(STATUS "")
  message(STATUS "Gray-Scott School build summary")
  message(STATUS "  build type      ${CMAKE_BUILD_TYPE}")
  message(STATUS "  C++ compiler    ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  if(GS_HAVE_CUDA)
    message(STATUS "  CUDA compiler   ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  endif()
  message(STATUS "  HDF5            ${HDF5_VERSION}")
  message(STATUS "  lessons built   ${GS_LESSONS_BUILT}")
  foreach(item IN LISTS GS_SKIPPED)
    message(STATUS "  skipped         ${item}")
  endforeach()
  message(STATUS "")
endfunction()
