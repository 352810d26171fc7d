#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "inputs.hpp"

namespace common {

namespace {

// Neumaier's step in double: s + c carries the exact sum of what was added, up to
// second-order terms.
struct Compensated {
  double s = 0.0;
  double c = 0.0;
  void add(double x) {
    const double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
};

constexpr std::size_t kReferenceChunk = std::size_t{1} << 20;

}  // namespace

Reference reference_sum(const std::vector<float>& x) {
  const std::size_t chunk = kReferenceChunk;
  const std::size_t chunks = (x.size() + chunk - 1) / chunk;
  std::vector<Compensated> sums(chunks);
  std::vector<double> abs_sums(chunks, 0.0);
  parallel_chunks(chunks, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      Compensated s;
      double a = 0.0;
      const std::size_t last = std::min(x.size(), (c + 1) * chunk);
      for (std::size_t i = c * chunk; i < last; ++i) {
        s.add(static_cast<double>(x[i]));
        a += std::fabs(static_cast<double>(x[i]));
      }
      sums[c] = s;
      abs_sums[c] = a;
    }
  });
  Compensated total;
  double plain = 0.0;  // the chunks' s parts alone: the plain double sum
  Reference r;
  for (std::size_t c = 0; c < chunks; ++c) {
    total.add(sums[c].s);
    total.add(sums[c].c);
    plain += sums[c].s;
    r.sum_abs += abs_sums[c];
  }
  // With an infinity or NaN among the inputs the compensation is NaN; the plain sum is
  // then the IEEE answer (NaN, or the infinity).
  r.sum = std::isfinite(plain) ? total.s + total.c : plain;
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

ErrorBound compensated_bound(double d_s) {
  // (1 + u)^k - 1 for float's u, without gamma's k u < 1 restriction.
  const auto growth = [](double k) { return std::expm1(k * std::log1p(0x1p-24)); };
  const double d_c = 2.0 * d_s;
  ErrorBound b;
  b.sum_units = 1.0 + 0x1p-20;  // the final rounding of s + c, with room for the terms below it
  b.abs_units = (1.0 + 0x1p-24) * growth(d_c) * (1.0 + growth(d_s)) * d_s;
  return b;
}

Check check_sum(float result, const Reference& ref, std::size_t depth, std::size_t n) {
  ErrorBound b;
  b.depth = depth;
  return check_sum(result, ref, b, n);
}

Check check_sum(float result, const Reference& ref, const ErrorBound& bound, std::size_t n) {
  const std::size_t depth = bound.depth;
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
    // The reference's own error: 2 u_d |sum| + 4 (m u_d)^2 sum|x|, m = the longest run of
    // additions in order (one chunk, then two per chunk in the final pass).
    const double m =
        static_cast<double>(std::min(n, kReferenceChunk) + 2 * ((n + kReferenceChunk - 1) / kReferenceChunk));
    const double ud = 0x1p-53;
    const double reference_error = 2 * ud * std::fabs(ref.sum) + 4 * (m * ud) * (m * ud) * ref.sum_abs;
    const double own = bound.sum_units > 0
                           ? 0x1p-24 * (bound.sum_units * std::fabs(ref.sum) + bound.abs_units * ref.sum_abs)
                           : gamma_float(depth) * ref.sum_abs;
    c.tolerance = own + reference_error;
    if (!std::isfinite(c.tolerance)) {
      c.unbounded = true;
      // depth x u >= 1: the bound says nothing, so the result cannot be vouched for.
      why.precision(9);
      why << "no error bound: " << depth << " float additions in a row (depth x 2^-24 >= 1); got " << result
          << ", expected " << ref.sum;
    } else if (!(c.abs_error <= c.tolerance)) {
      why.precision(9);
      why << "got " << result << ", expected " << ref.sum << " (error " << c.abs_error << " > tolerance " << c.tolerance
          << (bound.sum_units > 0 ? " for the compensated bound" : " for depth " + std::to_string(depth)) << ")";
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
