// Stage 16: a sum that is bitwise identical for every launch, start address and GPU.
//
// Idea: the order of the additions depends on n alone; reduction/16_reproducible_order.hpp
// defines it and replays it on the host. M tiles of T floats, T = tile_floats(n) a power
// of two from 1024 to 32768 (a function of n, never of the GPU or the launch, so there
// are about 1024 tiles or more from n = 2^20 up, enough to fill the GPU). The input is
// cut into 512-float stripes, and the stripes into runs: one stripe per run up to
// 2048-float tiles, eight neighbouring stripes (16 KiB) from 4096 up. Tile t owns runs
// t, t + M, t + 2M, ...: while every team is at the same run, the teams read one
// contiguous stretch of memory, as a grid-stride loop does. A team of 128 threads sums a
// tile always the same way (thread r adds the float4 at 4r of each stripe, component by
// component, then a fixed shuffle tree, then (w0 + w1) + (w2 + w3)); tile sums land in
// scratch by tile index, and the last block (stage 13's fence and ticket) adds them:
// groups of 32 left to right, then a pairwise tree.
// Two launch shapes, one order:
//   n <= 2^15 (at most 32 tiles of 1024): one block of 128 threads per tile, eight teams
//     at most, whatever block size was asked: every load issued before the first
//     addition, no atomic, no scratch; warp 0 adds the tile sums.
//   larger n: as many teams as the GPU holds, fewer when that evens out the tiles per
//     team (2048 tiles on 1056 teams would leave 64 teams one tile short). A block takes
//     a chunk of consecutive tiles, one per team, per round: its first two chunks by
//     its index in the grid, later ones from a counter (asked for while the loads are
//     in flight). Only __syncthreads(): every team of a block passes the same barriers.
// Loads: float4 where the input is 16-byte aligned (the float4 that n cuts is read in
// scalars, zeros beyond n), four scalar loads otherwise; the same order both ways, and
// the block size (a multiple of 128) changes only how many teams a block has.
// Fixes: the fixed 32768-float tile of the first design, which below 2^22 left most of
// the GPU idle; contiguous tiles, whose teams read 1024 streams 128 KiB apart and were
// slower than the stripes from 2^25 up; single stripes M apart at every step, whose
// batches of eight loads ptxas issued four at a time (up to half a percent behind CUB
// from 2^26 to 2^28 on an H200); and a counter per team with named barriers, which
// compute-sanitizer's racecheck flagged when a block's teams took different numbers of
// tiles (chapter 16 has the measurements).
// Error bound: T/512 + 2 + 5 + 2 + 32 + ceil(log2 G) additions, G the number of groups
// (reproducible::order_depth).
// Expect: as fast as stage 14's one-block kernel at 2^10-2^15, near stages 13-15 above,
// and at least as fast as CUB at every size; in Nsight Compute at 2^20, a grid of one
// tile per team and no atomics on the counter.
// Chapter: chapters/16_reproducible.md
#include <algorithm>
#include <cstdint>

#include "16_reproducible_order.hpp"
#include "cuda_check.hpp"
#include "primitives.cuh"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

using reproducible::div_up;
using reproducible::group_count;
using reproducible::join4;
using reproducible::kGroup;
using reproducible::kMinTile;
using reproducible::kRun;
using reproducible::kStripe;
using reproducible::kTeam;
using reproducible::kWarp;
using reproducible::stripe_of;
using reproducible::tile_count;
using reproducible::tile_floats;

constexpr int kWarpsPerTeam = kTeam / kWarp;       // 4
constexpr int kRunSteps = static_cast<int>(kRun);  // 8 stripes per run: eight float4 loads in flight
constexpr int kHalfRun = kRunSteps / 2;
constexpr std::size_t kSharedLevel = 1024;  // tree levels this small live in shared memory
constexpr int kMaxBlock = 1024;
constexpr int kMaxTeams = kMaxBlock / kTeam;
constexpr int kSmallBlock = 1024;                         // the one-block kernel's largest block
constexpr std::size_t kSmallMax = kGroup * kMinTile;      // 2^15: one group of 1024-float tiles
constexpr int kSmallTeams = kSmallBlock / kTeam;          // 8
constexpr int kSmallTilesPerTeam = kGroup / kSmallTeams;  // 4
constexpr unsigned kSmallTile = static_cast<unsigned>(kMinTile);
constexpr int kSmallLoads = kSmallTile / (4 * kTeam);  // 2 float4s per thread per tile
constexpr std::size_t kTicketBytes = 256;   // the ticket and the chunk counter, padded so the tile sums stay aligned
constexpr std::size_t kCounterOffset = 32;  // the chunk counter, in unsigneds from the ticket: its own 128-byte line
static_assert(kWarpsPerTeam == 4, "a tile sum combines exactly four warp sums");
static_assert(tile_floats(kSmallMax) == kMinTile, "the one-block path's tiles are the smallest");

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

// Elements i .. i + 3 of a tile that holds `count`; those at or past `count` read as +0
// (adding +0 to an accumulator that started at +0 leaves its bits as they are).
template <bool kAligned>
__device__ __forceinline__ float4 load4_until(const float* tile, std::size_t i, std::size_t count) {
  if (i + 4 <= count) return load4<kAligned>(tile + i);
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (i < count) v.x = __ldg(tile + i);
  if (i + 1 < count) v.y = __ldg(tile + i + 1);
  if (i + 2 < count) v.z = __ldg(tile + i + 2);
  return v;
}

__device__ __forceinline__ void add4(float (&acc)[4], float4 v) {
  acc[0] += v.x;
  acc[1] += v.y;
  acc[2] += v.z;
  acc[3] += v.w;
}

// `kLoads` float4s of one thread, `stride` floats apart, all issued before the first
// addition and then added in order. No load is conditional: a predicated load lets the
// compiler interleave each load with its additions, one memory round trip each.
template <bool kAligned, int kLoads>
__device__ __forceinline__ void add_batch(float (&acc)[4], const float* p, std::size_t stride) {
  float4 v[kLoads];
#pragma unroll
  for (int b = 0; b < kLoads; ++b) v[b] = load4<kAligned>(p + stride * b);
#pragma unroll
  for (int b = 0; b < kLoads; ++b) add4(acc, v[b]);
}

// Half a run: the thread's float4s in kHalfRun neighbouring stripes from q.
template <bool kAligned>
__device__ __forceinline__ void load_half_run(float4 (&v)[kHalfRun], const float* q) {
#pragma unroll
  for (int j = 0; j < kHalfRun; ++j) v[j] = load4<kAligned>(q + kStripe * j);
}

__device__ __forceinline__ void add_half_run(float (&acc)[4], const float4 (&v)[kHalfRun]) {
#pragma unroll
  for (int j = 0; j < kHalfRun; ++j) add4(acc, v[j]);
}

// A thread's value for a full tile, from p, its float4 in the tile's first stripe: its
// lane of each of the tile's stripes, added in increasing step. per_thread = T / 512 is
// a power of two from 2 to 64. Below 8, one batch of 2 or 4 stripes M apart (stride
// floats). From 8 on, runs of kRunSteps neighbouring stripes, run u starting
// stride * u * kRunSteps floats after p. The loads of run u + 1 go into the registers of
// run u as soon as they are added, half a run at a time: the compiler then issues all
// eight loads of a run back to back, from one address plus constants. (Written as "load
// a run, add it", ptxas issues a run's loads four at a time, waiting on the first four
// before issuing the rest; that measured slower on both GPUs.)
template <bool kAligned>
__device__ float full_tile_sum(const float* p, std::size_t stride, int per_thread) {
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (per_thread >= kRunSteps) {
    float4 lo[kHalfRun], hi[kHalfRun];  // the first and second half of the run in flight
    load_half_run<kAligned>(lo, p);
    load_half_run<kAligned>(hi, p + kStripe * kHalfRun);
#pragma unroll 1
    for (int k0 = kRunSteps; k0 < per_thread; k0 += kRunSteps) {
      const float* q = p + stride * k0;  // the next run's first stripe
      add_half_run(acc, lo);
      load_half_run<kAligned>(lo, q);
      add_half_run(acc, hi);
      load_half_run<kAligned>(hi, q + kStripe * kHalfRun);
    }
    add_half_run(acc, lo);
    add_half_run(acc, hi);
  } else if (per_thread == 4) {
    add_batch<kAligned, 4>(acc, p, stride);
  } else {
    add_batch<kAligned, 2>(acc, p, stride);
  }
  return join4(acc[0], acc[1], acc[2], acc[3]);
}

// A tile whose last stripe reaches past n: the same order for tile t of `tiles`, lane
// offset `lane4` (4r) in each stripe, two loads in flight, a float4 at or past n reading
// as +0 (adding +0 to an accumulator that started at +0 leaves its bits as they are).
template <bool kAligned>
__device__ float last_tile_sum(const float* in, std::size_t n, std::size_t t, std::size_t tiles, unsigned lane4,
                               int per_thread) {
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const auto steps = static_cast<std::size_t>(per_thread);
  for (int k0 = 0; k0 < per_thread; k0 += 2) {
    float4 v[2];
#pragma unroll
    for (int b = 0; b < 2; ++b)
      v[b] =
          load4_until<kAligned>(in, kStripe * stripe_of(t, static_cast<std::size_t>(k0 + b), tiles, steps) + lane4, n);
#pragma unroll
    for (int b = 0; b < 2; ++b) add4(acc, v[b]);
  }
  return join4(acc[0], acc[1], acc[2], acc[3]);
}

// The one-block kernel's element for team `team`, lane `rank`, tile slot j and step k:
// tile t = team + 8j, stripe t + k * tiles (32-bit indices: n <= 2^15).
__device__ __forceinline__ unsigned small_element(unsigned team, unsigned rank, int j, int k, unsigned tiles) {
  const unsigned t = team + kSmallTeams * j;
  return (t + tiles * k) * static_cast<unsigned>(kStripe) + 4 * rank;
}

// n <= kSmallMax: one block of 128 threads per tile, at most kSmallBlock. Team m takes
// tiles m, m + 8, m + 16, m + 24; every thread issues all its loads (one predicated
// float4 each) before the first addition, a team sums only the tiles that exist, and
// warp 0 adds the tile sums left to right (one group).
template <bool kAligned>
__global__ void __launch_bounds__(kSmallBlock) one_block_sum(const float* __restrict__ in, unsigned n, float* out) {
  __shared__ float warp_sums[kGroup][kWarpsPerTeam];
  const unsigned team = threadIdx.x / kTeam;
  const unsigned rank = threadIdx.x % kTeam;
  const unsigned tiles = (n + kSmallTile - 1) / kSmallTile;
  const unsigned whole = n & ~3u;  // elements in float4s that end at or before n
  float4 v[kSmallTilesPerTeam][kSmallLoads];
#pragma unroll
  for (int j = 0; j < kSmallTilesPerTeam; ++j) {
    const unsigned t = team + kSmallTeams * j;
#pragma unroll
    for (int k = 0; k < kSmallLoads; ++k) {
      const unsigned i = small_element(team, rank, j, k, tiles);
      v[j][k] = t < tiles && i < whole ? load4<kAligned>(in + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  }
  // The float4 that n cuts (n not a multiple of 4): the thread that owns it reads its
  // one to three floats; the rest of it stays +0.
  if (whole < n) {
#pragma unroll
    for (int j = 0; j < kSmallTilesPerTeam; ++j) {
#pragma unroll
      for (int k = 0; k < kSmallLoads; ++k) {
        const unsigned i = small_element(team, rank, j, k, tiles);
        if (team + kSmallTeams * j < tiles && i == whole) {
          v[j][k].x = in[i];
          if (i + 1 < n) v[j][k].y = in[i + 1];
          if (i + 2 < n) v[j][k].z = in[i + 2];
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kSmallTilesPerTeam; ++j) {
    const unsigned t = team + kSmallTeams * j;
    if (t >= tiles) break;  // the same for the whole team
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < kSmallLoads; ++k) add4(acc, v[j][k]);
    const float s = warp_sum(join4(acc[0], acc[1], acc[2], acc[3]));
    if (threadIdx.x % kWarp == 0) warp_sums[t][rank / kWarp] = s;
  }
  __syncthreads();
  // Lane t forms tile t's sum; lane 0 then adds them left to right from shared memory
  // (eight 16-byte reads and a chain of additions, not a chain of shuffles).
  __shared__ __align__(16) float tile_sums[kGroup];
  if (threadIdx.x < kWarp) {
    const float* w = warp_sums[threadIdx.x];
    tile_sums[threadIdx.x] = threadIdx.x < tiles ? join4(w[0], w[1], w[2], w[3]) : 0.0f;
    __syncwarp();
    if (threadIdx.x == 0) {
      float v[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup / 4; ++j) {
        const float4 q = reinterpret_cast<const float4*>(tile_sums)[j];
        v[4 * j] = q.x;
        v[4 * j + 1] = q.y;
        v[4 * j + 2] = q.z;
        v[4 * j + 3] = q.w;
      }
      // A tile past the end holds +0, which leaves the sum's bits as they are; past
      // eight tiles the chain goes on to all 32.
      float s = v[0];
#pragma unroll
      for (unsigned t = 1; t < kSmallTeams; ++t) s += v[t];
      if (tiles > kSmallTeams) {
#pragma unroll
        for (unsigned t = kSmallTeams; t < kGroup; ++t) s += v[t];
      }
      *out = s;
    }
  }
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
  unsigned* next_chunk;  // chunks handed out after each block's first two, from 0
  float* tile_sums;      // kGroup * groups slots, transposed (tile_slot)
  float* global_a;       // groups floats
  float* global_b;       // ceil(groups / 2) floats
};

Scratch carve_scratch(void* base, std::size_t n) {
  const std::size_t groups = group_count(tile_count(n));
  auto* bytes = static_cast<unsigned char*>(base);
  Scratch s;
  s.ticket = reinterpret_cast<unsigned*>(bytes);
  s.next_chunk = s.ticket + kCounterOffset;
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
    tiled_sum(const float* __restrict__ in, std::size_t n, Scratch scratch, float* out) {
  __shared__ float level_a[kSharedLevel];
  __shared__ float level_b[kSharedLevel];
  __shared__ float warp_sums[2][kMaxTeams][kWarpsPerTeam];  // two rounds' worth: see below
  __shared__ std::size_t next_base[2];
  __shared__ bool is_last;

  const unsigned team = threadIdx.x / kTeam;
  const unsigned rank = threadIdx.x % kTeam;
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = rank / kWarp;
  const std::size_t tile = tile_floats(n);
  const int per_thread = static_cast<int>(tile / (4 * kTeam));
  const std::size_t tiles = tile_count(n);
  const std::size_t full_stripes = n / kStripe;
  const std::size_t stride = tiles * kStripe;
  const std::size_t groups = group_count(tiles);
  const std::size_t per_block = blockDim.x / kTeam;
  const std::size_t teams = gridDim.x * per_block;

  // A block works in rounds on a chunk of per_block consecutive tiles, one per team, so
  // every team of the block passes the same barriers (__syncthreads() only). Its first
  // two chunks are its place in the grid, blockIdx.x and blockIdx.x + gridDim.x; later
  // ones come from a counter, in order, so that blocks that ran fast take more. Thread 0
  // asks for the next chunk before the loads and publishes it after them, so the
  // atomic's trip to L2 hides behind the loads. One barrier per round: round r writes
  // buffer r % 2, so round r + 1 cannot overwrite what is still being read from round r.
  std::size_t base = blockIdx.x * per_block;  // the first tile of the block's chunk
  for (unsigned r = 0; base < tiles; ++r) {
    const unsigned buf = r % 2;
    std::size_t next = base + teams;
    if (threadIdx.x == 0 && r > 0 && tiles > 2 * teams)
      next = (2 * gridDim.x + atomicAdd(scratch.next_chunk, 1u)) * per_block;
    const std::size_t t = base + team;
    if (t < tiles) {  // a team past the last tile only waits at the barrier
      const std::size_t steps = static_cast<std::size_t>(per_thread);
      const float v =
          stripe_of(t, steps - 1, tiles, steps) < full_stripes
              ? full_tile_sum<kAligned>(in + kStripe * stripe_of(t, 0, tiles, steps) + 4 * rank, stride, per_thread)
              : last_tile_sum<kAligned>(in, n, t, tiles, 4 * rank, per_thread);
      const float s = warp_sum(v);
      if (lane == 0) warp_sums[buf][team][warp] = s;
    }
    if (threadIdx.x == 0) next_base[buf] = next;
    __syncthreads();
    if (rank == 0 && t < tiles) {
      const float* w = warp_sums[buf][team];
      scratch.tile_sums[tile_slot(t, groups)] = join4(w[0], w[1], w[2], w[3]);
    }
    base = next_base[buf];
  }

  // Publish this block's tile sums, then take a ticket: the block that draws the last
  // one knows every tile sum is in memory. Several threads wrote tile sums; the barrier
  // orders their stores before thread 0's fence, which orders them before the ticket
  // (release), and the last block's thread 0 fences after its ticket (acquire) before
  // the barrier that lets the block read (chapter 13).
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    is_last = atomicAdd(scratch.ticket, 1u) == gridDim.x - 1;
    if (is_last) __threadfence();
  }
  __syncthreads();
  if (!is_last) return;

  sum_tile_sums(scratch.tile_sums, tiles, scratch.global_a, scratch.global_b, level_a, level_b, out);
  // Ready for the next launch, which sees them in stream order. Every block's last
  // atomicAdd on the counter came before it took a ticket.
  if (threadIdx.x == 0) {
    *scratch.ticket = 0;
    *scratch.next_chunk = 0;
  }
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  LaunchPlan p;
  p.error_depth = reproducible::order_depth(n);
  if (n <= kSmallMax) {
    p.grid = 1;  // one_block_sum: 128 threads per tile up to kSmallBlock, no scratch
    return p;
  }
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tiled_sum<true>, block, 0));
  // As many teams as one wave holds, or fewer when that evens out the tiles per team
  // (launch_shape.hpp).
  const std::size_t grid =
      shape::team_grid(device, block, per_sm, tile_count(n), static_cast<std::size_t>(block / kTeam));
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = scratch_bytes_for(n);
  p.zero_scratch_once = true;  // the ticket and counter start at zero and every launch leaves them there
  return p;
}

void launch(const StageArgs& a) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(a.in) % alignof(float4) == 0;
  if (a.n <= kSmallMax) {
    const auto n = static_cast<unsigned>(a.n);
    const int threads = kTeam * static_cast<int>(std::min<std::size_t>(kSmallTeams, tile_count(a.n)));
    if (aligned) {
      one_block_sum<true><<<1, threads, 0, a.stream>>>(a.in, n, a.out);
    } else {
      one_block_sum<false><<<1, threads, 0, a.stream>>>(a.in, n, a.out);
    }
  } else {
    const Scratch scratch = carve_scratch(a.scratch, a.n);
    if (aligned) {
      tiled_sum<true><<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, scratch, a.out);
    } else {
      tiled_sum<false><<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, scratch, a.out);
    }
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
  s.blocks.min = 128;        // one team
  s.blocks.max = kMaxBlock;  // __launch_bounds__; up to 2^15 the one-block kernel picks its own size
  s.blocks.preferred = 256;
  // The chunk counter is 32-bit: fewer than 2^32 chunks (plus one overshoot per block).
  s.max_n = std::size_t{1} << 45;
  s.deterministic = true;  // and the same for every block size, grid, start address and GPU
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
