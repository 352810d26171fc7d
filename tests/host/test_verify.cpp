// The tolerance model and the checker.
#include <cmath>
#include <limits>
#include <vector>

#include "catch.hpp"
#include "inputs.hpp"
#include "verify.hpp"

TEST_CASE("depths of the summation orders", "[verify]") {
  CHECK(common::tree_depth(1) == 0);
  CHECK(common::tree_depth(2) == 1);
  CHECK(common::tree_depth(3) == 2);
  CHECK(common::tree_depth(1024) == 10);
  CHECK(common::tree_depth(1025) == 11);
  CHECK(common::blocked_depth(1000, 10) == 100 + 4);
  CHECK(common::blocked_depth(5, 1000) == 1 + 3);  // more threads than elements
  CHECK(common::sequential_depth(77) == 77);
}

TEST_CASE("gamma follows d u / (1 - d u)", "[verify]") {
  const double u = std::ldexp(1.0, -24);
  CHECK(common::gamma_float(1) == Approx(u / (1 - u)));
  CHECK(common::gamma_float(24) == Approx(24 * u / (1 - 24 * u)));
  CHECK(std::isinf(common::gamma_float(std::size_t{1} << 25)));
}

TEST_CASE("reference_sum is the double sum and the sum of magnitudes", "[verify]") {
  const std::vector<float> x = {1.5f, -2.0f, 0.25f};
  const auto r = common::reference_sum(x);
  CHECK(r.sum == -0.25);
  CHECK(r.sum_abs == 3.75);
  // Large enough to use several chunks and threads; the result must not depend on them.
  const auto big = common::make_input(common::Pattern::ones, 1, (std::size_t{1} << 22) + 3);
  CHECK(common::reference_sum(big).sum == static_cast<double>(big.size()));
}

TEST_CASE("reference_sum is compensated: exact where a plain double sum is not", "[verify]") {
  // 2^60 + 1 + ... + 1 - 2^60 in double loses every 1 (they are far below half an ulp
  // of 2^60); the compensated reference keeps them.
  std::vector<float> x(1000, 1.0f);
  x.front() = std::ldexp(1.0f, 60);
  x.back() = -std::ldexp(1.0f, 60);
  CHECK(common::reference_sum(x).sum == 998.0);
}

TEST_CASE("the compensated bound catches a sum that lost its compensation", "[verify]") {
  // Ones, with 2^30 and -2^30 in between: float spacing at 2^30 is 128, so a plain
  // float sum that meets a 1 while holding 2^30 drops it. The exact sum is 1022.
  std::vector<float> x(1024, 1.0f);
  x[1] = std::ldexp(1.0f, 30);
  x[512] = -std::ldexp(1.0f, 30);
  const auto ref = common::reference_sum(x);
  REQUIRE(ref.sum == 1022.0);
  float plain = 0.0f;  // one running float sum: what a compensated kernel without its c computes
  for (float v : x) plain += v;
  REQUIRE(plain != 1022.0f);
  const auto bound = common::compensated_bound(1024.0);
  CHECK(bound.sum_units >= 1.0);
  CHECK(bound.abs_units < 0.2);
  CHECK(common::check_sum(1022.0f, ref, bound, x.size()).ok);
  const auto lost = common::check_sum(plain, ref, bound, x.size());
  CHECK_FALSE(lost.ok);
  CHECK(lost.detail.find("compensated bound") != std::string::npos);
  // The depth model of the same order (1024 additions in a row) cannot tell: it accepts both.
  CHECK(common::check_sum(plain, ref, 1024, x.size()).ok);
}

TEST_CASE("check_sum accepts errors within the bound and rejects larger ones", "[verify]") {
  common::Reference ref{1000.0, 1000.0};
  // The bound, plus the compensated double reference's own: 2 u_d |sum| + 4 (m u_d)^2 sum|x|
  // with m = 100 + 2 (one chunk, two terms per chunk in the final pass).
  const double ud = std::ldexp(1.0, -53);
  const double tol = common::gamma_float(10) * 1000.0 + 2 * ud * 1000.0 + 4 * (102 * ud) * (102 * ud) * 1000.0;
  const float inside = static_cast<float>(1000.0 + tol * 0.5);
  const float outside = std::nextafter(static_cast<float>(1000.0 + tol), 2000.0f);
  CHECK(common::check_sum(inside, ref, 10, 100).ok);
  const auto bad = common::check_sum(outside, ref, 10, 100);
  CHECK_FALSE(bad.ok);
  CHECK(bad.detail.find("tolerance") != std::string::npos);
  CHECK(common::check_sum(1000.0f, ref, 10, 100).rel_error == 0.0);
}

TEST_CASE("check_sum: a poisoned output never passes, even if it were within tolerance", "[verify]") {
  const float p = common::poison_value();
  CHECK(common::is_poison(p));
  common::Reference ref{static_cast<double>(p), std::fabs(static_cast<double>(p))};
  const auto c = common::check_sum(p, ref, 1, 1);
  CHECK_FALSE(c.ok);
  CHECK(c.detail.find("poison") != std::string::npos);
}

TEST_CASE("check_sum: NaN and Inf follow IEEE addition", "[verify]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  common::Reference ref_nan{std::nan(""), 1.0};
  common::Reference ref_inf{static_cast<double>(inf), static_cast<double>(inf)};
  CHECK(common::check_sum(nan, ref_nan, 5, 5).ok);
  CHECK_FALSE(common::check_sum(1.0f, ref_nan, 5, 5).ok);
  CHECK(common::check_sum(inf, ref_inf, 5, 5).ok);
  CHECK_FALSE(common::check_sum(-inf, ref_inf, 5, 5).ok);
  CHECK_FALSE(common::check_sum(nan, ref_inf, 5, 5).ok);
  common::Reference finite{3.0, 3.0};
  CHECK_FALSE(common::check_sum(nan, finite, 5, 5).ok);
  CHECK_FALSE(common::check_sum(inf, finite, 5, 5).ok);
}

TEST_CASE("check_sum fails when the depth leaves no finite bound", "[verify]") {
  common::Reference ref{1000.0, 1000.0};
  const auto c = common::check_sum(1000.0f, ref, std::size_t{1} << 25, std::size_t{1} << 25);
  CHECK_FALSE(c.ok);
  CHECK(c.unbounded);
  CHECK(c.detail.find("no error bound") != std::string::npos);
  CHECK_FALSE(common::check_sum(1000.0f, ref, 10, 10).unbounded);
}
