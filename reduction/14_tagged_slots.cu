// Stage 14: the last block without a fence (tagged slots), and one block for small n.
//
// Idea 1, tagged slots: in stage 13 a block's thread 0 stores its partial, waits for
// __threadfence() to make the store visible device-wide, then takes its ticket: trips
// to L2 one after another before the last block can even start. Here each block
// stores {tag, partial} as one 64-bit word and takes its ticket at once, with no
// fence; both are relaxed, so the last block may see the ticket before a slot's store
// has landed. It therefore reads each slot until the slot carries the tag "full", and a
// full slot holds the right partial, since the word is stored whole. The last block
// empties every slot it reads, so each launch leaves the scratch as it found it (all
// zero) whatever its grid, and a full slot can only be this launch's.
// Idea 2, one block for small n: up to block x 32 floats (2^14 for 512 threads) one
// block takes the whole input in one round of loads: every thread issues all its
// loads at once, then the block sum; no ticket, no scratch, 32-bit indices.
// One launch in flight per scratch area: two launches that overlap on one scratch (two
// streams, parallel graph branches) would count each other's tickets and read each
// other's slots. Give each stream its own scratch.
// Fixes: stage 13's fence on every block's path to the ticket, and, below 2^14, a grid
// of several blocks where one is enough.
// Expect: faster than stage 13 from 2^10 to about 2^24; the same at large n. In
// Nsight Compute, fewer cycles between the last data load and the end of the kernel.
// Chapter: chapters/14_tagged_slots.md
#include "block_sizes.hpp"
#include "cuda_check.hpp"
#include "primitives.cuh"
#include "stage.hpp"
#include "verify.hpp"
#include "workspace_layout.hpp"

namespace reduction {
namespace {

constexpr int kUnroll = 4;
constexpr int kSmallLoads = 8;  // float4 loads per thread of the one-block kernel
// The scratch (single_pass/workspace_layout.hpp): the ticket at byte 0, one 8-byte slot
// per block from byte kSlotsOffset (128: the ticket's 128-byte line to itself).
using workspace::kSlotsOffset;

template <int kBlock>
__global__ void __launch_bounds__(kBlock)
    one_block_sum(const float* __restrict__ in, unsigned n, float* __restrict__ out) {
  const Float4Split split(in, n);
  const auto head = static_cast<unsigned>(split.head);
  const auto vectors = static_cast<unsigned>(split.vectors);
  const float4* body = reinterpret_cast<const float4*>(in + head);
  float4 p[kSmallLoads];
#pragma unroll
  for (int k = 0; k < kSmallLoads; ++k) {  // all loads first; past the end a thread holds zeros
    const unsigned i = threadIdx.x + k * kBlock;
    p[k] = i < vectors ? __ldg(body + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  float v = 0.0f;
#pragma unroll
  for (int k = 0; k < kSmallLoads; ++k) v += (p[k].x + p[k].y) + (p[k].z + p[k].w);
  const unsigned tail_begin = head + vectors * 4;
  if (threadIdx.x < head) v += in[threadIdx.x];
  if (threadIdx.x < n - tail_begin) v += in[tail_begin + threadIdx.x];
  v = block_sum_one_round<kBlock>(v);
  if (threadIdx.x == 0) *out = v;
}

template <int kBlock>
__global__ void __launch_bounds__(kBlock) tagged_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                                                     float* __restrict__ out, unsigned char* __restrict__ scratch) {
  auto* ticket = reinterpret_cast<unsigned*>(scratch);
  auto* slots = reinterpret_cast<unsigned long long*>(scratch + kSlotsOffset);
  const float block_total = block_sum_one_round<kBlock>(chunk_thread_sum<kBlock, kUnroll>(in, n, chunk));

  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    unsigned taken = 0;
    store_tagged(slots + blockIdx.x, block_total);
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(taken) : "l"(ticket) : "memory");
    is_last = taken == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;

  // Each word is read through L2 (relaxed.gpu) until it is full, then emptied.
  float v = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) v += await_tagged(slots + b);
  v = block_sum_one_round<kBlock>(v);
  if (threadIdx.x == 0) {
    *out = v;
    *ticket = 0;  // ready for the next launch
  }
}

bool fits_one_block(std::size_t n, int block) { return n <= static_cast<std::size_t>(block) * kSmallLoads * 4; }

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  LaunchPlan p;
  const std::size_t b = static_cast<std::size_t>(block);
  if (fits_one_block(n, block)) {
    p.grid = 1;
    // Two additions inside a float4, at most kSmallLoads in the thread's chain, a head
    // and a tail element, then the block's tree.
    p.error_depth = 2 + kSmallLoads + 2 + common::tree_depth(b);
    return p;
  }
  const int per_sm = with_block_size(
      "14", block, [](auto k) { return blocks_per_sm(tagged_sum<decltype(k)::value>, decltype(k)::value); });
  p.grid = ticket_grid(device, n, block, per_sm);
  p.scratch_bytes = kSlotsOffset + p.grid * sizeof(unsigned long long);
  p.zero_scratch_once = true;
  // As stage 13 (the same loads and trees).
  p.error_depth = common::blocked_depth(n, p.grid * b) + 5 * kUnroll + 2 + common::tree_depth(b) +
                  (p.grid + b - 1) / b + common::tree_depth(b);
  return p;
}

void launch(const StageArgs& a) {
  if (a.grid == 1 && fits_one_block(a.n, a.block)) {
    with_block_size("14", a.block, [&](auto b) {
      one_block_sum<decltype(b)::value><<<1, a.block, 0, a.stream>>>(a.in, static_cast<unsigned>(a.n), a.out);
    });
  } else {
    const std::size_t chunk = chunk_vectors(a.in, a.n, a.grid, a.block);
    auto* scratch = static_cast<unsigned char*>(a.scratch);
    with_block_size("14", a.block, [&](auto b) {
      tagged_sum<decltype(b)::value><<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, chunk, a.out, scratch);
    });
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_tagged_slots() {
  Stage s;
  s.number = 14;
  s.id = "tagged_slots";
  s.title = "single pass, tagged slots";
  s.source = "reduction/14_tagged_slots.cu";
  s.chapter = "chapters/14_tagged_slots.md";
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
