// lesson11_measure: what lesson 11's model needs, measured on this GPU (README.md, "Measure
// before building"): a grid-wide barrier (cooperative launch, one block per SM), a block's
// __syncthreads(), a thread block cluster's barrier (clusters of 2 to 16 blocks, Hopper and
// later), and one exchange of a tile's edge through L2 (post, grid barrier, collect) against one
// through distributed shared memory (write into the next block's shared memory, cluster
// barrier). Each figure is the mean over thousands of rounds in one launch, after a warm-up.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace cg = cooperative_groups;

#include "gs/cuda_check.hpp"
#include "gs/main_guard.hpp"

#define CHECK(call) GS_CUDA_CHECK(call)

__global__ void grid_barriers(int iterations, int* sink) {
  cg::grid_group grid = cg::this_grid();
  for (int i = 0; i < iterations; ++i) grid.sync();
  if (threadIdx.x == 0 && blockIdx.x == 0) *sink = iterations;
}

__global__ void block_barriers(int iterations, int* sink) {
  int x = 0;
  for (int i = 0; i < iterations; ++i) {
    __syncthreads();
    x += i;
  }
  if (x == -1) *sink = x;
}

// Clusters exist from compute capability 9.0 (Hopper) on: for older targets the kernels below
// compile empty, and their launches with a cluster size are refused at run time ("not
// supported").
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define GS_HAVE_CLUSTERS 1
#else
#define GS_HAVE_CLUSTERS 0
#endif

__global__ void cluster_barriers(int iterations, int* sink) {
#if GS_HAVE_CLUSTERS
  cg::cluster_group cluster = cg::this_cluster();
  for (int i = 0; i < iterations; ++i) cluster.sync();
  if (threadIdx.x == 0 && blockIdx.x == 0) *sink = iterations;
#else
  (void)iterations, (void)sink;
#endif
}

// One exchange through L2: each block writes `floats` values to its slot of a global buffer,
// the grid waits, each block reads its right neighbour's slot.
__global__ void exchange_l2(int iterations, int floats, float* mailbox, float* sink) {
  cg::grid_group grid = cg::this_grid();
  extern __shared__ float tile[];
  float acc = 0.0f;
  for (int i = 0; i < iterations; ++i) {
    float* mine = mailbox + (size_t)(i & 1) * gridDim.x * floats + (size_t)blockIdx.x * floats;
    for (int j = threadIdx.x; j < floats; j += blockDim.x) mine[j] = tile[j] + i;
    grid.sync();
    const float* theirs = mailbox + (size_t)(i & 1) * gridDim.x * floats +
                          (size_t)((blockIdx.x + 1) % gridDim.x) * floats;
    for (int j = threadIdx.x; j < floats; j += blockDim.x) tile[floats + j] = __ldcg(theirs + j);
    __syncthreads();
    acc += tile[floats + threadIdx.x % floats];
  }
  if (acc == -1.0f) *sink = acc;
}

// One exchange through distributed shared memory: each block writes `floats` values into the
// shared memory of the next block of its cluster, then the cluster waits.
__global__ void exchange_dsmem(int iterations, int floats, float* sink) {
#if GS_HAVE_CLUSTERS
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ float tile[];
  const unsigned rank = cluster.block_rank();
  float* theirs = cluster.map_shared_rank(tile, (rank + 1) % cluster.num_blocks());
  float acc = 0.0f;
  for (int i = 0; i < iterations; ++i) {
    for (int j = threadIdx.x; j < floats; j += blockDim.x) theirs[floats + j] = tile[j] + i;
    cluster.sync();
    acc += tile[floats + threadIdx.x % floats];
  }
  cluster.sync();
  if (acc == -1.0f) *sink = acc;
#else
  (void)iterations, (void)floats, (void)sink;
#endif
}

int measure() {
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
  int* isink;
  float* fsink;
  CHECK(cudaMalloc(&isink, 4));
  CHECK(cudaMalloc(&fsink, 4));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const int sms = p.multiProcessorCount;

  for (int threads : {256, 672, 1024}) {
    int iterations = 20000;
    void* args[] = {&iterations, &isink};
    for (int rep = 0; rep < 2; ++rep) {
      CHECK(cudaEventRecord(a));
      CHECK(cudaLaunchCooperativeKernel((void*)grid_barriers, sms, threads, args, 0, 0));
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
    }
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    std::printf("grid.sync(), %d blocks x %d threads: %.3f us\n", sms, threads,
                ms * 1e3 / iterations);
    CHECK(cudaEventRecord(a));
    block_barriers<<<sms, threads>>>(iterations, isink);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
    std::printf("__syncthreads(), %d threads: %.3f us\n", threads, ms * 1e3 / iterations);
  }

  CHECK(cudaFuncSetAttribute(cluster_barriers, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaFuncSetAttribute(exchange_dsmem, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  for (int size : {2, 4, 8, 16}) {
    int iterations = 20000;
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = size;
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    config.blockDim = dim3(672);
    config.dynamicSmemBytes = 0;
    int clusters = 0;
    config.gridDim = dim3(size * 64);
    if (cudaOccupancyMaxActiveClusters(&clusters, cluster_barriers, &config) != cudaSuccess) {
      std::printf("cluster %d: not supported\n", size);
      cudaGetLastError();
      continue;
    }
    config.gridDim = dim3(size * clusters);
    for (int rep = 0; rep < 2; ++rep) {
      CHECK(cudaEventRecord(a));
      CHECK(cudaLaunchKernelEx(&config, cluster_barriers, iterations, isink));
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
    }
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    std::printf("cluster.sync(), cluster of %d, %d clusters x 672 threads: %.3f us\n", size,
                clusters, ms * 1e3 / iterations);
  }

  // Exchanges of one K-deep edge of a tile: 4 rows x 183 columns x 2 fields = 1464 floats.
  for (int floats : {183 * 2, 1464, 4 * 1464}) {
    int iterations = 5000;
    const int threads = 672;
    const size_t shared = 2 * floats * sizeof(float);
    float* mailbox;
    CHECK(cudaMalloc(&mailbox, 2 * (size_t)sms * floats * sizeof(float)));
    CHECK(cudaFuncSetAttribute(exchange_l2, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)shared));
    void* args[] = {&iterations, &floats, &mailbox, &fsink};
    float ms;
    for (int rep = 0; rep < 2; ++rep) {
      CHECK(cudaEventRecord(a));
      CHECK(cudaLaunchCooperativeKernel((void*)exchange_l2, sms, threads, args, shared, 0));
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
    }
    CHECK(cudaEventElapsedTime(&ms, a, b));
    std::printf("exchange through L2 + grid.sync, %d floats per block: %.3f us\n", floats,
                ms * 1e3 / iterations);
    CHECK(cudaFree(mailbox));
    CHECK(cudaFuncSetAttribute(exchange_dsmem, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)shared));
    for (int size : {2, 8}) {
      cudaLaunchConfig_t config = {};
      cudaLaunchAttribute attribute[1];
      attribute[0].id = cudaLaunchAttributeClusterDimension;
      attribute[0].val.clusterDim.x = size;
      attribute[0].val.clusterDim.y = 1;
      attribute[0].val.clusterDim.z = 1;
      config.attrs = attribute;
      config.numAttrs = 1;
      config.blockDim = dim3(threads);
      config.dynamicSmemBytes = shared;
      config.gridDim = dim3(size * 64);
      int clusters = 0;
      CHECK(cudaOccupancyMaxActiveClusters(&clusters, exchange_dsmem, &config));
      config.gridDim = dim3(size * clusters);
      for (int rep = 0; rep < 2; ++rep) {
        CHECK(cudaEventRecord(a));
        CHECK(cudaLaunchKernelEx(&config, exchange_dsmem, iterations, floats, fsink));
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
      }
      CHECK(cudaEventElapsedTime(&ms, a, b));
      std::printf("exchange through DSMEM + cluster.sync (cluster %d), %d floats: %.3f us\n", size,
                  floats, ms * 1e3 / iterations);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  (void)argc, (void)argv;
  return gs::guarded_main("lesson11_measure", [] { return measure(); });
}
