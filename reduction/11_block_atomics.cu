// Stage 11: one atomicAdd per block instead of a second launch.
//
// Idea: stage 10's kernel, except that each block adds its sum straight into the
// output with one atomicAdd instead of writing a partial sum for a second launch to
// reduce. With a grid of a few thousand blocks at most, a few thousand atomics to
// one address are cheap, unlike one per element (the atomic_per_element baseline).
// The output must start at zero: the launcher zeroes it with cudaMemsetAsync on the
// same stream before the kernel, inside the timed region. The book's version never
// zeroed it (erratum 7 in chapters/23_why_our_numbers_differ.md), so its result
// carried whatever the output held.
// Fixes: stage 10's second launch and its scratch array. The price: the order in
// which the blocks' atomics land changes from run to run, so the float result is
// not bitwise reproducible (the stage says so: deterministic = false), and the
// memset is still a second operation on the stream.
// Expect: a small gain at large n (as in the book), more at small n where the second
// launch was a larger share. Nsight Compute (or Nsight Systems) shows one kernel per
// sum instead of two; its gpu__time_duration.sum is about that of stage 10's first
// kernel alone.
// Chapter: chapters/11_atomics_and_baselines.md
#include <algorithm>

#include "block_sizes.hpp"
#include "passes.hpp"
#include "primitives.cuh"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

constexpr int kLoads = 4;  // stage 10's

// Stage 10's kernel up to the block's sum (its two parts are in primitives.cuh); then
// one atomic per block instead of a store for a second launch.
template <unsigned kBlock>
__global__ void __launch_bounds__(kBlock) atomic_block_sum(const float* __restrict__ in, std::size_t n, float* out) {
  const float v = tile_block_sum<kBlock>(unrolled_thread_sum<kBlock, kLoads>(in, n));
  if (threadIdx.x == 0) atomicAdd(out, v);  // one atomic per block
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const std::size_t threads = static_cast<std::size_t>(block);
  const int per_sm =
      with_block_size("11", block, [&](auto b) { return blocks_per_sm(atomic_block_sum<decltype(b)::value>, block); });
  const std::size_t grid = resident_grid(per_sm, device.sm_count, n, threads * kLoads);

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  // As stage 10 up to the block sums; then the atomics form one running sum over the
  // grid's block sums, in an order that changes from run to run.
  p.error_depth = common::blocked_depth(n, grid * threads) + kLoads + common::sequential_depth(grid);
  return p;
}

void launch(const StageArgs& a) {
  CUDA_CHECK(cudaMemsetAsync(a.out, 0, sizeof(float), a.stream));  // the atomics add into it
  with_block_size("11", a.block, [&](auto b) {
    constexpr unsigned kBlock = decltype(b)::value;
    atomic_block_sum<kBlock><<<a.grid, kBlock, 0, a.stream>>>(a.in, a.n, a.out);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

Stage describe_block_atomics() {
  Stage s;
  s.number = 11;
  s.id = "block_atomics";
  s.title = "one atomicAdd per block";
  s.source = "reduction/11_block_atomics.cu";
  s.chapter = "chapters/11_atomics_and_baselines.md";
  s.blocks.preferred = 256;
  s.blocks.max = 1024;      // one kernel instantiation per power of two up to 1024
  s.deterministic = false;  // the atomics' order varies
  s.single_launch = false;  // a memset and a kernel
  s.book_v100_ms = 0.259;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
