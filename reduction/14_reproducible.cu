// Stage 14: a sum that is bitwise identical everywhere.
//
// Idea: make the order of the additions a function of n alone. The input is cut into
// tiles of kTile = 8192 floats, a constant that does not depend on the grid, the block
// size or the GPU. One warp sums one tile, always the same way: lane l reads the
// float4s l, l + 32, l + 64, ... of the tile (64 of them) and adds their x, y, z and w
// components into four accumulators in that order; the lane's value is
// (x + y) + (z + w); a fixed shuffle tree over the 32 lanes gives the tile sum. Each
// block takes a contiguous run of tiles, its warps interleaved over it (the tile sums
// land in scratch, whichever warp computed them), and the last block to finish (a
// __threadfence() and an atomic ticket, as in stage 13) adds the tile sums in a
// fixed order too: groups of 32 consecutive tile sums left to right, then a pairwise
// tree over the group sums, level by level (roots[i] = roots[2i] + roots[2i + 1], an
// odd last root carried up unchanged). Which warp or block computed a value, and
// when, no longer matters.
// An input that does not start on a 16-byte boundary is read with scalar loads in
// exactly the order of the float4 path (kernel template <bool kAligned>), and the
// last, partial tile skips missing elements in that same order, so the start address
// does not change the result either. Float addition is IEEE round-to-nearest on every
// CUDA GPU and there is nothing to contract into an FMA, so the same order gives the
// same bits on any of them (no fast-math: it would allow denormal flushing).
// Fixes: stage 13's single pass is deterministic only for one configuration: its sum
// changes with the block size, the grid (so with the GPU's SM count) and the
// alignment of the input. Here all of them leave the result bit for bit unchanged
// (tests/gpu/test_reproducible.cpp checks 128..1024 threads, grids of 1 to 1056
// blocks and every misaligned start).
// Cost: one warp per tile streams 32 KiB with eight 16-byte loads per lane in flight,
// which should keep the main pass at the bandwidth of the vectorised stages; what is
// extra is one write per tile (1/8192 of the input) and the last block's pass over
// them: 2^17 tile sums (512 KiB, read from L2, coalesced through a transposed layout)
// at n = 2^30, a few microseconds next to a 0.9 ms sum.
// Error bound (common/verify.hpp): an element passes through at most
// kTile/128 = 64 additions in its lane's accumulator, 2 combining the components,
// 5 in the warp tree, 31 (counted as 32) in its group, and ceil(log2 G) in the tree
// over the G = ceil(M / 32) group sums, M = ceil(n / kTile):
//     error_depth = 64 + 2 + 5 + 32 + ceil(log2 G).
// Expect: about the speed of the fastest single-pass stage at large n (the target is
// 0.97x CUB at 2^28 and 2^30); in Nsight Compute, dram__throughput.avg.pct_of_peak_
// sustained_elapsed near the vectorised stages' and a small tail in the timeline
// where one block finishes.
// Chapter: chapters/12_beyond_the_book.md
#include <algorithm>
#include <cstdint>

#include "stage.hpp"

#include "cuda_check.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

constexpr std::size_t kTile = 8192;  // floats per tile: fixed forever, part of the result's definition
constexpr int kWarp = 32;
constexpr int kFloat4PerLane = kTile / 4 / kWarp;  // 64 float4 loads per lane per tile
constexpr int kBatch = 8;                          // float4 loads in flight per lane
constexpr int kGroup = 32;                         // tile sums per group in the final sum
constexpr std::size_t kSharedLevel = 1024;         // tree levels this small live in shared memory
constexpr int kMaxBlock = 1024;
constexpr std::size_t kTicketBytes = 256;  // the ticket, padded so the tile sums stay aligned
static_assert(kTile % (4 * kWarp * kBatch) == 0, "a tile is a whole number of batches");

__host__ __device__ constexpr std::size_t div_up(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
__host__ __device__ constexpr std::size_t tile_count(std::size_t n) { return div_up(n, kTile); }
__host__ __device__ constexpr std::size_t group_count(std::size_t tiles) { return div_up(tiles, kGroup); }

// Four consecutive floats, starting at element `p`: one 16-byte load when the input
// is aligned, four scalar loads otherwise. Either way the same four values arrive,
// and the caller adds them in the same order.
template <bool kAligned>
__device__ __forceinline__ float4 load4(const float* p) {
  if constexpr (kAligned) {
    return __ldg(reinterpret_cast<const float4*>(p));
  } else {
    return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
  }
}

__device__ __forceinline__ float lane_and_warp_sum(float ax, float ay, float az, float aw) {
  float v = (ax + ay) + (az + aw);
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;  // meaningful in lane 0
}

// A full tile: lane l adds the float4s l + 32k, k = 0..63, component by component.
template <bool kAligned>
__device__ float full_tile_sum(const float* tile, unsigned lane) {
  float ax = 0.0f, ay = 0.0f, az = 0.0f, aw = 0.0f;
  const float* p = tile + 4 * lane;
  for (int k0 = 0; k0 < kFloat4PerLane; k0 += kBatch) {
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = load4<kAligned>(p + 4 * kWarp * (k0 + b));  // all in flight
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      ax += v[b].x;
      ay += v[b].y;
      az += v[b].z;
      aw += v[b].w;
    }
  }
  return lane_and_warp_sum(ax, ay, az, aw);
}

// The last tile when n is not a multiple of kTile: the same order, skipping the
// elements past the end. It is read with scalar loads whatever the alignment.
__device__ float partial_tile_sum(const float* tile, std::size_t count, unsigned lane) {
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < kFloat4PerLane; ++k) {
    const std::size_t first = 4 * (lane + static_cast<std::size_t>(kWarp) * k);
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (first + c < count) acc[c] += __ldg(tile + first + c);
  }
  return lane_and_warp_sum(acc[0], acc[1], acc[2], acc[3]);
}

// Where tile t's sum is stored: transposed, so that when thread g later adds group g
// (tiles 32g .. 32g + 31) left to right, each of its 32 loads is coalesced with the
// neighbouring threads' loads of groups g + 1, g + 2, ...
__device__ __forceinline__ std::size_t tile_slot(std::size_t t, std::size_t groups) {
  return (t % kGroup) * groups + t / kGroup;
}

// Tile sums `column[0], column[stride], ...` (`present` of them, at most kGroup), added
// left to right. The loads are all issued before the first addition; __ldcg reads
// through L2, since other SMs wrote these values during this launch.
template <bool kFull>
__device__ __forceinline__ float group_sum(const float* column, std::size_t stride, std::size_t present) {
  float v[kGroup];
#pragma unroll
  for (int j = 0; j < kGroup; ++j) v[j] = kFull || j < present ? __ldcg(column + j * stride) : 0.0f;
  float s = v[0];
#pragma unroll
  for (int j = 1; j < kGroup; ++j)
    if (kFull || j < present) s += v[j];
  return s;
}

// The last block: sums the M tile sums in the fixed order. `level_a`/`level_b` are
// shared memory, `global_a`/`global_b` scratch for tree levels too large for it.
__device__ void sum_tile_sums(const float* tile_sums, std::size_t tiles, float* global_a, float* global_b,
                              float* level_a, float* level_b, float* out) {
  const std::size_t groups = group_count(tiles);
  const unsigned tid = threadIdx.x;

  // Groups of 32 consecutive tile sums, each added left to right by one thread.
  float* src = groups <= kSharedLevel ? level_a : global_a;
  for (std::size_t g = tid; g < groups; g += blockDim.x) {
    const std::size_t left = tiles - g * kGroup;
    src[g] =
        left >= kGroup ? group_sum<true>(tile_sums + g, groups, kGroup) : group_sum<false>(tile_sums + g, groups, left);
  }
  __syncthreads();

  // The pairwise tree over the group sums, one level per step, while more than a warp's
  // worth is left. Levels larger than kSharedLevel ping-pong between the two scratch
  // arrays, smaller ones between the two shared arrays; __syncthreads() between levels
  // makes one level's writes visible to the next level's readers in this block.
  std::size_t count = groups;
  while (count > kWarp) {
    const std::size_t next = (count + 1) / 2;
    float* dst = next <= kSharedLevel ? (src == level_a ? level_b : level_a) : (src == global_a ? global_b : global_a);
    for (std::size_t i = tid; i < next; i += blockDim.x)
      dst[i] = 2 * i + 1 < count ? src[2 * i] + src[2 * i + 1] : src[2 * i];
    __syncthreads();
    src = dst;
    count = next;
  }

  // The last five levels at most, in one warp: lane i forms roots[2i] + roots[2i + 1].
  if (tid < kWarp) {
    float v = tid < count ? src[tid] : 0.0f;
    while (count > 1) {
      const std::size_t next = (count + 1) / 2;
      // Lanes at or past `next` read values they never use.
      const float left = __shfl_sync(0xffffffffu, v, static_cast<int>(2 * tid));
      const float right = __shfl_sync(0xffffffffu, v, static_cast<int>(2 * tid + 1));
      if (tid < next) v = 2 * tid + 1 < count ? left + right : left;
      count = next;
    }
    if (tid == 0) *out = v;
  }
}

struct Scratch {
  unsigned* ticket;
  float* tile_sums;  // kGroup * groups slots, transposed (tile_slot)
  float* global_a;   // groups floats
  float* global_b;   // ceil(groups / 2) floats
};

Scratch carve_scratch(void* base, std::size_t n) {
  const std::size_t groups = group_count(tile_count(n));
  auto* bytes = static_cast<unsigned char*>(base);
  Scratch s;
  s.ticket = reinterpret_cast<unsigned*>(bytes);
  s.tile_sums = reinterpret_cast<float*>(bytes + kTicketBytes);
  s.global_a = s.tile_sums + kGroup * groups;
  s.global_b = s.global_a + groups;
  return s;
}

std::size_t scratch_bytes_for(std::size_t n) {
  const std::size_t groups = group_count(tile_count(n));
  return kTicketBytes + (kGroup * groups + groups + div_up(groups, 2)) * sizeof(float);
}

template <bool kAligned>
__global__ void __launch_bounds__(kMaxBlock)
    reproducible_sum(const float* __restrict__ in, std::size_t n, Scratch scratch, float* out) {
  __shared__ float level_a[kSharedLevel];
  __shared__ float level_b[kSharedLevel];
  __shared__ bool is_last;

  const unsigned lane = threadIdx.x % kWarp;
  const std::size_t warps_per_block = blockDim.x / kWarp;
  const std::size_t tiles = tile_count(n);
  const std::size_t full_tiles = n / kTile;
  const std::size_t groups = group_count(tiles);

  // Each block takes a contiguous run of tiles (as even as the division allows), its
  // warps interleaved over it, so the block streams through one region of memory.
  const std::size_t per_block = tiles / gridDim.x;
  const std::size_t extra = tiles % gridDim.x;
  const std::size_t first = blockIdx.x * per_block + (blockIdx.x < extra ? blockIdx.x : extra);
  const std::size_t end = first + per_block + (blockIdx.x < extra ? 1 : 0);
  for (std::size_t t = first + threadIdx.x / kWarp; t < end; t += warps_per_block) {
    const float* tile = in + t * kTile;
    const float s = t < full_tiles ? full_tile_sum<kAligned>(tile, lane) : partial_tile_sum(tile, n - t * kTile, lane);
    if (lane == 0) scratch.tile_sums[tile_slot(t, groups)] = s;
  }

  // Publish this block's tile sums, then take a ticket: the block that draws the last
  // one knows every tile sum is in memory.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(scratch.ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  __threadfence();

  sum_tile_sums(scratch.tile_sums, tiles, scratch.global_a, scratch.global_b, level_a, level_b, out);
  if (threadIdx.x == 0) *scratch.ticket = 0;  // ready for the next launch, which sees it in stream order
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reproducible_sum<true>, block, 0));
  const std::size_t resident =
      static_cast<std::size_t>(std::max(per_sm, 1)) * static_cast<std::size_t>(device.sm_count);
  const std::size_t tiles = tile_count(n);
  const std::size_t warps_per_block = static_cast<std::size_t>(block) / kWarp;
  // No block without a tile for its first warp: fewer blocks when the tiles are few.
  const std::size_t grid = std::max<std::size_t>(1, std::min(resident, div_up(tiles, warps_per_block)));

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = scratch_bytes_for(n);
  p.zero_scratch_once = true;  // the ticket starts at zero and every launch leaves it there
  p.error_depth = kTile / 128 + 2 + 5 + kGroup + common::tree_depth(group_count(tiles));
  return p;
}

void launch(const StageArgs& a) {
  const Scratch scratch = carve_scratch(a.scratch, a.n);
  if (reinterpret_cast<std::uintptr_t>(a.in) % alignof(float4) == 0) {
    reproducible_sum<true><<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, scratch, a.out);
  } else {
    reproducible_sum<false><<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, scratch, a.out);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Stage describe_reproducible() {
  Stage s;
  s.number = 14;
  s.id = "reproducible";
  s.title = "reproducible tiles";
  s.source = "reduction/14_reproducible.cu";
  s.chapter = "chapters/12_beyond_the_book.md";
  s.blocks.min = 128;
  s.blocks.max = kMaxBlock;  // __launch_bounds__
  s.blocks.preferred = 256;
  s.deterministic = true;  // and the same for every block size, grid, start address and GPU
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
