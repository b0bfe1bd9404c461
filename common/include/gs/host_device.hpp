/// @file host_device.hpp
/// @brief GS_HOST_DEVICE: marks a function that runs on the GPU and on the host. It expands to
///        `__host__ __device__` where nvcc compiles the file and to nothing for a C++ compiler,
///        so that a lesson's header serves its CUDA build and its CPU build (lessons 03, 09, 11).
#pragma once

#if defined(__CUDACC__)
#define GS_HOST_DEVICE __host__ __device__
#else
#define GS_HOST_DEVICE
#endif
