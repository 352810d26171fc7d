// Baseline: one block does everything (the third oneAPI-guide strategy): each thread
// adds a strided subset of the input, then a barrier tree in shared memory combines
// the threads. Its speed is set by Little's law, not by the SM: every thread has one
// 4-byte load in flight, so the block keeps block x 4 bytes in flight, and that
// divided by the DRAM latency is all the bandwidth it can get (chapter 11 works it out).
// Chapter: chapters/11_atomics_and_baselines.md
#include "cuda_check.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

__global__ void sum_in_one_block(const float* __restrict__ in, std::size_t n, float* __restrict__ out) {
  extern __shared__ float partial[];
  const unsigned tid = threadIdx.x;
  float sum = 0.0f;
  for (std::size_t i = tid; i < n; i += blockDim.x) sum += in[i];
  partial[tid] = sum;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0) *out = partial[0];
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& /*device*/) {
  LaunchPlan p;
  p.grid = 1;
  p.error_depth = common::blocked_depth(n, static_cast<std::size_t>(block));
  return p;
}

void launch(const StageArgs& a) {
  sum_in_one_block<<<1, a.block, static_cast<std::size_t>(a.block) * sizeof(float), a.stream>>>(a.in, a.n, a.out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_one_block() {
  Stage s;
  s.kind = Kind::baseline;
  s.id = "one_block";
  s.title = "one block, barrier tree";
  s.source = "reduction/baselines/one_block.cu";
  s.chapter = "chapters/11_atomics_and_baselines.md";
  s.blocks.preferred = 1024;
  s.deterministic = true;
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
