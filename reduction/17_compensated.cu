// Stage 17: a compensated sum (Neumaier) at full bandwidth.
//
// Idea: keep the rounding error of every addition instead of dropping it. Each thread
// carries a pair (s, c): s is the ordinary float sum, c collects the rounding errors of
// the additions into s. Adding x is Neumaier's step
//     t = s + x;  c += |s| >= |x| ? (s - t) + x : (x - t) + s;  s = t;
// where the added term is exactly the error of s + x (Dekker's Fast2Sum). Two pairs
// combine with Knuth's TwoSum, t + e == a.s + b.s exactly, and (t, (a.c + b.c) + e).
// Pairs meet in a shuffle tree per warp and per block; the last block (stage 13's
// __threadfence() and ticket) combines the blocks' pairs in a fixed order and writes
// s + c, rounded once. Four pairs per thread (one per float4 component) keep four
// dependency chains side by side, with eight float4 loads in flight.
// Fixes: every earlier stage rounds once per addition, so its error grows with the
// depth of its order; on inputs that cancel that is many units in the last place of
// the result. Here the error is one final rounding plus a term of second order in u.
// Error bound: derived in chapters/17_compensated.md; plan() computes it. The error-free
// transforms need every + and - evaluated as written, in float, without flushing
// subnormals: nvcc's default (no --use_fast_math, which this project never passes).
// NaN and infinities: when s is not finite the result is s itself, as in plain summation.
// Expect: a relative error at or below one unit in the last place on cancelling input,
// at near the vectorised stages' time; in Nsight Compute, several times stage 12's
// executed instructions at about the same dram__throughput.
// Chapter: chapters/17_compensated.md
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cuda_check.hpp"
#include "passes.hpp"
#include "primitives.cuh"
#include "stage.hpp"

namespace reduction {
namespace {

constexpr int kLoads = 8;  // float4 loads in flight per thread
constexpr int kWarp = 32;
constexpr int kMaxBlock = 1024;
constexpr std::size_t kTicketBytes = 256;  // the ticket, padded so the partial pairs stay aligned

// value = s + c; s alone is the plain float sum of what the pair holds.
struct Pair {
  float s;
  float c;
};

__device__ __forceinline__ void neumaier_add(Pair& p, float x) {
  const float t = p.s + x;
  const bool s_larger = fabsf(p.s) >= fabsf(x);
  const float larger = s_larger ? p.s : x;
  const float smaller = s_larger ? x : p.s;
  p.c += (larger - t) + smaller;  // exactly (p.s + x) - t
  p.s = t;
}

__device__ __forceinline__ Pair combine(Pair a, Pair b) {
  const float t = a.s + b.s;
  const float z = t - a.s;
  const float e = (a.s - (t - z)) + (b.s - z);  // TwoSum: t + e == a.s + b.s exactly
  return {t, (a.c + b.c) + e};
}

__device__ __forceinline__ Pair warp_combine(Pair p) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    const Pair other = {__shfl_down_sync(0xffffffffu, p.s, offset), __shfl_down_sync(0xffffffffu, p.c, offset)};
    p = combine(p, other);
  }
  return p;
}

// The block's pairs combined in a fixed tree; the result is valid in thread 0.
__device__ Pair block_combine(Pair p, Pair* warp_pairs) {
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  p = warp_combine(p);
  if (lane == 0) warp_pairs[warp] = p;
  __syncthreads();
  Pair r = {0.0f, 0.0f};
  if (warp == 0) {
    if (lane < blockDim.x / kWarp) r = warp_pairs[lane];
    r = warp_combine(r);  // adding (0, 0) is exact
  }
  return r;
}

__device__ __forceinline__ void add4(Pair (&acc)[4], float4 v) {
  neumaier_add(acc[0], v.x);
  neumaier_add(acc[1], v.y);
  neumaier_add(acc[2], v.z);
  neumaier_add(acc[3], v.w);
}

struct Scratch {
  unsigned* ticket;
  float2* block_pairs;  // grid pairs (s, c)
};

Scratch carve_scratch(void* base) {
  auto* bytes = static_cast<unsigned char*>(base);
  return {reinterpret_cast<unsigned*>(bytes), reinterpret_cast<float2*>(bytes + kTicketBytes)};
}

// `head` elements come before the first 16-byte boundary; the float4 body follows,
// then fewer than four tail elements.
__global__ void __launch_bounds__(kMaxBlock)
    compensated_sum(const float* __restrict__ in, std::size_t n, std::size_t head, Scratch scratch, float* out) {
  __shared__ Pair warp_pairs[kMaxBlock / kWarp];
  __shared__ bool is_last;

  const std::size_t n4 = (n - head) / 4;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  const std::size_t tail_start = head + 4 * n4;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t g = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;

  Pair acc[4] = {{0.0f, 0.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}};
  std::size_t i = g;
  for (; i + (kLoads - 1) * threads < n4; i += kLoads * threads) {
    float4 v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) v[k] = __ldg(body + i + k * threads);  // all in flight
#pragma unroll
    for (int k = 0; k < kLoads; ++k) add4(acc, v[k]);
  }
  for (; i < n4; i += threads) add4(acc, __ldg(body + i));  // fewer than kLoads left
  if (g < head) neumaier_add(acc[0], in[g]);
  if (g < n - tail_start) neumaier_add(acc[0], in[tail_start + g]);

  Pair p = block_combine(combine(combine(acc[0], acc[1]), combine(acc[2], acc[3])), warp_pairs);
  if (threadIdx.x == 0) scratch.block_pairs[blockIdx.x] = make_float2(p.s, p.c);

  // Publish the block's pair and take a ticket; the last block combines them all. The
  // fences are stage 13's, in the thread that takes the ticket (chapter 13).
  if (threadIdx.x == 0) {
    __threadfence();  // release: the pair is visible device-wide before the ticket
    is_last = atomicAdd(scratch.ticket, 1u) == gridDim.x - 1;
    if (is_last) __threadfence();  // acquire: the reads below come after the last ticket
  }
  __syncthreads();
  if (!is_last) return;

  // Thread t combines the pairs of blocks t, t + blockDim.x, ... in that order, then
  // the block's tree: the same order every time for a given grid and block size.
  Pair q = {0.0f, 0.0f};
  for (std::size_t b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    const float2 v = __ldcg(scratch.block_pairs + b);  // through L2: written by other SMs
    q = combine(q, {v.x, v.y});
  }
  q = block_combine(q, warp_pairs);
  if (threadIdx.x == 0) {
    *out = isfinite(q.s) ? q.s + q.c : q.s;  // see the header: NaN and infinities
    *scratch.ticket = 0;                     // ready for the next launch
  }
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const int per_sm = blocks_per_sm(compensated_sum, block);
  const std::size_t threads_per_block = static_cast<std::size_t>(block);
  const std::size_t grid = resident_grid(per_sm, device.sm_count, n / 4, threads_per_block * kLoads);

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = kTicketBytes + grid * sizeof(float2);
  p.zero_scratch_once = true;  // the ticket starts at zero and every launch leaves it there

  // The bound of chapters/17_compensated.md: D_s, the depth of the s part.
  const std::size_t per_thread = ceil_div(n / 4, grid * threads_per_block) + 2;
  const std::size_t block_tree = common::tree_depth(threads_per_block);
  const double d_s = static_cast<double>(per_thread + 2 + block_tree + ceil_div(grid, threads_per_block) + block_tree);
  p.compensated = common::compensated_bound(d_s);
  // The same bound in the depth model, with |sum x| <= sum|x| (looser: what the plain
  // stages are held to).
  p.error_depth = 1 + static_cast<std::size_t>(std::ceil(p.compensated.abs_units));
  return p;
}

void launch(const StageArgs& a) {
  const std::size_t head = Float4Split(a.in, a.n).head;
  compensated_sum<<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, head, carve_scratch(a.scratch), a.out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_compensated() {
  Stage s;
  s.number = 17;
  s.id = "compensated";
  s.title = "Neumaier compensated";
  s.source = "reduction/17_compensated.cu";
  s.chapter = "chapters/17_compensated.md";
  s.blocks.min = 128;
  s.blocks.max = kMaxBlock;  // __launch_bounds__
  s.blocks.preferred = 256;
  s.deterministic = true;  // for a given block size and grid
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
