// Scan stage 04: one pass, with decoupled look-back.
//
// Idea: stage 03 reads the input twice because a tile cannot know its offset before
// every tile before it has been summed. Here each block takes the next tile (a ticket),
// scans it in registers as stage 03's last pass does, publishes the tile's aggregate at
// once, and finds its offset by looking back at the descriptors of the tiles before it:
// one warp reads 32 at a time and stops at the nearest tile that has already published
// its inclusive prefix (Merrill and Garland 2016; scan/lookback.cuh, which also states
// the safety rules). One kernel, the input read once, the outputs written once: 8 bytes
// of traffic per value, the copy's.
// Fixes: stage 03's second read of the input and its three launches.
// Keeps: scalar loads, 16 values a thread.
// Measured: about half the copy's speed at large n, and one launch at small n
// (results/h200/scan_int_exclusive.csv).
// Chapter: chapters/28_scan.md
#include "cuda_check.hpp"
#include "dispatch.hpp"
#include "lookback.cuh"

namespace scan {
namespace {

constexpr int kBlock = 256;
constexpr int kRows = 16;
template <typename T>
using Tile = RowTile<T, kBlock, kRows, 1>;
constexpr unsigned kTile = Tile<unsigned>::kTile;  // 4096

// in may equal out: each block reads its tile before it writes it.
template <typename T, bool kInclusive>
__global__ void __launch_bounds__(kBlock)
    lookback_scan(const T* in, T* out, std::size_t n, unsigned char* scratch, unsigned capacity) {
  auto* header = reinterpret_cast<LookbackHeader*>(scratch);
  auto* descriptors = reinterpret_cast<unsigned long long*>(scratch + kDescriptorsOffset);
  const TileTicket t = begin_tile(header);
  const std::size_t start = static_cast<std::size_t>(t.tile) * kTile;
  Tile<T> tile;
  tile.load(in, start, n);
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
  tile.store(out, start, n);
}

std::size_t tiles_of(std::size_t n) { return ceil_div(n, kTile); }

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo&) {
  ScanPlan p;
  p.grid = static_cast<unsigned>(tiles_of(n));
  p.scratch_bytes = lookback_scratch_bytes(tiles_of(n));
  p.zero_scratch_once = true;
  // Within the tile: 16 rows carried in sequence, 5 + 5 levels, 3 adds, with room to
  // spare. The prefix of tile t is a chain over the tiles before it: per tile at most a
  // window's 5 levels, 2 adds and the tile's own 26 (counted in the base) to publish P.
  p.depth = {64, 8, kTile};
  return p;
}

void launch(const ScanArgs& a) {
  const std::size_t tiles = tiles_of(a.n);
  require_scratch(a, lookback_scratch_bytes(tiles), "04");
  const auto capacity = static_cast<unsigned>((a.scratch_bytes - kDescriptorsOffset) / 8);
  dispatch(a.type, a.kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    lookback_scan<T, decltype(tag)::inclusive><<<static_cast<unsigned>(tiles), kBlock, 0, a.stream>>>(
        static_cast<const T*>(a.in), static_cast<T*>(a.out), a.n, static_cast<unsigned char*>(a.scratch), capacity);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

ScanStage describe_decoupled_lookback() {
  ScanStage s;
  s.number = 4;
  s.id = "decoupled_lookback";
  s.title = "single pass, look-back";
  s.source = "scan/04_decoupled_lookback.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
