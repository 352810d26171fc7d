// The host's reference for a scan, and how a result is judged against it.
//
// int32: exact. The reference is the running sum in unsigned (32-bit, wrapping)
// arithmetic, the two's-complement sum of the int32 values; every output must match it
// bit for bit.
//
// float: within the error bound of the stage's summation order. Output i of a scan is a
// sum of the values x_0 .. x_i (x_0 .. x_{i-1} for an exclusive scan), formed by some
// order of float additions in which no value passes through more than d_i of them
// (the stage's DepthModel). Then, as for one sum (common/verify.hpp; Higham, "Accuracy
// and Stability of Numerical Algorithms", 2nd ed., section 4.2),
//     |y_i - s_i| <= gamma(d_i) * A_i,   gamma(d) = d u / (1 - d u),   u = 2^-24,
// with s_i the exact sum and A_i = |x_0| + ... + |x_i|. The reference is a double
// running sum, computed in chunks (a chunk's total, then each chunk from the totals
// before it), so no value passes through more than n double additions and its own
// error is at most gamma_double(n) A_i. Output i therefore passes when
//     |y_i - r_i| <= (gamma(d_i) + gamma_double(n)) * A_i.
// A NaN output, or the poison the runner writes first, fails; where d_i u >= 1 the
// bound says nothing and the output is only required to be finite.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "scan.hpp"

namespace scan {

struct ScanVerdict {
  bool ok = false;
  std::string detail;            // the first wrong output, or what was compared
  double max_error_ratio = NAN;  // float: the largest |y_i - r_i| / bound_i; NaN for int
  std::size_t unbounded = 0;     // float outputs past the bound's reach (d_i u >= 1)
};

// The allowed |y_i - r_i| for depth d_i, A_i and n (above); infinity when d_i u >= 1.
double float_bound(std::size_t depth, double abs_prefix, std::size_t n);

// The n outputs `out` of a scan of the n values `in` (host memory).
ScanVerdict check_int_scan(const unsigned* in, const unsigned* out, std::size_t n, ScanKind kind);
ScanVerdict check_float_scan(const float* in, const float* out, std::size_t n, ScanKind kind, const DepthModel& depth);
// The copy row: out is in, bit for bit.
ScanVerdict check_copy(const unsigned* in, const unsigned* out, std::size_t n);

// The runner's inputs. int: whole 32-bit words from the seed (their sums wrap many
// times); float: common/inputs.hpp's uniform pattern in [0, 1).
std::vector<unsigned> make_int_input(std::size_t n, std::uint64_t seed);
std::vector<float> make_float_input(std::size_t n, std::uint64_t seed);

// The word written into every output before a checked run (0xCAFEBABE, the project's poison).
constexpr unsigned kPoisonBits = 0xCAFEBABEu;

}  // namespace scan
