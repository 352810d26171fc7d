// Host reference and tolerance for the SGEMM results of 02_resource_usage.
//
// Each C element is a dot product of length k. Accumulated in float with one rounding
// per step (an FMA chain, or a multiply and an add: at most k + 1 roundings on any
// term), its error is bounded by gamma_float(k + 1) x sum_p |a_ip b_pj| (Higham, section
// 3.1); the double-precision reference of the same float inputs adds at most
// gamma_double(k) x the same sum. The tolerance is the sum of the two, per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace occupancy {

struct GemmCheck {
  bool ok = false;
  std::size_t checked = 0;
  std::size_t failures = 0;   // elements outside their tolerance
  std::size_t unwritten = 0;  // elements still holding the poison value
  double max_abs_error = 0.0;
  double worst_ratio = 0.0;  // max over elements of |error| / tolerance (<= 1 passes)
  std::string detail;        // the first failure, empty when ok
};

// The tolerance of one element whose products have magnitude sum `scale`.
double gemm_tolerance(double scale, int k);

// Checks the elements `indices` (row-major positions in C) of C = A x B, or every
// element when `indices` is empty. A is m x k, B is k x n, C is m x n, all row-major.
GemmCheck check_gemm(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int m,
                     int n, int k, const std::vector<std::size_t>& indices = {});

// `count` positions in [0, total), drawn from `seed` (repeatable).
std::vector<std::size_t> sample_positions(std::size_t count, std::size_t total, std::uint64_t seed);

}  // namespace occupancy
