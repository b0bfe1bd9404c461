// lesson11_measure: what lesson 11's model needs, measured on this GPU (lesson 11's README,
// "Measure before building"): a grid-wide barrier (cooperative launch, one block per SM), a
// block's __syncthreads(), a thread block cluster's barrier (clusters of 2 to 16 blocks, Hopper
// and later), and one exchange of a tile's edge through L2 (post, grid barrier, collect) against
// one through distributed shared memory (write into the next block's shared memory, cluster
// barrier). Each figure is the mean over thousands of rounds in one launch, after a warm-up.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cg = cooperative_groups;

#include "gs/cuda_check.hpp"
#include "gs/main_guard.hpp"
#include "gs/program.hpp"

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

// The mean time of one round, in microseconds, of `launch` (a launch of `rounds` rounds): the
// launch runs twice, and the second one, warm, is timed.
template <class Launch>
double microseconds_per_round(cudaEvent_t start, cudaEvent_t stop, int rounds, Launch launch) {
  for (int rep = 0; rep < 2; ++rep) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
  }
  float ms = 0.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e3 / rounds;
}

// A launch in clusters of `size` blocks, as many clusters as can be resident at once (0 where
// the GPU has no clusters). Not copyable: the configuration points at its own attribute.
struct ClusterLaunch {
  cudaLaunchAttribute attribute[1];
  cudaLaunchConfig_t config = {};
  int clusters = 0;

  template <class Kernel>
  ClusterLaunch(Kernel kernel, int size, int threads, std::size_t shared) {
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = size;
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared;
    config.gridDim = dim3(size * 64);
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
      cudaGetLastError();  // the query's error is the answer: no clusters here
      clusters = 0;
    }
    config.gridDim = dim3(size * clusters);
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

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
    const double grid_us = microseconds_per_round(a, b, iterations, [&] {
      CHECK(cudaLaunchCooperativeKernel((void*)grid_barriers, sms, threads, args, 0, 0));
    });
    std::printf("grid.sync(), %d blocks x %d threads: %.3f us\n", sms, threads, grid_us);
    const double block_us = microseconds_per_round(
        a, b, iterations, [&] { block_barriers<<<sms, threads>>>(iterations, isink); });
    std::printf("__syncthreads(), %d threads: %.3f us\n", threads, block_us);
  }

  CHECK(cudaFuncSetAttribute(cluster_barriers, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaFuncSetAttribute(exchange_dsmem, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  for (int size : {2, 4, 8, 16}) {
    const int iterations = 20000;
    ClusterLaunch launch(cluster_barriers, size, 672, 0);
    if (launch.clusters == 0) {
      std::printf("cluster %d: not supported\n", size);
      continue;
    }
    const double us = microseconds_per_round(a, b, iterations, [&] {
      CHECK(cudaLaunchKernelEx(&launch.config, cluster_barriers, iterations, isink));
    });
    std::printf("cluster.sync(), cluster of %d, %d clusters x 672 threads: %.3f us\n", size,
                launch.clusters, us);
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
    const double l2_us = microseconds_per_round(a, b, iterations, [&] {
      CHECK(cudaLaunchCooperativeKernel((void*)exchange_l2, sms, threads, args, shared, 0));
    });
    std::printf("exchange through L2 + grid.sync, %d floats per block: %.3f us\n", floats, l2_us);
    CHECK(cudaFree(mailbox));
    CHECK(cudaFuncSetAttribute(exchange_dsmem, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)shared));
    for (int size : {2, 8}) {
      ClusterLaunch launch(exchange_dsmem, size, threads, shared);
      if (launch.clusters == 0) {
        std::printf("exchange through DSMEM (cluster %d): not supported\n", size);
        continue;
      }
      const double us = microseconds_per_round(a, b, iterations, [&] {
        CHECK(cudaLaunchKernelEx(&launch.config, exchange_dsmem, iterations, floats, fsink));
      });
      std::printf("exchange through DSMEM + cluster.sync (cluster %d), %d floats: %.3f us\n", size,
                  floats, us);
    }
  }
  return 0;
}

// The command line, read before any CUDA call, so that --help works without a GPU: no argument
// (measure), or --help / -h (the usage, exit 0); anything else is a usage error (exit 2).
constexpr const char* kUsage =
    "usage: lesson11_measure [-h|--help]\n"
    "Measures on this GPU what lesson 11's model needs (README.md, \"Measure before building\"):\n"
    "a grid-wide barrier (cooperative launch, one block per SM), a block's __syncthreads(), a\n"
    "thread block cluster's barrier (clusters of 2 to 16 blocks: Hopper and later), and one\n"
    "exchange of a tile's edge through L2 against one through distributed shared memory. Takes no\n"
    "other argument; needs a CUDA GPU. Exit status: 0 measured, 1 a CUDA error, 2 bad arguments.\n";

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "-h" || argument == "--help") {
      std::fputs(kUsage, stdout);
      return std::fflush(stdout) == 0 && !std::ferror(stdout) ? gs::kExitSuccess : gs::kExitFailure;
    }
  }
  if (argc > 1) {
    std::fprintf(stderr,
                 "lesson11_measure: error: unexpected argument '%s': it takes none (--help says "
                 "what it measures)\n",
                 argv[1]);
    return gs::kExitUsage;
  }
  return gs::guarded_main("lesson11_measure", [] { return measure(); });
}
