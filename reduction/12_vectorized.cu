// Stage 12: 16-byte loads and many bytes in flight.
//
// Idea: a memory-bound kernel is fast when enough bytes are on their way from DRAM
// at every moment (Little's law: bandwidth x the latency under load that chapter 00a
// measures, a few MB across the GPU). Each thread reads float4 vectors (one 16-byte load
// instead of four 4-byte ones) and issues kUnroll of them before adding any, into
// kUnroll independent accumulators. The grid is the number of blocks that fit on
// the GPU at once (occupancy x SMs), asked from the device at run time, never
// more than the work needs. A scalar head up to the first 16-byte boundary and a
// scalar tail make any n and any start address correct; the last round (fewer than
// kUnroll float4s left) is issued together too, as in stage 07. A second, one-block
// launch adds the per-block partials (as CUB does).
// Fixes: stages 06-11 use 4-byte loads and few loads in flight per thread, so they
// stop short of the DRAM bandwidth at large n.
// Expect: close to CUB at large n; two launches cost a few microseconds at small n.
// In Nsight Compute: dram__throughput near its peak, LDG.E.128 in the SASS, and a
// lower long-scoreboard stall share than stage 11.
// Chapter: chapters/12_vector_loads.md
#include <cstdint>

#include "cuda_check.hpp"
#include "passes.hpp"
#include "primitives.cuh"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

constexpr int kUnroll = 4;

__global__ void vectorized_partials(const float* __restrict__ in, std::size_t n, float* __restrict__ partials) {
  const Float4Split split(in, n);  // a scalar head, float4s, a scalar tail (primitives.cuh)
  const std::size_t head = split.head;
  const std::size_t vectors = split.vectors;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  const std::size_t tail_begin = split.tail_begin();

  const std::size_t thread = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float acc[kUnroll] = {};
  std::size_t i = thread;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(body + i + u * stride);  // all loads issued first
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  {  // fewer than kUnroll float4s are left for this thread: loaded together too
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      v[u] = i + u * stride < vectors ? __ldg(body + i + u * stride) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  if (thread < head) acc[0] += in[thread];
  if (thread < n - tail_begin) acc[0] += in[tail_begin + thread];

  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) sum += acc[u];
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void sum_partials(const float* __restrict__ partials, unsigned count, float* __restrict__ out) {
  float sum = 0.0f;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) *out = sum;
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const int per_sm = blocks_per_sm(vectorized_partials, block);
  // One wave; a block takes block x kUnroll float4s per step of the grid.
  const std::size_t per_block = static_cast<std::size_t>(block) * kUnroll * 4;
  LaunchPlan p;
  p.grid = static_cast<unsigned>(resident_grid(per_sm, device.sm_count, n, per_block));
  p.scratch_bytes = p.grid * sizeof(float);
  const std::size_t threads = static_cast<std::size_t>(p.grid) * static_cast<std::size_t>(block);
  // Per thread: its share of the input (plus head/tail and the kUnroll accumulators),
  // then the block tree, then the second pass (a per-thread share and a block tree).
  p.error_depth =
      common::blocked_depth(n, threads) + kUnroll + 2 + common::tree_depth(static_cast<std::size_t>(block)) +
      ceil_div(p.grid, static_cast<std::size_t>(block)) + common::tree_depth(static_cast<std::size_t>(block));
  return p;
}

void launch(const StageArgs& a) {
  auto* partials = static_cast<float*>(a.scratch);
  vectorized_partials<<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, partials);
  CUDA_CHECK_LAUNCH();
  sum_partials<<<1, a.block, 0, a.stream>>>(partials, a.grid, a.out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_vectorized() {
  Stage s;
  s.number = 12;
  s.id = "vectorized";
  s.title = "float4 loads, 4 in flight";
  s.source = "reduction/12_vectorized.cu";
  s.chapter = "chapters/12_vector_loads.md";
  s.blocks.preferred = 256;
  s.deterministic = true;
  s.single_launch = false;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
