// Stages 01 and 02: a whole-array scan built from a block-level tree scan.
//
// scan-then-add: each block scans its tile of 1024 values in shared memory and writes
// the tile's total; the totals are scanned the same way (recursively, until one tile is
// left), and a last pass adds each tile's offset, the scanned total of the tiles before
// it, to its values. For n = 2^30: three levels, five launches, and the outputs written
// twice (4 x n x 4 bytes of traffic where a scan needs 2 x n x 4).
//
// The tile scan is the two-sweep tree of access_patterns/08_block_scan.cu
// (chapters/25_shared_memory_and_atomics.md): the up-sweep leaves the tile's total in
// the last slot, the down-sweep turns the tree into exclusive sums; an inclusive scan
// adds each thread's own values back. kPad (stage 02) stores value i at slot i + i / 32.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda_check.hpp"
#include "dispatch.hpp"

namespace scan {

constexpr unsigned kTreeBlock = 512;
constexpr unsigned kTreeTile = 2 * kTreeBlock;

template <bool kPad>
__device__ __forceinline__ unsigned tree_slot(unsigned i) {
  return kPad ? i + i / 32 : i;
}

// in may equal out: a block reads its whole tile before it writes.
template <typename T, bool kInclusive, bool kPad>
__global__ void __launch_bounds__(kTreeBlock) tree_tile_scan(const T* in, T* out, std::size_t n, T* tile_totals) {
  __shared__ T s[kTreeTile + kTreeTile / 32];
  const std::size_t start = static_cast<std::size_t>(blockIdx.x) * kTreeTile;
  const unsigned i0 = threadIdx.x;
  const unsigned i1 = threadIdx.x + kTreeBlock;
  const T own0 = start + i0 < n ? in[start + i0] : T(0);
  const T own1 = start + i1 < n ? in[start + i1] : T(0);
  s[tree_slot<kPad>(i0)] = own0;
  s[tree_slot<kPad>(i1)] = own1;

  unsigned d = 1;  // up-sweep: pairs d apart, d = 1, 2, ..., 512
  for (unsigned active = kTreeTile / 2; active > 0; active /= 2, d *= 2) {
    __syncthreads();
    if (threadIdx.x < active) {
      const unsigned a = d * (2 * threadIdx.x + 1) - 1;
      s[tree_slot<kPad>(a + d)] += s[tree_slot<kPad>(a)];
    }
  }
  if (threadIdx.x == 0) {  // this thread made the last up-sweep step: the total is here
    if (tile_totals != nullptr) tile_totals[blockIdx.x] = s[tree_slot<kPad>(kTreeTile - 1)];
    s[tree_slot<kPad>(kTreeTile - 1)] = T(0);
  }
  for (unsigned active = 1; active < kTreeTile; active *= 2) {  // down-sweep
    d /= 2;
    __syncthreads();
    if (threadIdx.x < active) {
      const unsigned a = d * (2 * threadIdx.x + 1) - 1;
      const T left = s[tree_slot<kPad>(a)];
      s[tree_slot<kPad>(a)] = s[tree_slot<kPad>(a + d)];
      s[tree_slot<kPad>(a + d)] += left;
    }
  }
  __syncthreads();
  const T v0 = kInclusive ? s[tree_slot<kPad>(i0)] + own0 : s[tree_slot<kPad>(i0)];
  const T v1 = kInclusive ? s[tree_slot<kPad>(i1)] + own1 : s[tree_slot<kPad>(i1)];
  if (start + i0 < n) out[start + i0] = v0;
  if (start + i1 < n) out[start + i1] = v1;
}

// Adds offsets[t] to the values of tile t, for the tiles from 1 on (block b: tile b + 1).
template <typename T>
__global__ void __launch_bounds__(256) add_tile_offsets(T* out, std::size_t n, const T* offsets) {
  const std::size_t tile = blockIdx.x + 1ull;
  const T offset = offsets[tile];
  for (unsigned i = threadIdx.x; i < kTreeTile; i += 256) {
    const std::size_t e = tile * kTreeTile + i;
    if (e < n) out[e] = offset + out[e];
  }
}

// Scratch values the scan of n values needs: the tile totals of every level.
inline std::size_t tree_scratch_values(std::size_t n) {
  const std::size_t tiles = ceil_div(n, kTreeTile);
  return tiles > 1 ? tiles + tree_scratch_values(tiles) : 0;
}

// Levels of the recursion (1 when one tile holds everything).
inline std::size_t tree_levels(std::size_t n) { return n <= kTreeTile ? 1 : 1 + tree_levels(ceil_div(n, kTreeTile)); }

template <typename T, bool kInclusive, bool kPad>
void tree_scan(const T* in, T* out, std::size_t n, T* scratch, cudaStream_t stream) {
  const std::size_t tiles = ceil_div(n, kTreeTile);
  T* totals = tiles > 1 ? scratch : nullptr;
  tree_tile_scan<T, kInclusive, kPad><<<static_cast<unsigned>(tiles), kTreeBlock, 0, stream>>>(in, out, n, totals);
  CUDA_CHECK_LAUNCH();
  if (tiles == 1) return;
  tree_scan<T, false, kPad>(totals, totals, tiles, scratch + tiles, stream);  // offsets, in place
  add_tile_offsets<T><<<static_cast<unsigned>(tiles - 1), 256, 0, stream>>>(out, n, totals);
  CUDA_CHECK_LAUNCH();
}

template <bool kPad>
ScanPlan tree_plan(std::size_t n) {
  ScanPlan p;
  p.grid = static_cast<unsigned>(ceil_div(n, kTreeTile));
  p.scratch_bytes = 4 * tree_scratch_values(n);
  // Per level, a value passes through at most 10 up-sweep and 10 down-sweep additions,
  // one more for an inclusive scan and one when its tile's offset is added.
  p.depth.base = 22 * tree_levels(n);
  return p;
}

template <bool kPad>
void tree_launch(const ScanArgs& a, const char* stage) {
  require_scratch(a, 4 * tree_scratch_values(a.n), stage);
  dispatch(a.type, a.kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    tree_scan<T, decltype(tag)::inclusive, kPad>(static_cast<const T*>(a.in), static_cast<T*>(a.out), a.n,
                                                 static_cast<T*>(a.scratch), a.stream);
  });
}

}  // namespace scan
