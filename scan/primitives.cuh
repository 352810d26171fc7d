// The scan ladder's building blocks, from the warp up. Each value type is summed with
// its own +: unsigned (int32 bits, wrapping) or float.
//
//   warp_inclusive_scan, warp_total   five shuffles (stage 03 introduces them)
//   RowTile                           a tile as warp-wide rows, scanned in registers
//   block_warp_offsets                each warp's offset in the block and the block's total
//   Vec4, shift_of                    16-byte vectors of a 4-byte array (stages 05 and 06)
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace scan {

constexpr unsigned kFullMask = 0xffffffffu;

// Lane l gets v(0) + ... + v(l): five rounds, each adding the value d lanes below.
template <typename T>
__device__ __forceinline__ T warp_inclusive_scan(T v) {
  const unsigned lane = threadIdx.x % 32;
#pragma unroll
  for (unsigned d = 1; d < 32; d *= 2) {
    const T below = __shfl_up_sync(kFullMask, v, d);
    if (lane >= d) v += below;
  }
  return v;
}

// Every lane gets the sum of the warp's 32 values (a butterfly of five shuffles).
template <typename T>
__device__ __forceinline__ T warp_total(T v) {
#pragma unroll
  for (unsigned d = 16; d > 0; d /= 2) v += __shfl_xor_sync(kFullMask, v, d);
  return v;
}

// Lane l gets the warp's inclusive scan at lane l - 1 (0 at lane 0): the exclusive scan,
// formed without a subtraction, which a float sum could not undo exactly.
template <typename T>
__device__ __forceinline__ T shift_up_one(T inclusive) {
  const T below = __shfl_up_sync(kFullMask, inclusive, 1);
  return threadIdx.x % 32 == 0 ? T(0) : below;
}

// A tile held as rows in registers. Warp w owns a contiguous segment of kRows rows; a
// row is 32 x kVec consecutive values, lane l holding values l*kVec .. l*kVec + kVec - 1
// of it (kVec = 4: one 16-byte load per lane, a row one coalesced 512-byte access).
template <typename T, int kBlock, int kRows, int kVec>
struct RowTile {
  static constexpr int kWarps = kBlock / 32;
  static constexpr int kRowValues = 32 * kVec;
  static constexpr int kSegment = kRows * kRowValues;  // values per warp
  static constexpr int kTile = kWarps * kSegment;      // values per block
  static_assert(kBlock % 32 == 0 && kWarps <= 32, "a block of whole warps, at most 32");

  T v[kRows][kVec];

  // Index, within the tile, of value k of row r of this thread.
  static __device__ __forceinline__ unsigned index(int r, int k) {
    return (threadIdx.x / 32) * kSegment + r * kRowValues + (threadIdx.x % 32) * kVec + k;
  }

  // Scans the warp's segment in place: each value becomes the inclusive (or exclusive)
  // sum of the segment up to it. Returns the segment's total to every lane. Per row: the
  // lane's kVec values in sequence, one warp scan of the lanes' totals, and the rows'
  // running total (the rows' warp scans do not wait for one another).
  template <bool kInclusive>
  __device__ __forceinline__ T scan_segment() {
    T carry = T(0);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int k = 1; k < kVec; ++k) v[r][k] += v[r][k - 1];
      const T lanes = warp_inclusive_scan(v[r][kVec - 1]);
      const T before = carry + shift_up_one(lanes);  // everything before this lane's first value
      carry += __shfl_sync(kFullMask, lanes, 31);
      if constexpr (kInclusive) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[r][k] = before + v[r][k];
      } else {
#pragma unroll
        for (int k = kVec - 1; k > 0; --k) v[r][k] = before + v[r][k - 1];
        v[r][0] = before;
      }
    }
    return carry;
  }

  // Adds `offset` to every value (the segment's place in the whole array).
  __device__ __forceinline__ void add(T offset) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[r][k] = offset + v[r][k];
  }

  // Scalar loads and stores of the tile starting at element `start` of arrays of n
  // values; values past n read as 0 and are not stored. Lanes read consecutive words:
  // with kVec = 1 each row is one coalesced 128-byte access.
  __device__ __forceinline__ void load(const T* __restrict__ in, std::size_t start, std::size_t n) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const std::size_t i = start + index(r, k);
        v[r][k] = i < n ? in[i] : T(0);
      }
  }
  __device__ __forceinline__ void store(T* __restrict__ out, std::size_t start, std::size_t n) const {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const std::size_t i = start + index(r, k);
        if (i < n) out[i] = v[r][k];
      }
  }
};

// The 16-byte vector of four values of T (int32 bits or float).
template <typename T>
using Vec4 = std::conditional_t<std::is_same_v<T, float>, float4, uint4>;

// Elements before `p` back to its 16-byte boundary: 0 to 3 (4-byte-aligned arrays).
inline unsigned shift_of(const void* p) { return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) % 16 / 4); }

// Every thread gets its warp's offset in the block (the totals of the warps before it)
// and, in `block_total`, the sum of all kWarps warp totals. `warp_sum` is the warp's
// total, the same in every lane. One barrier: each warp scans the kWarps totals itself.
// Once per kernel, or with a barrier between two calls (the shared array is reused).
template <int kWarps, typename T>
__device__ __forceinline__ T block_warp_offsets(T warp_sum, T& block_total) {
  __shared__ T totals[kWarps];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (lane == 0) totals[warp] = warp_sum;
  __syncthreads();
  const T mine = lane < kWarps ? totals[lane] : T(0);
  const T inclusive = warp_inclusive_scan(mine);
  block_total = __shfl_sync(kFullMask, inclusive, kWarps - 1);
  return __shfl_sync(kFullMask, shift_up_one(inclusive), warp);
}

}  // namespace scan
