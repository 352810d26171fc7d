#include "gemm_check.hpp"

#include <cmath>
#include <mutex>
#include <sstream>

#include "inputs.hpp"
#include "verify.hpp"

namespace occupancy {

double gemm_tolerance(double scale, int k) {
  const auto depth = static_cast<std::size_t>(k);
  return (common::gamma_float(depth + 1) + common::gamma_double(depth)) * scale;
}

GemmCheck check_gemm(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int m,
                     int n, int k, const std::vector<std::size_t>& indices) {
  const std::size_t total = static_cast<std::size_t>(m) * n;
  const std::size_t count = indices.empty() ? total : indices.size();
  GemmCheck result;
  result.checked = count;
  std::mutex mutex;
  std::size_t first_bad = total;
  std::string first_detail;

  common::parallel_chunks(count, [&](std::size_t begin, std::size_t end) {
    GemmCheck local;
    std::size_t local_first = total;
    std::string local_detail;
    for (std::size_t t = begin; t < end; ++t) {
      const std::size_t pos = indices.empty() ? t : indices[t];
      const std::size_t row = pos / static_cast<std::size_t>(n);
      const std::size_t col = pos % static_cast<std::size_t>(n);
      double sum = 0.0;
      double scale = 0.0;
      for (std::size_t p = 0; p < static_cast<std::size_t>(k); ++p) {
        const double prod = static_cast<double>(a[row * k + p]) * static_cast<double>(b[p * n + col]);
        sum += prod;
        scale += std::fabs(prod);
      }
      const float got = c[pos];
      const double err = std::fabs(static_cast<double>(got) - sum);
      const double tol = gemm_tolerance(scale, k);
      const bool poisoned = common::is_poison(got);
      const bool bad = poisoned || !(err <= tol);
      if (poisoned) ++local.unwritten;
      if (bad) ++local.failures;
      if (!poisoned && std::isfinite(err)) {
        local.max_abs_error = std::fmax(local.max_abs_error, err);
        local.worst_ratio = std::fmax(local.worst_ratio, tol > 0.0 ? err / tol : (err > 0.0 ? INFINITY : 0.0));
      } else if (!poisoned) {
        local.worst_ratio = INFINITY;
      }
      if (bad && pos < local_first) {
        local_first = pos;
        std::ostringstream why;
        why.precision(9);
        why << "C[" << row << "][" << col << "] = " << got;
        if (poisoned)
          why << " still holds the poison value: it was never written";
        else
          why << ", expected " << sum << " (error " << err << " > tolerance " << tol << ")";
        local_detail = why.str();
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    result.failures += local.failures;
    result.unwritten += local.unwritten;
    result.max_abs_error = std::fmax(result.max_abs_error, local.max_abs_error);
    result.worst_ratio = std::fmax(result.worst_ratio, local.worst_ratio);
    if (local_first < first_bad) {
      first_bad = local_first;
      first_detail = local_detail;
    }
  });
  result.ok = result.failures == 0 && count > 0;
  if (!result.ok) {
    std::ostringstream why;
    why << result.failures << " of " << count << " checked elements wrong";
    if (result.unwritten > 0) why << " (" << result.unwritten << " never written)";
    if (!first_detail.empty()) why << "; first: " << first_detail;
    result.detail = why.str();
  }
  return result;
}

std::vector<std::size_t> sample_positions(std::size_t count, std::size_t total, std::uint64_t seed) {
  std::vector<std::size_t> out;
  if (total == 0) return out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(static_cast<std::size_t>(common::hash64(seed, i) % total));
  return out;
}

}  // namespace occupancy
