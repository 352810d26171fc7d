// The vectors every variant multiplies, and their exact references.
//
// Float variants (FP32, FP16, BF16): every element is a real value with a random
// sign and a magnitude uniform in [0.5, 1), exactly representable in a float; each
// variant rounds it to its own type (round to nearest even) on the host, and its
// reference is computed from those rounded values. In this range:
//   - no FP16 input or product underflows (the smallest product is 0.25, far above
//     FP16's smallest normal 6.1e-5), unlike the book's check (BOOK.md erratum 9);
//   - every partial sum of products is a multiple of 2^-22, so even a half sum
//     that cancels to below 6.1e-5 is exact: the rounding-error model of
//     tolerance.hpp holds without an underflow term;
//   - the products have random signs, as in a dot product of unrelated vectors: the
//     sum grows like sqrt(n) while the sum of |products| grows like n.
// INT8: every element is a non-zero whole number in [-m, m], m chosen from n by
// int8_magnitude_limit so no int32 partial sum can overflow; the reference is an
// exact int64 sum.
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

// Element i of the float inputs: +-[0.5, 1), exactly a float.
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
};

// In fixed chunks whose order does not depend on the number of host threads.
DotReference reference_dot(const HostVectors& v);

}  // namespace mixed_precision
