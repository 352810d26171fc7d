// Baseline: the project's generic library, single_pass/single_pass.cuh, as a client calls
// it for a float sum: grid_for picks the path and the grid (one block, one cluster on
// Hopper, or the tagged ticket), launch enqueues its one kernel. The ticket path's scratch
// is the plan's (zeroed once, left ready by every launch), so the launcher allocates
// nothing: launch() takes caller-provided memory, which is what reduce() passes from a
// Workspace. The runner runs it on one stream at a time, the library's rule for a scratch
// area. Its table against CUB is in single_pass/README.md.
// Chapter: single_pass/README.md
#include "cuda_check.hpp"
#include "single_pass.cuh"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

namespace sp = generic;

LaunchPlan plan(std::size_t n, int /*block*/, const common::DeviceInfo& device) {
  LaunchPlan p;
  p.grid = sp::grid_for<float, sp::Sum>(n, device.sm_count);
  p.scratch_bytes = sp::scratch_bytes<float>(p.grid);
  p.zero_scratch_once = true;
  // Each thread's chain over its share, the unroll's accumulators and a float4, a head and
  // a tail element, the block's tree, then the last block's (or block 0's) combine of the
  // partials and its tree: the same loads and trees as stage 14.
  const std::size_t b = sp::kDefaultBlock;
  p.error_depth = common::blocked_depth(n, p.grid * b) + 5 * sp::kDefaultUnroll + 2 + common::tree_depth(b) +
                  (p.grid + b - 1) / b + common::tree_depth(b);
  return p;
}

void launch(const StageArgs& a) { sp::launch<float, sp::Sum>(a.in, a.n, a.out, a.scratch, a.grid, a.stream); }

}  // namespace

Stage describe_single_pass_library() {
  Stage s;
  s.kind = Kind::baseline;
  s.id = "library";
  s.title = "single_pass library";
  s.source = "reduction/baselines/single_pass_library.cu";
  s.chapter = "single_pass/README.md";
  s.blocks.configurable = false;
  s.deterministic = true;
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
