// The one dot-product kernel every variant instantiates.
//
// Structure: the last-block single pass of stage 13 (a fence, then an atomic ticket; the
// block that draws the last ticket adds the partials), with two inputs and the
// multiply fused into the loads' consumer. Only the block sum comes from the generic
// header, single_pass/single_pass.cuh.
//   1. Grid-stride over 16-byte chunks of x and y. Each thread first issues kUnroll
//      chunk loads per vector, a grid stride apart, and only then folds them into
//      kUnroll independent accumulators, so 2 x kUnroll x 16 bytes are in flight per
//      thread. The grid is occupancy x SMs blocks (all resident at once). A short
//      guarded step takes the last few chunks, so the main loop carries no bounds
//      checks.
//   2. The n mod per_chunk elements past the last whole chunk (the tail) go one per
//      thread to the first threads of the grid.
//   3. Each thread combines its accumulators, the block sums them with warp
//      shuffles, and thread 0 writes the block's partial.
//   4. The last block to finish (a counter in scratch memory, taken with atomicAdd
//      after a fence) sums the partials in a fixed order and writes the result, then
//      resets the counter. One kernel, no memset, and the result does not depend on
//      which block finished last: it is deterministic for a given grid.
//
// A variant provides a traits struct T with:
//   Element           the stored type (float, __half, __nv_bfloat16, std::int8_t)
//   Acc               one accumulator (float, float2, __half2, int)
//   Partial           what threads, warps and blocks pass on (float, __half, int)
//   Result            what is written to DotArgs::out (float or int)
//   kShape            its DotShape (for the error bound)
//   zero_acc(), fold(Acc&, uint4 x, uint4 y), fold_one(Acc&, Element, Element),
//   add_acc(Acc, Acc), to_partial(Acc), zero_partial(), add(Partial, Partial),
//   to_result(Partial)
// Partial must also work with reduction::generic::Sum (a + b, and T(0) as zero).
// Only fold and fold_one touch the element type; everything else is shared.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "device_info.hpp"
#include "single_pass.cuh"
#include "variant.hpp"

namespace mixed_precision {

// The 16 bytes of a chunk, one 32-bit word at a time, as the pair type P (__half2,
// __nv_bfloat162): a register move, no memory traffic.
template <typename P>
__device__ __forceinline__ P bits_as(unsigned word) {
  static_assert(sizeof(P) == 4, "a pair of 16-bit values");
  P p;
  memcpy(&p, &word, sizeof p);
  return p;
}

// Threads, warps and blocks combine their partials with the generic single-pass
// reduction's block_reduce (single_pass/single_pass.cuh): warp shuffles, one value
// per warp in shared memory, a last warp shuffle. Lanes past the number of warps
// add exact zeros, which change nothing. Every thread of the block must call it;
// thread 0 gets the sum.
template <typename T>
__device__ __forceinline__ typename T::Partial block_sum(typename T::Partial v) {
  return reduction::generic::block_reduce<kBlock>(v, reduction::generic::Sum{});
}

template <typename T>
__global__ void __launch_bounds__(kBlock)
    dot_product(const typename T::Element* __restrict__ x, const typename T::Element* __restrict__ y, std::size_t n,
                typename T::Partial* __restrict__ partials, unsigned* __restrict__ counter,
                typename T::Result* __restrict__ out) {
  constexpr int kPerChunk = static_cast<int>(kLoadBytes / sizeof(typename T::Element));
  static_assert(kPerChunk == T::kShape.per_chunk, "the shape matches the element size");
  const std::size_t chunks = n / kPerChunk;
  const uint4* xc = reinterpret_cast<const uint4*>(x);
  const uint4* yc = reinterpret_cast<const uint4*>(y);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  const std::size_t thread = blockIdx.x * static_cast<std::size_t>(kBlock) + threadIdx.x;

  typename T::Acc acc[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) acc[k] = T::zero_acc();

  // Main loop: every one of the kUnroll chunks is in range, so the loads need no
  // guard and all 2 x kUnroll of them are issued before the first is used.
  std::size_t c = thread;
  for (; c + (kUnroll - 1) * stride < chunks; c += kUnroll * stride) {
    uint4 a[kUnroll];
    uint4 b[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      a[k] = __ldg(xc + c + k * stride);
      b[k] = __ldg(yc + c + k * stride);
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) T::fold(acc[k], a[k], b[k]);
  }
  // At most kUnroll - 1 chunks are left for this thread; chunk k goes to
  // accumulator k, so each accumulator receives exactly the chunks it would have
  // received had the main loop gone on (the depth in tolerance.hpp counts them).
#pragma unroll
  for (int k = 0; k < kUnroll - 1; ++k)
    if (c + k * stride < chunks) T::fold(acc[k], __ldg(xc + c + k * stride), __ldg(yc + c + k * stride));

  const std::size_t tail = n - chunks * kPerChunk;  // fewer than kPerChunk elements
  if (thread < tail) T::fold_one(acc[0], x[chunks * kPerChunk + thread], y[chunks * kPerChunk + thread]);

  static_assert(kUnroll == 4, "the pairwise combination below is written for four accumulators");
  const typename T::Acc combined = T::add_acc(T::add_acc(acc[0], acc[1]), T::add_acc(acc[2], acc[3]));
  const typename T::Partial block_total = block_sum<T>(T::to_partial(combined));

  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_total;
    __threadfence();  // the partial is visible to every block before the ticket is taken
    is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;

  // The last block: every partial is written. Sum them in a fixed order (thread t
  // takes partials t, t + kBlock, ...), then across the block. __ldcg reads through
  // L2, where the other blocks' writes are, never a stale L1 line.
  __threadfence();
  typename T::Partial v = T::zero_partial();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) v = T::add(v, __ldcg(partials + b));
  v = block_sum<T>(v);
  if (threadIdx.x == 0) {
    *out = T::to_result(v);
    *counter = 0;  // ready for the next launch, with no memset in between
  }
}

// Blocks resident at once on the device, capped so every thread has up to kUnroll
// chunks to load (a small n does not launch blocks with nothing to do).
template <typename T>
unsigned plan_grid(std::size_t n, const common::DeviceInfo& device) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dot_product<T>, kBlock, 0));
  const std::size_t resident =
      static_cast<std::size_t>(std::max(per_sm, 1)) * static_cast<std::size_t>(device.sm_count);
  const std::size_t chunks = n / static_cast<std::size_t>(T::kShape.per_chunk);
  const std::size_t per_block = static_cast<std::size_t>(kBlock) * kUnroll;
  const std::size_t wanted = (chunks + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(resident, wanted)));
}

template <typename T>
void launch_dot(const DotArgs& a) {
  // The kernel reads x and y as 16-byte vectors from their first element: a pointer one
  // element past a 16-byte boundary would fault in the kernel, so it is refused here.
  if (reinterpret_cast<std::uintptr_t>(a.x) % kLoadBytes != 0 ||
      reinterpret_cast<std::uintptr_t>(a.y) % kLoadBytes != 0)
    throw std::invalid_argument("mixed_precision dot product: x and y must be 16-byte aligned (x % 16 = " +
                                std::to_string(reinterpret_cast<std::uintptr_t>(a.x) % kLoadBytes) +
                                ", y % 16 = " + std::to_string(reinterpret_cast<std::uintptr_t>(a.y) % kLoadBytes) +
                                " bytes); cudaMalloc's pointers are.");
  auto* bytes = static_cast<unsigned char*>(a.scratch);
  dot_product<T><<<a.grid, kBlock, 0, a.stream>>>(
      static_cast<const typename T::Element*>(a.x), static_cast<const typename T::Element*>(a.y), a.n,
      reinterpret_cast<typename T::Partial*>(bytes + kCounterBytes), reinterpret_cast<unsigned*>(bytes),
      static_cast<typename T::Result*>(a.out));
  CUDA_CHECK_LAUNCH();
}

}  // namespace mixed_precision
