// Baseline: thrust::reduce, as a user calls it.
//
// thrust::reduce returns the sum to the host, so unlike every other row this one
// includes what that costs: thrust's own temporary allocation, a device-to-host copy,
// a synchronisation, and our copy of the value back into `out`.
// Chapter: chapters/11_atomics_and_baselines.md
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include "cuda_check.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

LaunchPlan plan(std::size_t n, int /*block*/, const common::DeviceInfo& /*device*/) {
  LaunchPlan p;
  p.error_depth = common::blocked_depth(n, 128) + 16;  // thrust calls CUB: same bound
  return p;
}

void launch(const StageArgs& a) {
  const float sum = thrust::reduce(thrust::cuda::par.on(a.stream), a.in, a.in + a.n, 0.0f);
  CUDA_CHECK(cudaMemcpyAsync(a.out, &sum, sizeof sum, cudaMemcpyHostToDevice, a.stream));
  // `sum` lives on this stack frame: the copy must finish before it goes away.
  CUDA_CHECK(cudaStreamSynchronize(a.stream));
}

}  // namespace

Stage describe_thrust() {
  Stage s;
  s.kind = Kind::baseline;
  s.id = "thrust";
  s.title = "thrust::reduce (to host)";
  s.source = "reduction/baselines/thrust_reduce.cu";
  s.chapter = "chapters/11_atomics_and_baselines.md";
  s.blocks.configurable = false;
  s.deterministic = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
