// The vectors every variant multiplies, and their exact references.
//
// Float variants (FP32, FP16, BF16): every element is a real value with a magnitude
// uniform in [2^-7, 2^-6) (that is, [0.5, 1) x kFloatInputScale) and a sign that is
// negative with probability 1/4, exactly representable in a float; each variant rounds
// it to its own type (round to nearest even) on the host, and its reference is
// computed from those rounded values. Why these:
//   - the products x_i y_i are negative with probability 3/8, so the dot product
//     cancels partly but grows like n / 4 of the mean |product|: its condition number,
//     sum |x_i y_i| / |sum x_i y_i|, stays near 4 at every large n. The relative error
//     bound is the condition number times gamma(d), so it stays well below 1 and a
//     wrong result, a zero included, cannot pass (random signs would give a condition
//     number growing like sqrt(n), and bounds above 1 at 2^28);
//   - the scale keeps the exact dot product of 2^30 pairs below 65504, the largest
//     half, so the half accumulator of variant 02 is checked rather than overflowed;
//   - no FP16 input or product underflows: the smallest product is 2^-14, FP16's
//     smallest normal, unlike the book's check (erratum 9 in
//     chapters/23_why_our_numbers_differ.md). A half sum that cancels below 2^-14 can
//     still round to a subnormal; tolerance.hpp adds that absolute error to the bound.
// INT8: every element is a non-zero whole number in [-m, m], m chosen from n by
// int8_magnitude_limit so no int32 partial sum can overflow; the reference is an
// exact int64 sum, compared for equality whatever the condition number.
// Element i of x (or y) depends only on (seed, i): common::hash64, so any run can
// be repeated and any element recomputed on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "variant.hpp"

namespace mixed_precision {

// Largest n the INT8 variant accepts: with m = 1, n products of +-1 stay within
// int32; past it no range of non-zero values is safe.
constexpr std::uint64_t kInt8MaxN = 2147483647;  // 2^31 - 1

// The largest m <= 127 with n * m^2 <= 2^31 - 1 (every partial sum of n products of
// values in [-m, m] then fits in an int32); 0 when n > kInt8MaxN (no m is safe).
int int8_magnitude_limit(std::uint64_t n);

// Which vector: x or y.
enum class Operand { x = 0, y = 1 };

// The float inputs' magnitudes are [0.5, 1) times this power of two (exact).
constexpr float kFloatInputScale = 0x1p-6f;
// One element in kNegativeOneIn is negative.
constexpr unsigned kNegativeOneIn = 4;

// Element i of the float inputs: +-[2^-7, 2^-6), exactly a float (above).
float float_input_value(std::uint64_t seed, Operand which, std::size_t i);
// Element i of the INT8 inputs: a non-zero whole number in [-magnitude, magnitude].
std::int8_t int8_input_value(std::uint64_t seed, Operand which, std::size_t i, int magnitude);

// Two vectors stored as their element type's bytes, ready to copy to the device.
struct HostVectors {
  ElementType type = ElementType::f32;
  std::size_t n = 0;
  std::vector<unsigned char> x;
  std::vector<unsigned char> y;
};

// Builds x and y with value(which, i) rounded to nearest (ties to even) in `type`.
// For INT8 every value must be a whole number in [-128, 127] (std::invalid_argument
// otherwise). Runs on all host threads.
HostVectors encode(ElementType type, std::size_t n, const std::function<double(Operand, std::size_t)>& value);

// The standard inputs for `type` (above); `int8_magnitude` is used for INT8 only.
HostVectors make_inputs(ElementType type, std::uint64_t seed, std::size_t n, int int8_magnitude);

// Element i of a vector as a double (exact for every element type).
double decode(const HostVectors& v, Operand which, std::size_t i);

// The dot product of the stored (already rounded) values.
struct DotReference {
  double dot = 0.0;        // in double; products of two floats are exact in double
  double sum_abs = 0.0;    // sum of |x_i y_i|, the scale of every error bound
  std::int64_t exact = 0;  // INT8 only: the exact sum
  bool integer = false;    // true for INT8

  // The value the result is compared with: dot, or exact for INT8.
  double value() const { return integer ? static_cast<double>(exact) : dot; }
  // sum |x_i y_i| / |sum x_i y_i|: how much the sum cancels. A relative error bound
  // is this times the bound on the sum of |products|. Infinite when the sum is 0.
  double condition_number() const;
};

// In fixed chunks whose order does not depend on the number of host threads.
DotReference reference_dot(const HostVectors& v);

}  // namespace mixed_precision
