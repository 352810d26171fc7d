// Stage 13: one launch; the last block to finish adds the partial sums.
//
// Idea: stage 12 needs a second launch to add its per-block partials, and below about
// 2^22 elements that launch's latency is a large part of the time. Here every block
// stores its partial, then takes a ticket from an atomic counter; the block that draws
// the last ticket knows that every other block has stored its partial, so it adds them
// in index order, writes the sum and puts the counter back to zero for the next launch.
// Memory ordering, both sides (CUDA's memory model, chapter 13):
//   a block that publishes:  store partial; __threadfence(); atomicAdd(ticket)
//     the fence orders the store before the ticket (release);
//   the block that finishes: atomicAdd(ticket) == grid - 1; __threadfence(); read partials
//     the fence orders its reads after the ticket (acquire), and the reads go to L2
//     (__ldcg), not to a line an L1 cache may hold from before.
// The loads: one contiguous chunk of float4s per block, four loads in flight per thread
// (primitives.cuh: chunk_thread_sum), and the block sum with one barrier
// (block_sum_one_round); both are explained in chapter 13.
// Fixes: stage 12's second launch. Nothing else is enqueued: the counter (scratch zeroed once) ends every launch at 0.
// Expect: faster than stage 12 wherever launch latency matters (2^10 to 2^24), the same
// at 2^28 and beyond. Nsight Systems shows one kernel per sum; in Nsight Compute the
// kernel's duration includes the finish, a short tail in which one block works.
// Chapter: chapters/13_last_block.md
#include "block_sizes.hpp"
#include "cuda_check.hpp"
#include "primitives.cuh"
#include "sm_limits.hpp"
#include "stage.hpp"
#include "verify.hpp"
#include "workspace_layout.hpp"

namespace reduction {
namespace {

constexpr int kUnroll = 4;
// The scratch (single_pass/workspace_layout.hpp): the counter at byte 0, one partial per
// block from byte kSlotsOffset (128: the counter has its own cache line).
constexpr std::size_t kPartialsOffset = workspace::kSlotsOffset;

template <int kBlock>
__global__ void __launch_bounds__(kBlock, kBlock == 1024 ? common::one_block_on(80) : 0)
    last_block_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                   unsigned* __restrict__ ticket, float* __restrict__ partials) {
  const float block_total = block_sum_one_round<kBlock>(chunk_thread_sum<kBlock, kUnroll>(in, n, chunk));

  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_total;
    __threadfence();  // release: the partial is visible device-wide before the ticket is taken
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    if (is_last) __threadfence();  // acquire: the reads below come after the last ticket
  }
  __syncthreads();  // shares is_last, and orders the block's reads after thread 0's fence
  if (!is_last) return;

  float v = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) v += __ldcg(partials + b);
  v = block_sum_one_round<kBlock>(v);
  if (threadIdx.x == 0) {
    *out = v;
    *ticket = 0;  // ready for the next launch
  }
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  LaunchPlan p;
  const int per_sm = with_block_size(
      "13", block, [](auto b) { return blocks_per_sm(last_block_sum<decltype(b)::value>, decltype(b)::value); });
  p.grid = ticket_grid(device, n, block, per_sm);
  p.scratch_bytes = kPartialsOffset + p.grid * sizeof(float);
  p.zero_scratch_once = true;
  // An element passes through its thread's accumulator (its share of the chunk, which
  // can exceed n / threads by kUnroll vectors, four additions each), the kUnroll
  // accumulators and a head or tail element, the block tree, then the last block's
  // per-thread run over the partials and its tree.
  const std::size_t b = static_cast<std::size_t>(block);
  const std::size_t threads = p.grid * b;
  p.error_depth = common::blocked_depth(n, threads) + 5 * kUnroll + 2 + common::tree_depth(b) + (p.grid + b - 1) / b +
                  common::tree_depth(b);
  return p;
}

void launch(const StageArgs& a) {
  auto* scratch = static_cast<unsigned char*>(a.scratch);
  auto* ticket = reinterpret_cast<unsigned*>(scratch);
  auto* partials = reinterpret_cast<float*>(scratch + kPartialsOffset);
  const std::size_t chunk = chunk_vectors(a.in, a.n, a.grid, a.block);
  with_block_size("13", a.block, [&](auto b) {
    last_block_sum<decltype(b)::value><<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, chunk, a.out, ticket, partials);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_last_block() {
  Stage s;
  s.number = 13;
  s.id = "last_block";
  s.title = "single pass, fenced ticket";
  s.source = "reduction/13_last_block.cu";
  s.chapter = "chapters/13_last_block.md";
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
