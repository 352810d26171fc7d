#include "tolerance.hpp"

#include <cmath>
#include <sstream>

namespace mixed_precision {

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

}  // namespace

std::size_t dot_depth(std::size_t n, unsigned grid, const DotShape& shape) {
  const std::size_t per_chunk = static_cast<std::size_t>(shape.per_chunk);
  const std::size_t lanes = static_cast<std::size_t>(shape.lanes);
  const std::size_t threads = std::size_t{grid} * kBlock;
  const std::size_t rounds = ceil_div(n / per_chunk, threads * kUnroll);
  const std::size_t tail = n % per_chunk != 0 ? 1 : 0;
  return rounds * (per_chunk / lanes) + tail + common::tree_depth(kUnroll) + common::tree_depth(lanes) +
         common::tree_depth(kBlock) + ceil_div(grid, kBlock) + common::tree_depth(kBlock);
}

double unit_roundoff(Accumulator a) {
  switch (a) {
    case Accumulator::f32: return 0x1p-24;
    case Accumulator::f16: return 0x1p-11;
    case Accumulator::i32: return 0.0;
  }
  return NAN;
}

double gamma_for(Accumulator a, std::size_t depth) {
  const double du = static_cast<double>(depth) * unit_roundoff(a);
  return du >= 1.0 ? INFINITY : du / (1.0 - du);
}

double underflow_unit(Accumulator a) {
  switch (a) {
    case Accumulator::f32: return 0x1p-150;
    case Accumulator::f16: return 0x1p-25;
    case Accumulator::i32: return 0.0;
  }
  return NAN;
}

common::Check check_float_dot(float result, const DotReference& ref, Accumulator a, std::size_t depth, std::size_t n) {
  common::Check c;
  const double r = static_cast<double>(result);
  c.abs_error = std::fabs(r - ref.dot);
  c.rel_error = ref.dot != 0.0 ? c.abs_error / std::fabs(ref.dot) : NAN;
  const double g = gamma_for(a, depth);
  c.tolerance = g * ref.sum_abs + common::gamma_double(n) * ref.sum_abs +
                2.0 * static_cast<double>(n) * underflow_unit(a) * (1.0 + g);
  std::ostringstream why;
  why.precision(9);
  if (common::is_poison(result)) {
    why << "the output still holds the poison value: nothing was written";
  } else if (!std::isfinite(result)) {
    why << "got " << result << ", expected " << ref.dot << " (the " << accumulator_name(a)
        << " accumulator overflowed or produced NaN)";
  } else if (std::isinf(g)) {
    c.unbounded = true;
    why << "no error bound holds: a sum of depth " << depth << " in " << accumulator_name(a)
        << " exceeds 1 / u = " << 1.0 / unit_roundoff(a) << " additions, so the result cannot be verified";
  } else if (!(c.abs_error <= c.tolerance)) {
    why << "got " << result << ", expected " << ref.dot << " (error " << c.abs_error << " > tolerance " << c.tolerance
        << " for depth " << depth << " in " << accumulator_name(a) << ")";
  } else if (!(c.tolerance < std::fabs(ref.dot))) {
    c.unbounded = true;
    why << "no error bound is smaller than the result: the tolerance " << c.tolerance << " is at least |reference| "
        << std::fabs(ref.dot) << " (condition number " << ref.condition_number()
        << "), so even 0 would pass and the result cannot be verified";
  }
  c.detail = why.str();
  c.ok = c.detail.empty();
  return c;
}

common::Check check_int_dot(std::int32_t result, const DotReference& ref) {
  common::Check c;
  const std::int64_t diff = static_cast<std::int64_t>(result) - ref.exact;
  c.abs_error = std::fabs(static_cast<double>(diff));
  c.rel_error = ref.exact != 0 ? c.abs_error / std::fabs(static_cast<double>(ref.exact)) : NAN;
  c.tolerance = 0.0;
  std::ostringstream why;
  if (result == kInt32Poison) {
    why << "the output still holds the poison value: nothing was written";
  } else if (diff != 0) {
    why << "got " << result << ", expected exactly " << ref.exact;
  }
  c.detail = why.str();
  c.ok = c.detail.empty();
  return c;
}

}  // namespace mixed_precision
