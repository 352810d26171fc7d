// The order of stage 16's additions, as a function of n alone, and a host replay of it.
//
// Stage 16 (reduction/16_reproducible.cu) promises the same bits for every launch and
// GPU. That promise is a definition: this file states it, and reproducible_order_sum()
// computes it on the host with float arithmetic, so a test can compare the GPU's bits
// with it (tests/gpu/test_reproducible.cpp) and the chapter (chapters/16_reproducible.md)
// can point at one place.
//
// The order, for n floats x[0..n):
//   1. Tiles. T = tile_floats(n), a power of two from 1024 to 32768 that depends on n only:
//      the largest power of two not above n / 1024, clamped to that range. There are
//      M = ceil(n / T) tiles of S = T / 512 steps. The array is cut into stripes of 512
//      floats (stripe s holds x[512s .. 512s + 511]), and the stripes into runs of R
//      consecutive stripes: R = 8 when S >= 8 (T >= 4096, from n = 2^22), else R = 1.
//      Tile t owns the runs t, t + M, t + 2M, ...: at step k it reads stripe
//      R(t + floor(k / R) M) + k mod R (stripe_of). With R = 1 that is stripe t + kM; with
//      R = 8, eight steps read eight neighbouring stripes, and at each run the tiles
//      together cover M * R contiguous stripes.
//   2. Inside a tile, 128 lanes r = 0..127. Lane r keeps four accumulators (x, y, z, w),
//      starting at +0, and at step k = 0, 1, ..., S - 1 adds the elements
//      512 stripe_of(t, k) + 4r + c into accumulator c (c = 0..3); elements at or past n
//      are skipped. The lane's value is (x + y) + (z + w).
//   3. Warp j (lanes 32j .. 32j + 31) adds its lanes with the shuffle tree of warp_sum
//      (primitives.cuh): five rounds, at offsets 16, 8, 4, 2, 1, lane i adding lane i + offset.
//   4. The tile's sum is (w0 + w1) + (w2 + w3) over its four warps.
//   5. Groups of 32 consecutive tile sums (the last group may be shorter), each added left
//      to right starting from its first tile sum.
//   6. A pairwise tree over the group sums: each level pairs values 2i and 2i + 1 into
//      value i (an odd last value goes up alone), until one value is left.
// A skipped element contributes nothing; the GPU adds +0 in its place, which gives the
// same bits, since an accumulator that starts at +0 can never hold -0.
#pragma once

#include <cstddef>
#include <vector>

#if defined(__CUDACC__)
#define REPRODUCIBLE_HD __host__ __device__
#else
#define REPRODUCIBLE_HD
#endif

namespace reduction::reproducible {

constexpr std::size_t kMinTile = 1024;      // floats; two float4s per lane
constexpr std::size_t kMaxTile = 32768;     // floats; 64 float4s per lane
constexpr std::size_t kTargetTiles = 1024;  // at least this many tiles once n reaches 2^20
constexpr int kTeam = 128;                  // lanes per tile
constexpr std::size_t kStripe = 4 * kTeam;  // floats per stripe: one float4 per lane
constexpr int kWarp = 32;
constexpr int kGroup = 32;                                 // tile sums per group in step 5
constexpr unsigned kRunShift = 3;                          // runs of 2^3 stripes in step 1,
constexpr std::size_t kRun = std::size_t{1} << kRunShift;  // once a tile has that many steps

REPRODUCIBLE_HD constexpr std::size_t div_up(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// How steps 2 and 4 join four values: a lane its four accumulators, a tile its four
// warps. One definition, used by the host replay and by both of stage 16's kernels.
REPRODUCIBLE_HD inline float join4(float a, float b, float c, float d) { return (a + b) + (c + d); }

// Step 1's tile size: a power of two in [kMinTile, kMaxTile], a function of n alone.
REPRODUCIBLE_HD constexpr std::size_t tile_floats(std::size_t n) {
  std::size_t t = kMinTile;
  while (t < kMaxTile && 2 * t * kTargetTiles <= n) t *= 2;
  return t;
}
REPRODUCIBLE_HD constexpr std::size_t tile_count(std::size_t n) { return div_up(n, tile_floats(n)); }
REPRODUCIBLE_HD constexpr std::size_t group_count(std::size_t tiles) { return div_up(tiles, kGroup); }

// Step 1's runs: R = 2^run_shift stripes for tiles of `steps` steps (shifts, not
// divisions, since the GPU computes this too).
REPRODUCIBLE_HD constexpr unsigned run_shift(std::size_t steps) { return steps >= kRun ? kRunShift : 0; }
// The stripe that tile t of `tiles` reads at step k, for tiles of `steps` steps:
// R(t + floor(k / R) M) + k mod R. The stripes of a tile grow with k, so its last step
// reads its last stripe.
REPRODUCIBLE_HD constexpr std::size_t stripe_of(std::size_t t, std::size_t k, std::size_t tiles, std::size_t steps) {
  const unsigned s = run_shift(steps);
  return ((t + (k >> s) * tiles) << s) + (k & ((std::size_t{1} << s) - 1));
}

// Where the tile size changes (n = 2^k, k = 21..25) and the tile counts around them.
static_assert(tile_floats(1) == 1024 && tile_floats((std::size_t{1} << 21) - 1) == 1024, "");
static_assert(tile_floats(std::size_t{1} << 21) == 2048 && tile_floats(std::size_t{1} << 25) == 32768 &&
                  tile_floats((std::size_t{1} << 25) - 1) == 16384,
              "");
static_assert(tile_floats(std::size_t{1} << 40) == 32768, "");
// Runs of one stripe up to 2048-float tiles (four steps), of eight from 4096 (eight steps).
static_assert(stripe_of(3, 2, 100, 4) == 3 + 2 * 100 && stripe_of(0, 7, 100, 8) == 7, "");
static_assert(stripe_of(1, 0, 100, 64) == 8 && stripe_of(1, 9, 100, 64) == 8 * 101 + 1, "");

// Steps 2-4: the sum of tile t of `tiles`, for x[0..n).
inline float tile_sum(const float* x, std::size_t n, std::size_t t, std::size_t tiles) {
  const std::size_t steps = tile_floats(n) / kStripe;
  float warp[kTeam / kWarp];
  for (int j = 0; j < kTeam / kWarp; ++j) {
    float lanes[kWarp];
    for (int l = 0; l < kWarp; ++l) {
      const std::size_t r = static_cast<std::size_t>(j * kWarp + l);
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (std::size_t k = 0; k < steps; ++k)
        for (std::size_t c = 0; c < 4; ++c) {
          const std::size_t i = kStripe * stripe_of(t, k, tiles, steps) + 4 * r + c;
          if (i < n) acc[c] += x[i];
        }
      lanes[l] = join4(acc[0], acc[1], acc[2], acc[3]);
    }
    // Lane i takes lane i + offset's value from before the round; lane 0's result
    // needs only lanes whose partner is below 32.
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      for (int i = 0; i + offset < kWarp; ++i) lanes[i] += lanes[i + offset];
    warp[j] = lanes[0];
  }
  return join4(warp[0], warp[1], warp[2], warp[3]);
}

// Steps 5-6 over the tile sums.
inline float combine_tile_sums(const std::vector<float>& tiles) {
  std::vector<float> level;
  for (std::size_t g = 0; g < tiles.size(); g += kGroup) {
    float s = tiles[g];
    for (std::size_t j = g + 1; j < g + kGroup && j < tiles.size(); ++j) s += tiles[j];
    level.push_back(s);
  }
  while (level.size() > 1) {
    std::vector<float> next((level.size() + 1) / 2);
    for (std::size_t i = 0; i < next.size(); ++i)
      next[i] = 2 * i + 1 < level.size() ? level[2 * i] + level[2 * i + 1] : level[2 * i];
    level.swap(next);
  }
  return level.empty() ? 0.0f : level[0];
}

// Stage 16's result for x[0..n), computed on the host in the order above (n >= 1).
inline float reproducible_order_sum(const float* x, std::size_t n) {
  const std::size_t tiles = tile_count(n);
  std::vector<float> sums(tiles);
  for (std::size_t t = 0; t < tiles; ++t) sums[t] = tile_sum(x, n, t, tiles);
  return combine_tile_sums(sums);
}

// The most additions any element passes through in this order (common/verify.hpp): its
// lane's accumulator, joining the four components, the warp tree, joining the warps,
// its group and the tree over the groups.
inline std::size_t order_depth(std::size_t n) {
  std::size_t tree = 0;
  while ((std::size_t{1} << tree) < group_count(tile_count(n))) ++tree;
  return tile_floats(n) / (4 * kTeam) + 2 + 5 + 2 + kGroup + tree;
}

}  // namespace reduction::reproducible
