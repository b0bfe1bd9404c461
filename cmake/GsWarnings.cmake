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
