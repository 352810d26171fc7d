// Stage 03: the same block reduction with `&` in place of `%`.
//
// Idea: the stride is a power of two, so `tid % (2 * stride) == 0` is the same test
// as `(tid & (2 * stride - 1)) == 0`: one AND instead of an integer division.
// Fixes: stage 02's modulo, which compiles to a long sequence of instructions per
// level on a GPU (there is no hardware integer divide).
// Still wrong with it: the same scattered working threads, so at every level every
// warp with a working lane sends its shared-memory loads and store: 95 warp loads a
// block of 256 where 25 would do (stages 04 and 05 pack the working threads).
// Expect: faster than 02 by the instructions saved (12 a level instead of 28); in
// Nsight Compute, fewer executed instructions (smsp__inst_executed.sum) for the same
// work.
// Chapter: chapters/03_divergence_and_addressing.md
#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

__global__ void block_sum_bitwise_and(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  extern __shared__ float partial[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();

  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if ((tid & (2 * stride - 1)) == 0) partial[tid] += partial[tid + stride];
    __syncthreads();
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
    block_sum_bitwise_and<<<p.blocks, a.block, shared_bytes, a.stream>>>(p.src, p.m, p.dst);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_bitwise_and() {
  Stage s;
  s.number = 3;
  s.id = "bitwise_and";
  s.title = "shared memory, & test";
  s.source = "reduction/03_bitwise_and.cu";
  s.chapter = "chapters/03_divergence_and_addressing.md";
  s.blocks.preferred = 256;
  s.max_n = std::size_t{0x7FFFFFFF} * 32;
  s.deterministic = true;
  s.book_v100_ms = 0.399;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
