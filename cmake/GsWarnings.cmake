# Warnings on for every target of the course; GS_WERROR makes them errors (CI).
add_library(gs_warnings INTERFACE)
target_compile_options(gs_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
if(GS_WERROR)
  target_compile_options(gs_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Werror>)
endif()
if(GS_HAVE_CUDA)
  # Line info lets compute-sanitizer and Nsight Compute point at source lines; it costs nothing
  # at run time.
  target_compile_options(gs_warnings INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
endif()

# GS_PTXAS_VERBOSE=ON: ptxas prints, for every kernel it compiles, its registers per thread, its
# shared and constant memory, and any spill to local memory ("N bytes spill stores"). Lesson 04
# and docs/PROFILING.md read these lines; they appear in the build's output (e.g.
# `cmake --build build --target lesson04_solution -v`, after touching the lesson's .cu file).
option(GS_PTXAS_VERBOSE "Print each CUDA kernel's registers, shared memory and spills (ptxas -v)"
       OFF)
if(GS_HAVE_CUDA AND GS_PTXAS_VERBOSE)
  target_compile_options(gs_warnings INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v>)
endif()
