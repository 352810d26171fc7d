// The pieces several experiments share: the block's float sum and chunk sum (the
// generic library's, single_pass/single_pass.cuh), the pieces of the tagged ticket
// (stage 14's finish: {tag, value} slots, a relaxed atomic ticket, the last block
// adds the slots), the no-finish diagnostic, and the rows that put stage 15 and its
// ticket kernel beside a design.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "cuda_check.hpp"
#include "lab.hpp"
#include "single_pass.cuh"
#include "workspace_layout.hpp"

namespace lab {

namespace g = reduction::generic;

// ---- device pieces ----------------------------------------------------------------------------

// The block's float sum in one round (one barrier, then warp 0 alone adds): the library's
// block_reduce_one_round, the same additions in the same order as stage 13's
// block_sum_one_round (reduction/primitives.cuh), not stage 08's two-level block_sum.
template <int kBlock>
__device__ __forceinline__ float block_sum_one_round(float v) {
  return g::block_reduce_one_round<kBlock>(v, g::Sum{});
}

// One block's chunk of float4s, from blockIdx.x * chunk, added up; thread 0 gets the
// block's value (the ticket kernel's first two steps).
template <int kBlock, int kUnroll>
__device__ __forceinline__ float chunk_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk) {
  return g::block_chunk_reduce<float, g::Sum, kBlock, kUnroll>(in, n, chunk, g::Sum{});
}

// The designs compared here keep a launch-number tag: a launch's tag is one more than the
// last launch's (kept at kLaunchTagOffset, 0 skipped), and a slot counts as written when it
// carries it. The stages and the library no longer do this (their last block empties
// each slot after reading it, chapter 14): a slot a smaller grid left behind can carry
// an old tag that comes round again after 2^32 launches. Each experiment runs on a
// scratch area of its own per size, so its grid never changes and the tags cannot alias.
// The offsets are the workspace layout that the stages and the library share
// (single_pass/workspace_layout.hpp), which keeps the tag's word for the lab.
using reduction::workspace::kLaunchTagOffset;
using reduction::workspace::kSlotsOffset;

// The launch's tag, read by thread 0 (others get 0).
__device__ __forceinline__ unsigned read_launch_tag(const unsigned char* scratch) {
  unsigned tag = 0;
  if (threadIdx.x == 0) {
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(tag) : "l"(scratch + kLaunchTagOffset) : "memory");
    tag = tag + 1 == 0 ? 1 : tag + 1;
  }
  return tag;
}

// {tag, value} as one word.
__device__ __forceinline__ unsigned long long tag_value(unsigned tag, float v) {
  return (static_cast<unsigned long long>(tag) << 32) | __float_as_uint(v);
}

__device__ __forceinline__ unsigned long long* slots_of(unsigned char* scratch) {
  return reinterpret_cast<unsigned long long*>(scratch + kSlotsOffset);
}

// One block's {tag, value} word, stored device-wide (st.relaxed.gpu).
__device__ __forceinline__ void store_slot(unsigned long long* slots, unsigned index, unsigned tag, float v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slots + index), "l"(tag_value(tag, v)) : "memory");
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
  *reinterpret_cast<unsigned*>(scratch + kLaunchTagOffset) = tag;
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
  return block_sum_one_round<kBlock>(thread_collect<kBlock>(slots, stride, expected, first));
}

// "flag" (experiments finish and stream): no ticket. Every block but block 0 stores its
// value (thread 0's `v`) with the launch number as one word and leaves; block 0 adds its
// own value and each other block's word, read until it carries `launch`, in index order,
// and writes the sum. Only block 0 waits. Every thread of the block must call it.
template <int kBlock>
__device__ __forceinline__ void flag_finish(float v, unsigned long long* words, unsigned launch, float* out) {
  if (blockIdx.x != 0) {
    if (threadIdx.x == 0) store_slot(words, blockIdx.x, launch, v);
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
    while (static_cast<unsigned>(word >> 32) != launch) word = load_slot(words, b);
    w += g::untag_value<float>(word);
  }
  w = block_sum_one_round<kBlock>(w);
  if (threadIdx.x == 0) *out = w;
}

// "no-finish": DIAGNOSTIC, wrong sum. Every block stores its partial, as every design
// does, and block 0 writes its own as the result: nobody adds the rest. The time a
// perfect combine would take.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock) no_finish_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                                                        float* __restrict__ out, float* __restrict__ partials) {
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;  // the store every design makes, without the combine
    if (blockIdx.x == 0) *out = v;
  }
}

// ---- rows ----------------------------------------------------------------------------------------

// The two reference rows: "stage15", the generic library's reduce() as stage 15 takes
// it (one block up to 2^14, one cluster on Hopper up to 2^17, else the tagged ticket),
// and "ticket", its tagged ticket kernel (stage 14's finish) on the ticket path's grid
// at every n.
inline void stage15_and_ticket(Experiment& e, const g::Workspace& ws) {
  const std::size_t n = e.n();
  const int sms = e.device().sm_count;
  e.measure("stage15", 512, g::grid_for<float, g::Sum>(n, sms),
            [&] { g::reduce<float>(e.in(), n, e.out(), ws, e.stream()); });
  const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
  const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
  e.measure("ticket", 512, grid, [&] {
    g::single_pass_kernel<float, g::Sum, 512, g::kDefaultUnroll>
        <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.ticket_scratch(), g::Sum{});
    CUDA_CHECK_LAUNCH();
  });
}

// The no-finish diagnostic on the ticket path's grid and chunks.
inline void measure_no_finish(Experiment& e, unsigned grid, std::size_t chunk) {
  const std::size_t n = e.n();
  e.measure(
      "no-finish", 512, grid,
      [&] {
        no_finish_sum<512, g::kDefaultUnroll><<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.partials());
        CUDA_CHECK_LAUNCH();
      },
      true);
}

// The ticket kernel with another shape: kBlock threads, kUnroll loads in flight per
// thread, up to `per_sm` blocks per SM, at least `min_packs` vectors per thread; a row
// named tBxT-uU-mM unless `name` is given. It runs on the ticket kernel's scratch,
// which every launch leaves ready for the next whatever its grid.
template <int kBlock, int kUnroll>
void run_shape(Experiment& e, int per_sm, int min_packs, const std::string& name = "") {
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
  e.measure(design, kBlock, grid, [&e, kernel, grid, n, chunk] {
    kernel<<<grid, kBlock, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.ticket_scratch(), g::Sum{});
    CUDA_CHECK_LAUNCH();
  });
}

// The loop of the lastblock and critical experiments: at n = 2^14 .. 2^22, stage 15 and
// its ticket kernel, then body(grid, chunk, scratch, run) on the ticket path's grid, then
// no-finish. run(design, kernel, diagnostic) times a kernel of the signature
// (in, n, chunk, out, scratch) on `scratch`, zeroed before each design as a stage's
// workspace is once.
template <typename Body>
void over_ticket_sizes(Experiment& e, Body body) {
  const int sms = e.device().sm_count;
  g::Workspace ws;
  common::DeviceBuffer<unsigned char> own(1 << 20);
  for (int k = 14; k <= 22; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    stage15_and_ticket(e, ws);
    const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
    const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
    const auto run = [&](const std::string& design, auto kernel, bool diagnostic) {
      CUDA_CHECK(cudaMemset(own.get(), 0, own.bytes()));
      e.measure(
          design, 512, grid,
          [&] {
            kernel<<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), own.get());
            CUDA_CHECK_LAUNCH();
          },
          diagnostic);
    };
    body(grid, chunk, own.get(), run);
    measure_no_finish(e, grid, chunk);
  }
}

}  // namespace lab
