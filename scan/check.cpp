#include "check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <utility>

#include "inputs.hpp"
#include "verify.hpp"

namespace scan {
namespace {

constexpr std::size_t kChunks = 256;

// body(chunk, begin, end) for the kChunks pieces of [0, n), on the host's threads.
template <typename Body>
void over_chunks(std::size_t n, Body body) {
  const std::size_t size = (n + kChunks - 1) / kChunks;
  common::parallel_chunks(kChunks, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) body(c, std::min(n, c * size), std::min(n, (c + 1) * size));
  });
}

// The first failure over the chunks: the smallest index wins, whichever thread finds it.
struct FirstFailure {
  std::mutex lock;
  std::size_t index = std::numeric_limits<std::size_t>::max();
  std::string detail;
  void offer(std::size_t i, const std::string& why) {
    std::lock_guard<std::mutex> g(lock);
    if (i < index) {
      index = i;
      detail = why;
    }
  }
};

std::string size_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " output" : " outputs"); }

}  // namespace

double float_bound(std::size_t depth, double abs_prefix, std::size_t n) {
  const double g = common::gamma_float(depth);
  if (!std::isfinite(g)) return INFINITY;
  return (g + common::gamma_double(n)) * abs_prefix;
}

ScanVerdict check_int_scan(const unsigned* in, const unsigned* out, std::size_t n, ScanKind kind) {
  std::vector<unsigned> before(kChunks, 0);  // each chunk's total, then the sum of the chunks before it
  over_chunks(n, [&](std::size_t c, std::size_t b, std::size_t e) {
    unsigned s = 0;
    for (std::size_t i = b; i < e; ++i) s += in[i];
    before[c] = s;
  });
  unsigned running = 0;
  for (unsigned& t : before) running += std::exchange(t, running);
  FirstFailure first;
  over_chunks(n, [&](std::size_t c, std::size_t b, std::size_t e) {
    unsigned s = before[c];
    for (std::size_t i = b; i < e; ++i) {
      const unsigned expected = kind == ScanKind::inclusive ? s + in[i] : s;
      s += in[i];
      if (out[i] != expected) {
        std::ostringstream why;
        why << "output " << i << " is " << static_cast<int>(out[i]) << ", expected " << static_cast<int>(expected)
            << (out[i] == kPoisonBits ? " (the poison: never written)" : "");
        first.offer(i, why.str());
        return;
      }
    }
  });
  ScanVerdict v;
  v.ok = first.detail.empty();
  v.detail = v.ok ? "all " + size_text(n) + " exact" : first.detail;
  return v;
}

ScanVerdict check_float_scan(const float* in, const float* out, std::size_t n, ScanKind kind, const DepthModel& depth) {
  std::vector<double> before(kChunks, 0.0);
  std::vector<double> abs_before(kChunks, 0.0);
  over_chunks(n, [&](std::size_t c, std::size_t b, std::size_t e) {
    double s = 0.0;
    double a = 0.0;
    for (std::size_t i = b; i < e; ++i) {
      s += in[i];
      a += std::fabs(in[i]);
    }
    before[c] = s;
    abs_before[c] = a;
  });
  double running = 0.0;
  double abs_running = 0.0;
  for (std::size_t c = 0; c < kChunks; ++c) {
    running += std::exchange(before[c], running);
    abs_running += std::exchange(abs_before[c], abs_running);
  }
  FirstFailure first;
  std::mutex lock;
  double worst = 0.0;
  std::size_t unbounded = 0;
  over_chunks(n, [&](std::size_t c, std::size_t b, std::size_t e) {
    double s = before[c];
    double a = abs_before[c];
    double chunk_worst = 0.0;
    std::size_t chunk_unbounded = 0;
    for (std::size_t i = b; i < e; ++i) {
      const double expected = kind == ScanKind::inclusive ? s + in[i] : s;
      s += in[i];
      a += std::fabs(in[i]);
      const double y = out[i];
      const double bound = float_bound(depth.at(i), a, n);
      const double err = std::fabs(y - expected);
      std::uint32_t bits;
      std::memcpy(&bits, &out[i], 4);
      const bool poison = bits == kPoisonBits;
      if (!std::isfinite(bound)) {
        ++chunk_unbounded;
        if (std::isfinite(y) && !poison) continue;
      } else if (err <= bound && !poison) {
        if (bound > 0.0) chunk_worst = std::max(chunk_worst, err / bound);
        continue;
      }
      std::ostringstream why;
      why.precision(9);
      why << "output " << i << " is " << y << ", reference " << expected << ", error " << err << " above its bound "
          << bound << " (depth " << depth.at(i) << ")" << (poison ? " (the poison: never written)" : "");
      first.offer(i, why.str());
      break;
    }
    std::lock_guard<std::mutex> g(lock);
    worst = std::max(worst, chunk_worst);
    unbounded += chunk_unbounded;
  });
  ScanVerdict v;
  v.ok = first.detail.empty();
  v.max_error_ratio = worst;
  v.unbounded = unbounded;
  if (v.ok) {
    std::ostringstream d;
    d.precision(2);
    d << "all " << size_text(n) << " within their bounds (largest error " << worst << " of its bound)";
    if (unbounded > 0) d << "; " << unbounded << " past the bound's reach, only checked finite";
    v.detail = d.str();
  } else {
    v.detail = first.detail;
  }
  return v;
}

ScanVerdict check_copy(const unsigned* in, const unsigned* out, std::size_t n) {
  const auto it = std::mismatch(in, in + n, out);
  ScanVerdict v;
  v.ok = it.first == in + n;
  v.detail =
      v.ok ? "all " + size_text(n) + " copied" : "output " + std::to_string(it.first - in) + " differs from the input";
  return v;
}

std::vector<unsigned> make_int_input(std::size_t n, std::uint64_t seed) {
  std::vector<unsigned> v(n);
  common::parallel_chunks(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) v[i] = static_cast<unsigned>(common::hash64(seed, i) >> 32);
  });
  return v;
}

std::vector<float> make_float_input(std::size_t n, std::uint64_t seed) {
  return common::make_input(common::Pattern::uniform, seed, n);
}

}  // namespace scan
