// Baseline: every element is atomicAdd-ed into one float (the second oneAPI-guide
// strategy, and the book's section on atomics). All atomics to one address are
// serialised in the L2 cache, so the time grows with n at one add per L2 cycle or
// so, whatever the parallelism. The order of the additions changes run to run.
// Chapter: chapters/11_atomics_and_baselines.md
#include <algorithm>

#include "cuda_check.hpp"
#include "passes.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

__global__ void add_each_atomically(const float* __restrict__ in, std::size_t n, float* out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    atomicAdd(out, in[i]);
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  LaunchPlan p;
  const std::size_t enough = static_cast<std::size_t>(device.sm_count) * 16;  // full occupancy, at most
  p.grid = static_cast<unsigned>(std::min(ceil_div(n, static_cast<std::size_t>(block)), enough));
  p.error_depth = common::sequential_depth(n);
  return p;
}

void launch(const StageArgs& a) {
  CUDA_CHECK(cudaMemsetAsync(a.out, 0, sizeof(float), a.stream));
  add_each_atomically<<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, a.out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_atomic_per_element() {
  Stage s;
  s.kind = Kind::baseline;
  s.id = "atomic_per_element";
  s.title = "one atomicAdd per element";
  s.source = "reduction/baselines/atomic_per_element.cu";
  s.chapter = "chapters/11_atomics_and_baselines.md";
  s.blocks.preferred = 256;
  s.deterministic = false;
  s.book_v100_ms = 39.0;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
