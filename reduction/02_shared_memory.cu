// Stage 02: block reduction in shared memory.
//
// Idea: each block copies its slice of the input into shared memory once and builds
// the whole tree there, with __syncthreads() between levels; only one value per
// block goes back to global memory. The block sums are reduced the same way by
// further passes until one value is left.
// Fixes: stage 01's round trip to DRAM and its kernel launch per level. Global
// traffic drops to about n x 4 bytes plus the small block-sum arrays.
// Still wrong with it: the working threads are picked with `tid % (2 * stride) == 0`,
// and the modulo compiles to 17 instructions of each level's 28 (there is no integer
// divide instruction; stage 03 removes it). The working threads are scattered over
// every warp. The `if` is predicated, not a branch: every warp issues each level's
// loads, add and store, with the lanes whose test is false switched off.
// Expect: on a fast GPU not faster than 01, whose halving grid moves only 3n floats
// (the chapter works it out). In Nsight Compute, many executed instructions per
// element (smsp__inst_executed.sum) and a low DRAM throughput. Branch uniformity
// (smsp__sass_average_branch_targets_threads_uniform.pct) stays at 100 %: a
// predicated instruction is not a branch (the SASS is in
// results/h200/sass_stages_02_05.txt).
// Chapter: chapters/02_shared_memory.md
#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

__global__ void block_sum_modulo(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  extern __shared__ float partial[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();

  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if (tid % (2 * stride) == 0) partial[tid] += partial[tid + stride];
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
    block_sum_modulo<<<p.blocks, a.block, shared_bytes, a.stream>>>(p.src, p.m, p.dst);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_shared_memory() {
  Stage s;
  s.number = 2;
  s.id = "shared_memory";
  s.title = "shared memory, % test";
  s.source = "reduction/02_shared_memory.cu";
  s.chapter = "chapters/02_shared_memory.md";
  s.blocks.preferred = 256;
  s.max_n = std::size_t{0x7FFFFFFF} * 32;  // grid.x limit at the smallest block
  s.deterministic = true;
  s.book_v100_ms = 0.624;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
