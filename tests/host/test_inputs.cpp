// Seeded input patterns.
#include <cmath>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "inputs.hpp"
#include "verify.hpp"

TEST_CASE("patterns are repeatable and depend on the seed", "[inputs]") {
  const auto a = common::make_input(common::Pattern::uniform, 7, 1000);
  const auto b = common::make_input(common::Pattern::uniform, 7, 1000);
  const auto c = common::make_input(common::Pattern::uniform, 8, 1000);
  CHECK(a == b);
  CHECK(a != c);
  // Parallel generation gives the same values as element-by-element generation.
  const std::size_t n = (std::size_t{1} << 20) + 5;
  const auto big = common::make_input(common::Pattern::mixed_signs, 3, n);
  for (std::size_t i : {std::size_t{0}, std::size_t{12345}, n - 1})
    CHECK(big[i] == common::pattern_value(common::Pattern::mixed_signs, 3, i, n));
}

TEST_CASE("uniform is in [0,1), never all zeros, and roughly uniform", "[inputs]") {
  const auto x = common::make_input(common::Pattern::uniform, 1, 100000);
  double sum = 0;
  int zeros = 0;
  for (float v : x) {
    REQUIRE(v >= 0.0f);
    REQUIRE(v < 1.0f);
    sum += v;
    zeros += v == 0.0f;
  }
  CHECK(sum / static_cast<double>(x.size()) == Approx(0.5).margin(0.01));
  CHECK(zeros < 5);
}

TEST_CASE("mixed_signs cancels: the sum is small next to the sum of magnitudes", "[inputs]") {
  const auto x = common::make_input(common::Pattern::mixed_signs, 1, 1 << 20);
  const auto r = common::reference_sum(x);
  CHECK(std::fabs(r.sum) < 0.01 * r.sum_abs);
  CHECK(r.sum_abs > 0.4 * static_cast<double>(x.size()));
}

TEST_CASE("large values are finite, large and their sum fits a float", "[inputs]") {
  const auto x = common::make_input(common::Pattern::large, 1, 4096);
  for (float v : x) {
    REQUIRE(std::isfinite(v));
    REQUIRE(v >= std::ldexp(1.0f, 40));
  }
  CHECK(common::reference_sum(x).sum < 3e38);
}

TEST_CASE("special patterns hold exactly their special values", "[inputs]") {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{4097}}) {
    const auto nan = common::make_input(common::Pattern::with_nan, 5, n);
    const auto inf = common::make_input(common::Pattern::with_inf, 5, n);
    const auto both = common::make_input(common::Pattern::inf_minus_inf, 5, n);
    int nans = 0, infs = 0, pos = 0, neg = 0;
    for (std::size_t i = 0; i < n; ++i) {
      nans += std::isnan(nan[i]);
      infs += std::isinf(inf[i]);
      pos += both[i] == INFINITY;
      neg += both[i] == -INFINITY;
    }
    CHECK(nans == 1);
    CHECK(infs == 1);
    CHECK(pos == 1);
    CHECK(neg == (n > 1 ? 1 : 0));
    CHECK(std::isnan(common::reference_sum(nan).sum));
    CHECK(common::reference_sum(inf).sum == INFINITY);
    if (n > 1) CHECK(std::isnan(common::reference_sum(both).sum));
  }
}

TEST_CASE("pattern names round-trip and unknown names are refused", "[inputs]") {
  for (auto p : common::all_patterns()) CHECK(common::parse_pattern(common::pattern_name(p)) == p);
  std::string message;
  try {
    common::parse_pattern("zeros");
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("unknown input pattern 'zeros'") != std::string::npos);
}
