// Baseline: NVIDIA CUB's cub::DeviceReduce::Sum, the library call a reader would
// use instead of writing a reduction. Its temporary storage is sized by the planner
// and allocated by the runner, outside the timed region.
// Chapter: chapters/11_atomics_and_baselines.md
#include <cub/device/device_reduce.cuh>

#include <cstdint>

#include "cuda_check.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

LaunchPlan plan(std::size_t n, int /*block*/, const common::DeviceInfo& /*device*/) {
  LaunchPlan p;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, p.scratch_bytes, static_cast<const float*>(nullptr),
                                    static_cast<float*>(nullptr), static_cast<std::int64_t>(n)));
  // CUB does not document its summation order. Each thread first adds its share of
  // the input, then trees combine the threads and the blocks; bounding it as if a
  // single block of 128 threads did all the work over-estimates the depth.
  p.error_depth = common::blocked_depth(n, 128) + 16;
  return p;
}

void launch(const StageArgs& a) {
  std::size_t bytes = a.scratch_bytes;
  CUDA_CHECK(cub::DeviceReduce::Sum(a.scratch, bytes, a.in, a.out, static_cast<std::int64_t>(a.n), a.stream));
}

}  // namespace

Stage describe_cub() {
  Stage s;
  s.kind = Kind::baseline;
  s.id = "cub";
  s.title = "CUB DeviceReduce::Sum";
  s.source = "reduction/baselines/cub_sum.cu";
  s.chapter = "chapters/11_atomics_and_baselines.md";
  s.blocks.configurable = false;
  s.deterministic = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
