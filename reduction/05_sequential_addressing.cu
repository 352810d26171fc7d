// Stage 05: sequential addressing.
//
// Idea: run the tree the other way round. The stride starts at half the block and
// halves at each level, and thread `tid` (for tid < stride) adds element
// tid + stride into element tid. The active threads are still the lowest-numbered
// ones, and now a warp reads and writes 32 consecutive floats: one per bank.
// Fixes: stage 04's bank conflicts, and keeps its few shared-memory accesses: the
// working threads are still the lowest-numbered, and a warp's lanes are only partly
// at work once fewer than 32 pairs are left. The loop is also the shortest (10
// instructions a level; the `if` is predicated, as in stages 02-04).
// Still wrong with it: every thread loads one element and half of them go idle at
// the first level; a block does little work for its launch and its barriers, and the
// block sums need further launches (stage 06 gives each thread many elements).
// Expect: faster than 03 and 04; in Nsight Compute, shared-memory wavefronts equal to
// their ideal again (smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum against
// _ideal.sum), and the bank-conflict counter
// (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum) back at its floor, which
// is not zero (chapter 03 explains what it counts).
// Chapter: chapters/03_divergence_and_addressing.md
#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

__global__ void block_sum_sequential(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  extern __shared__ float partial[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();

  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    // Reads come from [stride, 2 * stride), writes go to [0, stride): within one
    // level no thread reads what another writes.
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();  // outside the if: every thread of the block reaches it
  }
  if (tid == 0) block_sums[blockIdx.x] = partial[0];
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& /*device*/) {
  LaunchPlan p;
  p.scratch_bytes = multi_pass_scratch_bytes(n, static_cast<std::size_t>(block));
  p.error_depth = multi_pass_depth(n, static_cast<std::size_t>(block));
  return p;
}

void launch(const StageArgs& a) {
  const std::size_t shared_bytes = static_cast<std::size_t>(a.block) * sizeof(float);
  for (const Pass& p : Passes(a, static_cast<std::size_t>(a.block))) {
    block_sum_sequential<<<p.blocks, a.block, shared_bytes, a.stream>>>(p.src, p.m, p.dst);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_sequential_addressing() {
  Stage s;
  s.number = 5;
  s.id = "sequential_addressing";
  s.title = "sequential addressing";
  s.source = "reduction/05_sequential_addressing.cu";
  s.chapter = "chapters/03_divergence_and_addressing.md";
  s.blocks.preferred = 256;
  s.max_n = std::size_t{0x7FFFFFFF} * 32;  // grid.x limit at the smallest block
  s.deterministic = true;
  s.book_v100_ms = 0.378;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
