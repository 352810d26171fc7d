// Scan stage 06: stage 05 with the next wave's tiles on their way to L2.
//
// Idea: a block of stage 05 spends part of its life with no load in flight: it waits for
// its ticket, then for the tiles before it in the look-back, then stores. Registers cap
// how many blocks an SM holds (two of 512 threads here), so those gaps leave the memory
// system idle. Here each block, as soon as it has its ticket, asks L2 to fetch the tile
// that a block a quarter of a wave later will take (`prefetch.global.L2`, one 128-byte
// line a thread: no register holds the data). When that block starts, its loads hit in
// L2. The total traffic is unchanged; only more of it is in flight at once.
// Also: 512-thread blocks with tiles of 16,384 values, and launch bounds of two blocks
// per SM. Without the bound ptxas gave stage 05's int32 exclusive kernel 80 registers,
// three blocks of 256 per SM instead of four: the reason its exclusive sums were slower
// than its inclusive ones.
// Fixes: stage 05's idle memory system between tiles, and its exclusive kernels' registers.
// Measured: ahead of CUB's DeviceScan from 2^14 values on, at 0.76 to 0.80 of the copy's
// speed from 2^26 on the H200 (0.88 to 0.92 on the H100); on the H100 ahead at every size
// (results/<gpu>/scan_int_exclusive.csv, chapter 28).
// Chapter: chapters/28_scan.md
#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"
#include "dispatch.hpp"
#include "lookback.cuh"
#include "sm_limits.hpp"

namespace scan {
namespace {

constexpr int kBlock = 512;
constexpr int kRows = 8;  // 16-byte vectors per thread
template <typename T>
using Tile = RowTile<T, kBlock, kRows, 4>;
constexpr unsigned kTile = Tile<unsigned>::kTile;  // 16384
constexpr unsigned kTileVectors = kTile / 4;

// Two blocks of 512 per SM (64 registers a thread); one on sm_100 and sm_120, whose ptxas spills the
// int32 exclusive kernel at 64 (common/sm_limits.hpp explains the one-block rule).
constexpr int kBlocksPerSm = common::one_block_on(100, 120) ? 1 : common::blocks_per_sm_bound(kBlock, 2);

// 128-byte lines per tile, and per thread.
constexpr unsigned kTileLines = kTile * 4 / 128;
static_assert(kTileLines % kBlock == 0, "whole lines per thread");

template <typename T, bool kInclusive, bool kVectorStores>
__global__ void __launch_bounds__(kBlock, kBlocksPerSm)
    prefetch_lookback_scan(const T* in, T* out, std::size_t n, unsigned shift, unsigned char* scratch,
                           unsigned capacity, unsigned ahead) {
  auto* header = reinterpret_cast<LookbackHeader*>(scratch);
  auto* descriptors = reinterpret_cast<unsigned long long*>(scratch + kDescriptorsOffset);
  const TileTicket t = begin_tile(header);
  // This thread's vector in row 0 of its warp's segment; row r is 32 vectors (128 values) on.
  const std::size_t first_vec =
      static_cast<std::size_t>(t.tile) * kTileVectors + (threadIdx.x / 32) * (Tile<T>::kSegment / 4) + threadIdx.x % 32;
  const auto* vectors = reinterpret_cast<const Vec4<T>*>(reinterpret_cast<std::uintptr_t>(in) - 4 * shift);
  // Tile t + ahead into L2, if the array has it: one line a thread (8 vectors of 16 bytes).
  const std::size_t later = (static_cast<std::size_t>(t.tile) + ahead) * kTileVectors;
#pragma unroll
  for (unsigned k = 0; k < kTileLines / kBlock; ++k) {
    const std::size_t vec = later + 8 * (threadIdx.x + k * kBlock);
    if (4 * vec < n + shift) asm volatile("prefetch.global.L2 [%0];" ::"l"(vectors + vec));
  }
  // A tile wholly inside the array (all but the first and last, at most) is read as
  // vectors with no test per row; an edge tile value by value.
  const long long tile_first = static_cast<long long>(t.tile) * kTile - shift;
  const bool whole_tile = tile_first >= 0 && static_cast<std::size_t>(tile_first) + kTile <= n;
  const Vec4<T>* src = vectors + first_vec;
  Tile<T> tile;
  if (whole_tile) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {          // all loads first
      const Vec4<T> q = __ldcs(src + 32 * r);  // streamed: read once
      tile.v[r][0] = q.x;
      tile.v[r][1] = q.y;
      tile.v[r][2] = q.z;
      tile.v[r][3] = q.w;
    }
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const long long i = 4 * static_cast<long long>(first_vec + 32 * r) - shift + k;
        tile.v[r][k] = i >= 0 && static_cast<std::size_t>(i) < n ? in[i] : T(0);
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

  if (kVectorStores && whole_tile) {
    auto* dst = reinterpret_cast<Vec4<T>*>(reinterpret_cast<std::uintptr_t>(out) - 4 * shift) + first_vec;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      __stcs(dst + 32 * r, Vec4<T>{tile.v[r][0], tile.v[r][1], tile.v[r][2], tile.v[r][3]});
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const long long i = 4 * static_cast<long long>(first_vec + 32 * r) - shift + k;
        if (i >= 0 && static_cast<std::size_t>(i) < n) out[i] = tile.v[r][k];
      }
  }
}

std::size_t tiles_of(std::size_t n, unsigned shift) { return ceil_div(n + shift, kTile); }

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo& device) {
  ScanPlan p;
  // Room for any alignment of the input (3 elements more at most).
  p.grid = static_cast<unsigned>(tiles_of(n, 0));
  p.scratch_bytes = lookback_scratch_bytes(tiles_of(n, 3));
  p.zero_scratch_once = true;
  // As stage 05 (16 warps in a block are still 5 levels of the warps' scan).
  p.depth = {64, 8, kTile};
  // A wave is two blocks per SM (the launch bounds); a quarter of it ahead is half a tile
  // per SM (results/h200/history/scan05_shapes_g_prefetch_distance.txt compares 1/4,
  // 1/2, 3/4, 1 and 2 waves: 2 waves evict each other from L2 before use).
  p.prefetch_tiles = static_cast<unsigned>(std::max(1, device.sm_count / 2));
  return p;
}

void launch(const ScanArgs& a) {
  const unsigned shift = shift_of(a.in);
  const std::size_t tiles = tiles_of(a.n, shift);
  require_scratch(a, lookback_scratch_bytes(tiles), "06");
  const auto capacity = static_cast<unsigned>((a.scratch_bytes - kDescriptorsOffset) / 8);
  const bool vector_stores = shift_of(a.out) == shift;
  dispatch(a.type, a.kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr bool kInclusive = decltype(tag)::inclusive;
    auto kernel =
        vector_stores ? prefetch_lookback_scan<T, kInclusive, true> : prefetch_lookback_scan<T, kInclusive, false>;
    kernel<<<static_cast<unsigned>(tiles), kBlock, 0, a.stream>>>(static_cast<const T*>(a.in), static_cast<T*>(a.out),
                                                                  a.n, shift, static_cast<unsigned char*>(a.scratch),
                                                                  capacity, a.prefetch_tiles);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

ScanStage describe_prefetch_lookback() {
  ScanStage s;
  s.number = 6;
  s.id = "prefetch_lookback";
  s.title = "look-back, L2 prefetch";
  s.source = "scan/06_prefetch_lookback.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
