// Stage 16: a sum that is bitwise identical for every launch, start address and GPU.
//
// Idea: the order of the additions depends on n alone. Tiles of kTile = 32768 floats (a
// constant of the result's definition); a team of 128 threads sums a tile always the
// same way (thread r adds float4s r, r + 128, ... component by component, then a fixed
// shuffle tree, then (w0 + w1) + (w2 + w3)); teams take tiles in order from a counter,
// and tile sums land in scratch by tile index. The last block (stage 13's fence and
// ticket) adds them in a fixed order: groups of 32 left to right, then a pairwise tree.
// A misaligned input is read with scalar loads in the float4 path's order.
// Fixes: stages 13-15 change their sum with the block size, the grid and the alignment.
// Error bound: 64 + 2 + 5 + 2 + 32 + ceil(log2 G) additions, G the number of groups.
// Expect: near stage 15 at large n, slower at small n (few tiles, few teams).
// Chapter: chapters/16_reproducible.md
#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"
#include "primitives.cuh"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

constexpr std::size_t kTile = 32768;  // floats per tile: fixed forever, part of the result's definition
constexpr int kWarp = 32;
constexpr int kTeam = 128;                           // threads that sum one tile: four warps
constexpr int kWarpsPerTeam = kTeam / kWarp;         // 4
constexpr int kFloat4PerThread = kTile / 4 / kTeam;  // 64 float4 loads per thread per tile
constexpr int kBatch = 8;                            // float4 loads in flight per thread
constexpr int kGroup = 32;                           // tile sums per group in the final sum
constexpr std::size_t kSharedLevel = 1024;           // tree levels this small live in shared memory
constexpr int kMaxBlock = 1024;
constexpr std::size_t kTicketBytes = 256;   // the ticket and the tile counter, padded so the tile sums stay aligned
constexpr std::size_t kCounterOffset = 32;  // the tile counter, in unsigneds from the ticket: its own 128-byte line
constexpr int kMaxTeams = kMaxBlock / kTeam;
static_assert(kTile % (4 * kTeam * kBatch) == 0, "a tile is a whole number of batches");
static_assert(kWarpsPerTeam == 4, "the tile sum below combines exactly four warp sums");

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

// A full tile: thread r of the team adds the float4s r + 128k, k = 0..63, component
// by component; lane 0 of each warp gets its warp's sum.
template <bool kAligned>
__device__ float full_tile_sum(const float* tile, unsigned rank) {
  float ax = 0.0f, ay = 0.0f, az = 0.0f, aw = 0.0f;
  const float* p = tile + 4 * rank;
  for (int k0 = 0; k0 < kFloat4PerThread; k0 += kBatch) {
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = load4<kAligned>(p + 4 * kTeam * (k0 + b));  // all in flight
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      ax += v[b].x;
      ay += v[b].y;
      az += v[b].z;
      aw += v[b].w;
    }
  }
  return warp_sum((ax + ay) + (az + aw));  // in lane 0
}

// The last tile when n is not a multiple of kTile: the same order, skipping the
// elements past the end. It is read with scalar loads whatever the alignment.
__device__ float partial_tile_sum(const float* tile, std::size_t count, unsigned rank) {
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < kFloat4PerThread; ++k) {
    const std::size_t first = 4 * (rank + static_cast<std::size_t>(kTeam) * k);
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (first + c < count) acc[c] += __ldg(tile + first + c);
  }
  return warp_sum((acc[0] + acc[1]) + (acc[2] + acc[3]));  // in lane 0
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
  unsigned* next_tile;  // the next tile to hand out
  float* tile_sums;     // kGroup * groups slots, transposed (tile_slot)
  float* global_a;      // groups floats
  float* global_b;      // ceil(groups / 2) floats
};

Scratch carve_scratch(void* base, std::size_t n) {
  const std::size_t groups = group_count(tile_count(n));
  auto* bytes = static_cast<unsigned char*>(base);
  Scratch s;
  s.ticket = reinterpret_cast<unsigned*>(bytes);
  s.next_tile = s.ticket + kCounterOffset;
  s.tile_sums = reinterpret_cast<float*>(bytes + kTicketBytes);
  s.global_a = s.tile_sums + kGroup * groups;
  s.global_b = s.global_a + groups;
  return s;
}

std::size_t scratch_bytes_for(std::size_t n) {
  const std::size_t groups = group_count(tile_count(n));
  return kTicketBytes + (kGroup * groups + groups + div_up(groups, 2)) * sizeof(float);
}

// A barrier for the 128 threads of one team only (a named barrier: ids 1..8, as 0 is
// the one __syncthreads() uses).
__device__ __forceinline__ void team_sync(unsigned team) {
  asm volatile("bar.sync %0, %1;" ::"r"(team + 1), "r"(kTeam) : "memory");
}

template <bool kAligned>
__global__ void __launch_bounds__(kMaxBlock)
    reproducible_sum(const float* __restrict__ in, std::size_t n, Scratch scratch, float* out) {
  __shared__ float level_a[kSharedLevel];
  __shared__ float level_b[kSharedLevel];
  __shared__ unsigned team_tile[kMaxTeams];
  __shared__ float warp_sums[kMaxTeams][kWarpsPerTeam];
  __shared__ bool is_last;

  const unsigned team = threadIdx.x / kTeam;
  const unsigned rank = threadIdx.x % kTeam;
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = rank / kWarp;
  const std::size_t tiles = tile_count(n);
  const std::size_t full_tiles = n / kTile;
  const std::size_t groups = group_count(tiles);

  // Each team takes the next tile from the counter until none is left. Tiles are
  // handed out in order, so the teams stream through memory side by side. Its first
  // thread takes the tile number and, after the tile, stores the tile sum and takes
  // the next number, while the team waits at its barrier.
  if (rank == 0) team_tile[team] = atomicAdd(scratch.next_tile, 1u);
  for (;;) {
    team_sync(team);
    const std::size_t t = team_tile[team];
    if (t >= tiles) break;
    const float* tile = in + t * kTile;
    const float s = t < full_tiles ? full_tile_sum<kAligned>(tile, rank) : partial_tile_sum(tile, n - t * kTile, rank);
    if (lane == 0) warp_sums[team][warp] = s;
    team_sync(team);
    if (rank == 0) {
      const float* w = warp_sums[team];
      scratch.tile_sums[tile_slot(t, groups)] = (w[0] + w[1]) + (w[2] + w[3]);
      team_tile[team] = atomicAdd(scratch.next_tile, 1u);
    }
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
  // Ready for the next launch, which sees them in stream order. Every warp's last
  // atomicAdd on the counter came before its block took a ticket.
  if (threadIdx.x == 0) {
    *scratch.ticket = 0;
    *scratch.next_tile = 0;
  }
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reproducible_sum<true>, block, 0));
  const std::size_t resident =
      static_cast<std::size_t>(std::max(per_sm, 1)) * static_cast<std::size_t>(device.sm_count);
  const std::size_t tiles = tile_count(n);
  const std::size_t teams_per_block = static_cast<std::size_t>(block) / kTeam;
  // No block without a tile for its first team: fewer blocks when the tiles are few.
  const std::size_t grid = std::max<std::size_t>(1, std::min(resident, div_up(tiles, teams_per_block)));

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = scratch_bytes_for(n);
  p.zero_scratch_once = true;  // the ticket starts at zero and every launch leaves it there
  p.error_depth = kFloat4PerThread + 2 + 5 + 2 + kGroup + common::tree_depth(group_count(tiles));
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
  s.number = 16;
  s.id = "reproducible";
  s.title = "reproducible tiles";
  s.source = "reduction/16_reproducible.cu";
  s.chapter = "chapters/16_reproducible.md";
  s.blocks.min = 128;
  s.blocks.max = kMaxBlock;  // __launch_bounds__
  s.blocks.preferred = 256;
  // The tile counter is 32-bit: fewer than 2^32 tiles (plus one overshoot per warp).
  s.max_n = std::size_t{1} << 45;
  s.deterministic = true;  // and the same for every block size, grid, start address and GPU
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
