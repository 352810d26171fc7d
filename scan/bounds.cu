// What a copy reaches through the shape of scan stage 06: rows of `scan --bounds`, each
// checked as a copy (output = input), none a scan. They split the distance between
// stage 06 and the copy bound (cudaMemcpy) into its parts:
//   copy_stream   a grid-stride copy kernel, 8 blocks of 256 threads per SM, eight
//                 16-byte loads in flight per thread: what a kernel's copy reaches
//   copy_tiles    stage 06's grid and block: one tile of 16,384 values per block of 512
//                 threads, two blocks per SM, all eight 16-byte loads of a thread before
//                 its stores, and stage 06's L2 prefetch of the tile a quarter wave ahead
//   phases_tiles  copy_tiles with stage 06's barriers: each warp's total, the block's
//                 warp offsets (one barrier) and a second barrier where stage 06 waits
//                 for its look-back; the output stays the input (the block's total goes
//                 to scratch), so only the look-back and the scan's additions are missing
// Any n and any 4-byte alignment: arrays off a 16-byte boundary go through a scalar copy.
// Chapter: lab/notes/94_lab_notes_scan.md (section i).
#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"
#include "dispatch.hpp"
#include "primitives.cuh"
#include "scan.hpp"
#include "sm_limits.hpp"

namespace scan {
namespace {

// Stage 06's shape (scan/06_prefetch_lookback.cu; a host test keeps the grid equal to its
// plan's, and the prefetch distance is taken from that plan).
constexpr int kBlock = 512;
constexpr int kRows = 8;
constexpr unsigned kTileVectors = kBlock * kRows;  // 4,096 vectors: 16,384 values
constexpr unsigned kTileLines = kTileVectors * 16 / 128;
constexpr int kBlocksPerSm = common::one_block_on(100, 120) ? 1 : common::blocks_per_sm_bound(kBlock, 2);
// copy_stream's shape.
constexpr int kStreamBlock = 256;
constexpr int kStreamLoads = 8;

__global__ void scalar_copy(const unsigned* in, unsigned* out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    out[i] = in[i];
}

// The last n % 4 values, after the vectors.
__device__ __forceinline__ void copy_tail(const unsigned* in, unsigned* out, std::size_t n) {
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n % 4) {
    const std::size_t i = n / 4 * 4 + threadIdx.x;
    out[i] = in[i];
  }
}

__global__ void __launch_bounds__(kStreamBlock) copy_stream(const uint4* in, uint4* out, std::size_t n) {
  const std::size_t vectors = n / 4;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * kStreamBlock * kStreamLoads;
  for (std::size_t base = blockIdx.x * static_cast<std::size_t>(kStreamBlock) * kStreamLoads + threadIdx.x;
       base < vectors; base += step) {
    uint4 q[kStreamLoads];
#pragma unroll
    for (int k = 0; k < kStreamLoads; ++k)
      if (base + k * kStreamBlock < vectors) q[k] = __ldcs(in + base + k * kStreamBlock);
#pragma unroll
    for (int k = 0; k < kStreamLoads; ++k)
      if (base + k * kStreamBlock < vectors) __stcs(out + base + k * kStreamBlock, q[k]);
  }
  copy_tail(reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out), n);
}

template <bool kPhases>
__global__ void __launch_bounds__(kBlock, kBlocksPerSm)
    tile_copy(const uint4* in, uint4* out, std::size_t n, unsigned ahead, unsigned* totals) {
  const std::size_t vectors = n / 4;
  const std::size_t first =
      static_cast<std::size_t>(blockIdx.x) * kTileVectors + (threadIdx.x / 32) * (kRows * 32) + threadIdx.x % 32;
  // Stage 06's prefetch: tile + ahead into L2, one 128-byte line a thread.
  const std::size_t later = (static_cast<std::size_t>(blockIdx.x) + ahead) * kTileVectors;
#pragma unroll
  for (unsigned k = 0; k < kTileLines / kBlock; ++k) {
    const std::size_t vec = later + 8 * (threadIdx.x + k * kBlock);
    if (vec < vectors) asm volatile("prefetch.global.L2 [%0];" ::"l"(in + vec));
  }
  uint4 q[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    if (first + 32 * r < vectors) q[r] = __ldcs(in + first + 32 * r);
  if constexpr (kPhases) {
    unsigned sum = 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (first + 32 * r < vectors) sum += q[r].x + q[r].y + q[r].z + q[r].w;
    unsigned block_total;
    block_warp_offsets<kBlock / 32>(warp_total(sum), block_total);
    __syncthreads();  // where stage 06 waits for warp 0's look-back
    if (threadIdx.x == 0) totals[blockIdx.x] = block_total;
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    if (first + 32 * r < vectors) __stcs(out + first + 32 * r, q[r]);
  copy_tail(reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out), n);
}

std::size_t tiles_of(std::size_t n) { return std::max<std::size_t>(1, ceil_div(n / 4, kTileVectors)); }

ScanPlan stream_plan(std::size_t n, ValueType, const common::DeviceInfo& device) {
  ScanPlan p;
  const std::size_t needed = ceil_div(std::max<std::size_t>(n / 4, 1), std::size_t{kStreamBlock} * kStreamLoads);
  p.grid = static_cast<unsigned>(std::min<std::size_t>(needed, std::size_t{8} * device.sm_count));
  return p;
}

ScanPlan tiles_plan(std::size_t n, ValueType type, const common::DeviceInfo& device) {
  ScanPlan p;
  p.grid = static_cast<unsigned>(tiles_of(n));
  p.scratch_bytes = 4 * tiles_of(n);                                          // phases_tiles: one block total per tile
  p.prefetch_tiles = find_stage("06")->plan(n, type, device).prefetch_tiles;  // stage 06's own distance
  return p;
}

// True (after a scalar copy) when in or out is off a 16-byte boundary.
bool copied_unaligned(const ScanArgs& a) {
  if (shift_of(a.in) == 0 && shift_of(a.out) == 0) return false;
  scalar_copy<<<1024, 256, 0, a.stream>>>(static_cast<const unsigned*>(a.in), static_cast<unsigned*>(a.out), a.n);
  CUDA_CHECK_LAUNCH();
  return true;
}

void stream_launch(const ScanArgs& a) {
  if (copied_unaligned(a)) return;
  const unsigned grid = a.grid > 0 ? a.grid : 1;
  copy_stream<<<grid, kStreamBlock, 0, a.stream>>>(static_cast<const uint4*>(a.in), static_cast<uint4*>(a.out), a.n);
  CUDA_CHECK_LAUNCH();
}

template <bool kPhases>
void tiles_launch(const ScanArgs& a) {
  if (copied_unaligned(a)) return;
  if (kPhases) require_scratch(a, 4 * tiles_of(a.n), "phases_tiles");
  tile_copy<kPhases><<<static_cast<unsigned>(tiles_of(a.n)), kBlock, 0, a.stream>>>(
      static_cast<const uint4*>(a.in), static_cast<uint4*>(a.out), a.n, a.prefetch_tiles,
      static_cast<unsigned*>(a.scratch));
  CUDA_CHECK_LAUNCH();
}

ScanStage bound(const char* id, const char* title, ScanPlan (*plan)(std::size_t, ValueType, const common::DeviceInfo&),
                void (*launch)(const ScanArgs&)) {
  ScanStage s;
  s.entry = Entry::bound;
  s.id = id;
  s.title = title;
  s.source = "scan/bounds.cu";
  s.in_place = false;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace

const std::vector<ScanStage>& bounds() {
  static const std::vector<ScanStage> rows = {
      bound("copy_stream", "copy kernel, grid-stride", stream_plan, stream_launch),
      bound("copy_tiles", "copy in 06's tiles", tiles_plan, tiles_launch<false>),
      bound("phases_tiles", "copy_tiles + 06's barriers", tiles_plan, tiles_launch<true>),
  };
  return rows;
}

}  // namespace scan
