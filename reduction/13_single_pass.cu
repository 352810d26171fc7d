// Stage 13: a single pass: the last block to finish adds the partials.
//
// Idea: stage 12's second launch costs a launch latency (a few microseconds), which
// is most of the time below about 2^22 elements. Here every block writes its
// partial and takes a ticket from an atomic counter; the block that draws the last
// ticket adds the partials in index order, writes the sum and resets the counter.
// Each partial travels with the launch's tag in one 64-bit word, so no block waits
// on a __threadfence(): the last block reads each word until it carries the tag.
// One launch and nothing else enqueued (no memset: the scratch is zeroed once and
// every launch leaves it ready for the next). The kernel is single_pass/single_pass.cuh,
// generic over the value type and the operator; this stage is its float sum, with
// the block size chosen at run time among compiled sizes. Below block x 32 elements
// (2^14 for 512 threads) a second, simpler kernel takes over: one block, all loads
// issued at once, no ticket; on Hopper, up to 2^17, one thread-block cluster.
// Fixes: stage 12's second launch; stage 11's memset and its order-dependent
// atomics (this result is bitwise identical run to run for a given grid).
// Expect: faster than CUB at every n, most at 2^14-2^22 where CUB's two launches
// dominate; at 2^30 the DRAM bandwidth decides. In Nsight Systems: one kernel per
// sum. In Nsight Compute: dram__throughput close to its peak at large n.
// Chapter: chapters/12_beyond_the_book.md
#include "block_sizes.hpp"
#include "cuda_check.hpp"
#include "single_pass.cuh"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

using generic::Sum;

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  LaunchPlan p;
  p.grid = with_block_size(
      "13", block, [&](auto b) { return generic::grid_for<float, Sum, decltype(b)::value>(n, device.sm_count); });
  p.scratch_bytes = generic::scratch_bytes<float>(p.grid);
  p.zero_scratch_once = true;
  const std::size_t threads = static_cast<std::size_t>(p.grid) * static_cast<std::size_t>(block);
  const std::size_t b = static_cast<std::size_t>(block);
  if (p.grid == 1) {
    // The single-block kernel (grid_for gives one block only when it takes n): two
    // additions inside a float4, at most kSmallLoads in the thread's chain, a head and
    // a tail element, then the block's tree.
    p.error_depth = 2 + generic::kSmallLoads + 2 + common::tree_depth(b);
  } else {
    // A thread's chunk share can exceed n / threads by up to kUnroll vectors.
    p.error_depth = common::blocked_depth(n, threads) + 5 * generic::kDefaultUnroll + 2 + common::tree_depth(b) +
                    (p.grid + b - 1) / b + common::tree_depth(b);
  }
  return p;
}

void launch(const StageArgs& a) {
  with_block_size("13", a.block, [&](auto b) {
    generic::launch<float, Sum, decltype(b)::value>(a.in, a.n, a.out, a.scratch, a.grid, a.stream);
  });
}

}  // namespace

Stage describe_single_pass() {
  Stage s;
  s.number = 13;
  s.id = "single_pass";
  s.title = "single pass, last block";
  s.source = "reduction/13_single_pass.cu";
  s.chapter = "chapters/12_beyond_the_book.md";
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
