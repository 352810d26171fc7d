// Stage 07: several independent loads in flight per thread (NUM_LOAD = 4).
//
// Idea: in stage 06 every addition waits for the load before it, and each thread
// has one load outstanding at a time. Here a thread issues kNumLoad = 4 loads, a
// grid stride apart, into four separate accumulators, so the four loads do not
// depend on each other and are in flight together. The four accumulators are
// combined only at the end.
// Fixes: stage 06's latency-bound loop. Little's law: to keep the DRAM busy, the
// bytes in flight must equal the bandwidth times the latency; four loads per thread
// give four times the bytes in flight with the same number of resident threads.
// Bounds: the unguarded loop runs while all four loads are in range; the last round,
// fewer than four elements, is four guarded loads (a missing one reads as 0) issued
// together as well, so it costs one trip to memory, not one per element. Any n works
// (n < one block, n not a multiple of anything). The grid is capped at one block per
// kNumLoad x block elements, so small inputs do not launch blocks with nothing to load.
// Expect: a clear gain over 06 at large n, where more bytes in flight matter most (the
// chapter has the numbers, and the book's); in Nsight Compute, higher DRAM throughput
// (dram__throughput.avg.pct_of_peak_sustained_elapsed). The share of warps stalled
// waiting on memory (smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active
// .ratio) barely moves: a warp still waits at its first add, now for four loads at once.
// Chapter: chapters/06_grid_stride_and_loads_in_flight.md
#include <algorithm>

#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

constexpr int kNumLoad = 4;

__global__ void grid_stride_sum_four_loads(const float* __restrict__ in, std::size_t n,
                                           float* __restrict__ block_sums) {
  extern __shared__ float partial[];
  const unsigned tid = threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + tid;

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
  partial[tid] = thread_sum;
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) block_sums[blockIdx.x] = partial[0];
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const std::size_t threads = static_cast<std::size_t>(block);
  const int per_sm = blocks_per_sm(grid_stride_sum_four_loads, block, threads * sizeof(float));
  const std::size_t grid = resident_grid(per_sm, device.sm_count, n, threads * kNumLoad);

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = grid > 1 ? grid * sizeof(float) : 0;
  // Each accumulator adds at most ceil(n / (grid x block)) elements; combining the four
  // adds kNumLoad more additions; then the block tree. The second pass (one block
  // over the grid partial sums) has the same shape.
  const std::size_t second = grid > 1 ? common::blocked_depth(grid, threads) + kNumLoad : 0;
  p.error_depth = common::blocked_depth(n, grid * threads) + kNumLoad + second;
  return p;
}

void launch(const StageArgs& a) {
  const std::size_t shared_bytes = static_cast<std::size_t>(a.block) * sizeof(float);
  float* partials = a.grid > 1 ? static_cast<float*>(a.scratch) : a.out;
  grid_stride_sum_four_loads<<<a.grid, a.block, shared_bytes, a.stream>>>(a.in, a.n, partials);
  CUDA_CHECK_LAUNCH();
  if (a.grid > 1) {
    grid_stride_sum_four_loads<<<1, a.block, shared_bytes, a.stream>>>(partials, a.grid, a.out);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_loads_in_flight() {
  Stage s;
  s.number = 7;
  s.id = "loads_in_flight";
  s.title = "4 loads in flight";
  s.source = "reduction/07_loads_in_flight.cu";
  s.chapter = "chapters/06_grid_stride_and_loads_in_flight.md";
  s.blocks.preferred = 256;
  s.deterministic = true;
  s.book_v100_ms = 0.264;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
