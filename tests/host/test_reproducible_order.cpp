// The host replay of stage 16's order (reduction/16_reproducible_order.hpp): the tile size
// as a function of n, the depth it states, and results that only that order gives.
// tests/gpu/test_reproducible.cpp compares the GPU's bits with the same replay.
#include <cmath>
#include <cstddef>
#include <vector>

#include "16_reproducible_order.hpp"
#include "catch.hpp"
#include "inputs.hpp"
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
