// Stage 08: warp-level primitives (__shfl_down_sync) for the block reduction.
//
// Idea: the 32 lanes of a warp can read each other's registers with a shuffle, so
// a warp sums its 32 values in five __shfl_down_sync steps without shared memory or
// barriers. A block then needs shared memory only to pass one value per warp: each
// warp reduces, lane 0 of each warp stores its sum, one __syncthreads(), and the
// first warp reduces those sums with the same shuffles. The loads are stage 07's
// (four accumulators, grid-stride loop); the second launch reduces the partials.
// Fixes: stage 07's shared-memory tree, which needs a barrier per level (ten levels
// for a block of 1024) and leaves most warps idle in the last levels.
// Correct use of the mask (erratum 5, chapters/23_why_our_numbers_differ.md): the mask names the lanes that take
// part, and they must all execute the shuffle. Every block here is a whole number of
// warps and every thread reaches the shuffles (out-of-range threads add nothing but
// still take part), so the full mask 0xffffffff is right. __activemask() only reports
// which lanes happen to be converged at that instant; with independent thread
// scheduling (Volta and later) that may be fewer than 32, and a shuffle that reads a
// lane outside its mask gets an undefined value.
// Expect: at large n little change, since 07 was already close to memory bound (the
// book saw none either); at small n, where the block reduction is a larger part
// of the time, a clear gain. In Nsight Compute, fewer barrier stalls
// (smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio) and far fewer
// shared-memory loads (smsp__inst_executed_op_shared_ld.sum).
// Chapter: chapters/08_warp_shuffles.md
#include <algorithm>

#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

constexpr int kNumLoad = 4;
constexpr unsigned kWarpSize = 32;  // every NVIDIA GPU so far; the full mask below assumes it
constexpr unsigned kFullMask = 0xffffffffu;

// Lane 0 ends up with the sum of the warp's 32 values. All 32 lanes must call it.
__device__ float warp_sum(float v) {
  for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

// Thread 0 ends up with the sum of the block's values. Every thread must call it, and
// the block must be a whole number of warps (the stage takes powers of two from 32).
__device__ float block_sum(float v) {
  __shared__ float warp_sums[1024 / kWarpSize];  // one per warp of the largest block
  const unsigned lane = threadIdx.x % kWarpSize;
  const unsigned warp = threadIdx.x / kWarpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {  // the whole first warp enters, so the full mask still holds
    v = lane < blockDim.x / kWarpSize ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
  }
  return v;
}

__global__ void grid_stride_sum_shuffle(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;

  float sum[kNumLoad] = {};
  for (; i + (kNumLoad - 1) * stride < n; i += kNumLoad * stride)
    for (int k = 0; k < kNumLoad; ++k) sum[k] += in[i + k * stride];
  // Fewer than kNumLoad elements are left for this thread: load them together too (a missing
  // one reads as 0), so that the last round costs one trip to memory, not one per element.
  float last[kNumLoad];
  for (int k = 0; k < kNumLoad; ++k) last[k] = i + k * stride < n ? in[i + k * stride] : 0.0f;
  for (int k = 0; k < kNumLoad; ++k) sum[k] += last[k];

  float thread_sum = 0.0f;
  for (int k = 0; k < kNumLoad; ++k) thread_sum += sum[k];
  const float total = block_sum(thread_sum);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const std::size_t threads = static_cast<std::size_t>(block);
  const int per_sm = blocks_per_sm(grid_stride_sum_shuffle, block);
  const std::size_t grid = resident_grid(per_sm, device.sm_count, n, threads * kNumLoad);

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = grid > 1 ? grid * sizeof(float) : 0;
  // As stage 07: per-thread chains, kNumLoad additions to combine the accumulators,
  // then a tree over the block (five shuffle levels, then one per doubling of the
  // warp count), and the same again in the one-block second pass.
  const std::size_t second = grid > 1 ? common::blocked_depth(grid, threads) + kNumLoad : 0;
  p.error_depth = common::blocked_depth(n, grid * threads) + kNumLoad + second;
  return p;
}

void launch(const StageArgs& a) {
  float* partials = a.grid > 1 ? static_cast<float*>(a.scratch) : a.out;
  grid_stride_sum_shuffle<<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, partials);
  CUDA_CHECK_LAUNCH();
  if (a.grid > 1) {
    grid_stride_sum_shuffle<<<1, a.block, 0, a.stream>>>(partials, a.grid, a.out);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_warp_shuffle() {
  Stage s;
  s.number = 8;
  s.id = "warp_shuffle";
  s.title = "warp shuffles";
  s.source = "reduction/08_warp_shuffle.cu";
  s.chapter = "chapters/08_warp_shuffles.md";
  s.blocks.preferred = 256;
  s.blocks.max = 1024;  // warp_sums holds one value per warp of a 1024-thread block
  s.deterministic = true;
  s.book_v100_ms = 0.264;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
