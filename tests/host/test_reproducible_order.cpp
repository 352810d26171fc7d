// The host replay of stage 16's order (reduction/16_reproducible_order.hpp): the tile size
// as a function of n, the depth it states, and results that only that order gives.
// tests/gpu/test_reproducible.cpp compares the GPU's bits with the same replay.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "catch.hpp"
#include "inputs.hpp"
#include "reduction/16_reproducible_order.hpp"
#include "verify.hpp"

namespace ro = reduction::reproducible;

TEST_CASE("stage 16's tile size is a power of two from 1024 to 32768 chosen by n", "[reproducible]") {
  std::size_t previous = 0;
  for (int k = 0; k <= 40; ++k) {
    const std::size_t n = std::size_t{1} << k;
    const std::size_t t = ro::tile_floats(n);
    INFO("n = 2^" << k << ", tile " << t);
    CHECK((t & (t - 1)) == 0);
    CHECK(t >= ro::kMinTile);
    CHECK(t <= ro::kMaxTile);
    CHECK(t >= previous);  // never smaller for a larger n
    // Below the largest tile there are at least kTargetTiles tiles once n allows it.
    if (t < ro::kMaxTile && t > ro::kMinTile) CHECK(ro::tile_count(n) >= ro::kTargetTiles);
    previous = t;
  }
  // Where it changes: 2^21 through 2^25.
  for (int k = 21; k <= 25; ++k) {
    const std::size_t n = std::size_t{1} << k;
    CHECK(ro::tile_floats(n - 1) == std::size_t{1} << (k - 11));
    CHECK(ro::tile_floats(n) == std::size_t{1} << (k - 10));
  }
  CHECK(ro::tile_count(1) == 1);
  CHECK(ro::tile_count(1025) == 2);
  CHECK(ro::group_count(32) == 1);
  CHECK(ro::group_count(33) == 2);
}

TEST_CASE("stage 16's tiles own every stripe once, in runs of eight from 4096-float tiles", "[reproducible]") {
  for (std::size_t n : {std::size_t{40000}, (std::size_t{1} << 22) - 1, std::size_t{1} << 22,
                        (std::size_t{1} << 22) + 513, (std::size_t{1} << 25) + 7}) {
    const std::size_t tiles = ro::tile_count(n);
    const std::size_t steps = ro::tile_floats(n) / ro::kStripe;
    INFO("n = " << n << ", " << tiles << " tiles of " << steps << " stripes");
    std::vector<int> owners(tiles * steps, 0);
    bool in_range = true;
    for (std::size_t t = 0; t < tiles; ++t)
      for (std::size_t k = 0; k < steps; ++k) {
        const std::size_t s = ro::stripe_of(t, k, tiles, steps);
        if (s < owners.size()) {
          ++owners[s];
        } else {
          in_range = false;
        }
        // Within a tile the stripes grow with the step.
        if (k > 0) CHECK(s > ro::stripe_of(t, k - 1, tiles, steps));
      }
    CHECK(in_range);
    CHECK(std::count(owners.begin(), owners.end(), 1) == static_cast<std::ptrdiff_t>(owners.size()));
    // Tile 1's first steps: the next stripe over (runs of one), or stripes 8 to 15.
    const std::size_t run = steps >= 8 ? 8 : 1;
    CHECK(ro::stripe_of(1, 0, tiles, steps) == run);
    CHECK(ro::stripe_of(0, 1, tiles, steps) == (run == 8 ? 1 : tiles));
    if (run == 8) CHECK(ro::stripe_of(0, 8, tiles, steps) == 8 * tiles);
  }
  CHECK(ro::tile_floats((std::size_t{1} << 22) - 1) / ro::kStripe == 4);  // runs of one below 2^22
  CHECK(ro::tile_floats(std::size_t{1} << 22) / ro::kStripe == 8);        // runs of eight from 2^22
}

TEST_CASE("the host replay adds a tile's stripes in its runs", "[reproducible]") {
  // n = 2^22: 1024 tiles of 4096 floats, eight steps, one run each, so tile t is floats
  // 4096t to 4096t + 4095. Element 0 is 2^24 (tile 0); ones at elements 4096 and 4608,
  // lane 0 of stripes 8 and 9, both in tile 1, where they make 2 before meeting 2^24 in
  // the group's chain: 2^24 + 2. Were stripe s read by tile s mod 1024 (runs of one),
  // the ones would be tiles 8 and 9 and reach 2^24 one at a time, each lost: 2^24.
  const std::size_t n = std::size_t{1} << 22;
  std::vector<float> x(n, 0.0f);
  x[0] = 0x1p24f;
  x[4096] = 1.0f;
  x[4608] = 1.0f;
  CHECK(ro::reproducible_order_sum(x.data(), n) == 0x1p24f + 2.0f);
}

TEST_CASE("the host replay of stage 16's order is exact where every partial sum is", "[reproducible]") {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{1023}, std::size_t{1025}, std::size_t{40000},
                        (std::size_t{1} << 22) + 1}) {
    const auto x = common::make_input(common::Pattern::ones, 1, n);
    INFO("ones, n = " << n);
    CHECK(ro::reproducible_order_sum(x.data(), n) == static_cast<float>(n));
  }
}

TEST_CASE("the host replay of stage 16's order is within the depth it states", "[reproducible]") {
  for (common::Pattern p : {common::Pattern::uniform, common::Pattern::mixed_signs}) {
    for (std::size_t n : {std::size_t{3}, std::size_t{4097}, (std::size_t{1} << 15) + 1, (std::size_t{1} << 22) + 5,
                          (std::size_t{1} << 23) - 3}) {
      const auto x = common::make_input(p, 7, n);
      const float got = ro::reproducible_order_sum(x.data(), n);
      const auto check = common::check_sum(got, common::reference_sum(x), ro::order_depth(n), n);
      INFO(common::pattern_name(p) << " n = " << n << ": " << check.detail);
      CHECK(check.ok);
    }
  }
  // The depth: 2 float4s per lane, 2 + 5 + 2, a group of 32, one group.
  CHECK(ro::order_depth(1) == 2 + 2 + 5 + 2 + 32);
  // 2^30: tiles of 32768 (64 float4s per lane), 2^15 tiles, 2^10 groups.
  CHECK(ro::order_depth(std::size_t{1} << 30) == 64 + 2 + 5 + 2 + 32 + 10);
}

TEST_CASE("the host replay follows the lanes and the warp tree, not the index order", "[reproducible]") {
  // One tile of 1024 floats: 2^24 as element 0 (lane 0), ones as elements 4 and 8
  // (lanes 1 and 2), zeros elsewhere. The warp tree adds lane 2 to lane 0 (offset 2),
  // then lane 1 (offset 1): 2^24 + 1 rounds to 2^24 twice. An order that added the
  // ones first would give 2^24 + 2, which is a float.
  std::vector<float> x(1024, 0.0f);
  x[0] = 0x1p24f;
  x[4] = 1.0f;
  x[8] = 1.0f;
  CHECK(ro::reproducible_order_sum(x.data(), x.size()) == 0x1p24f);
  // Lanes 0 and 16 meet first (offset 16): the ones of lanes 16 and 17 (elements 64 and
  // 68) reach lane 0 as 1 and then 1 again, each lost; in lanes 1 and 3 (elements 4 and
  // 12) they meet each other first (offset 2 into lane 1) and arrive as 2, which counts.
  std::vector<float> y(1024, 0.0f);
  y[0] = 0x1p24f;
  y[64] = 1.0f;
  y[68] = 1.0f;
  CHECK(ro::reproducible_order_sum(y.data(), y.size()) == 0x1p24f);
  std::vector<float> z(1024, 0.0f);
  z[0] = 0x1p24f;
  z[4] = 1.0f;
  z[12] = 1.0f;
  CHECK(ro::reproducible_order_sum(z.data(), z.size()) == 0x1p24f + 2.0f);
}
