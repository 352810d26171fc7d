// Stage 15: for mid-size n, one thread-block cluster adds through distributed shared memory.
//
// Idea: on Hopper (compute capability 9.0) the blocks of a thread-block cluster run at
// the same time on neighbouring SMs and can write into each other's shared memory
// (distributed shared memory, DSMEM). When n fits in one cluster of 16 blocks (8, the
// portable size, where 16 is not allowed) of four float4 loads per thread, the grid is
// that one cluster: each block pushes its partial into block 0's shared memory, one
// cluster barrier makes every push visible, and block 0 adds them in rank order. No
// global memory, no atomic and no polling between the blocks (the cluster barrier orders
// the pushes). Every other n goes to stage 14 (one block below it, tagged slots above
// it), and so does every n where the cluster kernel cannot run: on a GPU without
// clusters, and in a build whose code for this GPU was compiled for an older
// architecture (a build for sm_80 running on an H100 through the driver's JIT), since
// the path is chosen by what the loaded kernel image holds (common/kernel_image.hpp).
// Fixes: between 2^14 and 2^17 floats, stage 14's finish (a ticket and a trip to L2 for
// the slots) is a large share of a sum that takes a few microseconds.
// Expect: from just above 2^14 up to 2^17 (for 512 threads) a little faster than stage
// 14 in most runs (chapter 15 weighs the runs); the same elsewhere. In Nsight Compute,
// launch__cluster_dim_x is 16 for those n, and there are no global atomics.
// Chapter: chapters/15_one_cluster.md
#include <cooperative_groups.h>

#include <utility>

#include "block_sizes.hpp"
#include "cuda_check.hpp"
#include "kernel_image.hpp"
#include "primitives.cuh"
#include "registry.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace cg = cooperative_groups;

namespace reduction {
namespace {

constexpr int kUnroll = 4;
constexpr int kClusterLoads = 4;  // float4 loads per thread that a cluster takes
constexpr int kMaxCluster = 16;   // the largest cluster this kernel is launched with

template <int kBlock>
__global__ void __launch_bounds__(kBlock)
    cluster_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ float partials[kMaxCluster];
  cg::cluster_group cluster = cg::this_cluster();
  // A block may write into another block's shared memory only once that block runs:
  // arrive at the cluster barrier now, and wait just before the push (the loads in
  // between hide the wait).
  auto started = cluster.barrier_arrive();
  const float v = block_sum_one_round<kBlock>(chunk_thread_sum<kBlock, kUnroll>(in, n, chunk));
  const unsigned rank = cluster.block_rank();
  cluster.barrier_wait(std::move(started));
  if (threadIdx.x == 0) cluster.map_shared_rank(partials, 0)[rank] = v;
  cluster.sync();  // every push has landed; no block touches another's memory after this
  if (rank == 0 && threadIdx.x < 32) {
    float w = threadIdx.x < cluster.num_blocks() ? partials[threadIdx.x] : 0.0f;
    w = warp_sum(w);
    if (threadIdx.x == 0) *out = w;
  }
#else
  __trap();  // launched only where cluster_blocks() found clusters
#endif
}

// A launch of `blocks` blocks as one cluster (for cudaLaunchKernelEx and the occupancy
// query). Not copyable: `config` points at `attribute`.
struct ClusterLaunch {
  cudaLaunchAttribute attribute = {};
  cudaLaunchConfig_t config = {};
  ClusterLaunch(unsigned blocks, int block, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim = {blocks, 1, 1};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(static_cast<unsigned>(block));
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// Blocks per cluster for kernel kBlock on the current device: 16 where a cluster of 16
// can be resident (a non-portable size, which the kernel must be allowed first), else
// 8, else 0 (no clusters: a GPU without them, or a kernel image compiled for an
// architecture before 9.0, whose cluster_sum is the __trap() above). Asked in plan(),
// outside any timing.
template <int kBlock>
int cluster_blocks() {
  if (common::compiled_arch_of(cluster_sum<kBlock>) < 90) return 0;
  for (int c : {kMaxCluster, 8}) {
    if (c > 8 &&
        cudaFuncSetAttribute(cluster_sum<kBlock>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
      (void)cudaGetLastError();  // not allowed here: try the portable size
      continue;
    }
    const ClusterLaunch probe(static_cast<unsigned>(c), kBlock, nullptr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, cluster_sum<kBlock>, &probe.config) == cudaSuccess && clusters > 0)
      return c;
    (void)cudaGetLastError();
  }
  return 0;
}

// n goes through one cluster of `blocks` blocks: above stage 14's one-block limit, and
// within kClusterLoads float4s per thread of the cluster.
bool fits_cluster(std::size_t n, int block, int blocks) {
  const std::size_t per_block = static_cast<std::size_t>(block) * 4;
  return blocks > 0 && n > per_block * 8 && n <= static_cast<std::size_t>(blocks) * per_block * kClusterLoads;
}

const Stage& stage_14() {
  static const Stage& s = *find_stage("tagged_slots");
  return s;
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const int blocks = with_block_size("15", block, [](auto b) { return cluster_blocks<decltype(b)::value>(); });
  if (!fits_cluster(n, block, blocks)) return stage_14().plan(n, block, device);
  LaunchPlan p;
  p.grid = static_cast<unsigned>(blocks);
  // The loads and block tree of stage 13, then warp 0's five shuffle levels over the
  // cluster's partials.
  const std::size_t b = static_cast<std::size_t>(block);
  p.error_depth = common::blocked_depth(n, p.grid * b) + 5 * kUnroll + 2 + common::tree_depth(b) + 5;
  return p;
}

void launch(const StageArgs& a) {
  // plan() chose the cluster (and allowed its size) when it asked for no scratch and
  // more than one block; every plan of stage 14 has one block or some scratch.
  if (a.grid == 1 || a.scratch_bytes > 0) {
    stage_14().launch(a);
    return;
  }
  with_block_size("15", a.block, [&](auto b) {
    constexpr int kBlock = decltype(b)::value;
    const ClusterLaunch cluster(a.grid, kBlock, a.stream);
    CUDA_CHECK(cudaLaunchKernelEx(&cluster.config, cluster_sum<kBlock>, a.in, a.n,
                                  chunk_vectors(a.in, a.n, a.grid, kBlock), a.out));
  });
}

}  // namespace

Stage describe_one_cluster() {
  Stage s;
  s.number = 15;
  s.id = "one_cluster";
  s.title = "single pass, one cluster";
  s.source = "reduction/15_one_cluster.cu";
  s.chapter = "chapters/15_one_cluster.md";
  s.blocks.min = 32;
  s.blocks.max = 1024;  // the compiled block sizes
  s.blocks.preferred = 512;
  s.deterministic = true;
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
