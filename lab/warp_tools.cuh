// The warp step of a block sum, written with each of the warp-level tools that
// lab/warp_tools.cu compares (and tests/gpu/test_warp_tools.cu checks).
//
// Every kernel has stage 08's shape: each thread adds its elements in a grid-stride loop
// with four accumulators (stage 07's loads), each warp adds its 32 values, lane 0 of
// each warp stores one value in shared memory, one barrier, and the first warp adds
// those; a second launch of one block adds the blocks' partial sums. Only the warp step
// changes:
//
//   shfl        five __shfl_down_sync steps over all 32 lanes (stage 08's warp_sum for
//               floats); a thread with no element takes part holding 0
//   cg-reduce   cooperative_groups::reduce over a 32-thread tile
//   reduce-add  __reduce_add_sync: one instruction (redux.sync) adds the warp's 32-bit
//               integers; compute capability 8.0 or later, integers only
//   ballot      threads with no element sit the sum out: __ballot_sync names the lanes
//               that hold elements, and only they add, with that mask (a guarded shuffle
//               tree for floats, __reduce_add_sync for integers)
//
// Chapters: chapters/08_warp_shuffles.md and chapters/09_cooperative_groups.md.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.hpp"
#include "inputs.hpp"
#include "kernel_image.hpp"
#include "reduction/primitives.cuh"
#include "verify.hpp"

namespace warp_tools {

namespace cg = cooperative_groups;

enum class WarpStep { shfl, cg_reduce, reduce_add, ballot };

constexpr int kBlock = 256;
constexpr int kLoads = 4;  // accumulators per thread, as in stages 07 and 08
constexpr unsigned kWarps = kBlock / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Stage 08's five shuffle steps on 32-bit integers (reduction::warp_sum is the float one).
__device__ __forceinline__ unsigned warp_sum_u32(unsigned v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

// The sum of the lanes named in `mask`, in the lowest of them. The lanes must be a
// prefix 0 .. k-1 of the warp, and only they call it: every shuffle names exactly the
// lanes that execute it. A lane whose partner (lane + offset) is outside the prefix gets
// an undefined value from the shuffle and does not add it.
__device__ __forceinline__ float prefix_warp_sum(float v, unsigned mask) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned lanes = __popc(mask);
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_down_sync(mask, v, offset);
    if (lane + offset < lanes) v += other;
  }
  return v;
}

// __reduce_add_sync exists from compute capability 8.0; the host launches these kernels
// only when their code was compiled for 8.0 or later (Design::runs_here below): a build
// for sm_75 compiles the __trap() instead.
__device__ __forceinline__ unsigned redux_add(unsigned mask, unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  (void)mask;
  (void)v;
  __trap();
  return 0;
#else
  return __reduce_add_sync(mask, v);
#endif
}

// One warp's sum with the chosen tool; the lowest lane of `mask` gets it (cg-reduce and
// reduce-add give it to every lane). `mask` is the lanes that call it: all 32 except
// for the ballot step.
template <WarpStep kStep, typename T>
__device__ __forceinline__ T warp_step(T v, unsigned mask) {
  if constexpr (kStep == WarpStep::shfl) {
    if constexpr (std::is_same_v<T, float>)
      return reduction::warp_sum(v);
    else
      return warp_sum_u32(v);
  } else if constexpr (kStep == WarpStep::cg_reduce) {
    const cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    return cg::reduce(tile, v, cg::plus<T>());
  } else if constexpr (kStep == WarpStep::reduce_add) {
    static_assert(std::is_same_v<T, unsigned>, "__reduce_add_sync adds 32-bit integers only");
    return redux_add(kFullMask, v);
  } else {
    if constexpr (std::is_same_v<T, float>)
      return prefix_warp_sum(v, mask);
    else
      return redux_add(mask, v);
  }
}

// Thread 0 gets the block's sum. Every thread of the block calls it; the first
// `active` threads hold elements (the others hold 0).
template <WarpStep kStep, typename T>
__device__ __forceinline__ T block_step(T v, unsigned active) {
  __shared__ T warp_sums[kWarps];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if constexpr (kStep != WarpStep::ballot) {
    // Padding: every lane takes part, and 0 (the identity of +) stands in for a lane
    // with no element, so the full mask is right.
    v = warp_step<kStep>(v, kFullMask);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {  // the whole first warp enters
      v = lane < kWarps ? warp_sums[lane] : T{0};
      v = warp_step<kStep>(v, kFullMask);
    }
  } else {
    // Every lane of the warp executes the ballot; the mask it returns names the lanes
    // that hold elements, which are the only ones to enter the branch and the sum.
    const bool holds = threadIdx.x < active;
    const unsigned mask = __ballot_sync(kFullMask, holds);
    if (holds) {
      v = warp_step<kStep>(v, mask);
      if (lane == 0) warp_sums[warp] = v;
    }
    __syncthreads();  // outside the branch: every thread of the block reaches it
    if (warp == 0) {
      const unsigned warps = (active + 31) / 32;  // the warps that stored a value
      const bool has_value = lane < warps;
      const unsigned first_mask = __ballot_sync(kFullMask, has_value);
      if (has_value) v = warp_step<kStep>(warp_sums[lane], first_mask);
    }
  }
  return v;
}

// One partial sum per block into out[blockIdx.x]. The grid has at most ceil(n / kBlock)
// blocks, so every block holds at least one element.
template <WarpStep kStep, typename T>
__global__ void __launch_bounds__(kBlock) block_sums(const T* __restrict__ in, std::size_t n, T* __restrict__ out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(kBlock);
  std::size_t i = first + threadIdx.x;
  T sum[kLoads] = {};
  for (; i + (kLoads - 1) * stride < n; i += kLoads * stride)
#pragma unroll
    for (int k = 0; k < kLoads; ++k) sum[k] += in[i + k * stride];
  for (; i < n; i += stride) sum[0] += in[i];  // at most kLoads - 1 elements are left
  T v = sum[0];
#pragma unroll
  for (int k = 1; k < kLoads; ++k) v += sum[k];
  const unsigned active = n > first ? static_cast<unsigned>(std::min<std::size_t>(kBlock, n - first)) : 0u;
  v = block_step<kStep>(v, active);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ---- host --------------------------------------------------------------------------------

// Enough blocks to fill the GPU, but no more than one element per thread: below
// sm_count x resident x kBlock elements the last block has threads, and warps, with
// nothing to add.
template <WarpStep kStep, typename T>
unsigned plan_grid(std::size_t n, int sm_count) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, block_sums<kStep, T>, kBlock, 0));
  const std::size_t resident = static_cast<std::size_t>(std::max(per_sm, 1)) * static_cast<std::size_t>(sm_count);
  const std::size_t useful = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(resident, useful)));
}

// Both launches on `stream`: the blocks' partial sums into `partials` (at least `grid`
// elements), then one block adds them into *out; one launch straight into *out when
// grid is 1.
template <WarpStep kStep, typename T>
void launch_sum(const T* in, std::size_t n, T* out, T* partials, unsigned grid, cudaStream_t stream) {
  block_sums<kStep, T><<<grid, kBlock, 0, stream>>>(in, n, grid > 1 ? partials : out);
  CUDA_CHECK_LAUNCH();
  if (grid > 1) {
    block_sums<kStep, T><<<1, kBlock, 0, stream>>>(partials, grid, out);
    CUDA_CHECK_LAUNCH();
  }
}

// The float sums' error depth (common/verify.hpp): stage 08's order, the same for every
// warp step here (each adds a warp's values in a tree of depth 5 or less).
inline std::size_t float_depth(std::size_t n, unsigned grid) {
  const std::size_t threads = static_cast<std::size_t>(grid) * kBlock;
  const std::size_t second = grid > 1 ? common::blocked_depth(grid, kBlock) + kLoads : 0;
  return common::blocked_depth(n, threads) + kLoads + second;
}

enum class Element { f32, u32 };

// One row of the comparison. `launch` takes device pointers to the element type
// (float or unsigned); `partials` holds at least grid(n, sm_count) elements.
struct Design {
  std::string key;
  Element element;
  bool needs_sm80;
  // False when the design needs sm_80 and its kernel's code was compiled for an older
  // architecture (chosen by the kernel image, not by the GPU: common/kernel_image.hpp).
  std::function<bool()> runs_here;
  std::function<unsigned(std::size_t n, int sm_count)> grid;
  std::function<void(const void* in, std::size_t n, void* out, void* partials, unsigned grid, cudaStream_t stream)>
      launch;
};

template <WarpStep kStep, typename T>
Design make_design(const char* name, bool needs_sm80) {
  const Element element = std::is_same_v<T, float> ? Element::f32 : Element::u32;
  return {std::string(element == Element::f32 ? "f32-" : "u32-") + name,
          element,
          needs_sm80,
          [needs_sm80] { return !needs_sm80 || common::compiled_arch_of(block_sums<kStep, T>) >= 80; },
          plan_grid<kStep, T>,
          [](const void* in, std::size_t n, void* out, void* partials, unsigned grid, cudaStream_t stream) {
            launch_sum<kStep, T>(static_cast<const T*>(in), n, static_cast<T*>(out), static_cast<T*>(partials), grid,
                                 stream);
          }};
}

// Every design, floats first; each element type starts with its shfl row, the one the
// others are compared with.
inline std::vector<Design> designs() {
  return {make_design<WarpStep::shfl, float>("shfl", false),
          make_design<WarpStep::cg_reduce, float>("cg-reduce", false),
          make_design<WarpStep::ballot, float>("ballot", false),
          make_design<WarpStep::shfl, unsigned>("shfl", false),
          make_design<WarpStep::cg_reduce, unsigned>("cg-reduce", false),
          make_design<WarpStep::reduce_add, unsigned>("reduce-add", true),
          make_design<WarpStep::ballot, unsigned>("ballot", true)};
}

// The integer input: element i is the top 32 bits of common::hash64(seed, i), every value
// from 0 to 2^32 - 1 equally likely. Sums wrap modulo 2^32 (unsigned arithmetic), so
// every order gives the same exact result and the host's is the reference.
inline std::vector<unsigned> make_u32_input(std::size_t n, std::uint64_t seed) {
  std::vector<unsigned> values(n);
  common::parallel_chunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) values[i] = static_cast<unsigned>(common::hash64(seed, i) >> 32);
  });
  return values;
}

// The exact sum (modulo 2^32) of the first n values.
inline unsigned u32_reference(const std::vector<unsigned>& values, std::size_t n) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += values[i];
  return sum;
}

}  // namespace warp_tools
