// Stage 18: read the array the way the ceiling kernel does, and let one block wait.
//
// Idea: the fastest a kernel can read n floats is what peers/ceiling.cu's kernel reaches,
// and it combines nothing. So copy how it reads and add the cheapest possible finish.
//   How it reads: thread t of the grid's T threads takes float4s t, t + T, t + 2T, ...
//   (4 in flight), so the whole grid sweeps the array front to back together; stages
//   13-15 give each block its own contiguous chunk instead, so that hundreds of blocks
//   read at hundreds of places. And it runs at full occupancy: __launch_bounds__ asks
//   the compiler for the blocks of a full SM of the architecture it compiles for
//   (common/sm_limits.hpp: 2048 threads on Hopper, so 32 registers per thread; 1536 on
//   an RTX 4090), and the grid is every block the occupancy API says fits, not a tuned
//   share of the SM.
//   The finish: thread 0 of each block takes a number from a counter as the block
//   starts (its trip to L2 hides behind the data loads). Every block but the one that
//   drew the last number stores {tag, partial} as one 64-bit word (stage 14's tagged
//   slot) and exits; the last to start, after its own share, reads the words until each
//   is full, empties them and adds them in block order. No ticket at the end and no
//   fence. The one block that waits waits only for blocks that had already started
//   (each drew its number before it), and they never wait, so the sum finishes however
//   few blocks fit on the GPU at once (a partition of a few SMs, or another kernel
//   holding most of it).
// Below the multi-block range (one block or one cluster) stage 15 sums, as it does.
// One launch in flight per scratch area (the counter and the slots), as for stage 14.
// Fixes: stage 14's ticket path reading 3 blocks of 512 per SM in chunks, and its
// finish (an atomic ticket after the block sum, then the last block's trip to the slots).
// Expect: the fastest stage, or level with it, from about 2^18 to 2^27; within a few
// percent of the ceiling row from 2^24 (chapter 18); a little behind the chunked stages
// at 2^30. In Nsight Compute: 100% theoretical occupancy.
// Chapter: chapters/18_stream_order.md
#include "block_sizes.hpp"
#include "cuda_check.hpp"
#include "grid.hpp"
#include "primitives.cuh"
#include "registry.hpp"
#include "sm_limits.hpp"
#include "stage.hpp"
#include "verify.hpp"
#include "workspace_layout.hpp"

namespace reduction {
namespace {

constexpr int kUnroll = 4;
// Up to this many rounds of kUnroll float4s per thread, the grid is trimmed to whole rounds.
constexpr std::size_t kRoundedUpTo = 4;
// The scratch (single_pass/workspace_layout.hpp): the start counter at byte 0, one 8-byte
// slot per block from byte kSlotsOffset.
using workspace::kSlotsOffset;

// One thread's share in the ceiling's order: float4s i, i + T, ... of the 16-byte
// aligned body, kUnroll loads in flight, then what is left one at a time (fewer than
// kUnroll float4s). The first threads of the grid add the scalar head and tail.
template <int kBlock>
__device__ __forceinline__ float strided_thread_sum(const float* __restrict__ in, std::size_t n) {
  const Float4Split split(in, n);
  const float4* body = reinterpret_cast<const float4*>(in + split.head);
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kBlock;
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float acc[kUnroll] = {};
  std::size_t i = thread;
  for (; i + (kUnroll - 1) * threads < split.vectors; i += kUnroll * threads) {
    float4 p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) p[u] = __ldg(body + i + u * threads);  // all loads first
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (p[u].x + p[u].y) + (p[u].z + p[u].w);
  }
  for (; i < split.vectors; i += threads) {  // fewer than kUnroll left: one at a time
    const float4 p = __ldg(body + i);
    acc[0] += (p.x + p.y) + (p.z + p.w);
  }
  if (thread < split.head) acc[0] += in[thread];
  if (thread < n - split.tail_begin()) acc[0] += in[split.tail_begin() + thread];
  float v = acc[0];
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) v += acc[u];
  return v;
}

template <int kBlock>
__global__ void __launch_bounds__(kBlock, common::full_sm_blocks(kBlock))
    stream_order_sum(const float* __restrict__ in, std::size_t n, float* __restrict__ out,
                     unsigned char* __restrict__ scratch) {
  auto* started = reinterpret_cast<unsigned*>(scratch);
  auto* slots = reinterpret_cast<unsigned long long*>(scratch + kSlotsOffset);
  unsigned order = 0;  // how many blocks started before this one (thread 0 only)
  if (threadIdx.x == 0)
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(order) : "l"(started) : "memory");
  const float block_total = block_sum_one_round<kBlock>(strided_thread_sum<kBlock>(in, n));

  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    is_last = order == gridDim.x - 1;
    if (!is_last) store_tagged(slots + blockIdx.x, block_total);
  }
  __syncthreads();
  if (!is_last) return;  // store the word and leave: these blocks never wait

  // Thread t adds blocks t, t + kBlock, ... (this block's own total in place of its
  // slot), each read through L2 (relaxed.gpu) until it is full, then emptied.
  __shared__ float own;
  if (threadIdx.x == 0) own = block_total;
  __syncthreads();
  float v = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) v += b == blockIdx.x ? own : await_tagged(slots + b);
  v = block_sum_one_round<kBlock>(v);
  if (threadIdx.x == 0) {
    *out = v;
    *started = 0;  // every block has drawn its number: ready for the next launch
  }
}

const Stage& stage_15() {
  static const Stage& s = *find_stage("one_cluster");
  return s;
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  // One block or one cluster: stage 15's plan, which asks for no scratch.
  const LaunchPlan small = stage_15().plan(n, block, device);
  if (small.scratch_bytes == 0) return small;
  LaunchPlan p;
  const int per_sm = with_block_size(
      "18", block, [](auto k) { return blocks_per_sm(stream_order_sum<decltype(k)::value>, decltype(k)::value); });
  // Every resident block, none without a whole round of kUnroll float4s per thread. With
  // few rounds per thread, a part of a round left over (loads one after another) is a large
  // share of a thread's time: then take as few blocks as cover the array in the same
  // number of whole rounds. (Measured on an H200: that grid wins at 2^23, is level at 2^24
  // and 2^25, and loses from 2^26, where the blocks it drops cost more; chapter 18.)
  const std::size_t b = static_cast<std::size_t>(block);
  p.grid = shape::stream_order_grid(device, n, block, per_sm, kUnroll, kRoundedUpTo);
  p.scratch_bytes = kSlotsOffset + p.grid * sizeof(unsigned long long);
  p.zero_scratch_once = true;
  // A thread's chain (at most n / (grid x block) elements, two of them inside a float4
  // sum), its kUnroll accumulators and head or tail, the block tree; then block 0's
  // thread chain over the slots and its tree.
  p.error_depth = common::blocked_depth(n, p.grid * b) + 2 + kUnroll + 2 + common::tree_depth(b) +
                  (p.grid + b - 1) / b + common::tree_depth(b);
  return p;
}

void launch(const StageArgs& a) {
  // plan() took stage 15's plan exactly when that asked for no scratch; this stage's own
  // plan always asks for some.
  if (a.scratch_bytes == 0) {
    stage_15().launch(a);
    return;
  }
  auto* scratch = static_cast<unsigned char*>(a.scratch);
  with_block_size("18", a.block, [&](auto b) {
    stream_order_sum<decltype(b)::value><<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, a.out, scratch);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_stream_order() {
  Stage s;
  s.number = 18;
  s.id = "stream_order";
  s.title = "single pass, ceiling order";
  s.source = "reduction/18_stream_order.cu";
  s.chapter = "chapters/18_stream_order.md";
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
