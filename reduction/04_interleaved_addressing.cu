// Stage 04: interleaved addressing.
//
// Idea: keep the tree of stages 02-03 but choose the working threads differently. At
// each level, thread `tid` adds the pair that starts at index 2 * stride * tid, so the
// working threads are always the lowest-numbered ones: a warp has all its lanes at
// work or none for as long as the level has 32 or more pairs.
// Fixes: the scattered working threads of stages 02-03, which made every warp send
// its shared-memory accesses at every level: here only the warps with working lanes
// do. The `if` is still predicated, not a branch, so the idle warps issue the loads,
// add and store with every lane switched off: they skip no instruction.
// Still wrong with it: the shared-memory addresses of one warp are 2 * stride floats
// apart, so they fall into the same few of the 32 banks: a 2-way bank conflict at
// stride 1, 4-way at stride 2, and up to 32-way later. The accesses are serialised
// (stage 05 makes them contiguous).
// Expect: no faster than 03 (the book saw it slower too): the conflicts give back the
// passes through shared memory that packing the work into fewer warps saved, and the
// index costs a multiply (14 instructions a level against 03's 12). In
// Nsight Compute, shared-memory wavefronts above their ideal
// (smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum against _ideal.sum; the
// chapter counts both per block) and a jump in the bank-conflict counter
// (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum), whose floor from other
// L1 traffic is not zero even for stages that cannot conflict.
// Chapter: chapters/03_divergence_and_addressing.md
#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

__global__ void block_sum_interleaved(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  extern __shared__ float partial[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();

  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    // At most 2 * 512 * 1023 for a block of 1024: no overflow. blockDim.x is a power
    // of two, so index < blockDim.x also keeps index + stride inside the block.
    const unsigned index = 2 * stride * tid;
    if (index < blockDim.x) partial[index] += partial[index + stride];
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
    block_sum_interleaved<<<p.blocks, a.block, shared_bytes, a.stream>>>(p.src, p.m, p.dst);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_interleaved_addressing() {
  Stage s;
  s.number = 4;
  s.id = "interleaved_addressing";
  s.title = "interleaved addressing";
  s.source = "reduction/04_interleaved_addressing.cu";
  s.chapter = "chapters/03_divergence_and_addressing.md";
  s.blocks.preferred = 256;
  s.max_n = std::size_t{0x7FFFFFFF} * 32;  // grid.x limit at the smallest block
  s.deterministic = true;
  s.book_v100_ms = 0.446;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
