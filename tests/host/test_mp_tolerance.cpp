// The error bounds of the dot-product variants and the checks that use them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "dot_inputs.hpp"
#include "dot_runner.hpp"
#include "tolerance.hpp"
#include "variants.hpp"
#include "verify.hpp"

using mixed_precision::Accumulator;
using mixed_precision::DotReference;
using mixed_precision::DotShape;

TEST_CASE("unit roundoffs and gamma per accumulator", "[mp][tolerance]") {
  using mixed_precision::gamma_for;
  CHECK(mixed_precision::unit_roundoff(Accumulator::f32) == std::ldexp(1.0, -24));
  CHECK(mixed_precision::unit_roundoff(Accumulator::f16) == std::ldexp(1.0, -11));
  CHECK(mixed_precision::unit_roundoff(Accumulator::i32) == 0.0);
  CHECK(gamma_for(Accumulator::f16, 10) == Approx(10.0 / 2048 / (1.0 - 10.0 / 2048)));
  CHECK(gamma_for(Accumulator::f32, 10) == Approx(10.0 / 16777216 / (1.0 - 10.0 / 16777216)));
  // Past 2048 additions a half accumulator has no bound at all.
  CHECK(std::isfinite(gamma_for(Accumulator::f16, 2047)));
  CHECK(std::isinf(gamma_for(Accumulator::f16, 2048)));
  CHECK(gamma_for(Accumulator::i32, 1000000) == 0.0);
}

TEST_CASE("depth of the kernel's summation order", "[mp][tolerance]") {
  using mixed_precision::dot_depth;
  const DotShape fp32{4, 1};
  const DotShape fp16{8, 2};
  // n = 2^20 floats, one block: 2^18 chunks over 256 threads x 4 accumulators is
  // 256 chunks per accumulator, 4 additions each; then 2 (accumulators) + 8 (block
  // tree) + 1 (one partial per thread of the last block) + 8 (its tree).
  CHECK(dot_depth(std::size_t{1} << 20, 1, fp32) == 1024 + 2 + 8 + 1 + 8);
  CHECK(dot_depth((std::size_t{1} << 20) + 3, 1, fp32) == 1024 + 1 + 2 + 8 + 1 + 8);  // + the tail element
  // Half2: 8 elements a chunk, 2 lanes, 4 additions per lane per chunk, 1 level to join lanes.
  CHECK(dot_depth(std::size_t{1} << 23, 1, fp16) == 4096 + 2 + 1 + 8 + 1 + 8);
  // A grid of 1000 blocks: 2^22 chunks over 1024000 accumulators is 5 rounds of 4
  // additions; the last block's threads add up to 4 partials each.
  CHECK(dot_depth(std::size_t{1} << 24, 1000, fp32) == 5 * 4 + 2 + 8 + 4 + 8);
  // n below one chunk: only the tail.
  CHECK(dot_depth(3, 1, fp32) == 1 + 2 + 8 + 1 + 8);
}

namespace {

// The most additions any one lane of any accumulator receives, found by walking
// the kernel's index arithmetic (dot_kernel.cuh) for every thread of the grid.
std::size_t busiest_lane(std::size_t n, unsigned grid, const DotShape& shape) {
  const std::size_t per_chunk = static_cast<std::size_t>(shape.per_chunk);
  const std::size_t chunks = n / per_chunk;
  const std::size_t tail = n - chunks * per_chunk;
  const std::size_t stride = std::size_t{grid} * mixed_precision::kBlock;
  const std::size_t unroll = mixed_precision::kUnroll;
  std::size_t most = 0;
  for (std::size_t t = 0; t < stride; ++t) {
    std::vector<std::size_t> slot(unroll, 0);
    std::size_t c = t;
    for (; c + (unroll - 1) * stride < chunks; c += unroll * stride)
      for (std::size_t k = 0; k < unroll; ++k) ++slot[k];
    for (std::size_t k = 0; k + 1 < unroll; ++k)
      if (c + k * stride < chunks) ++slot[k];
    for (std::size_t k = 0; k < unroll; ++k) {
      const std::size_t lane0 = slot[k] * (per_chunk / static_cast<std::size_t>(shape.lanes)) + (k == 0 && t < tail);
      most = std::max(most, lane0);
    }
  }
  return most;
}

}  // namespace

TEST_CASE("depth bound matches the kernel's busiest accumulator lane", "[mp][tolerance]") {
  for (const DotShape shape : {DotShape{4, 1}, DotShape{8, 2}, DotShape{16, 1}}) {
    for (unsigned grid : {1u, 2u, 3u, 5u, 300u}) {
      for (std::size_t n :
           {std::size_t{1}, std::size_t{5}, std::size_t{17}, std::size_t{1023}, std::size_t{1025}, std::size_t{4096},
            std::size_t{65537}, (std::size_t{1} << 20) + 3, (std::size_t{3} << 20) + 11}) {
        const std::size_t fixed = 2 + (shape.lanes == 2 ? 1 : 0) + 8 + (grid + 255) / 256 + 8;
        INFO("per_chunk " << shape.per_chunk << ", grid " << grid << ", n " << n);
        // The bound's first term is exactly the busiest lane (thread 0's first
        // accumulator, which also takes the first tail element).
        CHECK(mixed_precision::dot_depth(n, grid, shape) - fixed == busiest_lane(n, grid, shape));
      }
    }
  }
}

TEST_CASE("float-accumulate check: inside the bound passes, outside fails", "[mp][tolerance]") {
  using mixed_precision::check_float_dot;
  DotReference ref;
  ref.dot = 100.0;
  ref.sum_abs = 1000.0;
  const std::size_t depth = 50;
  const std::size_t n = 1000;
  const double tol = mixed_precision::gamma_for(Accumulator::f32, depth) * 1000.0 + common::gamma_double(n) * 1000.0;

  const auto exact = check_float_dot(100.0f, ref, Accumulator::f32, depth, n);
  CHECK(exact.ok);
  CHECK(exact.tolerance == Approx(tol));
  CHECK(exact.rel_error == 0.0);

  const float inside = static_cast<float>(100.0 + 0.9 * tol);
  const float outside = static_cast<float>(100.0 + 4.0 * tol);
  CHECK(check_float_dot(inside, ref, Accumulator::f32, depth, n).ok);
  const auto bad = check_float_dot(outside, ref, Accumulator::f32, depth, n);
  CHECK_FALSE(bad.ok);
  CHECK(bad.detail.find("tolerance") != std::string::npos);

  // The same error is fine for a half accumulator, whose bound is 2^13 times wider.
  CHECK(check_float_dot(outside, ref, Accumulator::f16, depth, n).ok);
}

TEST_CASE("float-accumulate check: poison, overflow and a void bound fail", "[mp][tolerance]") {
  using mixed_precision::check_float_dot;
  DotReference ref;
  ref.dot = 131072.0;
  ref.sum_abs = 131072.0;
  const auto poisoned = check_float_dot(common::poison_value(), ref, Accumulator::f32, 20, 131072);
  CHECK_FALSE(poisoned.ok);
  CHECK(poisoned.detail.find("poison") != std::string::npos);

  const auto inf = check_float_dot(std::numeric_limits<float>::infinity(), ref, Accumulator::f16, 20, 131072);
  CHECK_FALSE(inf.ok);
  CHECK(inf.detail.find("overflowed") != std::string::npos);

  // A correct-looking number cannot pass when the bound says nothing.
  const auto vacuous = check_float_dot(131072.0f, ref, Accumulator::f16, 4096, 131072);
  CHECK_FALSE(vacuous.ok);
  CHECK(vacuous.detail.find("no error bound") != std::string::npos);
}

TEST_CASE("int8 check is exact", "[mp][tolerance]") {
  using mixed_precision::check_int_dot;
  DotReference ref;
  ref.integer = true;
  ref.exact = 2030043136;
  CHECK(check_int_dot(2030043136, ref).ok);
  CHECK_FALSE(check_int_dot(2030043135, ref).ok);
  CHECK_FALSE(check_int_dot(2030043137, ref).ok);
  const auto poisoned = check_int_dot(mixed_precision::kInt32Poison, ref);
  CHECK_FALSE(poisoned.ok);
  CHECK(poisoned.detail.find("poison") != std::string::npos);
  ref.exact = -5;
  CHECK(check_int_dot(-5, ref).ok);
  CHECK_FALSE(check_int_dot(5, ref).ok);
}

TEST_CASE("a bound of |reference| or more is no bound: unbounded, acceptable, not ok", "[mp][tolerance]") {
  using mixed_precision::check_float_dot;
  DotReference ref;
  ref.dot = 1.0;
  ref.sum_abs = 1.0e6;  // condition number 10^6: the products cancel almost completely
  const std::size_t n = 1 << 20;
  // Float: gamma(40) x 10^6 is about 2.4 x |reference|.
  const auto zero = check_float_dot(0.0f, ref, Accumulator::f32, 40, n);
  CHECK(zero.tolerance >= 1.0);
  CHECK_FALSE(zero.ok);
  CHECK(zero.unbounded);
  CHECK(zero.acceptable());
  CHECK(std::string(zero.verdict()) == "no-bound");
  CHECK(zero.detail.find("even 0 would pass") != std::string::npos);
  // A result outside even that bound is still a failure.
  const auto far = check_float_dot(-100.0f, ref, Accumulator::f32, 40, n);
  CHECK_FALSE(far.acceptable());
  // The same cancellation with a short enough order is checked for real.
  ref.sum_abs = 100.0;
  const auto checked = check_float_dot(0.0f, ref, Accumulator::f32, 40, n);
  CHECK(checked.tolerance < 1.0);
  CHECK_FALSE(checked.acceptable());
  CHECK(check_float_dot(1.0f, ref, Accumulator::f32, 40, n).ok);
}

TEST_CASE("the tolerance covers a half sum that cancels into the subnormals", "[mp][tolerance]") {
  using mixed_precision::underflow_unit;
  CHECK(underflow_unit(Accumulator::f16) == std::ldexp(1.0, -25));  // half the spacing 2^-24
  CHECK(underflow_unit(Accumulator::f32) == std::ldexp(1.0, -150));
  CHECK(underflow_unit(Accumulator::i32) == 0.0);
  DotReference ref;
  ref.dot = 0.5;
  ref.sum_abs = 0.5;
  const std::size_t n = 1000;
  const std::size_t depth = 20;
  const double g = mixed_precision::gamma_for(Accumulator::f16, depth);
  const auto c = mixed_precision::check_float_dot(0.5f, ref, Accumulator::f16, depth, n);
  CHECK(c.tolerance == Approx(g * 0.5 + common::gamma_double(n) * 0.5 + 2.0 * n * std::ldexp(1.0, -25) * (1.0 + g)));
}

namespace {

// The committed tables run every float variant at these grids (the H200's plans: 132
// SMs x 5 or 6 resident blocks, capped for small n as plan_grid caps them).
std::vector<unsigned> h200_grids(std::size_t n, const mixed_precision::Variant& v) {
  const std::size_t chunks = n / static_cast<std::size_t>(v.shape.per_chunk);
  const std::size_t wanted = (chunks + mixed_precision::kBlock * mixed_precision::kUnroll - 1) /
                             (mixed_precision::kBlock * mixed_precision::kUnroll);
  std::vector<unsigned> grids;
  for (std::size_t resident : {660u, 792u})
    grids.push_back(static_cast<unsigned>(std::max<std::size_t>(1, std::min(resident, wanted))));
  return grids;
}

}  // namespace

TEST_CASE("on the standard inputs a result of 0 fails and the exact result passes", "[mp][tolerance]") {
  // A kernel that writes 0.0f must not pass: the bound has to be smaller than the
  // result. That holds because the inputs keep the condition number near 4
  // (dot_inputs.hpp); the GPU tests run the same case through the real launcher.
  for (const auto& v : mixed_precision::registry()) {
    if (v.accumulator == Accumulator::i32) continue;
    for (std::size_t n : {std::size_t{1000}, (std::size_t{1} << 20) + 3, std::size_t{1} << 24}) {
      const auto ref = mixed_precision::reference_dot(mixed_precision::make_inputs(v.element, 1, n, 0));
      for (unsigned grid : h200_grids(n, v)) {
        const std::size_t depth = mixed_precision::dot_depth(n, grid, v.shape);
        const auto zero = mixed_precision::check_float_dot(0.0f, ref, v.accumulator, depth, n);
        const auto exact = mixed_precision::check_float_dot(static_cast<float>(ref.dot), ref, v.accumulator, depth, n);
        INFO(v.id << " n = " << n << " grid " << grid << ": condition number " << ref.condition_number()
                  << ", relative bound " << zero.tolerance / std::fabs(ref.dot));
        CHECK_FALSE(zero.acceptable());
        CHECK(exact.ok);
      }
    }
  }
}

TEST_CASE("at 2^28 every relative bound stays below 1; the half accumulator's reaches it by 2^30", "[mp][tolerance]") {
  // Generating 2^28 pairs on the host is too slow for a unit test, so the condition
  // number comes from 2^24 pairs (it settles near 4: the sum grows like n, its
  // fluctuation like sqrt(n)), with a margin.
  for (const auto& v : mixed_precision::registry()) {
    if (v.accumulator == Accumulator::i32) continue;
    const auto ref =
        mixed_precision::reference_dot(mixed_precision::make_inputs(v.element, 1, std::size_t{1} << 24, 0));
    const double cond = 1.05 * ref.condition_number();
    for (int log_n : {28, 30}) {
      const std::size_t n = std::size_t{1} << log_n;
      for (unsigned grid : h200_grids(n, v)) {
        const double rel =
            mixed_precision::gamma_for(v.accumulator, mixed_precision::dot_depth(n, grid, v.shape)) * cond;
        INFO(v.id << " n = 2^" << log_n << " grid " << grid << ": relative bound about " << rel);
        if (v.accumulator == Accumulator::f16 && log_n == 30)
          CHECK(rel >= 1.0);  // no-bound there: the chapter's exercise
        else
          CHECK(rel < (v.accumulator == Accumulator::f16 ? 0.75 : 1e-3));
      }
    }
  }
}

TEST_CASE("the table never shows a non-zero relative error or bound as zero", "[mp][tolerance]") {
  using mixed_precision::condition_text;
  using mixed_precision::relative_text;
  // The values that a one-decimal column used to print as 0.0.
  CHECK(relative_text(0.0014) == "1.4e-03");
  CHECK(relative_text(0.030) == "3.0e-02");
  CHECK(relative_text(1.7e-7) == "1.7e-07");
  CHECK(relative_text(1.1) == "1.1e+00");
  CHECK(relative_text(0.0) == "0");
  CHECK(relative_text(std::nan("")) == "-");
  for (double v = 1e-12; v < 1e6; v *= 1.7) {
    const std::string s = relative_text(v);
    INFO(v << " shown as " << s);
    CHECK(std::stod(s) > 0.0);
    CHECK(std::fabs(std::stod(s) - v) <= 0.05 * v);
  }
  CHECK(condition_text(4.03) == "4.0");
  CHECK(condition_text(51234.0) == "5.1e+04");
  CHECK(condition_text(std::numeric_limits<double>::infinity()) == "inf");
}
