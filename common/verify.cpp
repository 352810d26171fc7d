#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "inputs.hpp"

namespace common {

Reference reference_sum(const std::vector<float>& x) {
  const std::size_t chunk = std::size_t{1} << 20;
  const std::size_t chunks = (x.size() + chunk - 1) / chunk;
  std::vector<double> sums(chunks, 0.0);
  std::vector<double> abs_sums(chunks, 0.0);
  parallel_chunks(chunks, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      double s = 0.0;
      double a = 0.0;
      const std::size_t last = std::min(x.size(), (c + 1) * chunk);
      for (std::size_t i = c * chunk; i < last; ++i) {
        s += static_cast<double>(x[i]);
        a += std::fabs(static_cast<double>(x[i]));
      }
      sums[c] = s;
      abs_sums[c] = a;
    }
  });
  Reference r;
  for (std::size_t c = 0; c < chunks; ++c) {
    r.sum += sums[c];
    r.sum_abs += abs_sums[c];
  }
  return r;
}

std::size_t tree_depth(std::size_t n) {
  std::size_t d = 0;
  while ((std::size_t{1} << d) < n) ++d;
  return d;
}

std::size_t blocked_depth(std::size_t n, std::size_t threads) {
  threads = std::max<std::size_t>(1, threads);
  return (n + threads - 1) / threads + tree_depth(std::min(n, threads));
}

std::size_t sequential_depth(std::size_t n) { return n; }

namespace {
double gamma(std::size_t depth, double u) {
  const double du = static_cast<double>(depth) * u;
  return du >= 1.0 ? INFINITY : du / (1.0 - du);
}
}  // namespace

double gamma_float(std::size_t depth) { return gamma(depth, 0x1p-24); }
double gamma_double(std::size_t depth) { return gamma(depth, 0x1p-53); }

Check check_sum(float result, const Reference& ref, std::size_t depth, std::size_t n) {
  Check c;
  const double r = static_cast<double>(result);
  c.abs_error = std::fabs(r - ref.sum);
  c.rel_error = (ref.sum != 0.0 && std::isfinite(ref.sum)) ? c.abs_error / std::fabs(ref.sum) : NAN;
  std::ostringstream why;
  if (is_poison(result)) {
    why << "the output still holds the poison value: nothing was written";
  } else if (std::isnan(ref.sum)) {
    if (!std::isnan(result)) why << "expected NaN, got " << result;
  } else if (std::isinf(ref.sum)) {
    if (r != ref.sum) why << "expected " << ref.sum << ", got " << result;
  } else {
    c.tolerance = gamma_float(depth) * ref.sum_abs + gamma_double(n) * ref.sum_abs;
    if (!std::isfinite(c.tolerance)) {
      c.unbounded = true;
      // depth x u >= 1: the bound says nothing, so the result cannot be vouched for.
      why.precision(9);
      why << "no error bound: " << depth << " float additions in a row (depth x 2^-24 >= 1); got " << result
          << ", expected " << ref.sum;
    } else if (!(c.abs_error <= c.tolerance)) {
      why.precision(9);
      why << "got " << result << ", expected " << ref.sum << " (error " << c.abs_error << " > tolerance " << c.tolerance
          << " for depth " << depth << ")";
    }
  }
  c.detail = why.str();
  c.ok = c.detail.empty();
  return c;
}

float poison_value() {
  const std::uint32_t bits = 0xCAFEBABEu;  // about -8.3e6 with a mantissa no test sum has
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

bool is_poison(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == 0xCAFEBABEu;
}

}  // namespace common
