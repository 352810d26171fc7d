// The error bound every dot-product result is checked against.
//
// Model (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., sections
// 3.1 and 4.2). Each product p_i = x_i y_i enters the sum exactly (inside a fused
// multiply-add, or because it is exact in the accumulator's type) and every
// addition rounds once, with unit roundoff u of the accumulator. If no p_i passes
// through more than d roundings on its way to the result, then
//     |computed - sum p_i| <= gamma(d) sum |p_i|,   gamma(d) = d u / (1 - d u),
// as long as nothing overflows. A rounding whose result falls below the smallest
// normal number (a half sum that cancels below 2^-14) can err by up to half the
// subnormal spacing, eta, whatever its size; there are fewer than 2n roundings whose
// operands are both non-zero (n products folded in, fewer than n additions of two
// non-zero values; adding an exact zero rounds nothing), and later roundings scale
// such an error by at most 1 + gamma(d), so the tolerance adds 2 n eta (1 + gamma(d)).
// For the accumulators here:
//     float (variants 01, 03, 04):  u = 2^-24, eta = 2^-150
//     half  (variant 02):           u = 2^-11, eta = 2^-25; the bound is void once
//                                   d u >= 1, i.e. when an accumulator takes 2048
//                                   additions
//     int32 (variant 05):           exact, compared for equality
// The double reference of the same rounded inputs adds at most
// gamma_double(n) sum |p_i|, which the tolerance includes.
//
// A bound is only a check when it is smaller than |sum p_i|: a tolerance of
// |sum p_i| or more would accept 0, or any result of the right sign and half the
// size. Relative to the result the bound is gamma(d) times the condition number
// sum |p_i| / |sum p_i| (dot_inputs.hpp chooses inputs that keep it near 4). A row
// whose relative bound reaches 1, or whose gamma(d) is infinite, is reported as
// unbounded: timed and shown, not verified and not failed, as the float sums'
// "no-bound" rows are (common/verify.hpp).
//
// The depth d of the kernel's order (dot_kernel.cuh) for n elements and a grid of
// `grid` blocks, with c = n / per_chunk whole chunks:
//     rounds = ceil(c / (grid kBlock kUnroll))  chunks folded into one accumulator
//     d = rounds (per_chunk / lanes)   additions into one lane of one accumulator
//       + 1                            the tail element a thread may add
//       + 2                            four accumulators combined pairwise
//       + log2(lanes)                  the lanes combined
//       + log2(kBlock)                 the block's shuffle tree
//       + ceil(grid / kBlock)          partials each thread of the last block adds
//       + log2(kBlock)                 the last block's tree
#pragma once

#include <cstddef>
#include <cstdint>

#include "dot_inputs.hpp"
#include "variant.hpp"
#include "verify.hpp"

namespace mixed_precision {

// Most roundings any product passes through (above).
std::size_t dot_depth(std::size_t n, unsigned grid, const DotShape& shape);

// 2^-24 (float), 2^-11 (half), 0 (int32: exact).
double unit_roundoff(Accumulator a);
// d u / (1 - d u); +infinity when d u >= 1 (no bound).
double gamma_for(Accumulator a, std::size_t depth);
// Half the spacing of the accumulator's subnormal numbers: 2^-150 (float), 2^-25
// (half), 0 (int32).
double underflow_unit(Accumulator a);

// Checks a float or half-accumulated result (the half result widened to float).
// A poisoned, non-finite or out-of-bound result fails; a result within a bound that
// is infinite or at least |reference| is unbounded (acceptable, not ok).
common::Check check_float_dot(float result, const DotReference& ref, Accumulator a, std::size_t depth, std::size_t n);

// Checks an int32 result against the exact int64 reference: equal or it fails.
common::Check check_int_dot(std::int32_t result, const DotReference& ref);

// Written into the INT8 output before every checked run. No INT8 result of an
// accepted n can equal it: |sum| <= n m^2 <= 2^31 - 1 < 2^31.
constexpr std::int32_t kInt32Poison = INT32_MIN;

}  // namespace mixed_precision
