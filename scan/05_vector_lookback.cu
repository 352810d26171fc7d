// Scan stage 05: stage 04 with 16-byte loads and 32 values a thread.
//
// Idea: stage 04 keeps 16 four-byte loads per thread in flight. Here every load is 16
// bytes (int4 or float4) and a thread holds 8 of them, 32 values: a tile of 8192 values
// per block of 256 threads, twice stage 04's bytes in flight per thread in half the
// load instructions, and half as many tiles to look back over. A row is now 128 values,
// four per lane: each lane adds its four in sequence, then the row's warp scan.
// Any n and any 4-byte-aligned pointers: the array is cut into 16-byte vectors from the
// first aligned address at or below `in`; a vector that sticks out of the array at
// either end is read value by value (the only branch), and the outputs are stored as
// vectors too when `out` has the same alignment as `in`, value by value otherwise.
// Fixes: stage 04's load instructions, and its number of tiles.
// Measured: ahead of CUB's DeviceScan up to 2^22 values, behind it from 2^23 on, at
// about 0.6 of the copy's speed (results/h200/scan_int_exclusive.csv, chapter 28).
// Chapter: chapters/28_scan.md
#include <cstdint>

#include "cuda_check.hpp"
#include "dispatch.hpp"
#include "lookback.cuh"

namespace scan {
namespace {

constexpr int kBlock = 256;
constexpr int kRows = 8;  // 16-byte vectors per thread
template <typename T>
using Tile = RowTile<T, kBlock, kRows, 4>;
constexpr unsigned kTile = Tile<unsigned>::kTile;  // 8192
constexpr unsigned kTileVectors = kTile / 4;

// Whether the vector whose first element is `first` (4 vec - shift for vector vec, may be
// negative) lies inside the array.
__device__ __forceinline__ bool whole(long long first, std::size_t n) {
  return first >= 0 && static_cast<std::size_t>(first) + 4 <= n;
}

// in may equal out: each block reads its whole tile before it writes any of it.
template <typename T, bool kInclusive, bool kVectorStores>
__global__ void __launch_bounds__(kBlock) vector_lookback_scan(const T* in, T* out, std::size_t n, unsigned shift,
                                                               unsigned char* scratch, unsigned capacity) {
  auto* header = reinterpret_cast<LookbackHeader*>(scratch);
  auto* descriptors = reinterpret_cast<unsigned long long*>(scratch + kDescriptorsOffset);
  const TileTicket t = begin_tile(header);
  // This thread's vector in row 0 of its warp's segment; row r is 32 vectors (128 values) on.
  const std::size_t first_vec =
      static_cast<std::size_t>(t.tile) * kTileVectors + (threadIdx.x / 32) * (Tile<T>::kSegment / 4) + threadIdx.x % 32;
  const auto* vectors = reinterpret_cast<const Vec4<T>*>(reinterpret_cast<std::uintptr_t>(in) - 4 * shift);
  Tile<T> tile;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {  // all loads first
    const long long first = 4 * static_cast<long long>(first_vec + 32 * r) - shift;
    if (whole(first, n)) {
      const Vec4<T> q = __ldcs(vectors + first_vec + 32 * r);  // streamed: read once
      tile.v[r][0] = q.x;
      tile.v[r][1] = q.y;
      tile.v[r][2] = q.z;
      tile.v[r][3] = q.w;
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k)
        tile.v[r][k] = first + k >= 0 && static_cast<std::size_t>(first + k) < n ? in[first + k] : T(0);
    }
  }
  T aggregate;
  const T warp_offset = block_warp_offsets<Tile<T>::kWarps>(tile.template scan_segment<kInclusive>(), aggregate);
  __shared__ T tile_prefix;
  if (threadIdx.x < 32) {
    const T prefix = tile_exclusive_prefix(descriptors, t, aggregate);
    if (threadIdx.x == 0) tile_prefix = prefix;
  }
  __syncthreads();
  end_tile(header, descriptors, t, capacity);
  tile.add(tile_prefix + warp_offset);

  auto* out_vectors = reinterpret_cast<Vec4<T>*>(reinterpret_cast<std::uintptr_t>(out) - 4 * shift);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const long long first = 4 * static_cast<long long>(first_vec + 32 * r) - shift;
    if (kVectorStores && whole(first, n)) {
      __stcs(out_vectors + first_vec + 32 * r, Vec4<T>{tile.v[r][0], tile.v[r][1], tile.v[r][2], tile.v[r][3]});
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (first + k >= 0 && static_cast<std::size_t>(first + k) < n) out[first + k] = tile.v[r][k];
    }
  }
}

std::size_t tiles_of(std::size_t n, unsigned shift) { return ceil_div(n + shift, kTile); }

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo&) {
  ScanPlan p;
  // Room for any alignment of the input (3 elements more at most).
  p.grid = static_cast<unsigned>(tiles_of(n, 0));
  p.scratch_bytes = lookback_scratch_bytes(tiles_of(n, 3));
  p.zero_scratch_once = true;
  // As stage 04, with 4 values in sequence and 8 row carries per lane.
  p.depth = {64, 8, kTile};
  return p;
}

void launch(const ScanArgs& a) {
  const unsigned shift = shift_of(a.in);
  const std::size_t tiles = tiles_of(a.n, shift);
  require_scratch(a, lookback_scratch_bytes(tiles), "05");
  const auto capacity = static_cast<unsigned>((a.scratch_bytes - kDescriptorsOffset) / 8);
  const bool vector_stores = shift_of(a.out) == shift;
  dispatch(a.type, a.kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr bool kInclusive = decltype(tag)::inclusive;
    auto kernel =
        vector_stores ? vector_lookback_scan<T, kInclusive, true> : vector_lookback_scan<T, kInclusive, false>;
    kernel<<<static_cast<unsigned>(tiles), kBlock, 0, a.stream>>>(static_cast<const T*>(a.in), static_cast<T*>(a.out),
                                                                  a.n, shift, static_cast<unsigned char*>(a.scratch),
                                                                  capacity);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

ScanStage describe_vector_lookback() {
  ScanStage s;
  s.number = 5;
  s.id = "vector_lookback";
  s.title = "look-back, 16-byte loads";
  s.source = "scan/05_vector_lookback.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
