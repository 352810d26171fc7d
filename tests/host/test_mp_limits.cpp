// The INT8 variant's overflow limit: the value range chosen for each n, and the
// runner's refusal of any n past it.
#include <cstdint>
#include <random>
#include <vector>

#include "catch.hpp"
#include "dot_inputs.hpp"
#include "dot_runner.hpp"
#include "tolerance.hpp"
#include "variants.hpp"

using mixed_precision::int8_magnitude_limit;
using mixed_precision::kInt8MaxN;

namespace {

constexpr std::int64_t kInt32Max = 2147483647;

// The property the limit must have: the worst partial sum fits, one more step of
// range would not (unless the range is already the whole of int8).
void require_limit_is_tight(std::uint64_t n) {
  const int m = int8_magnitude_limit(n);
  INFO("n = " << n << ", m = " << m);
  REQUIRE(m >= 1);
  REQUIRE(m <= 127);
  const std::int64_t worst = static_cast<std::int64_t>(n) * m * m;
  REQUIRE(worst <= kInt32Max);
  if (m < 127) REQUIRE(static_cast<std::int64_t>(n) * (m + 1) * (m + 1) > kInt32Max);
}

}  // namespace

TEST_CASE("int8 value range: the widest m with n m^2 <= 2^31 - 1", "[mp][int8]") {
  CHECK(int8_magnitude_limit(1) == 127);
  CHECK(int8_magnitude_limit(133144) == 127);  // 133144 x 127^2 = 2147479576
  CHECK(int8_magnitude_limit(133145) == 126);  // 133145 x 127^2 = 2147495705 > 2^31 - 1
  CHECK(int8_magnitude_limit(std::uint64_t{1} << 20) == 45);
  CHECK(int8_magnitude_limit(std::uint64_t{1} << 24) == 11);  // 2^24 x 121 = 2030043136
  CHECK(int8_magnitude_limit(std::uint64_t{1} << 28) == 2);   // 2^28 x 4 = 2^30
  CHECK(int8_magnitude_limit(std::uint64_t{1} << 29) == 1);   // 2^29 x 4 = 2^31 overflows
  CHECK(int8_magnitude_limit(kInt8MaxN) == 1);
  CHECK(int8_magnitude_limit(kInt8MaxN + 1) == 0);
  CHECK(int8_magnitude_limit(std::uint64_t{1} << 40) == 0);
  CHECK(int8_magnitude_limit(0) == 0);
  CHECK(kInt8MaxN == static_cast<std::uint64_t>(kInt32Max));
}

TEST_CASE("int8 value range is tight at every size up to the limit", "[mp][int8]") {
  std::vector<std::uint64_t> sizes = {1, 2, 3, 1000, 133143, 133144, 133145, kInt8MaxN - 1, kInt8MaxN};
  for (int k = 1; k <= 31; ++k) {
    const std::uint64_t p = std::uint64_t{1} << k;
    for (std::uint64_t n : {p - 1, p, p + 1})
      if (n >= 1 && n <= kInt8MaxN) sizes.push_back(n);
  }
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) sizes.push_back(1 + rng() % kInt8MaxN);
  for (std::uint64_t n : sizes) require_limit_is_tight(n);
}

TEST_CASE("the int8 poison value is no possible result", "[mp][int8]") {
  // Every accepted result lies in [-(2^31 - 1), 2^31 - 1]; the poison is -2^31.
  REQUIRE(static_cast<std::int64_t>(mixed_precision::kInt32Poison) < -kInt32Max);
}

TEST_CASE("the runner refuses n past the INT8 limit and names it", "[mp][int8][cli]") {
  const auto* int8 = mixed_precision::find_variant("int8_dp4a");
  const auto* fp16 = mixed_precision::find_variant("fp16_float_accumulate");
  REQUIRE(int8 != nullptr);
  REQUIRE(fp16 != nullptr);
  REQUIRE(int8->max_n == kInt8MaxN);

  const std::string err = mixed_precision::n_limit_error(kInt8MaxN + 1, {fp16, int8});
  CHECK(err.find("2147483648") != std::string::npos);
  CHECK(err.find("at most 2147483647") != std::string::npos);
  CHECK(err.find("int8_dp4a") != std::string::npos);
  CHECK(mixed_precision::n_limit_error(kInt8MaxN, {fp16, int8}).empty());
  CHECK(mixed_precision::n_limit_error(std::uint64_t{1} << 40, {fp16}).empty());
}
