// Stage 06: a grid-stride loop, and at most two launches.
//
// Idea: launch only as many blocks as the GPU can keep resident at once (the
// occupancy API's blocks per SM times the number of SMs) and let every thread walk
// the array with a stride of the whole grid, adding into a register. Each block then
// reduces its threads' sums with stage 05's tree and writes one partial sum. A
// second launch of the same kernel, with a single block, reduces those partial sums
// (the book's code once passed this launch the input pointer instead: erratum 2 in
// chapters/23_why_our_numbers_differ.md).
// Fixes: stage 05's one element per thread and its chain of launches. Most of the
// work becomes a plain streaming read; the shared-memory tree runs once per block
// instead of once per block-sized slice of the input, and there are always two
// launches, whatever n is (one when a single block is enough).
// Expect: a large step towards the bandwidth limit at large n; in Nsight Compute,
// DRAM throughput (dram__throughput.avg.pct_of_peak_sustained_elapsed) rises and
// the executed instructions per element (smsp__inst_executed.sum / n) fall.
// The grid is sized in plan(), outside the timed region, and reaches the launcher
// through StageArgs::grid.
// Chapter: chapters/06_grid_stride_and_loads_in_flight.md
#include <algorithm>

#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

__global__ void grid_stride_sum(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  extern __shared__ float partial[];
  const unsigned tid = threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float sum = 0.0f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + tid; i < n; i += stride) sum += in[i];
  partial[tid] = sum;
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) block_sums[blockIdx.x] = partial[0];
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const std::size_t threads = static_cast<std::size_t>(block);
  const int per_sm = blocks_per_sm(grid_stride_sum, block, threads * sizeof(float));
  // One wave, but no more blocks than there are block-sized slices of the input.
  const std::size_t grid = resident_grid(per_sm, device.sm_count, n, threads);

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = grid > 1 ? grid * sizeof(float) : 0;
  // First pass: each of grid x block threads adds its share, then a tree per block
  // (blocked_depth's tree over all the threads covers it). Second pass: one block
  // does the same over the grid partial sums.
  p.error_depth = common::blocked_depth(n, grid * threads) + (grid > 1 ? common::blocked_depth(grid, threads) : 0);
  return p;
}

void launch(const StageArgs& a) {
  const std::size_t shared_bytes = static_cast<std::size_t>(a.block) * sizeof(float);
  float* partials = a.grid > 1 ? static_cast<float*>(a.scratch) : a.out;
  grid_stride_sum<<<a.grid, a.block, shared_bytes, a.stream>>>(a.in, a.n, partials);
  CUDA_CHECK_LAUNCH();
  if (a.grid > 1) {
    grid_stride_sum<<<1, a.block, shared_bytes, a.stream>>>(partials, a.grid, a.out);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_grid_stride() {
  Stage s;
  s.number = 6;
  s.id = "grid_stride";
  s.title = "grid-stride loop";
  s.source = "reduction/06_grid_stride.cu";
  s.chapter = "chapters/06_grid_stride_and_loads_in_flight.md";
  s.blocks.preferred = 256;
  s.deterministic = true;  // the grid depends only on (n, block, device)
  s.book_v100_ms = 0.278;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
