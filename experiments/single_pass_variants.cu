// Experiments behind stages 13 and 14: designs that were measured against CUB on the
// H200 and either became part of a stage or were left out, with the numbers that
// decided it (chapter 12, "What was tried"). Not a stage: nothing here is registered,
// and the rows marked DIAGNOSTIC compute a wrong sum on purpose (they say so).
//
//   build/experiments/single_pass_variants finish [--csv FILE]
//       n = 2^14 .. 2^22: how the blocks of one launch combine their partial sums.
//         stage13       stage 13 as it is: one block up to 2^14, one cluster on Hopper
//                       up to 2^17, else the ticket
//         ticket        stage 13's ticket kernel at every n: tagged partials, an atomic
//                       ticket, and the last block adds the partials
//         fence         the same with the partial published by __threadfence() before
//                       the ticket (stage 13's finish before the tags)
//         acqrel        the fence folded into the atomic: atom.add.acq_rel.gpu
//         flag          each block stores {launch number, partial} as one 64-bit word;
//                       block 0 polls the words (only block 0 waits)
//         cluster8/16   one thread-block cluster of 8 or 16 blocks of 1024 threads adds
//                       the partials through distributed shared memory (n <= 2^18)
//         one-block-1024  (2^15 only) one block of 1024 threads, eight loads each
//         no-finish     DIAGNOSTIC, wrong sum: block 0 writes its own partial and
//                       nobody adds the rest. The time a perfect combine would take.
//   build/experiments/single_pass_variants lastblock [--csv FILE]
//       n = 2^14 .. 2^22: other ways for the ticket kernel's last block to get the
//       partials, beside stage13 and ticket (each on its own zeroed scratch).
//         prefetch      the ticket and the block's slot asked into L2 at the start
//         sector        each slot a whole 32-byte sector, written by one request
//         touch         the slot and the ticket loaded at the start (real loads)
//         speculate     every block loads the slots beside its atomic; only the last
//                       block uses what it read
//         clusterC-ticket  clusters of C blocks meet on an mbarrier in their first
//                       block, then one ticket per cluster (one cluster: no ticket)
//         hint256       prefetch, with the data loads asking L2 for 256 bytes at a time
//         warp          only warp 0 goes on after a block's sum; the last block's
//                       warp 0 alone reads and adds the slots
//         last-start    the ticket taken at the start; the last block to start waits
//                       for the slots (its warp 0), nobody waits for an atomic
//         store-atomic  DIAGNOSTIC, wrong sum: the store and the ticket, no slot read
//         no-finish     DIAGNOSTIC, as in finish
//   build/experiments/single_pass_variants critical [--csv FILE]
//       n = 2^14 .. 2^22: shorter paths from the last block's data to the result,
//       beside stage13 and ticket (each on its own zeroed scratch).
//         shuffle       the ticket kernel with the block sum stage 13 had before
//                       block_reduce_one_round (two rounds of shuffles), for both sums
//         no-shuffle    block_reduce_one_round without its shuffles: the lanes' sums
//                       also go through shared memory
//         poll-start    the ticket taken at the start; blocks store their slot and
//                       leave; the last block to start has all its threads read their
//                       slot at once until it carries the tag, then adds
//         u8-2x512      the ticket kernel with 8 loads in flight, 2 blocks of 512 per SM
//         no-finish     DIAGNOSTIC, as in finish
//   build/experiments/single_pass_variants phases [--csv FILE]
//       n = 2^14 .. 2^22, DIAGNOSTIC: the ticket kernel with clocks (global timer and
//       SM cycles) read inside it: how long the last block takes to get its ticket,
//       read the slots and add them. No CUB column.
//   build/experiments/single_pass_variants bulk [--csv FILE]
//       n = 2^14 .. 2^24, Hopper only: the input reaches shared memory through the
//       bulk-copy engine (cp.async.bulk, TMA) instead of through registers.
//         bulkBxT-SxK   B blocks of T threads per SM, S buffers of K KiB in flight per
//                       block, stage 13's ticket to finish; beside stage13 and ticket
//   build/experiments/single_pass_variants shapes [--csv FILE]
//       n = 2^16 .. 2^24: the ticket kernel with other grid shapes.
//         tBxT-uU-mM    B blocks of T threads per SM (the most that fit), U loads in
//                       flight per thread, at least M vectors per thread
//   build/experiments/single_pass_variants tiles [--csv FILE]
//       n = 2^26, 2^28, 2^30: how stage 14 hands tiles to threads.
//         warp-8192-fixed    one warp per 8192-float tile, each block a fixed run of
//                            tiles (stage 14's first design)
//         warp-16384-counter one warp per 16384-float tile, tiles from an atomic counter
//         team-32768-counter four warps per 32768-float tile, from the counter (stage 14)
//
// Every row is timed as the runner times (common/timing.hpp: read flush of the L2,
// CUDA events, median), next to CUB's DeviceReduce::Sum in the same process, and
// checked against a double-precision sum unless it is a diagnostic.
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "output.hpp"
#include "single_pass.cuh"
#include "timing.hpp"
#include "verify.hpp"

namespace {

namespace g = reduction::generic;

// ---- block sum (float, the same tree as the stages) -------------------------------------

template <int kBlock>
__device__ __forceinline__ float block_sum(float v) {
  return g::block_reduce_one_round<kBlock>(v, g::Sum{});
}

// Steps 1-2 of stage 13 for one block (single_pass/single_pass.cuh): its chunk of float4s
// from blockIdx.x * chunk, added up; thread 0 gets the block's value.
template <int kBlock, int kUnroll>
__device__ __forceinline__ float chunk_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk) {
  return g::block_chunk_reduce<float, g::Sum, kBlock, kUnroll>(in, n, chunk, g::Sum{});
}

// ---- "flag": one 64-bit word per block, {launch number, partial}; block 0 polls ------------

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    flag_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
             unsigned long long* __restrict__ words, unsigned launch) {
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  if (blockIdx.x != 0) {
    if (threadIdx.x == 0) {
      const unsigned long long word = (static_cast<unsigned long long>(launch) << 32) | __float_as_uint(v);
      asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(words + blockIdx.x), "l"(word) : "memory");
    }
    return;
  }
  __shared__ float own;
  if (threadIdx.x == 0) own = v;
  __syncthreads();
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    if (b == 0) {
      w += own;
      continue;
    }
    unsigned long long word = 0;
    do {
      asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(words + b) : "memory");
    } while (static_cast<unsigned>(word >> 32) != launch);
    w += __uint_as_float(static_cast<unsigned>(word));
  }
  w = block_sum<kBlock>(w);
  if (threadIdx.x == 0) *out = w;
}

// ---- "fence" and "acqrel": the ticket with the partials published the plain way ----------
// fence:  the partial is stored, __threadfence() waits until it is visible device-wide,
//         then atomicAdd takes the ticket (stage 13's finish before tagged slots).
// acqrel: the partial is stored, then one atom.add.acq_rel.gpu both publishes it and
//         takes the ticket.

template <int kBlock, int kUnroll, bool kAcqRel>
__global__ void __launch_bounds__(kBlock)
    published_ticket(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     float* __restrict__ partials, unsigned* __restrict__ ticket) {
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    unsigned taken = 0;
    if constexpr (kAcqRel) {
      asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(taken) : "l"(ticket) : "memory");
    } else {
      __threadfence();
      taken = atomicAdd(ticket, 1u);
    }
    is_last = taken == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) w += __ldcg(partials + b);
  w = block_sum<kBlock>(w);
  if (threadIdx.x == 0) {
    *out = w;
    *ticket = 0;
  }
}

// ---- "no-finish": DIAGNOSTIC, block 0's partial only ---------------------------------------

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock) no_finish_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                                                        float* __restrict__ out, float* __restrict__ partials) {
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;  // the store every design makes, without the combine
    if (blockIdx.x == 0) *out = v;
  }
}

// ---- "lastblock": pieces of stage 13's tagged ticket, shared by the variants below ---------

__device__ __forceinline__ unsigned long long* slots_of(unsigned char* scratch) {
  return reinterpret_cast<unsigned long long*>(scratch + g::kSlotsOffset);
}

// One block's {tag, value} word, stored device-wide (st.relaxed.gpu).
__device__ __forceinline__ void store_slot(unsigned long long* slots, unsigned index, unsigned tag, float v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slots + index), "l"(g::tag_value(tag, v)) : "memory");
}

__device__ __forceinline__ unsigned long long load_slot(const unsigned long long* slots, unsigned index) {
  unsigned long long word = 0;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(slots + index) : "memory");
  return word;
}

// The ticket (at the start of the scratch) before this block's relaxed atomic add of one.
__device__ __forceinline__ unsigned take_ticket(unsigned char* scratch) {
  unsigned taken = 0;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(taken) : "l"(scratch) : "memory");
  return taken;
}

// The last block's final writes: the result, the ticket back to zero, the tag for the
// next launch.
__device__ __forceinline__ void publish(float* out, float w, unsigned char* scratch, unsigned tag) {
  *out = w;
  *reinterpret_cast<unsigned*>(scratch) = 0;
  *reinterpret_cast<unsigned*>(scratch + g::kTagOffset) = tag;
}

// The last block's threads add the slots in index order: thread t takes slots t,
// t + kBlock, ... (word `stride * b` for slot b), reading each until it carries
// `expected`, then the block adds the threads. `first` is what thread t has already read
// of its own slot t, or 0 (never a launch's tag) to read it here.
// thread_collect is the part before the block's add: thread t's own slots, in order.
template <int kBlock>
__device__ __forceinline__ float thread_collect(const unsigned long long* slots, unsigned stride, unsigned expected,
                                                unsigned long long first = 0) {
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    unsigned long long word = b == threadIdx.x ? first : 0;
    while (static_cast<unsigned>(word >> 32) != expected) word = load_slot(slots, stride * b);
    w += g::untag_value<float>(word);
  }
  return w;
}

template <int kBlock>
__device__ __forceinline__ float block_collect(const unsigned long long* slots, unsigned stride, unsigned expected,
                                               unsigned long long first = 0) {
  return block_sum<kBlock>(thread_collect<kBlock>(slots, stride, expected, first));
}

// "prefetch", "sector", "touch", "hint256": the flush before each timed launch also
// evicts the ticket and the slots. A slot written with 8 bytes is then a partly written
// 32-byte sector in L2, and reading it back might cost a trip to DRAM. These test that.
//   prefetch: thread 0 asks L2 for the ticket's sector and the block's slot at the start,
//             while the data loads are in flight.
//   sector:   each slot is a whole 32-byte sector, written at once by two lanes.

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    prefetch_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                        unsigned char* __restrict__ scratch) {
  if (threadIdx.x == 0) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch) : "memory");
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch + g::kSlotsOffset + 8 * blockIdx.x) : "memory");
  }
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  g::finish_with_ticket<float, g::Sum, kBlock>(v, tag, out, scratch, g::Sum{});
}

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    sector_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                      unsigned char* __restrict__ scratch) {
  const unsigned tag = g::read_launch_tag<float>(scratch);
  float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  auto* slots = slots_of(scratch);  // 4 words per block
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  if (threadIdx.x < 32) {
    v = __shfl_sync(0xffffffffu, v, 0);
    const unsigned t = __shfl_sync(0xffffffffu, tag, 0);
    const unsigned long long word = g::tag_value(t, v);
    if (threadIdx.x < 2)  // lanes 0 and 1: 16 bytes each, one request for the whole sector
      asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %1};" ::"l"(slots + 4 * blockIdx.x + 2 * threadIdx.x),
                   "l"(word)
                   : "memory");
    __syncwarp();
    if (threadIdx.x == 0) {
      is_last = take_ticket(scratch) == gridDim.x - 1;
      launch_tag = t;
    }
  }
  __syncthreads();
  if (!is_last) return;
  const float w = block_collect<kBlock>(slots, 4, launch_tag);
  if (threadIdx.x == 0) publish(out, w, scratch, launch_tag);
}

// "hint": the prefetch kernel with the data loads asking L2 to fetch 256 bytes at a time
// (ld.global.nc.L2::256B). Only for aligned input whose length is a multiple of 4, as in
// this experiment; the kernel checks that and leaves *out alone otherwise.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    hint_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                    unsigned char* __restrict__ scratch) {
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0 || n % 4 != 0) return;
  if (threadIdx.x == 0) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch) : "memory");
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch + g::kSlotsOffset + 8 * blockIdx.x) : "memory");
  }
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float4* body = reinterpret_cast<const float4*>(in);
  const std::size_t packs = n / 4;
  const std::size_t begin = blockIdx.x * chunk;
  const std::size_t end = begin + chunk < packs ? begin + chunk : packs;
  float acc[kUnroll] = {};
  for (std::size_t i = begin + threadIdx.x; i < end; i += static_cast<std::size_t>(kBlock) * kUnroll) {
    float4 p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t j = i + static_cast<std::size_t>(u) * kBlock;
      if (j < end) {
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                     : "=f"(p[u].x), "=f"(p[u].y), "=f"(p[u].z), "=f"(p[u].w)
                     : "l"(body + j));
      } else {
        p[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (p[u].x + p[u].y) + (p[u].z + p[u].w);
  }
  float v = acc[0];
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) v += acc[u];
  v = block_sum<kBlock>(v);
  g::finish_with_ticket<float, g::Sum, kBlock>(v, tag, out, scratch, g::Sum{});
}

// Warp 0 of the finishing block reads the tagged slots of all `grid` blocks: lane l adds
// slots l, l + 32, ... in that order (16 loads in flight per lane), re-reading any slot
// that does not carry the launch's tag yet, then the lanes are added by shuffles.
__device__ __forceinline__ float warp_collect(const unsigned long long* slots, unsigned grid, unsigned expected) {
  const unsigned lane = threadIdx.x % 32;
  constexpr int kBatch = 16;
  float w = 0.0f;
  for (unsigned b0 = 0; b0 < grid; b0 += 32 * kBatch) {
    unsigned long long word[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const unsigned b = b0 + 32 * j + lane;
      word[j] = 0;
      if (b < grid) word[j] = load_slot(slots, b);
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const unsigned b = b0 + 32 * j + lane;
      if (b < grid) {
        while (static_cast<unsigned>(word[j] >> 32) != expected) word[j] = load_slot(slots, b);
        w += g::untag_value<float>(word[j]);
      }
    }
  }
  return g::warp_reduce(w, g::Sum{});
}

// Warp 0 of a block, with the ticket its thread 0 took and the launch's tag: in the block
// that took the last ticket, the warp adds the slots and writes the result.
__device__ __forceinline__ void warp_finish(unsigned taken, unsigned tag, float* out, unsigned char* scratch) {
  taken = __shfl_sync(0xffffffffu, taken, 0);
  if (taken != gridDim.x - 1) return;
  tag = __shfl_sync(0xffffffffu, tag, 0);
  const float w = warp_collect(slots_of(scratch), gridDim.x, tag);
  if (threadIdx.x == 0) publish(out, w, scratch, tag);
}

// "warp" and "last-start": only warp 0 of each block goes on after the block's own sum
// (no __syncthreads in the finish), and the last block's warp 0 alone adds the slots.
//   warp (kAtStart false): stage 13's ticket, taken after the block's slot is stored.
//   last-start (kAtStart true): the ticket is taken when a block starts. The block that
//     takes the last one knows at its start that every other block is already running
//     (so waiting for them cannot hang) and finishes: its warp 0 reads the slots until
//     all carry the tag. The other blocks store their slot and leave; nobody waits for
//     an atomic at the end.
template <int kBlock, int kUnroll, bool kAtStart>
__global__ void __launch_bounds__(kBlock)
    warp_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                    unsigned char* __restrict__ scratch) {
  unsigned taken = 0;
  if (kAtStart && threadIdx.x == 0) taken = take_ticket(scratch);
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  if (threadIdx.x >= 32) return;
  if (threadIdx.x == 0) {
    store_slot(slots_of(scratch), blockIdx.x, tag, v);
    if (!kAtStart) taken = take_ticket(scratch);
  }
  warp_finish(taken, tag, out, scratch);
}

// "speculate": every block's threads load the slots as soon as the block has taken its
// ticket, before they know whether they are the last block, so that the last block's
// reads travel alongside its atomic instead of after it. Only the last block uses what
// it read (re-reading the slots whose tag is not there yet).
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    speculate_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                         unsigned char* __restrict__ scratch) {
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  auto* slots = slots_of(scratch);
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  unsigned taken = 0;
  if (threadIdx.x == 0) {
    store_slot(slots, blockIdx.x, tag, v);
    taken = take_ticket(scratch);
  }
  unsigned long long first = 0;
  if (threadIdx.x < gridDim.x) first = load_slot(slots, threadIdx.x);
  if (threadIdx.x == 0) {
    is_last = taken == gridDim.x - 1;
    launch_tag = tag;
  }
  __syncthreads();
  if (!is_last) return;
  const float w = block_collect<kBlock>(slots, 1, launch_tag, first);
  if (threadIdx.x == 0) publish(out, w, scratch, launch_tag);
}

// "clusterC-ticket": two levels. The grid is cut into thread-block clusters of C blocks.
// Inside a cluster, every block but the first writes its value into the first block's
// shared memory and arrives on an mbarrier there (release at cluster scope); the first
// block's warp 0 waits on that barrier alone (no cluster-wide barrier at the end), adds
// the C values in rank order, and takes the ticket for the cluster. Between clusters it
// is stage 13's tagged ticket with the speculative slot reads above (few slots: one per
// cluster). A grid of one cluster skips the ticket: the first block writes the result.
// Hopper only.
template <int kBlock, int kUnroll, int kCluster>
__global__ void __launch_bounds__(kBlock)
    cluster_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                       unsigned char* __restrict__ scratch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ float partials[kCluster];
  __shared__ __align__(8) unsigned long long arrived;
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const unsigned rank = cluster.block_rank();
  const auto arrived_addr = static_cast<unsigned>(__cvta_generic_to_shared(&arrived));
  if (rank == 0 && threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(arrived_addr), "r"(kCluster - 1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  auto started = cluster.barrier_arrive();
  const unsigned tag = rank == 0 ? g::read_launch_tag<float>(scratch) : 0;
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  cluster.barrier_wait(std::move(started));  // the leader runs and its mbarrier is ready
  if (rank != 0) {
    if (threadIdx.x == 0) {
      cluster.map_shared_rank(partials, 0)[rank] = v;
      unsigned remote = 0;
      asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote) : "r"(arrived_addr));
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
    }
    return;
  }
  if (threadIdx.x >= 32) return;
  const unsigned lane = threadIdx.x;
  unsigned ready = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(ready)
        : "r"(arrived_addr)
        : "memory");
  } while (!ready);
  float c = lane == 0 ? v : (lane < kCluster ? partials[lane] : 0.0f);
  c = g::warp_reduce(c, g::Sum{});
  if (gridDim.x == kCluster) {  // one cluster: its sum is the result, no ticket
    if (lane == 0) *out = c;
    return;
  }

  auto* slots = slots_of(scratch);
  const unsigned leaders = gridDim.x / kCluster;
  const unsigned expected = __shfl_sync(0xffffffffu, tag, 0);
  unsigned taken = 0;
  if (lane == 0) {
    store_slot(slots, blockIdx.x / kCluster, expected, c);
    taken = take_ticket(scratch);
  }
  unsigned long long first = 0;
  if (lane < leaders) first = load_slot(slots, lane);
  taken = __shfl_sync(0xffffffffu, taken, 0);
  if (taken != leaders - 1) return;
  float w = 0.0f;
  for (unsigned b = lane; b < leaders; b += 32) {
    unsigned long long word = first;
    if (b != lane) word = load_slot(slots, b);
    while (static_cast<unsigned>(word >> 32) != expected) word = load_slot(slots, b);
    w += g::untag_value<float>(word);
  }
  w = g::warp_reduce(w, g::Sum{});
  if (lane == 0) {
    publish(out, w, scratch, expected);
  }
#else
  __trap();
#endif
}

// "touch": as prefetch, but with real loads: thread 0 reads its block's slot and the
// ticket at the start, so that both sectors are in L2 (whole) before anything is stored.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    touch_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     unsigned char* __restrict__ scratch) {
  unsigned long long seen = 0;
  unsigned ticket_seen = 0;
  if (threadIdx.x == 0) {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                 : "=l"(seen)
                 : "l"(scratch + g::kSlotsOffset + 8 * blockIdx.x)
                 : "memory");
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(ticket_seen) : "l"(scratch) : "memory");
  }
  const unsigned tag = g::read_launch_tag<float>(scratch);
  float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  // Never true (the ticket never holds more than the grid size), but the compiler cannot
  // know: the loads above stay.
  if (threadIdx.x == 0 && ticket_seen >= 0x80000000u && seen == ~0ull) v = -v;
  g::finish_with_ticket<float, g::Sum, kBlock>(v, tag, out, scratch, g::Sum{});
}

// ---- "critical": shorter paths from the last block's data to the result -----------------------

// As block_reduce_one_round, but the 32 lanes' sums also go through shared memory (lane
// 0 reads them as eight float4s and adds them pairwise) instead of five shuffles.
template <int kBlock>
__device__ __forceinline__ float no_shuffle_sum(float v) {
  __shared__ __align__(16) float lanes[32];
  return g::block_reduce_lanes<kBlock>(v, g::Sum{}, [](float s) {
    lanes[threadIdx.x] = s;
    __syncwarp();
    float w = 0.0f;
    if (threadIdx.x == 0) {
      float t[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float4 q = reinterpret_cast<const float4*>(lanes)[j];
        t[j] = (q.x + q.y) + (q.z + q.w);
      }
      w = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    }
    return w;
  });
}

// The two block sums compared with block_reduce_one_round, as types for other_sum_ticket.
//   TwoRounds ("shuffle"): the block sum stage 13 had before, shuffles in every warp, one
//     value per warp through shared memory, shuffles again in warp 0 (g::block_reduce).
//   NoShuffle ("no-shuffle"): no_shuffle_sum above.
struct TwoRounds {
  template <int kBlock>
  __device__ static float sum(float v) {
    return g::block_reduce<kBlock>(v, g::Sum{});
  }
};
struct NoShuffle {
  template <int kBlock>
  __device__ static float sum(float v) {
    return no_shuffle_sum<kBlock>(v);
  }
};

// Stage 13's ticket kernel with another block sum for both of the sums on the last
// block's path (its own, and the slots').
template <int kBlock, int kUnroll, typename Tree>
__global__ void __launch_bounds__(kBlock)
    other_sum_ticket(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     unsigned char* __restrict__ scratch) {
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float v =
      Tree::template sum<kBlock>(g::thread_chunk_reduce<float, g::Sum, kBlock, kUnroll>(in, n, chunk, g::Sum{}));
  auto* slots = slots_of(scratch);
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  if (threadIdx.x == 0) {
    store_slot(slots, blockIdx.x, tag, v);
    is_last = take_ticket(scratch) == gridDim.x - 1;
    launch_tag = tag;
  }
  __syncthreads();
  if (!is_last) return;
  const float w = Tree::template sum<kBlock>(thread_collect<kBlock>(slots, 1, launch_tag));
  if (threadIdx.x == 0) publish(out, w, scratch, launch_tag);
}

// "poll-start": the ticket is taken when a block starts (as in last-start), so no block
// waits for an atomic at its end: a block stores its tagged slot and leaves. The block
// that took the last ticket knows that every other block is running, so it may wait for
// them: after its own sum, each of its threads reads its own slot until the slot
// carries the tag, all threads at once, and the block adds them.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock) poll_start_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                                                         float* __restrict__ out, unsigned char* __restrict__ scratch) {
  unsigned started = 0;
  if (threadIdx.x == 0) started = take_ticket(scratch);
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float mine = g::thread_chunk_reduce<float, g::Sum, kBlock, kUnroll>(in, n, chunk, g::Sum{});
  __shared__ bool collects;
  __shared__ unsigned launch_tag;
  __shared__ float own;
  if (threadIdx.x == 0) {  // seen by every thread after the barrier inside block_sum
    collects = started == gridDim.x - 1;
    launch_tag = tag;
  }
  const float v = block_sum<kBlock>(mine);
  auto* slots = slots_of(scratch);
  if (!collects) {
    if (threadIdx.x == 0) store_slot(slots, blockIdx.x, tag, v);
    return;
  }
  if (threadIdx.x == 0) own = v;
  __syncthreads();
  const unsigned expected = launch_tag;
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    if (b == blockIdx.x) {
      w += own;
      continue;
    }
    unsigned long long word = load_slot(slots, b);
    while (static_cast<unsigned>(word >> 32) != expected) word = load_slot(slots, b);
    w += g::untag_value<float>(word);
  }
  w = block_sum<kBlock>(w);
  if (threadIdx.x == 0) publish(out, w, scratch, expected);
}

// "phases": stage 13's ticket kernel with clocks read along the way, to see where the
// finish spends its time. Every block's thread 0 records the global timer (ns) when the
// block starts, when its own sum is ready, and once its ticket is back (after the
// barrier that shares it). The last block also records its SM clock (cycles) at those
// points, after reading the slots, and after adding them.
struct Stamps {
  unsigned long long start, data, ticket;  // global timer, ns
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    phases_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                      unsigned char* __restrict__ scratch, Stamps* stamps, long long* last_clocks) {
  const long long c0 = clock64();
  const unsigned long long g0 = global_ns();
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  const long long c1 = clock64();
  const unsigned long long g1 = global_ns();
  auto* ticket = reinterpret_cast<unsigned*>(scratch);
  auto* slots = slots_of(scratch);
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  if (threadIdx.x == 0) {
    launch_tag = tag;
    unsigned taken = 0;
    store_slot(slots, blockIdx.x, tag, v);
    taken = take_ticket(scratch);
    is_last = taken == gridDim.x - 1;
  }
  __syncthreads();
  // Past the barrier, so after the atomic's answer has arrived.
  const long long c2 = clock64();
  if (threadIdx.x == 0) stamps[blockIdx.x] = {g0, g1, global_ns()};
  if (!is_last) return;
  const unsigned expected = launch_tag;
  __shared__ unsigned rereads;  // slots read more than once, in the whole block
  if (threadIdx.x == 0) rereads = 0;
  __syncthreads();
  const long long c3 = clock64();
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    unsigned long long word = 0;
    unsigned reads = 0;
    do {
      word = load_slot(slots, b);
      ++reads;
    } while (static_cast<unsigned>(word >> 32) != expected);
    if (reads > 1) atomicAdd(&rereads, reads - 1);
    w += g::untag_value<float>(word);
  }
  const long long c4 = clock64();
  w = block_sum<kBlock>(w);
  if (threadIdx.x == 0) {
    *out = w;
    const long long c5 = clock64();
    *ticket = 0;
    *reinterpret_cast<unsigned*>(scratch + g::kTagOffset) = expected;
    const long long c[6] = {c0, c1, c2, c3, c4, c5};
    for (int k = 0; k < 6; ++k) last_clocks[k] = c[k];
    last_clocks[6] = blockIdx.x;
    last_clocks[7] = rereads;  // block_sum's barrier came after every thread's reads
  }
}

// "store-atomic": DIAGNOSTIC, wrong sum. Stage 13's tagged store and ticket, but the last
// block writes only its own partial: the finish without reading the slots back.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    store_atomic_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     unsigned char* __restrict__ scratch) {
  const unsigned tag = g::read_launch_tag<float>(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  if (threadIdx.x == 0) {
    auto* slots = slots_of(scratch);
    store_slot(slots, blockIdx.x, tag, v);
    unsigned taken = 0;
    taken = take_ticket(scratch);
    if (taken == gridDim.x - 1) {
      publish(out, v, scratch, tag);
    }
  }
}

// ---- "bulk": Hopper's bulk-copy engine (TMA) feeds shared memory -------------------------
// One thread per block asks the copy engine for whole pieces of the block's chunk
// (cp.async.bulk, kStageBytes each, kStages in flight); an mbarrier per stage counts the
// bytes in; the block's threads add each piece from shared memory once it has landed,
// then a __syncthreads frees the stage for the next piece. The finish is stage 13's own
// (finish_with_ticket, tagged partials). The head (up to the first 16-byte boundary)
// and tail are scalar loads, as in stage 13.

template <int kBlock, int kStages, int kStageBytes>
__global__ void __launch_bounds__(kBlock) bulk_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                                                   float* __restrict__ out, unsigned char* __restrict__ scratch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned tag = g::read_launch_tag<float>(scratch);
  static_assert(kStageBytes % 16 == 0, "bulk copies move whole 16-byte units");
  auto smem_address = [](const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); };
  extern __shared__ __align__(128) unsigned char stages[];   // kStages x kStageBytes
  __shared__ __align__(8) unsigned long long full[kStages];  // one mbarrier per stage
  const g::Split<float> split(in, n);
  const float4* body = reinterpret_cast<const float4*>(in + split.head);
  const std::size_t begin = blockIdx.x * chunk;
  const std::size_t end = begin + chunk < split.packs ? begin + chunk : split.packs;
  constexpr std::size_t kPiece = kStageBytes / 16;  // float4s per piece
  const std::size_t pieces = begin < end ? (end - begin + kPiece - 1) / kPiece : 0;

  auto issue = [&](std::size_t piece) {  // thread 0 only
    const int s = static_cast<int>(piece % kStages);
    const std::size_t first = begin + piece * kPiece;
    const unsigned bytes = static_cast<unsigned>((end - first < kPiece ? end - first : kPiece) * 16);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(&full[s])), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_address(stages + s * kStageBytes)),
                 "l"(body + first), "r"(bytes), "r"(smem_address(&full[s]))
                 : "memory");
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&full[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the copy engine
    for (std::size_t p = 0; p < pieces && p < kStages; ++p) issue(p);
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them

  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (std::size_t p = 0; p < pieces; ++p) {
    const int s = static_cast<int>(p % kStages);
    const unsigned parity = static_cast<unsigned>((p / kStages) & 1);
    unsigned done = 0;
    do {
      asm volatile(
          "{\n .reg .pred ready;\n mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2;\n"
          " selp.u32 %0, 1, 0, ready;\n}"
          : "=r"(done)
          : "r"(smem_address(&full[s])), "r"(parity)
          : "memory");
    } while (!done);
    const std::size_t first = begin + p * kPiece;
    const int count = static_cast<int>(end - first < kPiece ? end - first : kPiece);
    const float4* piece = reinterpret_cast<const float4*>(stages + s * kStageBytes);
    for (int i = threadIdx.x; i < count; i += kBlock) {
      const float4 v = piece[i];
      a0 += v.x;
      a1 += v.y;
      a2 += v.z;
      a3 += v.w;
    }
    __syncthreads();  // every thread is done with stage s
    if (threadIdx.x == 0 && p + kStages < pieces) issue(p + kStages);
  }
  const std::size_t thread = blockIdx.x * static_cast<std::size_t>(kBlock) + threadIdx.x;
  const std::size_t tail_begin = split.head + split.packs * 4;
  if (thread < split.head) a0 += in[thread];
  if (thread < n - tail_begin) a0 += in[tail_begin + thread];
  const float v = block_sum<kBlock>((a0 + a1) + (a2 + a3));
  g::finish_with_ticket<float, g::Sum, kBlock>(v, tag, out, scratch, g::Sum{});
#else
  __trap();  // launched only on compute capability 9.0 and later
#endif
}

// ---- stage 14's tile designs ----------------------------------------------------------------
// Only what decides the speed is kept: full tiles (n a multiple of the tile), aligned
// input, tile sums stored, and the last block adding them (in index order here).

template <int kThreads, int kTile>  // kThreads lanes (one warp or a team) sum one tile
__device__ __forceinline__ float tile_lane_sum(const float* tile, unsigned rank) {
  constexpr int kPerThread = kTile / 4 / kThreads;
  constexpr int kBatch = 8;
  const float4* p = reinterpret_cast<const float4*>(tile) + rank;
  float ax = 0.0f, ay = 0.0f, az = 0.0f, aw = 0.0f;
  for (int k0 = 0; k0 < kPerThread; k0 += kBatch) {
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = __ldg(p + kThreads * (k0 + b));
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      ax += v[b].x;
      ay += v[b].y;
      az += v[b].z;
      aw += v[b].w;
    }
  }
  return g::warp_reduce((ax + ay) + (az + aw), g::Sum{});
}

__device__ void finish_tiles(const float* tile_sums, std::size_t tiles, unsigned* ticket, float* out) {
  __shared__ bool is_last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  // 32 loads in flight per thread, so that this pass stays a few microseconds long
  // for every design (2^17 tile sums at most), as stage 14's own final pass does.
  constexpr int kInFlight = 32;
  float w = 0.0f;
  for (std::size_t t0 = 0; t0 < tiles; t0 += kInFlight * blockDim.x) {
    float v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const std::size_t t = t0 + j * blockDim.x + threadIdx.x;
      v[j] = t < tiles ? __ldcg(tile_sums + t) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) w += v[j];
  }
  w = block_sum<256>(w);
  if (threadIdx.x == 0) {
    *out = w;
    ticket[0] = 0;
    ticket[32] = 0;
  }
}

// One warp per tile; Counter: tiles from an atomic counter, else a fixed run per block.
template <int kTile, bool kCounter>
__global__ void __launch_bounds__(256)
    warp_tiles(const float* __restrict__ in, std::size_t n, float* tile_sums, unsigned* ticket, float* out) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t tiles = n / kTile;
  if constexpr (kCounter) {
    for (;;) {
      unsigned t = 0;
      if (lane == 0) t = atomicAdd(ticket + 32, 1u);
      t = __shfl_sync(0xffffffffu, t, 0);
      if (t >= tiles) break;
      const float s = tile_lane_sum<32, kTile>(in + static_cast<std::size_t>(t) * kTile, lane);
      if (lane == 0) tile_sums[t] = s;
    }
  } else {
    const std::size_t per = tiles / gridDim.x, extra = tiles % gridDim.x;
    const std::size_t first = blockIdx.x * per + (blockIdx.x < extra ? blockIdx.x : extra);
    const std::size_t end = first + per + (blockIdx.x < extra ? 1 : 0);
    for (std::size_t t = first + threadIdx.x / 32; t < end; t += blockDim.x / 32) {
      const float s = tile_lane_sum<32, kTile>(in + t * kTile, lane);
      if (lane == 0) tile_sums[t] = s;
    }
  }
  finish_tiles(tile_sums, tiles, ticket, out);
}

// A team of 128 threads per tile, tiles from the counter (stage 14's design).
template <int kTile>
__global__ void __launch_bounds__(256)
    team_tiles(const float* __restrict__ in, std::size_t n, float* tile_sums, unsigned* ticket, float* out) {
  __shared__ unsigned team_tile[2];
  __shared__ float warp_sums[2][4];
  const unsigned team = threadIdx.x / 128, rank = threadIdx.x % 128, lane = threadIdx.x % 32, warp = rank / 32;
  const std::size_t tiles = n / kTile;
  if (rank == 0) team_tile[team] = atomicAdd(ticket + 32, 1u);
  for (;;) {
    asm volatile("bar.sync %0, 128;" ::"r"(team + 1) : "memory");
    const unsigned t = team_tile[team];
    if (t >= tiles) break;
    const float s = tile_lane_sum<128, kTile>(in + static_cast<std::size_t>(t) * kTile, rank);
    if (lane == 0) warp_sums[team][warp] = s;
    asm volatile("bar.sync %0, 128;" ::"r"(team + 1) : "memory");
    if (rank == 0) {
      const float* w = warp_sums[team];
      tile_sums[t] = (w[0] + w[1]) + (w[2] + w[3]);
      team_tile[team] = atomicAdd(ticket + 32, 1u);
    }
  }
  finish_tiles(tile_sums, tiles, ticket, out);
}

// ---- harness ----------------------------------------------------------------------------------

struct Row {
  std::string mode, design;
  std::size_t n;
  int block;
  unsigned grid;
  double us;
  double cub_us;
  std::string check;  // ok, FAIL, or "diagnostic"
};

class Experiment {
 public:
  Experiment(const common::DeviceInfo& device, std::size_t max_n)
      : device_(device),
        flusher_(device.l2_bytes),
        host_(common::make_input(common::Pattern::uniform, 1, max_n)),
        input_(max_n),
        out_(1),
        scratch_(1 << 20),
        stage_scratch_(1 << 20),
        words_(1 << 14),
        tile_sums_(1 << 20) {
    common::copy_to_device(input_.get(), host_.data(), input_.bytes());
    CUDA_CHECK(cudaMemset(scratch_.get(), 0, scratch_.bytes()));
    CUDA_CHECK(cudaMemset(stage_scratch_.get(), 0, stage_scratch_.bytes()));
    CUDA_CHECK(cudaMemset(words_.get(), 0, words_.bytes()));
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes_, input_.get(), out_.get(), static_cast<std::int64_t>(max_n)));
    cub_temp_ = common::DeviceBuffer<unsigned char>(cub_bytes_);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  void set_n(std::size_t n) {
    n_ = n;
    ref_ = common::reference_sum(std::vector<float>(host_.begin(), host_.begin() + static_cast<std::ptrdiff_t>(n)));
    cub_us_ = time([&] { cub(); });
  }

  void cub() {
    std::size_t bytes = cub_bytes_;
    CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp_.get(), bytes, input_.get(), out_.get(), static_cast<std::int64_t>(n_),
                                      stream_.get()));
  }

  // Checks one launch (unless diagnostic), then times it; prints and keeps the row.
  void measure(const std::string& mode, const std::string& design, int block, unsigned grid,
               const std::function<void()>& launch, bool diagnostic = false) {
    std::string verdict = "diagnostic";
    if (!diagnostic) {
      const float poison = common::poison_value();
      common::copy_to_device(out_.get(), &poison, sizeof poison);
      launch();
      float result = 0.0f;
      CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
      CUDA_CHECK(cudaMemcpy(&result, out_.get(), sizeof result, cudaMemcpyDeviceToHost));
      // 1024 additions deep is far more than any design here; a wrong sum is off by far more.
      verdict = common::check_sum(result, ref_, 1024, n_).ok ? "ok" : "FAIL";
    }
    const double us = time(launch);
    rows_.push_back({mode, design, n_, block, grid, us, cub_us_, verdict});
    std::printf("%-8s %-20s %6s %5d %6u %10.2f %10.2f %7.3f  %s\n", mode.c_str(), design.c_str(),
                common::format_count(n_).c_str(), block, grid, us, cub_us_, cub_us_ / us, verdict.c_str());
    std::fflush(stdout);
  }

  double time(const std::function<void()>& launch) {
    common::TimingOptions opt;
    opt.reps = n_ >= (std::size_t{1} << 28) ? 30 : 200;
    opt.warmup = 3;
    return common::time_gpu_work([&](cudaStream_t) { launch(); }, stream_.get(), opt, &flusher_).us.median;
  }

  bool all_ok() const {
    return std::all_of(rows_.begin(), rows_.end(), [](const Row& r) { return r.check != "FAIL"; });
  }
  const std::vector<Row>& rows() const { return rows_; }
  const float* in() const { return input_.get(); }
  float* out() const { return out_.get(); }
  unsigned* ticket() const { return reinterpret_cast<unsigned*>(scratch_.get()); }
  float* partials() const { return reinterpret_cast<float*>(scratch_.get() + 4096); }
  // Stage 13's ticket kernel keeps its ticket, tag and slots here (single_pass.cuh).
  unsigned char* stage_scratch() const { return stage_scratch_.get(); }
  unsigned long long* words() const { return words_.get(); }
  float* tile_sums() const { return tile_sums_.get(); }
  cudaStream_t stream() const { return stream_.get(); }
  std::size_t n() const { return n_; }
  const common::DeviceInfo& device() const { return device_; }
  unsigned next_launch() { return ++launch_; }

 private:
  const common::DeviceInfo& device_;
  common::CudaStream stream_;
  common::L2Flusher flusher_;
  std::vector<float> host_;
  common::DeviceBuffer<float> input_;
  common::DeviceBuffer<float> out_;
  common::DeviceBuffer<unsigned char> scratch_;
  common::DeviceBuffer<unsigned char> stage_scratch_;
  common::DeviceBuffer<unsigned long long> words_;
  common::DeviceBuffer<float> tile_sums_;
  common::DeviceBuffer<unsigned char> cub_temp_;
  std::size_t cub_bytes_ = 0;
  std::size_t n_ = 0;
  common::Reference ref_{};
  double cub_us_ = 0.0;
  unsigned launch_ = 0;
  std::vector<Row> rows_;
};

// Stage 13's cluster kernel (single_pass/single_pass.cuh) with 1024-thread blocks, as one
// cluster of `blocks`; 16 only where the device allows that size.
void run_cluster(Experiment& e, unsigned blocks) {
  const std::size_t n = e.n();
  e.measure("finish", "cluster" + std::to_string(blocks), 1024, blocks,
            [&e, blocks, n] { g::launch_cluster<float, g::Sum, 1024, 4>(e.in(), n, e.out(), blocks, e.stream()); });
}

// The two reference rows of the finish and bulk experiments: stage 13 as it is, and its
// ticket kernel (tagged slots) with the ticket path's grid, whatever path stage 13 would
// take at this n.
void stage13_and_ticket(Experiment& e, const std::string& mode, const g::Workspace& ws) {
  const std::size_t n = e.n();
  const int sms = e.device().sm_count;
  e.measure(mode, "stage13", 512, g::grid_for<float, g::Sum>(n, sms),
            [&] { g::reduce<float>(e.in(), n, e.out(), ws, e.stream()); });
  const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
  const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
  e.measure(mode, "ticket", 512, grid, [&] {
    g::single_pass_kernel<float, g::Sum, 512, g::kDefaultUnroll>
        <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.stage_scratch(), g::Sum{});
    CUDA_CHECK_LAUNCH();
  });
}

// The no-finish diagnostic on the ticket path's grid and chunks (a wrong sum on purpose).
void measure_no_finish(Experiment& e, const std::string& mode, unsigned grid, std::size_t chunk) {
  const std::size_t n = e.n();
  e.measure(
      mode, "no-finish", 512, grid,
      [&] {
        no_finish_sum<512, g::kDefaultUnroll><<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.partials());
        CUDA_CHECK_LAUNCH();
      },
      true);
}

void finish_experiment(Experiment& e) {
  const int sms = e.device().sm_count;
  g::Workspace ws;
  // Cluster sizes this device takes for 1024-thread blocks (also allows 16 where it can).
  const int most = g::cluster_blocks<float, g::Sum, 1024, 4>();
  for (int k = 14; k <= 22; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    stage13_and_ticket(e, "finish", ws);
    // The ticket path's grid and chunks, for the designs that replace its finish: first
    // the two that publish the partial the plain way.
    const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
    const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
    e.measure("finish", "fence", 512, grid, [&] {
      published_ticket<512, g::kDefaultUnroll, false>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.partials(), e.ticket());
      CUDA_CHECK_LAUNCH();
    });
    e.measure("finish", "acqrel", 512, grid, [&] {
      published_ticket<512, g::kDefaultUnroll, true>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.partials(), e.ticket());
      CUDA_CHECK_LAUNCH();
    });
    e.measure("finish", "flag", 512, grid, [&] {
      flag_sum<512, g::kDefaultUnroll>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.words(), e.next_launch());
      CUDA_CHECK_LAUNCH();
    });
    if (k == 15) {
      e.measure("finish", "one-block-1024", 1024, 1, [&] {
        g::single_block_kernel<float, g::Sum, 1024, 8>
            <<<1, 1024, 0, e.stream()>>>(e.in(), static_cast<unsigned>(n), e.out(), g::Sum{});
        CUDA_CHECK_LAUNCH();
      });
    }
    if (k <= 18) {
      if (most >= 8) run_cluster(e, 8);
      if (most >= 16) run_cluster(e, 16);
    }
    measure_no_finish(e, "finish", grid, chunk);
  }
}

// The two-level design with clusters of kCluster blocks: the ticket path's grid rounded
// down to whole clusters (one cluster at least), skipped where the device cannot place
// a cluster of that size.
template <int kCluster>
void run_cluster_ticket(Experiment& e, unsigned char* scratch, unsigned ticket_grid) {
  const auto kernel = cluster_ticket_sum<512, g::kDefaultUnroll, kCluster>;
  if (kCluster > 8) CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const unsigned grid = std::max<unsigned>(kCluster, ticket_grid / kCluster * kCluster);
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = kCluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(512);
  config.stream = e.stream();
  config.attrs = &attribute;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters < 1) {
    cudaGetLastError();
    std::printf("lastblock cluster%d-ticket: no cluster of %d blocks fits this device; skipped\n", kCluster, kCluster);
    return;
  }
  CUDA_CHECK(cudaMemset(scratch, 0, 4096));
  const std::size_t n = e.n();
  const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
  e.measure("lastblock", "cluster" + std::to_string(kCluster) + "-ticket", 512, grid,
            [&] { CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, e.in(), n, chunk, e.out(), scratch)); });
}

// Stage 13's ticket kernel with other shapes: kBlock threads, kUnroll loads in flight per
// thread, up to `per_sm` blocks per SM, at least `min_packs` vectors per thread; a row of
// `mode`, named tBxT-uU-mM unless `name` is given. It runs on the stage's scratch, which
// every launch leaves ready for the next whatever its grid.
template <int kBlock, int kUnroll>
void run_shape(Experiment& e, int per_sm, int min_packs, const std::string& mode = "shapes",
               const std::string& name = "") {
  const auto kernel = g::single_pass_kernel<float, g::Sum, kBlock, kUnroll>;
  int resident = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kBlock, 0));
  per_sm = std::min(per_sm, resident);
  const std::size_t n = e.n();
  const std::size_t packs = g::Split<float>(e.in(), n).packs;
  const std::size_t per_block = static_cast<std::size_t>(kBlock) * min_packs;
  const std::size_t useful = std::max<std::size_t>(1, (packs + per_block - 1) / per_block);
  const auto grid =
      static_cast<unsigned>(std::min<std::size_t>(useful, static_cast<std::size_t>(per_sm) * e.device().sm_count));
  const std::size_t chunk = g::chunk_for<float, kBlock>(e.in(), n, grid);
  const std::string design = !name.empty() ? name
                                           : "t" + std::to_string(per_sm) + "x" + std::to_string(kBlock) + "-u" +
                                                 std::to_string(kUnroll) + "-m" + std::to_string(min_packs);
  e.measure(mode, design, kBlock, grid, [&e, kernel, grid, n, chunk] {
    kernel<<<grid, kBlock, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.stage_scratch(), g::Sum{});
    CUDA_CHECK_LAUNCH();
  });
}

// The loop of the lastblock and critical experiments: at n = 2^14 .. 2^22, stage 13 and
// its ticket kernel, then body(grid, chunk, scratch, run) on the ticket path's grid.
// run(design, kernel, diagnostic) times a kernel with the signature of the variants
// above, on `scratch`, zeroed before each design as the stage's workspace is once.
template <typename Body>
void over_ticket_sizes(Experiment& e, const std::string& mode, Body body) {
  const int sms = e.device().sm_count;
  g::Workspace ws;
  common::DeviceBuffer<unsigned char> own(1 << 20);
  for (int k = 14; k <= 22; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    stage13_and_ticket(e, mode, ws);
    const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
    const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
    const auto run = [&](const std::string& design, auto kernel, bool diagnostic) {
      CUDA_CHECK(cudaMemset(own.get(), 0, own.bytes()));
      e.measure(
          mode, design, 512, grid,
          [&] {
            kernel<<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), own.get());
            CUDA_CHECK_LAUNCH();
          },
          diagnostic);
    };
    body(grid, chunk, own.get(), run);
    measure_no_finish(e, mode, grid, chunk);
  }
}

// Stage 13's ticket kernel and the variants above, each on a scratch area of its own.
void lastblock_experiment(Experiment& e) {
  over_ticket_sizes(e, "lastblock", [&e](unsigned grid, std::size_t, unsigned char* scratch, const auto& run) {
    run("prefetch", prefetch_ticket_sum<512, g::kDefaultUnroll>, false);
    run("sector", sector_ticket_sum<512, g::kDefaultUnroll>, false);
    run("touch", touch_ticket_sum<512, g::kDefaultUnroll>, false);
    run("speculate", speculate_ticket_sum<512, g::kDefaultUnroll>, false);
    if (e.device().cc_major >= 9) {
      run_cluster_ticket<4>(e, scratch, grid);
      run_cluster_ticket<8>(e, scratch, grid);
      run_cluster_ticket<16>(e, scratch, grid);
    }
    run("hint256", hint_ticket_sum<512, g::kDefaultUnroll>, false);
    run("warp", warp_ticket_sum<512, g::kDefaultUnroll, false>, false);
    run("last-start", warp_ticket_sum<512, g::kDefaultUnroll, true>, false);
    run("store-atomic", store_atomic_sum<512, g::kDefaultUnroll>, true);
  });
}

// Stage 13's ticket kernel beside the critical-path designs, each on its own scratch.
void critical_experiment(Experiment& e) {
  over_ticket_sizes(e, "critical", [&e](unsigned, std::size_t, unsigned char*, const auto& run) {
    run("shuffle", other_sum_ticket<512, g::kDefaultUnroll, TwoRounds>, false);
    run("no-shuffle", other_sum_ticket<512, g::kDefaultUnroll, NoShuffle>, false);
    run("poll-start", poll_start_sum<512, g::kDefaultUnroll>, false);
    // the ticket kernel with 8 loads in flight, 2 blocks of 512 per SM
    run_shape<512, 8>(e, 2, 2, "critical", "u8-2x512");
  });
}

// Runs the instrumented kernel 101 times at each n (L2 flushed before each, as when
// timing) and prints the median of each phase. Diagnostic: not timed against CUB.
//   body-ns    first block's start to the last block's own sum (global timer)
//   spread-ns  first block's start to the last block's start
//   last-data  how often the block that took the last ticket had also finished its
//              own sum last
//   then the last block, in SM cycles: its own chunk and sum; its store, atomic and the
//   barrier that shares the ticket; reading the slots; adding them (thread 0's view, so
//   this includes waiting for the block's other threads); the finish from its own sum
//   to the result in ns; and how many slots it had to read again (mean over launches)
//   because the tag was not there yet
std::vector<common::Record> phases_experiment(Experiment& e, common::L2Flusher& flusher) {
  const int sms = e.device().sm_count;
  common::DeviceBuffer<unsigned char> own(1 << 20);
  CUDA_CHECK(cudaMemset(own.get(), 0, own.bytes()));
  common::DeviceBuffer<Stamps> stamps(4096);
  common::DeviceBuffer<long long> clocks(8);
  std::vector<common::Record> records;
  std::printf("%6s %5s %8s %9s %9s | last block, cycles: %6s %7s %6s %6s | %9s %7s  %s\n", "n", "grid", "body-ns",
              "spread-ns", "last-data", "data", "ticket", "slots", "add", "finish-ns", "re-read", "GHz");
  for (int k = 14; k <= 22; k += 2) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
    const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
    constexpr int kCols = 10;
    std::vector<std::vector<double>> cols(kCols);
    std::vector<Stamps> host(grid);
    long long c[8] = {};
    for (int rep = 0; rep < 101; ++rep) {
      flusher.flush(e.stream());
      phases_ticket_sum<512, g::kDefaultUnroll>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), own.get(), stamps.get(), clocks.get());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaStreamSynchronize(e.stream()));
      CUDA_CHECK(cudaMemcpy(host.data(), stamps.get(), grid * sizeof(Stamps), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(c, clocks.get(), sizeof c, cudaMemcpyDeviceToHost));
      unsigned long long first_start = ~0ull, last_start = 0, last_data = 0;
      for (const Stamps& st : host) {
        first_start = std::min(first_start, st.start);
        last_start = std::max(last_start, st.start);
        last_data = std::max(last_data, st.data);
      }
      const Stamps& lb = host.at(static_cast<std::size_t>(c[6]));
      const double ghz = static_cast<double>(c[1] - c[0]) / static_cast<double>(lb.data - lb.start);
      cols[0].push_back(static_cast<double>(last_data - first_start));
      cols[1].push_back(static_cast<double>(last_start - first_start));
      cols[2].push_back(lb.data == last_data ? 100.0 : 0.0);
      cols[3].push_back(static_cast<double>(c[1] - c[0]));  // data
      cols[4].push_back(static_cast<double>(c[2] - c[1]));  // ticket
      cols[5].push_back(static_cast<double>(c[4] - c[3]));  // slots
      cols[6].push_back(static_cast<double>(c[5] - c[4]));  // add
      cols[7].push_back(static_cast<double>(c[5] - c[1]) / ghz);
      cols[8].push_back(static_cast<double>(c[7]));
      cols[9].push_back(ghz);
    }
    std::vector<double> m(kCols);
    for (int j = 0; j < kCols; ++j) {
      std::vector<double> v = cols[j];
      std::sort(v.begin(), v.end());
      const bool mean = j == 2 || j == 8;
      m[j] = mean ? std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()) : v[v.size() / 2];
    }
    std::printf("%6s %5u %8.0f %9.0f %8.0f%% | %26.0f %7.0f %6.0f %6.0f | %9.0f %7.2f  %.2f\n",
                common::format_count(n).c_str(), grid, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9]);
    std::fflush(stdout);
    records.push_back({common::number_field("n", static_cast<double>(n)), common::number_field("grid", grid),
                       common::number_field("body_ns", m[0]), common::number_field("start_spread_ns", m[1]),
                       common::number_field("last_data_pct", m[2]), common::number_field("data_cycles", m[3]),
                       common::number_field("ticket_cycles", m[4]), common::number_field("slots_cycles", m[5]),
                       common::number_field("add_cycles", m[6]), common::number_field("finish_ns", m[7]),
                       common::number_field("rereads", m[8]), common::number_field("sm_ghz", m[9])});
  }
  return records;
}

// A bulk-copy design: kBlock threads, kStages pieces of kStageBytes in flight per block,
// at most `per_sm` blocks per SM (fewer if shared memory allows fewer), and at least
// 8 KiB per block so that a small n is not spread thinner than one piece a block.
template <int kBlock, int kStages, int kStageBytes>
void run_bulk(Experiment& e, int per_sm) {
  const auto kernel = bulk_sum<kBlock, kStages, kStageBytes>;
  constexpr int kSmem = kStages * kStageBytes;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  int resident = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kBlock, kSmem));
  if (resident < 1) throw std::runtime_error("bulk design does not fit on an SM");
  per_sm = std::min(per_sm, resident);
  const std::size_t n = e.n();
  const std::size_t packs = g::Split<float>(e.in(), n).packs;
  constexpr std::size_t kMinPacks = 8192 / 16;
  const std::size_t useful = std::max<std::size_t>(1, (packs + kMinPacks - 1) / kMinPacks);
  const auto grid =
      static_cast<unsigned>(std::min<std::size_t>(useful, static_cast<std::size_t>(per_sm) * e.device().sm_count));
  std::size_t chunk = (packs + grid - 1) / grid;
  chunk = (chunk + 7) / 8 * 8;  // whole 128-byte lines per block
  const std::string design = "bulk" + std::to_string(per_sm) + "x" + std::to_string(kBlock) + "-" +
                             std::to_string(kStages) + "x" + std::to_string(kStageBytes / 1024) + "K";
  e.measure("bulk", design, kBlock, grid, [&e, kernel, grid, n, chunk] {
    kernel<<<grid, kBlock, kSmem, e.stream()>>>(e.in(), n, chunk, e.out(), e.stage_scratch());
    CUDA_CHECK_LAUNCH();
  });
}

void bulk_experiment(Experiment& e) {
  if (e.device().cc_major < 9) throw std::runtime_error("the bulk experiment needs compute capability 9.0 or later");
  g::Workspace ws;
  for (int k = 14; k <= 24; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    stage13_and_ticket(e, "bulk", ws);
    run_bulk<512, 4, 32768>(e, 1);
    run_bulk<512, 8, 16384>(e, 1);
    run_bulk<1024, 6, 32768>(e, 1);
    run_bulk<256, 4, 16384>(e, 2);
    run_bulk<512, 3, 32768>(e, 2);
    run_bulk<256, 4, 8192>(e, 4);
    run_bulk<128, 4, 8192>(e, 8);
  }
}

void shapes_experiment(Experiment& e) {
  const int sms = e.device().sm_count;
  g::Workspace ws;
  for (int k = 16; k <= 24; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    e.measure("shapes", "stage13", 512, g::grid_for<float, g::Sum>(n, sms),
              [&] { g::reduce<float>(e.in(), n, e.out(), ws, e.stream()); });
    run_shape<512, 4>(e, 3, 2);  // the ticket path as it is
    run_shape<512, 4>(e, 3, 1);
    run_shape<512, 8>(e, 2, 2);
    run_shape<512, 8>(e, 2, 4);
    run_shape<256, 4>(e, 8, 1);
    run_shape<256, 4>(e, 8, 2);
    run_shape<256, 4>(e, 8, 4);
    run_shape<256, 8>(e, 8, 2);
    run_shape<1024, 4>(e, 2, 1);
  }
}

template <typename Kernel>
void run_tiles(Experiment& e, const std::string& design, Kernel kernel) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
  const unsigned grid = static_cast<unsigned>(per_sm * e.device().sm_count);
  const std::size_t n = e.n();
  e.measure("tiles", design, 256, grid, [&e, kernel, grid, n] {
    kernel<<<grid, 256, 0, e.stream()>>>(e.in(), n, e.tile_sums(), e.ticket(), e.out());
    CUDA_CHECK_LAUNCH();
  });
}

void tiles_experiment(Experiment& e) {
  g::Workspace ws;
  for (int k : {26, 28, 30}) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    e.measure("tiles", "stage13", 512, g::grid_for<float, g::Sum>(n, e.device().sm_count),
              [&] { g::reduce<float>(e.in(), n, e.out(), ws, e.stream()); });
    run_tiles(e, "warp-8192-fixed", warp_tiles<8192, false>);
    run_tiles(e, "warp-16384-counter", warp_tiles<16384, true>);
    run_tiles(e, "team-32768-counter", team_tiles<32768>);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: single_pass_variants finish|lastblock|critical|phases|bulk|shapes|tiles [--csv FILE]\n"
      "  finish  n = 2^14..2^22: stage13, ticket, fence, acqrel, flag, cluster8/16, no-finish (diagnostic)\n"
      "  lastblock n = 2^14..2^22: other ways for the ticket kernel's last block to get the partials:\n"
      "          prefetch, sector, touch, speculate, clusterC-ticket, hint256, warp, last-start,\n"
      "          store-atomic (diagnostic)\n"
      "  critical n = 2^14..2^22: shorter paths from the last block's data to the result:\n"
      "          shuffle, no-shuffle, poll-start, u8-2x512, no-finish (diagnostic)\n"
      "  phases  n = 2^14..2^22 (diagnostic): where the ticket kernel's finish spends its time, from clocks\n"
      "  bulk    n = 2^14..2^24: bulk copies (TMA) into shared memory, against the ticket (Hopper only)\n"
      "  shapes  n = 2^16..2^24: the ticket kernel with other blocks, loads in flight and grids\n"
      "  tiles   n = 2^26, 2^28, 2^30: stage 14's tile designs, with stage 13\n"
      "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.\n";
  return common::run_program("single_pass_variants", [&] {
    std::string mode, csv;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::cout << usage;
        return 0;
      }
      if (a == "--csv" && i + 1 < argc) {
        csv = argv[++i];
      } else if (mode.empty() && (a == "finish" || a == "lastblock" || a == "critical" || a == "phases" ||
                                  a == "tiles" || a == "bulk" || a == "shapes")) {
        mode = a;
      } else {
        throw common::UsageError(
            "unexpected argument '" + a +
            "': name one experiment: finish, lastblock, critical, phases, bulk, shapes or tiles (--help).");
      }
    }
    if (mode.empty())
      throw common::UsageError(
          "name an experiment: finish, lastblock, critical, phases, bulk, shapes or tiles (--help).");
    if (!csv.empty()) common::require_writable(csv, "--csv");
    const common::DeviceInfo device = common::query_device(0);  // NoDeviceError without a GPU
    const std::size_t max_n = mode == "finish" || mode == "lastblock" || mode == "critical" || mode == "phases"
                                  ? std::size_t{1} << 22
                              : mode == "bulk" || mode == "shapes" ? std::size_t{1} << 24
                                                                   : std::size_t{1} << 30;
    Experiment e(device, max_n);
    if (mode == "phases") {
      std::printf("phases on %s (commit %s); medians of 101 launches, L2 flushed (read) before each\n",
                  device.name.c_str(), common::git_commit().c_str());
    } else {
      std::printf("%s on %s; us = median, L2 flushed (read) before each repetition\n", mode.c_str(),
                  device.name.c_str());
      std::printf("%-8s %-20s %6s %5s %6s %10s %10s %7s  %s\n", "mode", "design", "n", "block", "grid", "us", "cub-us",
                  "vs-CUB", "check");
    }
    std::vector<common::Record> phase_records;
    if (mode == "finish")
      finish_experiment(e);
    else if (mode == "lastblock")
      lastblock_experiment(e);
    else if (mode == "critical")
      critical_experiment(e);
    else if (mode == "phases") {
      common::L2Flusher flusher(device.l2_bytes);
      phase_records = phases_experiment(e, flusher);
    } else if (mode == "bulk")
      bulk_experiment(e);
    else if (mode == "shapes")
      shapes_experiment(e);
    else
      tiles_experiment(e);
    if (!csv.empty()) {
      std::vector<common::Record> records = phase_records;
      for (const Row& r : e.rows()) {
        records.push_back({common::text_field("key", r.design), common::number_field("n", static_cast<double>(r.n)),
                           common::number_field("block", r.block), common::number_field("grid", r.grid),
                           common::number_field("median_us", r.us), common::number_field("cub_us", r.cub_us),
                           common::number_field("vs_cub", r.cub_us / r.us), common::text_field("check", r.check)});
      }
      common::Metadata meta = common::base_metadata(device);
      meta.push_back({"experiment", mode});
      meta.push_back({"l2_flush", "read"});
      common::write_file_atomically(csv, common::to_csv(meta, records));
    }
    return e.all_ok() ? 0 : 1;
  });
}
