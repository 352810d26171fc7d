// Baseline: one GPU thread adds every element in order (the first of the three
// strategies in Intel's oneAPI GPU optimisation guide, "local barriers vs global
// atomics"). It shows what a GPU is without parallelism: one thread can keep only a
// few dozen loads in flight, so it runs at a tiny fraction of the bandwidth.
// The loads of a chunk are issued together before the chunk is added in order, so
// the result is exactly the left-to-right float sum.
// Chapter: chapters/11_atomics_and_baselines.md
#include "cuda_check.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

constexpr int kChunk = 64;

__global__ void sum_in_one_thread(const float* __restrict__ in, std::size_t n, float* __restrict__ out) {
  float sum = 0.0f;
  std::size_t i = 0;
  for (; i + kChunk <= n; i += kChunk) {
    float chunk[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) chunk[k] = in[i + k];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) sum += chunk[k];
  }
  for (; i < n; ++i) sum += in[i];
  *out = sum;
}

LaunchPlan plan(std::size_t n, int /*block*/, const common::DeviceInfo& /*device*/) {
  LaunchPlan p;
  p.grid = 1;
  p.error_depth = common::sequential_depth(n);
  return p;
}

void launch(const StageArgs& a) {
  sum_in_one_thread<<<1, 1, 0, a.stream>>>(a.in, a.n, a.out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_one_thread() {
  Stage s;
  s.kind = Kind::baseline;
  s.id = "one_thread";
  s.title = "one thread, in order";
  s.source = "reduction/baselines/one_thread.cu";
  s.chapter = "chapters/11_atomics_and_baselines.md";
  s.blocks.configurable = false;
  s.deterministic = true;
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
