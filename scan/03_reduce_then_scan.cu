// Scan stage 03: reduce, then scan, in three kernels.
//
// Idea: stage 01 writes every output twice. Here the first pass only sums each tile
// (reads the input, writes one value per tile), a single block scans the tile sums into
// offsets, and the third pass scans each tile again, from its input, starting at its
// offset: every output is written once (12 bytes of traffic per value: two reads, one
// write). The tile scans work in registers, not in a shared-memory tree: each warp owns
// 16 rows of 32 values and scans a row with five shuffles (RowTile in
// scan/primitives.cuh), so a tile of 4096 values needs one barrier.
// Fixes: stage 02's second write of the outputs, and its shared-memory tree.
// Keeps: the input read twice, and three launches.
// Expect: about 2/3 of the copy bound at large n.
// Chapter: chapters/28_scan.md
#include "cuda_check.hpp"
#include "dispatch.hpp"
#include "primitives.cuh"

namespace scan {
namespace {

constexpr int kBlock = 256;
constexpr int kRows = 16;
template <typename T>
using Tile = RowTile<T, kBlock, kRows, 1>;
constexpr unsigned kTile = Tile<unsigned>::kTile;  // 4096
// The single block that scans the tile sums: 1024 threads, 4 rows each.
constexpr int kSumsBlock = 1024;
template <typename T>
using SumsChunk = RowTile<T, kSumsBlock, 4, 1>;

template <typename T>
__global__ void __launch_bounds__(kBlock) tile_sums(const T* in, std::size_t n, T* sums) {
  Tile<T> tile;
  tile.load(in, static_cast<std::size_t>(blockIdx.x) * kTile, n);
  T v = T(0);
#pragma unroll
  for (int r = 0; r < kRows; ++r) v += tile.v[r][0];
  T total;
  block_warp_offsets<Tile<T>::kWarps>(warp_total(v), total);
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// One block: the exclusive scan of the `tiles` sums, in place, a chunk at a time.
template <typename T>
__global__ void __launch_bounds__(kSumsBlock) scan_sums(T* sums, std::size_t tiles) {
  T carry = T(0);
  for (std::size_t start = 0; start < tiles; start += SumsChunk<T>::kTile) {
    SumsChunk<T> chunk;
    chunk.load(sums, start, tiles);
    T total;
    const T warp_offset = block_warp_offsets<SumsChunk<T>::kWarps>(chunk.template scan_segment<false>(), total);
    chunk.add(carry + warp_offset);
    chunk.store(sums, start, tiles);
    carry += total;
    __syncthreads();  // the next chunk reuses block_warp_offsets' shared array
  }
}

// in may equal out: each block reads its tile before it writes it.
template <typename T, bool kInclusive>
__global__ void __launch_bounds__(kBlock) scan_tiles(const T* in, T* out, std::size_t n, const T* offsets) {
  Tile<T> tile;
  const std::size_t start = static_cast<std::size_t>(blockIdx.x) * kTile;
  tile.load(in, start, n);
  T total;
  const T warp_offset = block_warp_offsets<Tile<T>::kWarps>(tile.template scan_segment<kInclusive>(), total);
  tile.add((offsets != nullptr ? offsets[blockIdx.x] : T(0)) + warp_offset);
  tile.store(out, start, n);
}

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo&) {
  ScanPlan p;
  const std::size_t tiles = ceil_div(n, kTile);
  p.grid = static_cast<unsigned>(tiles);
  p.scratch_bytes = tiles > 1 ? 4 * tiles : 0;
  // A tile sum: 16 values in sequence, 5 + 3 tree levels. The offsets: the chunks'
  // carry in sequence, 4 + 5 + 5 within a chunk, 2 more adds. The tile's scan: 16 in
  // sequence (the row carry), 5 + 5 levels, 3 adds.
  p.depth.base = (16 + 8) + (ceil_div(tiles, SumsChunk<unsigned>::kTile) + 16) + (16 + 10 + 3);
  return p;
}

void launch(const ScanArgs& a) {
  const std::size_t tiles = ceil_div(a.n, kTile);
  require_scratch(a, tiles > 1 ? 4 * tiles : 0, "03");
  dispatch(a.type, a.kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(a.in);
    T* offsets = tiles > 1 ? static_cast<T*>(a.scratch) : nullptr;
    if (offsets != nullptr) {
      tile_sums<T><<<static_cast<unsigned>(tiles), kBlock, 0, a.stream>>>(in, a.n, offsets);
      CUDA_CHECK_LAUNCH();
      scan_sums<T><<<1, kSumsBlock, 0, a.stream>>>(offsets, tiles);
      CUDA_CHECK_LAUNCH();
    }
    scan_tiles<T, decltype(tag)::inclusive>
        <<<static_cast<unsigned>(tiles), kBlock, 0, a.stream>>>(in, static_cast<T*>(a.out), a.n, offsets);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

ScanStage describe_reduce_then_scan() {
  ScanStage s;
  s.number = 3;
  s.id = "reduce_then_scan";
  s.title = "reduce, scan sums, scan";
  s.source = "scan/03_reduce_then_scan.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
